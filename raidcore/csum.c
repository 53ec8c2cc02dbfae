/*
 * csum: the per-member checksum tables, cached in memory.
 *
 * Usage: rc_csum_entry() on reads (a checksum, "never written", or nothing
 * known), rc_csum_update() when a commit computes a new block or a repair
 * re-derives an entry, rc_csum_take_dirty() when the commit journals the
 * table blocks it changed.  All under csum_lock, which is the innermost
 * lock (see array.h) and is not held while a missing table block is read
 * from its member (entry_get).
 *
 * The cache is a common/hcache.h hash keyed by (slot, table block) with its
 * LRU; beyond CSUM_MAX_BLOCKS the coldest clean, fully known blocks go.
 *
 * A table block is believed only when its seal holds (ondisk.h: seeded
 * with the array's and the member's identity and the block's place, never
 * 0), so zeros, garbage or a misplaced block are never taken for "nothing
 * written here".  One that fails (torn, corrupt, unreadable, zeroed) is
 * kept with every entry of the data region it covers marked unknown: the
 * read path verifies those blocks against redundancy instead and records
 * what it finds (verify.c).  Such a block is written back only once every
 * entry is known again, so a half-known table never reaches the media:
 * the recovery thread re-derives such blocks soon after they are found
 * (heal.c takes them with rc_csum_unknown_take), a scrub re-derives all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

struct rc_csum_entry {
	struct hc_node node;                    /* key: csum_key(slot, index) */
	struct rc_csum_entry *dnext;            /* its slot's dirty list */
	int slot;
	uint64_t index;                         /* table block number */
	bool dirty;                             /* on the dirty list */
	bool heal_taken;                        /* handed to heal.c once */
	bool read_failed;                       /* its media read failed:
						   credited when written
						   again (read_fixed) */
	bool seal_failed;                       /* read, it failed its seal:
						   corrected once whole */
	bool credit;                            /* read_fixed: credit the
						   write that takes it home */
	uint8_t fixes;                          /* read_fixed since it was
						   cached */
	uint32_t nunknown;
	uint64_t *unknown;                      /* bitmap, NULL when all known */
	uint8_t block[RC_BLOCK_SIZE];
};

#define CSUM_BUCKETS 4096
#define CSUM_MAX_BLOCKS 16384                   /* 64 MiB of tables */
#define CSUM_REMOVAL_BUCKETS 256                /* removal_count: 8 bits */

/* Every entry is on the LRU (nobody holds one past csum_lock), so the LRU
 * orders them all, least recently used first. */
struct rc_csum_cache {
	struct hcache hc;
	uint32_t max;
	/* Per slot, the entries with dirty set, so a commit finds them
	 * without walking the whole cache. */
	struct rc_csum_entry *dirty[RC_MAX_MEMBERS];
	/* Entries taken out of the cache so far (entry_remove), counted by
	 * removal_bucket of their key: a table block read without csum_lock
	 * is put in only if none of its bucket went while it was read
	 * (entry_get).  Buckets, so that evictions of other blocks, which
	 * every insert into a full cache makes, rarely send a read back. */
	uint64_t removals[CSUM_REMOVAL_BUCKETS];
};

static uint64_t *removal_count(struct rc_csum_cache *cc, uint64_t key)
{
	/* Fibonacci hashing: keys of one slot differ in their high part */
	return &cc->removals[(key * 0x9e3779b97f4a7c15ull) >> 56];
}

static uint64_t csum_key(int slot, uint64_t index)
{
	return index * RC_MAX_MEMBERS + (uint64_t)slot;
}

static struct rc_csum_entry *entry_of(struct hc_node *n)
{
	return n ? hc_entry(n, struct rc_csum_entry, node) : NULL;
}

