/*
 * repair_int: what fs_repair_scan (repair_scan.c) leaves for
 * fs_repair_apply (repair_apply.c) and the damage report (repair.c).
 */
#ifndef FS_REPAIR_INT_H
#define FS_REPAIR_INT_H

#include "fs_int.h"
#include "repair.h"

/* Per-inode state: what the table holds, then what the walk found. */
enum {
	RP_FREE = 0,            /* magic 0 */
	RP_VALID = 1,           /* in use, checksum good */
	RP_BAD = 2,             /* in use, damaged */
	RP_KIND = 3,
	RP_MAPBAD = 0x4,        /* its map is being emptied */
	RP_REACHED = 0x10,      /* named by a reachable directory (or root) */
	RP_ORPHAN = 0x20,       /* on the orphan list */
	RP_LOST = 0x40,         /* valid, unreachable */
	RP_NAMED_BY_LOST = 0x80,/* named by an unreachable directory */
};

enum rp_fix_kind {
	RP_FIX_CLEAR,           /* damaged inode: free its slot */
	RP_FIX_MAP,             /* empty an unreadable map (and/or xattrs) */
	RP_FIX_COUNTS,          /* nlink, blocks, entries, parent */
	RP_FIX_DANGLING,        /* remove an entry (by key) */
	RP_FIX_TYPE,            /* correct an entry's type */
	RP_FIX_REKEY,           /* an entry under the wrong key: re-insert */
	RP_FIX_LOST,            /* link into lost+found */
	RP_FIX_ROOT,            /* the root directory made anew, empty */
};

struct rp_fix {
	enum rp_fix_kind kind;
	uint64_t ino;           /* the inode, or the directory of an entry */
	unsigned what;          /* MAP: 1 map, 2 xattr tree, 4 the map
				   rebuilt from recs */
	uint64_t xblocks;       /* MAP: blocks of the xattrs, when readable */
	void *recs;             /* MAP with 4: the records that verified
				   (struct fs_dirent_disk or fs_extent_disk:
				   the inode's kind says), malloc'd */
	size_t nrecs;
	struct fs_dirent_disk rec;      /* entry fixes: the entry as found */
};

struct fs_repair {
	struct fs *fs;
	fs_repair_log_t log;
	void *log_arg;
	uint64_t nblocks, ninodes;
	uint8_t *used;          /* bit per block */
	uint8_t *st;            /* RP_* per inode */
	uint8_t *dtype;         /* DT_* per valid inode */
	uint32_t *links;        /* entries naming each inode */
	uint32_t *subdirs;
	uint64_t *entries;      /* entries found per directory */
	uint64_t *nblk;         /* blocks found per inode */
	uint64_t *parent_of;
	char **name;            /* first name found */
	uint64_t *queue;
	size_t nqueue, qcap;
	struct rp_fix *fix;
	size_t nfix, fixcap;
	uint16_t *ibits;        /* the inode chunk map's in-use bits */
	uint64_t ichunks_seen;
	uint64_t ichunk_twice;          /* a block two chunks are mapped to
					   (0: none) */
	uint64_t bbits_wrong, ibits_wrong;
	uint64_t double_claimed, unfixable;
	uint64_t logged;
	struct fs_repair_counts c;
	/* the walk in progress */
	uint64_t cur;
	bool cur_lost;          /* walking an unreachable inode */
	bool xmark;             /* xattr walk: count the blocks (2nd pass) */
	struct fs_dirent_disk *ents;
	size_t nents, entcap;
	struct fs_extent_disk *exts;    /* a file's extents that verify */
	size_t nexts, extcap;
};

void rp_say(struct fs_repair *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int rp_fix_add(struct fs_repair *r, enum rp_fix_kind kind, uint64_t ino,
	       unsigned what, const struct fs_dirent_disk *rec);
/* 0 valid, -ENOENT free, -EUCLEAN damaged, or an I/O error. */
int rp_inode_read(struct fs *fs, uint64_t ino, struct fs_inode_disk *d);
uint8_t rp_dtype(uint32_t mode);
/* The in-use inodes the scan wants (malloc'd, bit per inode). */
uint8_t *rp_imap_want(struct fs_repair *r);

static inline bool rp_bit(const uint8_t *m, uint64_t i)
{
	return m[i / 8] >> (i % 8) & 1;
}

static inline void rp_bit_set(uint8_t *m, uint64_t i)
{
	m[i / 8] |= (uint8_t)(1u << (i % 8));
}

#endif
