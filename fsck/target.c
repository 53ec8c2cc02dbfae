/*
 * target: phase 1's last step - which device each slot that is not active
 * gets back, decided before anything is written (DESIGN.md, "Bad input
 * writes nothing").
 *
 *   fsck_target_probe   before the read-only assembly: --rebuild TARGET
 *                       opened exclusively (in use?) and what it holds
 *                       (source/probe.c, as mkfs.raidfs checks a member)
 *   fsck_rebuild_plan   after it: the plan rebuild.c carries out
 *
 * --rebuild TARGET is refused (exit 8) when it is in use, holds a member
 * of another raidfs array or any signature libblkid knows (unless -f,
 * which erases those), holds data no signature names (unless -f), is
 * smaller than the array's members need, or is an active member of this
 * array.  TARGET holding a slot of this array is
 * not "another signature": an interrupted rebuild onto it resumes, a
 * stale former member is rebuilt in place.
 *
 * Without --rebuild, fsck -y gives each slot that is not active, in this
 * order: its own device when a rebuild onto it was interrupted (resumed),
 * its former member when SOURCE names it and the slot ran without it
 * (left out as stale: rebuilt in full), a device in SOURCE on which
 * nothing at all is found (no raidfs
 * superblock, no libblkid signature, and zeros wherever it holds
 * anything, read whole: a member wiped whole, a new disk or image), the array's spare.  Data
 * without a signature (a file of someone's, an encrypted volume, a disk
 * with old contents) counted as nothing until 2026-12-06, and a typo
 * in SOURCE naming it had fsck -y rebuild over it (a tester's find).  A device that holds anything else is never taken
 * without --rebuild: a typo in a member path must not overwrite someone's
 * disk.  Its former member left out as stale is taken when the slot ran
 * without it (it returns), never when the slot was active at the last
 * update (an old copy of the member, or a disk that lost writes): an old
 * copy named by mistake was rebuilt over (a tester's find); --rebuild
 * names it when it is the member's own disk, as mdadm writes a non-fresh
 * device only on --add or --re-add.  -n and -p say what -y would do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsck.h"
#include "source.h"

static bool is_ours(const struct fsck *f, const struct rc_probe *p)
{
	return !memcmp(p->array_uuid, f->info.uuid, RC_UUID_SIZE);
}

int fsck_target_probe(struct fsck *f)
{
	char err[512];
	struct rc_dev *dev;
	int ret;

	f->target_in_source = -1;
	if (!f->o.rebuild)
		return 0;
	for (int i = 0; i < f->ndevs && f->target_in_source < 0; i++)
		if (source_same_device(f->devs[i].path, f->o.rebuild))
			f->target_in_source = i;
	ret = rc_dev_open_file(f->o.rebuild, RC_DEV_EXCL, &dev);
	if (ret == -EBUSY) {
		fsck_err("--rebuild %s: the device is in use (mounted, or held "
			 "by another program): not rebuilding onto it",
			 f->o.rebuild);
		return ret;
	}
	if (ret) {
		fsck_err("--rebuild %s: %s", f->o.rebuild, strerror(-ret));
		return ret;
	}
	f->target_size = dev->size;
	ret = probe_sigs_find(f->o.rebuild, dev, &f->target, err, sizeof(err));
	rc_dev_close(dev);
	if (ret)
		fsck_err("--rebuild %s", err);
	return ret;
}

/* The first raid slot that is not active, or -1. */
static int missing_slot(struct fsck *f)
{
	struct rc_member_status st;

	for (uint32_t s = 0; s < f->info.members; s++)
		if (!rc_array_member_status(f->array, (int)s, &st) &&
		    st.state != RC_MEMBER_ACTIVE)
			return (int)s;
	return -1;
}

static int too_small(struct fsck *f, const char *path, uint64_t bytes)
{
	if (bytes / RC_BLOCK_SIZE >= f->info.device_blocks_min)
		return 0;
	fsck_msg("  %s: %llu KiB, smaller than the %llu KiB a member of this "
		 "array needs", path, (unsigned long long)(bytes >> 10),
		 (unsigned long long)(f->info.device_blocks_min *
				      (RC_BLOCK_SIZE / 1024)));
	return -ENOSPC;
}

/* Signatures on TARGET that are not a slot of this array: refused unless
 * -f, erased with it. */
