/*
 * ondisk: conversions between raidcore's on-disk blocks and their CPU form,
 * the block checksums, and the member layout.  No I/O, no state.
 *
 * Usage pattern:
 *   rc_layout_member(sb, dev_blocks)   at create: place the regions
 *   rc_sb_encode(sb, block)            before every superblock write
 *   rc_sb_decode(block, sb, &why)      after every superblock read
 *   rc_jhdr_encode / rc_jhdr_decode    journal record headers
 *   rc_block_csum, rc_csum_block_*     checksum table entries and blocks
 *
 * Encoders take CPU structs that the caller built and trust them (a broken
 * one is a bug and asserts); decoders take bytes from a device and trust
 * nothing.  docs/FORMAT.md is the byte-by-byte description; the asserts
 * below pin every offset it names.
 */
#include <errno.h>
#include <string.h>
#include <xxhash.h>
/* The runtime-dispatched entry points pick AVX2/AVX-512 when the CPU has
 * them: 2.5x the plain ones for 4 KiB blocks. */
#include <xxh_x86dispatch.h>
#include "geom.h"
#include "ondisk.h"

#define SB_CSUM_OFF offsetof(struct rc_sb_disk, checksum)
#define JHDR_CSUM_OFF offsetof(struct rc_jhdr_disk, checksum)
#define CSUM_TABLE_CSUM_OFF (RC_CSUM_PER_BLOCK * 8u)
#define DATA_ALIGN_BLOCKS 256ull        /* 1 MiB */
#define JOURNAL_DEFAULT_SHIFT 6         /* default journal: 1/64 of the device */
#define CHUNK_MAX_BLOCKS 256u           /* 1 MiB */

#define SB_OFF(f, off) static_assert(offsetof(struct rc_sb_disk, f) == (off), #f)
SB_OFF(magic, 0);
SB_OFF(version_major, 8);
SB_OFF(version_minor, 10);
SB_OFF(sb_size, 12);
SB_OFF(feature_compat, 16);
SB_OFF(feature_ro_compat, 24);
SB_OFF(feature_incompat, 32);
SB_OFF(array_uuid, 40);
SB_OFF(member_uuid, 56);
SB_OFF(role, 72);
SB_OFF(level, 76);
SB_OFF(layout, 80);
SB_OFF(chunk_blocks, 84);
SB_OFF(members, 88);
SB_OFF(nspares, 92);
SB_OFF(member_blocks, 96);
SB_OFF(data_offset, 104);
SB_OFF(journal_offset, 112);
SB_OFF(journal_blocks, 120);
SB_OFF(csum_offset, 128);
SB_OFF(csum_blocks, 136);
SB_OFF(events, 144);
SB_OFF(ctime_ns, 152);
SB_OFF(utime_ns, 160);
SB_OFF(array_state, 168);
SB_OFF(sb_copy, 172);
SB_OFF(journal_seq, 176);
SB_OFF(journal_tail, 184);
SB_OFF(array_blocks, 192);
SB_OFF(device_blocks, 200);
SB_OFF(label, 208);
SB_OFF(err_read, 272);
SB_OFF(err_write, 280);
SB_OFF(err_csum, 288);
SB_OFF(repaired, 296);
SB_OFF(array_flags, 304);
SB_OFF(reserved_flags, 308);
SB_OFF(admin, 312);
SB_OFF(admin.flags, 320);
SB_OFF(admin.scrub, 328);
SB_OFF(admin.last, 392);
SB_OFF(admin.rebuild_min_kib, 456);
SB_OFF(admin.rebuild_max_kib, 464);
SB_OFF(prev_utime_ns, 472);
SB_OFF(reserved0, 480);
SB_OFF(slots, 512);
SB_OFF(wi, 2048);
SB_OFF(reserved1, 2112);
SB_OFF(checksum, 4088);
static_assert(offsetof(struct rc_slot_disk, state) == 16, "slot state");
static_assert(offsetof(struct rc_slot_disk, flags) == 20, "slot flags");
static_assert(offsetof(struct rc_slot_disk, rebuild_pos) == 24, "slot pos");

