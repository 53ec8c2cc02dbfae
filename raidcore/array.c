/*
 * array: an array's life once assembly (assemble.c) has chosen its members
 * and filled a->sb and a->m[]:
 *
 *   rc_array_init    geometry, locks, the stripe table, the checksum
 *                    cache, one I/O worker per member
 *   rc_array_start   replay the journal into the overlay after an unclean
 *                    shutdown; nothing is written (activate.c: the first
 *                    write puts it in place and marks the array active)
 *   ... I/O, maintenance, the recovery thread ...
 *   rc_array_close   stop the recovery thread; if the array was ever
 *                    written to, flush and checkpoint clean; then
 *                    rc_array_free: stop the workers, close the devices
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "array.h"

void rc_array_set_cache(struct rc_array *a, uint64_t bytes)
{
	uint64_t n = bytes / ((uint64_t)a->stripe_blocks * RC_BLOCK_SIZE);

	a->max_dirty_stripes = n < 4 ? 4 : n > 65536 ? 65536 : (uint32_t)n;
	if (a->pool)
		rc_stripe_pool_limit(a);
}

void rc_array_set_fault_errors(struct rc_array *a, uint32_t errors)
{
	a->fault_errors = errors;
}

void rc_array_set_health_interval(struct rc_array *a, uint32_t ms)
{
	a->health_interval_ns = (uint64_t)ms * 1000000ull;
}

/* state_cond measures its timeouts on the monotonic clock. */
static void state_cond_init(struct rc_array *a)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->state_cond, &ca);
	pthread_condattr_destroy(&ca);
}

/* A writer waiting keeps new readers out (glibc's default lets a stream
 * of readers starve it). */
