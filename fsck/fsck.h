/*
 * fsck.raidfs: check and repair a raidfs array and its filesystem.
 *
 *   fsck.raidfs [-n | -y | -p] [-f] [-v] [--rebuild MEMBER] SOURCE
 *
 * One file per phase, run in order by fsck_main.c:
 *   members.c     1 Members: what each device's superblock says, which
 *                   members are missing, stale, foreign or shrunk; the
 *                   array is refused when it is mounted
 *   array.c       1 the assembly: read-only first, read-write for -y and
 *                   -p; the members' error record, cleared at the end
 *   target.c      1 which device each slot that is not active is rebuilt
 *                   onto (--rebuild TARGET, a stale member, a blank
 *                   device, a spare), every check made before any write
 *   rebuild.c     2 Rebuild: the plan carried out (rc_member_replace)
 *   redundancy.c  2 Redundancy: rc_scrub (checksums, parity, copies) and
 *                   the per-member counts
 *   filesystem.c  3 Filesystem: journal replay (fs_mount), fs_check, and
 *                   repair (fs/repair.c)
 *   damage.c      4 Damage report: unreadable file ranges, by path
 *   progress.c    progress bar (terminal) or periodic lines (otherwise)
 *
 * Exit status as fsck(8): the FSCK_* bits below, or'ed together.
 */
#ifndef FSCK_H
#define FSCK_H

#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "probe.h"
#include "raidcore.h"

#define FSCK_PROG "fsck.raidfs"

enum fsck_exit {
	FSCK_OK = 0,
	FSCK_CORRECTED = 1,
	FSCK_UNCORRECTED = 4,
	FSCK_OPERATIONAL = 8,
	FSCK_USAGE = 16,
	FSCK_CANCELLED = 32,
};

enum fsck_mode {
	FSCK_MODE_NO,           /* -n: open read-only, write nothing */
	FSCK_MODE_PREEN,        /* -p: repair what is safe, without asking */
	FSCK_MODE_YES,          /* -y: repair everything */
};

struct fsck_opts {
	enum fsck_mode mode;
	bool force;             /* -f: full check even when clean */
	int verbose;            /* -v */
	const char *rebuild;    /* --rebuild MEMBER */
	const char *source;
};

/* What phase 1 found on one device named in SOURCE or by --rebuild. */
struct fsck_dev {
	const char *path;
	int ret;                /* rc_member_probe's answer (0: p holds it), or
				   the error opening the device */
	bool opened;
	bool shrunk;            /* smaller than its own layout: left out */
	struct rc_probe p;
	uint64_t size;          /* bytes */
};

/* How a slot that is not active gets a device back (target.c). */
enum fsck_rebuild_kind {
	FSCK_RB_TARGET,         /* --rebuild TARGET */
	FSCK_RB_RESUME,         /* the slot's device is rebuilding: go on */
	FSCK_RB_STALE,          /* its former member, left out as stale */
	FSCK_RB_BLANK,          /* a device in SOURCE that holds nothing */
	FSCK_RB_SPARE,          /* the array's first spare */
};

struct fsck_rebuild {
	int slot;
	enum fsck_rebuild_kind kind;
	const char *path;       /* the device; NULL for RESUME and SPARE */
	bool wipe;              /* -f: erase libblkid's signatures first */
};

