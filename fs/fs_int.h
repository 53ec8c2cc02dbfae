/*
 * fs_int: the filesystem's internal interfaces, a section per layer
 * (docs/DESIGN.md, "Filesystem", has the table).  Top down; each file
 * calls only those below it:
 *
 *   fs_ops.c     the API of fs.h for inodes and files
 *   namei.c      ... for names: lookup, create, link, unlink, readdir
 *   rename.c     ... rename
 *   xattr_ops.c  ... extended attributes: namespace rules, ACL coupling
 *   check.c      fs_check, the full consistency check
 *   super.c      format, mount, unmount, statfs
 *   acl.c        POSIX ACL rules: inheritance, chmod, mode from an ACL
 *   evict.c      the last fs_iput of an inode: freeing, orphans at mount
 *   file.c       file data: read, write, truncate, open
 *   extent.c     file block -> device block map (inline, then B+tree)
 *   xattr.c      an inode's extended attributes: B+tree, value chains
 *   dir.c        names in a directory's hash B+tree
 *   inode.c      inode cache, inode table, orphan list
 *   btree.c      generic B+tree of fixed-size records keyed by u64
 *   ichunk.c     inode numbers: chunks of the inode table, the chunk map
 *   alloc.c      the block bitmap, stripe-aware allocation
 *   transaction.c  handles on the running transaction
 *   commit.c     commit, group commit, checkpoint, commit thread, load
 *   recovery.c   journal replay, the journal superblock
 *   bcache.c     metadata buffer cache, the superblock buffer
 *   util.c       checksums, block headers, clocks, lists of block runs
 * (fsck's repair*.c sit on top of all of them: repair.h, repair_int.h.)
 *
 * Usage pattern of a metadata change (as xv6's begin_op / log_write):
 *   lock what the operation needs (ns_lock, inode locks)
 *   fs_tx_begin(fs, &tx)
 *   bc_read_meta(...) / modify / fs_tx_dirty(tx, buf) / bc_put(buf)
 *   fs_tx_end(fs, tx)
 *   unlock
 * A modification to a metadata buffer is only allowed between fs_tx_begin
 * and fs_tx_end, because a commit snapshots buffers while no handle is open.
 */
#ifndef FS_INT_H
#define FS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <syslog.h>
#include "fs.h"
#include "hcache.h"
#include "ondisk_fs.h"

#define FS_ASSERT(c) do { if (!(c)) fs_panic(__FILE__, __LINE__, #c); } while (0)
void fs_panic(const char *file, int line, const char *what)
	__attribute__((noreturn));

/* A message at a syslog level, to the logger fs_set_logger installed
 * (stderr without one).  No lock held matters: loggers take none of ours. */
void fs_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

uint64_t fs_csum(const void *data, size_t len, uint64_t seed);
uint64_t fs_now_ns(void);
void fs_now(struct timespec *ts);
/* in_group_or_capable(): ctx is uid 0, or in group g (NULL ctx: yes) */
bool fs_ctx_in_group(const struct fs_ctx *ctx, gid_t g);

/* ---- Buffer cache (bcache.c) --------------------------------------------- */
enum fs_buf_kind {
	FS_BUF_HDR = 0,         /* starts with fs_bhdr: sealed at commit */
	FS_BUF_ITABLE = 1,      /* inode table: each inode sealed by inode.c */
	FS_BUF_SB = 2,          /* superblock copy 0 */
};

struct fs_buf {
	uint64_t blk;
	uint8_t *data;
	int refs;               /* holders between bc_get and bc_put */
	int jpins;              /* transactions that still need it cached */
	uint64_t tx_seq;        /* running transaction it is listed in, or 0 */
	uint64_t born_seq;      /* transaction that allocated the block
				   (fs_tx_dirty_new), 0 if not known */
	bool forgotten;         /* freed by the transaction that allocated
				   it: listed, but not journalled */
	enum fs_buf_kind kind;
	bool uptodate;
	bool verified;
	pthread_mutex_t lock;   /* held while loading */
	struct hc_node node;    /* key blk; on the LRU iff refs + jpins 0 */
};

struct fs_bcache {
	pthread_mutex_t lock;   /* the hash + LRU, refs, jpins */
	struct hcache hc;
	size_t limit;           /* buffers kept at most, unless in use */
};

int bc_init(struct fs *fs, size_t limit_bufs);
void bc_destroy(struct fs *fs);
/* Has bc_init run (mount reads the superblock before it)? */
bool bc_is_ready(const struct fs *fs);
/* Reads blk (kind: how it is sealed); verifies a header'd block's magic,
 * type, block number and checksum on the first read from disk. */
int bc_read_meta(struct fs *fs, uint64_t blk, enum fs_btype type,
		 struct fs_buf **out);
int bc_read(struct fs *fs, uint64_t blk, enum fs_buf_kind kind,
	    struct fs_buf **out);
/* A buffer for a newly allocated block: zeroed, no read. */
int bc_new(struct fs *fs, uint64_t blk, struct fs_buf **out);
/* The cached buffer of blk with one more reference, or NULL. */
struct fs_buf *bc_find(struct fs *fs, uint64_t blk);
void bc_put(struct fs *fs, struct fs_buf *b);
/* The superblock buffer (copy 0): the orphan tree root lives there and is
 * journalled. */
