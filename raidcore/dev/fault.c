/*
 * rc_dev_fault: a fault-injecting member backend over any other (rc_fault.h).
 *
 * Usage pattern (tests):
 *   rc_fault_wrap(lower, power, &dev, &ctl)   dev now owns lower
 *   rc_fault_eio / _flip_on_read / _lose_writes / _corrupt / _vanish /
 *   _shrink / _swap (ctl)
 *   I/O on dev as on any member; rc_fault_reads(ctl) ... for assertions
 *   rc_dev_close(dev)                         closes lower too
 *
 * Rules.  Each rule covers a byte range and counts the operations that
 * touch it: an operation touching the ranges of several rules fires all of
 * them, and each loses one hit (RC_FAULT_PERSISTENT rules never run out).
 * An operation fails with the first applicable error, in this order:
 * -EINVAL (out of bounds), -ENXIO (vanished), -EIO (power off), -EIO
 * (reaching past a shrunk size), -EIO (rule).
 * A lost-write rule drops only the bytes of the write inside its range; the
 * rest of the write is stored.  A flip rule flips one bit in every 4 KiB
 * block (absolute, aligned) where the read meets the rule's range, at most
 * one per block however many rules fire; the bit is a fixed function of the
 * block and the bytes read, so a repeated read returns the same corruption.
 * An operation of length 0 fires nothing.  The operation counters count
 * every call, including those that fail; the byte counter counts what the
 * device took: the whole of every write that succeeded (lost ones too: they
 * were acknowledged) and the first part of a torn one.
 *
 * Power.  Without a domain, writes go straight to lower.  With one, the
 * device behaves like a disk with a volatile write cache: writes wait in
 * f->head (oldest first), reads see them over lower, and sync applies them
 * to lower in order.  When the domain loses power every device's cache is
 * dropped, or in RC_POWER_REORDER each 4 KiB-aligned piece of each cached
 * write independently reaches lower or not (sectors are atomic; their order
 * is not).  The write that trips rc_power_cut_after() returns -EIO and is
 * lost; so does every later operation on any device of the domain.
 * rc_power_write_limit() is gentler: a budget of bytes over the domain's
 * writes; the write that overdraws it is cached only up to the budget and
 * fails (torn), later writes fail whole, and everything else goes on.
 * Closing a device while the power is on writes its cache back (as a page
 * cache would eventually); with the power off its cache is already gone.
 *
 * Shrink and swap.  A shrunk device keeps dev->size (the size at open, as
 * a real handle does) but its size_now says the new size, and I/O past it
 * fails.  A swapped device reads, writes and syncs another lower device
 * from then on (the first one stays open until close, so I/O in flight on
 * it finishes); rc_fault_corrupt then corrupts the new one.
 *
 * Locks: f->lock protects a device's rules, vanish flag and shrunk size; power->lock
 * protects the domain: its state, its device list and every device's cache.
 * Neither is ever taken while holding the other.  I/O on lower happens
 * under power->lock when there is a domain, which serializes the domain's
 * I/O: a test tool trades speed for a simple cut.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rc_fault.h"

/* The unit a power cut keeps or drops whole. */
#define FAULT_PIECE RC_BLOCK_SIZE

enum fault_kind {
	FAULT_EIO,
	FAULT_FLIP,
	FAULT_LOSE,
};

struct fault_rule {
	enum fault_kind kind;
	unsigned ops;            /* enum rc_fault_op bits */
	uint64_t start, end;     /* bytes [start, end); end saturates */
	int left;                /* hits left, or RC_FAULT_PERSISTENT */
	bool write_clears;       /* a pending sector: gone once a write
				    covering it is stored */
};

/* Ranges of fired rules, clipped to the operation. */
struct fault_ranges {
	struct { uint64_t start, end; } *v;
	size_t n;
};

/* One unsynced write in a device's volatile cache. */
struct fault_pending {
	struct fault_pending *next;
	uint64_t off;
	size_t len;
	unsigned char data[];
};

