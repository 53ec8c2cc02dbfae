/*
 * control_proto: requests, replies and events of the control socket as
 * JSON packets (control_proto.h).  Every field is checked for its type:
 * a packet from the other side is input like any other.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "control_proto.h"

static const char *const cmd_names[CTL_NCMDS] = {
	[CTL_IDENTIFY] = "identify",
	[CTL_STATUS] = "status",
	[CTL_FAIL] = "fail",
	[CTL_REMOVE] = "remove",
	[CTL_ADD] = "add",
	[CTL_CLEAR] = "clear",
	[CTL_EVENTS] = "events",
	[CTL_TEST_ALERT] = "test-alert",
	[CTL_SET] = "set",
	[CTL_SCRUB] = "scrub",
	[CTL_REPLACE] = "replace",
};

const char *ctl_cmd_name(enum ctl_cmd cmd)
{
	return (unsigned)cmd < CTL_NCMDS ? cmd_names[cmd] : "?";
}

/* The argument each command takes ("member", "device"), or NULL. */
static const char *cmd_arg_key(enum ctl_cmd cmd)
{
	if (cmd == CTL_FAIL || cmd == CTL_REMOVE || cmd == CTL_REPLACE)
		return "member";
	if (cmd == CTL_SCRUB)
		return "action";
	return cmd == CTL_ADD ? "device" : NULL;
}

static char *packet(json_object *o)
{
	char *s = NULL;

	if (o)
		s = strdup(json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

static json_object *msg_new(void)
{
	json_object *o = json_object_new_object();

	if (o)
		json_object_object_add(o, "proto",
				       json_object_new_int(CTL_PROTO_VERSION));
	return o;
}

char *ctl_request_encode(const struct ctl_request *r)
{
	json_object *o = msg_new();
	const char *key = cmd_arg_key(r->cmd);

	if (!o || (unsigned)r->cmd >= CTL_NCMDS) {
		json_object_put(o);
		return NULL;
	}
	json_object_object_add(o, "cmd", json_object_new_string(cmd_names[r->cmd]));
	if (key)
		json_object_object_add(o, key, json_object_new_string(r->arg));
	if (r->cmd == CTL_REPLACE)
		json_object_object_add(o, "device",
				       json_object_new_string(r->device));
	if (r->cmd == CTL_EVENTS)
		json_object_object_add(o, "follow",
				       json_object_new_boolean(r->follow));
	if (r->has_speed_min)
		json_object_object_add(o, "rebuild_speed_min_kib",
				       json_object_new_uint64(r->speed_min_kib));
	if (r->has_speed_max)
		json_object_object_add(o, "rebuild_speed_max_kib",
				       json_object_new_uint64(r->speed_max_kib));
	return packet(o);
}

/* Parses buf as one JSON object of our protocol version. */
static int msg_parse(const char *buf, size_t len, json_object **out)
{
	json_tokener *tok = json_tokener_new();
	json_object *o = NULL, *v;
	int ret = -EINVAL;

	*out = NULL;
	if (!tok)
		return -ENOMEM;
	if (len <= CTL_MSG_MAX && len <= (size_t)INT32_MAX)
		o = json_tokener_parse_ex(tok, buf, (int)len);
	if (o && json_tokener_get_error(tok) == json_tokener_success &&
	    json_tokener_get_parse_end(tok) == len &&
	    json_object_is_type(o, json_type_object)) {
		ret = -EPROTO;
		if (json_object_object_get_ex(o, "proto", &v) &&
		    json_object_is_type(v, json_type_int) &&
		    json_object_get_int64(v) == CTL_PROTO_VERSION)
			ret = 0;
	}
	json_tokener_free(tok);
	if (ret)
		json_object_put(o);
	else
		*out = o;
	return ret;
}

static int err_at(char *err, size_t errlen, int ret, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", what);
	return ret;
}

static int request_speed(json_object *o, const char *key, bool *has,
			 uint64_t *val)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return -EINVAL;
	*has = true;
	*val = json_object_get_uint64(v);
	return 0;
}

/* The string argument key into out (CTL_ARG_MAX bytes), non-empty. */
static int request_string(json_object *o, const char *key, char *out,
			  char *err, size_t errlen)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return err_at(err, errlen, -EINVAL, "argument missing");
	if ((size_t)json_object_get_string_len(v) >= CTL_ARG_MAX ||
	    !json_object_get_string_len(v))
		return err_at(err, errlen, -EINVAL, "argument too long or empty");
	snprintf(out, CTL_ARG_MAX, "%s", json_object_get_string(v));
	return 0;
}

