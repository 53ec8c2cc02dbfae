/*
 * fuse_ops: the raidfs daemon's layer between libfuse's low-level API and
 * the filesystem library (fs.h).
 *
 *   raidfs_main.c   command line, daemonising, the order of a mount
 *   mount_main.c    mount.raidfs, the helper mount(8) runs
 *   session.c       the FUSE session: created, mounted, served
 *   signals.c       SIGUSR1, SIGUSR2, SIGHUP, SIGPIPE
 *   fuse_ops.c      the request handlers: decode, call fs_*, reply once
 *   fuse_io.c       handlers for files, directories, xattrs
 *   fuse_inval.c    dropping the kernel's cached attributes
 *   fuse_space.c    write(2) fails with ENOSPC near full; the mount's
 *                   readahead (both set through its bdi in sysfs)
 *   fuse_hook.c     /dev/fuse read and written by the daemon (killpriv_v2)
 *
 * The array and the filesystem are opened by the shared layer
 * (source/source.h), as every raidfs program does.
 *
 * Usage pattern:
 *   source_array_open()  ->  source_fs_mount()  ->
 *   fuse_session_new(rfs_ops, struct rfs_daemon)  ->  loop  ->
 *   source_close()
 */
#ifndef RAIDFS_FUSE_OPS_H
#define RAIDFS_FUSE_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "config.h"
#include "log.h"

struct fs;
struct fs_bdev;
struct rc_array;

/* The daemon's state, the userdata of every request (fuse_req_userdata). */
struct rfs_daemon {
	struct fs *fs;
	double timeout;        /* entry and attribute cache lifetime, seconds */
	bool writeback;        /* the kernel granted writeback caching: it
				  then owns O_APPEND and file sizes */
	bool immutable_seen;   /* chattr +i was set on some inode since the
				  mount (atomic): only then does an
				  attribute reply look for it */
	bool ro;
	bool dont_mask;        /* the kernel leaves the umask to fs (which
				  skips it under a default ACL) */
	struct rfs_inval *inval;   /* fuse_inval.c */
	struct rfs_space *space;   /* fuse_space.c; NULL: nothing checked */
	/* fuse_hook.c: installed; the kernel takes FUSE_HANDLE_KILLPRIV_V2
	 * (the daemon clears setuid/setgid when a request asks); the kernel
	 * takes FUSE_DIRECT_IO_ALLOW_MMAP (O_DIRECT opens get
	 * FOPEN_DIRECT_IO); the unique of the INIT whose reply is still to
	 * be sent */
	bool hook;
	bool killpriv_v2;
	bool direct_io;
	uint64_t hook_init_unique;
	const char *mountpoint;    /* where it is mounted */
};

/* session.c: the FUSE session, created before the array is opened and
 * mounted after it (see the file). */
int rfs_session_new(const struct config_opts *o, const char *source,
		    struct rfs_daemon *d, struct fuse_session **out);
int rfs_session_mount(struct fuse_session *se, const char *mountpoint);
/* Serves until umount or SIGTERM/SIGINT, then unmounts and destroys se. */
int rfs_session_serve(struct fuse_session *se, struct rfs_daemon *d,
		      const char *mountpoint);
void rfs_session_destroy(struct fuse_session *se);

/* fuse_hook.c: the daemon reads and writes /dev/fuse itself (see the
 * file); install once mounted, before the loop. */
int rfs_hook_install(struct fuse_session *se, struct rfs_daemon *d);
/* the request this thread handles asks to clear setuid/setgid (a WRITE or
 * an OPEN with O_TRUNC by a caller without CAP_FSETID) */
bool rfs_req_kills_privs(void);

/* fuse_inval.c: drop the kernel's cached attributes, asynchronously. */
int rfs_inval_start(struct rfs_daemon *d, struct fuse_session *se);
void rfs_inval_stop(struct rfs_daemon *d);
void rfs_inval_attr(struct rfs_daemon *d, uint64_t ino);
void rfs_inval_attr_now(struct rfs_daemon *d, uint64_t ino);
/* chattr +i is set on ino (fuse_io.c) */
bool rfs_immutable(struct rfs_daemon *d, uint64_t ino);
/* drops the cached data of [off, off + len) (len 0: to the end of file),
 * writing dirty pages back first; from the handler, before its reply */
void rfs_inval_data_now(struct rfs_daemon *d, uint64_t ino, off_t off,
			off_t len);
/*
 * fuse_space.c: near full, write(2) is checked through the GETATTR the
 * kernel sends before it (with the handle); see the file.  start once
 * mounted, stop after the session loop.
 */
int rfs_space_start(struct rfs_daemon *d, const char *mountpoint);
void rfs_space_stop(struct rfs_daemon *d);
/* after data was written: enters or leaves the near-full state */
void rfs_space_update(struct rfs_daemon *d);
/* the attribute timeout for a reply about to carry ino's attributes
 * (not a write handle's GETATTR): near full, for an inode open for
 * writing, first drops the kernel's so that it discards the reply's and
 * the next write(2) asks GETATTR */
double rfs_attr_timeout(struct rfs_daemon *d, uint64_t ino);
/* a GETATTR with handle fi (may be NULL): 0, or -ENOSPC to fail the
 * write(2) it comes from */
int rfs_space_check(struct rfs_daemon *d, uint64_t ino,
		    const struct fuse_file_info *fi);
