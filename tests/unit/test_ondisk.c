/*
 * test_ondisk: raidcore's on-disk encodings as a specification.
 *
 *   - a superblock with every field and all 48 slots set, and a journal
 *     header with all 251 entries, survive encode + decode unchanged;
 *   - the encoded bytes sit at the offsets of docs/FORMAT.md, little-endian
 *     (read back here byte by byte, independently of le64toh), and every
 *     reserved or padding byte is zero even when the buffer was not;
 *   - any single flipped byte is caught (-ENODATA in the magic, else
 *     -EBADMSG); a newer major or an unknown incompat bit, re-sealed so only
 *     that check can fire, gives -EPROTONOSUPPORT; each consistency rule,
 *     broken alone on a valid superblock, gives -EINVAL;
 *   - block checksums are XXH3 seeded with the member block, never 0;
 *     checksum table blocks seal, verify, and accept all zeros;
 *   - rc_layout_member places ordered, aligned, non-overlapping regions with
 *     enough checksum entries, and refuses devices too small for a chunk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>
#include "ondisk.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define BS RC_BLOCK_SIZE
#define SLOT_OFF(i) (512u + 32u * (i))
#define JENTRY_OFF(i) (64u + 16u * (i))
#define TEST_DEV_BLOCKS (1ull << 28)    /* 1 TiB */

#define CHECK_ERR(name, got, want)                                          \
	do {                                                                \
		int got_ = (got), want_ = (want);                           \
		if (got_ != want_)                                          \
			fail_msg("%s: got %d, want %d", (name), got_, want_);   \
	} while (0)

/*
 * rc_block_csum must map a hash of 0 to 1, but no block and seed hashing to
 * 0 can be found.  So this binary interposes XXH3_64bits_withSeed_dispatch
 * (the entry point ondisk.c uses; the executable's definition wins over
 * libxxhash's): while force_zero_hash is set it returns 0, otherwise it
 * forwards to the real one.
 */
static bool force_zero_hash;

XXH64_hash_t XXH3_64bits_withSeed_dispatch(const void *data, size_t len,
					   XXH64_hash_t seed);
XXH64_hash_t XXH3_64bits_withSeed_dispatch(const void *data, size_t len,
					   XXH64_hash_t seed)
{
	static XXH64_hash_t (*real)(const void *, size_t, XXH64_hash_t);

	if (force_zero_hash)
		return 0;
	if (!real) {
		void *sym = dlsym(RTLD_NEXT, "XXH3_64bits_withSeed_dispatch");

		memcpy(&real, &sym, sizeof(real));
	}
	assert_non_null(real);
	return real(data, len, seed);
}

/* ---- helpers --------------------------------------------------------------- */

/* Little-endian read composed byte by byte: independent of the code under test. */
static uint64_t raw_get(const uint8_t *b, size_t off, size_t size)
{
	uint64_t v = 0;

	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)b[off + i] << (8 * i);
	return v;
}

static void raw_put(uint8_t *b, size_t off, size_t size, uint64_t v)
{
	for (size_t i = 0; i < size; i++)
		b[off + i] = (uint8_t)(v >> (8 * i));
}

/* The header checksum rule, restated: XXH3, seed 0, field at 4088 zero. */
static uint64_t ref_hdr_csum(const uint8_t *b)
{
	uint8_t copy[BS];

	memcpy(copy, b, BS);
	memset(copy + 4088, 0, 8);
	return XXH3_64bits(copy, BS);
}

static void raw_reseal(uint8_t *b)
{
	raw_put(b, 4088, 8, ref_hdr_csum(b));
}

static bool raw_is_zero(const uint8_t *b, size_t off, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (b[off + i])
			return false;
	return true;
}

static void fill_random(uint8_t *b, size_t len, unsigned seed)
{
	srandom(seed);
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)random();
}

/* States for the raid slots (every one used) and for the spare entries. */
static enum rc_member_state raid_slot_state(uint32_t i)
{
	static const enum rc_member_state s[] = {
		RC_MEMBER_ACTIVE, RC_MEMBER_FAULTY, RC_MEMBER_MISSING,
		RC_MEMBER_REBUILDING,
	};
	return s[i % ARRAY_LEN(s)];
}

static enum rc_member_state spare_slot_state(uint32_t i)
{
	return i % 2 ? RC_MEMBER_EMPTY : RC_MEMBER_SPARE;
}

/*
 * A valid superblock with every field distinct: RAID 6 over the maximum
 * member count, maximum spares, unknown compat and ro_compat bits (both are
 * decodable: the caller decides to ignore or go read-only).
 */
static void sb_make(struct rc_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->version_major = RC_SB_VERSION_MAJOR;
	sb->version_minor = RC_SB_VERSION_MINOR;
	/* the admin state's bit is set by every writer of this version */
	sb->feature_compat = 0x8000000000000001ull | RC_FEATURE_COMPAT_ADMIN;
	sb->feature_ro_compat = 0x4000000000000002ull;
	for (int i = 0; i < RC_UUID_SIZE; i++) {
		sb->array_uuid[i] = (uint8_t)(0x10 + i);
		sb->member_uuid[i] = (uint8_t)(0xe0 + i);
	}
	sb->role = 7;
	sb->level = RC_RAID6;
	sb->layout = RC_LAYOUT_LEFT_SYMMETRIC;
	sb->chunk_blocks = 128;
	sb->members = RC_MAX_MEMBERS;
	sb->nspares = RC_MAX_SPARES;
	assert_int_equal(rc_layout_member(sb, TEST_DEV_BLOCKS), 0);
	sb->events = 0x0102030405060708ull;
	sb->ctime_ns = 0x1111222233334444ull;
	sb->utime_ns = 0x5555666677778888ull;
	sb->prev_utime_ns = 0x5555666677770000ull;
	sb->array_state = RC_STATE_ACTIVE;
	sb->sb_copy = 1;
	sb->journal_seq = 0xa1a2a3a4a5a6a7a8ull;
	sb->journal_tail = sb->journal_blocks - 3;
	sb->array_blocks = sb->member_blocks * (RC_MAX_MEMBERS - 2);
	strcpy(sb->label, "raidfs ondisk test array");
	sb->err_read = 0x1111000000000001ull;
	sb->err_write = 0x2222000000000002ull;
	sb->err_csum = 0x3333000000000003ull;
	sb->repaired = 0x4444000000000004ull;
	sb->array_flags = RC_AF_ERRORS;
	sb->admin = (struct rc_admin){
		.scrub_active = true, .scrub_running = true,
		.scrub_pos = 0x5c5c000000000001ull,
		.scrub = { 0x1000000000000001ull, 0, 0x1000000000000003ull,
			   0x1000000000000004ull, 0x1000000000000005ull,
			   0x1000000000000006ull, 0x1000000000000007ull,
			   0x1000000000000008ull },
		.last = { 0x2000000000000001ull, 0x2000000000000002ull,
			  0x2000000000000003ull, 0x2000000000000004ull,
			  0x2000000000000005ull, 0x2000000000000006ull,
			  0x2000000000000007ull, 0x2000000000000008ull },
		.rebuild_min_kib = 0x3000000000000001ull,
		.rebuild_max_kib = 0x3000000000000002ull,
	};
	for (uint32_t i = 0; i < RC_SB_SLOTS; i++) {
		for (int k = 0; k < RC_UUID_SIZE; k++)
			sb->slots[i].uuid[k] = (uint8_t)(i * 16 + k + 1);
		sb->slots[i].state = i < sb->members ? raid_slot_state(i) :
						       spare_slot_state(i);
		sb->slots[i].rebuild_pos = 0x0100000000000000ull * i + i;
	}
}

