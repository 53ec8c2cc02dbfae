/*
 * recovery: journal replay at mount (jbd2's recovery.c), and the journal
 * superblock that says where replay starts.
 *
 * Usage:
 *   fs_jgeom_init(&g, sb)                    where the journal is
 *   fs_journal_recover(bdev, &g, fn, arg, &r) replays; r says where the
 *                                            ring continues
 * It works on a bare bdev and geometry, with no mounted filesystem, so it
 * is testable alone (tests/unit/test_fs_journal.c).
 *
 * Replay applies every committed transaction from the journal superblock
 * on, in order.  A transaction is committed when its descriptors, its block
 * copies (each matching the checksum its descriptor records) and a commit
 * record with its sequence number, block count and the checksum of those
 * entries (tx_csum) are all in the ring; a missing or torn block, a wrong
 * sequence number, a record over other copies or a foreign journal id ends
 * replay there (what follows was never committed).  Applying a copy
 * writes it home, or hands it to fn (a read-only mount caches it instead).
 * After writing home, the blocks are flushed and the journal superblock is
 * moved past what was replayed, so the ring is empty again.
 *
 * Salvage (FS_RECOVER_SALVAGE, fsck's mounts): a journal superblock or a
 * ring block that cannot be read (lost beyond the array's redundancy) or
 * is damaged used to leave the filesystem unmountable for good.  Replay
 * now stops there instead (nothing of the journal superblock's: nothing
 * replayed) and the rest is given up, as e2fsck clears a bad journal; a
 * writing mount then zeros the whole ring (every lost block written anew,
 * nothing old left to read as a transaction) and starts it again.  The
 * filesystem is then as its home blocks left it, which fsck's scan checks.
 *
 * The commit side (commit.c) writes the same format and moves the journal
 * superblock forward at each checkpoint (fs_jsb_write).
 */
#include <stdlib.h>
#include <string.h>
#include "fs_int.h"

void fs_jgeom_init(struct fs_jgeom *g, const struct fs_sb_disk *sb)
{
	g->jsb_blk = fs_le64(sb->journal_start);
	g->ring_start = g->jsb_blk + 1;
	g->ring_blocks = fs_le64(sb->journal_blocks) - 1;
	g->id = fs_le64(*(const uint64_t *)sb->uuid);
}

int fs_jsb_write(struct fs_bdev *bdev, const struct fs_jgeom *g, uint64_t seq,
		 uint64_t pos)
{
	struct fs_jsb_disk *jsb;
	int err;

	if (posix_memalign((void **)&jsb, 4096, FS_BSIZE))
		return -ENOMEM;
	memset(jsb, 0, FS_BSIZE);
	fs_bhdr_init(jsb, FS_BT_JSB, g->jsb_blk, g->id);
	jsb->start_seq = fs_cpu64(seq);
	jsb->start_pos = fs_cpu64(pos);
	fs_bhdr_seal(jsb);
	err = fs_bdev_write(bdev, g->jsb_blk, 1, jsb);
	free(jsb);
	return err;
}

int fs_journal_format(struct fs_bdev *bdev, uint64_t start, uint64_t id)
{
	struct fs_jgeom g = { .jsb_blk = start, .id = id };

	return fs_jsb_write(bdev, &g, 1, 0);
}

/* Where replay starts: the journal superblock's sequence and position. */
static int jsb_read(struct fs_bdev *bdev, const struct fs_jgeom *g,
		    uint8_t *blk, uint64_t *seq, uint64_t *pos)
{
	struct fs_jsb_disk *jsb = (struct fs_jsb_disk *)blk;
	int err;

	err = fs_bdev_read(bdev, g->jsb_blk, 1, blk);
	if (err)
		return err;
	if (fs_bhdr_check(blk, FS_BT_JSB, g->jsb_blk) &&
	    fs_meta_reconsider(bdev, g->jsb_blk, FS_BT_JSB, blk) < 0)
		err = -EUCLEAN;
	if (err || fs_le64(jsb->h.owner) != g->id) {
		fs_log(LOG_ERR, "journal superblock is damaged");
		return -EUCLEAN;
	}
	*seq = fs_le64(jsb->start_seq);
	*pos = fs_le64(jsb->start_pos) % g->ring_blocks;
	return 0;
}

