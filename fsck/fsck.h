/*
 * fsck.raidfs: check and repair a raidfs array and its filesystem.
 *
 *   fsck.raidfs [-n | -y | -p] [-f] [-v] [--rebuild MEMBER] SOURCE
 *
 * One file per phase, run in order by fsck_main.c:
 *   members.c     1 Members: what each device's superblock says, which
 *                   members are missing, stale or foreign; the array is
 *                   refused when it is mounted
 *   redundancy.c  2 Redundancy: rc_scrub (checksums, parity, copies) and
 *                   the per-member counts; --rebuild
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

struct fsck {
	struct fsck_opts o;
	struct config_source src;
	struct config_opts co;
	struct rc_array *array;
	struct fs_bdev *bdev;
	struct rc_info info;
	bool array_clean;       /* every member's superblock said clean */
	bool fs_clean;
	uint64_t unrecoverable; /* blocks raidcore could not repair */
	uint64_t mismatches;    /* stripes whose parity disagrees */
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
int fsck_array_open(struct fsck *f, bool rdonly);
int fsck_array_close(struct fsck *f);

/* redundancy.c */
int fsck_redundancy(struct fsck *f);
int fsck_rebuild(struct fsck *f);

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

#endif
