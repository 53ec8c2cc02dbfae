/*
 * test_control_proto: the control socket's packets (daemon/control_proto.c)
 * - every request survives encoding and decoding, malformed and foreign
 * packets are refused with the right error, replies and events are told
 * apart, and the argument parsers take what raidfsctl documents.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "control_proto.h"

static int decode(const char *pkt, struct ctl_request *r)
{
	char err[128];

	return ctl_request_decode(pkt, strlen(pkt), r, err, sizeof(err));
}

static void test_request_roundtrip(void **state)
{
	static const struct ctl_request reqs[] = {
		{ .cmd = CTL_IDENTIFY }, { .cmd = CTL_STATUS },
		{ .cmd = CTL_FAIL, .arg = "2" },
		{ .cmd = CTL_REMOVE, .arg = "/dev/sdb1" },
		{ .cmd = CTL_ADD, .arg = "/srv/a b,\"c\".img" },
		{ .cmd = CTL_CLEAR }, { .cmd = CTL_EVENTS, .follow = true },
		{ .cmd = CTL_TEST_ALERT },
		{ .cmd = CTL_SET, .has_speed_max = true, .speed_max_kib = 1ull << 40 },
		{ .cmd = CTL_SCRUB, .arg = "start" },
		{ .cmd = CTL_SCRUB, .arg = "status" },
	};
	struct ctl_request r;

	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		char *pkt = ctl_request_encode(&reqs[i]);

		assert_non_null(pkt);
		assert_int_equal(decode(pkt, &r), 0);
		assert_int_equal(r.cmd, reqs[i].cmd);
		assert_string_equal(r.arg, reqs[i].arg);
		assert_int_equal(r.follow, reqs[i].follow);
		assert_int_equal(r.has_speed_max, reqs[i].has_speed_max);
		assert_true(r.speed_max_kib == reqs[i].speed_max_kib);
		free(pkt);
	}
}

static void test_request_refused(void **state)
{
	static const char *const bad[] = {
		"", "[]", "{", "nonsense", "{\"proto\":1}",
		"{\"proto\":1,\"cmd\":\"format\"}",
		"{\"proto\":1,\"cmd\":7}",
		"{\"proto\":1,\"cmd\":\"fail\"}",                 /* no member */
		"{\"proto\":1,\"cmd\":\"fail\",\"member\":3}",    /* not a string */
		"{\"proto\":1,\"cmd\":\"add\",\"device\":\"\"}",
		"{\"proto\":1,\"cmd\":\"events\",\"follow\":\"yes\"}",
		"{\"proto\":1,\"cmd\":\"set\"}",                  /* nothing to set */
		"{\"proto\":1,\"cmd\":\"set\",\"rebuild_speed_max_kib\":-1}",
		"{\"proto\":1,\"cmd\":\"status\"} trailing",
		"{\"proto\":1,\"cmd\":\"scrub\"}",
		"{\"proto\":1,\"cmd\":\"scrub\",\"action\":\"pause\"}",
	};
	struct ctl_request r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(decode(bad[i], &r), -EINVAL);
	assert_int_equal(decode("{\"proto\":2,\"cmd\":\"status\"}", &r), -EPROTO);
	assert_int_equal(decode("{\"cmd\":\"status\"}", &r), -EPROTO);
	assert_int_equal(decode("{\"proto\":\"1\",\"cmd\":\"status\"}", &r),
			 -EPROTO);
}

static void test_request_arg_too_long(void **state)
{
	size_t n = CTL_ARG_MAX + 64;
	char *pkt = malloc(n + 64), *p;
	struct ctl_request r;

	assert_non_null(pkt);
	p = pkt + sprintf(pkt, "{\"proto\":1,\"cmd\":\"add\",\"device\":\"/");
	memset(p, 'a', CTL_ARG_MAX);
	strcpy(p + CTL_ARG_MAX, "\"}");
	assert_int_equal(decode(pkt, &r), -EINVAL);
	free(pkt);
}

