/*
 * geom: the pure mapping between logical blocks and member chunks.
 *
 * Arithmetic over struct rc_geom only: no I/O, no allocation, no state.
 * Usage: rc_geom_validate() once, on a geometry read from disk or built by
 * mkfs; then any other function.  Those assert validity instead of
 * returning errors: an invalid geometry reaching them is a bug, not input.
 *
 * Row levels (RAID 0/1/4/5/6): stripe s is chunk s of every member.  The
 * members of a row form a ring starting at member r(s): the nred redundant
 * columns sit on r, r+1, ..., and the data columns follow, wrapping mod n.
 * One rule then gives every row level its own layout:
 *
 *   level   r(s)            nred   which means
 *   RAID0   0               0      data k on k
 *   RAID1   1               n-1    data on 0, copy j on 1+j
 *   RAID4   n-1             1      data k on k, P on n-1
 *   RAID5   n-1 - s mod n   1      md left-symmetric: data k on r+1+k
 *   RAID6   n-1 - s mod n   2      md left-symmetric: Q on r+1, data k on r+2+k
 *
 * RAID 10 (md near-2): data chunk c is stripe c.  Its two copies fill slots
 * 2c and 2c+1 of the (row x member) grid taken row-major, so slot j is on
 * member j mod n at row j / n; the two copies land on different members for
 * any n >= 2.  With odd n the last slot of the last row can be left over.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "geom.h"

#define GEOM_STR(x) #x
#define GEOM_XSTR(x) GEOM_STR(x)

/*
 * 2^46 blocks (256 PiB) per member keeps n * member_blocks * RC_BLOCK_SIZE
 * below 2^63 for n <= RC_MAX_MEMBERS, so no product in this file or in a
 * caller converting blocks to off_t bytes can overflow.
 */
#define GEOM_MAX_MEMBER_BLOCKS (1ull << 46)
#define GEOM_MAX_CHUNK_BLOCKS 256u

struct geom_level {
	enum rc_level level;
	uint32_t min_members;
	enum rc_layout layout;       /* the only layout the level accepts */
	const char *too_few;         /* reasons for rc_geom_validate */
	const char *bad_layout;
};

static const struct geom_level geom_levels[] = {
	{ RC_RAID0, 2, RC_LAYOUT_NONE,
	  "RAID 0 needs at least 2 members", "RAID 0 takes no layout" },
	{ RC_RAID1, 2, RC_LAYOUT_NONE,
	  "RAID 1 needs at least 2 members", "RAID 1 takes no layout" },
	{ RC_RAID4, 3, RC_LAYOUT_PARITY_LAST,
	  "RAID 4 needs at least 3 members",
	  "RAID 4 needs the parity-last layout" },
	{ RC_RAID5, 3, RC_LAYOUT_LEFT_SYMMETRIC,
	  "RAID 5 needs at least 3 members",
	  "RAID 5 needs the left-symmetric layout" },
	{ RC_RAID6, 4, RC_LAYOUT_LEFT_SYMMETRIC,
	  "RAID 6 needs at least 4 members",
	  "RAID 6 needs the left-symmetric layout" },
	{ RC_RAID10, 2, RC_LAYOUT_NEAR2,
	  "RAID 10 needs at least 2 members",
	  "RAID 10 needs the near-2 layout" },
};

static const struct geom_level *geom_level_find(enum rc_level level)
{
	size_t i;

	for (i = 0; i < sizeof(geom_levels) / sizeof(geom_levels[0]); i++)
		if (geom_levels[i].level == level)
			return &geom_levels[i];
	return NULL;
}

static bool geom_chunk_is_valid(uint32_t chunk_blocks)
{
	return chunk_blocks != 0 && chunk_blocks <= GEOM_MAX_CHUNK_BLOCKS &&
	       (chunk_blocks & (chunk_blocks - 1)) == 0;
}

