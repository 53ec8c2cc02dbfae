/*
 * fs_ops: the inode and file operations of fs.h (the namespace operations
 * are in namei.c, fallocate in falloc.c).  Each one: fs_iget, take the
 * inode's lock, call the layer below, unlock, fs_iput.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "fs_int.h"

#define RELATIME_SECS (24 * 3600)

int fs_getattr(struct fs *fs, uint64_t ino, struct fs_attr *attr)
{
	struct fs_inode *ip;
	int err = fs_iget(fs, ino, &ip);

	if (err)
		return err;
	pthread_rwlock_rdlock(&ip->lock);
	fs_inode_to_attr(fs, ip, attr);
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return 0;
}

void fs_forget(struct fs *fs, uint64_t ino, uint64_t nlookup)
{
	struct fs_inode *ip;

	if (ino == FS_ROOT_INO)
		return;
	ip = fs_icache_find(fs, ino);
	if (!ip)
		return;
	pthread_mutex_lock(&fs->icache_lock);
	ip->nlookup -= nlookup < ip->nlookup ? nlookup : ip->nlookup;
	pthread_mutex_unlock(&fs->icache_lock);
	fs_iput(fs, ip);
}

static void attr_times(struct fs_inode *ip, const struct fs_attr *in,
		       int to_set)
{
	struct timespec now;

	fs_now(&now);
	if (to_set & FS_SET_ATTR_ATIME_NOW)
		ip->d.atime = now;
	else if (to_set & FS_SET_ATTR_ATIME)
		ip->d.atime = in->atime;
	if (to_set & FS_SET_ATTR_MTIME_NOW)
		ip->d.mtime = now;
	else if (to_set & FS_SET_ATTR_MTIME)
		ip->d.mtime = in->mtime;
	ip->d.ctime = (to_set & FS_SET_ATTR_CTIME) ? in->ctime : now;
}

/*
 * to_set with S_ISGID dropped where Linux drops it for ctx: a chmod
 * (setattr_prepare), a truncate or a write (setattr_should_drop_sgid:
 * with group execute the kernel has cleared it already).  *mode gets the
 * mode to set.
 */
static int setattr_sgid(const struct fs_ctx *ctx, const struct fs_inode *ip,
			const struct fs_attr *in, int to_set, mode_t *mode)
{
	gid_t g = (to_set & FS_SET_ATTR_GID) ? in->gid : ip->d.gid;

	*mode = (to_set & FS_SET_ATTR_MODE) ? in->mode : ip->d.mode;
	if (!(to_set & (FS_SET_ATTR_MODE | FS_SET_ATTR_SIZE |
			FS_SET_ATTR_KILL_SGID)) ||
	    !(*mode & S_ISGID) || fs_ctx_in_group(ctx, g))
		return to_set;
	*mode &= ~(mode_t)S_ISGID;
	return to_set | FS_SET_ATTR_MODE;
}

/*
 * The bits of mode (the mode about to be set) that the KILL bits of to_set
 * take away: Linux's setattr_should_drop_suidgid for a write or truncate
 * (a caller with CAP_FSETID, uid 0 here, keeps them), chown_common for a
 * chown (S_ISUID goes whoever calls; S_ISGID as setattr_should_drop_sgid
 * says, CAP_FSETID keeping it).  The kernel with killpriv_v2 leaves all
 * of it to the daemon.
 */
static mode_t privs_killed(const struct fs_ctx *ctx,
			   const struct fs_inode *ip, int to_set, mode_t mode)
{
	bool chown = to_set & (FS_SET_ATTR_UID | FS_SET_ATTR_GID |
			       FS_SET_ATTR_CHOWN);
	mode_t kill = S_ISUID;

	if (!(to_set & (FS_SET_ATTR_KILL_SUIDGID | FS_SET_ATTR_KILL_SGID)))
		return 0;
	if (chown ? S_ISDIR(ip->d.mode) : !S_ISREG(ip->d.mode))
		return 0;
	if (!chown && (!ctx || ctx->uid == 0))
		return 0;
	if ((mode & S_IXGRP) || !fs_ctx_in_group(ctx, ip->d.gid))
		kill |= S_ISGID;
	return mode & kill;
}

