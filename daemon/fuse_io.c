/*
 * fuse_io: request handlers for open files, directories and extended
 * attributes (the inode and name handlers and the table: fuse_ops.c).
 *
 * fi->fh is fs's own handle with a write and a direct bit (rfs_fh_make).
 * O_APPEND: with the writeback cache the kernel places appends itself
 * (the flag is dropped before fs_write sees it; fs_open sees it, for
 * append-only files); without it, fs_write gets the flag and writes at the end of
 * file under the inode's lock.  Extended attributes:
 * fs applies the namespace rules and the ACL semantics for the caller
 * (fs_ctx).  What the page cache hides from the daemon is handled where
 * it shows: an open, READ or listing is an access (atime), an O_DIRECT
 * write and a SEEK_DATA/SEEK_HOLE drop cached data first (fuse_inval.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "fuse_ops.h"

static int open_flags(const struct rfs_daemon *d, int flags)
{
	return d->writeback ? flags & ~O_APPEND : flags;
}

/*
 * The kernel never moves atime on FUSE (its inodes are S_NOATIME) and
 * serves cached pages without asking, so an access is what reaches the
 * daemon: a read-only open (what opens to read does, whatever the cache
 * then serves; not O_TRUNC, not O_RDWR, which open to change), a READ, a
 * listing from its start.  When fs
 * moves atime, the kernel's cached copy is dropped (attributes only: no
 * inode lock, see fuse_inval.c) so that stat(2) shows it.
 */
static void note_access(struct rfs_daemon *d, fuse_ino_t ino, int flags)
{
	if (!(flags & O_NOATIME) && fs_accessed(d->fs, ino) > 0)
		rfs_inval_attr_now(d, ino);
}

/*
 * killpriv_v2 (fuse_hook.c): a WRITE or an O_TRUNC OPEN by a caller without
 * CAP_FSETID asks the daemon to clear setuid/setgid.  The kernel caches
 * the mode it knew: dropped when fs changed it (attributes only, no inode
 * lock: see fuse_inval.c).
 */
static void kill_privs(fuse_req_t req, struct rfs_daemon *d, fuse_ino_t ino)
{
	struct fs_ctx ctx;

	if (!rfs_req_kills_privs())
		return;
	ctx = rfs_ctx(req);
	if (fs_kill_privs(d->fs, &ctx, ino) > 0)
		rfs_inval_attr_now(d, ino);
}

/*
 * What an OPEN or CREATE reply tells the kernel of fs's handle fh.
 * keep_cache: nothing changes a file behind the kernel's page cache.
 * direct_io (FOPEN_DIRECT_IO) for an O_DIRECT open, once the kernel took
 * FUSE_DIRECT_IO_ALLOW_MMAP (fuse_hook.c): without it the kernel sends an
 * O_DIRECT write(2) down its page-cache path, which (writeback cache)
 * drops the inode's size and times after each write, so the next one
 * first asks GETATTR, and then, S_NOSEC gone with the new attributes,
 * GETXATTR security.capability: three round trips per write instead of
 * one (DESIGN.md "O_DIRECT").  On the direct path the kernel clears
 * nothing before a write: the daemon drops setuid/setgid when the WRITE
 * asks (FUSE_WRITE_KILL_SUIDGID, kill_privs) and capabilities always
 * (write_at).  Near full, a handle opened for writing is direct too
 * (fuse_space.c): write(2) then fails with ENOSPC only when its own range
 * needs blocks that are not there.
 */
static void open_reply(const struct rfs_daemon *d, uint64_t fh,
		       struct fuse_file_info *fi)
{
	fi->keep_cache = 1;
	fi->direct_io = d->direct_io && ((fi->flags & O_DIRECT) ||
					 rfs_space_open_direct(d, fi->flags));
	fi->fh = rfs_fh_make(fh, fi->flags, fi->direct_io);
}

void rfs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rfs_daemon *d = fuse_req_userdata(req);
	uint64_t fh;
	int ret = fs_open(d->fs, ino, fi->flags, &fh);

	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	if (fi->flags & O_TRUNC)
		kill_privs(req, d, ino);
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		rfs_space_update(d);    /* judged now: open_reply asks it */
	open_reply(d, fh, fi);
	rfs_space_opened(d, ino, fi->fh);
	if ((fi->flags & (O_ACCMODE | O_TRUNC)) == O_RDONLY)
		note_access(d, ino, fi->flags);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		rfs_space_released(d, ino, fi->fh);
		fs_release(d->fs, ino, fh);
	}
}

void rfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		   mode_t mode, struct fuse_file_info *fi)
{
	struct rfs_daemon *d = fuse_req_userdata(req);
	struct fs_ctx ctx = rfs_ctx(req);
	struct fuse_entry_param e;
	struct fs_attr a;
	uint64_t fh;
	int ret = rfs_name_is_too_long(name) ? -ENAMETOOLONG :
		fs_create(d->fs, &ctx, parent, name, mode, fi->flags, &a, &fh);

	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	rfs_space_update(d);    /* judged now: open_reply asks it */
	open_reply(d, fh, fi);
	rfs_space_opened(d, a.ino, fi->fh);
	rfs_entry_from_attr(req, &a, &e);
	e.attr_timeout = rfs_space_create_timeout(d, fi->fh);
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		rfs_space_released(d, a.ino, fi->fh);
		fs_release(d->fs, a.ino, fh);
		fs_forget(d->fs, a.ino, 1);
	}
}

/*
 * Each worker thread keeps its READ buffer.  A fresh one per request is,
 * at 1 MiB, an mmap and a munmap in glibc: a page fault on every page
 * and, at each free, a TLB shootdown on every thread of the daemon.
 * Page-aligned: the blocks land in it straight from the members, and a
 * degraded read rebuilds into it (ISA-L's XOR takes aligned buffers
 * only; others go to the scalar code).  fuse_reply_buf has copied it
 * out by the time it returns.  Freed at thread exit (read_buf_key's
 * destructor); a request above READ_BUF_KEEP gets a buffer of its own.
 */
#define READ_BUF_KEEP (4u << 20)

static pthread_key_t read_buf_key;
static pthread_once_t read_buf_once = PTHREAD_ONCE_INIT;
static __thread void *read_buf_mem;
static __thread size_t read_buf_size;

static void read_buf_key_make(void)
{
	if (pthread_key_create(&read_buf_key, free))
		abort();        /* no key at start-up: nothing can run */
}

static void *read_buf_get(size_t size)
{
	void *p = NULL;

	size = size ? size : 1;
	if (size <= read_buf_size)
		return read_buf_mem;
	if (posix_memalign(&p, 4096, size))
		return NULL;
	if (size > READ_BUF_KEEP)
		return p;
	pthread_once(&read_buf_once, read_buf_key_make);
	free(read_buf_mem);
	read_buf_mem = p;
	read_buf_size = size;
	pthread_setspecific(read_buf_key, p);
	return p;
}

static void read_buf_put(void *p)
{
	if (p != read_buf_mem)
		free(p);
}

void rfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	struct rfs_daemon *d = rfs_daemon(req);
	char *buf = read_buf_get(size);
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = fs_read(d->fs, ino, (uint64_t)off, size, buf);
	/* A read on a FOPEN_DIRECT_IO handle that ends at fs's end of file
	 * may end before the kernel's: a buffered write past the end that
	 * the writeback cache still holds has grown the file there only.
	 * The kernel wrote back the dirty pages of the read's range, so the
	 * page that made the kernel's size lies past it: dropping the pages
	 * from the read's end on writes it back (launders it), and fs then
	 * has the size the reader saw.  Never the read's own pages: a page
	 * fault on a mapping of the file reads through this handle too, and
	 * holds those pages locked until this reply.  Rare: a direct read
	 * that reaches the end of file. */
	if (n >= 0 && (size_t)n < size && rfs_fh_direct(fi->fh)) {
		off_t pg = (off_t)sysconf(_SC_PAGESIZE);

		rfs_inval_data_now(d, ino, (off + (off_t)size + pg - 1) / pg * pg,
				   0);
		n = fs_read(d->fs, ino, (uint64_t)off, size, buf);
	}
	if (n >= 0)
		note_access(d, ino, fi->flags);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	read_buf_put(buf);
}

static ssize_t write_at(fuse_req_t req, fuse_ino_t ino, const void *buf,
			size_t size, off_t off, const struct fuse_file_info *fi)
{
	struct rfs_daemon *d = fuse_req_userdata(req);
	ssize_t n;

	kill_privs(req, d, ino);
	/* not a page of a shared mapping written back: a store through a
	 * mapping drops nothing (filemap_page_mkwrite) */
	n = rfs_fh_direct(fi->fh) && !fi->writepage ?
		fs_kill_caps(d->fs, ino) : 0;
	if (n > 0)
		rfs_inval_attr_now(d, ino);     /* S_NOSEC is the kernel's */
	if (n >= 0)
		n = fs_write(d->fs, ino, (uint64_t)off, size, buf,
			     open_flags(d, fi->flags) |
			     (fi->writepage ? FS_WRITE_CACHE : 0));

	rfs_space_update(d);
	/* An O_DIRECT write bypasses the page cache, and the kernel drops
	 * the range only before it (and not at all when the write completes
	 * asynchronously): a buffered read racing the write may have cached
	 * the old bytes meanwhile.  Dropped here, after the data is in fs
	 * and before the reply completes the write. */
	if (n > 0 && ((fi->flags & O_DIRECT) || rfs_fh_direct(fi->fh)) &&
	    !fi->writepage)
		rfs_inval_data_now(d, ino, off, n);
	return n;
}

