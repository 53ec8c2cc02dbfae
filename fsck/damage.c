/*
 * damage: phase 4.  For what could not be repaired, the file and the byte
 * range affected.
 *
 * raidcore reports how many blocks it could not reconstruct, not which
 * ones (TODO: a callback from rc_scrub with each unrecoverable logical
 * block would make this a lookup instead of a read).  So when the scrub or
 * the filesystem reads met any, every written extent of every file is read
 * back through the array: a range that fails is narrowed down to its
 * blocks, and each run of bad blocks is reported with the file's path.
 * Metadata that cannot be read shows up in phase 3 instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "fs.h"
#include "fsck.h"
#include "repair.h"

#define READ_CHUNK 256u         /* blocks per read */

struct damage {
	struct fsck *f;
	struct fs_repair *r;
	uint8_t *buf;
	uint64_t files, ranges;
	uint64_t last_ino;
	/* the run of bad blocks being gathered */
	uint64_t run_ino, run_start, run_len;
	const char *what;               /* what a run is (run_flush) */
};

static void run_flush(struct damage *d)
{
	char path[4096];

	if (!d->run_len)
		return;
	fs_repair_path(d->r, d->run_ino, path, sizeof(path));
	fsck_msg("  %s: bytes %llu-%llu %s (%llu blocks)", path,
		 (unsigned long long)(d->run_start * FS_BLOCK_SIZE),
		 (unsigned long long)((d->run_start + d->run_len) *
				      FS_BLOCK_SIZE - 1),
		 d->what ? d->what : "unreadable",
		 (unsigned long long)d->run_len);
	d->ranges++;
	if (d->run_ino != d->last_ino)
		d->files++;
	d->last_ino = d->run_ino;
	d->run_len = 0;
}

static void bad_block(struct damage *d, uint64_t ino, uint64_t lblk)
{
	if (d->run_len && d->run_ino == ino &&
	    d->run_start + d->run_len == lblk) {
		d->run_len++;
		return;
	}
	run_flush(d);
	d->run_ino = ino;
	d->run_start = lblk;
	d->run_len = 1;
}

static int extent_read(void *arg, uint64_t ino, uint64_t lblk, uint64_t pblk,
		       uint32_t len)
{
	struct damage *d = arg;
	struct fs_bdev *b = d->f->bdev;
	uint32_t off, n, i;

	if (fsck_cancelled)
		return -EINTR;
	for (off = 0; off < len; off += n) {
		n = len - off < READ_CHUNK ? len - off : READ_CHUNK;
		if (!fs_bdev_read(b, pblk + off, n, d->buf))
			continue;
		for (i = 0; i < n; i++)
			if (fs_bdev_read(b, pblk + off + i, 1, d->buf))
				bad_block(d, ino, lblk + off + i);
	}
	return 0;
}

/* A file's blocks in stripes whose members disagree (rc_block_suspect). */
static int extent_suspect(void *arg, uint64_t ino, uint64_t lblk,
			  uint64_t pblk, uint32_t len)
{
	struct damage *d = arg;

	for (uint32_t i = 0; i < len; i++)
		if (rc_block_suspect(d->f->array, pblk + i))
			bad_block(d, ino, lblk + i);
	return 0;
}

/*
 * Nothing unreadable.  "No data lost" only when nothing else was seen
 * either: stripes whose parity disagrees may hold a wrong block that
 * verifies, and a block -n verified against redundancy only has no
 * checksum recorded yet.  The files with data there are named: a member
 * that lost a write and its checksum entry reads back an older version
 * with no error (a tester's find: RAID 1 served it, fsck named nothing).
 */
static void doubt_list(struct damage *d)
{
	d->what = "in doubt: the members disagree there, and one reading "
		  "may be an older version";
	if (d->f->mismatches && d->r)
		fs_repair_extents(d->r, extent_suspect, d);
	run_flush(d);
}

static void damage_none(struct fsck *f, struct fs_repair *r)
{
	struct damage d = { .f = f, .r = r };

	doubt_list(&d);
	if (f->mismatches)
		fsck_msg("  no block is unreadable, but in %llu stripes %s: "
			 "one of their blocks may hold an older version (a lost "
			 "write), and they have no working redundancy (phase "
			 "2)%s", (unsigned long long)f->mismatches,
			 f->info.level == RC_RAID1 || f->info.level == RC_RAID10 ?
			 "the copies disagree, each verifying" :
			 "the parity disagrees with data that verifies",
			 d.ranges ? "; the files above have data there" : "");
	else if (f->unverified)
		fsck_msg("  every file reads; %llu blocks have no valid checksum "
			 "and were verified against redundancy only (fsck -y "
			 "records their checksums)",
			 (unsigned long long)f->unverified);
	else if (f->split)
		fsck_msg("  nothing in this array is lost; the writes made on "
			 "the split brain's other side (phase 1) are not in it");
	else if (f->info.journal_lost)
		fsck_msg("  every file reads, but the writes of the journal's "
			 "transactions from %llu on, committed before the crash, "
			 "are lost (phase 1): files may hold older contents",
			 (unsigned long long)f->info.journal_lost);
	else
		fsck_msg("  no data lost");
}

