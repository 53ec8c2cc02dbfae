/*
 * util: checksums, block headers, clocks, lists of block runs, messages
 * (fs_log, fs_set_logger) and the panic for broken invariants, shared by
 * every layer of the filesystem.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>
#include "fs_int.h"

static void (*fs_logger)(int level, const char *msg);

void fs_set_logger(void (*fn)(int level, const char *msg))
{
	fs_logger = fn;
}

void fs_log(int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (fs_logger)
		fs_logger(level, msg);
	else
		fprintf(stderr, "raidfs: %s\n", msg);
}

void fs_panic(const char *file, int line, const char *what)
{
	fs_log(LOG_CRIT, "invariant broken at %s:%d: %s", file, line, what);
	abort();
}

uint64_t fs_csum(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}

/* The kernel's clock for inode times (current_time(): the coarse clock,
 * FUSE has no fine-grained timestamps): the kernel sets mtime and ctime
 * of written files itself (writeback cache), and a finer clock here would
 * put a new file's atime after its mtime. */
void fs_now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME_COARSE, ts);
}

bool fs_ctx_in_group(const struct fs_ctx *ctx, gid_t g)
{
	if (!ctx || ctx->uid == 0 || ctx->gid == g)
		return true;
	return ctx->in_groups && ctx->in_groups(ctx, g);
}

uint64_t fs_now_ns(void)
{
	struct timespec ts;

	fs_now(&ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fs_bhdr_init(void *block, enum fs_btype type, uint64_t blk,
		  uint64_t owner)
{
	struct fs_bhdr *h = block;

	h->magic = fs_cpu32(FS_BLK_MAGIC);
	h->type = fs_cpu16((uint16_t)type);
	h->version = fs_cpu16(FS_VERSION_MAJOR << 8 | FS_VERSION_MINOR);
	h->csum = 0;
	h->blocknr = fs_cpu64(blk);
	h->owner = fs_cpu64(owner);
}

/* Seeds with the block number so a block written to the wrong place fails. */
void fs_bhdr_seal(void *block)
{
	struct fs_bhdr *h = block;

	h->csum = 0;
	h->csum = fs_cpu64(fs_csum(block, FS_BSIZE, fs_le64(h->blocknr)));
}

int fs_bhdr_check(const void *block, enum fs_btype type, uint64_t blk)
{
	const struct fs_bhdr *h = block;
	uint8_t tmp[FS_BSIZE];
	struct fs_bhdr *t = (struct fs_bhdr *)tmp;

	if (fs_le32(h->magic) != FS_BLK_MAGIC || fs_le16(h->type) != type ||
	    fs_le64(h->blocknr) != blk)
		return -EUCLEAN;
	if ((fs_le16(h->version) >> 8) != FS_VERSION_MAJOR)
		return -EUCLEAN;
	memcpy(tmp, block, FS_BSIZE);
	t->csum = 0;
	if (fs_csum(tmp, FS_BSIZE, blk) != fs_le64(h->csum))
		return -EUCLEAN;
	return 0;
}

struct meta_proof {
	enum fs_btype type;
	uint64_t blk;
};

static bool meta_proves(void *ctx, const void *data)
{
	const struct meta_proof *p = ctx;

	return fs_bhdr_check(data, p->type, p->blk) == 0;
}

int fs_meta_reconsider(struct fs_bdev *bdev, uint64_t blk,
		       enum fs_btype type, void *buf)
{
	struct meta_proof p = { .type = type, .blk = blk };
	int err = fs_bdev_reconsider(bdev, blk, meta_proves, &p, buf);

	if (err == 0)
		fs_log(LOG_WARNING, "metadata block %llu (type %d) failed its "
		       "checksum as read; the array's redundancy gave a copy "
		       "that holds: taken, and written back",
		       (unsigned long long)blk, type);
	return err;
}

bool fs_block_proves(const void *block, uint64_t blk)
{
	const struct fs_bhdr *h = block;
	struct fs_sb_disk sb;

	if (fs_le32(h->magic) == FS_BLK_MAGIC)
		return fs_bhdr_check(block, (enum fs_btype)fs_le16(h->type),
				     blk) == 0;
	memcpy(&sb, block, sizeof(sb));
	if (blk == 0 && fs_le64(sb.magic) == FS_SB_MAGIC)
		return fs_sb_csum_ok(&sb, 0);
	return false;
}

int fs_extlist_add(struct fs_extlist *l, uint64_t blk, uint64_t len)
{
	void *v;

	if (l->n && l->v[l->n - 1].blk + l->v[l->n - 1].len == blk) {
		l->v[l->n - 1].len += len;
		return 0;
	}
	if (l->n == l->cap) {
		v = realloc(l->v, (l->cap * 2 + 16) * sizeof(*l->v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = l->cap * 2 + 16;
	}
	l->v[l->n].blk = blk;
	l->v[l->n].len = len;
	l->n++;
	return 0;
}

void fs_extlist_free(struct fs_extlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
