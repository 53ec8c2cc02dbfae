/*
 * cmd_status: raidfsctl status [-v] [--json] [MOUNTPOINT|UUID] - every
 * mounted array (or the one named) at a glance, as zpool status and
 * /proc/mdstat show theirs.  --json prints the daemon's status objects
 * as they come, in {"version": 1, "arrays": [...]}
 * (docs/raidfsctl-status.schema.json).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "prog.h"

/* 1536 -> "1.5 KiB" */
static const char *human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, units[u]);
	return buf;
}

/* Short names for the reply's fields (ctl.h), in this file's printing. */
#define STR ctl_json_str
#define U64 ctl_json_u64
#define HAS ctl_json_has

static void print_space(json_object *sp)
{
	char a[32], b[32], c[32];
	uint64_t size = U64(sp, "size_bytes"), used = U64(sp, "used_bytes");

	human(U64(sp, "array_bytes"), c, sizeof(c));
	if (!HAS(sp, "size_bytes")) {
		printf("  space: array %s\n", c);
		return;
	}
	printf("  space: %s used of %s (%" PRIu64 "%%), array %s\n",
	       human(used, a, 32), human(size, b, 32),
	       size ? used * 100 / size : 0, c);
}

/* A copy's rate_bytes_per_s and seconds_left as text ("?", "unknown"
 * while the daemon cannot tell yet); 32 bytes each. */
static void rate_left(json_object *o, char *rate, char *left)
{
	uint64_t s = U64(o, "seconds_left");

	snprintf(rate, 32, "?");
	snprintf(left, 32, "unknown");
	if (HAS(o, "seconds_left"))
		snprintf(left, 32, "%" PRIu64 ":%02" PRIu64 ":%02" PRIu64,
			 s / 3600, s / 60 % 60, s % 60);
	if (HAS(o, "rate_bytes_per_s"))
		human(U64(o, "rate_bytes_per_s"), rate, 32);
}

static void print_rebuild(json_object *rb, json_object *speed, bool verbose)
{
	json_object *p;
	char rate[32], left[32];

	json_object_object_get_ex(rb, "percent", &p);
	rate_left(rb, rate, left);
	printf("  rebuild: slot %" PRIu64 " (%s) %.1f%% (%" PRIu64 "/%" PRIu64
	       " stripes), %s/s, %s left\n", U64(rb, "slot"), STR(rb, "device"),
	       p ? json_object_get_double(p) : 0.0, U64(rb, "done_stripes"),
	       U64(rb, "total_stripes"), rate, left);
	if (json_object_object_get_ex(rb, "catch_up", &p) && p)
		printf("  catch-up: only what changed while it was away; %" PRIu64
		       " regions (%" PRIu64 " stripes) resynced so far\n",
		       U64(p, "regions_resynced"), U64(p, "stripes_resynced"));
	if (verbose)
		printf("  rebuild speed: min %" PRIu64 " KiB/s, max %" PRIu64
		       " KiB/s (0: no limit)\n", U64(speed, "min_kib_per_s"),
		       U64(speed, "max_kib_per_s"));
}

static void print_replace(json_object *rp)
{
	json_object *p;
	char rate[32], left[32];

	json_object_object_get_ex(rp, "percent", &p);
	rate_left(rp, rate, left);
	printf("  replacing: slot %" PRIu64 " by %s, %.1f%% (%" PRIu64 "/%"
	       PRIu64 " stripes), %s/s, %s left; the old device serves "
	       "meanwhile\n", U64(rp, "slot"), STR(rp, "device"),
	       p ? json_object_get_double(p) : 0.0, U64(rp, "done_stripes"),
	       U64(rp, "total_stripes"), rate, left);
}

/* The files with unrepaired damage, as zpool status -v lists them. */
static void print_damaged(json_object *dm, bool verbose)
{
	json_object *files, *f;
	size_t n;

	if (!dm || !json_object_object_get_ex(dm, "files", &files))
		return;
	n = json_object_array_length(files);
	if (!n && !U64(dm, "other_blocks"))
		return;
	printf("  unrecoverable data (reads fail with EIO; restore the files, "
	       "then `raidfsctl clear`):\n");
	for (size_t i = 0; i < n; i++) {
		f = json_object_array_get_idx(files, i);
		if (HAS(f, "path"))
			printf("    %s", STR(f, "path"));
		else
			printf("    inode %" PRIu64 " (no name)", U64(f, "inode"));
		printf(": bytes %" PRIu64 "-%" PRIu64, U64(f, "from_byte"),
		       U64(f, "to_byte"));
		if (verbose && HAS(f, "path"))
			printf(" (inode %" PRIu64 ")", U64(f, "inode"));
		printf("\n");
	}
	if (U64(dm, "ranges_not_kept"))
		printf("    ... and %" PRIu64 " more ranges\n",
		       U64(dm, "ranges_not_kept"));
	if (U64(dm, "other_blocks"))
		printf("    %" PRIu64 " blocks in no file (metadata or free space)\n",
		       U64(dm, "other_blocks"));
}