/* One transaction read from the ring: its copies and where they go. */
struct replay_tx {
	uint64_t *target;
	uint8_t *data;
	size_t n, cap;
	uint64_t acc;                   /* tx_csum of the entries read */
	uint64_t at;                    /* the ring position being read */
};

/* A read error that salvage stops at: the block is lost or damaged. */
static bool read_lost(int err)
{
	return err == -EIO || err == -EUCLEAN || err == -EBADMSG;
}

static int replay_grow(struct replay_tx *r)
{
	void *t, *d;
	size_t cap = r->cap * 2 + 64;

	t = realloc(r->target, cap * sizeof(*r->target));
	if (!t)
		return -ENOMEM;
	r->target = t;
	d = realloc(r->data, cap * FS_BSIZE);
	if (!d)
		return -ENOMEM;
	r->data = d;
	r->cap = cap;
	return 0;
}

/* Reads the descriptor at pos and its copies; -EAGAIN: not a descriptor. */
static int replay_desc(struct fs_bdev *bdev, const struct fs_jgeom *g,
		       uint64_t *pos, uint64_t seq, uint8_t *blk,
		       struct replay_tx *r)
{
	struct fs_jdesc_disk *d = (struct fs_jdesc_disk *)blk;
	uint32_t i, count;
	uint64_t csum;
	int err;

	if (fs_bhdr_check(blk, FS_BT_JDESC, fs_jring_blk(g, *pos)) ||
	    fs_le64(d->h.owner) != g->id || fs_le64(d->seq) != seq)
		return -EAGAIN;
	count = fs_le32(d->count);
	if (count > FS_JDESC_MAX)
		return -EAGAIN;
	for (i = 0; i < count; i++) {
		uint64_t target = fs_le64(d->e[i].target);

		if (r->n == r->cap && (err = replay_grow(r)))
			return err;
		r->at = *pos + 1 + i;
		err = fs_bdev_read(bdev, fs_jring_blk(g, *pos + 1 + i), 1,
				   r->data + r->n * FS_BSIZE);
		if (err)
			return err;
		csum = fs_le64(d->e[i].csum);
		if (target >= bdev->blocks ||
		    fs_csum(r->data + r->n * FS_BSIZE, FS_BSIZE, target) != csum)
			return -EAGAIN;
		r->acc = fs_csum(&csum, sizeof(csum), r->acc);
		r->target[r->n++] = target;
	}
	*pos += 1 + count;
	return 0;
}

static bool replay_commit_ok(const struct fs_jgeom *g, const uint8_t *blk,
			     uint64_t pos, uint64_t seq,
			     const struct replay_tx *r)
{
	const struct fs_jcommit_disk *c = (const void *)blk;

	return !fs_bhdr_check(blk, FS_BT_JCOMMIT, fs_jring_blk(g, pos)) &&
	       fs_le64(c->h.owner) == g->id &&
	       fs_le64(c->seq) == seq && fs_le64(c->nblocks) == r->n &&
	       fs_le64(c->tx_csum) == r->acc;
}

/* Reads one transaction at *pos; 1 if complete, 0 if not there. */
static int replay_read_tx(struct fs_bdev *bdev, const struct fs_jgeom *g,
			  uint64_t *pos, uint64_t seq, uint8_t *blk,
			  struct replay_tx *r)
{
	uint64_t p = *pos;
	int err;

	r->n = 0;
	r->acc = 0;
	for (;;) {
		if (p - *pos > g->ring_blocks)
			return 0;
		r->at = p;
		err = fs_bdev_read(bdev, fs_jring_blk(g, p), 1, blk);
		if (err)
			return err;
		err = replay_desc(bdev, g, &p, seq, blk, r);
		if (err == -EAGAIN)
			break;
		if (err)
			return err;
	}
	if (!replay_commit_ok(g, blk, p, seq, r))
		return 0;
	*pos = p + 1;
	return 1;
}