/* NULL when g is usable, else why not, checked in order of importance. */
static const char *geom_invalid_reason(const struct rc_geom *g)
{
	const struct geom_level *lv = geom_level_find(g->level);

	if (!lv)
		return "unknown RAID level";
	if (g->members < lv->min_members)
		return lv->too_few;
	if (g->members > RC_MAX_MEMBERS)
		return "too many members (at most "
		       GEOM_XSTR(RC_MAX_MEMBERS) ")";
	if (g->layout != lv->layout)
		return lv->bad_layout;
	if (!geom_chunk_is_valid(g->chunk_blocks))
		return "chunk size must be a power of two from 4 KiB to 1 MiB";
	if (g->member_blocks == 0)
		return "member data region is empty";
	if (g->member_blocks % g->chunk_blocks != 0)
		return "member data region is not a whole number of chunks";
	if (g->member_blocks > GEOM_MAX_MEMBER_BLOCKS)
		return "member data region is larger than 256 PiB";
	return NULL;
}

int rc_geom_validate(const struct rc_geom *g, const char **why)
{
	const char *reason = geom_invalid_reason(g);

	if (!reason)
		return 0;
	if (why)
		*why = reason;
	return -EINVAL;
}

static void geom_assert_valid(const struct rc_geom *g)
{
	assert(geom_invalid_reason(g) == NULL);
	(void)g;
}

uint32_t rc_geom_min_members(enum rc_level level)
{
	const struct geom_level *lv = geom_level_find(level);

	return lv ? lv->min_members : 0;
}

enum rc_layout rc_geom_default_layout(enum rc_level level)
{
	const struct geom_level *lv = geom_level_find(level);

	return lv ? lv->layout : RC_LAYOUT_NONE;
}

/* Equal to the redundant columns in a stripe map, for every level. */
uint32_t rc_geom_redundancy(const struct rc_geom *g)
{
	geom_assert_valid(g);
	switch (g->level) {
	case RC_RAID0:
		return 0;
	case RC_RAID1:
		return g->members - 1;
	case RC_RAID4:
	case RC_RAID5:
	case RC_RAID10:
		return 1;
	case RC_RAID6:
		return 2;
	}
	abort();        /* unreachable: the level was validated */
}

static uint32_t geom_columns(const struct rc_geom *g)
{
	return g->level == RC_RAID10 ? 2 : g->members;
}

uint32_t rc_geom_data_columns(const struct rc_geom *g)
{
	return geom_columns(g) - rc_geom_redundancy(g);
}

uint64_t rc_geom_stripes(const struct rc_geom *g)
{
	uint64_t rows;

	geom_assert_valid(g);
	rows = g->member_blocks / g->chunk_blocks;
	if (g->level == RC_RAID10)
		return (uint64_t)g->members * rows / 2;
	return rows;
}

uint32_t rc_geom_stripe_blocks(const struct rc_geom *g)
{
	return rc_geom_data_columns(g) * g->chunk_blocks;
}

uint64_t rc_geom_capacity(const struct rc_geom *g)
{
	return rc_geom_stripes(g) * rc_geom_stripe_blocks(g);
}

/* First member of row s's ring: where its redundant columns start. */
static uint32_t geom_row_ring_start(const struct rc_geom *g, uint64_t s)
{
	uint32_t n = g->members;

	switch (g->level) {
	case RC_RAID1:
		return 1;
	case RC_RAID4:
		return n - 1;
	case RC_RAID5:
	case RC_RAID6:
		return n - 1 - (uint32_t)(s % n);
	default:
		return 0;
	}
}

static enum rc_col_kind geom_redundant_kind(const struct rc_geom *g,
					    uint32_t j)
{
	if (g->level == RC_RAID1 || g->level == RC_RAID10)
		return RC_COL_COPY;
	return j == 0 ? RC_COL_P : RC_COL_Q;
}

static void geom_col_set(struct rc_col *c, uint32_t member,
			 enum rc_col_kind kind, uint64_t offset)
{
	c->member = member;
	c->kind = kind;
	c->offset = offset;
}

static void geom_row_fill(const struct rc_geom *g, uint64_t s,
			  struct rc_stripe_map *m)
{
	uint32_t n = g->members;
	uint32_t r = geom_row_ring_start(g, s);
	uint32_t nred = n - m->ndata;
	uint64_t off = s * g->chunk_blocks;
	uint32_t k, j;

	m->ncols = n;
	for (k = 0; k < m->ndata; k++)
		geom_col_set(&m->col[k], (r + nred + k) % n, RC_COL_DATA, off);
	for (j = 0; j < nred; j++)
		geom_col_set(&m->col[m->ndata + j], (r + j) % n,
			     geom_redundant_kind(g, j), off);
}

