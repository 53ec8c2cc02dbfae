/*
 * inode: inodes in their table blocks (found through ichunk.c), the
 * in-memory inode cache and the orphan list.
 *
 * Usage: fs_iget -> lock ip->lock -> read or change ip->d, fs_inode_dirty
 * inside a transaction -> unlock -> fs_iput, which evict.c implements.
 *
 * An inode stays in memory while it has references (refs), kernel lookups
 * (nlookup) or open handles (nopen), and idle ones too while the cache
 * holds fewer than ICACHE_LIMIT (the hash is common/hcache.h's; idle
 * inodes need no LRU: over the limit, an inode leaves as it becomes idle,
 * once its changes have committed).  When the last use of an inode whose link
 * count is 0 goes, fs_inode_unref tells fs_iput to free it on disk first:
 * freeing needs file, dir and xattr, which sit above this file, so evict.c
 * does it.
 * From the moment its link count reaches 0 until it is freed it is listed
 * in the orphan B+tree (root in the superblock), so that mount can free
 * what a crash left behind; the same list marks a long truncate in progress
 * (nlink > 0).
 *
 * Locking: icache_lock guards the cache (common/hcache.h), refs, nlookup,
 * nopen and dead; orphan_lock the orphan tree.
 */
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "fs_int.h"

#define ICACHE_LIMIT 65536
#define ICACHE_BUCKETS 16381

int fs_icache_init(struct fs *fs)
{
	pthread_mutex_init(&fs->icache_lock, NULL);
	pthread_mutex_init(&fs->orphan_lock, NULL);
	return hc_init(&fs->icache, ICACHE_BUCKETS);
}

static void inode_destroy(struct fs_inode *ip)
{
	pthread_rwlock_destroy(&ip->lock);
	free(ip);
}

static void icache_destroy_one(struct hc_node *n, void *arg)
{
	inode_destroy(hc_entry(n, struct fs_inode, node));
}

void fs_icache_destroy(struct fs *fs)
{
	if (!fs->icache.tab)
		return;
	hc_fini(&fs->icache, icache_destroy_one, NULL);
	pthread_mutex_destroy(&fs->icache_lock);
	pthread_mutex_destroy(&fs->orphan_lock);
}

/* Caller holds icache_lock: ino with one more reference, or NULL. */
static struct fs_inode *ic_get(struct fs *fs, uint64_t ino)
{
	struct hc_node *n = hc_find(&fs->icache, ino);
	struct fs_inode *ip;

	if (!n)
		return NULL;
	ip = hc_entry(n, struct fs_inode, node);
	ip->refs++;
	return ip;
}

/* ---- encoding ---------------------------------------------------------- */
static void ts_enc(struct fs_ts_disk *d, const struct timespec *t)
{
	d->sec = (int64_t)fs_cpu64((uint64_t)t->tv_sec);
	d->nsec = fs_cpu32((uint32_t)t->tv_nsec);
	d->reserved = 0;
}

static void ts_dec(struct timespec *t, const struct fs_ts_disk *d)
{
	t->tv_sec = (time_t)fs_le64((uint64_t)d->sec);
	t->tv_nsec = (long)fs_le32(d->nsec);
}

static void inode_encode(const struct fs_dinode *c, uint64_t ino, bool used,
			 struct fs_inode_disk *d)
{
	uint32_t i;

