/*
 * io: every byte an assembled array moves to or from a device passes
 * through here - data, parity, checksum tables, journal records,
 * superblocks, rebuild writes.
 *
 * rc_io_member_read / _write / _sync       one member, synchronous
 * rc_io_run                                a batch over several members,
 *                                          one worker thread per member
 * rc_io_submit / rc_io_wait                the same in two halves: the
 *                                          caller works meanwhile
 * rc_io_sync_all                           the flush barrier
 * rc_io_unplaced_write / _sync            a spare, or a replacement
 *                                          before it takes its slot
 *
 * A device taken out of its slot while I/O may be in flight on it (a
 * removal, a replacement) is closed by rc_member_dev_retire once that I/O
 * is done (dev_hold / dev_release around every member I/O).
 *
 * Errors are counted against the member here; deciding that a member is
 * faulty is the caller's business (a read error is repaired first; fail.c
 * faults).  After an error the device's size is asked again: a member
 * that shrank gets a pending fault (rc_io_size_check).
 *
 * The write guard: a read-only array writes nothing (-EROFS; its flushes
 * are no-ops), and neither does a read-write one until it is activated
 * by its first write (activate.c sets writable).  With an unclean
 * journal, reads go through the overlay of replayed blocks until
 * activation writes them in place (for a read-only array: to the end).
 *
 * The only device I/O outside this file: creation (create.c, before an
 * array exists) and reading superblocks to choose members (super.c's
 * rc_sb_read_best for assembly, probe.c) - there is no array to count
 * against or to guard yet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "array.h"

uint64_t rc_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void rc_member_note_error(struct rc_array *a, int slot, enum rc_err_kind kind)
{
	struct rc_member *m = &a->m[slot];
	uint64_t now = rc_mono_ns(), start = atomic_load(&m->err_window_start_ns);
	uint_fast64_t zero = 0;
	bool first = !atomic_exchange(&a->errors_seen, true);

	(void)kind;
	if (now - start > RC_FAULT_WINDOW_NS &&
	    atomic_compare_exchange_strong(&m->err_window_start_ns, &start, now))
		atomic_store(&m->err_window_count, 0);
	if (atomic_fetch_add(&m->err_window_count, 1) + 1 > a->fault_errors &&
	    a->fault_errors) {
		atomic_compare_exchange_strong(&m->err_over_ns, &zero, now);
		if (!(atomic_fetch_or(&m->fault_pending, RC_PEND_ERRORS) &
		      RC_PEND_ERRORS))
			first = true;
	}
	/* The recovery thread records the flag and applies the fault. */
	if (first)
		rc_member_nudge(a);
}

void rc_member_errors_forget(struct rc_member *m)
{
	atomic_store(&m->err_window_count, 0);
	atomic_store(&m->err_over_ns, 0);
	atomic_store(&m->corrected_ns, 0);
	atomic_store(&m->kept_until_ns, 0);
	atomic_store(&m->errors_kept_said, false);
	atomic_store(&m->kept_for_redundancy, false);
}

void rc_member_counts_load(struct rc_member *m, const struct rc_sb *sb)
{
	atomic_store(&m->read_errors, sb ? sb->err_read : 0);
	atomic_store(&m->write_errors, sb ? sb->err_write : 0);
	atomic_store(&m->csum_errors, sb ? sb->err_csum : 0);
	atomic_store(&m->repaired, sb ? sb->repaired : 0);
}

void rc_member_note_corrected(struct rc_array *a, int slot)
{
	struct rc_member *m = &a->m[slot];
	unsigned n = atomic_load(&m->err_window_count);

	atomic_store(&m->corrected_ns, rc_mono_ns());
	while (n && !atomic_compare_exchange_weak(&m->err_window_count, &n,
						  n - 1))
		;
}

/*
 * An I/O hold on slot's device: the device read under it stays open until
 * dev_release, however the slot changes meanwhile.  The hold is counted in
 * the slot's current epoch before dev is read; a retirement stores the new
 * dev, then moves the epoch on, then waits for the old epoch's holds (all
 * seq_cst): a hold that saw the old device is one it waits for.
 */
