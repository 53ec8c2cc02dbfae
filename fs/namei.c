/*
 * namei: the namespace operations of fs.h (lookup, create, link, unlink,
 * rename, readdir).
 *
 * Locking: a directory's names are guarded by its inode lock (read for
 * lookup and readdir, write to change them), so work in different
 * directories proceeds in parallel.  Every operation here holds
 * fs->ns_lock for reading; rename (rename.c) holds it for writing, which
 * keeps the tree still while it checks for loops.  When an operation needs
 * several inode locks it takes them in ascending inode order (fs_lockset),
 * and lookup and readdir drop the directory's lock before they take a
 * child's, so no two threads ever wait for each other's inode locks.
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
/* "." of an inode of any type: how the kernel finds an inode again from a
 * file handle once it has forgotten it (FUSE export support). */
static int lookup_self(struct fs *fs, uint64_t ino, struct fs_attr *attr)
{
	struct fs_inode *ip;
	int err = fs_iget(fs, ino, &ip);

	if (err)
		return err;
	fs_inode_ref(fs, ip, 1, 0);
	pthread_rwlock_rdlock(&ip->lock);
	fs_inode_to_attr(fs, ip, attr);
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return 0;
}

int fs_lookup(struct fs *fs, uint64_t parent, const char *name,
	      struct fs_attr *attr)
{
	struct fs_inode *dp, *ip;
	uint64_t ino, key = 0;
	int err;

