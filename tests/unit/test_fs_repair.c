/*
 * fs repair (fs/repair*.c, fsck.raidfs phase 3): each case breaks one kind
 * of structure on a small filesystem behind the filesystem's back (re-sealing
 * checksums where the damage is meant to look valid), then requires that
 *   - the scan reports it (the counter the case names is non-zero),
 *   - scan/apply rounds on read-write mounts converge,
 *   - afterwards fs_check passes and a new scan finds nothing,
 *   - every file the damage did not touch reads back byte for byte, and
 *     what was lost from the tree is in /lost+found with its data.
 */
#include "fs_test_util.h"
#include "fs_int.h"
#include "repair.h"

#define ROOT FS_ROOT_INO
#define F1_SIZE 10000
#define F2_SIZE 50000

struct tree {
	uint64_t d, f1, sub, f2, keep;
};

static void file_fill(struct tfs *t, uint64_t ino, size_t size, uint64_t seed)
{
	uint8_t *buf = malloc(size);

	assert_non_null(buf);
	tfs_pattern(buf, size, seed);
	assert_int_equal(fs_write(t->fs, ino, 0, size, buf, 0), (ssize_t)size);
	free(buf);
}

static void file_verify(struct tfs *t, uint64_t ino, size_t size, uint64_t seed)
{
	uint8_t *want = malloc(size), *got = malloc(size + 1);

	assert_non_null(want);
	assert_non_null(got);
	tfs_pattern(want, size, seed);
	assert_int_equal(fs_read(t->fs, ino, 0, size + 1, got), (ssize_t)size);
	assert_memory_equal(want, got, size);
	free(want);
	free(got);
}

/* /d/f1, /d/sub/f2, /keep (untouched by every case) */
static struct tree tree_make(struct tfs *t)
{
	struct tree tr;

	tr.d = tfs_mkdir(t, ROOT, "d");
	tr.f1 = tfs_create(t, tr.d, "f1");
	file_fill(t, tr.f1, F1_SIZE, 1);
	tr.sub = tfs_mkdir(t, tr.d, "sub");
	tr.f2 = tfs_create(t, tr.sub, "f2");
	file_fill(t, tr.f2, F2_SIZE, 2);
	tr.keep = tfs_create(t, ROOT, "keep");
	file_fill(t, tr.keep, F2_SIZE, 3);
	assert_int_equal(fs_syncfs(t->fs), 0);
	return tr;
}

/* ---- raw access behind the filesystem's back ------------------------------ */
static struct fs_sb_disk sb_read(struct tfs *t)
{
	struct fs_sb_disk sb;

	assert_int_equal(fs_bdev_read(t->bdev, 0, 1, &sb), 0);
	return sb;
}

/* The inode chunk map's leaf (one on these small filesystems), read into
 * blk; the record of ino's chunk in it. */
static struct fs_ichunk_disk *ichunk_rec(struct tfs *t, uint64_t ino,
					 uint8_t *blk, uint64_t *leaf)
{
	struct fs_sb_disk sb = sb_read(t);
	struct fs_ichunk_disk *d;

	assert_int_equal(fs_le32(sb.ichunk_depth), 1);
	*leaf = fs_le64(sb.ichunk_root);
	assert_int_equal(fs_bdev_read(t->bdev, *leaf, 1, blk), 0);
	d = (struct fs_ichunk_disk *)(blk + FS_NODE_HDR) + ino / 16;
	assert_int_equal(fs_rec_key(d), ino / 16);
	return d;
}

static uint64_t inode_blk(struct tfs *t, uint64_t ino)
{
	uint8_t blk[FS_BSIZE];
	uint64_t leaf;

	return fs_le64(ichunk_rec(t, ino, blk, &leaf)->pblk);
}

/* Edits inode ino with fn; reseal: whether the checksum is recomputed. */
static void inode_edit(struct tfs *t, uint64_t ino,
		       void (*fn)(struct fs_inode_disk *), bool reseal)
{
	uint8_t blk[FS_BSIZE];
	struct fs_inode_disk *d;
	uint64_t b = inode_blk(t, ino);

	assert_int_equal(fs_bdev_read(t->bdev, b, 1, blk), 0);
	d = (struct fs_inode_disk *)(blk + (ino % FS_INODES_PER_BLOCK) *
				     FS_INODE_SIZE);
	fn(d);
	if (reseal) {
		d->csum = 0;
		d->csum = fs_cpu64(fs_csum(d, sizeof(*d), ino));
	}
	assert_int_equal(fs_bdev_write(t->bdev, b, 1, blk), 0);
}