static void sb_assert_equal(const struct rc_sb *a, const struct rc_sb *b)
{
	assert_int_equal(a->version_major, b->version_major);
	assert_int_equal(a->version_minor, b->version_minor);
	assert_int_equal(a->feature_compat, b->feature_compat);
	assert_int_equal(a->feature_ro_compat, b->feature_ro_compat);
	assert_int_equal(a->feature_incompat, b->feature_incompat);
	assert_memory_equal(a->array_uuid, b->array_uuid, RC_UUID_SIZE);
	assert_memory_equal(a->member_uuid, b->member_uuid, RC_UUID_SIZE);
	assert_int_equal(a->role, b->role);
	assert_int_equal(a->level, b->level);
	assert_int_equal(a->layout, b->layout);
	assert_int_equal(a->chunk_blocks, b->chunk_blocks);
	assert_int_equal(a->members, b->members);
	assert_int_equal(a->nspares, b->nspares);
	assert_int_equal(a->member_blocks, b->member_blocks);
	assert_int_equal(a->data_offset, b->data_offset);
	assert_int_equal(a->journal_offset, b->journal_offset);
	assert_int_equal(a->journal_blocks, b->journal_blocks);
	assert_int_equal(a->csum_offset, b->csum_offset);
	assert_int_equal(a->csum_blocks, b->csum_blocks);
	assert_int_equal(a->events, b->events);
	assert_int_equal(a->ctime_ns, b->ctime_ns);
	assert_int_equal(a->utime_ns, b->utime_ns);
	assert_int_equal(a->prev_utime_ns, b->prev_utime_ns);
	assert_int_equal(a->array_state, b->array_state);
	assert_int_equal(a->sb_copy, b->sb_copy);
	assert_int_equal(a->journal_seq, b->journal_seq);
	assert_int_equal(a->journal_tail, b->journal_tail);
	assert_int_equal(a->array_blocks, b->array_blocks);
	assert_int_equal(a->device_blocks, b->device_blocks);
	assert_string_equal(a->label, b->label);
	assert_memory_equal(&a->admin, &b->admin, sizeof(a->admin));
	for (int i = 0; i < RC_SB_SLOTS; i++) {
		assert_memory_equal(a->slots[i].uuid, b->slots[i].uuid,
				    RC_UUID_SIZE);
		assert_int_equal(a->slots[i].state, b->slots[i].state);
		assert_int_equal(a->slots[i].rebuild_pos, b->slots[i].rebuild_pos);
		assert_int_equal(a->slots[i].flags, b->slots[i].flags);
	}
}

static int sb_roundtrip(const struct rc_sb *sb, struct rc_sb *out,
			const char **why)
{
	uint8_t block[BS];

	rc_sb_encode(sb, block);
	return rc_sb_decode(block, out, why);
}

/* ---- superblock: round trip and bytes ----------------------------------- */

static void test_sb_roundtrip(void **state)
{
	struct rc_sb sb, out;
	const char *why = "unset";

	sb_make(&sb);
	assert_int_equal(sb_roundtrip(&sb, &out, &why), 0);
	assert_null(why);
	sb_assert_equal(&sb, &out);
	/* why is optional */
	assert_int_equal(sb_roundtrip(&sb, &out, NULL), 0);
}

struct raw_field {
	const char *name;
	size_t off, size;
	uint64_t want;
};

static void test_sb_bytes_little_endian(void **state)
{
	struct rc_sb sb;
	uint8_t b[BS];

	sb_make(&sb);
	rc_sb_encode(&sb, b);
	const struct raw_field f[] = {
		{ "magic", 0, 8, RC_SB_MAGIC },
		{ "version_major", 8, 2, 2 },
		{ "version_minor", 10, 2, RC_SB_VERSION_MINOR },
		{ "sb_size", 12, 4, 4096 },
		{ "feature_compat", 16, 8, sb.feature_compat },
		{ "feature_ro_compat", 24, 8, sb.feature_ro_compat },
		{ "feature_incompat", 32, 8, 0 },
		{ "role", 72, 4, 7 },
		{ "level", 76, 4, 6 },
		{ "layout", 80, 4, 2 },
		{ "chunk_blocks", 84, 4, 128 },
		{ "members", 88, 4, 32 },
		{ "nspares", 92, 4, 16 },
		{ "member_blocks", 96, 8, sb.member_blocks },
		{ "data_offset", 104, 8, sb.data_offset },
		{ "journal_offset", 112, 8, 8 },
		{ "journal_blocks", 120, 8, sb.journal_blocks },
		{ "csum_offset", 128, 8, sb.csum_offset },
		{ "csum_blocks", 136, 8, sb.csum_blocks },
		{ "events", 144, 8, 0x0102030405060708ull },
		{ "ctime_ns", 152, 8, 0x1111222233334444ull },
		{ "utime_ns", 160, 8, 0x5555666677778888ull },
		{ "prev_utime_ns", 472, 8, 0x5555666677770000ull },
		{ "array_state", 168, 4, 1 },
		{ "sb_copy", 172, 4, 1 },
		{ "journal_seq", 176, 8, 0xa1a2a3a4a5a6a7a8ull },
		{ "journal_tail", 184, 8, sb.journal_tail },
		{ "array_blocks", 192, 8, sb.array_blocks },
		{ "device_blocks", 200, 8, TEST_DEV_BLOCKS },
		{ "err_read", 272, 8, 0x1111000000000001ull },
		{ "err_write", 280, 8, 0x2222000000000002ull },
		{ "err_csum", 288, 8, 0x3333000000000003ull },
		{ "repaired", 296, 8, 0x4444000000000004ull },
		{ "array_flags", 304, 4, RC_AF_ERRORS },
		{ "reserved_flags", 308, 4, 0 },
		{ "admin.scrub_pos", 312, 8, 0x5c5c000000000001ull },
		{ "admin.flags", 320, 4, RC_ADMIN_SCRUB_ACTIVE | RC_ADMIN_SCRUB_RUNNING },
		{ "admin.reserved", 324, 4, 0 },
		{ "admin.scrub.start_ns", 328, 8, 0x1000000000000001ull },
		{ "admin.scrub.end_ns", 336, 8, 0 },
		{ "admin.scrub.stripes", 344, 8, 0x1000000000000003ull },
		{ "admin.scrub.parity_mismatches", 384, 8, 0x1000000000000008ull },
		{ "admin.last.start_ns", 392, 8, 0x2000000000000001ull },
		{ "admin.last.end_ns", 400, 8, 0x2000000000000002ull },
		{ "admin.last.repaired", 432, 8, 0x2000000000000006ull },
		{ "admin.last.unrecoverable", 440, 8, 0x2000000000000007ull },
		{ "admin.rebuild_min_kib", 456, 8, 0x3000000000000001ull },
		{ "admin.rebuild_max_kib", 464, 8, 0x3000000000000002ull },
		{ "slot 5 state", SLOT_OFF(5) + 16, 4, RC_MEMBER_FAULTY },
		{ "slot 5 rebuild_pos", SLOT_OFF(5) + 24, 8, 0x0500000000000005ull },
		{ "slot 32 state", SLOT_OFF(32) + 16, 4, RC_MEMBER_SPARE },
		{ "slot 47 state", SLOT_OFF(47) + 16, 4, RC_MEMBER_EMPTY },
		{ "slot 47 rebuild_pos", SLOT_OFF(47) + 24, 8, 0x2f0000000000002full },
		{ "checksum", 4088, 8, ref_hdr_csum(b) },
	};

	for (size_t i = 0; i < ARRAY_LEN(f); i++)
		if (raw_get(b, f[i].off, f[i].size) != f[i].want)
			fail_msg("%s at %zu: 0x%llx, want 0x%llx", f[i].name,
				 f[i].off,
				 (unsigned long long)raw_get(b, f[i].off, f[i].size),
				 (unsigned long long)f[i].want);
	assert_memory_equal(b, "RAIDFSMB", 8);
	/* events 0x0102...08 little-endian: the low byte first */
	assert_int_equal(b[144], 0x08);
	assert_int_equal(b[151], 0x01);
	assert_memory_equal(b + 40, sb.array_uuid, 16);
	assert_memory_equal(b + 56, sb.member_uuid, 16);
	assert_memory_equal(b + 208, sb.label, strlen(sb.label) + 1);
	assert_memory_equal(b + SLOT_OFF(9), sb.slots[9].uuid, 16);
}