static struct rc_dev *dev_hold(struct rc_array *a, int slot, unsigned *e)
{
	struct rc_member *m = &a->m[slot];

	*e = atomic_load(&m->io_epoch) & 1;
	atomic_fetch_add(&m->io_holds[*e], 1);
	return __atomic_load_n(&m->dev, __ATOMIC_SEQ_CST);
}

static void dev_release(struct rc_array *a, int slot, unsigned e)
{
	atomic_fetch_sub(&a->m[slot].io_holds[e], 1);
}

void rc_io_drain(struct rc_array *a, int slot)
{
	struct rc_member *m = &a->m[slot];
	struct timespec ms = { 0, 1000000 };
	unsigned e;

	pthread_mutex_lock(&a->retire_lock);
	e = atomic_fetch_add(&m->io_epoch, 1) & 1;
	while (atomic_load(&m->io_holds[e]))
		nanosleep(&ms, NULL);
	pthread_mutex_unlock(&a->retire_lock);
}

void rc_member_dev_retire(struct rc_array *a, int slot, struct rc_dev *old)
{
	struct rc_dev *src = old;

	if (!old)
		return;
	/* a replacement of old mirrors nothing more (nor, after a new
	 * device took old's address, anything of that one) */
	__atomic_compare_exchange_n(&a->repl.src, &src, NULL, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	rc_io_drain(a, slot);
	rc_dev_close(old);
}

/* Caller holds slot's device (dev_hold). */
static bool size_check(struct rc_array *a, int slot, struct rc_dev *dev)
{
	uint64_t now;

	if (!dev || rc_dev_size_now(dev, &now) < 0 || now >= dev->size)
		return false;
	/* a device no longer in the slot (replaced meanwhile) is no verdict
	 * on the slot's new one */
	if (__atomic_load_n(&a->m[slot].dev, __ATOMIC_SEQ_CST) != dev)
		return false;
	atomic_store(&a->m[slot].shrunk_to, now);
	atomic_store(&a->m[slot].shrunk, true);
	atomic_fetch_or(&a->m[slot].fault_pending, RC_PEND_SHRUNK);
	rc_member_nudge(a);
	return true;
}

bool rc_io_still_shrunk(struct rc_array *a, int slot)
{
	unsigned e;
	struct rc_dev *dev = dev_hold(a, slot, &e);
	uint64_t now;
	bool ret = dev && rc_dev_size_now(dev, &now) == 0 && now < dev->size;

	dev_release(a, slot, e);
	return ret;
}

void rc_io_shrunk_why(struct rc_array *a, int slot, char *msg, size_t len)
{
	snprintf(msg, len, "it shrank from %llu to %llu blocks",
		 (unsigned long long)(a->m[slot].dev->size / RC_BLOCK_SIZE),
		 (unsigned long long)(atomic_load(&a->m[slot].shrunk_to) /
				      RC_BLOCK_SIZE));
}

bool rc_io_size_check(struct rc_array *a, int slot)
{
	unsigned e;
	bool ret = size_check(a, slot, dev_hold(a, slot, &e));

	dev_release(a, slot, e);
	return ret;
}

bool rc_io_may_write(struct rc_array *a)
{
	return !a->rdonly && atomic_load(&a->writable);
}

struct rc_batch {
	pthread_mutex_t lock;
	pthread_cond_t done;
	int pending;
};

struct rc_task {
	struct rc_task *next;
	struct rc_io *io;
	const int *idx;          /* which of io[] this task runs */
	int n;
	bool sync;               /* fdatasync instead */
	int *sync_err;
	struct rc_batch *b;
};

/* Lock order: worker->lock is a leaf; held only to queue and dequeue. */
struct rc_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct rc_task *head, *tail;
	bool stop;
	struct rc_array *a;
	int slot;
};

#define OVERLAY_BUCKETS 1024

