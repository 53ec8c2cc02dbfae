/*
 * test_evidence: nothing read from one member is believed without
 * evidence, and repair never writes over what verifies (docs/DESIGN.md,
 * "Evidence, not inference").
 *
 * For RAID 1, 4, 5, 6 and 10, with every member in turn as the victim:
 *   - its checksum tables zeroed (as a blank or truncated member): every
 *     block reads right, a repairing scrub re-derives every entry and
 *     writes to no other member, a second scrub finds nothing;
 *   - the whole member zeroed while assembled (superblocks included):
 *     every block reads right; a repairing scrub puts it back;
 *   - a table write lost after a block's first write (its entry still says
 *     "never written"): the read returns the data, not zeros;
 *   - a data block changed with its entry changed to match (a lost write of
 *     both): scrub reports the parity mismatch and writes nothing at all;
 *     at RAID 6, P and Q name the column, and a parity block so named is
 *     rewritten;
 *   - the same, then a write to another column of that row: the write
 *     path does not take the stale claim as the old data either;
 *   - an old image of it put back while the array runs: never taken as
 *     current again (its superblocks are checked before they are
 *     rewritten), every block reads as last written;
 *   - a parity column's false "never written" claim in a written row, with
 *     the column it would rebuild missing: that block reads as an I/O
 *     error, not as what the zero parity makes of it;
 *   - a table block zeroed on the media while its copy is cached: a scrub
 *     reads the media, counts it, and a repairing one writes it again;
 *   - its checksum tables zeroed, found by reads while mounted: the
 *     recovery thread re-derives them (heal.c) and writes them back sealed,
 *     touching no other member, so the next assembly finds no damage.
 */
#include <errno.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>
#include "rc_test_util.h"
#include "ondisk.h"
#include "geom.h"

#define DEV_BYTES (6ull << 20)
#define BS RC_BLOCK_SIZE

struct cfg {
	enum rc_level level;
	int members;
	uint32_t chunk;
};

static const struct cfg cfgs[] = {
	{ RC_RAID1, 2, 16384 }, { RC_RAID4, 4, 16384 }, { RC_RAID5, 3, 8192 },
	{ RC_RAID5, 4, 65536 }, { RC_RAID6, 5, 16384 }, { RC_RAID10, 4, 16384 },
	{ RC_RAID10, 3, 8192 },
};

/* Half the array written, so rows hold both written and unwritten blocks. */
static uint64_t fill_half(struct rc_array *a)
{
	struct rc_info info;
	uint8_t *buf = malloc(16 * BS);
	uint64_t n;

	rc_array_info(a, &info);
	n = info.blocks / 2;
	for (uint64_t b = 0; b < n; b += 16) {
		uint32_t k = n - b < 16 ? (uint32_t)(n - b) : 16;

		for (uint32_t i = 0; i < k; i++)
			tb_pattern(buf + (size_t)i * BS, b + i, 1);
		assert_int_equal(rc_write(a, b, k, buf), 0);
	}
	assert_int_equal(rc_flush(a), 0);
	free(buf);
	return n;
}

/* Every block: the pattern below n, zeros above; never wrong bytes. */
static void verify_all(struct rc_array *a, uint64_t n)
{
	static const uint8_t zero[BS];
	struct rc_info info;
	uint8_t buf[BS];

	rc_array_info(a, &info);
	for (uint64_t b = 0; b < info.blocks; b++) {
		assert_int_equal(rc_read(a, b, 1, buf), 0);
		if (b < n ? !tb_check(buf, b, 1) : memcmp(buf, zero, BS) != 0)
			fail_msg("block %llu: wrong data", (unsigned long long)b);
	}
}

static void sb_of(struct rc_testbed *tb, int i, struct rc_sb *sb)
{
	uint8_t raw[BS];

	assert_int_equal(rc_dev_read(tb->mem[i], raw, BS, 0), 0);
	assert_int_equal(rc_sb_decode(raw, sb, NULL), 0);
}

static uint64_t dev_hash(struct rc_testbed *tb, int i)
{
	uint8_t *all = malloc(DEV_BYTES);
	uint64_t h;

	assert_int_equal(rc_dev_read(tb->mem[i], all, DEV_BYTES, 0), 0);
	h = XXH3_64bits(all, DEV_BYTES);
	free(all);
	return h;
}

static void zero_range(struct rc_testbed *tb, int i, uint64_t block,
		       uint64_t count)
{
	uint8_t *z = calloc(count, BS);

	assert_int_equal(rc_dev_write(tb->mem[i], z, count * BS, block * BS), 0);
	free(z);
}

/* A new array half written (fill_half), closed, then member v's checksum
 * tables zeroed behind its back; returns fill_half's block count. */
static uint64_t half_with_zeroed_tables(struct rc_testbed *tb,
					const struct cfg *c, int v)
{
	struct rc_array *a;
	struct rc_sb sb;
	uint64_t n;

	tb_init(tb, c->members, DEV_BYTES);
	tb_create(tb, c->level, c->chunk, 0);
	a = tb_assemble(tb, 0, 0);
	n = fill_half(a);
	assert_int_equal(rc_array_close(a), 0);
	sb_of(tb, v, &sb);
	zero_range(tb, v, sb.csum_offset, sb.csum_blocks);
	return n;
}

