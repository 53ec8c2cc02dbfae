/*
 * ondisk_fs: the one home of the filesystem's on-disk structures
 * (docs/FORMAT.md, "Filesystem", says the same byte by byte).
 *
 * Every multi-byte field is little-endian; the *_disk structs are the exact
 * bytes and are only touched through le16/le32/le64 accessors (fs_le*).
 * Every metadata block but the inode table starts with struct fs_bhdr and
 * is checksummed whole; each inode carries its own checksum.  Checksums are
 * XXH3-64 of the bytes with the checksum field zeroed, seeded with the
 * block number (or, for inodes, the inode number).
 *
 * Device layout (4 KiB blocks):
 *   0, 1            superblock, two copies
 *   journal_start   journal: one journal superblock, then the ring
 *   bbitmap_start   block bitmap (FS_BITS_PER_BITMAP blocks per block)
 *   data_start      data and every other metadata block (stripe aligned):
 *                   B+tree nodes, xattr value blocks, inode chunks (each a
 *                   block of FS_INODES_PER_BLOCK inodes, found through the
 *                   inode chunk map, a B+tree rooted in the superblock)
 */
#ifndef FS_ONDISK_FS_H
#define FS_ONDISK_FS_H

#include <stdint.h>
#include <stddef.h>
#include <assert.h>
#include <endian.h>

#define FS_BSIZE 4096u
#define FS_BSHIFT 12

#define FS_SB_MAGIC 0x5346534644494152ull      /* "RAIDFSFS" */
#define FS_BLK_MAGIC 0x4b4c4246u                /* "FBLK" */
/* 2.0: extended attributes in a B+tree per inode with values up to 64 KiB
 * in chains of value blocks; inodes in chunks allocated on demand (1.x: one
 * xattr block per inode, a fixed inode table and bitmap; refused). */
#define FS_VERSION_MAJOR 2
#define FS_VERSION_MINOR 0

/* Feature bits: none defined yet.  Unknown incompat bits refuse the mount,
 * unknown ro_compat bits allow only a read-only mount. */
#define FS_FEATURE_COMPAT_SUPP 0ull
#define FS_FEATURE_RO_COMPAT_SUPP 0ull
#define FS_FEATURE_INCOMPAT_SUPP 0ull

enum fs_sb_state {
	FS_STATE_CLEAN = 1,     /* unmounted cleanly: journal checkpointed */
	FS_STATE_MOUNTED = 2,   /* mounted read-write (or crashed) */
};

/* Types of header'd blocks (fs_bhdr.type). */
enum fs_btype {
	FS_BT_JSB = 1,          /* journal superblock */
	FS_BT_JDESC = 2,        /* journal descriptor */
	FS_BT_JCOMMIT = 3,      /* journal commit record */
	FS_BT_BBITMAP = 4,      /* block bitmap */
	/* 5: format 1's inode bitmap, no longer used */
	FS_BT_NODE = 6,         /* B+tree node (extents, directories, orphans) */
	/* 7: format 1's one-block xattr store, no longer used */
	FS_BT_XVALUE = 8,       /* a piece of a large xattr value */
};

/* Common header of every checksummed metadata block (32 bytes). */
struct fs_bhdr {
	uint32_t magic;         /* FS_BLK_MAGIC */
	uint16_t type;          /* enum fs_btype */
	uint16_t version;       /* FS_VERSION_MAJOR << 8 | FS_VERSION_MINOR */
	uint64_t csum;          /* XXH3-64(block, this field 0, seed blocknr) */
	uint64_t blocknr;       /* where the block belongs */
	uint64_t owner;         /* inode number, 0 for filesystem-wide */
};
static_assert(sizeof(struct fs_bhdr) == 32, "bhdr size");

