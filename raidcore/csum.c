/*
 * csum: the per-member checksum tables, cached in memory.
 *
 * Usage: rc_csum_verify() / rc_csum_lookup() on reads, rc_csum_update() when
 * a commit computes a new block, rc_csum_take_dirty() when the commit
 * journals the table blocks it changed.  All under csum_lock, which is the
 * innermost lock (see array.h).
 *
 * A table block that fails its own checksum (torn, corrupt, unreadable) is
 * kept with every entry marked unknown: lookups of those entries fail with
 * -EIO and the read path verifies the block against redundancy instead,
 * then records the entry.  Such a block is written back only once every
 * entry is known again (scrub gets there), so a half-known table never
 * reaches the media.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

struct rc_csum_entry {
	struct rc_csum_entry *hnext;
	struct rc_csum_entry *lprev, *lnext;   /* LRU, most recent first */
	struct rc_csum_entry *dnext;            /* its slot's dirty list */
	int slot;
	uint64_t index;                         /* table block number */
	bool dirty;                             /* on the dirty list */
	uint32_t nunknown;
	uint64_t *unknown;                      /* bitmap, NULL when all known */
	uint8_t block[RC_BLOCK_SIZE];
};

#define CSUM_BUCKETS 4096
#define CSUM_MAX_BLOCKS 16384                   /* 64 MiB of tables */

struct rc_csum_cache {
	struct rc_csum_entry lru;               /* sentinel */
	uint32_t count, max;
	struct rc_csum_entry *tab[CSUM_BUCKETS];
	/* Per slot, the entries with dirty set, so a commit finds them
	 * without walking the whole cache. */
	struct rc_csum_entry *dirty[RC_MAX_MEMBERS];
};

int rc_csum_init(struct rc_array *a)
{
	a->cc = calloc(1, sizeof(*a->cc));
	if (!a->cc)
		return -ENOMEM;
	a->cc->lru.lprev = a->cc->lru.lnext = &a->cc->lru;
	a->cc->max = CSUM_MAX_BLOCKS;
	return 0;
}

static struct rc_csum_entry *lru(struct rc_array *a)
{
	return &a->cc->lru;
}

static void lru_unlink(struct rc_csum_entry *e)
{
	e->lprev->lnext = e->lnext;
	e->lnext->lprev = e->lprev;
}

static void lru_push(struct rc_array *a, struct rc_csum_entry *e)
{
	struct rc_csum_entry *h = lru(a);

	e->lnext = h->lnext;
	e->lprev = h;
	h->lnext->lprev = e;
	h->lnext = e;
}

static struct rc_csum_entry **bucket(struct rc_array *a, int slot,
				     uint64_t index)
{
	uint64_t h = (index * RC_MAX_MEMBERS + (uint64_t)slot) *
		     0x9e3779b97f4a7c15ull;

	return &a->cc->tab[(h >> 40) % CSUM_BUCKETS];
}

static void entry_free(struct rc_csum_entry *e)
{
	free(e->unknown);
	free(e);
}

static void hash_remove(struct rc_array *a, struct rc_csum_entry *e)
{
	struct rc_csum_entry **pp = bucket(a, e->slot, e->index);

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	lru_unlink(e);
	a->cc->count--;
}

void rc_csum_fini(struct rc_array *a)
{
	struct rc_csum_entry *h, *e, *next;

	if (!a->cc)
		return;
	h = lru(a);
	for (e = h->lnext; e != h; e = next) {
		next = e->lnext;
		entry_free(e);
	}
	free(a->cc);
	a->cc = NULL;
}

/* Drops clean entries from the cold end until under the limit. */
static void evict(struct rc_array *a)
{
	struct rc_csum_entry *h = lru(a), *e = h->lprev, *prev;

	while (a->cc->count > a->cc->max && e != h) {
		prev = e->lprev;
		if (!e->dirty && !e->unknown) {
			hash_remove(a, e);
			entry_free(e);
		}
		e = prev;
	}
}

static void mark_all_unknown(struct rc_csum_entry *e)
{
	size_t words = RC_DIV_ROUND_UP(RC_CSUM_PER_BLOCK, 64);

	e->unknown = calloc(words, sizeof(uint64_t));
	if (!e->unknown)
		abort();  /* 64 bytes: out of memory here is not recoverable */
	memset(e->unknown, 0xff, words * sizeof(uint64_t));
	e->nunknown = RC_CSUM_PER_BLOCK;
	memset(e->block, 0, sizeof(e->block));
}

static uint64_t table_block(const struct rc_array *a, uint64_t index)
{
	return a->sb.csum_offset + index;
}