/* The write-intent header at byte 2048, the CATCHUP slot flag at slot
 * byte 20, both back as written; a header without its magic is none. */
static void test_sb_write_intent_bytes(void **state)
{
	struct rc_sb sb, out;
	uint8_t b[BS];

	sb_make(&sb);
	sb.wi = (struct rc_wi_hdr){ .epoch = 0x1020304050607080ull,
		.base_events = 0x0102030405060707ull, .region_stripes = 16,
		.nregions = 0x123 };
	sb.slots[2].flags = RC_SLOT_CATCHUP;
	rc_sb_encode(&sb, b);
	assert_memory_equal(b + 2048, "RCWIHDR1", 8);
	assert_int_equal(raw_get(b, 2056, 8), sb.wi.epoch);
	assert_int_equal(raw_get(b, 2064, 8), sb.wi.base_events);
	assert_int_equal(raw_get(b, 2072, 8), 16);
	assert_int_equal(raw_get(b, 2080, 8), 0x123);
	assert_true(raw_is_zero(b, 2088, 4088 - 2088));
	assert_int_equal(raw_get(b, SLOT_OFF(2) + 20, 4), RC_SLOT_CATCHUP);
	assert_int_equal(rc_sb_decode(b, &out, NULL), 0);
	sb_assert_equal(&sb, &out);
	assert_int_equal(out.wi.epoch, sb.wi.epoch);
	assert_int_equal(out.wi.base_events, sb.wi.base_events);
	assert_int_equal(out.wi.nregions, sb.wi.nregions);
	raw_put(b, 2048, 1, 'X');
	raw_reseal(b);
	assert_int_equal(rc_sb_decode(b, &out, NULL), 0);
	assert_int_equal(out.wi.epoch, 0);
}

/* A bitmap block: bits where FORMAT.md puts them, merged back only for
 * its own array, epoch and index, and never with a bit flipped. */
static void test_wi_block(void **state)
{
	static uint64_t bits[RC_WI_MAX_REGIONS / 64], back[RC_WI_MAX_REGIONS / 64];
	uint8_t uuid[RC_UUID_SIZE] = { 1, 2, 3 }, other[RC_UUID_SIZE] = { 9 };
	uint8_t b[BS];
	uint64_t r = RC_WI_BITS_PER_BLOCK + 8 * 5 + 3;  /* block 1, byte 5 */

	memset(bits, 0, sizeof(bits));
	memset(back, 0, sizeof(back));
	bits[r / 64] |= 1ull << (r % 64);
	bits[0] |= 1;                                  /* block 0's */
	rc_wi_block_encode(uuid, 77, 1, bits, b);
	assert_memory_equal(b, "RCWIMAP1", 8);
	assert_int_equal(raw_get(b, 24, 8), 77);
	assert_int_equal(raw_get(b, 32, 4), 1);
	assert_int_equal(b[40 + 5], 1 << 3);
	assert_true(raw_is_zero(b, 40, 5));
	assert_int_equal(rc_wi_block_merge(b, uuid, 77, 1, back), 0);
	assert_int_equal(back[r / 64], 1ull << (r % 64));
	assert_int_equal(back[0], 0);
	assert_int_equal(rc_wi_block_merge(b, other, 77, 1, back), -EBADMSG);
	assert_int_equal(rc_wi_block_merge(b, uuid, 78, 1, back), -EBADMSG);
	assert_int_equal(rc_wi_block_merge(b, uuid, 77, 2, back), -EBADMSG);
	b[100] ^= 0x10;
	assert_int_equal(rc_wi_block_merge(b, uuid, 77, 1, back), -EBADMSG);
}

static void test_sb_reserved_zero(void **state)
{
	struct rc_sb sb, out;
	uint8_t b[BS];
	size_t len;

	sb_make(&sb);
	/* bytes after the label's NUL are padding, whatever the caller left */
	memset(sb.label, 'x', sizeof(sb.label));
	sb.label[5] = '\0';
	memset(b, 0xa5, sizeof(b));
	rc_sb_encode(&sb, b);
	assert_true(raw_is_zero(b, 308, 4));             /* reserved_flags */
	assert_true(raw_is_zero(b, 324, 4));             /* admin.reserved */
	assert_true(raw_is_zero(b, 480, 32));            /* reserved0 */
	assert_true(raw_is_zero(b, 2048, 2040));         /* no record, reserved1 */
	assert_true(raw_is_zero(b, 208 + 5, 64 - 5));    /* label tail */
	for (uint32_t i = 0; i < RC_SB_SLOTS; i++)
		assert_true(raw_is_zero(b, SLOT_OFF(i) + 20, 4));   /* flags */

	/* a 64-byte label without NUL is cut to 63 bytes, never overrun */
	memset(sb.label, 'y', sizeof(sb.label));
	rc_sb_encode(&sb, b);
	assert_int_equal(b[208 + 63], 0);
	assert_int_equal(rc_sb_decode(b, &out, NULL), 0);
	len = strlen(out.label);
	assert_int_equal(len, RC_LABEL_MAX - 1);
}

/* The writer stamps its own version: it zeroes what a newer minor may use. */
static void test_sb_encode_stamps_version(void **state)
{
	struct rc_sb sb, out;

	sb_make(&sb);
	sb.version_major = 0;
	sb.version_minor = 9;
	assert_int_equal(sb_roundtrip(&sb, &out, NULL), 0);
	assert_int_equal(out.version_major, RC_SB_VERSION_MAJOR);
	assert_int_equal(out.version_minor, RC_SB_VERSION_MINOR);
}

/* ---- superblock: corruption and version ---------------------------------- */

static void test_sb_any_flipped_byte(void **state)
{
	static const uint8_t masks[] = { 0x01, 0x80, 0xff };
	struct rc_sb sb, out;
	uint8_t good[BS], b[BS];
	const char *why;

	sb_make(&sb);
	rc_sb_encode(&sb, good);
	for (size_t i = 0; i < BS; i++) {
		for (size_t m = 0; m < ARRAY_LEN(masks); m++) {
			int want = i < 8 ? -ENODATA : -EBADMSG;
			int got;

			memcpy(b, good, BS);
			b[i] ^= masks[m];
			why = NULL;
			got = rc_sb_decode(b, &out, &why);
			if (got != want)
				fail_msg("byte %zu ^ 0x%02x: got %d, want %d", i,
					 masks[m], got, want);
			assert_non_null(why);
		}
	}
}

/* One or two raw edits to a valid encoded superblock, re-sealed or not. */
struct raw_case {
	const char *name;
	size_t off, size;
	uint64_t value;
	size_t off2, size2;             /* size2 0: no second edit */
	uint64_t value2;
	bool reseal;
	int err;
	const char *why_has;            /* substring of why, or NULL */
};

