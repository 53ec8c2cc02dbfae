/*
 * test_crash: cut the power after every single write of a mixed workload
 * (full-stripe and partial-stripe writes, flushes), with unflushed writes
 * either all lost or a random subset surviving in any order.  After each
 * cut the array is assembled from the crash image as it is, and again with
 * each member (for RAID 6 each pair) missing as well: every block flushed
 * before the cut reads back exactly, and every other block holds one of
 * the values written to it - nothing outside the in-flight writes changed;
 * and no member is counted an error: the crash damaged none.  The fresh
 * configurations write new blocks (RC_WRITE_FRESH) beside live ones, so
 * that full fresh stripes go direct (no journal copy): a cut can tear them;
 * replay settles them, scrub finds them consistent, every flushed block
 * still reads back exactly with any member (pair) missing, and without the
 * settling the reads fail.  RAID 1 of 3 fresh tries each cut with a
 * second seed (which unsynced writes survive): one of them tears the
 * direct stripe of the batch before the last, when a flush committed two
 * batches and the crash came as the second one's records went out.
 *
 * Journal damage: an unclean image whose journal holds committed batches
 * (the last one's in-place writes lost), then garbage or zeros over one
 * member's whole ring (two for RAID 6), or over one of its records: the
 * array assembles, every flushed write reads back exactly, scrub is clean,
 * read-only and read-write alike, and the damaged member (only it) is
 * counted - not one whose record of the last batch alone is gone, as a
 * crash leaves it; with more members damaged than the
 * redundancy the batches are not replayed and the stripes keep a state
 * they had.  And a read-write assembly that is only read writes nothing,
 * clean or unclean, until the first write applies the journal in place.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ondisk.h"
#include "rc_test_util.h"

/* The power cuts are split in two binaries that run side by side:
 * this one, and test_crash_raid6.c (CRASH_PART 1: the RAID 6 and most of
 * the fresh configurations, about half of the time); cfg.part says which. */
#ifndef CRASH_PART
#define CRASH_PART 0
#endif

#define DEV_BYTES (4ull << 20)
#define BASE_BLOCKS 320
#define MAX_PEND 8

struct cfg {
	enum rc_level level;
	int members;
	uint32_t chunk;
	enum rc_power_mode mode;
	bool pairs;
	bool fresh;             /* fresh_work, not workload */
	int part;               /* CRASH_PART that runs it */
	int seeds;              /* each cut with this many seeds (0: 1) */
};

static const struct cfg cfgs[] = {
	{ RC_RAID5, 4, 16384, RC_POWER_DROP, false, false, 0, 0 },
	{ RC_RAID5, 4, 16384, RC_POWER_REORDER, false, false, 0, 0 },
	{ RC_RAID4, 3, 8192, RC_POWER_REORDER, false, false, 0, 0 },
	{ RC_RAID6, 5, 8192, RC_POWER_REORDER, true, false, 1, 0 },
	{ RC_RAID1, 2, 16384, RC_POWER_REORDER, false, false, 0, 0 },
	{ RC_RAID10, 3, 8192, RC_POWER_REORDER, false, false, 0, 0 },
	{ RC_RAID0, 2, 8192, RC_POWER_REORDER, false, false, 0, 0 },
	{ RC_RAID5, 4, 16384, RC_POWER_REORDER, false, true, 1, 0 },
	{ RC_RAID6, 5, 8192, RC_POWER_REORDER, true, true, 1, 0 },
	{ RC_RAID1, 2, 16384, RC_POWER_REORDER, false, true, 1, 0 },
	{ RC_RAID1, 3, 16384, RC_POWER_REORDER, false, true, 1, 2 },
	{ RC_RAID10, 3, 8192, RC_POWER_REORDER, false, true, 0, 0 },
	{ RC_RAID0, 2, 8192, RC_POWER_REORDER, false, true, 0, 0 },
};

struct op {
	uint32_t start, len;    /* len 0: flush */
	bool fresh;             /* RC_WRITE_FRESH */
};

/* Full stripes, partial stripes, single blocks, overlaps, flushes. */
static const struct op workload[] = {
	{ 0, 24, false }, { 30, 3, false }, { 0, 0, false }, { 7, 1, false }, { 100, 36, false }, { 50, 5, false },
	{ 0, 0, false }, { 31, 1, false }, { 200, 9, false }, { 24, 12, false }, { 5, 2, false }, { 0, 0, false },
	{ 130, 40, false }, { 61, 1, false }, { 62, 1, false }, { 0, 0, false }, { 250, 3, false }, { 0, 48, false },
};
#define NOPS (sizeof(workload) / sizeof(workload[0]))

/*
 * Fresh writes (the filesystem's new blocks: RC_WRITE_FRESH) beside live
 * ones: full fresh stripes go direct, without a journal copy.  Until the
 * next flush nothing may depend on them, so after a crash with a member
 * missing they may read as anything; with every member there, each
 * block still holds its flushed value or one written to it, and scrub
 * finds the stripes consistent.  RAID 5 of 4 (chunk 4 blocks): the
 * stripes of 12 blocks from 324 on are full.
 */
