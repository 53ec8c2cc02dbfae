/*
 * test_array: raidcore end to end on memory members - every level and
 * member count, healthy, degraded (members missing at assembly, failing
 * with EIO mid-run, vanishing), written while degraded, rebuilt.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <pthread.h>
#include <time.h>
#include "array.h"
#include "rc_test_util.h"

#define DEV_BYTES (6ull << 20)

struct cfg {
	enum rc_level level;
	int members;
	uint32_t chunk;
};

static const struct cfg cfgs[] = {
	{ RC_RAID0, 2, 4096 }, { RC_RAID0, 3, 65536 },
	{ RC_RAID1, 2, 16384 }, { RC_RAID1, 3, 4096 },
	{ RC_RAID4, 3, 16384 }, { RC_RAID4, 5, 4096 },
	{ RC_RAID5, 3, 4096 }, { RC_RAID5, 4, 65536 }, { RC_RAID5, 5, 16384 },
	{ RC_RAID5, 8, 8192 },
	{ RC_RAID6, 4, 16384 }, { RC_RAID6, 5, 4096 }, { RC_RAID6, 6, 65536 },
	{ RC_RAID10, 2, 16384 }, { RC_RAID10, 3, 4096 }, { RC_RAID10, 4, 65536 },
};

/* What the test believes is on the array: generation per block, 0 = never
 * written (reads as zeros). */
struct model {
	uint64_t blocks;
	uint32_t *gen;
	uint32_t next_gen;
};

static void model_init(struct model *m, struct rc_array *a)
{
	struct rc_info info;

	rc_array_info(a, &info);
	m->blocks = info.blocks;
	m->gen = calloc(m->blocks, sizeof(uint32_t));
	m->next_gen = 1;
	assert_non_null(m->gen);
}

/* Writes count random extents of random length (some whole stripes). */
static void write_random(struct rc_array *a, struct model *m, uint64_t *seed,
			 int count)
{
	struct rc_info info;
	uint8_t *buf = malloc(256 * RC_BLOCK_SIZE);

	rc_array_info(a, &info);
	for (int i = 0; i < count; i++) {
		uint64_t len = 1 + tb_rand(seed) % (tb_rand(seed) % 3 ? 8 : 200);
		uint64_t start = tb_rand(seed) % m->blocks;
		uint32_t gen = m->next_gen++;

		if (i % 5 == 0) {       /* a run of whole stripes */
			start -= start % info.stripe_blocks;
			len = info.stripe_blocks * (1 + tb_rand(seed) % 2);
			len = len > 256 ? 256 : len;
		}
		if (start + len > m->blocks)
			len = m->blocks - start;
		for (uint64_t b = 0; b < len; b++) {
			tb_pattern(buf + b * RC_BLOCK_SIZE, start + b, gen);
			m->gen[start + b] = gen;
		}
		assert_int_equal(rc_write(a, start, (uint32_t)len, buf), 0);
	}
	free(buf);
}

/* Every block written (generation 1) and flushed. */
static void write_all(struct rc_array *a, struct model *m)
{
	uint8_t *buf = malloc(256 * RC_BLOCK_SIZE);

	assert_non_null(buf);
	for (uint64_t b = 0; b < m->blocks; b += 256) {
		uint32_t n = m->blocks - b < 256 ? (uint32_t)(m->blocks - b) : 256;

		for (uint32_t k = 0; k < n; k++) {
			tb_pattern(buf + (size_t)k * RC_BLOCK_SIZE, b + k, 1);
			m->gen[b + k] = 1;
		}
		assert_int_equal(rc_write(a, b, n, buf), 0);
	}
	assert_int_equal(rc_flush(a), 0);
	free(buf);
}

static void verify_all(struct rc_array *a, const struct model *m)
{
	uint8_t *buf = malloc(64 * RC_BLOCK_SIZE), zero[RC_BLOCK_SIZE] = { 0 };

	for (uint64_t b = 0; b < m->blocks; b += 64) {
		uint32_t n = m->blocks - b < 64 ? (uint32_t)(m->blocks - b) : 64;

		assert_int_equal(rc_read(a, b, n, buf), 0);
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *p = buf + (size_t)i * RC_BLOCK_SIZE;
			bool ok = m->gen[b + i] ? tb_check(p, b + i, m->gen[b + i])
						: !memcmp(p, zero, RC_BLOCK_SIZE);
			if (!ok)
				fail_msg("block %llu (gen %u) reads wrong",
					 (unsigned long long)(b + i), m->gen[b + i]);
		}
	}
	free(buf);
}

/* Every block reads back; again after a close and an assembly without
 * the members in skip. */
static void verify_close_lose(struct rc_testbed *tb, struct rc_array *a,
			      const struct model *m, uint32_t skip)
{
	verify_all(a, m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(tb, skip, 0);
	verify_all(a, m);
	assert_int_equal(rc_array_close(a), 0);
}

static void test_roundtrip(void **state)
{
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct cfg *c = &cfgs[i];
		struct rc_testbed tb;
		struct rc_array *a;
		struct model m;
		uint64_t seed = i + 1;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		model_init(&m, a);
		write_random(a, &m, &seed, 60);
		verify_all(a, &m);          /* from the cache and the media */
		assert_int_equal(rc_flush(a), 0);
		verify_all(a, &m);
		write_random(a, &m, &seed, 30);
		assert_int_equal(rc_array_close(a), 0);
		a = tb_assemble(&tb, 0, 0);
		verify_all(a, &m);
		{
			struct rc_info info;

			rc_array_info(a, &info);
			assert_false(info.degraded);
			assert_false(info.was_unclean);
		}
		assert_int_equal(rc_array_close(a), 0);
		free(m.gen);
		tb_fini(&tb);
	}
}

static int redundancy(const struct cfg *c)
{
	switch (c->level) {
	case RC_RAID0: return 0;
	case RC_RAID1: return c->members - 1;
	case RC_RAID6: return 2;
	default: return 1;
	}
}

/* Failure sets: every single member, and for RAID 6 every pair. */
static int fail_sets(const struct cfg *c, uint32_t *sets)
{
	int n = 0;

	if (redundancy(c) == 0)
		return 0;
	for (int i = 0; i < c->members; i++)
		sets[n++] = 1u << i;
	if (c->level == RC_RAID6 || (c->level == RC_RAID1 && c->members > 2))
		for (int i = 0; i < c->members; i++)
			for (int j = i + 1; j < c->members; j++)
				sets[n++] = 1u << i | 1u << j;
	return n;
}

static void replace_all(struct rc_testbed *tb, struct rc_array *a,
			uint32_t set)
{
	for (int s = 0; s < tb->n; s++)
		if (set >> s & 1)
			assert_int_equal(rc_member_replace(a, s, tb_borrow(tb, s),
							   NULL, NULL), 0);
}

/* Missing at assembly, written degraded, re-added, then another member
 * removed: everything reads back. */
static void test_degraded_missing(void **state)
{
	uint32_t sets[64];

	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct cfg *c = &cfgs[i];
		int nsets = fail_sets(c, sets);

		for (int f = 0; f < nsets; f++) {
			struct rc_testbed tb;
			struct rc_array *a;
			struct rc_info info;
			struct model m;
			uint64_t seed = 100 + i * 64 + (uint64_t)f;
			uint32_t other;

			tb_init(&tb, c->members, DEV_BYTES);
			tb_create(&tb, c->level, c->chunk, 0);
			a = tb_assemble(&tb, 0, 0);
			model_init(&m, a);
			write_random(a, &m, &seed, 25);
			assert_int_equal(rc_array_close(a), 0);

			a = tb_assemble(&tb, sets[f], 0);
			rc_array_info(a, &info);
			assert_true(info.degraded);
			verify_all(a, &m);
			write_random(a, &m, &seed, 25);
			assert_int_equal(rc_flush(a), 0);
			verify_all(a, &m);
			assert_int_equal(rc_array_close(a), 0);

			/* Back with all members: the returning ones are stale. */
			a = tb_assemble(&tb, 0, 0);
			rc_array_info(a, &info);
			assert_true(info.degraded);
			verify_all(a, &m);
			replace_all(&tb, a, sets[f]);
			rc_array_info(a, &info);
			assert_false(info.degraded);
			verify_all(a, &m);
			assert_int_equal(rc_array_close(a), 0);

			/* Fully redundant again: lose a member that was not
			 * rebuilt. */
			other = 0;
			for (int s = 0; s < c->members && !other; s++)
				if (!(sets[f] >> s & 1))
					other = 1u << s;
			a = tb_assemble(&tb, other, 0);
			verify_all(a, &m);
			assert_int_equal(rc_array_close(a), 0);
			free(m.gen);
			tb_fini(&tb);
		}
	}
}

/*
 * A rebuild writes the new device in large runs: the rows it reconstructs
 * for consecutive stripes lie side by side on the device and go out as one
 * write (rebuild.c, rebuild_rows_pipe), not one write per block - on a
 * disk opened O_DIRECT a block at a time is a fraction of its speed.
 * RAID 10 too: a run of its stripes lies in a run of member rows.  The
 * whole array is written while slot 1 is missing, so the catch-up rebuilds
 * every stripe; then every block reads back, before and after another
 * member is lost.
 */
static void test_rebuild_large_writes(void **state)
{
	static const struct cfg rcfgs[] = {
		{ RC_RAID5, 4, 65536 }, { RC_RAID6, 5, 4096 },
		{ RC_RAID4, 3, 16384 }, { RC_RAID1, 3, 4096 },
		{ RC_RAID10, 3, 4096 }, { RC_RAID10, 4, 4096 },
		{ RC_RAID10, 2, 16384 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rcfgs) / sizeof(rcfgs[0]); i++) {
		const struct cfg *c = &rcfgs[i];
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_dev *dev;
		struct rc_fault *ctl;
		struct model m;
		uint64_t writes, blocks;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 1u << 1, 0);
		model_init(&m, a);
		write_all(a, &m);
		assert_int_equal(rc_fault_wrap(tb_borrow(&tb, 1), NULL, &dev,
					       &ctl), 0);
		assert_int_equal(rc_member_replace(a, 1, dev, NULL, NULL), 0);
		writes = rc_fault_writes(ctl);
		blocks = rc_fault_bytes_written(ctl) / RC_BLOCK_SIZE;
		if (blocks < m.blocks / (uint64_t)c->members || writes * 8 > blocks)
			fail_msg("%s: the rebuild wrote %llu blocks in %llu writes",
				 rc_level_name(c->level), (unsigned long long)blocks,
				 (unsigned long long)writes);
		verify_close_lose(&tb, a, &m, 1u << 0);
		free(m.gen);
		tb_fini(&tb);
	}
}

/*
 * The rebuild's pipeline (rebuild.c, rebuild_rows_pipe: the survivors
 * read the next step while this one is reconstructed and written) meets
 * faults in its middle step.  A survivor's read errors at RAID 6 cost
 * nothing: the rebuild ends, every block reads back, also with another
 * member lost.  A write error on the new device at RAID 5 fails the
 * rebuild and the device (faulty, as md fails a device that fails a
 * write; it stayed "rebuilding" for good before), every block still
 * reads back meanwhile, and a rebuild onto a good device ends with a
 * device that holds every block.
 */
static void test_rebuild_pipeline_faults(void **state)
{
	/* the data region starts at 2 MiB on these members (FORMAT.md,
	 * member layout): block 700 of it is in the second step's stripes */
	uint64_t mid = (2ull << 20) + 700 * RC_BLOCK_SIZE;
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_dev *dev;
	struct rc_fault *ctl;
	struct rc_info info;
	struct model m;

	(void)state;
	tb_init(&tb, 5, DEV_BYTES);     /* 4 KiB chunks: 512 stripes a step */
	tb_create(&tb, RC_RAID6, 4096, 0);
	a = tb_assemble(&tb, 1u << 1, 0);
	model_init(&m, a);
	write_all(a, &m);
	assert_int_equal(rc_fault_eio(tb.fault[2], RC_FAULT_READ, mid, 64 << 10,
				      RC_FAULT_PERSISTENT), 0);
	assert_int_equal(rc_member_replace(a, 1, tb_borrow(&tb, 1), NULL,
					   NULL), 0);
	rc_array_member_status(a, 2, &st);
	assert_true(st.read_errors > 0);        /* the fault was met */
	rc_fault_clear(tb.fault[2]);
	verify_close_lose(&tb, a, &m, 1u << 0);
	free(m.gen);
	tb_fini(&tb);

	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 4096, 0);
	a = tb_assemble(&tb, 1u << 1, 0);
	model_init(&m, a);
	write_all(a, &m);
	rc_array_info(a, &info);
	assert_int_equal(rc_fault_wrap(tb_borrow(&tb, 1), NULL, &dev, &ctl), 0);
	assert_int_equal(rc_fault_eio(ctl, RC_FAULT_WRITE, mid, RC_BLOCK_SIZE,
				      1), 0);
	assert_true(rc_member_replace(a, 1, dev, NULL, NULL) < 0);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_FAULTY);
	assert_true(info.stripes > 700);
	verify_all(a, &m);
	assert_int_equal(rc_member_remove(a, 1), 0);
	assert_int_equal(rc_member_replace(a, 1, tb_borrow(&tb, 1), NULL,
					   NULL), 0);
	verify_close_lose(&tb, a, &m, 1u << 0);
	free(m.gen);
	tb_fini(&tb);
}

