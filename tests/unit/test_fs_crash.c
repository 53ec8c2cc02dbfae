/*
 * test_fs_crash: power cuts at many points of a workload.
 *
 * The workload (creates, appends, truncates, renames, links, unlinks,
 * mkdir/rmdir, fsyncs; no in-place overwrites, which ordered mode does not
 * make atomic) runs against a model.  The memory device is cut after its
 * Nth block write (later writes fail and are lost, the last one torn) and
 * everything not flushed is thrown away.  After the cut the filesystem must
 * mount (journal replay, no check), and its whole visible state must equal
 * the model after some prefix of the operations that is no shorter than the
 * last fsync that returned success: everything fsync'd is there, byte for
 * byte, and the metadata is never half-applied.  Then space accounting must
 * add up (no leaked or doubly used blocks or inodes) and the filesystem must
 * take more work and mount again.
 */
#include "fs_test_util.h"
#include <sys/stat.h>
#include <xxhash.h>
#include <pthread.h>
#include <linux/falloc.h>

#define ROOT FS_ROOT_INO
#define NDIRS 3                 /* root, d1, d2 */
#define NNAMES 12
#define NINODES 128
#define MAXSIZE 40000
#define NOPS 240
#define NEMPTY 3

struct mino {
	bool used;
	uint8_t data[MAXSIZE];
	size_t size;
	int nlink;
};

struct model {
	struct mino ino[NINODES];
	int ent[NDIRS][NNAMES];         /* model inode, -1 absent */
	bool empty_dir[NEMPTY];         /* /e0.. exist */
};

struct run {
	struct tfs t;
	struct model m;
	uint64_t dirs[NDIRS];
	uint64_t hashes[NOPS + 1];      /* model state after op i */
	int last_sync;                  /* index into hashes */
	uint64_t rng;
};

static uint64_t rnd(struct run *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

static void fname(char *buf, int i)
{
	sprintf(buf, "f%d", i);
}

/* ---- canonical state hash ---------------------------------------------------- */
static uint64_t model_hash(const struct model *m)
{
	XXH3_state_t *s = XXH3_createState();
	uint64_t h;
	int d, n, i;

	XXH3_64bits_reset(s);
	for (d = 0; d < NDIRS; d++) {
		for (n = 0; n < NNAMES; n++) {
			const struct mino *mi;
			uint64_t rec[4];

			if (m->ent[d][n] < 0)
				continue;
			mi = &m->ino[m->ent[d][n]];
			rec[0] = (uint64_t)d << 32 | (uint64_t)n;
			rec[1] = mi->size;
			rec[2] = XXH3_64bits(mi->data, mi->size);
			rec[3] = (uint64_t)mi->nlink;
			XXH3_64bits_update(s, rec, sizeof(rec));
		}
	}
	for (i = 0; i < NEMPTY; i++)
		XXH3_64bits_update(s, &m->empty_dir[i], 1);
	h = XXH3_64bits_digest(s);
	XXH3_freeState(s);
	return h;
}

struct fs_scan {
	uint64_t inos[NINODES * 2];
	uint64_t blocks[NINODES * 2];
	int n;
};

static void scan_add(struct fs_scan *sc, const struct fs_attr *a)
{
	int i;

	for (i = 0; i < sc->n; i++)
		if (sc->inos[i] == a->ino)
			return;
	sc->inos[sc->n] = a->ino;
	sc->blocks[sc->n++] = a->blocks / 8;
}

/* The same hash computed from the filesystem. */
static uint64_t fs_hash(struct tfs *t, const uint64_t *dirs, struct fs_scan *sc)
{
	static uint8_t buf[MAXSIZE + 1];
	XXH3_state_t *s = XXH3_createState();
	struct fs_attr a;
	char name[16];
	uint64_t h;
	bool e;
	int d, n, i;

	XXH3_64bits_reset(s);
	for (d = 0; d < NDIRS; d++) {
		for (n = 0; n < NNAMES; n++) {
			uint64_t rec[4];

			fname(name, n);
			if (fs_lookup(t->fs, dirs[d], name, &a))
				continue;
			fs_forget(t->fs, a.ino, 1);
			assert_true(S_ISREG(a.mode));
			assert_true(a.size <= MAXSIZE);
			assert_int_equal(fs_read(t->fs, a.ino, 0, MAXSIZE + 1, buf),
					 a.size);
			rec[0] = (uint64_t)d << 32 | (uint64_t)n;
			rec[1] = a.size;
			rec[2] = XXH3_64bits(buf, a.size);
			rec[3] = a.nlink;
			XXH3_64bits_update(s, rec, sizeof(rec));
			scan_add(sc, &a);
			if (getenv("FS_CRASH_TRACE"))
				printf("fs %d/%d ino %llu size %llu nlink %u h %llx\n",
				       d, n, (unsigned long long)a.ino,
				       (unsigned long long)a.size, a.nlink,
				       (unsigned long long)rec[2]);
		}
	}
	for (i = 0; i < NEMPTY; i++) {
		sprintf(name, "e%d", i);
		e = !fs_lookup(t->fs, ROOT, name, &a);
		if (e) {
			fs_forget(t->fs, a.ino, 1);
			scan_add(sc, &a);
		}
		XXH3_64bits_update(s, &e, 1);
	}
	h = XXH3_64bits_digest(s);
	XXH3_freeState(s);
	return h;
}

/* ---- workload -------------------------------------------------------------------- */
static int model_new_inode(struct model *m)
{
	int i;

	for (i = 0; i < NINODES; i++)
		if (!m->ino[i].used)
			return i;
	return -1;
}

static void model_unlink(struct model *m, int d, int n)
{
	struct mino *mi = &m->ino[m->ent[d][n]];

	m->ent[d][n] = -1;
	if (--mi->nlink == 0)
		mi->used = false;
}

/* An operation's error: only what a dying device may cause is allowed. */
static bool err_ok(int err)
{
	return err == -EIO || err == -EROFS || err == -ENOSPC;
}

#define CHECK(call) do { int e_ = (int)(call); \
	if (e_ < 0) { assert_true(err_ok(e_)); return; } } while (0)