int rc_csum_init(struct rc_array *a)
{
	a->cc = calloc(1, sizeof(*a->cc));
	if (!a->cc)
		return -ENOMEM;
	if (hc_init(&a->cc->hc, CSUM_BUCKETS) < 0) {
		free(a->cc);
		a->cc = NULL;
		return -ENOMEM;
	}
	a->cc->max = CSUM_MAX_BLOCKS;
	return 0;
}

static void entry_free(struct rc_csum_entry *e)
{
	free(e->unknown);
	free(e);
}

static void entry_remove(struct rc_array *a, struct rc_csum_entry *e)
{
	if (e->credit)          /* never written home: nothing to credit */
		atomic_fetch_sub(&a->tables_credit_queued, 1);
	(*removal_count(a->cc, csum_key(e->slot, e->index)))++;
	hc_remove(&a->cc->hc, &e->node);
	entry_free(e);
}

static void entry_node_free(struct hc_node *n, void *arg)
{
	entry_free(entry_of(n));
}

void rc_csum_fini(struct rc_array *a)
{
	if (!a->cc)
		return;
	hc_fini(&a->cc->hc, entry_node_free, NULL);
	free(a->cc);
	a->cc = NULL;
}

/* Drops clean entries from the cold end until under the limit. */
static void evict(struct rc_array *a)
{
	struct hc_node *n = hc_lru_oldest(&a->cc->hc), *next;
	struct rc_csum_entry *e;

	while (a->cc->hc.count > a->cc->max && n) {
		next = hc_lru_next(n);
		e = entry_of(n);
		if (!e->dirty && !e->unknown)
			entry_remove(a, e);
		n = next;
	}
}

/* Every entry that stands for a block some stripe uses becomes unknown;
 * the others (past the end of the data region, or the unused tail of RAID
 * 10 with an odd member count) are 0 by definition. */
static void mark_all_unknown(struct rc_array *a, int slot,
			     struct rc_csum_entry *e)
{
	size_t words = RC_DIV_ROUND_UP(RC_CSUM_PER_BLOCK, 64);
	uint64_t first = e->index * RC_CSUM_PER_BLOCK, stripe;
	uint32_t col;

	e->unknown = calloc(words, sizeof(uint64_t));
	if (!e->unknown)
		abort();  /* 64 bytes: out of memory here is not recoverable */
	e->nunknown = 0;
	for (uint32_t j = 0; j < RC_CSUM_PER_BLOCK &&
	     first + j < a->sb.member_blocks; j++) {
		if (rc_geom_reverse(&a->g, (uint32_t)slot, first + j, &stripe,
				    &col) < 0)
			continue;
		e->unknown[j / 64] |= 1ull << (j % 64);
		e->nunknown++;
	}
	memset(e->block, 0, sizeof(e->block));
	if (e->nunknown == 0) {
		free(e->unknown);
		e->unknown = NULL;
	}
}

uint64_t rc_csum_seed(const struct rc_array *a, int slot)
{
	return rc_table_seed(a->sb.array_uuid, a->m[slot].uuid);
}

bool rc_table_block_read_ok(struct rc_dev *dev, const uint8_t *array_uuid,
			    const uint8_t *member_uuid, uint64_t tb,
			    uint8_t *blk)
{
	return (tb + 1) * RC_BLOCK_SIZE <= dev->size &&
	       rc_dev_read(dev, blk, RC_BLOCK_SIZE, tb * RC_BLOCK_SIZE) == 0 &&
	       rc_csum_block_ok(blk, rc_table_seed(array_uuid, member_uuid),
				tb);
}

static uint64_t table_block(const struct rc_array *a, uint64_t index)
{
	return a->sb.csum_offset + index;
}

static void entry_mark_dirty(struct rc_array *a, struct rc_csum_entry *e);