struct rc_overlay_block {
	struct rc_overlay_block *next;
	int slot;
	uint64_t block;
	uint8_t data[RC_BLOCK_SIZE];
};

struct rc_overlay {
	struct rc_overlay_block *tab[OVERLAY_BUCKETS];
};

static struct rc_overlay_block **overlay_bucket(struct rc_overlay *o,
						int slot, uint64_t block)
{
	return &o->tab[(block * 31 + (uint64_t)slot) % OVERLAY_BUCKETS];
}

int rc_overlay_put(struct rc_array *a, void *ctx, int slot, uint64_t block,
		   const void *data)
{
	struct rc_overlay_block **b, *ob;

	if (!a->overlay) {
		a->overlay = calloc(1, sizeof(*a->overlay));
		if (!a->overlay)
			return -ENOMEM;
		atomic_store(&a->overlay_live, true);
	}
	b = overlay_bucket(a->overlay, slot, block);
	for (ob = *b; ob; ob = ob->next)
		if (ob->slot == slot && ob->block == block)
			break;
	if (!ob) {
		ob = malloc(sizeof(*ob));
		if (!ob)
			return -ENOMEM;
		ob->slot = slot;
		ob->block = block;
		ob->next = *b;
		*b = ob;
	}
	memcpy(ob->data, data, RC_BLOCK_SIZE);
	return 0;
}

void rc_overlay_drop(struct rc_array *a, int slot, uint64_t block)
{
	struct rc_overlay_block **b, *ob;

	if (!a->overlay)
		return;
	pthread_rwlock_wrlock(&a->overlay_lock);
	for (b = overlay_bucket(a->overlay, slot, block); (ob = *b);
	     b = &ob->next) {
		if (ob->slot == slot && ob->block == block) {
			*b = ob->next;
			free(ob);
			break;
		}
	}
	pthread_rwlock_unlock(&a->overlay_lock);
}

void rc_overlay_write_back(struct rc_array *a, uint32_t *failed)
{
	struct rc_overlay_block *ob;

	*failed = 0;
	if (!a->overlay)
		return;
	for (int i = 0; i < OVERLAY_BUCKETS; i++)
		for (ob = a->overlay->tab[i]; ob; ob = ob->next)
			if (!(*failed >> ob->slot & 1) &&
			    rc_member_present(a, ob->slot) &&
			    rc_io_member_write(a, ob->slot, ob->block, 1,
					       ob->data) < 0)
				*failed |= 1u << ob->slot;
}

void rc_overlay_each(struct rc_array *a,
		     void (*fn)(struct rc_array *a, int slot, uint64_t block))
{
	struct rc_overlay_block *ob;

	if (!a->overlay)
		return;
	for (int i = 0; i < OVERLAY_BUCKETS; i++)
		for (ob = a->overlay->tab[i]; ob; ob = ob->next)
			fn(a, ob->slot, ob->block);
}

void rc_overlay_free(struct rc_array *a)
{
	struct rc_overlay_block *ob, *next;
	struct rc_overlay *o;

	if (!a->overlay)        /* only replay creates it, before sharing */
		return;
	pthread_rwlock_wrlock(&a->overlay_lock);
	o = a->overlay;
	a->overlay = NULL;
	atomic_store(&a->overlay_live, false);
	pthread_rwlock_unlock(&a->overlay_lock);
	if (!o)
		return;
	for (int i = 0; i < OVERLAY_BUCKETS; i++) {
		for (ob = o->tab[i]; ob; ob = next) {
			next = ob->next;
			free(ob);
		}
	}
	free(o);
}

static void overlay_apply(struct rc_array *a, int slot, uint64_t block,
			  uint32_t count, uint8_t *buf)
{
	struct rc_overlay_block *ob;

	pthread_rwlock_rdlock(&a->overlay_lock);
	for (uint32_t i = 0; a->overlay && i < count; i++) {
		ob = *overlay_bucket(a->overlay, slot, block + i);
		for (; ob; ob = ob->next)
			if (ob->slot == slot && ob->block == block + i)
				memcpy(buf + (size_t)i * RC_BLOCK_SIZE,
				       ob->data, RC_BLOCK_SIZE);
	}
	pthread_rwlock_unlock(&a->overlay_lock);
}

