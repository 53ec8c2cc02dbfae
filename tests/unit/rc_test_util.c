/* rc_test_util: see rc_test_util.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>
#include "rc_test_util.h"

struct rc_dev *tb_borrow(struct rc_testbed *tb, int i)
{
	struct rc_dev *d;

	assert_int_equal(rc_dev_mem_share(tb->mem[i], &d), 0);
	return d;
}

void tb_init(struct rc_testbed *tb, int n, uint64_t dev_bytes)
{
	memset(tb, 0, sizeof(*tb));
	tb->n = n;
	tb->dev_bytes = dev_bytes;
	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "mem%d", i);
		assert_int_equal(rc_dev_mem_create(dev_bytes, name, &tb->mem[i]),
				 0);
	}
}

static void snap_free(struct rc_testbed *tb, uint8_t **snap)
{
	for (int i = 0; i < tb->n; i++)
		free(snap[i]);
	free(snap);
}

void tb_fini(struct rc_testbed *tb)
{
	while (tb->npool)
		snap_free(tb, tb->pool[--tb->npool]);
	for (int i = 0; i < tb->n; i++)
		rc_dev_close(tb->mem[i]);
	if (tb->power)
		rc_power_destroy(tb->power);
	memset(tb, 0, sizeof(*tb));
}

static void devs_wrap(struct rc_testbed *tb, struct rc_dev **out,
		      struct rc_power *power, uint32_t skip)
{
	if (tb->power)
		rc_power_destroy(tb->power);
	tb->power = power;
	for (int i = 0; i < tb->n; i++) {
		tb->fault[i] = NULL;
		out[i] = NULL;
		if (skip >> i & 1)
			continue;
		assert_int_equal(rc_fault_wrap(tb_borrow(tb, i), tb->power,
					       &out[i], &tb->fault[i]), 0);
	}
}

void tb_devs(struct rc_testbed *tb, struct rc_dev **out, bool power,
	     uint32_t skip)
{
	devs_wrap(tb, out, power ? rc_power_create(RC_POWER_DROP, 1) : NULL,
		  skip);
}

void tb_devs_power(struct rc_testbed *tb, struct rc_dev **out,
		   enum rc_power_mode mode, uint64_t seed, uint32_t skip)
{
	devs_wrap(tb, out, rc_power_create(mode, seed), skip);
}

uint8_t **tb_snapshot(struct rc_testbed *tb)
{
	uint8_t **snap = tb->npool ? tb->pool[--tb->npool] :
			 calloc((size_t)tb->n, sizeof(*snap));

	assert_non_null(snap);
	for (int i = 0; i < tb->n; i++) {
		if (!snap[i])
			snap[i] = malloc(tb->dev_bytes);
		assert_non_null(snap[i]);
		assert_int_equal(rc_dev_read(tb->mem[i], snap[i], tb->dev_bytes,
					     0), 0);
	}
	return snap;
}

void tb_restore(struct rc_testbed *tb, uint8_t **snap)
{
	for (int i = 0; i < tb->n; i++)
		assert_int_equal(rc_dev_write(tb->mem[i], snap[i],
					      tb->dev_bytes, 0), 0);
}

void tb_snapshot_free(struct rc_testbed *tb, uint8_t **snap)
{
	int max = (int)(sizeof(tb->pool) / sizeof(tb->pool[0]));

	if (tb->npool < max)
		tb->pool[tb->npool++] = snap;
	else
		snap_free(tb, snap);
}

uint64_t tb_media_hash(struct rc_testbed *tb)
{
	uint8_t **snap = tb_snapshot(tb);
	uint64_t h = 0;

	for (int i = 0; i < tb->n; i++)
		h = h * 31 + XXH3_64bits(snap[i], tb->dev_bytes);
	tb_snapshot_free(tb, snap);
	return h;
}

int tb_try_assemble(struct rc_testbed *tb, struct rc_dev **devs,
		    unsigned flags, struct rc_array **out, char *err,
		    size_t len)
{
	int ret = rc_array_assemble(devs, tb->n, flags, out, err, len);

	if (ret < 0) {
		for (int i = 0; i < tb->n; i++)
			rc_dev_close(devs[i]);
	}
	return ret;
}

void tb_create(struct rc_testbed *tb, enum rc_level level, uint32_t chunk,
	       int nspares)
{
	struct rc_create_params p = { .level = level, .chunk_bytes = chunk,
				      .nspares = nspares };
	struct rc_dev *devs[TB_MAX];
	char err[256];
	int ret;

	for (int i = 0; i < tb->n; i++)
		devs[i] = tb_borrow(tb, i);
	ret = rc_array_create_err(&p, devs, tb->n, err, sizeof(err));
	if (ret)
		fprintf(stderr, "create: %s\n", err);
	assert_int_equal(ret, 0);
	for (int i = 0; i < tb->n; i++)
		rc_dev_close(devs[i]);
}

struct rc_array *tb_assemble(struct rc_testbed *tb, uint32_t skip,
			     unsigned flags)
{
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a = NULL;
	char err[512];
	int ret;

	tb_devs(tb, devs, false, skip);
	ret = rc_array_assemble(devs, tb->n, flags, &a, err, sizeof(err));
	if (ret)
		fprintf(stderr, "assemble: %s\n", err);
	assert_int_equal(ret, 0);
	return a;
}

uint64_t tb_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void tb_pattern(void *buf, uint64_t b, uint32_t gen)
{
	uint64_t s = b * 1000003 + gen, *w = buf;

	for (size_t i = 0; i < RC_BLOCK_SIZE / 8; i++)
		w[i] = tb_rand(&s);
}

bool tb_check(const void *buf, uint64_t b, uint32_t gen)
{
	uint64_t want[RC_BLOCK_SIZE / 8];

	tb_pattern(want, b, gen);
	return memcmp(want, buf, RC_BLOCK_SIZE) == 0;
}

void tb_scrub_clean(struct rc_array *a, const char *what)
{
	struct rc_scrub_report rep;

	assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
	if (rep.csum_errors || rep.parity_mismatches || rep.unrecoverable)
		fail_msg("%s: scrub found %llu checksum errors, %llu parity "
			 "mismatches, %llu unrecoverable blocks", what,
			 (unsigned long long)rep.csum_errors,
			 (unsigned long long)rep.parity_mismatches,
			 (unsigned long long)rep.unrecoverable);
}