struct rc_fault {
	struct rc_dev *lower;
	struct rc_power *power;           /* NULL: no cache */
	pthread_mutex_t lock;             /* protects rules, nrules, cap, vanished */
	struct fault_rule *rules;         /* in the order they were added */
	size_t nrules, cap;
	bool vanished;
	uint64_t shrunk_to;               /* bytes; UINT64_MAX: not shrunk */
	struct rc_dev *_Atomic swapped;   /* answers instead of lower; set once */
	atomic_uint_fast64_t reads, writes, syncs, bytes_written;
	atomic_uint sync_delay_us;
	atomic_uint read_delay_us, write_delay_us;
	/* rc_fault_watch: the kind and range (f->lock) and their count */
	enum rc_fault_op watch_op;
	uint64_t watch_off, watch_end;
	atomic_uint_fast64_t watched;
	pthread_t last_sync_thread;       /* f->lock */
	/* rc_fault_hold: requests of kind hold_op touching [hold_off,
	 * hold_end) wait on hold_cond until released; held counts them (all
	 * f->lock). */
	enum rc_fault_op hold_op;
	uint64_t hold_off, hold_end;
	unsigned held;
	pthread_cond_t hold_cond;
	/* Protected by power->lock. */
	struct fault_pending *head, **tail;
	struct rc_fault *domain_next;
};

struct rc_power {
	pthread_mutex_t lock;             /* protects all but the atomics */
	enum rc_power_mode mode;
	uint64_t rng;
	uint64_t cut_at;                  /* value of writes that cuts; 0 never */
	int64_t write_budget;             /* bytes writes may still take; -1: no
					     limit */
	atomic_uint_fast64_t writes;      /* written only under lock */
	atomic_bool off;                  /* written only under lock; never reset */
	struct rc_fault *devs, **devs_tail;  /* in wrap order, for determinism */
	int refs;                         /* the creator's + one per device */
};

/* splitmix64: tiny, seedable, and good enough to pick bits and pieces. */
static uint64_t fault_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t fault_end(uint64_t off, uint64_t len)
{
	return len > UINT64_MAX - off ? UINT64_MAX : off + len;
}

static bool fault_in_bounds(const struct rc_dev *dev, uint64_t len,
			    uint64_t off)
{
	return off <= dev->size && len <= dev->size - off;
}

static uint64_t fault_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t fault_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The device that answers now: lower, or what was swapped in. */
static struct rc_dev *fault_lower(struct rc_fault *f)
{
	struct rc_dev *d = atomic_load(&f->swapped);

	return d ? d : f->lower;
}

/* ---- rules ---------------------------------------------------------------- */

static int fault_rule_add(struct rc_fault *f, const struct fault_rule *r)
{
	struct fault_rule *v;
	size_t cap;
	int err = 0;

	if (r->start >= r->end || (r->left <= 0 && r->left != RC_FAULT_PERSISTENT))
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	if (f->nrules == f->cap) {
		cap = f->cap ? 2 * f->cap : 8;
		v = realloc(f->rules, cap * sizeof(*v));
		if (!v) {
			err = -ENOMEM;
			goto out;
		}
		f->rules = v;
		f->cap = cap;
	}
	f->rules[f->nrules++] = *r;
out:
	pthread_mutex_unlock(&f->lock);
	return err;
}

/* Drops the rules whose hits ran out, keeping the others' order. */
static void fault_rules_compact_locked(struct rc_fault *f)
{
	size_t i, n = 0;

	for (i = 0; i < f->nrules; i++)
		if (f->rules[i].left != 0)
			f->rules[n++] = f->rules[i];
	f->nrules = n;
}

/* A write [start, end) was stored: the pending sectors it covers are
 * remapped (their rules go). */
static void fault_pending_written(struct rc_fault *f, uint64_t start,
				  uint64_t end)
{
	bool any = false;

	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->nrules; i++) {
		struct fault_rule *r = &f->rules[i];

		if (r->write_clears && start <= r->start && r->end <= end) {
			r->left = 0;
			any = true;
		}
	}
	if (any)
		fault_rules_compact_locked(f);
	pthread_mutex_unlock(&f->lock);
}

/*
 * Fires every rule of kind for op that touches [start, end): each loses a
 * hit; with fired, their ranges (clipped) are appended to it.  Caller must
 * hold f->lock.  Returns the number fired or -ENOMEM.
 */
static int fault_rules_fire_locked(struct rc_fault *f, enum fault_kind kind,
				   unsigned op, uint64_t start, uint64_t end,
				   struct fault_ranges *fired)
{
	struct fault_rule *r;
	size_t i;
	int n = 0;

