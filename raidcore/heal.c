/*
 * heal: checksum table blocks found failing their seal while the array
 * runs are re-derived from redundancy, soon, not at the next fsck.
 *
 * Usage: the recovery thread calls rc_tables_heal() whenever it wakes and
 * tables_to_heal is set (csum.c sets it when a table block it loads fails
 * its seal or cannot be read).  For each such block the stripes holding
 * the member blocks it covers are scrubbed with repair: each block that
 * verifies against redundancy gets its entry back (verify.c's rules: a
 * block whose media and reconstruction agree), one that does not is
 * rewritten from redundancy, and the table block, once every entry is
 * known, goes out sealed with the next commit (rc_commit_tables).  Until
 * then every read of those blocks is verified against the row, so nothing
 * waits on the heal for correctness; without it every mount would find,
 * count and log the same damage again.
 *
 * A read that found such a block wakes the thread (rc_member_wake: the
 * flag is read under state_lock by the waiting thread, so the wake-up is
 * not lost).  A block is taken once per assembly: one whose rows cannot all be
 * resolved (a second member missing) stays unknown until fsck or a scrub.
 * Runs with no lock held; rc_scrub_stripes takes the stripe locks.
 */
#include "array.h"

#define HEAL_BATCH 16

/* The stripes holding slot's member blocks covered by table block index. */
static bool heal_span(struct rc_array *a, int slot, uint64_t index,
		      uint64_t *lo, uint64_t *hi)
{
	uint64_t first = index * RC_CSUM_PER_BLOCK, stripe;
	uint32_t col;

	*lo = UINT64_MAX;
	*hi = 0;
	for (uint32_t j = 0; j < RC_CSUM_PER_BLOCK &&
	     first + j < a->sb.member_blocks; j++) {
		if (rc_geom_reverse(&a->g, (uint32_t)slot, first + j, &stripe,
				    &col) < 0)
			continue;
		*lo = stripe < *lo ? stripe : *lo;
		*hi = stripe > *hi ? stripe : *hi;
	}
	return *lo <= *hi;
}

static void heal_one(struct rc_array *a, int slot, uint64_t index)
{
	struct rc_scrub_report rep;
	uint64_t lo, hi;
	int ret;

	if (!heal_span(a, slot, index, &lo, &hi))
		return;
	ret = rc_scrub_stripes(a, lo, hi - lo + 1, true, &rep);
	rc_log("slot %d: checksum table block %llu re-derived from stripes "
	       "%llu-%llu: %llu entries, %llu blocks rewritten, %llu "
	       "unrecoverable%s", slot,
	       (unsigned long long)(a->sb.csum_offset + index),
	       (unsigned long long)lo, (unsigned long long)hi,
	       (unsigned long long)rep.entries_fixed,
	       (unsigned long long)rep.repaired,
	       (unsigned long long)rep.unrecoverable,
	       ret < 0 ? " (stopped by an error)" : "");
}

void rc_tables_heal(struct rc_array *a)
{
	int slots[HEAL_BATCH];
	uint64_t indexes[HEAL_BATCH];
	uint32_t n;

	if (a->rdonly)
		return;
	while (atomic_load(&a->tables_to_heal)) {
		n = rc_csum_unknown_take(a, slots, indexes, HEAL_BATCH);
		for (uint32_t i = 0; i < n; i++)
			heal_one(a, slots[i], indexes[i]);
	}
}
