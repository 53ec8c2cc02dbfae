/*
 * journal: physical metadata journal with group commit and ordered data
 * (jbd2's model, simplified).
 *
 * Every metadata change happens inside a handle on the running
 * transaction (fs_tx_begin / fs_tx_dirty / fs_tx_end).  A commit closes the
 * running transaction to new handles, waits for its open handles, copies
 * every buffer it touched (so the next transaction can go on modifying them)
 * and opens the next transaction; then, with no lock held but commit_lock:
 *
 *   1. descriptors + block copies into the ring  (data writes of the
 *      transaction were issued before its handles ended: ordered mode)
 *   2. flush                   data and journal blocks durable
 *   3. commit record, flush    THE COMMIT POINT
 *   4. copies written home     (durable at the next flush)
 *
 * The ring is reclaimed by a checkpoint: flush (every home write durable),
 * then the journal superblock is rewritten to start after the last commit.
 * Freed data blocks become allocatable when the freeing transaction has
 * committed; freed metadata blocks only after a checkpoint, because replay
 * of an older transaction would otherwise write stale metadata over data
 * that reused the block (jbd2 uses revoke records for this).
 *
 * Replay (fs_journal_load) applies every committed transaction from the
 * journal superblock on, in order; a transaction without a valid commit
 * record, with a wrong sequence number, a foreign journal id or a copy
 * that fails its checksum ends the replay.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fs_int.h"

#define FS_JDESC_ID(fs) fs_le64(*(const uint64_t *)(fs)->sb.uuid)

int fs_extlist_add(struct fs_extlist *l, uint64_t blk, uint64_t len)
{
	void *v;

	if (l->n && l->v[l->n - 1].blk + l->v[l->n - 1].len == blk) {
		l->v[l->n - 1].len += len;
		return 0;
	}
	if (l->n == l->cap) {
		v = realloc(l->v, (l->cap * 2 + 16) * sizeof(*l->v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = l->cap * 2 + 16;
	}
	l->v[l->n].blk = blk;
	l->v[l->n].len = len;
	l->n++;
	return 0;
}

void fs_extlist_free(struct fs_extlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static struct fs_tx *tx_new(uint64_t seq)
{
	struct fs_tx *tx = calloc(1, sizeof(*tx));

	if (tx)
		tx->seq = seq;
	return tx;
}

static void tx_destroy(struct fs_tx *tx)
{
	if (!tx)
		return;
	free(tx->bufs);
	fs_extlist_free(&tx->free_data);
	fs_extlist_free(&tx->free_meta);
	free(tx);
}

static bool tx_is_empty(const struct fs_tx *tx)
{
	return !tx->nbufs && !tx->free_data.n && !tx->free_meta.n;
}

/* ---- handles ------------------------------------------------------------- */
static int journal_commit(struct fs *fs);

/*
 * The handle this thread holds, so that a nested fs_tx_begin joins it
 * instead of waiting for a commit that waits for the outer handle.
 */
static __thread struct fs_tx *tls_tx;
static __thread int tls_depth;

bool fs_tx_held(void)
{
	return tls_depth > 0;
}

int fs_tx_begin(struct fs *fs, struct fs_tx **out)
{
	struct fs_journal *j = &fs->j;
	int err = 0;

	if (fs->rdonly)
		return -EROFS;
	if (tls_depth > 0) {
		tls_depth++;
		*out = tls_tx;
		return 0;
	}
	pthread_mutex_lock(&j->lock);
	for (;;) {
		if (j->error) {
			err = -EROFS;
			break;
		}
		if (j->barrier) {
			pthread_cond_wait(&j->cond, &j->lock);
			continue;
		}
		if (j->running->nbufs < j->tx_limit)
			break;
		/* Too big for the ring: commit it before adding to it. */
		pthread_mutex_unlock(&j->lock);
		pthread_mutex_lock(&j->commit_lock);
		err = journal_commit(fs);
		pthread_mutex_unlock(&j->commit_lock);
		pthread_mutex_lock(&j->lock);
		if (err)
			break;
	}
	if (!err) {
		j->running->handles++;
		*out = j->running;
		tls_tx = j->running;
		tls_depth = 1;
	}
	pthread_mutex_unlock(&j->lock);
	return err;
}

