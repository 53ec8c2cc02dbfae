/*
 * repair: find and fix filesystem inconsistencies (fsck.raidfs phase 3).
 *
 * The scan reads the inode chunks and every tree directly (never through
 * fs_iget, so it runs on read-only and read-write mounts alike and never
 * frees an inode whose link count is wrong), and lists what it finds:
 *   dangling entries (naming a free, damaged or out-of-range inode, the
 *   root, or a directory a second time), entry types that disagree with
 *   the inode, unreadable maps (extent tree, name tree, xattr tree or value
 *   chain: the inode's attributes are then emptied, all of them) and
 *   extents pointing outside the data area, link counts, block counts,
 *   entry counts and parents that disagree with the tree, in-use inodes
 *   that no entry reaches, blocks claimed twice, and bitmap bits that
 *   disagree with what the tree uses (the block bitmap, the inode chunk
 *   map's in-use bits).
 *
 * Usage pattern (fsck):
 *   fs_mount(RDONLY) -> fs_repair_scan -> report -> fs_unmount
 *   repeat: fs_mount(rw) -> fs_repair_scan -> fs_repair_apply -> fs_unmount
 *           until a scan finds nothing to fix
 * One fs_repair_apply fixes one layer (bitmaps first, so later fixes that
 * allocate - lost+found - never take a block that is in use); the next
 * scan sees the result, so the loop converges in a few rounds.
 *
 * Not repaired (reported only): blocks claimed by two inodes (both keep
 * them), entries whose key does not match their name's hash.
 *
 * Uses the fs internals of fs_int.h (bcache, B+tree walk, transactions,
 * dir.c); declares nothing new there.
 */
#ifndef FS_REPAIR_H
#define FS_REPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "fs.h"

struct fs_repair;

/* Receives one sentence per problem found or fixed. */
typedef void (*fs_repair_log_t)(void *arg, const char *msg);

struct fs_repair_counts {
	uint64_t problems;      /* everything below, found by the scan */
	uint64_t dangling;      /* entries to remove */
	uint64_t types;         /* entry types to correct */
	uint64_t maps;          /* unreadable maps to empty */
	uint64_t cleared;       /* damaged or unreadable inodes to clear */
	uint64_t counts;        /* inodes whose nlink/blocks/entries/parent
				   disagree */
	uint64_t unreachable;   /* in-use inodes for lost+found */
	uint64_t bitmap_bits;   /* block and inode bitmap bits wrong */
	uint64_t double_claimed;/* blocks used by two owners (not repaired) */
	uint64_t bad_keys;      /* entries with a wrong key (not repaired) */
	uint64_t root;          /* the root directory lost: made anew, empty
				   (what it named goes to lost+found in
				   the next round) */
	uint64_t journal;       /* a journal block unreadable: the journal
				   is cleared (its later transactions lost)
				   by the read-write mount of the repair */
	uint64_t inodes, dirs;  /* reached */
	uint64_t suspect;       /* metadata blocks read where the device
				   disagrees with itself (fs_bdev_suspect):
				   what they say may be an old or wrong
				   copy, and no repair may build on it */
	uint64_t suspect_first; /* the first of them */
};

int fs_repair_scan(struct fs *fs, fs_repair_log_t log, void *arg,
		   struct fs_repair **out);
void fs_repair_counts(const struct fs_repair *r, struct fs_repair_counts *c);
/* Problems left that fs_repair_apply cannot fix. */
uint64_t fs_repair_unfixable(const struct fs_repair *r);
/*
 * Fixes one layer of what the scan found (see above), on the read-write
 * mount the scan ran on; *fixed counts the changes.  The caller unmounts
 * and scans again afterwards.
 */
int fs_repair_apply(struct fs *fs, struct fs_repair *r, uint64_t *fixed);

/* Does blk hold nothing a zero block would lose: in the data area and
 * used by nothing the scan reached, or a journal ring block outside the
 * part replay reads (fs_journal_idle)?  Only after a scan that went
 * through (fs_repair_scan returned 0). */
bool fs_repair_block_free(const struct fs_repair *r, uint64_t blk);

/* The path of an inode the scan reached ("/a/b"), or "inode N". */
void fs_repair_path(const struct fs_repair *r, uint64_t ino, char *buf,
		    size_t len);
/*
 * Calls fn for every written extent of every reached regular file and
 * symbolic link (the damage report maps unreadable blocks to files).
 */
typedef int (*fs_repair_extent_fn)(void *arg, uint64_t ino, uint64_t lblk,
				   uint64_t pblk, uint32_t len);
int fs_repair_extents(struct fs_repair *r, fs_repair_extent_fn fn, void *arg);

void fs_repair_free(struct fs_repair *r);

/* The superblock's clean flag as mounted (the last unmount was clean). */
bool fs_repair_sb_clean(struct fs *fs);

#endif
