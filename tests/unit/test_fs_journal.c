/*
 * test_fs_journal: journal replay (fs/recovery.c) on its own.
 *
 * A filesystem on an in-memory image is checkpointed (every block home,
 * ring empty) and the image kept as a snapshot; metadata-only operations
 * are then committed, each phase by one sync, and the image kept after
 * each.  The commit code has written those transactions to the ring (and
 * their copies home).  A fresh image made of the snapshot plus the journal
 * region is handed to fs_journal_recover alone - no mount - and must come
 * out equal, block by block, to the image after the last commit; with the
 * last transaction's commit record torn or missing, or one of its block
 * copies torn, replay must stop before that transaction and give the image
 * after the phase before.
 *
 * The images are this file's own (struct img), independent of the memory
 * device of fs/bdev_mem.c.
 */
#include "fs_test_util.h"
#include "fs_int.h"

#define ROOT FS_ROOT_INO
#define NBLOCKS 4096u

/* ---- a plain in-memory image ------------------------------------------- */
struct img {
	struct fs_bdev bdev;
	uint8_t *data;
	uint64_t lost;                  /* a block that reads -EIO until
					   written (UINT64_MAX: none) */
};

static int img_read(struct fs_bdev *b, uint64_t blk, uint32_t n, void *buf)
{
	struct img *im = b->ctx;

	if (blk + n > b->blocks || (im->lost >= blk && im->lost < blk + n))
		return -EIO;
	memcpy(buf, im->data + blk * FS_BSIZE, (size_t)n * FS_BSIZE);
	return 0;
}

static int img_write(struct fs_bdev *b, uint64_t blk, uint32_t n,
		     const void *buf)
{
	struct img *im = b->ctx;

	if (blk + n > b->blocks)
		return -EIO;
	if (im->lost >= blk && im->lost < blk + n)
		im->lost = UINT64_MAX;
	memcpy(im->data + blk * FS_BSIZE, buf, (size_t)n * FS_BSIZE);
	return 0;
}

static int img_flush(struct fs_bdev *b)
{
	return 0;
}

static void img_close(struct fs_bdev *b)
{
}

static const struct fs_bdev_ops img_ops = {
	.read = img_read, .write = img_write, .flush = img_flush,
	.close = img_close,
};

static struct img *img_new(const struct img *from)
{
	struct img *im = calloc(1, sizeof(*im));

	assert_non_null(im);
	im->data = calloc(NBLOCKS, FS_BSIZE);
	assert_non_null(im->data);
	if (from)
		memcpy(im->data, from->data, (size_t)NBLOCKS * FS_BSIZE);
	im->bdev = (struct fs_bdev){ &img_ops, im, NBLOCKS, 1 };
	im->lost = UINT64_MAX;
	return im;
}

static void img_free(struct img *im)
{
	free(im->data);
	free(im);
}

static uint8_t *img_blk(struct img *im, uint64_t blk)
{
	return im->data + blk * FS_BSIZE;
}

/* ---- the journal written by the commit code ---------------------------- */
struct journal_fixture {
	struct img *snap;               /* after the checkpoint */
	struct img *after[2];           /* after each phase's commit */
	struct fs_jgeom g;
	uint64_t txns[2];               /* transactions each phase committed */
	uint64_t head[2];               /* ring position after each phase */
};

/* Phase 0: names, a directory, attributes; phase 1: one more change. */
static void phase(struct tfs *t, int n)
{
	struct fs_attr a, in = { .mode = 0600 };
	uint64_t d, f;
	char name[16];
	int i;

	if (n == 0) {
		d = tfs_mkdir(t, ROOT, "d");
		for (i = 0; i < 8; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			assert_int_equal(fs_mknod(t->fs, &t->ctx, d, name,
						  S_IFREG | 0644, 0, &a), 0);
			fs_forget(t->fs, a.ino, 1);
		}
		f = tfs_lookup(t, d, "f3");
		assert_int_equal(fs_setxattr(t->fs, &t->ctx, f, "user.k", "v",
					     1, 0), 0);
		assert_int_equal(fs_rename(t->fs, d, "f4", ROOT, "moved", 0),
				 0);
		assert_int_equal(fs_unlink(t->fs, d, "f5"), 0);
	} else {
		f = tfs_lookup(t, ROOT, "moved");
		assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_MODE,
					    NULL), 0);
		assert_int_equal(fs_link(t->fs, f, ROOT, "again", &a), 0);
		fs_forget(t->fs, a.ino, 1);
	}
}