static const struct op fresh_work[] = {
	{ 324, 24, true }, { 0, 0, false }, { 348, 12, true }, { 360, 3, true },
	{ 30, 3, false }, { 0, 0, false }, { 324, 12, true }, { 336, 24, true },
	{ 100, 36, false }, { 0, 0, false }, { 372, 12, true }, { 7, 1, false },
};
#define FRESH_OPS (sizeof(fresh_work) / sizeof(fresh_work[0]))

struct model {
	uint32_t durable[BASE_BLOCKS + 64];
	uint32_t pend[BASE_BLOCKS + 64][MAX_PEND];
	uint8_t npend[BASE_BLOCKS + 64];
	bool fresh[BASE_BLOCKS + 64];   /* a fresh write pends */
};

static void write_gen(struct rc_array *a, uint32_t start, uint32_t len,
		      uint32_t gen, unsigned flags, int *ret)
{
	uint8_t *buf = malloc((size_t)len * RC_BLOCK_SIZE);

	for (uint32_t i = 0; i < len; i++)
		tb_pattern(buf + (size_t)i * RC_BLOCK_SIZE, start + i, gen);
	*ret = rc_write_flags(a, start, len, buf, flags);
	free(buf);
}

static void model_flushed(struct model *m)
{
	for (uint32_t b = 0; b < BASE_BLOCKS + 64; b++) {
		if (m->npend[b])
			m->durable[b] = m->pend[b][m->npend[b] - 1];
		m->npend[b] = 0;
		m->fresh[b] = false;
	}
}

/* Runs ops until the power goes; fills the model. */
static void run_ops(struct rc_testbed *tb, struct rc_array *a,
		    struct model *m, const struct op *ops, size_t nops)
{
	int ret = 0;

	for (uint32_t b = 0; b < BASE_BLOCKS + 64; b++) {
		m->durable[b] = b < BASE_BLOCKS ? 1 : 0;
		m->npend[b] = 0;
		m->fresh[b] = false;
	}
	for (size_t i = 0; i < nops && ret == 0; i++) {
		const struct op *o = &ops[i];
		uint32_t gen = 10 + (uint32_t)i;

		if (o->len == 0) {
			ret = rc_flush(a);
			if (ret == 0 && !rc_power_is_off(tb->power))
				model_flushed(m);
			continue;
		}
		for (uint32_t b = o->start; b < o->start + o->len; b++) {
			m->pend[b][m->npend[b]++] = gen;
			m->fresh[b] |= o->fresh;
		}
		write_gen(a, o->start, o->len, gen,
			  o->fresh ? RC_WRITE_FRESH : 0, &ret);
	}
	/* The end of the run: one more flush, like a clean unmount. */
	if (ret == 0 && rc_flush(a) == 0 && !rc_power_is_off(tb->power))
		model_flushed(m);
}

static void run_workload(struct rc_testbed *tb, struct rc_array *a,
			 struct model *m, bool fresh)
{
	if (fresh)
		run_ops(tb, a, m, fresh_work, FRESH_OPS);
	else
		run_ops(tb, a, m, workload, NOPS);
}

static bool block_ok(const struct model *m, uint32_t b, const uint8_t *p,
		     bool degraded)
{
	static const uint8_t zero[RC_BLOCK_SIZE];

	if (degraded && m->fresh[b])
		return true;
	if (m->durable[b] ? tb_check(p, b, m->durable[b])
			  : !memcmp(p, zero, RC_BLOCK_SIZE))
		return true;
	for (uint8_t k = 0; k < m->npend[b]; k++)
		if (tb_check(p, b, m->pend[b][k]))
			return true;
	return false;
}

/* A crash damages no member: a write it cut short (on some members,
 * not others) is not an error of the members that lack it. */
static void no_member_blamed(struct rc_array *a, size_t cut)
{
	struct rc_member_status st;
	struct rc_info info;

	assert_int_equal(rc_array_info(a, &info), 0);
	for (uint32_t s = 0; s < info.members; s++) {
		assert_int_equal(rc_array_member_status(a, (int)s, &st), 0);
		if (st.read_errors || st.csum_errors || st.write_errors)
			fail_msg("cut %zu: member %u counted %llu read, %llu "
				 "checksum, %llu write errors after a crash "
				 "alone", cut, s,
				 (unsigned long long)st.read_errors,
				 (unsigned long long)st.csum_errors,
				 (unsigned long long)st.write_errors);
	}
	if (info.errors)
		fail_msg("cut %zu: errors recorded after a crash alone", cut);
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
					      buf + (size_t)i * RC_BLOCK_SIZE,
					      false))
					fail_msg("cut %zu, read-only: block %u "
						 "wrong", cut, b + i);
		}
		no_member_blamed(a, cut);
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
			if (!block_ok(m, b + i, buf + (size_t)i * RC_BLOCK_SIZE,
				      skip != 0))
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

	write_gen(a, 0, BASE_BLOCKS, 1, 0, &ret);
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
	run_workload(tb, a, m, c->fresh);
	n = rc_power_writes(tb->power) - n;
	if (c->fresh) {
		struct rc_info info;

		/* 324..347, 336..359, 372..383: whole fresh stripes */
		assert_int_equal(rc_array_info(a, &info), 0);
		if (info.direct_stripes < 3)
			fail_msg("only %llu stripes went direct",
				 (unsigned long long)info.direct_stripes);
	}
	rc_array_close(a);
	free(m);
	return n;
}

