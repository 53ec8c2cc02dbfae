/*
 * test_catchup: the write-intent record and the catch-up of a returning
 * member (raidcore/wi.c) on memory members - a member away while a few
 * regions are written comes back and only those regions are rebuilt onto
 * it (counted), at assembly and through rc_member_readd; afterwards
 * another member can be lost with every block intact.  A record damaged
 * on every survivor covers nobody: the member is rebuilt in full.
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
#include "rc_test_util.h"
#include "ondisk.h"

#define CU_DEV_BYTES (32ull << 20)
#define CU_CHUNK 65536u                 /* 16 blocks: 1 MiB regions are
					   16 stripes */
#define CU_REGION_STRIPES 16u

/* Generation of every logical block written, 0: never. */
struct cu_model {
	uint64_t blocks;
	uint32_t stripe_blocks;
	uint64_t stripes;
	uint32_t *gen;
	uint32_t next;
};

static void cu_model_init(struct cu_model *m, struct rc_array *a)
{
	struct rc_info info;

	rc_array_info(a, &info);
	m->blocks = info.blocks;
	m->stripe_blocks = info.stripe_blocks;
	m->stripes = info.stripes;
	m->gen = calloc(m->blocks, sizeof(*m->gen));
	m->next = 1;
	assert_non_null(m->gen);
}

/* Writes count blocks from logical block first, a new generation. */
static void cu_write(struct rc_array *a, struct cu_model *m, uint64_t first,
		     uint32_t count)
{
	uint8_t *buf = malloc((size_t)count * RC_BLOCK_SIZE);
	uint32_t gen = m->next++;

	assert_non_null(buf);
	for (uint32_t i = 0; i < count; i++) {
		tb_pattern(buf + (size_t)i * RC_BLOCK_SIZE, first + i, gen);
		m->gen[first + i] = gen;
	}
	assert_int_equal(rc_write(a, first, count, buf), 0);
	free(buf);
}

/* Every stripe's first blocks: the whole array holds data. */
static void cu_fill(struct rc_array *a, struct cu_model *m)
{
	for (uint64_t s = 0; s < m->stripes; s++)
		cu_write(a, m, s * m->stripe_blocks, 3);
	assert_int_equal(rc_flush(a), 0);
}

static void cu_verify(struct rc_array *a, const struct cu_model *m)
{
	uint8_t buf[RC_BLOCK_SIZE], zero[RC_BLOCK_SIZE] = { 0 };

	for (uint64_t b = 0; b < m->blocks; b++) {
		assert_int_equal(rc_read(a, b, 1, buf), 0);
		if (m->gen[b] ? !tb_check(buf, b, m->gen[b]) :
		    memcmp(buf, zero, sizeof(buf)) != 0)
			fail_msg("block %llu (generation %u) reads wrong",
				 (unsigned long long)b, m->gen[b]);
	}
}

/* While a member is away: stripes 5, 100 and 101 (regions 0 and 6). */
static void cu_write_burst(struct rc_array *a, struct cu_model *m)
{
	cu_write(a, m, 5ull * m->stripe_blocks + 7, 1);
	cu_write(a, m, 100ull * m->stripe_blocks, 20);
	cu_write(a, m, 101ull * m->stripe_blocks + 3, 2);
	assert_int_equal(rc_flush(a), 0);
}

/* Slot's catch-up (or full rebuild) to the end: what it rebuilt. */
static struct rc_member_status cu_rebuild(struct rc_array *a, int slot)
{
	struct rc_member_status st;

	assert_int_equal(rc_member_replace(a, slot, NULL, NULL, NULL), 0);
	rc_array_member_status(a, slot, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	assert_false(st.catchup);
	return st;
}

static void cu_expect_two_regions(const struct rc_member_status *st)
{
	assert_int_equal(st->resync_regions, 2);
	assert_int_equal(st->resync_stripes, 2 * CU_REGION_STRIPES);
}

/* Lose `lost` (a member that was never away): everything still reads. */
static void cu_verify_without(struct rc_testbed *tb, const struct cu_model *m,
			      int lost)
{
	struct rc_array *a = tb_assemble(tb, 1u << lost, 0);

	cu_verify(a, m);
	assert_int_equal(rc_array_close(a), 0);
}

/* Member devi's device is refused as slot's catch-up (still the
 * caller's), then rebuilt into slot in full; every block reads, also
 * without member lost.  Closes a and frees the bed. */
static void cu_full_only(struct rc_testbed *tb, struct rc_array *a,
			 struct cu_model *m, int slot, int devi, int lost)
{
	struct rc_member_status st;
	struct rc_dev *dev = tb_borrow(tb, devi);

