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
#define SCRUB_BATCH_BYTES (4u << 20)    /* per member per batch */
#define SCRUB_BATCH_MAX 1024

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

/* Where rc_scrub_list puts the lost blocks; one per call, on its stack. */
struct bad_list {
	uint64_t *bad;
	uint64_t cap;
};

/* Logical numbers of the row's data blocks that are lost. */
static void report_bad(struct rc_array *a, const struct rc_stripe_map *map,
		       struct rc_scrub_report *rep, struct bad_list *bl,
		       uint32_t r, uint8_t *const *state)
{
	for (uint32_t c = 0; c < map->ndata; c++) {
		if (state[c][r] == BLK_OK)
			continue;
		if (bl->bad && rep->nbad < bl->cap)
			bl->bad[rep->nbad] = map->stripe * a->stripe_blocks +
					     c * a->g.chunk_blocks + r;
		rep->nbad++;
	}
}

/* The row checks and repairs of one stripe whose columns are loaded. */
static void scrub_rows(struct rc_array *a, const struct rc_stripe_map *map,
		       bool repair, struct rc_scrub_report *rep,
		       struct bad_list *bl, uint8_t **cols, uint8_t **state,
		       uint8_t *pq)
{
	bool mismatch = false;

	for (uint32_t r = 0; r < a->g.chunk_blocks; r++) {
		uint32_t bad = 0, absent = 0;

		for (uint32_t c = 0; c < map->ncols; c++) {
			bad += state[c][r] == BLK_BAD;
			absent += state[c][r] == BLK_ABSENT;
		}
		rep->csum_errors += bad;
		if (!rc_row_recover(a, map, cols, r, state)) {
			rep->unrecoverable += bad;
			atomic_fetch_add(&a->unrecoverable, 1);
			report_bad(a, map, rep, bl, r, state);
			continue;
		}
		for (uint32_t c = 0; c < map->ncols && repair && !a->rdonly; c++) {
			if (state[c][r] == BLK_BAD) {
				rc_block_repair(a, &map->col[c], r, BLK(cols[c], r));
				rep->repaired++;
			}
		}
		if (bad || absent || row_parity_bad(a, map, cols, r, pq) < 0)
			continue;
		mismatch = true;
		if (repair && !a->rdonly) {
			row_parity_fix(a, map, cols, r, pq);
			rep->repaired++;
		}
	}
	rep->parity_mismatches += mismatch;
}

/* One stripe on its own (RAID 10, whose columns are not rows). */
static int scrub_stripe(struct rc_array *a, uint64_t s, bool repair,
			struct rc_scrub_report *rep, struct bad_list *bl,
			uint8_t **cols, uint8_t *pq)
{
	uint32_t nr = a->g.chunk_blocks;
	struct rc_stripe_map map;
	struct rc_stripe *st;
	uint8_t **state;

	rc_geom_stripe(&a->g, s, &map);
	state = rc_state_alloc(map.ncols, nr);
	if (!state)
		return -ENOMEM;
	st = rc_stripe_lock(a, s);
	rc_stripe_load(a, &map, 0, nr, cols, state);
	scrub_rows(a, &map, repair, rep, bl, cols, state, pq);
	rc_stripe_unlock(a, st);
	rc_state_free(state, map.ncols);
	return 0;
}

/* A member usable for every stripe of [s0, s0 + k). */
static bool usable_all(struct rc_array *a, int slot, uint64_t s0, uint64_t k)
{
	return rc_member_usable(a, slot, s0) && rc_member_usable(a, slot, s0 + k - 1);
}

/*
 * k consecutive row stripes at once: one large read per member, all
 * members in parallel, so scrub runs at the speed of reading the members.
 */
static int scrub_rows_batch(struct rc_array *a, uint64_t s0, uint64_t k,
			    bool repair, struct rc_scrub_report *rep,
			    struct bad_list *bl, uint8_t **membuf, uint8_t *pq)
{
	size_t chunk = (size_t)a->g.chunk_blocks * RC_BLOCK_SIZE;
	uint64_t span = k * a->g.chunk_blocks;
	struct rc_stripe *st[SCRUB_BATCH_MAX];
	struct rc_io io[RC_MAX_MEMBERS];
	uint8_t how[RC_MAX_MEMBERS], **state, *cols[RC_MAX_MEMBERS];
	struct rc_stripe_map map;
	int nio = 0;

