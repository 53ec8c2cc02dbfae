/*
 * ondisk: the one home of raidcore's on-disk structures (docs/FORMAT.md
 * says the same byte by byte).  Every multi-byte field is little-endian;
 * the *_disk structs are the exact bytes, the others the CPU form, and
 * rc_*_encode / rc_*_decode are the only conversions.
 *
 * Member layout (in 4 KiB blocks), format 2:
 *   0                 superblock copy 0
 *   1                 superblock copy 1
 *   2 .. 7            the write-intent record's bitmap (RC_WI_*): which
 *                     regions were written while a slot was not current
 *   journal_offset    write journal ring, journal_blocks long
 *   csum_offset       block checksum table, csum_blocks long
 *   data_offset       data region, member_blocks long (1 MiB aligned)
 *   D - 2, D - 1      superblock copies 2 and 3 (D: the device's blocks)
 * so that no single damaged range of a member can erase its identity.
 */
#ifndef RC_ONDISK_H
#define RC_ONDISK_H

#include <stdint.h>
#include <stddef.h>
#include <assert.h>
#include <endian.h>
#include "raidcore.h"

#define RC_SB_MAGIC 0x424d534644494152ull      /* "RAIDFSMB" */
#define RC_JHDR_MAGIC 0x31304c4e524a4352ull    /* "RCJRNL01" */
#define RC_SB_VERSION_MAJOR 2
#define RC_SB_VERSION_MINOR 7                  /* 2.1: the write-intent record,
						   slot flags (catch-up, REPLACING),
						   the admin state; 2.2: direct
						   stripes in the journal; 2.3:
						   direct stripes at RAID 0, 1, 10;
						   2.4: the DAMAGED slot flag;
						   2.5: the REMOVED slot flag;
						   2.6: the UNVERIFIED slot flag;
						   2.7: prev_utime_ns */
#define RC_SB_COPIES 4                         /* 2 at each end */
#define RC_SB_HEAD_COPIES 2
#define RC_SB_TAIL_BLOCKS 2                    /* copies 2, 3: the last blocks */
#define RC_SB_SLOTS 48                         /* RC_MAX_MEMBERS + RC_MAX_SPARES */
#define RC_ROLE_SPARE 0xffffffffu
#define RC_JOURNAL_OFFSET 8                    /* blocks */

/* Array flags (array_flags, the same on every member). */
#define RC_AF_ERRORS 1u         /* errors were seen (checksum, read, write,
				   unrecoverable) since the last check that
				   found the array clean: fsck must not take
				   its clean fast path */

/* Feature bits.  Unknown incompat bits refuse assembly, unknown ro_compat
 * bits force read-only, unknown compat bits are ignored. */
/* The array keeps a write-intent record (docs/FORMAT.md "Write-intent
 * record").  compat: older code ignores the record and, because it writes
 * its superblocks with reserved1 zeroed, erases the header that makes the
 * record believed - it cannot make a stale record look current. */
#define RC_FEATURE_COMPAT_WRITE_INTENT 1ull
#define RC_FEATURE_COMPAT_REPLACE 2ull  /* 2.1: a spare entry carries
					   RC_SLOT_F_REPLACING (set while an
					   online replacement runs) */
/* Bytes 312..471 hold the admin state (struct rc_admin_disk): an older
 * raidcore ignores them and, writing its own superblocks, zeroes them -
 * the state is then forgotten, nothing else. */
#define RC_FEATURE_COMPAT_ADMIN 4ull
#define RC_FEATURE_COMPAT_SUPP (RC_FEATURE_COMPAT_WRITE_INTENT | \
				RC_FEATURE_COMPAT_REPLACE | \
				RC_FEATURE_COMPAT_ADMIN)
#define RC_FEATURE_RO_COMPAT_SUPP 0ull
/* 2.2: the journal may hold direct-stripe entries (RC_JENT_DIRECT): set
 * by the checkpoint that makes the array active, cleared by the clean one
 * (the journal is empty then), so an older raidcore refuses only an
 * array it would misreplay. */
#define RC_FEATURE_INCOMPAT_DIRECT 1ull
/* 2.3: ... and they may be of a level without parity (RAID 0, 1, 10),
 * whose torn stripes a 2.2 raidcore cannot settle: set and cleared with
 * DIRECT at those levels. */
#define RC_FEATURE_INCOMPAT_DIRECT_NOPARITY 2ull
#define RC_FEATURE_INCOMPAT_SUPP (RC_FEATURE_INCOMPAT_DIRECT | \
				  RC_FEATURE_INCOMPAT_DIRECT_NOPARITY)

