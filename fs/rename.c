/*
 * rename: fs_rename with RENAME_NOREPLACE, RENAME_EXCHANGE and
 * RENAME_WHITEOUT.
 *
 * Under fs->ns_lock (write), so the tree cannot change while the loop
 * check walks parent pointers.  All directory entry changes of one rename
 * are in one transaction: after a crash the name is at the old place or
 * the new one, never lost or doubled.
 */
#include <string.h>
#include "fs_int.h"

struct rn {
	struct fs_inode *sdp, *ddp;     /* source and destination parents */
	struct fs_inode *src, *dst;     /* dst: the entry being replaced */
	const char *name, *newname;
	unsigned flags;
	uid_t uid;                      /* owner of a whiteout */
	gid_t gid;
};

static uint8_t mode_dt(mode_t mode)
{
	return (uint8_t)((mode & S_IFMT) >> 12);
}

/* Is dir ino (being moved) an ancestor of (or equal to) dp? */
static int rn_is_ancestor(struct fs *fs, uint64_t ino, struct fs_inode *dp)
{
	uint64_t cur = dp->ino, next;
	struct fs_inode *ip;
	int err, depth = 0;

	while (cur != FS_ROOT_INO) {
		if (cur == ino)
			return 1;
		if (++depth > 100000)
			return -ELOOP;
		err = fs_iget(fs, cur, &ip);
		if (err)
			return err;
		next = ip->d.parent;
		fs_iput(fs, ip);
		cur = next;
	}
	return ino == FS_ROOT_INO;
}

static int rn_check(struct fs *fs, struct rn *r)
{
	bool sdir = S_ISDIR(r->src->d.mode);
	int err;

	if (sdir && r->sdp != r->ddp) {
		err = rn_is_ancestor(fs, r->src->ino, r->ddp);
		if (err)
			return err < 0 ? err : -EINVAL;
	}
	if (!r->dst)
		return (r->flags & RENAME_EXCHANGE) ? -ENOENT : 0;
	if (r->flags & RENAME_NOREPLACE)
		return -EEXIST;
	if (r->flags & RENAME_EXCHANGE) {
		if (S_ISDIR(r->dst->d.mode) && r->sdp != r->ddp) {
			err = rn_is_ancestor(fs, r->dst->ino, r->sdp);
			if (err)
				return err < 0 ? err : -EINVAL;
		}
		return 0;
	}
	if (sdir && !S_ISDIR(r->dst->d.mode))
		return -ENOTDIR;
	if (!sdir && S_ISDIR(r->dst->d.mode))
		return -EISDIR;
	if (S_ISDIR(r->dst->d.mode) && r->dst->d.map_depth)
		return -ENOTEMPTY;
	return 0;
}

/* Moves directory ip from parent `from` to parent `to`. */
static void rn_reparent(struct fs_inode *ip, struct fs_inode *from,
			struct fs_inode *to)
{
	if (!S_ISDIR(ip->d.mode) || from == to)
		return;
	from->d.nlink--;
	to->d.nlink++;
	ip->d.parent = to->ino;
}

static int rn_exchange(struct fs *fs, struct fs_tx *tx, struct rn *r)
{
	int err;

	err = fs_dir_set(fs, tx, r->sdp, r->name, r->dst->ino,
			 mode_dt(r->dst->d.mode));
	if (!err)
		err = fs_dir_set(fs, tx, r->ddp, r->newname, r->src->ino,
				 mode_dt(r->src->d.mode));
	if (err)
		return err;
	rn_reparent(r->src, r->sdp, r->ddp);
	rn_reparent(r->dst, r->ddp, r->sdp);
	fs_inode_touch(r->dst, false, false, true);
	return fs_inode_dirty(fs, tx, r->dst);
}

/*
 * RENAME_WHITEOUT: the old name gets a whiteout (overlayfs's, Linux
 * WHITEOUT_DEV and WHITEOUT_MODE) instead of going away.  Its inode is
 * made before any name changes (rn_move), as the one step that can run
 * out of space: made after the new name was in, an ENOSPC left the inode
 * under both names with one link (a tester's xfstests generic/626, found
 * by fsck).  Then the old name is pointed at it; on an error the new
 * inode is taken back.
 */