static const struct raw_case raw_cases[] = {
	{ "newer major", 8, 2, 3, 0, 0, 0, true, -EPROTONOSUPPORT, "major" },
	/* format 1 trusted all-zero tables: refused, with what to do */
	{ "format 1", 8, 2, 1, 0, 0, 0, true, -EPROTONOSUPPORT, "format 1" },
	{ "major 0xffff", 8, 2, 0xffff, 0, 0, 0, true, -EPROTONOSUPPORT, "major" },
	{ "incompat bit 2", 32, 8, 4, 0, 0, 0, true, -EPROTONOSUPPORT, "incompat" },
	{ "incompat bit 63", 32, 8, 1ull << 63, 0, 0, 0, true,
	  -EPROTONOSUPPORT, "incompat" },
	/* version is judged before consistency: a 2.x sb may mean other things */
	{ "newer major, bad level", 8, 2, 3, 76, 4, 99, true,
	  -EPROTONOSUPPORT, "major" },
	{ "incompat, bad sb_size", 32, 8, 8, 12, 4, 512, true,
	  -EPROTONOSUPPORT, "incompat" },
	/* the checksum is judged before the version */
	{ "newer major, not resealed", 8, 2, 3, 0, 0, 0, false, -EBADMSG, "checksum" },
	{ "major 0", 8, 2, 0, 0, 0, 0, true, -EINVAL, "version 0" },
	{ "sb_size 512", 12, 4, 512, 0, 0, 0, true, -EINVAL, "size" },
	{ "sb_size 8192", 12, 4, 8192, 0, 0, 0, true, -EINVAL, "size" },
	{ "wrong magic", 0, 8, 0x424d534644494153ull, 0, 0, 0, true,
	  -ENODATA, "no raidfs superblock" },
	{ "journal magic", 0, 8, RC_JHDR_MAGIC, 0, 0, 0, true,
	  -ENODATA, "no raidfs superblock" },
	/* accepted: newer minor, unknown compat / ro_compat, reserved bytes */
	{ "newer minor", 10, 2, 0xffff, 0, 0, 0, true, 0, NULL },
	{ "all compat bits", 16, 8, ~0ull, 0, 0, 0, true, 0, NULL },
	{ "all ro_compat bits", 24, 8, ~0ull, 0, 0, 0, true, 0, NULL },
	{ "incompat DIRECT (2.2)", 32, 8, RC_FEATURE_INCOMPAT_DIRECT, 0, 0, 0,
	  true, 0, NULL },
	{ "incompat DIRECT_NOPARITY (2.3)", 32, 8,
	  RC_FEATURE_INCOMPAT_DIRECT | RC_FEATURE_INCOMPAT_DIRECT_NOPARITY, 0, 0,
	  0, true, 0, NULL },
	{ "reserved0 used", 312, 8, ~0ull, 504, 8, ~0ull, true, 0, NULL },
	{ "reserved_flags used", 308, 4, ~0u, 0, 0, 0, true, 0, NULL },
	{ "reserved1 used", 2048, 8, ~0ull, 4080, 8, ~0ull, true, 0, NULL },
	{ "slot flags used", SLOT_OFF(3) + 20, 4, 7, 0, 0, 0, true, 0, NULL },
};

static void test_sb_raw_edits(void **state)
{
	struct rc_sb sb, out;
	uint8_t good[BS], b[BS];

	sb_make(&sb);
	rc_sb_encode(&sb, good);
	for (size_t i = 0; i < ARRAY_LEN(raw_cases); i++) {
		const struct raw_case *c = &raw_cases[i];
		const char *why = NULL;

		memcpy(b, good, BS);
		raw_put(b, c->off, c->size, c->value);
		if (c->size2)
			raw_put(b, c->off2, c->size2, c->value2);
		if (c->reseal)
			raw_reseal(b);
		CHECK_ERR(c->name, rc_sb_decode(b, &out, &why), c->err);
		if (c->err == 0) {
			assert_null(why);
			continue;
		}
		if (!why || (c->why_has && !strstr(why, c->why_has)))
			fail_msg("%s: why \"%s\" lacks \"%s\"", c->name,
				 why ? why : "(null)", c->why_has);
	}
}

/* What a newer minor wrote is decoded as it stands; the caller judges it. */
static void test_sb_newer_minor(void **state)
{
	struct rc_sb sb, out;
	uint8_t b[BS];

	sb_make(&sb);
	rc_sb_encode(&sb, b);
	raw_put(b, 10, 2, 3);
	raw_put(b, 16, 8, ~0ull);
	raw_put(b, 24, 8, ~0ull);
	raw_reseal(b);
	assert_int_equal(rc_sb_decode(b, &out, NULL), 0);
	assert_int_equal(out.version_major, 2);
	assert_int_equal(out.version_minor, 3);
	assert_int_equal(out.feature_compat, ~0ull);
	assert_int_equal(out.feature_ro_compat, ~0ull);
	sb.version_minor = 3;
	sb.feature_compat = sb.feature_ro_compat = ~0ull;
	sb_assert_equal(&sb, &out);
}

/* 2.1: a spare entry's flags (an online replacement's target and its
 * slot) are written at byte 20 of the entry and read back. */
static void test_sb_slot_flags(void **state)
{
	struct rc_sb sb, out;
	uint8_t b[BS];
	uint32_t e;

	sb_make(&sb);
	e = sb.members;
	sb.slots[e].flags = RC_SLOT_F_REPLACING | 3;
	rc_sb_encode(&sb, b);
	assert_int_equal(b[SLOT_OFF(e) + 20], 3);
	assert_int_equal(b[SLOT_OFF(e) + 21], 1);
	assert_int_equal(b[SLOT_OFF(e) + 22] | b[SLOT_OFF(e) + 23], 0);
	assert_int_equal(rc_sb_decode(b, &out, NULL), 0);
	assert_int_equal(out.slots[e].flags, RC_SLOT_F_REPLACING | 3);
	assert_int_equal(out.slots[e + 1].flags, 0);
}

/*
 * The admin state: a scrub that is not in progress leaves its position and
 * record zero whatever the caller left there (so "not running" has one
 * encoding), the last scrub and the speeds stay; unknown flag bits (a
 * newer minor's) are dropped, and "running" means nothing without
 * "active".
 */
static void test_sb_admin_inactive(void **state)
{
	struct rc_sb sb, out;
	uint8_t b[BS];

	sb_make(&sb);
	sb.admin.scrub_active = false;
	rc_sb_encode(&sb, b);
	assert_true(raw_is_zero(b, 312, 80));            /* pos, flags, scrub */
	assert_int_equal(rc_sb_decode(b, &out, NULL), 0);
	assert_false(out.admin.scrub_active);
	assert_false(out.admin.scrub_running);
	assert_int_equal(out.admin.scrub_pos, 0);
	assert_int_equal(out.admin.scrub.stripes, 0);
	assert_memory_equal(&out.admin.last, &sb.admin.last, sizeof(sb.admin.last));
	assert_int_equal(out.admin.rebuild_max_kib, sb.admin.rebuild_max_kib);

	raw_put(b, 320, 4, 0xfffffff0u | RC_ADMIN_SCRUB_RUNNING);
	raw_reseal(b);
	assert_int_equal(rc_sb_decode(b, &out, NULL), 0);
	assert_false(out.admin.scrub_active);
	assert_false(out.admin.scrub_running);
	raw_put(b, 320, 4, 0xfffffff0u | RC_ADMIN_SCRUB_ACTIVE);
	raw_reseal(b);
	assert_int_equal(rc_sb_decode(b, &out, NULL), 0);
	assert_true(out.admin.scrub_active);
	assert_false(out.admin.scrub_running);
}

static void test_sb_label_unterminated(void **state)
{
	struct rc_sb sb, out;
	uint8_t b[BS];
	const char *why = NULL;

	sb_make(&sb);
	rc_sb_encode(&sb, b);
	memset(b + 208, 'A', RC_LABEL_MAX);
	raw_reseal(b);
	assert_int_equal(rc_sb_decode(b, &out, &why), -EINVAL);
	assert_non_null(why);
	assert_non_null(strstr(why, "label"));
	/* the last label byte alone being the NUL is enough */
	b[208 + RC_LABEL_MAX - 1] = '\0';
	raw_reseal(b);
	assert_int_equal(rc_sb_decode(b, &out, &why), 0);
}