static struct fs_inode_disk inode_get(struct tfs *t, uint64_t ino)
{
	uint8_t blk[FS_BSIZE];
	struct fs_inode_disk d;

	assert_int_equal(fs_bdev_read(t->bdev, inode_blk(t, ino), 1, blk), 0);
	memcpy(&d, blk + (ino % FS_INODES_PER_BLOCK) * FS_INODE_SIZE, sizeof(d));
	return d;
}

/* Flips ino's in-use bit in the inode chunk map. */
static void ichunk_flip(struct tfs *t, uint64_t ino)
{
	uint8_t blk[FS_BSIZE];
	struct fs_ichunk_disk *d;
	uint64_t leaf;

	d = ichunk_rec(t, ino, blk, &leaf);
	d->used = fs_cpu16(fs_le16(d->used) ^ (uint16_t)(1u << (ino % 16)));
	fs_bhdr_seal(blk);
	assert_int_equal(fs_bdev_write(t->bdev, leaf, 1, blk), 0);
}

static void bitmap_flip(struct tfs *t, uint64_t bit)
{
	struct fs_sb_disk sb = sb_read(t);
	uint64_t b = fs_le64(sb.bbitmap_start) + bit / FS_BITS_PER_BITMAP;
	uint64_t k = bit % FS_BITS_PER_BITMAP;
	uint8_t blk[FS_BSIZE];

	assert_int_equal(fs_bdev_read(t->bdev, b, 1, blk), 0);
	blk[FS_BITMAP_HDR + k / 8] ^= (uint8_t)(1u << (k % 8));
	fs_bhdr_seal(blk);
	assert_int_equal(fs_bdev_write(t->bdev, b, 1, blk), 0);
}

/* ---- the damage, one function per case ------------------------------------ */
static void set_nlink7(struct fs_inode_disk *d) { d->nlink = fs_cpu32(7); }
static void set_nlink0(struct fs_inode_disk *d) { d->nlink = 0; }
static void flip_byte(struct fs_inode_disk *d) { d->uid ^= 0x100; }
static void zero_inode(struct fs_inode_disk *d) { memset(d, 0, sizeof(*d)); }

static void damage_leak(struct tfs *t, const struct tree *tr)
{
	bitmap_flip(t, fs_le64(sb_read(t).blocks) - 10);
}

static void damage_used_but_free(struct tfs *t, const struct tree *tr)
{
	struct fs_inode_disk d = inode_get(t, tr->f2);

	bitmap_flip(t, fs_le64(d.ext[0].pblk) + 1);
	ichunk_flip(t, tr->f1);
}

static void damage_nlink(struct tfs *t, const struct tree *tr)
{
	inode_edit(t, tr->f1, set_nlink7, true);
	inode_edit(t, tr->f2, set_nlink0, true);
	inode_edit(t, tr->sub, set_nlink0, true);
}

static void damage_dangling(struct tfs *t, const struct tree *tr)
{
	inode_edit(t, tr->f1, zero_inode, false);
	ichunk_flip(t, tr->f1);
}

static void damage_bad_inode(struct tfs *t, const struct tree *tr)
{
	inode_edit(t, tr->f1, flip_byte, false);
}

/* /d's name tree unreadable: f1 and sub (with f2) are lost. */
static void damage_dir_node(struct tfs *t, const struct tree *tr)
{
	struct fs_inode_disk d = inode_get(t, tr->d);
	uint8_t blk[FS_BSIZE];
	uint64_t node = fs_le64(d.map_root);

	assert_true(node != 0);
	assert_int_equal(fs_bdev_read(t->bdev, node, 1, blk), 0);
	blk[2000] ^= 0x55;
	assert_int_equal(fs_bdev_write(t->bdev, node, 1, blk), 0);
}

/* One of f1's value blocks fails its checksum: f1 loses its attributes,
 * nothing else (the data stays). */