static int rn_whiteout_set(struct fs *fs, struct fs_tx *tx, struct rn *r,
			   struct fs_inode *wo)
{
	int err = fs_dir_set(fs, tx, r->sdp, r->name, wo->ino,
			     mode_dt(S_IFCHR));

	if (!err)
		err = fs_inode_dirty(fs, tx, wo);
	return err;
}

static int rn_move(struct fs *fs, struct fs_tx *tx, struct rn *r)
{
	uint8_t dt = mode_dt(r->src->d.mode);
	struct fs_inode *wo = NULL;
	int err = 0;

	if (r->flags & RENAME_WHITEOUT) {
		err = fs_inode_new(fs, tx, S_IFCHR, r->uid, r->gid, &wo);
		if (err)
			return err;
		wo->d.rdev = 0;
	}
	if (r->dst) {
		err = fs_dir_set(fs, tx, r->ddp, r->newname, r->src->ino, dt);
		if (!err && S_ISDIR(r->dst->d.mode))
			r->ddp->d.nlink--;
		if (!err) {
			r->dst->d.nlink = S_ISDIR(r->dst->d.mode) ? 0 :
					  r->dst->d.nlink - 1;
			fs_inode_touch(r->dst, false, false, true);
			if (!r->dst->d.nlink)
				err = fs_orphan_add(fs, tx, r->dst);
		}
		if (!err)
			err = fs_inode_dirty(fs, tx, r->dst);
	} else {
		err = fs_dir_add(fs, tx, r->ddp, r->newname, r->src->ino, dt,
				 NULL);
	}
	if (!err)
		err = wo ? rn_whiteout_set(fs, tx, r, wo) :
			fs_dir_remove(fs, tx, r->sdp, r->name);
	if (!err)
		rn_reparent(r->src, r->sdp, r->ddp);
	if (wo && err)
		fs_inode_abort_new(fs, tx, wo);
	else if (wo)
		fs_iput(fs, wo);
	return err;
}

/* chattr flags (iflags.c); caller holds the locks of all four. */
static int rn_iflags(const struct rn *r)
{
	bool replaces = r->dst && !(r->flags & RENAME_EXCHANGE);

	if (fs_iflags_check(r->sdp, FS_CHANGE_REMOVE) ||
	    fs_iflags_check(r->ddp, replaces ? FS_CHANGE_REMOVE :
			    FS_CHANGE_ADD) ||
	    fs_iflags_check(r->src, FS_CHANGE_NAME) ||
	    (r->dst && fs_iflags_check(r->dst, FS_CHANGE_NAME)))
		return -EPERM;
	return 0;
}

static int rn_apply(struct fs *fs, struct rn *r)
{
	struct fs_tx *tx;
	int err;

	err = rn_iflags(r);
	/* A rename that replaces its target frees a name (or an inode), and
	 * one within a directory moves a name: the removal floor, as unlink,
	 * so that the save-to-temp-then-rename of editors and package
	 * managers still works on a full filesystem (ext4 and XFS allow
	 * both; before, every rename failed there: a tester's find).  A
	 * whiteout is a new inode: the creation floor. */
	if (!err)
		err = fs_meta_check(fs, !(r->flags & RENAME_WHITEOUT) &&
					(r->dst || r->sdp == r->ddp) ?
					FS_META_FLOOR_REMOVE :
					FS_META_FLOOR_CREATE);
	if (!err)
		err = fs_tx_begin(fs, &tx);
	if (err)
		return err;
	err = (r->flags & RENAME_EXCHANGE) ? rn_exchange(fs, tx, r) :
					     rn_move(fs, tx, r);
	if (!err) {
		fs_inode_touch(r->src, false, false, true);
		fs_inode_touch(r->sdp, false, true, true);
		fs_inode_touch(r->ddp, false, true, true);
		err = fs_inode_dirty(fs, tx, r->src);
	}
	if (!err)
		err = fs_inode_dirty(fs, tx, r->sdp);
	if (!err && r->ddp != r->sdp)
		err = fs_inode_dirty(fs, tx, r->ddp);
	fs_tx_end(fs, tx);
	/* for messages: the new names' keys are found when needed */
	if (!err)
		fs_inode_named(fs, r->src, r->ddp->ino, 0);
	if (!err && (r->flags & RENAME_EXCHANGE))
		fs_inode_named(fs, r->dst, r->sdp->ino, 0);
	return err;
}

