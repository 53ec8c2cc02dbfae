/*
 * array: the assembled array fsck works on - read-only in phase 1, again
 * read-write for the writing modes (fsck_array_writable) - and, at the
 * end, the error record on its members.
 *
 * Assembly itself is the shared layer's (source_array_open in
 * source/source.c), as for every raidfs program; its messages and
 * raidcore's (left-out members, replay, and later every block error) are
 * caught with rfs_log_sink and shown inside fsck's phases.  What the
 * assembly is given is SOURCE less the members that shrank (members.c),
 * plus --rebuild TARGET when it holds a slot of this array.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "fsck.h"
#include "log.h"
#include "source.h"

static void log_sink(int prio, const char *msg)
{
	fsck_msg("  %s", msg);
}

/* The second, read-write assembly tells the same story again: only its
 * errors are shown. */
static void log_sink_errors(int prio, const char *msg)
{
	if (prio <= LOG_ERR)
		fsck_msg("  %s", msg);
}

/*
 * A --rebuild TARGET that is not in SOURCE but carries a raid slot of our
 * array joins the assembly: an interrupted rebuild onto it is then found
 * in its slot and resumed, instead of starting again.
 */
static bool target_joins(const struct fsck *f)
{
	const struct rc_probe *t = &f->target.raidfs;

	if (!f->o.rebuild || f->target_in_source >= 0 ||
	    f->target.raidfs_ret || t->role == 0xffffffffu)
		return false;
	for (int i = 0; i < f->ndevs; i++)
		if (f->devs[i].ret == 0 &&
		    !memcmp(f->devs[i].p.array_uuid, t->array_uuid, RC_UUID_SIZE))
			return true;
	return false;
}

/*
 * What the assembly is given: SOURCE's devices but those that shrank, and
 * TARGET when it joins.  The lists in *src point into a new allocation,
 * *paths (free it).
 */
static int assembly_source(const struct fsck *f, struct config_source *src,
			   char ***paths)
{
	char **p = calloc((size_t)f->ndevs + 1, sizeof(*p));
	int i, n = 0;

	if (!p)
		return -ENOMEM;
	*src = f->src;
	for (i = 0; i < f->src.nmembers; i++)
		if (!f->devs[i].shrunk)
			p[n++] = (char *)f->devs[i].path;
	if (target_joins(f))
		p[n++] = (char *)f->o.rebuild;
	src->members = p;
	src->nmembers = n;
	src->spares = p + n;
	for (; i < f->ndevs; i++)
		if (!f->devs[i].shrunk)
			p[n++] = (char *)f->devs[i].path;
	src->nspares = n - src->nmembers;
	*paths = p;
	return 0;
}

/* The array's slots that are not active now. */
static uint32_t slots_down(struct rc_array *a, uint32_t members)
{
	struct rc_member_status ms;
	uint32_t n = 0;

	for (uint32_t i = 0; i < members; i++)
		if (rc_array_member_status(a, (int)i, &ms) != 0 ||
		    ms.state != RC_MEMBER_ACTIVE)
			n++;
	return n;
}

int fsck_array_open(struct fsck *f, bool rdonly)
{
	struct config_source src;
	struct source_array sa;
	char **paths, err[512];
	int ret;

	ret = assembly_source(f, &src, &paths);
	if (ret)
		return ret;
	rfs_log_sink(rdonly ? log_sink : log_sink_errors);
	f->co.ro = rdonly;
	f->co.degraded = CONFIG_DEGRADED_ALLOW;
	ret = source_array_open(&src, &f->co, &sa, err, sizeof(err));
	rfs_log_sink(log_sink);
	free(paths);
	if (ret) {
		fsck_err("cannot assemble the array: %s", err);
		/* not checked: exit 8 alone, whatever phase 1 found of the
		 * members (a shrunk one said 12, a blank one 8: a tester's
		 * find), and nothing was written: not "corrected" either
		 * (superblock copies phase 1 said it rewrites made it 9:
		 * W4's find) */
		f->status &= ~(FSCK_UNCORRECTED | FSCK_CORRECTED);
		return ret;
	}
	f->array = sa.array;
	f->bdev = sa.bdev;
	/* fsck repairs a member in place, however many blocks that takes */
	rc_array_set_fault_errors(f->array, 0);
	ret = rc_array_info(f->array, &f->info);
	if (ret)
		fsck_err("array info: %s", strerror(-ret));
	f->down_at_open = slots_down(f->array, f->info.members);
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

int fsck_array_writable(struct fsck *f)
{
	int ret;

	if (f->o.mode == FSCK_MODE_NO)
		return 0;
	ret = fsck_array_close(f);
	if (ret) {
		fsck_err("closing the read-only assembly: %s", strerror(-ret));
		return ret;
	}
	ret = fsck_array_open(f, false);
	/* the superblock copies phase 1 found damaged go out whole with
	 * this assembly's first update; one refused wrote nothing (it said
	 * "rewritten" and exited 9 where nothing was: W4's find) */
	if (ret == 0 && f->copies_to_rewrite)
		f->status |= FSCK_CORRECTED;
	return ret;
}

int fsck_errors_clear(struct fsck *f)
{
	struct rc_info info;
	int ret;

	if (!f->array || f->o.mode == FSCK_MODE_NO)
		return 0;
	/* phase 4 did not say whether phase 2's mismatches are still there */
	if (f->mismatch_pending)
		f->status |= FSCK_UNCORRECTED;
	/* A member faulted during the run (it vanished, a repair write
	 * failed) leaves the array degraded, whatever else was repaired:
	 * not "errors corrected" (exit 1 told a boot script redundancy was
	 * back: a tester's find).  -p on an array degraded from the start
	 * (redundancy.c lets the boot go on) counts the slots lost since. */
	if (rc_array_info(f->array, &info) == 0 && info.degraded &&
	    (f->o.mode != FSCK_MODE_PREEN ||
	     slots_down(f->array, info.members) > f->down_at_open) &&
	    !(f->status & FSCK_UNCORRECTED)) {
		fsck_msg("  the array is degraded at the end of the check: a "
			 "member failed during it");
		/* 4 alone, as the manual says: it was 5 with the repairs
		 * made before the loss (V4's find) */
		f->status |= FSCK_UNCORRECTED;
		f->status &= ~FSCK_CORRECTED;
	}
	/* Errors left: on the members, so that the next plain run checks in
	 * full.  A writing pass used to activate the array at its start,
	 * which wrote them; it now writes nothing unless it repairs (a
	 * clean degraded array that needs nothing stays untouched). */
	if (f->status & (FSCK_UNCORRECTED | FSCK_OPERATIONAL)) {
		bool shrunk = false;

		/* a member of ours left out as shrunk: damage the assembly
		 * did not count; its slot goes missing on the members, so
		 * the device is never taken as current again */
		for (int i = 0; i < f->ndevs; i++)
			shrunk |= f->devs[i].shrunk;
		ret = rc_array_record_errors(f->array, shrunk);
		if (ret)
			fsck_err("recording the errors on the members: %s",
				 strerror(-ret));
		return ret;
	}
	if (rc_array_info(f->array, &info) == 0 && !info.errors &&
	    !f->errors_recorded)
		return 0;
	ret = rc_array_clear_errors(f->array, true);
	if (ret)
		fsck_err("clearing the members' error record: %s",
			 strerror(-ret));
	else
		fsck_msg("  nothing is left uncorrected: the error record on "
			 "the members is cleared");
	return ret;
}