	if (fired && f->nrules) {
		fired->v = malloc(f->nrules * sizeof(*fired->v));
		if (!fired->v)
			return -ENOMEM;
	}
	for (i = 0; i < f->nrules; i++) {
		r = &f->rules[i];
		if (r->kind != kind || !(r->ops & op) || r->end <= start ||
		    end <= r->start)
			continue;
		if (r->left > 0)
			r->left--;
		if (fired) {
			fired->v[fired->n].start = fault_max(start, r->start);
			fired->v[fired->n].end = fault_min(end, r->end);
			fired->n++;
		}
		n++;
	}
	if (n)
		fault_rules_compact_locked(f);
	return n;
}

/*
 * The checks every read and write passes, then the rules of extra (a flip
 * or lose kind) are fired into fired.  Returns 0 or the operation's error.
 */
static int fault_gate(struct rc_fault *f, unsigned op, uint64_t start,
		      uint64_t end, enum fault_kind extra,
		      struct fault_ranges *fired)
{
	int err = 0, n;

	pthread_mutex_lock(&f->lock);
	if (f->vanished) {
		err = -ENXIO;
		goto out;
	}
	if (f->power && atomic_load(&f->power->off)) {
		err = -EIO;
		goto out;
	}
	if (start == end)
		goto out;
	if (end > f->shrunk_to) {
		err = -EIO;
		goto out;
	}
	n = fault_rules_fire_locked(f, FAULT_EIO, op, start, end, NULL);
	if (n) {
		err = -EIO;
		goto out;
	}
	n = fault_rules_fire_locked(f, extra, op, start, end, fired);
	if (n < 0)
		err = n;
out:
	pthread_mutex_unlock(&f->lock);
	return err;
}

/* Flips one bit, chosen by the block number, of part [s, e) of buf. */
static void fault_bit_flip(unsigned char *buf, uint64_t buf_off, uint64_t s,
			   uint64_t e, uint64_t block)
{
	uint64_t state = block;
	uint64_t bit = fault_rng_next(&state) % ((e - s) * 8);

	buf[s - buf_off + bit / 8] ^= (unsigned char)(1u << (bit % 8));
}

/* One flip per 4 KiB block where the read [off, end) meets a fired rule. */
static void fault_flips_apply(unsigned char *buf, uint64_t off, uint64_t end,
			      const struct fault_ranges *fired)
{
	uint64_t b, bs, be;
	size_t i;

	for (b = off / RC_BLOCK_SIZE; b * RC_BLOCK_SIZE < end; b++) {
		bs = fault_max(off, b * RC_BLOCK_SIZE);
		be = fault_min(end, (b + 1) * RC_BLOCK_SIZE);
		for (i = 0; i < fired->n; i++) {
			if (fired->v[i].end <= bs || be <= fired->v[i].start)
				continue;
			fault_bit_flip(buf, off, fault_max(bs, fired->v[i].start),
				       fault_min(be, fired->v[i].end), b);
			break;
		}
	}
}

/*
 * Finds the next part [*pos, *seg_end) of [*pos, end) outside every lost
 * range; false when nothing is left.
 */
static bool fault_kept_next(const struct fault_ranges *lost, uint64_t *pos,
			    uint64_t end, uint64_t *seg_end)
{
	uint64_t p = *pos, stop = end;
	bool moved = true;
	size_t i;

	while (moved) {
		moved = false;
		for (i = 0; i < lost->n; i++) {
			if (lost->v[i].start <= p && p < lost->v[i].end) {
				p = lost->v[i].end;
				moved = true;
			}
		}
	}
	if (p >= end)
		return false;
	for (i = 0; i < lost->n; i++)
		if (lost->v[i].start > p && lost->v[i].start < stop)
			stop = lost->v[i].start;
	*pos = p;
	*seg_end = stop;
	return true;
}

/* ---- the volatile cache of a power domain ----------------------------------
 * Every function here is called with f->power->lock held.
 */

static int fault_pending_add(struct rc_fault *f, const unsigned char *data,
			     size_t len, uint64_t off)
{
	struct fault_pending *w = malloc(sizeof(*w) + len);

	if (!w)
		return -ENOMEM;
	w->next = NULL;
	w->off = off;
	w->len = len;
	memcpy(w->data, data, len);
	*f->tail = w;
	f->tail = &w->next;
	return 0;
}