static bool bad_listed(const struct fsck *f, uint64_t blk)
{
	for (uint64_t i = 0; i < f->nbad; i++)
		if (f->bad[i] == blk)
			return true;
	return false;
}

/*
 * A write into a row with another block the array cannot rebuild fails
 * (its parity update needs that block), so such a block is rewritten
 * with its whole stripe, which needs no old contents: the stripe's other
 * blocks read, every lost free one zeros.  0, or -EIO when some block of
 * the stripe is lost and in use (it stays an error, never zeros).
 */
static int stripe_rewrite(struct fsck *f, struct fs_repair *r, uint64_t blk)
{
	uint64_t n = f->info.stripe_blocks ? f->info.stripe_blocks : 1;
	uint64_t first = blk / n * n;
	uint8_t *buf;
	int ret = 0;

	if (posix_memalign((void **)&buf, 4096, n * FS_BLOCK_SIZE))
		return -ENOMEM;
	for (uint64_t i = 0; i < n && !ret; i++) {
		uint8_t *b = buf + i * FS_BLOCK_SIZE;

		if (bad_listed(f, first + i) && fs_repair_block_free(r, first + i))
			memset(b, 0, FS_BLOCK_SIZE);
		else
			ret = rc_read(f->array, first + i, 1, b);
	}
	if (!ret)
		ret = rc_write(f->array, first, (uint32_t)n, buf);
	free(buf);
	return ret;
}

/*
 * Blocks phase 2 could not rebuild that nothing uses (free space, as the
 * scan of phase 3 found it) hold nothing to lose: -y and -p write zeros
 * over them, with new checksums and parity, so that they stop failing
 * every check and scrub (e2fsck and ZFS never fail over free space).
 * Each is written alone and flushed; when that commit cannot be made (a
 * row that holds another lost block), the write is abandoned and the
 * block written with its whole stripe (stripe_rewrite), which the commit
 * writes without reading anything; a stripe that holds a lost block in
 * use cannot be, and is left as it was, told.  Until 2026-12-06 the
 * writes were flushed together at the end and a failed one stayed dirty
 * in the cache, so the close failed too and fsck said "check not
 * completed" (exit 12) after a complete check (a tester's find).  A
 * listed block that reads again was rewritten by phase 3's repair.
 */
static bool zeroed(struct fsck *f, struct fs_repair *r, uint64_t blk,
		   const uint8_t *zero)
{
	uint64_t n = f->info.stripe_blocks ? f->info.stripe_blocks : 1;

	if (rc_write(f->array, blk, 1, zero) == 0 && rc_flush(f->array) == 0)
		return true;
	rc_write_abandon(f->array, blk, 1);
	if (stripe_rewrite(f, r, blk) == 0 && rc_flush(f->array) == 0)
		return true;
	rc_write_abandon(f->array, blk / n * n, n);
	return false;
}