static int target_sigs_judge(struct fsck *f, struct fsck_rebuild *e)
{
	const struct probe_result *r = &f->target;
	bool mine = r->raidfs_ret == 0 && is_ours(f, &r->raidfs);
	char what[512];
	int n = 0;

	for (int i = 0; i < r->nsigs; i++) {
		if (r->sigs[i].raidfs && mine)
			continue;
		probe_sig_describe(&r->sigs[i], what, sizeof(what));
		fsck_msg("  %s %s%s", f->o.rebuild, what, f->o.force ?
			 ": -f, overwriting it" : "");
		n++;
	}
	if (!n)
		return 0;
	if (!f->o.force) {
		fsck_err("--rebuild %s: refusing to overwrite what the device "
			 "holds (-f overwrites it)", f->o.rebuild);
		return -EEXIST;
	}
	e->wipe = probe_has_foreign(r);
	return 0;
}

/* TARGET holds a slot of this array: resume, rebuild in place, or refuse
 * (it is active).  e->slot stays -1 (the first slot missing) for a spare
 * or a former member whose slot has been taken since. */
static int target_own_slot(struct fsck *f, struct fsck_rebuild *e)
{
	const struct rc_probe *p = &f->target.raidfs;
	struct rc_member_status st;

	if (p->role == 0xffffffffu) {
		if (f->target_in_source < 0)
			return 0;
		fsck_err("--rebuild %s: the device is a spare of this array: "
			 "fsck -y without --rebuild rebuilds onto the spares",
			 f->o.rebuild);
		return -EINVAL;
	}
	if (p->role >= f->info.members ||
	    rc_array_member_status(f->array, (int)p->role, &st))
		return 0;
	if (st.state == RC_MEMBER_ACTIVE) {
		if (memcmp(st.uuid, p->member_uuid, RC_UUID_SIZE))
			return 0;       /* a former member, replaced since */
		fsck_err("--rebuild %s: the device is slot %u of this array, "
			 "active: it is not a rebuild target", f->o.rebuild,
			 p->role);
		return -EINVAL;
	}
	e->slot = (int)p->role;
	if (st.state == RC_MEMBER_REBUILDING && st.name[0] &&
	    source_same_device(st.name, f->o.rebuild)) {
		e->kind = FSCK_RB_RESUME;
		e->path = NULL;
	}
	return 0;
}

/* TARGET, not of this array and with no signature, holds nothing but
 * zeros (read whole), or -f says to overwrite it: --rebuild named it, and
 * wrote over a file's data without -f (a tester's find). */
static int target_blank_judge(struct fsck *f)
{
	struct rc_dev *dev;
	uint64_t at = 0;
	int ret;

	if (f->o.force)
		return 0;
	ret = rc_dev_open_file(f->o.rebuild, RC_DEV_RDONLY, &dev);
	if (ret == 0) {
		ret = probe_proves_blank(f->o.rebuild, dev, &at);
		rc_dev_close(dev);
	}
	if (ret < 0) {
		fsck_err("--rebuild %s: cannot read it whole to see that it "
			 "holds nothing: %s", f->o.rebuild, strerror(-ret));
		return ret;
	}
	if (ret == 0) {
		fsck_err("--rebuild %s: the device holds data (byte %llu is "
			 "not zero) and no signature says what: refusing to "
			 "overwrite it (-f overwrites it)", f->o.rebuild,
			 (unsigned long long)at);
		return -EEXIST;
	}
	return 0;
}

static int target_plan(struct fsck *f)
{
	struct fsck_rebuild e = { .slot = -1, .kind = FSCK_RB_TARGET,
				  .path = f->o.rebuild };
	int ret = 0;

	if (f->target.raidfs_ret == 0 && is_ours(f, &f->target.raidfs))
		ret = target_own_slot(f, &e);
	if (ret == 0 && e.kind == FSCK_RB_TARGET)
		ret = target_sigs_judge(f, &e);
	if (ret == 0 && e.kind == FSCK_RB_TARGET &&
	    !(f->target.raidfs_ret == 0 && is_ours(f, &f->target.raidfs)) &&
	    !f->target.nsigs)
		ret = target_blank_judge(f);
	if (ret == 0 && e.kind == FSCK_RB_TARGET &&
	    too_small(f, f->o.rebuild, f->target_size)) {
		fsck_err("--rebuild %s: the device is too small", f->o.rebuild);
		ret = -ENOSPC;
	}
	if (ret == 0 && e.slot < 0 && (e.slot = missing_slot(f)) < 0) {
		fsck_err("--rebuild %s: no member is missing: name the new "
			 "device in SOURCE in place of the lost one",
			 f->o.rebuild);
		ret = -EINVAL;
	}
	if (ret == 0)
		f->plan[f->nplan++] = e;
	return ret;
}

