/*
 * super: format, mount, unmount, statfs.
 *
 * The superblock has two copies, blocks 0 and 1.  Copy 0 is a journalled
 * metadata block (it holds the orphan tree root and the state); copy 1 is
 * rewritten from copy 0 at format and at clean unmount, and is read only
 * when copy 0 fails its checks.
 */
#include <string.h>
#include <uuid/uuid.h>
#include "fs_int.h"

#define FS_MIN_BLOCKS 1024

/* chunk0: the block of inodes 0..15 (root: 1), ichunk_leaf: the chunk
 * map's only leaf; both the first blocks of the data area. */
struct fs_layout {
	uint64_t blocks, inodes, journal_blocks;
	uint64_t bbitmap_start, bbitmap_blocks, data_start;
	uint64_t chunk0, ichunk_leaf;
};

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* The inode number limit (sb.inodes): mke2fs's -N (files) or -i (bytes
 * per inode) made a maximum; by default as many as the blocks could hold,
 * which space reaches first. */
static uint64_t layout_inodes(uint64_t blocks, const struct fs_format_params *p)
{
	uint64_t n = blocks * FS_INODES_PER_BLOCK;

	if (p->inodes)
		n = p->inodes + 2;
	else if (p->bytes_per_inode)
		n = blocks * FS_BSIZE / p->bytes_per_inode;
	if (n < FS_INODES_PER_BLOCK)
		n = FS_INODES_PER_BLOCK;
	if (n > (1ull << 40))
		n = 1ull << 40;
	return div_up(n, FS_INODES_PER_BLOCK) * FS_INODES_PER_BLOCK;
}

static int layout_compute(struct fs_bdev *bdev,
			  const struct fs_format_params *p,
			  struct fs_layout *l)
{
	uint32_t stripe = bdev->stripe_blocks ? bdev->stripe_blocks : 1;

	l->blocks = bdev->blocks;
	if (l->blocks < FS_MIN_BLOCKS)
		return -ENOSPC;
	l->inodes = layout_inodes(l->blocks, p);
	l->journal_blocks = p->journal_blocks;
	if (!l->journal_blocks) {
		l->journal_blocks = l->blocks / 64;
		if (l->journal_blocks < 256)
			l->journal_blocks = 256;
		if (l->journal_blocks > 32768)
			l->journal_blocks = 32768;
	}
	if (l->journal_blocks < 64 || l->journal_blocks > l->blocks / 4)
		return -EINVAL;
	l->bbitmap_start = 2 + l->journal_blocks;
	l->bbitmap_blocks = div_up(l->blocks, FS_BITS_PER_BITMAP);
	l->data_start = div_up(l->bbitmap_start + l->bbitmap_blocks, stripe) *
			stripe;
	l->chunk0 = l->data_start;
	l->ichunk_leaf = l->data_start + 1;
	if (l->data_start + 64 > l->blocks)
		return -ENOSPC;
	return 0;
}

static void sb_fill(struct fs_sb_disk *sb, const struct fs_layout *l,
		    const struct fs_format_params *p, uint32_t stripe)
{
	uint64_t now = fs_now_ns();

	memset(sb, 0, sizeof(*sb));
	sb->magic = fs_cpu64(FS_SB_MAGIC);
	sb->version_major = fs_cpu16(FS_VERSION_MAJOR);
	sb->version_minor = fs_cpu16(FS_VERSION_MINOR);
	sb->block_size = fs_cpu32(FS_BSIZE);
	memcpy(sb->uuid, p->uuid, 16);
	if (uuid_is_null(sb->uuid))
		uuid_generate(sb->uuid);
	memcpy(sb->label, p->label, sizeof(sb->label));
	sb->label[sizeof(sb->label) - 1] = '\0';
	sb->blocks = fs_cpu64(l->blocks);
	sb->inodes = fs_cpu64(l->inodes);
	sb->journal_start = fs_cpu64(2);
	sb->journal_blocks = fs_cpu64(l->journal_blocks);
	sb->bbitmap_start = fs_cpu64(l->bbitmap_start);
	sb->bbitmap_blocks = fs_cpu64(l->bbitmap_blocks);
	sb->ichunk_root = fs_cpu64(l->ichunk_leaf);
	sb->ichunk_depth = fs_cpu32(1);
	sb->data_start = fs_cpu64(l->data_start);
	sb->stripe_blocks = fs_cpu32(stripe);
	sb->state = fs_cpu32(FS_STATE_CLEAN);
	sb->hash_seed = fs_cpu64(fs_csum(sb->uuid, 16, now));
	sb->ctime_ns = sb->wtime_ns = fs_cpu64(now);
}

