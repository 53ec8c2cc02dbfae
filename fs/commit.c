/*
 * commit: the life of transactions after their handles - commit, group
 * commit, checkpoint, the commit thread, and the journal's load and
 * shutdown (jbd2's commit.c and checkpoint.c; a physical metadata journal
 * with ordered data).
 *
 * A commit closes the running transaction to new handles, waits for its
 * open handles, copies every buffer it touched (so the next transaction can
 * go on modifying them) and opens the next transaction; then, with no lock
 * held but commit_lock:
 *
 *   1. descriptors + block copies into the ring  (data writes of the
 *      transaction were issued before its handles ended: ordered mode)
 *   2. flush                   data and journal blocks durable; only when
 *                              the transaction has ordered data
 *                              (fs_tx_ordered), see journal_write_ring
 *   3. commit record, flush    THE COMMIT POINT
 *   4. copies written home     (durable at the next flush)
 *
 * The ring is reclaimed by a checkpoint: flush (every home write durable),
 * then the journal superblock is rewritten to start after the last commit.
 * Freed data blocks become allocatable when the freeing transaction has
 * committed; freed metadata blocks only after a checkpoint, because replay
 * of an older transaction would otherwise write stale metadata over data
 * that reused the block (jbd2 uses revoke records for this).  The journal
 * hands them back through j->release (set by the allocator, as jbd2's
 * j_commit_callback), so it never calls the layers above it.
 *
 * Usage: fs_journal_load (replays: recovery.c) -> fs_journal_start (commit
 * thread) -> handles (transaction.c), fs_journal_sync / _sync_upto /
 * _checkpoint -> fs_journal_shutdown -> fs_journal_destroy.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fs_int.h"

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

/* Frees that became reusable go back to whoever allocates. */
static void journal_release(struct fs *fs, const struct fs_extlist *l)
{
	if (l->n && fs->j.release)
		fs->j.release(fs, l);
}

/* ---- ring I/O ------------------------------------------------------------ */
/* Ring positions [pos, pos + n) as at most two runs of blocks (it wraps):
 * blk[i], len[i]; returns how many. */
static int ring_runs(const struct fs_jgeom *g, uint64_t pos, uint64_t n,
		     uint64_t blk[2], uint64_t len[2])
{
	pos %= g->ring_blocks;
	blk[0] = g->ring_start + pos;
	len[0] = g->ring_blocks - pos < n ? g->ring_blocks - pos : n;
	blk[1] = g->ring_start;
	len[1] = n - len[0];
	return len[1] ? 2 : 1;
}

/* Writes n blocks at ring position pos, wrapping. */
static int ring_write(struct fs *fs, uint64_t pos, const uint8_t *buf,
		      uint64_t n)
{
	uint64_t blk[2], len[2];
	int k = ring_runs(&fs->j.g, pos, n, blk, len), err = 0;

	for (int i = 0; i < k && !err; i++) {
		err = fs_bdev_write(fs->bdev, blk[i], (uint32_t)len[i], buf);
		buf += len[i] * FS_BSIZE;
	}
	return err;
}

/*
 * A write of the journal's own the device dropped (fs_bdev_dropped_in)
 * since `since`: its blocks [blk, blk + n) were never stored, so what
 * they carry is not durable - a commit that fails (the filesystem goes
 * read-only, as on any write error of its metadata).  Writes of file
 * data the device drops fail the file's fsync instead (fs_fsync).
 */
static int dropped_check(struct fs *fs, uint64_t since, uint64_t blk,
			 uint64_t n, const char *what)
{
	if (!fs_bdev_dropped_in(fs->bdev, since, blk, n))
		return 0;
	fs_log(LOG_CRIT, "the device dropped a write of the journal's %s "
	       "(blocks %llu-%llu)", what, (unsigned long long)blk,
	       (unsigned long long)(blk + n - 1));
	return -EIO;
}

/* Ring positions [pos, pos + n), wrapping: dropped since `since`? */
static int ring_dropped(struct fs *fs, uint64_t since, uint64_t pos,
			uint64_t n)
{
	uint64_t blk[2], len[2];
	int k = ring_runs(&fs->j.g, pos, n, blk, len), err = 0;

	for (int i = 0; i < k && !err; i++)
		err = dropped_check(fs, since, blk[i], len[i], "ring");
	return err;
}