static void test_reply_and_event(void **state)
{
	json_object *res = json_object_new_object(), *got, *ev, *v;
	char msg[64];
	char *pkt;
	int err;

	json_object_object_add(res, "x", json_object_new_int(7));
	pkt = ctl_reply_encode(0, NULL, res);
	assert_int_equal(ctl_reply_decode(pkt, strlen(pkt), &err, msg,
					  sizeof(msg), &got), 0);
	assert_int_equal(err, 0);
	assert_true(json_object_object_get_ex(got, "x", &v));
	assert_int_equal(json_object_get_int(v), 7);
	json_object_put(got);
	free(pkt);

	pkt = ctl_reply_encode(-EBUSY, "slot 1 is in use", NULL);
	assert_int_equal(ctl_reply_decode(pkt, strlen(pkt), &err, msg,
					  sizeof(msg), &got), 0);
	assert_int_equal(err, -EBUSY);
	assert_string_equal(msg, "slot 1 is in use");
	assert_null(got);
	free(pkt);

	ev = json_object_new_object();
	json_object_object_add(ev, "event", json_object_new_string("Fail"));
	pkt = ctl_event_encode(ev);
	json_object_put(ev);
	assert_int_equal(ctl_reply_decode(pkt, strlen(pkt), &err, msg,
					  sizeof(msg), &got), 1);
	assert_true(json_object_object_get_ex(got, "event", &v));
	assert_string_equal(json_object_get_string(v), "Fail");
	json_object_put(got);
	free(pkt);

	pkt = "{\"proto\":1,\"errno\":\"x\",\"error\":\"\"}";
	assert_int_equal(ctl_reply_decode(pkt, strlen(pkt), &err, msg,
					  sizeof(msg), &got), -EPROTO);
	pkt = "{\"proto\":3,\"errno\":0,\"error\":\"\"}";
	assert_int_equal(ctl_reply_decode(pkt, strlen(pkt), &err, msg,
					  sizeof(msg), &got), -EPROTO);
}

static void test_parsers(void **state)
{
	static const uint8_t uuid[16] = { 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a,
		0x09, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00 };
	struct ctl_request r = { 0 };
	char path[128];
	int slot = -1;

	assert_true(ctl_parse_slot("0", &slot) && slot == 0);
	assert_true(ctl_parse_slot("47", &slot) && slot == 47);
	assert_false(ctl_parse_slot("48", &slot));
	assert_false(ctl_parse_slot("01", &slot));
	assert_false(ctl_parse_slot("1a", &slot));
	assert_false(ctl_parse_slot("/dev/sda", &slot));
	assert_false(ctl_parse_slot("-1", &slot));
	assert_int_equal(ctl_parse_setting("rebuild-speed-max=100", &r), 0);
	assert_true(r.has_speed_max && r.speed_max_kib == 100);
	assert_int_equal(ctl_parse_setting("rebuild-speed-min=50M", &r), 0);
	assert_true(r.has_speed_min && r.speed_min_kib == 50 * 1024);
	assert_int_equal(ctl_parse_setting("rebuild-speed-max=2G", &r), 0);
	assert_true(r.speed_max_kib == 2ull << 20);
	assert_int_equal(ctl_parse_setting("rebuild-speed-max=", &r), -EINVAL);
	assert_int_equal(ctl_parse_setting("rebuild-speed-max=5T", &r), -EINVAL);
	assert_int_equal(ctl_parse_setting("rebuild-speed-max=-5", &r), -EINVAL);
	assert_int_equal(ctl_parse_setting("speed=5", &r), -EINVAL);
	assert_int_equal(ctl_socket_path(uuid, path, sizeof(path)), 0);
	assert_string_equal(path, CTL_RUN_DIR
			    "/0f0e0d0c-0b0a-0908-0706-050403020100.sock");
	assert_int_equal(ctl_socket_path(uuid, path, 20), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_roundtrip),
		cmocka_unit_test(test_request_refused),
		cmocka_unit_test(test_request_arg_too_long),
		cmocka_unit_test(test_reply_and_event),
		cmocka_unit_test(test_parsers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