void rfs_space_opened(struct rfs_daemon *d, uint64_t ino, uint64_t fh);
/* Should an open with these flags bypass the page cache
 * (FOPEN_DIRECT_IO)?  Near full, a new handle for writing does: its writes
 * reach fs with their offsets, which fails only those that need blocks
 * that are not there. */
bool rfs_space_open_direct(const struct rfs_daemon *d, int flags);
/* the attribute timeout of a CREATE reply with handle fh */
double rfs_space_create_timeout(const struct rfs_daemon *d, uint64_t fh);
/* after answering a GETATTR with handle fi (may be NULL): near full, a
 * write handle's inode gets its attributes dropped again */
void rfs_space_checked(struct rfs_daemon *d, uint64_t ino,
		       const struct fuse_file_info *fi);
void rfs_space_released(struct rfs_daemon *d, uint64_t ino, uint64_t fh);
/*
 * Raises the readahead of the mount on mountpoint (its bdi's read_ahead_kb)
 * to kb, never lowers it; without the right to (an unprivileged daemon) it
 * stays, and the log says so.  Only after the INIT reply, which lowers it
 * to the smaller of the kernel's offer and the daemon's (fuse_hook.c).
 */
void rfs_readahead_raise(const char *mountpoint, uint32_t kb);
void rfs_space_log(const struct rfs_daemon *d);
/* f_bavail less the reserve one cached writer keeps (fs_statfs first) */
void rfs_space_statfs(const struct rfs_daemon *d, struct statvfs *st);
/* ino is open for writing (true when no table is kept): the kernel may
 * hold dirty pages of it */
bool rfs_space_has_writers(const struct rfs_daemon *d, uint64_t ino);

/*
 * fi->fh of a file: fs's handle shifted left by two, bit 0 set when it was
 * opened for writing - a GETATTR carries the handle but not the flags, and
 * fuse_space.c must tell write handles apart - and bit 1 when the open's
 * reply said FOPEN_DIRECT_IO (a WRITE carries the file's flags of the
 * moment, and fcntl can clear O_DIRECT while the handle stays direct).
 */
static inline uint64_t rfs_fh_make(uint64_t fs_fh, int flags, bool direct)
{
	return fs_fh << 2 | (uint64_t)direct << 1 |
	       ((flags & O_ACCMODE) != O_RDONLY);
}

static inline uint64_t rfs_fh_fs(uint64_t fh)
{
	return fh >> 2;
}

static inline bool rfs_fh_writes(uint64_t fh)
{
	return fh & 1;
}

static inline bool rfs_fh_direct(uint64_t fh)
{
	return fh >> 1 & 1;
}

static inline struct rfs_daemon *rfs_daemon(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* After a change that may have taken or given back space (a name, a
 * symlink's target, a directory or attribute block; ret 0: it was made):
 * the near-full state is judged again before the reply, so no write(2)
 * is admitted unchecked on space that metadata took (fuse_space.c). */
static inline void rfs_space_changed(fuse_req_t req, int ret)
{
	if (!ret)
		rfs_space_update(rfs_daemon(req));
}

extern const struct fuse_lowlevel_ops rfs_ops;

/* ---- handler helpers, shared by fuse_ops.c and fuse_io.c ------------------ */
#define RFS_MAX_WRITE (1u << 20)
/*
 * The mount's readahead: one READ of max_write ahead of a sequential
 * reader.  FUSE starts a mount at 128 KiB, and with it the kernel waits
 * for each READ in turn; 1 MiB reads a RAID 5 of 5 in tmpfs a fifth
 * faster, 2 and 4 MiB no faster than 1 (docs/DESIGN.md, Speed).
 */
#define RFS_READAHEAD RFS_MAX_WRITE

struct fs_attr;
struct fs_ctx;

static inline struct fs *rfs_fs(fuse_req_t req)
{
	return ((struct rfs_daemon *)fuse_req_userdata(req))->fs;
}

void rfs_stat_from_attr(const struct fs_attr *a, struct stat *st);
void rfs_entry_from_attr(fuse_req_t req, const struct fs_attr *a,
			 struct fuse_entry_param *e);
/* Replies with the entry; drops the lookup reference if it did not arrive. */
void rfs_reply_entry(fuse_req_t req, const struct fs_attr *a);
struct fs_ctx rfs_ctx(fuse_req_t req);
bool rfs_name_is_too_long(const char *name);

/* fuse_io.c: files, directories, extended attributes */
void rfs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void rfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		   mode_t mode, struct fuse_file_info *fi);
void rfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi);
void rfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		  size_t size, off_t off, struct fuse_file_info *fi);
void rfs_op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv,
		      off_t off, struct fuse_file_info *fi);
void rfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void rfs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		  struct fuse_file_info *fi);
void rfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void rfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void rfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi);
void rfs_op_releasedir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi);
void rfs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi);
void rfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		     const char *value, size_t size, int flags);
void rfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		     size_t size);
void rfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void rfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);
void rfs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
		      off_t length, struct fuse_file_info *fi);
void rfs_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		  struct fuse_file_info *fi);
void rfs_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned cmd, void *arg,
		  struct fuse_file_info *fi, unsigned flags,
		  const void *in_buf, size_t in_bufsz, size_t out_bufsz);
void rfs_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			    struct fuse_file_info *fi_in, fuse_ino_t ino_out,
			    off_t off_out, struct fuse_file_info *fi_out,
			    size_t len, int flags);

#endif
