/*
 * source: from SOURCE and options to an assembled array, its bdev and the
 * mounted filesystem (see source.h).
 *
 * A member that cannot be opened is not an error here: it is handed to
 * raidcore as missing (a NULL entry), and raidcore decides whether the
 * array can run without it.  Everything the user should know about the
 * array's health (which members are missing, whether the journal was
 * replayed) is logged once, at mount.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include <libmount.h>
#include <uuid/uuid.h>

#include "raidcore.h"
#include "bdev.h"
#include "fs.h"
#include "log.h"
#include "probe.h"
#include "source.h"

static void err_set(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int source_loop_backing_stat(const struct stat *st, struct stat *backing)
{
	char sys[96], path[PATH_MAX];
	FILE *f;
	int ret = -ENOENT;

	if (!S_ISBLK(st->st_mode))
		return -ENOENT;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(st->st_rdev), minor(st->st_rdev));
	f = fopen(sys, "re");
	if (!f)
		return -ENOENT;
	if (fgets(path, sizeof(path), f)) {
		path[strcspn(path, "\n")] = '\0';
		ret = stat(path, backing) < 0 ? -errno : 0;
	}
	fclose(f);
	return ret;
}

bool source_stat_identical(const struct stat *a, const struct stat *b)
{
	if (S_ISBLK(a->st_mode) || S_ISBLK(b->st_mode))
		return S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode) &&
		       a->st_rdev == b->st_rdev;
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

bool source_stat_same(const struct stat *st, const struct stat *other)
{
	struct stat back;

	return source_stat_identical(st, other) ||
	       (source_loop_backing_stat(st, &back) == 0 &&
		source_stat_identical(&back, other)) ||
	       (source_loop_backing_stat(other, &back) == 0 &&
		source_stat_identical(&back, st));
}

bool source_same_device(const char *path, const char *other)
{
	struct stat a, b;

	return !stat(path, &a) && !stat(other, &b) && source_stat_same(&a, &b);
}

/* Member or spare i of src. */
static const char *source_path(const struct config_source *src, int i)
{
	return i < src->nmembers ? src->members[i] :
	       src->spares[i - src->nmembers];
}

int source_members_distinct(const struct config_source *src, char *err,
			    size_t errlen)
{
	static const char tail[] = "each member must be a different device";
	int n = src->nmembers + src->nspares, ret = 0;
	struct stat *st = calloc((size_t)n + 1, sizeof(*st));
	bool *ok = calloc((size_t)n + 1, sizeof(*ok));

	if (!st || !ok) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		ok[i] = stat(source_path(src, i), &st[i]) == 0;
	for (int i = 0; i < n && !ret; i++) {
		for (int j = 0; j < i && !ret && ok[i]; j++) {
			if (!ok[j] || !source_stat_same(&st[j], &st[i]))
				continue;
			if (!strcmp(source_path(src, j), source_path(src, i)))
				err_set(err, errlen, "%s is given twice; %s",
					source_path(src, i), tail);
			else
				err_set(err, errlen, "%s and %s are the same "
					"device; %s", source_path(src, j),
					source_path(src, i), tail);
			ret = -EINVAL;
		}
	}
out:
	free(st);
	free(ok);
	return ret;
}

/*
 * A member in use (-EBUSY: another daemon, or one still shutting down after
 * umount, holds its lock) is waited for, up to BUSY_WAIT_MS, and is never
 * counted as missing: assembling around it would mark it stale while the
 * other daemon still writes it.
 */
#define BUSY_WAIT_MS 10000

int source_member_open(const char *path, unsigned flags, struct rc_dev **dev)
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

/*
 * Opens paths[0..n) into devs: the number opened, or -EBUSY (with the
 * member named in err) when one stays in use.  named: the paths were typed
 * as SOURCE ("a:b:c") and none of degraded=, degraded_wait= (which says
 * to mount degraded after the wait) and nofail (a boot that must go on)
 * was given, so one that does not
 * exist is a mistyped path, not a dead disk, until the administrator says
 * otherwise (mdadm aborts an assembly whose named device cannot be
 * opened): -ENOENT, nothing opened for writing yet, nothing written.  A
 * configuration file's members (fstab) and a scan's run degraded as
 * before.
 */
