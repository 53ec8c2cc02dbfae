/*
 * fs: the raidfs filesystem library, the API the FUSE low-level daemon calls.
 *
 * Modelled on fuse_lowlevel_ops but free of FUSE types.  Inode numbers are
 * 64-bit; FS_ROOT_INO equals FUSE_ROOT_ID, so the daemon passes inode
 * numbers through unchanged.  Every function returns 0 (or a non-negative
 * count) on success and a negative errno on failure; the daemon negates it
 * for fuse_reply_err().  Permission checks are the kernel's
 * (default_permissions, sticky directories included); the filesystem
 * applies what the kernel leaves to it, each in the one transaction of the
 * operation, so a daemon only passes requests through: setgid directory
 * inheritance, the umask from fs_ctx, POSIX ACL semantics (a new inode gets
 * the ACLs its directory's default ACL implies, and then the umask does not
 * apply; chmod updates the access ACL; setting the access ACL sets the
 * mode), the xattr namespace rules for the caller, and O_APPEND placement.
 *
 * Usage pattern:
 *   fs_format(bdev, params)                     once, from mkfs
 *   fs_mount(bdev, flags, &fs)                  replays the journal, frees
 *                                               orphans left by a crash
 *   fs_lookup / fs_create / ... / fs_forget     from any number of threads
 *   fs_unmount(fs)                              commits, checkpoints, marks
 *                                               clean; the bdev stays open
 *
 * Lookup references (as FUSE's nlookup): fs_lookup, fs_mknod, fs_mkdir,
 * fs_symlink, fs_link, fs_create and fs_readdir in plus mode take one
 * reference on the inode they return; fs_forget(ino, n) drops n.  An inode
 * whose link count reaches 0 lives until its last reference and its last
 * open handle (fs_release) are gone; it sits on the on-disk orphan list
 * meanwhile, so a crash cannot leak it.  The root has a permanent reference.
 *
 * Durability: every operation is applied to the running metadata
 * transaction and becomes durable at the next commit (group commit, at most
 * a few seconds later).  fs_fsync, fs_fsyncdir and fs_syncfs return only
 * when the data and the metadata they cover are durable on the bdev
 * (fs_fsync: the file's data and inode, including the names created with
 * it; fs_fsyncdir and fs_syncfs: everything).
 *
 * Lock order (take left before right; fs_int.h declares the locks):
 *   fs->ns_lock (rwlock: rename and fs_check write, other name ops read)
 *     -> inode->lock (rwlock; a directory's lock guards its names; several
 *        only in ascending inode number, never a child's while holding
 *        its directory's)
 *       -> journal handle (fs_tx_begin may wait for a commit; a thread that
 *          holds a handle never waits for an inode lock or ns_lock)
 *         -> fs->orphan_lock or fs->ichunks.lock (never both)
 *            -> fs->alloc.lock -> fs->j.lock -> fs->icache_lock
 *            -> bcache lock -> buffer lock
 * fs->commit_lock serializes commits; it is taken only by a thread holding
 * no handle.
 */
#ifndef FS_FS_H
#define FS_FS_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include "bdev.h"

#define FS_ROOT_INO 1ull
#define FS_NAME_MAX 255         /* bytes, without the NUL */
#define FS_SYMLINK_MAX 4095     /* bytes, without the NUL */
#define FS_BLOCK_SIZE 4096u
#define FS_LABEL_MAX 64         /* bytes, including the NUL */
#define FS_XATTR_NAME_MAX 255
#define FS_XATTR_SIZE_MAX 3968  /* the largest POSIX ACL value (acl.c) */

struct fs;

/* Who is calling (from fuse_req_ctx): the owner of what it creates, and
 * whom the xattr namespace and setgid rules apply to.  uid 0 stands for
 * CAP_FSETID. */
struct fs_ctx {
	uid_t uid;
	gid_t gid;
	mode_t umask;   /* applied to the mode of new inodes; 0 if the kernel
			   already applied it */
	/* Is the caller in group g through its supplementary groups?  NULL:
	 * it has none.  Asked only when a setgid rule needs the answer (the
	 * daemon reads them from /proc). */
	bool (*in_groups)(const struct fs_ctx *ctx, gid_t g);
	void *arg;      /* for in_groups */
};