static int replay_apply(struct fs_bdev *bdev, const struct replay_tx *r,
			fs_replay_fn fn, void *arg)
{
	size_t i;
	int err = 0;

	for (i = 0; i < r->n && !err; i++)
		err = fn ? fn(arg, r->target[i], r->data + i * FS_BSIZE) :
		      fs_bdev_write(bdev, r->target[i], 1,
				    r->data + i * FS_BSIZE);
	return err;
}

/* Applies every committed transaction from out->seq, out->pos on. */
static int replay_all(struct fs_bdev *bdev, const struct fs_jgeom *g,
		      uint8_t *blk, fs_replay_fn fn, void *arg, bool salvage,
		      struct fs_replay *out)
{
	struct replay_tx r = { 0 };
	int err;

	while ((err = replay_read_tx(bdev, g, &out->pos, out->seq, blk,
				     &r)) == 1) {
		err = replay_apply(bdev, &r, fn, arg);
		if (err)
			break;
		out->seq++;
		out->txns++;
	}
	if (err < 0 && salvage && read_lost(err)) {
		fs_log(LOG_WARNING, "journal ring block %llu cannot be read: "
		       "replay stops there, what follows is given up%s",
		       (unsigned long long)(r.at % g->ring_blocks),
		       out->txns || !out->clean ? "" : " (the filesystem was "
		       "unmounted cleanly: nothing was there to replay)");
		out->lost = true;
		out->lost_pos = r.at % g->ring_blocks;
		err = 0;
	}
	free(r.target);
	free(r.data);
	out->pos %= g->ring_blocks;
	return err;
}

/* Replayed blocks durable, then the ring is empty again. */
static int replay_retire(struct fs_bdev *bdev, const struct fs_jgeom *g,
			 struct fs_replay *out)
{
	int err = fs_bdev_flush(bdev);

	if (!err)
		err = fs_jsb_write(bdev, g, out->seq, out->pos);
	if (!err)
		err = fs_bdev_flush(bdev);
	if (!err)
		out->tail = out->pos;
	return err;
}

/* Salvage: the ring zeroed (its lost blocks written anew, nothing left
 * that reads as a transaction), then started again at 0. */
static int journal_reset(struct fs_bdev *bdev, const struct fs_jgeom *g,
			 struct fs_replay *out)
{
	enum { CHUNK = 64 };
	uint8_t *zero;
	uint64_t p, n;
	int err = 0;

	if (posix_memalign((void **)&zero, 4096, CHUNK * FS_BSIZE))
		return -ENOMEM;
	memset(zero, 0, CHUNK * FS_BSIZE);
	for (p = 0; p < g->ring_blocks && !err; p += n) {
		n = g->ring_blocks - p < CHUNK ? g->ring_blocks - p : CHUNK;
		err = fs_bdev_write(bdev, g->ring_start + p, (uint32_t)n, zero);
	}
	free(zero);
	out->pos = 0;
	if (!err)
		err = replay_retire(bdev, g, out);
	if (!err)
		out->reset = true;
	return err;
}

int fs_journal_recover(struct fs_bdev *bdev, const struct fs_jgeom *g,
		       fs_replay_fn fn, void *arg, unsigned flags,
		       struct fs_replay *out)
{
	bool salvage = flags & (FS_RECOVER_SALVAGE | FS_RECOVER_CLEAN);
	uint8_t *blk = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	out->clean = flags & FS_RECOVER_CLEAN;
	if (posix_memalign((void **)&blk, 4096, FS_BSIZE))
		return -ENOMEM;
	err = jsb_read(bdev, g, blk, &out->seq, &out->pos);
	if (err && salvage && read_lost(err)) {
		fs_log(LOG_WARNING, "journal superblock cannot be read or is damaged: the "
		       "journal's transactions are given up");
		out->lost = true;
		out->lost_pos = UINT64_MAX;
		out->seq = 1;
		out->pos = 0;
		err = 0;
	} else if (!err) {
		out->tail = out->pos;
		err = replay_all(bdev, g, blk, fn, arg, salvage, out);
	}
	if (!err && out->lost && !fn)
		err = journal_reset(bdev, g, out);
	else if (!err && out->txns && !fn)
		err = replay_retire(bdev, g, out);
	free(blk);
	return err;
}