static void reply_write(fuse_req_t req, ssize_t n)
{
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

void rfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		  size_t size, off_t off, struct fuse_file_info *fi)
{
	reply_write(req, write_at(req, ino, buf, size, off, fi));
}

/*
 * With splice the data may still be in a pipe: it is copied into memory
 * once, since fs needs it there anyway.
 */
void rfs_op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv,
		      off_t off, struct fuse_file_info *fi)
{
	size_t size = fuse_buf_size(bufv);
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(size);
	const struct fuse_buf *b = &bufv->buf[bufv->idx];
	ssize_t n;

	if (bufv->count == 1 && !(b->flags & FUSE_BUF_IS_FD)) {
		reply_write(req, write_at(req, ino, (char *)b->mem + bufv->off,
					  size, off, fi));
		return;
	}
	dst.buf[0].mem = malloc(size ? size : 1);
	if (!dst.buf[0].mem) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = fuse_buf_copy(&dst, bufv, 0);
	if (n >= 0)
		n = write_at(req, ino, dst.buf[0].mem, (size_t)n, off, fi);
	reply_write(req, n);
	free(dst.buf[0].mem);
}

void rfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rfs_daemon *d = rfs_daemon(req);   /* req dies with the reply */
	int ret = fs_release(d->fs, ino, rfs_fh_fs(fi->fh));

	rfs_space_released(d, ino, fi->fh);
	if (ret)
		rfs_log(LOG_ERR, "release of inode %llu: %s",
			(unsigned long long)ino, strerror(-ret));
	fuse_reply_err(req, 0);
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		rfs_inval_attr(d, ino);
}

void rfs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		  struct fuse_file_info *fi)
{
	struct rfs_daemon *d = rfs_daemon(req);
	int ret = fs_fsync(d->fs, ino, datasync);

	/* Before the reply, so an fstat right after fsync sees st_blocks:
	 * dropping attributes only (offset -1) takes no inode lock in the
	 * kernel, so it cannot deadlock with the fsync in progress.  Only
	 * when st_blocks changed: the attributes dropped, the next write(2)
	 * would ask GETATTR, and with the new ones S_NOSEC gone, GETXATTR
	 * security.capability - two round trips per fsync'd batch of
	 * overwrites. */
	uint64_t version;

	if (fs_blocks_changed(d->fs, ino, &version)) {
		rfs_inval_attr_now(d, ino);
		fs_blocks_shown(d->fs, ino, version);
	}
	fuse_reply_err(req, -ret);
}

void rfs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
		      off_t length, struct fuse_file_info *fi)
{
	struct rfs_daemon *d = rfs_daemon(req);
	int ret = fs_fallocate(d->fs, ino, mode, (uint64_t)offset,
			       (uint64_t)length);

	rfs_space_update(d);
	rfs_inval_attr_now(d, ino);     /* attributes only: see rfs_op_fsync */
	fuse_reply_err(req, -ret);
}

/*
 * The kernel forwards SEEK_DATA/SEEK_HOLE without writing its dirty pages
 * back, so fs would not see data written moments ago.  While the file is
 * open for writing the kernel may hold some: dropping the cached range
 * from off on writes them back first (launder), then fs answers for all of
 * it.  With no write handle left there is nothing dirty (the last close
 * wrote it back), and the cache is kept.
 */
void rfs_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		  struct fuse_file_info *fi)
{
	struct rfs_daemon *d = rfs_daemon(req);
	off_t r;

	if (off >= 0 && rfs_space_has_writers(d, ino))
		rfs_inval_data_now(d, ino, off, 0);
	r = fs_lseek(d->fs, ino, off, whence);

	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_lseek(req, r);
}

void rfs_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			    struct fuse_file_info *fi_in, fuse_ino_t ino_out,
			    off_t off_out, struct fuse_file_info *fi_out,
			    size_t len, int flags)
{
	struct rfs_daemon *d = rfs_daemon(req);
	ssize_t n = fs_copy_file_range(d->fs, ino_in, (uint64_t)off_in, ino_out,
				       (uint64_t)off_out, len, flags);

	rfs_space_update(d);
	reply_write(req, n);
}