struct fs_attr {
	uint64_t ino;
	uint64_t generation;    /* for fuse_entry_param.generation */
	mode_t mode;
	uint32_t nlink;
	uid_t uid;
	gid_t gid;
	dev_t rdev;
	uint64_t size;          /* bytes */
	uint64_t blocks;        /* 512-byte units allocated */
	struct timespec atime;
	struct timespec mtime;
	struct timespec ctime;
	struct timespec crtime;
	uint32_t blksize;       /* preferred I/O size */
};

/* fs_setattr's to_set bits: the values of FUSE_SET_ATTR_*. */
#define FS_SET_ATTR_MODE (1 << 0)
#define FS_SET_ATTR_UID (1 << 1)
#define FS_SET_ATTR_GID (1 << 2)
#define FS_SET_ATTR_SIZE (1 << 3)
#define FS_SET_ATTR_ATIME (1 << 4)
#define FS_SET_ATTR_MTIME (1 << 5)
#define FS_SET_ATTR_ATIME_NOW (1 << 7)
#define FS_SET_ATTR_MTIME_NOW (1 << 8)
#define FS_SET_ATTR_CTIME (1 << 10)
/*
 * Privileges to take away, as Linux does (fs_setattr_ctx): with
 * FS_SET_ATTR_UID or _GID, or with FS_SET_ATTR_CHOWN (a chown(2) that
 * changes no id), as chown does, for any caller; else as a write or a
 * truncate does, for a caller without CAP_FSETID.  KILL_SUIDGID is the
 * kernel's FATTR_KILL_SUIDGID (killpriv_v2, the value libfuse passes on);
 * KILL_SGID the daemon's translation of the SETATTR with no attribute
 * that the kernel sends from the writer when it finds privileges to drop.
 */
#define FS_SET_ATTR_KILL_SUIDGID (1 << 11)
#define FS_SET_ATTR_KILL_SGID (1 << 12)
#define FS_SET_ATTR_CHOWN (1 << 20)
/* With MTIME and CTIME alone: the kernel's writeback cache writing back
 * times it moved itself, applied whatever the inode's flags say (the
 * kernel shows them already; see the daemon's op_setattr). */
#define FS_SET_ATTR_CACHED_TIMES (1 << 21)

/*
 * Where the library's messages go (damaged metadata, a failed commit, an
 * unreadable file range); level is syslog's.  Default (NULL): stderr.
 * Programs route it with their other messages (source/log.c).
 */
void fs_set_logger(void (*fn)(int level, const char *msg));

/* ---- Format and mount ---------------------------------------------------- */
struct fs_format_params {
	char label[FS_LABEL_MAX];
	uint8_t uuid[16];               /* all zero: generate */
	/* The most inodes (inodes are allocated as needed, nothing is
	 * reserved): inodes, else one per bytes_per_inode, else as many as
	 * the space holds. */
	uint64_t inodes;
	uint32_t bytes_per_inode;
	uint64_t journal_blocks;        /* 0: about 1/64 of the device, 1 MiB
					   to 128 MiB */
};

/* Writes an empty filesystem (root directory only) on bdev and flushes. */
int fs_format(struct fs_bdev *bdev, const struct fs_format_params *p);

#define FS_MOUNT_RDONLY (1u << 0)
#define FS_MOUNT_NOATIME (1u << 1)      /* default is relatime */
#define FS_MOUNT_STRICTATIME (1u << 2)  /* every access moves atime */
#define FS_MOUNT_NODIRATIME (1u << 3)   /* directories' atime never moves */
/* fsck's mounts: a block bitmap block that cannot be read is taken as all
 * used (nothing allocates there) instead of failing the mount; the repair
 * rewrites it from its scan */
#define FS_MOUNT_REPAIR (1u << 4)

