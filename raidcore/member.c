/*
 * member: the member states of an assembled array, as predicates over
 * a->m[] (what may be read, what is written, whether the array still has
 * its data), and the signal that a member changed state.
 *
 * The predicates read the states without taking state_lock: callers hold
 * it when they need an answer that stays true, and take a racy one as a
 * hint otherwise (a member turning faulty under a reader only makes the
 * reader's I/O fail, which it handles).
 *
 * State changes are made by their owners under state_lock (fail.c when a
 * member fails, super.c when a superblock write fails, rebuild.c as a
 * rebuild moves on); rc_member_state_changed() then wakes whoever waits on
 * state_cond for one - the recovery thread, which calls back into nothing
 * here but these predicates.  rc_member_nudge() wakes it from callers
 * that may hold any lock (an error was counted, a member shrank), without
 * state_lock: the thread's timed wait bounds what a missed wake-up costs.
 *
 * Also the array's suspension (rc_array_suspend_locked: a member it
 * cannot run without failed an I/O; fail.c says why), here because I/O
 * and superblock writes ask for it and member.c calls nothing of theirs.
 */
#include <stdio.h>
#include <string.h>
#include "array.h"

bool rc_member_present(struct rc_array *a, int slot)
{
	const struct rc_member *m = &a->m[slot];

	return m->dev && (m->state == RC_MEMBER_ACTIVE ||
			  m->state == RC_MEMBER_REBUILDING);
}

bool rc_member_usable(struct rc_array *a, int slot, uint64_t stripe)
{
	struct rc_member *m = &a->m[slot];

	if (!m->dev)
		return false;
	return m->state == RC_MEMBER_ACTIVE ||
	       (m->state == RC_MEMBER_REBUILDING && stripe < m->rebuild_pos);
}

/* Does some stripe lose more columns than it can rebuild, given which
 * slots are gone (gone[slot] true)? */
static bool geom_lost(const struct rc_geom *g, const bool *gone)
{
	struct rc_stripe_map map;
	uint64_t n = rc_geom_stripes(g);
	uint32_t red = rc_geom_redundancy(g), lost;

	n = n < 2ull * g->members ? n : 2ull * g->members;
	for (uint64_t s = 0; s < n; s++) {
		rc_geom_stripe(g, s, &map);
		lost = 0;
		for (uint32_t c = 0; c < map.ncols; c++)
			lost += gone[map.col[c].member];
		if (lost > red)
			return true;
	}
	return false;
}

bool rc_array_failed_beyond(struct rc_array *a)
{
	bool gone[RC_MAX_MEMBERS] = { false };

	for (uint32_t i = 0; i < a->g.members; i++)
		gone[i] = !rc_member_present(a, (int)i);
	return geom_lost(&a->g, gone);
}

bool rc_array_would_fail(struct rc_array *a, const bool *gone)
{
	return geom_lost(&a->g, gone);
}

/* Would the array lose data with the slots in mask gone, besides those
 * not active?  Caller holds state_lock. */
static bool lost_without(struct rc_array *a, uint32_t mask)
{
	bool gone[RC_MAX_MEMBERS] = { false };

	for (uint32_t t = 0; t < a->g.members; t++)
		gone[t] = !a->m[t].dev || a->m[t].state != RC_MEMBER_ACTIVE ||
			  (mask >> t & 1);
	return geom_lost(&a->g, gone);
}

bool rc_array_needs_unverified(struct rc_array *a, int slot)
{
	rc_verify_prune(a);
	return lost_without(a, 1u << slot | a->verify_slots);
}

void rc_verify_prune(struct rc_array *a)
{
	for (uint32_t s = 0; s < a->g.members; s++) {
		const struct rc_member *m = &a->m[s];

		if (!(a->verify_slots >> s & 1))
			continue;
		if (!m->dev || (m->state != RC_MEMBER_ACTIVE &&
				m->state != RC_MEMBER_REBUILDING) ||
		    memcmp(m->uuid, m->verify_uuid, RC_UUID_SIZE)) {
			a->verify_slots &= ~(1u << s);
			a->verify_pass &= ~(1u << s);
		}
	}
}

