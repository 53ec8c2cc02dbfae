/*
 * test_geom: raidcore geometry as a specification.
 *
 * For every level, member count 2..8, chunk size and a few member sizes:
 *   - every stripe column is where the level's own formula (written here
 *     independently from md's definitions) puts it;
 *   - every member block is covered by exactly one stripe column (the only
 *     exception, the tail slot of RAID 10 with an odd member count, is
 *     reported by rc_geom_reverse as holding nothing);
 *   - the columns of a stripe are on distinct members, so parity never
 *     shares a member with its data and copies never share one;
 *   - rc_geom_reverse inverts rc_geom_stripe block by block;
 *   - every logical block maps to exactly one data block, no two collide,
 *     and their count is the capacity formula.
 * Then known answers from md, and rc_geom_validate on bad geometries.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "geom.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TEST_MAX_N 8

struct level_spec {
	enum rc_level level;
	enum rc_layout layout;
	uint32_t min_members;
};

static const struct level_spec level_specs[] = {
	{ RC_RAID0, RC_LAYOUT_NONE, 2 },
	{ RC_RAID1, RC_LAYOUT_NONE, 2 },
	{ RC_RAID4, RC_LAYOUT_PARITY_LAST, 3 },
	{ RC_RAID5, RC_LAYOUT_LEFT_SYMMETRIC, 3 },
	{ RC_RAID6, RC_LAYOUT_LEFT_SYMMETRIC, 4 },
	{ RC_RAID10, RC_LAYOUT_NEAR2, 2 },
};

static const uint32_t test_chunks[] = { 1, 2, 16, 256 };
/* 17 rows: two full RAID 5/6 rotations for n <= 8, plus a partial one. */
static const uint64_t test_rows[] = { 1, 5, 17 };

/* ---- the specification, restated from md's definitions ------------------ */

static uint32_t spec_ndata(enum rc_level level, uint32_t n)
{
	switch (level) {
	case RC_RAID0: return n;
	case RC_RAID4: case RC_RAID5: return n - 1;
	case RC_RAID6: return n - 2;
	default: return 1;
	}
}

static uint32_t spec_ncols(enum rc_level level, uint32_t n)
{
	return level == RC_RAID10 ? 2 : n;
}

static uint64_t spec_stripes(const struct rc_geom *g)
{
	uint64_t rows = g->member_blocks / g->chunk_blocks;

	return g->level == RC_RAID10 ? g->members * rows / 2 : rows;
}

static enum rc_col_kind spec_kind(enum rc_level level, uint32_t n,
				  uint32_t col)
{
	uint32_t ndata = spec_ndata(level, n);

	if (col < ndata)
		return RC_COL_DATA;
	if (level == RC_RAID1 || level == RC_RAID10)
		return RC_COL_COPY;
	return col == ndata ? RC_COL_P : RC_COL_Q;
}

/* md raid5.c ALGORITHM_LEFT_SYMMETRIC, for RAID 5 and RAID 6. */
static uint32_t spec_left_symmetric(uint32_t n, uint32_t nparity,
				    uint64_t s, uint32_t col)
{
	uint32_t pd = n - 1 - (uint32_t)(s % n);

	if (col < n - nparity)
		return (pd + nparity + col) % n;
	if (col == n - nparity)
		return pd;
	return (pd + 1) % n;
}

static void spec_col(const struct rc_geom *g, uint64_t s, uint32_t col,
		     uint32_t *member, uint64_t *offset)
{
	uint32_t n = g->members;
	uint64_t slot = 2 * s + col;

	*offset = s * g->chunk_blocks;
	switch (g->level) {
	case RC_RAID5:
		*member = spec_left_symmetric(n, 1, s, col);
		break;
	case RC_RAID6:
		*member = spec_left_symmetric(n, 2, s, col);
		break;
	case RC_RAID10:
		*member = (uint32_t)(slot % n);
		*offset = slot / n * g->chunk_blocks;
		break;
	default:        /* RAID 0, 1, 4: column k on member k */
		*member = col;
		break;
	}
}