/*
 * A block a rebuild could not reconstruct has a poisoned entry on the new
 * device (RC_CSUM_POISON).  Once the other columns are whole again, a read
 * of it is reconstructed and repaired - and it is not an error of the
 * device: counted as one, 33 such blocks faulted the healthy new member
 * (too many checksum errors) and took the redundancy the rebuild had
 * restored (a tester's report).
 */
static void test_poisoned_entry_not_an_error(void **state)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct model m;
	uint8_t buf[RC_BLOCK_SIZE];

	(void)state;
	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 4096, 0);
	a = tb_assemble(&tb, 0, 0);
	model_init(&m, a);
	write_all(a, &m);
	assert_int_equal(rc_flush(a), 0);
	/* member 1's first 64 data-region blocks: written, then poisoned,
	 * the first 32 of them zeros on the media too (a rebuild that could
	 * not make them wrote nothing there): those are written again from
	 * redundancy, the others' entries re-derived */
	memset(buf, 0, sizeof(buf));
	for (uint64_t mb = 0; mb < 64; mb++) {
		assert_int_equal(rc_csum_update(a, 1, mb, RC_CSUM_POISON), 0);
		if (mb < 32)
			assert_int_equal(rc_dev_write(tb.mem[1], buf,
						      RC_BLOCK_SIZE,
						      rc_abs(a, mb) *
						      RC_BLOCK_SIZE), 0);
	}
	verify_all(a, &m);
	assert_int_equal(rc_array_member_status(a, 1, &st), 0);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	if (st.csum_errors)
		fail_msg("%llu poisoned entries counted as checksum errors",
			 (unsigned long long)st.csum_errors);
	/* the data blocks' entries are re-derived: read again, they verify
	 * at once (the parity rows' stay poisoned until a scrub) */
	assert_int_equal(rc_read(a, 0, 1, buf), 0);
	verify_all(a, &m);
	assert_int_equal(rc_array_member_status(a, 1, &st), 0);
	assert_int_equal(st.csum_errors, 0);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

struct batch_log {
	int n;
	uint64_t done[32];
};

static void batch_logged(void *ctx, uint64_t done, uint64_t total)
{
	struct batch_log *lg = ctx;

	(void)total;
	if (lg->n < 32)
		lg->done[lg->n] = done;
	lg->n++;
}

/*
 * Each batch's end drains the rebuild's pipeline and checkpoints.  On an
 * idle array a batch runs on past its 32 MiB of each member, to a
 * sixteenth of the member (at most 256 MiB); one that anybody waits on
 * commit_lock for ends at 32 MiB.  rc_member_replace's progress reports
 * each batch's end.  Members of 768 MiB (memory devices, never written
 * but for their metadata): batches of 48 MiB, not 32.
 */
