/*
 * read: the read path - read, verify every block against its checksum,
 * reconstruct what is missing or wrong from verified columns only, write
 * the repair back, count it.  Corrupt data is never returned: a row that
 * cannot be rebuilt from verified columns fails with -EIO.
 *
 * All functions here run under the stripe lock of the stripe they touch.
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

/* Verifies nr blocks read from column c; zeroes never-written ones. */
static void verify_rows(struct rc_array *a, const struct rc_col *col,
			uint32_t r0, uint32_t nr, uint8_t *buf, uint8_t *state,
			bool count)
{
	bool unwritten;

	for (uint32_t r = 0; r < nr; r++) {
		if (!rc_csum_verify(a, (int)col->member, col->offset + r0 + r,
				    BLK(buf, r), &unwritten)) {
			state[r] = BLK_BAD;
			if (count)
				atomic_fetch_add(&a->m[col->member].csum_errors, 1);
			continue;
		}
		state[r] = BLK_OK;
		if (unwritten)
			memset(BLK(buf, r), 0, RC_BLOCK_SIZE);
	}
}

/* Rebuilds row r's failed columns in place; false when it cannot. */
static bool row_recover(struct rc_array *a, uint32_t ncols, uint8_t **cols,
			uint32_t r, uint8_t *const *state)
{
	void *ptr[RC_MAX_MEMBERS];
	int failed[RC_MAX_MEMBERS], nfailed = 0, good = -1;

	for (uint32_t c = 0; c < ncols; c++) {
		ptr[c] = BLK(cols[c], r);
		if (state[c][r] != BLK_OK)
			failed[nfailed++] = (int)c;
		else if (good < 0)
			good = (int)c;
	}
	if (nfailed == 0)
		return true;
	if (is_mirror(a)) {
		if (good < 0)
			return false;
		for (int i = 0; i < nfailed; i++)
			memcpy(ptr[failed[i]], ptr[good], RC_BLOCK_SIZE);
		return true;
	}
	if ((uint32_t)nfailed > a->nred)
		return false;
	return a->par->recover((int)a->ndata, (int)a->nred, RC_BLOCK_SIZE,
			       ptr, failed, nfailed) == 0;
}

/* Writes a rebuilt block back over a bad one and records its checksum. */
static void repair_block(struct rc_array *a, const struct rc_col *col,
			 uint32_t row, const uint8_t *data)
{
	uint64_t mblock = col->offset + row;
	int slot = (int)col->member;

	if (a->rdonly)
		return;
	if (rc_io_member_write(a, slot, rc_abs(a, mblock), 1, data) < 0) {
		rc_member_set_faulty(a, slot, "write of a repaired block failed");
		return;
	}
	rc_csum_update(a, slot, mblock, rc_block_csum(data, rc_abs(a, mblock)));
	atomic_fetch_add(&a->m[slot].repaired, 1);
}

/* Every table entry of the rows is 0: nothing there to read. */
static bool col_unwritten(struct rc_array *a, const struct rc_col *col,
			  uint32_t r0, uint32_t nr)
{
	uint64_t csum;

	for (uint32_t r = r0; r < r0 + nr; r++)
		if (rc_csum_lookup(a, (int)col->member, col->offset + r, &csum) ||
		    csum != RC_CSUM_UNWRITTEN)
			return false;
	return true;
}

int rc_stripe_load(struct rc_array *a, const struct rc_stripe_map *mp,
		   uint32_t r0, uint32_t nr, uint8_t **cols, uint8_t **state)
{
	struct rc_io io[RC_MAX_MEMBERS];
	int nio = 0;

	for (uint32_t c = 0; c < mp->ncols; c++) {
		if (!rc_member_usable(a, (int)mp->col[c].member, mp->stripe)) {
			memset(state[c], BLK_ABSENT, nr);
			continue;
		}
		if (col_unwritten(a, &mp->col[c], r0, nr)) {
			/* Never written (or discarded): zeros, no I/O. */
			memset(cols[c], 0, (size_t)nr * RC_BLOCK_SIZE);
			memset(state[c], BLK_OK, nr);
			continue;
		}
		io[nio++] = (struct rc_io){
			.member = (int)mp->col[c].member, .buf = cols[c],
			.block = rc_abs(a, mp->col[c].offset + r0), .count = nr,
		};
	}
	rc_io_run(a, io, nio);
	for (int i = 0, c = 0; i < nio; i++, c++) {
		while (mp->col[c].member != (uint32_t)io[i].member)
			c++;
		if (io[i].err < 0)
			memset(state[c], BLK_BAD, nr);
		else
			verify_rows(a, &mp->col[c], r0, nr, cols[c], state[c], true);
	}
	return 0;
}