/*
 * chattr and lsattr: the kernel turns FS_IOC_GETFLAGS/SETFLAGS into its
 * fileattr calls, checks who may change which flag, and asks the daemon
 * with restricted ioctls - FS_IOC_GETFLAGS, and FS_IOC_FSGETXATTR /
 * FSSETXATTR (struct fsxattr), the form it reads and writes the old and
 * new flags in; fs keeps the flags and enforces them.
 */
static const struct { unsigned fl, xfl; } xflag_map[] = {
	{ FS_IMMUTABLE_FL, FS_XFLAG_IMMUTABLE },
	{ FS_APPEND_FL, FS_XFLAG_APPEND },
	{ FS_NODUMP_FL, FS_XFLAG_NODUMP },
};
#define XFLAG_N (sizeof(xflag_map) / sizeof(xflag_map[0]))

static unsigned xflags_of(unsigned fl)
{
	unsigned x = 0;

	for (size_t i = 0; i < XFLAG_N; i++)
		if (fl & xflag_map[i].fl)
			x |= xflag_map[i].xfl;
	return x;
}

/* -EOPNOTSUPP for what fs cannot keep (other flags, extent sizes, project
 * ids: an fsxattr with them set) */
static int flags_of_fsxattr(const struct fsxattr *fa, unsigned *fl)
{
	unsigned x = fa->fsx_xflags;

	*fl = 0;
	for (size_t i = 0; i < XFLAG_N; i++)
		if (x & xflag_map[i].xfl) {
			*fl |= xflag_map[i].fl;
			x &= ~xflag_map[i].xfl;
		}
	return x || fa->fsx_extsize || fa->fsx_projid || fa->fsx_cowextsize ?
		-EOPNOTSUPP : 0;
}

bool rfs_immutable(struct rfs_daemon *d, uint64_t ino)
{
	unsigned fl;

	return !fs_getflags(d->fs, ino, &fl) && (fl & FS_IMMUTABLE_FL);
}

static void ioctl_get(fuse_req_t req, fuse_ino_t ino, unsigned cmd)
{
	struct fsxattr fa = { 0 };
	unsigned fl;
	int ret = fs_getflags(rfs_fs(req), ino, &fl);

	if (ret)
		fuse_reply_err(req, -ret);
	else if (cmd == FS_IOC_GETFLAGS)
		fuse_reply_ioctl(req, 0, &fl, sizeof(fl));
	else {
		fa.fsx_xflags = xflags_of(fl);
		fuse_reply_ioctl(req, 0, &fa, sizeof(fa));
	}
}

static int ioctl_set(fuse_req_t req, fuse_ino_t ino, unsigned cmd,
		     const void *in_buf, size_t in_bufsz)
{
	struct fsxattr fa;
	unsigned fl;
	int ret = 0;

	if (cmd == FS_IOC_SETFLAGS && in_bufsz >= sizeof(fl)) {
		memcpy(&fl, in_buf, sizeof(fl));
	} else if (cmd == FS_IOC_FSSETXATTR && in_bufsz >= sizeof(fa)) {
		memcpy(&fa, in_buf, sizeof(fa));
		ret = flags_of_fsxattr(&fa, &fl);
	} else {
		return -ENOTTY;
	}
	if (!ret)
		ret = fs_setflags(rfs_fs(req), ino, fl);
	/* a writer's next write(2) must ask (op_getattr refuses it) */
	if (!ret && (fl & FS_IMMUTABLE_FL)) {
		struct rfs_daemon *d = fuse_req_userdata(req);

		__atomic_store_n(&d->immutable_seen, true, __ATOMIC_RELAXED);
		rfs_inval_attr_now(d, ino);
	}
	return ret;
}

void rfs_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned cmd, void *arg,
		  struct fuse_file_info *fi, unsigned flags,
		  const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	int ret;

	if (flags & FUSE_IOCTL_COMPAT)
		fuse_reply_err(req, ENOSYS);
	else if ((cmd == FS_IOC_GETFLAGS && out_bufsz >= sizeof(unsigned)) ||
		 (cmd == FS_IOC_FSGETXATTR && out_bufsz >= sizeof(struct fsxattr)))
		ioctl_get(req, ino, cmd);
	else if ((ret = ioctl_set(req, ino, cmd, in_buf, in_bufsz)))
		fuse_reply_err(req, -ret);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
}

/* ---- directories ---------------------------------------------------------- */

void rfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = rfs_fs(req);
	uint64_t fh;
	int ret = fs_opendir(fs, ino, &fh);

	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	fi->fh = fh;
	if (fuse_reply_open(req, fi) == -ENOENT)
		fs_releasedir(fs, ino, fh);
}