	memset(d, 0, sizeof(*d));
	d->magic = fs_cpu16(used ? FS_INODE_MAGIC : 0);
	d->version = fs_cpu16(FS_VERSION_MAJOR << 8 | FS_VERSION_MINOR);
	d->mode = fs_cpu32(c->mode);
	d->uid = fs_cpu32(c->uid);
	d->gid = fs_cpu32(c->gid);
	d->nlink = fs_cpu32(c->nlink);
	d->flags = fs_cpu32(c->flags);
	d->ino = fs_cpu64(ino);
	d->generation = fs_cpu64(c->generation);
	d->size = fs_cpu64(c->size);
	d->blocks = fs_cpu64(c->blocks);
	d->rdev = fs_cpu64(c->rdev);
	d->xattr_root = fs_cpu64(c->xattr_root);
	d->xattr_depth = fs_cpu32(c->xattr_depth);
	d->parent = fs_cpu64(c->parent);
	ts_enc(&d->atime, &c->atime);
	ts_enc(&d->mtime, &c->mtime);
	ts_enc(&d->ctime, &c->ctime);
	ts_enc(&d->crtime, &c->crtime);
	d->map_root = fs_cpu64(c->map_root);
	d->map_depth = fs_cpu32(c->map_depth);
	d->nextents = fs_cpu32(c->nextents);
	for (i = 0; i < FS_INLINE_EXTENTS; i++) {
		d->ext[i].lblk = fs_cpu64(c->ext[i].lblk);
		d->ext[i].pblk = fs_cpu64(c->ext[i].pblk);
		d->ext[i].len = fs_cpu32(c->ext[i].len);
		d->ext[i].flags = fs_cpu32(c->ext[i].flags);
	}
	d->dir_entries = fs_cpu64(c->dir_entries);
	d->csum = 0;
	d->csum = fs_cpu64(fs_csum(d, sizeof(*d), ino));
}

/* Does src's checksum hold for inode number ino? */
static bool inode_csum_ok(const struct fs_inode_disk *src, uint64_t ino)
{
	struct fs_inode_disk d = *src;

	d.csum = 0;
	return fs_csum(&d, sizeof(d), ino) == fs_le64(src->csum);
}

bool fs_inode_block_proves(const void *block)
{
	const struct fs_inode_disk *in = block;
	unsigned sound = 0;

	for (unsigned i = 0; i < FS_INODES_PER_BLOCK; i++) {
		if (fs_le16(in[i].magic) != FS_INODE_MAGIC)
			continue;               /* free */
		if (fs_le64(in[i].ino) % FS_INODES_PER_BLOCK != i ||
		    !inode_csum_ok(&in[i], fs_le64(in[i].ino)))
			return false;
		sound++;
	}
	return sound > 0;
}

/* -ENOENT: the slot is free; -EUCLEAN: damaged. */
static int inode_decode(const struct fs_inode_disk *src, uint64_t ino,
			struct fs_dinode *c)
{
	struct fs_inode_disk d = *src;
	uint32_t i;

	if (fs_le16(d.magic) != FS_INODE_MAGIC)
		return -ENOENT;
	if (!inode_csum_ok(src, ino) || fs_le64(d.ino) != ino || fs_le32(d.nextents) > FS_INLINE_EXTENTS) {
		fs_log(LOG_ERR, "inode %llu fails its checksum",
		       (unsigned long long)ino);
		return -EUCLEAN;
	}
	memset(c, 0, sizeof(*c));
	c->mode = fs_le32(d.mode);
	c->uid = fs_le32(d.uid);
	c->gid = fs_le32(d.gid);
	c->nlink = fs_le32(d.nlink);
	c->flags = fs_le32(d.flags);
	c->generation = fs_le64(d.generation);
	c->size = fs_le64(d.size);
	c->blocks = fs_le64(d.blocks);
	c->rdev = fs_le64(d.rdev);
	c->xattr_root = fs_le64(d.xattr_root);
	c->xattr_depth = fs_le32(d.xattr_depth);
	c->parent = fs_le64(d.parent);
	ts_dec(&c->atime, &d.atime);
	ts_dec(&c->mtime, &d.mtime);
	ts_dec(&c->ctime, &d.ctime);
	ts_dec(&c->crtime, &d.crtime);
	c->map_root = fs_le64(d.map_root);
	c->map_depth = fs_le32(d.map_depth);
	c->nextents = fs_le32(d.nextents);
	for (i = 0; i < FS_INLINE_EXTENTS; i++) {
		c->ext[i].lblk = fs_le64(d.ext[i].lblk);
		c->ext[i].pblk = fs_le64(d.ext[i].pblk);
		c->ext[i].len = fs_le32(d.ext[i].len);
		c->ext[i].flags = fs_le32(d.ext[i].flags);
	}
	c->dir_entries = fs_le64(d.dir_entries);
	return 0;
}


