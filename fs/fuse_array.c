/*
 * fuse_array: from the paths in SOURCE to an fs_bdev the filesystem mounts.
 *
 * A member that cannot be opened is not an error here: it is handed to
 * raidcore as missing (a NULL entry), and raidcore decides whether the
 * array can run without it.  Everything the user should know about the
 * array's health (which members are missing, whether the journal was
 * replayed) is logged once, at mount.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>

#include "raidcore.h"
#include "bdev.h"
#include "fs.h"
#include "fuse_ops.h"

static void err_set(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * A member in use (-EBUSY: another daemon, or one still shutting down after
 * umount, holds its lock) is waited for, up to BUSY_WAIT_MS, and is never
 * counted as missing: assembling around it would mark it stale while the
 * other daemon still writes it.
 */
#define BUSY_WAIT_MS 10000

static int member_open(const char *path, unsigned flags, struct rc_dev **dev)
{
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	int ret, waited = 0;

	while ((ret = rc_dev_open_file(path, flags, dev)) == -EBUSY &&
	       waited < BUSY_WAIT_MS) {
		if (waited == 0)
			rfs_log(LOG_NOTICE, "member %s is in use; waiting for it",
				path);
		nanosleep(&nap, NULL);
		waited += 100;
	}
	return ret;
}

/* Opens paths[0..n) into devs: the number opened, or -EBUSY (with the
 * member named in err) when one stays in use. */
static int members_open(char **paths, int n, unsigned flags,
			struct rc_dev **devs, char *err, size_t errlen)
{
	int i, ret, opened = 0;

	for (i = 0; i < n; i++) {
		ret = member_open(paths[i], flags, &devs[i]);
		if (ret == -EBUSY) {
			devs[i] = NULL;
			err_set(err, errlen, "member %s is in use (mounted "
				"elsewhere, or being checked)", paths[i]);
			return ret;
		}
		if (ret) {
			devs[i] = NULL;
			rfs_log(LOG_WARNING, "member %s: %s; counting it as missing",
				paths[i], strerror(-ret));
			continue;
		}
		opened++;
	}
	return opened;
}

static const char *member_state_name(enum rc_member_state s)
{
	switch (s) {
	case RC_MEMBER_ACTIVE: return "active";
	case RC_MEMBER_FAULTY: return "faulty";
	case RC_MEMBER_MISSING: return "missing";
	case RC_MEMBER_REBUILDING: return "rebuilding";
	case RC_MEMBER_SPARE: return "spare";
	case RC_MEMBER_EMPTY: return "empty";
	}
	return "unknown";
}

/* One line for the array, one per member that is not active. */
static void array_health_log(struct rc_array *a, const struct rc_info *info)
{
	struct rc_member_status st;
	char uuid[37];
	uint32_t slot;

	uuid_unparse(info->uuid, uuid);
	rfs_log(info->degraded ? LOG_WARNING : LOG_INFO,
		"array %s: %s, %u members, %u KiB chunks, %llu MiB%s%s",
		uuid, rc_level_name(info->level), info->members,
		info->chunk_blocks * (RC_BLOCK_SIZE / 1024),
		(unsigned long long)(info->blocks >> (20 - RC_BLOCK_SHIFT)),
		info->degraded ? ", DEGRADED" : "",
		info->rdonly ? ", read-only" : "");
	for (slot = 0; slot < info->members; slot++) {
		if (rc_array_member_status(a, (int)slot, &st) ||
		    st.state == RC_MEMBER_ACTIVE)
			continue;
		rfs_log(LOG_WARNING, "array %s: member %u is %s%s%s", uuid,
			slot, member_state_name(st.state),
			st.name[0] ? ": " : "", st.name);
	}
	if (info->was_unclean)
		rfs_log(LOG_NOTICE,
			"array %s: not shut down cleanly; replayed %llu journal transactions",
			uuid, (unsigned long long)info->replayed_txns);
}

static int array_uuid_check(const struct config_source *src,
			    const struct rc_info *info, char *err,
			    size_t errlen)
{
	char want[37], got[37];

	if (!src->has_uuid ||
	    !memcmp(src->uuid, info->uuid, sizeof(src->uuid)))
		return 0;
	uuid_unparse(src->uuid, want);
	uuid_unparse(info->uuid, got);
	err_set(err, errlen, "%s names array %s, but the members hold array %s",
		src->config_path ? src->config_path : "SOURCE", want, got);
	return -EINVAL;
}

