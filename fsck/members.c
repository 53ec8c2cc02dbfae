/*
 * members: phase 1.  What every device named in SOURCE holds, whether the
 * array is mounted, and the assembled array's view of its slots.
 *
 * A mounted array is found two ways: the kernel's mount table (a
 * fuse.raidfs mount whose source names one of our members or our
 * configuration file), and the members' locks (raidfs holds each member
 * with an exclusive flock, so opening it fails with -EBUSY).  Either way
 * fsck stops with status 8 before it has written anything.
 *
 * Assembly itself is the daemon's (rfs_array_open in fs/fuse_array.c);
 * raidcore's messages during it (left-out members, replay) are caught with
 * rc_set_logger and shown in this phase.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "bdev.h"
#include "fsck.h"
#include "fuse_ops.h"

static void rc_logger(int level, const char *msg)
{
	fsck_msg("  raidcore: %s", msg);
}

static bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!realpath(a, ra) || !realpath(b, rb))
		return false;
	return strcmp(ra, rb) == 0;
}

/* Does a mount source ("a:b:c" or a configuration file) name our array? */
static bool source_is_ours(const struct fsck *f, char *mnt_src)
{
	char *save = NULL, *p;
	int i;

	if (f->src.config_path && same_file(mnt_src, f->src.config_path))
		return true;
	for (p = strtok_r(mnt_src, ":", &save); p; p = strtok_r(NULL, ":", &save))
		for (i = 0; i < f->src.nmembers; i++)
			if (same_file(p, f->src.members[i]))
				return true;
	return false;
}

/* 1 when a raidfs mount of our array is in the mount table (*rw set). */
static int mount_find(const struct fsck *f, char *where, size_t len, bool *rw)
{
	char line[8192], opts[1024], mnt[4096], type[256], src[4096];
	FILE *m = fopen("/proc/self/mountinfo", "r");
	const char *sep;
	int found = 0;

	if (!m)
		return 0;
	while (!found && fgets(line, sizeof(line), m)) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s %1023s", mnt,
				   opts) != 2 ||
		    sscanf(sep + 3, "%255s %4095s", type, src) != 2)
			continue;
		if (strcmp(type, "fuse.raidfs") || !source_is_ours(f, src))
			continue;
		snprintf(where, len, "%s", mnt);
		*rw = strncmp(opts, "ro", 2) != 0 || (opts[2] && opts[2] != ',');
		found = 1;
	}
	fclose(m);
	return found;
}

static void uuid_str(const uint8_t *u, char *out)
{
	uuid_unparse(u, out);
}

/* One line per device: what its superblock says.  -EBUSY: in use. */
static int member_probe(struct fsck *f, const char *path, bool *clean,
			uint8_t *array_uuid, int *nfound)
{
	unsigned flags = RC_DEV_RDONLY | RC_DEV_EXCL;
	struct rc_probe p;
	struct rc_dev *dev;
	char u[37];
	int ret;

	ret = rc_dev_open_file(path, flags, &dev);
	if (ret == -EBUSY) {
		fsck_err("%s is in use (held by a running raidfs, or another "
			 "program): unmount the array first", path);
		return ret;
	}
	if (ret) {
		fsck_msg("  %s: cannot open (%s): counted as missing", path,
			 strerror(-ret));
		*clean = false;
		return 0;
	}
	ret = rc_member_probe(dev, &p);
	rc_dev_close(dev);
	if (ret) {
		fsck_msg("  %s: %s", path, ret == -ENODATA ?
			 "not a raidfs member" : ret == -EBADMSG ?
			 "both superblock copies are damaged" :
			 strerror(-ret));
		*clean = false;
		return 0;
	}
	uuid_str(p.array_uuid, u);
	if (*nfound && memcmp(array_uuid, p.array_uuid, RC_UUID_SIZE))
		*clean = false;
	memcpy(array_uuid, p.array_uuid, RC_UUID_SIZE);
	(*nfound)++;
	*clean = *clean && p.clean;
	if (p.role == 0xffffffffu)
		fsck_msg("  %s: spare of array %s, events %llu%s", path, u,
			 (unsigned long long)p.events, p.clean ? "" : ", not clean");
	else
		fsck_msg("  %s: slot %u of array %s (%s, %u members), events "
			 "%llu%s", path, p.role, u, rc_level_name(p.level),
			 p.members, (unsigned long long)p.events,
			 p.clean ? "" : ", not clean");
	if (p.role != 0xffffffffu && (uint32_t)f->src.nmembers < p.members)
		*clean = false;
	if (p.copies_ok != 3) {
		/* The good copy serves; a read-write assembly rewrites both. */
		fsck_msg("  %s: superblock copy %d is damaged%s", path,
			 p.copies_ok & 1 ? 1 : 0,
			 f->o.mode == FSCK_MODE_NO ? "" : ": rewritten");
		f->status |= f->o.mode == FSCK_MODE_NO ? FSCK_UNCORRECTED :
			     FSCK_CORRECTED;
		*clean = false;
	}
	return 0;
}