/* A request of count blocks that took ns: how long it waited for its
 * device beyond copying (per_block ns each, memory speed), into the
 * member's moving average *avg (an eighth of each new request).  A sample
 * counts at most WAIT_MAX_NS, so that one wait alone (a thread preempted
 * in a copy of memory) moves the average by at most 6.25 us, under
 * WAIT_PARALLEL_NS: only waits that repeat (a device's) take a member's
 * requests to its worker.  A write is allowed twice a read's time: a
 * buffered write into a sparse image allocates the page it fills. */
#define READ_COPY_NS_PER_BLOCK 1000u
#define WRITE_COPY_NS_PER_BLOCK 2000u
#define WAIT_MAX_NS 50000u

static void wait_note(atomic_uint_fast64_t *avg, uint32_t count, uint64_t ns,
		      uint64_t per_block)
{
	uint64_t copy = (uint64_t)count * per_block;
	uint64_t wait = ns > copy ? ns - copy : 0;
	uint64_t old = atomic_load_explicit(avg, memory_order_relaxed);

	wait = wait < WAIT_MAX_NS ? wait : WAIT_MAX_NS;
	atomic_store_explicit(avg, old - old / 8 + wait / 8,
			      memory_order_relaxed);
}

/* counted: a failure is counted and logged here; a caller that reads
 * again what failed (block by block) passes false, so that each bad block
 * is counted once, by its retry, and not once more for the first try. */
static int member_readv(struct rc_array *a, int slot, uint64_t block,
			uint32_t count, const struct iovec *iov, int iovcnt,
			bool counted)
{
	unsigned e;
	struct rc_dev *dev = dev_hold(a, slot, &e);
	int ret = -ENXIO;
	uint64_t t0;

	if (!dev)
		goto out;
	/* suspended (fail.c): not read, and not counted against it */
	ret = -EIO;
	if (rc_array_suspended(a))
		goto out;
	t0 = rc_mono_ns();
	ret = iovcnt == 1 ? rc_dev_read(dev, iov[0].iov_base, iov[0].iov_len,
					block * RC_BLOCK_SIZE) :
	      rc_dev_readv(dev, iov, iovcnt, block * RC_BLOCK_SIZE);
	wait_note(&a->m[slot].read_wait_ns, count, rc_mono_ns() - t0,
		  READ_COPY_NS_PER_BLOCK);
	if (ret < 0 && !counted) {
		size_check(a, slot, dev);
	} else if (ret < 0) {
		atomic_fetch_add(&a->m[slot].read_errors, 1);
		rc_member_note_error(a, slot, RC_ERR_READ);
		rc_log_block(a, slot, block, count > 1 ?
			     "read error (a run of blocks): reconstructed "
			     "from the others where they verify" :
			     "read error: reconstructed from the others "
			     "where they verify");
		size_check(a, slot, dev);
	} else if (atomic_load(&a->overlay_live)) {
		for (int i = 0; i < iovcnt; i++) {
			uint32_t n = (uint32_t)(iov[i].iov_len / RC_BLOCK_SIZE);

			overlay_apply(a, slot, block, n, iov[i].iov_base);
			block += n;
		}
	}
out:
	dev_release(a, slot, e);
	return ret;
}

static int member_read(struct rc_array *a, int slot, uint64_t block,
		       uint32_t count, void *buf, bool counted)
{
	struct iovec v = { buf, (size_t)count * RC_BLOCK_SIZE };

	return member_readv(a, slot, block, count, &v, 1, counted);
}

int rc_io_member_read(struct rc_array *a, int slot, uint64_t block,
		      uint32_t count, void *buf)
{
	return member_read(a, slot, block, count, buf, true);
}

int rc_io_member_read_run(struct rc_array *a, int slot, uint64_t block,
			  uint32_t count, void *buf)
{
	return member_read(a, slot, block, count, buf, false);
}

