/*
 * test_arena: the commit's scratch allocator (raidcore/arena.c).
 *
 *   - pieces of a block or more are block-aligned, smaller ones 64-byte
 *     aligned, and no two pieces of one round overlap (each is filled with
 *     its own byte and checked after all were handed out);
 *   - after a reset the same sequence of requests gets the same memory
 *     back: nothing is allocated anew, which is the point of the arena;
 *   - a piece larger than a chunk gets a chunk of its own;
 *   - reset keeps at most "keep" bytes of chunks and frees the rest
 *     (ASan reports a leak or a use after free otherwise).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "array.h"

#define NPIECES 64

static size_t piece_size(int i)
{
	static const size_t sizes[] = { 8, 4096, 65536, 100, 12288, 1, 300000 };

	return sizes[i % (int)(sizeof(sizes) / sizeof(sizes[0]))];
}

static void round_fill(struct rc_arena *ar, uint8_t **p)
{
	for (int i = 0; i < NPIECES; i++) {
		size_t n = piece_size(i);

		p[i] = rc_arena_alloc(ar, n);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % (n >= RC_BLOCK_SIZE ?
						   RC_BLOCK_SIZE : 64), 0);
		memset(p[i], i, n);
	}
	for (int i = 0; i < NPIECES; i++)
		for (size_t k = 0; k < piece_size(i); k++)
			if (p[i][k] != (uint8_t)i)
				fail_msg("piece %d byte %zu overwritten", i, k);
}

static void test_arena_aligned_disjoint_reused(void **state)
{
	struct rc_arena ar = { 0 };
	uint8_t *first[NPIECES], *again[NPIECES];
	uint32_t chunks;

	(void)state;
	round_fill(&ar, first);
	chunks = ar.n;
	assert_true(chunks >= 2);
	rc_arena_reset(&ar, SIZE_MAX);
	assert_int_equal(ar.n, chunks);
	round_fill(&ar, again);
	assert_int_equal(ar.n, chunks);
	assert_memory_equal(first, again, sizeof(first));
	rc_arena_fini(&ar);
	assert_int_equal(ar.n, 0);
	assert_null(ar.c);
}

static void test_arena_big_piece_and_keep(void **state)
{
	struct rc_arena ar = { 0 };
	uint8_t *big, *small;
	size_t kept = 0;

	(void)state;
	small = rc_arena_alloc(&ar, 64);
	big = rc_arena_alloc(&ar, (size_t)5 << 20);
	assert_non_null(small);
	assert_non_null(big);
	memset(big, 0xab, (size_t)5 << 20);
	assert_int_equal(ar.n, 2);
	assert_true(ar.c[1].size >= ((size_t)5 << 20));
	/* keep 1 MiB: the first chunk (1 MiB) stays, the big one goes */
	rc_arena_reset(&ar, (size_t)1 << 20);
	for (uint32_t i = 0; i < ar.n; i++)
		kept += ar.c[i].size;
	assert_int_equal(ar.n, 1);
	assert_true(kept <= ((size_t)1 << 20));
	assert_ptr_equal(rc_arena_alloc(&ar, 64), small);
	rc_arena_reset(&ar, 0);
	assert_int_equal(ar.n, 0);
	rc_arena_fini(&ar);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena_aligned_disjoint_reused),
		cmocka_unit_test(test_arena_big_piece_and_keep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