void rc_stripe_verify_loaded(struct rc_array *a, const struct rc_stripe_map *mp,
			     uint8_t **cols, uint8_t **state,
			     const uint8_t *how)
{
	uint32_t nr = a->g.chunk_blocks;

	for (uint32_t c = 0; c < mp->ncols; c++) {
		switch (how[c]) {
		case RC_LOADED_READ:
			verify_rows(a, &mp->col[c], 0, nr, cols[c], state[c], true);
			break;
		case RC_LOADED_ZERO:
			memset(state[c], BLK_OK, nr);
			break;
		case RC_LOADED_ABSENT:
			memset(state[c], BLK_ABSENT, nr);
			break;
		default:
			memset(state[c], BLK_BAD, nr);
			break;
		}
	}
}

bool rc_col_is_unwritten(struct rc_array *a, int slot, uint64_t mblock,
			 uint64_t count)
{
	struct rc_col col = { .member = (uint32_t)slot, .offset = mblock };

	return col_unwritten(a, &col, 0, (uint32_t)count);
}

bool rc_row_recover(struct rc_array *a, const struct rc_stripe_map *mp,
		    uint8_t **cols, uint32_t r, uint8_t *const *state)
{
	return row_recover(a, mp->ncols, cols, r, state);
}

void rc_block_repair(struct rc_array *a, const struct rc_col *col,
		     uint32_t row, const uint8_t *data)
{
	repair_block(a, col, row, data);
}

uint8_t **rc_state_alloc(uint32_t ncols, uint32_t nr)
{
	uint8_t **state = calloc(RC_MAX_MEMBERS, sizeof(*state));

	if (!state)
		return NULL;
	for (uint32_t c = 0; c < ncols; c++) {
		state[c] = calloc(nr, 1);
		if (!state[c]) {
			rc_state_free(state, ncols);
			return NULL;
		}
	}
	return state;
}

void rc_state_free(uint8_t **state, uint32_t ncols)
{
	if (!state)
		return;
	for (uint32_t c = 0; c < ncols; c++)
		free(state[c]);
	free(state);
}

int rc_stripe_read_rows(struct rc_array *a, const struct rc_stripe_map *mp,
			uint32_t r0, uint32_t nr, uint8_t **cols)
{
	uint8_t **state = rc_state_alloc(mp->ncols, nr);
	int ret = 0;

	if (!state)
		return -ENOMEM;
	rc_stripe_load(a, mp, r0, nr, cols, state);
	for (uint32_t r = 0; r < nr; r++) {
		if (!row_recover(a, mp->ncols, cols, r, state)) {
			atomic_fetch_add(&a->unrecoverable, 1);
			ret = -EIO;
			continue;
		}
		for (uint32_t c = 0; c < mp->ncols; c++)
			if (state[c][r] == BLK_BAD)
				repair_block(a, &mp->col[c], r0 + r,
					     BLK(cols[c], r));
	}
	rc_state_free(state, mp->ncols);
	return ret;
}