/*
 * Caller holds csum_lock: e, whose media read failed, is whole again in
 * memory (every entry known) and goes home at the next commit, which
 * rewrites the unreadable sector, as md rewrites a sector that failed to
 * read.  That write, once it succeeded, corrects the error
 * (rc_csum_rewrite_done: rc_member_note_corrected, counted as
 * repaired).  Before, a table block's read error was never credited, and
 * pending sectors under a member's table faulted it at RAID 6 and said
 * it FAILING at RAID 5 though the rewrite held (a tester's find, W4);
 * credited here at once, a member that vanished had writes that all
 * failed said "repaired" (V4).  The checkpoint's read-back of table
 * blocks finds a rewrite that does not hold.
 */
static void read_fixed(struct rc_array *a, struct rc_csum_entry *e)
{
	e->read_failed = false;
	entry_mark_dirty(a, e);
	/* unreadable again after it was written: the rewrite did not hold
	 * (a sector the drive cannot remap), and is not credited again */
	if (e->fixes) {
		rc_log_block(a, e->slot, table_block(a, e->index), "checksum "
			     "table block unreadable again after it was "
			     "written: the rewrite did not hold");
		return;
	}
	e->fixes++;
	e->credit = true;
	atomic_fetch_add(&a->tables_credit_queued, 1);
}

void rc_csum_rewrite_done(struct rc_array *a, int slot, uint64_t block)
{
	atomic_fetch_add(&a->m[slot].repaired, 1);
	atomic_fetch_add(&a->tables_rewritten, 1);
	rc_member_note_corrected(a, slot);
	rc_log_block(a, slot, block, "checksum table block unreadable on the "
		     "media: written again from its known entries");
}

/*
 * Caller holds csum_lock, which is let go while a missing block is read
 * from its member: a disk's seek must not stop every other thread's
 * lookups (a table miss is a random read's usual case on a member larger
 * than the cache covers).  Two threads may read the same block; the
 * second to come back takes the first's entry.  A block read while an
 * entry of its removal bucket left the cache is read again: that entry
 * may have been this one, dirty, written home and evicted in the
 * meantime, so the copy read before it could be older than the media.
 * Every table write goes from a cached entry, so with no such removal the
 * media cannot have changed.
 */
