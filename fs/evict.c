/*
 * evict: the end of an inode's life (Linux's iput_final / evict_inode, and
 * ext4's orphan.c).
 *
 *   fs_iput                  drops a reference; the last use of an
 *                            unlinked inode frees it on disk
 *   fs_orphans_process       at mount: frees what a crash left on the
 *                            orphan list, finishes interrupted truncates
 *   fs_inode_abort_new       undoes an inode whose name could not be added
 *
 * Freeing takes the inode's blocks (file.c's extents, dir.c's name tree),
 * its extended attributes and its number, in bounded transactions; until
 * the last one the inode stays on the orphan list, so a crash in between
 * is finished at the next mount.  This file sits above file, dir and
 * xattr, which is why fs_iput lives here and not with the inode cache
 * (inode.c).
 *
 * Caller of fs_iput holds no handle and no inode lock (freeing takes both).
 */
#include "fs_int.h"

/* Frees the blocks of ip in bounded transactions, then the inode itself. */
static int inode_free(struct fs *fs, struct fs_inode *ip)
{
	struct fs_tx *tx;
	bool more = true;
	int err = 0;

	pthread_rwlock_wrlock(&ip->lock);
	while (more && !err) {
		err = fs_tx_begin(fs, &tx);
		if (err)
			break;
		if (S_ISDIR(ip->d.mode)) {
			err = fs_dir_destroy(fs, tx, ip);
			more = false;
		} else if (S_ISREG(ip->d.mode) || S_ISLNK(ip->d.mode)) {
			err = fs_ext_remove(fs, tx, ip, 0, UINT64_MAX,
					    FS_EXT_REMOVE_BATCH, &more);
		} else {
			more = false;   /* FIFO, socket, device: no blocks */
		}
		if (!err && !more)
			err = fs_xattr_destroy(fs, tx, ip);
		if (!err && !more)
			err = fs_orphan_del(fs, tx, ip);
		if (!err && !more)
			err = fs_inode_delete(fs, tx, ip);
		else if (!err)
			err = fs_inode_dirty(fs, tx, ip);
		fs_tx_end(fs, tx);
	}
	pthread_rwlock_unlock(&ip->lock);
	if (err)
		fs_log(LOG_ERR, "freeing inode %llu failed (%d); it "
		       "stays on the orphan list",
		       (unsigned long long)ip->ino, err);
	return err;
}

void fs_iput(struct fs *fs, struct fs_inode *ip)
{
	if (!fs_inode_unref(fs, ip))
		return;
	(void)inode_free(fs, ip);
	fs_inode_unref_freed(fs, ip);
}

/* Frees (or finishes truncating) every inode a crash left on the list. */
int fs_orphans_process(struct fs *fs)
{
	struct fs_inode *ip;
	uint64_t ino, next = 0;
	int err;

	for (;;) {
		err = fs_orphan_next(fs, next, &ino);
		if (err == -ENOENT)
			return 0;
		if (err)
			return err;
		next = ino + 1;
		err = fs_iget(fs, ino, &ip);
		if (err)
			return err;
		ip->orphan = true;
		if (ip->d.nlink == 0) {
			fs->orphans_freed++;
			fs_iput(fs, ip);
			continue;
		}
		err = fs_file_truncate(fs, ip, ip->d.size);
		fs_iput(fs, ip);
		if (err)
			return err;
	}
}

void fs_inode_abort_new(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	bool more;

	(void)fs_ext_remove(fs, tx, ip, 0, UINT64_MAX, INT32_MAX, &more);
	(void)fs_xattr_destroy(fs, tx, ip);
	(void)fs_inode_delete(fs, tx, ip);
	fs_inode_unref_freed(fs, ip);
}