/* ---- superblock: consistency rules -------------------------------------- */

/*
 * Sets the member count and makes every other rule that depends on it hold
 * (role, slot states), so a failure can only be the count itself.
 */
static void sb_set_members(struct rc_sb *sb, enum rc_level level,
			   enum rc_layout layout, uint32_t n)
{
	sb->level = level;
	sb->layout = layout;
	sb->members = n;
	sb->role = 0;
	for (uint32_t i = 0; i < RC_SB_SLOTS; i++)
		sb->slots[i].state = i < n ? RC_MEMBER_ACTIVE : RC_MEMBER_EMPTY;
}

#define MUT(name, body) \
	static void mut_##name(struct rc_sb *sb) { body; }

MUT(none, (void)sb)
MUT(role_spare, sb->role = RC_ROLE_SPARE)
MUT(role_last, sb->role = sb->members - 1)
MUT(copy0_clean, sb->sb_copy = 0; sb->array_state = RC_STATE_CLEAN)
MUT(raid0_min, sb_set_members(sb, RC_RAID0, RC_LAYOUT_NONE, 2))
MUT(raid1_min, sb_set_members(sb, RC_RAID1, RC_LAYOUT_NONE, 2))
MUT(raid4_min, sb_set_members(sb, RC_RAID4, RC_LAYOUT_PARITY_LAST, 3))
MUT(raid5_min, sb_set_members(sb, RC_RAID5, RC_LAYOUT_LEFT_SYMMETRIC, 3))
MUT(raid6_min, sb_set_members(sb, RC_RAID6, RC_LAYOUT_LEFT_SYMMETRIC, 4))
MUT(raid10_min, sb_set_members(sb, RC_RAID10, RC_LAYOUT_NEAR2, 2))
MUT(raid10_odd, sb_set_members(sb, RC_RAID10, RC_LAYOUT_NEAR2, 3))
MUT(no_spares, sb->nspares = 0)
MUT(chunk1, sb->chunk_blocks = 1)
MUT(chunk256, sb->chunk_blocks = 256; sb->member_blocks &= ~255ull)
MUT(tight_regions, sb->csum_blocks = (sb->member_blocks + 510) / 511;
    sb->data_offset = sb->csum_offset + sb->csum_blocks;
    sb->device_blocks = sb->data_offset + sb->member_blocks + 2)
MUT(tail_last, sb->journal_tail = sb->journal_blocks - 1)
MUT(tail_zero, sb->journal_tail = 0)
MUT(tail_at_end, sb->journal_tail = sb->journal_blocks)
MUT(big_journal, sb->journal_blocks = RC_MAX_JOURNAL_BLOCKS * 2;
    sb->csum_offset = sb->journal_offset + sb->journal_blocks;
    sb->data_offset = sb->csum_offset + sb->csum_blocks + 5;
    sb->member_blocks -= 2 * RC_MAX_JOURNAL_BLOCKS)
/* entries past the raid slots: any known state, even all-zero ones */
MUT(unused_slots_zero, sb->nspares = 2;
    memset(&sb->slots[sb->members + 2], 0,
	   (RC_SB_SLOTS - sb->members - 2) * sizeof(sb->slots[0])))
MUT(slot32_active, sb->slots[32].state = RC_MEMBER_ACTIVE)
MUT(slot47_rebuilding, sb->slots[47].state = RC_MEMBER_REBUILDING)
MUT(spares_after_raid5, sb_set_members(sb, RC_RAID5, RC_LAYOUT_LEFT_SYMMETRIC, 5);
    sb->nspares = 2; sb->slots[5].state = RC_MEMBER_SPARE;
    sb->slots[6].state = RC_MEMBER_SPARE)
MUT(label_empty, sb->label[0] = '\0')
MUT(label_full, memset(sb->label, 'z', RC_LABEL_MAX - 1);
    sb->label[RC_LABEL_MAX - 1] = '\0')

MUT(level_unknown, sb->level = (enum rc_level)3)
MUT(level_huge, sb->level = (enum rc_level)0xffffffffu)
MUT(layout_wrong, sb->layout = RC_LAYOUT_NONE)
MUT(layout_raid4, sb->layout = RC_LAYOUT_PARITY_LAST)
MUT(layout_unknown, sb->layout = (enum rc_layout)9)
MUT(raid6_too_few, sb_set_members(sb, RC_RAID6, RC_LAYOUT_LEFT_SYMMETRIC, 3))
MUT(raid5_too_few, sb_set_members(sb, RC_RAID5, RC_LAYOUT_LEFT_SYMMETRIC, 2))
MUT(raid1_too_few, sb_set_members(sb, RC_RAID1, RC_LAYOUT_NONE, 1))
MUT(too_many, sb_set_members(sb, RC_RAID6, RC_LAYOUT_LEFT_SYMMETRIC, 33))
MUT(chunk0, sb->chunk_blocks = 0)
MUT(chunk3, sb->chunk_blocks = 3)
MUT(chunk512, sb->chunk_blocks = 512; sb->member_blocks &= ~511ull)
MUT(mblocks0, sb->member_blocks = 0)
MUT(mblocks_partial, sb->member_blocks -= 1)
MUT(spares17, sb->nspares = RC_MAX_SPARES + 1)
MUT(role_members, sb->role = sb->members)
MUT(role_below_spare, sb->role = RC_ROLE_SPARE - 1)
MUT(journal_at9, sb->journal_offset = 9)
MUT(journal_at0, sb->journal_offset = 0)
MUT(journal_small, sb->journal_blocks = RC_MIN_JOURNAL_BLOCKS - 1;
    sb->journal_tail = 0)
MUT(tail_outside, sb->journal_tail = sb->journal_blocks + 1)
MUT(tail_huge, sb->journal_tail = UINT64_MAX)
MUT(csum_in_journal, sb->csum_offset -= 1)
MUT(csum_before_journal, sb->csum_offset = 2)
MUT(journal_overflow, sb->journal_blocks = UINT64_MAX)
MUT(csum_small, sb->csum_blocks = (sb->member_blocks + 510) / 511 - 1)
MUT(data_in_csum, sb->data_offset = sb->csum_offset + sb->csum_blocks - 1)
MUT(data_before_csum, sb->data_offset = sb->csum_offset - 1)
MUT(csum_overflow, sb->csum_blocks = UINT64_MAX)
MUT(past_end, sb->device_blocks = sb->data_offset + sb->member_blocks - 1)
MUT(on_tail_copies, sb->device_blocks = sb->data_offset + sb->member_blocks + 1)
MUT(data_past_device, sb->data_offset = UINT64_MAX - 7)
MUT(device_zero, sb->device_blocks = 0)
MUT(array_state2, sb->array_state = (enum rc_array_state)2)
MUT(slot0_spare, sb->slots[0].state = RC_MEMBER_SPARE)
MUT(slot31_empty, sb->slots[31].state = RC_MEMBER_EMPTY)
MUT(slot31_spare, sb->slots[31].state = RC_MEMBER_SPARE)
MUT(slot0_state6, sb->slots[0].state = (enum rc_member_state)6)
MUT(slot47_state6, sb->slots[47].state = (enum rc_member_state)6)
MUT(slot10_state6, sb->slots[10].state = (enum rc_member_state)6)
MUT(slot40_huge, sb->slots[40].state = (enum rc_member_state)0xffffffffu)
MUT(copy3, sb->sb_copy = 3)
MUT(copy4, sb->sb_copy = 4)