static int members_probe(struct fsck *f)
{
	uint8_t uuid[RC_UUID_SIZE] = { 0 };
	bool clean = true;
	int i, ret = 0, nfound = 0;

	for (i = 0; i < f->src.nmembers && !ret; i++)
		ret = member_probe(f, f->src.members[i], &clean, uuid, &nfound);
	for (i = 0; i < f->src.nspares && !ret; i++)
		ret = member_probe(f, f->src.spares[i], &clean, uuid, &nfound);
	f->array_clean = clean && nfound > 0;
	return ret;
}

static const char *state_name(enum rc_member_state s)
{
	static const char *names[] = { "active", "FAULTY", "MISSING",
				       "rebuilding", "spare", "empty" };

	return (unsigned)s < 6 ? names[s] : "?";
}

static void array_summary(struct fsck *f)
{
	struct rc_member_status st;
	char u[37];
	uint32_t s;

	uuid_str(f->info.uuid, u);
	fsck_msg("  array %s: %s, %u members, %u KiB chunks, %llu MiB%s", u,
		 rc_level_name(f->info.level), f->info.members,
		 f->info.chunk_blocks * (RC_BLOCK_SIZE / 1024),
		 (unsigned long long)(f->info.blocks >> (20 - RC_BLOCK_SHIFT)),
		 f->info.degraded ? ", DEGRADED" : "");
	for (s = 0; s < f->info.members + f->info.spares; s++) {
		if (rc_array_member_status(f->array, (int)s, &st))
			continue;
		if (st.state == RC_MEMBER_ACTIVE && !f->o.verbose)
			continue;
		fsck_msg("  slot %u: %s%s%s", s, state_name(st.state),
			 st.name[0] ? ", " : "", st.name);
	}
	if (f->info.was_unclean)
		fsck_msg("  the array was not shut down cleanly: %llu journal "
			 "transactions replayed%s",
			 (unsigned long long)f->info.replayed_txns,
			 f->info.rdonly ? " (in memory: -n writes nothing)" : "");
}

/* Assembles the array, read-only when rdonly. */
int fsck_array_open(struct fsck *f, bool rdonly)
{
	struct rfs_array ra;
	char err[512];
	int ret;

	f->co.ro = rdonly;
	f->co.degraded = CONFIG_DEGRADED_ALLOW;
	rc_set_logger(rc_logger);
	ret = rfs_array_open(&f->src, &f->co, &ra, err, sizeof(err));
	if (ret) {
		fsck_err("cannot assemble the array: %s", err);
		return ret;
	}
	f->array = ra.array;
	f->bdev = ra.bdev;
	ret = rc_array_info(f->array, &f->info);
	if (ret)
		fsck_err("array info: %s", strerror(-ret));
	return ret;
}

int fsck_array_close(struct fsck *f)
{
	struct rfs_array ra = { f->array, f->bdev };
	int ret;

	if (!f->array)
		return 0;
	ret = rfs_array_close(&ra);
	f->array = NULL;
	f->bdev = NULL;
	return ret;
}

int fsck_members(struct fsck *f)
{
	char where[4096];
	bool rw = false;
	int ret;

	fsck_phase(1, "Members");
	if (mount_find(f, where, sizeof(where), &rw) &&
	    (rw || f->o.mode != FSCK_MODE_NO)) {
		fsck_err("the array is mounted%s on %s: unmount it first",
			 rw ? "" : " read-only", where);
		return -EBUSY;
	}
	ret = members_probe(f);
	if (ret)
		return ret;
	/* the clean fast path reads only; so does -n */
	ret = fsck_array_open(f, f->o.mode == FSCK_MODE_NO ||
			      (f->array_clean && !f->o.force && !f->o.rebuild));
	if (ret)
		return ret;
	array_summary(f);
	if (f->info.degraded || f->info.was_unclean)
		f->array_clean = false;
	return 0;
}