static void damage_xattr_value(struct tfs *t, const struct tree *tr)
{
	static uint8_t v[20000];
	struct fs_xattr_rec_disk rec;
	struct fs_inode_disk d;
	uint8_t blk[FS_BSIZE];
	uint64_t vb;

	tfs_mount(t);
	memset(v, 0x5a, sizeof(v));
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, tr->f1, "user.v", v,
				     sizeof(v), 0), 0);
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, tr->f1, "user.w", v, 10,
				     0), 0);
	tfs_umount(t);
	d = inode_get(t, tr->f1);
	assert_int_equal(fs_le32(d.xattr_depth), 1);
	assert_int_equal(fs_bdev_read(t->bdev, fs_le64(d.xattr_root), 1, blk), 0);
	memcpy(&rec, blk + FS_NODE_HDR, sizeof(rec));
	if (!(rec.flags & FS_XREC_EXTERNAL))
		memcpy(&rec, blk + FS_NODE_HDR + sizeof(rec), sizeof(rec));
	vb = fs_le64(rec.v.ext.first);
	assert_int_equal(fs_bdev_read(t->bdev, vb, 1, blk), 0);
	blk[3000] ^= 0x55;
	assert_int_equal(fs_bdev_write(t->bdev, vb, 1, blk), 0);
}

/* f1 loses its only name (and /d's entry count follows): unreachable. */
static void damage_unreachable(struct tfs *t, const struct tree *tr)
{
	struct fs_inode *dp;
	struct fs_tx *tx;

	tfs_mount(t);
	assert_int_equal(fs_iget(t->fs, tr->d, &dp), 0);
	pthread_rwlock_wrlock(&t->fs->ns_lock);
	assert_int_equal(fs_tx_begin(t->fs, &tx), 0);
	assert_int_equal(fs_dir_remove(t->fs, tx, dp, "f1"), 0);
	assert_int_equal(fs_inode_dirty(t->fs, tx, dp), 0);
	fs_tx_end(t->fs, tx);
	pthread_rwlock_unlock(&t->fs->ns_lock);
	fs_iput(t->fs, dp);
	tfs_umount(t);
}

/* ---- the repair loop ------------------------------------------------------ */
static unsigned repair(struct tfs *t, struct fs_repair_counts *first)
{
	struct fs_repair_counts c;
	struct fs_repair *r;
	uint64_t fixed;
	unsigned round;
	struct fs *fs;

	for (round = 0; round < 12; round++) {
		assert_int_equal(fs_mount(t->bdev, 0, &fs), 0);
		assert_int_equal(fs_repair_scan(fs, NULL, NULL, &r), 0);
		fs_repair_counts(r, &c);
		if (round == 0)
			*first = c;
		fixed = 0;
		if (c.problems)
			assert_int_equal(fs_repair_apply(fs, r, &fixed), 0);
		fs_repair_free(r);
		assert_int_equal(fs_unmount(fs), 0);
		if (!c.problems)
			return round;
		assert_true(fixed > 0);
	}
	fail_msg("repair did not converge");
	return round;
}

/* Repairs in rounds until nothing is found - the first round's counter
 * at offset counter in fs_repair_counts non-zero - then mounts: the
 * filesystem checks, and a new scan finds nothing. */
static void repair_checked(struct tfs *t, size_t counter)
{
	struct fs_repair_counts first, c;
	struct fs_repair *r;

	assert_true(repair(t, &first) >= 1);
	assert_true(*(const uint64_t *)((const char *)&first + counter) > 0);
	tfs_mount(t);
	tfs_check(t);
	assert_int_equal(fs_repair_scan(t->fs, NULL, NULL, &r), 0);
	fs_repair_counts(r, &c);
	fs_repair_free(r);
	assert_int_equal(c.problems, 0);
}

struct repair_case {
	const char *name;
	void (*damage)(struct tfs *t, const struct tree *tr);
	size_t counter;                 /* offsetof in fs_repair_counts */
	bool f1_kept, f1_lost, sub_lost;
};

#define C(field) offsetof(struct fs_repair_counts, field)

static const struct repair_case cases[] = {
	{ "leaked block", damage_leak, C(bitmap_bits), true, false, false },
	{ "used but free", damage_used_but_free, C(bitmap_bits), true, false, false },
	{ "link counts", damage_nlink, C(counts), true, false, false },
	{ "dangling entry", damage_dangling, C(dangling), false, false, false },
	{ "damaged inode", damage_bad_inode, C(dangling), false, false, false },
	{ "directory block", damage_dir_node, C(maps), false, true, true },
	{ "unreachable inode", damage_unreachable, C(unreachable), false, true, false },
	{ "xattr value block", damage_xattr_value, C(maps), true, false, false },
};