/* A write to dev, counted in *errors when it fails (errors may be NULL). */
static int io_write(struct rc_array *a, struct rc_dev *dev,
		    atomic_uint_fast64_t *errors, uint64_t block,
		    uint32_t count, const void *buf)
{
	int ret;

	if (!rc_io_may_write(a))
		return -EROFS;
	if (!dev)
		return -ENXIO;
	if (rc_array_suspended(a))
		return -EIO;
	ret = rc_dev_write(dev, buf, (size_t)count * RC_BLOCK_SIZE,
			   block * RC_BLOCK_SIZE);
	if (ret < 0 && errors)
		atomic_fetch_add(errors, 1);
	return ret;
}

/* A flush failure counts as a write error: writes were lost. */
static int io_sync(struct rc_array *a, struct rc_dev *dev,
		   atomic_uint_fast64_t *errors)
{
	int ret;

	if (!rc_io_may_write(a))
		return 0;
	if (!dev)
		return -ENXIO;
	if (rc_array_suspended(a))
		return -EIO;
	ret = rc_dev_sync(dev);
	if (ret < 0 && errors)
		atomic_fetch_add(errors, 1);
	return ret;
}

/* The replacement of slot's device dev, if one is being filled (struct
 * rc_replace); caller holds dev (dev_hold). */
static struct rc_dev *mirror_of(struct rc_array *a, struct rc_dev *dev)
{
	struct rc_dev *dst = __atomic_load_n(&a->repl.dst, __ATOMIC_SEQ_CST);

	return dst && dev && __atomic_load_n(&a->repl.src, __ATOMIC_SEQ_CST) ==
	       dev ? dst : NULL;
}

/* How many of the count blocks from block (absolute) on are in stripes
 * the replacement's copy has passed (a member's stripes ascend with its
 * blocks, in every layout). */
static uint32_t mirror_prefix(struct rc_array *a, int slot, uint64_t block,
			      uint32_t count)
{
	uint64_t pos = atomic_load(&a->repl.pos), mb, stripe, end;
	uint32_t col, chunk = a->g.chunk_blocks, n = 0;

	if (block < a->sb.data_offset)
		return 0;
	mb = block - a->sb.data_offset;
	while (n < count && mb < a->g.member_blocks &&
	       rc_geom_reverse(&a->g, (uint32_t)slot, mb, &stripe, &col) == 0 &&
	       stripe < pos) {
		end = (mb / chunk + 1) * chunk;
		n += (uint32_t)(end - mb < count - n ? end - mb : count - n);
		mb = end;
	}
	return n;
}

bool rc_io_repl_shrunk(struct rc_array *a, struct rc_dev *dev)
{
	uint64_t now;

	if (!dev || dev != __atomic_load_n(&a->repl.dst, __ATOMIC_SEQ_CST) ||
	    rc_dev_size_now(dev, &now) < 0 || now >= dev->size)
		return false;
	if (!atomic_exchange(&a->repl.failed, true))
		rc_log("%s: the replacement target shrank from %llu to %llu "
		       "blocks: it failed", dev->name,
		       (unsigned long long)(dev->size / RC_BLOCK_SIZE),
		       (unsigned long long)(now / RC_BLOCK_SIZE));
	return true;
}

/* A write to slot's device goes to its replacement too where the copy
 * has passed: what is copied stays current.  A failed mirror write fails
 * the replacement, not the write. */
static void mirror_write(struct rc_array *a, int slot, struct rc_dev *dev,
			 uint64_t block, uint32_t count, const void *buf)
{
	struct rc_dev *dst = mirror_of(a, dev);

	if (dst)
		count = mirror_prefix(a, slot, block, count);
	if (dst && count && !rc_io_repl_shrunk(a, dst) &&
	    io_write(a, dst, NULL, block, count, buf) < 0)
		atomic_store(&a->repl.failed, true);
}