static bool flag(json_object *o, const char *key)
{
	return json_object_get_boolean(json_object_object_get(o, key));
}

static void print_device(json_object *d, bool verbose)
{
	json_object *e;
	const char *dev = STR(d, "device");

	json_object_object_get_ex(d, "errors", &e);
	printf("  %4s  %-10s %6" PRIu64 " %6" PRIu64 " %6" PRIu64 "  %s",
	       HAS(d, "slot") ? STR(d, "slot") : "-", STR(d, "state"),
	       U64(e, "read"), U64(e, "write"), U64(e, "cksum"),
	       dev[0] ? dev : "(none)");
	if (verbose)
		printf("  (%s, %" PRIu64 ")", STR(d, "uuid"), U64(d, "repaired"));
	printf("\n");
	if (flag(d, "kept_failing"))
		printf("        FAILING: more read or checksum errors than fault "
		       "a member; kept, as without it\n        the array would "
		       "have no redundancy left: replace it (raidfsctl "
		       "replace)\n");
}

static void print_devices(json_object *devs, bool verbose)
{
	printf("  %4s  %-10s %6s %6s %6s  %s%s\n", "SLOT", "STATE", "READ",
	       "WRITE", "CKSUM", "DEVICE", verbose ? "  (uuid, repaired)" : "");
	for (size_t i = 0; i < json_object_array_length(devs); i++)
		print_device(json_object_array_get_idx(devs, i), verbose);
}

static void print_head(json_object *st)
{
	const char *label = STR(st, "label");
	char chunk[32];

	printf("%s: %s\n", STR(st, "mountpoint"), STR(st, "state"));
	printf("  array %s%s%s%s\n", STR(st, "uuid"), label[0] ? " \"" : "",
	       label, label[0] ? "\"" : "");
	printf("  %s, layout %s, chunk %s, %" PRIu64 " slots, %" PRIu64
	       " spare%s%s\n", STR(st, "level"), STR(st, "layout"),
	       human(U64(st, "chunk_bytes"), chunk, sizeof(chunk)),
	       U64(st, "slots"), U64(st, "spares"),
	       U64(st, "spares") == 1 ? "" : "s",
	       flag(st, "read_only") ? ", read-only" : "");
}

/* Member key of st when it is there and not null, else NULL. */
static json_object *given(json_object *st, const char *key)
{
	json_object *o = NULL;

	return json_object_object_get_ex(st, key, &o) ? o : NULL;
}

/* Why the array is suspended (raidcore fail.c), if it is. */
static void print_suspended(json_object *st)
{
	json_object *su = given(st, "suspended");

	if (!su)
		return;
	printf("  SUSPENDED: slot %" PRIu64 " (%s) failed: %s.\n"
	       "  The array cannot run without it, so nothing more is read "
	       "or written.\n  Bring the device back, unmount and mount "
	       "again: the journal replays what it missed,\n  as far as "
	       "the other members' records allow (JOURNAL LOST says what "
	       "it could not).\n",
	       U64(su, "slot"), STR(su, "device"), STR(su, "why"));
}

/* Members found damaged that no scrub has verified yet, if any. */
static void print_unverified(json_object *st)
{
	json_object *uv = given(st, "unverified");

	if (!uv)
		return;
	printf("  NOT VERIFIED: %s.\n  A repairing scrub of the whole array "
	       "verifies it;\n  until it has, the array does not count on it "
	       "(raidfsctl scrub status).\n", STR(uv, "why"));
}

/* Committed transactions the mount's journal replay could not replay. */
static void print_journal_lost(json_object *st)
{
	json_object *jl = given(st, "journal_lost");

	if (!jl)
		return;
	printf("  JOURNAL LOST: transactions from %" PRIu64 " on were "
	       "committed, but their records\n  were missing on more members "
	       "than the redundancy covers when the array was\n  assembled: "
	       "what they wrote is lost (writes whose fsync returned\n  "
	       "included). The array log names them; fsck.raidfs -f checks "
	       "the filesystem.\n", U64(jl, "from_transaction"));
}

