/*
 * rebuild: phase 2's first part - the rebuilds target.c planned, carried
 * out on the read-write assembly (rc_member_replace), each before the
 * scrub so that the scrub then checks the rebuilt members too.
 *
 * Every check that can refuse a rebuild was made in phase 1, on the
 * read-only assembly: nothing here is refused for bad input.  A rebuild
 * onto a device resumes from its checkpoint when the slot is already
 * rebuilding onto it (rc_member_replace with no device), so an offline
 * rebuild that was interrupted (killed, power lost) goes on where it
 * stopped when the same command is run again.
 */
#include <errno.h>
#include <string.h>

#include "bdev.h"
#include "fs.h"
#include "fsck.h"

struct discard_ctx {
	struct rc_array *a;
	uint64_t blocks;
};

static int discard_run(void *ctx, uint64_t blk, uint64_t len)
{
	struct discard_ctx *d = ctx;

	d->blocks += len;
	return rc_discard(d->a, blk, len);
}

/*
 * What the filesystem does not use need not be rebuilt: its free space is
 * discarded first (whole stripes become "never written" on every member),
 * and the rebuild then skips it.  Only on a clean filesystem, whose
 * bitmaps say everything; otherwise the whole array is rebuilt.
 */
static void rebuild_discard_free(struct fsck *f)
{
	struct fs_mount_opts mo = { .flags = FS_MOUNT_RDONLY };
	struct discard_ctx d = { .a = f->array };
	struct fs_bdev *b = NULL;
	struct fs_info info;
	struct fs *fs = NULL;
	int ret;

	ret = fs_bdev_from_array(f->array, &b);
	if (ret == 0)
		ret = fs_mount_opts(b, &mo, &fs);
	if (ret == 0 && !fs_get_info(fs, &info) && info.was_clean &&
	    !info.replayed_txns) {
		ret = fs_free_runs(fs, discard_run, &d);
		if (ret == 0)
			ret = rc_flush(f->array);
		if (ret == 0)
			fsck_msg("  %llu MiB the filesystem does not use: not "
				 "rebuilt", (unsigned long long)(d.blocks >> 8));
	} else {
		fsck_msg("  the filesystem is not clean: rebuilding the "
			 "whole array");
	}
	if (fs)
		fs_unmount(fs);
	if (b)
		fs_bdev_close(b);
}

/* The device of e, opened for the rebuild (NULL: the array has it). */
static int rebuild_dev(struct fsck *f, const struct fsck_rebuild *e,
		       struct rc_dev **dev)
{
	char err[512];
	int ret;

	*dev = NULL;
	if (!e->path)
		return 0;
	if (e->wipe && probe_sigs_wipe(e->path, err, sizeof(err)) < 0) {
		fsck_err("%s", err);
		return -EIO;
	}
	ret = rc_dev_open_file(e->path, RC_DEV_EXCL, dev);
	if (ret)
		fsck_err("%s: %s", e->path, strerror(-ret));
	return ret;
}

static void rebuild_announce(struct fsck *f, const struct fsck_rebuild *e)
{
	uint64_t stripes = f->info.stripe_blocks ?
			   f->info.blocks / f->info.stripe_blocks : 0;
	struct rc_member_status st;

	if (e->kind == FSCK_RB_RESUME &&
	    !rc_array_member_status(f->array, e->slot, &st))
		fsck_msg("  resuming the rebuild of slot %d onto %s at stripe "
			 "%llu of %llu", e->slot, st.name,
			 (unsigned long long)st.rebuild_done,
			 (unsigned long long)stripes);
	else if (e->kind == FSCK_RB_SPARE)
		fsck_msg("  rebuilding slot %d onto a spare", e->slot);
	else
		fsck_msg("  rebuilding slot %d onto %s", e->slot, e->path);
}

static int rebuild_one(struct fsck *f, const struct fsck_rebuild *e)
{
	struct fsck_progress p;
	struct rc_dev *dev;
	double t0;
	int ret;

	ret = rebuild_dev(f, e, &dev);
	if (ret)
		return ret;
	rebuild_announce(f, e);
	fsck_progress_init(&p, "rebuild", fsck_member_bytes(&f->info), false);
	t0 = fsck_now();
	/* offline: the limits set for a busy mount do not hold it back */
	rc_array_rebuild_unlimited(f->array);
	/* the array owns dev from here on */
	ret = rc_member_replace(f->array, e->slot, dev, fsck_progress_cb, &p);
	fsck_progress_end(&p);
	/* -EIO is also a suspended array's (raidcore fail.c): the rebuild
	 * stopped, nothing more written; not "finished" */
	if (ret && !rc_array_info(f->array, &f->info) && f->info.suspended) {
		fsck_err("rebuild stopped: the array is suspended - member %d "
			 "failed (%s) and the array cannot run without it; "
			 "bring it back and run fsck again (the rebuild "
			 "resumes)", f->info.suspend_slot,
			 f->info.suspend_why);
		return -EIO;
	}
	if (ret && ret != -EIO) {
		fsck_err("rebuild failed: %s", strerror(-ret));
		return ret;
	}
	if (ret == -EIO) {
		fsck_msg("  rebuild finished, but some blocks could not be "
			 "reconstructed (they read as errors; see the damage "
			 "report)");
		f->status |= FSCK_UNCORRECTED;
	} else {
		fsck_msg("  rebuild finished in %.1f s", fsck_now() - t0);
		f->status |= FSCK_CORRECTED;
	}
	return rc_array_info(f->array, &f->info);
}

int fsck_rebuild(struct fsck *f)
{
	int ret = 0;

	if (!f->nplan)
		return 0;
	fsck_phase(2, "Rebuild");
	rebuild_discard_free(f);
	for (int i = 0; i < f->nplan && ret == 0; i++) {
		ret = rebuild_one(f, &f->plan[i]);
		fsck_cancel_point(f);
	}
	return ret;
}
