/*
 * file: reading, writing and truncating file data.
 *
 * Data never passes through the buffer cache (the kernel's page cache sits
 * above the daemon): reads and writes go straight to the bdev, as few and
 * as large requests as the extent map allows, so a 1 MiB write reaches
 * raidcore as one or a few multi-block writes on stripe-aligned runs.
 *
 * Ordered mode: new blocks are allocated and filled inside the handle whose
 * metadata points to them, so the data writes precede the commit of that
 * metadata (the commit flushes before its commit record).
 *
 * Bytes of the last block past the end of file may hold anything (a
 * shrinking truncate leaves them, so that a truncate lost in a crash loses
 * no data); whatever grows a file zeroes them first (zero_block_tail,
 * bounce_zero_past_eof), so old bytes never reappear.  Growing modifies
 * the old last block in place; if a shrink of the file has not committed
 * yet, the bytes it touches still belong to the file on disk, so the grow
 * first commits the shrink (fs_file_prepare_grow): a crash then finds
 * either the old file whole or the shrunk one.
 *
 * Caller holds ip->lock: read for reads, write for the rest (fs_file_open
 * takes it itself).
 */
#include <fcntl.h>
#include <string.h>
#include "fs_int.h"

static int bounce_alloc(uint64_t blocks, uint8_t **out)
{
	if (posix_memalign((void **)out, 4096, blocks * FS_BSIZE))
		return -ENOMEM;
	return 0;
}

/* Reads file blocks [lblk, lblk + n) into buf, holes as zeros. */
static int file_read_blocks(struct fs *fs, struct fs_inode *ip,
			    uint64_t lblk, uint64_t n, uint8_t *buf)
{
	uint64_t end = lblk + n, k;
	struct fs_extent e;
	bool found;
	int err;

	while (lblk < end) {
		err = fs_ext_map(fs, ip, lblk, &e, &found);
		if (err)
			return err;
		if (found) {
			k = (e.lblk + e.len < end ? e.lblk + e.len : end) - lblk;
			err = (e.flags & FS_EXT_UNWRITTEN) ?
			      (memset(buf, 0, k * FS_BSIZE), 0) :
			      fs_bdev_read(fs->bdev, e.pblk + (lblk - e.lblk),
					   (uint32_t)k, buf);
			if (err)
				return err;
		} else {
			k = (e.len && e.lblk < end ? e.lblk : end) - lblk;
			memset(buf, 0, k * FS_BSIZE);
		}
		buf += k * FS_BSIZE;
		lblk += k;
	}
	return 0;
}

/* Writes file blocks [lblk, lblk + n), which are all mapped, from buf;
 * fresh: they were all holes before this transaction mapped them. */
static int file_write_blocks(struct fs *fs, struct fs_inode *ip,
			     uint64_t lblk, uint64_t n, const uint8_t *buf,
			     bool fresh)
{
	uint64_t end = lblk + n, k;
	struct fs_extent e;
	bool found;
	int err;

	while (lblk < end) {
		err = fs_ext_map(fs, ip, lblk, &e, &found);
		if (err)
			return err;
		FS_ASSERT(found);
		k = (e.lblk + e.len < end ? e.lblk + e.len : end) - lblk;
		err = (fresh ? fs_bdev_write_fresh : fs_bdev_write)(fs->bdev,
			e.pblk + (lblk - e.lblk), (uint32_t)k, buf);
		if (err)
			return err;
		buf += k * FS_BSIZE;
		lblk += k;
	}
	return 0;
}

ssize_t fs_file_read(struct fs *fs, struct fs_inode *ip, uint64_t off,
		     size_t size, void *buf)
{
	uint64_t b0, nb;
	uint8_t *tmp = buf;
	int err;

	if (off >= ip->d.size || !size)
		return 0;
	if (size > ip->d.size - off)
		size = (size_t)(ip->d.size - off);
	b0 = off >> FS_BSHIFT;
	nb = ((off + size - 1) >> FS_BSHIFT) - b0 + 1;
	if (((off | size) & (FS_BSIZE - 1)) && (err = bounce_alloc(nb, &tmp)))
		return err;
	err = file_read_blocks(fs, ip, b0, nb, tmp);
	if (!err && tmp != buf)
		memcpy(buf, tmp + (off & (FS_BSIZE - 1)), size);
	if (tmp != buf)
		free(tmp);
	return err ? err : (ssize_t)size;
}