static struct rc_csum_entry *entry_get(struct rc_array *a, int slot,
				       uint64_t index)
{
	uint64_t key = csum_key(slot, index), *gone, removals;
	struct rc_csum_entry *e, *found;
	int ret;

	e = entry_of(hc_find(&a->cc->hc, key));
	if (e) {
		hc_lru_add(&a->cc->hc, &e->node);
		return e;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->slot = slot;
	e->index = index;
	gone = removal_count(a->cc, key);
	do {
		removals = *gone;
		pthread_mutex_unlock(&a->csum_lock);
		ret = rc_io_member_read(a, slot, table_block(a, index), 1,
					e->block);
		pthread_mutex_lock(&a->csum_lock);
		found = entry_of(hc_find(&a->cc->hc, key));
	} while (!found && *gone != removals);
	if (found) {
		free(e);
		hc_lru_add(&a->cc->hc, &found->node);
		return found;
	}
	if (ret < 0 || !rc_csum_block_ok(e->block, rc_csum_seed(a, slot),
					 table_block(a, index))) {
		if (ret == 0) {
			atomic_fetch_add(&a->m[slot].csum_errors, 1);
			rc_member_note_error(a, slot, RC_ERR_CSUM);
		}
		rc_log_block(a, slot, table_block(a, index),
			     ret < 0 ? "checksum table block unreadable: its "
			     "blocks are verified against redundancy" :
			     "checksum table block fails its seal: its "
			     "blocks are verified against redundancy");
		mark_all_unknown(a, slot, e);
		/* A slot with no device has nothing to heal onto. */
		if (e->unknown && a->m[slot].dev)
			atomic_store(&a->tables_to_heal, true);
		/* a media error, not a suspended array or a device gone */
		e->read_failed = ret == -EIO && !rc_array_suspended(a);
		/* damage read as it is: once its entries are all known again
		 * from the rows, the checksum error counted above is
		 * corrected (a RAID 6 member whose every table block was
		 * garbage, its blocks all intact, was faulted for them: a
		 * tester's find); the block goes home as any dirty one, a
		 * write that fails faults the member, and the checkpoint
		 * reads the last table block back */
		e->seal_failed = ret == 0;
		if (e->read_failed)
			atomic_fetch_add(&a->tables_unreadable, 1);
	}
	hc_insert(&a->cc->hc, &e->node, key);
	if (e->read_failed && !e->unknown && !a->rdonly)
		read_fixed(a, e);
	hc_lru_add(&a->cc->hc, &e->node);
	evict(a);
	return e;
}

static bool entry_is_unknown(const struct rc_csum_entry *e, uint32_t j)
{
	return e->unknown && (e->unknown[j / 64] >> (j % 64) & 1);
}

int rc_csum_entry(struct rc_array *a, int slot, uint64_t mblock,
		  uint64_t *csum)
{
	struct rc_csum_entry *e;
	uint32_t j = mblock % RC_CSUM_PER_BLOCK;
	int ret;

	pthread_mutex_lock(&a->csum_lock);
	e = entry_get(a, slot, mblock / RC_CSUM_PER_BLOCK);
	if (!e) {
		ret = -ENOMEM;
	} else if (entry_is_unknown(e, j)) {
		ret = RC_ENTRY_UNKNOWN;
	} else {
		*csum = rc_csum_get(e->block, j);
		ret = *csum == RC_CSUM_UNWRITTEN ? RC_ENTRY_ZERO : RC_ENTRY_SUM;
	}
	pthread_mutex_unlock(&a->csum_lock);
	return ret;
}

/* Table block tblk of slot on dev holds entry want for mblock. */
static bool table_reads_back(struct rc_array *a, int slot, struct rc_dev *dev,
			     uint64_t mblock, uint64_t want, uint8_t *blk)
{
	uint64_t tblk = table_block(a, mblock / RC_CSUM_PER_BLOCK);

	return rc_dev_read(dev, blk, RC_BLOCK_SIZE, tblk * RC_BLOCK_SIZE) == 0 &&
	       rc_csum_block_ok(blk, rc_csum_seed(a, slot), tblk) &&
	       rc_csum_get(blk, (uint32_t)(mblock % RC_CSUM_PER_BLOCK)) == want;
}

uint64_t rc_csum_verify_blocks(struct rc_array *a, int slot,
			       struct rc_dev *dev,
			       const struct rc_sample *sample, bool tables,
			       uint8_t *blk, uint64_t *seen)
{
	uint64_t n = sample->offered < RC_SAMPLES ? sample->offered : RC_SAMPLES;
	uint64_t bad = 0;

	*seen = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t mb = sample->mb[i], want;
		int kind = rc_csum_entry(a, slot, mb, &want);

		/* the slot's own table, reloaded from dev and failing its
		 * seal: dev lost the table's writes */
		if (tables && kind == RC_ENTRY_UNKNOWN) {
			(*seen)++;
			bad++;
			continue;
		}
		if (kind != RC_ENTRY_SUM || want == RC_CSUM_POISON)
			continue;
		(*seen)++;
		if (rc_dev_read(dev, blk, RC_BLOCK_SIZE,
				rc_abs(a, mb) * RC_BLOCK_SIZE) < 0 ||
		    rc_block_csum(blk, rc_abs(a, mb)) != want ||
		    (tables && !table_reads_back(a, slot, dev, mb, want, blk)))
			bad++;
	}
	return bad;
}

/*
 * Table block idx of slot cannot be read from the media (its read error
 * counted on the member by the read, and in tables_unreadable for the
 * next scrub's report).  Cached, every entry known: with repair it goes
 * home again from the copy (read_fixed), without it the copy is used.
 * Cached otherwise: marked, and credited when it is whole and written.
 * Not cached: it is loaded, which finds that as any load does (entries
 * unknown, a heal set; credited when the heal has made it whole and it
 * is written).
 */