static void scrub_clean(struct rc_array *a)
{
	struct rc_scrub_report r;

	assert_int_equal(rc_scrub(a, false, &r, NULL, NULL), 0);
	assert_int_equal(r.csum_errors, 0);
	assert_int_equal(r.read_errors, 0);
	assert_int_equal(r.unverified, 0);
	assert_int_equal(r.parity_mismatches, 0);
	assert_int_equal(r.unrecoverable, 0);
}

/* The data region and checksum tables of every member but the victim are
 * bit for bit what they were: repair touched only what was damaged. */
static uint64_t region_hash(struct rc_testbed *tb, int i)
{
	struct rc_sb sb;
	uint64_t first, len;
	uint8_t *buf;
	uint64_t h;

	sb_of(tb, i, &sb);
	first = sb.csum_offset;
	len = sb.data_offset + sb.member_blocks - first;
	buf = malloc(len * BS);
	assert_int_equal(rc_dev_read(tb->mem[i], buf, len * BS, first * BS), 0);
	h = XXH3_64bits(buf, len * BS);
	free(buf);
	return h;
}

static void test_zeroed_tables(void **state)
{
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		const struct cfg *c = &cfgs[k];

		for (int v = 0; v < c->members; v++) {
			uint64_t before[TB_MAX], region[TB_MAX], n;
			struct rc_scrub_report r;
			struct rc_testbed tb;
			struct rc_array *a;

			n = half_with_zeroed_tables(&tb, c, v);
			for (int i = 0; i < c->members; i++)
				before[i] = dev_hash(&tb, i);
			for (int i = 0; i < c->members; i++)
				region[i] = region_hash(&tb, i);
			/* read-only first: everything reads, nothing written */
			a = tb_assemble(&tb, 0, RC_ASSEMBLE_RDONLY);
			verify_all(a, n);
			assert_int_equal(rc_array_close(a), 0);
			for (int i = 0; i < c->members; i++)
				assert_true(dev_hash(&tb, i) == before[i]);
			a = tb_assemble(&tb, 0, 0);
			rc_array_set_fault_errors(a, 0);
			assert_int_equal(rc_scrub(a, true, &r, NULL, NULL), 0);
			assert_int_equal(r.unrecoverable, 0);
			assert_int_equal(r.parity_mismatches, 0);
			assert_true(r.unverified > 0);
			assert_int_equal(r.entries_fixed, r.unverified);
			assert_int_equal(r.repaired, 0);  /* the data was right */
			scrub_clean(a);
			verify_all(a, n);
			assert_int_equal(rc_array_close(a), 0);
			/* repair wrote to the victim only (the superblocks carry
			 * events: compare tables and data) */
			for (int i = 0; i < c->members; i++)
				if (i != v)
					assert_true(region_hash(&tb, i) == region[i]);
			a = tb_assemble(&tb, 0, 0);
			scrub_clean(a);
			assert_int_equal(rc_array_close(a), 0);
			tb_fini(&tb);
		}
	}
}