int fs_file_prepare_grow(struct fs *fs, struct fs_inode *ip)
{
	if (!ip->shrink_seq || fs_tx_is_committed(fs, ip->shrink_seq))
		return 0;
	if (fs_tx_held())
		return -EIO;    /* never: growth is not nested in a handle */
	return fs_journal_sync(fs);
}

int fs_space_reserve(struct fs *fs, uint64_t blocks, bool cache)
{
	int err;

	if (fs_alloc_has_space(fs, blocks, cache))
		return 0;
	if (!fs_alloc_pending(fs) || fs_tx_held())
		return -ENOSPC;
	err = fs_journal_checkpoint(fs);
	if (err)
		return err;
	return fs_alloc_has_space(fs, blocks, cache) ? 0 : -ENOSPC;
}

/* Fills the partial first and last blocks of a write from the file. */
static int write_edges(struct fs *fs, struct fs_inode *ip, uint64_t off,
		       size_t size, uint8_t *tmp, uint64_t b0, uint64_t nb)
{
	uint64_t b1 = b0 + nb - 1;
	int err = 0;

	if (off & (FS_BSIZE - 1))
		err = file_read_blocks(fs, ip, b0, 1, tmp);
	if (!err && ((off + size) & (FS_BSIZE - 1)) && (b1 != b0 ||
	    !(off & (FS_BSIZE - 1))))
		err = file_read_blocks(fs, ip, b1, 1,
				       tmp + (b1 - b0) * FS_BSIZE);
	return err;
}

/*
 * Keeps the past-EOF invariant inside the written blocks: bytes between the
 * old end of file and the write, and past the new end, read back as zero
 * even if a crashed write left something there.
 */
static void bounce_zero_past_eof(struct fs_inode *ip, uint64_t off,
				 size_t size, uint8_t *tmp, uint64_t b0,
				 uint64_t nb)
{
	uint64_t base = b0 << FS_BSHIFT, end = off + size;
	uint64_t lim = base + nb * FS_BSIZE, eof = ip->d.size;

	if (eof < off && eof < lim)
		memset(tmp + (eof > base ? eof - base : 0), 0,
		       off - (eof > base ? eof : base));
	if (end > eof && end < lim)
		memset(tmp + (end - base), 0, lim - end);
}

/* Before any change: room for the holes, and a safe end of file to grow. */
static int write_prepare(struct fs *fs, struct fs_inode *ip, uint64_t off,
			 size_t size, uint64_t b0, uint64_t nb, bool kernel)
{
	uint64_t holes = fs_ext_holes(fs, ip, b0, b0 + nb);
	int err;

	/* Without new blocks a write may still split an unwritten extent. */
	err = holes ? fs_space_reserve(fs, holes + FS_WRITE_SLACK,
				       kernel) :
		      fs_meta_check(fs, FS_META_FLOOR_REMOVE);
	if (!err && off + size > ip->d.size)
		err = fs_file_prepare_grow(fs, ip);
	if (!err && off > ip->d.size && (ip->d.size >> FS_BSHIFT) < b0)
		err = fs_zero_block_tail(fs, ip, ip->d.size);
	return err;
}

/* Does [from, to) hold nothing a reader sees: holes and unwritten
 * extents only (false when the map cannot tell)? */
static bool range_is_fresh(struct fs *fs, struct fs_inode *ip, uint64_t from,
			   uint64_t to)
{
	struct fs_extent e;
	bool found;

	while (from < to) {
		if (fs_ext_map(fs, ip, from, &e, &found))
			return false;
		if (found && !(e.flags & FS_EXT_UNWRITTEN))
			return false;
		if (!found && (!e.len || e.lblk >= to))
			return true;
		from = found ? e.lblk + e.len : e.lblk;
	}
	return true;
}

/* Is every block of [from, to) mapped to a written extent? */
static bool range_is_written(struct fs *fs, struct fs_inode *ip,
			     uint64_t from, uint64_t to)
{
	struct fs_extent e;
	bool found;

	while (from < to) {
		if (fs_ext_map(fs, ip, from, &e, &found) || !found ||
		    (e.flags & FS_EXT_UNWRITTEN))
			return false;
		from = e.lblk + e.len;
	}
	return true;
}

