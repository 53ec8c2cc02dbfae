/*
 * cmd_scrub: raidfsctl scrub start [--wait]|stop|status MOUNTPOINT - the
 * online scrub (daemon/control_scrub.c): every block checked against its
 * checksum, every row against its parity, repaired from redundancy, while
 * the array serves; paced by the rebuild speed limits.
 *
 * --wait (zpool scrub -w, btrfs scrub start -B) starts a scrub, or joins
 * the one running, and polls its status until it ends: what the monthly
 * timer (systemd/raidfs-scrub@.service) runs, so the service's result is
 * the scrub's.  Interrupting the command leaves the scrub running.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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
	       " unrecoverable, %" PRIu64 " parity mismatches\n",
	       date_of(t1, when, sizeof(when)),
	       t1 > t0 ? (t1 - t0 + 500000000u) / 1000000000u : 0,
	       ctl_json_u64(last, "stripes"),
	       ctl_json_u64(last, "checksum_errors"),
	       ctl_json_u64(last, "read_errors"), ctl_json_u64(last, "repaired"),
	       ctl_json_u64(last, "unrecoverable"),
	       ctl_json_u64(last, "parity_mismatches"));
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
	if (json_object_object_get_ex(sc, "rate_bytes_per_s", &st) && st)
		printf("  scrub rate: %.1f MiB/s, %" PRIu64 ":%02" PRIu64 ":%02"
		       PRIu64 " left\n", (double)json_object_get_uint64(st) /
		       1048576.0, ctl_json_u64(sc, "seconds_left") / 3600,
		       ctl_json_u64(sc, "seconds_left") / 60 % 60,
		       ctl_json_u64(sc, "seconds_left") % 60);
	if (last)
		last_print(last);
}

#define SCRUB_POLL_S 1

static const char *scrub_state(json_object *sc)
{
	return sc ? ctl_json_str(sc, "state") : "";
}

/* One request on c: the exit code, the result (if any) in *res. */
static int scrub_call(struct ctl_conn *c, const char *action, json_object **res,
		      bool say)
{
	struct ctl_request r = { .cmd = CTL_SCRUB };
	char msg[512] = "";
	int ret;

	snprintf(r.arg, sizeof(r.arg), "%s", action);
	*res = NULL;
	ret = ctl_call(c, &r, res, msg, sizeof(msg));
	if (ret == CTL_EXIT_OK && say && *res)
		ctl_scrub_print(*res);
	else if (ret == CTL_EXIT_OK && say)
		printf("%s: %s\n", c->where, msg);
	return ret;
}

/* The end of a waited-for scrub: 0 only when it went through the whole
 * array and left it whole (scrub_wait also checks that no member was
 * faulted meanwhile); 1 when it was stopped, failed, found data it
 * could not repair, or stripes it could not make redundant again (parity
 * that disagrees with data that verifies, evidence in conflict: those
 * stripes would not survive the loss of a member; md's mismatch_cnt). */
static int scrub_verdict(json_object *sc)
{
	json_object *rep = NULL;
	uint64_t bad, mended;

	json_object_object_get_ex(sc, "report", &rep);
	/* blocks found bad and neither rewritten, re-vouched for nor
	 * counted lost: a read-only array's scrub repairs nothing, and the
	 * stripes it found errors in have that much less redundancy */
	bad = ctl_json_u64(rep, "checksum_errors") +
	      ctl_json_u64(rep, "read_errors");
	mended = ctl_json_u64(rep, "repaired") +
		 ctl_json_u64(rep, "entries_fixed") +
		 ctl_json_u64(rep, "unrecoverable");
	if (strcmp(scrub_state(sc), "finished") || ctl_json_has(sc, "error") ||
	    ctl_json_u64(rep, "unrecoverable") ||
	    ctl_json_u64(rep, "lost_data_blocks") ||
	    ctl_json_u64(rep, "parity_mismatches") ||
	    ctl_json_u64(rep, "conflicts") || bad > mended)
		return CTL_EXIT_REFUSED;
	return CTL_EXIT_OK;
}