static uint32_t spec_redundancy(enum rc_level level, uint32_t n)
{
	switch (level) {
	case RC_RAID0: return 0;
	case RC_RAID1: return n - 1;
	case RC_RAID6: return 2;
	default: return 1;
	}
}

/* ---- exhaustive checks over one geometry -------------------------------- */

struct geom_case {
	struct rc_geom g;
	uint8_t *used;  /* [member][block]: stripe columns covering it */
	uint8_t *data;  /* [member][block]: logical blocks mapped to it */
};

static size_t case_cell(const struct rc_geom *g, uint32_t member,
			uint64_t block)
{
	return (size_t)member * g->member_blocks + block;
}

static void check_col(struct geom_case *c, uint64_t s, uint32_t i,
		      const struct rc_col *col)
{
	const struct rc_geom *g = &c->g;
	uint32_t member, rcol;
	uint64_t offset, rstripe, b;

	spec_col(g, s, i, &member, &offset);
	assert_int_equal(col->kind, spec_kind(g->level, g->members, i));
	assert_int_equal(col->member, member);
	assert_int_equal(col->offset, offset);
	assert_true(col->offset + g->chunk_blocks <= g->member_blocks);
	for (b = col->offset; b < col->offset + g->chunk_blocks; b++) {
		assert_int_equal(++c->used[case_cell(g, col->member, b)], 1);
		assert_int_equal(rc_geom_reverse(g, col->member, b, &rstripe,
						 &rcol), 0);
		assert_int_equal(rstripe, s);
		assert_int_equal(rcol, i);
	}
}

static void check_stripe(struct geom_case *c, uint64_t s)
{
	const struct rc_geom *g = &c->g;
	struct rc_stripe_map m;
	uint64_t members_seen = 0;
	uint32_t i;

	rc_geom_stripe(g, s, &m);
	assert_int_equal(m.stripe, s);
	assert_int_equal(m.ndata, spec_ndata(g->level, g->members));
	assert_int_equal(m.ncols, spec_ncols(g->level, g->members));
	for (i = 0; i < m.ncols; i++) {
		assert_true(m.col[i].member < g->members);
		/* parity apart from data, copies apart from each other */
		assert_false(members_seen & (1ull << m.col[i].member));
		members_seen |= 1ull << m.col[i].member;
		check_col(c, s, i, &m.col[i]);
	}
}

/* Blocks no stripe covers: only RAID 10's odd tail slot, if any. */
static void check_coverage(struct geom_case *c)
{
	const struct rc_geom *g = &c->g;
	uint64_t rows = g->member_blocks / g->chunk_blocks;
	uint64_t expect_unused = 0, unused = 0, b, rs;
	uint32_t member, rcol;

	if (g->level == RC_RAID10)
		expect_unused = (g->members * rows) % 2 * g->chunk_blocks;
	for (member = 0; member < g->members; member++) {
		for (b = 0; b < g->member_blocks; b++) {
			if (c->used[case_cell(g, member, b)])
				continue;
			unused++;
			assert_int_equal(rc_geom_reverse(g, member, b, &rs,
							 &rcol), -ERANGE);
		}
	}
	assert_int_equal(unused, expect_unused);
}

static void check_lblock(struct geom_case *c, uint64_t lblock,
			 struct rc_stripe_map *m)
{
	const struct rc_geom *g = &c->g;
	uint64_t stripe, cell;
	uint32_t col, in_chunk;

