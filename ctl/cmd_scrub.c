/*
 * cmd_scrub: raidfsctl scrub start|stop|status MOUNTPOINT - the online
 * scrub (daemon/control_scrub.c): every block checked against its
 * checksum, every row against its parity, repaired from redundancy, while
 * the array serves; paced by the rebuild speed limits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "prog.h"

/* "2026-12-01 19:50:02" (local time) of CLOCK_REALTIME ns */
static const char *date_of(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
	return buf;
}

/* The last scrub that went through (kept across mounts). */
static void last_print(json_object *last)
{
	uint64_t t0 = ctl_json_u64(last, "started_ns");
	uint64_t t1 = ctl_json_u64(last, "ended_ns");
	char when[64];

	printf("  last scrub: finished %s (%" PRIu64 " s): %" PRIu64
	       " stripes, %" PRIu64 " checksum errors, %" PRIu64
	       " read errors, %" PRIu64 " repaired, %" PRIu64
	       " unrecoverable\n", date_of(t1, when, sizeof(when)),
	       t1 > t0 ? (t1 - t0 + 500000000u) / 1000000000u : 0,
	       ctl_json_u64(last, "stripes"),
	       ctl_json_u64(last, "checksum_errors"),
	       ctl_json_u64(last, "read_errors"), ctl_json_u64(last, "repaired"),
	       ctl_json_u64(last, "unrecoverable"));
}

void ctl_scrub_print(json_object *sc)
{
	json_object *st, *rep, *last;
	uint64_t done = ctl_json_u64(sc, "done_stripes");
	uint64_t total = ctl_json_u64(sc, "total_stripes");

	json_object_object_get_ex(sc, "last", &last);
	if (!json_object_object_get_ex(sc, "state", &st) ||
	    !strcmp(json_object_get_string(st), "none")) {
		if (last)
			last_print(last);
		else
			printf("  scrub: never run\n");
		return;
	}
	json_object_object_get_ex(sc, "report", &rep);
	printf("  scrub: %s, %" PRIu64 "/%" PRIu64 " stripes (%.1f%%): %" PRIu64
	       " checksum errors, %" PRIu64 " read errors, %" PRIu64
	       " repaired, %" PRIu64 " unrecoverable, %" PRIu64
	       " parity mismatches\n", json_object_get_string(st), done, total,
	       total ? 100.0 * (double)done / (double)total : 100.0,
	       ctl_json_u64(rep, "checksum_errors"), ctl_json_u64(rep, "read_errors"),
	       ctl_json_u64(rep, "repaired"), ctl_json_u64(rep, "unrecoverable"),
	       ctl_json_u64(rep, "parity_mismatches"));
	if (last)
		last_print(last);
}

int cmd_scrub(int argc, char **argv)
{
	struct ctl_request r = { .cmd = CTL_SCRUB };
	json_object *res = NULL;
	struct ctl_conn c;
	char msg[512] = "";
	int ret;

	if (argc != 3 || (strcmp(argv[1], "start") && strcmp(argv[1], "stop") &&
			  strcmp(argv[1], "status"))) {
		prog_usage_error(CTL_PROG, "scrub start|stop|status MOUNTPOINT");
		return CTL_EXIT_USAGE;
	}
	snprintf(r.arg, sizeof(r.arg), "%s", argv[1]);
	ret = ctl_connect(argv[2], &c);
	if (ret)
		return ret;
	ret = ctl_call(&c, &r, &res, msg, sizeof(msg));
	if (ret == CTL_EXIT_OK && res)
		ctl_scrub_print(res);
	else if (ret == CTL_EXIT_OK)
		printf("%s: %s\n", c.where, msg);
	json_object_put(res);
	ctl_close(&c);
	return ret;
}