static void table_unreadable(struct rc_array *a, int slot, uint64_t idx,
			     bool repair)
{
	struct rc_csum_entry *e;

	pthread_mutex_lock(&a->csum_lock);
	e = entry_of(hc_find(&a->cc->hc, csum_key(slot, idx)));
	if (!e) {
		entry_get(a, slot, idx);        /* counts it, as a load */
	} else {
		atomic_fetch_add(&a->tables_unreadable, 1);
		if (e->unknown || e->dirty || repair)
			e->read_failed = true;
		if (!e->unknown && repair)
			read_fixed(a, e);
	}
	pthread_mutex_unlock(&a->csum_lock);
}

/*
 * Table block idx of slot fails its seal on the media.  Not cached: it
 * is loaded, which finds that as any load does (entries unknown, a heal
 * set).  Cached, clean and fully known: the media was damaged under the
 * running array - counted on the member, and with repair written home
 * again from the copy, which was verified when it was loaded.  Cached
 * unknown (already found, a heal pending) or dirty (to be written
 * anyway): nothing more.  Returns whether it was counted here.
 */
static bool table_damaged(struct rc_array *a, int slot, uint64_t idx,
			  bool repair)
{
	struct rc_csum_entry *e;
	bool counted = false;

	pthread_mutex_lock(&a->csum_lock);
	e = entry_of(hc_find(&a->cc->hc, csum_key(slot, idx)));
	if (!e) {
		entry_get(a, slot, idx);
	} else if (!e->unknown && !e->dirty) {
		atomic_fetch_add(&a->m[slot].csum_errors, 1);
		rc_member_note_error(a, slot, RC_ERR_CSUM);
		rc_log_block(a, slot, table_block(a, idx), repair ?
			     "checksum table block fails its seal on the "
			     "media (damaged while the array ran): written "
			     "again from the copy in memory" :
			     "checksum table block fails its seal on the "
			     "media (damaged while the array ran): the copy "
			     "in memory is used; a repairing scrub writes it "
			     "again");
		if (repair)
			entry_mark_dirty(a, e);
		counted = true;
	}
	pthread_mutex_unlock(&a->csum_lock);
	return counted;
}

/* What the cache holds of table block idx of slot, for the media check. */
enum table_state {
	TABLE_ABSENT,           /* not cached */
	TABLE_UNREADABLE,       /* cached from a read that failed, not whole */
	TABLE_UNKNOWN,          /* cached, failed its seal, not whole */
	TABLE_DIRTY,            /* goes home at the next commit anyway */
	TABLE_CLEAN,            /* whole, as on the media */
};

static enum table_state table_state(struct rc_array *a, int slot,
				    uint64_t idx)
{
	struct rc_csum_entry *e;
	enum table_state st;

	pthread_mutex_lock(&a->csum_lock);
	e = entry_of(hc_find(&a->cc->hc, csum_key(slot, idx)));
	st = !e ? TABLE_ABSENT : e->unknown && e->read_failed ?
	     TABLE_UNREADABLE : e->unknown ? TABLE_UNKNOWN :
	     e->dirty ? TABLE_DIRTY : TABLE_CLEAN;
	pthread_mutex_unlock(&a->csum_lock);
	return st;
}