static void free_bad_rewrite(struct fsck *f, struct fs_repair *r)
{
	uint64_t done = 0, failed = 0, rewritten = 0, kept = 0;
	uint8_t *zero, *scratch;

	/* two blocks: zeros to write, and a scratch to read into; what the
	 * repairs wrote is committed first (an abandoned write drops only
	 * these zeros) */
	if (f->o.mode == FSCK_MODE_NO || !f->nbad || rc_flush(f->array) ||
	    posix_memalign((void **)&zero, 4096, 2 * FS_BLOCK_SIZE))
		return;
	memset(zero, 0, FS_BLOCK_SIZE);
	scratch = zero + FS_BLOCK_SIZE;
	for (uint64_t i = 0; i < f->nbad; i++) {
		/* rewritten by phase 3's repair (a bitmap or inode table
		 * block recreated), or zeroed with its stripe: lost no more */
		if (rc_read(f->array, f->bad[i], 1, scratch) == 0) {
			if (!memcmp(scratch, zero, FS_BLOCK_SIZE) &&
			    fs_repair_block_free(r, f->bad[i]))
				done++;
			else
				rewritten++;
			continue;
		}
		if (!fs_repair_block_free(r, f->bad[i]))
			continue;
		/* A stripe whose parity disagrees with data that verifies
		 * (rc_block_suspect): a write there makes its parity agree
		 * with the blocks it holds, the wrong one with the rest - the
		 * damage could then not be found again (a tester's find). */
		if (rc_block_suspect(f->array, f->bad[i])) {
			kept++;
			continue;
		}
		if (zeroed(f, r, f->bad[i], zero))
			done++;
		else
			failed++;
	}
	free(zero);
	if (done || failed)
		fsck_msg("  %llu blocks that could not be reconstructed are in "
			 "free space: %llu rewritten as zeros%s",
			 (unsigned long long)(done + failed),
			 (unsigned long long)done, failed ?
			 " (the others' writes failed: their rows hold more "
			 "than the array can rebuild)" : "");
	if (kept)
		fsck_msg("  %llu blocks that could not be reconstructed are in "
			 "free space, in stripes whose parity disagrees with "
			 "data that verifies: left as they are (a write would "
			 "make the parity agree with the wrong block)",
			 (unsigned long long)kept);
	if (rewritten)
		fsck_msg("  %llu blocks that could not be reconstructed were "
			 "rewritten by the filesystem's repair (phase 3)",
			 (unsigned long long)rewritten);
	done += rewritten;
	f->unrecoverable -= done < f->unrecoverable ? done : f->unrecoverable;
	/* every block phase 2 lost was in free space and is rewritten, or
	 * was rewritten by phase 3: nothing of what it counted is left
	 * (its reads included) */
	if (done == f->nbad && f->bad_all) {
		f->unrecoverable = f->conflicts = 0;
		f->free_rewritten = true;
	}
	if (done)
		f->status |= FSCK_CORRECTED;
}

int fsck_damage(struct fsck *f, struct fs *fs, struct fs_repair *r)
{
	struct damage d = { .f = f, .r = r }, lost;
	struct rc_info info;
	int ret;

	fsck_phase(4, "Damage report");
	free_bad_rewrite(f, r);
	/* phase 3 may have made stripes phase 2 found disagreeing whole
	 * (the filesystem proved the other reading of a block there) */
	if (f->mismatches) {
		uint64_t left = rc_suspect_recheck(f->array);

		if (left < f->mismatches)
			f->mismatches = left;
	}
	if (f->mismatch_pending)
		f->status |= f->mismatches ? FSCK_UNCORRECTED : FSCK_CORRECTED;
	f->mismatch_pending = false;
	/* reads that failed for lack of redundancy (phase 3's, this one's) */
	if (rc_array_info(f->array, &info))
		info.unrecoverable = 0;
	/* every block phase 2 lost reads now: the failed reads (phase 2's,
	 * and phase 3's of the same blocks) are of the past */
	if (f->free_rewritten)
		info.unrecoverable = 0;
	if (!f->unrecoverable && !f->conflicts && !info.unrecoverable) {
		/* the walk stopped at a structure it cannot repair: what
		 * lies beyond it was not seen, so nothing is "not lost" */
		if (r && fs_repair_unfixable(r))
			fsck_msg("  the filesystem could not be walked whole "
				 "(phase 3: not repairable): the files beyond "
				 "that damage were not seen; no block is "
				 "unreadable");
		else
			damage_none(f, r);
		return 0;
	}
	if (posix_memalign((void **)&d.buf, 4096, READ_CHUNK * FS_BLOCK_SIZE))
		return -ENOMEM;
	ret = fs_repair_extents(r, extent_read, &d);
	run_flush(&d);
	free(d.buf);
	if (ret == -EINTR)
		fsck_cancel_point(f);
	if (ret)
		return ret;
	f->status |= FSCK_UNCORRECTED;
	lost = (struct damage){ .ranges = d.ranges, .files = d.files };
	/* and, as when nothing is unreadable, the files with data where the
	 * members disagree (a tester's find: at RAID 5 a member rolled back
	 * served a file's old contents, and with a few unreadable blocks
	 * elsewhere fsck named no file) */
	d.ranges = d.files = 0;
	d.last_ino = 0;
	doubt_list(&d);
	if (!lost.ranges && f->unrecoverable)
		fsck_msg("  %llu blocks could not be reconstructed (phase 2); "
			 "no file data among them (free space or metadata: see "
			 "phase 3)", (unsigned long long)f->unrecoverable);
	else if (!lost.ranges)
		fsck_msg("  some reads could not be reconstructed; no file data "
			 "among them (metadata: see phase 3)");
	else
		fsck_msg("  %llu ranges in %llu files could not be "
			 "reconstructed", (unsigned long long)lost.ranges,
			 (unsigned long long)lost.files);
	if (d.ranges)
		fsck_msg("  and in %llu stripes the members disagree, each "
			 "verifying: %llu ranges in %llu files are in doubt "
			 "(above)", (unsigned long long)f->mismatches,
			 (unsigned long long)d.ranges,
			 (unsigned long long)d.files);
	return 0;
}