/*
 * Can path be rebuilt onto?  Opened as a rebuild would open it (exclusive,
 * read-write; read-only when fsck only reports), then what it holds and
 * its size.  0: yes; otherwise a line says why not.
 */
static int candidate_check(struct fsck *f, const char *path, bool blank,
			   int probed)
{
	unsigned flags = RC_DEV_EXCL |
		(f->o.mode == FSCK_MODE_YES ? 0 : RC_DEV_RDONLY);
	struct probe_result r;
	struct rc_dev *dev;
	char err[512], what[512];
	uint64_t size, at = 0;
	bool data = false;
	int ret;

	ret = rc_dev_open_file(path, flags, &dev);
	if (ret) {
		fsck_msg("  %s: cannot open it (%s): not rebuilt onto", path,
			 strerror(-ret));
		return ret;
	}
	size = dev->size;
	ret = blank ? probe_sigs_find(path, dev, &r, err, sizeof(err)) : 0;
	/* read whole: samples missed a file's data between them, and fsck
	 * -y rebuilt over it (a tester's find) */
	if (!ret && blank && !r.nsigs)
		data = probe_proves_blank(path, dev, &at) != 1;
	rc_dev_close(dev);
	if (ret) {
		fsck_msg("  %s", err);
		return ret;
	}
	if (data && probed == -EINVAL) {
		fsck_msg("  %s holds a raidfs superblock whose fields "
			 "contradict each other: not used without --rebuild %s",
			 path, path);
		return -EEXIST;
	}
	if (data) {
		fsck_msg("  %s holds data (no raidfs member, no signature "
			 "known): not used without --rebuild %s -f (byte %llu "
			 "is not zero)", path, path, (unsigned long long)at);
		return -EEXIST;
	}
	if (blank && r.nsigs) {
		probe_sig_describe(&r.sigs[0], what, sizeof(what));
		fsck_msg("  %s %s: not used without --rebuild %s (and -f)",
			 path, what, path);
		return -EEXIST;
	}
	return too_small(f, path, size);
}

static bool planned(const struct fsck *f, const char *path)
{
	for (int i = 0; i < f->nnamed; i++)
		if (f->named[i] == path)
			return true;
	return false;
}

/* The device of SOURCE that is slot's other side of a split brain (the
 * assembly left it out: rc_array_split_member), or NULL. */
static const char *split_dev(const struct fsck *f, int slot)
{
	for (int i = 0; i < f->ndevs; i++) {
		const struct fsck_dev *d = &f->devs[i];

		if (d->ret == 0 && is_ours(f, &d->p) &&
		    d->p.role == (uint32_t)slot &&
		    rc_array_split_member(f->array, d->p.member_uuid))
			return d->path;
	}
	return NULL;
}

/* The device of SOURCE that is slot's former member, left out as stale
 * (not a split brain's other side), or NULL; *returns: it left when the
 * slot went missing (rc_array_may_return), not an older copy of it. */
static const char *stale_named(const struct fsck *f, int slot, bool *returns)
{
	for (int i = 0; i < f->ndevs; i++) {
		const struct fsck_dev *d = &f->devs[i];

		if (d->ret == 0 && !d->shrunk && is_ours(f, &d->p) &&
		    d->p.role == (uint32_t)slot && !planned(f, d->path) &&
		    !rc_array_split_member(f->array, d->p.member_uuid)) {
			*returns = rc_array_may_return(f->array, &d->p);
			return d->path;
		}
	}
	return NULL;
}

/* A device of SOURCE for slot: its stale former member when it is the
 * device that left the slot, else a blank one.  Never an older copy of
 * the member (its writes stop before the slot went missing, or the slot
 * was active at the last update: st->stale_copy), which may be a backup
 * named by mistake: only --rebuild takes it; nor a split brain's other
 * side, whose writes a rebuild would destroy. */
static const char *candidate_find(struct fsck *f, int slot,
				  const struct rc_member_status *st,
				  enum fsck_rebuild_kind *kind)
{
	bool returns = false;
	const char *old = stale_named(f, slot, &returns);