int rc_io_member_write(struct rc_array *a, int slot, uint64_t block,
		       uint32_t count, const void *buf)
{
	unsigned e;
	struct rc_dev *dev = dev_hold(a, slot, &e);
	uint64_t t0 = rc_mono_ns();
	int ret = io_write(a, dev, &a->m[slot].write_errors, block, count, buf);

	wait_note(&a->m[slot].write_wait_ns, count, rc_mono_ns() - t0,
		  WRITE_COPY_NS_PER_BLOCK);
	if (ret < 0 && ret != -EROFS)
		size_check(a, slot, dev);
	if (ret == 0)
		mirror_write(a, slot, dev, block, count, buf);
	dev_release(a, slot, e);
	return ret;
}

int rc_io_member_sync(struct rc_array *a, int slot)
{
	unsigned e;
	struct rc_dev *dev = dev_hold(a, slot, &e), *dst;
	int ret = io_sync(a, dev, &a->m[slot].write_errors);

	if (ret < 0)
		size_check(a, slot, dev);
	dst = mirror_of(a, dev);
	if (dst && io_sync(a, dst, NULL) < 0)
		atomic_store(&a->repl.failed, true);
	dev_release(a, slot, e);
	return ret;
}

int rc_io_unplaced_write(struct rc_array *a, struct rc_dev *dev,
			 uint64_t block, uint32_t count, const void *buf)
{
	if (rc_io_repl_shrunk(a, dev))
		return -EIO;
	return io_write(a, dev, NULL, block, count, buf);
}

int rc_io_unplaced_sync(struct rc_array *a, struct rc_dev *dev)
{
	return io_sync(a, dev, NULL);
}

static void task_run(struct rc_array *a, struct rc_task *t)
{
	struct rc_io *io;

	if (t->sync) {
		uint64_t t0 = rc_mono_ns();

		*t->sync_err = rc_io_member_sync(a, t->idx[0]);
		atomic_store(&a->m[t->idx[0]].sync_ns, rc_mono_ns() - t0);
		return;
	}
	for (int i = 0; i < t->n; i++) {
		io = &t->io[t->idx[i]];
		io->err = io->write ?
			  rc_io_member_write(a, io->member, io->block,
					     io->count, io->buf) :
			  io->iov ?
			  member_readv(a, io->member, io->block, io->count,
				       io->iov, io->iovcnt, !io->retried) :
			  member_read(a, io->member, io->block, io->count,
				      io->buf, !io->retried);
	}
}

static void task_done(struct rc_task *t)
{
	pthread_mutex_lock(&t->b->lock);
	if (--t->b->pending == 0)
		pthread_cond_signal(&t->b->done);
	pthread_mutex_unlock(&t->b->lock);
}

static void *worker_main(void *arg)
{
	struct rc_worker *w = arg;
	struct rc_task *t;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->head)
			break;
		t = w->head;
		w->head = t->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->lock);
		task_run(w->a, t);
		task_done(t);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void worker_queue(struct rc_worker *w, struct rc_task *t)
{
	t->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (w->tail)
		w->tail->next = t;
	else
		w->head = t;
	w->tail = t;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

int rc_io_start(struct rc_array *a)
{
	struct rc_worker *w;

	for (uint32_t i = 0; i < a->g.members; i++) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		atomic_store(&a->m[i].sync_ns, UINT64_MAX);
		w->a = a;
		w->slot = (int)i;
		pthread_mutex_init(&w->lock, NULL);
		pthread_cond_init(&w->cond, NULL);
		if (pthread_create(&w->thread, NULL, worker_main, w)) {
			free(w);
			return -EAGAIN;
		}
		a->m[i].worker = w;
	}
	return 0;
}

void rc_io_stop(struct rc_array *a)
{
	struct rc_worker *w;

	for (uint32_t i = 0; i < a->g.members; i++) {
		w = a->m[i].worker;
		if (!w)
			continue;
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		free(w);
		a->m[i].worker = NULL;
	}
}

/* Below this, handing work to other threads costs more than it saves,
 * unless requests wait for their devices: then the members' waits overlap
 * on their workers, where one after the other they would add up. */
