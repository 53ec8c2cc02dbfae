/*
 * filesystem: phase 3 (and the clean fast path).
 *
 * The filesystem is mounted read-only first: fs_mount replays its journal
 * (in memory only; -y and -p then mount it read-write once, which puts an
 * unclean journal in place and frees orphans), then fs/repair.c scans it
 * and fs_check cross-checks.
 * With -y (or -p when nothing would lose data) the repair rounds follow,
 * each a read-write mount, a fresh scan and one layer of fixes; the last
 * read-only scan decides the exit status and feeds the damage report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "fs.h"
#include "fsck.h"
#include "repair.h"

#define REPAIR_ROUNDS 12

/*
 * The scan names each problem with the fix -y makes ("...: emptied").
 * Whether it is made is known only after the scan (-n never, -p only when
 * nothing would be lost), so the sentences wait in f->said and are told
 * then, a fix not made marked so, as e2fsck's "Fix? no".
 */
static void log_problem(void *arg, const char *msg)
{
	struct fsck *f = arg;
	char **grown;

	if (f->nsaid == f->saidcap) {
		grown = realloc(f->said, (f->saidcap * 2 + 16) * sizeof(*grown));
		if (!grown) {
			fsck_msg("  %s", msg);
			return;
		}
		f->said = grown;
		f->saidcap = f->saidcap * 2 + 16;
	}
	f->said[f->nsaid] = strdup(msg);
	if (f->said[f->nsaid])
		f->nsaid++;
	else
		fsck_msg("  %s", msg);
}

/* Whether msg already says it is not repaired. */
static bool said_unrepaired(const char *msg)
{
	size_t n = strlen(msg);

	return (n >= 12 && !strcmp(msg + n - 12, "not repaired")) ||
	       (n >= 14 && !strcmp(msg + n - 14, "not repairable"));
}

static void said_flush(struct fsck *f, const char *suffix)
{
	for (size_t i = 0; i < f->nsaid; i++) {
		fsck_msg("  %s%s", f->said[i],
			 said_unrepaired(f->said[i]) &&
			 strstr(suffix, "not repaired") ? "" : suffix);
		free(f->said[i]);
	}
	free(f->said);
	f->said = NULL;
	f->nsaid = f->saidcap = 0;
}

static void log_quiet(void *arg, const char *msg)
{
	const struct fsck *f = arg;

	if (f->o.verbose)
		fsck_msg("    %s", msg);
}

static int fsck_fs_open(struct fsck *f, bool rdonly, struct fs **out)
{
	int ret = fs_mount(f->bdev, FS_MOUNT_REPAIR |
			   (rdonly ? FS_MOUNT_RDONLY : 0), out);

	if (ret)
		fsck_err("the filesystem cannot be mounted%s: %s",
			 rdonly ? " (read-only)" : "", strerror(-ret));
	return ret;
}

static void counts_print(const struct fs_repair *r)
{
	struct fs_repair_counts c;

	fs_repair_counts(r, &c);
	fsck_msg("  %llu inodes (%llu directories) reached; %llu problems",
		 (unsigned long long)c.inodes, (unsigned long long)c.dirs,
		 (unsigned long long)c.problems);
}

/* fs_check agrees, or its first complaint is an extra problem. */
static uint64_t cross_check(struct fsck *f, struct fs *fs, uint64_t found)
{
	struct fs_check_report cr;
	int ret = fs_check(fs, &cr);

	if (ret == 0 || found)
		return 0;
	fsck_msg("  fs_check: %s", ret == -EUCLEAN ? cr.first_error :
		 strerror(-ret));
	return 1;
}

/* Read-only scan; *problems, *unfixable; the scan is kept in *out. */
static int scan_ro(struct fsck *f, struct fs *fs, bool loud,
		   struct fs_repair **out, uint64_t *problems)
{
	struct fs_repair_counts c;
	struct fs_info info;
	int ret;

	ret = fs_repair_scan(fs, loud ? log_problem : log_quiet, f, out);
	if (ret) {
		fsck_err("filesystem scan failed: %s", strerror(-ret));
		return ret;
	}
	fs_repair_counts(*out, &c);
	*problems = c.problems + cross_check(f, fs, c.problems);
	/* the mount read copy 1; a read-write mount writes it over copy 0
	 * (-y's repair round: fsck said "0 problems" and never did) */
	if (!fs_get_info(fs, &info) && info.sb_copy0_damaged) {
		(loud ? log_problem : log_quiet)(f, "superblock copy 0 is "
						 "damaged: rewritten from "
						 "copy 1");
		(*problems)++;
	}
	return 0;
}