/* Writes copy (0 or 1) of sb, sealed with its own seed. */
static int sb_write_copy(struct fs_bdev *bdev, const struct fs_sb_disk *src,
			 uint64_t copy)
{
	struct fs_sb_disk *sb;
	int err;

	if (posix_memalign((void **)&sb, 4096, FS_BSIZE))
		return -ENOMEM;
	memcpy(sb, src, FS_BSIZE);
	sb->wtime_ns = fs_cpu64(fs_now_ns());
	sb->csum = 0;
	sb->csum = fs_cpu64(fs_csum(sb, FS_BSIZE, copy));
	err = fs_bdev_write(bdev, copy, 1, sb);
	free(sb);
	return err;
}

int fs_format(struct fs_bdev *bdev, const struct fs_format_params *p)
{
	struct fs_format_params def = { 0 };
	struct fs_sb_disk *sb = NULL;
	struct fs_layout l;
	int err;

	if (!p)
		p = &def;
	err = layout_compute(bdev, p, &l);
	if (err)
		return err;
	if (posix_memalign((void **)&sb, 4096, FS_BSIZE))
		return -ENOMEM;
	sb_fill(sb, &l, p, bdev->stripe_blocks ? bdev->stripe_blocks : 1);
	err = fs_journal_format(bdev, 2, fs_le64(*(uint64_t *)sb->uuid));
	if (!err)
		err = fs_bitmap_format(bdev, l.bbitmap_start, l.bbitmap_blocks,
				       l.blocks, FS_BT_BBITMAP,
				       l.ichunk_leaf + 1);
	if (!err)
		err = fs_ichunk_format(bdev, l.ichunk_leaf, l.chunk0);
	if (!err)
		err = fs_inode_format_root(bdev, l.chunk0,
					   fs_le64(sb->ctime_ns));
	if (!err)
		err = fs_bdev_flush(bdev);
	if (!err)
		err = sb_write_copy(bdev, sb, 0);
	if (!err)
		err = fs_bdev_flush(bdev);
	if (!err)
		err = sb_write_copy(bdev, sb, 1);
	if (!err)
		err = fs_bdev_flush(bdev);
	free(sb);
	return err;
}

bool fs_sb_csum_ok(const struct fs_sb_disk *in, uint64_t copy)
{
	struct fs_sb_disk sb = *in;

	sb.csum = 0;
	return fs_csum(&sb, sizeof(sb), copy) == fs_le64(in->csum);
}

/* Checks one superblock copy; why says what is wrong. */
static int sb_check(const struct fs_sb_disk *in, uint64_t copy,
		    uint64_t dev_blocks, const char **why)
{
	struct fs_sb_disk sb = *in;

	*why = "no raidfs filesystem";
	if (fs_le64(sb.magic) != FS_SB_MAGIC)
		return -EINVAL;
	*why = "superblock checksum mismatch";
	if (!fs_sb_csum_ok(in, copy))
		return -EUCLEAN;
	*why = "on-disk format 1.x (extended attributes in one block per "
	       "inode, a fixed inode table) is older than this raidfs reads (2.0) and is not "
	       "upgraded in place: copy the files off with the raidfs that "
	       "made it, then mkfs.raidfs again";
	if (fs_le16(sb.version_major) < FS_VERSION_MAJOR)
		return -EOPNOTSUPP;
	*why = "newer on-disk format version or unknown incompatible features";
	if (fs_le16(sb.version_major) != FS_VERSION_MAJOR ||
	    (fs_le64(sb.feature_incompat) & ~FS_FEATURE_INCOMPAT_SUPP))
		return -EOPNOTSUPP;
	*why = "superblock geometry does not fit the device";
	if (fs_le32(sb.block_size) != FS_BSIZE ||
	    fs_le64(sb.blocks) > dev_blocks ||
	    fs_le64(sb.data_start) >= fs_le64(sb.blocks) ||
	    fs_le64(sb.journal_blocks) < 64 ||
	    fs_le64(sb.inodes) < FS_INODES_PER_BLOCK ||
	    fs_le64(sb.inodes) % FS_INODES_PER_BLOCK ||
	    fs_le64(sb.ichunk_root) < fs_le64(sb.data_start) ||
	    fs_le64(sb.ichunk_root) >= fs_le64(sb.blocks) ||
	    !fs_le32(sb.ichunk_depth))
		return -EUCLEAN;
	return 0;
}

