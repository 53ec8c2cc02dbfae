/*
 * test_fs_report: what the filesystem tells when it meets damage - its
 * messages go to the logger a program installs (fs_set_logger), and a read
 * that cannot be delivered is logged with the inode, the path it was
 * reached through and the byte range, narrowed down to the blocks that
 * fail, once.
 */
#include "fs_test_util.h"

#define LOG_LINES 32
static char log_lines[LOG_LINES][512];
static int log_n;

static void log_capture(int level, const char *msg)
{
	if (log_n < LOG_LINES)
		snprintf(log_lines[log_n++], sizeof(log_lines[0]), "%s", msg);
}

/* How many captured lines contain what. */
static int log_count(const char *what)
{
	int i, n = 0;

	for (i = 0; i < log_n; i++)
		n += strstr(log_lines[i], what) != NULL;
	return n;
}

static void log_dump(void)
{
	int i;

	for (i = 0; i < log_n; i++)
		print_message("  log: %s\n", log_lines[i]);
}

/* The line "inode INO WHERE: bytes RANGE unreadable" was logged once
 * (WHERE: " (/path)" or ""). */
static void assert_reported(uint64_t ino, const char *where,
			    const char *range)
{
	char want[256];

	snprintf(want, sizeof(want), "inode %llu%s: bytes %s unreadable",
		 (unsigned long long)ino, where, range);
	if (log_count(want) != 1)
		log_dump();
	assert_int_equal(log_count(want), 1);
}

static int setup(void **state)
{
	log_n = 0;
	fs_set_logger(log_capture);
	return tfs_setup(state);
}

static int teardown(void **state)
{
	fs_set_logger(NULL);
	return tfs_teardown(state);
}

#define FILE_BLOCKS 16

/* Block k of the test file: a header naming it, then noise. */
static void file_block(uint8_t *b, uint64_t k)
{
	tfs_pattern(b, FS_BLOCK_SIZE, k + 77);
	snprintf((char *)b, 32, "REPORT-BLOCK-%06llu", (unsigned long long)k);
}

static uint64_t file_write(struct tfs *t, uint64_t ino)
{
	uint8_t *buf = malloc(FILE_BLOCKS * FS_BLOCK_SIZE);
	uint64_t k;

	assert_non_null(buf);
	for (k = 0; k < FILE_BLOCKS; k++)
		file_block(buf + k * FS_BLOCK_SIZE, k);
	assert_int_equal(fs_write(t->fs, ino, 0, FILE_BLOCKS * FS_BLOCK_SIZE,
				  buf, 0), FILE_BLOCKS * FS_BLOCK_SIZE);
	assert_int_equal(fs_syncfs(t->fs), 0);
	free(buf);
	return ino;
}

/* Byte offset of file block k on the device (found by its content). */
static uint64_t block_offset(struct tfs *t, uint64_t k)
{
	char want[32];
	uint8_t b[FS_BLOCK_SIZE];
	uint64_t off;

	snprintf(want, sizeof(want), "REPORT-BLOCK-%06llu",
		 (unsigned long long)k);
	for (off = 0; off < t->mem->size; off += FS_BLOCK_SIZE) {
		assert_int_equal(rc_dev_read(t->mem, b, sizeof(b), off), 0);
		if (!memcmp(b, want, strlen(want) + 1))
			return off;
	}
	fail_msg("file block %llu not on the device", (unsigned long long)k);
	return 0;
}

static void block_break(struct tfs *t, uint64_t k)
{
	assert_int_equal(rc_fault_eio(t->fault, RC_FAULT_READ,
				      block_offset(t, k), FS_BLOCK_SIZE,
				      RC_FAULT_PERSISTENT), 0);
}

static ssize_t file_read(struct tfs *t, uint64_t ino, uint64_t k,
			 uint64_t blocks)
{
	uint8_t *buf = malloc(blocks * FS_BLOCK_SIZE);
	ssize_t n;

	assert_non_null(buf);
	n = fs_read(t->fs, ino, k * FS_BLOCK_SIZE, blocks * FS_BLOCK_SIZE, buf);
	free(buf);
	return n;
}

/* A read over a bad block: one line with the path and the block's bytes;
 * the retry of the page alone adds nothing. */
static void test_unreadable_named(void **state)
{
	struct tfs *t = *state;
	uint64_t a = tfs_mkdir(t, FS_ROOT_INO, "a");
	uint64_t b = tfs_mkdir(t, a, "b");
	uint64_t ino = file_write(t, tfs_create(t, b, "file"));

	block_break(t, 5);
	assert_int_equal(file_read(t, ino, 0, FILE_BLOCKS), -EIO);
	assert_int_equal(file_read(t, ino, 5, 1), -EIO);
	assert_int_equal(file_read(t, ino, 6, 10), 10 * FS_BLOCK_SIZE);
	assert_reported(ino, " (/a/b/file)", "20480-24575");
	assert_int_equal(log_count("unreadable"), 1);
	t->damaged = true;      /* fs_check reads the file's blocks */
}

/* Runs of bad blocks are reported as runs; the end of a run is the file's
 * end when the last block is partial. */