struct mut_case {
	const char *name;
	void (*mutate)(struct rc_sb *sb);
	int err;
	/*
	 * Substring of why.  NULL for the rules geom judges (its wording is
	 * its own); the baseline being valid and the mutation touching one
	 * rule is what pins the cause there.
	 */
	const char *why_has;
};

#define OK(n) { #n, mut_##n, 0, NULL }
#define BAD(n, w) { #n, mut_##n, -EINVAL, w }

static const struct mut_case mut_cases[] = {
	OK(none), OK(role_spare), OK(role_last), OK(copy0_clean),
	OK(raid0_min), OK(raid1_min), OK(raid4_min), OK(raid5_min),
	OK(raid6_min), OK(raid10_min), OK(raid10_odd), OK(no_spares),
	OK(chunk1), OK(chunk256), OK(tight_regions), OK(tail_last),
	OK(tail_zero), OK(tail_at_end), OK(big_journal), OK(label_empty), OK(label_full),
	OK(unused_slots_zero), OK(slot32_active), OK(slot47_rebuilding),
	OK(spares_after_raid5),

	BAD(level_unknown, NULL), BAD(level_huge, NULL),
	BAD(layout_wrong, NULL), BAD(layout_raid4, NULL),
	BAD(layout_unknown, NULL),
	BAD(raid6_too_few, NULL), BAD(raid5_too_few, NULL),
	BAD(raid1_too_few, NULL), BAD(too_many, NULL),
	BAD(chunk0, NULL), BAD(chunk3, NULL), BAD(chunk512, NULL),
	BAD(mblocks0, NULL), BAD(mblocks_partial, NULL),
	BAD(spares17, "spares"),
	BAD(role_members, "role"), BAD(role_below_spare, "role"),
	BAD(journal_at9, "journal does not start"),
	BAD(journal_at0, "journal does not start"),
	BAD(journal_small, "smaller than the minimum"),
	BAD(tail_outside, "tail"), BAD(tail_huge, "tail"),
	BAD(csum_in_journal, "follow the journal"),
	BAD(csum_before_journal, "follow the journal"),
	BAD(journal_overflow, "follow the journal"),
	BAD(csum_small, "too small"),
	BAD(data_in_csum, "follow the checksum table"),
	BAD(data_before_csum, "follow the checksum table"),
	BAD(csum_overflow, "follow the checksum table"),
	BAD(past_end, "end of the device"),
	BAD(on_tail_copies, "end of the device"),
	BAD(data_past_device, "end of the device"),
	BAD(device_zero, "end of the device"),
	BAD(array_state2, "array state"),
	BAD(slot0_spare, "slot"), BAD(slot31_empty, "slot"),
	BAD(slot31_spare, "slot"), BAD(slot0_state6, "slot"),
	BAD(slot10_state6, "slot"), BAD(slot47_state6, "slot"),
	BAD(slot40_huge, "slot"),
	OK(copy3), BAD(copy4, "copy"),
};

static void test_sb_consistency(void **state)
{
	for (size_t i = 0; i < ARRAY_LEN(mut_cases); i++) {
		const struct mut_case *c = &mut_cases[i];
		struct rc_sb sb, out;
		const char *why = NULL;

		sb_make(&sb);
		c->mutate(&sb);
		CHECK_ERR(c->name, sb_roundtrip(&sb, &out, &why), c->err);
		if (c->err == 0) {
			assert_null(why);
			sb_assert_equal(&sb, &out);
			continue;
		}
		if (!why || !*why)
			fail_msg("%s: no reason given", c->name);
		if (c->why_has && !strstr(why, c->why_has))
			fail_msg("%s: why \"%s\" lacks \"%s\"", c->name, why,
				 c->why_has);
	}
}

/* ---- journal header ------------------------------------------------------ */

static void jh_make(struct rc_jhdr *h, uint32_t nentries)
{
	memset(h, 0, sizeof(*h));
	h->seq = 0x1122334455667788ull;
	for (int i = 0; i < RC_UUID_SIZE; i++)
		h->array_uuid[i] = (uint8_t)(0x10 + i);
	h->role = 5;
	h->nentries = nentries;
	h->participants = 0x0000ffff0000abcdull;
	h->ring_pos = 1234;
	h->batch_end = 0x1122334455667790ull;
	/* all 251 set: encode must ignore those at and beyond nentries */
	for (uint32_t i = 0; i < RC_JHDR_MAX_ENTRIES; i++) {
		h->target[i] = 1000000 + 3ull * i;
		h->csum[i] = ~(uint64_t)i * 0x9e3779b97f4a7c15ull;
	}
}

static void jh_assert_equal(const struct rc_jhdr *a, const struct rc_jhdr *b)
{
	assert_int_equal(a->seq, b->seq);
	assert_memory_equal(a->array_uuid, b->array_uuid, RC_UUID_SIZE);
	assert_int_equal(a->role, b->role);
	assert_int_equal(a->nentries, b->nentries);
	assert_int_equal(a->participants, b->participants);
	assert_int_equal(a->ring_pos, b->ring_pos);
	assert_int_equal(a->batch_end, b->batch_end);
	for (uint32_t i = 0; i < a->nentries; i++) {
		assert_int_equal(a->target[i], b->target[i]);
		assert_int_equal(a->csum[i], b->csum[i]);
	}
}

static void test_jhdr_roundtrip(void **state)
{
	static const uint32_t counts[] = { 0, 1, 3, RC_JHDR_MAX_ENTRIES };
	struct rc_jhdr h, out;
	uint8_t b[BS];

	for (size_t k = 0; k < ARRAY_LEN(counts); k++) {
		uint32_t n = counts[k];

		jh_make(&h, n);
		memset(b, 0xa5, sizeof(b));
		rc_jhdr_encode(&h, b);
		memset(&out, 0xa5, sizeof(out));
		assert_int_equal(rc_jhdr_decode(b, &out), 0);
		jh_assert_equal(&h, &out);
		/* beyond nentries: zero on disk, zero after decode */
		assert_true(raw_is_zero(b, JENTRY_OFF(n), 4080 - JENTRY_OFF(n)));
		for (uint32_t i = n; i < RC_JHDR_MAX_ENTRIES; i++)
			assert_true(out.target[i] == 0 && out.csum[i] == 0);
	}
}

static void test_jhdr_bytes(void **state)
{
	struct rc_jhdr h;
	uint8_t b[BS];

	jh_make(&h, RC_JHDR_MAX_ENTRIES);
	memset(b, 0xa5, sizeof(b));
	rc_jhdr_encode(&h, b);
	const struct raw_field f[] = {
		{ "magic", 0, 8, RC_JHDR_MAGIC },
		{ "seq", 8, 8, 0x1122334455667788ull },
		{ "role", 32, 4, 5 },
		{ "nentries", 36, 4, RC_JHDR_MAX_ENTRIES },
		{ "participants", 40, 8, 0x0000ffff0000abcdull },
		{ "ring_pos", 48, 8, 1234 },
		{ "batch_end", 56, 8, 0x1122334455667790ull },
		{ "entry 0 target", JENTRY_OFF(0), 8, 1000000 },
		{ "entry 3 target", JENTRY_OFF(3), 8, 1000009 },
		{ "entry 3 csum", JENTRY_OFF(3) + 8, 8, h.csum[3] },
		{ "entry 250 target", JENTRY_OFF(250), 8, 1000750 },
		{ "entry 250 csum", JENTRY_OFF(250) + 8, 8, h.csum[250] },
		{ "pad", 4080, 8, 0 },
		{ "checksum", 4088, 8, ref_hdr_csum(b) },
	};

	for (size_t i = 0; i < ARRAY_LEN(f); i++)
		if (raw_get(b, f[i].off, f[i].size) != f[i].want)
			fail_msg("%s at %zu: 0x%llx, want 0x%llx", f[i].name,
				 f[i].off,
				 (unsigned long long)raw_get(b, f[i].off, f[i].size),
				 (unsigned long long)f[i].want);
	assert_memory_equal(b, "RCJRNL01", 8);
	assert_memory_equal(b + 16, h.array_uuid, 16);
}