	assert_int_equal(rc_member_readd(a, dev), -ENOENT);
	rc_dev_close(dev);
	assert_int_equal(rc_member_replace(a, slot, tb_borrow(tb, devi), NULL,
					   NULL), 0);
	rc_array_member_status(a, slot, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(st.resync_stripes, 0);        /* every stripe */
	cu_verify(a, m);
	assert_int_equal(rc_array_close(a), 0);
	cu_verify_without(tb, m, lost);
	free(m->gen);
	tb_fini(tb);
}

/* A RAID 5 of 4 memory members, filled; assembled (the caller closes). */
static struct rc_array *cu_setup(struct rc_testbed *tb, struct cu_model *m)
{
	struct rc_array *a;

	tb_init(tb, 4, CU_DEV_BYTES);
	tb_create(tb, RC_RAID5, CU_CHUNK, 0);
	a = tb_assemble(tb, 0, 0);
	cu_model_init(m, a);
	cu_fill(a, m);
	return a;
}

/* Away at one assembly (missing), back at the next: a catch-up there. */
static void test_catchup_at_assembly(void **state)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct cu_model m;

	a = cu_setup(&tb, &m);
	assert_int_equal(rc_array_close(a), 0);

	a = tb_assemble(&tb, 1u << 2, 0);              /* member 2 away */
	cu_write_burst(a, &m);
	assert_int_equal(rc_array_close(a), 0);

	a = tb_assemble(&tb, 0, RC_ASSEMBLE_CATCHUP);
	rc_array_member_status(a, 2, &st);
	assert_int_equal(st.state, RC_MEMBER_REBUILDING);
	assert_true(st.catchup);
	cu_verify(a, &m);                              /* while behind */
	st = cu_rebuild(a, 2);
	cu_expect_two_regions(&st);
	assert_true(st.resync_stripes * 10 < m.stripes);
	cu_verify(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	cu_verify_without(&tb, &m, 0);
	free(m.gen);
	tb_fini(&tb);
}

/* Failed while in use, given back while in use (md's --re-add). */
static void test_catchup_readd(void **state)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct cu_model m;