static void fixture_make(struct journal_fixture *jf)
{
	struct fs_mount_opts o = { .commit_interval_ms = 3600 * 1000 };
	struct tfs t = { .ctx = { 1000, 1000, 022 } };
	struct img *im = img_new(NULL);
	uint64_t seq;
	int n;

	t.bdev = &im->bdev;
	assert_int_equal(fs_format(t.bdev, NULL), 0);
	assert_int_equal(fs_mount_opts(t.bdev, &o, &t.fs), 0);
	assert_int_equal(fs_journal_checkpoint(t.fs), 0);
	jf->snap = img_new(im);
	seq = t.fs->j.committed_seq;
	for (n = 0; n < 2; n++) {
		phase(&t, n);
		assert_int_equal(fs_syncfs(t.fs), 0);
		jf->txns[n] = t.fs->j.committed_seq - seq;
		seq = t.fs->j.committed_seq;
		jf->head[n] = t.fs->j.head;
		jf->after[n] = img_new(im);
	}
	/* Phase 1 is one transaction: its commit record ends the ring. */
	assert_true(jf->txns[0] >= 1);
	assert_int_equal(jf->txns[1], 1);
	fs_jgeom_init(&jf->g, (const struct fs_sb_disk *)img_blk(im, 0));
	fs_abandon(t.fs);               /* a power cut: nothing more written */
	img_free(im);
}

static void fixture_free(struct journal_fixture *jf)
{
	img_free(jf->snap);
	img_free(jf->after[0]);
	img_free(jf->after[1]);
}

static bool in_journal(const struct fs_jgeom *g, uint64_t blk)
{
	return blk >= g->jsb_blk && blk < g->ring_start + g->ring_blocks;
}

/* The snapshot with the journal region as the commit code left it. */
static struct img *image_to_replay(const struct journal_fixture *jf)
{
	struct img *im = img_new(jf->snap);
	uint64_t b;

	for (b = jf->g.jsb_blk; b < jf->g.ring_start + jf->g.ring_blocks; b++)
		memcpy(img_blk(im, b), img_blk(jf->after[1], b), FS_BSIZE);
	return im;
}

/* Blocks outside the journal that differ between a and b. */
static uint64_t count_changed(const struct journal_fixture *jf,
			      struct img *a, struct img *b)
{
	uint64_t blk, n = 0;

	for (blk = 0; blk < NBLOCKS; blk++)
		if (!in_journal(&jf->g, blk) &&
		    memcmp(img_blk(a, blk), img_blk(b, blk), FS_BSIZE))
			n++;
	return n;
}

/* Every block outside the journal equals want's. */
static void assert_home_equal(const struct journal_fixture *jf,
			      struct img *got, struct img *want)
{
	assert_int_equal(count_changed(jf, got, want), 0);
}

/* The replayed image mounts, is consistent and holds phase 1's names. */
static void assert_mounts(struct img *im, bool phase1)
{
	struct tfs t = { .bdev = &im->bdev, .ctx = { 1000, 1000, 022 } };
	struct fs_info info;

	tfs_mount(&t);
	assert_int_equal(fs_get_info(t.fs, &info), 0);
	assert_int_equal(info.replayed_txns, 0);       /* the ring is empty */
	tfs_check(&t);
	assert_true(tfs_lookup(&t, ROOT, "moved") != 0);
	assert_int_equal(tfs_lookup(&t, ROOT, "again") != 0, phase1);
	tfs_umount(&t);
}

/* ---- tests ------------------------------------------------------------- */
static void test_replay_rebuilds_every_block(void **state)
{
	struct journal_fixture jf;
	struct fs_replay r;
	struct img *im;

	fixture_make(&jf);
	/* the phases changed metadata at home, so replay has work to do */
	assert_true(count_changed(&jf, jf.snap, jf.after[1]) > 0);
	im = image_to_replay(&jf);
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, NULL, NULL, 0, &r),
			 0);
	assert_int_equal(r.txns, jf.txns[0] + jf.txns[1]);
	assert_int_equal(r.pos, jf.head[1]);
	assert_int_equal(r.tail, r.pos);
	assert_home_equal(&jf, im, jf.after[1]);
	/* the journal superblock now starts past it all: nothing again */
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, NULL, NULL, 0, &r),
			 0);
	assert_int_equal(r.txns, 0);
	assert_home_equal(&jf, im, jf.after[1]);
	assert_mounts(im, true);
	img_free(im);
	fixture_free(&jf);
}

