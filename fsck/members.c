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
 * The array is then assembled read-only (array.c), whatever the mode:
 * every check that can refuse the run (a rebuild target that is in use,
 * holds something, is too small; target.c) is made on that assembly, so
 * a refused run writes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uuid/uuid.h>

#include "bdev.h"
#include "fsck.h"
#include "source.h"

static void uuid_str(const uint8_t *u, char *out)
{
	uuid_unparse(u, out);
}

static void copies_report(struct fsck *f, const char *path, uint8_t ok)
{
	char bad[16] = "";

	for (int c = 0; c < 4; c++)
		if (!(ok >> c & 1))
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
				 "%s%d", bad[0] ? "," : "", c);
	/* A good copy serves; a read-write assembly rewrites all (when the
	 * check gets that far: one refused writes nothing, exit 8). */
	fsck_msg("  %s: superblock cop%s %s %s damaged%s", path,
		 strchr(bad, ',') ? "ies" : "y", bad,
		 strchr(bad, ',') ? "are" : "is",
		 f->o.mode == FSCK_MODE_NO ? "" : strchr(bad, ',') ?
		 ": the check rewrites them" : ": the check rewrites it");
	if (f->o.mode == FSCK_MODE_NO)
		f->status |= FSCK_UNCORRECTED;
	else
		f->copies_to_rewrite = true;    /* fsck_array_writable */
}

/*
 * A member whose device no longer holds its data region (an image
 * truncated, another disk behind the name) is left out of every assembly:
 * a read-write one would rewrite its superblocks to fit the smaller
 * device, and the member would then hold a layout no longer its own.  The
 * device itself is not written.
 */
static bool shrunk(struct fsck *f, struct fsck_dev *d)
{
	if (d->size / RC_BLOCK_SIZE >= d->p.device_blocks_min)
		return false;
	d->shrunk = true;
	fsck_msg("  %s: %llu KiB, smaller than the %llu KiB its own layout "
		 "needs (the device shrank, or is not the one it was): left "
		 "out", d->path, (unsigned long long)(d->size >> 10),
		 (unsigned long long)(d->p.device_blocks_min *
				      (RC_BLOCK_SIZE / 1024)));
	f->status |= FSCK_UNCORRECTED;
	return true;
}

/* The line for a device with a raidfs superblock; false: not clean. */
static bool member_report(struct fsck *f, struct fsck_dev *d)
{
	const struct rc_probe *p = &d->p;
	bool clean = p->clean;
	char u[37];

	uuid_str(p->array_uuid, u);
	if (p->role == 0xffffffffu)
		fsck_msg("  %s: spare of array %s, events %llu%s", d->path, u,
			 (unsigned long long)p->events, p->clean ? "" : ", not clean");
	else
		fsck_msg("  %s: slot %u of array %s (%s, %u members), events "
			 "%llu%s", d->path, p->role, u, rc_level_name(p->level),
			 p->members, (unsigned long long)p->events,
			 p->clean ? "" : ", not clean");
	if (p->role != 0xffffffffu && (uint32_t)f->src.nmembers < p->members)
		clean = false;
	if (shrunk(f, d))
		return false;
	if (p->err_read || p->err_csum || p->err_write)
		fsck_msg("  %s: recorded on it: %llu read errors, %llu checksum "
			 "errors, %llu write errors", d->path,
			 (unsigned long long)p->err_read,
			 (unsigned long long)p->err_csum,
			 (unsigned long long)p->err_write);
	if (p->errors) {
		/* as ext4's error state: the fast path is not taken */
		f->errors_recorded = true;
		clean = false;
	}
	/* One update behind copy 0: a superblock write the crash cut short,
	 * rewritten at the first write, as the journal is replayed - told,
	 * not an error. */
	if (p->copies_torn) {
		fsck_msg("  %s: superblock copies one update behind copy 0 (a "
			 "write cut short by the crash): rewritten at the "
			 "array's first write", d->path);
		clean = false;
	}
	if ((p->copies_ok | p->copies_torn) != 0xf) {
		copies_report(f, d->path, p->copies_ok | p->copies_torn);
		clean = false;
	}
	return clean;
}