int fs_sb_get(struct fs *fs, struct fs_buf **out);
void bc_pin(struct fs *fs, struct fs_buf *b);
void bc_unpin(struct fs *fs, struct fs_buf *b);
/* Drops every unpinned, unused buffer (tests, unmount). */
void bc_shrink(struct fs *fs);
void fs_bhdr_init(void *block, enum fs_btype type, uint64_t blk,
		  uint64_t owner);
void fs_bhdr_seal(void *block);
int fs_bhdr_check(const void *block, enum fs_btype type, uint64_t blk);
/* Does block blk's content prove it belongs at blk - a metadata block
 * whose header checks there, or superblock copy 0?  An inode chunk only
 * proves itself (fs_inode_block_proves: seeded by inode numbers, not its
 * place).  raidcore's word for a block it cannot verify
 * (rc_array_set_vouch, bdev_array.c); file data never does. */
bool fs_block_proves(const void *block, uint64_t blk);
/*
 * Metadata block blk of type, read into buf, fails its checksum though
 * the device verified it (the block and the device's own checksum
 * rewritten together: a lost write of both, damage resealed).  The
 * device's redundancy may still hold it as written (fs_bdev_reconsider:
 * a RAID 5 row rebuilt without it, a RAID 6 row whose P and Q name it, a
 * mirror's other copy); that reading replaces buf only when it proves
 * itself, and the device writes it back.  0 then (logged), else
 * -ENODATA.
 */
int fs_meta_reconsider(struct fs_bdev *bdev, uint64_t blk,
		       enum fs_btype type, void *buf);
/* An inode table block: every slot free or a sound inode of its number,
 * one in use at least. */
bool fs_inode_block_proves(const void *block);
/* Inode ino's slot in its table block b (held), as read: when it is
 * damaged, or free where the chunk map says it is in use, the array's
 * other reading of b is taken if it holds what the map says the chunk
 * holds (rc_block_reconsider, an inode chunk's rewrite with its entry). */
void fs_itable_slot_check(struct fs *fs, struct fs_buf *b, uint64_t ino);
/* Does superblock copy `copy`'s checksum hold (its seed is the copy)? */
bool fs_sb_csum_ok(const struct fs_sb_disk *sb, uint64_t copy);

/* ---- Journal: recovery.c, commit.c, transaction.c ------------------------ */
/* A growable list of block runs (util.c); adjacent runs merge. */
struct fs_extlist {
	struct { uint64_t blk, len; } *v;
	size_t n, cap;
};
int fs_extlist_add(struct fs_extlist *l, uint64_t blk, uint64_t len);
void fs_extlist_free(struct fs_extlist *l);

/* Where the journal lives: its superblock, then the ring. */
struct fs_jgeom {
	uint64_t jsb_blk;
	uint64_t ring_start, ring_blocks;
	uint64_t id;                    /* every journal block's owner: from
					   the filesystem's uuid */
};

static inline uint64_t fs_jring_blk(const struct fs_jgeom *g, uint64_t pos)
{
	return g->ring_start + pos % g->ring_blocks;
}

/* recovery.c: replay, and the journal superblock (where replay starts). */
void fs_jgeom_init(struct fs_jgeom *g, const struct fs_sb_disk *sb);
int fs_jsb_write(struct fs_bdev *bdev, const struct fs_jgeom *g, uint64_t seq,
		 uint64_t pos);
int fs_journal_format(struct fs_bdev *bdev, uint64_t start, uint64_t id);

struct fs_replay {
	uint64_t seq;                   /* the next transaction's number */
	uint64_t pos;                   /* ring position after the last one */
	uint64_t tail;                  /* where the journal superblock now
					   starts the ring */
	uint64_t txns;                  /* committed transactions applied */
	/* FS_RECOVER_SALVAGE only: the journal superblock (lost_pos
	 * UINT64_MAX) or the ring block at lost_pos could not be read, so
	 * replay stopped there and what follows is given up; reset: the
	 * ring was then written as zeros and the journal starts anew */
	bool lost, reset;
	uint64_t lost_pos;
	bool clean;                     /* FS_RECOVER_CLEAN was given */
};
/* Receives each replayed block copy in order (instead of a home write). */
typedef int (*fs_replay_fn)(void *arg, uint64_t blk, const uint8_t *data);
/*
 * Applies every committed transaction the journal on bdev holds: writes
 * each copy home (fn NULL; then flushes and empties the ring by rewriting
 * the journal superblock) or hands it to fn (nothing is written).
 * -EUCLEAN: the journal superblock is damaged.  With FS_RECOVER_SALVAGE
 * (fsck's mounts), a journal superblock or ring block that cannot be read
 * or is damaged ends replay instead (out->lost), and when writing (fn
 * NULL) the whole ring is then zeroed and restarted (out->reset): the
 * transactions from there on are lost, as e2fsck's "clear journal".
 */
