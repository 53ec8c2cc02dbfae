/*
 * test_parity: the parity ops table as a specification.
 *
 *   - known answers (D0 = D1 = 0x01 gives Q = 0x03, reduction by 0x11d);
 *   - scalar P and Q equal XOR and sum g^k D_k computed with a bitwise GF
 *     multiply that shares nothing with the implementation's tables;
 *   - every implementation's gen_p and gen_pq equal the scalar ones for
 *     ndata 1..30 (and 40), several lengths, 64-, 32- and 16-aligned
 *     buffers;
 *   - every implementation recovers every single lost column and every pair
 *     (data, P, Q in every combination) back to the original bytes, and
 *     leaves the surviving columns untouched;
 *   - recover() refuses more failures than parity, and malformed failure
 *     lists, with -EINVAL and without writing;
 *   - the start-up choice honours RAIDCORE_PARITY and picks an available
 *     implementation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "parity_impl.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TEST_MAX_DATA 40
#define TEST_MAX_COLS (TEST_MAX_DATA + 2)

/* ---- fixtures ----------------------------------------------------------- */

/* ndata data columns, then P and Q, each len bytes at misalign past a
 * 64-byte boundary, with 64 bytes of slack between columns. */
struct stripe {
	int ndata;
	size_t len;
	unsigned char *mem;
	void *col[TEST_MAX_COLS];
};

static uint64_t rng_next(uint64_t *state)
{
	/* xorshift64* */
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

static void fill_random(void *buf, size_t len, uint64_t *rng)
{
	unsigned char *b = buf;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = rng_next(rng);

		memcpy(b + i, &w, len - i < 8 ? len - i : 8);
	}
}

static void stripe_init(struct stripe *s, int ndata, size_t len,
			size_t misalign, uint64_t seed)
{
	size_t stride = len + 64;
	uint64_t rng = seed * 0x9e3779b97f4a7c15ULL + 1;

	assert_true(ndata >= 1 && ndata <= TEST_MAX_DATA);
	s->ndata = ndata;
	s->len = len;
	s->mem = aligned_alloc(64, (ndata + 2) * stride);
	assert_non_null(s->mem);
	for (int i = 0; i < ndata + 2; i++) {
		s->col[i] = s->mem + i * stride + misalign;
		fill_random(s->col[i], len, &rng);
	}
}

static void stripe_fini(struct stripe *s)
{
	free(s->mem);
}

static unsigned char *stripe_snapshot(const struct stripe *s, int ncols)
{
	unsigned char *copy = malloc(ncols * s->len);

	assert_non_null(copy);
	for (int i = 0; i < ncols; i++)
		memcpy(copy + i * s->len, s->col[i], s->len);
	return copy;
}

/* Column number of the first column differing from the snapshot, or -1. */
static int stripe_diff(const struct stripe *s, int ncols,
		       const unsigned char *copy)
{
	for (int i = 0; i < ncols; i++)
		if (memcmp(copy + i * s->len, s->col[i], s->len))
			return i;
	return -1;
}

/* ---- GF(2^8) done the slow way, independent of the implementations ------ */

static uint8_t slow_gf_mul(uint8_t a, uint8_t b)
{
	uint8_t r = 0;

	while (b) {
		if (b & 1)
			r ^= a;
		a = (uint8_t)((a << 1) ^ (a & 0x80 ? 0x1d : 0));
		b >>= 1;
	}
	return r;
}

static uint8_t slow_gf_pow2(int k)
{
	uint8_t r = 1;

	while (k-- > 0)
		r = slow_gf_mul(r, 2);
	return r;
}

/* ---- the ops table and the choice --------------------------------------- */

static void test_parity_table(void **state)
{
	int n = 0;

	(void)state;
	assert_ptr_equal(rc_parity_all[0], &rc_parity_scalar);
	assert_true(rc_parity_scalar.available());
	for (; rc_parity_all[n]; n++) {
		const struct rc_parity_ops *ops = rc_parity_all[n];

		assert_non_null(ops->name);
		assert_non_null(ops->available);
		assert_non_null(ops->gen_p);
		assert_non_null(ops->gen_pq);
		assert_non_null(ops->recover);
		for (int j = 0; j < n; j++)
			assert_string_not_equal(rc_parity_all[j]->name,
						ops->name);
	}
	assert_int_equal(n, 2);
	assert_ptr_equal(rc_parity_all[1], &rc_parity_isal);
}

static bool is_listed_available(const struct rc_parity_ops *ops)
{
	for (int i = 0; rc_parity_all[i]; i++)
		if (rc_parity_all[i] == ops)
			return ops->available();
	return false;
}