/*
 * Problems found in metadata read where the array disagrees with itself
 * (Phase 2: parity against data that verifies, which block is wrong not
 * told) are not repaired: what the filesystem read there may be an old
 * or misplaced copy on one member that its checksum entry vouches for,
 * while parity holds the right one.  Repairing built on it: a RAID 5 whose
 * inode blocks one member held zeroed lost every entry naming them, and
 * its root, to -y and -p (a tester's find).
 */
static bool suspect_withholds(const struct fs_repair *r)
{
	struct fs_repair_counts c;

	fs_repair_counts(r, &c);
	if (!c.suspect)
		return false;
	fsck_msg("  NOT REPAIRED: %llu metadata block reads lie in stripes "
		 "whose parity disagrees with data that verifies (the first: "
		 "block %llu): a member may hold an old or misplaced copy "
		 "there that its checksum entry vouches for, and a repair "
		 "would build on it. Find the member at fault (its errors "
		 "above, raidfsctl status) and check again without it, so "
		 "that parity gives the other reading",
		 (unsigned long long)c.suspect,
		 (unsigned long long)c.suspect_first);
	return true;
}

static bool preen_may_fix(const struct fs_repair *r)
{
	struct fs_repair_counts c;

	fs_repair_counts(r, &c);
	/* emptying an unreadable map, clearing an inode or the journal
	 * loses data */
	return c.maps == 0 && c.cleared == 0 && c.journal == 0 &&
	       c.root == 0;
}

static int repair_rounds(struct fsck *f, uint64_t *changes)
{
	struct fs_repair *r = NULL;
	uint64_t fixed, total = 0;
	struct fs_repair_counts c;
	struct fs_info info;
	struct fs *fs;
	int i, ret = 0;

	for (i = 0; i < REPAIR_ROUNDS && !ret; i++) {
		ret = fsck_fs_open(f, false, &fs);
		if (ret)
			break;
		/* the mount itself cleared a journal it could not read */
		if (!fs_get_info(fs, &info) && info.journal_reset) {
			fsck_msg("  journal: cleared and started anew");
			total++;
		}
		if (info.sb_copy0_damaged)
			total++;        /* and rewritten by the mount */
		ret = fs_repair_scan(fs, log_quiet, f, &r);
		if (!ret) {
			fs_repair_counts(r, &c);
			fixed = 0;
			if (c.problems > fs_repair_unfixable(r))
				ret = fs_repair_apply(fs, r, &fixed);
			total += fixed;
			fs_repair_free(r);
		}
		if (fs_unmount(fs) && !ret)
			ret = -EIO;
		if (ret)
			fsck_err("repair failed: %s", strerror(-ret));
		if (ret || !fixed)
			break;
		fsck_verbose(f, "  repair round %d: %llu changes", i + 1,
			     (unsigned long long)fixed);
		fsck_cancel_point(f);
	}
	fsck_msg("  repaired: %llu changes in %d rounds", (unsigned long long)total,
		 i + 1);
	*changes = total;
	return ret;
}

/* The verdict scan after repairs, and the damage report. */
static int final_scan(struct fsck *f, bool after_repair)
{
	struct fs_repair *r = NULL;
	uint64_t problems = 0;
	struct fs *fs;
	int ret;

	ret = fsck_fs_open(f, true, &fs);
	if (ret) {
		f->status |= FSCK_UNCORRECTED;
		return 0;
	}
	ret = scan_ro(f, fs, after_repair, &r, &problems);
	said_flush(f, " - not repaired");
	if (!ret && after_repair)
		counts_print(r);
	if (!ret && problems)
		f->status |= FSCK_UNCORRECTED;
	if (!ret)
		ret = fsck_damage(f, fs, r);
	fs_repair_free(r);
	fs_unmount(fs);
	return ret;
}