static void test_rebuild_long_batches(void **state)
{
	const uint64_t per = (32ull << 20) / 4096;      /* stripes: 4 KiB rows */
	struct batch_log lg = { 0 };
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	uint64_t most;

	(void)state;
	tb_init(&tb, 4, 768ull << 20);
	tb_create(&tb, RC_RAID5, 4096, 0);
	a = tb_assemble(&tb, 1u << 1, 0);
	rc_array_info(a, &info);
	most = info.stripes / 16;
	assert_true(most > per + per / 4 && most < 2 * per);
	assert_int_equal(rc_member_replace(a, 1, tb_borrow(&tb, 1),
					   batch_logged, &lg), 0);
	assert_int_equal(lg.n, (int)((info.stripes + most - 1) / most));
	for (int i = 0; i + 1 < lg.n; i++)
		assert_int_equal(lg.done[i], (uint64_t)(i + 1) * most);
	assert_int_equal(rc_array_close(a), 0);

	memset(&lg, 0, sizeof(lg));
	a = tb_assemble(&tb, 1u << 2, 0);
	atomic_store(&a->commit_waiting, 1);    /* as if a commit waited */
	assert_int_equal(rc_member_replace(a, 2, tb_borrow(&tb, 2),
					   batch_logged, &lg), 0);
	atomic_store(&a->commit_waiting, 0);
	assert_int_equal(lg.n, (int)((info.stripes + per - 1) / per));
	for (int i = 0; i + 1 < lg.n; i++)
		assert_int_equal(lg.done[i], (uint64_t)(i + 1) * per);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

struct lookup {
	struct rc_array *a;
	int slot;
	int ret;
	uint64_t csum;
	bool done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void *lookup_run(void *arg)
{
	struct lookup *l = arg;
	int ret = rc_csum_entry(l->a, l->slot, 0, &l->csum);

	pthread_mutex_lock(&l->lock);
	l->ret = ret;
	l->done = true;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static void lookup_start(struct lookup *l, pthread_t *t, struct rc_array *a,
			 int slot)
{
	memset(l, 0, sizeof(*l));
	l->a = a;
	l->slot = slot;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	assert_int_equal(pthread_create(t, NULL, lookup_run, l), 0);
}

/* Whether the lookup ended within secs. */
static bool lookup_ended(struct lookup *l, int secs)
{
	struct timespec ts;
	bool done;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	pthread_mutex_lock(&l->lock);
	while (!l->done && pthread_cond_timedwait(&l->cond, &l->lock, &ts) == 0)
		;
	done = l->done;
	pthread_mutex_unlock(&l->lock);
	return done;
}

/*
 * A checksum table block missing from the cache is read from its member
 * without csum_lock held: while member 0 has not answered such a read
 * (its table reads held), a lookup in member 1's tables ends, and a second
 * lookup of the same block of member 0 waits for the same answer; both
 * then see the entry the write left.
 */
static void test_csum_miss_unlocked(void **state)
{
	struct lookup l0, l0b, l1;
	pthread_t t0, t0b, t1;
	struct rc_testbed tb;
	struct rc_array *a;
	struct model m;
	uint64_t tables;
	bool ended;

	(void)state;
	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 4096, 0);
	a = tb_assemble(&tb, 0, 0);
	model_init(&m, a);
	write_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);             /* the table cache is cold */
	tables = a->sb.csum_offset * RC_BLOCK_SIZE;
	rc_fault_hold(tb.fault[0], RC_FAULT_READ, tables,
		      a->sb.csum_blocks * RC_BLOCK_SIZE);
	lookup_start(&l0, &t0, a, 0);
	rc_fault_wait_held(tb.fault[0], 1);
	lookup_start(&l0b, &t0b, a, 0);
	lookup_start(&l1, &t1, a, 1);
	ended = lookup_ended(&l1, 10);
	rc_fault_wait_held(tb.fault[0], ended ? 2 : 1);
	rc_fault_release(tb.fault[0]);
	pthread_join(t0, NULL);
	pthread_join(t0b, NULL);
	pthread_join(t1, NULL);
	assert_true(ended);
	assert_int_equal(l1.ret, RC_ENTRY_SUM);
	assert_int_equal(l0.ret, RC_ENTRY_SUM);
	assert_int_equal(l0b.ret, RC_ENTRY_SUM);
	assert_true(l0.csum == l0b.csum);
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/* An rc_flush (block UINT64_MAX) or an rc_read in a thread of its own. */
struct bg_io {
	struct rc_array *a;
	uint64_t block;
	uint32_t count;
	uint8_t buf[16 * RC_BLOCK_SIZE];
	int ret;
};

static void *bg_io_run(void *arg)
{
	struct bg_io *b = arg;

	b->ret = b->block == UINT64_MAX ? rc_flush(b->a) :
		 rc_read(b->a, b->block, b->count, b->buf);
	return NULL;
}

/* Whether slot's device reads (or writes) its watched block within ms. */
static bool watched_io(struct rc_testbed *tb, int slot, int ms)
{
	for (int i = 0; i < ms && !rc_fault_watched(tb->fault[slot]); i++)
		usleep(1000);
	return rc_fault_watched(tb->fault[slot]) > 0;
}

/*
 * Runs b (a flush or a read) with member x's requests of kind op (reads
 * or writes) of its block xb held; returns whether members y and z did
 * theirs of blocks yb and zb meanwhile (within ms).  Done one after the
 * other, as before they overlapped, the held one stops the rest.
 */
static bool overlap_seen(struct rc_testbed *tb, struct bg_io *b,
			 enum rc_fault_op op, int x, uint64_t xb, int y,
			 uint64_t yb, int z, uint64_t zb, int ms)
{
	pthread_t t;
	bool seen;

	rc_fault_watch(tb->fault[y], op, yb * RC_BLOCK_SIZE, RC_BLOCK_SIZE);
	rc_fault_watch(tb->fault[z], op, zb * RC_BLOCK_SIZE, RC_BLOCK_SIZE);
	rc_fault_hold(tb->fault[x], op, xb * RC_BLOCK_SIZE, RC_BLOCK_SIZE);
	assert_int_equal(pthread_create(&t, NULL, bg_io_run, b), 0);
	rc_fault_wait_held(tb->fault[x], 1);
	seen = watched_io(tb, y, ms) && watched_io(tb, z, ms);
	rc_fault_release(tb->fault[x]);
	pthread_join(t, NULL);
	assert_int_equal(b->ret, 0);
	return seen;
}

/*
 * RAID 5 of 4, one-block chunks (3 data columns).  A read of stripe 0's
 * three blocks with its column 0's read held: do columns 1 and 2 read
 * meanwhile?
 */
static bool read_overlaps(struct rc_testbed *tb, struct rc_array *a, int ms)
{
	struct bg_io b = { .a = a, .block = 0, .count = 3 };
	struct rc_stripe_map m0;

	rc_geom_stripe(&a->g, 0, &m0);
	return overlap_seen(tb, &b, RC_FAULT_READ, (int)m0.col[0].member,
			    rc_abs(a, m0.col[0].offset),
			    (int)m0.col[1].member, rc_abs(a, m0.col[1].offset),
			    (int)m0.col[2].member, rc_abs(a, m0.col[2].offset),
			    ms);
}

/*
 * The same array: stripe 0's column 0 and stripe s's column 0 rewritten,
 * then flushed.  Each stripe's new parity reads its two clean columns
 * (reconstruct-write); with stripe 0's column 1 read held, do stripe s's
 * (on the two members stripe 0 does not read) read meanwhile?
 */
static bool commit_overlaps(struct rc_testbed *tb, struct rc_array *a,
			    struct model *m, int ms)
{
	struct bg_io b = { .a = a, .block = UINT64_MAX };
	struct rc_stripe_map m0, mp;
	uint8_t buf[RC_BLOCK_SIZE];
	uint32_t x, z, s, gen = m->next_gen++;

	rc_geom_stripe(&a->g, 0, &m0);
	x = m0.col[1].member;
	z = m0.col[2].member;
	for (s = 1; s < 64; s++) {
		rc_geom_stripe(&a->g, s, &mp);
		if (mp.col[1].member != x && mp.col[1].member != z &&
		    mp.col[2].member != x && mp.col[2].member != z)
			break;
	}
	assert_true(s < 64);
	for (uint64_t blk = 0; blk <= s * a->ndata; blk += s * a->ndata) {
		tb_pattern(buf, blk, gen);
		m->gen[blk] = gen;
		assert_int_equal(rc_write(a, blk, 1, buf), 0);
	}
	return overlap_seen(tb, &b, RC_FAULT_READ, (int)x,
			    rc_abs(a, m0.col[1].offset),
			    (int)mp.col[1].member, rc_abs(a, mp.col[1].offset),
			    (int)mp.col[2].member, rc_abs(a, mp.col[2].offset),
			    ms);
}

/*
 * The same array: stripe 0's first two blocks rewritten and flushed, with
 * the in-place write of one of the three members the stripe writes (its
 * columns 0, 1 and P) held: do the other two write their blocks
 * meanwhile?  True when they do, whichever of the three is held (done one
 * after the other, whichever member writes first stops the others).
 */
static bool inplace_overlaps(struct rc_testbed *tb, struct rc_array *a,
			     struct model *m, int ms)
{
	struct bg_io b = { .a = a, .block = UINT64_MAX };
	struct rc_stripe_map m0;
	const struct rc_col *c[3];
	uint8_t buf[RC_BLOCK_SIZE];
	bool all = true;

	rc_geom_stripe(&a->g, 0, &m0);
	c[0] = &m0.col[0];
	c[1] = &m0.col[1];
	c[2] = &m0.col[a->ndata];
	for (int h = 0; h < 3; h++) {
		uint32_t gen = m->next_gen++;
		const struct rc_col *x = c[h], *y = c[(h + 1) % 3],
				    *z = c[(h + 2) % 3];

		for (uint64_t blk = 0; blk < 2; blk++) {
			tb_pattern(buf, blk, gen);
			m->gen[blk] = gen;
			assert_int_equal(rc_write(a, blk, 1, buf), 0);
		}
		all &= overlap_seen(tb, &b, RC_FAULT_WRITE, (int)x->member,
				    rc_abs(a, x->offset), (int)y->member,
				    rc_abs(a, y->offset), (int)z->member,
				    rc_abs(a, z->offset), ms);
	}
	return all;
}

/*
 * The same array, members that wait: a read of stripes 0 and 1 whole, with
 * stripe 0's column 0 read held.  Do two of stripe 1's columns (on members
 * other than the held one) read meanwhile?  Stripe by stripe, stripe 1's
 * reads began only once all of stripe 0's had ended.
 */
static bool span_overlaps(struct rc_testbed *tb, struct rc_array *a,
			  const struct model *m, int ms)
{
	struct bg_io b = { .a = a, .block = 0, .count = 2 * a->ndata };
	struct rc_stripe_map m0, m1;
	const struct rc_col *y = NULL, *z = NULL;
	uint32_t x;
	bool seen;

	rc_geom_stripe(&a->g, 0, &m0);
	rc_geom_stripe(&a->g, 1, &m1);
	x = m0.col[0].member;
	for (uint32_t c = 0; c < a->ndata; c++) {
		if (m1.col[c].member == x)
			continue;
		if (!y)
			y = &m1.col[c];
		else if (!z)
			z = &m1.col[c];
	}
	assert_non_null(z);
	seen = overlap_seen(tb, &b, RC_FAULT_READ, (int)x,
			    rc_abs(a, m0.col[0].offset), (int)y->member,
			    rc_abs(a, y->offset), (int)z->member,
			    rc_abs(a, z->offset), ms);
	for (uint32_t i = 0; i < b.count; i++)
		assert_true(tb_check(b.buf + (size_t)i * RC_BLOCK_SIZE, i,
				     m->gen[i]));
	return seen;
}

/* The overlap tests' array: RAID 5 of 4, one-block chunks, all written. */
static struct rc_array *overlap_array(struct rc_testbed *tb, struct model *m)
{
	struct rc_array *a;

	tb_init(tb, 4, DEV_BYTES);
	tb_create(tb, RC_RAID5, 4096, 0);
	a = tb_assemble(tb, 0, 0);
	model_init(m, a);
	write_all(a, m);
	/* Filling fresh memory devices page-faults at every first touch
	 * (tens of us each in some VMs), which the averages took for
	 * waiting members: the tests start from members known fast. */
	for (uint32_t i = 0; i < a->g.members; i++) {
		atomic_store(&a->m[i].read_wait_ns, 0);
		atomic_store(&a->m[i].write_wait_ns, 0);
	}
	return a;
}

static void overlap_done(struct rc_testbed *tb, struct rc_array *a,
			 struct model *m)
{
	verify_all(a, m);
	assert_int_equal(rc_array_close(a), 0);
	free(m->gen);
	tb_fini(tb);
}

/*
 * Members whose requests wait for the device (rc_dev.waits: block
 * devices, opened O_DIRECT) get their reads at once, on their workers:
 * a read's column pieces, of all the stripes it spans, and a commit's
 * parity reads across all its stripes (read ahead), overlap.  One after
 * the other on the calling thread, a loop device's 40 us per request
 * added up (4 KiB random writes ran at under half of btrfs's rate on the
 * same devices).
 */
static void test_waiting_members_overlap(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	struct model m;

	(void)state;
	a = overlap_array(&tb, &m);
	for (uint32_t i = 0; i < a->g.members; i++)
		a->m[i].dev->waits = true;
	assert_true(read_overlaps(&tb, a, 5000));
	assert_true(span_overlaps(&tb, a, &m, 5000));
	assert_true(commit_overlaps(&tb, a, &m, 5000));
	overlap_done(&tb, a, &m);
}

/* Blocks [start, start + n) read in one rc_read and checked against m. */
static void verify_range(struct rc_array *a, const struct model *m,
			 uint64_t start, uint32_t n, uint8_t *buf)
{
	static const uint8_t zero[RC_BLOCK_SIZE];

	assert_int_equal(rc_read(a, start, n, buf), 0);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *p = buf + (size_t)i * RC_BLOCK_SIZE;
		uint64_t b = start + i;

		if (m->gen[b] ? !tb_check(p, b, m->gen[b]) :
		    memcmp(p, zero, RC_BLOCK_SIZE) != 0)
			fail_msg("block %llu of a read of %u from %llu reads "
				 "wrong", (unsigned long long)b, n,
				 (unsigned long long)start);
	}
}

/* 40 reads of 1 to 400 blocks from random places, each checked. */
static void verify_random(struct rc_array *a, const struct model *m,
			  uint64_t *seed, uint8_t *buf)
{
	for (int k = 0; k < 40; k++) {
		uint32_t n = 1 + (uint32_t)(tb_rand(seed) % 400);
		uint64_t start = tb_rand(seed) % m->blocks;

		n = start + n > m->blocks ? (uint32_t)(m->blocks - start) : n;
		verify_range(a, m, start, n, buf);
	}
}

/*
 * A read of many stripes asks each member once per run of its chunks that
 * follow each other on it (RAID 5: broken where it holds parity), not
 * once per chunk: one request where a loop device or a disk took several.
 */
static void test_read_span_merges(void **state)
{
	enum { STRIPES = 12 };
	uint8_t *buf = malloc((size_t)STRIPES * 16 * 4 * RC_BLOCK_SIZE);
	uint64_t before[5], want[5] = { 0 }, chunks = 0, asked = 0;
	struct rc_testbed tb;
	struct rc_array *a;
	struct model m;

	(void)state;
	assert_non_null(buf);
	tb_init(&tb, 5, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 65536, 0);
	a = tb_assemble(&tb, 0, 0);
	model_init(&m, a);
	write_all(a, &m);
	for (int pass = 0; pass < 2; pass++) {   /* tables cached by the first */
		for (int i = 0; i < 5; i++)
			before[i] = rc_fault_reads(tb.fault[i]);
		verify_range(a, &m, 0, STRIPES * a->stripe_blocks, buf);
	}
	for (int i = 0; i < 5; i++) {
		bool in_run = false;

		for (uint64_t st = 0; st < STRIPES; st++) {
			struct rc_stripe_map mp;
			bool data = false;

			rc_geom_stripe(&a->g, st, &mp);
			for (uint32_t c = 0; c < a->ndata; c++)
				data |= mp.col[c].member == (uint32_t)i;
			want[i] += data && !in_run;
			chunks += data;
			in_run = data;
		}
		asked += rc_fault_reads(tb.fault[i]) - before[i];
		assert_int_equal(rc_fault_reads(tb.fault[i]) - before[i],
				 want[i]);
	}
	assert_true(asked < chunks / 2);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	free(buf);
	tb_fini(&tb);
}

/*
 * Flushed, then a written block past the first stripe of a read damaged on
 * its member: the read of 300 blocks around it repairs it from the rest
 * of its row and returns every block right.
 */
static void verify_damaged(struct rc_testbed *tb, struct rc_array *a,
			   const struct model *m, uint64_t *seed, uint8_t *buf)
{
	struct rc_stripe_map mp;
	uint64_t b, stripe, start;
	uint32_t col, r, n = 300;

	assert_int_equal(rc_flush(a), 0);
	do {
		b = a->stripe_blocks + tb_rand(seed) % (m->blocks -
							a->stripe_blocks);
	} while (!m->gen[b]);
	rc_geom_locate(&a->g, b, &stripe, &col, &r);
	rc_geom_stripe(&a->g, stripe, &mp);
	assert_int_equal(rc_fault_corrupt(tb->fault[mp.col[col].member],
					  rc_abs(a, mp.col[col].offset + r) *
					  RC_BLOCK_SIZE, RC_BLOCK_SIZE, 3,
					  b), 0);
	start = b - a->stripe_blocks;
	n = start + n > m->blocks ? (uint32_t)(m->blocks - start) : n;
	verify_range(a, m, start, n, buf);
}

/*
 * Reads of many stripes at once (spans: read.c) at every level, of random
 * extents: healthy with dirty stripes in the cache among clean ones, then
 * with a member gone (stripes whose lost column the read covers whole take
 * the row path, the others join spans), and with a block of a later stripe
 * damaged on its member (the read repairs it and goes on).
 */
static void test_read_spans(void **state)
{
	uint8_t *buf = malloc(400 * RC_BLOCK_SIZE);

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct cfg *c = &cfgs[i];
		struct rc_testbed tb;
		struct rc_array *a;
		struct model m;
		uint64_t seed = 99 + i;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		model_init(&m, a);
		write_random(a, &m, &seed, 30);
		assert_int_equal(rc_flush(a), 0);
		write_random(a, &m, &seed, 10);         /* left dirty */
		verify_random(a, &m, &seed, buf);
		if (redundancy(c) > 0) {
			verify_damaged(&tb, a, &m, &seed, buf);
			rc_fault_vanish(tb.fault[(int)(i % (size_t)c->members)]);
			verify_random(a, &m, &seed, buf);
		}
		assert_int_equal(rc_array_close(a), 0);
		free(m.gen);
		tb_fini(&tb);
	}
	free(buf);
}

/*
 * Image files: reads answered from memory run one after the other on the
 * calling thread (handing them to workers costs more); once a member's
 * reads wait (an image read from a disk: here 200 us each), they overlap
 * as a block device's do.
 */
static void test_slow_reads_overlap(void **state)
{
	uint8_t buf[64 * RC_BLOCK_SIZE];
	struct rc_testbed tb;
	struct rc_array *a;
	struct model m;

	(void)state;
	/* touched before any read lands in it: a page fault inside a timed
	 * read would count as the member waiting (tens of us in some VMs) */
	memset(buf, 0, sizeof(buf));
	a = overlap_array(&tb, &m);
	assert_false(read_overlaps(&tb, a, 200));
	/* the held read was a slow one: fast reads bring the average down */
	assert_int_equal(rc_read(a, 64, 64, buf), 0);
	assert_false(commit_overlaps(&tb, a, &m, 200));
	for (uint32_t i = 0; i < a->g.members; i++)
		rc_fault_delay(tb.fault[i], RC_FAULT_READ, 200);
	assert_int_equal(rc_read(a, 64, 64, buf), 0);
	assert_true(read_overlaps(&tb, a, 5000));
	assert_true(commit_overlaps(&tb, a, &m, 5000));
	for (uint32_t i = 0; i < a->g.members; i++)
		rc_fault_delay(tb.fault[i], RC_FAULT_READ, 0);
	overlap_done(&tb, a, &m);
}

/*
 * The same for writes: image files whose writes land in the page cache
 * write a commit's blocks in place one after the other on the committing
 * thread; once a member's writes wait (here 200 us each: an image on a
 * filesystem that throttles its writer, or takes each write to its
 * disk), the members' writes overlap on their workers.
 */
static void test_slow_writes_overlap(void **state)
{
	uint8_t buf[32 * RC_BLOCK_SIZE];
	struct rc_testbed tb;
	struct rc_array *a;
	struct model m;

	(void)state;
	a = overlap_array(&tb, &m);
	assert_false(inplace_overlaps(&tb, a, &m, 200));
	for (uint64_t b = 64; b < 96; b++)
		tb_pattern(buf + (b - 64) * RC_BLOCK_SIZE, b, m.gen[b]);
	for (uint32_t i = 0; i < a->g.members; i++)
		rc_fault_delay(tb.fault[i], RC_FAULT_WRITE, 200);
	/* one slow write moves the average too little: it takes a few */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rc_write(a, 64, 32, buf), 0);
		assert_int_equal(rc_flush(a), 0);
	}
	assert_true(inplace_overlaps(&tb, a, &m, 5000));
	for (uint32_t i = 0; i < a->g.members; i++)
		rc_fault_delay(tb.fault[i], RC_FAULT_WRITE, 0);
	overlap_done(&tb, a, &m);
}