/* Reads a superblock copy: through the cache once it exists, because a
 * read-only mount replays the journal into the cache only. */
static int sb_read(struct fs *fs, uint64_t copy, uint8_t *out)
{
	struct fs_buf *b;
	int err;

	if (!bc_is_ready(fs) || copy)
		return fs_bdev_read(fs->bdev, copy, 1, out);
	err = bc_read(fs, 0, FS_BUF_SB, &b);
	if (err)
		return err;
	memcpy(out, b->data, FS_BSIZE);
	bc_put(fs, b);
	return 0;
}

/*
 * Copy 0 is damaged and copy 1 is in fs->sb: copy 0 becomes copy 1 again,
 * on disk before the journal is replayed (replay may then bring it up to
 * date), and in the cache when the cache exists (a read-only mount keeps
 * it there, pinned, instead of writing).
 */
static int sb_restore_copy0(struct fs *fs)
{
	struct fs_buf *b;
	int err = 0;

	if (!bc_is_ready(fs)) {
		if (!fs->rdonly)
			err = sb_write_copy(fs->bdev, &fs->sb, 0);
		return err ? err : fs->rdonly ? 0 : fs_bdev_flush(fs->bdev);
	}
	err = bc_new(fs, 0, &b);
	if (err)
		return err;
	memcpy(b->data, &fs->sb, FS_BSIZE);
	b->kind = FS_BUF_SB;
	if (fs->rdonly && !b->jpins)
		bc_pin(fs, b);
	bc_put(fs, b);
	return 0;
}

static int sb_load(struct fs *fs)
{
	const char *why = NULL;
	uint8_t *b;
	uint64_t copy;
	int err = -EINVAL, first = 0;

	if (posix_memalign((void **)&b, 4096, FS_BSIZE))
		return -ENOMEM;
	for (copy = 0; copy < 2; copy++) {
		err = sb_read(fs, copy, b);
		if (!err)
			err = sb_check((struct fs_sb_disk *)b, copy,
				       fs->bdev->blocks, &why);
		if (copy == 0)
			first = err;
		if (!err || err == -EOPNOTSUPP)
			break;
	}
	if (!err)
		memcpy(&fs->sb, b, FS_BSIZE);
	else
		fs_log(LOG_ERR, "cannot mount: %s", why ? why : "I/O error");
	if (!err && first) {
		fs_log(LOG_WARNING, "superblock copy 0 is damaged; "
		       "using copy 1");
		fs->sb0_damaged = true;
		err = sb_restore_copy0(fs);
	}
	free(b);
	if (!err && (fs_le64(fs->sb.feature_ro_compat) &
		     ~FS_FEATURE_RO_COMPAT_SUPP) && !fs->rdonly) {
		fs_log(LOG_ERR, "unknown read-only-compatible "
		       "features: mount read-only");
		err = -EROFS;
	}
	return err;
}

