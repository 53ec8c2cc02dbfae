/*
 * test_crash: cut the power after every single write of a mixed workload
 * (full-stripe and partial-stripe writes, flushes), with unflushed writes
 * either all lost or a random subset surviving in any order.  After each
 * cut the array is assembled from the crash image as it is, and again with
 * each member (for RAID 6 each pair) missing as well: every block flushed
 * before the cut reads back exactly, and every other block holds one of
 * the values written to it - nothing outside the in-flight writes changed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "rc_test_util.h"

#define DEV_BYTES (4ull << 20)
#define BASE_BLOCKS 320
#define MAX_PEND 8

struct cfg {
	enum rc_level level;
	int members;
	uint32_t chunk;
	enum rc_power_mode mode;
	bool pairs;
};

static const struct cfg cfgs[] = {
	{ RC_RAID5, 4, 16384, RC_POWER_DROP, false },
	{ RC_RAID5, 4, 16384, RC_POWER_REORDER, false },
	{ RC_RAID4, 3, 8192, RC_POWER_REORDER, false },
	{ RC_RAID6, 5, 8192, RC_POWER_REORDER, true },
	{ RC_RAID1, 2, 16384, RC_POWER_REORDER, false },
	{ RC_RAID10, 3, 8192, RC_POWER_REORDER, false },
	{ RC_RAID0, 2, 8192, RC_POWER_REORDER, false },
};

struct op {
	uint32_t start, len;    /* len 0: flush */
};

/* Full stripes, partial stripes, single blocks, overlaps, flushes. */
static const struct op workload[] = {
	{ 0, 24 }, { 30, 3 }, { 0, 0 }, { 7, 1 }, { 100, 36 }, { 50, 5 },
	{ 0, 0 }, { 31, 1 }, { 200, 9 }, { 24, 12 }, { 5, 2 }, { 0, 0 },
	{ 130, 40 }, { 61, 1 }, { 62, 1 }, { 0, 0 }, { 250, 3 }, { 0, 48 },
};
#define NOPS (sizeof(workload) / sizeof(workload[0]))

struct model {
	uint32_t durable[BASE_BLOCKS + 64];
	uint32_t pend[BASE_BLOCKS + 64][MAX_PEND];
	uint8_t npend[BASE_BLOCKS + 64];
};

static void write_gen(struct rc_array *a, uint32_t start, uint32_t len,
		      uint32_t gen, int *ret)
{
	uint8_t *buf = malloc((size_t)len * RC_BLOCK_SIZE);

	for (uint32_t i = 0; i < len; i++)
		tb_pattern(buf + (size_t)i * RC_BLOCK_SIZE, start + i, gen);
	*ret = rc_write(a, start, len, buf);
	free(buf);
}

/* Runs the workload until the power goes; fills the model. */
static void run_workload(struct rc_testbed *tb, struct rc_array *a,
			 struct model *m)
{
	int ret = 0;

	for (uint32_t b = 0; b < BASE_BLOCKS + 64; b++) {
		m->durable[b] = b < BASE_BLOCKS ? 1 : 0;
		m->npend[b] = 0;
	}
	for (size_t i = 0; i < NOPS && ret == 0; i++) {
		const struct op *o = &workload[i];
		uint32_t gen = 10 + (uint32_t)i;

		if (o->len == 0) {
			ret = rc_flush(a);
			if (ret == 0 && !rc_power_is_off(tb->power)) {
				for (uint32_t b = 0; b < BASE_BLOCKS + 64; b++) {
					if (m->npend[b])
						m->durable[b] =
						   m->pend[b][m->npend[b] - 1];
					m->npend[b] = 0;
				}
			}
			continue;
		}
		for (uint32_t b = o->start; b < o->start + o->len; b++)
			m->pend[b][m->npend[b]++] = gen;
		write_gen(a, o->start, o->len, gen, &ret);
	}
	/* The end of the run: one more flush, like a clean unmount. */
	if (ret == 0 && rc_flush(a) == 0 && !rc_power_is_off(tb->power)) {
		for (uint32_t b = 0; b < BASE_BLOCKS + 64; b++) {
			if (m->npend[b])
				m->durable[b] = m->pend[b][m->npend[b] - 1];
			m->npend[b] = 0;
		}
	}
}

static bool block_ok(const struct model *m, uint32_t b, const uint8_t *p)
{
	static const uint8_t zero[RC_BLOCK_SIZE];

	if (m->durable[b] ? tb_check(p, b, m->durable[b])
			  : !memcmp(p, zero, RC_BLOCK_SIZE))
		return true;
	for (uint8_t k = 0; k < m->npend[b]; k++)
		if (tb_check(p, b, m->pend[b][k]))
			return true;
	return false;
}