/* Must run before anything else calls rc_parity_best(): it is cached. */
static void test_parity_best_env(void **state)
{
	(void)state;
	assert_int_equal(setenv("RAIDCORE_PARITY", "scalar", 1), 0);
	assert_ptr_equal(rc_parity_best(), &rc_parity_scalar);
	unsetenv("RAIDCORE_PARITY");
	assert_ptr_equal(rc_parity_best(), &rc_parity_scalar);
}

static void test_parity_choose(void **state)
{
	(void)state;
	assert_ptr_equal(rc_parity_choose("scalar"), &rc_parity_scalar);
	if (rc_parity_isal.available())
		assert_ptr_equal(rc_parity_choose("isal"), &rc_parity_isal);
	assert_true(is_listed_available(rc_parity_choose(NULL)));
	assert_true(is_listed_available(rc_parity_choose("")));
	assert_true(is_listed_available(rc_parity_choose("no-such-impl")));
}

/* ---- known answers ------------------------------------------------------ */

struct known_answer {
	int ndata;
	uint8_t d[9];
	uint8_t p, q;
};

static const struct known_answer known_answers[] = {
	{ 1, { 0xab }, 0xab, 0xab },
	{ 2, { 0x01, 0x01 }, 0x00, 0x03 },          /* 1 ^ 2 */
	{ 3, { 0x01, 0x01, 0x01 }, 0x01, 0x07 },    /* 1 ^ 2 ^ 4 */
	{ 2, { 0x00, 0x80 }, 0x80, 0x1d },          /* 2 * 0x80 = 0x11d ^ 0x100 */
	/* 0xff ^ g^8, g^8 = 0x1d */
	{ 9, { 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 0x01, 0xe2 },
	{ 3, { 0x00, 0x00, 0x02 }, 0x02, 0x08 },
};

static void check_known_answer(const struct rc_parity_ops *ops,
			       const struct known_answer *ka, size_t len)
{
	struct stripe s;
	const uint8_t *p, *q;

	stripe_init(&s, ka->ndata, len, 0, 1);
	for (int k = 0; k < ka->ndata; k++)
		memset(s.col[k], ka->d[k], len);
	ops->gen_pq(ka->ndata, len, s.col, s.col[ka->ndata],
		    s.col[ka->ndata + 1]);
	p = s.col[ka->ndata];
	q = s.col[ka->ndata + 1];
	for (size_t i = 0; i < len; i++) {
		if (p[i] != ka->p || q[i] != ka->q)
			fail_msg("%s ndata %d byte %zu: P %#x Q %#x, want %#x %#x",
				 ops->name, ka->ndata, i, p[i], q[i], ka->p,
				 ka->q);
	}
	memset(s.col[ka->ndata], 0x55, len);
	ops->gen_p(ka->ndata, len, s.col, s.col[ka->ndata]);
	for (size_t i = 0; i < len; i++)
		if (p[i] != ka->p)
			fail_msg("%s gen_p ndata %d byte %zu: %#x, want %#x",
				 ops->name, ka->ndata, i, p[i], ka->p);
	stripe_fini(&s);
}

static void test_parity_known_answers(void **state)
{
	(void)state;
	for (int i = 0; rc_parity_all[i]; i++) {
		if (!rc_parity_all[i]->available())
			continue;
		for (size_t j = 0; j < ARRAY_LEN(known_answers); j++) {
			check_known_answer(rc_parity_all[i], &known_answers[j], 64);
			check_known_answer(rc_parity_all[i], &known_answers[j],
					   4096);
		}
	}
}

/* ---- the scalar reference against the slow definition ------------------- */

static void check_scalar_against_slow(int ndata, size_t len)
{
	struct stripe s;
	uint8_t coef[TEST_MAX_DATA];
	const uint8_t *p, *q;

	stripe_init(&s, ndata, len, 16, 100 + ndata);
	for (int k = 0; k < ndata; k++)
		coef[k] = slow_gf_pow2(k);
	rc_parity_scalar.gen_pq(ndata, len, s.col, s.col[ndata],
				s.col[ndata + 1]);
	p = s.col[ndata];
	q = s.col[ndata + 1];
	for (size_t i = 0; i < len; i++) {
		uint8_t wp = 0, wq = 0;

		for (int k = 0; k < ndata; k++) {
			uint8_t d = ((const uint8_t *)s.col[k])[i];

			wp ^= d;
			wq ^= slow_gf_mul(coef[k], d);
		}
		if (p[i] != wp || q[i] != wq)
			fail_msg("ndata %d byte %zu: P %#x Q %#x, want %#x %#x",
				 ndata, i, p[i], q[i], wp, wq);
	}
	stripe_fini(&s);
}

static void test_parity_scalar_slow(void **state)
{
	static const int wide[] = { 31, 40 };

	(void)state;
	for (int ndata = 1; ndata <= 30; ndata++)
		check_scalar_against_slow(ndata, 4096);
	for (size_t i = 0; i < ARRAY_LEN(wide); i++)
		check_scalar_against_slow(wide[i], 1024);
	check_scalar_against_slow(5, 65536);
}

/* ---- every implementation's generation against the scalar one ----------- */

static const size_t gen_lens[] = { 64, 192, 4096, 4160, 65536 };
static const size_t gen_misaligns[] = { 0, 16, 32, 48 };

static void check_gen(const struct rc_parity_ops *ops, int ndata, size_t len,
		      size_t misalign)
{
	struct stripe s;
	unsigned char *ref_p = malloc(len), *ref_q = malloc(len);
	uint64_t seed = (uint64_t)ndata << 32 ^ len << 8 ^ misalign;

	assert_true(ref_p && ref_q);
	stripe_init(&s, ndata, len, misalign, seed);
	rc_parity_scalar.gen_pq(ndata, len, s.col, ref_p, ref_q);

	/* P and Q start random, so stale output cannot pass */
	ops->gen_pq(ndata, len, s.col, s.col[ndata], s.col[ndata + 1]);
	if (memcmp(s.col[ndata], ref_p, len) || memcmp(s.col[ndata + 1], ref_q, len))
		fail_msg("%s gen_pq ndata %d len %zu misalign %zu differs from scalar",
			 ops->name, ndata, len, misalign);
	memset(s.col[ndata], 0xc3, len);
	ops->gen_p(ndata, len, s.col, s.col[ndata]);
	if (memcmp(s.col[ndata], ref_p, len))
		fail_msg("%s gen_p ndata %d len %zu misalign %zu differs from scalar",
			 ops->name, ndata, len, misalign);
	stripe_fini(&s);
	free(ref_p);
	free(ref_q);
}

static void test_parity_gen_matches_scalar(void **state)
{
	(void)state;
	for (int i = 0; rc_parity_all[i]; i++) {
		const struct rc_parity_ops *ops = rc_parity_all[i];

		if (!ops->available())
			continue;
		for (size_t l = 0; l < ARRAY_LEN(gen_lens); l++)
			for (size_t m = 0; m < ARRAY_LEN(gen_misaligns); m++) {
				for (int ndata = 1; ndata <= 30; ndata++)
					check_gen(ops, ndata, gen_lens[l],
						  gen_misaligns[m]);
				check_gen(ops, 40, gen_lens[l], gen_misaligns[m]);
			}
	}
}

/* ---- recovery of every failure set -------------------------------------- */

struct recover_case {
	int ndata;
	size_t len;
	size_t misalign;
};

static const struct recover_case recover_cases[] = {
	{ 1, 4096, 0 }, { 2, 4096, 0 }, { 3, 4096, 0 }, { 4, 4096, 0 },
	{ 5, 4096, 0 }, { 6, 4096, 0 }, { 7, 4096, 0 }, { 8, 4096, 0 },
	{ 1, 65536, 0 }, { 2, 65536, 0 }, { 3, 65536, 0 }, { 4, 65536, 0 },
	{ 5, 65536, 0 }, { 6, 65536, 0 }, { 7, 65536, 0 }, { 8, 65536, 0 },
	{ 1, 4096, 16 }, { 2, 4096, 16 }, { 3, 4096, 32 }, { 4, 4096, 16 },
	{ 5, 4096, 48 }, { 6, 4096, 16 }, { 7, 4096, 32 }, { 8, 4096, 16 },
	{ 3, 192, 16 }, { 5, 4160, 48 }, { 2, 64, 0 }, { 8, 64, 32 },
	{ 9, 4096, 0 }, { 12, 4096, 16 }, { 16, 4096, 0 }, { 23, 4096, 32 },
	{ 30, 4096, 0 }, { 30, 4096, 16 }, { 31, 4096, 0 }, { 16, 65536, 0 },
};

/* Lose the listed columns, recover, and expect the whole stripe back. */
static void check_recover_one(const struct rc_parity_ops *ops,
			      struct stripe *s, int nparity,
			      const unsigned char *orig, const int *failed,
			      int nfailed, uint64_t *rng)
{
	int ncols = s->ndata + nparity, ret, bad;

	for (int i = 0; i < nfailed; i++)
		fill_random(s->col[failed[i]], s->len, rng);
	ret = ops->recover(s->ndata, nparity, s->len, s->col, failed, nfailed);
	bad = stripe_diff(s, ncols, orig);
	if (ret != 0 || bad >= 0)
		fail_msg("%s ndata %d nparity %d len %zu lost {%d,%d}: ret %d, "
			 "column %d wrong", ops->name, s->ndata, nparity, s->len,
			 nfailed > 0 ? failed[0] : -1,
			 nfailed > 1 ? failed[1] : -1, ret, bad);
}

static void check_recover_case(const struct rc_parity_ops *ops,
			       const struct recover_case *rc, int nparity)
{
	struct stripe s;
	unsigned char *orig;
	int ncols = rc->ndata + nparity;
	uint64_t rng = 7;

	stripe_init(&s, rc->ndata, rc->len, rc->misalign, rc->ndata * 31 + nparity);
	rc_parity_scalar.gen_pq(rc->ndata, rc->len, s.col, s.col[rc->ndata],
				s.col[rc->ndata + 1]);
	orig = stripe_snapshot(&s, ncols);
	check_recover_one(ops, &s, nparity, orig, NULL, 0, &rng);
	for (int a = 0; a < ncols; a++) {
		check_recover_one(ops, &s, nparity, orig, (int[]){ a }, 1, &rng);
		for (int b = a + 1; b < ncols && nparity == 2; b++)
			check_recover_one(ops, &s, nparity, orig,
					  (int[]){ a, b }, 2, &rng);
	}
	free(orig);
	stripe_fini(&s);
}

static void test_parity_recover_every_failure(void **state)
{
	(void)state;
	for (int i = 0; rc_parity_all[i]; i++) {
		if (!rc_parity_all[i]->available())
			continue;
		for (size_t c = 0; c < ARRAY_LEN(recover_cases); c++) {
			check_recover_case(rc_parity_all[i], &recover_cases[c], 1);
			check_recover_case(rc_parity_all[i], &recover_cases[c], 2);
		}
	}
}

/* ---- bad arguments ------------------------------------------------------ */

struct einval_case {
	const char *what;
	int ndata, nparity;
	size_t len;
	int failed[3];
	int nfailed;
};

static const struct einval_case einval_cases[] = {
	{ "2 lost, 1 parity", 4, 1, 4096, { 0, 1 }, 2 },
	{ "data+P lost, 1 parity", 4, 1, 4096, { 0, 4 }, 2 },
	{ "3 lost, 2 parity", 4, 2, 4096, { 0, 1, 2 }, 3 },
	{ "3 lost incl. P and Q", 4, 2, 4096, { 0, 4, 5 }, 3 },
	{ "descending", 4, 2, 4096, { 1, 0 }, 2 },
	{ "duplicate", 4, 2, 4096, { 2, 2 }, 2 },
	{ "Q with 1 parity", 4, 1, 4096, { 5 }, 1 },
	{ "past Q", 4, 2, 4096, { 6 }, 1 },
	{ "negative column", 4, 2, 4096, { -1 }, 1 },
	{ "negative count", 4, 2, 4096, { 0 }, -1 },
	{ "no parity", 4, 0, 4096, { 0 }, 1 },
	{ "3 parity", 4, 3, 4096, { 0 }, 1 },
	{ "no data", 0, 2, 4096, { 0 }, 1 },
	{ "too wide", RC_PARITY_MAX_DATA + 1, 2, 4096, { 0 }, 1 },
	{ "len 0", 4, 2, 0, { 0 }, 1 },
	{ "len not 64-multiple", 4, 2, 4000, { 0 }, 1 },
};

static void test_parity_recover_einval(void **state)
{
	(void)state;
	for (int i = 0; rc_parity_all[i]; i++) {
		const struct rc_parity_ops *ops = rc_parity_all[i];

		if (!ops->available())
			continue;
		for (size_t c = 0; c < ARRAY_LEN(einval_cases); c++) {
			const struct einval_case *ec = &einval_cases[c];
			struct stripe s;
			unsigned char *orig;
			int ret, bad;

			stripe_init(&s, 32, 4096, 0, c);
			orig = stripe_snapshot(&s, 34);
			ret = ops->recover(ec->ndata, ec->nparity, ec->len,
					   s.col, ec->failed, ec->nfailed);
			bad = stripe_diff(&s, 34, orig);
			if (ret != -EINVAL || bad >= 0)
				fail_msg("%s %s: ret %d, column %d written",
					 ops->name, ec->what, ret, bad);
			free(orig);
			stripe_fini(&s);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parity_best_env),
		cmocka_unit_test(test_parity_table),
		cmocka_unit_test(test_parity_choose),
		cmocka_unit_test(test_parity_known_answers),
		cmocka_unit_test(test_parity_scalar_slow),
		cmocka_unit_test(test_parity_gen_matches_scalar),
		cmocka_unit_test(test_parity_recover_every_failure),
		cmocka_unit_test(test_parity_recover_einval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