static void op_create(struct run *r, int d, int n)
{
	static uint8_t data[MAXSIZE];
	struct fs_attr a;
	uint64_t fh;
	size_t size = rnd(r) % 20000;
	char name[16];
	int mi = model_new_inode(&r->m);

	if (mi < 0 || r->m.ent[d][n] >= 0)
		return;
	fname(name, n);
	tfs_pattern(data, size, rnd(r));
	CHECK(fs_create(r->t.fs, &r->t.ctx, r->dirs[d], name, 0644,
			O_RDWR | O_EXCL, &a, &fh));
	fs_release(r->t.fs, a.ino, fh);
	fs_forget(r->t.fs, a.ino, 1);
	/* created: from here on it exists in the model, maybe empty */
	r->m.ino[mi].used = true;
	r->m.ino[mi].size = 0;
	r->m.ino[mi].nlink = 1;
	r->m.ent[d][n] = mi;
	if (size) {
		ssize_t w = fs_write(r->t.fs, a.ino, 0, size, data, 0);

		if (w < 0) {
			assert_true(err_ok((int)w));
			return;
		}
		memcpy(r->m.ino[mi].data, data, size);
		r->m.ino[mi].size = size;
	}
}

static uint64_t lookup_ino(struct run *r, int d, int n)
{
	char name[16];

	fname(name, n);
	return tfs_lookup(&r->t, r->dirs[d], name);
}

static void op_append(struct run *r, int d, int n)
{
	static uint8_t data[MAXSIZE];
	struct mino *mi;
	size_t len;
	ssize_t w;

	if (r->m.ent[d][n] < 0)
		return;
	mi = &r->m.ino[r->m.ent[d][n]];
	len = rnd(r) % 9000 + 1;
	if (mi->size + len > MAXSIZE)
		return;
	tfs_pattern(data, len, rnd(r));
	w = fs_write(r->t.fs, lookup_ino(r, d, n), mi->size, len, data, 0);
	if (w < 0) {
		assert_true(err_ok((int)w));
		return;
	}
	memcpy(mi->data + mi->size, data, len);
	mi->size += len;
}