static void test_jhdr_corrupt(void **state)
{
	struct rc_jhdr h, out;
	uint8_t good[BS], b[BS];

	jh_make(&h, 17);
	rc_jhdr_encode(&h, good);
	for (size_t i = 0; i < BS; i++) {
		int want = i < 8 ? -ENODATA : -EBADMSG;

		memcpy(b, good, BS);
		b[i] ^= 0x40;
		if (rc_jhdr_decode(b, &out) != want)
			fail_msg("jhdr byte %zu: want %d", i, want);
	}
	/* a superblock is not a journal header, and the reverse */
	{
		struct rc_sb sb;

		sb_make(&sb);
		rc_sb_encode(&sb, b);
		assert_int_equal(rc_jhdr_decode(b, &out), -ENODATA);
		assert_int_equal(rc_sb_decode(good, &sb, NULL), -ENODATA);
	}
}

/* 2.2: direct-stripe entries follow the payload ones; npayload counts
 * those before them, and a payload entry after one is refused. */
static void test_jhdr_direct_entries(void **state)
{
	struct rc_jhdr h, out;
	uint8_t b[BS];

	jh_make(&h, 10);
	for (uint32_t i = 6; i < 10; i++)
		h.target[i] = RC_JENT_DIRECT | (77 + i);
	rc_jhdr_encode(&h, b);
	assert_int_equal(rc_jhdr_decode(b, &out), 0);
	jh_assert_equal(&h, &out);
	assert_int_equal(out.npayload, 6);
	assert_int_equal(raw_get(b, JENTRY_OFF(6), 8), RC_JENT_DIRECT | 83);
	/* only direct entries: no payload block */
	for (uint32_t i = 0; i < 10; i++)
		h.target[i] = RC_JENT_DIRECT | i;
	rc_jhdr_encode(&h, b);
	assert_int_equal(rc_jhdr_decode(b, &out), 0);
	assert_int_equal(out.npayload, 0);
	/* a payload entry after a direct one */
	h.target[9] = 5000;
	rc_jhdr_encode(&h, b);
	assert_int_equal(rc_jhdr_decode(b, &out), -EINVAL);
	/* none: every entry is payload */
	jh_make(&h, 10);
	rc_jhdr_encode(&h, b);
	assert_int_equal(rc_jhdr_decode(b, &out), 0);
	assert_int_equal(out.npayload, 10);
}

static void test_jhdr_nentries_limit(void **state)
{
	static const struct {
		uint32_t n;
		int err;
	} cases[] = {
		{ RC_JHDR_MAX_ENTRIES, 0 },
		{ RC_JHDR_MAX_ENTRIES + 1, -EINVAL },
		{ 1000, -EINVAL },
		{ UINT32_MAX, -EINVAL },
	};
	struct rc_jhdr h, out;
	uint8_t b[BS];

	jh_make(&h, 0);
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		rc_jhdr_encode(&h, b);
		raw_put(b, 36, 4, cases[i].n);
		raw_reseal(b);
		CHECK_ERR("nentries", rc_jhdr_decode(b, &out), cases[i].err);
	}
}

/* ---- block checksums ----------------------------------------------------- */

static void test_block_csum(void **state)
{
	static const uint64_t seeds[] = {
		0, 1, 8, 4096, 1ull << 40, UINT64_MAX,
	};
	uint8_t b[BS], zero[BS] = { 0 };
	uint64_t got[ARRAY_LEN(seeds)];

	fill_random(b, BS, 1);
	for (size_t i = 0; i < ARRAY_LEN(seeds); i++) {
		got[i] = rc_block_csum(b, seeds[i]);
		assert_int_equal(got[i], XXH3_64bits_withSeed(b, BS, seeds[i]));
		/* the seed is what catches a misdirected write */
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(got[i], got[j]);
		assert_int_not_equal(rc_block_csum(zero, seeds[i]),
				     RC_CSUM_UNWRITTEN);
	}
	b[4095] ^= 1;
	assert_int_not_equal(rc_block_csum(b, seeds[0]), got[0]);
}

static void test_block_csum_never_zero(void **state)
{
	uint8_t b[BS];

	fill_random(b, BS, 2);
	force_zero_hash = true;
	uint64_t c = rc_block_csum(b, 77);
	force_zero_hash = false;
	assert_int_equal(c, 1);
}

/* ---- checksum table blocks ----------------------------------------------- */

static void csum_block_make(uint8_t *b)
{
	memset(b, 0, BS);
	for (uint32_t j = 0; j < RC_CSUM_PER_BLOCK; j++)
		rc_csum_set(b, j, j % 7 ? 0x0123456789abcdefull * (j + 1) :
					  RC_CSUM_UNWRITTEN);
}

static void test_csum_entries(void **state)
{
	uint8_t b[BS];

	csum_block_make(b);
	for (uint32_t j = 0; j < RC_CSUM_PER_BLOCK; j++) {
		uint64_t want = j % 7 ? 0x0123456789abcdefull * (j + 1) : 0;

		assert_int_equal(rc_csum_get(b, j), want);
		assert_int_equal(raw_get(b, 8 * j, 8), want);
	}
}

/* The seal's seed: the array's and the member's identity, then the
 * block's place mixed in as FORMAT.md says. */
static uint64_t seal_seed(uint64_t seed, uint64_t at)
{
	return seed ^ (at * 0x9e3779b97f4a7c15ull);
}

static void test_csum_block_seal(void **state)
{
	const uint8_t au[16] = { 1, 2, 3 }, mu[16] = { 4, 5, 6 }, mu2[16] = { 7 };
	const uint64_t at = 5000, seed = rc_table_seed(au, mu);
	uint8_t good[BS], b[BS], ids[32];
	uint64_t want;

	memcpy(ids, au, 16);
	memcpy(ids + 16, mu, 16);
	assert_int_equal(seed, XXH3_64bits(ids, 32));
	csum_block_make(good);
	rc_csum_block_seal(good, seed, at);
	want = XXH3_64bits_withSeed(good, 4088, seal_seed(seed, at));
	assert_int_equal(raw_get(good, 4088, 8), want ? want : 1);
	assert_true(rc_csum_block_ok(good, seed, at));
	/* a misplaced table block fails, and so does another member's */
	assert_false(rc_csum_block_ok(good, seed, at + 1));
	assert_false(rc_csum_block_ok(good, seed, 0));
	assert_false(rc_csum_block_ok(good, rc_table_seed(au, mu2), at));
	assert_false(rc_csum_block_ok(good, rc_table_seed(mu, au), at));
	for (size_t i = 0; i < BS; i++) {
		memcpy(b, good, BS);
		b[i] ^= 0x10;
		if (rc_csum_block_ok(b, seed, at))
			fail_msg("table block with byte %zu flipped passes", i);
	}
	/* entries present but no seal */
	memcpy(b, good, BS);
	memset(b + 4088, 0, 8);
	assert_false(rc_csum_block_ok(b, seed, at));
}

/* Zeros are not a table (a blank or truncated member): only a sealed block
 * of zero entries says "nothing written". */