static int request_fields(json_object *o, struct ctl_request *r, char *err,
			  size_t errlen)
{
	const char *key = cmd_arg_key(r->cmd);
	json_object *v;

	if (key && request_string(o, key, r->arg, err, errlen))
		return -EINVAL;
	if (r->cmd == CTL_REPLACE &&
	    request_string(o, "device", r->device, err, errlen))
		return -EINVAL;
	if (json_object_object_get_ex(o, "follow", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return err_at(err, errlen, -EINVAL, "follow: not a boolean");
		r->follow = json_object_get_boolean(v);
	}
	if (request_speed(o, "rebuild_speed_min_kib", &r->has_speed_min,
			  &r->speed_min_kib) ||
	    request_speed(o, "rebuild_speed_max_kib", &r->has_speed_max,
			  &r->speed_max_kib))
		return err_at(err, errlen, -EINVAL, "bad speed");
	if (r->cmd == CTL_SET && !r->has_speed_min && !r->has_speed_max)
		return err_at(err, errlen, -EINVAL, "nothing to set");
	if (r->cmd == CTL_SCRUB && strcmp(r->arg, "start") &&
	    strcmp(r->arg, "stop") && strcmp(r->arg, "status"))
		return err_at(err, errlen, -EINVAL, "scrub: start, stop or status");
	return 0;
}

int ctl_request_decode(const char *buf, size_t len, struct ctl_request *r,
		       char *err, size_t errlen)
{
	json_object *o, *v;
	const char *name;
	int ret = msg_parse(buf, len, &o);

	memset(r, 0, sizeof(*r));
	if (ret)
		return err_at(err, errlen, ret, ret == -EPROTO ?
			      "another protocol version" : "not a JSON object");
	ret = err_at(err, errlen, -EINVAL, "no cmd");
	if (json_object_object_get_ex(o, "cmd", &v) &&
	    json_object_is_type(v, json_type_string)) {
		name = json_object_get_string(v);
		for (r->cmd = 0; r->cmd < CTL_NCMDS; r->cmd++)
			if (!strcmp(name, cmd_names[r->cmd]))
				break;
		ret = r->cmd < CTL_NCMDS ? request_fields(o, r, err, errlen) :
		      err_at(err, errlen, -EINVAL, "unknown cmd");
	}
	json_object_put(o);
	return ret;
}

char *ctl_reply_encode(int err, const char *msg, json_object *result)
{
	json_object *o = msg_new();

	if (!o) {
		json_object_put(result);
		return NULL;
	}
	json_object_object_add(o, "errno", json_object_new_int(-err));
	json_object_object_add(o, "error", json_object_new_string(
		msg ? msg : err ? strerror(-err) : ""));
	if (result)
		json_object_object_add(o, "result", result);
	return packet(o);
}

char *ctl_event_encode(json_object *ev)
{
	json_object *o = msg_new();

	if (!o)
		return NULL;
	json_object_object_add(o, "event", json_object_get(ev));
	return packet(o);
}

static int reply_fields(json_object *o, int *err, char *msg, size_t msglen,
			json_object **result)
{
	json_object *e, *m, *r = NULL;

	if (!json_object_object_get_ex(o, "errno", &e) ||
	    !json_object_is_type(e, json_type_int) ||
	    json_object_get_int64(e) < 0 || json_object_get_int64(e) > 4095 ||
	    !json_object_object_get_ex(o, "error", &m) ||
	    !json_object_is_type(m, json_type_string))
		return -EPROTO;
	*err = -(int)json_object_get_int64(e);
	if (msg && msglen)
		snprintf(msg, msglen, "%s", json_object_get_string(m));
	if (json_object_object_get_ex(o, "result", &r))
		*result = json_object_get(r);
	return 0;
}

int ctl_reply_decode(const char *buf, size_t len, int *err, char *msg,
		     size_t msglen, json_object **result)
{
	json_object *o, *ev;
	int ret = msg_parse(buf, len, &o);

	*result = NULL;
	*err = 0;
	if (ret)
		return -EPROTO;
	if (json_object_object_get_ex(o, "event", &ev)) {
		ret = json_object_is_type(ev, json_type_object) ? 1 : -EPROTO;
		if (ret == 1)
			*result = json_object_get(ev);
	} else {
		ret = reply_fields(o, err, msg, msglen, result);
	}
	json_object_put(o);
	return ret;
}

int ctl_socket_path(const uint8_t uuid[16], char *buf, size_t len)
{
	char u[37];

	uuid_unparse_lower(uuid, u);
	return snprintf(buf, len, CTL_RUN_DIR "/%s.sock", u) >= (int)len ?
	       -ENAMETOOLONG : 0;
}

bool ctl_parse_slot(const char *s, int *slot)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return false;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v >= 48 || (s[0] == '0' && s[1]))
		return false;
	*slot = (int)v;
	return true;
}

/* "N", "NK", "NM", "NG": KiB/s. */
static int speed_parse(const char *s, uint64_t *kib)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		end++;
	else if (*end == 'M' || *end == 'm')
		shift = 10, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 20, end++;
	if (*end || v > (UINT64_MAX >> 21))
		return -EINVAL;
	*kib = (uint64_t)v << shift;
	return 0;
}

int ctl_parse_setting(const char *s, struct ctl_request *r)
{
	static const char min[] = "rebuild-speed-min=";
	static const char max[] = "rebuild-speed-max=";

	if (!strncmp(s, min, sizeof(min) - 1)) {
		r->has_speed_min = true;
		return speed_parse(s + sizeof(min) - 1, &r->speed_min_kib);
	}
	if (!strncmp(s, max, sizeof(max) - 1)) {
		r->has_speed_max = true;
		return speed_parse(s + sizeof(max) - 1, &r->speed_max_kib);
	}
	return -EINVAL;
}