static void fault_pending_free(struct rc_fault *f)
{
	struct fault_pending *w, *next;

	for (w = f->head; w; w = next) {
		next = w->next;
		free(w);
	}
	f->head = NULL;
	f->tail = &f->head;
}

/* Writes the cache to lower in order; what was written leaves the cache. */
static int fault_pending_apply(struct rc_fault *f)
{
	struct fault_pending *w;
	int err;

	while ((w = f->head) != NULL) {
		err = rc_dev_write(fault_lower(f), w->data, w->len, w->off);
		if (err)
			return err;
		f->head = w->next;
		free(w);
	}
	f->tail = &f->head;
	return 0;
}

/* Lays the cache over data read from lower: the newest write wins. */
static void fault_pending_overlay(struct rc_fault *f, unsigned char *buf,
				  size_t len, uint64_t off)
{
	uint64_t end = off + len, s, e;
	struct fault_pending *w;

	for (w = f->head; w; w = w->next) {
		s = fault_max(off, w->off);
		e = fault_min(end, w->off + w->len);
		if (s < e)
			memcpy(buf + (s - off), w->data + (s - w->off), e - s);
	}
}

/* What a reordering disk may have written: each piece whole, or not. */
static void fault_pending_scatter(struct rc_power *p, struct rc_fault *f)
{
	struct fault_pending *w;
	uint64_t s, e, end;

	for (w = f->head; w; w = w->next) {
		end = w->off + w->len;
		for (s = w->off; s < end; s = e) {
			e = fault_min(end, (s / FAULT_PIECE + 1) * FAULT_PIECE);
			if (fault_rng_next(&p->rng) & 1)
				(void)rc_dev_write(fault_lower(f),
						   w->data + (s - w->off), e - s, s);
		}
	}
}

/* The power goes off: this is the instant the lower devices freeze. */
static void power_off_locked(struct rc_power *p)
{
	struct rc_fault *f;

	if (atomic_load(&p->off))
		return;
	atomic_store(&p->off, true);
	for (f = p->devs; f; f = f->domain_next) {
		if (p->mode == RC_POWER_REORDER)
			fault_pending_scatter(p, f);
		fault_pending_free(f);
	}
}

/* ---- I/O through a power domain ------------------------------------------ */

static int power_read(struct rc_fault *f, void *buf, size_t len, uint64_t off)
{
	struct rc_power *p = f->power;
	int err = -EIO;

	pthread_mutex_lock(&p->lock);
	if (atomic_load(&p->off))
		goto out;
	err = rc_dev_read(fault_lower(f), buf, len, off);
	if (!err)
		fault_pending_overlay(f, buf, len, off);
out:
	pthread_mutex_unlock(&p->lock);
	return err;
}

/* Takes the write [off, *end) from the budget; true when it had to be cut
 * short (*end moves back to where the budget ran out). */
static bool power_budget_take(struct rc_power *p, uint64_t off, uint64_t *end)
{
	if (p->write_budget < 0)
		return false;
	if ((uint64_t)p->write_budget >= *end - off) {
		p->write_budget -= (int64_t)(*end - off);
		return false;
	}
	*end = off + (uint64_t)p->write_budget;
	p->write_budget = 0;
	return true;
}

/* Counts the write in the domain, then caches the parts not lost (up to
 * the budget). */
static int power_write(struct rc_fault *f, const unsigned char *buf,
		       uint64_t off, uint64_t end,
		       const struct fault_ranges *lost)
{
	struct rc_power *p = f->power;
	uint64_t pos, seg_end, n;
	int err = -EIO;
	bool torn;

	pthread_mutex_lock(&p->lock);
	if (atomic_load(&p->off))
		goto out;
	n = atomic_fetch_add(&p->writes, 1) + 1;
	if (p->cut_at && n >= p->cut_at) {
		power_off_locked(p);
		goto out;
	}
	torn = power_budget_take(p, off, &end);
	err = 0;
	for (pos = off; !err && fault_kept_next(lost, &pos, end, &seg_end);
	     pos = seg_end)
		err = fault_pending_add(f, buf + (pos - off), seg_end - pos, pos);
	if (!err)
		atomic_fetch_add(&f->bytes_written, end - off);
	if (!err && torn)
		err = -EIO;
out:
	pthread_mutex_unlock(&p->lock);
	return err;
}