/* What a read-only mount does: copies go to fn, the device stays as is. */
static int apply_to(void *arg, uint64_t blk, const uint8_t *data)
{
	struct img *to = arg;

	memcpy(img_blk(to, blk), data, FS_BSIZE);
	return 0;
}

static void test_replay_to_callback_writes_nothing(void **state)
{
	struct journal_fixture jf;
	struct img *im, *before, *to;
	struct fs_replay r;

	fixture_make(&jf);
	im = image_to_replay(&jf);
	before = img_new(im);
	to = img_new(jf.snap);
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, apply_to, to, 0,
					    &r), 0);
	assert_int_equal(r.txns, jf.txns[0] + jf.txns[1]);
	assert_int_equal(memcmp(im->data, before->data,
				(size_t)NBLOCKS * FS_BSIZE), 0);
	assert_home_equal(&jf, to, jf.after[1]);
	img_free(to);
	img_free(before);
	img_free(im);
	fixture_free(&jf);
}

/* Damage to the last transaction: replay ends before it. */
enum damage { TORN_COMMIT, MISSING_COMMIT, TORN_COPY, FOREIGN_COMMIT,
	      OTHER_COPY };

static void damage_last(struct journal_fixture *jf, struct img *im,
			enum damage how)
{
	uint64_t last = jf->head[1] + jf->g.ring_blocks - 1;
	uint64_t commit = fs_jring_blk(&jf->g, last);
	uint64_t copy = fs_jring_blk(&jf->g, jf->head[0] + 1);
	struct fs_jcommit_disk *c = (void *)img_blk(im, commit);
	struct fs_jdesc_disk *d = (void *)img_blk(im, copy - 1);

	switch (how) {
	case TORN_COMMIT:
		img_blk(im, commit)[100] ^= 0x40;
		break;
	case MISSING_COMMIT:
		memset(img_blk(im, commit), 0, FS_BSIZE);
		break;
	case TORN_COPY:
		img_blk(im, copy)[FS_BSIZE - 1] ^= 0x01;
		break;
	case FOREIGN_COMMIT:            /* a well-formed record of another
					   transaction number */
		c->seq = fs_cpu64(fs_le64(c->seq) + 1);
		fs_bhdr_seal(c);
		break;
	case OTHER_COPY:                /* descriptor and copy agree, but not
					   with the commit record: a stale
					   record of a torn transaction met
					   by a later one of the same number
					   (commits with one flush, commit.c) */
		img_blk(im, copy)[FS_BSIZE - 1] ^= 0x01;
		d->e[0].csum = fs_cpu64(fs_csum(img_blk(im, copy), FS_BSIZE,
						fs_le64(d->e[0].target)));
		fs_bhdr_seal(d);
		break;
	}
}

static void test_damaged_last_transaction_ends_replay(void **state)
{
	static const enum damage cases[] = {
		TORN_COMMIT, MISSING_COMMIT, TORN_COPY, FOREIGN_COMMIT,
		OTHER_COPY,
	};
	struct journal_fixture jf;
	struct fs_replay r;
	struct img *im;
	size_t i;

	fixture_make(&jf);
	/* phase 1 changed something, so stopping before it is visible */
	assert_true(count_changed(&jf, jf.after[0], jf.after[1]) > 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		im = image_to_replay(&jf);
		damage_last(&jf, im, cases[i]);
		assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, NULL,
						    NULL, 0, &r), 0);
		assert_int_equal(r.txns, jf.txns[0]);
		assert_int_equal(r.pos, jf.head[0]);
		assert_home_equal(&jf, im, jf.after[0]);
		assert_mounts(im, false);
		img_free(im);
	}
	fixture_free(&jf);
}

static void test_damaged_journal_superblock_refuses(void **state)
{
	struct journal_fixture jf;
	struct fs_replay r;
	struct img *im;

	fixture_make(&jf);
	im = image_to_replay(&jf);
	img_blk(im, jf.g.jsb_blk)[64] ^= 1;
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, NULL, NULL, 0, &r),
			 -EUCLEAN);
	assert_int_equal(r.txns, 0);
	assert_home_equal(&jf, im, jf.snap);
	img_free(im);
	fixture_free(&jf);
}