static struct fs_inode_disk *itable_slot(struct fs_buf *b, uint64_t ino)
{
	return (struct fs_inode_disk *)(b->data +
		(ino % FS_INODES_PER_BLOCK) * FS_INODE_SIZE);
}

static int inode_write(struct fs *fs, struct fs_tx *tx, uint64_t ino,
		       const struct fs_dinode *c, bool used)
{
	uint64_t blk = fs_ichunk_blk(fs, ino);
	struct fs_buf *b;
	int err;

	FS_ASSERT(blk);
	err = bc_read(fs, blk, FS_BUF_ITABLE, &b);
	if (err)
		return err;
	fs_tx_dirty(fs, tx, b);
	inode_encode(c, ino, used, itable_slot(b, ino));
	bc_put(fs, b);
	return 0;
}

/* A change of st_blocks is counted where the inode is logged. */
static void blocks_note(struct fs_inode *ip)
{
	if (ip->d.blocks == ip->blocks_logged)
		return;
	ip->blocks_logged = ip->d.blocks;
	__atomic_add_fetch(&ip->blocks_gen, 1, __ATOMIC_RELAXED);
}

int fs_inode_dirty(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	ip->dirty_seq = ip->data_seq = tx->seq;
	blocks_note(ip);
	return inode_write(fs, tx, ip->ino, &ip->d, true);
}

int fs_inode_dirty_times(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	ip->dirty_seq = tx->seq;
	blocks_note(ip);
	return inode_write(fs, tx, ip->ino, &ip->d, true);
}

/* What chunk c's block must hold: every inode the chunk map says is in
 * use, sound and numbered for its slot; no other. */
struct chunk_proof {
	uint64_t c;
	uint16_t used;
};

static bool chunk_proves(void *ctx, const void *data)
{
	const struct chunk_proof *p = ctx;
	const struct fs_inode_disk *in = data;

	/* inode 0 is no inode: its bit is always set (ichunk.c) */
	for (unsigned i = p->c == 0 ? 1 : 0; i < FS_INODES_PER_BLOCK; i++) {
		bool used = p->used >> i & 1;

		if ((fs_le16(in[i].magic) == FS_INODE_MAGIC) != used)
			return false;
		if (used && (fs_le64(in[i].ino) != p->c * FS_INODES_PER_BLOCK + i ||
			     !inode_csum_ok(&in[i], fs_le64(in[i].ino))))
			return false;
	}
	return (p->c == 0 ? p->used & ~1u : p->used) != 0;
}

/*
 * Inode ino's slot, as read, is damaged or disagrees with the chunk map
 * (free where it says in use, or in use where it says free), though the
 * block verified against its checksum entry: the
 * block and its entry were rewritten together (a lost write of both,
 * damage resealed).  The array's other reading of the block is taken when
 * it holds exactly what the chunk map says this chunk holds - a proof tied
 * to this chunk and this block, which an inode chunk's own checksums are
 * not (a copy of any chunk would pass them: raidcore no longer takes them
 * as evidence, T2 D1).  0 when b now holds it.
 */
static int itable_reconsider(struct fs *fs, struct fs_buf *b, uint64_t ino)
{
	struct chunk_proof p = { .c = ino / FS_INODES_PER_BLOCK };
	uint64_t pblk;
	int err = -ENODATA;

	if (!fs_ichunk_find(fs, p.c, &pblk, &p.used) || pblk != b->blk)
		return err;
	pthread_mutex_lock(&b->lock);
	/* a block a transaction holds is newer than the media's */
	if (!__atomic_load_n(&b->tx_seq, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&b->jpins, __ATOMIC_RELAXED))
		err = fs_bdev_reconsider(fs->bdev, b->blk, chunk_proves, &p,
					 b->data);
	pthread_mutex_unlock(&b->lock);
	if (err == 0)
		fs_log(LOG_WARNING, "inode table block %llu (inodes %llu-%llu) "
		       "did not hold what the chunk map says; the array's "
		       "redundancy gave a copy that does: taken, and written "
		       "back", (unsigned long long)b->blk,
		       (unsigned long long)(p.c * FS_INODES_PER_BLOCK),
		       (unsigned long long)(p.c * FS_INODES_PER_BLOCK +
					    FS_INODES_PER_BLOCK - 1));
	return err;
}