static void test_blank_member_online(void **state)
{
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		const struct cfg *c = &cfgs[k];
		int v = (int)(k % (size_t)c->members);
		uint64_t before[TB_MAX], n;
		struct rc_scrub_report r;
		struct rc_testbed tb;
		struct rc_array *a;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		n = fill_half(a);
		assert_int_equal(rc_array_close(a), 0);
		for (int i = 0; i < c->members; i++)
			before[i] = region_hash(&tb, i);
		a = tb_assemble(&tb, 0, 0);
		rc_array_set_fault_errors(a, 0);        /* keep it in: repair */
		/* the member loses everything behind the array's back */
		zero_range(&tb, v, 0, DEV_BYTES / BS);
		verify_all(a, n);
		assert_int_equal(rc_scrub(a, true, &r, NULL, NULL), 0);
		assert_int_equal(r.unrecoverable, 0);
		assert_int_equal(r.parity_mismatches, 0);
		scrub_clean(a);
		verify_all(a, n);
		assert_int_equal(rc_array_close(a), 0);
		for (int i = 0; i < c->members; i++)
			if (i != v)
				assert_true(region_hash(&tb, i) == before[i]);
		a = tb_assemble(&tb, 0, 0);
		scrub_clean(a);
		verify_all(a, n);
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

/* Waits up to 20 s for the recovery thread to re-derive every table block
 * the reads found failing. */
static void wait_tables_healed(struct rc_array *a, size_t k, int v)
{
	struct rc_info info;

	for (int i = 0; i < 2000; i++) {
		rc_array_info(a, &info);
		if (info.tables_unverified == 0)
			return;
		usleep(10000);
	}
	fail_msg("cfg %zu, member %d: %llu table blocks still unverified", k, v,
		 (unsigned long long)info.tables_unverified);
}

static void test_tables_healed_online(void **state)
{
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		const struct cfg *c = &cfgs[k];
		int v = (int)((k + 1) % (size_t)c->members);
		uint64_t region[TB_MAX], n, recorded;
		struct rc_member_status ms;
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;

		n = half_with_zeroed_tables(&tb, c, v);
		for (int i = 0; i < c->members; i++)
			region[i] = region_hash(&tb, i);
		a = tb_assemble(&tb, 0, 0);
		rc_array_set_fault_errors(a, 0);
		assert_int_equal(rc_array_start_recovery(a), 0);
		verify_all(a, n);
		assert_int_equal(rc_array_member_status(a, v, &ms), 0);
		assert_true(ms.csum_errors > 0);        /* the reads found it */
		wait_tables_healed(a, k, v);
		assert_int_equal(rc_array_close(a), 0);
		for (int i = 0; i < c->members; i++)
			if (i != v)
				assert_true(region_hash(&tb, i) == region[i]);
		/* the next assembly reads sealed tables: no damage found
		 * (the counters start from what the member has on record) */
		a = tb_assemble(&tb, 0, RC_ASSEMBLE_RDONLY);
		assert_int_equal(rc_array_member_status(a, v, &ms), 0);
		recorded = ms.csum_errors;
		verify_all(a, n);
		assert_int_equal(rc_array_member_status(a, v, &ms), 0);
		if (ms.csum_errors != recorded)
			fail_msg("cfg %zu, member %d: %llu checksum errors after "
				 "the heal", k, v,
				 (unsigned long long)(ms.csum_errors - recorded));
		rc_array_info(a, &info);
		assert_int_equal(info.tables_unverified, 0);
		scrub_clean(a);
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

/*
 * A table block zeroed on the media while the array runs, its copy in
 * the cache: reads go on from the copy, and a scrub sees the media (the
 * cache hid it until the next mount: a tester's find, U2 D4).  A check
 * counts it and writes nothing; a repairing scrub writes it home again,
 * so the next assembly finds every table sealed.
 */
static void test_table_damaged_online(void **state)
{
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		const struct cfg *c = &cfgs[k];
		int v = (int)((k + 2) % (size_t)c->members);
		struct rc_member_status ms;
		struct rc_scrub_report r;
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		uint64_t n, hash, recorded;
		struct rc_sb sb;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		n = fill_half(a);
		rc_array_set_fault_errors(a, 0);
		verify_all(a, n);               /* the tables in the cache */
		sb_of(&tb, v, &sb);
		zero_range(&tb, v, sb.csum_offset, 1);
		verify_all(a, n);
		hash = tb_media_hash(&tb);
		assert_int_equal(rc_scrub(a, false, &r, NULL, NULL), 0);
		if (r.csum_errors != 1)
			fail_msg("cfg %zu, member %d: a check found %llu "
				 "checksum errors, not the damaged table block",
				 k, v, (unsigned long long)r.csum_errors);
		assert_true(tb_media_hash(&tb) == hash);
		assert_int_equal(rc_scrub(a, true, &r, NULL, NULL), 0);
		assert_int_equal(r.csum_errors, 1);
		assert_int_equal(r.repaired, 1);        /* the table block */
		assert_int_equal(r.unrecoverable, 0);
		assert_int_equal(r.parity_mismatches, 0);
		scrub_clean(a);
		assert_int_equal(rc_array_close(a), 0);
		a = tb_assemble(&tb, 0, RC_ASSEMBLE_RDONLY);
		assert_int_equal(rc_array_member_status(a, v, &ms), 0);
		recorded = ms.csum_errors;
		verify_all(a, n);
		rc_array_info(a, &info);
		assert_int_equal(info.tables_unverified, 0);
		assert_int_equal(rc_array_member_status(a, v, &ms), 0);
		assert_true(ms.csum_errors == recorded);
		scrub_clean(a);
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

/* Block 0 written for the first time, on a closed array, and the write
 * of its table block on member victim lost (the data and parity writes
 * are not): its entry still claims "never written".  RAID 5's
 * left-symmetric layout puts data column 0 of stripe 0 on member 0 for
 * every level here. */
static void write_block0_table_lost(struct rc_testbed *tb, int victim)
{
	uint8_t old_table[BS], buf[BS];
	struct rc_array *a;
	struct rc_sb sb;

	sb_of(tb, victim, &sb);
	assert_int_equal(rc_dev_read(tb->mem[victim], old_table, BS,
				     sb.csum_offset * BS), 0);
	a = tb_assemble(tb, 0, 0);
	tb_pattern(buf, 0, 1);
	assert_int_equal(rc_write(a, 0, 1, buf), 0);
	assert_int_equal(rc_flush(a), 0);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_write(tb->mem[victim], old_table, BS,
				      sb.csum_offset * BS), 0);
}

/* Where stripe 0's columns lie. */
static void stripe0_map(const struct rc_info *info, struct rc_stripe_map *map)
{
	struct rc_geom g = { .level = info->level, .layout = info->layout,
			     .members = info->members,
			     .chunk_blocks = info->chunk_blocks,
			     .member_blocks = info->chunk_blocks };

	rc_geom_stripe(&g, 0, map);
}

/* The member holding logical block 0 (data column 0 of stripe 0). */
static int block0_member(const struct rc_info *info)
{
	struct rc_stripe_map map;

	stripe0_map(info, &map);
	return (int)map.col[0].member;
}

/* A block written for the first time whose table write was lost: its
 * entry still claims "never written", but the row says otherwise. */
static void test_lost_table_write(void **state)
{
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		const struct cfg *c = &cfgs[k];
		uint8_t buf[BS];
		struct rc_member_status ms;
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		int victim = 0;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		rc_array_info(a, &info);
		victim = block0_member(&info);
		/* the first block of stripe 0 lives on the member of data
		 * column 0; write the rest of its row first */
		tb_pattern(buf, 1, 1);
		for (uint64_t b = 1; b < info.stripe_blocks && b < 4; b++) {
			tb_pattern(buf, b, 1);
			assert_int_equal(rc_write(a, b, 1, buf), 0);
		}
		assert_int_equal(rc_flush(a), 0);
		assert_int_equal(rc_array_close(a), 0);
		write_block0_table_lost(&tb, victim);
		a = tb_assemble(&tb, 0, 0);
		memset(buf, 0, BS);
		assert_int_equal(rc_read(a, 0, 1, buf), 0);
		if (!tb_check(buf, 0, 1))
			fail_msg("cfg %zu: block 0 reads wrong", k);      /* the data, not zeros */
		/* the member's table lied: counted on it, recorded */
		assert_int_equal(rc_array_member_status(a, victim, &ms), 0);
		if (ms.csum_errors == 0)
			fail_msg("cfg %zu: the lost table write is not counted "
				 "on the member", k);
		rc_array_info(a, &info);
		assert_true(info.errors);
		assert_int_equal(rc_array_close(a), 0);
		a = tb_assemble(&tb, 0, 0);
		scrub_clean(a);
		assert_int_equal(rc_read(a, 0, 1, buf), 0);
		assert_true(tb_check(buf, 0, 1));
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

/* The same lost table write, then a write to another column of the row:
 * the write path must not take the stale "never written" claim as the old
 * data (parity computed with zeros there would make the zeros consistent:
 * the data would be lost for good and read back as zeros). */
static void test_lost_table_write_then_rmw(void **state)
{
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		const struct cfg *c = &cfgs[k];
		uint8_t buf[BS];
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		uint64_t other;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		rc_array_info(a, &info);
		/* a written block in the row (on another column) first, so the
		 * row's redundancy is written */
		other = info.data_columns > 1 ? info.chunk_blocks : 1;
		tb_pattern(buf, 99, 1);
		assert_int_equal(rc_write(a, other, 1, buf), 0);
		assert_int_equal(rc_flush(a), 0);
		assert_int_equal(rc_array_close(a), 0);
		write_block0_table_lost(&tb, 0);
		/* now the other column is rewritten: parity from old data */
		a = tb_assemble(&tb, 0, 0);
		tb_pattern(buf, other, 1);
		assert_int_equal(rc_write(a, other, 1, buf), 0);
		assert_int_equal(rc_flush(a), 0);
		assert_int_equal(rc_array_close(a), 0);
		a = tb_assemble(&tb, 0, 0);
		memset(buf, 0, BS);
		assert_int_equal(rc_read(a, 0, 1, buf), 0);
		if (!tb_check(buf, 0, 1))
			fail_msg("cfg %zu: block 0 reads wrong after a write to "
				 "its row", k);
		assert_int_equal(rc_read(a, other, 1, buf), 0);
		assert_true(tb_check(buf, other, 1));
		assert_int_equal(rc_array_close(a), 0);
		a = tb_assemble(&tb, 0, 0);
		rc_array_set_fault_errors(a, 0);
		{
			struct rc_scrub_report r;

			assert_int_equal(rc_scrub(a, true, &r, NULL, NULL), 0);
		}
		scrub_clean(a);
		assert_int_equal(rc_read(a, 0, 1, buf), 0);
		assert_true(tb_check(buf, 0, 1));
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

/* An old image of a member put back while the array runs (a restored
 * backup, a disk swapped for an older clone): its superblocks must not be
 * rewritten as current over its stale tables and data, or the next
 * assembly takes it as current and its old blocks verify against its old
 * tables - also when the copy at the far end is not old yet (an image
 * written front first).  Every block must read as last written. */
static void test_old_image_put_back_online(void **state)
{
	for (size_t k = 0; k < 2 * sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		const struct cfg *c = &cfgs[k % (sizeof(cfgs) / sizeof(cfgs[0]))];
		/* the second time, the old image arrives front first: at the
		 * close its far end still holds current superblock copies */
		bool halfway = k >= sizeof(cfgs) / sizeof(cfgs[0]);
		const uint64_t front = DEV_BYTES - (1u << 20);
		int v = (int)(k % (size_t)c->members);
		uint8_t *old = malloc(DEV_BYTES), buf[BS];
		struct rc_testbed tb;
		struct rc_array *a;
		uint64_t n;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		n = fill_half(a);
		assert_int_equal(rc_dev_read(tb.mem[v], old, DEV_BYTES, 0), 0);
		for (uint64_t b = 0; b < n; b++) {
			tb_pattern(buf, b, 2);
			assert_int_equal(rc_write(a, b, 1, buf), 0);
		}
		assert_int_equal(rc_flush(a), 0);
		assert_int_equal(rc_dev_write(tb.mem[v], old, halfway ? front :
					      DEV_BYTES, 0), 0);
		rc_array_close(a);      /* may report the member it faulted */
		if (halfway)
			assert_int_equal(rc_dev_write(tb.mem[v], old + front,
						      DEV_BYTES - front, front),
					 0);
		a = tb_assemble(&tb, 0, 0);
		for (uint64_t b = 0; b < n; b++) {
			assert_int_equal(rc_read(a, b, 1, buf), 0);
			if (!tb_check(buf, b, 2))
				fail_msg("cfg %zu, member %d put back old: block "
					 "%llu reads old data", k, v,
					 (unsigned long long)b);
		}
		assert_int_equal(rc_array_close(a), 0);
		free(old);
		tb_fini(&tb);
	}
}

/* Member m's data-region block mb becomes blk, behind the array's back,
 * with a table entry that matches it and its table block resealed. */
static void reseal_block(struct rc_testbed *tb, int m, uint64_t mb,
			 const uint8_t *blk)
{
	uint8_t table[BS];
	uint64_t abs, tblk;
	struct rc_sb sb;

	sb_of(tb, m, &sb);
	abs = sb.data_offset + mb;
	tblk = sb.csum_offset + mb / RC_CSUM_PER_BLOCK;
	assert_int_equal(rc_dev_write(tb->mem[m], blk, BS, abs * BS), 0);
	assert_int_equal(rc_dev_read(tb->mem[m], table, BS, tblk * BS), 0);
	rc_csum_set(table, (uint32_t)(mb % RC_CSUM_PER_BLOCK),
		    rc_block_csum(blk, abs));
	rc_csum_block_seal(table, rc_table_seed(sb.array_uuid, sb.member_uuid),
			   tblk);
	assert_int_equal(rc_dev_write(tb->mem[m], table, BS, tblk * BS), 0);
}

/* A data block rewritten together with its entry (both writes of a later
 * version lost elsewhere, say): every block verifies, parity disagrees.
 * Nobody can be blamed, so nothing is written; it is reported. */
static void test_unattributable_mismatch(void **state)
{
	const struct cfg *c = &cfgs[3];         /* RAID 5 x 4 */
	struct rc_scrub_report r;
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_info info;
	uint8_t blk[BS];
	uint64_t hash;

	tb_init(&tb, c->members, DEV_BYTES);
	tb_create(&tb, c->level, c->chunk, 0);
	a = tb_assemble(&tb, 0, 0);
	fill_half(a);
	rc_array_info(a, &info);
	assert_int_equal(rc_array_close(a), 0);
	/* member 0, data-region block 0 (data of stripe 0) */
	tb_pattern(blk, 12345, 9);
	reseal_block(&tb, 0, 0, blk);
	a = tb_assemble(&tb, 0, 0);
	/* a read-write assembly writes nothing until its first write (the
	 * scrub's repair would be it): activate now, so that the superblock
	 * writes of activation are out of the picture */
	assert_int_equal(rc_array_clear_errors(a, false), 0);
	hash = tb_media_hash(&tb);
	assert_int_equal(rc_scrub(a, true, &r, NULL, NULL), 0);
	assert_int_equal(r.parity_mismatches, 1);
	assert_int_equal(r.repaired, 0);
	assert_int_equal(r.entries_fixed, 0);
	assert_true(tb_media_hash(&tb) == hash);
	assert_int_equal(rc_array_info(a, &info), 0);
	assert_true(info.errors);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* A vouch that says `marker_says` of blocks that start with "SELFPROV",
 * RC_VOUCH_DAMAGED of those that start with "DAMAGED!" and RC_VOUCH_NO
 * of the rest. */
static enum rc_vouch marker_says;

static enum rc_vouch marker_vouch(void *ctx, uint64_t block, const void *data)
{
	(void)ctx;
	(void)block;
	if (!memcmp(data, "DAMAGED!", 8))
		return RC_VOUCH_DAMAGED;
	return memcmp(data, "SELFPROV", 8) ? RC_VOUCH_NO : marker_says;
}

/*
 * A row that disagrees because one member holds a stale block with its
 * stale entry (it lost a later write of both).  Rebuilt from that row, a
 * good column comes out as a block that proves itself.  That names the
 * good column wrong only when it proves it belongs at that block
 * (RC_VOUCH_HERE) and the good column is recognisably a damaged version
 * of that block (RC_VOUCH_DAMAGED):
 *   0: rebuilt, an inode chunk (RC_VOUCH_SELF: proves itself anywhere),
 *      over a damaged block: nothing written (fsck -p wrote such a
 *      rebuilt block over a healthy member's directory block: T2 D1);
 *   1: rebuilt RC_VOUCH_HERE over a block that is something else (a
 *      ring block reused, file data): nothing written (a stale journal
 *      descriptor outvoted two healthy copies: V2 D4);
 *   2: rebuilt RC_VOUCH_HERE over a damaged version: rebuilt.
 */
static void test_self_proof_names_nothing(void **state)
{
	const struct cfg *c = &cfgs[3];         /* RAID 5 x 4 */

	(void)state;
	for (int k = 0; k < 3; k++) {
		struct rc_scrub_report r;
		struct rc_stripe_map map;
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		uint8_t d[3][BS], s[BS], stale[BS], buf[BS];
		uint64_t hash;
		uint32_t cb;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		rc_array_info(a, &info);
		stripe0_map(&info, &map);
		cb = info.chunk_blocks;
		for (uint32_t j = 0; j < 3; j++) {
			tb_pattern(d[j], j * cb, 1);
			if (j == 1 && k != 1)
				memcpy(d[j], "DAMAGED!", 8);
			assert_int_equal(rc_write(a, j * cb, 1, d[j]), 0);
		}
		assert_int_equal(rc_flush(a), 0);
		assert_int_equal(rc_array_close(a), 0);
		/* column 2 stale, such that column 1 rebuilt is s */
		tb_pattern(s, 4242, 3);
		memcpy(s, "SELFPROV", 8);
		for (size_t i = 0; i < BS; i++)
			stale[i] = d[2][i] ^ d[1][i] ^ s[i];
		reseal_block(&tb, (int)map.col[2].member, map.col[2].offset,
			     stale);
		a = tb_assemble(&tb, 0, 0);
		marker_says = k ? RC_VOUCH_HERE : RC_VOUCH_SELF;
		rc_array_set_vouch(a, marker_vouch, NULL);
		assert_int_equal(rc_array_clear_errors(a, false), 0);
		hash = tb_media_hash(&tb);
		assert_int_equal(rc_scrub(a, true, &r, NULL, NULL), 0);
		assert_int_equal(rc_read(a, cb, 1, buf), 0);
		if (k < 2) {
			assert_int_equal(r.parity_mismatches, 1);
			assert_int_equal(r.repaired, 0);
			assert_true(tb_media_hash(&tb) == hash);
			assert_memory_equal(buf, d[1], BS);
		} else {
			assert_int_equal(r.parity_mismatches, 0);
			assert_int_equal(r.repaired, 1);
			assert_memory_equal(buf, s, BS);
		}
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

/*
 * An array of c whose row 0 of stripe 0 has every data column written
 * but column 2 (never written), closed; then column v of that row
 * rewritten, its entry resealed to match (reseal_block), with blk.
 */
static void row_resealed(struct rc_testbed *tb, const struct cfg *c,
			 struct rc_info *info, struct rc_stripe_map *map,
			 int v_data, bool v_parity, uint8_t *blk)
{
	uint8_t buf[BS];
	struct rc_array *a;
	uint32_t cb, v;

	tb_init(tb, c->members, DEV_BYTES);
	tb_create(tb, c->level, c->chunk, 0);
	a = tb_assemble(tb, 0, 0);
	rc_array_info(a, info);
	stripe0_map(info, map);
	cb = info->chunk_blocks;
	for (uint64_t b = 0; b < map->ndata; b++) {
		if (b == 2)
			continue;
		tb_pattern(buf, b * cb, 1);
		assert_int_equal(rc_write(a, b * cb, 1, buf), 0);
	}
	assert_int_equal(rc_flush(a), 0);
	assert_int_equal(rc_array_close(a), 0);
	v = v_parity ? map->ndata : (uint32_t)v_data;
	tb_pattern(blk, 777, 5);
	reseal_block(tb, (int)map->col[v].member, map->col[v].offset, blk);
}

/*
 * RAID 6: P and Q together name the one wrong column of a row (as md's
 * raid6check and raidz2), where RAID 5 can only see that the row
 * disagrees.  Row 0 of stripe 0 holds two written data blocks and one
 * never written; then, behind the array's back, with its entry resealed
 * to match (so it verifies):
 *   - data column 0 changed: P and Q name it, but its entry vouches for
 *     it: reported, nothing written.  The never-written block is not
 *     taken for the wrong one (it was: rebuilt from the bad column, it
 *     read as garbage - U2 D6);
 *   - P changed: P and Q name P, the data verifies: P is rewritten, and
 *     the row is clean after.
 */
static void test_raid6_locates_column(void **state)
{
	const struct cfg *c = &cfgs[4];         /* RAID 6 x 5 */
	static const uint8_t zero[BS];

	for (int what = 0; what < 2; what++) {
		struct rc_scrub_report r;
		struct rc_stripe_map map;
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		uint8_t buf[BS], blk[BS];
		uint32_t cb;
		uint64_t hash;

		/* data 0, or P */
		row_resealed(&tb, c, &info, &map, 0, what == 1, blk);
		assert_int_equal(info.level, RC_RAID6);
		cb = info.chunk_blocks;
		a = tb_assemble(&tb, 0, 0);
		assert_int_equal(rc_array_clear_errors(a, false), 0);
		hash = tb_media_hash(&tb);
		assert_int_equal(rc_scrub(a, true, &r, NULL, NULL), 0);
		assert_int_equal(rc_read(a, 2ull * cb, 1, buf), 0);
		if (memcmp(buf, zero, BS))
			fail_msg("case %d: the never-written block of the row "
				 "was rewritten", what);
		assert_int_equal(rc_read(a, cb, 1, buf), 0);
		assert_true(tb_check(buf, cb, 1));
		assert_int_equal(rc_read(a, 0, 1, buf), 0);
		if (what == 0) {
			assert_int_equal(r.parity_mismatches, 1);
			assert_int_equal(r.repaired, 0);
			assert_int_equal(r.entries_fixed, 0);
			assert_true(tb_media_hash(&tb) == hash);
			assert_memory_equal(buf, blk, BS);
		} else {
			assert_int_equal(r.parity_mismatches, 0);
			assert_int_equal(r.repaired, 1);
			assert_int_equal(r.csum_errors, 1);
			assert_int_equal(r.unrecoverable, 0);
			assert_true(tb_check(buf, 0, 1));
			scrub_clean(a);
		}
		assert_int_equal(rc_array_close(a), 0);
		if (what == 1) {
			a = tb_assemble(&tb, 0, 0);
			scrub_clean(a);
			assert_int_equal(rc_array_close(a), 0);
		}
		tb_fini(&tb);
	}
}

/*
 * The online scrub's way: range after range of a few stripes, one buffer
 * set kept across them (rc_scrub_stripes_bufs).  A range of stripes never
 * written after one full of data must not be judged by what the buffers
 * still hold, and a range must repair what it covers: every level, a data
 * range of one member zeroed, repaired in ranges of 7 stripes (not a
 * multiple of a batch), then a scrub of the whole finds nothing.
 */
static void test_scrub_ranges_kept_bufs(void **state)
{
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		const struct cfg *c = &cfgs[k];
		struct rc_scrub_report r, sum = { 0 };
		struct rc_scrub_bufs *b;
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		struct rc_sb sb;
		uint64_t n;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		n = fill_half(a);
		assert_int_equal(rc_array_close(a), 0);
		sb_of(&tb, 1, &sb);
		zero_range(&tb, 1, sb.data_offset + 8, 24);
		a = tb_assemble(&tb, 0, 0);
		rc_array_set_fault_errors(a, 0);
		assert_int_equal(rc_array_info(a, &info), 0);
		assert_int_equal(rc_scrub_bufs_new(a, &b), 0);
		for (uint64_t s = 0; s < info.stripes; s += 7) {
			assert_int_equal(rc_scrub_stripes_bufs(a, b, s, 7, true, &r), 0);
			sum.stripes += r.stripes;
			sum.repaired += r.repaired;
			sum.unrecoverable += r.unrecoverable;
			sum.parity_mismatches += r.parity_mismatches;
		}
		rc_scrub_bufs_free(b);
		if (sum.stripes != info.stripes || sum.repaired == 0 ||
		    sum.unrecoverable || sum.parity_mismatches)
			fail_msg("%s/%d: %llu of %llu stripes, %llu repaired, %llu "
				 "unrecoverable, %llu parity mismatches",
				 rc_level_name(c->level), c->members,
				 (unsigned long long)sum.stripes,
				 (unsigned long long)info.stripes,
				 (unsigned long long)sum.repaired,
				 (unsigned long long)sum.unrecoverable,
				 (unsigned long long)sum.parity_mismatches);
		scrub_clean(a);
		verify_all(a, n);
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}


/*
 * A parity column whose table claims "never written" in a written row,
 * its media never written either (a device whose rebuild never reached
 * the row, taken as in sync), and the data column it would rebuild
 * missing: nothing is left to check the claim against, and the row
 * contradicts it (parity is written with every write to a row).  The
 * missing block must read as an I/O error, never as what the zero parity
 * makes of it.  At RAID 6 both missing columns are data, P the false
 * claim, Q written.
 */
static void test_false_parity_claim_degraded(void **state)
{
	static const struct cfg pcfgs[] = {
		{ RC_RAID4, 4, 16384 }, { RC_RAID5, 3, 8192 },
		{ RC_RAID5, 4, 65536 }, { RC_RAID6, 5, 16384 },
	};

	for (size_t k = 0; k < sizeof(pcfgs) / sizeof(pcfgs[0]); k++) {
		const struct cfg *c = &pcfgs[k];
		uint8_t *buf, table[BS];
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		struct rc_stripe_map map;
		struct rc_sb sb;
		uint32_t skip = 0, pm;
		int ret;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		rc_array_info(a, &info);
		stripe0_map(&info, &map);
		pm = map.col[map.ndata].member;         /* P of stripe 0 */
		sb_of(&tb, (int)pm, &sb);
		assert_int_equal(rc_dev_read(tb.mem[pm], table, BS,
					     sb.csum_offset * BS), 0);
		buf = malloc((size_t)info.stripe_blocks * BS);
		assert_non_null(buf);
		for (uint32_t b = 0; b < info.stripe_blocks; b++)
			tb_pattern(buf + (size_t)b * BS, b, 1);
		assert_int_equal(rc_write(a, 0, info.stripe_blocks, buf), 0);
		assert_int_equal(rc_flush(a), 0);
		assert_int_equal(rc_array_close(a), 0);
		/* P's table block back to its blank, sealed state, and P's
		 * chunk back to zeros */
		assert_int_equal(rc_dev_write(tb.mem[pm], table, BS,
					      sb.csum_offset * BS), 0);
		memset(buf, 0, (size_t)info.chunk_blocks * BS);
		assert_int_equal(rc_dev_write(tb.mem[pm], buf,
					      (size_t)info.chunk_blocks * BS,
					      (sb.data_offset +
					       map.col[map.ndata].offset) * BS),
				 0);
		for (uint32_t d = 0; d < info.redundancy; d++)
			skip |= 1u << map.col[d].member;
		a = tb_assemble(&tb, skip, 0);
		ret = rc_read(a, 0, 1, buf);
		if (ret == 0)
			fail_msg("cfg %zu: block 0 (missing, its parity a false "
				 "\"never written\") read %s", k,
				 tb_check(buf, 0, 1) ? "right" : "wrong data");
		assert_int_equal(ret, -EIO);
		/* a column that is there still reads */
		assert_int_equal(rc_read(a, (uint64_t)info.redundancy *
					 info.chunk_blocks, 1, buf), 0);
		assert_true(tb_check(buf, (uint64_t)info.redundancy *
				     info.chunk_blocks, 1));
		assert_int_equal(rc_array_close(a), 0);
		free(buf);
		tb_fini(&tb);
	}
}

/*
 * A row that disagrees with nothing to name its wrong column by: nothing
 * is guessed, nothing written.  Row 0 of stripe 0 holds two written data
 * blocks and one never written, and one block is rewritten together with
 * its entry:
 *   - RAID 6 without data column 0's member, P rewritten: block 0, which
 *     only P and Q can give, reads as an I/O error or right - never
 *     wrong - and the never-written block is not written.  The lone
 *     never-written column was taken for a lost write and solved for
 *     with the bad P: block 0 read wrong with no error, and garbage went
 *     into the never-written block (a tester's find, U5 D1);
 *   - RAID 5, data column 1 rewritten, every member there: a repairing
 *     scrub reports the mismatch and writes nothing (the guess rebuilt
 *     the never-written block from the bad column, and the row agreed
 *     with it from then on: U5 D3).
 */
static void test_no_lone_zero_guess(void **state)
{
	static const uint8_t zero[BS];

	for (int what = 0; what < 2; what++) {
		const struct cfg *c = &cfgs[what == 0 ? 4 : 3];
		struct rc_scrub_report r;
		struct rc_stripe_map map;
		struct rc_testbed tb;
		struct rc_array *a;
		struct rc_info info;
		uint8_t buf[BS], blk[BS];
		uint32_t cb;
		uint64_t hash;
		int ret;

		/* P, or data 1 */
		row_resealed(&tb, c, &info, &map, 1, what == 0, blk);
		cb = info.chunk_blocks;
		a = tb_assemble(&tb, what == 0 ? 1u << map.col[0].member : 0, 0);
		assert_int_equal(rc_array_clear_errors(a, false), 0);
		hash = tb_media_hash(&tb);
		if (what == 0) {
			ret = rc_read(a, 0, 1, buf);
			if (ret == 0 && !tb_check(buf, 0, 1))
				fail_msg("block 0 read wrong, with no error");
			assert_true(ret == 0 || ret == -EIO);
		} else {
			assert_int_equal(rc_scrub(a, true, &r, NULL, NULL), 0);
			assert_int_equal(r.parity_mismatches, 1);
			assert_int_equal(r.repaired, 0);
		}
		assert_true(tb_media_hash(&tb) == hash);
		ret = rc_read(a, 2ull * cb, 1, buf);
		assert_true(ret == 0 || ret == -EIO);
		if (ret == 0 && memcmp(buf, zero, BS))
			fail_msg("case %d: the never-written block reads "
				 "garbage", what);
		assert_true(tb_media_hash(&tb) == hash);
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zeroed_tables),
		cmocka_unit_test(test_scrub_ranges_kept_bufs),
		cmocka_unit_test(test_blank_member_online),
		cmocka_unit_test(test_lost_table_write),
		cmocka_unit_test(test_unattributable_mismatch),
		cmocka_unit_test(test_self_proof_names_nothing),
		cmocka_unit_test(test_raid6_locates_column),
		cmocka_unit_test(test_table_damaged_online),
		cmocka_unit_test(test_no_lone_zero_guess),
		cmocka_unit_test(test_tables_healed_online),
		cmocka_unit_test(test_lost_table_write_then_rmw),
		cmocka_unit_test(test_old_image_put_back_online),
		cmocka_unit_test(test_false_parity_claim_degraded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
