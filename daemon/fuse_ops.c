/*
 * fuse_ops: the low-level request handlers for inodes and names, and the
 * table libfuse calls (file, directory and xattr handlers: fuse_io.c).
 *
 * Every handler decodes its request, calls one fs_* function and replies
 * exactly once; fs errors are negative errnos, FUSE wants them positive.
 *
 * Lookup counts: every reply that hands the kernel an inode (entry, create,
 * readdirplus) carries one reference taken by fs; the kernel returns them
 * with forget.  When a reply cannot be delivered (the request was
 * interrupted), the kernel never saw the inode, so the reference is
 * dropped here.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "fuse_ops.h"

void rfs_stat_from_attr(const struct fs_attr *a, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = a->ino;
	st->st_mode = a->mode;
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_rdev = a->rdev;
	st->st_size = (off_t)a->size;
	st->st_blocks = (blkcnt_t)a->blocks;
	st->st_blksize = a->blksize;
	st->st_atim = a->atime;
	st->st_mtim = a->mtime;
	st->st_ctim = a->ctime;
}

void rfs_entry_from_attr(fuse_req_t req, const struct fs_attr *a,
			 struct fuse_entry_param *e)
{
	struct rfs_daemon *d = fuse_req_userdata(req);

	memset(e, 0, sizeof(*e));
	e->ino = a->ino;
	e->generation = a->generation;
	e->attr_timeout = rfs_attr_timeout(d, a->ino);
	e->entry_timeout = d->timeout;
	rfs_stat_from_attr(a, &e->attr);
}

void rfs_reply_entry(fuse_req_t req, const struct fs_attr *a)
{
	struct fuse_entry_param e;

	rfs_entry_from_attr(req, a, &e);
	if (fuse_reply_entry(req, &e) == -ENOENT)
		fs_forget(rfs_fs(req), a->ino, 1);
}

/* For handlers that return an inode: the entry, or the error. */
static void reply_entry_or_err(fuse_req_t req, int ret,
			       const struct fs_attr *a)
{
	rfs_space_changed(req, ret);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		rfs_reply_entry(req, a);
}

/* fs_ctx's in_groups: the caller's supplementary groups, from /proc. */
static bool req_in_groups(const struct fs_ctx *ctx, gid_t g)
{
	gid_t list[64];
	int n = fuse_req_getgroups(ctx->arg, 64, list);

	for (int i = 0; i < n && i < 64; i++)
		if (list[i] == g)
			return true;
	return false;
}

struct fs_ctx rfs_ctx(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	const struct rfs_daemon *d = fuse_req_userdata(req);
	struct fs_ctx ctx = { c->uid, c->gid, d->dont_mask ? c->umask : 0,
			      req_in_groups, req };

	return ctx;
}

bool rfs_name_is_too_long(const char *name)
{
	return strnlen(name, FS_NAME_MAX + 1) > FS_NAME_MAX;
}

/*
 * libfuse receives a request by splice only into a pipe that holds the
 * largest one, max_write plus a page of headers; else it reads it (a copy
 * either way: the handler copies the pipe into memory).  Past
 * fs.pipe-max-size (1 MiB) a pipe grows only with CAP_SYS_RESOURCE, which
 * unprivileged daemons and some containers lack: there splice is off in
 * fact, and the log says so.
 */