#define WI_OFF(f, off) static_assert(offsetof(struct rc_wi_hdr_disk, f) == (off), #f)
WI_OFF(magic, 0);
WI_OFF(epoch, 8);
WI_OFF(base_events, 16);
WI_OFF(region_stripes, 24);
WI_OFF(nregions, 32);
WI_OFF(reserved, 40);
static_assert(offsetof(struct rc_wi_block_disk, epoch) == 24, "wi epoch");
static_assert(offsetof(struct rc_wi_block_disk, index) == 32, "wi index");
static_assert(offsetof(struct rc_wi_block_disk, checksum) == 4088, "wi csum");

#define JH_OFF(f, off) static_assert(offsetof(struct rc_jhdr_disk, f) == (off), #f)
JH_OFF(magic, 0);
JH_OFF(seq, 8);
JH_OFF(array_uuid, 16);
JH_OFF(role, 32);
JH_OFF(nentries, 36);
JH_OFF(participants, 40);
JH_OFF(ring_pos, 48);
JH_OFF(batch_end, 56);
JH_OFF(entries, 64);
JH_OFF(pad, 4080);
JH_OFF(checksum, 4088);
static_assert(sizeof(struct rc_jentry_disk) == 16, "jentry size");
static_assert(RC_SB_SLOTS == RC_MAX_MEMBERS + RC_MAX_SPARES, "slot count");
static_assert(RC_SB_SLOTS <= 64, "participants is a 64-bit mask");
static_assert(RC_JHDR_MAX_ENTRIES + 1 <= RC_MIN_JOURNAL_BLOCKS,
	      "a full record must fit in the smallest ring");

/* ---- helpers ------------------------------------------------------------- */

/* XXH3 of a block whose checksum field (8 bytes at csum_off) reads as zero. */
static uint64_t hdr_csum_compute(const void *block, size_t csum_off)
{
	uint8_t copy[RC_BLOCK_SIZE];

	memcpy(copy, block, RC_BLOCK_SIZE);
	memset(copy + csum_off, 0, sizeof(uint64_t));
	return XXH3_64bits(copy, RC_BLOCK_SIZE);
}

static uint64_t load_le64(const void *block, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)block + off, sizeof(v));
	return le64toh(v);
}