/* Fills the cache past half its limit (not past the limit: nobody
 * commits inline) with generation gen of blocks [0, n). */
static void fill_half(struct rc_array *a, struct model *m, uint64_t n,
		      uint32_t gen)
{
	uint8_t buf[RC_BLOCK_SIZE];

	for (uint64_t b = 0; b < n; b++) {
		tb_pattern(buf, b, gen);
		m->gen[b] = gen;
		assert_int_equal(rc_write(a, b, 1, buf), 0);
	}
}

/*
 * rc_array_set_writeback: past half its limit the cache is written back
 * by the array's thread, with no rc_commit or rc_flush from anyone: the
 * dirty count falls back to half while the writer sits idle.  Then the
 * close stops the thread before its clean checkpoint (the next assembly
 * finds a clean array with every block), and a power cut while the
 * thread is committing loses nothing that a flush returned for.
 */
/* One block written and flushed: every member's flush barrier runs. */
static void write_flush(struct rc_array *a, uint32_t gen)
{
	uint8_t buf[RC_BLOCK_SIZE];

	tb_pattern(buf, 0, gen);
	assert_int_equal(rc_write(a, 0, 1, buf), 0);
	assert_int_equal(rc_flush(a), 0);
}

/*
 * Flushes that return at once run on the flushing thread, one after the
 * other; once one member's flush is slow (a disk's cache flush), the
 * members flush in parallel on their workers again (the first member's
 * always runs on the flushing thread).
 */
static void test_flush_inline_when_fast(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	pthread_t self = pthread_self();

	(void)state;
	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, 0);
	a = tb_assemble(&tb, 0, 0);
	write_flush(a, 1);
	write_flush(a, 2);
	for (int i = 0; i < 4; i++)
		if (!rc_fault_last_sync_on(tb.fault[i], self))
			fail_msg("member %d: a fast flush ran on a worker", i);
	rc_fault_sync_delay(tb.fault[2], 2000);
	write_flush(a, 3);
	write_flush(a, 4);
	assert_true(rc_fault_last_sync_on(tb.fault[0], self));
	for (int i = 1; i < 4; i++)
		if (rc_fault_last_sync_on(tb.fault[i], self))
			fail_msg("member %d: flushed inline beside a slow one", i);
	rc_fault_sync_delay(tb.fault[2], 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

static void test_writeback_thread(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	struct rc_info info;
	struct model m;
	uint64_t n, flushed_blocks;
	char err[256];
	int waited;

	(void)state;
	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, 0);
	a = tb_assemble(&tb, 0, 0);
	model_init(&m, a);
	rc_array_set_cache(a, 1 << 20);
	rc_array_set_writeback(a, true);
	rc_array_info(a, &info);
	/* 3/4 of the limit, one block per stripe: no stripe is full */
	n = info.dirty_max * 3 / 4;
	for (uint64_t s = 0; s < n; s++) {
		uint8_t buf[RC_BLOCK_SIZE];

		tb_pattern(buf, s * info.stripe_blocks, 1);
		m.gen[s * info.stripe_blocks] = 1;
		assert_int_equal(rc_write(a, s * info.stripe_blocks, 1, buf), 0);
	}
	for (waited = 0; waited < 500; waited++) {
		rc_array_info(a, &info);
		if (info.dirty_stripes <= info.dirty_max / 2)
			break;
		usleep(10000);
	}
	if (info.dirty_stripes > info.dirty_max / 2)
		fail_msg("%llu of %llu stripes still dirty after 5 s",
			 (unsigned long long)info.dirty_stripes,
			 (unsigned long long)info.dirty_max);
	fill_half(a, &m, info.stripe_blocks * 3, 2);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);
	rc_array_info(a, &info);
	assert_false(info.was_unclean);
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);

	/* Power cut with the thread at work: what was flushed stays. */
	tb_devs_power(&tb, devs, RC_POWER_REORDER, 7, 0);
	assert_int_equal(tb_try_assemble(&tb, devs, 0, &a, err, sizeof(err)), 0);
	rc_array_set_cache(a, 1 << 20);
	rc_array_set_writeback(a, true);
	rc_array_info(a, &info);
	flushed_blocks = info.dirty_max * info.stripe_blocks;
	if (flushed_blocks > m.blocks / 2)
		flushed_blocks = m.blocks / 2;
	fill_half(a, &m, flushed_blocks, 3);
	assert_int_equal(rc_flush(a), 0);
	{
		uint8_t buf[RC_BLOCK_SIZE];

		/* unflushed: the second half, under way when the power goes */
		for (uint64_t b = flushed_blocks; b < m.blocks; b++) {
			tb_pattern(buf, b, 4);
			if (rc_write(a, b, 1, buf) != 0)
				break;
			if (b == flushed_blocks + (m.blocks - flushed_blocks) / 2)
				rc_power_cut(tb.power);
		}
	}
	rc_array_close(a);              /* fails: the power is off */
	a = tb_assemble(&tb, 0, 0);     /* (the testbed frees the domain) */
	{
		uint8_t buf[RC_BLOCK_SIZE];

		for (uint64_t b = 0; b < flushed_blocks; b++) {
			assert_int_equal(rc_read(a, b, 1, buf), 0);
			if (!tb_check(buf, b, 3))
				fail_msg("flushed block %llu lost",
					 (unsigned long long)b);
		}
		/* the rest reads as one of its generations or zeros: never
		 * an error, never garbage */
		for (uint64_t b = flushed_blocks; b < m.blocks; b++) {
			uint8_t zero[RC_BLOCK_SIZE] = { 0 };

			assert_int_equal(rc_read(a, b, 1, buf), 0);
			if (!tb_check(buf, b, 4) &&
			    !(m.gen[b] && tb_check(buf, b, m.gen[b])) &&
			    memcmp(buf, zero, RC_BLOCK_SIZE))
				fail_msg("block %llu reads garbage",
					 (unsigned long long)b);
		}
	}
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/*
 * A degraded read of whole stripes reads each member there once per
 * stripe: the rows are resolved from one read of every column, not each
 * column on its own and the lost one again with all the others (read.c,
 * read_stripe_rows: at RAID 5 of 5 that was 7 member reads for 4 in a
 * stripe whose lost column holds data).  Nor does it look up the missing
 * member's checksum table: that has no device to load from, and every
 * block of it so found "unverified" set a heal scrubbing the stripes it
 * covers (heal.c) for entries that cannot be written.
 */
static void test_degraded_read_once(void **state)
{
	enum { STRIPES = 16 };
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct model m;
	uint64_t before = 0, after = 0, blocks;
	uint8_t *buf;

	tb_init(&tb, 5, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 65536, 0);
	a = tb_assemble(&tb, 0, 0);
	model_init(&m, a);
	rc_array_info(a, &info);
	blocks = (uint64_t)STRIPES * info.stripe_blocks;
	buf = malloc(blocks * RC_BLOCK_SIZE);
	assert_non_null(buf);
	for (uint64_t b = 0; b < blocks; b++) {
		tb_pattern(buf + b * RC_BLOCK_SIZE, b, 1);
		m.gen[b] = 1;
	}
	assert_int_equal(rc_write(a, 0, (uint32_t)blocks, buf), 0);
	assert_int_equal(rc_array_close(a), 0);

	a = tb_assemble(&tb, 1u << 1, 0);
	verify_all(a, &m);      /* and the tables of the others are loaded */
	for (int i = 0; i < 5; i++)
		if (i != 1)
			before += rc_fault_reads(tb.fault[i]);
	for (uint64_t s = 0; s < STRIPES; s++)
		assert_int_equal(rc_read(a, s * info.stripe_blocks,
					 info.stripe_blocks,
					 buf + s * info.stripe_blocks *
					 RC_BLOCK_SIZE), 0);
	for (int i = 0; i < 5; i++)
		if (i != 1)
			after += rc_fault_reads(tb.fault[i]);
	for (uint64_t b = 0; b < blocks; b++)
		assert_true(tb_check(buf + b * RC_BLOCK_SIZE, b, 1));
	assert_int_equal(after - before, STRIPES * 4);
	rc_array_info(a, &info);
	assert_int_equal(info.tables_unverified, 0);
	assert_int_equal(rc_array_close(a), 0);
	free(buf);
	free(m.gen);
	tb_fini(&tb);
}

/* A member fails mid-run: EIO on every read and write, or it vanishes. */
static void test_degraded_midrun(void **state)
{
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct cfg *c = &cfgs[i];

		if (redundancy(c) == 0)
			continue;
		for (int mode = 0; mode < 2; mode++) {
			for (int victim = 0; victim < c->members; victim++) {
				struct rc_testbed tb;
				struct rc_array *a;
				struct rc_member_status st;
				struct model m;
				uint64_t seed = 7 + i * 100 + (uint64_t)victim;

				tb_init(&tb, c->members, DEV_BYTES);
				tb_create(&tb, c->level, c->chunk, 0);
				a = tb_assemble(&tb, 0, 0);
				model_init(&m, a);
				write_random(a, &m, &seed, 20);
				assert_int_equal(rc_flush(a), 0);
				if (mode == 0)
					rc_fault_eio(tb.fault[victim],
						     RC_FAULT_READ | RC_FAULT_WRITE,
						     0, DEV_BYTES,
						     RC_FAULT_PERSISTENT);
				else
					rc_fault_vanish(tb.fault[victim]);
				verify_all(a, &m);
				write_random(a, &m, &seed, 20);
				assert_int_equal(rc_flush(a), 0);
				verify_all(a, &m);
				rc_array_member_status(a, victim, &st);
				assert_int_equal(st.state, RC_MEMBER_FAULTY);
				assert_int_equal(rc_array_close(a), 0);
				/* The survivors' superblocks say so. */
				a = tb_assemble(&tb, 0, 0);
				rc_array_member_status(a, victim, &st);
				assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
				verify_all(a, &m);
				assert_int_equal(rc_array_close(a), 0);
				free(m.gen);
				tb_fini(&tb);
			}
		}
	}
}

/*
 * A member the array cannot run without fails (a degraded array's second
 * loss): the array is suspended, not the member recorded faulty.  Until
 * 2026-12-06 it was, and the array could never be assembled again, though
 * the device was only away for a moment (a tester's RAID 5 of 4, one
 * member missing, a second gone for two seconds while written).  Now
 * nothing more is read or written - the close neither - and once the
 * device is back the array assembles, degraded as before, with what was
 * flushed.  With SUSP_VANISH the writes fail at their journal records;
 * with SUSP_INPLACE only the in-place writes of the member's
 * data region fail, after the batch's commit: the flush that committed it
 * returned 0, and the replay puts in place what the member missed; with
 * SUSP_SB its superblock write fails, and the update goes no further.
 */
struct susp_cfg {
	enum rc_level level;
	int members;
	uint32_t skip;          /* the member already missing */
	int victim;
};

static const struct susp_cfg susp_cfgs[] = {
	{ RC_RAID1, 2, 1u << 1, 0 }, { RC_RAID5, 4, 1u << 3, 1 },
	{ RC_RAID6, 5, 1u << 3 | 1u << 4, 0 }, { RC_RAID10, 4, 1u << 1, 0 },
};

/* Blocks [b, b + n) written with the next generation (n <= a stripe). */
static void stripe_write(struct rc_array *a, struct model *m, uint64_t b,
			 uint32_t n, uint8_t *buf)
{
	uint32_t gen = m->next_gen++;

	for (uint32_t k = 0; k < n; k++) {
		tb_pattern(buf + (size_t)k * RC_BLOCK_SIZE, b + k, gen);
		m->gen[b + k] = gen;
	}
	rc_write(a, b, n, buf);         /* may fail: suspended */
}

enum susp_mode { SUSP_VANISH, SUSP_INPLACE, SUSP_SB };