struct fsck {
	struct fsck_opts o;
	struct config_source src;
	struct config_opts co;
	struct rc_array *array;
	struct fs_bdev *bdev;
	struct rc_info info;
	uint32_t down_at_open;  /* slots not active when it was assembled */
	struct fsck_dev *devs;  /* SOURCE's members, then its spares */
	int ndevs;
	struct probe_result target; /* --rebuild TARGET, probed before the
				       assembly (fsck_target_probe) */
	uint64_t target_size;   /* bytes */
	int target_in_source;   /* index in devs, or -1 */
	struct fsck_rebuild plan[RC_MAX_MEMBERS];
	int nplan;              /* rebuilds phase 2 carries out */
	/* devices the plan names (with -n and -p too: none is named for
	 * two slots) */
	const char *named[RC_MAX_MEMBERS];
	int nnamed;
	int unplanned;          /* slots not active that the plan leaves */
	bool split;             /* a device of SOURCE is a split brain's
				   other side (target.c) */
	uint64_t *bad;          /* phase 2: logical blocks it could not
				   rebuild (rc_scrub_list), nbad of them */
	uint64_t nbad;
	bool bad_all;           /* ... all of them (none left off the list) */
	bool free_rewritten;    /* phase 4 rewrote every block of bad */
	char **said;            /* phase 3's findings, told once it is
				   known whether they are fixed */
	size_t nsaid, saidcap;
	bool array_clean;       /* every member's superblock said clean */
	bool errors_recorded;   /* some member's superblock has ERRORS */
	bool copies_to_rewrite; /* phase 1 found damaged superblock copies:
				   "corrected" once the read-write assembly
				   that rewrites them is made */
	bool fs_clean;
	uint64_t unrecoverable; /* blocks raidcore could not repair */
	uint64_t mismatches;    /* stripes whose parity disagrees */
	/* phase 2's mismatches, in a repairing run, wait for phase 4's verdict
	 * (rc_suspect_recheck): phase 3 may make them whole */
	bool mismatch_pending;
	uint64_t conflicts;     /* blocks whose evidence disagrees */
	uint64_t unverified;    /* blocks -n could verify against redundancy
				   only (fsck -y records their checksums) */
	int status;             /* FSCK_* bits so far */
};

/* Set by SIGINT; a second SIGINT ends the program at once. */
extern volatile sig_atomic_t fsck_cancelled;

void fsck_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fsck_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fsck_verbose(const struct fsck *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fsck_phase(int n, const char *title);
/* Exits with FSCK_CANCELLED when the user asked; safe between phases. */
void fsck_cancel_point(struct fsck *f);

/* options.c */
int fsck_opts_parse(int argc, char **argv, struct fsck_opts *o);
void fsck_usage(FILE *out);

/* members.c */
int fsck_members(struct fsck *f);

/* array.c */
int fsck_array_open(struct fsck *f, bool rdonly);
/* The array, read-write from here on (phase 1 assembled it read-only). */
int fsck_array_writable(struct fsck *f);
int fsck_array_close(struct fsck *f);
/* After a writing pass that left nothing uncorrected: the members' ERRORS
 * flag and error counters go. */
int fsck_errors_clear(struct fsck *f);

/* target.c: before the read-only assembly, and after it */
int fsck_target_probe(struct fsck *f);
int fsck_rebuild_plan(struct fsck *f);

/* rebuild.c */
int fsck_rebuild(struct fsck *f);

/* redundancy.c */
int fsck_redundancy(struct fsck *f);

/* filesystem.c */
int fsck_filesystem(struct fsck *f);
int fsck_fast_path(struct fsck *f, bool *done);

/* damage.c: phase 4, on the read-only mount a scan ran on */
struct fs;
struct fs_repair;
int fsck_damage(struct fsck *f, struct fs *fs, struct fs_repair *r);

/* progress.c */
struct fsck_progress {
	const char *what;
	bool tty;
	bool rdonly;            /* cancelling mid-way is safe */
	double t0, last;
	uint64_t total_bytes;   /* bytes that "total" units stand for */
};
void fsck_progress_init(struct fsck_progress *p, const char *what,
			uint64_t total_bytes, bool rdonly);
void fsck_progress_cb(void *ctx, uint64_t done, uint64_t total);
void fsck_progress_end(struct fsck_progress *p);
double fsck_now(void);
/* The bytes of every member's data region: what a scrub or rebuild reads. */
uint64_t fsck_member_bytes(const struct rc_info *i);

#endif