	err = name_check(name);
	if (err)
		return err;
	if (!strcmp(name, "."))
		return lookup_self(fs, parent, attr);
	err = dir_get(fs, parent, &dp);
	if (err)
		return err;
	pthread_rwlock_rdlock(&fs->ns_lock);
	pthread_rwlock_rdlock(&dp->lock);
	if (!strcmp(name, ".."))
		ino = dp->d.parent;
	else
		err = dp->d.nlink ? fs_dir_lookup(fs, dp, name, &ino, &key) :
				    -ENOENT;
	/* The reference is taken while the name still names the inode. */
	if (!err)
		err = fs_iget(fs, ino, &ip);
	if (!err)
		fs_inode_ref(fs, ip, 1, 0);
	if (!err && key)
		fs_inode_named(fs, ip, dp->ino, key);
	pthread_rwlock_unlock(&dp->lock);
	if (!err) {
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

/* Caller holds dp->lock (write); a transaction is open. */
/* A new inode as dp's child: owner, setgid and ACL inheritance, umask. */
static int create_inode(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
			const struct new_node *nn, struct fs_inode **out)
{
	mode_t mode = nn->mode;
	gid_t gid = nn->ctx->gid;
	struct fs_inode *ip;
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
	if (S_ISDIR(mode)) {
		ip->d.nlink = 2;
		ip->d.parent = dp->ino;
	}
	err = S_ISLNK(mode) ? 1 : fs_acl_inherit(fs, tx, dp, ip);
	if (err == 1) {
		ip->d.mode &= ~(nn->ctx->umask & 0777);
		err = 0;
	}
	if (err) {
		fs_inode_abort_new(fs, tx, ip);
		return err;
	}
	*out = ip;
	return 0;
}

static int create_locked(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
			 const char *name, const struct new_node *nn,
			 struct fs_inode **out)
{
	mode_t mode = nn->mode;
	struct fs_inode *ip;
	uint64_t key;
	ssize_t n;
	int err;

	err = create_inode(fs, tx, dp, nn, &ip);
	if (err)
		return err;
	err = fs_dir_add(fs, tx, dp, name, ip->ino, mode_to_dt(mode), &key);
	if (!err && nn->target) {
		n = fs_file_write(fs, ip, 0, strlen(nn->target), nn->target,
				  false);
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
	fs_inode_named(fs, ip, dp->ino, key);
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
	pthread_rwlock_rdlock(&fs->ns_lock);
	pthread_rwlock_wrlock(&dp->lock);
	if (!dp->d.nlink)
		err = -ENOENT;
	else if (fs_dir_lookup(fs, dp, name, &ino, NULL) == 0)
		err = -EEXIST;
	if (!err)
		err = fs_iflags_check(dp, FS_CHANGE_ADD);
	if (!err)
		err = fs_meta_check(fs, FS_META_FLOOR_CREATE);
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

/* An existing name, without O_EXCL: open(2) of what it names.  The lookup
 * reference stays with the caller unless this fails. */
static int open_existing(struct fs *fs, uint64_t parent, const char *name,
			 int flags, struct fs_attr *attr, uint64_t *fh)
{
	struct fs_inode *ip;
	int err = fs_lookup(fs, parent, name, attr);

	if (err)
		return err;
	/* Our lookup reference keeps it in the cache. */
	ip = fs_icache_find(fs, attr->ino);
	FS_ASSERT(ip);
	err = S_ISDIR(ip->d.mode) ? -EISDIR : fs_file_open(fs, ip, flags, fh);
	if (!err) {
		pthread_rwlock_rdlock(&ip->lock);
		fs_inode_to_attr(fs, ip, attr);
		pthread_rwlock_unlock(&ip->lock);
	} else {
		fs_inode_ref(fs, ip, -1, 0);
	}
	fs_iput(fs, ip);
	return err;
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
		err = open_existing(fs, parent, name, flags, attr, fh);
		if (err != -ENOENT)
			return err;
	}
	if (!err)
		*fh = fs_fh_new(fs);
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

/* What unlink (dir false) or rmdir may remove from dp. */
/* In Linux's order (may_delete, then the filesystem's rmdir): the flags
 * first, so a non-empty directory in an immutable one is EPERM. */
static int remove_check(const struct fs_inode *dp, const struct fs_inode *ip,
			bool dir)
{
	if (fs_iflags_check(dp, FS_CHANGE_REMOVE) ||
	    fs_iflags_check(ip, FS_CHANGE_NAME))
		return -EPERM;
	if (dir && !S_ISDIR(ip->d.mode))
		return -ENOTDIR;
	if (!dir && S_ISDIR(ip->d.mode))
		return -EISDIR;
	if (dir && ip->d.map_depth)
		return -ENOTEMPTY;
	return 0;
}

/* Caller holds dp->lock and ip->lock. */
static int remove_apply(struct fs *fs, struct fs_inode *dp,
			struct fs_inode *ip, const char *name, bool dir)
{
	struct fs_tx *tx;
	int err;

	err = fs_meta_check(fs, FS_META_FLOOR_REMOVE);
	if (!err)
		err = fs_tx_begin(fs, &tx);
	if (err)
		return err;
	/* The orphan insert is what may allocate: before anything else. */
	err = link_drop(fs, tx, ip);
	if (!err)
		err = fs_dir_remove(fs, tx, dp, name);
	if (!err) {
		if (dir)
			dp->d.nlink--;
		fs_inode_touch(dp, false, true, true);
		err = fs_inode_dirty(fs, tx, dp);
	}
	fs_tx_end(fs, tx);
	return err;
}

/*
 * Finds name in dp and write-locks dp and the inode it names, in inode
 * order; dp's lock is dropped in between, so the name is looked up again
 * and the whole dance repeats if it changed meanwhile.
 */
static int lock_entry(struct fs *fs, struct fs_inode *dp, const char *name,
		      struct fs_lockset *ls, struct fs_inode **out)
{
	struct fs_inode *ip;
	uint64_t ino, again;
	int err;

	for (;;) {
		pthread_rwlock_rdlock(&dp->lock);
		err = fs_dir_lookup(fs, dp, name, &ino, NULL);
		if (!err)
			err = fs_iget(fs, ino, &ip);
		pthread_rwlock_unlock(&dp->lock);
		if (err)
			return err;
		ls->n = 0;
		fs_lockset_add(ls, dp);
		fs_lockset_add(ls, ip);
		fs_lockset_lock(ls);
		err = fs_dir_lookup(fs, dp, name, &again, NULL);
		if (!err && again == ino) {
			*out = ip;
			return 0;
		}
		fs_lockset_unlock(ls);
		fs_iput(fs, ip);
		if (err)
			return err;
	}
}

static int remove_entry(struct fs *fs, uint64_t parent, const char *name,
			bool dir)
{
	struct fs_lockset ls = { .n = 0 };
	struct fs_inode *dp, *ip = NULL;
	int err;

	err = name_check(name);
	if (!err && name_is_dot(name))
		err = !dir ? -EISDIR : strcmp(name, ".") ? -ENOTEMPTY : -EINVAL;
	if (!err)
		err = dir_get(fs, parent, &dp);
	if (err)
		return err;
	pthread_rwlock_rdlock(&fs->ns_lock);
	err = lock_entry(fs, dp, name, &ls, &ip);
	if (!err) {
		err = remove_check(dp, ip, dir);
		if (!err)
			err = remove_apply(fs, dp, ip, name, dir);
		fs_lockset_unlock(&ls);
	}
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
/* Caller holds dp->lock and ip->lock. */
static int link_apply(struct fs *fs, struct fs_inode *dp, struct fs_inode *ip,
		      const char *newname, struct fs_attr *attr)
{
	struct fs_tx *tx;
	uint64_t x, key;
	int err;

	if (!dp->d.nlink || !ip->d.nlink)
		return -ENOENT;
	if (ip->d.nlink >= 65000)
		return -EMLINK;
	if (!fs_dir_lookup(fs, dp, newname, &x, NULL))
		return -EEXIST;
	if (fs_iflags_check(dp, FS_CHANGE_ADD) ||
	    fs_iflags_check(ip, FS_CHANGE_NAME))
		return -EPERM;
	err = fs_meta_check(fs, FS_META_FLOOR_CREATE);
	if (!err)
		err = fs_tx_begin(fs, &tx);
	if (!err) {
		err = fs_dir_add(fs, tx, dp, newname, ip->ino,
				 mode_to_dt(ip->d.mode), &key);
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
		fs_inode_named(fs, ip, dp->ino, key);
		fs_inode_to_attr(fs, ip, attr);
	}
	return err;
}

int fs_link(struct fs *fs, uint64_t ino, uint64_t newparent,
	    const char *newname, struct fs_attr *attr)
{
	struct fs_lockset ls = { .n = 0 };
	struct fs_inode *dp = NULL, *ip = NULL;
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
	pthread_rwlock_rdlock(&fs->ns_lock);
	fs_lockset_add(&ls, dp);
	fs_lockset_add(&ls, ip);
	fs_lockset_lock(&ls);
	err = link_apply(fs, dp, ip, newname, attr);
	fs_lockset_unlock(&ls);
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

/*
 * readdir reads a batch of entries under the directory's read lock (taking,
 * in plus mode, each child's reference while its name is still there), then
 * drops the lock and delivers them, so that it never holds the directory's
 * lock while it takes a child's.
 */
#define READDIR_BATCH 32

struct rd_ent {
	char name[FS_NAME_MAX + 1];
	uint64_t ino;
	uint64_t next;                  /* cookie after this entry */
	uint8_t dt;
	struct fs_inode *ip;            /* plus mode: referenced */
};

static int rd_fill_batch(struct fs *fs, struct fs_inode *dp, uint64_t *cookie,
			 bool plus, struct rd_ent *b, int *n)
{
	uint64_t key;
	int err = 0;

	*n = 0;
	pthread_rwlock_rdlock(&dp->lock);
	while (*n < READDIR_BATCH) {
		struct rd_ent *e = &b[*n];

		err = fs_dir_next(fs, dp, *cookie, e->name, &e->ino, &e->dt,
				  &key);
		if (err)
			break;
		e->ip = NULL;
		if (plus) {
			err = fs_iget(fs, e->ino, &e->ip);
			if (err)
				break;
			fs_inode_ref(fs, e->ip, 1, 0);
			fs_inode_named(fs, e->ip, dp->ino, key);
		}
		e->next = *cookie = key + 1;
		(*n)++;
	}
	pthread_rwlock_unlock(&dp->lock);
	return err;
}

/* Gives back the references of entries that were not delivered. */
static void rd_drop(struct fs *fs, struct rd_ent *b, int from, int n)
{
	for (; from < n; from++) {
		if (!b[from].ip)
			continue;
		fs_inode_ref(fs, b[from].ip, -1, 0);
		fs_iput(fs, b[from].ip);
	}
}

/* Delivers b[0..n); 1 when the filler is full. */
static int rd_deliver(struct fs *fs, struct rd_ent *b, int n,
		      fs_filldir_t fill, void *arg)
{
	int i;

	for (i = 0; i < n; i++) {
		struct fs_attr a = { .ino = b[i].ino,
				     .mode = dt_to_mode(b[i].dt) };

		if (b[i].ip) {
			pthread_rwlock_rdlock(&b[i].ip->lock);
			fs_inode_to_attr(fs, b[i].ip, &a);
			pthread_rwlock_unlock(&b[i].ip->lock);
		}
		if (fill(arg, b[i].name, &a, b[i].next)) {
			rd_drop(fs, b, i, n);
			return 1;
		}
		if (b[i].ip)
			fs_iput(fs, b[i].ip);
	}
	return 0;
}

/* "." and ".." carry only their inode and type, and no reference. */
static int rd_dots(struct fs_inode *dp, uint64_t cookie, fs_filldir_t fill,
		   void *arg)
{
	struct fs_attr a = { .mode = S_IFDIR };

	a.ino = dp->ino;
	if (cookie == 0 && fill(arg, ".", &a, 1))
		return 1;
	a.ino = dp->d.parent;
	if (cookie <= 1 && fill(arg, "..", &a, 2))
		return 1;
	return 0;
}

int fs_readdir(struct fs *fs, uint64_t ino, uint64_t fh, uint64_t cookie,
	       bool plus, fs_filldir_t fill, void *arg)
{
	struct fs_inode *dp;
	struct rd_ent *b;
	int err, n;

	err = dir_get(fs, ino, &dp);
	if (err)
		return err;
	b = malloc(READDIR_BATCH * sizeof(*b));
	if (!b) {
		fs_iput(fs, dp);
		return -ENOMEM;
	}
	pthread_rwlock_rdlock(&fs->ns_lock);
	err = rd_dots(dp, cookie, fill, arg);
	if (cookie < 2)
		cookie = 2;
	while (!err) {
		err = rd_fill_batch(fs, dp, &cookie, plus, b, &n);
		if (err && err != -ENOENT)
			rd_drop(fs, b, 0, n);
		else if (rd_deliver(fs, b, n, fill, arg))
			err = 1;
		else if (!err && n < READDIR_BATCH)
			err = -ENOENT;
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	free(b);
	fs_iput(fs, dp);
	return err == -ENOENT || err == 1 ? 0 : err;
}