enum rc_array_state {
	RC_STATE_CLEAN = 0,     /* closed cleanly: the journal is empty */
	RC_STATE_ACTIVE = 1,    /* assembled read-write: may need replay */
};

struct rc_slot_disk {
	uint8_t uuid[16];       /* member uuid of the device in this slot */
	uint32_t state;         /* enum rc_member_state */
	uint32_t flags;         /* RC_SLOT_CATCHUP on a raid slot,
				   RC_SLOT_F_* on a spare entry */
	uint64_t rebuild_pos;   /* stripes rebuilt, while REBUILDING; stripes
				   copied, on a REPLACING spare entry */
};
/* Slot flags (2.1), disjoint bits.  On a spare entry: the spare is the
 * target of an online replacement of raid slot (flags & RC_SLOT_F_TARGET),
 * filled while that slot's device serves (replace.c).  A 2.0 reader
 * ignores flags and sees an ordinary spare, which is safe.  On a raid slot
 * that is REBUILDING: RC_SLOT_CATCHUP, only the regions the write-intent
 * record names are rebuilt (the member returned); clear: every stripe. */
#define RC_SLOT_F_TARGET 0xffu
#define RC_SLOT_F_REPLACING 0x100u
#define RC_SLOT_CATCHUP 0x200u
/* On a raid slot that is FAULTY or MISSING (2.4): its member was faulted
 * for what it held or did not take (read, checksum or write errors, a
 * lie, shrinking), not failed by request: its device comes back only by
 * a full rebuild, never as a catch-up (the write-intent record starts
 * after the writes it may lack, and cannot say where it is damaged).  An
 * older reader ignores it and may catch such a member up, as before. */
#define RC_SLOT_DAMAGED 0x400u
/* On a raid slot that is MISSING (2.5): an administrator removed its
 * member (rc_member_remove, md's --remove): that device comes back only
 * when an administrator adds it (rc_member_readd), never by itself at an
 * assembly.  An older reader ignores it (catches the member up, as
 * before). */
#define RC_SLOT_REMOVED 0x800u
/* On an active raid slot (2.6): its member was found damaged (superblock
 * copies invalid, old or unreadable) and no repairing scrub of the whole
 * array has verified it since: it is not counted on as redundancy, and
 * the next mount starts that scrub again from stripe 0.  An older reader
 * ignores it (trusts the member, as before). */
#define RC_SLOT_UNVERIFIED 0x1000u
static_assert(sizeof(struct rc_slot_disk) == 32, "slot size");

/*
 * The write-intent record's header, in the superblock (bytes 2048..2111):
 * while some slot is not current, every region of region_stripes stripes
 * written since events base_events has its bit set in the bitmap blocks
 * (member blocks 2 .. 7, identical on every active member, tagged with
 * epoch).  All zero: no record.  Covered by the superblock checksum.
 */
#define RC_WI_HDR_MAGIC 0x3152444849574352ull  /* "RCWIHDR1" */
struct rc_wi_hdr_disk {
	uint64_t magic;                 /* RC_WI_HDR_MAGIC */
	uint64_t epoch;                 /* this record's id, never 0 */
	uint64_t base_events;           /* members at these events or later
					   are covered */
	uint64_t region_stripes;        /* stripes per bit */
	uint64_t nregions;              /* bits in use */
	uint8_t reserved[24];           /* zero */
};
static_assert(sizeof(struct rc_wi_hdr_disk) == 64, "wi header size");

/* A scrub's counts (docs/FORMAT.md, "Admin state"). */
struct rc_scrub_rec_disk {
	uint64_t start_ns;              /* CLOCK_REALTIME; 0: no such scrub */
	uint64_t end_ns;                /* 0 while it is in progress */
	uint64_t stripes;               /* stripes checked */
	uint64_t csum_errors;
	uint64_t read_errors;
	uint64_t repaired;              /* blocks rewritten from redundancy */
	uint64_t unrecoverable;         /* blocks that could not be established */
	uint64_t parity_mismatches;
};
static_assert(sizeof(struct rc_scrub_rec_disk) == 64, "scrub rec size");

/* What an administrator set and what the online scrub did, kept across
 * mounts; the same on every member (the array's, like the slot table). */