/* Caller holds csum_lock. */
static struct rc_csum_entry *entry_get(struct rc_array *a, int slot,
				       uint64_t index)
{
	struct rc_csum_entry **b = bucket(a, slot, index);
	struct rc_csum_entry *e;
	int ret;

	for (e = *b; e; e = e->hnext) {
		if (e->slot == slot && e->index == index) {
			lru_unlink(e);
			lru_push(a, e);
			return e;
		}
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->slot = slot;
	e->index = index;
	ret = rc_io_member_read(a, slot, table_block(a, index), 1, e->block);
	if (ret < 0 || !rc_csum_block_ok(e->block, table_block(a, index))) {
		if (ret == 0)
			atomic_fetch_add(&a->m[slot].csum_errors, 1);
		mark_all_unknown(e);
	}
	e->hnext = *b;
	*b = e;
	lru_push(a, e);
	a->cc->count++;
	evict(a);
	return e;
}

static bool entry_is_unknown(const struct rc_csum_entry *e, uint32_t j)
{
	return e->unknown && (e->unknown[j / 64] >> (j % 64) & 1);
}

int rc_csum_lookup(struct rc_array *a, int slot, uint64_t mblock,
		   uint64_t *csum)
{
	struct rc_csum_entry *e;
	uint32_t j = mblock % RC_CSUM_PER_BLOCK;
	int ret = 0;

	pthread_mutex_lock(&a->csum_lock);
	e = entry_get(a, slot, mblock / RC_CSUM_PER_BLOCK);
	if (!e)
		ret = -ENOMEM;
	else if (entry_is_unknown(e, j))
		ret = -EIO;
	else
		*csum = rc_csum_get(e->block, j);
	pthread_mutex_unlock(&a->csum_lock);
	return ret;
}

/* Caller holds csum_lock. */
static void entry_mark_dirty(struct rc_array *a, struct rc_csum_entry *e)
{
	if (e->dirty)
		return;
	e->dirty = true;
	e->dnext = a->cc->dirty[e->slot];
	a->cc->dirty[e->slot] = e;
}

int rc_csum_update(struct rc_array *a, int slot, uint64_t mblock,
		   uint64_t csum)
{
	struct rc_csum_entry *e;
	uint32_t j = mblock % RC_CSUM_PER_BLOCK;
	int ret = 0;

	pthread_mutex_lock(&a->csum_lock);
	e = entry_get(a, slot, mblock / RC_CSUM_PER_BLOCK);
	if (!e) {
		ret = -ENOMEM;
		goto out;
	}
	if (entry_is_unknown(e, j)) {
		e->unknown[j / 64] &= ~(1ull << (j % 64));
		if (--e->nunknown == 0) {
			free(e->unknown);
			e->unknown = NULL;
		}
		entry_mark_dirty(a, e);
	}
	if (rc_csum_get(e->block, j) != csum) {
		rc_csum_set(e->block, j, csum);
		entry_mark_dirty(a, e);
	}
out:
	pthread_mutex_unlock(&a->csum_lock);
	return ret;
}

/*
 * true when data matches its entry.  An entry of 0 (never written) matches
 * anything and sets *unwritten: the caller must use zeros instead.
 */
bool rc_csum_verify(struct rc_array *a, int slot, uint64_t mblock,
		    const void *data, bool *unwritten)
{
	uint64_t want;

	*unwritten = false;
	if (rc_csum_lookup(a, slot, mblock, &want) < 0)
		return false;
	if (want == RC_CSUM_UNWRITTEN) {
		*unwritten = true;
		return true;
	}
	return rc_block_csum(data, rc_abs(a, mblock)) == want;
}

int rc_csum_take_dirty(struct rc_array *a, int slot, uint8_t **blocks,
		       uint64_t **targets, uint32_t *n)
{
	struct rc_csum_entry *e, **pp;
	uint32_t count = 0, i = 0;
	int ret = 0;

	*blocks = NULL;
	*targets = NULL;
	pthread_mutex_lock(&a->csum_lock);
	for (e = a->cc->dirty[slot]; e; e = e->dnext)
		count += !e->unknown;
	if (count) {
		*blocks = malloc((size_t)count * RC_BLOCK_SIZE);
		*targets = malloc(count * sizeof(uint64_t));
		if (!*blocks || !*targets) {
			free(*blocks);
			free(*targets);
			*blocks = NULL;
			*targets = NULL;
			ret = -ENOMEM;
			goto out;
		}
	}
	/* Half-known blocks stay on the list until every entry is known. */
	for (pp = &a->cc->dirty[slot]; (e = *pp);) {
		if (e->unknown) {
			pp = &e->dnext;
			continue;
		}
		rc_csum_block_seal(e->block, table_block(a, e->index));
		memcpy(*blocks + (size_t)i * RC_BLOCK_SIZE, e->block,
		       RC_BLOCK_SIZE);
		(*targets)[i++] = table_block(a, e->index);
		e->dirty = false;
		*pp = e->dnext;
	}
out:
	*n = i;
	pthread_mutex_unlock(&a->csum_lock);
	return ret;
}

/* Forgets a slot's tables (its device was replaced). */
void rc_csum_drop_slot(struct rc_array *a, int slot)
{
	struct rc_csum_entry *h, *e, *next;

	pthread_mutex_lock(&a->csum_lock);
	a->cc->dirty[slot] = NULL;
	h = lru(a);
	for (e = h->lnext; e != h; e = next) {
		next = e->lnext;
		if (e->slot == slot) {
			hash_remove(a, e);
			entry_free(e);
		}
	}
	pthread_mutex_unlock(&a->csum_lock);
}