#define PARALLEL_MIN_BYTES (1u << 20)
/* A member whose reads (or writes) wait longer than this on average
 * (read_wait_ns, write_wait_ns) */
#define WAIT_PARALLEL_NS 10000u

/* Does a task of the batch wait for its device: one that always does
 * (rc_dev.waits, direct I/O), or one whose requests of the batch's kinds
 * have waited lately (an image file read from a disk rather than the
 * page cache; writes into an image that the kernel throttles, or that a
 * slow filesystem under it takes one by one)?  Buffered writes into the
 * page cache return at once and stay inline. */
static bool tasks_wait(struct rc_array *a, const struct rc_task *tasks,
		       const int *slots, int ntasks)
{
	bool waits = false, reads = false, writes = false;
	struct rc_member *m;
	struct rc_dev *dev;
	unsigned e;

	for (int t = 0; t < ntasks; t++)
		for (int i = 0; i < tasks[t].n; i++) {
			writes |= tasks[t].io[tasks[t].idx[i]].write;
			reads |= !tasks[t].io[tasks[t].idx[i]].write;
		}
	for (int t = 0; t < ntasks && !waits; t++) {
		m = &a->m[slots[t]];
		dev = dev_hold(a, slots[t], &e);
		waits = dev && dev->waits;
		dev_release(a, slots[t], e);
		waits |= reads && atomic_load_explicit(&m->read_wait_ns,
				memory_order_relaxed) > WAIT_PARALLEL_NS;
		waits |= writes && atomic_load_explicit(&m->write_wait_ns,
				memory_order_relaxed) > WAIT_PARALLEL_NS;
	}
	return waits;
}

/* Runs tasks[0] here and the others on their members' workers (or all
 * here, when the batch is small). */
static void tasks_run(struct rc_array *a, struct rc_task *tasks, int ntasks,
		      const int *slots, bool small)
{
	struct rc_batch b;

	if (ntasks == 0)
		return;
	if (small) {
		for (int i = 0; i < ntasks; i++)
			task_run(a, &tasks[i]);
		return;
	}
	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.done, NULL);
	b.pending = ntasks - 1;
	for (int i = 1; i < ntasks; i++) {
		tasks[i].b = &b;
		worker_queue(a->m[slots[i]].worker, &tasks[i]);
	}
	task_run(a, &tasks[0]);
	pthread_mutex_lock(&b.lock);
	while (b.pending)
		pthread_cond_wait(&b.done, &b.lock);
	pthread_mutex_unlock(&b.lock);
	pthread_mutex_destroy(&b.lock);
	pthread_cond_destroy(&b.done);
}

/* Groups io[] by member into tasks (idx[] holds their indices, n of
 * them); returns how many tasks, their members in slots[]. */
static int tasks_group(struct rc_io *io, int n, struct rc_task *tasks,
		       int *slots, int *idx)
{
	int of_slot[RC_MAX_MEMBERS], ntasks = 0, pos = 0;

	for (int s = 0; s < RC_MAX_MEMBERS; s++)
		of_slot[s] = -1;
	for (int i = 0; i < n; i++) {
		if (of_slot[io[i].member] < 0) {
			of_slot[io[i].member] = ntasks;
			slots[ntasks] = io[i].member;
			memset(&tasks[ntasks], 0, sizeof(tasks[0]));
			tasks[ntasks].io = io;
			ntasks++;
		}
		tasks[of_slot[io[i].member]].n++;
	}
	for (int t = 0; t < ntasks; t++) {
		tasks[t].idx = idx + pos;
		pos += tasks[t].n;
		tasks[t].n = 0;
	}
	for (int i = 0; i < n; i++) {
		struct rc_task *t = &tasks[of_slot[io[i].member]];

		((int *)t->idx)[t->n++] = i;
	}
	return ntasks;
}