ssize_t fs_file_overwrite(struct fs *fs, struct fs_inode *ip, uint64_t off,
			  size_t size, const void *buf)
{
	uint64_t b0 = off >> FS_BSHIFT, nb = size >> FS_BSHIFT;
	struct fs_extent e;
	bool found;
	int err;

	if (!size || ((off | size) & (FS_BSIZE - 1)) || !S_ISREG(ip->d.mode) ||
	    off > ip->d.size || size > ip->d.size - off)
		return -EAGAIN;
	/* Most overwrites lie in one extent: mapped once, written at once. */
	err = fs_ext_map(fs, ip, b0, &e, &found);
	if (!err && found && !(e.flags & FS_EXT_UNWRITTEN) &&
	    b0 + nb <= e.lblk + e.len)
		err = fs_bdev_write(fs->bdev, e.pblk + (b0 - e.lblk),
				    (uint32_t)nb, buf);
	else if (range_is_written(fs, ip, b0, b0 + nb))
		err = file_write_blocks(fs, ip, b0, nb, buf, false);
	else
		return -EAGAIN;
	return err ? err : (ssize_t)size;
}

/* Maps, writes and converts [b0, b0 + nb) in one transaction (ordered).
 * kernel_times: mtime and ctime are the kernel's (fs_file_write). */
static int write_commit(struct fs *fs, struct fs_inode *ip, uint64_t off,
			size_t size, const uint8_t *blocks, uint64_t b0,
			uint64_t nb, bool kernel_times)
{
	uint64_t blocks_before = ip->d.blocks;
	bool mapped = false, fresh;
	struct fs_tx *tx;
	int err;

	err = fs_tx_begin(fs, &tx);
	if (err)
		return err;
	/* Holes are allocated by this transaction and unwritten extents read
	 * as zeros until it commits their conversion: nothing shows what is
	 * written there before that commit, which flushes first (ordered),
	 * and their old contents are free space - raidcore may write their
	 * full stripes once, without its journal copy. */
	fresh = range_is_fresh(fs, ip, b0, b0 + nb);
	err = fs_ext_fill(fs, tx, ip, b0, b0 + nb, false);
	if (!err)
		err = file_write_blocks(fs, ip, b0, nb, blocks, fresh);
	if (!err)
		err = fs_ext_mark_written(fs, tx, ip, b0, b0 + nb);
	if (err > 0)
		mapped = true;
	if (err >= 0) {
		err = 0;
		if (off + size > ip->d.size) {
			ip->d.size = off + size;
			mapped = true;
		}
		if (mapped)
			fs_tx_ordered(tx);
		if (!kernel_times)
			fs_inode_touch(ip, false, true, true);
	}
	/* Even after an error: blocks may have been mapped. */
	if (err || mapped || ip->d.blocks != blocks_before)
		err = fs_inode_dirty(fs, tx, ip) && !err ? -EIO : err;
	else if (!kernel_times && fs_inode_dirty_times(fs, tx, ip))
		err = -EIO;
	fs_tx_end(fs, tx);
	return err;
}

ssize_t fs_file_write(struct fs *fs, struct fs_inode *ip, uint64_t off,
		      size_t size, const void *buf, bool kernel)
{
	uint8_t *tmp = (uint8_t *)buf;
	uint64_t b0, nb;
	int err;

	if (!size)
		return 0;
	if (off >= FS_MAX_FILE_SIZE || size > FS_MAX_FILE_SIZE - off)
		return -EFBIG;
	b0 = off >> FS_BSHIFT;
	nb = ((off + size - 1) >> FS_BSHIFT) - b0 + 1;
	err = write_prepare(fs, ip, off, size, b0, nb, kernel);
	if (err)
		return err;
	if ((off | size) & (FS_BSIZE - 1)) {
		err = bounce_alloc(nb, &tmp);
		if (!err)
			err = write_edges(fs, ip, off, size, tmp, b0, nb);
		if (err)
			goto out;
		memcpy(tmp + (off & (FS_BSIZE - 1)), buf, size);
		bounce_zero_past_eof(ip, off, size, tmp, b0, nb);
	}
	err = write_commit(fs, ip, off, size, tmp, b0, nb, kernel);
out:
	if (tmp != buf)
		free(tmp);
	return err ? err : (ssize_t)size;
}