void fs_itable_slot_check(struct fs *fs, struct fs_buf *b, uint64_t ino)
{
	const struct fs_inode_disk *d = itable_slot(b, ino);
	bool in_use = fs_le16(d->magic) == FS_INODE_MAGIC;

	/* damaged, or not what the chunk map says (in use where it says
	 * free: an old version of the chunk, V2 D3; free where it says in
	 * use) */
	if ((in_use && (!inode_csum_ok(d, ino) || fs_le64(d->ino) != ino)) ||
	    in_use != fs_inode_is_allocated(fs, ino))
		itable_reconsider(fs, b, ino);
}

static int inode_read(struct fs *fs, uint64_t ino, struct fs_dinode *c,
		      uint64_t *generation)
{
	uint64_t blk = fs_ichunk_blk(fs, ino);
	struct fs_buf *b;
	int err;

	if (!blk)
		return -ENOENT;
	err = bc_read(fs, blk, FS_BUF_ITABLE, &b);
	if (err)
		return err;
	fs_itable_slot_check(fs, b, ino);
	err = inode_decode(itable_slot(b, ino), ino, c);
	if (generation)
		*generation = fs_le64(itable_slot(b, ino)->generation);
	fs_ichunk_gen_note(fs, fs_le64(itable_slot(b, ino)->generation));
	bc_put(fs, b);
	return err;
}

static struct fs_inode *inode_alloc(struct fs *fs, uint64_t ino)
{
	struct fs_inode *ip = calloc(1, sizeof(*ip));

	if (!ip)
		return NULL;
	ip->ino = ino;
	ip->wdrop_seen = fs_bdev_dropped(fs->bdev);
	ip->refs = 1;
	pthread_rwlock_init(&ip->lock, NULL);
	return ip;
}

int fs_iget(struct fs *fs, uint64_t ino, struct fs_inode **out)
{
	struct fs_inode *ip, *other;
	int err;

	if (ino == 0)
		return -ENOENT;
	pthread_mutex_lock(&fs->icache_lock);
	ip = ic_get(fs, ino);
	pthread_mutex_unlock(&fs->icache_lock);
	if (ip) {
		*out = ip;
		return 0;
	}
	if (!fs_inode_is_allocated(fs, ino))
		return -ENOENT;
	ip = inode_alloc(fs, ino);
	if (!ip)
		return -ENOMEM;
	err = inode_read(fs, ino, &ip->d, NULL);
	if (err) {
		inode_destroy(ip);
		return err;
	}
	pthread_mutex_lock(&fs->icache_lock);
	other = ic_get(fs, ino);
	if (other) {
		inode_destroy(ip);
		ip = other;
	} else {
		hc_insert(&fs->icache, &ip->node, ino);
	}
	pthread_mutex_unlock(&fs->icache_lock);
	*out = ip;
	return 0;
}

/* An idle inode may leave the cache once its changes have committed: it
 * remembers an uncommitted shrink (fs_file_prepare_grow) and what fsync
 * must wait for (dirty_seq). */
static bool inode_may_forget(struct fs *fs, const struct fs_inode *ip)
{
	uint64_t done = __atomic_load_n(&fs->j.committed_seq, __ATOMIC_ACQUIRE);

	return ip->shrink_seq <= done && ip->dirty_seq <= done;
}