/* One line per device: what its superblock says.  -EBUSY: in use. */
static int member_probe(struct fsck *f, struct fsck_dev *d, bool *clean,
			uint8_t *array_uuid, int *nfound)
{
	unsigned flags = RC_DEV_RDONLY | RC_DEV_EXCL;
	struct rc_dev *dev;
	int ret;

	/* a daemon still closing after umount holds it a moment: waited
	 * for, as a mount waits (fsck right after umount refused) */
	ret = source_member_open(d->path, flags, &dev);
	d->ret = ret;
	if (ret == -EBUSY) {
		fsck_err("%s is in use (held by a running raidfs, or another "
			 "program): unmount the array first", d->path);
		return ret;
	}
	/* A path typed in the list that does not exist is a typo until
	 * said otherwise, as for a mount: a repair around it would write
	 * the array degraded and leave the real member stale (a tester's
	 * find).  A dead disk is left out of the list. */
	if ((ret == -ENOENT || ret == -ENOTDIR) && f->o.mode != FSCK_MODE_NO &&
	    !f->src.config_path && !f->src.has_uuid) {
		fsck_err("member %s: %s: a mistyped path? Nothing was written. "
			 "To check and repair the array without that member, "
			 "leave it out of the list", d->path, strerror(-ret));
		return ret;
	}
	if (ret) {
		fsck_msg("  %s: cannot open (%s): counted as missing", d->path,
			 strerror(-ret));
		*clean = false;
		return 0;
	}
	d->opened = true;
	d->size = dev->size;
	d->ret = rc_member_probe(dev, &d->p);
	rc_dev_close(dev);
	if (d->ret) {
		fsck_msg("  %s: %s", d->path, d->ret == -ENODATA ?
			 "not a raidfs member" : d->ret == -EBADMSG ?
			 "every superblock copy is damaged" :
			 d->ret == -EINVAL ? "a raidfs superblock whose "
			 "fields contradict each other (its checksum holds)" :
			 strerror(-d->ret));
		*clean = false;
		return 0;
	}
	if (*nfound && memcmp(array_uuid, d->p.array_uuid, RC_UUID_SIZE))
		*clean = false;
	memcpy(array_uuid, d->p.array_uuid, RC_UUID_SIZE);
	(*nfound)++;
	*clean = member_report(f, d) && *clean;
	return 0;
}

static int members_probe(struct fsck *f)
{
	uint8_t uuid[RC_UUID_SIZE] = { 0 };
	bool clean = true;
	int i, ret = 0, nfound = 0;

	f->ndevs = f->src.nmembers + f->src.nspares;
	f->devs = calloc((size_t)f->ndevs + 1, sizeof(*f->devs));
	if (!f->devs)
		return -ENOMEM;
	for (i = 0; i < f->ndevs; i++)
		f->devs[i].path = i < f->src.nmembers ? f->src.members[i] :
				  f->src.spares[i - f->src.nmembers];
	for (i = 0; i < f->ndevs && !ret; i++)
		ret = member_probe(f, &f->devs[i], &clean, uuid, &nfound);
	f->array_clean = clean && nfound > 0;
	if (f->errors_recorded)
		fsck_msg("  errors were recorded while the array was in use: "
			 "a full check follows");
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
	/* fsck does not copy: the daemon's next mount goes on with it */
	if (f->info.replacing)
		fsck_msg("  slot %u: an online replacement onto %s was under "
			 "way (raidfsctl replace): the next mount goes on with "
			 "it; until it is through, %s is a spare and the slot "
			 "keeps its device", f->info.replace_slot,
			 f->info.replace_dev, f->info.replace_dev);
	if (f->info.was_unclean)
		fsck_msg("  the array was not shut down cleanly: %llu journal "
			 "transactions replayed%s",
			 (unsigned long long)f->info.replayed_txns,
			 f->o.mode == FSCK_MODE_NO ?
			 " (in memory: -n writes nothing)" : "");
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
	ret = source_members_distinct(&f->src, where, sizeof(where));
	if (ret) {
		fsck_err("%s", where);
		return ret;
	}
	ret = members_probe(f);
	if (ret == 0)
		ret = fsck_target_probe(f);
	if (ret)
		return ret;
	ret = fsck_array_open(f, true);
	if (ret)
		return ret;
	array_summary(f);
	if (f->info.degraded || f->info.was_unclean || f->info.errors)
		f->array_clean = false;
	/* Another array's member named beside every member of this one (left
	 * out by the assembly; in a missing one's place, the array is
	 * degraded and says so): the list is wrong, and the mount refuses it as a
	 * mistyped path - not "clean" (exit 0 let a boot's fsck -p pass a
	 * SOURCE the mount then refused: a tester's find, T2 D2). */
	for (int i = 0; i < f->ndevs && !f->info.degraded; i++) {
		if (!f->devs[i].opened || f->devs[i].ret ||
		    !memcmp(f->devs[i].p.array_uuid, f->info.uuid, RC_UUID_SIZE))
			continue;
		fsck_msg("  %s is a member of another array, not of this one: "
			 "left out. Take it out of the list (a mount refuses "
			 "it as a mistyped path)", f->devs[i].path);
		f->status |= FSCK_UNCORRECTED;
	}
	/* Not recorded on the members (members_probe said so): found now,
	 * by the assembly (a damaged superblock copy, table, journal). */
	if (f->info.errors && !f->errors_recorded) {
		f->errors_recorded = true;
		fsck_msg("  damage found while opening the array: a full "
			 "check follows");
		/* What the assembly repaired (a member's garbled journal
		 * ring: its columns rebuilt from the others) is in memory
		 * only: left by -n, written by the first write of -y and
		 * -p.  Both exited 0, "clean" (a tester's find). */
		f->status |= f->o.mode == FSCK_MODE_NO ? FSCK_UNCORRECTED :
			     FSCK_CORRECTED;
	}
	return fsck_rebuild_plan(f);
}
