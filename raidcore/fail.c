/*
 * fail: what happens when a member fails - by an I/O error the caller saw
 * (a write, a flush, the write of a repaired block), by a verdict waiting
 * in fault_pending (too many errors, a device that shrank, a superblock
 * that is not ours: rc_member_faults_apply), or by request (rc_member_fail
 * in rebuild.c, md's --fail).
 *
 *   1. the slot turns faulty under state_lock (only from active or
 *      rebuilding: a member fails once);
 *   2. the superblocks on the survivors are rewritten with the events
 *      counter bumped, so a later assembly leaves the member out;
 *   3. the change is told (rc_event_emit, RC_EV_FAIL) and signalled
 *      (rc_member_state_changed): the recovery thread, if running, puts
 *      a spare in.
 * The array goes on degraded; whether it still has its data is the
 * caller's question (rc_array_failed).
 *
 * Unless the array cannot run without the member (rc_array_needs): then
 * step 1 is not taken and the array is suspended instead
 * (rc_array_suspend_locked), as ZFS suspends a pool's I/O.  A member
 * recorded faulty beyond the redundancy made the array unassemblable for
 * good, even when the device only went away for a moment (a cable, a
 * controller reset): every later assembly left it out as faulty and
 * found too few members (a tester's RAID 5, one member already missing,
 * a second gone for two seconds while written).  Suspended, nothing more
 * is written - no superblock, no checkpoint, no closing update - and
 * nothing is read (a column whose in-place write failed would read back
 * old), so the superblocks say what they said before the failure, and
 * the journal, which holds every committed batch since the last
 * checkpoint, replays what the failed writes missed at the next
 * assembly once the device is back.
 */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "array.h"

static void member_fault(struct rc_array *a, int slot, const char *why,
			 bool damaged);

void rc_member_set_faulty(struct rc_array *a, int slot, const char *why)
{
	member_fault(a, slot, why, true);
}

void rc_member_set_faulty_err(struct rc_array *a, int slot, const char *why,
			      int err)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s: %s%s", why, strerror(-err),
		 err == -ENOSPC ? " (a file on a full filesystem? free space "
				  "there and add the member back)" : "");
	member_fault(a, slot, msg, true);
}

void rc_member_set_failed(struct rc_array *a, int slot, const char *why)
{
	member_fault(a, slot, why, false);
}

static void member_fault(struct rc_array *a, int slot, const char *why,
			 bool damaged)
{
	bool changed = false, suspended = false;
	char msg[160];

	if (atomic_load(&a->m[slot].shrunk) && a->m[slot].dev) {
		rc_io_shrunk_why(a, slot, msg, sizeof(msg));
		why = msg;
	}
	pthread_mutex_lock(&a->state_lock);
	/* An I/O failure (damaged) suspends; an administrator's fail goes
	 * through (rc_member_fail_redundant is the one that refuses), but
	 * not once the array is suspended: nothing is recorded then. */
	suspended = damaged ? rc_array_suspend_locked(a, slot, why) :
		    atomic_load(&a->suspended);
	if (!suspended && (a->m[slot].state == RC_MEMBER_ACTIVE ||
			   a->m[slot].state == RC_MEMBER_REBUILDING)) {
		a->m[slot].state = RC_MEMBER_FAULTY;
		a->m[slot].damaged = damaged;
		changed = true;
	}
	pthread_mutex_unlock(&a->state_lock);
	if (!changed)
		return;
	rc_log("member %d (%s) is faulty: %s; the array goes on degraded",
	       slot, a->m[slot].dev ? a->m[slot].dev->name : "?", why);
	rc_event_emit(a, RC_EV_FAIL, slot,
		      a->m[slot].dev ? a->m[slot].dev->name : NULL, why, 0, 0, 0);
	rc_sb_write_all(a);
	rc_member_state_changed(a);
}

int rc_member_sync_all(struct rc_array *a)
{
	uint32_t failed;
	int ret = rc_io_sync_all(a, &failed);

	for (uint32_t s = 0; s < a->g.members; s++)
		if (failed >> s & 1)
			rc_member_set_faulty(a, (int)s, "flush failed");
	return ret;
}

/* Why slot's pending fault is (pend: RC_PEND_* bits), into msg. */
static const char *pending_why(struct rc_array *a, int slot, unsigned pend,
			       char *msg, size_t len)
{
	if (pend & RC_PEND_SHRUNK)
		return "it shrank";     /* rc_member_set_faulty says by how much */
	if (pend & RC_PEND_IDENTITY) {
		pthread_mutex_lock(&a->state_lock);
		snprintf(msg, len, "%s", a->m[slot].lie);
		pthread_mutex_unlock(&a->state_lock);
		return msg;
	}
	if (pend & RC_PEND_UNHELD)
		return "a block written to it read back other than it was "
		       "written: it does not keep what is written";
	return "too many read or checksum errors";
}

/* Keeps slot's errors pending, for the next call (at the latest, the
 * recovery thread's tick, a second). */