uint32_t rc_csum_media_check(struct rc_array *a, int slot, uint64_t mb0,
			     uint64_t span, bool repair)
{
	/* the table blocks that begin in the span: over a pass, each once */
	uint64_t first = (mb0 + RC_CSUM_PER_BLOCK - 1) / RC_CSUM_PER_BLOCK;
	uint64_t end = (mb0 + span + RC_CSUM_PER_BLOCK - 1) / RC_CSUM_PER_BLOCK;
	uint32_t n = end > first ? (uint32_t)(end - first) : 0, damaged = 0;
	uint8_t *buf = n ? rc_buf_alloc((size_t)n * RC_BLOCK_SIZE) : NULL;
	uint64_t seed = rc_csum_seed(a, slot);
	bool batch;

	if (!buf)
		goto out;
	/* not counted: what fails is looked at block by block below, and
	 * each unreadable block counted once (a failed batch returned 0
	 * and its errors were never credited: a tester's find, W4) */
	batch = rc_io_member_read_run(a, slot, table_block(a, first), n,
				      buf) == 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t at = table_block(a, first + i);
		uint8_t *b = buf + (size_t)i * RC_BLOCK_SIZE;
		int rd;

		if (batch && rc_csum_block_ok(b, seed, at))
			continue;
		switch (table_state(a, slot, first + i)) {
		case TABLE_UNREADABLE:  /* found and counted; the heal fixes it */
		case TABLE_UNKNOWN:     /* found, counted as damaged */
		case TABLE_DIRTY:       /* written home anyway */
			continue;
		case TABLE_ABSENT:      /* loaded: its read counts, once */
			table_unreadable(a, slot, first + i, repair);
			continue;
		case TABLE_CLEAN:
			break;
		}
		/* once more alone: a write home may have been under way */
		rd = rc_io_member_read(a, slot, at, 1, b);
		if (rd == 0 && rc_csum_block_ok(b, seed, at))
			continue;
		if (rd < 0)
			table_unreadable(a, slot, first + i, repair);
		else
			damaged += table_damaged(a, slot, first + i, repair);
	}
out:
	free(buf);
	return damaged;
}

static void entry_mark_dirty(struct rc_array *a, struct rc_csum_entry *e)
{
	if (e->dirty)
		return;
	e->dirty = true;
	e->dnext = a->cc->dirty[e->slot];
	a->cc->dirty[e->slot] = e;
}

/* Caller holds csum_lock: table block index of slot changes; an online
 * replacement writing the slot's table onto its device (replace.c) wants
 * to know. */
static void replace_touch(struct rc_array *a, int slot, uint64_t index)
{
	if (a->repl.touched && slot == a->repl.slot)
		a->repl.touched[index / 64] |= 1ull << (index % 64);
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
	/* after entry_get, which may let csum_lock go: the change below
	 * and the mark are seen together */
	replace_touch(a, slot, mblock / RC_CSUM_PER_BLOCK);
	if (entry_is_unknown(e, j)) {
		e->unknown[j / 64] &= ~(1ull << (j % 64));
		if (--e->nunknown == 0) {
			free(e->unknown);
			e->unknown = NULL;
		}
		entry_mark_dirty(a, e);
		if (!e->unknown && e->read_failed)
			read_fixed(a, e);
		if (!e->unknown && e->seal_failed) {
			e->seal_failed = false;
			rc_member_note_corrected(a, slot);
		}
	}
	if (rc_csum_get(e->block, j) != csum) {
		rc_csum_set(e->block, j, csum);
		entry_mark_dirty(a, e);
	}
out:
	pthread_mutex_unlock(&a->csum_lock);
	return ret;
}