static void op_truncate(struct run *r, int d, int n)
{
	struct fs_attr in = { 0 };
	struct mino *mi;
	size_t size;

	if (r->m.ent[d][n] < 0)
		return;
	mi = &r->m.ino[r->m.ent[d][n]];
	size = rnd(r) % (mi->size + 8000);
	if (size > MAXSIZE)
		size = MAXSIZE;
	in.size = size;
	CHECK(fs_setattr(r->t.fs, lookup_ino(r, d, n), &in, FS_SET_ATTR_SIZE,
			 NULL));
	if (size > mi->size)
		memset(mi->data + mi->size, 0, size - mi->size);
	mi->size = size;
}

static void op_fallocate(struct run *r, int d, int n)
{
	struct mino *mi;
	uint64_t off, len;
	bool keep = rnd(r) & 1;

	if (r->m.ent[d][n] < 0)
		return;
	mi = &r->m.ino[r->m.ent[d][n]];
	off = rnd(r) % MAXSIZE;
	len = rnd(r) % (MAXSIZE - off) + 1;
	CHECK(fs_fallocate(r->t.fs, lookup_ino(r, d, n), keep ?
			   FALLOC_FL_KEEP_SIZE : 0, off, len));
	if (!keep && off + len > mi->size) {
		memset(mi->data + mi->size, 0, off + len - mi->size);
		mi->size = off + len;
	}
}

static void op_rename(struct run *r, int d, int n, int d2, int n2)
{
	char a[16], b[16];

	if (r->m.ent[d][n] < 0)
		return;
	fname(a, n);
	fname(b, n2);
	CHECK(fs_rename(r->t.fs, r->dirs[d], a, r->dirs[d2], b, 0));
	if (r->m.ent[d2][n2] == r->m.ent[d][n])
		return;
	if (r->m.ent[d2][n2] >= 0)
		model_unlink(&r->m, d2, n2);
	r->m.ent[d2][n2] = r->m.ent[d][n];
	r->m.ent[d][n] = -1;
}

static void op_link(struct run *r, int d, int n, int d2, int n2)
{
	struct fs_attr a;
	char b[16];

	if (r->m.ent[d][n] < 0 || r->m.ent[d2][n2] >= 0)
		return;
	fname(b, n2);
	CHECK(fs_link(r->t.fs, lookup_ino(r, d, n), r->dirs[d2], b, &a));
	fs_forget(r->t.fs, a.ino, 1);
	r->m.ent[d2][n2] = r->m.ent[d][n];
	r->m.ino[r->m.ent[d][n]].nlink++;
}

static void op_unlink(struct run *r, int d, int n)
{
	char a[16];

	if (r->m.ent[d][n] < 0)
		return;
	fname(a, n);
	CHECK(fs_unlink(r->t.fs, r->dirs[d], a));
	model_unlink(&r->m, d, n);
}

static void op_dir(struct run *r, int i)
{
	struct fs_attr a;
	char name[16];

	sprintf(name, "e%d", i);
	if (r->m.empty_dir[i]) {
		CHECK(fs_rmdir(r->t.fs, ROOT, name));
	} else {
		CHECK(fs_mkdir(r->t.fs, &r->t.ctx, ROOT, name, 0755, &a));
		fs_forget(r->t.fs, a.ino, 1);
	}
	r->m.empty_dir[i] = !r->m.empty_dir[i];
}

static void model_dump(const struct model *m)
{
	int d, n;

	for (d = 0; d < NDIRS; d++)
		for (n = 0; n < NNAMES; n++)
			if (m->ent[d][n] >= 0)
				printf("  m %d/%d size %zu nlink %d h %llx\n", d, n,
				       m->ino[m->ent[d][n]].size,
				       m->ino[m->ent[d][n]].nlink,
				       (unsigned long long)XXH3_64bits(
					m->ino[m->ent[d][n]].data,
					m->ino[m->ent[d][n]].size));
}

/* A file that is unlinked while open: an orphan at the time of the cut. */
static void op_open_unlink(struct run *r, int n)
{
	static uint8_t data[3 * 4096];
	struct fs_attr a;
	uint64_t fh;
	char name[16];

	sprintf(name, "tmp%d", n);
	tfs_pattern(data, sizeof(data), (uint64_t)n);
	CHECK(fs_create(r->t.fs, &r->t.ctx, ROOT, name, 0644, O_RDWR, &a, &fh));
	if (fs_write(r->t.fs, a.ino, 0, sizeof(data), data, 0) < 0 ||
	    fs_unlink(r->t.fs, ROOT, name) < 0)
		(void)fs_unlink(r->t.fs, ROOT, name);
	/* the handle and the lookup stay: nobody closes them before the cut */
}