static bool pipe_holds(size_t bytes)
{
	int p[2];
	bool ok;

	if (pipe2(p, O_CLOEXEC) < 0)
		return false;
	ok = fcntl(p[0], F_SETPIPE_SZ, (int)bytes) >= (int)bytes;
	close(p[0]);
	close(p[1]);
	return ok;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct rfs_daemon *d = userdata;
	unsigned want = FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
		FUSE_CAP_SPLICE_MOVE | FUSE_CAP_READDIRPLUS |
		FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_POSIX_ACL |
		FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_PARALLEL_DIROPS |
		FUSE_CAP_CACHE_SYMLINKS | FUSE_CAP_ASYNC_READ;

	if (!d->ro)
		want |= FUSE_CAP_WRITEBACK_CACHE;
	if (d->dont_mask)
		want |= FUSE_CAP_DONT_MASK;
	conn->want |= want & conn->capable;
	/* the daemon is the only writer: nothing changes behind the cache.
	 * HANDLE_KILLPRIV (v1) off: writes from the writeback cache carry no
	 * user to decide it here.  killpriv_v2 is fuse_hook.c's (libfuse
	 * 3.14 has no capability for it); see op_setattr. */
	conn->want &= ~(unsigned)(FUSE_CAP_AUTO_INVAL_DATA |
				  FUSE_CAP_HANDLE_KILLPRIV);
	/* file handles (open_by_handle_at, NFS) outlive the kernel's memory
	 * of the inode: it looks "." (and a directory's "..") up by inode
	 * number, which fs answers, and compares the generation */
	conn->want |= FUSE_CAP_EXPORT_SUPPORT & conn->capable;
	conn->max_write = RFS_MAX_WRITE;
	conn->max_readahead = RFS_READAHEAD;
	/* probed only when splice is still wanted: with fuse_hook.c the
	 * kernel connection never offers it */
	if ((conn->want & FUSE_CAP_SPLICE_READ) &&
	    !pipe_holds(RFS_MAX_WRITE + 4096))
		conn->want &= ~(unsigned)FUSE_CAP_SPLICE_READ;
	conn->time_gran = 1;
	d->writeback = conn->want & FUSE_CAP_WRITEBACK_CACHE;
	d->dont_mask = conn->want & FUSE_CAP_DONT_MASK;
	rfs_log(LOG_INFO, "fuse %u.%u: writeback cache %s, splice read %s, "
		"posix acl %s, killpriv_v2 %s, O_DIRECT %s, max_write %u KiB",
		conn->proto_major, conn->proto_minor,
		d->writeback ? "on" : "off",
		conn->want & FUSE_CAP_SPLICE_READ ? "on" :
		!(conn->capable & FUSE_CAP_SPLICE_READ) ?
		"off (the daemon reads requests: fuse_hook.c)" :
		"off (a pipe cannot hold max_write: fs.pipe-max-size)",
		conn->want & FUSE_CAP_POSIX_ACL ? "on" : "off",
		d->killpriv_v2 ? "on" : d->hook ?
		"off (the kernel does not offer it)" :
		"off (libfuse reads /dev/fuse)",
		d->direct_io ? "direct (FOPEN_DIRECT_IO)" : d->hook ?
		"through the page cache (the kernel does not offer "
		"direct_io_allow_mmap)" : "through the page cache "
		"(libfuse reads /dev/fuse)", conn->max_write >> 10);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	const struct rfs_daemon *d = fuse_req_userdata(req);
	struct fuse_entry_param e;
	struct fs_attr a;
	int ret;

	if (rfs_name_is_too_long(name)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	ret = fs_lookup(d->fs, parent, name, &a);
	if (ret == -ENOENT) {
		/* negative entry: cached as long as a positive one, since
		 * nobody but this daemon can create the name */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = d->timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	reply_entry_or_err(req, ret, &a);
}

/*
 * The kernel forgets inodes by the thousand when it drops its caches (or
 * after rm -r): what they held goes back to malloc, which keeps it in
 * its arenas (one per thread that allocated: 16 FUSE threads), and the
 * daemon's RSS stayed at its peak for good (100,000 files created: 369
 * MB, 229 MB after malloc_trim; a tester saw 670 MB for 200,000).  After
 * FORGET_TRIM forgets, at most every TRIM_NS, it is given back.
 */
#define FORGET_TRIM 10000
#define TRIM_NS (10ull * 1000000000ull)

static void forgets_note(uint64_t n)
{
	static uint64_t count, last_ns;
	struct timespec ts;
	uint64_t now;

	if (__atomic_add_fetch(&count, n, __ATOMIC_RELAXED) < FORGET_TRIM)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now - __atomic_load_n(&last_ns, __ATOMIC_RELAXED) < TRIM_NS)
		return;
	__atomic_store_n(&last_ns, now, __ATOMIC_RELAXED);
	__atomic_store_n(&count, 0, __ATOMIC_RELAXED);
	malloc_trim(0);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	fs_forget(rfs_fs(req), ino, nlookup);
	fuse_reply_none(req);
	forgets_note(1);
}

static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	struct fs *fs = rfs_fs(req);
	size_t i;

	for (i = 0; i < count; i++)
		fs_forget(fs, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
	forgets_note(count);
}

/* With a write handle, near full, this is the kernel asking before a
 * write(2): ENOSPC fails it (fuse_space.c). */
static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct rfs_daemon *d = fuse_req_userdata(req);
	struct fs_attr a;
	struct stat st;
	int ret = rfs_space_check(d, ino, fi);
	bool writes = fi && rfs_fh_writes(fi->fh);

	/* A write(2) begins (or fstat): what was stored before it
	 * is not cut for its write-backs' want of space.  A close(2) of a
	 * dup'd or inherited descriptor answers for the file's pages and
	 * sends nothing (no FLUSH, no RELEASE); near full, the next write(2)
	 * through a cached handle sends this GETATTR first, with its handle
	 * (a tester's find: 4 MiB acknowledged by such a close were cut
	 * away).  A stat(2) comes without one and costs nothing here. */
	if (d->writeback && fi)
		fs_wb_settle(d->fs, ino);

	/* the GETATTR before a write(2) through a handle that was opened
	 * before chattr +i: EPERM fails the write(2), as on ext4 */
	if (!ret && writes && d->writeback &&
	    __atomic_load_n(&d->immutable_seen, __ATOMIC_RELAXED) &&
	    rfs_immutable(d, ino))
		ret = -EPERM;
	if (!ret)
		ret = fs_getattr(d->fs, ino, &a);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	rfs_stat_from_attr(&a, &st);
	fuse_reply_attr(req, &st, writes ? d->timeout :
			rfs_attr_timeout(d, ino));
	rfs_space_checked(d, ino, fi);
}