void rc_verify_want(struct rc_array *a, int slot, const char *why)
{
	const char *name = a->m[slot].dev ? a->m[slot].dev->name : "";

	if (a->verify_slots >> slot & 1) {
		/* found damaged again behind a pass that set out to verify
		 * it: what it passed may be damaged anew - it starts over
		 * (it ended "verified": a tester's find, V1 D2) */
		if (!(a->verify_pass >> slot & 1))
			return;
		a->verify_pass &= ~(1u << slot);
		a->verify_gen++;
		rc_log("member %d (%s) was found damaged again (%s): its "
		       "verification starts over", slot, name, why);
		rc_event_emit(a, RC_EV_VERIFY, slot, name, why, 0, 0, 0);
		return;
	}
	memcpy(a->m[slot].verify_uuid, a->m[slot].uuid, RC_UUID_SIZE);
	if (!a->verify_slots)
		snprintf(a->verify_why, sizeof(a->verify_why),
			 "member %d (%.48s): %.96s", slot, name, why);
	a->verify_slots |= 1u << slot;
	a->verify_gen++;
	/* a pass already under way did not set out to verify it */
	rc_log("member %d (%s): %s; it is not counted on as redundancy until "
	       "a repairing scrub of the whole array has verified it", slot,
	       name, strncmp(why, "superblock", 10) ? why : "what damaged its "
	       "superblocks may have reached its other blocks");
	rc_event_emit(a, RC_EV_VERIFY, slot, name, why, 0, 0, 0);
}

bool rc_array_needs(struct rc_array *a, int slot)
{
	return lost_without(a, 1u << slot);
}

bool rc_array_failed(struct rc_array *a)
{
	bool gone[RC_MAX_MEMBERS] = { false };

	if (atomic_load(&a->suspended))
		return true;
	for (uint32_t i = 0; i < a->g.members; i++)
		gone[i] = !a->m[i].dev || a->m[i].state != RC_MEMBER_ACTIVE;
	return geom_lost(&a->g, gone);
}

bool rc_array_suspended(struct rc_array *a)
{
	return atomic_load(&a->suspended);
}

bool rc_array_suspend_locked(struct rc_array *a, int slot, const char *why)
{
	const char *name = a->m[slot].dev ? a->m[slot].dev->name : "?";

	if (atomic_load(&a->suspended))
		return true;
	/* counting members not verified as lost, as raidfsctl fail does: a
	 * slot rebuilt with holes needs the member that failed to fill them
	 * (faulted, every file went EIO: a tester's find) */
	if (a->rdonly || a->m[slot].state != RC_MEMBER_ACTIVE ||
	    !rc_array_needs_unverified(a, slot))
		return false;
	a->suspend_slot = slot;
	snprintf(a->suspend_why, sizeof(a->suspend_why), "%s", why);
	atomic_store(&a->suspended, true);
	rc_log("member %d (%s) failed (%s), but the array cannot run without "
	       "it: the array is SUSPENDED - the member is not recorded "
	       "faulty, and nothing more is read or written (every read and "
	       "write fails with EIO); what was committed is in the journal. "
	       "Bring the device back, unmount, and mount again: the journal "
	       "replays what the failed writes missed", slot, name, why);
	rc_event_emit(a, RC_EV_SUSPENDED, slot, a->m[slot].dev ? name : NULL,
		      why, 0, 0, 0);
	return true;
}

/* pthread_cond_broadcast needs no mutex: a waiter between its check and
 * its wait misses this one, and sees the news at its next timeout. */
void rc_member_nudge(struct rc_array *a)
{
	pthread_cond_broadcast(&a->state_cond);
}

void rc_member_wake(struct rc_array *a)
{
	pthread_mutex_lock(&a->state_lock);
	pthread_cond_broadcast(&a->state_cond);
	pthread_mutex_unlock(&a->state_lock);
}

void rc_member_state_changed(struct rc_array *a)
{
	pthread_mutex_lock(&a->state_lock);
	a->state_changes++;
	pthread_cond_broadcast(&a->state_cond);
	pthread_mutex_unlock(&a->state_lock);
}