static void op_one(struct run *r, int i)
{
	int d = (int)(rnd(r) % NDIRS), n = (int)(rnd(r) % NNAMES);
	int d2 = (int)(rnd(r) % NDIRS), n2 = (int)(rnd(r) % NNAMES);
	uint64_t kind = rnd(r) % 11;

	if (getenv("FS_CRASH_TRACE"))
		printf("op %d kind %llu %d/%d -> %d/%d\n", i + 1,
		       (unsigned long long)kind, d, n, d2, n2);
	switch (kind) {
	case 10: op_fallocate(r, d, n); break;
	case 0: case 1: op_create(r, d, n); break;
	case 2: case 3: op_append(r, d, n); break;
	case 4: op_truncate(r, d, n); break;
	case 5: op_rename(r, d, n, d2, n2); break;
	case 6: op_link(r, d, n, d2, n2); break;
	case 7: op_unlink(r, d, n); break;
	case 8:
		if (n == 0)
			op_open_unlink(r, i);
		else
			op_dir(r, (int)(rnd(r) % NEMPTY));
		break;
	default:
		if (fs_syncfs(r->t.fs) == 0)
			r->last_sync = i + 1;
		break;
	}
	r->hashes[i + 1] = model_hash(&r->m);
	if (getenv("FS_CRASH_TRACE")) {
		uint64_t w;

		tfs_stats(&r->t, &w, NULL, NULL);
		printf("op %d: writes %llu hash %llx sync %d\n", i + 1,
		       (unsigned long long)w,
		       (unsigned long long)r->hashes[i + 1], r->last_sync);
		model_dump(&r->m);
	}
}

static void run_setup(struct run *r, uint64_t seed)
{
	struct fs_format_params p = { .journal_blocks = 64 };
	struct fs_mount_opts o = { .commit_interval_ms = 3600000 };
	int d, n;

	memset(r, 0, sizeof(*r));
	r->rng = seed * 2654435761u + 7;
	for (d = 0; d < NDIRS; d++)
		for (n = 0; n < NNAMES; n++)
			r->m.ent[d][n] = -1;
	tfs_dev_open(&r->t, 4096, 16);
	assert_int_equal(fs_format(r->t.bdev, &p), 0);
	assert_int_equal(fs_mount_opts(r->t.bdev, &o, &r->t.fs), 0);
	r->t.ctx.umask = 022;
	r->dirs[0] = ROOT;
	r->dirs[1] = tfs_mkdir(&r->t, ROOT, "d1");
	r->dirs[2] = tfs_mkdir(&r->t, ROOT, "d2");
	assert_int_equal(fs_syncfs(r->t.fs), 0);
	r->hashes[0] = model_hash(&r->m);
}

/* Blocks and inodes in use must be exactly those of the reachable inodes. */
static void check_accounting(struct tfs *t, struct fs_scan *sc,
			     const uint64_t *dirs)
{
	struct statvfs st;
	struct fs_attr a;
	uint64_t blocks = 0;
	int i;

	for (i = 0; i < NDIRS; i++) {
		assert_int_equal(fs_getattr(t->fs, dirs[i], &a), 0);
		scan_add(sc, &a);
	}
	for (i = 0; i < sc->n; i++)
		blocks += sc->blocks[i];
	assert_int_equal(fs_statfs(t->fs, &st), 0);
	assert_int_equal(st.f_blocks - st.f_bfree, blocks + tfs_inode_blocks(t));
	assert_int_equal(st.f_files - st.f_ffree, (uint64_t)sc->n);
}

