/*
 * fs inode allocation (fs/ichunk.c, format 2): inodes in chunks allocated
 * from the data area as files are created, so a filesystem runs out of
 * inodes only when it runs out of space; inode numbers stable across
 * remounts; statfs's f_files / f_ffree an honest estimate that adds up;
 * mkfs's maximum honoured; chunk allocation atomic under power cuts.
 */
#include "fs_test_util.h"
#include "fs_int.h"

#define ROOT FS_ROOT_INO

/* An empty regular file: 0 or the error. */
static int mkfile(struct tfs *t, uint64_t dir, int i, uint64_t *ino)
{
	struct fs_attr a;
	char name[32];
	int err;

	snprintf(name, sizeof(name), "f%06d", i);
	err = fs_mknod(t->fs, &t->ctx, dir, name, S_IFREG | 0644, 0, &a);
	if (!err) {
		fs_forget(t->fs, a.ino, 1);
		if (ino)
			*ino = a.ino;
	}
	return err;
}

static uint64_t lookup_file(struct tfs *t, uint64_t dir, int i)
{
	char name[32];

	snprintf(name, sizeof(name), "f%06d", i);
	return tfs_lookup(t, dir, name);
}

#define NFILES 20000
#define NDIRS 4

/*
 * 20,000 files on 64 MiB, where format 1's default (a fixed table of one
 * inode per 16 KiB) held 4,096: numbers stable across a remount, statfs
 * adding up, every inode back after deletion.
 */
static void test_beyond_fixed_table(void **state)
{
	struct tfs *t = *state = tfs_new(16384, 1);
	uint64_t d[NDIRS], *ino = calloc(NFILES, sizeof(*ino));
	struct statvfs s0, s1, s2;
	char name[16];
	int i;

	assert_non_null(ino);
	for (i = 0; i < NDIRS; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		d[i] = tfs_mkdir(t, ROOT, name);
	}
	assert_int_equal(fs_syncfs(t->fs), 0);
	assert_int_equal(fs_statfs(t->fs, &s0), 0);
	assert_true(s0.f_ffree >= NFILES);
	for (i = 0; i < NFILES; i++)
		assert_int_equal(mkfile(t, d[i % NDIRS], i, &ino[i]), 0);
	assert_int_equal(fs_statfs(t->fs, &s1), 0);
	/* the estimate keeps its sum: used + free is what it was */
	/* exact: what is in use (the free part is an estimate) */
	assert_int_equal(s1.f_files - s1.f_ffree, s0.f_files - s0.f_ffree +
			 NFILES);
	tfs_remount(t);
	for (i = 0; i < NFILES; i++)
		assert_int_equal(lookup_file(t, d[i % NDIRS], i), ino[i]);
	for (i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "f%06d", i);
		assert_int_equal(fs_unlink(t->fs, d[i % NDIRS], name), 0);
	}
	assert_int_equal(fs_syncfs(t->fs), 0);
	assert_int_equal(fs_statfs(t->fs, &s2), 0);
	assert_int_equal(s2.f_files - s2.f_ffree, s0.f_files - s0.f_ffree);
	/* the 1250 chunks and the chunk map's nodes are given back; the
	 * directories keep their blocks, as ext4's do (they kept them all,
	 * 1250 blocks more, before: a tester's find) */
	assert_true(s0.f_bfree - s2.f_bfree < NFILES / 16 / 4);
	tfs_remount(t);
	assert_int_equal(mkfile(t, d[0], 0, &ino[0]), 0);
	assert_true(ino[0] < 16);       /* the lowest free number again */
	free(ino);
}

/*
 * The last chunks, once empty, are given back in the transaction that
 * empties them; a chunk made again gives its slots generations above
 * every one this mount has handed out, so a file in a slot a deleted file
 * had is never taken for it (a generation of 1 again would be); fs_check
 * holds across a remount.
 */