/* ---- Superblock (blocks 0 and 1, identical but for csum) ---------------- */
struct fs_sb_disk {
	uint64_t magic;                 /* FS_SB_MAGIC */
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t block_size;            /* 4096 */
	uint64_t csum;                  /* XXH3-64, this field 0, seed: 0 or 1 */
	uint64_t feature_compat;
	uint64_t feature_ro_compat;
	uint64_t feature_incompat;      /* 48 */
	uint8_t uuid[16];
	char label[64];                 /* NUL-terminated, 128 */
	uint64_t blocks;                /* filesystem size in blocks */
	uint64_t inodes;                /* limit: numbers 1 .. inodes-1 may be
					   allocated (a multiple of 16) */
	uint64_t journal_start;
	uint64_t journal_blocks;        /* including the journal superblock */
	uint64_t bbitmap_start;
	uint64_t bbitmap_blocks;
	uint64_t ichunk_root;           /* inode chunk map B+tree root, 176 */
	uint32_t ichunk_depth;          /* its levels (at least 1) */
	uint32_t reserved1;             /* zero */
	uint64_t reserved2[2];          /* zero (format 1: inode table) */
	uint64_t data_start;
	uint32_t stripe_blocks;         /* allocator alignment at format time */
	uint32_t state;                 /* enum fs_sb_state, 220 */
	uint64_t orphan_root;           /* orphan B+tree root block, 0: empty */
	uint32_t orphan_depth;          /* levels of the orphan tree */
	uint32_t reserved0;
	uint64_t hash_seed;             /* directory name hash seed */
	uint64_t ctime_ns;              /* format time */
	uint64_t mtime_ns;              /* last mount */
	uint64_t wtime_ns;              /* last superblock write */
	uint64_t mount_count;           /* 280 */
	uint8_t reserved[4096 - 280];   /* zero */
};
static_assert(sizeof(struct fs_sb_disk) == FS_BSIZE, "sb size");
static_assert(offsetof(struct fs_sb_disk, uuid) == 48, "sb uuid");
static_assert(offsetof(struct fs_sb_disk, blocks) == 128, "sb blocks");
static_assert(offsetof(struct fs_sb_disk, ichunk_root) == 176, "sb ichunk");
static_assert(offsetof(struct fs_sb_disk, state) == 220, "sb state");
static_assert(offsetof(struct fs_sb_disk, reserved) == 280, "sb reserved");

/* ---- Journal ------------------------------------------------------------- */
/* Journal superblock: the first block of the journal region. */
struct fs_jsb_disk {
	struct fs_bhdr h;               /* type FS_BT_JSB */
	uint64_t start_seq;             /* first transaction to replay */
	uint64_t start_pos;             /* its ring position (0 .. ring-1) */
	uint8_t reserved[4096 - 48];
};
static_assert(sizeof(struct fs_jsb_disk) == FS_BSIZE, "jsb size");

struct fs_jentry_disk {
	uint64_t target;                /* home block of the copy */
	uint64_t csum;                  /* XXH3-64 of the copy, seed target */
};

#define FS_JDESC_MAX 253
/* Descriptor: names the home of the next count ring blocks. */
struct fs_jdesc_disk {
	struct fs_bhdr h;               /* FS_BT_JDESC, blocknr: its ring block */
	uint64_t seq;
	uint32_t count;
	uint32_t reserved0;
	struct fs_jentry_disk e[FS_JDESC_MAX];
};
static_assert(sizeof(struct fs_jdesc_disk) == FS_BSIZE, "jdesc size");

/* Commit record: the transaction is valid only if this block is. */
struct fs_jcommit_disk {
	struct fs_bhdr h;               /* type FS_BT_JCOMMIT */
	uint64_t seq;
	uint64_t nblocks;               /* copies in the transaction */
	uint64_t tx_csum;               /* XXH3-64 over every entry's csum */
	uint64_t commit_ns;
	uint8_t reserved[4096 - 64];
};
static_assert(sizeof(struct fs_jcommit_disk) == FS_BSIZE, "jcommit size");

/* ---- Bitmaps ------------------------------------------------------------- */
#define FS_BITMAP_HDR 32
#define FS_BITS_PER_BITMAP ((FS_BSIZE - FS_BITMAP_HDR) * 8)   /* 32512 */

/* ---- Inodes -------------------------------------------------------------- */
#define FS_INODE_SIZE 256
#define FS_INODES_PER_BLOCK (FS_BSIZE / FS_INODE_SIZE)
#define FS_INLINE_EXTENTS 3