static void crash_at(uint64_t seed, int64_t limit, bool *cut)
{
	struct run *r = calloc(1, sizeof(*r));
	struct fs_scan sc = { .n = 0 };
	uint64_t h, w0, w1;
	int i;

	run_setup(r, seed);
	tfs_record(&r->t);
	tfs_stats(&r->t, &w0, NULL, NULL);
	if (limit >= 0)
		tfs_write_limit(&r->t, limit);
	for (i = 0; i < NOPS; i++)
		op_one(r, i);
	tfs_stats(&r->t, &w1, NULL, NULL);
	if (getenv("FS_CRASH_TRACE"))
		printf("start writes %llu\n", (unsigned long long)w0);
	*cut = limit >= 0 && (int64_t)(w1 - w0) >= limit;
	/* power cut: no unmount, unflushed writes are lost */
	fs_abandon(r->t.fs);
	tfs_crash(&r->t);
	/* a read-only mount replays in memory and writes nothing */
	tfs_stats(&r->t, &w0, NULL, NULL);
	assert_int_equal(fs_mount(r->t.bdev, FS_MOUNT_RDONLY, &r->t.fs), 0);
	h = fs_hash(&r->t, r->dirs, &sc);
	tfs_umount(&r->t);
	tfs_stats(&r->t, &w1, NULL, NULL);
	assert_int_equal(w1, w0);
	sc.n = 0;
	assert_int_equal(fs_mount(r->t.bdev, 0, &r->t.fs), 0);
	assert_int_equal(fs_hash(&r->t, r->dirs, &sc), h);
	for (i = NOPS; i >= r->last_sync; i--)
		if (r->hashes[i] == h)
			break;
	if (i < r->last_sync) {
		fail_msg("seed %llu cut at %lld: state matches no operation "
			 "prefix after the last fsync (op %d)",
			 (unsigned long long)seed, (long long)limit,
			 r->last_sync);
	}
	if (getenv("FS_CRASH_VERBOSE"))
		printf("seed %llu limit %lld: last fsync op %d, state = op %d\n",
		       (unsigned long long)seed, (long long)limit, r->last_sync, i);
	check_accounting(&r->t, &sc, r->dirs);
	tfs_check(&r->t);
	/* the filesystem goes on working */
	tfs_create(&r->t, ROOT, "after");
	assert_int_equal(fs_write(r->t.fs, tfs_lookup(&r->t, ROOT, "after"), 0,
				  5, "after", 0), 5);
	tfs_remount(&r->t);
	assert_int_not_equal(tfs_lookup(&r->t, ROOT, "after"), 0);
	tfs_umount(&r->t);
	tfs_dev_close(&r->t);
	free(r);
}

static void test_crash_points(void **state)
{
	uint64_t seeds[] = { 1, 2, 3, 4, 5, 6 };
	int64_t limit, step;
	size_t s, nseeds;
	bool cut;

	(void)state;
	if (getenv("FS_CRASH_SEED")) {
		crash_at(strtoull(getenv("FS_CRASH_SEED"), NULL, 0),
			 strtoll(getenv("FS_CRASH_LIMIT"), NULL, 0), &cut);
		return;
	}
	/* FS_CRASH_SEEDS / FS_CRASH_STEP: a longer run by hand */
	nseeds = getenv("FS_CRASH_SEEDS") ?
		 strtoull(getenv("FS_CRASH_SEEDS"), NULL, 0) :
		 sizeof(seeds) / sizeof(seeds[0]);
	step = getenv("FS_CRASH_STEP") ?
	       strtoll(getenv("FS_CRASH_STEP"), NULL, 0) : 5;
	for (s = 0; s < nseeds; s++) {
		uint64_t seed = s < sizeof(seeds) / sizeof(seeds[0]) ?
				seeds[s] : s + 1;

		/* an uncut run tells how many block writes the workload makes */
		crash_at(seed, -1, &cut);
		for (limit = 0, cut = true; cut; limit += step)
			crash_at(seed, limit, &cut);
	}
}

/*
 * A truncate of a file with ~700 extents spans several transactions: cut
 * at every point of it, the file is either whole or empty and no block
 * leaks (the orphan list finishes the truncate at mount).
 */