/*
 * Times given by value (utimes with times, not NULL): an append-only file
 * refuses them as Linux does (ATTR_TIMES_SET), "now" it takes.  The kernel
 * says "now" with the _NOW flags, except for a regular file's mtime under
 * the writeback cache, which it always sends by value (it keeps it
 * itself): there only the atime tells.
 */
static bool times_explicit(const struct fs_inode *ip, int to_set)
{
	return ((to_set & FS_SET_ATTR_ATIME) &&
		!(to_set & FS_SET_ATTR_ATIME_NOW)) ||
	       ((to_set & FS_SET_ATTR_MTIME) &&
		!(to_set & FS_SET_ATTR_MTIME_NOW) && !S_ISREG(ip->d.mode));
}

static int setattr_locked(struct fs *fs, const struct fs_ctx *ctx,
			  struct fs_inode *ip, const struct fs_attr *in,
			  int to_set)
{
	struct fs_tx *tx;
	bool resized = false;
	mode_t mode, kill;
	int err;

	to_set = setattr_sgid(ctx, ip, in, to_set, &mode);
	kill = privs_killed(ctx, ip, to_set, mode);
	if (kill) {
		mode &= ~kill;
		to_set |= FS_SET_ATTR_MODE;
	}
	err = to_set == (FS_SET_ATTR_MTIME | FS_SET_ATTR_CTIME |
			 FS_SET_ATTR_CACHED_TIMES) ? 0 :
	      fs_iflags_check(ip, (to_set & FS_SET_ATTR_SIZE) ? FS_CHANGE_DATA :
			      (to_set & (FS_SET_ATTR_MODE | FS_SET_ATTR_UID |
					 FS_SET_ATTR_GID)) ||
			      times_explicit(ip, to_set) ? FS_CHANGE_ATTR :
			      FS_CHANGE_ADD);   /* times "now": a write's */
	if (err)
		return err;

	if (to_set & FS_SET_ATTR_SIZE) {
		if (S_ISDIR(ip->d.mode))
			return -EISDIR;
		if (!S_ISREG(ip->d.mode))
			return -EINVAL;
		resized = in->size != ip->d.size;
		err = fs_file_truncate(fs, ip, in->size);
		if (err)
			return err;
	}
	err = fs_tx_begin(fs, &tx);
	if (err)
		return err;
	if (to_set & FS_SET_ATTR_MODE) {
		mode = (ip->d.mode & S_IFMT) | (mode & 07777);
		/* The access ACL first: if it fails, nothing has changed. */
		err = fs_acl_chmod(fs, tx, ip, mode);
		if (err) {
			fs_tx_end(fs, tx);
			return err;
		}
		ip->d.mode = mode;
	}
	if (to_set & FS_SET_ATTR_UID)
		ip->d.uid = in->uid;
	if (to_set & FS_SET_ATTR_GID)
		ip->d.gid = in->gid;
	attr_times(ip, in, to_set);
	if (resized && !(to_set & (FS_SET_ATTR_MTIME | FS_SET_ATTR_MTIME_NOW)))
		ip->d.mtime = ip->d.ctime;
	err = fs_inode_dirty(fs, tx, ip);
	fs_tx_end(fs, tx);
	return err;
}

int fs_setattr(struct fs *fs, uint64_t ino, const struct fs_attr *in,
	       int to_set, struct fs_attr *out)
{
	return fs_setattr_ctx(fs, NULL, ino, in, to_set, out);
}

int fs_setattr_ctx(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		   const struct fs_attr *in, int to_set, struct fs_attr *out)
{
	struct fs_inode *ip;
	int err = fs_iget(fs, ino, &ip);

	if (err)
		return err;
	pthread_rwlock_wrlock(&ip->lock);
	err = setattr_locked(fs, ctx, ip, in, to_set);
	if (!err && out)
		fs_inode_to_attr(fs, ip, out);
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return err;
}

int fs_kill_privs(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino)
{
	const struct fs_attr none = { 0 };
	struct fs_inode *ip;
	int err = fs_iget(fs, ino, &ip);

	if (err)
		return err;
	pthread_rwlock_wrlock(&ip->lock);
	if (privs_killed(ctx, ip, FS_SET_ATTR_KILL_SUIDGID, ip->d.mode)) {
		err = setattr_locked(fs, ctx, ip, &none,
				     FS_SET_ATTR_KILL_SUIDGID);
		if (!err)
			err = 1;
	}
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return err;
}