static int power_sync(struct rc_fault *f)
{
	struct rc_power *p = f->power;
	int err = -EIO;

	pthread_mutex_lock(&p->lock);
	if (!atomic_load(&p->off))
		err = fault_pending_apply(f);
	pthread_mutex_unlock(&p->lock);
	return err;
}

static void power_free(struct rc_power *p)
{
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Leaves the domain; the last one out frees it. */
static void power_detach(struct rc_fault *f)
{
	struct rc_power *p = f->power;
	struct rc_fault **pp;
	bool last;

	pthread_mutex_lock(&p->lock);
	for (pp = &p->devs; *pp != f; pp = &(*pp)->domain_next)
		;
	*pp = f->domain_next;
	if (!f->domain_next)
		p->devs_tail = pp;
	if (!atomic_load(&p->off))
		(void)fault_pending_apply(f);
	fault_pending_free(f);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (last)
		power_free(p);
}

/* ---- the device ----------------------------------------------------------- */

/* A request of kind op touching the watched range is counted; one
 * touching the held range waits here until it is released; then the
 * delay of its kind. */
static void fault_hold(struct rc_fault *f, enum rc_fault_op op, size_t len,
		       uint64_t off)
{
	unsigned delay;

	pthread_mutex_lock(&f->lock);
	if (op == f->watch_op && off < f->watch_end && off + len > f->watch_off)
		atomic_fetch_add(&f->watched, 1);
	if (op == f->hold_op && off < f->hold_end && off + len > f->hold_off) {
		f->held++;
		pthread_cond_broadcast(&f->hold_cond);
		while (off < f->hold_end && off + len > f->hold_off)
			pthread_cond_wait(&f->hold_cond, &f->lock);
		f->held--;
	}
	pthread_mutex_unlock(&f->lock);
	delay = atomic_load(op == RC_FAULT_READ ? &f->read_delay_us :
			    &f->write_delay_us);
	if (delay)
		usleep(delay);
}

/* A read, through the gates; the caller counted it. */
static int fault_read_one(struct rc_dev *dev, void *buf, size_t len,
			  uint64_t off)
{
	struct rc_fault *f = dev->ctx;
	struct fault_ranges flips = { 0 };
	int err;

	if (!fault_in_bounds(dev, len, off))
		return -EINVAL;
	fault_hold(f, RC_FAULT_READ, len, off);
	err = fault_gate(f, RC_FAULT_READ, off, off + len, FAULT_FLIP, &flips);
	if (err)
		goto out;
	if (f->power)
		err = power_read(f, buf, len, off);
	else
		err = rc_dev_read(fault_lower(f), buf, len, off);
	if (!err)
		fault_flips_apply(buf, off, off + len, &flips);
out:
	free(flips.v);
	return err;
}

static int fault_read(struct rc_dev *dev, void *buf, size_t len, uint64_t off)
{
	atomic_fetch_add(&((struct rc_fault *)dev->ctx)->reads, 1);
	return fault_read_one(dev, buf, len, off);
}

/* One request into several buffers, counted once as a device's preadv
 * is; each buffer goes through the gates as a read of its own. */
static int fault_readv(struct rc_dev *dev, const struct iovec *iov,
		       int iovcnt, uint64_t off)
{
	int err = 0;

	atomic_fetch_add(&((struct rc_fault *)dev->ctx)->reads, 1);
	for (int i = 0; i < iovcnt && !err; i++) {
		err = fault_read_one(dev, iov[i].iov_base, iov[i].iov_len, off);
		off += iov[i].iov_len;
	}
	return err;
}

static int fault_write_through(struct rc_fault *f, const unsigned char *buf,
			       uint64_t off, uint64_t end,
			       const struct fault_ranges *lost)
{
	uint64_t pos, seg_end;
	int err = 0;

	for (pos = off; !err && fault_kept_next(lost, &pos, end, &seg_end);
	     pos = seg_end)
		err = rc_dev_write(fault_lower(f), buf + (pos - off),
				   seg_end - pos, pos);
	return err;
}

static int fault_write(struct rc_dev *dev, const void *buf, size_t len,
		       uint64_t off)
{
	struct rc_fault *f = dev->ctx;
	struct fault_ranges lost = { 0 };
	int err;

	atomic_fetch_add(&f->writes, 1);
	if (!fault_in_bounds(dev, len, off))
		return -EINVAL;
	fault_hold(f, RC_FAULT_WRITE, len, off);
	err = fault_gate(f, RC_FAULT_WRITE, off, off + len, FAULT_LOSE, &lost);
	if (err)
		goto out;
	if (f->power) {
		err = power_write(f, buf, off, off + len, &lost);
	} else {
		err = fault_write_through(f, buf, off, off + len, &lost);
		if (!err)
			atomic_fetch_add(&f->bytes_written, len);
	}
	if (!err && !lost.n)
		fault_pending_written(f, off, off + len);
out:
	free(lost.v);
	return err;
}

static int fault_sync(struct rc_dev *dev)
{
	struct rc_fault *f = dev->ctx;
	bool vanished;
	int err;

	atomic_fetch_add(&f->syncs, 1);
	if (atomic_load(&f->sync_delay_us))
		usleep(atomic_load(&f->sync_delay_us));
	pthread_mutex_lock(&f->lock);
	vanished = f->vanished;
	f->last_sync_thread = pthread_self();
	pthread_mutex_unlock(&f->lock);
	if (vanished)
		return -ENXIO;
	if (f->power) {
		err = power_sync(f);
		if (err)
			return err;
	}
	return rc_dev_sync(fault_lower(f));
}

static void fault_close(struct rc_dev *dev)
{
	struct rc_fault *f = dev->ctx;

	if (f->power)
		power_detach(f);
	rc_dev_close(atomic_load(&f->swapped));
	rc_dev_close(f->lower);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->hold_cond);
	free(f->rules);
	free(f);
	free(dev);
}

