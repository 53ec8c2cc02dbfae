/*
 * scrub: verify every stripe of the array - every block against its
 * checksum, every row's parity (or copies) against its data - and, when
 * asked, repair what is wrong.
 *
 * With checksums a bad block is named exactly and rebuilt from the
 * verified columns.  A row whose blocks all pass their checksums but whose
 * parity disagrees (a lost write of a block together with its table entry)
 * cannot say which column is wrong; the data columns are kept and parity is
 * recomputed, as md's "repair" does.  Each stripe is handled under its lock,
 * so scrub runs while the array is in use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)

static bool is_mirror(const struct rc_array *a)
{
	return a->g.level == RC_RAID1 || a->g.level == RC_RAID10;
}

/* Column k of row r that disagrees with the data, or -1. */
static int row_parity_bad(struct rc_array *a, const struct rc_stripe_map *mp,
			  uint8_t **cols, uint32_t r, uint8_t *pq)
{
	void *data[RC_MAX_MEMBERS];

	if (a->nred == 0)
		return -1;
	if (is_mirror(a)) {
		for (uint32_t c = 1; c < mp->ncols; c++)
			if (memcmp(BLK(cols[0], r), BLK(cols[c], r), RC_BLOCK_SIZE))
				return (int)c;
		return -1;
	}
	for (uint32_t c = 0; c < a->ndata; c++)
		data[c] = BLK(cols[c], r);
	if (a->nred == 2)
		a->par->gen_pq((int)a->ndata, RC_BLOCK_SIZE, data, pq,
			       pq + RC_BLOCK_SIZE);
	else
		a->par->gen_p((int)a->ndata, RC_BLOCK_SIZE, data, pq);
	for (uint32_t k = 0; k < a->nred; k++)
		if (memcmp(pq + k * RC_BLOCK_SIZE, BLK(cols[a->ndata + k], r),
			   RC_BLOCK_SIZE))
			return (int)(a->ndata + k);
	return -1;
}

/* Rewrites every redundant column of row r from the data. */
static void row_parity_fix(struct rc_array *a, const struct rc_stripe_map *mp,
			   uint8_t **cols, uint32_t r, uint8_t *pq)
{
	for (uint32_t c = a->ndata; c < mp->ncols; c++) {
		const uint8_t *src = is_mirror(a) ? BLK(cols[0], r) :
				     pq + (c - a->ndata) * RC_BLOCK_SIZE;

		if (rc_member_usable(a, (int)mp->col[c].member, mp->stripe))
			rc_block_repair(a, &mp->col[c], r, src);
	}
}

static int scrub_stripe(struct rc_array *a, uint64_t s, bool repair,
			struct rc_scrub_report *rep, uint8_t **cols,
			uint8_t *pq)
{
	uint32_t nr = a->g.chunk_blocks;
	struct rc_stripe_map map;
	struct rc_stripe *st;
	uint8_t **state;
	bool mismatch = false;
	int ret = 0;

	rc_geom_stripe(&a->g, s, &map);
	state = rc_state_alloc(map.ncols, nr);
	if (!state)
		return -ENOMEM;
	st = rc_stripe_lock(a, s);
	rc_stripe_load(a, &map, 0, nr, cols, state);
	for (uint32_t r = 0; r < nr; r++) {
		uint32_t bad = 0, absent = 0;

		for (uint32_t c = 0; c < map.ncols; c++) {
			bad += state[c][r] == BLK_BAD;
			absent += state[c][r] == BLK_ABSENT;
		}
		rep->csum_errors += bad;
		if (!rc_row_recover(a, &map, cols, r, state)) {
			rep->unrecoverable += bad;
			atomic_fetch_add(&a->unrecoverable, 1);
			continue;
		}
		for (uint32_t c = 0; c < map.ncols && repair && !a->rdonly; c++) {
			if (state[c][r] == BLK_BAD) {
				rc_block_repair(a, &map.col[c], r, BLK(cols[c], r));
				rep->repaired++;
			}
		}
		if (bad || absent || row_parity_bad(a, &map, cols, r, pq) < 0)
			continue;
		mismatch = true;
		if (repair && !a->rdonly) {
			row_parity_fix(a, &map, cols, r, pq);
			rep->repaired++;
		}
	}
	rep->parity_mismatches += mismatch;
	rc_stripe_unlock(a, st);
	rc_state_free(state, map.ncols);
	return ret;
}

int rc_scrub(struct rc_array *a, bool repair, struct rc_scrub_report *rep,
	     void (*progress)(void *ctx, uint64_t done, uint64_t total),
	     void *ctx)
{
	uint8_t *cols[RC_MAX_MEMBERS] = { 0 }, *pq = NULL;
	size_t chunk = (size_t)a->g.chunk_blocks * RC_BLOCK_SIZE;
	int ret = 0;

	memset(rep, 0, sizeof(*rep));
	pq = rc_buf_alloc(2 * RC_BLOCK_SIZE);
	for (uint32_t c = 0; c < a->g.members && pq; c++)
		if (!(cols[c] = rc_buf_alloc(chunk)))
			ret = -ENOMEM;
	if (!pq)
		ret = -ENOMEM;
	for (uint64_t s = 0; s < a->stripes && ret == 0; s++) {
		ret = scrub_stripe(a, s, repair, rep, cols, pq);
		rep->stripes++;
		if (progress && (s % 256 == 255 || s + 1 == a->stripes))
			progress(ctx, s + 1, a->stripes);
	}
	/* Table entries fixed by repairs go out with the next commit. */
	if (ret == 0 && repair && !a->rdonly)
		ret = rc_commit_tables(a);
	for (uint32_t c = 0; c < RC_MAX_MEMBERS; c++)
		free(cols[c]);
	free(pq);
	return ret;
}