static int array_assemble(const struct config_source *src,
			  const struct config_opts *o, struct rc_array **out,
			  char *err, size_t errlen)
{
	int n = src->nmembers + src->nspares;
	unsigned dflags = RC_DEV_EXCL | (o->ro ? RC_DEV_RDONLY : 0);
	unsigned aflags = (o->ro ? RC_ASSEMBLE_RDONLY : 0) |
		(o->degraded == CONFIG_DEGRADED_REFUSE ?
		 RC_ASSEMBLE_NO_DEGRADED : 0);
	struct rc_dev **devs = calloc((size_t)n, sizeof(*devs));
	int i, ret = -ENOMEM;

	if (!devs)
		goto out;
	ret = members_open(src->members, src->nmembers, dflags, devs, err,
			   errlen);
	if (ret >= 0)
		ret = members_open(src->spares, src->nspares, dflags,
				   devs + src->nmembers, err, errlen);
	if (ret < 0) {
		for (i = 0; i < n; i++)
			rc_dev_close(devs[i]);
		goto out;
	}
	ret = rc_array_assemble(devs, n, aflags, out, err, errlen);
	if (ret) {
		if (!err[0])
			err_set(err, errlen, "cannot assemble the array: %s",
				strerror(-ret));
		/* on failure the devices are still ours */
		for (i = 0; i < n; i++)
			if (devs[i])
				rc_dev_close(devs[i]);
	}
out:
	free(devs);
	return ret;
}

int rfs_array_open(const struct config_source *src,
		   const struct config_opts *o, struct rfs_array *ra,
		   char *err, size_t errlen)
{
	struct rc_info info;
	int ret;

	memset(ra, 0, sizeof(*ra));
	err[0] = '\0';
	ret = array_assemble(src, o, &ra->array, err, errlen);
	if (ret)
		return ret;
	ret = rc_array_info(ra->array, &info);
	if (ret) {
		err_set(err, errlen, "array info: %s", strerror(-ret));
		goto fail;
	}
	ret = array_uuid_check(src, &info, err, errlen);
	if (ret)
		goto fail;
	array_health_log(ra->array, &info);
	ret = fs_bdev_from_array(ra->array, &ra->bdev);
	if (ret) {
		err_set(err, errlen, "block device: %s", strerror(-ret));
		goto fail;
	}
	return 0;
fail:
	rc_array_close(ra->array);
	ra->array = NULL;
	return ret;
}

int rfs_array_close(struct rfs_array *ra)
{
	int ret = 0;

	fs_bdev_close(ra->bdev);
	ra->bdev = NULL;
	if (ra->array)
		ret = rc_array_close(ra->array);
	ra->array = NULL;
	if (ret)
		rfs_log(LOG_ERR, "closing the array: %s", strerror(-ret));
	return ret;
}

/* ---- format (tests' stand-in for mkfs.raidfs) ---------------------------- */

static int format_fs(struct rc_dev **devs, int n, const char *label,
		     char *err, size_t errlen)
{
	struct fs_format_params fp = { 0 };
	struct rc_array *a = NULL;
	struct fs_bdev *bdev = NULL;
	int ret;

	int i;

	ret = rc_array_assemble(devs, n, 0, &a, err, errlen);
	if (ret) {
		for (i = 0; i < n; i++)   /* still ours after a failure */
			rc_dev_close(devs[i]);
		return ret;
	}
	ret = fs_bdev_from_array(a, &bdev);
	if (ret)
		goto out;
	if (label)
		snprintf(fp.label, sizeof(fp.label), "%s", label);
	ret = fs_format(bdev, &fp);
	if (ret)
		err_set(err, errlen, "fs_format: %s", strerror(-ret));
	fs_bdev_close(bdev);
out:
	if (rc_array_close(a) && !ret)
		ret = -EIO;
	return ret;
}

int rfs_array_format(char **paths, int n, const struct rfs_format_args *f,
		     char *err, size_t errlen)
{
	struct rc_create_params p = { 0 };
	struct rc_dev **devs = calloc((size_t)n, sizeof(*devs));
	int i, ret = -ENOMEM;

	if (!devs)
		return ret;
	for (i = 0; i < n; i++) {
		ret = rc_dev_open_file(paths[i], RC_DEV_EXCL, &devs[i]);
		if (ret) {
			err_set(err, errlen, "%s: %s", paths[i], strerror(-ret));
			goto fail;
		}
	}
	p.level = (enum rc_level)f->level;
	p.chunk_bytes = f->chunk_bytes;
	p.nspares = f->nspares;
	if (f->label)
		snprintf(p.label, sizeof(p.label), "%s", f->label);
	ret = rc_array_create_err(&p, devs, n, err, errlen);
	if (ret)
		goto fail;
	/* format_fs owns the devices from here on */
	ret = format_fs(devs, n, f->label, err, errlen);
	free(devs);
	return ret;
fail:
	for (i = 0; i < n; i++)
		if (devs[i])
			rc_dev_close(devs[i]);
	free(devs);
	return ret;
}