static void verify(struct rc_testbed *tb, const struct model *m,
		   uint32_t skip, size_t cut)
{
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a = NULL;
	uint8_t *buf = malloc(64 * RC_BLOCK_SIZE);
	struct rc_scrub_report rep;
	char err[512];
	int ret;

	if (!skip) {
		/* Read-only first: the replayed journal is seen through an
		 * overlay and no byte reaches the media. */
		uint64_t before = tb_media_hash(tb);

		tb_devs(tb, devs, false, 0);
		ret = tb_try_assemble(tb, devs, RC_ASSEMBLE_RDONLY, &a, err,
				      sizeof(err));
		if (ret)
			fail_msg("cut %zu: read-only assemble: %s", cut, err);
		for (uint32_t b = 0; b < BASE_BLOCKS + 64; b += 64) {
			assert_int_equal(rc_read(a, b, 64, buf), 0);
			for (uint32_t i = 0; i < 64; i++)
				if (!block_ok(m, b + i,
					      buf + (size_t)i * RC_BLOCK_SIZE))
					fail_msg("cut %zu, read-only: block %u "
						 "wrong", cut, b + i);
		}
		assert_int_equal(rc_array_close(a), 0);
		assert_true(tb_media_hash(tb) == before);
	}
	tb_devs(tb, devs, false, skip);
	ret = tb_try_assemble(tb, devs, 0, &a, err, sizeof(err));
	if (ret)
		fail_msg("cut %zu skip %x: assemble: %s", cut, skip, err);
	for (uint32_t b = 0; b < BASE_BLOCKS + 64; b += 64) {
		assert_int_equal(rc_read(a, b, 64, buf), 0);
		for (uint32_t i = 0; i < 64; i++)
			if (!block_ok(m, b + i, buf + (size_t)i * RC_BLOCK_SIZE))
				fail_msg("cut %zu, members missing %x: block %u "
					 "is neither its flushed value nor an "
					 "in-flight one", cut, skip, b + i);
	}
	if (!skip) {
		/* No parity silently disagreeing with data. */
		assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
		if (rep.csum_errors || rep.parity_mismatches)
			fail_msg("cut %zu: scrub found %llu checksum errors and "
				 "%llu parity mismatches after recovery", cut,
				 (unsigned long long)rep.csum_errors,
				 (unsigned long long)rep.parity_mismatches);
	}
	assert_int_equal(rc_array_close(a), 0);
	free(buf);
}

static void base_fill(struct rc_testbed *tb)
{
	struct rc_array *a = tb_assemble(tb, 0, 0);
	int ret;

	write_gen(a, 0, BASE_BLOCKS, 1, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(rc_array_close(a), 0);
}

/* Writes the workload issues with the power never cut. */
static uint64_t count_writes(struct rc_testbed *tb, const struct cfg *c)
{
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	struct model *m = calloc(1, sizeof(*m));
	char err[256];
	uint64_t n;

	tb_devs_power(tb, devs, c->mode, 1, 0);
	assert_int_equal(tb_try_assemble(tb, devs, 0, &a, err, sizeof(err)), 0);
	n = rc_power_writes(tb->power);
	run_workload(tb, a, m);
	n = rc_power_writes(tb->power) - n;
	rc_array_close(a);
	free(m);
	return n;
}

static void crash_one(struct rc_testbed *tb, const struct cfg *c,
		      uint8_t **base, size_t cut)
{
	struct rc_dev *devs[TB_MAX];
	struct model *m = calloc(1, sizeof(*m));
	struct rc_array *a;
	uint8_t **image;
	char err[256];

	tb_restore(tb, base);
	tb_devs_power(tb, devs, c->mode, cut * 7 + 1, 0);
	assert_int_equal(tb_try_assemble(tb, devs, 0, &a, err, sizeof(err)), 0);
	rc_power_cut_after(tb->power, cut);
	run_workload(tb, a, m);
	assert_true(rc_power_is_off(tb->power));
	rc_array_close(a);             /* fails: the power is off */
	image = tb_snapshot(tb);
	verify(tb, m, 0, cut);
	for (int i = 0; i < c->members; i++) {
		tb_restore(tb, image);
		if (c->level != RC_RAID0)
			verify(tb, m, 1u << i, cut);
		for (int j = i + 1; c->pairs && j < c->members; j++) {
			tb_restore(tb, image);
			verify(tb, m, 1u << i | 1u << j, cut);
		}
	}
	tb_snapshot_free(tb, image);
	free(m);
}

static void test_power_cut_every_write(void **state)
{
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct cfg *c = &cfgs[i];
		struct rc_testbed tb;
		uint8_t **base;
		uint64_t writes;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		base_fill(&tb);
		base = tb_snapshot(&tb);
		writes = count_writes(&tb, c);
		assert_true(writes > 10);
		for (size_t cut = 1; cut <= writes; cut++)
			crash_one(&tb, c, base, cut);
		fprintf(stderr, "%s/%d %s: %llu cut points verified\n",
			rc_level_name(c->level), c->members,
			c->mode == RC_POWER_DROP ? "drop" : "reorder",
			(unsigned long long)writes);
		tb_snapshot_free(&tb, base);
		tb_fini(&tb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_power_cut_every_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
