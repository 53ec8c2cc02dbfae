/*
 * recovery: the background thread that keeps an array redundant and its
 * members honest, like md's recovery thread and ZFS's fault management.
 * Once started (rc_array_start_recovery, which counts as a first write:
 * activate.c) it
 *   - resumes a rebuild that was interrupted (a REBUILDING slot),
 *   - puts a spare into a failed or missing slot and rebuilds it,
 *   - otherwise fills an online replacement (replace.c), which yields to
 *     such a rebuild, or starts one onto a spare for a member kept
 *     despite its errors as the last redundancy (manage.c,
 *     rc_spare_replace_kept),
 *   - faults the members found lying (rc_member_faults_apply: too many
 *     errors, shrunk, not the device last written), unless the array
 *     cannot run without them,
 *   - re-derives checksum table blocks found failing their seal (heal.c),
 *   - records the ERRORS flag on the members as soon as errors were seen
 *     (so a crash right after an error still leaves it there), and
 *   - every health_interval_ns re-reads every member's superblock and
 *     size (super.c, rc_sb_check_members; io.c, rc_io_size_check),
 * now and whenever something changes later.  It stops at close.
 *
 * It waits on state_cond with a timeout (RECOVERY_TICK_NS): the
 * member-state code signals it after a change (member.c,
 * rc_member_state_changed), lock-free callers nudge it (rc_member_nudge),
 * a read that found a table block failing its seal wakes it
 * (rc_member_wake), and the timeout bounds what a missed nudge costs.
 * It calls down into rebuild.c, heal.c, super.c, fail.c and member.c,
 * and nothing calls up into it but the array's start and close
 * (array.c).  state_changes seen at the
 * last look tells a change that came during a rebuild from none, and a
 * failed rebuild is tried again only after a change.
 *
 * Lock order: the thread waits holding state_lock alone; the rebuild
 * itself takes commit_lock and stripe locks as rebuild.c says.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "array.h"

#define RECOVERY_TICK_NS 1000000000ull

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

/* Whenever the thread wakes: now and then every member's size and
 * superblock are checked; members found lying go; the errors flag and
 * repaired superblock copies reach the members. */
static void recovery_health(struct rc_array *a, uint64_t *next_check)
{
	uint64_t now = rc_mono_ns();
	bool rewrite = false, record;

	if (a->health_interval_ns && now >= *next_check) {
		*next_check = now + a->health_interval_ns;
		for (uint32_t s = 0; s < a->g.members; s++)
			if (rc_member_present(a, (int)s))
				rc_io_size_check(a, (int)s);
		rewrite = rc_sb_check_members(a);
	}
	rc_member_faults_apply(a);
	pthread_mutex_lock(&a->state_lock);
	record = atomic_load(&a->errors_seen) &&
		 !(a->sb.array_flags & RC_AF_ERRORS);
	pthread_mutex_unlock(&a->state_lock);
	if (record || rewrite)
		rc_sb_write_all(a);
}

/* Caller holds state_lock: sleeps until a change, a nudge or the tick. */
static void recovery_wait(struct rc_array *a)
{
	uint64_t tick = RECOVERY_TICK_NS, t;
	struct timespec ts;

	if (a->health_interval_ns && a->health_interval_ns < tick)
		tick = a->health_interval_ns;
	t = rc_mono_ns() + tick;
	ts.tv_sec = (time_t)(t / 1000000000ull);
	ts.tv_nsec = (long)(t % 1000000000ull);
	pthread_cond_timedwait(&a->state_cond, &a->state_lock, &ts);
}

struct recovery_ctx {
	struct rc_array *a;
	uint64_t *next_check;
};

/* Between rebuild batches (no lock held): a rebuild takes hours on a large
 * array, and the members are watched meanwhile too. */
static void recovery_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct recovery_ctx *rc = ctx;

	recovery_health(rc->a, rc->next_check);
}

/* Rebuilds slot; true when it is done. */
static bool recovery_rebuild(struct rc_array *a, int slot, bool resume,
			     uint64_t *next_check)
{
	struct recovery_ctx rc = { a, next_check };
	int ret;

	rc_log("%s slot %d", resume ? "resuming the rebuild of" :
	       "rebuilding onto a spare:", slot);
	ret = rc_member_replace(a, slot, NULL, recovery_progress, &rc);
	rc_log("rebuild of slot %d %s", slot,
	       ret == 0 ? "done: the array is redundant again" : "stopped");
	return ret == 0;
}

/* Fills an online replacement (replace.c), yielding to a rebuild that
 * can run (may_yield), the members watched meanwhile; true when there is
 * more to do at once. */
static bool recovery_replace(struct rc_array *a, bool may_yield,
			     uint64_t *next_check)
{
	struct recovery_ctx rc = { a, next_check };
	int ret = rc_replace_run(a, may_yield, recovery_progress, &rc);

	return ret == 0 || ret == -EAGAIN || ret == -EIO;
}

/* One round of the thread's work; true when it did some. */
static bool recovery_work(struct rc_array *a, uint64_t seen,
			  uint64_t *failed_at, bool *resume,
			  uint64_t *next_check)
{
	bool worked = false;
	int slot;

	recovery_health(a, next_check);
	rc_tables_heal(a);
	slot = recovery_next(a, resume);
	if (slot >= 0 && seen != *failed_at && !rc_array_failed_beyond(a)) {
		worked = recovery_rebuild(a, slot, *resume, next_check);
		if (!worked)
			*failed_at = seen;
	} else if (rc_replace_pending(a)) {
		worked = recovery_replace(a, slot < 0, next_check);
	} else if (slot < 0 && a->nspares) {
		worked = rc_spare_replace_kept(a) == 0;
	}
	return worked;
}

static void *recovery_main(void *arg)
{
	struct rc_array *a = arg;
	uint64_t seen, failed_at = UINT64_MAX;
	uint64_t next_check = rc_mono_ns() + a->health_interval_ns;
	bool resume = false, worked;

	pthread_mutex_lock(&a->state_lock);
	while (!a->recovery_stop) {
		seen = a->state_changes;
		pthread_mutex_unlock(&a->state_lock);
		/* suspended (fail.c): no work, until the array goes */
		worked = !rc_array_suspended(a) &&
			 recovery_work(a, seen, &failed_at, &resume,
				       &next_check);
		pthread_mutex_lock(&a->state_lock);
		if (!a->recovery_stop && !worked && a->state_changes == seen &&
		    !atomic_load(&a->tables_to_heal))
			recovery_wait(a);
	}
	pthread_mutex_unlock(&a->state_lock);
	return NULL;
}

int rc_array_start_recovery(struct rc_array *a)
{
	int ret;

	if (a->rdonly)
		return 0;
	if (a->recovery_running)
		return 0;
	ret = rc_array_activate(a);
	if (ret < 0)
		return ret;
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
