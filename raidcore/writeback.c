/*
 * writeback: rc_write into the stripe cache, and the cache written back
 * (commit.c's rc_commit) by the writer that fills it or by a thread of its
 * own, for callers that ask for it (rc_array_set_writeback: the daemon
 * does), as md's raid5d writes back for the callers of the block layer.
 *
 * Without it the writer whose rc_write takes the cache past its limit
 * commits there and then, and the writers behind it wait: the copy into
 * the cache and the commit (parity, checksums, journal, in-place writes)
 * take turns.  With it, a writer that takes the cache past half its limit
 * wakes the thread (rc_writeback_kick), which commits down to half
 * (rc_commit(a, false)) while the writers go on filling other stripes;
 * a writer still commits itself past the whole limit, so the cache never
 * holds more than before.  Crash semantics are the commit's own: the
 * thread runs the same commits, only in another thread and sooner.  Its
 * errors are not lost: the stripes of a failed batch go back on the dirty
 * list, and the next rc_flush commits them again or fails.
 *
 * wb.lock is a leaf: the thread drops it before committing.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)

static void *wb_main(void *arg)
{
	struct rc_array *a = arg;

	pthread_mutex_lock(&a->wb.lock);
	for (;;) {
		while (!a->wb.kicked && !a->wb.stop)
			pthread_cond_wait(&a->wb.cond, &a->wb.lock);
		if (a->wb.stop)
			break;
		a->wb.kicked = false;
		pthread_mutex_unlock(&a->wb.lock);
		rc_commit(a, false);
		pthread_mutex_lock(&a->wb.lock);
	}
	pthread_mutex_unlock(&a->wb.lock);
	return NULL;
}

void rc_writeback_init(struct rc_array *a)
{
	pthread_mutex_init(&a->wb.lock, NULL);
	pthread_cond_init(&a->wb.cond, NULL);
}

void rc_array_set_writeback(struct rc_array *a, bool background)
{
	if (!background) {
		rc_writeback_stop(a);
		return;
	}
	pthread_mutex_lock(&a->wb.lock);
	a->wb.enabled = !a->rdonly;
	a->wb.stop = false;
	pthread_mutex_unlock(&a->wb.lock);
}

bool rc_writeback_kick(struct rc_array *a)
{
	bool taken = false;

	pthread_mutex_lock(&a->wb.lock);
	if (a->wb.enabled && !a->wb.started) {
		/* Started by the first write that needs it; without a
		 * thread the writers commit themselves, as before. */
		a->wb.started = pthread_create(&a->wb.thread, NULL, wb_main,
					       a) == 0;
		a->wb.enabled = a->wb.started;
	}
	if (a->wb.enabled) {
		a->wb.kicked = true;
		pthread_cond_signal(&a->wb.cond);
		taken = true;
	}
	pthread_mutex_unlock(&a->wb.lock);
	return taken;
}

void rc_writeback_stop(struct rc_array *a)
{
	bool started;

	pthread_mutex_lock(&a->wb.lock);
	a->wb.enabled = false;
	a->wb.stop = true;
	started = a->wb.started;
	a->wb.started = false;
	pthread_cond_signal(&a->wb.cond);
	pthread_mutex_unlock(&a->wb.lock);
	if (started)
		pthread_join(a->wb.thread, NULL);
}

void rc_writeback_fini(struct rc_array *a)
{
	rc_writeback_stop(a);
	pthread_mutex_destroy(&a->wb.lock);
	pthread_cond_destroy(&a->wb.cond);
}

int rc_write_flags(struct rc_array *a, uint64_t block, uint32_t count,
		   const void *buf, unsigned flags)
{
	const uint8_t *in = buf;
	struct rc_stripe *st;
	uint64_t stripe;
	uint32_t col, r, i, k;
	int ret = 0;

	ret = rc_array_write_begin(a, block, count);
	while (count && ret == 0) {
		rc_geom_locate(&a->g, block, &stripe, &col, &r);
		i = col * a->g.chunk_blocks + r;
		/* consecutive blocks are consecutive in the stripe's data */
		k = a->stripe_blocks - i < count ? a->stripe_blocks - i : count;
		st = rc_stripe_lock(a, stripe);
		ret = rc_stripe_ensure_data(a, st);
		if (ret == 0) {
			memcpy(BLK(st->data, i), in, (size_t)k * RC_BLOCK_SIZE);
			if (!(flags & RC_WRITE_FRESH))
				st->stale = true;
			rc_stripe_mark_dirty_run(a, st, i, k);
			in += (size_t)k * RC_BLOCK_SIZE;
			block += k;
			count -= k;
		}
		rc_stripe_unlock(a, st);
	}
	/* Past the limit the writer commits; past half of it the writeback
	 * thread does, if the array has one (writeback.c). */
	if (ret == 0 && a->ndirty_stripes > a->max_dirty_stripes)
		ret = rc_commit(a, false);
	else if (ret == 0 && a->ndirty_stripes > a->max_dirty_stripes / 2)
		rc_writeback_kick(a);
	return ret;
}

int rc_write(struct rc_array *a, uint64_t block, uint32_t count,
	     const void *buf)
{
	return rc_write_flags(a, block, count, buf, 0);
}