#define FS_RECOVER_SALVAGE (1u << 0)
/* The filesystem was unmounted cleanly: its journal holds nothing to
 * replay, so a block of it that cannot be read ends the scan as salvage
 * does (a damaged raidcore table block over the journal's head, on a
 * degraded array, made a clean filesystem unmountable: a tester's find). */
#define FS_RECOVER_CLEAN (1u << 1)
int fs_journal_recover(struct fs_bdev *bdev, const struct fs_jgeom *g,
		       fs_replay_fn fn, void *arg, unsigned flags,
		       struct fs_replay *out);

/* transaction.c: handles on the running transaction. */
struct fs_tx {
	uint64_t seq;
	int handles;
	struct fs_buf **bufs;
	size_t nbufs, cap;
	struct fs_extlist free_data;    /* reusable once committed */
	struct fs_extlist free_meta;    /* reusable once checkpointed */
	bool ordered;                   /* a handle wrote data that this
					   transaction makes part of a file
					   (fs_tx_ordered) */
};

int fs_tx_begin(struct fs *fs, struct fs_tx **out);
void fs_tx_end(struct fs *fs, struct fs_tx *tx);
/* Handles this thread holds, nested ones included (as jbd2's
 * current->journal_info: set by transaction.c, read by the commit code). */
extern __thread int fs_tx_depth;
/* Does this thread hold a handle? (Then it must not wait for a commit.) */
static inline bool fs_tx_held(void)
{
	return fs_tx_depth > 0;
}
void fs_tx_dirty(struct fs *fs, struct fs_tx *tx, struct fs_buf *b);
/* fs_tx_dirty for the buffer of a metadata block tx has just allocated. */
void fs_tx_dirty_new(struct fs *fs, struct fs_tx *tx, struct fs_buf *b);
/* Is blk a metadata block tx allocated (fs_tx_dirty_new)?  Then it is
 * dropped from tx (jbd2's journal_forget) and the caller may make it
 * allocatable at once: no transaction but tx ever held it. */
bool fs_tx_forget(struct fs *fs, struct fs_tx *tx, uint64_t blk);
void fs_tx_free(struct fs *fs, struct fs_tx *tx, uint64_t blk,
		uint64_t len, bool meta);
/*
 * Says that tx makes data written inside its handles part of a file: new
 * blocks mapped, unwritten extents converted, the size grown over written
 * bytes.  Such data must be durable before the commit record is written
 * (ordered mode: a flush between them); a transaction without any commits
 * with one flush (commit.c).  Every such change calls it.
 */
static inline void fs_tx_ordered(struct fs_tx *tx)
{
	__atomic_store_n(&tx->ordered, true, __ATOMIC_RELAXED);
}

/* commit.c: commit, group commit, checkpoint, commit thread. */
struct fs_journal {
	pthread_mutex_t lock;           /* running, handles, barrier */
	pthread_cond_t cond;
	struct fs_tx *running;
	bool barrier;                   /* a commit is draining handles */
	size_t tx_limit;                /* buffers before a forced commit */
	uint64_t handles_started;       /* statistics (tests): outermost
					   fs_tx_begin calls */
	pthread_mutex_t commit_lock;    /* one commit at a time */
	uint64_t committed_seq;
	struct fs_jgeom g;
	uint64_t head;                  /* next free ring position */
	uint64_t tail;                  /* jsb start_pos */
	uint64_t used;                  /* ring blocks from tail to head */
	struct fs_extlist ckpt_frees;   /* metadata frees awaiting checkpoint */
	/* The blocks written home since the last checkpoint, and the
	 * device's dropped-writes count then (fs_bdev_dropped): a
	 * checkpoint frees the ring only when none of them was dropped.
	 * commit_lock. */
	struct fs_extlist homes;
	uint64_t homes_since;
	/* Called (with no journal lock held) with blocks that may be
	 * allocated again: data frees once committed, metadata frees once
	 * checkpointed.  Set by the allocator (fs_alloc_load). */
	void (*release)(struct fs *fs, const struct fs_extlist *l);
	pthread_t thread;
	bool thread_running;
	bool stop;
	pthread_cond_t tick;
	unsigned interval_ms;
	int error;                      /* sticky: I/O error, fs read-only */
	uint64_t replayed;
	/* fsck's mounts (FS_RECOVER_SALVAGE): replay stopped at a block
	 * that cannot be read (lost_pos, UINT64_MAX: the journal
	 * superblock); reset: this mount then zeroed and restarted the ring */
	bool lost, reset;
	uint64_t lost_pos;
};

int fs_journal_load(struct fs *fs);     /* replays; fills the ring state */
int fs_journal_start(struct fs *fs);    /* commit thread */
int fs_journal_shutdown(struct fs *fs); /* commit, checkpoint, stop */
void fs_journal_destroy(struct fs *fs);
/* Commits the running transaction (or just flushes when it is empty).
 * Caller holds no handle. */
int fs_journal_commit(struct fs *fs);
/* Commits the running transaction (or just flushes) and waits: durable. */
int fs_journal_sync(struct fs *fs);
/* Makes transaction seq durable (committing it if need be) and every data
 * write issued so far: what fsync of an inode last changed in seq needs. */
