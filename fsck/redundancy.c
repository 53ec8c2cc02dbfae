/*
 * redundancy: phase 2, and --rebuild before it.
 *
 * rc_scrub reads every stripe, checks every block against its checksum and
 * every row's parity (or copies) against its data; with a checksum it
 * knows which member's block is wrong and (unless -n) rewrites exactly
 * that one.  The per-member counts come from rc_array_member_status.
 */
#include <errno.h>
#include <string.h>

#include "fsck.h"
#include "bdev.h"
#include "fs.h"

static uint64_t raw_bytes(const struct rc_info *i)
{
	uint64_t cols = i->data_columns ? i->data_columns : 1;

	return i->blocks / cols * i->members * RC_BLOCK_SIZE;
}

struct counts {
	uint64_t read, csum, write, repaired;
};

static void counts_get(struct fsck *f, struct counts *c)
{
	struct rc_member_status st;

	for (uint32_t s = 0; s < f->info.members; s++) {
		memset(&c[s], 0, sizeof(c[s]));
		if (rc_array_member_status(f->array, (int)s, &st))
			continue;
		c[s] = (struct counts){ st.read_errors, st.csum_errors,
					st.write_errors, st.repaired };
	}
}

/* What this check found on each member, and what the member has on
 * record (the superblock's counters, kept across assemblies). */
static void member_counts(struct fsck *f, const struct counts *before)
{
	struct counts now[RC_MAX_MEMBERS];
	struct rc_member_status st;

	counts_get(f, now);
	for (uint32_t s = 0; s < f->info.members; s++) {
		uint64_t r = now[s].read - before[s].read;
		uint64_t c = now[s].csum - before[s].csum;
		uint64_t w = now[s].write - before[s].write;
		uint64_t p = now[s].repaired - before[s].repaired;

		if (rc_array_member_status(f->array, (int)s, &st))
			continue;
		if (!r && !c && !w && !p && !f->o.verbose)
			continue;
		fsck_msg("  slot %u (%s): %llu read errors, %llu checksum "
			 "errors, %llu write errors, %llu blocks repaired "
			 "(on record: %llu, %llu, %llu, %llu)", s,
			 st.name[0] ? st.name : "missing",
			 (unsigned long long)r, (unsigned long long)c,
			 (unsigned long long)w, (unsigned long long)p,
			 (unsigned long long)now[s].read,
			 (unsigned long long)now[s].csum,
			 (unsigned long long)now[s].write,
			 (unsigned long long)now[s].repaired);
	}
}

int fsck_redundancy(struct fsck *f)
{
	bool repair = f->o.mode != FSCK_MODE_NO;
	struct fsck_progress p;
	struct counts before[RC_MAX_MEMBERS];
	struct rc_scrub_report r;
	double t0;
	int ret;

	fsck_phase(2, "Redundancy (parity, copies, checksums)");
	counts_get(f, before);
	fsck_progress_init(&p, "scrub", raw_bytes(&f->info), !repair);
	t0 = fsck_now();
	ret = rc_scrub(f->array, repair, &r, fsck_progress_cb, &p);
	fsck_progress_end(&p);
	if (ret) {
		fsck_err("scrub failed: %s", strerror(-ret));
		return ret;
	}
	t0 = fsck_now() - t0;
	fsck_msg("  %llu stripes in %.2f s (%.0f MiB/s of members): %llu "
		 "checksum errors, %llu read errors, %llu blocks without a valid "
		 "checksum entry, %llu parity mismatches, %llu repaired, %llu "
		 "entries re-derived, %llu unrecoverable",
		 (unsigned long long)r.stripes, t0,
		 t0 > 0 ? (double)raw_bytes(&f->info) / t0 / (1 << 20) : 0.0,
		 (unsigned long long)r.csum_errors,
		 (unsigned long long)r.read_errors,
		 (unsigned long long)r.unverified,
		 (unsigned long long)r.parity_mismatches,
		 (unsigned long long)r.repaired,
		 (unsigned long long)r.entries_fixed,
		 (unsigned long long)r.unrecoverable);
	member_counts(f, before);
	f->unrecoverable += r.unrecoverable;
	f->mismatches += r.parity_mismatches;
	if (r.parity_mismatches)
		fsck_msg("  %llu stripes hold blocks that all verify against their "
			 "checksums while their parity disagrees: which one is "
			 "wrong cannot be told, so nothing was rewritten there; "
			 "those stripes cannot be rebuilt if a member is lost",
			 (unsigned long long)r.parity_mismatches);
	if (r.conflicts)
		fsck_msg("  %llu blocks whose checksum, contents and "
			 "redundancy all disagree were left as they are",
			 (unsigned long long)r.conflicts);
	if (r.unrecoverable || r.parity_mismatches || r.conflicts)
		f->status |= FSCK_UNCORRECTED;
	if (r.csum_errors + r.read_errors + r.unverified > r.unrecoverable)
		f->status |= repair ? FSCK_CORRECTED : FSCK_UNCORRECTED;
	if (f->info.degraded) {
		fsck_msg("  the array is DEGRADED: every block was read through "
			 "reconstruction; replace the missing member with "
			 "--rebuild");
		f->status |= FSCK_UNCORRECTED;
	}
	return 0;
}

/* The first slot that is not active: where --rebuild puts the new device. */
static int missing_slot(struct fsck *f)
{
	struct rc_member_status st;
	uint32_t s;

	for (s = 0; s < f->info.members; s++)
		if (!rc_array_member_status(f->array, (int)s, &st) &&
		    st.state != RC_MEMBER_ACTIVE)
			return (int)s;
	return -1;
}

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

int fsck_rebuild(struct fsck *f)
{
	struct fsck_progress p;
	struct rc_dev *dev;
	int slot, ret;
	double t0;

	fsck_phase(2, "Rebuild");
	slot = missing_slot(f);
	if (slot < 0) {
		fsck_err("--rebuild %s: no member is missing: name the new "
			 "device in SOURCE in place of the lost one", f->o.rebuild);
		return -EINVAL;
	}
	ret = rc_dev_open_file(f->o.rebuild, RC_DEV_EXCL, &dev);
	if (ret) {
		fsck_err("%s: %s", f->o.rebuild, strerror(-ret));
		return ret;
	}
	rebuild_discard_free(f);
	fsck_msg("  rebuilding slot %d onto %s", slot, f->o.rebuild);
	fsck_progress_init(&p, "rebuild", raw_bytes(&f->info), false);
	t0 = fsck_now();
	/* the array owns dev from here on, whatever happens */
	ret = rc_member_replace(f->array, slot, dev, fsck_progress_cb, &p);
	fsck_progress_end(&p);
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