/* The slow path: read the whole rows, rebuild, copy column col out. */
static int col_read_slow(struct rc_array *a, const struct rc_stripe_map *mp,
			 uint32_t col, uint32_t r0, uint32_t nr, void *buf)
{
	uint8_t *cols[RC_MAX_MEMBERS] = { 0 };
	int ret = 0;

	for (uint32_t c = 0; c < mp->ncols; c++) {
		cols[c] = c == col ? buf : rc_buf_alloc((size_t)nr * RC_BLOCK_SIZE);
		if (!cols[c]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = rc_stripe_read_rows(a, mp, r0, nr, cols);
out:
	for (uint32_t c = 0; c < mp->ncols; c++)
		if (c != col)
			free(cols[c]);
	return ret;
}

int rc_col_read(struct rc_array *a, const struct rc_stripe_map *mp,
		uint32_t col, uint32_t r0, uint32_t nr, void *buf)
{
	const struct rc_col *cp = &mp->col[col];
	uint8_t stack_state[64], *state = stack_state;
	uint32_t bad_first = nr, bad_last = 0;
	int ret;

	if (!rc_member_usable(a, (int)cp->member, mp->stripe))
		return col_read_slow(a, mp, col, r0, nr, buf);
	ret = rc_io_member_read(a, (int)cp->member, rc_abs(a, cp->offset + r0),
				nr, buf);
	if (ret < 0)
		return col_read_slow(a, mp, col, r0, nr, buf);
	if (nr > sizeof(stack_state)) {
		state = malloc(nr);
		if (!state)
			return -ENOMEM;
	}
	/* Counted when the slow path reads the bad blocks again. */
	verify_rows(a, cp, r0, nr, buf, state, false);
	for (uint32_t r = 0; r < nr; r++) {
		if (state[r] != BLK_OK) {
			bad_first = r < bad_first ? r : bad_first;
			bad_last = r;
		}
	}
	if (state != stack_state)
		free(state);
	if (bad_first == nr)
		return 0;
	return col_read_slow(a, mp, col, r0 + bad_first,
			     bad_last - bad_first + 1, BLK(buf, bad_first));
}

/* Copies the stripe's dirty blocks over a column piece just read. */
static void overlay_dirty(const struct rc_array *a, const struct rc_stripe *st,
			  uint32_t col, uint32_t r0, uint32_t nr, uint8_t *buf)
{
	uint32_t base = col * a->g.chunk_blocks + r0;

	for (uint32_t r = 0; r < nr; r++)
		if (rc_stripe_block_dirty(st, base + r))
			memcpy(BLK(buf, r), BLK(st->data, base + r),
			       RC_BLOCK_SIZE);
}

static bool all_dirty(const struct rc_stripe *st, uint32_t first, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!rc_stripe_block_dirty(st, first + i))
			return false;
	return true;
}

/* Reads a run of blocks inside one column of one stripe. */
static int read_piece(struct rc_array *a, const struct rc_stripe_map *mp,
		      struct rc_stripe *st, uint32_t col, uint32_t r0,
		      uint32_t nr, uint8_t *buf)
{
	uint32_t base = col * a->g.chunk_blocks + r0;
	int ret = 0;

	if (!st->data || !all_dirty(st, base, nr))
		ret = rc_col_read(a, mp, col, r0, nr, buf);
	if (st->data && (ret == 0 || all_dirty(st, base, nr))) {
		overlay_dirty(a, st, col, r0, nr, buf);
		ret = 0;
	}
	return ret;
}

int rc_read(struct rc_array *a, uint64_t block, uint32_t count, void *buf)
{
	struct rc_stripe_map map;
	struct rc_stripe *st;
	uint64_t stripe;
	uint32_t col, r, n;
	uint8_t *out = buf;
	int ret = 0;

	if (block > a->sb.array_blocks || count > a->sb.array_blocks - block)
		return -EINVAL;
	while (count && ret == 0) {
		rc_geom_locate(&a->g, block, &stripe, &col, &r);
		rc_geom_stripe(&a->g, stripe, &map);
		st = rc_stripe_lock(a, stripe);
		/* Every column piece of this stripe that the request covers. */
		while (count && ret == 0) {
			n = a->g.chunk_blocks - r;
			n = n < count ? n : count;
			ret = read_piece(a, &map, st, col, r, n, out);
			block += n;
			count -= n;
			out += (size_t)n * RC_BLOCK_SIZE;
			r = 0;
			if (++col == a->ndata)
				break;
		}
		rc_stripe_unlock(a, st);
	}
	return ret;
}
