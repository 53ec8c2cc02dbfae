/*
 * geom: the pure mapping from logical blocks to members (no I/O, no state).
 *
 * A stripe is the unit that shares redundancy.  For RAID 0/1/4/5/6 it is a
 * row: chunk number s on every member.  For RAID 10 (near-2) it is one data
 * chunk and its copy, on two adjacent members of md's near layout.
 *
 * Column order in struct rc_stripe_map is fixed and used everywhere:
 *   cols[0 .. ndata-1]            data chunks, in logical order
 *   cols[ndata]                   P (RAID 4/5/6)  or the copies (RAID 1/10)
 *   cols[ndata+1]                 Q (RAID 6)
 * Q is the syndrome sum(g^k * D_k), k = data column index, over GF(2^8)
 * with polynomial 0x11d and generator g = 2.
 *
 * Member offsets are in blocks relative to the member's data region.
 */
#ifndef RC_GEOM_H
#define RC_GEOM_H

#include "raidcore.h"

struct rc_geom {
	enum rc_level level;
	enum rc_layout layout;
	uint32_t members;          /* raid slots, n */
	uint32_t chunk_blocks;     /* power of two, 1 .. 256 */
	uint64_t member_blocks;    /* data-region blocks per member, multiple of chunk_blocks */
};

enum rc_col_kind {
	RC_COL_DATA = 0,
	RC_COL_P = 1,
	RC_COL_Q = 2,
	RC_COL_COPY = 3,           /* mirror of data column 0 */
};

struct rc_col {
	uint32_t member;
	enum rc_col_kind kind;
	uint64_t offset;           /* first block of the chunk, data-region relative */
};

struct rc_stripe_map {
	uint64_t stripe;
	uint32_t ncols;            /* ndata + nredundant */
	uint32_t ndata;
	struct rc_col col[RC_MAX_MEMBERS];
};

/* 0, or -EINVAL with a reason in *why for an impossible geometry. */
int rc_geom_validate(const struct rc_geom *g, const char **why);

uint32_t rc_geom_min_members(enum rc_level level);
enum rc_layout rc_geom_default_layout(enum rc_level level);
uint32_t rc_geom_data_columns(const struct rc_geom *g);
/* Members of one stripe that may be lost without losing data. */
uint32_t rc_geom_redundancy(const struct rc_geom *g);
uint64_t rc_geom_stripes(const struct rc_geom *g);
uint64_t rc_geom_capacity(const struct rc_geom *g);    /* logical blocks */
uint32_t rc_geom_stripe_blocks(const struct rc_geom *g);  /* data blocks per stripe */

void rc_geom_stripe(const struct rc_geom *g, uint64_t stripe,
		    struct rc_stripe_map *m);

/*
 * The chunk rows stripes [s0, s0 + k) lie in: every column of each is in
 * rows [*row0, *row0 + *nrows) of its member.  Stripe s is row s at every
 * level but RAID 10, whose stripe s is slots 2s and 2s + 1 of the near-2
 * order (slot / members is the row), so k stripes span about 2k / members
 * rows.
 */
void rc_geom_stripes_rows(const struct rc_geom *g, uint64_t s0, uint64_t k,
			  uint64_t *row0, uint64_t *nrows);
/* Stripes that fit in maxrows rows (>= 2) wherever they start: 1 or more. */
uint64_t rc_geom_stripes_fitting(const struct rc_geom *g, uint64_t maxrows);
/* The stripes that member's rows [row0, row0 + nrows) hold columns of lie
 * in [*lo, *hi] (nrows >= 1, row0 + nrows <= the member's rows). */
void rc_geom_member_rows_stripes(const struct rc_geom *g, uint32_t member,
				 uint64_t row0, uint64_t nrows, uint64_t *lo,
				 uint64_t *hi);

/* Logical block -> stripe, data column and block within the chunk. */
void rc_geom_locate(const struct rc_geom *g, uint64_t lblock,
		    uint64_t *stripe, uint32_t *col, uint32_t *in_chunk);

/*
 * Member block -> stripe and column index in that stripe's map.  Returns
 * -ERANGE when the block holds nothing (RAID 10 with an odd member count
 * leaves the tail of the last row unused).
 */
int rc_geom_reverse(const struct rc_geom *g, uint32_t member, uint64_t mblock,
		    uint64_t *stripe, uint32_t *col);

#endif