static void truncate_cut(int64_t limit, bool *cut)
{
	struct tfs t = { 0 };
	struct fs_format_params p = { .journal_blocks = 64 };
	static uint8_t blk[4096], rd[4096];
	struct fs_attr a, in = { .size = 0 };
	struct statvfs s0, s1;
	uint64_t f, w0, w1, k;

	tfs_dev_open(&t, 4096, 1);
	assert_int_equal(fs_format(t.bdev, &p), 0);
	tfs_mount(&t);
	f = tfs_create(&t, ROOT, "frag");
	for (k = 0; k < 1400; k += 2) {
		tfs_pattern(blk, sizeof(blk), k);
		assert_int_equal(fs_write(t.fs, f, k * 4096, 4096, blk, 0), 4096);
	}
	assert_int_equal(fs_syncfs(t.fs), 0);
	assert_int_equal(fs_statfs(t.fs, &s0), 0);
	tfs_record(&t);
	tfs_stats(&t, &w0, NULL, NULL);
	if (limit >= 0)
		tfs_write_limit(&t, limit);
	(void)fs_setattr(t.fs, f, &in, FS_SET_ATTR_SIZE, NULL);
	(void)fs_syncfs(t.fs);
	tfs_stats(&t, &w1, NULL, NULL);
	*cut = limit >= 0 && (int64_t)(w1 - w0) >= limit;
	fs_abandon(t.fs);
	tfs_crash(&t);
	tfs_mount(&t);
	tfs_check(&t);
	assert_int_equal(fs_getattr(t.fs, f, &a), 0);
	assert_int_equal(fs_statfs(t.fs, &s1), 0);
	if (a.size) {
		assert_int_equal(a.size, 1399 * 4096);
		assert_true(a.blocks >= 700 * 8);
		for (k = 0; k < 1400; k += 2) {
			tfs_pattern(blk, sizeof(blk), k);
			assert_int_equal(fs_read(t.fs, f, k * 4096, 4096, rd), 4096);
			assert_memory_equal(rd, blk, 4096);
		}
		assert_int_equal(s1.f_bfree, s0.f_bfree);
	} else {
		/* the extent tree's nodes went with the data */
		assert_int_equal(a.blocks, 0);
		assert_true(s1.f_bfree >= s0.f_bfree + 700);
	}
	assert_int_equal(s1.f_blocks - s1.f_bfree,
			 a.blocks / 8 + 1 + tfs_inode_blocks(&t));
	tfs_umount(&t);
	tfs_dev_close(&t);
}

static void test_crash_in_long_truncate(void **state)
{
	int64_t limit;
	bool cut = true;

	(void)state;
	for (limit = 0; cut; limit += 3)
		truncate_cut(limit, &cut);
}

/*
 * A crash while mount frees the orphans a crash left: open-unlinked files
 * with many extents (freed over several transactions).  Cut at every few
 * writes of that recovery; the next mount must finish the job.
 */
static void orphan_cut(int64_t limit, bool *cut)
{
	struct tfs t = { 0 };
	struct fs_format_params p = { .journal_blocks = 64 };
	static uint8_t blk[4096];
	struct statvfs s0, s1;
	struct fs_attr a;
	struct fs *fs;
	uint64_t fh, k, w0, w1;
	char name[16];
	int i, err;

	tfs_dev_open(&t, 8192, 1);
	assert_int_equal(fs_format(t.bdev, &p), 0);
	tfs_mount(&t);
	assert_int_equal(fs_statfs(t.fs, &s0), 0);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "o%d", i);
		assert_int_equal(fs_create(t.fs, &t.ctx, ROOT, name, 0644, O_RDWR,
					   &a, &fh), 0);
		for (k = 0; k < 600; k += 2)
			assert_int_equal(fs_write(t.fs, a.ino, k * 4096, 4096,
						  blk, 0), 4096);
		assert_int_equal(fs_unlink(t.fs, ROOT, name), 0);
	}
	assert_int_equal(fs_syncfs(t.fs), 0);
	fs_abandon(t.fs);               /* crash with three orphans */
	tfs_record(&t);
	tfs_stats(&t, &w0, NULL, NULL);
	tfs_write_limit(&t, limit);
	err = fs_mount(t.bdev, 0, &fs);
	if (!err)
		fs_abandon(fs);
	tfs_stats(&t, &w1, NULL, NULL);
	*cut = (int64_t)(w1 - w0) >= limit;
	tfs_crash(&t);
	tfs_mount(&t);
	tfs_check(&t);
	assert_int_equal(fs_statfs(t.fs, &s1), 0);
	assert_int_equal(s1.f_bfree, s0.f_bfree);
	assert_int_equal(s1.f_ffree, s0.f_ffree);
	tfs_umount(&t);
	tfs_dev_close(&t);
}