/* What the device answering now says, or less when it was shrunk. */
static int fault_size_now(struct rc_dev *dev, uint64_t *bytes)
{
	struct rc_fault *f = dev->ctx;
	uint64_t limit;
	int err;

	err = rc_dev_size_now(fault_lower(f), bytes);
	pthread_mutex_lock(&f->lock);
	limit = f->shrunk_to;
	pthread_mutex_unlock(&f->lock);
	if (!err && *bytes > limit)
		*bytes = limit;
	return err;
}

static const struct rc_dev_ops fault_ops = {
	.read = fault_read,
	.readv = fault_readv,
	.write = fault_write,
	.sync = fault_sync,
	.close = fault_close,
	.size_now = fault_size_now,
};

static void power_attach(struct rc_power *p, struct rc_fault *f)
{
	pthread_mutex_lock(&p->lock);
	*p->devs_tail = f;
	p->devs_tail = &f->domain_next;
	p->refs++;
	pthread_mutex_unlock(&p->lock);
}

/* On failure lower is left alone: the caller still owns it. */
int rc_fault_wrap(struct rc_dev *lower, struct rc_power *power,
		  struct rc_dev **out, struct rc_fault **ctl)
{
	struct rc_dev *dev = NULL;
	struct rc_fault *f = NULL;
	int err = -ENOMEM;

	*out = NULL;
	if (!lower)
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	f = calloc(1, sizeof(*f));
	if (!dev || !f)
		goto fail;
	err = -pthread_mutex_init(&f->lock, NULL);
	if (err)
		goto fail;
	pthread_cond_init(&f->hold_cond, NULL);
	f->lower = lower;
	f->power = power;
	f->shrunk_to = UINT64_MAX;
	f->tail = &f->head;
	*dev = *lower;         /* size, name and identity are the lower's */
	dev->ops = &fault_ops;
	dev->ctx = f;
	if (power)
		power_attach(power, f);
	*out = dev;
	if (ctl)
		*ctl = f;
	return 0;
fail:
	free(f);
	free(dev);
	return err;
}

/* ---- controls ------------------------------------------------------------- */

int rc_fault_eio(struct rc_fault *f, enum rc_fault_op op, uint64_t off,
		 uint64_t len, int count)
{
	struct fault_rule r = {
		.kind = FAULT_EIO, .ops = op, .start = off,
		.end = fault_end(off, len), .left = count,
	};

	if (!op || (op & ~(unsigned)(RC_FAULT_READ | RC_FAULT_WRITE)))
		return -EINVAL;
	return fault_rule_add(f, &r);
}