static bool is_power_of_two(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static uint64_t div_round_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

static bool chunk_is_valid(uint64_t chunk_blocks)
{
	return is_power_of_two(chunk_blocks) && chunk_blocks <= CHUNK_MAX_BLOCKS;
}

/* ---- superblock ---------------------------------------------------------- */

static void sb_slots_encode(const struct rc_slot *s, struct rc_slot_disk *d)
{
	for (int i = 0; i < RC_SB_SLOTS; i++) {
		memcpy(d[i].uuid, s[i].uuid, RC_UUID_SIZE);
		d[i].state = htole32((uint32_t)s[i].state);
		d[i].flags = htole32(s[i].flags);
		d[i].rebuild_pos = htole64(s[i].rebuild_pos);
	}
}

static void sb_slots_decode(const struct rc_slot_disk *d, struct rc_slot *s)
{
	for (int i = 0; i < RC_SB_SLOTS; i++) {
		memcpy(s[i].uuid, d[i].uuid, RC_UUID_SIZE);
		s[i].state = (enum rc_member_state)le32toh(d[i].state);
		s[i].flags = le32toh(d[i].flags);
		s[i].rebuild_pos = le64toh(d[i].rebuild_pos);
	}
}

static void scrub_rec_encode(const struct rc_scrub_record *r,
			     struct rc_scrub_rec_disk *d)
{
	d->start_ns = htole64(r->start_ns);
	d->end_ns = htole64(r->end_ns);
	d->stripes = htole64(r->stripes);
	d->csum_errors = htole64(r->csum_errors);
	d->read_errors = htole64(r->read_errors);
	d->repaired = htole64(r->repaired);
	d->unrecoverable = htole64(r->unrecoverable);
	d->parity_mismatches = htole64(r->parity_mismatches);
}

static void scrub_rec_decode(const struct rc_scrub_rec_disk *d,
			     struct rc_scrub_record *r)
{
	r->start_ns = le64toh(d->start_ns);
	r->end_ns = le64toh(d->end_ns);
	r->stripes = le64toh(d->stripes);
	r->csum_errors = le64toh(d->csum_errors);
	r->read_errors = le64toh(d->read_errors);
	r->repaired = le64toh(d->repaired);
	r->unrecoverable = le64toh(d->unrecoverable);
	r->parity_mismatches = le64toh(d->parity_mismatches);
}

static void sb_admin_encode(const struct rc_admin *ad, struct rc_admin_disk *d)
{
	d->scrub_pos = htole64(ad->scrub_active ? ad->scrub_pos : 0);
	d->flags = htole32(!ad->scrub_active ? 0 : ad->scrub_running ?
			   RC_ADMIN_SCRUB_ACTIVE | RC_ADMIN_SCRUB_RUNNING :
			   RC_ADMIN_SCRUB_ACTIVE);
	if (ad->scrub_active)
		scrub_rec_encode(&ad->scrub, &d->scrub);
	scrub_rec_encode(&ad->last, &d->last);
	d->rebuild_min_kib = htole64(ad->rebuild_min_kib);
	d->rebuild_max_kib = htole64(ad->rebuild_max_kib);
}

/* Unknown flag bits (a newer minor's) are dropped: they are compat. */
static void sb_admin_decode(const struct rc_admin_disk *d, struct rc_admin *ad)
{
	ad->scrub_active = le32toh(d->flags) & RC_ADMIN_SCRUB_ACTIVE;
	ad->scrub_running = ad->scrub_active &&
			    (le32toh(d->flags) & RC_ADMIN_SCRUB_RUNNING);
	ad->scrub_pos = ad->scrub_active ? le64toh(d->scrub_pos) : 0;
	if (ad->scrub_active)
		scrub_rec_decode(&d->scrub, &ad->scrub);
	scrub_rec_decode(&d->last, &ad->last);
	ad->rebuild_min_kib = le64toh(d->rebuild_min_kib);
	ad->rebuild_max_kib = le64toh(d->rebuild_max_kib);
}

/* Everything but the checksum; d must be zeroed by the caller. */
static void sb_fields_encode(const struct rc_sb *sb, struct rc_sb_disk *d)
{
	d->magic = htole64(RC_SB_MAGIC);
	/*
	 * The bytes written are exactly this version's: reserved space a newer
	 * minor may use is zeroed, so claiming that minor would be a lie.
	 */
	d->version_major = htole16(RC_SB_VERSION_MAJOR);
	d->version_minor = htole16(RC_SB_VERSION_MINOR);
	d->sb_size = htole32(RC_BLOCK_SIZE);
	/* This writer's bytes always carry the admin state (zeros: none). */
	d->feature_compat = htole64(sb->feature_compat | RC_FEATURE_COMPAT_ADMIN);
	d->feature_ro_compat = htole64(sb->feature_ro_compat);
	d->feature_incompat = htole64(sb->feature_incompat);
	memcpy(d->array_uuid, sb->array_uuid, RC_UUID_SIZE);
	memcpy(d->member_uuid, sb->member_uuid, RC_UUID_SIZE);
	d->role = htole32(sb->role);
	d->level = htole32((uint32_t)sb->level);
	d->layout = htole32((uint32_t)sb->layout);
	d->chunk_blocks = htole32(sb->chunk_blocks);
	d->members = htole32(sb->members);
	d->nspares = htole32(sb->nspares);
	d->member_blocks = htole64(sb->member_blocks);
	d->data_offset = htole64(sb->data_offset);
	d->journal_offset = htole64(sb->journal_offset);
	d->journal_blocks = htole64(sb->journal_blocks);
	d->csum_offset = htole64(sb->csum_offset);
	d->csum_blocks = htole64(sb->csum_blocks);
	d->events = htole64(sb->events);
	d->ctime_ns = htole64(sb->ctime_ns);
	d->utime_ns = htole64(sb->utime_ns);
	d->prev_utime_ns = htole64(sb->prev_utime_ns);
	d->array_state = htole32((uint32_t)sb->array_state);
	d->sb_copy = htole32(sb->sb_copy);
	d->journal_seq = htole64(sb->journal_seq);
	d->journal_tail = htole64(sb->journal_tail);
	d->array_blocks = htole64(sb->array_blocks);
	d->device_blocks = htole64(sb->device_blocks);
	/* Bytes after the NUL are padding and must be zero like the rest. */
	memcpy(d->label, sb->label, strnlen(sb->label, RC_LABEL_MAX - 1));
	d->err_read = htole64(sb->err_read);
	d->err_write = htole64(sb->err_write);
	d->err_csum = htole64(sb->err_csum);
	d->repaired = htole64(sb->repaired);
	d->array_flags = htole32(sb->array_flags);
	sb_admin_encode(&sb->admin, &d->admin);
	sb_slots_encode(sb->slots, d->slots);
	if (sb->wi.epoch) {
		d->wi.magic = htole64(RC_WI_HDR_MAGIC);
		d->wi.epoch = htole64(sb->wi.epoch);
		d->wi.base_events = htole64(sb->wi.base_events);
		d->wi.region_stripes = htole64(sb->wi.region_stripes);
		d->wi.nregions = htole64(sb->wi.nregions);
	}
}

void rc_sb_encode(const struct rc_sb *sb, void *block)
{
	struct rc_sb_disk d;

	memset(&d, 0, sizeof(d));
	sb_fields_encode(sb, &d);
	d.checksum = htole64(XXH3_64bits(&d, sizeof(d)));
	memcpy(block, &d, sizeof(d));
}

static void sb_fields_decode(const struct rc_sb_disk *d, struct rc_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->version_major = le16toh(d->version_major);
	sb->version_minor = le16toh(d->version_minor);
	sb->feature_compat = le64toh(d->feature_compat);
	sb->feature_ro_compat = le64toh(d->feature_ro_compat);
	sb->feature_incompat = le64toh(d->feature_incompat);
	memcpy(sb->array_uuid, d->array_uuid, RC_UUID_SIZE);
	memcpy(sb->member_uuid, d->member_uuid, RC_UUID_SIZE);
	sb->role = le32toh(d->role);
	sb->level = (enum rc_level)le32toh(d->level);
	sb->layout = (enum rc_layout)le32toh(d->layout);
	sb->chunk_blocks = le32toh(d->chunk_blocks);
	sb->members = le32toh(d->members);
	sb->nspares = le32toh(d->nspares);
	sb->member_blocks = le64toh(d->member_blocks);
	sb->data_offset = le64toh(d->data_offset);
	sb->journal_offset = le64toh(d->journal_offset);
	sb->journal_blocks = le64toh(d->journal_blocks);
	sb->csum_offset = le64toh(d->csum_offset);
	sb->csum_blocks = le64toh(d->csum_blocks);
	sb->events = le64toh(d->events);
	sb->ctime_ns = le64toh(d->ctime_ns);
	sb->utime_ns = le64toh(d->utime_ns);
	sb->prev_utime_ns = le64toh(d->prev_utime_ns);
	sb->array_state = (enum rc_array_state)le32toh(d->array_state);
	sb->sb_copy = le32toh(d->sb_copy);
	sb->journal_seq = le64toh(d->journal_seq);
	sb->journal_tail = le64toh(d->journal_tail);
	sb->array_blocks = le64toh(d->array_blocks);
	sb->device_blocks = le64toh(d->device_blocks);
	memcpy(sb->label, d->label, RC_LABEL_MAX);
	sb->err_read = le64toh(d->err_read);
	sb->err_write = le64toh(d->err_write);
	sb->err_csum = le64toh(d->err_csum);
	sb->repaired = le64toh(d->repaired);
	sb->array_flags = le32toh(d->array_flags);
	sb_admin_decode(&d->admin, &sb->admin);
	sb_slots_decode(d->slots, sb->slots);
	/* Anything but a whole header is no record (a full rebuild). */
	if (le64toh(d->wi.magic) == RC_WI_HDR_MAGIC) {
		sb->wi.epoch = le64toh(d->wi.epoch);
		sb->wi.base_events = le64toh(d->wi.base_events);
		sb->wi.region_stripes = le64toh(d->wi.region_stripes);
		sb->wi.nregions = le64toh(d->wi.nregions);
	}
}

/*
 * Version policy: a newer minor is readable (it only adds compat or
 * ro_compat features and uses reserved space); a newer major, or any
 * incompat bit we do not know, means the bytes may not mean what we think.
 */
static int sb_check_version(const struct rc_sb *sb, const char **why)
{
	if (sb->version_major > RC_SB_VERSION_MAJOR) {
		*why = "superblock major version is newer than this raidcore supports";
		return -EPROTONOSUPPORT;
	}
	if (sb->feature_incompat & ~RC_FEATURE_INCOMPAT_SUPP) {
		*why = "superblock has incompat feature bits this raidcore does not know";
		return -EPROTONOSUPPORT;
	}
	if (sb->version_major == 0) {
		*why = "superblock major version 0 does not exist";
		return -EINVAL;
	}
	if (sb->version_major < RC_SB_VERSION_MAJOR) {
		/* Format 1 trusted all-zero checksum tables ("never written"),
		 * which a blank or truncated member forges: not read at all. */
		*why = "array format 1 (an earlier raidfs) is not supported: "
		       "copy the data to an array made by this mkfs.raidfs";
		return -EPROTONOSUPPORT;
	}
	return 0;
}

/*
 * Level, layout, members, chunk and data size are judged by geom, so that
 * nothing decoded here can later trip one of geom's assertions.
 */
static int sb_check_geometry(const struct rc_sb *sb, const char **why)
{
	const struct rc_geom g = {
		.level = sb->level,
		.layout = sb->layout,
		.members = sb->members,
		.chunk_blocks = sb->chunk_blocks,
		.member_blocks = sb->member_blocks,
	};
	int err;

	err = rc_geom_validate(&g, why);
	if (err)
		return err;
	if (sb->nspares > RC_MAX_SPARES) {
		*why = "too many spares";
		return -EINVAL;
	}
	if (sb->role >= sb->members && sb->role != RC_ROLE_SPARE) {
		*why = "role is neither a raid slot nor spare";
		return -EINVAL;
	}
	return 0;
}

/*
 * Regions in order, without overlap, inside the device.  Written as
 * differences so that no field value, however large, can overflow a sum.
 */
static int sb_check_regions(const struct rc_sb *sb, const char **why)
{
	if (sb->journal_offset != RC_JOURNAL_OFFSET) {
		*why = "journal does not start at block 8";
		return -EINVAL;
	}
	if (sb->journal_blocks < RC_MIN_JOURNAL_BLOCKS) {
		*why = "journal is smaller than the minimum";
		return -EINVAL;
	}
	/* A tail at journal_blocks is the end of a record that filled the
	 * ring exactly: the next record starts at ring block 0. */
	if (sb->journal_tail > sb->journal_blocks) {
		*why = "journal tail lies outside the journal ring";
		return -EINVAL;
	}
	if (sb->csum_offset < sb->journal_offset ||
	    sb->csum_offset - sb->journal_offset < sb->journal_blocks) {
		*why = "checksum table does not follow the journal";
		return -EINVAL;
	}
	if (sb->csum_blocks < div_round_up(sb->member_blocks, RC_CSUM_PER_BLOCK)) {
		*why = "checksum table too small for the data region";
		return -EINVAL;
	}
	if (sb->data_offset < sb->csum_offset ||
	    sb->data_offset - sb->csum_offset < sb->csum_blocks) {
		*why = "data region does not follow the checksum table";
		return -EINVAL;
	}
	if (sb->device_blocks < RC_SB_TAIL_BLOCKS ||
	    sb->data_offset > sb->device_blocks - RC_SB_TAIL_BLOCKS ||
	    sb->member_blocks > sb->device_blocks - RC_SB_TAIL_BLOCKS -
				sb->data_offset) {
		*why = "data region reaches the superblocks at the end of the device";
		return -EINVAL;
	}
	return 0;
}

/*
 * A raid slot holds a raid state.  Entries past the raid slots describe
 * spares or nothing; readers go by nspares there, so any known state is
 * accepted (an unused entry may be all zero, which reads as ACTIVE).
 */
static bool slot_state_is_valid(uint32_t slot, uint32_t members,
				enum rc_member_state st)
{
	if (slot < members)
		return st == RC_MEMBER_ACTIVE || st == RC_MEMBER_FAULTY ||
		       st == RC_MEMBER_MISSING || st == RC_MEMBER_REBUILDING;
	return st <= RC_MEMBER_EMPTY;
}

static int sb_check_states(const struct rc_sb *sb, const char **why)
{
	if (sb->array_state != RC_STATE_CLEAN &&
	    sb->array_state != RC_STATE_ACTIVE) {
		*why = "unknown array state";
		return -EINVAL;
	}
	for (uint32_t i = 0; i < RC_SB_SLOTS; i++) {
		if (!slot_state_is_valid(i, sb->members, sb->slots[i].state)) {
			*why = "slot table entry has a state invalid for its slot";
			return -EINVAL;
		}
	}
	if (memchr(sb->label, 0, RC_LABEL_MAX) == NULL) {
		*why = "label is not NUL-terminated";
		return -EINVAL;
	}
	if (sb->sb_copy >= RC_SB_COPIES) {
		*why = "superblock copy number is not 0 .. 3";
		return -EINVAL;
	}
	return 0;
}

static int sb_check(const struct rc_sb_disk *d, const struct rc_sb *sb,
		    const char **why)
{
	int err;

	err = sb_check_version(sb, why);
	if (err)
		return err;
	if (le32toh(d->sb_size) != RC_BLOCK_SIZE) {
		*why = "superblock size is not 4096";
		return -EINVAL;
	}
	err = sb_check_geometry(sb, why);
	if (err)
		return err;
	err = sb_check_regions(sb, why);
	if (err)
		return err;
	return sb_check_states(sb, why);
}

int rc_sb_decode(const void *block, struct rc_sb *sb, const char **why)
{
	struct rc_sb_disk d;
	const char *reason = NULL;
	int err = 0;

	memcpy(&d, block, sizeof(d));
	if (le64toh(d.magic) != RC_SB_MAGIC) {
		reason = "no raidfs superblock";
		err = -ENODATA;
		goto out;
	}
	if (le64toh(d.checksum) != hdr_csum_compute(block, SB_CSUM_OFF)) {
		reason = "superblock checksum mismatch (torn or corrupt)";
		err = -EBADMSG;
		goto out;
	}
	/* Decoded before the checks so fsck can show what an -EINVAL held. */
	sb_fields_decode(&d, sb);
	err = sb_check(&d, sb, &reason);
out:
	if (why)
		*why = reason;
	return err;
}

/* ---- journal record header ----------------------------------------------- */

void rc_jhdr_encode(const struct rc_jhdr *h, void *block)
{
	struct rc_jhdr_disk d;

	assert(h->nentries <= RC_JHDR_MAX_ENTRIES);
	memset(&d, 0, sizeof(d));
	d.magic = htole64(RC_JHDR_MAGIC);
	d.seq = htole64(h->seq);
	memcpy(d.array_uuid, h->array_uuid, RC_UUID_SIZE);
	d.role = htole32(h->role);
	d.nentries = htole32(h->nentries);
	d.participants = htole64(h->participants);
	d.ring_pos = htole64(h->ring_pos);
	d.batch_end = htole64(h->batch_end);
	for (uint32_t i = 0; i < h->nentries; i++) {
		d.entries[i].target = htole64(h->target[i]);
		d.entries[i].csum = htole64(h->csum[i]);
	}
	d.checksum = htole64(XXH3_64bits(&d, sizeof(d)));
	memcpy(block, &d, sizeof(d));
}

int rc_jhdr_decode(const void *block, struct rc_jhdr *h)
{
	struct rc_jhdr_disk d;
	uint32_t n;

	memcpy(&d, block, sizeof(d));
	if (le64toh(d.magic) != RC_JHDR_MAGIC)
		return -ENODATA;
	if (le64toh(d.checksum) != hdr_csum_compute(block, JHDR_CSUM_OFF))
		return -EBADMSG;
	n = le32toh(d.nentries);
	if (n > RC_JHDR_MAX_ENTRIES)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	h->seq = le64toh(d.seq);
	memcpy(h->array_uuid, d.array_uuid, RC_UUID_SIZE);
	h->role = le32toh(d.role);
	h->nentries = n;
	h->participants = le64toh(d.participants);
	h->ring_pos = le64toh(d.ring_pos);
	h->batch_end = le64toh(d.batch_end);
	for (uint32_t i = 0; i < n; i++) {
		h->target[i] = le64toh(d.entries[i].target);
		h->csum[i] = le64toh(d.entries[i].csum);
		if (!(h->target[i] & RC_JENT_DIRECT)) {
			if (h->npayload != i)
				return -EINVAL;
			h->npayload++;
		}
	}
	return 0;
}

/* ---- block checksums ----------------------------------------------------- */

/* 0 is reserved for "never written", so a real hash of 0 becomes 1. */
static uint64_t csum_nonzero(uint64_t h)
{
	return h == RC_CSUM_UNWRITTEN ? 1 : h;
}

uint64_t rc_block_csum(const void *block, uint64_t member_block)
{
	return csum_nonzero(XXH3_64bits_withSeed_dispatch(block, RC_BLOCK_SIZE,
						 member_block));
}

uint64_t rc_table_seed(const uint8_t *array_uuid, const uint8_t *member_uuid)
{
	uint8_t ids[2 * RC_UUID_SIZE];

	memcpy(ids, array_uuid, RC_UUID_SIZE);
	memcpy(ids + RC_UUID_SIZE, member_uuid, RC_UUID_SIZE);
	return XXH3_64bits(ids, sizeof(ids));
}

static uint64_t csum_table_hash(const void *block, uint64_t seed,
				uint64_t member_block)
{
	/* the position is mixed in multiplicatively, so neighbouring blocks
	 * of one member never share a seed */
	return csum_nonzero(XXH3_64bits_withSeed_dispatch(block,
			CSUM_TABLE_CSUM_OFF,
			seed ^ (member_block * 0x9e3779b97f4a7c15ull)));
}

void rc_csum_block_seal(void *block, uint64_t seed, uint64_t member_block)
{
	uint64_t v = htole64(csum_table_hash(block, seed, member_block));

	memcpy((uint8_t *)block + CSUM_TABLE_CSUM_OFF, &v, sizeof(v));
}

bool rc_csum_block_ok(const void *block, uint64_t seed, uint64_t member_block)
{
	uint64_t stored = load_le64(block, CSUM_TABLE_CSUM_OFF);

	/* A seal is never 0: zeros on the media are not a table. */
	return stored != 0 && stored == csum_table_hash(block, seed, member_block);
}

void rc_csum_block_empty(void *block, uint64_t seed, uint64_t member_block)
{
	memset(block, 0, RC_BLOCK_SIZE);
	rc_csum_block_seal(block, seed, member_block);
}

/* ---- member layout ------------------------------------------------------- */

static int layout_journal_blocks(uint64_t want, uint64_t dev_blocks,
				 uint64_t *out)
{
	uint64_t j = want;

	if (j == 0) {
		j = dev_blocks >> JOURNAL_DEFAULT_SHIFT;
		if (j < RC_MIN_JOURNAL_BLOCKS)
			j = RC_MIN_JOURNAL_BLOCKS;
		if (j > RC_MAX_JOURNAL_BLOCKS)
			j = RC_MAX_JOURNAL_BLOCKS;
	}
	if (j < RC_MIN_JOURNAL_BLOCKS || j > RC_MAX_JOURNAL_BLOCKS)
		return -EINVAL;
	*out = j;
	return 0;
}

/* Table blocks that cover the data region when it starts at data_off. */
static uint64_t layout_csum_blocks(uint64_t dev_blocks, uint64_t data_off,
				  uint32_t chunk_blocks)
{
	uint64_t data = (dev_blocks - data_off) / chunk_blocks * chunk_blocks;

	return div_round_up(data, RC_CSUM_PER_BLOCK);
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return div_round_up(x, a) * a;
}

int rc_layout_member(struct rc_sb *sb, uint64_t device_blocks)
{
	uint64_t journal, csum_off, data_off, mblocks, dev_blocks;
	uint32_t chunk = sb->chunk_blocks;
	int err;

	if (!chunk_is_valid(chunk))
		return -EINVAL;
	/* the last blocks hold superblock copies 2 and 3 */
	if (device_blocks <= RC_SB_TAIL_BLOCKS)
		return -ENOSPC;
	dev_blocks = device_blocks - RC_SB_TAIL_BLOCKS;
	err = layout_journal_blocks(sb->journal_blocks, dev_blocks, &journal);
	if (err)
		return err;
	csum_off = RC_JOURNAL_OFFSET + journal;
	if (dev_blocks > UINT64_MAX / 2 || dev_blocks <= csum_off)
		return -ENOSPC;
	/*
	 * c table blocks cover 511 c data blocks, so table and data share the
	 * rest of the device when 512 c >= rest: a start that always fits.
	 * Rounding the data down to chunks can make it fit one alignment unit
	 * earlier; step back while it does, so no MiB is wasted.
	 */
	data_off = align_up(csum_off + div_round_up(dev_blocks - csum_off,
						    RC_CSUM_PER_BLOCK + 1),
			    DATA_ALIGN_BLOCKS);
	if (data_off >= dev_blocks)
		return -ENOSPC;
	while (data_off - DATA_ALIGN_BLOCKS >= csum_off +
	       layout_csum_blocks(dev_blocks, data_off - DATA_ALIGN_BLOCKS, chunk))
		data_off -= DATA_ALIGN_BLOCKS;
	mblocks = (dev_blocks - data_off) / chunk * chunk;
	if (mblocks < chunk)
		return -ENOSPC;
	sb->journal_offset = RC_JOURNAL_OFFSET;
	sb->journal_blocks = journal;
	sb->csum_offset = csum_off;
	sb->csum_blocks = div_round_up(mblocks, RC_CSUM_PER_BLOCK);
	sb->data_offset = data_off;
	sb->member_blocks = mblocks;
	sb->device_blocks = device_blocks;
	return 0;
}

/* ---- write-intent bitmap blocks ------------------------------------------ */

void rc_wi_block_encode(const uint8_t *array_uuid, uint64_t epoch,
			uint32_t index, const uint64_t *bits, void *block)
{
	struct rc_wi_block_disk d;
	uint64_t first = (uint64_t)index * RC_WI_BITS_BYTES;

	memset(&d, 0, sizeof(d));
	d.magic = htole64(RC_WI_BLK_MAGIC);
	memcpy(d.array_uuid, array_uuid, RC_UUID_SIZE);
	d.epoch = htole64(epoch);
	d.index = htole32(index);
	for (uint64_t j = 0; j < RC_WI_BITS_BYTES; j++)
		d.bits[j] = (uint8_t)(bits[(first + j) / 8] >> ((first + j) % 8 * 8));
	d.checksum = htole64(XXH3_64bits(&d, sizeof(d)));
	memcpy(block, &d, sizeof(d));
}

int rc_wi_block_merge(const void *block, const uint8_t *array_uuid,
		      uint64_t epoch, uint32_t index, uint64_t *bits)
{
	struct rc_wi_block_disk d;
	uint64_t sum, first = (uint64_t)index * RC_WI_BITS_BYTES;

	memcpy(&d, block, sizeof(d));
	sum = le64toh(d.checksum);
	d.checksum = 0;
	if (sum != XXH3_64bits(&d, sizeof(d)) ||
	    le64toh(d.magic) != RC_WI_BLK_MAGIC ||
	    memcmp(d.array_uuid, array_uuid, RC_UUID_SIZE) ||
	    le64toh(d.epoch) != epoch || le32toh(d.index) != index)
		return -EBADMSG;
	for (uint64_t j = 0; j < RC_WI_BITS_BYTES; j++)
		bits[(first + j) / 8] |= (uint64_t)d.bits[j] << ((first + j) % 8 * 8);
	return 0;
}