	rc_geom_locate(g, lblock, &stripe, &col, &in_chunk);
	assert_true(in_chunk < g->chunk_blocks);
	assert_int_equal(stripe * rc_geom_stripe_blocks(g) +
			 (uint64_t)col * g->chunk_blocks + in_chunk, lblock);
	if (m->ncols == 0 || m->stripe != stripe) {
		assert_true(m->ncols == 0 || stripe == m->stripe + 1);
		rc_geom_stripe(g, stripe, m);
	}
	assert_true(col < m->ndata);
	assert_int_equal(m->col[col].kind, RC_COL_DATA);
	cell = case_cell(g, m->col[col].member, m->col[col].offset + in_chunk);
	assert_int_equal(++c->data[cell], 1);
}

static void check_logical(struct geom_case *c)
{
	const struct rc_geom *g = &c->g;
	uint64_t capacity = rc_geom_capacity(g), lblock, mapped = 0;
	struct rc_stripe_map m = { .ncols = 0 };
	size_t i, cells = case_cell(g, g->members, 0);

	assert_int_equal(rc_geom_stripe_blocks(g),
			 spec_ndata(g->level, g->members) * g->chunk_blocks);
	assert_int_equal(capacity, spec_stripes(g) *
			 spec_ndata(g->level, g->members) * g->chunk_blocks);
	for (lblock = 0; lblock < capacity; lblock++)
		check_lblock(c, lblock, &m);
	for (i = 0; i < cells; i++)
		mapped += c->data[i];
	assert_int_equal(mapped, capacity);
}

static void check_reverse_out_of_range(const struct rc_geom *g)
{
	uint64_t s;
	uint32_t col;

	assert_int_equal(rc_geom_reverse(g, g->members, 0, &s, &col), -ERANGE);
	assert_int_equal(rc_geom_reverse(g, 0, g->member_blocks, &s, &col),
			 -ERANGE);
}

static void check_geometry(const struct rc_geom *g)
{
	size_t cells = case_cell(g, g->members, 0);
	struct geom_case c = { .g = *g };
	uint64_t s;
	const char *why = NULL;

	assert_int_equal(rc_geom_validate(g, &why), 0);
	assert_int_equal(rc_geom_stripes(g), spec_stripes(g));
	assert_int_equal(rc_geom_data_columns(g),
			 spec_ndata(g->level, g->members));
	assert_int_equal(rc_geom_redundancy(g),
			 spec_redundancy(g->level, g->members));
	c.used = calloc(cells, 1);
	c.data = calloc(cells, 1);
	assert_non_null(c.used);
	assert_non_null(c.data);
	for (s = 0; s < rc_geom_stripes(g); s++)
		check_stripe(&c, s);
	check_coverage(&c);
	check_logical(&c);
	check_reverse_out_of_range(g);
	free(c.used);
	free(c.data);
}

/* One level: every member count, chunk size and member size. */
static void test_level_layout(void **state)
{
	const struct level_spec *spec = *state;
	struct rc_geom g = { .level = spec->level, .layout = spec->layout };
	size_t ci, ri;

	for (g.members = spec->min_members; g.members <= TEST_MAX_N;
	     g.members++) {
		for (ci = 0; ci < ARRAY_LEN(test_chunks); ci++) {
			g.chunk_blocks = test_chunks[ci];
			for (ri = 0; ri < ARRAY_LEN(test_rows); ri++) {
				g.member_blocks = test_rows[ri] *
						  g.chunk_blocks;
				check_geometry(&g);
			}
		}
	}
}

/*
 * rc_geom_stripes_rows, _fitting and _member_rows_stripes (the batches of
 * rebuild and scrub): for every level, member count, start and length,
 * every column of the stripes lies in the rows named, and the first and
 * last of them are used; k = _fitting(maxrows) stripes never need more
 * than maxrows rows; the stripes a member's row range holds columns of
 * are all within [lo, hi], and lo and hi hold one there.
 */