int rc_fault_pending(struct rc_fault *f, uint64_t off, uint64_t len)
{
	struct fault_rule r = {
		.kind = FAULT_EIO, .ops = RC_FAULT_READ, .start = off,
		.end = fault_end(off, len), .left = RC_FAULT_PERSISTENT,
		.write_clears = true,
	};

	return fault_rule_add(f, &r);
}

int rc_fault_flip_on_read(struct rc_fault *f, uint64_t off, uint64_t len,
			  int count)
{
	struct fault_rule r = {
		.kind = FAULT_FLIP, .ops = RC_FAULT_READ, .start = off,
		.end = fault_end(off, len), .left = count,
	};

	return fault_rule_add(f, &r);
}

int rc_fault_lose_writes(struct rc_fault *f, uint64_t off, uint64_t len,
			 int count)
{
	struct fault_rule r = {
		.kind = FAULT_LOSE, .ops = RC_FAULT_WRITE, .start = off,
		.end = fault_end(off, len), .left = count,
	};

	return fault_rule_add(f, &r);
}

static int fault_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Fills bits[0..n) with n distinct sorted positions below range. */
static void fault_bits_pick(uint64_t *bits, size_t n, uint64_t range,
			    uint64_t seed)
{
	size_t have = 0, i, k;

	while (have < n) {
		for (i = have; i < n; i++)
			bits[i] = fault_rng_next(&seed) % range;
		qsort(bits, n, sizeof(*bits), fault_u64_cmp);
		for (k = 1, i = 1; i < n; i++)
			if (bits[i] != bits[k - 1])
				bits[k++] = bits[i];
		have = k;
	}
}

/* Read-modify-write of lower, one 4 KiB block at a time. */
static int fault_bits_apply(struct rc_dev *lower, uint64_t off, uint64_t end,
			    const uint64_t *bits, size_t n)
{
	unsigned char blk[RC_BLOCK_SIZE];
	uint64_t b, bs, be, byte;
	size_t i = 0;
	int err = 0;

	while (!err && i < n) {
		b = (off + bits[i] / 8) / RC_BLOCK_SIZE;
		bs = fault_max(off, b * RC_BLOCK_SIZE);
		be = fault_min(end, (b + 1) * RC_BLOCK_SIZE);
		err = rc_dev_read(lower, blk, be - bs, bs);
		for (; !err && i < n && (byte = off + bits[i] / 8) < be; i++)
			blk[byte - bs] ^= (unsigned char)(1u << (bits[i] % 8));
		if (!err)
			err = rc_dev_write(lower, blk, be - bs, bs);
	}
	return err;
}

/*
 * Goes straight to lower (the media), past rules, counters and any cache;
 * not atomic against concurrent writes to the same range.
 */
int rc_fault_corrupt(struct rc_fault *f, uint64_t off, uint64_t len,
		     int nbits, uint64_t seed)
{
	uint64_t *bits;
	int err;

	if (nbits < 0 || !fault_in_bounds(fault_lower(f), len, off) ||
	    ((uint64_t)nbits + 7) / 8 > len)
		return -EINVAL;
	if (nbits == 0)
		return 0;
	bits = malloc((size_t)nbits * sizeof(*bits));
	if (!bits)
		return -ENOMEM;
	fault_bits_pick(bits, (size_t)nbits, len * 8, seed);
	err = fault_bits_apply(fault_lower(f), off, off + len, bits,
			       (size_t)nbits);
	free(bits);
	return err;
}

void rc_fault_vanish(struct rc_fault *f)
{
	pthread_mutex_lock(&f->lock);
	f->vanished = true;
	pthread_mutex_unlock(&f->lock);
}

void rc_fault_shrink(struct rc_fault *f, uint64_t bytes)
{
	pthread_mutex_lock(&f->lock);
	f->shrunk_to = bytes;
	pthread_mutex_unlock(&f->lock);
}

int rc_fault_swap(struct rc_fault *f, struct rc_dev *other)
{
	struct rc_dev *none = NULL;

	if (!other || other->size < f->lower->size)
		return -EINVAL;
	if (!atomic_compare_exchange_strong(&f->swapped, &none, other))
		return -EBUSY;
	return 0;
}

void rc_fault_sync_delay(struct rc_fault *f, unsigned usec)
{
	atomic_store(&f->sync_delay_us, usec);
}