/* Caller holds commit_lock.  Makes the whole ring free again. */
static int journal_ckpt(struct fs *fs, uint64_t next_seq)
{
	struct fs_journal *j = &fs->j;
	uint64_t seen;
	int err;

	err = fs_bdev_flush_asking(fs->bdev);
	seen = fs_bdev_dropped(fs->bdev);
	/* nothing dropped since the last checkpoint: no list to walk */
	for (size_t i = 0; seen != j->homes_since && i < j->homes.n && !err;
	     i++)
		err = dropped_check(fs, j->homes_since, j->homes.v[i].blk,
				    j->homes.v[i].len, "home writes");
	if (!err)
		err = fs_jsb_write(fs->bdev, &j->g, next_seq, j->head);
	if (!err)
		err = fs_bdev_flush_asking(fs->bdev);
	if (!err)
		err = dropped_check(fs, seen, j->g.jsb_blk, 1, "superblock");
	if (err)
		return err;
	j->tail = j->head;
	j->used = 0;
	j->homes.n = 0;
	j->homes_since = seen;
	journal_release(fs, &j->ckpt_frees);
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
	const struct fs_jgeom *g = &fs->j.g;
	struct fs_jdesc_disk *d = NULL;
	uint64_t csum, acc = 0;
	size_t i, out = 0;

	for (i = 0; i < tx->nbufs; i++) {
		if (i % FS_JDESC_MAX == 0) {
			if (d)
				fs_bhdr_seal(d);
			d = (struct fs_jdesc_disk *)(jb + out * FS_BSIZE);
			memset(d, 0, FS_BSIZE);
			fs_bhdr_init(d, FS_BT_JDESC, fs_jring_blk(g, pos + out),
				     g->id);
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

/* The commit record of tx at ring position pos, in c. */
static void journal_build_commit(struct fs *fs, struct fs_tx *tx, uint8_t *c,
				 uint64_t pos, uint64_t tx_csum)
{
	struct fs_jcommit_disk *r = (struct fs_jcommit_disk *)c;

	memset(r, 0, FS_BSIZE);
	fs_bhdr_init(r, FS_BT_JCOMMIT, fs_jring_blk(&fs->j.g, pos),
		     fs->j.g.id);
	r->seq = fs_cpu64(tx->seq);
	r->nblocks = fs_cpu64(tx->nbufs);
	r->tx_csum = fs_cpu64(tx_csum);
	r->commit_ns = fs_cpu64(fs_now_ns());
	fs_bhdr_seal(r);
}

/*
 * Descriptors, copies and commit record (n blocks in jb) into the ring at
 * pos.  With ordered data (tx->ordered) a flush comes before the commit
 * record, so that the data is durable before anything points to it.
 * Without, all go in one write and one flush (step 2 merged into 3):
 * replay checks every copy against its descriptor and the descriptors'
 * sequence numbers, so a commit record that reached the disk without all
 * of its transaction is a torn transaction, never replayed (jbd2's
 * async_commit, used only where no data depends on the order).  An fsync
 * after overwrites - the mtime changed, no block was mapped - costs one
 * flush less.
 */
static int journal_write_ring(struct fs *fs, struct fs_tx *tx, uint8_t *jb,
			      uint64_t pos, uint64_t n)
{
	int err;

	if (!__atomic_load_n(&tx->ordered, __ATOMIC_RELAXED))
		return ring_write(fs, pos, jb, n);
	err = ring_write(fs, pos, jb, n - 1);
	if (!err)
		err = fs_bdev_flush_asking(fs->bdev);
	if (!err)
		err = ring_write(fs, pos + n - 1, jb + (n - 1) * FS_BSIZE, 1);
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
		if (!err)
			err = fs_extlist_add(&fs->j.homes, tx->bufs[i]->blk, k);
		i += k;
	}
	return err;
}

/* Steps 1-4 of the header comment.  Caller holds commit_lock. */
static int journal_write_tx(struct fs *fs, struct fs_tx *tx, uint8_t *copies)
{
	struct fs_journal *j = &fs->j;
	uint64_t ndesc = (tx->nbufs + FS_JDESC_MAX - 1) / FS_JDESC_MAX;
	uint64_t need = ndesc + tx->nbufs + 1, tx_csum, pos, since;
	uint8_t *jb = NULL;
	int err;

	if (need > j->g.ring_blocks)
		return -ENOSPC;
	if (j->g.ring_blocks - j->used < need) {
		err = journal_ckpt(fs, tx->seq);
		if (err)
			return err;
	}
	if (posix_memalign((void **)&jb, 4096, need * FS_BSIZE))
		return -ENOMEM;
	pos = j->head;
	journal_build(fs, tx, jb, copies, pos, &tx_csum);
	journal_build_commit(fs, tx, jb + (need - 1) * FS_BSIZE,
			     pos + need - 1, tx_csum);
	since = fs_bdev_dropped(fs->bdev);
	err = journal_write_ring(fs, tx, jb, pos, need);
	if (!err)
		err = fs_bdev_flush_asking(fs->bdev);
	if (!err)
		err = ring_dropped(fs, since, pos, need);
	/* Committed: replay would redo it from here on. */
	if (!err) {
		j->head = (pos + need) % j->g.ring_blocks;
		j->used += need;
		err = journal_write_home(fs, tx, copies, jb);
	}
	free(jb);
	return err;
}

/* Caller holds j->lock, tx has no handles: drops the blocks tx both
 * allocated and freed (fs_tx_forget) from its list. */
static void journal_drop_forgotten(struct fs *fs, struct fs_tx *tx)
{
	size_t i, n = 0;

	for (i = 0; i < tx->nbufs; i++) {
		if (!tx->bufs[i]->forgotten) {
			tx->bufs[n++] = tx->bufs[i];
			continue;
		}
		tx->bufs[i]->forgotten = false;
		tx->bufs[i]->tx_seq = 0;
		bc_unpin(fs, tx->bufs[i]);
	}
	tx->nbufs = n;
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
	journal_drop_forgotten(fs, tx);
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
		journal_release(fs, &tx->free_data);
		for (i = 0; i < tx->free_meta.n; i++)
			FS_ASSERT(!fs_extlist_add(&j->ckpt_frees,
						  tx->free_meta.v[i].blk,
						  tx->free_meta.v[i].len));
	}
	pthread_mutex_lock(&j->lock);
	if (err) {
		fs_log(LOG_CRIT, "journal commit %llu failed (%d): "
		       "filesystem is now read-only",
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
		return fs_bdev_flush_asking(fs->bdev);     /* data only */
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

int fs_journal_commit(struct fs *fs)
{
	int err;

	pthread_mutex_lock(&fs->j.commit_lock);
	err = journal_commit(fs);
	pthread_mutex_unlock(&fs->j.commit_lock);
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

/* ---- group commit -------------------------------------------------------- */
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
	err = fs_bdev_flush_asking(fs->bdev);
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
		(void)fs_journal_commit(fs);
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
	fs_extlist_free(&j->homes);
	pthread_mutex_destroy(&j->lock);
	pthread_mutex_destroy(&j->commit_lock);
	pthread_cond_destroy(&j->cond);
	pthread_cond_destroy(&j->tick);
}

/* ---- load ---------------------------------------------------------------- */
/*
 * Read-only mounts replay into the buffer cache instead: the replayed
 * blocks stay pinned there for the life of the mount and the device is
 * never written.
 */
static int replay_to_cache(void *arg, uint64_t blk, const uint8_t *data)
{
	struct fs *fs = arg;
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

static void journal_init(struct fs *fs)
{
	struct fs_journal *j = &fs->j;

	pthread_mutex_init(&j->lock, NULL);
	pthread_mutex_init(&j->commit_lock, NULL);
	pthread_cond_init(&j->cond, NULL);
	pthread_cond_init(&j->tick, NULL);
	fs_jgeom_init(&j->g, &fs->sb);
	j->tx_limit = j->g.ring_blocks / 4;
	/* 1 s, not ext4's 5: sync(1) never reaches a FUSE filesystem, so
	 * this is how long what it wrote back stays volatile (DESIGN) */
	j->interval_ms = 1000;
}

bool fs_journal_idle(struct fs *fs, uint64_t blk)
{
	const struct fs_journal *j = &fs->j;
	uint64_t pos;

	/* replay stopped at a lost block: all of it waits for the clear */
	if (j->lost || blk < j->g.ring_start ||
	    blk >= j->g.ring_start + j->g.ring_blocks)
		return false;
	pos = blk - j->g.ring_start;
	return (pos + j->g.ring_blocks - j->tail) % j->g.ring_blocks >= j->used;
}

int fs_journal_load(struct fs *fs)
{
	struct fs_journal *j = &fs->j;
	struct fs_replay r;
	int err;

	journal_init(fs);
	err = fs_journal_recover(fs->bdev, &j->g,
				 fs->rdonly ? replay_to_cache : NULL, fs,
				 (fs->repair_mount ? FS_RECOVER_SALVAGE : 0) |
				 (fs_le32(fs->sb.state) == FS_STATE_CLEAN ?
				  FS_RECOVER_CLEAN : 0), &r);
	j->replayed = r.txns;
	j->lost = r.lost;
	j->reset = r.reset;
	j->lost_pos = r.lost_pos;
	if (err)
		return err;
	j->tail = r.tail;
	j->head = r.pos;
	j->homes_since = fs_bdev_dropped(fs->bdev);
	j->used = (j->head + j->g.ring_blocks - j->tail) % j->g.ring_blocks;
	j->committed_seq = r.seq - 1;
	j->running = tx_new(r.seq);
	return j->running ? 0 : -ENOMEM;
}