/* fs_inode_disk.flags */
#define FS_IFLAG_EXTENT_TREE 0x1        /* map is a B+tree, not inline */
#define FS_IFLAG_IMMUTABLE 0x2          /* chattr +i (iflags.c) */
#define FS_IFLAG_APPEND 0x4             /* chattr +a */
#define FS_IFLAG_NODUMP 0x8             /* chattr +d */

struct fs_extent_disk {
	uint64_t lblk;                  /* first file block */
	uint64_t pblk;                  /* first device block */
	uint32_t len;                   /* blocks */
	uint32_t flags;                 /* FS_EXT_UNWRITTEN */
};
/* Allocated (by fallocate) but never written: reads as zeros. */
#define FS_EXT_UNWRITTEN 0x1
static_assert(sizeof(struct fs_extent_disk) == 24, "extent size");

struct fs_ts_disk {
	int64_t sec;
	uint32_t nsec;
	uint32_t reserved;
};

struct fs_inode_disk {
	uint16_t magic;                 /* FS_INODE_MAGIC when in use */
	uint16_t version;
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	uint32_t nlink;
	uint32_t flags;                 /* FS_IFLAG_* */
	uint64_t ino;                   /* self, 24 */
	uint64_t generation;
	uint64_t size;                  /* bytes */
	uint64_t blocks;                /* 4 KiB blocks allocated, all kinds */
	uint64_t rdev;
	uint64_t xattr_root;            /* xattr B+tree root, 0: none */
	uint64_t parent;                /* directories: the parent's inode */
	struct fs_ts_disk atime;        /* 80 */
	struct fs_ts_disk mtime;
	struct fs_ts_disk ctime;
	struct fs_ts_disk crtime;
	uint64_t map_root;              /* B+tree root when FS_IFLAG_EXTENT_TREE,
					   and directories' name tree */
	uint32_t map_depth;             /* tree levels, 0: empty */
	uint32_t nextents;              /* inline extents in use */
	struct fs_extent_disk ext[FS_INLINE_EXTENTS];   /* 160 */
	uint64_t dir_entries;           /* directories: entries, 232 */
	uint64_t csum;                  /* XXH3-64, this field 0, seed ino */
	uint32_t xattr_depth;           /* xattr tree levels, 0: empty */
	uint32_t reserved;              /* zero */
};
static_assert(sizeof(struct fs_inode_disk) == FS_INODE_SIZE, "inode size");
static_assert(offsetof(struct fs_inode_disk, atime) == 80, "inode atime");
static_assert(offsetof(struct fs_inode_disk, ext) == 160, "inode ext");
static_assert(offsetof(struct fs_inode_disk, csum) == 240, "inode csum");
static_assert(offsetof(struct fs_inode_disk, xattr_depth) == 248,
	      "inode xattr_depth");
#define FS_INODE_MAGIC 0x4e49           /* "IN" */

/* ---- B+tree nodes -------------------------------------------------------- */
/* Records start at FS_NODE_HDR; each starts with its le64 key.  Internal
 * nodes (level > 0) hold struct fs_bt_ptr_disk: child i covers keys
 * >= key i (the first key stands for "everything below key 1"). */
struct fs_node_disk {
	struct fs_bhdr h;               /* type FS_BT_NODE, owner: inode or 0 */
	uint16_t level;                 /* 0: leaf */
	uint16_t count;                 /* records in use */
	uint16_t rec_size;              /* bytes per record */
	uint16_t tree;                  /* enum fs_tree_kind */
	uint64_t reserved;
};
#define FS_NODE_HDR 48
static_assert(sizeof(struct fs_node_disk) == FS_NODE_HDR, "node hdr");

enum fs_tree_kind {
	FS_TREE_EXTENT = 1,
	FS_TREE_DIR = 2,
	FS_TREE_ORPHAN = 3,
	FS_TREE_XATTR = 4,
	FS_TREE_ICHUNK = 5,
};

struct fs_bt_ptr_disk {
	uint64_t key;
	uint64_t child;
};