struct rc_admin_disk {
	uint64_t scrub_pos;             /* stripes done by the scrub in
					   progress (RC_ADMIN_SCRUB_ACTIVE) */
	uint32_t flags;                 /* RC_ADMIN_* */
	uint32_t reserved;              /* zero */
	struct rc_scrub_rec_disk scrub; /* the scrub in progress, so far */
	struct rc_scrub_rec_disk last;  /* the last one that went through */
	uint64_t rebuild_min_kib;       /* rc_array_set_rebuild_speed; 0: none */
	uint64_t rebuild_max_kib;
};
static_assert(sizeof(struct rc_admin_disk) == 160, "admin size");
#define RC_ADMIN_SCRUB_ACTIVE 1u        /* a scrub was started and has not
					   gone through: resumes at scrub_pos */
#define RC_ADMIN_SCRUB_RUNNING 2u       /* ... and was running at unmount:
					   resumed at the next mount */

struct rc_sb_disk {
	uint64_t magic;
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t sb_size;               /* 4096 */
	uint64_t feature_compat;
	uint64_t feature_ro_compat;
	uint64_t feature_incompat;
	uint8_t array_uuid[16];
	uint8_t member_uuid[16];
	uint32_t role;                  /* slot, or RC_ROLE_SPARE */
	uint32_t level;
	uint32_t layout;
	uint32_t chunk_blocks;
	uint32_t members;
	uint32_t nspares;
	uint64_t member_blocks;         /* data-region blocks */
	uint64_t data_offset;           /* blocks */
	uint64_t journal_offset;        /* blocks */
	uint64_t journal_blocks;
	uint64_t csum_offset;           /* blocks */
	uint64_t csum_blocks;
	uint64_t events;
	uint64_t ctime_ns;              /* creation, ns since the epoch */
	uint64_t utime_ns;              /* the update's time */
	uint32_t array_state;           /* enum rc_array_state */
	uint32_t sb_copy;               /* 0 or 1 */
	uint64_t journal_seq;           /* last checkpointed transaction */
	uint64_t journal_tail;          /* ring block where journal_seq+1 starts */
	uint64_t array_blocks;          /* logical capacity */
	uint64_t device_blocks;         /* member device size at the last write */
	char label[RC_LABEL_MAX];
	uint64_t err_read;              /* this device: reads that failed */
	uint64_t err_write;             /* ... writes that failed */
	uint64_t err_csum;              /* ... blocks that failed their checksum */
	uint64_t repaired;              /* ... blocks rewritten from redundancy */
	uint32_t array_flags;           /* RC_AF_* */
	uint32_t reserved_flags;        /* zero */
	struct rc_admin_disk admin;     /* RC_FEATURE_COMPAT_ADMIN */
	uint64_t prev_utime_ns;         /* 2.7: the update before's time */
	uint8_t reserved0[32];
	struct rc_slot_disk slots[RC_SB_SLOTS];
	struct rc_wi_hdr_disk wi;       /* the write-intent record, or zeros */
	uint8_t reserved1[1976];
	uint64_t checksum;              /* XXH3-64 of the 4096 bytes, this field zero */
};
static_assert(sizeof(struct rc_sb_disk) == RC_BLOCK_SIZE, "sb size");
static_assert(offsetof(struct rc_sb_disk, label) == 208, "sb label");
static_assert(offsetof(struct rc_sb_disk, admin) == 312, "sb admin");
static_assert(offsetof(struct rc_sb_disk, slots) == 512, "sb slots");
static_assert(offsetof(struct rc_sb_disk, wi) == 2048, "sb wi");
static_assert(offsetof(struct rc_sb_disk, checksum) == 4088, "sb csum");

struct rc_slot {
	uint8_t uuid[RC_UUID_SIZE];
	enum rc_member_state state;
	uint32_t flags;                 /* RC_SLOT_CATCHUP, RC_SLOT_F_* */
	uint64_t rebuild_pos;
};

/* CPU form of the write-intent header; epoch 0: no record. */
struct rc_wi_hdr {
	uint64_t epoch, base_events, region_stripes, nregions;
};

/* CPU form of the superblock. */
struct rc_sb {
	uint16_t version_major, version_minor;
	uint64_t feature_compat, feature_ro_compat, feature_incompat;
	uint8_t array_uuid[RC_UUID_SIZE];
	uint8_t member_uuid[RC_UUID_SIZE];
	uint32_t role;
	enum rc_level level;
	enum rc_layout layout;
	uint32_t chunk_blocks;
	uint32_t members;
	uint32_t nspares;
	uint64_t member_blocks, data_offset;
	uint64_t journal_offset, journal_blocks;
	uint64_t csum_offset, csum_blocks;
	uint64_t events;
	uint64_t ctime_ns, utime_ns;
	uint64_t prev_utime_ns;         /* utime_ns of the update before; 0:
					   not known (written before 2.7) */
	enum rc_array_state array_state;
	uint32_t sb_copy;
	uint64_t journal_seq, journal_tail;
	uint64_t array_blocks, device_blocks;
	char label[RC_LABEL_MAX];
	uint64_t err_read, err_write, err_csum, repaired;   /* this device */
	uint32_t array_flags;
	struct rc_admin admin;
	struct rc_slot slots[RC_SB_SLOTS];
	struct rc_wi_hdr wi;
};