int fs_journal_sync_upto(struct fs *fs, uint64_t seq);
/* Commit, then checkpoint: every pending free becomes allocatable. */
int fs_journal_checkpoint(struct fs *fs);
/* Is blk a ring block replay never reads as part of a transaction (not
 * from the tail up to the head)?  Zeros there lose nothing.  On a mount
 * that commits nothing (fsck's). */
bool fs_journal_idle(struct fs *fs, uint64_t blk);
/* Has transaction seq committed? */
bool fs_tx_is_committed(struct fs *fs, uint64_t seq);

/* ---- Allocation (alloc.c) ------------------------------------------------ */
struct fs_alloc {
	pthread_mutex_t lock;
	uint64_t *bmap;                 /* 1: used or freed-but-pending */
	uint64_t free_blocks;           /* allocatable now */
	uint64_t pending_blocks;        /* freed, awaiting commit/checkpoint */
	uint64_t reserve;               /* blocks only metadata may use */
	uint64_t keep;                  /* blocks fs_alloc_has_space keeps */
	uint64_t cursor_small, cursor_large;
};
int fs_alloc_load(struct fs *fs);
void fs_alloc_destroy(struct fs *fs);
/* Data blocks: up to want blocks from goal (or a stripe-aligned run when
 * want is large).  *got >= 1 on success. */
int fs_alloc_data(struct fs *fs, struct fs_tx *tx, uint64_t goal,
		  uint64_t want, uint64_t *blk, uint64_t *got);
int fs_alloc_meta(struct fs *fs, struct fs_tx *tx, uint64_t goal,
		  uint64_t *blk);
void fs_free_blocks(struct fs *fs, struct fs_tx *tx, uint64_t blk,
		    uint64_t len, bool meta);
/* Can want data blocks be allocated without touching the reserve, and,
 * unless for the kernel's write-back (cache), fs_space_keep's blocks? */
bool fs_alloc_has_space(struct fs *fs, uint64_t want, bool cache);
/*
 * Metadata floors: an operation that may allocate metadata checks, before
 * it changes anything, that at least this many blocks are free, so it can
 * never run out half-way (a B+tree insert needs at most depth + 1 blocks).
 * Removals get a lower floor than creations: when the reserve is gone,
 * deleting still works and frees space.
 */
#define FS_META_FLOOR_CREATE 32
#define FS_META_FLOOR_REMOVE 8
int fs_meta_check(struct fs *fs, uint64_t floor);
uint64_t fs_alloc_pending(struct fs *fs);
int fs_bitmap_format(struct fs_bdev *bdev, uint64_t start, uint64_t nblocks,
		     uint64_t bits, enum fs_btype type, uint64_t used_below);

/* ---- B+tree (btree.c) ---------------------------------------------------- */
enum fs_bt_find { FS_BT_EQ, FS_BT_LE, FS_BT_GE };

struct fs_bt {
	struct fs *fs;
	uint64_t *root;                 /* in the holder (inode or superblock) */
	uint32_t *depth;                /* levels; 0: empty */
	uint16_t rec_size;
	uint16_t kind;                  /* enum fs_tree_kind */
	uint64_t owner;
	uint64_t *nblocks;              /* holder's block count, or NULL */
	uint64_t goal;
};
int fs_bt_find(struct fs_bt *t, uint64_t key, enum fs_bt_find how,
	       void *rec);
int fs_bt_insert(struct fs_bt *t, struct fs_tx *tx, const void *rec);
int fs_bt_update(struct fs_bt *t, struct fs_tx *tx, const void *rec);
int fs_bt_delete(struct fs_bt *t, struct fs_tx *tx, uint64_t key);
/* Frees every node (the records must not own anything). */
int fs_bt_destroy(struct fs_bt *t, struct fs_tx *tx);
/* Visits every node (node) and every record in key order (rec), checking
 * that keys are sorted and lie within their parents' separators. */
int fs_bt_walk(struct fs_bt *t, int (*node_cb)(void *arg, uint64_t blk),
	       int (*rec_cb)(void *arg, const void *rec), void *arg);
/* The same, going on past damage (fsck's salvage): a subtree or a record
 * that fails (a node unreadable, failing its checks or its keys; rec or
 * node refusing) is skipped and counted in *damaged; only -ENOMEM is
 * returned. */
int fs_bt_salvage(struct fs_bt *t, int (*node_cb)(void *arg, uint64_t blk),
		  int (*rec_cb)(void *arg, const void *rec), void *arg,
		  uint64_t *damaged);

static inline uint64_t fs_rec_key(const void *rec)
{
	return fs_le64(*(const uint64_t *)rec);
}

/* ---- Inode chunks (ichunk.c) --------------------------------------------- */
/* Chunk c: inodes 16c .. 16c+15 in block pblk, used: their in-use bits. */
struct fs_ichunk {
	uint64_t pblk;
	uint16_t used;
};

