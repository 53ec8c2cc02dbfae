/*
 * source: the one way every raidfs program opens an array.
 *
 * From what the user typed - SOURCE (the members joined by ':', or an
 * array configuration file) and -o options - to opened members, an
 * assembled raidcore array, the block device the filesystem sits on and,
 * when asked, the mounted filesystem.  The daemon, mkfs.raidfs,
 * fsck.raidfs and raidfsctl all go through here, so they agree on what a
 * SOURCE means, which member is missing and why.
 *
 * Layer: above raidcore (raidcore.h) and fs (fs.h, bdev.h), below the
 * programs.  No FUSE in it.
 *
 * Usage pattern:
 *   config_opts_init(&o)
 *   source_load(source, optstr, &src, &o, err, len)   parse SOURCE, then -o
 *   source_array_open(&src, &o, &sa, err, len)        members -> array -> bdev
 *   source_fs_mount(&sa, &o, err, len)                optional: sa.fs
 *   ... use sa.array, sa.bdev, sa.fs ...
 *   source_close(&sa)                                 unmount, close (clean)
 *   config_source_free(&src); config_opts_free(&o)
 *
 * Messages about the array's health (missing members, replay) go to
 * rfs_log (log.h); errors that stop the open go to err.
 */
#ifndef RAIDFS_SOURCE_H
#define RAIDFS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "raidcore.h"
#include "config.h"

struct fs;
struct fs_bdev;

struct source_array {
	struct rc_array *array;
	struct fs_bdev *bdev;       /* the logical device fs is stored on */
	struct fs *fs;              /* after source_fs_mount, else NULL */
	struct rc_info info;        /* as assembled */
	bool closed_degraded;       /* source_close: not redundant when the
				       filesystem's last writes were done */
};

/*
 * Parses SOURCE into src (a configuration file's options become defaults
 * in o), then optstr (may be NULL) over them.  Unknown options are left in
 * o->ignored.  -EINVAL with err set on anything malformed, and on a cache
 * larger than the machine's memory.
 */
int source_load(const char *source, const char *optstr,
		struct config_source *src, struct config_opts *o, char *err,
		size_t errlen);

/* The file loop device st reads and writes (its backing file, from
 * sysfs) into backing: 0, or -ENOENT for any other device or file. */
int source_loop_backing_stat(const struct stat *st, struct stat *backing);

/* The same block device (rdev), or the same file (device and inode)? */
bool source_stat_identical(const struct stat *a, const struct stat *b);

/*
 * Do st and other name one device: the same block device (rdev), or the
 * same file (device and inode)?  A loop device and the file it reads are
 * one too (its backing file, from sysfs).
 */
bool source_stat_same(const struct stat *st, const struct stat *other);

/* As source_stat_same, for two paths; false if either cannot be stat'ed. */
bool source_same_device(const char *path, const char *other);

/* rc_dev_open_file, waiting up to 10 s while the member is in use
 * (-EBUSY: a daemon still closing it after umount holds its lock). */
int source_member_open(const char *path, unsigned flags, struct rc_dev **dev);

/*
 * -EINVAL, with err naming them, when two of src's members and spares are
 * one device (the same path twice, a symlink, hard links, a loop device
 * and its file): a typo that would otherwise leave one of them out, or
 * wait for its own lock.  Paths that cannot be stat'ed are left to the
 * open that follows.  0 otherwise.
 */
int source_members_distinct(const struct config_source *src, char *err,
			    size_t errlen);

/*
 * Opens every member and spare of src (one that cannot be opened is logged
 * and counts as missing; one in use is waited for, then refused), leaves
 * out members of another array than the one a configuration file names
 * (none of them: -EINVAL, nothing assembled), assembles the array
 * (read-only with o->ro; only fully redundant with degraded=refuse), logs
 * the array's health and wraps it as a bdev.  On failure nothing is left
 * open.
 */
int source_array_open(const struct config_source *src,
		      const struct config_opts *o, struct source_array *sa,
		      char *err, size_t errlen);

/* Mounts the filesystem on sa->bdev with o's flags and cache size. */
int source_fs_mount(struct source_array *sa, const struct config_opts *o,
		    char *err, size_t errlen);

/* Logs the array's state, every member's state and error counters, and
 * the filesystem's free space (if mounted): what SIGUSR1 asks for. */
void source_status_log(const struct source_array *sa);

/* Unmounts the filesystem (if mounted), closes the bdev and the array
 * (rc_array_close marks it clean).  0 or the first error. */
int source_close(struct source_array *sa);

/*
 * Is an array with one of src's members (or its configuration file) mounted
 * by a raidfs daemon?  1 (where and whether read-write filled in), 0, or
 * -errno when the mount table cannot be read.
 */
int source_find_mount(const struct config_source *src, char *where,
		      size_t len, bool *rw);

#endif