struct fs_mount_opts {
	unsigned flags;                 /* FS_MOUNT_* */
	uint64_t cache_bytes;           /* metadata buffer cache; 0: 64 MiB */
	unsigned commit_interval_ms;    /* group commit period; 0: 1000 */
};

/*
 * Reads the superblock, replays the journal, frees orphans (unless read-only)
 * and starts the commit thread.  The bdev must stay open until fs_unmount()
 * returns.  -EINVAL: not a raidfs filesystem; -EUCLEAN: checksum or
 * structure damage; -EOPNOTSUPP: unknown incompat features or newer major
 * version; -EROFS: a read-write mount of a filesystem with unknown ro_compat
 * features.
 */
int fs_mount(struct fs_bdev *bdev, unsigned flags, struct fs **out);
int fs_mount_opts(struct fs_bdev *bdev, const struct fs_mount_opts *o,
		  struct fs **out);

/* Commits, checkpoints the journal, marks the filesystem clean, frees fs. */
int fs_unmount(struct fs *fs);
/* Frees fs without writing anything, as a power cut would (tests). */
void fs_abandon(struct fs *fs);

struct fs_info {
	char label[FS_LABEL_MAX];
	uint8_t uuid[16];
	uint64_t blocks;
	uint64_t inodes;                /* the most inode numbers (mkfs) */
	uint64_t inode_blocks;          /* data-area blocks the inode chunks
					   and their map take (in use in
					   statfs, owned by no file) */
	uint64_t replayed_txns;         /* journal transactions replayed */
	uint64_t orphans_freed;         /* orphan inodes freed at mount */
	bool was_clean;                 /* the last unmount was clean */
	bool rdonly;
	/* FS_MOUNT_REPAIR only: a journal block could not be read, so replay
	 * stopped there and the rest of the journal is given up
	 * (journal_lost_pos: its ring position, UINT64_MAX for the journal
	 * superblock); journal_reset: this read-write mount then zeroed the
	 * ring and started it again */
	bool journal_lost, journal_reset;
	uint64_t journal_lost_pos;
	/* superblock copy 0 failed its check at this mount: copy 1 was
	 * used, and written over copy 0 unless the mount is read-only */
	bool sb_copy0_damaged;
};
int fs_get_info(struct fs *fs, struct fs_info *info);

/*
 * Calls fn for every run of blocks that is free and not waiting for a
 * commit (so nothing references it, even after a crash); stops at the
 * first non-zero return and passes it on.  Tools use it to tell the block
 * layer what it need not keep (fsck --rebuild discards them first).
 */
int fs_free_runs(struct fs *fs, int (*fn)(void *ctx, uint64_t blk,
					  uint64_t len), void *ctx);

/* ---- Inodes and names ---------------------------------------------------- */
/* "." is parent itself, of any type (a free inode: -ENOENT); ".." of a
 * directory is its parent.  Both take a lookup reference, as names do. */
int fs_lookup(struct fs *fs, uint64_t parent, const char *name,
	      struct fs_attr *attr);
void fs_forget(struct fs *fs, uint64_t ino, uint64_t nlookup);
int fs_getattr(struct fs *fs, uint64_t ino, struct fs_attr *attr);
/* Applies the to_set fields of in; out (may be NULL) gets the result.  A
 * mode change carries the access ACL along (POSIX: owner, mask or owning
 * group, and other entries follow the bits), in the same transaction. */
int fs_setattr(struct fs *fs, uint64_t ino, const struct fs_attr *in,
	       int to_set, struct fs_attr *out);
/*
 * As fs_setattr, for the caller ctx (NULL: as fs_setattr, CAP_FSETID).
 * S_ISGID is dropped (Linux 6.x setattr_prepare and
 * setattr_should_drop_sgid) when a mode change, a size change or
 * FS_SET_ATTR_KILL_SGID comes from a caller neither in the file's group
 * (the new group, when it changes too) nor uid 0.  The KILL bits drop
 * privileges as their comment above says: S_ISUID, and S_ISGID when the
 * group may execute or the caller is outside the file's group (and, for
 * a chown, lacks CAP_FSETID); regular files only (chown: all but
 * directories).
 */