static void geom_near2_fill(const struct rc_geom *g, uint64_t c,
			    struct rc_stripe_map *m)
{
	uint32_t n = g->members;
	uint64_t slot = 2 * c;

	m->ncols = 2;
	geom_col_set(&m->col[0], (uint32_t)(slot % n), RC_COL_DATA,
		     slot / n * g->chunk_blocks);
	slot++;
	geom_col_set(&m->col[1], (uint32_t)(slot % n), RC_COL_COPY,
		     slot / n * g->chunk_blocks);
}

void rc_geom_stripe(const struct rc_geom *g, uint64_t stripe,
		    struct rc_stripe_map *m)
{
	assert(stripe < rc_geom_stripes(g));
	memset(m, 0, sizeof(*m));
	m->stripe = stripe;
	m->ndata = rc_geom_data_columns(g);
	if (g->level == RC_RAID10)
		geom_near2_fill(g, stripe, m);
	else
		geom_row_fill(g, stripe, m);
}

void rc_geom_stripes_rows(const struct rc_geom *g, uint64_t s0, uint64_t k,
			  uint64_t *row0, uint64_t *nrows)
{
	uint64_t n = g->members;

	assert(k >= 1 && s0 + k <= rc_geom_stripes(g));
	if (g->level != RC_RAID10) {
		*row0 = s0;
		*nrows = k;
		return;
	}
	*row0 = 2 * s0 / n;
	*nrows = (2 * (s0 + k) - 1) / n - *row0 + 1;
}

/* At RAID 10, k stripes span at most (2k - 1) / n + 2 rows. */
uint64_t rc_geom_stripes_fitting(const struct rc_geom *g, uint64_t maxrows)
{
	uint64_t k;

	assert(maxrows >= 2);
	if (g->level != RC_RAID10)
		return maxrows;
	k = (maxrows - 1) * g->members / 2;
	return k ? k : 1;
}

void rc_geom_member_rows_stripes(const struct rc_geom *g, uint32_t member,
				 uint64_t row0, uint64_t nrows, uint64_t *lo,
				 uint64_t *hi)
{
	uint64_t n = g->members, last = rc_geom_stripes(g) - 1;

	assert(nrows >= 1 && member < n);
	if (g->level != RC_RAID10) {
		*lo = row0;
		*hi = row0 + nrows - 1;
	} else {
		uint64_t slot = (row0 + nrows - 1) * n + member;

		/* the odd tail slot holds nothing: the row before is last */
		if (slot >= 2 * (last + 1) && nrows > 1)
			slot -= n;
		*lo = (row0 * n + member) / 2;
		*hi = slot / 2;
	}
	*lo = *lo > last ? last : *lo;
	*hi = *hi > last ? last : *hi;
}

void rc_geom_locate(const struct rc_geom *g, uint64_t lblock,
		    uint64_t *stripe, uint32_t *col, uint32_t *in_chunk)
{
	uint32_t sb = rc_geom_stripe_blocks(g);

	assert(lblock < rc_geom_capacity(g));
	*stripe = lblock / sb;
	*col = (uint32_t)(lblock % sb) / g->chunk_blocks;
	*in_chunk = (uint32_t)(lblock % g->chunk_blocks);
}

/* Inverse of geom_row_fill: the member's position in the row's ring. */
static void geom_row_reverse(const struct rc_geom *g, uint32_t member,
			     uint64_t row, uint32_t *col)
{
	uint32_t n = g->members;
	uint32_t nred = rc_geom_redundancy(g);
	uint32_t pos = (member + n - geom_row_ring_start(g, row)) % n;

	*col = pos < nred ? n - nred + pos : pos - nred;
}

int rc_geom_reverse(const struct rc_geom *g, uint32_t member, uint64_t mblock,
		    uint64_t *stripe, uint32_t *col)
{
	uint64_t row, slot;

	geom_assert_valid(g);
	if (member >= g->members || mblock >= g->member_blocks)
		return -ERANGE;
	row = mblock / g->chunk_blocks;
	if (g->level != RC_RAID10) {
		*stripe = row;
		geom_row_reverse(g, member, row, col);
		return 0;
	}
	slot = row * g->members + member;
	if (slot >= 2 * rc_geom_stripes(g))
		return -ERANGE;
	*stripe = slot / 2;
	*col = (uint32_t)(slot % 2);
	return 0;
}
