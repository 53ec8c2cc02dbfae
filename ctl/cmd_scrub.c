/*
 * cmd_scrub: raidfsctl scrub start|stop|status MOUNTPOINT - the online
 * scrub (daemon/control_scrub.c): every block checked against its
 * checksum, every row against its parity, repaired from redundancy, while
 * the array serves; paced by the rebuild speed limits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "prog.h"

void ctl_scrub_print(json_object *sc)
{
	json_object *st, *rep;
	uint64_t done = ctl_json_u64(sc, "done_stripes");
	uint64_t total = ctl_json_u64(sc, "total_stripes");

	if (!json_object_object_get_ex(sc, "state", &st) ||
	    !strcmp(json_object_get_string(st), "none")) {
		printf("  scrub: never run since mounted\n");
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