int fs_setattr_ctx(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		   const struct fs_attr *in, int to_set, struct fs_attr *out);
/* A write (or an O_TRUNC open) by ctx: drops S_ISUID and S_ISGID as
 * FS_SET_ATTR_KILL_SUIDGID does.  1 if the mode changed, 0 if not. */
int fs_kill_privs(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino);

int fs_mknod(struct fs *fs, const struct fs_ctx *ctx, uint64_t parent,
	     const char *name, mode_t mode, dev_t rdev, struct fs_attr *attr);
int fs_mkdir(struct fs *fs, const struct fs_ctx *ctx, uint64_t parent,
	     const char *name, mode_t mode, struct fs_attr *attr);
int fs_symlink(struct fs *fs, const struct fs_ctx *ctx, const char *target,
	       uint64_t parent, const char *name, struct fs_attr *attr);
/* Copies at most size bytes of the target (no NUL added); returns the
 * number copied, the whole target when size >= FS_SYMLINK_MAX. */
ssize_t fs_readlink(struct fs *fs, uint64_t ino, char *buf, size_t size);
int fs_unlink(struct fs *fs, uint64_t parent, const char *name);
int fs_rmdir(struct fs *fs, uint64_t parent, const char *name);

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif
/* flags: RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT (the old name
 * then names a new whiteout, a character device 0:0 as overlayfs makes
 * them, in the rename's transaction; owned by the caller, root for
 * fs_rename). */
int fs_rename(struct fs *fs, uint64_t parent, const char *name,
	      uint64_t newparent, const char *newname, unsigned flags);
int fs_rename_ctx(struct fs *fs, const struct fs_ctx *ctx, uint64_t parent,
		  const char *name, uint64_t newparent, const char *newname,
		  unsigned flags);
int fs_link(struct fs *fs, uint64_t ino, uint64_t newparent,
	    const char *newname, struct fs_attr *attr);

/* ---- Files --------------------------------------------------------------- */
/* flags as open(2); O_TRUNC truncates.  *fh is an opaque handle. */
int fs_open(struct fs *fs, uint64_t ino, int flags, uint64_t *fh);
/* Creates name (or opens it when it exists and O_EXCL is not in flags). */
int fs_create(struct fs *fs, const struct fs_ctx *ctx, uint64_t parent,
	      const char *name, mode_t mode, int flags, struct fs_attr *attr,
	      uint64_t *fh);
/* Moves no atime (the caller decides what is an access: fs_accessed). */
ssize_t fs_read(struct fs *fs, uint64_t ino, uint64_t off, size_t size,
		void *buf);
/*
 * ino was read (a file opened read-only or read, a directory listed):
 * its atime moves as the mount's policy says - relatime (when atime is not
 * after mtime and ctime, or a day old), strictatime (always), noatime and
 * nodiratime (never; directories).  1: atime moved, 0: it did not, or
 * -errno.
 */
int fs_accessed(struct fs *fs, uint64_t ino);
/* flags: the file's open(2) flags; with O_APPEND the data goes at the end
 * of file (off is ignored), placed under the inode's lock so concurrent
 * appends never overlap.  (With the kernel's writeback cache the kernel
 * places appends itself and the daemon passes no O_APPEND.)
 * FS_WRITE_CACHE: the kernel's page cache writes back, and owns mtime and
 * ctime (it sends them in a SETATTR): a write over written blocks inside
 * the size changes nothing of the inode and runs beside the others, under
 * the inode's lock shared. */
#define FS_WRITE_CACHE (1 << 30)        /* no open(2) flag uses this bit */
ssize_t fs_write(struct fs *fs, uint64_t ino, uint64_t off, size_t size,
		 const void *buf, int flags);
int fs_release(struct fs *fs, uint64_t ino, uint64_t fh);
/* What ino's cached write-backs stored so far may have been answered for
 * without fs seeing it (a close(2) of one of several descriptors of one
 * open file, which sends no RELEASE), and the kernel is about to take a
 * new write(2) (its GETATTR) or the filesystem got near full: a cached
 * write-back that finds no space later never cuts the file below what is
 * stored now (fs_ops.c hole_cut). */