static void test_csum_block_zero(void **state)
{
	static const uint64_t seeds[] = { 0, 5000, UINT64_MAX };
	uint8_t b[BS];

	for (size_t i = 0; i < ARRAY_LEN(seeds); i++) {
		memset(b, 0, BS);
		assert_false(rc_csum_block_ok(b, seeds[i], 77));
		rc_csum_block_empty(b, seeds[i], 77);
		assert_true(raw_get(b, 4088, 8) != 0);
		for (uint32_t j = 0; j < RC_CSUM_PER_BLOCK; j++)
			assert_int_equal(rc_csum_get(b, j), 0);
		assert_true(rc_csum_block_ok(b, seeds[i], 77));
		assert_false(rc_csum_block_ok(b, seeds[i], 78));
	}
}

static void test_csum_block_seal_never_zero(void **state)
{
	uint8_t b[BS];

	csum_block_make(b);
	force_zero_hash = true;
	rc_csum_block_seal(b, 3, 9);
	assert_int_equal(raw_get(b, 4088, 8), 1);
	assert_true(rc_csum_block_ok(b, 3, 9));
	force_zero_hash = false;
}

/* ---- member layout -------------------------------------------------------- */

struct layout_case {
	const char *name;
	uint64_t dev_blocks;
	uint32_t chunk;
	uint64_t journal_in;            /* 0: default */
	int err;
	uint64_t journal_want;
};

static const struct layout_case layout_cases[] = {
	{ "empty", 0, 16, 0, -ENOSPC, 0 },
	{ "superblocks only", 8, 1, 0, -ENOSPC, 0 },
	{ "journal only", 264, 1, 0, -ENOSPC, 0 },
	{ "table up to 1 MiB", 512, 1, 0, -ENOSPC, 0 },
	{ "one block", 513, 1, 0, 0, 256 },
	{ "less than a chunk", 527, 16, 0, -ENOSPC, 0 },
	{ "one chunk", 528, 16, 0, 0, 256 },
	{ "16 MiB", 4096, 16, 0, 0, 256 },
	{ "64 MiB", 16384, 16, 0, 0, 256 },
	{ "1 GiB", 262144, 128, 0, 0, 4096 },
	{ "odd size", 1000003, 64, 0, 0, 15625 },
	/* the table bound alone would start the data 1 MiB too late here */
	{ "chunk rounding frees a MiB", 247589, 16, 0, 0, 3868 },
	{ "1 TiB", 1ull << 28, 256, 0, 0, RC_MAX_JOURNAL_BLOCKS },
	{ "16 TiB", 1ull << 32, 128, 0, 0, RC_MAX_JOURNAL_BLOCKS },
	{ "explicit journal", 1ull << 20, 16, 1000, 0, 1000 },
	{ "explicit minimum", 1ull << 20, 16, 256, 0, 256 },
	{ "explicit maximum", 1ull << 20, 16, 32768, 0, 32768 },
	{ "journal too small", 1ull << 20, 16, 255, -EINVAL, 0 },
	{ "journal too large", 1ull << 30, 16, 32769, -EINVAL, 0 },
	{ "journal fills the device", 40000, 16, 32768, 0, 32768 },
	{ "journal leaves no data", 33000, 16, 32768, -ENOSPC, 0 },
	{ "chunk 0", 1ull << 20, 0, 0, -EINVAL, 0 },
	{ "chunk 3", 1ull << 20, 3, 0, -EINVAL, 0 },
	{ "chunk 512", 1ull << 20, 512, 0, -EINVAL, 0 },
};

/* Ordered, aligned, non-overlapping, covered, and not wasteful. */
static void layout_check(const struct layout_case *c, const struct rc_sb *sb)
{
	uint64_t csum_end = sb->csum_offset + sb->csum_blocks;

	assert_int_equal(sb->journal_offset, RC_JOURNAL_OFFSET);
	assert_int_equal(sb->journal_blocks, c->journal_want);
	assert_int_equal(sb->csum_offset, RC_JOURNAL_OFFSET + sb->journal_blocks);
	assert_true(sb->csum_blocks * RC_CSUM_PER_BLOCK >= sb->member_blocks);
	assert_true((sb->csum_blocks - 1) * RC_CSUM_PER_BLOCK < sb->member_blocks);
	assert_true(sb->data_offset >= csum_end);
	/* one more MiB of data needs at most one more table block */
	assert_true(sb->data_offset - csum_end <= 256);
	if (sb->data_offset - 256 >= sb->csum_offset) {
		/* starting the data 1 MiB earlier leaves no room for its table */
		uint64_t d = sb->data_offset - 256;
		uint64_t m = (c->dev_blocks - d) / c->chunk * c->chunk;

		assert_true(sb->csum_offset +
			    (m + RC_CSUM_PER_BLOCK - 1) / RC_CSUM_PER_BLOCK > d);
	}
	assert_int_equal(sb->data_offset % 256, 0);
	assert_true(sb->member_blocks >= c->chunk);
	assert_int_equal(sb->member_blocks % c->chunk, 0);
	assert_true(sb->data_offset + sb->member_blocks <= c->dev_blocks);
	assert_true(c->dev_blocks - sb->data_offset - sb->member_blocks < c->chunk);
	/* the device has two more blocks: superblock copies 2 and 3 */
	assert_int_equal(sb->device_blocks, c->dev_blocks + RC_SB_TAIL_BLOCKS);
	assert_int_equal(rc_sb_copy_block(2, sb->device_blocks), c->dev_blocks);
	assert_int_equal(rc_sb_copy_block(3, sb->device_blocks), c->dev_blocks + 1);
}

static void test_layout_member(void **state)
{
	for (size_t i = 0; i < ARRAY_LEN(layout_cases); i++) {
		const struct layout_case *c = &layout_cases[i];
		struct rc_sb sb, before, out;

		sb_make(&sb);
		sb_set_members(&sb, RC_RAID5, RC_LAYOUT_LEFT_SYMMETRIC, 3);
		sb.chunk_blocks = c->chunk;
		sb.journal_blocks = c->journal_in;
		sb.journal_tail = 0;
		memcpy(&before, &sb, sizeof(sb));
		/* dev_blocks in the table is what the regions may use */
		CHECK_ERR(c->name, rc_layout_member(&sb, c->dev_blocks +
						    RC_SB_TAIL_BLOCKS), c->err);
		if (c->err) {
			/* a refused layout leaves the superblock alone */
			assert_memory_equal(&sb, &before, sizeof(sb));
			continue;
		}
		layout_check(c, &sb);
		/* what the layout produces is a superblock decode accepts */
		CHECK_ERR(c->name, sb_roundtrip(&sb, &out, NULL), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sb_roundtrip),
		cmocka_unit_test(test_sb_bytes_little_endian),
		cmocka_unit_test(test_sb_reserved_zero),
		cmocka_unit_test(test_sb_write_intent_bytes),
		cmocka_unit_test(test_wi_block),
		cmocka_unit_test(test_sb_encode_stamps_version),
		cmocka_unit_test(test_sb_any_flipped_byte),
		cmocka_unit_test(test_sb_raw_edits),
		cmocka_unit_test(test_sb_newer_minor),
		cmocka_unit_test(test_sb_slot_flags),
		cmocka_unit_test(test_sb_admin_inactive),
		cmocka_unit_test(test_sb_label_unterminated),
		cmocka_unit_test(test_sb_consistency),
		cmocka_unit_test(test_jhdr_roundtrip),
		cmocka_unit_test(test_jhdr_bytes),
		cmocka_unit_test(test_jhdr_corrupt),
		cmocka_unit_test(test_jhdr_nentries_limit),
		cmocka_unit_test(test_jhdr_direct_entries),
		cmocka_unit_test(test_block_csum),
		cmocka_unit_test(test_block_csum_never_zero),
		cmocka_unit_test(test_csum_entries),
		cmocka_unit_test(test_csum_block_seal),
		cmocka_unit_test(test_csum_block_zero),
		cmocka_unit_test(test_csum_block_seal_never_zero),
		cmocka_unit_test(test_layout_member),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
