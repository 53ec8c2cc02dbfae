/*
 * transaction: handles on the running transaction (jbd2's transaction.c,
 * xv6's begin_op / log_write / end_op).
 *
 * Usage (fs_int.h shows it in full):
 *   fs_tx_begin(fs, &tx)       joins the running transaction
 *   fs_tx_dirty(fs, tx, buf)   lists a metadata buffer about to change
 *   fs_tx_free(fs, tx, ...)    blocks freed: reusable once tx is durable
 *   fs_tx_end(fs, tx)
 * One operation is one handle, so it is atomic on disk: every buffer it
 * changed is in the same transaction, which commits whole or not at all.
 *
 * A commit (commit.c) closes the running transaction to new handles
 * (j->barrier), waits for its handles to end, and opens the next one; a
 * handle that would grow the running transaction past tx_limit commits it
 * first.  Nested fs_tx_begin on one thread joins the outer handle, since
 * waiting for a commit that waits for that outer handle would deadlock.
 *
 * Locking: j->lock guards the running transaction, its handle count and
 * buffer list; a thread in a handle never waits for an inode lock.
 */
#include <stdlib.h>
#include "fs_int.h"

/*
 * The handle this thread holds, so that a nested fs_tx_begin joins it
 * instead of waiting for a commit that waits for the outer handle.
 */
static __thread struct fs_tx *tls_tx;
__thread int fs_tx_depth;

/* Caller holds j->lock; it is dropped while the running one commits. */
static int tx_wait_room(struct fs *fs)
{
	struct fs_journal *j = &fs->j;
	int err;

	for (;;) {
		if (j->error)
			return -EROFS;
		if (j->barrier) {
			pthread_cond_wait(&j->cond, &j->lock);
			continue;
		}
		if (j->running->nbufs < j->tx_limit)
			return 0;
		/* Too big for the ring: commit it before adding to it. */
		pthread_mutex_unlock(&j->lock);
		err = fs_journal_commit(fs);
		pthread_mutex_lock(&j->lock);
		if (err)
			return err;
	}
}

int fs_tx_begin(struct fs *fs, struct fs_tx **out)
{
	struct fs_journal *j = &fs->j;
	int err;

	if (fs->rdonly)
		return -EROFS;
	if (fs_tx_depth > 0) {
		fs_tx_depth++;
		*out = tls_tx;
		return 0;
	}
	pthread_mutex_lock(&j->lock);
	err = tx_wait_room(fs);
	if (!err) {
		j->running->handles++;
		j->handles_started++;
		*out = j->running;
		tls_tx = j->running;
		fs_tx_depth = 1;
	}
	pthread_mutex_unlock(&j->lock);
	return err;
}

void fs_tx_end(struct fs *fs, struct fs_tx *tx)
{
	struct fs_journal *j = &fs->j;

	FS_ASSERT(fs_tx_depth > 0 && tls_tx == tx);
	if (--fs_tx_depth > 0)
		return;
	tls_tx = NULL;
	pthread_mutex_lock(&j->lock);
	FS_ASSERT(tx->handles > 0);
	if (--tx->handles == 0 && j->barrier)
		pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

/* Caller holds j->lock. */
static void tx_list(struct fs *fs, struct fs_tx *tx, struct fs_buf *b)
{
	void *v;

	b->forgotten = false;
	if (b->tx_seq == tx->seq)
		return;
	if (tx->nbufs == tx->cap) {
		v = realloc(tx->bufs, (tx->cap * 2 + 64) * sizeof(*tx->bufs));
		FS_ASSERT(v);
		tx->bufs = v;
		tx->cap = tx->cap * 2 + 64;
	}
	tx->bufs[tx->nbufs++] = b;
	b->tx_seq = tx->seq;
	bc_pin(fs, b);
}

void fs_tx_dirty(struct fs *fs, struct fs_tx *tx, struct fs_buf *b)
{
	struct fs_journal *j = &fs->j;

	pthread_mutex_lock(&j->lock);
	FS_ASSERT(tx == j->running && tx->handles > 0);
	tx_list(fs, tx, b);
	pthread_mutex_unlock(&j->lock);
}

void fs_tx_dirty_new(struct fs *fs, struct fs_tx *tx, struct fs_buf *b)
{
	struct fs_journal *j = &fs->j;

	pthread_mutex_lock(&j->lock);
	FS_ASSERT(tx == j->running && tx->handles > 0);
	tx_list(fs, tx, b);
	b->born_seq = tx->seq;
	pthread_mutex_unlock(&j->lock);
}

/*
 * A block allocated and freed by the running transaction: no earlier
 * transaction has a copy of it that replay could write (a metadata block
 * becomes allocatable only after the checkpoint that retired its last
 * copy) and it was never written home (that happens after the commit).
 * Unless the commit skips its buffer, it would be journalled with the
 * freed node's bytes, and replay or the home write would put those over
 * whatever reuses the block - file data included.  With the buffer
 * dropped, the block is free at once: an orphan list that empties and
 * fills again on every unlink reuses one block instead of a fresh one per
 * file, each of which the commit wrote twice.
 */
bool fs_tx_forget(struct fs *fs, struct fs_tx *tx, uint64_t blk)
{
	struct fs_journal *j = &fs->j;
	struct fs_buf *b = bc_find(fs, blk);
	bool gone = false;

	if (!b)
		return false;
	pthread_mutex_lock(&j->lock);
	FS_ASSERT(tx == j->running && tx->handles > 0);
	if (b->tx_seq == tx->seq && b->born_seq == tx->seq) {
		b->forgotten = true;
		gone = true;
	}
	pthread_mutex_unlock(&j->lock);
	bc_put(fs, b);
	return gone;
}

void fs_tx_free(struct fs *fs, struct fs_tx *tx, uint64_t blk, uint64_t len,
		bool meta)
{
	struct fs_journal *j = &fs->j;
	int err;

	pthread_mutex_lock(&j->lock);
	err = fs_extlist_add(meta ? &tx->free_meta : &tx->free_data, blk, len);
	FS_ASSERT(!err);
	pthread_mutex_unlock(&j->lock);
}