/* Directory entry record, key = name hash with a collision index. */
struct fs_dirent_disk {
	uint64_t key;
	uint64_t ino;
	uint8_t type;                   /* DT_* */
	uint8_t name_len;
	char name[255];                 /* not NUL-terminated */
	uint8_t pad[7];
};
static_assert(sizeof(struct fs_dirent_disk) == 280, "dirent size");

/*
 * Inode chunk record, key = chunk number c: inodes 16c .. 16c+15 live in
 * block pblk (no header: each inode carries its checksum), bit i of used
 * set when inode 16c+i is in use (inode 0, bit 0 of chunk 0, always).
 * Chunks are numbered densely from 0 and never freed, so an inode number
 * always means the same slot and a free slot keeps its generation.
 */
struct fs_ichunk_disk {
	uint64_t key;
	uint64_t pblk;
	uint16_t used;
	uint16_t reserved0;
	uint32_t reserved1;
};
static_assert(sizeof(struct fs_ichunk_disk) == 24, "ichunk size");

/* Orphan record: the key is the inode number. */
struct fs_orphan_disk {
	uint64_t key;
	uint64_t reserved;
};

/* ---- Extended attributes: a B+tree per inode ---------------------------- */
/*
 * One record per attribute, in the tree rooted at the inode's xattr_root
 * (kind FS_TREE_XATTR, owner the inode), keyed as directory entries are:
 * (XXH3-64(name, hash_seed) & 0x7fffffffffffff00, at least 0x100) | index,
 * index 0..255 telling apart names whose hashes collide.  A value of up to
 * FS_XATTR_INLINE bytes lives in the record; a longer one (up to 64 KiB)
 * in a chain of value blocks, whose first block, count and checksum the
 * record holds (the checksum lives in the parent, as ZFS's).
 */
#define FS_XATTR_INLINE 112
#define FS_XREC_EXTERNAL 0x1            /* fs_xattr_rec_disk.flags */

struct fs_xattr_ext_disk {
	uint64_t first;                 /* first value block */
	uint32_t nblocks;               /* blocks in the chain */
	uint32_t reserved0;
	uint64_t csum;                  /* XXH3-64(value, seed: the key) */
	uint8_t reserved[FS_XATTR_INLINE - 24];
};

struct fs_xattr_rec_disk {
	uint64_t key;
	uint32_t value_len;             /* bytes */
	uint8_t name_len;               /* 1..255 */
	uint8_t flags;                  /* FS_XREC_EXTERNAL */
	uint16_t reserved;
	char name[255];                 /* full name, not NUL-terminated */
	uint8_t pad;                    /* 272 */
	union {
		uint8_t inline_value[FS_XATTR_INLINE];
		struct fs_xattr_ext_disk ext;
	} v;
};
static_assert(sizeof(struct fs_xattr_ext_disk) == FS_XATTR_INLINE, "xext");
static_assert(offsetof(struct fs_xattr_rec_disk, v) == 272, "xrec value");
static_assert(sizeof(struct fs_xattr_rec_disk) == 384, "xrec size");

/* Value block: FS_XVALUE_DATA bytes of the value after this header. */
struct fs_xvalue_disk {
	struct fs_bhdr h;               /* FS_BT_XVALUE, owner: inode */
	uint64_t next;                  /* next block of the chain, 0: last */
	uint32_t len;                   /* value bytes in this block */
	uint32_t index;                 /* 0, 1, ... along the chain */
};
#define FS_XVALUE_HDR 48
#define FS_XVALUE_DATA (FS_BSIZE - FS_XVALUE_HDR)
static_assert(sizeof(struct fs_xvalue_disk) == FS_XVALUE_HDR, "xvalue hdr");

/* Little-endian accessors: the only way fields are read and written. */
#define fs_le16(x) le16toh(x)
#define fs_le32(x) le32toh(x)
#define fs_le64(x) le64toh(x)
#define fs_cpu16(x) htole16(x)
#define fs_cpu32(x) htole32(x)
#define fs_cpu64(x) htole64(x)

#endif