	a = cu_setup(&tb, &m);
	/* closed and assembled again: nothing written since the last
	 * checkpoint, which a member leaving now might have lost */
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);
	assert_int_equal(rc_member_fail(a, 3), 0);
	cu_write_burst(a, &m);
	assert_int_equal(rc_member_readd(a, tb_borrow(&tb, 3)), 3);
	rc_array_member_status(a, 3, &st);
	assert_int_equal(st.state, RC_MEMBER_REBUILDING);
	assert_true(st.catchup);
	cu_write(a, &m, 300ull * m.stripe_blocks, 4);  /* during it: region 18 */
	assert_int_equal(rc_flush(a), 0);
	st = cu_rebuild(a, 3);
	assert_int_equal(st.resync_regions, 3);
	assert_int_equal(st.resync_stripes, 3 * CU_REGION_STRIPES);
	cu_verify(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	cu_verify_without(&tb, &m, 1);
	free(m.gen);
	tb_fini(&tb);
}

/*
 * A member faulted for what it held (here: read errors past the limit;
 * also checksum and write errors, a lie, shrinking) never comes back as
 * a catch-up: the write-intent record starts after the writes it may
 * lack and cannot say where it is damaged.  Given back while in use, or
 * removed and found again at the next assembly, it is rebuilt in full.
 * It used to catch up on the record alone, its damage kept, and status
 * said clean: a later loss of another member read as I/O errors (a
 * tester's find: a member's data region zeroed, then re-added).
 */
static void test_catchup_not_after_damage(void **state)
{
	struct rc_member_status st;
	struct rc_dev *dev;
	struct rc_testbed tb;
	struct rc_array *a;
	struct cu_model m;

	a = cu_setup(&tb, &m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);
	/* every read of member 3's data region fails: reads recover, the
	 * errors pass the limit, the member is faulted */
	assert_int_equal(rc_fault_eio(tb.fault[3], RC_FAULT_READ, 0,
				      CU_DEV_BYTES, RC_FAULT_PERSISTENT), 0);
	cu_verify(a, &m);
	cu_write_burst(a, &m);
	rc_array_member_status(a, 3, &st);
	assert_int_equal(st.state, RC_MEMBER_FAULTY);
	rc_fault_clear(tb.fault[3]);
	/* -ENOENT leaves the device to the caller (raidfsctl adds it as a
	 * spare, rebuilt in full) */
	dev = tb_borrow(&tb, 3);
	assert_int_equal(rc_member_readd(a, dev), -ENOENT);
	rc_dev_close(dev);
	assert_int_equal(rc_member_remove(a, 3), 0);
	dev = tb_borrow(&tb, 3);
	assert_int_equal(rc_member_readd(a, dev), -ENOENT);
	rc_dev_close(dev);
	assert_int_equal(rc_array_close(a), 0);
	/* found again at an assembly: not caught up either */
	a = tb_assemble(&tb, 0, 0);
	rc_array_member_status(a, 3, &st);
	assert_false(st.state == RC_MEMBER_REBUILDING && st.catchup);
	assert_false(st.state == RC_MEMBER_ACTIVE);
	/* a full rebuild takes it back */
	assert_int_equal(rc_member_replace(a, 3, tb_borrow(&tb, 3), NULL,
					   NULL), 0);
	rc_array_member_status(a, 3, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	cu_verify(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	cu_verify_without(&tb, &m, 0);
	free(m.gen);
	tb_fini(&tb);
}

/* The bitmap blocks (member blocks 2 .. 7) of every member overwritten. */
static void cu_damage_records(struct rc_testbed *tb)
{
	uint8_t junk[RC_BLOCK_SIZE];

	memset(junk, 0x5a, sizeof(junk));
	for (int i = 0; i < tb->n; i++)
		assert_int_equal(rc_dev_write(tb->mem[i], junk, sizeof(junk),
					      2ull * RC_BLOCK_SIZE), 0);
}

/* A record damaged on every survivor covers nobody: a full rebuild. */
static void test_catchup_damaged_record(void **state)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct cu_model m;

	a = cu_setup(&tb, &m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 1u << 1, 0);
	cu_write_burst(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	cu_damage_records(&tb);

	a = tb_assemble(&tb, 0, RC_ASSEMBLE_CATCHUP);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_MISSING);  /* not taken back */
	cu_full_only(&tb, a, &m, 1, 1, 3);
}

/* A catch-up cut short resumes as one at the next assembly; with the
 * record damaged by then, as a full rebuild from where it stopped. */
static void cu_resume(bool damage)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct cu_model m;

	a = cu_setup(&tb, &m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 1u << 0, 0);
	cu_write_burst(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	/* taken back, closed before its catch-up ran */
	a = tb_assemble(&tb, 0, RC_ASSEMBLE_CATCHUP);
	cu_write(a, &m, 200ull * m.stripe_blocks, 1);   /* region 12 */
	assert_int_equal(rc_array_close(a), 0);
	if (damage)
		cu_damage_records(&tb);
	a = tb_assemble(&tb, 0, 0);
	rc_array_member_status(a, 0, &st);
	assert_int_equal(st.state, RC_MEMBER_REBUILDING);
	assert_int_equal(st.catchup, !damage);
	st = cu_rebuild(a, 0);
	assert_int_equal(st.resync_regions, damage ? 0 : 3);
	cu_verify(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	cu_verify_without(&tb, &m, 2);
	free(m.gen);
	tb_fini(&tb);
}

static void test_catchup_resumes(void **state)
{
	cu_resume(false);
}

static void test_catchup_resumes_damaged(void **state)
{
	cu_resume(true);
}

/*
 * A member that comes back and acknowledges the catch-up's writes
 * without keeping them (its data region drops every write) is not said
 * in sync: the blocks the catch-up wrote, sampled, are read back with
 * their table, as a full rebuild's are, and the member is failed; the
 * array stays degraded and every block reads.  A catch-up used to be
 * trusted whole, the array said redundant on writes the member never
 * kept.
 */
static void test_catchup_onto_liar(void **state)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	struct rc_dev *dev;
	struct rc_fault *ctl;
	struct cu_model m;

	a = cu_setup(&tb, &m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);
	assert_int_equal(rc_member_fail(a, 3), 0);
	cu_write_burst(a, &m);
	assert_int_equal(rc_fault_wrap(tb_borrow(&tb, 3), NULL, &dev, &ctl), 0);
	assert_int_equal(rc_fault_lose_writes(ctl, 1u << 20,
					      CU_DEV_BYTES - (2u << 20),
					      RC_FAULT_PERSISTENT), 0);
	assert_int_equal(rc_member_readd(a, dev), 3);
	rc_array_member_status(a, 3, &st);
	assert_true(st.catchup);
	assert_int_equal(rc_member_replace(a, 3, NULL, NULL, NULL), -EIO);
	rc_array_member_status(a, 3, &st);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	rc_array_info(a, &info);
	assert_true(info.degraded);
	cu_verify(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	free(m.gen);
	tb_fini(&tb);
}

/*
 * A device that left in the middle of a full rebuild onto it (failed by
 * request mid-rebuild, then removed) is not taken back as a catch-up:
 * the record covers what changed while it was away, not the part of the
 * slot never rebuilt.  Its catch-up said the slot in sync, and the next
 * member lost took files (a tester's find, W3).  It is rebuilt in full.
 */
static void test_catchup_not_unfinished_rebuild(void **state)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct cu_model m;

	tb_init(&tb, 5, CU_DEV_BYTES);
	tb.n = 4;
	tb_create(&tb, RC_RAID5, CU_CHUNK, 0);
	tb.n = 5;
	a = tb_assemble(&tb, 1u << 4, 0);
	cu_model_init(&m, a);
	cu_fill(a, &m);
	assert_int_equal(rc_member_fail(a, 1), 0);
	assert_int_equal(rc_member_remove(a, 1), 0);
	rc_array_set_rebuild_speed(a, 0, 512);
	assert_int_equal(rc_array_start_recovery(a), 0);
	assert_int_equal(rc_spare_add(a, tb_borrow(&tb, 4)), 0);
	for (int i = 0; i < 1000; i++) {
		rc_array_member_status(a, 1, &st);
		if (st.state == RC_MEMBER_REBUILDING && st.rebuild_done > 8)
			break;
		usleep(10000);
	}
	assert_int_equal(st.state, RC_MEMBER_REBUILDING);
	assert_true(st.rebuild_done < m.stripes / 2);
	assert_int_equal(rc_member_fail(a, 1), 0);
	assert_int_equal(rc_member_remove(a, 1), 0);
	cu_write_burst(a, &m);
	rc_array_set_rebuild_speed(a, 0, 0);
	cu_full_only(&tb, a, &m, 1, 4, 0);
}

/*
 * Away at one assembly, back with a checksum table block that fails its
 * seal where the record says the array wrote meanwhile (stripe 5's, here
 * garbage).  A catch-up writes only those regions and cannot complete
 * the block (the entries of the blocks it does not write are unknown), so
 * its read-back found the blocks it wrote unsealed and faulted a healthy
 * device as one that drops writes (a tester's find, x3).  Now it does not
 * catch up: left out at the assembly, refused by rc_member_readd, and
 * rebuilt in full.
 */
static void test_catchup_not_onto_damaged_table(void **state)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	struct cu_model m;
	uint8_t blk[RC_BLOCK_SIZE];
	struct rc_sb sb;

	a = cu_setup(&tb, &m);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 1u << 2, 0);              /* member 2 away */
	cu_write_burst(a, &m);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_read(tb.mem[2], blk, RC_BLOCK_SIZE, 0), 0);
	assert_int_equal(rc_sb_decode(blk, &sb, NULL), 0);
	for (size_t i = 0; i < sizeof(blk); i++)
		blk[i] = (uint8_t)(i * 131 + 7);
	assert_int_equal(rc_dev_write(tb.mem[2], blk, RC_BLOCK_SIZE,
				      sb.csum_offset * RC_BLOCK_SIZE), 0);
	a = tb_assemble(&tb, 0, RC_ASSEMBLE_CATCHUP);
	rc_array_member_status(a, 2, &st);
	assert_int_not_equal(st.state, RC_MEMBER_REBUILDING);
	assert_false(st.catchup);
	cu_verify(a, &m);
	cu_full_only(&tb, a, &m, 2, 2, 0);
}