	if (old && returns && !st->stale_copy &&
	    candidate_check(f, old, false, 0) == 0) {
		*kind = FSCK_RB_STALE;
		return old;
	}
	for (int i = 0; i < f->ndevs; i++) {
		const struct fsck_dev *d = &f->devs[i];

		if (d->opened && (d->ret == -ENODATA || d->ret == -EINVAL ||
				  d->ret == -EBADMSG) &&
		    !planned(f, d->path) &&
		    candidate_check(f, d->path, true, d->ret) == 0) {
			*kind = FSCK_RB_BLANK;
			return d->path;
		}
	}
	return NULL;
}

static void plan_say(const struct fsck *f, const struct fsck_rebuild *e,
		     const struct rc_member_status *st)
{
	const char *does = f->o.mode == FSCK_MODE_YES ? "rebuilding it" :
			   "fsck -y rebuilds it";
	const char *gone = st->state == RC_MEMBER_FAULTY ? "faulty" : "missing";

	switch (e->kind) {
	case FSCK_RB_RESUME:
		fsck_msg("  slot %d: the rebuild onto %s stopped at stripe %llu: "
			 "%s", e->slot, st->name,
			 (unsigned long long)st->rebuild_done,
			 f->o.mode == FSCK_MODE_YES ? "resuming it" :
			 "fsck -y resumes it");
		break;
	case FSCK_RB_STALE:
		fsck_msg("  slot %d is %s; %s is its former member (left out as "
			 "stale): %s in full", e->slot, gone, e->path, does);
		break;
	case FSCK_RB_BLANK:
		fsck_msg("  slot %d is %s; %s holds nothing: %s onto it",
			 e->slot, gone, e->path, does);
		break;
	default:
		fsck_msg("  slot %d is %s: %s onto a spare", e->slot, gone,
			 does);
		break;
	}
}

/* Without --rebuild: a device for every slot that is not active. */
static void implicit_plan(struct fsck *f)
{
	uint32_t spares = f->info.spares;
	struct rc_member_status st;
	struct fsck_rebuild e;

	for (uint32_t s = 0; s < f->info.members; s++) {
		const char *split, *old;
		bool returns = false;

		if (rc_array_member_status(f->array, (int)s, &st) ||
		    st.state == RC_MEMBER_ACTIVE)
			continue;
		if ((split = split_dev(f, (int)s))) {
			fsck_msg("  slot %u: %s may be the other side of a "
				 "SPLIT BRAIN (its superblock says it ran "
				 "without every member this array runs on): its "
				 "writes would not be in this array. Not rebuilt "
				 "over without --rebuild %s; to keep them, mount "
				 "it alone (-o degraded=allow) and copy them off "
				 "first; if it was only away (stale), --rebuild "
				 "is the fix", s, split, split);
			f->status |= FSCK_UNCORRECTED;
			f->split = true;
		}
		/* a slot being rebuilt names its rebuild's target, not a
		 * stale former member: the rebuild resumes below (it was said
		 * stale, exit 5, after a crash cut fsck's own rebuild short:
		 * a tester's find, T4 D1) */
		if (!split && st.state != RC_MEMBER_REBUILDING &&
		    (old = stale_named(f, (int)s, &returns)) &&
		    (st.stale_copy || !returns)) {
			fsck_msg("  slot %u: %s is its former member, left out "
				 "as stale (an old copy of it, or a disk that "
				 "lost writes): not rebuilt over without "
				 "--rebuild %s, so that a copy named by mistake "
				 "is kept", s, old, old);
			f->status |= FSCK_UNCORRECTED;
		}
		e = (struct fsck_rebuild){ .slot = (int)s };
		if (st.state == RC_MEMBER_REBUILDING)
			e.kind = FSCK_RB_RESUME;
		else if (!(e.path = candidate_find(f, (int)s, &st, &e.kind)) &&
			 spares)
			e.kind = FSCK_RB_SPARE;
		else if (!e.path) {
			f->unplanned++;
			continue;
		}
		spares -= e.kind == FSCK_RB_SPARE;
		if (e.path && f->nnamed < RC_MAX_MEMBERS)
			f->named[f->nnamed++] = e.path;
		plan_say(f, &e, &st);
		if (f->o.mode == FSCK_MODE_YES)
			f->plan[f->nplan++] = e;
	}
}

int fsck_rebuild_plan(struct fsck *f)
{
	f->nplan = 0;
	f->nnamed = 0;
	f->unplanned = 0;
	if (f->o.rebuild)
		return target_plan(f);
	if (f->info.level != RC_RAID0)
		implicit_plan(f);
	return 0;
}