static void check_rows(const struct rc_geom *g)
{
	uint64_t n = rc_geom_stripes(g), rows = g->member_blocks / g->chunk_blocks;
	struct rc_stripe_map m;

	for (uint64_t s0 = 0; s0 < n; s0++) {
		for (uint64_t k = 1; s0 + k <= n && k <= 9; k++) {
			uint64_t r0, nr, lo = UINT64_MAX, hi = 0;

			rc_geom_stripes_rows(g, s0, k, &r0, &nr);
			for (uint64_t s = s0; s < s0 + k; s++) {
				rc_geom_stripe(g, s, &m);
				for (uint32_t c = 0; c < m.ncols; c++) {
					uint64_t r = m.col[c].offset / g->chunk_blocks;

					lo = r < lo ? r : lo;
					hi = r > hi ? r : hi;
				}
			}
			assert_int_equal(lo, r0);
			assert_int_equal(hi, r0 + nr - 1);
		}
		for (uint64_t max = 2; max <= 6; max++) {
			uint64_t k = rc_geom_stripes_fitting(g, max), r0, nr;

			assert_true(k >= 1);
			if (s0 + k > n)
				continue;
			rc_geom_stripes_rows(g, s0, k, &r0, &nr);
			assert_true(nr <= max);
		}
	}
	for (uint32_t mem = 0; mem < g->members; mem++) {
		for (uint64_t r0 = 0; r0 < rows; r0++) {
			for (uint64_t nr = 1; r0 + nr <= rows && nr <= 5; nr++) {
				uint64_t lo, hi, s, first = UINT64_MAX, last = 0;
				uint32_t col;

				rc_geom_member_rows_stripes(g, mem, r0, nr, &lo, &hi);
				for (uint64_t r = r0; r < r0 + nr; r++) {
					if (rc_geom_reverse(g, mem, r * g->chunk_blocks,
							    &s, &col))
						continue;       /* RAID 10's odd tail */
					first = s < first ? s : first;
					last = s > last ? s : last;
				}
				if (first == UINT64_MAX)
					continue;
				assert_int_equal(first, lo);
				assert_int_equal(last, hi);
			}
		}
	}
}

static void test_stripes_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(level_specs); i++) {
		const struct level_spec *spec = &level_specs[i];
		struct rc_geom g = { .level = spec->level, .layout = spec->layout,
				     .chunk_blocks = 4 };

		for (g.members = spec->min_members; g.members <= TEST_MAX_N;
		     g.members++) {
			for (uint64_t rows = 1; rows <= 12; rows++) {
				g.member_blocks = rows * g.chunk_blocks;
				check_rows(&g);
			}
		}
	}
}

/* ---- known answers ------------------------------------------------------ */

struct known_stripe {
	enum rc_level level;
	uint32_t members;
	uint64_t stripe;
	uint32_t member[TEST_MAX_N];    /* per column, in map order */
	uint64_t row[TEST_MAX_N];       /* per column, in chunks */
};

/*
 * RAID 5 n=4 and RAID 6 n=5 are md's left-symmetric tables; RAID 10 n=3
 * is the near layout drawn in md(4) ("A1 A1 A2 / A2 A3 A3").
 */