/*
 * A crash takes the writes a member had not flushed, and the member is
 * missing at the next assembly: replay rebuilds nothing onto it, so when
 * it comes back its catch-up must cover the stripes of the batches
 * replayed (their in-place writes) and the direct stripes replay settled.
 * Until 2026-12-07 it covered neither: the activation's checkpoint
 * cleared what the replay had noted before the record started, and
 * settled direct stripes were never noted; the member came back with old
 * columns in stripes that then read through it - parity disagreeing with
 * its data after a power cut, found by a tester's RAID 6 (faultfs's
 * volatile cache, p1), silent until a member was lost or a scrub ran.
 */
static void test_catchup_after_crash(void **state)
{
	struct rc_dev *devs[4];
	struct rc_testbed tb;
	struct rc_array *a;
	struct cu_model m;
	uint8_t *buf;
	char err[256];
	uint64_t d0;                   /* the direct stripes: d0 .. d0+11 */
	uint32_t sbk;

	a = cu_setup(&tb, &m);
	assert_int_equal(rc_array_close(a), 0);
	sbk = m.stripe_blocks;
	d0 = m.stripes - 2 * CU_REGION_STRIPES;
	buf = malloc((size_t)sbk * RC_BLOCK_SIZE);
	assert_non_null(buf);

	tb_devs(&tb, devs, true, 0);
	assert_int_equal(tb_try_assemble(&tb, devs, 0, &a, err, sizeof(err)), 0);
	/* a few stripes: the writer commits them itself, without a flush */
	rc_array_set_cache(a, 1 << 20);
	/* journaled: flushed, its in-place writes not (the journal holds
	 * them until the next checkpoint) */
	cu_write(a, &m, (m.stripes / 3) * sbk + 1, 2);
	assert_int_equal(rc_flush(a), 0);
	/* direct: fresh full stripes d0.., never acknowledged (no flush);
	 * the last batch the writer committed went in place unflushed */
	for (uint64_t s = d0; s < d0 + 12; s++) {
		for (uint32_t i = 0; i < sbk; i++)
			tb_pattern(buf + (size_t)i * RC_BLOCK_SIZE, s * sbk + i, 99);
		assert_int_equal(rc_write_flags(a, s * sbk, sbk, buf,
						RC_WRITE_FRESH), 0);
	}
	/* the power goes: every member but 2 had flushed its writes */
	for (int i = 0; i < 4; i++)
		if (i != 2)
			assert_int_equal(rc_dev_sync(devs[i]), 0);
	rc_power_cut(tb.power);
	rc_array_close(a);             /* fails: the power is off */

	a = tb_assemble(&tb, 1u << 2, 0);              /* member 2 away */
	cu_write(a, &m, 40ull * sbk, 1);               /* activates */
	assert_int_equal(rc_flush(a), 0);
	assert_int_equal(rc_array_close(a), 0);

	a = tb_assemble(&tb, 0, RC_ASSEMBLE_CATCHUP);
	cu_rebuild(a, 2);
	tb_scrub_clean(a, "after the catch-up");
	assert_int_equal(rc_array_close(a), 0);
	/* without member 0, every block acknowledged reads back */
	a = tb_assemble(&tb, 1u << 0, 0);
	{
		uint8_t blk[RC_BLOCK_SIZE];

		for (uint64_t b = 0; b < m.blocks; b++) {
			if (b >= d0 * sbk && b < (d0 + 12) * sbk)
				continue;       /* never acknowledged */
			assert_int_equal(rc_read(a, b, 1, blk), 0);
			if (m.gen[b] && !tb_check(blk, b, m.gen[b]))
				fail_msg("block %llu (generation %u) reads wrong "
					 "without member 0",
					 (unsigned long long)b, m.gen[b]);
		}
	}
	assert_int_equal(rc_array_close(a), 0);
	free(buf);
	free(m.gen);
	tb_fini(&tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catchup_at_assembly),
		cmocka_unit_test(test_catchup_after_crash),
		cmocka_unit_test(test_catchup_readd),
		cmocka_unit_test(test_catchup_onto_liar),
		cmocka_unit_test(test_catchup_not_unfinished_rebuild),
		cmocka_unit_test(test_catchup_not_onto_damaged_table),
		cmocka_unit_test(test_catchup_not_after_damage),
		cmocka_unit_test(test_catchup_damaged_record),
		cmocka_unit_test(test_catchup_resumes),
		cmocka_unit_test(test_catchup_resumes_damaged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