static int members_open(char **paths, int n, unsigned flags, bool named,
			struct rc_dev **devs, char *err, size_t errlen)
{
	int i, ret, opened = 0;

	for (i = 0; i < n; i++) {
		ret = source_member_open(paths[i], flags, &devs[i]);
		if (ret == -EBUSY) {
			devs[i] = NULL;
			err_set(err, errlen, "member %s is in use (mounted "
				"elsewhere, or being checked)", paths[i]);
			return ret;
		}
		if (ret == -EROFS) {
			devs[i] = NULL;
			err_set(err, errlen, "member %s is read-only: nothing "
				"was written. Mount the array read-only (-o "
				"ro), or make the device writable", paths[i]);
			return -EROFS;
		}
		/* there, but not to be written (chattr +i, its mode, a
		 * security module): not a dead disk either; counted missing,
		 * the array ran degraded with a healthy member left out and
		 * fsck advised a rebuild (a tester's find) */
		if (ret == -EPERM || ret == -EACCES) {
			devs[i] = NULL;
			err_set(err, errlen, "member %s cannot be opened for "
				"writing (%s): nothing was written. Mount the "
				"array read-only (-o ro), or make the device "
				"writable", paths[i], strerror(-ret));
			return -EROFS;
		}
		/* no such path, or one no member can be (a directory,
		 * /dev/null, a symbolic link loop): a typo, as the rest of
		 * this check */
		if (named && (ret == -ENOENT || ret == -ENOTDIR ||
			      ret == -EISDIR || ret == -EINVAL ||
			      ret == -ELOOP || ret == -ENAMETOOLONG)) {
			devs[i] = NULL;
			err_set(err, errlen, "member %s: %s: a mistyped path? "
				"Nothing was written. To run without it "
				"(degraded), add -o degraded=allow", paths[i],
				strerror(-ret));
			return -ENOENT;
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

/*
 * A device named in SOURCE that holds something else - another
 * filesystem, a partition table, LVM, a file too small for a superblock -
 * is a mistyped path, as one that does not exist: the mount is refused
 * and nothing written, as mdadm aborts an assembly on a device with no
 * superblock.  Before, it was counted missing and the array mounted
 * degraded, its good members written and the real member left behind (a
 * tester's find).  So is one that holds data with no raidfs superblock
 * and no signature libblkid knows (a tar file, a text file: they mounted
 * degraded until 2026-12-07, a tester's find, T3 D1; fsck already said
 * "holds data").  A device that holds nothing at all (blank: a new disk,
 * or a member returning zeros) or a raidfs superblock whose every copy is
 * damaged stays raidcore's to leave out: a member that failed so is
 * missing, not mistyped.
 */
static int members_not_typos(char **paths, int n, struct rc_dev **devs,
			     char *err, size_t errlen)
{
	struct probe_result *r = malloc(sizeof(*r));
	char what[400], perr[256];
	int ret = r ? 0 : -ENOMEM;

	for (int i = 0; i < n && ret == 0; i++) {
		int found;

		if (!devs[i])
			continue;
		/* raidcore's answer is in r even when libblkid's failed */
		found = probe_sigs_find(paths[i], devs[i], r, perr,
					sizeof(perr));
		/* no member is under 1 MiB (its data starts there) */
		if (r->raidfs_ret == -EINVAL || devs[i]->size < (1u << 20))
			snprintf(what, sizeof(what), "is too small to be a "
				 "member (%llu bytes)",
				 (unsigned long long)devs[i]->size);
		else if (!found && r->raidfs_ret == -ENODATA &&
			 probe_has_foreign(r))
			probe_sig_describe(&r->sigs[0], what, sizeof(what));
		else if (!found && r->raidfs_ret == -ENODATA &&
			 !probe_reads_blank(devs[i]))
			snprintf(what, sizeof(what), "holds data (no raidfs "
				 "superblock, no signature known; a member of "
				 "this array whose every superblock copy was "
				 "erased looks the same: mount with -o "
				 "degraded=allow, then raidfsctl add it)");
		else
			continue;
		err_set(err, errlen, "member %s %s, not a raidfs member: a "
			"mistyped path? Nothing was written. To run without "
			"the member it stands for (degraded), add -o "
			"degraded=allow", paths[i], what);
		ret = -EINVAL;
	}
	free(r);
	return ret;
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

/*
 * A configuration file that names its array's uuid is believed before any
 * member is written: a device whose superblock names another array is
 * left out (closed, counted missing) before assembly, and when no device
 * holds the named array nothing is assembled at all.  (Checked only after
 * assembly, a read-write assembly of the wrong array had already written
 * its members.)  Devices without a readable superblock are raidcore's to
 * judge.
 */
static int members_filter_uuid(const struct config_source *src,
			       struct rc_dev **devs, int n, char *err,
			       size_t errlen)
{
	char want[37], got[37] = "";
	struct rc_probe p;
	int i, ours = 0;

	if (!src->has_uuid)
		return 0;
	uuid_unparse(src->uuid, want);
	for (i = 0; i < n; i++) {
		if (!devs[i] || rc_member_probe(devs[i], &p))
			continue;
		if (!memcmp(p.array_uuid, src->uuid, sizeof(src->uuid))) {
			ours++;
			continue;
		}
		uuid_unparse(p.array_uuid, got);
		rfs_log(LOG_WARNING, "member %s holds array %s, not %s: "
			"leaving it out", devs[i]->name, got, want);
		rc_dev_close(devs[i]);
		devs[i] = NULL;
	}
	if (ours)
		return 0;
	if (got[0])
		err_set(err, errlen, "%s names array %s, but the members hold "
			"array %s", src->config_path ? src->config_path :
			"SOURCE", want, got);
	else
		err_set(err, errlen, "%s names array %s, but no member holds "
			"it", src->config_path ? src->config_path : "SOURCE",
			want);
	/* none there at all is members missing (nofail: not mounted, exit
	 * 0, as with one member there; it exited 32: a tester's find);
	 * another array's members are a wrong SOURCE */
	return got[0] ? -EINVAL : -ENODEV;
}

static int array_assemble(const struct config_source *src,
			  const struct config_opts *o, struct rc_array **out,
			  char *err, size_t errlen)
{
	int n = src->nmembers + src->nspares;
	unsigned dflags = RC_DEV_EXCL | (o->ro ? RC_DEV_RDONLY : 0);
	unsigned aflags = (o->ro ? RC_ASSEMBLE_RDONLY : 0) |
		(o->degraded == CONFIG_DEGRADED_REFUSE ?
		 RC_ASSEMBLE_NO_DEGRADED : 0) |
		(o->catchup ? RC_ASSEMBLE_CATCHUP : 0);
	struct rc_dev **devs = calloc((size_t)n, sizeof(*devs));
	bool named = o->typo_check && !src->config_path && !src->has_uuid &&
		     !o->degraded_given && !o->degraded_wait_s && !o->nofail;
	int i, ret = -ENOMEM;

	/* another array's member typed into the list is a typo too */
	if (named)
		aflags |= RC_ASSEMBLE_NO_FOREIGN;

	if (!devs)
		goto out;
	ret = source_members_distinct(src, err, errlen);
	if (ret == 0)
		ret = members_open(src->members, src->nmembers, dflags, named,
				   devs, err, errlen);
	if (ret >= 0)
		ret = members_open(src->spares, src->nspares, dflags, named,
				   devs + src->nmembers, err, errlen);
	if (ret >= 0 && named)
		ret = members_not_typos(src->members, src->nmembers, devs, err,
					errlen);
	if (ret >= 0 && named)
		ret = members_not_typos(src->spares, src->nspares,
					devs + src->nmembers, err, errlen);
	if (ret >= 0)
		ret = members_filter_uuid(src, devs, n, err, errlen);
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

int source_array_open(const struct config_source *src,
		      const struct config_opts *o, struct source_array *sa,
		      char *err, size_t errlen)
{
	int ret;

	memset(sa, 0, sizeof(*sa));
	err[0] = '\0';
	ret = array_assemble(src, o, &sa->array, err, errlen);
	if (ret)
		return ret;
	ret = rc_array_info(sa->array, &sa->info);
	if (ret) {
		err_set(err, errlen, "array info: %s", strerror(-ret));
		goto fail;
	}
	ret = array_uuid_check(src, &sa->info, err, errlen);
	if (ret)
		goto fail;
	array_health_log(sa->array, &sa->info);
	ret = fs_bdev_from_array(sa->array, &sa->bdev);
	if (ret) {
		err_set(err, errlen, "block device: %s", strerror(-ret));
		goto fail;
	}
	return 0;
fail:
	rc_array_close(sa->array);
	sa->array = NULL;
	return ret;
}

int source_fs_mount(struct source_array *sa, const struct config_opts *o,
		    char *err, size_t errlen)
{
	struct fs_mount_opts mo = { 0 };
	struct fs_info info;
	struct rc_info ri;
	int ret;

	mo.flags = (o->ro ? FS_MOUNT_RDONLY : 0) |
		(o->noatime ? FS_MOUNT_NOATIME : 0) |
		(o->strictatime ? FS_MOUNT_STRICTATIME : 0) |
		(o->nodiratime ? FS_MOUNT_NODIRATIME : 0);
	/* the cache size is shared: half for fs metadata, half for raidcore's
	 * stripe cache */
	mo.cache_bytes = o->cache_bytes / 2;
	if (o->cache_bytes)
		rc_array_set_cache(sa->array, o->cache_bytes / 2);
	/* commits overlap the writes that come in (raidcore/writeback.c) */
	if (!o->ro)
		rc_array_set_writeback(sa->array, true);
	ret = fs_mount_opts(sa->bdev, &mo, &sa->fs);
	if (ret && !rc_array_info(sa->array, &ri) && ri.suspended) {
		err_set(err, errlen, "cannot mount the filesystem: the array "
			"was suspended while it was opened - member %d failed "
			"(%s), and the array cannot run without it; nothing "
			"more was written. Bring the device back and mount "
			"again (no fsck needed: the journal replays)",
			ri.suspend_slot, ri.suspend_why);
		sa->fs = NULL;
		return ret;
	}
	if (ret) {
		err_set(err, errlen, "cannot mount the filesystem: %s%s",
			strerror(-ret), ret == -EINVAL ?
			" (no raidfs filesystem on this array?)" :
			ret == -EIO || ret == -EUCLEAN ?
			" (its metadata is damaged beyond the array's "
			"redundancy: fsck.raidfs -n tells what, -y repairs "
			"what it can)" : "");
		sa->fs = NULL;
		return ret;
	}
	if (!fs_get_info(sa->fs, &info) && !info.was_clean)
		rfs_log(LOG_NOTICE, "filesystem was not unmounted cleanly: "
			"replayed %llu journal transactions, freed %llu orphans",
			(unsigned long long)info.replayed_txns,
			(unsigned long long)info.orphans_freed);
	return 0;
}

int source_close(struct source_array *sa)
{
	int ret = 0, r;

	if (sa->fs) {
		ret = fs_unmount(sa->fs);
		if (ret)
			rfs_log(LOG_ERR, "unmount: %s", strerror(-ret));
		sa->fs = NULL;
	}
	fs_bdev_close(sa->bdev);
	sa->bdev = NULL;
	if (sa->array) {
		struct rc_info info;

		/* after the unmount's writes: a member they failed counts */
		sa->closed_degraded = !rc_array_info(sa->array, &info) &&
				      info.degraded;
		r = rc_array_close(sa->array);
		if (r)
			rfs_log(LOG_ERR, "closing the array: %s", strerror(-r));
		if (!ret)
			ret = r;
	}
	sa->array = NULL;
	return ret;
}


int source_load(const char *source, const char *optstr,
		struct config_source *src, struct config_opts *o, char *err,
		size_t errlen)
{
	int ret = config_source_parse(source, src, o, err, errlen);

	if (!ret)
		ret = config_opts_parse(optstr, o, err, errlen);
	if (!ret)
		ret = config_cache_check(o->cache_bytes, err, errlen);   /* -o */
	return ret;
}

/* ---- status ------------------------------------------------------------- */

static void member_status_log(struct rc_array *a, const char *uuid,
			      uint32_t slot)
{
	struct rc_member_status st;

	if (rc_array_member_status(a, (int)slot, &st) ||
	    st.state == RC_MEMBER_EMPTY)
		return;
	rfs_log(st.state == RC_MEMBER_ACTIVE || st.state == RC_MEMBER_SPARE ?
		LOG_INFO : LOG_WARNING,
		"array %s: slot %u %s%s%s: %llu read, %llu write, %llu "
		"checksum errors, %llu blocks repaired%s", uuid, slot,
		member_state_name(st.state), st.name[0] ? " " : "", st.name,
		(unsigned long long)st.read_errors,
		(unsigned long long)st.write_errors,
		(unsigned long long)st.csum_errors,
		(unsigned long long)st.repaired,
		st.state == RC_MEMBER_REBUILDING ? ", rebuilding" : "");
}

void source_status_log(const struct source_array *sa)
{
	struct rc_info info;
	struct statvfs st;
	char uuid[37];
	uint32_t slot;

	if (!sa->array || rc_array_info(sa->array, &info))
		return;
	uuid_unparse(info.uuid, uuid);
	rfs_log(info.degraded || info.errors ? LOG_WARNING : LOG_INFO,
		"array %s: %s, %u members, %s%s%s, %llu unrecoverable reads",
		uuid, rc_level_name(info.level), info.members,
		info.degraded ? "DEGRADED" : "redundant",
		info.rdonly ? ", read-only" : "",
		info.errors ? ", errors seen" : "",
		(unsigned long long)info.unrecoverable);
	for (slot = 0; slot < info.members + info.spares; slot++)
		member_status_log(sa->array, uuid, slot);
	if (!sa->fs || fs_statfs(sa->fs, &st))
		return;
	rfs_log(LOG_INFO, "filesystem: %llu of %llu MiB free, %llu of %llu "
		"inodes free",
		(unsigned long long)(st.f_bavail * st.f_frsize >> 20),
		(unsigned long long)(st.f_blocks * st.f_frsize >> 20),
		(unsigned long long)st.f_ffree, (unsigned long long)st.f_files);
}

/* ---- is it mounted? ------------------------------------------------------- */

static bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!realpath(a, ra) || !realpath(b, rb))
		return false;
	return strcmp(ra, rb) == 0;
}

/* Does a mount source ("a:b:c", a configuration file or UUID=) name our
 * array?  A relative path in it is relative to the directory the mount
 * was made from, which is not known here: it is not compared (taken
 * against this process's directory, another array's "m0.img:m1.img"
 * mounted elsewhere named ours; the member locks still catch a mount of
 * ours: rc_dev_open_file with RC_DEV_EXCL, fsck.raidfs -EBUSY). */
static bool source_is_ours(const struct config_source *src, char *mnt_src)
{
	char *save = NULL, *p;
	int i;

	uuid_t u;

	if (src->config_path && mnt_src[0] == '/' &&
	    same_file(mnt_src, src->config_path))
		return true;
	if (src->has_uuid && !strncmp(mnt_src, "UUID=", 5) &&
	    !uuid_parse(mnt_src + 5, u) && !uuid_compare(u, src->uuid))
		return true;
	for (p = strtok_r(mnt_src, ":", &save); p; p = strtok_r(NULL, ":", &save))
		for (i = 0; p[0] == '/' && i < src->nmembers; i++)
			if (same_file(p, src->members[i]))
				return true;
	return false;
}

/*
 * The mount table is read by libmount, which undoes the kernel's octal
 * escapes (a blank in a mount point is "\040" in mountinfo).
 */
int source_find_mount(const struct config_source *src, char *where,
		      size_t len, bool *rw)
{
	struct libmnt_table *tb = mnt_new_table();
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	const char *type;
	char *msrc;
	int ret = -ENOMEM;

	if (!tb || !it)
		goto out;
	ret = mnt_table_parse_file(tb, "/proc/self/mountinfo");
	if (ret)
		goto out;
	while (ret == 0 && mnt_table_next_fs(tb, it, &fs) == 0) {
		type = mnt_fs_get_fstype(fs);
		if (!type || strcmp(type, "fuse.raidfs") ||
		    !mnt_fs_get_source(fs))
			continue;
		msrc = strdup(mnt_fs_get_source(fs));
		if (!msrc) {
			ret = -ENOMEM;
			break;
		}
		if (source_is_ours(src, msrc)) {
			snprintf(where, len, "%s", mnt_fs_get_target(fs));
			*rw = mnt_optstr_get_option(mnt_fs_get_vfs_options(fs),
						    "ro", NULL, NULL) != 0;
			ret = 1;
		}
		free(msrc);
	}
out:
	mnt_free_iter(it);
	mnt_unref_table(tb);
	return ret;
}