static void lost_verify(struct tfs *t, uint64_t ino, size_t size, uint64_t seed)
{
	uint64_t lf = tfs_lookup(t, ROOT, "lost+found");
	char name[32];

	assert_true(lf != 0);
	snprintf(name, sizeof(name), "#%llu", (unsigned long long)ino);
	assert_int_equal(tfs_lookup(t, lf, name), ino);
	if (size)
		file_verify(t, ino, size, seed);
}

static void run_case(void **state, const struct repair_case *rc)
{
	struct tree tr;
	struct tfs *t;

	t = *state = tfs_new(8192, 1);
	tr = tree_make(t);
	tfs_umount(t);
	rc->damage(t, &tr);
	repair_checked(t, rc->counter);
	file_verify(t, tr.keep, F2_SIZE, 3);
	if (rc->f1_kept)
		file_verify(t, tfs_lookup(t, tr.d, "f1"), F1_SIZE, 1);
	else if (!rc->f1_lost)
		assert_int_equal(tfs_lookup(t, tr.d, "f1"), 0);
	if (rc->f1_lost)
		lost_verify(t, tr.f1, F1_SIZE, 1);
	if (rc->sub_lost) {
		lost_verify(t, tr.sub, 0, 0);
		file_verify(t, tfs_lookup(t, tr.sub, "f2"), F2_SIZE, 2);
	} else {
		file_verify(t, tfs_lookup(t, tfs_lookup(t, tr.d, "sub"), "f2"),
			    F2_SIZE, 2);
	}
}

static void test_repair_cases(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case: %s\n", cases[i].name);
		run_case(state, &cases[i]);
		tfs_free(*state);
		*state = NULL;
	}
}

/* ---- salvage: a map damaged in one place keeps the rest ------------------ */
#define SALV_FILES 80           /* /d: name tree of depth 2 */
#define SALV_FILE_SIZE 5000
#define SALV_EXTENTS 400        /* /frag: extent tree of depth 2 */

/* Child 1 of the level-1 root node of a tree of depth 2 (a leaf with
 * leaves on both sides); its records into leafblk. */
static uint64_t middle_leaf(struct tfs *t, struct fs_inode_disk d,
			    uint8_t *leafblk)
{
	uint8_t blk[FS_BSIZE];
	const struct fs_node_disk *n = (const void *)blk;
	const struct fs_bt_ptr_disk *p = (const void *)(blk + FS_NODE_HDR);
	uint64_t leaf;

	assert_int_equal(fs_le32(d.map_depth), 2);
	assert_int_equal(fs_bdev_read(t->bdev, fs_le64(d.map_root), 1, blk), 0);
	assert_int_equal(fs_le16(n->level), 1);
	assert_true(fs_le16(n->count) >= 3);
	leaf = fs_le64(p[1].child);
	assert_int_equal(fs_bdev_read(t->bdev, leaf, 1, leafblk), 0);
	return leaf;
}

static void block_garble(struct tfs *t, uint64_t b)
{
	uint8_t blk[FS_BSIZE];

	assert_int_equal(fs_bdev_read(t->bdev, b, 1, blk), 0);
	blk[2000] ^= 0x55;
	assert_int_equal(fs_bdev_write(t->bdev, b, 1, blk), 0);
}

/*
 * One leaf of a directory's name tree fails its checksum: the entries of
 * the other leaves stay in the directory, those of the damaged one go to
 * /lost+found, every file keeps its data.  Until 2026-12-06 the whole
 * directory was emptied into /lost+found (a tester's find).
 */
