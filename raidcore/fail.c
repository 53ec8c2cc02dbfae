/*
 * fail: what happens when a member fails - by an I/O error the caller saw
 * (a write, a flush, the write of a repaired block) or by request
 * (rc_member_fail, md's --fail).
 *
 *   1. the slot turns faulty under state_lock (only from active or
 *      rebuilding: a member fails once);
 *   2. the superblocks on the survivors are rewritten with the events
 *      counter bumped, so a later assembly leaves the member out;
 *   3. the change is signalled (rc_member_state_changed): the recovery
 *      thread, if running, puts a spare in.
 * The array goes on degraded; whether it still has its data is the
 * caller's question (rc_array_failed).
 */
#include <errno.h>
#include "array.h"

void rc_member_set_faulty(struct rc_array *a, int slot, const char *why)
{
	bool changed = false;

	pthread_mutex_lock(&a->state_lock);
	if (a->m[slot].state == RC_MEMBER_ACTIVE ||
	    a->m[slot].state == RC_MEMBER_REBUILDING) {
		a->m[slot].state = RC_MEMBER_FAULTY;
		changed = true;
	}
	pthread_mutex_unlock(&a->state_lock);
	if (!changed)
		return;
	rc_log("member %d (%s) is faulty: %s; the array goes on degraded",
	       slot, a->m[slot].dev ? a->m[slot].dev->name : "?", why);
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

int rc_member_fail(struct rc_array *a, int slot)
{
	if (slot < 0 || (uint32_t)slot >= a->g.members)
		return -EINVAL;
	if (a->rdonly)
		return -EROFS;
	rc_member_set_faulty(a, slot, "failed by request");
	return rc_array_failed(a) ? -EIO : 0;
}

void rc_member_faults_apply(struct rc_array *a)
{
	bool gone[RC_MAX_MEMBERS] = { false };

	for (uint32_t s = 0; s < a->g.members; s++) {
		if (!atomic_load(&a->m[s].fault_pending))
			continue;
		atomic_store(&a->m[s].fault_pending, false);
		/* The last copy of the data stays in, errors and all: its
		 * good blocks are still the only ones there are. */
		for (uint32_t t = 0; t < a->g.members; t++)
			gone[t] = !rc_member_present(a, (int)t) || t == s;
		if (rc_array_would_fail(a, gone)) {
			rc_log("member %u (%s) has too many errors, but the "
			       "array cannot run without it: kept", s,
			       a->m[s].dev ? a->m[s].dev->name : "?");
			continue;
		}
		rc_member_set_faulty(a, (int)s, "too many read or checksum "
				     "errors");
	}
}