struct fs_ichunks {
	pthread_mutex_t lock;           /* all of this and the chunk map */
	struct fs_ichunk *v;            /* chunks 0 .. n-1 (dense) */
	uint64_t n, cap;
	uint64_t used;                  /* inodes in use, inode 0 not counted */
	uint64_t cursor;                /* where a search for a slot starts */
	uint64_t limit;                 /* sb.inodes */
	uint64_t root;                  /* the chunk map (copy of the sb's) */
	uint32_t depth;
	uint64_t nodes;                 /* blocks of the chunk map */
	uint64_t gen_hi;                /* highest inode generation read or
					   given since the mount (atomic) */
	bool trimmed;                   /* chunks were given back since
					   (atomic) */
};
int fs_ichunk_load(struct fs *fs);
void fs_ichunk_destroy(struct fs *fs);
/* Inside a transaction: a free inode number (a new chunk if need be), or
 * -ENOSPC at the limit or when no block is free beyond the reserve. */
int fs_alloc_inode(struct fs *fs, struct fs_tx *tx, uint64_t *ino);
/* Inside a transaction; the last chunks, once empty, are freed. */
int fs_free_inode(struct fs *fs, struct fs_tx *tx, uint64_t ino);
/* An inode generation read or given (gen_hi). */
void fs_ichunk_gen_note(struct fs *fs, uint64_t gen);
/* What a new inode's generation must exceed beyond its slot's own: since
 * chunks were given back, everything this mount has seen; else 0. */
uint64_t fs_ichunk_gen_floor(struct fs *fs);
bool fs_inode_is_allocated(struct fs *fs, uint64_t ino);
/* The table block of ino; 0 when its chunk does not exist. */
uint64_t fs_ichunk_blk(struct fs *fs, uint64_t ino);
/* Chunk c's block and in-use bits, as the chunk map says; false when
 * there is no chunk c. */
bool fs_ichunk_find(struct fs *fs, uint64_t c, uint64_t *pblk, uint16_t *used);
/* Inode numbers below this have a slot (chunks * 16). */
uint64_t fs_ichunk_inodes(struct fs *fs);
/* Blocks of the chunks and of the chunk map. */
uint64_t fs_ichunk_blocks(struct fs *fs);
/* statfs's f_files and f_ffree: the inodes in use plus those the free
 * space beyond the reserve could hold, up to the limit. */
void fs_ichunk_counts(struct fs *fs, uint64_t avail_blocks, uint64_t *files,
		      uint64_t *ffree);
/* Repair: chunk c's in-use bits become used (inode 0's stays set). */
int fs_ichunk_set_used(struct fs *fs, struct fs_tx *tx, uint64_t c,
		       uint16_t used);
/* Format: the chunk map's one leaf, naming chunk 0 (inodes 0 and 1). */
int fs_ichunk_format(struct fs_bdev *bdev, uint64_t leaf, uint64_t chunk0);

/* ---- Inodes (inode.c) ---------------------------------------------------- */
struct fs_extent {
	uint64_t lblk, pblk;
	uint32_t len;
	uint32_t flags;
};

/* CPU form of struct fs_inode_disk. */
struct fs_dinode {
	uint32_t mode, uid, gid, nlink, flags;
	uint64_t generation, size, blocks, rdev, xattr_root, parent;
	struct timespec atime, mtime, ctime, crtime;
	uint64_t map_root;
	uint32_t map_depth, nextents;
	struct fs_extent ext[FS_INLINE_EXTENTS];
	uint64_t dir_entries;
	uint32_t xattr_depth;
};

/*
 * In-memory inode.  lock protects d and the inode's trees and data; refs,
 * nlookup, nopen and the hash chain are under fs->icache_lock.
 */
struct fs_inode {
	uint64_t ino;
	pthread_rwlock_t lock;
	int refs;
	uint64_t nlookup;
	uint32_t nopen;
	bool orphan;                    /* listed in the orphan tree */
	uint64_t shrink_seq;            /* transaction of the last shrink */
	uint64_t dirty_seq;             /* transaction of the last change */
	uint64_t data_seq;              /* ... of the last change fdatasync
					   needs: size, block map */
	bool dead;                      /* freed on disk */
	uint64_t name_dir, name_key;    /* the directory entry it was last
					   reached through (lookup, create,
					   link, readdirplus; 0: none), for
					   messages (fs_path); under
					   fs->icache_lock */
	struct fs_dinode d;
	struct hc_node node;            /* in fs->icache, key: ino */
	/* st_blocks' changes, for fs_blocks_changed: the block count the
	 * inode was last logged with (fs_inode_dirty*: every change of
	 * d.blocks is logged), how often it differed, and the largest
	 * count + 1 fs_blocks_shown was given (0: none).  Atomics: read
	 * under the shared lock. */
	uint64_t blocks_logged;
	uint64_t blocks_gen;
	uint64_t blocks_gen_told;
	/* The device's dropped-writes count (fs_bdev_dropped) up to which
	 * fsync has looked for this file's data among them (fs_fsync);
	 * atomic. */
	uint64_t wdrop_seen;
	/* 1 + the first byte of a cached write-back that found no space
	 * (0: none): no cached write that would allocate past it is stored
	 * until the file is truncated to it or closed by all (fs_write); under
	 * lock, atomic for the release's reset. */
	uint64_t wb_hole;
	/* 1 + the size the file had when cached write-backs began to grow
	 * it after its data was last acknowledged (0: not grown since):
	 * everything past it came from write-backs that no fsync, close or
	 * other size change has answered for yet.  A cached write-back that
	 * finds no space at or past it cuts the file back to where that
	 * write starts (hole_note); reset by fs_wb_acked.  Under lock,
	 * atomic for the release's and fsync's resets. */
	uint64_t wb_base;
};