int rc_csum_take_dirty(struct rc_array *a, int slot, uint8_t **blocks,
		       uint64_t **targets, bool **credit, uint32_t *n)
{
	struct rc_csum_entry *e, **pp;
	uint32_t count = 0, i = 0;
	int ret = 0;

	*blocks = NULL;
	*targets = NULL;
	if (credit)
		*credit = NULL;
	pthread_mutex_lock(&a->csum_lock);
	for (e = a->cc->dirty[slot]; e; e = e->dnext)
		count += !e->unknown;
	if (count) {
		*blocks = malloc((size_t)count * RC_BLOCK_SIZE);
		*targets = malloc(count * sizeof(uint64_t));
		if (credit)
			*credit = calloc(count, sizeof(bool));
		if (!*blocks || !*targets || (credit && !*credit)) {
			free(*blocks);
			free(*targets);
			*blocks = NULL;
			*targets = NULL;
			if (credit) {
				free(*credit);
				*credit = NULL;
			}
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
		rc_csum_block_seal(e->block, rc_csum_seed(a, slot),
				   table_block(a, e->index));
		memcpy(*blocks + (size_t)i * RC_BLOCK_SIZE, e->block,
		       RC_BLOCK_SIZE);
		if (credit)
			(*credit)[i] = e->credit;
		if (e->credit)
			atomic_fetch_sub(&a->tables_credit_queued, 1);
		e->credit = false;
		(*targets)[i++] = table_block(a, e->index);
		e->dirty = false;
		*pp = e->dnext;
	}
out:
	*n = i;
	pthread_mutex_unlock(&a->csum_lock);
	return ret;
}

void rc_csum_forget(struct rc_array *a, int slot, uint64_t block)
{
	struct rc_csum_entry *e;

	pthread_mutex_lock(&a->csum_lock);
	e = entry_of(hc_find(&a->cc->hc,
			     csum_key(slot, block - a->sb.csum_offset)));
	if (e && e->dirty) {
		struct rc_csum_entry **pp = &a->cc->dirty[slot];

		while (*pp != e)
			pp = &(*pp)->dnext;
		*pp = e->dnext;
	}
	if (e)
		entry_remove(a, e);
	pthread_mutex_unlock(&a->csum_lock);
}

uint32_t rc_csum_unknown_take(struct rc_array *a, int *slots,
			      uint64_t *indexes, uint32_t max)
{
	struct hc_node *n;
	uint32_t count = 0;

	pthread_mutex_lock(&a->csum_lock);
	atomic_store(&a->tables_to_heal, false);
	for (n = hc_lru_oldest(&a->cc->hc); n; n = hc_lru_next(n)) {
		struct rc_csum_entry *e = entry_of(n);

		if (!e->unknown || e->heal_taken)
			continue;
		if (count == max) {
			atomic_store(&a->tables_to_heal, true);
			break;
		}
		e->heal_taken = true;
		slots[count] = e->slot;
		indexes[count++] = e->index;
	}
	pthread_mutex_unlock(&a->csum_lock);
	return count;
}

uint64_t rc_csum_unknown_blocks(struct rc_array *a)
{
	struct hc_node *n;
	uint64_t count = 0;

	pthread_mutex_lock(&a->csum_lock);
	for (n = hc_lru_oldest(&a->cc->hc); n; n = hc_lru_next(n))
		count += entry_of(n)->unknown != NULL;
	pthread_mutex_unlock(&a->csum_lock);
	return count;
}

/* Forgets a slot's tables (its device was replaced). */
void rc_csum_drop_slot(struct rc_array *a, int slot)
{
	struct hc_node *n, *next;

	pthread_mutex_lock(&a->csum_lock);
	a->cc->dirty[slot] = NULL;
	/* a read of the old device's may be out: every bucket moves */
	for (int i = 0; i < CSUM_REMOVAL_BUCKETS; i++)
		a->cc->removals[i]++;
	for (n = hc_lru_oldest(&a->cc->hc); n; n = next) {
		next = hc_lru_next(n);
		if (entry_of(n)->slot == slot)
			entry_remove(a, entry_of(n));
	}
	pthread_mutex_unlock(&a->csum_lock);
}

int rc_csum_tables_format(uint64_t seed, uint64_t first, uint64_t count,
			  int (*put)(void *ctx, uint64_t block, uint32_t n,
				     const void *buf),
			  void *ctx)
{
	enum { BATCH = 256 };
	uint8_t *buf = rc_buf_alloc((size_t)BATCH * RC_BLOCK_SIZE);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (uint64_t b = 0; b < count && ret == 0; b += BATCH) {
		uint32_t n = count - b < BATCH ? (uint32_t)(count - b) : BATCH;

		for (uint32_t i = 0; i < n; i++)
			rc_csum_block_empty(buf + (size_t)i * RC_BLOCK_SIZE, seed,
					    first + b + i);
		ret = put(ctx, first + b, n, buf);
	}
	free(buf);
	return ret;
}