/* Member block of superblock copy c on a device of dev_blocks. */
static inline uint64_t rc_sb_copy_block(uint32_t c, uint64_t dev_blocks)
{
	return c < RC_SB_HEAD_COPIES ? c :
	       dev_blocks - RC_SB_COPIES + c;
}

void rc_sb_encode(const struct rc_sb *sb, void *block);
/*
 * Decodes and checks one superblock copy.  Returns 0, or:
 *   -ENODATA           no raidcore magic: not a member
 *   -EBADMSG           checksum mismatch (torn or corrupt)
 *   -EPROTONOSUPPORT   newer major version or unknown incompat features
 *   -EINVAL            fields that contradict each other
 * and a reason in why (a static string).
 */
int rc_sb_decode(const void *block, struct rc_sb *sb, const char **why);

/*
 * Write-intent bitmap blocks: member blocks RC_WI_FIRST_BLOCK ..
 * + RC_WI_BLOCKS - 1.  Block i holds the bits of regions
 * [i * RC_WI_BITS_PER_BLOCK, (i + 1) * RC_WI_BITS_PER_BLOCK), region r at
 * bit r % 8 of byte r / 8 of bits[]; it is believed only when its
 * checksum holds and its array uuid, epoch and index are the header's.
 */
#define RC_WI_FIRST_BLOCK 2
#define RC_WI_BLOCKS 6
#define RC_WI_BLK_MAGIC 0x3150414d49574352ull  /* "RCWIMAP1" */
#define RC_WI_BITS_BYTES 4048
#define RC_WI_BITS_PER_BLOCK (RC_WI_BITS_BYTES * 8)
#define RC_WI_MAX_REGIONS ((uint64_t)RC_WI_BLOCKS * RC_WI_BITS_PER_BLOCK)

struct rc_wi_block_disk {
	uint64_t magic;                 /* RC_WI_BLK_MAGIC */
	uint8_t array_uuid[16];
	uint64_t epoch;                 /* the header's */
	uint32_t index;                 /* 0 .. RC_WI_BLOCKS - 1 */
	uint32_t reserved;              /* zero */
	uint8_t bits[RC_WI_BITS_BYTES];
	uint64_t checksum;              /* XXH3-64, this field zero */
};
static_assert(sizeof(struct rc_wi_block_disk) == RC_BLOCK_SIZE, "wi block");
static_assert(offsetof(struct rc_wi_block_disk, bits) == 40, "wi bits");

/* Encodes bitmap block index of the record epoch from bits (the whole
 * bitmap, RC_WI_MAX_REGIONS bits, as uint64_t words). */
void rc_wi_block_encode(const uint8_t *array_uuid, uint64_t epoch,
			uint32_t index, const uint64_t *bits, void *block);
/* ORs a bitmap block into bits; -EBADMSG when it is not block index of
 * record epoch of the array (checksum, magic, uuid, epoch, index). */
int rc_wi_block_merge(const void *block, const uint8_t *array_uuid,
		      uint64_t epoch, uint32_t index, uint64_t *bits);

/*
 * Journal record header: the first block of a record in a member's ring.
 * payload[i] (the i-th block after the header) belongs at member block
 * entries[i].target (absolute, in blocks).  A transaction is one record on
 * each participating member, all with the same seq.  A commit batch is the
 * run of transactions seq .. batch_end written before one flush; replay
 * applies a batch only when all of its transactions are complete, because
 * a batch may split one stripe's new columns over several transactions.
 */
#define RC_JHDR_MAX_ENTRIES 251
/* An entry whose target has this bit names a stripe (the low 63 bits)
 * written in place without a journal copy (a direct stripe: docs/DESIGN.md
 * "Direct stripes"); it has no payload block and csum 0.  Such entries
 * follow every payload entry of their record. */
#define RC_JENT_DIRECT (1ull << 63)

struct rc_jentry_disk {
	uint64_t target;                /* absolute member block, or
					   RC_JENT_DIRECT | stripe */
	uint64_t csum;                  /* rc_block_csum(payload, target) */
};