/* ip's data up to its size has been answered for (fsync, a handle's
 * release after the kernel wrote the file back, a size set otherwise):
 * no cut of a later hole_note goes below it. */
static inline void fs_wb_acked(struct fs_inode *ip)
{
	__atomic_store_n(&ip->wb_base, 0, __ATOMIC_RELAXED);
}

int fs_icache_init(struct fs *fs);
void fs_icache_destroy(struct fs *fs);
int fs_iget(struct fs *fs, uint64_t ino, struct fs_inode **out);
/* A reference to ino if it is in memory (kernel-referenced inodes always
 * are), else NULL. */
struct fs_inode *fs_icache_find(struct fs *fs, uint64_t ino);
/*
 * The inode cache's half of fs_iput: drops a reference.  Returns true
 * instead, keeping the reference, when this was the last use of an
 * unlinked inode: the caller frees it on disk (evict.c), then drops the
 * reference with fs_inode_unref_freed.
 */
bool fs_inode_unref(struct fs *fs, struct fs_inode *ip);
void fs_inode_unref_freed(struct fs *fs, struct fs_inode *ip);
/* iflags.c: may ip change so?  0 or -EPERM (immutable, append-only).
 * Caller holds ip->lock. */
enum fs_change {
	FS_CHANGE_DATA,         /* overwrite, truncate, punch, fallocate */
	FS_CHANGE_ATTR,         /* mode, owner, xattrs */
	FS_CHANGE_NAME,         /* unlink, rename, link of the inode */
	FS_CHANGE_ADD,          /* append; a new entry in a directory */
	FS_CHANGE_REMOVE,       /* an entry leaves a directory */
};
int fs_iflags_check(const struct fs_inode *ip, enum fs_change what);
/* an open with open(2)'s flags */
int fs_iflags_check_open(const struct fs_inode *ip, int flags);
/* Takes ip out of the cache for good, clears its slot in the inode table
 * and frees its number (its blocks must be gone). */
int fs_inode_delete(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip);
int fs_inode_dirty(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip);
/* The same when only timestamps changed (fdatasync need not wait). */
int fs_inode_dirty_times(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip);

/* Write-locks up to four distinct inodes in ascending inode order. */
#define FS_LOCKSET_MAX 4
struct fs_lockset {
	struct fs_inode *ip[FS_LOCKSET_MAX];
	int n;
};
void fs_lockset_add(struct fs_lockset *s, struct fs_inode *ip);
void fs_lockset_lock(struct fs_lockset *s);
void fs_lockset_unlock(struct fs_lockset *s);
int fs_inode_new(struct fs *fs, struct fs_tx *tx, mode_t mode, uid_t uid,
		 gid_t gid, struct fs_inode **out);
/* Lookup references and open handles (fs.h), under icache_lock. */
void fs_inode_ref(struct fs *fs, struct fs_inode *ip, int lookups, int opens);
/* ip was reached through the entry at key in directory dir (key 0: not
 * known, fs_path searches dir). */
void fs_inode_named(struct fs *fs, struct fs_inode *ip, uint64_t dir,
		    uint64_t key);
/* Where ip was last reached through: -ENOENT when nowhere. */
int fs_inode_name(struct fs *fs, struct fs_inode *ip, uint64_t *dir,
		  uint64_t *key);
void fs_inode_to_attr(struct fs *fs, const struct fs_inode *ip,
		      struct fs_attr *a);
int fs_orphan_add(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip);
int fs_orphan_del(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip);
/* The first inode on the orphan list at or after from; -ENOENT: none. */
int fs_orphan_next(struct fs *fs, uint64_t from, uint64_t *ino);
/* Format: chunk 0's block, holding the root directory. */
int fs_inode_format_root(struct fs_bdev *bdev, uint64_t chunk0,
			 uint64_t now_ns);
/* A fresh, empty root directory into its slot of chunk 0's block. */
void fs_inode_root_encode(uint8_t *itable, uint64_t now_ns);
void fs_inode_touch(struct fs_inode *ip, bool a, bool m, bool c);

/* ---- Extents and file data (extent.c, file.c) ---------------------------- */
/* The extent containing lblk (found) or else the next one (len 0: none). */
int fs_ext_map(struct fs *fs, struct fs_inode *ip, uint64_t lblk,
	       struct fs_extent *e, bool *found);
int fs_ext_add(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
	       uint64_t lblk, uint64_t pblk, uint32_t len, uint32_t flags);
/* Unmaps [from, to) and frees the blocks; stops after about max records
 * (*more set) so a caller can split huge truncates across transactions.
 * A batch dirties at most ~FS_EXT_REMOVE_BATCH bitmap blocks plus a few
 * tree nodes, well within the smallest journal (64 blocks: see commit.c). */