	state = rc_state_alloc(a->g.members, a->g.chunk_blocks);
	if (!state)
		return -ENOMEM;
	for (uint64_t i = 0; i < k; i++)
		st[i] = rc_stripe_lock(a, s0 + i);
	for (uint32_t m = 0; m < a->g.members; m++) {
		if (!usable_all(a, (int)m, s0, k)) {
			how[m] = RC_LOADED_ABSENT;
		} else if (rc_col_is_unwritten(a, (int)m, s0 * a->g.chunk_blocks,
					       span)) {
			how[m] = RC_LOADED_ZERO;
			memset(membuf[m], 0, k * chunk);
		} else {
			how[m] = RC_LOADED_READ;
			io[nio++] = (struct rc_io){ .member = (int)m,
				.buf = membuf[m],
				.block = rc_abs(a, s0 * a->g.chunk_blocks),
				.count = (uint32_t)span };
		}
	}
	rc_io_run(a, io, nio);
	for (int i = 0; i < nio; i++)
		if (io[i].err < 0)
			how[io[i].member] = RC_LOADED_ERROR;
	for (uint64_t i = 0; i < k; i++) {
		uint8_t chow[RC_MAX_MEMBERS];

		rc_geom_stripe(&a->g, s0 + i, &map);
		for (uint32_t c = 0; c < map.ncols; c++) {
			cols[c] = membuf[map.col[c].member] + i * chunk;
			chow[c] = how[map.col[c].member];
		}
		rc_stripe_verify_loaded(a, &map, cols, state, chow);
		scrub_rows(a, &map, repair, rep, bl, cols, state, pq);
		rep->stripes++;
	}
	for (uint64_t i = k; i-- > 0;)
		rc_stripe_unlock(a, st[i]);
	rc_state_free(state, a->g.members);
	return 0;
}

int rc_scrub(struct rc_array *a, bool repair, struct rc_scrub_report *rep,
	     void (*progress)(void *ctx, uint64_t done, uint64_t total),
	     void *ctx)
{
	return rc_scrub_list(a, repair, rep, NULL, 0, progress, ctx);
}

int rc_scrub_list(struct rc_array *a, bool repair, struct rc_scrub_report *rep,
		  uint64_t *bad, uint64_t bad_cap,
		  void (*progress)(void *ctx, uint64_t done, uint64_t total),
		  void *ctx)
{
	struct bad_list bl = { .bad = bad, .cap = bad_cap };
	size_t chunk = (size_t)a->g.chunk_blocks * RC_BLOCK_SIZE;
	uint64_t per = SCRUB_BATCH_BYTES / chunk, next_report = 0;
	uint8_t *bufs[RC_MAX_MEMBERS] = { 0 }, *pq;
	bool rows = a->g.level != RC_RAID10;
	int ret = 0;

	per = per < 1 ? 1 : per > SCRUB_BATCH_MAX ? SCRUB_BATCH_MAX : per;
	if (!rows)
		per = 1;
	memset(rep, 0, sizeof(*rep));
	pq = rc_buf_alloc(2 * RC_BLOCK_SIZE);
	for (uint32_t m = 0; m < a->g.members && pq; m++)
		if (!(bufs[m] = rc_buf_alloc(per * chunk)))
			ret = -ENOMEM;
	if (!pq)
		ret = -ENOMEM;
	for (uint64_t s = 0; s < a->stripes && ret == 0; s += per) {
		uint64_t k = a->stripes - s < per ? a->stripes - s : per;

		if (rows) {
			ret = scrub_rows_batch(a, s, k, repair, rep, &bl, bufs, pq);
		} else {
			ret = scrub_stripe(a, s, repair, rep, &bl, bufs, pq);
			rep->stripes++;
		}
		if (progress && (s + k >= next_report || s + k == a->stripes)) {
			progress(ctx, s + k, a->stripes);
			next_report = s + k + a->stripes / 100 + 1;
		}
	}
	/* Table entries fixed by repairs go out with the next commit. */
	if (ret == 0 && repair && !a->rdonly)
		ret = rc_commit_tables(a);
	for (uint32_t m = 0; m < a->g.members; m++)
		free(bufs[m]);
	free(pq);
	return ret;
}
