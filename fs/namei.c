/*
 * namei: the namespace operations of fs.h (lookup, create, link, unlink,
 * rename, readdir).
 *
 * Every operation that changes names holds fs->ns_lock for writing, so
 * namespace changes are serialized (the kernel already serializes them per
 * directory) and lookups and readdir, which hold it for reading, see a
 * consistent tree; the inode locks of the inodes whose attributes change
 * are taken under it, in ascending inode order.
 */
#include <fcntl.h>
#include <string.h>
#include <dirent.h>
#include "fs_int.h"

static int name_check(const char *name)
{
	size_t len = strlen(name);

	if (len == 0)
		return -ENOENT;
	if (len > FS_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

static bool name_is_dot(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..");
}

static uint8_t mode_to_dt(mode_t mode)
{
	return (uint8_t)((mode & S_IFMT) >> 12);
}

static mode_t dt_to_mode(uint8_t dt)
{
	return (mode_t)dt << 12;
}

/* fs_iget of a directory: -ENOTDIR if it is not one. */
static int dir_get(struct fs *fs, uint64_t ino, struct fs_inode **out)
{
	int err = fs_iget(fs, ino, out);

	if (!err && !S_ISDIR((*out)->d.mode)) {
		fs_iput(fs, *out);
		*out = NULL;
		err = -ENOTDIR;
	}
	return err;
}

/* ---- lookup -------------------------------------------------------------- */
int fs_lookup(struct fs *fs, uint64_t parent, const char *name,
	      struct fs_attr *attr)
{
	struct fs_inode *dp, *ip;
	uint64_t ino;
	int err;

	err = name_check(name);
	if (err)
		return err;
	err = dir_get(fs, parent, &dp);
	if (err)
		return err;
	pthread_rwlock_rdlock(&fs->ns_lock);
	if (!strcmp(name, "."))
		ino = dp->ino;
	else if (!strcmp(name, ".."))
		ino = dp->d.parent;
	else
		err = dp->d.nlink ? fs_dir_lookup(fs, dp, name, &ino, NULL) :
				    -ENOENT;
	if (!err)
		err = fs_iget(fs, ino, &ip);
	if (!err) {
		fs_inode_ref(fs, ip, 1, 0);
		pthread_rwlock_rdlock(&ip->lock);
		fs_inode_to_attr(fs, ip, attr);
		pthread_rwlock_unlock(&ip->lock);
		fs_iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	fs_iput(fs, dp);
	return err;
}

/* ---- creation ------------------------------------------------------------ */
struct new_node {
	const struct fs_ctx *ctx;
	mode_t mode;
	dev_t rdev;
	const char *target;     /* symlinks */
	int lookups, opens;     /* references the caller takes */
};

/* Caller holds ns_lock (write) and dp->lock; a transaction is open. */
static int create_locked(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
			 const char *name, const struct new_node *nn,
			 struct fs_inode **out)
{
	mode_t mode = nn->mode;
	gid_t gid = nn->ctx->gid;
	struct fs_inode *ip;
	ssize_t n;
	int err;

	if (dp->d.mode & S_ISGID) {
		gid = dp->d.gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
	}
	err = fs_inode_new(fs, tx, mode, nn->ctx->uid, gid, &ip);
	if (err)
		return err;
	ip->d.rdev = (S_ISCHR(mode) || S_ISBLK(mode)) ? nn->rdev : 0;
	err = S_ISLNK(mode) ? 1 : fs_acl_inherit(fs, tx, dp, ip);
	if (err == 1) {
		ip->d.mode &= ~(nn->ctx->umask & 0777);
		err = 0;
	}
	if (err) {
		fs_inode_abort_new(fs, tx, ip);
		return err;
	}
	if (S_ISDIR(mode)) {
		ip->d.nlink = 2;
		ip->d.parent = dp->ino;
	}
	err = fs_dir_add(fs, tx, dp, name, ip->ino, mode_to_dt(mode));
	if (!err && nn->target) {
		n = fs_file_write(fs, ip, 0, strlen(nn->target), nn->target);
		err = n < 0 ? (int)n : 0;
		if (err)
			(void)fs_dir_remove(fs, tx, dp, name);
	}
	if (err) {
		fs_inode_abort_new(fs, tx, ip);
		return err;
	}
	if (S_ISDIR(mode))
		dp->d.nlink++;
	fs_inode_touch(dp, false, true, true);
	err = fs_inode_dirty(fs, tx, ip);
	if (!err)
		err = fs_inode_dirty(fs, tx, dp);
	fs_inode_ref(fs, ip, nn->lookups, nn->opens);
	*out = ip;
	return err;
}

static int create_node(struct fs *fs, uint64_t parent, const char *name,
		       const struct new_node *nn, struct fs_attr *attr)
{
	struct fs_inode *dp, *ip = NULL;
	struct fs_tx *tx;
	uint64_t ino;
	int err;

	err = name_check(name);
	if (!err && name_is_dot(name))
		err = -EEXIST;
	if (!err && nn->target && strlen(nn->target) > FS_SYMLINK_MAX)
		err = -ENAMETOOLONG;
	if (!err)
		err = dir_get(fs, parent, &dp);
	if (err)
		return err;
	pthread_rwlock_wrlock(&fs->ns_lock);
	pthread_rwlock_wrlock(&dp->lock);
	if (!dp->d.nlink)
		err = -ENOENT;
	else if (fs_dir_lookup(fs, dp, name, &ino, NULL) == 0)
		err = -EEXIST;
	if (!err)
		err = fs_tx_begin(fs, &tx);
	if (!err) {
		err = create_locked(fs, tx, dp, name, nn, &ip);
		fs_tx_end(fs, tx);
	}
	if (ip && attr)
		fs_inode_to_attr(fs, ip, attr);
	pthread_rwlock_unlock(&dp->lock);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (ip)
		fs_iput(fs, ip);
	fs_iput(fs, dp);
	return err;
}

int fs_mknod(struct fs *fs, const struct fs_ctx *ctx, uint64_t parent,
	     const char *name, mode_t mode, dev_t rdev, struct fs_attr *attr)
{
	struct new_node nn = { ctx, mode, rdev, NULL, 1, 0 };

	if (!(mode & S_IFMT))
		nn.mode |= S_IFREG;
	if (S_ISDIR(nn.mode) || S_ISLNK(nn.mode))
		return -EINVAL;
	return create_node(fs, parent, name, &nn, attr);
}

int fs_mkdir(struct fs *fs, const struct fs_ctx *ctx, uint64_t parent,
	     const char *name, mode_t mode, struct fs_attr *attr)
{
	struct new_node nn = { ctx, S_IFDIR | (mode & 07777), 0, NULL, 1, 0 };

	return create_node(fs, parent, name, &nn, attr);
}

int fs_symlink(struct fs *fs, const struct fs_ctx *ctx, const char *target,
	       uint64_t parent, const char *name, struct fs_attr *attr)
{
	struct fs_ctx c = *ctx;
	struct new_node nn = { &c, S_IFLNK | 0777, 0, target, 1, 0 };

	c.umask = 0;
	if (!*target)
		return -ENOENT;
	return create_node(fs, parent, name, &nn, attr);
}

int fs_create(struct fs *fs, const struct fs_ctx *ctx, uint64_t parent,
	      const char *name, mode_t mode, int flags, struct fs_attr *attr,
	      uint64_t *fh)
{
	struct new_node nn = { ctx, S_IFREG | (mode & 07777), 0, NULL, 1, 1 };
	int err;

	for (;;) {
		err = create_node(fs, parent, name, &nn, attr);
		if (err != -EEXIST || (flags & O_EXCL) || name_is_dot(name))
			break;
		/* It exists: open it, as open(2) without O_EXCL does. */
		err = fs_lookup(fs, parent, name, attr);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		if (S_ISDIR(attr->mode)) {
			fs_forget(fs, attr->ino, 1);
			return -EISDIR;
		}
		err = fs_open(fs, attr->ino, flags, fh);
		if (!err)
			err = fs_getattr(fs, attr->ino, attr);
		if (err)
			fs_forget(fs, attr->ino, 1);
		return err;
	}
	if (!err)
		*fh = __atomic_add_fetch(&fs->next_fh, 1, __ATOMIC_RELAXED);
	return err;
}

ssize_t fs_readlink(struct fs *fs, uint64_t ino, char *buf, size_t size)
{
	struct fs_inode *ip;
	ssize_t n;

	n = fs_iget(fs, ino, &ip);
	if (n)
		return n;
	pthread_rwlock_rdlock(&ip->lock);
	n = S_ISLNK(ip->d.mode) ? fs_file_read(fs, ip, 0, size, buf) : -EINVAL;
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return n;
}

/* ---- removal ------------------------------------------------------------- */
/* Drops one link of ip (in a transaction); an unlinked inode is orphaned. */
static int link_drop(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	int err = 0;

	ip->d.nlink = S_ISDIR(ip->d.mode) ? 0 : ip->d.nlink - 1;
	fs_inode_touch(ip, false, false, true);
	if (ip->d.nlink == 0)
		err = fs_orphan_add(fs, tx, ip);
	if (!err)
		err = fs_inode_dirty(fs, tx, ip);
	return err;
}

static int remove_entry(struct fs *fs, uint64_t parent, const char *name,
			bool dir)
{
	struct fs_inode *dp, *ip = NULL;
	struct fs_lockset ls = { .n = 0 };
	struct fs_tx *tx;
	uint64_t ino;
	int err;

	err = name_check(name);
	if (!err && name_is_dot(name))
		err = !dir ? -EISDIR : strcmp(name, ".") ? -ENOTEMPTY : -EINVAL;
	if (!err)
		err = dir_get(fs, parent, &dp);
	if (err)
		return err;
	pthread_rwlock_wrlock(&fs->ns_lock);
	err = fs_dir_lookup(fs, dp, name, &ino, NULL);
	if (!err)
		err = fs_iget(fs, ino, &ip);
	if (err)
		goto out;
	if (dir && !S_ISDIR(ip->d.mode))
		err = -ENOTDIR;
	else if (!dir && S_ISDIR(ip->d.mode))
		err = -EISDIR;
	else if (dir && ip->d.map_depth)
		err = -ENOTEMPTY;
	if (err)
		goto out;
	fs_lockset_add(&ls, dp);
	fs_lockset_add(&ls, ip);
	fs_lockset_lock(&ls);
	err = fs_tx_begin(fs, &tx);
	if (!err) {
		err = fs_dir_remove(fs, tx, dp, name);
		if (!err && dir)
			dp->d.nlink--;
		fs_inode_touch(dp, false, true, true);
		if (!err)
			err = link_drop(fs, tx, ip);
		if (!err)
			err = fs_inode_dirty(fs, tx, dp);
		fs_tx_end(fs, tx);
	}
	fs_lockset_unlock(&ls);
out:
	pthread_rwlock_unlock(&fs->ns_lock);
	if (ip)
		fs_iput(fs, ip);
	fs_iput(fs, dp);
	return err;
}

int fs_unlink(struct fs *fs, uint64_t parent, const char *name)
{
	return remove_entry(fs, parent, name, false);
}

int fs_rmdir(struct fs *fs, uint64_t parent, const char *name)
{
	return remove_entry(fs, parent, name, true);
}

/* ---- link ---------------------------------------------------------------- */
int fs_link(struct fs *fs, uint64_t ino, uint64_t newparent,
	    const char *newname, struct fs_attr *attr)
{
	struct fs_inode *dp = NULL, *ip = NULL;
	struct fs_lockset ls = { .n = 0 };
	struct fs_tx *tx;
	uint64_t x;
	int err;

	err = name_check(newname);
	if (!err && name_is_dot(newname))
		err = -EEXIST;
	if (!err)
		err = fs_iget(fs, ino, &ip);
	if (!err && S_ISDIR(ip->d.mode))
		err = -EPERM;
	if (!err)
		err = dir_get(fs, newparent, &dp);
	if (err)
		goto out;
	pthread_rwlock_wrlock(&fs->ns_lock);
	if (!dp->d.nlink || !ip->d.nlink)
		err = -ENOENT;
	else if (ip->d.nlink >= 65000)
		err = -EMLINK;
	else if (!fs_dir_lookup(fs, dp, newname, &x, NULL))
		err = -EEXIST;
	if (err)
		goto unlock;
	fs_lockset_add(&ls, dp);
	fs_lockset_add(&ls, ip);
	fs_lockset_lock(&ls);
	err = fs_tx_begin(fs, &tx);
	if (!err) {
		err = fs_dir_add(fs, tx, dp, newname, ip->ino,
				 mode_to_dt(ip->d.mode));
		if (!err) {
			ip->d.nlink++;
			fs_inode_touch(ip, false, false, true);
			fs_inode_touch(dp, false, true, true);
			err = fs_inode_dirty(fs, tx, ip);
		}
		if (!err)
			err = fs_inode_dirty(fs, tx, dp);
		fs_tx_end(fs, tx);
	}
	if (!err) {
		fs_inode_ref(fs, ip, 1, 0);
		fs_inode_to_attr(fs, ip, attr);
	}
	fs_lockset_unlock(&ls);
unlock:
	pthread_rwlock_unlock(&fs->ns_lock);
out:
	if (dp)
		fs_iput(fs, dp);
	if (ip)
		fs_iput(fs, ip);
	return err;
}

/* ---- readdir ------------------------------------------------------------- */
int fs_opendir(struct fs *fs, uint64_t ino, uint64_t *fh)
{
	struct fs_inode *dp;
	int err = dir_get(fs, ino, &dp);

	if (!err) {
		*fh = 0;
		fs_iput(fs, dp);
	}
	return err;
}

int fs_releasedir(struct fs *fs, uint64_t ino, uint64_t fh)
{
	return 0;
}

int fs_fsyncdir(struct fs *fs, uint64_t ino, int datasync)
{
	return fs_journal_sync(fs);
}

/* Delivers one entry; 1 when the filler is full. */
static int readdir_one(struct fs *fs, const char *name, uint64_t ino,
		       uint8_t dt, uint64_t next, bool plus,
		       fs_filldir_t fill, void *arg)
{
	struct fs_attr a = { .ino = ino, .mode = dt_to_mode(dt) };
	struct fs_inode *ip;
	int err;

	if (!plus || name_is_dot(name))
		return fill(arg, name, &a, next) ? 1 : 0;
	err = fs_iget(fs, ino, &ip);
	if (err)
		return err;
	pthread_rwlock_rdlock(&ip->lock);
	fs_inode_to_attr(fs, ip, &a);
	pthread_rwlock_unlock(&ip->lock);
	fs_inode_ref(fs, ip, 1, 0);
	if (fill(arg, name, &a, next)) {
		fs_inode_ref(fs, ip, -1, 0);
		fs_iput(fs, ip);
		return 1;
	}
	fs_iput(fs, ip);
	return 0;
}

int fs_readdir(struct fs *fs, uint64_t ino, uint64_t fh, uint64_t cookie,
	       bool plus, fs_filldir_t fill, void *arg)
{
	char name[FS_NAME_MAX + 1];
	struct fs_inode *dp;
	uint64_t cino, key;
	uint8_t dt;
	int err;

	err = dir_get(fs, ino, &dp);
	if (err)
		return err;
	pthread_rwlock_rdlock(&fs->ns_lock);
	if (cookie == 0)
		err = readdir_one(fs, ".", dp->ino, DT_DIR, 1, plus, fill, arg);
	if (!err && cookie <= 1)
		err = readdir_one(fs, "..", dp->d.parent, DT_DIR, 2, plus, fill,
				  arg);
	if (cookie < 2)
		cookie = 2;
	while (!err) {
		err = fs_dir_next(fs, dp, cookie, name, &cino, &dt, &key);
		if (err)
			break;
		cookie = key + 1;
		err = readdir_one(fs, name, cino, dt, cookie, plus, fill, arg);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	fs_iput(fs, dp);
	return err == -ENOENT || err == 1 ? 0 : err;
}