static const struct known_stripe known_stripes[] = {
	{ RC_RAID5, 4, 0, { 0, 1, 2, 3 }, { 0, 0, 0, 0 } },
	{ RC_RAID5, 4, 1, { 3, 0, 1, 2 }, { 1, 1, 1, 1 } },
	{ RC_RAID5, 4, 2, { 2, 3, 0, 1 }, { 2, 2, 2, 2 } },
	{ RC_RAID5, 4, 3, { 1, 2, 3, 0 }, { 3, 3, 3, 3 } },
	{ RC_RAID5, 4, 4, { 0, 1, 2, 3 }, { 4, 4, 4, 4 } },
	{ RC_RAID6, 5, 0, { 1, 2, 3, 4, 0 }, { 0, 0, 0, 0, 0 } },
	{ RC_RAID6, 5, 1, { 0, 1, 2, 3, 4 }, { 1, 1, 1, 1, 1 } },
	{ RC_RAID6, 5, 2, { 4, 0, 1, 2, 3 }, { 2, 2, 2, 2, 2 } },
	{ RC_RAID6, 5, 4, { 2, 3, 4, 0, 1 }, { 4, 4, 4, 4, 4 } },
	{ RC_RAID4, 4, 7, { 0, 1, 2, 3 }, { 7, 7, 7, 7 } },
	{ RC_RAID1, 3, 2, { 0, 1, 2 }, { 2, 2, 2 } },
	{ RC_RAID0, 3, 1, { 0, 1, 2 }, { 1, 1, 1 } },
	{ RC_RAID10, 3, 0, { 0, 1 }, { 0, 0 } },
	{ RC_RAID10, 3, 1, { 2, 0 }, { 0, 1 } },
	{ RC_RAID10, 3, 2, { 1, 2 }, { 1, 1 } },
	{ RC_RAID10, 4, 1, { 2, 3 }, { 0, 0 } },
	{ RC_RAID10, 4, 2, { 0, 1 }, { 1, 1 } },
	{ RC_RAID10, 2, 1, { 0, 1 }, { 1, 1 } },
};

static struct rc_geom known_geom(enum rc_level level, uint32_t n,
				 uint32_t chunk, uint64_t rows)
{
	struct rc_geom g = {
		.level = level, .layout = rc_geom_default_layout(level),
		.members = n, .chunk_blocks = chunk,
		.member_blocks = rows * chunk,
	};

	return g;
}

static void test_known_stripes(void **state)
{
	const struct known_stripe *k;
	struct rc_stripe_map m;
	struct rc_geom g;
	size_t i;
	uint32_t c;

	for (i = 0; i < ARRAY_LEN(known_stripes); i++) {
		k = &known_stripes[i];
		g = known_geom(k->level, k->members, 16, 8);
		rc_geom_stripe(&g, k->stripe, &m);
		for (c = 0; c < m.ncols; c++) {
			assert_int_equal(m.col[c].member, k->member[c]);
			assert_int_equal(m.col[c].offset, k->row[c] * 16);
		}
	}
}

static void test_known_kinds(void **state)
{
	struct rc_geom g = known_geom(RC_RAID6, 5, 16, 8);
	struct rc_stripe_map m;

	rc_geom_stripe(&g, 0, &m);
	assert_int_equal(m.ncols, 5);
	assert_int_equal(m.ndata, 3);
	assert_int_equal(m.col[3].kind, RC_COL_P);
	assert_int_equal(m.col[3].member, 4);
	assert_int_equal(m.col[4].kind, RC_COL_Q);
	assert_int_equal(m.col[4].member, 0);
	assert_int_equal(m.col[0].kind, RC_COL_DATA);
	assert_int_equal(m.col[0].member, 1);
	g = known_geom(RC_RAID1, 3, 16, 8);
	rc_geom_stripe(&g, 0, &m);
	assert_int_equal(m.ndata, 1);
	assert_int_equal(m.col[1].kind, RC_COL_COPY);
	assert_int_equal(m.col[2].kind, RC_COL_COPY);
}

static void test_known_locate(void **state)
{
	struct rc_geom g = known_geom(RC_RAID5, 4, 16, 8);
	uint64_t stripe;
	uint32_t col, in_chunk;

	/* 53 = stripe 1 (48 blocks each), data column 0, block 5: member 3 */
	rc_geom_locate(&g, 53, &stripe, &col, &in_chunk);
	assert_int_equal(stripe, 1);
	assert_int_equal(col, 0);
	assert_int_equal(in_chunk, 5);
	rc_geom_locate(&g, 47, &stripe, &col, &in_chunk);
	assert_int_equal(stripe, 0);
	assert_int_equal(col, 2);
	assert_int_equal(in_chunk, 15);
	g = known_geom(RC_RAID10, 3, 2, 4);
	rc_geom_locate(&g, 3, &stripe, &col, &in_chunk);
	assert_int_equal(stripe, 1);
	assert_int_equal(col, 0);
	assert_int_equal(in_chunk, 1);
}