static void rwlock_init_writers_first(pthread_rwlock_t *l)
{
	pthread_rwlockattr_t at;

	pthread_rwlockattr_init(&at);
	pthread_rwlockattr_setkind_np(&at,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(l, &at);
	pthread_rwlockattr_destroy(&at);
}

int rc_array_init(struct rc_array *a, unsigned flags)
{
	int ret;

	a->fault_errors = RC_FAULT_ERRORS_DEFAULT;
	rc_array_set_health_interval(a, RC_HEALTH_INTERVAL_MS);
	a->g = (struct rc_geom){ .level = a->sb.level, .layout = a->sb.layout,
		.members = a->sb.members, .chunk_blocks = a->sb.chunk_blocks,
		.member_blocks = a->sb.member_blocks };
	a->ndata = rc_geom_data_columns(&a->g);
	a->nred = rc_geom_redundancy(&a->g);
	if (a->g.level == RC_RAID1 || a->g.level == RC_RAID10)
		a->nred = a->g.level == RC_RAID1 ? a->g.members - 1 : 1;
	a->stripe_blocks = rc_geom_stripe_blocks(&a->g);
	a->stripes = rc_geom_stripes(&a->g);
	a->journal_blocks = a->sb.journal_blocks;
	a->rdonly = flags & RC_ASSEMBLE_RDONLY;
	a->par = rc_parity_best();
	a->jseq = a->jcheckpoint = a->sb.journal_seq;
	pthread_mutex_init(&a->commit_lock, NULL);
	pthread_mutex_init(&a->retire_lock, NULL);
	pthread_mutex_init(&a->state_lock, NULL);
	pthread_mutex_init(&a->csum_lock, NULL);
	pthread_mutex_init(&a->event_lock, NULL);
	pthread_mutex_init(&a->suspect_lock, NULL);
	pthread_rwlock_init(&a->overlay_lock, NULL);
	rwlock_init_writers_first(&a->slots_lock);
	state_cond_init(a);
	rc_writeback_init(a);
	rc_array_set_cache(a, 64ull << 20);
	a->zero = rc_buf_alloc((size_t)a->g.chunk_blocks * RC_BLOCK_SIZE);
	if (a->zero)
		memset(a->zero, 0, (size_t)a->g.chunk_blocks * RC_BLOCK_SIZE);
	if (!a->zero)
		return -ENOMEM;
	ret = rc_stripe_table_init(a);
	if (ret == 0)
		ret = rc_csum_init(a);
	if (ret == 0)
		ret = rc_io_start(a);
	for (uint32_t s = 0; s < a->g.members; s++)
		a->m[s].jhead = a->m[s].jtail;
	if (ret == 0)
		ret = rc_wi_init(a);
	return ret;
}

void rc_array_free(struct rc_array *a)
{
	rc_writeback_fini(a);
	rc_recovery_stop(a);
	rc_io_stop(a);
	rc_journal_fini(a);
	rc_arena_fini(&a->commit_arena);
	rc_csum_fini(a);
	rc_stripe_table_fini(a);
	rc_overlay_free(a);
	rc_wi_fini(a);
	for (uint32_t s = 0; s < RC_MAX_MEMBERS; s++)
		rc_dev_close(a->m[s].dev);
	for (int i = 0; i < a->nspares; i++)
		rc_dev_close(a->spare[i]);
	rc_dev_close(a->repl.dst);
	free(a->zero);
	pthread_mutex_destroy(&a->commit_lock);
	pthread_mutex_destroy(&a->retire_lock);
	pthread_mutex_destroy(&a->state_lock);
	pthread_mutex_destroy(&a->csum_lock);
	pthread_mutex_destroy(&a->event_lock);
	pthread_mutex_destroy(&a->suspect_lock);
	free(a->suspect);
	pthread_rwlock_destroy(&a->overlay_lock);
	pthread_rwlock_destroy(&a->slots_lock);
	pthread_cond_destroy(&a->state_cond);
	free(a);
}

int rc_array_start(struct rc_array *a)
{
	bool unclean = a->sb.array_state != RC_STATE_CLEAN;
	int ret = 0;

	if (unclean) {
		a->was_unclean = true;
		ret = rc_journal_replay(a);
		if (ret < 0)
			return ret;
		if (a->replayed_txns)
			rc_log("replayed %llu journal transactions after an "
			       "unclean shutdown",
			       (unsigned long long)a->replayed_txns);
	}
	if (a->rdonly)
		return 0;
	for (uint32_t s = 0; s < a->g.members; s++) {
		if (!a->m[s].dev && a->m[s].state == RC_MEMBER_MISSING)
			rc_log("slot %u is missing: running degraded", s);
	}
	return 0;
}

/*
 * The closing barrier: every write in place and on every member's media,
 * then one superblock update (the journal still live, the state still
 * active) before the clean one.  A member left one update behind the
 * clean superblocks - a crash tore the last update, which assembly keeps
 * - then holds every write: none comes between the two updates.  With one
 * update, a copy of a member from the last update before the close was
 * one behind too, and kept, with none of the writes since it on its
 * media and no journal left to hold it to them.
 */
static int close_barrier(struct rc_array *a)
{
	int ret = rc_member_sync_all(a);

	if (ret < 0 && rc_array_failed(a))
		return ret;
	return rc_sb_write_all(a);
}

int rc_array_close(struct rc_array *a)
{
	int ret = 0;

	if (!a)
		return 0;
	/* A rebuild in progress stops between batches; it resumes at the
	 * next assembly from its checkpoint. */
	atomic_store(&a->rebuild_abort, true);
	rc_recovery_stop(a);
	/* A fault waiting out its settle time is applied before the closing
	 * superblocks would call the member current and clean (a member
	 * that dropped writes, unmounted within the second, was read at the
	 * next mount: its old blocks verify against its old tables). */
	if (!a->rdonly && rc_array_is_active(a) && !rc_array_suspended(a))
		rc_array_settle_faults(a);
	/* No commit after the closing flush: the superblocks then say
	 * clean, and a later batch would be in nobody's replay. */
	rc_writeback_stop(a);
	/* Suspended (fail.c): nothing is written, the superblocks stay as
	 * they were before the failure and the next assembly replays. */
	if (rc_array_suspended(a)) {
		rc_log("closing a suspended array: nothing written; the next "
		       "assembly, with member %d back, replays the journal",
		       a->suspend_slot);
		ret = -EIO;
	}
	/* Never written to: nothing to flush, and nothing is written. */
	if (!a->rdonly && rc_array_is_active(a) && !rc_array_suspended(a)) {
		/* A member that is no longer the device last written (an
		 * old image put back, writes lost since the last check) is
		 * faulted by the flush, before the closing superblocks would
		 * call it clean and current. */
		rc_sb_check_members(a);
		ret = rc_flush(a);
		rc_commit_lock(a);
		if (ret == 0)
			ret = close_barrier(a);
		if (ret == 0)
			ret = rc_journal_checkpoint(a, true);
		pthread_mutex_unlock(&a->commit_lock);
	}
	rc_array_free(a);
	return ret;
}