struct rc_jhdr_disk {
	uint64_t magic;
	uint64_t seq;
	uint8_t array_uuid[16];
	uint32_t role;                  /* slot of the member that holds it */
	uint32_t nentries;
	uint64_t participants;          /* bit i: slot i has a record for seq */
	uint64_t ring_pos;              /* where this header sits in the ring */
	uint64_t batch_end;             /* last seq of this commit batch */
	struct rc_jentry_disk entries[RC_JHDR_MAX_ENTRIES];
	uint64_t pad;
	uint64_t checksum;              /* XXH3-64, this field zero */
};
static_assert(sizeof(struct rc_jhdr_disk) == RC_BLOCK_SIZE, "jhdr size");
static_assert(offsetof(struct rc_jhdr_disk, entries) == 64, "jhdr entries");

struct rc_jhdr {
	uint64_t seq;
	uint8_t array_uuid[RC_UUID_SIZE];
	uint32_t role;
	uint32_t nentries;
	uint64_t participants;
	uint64_t ring_pos;
	uint64_t batch_end;
	uint64_t target[RC_JHDR_MAX_ENTRIES];
	uint64_t csum[RC_JHDR_MAX_ENTRIES];
	uint32_t npayload;              /* decoded: the entries before the
					   first direct one, payload blocks */
};

void rc_jhdr_encode(const struct rc_jhdr *h, void *block);
/* 0, -ENODATA (no magic), -EBADMSG (checksum), -EINVAL (nentries, or a
 * payload entry after a direct one). */
int rc_jhdr_decode(const void *block, struct rc_jhdr *h);

/*
 * Block checksums: XXH3-64 of the 4 KiB block seeded with its absolute
 * member block number (so a misdirected write is caught), with 0 mapped to
 * 1, because 0 in the table means "never written: reads as zeros".
 *
 * The checksum table: table block i covers data-region blocks
 * [i * RC_CSUM_PER_BLOCK, (i + 1) * RC_CSUM_PER_BLOCK); entry j sits at byte
 * 8 * j; the last 8 bytes are the seal: XXH3 of the first 4088 bytes seeded
 * with the member's table seed (rc_table_seed: the array's and the
 * member's uuids) plus the table block's absolute member block number,
 * never 0.  So a block of zeros (a blank or truncated device), garbage, or
 * a table block of another member, array or position never passes: what a
 * table says is believed only from a sealed block.  Creation writes every
 * table block sealed, its entries 0.
 */
#define RC_CSUM_PER_BLOCK 511
#define RC_CSUM_UNWRITTEN 0ull
/* The entry of a block a rebuild or a replacement could not reconstruct
 * (more columns lost than the level tolerates): it matches no block, so
 * the block reads as an I/O error until written or repaired from
 * redundancy; a mismatch against it is that known loss, not an error of
 * the device (FORMAT.md, "Checksum table"). */
#define RC_CSUM_POISON 0xdeadbeefdeadbeefull

uint64_t rc_block_csum(const void *block, uint64_t member_block);
/* The seed of one member's table seals. */
uint64_t rc_table_seed(const uint8_t *array_uuid, const uint8_t *member_uuid);
/* Seals a table block (sets its last 8 bytes). */
void rc_csum_block_seal(void *block, uint64_t seed, uint64_t member_block);
/* true when the table block's seal holds (never for a zero seal). */
bool rc_csum_block_ok(const void *block, uint64_t seed, uint64_t member_block);
/* A sealed table block with every entry 0 (nothing written). */
void rc_csum_block_empty(void *block, uint64_t seed, uint64_t member_block);
static inline uint64_t rc_csum_get(const void *block, uint32_t j)
{
	uint64_t v;

	__builtin_memcpy(&v, (const char *)block + 8 * j, 8);
	return le64toh(v);
}

static inline void rc_csum_set(void *block, uint32_t j, uint64_t csum)
{
	uint64_t v = htole64(csum);

	__builtin_memcpy((char *)block + 8 * j, &v, 8);
}

/*
 * Member layout for a device of dev_blocks with the given geometry inputs.
 * Fills the offsets and member_blocks of sb (rounded down to chunk_blocks).
 * Returns -ENOSPC when the device is too small for any data.
 */
int rc_layout_member(struct rc_sb *sb, uint64_t dev_blocks);

#define RC_MIN_JOURNAL_BLOCKS 256ull     /* 1 MiB */
#define RC_MAX_JOURNAL_BLOCKS 32768ull   /* 128 MiB */

#endif