static void test_known_reverse(void **state)
{
	struct rc_geom g = known_geom(RC_RAID5, 4, 16, 8);
	uint64_t stripe;
	uint32_t col;

	/* stripe 1's P is on member 2 */
	assert_int_equal(rc_geom_reverse(&g, 2, 21, &stripe, &col), 0);
	assert_int_equal(stripe, 1);
	assert_int_equal(col, 3);
	g = known_geom(RC_RAID6, 5, 1, 8);
	assert_int_equal(rc_geom_reverse(&g, 0, 0, &stripe, &col), 0);
	assert_int_equal(col, 4);       /* Q of stripe 0 */
	/* RAID 10, 3 members, 1 row: slots 0,1 hold chunk 0, slot 2 nothing */
	g = known_geom(RC_RAID10, 3, 1, 1);
	assert_int_equal(rc_geom_stripes(&g), 1);
	assert_int_equal(rc_geom_capacity(&g), 1);
	assert_int_equal(rc_geom_reverse(&g, 1, 0, &stripe, &col), 0);
	assert_int_equal(col, 1);
	assert_int_equal(rc_geom_reverse(&g, 2, 0, &stripe, &col), -ERANGE);
}

/* The largest geometry: nothing overflows. */
static void test_largest(void **state)
{
	const uint64_t max_blocks = 1ull << 46;
	struct rc_stripe_map m;
	struct rc_geom g;
	uint64_t stripe, last;
	uint32_t col, in_chunk;
	size_t i;

	for (i = 0; i < ARRAY_LEN(level_specs); i++) {
		g = known_geom(level_specs[i].level, RC_MAX_MEMBERS, 256,
			       max_blocks / 256);
		assert_int_equal(rc_geom_validate(&g, NULL), 0);
		assert_int_equal(rc_geom_capacity(&g), spec_stripes(&g) *
				 spec_ndata(g.level, g.members) * 256);
		last = rc_geom_capacity(&g) - 1;
		rc_geom_locate(&g, last, &stripe, &col, &in_chunk);
		assert_int_equal(stripe, rc_geom_stripes(&g) - 1);
		rc_geom_stripe(&g, stripe, &m);
		/* the last logical block is the last block of a member */
		assert_int_equal(m.col[col].offset + in_chunk + 1, max_blocks);
		assert_int_equal(rc_geom_reverse(&g, m.col[col].member,
						 m.col[col].offset, &last,
						 &in_chunk), 0);
		assert_int_equal(last, stripe);
		assert_int_equal(in_chunk, col);
	}
}

/* ---- validation --------------------------------------------------------- */

static void assert_rejected(const struct rc_geom *g)
{
	const char *why = NULL;

	assert_int_equal(rc_geom_validate(g, &why), -EINVAL);
	assert_non_null(why);
	assert_true(strlen(why) > 0);
	assert_int_equal(rc_geom_validate(g, NULL), -EINVAL);
}

static void assert_verdict(const struct rc_geom *g, bool valid)
{
	if (valid)
		assert_int_equal(rc_geom_validate(g, NULL), 0);
	else
		assert_rejected(g);
}

static void test_defaults(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(level_specs); i++) {
		assert_int_equal(rc_geom_min_members(level_specs[i].level),
				 level_specs[i].min_members);
		assert_int_equal(rc_geom_default_layout(level_specs[i].level),
				 level_specs[i].layout);
	}
	assert_int_equal(rc_geom_min_members((enum rc_level)3), 0);
}

static void test_validate_members(void **state)
{
	struct rc_geom g;
	uint32_t n;
	size_t i;

	for (i = 0; i < ARRAY_LEN(level_specs); i++) {
		for (n = 0; n <= RC_MAX_MEMBERS + 2; n++) {
			g = known_geom(level_specs[i].level, n, 16, 4);
			assert_verdict(&g, n >= level_specs[i].min_members &&
				       n <= RC_MAX_MEMBERS);
		}
		g = known_geom(level_specs[i].level, UINT32_MAX, 16, 4);
		assert_rejected(&g);
	}
}