/* The array's state now ("clean", "degraded", ...), into buf. */
static void array_state_get(struct ctl_conn *c, char *buf, size_t len)
{
	struct ctl_request r = { .cmd = CTL_STATUS };
	json_object *st = NULL, *v = NULL;
	char msg[256];

	buf[0] = '\0';
	if (ctl_call(c, &r, &st, msg, sizeof(msg)) == CTL_EXIT_OK && st &&
	    json_object_object_get_ex(st, "state", &v))
		snprintf(buf, len, "%s", json_object_get_string(v));
	json_object_put(st);
}

/* A state with a member missing, faulty or being rebuilt. */
static bool state_degraded(const char *state)
{
	return !strcmp(state, "degraded") || !strcmp(state, "rebuilding") ||
	       !strcmp(state, "failed");
}

/* Redundancy lost: a member faulted while the scrub ran (too many errors
 * on it, a write that failed) leaves the array degraded although every
 * block was repaired. */
static bool state_lost_redundancy(const char *before, const char *after)
{
	return (!strcmp(before, "clean") || !strcmp(before, "scrubbing") ||
		!strcmp(before, "replacing")) &&
	       state_degraded(after);
}

/* scrub start --wait: start (unless one runs), poll until it ends. */
static int scrub_wait(struct ctl_conn *c)
{
	json_object *sc;
	char before[32], after[32];
	int ret;

	array_state_get(c, before, sizeof(before));
	ret = scrub_call(c, "status", &sc, false);

	if (ret == CTL_EXIT_OK && strcmp(scrub_state(sc), "running")) {
		json_object_put(sc);
		ret = scrub_call(c, "start", &sc, true);
	}
	while (ret == CTL_EXIT_OK) {
		json_object_put(sc);
		ret = scrub_call(c, "status", &sc, false);
		if (ret || strcmp(scrub_state(sc), "running"))
			break;
		sleep(SCRUB_POLL_S);
	}
	if (ret == CTL_EXIT_OK) {
		ctl_scrub_print(sc);
		ret = scrub_verdict(sc);
		array_state_get(c, after, sizeof(after));
		if (ctl_json_u64(sc, "members_faulted")) {
			/* a spare may have made it whole again meanwhile */
			printf("%s: %llu member(s) faulted while the scrub "
			       "ran\n", c->where, (unsigned long long)
			       ctl_json_u64(sc, "members_faulted"));
			ret = CTL_EXIT_REFUSED;
		} else if (state_lost_redundancy(before, after)) {
			printf("%s: the array was %s and is %s now: a member "
			       "was faulted while the scrub ran\n", c->where,
			       before, after);
			ret = CTL_EXIT_REFUSED;
		} else if (state_degraded(after)) {
			/* whole stripes, but not a whole array */
			printf("%s: the array is %s: not whole\n", c->where,
			       after);
			ret = CTL_EXIT_REFUSED;
		}
	}
	json_object_put(sc);
	return ret;
}

static int scrub_usage(void)
{
	prog_usage_error(CTL_PROG, "scrub start [--wait]|stop|status MOUNTPOINT");
	return CTL_EXIT_USAGE;
}

int cmd_scrub(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "wait", no_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	json_object *res = NULL;
	struct ctl_conn c;
	const char *action;
	bool wait = false;
	int opt, ret;

	/* 0 makes getopt start afresh: main's "+" (options before the
	 * command only) must not stop it at the action */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "w", longs, NULL)) != -1) {
		if (opt != 'w')
			return scrub_usage();
		wait = true;
	}
	if (argc - optind != 2)
		return scrub_usage();
	action = argv[optind];
	if ((strcmp(action, "start") && strcmp(action, "stop") &&
	     strcmp(action, "status")) || (wait && strcmp(action, "start")))
		return scrub_usage();
	ret = ctl_connect(argv[optind + 1], &c);
	if (ret)
		return ret;
	ret = wait ? scrub_wait(&c) : scrub_call(&c, action, &res, true);
	json_object_put(res);
	ctl_close(&c);
	return ret;
}