/* Zeroes bytes [from, end of its block) of the block holding from. */
int fs_zero_block_tail(struct fs *fs, struct fs_inode *ip, uint64_t from)
{
	uint64_t lblk = from >> FS_BSHIFT;
	struct fs_extent e;
	uint8_t *tmp;
	bool found;
	int err;

	if (!(from & (FS_BSIZE - 1)))
		return 0;
	err = fs_ext_map(fs, ip, lblk, &e, &found);
	if (err || !found || (e.flags & FS_EXT_UNWRITTEN))
		return err;
	err = bounce_alloc(1, &tmp);
	if (err)
		return err;
	err = fs_bdev_read(fs->bdev, e.pblk + (lblk - e.lblk), 1, tmp);
	if (!err) {
		memset(tmp + (from & (FS_BSIZE - 1)), 0,
		       FS_BSIZE - (from & (FS_BSIZE - 1)));
		err = fs_bdev_write(fs->bdev, e.pblk + (lblk - e.lblk), 1, tmp);
	}
	free(tmp);
	return err;
}

/*
 * Sets the size and frees the blocks past it, in bounded transactions; a
 * truncate that needs more than one sits on the orphan list meanwhile.
 */
int fs_file_truncate(struct fs *fs, struct fs_inode *ip, uint64_t size)
{
	uint64_t first = (size + FS_BSIZE - 1) >> FS_BSHIFT;
	struct fs_tx *tx;
	bool more = true, shrink = size <= ip->d.size;
	int err = 0;

	if (size > FS_MAX_FILE_SIZE)
		return -EFBIG;
	/* Shrinking leaves the old bytes past the new end alone: if the
	 * truncate does not commit before a crash they are still the file's. */
	if (!shrink)
		err = fs_file_prepare_grow(fs, ip);
	if (!shrink && !err)
		err = fs_zero_block_tail(fs, ip, ip->d.size);
	while (!err && more) {
		err = fs_tx_begin(fs, &tx);
		if (err)
			break;
		if (size < ip->d.size)
			ip->shrink_seq = tx->seq;
		else
			fs_tx_ordered(tx);      /* the zeroed tail becomes file */
		ip->d.size = size;
		fs_wb_acked(ip);        /* a size set: nothing past it to cut */
		/* cut back to what was stored: writes may go on (fs_write) */
		if (ip->wb_hole && size <= ip->wb_hole - 1)
			__atomic_store_n(&ip->wb_hole, 0, __ATOMIC_RELAXED);
		more = false;
		if (shrink)
			err = fs_ext_remove(fs, tx, ip, first, UINT64_MAX,
					    FS_EXT_REMOVE_BATCH, &more);
		if (!err && more)
			err = fs_orphan_add(fs, tx, ip);
		else if (!err && ip->orphan && ip->d.nlink > 0)
			err = fs_orphan_del(fs, tx, ip);
		if (fs_inode_dirty(fs, tx, ip) && !err)
			err = -EIO;
		fs_tx_end(fs, tx);
	}
	return err;
}

uint64_t fs_fh_new(struct fs *fs)
{
	return __atomic_add_fetch(&fs->next_fh, 1, __ATOMIC_RELAXED);
}

/* O_TRUNC: empty, mtime and ctime now.  Caller holds ip->lock (write). */
static int open_truncate(struct fs *fs, struct fs_inode *ip)
{
	struct fs_tx *tx;
	int err = fs_file_truncate(fs, ip, 0);

	if (!err)
		err = fs_tx_begin(fs, &tx);
	if (err)
		return err;
	fs_inode_touch(ip, false, true, true);
	err = fs_inode_dirty(fs, tx, ip);
	fs_tx_end(fs, tx);
	return err;
}

int fs_file_open(struct fs *fs, struct fs_inode *ip, int flags, uint64_t *fh)
{
	int err;

	if (S_ISDIR(ip->d.mode) && (flags & O_ACCMODE) != O_RDONLY)
		return -EISDIR;
	if (fs_iflags_check_open(ip, flags))
		return -EPERM;
	/* Linux truncates on O_TRUNC whatever the access mode (the kernel
	 * has checked write permission already) and shows the file empty:
	 * so must the file be. */
	if ((flags & O_TRUNC) && S_ISREG(ip->d.mode)) {
		pthread_rwlock_wrlock(&ip->lock);
		err = open_truncate(fs, ip);
		pthread_rwlock_unlock(&ip->lock);
		if (err)
			return err;
	}
	fs_inode_ref(fs, ip, 0, 1);
	*fh = fs_fh_new(fs);
	return 0;
}
