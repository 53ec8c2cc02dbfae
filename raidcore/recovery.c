/*
 * recovery: the background thread that keeps an array redundant, like md's
 * recovery thread.  Once started (rc_array_start_recovery) it
 *   - resumes a rebuild that was interrupted (a REBUILDING slot), and
 *   - puts a spare into a failed or missing slot and rebuilds it,
 *   - re-derives checksum table blocks found failing their seal (heal.c),
 * now and whenever a member turns faulty later.  It stops at close.
 *
 * It learns of a failure by waiting on state_cond, which the member-state
 * code signals after a change (member.c, rc_member_state_changed): it
 * calls down into rebuild.c and member.c, and nothing calls up into it but
 * the array's start and close (array.c).  state_changes seen at the last
 * look tells a change that came during a rebuild from none.
 *
 * Lock order: the thread waits holding state_lock alone; the rebuild
 * itself takes commit_lock and stripe locks as rebuild.c says.
 */
#include <errno.h>
#include <stdlib.h>
#include "array.h"

/* The slot to work on, or -1. */
static int recovery_next(struct rc_array *a, bool *resume)
{
	int slot = -1;

	pthread_mutex_lock(&a->state_lock);
	for (uint32_t s = 0; s < a->g.members && slot < 0; s++) {
		if (a->m[s].dev && a->m[s].state == RC_MEMBER_REBUILDING) {
			slot = (int)s;
			*resume = true;
		}
	}
	for (uint32_t s = 0; s < a->g.members && slot < 0 && a->nspares; s++) {
		if (!a->m[s].dev || a->m[s].state != RC_MEMBER_ACTIVE) {
			slot = (int)s;
			*resume = false;
		}
	}
	pthread_mutex_unlock(&a->state_lock);
	return slot;
}

static void *recovery_main(void *arg)
{
	struct rc_array *a = arg;
	uint64_t seen = 0;
	bool resume = false;
	int slot, ret = 0;

	pthread_mutex_lock(&a->state_lock);
	while (!a->recovery_stop) {
		pthread_mutex_unlock(&a->state_lock);
		rc_tables_heal(a);
		slot = recovery_next(a, &resume);
		if (slot >= 0 && !rc_array_failed_beyond(a)) {
			rc_log("%s slot %d", resume ? "resuming the rebuild of" :
			       "rebuilding onto a spare:", slot);
			ret = rc_member_replace(a, slot, NULL, NULL, NULL);
			rc_log("rebuild of slot %d %s", slot,
			       ret == 0 ? "done: the array is redundant again" :
			       "stopped");
		}
		pthread_mutex_lock(&a->state_lock);
		if (slot < 0 || ret < 0)
			while (!a->recovery_stop && a->state_changes == seen &&
			       !atomic_load(&a->tables_to_heal))
				pthread_cond_wait(&a->state_cond, &a->state_lock);
		seen = a->state_changes;
	}
	pthread_mutex_unlock(&a->state_lock);
	return NULL;
}

int rc_array_start_recovery(struct rc_array *a)
{
	if (a->rdonly)
		return 0;
	if (a->recovery_running)
		return 0;
	if (pthread_create(&a->recovery_thread, NULL, recovery_main, a))
		return -EAGAIN;
	a->recovery_running = true;
	return 0;
}

void rc_recovery_stop(struct rc_array *a)
{
	if (!a->recovery_running)
		return;
	pthread_mutex_lock(&a->state_lock);
	a->recovery_stop = true;
	pthread_cond_broadcast(&a->state_cond);
	pthread_mutex_unlock(&a->state_lock);
	pthread_join(a->recovery_thread, NULL);
	a->recovery_running = false;
}