/*
 * Caller holds icache_lock; ip has just become idle (no reference, lookup
 * or open handle).  A freed inode dies (it has left the table already);
 * any other stays cached, unless the cache is over its limit and nothing
 * of it still waits for a commit.
 */
static void icache_idle(struct fs *fs, struct fs_inode *ip)
{
	if (!ip->dead && (fs->icache.count <= ICACHE_LIMIT ||
			  !inode_may_forget(fs, ip)))
		return;
	hc_remove(&fs->icache, &ip->node);
	inode_destroy(ip);
}

bool fs_inode_unref(struct fs *fs, struct fs_inode *ip)
{
	bool idle, must_free = false;

	pthread_mutex_lock(&fs->icache_lock);
	FS_ASSERT(ip->refs > 0);
	idle = ip->refs == 1 && ip->nlookup == 0 && ip->nopen == 0;
	if (idle && ip->d.nlink == 0 && !ip->dead && !fs->rdonly)
		must_free = true;
	else if (--ip->refs == 0 && idle)
		icache_idle(fs, ip);
	pthread_mutex_unlock(&fs->icache_lock);
	return must_free;
}

void fs_inode_unref_freed(struct fs *fs, struct fs_inode *ip)
{
	bool destroy;

	pthread_mutex_lock(&fs->icache_lock);
	FS_ASSERT(ip->refs > 0);
	destroy = --ip->refs == 0 && ip->dead;
	pthread_mutex_unlock(&fs->icache_lock);
	if (destroy)
		inode_destroy(ip);
}

void fs_inode_touch(struct fs_inode *ip, bool a, bool m, bool c)
{
	struct timespec now;

	fs_now(&now);
	if (a)
		ip->d.atime = now;
	if (m)
		ip->d.mtime = now;
	if (c)
		ip->d.ctime = now;
}

/* 32 random bits, never 0. */
static uint64_t gen_random(void)
{
	uint32_t r = 0;
	struct timespec ts;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		r = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u;
	}
	return r ? r : 1;
}

int fs_inode_new(struct fs *fs, struct fs_tx *tx, mode_t mode, uid_t uid,
		 gid_t gid, struct fs_inode **out)
{
	struct fs_dinode old;
	struct fs_inode *ip;
	uint64_t ino, gen = 0;
	int err;

	err = fs_alloc_inode(fs, tx, &ino);
	if (err)
		return err;
	ip = inode_alloc(fs, ino);
	if (!ip) {
		fs_free_inode(fs, tx, ino);
		return -ENOMEM;
	}
	(void)inode_read(fs, ino, &old, &gen);
	/* A slot never used (a new chunk, perhaps one given back and made
	 * again) has no generation to go on from: above every one this
	 * mount has seen (an inode the kernel may hold), and 32 random bits
	 * above that, as XFS gives a new chunk's inodes random generations
	 * (a file handle saved before a remount opened the new file in its
	 * old slot: a tester's find, V3; the kernel keeps 32 bits of it). */
	if (gen == 0)
		gen = fs_ichunk_gen_floor(fs) + gen_random();
	fs_ichunk_gen_note(fs, gen + 1);
	ip->d.mode = mode;
	ip->d.uid = uid;
	ip->d.gid = gid;
	ip->d.nlink = 1;
	ip->d.generation = gen + 1;
	fs_now(&ip->d.atime);
	ip->d.mtime = ip->d.ctime = ip->d.crtime = ip->d.atime;
	err = fs_inode_dirty(fs, tx, ip);
	if (err) {
		fs_free_inode(fs, tx, ino);
		inode_destroy(ip);
		return err;
	}
	pthread_mutex_lock(&fs->icache_lock);
	FS_ASSERT(!hc_find(&fs->icache, ino));
	hc_insert(&fs->icache, &ip->node, ino);
	pthread_mutex_unlock(&fs->icache_lock);
	*out = ip;
	return 0;
}

struct fs_inode *fs_icache_find(struct fs *fs, uint64_t ino)
{
	struct fs_inode *ip;