#define FS_EXT_REMOVE_BATCH 32
int fs_ext_remove(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		  uint64_t from, uint64_t to, int max, bool *more);
/* Allocates every unmapped block of [from, to), as unwritten extents
 * (read as zeros) when unwritten is set. */
int fs_ext_fill(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		uint64_t from, uint64_t to, bool unwritten);
/* After data was written to [from, to): no unwritten extent remains there.
 * Returns how many extents it converted, or -errno. */
int fs_ext_mark_written(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
			uint64_t from, uint64_t to);
/* Unmapped blocks in [from, to), for the space check before a write. */
uint64_t fs_ext_holes(struct fs *fs, struct fs_inode *ip, uint64_t from,
		      uint64_t to);
/* Blocks a write or fallocate asks for beyond its holes (an extent tree
 * split); statfs's f_bavail leaves them out, so that df says 0 when no
 * new block can be written. */
#define FS_WRITE_SLACK 8
/* Reserves room for `blocks` new data blocks (committing and checkpointing
 * to recover pending frees if needed); call with no handle held.  Unless
 * for the kernel's write-back (cache), fs_space_keep's blocks stay free. */
int fs_space_reserve(struct fs *fs, uint64_t blocks, bool cache);
#define FS_MAX_FILE_SIZE (1ull << 50)
/* Zeroes [from, end of that block) in place, if the block is mapped. */
int fs_zero_block_tail(struct fs *fs, struct fs_inode *ip, uint64_t from);
/* Before a file grows past its end: see file.c. */
int fs_file_prepare_grow(struct fs *fs, struct fs_inode *ip);
int fs_file_truncate(struct fs *fs, struct fs_inode *ip, uint64_t size);
ssize_t fs_file_read(struct fs *fs, struct fs_inode *ip, uint64_t off,
		     size_t size, void *buf);
/* kernel: the kernel's writeback cache wrote it back (FS_WRITE_CACHE)
 * and owns mtime and ctime, which it sends in a SETATTR when they moved:
 * the write leaves them (setting them to the daemon's time a moment later
 * than the kernel's made them change across a remount when the kernel's
 * had not moved and it sent none); and it may take fs_space_keep's
 * blocks, which are kept for it. */
ssize_t fs_file_write(struct fs *fs, struct fs_inode *ip, uint64_t off,
		      size_t size, const void *buf, bool kernel);
/* fs_write's FS_WRITE_CACHE path, ip->lock held shared: writes blocks
 * that are all mapped, written and inside the size, and touches nothing of
 * the inode (no transaction); -EAGAIN for any other write, which the
 * caller makes under the lock held exclusive. */
ssize_t fs_file_overwrite(struct fs *fs, struct fs_inode *ip, uint64_t off,
			  size_t size, const void *buf);
/* open(2) of ip, referenced by the caller, who holds no lock on it: O_TRUNC
 * empties a regular file, the inode gains an open handle, *fh is new. */
int fs_file_open(struct fs *fs, struct fs_inode *ip, int flags, uint64_t *fh);
/* A new opaque file handle number. */
uint64_t fs_fh_new(struct fs *fs);

/* ---- Directories (dir.c) ------------------------------------------------- */
/* The hash bits a key keeps (FORMAT.md); tests may narrow it. */
extern uint64_t fs_dir_hash_mask;
/* The key of name with collision index 0 (directories and xattrs). */
uint64_t fs_dir_name_base(struct fs *fs, const char *name, size_t len);
/*
 * Walks the records of t filed under name's hash (keys base .. base|0xff,
 * the scheme directories and xattr trees share): finds the record is()
 * says holds name (0, rec filled), or returns -ENOENT with used[] (may be
 * NULL) marking the collision indexes taken.
 */
int fs_name_scan(struct fs *fs, struct fs_bt *t, const char *name,
		 bool (*is)(const void *rec, const char *name, size_t len),
		 void *rec, uint64_t used[4]);
/* The lowest collision index used[] leaves free, or -ENOSPC. */
int fs_name_index(const uint64_t used[4]);
/* key (may be NULL): the key the entry is stored under. */
int fs_dir_lookup(struct fs *fs, struct fs_inode *dp, const char *name,
		  uint64_t *ino, uint64_t *key);
int fs_dir_add(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
	       const char *name, uint64_t ino, uint8_t type, uint64_t *key);
/* rec, as found by fsck's scan (its key kept), put back into dp's tree:
 * the salvage of a damaged name tree (repair_apply.c). */
int fs_dir_insert_rec(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
		      const struct fs_dirent_disk *rec);
int fs_dir_remove(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
		  const char *name);
int fs_dir_set(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
	       const char *name, uint64_t ino, uint8_t type);
/* Next entry with key >= cookie: name (NUL-terminated), ino, type, key. */
int fs_dir_next(struct fs *fs, struct fs_inode *dp, uint64_t cookie,
		char *name, uint64_t *ino, uint8_t *type, uint64_t *key);
int fs_dir_destroy(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp);

/* ---- Extended attributes (xattr.c) --------------------------------------- */
/* Caller holds ip->lock (write for changes, inside a transaction).  The
 * size rules are fs_getxattr's; changes touch ctime and dirty the inode. */