static void errors_later(struct rc_array *a, int slot)
{
	atomic_fetch_or(&a->m[slot].fault_pending, RC_PEND_ERRORS);
}

/* When m's errors may be judged: RC_FAULT_SETTLE_NS past both the
 * threshold's crossing and m's last correction (0: not crossed). */
static uint64_t settle_end(struct rc_member *m)
{
	uint64_t over = atomic_load(&m->err_over_ns);
	uint64_t fixed = atomic_load(&m->corrected_ns);

	if (!over)
		return 0;
	return (fixed > over ? fixed : over) + RC_FAULT_SETTLE_NS;
}

/*
 * Would the array, with slot out, hold data that one more loss takes: the
 * last of its redundancy?  Caller holds state_lock.
 */
static bool last_redundancy(struct rc_array *a, int slot)
{
	bool gone[RC_MAX_MEMBERS] = { false };

	for (uint32_t t = 0; t < a->g.members; t++)
		gone[t] = !a->m[t].dev || a->m[t].state != RC_MEMBER_ACTIVE ||
			  t == (uint32_t)slot;
	for (uint32_t t = 0; t < a->g.members; t++) {
		bool lost;

		if (gone[t])
			continue;
		gone[t] = true;
		lost = rc_array_would_fail(a, gone);
		gone[t] = false;
		if (lost)
			return true;
	}
	return false;
}

/*
 * Whether slot's errors still fault it, when they are its only verdict.
 *  - Not once corrections brought the count back to the threshold.
 *  - Not while the count has been over it for less than
 *    RC_FAULT_SETTLE_NS, or the member's last correction is as recent: a
 *    read or a scrub counts a row's errors before it repairs them, and on
 *    a slow or busy disk the repairs of blocks already counted come in
 *    for a while (a tester's RAID 6 member with only pending sectors was
 *    faulted by 50 readers on a 4 MiB/s disk, and with it the redundancy
 *    another member's pending sectors needed).  At most the window.
 *  - Not in a read-only array: nothing can be rewritten there, so nothing
 *    is ever corrected, and faulting would only take the member's good
 *    blocks away from the rows the others' errors hit (a tester's RAID 6
 *    mounted ro lost files that way).  Its errors are reconstructed row
 *    by row as always.
 *  - Not when the array would be left with no redundancy: a member with
 *    errors still holds good blocks, each verified by its checksum, and
 *    they are the redundancy of every row the others' errors hit (ZFS
 *    degrades such a vdev rather than faulting it).  Not even with a
 *    spare: a rebuild onto it goes without those blocks (raidfsctl
 *    replace copies them).  It stays, said once.  These are errors that
 *    show again after any remount; a member whose repairs read back
 *    other than written is RC_PEND_UNHELD, faulted regardless.
 * Each "not yet" keeps the errors pending.
 */
static bool errors_fault(struct rc_array *a, int slot)
{
	struct rc_member *m = &a->m[slot];
	uint64_t over = atomic_load(&m->err_over_ns), now = rc_mono_ns();
	const char *kept = NULL;
	bool last;

	if (atomic_load(&m->err_window_count) <= a->fault_errors) {
		atomic_store(&m->err_over_ns, 0);
		return false;
	}
	if ((over && now - over < RC_FAULT_WINDOW_NS &&
	     now < settle_end(m)) ||
	    now < atomic_load(&m->kept_until_ns)) {
		errors_later(a, slot);
		return false;
	}
	pthread_mutex_lock(&a->state_lock);
	last = last_redundancy(a, slot);
	pthread_mutex_unlock(&a->state_lock);
	if (a->rdonly)
		kept = "the array is read-only: nothing can be rewritten, and "
		       "its good blocks still serve the rows others' errors "
		       "hit";
	else if (last)
		kept = "without it the array would have no redundancy left, "
		       "and its good blocks still serve the rows others' "
		       "errors hit (a rebuild onto a spare would go without "
		       "them: a spare replaces it online, as raidfsctl "
		       "replace does)";
	if (!kept)
		return true;
	if (last && !a->rdonly && !atomic_exchange(&m->kept_for_redundancy,
						   true))
		rc_member_nudge(a);     /* a spare, if any, replaces it */
	if (!atomic_exchange(&m->errors_kept_said, true))
		rc_log("member %d (%s) has too many read or checksum errors: "
		       "kept, as %s; every block of it is verified, its errors "
		       "are reconstructed (replace it)", slot,
		       m->dev ? m->dev->name : "?", kept);
	/* asked again in a second (a member back, the errors corrected):
	 * not at every read */
	atomic_store(&m->kept_until_ns, now + RC_FAULT_SETTLE_NS);
	errors_later(a, slot);
	return false;
}