	pthread_mutex_lock(&fs->icache_lock);
	ip = ic_get(fs, ino);
	pthread_mutex_unlock(&fs->icache_lock);
	return ip;
}

/* Under icache_lock alone, no reference taken: callers hold locks that
 * an fs_iput (which may free an inode) must not run under (fuse_space.c's
 * space->lock). */
void fs_wb_settle(struct fs *fs, uint64_t ino)
{
	struct hc_node *n;

	pthread_mutex_lock(&fs->icache_lock);
	n = hc_find(&fs->icache, ino);
	if (n)
		fs_wb_acked(hc_entry(n, struct fs_inode, node));
	pthread_mutex_unlock(&fs->icache_lock);
}

int fs_inode_delete(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	int err;

	pthread_mutex_lock(&fs->icache_lock);
	hc_remove(&fs->icache, &ip->node);
	ip->dead = true;
	pthread_mutex_unlock(&fs->icache_lock);
	err = inode_write(fs, tx, ip->ino, &ip->d, false);
	if (!err)
		err = fs_free_inode(fs, tx, ip->ino);
	return err;
}

void fs_inode_ref(struct fs *fs, struct fs_inode *ip, int lookups, int opens)
{
	pthread_mutex_lock(&fs->icache_lock);
	ip->nlookup += (uint64_t)(int64_t)lookups;
	ip->nopen += (uint32_t)opens;
	pthread_mutex_unlock(&fs->icache_lock);
}

void fs_inode_named(struct fs *fs, struct fs_inode *ip, uint64_t dir,
		    uint64_t key)
{
	pthread_mutex_lock(&fs->icache_lock);
	ip->name_dir = dir;
	ip->name_key = key;
	pthread_mutex_unlock(&fs->icache_lock);
}

int fs_inode_name(struct fs *fs, struct fs_inode *ip, uint64_t *dir,
		  uint64_t *key)
{
	pthread_mutex_lock(&fs->icache_lock);
	*dir = ip->name_dir;
	*key = ip->name_key;
	pthread_mutex_unlock(&fs->icache_lock);
	return *dir ? 0 : -ENOENT;
}

void fs_inode_to_attr(struct fs *fs, const struct fs_inode *ip,
		      struct fs_attr *a)
{
	uint64_t bs = (uint64_t)fs->stripe * FS_BSIZE;

	memset(a, 0, sizeof(*a));
	a->ino = ip->ino;
	a->generation = ip->d.generation;
	a->mode = ip->d.mode;
	a->nlink = ip->d.nlink;
	a->uid = ip->d.uid;
	a->gid = ip->d.gid;
	a->rdev = (dev_t)ip->d.rdev;
	a->size = ip->d.size;
	a->blocks = ip->d.blocks * (FS_BSIZE / 512);
	a->atime = ip->d.atime;
	a->mtime = ip->d.mtime;
	a->ctime = ip->d.ctime;
	a->crtime = ip->d.crtime;
	a->blksize = (uint32_t)(bs > (1u << 20) ? (1u << 20) : bs);
}

/* ---- orphan list --------------------------------------------------------- */
/* Runs op on the orphan tree whose root lives in the superblock. */
static int orphan_op(struct fs *fs, struct fs_tx *tx, uint64_t ino, bool add)
{
	struct fs_orphan_disk rec = { fs_cpu64(ino), 0 };
	struct fs_sb_disk *sb;
	struct fs_buf *b;
	uint64_t root;
	uint32_t depth;
	struct fs_bt t;
	int err;

	pthread_mutex_lock(&fs->orphan_lock);
	err = fs_sb_get(fs, &b);
	if (err)
		goto out;
	sb = (struct fs_sb_disk *)b->data;
	root = fs_le64(sb->orphan_root);
	depth = fs_le32(sb->orphan_depth);
	t = (struct fs_bt){ fs, &root, &depth, sizeof(rec), FS_TREE_ORPHAN,
			    0, NULL, 0 };
	err = add ? fs_bt_insert(&t, tx, &rec) : fs_bt_delete(&t, tx, ino);
	fs_tx_dirty(fs, tx, b);
	sb->orphan_root = fs_cpu64(root);
	sb->orphan_depth = fs_cpu32(depth);
	bc_put(fs, b);
out:
	pthread_mutex_unlock(&fs->orphan_lock);
	return err;
}