/* Journalled: marks the filesystem mounted (or clean). */
static int sb_set_state(struct fs *fs, enum fs_sb_state state)
{
	struct fs_sb_disk *sb;
	struct fs_buf *b;
	struct fs_tx *tx;
	int err;

	err = fs_tx_begin(fs, &tx);
	if (err)
		return err;
	err = fs_sb_get(fs, &b);
	if (!err) {
		fs_tx_dirty(fs, tx, b);
		sb = (struct fs_sb_disk *)b->data;
		sb->state = fs_cpu32(state);
		if (state == FS_STATE_MOUNTED) {
			sb->mount_count = fs_cpu64(fs_le64(sb->mount_count) + 1);
			sb->mtime_ns = fs_cpu64(fs_now_ns());
		}
		sb->wtime_ns = fs_cpu64(fs_now_ns());
		bc_put(fs, b);
	}
	fs_tx_end(fs, tx);
	return err;
}

static void fs_free(struct fs *fs)
{
	fs_icache_destroy(fs);
	if (fs->ichunks.v)
		fs_ichunk_destroy(fs);
	fs_alloc_destroy(fs);
	fs_journal_destroy(fs);
	bc_destroy(fs);
	pthread_rwlock_destroy(&fs->ns_lock);
	pthread_mutex_destroy(&fs->reports.lock);
	free(fs);
}

static int mount_rest(struct fs *fs)
{
	int err;

	/* Replay may have rewritten superblock copy 0. */
	err = sb_load(fs);
	if (!err)
		err = fs_icache_init(fs);
	if (!err)
		err = fs_alloc_load(fs);
	if (!err)
		err = fs_ichunk_load(fs);
	fs->was_clean = fs_le32(fs->sb.state) == FS_STATE_CLEAN;
	if (err || fs->rdonly)
		return err;
	err = sb_set_state(fs, FS_STATE_MOUNTED);
	if (!err)
		err = fs_orphans_process(fs);
	if (!err)
		err = fs_journal_sync(fs);
	if (!err)
		err = fs_journal_start(fs);
	return err;
}

int fs_mount_opts(struct fs_bdev *bdev, const struct fs_mount_opts *o,
		  struct fs **out)
{
	struct fs_mount_opts def = { 0 };
	struct fs *fs;
	int err;

	if (!o)
		o = &def;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->bdev = bdev;
	fs->rdonly = o->flags & FS_MOUNT_RDONLY;
	fs->wdrop_syncfs = fs_bdev_dropped(fs->bdev);
	fs->noatime = o->flags & FS_MOUNT_NOATIME;
	fs->strictatime = o->flags & FS_MOUNT_STRICTATIME;
	fs->nodiratime = o->flags & FS_MOUNT_NODIRATIME;
	fs->repair_mount = o->flags & FS_MOUNT_REPAIR;
	pthread_rwlock_init(&fs->ns_lock, NULL);
	pthread_mutex_init(&fs->reports.lock, NULL);
	err = sb_load(fs);
	if (!err)
		err = bc_init(fs, (o->cache_bytes ? o->cache_bytes :
				   64ull << 20) / FS_BSIZE);
	if (!err) {
		fs->stripe = bdev->stripe_blocks ? bdev->stripe_blocks :
			     fs_le32(fs->sb.stripe_blocks);
		if (!fs->stripe)
			fs->stripe = 1;
		err = fs_journal_load(fs);
		if (o->commit_interval_ms)
			fs->j.interval_ms = o->commit_interval_ms;
	}
	if (!err)
		err = mount_rest(fs);
	if (err) {
		fs_journal_shutdown(fs);
		fs_free(fs);
		return err;
	}
	*out = fs;
	return 0;
}

int fs_mount(struct fs_bdev *bdev, unsigned flags, struct fs **out)
{
	struct fs_mount_opts o = { .flags = flags };

	return fs_mount_opts(bdev, &o, out);
}

int fs_unmount(struct fs *fs)
{
	struct fs_buf *b;
	int err = 0, err2;

	if (!fs->rdonly && !fs->j.error)
		err = sb_set_state(fs, FS_STATE_CLEAN);
	err2 = fs_journal_shutdown(fs);
	if (!err)
		err = err2;
	if (!err && !fs->rdonly && !fs_sb_get(fs, &b)) {
		err = sb_write_copy(fs->bdev, (struct fs_sb_disk *)b->data, 1);
		bc_put(fs, b);
		if (!err)
			err = fs_bdev_flush(fs->bdev);
	}
	fs_free(fs);
	return err;
}