static void test_chunks_given_back(void **state)
{
	struct tfs *t = *state = tfs_new(4096, 1);
	uint64_t ino[48], gen[48];
	struct statvfs s0, s1, s2;
	struct fs_attr a;
	char name[32];
	int i;

	assert_int_equal(fs_syncfs(t->fs), 0);
	assert_int_equal(fs_statfs(t->fs, &s0), 0);
	for (i = 0; i < 48; i++) {
		assert_int_equal(mkfile(t, ROOT, i, &ino[i]), 0);
		assert_int_equal(fs_getattr(t->fs, ino[i], &a), 0);
		gen[i] = a.generation;
	}
	assert_int_equal(fs_syncfs(t->fs), 0);
	assert_int_equal(fs_statfs(t->fs, &s1), 0);
	assert_true(s0.f_bfree - s1.f_bfree >= 2);      /* chunks 1 and 2 */
	for (i = 0; i < 48; i++) {
		snprintf(name, sizeof(name), "f%06d", i);
		assert_int_equal(fs_unlink(t->fs, ROOT, name), 0);
	}
	assert_int_equal(fs_syncfs(t->fs), 0);
	assert_int_equal(fs_statfs(t->fs, &s2), 0);
	assert_int_equal(s2.f_bfree, s0.f_bfree);
	assert_int_equal(fs_ichunk_blocks(t->fs) - t->fs->ichunks.nodes, 1);
	for (i = 0; i < 48; i++) {
		assert_int_equal(mkfile(t, ROOT, i, &a.ino), 0);
		assert_int_equal(a.ino, ino[i]);
		assert_int_equal(fs_getattr(t->fs, ino[i], &a), 0);
		if (ino[i] >= 16)
			assert_true(a.generation > gen[47]);
		else
			assert_true(a.generation > gen[i]);
	}
	tfs_remount(t);
	tfs_check(t);
	assert_int_equal(tfs_lookup(t, ROOT, "f000047"), ino[47]);
	/* across a remount too (a file handle outlives a mount: NFS, or
	 * name_to_handle_at saved in a file): given back, remounted, made
	 * again, no slot repeats its generation */
	for (int round = 0; round < 2; round++) {
		for (i = 0; i < 48; i++) {
			snprintf(name, sizeof(name), "f%06d", i);
			assert_int_equal(fs_unlink(t->fs, ROOT, name), 0);
		}
		tfs_remount(t);
		for (i = 0; i < 48; i++) {
			assert_int_equal(mkfile(t, ROOT, i, &a.ino), 0);
			assert_int_equal(a.ino, ino[i]);
			assert_int_equal(fs_getattr(t->fs, ino[i], &a), 0);
			if (round && ino[i] >= 16)
				assert_true((uint32_t)a.generation !=
					    (uint32_t)gen[i]);
			gen[i] = a.generation;
		}
	}
}

/* Files until ENOSPC: space, not a table, is what runs out. */
static void test_until_space(void **state)
{
	struct tfs *t = *state = tfs_new(2048, 1);
	struct statvfs s0, s1;
	int i, err = 0;

	assert_int_equal(fs_statfs(t->fs, &s0), 0);
	for (i = 0; !err; i++)
		err = mkfile(t, ROOT, i, NULL);
	assert_int_equal(err, -ENOSPC);
	assert_int_equal(fs_statfs(t->fs, &s1), 0);
	assert_int_equal(s1.f_ffree, 0);
	assert_int_equal(s1.f_bavail, 0);
	/* format 1 gave 8 MiB 512 inodes; the estimate was an upper bound */
	assert_true(i - 1 > 4 * 512);
	assert_true((uint64_t)(i - 1) <= s0.f_ffree);
	tfs_remount(t);
	assert_int_equal(mkfile(t, ROOT, i, NULL), -ENOSPC);
	assert_int_equal(fs_unlink(t->fs, ROOT, "f000000"), 0);
	assert_int_equal(mkfile(t, ROOT, 0, NULL), 0);
}

/* mkfs -N: the limit holds however much space is free. */
static void test_limit(void **state)
{
	struct fs_format_params p = { .inodes = 100 };
	struct tfs *t = *state = tfs_new_with(8192, 1, &p);
	struct statvfs st;
	int i, err = 0;

	assert_int_equal(fs_statfs(t->fs, &st), 0);
	assert_int_equal(st.f_files, 111);       /* 102 rounded up to chunks */
	for (i = 0; !err; i++)
		err = mkfile(t, ROOT, i, NULL);
	assert_int_equal(err, -ENOSPC);
	assert_int_equal(i - 1, 110);
	assert_int_equal(fs_statfs(t->fs, &st), 0);
	assert_int_equal(st.f_ffree, 0);
	assert_true(st.f_bavail > 1000);
	tfs_umount(t);
	/* mke2fs -i: one per 64 KiB of the 32 MiB, 512 numbers */
	p.inodes = 0;
	p.bytes_per_inode = 65536;
	assert_int_equal(fs_format(t->bdev, &p), 0);
	tfs_mount(t);
	assert_int_equal(fs_statfs(t->fs, &st), 0);
	assert_int_equal(st.f_files, 511);
}

/* A power cut while files are created across new chunks: consistent. */
static bool crash_create_at(int64_t limit)
{
	struct fs_format_params p = { .journal_blocks = 64 };
	struct tfs *t = tfs_new_with(4096, 1, &p);
	uint64_t w0 = tfs_cut_arm(t, limit);
	bool cut;
	int i;

	for (i = 0; i < 60; i++)
		if (mkfile(t, ROOT, i, NULL))
			break;
	cut = tfs_cut_fire(t, w0, limit);
	for (i = 0; i < 60; i++)        /* files made, then more */
		if (!lookup_file(t, ROOT, i))
			assert_int_equal(mkfile(t, ROOT, i, NULL), 0);
	tfs_free(t);
	return cut;
}

static void test_crash_create(void **state)
{
	assert_true(tfs_cut_sweep(crash_create_at, 2) > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TFS_OWN(test_beyond_fixed_table),
		TFS_OWN(test_chunks_given_back),
		TFS_OWN(test_until_space),
		TFS_OWN(test_limit),
		cmocka_unit_test(test_crash_create),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
