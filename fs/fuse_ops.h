/*
 * fuse_ops: the raidfs daemon's layer between libfuse's low-level API and
 * the filesystem library (fs.h).
 *
 *   raidfs_main.c   command line, daemonising, session set-up and teardown
 *   fuse_array.c    members -> assembled raidcore array -> fs_bdev
 *   fuse_ops.c      the request handlers: decode, call fs_*, reply once
 *   fuse_log.c      messages to stderr (-f) or syslog (daemonised)
 *
 * Usage pattern:
 *   rfs_array_open()  ->  fs_mount_opts()  ->  fuse_session_new(rfs_ops,
 *   struct rfs_daemon)  ->  loop  ->  fs_unmount()  ->  rfs_array_close()
 */
#ifndef RAIDFS_FUSE_OPS_H
#define RAIDFS_FUSE_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>
#include <sys/stat.h>

#include "config.h"

struct fs;
struct fs_bdev;
struct rc_array;

/* The daemon's state, the userdata of every request (fuse_req_userdata). */
struct rfs_daemon {
	struct fs *fs;
	double timeout;        /* entry and attribute cache lifetime, seconds */
	bool writeback;        /* the kernel granted writeback caching: it
				  then owns O_APPEND and file sizes */
	bool ro;
	bool dont_mask;        /* the kernel leaves the umask to fs (which
				  skips it under a default ACL) */
	struct rfs_inval *inval;   /* fuse_inval.c */
};

/* fuse_inval.c: drop the kernel's cached attributes, asynchronously. */
int rfs_inval_start(struct rfs_daemon *d, struct fuse_session *se);
void rfs_inval_stop(struct rfs_daemon *d);
void rfs_inval_attr(struct rfs_daemon *d, uint64_t ino);
void rfs_inval_attr_now(struct rfs_daemon *d, uint64_t ino);
static inline struct rfs_daemon *rfs_daemon(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

extern const struct fuse_lowlevel_ops rfs_ops;

/* ---- handler helpers, shared by fuse_ops.c and fuse_io.c ------------------ */
#define RFS_MAX_WRITE (1u << 20)

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
void rfs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
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
void rfs_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			    struct fuse_file_info *fi_in, fuse_ino_t ino_out,
			    off_t off_out, struct fuse_file_info *fi_out,
			    size_t len, int flags);

/* ---- fuse_array.c -------------------------------------------------------- */
struct rfs_array {
	struct rc_array *array;
	struct fs_bdev *bdev;
};

/*
 * Opens every member and spare of src (a missing or unopenable one is
 * logged and counts as missing), assembles the array (read-only with o->ro,
 * only fully redundant with degraded=refuse), checks the UUID the
 * configuration file names, logs degraded state and journal replay, and
 * wraps the array as a bdev.  err gets the reason on failure.
 */
int rfs_array_open(const struct config_source *src,
		   const struct config_opts *o, struct rfs_array *ra,
		   char *err, size_t errlen);
/* Closes the bdev and the array (rc_array_close marks it clean). */
int rfs_array_close(struct rfs_array *ra);

/*
 * Formats the members as a new array and an empty filesystem (rc_array_create
 * then fs_format): the tests' stand-in until mkfs.raidfs exists.
 */
struct rfs_format_args {
	int level;
	uint32_t chunk_bytes;
	const char *label;
	int nspares;           /* the last nspares paths are spares */
};
int rfs_array_format(char **paths, int n, const struct rfs_format_args *f,
		     char *err, size_t errlen);

/* ---- fuse_acl.c: POSIX ACL duties the kernel leaves to the daemon -------- */
struct rfs_acl_inherit {
	void *access;          /* access ACL for the new inode */
	size_t access_size;
	bool access_needed;    /* it says more than the mode bits */
	void *dflt;            /* default ACL, for a new directory */
	size_t dflt_size;      /* 0: not a directory */
};

/* After setxattr of name: an access ACL sets the mode bits. */
int rfs_acl_set_mode(struct fs *fs, uint64_t ino, const char *name,
		     const void *value, size_t size);
/* After a mode change: the access ACL follows. */
int rfs_acl_chmod(struct fs *fs, uint64_t ino, mode_t mode);
/* Before creating in parent (mode includes the S_IFMT type). */
int rfs_acl_inherit_prepare(struct fs *fs, uint64_t parent, mode_t *mode,
			    struct fs_ctx *ctx, struct rfs_acl_inherit *inh);
/* After creating ino. */
int rfs_acl_inherit_apply(struct fs *fs, uint64_t ino,
			  struct rfs_acl_inherit *inh);
void rfs_acl_inherit_free(struct rfs_acl_inherit *inh);
/* apply + free, logging a failure (the inode exists either way) */
void rfs_acl_inherit_finish(struct fs *fs, uint64_t ino,
			    struct rfs_acl_inherit *inh);

/* ---- fuse_log.c ---------------------------------------------------------- */
enum rfs_log_target {
	RFS_LOG_STDERR,
	RFS_LOG_BOTH,          /* daemonising: the user's terminal is still there */
	RFS_LOG_SYSLOG,
};
void rfs_log_init(enum rfs_log_target target);
void rfs_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