static void test_salvage_dir(void **state)
{
	const struct fs_dirent_disk *e;
	uint8_t leafblk[FS_BSIZE];
	uint64_t ino[SALV_FILES], d, lost = 0;
	struct tfs *t;
	char name[16];
	bool gone;

	t = *state = tfs_new(8192, 1);
	d = tfs_mkdir(t, ROOT, "d");
	for (int i = 0; i < SALV_FILES; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		ino[i] = tfs_create(t, d, name);
		file_fill(t, ino[i], SALV_FILE_SIZE, 100 + (uint64_t)i);
	}
	assert_int_equal(fs_syncfs(t->fs), 0);
	tfs_umount(t);
	block_garble(t, middle_leaf(t, inode_get(t, d), leafblk));
	repair_checked(t, C(maps));
	e = (const void *)(leafblk + FS_NODE_HDR);
	for (int i = 0; i < SALV_FILES; i++) {
		gone = false;
		for (unsigned k = 0; k < fs_le16(((const struct fs_node_disk *)
						  leafblk)->count); k++)
			gone |= fs_le64(e[k].ino) == ino[i];
		snprintf(name, sizeof(name), "f%03d", i);
		if (gone) {
			lost++;
			assert_int_equal(tfs_lookup(t, d, name), 0);
			lost_verify(t, ino[i], SALV_FILE_SIZE, 100 + (uint64_t)i);
		} else {
			assert_int_equal(tfs_lookup(t, d, name), ino[i]);
			file_verify(t, ino[i], SALV_FILE_SIZE, 100 + (uint64_t)i);
		}
	}
	assert_true(lost > 0 && lost < SALV_FILES / 2);
}

/*
 * One leaf of a fragmented file's extent tree fails its checksum: the
 * blocks the other leaves map read back as written, those of the damaged
 * one as a hole, the size stays.  Until 2026-12-06 the whole file was
 * emptied.
 */
static void test_salvage_extents(void **state)
{
	uint8_t leafblk[FS_BSIZE], want[FS_BSIZE], got[FS_BSIZE];
	const struct fs_extent_disk *x;
	uint64_t f, lo, hi, lost = 0;
	struct tfs *t;
	unsigned n;

	t = *state = tfs_new(8192, 1);
	f = tfs_create(t, ROOT, "frag");
	for (uint64_t i = 0; i < SALV_EXTENTS; i++) {       /* every other block */
		tfs_pattern(want, sizeof(want), 500 + i);
		assert_int_equal(fs_write(t->fs, f, 2 * i * FS_BSIZE, FS_BSIZE,
					  want, 0), FS_BSIZE);
	}
	assert_int_equal(fs_syncfs(t->fs), 0);
	tfs_umount(t);
	block_garble(t, middle_leaf(t, inode_get(t, f), leafblk));
	x = (const void *)(leafblk + FS_NODE_HDR);
	n = fs_le16(((const struct fs_node_disk *)leafblk)->count);
	lo = fs_le64(x[0].lblk);
	hi = fs_le64(x[n - 1].lblk) + fs_le32(x[n - 1].len);
	repair_checked(t, C(maps));
	for (uint64_t i = 0; i < SALV_EXTENTS; i++) {
		bool gone = 2 * i >= lo && 2 * i < hi;

		tfs_pattern(want, sizeof(want), 500 + i);
		if (gone) {
			memset(want, 0, sizeof(want));
			lost++;
		}
		assert_int_equal(fs_read(t->fs, f, 2 * i * FS_BSIZE, FS_BSIZE,
					 got), FS_BSIZE);
		assert_memory_equal(want, got, sizeof(got));
	}
	assert_true(lost > 0 && lost < SALV_EXTENTS / 2);
}

/* A consistent filesystem: nothing found, nothing changed by apply. */
static void test_clean_scan(void **state)
{
	struct fs_repair_counts c;
	struct fs_repair *r;
	uint64_t fixed;
	struct tfs *t;
	char path[64];

	t = *state = tfs_new(8192, 1);
	struct tree tr = tree_make(t);
	assert_int_equal(fs_repair_scan(t->fs, NULL, NULL, &r), 0);
	fs_repair_counts(r, &c);
	assert_int_equal(c.problems, 0);
	assert_int_equal(c.inodes, 6);
	assert_int_equal(c.dirs, 3);
	fs_repair_path(r, tr.f2, path, sizeof(path));
	assert_string_equal(path, "/d/sub/f2");
	assert_int_equal(fs_repair_apply(t->fs, r, &fixed), 0);
	assert_int_equal(fixed, 0);
	fs_repair_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TFS_OWN(test_clean_scan),
		TFS_OWN(test_repair_cases),
		TFS_OWN(test_salvage_dir),
		TFS_OWN(test_salvage_extents),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