/*
 * Setuid and setgid rules.  Without killpriv_v2 the kernel's FUSE client
 * (HANDLE_KILLPRIV off) clears S_ISUID on write, truncate and fallocate by
 * a caller without CAP_FSETID, but S_ISGID only with group execute (the
 * rule before Linux 6.x); when it has nothing to clear it still sends a
 * SETATTR with no attribute, from the writer.  With killpriv_v2
 * (fuse_hook.c) it clears nothing itself: that same SETATTR comes from a
 * writer or fallocate that must lose privileges, a truncate or chown says
 * FATTR_KILL_SUIDGID (libfuse's FUSE_SET_ATTR_KILL_SUID, fs's
 * FS_SET_ATTR_KILL_SUIDGID), and a chown(2) that changes no id comes as a
 * SETATTR of ctime alone.  The empty SETATTR becomes FS_SET_ATTR_KILL_SGID,
 * and fs applies today's rules (fs.h) to all of them, to truncates and to
 * chmods.
 */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct rfs_daemon *d = fuse_req_userdata(req);
	struct fs_ctx ctx = rfs_ctx(req);
	struct fs_attr in = { 0 }, out;
	struct stat st;
	int ret;

	if (!to_set)
		to_set = FS_SET_ATTR_KILL_SGID;
	else if (to_set == FUSE_SET_ATTR_CTIME && d->killpriv_v2)
		to_set |= FS_SET_ATTR_KILL_SUIDGID | FS_SET_ATTR_CHOWN;
	/* The writeback cache's own times going back (fuse_flush_times:
	 * MTIME and CTIME, with a write handle).  A FUSE inode has no
	 * S_IMMUTABLE, so the kernel moves them for a fallocate or
	 * copy_file_range before the daemon refuses it on an immutable
	 * file; refused here too, the times stayed dirty and every later
	 * fsync and syncfs failed with EPERM, and copy_file_range and
	 * punching with EIO (stress-ng's iomix).  Taken as the kernel
	 * already shows them. */
	else if (to_set == (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_CTIME) &&
		 fi && rfs_fh_writes(fi->fh) && d->writeback)
		to_set |= FS_SET_ATTR_CACHED_TIMES;

	in.ino = ino;
	in.mode = attr->st_mode;
	in.uid = attr->st_uid;
	in.gid = attr->st_gid;
	in.size = (uint64_t)attr->st_size;
	in.atime = attr->st_atim;
	in.mtime = attr->st_mtim;
	in.ctime = attr->st_ctim;
	/* FS_SET_ATTR_* are FUSE_SET_ATTR_*: passed through as they are;
	 * a mode change carries the access ACL along (fs) */
	ret = fs_setattr_ctx(d->fs, &ctx, ino, &in, to_set, &out);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	rfs_stat_from_attr(&out, &st);
	fuse_reply_attr(req, &st, rfs_attr_timeout(d, ino));
}