void fs_tx_end(struct fs *fs, struct fs_tx *tx)
{
	struct fs_journal *j = &fs->j;

	FS_ASSERT(tls_depth > 0 && tls_tx == tx);
	if (--tls_depth > 0)
		return;
	tls_tx = NULL;
	pthread_mutex_lock(&j->lock);
	FS_ASSERT(tx->handles > 0);
	if (--tx->handles == 0 && j->barrier)
		pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

void fs_tx_dirty(struct fs *fs, struct fs_tx *tx, struct fs_buf *b)
{
	struct fs_journal *j = &fs->j;
	void *v;

	pthread_mutex_lock(&j->lock);
	FS_ASSERT(tx == j->running && tx->handles > 0);
	if (b->tx_seq == tx->seq)
		goto out;
	if (tx->nbufs == tx->cap) {
		v = realloc(tx->bufs, (tx->cap * 2 + 64) * sizeof(*tx->bufs));
		FS_ASSERT(v);
		tx->bufs = v;
		tx->cap = tx->cap * 2 + 64;
	}
	tx->bufs[tx->nbufs++] = b;
	b->tx_seq = tx->seq;
	bc_pin(fs, b);
out:
	pthread_mutex_unlock(&j->lock);
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

/* ---- ring I/O ------------------------------------------------------------ */
static uint64_t ring_blk(struct fs_journal *j, uint64_t pos)
{
	return j->ring_start + pos % j->ring_blocks;
}

/* Writes n blocks at ring position pos, wrapping. */
static int ring_write(struct fs *fs, uint64_t pos, const uint8_t *buf,
		      uint64_t n)
{
	struct fs_journal *j = &fs->j;
	uint64_t first;
	int err;

	pos %= j->ring_blocks;
	first = j->ring_blocks - pos < n ? j->ring_blocks - pos : n;
	err = fs_bdev_write(fs->bdev, j->ring_start + pos, (uint32_t)first,
			    buf);
	if (!err && n > first)
		err = fs_bdev_write(fs->bdev, j->ring_start,
				    (uint32_t)(n - first),
				    buf + first * FS_BSIZE);
	return err;
}

static int jsb_write(struct fs_bdev *bdev, uint64_t blk, uint64_t id,
		     uint64_t seq, uint64_t pos)
{
	struct fs_jsb_disk *jsb;
	int err;

	if (posix_memalign((void **)&jsb, 4096, FS_BSIZE))
		return -ENOMEM;
	memset(jsb, 0, FS_BSIZE);
	fs_bhdr_init(jsb, FS_BT_JSB, blk, id);
	jsb->start_seq = fs_cpu64(seq);
	jsb->start_pos = fs_cpu64(pos);
	fs_bhdr_seal(jsb);
	err = fs_bdev_write(bdev, blk, 1, jsb);
	free(jsb);
	return err;
}


/* Caller holds commit_lock.  Makes the whole ring free again. */
static int journal_ckpt(struct fs *fs, uint64_t next_seq)
{
	struct fs_journal *j = &fs->j;
	int err;

	err = fs_bdev_flush(fs->bdev);
	if (!err)
		err = jsb_write(fs->bdev, j->jsb_blk, FS_JDESC_ID(fs), next_seq,
				j->head);
	if (!err)
		err = fs_bdev_flush(fs->bdev);
	if (err)
		return err;
	j->tail = j->head;
	j->used = 0;
	fs_alloc_release(fs, &j->ckpt_frees);
	j->ckpt_frees.n = 0;
	return 0;
}

static int cmp_target(const void *a, const void *b)
{
	uint64_t x = (*(struct fs_buf *const *)a)->blk;
	uint64_t y = (*(struct fs_buf *const *)b)->blk;

	return x < y ? -1 : x > y;
}

/* Builds descriptors and copies of tx in jb (laid out as in the ring). */
static void journal_build(struct fs *fs, struct fs_tx *tx, uint8_t *jb,
			  uint8_t *copies, uint64_t pos, uint64_t *tx_csum)
{
	struct fs_journal *j = &fs->j;
	struct fs_jdesc_disk *d = NULL;
	uint64_t csum, acc = 0;
	size_t i, out = 0;

	for (i = 0; i < tx->nbufs; i++) {
		if (i % FS_JDESC_MAX == 0) {
			if (d)
				fs_bhdr_seal(d);
			d = (struct fs_jdesc_disk *)(jb + out * FS_BSIZE);
			memset(d, 0, FS_BSIZE);
			fs_bhdr_init(d, FS_BT_JDESC, ring_blk(j, pos + out),
				     FS_JDESC_ID(fs));
			d->seq = fs_cpu64(tx->seq);
			out++;
		}
		memcpy(jb + out * FS_BSIZE, copies + i * FS_BSIZE, FS_BSIZE);
		csum = fs_csum(copies + i * FS_BSIZE, FS_BSIZE,
			       tx->bufs[i]->blk);
		d->e[fs_le32(d->count)].target = fs_cpu64(tx->bufs[i]->blk);
		d->e[fs_le32(d->count)].csum = fs_cpu64(csum);
		d->count = fs_cpu32(fs_le32(d->count) + 1);
		acc = fs_csum(&csum, sizeof(csum), acc);
		out++;
	}
	if (d)
		fs_bhdr_seal(d);
	*tx_csum = acc;
}

static int journal_write_commit(struct fs *fs, struct fs_tx *tx,
				uint64_t pos, uint64_t tx_csum)
{
	struct fs_jcommit_disk *c;
	int err;

	if (posix_memalign((void **)&c, 4096, FS_BSIZE))
		return -ENOMEM;
	memset(c, 0, FS_BSIZE);
	fs_bhdr_init(c, FS_BT_JCOMMIT, ring_blk(&fs->j, pos), FS_JDESC_ID(fs));
	c->seq = fs_cpu64(tx->seq);
	c->nblocks = fs_cpu64(tx->nbufs);
	c->tx_csum = fs_cpu64(tx_csum);
	c->commit_ns = fs_cpu64(fs_now_ns());
	fs_bhdr_seal(c);
	err = ring_write(fs, pos, (uint8_t *)c, 1);
	free(c);
	return err;
}

/* Writes the copies home, coalescing runs of consecutive blocks. */
static int journal_write_home(struct fs *fs, struct fs_tx *tx,
			      uint8_t *copies, uint8_t *run)
{
	size_t i = 0, k;
	int err = 0;

	while (i < tx->nbufs && !err) {
		k = 0;
		do {
			memcpy(run + k * FS_BSIZE, copies + (i + k) * FS_BSIZE,
			       FS_BSIZE);
			k++;
		} while (i + k < tx->nbufs && k < 256 &&
			 tx->bufs[i + k]->blk == tx->bufs[i]->blk + k);
		err = fs_bdev_write(fs->bdev, tx->bufs[i]->blk, (uint32_t)k, run);
		i += k;
	}
	return err;
}

/* Steps 1-4 of the header comment.  Caller holds commit_lock. */
static int journal_write_tx(struct fs *fs, struct fs_tx *tx, uint8_t *copies)
{
	struct fs_journal *j = &fs->j;
	uint64_t ndesc = (tx->nbufs + FS_JDESC_MAX - 1) / FS_JDESC_MAX;
	uint64_t need = ndesc + tx->nbufs + 1, tx_csum, pos;
	uint8_t *jb = NULL;
	int err;

	if (need > j->ring_blocks)
		return -ENOSPC;
	if (j->ring_blocks - j->used < need) {
		err = journal_ckpt(fs, tx->seq);
		if (err)
			return err;
	}
	if (posix_memalign((void **)&jb, 4096, (need - 1) * FS_BSIZE))
		return -ENOMEM;
	pos = j->head;
	journal_build(fs, tx, jb, copies, pos, &tx_csum);
	err = ring_write(fs, pos, jb, need - 1);
	if (!err)
		err = fs_bdev_flush(fs->bdev);
	if (!err)
		err = journal_write_commit(fs, tx, pos + need - 1, tx_csum);
	if (!err)
		err = fs_bdev_flush(fs->bdev);
	/* Committed: replay would redo it from here on. */
	if (!err) {
		j->head = (pos + need) % j->ring_blocks;
		j->used += need;
		err = journal_write_home(fs, tx, copies, jb);
	}
	free(jb);
	return err;
}

/* Closes the running transaction: caller holds j->lock and commit_lock. */
static int journal_snapshot(struct fs *fs, struct fs_tx *tx, uint8_t **out)
{
	struct fs_journal *j = &fs->j;
	struct fs_sb_disk *sb;
	uint8_t *copies = NULL;
	size_t i;

	j->barrier = true;
	while (tx->handles)
		pthread_cond_wait(&j->cond, &j->lock);
	qsort(tx->bufs, tx->nbufs, sizeof(*tx->bufs), cmp_target);
	if (tx->nbufs &&
	    posix_memalign((void **)&copies, 4096, tx->nbufs * FS_BSIZE))
		goto nomem;
	j->running = tx_new(tx->seq + 1);
	if (!j->running)
		goto nomem;
	for (i = 0; i < tx->nbufs; i++) {
		uint8_t *c = copies + i * FS_BSIZE;

		memcpy(c, tx->bufs[i]->data, FS_BSIZE);
		tx->bufs[i]->tx_seq = 0;
		if (tx->bufs[i]->kind == FS_BUF_HDR) {
			fs_bhdr_seal(c);
		} else if (tx->bufs[i]->kind == FS_BUF_SB) {
			sb = (struct fs_sb_disk *)c;
			sb->csum = 0;
			sb->csum = fs_cpu64(fs_csum(c, FS_BSIZE, 0));
		}
	}
	j->barrier = false;
	pthread_cond_broadcast(&j->cond);
	*out = copies;
	return 0;
nomem:
	free(copies);
	j->running = tx;
	j->barrier = false;
	pthread_cond_broadcast(&j->cond);
	return -ENOMEM;
}

static void journal_finish(struct fs *fs, struct fs_tx *tx, int err)
{
	struct fs_journal *j = &fs->j;
	size_t i;

	for (i = 0; i < tx->nbufs; i++)
		bc_unpin(fs, tx->bufs[i]);
	if (!err) {
		fs_alloc_release(fs, &tx->free_data);
		for (i = 0; i < tx->free_meta.n; i++)
			FS_ASSERT(!fs_extlist_add(&j->ckpt_frees,
						  tx->free_meta.v[i].blk,
						  tx->free_meta.v[i].len));
	}
	pthread_mutex_lock(&j->lock);
	if (err) {
		fprintf(stderr, "raidfs: journal commit %llu failed (%d): "
			"filesystem is now read-only\n",
			(unsigned long long)tx->seq, err);
		j->error = err;
	} else {
		__atomic_store_n(&j->committed_seq, tx->seq, __ATOMIC_RELEASE);
	}
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
	tx_destroy(tx);
}

/* Caller holds commit_lock and no handle. */
static int journal_commit(struct fs *fs)
{
	struct fs_journal *j = &fs->j;
	struct fs_tx *tx;
	uint8_t *copies = NULL;
	int err;

	pthread_mutex_lock(&j->lock);
	tx = j->running;
	err = j->error;
	if (!err && tx_is_empty(tx)) {
		pthread_mutex_unlock(&j->lock);
		return fs_bdev_flush(fs->bdev);
	}
	if (!err)
		err = journal_snapshot(fs, tx, &copies);
	pthread_mutex_unlock(&j->lock);
	if (err)
		return err;
	err = journal_write_tx(fs, tx, copies);
	free(copies);
	journal_finish(fs, tx, err);
	return err;
}

/* Did a commit fail (the filesystem is read-only from then on)? */
static bool journal_failed(struct fs *fs)
{
	bool failed;

	pthread_mutex_lock(&fs->j.lock);
	failed = fs->j.error != 0;
	pthread_mutex_unlock(&fs->j.lock);
	return failed;
}

bool fs_tx_is_committed(struct fs *fs, uint64_t seq)
{
	bool done;

	pthread_mutex_lock(&fs->j.lock);
	done = fs->j.committed_seq >= seq;
	pthread_mutex_unlock(&fs->j.lock);
	return done;
}

int fs_journal_sync(struct fs *fs)
{
	struct fs_journal *j = &fs->j;
	uint64_t target;
	int err = 0;

	if (fs->rdonly)
		return 0;
	FS_ASSERT(!fs_tx_held());
	pthread_mutex_lock(&j->lock);
	target = j->running->seq;
	pthread_mutex_unlock(&j->lock);
	pthread_mutex_lock(&j->commit_lock);
	/* A commit that began after we were called has covered us. */
	if (j->committed_seq < target)
		err = journal_commit(fs);
	pthread_mutex_unlock(&j->commit_lock);
	if (!err && journal_failed(fs))
		err = -EIO;
	return err;
}

int fs_journal_sync_upto(struct fs *fs, uint64_t seq)
{
	int err;

	if (fs->rdonly)
		return 0;
	FS_ASSERT(!fs_tx_held());
	if (!fs_tx_is_committed(fs, seq))
		return fs_journal_sync(fs);
	/* Its metadata is on disk: only its data writes need the flush. */
	err = fs_bdev_flush(fs->bdev);
	if (!err && journal_failed(fs))
		err = -EIO;
	return err;
}

int fs_journal_checkpoint(struct fs *fs)
{
	struct fs_journal *j = &fs->j;
	int err;

	if (fs->rdonly)
		return 0;
	pthread_mutex_lock(&j->commit_lock);
	err = journal_commit(fs);
	if (!err)
		err = journal_ckpt(fs, j->committed_seq + 1);
	pthread_mutex_unlock(&j->commit_lock);
	return err;
}

/* ---- commit thread ------------------------------------------------------- */
static void *journal_thread(void *arg)
{
	struct fs *fs = arg;
	struct fs_journal *j = &fs->j;
	struct timespec ts;

	pthread_mutex_lock(&j->lock);
	while (!j->stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += j->interval_ms / 1000;
		ts.tv_nsec += (long)(j->interval_ms % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&j->tick, &j->lock, &ts);
		if (j->stop)
			break;
		/* Idle: nothing to commit, and no flush wanted either. */
		if (tx_is_empty(j->running))
			continue;
		pthread_mutex_unlock(&j->lock);
		pthread_mutex_lock(&j->commit_lock);
		(void)journal_commit(fs);
		pthread_mutex_unlock(&j->commit_lock);
		pthread_mutex_lock(&j->lock);
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

int fs_journal_start(struct fs *fs)
{
	struct fs_journal *j = &fs->j;

	if (fs->rdonly)
		return 0;
	if (pthread_create(&j->thread, NULL, journal_thread, fs))
		return -EAGAIN;
	j->thread_running = true;
	return 0;
}

int fs_journal_shutdown(struct fs *fs)
{
	struct fs_journal *j = &fs->j;

	if (!j->running)
		return 0;

	if (j->thread_running) {
		pthread_mutex_lock(&j->lock);
		j->stop = true;
		pthread_cond_broadcast(&j->tick);
		pthread_mutex_unlock(&j->lock);
		pthread_join(j->thread, NULL);
		j->thread_running = false;
	}
	if (fs->rdonly || j->error)
		return j->error ? -EIO : 0;
	return fs_journal_checkpoint(fs);
}

void fs_journal_destroy(struct fs *fs)
{
	struct fs_journal *j = &fs->j;
	size_t i;

	if (j->running) {
		for (i = 0; i < j->running->nbufs; i++)
			bc_unpin(fs, j->running->bufs[i]);
		tx_destroy(j->running);
		j->running = NULL;
	}
	fs_extlist_free(&j->ckpt_frees);
	pthread_mutex_destroy(&j->lock);
	pthread_mutex_destroy(&j->commit_lock);
	pthread_cond_destroy(&j->cond);
	pthread_cond_destroy(&j->tick);
}

/* ---- format and replay --------------------------------------------------- */
int fs_journal_format(struct fs_bdev *bdev, uint64_t start, uint64_t id)
{
	return jsb_write(bdev, start, id, 1, 0);
}

struct replay_tx {
	uint64_t *target;
	uint8_t *data;
	size_t n, cap;
};

static int replay_grow(struct replay_tx *r)
{
	void *t, *d;
	size_t cap = r->cap * 2 + 64;

	t = realloc(r->target, cap * sizeof(*r->target));
	if (!t)
		return -ENOMEM;
	r->target = t;
	d = realloc(r->data, cap * FS_BSIZE);
	if (!d)
		return -ENOMEM;
	r->data = d;
	r->cap = cap;
	return 0;
}

/* Reads the descriptor at pos and its copies; -EAGAIN: not a descriptor. */
static int replay_desc(struct fs *fs, uint64_t *pos, uint64_t seq,
		       uint8_t *blk, struct replay_tx *r)
{
	struct fs_journal *j = &fs->j;
	struct fs_jdesc_disk *d = (struct fs_jdesc_disk *)blk;
	uint32_t i, count;
	int err;

	if (fs_bhdr_check(blk, FS_BT_JDESC, ring_blk(j, *pos)) ||
	    fs_le64(d->h.owner) != FS_JDESC_ID(fs) || fs_le64(d->seq) != seq)
		return -EAGAIN;
	count = fs_le32(d->count);
	if (count > FS_JDESC_MAX)
		return -EAGAIN;
	for (i = 0; i < count; i++) {
		uint64_t target = fs_le64(d->e[i].target);

		if (r->n == r->cap && (err = replay_grow(r)))
			return err;
		err = fs_bdev_read(fs->bdev, ring_blk(j, *pos + 1 + i), 1,
				   r->data + r->n * FS_BSIZE);
		if (err)
			return err;
		if (target >= fs->bdev->blocks ||
		    fs_csum(r->data + r->n * FS_BSIZE, FS_BSIZE, target) !=
		    fs_le64(d->e[i].csum))
			return -EAGAIN;
		r->target[r->n++] = target;
	}
	*pos += 1 + count;
	return 0;
}

static bool replay_commit_ok(struct fs *fs, const uint8_t *blk, uint64_t pos,
			     uint64_t seq, const struct replay_tx *r)
{
	const struct fs_jcommit_disk *c = (const void *)blk;

	return !fs_bhdr_check(blk, FS_BT_JCOMMIT, ring_blk(&fs->j, pos)) &&
	       fs_le64(c->h.owner) == FS_JDESC_ID(fs) &&
	       fs_le64(c->seq) == seq && fs_le64(c->nblocks) == r->n;
}

/* Reads one transaction at *pos; 1 if complete, 0 if not there. */
static int replay_read_tx(struct fs *fs, uint64_t *pos, uint64_t seq,
			  uint8_t *blk, struct replay_tx *r)
{
	struct fs_journal *j = &fs->j;
	uint64_t p = *pos;
	int err;

	r->n = 0;
	for (;;) {
		if (p - *pos > j->ring_blocks)
			return 0;
		err = fs_bdev_read(fs->bdev, ring_blk(j, p), 1, blk);
		if (err)
			return err;
		err = replay_desc(fs, &p, seq, blk, r);
		if (err == -EAGAIN)
			break;
		if (err)
			return err;
	}
	if (!replay_commit_ok(fs, blk, p, seq, r))
		return 0;
	*pos = p + 1;
	return 1;
}

/*
 * Read-only mounts replay into the buffer cache instead: the replayed
 * blocks stay pinned there for the life of the mount and the device is
 * never written.
 */
static int replay_to_cache(struct fs *fs, uint64_t blk, const uint8_t *data)
{
	struct fs_buf *b;
	int err = bc_new(fs, blk, &b);

	if (err)
		return err;
	memcpy(b->data, data, FS_BSIZE);
	if (blk == 0)
		b->kind = FS_BUF_SB;
	if (!b->jpins)
		bc_pin(fs, b);
	bc_put(fs, b);
	return 0;
}

static int replay_apply(struct fs *fs, const struct replay_tx *r)
{
	size_t i;
	int err = 0;

	for (i = 0; i < r->n && !err; i++)
		err = fs->rdonly ?
		      replay_to_cache(fs, r->target[i], r->data + i * FS_BSIZE) :
		      fs_bdev_write(fs->bdev, r->target[i], 1,
				    r->data + i * FS_BSIZE);
	return err;
}

static void journal_init(struct fs *fs)
{
	struct fs_journal *j = &fs->j;

	pthread_mutex_init(&j->lock, NULL);
	pthread_mutex_init(&j->commit_lock, NULL);
	pthread_cond_init(&j->cond, NULL);
	pthread_cond_init(&j->tick, NULL);
	j->jsb_blk = fs_le64(fs->sb.journal_start);
	j->ring_start = j->jsb_blk + 1;
	j->ring_blocks = fs_le64(fs->sb.journal_blocks) - 1;
	j->tx_limit = j->ring_blocks / 4;
	j->interval_ms = 5000;
}

/* Where replay starts: the journal superblock's sequence and position. */
static int jsb_read(struct fs *fs, uint8_t *blk, uint64_t *seq, uint64_t *pos)
{
	struct fs_journal *j = &fs->j;
	struct fs_jsb_disk *jsb = (struct fs_jsb_disk *)blk;
	int err;

	err = fs_bdev_read(fs->bdev, j->jsb_blk, 1, blk);
	if (err)
		return err;
	if (fs_bhdr_check(blk, FS_BT_JSB, j->jsb_blk) ||
	    fs_le64(jsb->h.owner) != FS_JDESC_ID(fs)) {
		fprintf(stderr, "raidfs: journal superblock is damaged\n");
		return -EUCLEAN;
	}
	*seq = fs_le64(jsb->start_seq);
	*pos = fs_le64(jsb->start_pos) % j->ring_blocks;
	return 0;
}

/* Applies every committed transaction from (seq, pos) on. */
static int replay_all(struct fs *fs, uint8_t *blk, uint64_t *seq,
		      uint64_t *pos)
{
	struct replay_tx r = { 0 };
	int err;

	while ((err = replay_read_tx(fs, pos, *seq, blk, &r)) == 1) {
		err = replay_apply(fs, &r);
		if (err)
			break;
		(*seq)++;
		fs->j.replayed++;
	}
	free(r.target);
	free(r.data);
	*pos %= fs->j.ring_blocks;
	return err;
}

int fs_journal_load(struct fs *fs)
{
	struct fs_journal *j = &fs->j;
	uint8_t *blk = NULL;
	uint64_t seq, pos;
	int err;

	journal_init(fs);
	if (posix_memalign((void **)&blk, 4096, FS_BSIZE))
		return -ENOMEM;
	err = jsb_read(fs, blk, &seq, &pos);
	if (err)
		goto out;
	j->tail = pos;
	err = replay_all(fs, blk, &seq, &pos);
	if (!err && j->replayed && !fs->rdonly) {
		/* Replayed blocks durable, then the ring is empty again. */
		err = fs_bdev_flush(fs->bdev);
		if (!err)
			err = jsb_write(fs->bdev, j->jsb_blk, FS_JDESC_ID(fs),
					seq, pos);
		if (!err)
			err = fs_bdev_flush(fs->bdev);
		j->tail = pos;
	}
	if (err)
		goto out;
	j->head = pos;
	j->used = (j->head + j->ring_blocks - j->tail) % j->ring_blocks;
	j->committed_seq = seq - 1;
	j->running = tx_new(seq);
	if (!j->running)
		err = -ENOMEM;
out:
	free(blk);
	return err;
}