/*
 * One readdir reply being filled.  In plus mode every entry but "." and
 * ".." carries a lookup reference; inos remembers them so that a reply the
 * kernel never receives gives them back.
 */
struct dir_fill {
	fuse_req_t req;
	char *buf;
	size_t size;
	size_t pos;
	bool plus;
	uint64_t *inos;
	size_t ninos;
	size_t cap;
};

static bool name_is_dot(const char *name)
{
	return name[0] == '.' &&
		(name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

static int dir_fill_plus(struct dir_fill *df, const char *name,
			 const struct fs_attr *a, uint64_t cookie)
{
	struct fuse_entry_param e;
	bool dot = name_is_dot(name);
	size_t len;

	if (!dot && df->ninos == df->cap) {
		size_t cap = df->cap ? 2 * df->cap : 64;
		uint64_t *p = realloc(df->inos, cap * sizeof(*p));

		if (!p)
			return 1;
		df->inos = p;
		df->cap = cap;
	}
	rfs_entry_from_attr(df->req, a, &e);
	len = fuse_add_direntry_plus(df->req, df->buf + df->pos,
				     df->size - df->pos, name, &e,
				     (off_t)cookie);
	if (len > df->size - df->pos)
		return 1;
	if (!dot)
		df->inos[df->ninos++] = a->ino;
	df->pos += len;
	return 0;
}

static int dir_fill_one(void *arg, const char *name, const struct fs_attr *a,
			uint64_t next_cookie)
{
	struct dir_fill *df = arg;
	struct stat st;
	size_t len;

	if (df->plus)
		return dir_fill_plus(df, name, a, next_cookie);
	memset(&st, 0, sizeof(st));
	st.st_ino = a->ino;
	st.st_mode = a->mode;
	len = fuse_add_direntry(df->req, df->buf + df->pos, df->size - df->pos,
				name, &st, (off_t)next_cookie);
	if (len > df->size - df->pos)
		return 1;
	df->pos += len;
	return 0;
}

static void dir_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi, bool plus)
{
	struct dir_fill df = { .req = req, .size = size, .plus = plus };
	struct fs *fs = rfs_fs(req);
	size_t i;
	int ret;

	df.buf = malloc(size ? size : 1);
	if (!df.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = fs_readdir(fs, ino, fi->fh, (uint64_t)off, plus, dir_fill_one,
			 &df);
	if (!off && ret >= 0)
		note_access(rfs_daemon(req), ino, 0);
	/* entries already taken are delivered; the error comes next time */
	if (ret < 0 && !df.pos)
		fuse_reply_err(req, -ret);
	else if (fuse_reply_buf(req, df.buf, df.pos) == -ENOENT)
		for (i = 0; i < df.ninos; i++)
			fs_forget(fs, df.inos[i], 1);
	free(df.inos);
	free(df.buf);
}

void rfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	dir_read(req, ino, size, off, fi, false);
}

void rfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	dir_read(req, ino, size, off, fi, true);
}

void rfs_op_releasedir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	fs_releasedir(rfs_fs(req), ino, fi->fh);
	fuse_reply_err(req, 0);
}

void rfs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	fuse_reply_err(req, -fs_fsyncdir(rfs_fs(req), ino, datasync));
}

/* ---- extended attributes -------------------------------------------------- */

void rfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		     const char *value, size_t size, int flags)
{
	struct fs_ctx ctx = rfs_ctx(req);
	int ret = fs_setxattr(rfs_fs(req), &ctx, ino, name, value, size,
			      flags);

	rfs_space_changed(req, ret);
	fuse_reply_err(req, -ret);
}

/* size 0 asks for the length; otherwise the value, or ERANGE. */
static void reply_xattr(fuse_req_t req, ssize_t n, const void *buf,
			size_t size)
{
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (!size)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

void rfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		     size_t size)
{
	struct fs_ctx ctx = rfs_ctx(req);
	char *buf = size ? malloc(size) : NULL;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	reply_xattr(req, fs_getxattr(rfs_fs(req), &ctx, ino, name, buf, size),
		    buf, size);
	free(buf);
}

void rfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fs_ctx ctx = rfs_ctx(req);
	char *buf = size ? malloc(size) : NULL;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	reply_xattr(req, fs_listxattr(rfs_fs(req), &ctx, ino, buf, size), buf,
		    size);
	free(buf);
}

void rfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs_ctx ctx = rfs_ctx(req);

	fuse_reply_err(req, -fs_removexattr(rfs_fs(req), &ctx, ino, name));
}
