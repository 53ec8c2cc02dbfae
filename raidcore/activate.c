/*
 * activate: a read-write array writes nothing until it is first used for
 * writing, so that a mount that fails after assembly (the wrong array
 * named, a filesystem that will not mount, a failed allocation) leaves
 * every member as it found it.
 *
 *   assembly (array.c)      replays an unclean journal into the overlay,
 *                           writes nothing; io.c refuses writes
 *   rc_array_activate       on the first write (rc_write, a flush with
 *                           something to flush, rc_discard, rebuild, fail,
 *                           scrub repair, clearing errors, the recovery
 *                           thread, a repair the read path makes): the
 *                           overlay goes in place, then the first
 *                           checkpoint marks the array active
 *   close, never activated  writes nothing: an unclean array stays
 *                           unclean, and the next assembly replays again
 *
 * Activation holds commit_lock, so no commit runs before it is done;
 * reads may run alongside (they see the overlay, then the same blocks in
 * place).  It takes no stripe lock, so a reader holding one may activate
 * with rc_array_activate_try (never waiting for commit_lock).  It happens once: a failure leaves the array failed, as the
 * same I/O errors would later.
 */
#include <errno.h>
#include "array.h"

bool rc_array_is_active(struct rc_array *a)
{
	return atomic_load(&a->active);
}

/* Caller holds commit_lock. */
static int activate_locked(struct rc_array *a)
{
	uint32_t failed;
	int ret;

	atomic_store(&a->writable, true);
	/* A member missing now may have lost these too (write-intent): a
	 * record resumed from before takes them before they go in place;
	 * one not started yet, from pending at the checkpoint's superblock
	 * write (rc_wi_checkpointed keeps them). */
	rc_wi_note_overlay(a);
	ret = rc_wi_flush(a);
	if (ret < 0) {
		/* as a commit fails when its stripes cannot be recorded */
		rc_log("the write-intent record could not be written: the "
		       "replayed journal is not put in place");
		return ret;
	}
	rc_overlay_write_back(a, &failed);
	for (uint32_t s = 0; s < a->g.members; s++)
		if (failed >> s & 1)
			rc_member_set_faulty(a, (int)s, "writing the replayed "
					     "journal in place failed");
	ret = rc_journal_checkpoint(a, false);
	/* In place and flushed (the checkpoint flushes before it writes the
	 * superblocks): the media says what the overlay said, except on
	 * members that failed the writes, which are no longer read. */
	rc_overlay_free(a);
	atomic_store(&a->active, true);
	return ret;
}

/* wait: for commit_lock; else -EAGAIN when someone holds it. */
static int activate(struct rc_array *a, bool wait)
{
	int ret = 0;

	if (a->rdonly)
		return -EROFS;
	if (rc_array_suspended(a))
		return -EIO;
	if (rc_array_is_active(a))
		return 0;
	if (wait)
		rc_commit_lock(a);
	else if (pthread_mutex_trylock(&a->commit_lock))
		return -EAGAIN;
	if (!rc_array_is_active(a))
		ret = activate_locked(a);
	pthread_mutex_unlock(&a->commit_lock);
	return ret;
}

int rc_array_activate(struct rc_array *a)
{
	return activate(a, true);
}

int rc_array_write_begin(struct rc_array *a, uint64_t block, uint64_t count)
{
	if (a->rdonly)
		return -EROFS;
	if (block > a->sb.array_blocks || count > a->sb.array_blocks - block)
		return -EINVAL;
	atomic_store_explicit(&a->last_io_ns, rc_mono_ns(), memory_order_relaxed);
	return rc_array_activate(a);
}

/* commit_lock comes before stripe locks: a caller holding one never waits
 * for it. */
int rc_array_activate_try(struct rc_array *a)
{
	return activate(a, false);
}