/* ---- files --------------------------------------------------------------- */
int fs_open(struct fs *fs, uint64_t ino, int flags, uint64_t *fh)
{
	struct fs_inode *ip;
	int err = fs_iget(fs, ino, &ip);

	if (err)
		return err;
	err = fs_file_open(fs, ip, flags, fh);
	fs_iput(fs, ip);
	return err;
}

int fs_release(struct fs *fs, uint64_t ino, uint64_t fh)
{
	struct fs_inode *ip = fs_icache_find(fs, ino);

	if (!ip)
		return -ENOENT;
	pthread_mutex_lock(&fs->icache_lock);
	if (ip->nopen)
		ip->nopen--;
	/* closed by all: its writer was told (close or fsync) */
	if (!ip->nopen)
		__atomic_store_n(&ip->wb_hole, 0, __ATOMIC_RELAXED);
	/* the kernel wrote the file back and answered that close before
	 * the release: what is stored now was acknowledged */
	fs_wb_acked(ip);
	pthread_mutex_unlock(&fs->icache_lock);
	fs_iput(fs, ip);
	return 0;
}

/* a < b */
static bool ts_is_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Linux's atime_needs_update and relatime_need_update.  Caller holds
 * ip->lock. */
static bool atime_is_stale(const struct fs *fs, const struct fs_inode *ip)
{
	struct timespec now;
	const struct timespec *a = &ip->d.atime;

	if (fs->rdonly || fs->noatime ||
	    (fs->nodiratime && S_ISDIR(ip->d.mode)))
		return false;
	fs_now(&now);
	if (a->tv_sec == now.tv_sec && a->tv_nsec == now.tv_nsec)
		return false;
	if (fs->strictatime)
		return true;
	return !ts_is_before(&ip->d.mtime, a) ||
	       !ts_is_before(&ip->d.ctime, a) ||
	       now.tv_sec - a->tv_sec >= RELATIME_SECS;
}

int fs_accessed(struct fs *fs, uint64_t ino)
{
	struct fs_inode *ip;
	struct fs_tx *tx;
	bool stale;
	int err = fs_iget(fs, ino, &ip);

	if (err)
		return err;
	pthread_rwlock_rdlock(&ip->lock);
	stale = atime_is_stale(fs, ip);
	pthread_rwlock_unlock(&ip->lock);
	if (stale) {
		pthread_rwlock_wrlock(&ip->lock);
		stale = atime_is_stale(fs, ip);
		if (stale && !(err = fs_tx_begin(fs, &tx))) {
			fs_inode_touch(ip, true, false, false);
			err = fs_inode_dirty_times(fs, tx, ip);
			fs_tx_end(fs, tx);
		}
		pthread_rwlock_unlock(&ip->lock);
	}
	fs_iput(fs, ip);
	return err ? err : stale;
}

ssize_t fs_read(struct fs *fs, uint64_t ino, uint64_t off, size_t size,
		void *buf)
{
	struct fs_inode *ip;
	ssize_t n;

	n = fs_iget(fs, ino, &ip);
	if (n)
		return n;
	pthread_rwlock_rdlock(&ip->lock);
	n = S_ISDIR(ip->d.mode) ? -EISDIR : fs_file_read(fs, ip, off, size, buf);
	pthread_rwlock_unlock(&ip->lock);
	if (n == -EIO)
		fs_report_unreadable(fs, ip, off, size);
	fs_iput(fs, ip);
	return n;
}