static void test_crash_while_freeing_orphans(void **state)
{
	int64_t limit;
	bool cut = true;

	(void)state;
	for (limit = 0; cut; limit += 2)
		orphan_cut(limit, &cut);
}

/*
 * Threads create, write and fsync their own files (and unlink some) while
 * the device dies at a write: every file whose fsync returned must be there
 * byte for byte, and the filesystem must pass fs_check.
 */
#define CT_THREADS 4
#define CT_FILES 30

struct ct_worker {
	struct tfs *t;
	int id;
	int durable;                    /* files 0 .. durable-1 are fsync'd */
};

static size_t ct_size(int id, int k)
{
	return (size_t)((id * 7919 + k * 104729) % 50000) + 1;
}

static void *ct_main(void *arg)
{
	static __thread uint8_t buf[50001];
	struct ct_worker *w = arg;
	struct fs_attr a;
	char name[32];
	uint64_t fh;
	size_t len;
	int k;

	for (k = 0; k < CT_FILES; k++) {
		len = ct_size(w->id, k);
		snprintf(name, sizeof(name), "w%d-%d", w->id, k);
		tfs_pattern(buf, len, (uint64_t)(w->id * 1000 + k));
		if (fs_create(w->t->fs, &w->t->ctx, ROOT, name, 0644, O_RDWR,
			      &a, &fh))
			break;
		if (fs_write(w->t->fs, a.ino, 0, len, buf, 0) != (ssize_t)len ||
		    fs_fsync(w->t->fs, a.ino, k % 2)) {
			fs_release(w->t->fs, a.ino, fh);
			fs_forget(w->t->fs, a.ino, 1);
			break;
		}
		fs_release(w->t->fs, a.ino, fh);
		fs_forget(w->t->fs, a.ino, 1);
		w->durable = k + 1;
		snprintf(name, sizeof(name), "x%d-%d", w->id, k);
		if (!fs_mknod(w->t->fs, &w->t->ctx, ROOT, name, S_IFREG, 0, &a))
			fs_forget(w->t->fs, a.ino, 1);
		if (k % 3 == 0)
			(void)fs_unlink(w->t->fs, ROOT, name);
	}
	return NULL;
}

static void threads_cut(int64_t limit)
{
	static uint8_t want[50001], got[50001];
	struct ct_worker w[CT_THREADS];
	pthread_t th[CT_THREADS];
	struct tfs t = { 0 };
	struct fs_attr a;
	char name[32];
	int i, k;

	tfs_dev_open(&t, 16384, 16);
	assert_int_equal(fs_format(t.bdev, NULL), 0);
	tfs_mount(&t);
	t.ctx.umask = 022;
	tfs_record(&t);
	tfs_write_limit(&t, limit);
	for (i = 0; i < CT_THREADS; i++) {
		w[i] = (struct ct_worker){ &t, i, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, ct_main, &w[i]), 0);
	}
	for (i = 0; i < CT_THREADS; i++)
		pthread_join(th[i], NULL);
	fs_abandon(t.fs);
	tfs_crash(&t);
	tfs_mount(&t);
	tfs_check(&t);
	for (i = 0; i < CT_THREADS; i++) {
		for (k = 0; k < w[i].durable; k++) {
			size_t len = ct_size(i, k);

			snprintf(name, sizeof(name), "w%d-%d", i, k);
			assert_int_equal(fs_lookup(t.fs, ROOT, name, &a), 0);
			fs_forget(t.fs, a.ino, 1);
			assert_int_equal(a.size, len);
			tfs_pattern(want, len, (uint64_t)(i * 1000 + k));
			assert_int_equal(fs_read(t.fs, a.ino, 0, len + 1, got), len);
			assert_memory_equal(got, want, len);
		}
	}
	tfs_umount(&t);
	tfs_dev_close(&t);
}

static void test_crash_with_threads(void **state)
{
	int64_t limits[] = { 50, 200, 400, 700, 1000, 1500, 2500, 4000 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		threads_cut(limits[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_points),
		cmocka_unit_test(test_crash_in_long_truncate),
		cmocka_unit_test(test_crash_with_threads),
		cmocka_unit_test(test_crash_while_freeing_orphans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