static int rn_lookup(struct fs *fs, struct rn *r)
{
	uint64_t sino, dino;
	int err;

	err = fs_dir_lookup(fs, r->sdp, r->name, &sino, NULL);
	if (!err)
		err = fs_iget(fs, sino, &r->src);
	if (err)
		return err;
	err = fs_dir_lookup(fs, r->ddp, r->newname, &dino, NULL);
	if (err == -ENOENT)
		return 0;
	if (!err)
		err = fs_iget(fs, dino, &r->dst);
	return err;
}

static int rn_names(const char *name, const char *newname, unsigned flags)
{
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT) ||
	    ((flags & RENAME_EXCHANGE) &&
	     (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT))))
		return -EINVAL;
	if (strlen(name) > FS_NAME_MAX || strlen(newname) > FS_NAME_MAX)
		return -ENAMETOOLONG;
	if (!*name || !*newname)
		return -ENOENT;
	if (!strcmp(name, ".") || !strcmp(name, "..") ||
	    !strcmp(newname, ".") || !strcmp(newname, ".."))
		return -EBUSY;
	return 0;
}

static int rn_parents(struct fs *fs, uint64_t parent, uint64_t newparent,
		      struct rn *r)
{
	int err = fs_iget(fs, parent, &r->sdp);

	if (err)
		return err;
	err = fs_iget(fs, newparent, &r->ddp);
	if (err)
		return err;
	if (!S_ISDIR(r->sdp->d.mode) || !S_ISDIR(r->ddp->d.mode))
		return -ENOTDIR;
	if (!r->ddp->d.nlink)
		return -ENOENT;
	return 0;
}

int fs_rename(struct fs *fs, uint64_t parent, const char *name,
	      uint64_t newparent, const char *newname, unsigned flags)
{
	return fs_rename_ctx(fs, NULL, parent, name, newparent, newname, flags);
}

int fs_rename_ctx(struct fs *fs, const struct fs_ctx *ctx, uint64_t parent,
		  const char *name, uint64_t newparent, const char *newname,
		  unsigned flags)
{
	struct rn r = { .name = name, .newname = newname, .flags = flags,
			.uid = ctx ? ctx->uid : 0, .gid = ctx ? ctx->gid : 0 };
	struct fs_lockset ls = { .n = 0 };
	int err;

	err = rn_names(name, newname, flags);
	if (err)
		return err;
	pthread_rwlock_wrlock(&fs->ns_lock);
	err = rn_parents(fs, parent, newparent, &r);
	if (!err)
		err = rn_lookup(fs, &r);
	if (!err && r.dst == r.src)
		goto out;               /* same inode: POSIX says do nothing */
	if (!err)
		err = rn_check(fs, &r);
	if (err)
		goto out;
	fs_lockset_add(&ls, r.sdp);
	fs_lockset_add(&ls, r.ddp);
	fs_lockset_add(&ls, r.src);
	fs_lockset_add(&ls, r.dst);
	fs_lockset_lock(&ls);
	err = rn_apply(fs, &r);
	fs_lockset_unlock(&ls);
out:
	pthread_rwlock_unlock(&fs->ns_lock);
	if (r.dst)
		fs_iput(fs, r.dst);
	if (r.src)
		fs_iput(fs, r.src);
	if (r.ddp)
		fs_iput(fs, r.ddp);
	if (r.sdp)
		fs_iput(fs, r.sdp);
	return err;
}
