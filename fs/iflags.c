/*
 * iflags: the inode flags of chattr/lsattr - immutable, append-only,
 * nodump (FS_IOC_GETFLAGS/SETFLAGS values, Linux's FS_*_FL) - kept in the
 * inode's flags word (FS_IFLAG_*, FORMAT.md), and the rules the kernel
 * would apply itself if FUSE could tell it (IS_IMMUTABLE, IS_APPEND): a
 * FUSE inode has neither, so every operation that changes an inode or a
 * directory asks fs_iflags_check under the inode's lock.
 *
 *   immutable    nothing changes: data, attributes, names, xattrs,
 *                a directory's entries
 *   append-only  data only grows at the end (opened with O_APPEND, no
 *                truncate, no punch); attributes, names and xattrs stay;
 *                a directory gains entries and loses none
 *
 * Who may set them is the kernel's check (fileattr_set_prepare: the owner,
 * CAP_LINUX_IMMUTABLE for immutable and append-only).
 */
#include <fcntl.h>
#include <linux/fs.h>
#include "fs_int.h"

static const struct { uint32_t disk; unsigned fl; } iflag_map[] = {
	{ FS_IFLAG_IMMUTABLE, FS_IMMUTABLE_FL },
	{ FS_IFLAG_APPEND, FS_APPEND_FL },
	{ FS_IFLAG_NODUMP, FS_NODUMP_FL },
};
#define IFLAG_N (sizeof(iflag_map) / sizeof(iflag_map[0]))

int fs_iflags_check(const struct fs_inode *ip, enum fs_change what)
{
	if (ip->d.flags & FS_IFLAG_IMMUTABLE)
		return -EPERM;
	if ((ip->d.flags & FS_IFLAG_APPEND) && what != FS_CHANGE_ADD)
		return -EPERM;
	return 0;
}

int fs_iflags_check_open(const struct fs_inode *ip, int flags)
{
	bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);

	if (!writes)
		return 0;
	if ((flags & O_APPEND) && !(flags & O_TRUNC))
		return fs_iflags_check(ip, FS_CHANGE_ADD);
	return fs_iflags_check(ip, FS_CHANGE_DATA);
}

int fs_getflags(struct fs *fs, uint64_t ino, unsigned *out)
{
	struct fs_inode *ip;
	int err = fs_iget(fs, ino, &ip);
	size_t i;

	if (err)
		return err;
	*out = 0;
	pthread_rwlock_rdlock(&ip->lock);
	for (i = 0; i < IFLAG_N; i++)
		if (ip->d.flags & iflag_map[i].disk)
			*out |= iflag_map[i].fl;
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return 0;
}

/* Caller holds ip->lock (write). */
static int iflags_set_locked(struct fs *fs, struct fs_inode *ip, unsigned fl)
{
	struct fs_tx *tx;
	size_t i;
	int err = fs_tx_begin(fs, &tx);

	if (err)
		return err;
	for (i = 0; i < IFLAG_N; i++) {
		ip->d.flags &= ~iflag_map[i].disk;
		if (fl & iflag_map[i].fl)
			ip->d.flags |= iflag_map[i].disk;
	}
	fs_inode_touch(ip, false, false, true);
	err = fs_inode_dirty(fs, tx, ip);
	fs_tx_end(fs, tx);
	return err;
}

int fs_setflags(struct fs *fs, uint64_t ino, unsigned fl)
{
	struct fs_inode *ip;
	size_t i;
	unsigned known = 0;
	int err;

	for (i = 0; i < IFLAG_N; i++)
		known |= iflag_map[i].fl;
	if (fl & ~known)
		return -EOPNOTSUPP;
	if (fs->rdonly)
		return -EROFS;
	err = fs_iget(fs, ino, &ip);
	if (err)
		return err;
	pthread_rwlock_wrlock(&ip->lock);
	err = iflags_set_locked(fs, ip, fl);
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return err;
}