void rc_member_faults_apply(struct rc_array *a)
{
	char msg[160];
	bool needed;

	if (rc_array_suspended(a))
		return;         /* nothing is recorded: kept for the next run */
	for (uint32_t s = 0; s < a->g.members; s++) {
		unsigned pend = atomic_exchange(&a->m[s].fault_pending, 0);
		const char *why;

		if ((pend & RC_PEND_SHRUNK) && !rc_io_still_shrunk(a, (int)s)) {
			/* about a device replaced since */
			atomic_store(&a->m[s].shrunk, false);
			pend &= ~(unsigned)RC_PEND_SHRUNK;
		}
		/* a member gone meanwhile (faulted: a rebuild target that did
		 * not read back) is not "kept" (it was said so: T1 #3) */
		if (!pend || !rc_member_present(a, (int)s))
			continue;
		if (pend == RC_PEND_ERRORS && !errors_fault(a, (int)s))
			continue;
		why = pending_why(a, (int)s, pend, msg, sizeof(msg));
		/* The last copy of the data stays in, errors and all: its
		 * good blocks are still the only ones there are.  But not a
		 * member that does not keep what it is written: every write
		 * from here on would be acknowledged and lost, and the next
		 * checkpoint would let the journal go, the only copy of what
		 * was fsync'd.  The array is suspended instead: nothing more
		 * is written, the journal stays, and a remount with a device
		 * that keeps its writes replays it (a tester's degraded RAID
		 * 1 on a member dropping writes: kept, "suspect", and every
		 * file overwritten since read back old after the remount,
		 * every new one gone, fsck saying clean). */
		pthread_mutex_lock(&a->state_lock);
		needed = rc_array_needs_unverified(a, (int)s);
		if (needed && (pend & RC_PEND_UNHELD))
			rc_array_suspend_locked(a, (int)s, why);
		pthread_mutex_unlock(&a->state_lock);
		if (rc_array_suspended(a))
			return;
		if (needed) {
			if (!atomic_exchange(&a->m[s].suspect_said, true))
				rc_log("member %u (%s): %s - but the array "
				       "cannot run without it: kept; its data "
				       "is suspect", s, a->m[s].dev ?
				       a->m[s].dev->name : "?", why);
			continue;
		}
		rc_member_set_faulty(a, (int)s, why);
	}
}

/*
 * Reads back, on every member, the last checksum table block and the last
 * data block a commit wrote in place since the last check (caller holds
 * commit_lock; after a flush of every member).  A member that drops
 * writes - a faulty firmware, a device-mapper or network target that
 * acknowledges and loses - and whose superblocks, read back after every
 * update, are outside the range, was seen by nothing while it served:
 * dropping its tables' writes along with its data's, it kept old blocks
 * and old tables that agree, and after a remount a RAID 1 file read back
 * as its previous version; dropping only its data's, the array said clean
 * without the redundancy it claimed (testers' finds).  Such a member gets
 * RC_PEND_UNHELD: faulted by the caller's rc_member_faults_apply, or the
 * array suspended when it cannot run without it.  Two reads of 4 KiB per
 * member per checkpoint.
 */
void rc_member_writes_check(struct rc_array *a)
{
	uint8_t *blk = rc_buf_alloc(RC_BLOCK_SIZE);

	for (uint32_t s = 0; blk && s < a->g.members; s++) {
		struct rc_member *m = &a->m[s];

		for (int k = 0; k < 2; k++) {
			bool lost;

			if (!m->wcheck_dev[k] || m->wcheck_dev[k] != m->dev ||
			    !rc_member_present(a, (int)s))
				continue;
			lost = rc_io_member_read(a, (int)s, m->wcheck_block[k], 1,
						 blk) == 0 &&
			       rc_block_csum(blk, m->wcheck_block[k]) !=
			       m->wcheck_sum[k];
			m->wcheck_dev[k] = NULL;
			if (!lost)
				continue;
			rc_log_block(a, (int)s, m->wcheck_block[k], k == 0 ?
				     "a checksum table block written in place "
				     "reads back other than it was written: "
				     "the member drops writes" :
				     "a block written in place reads back "
				     "other than it was written: the member "
				     "drops writes");
			atomic_fetch_add(&m->write_errors, 1);
			if (!(atomic_fetch_or(&m->fault_pending, RC_PEND_UNHELD) &
			      RC_PEND_UNHELD))
				rc_member_nudge(a);
		}
	}
	free(blk);
}

void rc_array_settle_faults(struct rc_array *a)
{
	uint64_t now = rc_mono_ns(), wait = 0;
	struct timespec ts;

	for (uint32_t s = 0; s < a->g.members; s++) {
		uint64_t end = settle_end(&a->m[s]);

		if ((atomic_load(&a->m[s].fault_pending) & RC_PEND_ERRORS) &&
		    end > now && end - now > wait)
			wait = end - now;
	}
	if (wait) {
		ts.tv_sec = (time_t)(wait / 1000000000ull);
		ts.tv_nsec = (long)(wait % 1000000000ull);
		nanosleep(&ts, NULL);
	}
	rc_member_faults_apply(a);
}