void fs_wb_settle(struct fs *fs, uint64_t ino);
int fs_fsync(struct fs *fs, uint64_t ino, int datasync);
/* Has ino's st_blocks changed since a caller last said it showed them
 * (fs_blocks_shown with this *version; an inode new in memory: yes)?  For
 * the daemon's fsync, which must not leave the kernel a stale cached
 * st_blocks and need not drop its cached attributes otherwise: it drops
 * them, then says so.  Two callers at once both see the change until one
 * has said it. */
bool fs_blocks_changed(struct fs *fs, uint64_t ino, uint64_t *version);
void fs_blocks_shown(struct fs *fs, uint64_t ino, uint64_t version);
/* chattr/lsattr flags (FS_IOC_GETFLAGS values): FS_IMMUTABLE_FL,
 * FS_APPEND_FL, FS_NODUMP_FL; others are -EOPNOTSUPP.  An immutable inode
 * refuses every change with -EPERM, an append-only one every change but
 * growth at its end (iflags.c). */
int fs_getflags(struct fs *fs, uint64_t ino, unsigned *flags);
int fs_setflags(struct fs *fs, uint64_t ino, unsigned flags);
/* mode: 0 or FALLOC_FL_ZERO_RANGE, each with or without FALLOC_FL_KEEP_SIZE;
 * FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE. */
int fs_fallocate(struct fs *fs, uint64_t ino, int mode, uint64_t off,
		 uint64_t len);
/* SEEK_SET/CUR are the kernel's; SEEK_DATA/SEEK_HOLE: offset or -ENXIO. */
off_t fs_lseek(struct fs *fs, uint64_t ino, off_t off, int whence);
ssize_t fs_copy_file_range(struct fs *fs, uint64_t ino_in, uint64_t off_in,
			   uint64_t ino_out, uint64_t off_out, size_t len,
			   int flags);

/* ---- Directories --------------------------------------------------------- */
int fs_opendir(struct fs *fs, uint64_t ino, uint64_t *fh);

/*
 * Called once per entry, in cookie order.  next_cookie is the offset to pass
 * to fs_readdir to continue after this entry (FUSE's "off" of the entry).
 * attr has at least ino and the file type bits of mode; in plus mode it is
 * complete.  Return 0 to take the entry, nonzero to stop (the entry is not
 * taken and, in plus mode, its lookup reference is not kept).
 */
typedef int (*fs_filldir_t)(void *arg, const char *name,
			    const struct fs_attr *attr, uint64_t next_cookie);

/*
 * Delivers entries from cookie on ("." and ".." first, at cookies 0 and 1).
 * Cookies are stable 64-bit values derived from the name hash: entries
 * inserted or removed meanwhile do not make a pass repeat or skip any other
 * entry.  plus: full attributes and a lookup reference per taken entry
 * (not for "." and "..").
 */
int fs_readdir(struct fs *fs, uint64_t ino, uint64_t fh, uint64_t cookie,
	       bool plus, fs_filldir_t fill, void *arg);
int fs_releasedir(struct fs *fs, uint64_t ino, uint64_t fh);
int fs_fsyncdir(struct fs *fs, uint64_t ino, int datasync);

/* ---- Whole filesystem ---------------------------------------------------- */
int fs_statfs(struct fs *fs, struct statvfs *st);
/*
 * Bytes file data can still take: free blocks beyond the metadata reserve,
 * and blocks freed by transactions not yet committed (a write that needs
 * them commits first).  Cheap (one lock, no I/O): the daemon asks it for
 * every write near full.
 */
uint64_t fs_space_avail(struct fs *fs);
/*
 * Bytes that whatever takes data space - a write(2) that reaches fs
 * itself (a FOPEN_DIRECT_IO or O_DIRECT handle, or any write without the
 * writeback cache), fallocate, a symlink's target, an extended attribute
 * block, an inode chunk - must leave free; FS_WRITE_CACHE writes may use
 * them: they are what the kernel's writeback cache may still hold,
 * admitted against that space (the daemon's fuse_space.c).  0 (the
 * default): none.  Writes over mapped blocks and into fallocated ranges
 * need no new blocks and never fail for it; removals and directory
 * blocks take from the metadata reserve as before.
 */