/* Every member missing is checked after every cut; of the pairs (RAID 6),
 * a third after each cut, in turn, so that each pair is still checked
 * after every third cut - all of them with RAIDFS_CRASH_ALL_PAIRS set
 * (make faults), which takes about twice as long. */
static bool pair_checked(int i, int j, size_t cut)
{
	static int all = -1;

	if (all < 0)
		all = getenv("RAIDFS_CRASH_ALL_PAIRS") != NULL;
	return all || (i + j + cut) % 3 == 0;
}

static void crash_one(struct rc_testbed *tb, const struct cfg *c,
		      uint8_t **base, size_t cut, uint64_t seed)
{
	struct rc_dev *devs[TB_MAX];
	struct model *m = calloc(1, sizeof(*m));
	struct rc_array *a;
	uint8_t **image;
	char err[256];

	tb_restore(tb, base);
	tb_devs_power(tb, devs, c->mode, seed, 0);
	assert_int_equal(tb_try_assemble(tb, devs, 0, &a, err, sizeof(err)), 0);
	rc_power_cut_after(tb->power, cut);
	run_workload(tb, a, m, c->fresh);
	assert_true(rc_power_is_off(tb->power));
	rc_array_close(a);             /* fails: the power is off */
	image = tb_snapshot(tb);
	verify(tb, m, 0, cut);
	for (int i = 0; i < c->members; i++) {
		tb_restore(tb, image);
		if (c->level != RC_RAID0)
			verify(tb, m, 1u << i, cut);
		for (int j = i + 1; c->pairs && j < c->members; j++) {
			if (!pair_checked(i, j, cut))
				continue;
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

		if (c->part != CRASH_PART)
			continue;
		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		base_fill(&tb);
		base = tb_snapshot(&tb);
		writes = count_writes(&tb, c);
		assert_true(writes > 10);
		for (size_t cut = 1; cut <= writes; cut++)
			for (int k = 0; k < (c->seeds ? c->seeds : 1); k++)
				crash_one(&tb, c, base, cut,
					  cut * 7 + 1 + 3000 * (uint64_t)k);
		fprintf(stderr, "%s/%d %s%s: %llu cut points verified\n",
			rc_level_name(c->level), c->members,
			c->mode == RC_POWER_DROP ? "drop" : "reorder",
			c->fresh ? " fresh" : "",
			(unsigned long long)writes);
		tb_snapshot_free(&tb, base);
		tb_fini(&tb);
	}
}

/* ---- journal damage -------------------------------------------------------- */

#define JBLOCKS (BASE_BLOCKS + 64)

/* Batches of writes, each flushed: committed, and every batch but the last
 * in place too when the power goes. */
static const struct op jwork[] = {
	{ 0, 24, false }, { 30, 3, false }, { 0, 0, false }, { 100, 36, false }, { 50, 5, false }, { 0, 0, false },
	{ 7, 1, false }, { 200, 9, false }, { 130, 40, false }, { 300, 30, false }, { 0, 0, false },
};
#define JOPS (sizeof(jwork) / sizeof(jwork[0]))

/* What each block holds after the last flush, and before it. */
struct jmodel {
	uint32_t now[JBLOCKS], before[JBLOCKS];
};

static void jmodel_block(const struct jmodel *m, uint32_t b, const uint8_t *p,
			 bool either, const char *what)
{
	static const uint8_t zero[RC_BLOCK_SIZE];

	for (int k = 0; k < (either ? 2 : 1); k++) {
		uint32_t g = k ? m->before[b] : m->now[b];

		if (g ? tb_check(p, b, g) : !memcmp(p, zero, RC_BLOCK_SIZE))
			return;
	}
	fail_msg("%s: block %u holds neither what was flushed last%s", what, b,
		 either ? " nor what it held before" : "");
}

/* Base, then jwork with the power cut after the last flush. */
static void jimage_make(struct rc_testbed *tb, enum rc_power_mode mode,
			struct jmodel *m)
{
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	char err[256];
	int ret;

	for (uint32_t b = 0; b < JBLOCKS; b++)
		m->now[b] = m->before[b] = b < BASE_BLOCKS ? 1 : 0;
	tb_devs_power(tb, devs, mode, 5, 0);
	assert_int_equal(tb_try_assemble(tb, devs, 0, &a, err, sizeof(err)), 0);
	for (size_t i = 0; i < JOPS; i++) {
		const struct op *o = &jwork[i];

		if (o->len == 0) {
			assert_int_equal(rc_flush(a), 0);
			if (i + 1 < JOPS)
				memcpy(m->before, m->now, sizeof(m->now));
			continue;
		}
		write_gen(a, o->start, o->len, 10 + (uint32_t)i, 0, &ret);
		assert_int_equal(ret, 0);
		for (uint32_t b = o->start; b < o->start + o->len; b++)
			m->now[b] = 10 + (uint32_t)i;
	}
	rc_power_cut(tb->power);
	rc_array_close(a);             /* fails: the power is off */
}

static void jsb(struct rc_testbed *tb, int i, struct rc_sb *sb)
{
	uint8_t blk[RC_BLOCK_SIZE];
	const char *why;

	assert_int_equal(rc_dev_read(tb->mem[i], blk, RC_BLOCK_SIZE, 0), 0);
	assert_int_equal(rc_sb_decode(blk, sb, &why), 0);
}

/* Ring blocks of member i's first and last record after its checkpoint,
 * whether the last has a payload, and its seq (lastseq may be NULL). */
static void jrecords(struct rc_testbed *tb, int i, const struct rc_sb *sb,
		     uint64_t *first, uint64_t *last, bool *payload,
		     uint64_t *lastseq)
{
	uint8_t blk[RC_BLOCK_SIZE];
	struct rc_jhdr *h = malloc(sizeof(*h));
	uint64_t pos = sb->journal_tail, seq = sb->journal_seq;
	bool wrapped = false, any = false;

	assert_non_null(h);
	for (;;) {
		if (pos >= sb->journal_blocks) {
			pos = 0;
			wrapped = true;
		}
		assert_int_equal(rc_dev_read(tb->mem[i], blk, RC_BLOCK_SIZE,
			(sb->journal_offset + pos) * RC_BLOCK_SIZE), 0);
		if (rc_jhdr_decode(blk, h) || h->role != (uint32_t)i ||
		    h->ring_pos != pos || h->seq <= seq) {
			if (wrapped || pos == 0)
				break;
			pos = 0;
			wrapped = true;
			continue;
		}
		if (!any)
			*first = pos;
		any = true;
		*last = pos;
		*payload = h->npayload > 0;
		seq = h->seq;
		if (lastseq)
			*lastseq = seq;
		pos += 1 + h->npayload;
	}
	free(h);
	assert_true(any);
}

enum jdamage { J_RING_GARBAGE, J_RING_ZEROS, J_FIRST_HEADER, J_LAST_PAYLOAD };
static const char *const jdamage_name[] = {
	"garbage over the ring", "zeros over the ring",
	"garbage over the first record's header",
	"zeros over the last record's payload",
};

/* Whether member i's last record is of the last batch written (no member
 * has a later one): losing it alone is what a crash does, nobody's fault. */
static bool jlast_is_last(struct rc_testbed *tb, int members, int i)
{
	uint64_t first, last, seq[TB_MAX] = { 0 }, max = 0;
	bool payload;
	struct rc_sb sb;

	for (int k = 0; k < members; k++) {
		jsb(tb, k, &sb);
		jrecords(tb, k, &sb, &first, &last, &payload, &seq[k]);
		max = seq[k] > max ? seq[k] : max;
	}
	return seq[i] == max;
}

/* Writes garbage (or zeros) over blocks [first, first + n) of member i. */
static void jsmash(struct rc_testbed *tb, int i, uint64_t first, uint64_t n,
		   bool zeros, uint64_t seed)
{
	uint8_t *buf = calloc(n, RC_BLOCK_SIZE);
	uint64_t *w = (uint64_t *)buf;

	assert_non_null(buf);
	for (size_t k = 0; !zeros && k < n * RC_BLOCK_SIZE / 8; k++)
		w[k] = tb_rand(&seed);
	assert_int_equal(rc_dev_write(tb->mem[i], buf, n * RC_BLOCK_SIZE,
				      first * RC_BLOCK_SIZE), 0);
	free(buf);
}

static void jdamage_apply(struct rc_testbed *tb, int i, enum jdamage d)
{
	uint64_t first = 0, last = 0;
	bool payload = false;
	struct rc_sb sb;

	jsb(tb, i, &sb);
	switch (d) {
	case J_RING_GARBAGE:
	case J_RING_ZEROS:
		jsmash(tb, i, sb.journal_offset, sb.journal_blocks,
		       d == J_RING_ZEROS, 77 + (uint64_t)i);
		return;
	case J_FIRST_HEADER:
		jrecords(tb, i, &sb, &first, &last, &payload, NULL);
		jsmash(tb, i, sb.journal_offset + first, 1, false, 5);
		return;
	case J_LAST_PAYLOAD:
		jrecords(tb, i, &sb, &first, &last, &payload, NULL);
		jsmash(tb, i, sb.journal_offset + last + (payload ? 1 : 0), 1,
		       true, 0);
		return;
	}
}

/* Reads everything back; scrub (read-only) must find nothing. */
static void jcheck(struct rc_array *a, const struct jmodel *m, bool either,
		   const char *what)
{
	uint8_t *buf = malloc(64 * RC_BLOCK_SIZE);

	for (uint32_t b = 0; b < JBLOCKS; b += 64) {
		assert_int_equal(rc_read(a, b, 64, buf), 0);
		for (uint32_t i = 0; i < 64; i++)
			jmodel_block(m, b + i, buf + (size_t)i * RC_BLOCK_SIZE,
				     either, what);
	}
	tb_scrub_clean(a, what);
	free(buf);
}

static struct rc_array *jassemble(struct rc_testbed *tb, unsigned flags,
				  const char *what)
{
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a = NULL;
	char err[512];

	tb_devs(tb, devs, false, 0);
	if (tb_try_assemble(tb, devs, flags, &a, err, sizeof(err)))
		fail_msg("%s: assemble: %s", what, err);
	return a;
}

/*
 * Read-only and read-write assemblies that only read: the data, through
 * the overlay, and not a byte written.  Then a first write puts the
 * journal in place: after a clean close nothing is left to replay.
 */
/* The members counted an error are exactly those of mask: journal damage
 * is charged to the damaged member, a crash to nobody. */
static void jblamed(struct rc_array *a, uint64_t mask, const char *what)
{
	struct rc_member_status st;
	struct rc_info info;

	rc_array_info(a, &info);
	for (uint32_t s = 0; s < info.members; s++) {
		assert_int_equal(rc_array_member_status(a, (int)s, &st), 0);
		if (!st.csum_errors != !(mask >> s & 1))
			fail_msg("%s: member %u counted %llu checksum errors, "
				 "expected %s", what, s,
				 (unsigned long long)st.csum_errors,
				 mask >> s & 1 ? "some" : "none");
	}
}

/* blamed: the members replay must count (jblamed), ~0: not checked. */
/* Replay stopped at a batch it could not apply: when a ring still holds a
 * later batch (lost: the first was committed), that is said and counted
 * as errors (it was "not committed" and no error, fsck "no data lost");
 * with no later batch anywhere, nothing proves a commit. */
static void jlost_said(struct rc_testbed *tb, bool later, const char *what)
{
	struct rc_array *a = jassemble(tb, RC_ASSEMBLE_RDONLY, what);
	struct rc_info info;

	rc_array_info(a, &info);
	if (later != (info.journal_lost != 0) || (later && !info.errors))
		fail_msg("%s: journal_lost %llu, errors %d", what,
			 (unsigned long long)info.journal_lost, info.errors);
	assert_int_equal(rc_array_close(a), 0);
}

static void jverify(struct rc_testbed *tb, struct jmodel *m, bool either,
		    uint64_t blamed, const char *what)
{
	uint64_t before = tb_media_hash(tb);
	unsigned flags[2] = { RC_ASSEMBLE_RDONLY, 0 };
	struct rc_info info;
	struct rc_array *a;
	int ret;

	for (int k = 0; k < 2; k++) {
		a = jassemble(tb, flags[k], what);
		rc_array_info(a, &info);
		assert_true(info.was_unclean);
		if (!either)
			assert_true(info.replayed_txns > 0);
		else
			assert_int_equal(info.replayed_txns, 0);
		jcheck(a, m, either, what);
		if (k == 0 && blamed != ~0ull)
			jblamed(a, blamed, what);
		assert_int_equal(rc_array_close(a), 0);
		if (tb_media_hash(tb) != before)
			fail_msg("%s: an assembly that only read wrote", what);
	}
	a = jassemble(tb, 0, what);
	write_gen(a, JBLOCKS - 1, 1, 99, 0, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(rc_flush(a), 0);
	assert_int_equal(rc_array_close(a), 0);
	m->now[JBLOCKS - 1] = m->before[JBLOCKS - 1] = 99;
	a = jassemble(tb, 0, what);
	rc_array_info(a, &info);
	assert_false(info.was_unclean);
	jcheck(a, m, either, what);
	assert_int_equal(rc_array_close(a), 0);
	m->now[JBLOCKS - 1] = m->before[JBLOCKS - 1] = 0;
}

/*
 * One member's first record damaged (ring damage, counted) and another
 * member's record of the last batch cut short (the crash): when both owe
 * a column of one row, replay cannot rebuild either.  The last batch was
 * never acknowledged (its flush did not complete everywhere), so it is not
 * replayed: every block reads back as after the last batch or before it,
 * none as an I/O error, and only the damaged member is counted.
 */
static void jverify_torn(struct rc_testbed *tb, const struct jmodel *m,
			 int damaged, const char *what)
{
	unsigned flags[2] = { RC_ASSEMBLE_RDONLY, 0 };
	uint64_t before = tb_media_hash(tb);
	struct rc_array *a;

	for (int k = 0; k < 2; k++) {
		a = jassemble(tb, flags[k], what);
		jcheck(a, m, true, what);
		if (k == 0)
			jblamed(a, 1ull << damaged, what);
		assert_int_equal(rc_array_close(a), 0);
		if (tb_media_hash(tb) != before)
			fail_msg("%s: an assembly that only read wrote", what);
	}
}

static void test_journal_damage_torn_last(void **state)
{
	static const struct cfg tcfgs[] = {
		{ RC_RAID5, 4, 16384, RC_POWER_DROP, false, false, 0, 0 },
		{ RC_RAID4, 3, 8192, RC_POWER_DROP, false, false, 0, 0 },
		{ RC_RAID1, 2, 16384, RC_POWER_DROP, false, false, 0, 0 },
	};
	uint32_t tried = 0;

	for (size_t c = 0; c < sizeof(tcfgs) / sizeof(tcfgs[0]); c++) {
		const struct cfg *cf = &tcfgs[c];
		struct rc_testbed tb;
		struct jmodel m;
		uint8_t **image;
		char what[160];

		tb_init(&tb, cf->members, DEV_BYTES);
		tb_create(&tb, cf->level, cf->chunk, 0);
		base_fill(&tb);
		jimage_make(&tb, RC_POWER_DROP, &m);
		image = tb_snapshot(&tb);
		for (int i = 0; i < cf->members; i++) {
			for (int j = 0; j < cf->members; j++) {
				tb_restore(&tb, image);
				if (j == i || !jlast_is_last(&tb, cf->members, j))
					continue;
				jdamage_apply(&tb, i, J_FIRST_HEADER);
				jdamage_apply(&tb, j, J_LAST_PAYLOAD);
				snprintf(what, sizeof(what), "%s/%d: member %d's "
					 "first record damaged, member %d's last "
					 "cut short", rc_level_name(cf->level),
					 cf->members, i, j);
				jverify_torn(&tb, &m, i, what);
				tried++;
			}
		}
		tb_snapshot_free(&tb, image);
		tb_fini(&tb);
	}
	assert_true(tried >= 6);
}

static void test_journal_damage(void **state)
{
	static const struct cfg jcfgs[] = {
		{ RC_RAID1, 2, 16384, RC_POWER_DROP, false, false, 0, 0 },
		{ RC_RAID4, 3, 8192, RC_POWER_DROP, false, false, 0, 0 },
		{ RC_RAID5, 4, 16384, RC_POWER_DROP, false, false, 0, 0 },
		{ RC_RAID6, 5, 8192, RC_POWER_DROP, true, false, 0, 0 },
		{ RC_RAID10, 3, 8192, RC_POWER_DROP, false, false, 0, 0 },
	};

	for (size_t c = 0; c < sizeof(jcfgs) / sizeof(jcfgs[0]); c++) {
		const struct cfg *cf = &jcfgs[c];
		int nred = cf->level == RC_RAID6 ? 2 : 1;
		struct jmodel m;
		struct rc_testbed tb;
		uint8_t **base, **image;
		char what[160];

		tb_init(&tb, cf->members, DEV_BYTES);
		tb_create(&tb, cf->level, cf->chunk, 0);
		base_fill(&tb);
		base = tb_snapshot(&tb);
		for (int mode = RC_POWER_DROP; mode <= RC_POWER_REORDER; mode++) {
			tb_restore(&tb, base);
			jimage_make(&tb, (enum rc_power_mode)mode, &m);
			image = tb_snapshot(&tb);
			for (int d = J_RING_GARBAGE; d <= J_LAST_PAYLOAD; d++) {
				if (mode == RC_POWER_REORDER && d != J_RING_GARBAGE)
					continue;
				for (int i = 0; i < cf->members; i++) {
					uint64_t blamed = 0;
					bool cut;

					tb_restore(&tb, image);
					cut = jlast_is_last(&tb, cf->members, i);
					for (int k = 0; k < (d <= J_RING_ZEROS ?
							     nred : 1); k++) {
						jdamage_apply(&tb, (i + k) %
							      cf->members,
							      (enum jdamage)d);
						blamed |= 1ull << ((i + k) %
								   cf->members);
					}
					/* the last batch's record alone: what
					 * a crash cuts short, nobody's fault */
					if (d == J_LAST_PAYLOAD && cut)
						blamed = 0;
					snprintf(what, sizeof(what), "%s/%d, %s: "
						 "%s on member %d%s",
						 rc_level_name(cf->level),
						 cf->members, mode ? "reorder" :
						 "drop", jdamage_name[d], i,
						 nred > 1 && d <= J_RING_ZEROS ?
						 " and the next" : "");
					jverify(&tb, &m, false, blamed, what);
				}
			}
			if (mode == RC_POWER_DROP) {
				/* One member more than the redundancy: the
				 * batches were not committed as far as replay
				 * can tell; each stripe keeps a state it had. */
				tb_restore(&tb, image);
				for (int k = 0; k <= nred; k++)
					jdamage_apply(&tb, k, J_RING_GARBAGE);
				snprintf(what, sizeof(what), "%s/%d: garbage over "
					 "%d rings", rc_level_name(cf->level),
					 cf->members, nred + 1);
				jlost_said(&tb, cf->members > nred + 1, what);
				jverify(&tb, &m, true, ~0ull, what);
			}
			tb_snapshot_free(&tb, image);
		}
		fprintf(stderr, "%s/%d: journal damage survived\n",
			rc_level_name(cf->level), cf->members);
		tb_snapshot_free(&tb, base);
		tb_fini(&tb);
	}
}

/* Assembled read-write and only read, clean or unclean: not a byte
 * changes, and an unclean array stays unclean.  The first write puts the
 * replayed journal in place and marks the superblocks active. */
static void test_rw_assembly_writes_nothing(void **state)
{
	struct rc_testbed tb;
	struct rc_probe p;
	struct rc_info info;
	struct rc_array *a;
	struct rc_dev *d;
	struct jmodel m;
	uint64_t before;
	int ret;

	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, 0);
	base_fill(&tb);
	for (int unclean = 0; unclean < 2; unclean++) {
		if (unclean) {
			jimage_make(&tb, RC_POWER_DROP, &m);
			/* written by the clean round, below */
			m.now[JBLOCKS - 1] = m.before[JBLOCKS - 1] = 99;
		}
		for (int k = 0; k < 2; k++) {
			before = tb_media_hash(&tb);
			a = jassemble(&tb, 0, "read-write, read only");
			rc_array_info(a, &info);
			assert_int_equal(info.was_unclean, unclean);
			if (unclean)
				jcheck(a, &m, false, "read-write, read only");
			else
				assert_int_equal(rc_flush(a), 0);
			assert_int_equal(rc_array_close(a), 0);
			assert_true(tb_media_hash(&tb) == before);
		}
		a = jassemble(&tb, 0, "read-write, then a write");
		before = tb_media_hash(&tb);
		write_gen(a, JBLOCKS - 1, 1, 99, 0, &ret);
		assert_int_equal(ret, 0);
		/* Activated by the write itself: superblocks active, and
		 * with an unclean journal, the replay in place. */
		assert_true(tb_media_hash(&tb) != before);
		d = tb_borrow(&tb, 0);
		assert_int_equal(rc_member_probe(d, &p), 0);
		rc_dev_close(d);
		assert_false(p.clean);
		assert_int_equal(rc_array_close(a), 0);
		a = jassemble(&tb, 0, "after the first write");
		rc_array_info(a, &info);
		assert_false(info.was_unclean);
		if (unclean) {
			m.now[JBLOCKS - 1] = 99;
			jcheck(a, &m, false, "after the first write");
		}
		assert_int_equal(rc_array_close(a), 0);
	}
	tb_fini(&tb);
}

/* While active, an array's superblocks announce the direct stripes its
 * journal may hold - at a level without parity with DIRECT_NOPARITY, which
 * a 2.2 raidcore refuses (it would settle a torn one as parity) - and a
 * clean close takes both away. */
static void test_direct_features(void **state)
{
	static const struct cfg fcfgs[] = {
		{ RC_RAID0, 2, 8192, RC_POWER_DROP, false, true, 0, 0 },
		{ RC_RAID1, 2, 16384, RC_POWER_DROP, false, true, 0, 0 },
		{ RC_RAID10, 3, 8192, RC_POWER_DROP, false, true, 0, 0 },
		{ RC_RAID5, 4, 16384, RC_POWER_DROP, false, true, 0, 0 },
	};
	const uint64_t both = RC_FEATURE_INCOMPAT_DIRECT |
			      RC_FEATURE_INCOMPAT_DIRECT_NOPARITY;

	for (size_t i = 0; i < sizeof(fcfgs) / sizeof(fcfgs[0]); i++) {
		const struct cfg *c = &fcfgs[i];
		bool parity = c->level == RC_RAID5;
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		struct rc_sb sb;
		int ret;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		write_gen(a, 0, 48, 2, RC_WRITE_FRESH, &ret);
		assert_int_equal(ret, 0);
		assert_int_equal(rc_flush(a), 0);
		assert_int_equal(rc_array_info(a, &info), 0);
		if (info.direct_stripes == 0)
			fail_msg("%s: no stripe went direct",
				 rc_level_name(c->level));
		for (int m = 0; m < c->members; m++) {
			jsb(&tb, m, &sb);
			assert_int_equal(sb.feature_incompat & both,
					 parity ? RC_FEATURE_INCOMPAT_DIRECT : both);
		}
		assert_int_equal(rc_array_close(a), 0);
		for (int m = 0; m < c->members; m++) {
			jsb(&tb, m, &sb);
			assert_int_equal(sb.feature_incompat & both, 0);
		}
		tb_fini(&tb);
	}
}

/* The levels of the direct-stripe crash tests (RAID 0 first). */
static const struct cfg direct_cfgs[] = {
	{ RC_RAID0, 2, 8192, RC_POWER_DROP, false, true, 0, 0 },
	{ RC_RAID1, 2, 16384, RC_POWER_DROP, false, true, 0, 0 },
	{ RC_RAID1, 3, 16384, RC_POWER_DROP, false, true, 0, 0 },
	{ RC_RAID10, 3, 8192, RC_POWER_DROP, false, true, 0, 0 },
	{ RC_RAID4, 3, 8192, RC_POWER_DROP, false, true, 0, 0 },
	{ RC_RAID5, 4, 16384, RC_POWER_DROP, false, true, 0, 0 },
	{ RC_RAID6, 5, 8192, RC_POWER_DROP, true, true, 0, 0 },
};
#define DIRECT_FIRST 240        /* starts a stripe at every level above */
#define DIRECT_N 60

/*
 * A fresh array of c with the base written, then (journaled: two blocks
 * of the range journaled and flushed first) the range written whole and
 * fresh (direct stripes), flushed, and the power cut before a checkpoint;
 * m says what must read back.
 */
static void direct_crash(struct rc_testbed *tb, const struct cfg *c,
			 struct model *m, bool journaled, const char *what)
{
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	struct rc_info info;
	char err[256];
	int ret;

	tb_init(tb, c->members, DEV_BYTES);
	tb_create(tb, c->level, c->chunk, 0);
	base_fill(tb);
	for (uint32_t b = 0; b < BASE_BLOCKS + 64; b++)
		m->durable[b] = b < BASE_BLOCKS ? 1 : 0;
	tb_devs_power(tb, devs, c->mode, 3, 0);
	assert_int_equal(tb_try_assemble(tb, devs, 0, &a, err, sizeof(err)), 0);
	if (journaled) {
		write_gen(a, DIRECT_FIRST + 1, 2, 2, 0, &ret);
		assert_int_equal(ret, 0);
		assert_int_equal(rc_flush(a), 0);
	}
	write_gen(a, DIRECT_FIRST, DIRECT_N, 3, RC_WRITE_FRESH, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(rc_flush(a), 0);
	assert_int_equal(rc_array_info(a, &info), 0);
	if (info.direct_stripes == 0)
		fail_msg("%s: no stripe went direct", what);
	for (uint32_t b = DIRECT_FIRST; b < DIRECT_FIRST + DIRECT_N; b++)
		m->durable[b] = 3;
	rc_power_cut(tb->power);
	rc_array_close(a);             /* fails: the power is off */
}

/*
 * A block journaled in one batch, then its stripe written direct (whole,
 * fresh) in a later one, both flushed, then the power goes before a
 * checkpoint: replay must not put the older batch's copy over the direct
 * write the members hold (it did: the flushed new data read as checksum
 * failures, or as I/O errors on both RAID 10 copies).  Every level, read
 * through a read-only and then a read-write assembly, and with each
 * member missing.
 */
static void test_direct_after_journaled(void **state)
{
	for (size_t i = 0; i < sizeof(direct_cfgs) / sizeof(direct_cfgs[0]); i++) {
		const struct cfg *c = &direct_cfgs[i];
		struct model *m = calloc(1, sizeof(*m));
		struct rc_testbed tb;
		char what[64];

		snprintf(what, sizeof(what), "%s/%d", rc_level_name(c->level),
			 c->members);
		direct_crash(&tb, c, m, true, what);
		verify(&tb, m, 0, 0);
		for (int k = 0; c->level != RC_RAID0 && k < c->members; k++)
			verify(&tb, m, 1u << k, 0);
		tb_fini(&tb);
		free(m);
	}
}

/* The array read block by block, read-only or not: what the model says. */
static void settle_check(struct rc_testbed *tb, const struct model *m,
			 unsigned flags, const char *what)
{
	uint8_t *buf = malloc(RC_BLOCK_SIZE);
	struct rc_array *a = jassemble(tb, flags, what);

	for (uint32_t b = 0; b < BASE_BLOCKS + 64; b++) {
		assert_int_equal(rc_read(a, b, 1, buf), 0);
		if (!block_ok(m, b, buf, false))
			fail_msg("%s: block %u wrong", what, b);
	}
	assert_int_equal(rc_array_close(a), 0);
	free(buf);
}

/*
 * Direct stripes of the last batch, flushed (the caller's fsync
 * returned), then the power goes; while the array is down, one member's
 * data region is zeroed.  Replay settles the last batch's direct stripes
 * (no later record proves its flush): it took them "as found" - at RAID
 * 1 and 10 the first copy given to the others, at RAID 4, 5 and 6 the
 * parity made from the data - so the zeroed column went over the good
 * copies and the parity, and the data read back as zeros with no error
 * (a tester's find).  Each cell is now held to the entry the batch wrote:
 * a copy that bears it out is the one given, a data cell that fails it
 * is recovered from the others.  Each member zeroed in turn, read
 * through a read-only assembly and then a writing one.
 */
static void test_direct_settle_damaged_column(void **state)
{
	for (size_t i = 0; i < sizeof(direct_cfgs) / sizeof(direct_cfgs[0]); i++) {
		const struct cfg *c = &direct_cfgs[i];

		for (int k = 0; c->level != RC_RAID0 && k < c->members; k++) {
			struct model *m = calloc(1, sizeof(*m));
			struct rc_testbed tb;
			struct rc_sb sb;
			char what[64];
			uint8_t *z;

			snprintf(what, sizeof(what), "%s/%d, member %d zeroed",
				 rc_level_name(c->level), c->members, k);
			direct_crash(&tb, c, m, false, what);
			jsb(&tb, k, &sb);
			z = calloc(sb.member_blocks, RC_BLOCK_SIZE);
			assert_int_equal(rc_dev_write(tb.mem[k], z,
						      sb.member_blocks *
						      RC_BLOCK_SIZE,
						      sb.data_offset *
						      RC_BLOCK_SIZE), 0);
			free(z);
			settle_check(&tb, m, RC_ASSEMBLE_RDONLY, what);
			settle_check(&tb, m, 0, what);
			settle_check(&tb, m, 0, what);
			tb_fini(&tb);
			free(m);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rw_assembly_writes_nothing),
		cmocka_unit_test(test_direct_features),
		cmocka_unit_test(test_direct_after_journaled),
		cmocka_unit_test(test_direct_settle_damaged_column),
		cmocka_unit_test(test_journal_damage),
		cmocka_unit_test(test_journal_damage_torn_last),
		cmocka_unit_test(test_power_cut_every_write),
	};

	/* RC_TEST_FILTER=test_journal_damage: one test alone (the power cut
	 * test takes minutes) */
	if (getenv("RC_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RC_TEST_FILTER"));
	else if (CRASH_PART == 1)       /* the rest is test_crash's */
		cmocka_set_test_filter("test_power_cut_every_write");

	return cmocka_run_group_tests(tests, NULL, NULL);
}