/* Every ring block is zeros. */
static void assert_ring_zero(const struct journal_fixture *jf, struct img *im)
{
	static const uint8_t zero[FS_BSIZE];
	uint64_t p;

	for (p = 0; p < jf->g.ring_blocks; p++)
		assert_int_equal(memcmp(img_blk(im, jf->g.ring_start + p), zero,
					FS_BSIZE), 0);
}

/* The image mounts and is consistent. */
static void assert_consistent(struct img *im)
{
	struct tfs t = { .bdev = &im->bdev, .ctx = { 1000, 1000, 022 } };

	tfs_mount(&t);
	tfs_check(&t);
	tfs_umount(&t);
}

/*
 * fsck's mounts (FS_RECOVER_SALVAGE): a damaged journal superblock gives
 * the journal up instead of refusing for good; writing, the ring is
 * zeroed and started again, so the next plain mount replays nothing and
 * the filesystem is as its home blocks are (here: the checkpoint's).
 */
static void test_salvage_damaged_journal_superblock(void **state)
{
	struct journal_fixture jf;
	struct fs_replay r;
	struct img *im, *before, *to;

	fixture_make(&jf);
	im = image_to_replay(&jf);
	img_blk(im, jf.g.jsb_blk)[64] ^= 1;
	/* read-only: told, nothing written */
	before = img_new(im);
	to = img_new(jf.snap);
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, apply_to, to,
					    FS_RECOVER_SALVAGE, &r), 0);
	assert_true(r.lost);
	assert_false(r.reset);
	assert_true(r.lost_pos == UINT64_MAX);
	assert_int_equal(r.txns, 0);
	assert_int_equal(memcmp(im->data, before->data,
				(size_t)NBLOCKS * FS_BSIZE), 0);
	/* writing: the ring restarted */
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, NULL, NULL,
					    FS_RECOVER_SALVAGE, &r), 0);
	assert_true(r.lost && r.reset);
	assert_int_equal(r.txns, 0);
	assert_home_equal(&jf, im, jf.snap);
	assert_ring_zero(&jf, im);
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, NULL, NULL, 0,
					    &r), 0);
	assert_false(r.lost);
	assert_int_equal(r.txns, 0);
	assert_consistent(im);
	img_free(to);
	img_free(before);
	img_free(im);
	fixture_free(&jf);
}

/*
 * A ring block that cannot be read (lost beyond the array's redundancy)
 * where phase 1's transaction starts: a plain mount fails on it; salvage
 * replays phase 0, gives up the rest, and (writing) zeros the ring, the
 * lost block included.
 */
static void test_salvage_unreadable_ring_block(void **state)
{
	struct journal_fixture jf;
	struct fs_replay r;
	struct img *im, *to;

	fixture_make(&jf);
	im = image_to_replay(&jf);
	im->lost = fs_jring_blk(&jf.g, jf.head[0]);
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, NULL, NULL, 0,
					    &r), -EIO);
	to = img_new(jf.snap);
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, apply_to, to,
					    FS_RECOVER_SALVAGE, &r), 0);
	assert_true(r.lost);
	assert_int_equal(r.lost_pos, jf.head[0]);
	assert_int_equal(r.txns, jf.txns[0]);
	assert_home_equal(&jf, to, jf.after[0]);
	assert_int_equal(fs_journal_recover(&im->bdev, &jf.g, NULL, NULL,
					    FS_RECOVER_SALVAGE, &r), 0);
	assert_true(r.lost && r.reset);
	assert_int_equal(r.txns, jf.txns[0]);
	assert_true(im->lost == UINT64_MAX);    /* written anew */
	assert_home_equal(&jf, im, jf.after[0]);
	assert_ring_zero(&jf, im);
	assert_mounts(im, false);
	img_free(to);
	img_free(im);
	fixture_free(&jf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_rebuilds_every_block),
		cmocka_unit_test(test_replay_to_callback_writes_nothing),
		cmocka_unit_test(test_damaged_last_transaction_ends_replay),
		cmocka_unit_test(test_damaged_journal_superblock_refuses),
		cmocka_unit_test(test_salvage_damaged_journal_superblock),
		cmocka_unit_test(test_salvage_unreadable_ring_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
