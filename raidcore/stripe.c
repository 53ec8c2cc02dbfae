/*
 * stripe: the stripe table - one lock per stripe, and the write-back cache
 * of new data that has not been committed yet.
 *
 * Usage: st = rc_stripe_lock(a, s); ... rc_stripe_unlock(a, st).
 * An entry exists while somebody holds or waits for its lock, or while it
 * holds dirty data; it is freed when neither is true.  Entries are found
 * through a hash (common/hcache.h; no LRU: an idle clean entry is freed at
 * once) under cache_lock; the lock itself is a flag in the entry
 * with waiters on cache_cond, so any number of stripes can be locked in
 * ascending order without hash collisions deadlocking.
 *
 * Invariant: a stripe on the dirty list has data != NULL and ndirty > 0,
 * and its dirty data is the newest content of those blocks: reads of them
 * must come from here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define STRIPE_BUCKETS 8192

static void *pool_get(struct rc_array *a)
{
	void *p = NULL;

	pthread_mutex_lock(&a->pool_lock);
	if (a->npool)
		p = a->pool[--a->npool];
	pthread_mutex_unlock(&a->pool_lock);
	return p ? p : rc_buf_alloc((size_t)a->stripe_blocks * RC_BLOCK_SIZE);
}

static void pool_put(struct rc_array *a, void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&a->pool_lock);
	if (a->npool < a->pool_max) {
		a->pool[a->npool++] = p;
		p = NULL;
	}
	pthread_mutex_unlock(&a->pool_lock);
	free(p);
}

/*
 * The pool keeps as many buffers as the cache may hold dirty stripes: a
 * writer filling the cache again after a commit emptied it finds them
 * there.  It kept 256, and a RAID 6 of 5 with the default cache (682
 * stripes) freed and mapped anew a third of its buffers at every commit:
 * the page faults of their first copy cost the daemon 10-20 % more CPU
 * under a sequential write (docs/BENCHMARKS.md).  The price: memory up
 * to the cache's size stays mapped after a burst of writes, as md's
 * stripe cache keeps its stripe_cache_size.
 */
void rc_stripe_pool_limit(struct rc_array *a)
{
	uint32_t want = a->max_dirty_stripes;
	void **np;

	pthread_mutex_lock(&a->pool_lock);
	while (a->npool > want)
		free(a->pool[--a->npool]);
	np = realloc(a->pool, want * sizeof(*np));
	if (np) {
		a->pool = np;
		a->pool_max = want;
	} else if (want < a->pool_max) {
		a->pool_max = want;     /* the larger array serves */
	}
	pthread_mutex_unlock(&a->pool_lock);
}

int rc_stripe_table_init(struct rc_array *a)
{
	a->pool_max = a->max_dirty_stripes;
	a->pool = calloc(a->pool_max, sizeof(*a->pool));
	if (!a->pool)
		return -ENOMEM;
	pthread_mutex_init(&a->pool_lock, NULL);
	if (hc_init(&a->stab, STRIPE_BUCKETS) < 0)
		return -ENOMEM;
	pthread_mutex_init(&a->cache_lock, NULL);
	pthread_cond_init(&a->cache_cond, NULL);
	return 0;
}

static void stripe_free(struct rc_stripe *st)
{
	free(st->data);
	free(st->dirty);
	free(st);
}

static void stripe_node_free(struct hc_node *n, void *arg)
{
	stripe_free(hc_entry(n, struct rc_stripe, node));
}

void rc_stripe_table_fini(struct rc_array *a)
{
	if (!a->stab.tab)
		return;
	hc_fini(&a->stab, stripe_node_free, NULL);
	while (a->npool)
		free(a->pool[--a->npool]);
	free(a->pool);
	a->pool = NULL;
	pthread_mutex_destroy(&a->pool_lock);
	pthread_mutex_destroy(&a->cache_lock);
	pthread_cond_destroy(&a->cache_cond);
}

/* Caller holds cache_lock. */
static struct rc_stripe *stripe_find_or_add(struct rc_array *a, uint64_t s)
{
	struct hc_node *n = hc_find(&a->stab, s);
	struct rc_stripe *st;

	if (n)
		return hc_entry(n, struct rc_stripe, node);
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->stripe = s;
	hc_insert(&a->stab, &st->node, s);
	return st;
}

/* Caller holds cache_lock; st has no holder, waiter or dirty data. */
static void stripe_remove(struct rc_array *a, struct rc_stripe *st)
{
	hc_remove(&a->stab, &st->node);
	stripe_free(st);
}

struct rc_stripe *rc_stripe_lock(struct rc_array *a, uint64_t s)
{
	struct rc_stripe *st;