static void test_validate_layouts(void **state)
{
	struct rc_geom g;
	uint32_t layout;
	size_t i;

	for (i = 0; i < ARRAY_LEN(level_specs); i++) {
		for (layout = 0; layout <= 5; layout++) {
			g = known_geom(level_specs[i].level, 6, 16, 4);
			g.layout = (enum rc_layout)layout;
			assert_verdict(&g, layout == level_specs[i].layout);
		}
	}
}

static void test_validate_chunks(void **state)
{
	static const uint32_t odd[] = { 512, 1024, 1u << 31, UINT32_MAX };
	struct rc_geom g;
	uint32_t chunk;
	size_t i;

	for (i = 0; i < ARRAY_LEN(level_specs); i++) {
		for (chunk = 0; chunk <= 300; chunk++) {
			g = known_geom(level_specs[i].level, 4, 1, 0);
			g.chunk_blocks = chunk;
			g.member_blocks = 256 * 3;
			assert_verdict(&g, chunk != 0 && chunk <= 256 &&
				       (chunk & (chunk - 1)) == 0);
		}
	}
	for (i = 0; i < ARRAY_LEN(odd); i++) {
		g = known_geom(RC_RAID5, 4, odd[i], 4);
		assert_rejected(&g);
	}
}

static void test_validate_member_blocks(void **state)
{
	static const struct {
		uint32_t chunk;
		uint64_t member_blocks;
		bool valid;
	} rows[] = {
		{ 16, 0, false },
		{ 16, 8, false },
		{ 16, 15, false },
		{ 16, 17, false },
		{ 16, 16, true },
		{ 16, 48, true },
		{ 256, 255, false },
		{ 256, 257, false },
		{ 256, 512, true },
		{ 1, 1, true },
		{ 256, 1ull << 46, true },
		{ 256, (1ull << 46) + 256, false },
		{ 1, UINT64_MAX, false },
	};
	struct rc_geom g;
	size_t i, l;

	for (l = 0; l < ARRAY_LEN(level_specs); l++) {
		for (i = 0; i < ARRAY_LEN(rows); i++) {
			g = known_geom(level_specs[l].level, 5, rows[i].chunk,
				       0);
			g.member_blocks = rows[i].member_blocks;
			assert_verdict(&g, rows[i].valid);
		}
	}
}

static void test_validate_levels(void **state)
{
	static const int bad[] = { 2, 3, 7, 8, 11, 50, -1 };
	struct rc_geom g;
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		g = known_geom(RC_RAID5, 4, 16, 4);
		g.level = (enum rc_level)bad[i];
		assert_rejected(&g);
	}
}

#define LEVEL_TEST(i, label) \
	{ "layout " label, test_level_layout, NULL, NULL, \
	  (void *)&level_specs[i] }

int main(void)
{
	const struct CMUnitTest tests[] = {
		LEVEL_TEST(0, "RAID0"),
		LEVEL_TEST(1, "RAID1"),
		LEVEL_TEST(2, "RAID4"),
		LEVEL_TEST(3, "RAID5"),
		LEVEL_TEST(4, "RAID6"),
		LEVEL_TEST(5, "RAID10"),
		cmocka_unit_test(test_stripes_rows),
		cmocka_unit_test(test_known_stripes),
		cmocka_unit_test(test_known_kinds),
		cmocka_unit_test(test_known_locate),
		cmocka_unit_test(test_known_reverse),
		cmocka_unit_test(test_largest),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_validate_members),
		cmocka_unit_test(test_validate_layouts),
		cmocka_unit_test(test_validate_chunks),
		cmocka_unit_test(test_validate_member_blocks),
		cmocka_unit_test(test_validate_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