/*
 * The writeback cache sends a file's pages in several WRITEs, not in
 * order, long after the write(2) that accepted them.  Near full, one
 * write(2) larger than the room left (dd bs=32M) was accepted whole; the
 * WRITEs that found no space were dropped, and later ones, finding room
 * freed meanwhile, were stored past them: after a remount the file had
 * its full size with megabytes of zeros inside it, and the daemon said
 * nothing (a tester's find, W1).  ext4 fails such a write(2) itself.
 * Here the first cached write that finds no space marks where the file's
 * stored data ends (wb_hole), and no cached write that needs new blocks
 * past it is stored until the gap is written or the file truncated or
 * closed by all: the file is what was stored of it, a prefix, and every
 * fsync reports ENOSPC meanwhile (fs_fsync).  Caller holds ip's lock.
 *
 * WRITEs past the gap may also have come first and been stored before it
 * found no space (under load, t430 saw it).  When everything past the
 * gap came from write-backs not yet answered for (wb_base: no fsync,
 * release, GETATTR, near-full state or other size change since the file
 * grew past it: fs_wb_acked, fs_wb_settle), the file is cut back to the
 * gap (hole_cut): those bytes are as lost as the gap's, and fsync and
 * close say so.  Below wb_base nothing is cut: a sparse file written in
 * its middle can still keep a gap there.
 */
static bool hole_behind(const struct fs_inode *ip, uint64_t off)
{
	uint64_t h = __atomic_load_n(&ip->wb_hole, __ATOMIC_RELAXED);

	return h && off > h - 1;
}

static void hole_cut(struct fs *fs, struct fs_inode *ip, uint64_t at,
		     uint64_t end)
{
	uint64_t base = __atomic_load_n(&ip->wb_base, __ATOMIC_RELAXED);
	uint64_t size = ip->d.size;
	uint32_t nopen;
	int err;

	/* One handle at most: another's close(2) may have answered for its
	 * bytes already, its RELEASE (which resets wb_base) still on the
	 * way; the kernel sends no FLUSH here (fuse_ops.c). */
	pthread_mutex_lock(&fs->icache_lock);
	nopen = ip->nopen;
	pthread_mutex_unlock(&fs->icache_lock);
	/* A WRITE that starts below the base and reaches past it (the
	 * kernel sends the page holding the old end again, an appender's
	 * next record in it): its bytes below the base are stored from
	 * before, the gap starts at the base (a tester's find: zeros
	 * inside a shared O_APPEND file, records after them). */
	if (base && at < base - 1 && end > base - 1)
		at = base - 1;
	if (!base || at < base - 1 || size <= at || nopen > 1)
		return;
	err = fs_file_truncate(fs, ip, at);
	if (err)
		fs_log(LOG_ERR, "inode %llu: could not cut the file back to "
		       "byte %llu, where its cached writes found no space: "
		       "%s; bytes up to %llu stay, with a gap before them",
		       (unsigned long long)ip->ino, (unsigned long long)at,
		       strerror(-err), (unsigned long long)ip->d.size);
	else
		fs_log(LOG_ERR, "inode %llu: cut back to byte %llu: the "
		       "%llu bytes past it came from write-backs not yet "
		       "acknowledged, and go with the writes that found no "
		       "space",
		       (unsigned long long)ip->ino, (unsigned long long)at,
		       (unsigned long long)(size - at));
}

static void hole_note(struct fs *fs, struct fs_inode *ip, uint64_t off,
		      size_t size, ssize_t n)
{
	uint64_t h = __atomic_load_n(&ip->wb_hole, __ATOMIC_RELAXED);
	uint64_t at = n < 0 ? off : off + (uint64_t)n;

	if (n == -ENOSPC || (n >= 0 && (size_t)n < size)) {
		if (h && at >= h - 1)
			return;
		if (!h)
			fs_log(LOG_ERR, "inode %llu: cached writes from byte "
			       "%llu on could not be stored: no space left; "
			       "fsync reports it, and later cached writes "
			       "past it are refused until the file is closed",
			       (unsigned long long)ip->ino,
			       (unsigned long long)at);
		hole_cut(fs, ip, at, off + size);
		/* after the cut: a truncate to the gap ends the hole */
		__atomic_store_n(&ip->wb_hole, at + 1, __ATOMIC_RELAXED);
	} else if (n > 0 && h && off <= h - 1 && at > h - 1) {
		/* the gap's start written after all */
		__atomic_store_n(&ip->wb_hole, at + 1, __ATOMIC_RELAXED);
	}
}