static void print_status(json_object *st, bool verbose)
{
	json_object *sp, *rb, *devs, *speed, *sc, *rp, *dm = NULL;

	json_object_object_get_ex(st, "space", &sp);
	json_object_object_get_ex(st, "rebuild", &rb);
	json_object_object_get_ex(st, "devices", &devs);
	json_object_object_get_ex(st, "rebuild_speed", &speed);
	print_head(st);
	print_suspended(st);
	print_journal_lost(st);
	print_unverified(st);
	print_space(sp);
	if (rb)
		print_rebuild(rb, speed, verbose);
	if (json_object_object_get_ex(st, "replace", &rp) && rp)
		print_replace(rp);
	if (json_object_object_get_ex(st, "scrub", &sc) && sc)
		ctl_scrub_print(sc);
	if (verbose)
		printf("  errors seen: %s, unrecoverable reads: %" PRIu64
		       ", events counter: %" PRIu64 ", daemon pid %" PRIu64 "\n",
		       flag(st, "errors_seen") ? "yes" : "no",
		       U64(st, "unrecoverable_reads"), U64(st, "events_counter"),
		       U64(st, "pid"));
	print_devices(devs, verbose);
	json_object_object_get_ex(st, "damaged", &dm);
	print_damaged(dm, verbose);
}

/* status of the array one connection serves, appended to arrays. */
static int status_one(struct ctl_conn *c, json_object *arrays)
{
	struct ctl_request r = { .cmd = CTL_STATUS };
	json_object *st = NULL;
	char msg[512];
	int ret = ctl_call(c, &r, &st, msg, sizeof(msg));

	if (ret == CTL_EXIT_OK)
		json_object_array_add(arrays, st);
	ctl_close(c);
	return ret;
}

/* Every socket that answers; a dead daemon's is skipped. */
static int status_all(json_object *arrays)
{
	char **socks;
	struct ctl_conn c;
	int ret = CTL_EXIT_OK, r;

	if (access(CTL_RUN_DIR, R_OK | X_OK) && errno == EACCES) {
		fprintf(stderr, CTL_PROG ": permission denied (root only)\n");
		return CTL_EXIT_PERM;
	}
	socks = ctl_sockets_list();

	for (size_t i = 0; socks && socks[i]; i++) {
		snprintf(c.where, sizeof(c.where), "%s", socks[i]);
		r = ctl_connect_path(socks[i], &c);
		if (r == -EACCES || r == -EPERM)
			ret = CTL_EXIT_PERM;
		else if (r == 0 && (r = status_one(&c, arrays)) != CTL_EXIT_OK)
			ret = r;
		free(socks[i]);
	}
	free(socks);
	if (ret == CTL_EXIT_PERM)
		fprintf(stderr, CTL_PROG ": permission denied (root only)\n");
	/* mounts no socket answers for: their daemons are gone */
	socks = ctl_mounts_list();
	for (size_t i = 0; socks && socks[i]; i++) {
		if (ctl_mount_dead(socks[i])) {
			ctl_dead_say(socks[i]);
			if (ret == CTL_EXIT_OK)
				ret = CTL_EXIT_COMM;
		}
		free(socks[i]);
	}
	free(socks);
	return ret;
}

static int status_usage(const char *msg)
{
	prog_usage_error(CTL_PROG, msg);
	return CTL_EXIT_USAGE;
}

int cmd_status(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	json_object *arrays, *top;
	struct ctl_conn c;
	bool json = false, verbose = false;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "+vj", longs, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt == 'v')
			verbose = true;
		else
			return status_usage(NULL);
	}
	if (argc - optind > 1)
		return status_usage("status takes at most one MOUNTPOINT or UUID");
	arrays = json_object_new_array();
	if (argc - optind == 1) {
		ret = ctl_connect(argv[optind], &c);
		if (ret == CTL_EXIT_OK)
			ret = status_one(&c, arrays);
	} else {
		ret = status_all(arrays);
	}
	if (json) {
		top = json_object_new_object();
		json_object_object_add(top, "version", json_object_new_int(1));
		json_object_object_add(top, "arrays", json_object_get(arrays));
		printf("%s\n", json_object_to_json_string_ext(top,
		       JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(top);
	} else {
		for (size_t i = 0; i < json_object_array_length(arrays); i++)
			print_status(json_object_array_get_idx(arrays, i), verbose);
		if (!json_object_array_length(arrays) && ret == CTL_EXIT_OK)
			printf("no raidfs array is mounted\n");
	}
	json_object_put(arrays);
	return ret;
}