ssize_t fs_xattr_get(struct fs *fs, struct fs_inode *ip, const char *name,
		     void *buf, size_t size);
int fs_xattr_set(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		 const char *name, const void *value, size_t size, int flags);
int fs_xattr_remove(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		    const char *name);
/* NUL-separated names for which shown() is true. */
ssize_t fs_xattr_list(struct fs *fs, struct fs_inode *ip,
		      bool (*shown)(const char *name, size_t len,
				    const void *arg),
		      const void *arg, char *buf, size_t size);
/* Frees every attribute (records, tree, value blocks) of ip. */
int fs_xattr_destroy(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip);
/* Is r a well-formed record (key of its name, lengths, flags)?  -EUCLEAN. */
int fs_xattr_rec_check(struct fs *fs, const struct fs_xattr_rec_disk *r);
/*
 * Reads the value chain of external record r of inode owner into value
 * (value_len bytes; NULL: read and check only), calling blk_cb (may be
 * NULL) with each block: every block must be a value block of owner in
 * its place, and the value must match the record's checksum (-EUCLEAN).
 */
int fs_xattr_chain_read(struct fs *fs, uint64_t owner,
			const struct fs_xattr_rec_disk *r, void *value,
			int (*blk_cb)(void *arg, uint64_t blk), void *arg);

/* ---- POSIX ACLs (acl.c) -------------------------------------------------- */
#define FS_ACL_ACCESS "system.posix_acl_access"
#define FS_ACL_DEFAULT "system.posix_acl_default"
/* Caller holds the inodes' locks (write) and a transaction is open. */
/*
 * Gives new inode ip the ACLs that directory dp's default ACL implies and
 * masks ip's mode with it.  1: dp has no default ACL (apply the umask).
 */
int fs_acl_inherit(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
		   struct fs_inode *ip);
/* Before ip's permission bits become those of mode: its access ACL, if it
 * has one, takes them (owner, mask or owning group, other). */
int fs_acl_chmod(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		 mode_t mode);
/* Stores an access ACL (not if the mode bits say as much) and sets ip's
 * permission bits from it, dropping S_ISGID when ctx is not in ip's group
 * (posix_acl_update_mode).  -EINVAL: not a valid ACL. */
int fs_acl_set_access(struct fs *fs, const struct fs_ctx *ctx,
		      struct fs_tx *tx, struct fs_inode *ip,
		      const void *value, size_t size, int flags);

/* ---- End of an inode's life (evict.c) ------------------------------------ */
/* Drops a reference; frees the inode on disk when nothing refers to it.
 * The caller holds no handle and no inode lock. */
void fs_iput(struct fs *fs, struct fs_inode *ip);
/* Undoes fs_inode_new when the name could not be added; drops the ref. */
void fs_inode_abort_new(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip);
/* Mount: frees the orphans a crash left, finishes interrupted truncates. */
int fs_orphans_process(struct fs *fs);

/* ---- Reports of damage (report.c) ---------------------------------------- */
/* fs_path (report.c) is in fs.h: the daemon names damaged files too. */
/* A read of [off, off + size) failed with -EIO: logs each unreadable run
 * of blocks with ip's number, path and byte range.  Caller holds a
 * reference on ip and no lock. */
void fs_report_unreadable(struct fs *fs, struct fs_inode *ip, uint64_t off,
			  size_t size);

/* The unreadable runs reported last (report.c); lock is a leaf. */
#define FS_REPORTS_RECENT 16
struct fs_report_run {
	uint64_t ino, from, to, when_ns;
};
struct fs_reports {
	pthread_mutex_t lock;
	struct fs_report_run r[FS_REPORTS_RECENT];
	unsigned next;
};

/* ---- The filesystem ------------------------------------------------------ */

struct fs {
	struct fs_bdev *bdev;
	struct fs_sb_disk sb;           /* the mount-time copy (geometry) */
	bool rdonly;
	uint64_t wdrop_syncfs;          /* fs_bdev_dropped at the last
					   fs_syncfs (atomic) */
	bool noatime, strictatime, nodiratime;
	bool repair_mount;              /* FS_MOUNT_REPAIR */
	/* While a repair scan runs (suspect_watch): metadata blocks read
	 * where the device disagrees with itself (fs_bdev_suspect), and the
	 * first of them; all three atomic. */
	bool suspect_watch;
	uint64_t suspect_reads, suspect_first;
	uint32_t stripe;                /* allocation unit for large runs */
	struct fs_bcache bc;
	struct fs_journal j;
	struct fs_alloc alloc;
	struct fs_ichunks ichunks;
	pthread_rwlock_t ns_lock;
	pthread_mutex_t icache_lock;
	struct hcache icache;           /* struct fs_inode by number */
	pthread_mutex_t orphan_lock;
	uint64_t orphans_freed;
	bool was_clean;
	bool sb0_damaged;       /* superblock copy 0 failed its check at
				   mount (rewritten from copy 1 unless
				   read-only) */
	uint64_t next_fh;
	struct fs_reports reports;
};

#endif