void rc_io_run(struct rc_array *a, struct rc_io *io, int n)
{
	struct rc_task tasks[RC_MAX_MEMBERS];
	int slots[RC_MAX_MEMBERS] = { 0 };
	int idx_here[64], *idx = idx_here, ntasks;
	uint64_t bytes = 0;

	if (n <= 0)
		return;
	for (int i = 0; i < n; i++)
		bytes += (uint64_t)io[i].count * RC_BLOCK_SIZE;
	/* a read's pieces of one span (rc_read: 64 at most) need no
	 * allocation */
	if (n > (int)(sizeof(idx_here) / sizeof(idx_here[0])))
		idx = malloc((size_t)(unsigned)n * sizeof(int));
	if (!idx) {
		for (int i = 0; i < n; i++)
			io[i].err = -ENOMEM;
		return;
	}
	ntasks = tasks_group(io, n, tasks, slots, idx);
	tasks_run(a, tasks, ntasks, slots, bytes < PARALLEL_MIN_BYTES &&
		  !tasks_wait(a, tasks, slots, ntasks));
	if (idx != idx_here)
		free(idx);
}

struct rc_io_batch {
	struct rc_batch b;
	struct rc_task tasks[RC_MAX_MEMBERS];
	int idx[];
};

struct rc_io_batch *rc_io_submit(struct rc_array *a, struct rc_io *io, int n)
{
	struct rc_io_batch *ib;
	int slots[RC_MAX_MEMBERS] = { 0 }, ntasks;

	ib = malloc(sizeof(*ib) + (size_t)(unsigned)(n > 0 ? n : 0) * sizeof(int));
	if (!ib) {
		for (int i = 0; i < n; i++)
			io[i].err = -ENOMEM;
		return NULL;
	}
	ntasks = n > 0 ? tasks_group(io, n, ib->tasks, slots, ib->idx) : 0;
	pthread_mutex_init(&ib->b.lock, NULL);
	pthread_cond_init(&ib->b.done, NULL);
	ib->b.pending = ntasks;
	for (int t = 0; t < ntasks; t++) {
		ib->tasks[t].b = &ib->b;
		worker_queue(a->m[slots[t]].worker, &ib->tasks[t]);
	}
	return ib;
}

void rc_io_wait(struct rc_io_batch *ib)
{
	if (!ib)
		return;
	pthread_mutex_lock(&ib->b.lock);
	while (ib->b.pending)
		pthread_cond_wait(&ib->b.done, &ib->b.lock);
	pthread_mutex_unlock(&ib->b.lock);
	pthread_mutex_destroy(&ib->b.lock);
	pthread_cond_destroy(&ib->b.done);
	free(ib);
}

/* Flushes that took less than this in all, the last time, run one after
 * the other here: handing them to the workers and waiting costs more (a
 * member on tmpfs, or a page-cache image with nothing left to write).
 * One slow flush sends the next ones back to the workers. */
#define SYNC_INLINE_NS 20000u

int rc_io_sync_all(struct rc_array *a, uint32_t *failed)
{
	struct rc_task tasks[RC_MAX_MEMBERS];
	int slots[RC_MAX_MEMBERS] = { 0 }, errs[RC_MAX_MEMBERS] = { 0 };
	int ntasks = 0, ret = 0;
	uint64_t last = 0, ns;

	*failed = 0;
	if (!rc_io_may_write(a))
		return 0;
	for (uint32_t i = 0; i < a->g.members; i++) {
		if (!rc_member_present(a, (int)i))
			continue;
		memset(&tasks[ntasks], 0, sizeof(tasks[0]));
		slots[ntasks] = (int)i;
		tasks[ntasks].sync = true;
		tasks[ntasks].idx = &slots[ntasks];
		tasks[ntasks].sync_err = &errs[ntasks];
		ntasks++;
		ns = atomic_load(&a->m[i].sync_ns);
		last = ns > SYNC_INLINE_NS ? SYNC_INLINE_NS : last + ns;
	}
	tasks_run(a, tasks, ntasks, slots, last < SYNC_INLINE_NS);
	for (int t = 0; t < ntasks; t++) {
		if (errs[t] < 0) {
			*failed |= 1u << slots[t];
			ret = -EIO;
		}
	}
	return ret;
}