void rc_fault_watch(struct rc_fault *f, enum rc_fault_op op, uint64_t off,
		    uint64_t len)
{
	pthread_mutex_lock(&f->lock);
	f->watch_op = op;
	f->watch_off = off;
	f->watch_end = off + len;
	atomic_store(&f->watched, 0);
	pthread_mutex_unlock(&f->lock);
}

uint64_t rc_fault_watched(struct rc_fault *f)
{
	return atomic_load(&f->watched);
}

void rc_fault_delay(struct rc_fault *f, enum rc_fault_op op, unsigned usec)
{
	atomic_store(op == RC_FAULT_READ ? &f->read_delay_us :
		     &f->write_delay_us, usec);
}

bool rc_fault_last_sync_on(struct rc_fault *f, pthread_t t)
{
	bool on;

	pthread_mutex_lock(&f->lock);
	on = atomic_load(&f->syncs) && pthread_equal(f->last_sync_thread, t);
	pthread_mutex_unlock(&f->lock);
	return on;
}

void rc_fault_hold(struct rc_fault *f, enum rc_fault_op op, uint64_t off,
		   uint64_t len)
{
	pthread_mutex_lock(&f->lock);
	f->hold_op = op;
	f->hold_off = off;
	f->hold_end = off + len;
	pthread_mutex_unlock(&f->lock);
}

void rc_fault_wait_held(struct rc_fault *f, unsigned n)
{
	pthread_mutex_lock(&f->lock);
	while (f->held < n)
		pthread_cond_wait(&f->hold_cond, &f->lock);
	pthread_mutex_unlock(&f->lock);
}

void rc_fault_release(struct rc_fault *f)
{
	pthread_mutex_lock(&f->lock);
	f->hold_off = f->hold_end = 0;
	pthread_cond_broadcast(&f->hold_cond);
	pthread_mutex_unlock(&f->lock);
}

void rc_fault_clear(struct rc_fault *f)
{
	pthread_mutex_lock(&f->lock);
	f->nrules = 0;
	f->vanished = false;
	f->shrunk_to = UINT64_MAX;
	pthread_mutex_unlock(&f->lock);
}

uint64_t rc_fault_reads(const struct rc_fault *f)
{
	return atomic_load(&f->reads);
}

uint64_t rc_fault_writes(const struct rc_fault *f)
{
	return atomic_load(&f->writes);
}

uint64_t rc_fault_syncs(const struct rc_fault *f)
{
	return atomic_load(&f->syncs);
}

uint64_t rc_fault_bytes_written(const struct rc_fault *f)
{
	return atomic_load(&f->bytes_written);
}

/* ---- power domains -------------------------------------------------------- */

struct rc_power *rc_power_create(enum rc_power_mode mode, uint64_t seed)
{
	struct rc_power *p;

	if (mode != RC_POWER_DROP && mode != RC_POWER_REORDER)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (pthread_mutex_init(&p->lock, NULL)) {
		free(p);
		return NULL;
	}
	p->mode = mode;
	p->rng = seed;
	p->write_budget = -1;
	p->devs_tail = &p->devs;
	p->refs = 1;
	return p;
}

void rc_power_cut_after(struct rc_power *p, uint64_t nth)
{
	pthread_mutex_lock(&p->lock);
	p->cut_at = nth ? atomic_load(&p->writes) + nth : 0;
	pthread_mutex_unlock(&p->lock);
}

void rc_power_write_limit(struct rc_power *p, int64_t nblocks)
{
	pthread_mutex_lock(&p->lock);
	p->write_budget = nblocks < 0 ? -1 : nblocks * (int64_t)RC_BLOCK_SIZE;
	pthread_mutex_unlock(&p->lock);
}

void rc_power_cut(struct rc_power *p)
{
	pthread_mutex_lock(&p->lock);
	power_off_locked(p);
	pthread_mutex_unlock(&p->lock);
}

bool rc_power_is_off(const struct rc_power *p)
{
	return atomic_load(&p->off);
}

uint64_t rc_power_writes(const struct rc_power *p)
{
	return atomic_load(&p->writes);
}

/* Drops the creator's reference; the domain outlives it while devices do. */
void rc_power_destroy(struct rc_power *p)
{
	bool last;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (last)
		power_free(p);
}