int fs_orphan_add(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	int err = 0;

	if (!ip->orphan)
		err = orphan_op(fs, tx, ip->ino, true);
	if (!err || err == -EEXIST)
		ip->orphan = true;
	return err == -EEXIST ? 0 : err;
}

int fs_orphan_del(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	int err = 0;

	if (ip->orphan)
		err = orphan_op(fs, tx, ip->ino, false);
	ip->orphan = false;
	return err == -ENOENT ? 0 : err;
}

/* Runs find on the orphan tree: the first orphan at or after from. */
int fs_orphan_next(struct fs *fs, uint64_t from, uint64_t *ino)
{
	struct fs_orphan_disk rec;
	struct fs_sb_disk *sb;
	struct fs_buf *b;
	uint64_t root;
	uint32_t depth;
	struct fs_bt t;
	int err;

	err = fs_sb_get(fs, &b);
	if (err)
		return err;
	sb = (struct fs_sb_disk *)b->data;
	root = fs_le64(sb->orphan_root);
	depth = fs_le32(sb->orphan_depth);
	bc_put(fs, b);
	t = (struct fs_bt){ fs, &root, &depth, sizeof(rec), FS_TREE_ORPHAN,
			    0, NULL, 0 };
	err = fs_bt_find(&t, from, FS_BT_GE, &rec);
	if (!err)
		*ino = fs_le64(rec.key);
	return err;
}

void fs_inode_root_encode(uint8_t *itable, uint64_t now_ns)
{
	struct fs_dinode c;

	memset(&c, 0, sizeof(c));
	c.mode = S_IFDIR | 0755;
	c.nlink = 2;
	c.parent = FS_ROOT_INO;
	c.generation = 1;
	c.atime.tv_sec = (time_t)(now_ns / 1000000000ull);
	c.atime.tv_nsec = (long)(now_ns % 1000000000ull);
	c.mtime = c.ctime = c.crtime = c.atime;
	inode_encode(&c, FS_ROOT_INO, true, (struct fs_inode_disk *)(itable +
		     FS_ROOT_INO * FS_INODE_SIZE));
}

int fs_inode_format_root(struct fs_bdev *bdev, uint64_t chunk0,
			 uint64_t now_ns)
{
	uint8_t *b;
	int err;

	if (posix_memalign((void **)&b, 4096, FS_BSIZE))
		return -ENOMEM;
	memset(b, 0, FS_BSIZE);
	fs_inode_root_encode(b, now_ns);
	err = fs_bdev_write(bdev, chunk0, 1, b);
	free(b);
	return err;
}

/* ---- several inode locks at once ----------------------------------------- */
static int cmp_ino(const void *a, const void *b)
{
	uint64_t x = (*(struct fs_inode *const *)a)->ino;
	uint64_t y = (*(struct fs_inode *const *)b)->ino;

	return x < y ? -1 : x > y;
}

void fs_lockset_add(struct fs_lockset *s, struct fs_inode *ip)
{
	int i;

	if (!ip)
		return;
	for (i = 0; i < s->n; i++)
		if (s->ip[i] == ip)
			return;
	FS_ASSERT(s->n < FS_LOCKSET_MAX);
	s->ip[s->n++] = ip;
}

void fs_lockset_lock(struct fs_lockset *s)
{
	int i;

	qsort(s->ip, (size_t)s->n, sizeof(s->ip[0]), cmp_ino);
	for (i = 0; i < s->n; i++)
		pthread_rwlock_wrlock(&s->ip[i]->lock);
}

void fs_lockset_unlock(struct fs_lockset *s)
{
	int i;

	for (i = s->n; i-- > 0;)
		pthread_rwlock_unlock(&s->ip[i]->lock);
}