static void suspend_one(const struct susp_cfg *c, enum susp_mode mode)
{
	uint8_t buf[8 * RC_BLOCK_SIZE];
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct rc_member_status st;
	struct model m;
	uint64_t seed = 71 + (uint64_t)c->members, hash;
	uint32_t *flushed;
	uint8_t *stripe;

	tb_init(&tb, c->members, DEV_BYTES);
	tb_create(&tb, c->level, 16384, 0);
	a = tb_assemble(&tb, c->skip, 0);
	model_init(&m, a);
	write_random(a, &m, &seed, 30);
	assert_int_equal(rc_flush(a), 0);
	if (mode == SUSP_SB) {
		/* the update stops at the victim: at RAID 5 member 0 has it,
		 * 1 and 2 are left one behind, as a crash leaves them */
		rc_fault_eio(tb.fault[c->victim], RC_FAULT_WRITE,
			     rc_sb_copy_block(0, DEV_BYTES / RC_BLOCK_SIZE) *
			     RC_BLOCK_SIZE, RC_BLOCK_SIZE, RC_FAULT_PERSISTENT);
		assert_int_equal(rc_array_clear_errors(a, false), -EIO);
	} else if (mode == SUSP_INPLACE) {
		/* journaled (partial stripes), one batch, all acknowledged */
		rc_fault_eio(tb.fault[c->victim], RC_FAULT_WRITE,
			     a->sb.data_offset * RC_BLOCK_SIZE,
			     DEV_BYTES - a->sb.data_offset * RC_BLOCK_SIZE,
			     RC_FAULT_PERSISTENT);
		for (int i = 0; i < 4; i++) {
			uint64_t b = tb_rand(&seed) % (m.blocks - 2);

			tb_pattern(buf, b, m.next_gen);
			m.gen[b] = m.next_gen++;
			assert_int_equal(rc_write(a, b, 1, buf), 0);
		}
		assert_int_equal(rc_flush(a), 0);
	} else {
		/* whole stripes, their tables in the cache: no read of the
		 * member that vanished stops the commit before it writes */
		assert_int_equal(rc_array_info(a, &info), 0);
		stripe = calloc(info.stripe_blocks, RC_BLOCK_SIZE);
		assert_non_null(stripe);
		for (uint32_t k = 0; k < 4; k++)
			stripe_write(a, &m, k * info.stripe_blocks,
				     info.stripe_blocks, stripe);
		assert_int_equal(rc_flush(a), 0);
		rc_fault_vanish(tb.fault[c->victim]);
		flushed = malloc(m.blocks * sizeof(*flushed));
		assert_non_null(flushed);
		memcpy(flushed, m.gen, m.blocks * sizeof(*flushed));
		for (uint32_t k = 0; k < 4; k++)
			stripe_write(a, &m, k * info.stripe_blocks,
				     info.stripe_blocks, stripe);
		assert_int_equal(rc_flush(a), -EIO);
		free(m.gen);
		m.gen = flushed;
		free(stripe);
	}
	assert_int_equal(rc_array_info(a, &info), 0);
	assert_true(info.suspended);
	assert_true(info.failed);
	assert_int_equal(info.suspend_slot, c->victim);
	rc_array_member_status(a, c->victim, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);   /* not recorded */
	assert_int_equal(rc_read(a, 0, 1, buf), -EIO);
	assert_int_equal(rc_write(a, 0, 1, buf), -EIO);
	assert_int_equal(rc_flush(a), -EIO);
	hash = tb_media_hash(&tb);
	assert_int_equal(rc_array_close(a), -EIO);
	assert_true(tb_media_hash(&tb) == hash);        /* nothing written */
	/* the device is back: a new assembly wraps it without the fault */
	a = tb_assemble(&tb, c->skip, 0);
	assert_int_equal(rc_array_info(a, &info), 0);
	assert_false(info.suspended);
	assert_false(info.failed);
	verify_all(a, &m);      /* what the last successful flush made */
	write_random(a, &m, &seed, 10);
	assert_int_equal(rc_flush(a), 0);
	verify_close_lose(&tb, a, &m, c->skip);
	free(m.gen);
	tb_fini(&tb);
}

static void test_suspend_beyond_redundancy(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(susp_cfgs) / sizeof(susp_cfgs[0]); i++) {
		suspend_one(&susp_cfgs[i], SUSP_VANISH);
		suspend_one(&susp_cfgs[i], SUSP_INPLACE);
		suspend_one(&susp_cfgs[i], SUSP_SB);
	}
}

/*
 * Two members of a healthy RAID 5 of 4 gone at once (a controller, a
 * cable carrying both): the first to fail is faulted, the array goes on
 * degraded, the second suspends it.  With both back, the array assembles
 * (degraded: the first stays out) with everything flushed before.  Two
 * ways it could not (a tester's finds):
 *  - by a superblock write (sb): the update's round was written again
 *    after the first failure with the events counter bumped once more,
 *    so slot 0 ended two updates ahead of slots 2 and 3, both "stale":
 *    the array refused for good;
 *  - by a batch's journal records (records): slot 2, one update behind,
 *    lacked the batch it failed to take, and was taken for an old copy
 *    of itself that the array cannot do without: read-only for good.
 */
static void test_suspend_two_at_once(void **state)
{
	for (int by_records = 0; by_records < 2; by_records++) {
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		struct rc_member_status st;
		struct model m;
		uint64_t seed = 91;
		uint32_t *flushed;
		uint8_t *stripe;

		tb_init(&tb, 4, DEV_BYTES);
		tb_create(&tb, RC_RAID5, 16384, 0);
		a = tb_assemble(&tb, 0, 0);
		model_init(&m, a);
		write_random(a, &m, &seed, 30);
		assert_int_equal(rc_array_info(a, &info), 0);
		stripe = calloc(info.stripe_blocks, RC_BLOCK_SIZE);
		assert_non_null(stripe);
		for (uint32_t k = 0; k < 4; k++)       /* their tables cached */
			stripe_write(a, &m, k * info.stripe_blocks,
				     info.stripe_blocks, stripe);
		assert_int_equal(rc_flush(a), 0);
		flushed = malloc(m.blocks * sizeof(*flushed));
		assert_non_null(flushed);
		memcpy(flushed, m.gen, m.blocks * sizeof(*flushed));
		rc_fault_vanish(tb.fault[1]);
		rc_fault_vanish(tb.fault[2]);
		if (by_records) {
			for (uint32_t k = 0; k < 4; k++)
				stripe_write(a, &m, k * info.stripe_blocks,
					     info.stripe_blocks, stripe);
			assert_int_equal(rc_flush(a), -EIO);
		} else {
			assert_int_equal(rc_array_clear_errors(a, false), -EIO);
		}
		assert_int_equal(rc_array_info(a, &info), 0);
		assert_true(info.suspended);
		assert_int_equal(info.suspend_slot, 2);
		assert_int_equal(rc_array_close(a), -EIO);
		/* both back */
		a = tb_assemble(&tb, 0, 0);
		rc_array_member_status(a, 1, &st);
		assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
		rc_array_member_status(a, 2, &st);
		assert_int_equal(st.state, RC_MEMBER_ACTIVE);
		free(m.gen);
		m.gen = flushed;
		verify_all(a, &m);
		write_random(a, &m, &seed, 10);
		assert_int_equal(rc_flush(a), 0);
		verify_close_lose(&tb, a, &m, 1u << 1);
		free(m.gen);
		free(stripe);
		tb_fini(&tb);
	}
}

