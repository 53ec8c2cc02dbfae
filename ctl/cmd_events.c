/*
 * cmd_events: raidfsctl events [-f] [--json] MOUNTPOINT - the array's event
 * history (zpool events), oldest first; -f then prints every new event as
 * it happens until interrupted or the array is unmounted.  One line per
 * event: time, name, slot, device, message; --json prints each event
 * object on a line of its own.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "prog.h"

static void event_print(json_object *e, bool json)
{
	const char *slot = ctl_json_str(e, "slot");
	const char *dev = ctl_json_str(e, "device");
	const char *msg = ctl_json_str(e, "message");
	const char *pct = ctl_json_str(e, "progress");

	if (json) {
		printf("%s\n", json_object_to_json_string_ext(e,
		       JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		printf("%s %s%s%s%s%s%s%s%s%s\n", ctl_json_str(e, "time"),
		       ctl_json_str(e, "event"), slot[0] ? " slot=" : "", slot,
		       dev[0] ? " device=" : "", dev, pct[0] ? " progress=" : "",
		       pct, msg[0] ? ": " : "", msg);
	}
	fflush(stdout);
}

int cmd_events(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_request r = { .cmd = CTL_EVENTS };
	json_object *res = NULL, *e;
	struct ctl_conn c;
	uint64_t last, seen = 0;
	bool json = false;
	char msg[512];
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "+fj", longs, NULL)) != -1) {
		if (opt == 'f')
			r.follow = true;
		else if (opt == 'j')
			json = true;
		else
			return prog_usage_error(CTL_PROG, NULL), CTL_EXIT_USAGE;
	}
	if (argc - optind != 1)
		return prog_usage_error(CTL_PROG, "events: MOUNTPOINT is required"),
		       CTL_EXIT_USAGE;
	ret = ctl_connect(argv[optind], &c);
	if (ret)
		return ret;
	ret = ctl_call(&c, &r, &res, msg, sizeof(msg));
	last = ret == CTL_EXIT_OK ? ctl_json_u64(res, "last_seq") : 0;
	json_object_put(res);
	/* the history up to last, then (-f) whatever comes */
	while (ret == CTL_EXIT_OK && (r.follow || seen < last)) {
		int got = ctl_next_event(&c, &e);

		if (got == -ECONNRESET && r.follow)
			break;          /* unmounted */
		if (got) {
			fprintf(stderr, CTL_PROG ": %s: %s\n", c.where,
				strerror(-got));
			ret = CTL_EXIT_COMM;
			break;
		}
		seen = ctl_json_u64(e, "seq");
		event_print(e, json);
		json_object_put(e);
	}
	ctl_close(&c);
	return ret;
}