void fs_space_keep(struct fs *fs, uint64_t bytes);
int fs_syncfs(struct fs *fs);

/* ---- Damage (report.c) --------------------------------------------------- */
/*
 * A path of ino, for messages: each inode's name from the entry it was
 * last reached through (a directory's from its parent pointer), up to the
 * root.  -ENOENT (buf "") when no name is known, as for an unlinked file.
 * Caller holds no lock.
 */
int fs_path(struct fs *fs, uint64_t ino, char *buf, size_t len);
/* The same, and when no name is remembered (a file not looked up since
 * mount), a search of the directory tree for an entry naming ino: for the
 * rare damaged file, not for a hot path.  -ENOENT (buf "") when no
 * directory names it. */
int fs_path_find(struct fs *fs, uint64_t ino, char *buf, size_t len);
/*
 * The files that hold the blocks blocks[0 .. n) (logical array blocks,
 * sorted ascending): fn(ctx, ino, off, block) for each block that an
 * extent of a regular file or symlink maps, off being its byte offset in
 * the file.  A scan of every inode's map (there is no reverse map): for
 * the rare block found unrecoverable, not for a hot path.  Caller holds no
 * lock; fn is called with the inode's lock held (read), so it must not
 * call the filesystem.  0, or -ENOMEM.
 */
int fs_blocks_owners(struct fs *fs, const uint64_t *blocks, size_t n,
		     void (*fn)(void *ctx, uint64_t ino, uint64_t off,
				uint64_t block),
		     void *ctx);

/*
 * Full consistency check of an idle filesystem (tests, fsck): every block
 * used once and marked so in the bitmap, inode bitmap, link counts, block
 * counts, directory keys, tree order.  0, -EUCLEAN (r says what), or an
 * I/O error.
 */
struct fs_check_report {
	uint64_t inodes, dirs, files;
	uint64_t blocks_used;           /* data area and metadata, in blocks */
	uint64_t errors;
	char first_error[160];
};
int fs_check(struct fs *fs, struct fs_check_report *r);

/* ---- Extended attributes ------------------------------------------------- */
/*
 * Namespaces, for the caller ctx: user.* (regular files and directories
 * only), trusted.* (uid 0 only: hidden from others, -EPERM to write),
 * security.*, and of system.* the two POSIX ACLs; any other name is
 * -EOPNOTSUPP.  Setting system.posix_acl_access sets the permission bits
 * from the ACL in the same transaction and stores the ACL only if it says
 * more than the bits (-EINVAL: not a valid ACL); removing it leaves the
 * mode.  A mode change by fs_setattr updates the access ACL likewise.
 *
 * flags: 0, XATTR_CREATE (-EEXIST), XATTR_REPLACE (-ENODATA).  A value may
 * be up to XATTR_SIZE_MAX (64 KiB; -E2BIG beyond, as the syscall), an
 * inode may have as many attributes as space allows (-ENOSPC), a POSIX ACL
 * up to FS_XATTR_SIZE_MAX bytes.
 */
int fs_setxattr(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		const char *name, const void *value, size_t size, int flags);
/* size 0: returns the value's size; too small: -ERANGE; absent: -ENODATA. */
ssize_t fs_getxattr(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		    const char *name, void *buf, size_t size);
/* NUL-separated names ctx may see; same size rules as fs_getxattr. */
ssize_t fs_listxattr(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		     char *buf, size_t size);
int fs_removexattr(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		   const char *name);
/* A write drops the file's capabilities (security.capability), whoever
 * makes it and whatever CAP_FSETID says, as the VFS's file_remove_privs
 * does.  For the writes that reach fs without the kernel having done it:
 * O_DIRECT writes on a FOPEN_DIRECT_IO handle.  1 if there were some, 0
 * if not (or the file refuses writes: the write fails then). */
int fs_kill_caps(struct fs *fs, uint64_t ino);

#endif