	pthread_mutex_lock(&a->cache_lock);
	while (!(st = stripe_find_or_add(a, s))) {
		/* Out of memory for a 100-byte struct: wait for frees. */
		pthread_cond_wait(&a->cache_cond, &a->cache_lock);
	}
	st->refs++;
	while (st->locked)
		pthread_cond_wait(&a->cache_cond, &a->cache_lock);
	st->locked = true;
	pthread_mutex_unlock(&a->cache_lock);
	return st;
}

void rc_stripe_unlock(struct rc_array *a, struct rc_stripe *st)
{
	pthread_mutex_lock(&a->cache_lock);
	st->locked = false;
	if (--st->refs == 0 && !st->dirty_listed)
		stripe_remove(a, st);
	pthread_cond_broadcast(&a->cache_cond);
	pthread_mutex_unlock(&a->cache_lock);
}

/* Caller holds the stripe lock. */
int rc_stripe_ensure_data(struct rc_array *a, struct rc_stripe *st)
{
	size_t words = RC_DIV_ROUND_UP(a->stripe_blocks, 64);

	if (st->data)
		return 0;
	st->data = pool_get(a);
	st->dirty = calloc(words, sizeof(uint64_t));
	if (!st->data || !st->dirty) {
		free(st->data);
		free(st->dirty);
		st->data = NULL;
		st->dirty = NULL;
		return -ENOMEM;
	}
	return 0;
}

bool rc_stripe_block_dirty(const struct rc_stripe *st, uint32_t i)
{
	return st->dirty && (st->dirty[i / 64] >> (i % 64) & 1);
}

/* Blocks [i, i + n) of the stripe; caller holds the stripe lock. */
void rc_stripe_mark_dirty_run(struct rc_array *a, struct rc_stripe *st,
			      uint32_t i, uint32_t n)
{
	uint32_t added = 0;

	for (uint32_t e = i + n; i < e; ) {
		uint32_t w = i / 64, b = i % 64, k = e - i < 64 - b ? e - i : 64 - b;
		uint64_t bits = (k == 64 ? ~0ull : ((1ull << k) - 1)) << b;

		added += (uint32_t)__builtin_popcountll(bits & ~st->dirty[w]);
		st->dirty[w] |= bits;
		i += k;
	}
	if (!added)
		return;
	st->ndirty += added;
	if (st->dirty_listed)
		return;
	pthread_mutex_lock(&a->cache_lock);
	st->dirty_listed = true;
	st->dnext = a->dirty_head;
	a->dirty_head = st;
	a->ndirty_stripes++;
	pthread_mutex_unlock(&a->cache_lock);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Takes up to max stripes off the dirty list and returns their numbers in
 * ascending order.  The entries stay in the table (dirty_listed is kept set
 * so they are not freed) until the commit clears them under their locks.
 * Full stripes are taken first.
 */
uint32_t rc_stripe_take_dirty(struct rc_array *a, uint64_t *out,
			      uint32_t max)
{
	struct rc_stripe **pp, *st;
	uint32_t n = 0;

	pthread_mutex_lock(&a->cache_lock);
	for (int pass = 0; pass < 2 && n < max; pass++) {
		pp = &a->dirty_head;
		while ((st = *pp) && n < max) {
			if (pass == 0 && st->ndirty != a->stripe_blocks) {
				pp = &st->dnext;
				continue;
			}
			*pp = st->dnext;
			st->dnext = NULL;
			a->ndirty_stripes--;
			out[n++] = st->stripe;
		}
	}
	pthread_mutex_unlock(&a->cache_lock);
	qsort(out, n, sizeof(*out), cmp_u64);
	return n;
}

void rc_stripe_clean(struct rc_array *a, struct rc_stripe *st)
{
	pool_put(a, st->data);
	free(st->dirty);
	st->data = NULL;
	st->dirty = NULL;
	st->ndirty = 0;
	st->stale = false;
	pthread_mutex_lock(&a->cache_lock);
	st->dirty_listed = false;
	pthread_mutex_unlock(&a->cache_lock);
}

void rc_stripe_relist(struct rc_array *a, struct rc_stripe *st)
{
	pthread_mutex_lock(&a->cache_lock);
	st->dnext = a->dirty_head;
	a->dirty_head = st;
	a->ndirty_stripes++;
	pthread_mutex_unlock(&a->cache_lock);
}

/* Drops a stripe's dirty data (it was discarded).  Under the stripe lock. */
void rc_stripe_forget(struct rc_array *a, struct rc_stripe *st)
{
	struct rc_stripe **pp;

	pthread_mutex_lock(&a->cache_lock);
	for (pp = &a->dirty_head; *pp; pp = &(*pp)->dnext) {
		if (*pp == st) {
			*pp = st->dnext;
			a->ndirty_stripes--;
			break;
		}
	}
	st->dirty_listed = false;
	pthread_mutex_unlock(&a->cache_lock);
	pool_put(a, st->data);
	free(st->dirty);
	st->data = NULL;
	st->dirty = NULL;
	st->ndirty = 0;
	st->stale = false;
}