ssize_t fs_write(struct fs *fs, uint64_t ino, uint64_t off, size_t size,
		 const void *buf, int flags)
{
	struct fs_inode *ip;
	bool cache;
	ssize_t n;

	if (fs->rdonly)
		return -EROFS;
	n = fs_iget(fs, ino, &ip);
	if (n)
		return n;
	n = -EAGAIN;
	/* A page of the writeback cache was accepted by a write(2) that the
	 * flags allowed then (the daemon refuses one after chattr +i at its
	 * GETATTR): it is stored, as ext4 writes back what was dirtied
	 * before the flag came.  Refused here, it was lost and reported
	 * only at close. */
	cache = flags & FS_WRITE_CACHE;
	if ((flags & (FS_WRITE_CACHE | O_APPEND)) == FS_WRITE_CACHE) {
		pthread_rwlock_rdlock(&ip->lock);
		if (cache || !fs_iflags_check(ip, FS_CHANGE_ADD))
			n = fs_file_overwrite(fs, ip, off, size, buf);
		pthread_rwlock_unlock(&ip->lock);
	}
	if (n == -EAGAIN) {
		pthread_rwlock_wrlock(&ip->lock);
		if (flags & O_APPEND)
			off = ip->d.size;
		if (cache && !__atomic_load_n(&ip->wb_base, __ATOMIC_RELAXED) &&
		    off + size > ip->d.size)
			__atomic_store_n(&ip->wb_base, ip->d.size + 1,
					 __ATOMIC_RELAXED);
		/* append-only: only O_APPEND opens write (fs_file_open), and
		 * the writeback cache writes whole pages, below the end too */
		n = S_ISDIR(ip->d.mode) ? -EISDIR :
		    !cache && fs_iflags_check(ip, FS_CHANGE_ADD) ? -EPERM :
		    cache && hole_behind(ip, off) ? -ENOSPC :
		    fs_file_write(fs, ip, off, size, buf,
				  cache);
		if (cache)
			hole_note(fs, ip, off, size, n);
		else if (n > 0)
			fs_wb_acked(ip);        /* write(2) itself answered */
		pthread_rwlock_unlock(&ip->lock);
	}
	fs_iput(fs, ip);
	return n;
}

/*
 * Did the device drop a write of ip's data since its fsync last looked
 * (wdrop_seen)?  Its extents against the dropped ranges: -EIO when one
 * meets them, once, as Linux reports a writeback error to fsync (the
 * dropped blocks read as before).  Caller holds ip's lock shared.
 */
static int data_dropped(struct fs *fs, struct fs_inode *ip)
{
	uint64_t since = __atomic_load_n(&ip->wdrop_seen, __ATOMIC_RELAXED);
	uint64_t now = fs_bdev_dropped(fs->bdev), lblk = 0;
	struct fs_extent e;
	bool found, hit = false;
	int err = 0;

	if (now == since)
		return 0;
	while (!err && !hit && lblk < UINT64_MAX) {
		err = fs_ext_map(fs, ip, lblk, &e, &found);
		if (err || e.len == 0)
			break;
		hit = fs_bdev_dropped_in(fs->bdev, since, e.pblk, e.len);
		lblk = e.lblk + e.len;
	}
	if (err)
		return err;
	__atomic_store_n(&ip->wdrop_seen, now, __ATOMIC_RELAXED);
	if (hit)
		fs_log(LOG_ERR, "inode %llu: the device dropped a write of its "
		       "data (a row it cannot rebuild): fsync fails",
		       (unsigned long long)ip->ino);
	return hit ? -EIO : 0;
}

/* Commits only if the inode changed since the last commit (fdatasync: its
 * size or block map); else the data writes just need a flush, so
 * overwrite + fdatasync loops stay cheap. */