static void test_unreadable_runs(void **state)
{
	struct tfs *t = *state;
	uint64_t ino = file_write(t, tfs_create(t, FS_ROOT_INO, "f"));
	struct fs_attr in = { .size = 15 * FS_BLOCK_SIZE + 100 }, out;

	block_break(t, 2);
	block_break(t, 3);
	block_break(t, 9);
	assert_int_equal(file_read(t, ino, 0, FILE_BLOCKS), -EIO);
	assert_reported(ino, " (/f)", "8192-16383");
	assert_reported(ino, " (/f)", "36864-40959");

	/* a file ending inside a bad block */
	assert_int_equal(fs_setattr(t->fs, ino, &in, FS_SET_ATTR_SIZE, &out),
			 0);
	block_break(t, 15);
	assert_int_equal(file_read(t, ino, 15, 1), -EIO);
	assert_reported(ino, " (/f)", "61440-61539");

	/* read again: every run was reported a moment ago */
	assert_int_equal(file_read(t, ino, 0, FILE_BLOCKS), -EIO);
	assert_int_equal(log_count("unreadable"), 3);
	t->damaged = true;
}

/* The path follows renames and hard links; an unlinked file has none. */
static void test_unreadable_moved(void **state)
{
	struct tfs *t = *state;
	uint64_t d = tfs_mkdir(t, FS_ROOT_INO, "d");
	uint64_t e = tfs_mkdir(t, FS_ROOT_INO, "e");
	uint64_t ino = file_write(t, tfs_create(t, d, "old"));
	struct fs_attr a;
	uint64_t fh;

	assert_int_equal(fs_rename(t->fs, d, "old", e, "new", 0), 0);
	assert_int_equal(fs_rename(t->fs, FS_ROOT_INO, "e", d, "sub", 0), 0);
	block_break(t, 1);
	assert_int_equal(file_read(t, ino, 1, 1), -EIO);
	assert_reported(ino, " (/d/sub/new)", "4096-8191");

	assert_int_equal(fs_link(t->fs, ino, FS_ROOT_INO, "link", &a), 0);
	fs_forget(t->fs, ino, 1);
	block_break(t, 2);
	assert_int_equal(file_read(t, ino, 2, 1), -EIO);
	assert_reported(ino, " (/link)", "8192-12287");

	assert_int_equal(fs_open(t->fs, ino, O_RDONLY, &fh), 0);
	assert_int_equal(fs_unlink(t->fs, FS_ROOT_INO, "link"), 0);
	assert_int_equal(fs_unlink(t->fs, e, "new"), 0);
	block_break(t, 3);
	assert_int_equal(file_read(t, ino, 3, 1), -EIO);
	assert_reported(ino, "", "12288-16383");
	assert_int_equal(fs_release(t->fs, ino, fh), 0);
	t->damaged = true;
}

struct owner_hits {
	uint64_t ino[8], off[8], block[8];
	int n;
};

static void owner_hit(void *ctx, uint64_t ino, uint64_t off, uint64_t block)
{
	struct owner_hits *h = ctx;

	assert_true(h->n < 8);
	h->ino[h->n] = ino;
	h->off[h->n] = off;
	h->block[h->n++] = block;
}

static int u64_order(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Which file holds a block, at which byte (the daemon's damage list):
 * every block asked for that a file maps, nothing for one no file holds;
 * and the path of a file not looked up since mount, found by search. */
static void test_blocks_owners(void **state)
{
	struct tfs *t = *state;
	uint64_t d = tfs_mkdir(t, FS_ROOT_INO, "dir");
	uint64_t ino = file_write(t, tfs_create(t, d, "file"));
	uint64_t blocks[3] = { block_offset(t, 7) / FS_BLOCK_SIZE,
			       block_offset(t, 3) / FS_BLOCK_SIZE, 0 };
	struct owner_hits h = { .n = 0 };
	char path[256];

	qsort(blocks, 3, sizeof(blocks[0]), u64_order);
	assert_int_equal(fs_blocks_owners(t->fs, blocks, 3, owner_hit, &h), 0);
	assert_int_equal(h.n, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(h.ino[i], ino);
		assert_int_equal(h.block[i], h.off[i] == 3 * FS_BLOCK_SIZE ?
				 block_offset(t, 3) / FS_BLOCK_SIZE :
				 block_offset(t, 7) / FS_BLOCK_SIZE);
	}
	assert_true(h.off[0] + h.off[1] == 10 * FS_BLOCK_SIZE);

	tfs_remount(t);                 /* the names it was reached by go */
	assert_int_equal(fs_path(t->fs, ino, path, sizeof(path)), -ENOENT);
	assert_int_equal(fs_path_find(t->fs, ino, path, sizeof(path)), 0);
	assert_string_equal(path, "/dir/file");
	assert_int_equal(fs_path_find(t->fs, d, path, sizeof(path)), 0);
	assert_string_equal(path, "/dir");
	assert_int_equal(fs_path_find(t->fs, ino + 1000, path, sizeof(path)),
			 -ENOENT);
	assert_string_equal(path, "");
}

/* Messages about damaged metadata reach the logger, not stderr. */
static void test_logger_gets_messages(void **state)
{
	struct tfs *t = *state;
	uint8_t zero[FS_BLOCK_SIZE] = { 0 };

	tfs_umount(t);
	assert_int_equal(rc_dev_write(t->mem, zero, sizeof(zero), 0), 0);
	tfs_mount(t);
	assert_int_equal(log_count("superblock copy 0 is damaged"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unreadable_named, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_runs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_moved, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_blocks_owners, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_logger_gets_messages,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