void fs_abandon(struct fs *fs)
{
	fs->rdonly = true;
	fs_journal_shutdown(fs);
	fs_free(fs);
}

int fs_get_info(struct fs *fs, struct fs_info *info)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->label, fs->sb.label, sizeof(info->label));
	info->label[sizeof(info->label) - 1] = '\0';
	memcpy(info->uuid, fs->sb.uuid, 16);
	info->blocks = fs_le64(fs->sb.blocks);
	info->inodes = fs_le64(fs->sb.inodes);
	info->inode_blocks = fs_ichunk_blocks(fs);
	info->replayed_txns = fs->j.replayed;
	info->orphans_freed = fs->orphans_freed;
	info->was_clean = fs->was_clean;
	info->rdonly = fs->rdonly;
	info->journal_lost = fs->j.lost;
	info->journal_reset = fs->j.reset;
	info->journal_lost_pos = fs->j.lost_pos;
	info->sb_copy0_damaged = fs->sb0_damaged;
	return 0;
}

int fs_statfs(struct fs *fs, struct statvfs *st)
{
	struct fs_alloc *a = &fs->alloc;
	uint64_t data = fs_le64(fs->sb.blocks) - fs_le64(fs->sb.data_start);
	uint64_t bfree, files, ffree;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&a->lock);
	bfree = a->free_blocks + a->pending_blocks;
	/* pending frees are available as in fs_space_avail: an allocation
	 * that needs them commits first (df showed a delete's space only
	 * after the next commit, up to 5 s later) */
	st->f_bavail = (a->free_blocks > a->reserve ?
			a->free_blocks - a->reserve : 0) + a->pending_blocks;
	/* a write takes FS_WRITE_SLACK more than its blocks: without them
	 * df showed 32 KiB free that nothing could be written to */
	st->f_bavail = st->f_bavail > FS_WRITE_SLACK ?
		       st->f_bavail - FS_WRITE_SLACK : 0;
	pthread_mutex_unlock(&a->lock);
	/* pending frees count, as in f_bfree: the estimate does not move
	 * when a commit releases them */
	fs_ichunk_counts(fs, bfree > a->reserve ? bfree - a->reserve : 0,
			 &files, &ffree);
	st->f_files = files;
	st->f_ffree = ffree;
	st->f_bsize = FS_BSIZE;
	st->f_frsize = FS_BSIZE;
	st->f_blocks = data;
	st->f_bfree = bfree;
	st->f_favail = st->f_ffree;
	st->f_fsid = fs_le64(*(uint64_t *)fs->sb.uuid);
	st->f_namemax = FS_NAME_MAX;
	if (fs->rdonly)
		st->f_flag |= ST_RDONLY;
	return 0;
}

uint64_t fs_space_avail(struct fs *fs)
{
	struct fs_alloc *a = &fs->alloc;
	uint64_t n;

	pthread_mutex_lock(&a->lock);
	n = a->free_blocks > a->reserve ? a->free_blocks - a->reserve : 0;
	n += a->pending_blocks;
	pthread_mutex_unlock(&a->lock);
	return n * FS_BSIZE;
}

void fs_space_keep(struct fs *fs, uint64_t bytes)
{
	pthread_mutex_lock(&fs->alloc.lock);
	fs->alloc.keep = (bytes + FS_BSIZE - 1) >> FS_BSHIFT;
	pthread_mutex_unlock(&fs->alloc.lock);
}

/* As Linux's syncfs, it also fails once when a write of file data was
 * dropped since the last one (fs_fsync names the file). */
int fs_syncfs(struct fs *fs)
{
	int err = fs_journal_sync(fs);
	uint64_t now = fs_bdev_dropped(fs->bdev);

	if (__atomic_exchange_n(&fs->wdrop_syncfs, now, __ATOMIC_RELAXED) != now)
		err = err ? err : -EIO;
	return err;
}
