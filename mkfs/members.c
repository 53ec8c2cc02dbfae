/*
 * members: open every device mkfs was given, and find the same device
 * named twice.
 *
 * Each member is opened read-write (a read-only member is found here, not
 * halfway through the format) and block devices exclusively (O_EXCL: a
 * mounted partition or a member of a running md array is refused by the
 * kernel with EBUSY).  Every member is tried, so one run reports every
 * problem, not only the first.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>

#include "mkfs.h"
#include "source.h"

static const char *open_error_text(int err)
{
	switch (err) {
	case -ENOENT: return "no such file or device";
	case -EACCES:
	case -EPERM: return "cannot be opened for writing (permission denied)";
	case -EROFS: return "cannot be opened for writing (read-only)";
	case -EBUSY: return "is busy: mounted, or held by another program or "
			    "array";
	case -EISDIR: return "is a directory";
	case -EINVAL: return "is neither a regular file nor a block device";
	case -EAGAIN: return "changed while it was being opened";
	default: return strerror(-err);
	}
}

/* How a and b come to name the same thing, for the message. */
static const char *same_reason(const struct mkfs_member *a,
			       const struct mkfs_member *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (realpath(a->path, ra) && realpath(b->path, rb) && !strcmp(ra, rb))
		return "the same file (a symlink, or another spelling of the "
		       "path)";
	if (S_ISBLK(a->st.st_mode))
		return "the same device under two names";
	return "the same file (hard links)";
}

static int member_pair_check(const struct mkfs_member *a,
			     const struct mkfs_member *b)
{
	static const char tail[] = "each member must be a different device";
	struct stat back;

	if (!strcmp(a->path, b->path)) {
		mkfs_err("%s is given twice; %s", a->path, tail);
		return -EINVAL;
	}
	if (source_stat_identical(&a->st, &b->st)) {
		mkfs_err("%s and %s are %s; %s", a->path, b->path,
			 same_reason(a, b), tail);
		return -EINVAL;
	}
	if ((source_loop_backing_stat(&a->st, &back) == 0 &&
	     source_stat_identical(&back, &b->st)) ||
	    (source_loop_backing_stat(&b->st, &back) == 0 &&
	     source_stat_identical(&back, &a->st))) {
		mkfs_err("%s and %s are the same storage: one is a loop device "
			 "over the other; %s", a->path, b->path, tail);
		return -EINVAL;
	}
	return 0;
}

/*
 * The kernel lets a read-only block device (losetup -r, a write-protected
 * disk) be opened for writing and fails only the writes, so ask it.
 */
static int member_ro_check(const struct mkfs_member *m)
{
	int fd, ro = 0;

	if (!S_ISBLK(m->st.st_mode))
		return 0;
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;   /* opened a moment ago: rc_dev's open decides */
	if (ioctl(fd, BLKROGET, &ro) < 0)
		ro = 0;
	close(fd);
	if (!ro)
		return 0;
	mkfs_err("%s: cannot be opened for writing (a read-only device)",
		 m->path);
	return -EROFS;
}

static int member_open(struct mkfs_member *m)
{
	int ret = rc_dev_open_file(m->path, RC_DEV_EXCL, &m->dev);

	if (ret < 0) {
		mkfs_err("%s: %s", m->path, open_error_text(ret));
		return ret;
	}
	ret = member_ro_check(m);
	if (ret < 0)
		return ret;
	m->size = m->dev->size;
	if (m->size < RC_BLOCK_SIZE) {
		mkfs_err(m->size ? "%s: is smaller than one block (%llu "
			 "bytes)" : "%s: is empty", m->path,
			 (unsigned long long)m->size);
		return -ENOSPC;
	}
	return 0;
}

static int member_stat(struct mkfs_member *m)
{
	int ret;

	if (stat(m->path, &m->st) == 0)
		return 0;
	ret = -errno;
	mkfs_err("%s: %s", m->path, open_error_text(ret));
	return ret;
}

/*
 * Names are compared before anything is opened: a block device named twice
 * would otherwise fail its second exclusive open with a baffling "busy".
 */
int mkfs_members_open(const struct mkfs_opts *o, struct mkfs_member *m)
{
	bool usable[RC_MAX_MEMBERS + RC_MAX_SPARES];
	int ret = 0, r;

	for (int i = 0; i < o->ndevs; i++) {
		memset(&m[i], 0, sizeof(m[i]));
		m[i].path = o->paths[i];
		m[i].spare = i >= o->ndevs - o->nspares;
		r = member_stat(&m[i]);
		usable[i] = r == 0;
		ret = ret ? ret : r;
	}
	for (int i = 0; i < o->ndevs; i++) {
		for (int j = 0; j < i && usable[i]; j++) {
			if (usable[j] && member_pair_check(&m[j], &m[i]) < 0) {
				usable[i] = false;
				ret = ret ? ret : -EINVAL;
			}
		}
	}
	for (int i = 0; i < o->ndevs; i++) {
		r = usable[i] ? member_open(&m[i]) : 0;
		ret = ret ? ret : r;
	}
	return ret;
}

void mkfs_members_close(struct mkfs_member *m, int n)
{
	for (int i = 0; i < n; i++) {
		rc_dev_close(m[i].dev);
		m[i].dev = NULL;
	}
}
