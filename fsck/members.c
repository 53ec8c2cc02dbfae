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
 * Assembly itself is the shared layer's (source_array_open in
 * source/source.c), as for every raidfs program; its messages and
 * raidcore's during it (left-out members, replay) are caught with
 * rfs_log_sink and shown in this phase.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "bdev.h"
#include "fsck.h"
#include "log.h"
#include "source.h"

static void log_sink(int prio, const char *msg)
{
	fsck_msg("  %s", msg);
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
	if (p.copies_ok != 0xf) {
		char bad[16] = "";

		for (int c = 0; c < 4; c++)
			if (!(p.copies_ok >> c & 1))
				snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
					 "%s%d", bad[0] ? "," : "", c);
		/* A good copy serves; a read-write assembly rewrites all. */
		fsck_msg("  %s: superblock cop%s %s %s damaged%s", path,
			 strchr(bad, ',') ? "ies" : "y", bad,
			 strchr(bad, ',') ? "are" : "is",
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
	struct source_array sa;
	char err[512];
	int ret;

	f->co.ro = rdonly;
	f->co.degraded = CONFIG_DEGRADED_ALLOW;
	rfs_log_sink(log_sink);
	ret = source_array_open(&f->src, &f->co, &sa, err, sizeof(err));
	if (ret) {
		fsck_err("cannot assemble the array: %s", err);
		return ret;
	}
	f->array = sa.array;
	f->bdev = sa.bdev;
	/* fsck repairs a member in place, however many blocks that takes */
	rc_array_set_fault_errors(f->array, 0);
	ret = rc_array_info(f->array, &f->info);
	if (ret)
		fsck_err("array info: %s", strerror(-ret));
	return ret;
}

int fsck_array_close(struct fsck *f)
{
	struct source_array sa = { .array = f->array, .bdev = f->bdev };
	int ret;

	if (!f->array)
		return 0;
	ret = source_close(&sa);
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
	if (source_find_mount(&f->src, where, sizeof(where), &rw) > 0 &&
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