/* A parent's default ACL is applied by fs, in the create's transaction. */
static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	struct fs_ctx ctx = rfs_ctx(req);
	struct fs_attr a;
	int ret = rfs_name_is_too_long(name) ? -ENAMETOOLONG :
		fs_mknod(rfs_fs(req), &ctx, parent, name, mode, rdev, &a);

	reply_entry_or_err(req, ret, &a);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct fs_ctx ctx = rfs_ctx(req);
	struct fs_attr a;
	int ret = rfs_name_is_too_long(name) ? -ENAMETOOLONG :
		fs_mkdir(rfs_fs(req), &ctx, parent, name, mode & ~S_IFMT, &a);

	reply_entry_or_err(req, ret, &a);
}

static void op_symlink(fuse_req_t req, const char *target, fuse_ino_t parent,
		       const char *name)
{
	struct fs_ctx ctx = rfs_ctx(req);
	struct fs_attr a;
	int ret = -ENAMETOOLONG;

	if (!rfs_name_is_too_long(name) &&
	    strnlen(target, FS_SYMLINK_MAX + 1) <= FS_SYMLINK_MAX)
		ret = fs_symlink(rfs_fs(req), &ctx, target, parent, name, &a);
	reply_entry_or_err(req, ret, &a);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[FS_SYMLINK_MAX + 1];
	ssize_t n = fs_readlink(rfs_fs(req), ino, buf, sizeof(buf) - 1);

	if (n < 0) {
		fuse_reply_err(req, (int)-n);
		return;
	}
	buf[(size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1] = '\0';
	fuse_reply_readlink(req, buf);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	int ret = rfs_name_is_too_long(name) ? -ENAMETOOLONG :
		fs_unlink(rfs_fs(req), parent, name);

	rfs_space_changed(req, ret);
	fuse_reply_err(req, -ret);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	int ret = rfs_name_is_too_long(name) ? -ENAMETOOLONG :
		fs_rmdir(rfs_fs(req), parent, name);

	rfs_space_changed(req, ret);
	fuse_reply_err(req, -ret);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct fs_ctx ctx = rfs_ctx(req);
	int ret = -EINVAL;

	if (rfs_name_is_too_long(name) || rfs_name_is_too_long(newname))
		ret = -ENAMETOOLONG;
	else if (!(flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE |
				       RENAME_WHITEOUT)))
		ret = fs_rename_ctx(rfs_fs(req), &ctx, parent, name, newparent,
				    newname, flags);
	rfs_space_changed(req, ret);
	fuse_reply_err(req, -ret);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct fs_attr a;
	int ret = rfs_name_is_too_long(newname) ? -ENAMETOOLONG :
		fs_link(rfs_fs(req), ino, newparent, newname, &a);

	reply_entry_or_err(req, ret, &a);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;
	int ret = fs_statfs(rfs_fs(req), &st);

	if (!ret)
		rfs_space_statfs(rfs_daemon(req), &st);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_statfs(req, &st);
}

/* Permission checks are the kernel's (default_permissions). */
static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	fuse_reply_err(req, 0);
}

const struct fuse_lowlevel_ops rfs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.open = rfs_op_open,
	.read = rfs_op_read,
	.write = rfs_op_write,
	.write_buf = rfs_op_write_buf,
	/* No .flush: close(2) promises no durability (fsync does), the
	 * kernel keeps POSIX and flock locks itself (no .getlk/.setlk/.flock
	 * here), and writes back the writeback cache's pages of the file and
	 * returns their errors before it would send FLUSH.  libfuse answers
	 * the first FLUSH with ENOSYS and the kernel sends no more
	 * (fc->no_flush): one round trip less per close(2). */
	.release = rfs_op_release,
	.fsync = rfs_op_fsync,
	.opendir = rfs_op_opendir,
	.readdir = rfs_op_readdir,
	.readdirplus = rfs_op_readdirplus,
	.releasedir = rfs_op_releasedir,
	.fsyncdir = rfs_op_fsyncdir,
	.statfs = op_statfs,
	.setxattr = rfs_op_setxattr,
	.getxattr = rfs_op_getxattr,
	.listxattr = rfs_op_listxattr,
	.removexattr = rfs_op_removexattr,
	.access = op_access,
	.create = rfs_op_create,
	.fallocate = rfs_op_fallocate,
	.lseek = rfs_op_lseek,
	.copy_file_range = rfs_op_copy_file_range,
	.ioctl = rfs_op_ioctl,
};