int fs_fsync(struct fs *fs, uint64_t ino, int datasync)
{
	struct fs_inode *ip;
	uint64_t seq;
	int err = fs_iget(fs, ino, &ip);

	if (err)
		return err;
	pthread_rwlock_rdlock(&ip->lock);
	seq = datasync ? ip->data_seq : ip->dirty_seq;
	pthread_rwlock_unlock(&ip->lock);
	err = fs_journal_sync_upto(fs, seq);
	if (!err) {
		pthread_rwlock_rdlock(&ip->lock);
		err = data_dropped(fs, ip);
		/* cached writes were dropped for want of space (hole_note):
		 * every fsync says so until the file is truncated to what was
		 * stored or closed by all; the kernel tells one fsync or one
		 * close only, and any process's close took it (a tester's
		 * find, V3) */
		if (!err && __atomic_load_n(&ip->wb_hole, __ATOMIC_RELAXED))
			err = -ENOSPC;
		/* What was written back before this fsync began is
		 * acknowledged.  The check and the reset under the lock that
		 * a cut holds (hole_note): a cut either came before, and this
		 * fsync fails, or comes after, and stops at the reset.  A
		 * later write-back caught in it only makes a cut shorter. */
		if (!err)
			fs_wb_acked(ip);
		pthread_rwlock_unlock(&ip->lock);
	}
	fs_iput(fs, ip);
	return err;
}

bool fs_blocks_changed(struct fs *fs, uint64_t ino, uint64_t *version)
{
	struct fs_inode *ip;
	bool changed;

	*version = 0;
	if (fs_iget(fs, ino, &ip))
		return true;
	*version = __atomic_load_n(&ip->blocks_gen, __ATOMIC_RELAXED) + 1;
	changed = __atomic_load_n(&ip->blocks_gen_told, __ATOMIC_RELAXED) !=
		  *version;
	fs_iput(fs, ip);
	return changed;
}

void fs_blocks_shown(struct fs *fs, uint64_t ino, uint64_t version)
{
	struct fs_inode *ip;
	uint64_t told;

	if (!version || fs_iget(fs, ino, &ip))
		return;
	told = __atomic_load_n(&ip->blocks_gen_told, __ATOMIC_RELAXED);
	while (told < version &&
	       !__atomic_compare_exchange_n(&ip->blocks_gen_told, &told,
					    version, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	fs_iput(fs, ip);
}

static off_t seek_locked(struct fs *fs, struct fs_inode *ip, uint64_t off,
			 int whence)
{
	uint64_t lblk = off >> FS_BSHIFT, pos;
	struct fs_extent e;
	bool found;
	int err;

	if (off >= ip->d.size)
		return -ENXIO;
	for (;;) {
		err = fs_ext_map(fs, ip, lblk, &e, &found);
		if (err)
			return err;
		if (whence == SEEK_DATA) {
			if (found)
				return (off_t)off;
			if (!e.len || (e.lblk << FS_BSHIFT) >= ip->d.size)
				return -ENXIO;
			return (off_t)(e.lblk << FS_BSHIFT);
		}
		if (!found) {
			pos = lblk << FS_BSHIFT;
			pos = pos > off ? pos : off;
			return (off_t)(pos < ip->d.size ? pos : ip->d.size);
		}
		lblk = e.lblk + e.len;
		if ((lblk << FS_BSHIFT) >= ip->d.size)
			return (off_t)ip->d.size;
	}
}

off_t fs_lseek(struct fs *fs, uint64_t ino, off_t off, int whence)
{
	struct fs_inode *ip;
	off_t r;
	int err;

	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return -EINVAL;
	if (off < 0)
		return -ENXIO;
	err = fs_iget(fs, ino, &ip);
	if (err)
		return err;
	pthread_rwlock_rdlock(&ip->lock);
	r = seek_locked(fs, ip, (uint64_t)off, whence);
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return r;
}

ssize_t fs_copy_file_range(struct fs *fs, uint64_t ino_in, uint64_t off_in,
			   uint64_t ino_out, uint64_t off_out, size_t len,
			   int flags)
{
	const size_t chunk = 1u << 20;
	size_t done = 0, want;
	ssize_t n, w;
	uint8_t *buf;

	if (flags)
		return -EINVAL;
	buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	while (done < len) {
		want = len - done < chunk ? len - done : chunk;
		n = fs_read(fs, ino_in, off_in + done, want, buf);
		if (n <= 0) {
			if (n < 0 && !done)
				done = (size_t)n;
			break;
		}
		w = fs_write(fs, ino_out, off_out + done, (size_t)n, buf, 0);
		if (w < 0) {
			if (!done)
				done = (size_t)w;
			break;
		}
		done += (size_t)w;
		if ((size_t)n < want)
			break;
	}
	free(buf);
	return (ssize_t)done;
}