int fsck_filesystem(struct fsck *f)
{
	struct fs_repair *r = NULL;
	uint64_t problems = 0, changes = 0;
	struct fs_info info;
	bool fix = false, withheld = false;
	struct fs *fs;
	int ret;

	fsck_phase(3, "Filesystem");
	ret = fsck_fs_open(f, true, &fs);
	if (ret) {
		/* not repaired: both superblock copies bad, the journal
		 * (an unreadable block bitmap block mounts: FS_MOUNT_REPAIR) */
		f->status |= FSCK_UNCORRECTED;
		return 0;
	}
	if (fs_get_info(fs, &info))
		memset(&info, 0, sizeof(info));
	/* -y and -p put an unclean filesystem's journal in place and free
	 * its orphans (a read-write mount does both), as e2fsck recovers
	 * the journal: the read-only mount above replayed it in memory
	 * only, and every later fsck and the next mount replayed it again
	 * while this one said "replayed" (a tester's find).  What the
	 * check then reads is that.  Not when replay stopped at a block it
	 * cannot read: the read-write mount would clear the journal, which
	 * loses its transactions - the repair's to decide (-p does not). */
	if (!info.was_clean && !info.journal_lost &&
	    f->o.mode != FSCK_MODE_NO) {
		fs_unmount(fs);
		ret = fs_mount(f->bdev, FS_MOUNT_REPAIR, &fs);
		if (ret == 0) {
			struct fs_info rw;

			if (!fs_get_info(fs, &rw) &&
			    (rw.replayed_txns || rw.orphans_freed))
				fsck_msg("  journal: %llu transactions "
					 "replayed, %llu orphan inodes freed",
					 (unsigned long long)rw.replayed_txns,
					 (unsigned long long)rw.orphans_freed);
			ret = fs_unmount(fs);
			if (ret == 0)
				info.replayed_txns = 0;
		}
		/* the check goes on from the read-only mount as before (the
		 * repair rounds mount read-write again) */
		if (ret)
			fsck_msg("  the journal could not be put in place (%s): "
				 "checked as replayed in memory",
				 strerror(-ret));
		ret = fsck_fs_open(f, true, &fs);
		if (ret) {
			f->status |= FSCK_UNCORRECTED;
			return 0;
		}
	}
	if (info.replayed_txns)
		fsck_msg("  journal: %llu transactions replayed%s",
			 (unsigned long long)info.replayed_txns,
			 f->o.mode == FSCK_MODE_NO ? " (in memory)" : "");
	ret = scan_ro(f, fs, true, &r, &problems);
	if (!ret && problems && f->o.mode != FSCK_MODE_NO)
		withheld = suspect_withholds(r);
	if (!ret && !withheld) {
		fix = problems && f->o.mode == FSCK_MODE_YES;
		if (problems && f->o.mode == FSCK_MODE_PREEN)
			fix = preen_may_fix(r);
	}
	said_flush(f, fix ? "" : withheld ? " - not done (NOT REPAIRED above)" :
		   f->o.mode == FSCK_MODE_NO ? " - not done: -n changes nothing" :
		   " - not done: -p repairs only what loses nothing");
	if (!ret) {
		counts_print(r);
		if (problems && f->o.mode == FSCK_MODE_PREEN && !fix &&
		    !withheld)
			fsck_msg("  UNEXPECTED INCONSISTENCY: repairing "
				 "would lose data; run " FSCK_PROG
				 " -y by hand");
	}
	if (!ret && !fix)
		ret = fsck_damage(f, fs, r);
	fs_repair_free(r);
	fs_unmount(fs);
	if (ret)
		return ret;
	if (!fix) {
		if (problems)
			f->status |= FSCK_UNCORRECTED;
		return 0;
	}
	ret = repair_rounds(f, &changes);
	if (ret)
		return ret;
	/* "errors corrected" only for what was (exit 5 for 0 changes) */
	if (changes)
		f->status |= FSCK_CORRECTED;
	return final_scan(f, true);
}

/*
 * Without -f: an array whose members all say clean, holding a filesystem
 * unmounted cleanly, is checked through those flags only.  *done when so.
 */
/* Has the array met damage since it was assembled? */
static bool fast_path_damage(struct fsck *f)
{
	struct rc_info info;

	if (rc_array_info(f->array, &info))
		return true;
	return info.errors || info.tables_unverified || info.unrecoverable;
}

int fsck_fast_path(struct fsck *f, bool *done)
{
	struct fs *fs;
	bool clean;

	*done = false;
	if (f->o.force || f->o.rebuild || f->nplan || !f->array_clean)
		return 0;
	if (fs_mount(f->bdev, FS_MOUNT_RDONLY, &fs) == 0) {
		clean = fs_repair_sb_clean(fs);
		fs_unmount(fs);
		/* What assembling and reading the filesystem's superblock
		 * met - a checksum table block failing its seal, a block
		 * failing its checksum - is damage the clean flags cannot
		 * know of: the full check finds and repairs the rest. */
		if (clean && fast_path_damage(f)) {
			fsck_msg("  damage found while opening the array: a "
				 "full check follows");
			clean = false;
		}
		if (clean) {
			fsck_phase(2, "Redundancy: skipped, every member is clean");
			fsck_phase(3, "Filesystem: skipped, unmounted cleanly "
				   "(-f checks anyway)");
			*done = true;
		}
	}
	return 0;
}