/* A member fails; the spare takes its place and is rebuilt. */
static void test_spare_takes_over(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct rc_member_status st;
	struct model m;
	uint64_t seed = 5;

	tb_init(&tb, 5, DEV_BYTES);               /* 4 members + 1 spare */
	tb_create(&tb, RC_RAID5, 16384, 1);
	a = tb_assemble(&tb, 0, 0);
	rc_array_info(a, &info);
	assert_int_equal(info.members, 4);
	assert_int_equal(info.spares, 1);
	model_init(&m, a);
	write_random(a, &m, &seed, 30);
	assert_int_equal(rc_member_fail(a, 2), 0);
	write_random(a, &m, &seed, 10);
	assert_int_equal(rc_member_replace(a, -1, NULL, NULL, NULL), 0);
	rc_array_info(a, &info);
	assert_false(info.degraded);
	assert_int_equal(info.spares, 0);
	rc_array_member_status(a, 2, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	assert_string_equal(st.name, "mem4");
	/* The former spare is member 2 now; the failed device is out. */
	verify_close_lose(&tb, a, &m, 1u << 1);
	free(m.gen);
	tb_fini(&tb);
}

/* With recovery running, a failure is rebuilt onto the spare unasked. */
static void test_spare_automatic(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct model m;
	uint64_t seed = 9;
	int waited = 0;

	tb_init(&tb, 6, DEV_BYTES);               /* RAID 6 of 5 + 1 spare */
	tb_create(&tb, RC_RAID6, 8192, 1);
	a = tb_assemble(&tb, 0, 0);
	model_init(&m, a);
	write_random(a, &m, &seed, 30);
	assert_int_equal(rc_array_start_recovery(a), 0);
	rc_fault_vanish(tb.fault[1]);
	write_random(a, &m, &seed, 10);           /* finds member 1 gone */
	assert_int_equal(rc_flush(a), 0);
	do {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		rc_array_info(a, &info);
	} while (info.degraded && ++waited < 1500);
	assert_false(info.degraded);
	assert_int_equal(info.spares, 0);
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 1u << 1 | 1u << 2, 0);   /* still 2 to spare */
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/* The events raidcore tells its handler, in order. */
struct ev_log {
	pthread_mutex_t lock;
	enum rc_event_kind kind[64];
	int err[64];
	int slot[64];
	int n;
};

static void ev_record(void *ctx, const struct rc_event *ev)
{
	struct ev_log *l = ctx;

	pthread_mutex_lock(&l->lock);
	if (l->n < 64) {
		l->err[l->n] = ev->err;
		l->slot[l->n] = ev->slot;
		l->kind[l->n++] = ev->kind;
	}
	pthread_mutex_unlock(&l->lock);
}

/*
 * RAID 1 of 2 with one copy gone: the rebuild onto a new device meets
 * read errors on the survivor, far more than the fault limit.  The rows
 * they touch are lost (the rebuild says -EIO), but the survivor stays
 * in while the rebuild runs: it holds the only copy of everything the
 * rebuild has not reached.  It was faulted halfway (the rebuilding slot
 * counted as holding all), the array failed and what the rebuild had not
 * reached became unreadable too (a tester's find, RAID 1 and 10).
 */
struct survivor {
	struct rc_array *a;
	uint8_t *buf;
	int calls;
};

static void survivor_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct survivor *sv = ctx;
	struct rc_member_status st;

	if (done >= total)
		return;
	sv->calls++;
	/* a read applies the pending faults, as the recovery thread does */
	rc_read(sv->a, 0, 1, sv->buf);
	rc_array_member_status(sv->a, 0, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
}

static void test_rebuild_survivor_errors_kept(void **state)
{
	/* 1 MiB early in the data region (at 2 MiB on these members) */
	uint64_t first_bad = 64, nbad = 256;
	uint64_t bad = (2ull << 20) + first_bad * RC_BLOCK_SIZE;
	struct survivor sv = { 0 };
	struct rc_member_status st;
	struct rc_scrub_report rep;
	struct rc_testbed tb;
	struct rc_info info;
	struct model m;

	(void)state;
	sv.buf = rc_buf_alloc(RC_BLOCK_SIZE);
	tb_init(&tb, 2, DEV_BYTES);
	tb_create(&tb, RC_RAID1, 65536, 0);
	sv.a = tb_assemble(&tb, 1u << 1, 0);
	model_init(&m, sv.a);
	write_all(sv.a, &m);
	assert_int_equal(rc_fault_eio(tb.fault[0], RC_FAULT_READ, bad,
				      nbad * RC_BLOCK_SIZE,
				      RC_FAULT_PERSISTENT), 0);
	rc_array_set_rebuild_speed(sv.a, 0, 4096);     /* several batches */
	assert_true(rc_member_replace(sv.a, 1, tb_borrow(&tb, 1),
				      survivor_progress, &sv) < 0);
	assert_true(sv.calls > 1);
	rc_array_member_status(sv.a, 0, &st);
	assert_true(st.read_errors > 0);
	rc_array_member_status(sv.a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	/* in sync, but with holes: not counted on as redundancy (it was,
	 * and losing member 0 then lost the files over the holes: a
	 * tester's find), so member 0 may not be failed */
	assert_int_equal(rc_array_info(sv.a, &info), 0);
	assert_int_equal(info.verify_slots, 1u << 1);
	assert_int_equal(rc_member_fail_redundant(sv.a, 0), -EINPROGRESS);
	/* a repairing scrub that meets the same read errors fills nothing:
	 * it verifies nothing either (it did: a tester's find) */
	assert_int_equal(rc_scrub(sv.a, true, &rep, NULL, NULL), 0);
	assert_true(rep.unrecoverable > 0);
	assert_int_equal(rc_array_info(sv.a, &info), 0);
	assert_int_equal(info.verify_slots, 1u << 1);
	assert_int_equal(rc_member_fail_redundant(sv.a, 0), -EINPROGRESS);
	/* the members say so: a restart does not forget the holes */
	assert_int_equal(rc_array_close(sv.a), 0);
	sv.a = tb_assemble(&tb, 0, 0);
	assert_int_equal(rc_array_info(sv.a, &info), 0);
	assert_int_equal(info.verify_slots, 1u << 1);
	rc_fault_clear(tb.fault[0]);
	for (uint64_t b = 0; b < m.blocks; b++) {
		if (b >= first_bad && b < first_bad + nbad)
			continue;       /* lost with the survivor's rows */
		assert_int_equal(rc_read(sv.a, b, 1, sv.buf), 0);
		if (!tb_check(sv.buf, b, m.gen[b]))
			fail_msg("block %llu reads wrong", (unsigned long long)b);
	}
	/* the survivor whole again: a repairing scrub fills the holes and
	 * verifies the slot; then member 1 alone holds everything */
	assert_int_equal(rc_scrub(sv.a, true, &rep, NULL, NULL), 0);
	assert_int_equal(rc_array_info(sv.a, &info), 0);
	assert_int_equal(info.verify_slots, 0);
	assert_int_equal(rc_member_fail_redundant(sv.a, 0), 0);
	for (uint64_t b = 0; b < m.blocks; b++) {
		assert_int_equal(rc_read(sv.a, b, 1, sv.buf), 0);
		if (!tb_check(sv.buf, b, m.gen[b]))
			fail_msg("block %llu reads wrong from the rebuilt "
				 "member alone", (unsigned long long)b);
	}
	free(sv.buf);
	rc_array_close(sv.a);
	free(m.gen);
	tb_fini(&tb);
}

/*
 * A slot rebuilt with holes needs the member the holes are to be filled
 * from: that member failing an I/O suspends the array, as a member it
 * cannot run without does, rather than being faulted (it was, and every
 * file read as an I/O error at RAID 1 and 5: a tester's find).
 */
static void test_holes_keep_their_source(void **state)
{
	uint64_t bad = (2ull << 20) + 64 * RC_BLOCK_SIZE;
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct model m;
	uint8_t buf[RC_BLOCK_SIZE];

	(void)state;
	tb_init(&tb, 2, DEV_BYTES);
	tb_create(&tb, RC_RAID1, 65536, 0);
	a = tb_assemble(&tb, 1u << 1, 0);
	model_init(&m, a);
	write_all(a, &m);
	assert_int_equal(rc_fault_eio(tb.fault[0], RC_FAULT_READ, bad,
				      16 * RC_BLOCK_SIZE,
				      RC_FAULT_PERSISTENT), 0);
	assert_true(rc_member_replace(a, 1, tb_borrow(&tb, 1), NULL,
				      NULL) < 0);
	assert_int_equal(rc_array_info(a, &info), 0);
	assert_int_equal(info.verify_slots, 1u << 1);
	/* its superblock does not read back after a write: kept */
	assert_int_equal(rc_fault_eio(tb.fault[0], RC_FAULT_READ, 0,
				      RC_BLOCK_SIZE, RC_FAULT_PERSISTENT), 0);
	rc_array_set_rebuild_speed(a, 0, 0);
	rc_member_faults_apply(a);
	assert_int_equal(rc_array_member_status(a, 0, &st), 0);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	/* a write to it fails: the array is suspended */
	assert_int_equal(rc_fault_eio(tb.fault[0], RC_FAULT_WRITE, 0, DEV_BYTES,
				      RC_FAULT_PERSISTENT), 0);
	memset(buf, 7, sizeof(buf));
	assert_int_equal(rc_write(a, 0, 1, buf), 0);
	assert_true(rc_flush(a) < 0);
	assert_int_equal(rc_array_info(a, &info), 0);
	assert_true(info.suspended);
	assert_int_equal(rc_array_member_status(a, 0, &st), 0);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	rc_array_close(a);
	free(m.gen);
	tb_fini(&tb);
}

/* A RAID 5 of 4 assembled, and a fifth device to add (tb_borrow 4). */
static struct rc_array *raid5_one_to_add(struct rc_testbed *tb)
{
	tb_init(tb, 5, DEV_BYTES);
	tb->n = 4;
	tb_create(tb, RC_RAID5, 16384, 0);
	tb->n = 5;
	return tb_assemble(tb, 1u << 4, 0);
}

/*
 * A member vanishes while a scrub batch reads it, and a spare takes its
 * slot meanwhile: the batch's verdicts and repairs are of the device it
 * read, and the swap waits for the batch (slots_lock).  Without that, the
 * scrub judged the spare's blank blocks by its blank tables (1008 blocks
 * "lost", files listed for restore though every one read right) and
 * faulted the spare for the vanished member's failed repair write (a
 * tester's find).
 */
struct swap_bg {
	struct rc_testbed *tb;
	struct rc_array *a;
	struct rc_scrub_report rep;
	int ret;
};

static void *swap_scrub_run(void *arg)
{
	struct swap_bg *s = arg;

	s->ret = rc_scrub(s->a, true, &s->rep, NULL, NULL);
	return NULL;
}

static void *swap_spare_run(void *arg)
{
	struct swap_bg *s = arg;

	rc_member_fail(s->a, 3);
	s->ret = rc_member_replace(s->a, 3, tb_borrow(s->tb, 4), NULL, NULL);
	return NULL;
}

static void test_scrub_slot_swapped(void **state)
{
	struct swap_bg sc = { 0 }, sp = { 0 };
	struct rc_member_status st;
	struct rc_testbed tb;
	pthread_t t1, t2;
	struct model m;

	(void)state;
	sc.a = sp.a = raid5_one_to_add(&tb);
	sp.tb = &tb;
	model_init(&m, sc.a);
	write_all(sc.a, &m);
	rc_fault_hold(tb.fault[3], RC_FAULT_READ,
		      sc.a->sb.data_offset * RC_BLOCK_SIZE, DEV_BYTES);
	pthread_create(&t1, NULL, swap_scrub_run, &sc);
	rc_fault_wait_held(tb.fault[3], 1);     /* inside the first batch */
	rc_fault_vanish(tb.fault[3]);
	pthread_create(&t2, NULL, swap_spare_run, &sp);
	usleep(200 * 1000);                     /* the swap, if it can */
	rc_fault_release(tb.fault[3]);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	assert_int_equal(sp.ret, 0);
	if (sc.rep.unrecoverable || sc.rep.parity_mismatches)
		fail_msg("the scrub called %llu blocks unrecoverable, %llu "
			 "stripes mismatched", (unsigned long long)
			 sc.rep.unrecoverable, (unsigned long long)
			 sc.rep.parity_mismatches);
	assert_int_equal(rc_array_member_status(sc.a, 3, &st), 0);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);   /* the spare */
	verify_all(sc.a, &m);
	assert_int_equal(rc_array_close(sc.a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/* During a rebuild, another member lost beyond the redundancy: the array
 * is failed (the stripes the rebuild has not reached lost two columns),
 * not "rebuilding" for ever as status said (it counted the rebuilding slot
 * as there). */
struct second_loss {
	struct rc_array *a;
	bool done, failed_during;
};

static void second_loss_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct second_loss *sl = ctx;
	struct rc_info info;

	if (sl->done || done >= total)
		return;
	sl->done = true;
	assert_int_equal(rc_array_info(sl->a, &info), 0);
	assert_false(info.failed);                /* one slot rebuilding */
	/* the administrator's fail is refused: the rebuilding slot holds
	 * only what its rebuild reached (it went through, and the array
	 * failed: a tester's find) */
	assert_int_equal(rc_member_fail_redundant(sl->a, 2), -EBUSY);
	assert_int_equal(rc_member_fail(sl->a, 2), -EIO); /* it says so */
	assert_int_equal(rc_array_info(sl->a, &info), 0);
	sl->failed_during = info.failed;
}

static void test_rebuild_second_loss_failed(void **state)
{
	struct rc_testbed tb;
	struct second_loss sl = { 0 };
	struct rc_info info;
	struct model m;
	uint64_t seed = 23;

	sl.a = raid5_one_to_add(&tb);
	model_init(&m, sl.a);
	write_random(sl.a, &m, &seed, 30);
	assert_int_equal(rc_member_fail_redundant(sl.a, 1), 0);
	assert_int_equal(rc_member_remove(sl.a, 1), 0);
	rc_array_set_rebuild_speed(sl.a, 0, 4096);    /* several batches */
	assert_int_not_equal(rc_member_replace(sl.a, 1, tb_borrow(&tb, 4),
					       second_loss_progress, &sl), 0);
	assert_true(sl.done);
	assert_true(sl.failed_during);
	assert_int_equal(rc_array_info(sl.a, &info), 0);
	assert_true(info.failed);
	rc_array_close(sl.a);
	free(m.gen);
	tb_fini(&tb);
}

/* The why of the first Fail event. */
static void ev_fail_why(void *ctx, const struct rc_event *ev)
{
	char *why = ctx;

	if (ev->kind == RC_EV_FAIL && !why[0])
		snprintf(why, 160, "%s", ev->why);
}

/* A superblock copy that cannot be read back after its write faults the
 * member for a read error; it was said to have lost its writes or be
 * another device answering (a tester's note). */
static void test_sb_readback_error_said(void **state)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	uint8_t buf[RC_BLOCK_SIZE];
	char why[160] = "";

	(void)state;
	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, 0);
	a = tb_assemble(&tb, 0, 0);
	rc_array_set_event_handler(a, ev_fail_why, why);
	assert_int_equal(rc_fault_eio(tb.fault[1], RC_FAULT_READ, 0,
				      RC_BLOCK_SIZE, RC_FAULT_PERSISTENT), 0);
	tb_pattern(buf, 3, 1);
	assert_int_equal(rc_write(a, 3, 1, buf), 0);    /* activates */
	assert_int_equal(rc_flush(a), 0);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_FAULTY);
	rc_array_set_event_handler(a, NULL, NULL);
	if (!strstr(why, "could not be read back after its write (read error)"))
		fail_msg("fault said \"%s\"", why);
	rc_fault_clear(tb.fault[1]);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* Fail, remove, add (raidfsctl's calls): refusals, then the added spare
 * rebuilt into the removed slot holds real data; every step an event. */
static void test_manage_fail_remove_add(void **state)
{
	struct ev_log l = { .lock = PTHREAD_MUTEX_INITIALIZER };
	static const enum rc_event_kind want[] = {
		RC_EV_FAIL, RC_EV_REMOVED, RC_EV_SPARE_ADDED, RC_EV_SPARE_ACTIVE,
		RC_EV_REBUILD_STARTED,
	};
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct rc_member_status st;
	struct rc_dev *small;
	struct model m;
	uint64_t seed = 21;

	a = raid5_one_to_add(&tb);
	rc_array_set_event_handler(a, ev_record, &l);
	model_init(&m, a);
	write_random(a, &m, &seed, 30);
	assert_int_equal(rc_member_fail_redundant(a, 1), 0);
	assert_int_equal(rc_member_fail_redundant(a, 2), -EBUSY);
	assert_int_equal(rc_member_fail_redundant(a, 1), -EALREADY);
	assert_int_equal(rc_member_fail_redundant(a, 9), -EINVAL);
	assert_int_equal(rc_member_remove(a, 0), -EBUSY);
	assert_int_equal(rc_member_remove(a, 1), 0);
	assert_int_equal(rc_member_remove(a, 1), -EALREADY);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_MISSING);
	assert_int_equal(rc_spare_add(a, tb_borrow(&tb, 0)), -EEXIST);
	assert_int_equal(rc_dev_mem_create(1u << 20, "small", &small), 0);
	assert_int_equal(rc_spare_add(a, small), -ENOSPC);
	assert_int_equal(rc_spare_add(a, tb_borrow(&tb, 4)), 0);
	rc_array_info(a, &info);
	assert_int_equal(info.spares, 1);
	assert_true(info.degraded);
	assert_int_equal(rc_member_remove(a, 4), -EBUSY);  /* needed now */
	write_random(a, &m, &seed, 10);
	assert_int_equal(rc_member_replace(a, -1, NULL, NULL, NULL), 0);
	rc_array_info(a, &info);
	assert_false(info.degraded);
	assert_int_equal(info.spares, 0);
	rc_array_set_event_handler(a, NULL, NULL);
	assert_true(l.n >= (int)(sizeof(want) / sizeof(want[0])) + 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(l.kind[i], want[i]);
	assert_int_equal(l.kind[l.n - 1], RC_EV_REBUILD_FINISHED);
	assert_int_equal(l.err[l.n - 1], 0);
	/* the added device holds slot 1's data: lose another member */
	verify_close_lose(&tb, a, &m, 1u << 1 | 1u << 3);
	free(m.gen);
	tb_fini(&tb);
}

/* A spare rebuilt into a failed slot starts with no errors counted: the
 * slot showed its old device's read and checksum errors against the new
 * one (a tester's find). */
static void test_spare_counts_fresh(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_member_status st;
	struct model m;
	uint64_t seed = 23;

	a = raid5_one_to_add(&tb);
	model_init(&m, a);
	write_random(a, &m, &seed, 20);
	assert_int_equal(rc_spare_add(a, tb_borrow(&tb, 4)), 0);
	atomic_store(&a->m[1].read_errors, 5);
	atomic_store(&a->m[1].csum_errors, 3);
	atomic_store(&a->m[1].repaired, 2);
	assert_int_equal(rc_member_fail_redundant(a, 1), 0);
	assert_int_equal(rc_member_replace(a, -1, NULL, NULL, NULL), 0);
	assert_int_equal(rc_array_member_status(a, 1, &st), 0);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(st.read_errors, 0);
	assert_int_equal(st.csum_errors, 0);
	assert_int_equal(st.repaired, 0);
	verify_close_lose(&tb, a, &m, 1u << 3);
	free(m.gen);
	tb_fini(&tb);
}

/* Polls (20 ms) until the online replacement is gone, or past done
 * stripes with want_done; asserts it did within 30 s. */
static void replace_wait(struct rc_array *a, bool want_done, uint64_t done)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct rc_info info;

	for (int i = 0; i < 1500; i++) {
		rc_array_info(a, &info);
		if (want_done ? !info.replacing && !info.degraded :
		    info.replacing && info.replace_done > done)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("replacement %s", want_done ? "never finished" :
		 "never moved");
}

static void slot_is(struct rc_array *a, int slot, const char *name)
{
	struct rc_member_status st;

	assert_int_equal(rc_array_member_status(a, slot, &st), 0);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	assert_string_equal(st.name, name);
}

/* A level of n members and one new device (the last), written, flushed,
 * its events recorded in l. */
static struct rc_array *replace_bed(struct rc_testbed *tb, enum rc_level lv,
				    int n, struct ev_log *l, struct model *m,
				    uint64_t *seed, int writes)
{
	struct rc_array *a;

	tb_init(tb, n + 1, DEV_BYTES);
	tb->n = n;
	tb_create(tb, lv, 16384, 0);
	tb->n = n + 1;
	a = tb_assemble(tb, 1u << n, 0);
	rc_array_set_event_handler(a, ev_record, l);
	model_init(m, a);
	write_random(a, m, seed, writes);
	assert_int_equal(rc_flush(a), 0);
	return a;
}

/* replace_bed's spare device (the fifth) as one that acknowledges every
 * write to its data region and keeps none. */
static struct rc_dev *liar_dev(struct rc_testbed *tb)
{
	struct rc_fault *ctl;
	struct rc_dev *dst;

	assert_int_equal(rc_fault_wrap(tb_borrow(tb, 4), NULL, &dst, &ctl), 0);
	assert_int_equal(rc_fault_lose_writes(ctl, 1u << 20, DEV_BYTES - (2u << 20),
					      RC_FAULT_PERSISTENT), 0);
	return dst;
}

/* raidfsctl replace's refusals: each closes the device, writes nothing. */
static void replace_refusals(struct rc_testbed *tb, struct rc_array *a)
{
	struct rc_dev *small;

	assert_int_equal(rc_member_replace_online(a, 1, tb_borrow(tb, 0)),
			 -EEXIST);
	assert_int_equal(rc_dev_mem_create(1u << 20, "small", &small), 0);
	assert_int_equal(rc_member_replace_online(a, 1, small), -ENOSPC);
	assert_int_equal(rc_member_replace_online(a, 9, tb_borrow(tb, 5)),
			 -EINVAL);
}

/*
 * md's --replace: slot 1 is copied onto a new device while it serves and
 * the array is written; a read error on it costs nothing; another member
 * failing mid-copy leaves every block readable (slot 1 still serves: the
 * array never was degraded by the replacement).  At the end the new
 * device holds slot 1 and the old one is never assembled back; with the
 * old one and two others gone (RAID 6), every block still reads right
 * from the new one.
 */
static void test_replace_online(void **state)
{
	struct ev_log l = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct model m;
	uint64_t seed = 31;

	a = replace_bed(&tb, RC_RAID6, 5, &l, &m, &seed, 40);
	replace_refusals(&tb, a);
	/* the copy's first reads of slot 1's data region fail */
	assert_int_equal(rc_fault_eio(tb.fault[1], RC_FAULT_READ, 5u << 19,
				      3u << 20, 2), 0);
	rc_array_set_rebuild_speed(a, 0, 4096);
	assert_int_equal(rc_array_start_recovery(a), 0);
	assert_int_equal(rc_member_replace_online(a, 1, tb_borrow(&tb, 5)), 0);
	assert_int_equal(rc_member_replace_online(a, 3, tb_borrow(&tb, 5)),
			 -EBUSY);
	rc_array_info(a, &info);
	assert_true(info.replacing);
	assert_int_equal(info.replace_slot, 1);
	replace_wait(a, false, info.stripes / 3);
	write_random(a, &m, &seed, 20);           /* below and above the copy */
	assert_int_equal(rc_member_fail(a, 2), 0);
	rc_array_info(a, &info);
	assert_true(info.replacing);
	verify_all(a, &m);
	write_random(a, &m, &seed, 20);
	rc_array_set_rebuild_speed(a, 0, 0);
	assert_int_equal(rc_member_remove(a, 2), 0);
	assert_int_equal(rc_spare_add(a, tb_borrow(&tb, 2)), 0);
	replace_wait(a, true, 0);
	slot_is(a, 1, "mem5");
	verify_all(a, &m);
	rc_array_info(a, &info);
	assert_int_equal(info.unrecoverable, 0);
	rc_array_set_event_handler(a, NULL, NULL);
	assert_int_equal(l.kind[0], RC_EV_REPLACE_STARTED);
	for (int i = 1; i < l.n; i++)             /* told once, not per run */
		assert_int_not_equal(l.kind[i], RC_EV_REPLACE_STARTED);
	while (l.n > 0 && !(l.kind[l.n - 1] == RC_EV_REPLACE_FINISHED &&
			    l.err[l.n - 1] == 0))
		l.n--;
	assert_true(l.n > 0);                     /* it finished, told so */
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);               /* the old one offered too */
	slot_is(a, 1, "mem5");
	rc_array_info(a, &info);
	assert_false(info.replacing);
	assert_false(info.degraded);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 1u << 1 | 1u << 3 | 1u << 4, 0);
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/*
 * A replacement onto a device that drops the writes of its data region
 * (acknowledged, not kept) is abandoned before the swap: the old device
 * keeps the slot, the array stays redundant, every block reads back.  The
 * copy was never read back: the old member was let go and the next
 * member lost took every file with it (a tester's find).
 */
static void test_replace_onto_liar(void **state)
{
	struct ev_log l = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct rc_dev *dst;
	struct model m;
	uint64_t seed = 53;

	(void)state;
	a = replace_bed(&tb, RC_RAID5, 4, &l, &m, &seed, 60);
	dst = liar_dev(&tb);
	assert_int_equal(rc_array_start_recovery(a), 0);
	assert_int_equal(rc_member_replace_online(a, 1, dst), 0);
	for (int i = 0; i < 1500; i++) {
		rc_array_info(a, &info);
		if (!info.replacing)
			break;
		usleep(20000);
	}
	rc_array_info(a, &info);
	assert_false(info.replacing);
	assert_false(info.degraded);
	slot_is(a, 1, "mem1");
	verify_all(a, &m);
	rc_array_set_event_handler(a, NULL, NULL);
	while (l.n > 0 && l.kind[l.n - 1] != RC_EV_REPLACE_FINISHED)
		l.n--;
	assert_true(l.n > 0);
	assert_int_equal(l.err[l.n - 1], -ENODEV);
	assert_int_equal(rc_array_close(a), 0);
	/* the old member holds its slot for good: without member 0 too,
	 * every block reads */
	a = tb_assemble(&tb, 1u << 0 | 1u << 4, 0);
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/*
 * The same device taking a failed slot by a rebuild (md's --add): its
 * rebuild is not said in sync, the slot not redundant, on the word of
 * writes it did not keep.  The sampled read-back fails it at the end of
 * the rebuild; the array stays degraded and every block reads.  Before,
 * RebuildFinished said in sync and the array redundant (a tester's find,
 * U1 h4) until a later checkpoint's read-back caught it.
 */
static void test_rebuild_onto_liar(void **state)
{
	struct ev_log l = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rc_member_status ms;
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct rc_dev *dst;
	struct model m;
	uint64_t seed = 59;

	(void)state;
	a = replace_bed(&tb, RC_RAID5, 4, &l, &m, &seed, 60);
	assert_int_equal(rc_member_fail(a, 1), 0);
	dst = liar_dev(&tb);
	assert_int_equal(rc_member_replace(a, 1, dst, NULL, NULL), -EIO);
	rc_array_info(a, &info);
	assert_true(info.degraded);
	assert_int_equal(rc_array_member_status(a, 1, &ms), 0);
	assert_int_not_equal(ms.state, RC_MEMBER_ACTIVE);
	verify_all(a, &m);
	rc_array_set_event_handler(a, NULL, NULL);
	while (l.n > 0 && l.kind[l.n - 1] != RC_EV_REBUILD_FINISHED)
		l.n--;
	assert_true(l.n > 0);
	assert_int_equal(l.err[l.n - 1], -EIO);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/*
 * The same with one row of the array written, one the old read-back's
 * samples (one row of each of 256 stripes spread over the device) did not
 * fall on: it checked nothing and said the slot in sync (a tester's find
 * on a mostly empty array, U5 D4).  The read-back samples what the
 * rebuild wrote.
 */
static void test_rebuild_sparse_liar(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	uint8_t buf[RC_BLOCK_SIZE];
	uint64_t s = 1, r = 0, cb;
	bool hit = true;

	(void)state;
	tb_init(&tb, 5, DEV_BYTES);
	tb.n = 4;
	tb_create(&tb, RC_RAID5, 16384, 0);
	tb.n = 5;
	a = tb_assemble(&tb, 1u << 4, 0);
	rc_array_info(a, &info);
	cb = info.chunk_blocks;
	/* a row none of the 256 spread samples (stripe s_i, row i * 37 % cb)
	 * lands in */
	for (s = 1; hit && s < info.stripes; s++)
		for (r = 0; hit && r < cb; r++) {
			hit = false;
			for (uint64_t i = 0; i < 256; i++)
				hit |= (info.stripes - 1) * i / 255 == s &&
				       i * 37 % cb == r;
		}
	assert_false(hit);
	s--, r--;
	for (uint64_t c = 0; c < info.data_columns; c++) {
		uint64_t b = s * info.stripe_blocks + c * cb + r;

		tb_pattern(buf, b, 1);
		assert_int_equal(rc_write(a, b, 1, buf), 0);
	}
	assert_int_equal(rc_flush(a), 0);
	assert_int_equal(rc_member_fail(a, 1), 0);
	assert_int_equal(rc_member_replace(a, 1, liar_dev(&tb), NULL, NULL),
			 -EIO);
	rc_array_info(a, &info);
	assert_true(info.degraded);
	for (uint64_t c = 0; c < info.data_columns; c++) {
		uint64_t b = s * info.stripe_blocks + c * cb + r;

		assert_int_equal(rc_read(a, b, 1, buf), 0);
		assert_true(tb_check(buf, b, 1));
	}
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* A replacement interrupted by close resumes from its checkpoint; one
 * whose old device fails becomes an ordinary rebuild onto the new one. */
static void test_replace_resume_and_fail(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct model m;
	uint64_t seed = 41, at;

	tb_init(&tb, 6, DEV_BYTES);               /* RAID 5 of 4, two new */
	tb.n = 4;
	tb_create(&tb, RC_RAID5, 16384, 0);
	tb.n = 6;
	a = tb_assemble(&tb, 1u << 4 | 1u << 5, 0);
	model_init(&m, a);
	write_random(a, &m, &seed, 40);
	rc_array_set_rebuild_speed(a, 0, 4096);
	assert_int_equal(rc_array_start_recovery(a), 0);
	assert_int_equal(rc_member_replace_online(a, 0, tb_borrow(&tb, 4)), 0);
	replace_wait(a, false, 8);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 1u << 5, 0);
	rc_array_info(a, &info);
	assert_true(info.replacing);
	assert_true(info.replace_done > 8);       /* not from zero */
	at = info.replace_done;
	assert_true(at < info.stripes);
	assert_int_equal(rc_array_start_recovery(a), 0);
	replace_wait(a, true, 0);
	slot_is(a, 0, "mem4");
	verify_all(a, &m);
	/* the old device of slot 3 fails mid-copy: rebuilt onto mem5 */
	rc_array_set_rebuild_speed(a, 0, 4096);
	assert_int_equal(rc_member_replace_online(a, 3, tb_borrow(&tb, 5)), 0);
	replace_wait(a, false, 4);
	assert_int_equal(rc_member_fail(a, 3), 0);
	write_random(a, &m, &seed, 10);
	rc_array_set_rebuild_speed(a, 0, 0);
	replace_wait(a, true, 0);
	slot_is(a, 3, "mem5");
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 1u << 0 | 1u << 1 | 1u << 3, 0);  /* mem4, mem5 hold data */
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/* A speed limit holds a rebuild back: 6 MiB members at 4 MiB/s take
 * more than half a second (unlimited: a few milliseconds). */
static void test_rebuild_speed_limit(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	struct timespec t0, t1;
	uint64_t min, max;
	double s;

	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, 1);
	a = tb_assemble(&tb, 0, 0);
	rc_array_set_rebuild_speed(a, 1024, 4096);
	rc_array_get_rebuild_speed(a, &min, &max);
	assert_int_equal(min, 1024);
	assert_int_equal(max, 4096);
	assert_int_equal(rc_member_fail(a, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rc_member_replace(a, -1, NULL, NULL, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(s > 0.5);
	assert_int_equal(rc_array_close(a), 0);
	/* the limits are kept on the members */
	a = tb_assemble(&tb, 0, 0);
	rc_array_get_rebuild_speed(a, &min, &max);
	assert_int_equal(min, 1024);
	assert_int_equal(max, 4096);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* A limit lifted while the rebuild waits on it counts at once: at
 * 1 KiB/s a 64 KiB-chunk stripe is a minute's wait, which went on to its
 * end after `raidfsctl set` lifted the limit (a tester's paced catch-up
 * stalled a minute at every mount, 2026-12-07).  Lifted after 0.3 s, the
 * rebuild of these small members ends in well under that minute. */
static void test_rebuild_speed_lifted(void **state)
{
	struct timespec t0, t1, nap = { 0, 300 * 1000 * 1000 };
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;

	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 65536, 1);
	a = tb_assemble(&tb, 0, 0);
	rc_array_set_rebuild_speed(a, 1, 1);
	assert_int_equal(rc_array_start_recovery(a), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rc_member_fail(a, 0), 0);      /* the spare goes in */
	nanosleep(&nap, NULL);
	rc_array_info(a, &info);
	assert_true(info.degraded);                      /* held back */
	rc_array_set_rebuild_speed(a, 0, 0);
	for (int i = 0; i < 3000; i++) {
		rc_array_info(a, &info);
		if (!info.degraded)
			break;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_false(info.degraded);
	if (t1.tv_sec - t0.tv_sec > 30)
		fail_msg("the rebuild took %lld s after the limit was lifted",
			 (long long)(t1.tv_sec - t0.tv_sec));
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* The scrub's admin state is written to every member and read back by
 * the next assembly, also from one member alone; a read-only array
 * refuses to record it. */
static void test_scrub_state_kept(void **state)
{
	struct rc_admin ad = { 0 }, got;
	struct rc_testbed tb;
	struct rc_array *a;

	tb_init(&tb, 3, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, 0);
	a = tb_assemble(&tb, 0, 0);
	rc_array_get_admin(a, &got);
	assert_false(got.scrub_active);
	assert_int_equal(got.last.start_ns, 0);
	ad.scrub_active = ad.scrub_running = true;
	ad.scrub_pos = 7;
	ad.scrub = (struct rc_scrub_record){ .start_ns = 100, .stripes = 7,
					     .repaired = 2 };
	ad.last = (struct rc_scrub_record){ .start_ns = 10, .end_ns = 20,
					    .stripes = 30, .csum_errors = 1,
					    .repaired = 1 };
	assert_int_equal(rc_array_set_scrub_state(a, &ad), 0);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 1u << 0, 0);       /* slot 0 left out */
	rc_array_get_admin(a, &got);
	assert_true(got.scrub_active);
	assert_true(got.scrub_running);
	assert_int_equal(got.scrub_pos, 7);
	assert_memory_equal(&got.scrub, &ad.scrub, sizeof(ad.scrub));
	assert_memory_equal(&got.last, &ad.last, sizeof(ad.last));
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, RC_ASSEMBLE_RDONLY);
	assert_int_equal(rc_array_set_scrub_state(a, &ad), -EROFS);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* Superblock writes go through io.c: a failing one counts against its
 * member, which turns faulty, and the others record it. */
static void test_superblock_write_fails(void **state)
{
	struct ev_log l = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_member_status st;
	struct model m;
	uint64_t seed = 11;
	unsigned told = 0;

	tb_init(&tb, 5, DEV_BYTES);
	tb_create(&tb, RC_RAID6, 16384, 0);
	a = tb_assemble(&tb, 0, 0);
	model_init(&m, a);
	write_random(a, &m, &seed, 10);
	rc_array_set_event_handler(a, ev_record, &l);
	assert_int_equal(rc_fault_eio(tb.fault[1], RC_FAULT_WRITE, 0,
				      2 * RC_BLOCK_SIZE, RC_FAULT_PERSISTENT), 0);
	assert_int_equal(rc_member_fail(a, 0), 0);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_FAULTY);
	assert_true(st.write_errors >= 1);
	/* both faults are told (the superblock write's went untold) */
	for (int i = 0; i < l.n; i++)
		if (l.kind[i] == RC_EV_FAIL)
			told |= 1u << l.slot[i];
	assert_int_equal(told, 3);
	rc_array_set_event_handler(a, NULL, NULL);
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);
	rc_array_member_status(a, 1, &st);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	verify_all(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/* Discarded whole stripes read as zeros, stay consistent, and partial
 * stripes at the edges keep their data. */
static void test_discard(void **state)
{
	const enum rc_level levels[] = { RC_RAID5, RC_RAID6, RC_RAID1, RC_RAID10 };

	for (int l = 0; l < 4; l++) {
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		struct rc_scrub_report rep;
		struct model m;
		uint64_t seed = 77, first, last;

		tb_init(&tb, 4, DEV_BYTES);
		tb_create(&tb, levels[l], 16384, 0);
		a = tb_assemble(&tb, 0, 0);
		model_init(&m, a);
		rc_array_info(a, &info);
		write_random(a, &m, &seed, 40);
		assert_int_equal(rc_flush(a), 0);
		/* From the middle of one stripe to the middle of another. */
		first = info.stripe_blocks * 3 + 1;
		last = info.stripe_blocks * 9 + 2;
		assert_int_equal(rc_discard(a, first, last - first), 0);
		for (uint64_t b = info.stripe_blocks * 4;
		     b < info.stripe_blocks * 9; b++)
			m.gen[b] = 0;
		verify_all(a, &m);
		write_random(a, &m, &seed, 5);
		assert_int_equal(rc_array_close(a), 0);
		a = tb_assemble(&tb, 0, 0);
		verify_all(a, &m);
		assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
		assert_int_equal(rep.csum_errors + rep.parity_mismatches, 0);
		assert_int_equal(rc_array_close(a), 0);
		a = tb_assemble(&tb, 1u << 2, 0);         /* and degraded */
		verify_all(a, &m);
		assert_int_equal(rc_array_close(a), 0);
		free(m.gen);
		tb_fini(&tb);
	}
}

struct worker {
	struct rc_array *a;
	uint64_t first, count;      /* this thread's region */
	uint64_t seed;
	uint32_t *gen;              /* per block of the region */
	int errors;
};

/* Random writes, reads and flushes in its own region, verifying as it
 * goes; regions share stripes with the neighbours'. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(32 * RC_BLOCK_SIZE);

	for (int i = 0; i < 300; i++) {
		uint64_t off = tb_rand(&w->seed) % w->count;
		uint32_t len = 1 + (uint32_t)(tb_rand(&w->seed) % 32);
		int op = (int)(tb_rand(&w->seed) % 10);

		if (off + len > w->count)
			len = (uint32_t)(w->count - off);
		if (op < 5) {
			uint32_t gen = (uint32_t)i + 1;

			for (uint32_t b = 0; b < len; b++) {
				tb_pattern(buf + (size_t)b * RC_BLOCK_SIZE,
					   w->first + off + b, gen);
				w->gen[off + b] = gen;
			}
			w->errors += rc_write(w->a, w->first + off, len, buf) != 0;
		} else if (op < 9) {
			w->errors += rc_read(w->a, w->first + off, len, buf) != 0;
			for (uint32_t b = 0; b < len; b++)
				if (w->gen[off + b] &&
				    !tb_check(buf + (size_t)b * RC_BLOCK_SIZE,
					      w->first + off + b, w->gen[off + b]))
					w->errors++;
		} else {
			w->errors += rc_flush(w->a) != 0;
		}
	}
	free(buf);
	return NULL;
}

static void test_concurrent(void **state)
{
	const enum rc_level levels[] = { RC_RAID5, RC_RAID6, RC_RAID10 };

	/* The writers commit themselves, then the writeback thread does. */
	for (int l = 0; l < 6; l++) {
		struct rc_testbed tb;
		struct worker w[4];
		pthread_t th[4];
		struct rc_array *a;
		struct rc_info info;

		tb_init(&tb, 5, DEV_BYTES);
		tb_create(&tb, levels[l % 3], 16384, 0);
		a = tb_assemble(&tb, 0, 0);
		rc_array_set_cache(a, 1 << 20);   /* write back under pressure */
		rc_array_set_writeback(a, l >= 3);
		rc_array_info(a, &info);
		for (int t = 0; t < 4; t++) {
			/* 101 blocks: regions do not align to stripes. */
			w[t] = (struct worker){ .a = a, .first = (uint64_t)t * 101,
				.count = 101, .seed = (uint64_t)t + 1,
				.gen = calloc(101, sizeof(uint32_t)) };
			pthread_create(&th[t], NULL, worker_main, &w[t]);
		}
		for (int t = 0; t < 4; t++)
			pthread_join(th[t], NULL);
		for (int t = 0; t < 4; t++)
			assert_int_equal(w[t].errors, 0);
		assert_int_equal(rc_array_close(a), 0);
		/* And on the media, after a fresh assembly. */
		a = tb_assemble(&tb, 0, 0);
		for (int t = 0; t < 4; t++) {
			uint8_t buf[RC_BLOCK_SIZE];

			for (uint64_t b = 0; b < w[t].count; b++) {
				if (!w[t].gen[b])
					continue;
				assert_int_equal(rc_read(a, w[t].first + b, 1, buf), 0);
				assert_true(tb_check(buf, w[t].first + b, w[t].gen[b]));
			}
			free(w[t].gen);
		}
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_degraded_missing),
		cmocka_unit_test(test_degraded_midrun),
		cmocka_unit_test(test_suspend_beyond_redundancy),
		cmocka_unit_test(test_suspend_two_at_once),
		cmocka_unit_test(test_degraded_read_once),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_spare_takes_over),
		cmocka_unit_test(test_spare_automatic),
		cmocka_unit_test(test_manage_fail_remove_add),
		cmocka_unit_test(test_sb_readback_error_said),
		cmocka_unit_test(test_spare_counts_fresh),
		cmocka_unit_test(test_rebuild_second_loss_failed),
		cmocka_unit_test(test_rebuild_survivor_errors_kept),
		cmocka_unit_test(test_scrub_slot_swapped),
		cmocka_unit_test(test_holes_keep_their_source),
		cmocka_unit_test(test_replace_online),
		cmocka_unit_test(test_replace_resume_and_fail),
		cmocka_unit_test(test_replace_onto_liar),
		cmocka_unit_test(test_rebuild_onto_liar),
		cmocka_unit_test(test_rebuild_sparse_liar),
		cmocka_unit_test(test_rebuild_speed_limit),
		cmocka_unit_test(test_rebuild_speed_lifted),
		cmocka_unit_test(test_scrub_state_kept),
		cmocka_unit_test(test_superblock_write_fails),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_rebuild_large_writes),
		cmocka_unit_test(test_rebuild_pipeline_faults),
		cmocka_unit_test(test_poisoned_entry_not_an_error),
		cmocka_unit_test(test_rebuild_long_batches),
		cmocka_unit_test(test_csum_miss_unlocked),
		cmocka_unit_test(test_writeback_thread),
		cmocka_unit_test(test_flush_inline_when_fast),
		cmocka_unit_test(test_waiting_members_overlap),
		cmocka_unit_test(test_slow_reads_overlap),
		cmocka_unit_test(test_slow_writes_overlap),
		cmocka_unit_test(test_read_spans),
		cmocka_unit_test(test_read_span_merges),
	};

	/* RC_TEST_FILTER=test_slow_writes_overlap: one test alone */
	if (getenv("RC_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RC_TEST_FILTER"));

	return cmocka_run_group_tests(tests, NULL, NULL);
}
