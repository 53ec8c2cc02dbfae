/*
 * falloc: fs_fallocate - preallocation (unwritten extents, with or
 * without growing the file), punch hole, zero range.  Same pattern as
 * fs_ops.c: fs_iget, the inode's lock, the layers below, unlock, fs_iput;
 * each step of a large range is a transaction of its own, bounded in
 * size.  (Collapse and insert range never reach a FUSE daemon:
 * docs/DESIGN.md.)
 */
#include <stdlib.h>
#include <linux/falloc.h>
#include "fs_int.h"

/* Zeroes [off, off + len) inside one block, if that block is mapped. */
static int zero_in_block(struct fs *fs, struct fs_inode *ip, uint64_t off,
			 uint64_t len)
{
	uint8_t *tmp;
	ssize_t n;
	int err;

	if (!len)
		return 0;
	tmp = calloc(1, len);
	if (!tmp)
		return -ENOMEM;
	/* Within the file, a plain write of zeros; a hole stays a hole. */
	if (fs_ext_holes(fs, ip, off >> FS_BSHIFT, (off >> FS_BSHIFT) + 1)) {
		free(tmp);
		return 0;
	}
	n = fs_file_write(fs, ip, off, len, tmp, false);
	free(tmp);
	err = n < 0 ? (int)n : 0;
	return err;
}

static int punch_hole(struct fs *fs, struct fs_inode *ip, uint64_t off,
		      uint64_t len)
{
	uint64_t end = off + len, size = ip->d.size, first, last;
	struct fs_tx *tx;
	bool more = true;
	int err = 0;

	if (end > size)
		end = size;
	if (off >= end)
		return 0;
	err = fs_meta_check(fs, FS_META_FLOOR_REMOVE);
	if (err)
		return err;
	first = (off + FS_BSIZE - 1) >> FS_BSHIFT;
	last = end >> FS_BSHIFT;
	if (first > last) {
		err = zero_in_block(fs, ip, off, end - off);
	} else {
		err = zero_in_block(fs, ip, off, (first << FS_BSHIFT) - off);
		if (!err)
			err = zero_in_block(fs, ip, last << FS_BSHIFT,
					    end - (last << FS_BSHIFT));
	}
	ip->d.size = size;      /* zeroing never grows the file */
	while (!err && more && first < last) {
		err = fs_tx_begin(fs, &tx);
		if (err)
			break;
		err = fs_ext_remove(fs, tx, ip, first, last,
				    FS_EXT_REMOVE_BATCH, &more);
		fs_inode_touch(ip, false, true, true);
		if (fs_inode_dirty(fs, tx, ip) && !err)
			err = -EIO;
		fs_tx_end(fs, tx);
	}
	return err;
}

static int prealloc(struct fs *fs, struct fs_inode *ip, uint64_t off,
		    uint64_t len, bool keep_size)
{
	uint64_t from = off >> FS_BSHIFT;
	uint64_t to = (off + len + FS_BSIZE - 1) >> FS_BSHIFT;
	uint64_t chunk, step = 2048;	/* bounds one transaction */
	struct fs_tx *tx;
	int err = 0;

	/* All the room first: one that fails half way (ENOSPC) left the
	 * blocks it had taken in the file, its size unchanged - the space
	 * gone until the file was removed (a tester's find).  btrfs checks
	 * first as well; a writer that takes the room meanwhile can still
	 * make a step fail. */
	err = fs_space_reserve(fs, FS_WRITE_SLACK + fs_ext_holes(fs, ip, from, to),
			       false);
	if (!err && !keep_size && off + len > ip->d.size)
		err = fs_file_prepare_grow(fs, ip);
	if (!err && !keep_size && off + len > ip->d.size)
		err = fs_zero_block_tail(fs, ip, ip->d.size);
	while (!err && from < to) {
		chunk = to - from < step ? to - from : step;
		err = fs_space_reserve(fs, FS_WRITE_SLACK +
				       fs_ext_holes(fs, ip, from, from + chunk),
				       false);
		if (err)
			break;
		err = fs_tx_begin(fs, &tx);
		if (err)
			break;
		err = fs_ext_fill(fs, tx, ip, from, from + chunk, true);
		if (!err && !keep_size && from + chunk == to &&
		    off + len > ip->d.size) {
			ip->d.size = off + len;
			fs_tx_ordered(tx);
		}
		fs_inode_touch(ip, false, !keep_size, true);
		if (fs_inode_dirty(fs, tx, ip) && !err)
			err = -EIO;
		fs_tx_end(fs, tx);
		from += chunk;
	}
	return err;
}

/* FALLOC_FL_ZERO_RANGE: the range's blocks are given back and allocated
 * again unwritten (they read as zeros), the partial blocks at its ends
 * zeroed; without KEEP_SIZE the file grows to cover it. */
static int zero_range(struct fs *fs, struct fs_inode *ip, uint64_t off,
		      uint64_t len, bool keep_size)
{
	int err = punch_hole(fs, ip, off, len);

	return err ? err : prealloc(fs, ip, off, len, keep_size);
}

int fs_fallocate(struct fs *fs, uint64_t ino, int mode, uint64_t off,
		 uint64_t len)
{
	const int punch_zero = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
	struct fs_inode *ip;
	int err;

	if (mode & ~(FALLOC_FL_KEEP_SIZE | punch_zero))
		return -EOPNOTSUPP;
	if ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	if ((mode & punch_zero) == punch_zero)
		return -EOPNOTSUPP;
	if (len == 0)
		return -EINVAL;
	if (off >= FS_MAX_FILE_SIZE || len > FS_MAX_FILE_SIZE - off)
		return -EFBIG;
	err = fs_iget(fs, ino, &ip);
	if (err)
		return err;
	pthread_rwlock_wrlock(&ip->lock);
	if (S_ISDIR(ip->d.mode))
		err = -EISDIR;
	else if (!S_ISREG(ip->d.mode))
		err = -ENODEV;
	else if (fs_iflags_check(ip, (mode & ~FALLOC_FL_KEEP_SIZE) ?
				 FS_CHANGE_DATA : FS_CHANGE_ADD))
		err = -EPERM;   /* vfs_fallocate's rule */
	else if (mode & FALLOC_FL_PUNCH_HOLE)
		err = punch_hole(fs, ip, off, len);
	else if (mode & FALLOC_FL_ZERO_RANGE)
		err = zero_range(fs, ip, off, len, mode & FALLOC_FL_KEEP_SIZE);
	else
		err = prealloc(fs, ip, off, len, mode & FALLOC_FL_KEEP_SIZE);
	fs_wb_acked(ip);                /* a size the caller set: never cut */
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return err;
}
