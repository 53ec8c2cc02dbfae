/*
 * test_fs_big: scale and concurrency: a 100,000-entry directory, a sparse
 * file larger than 4 GiB, stripe-aligned multi-block writes, and several
 * threads writing, creating and listing at once.
 */
#include "fs_test_util.h"
#include <pthread.h>
#include <time.h>
#include <sys/stat.h>
#include "fs_int.h"

#define ROOT FS_ROOT_INO

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct tfs *tfs_big(uint64_t blocks, uint32_t stripe, uint64_t inodes)
{
	struct tfs *t = calloc(1, sizeof(*t));
	struct fs_format_params p = { .inodes = inodes };

	tfs_dev_open(t, blocks, stripe);
	assert_int_equal(fs_format(t->bdev, &p), 0);
	tfs_mount(t);
	t->ctx.umask = 022;
	return t;
}

/* ---- 100,000 entries ---------------------------------------------------------- */
#define NBIG 100000

struct seen {
	uint8_t *hit;
	int dots, total, bad;
};

static int seen_fill(void *arg, const char *name, const struct fs_attr *a,
		     uint64_t next)
{
	struct seen *s = arg;
	long i;

	s->total++;
	if (name[0] == '.') {
		s->dots++;
		return 0;
	}
	i = strtol(name + 5, NULL, 10);
	if (strncmp(name, "file-", 5) || i < 0 || i >= NBIG)
		s->bad++;
	else
		s->hit[i]++;
	return 0;
}

static void readdir_all(struct tfs *t, uint64_t d, int expect_each)
{
	struct seen s = { .hit = calloc(NBIG, 1) };
	int i;

	assert_int_equal(fs_readdir(t->fs, d, 0, 0, false, seen_fill, &s), 0);
	assert_int_equal(s.dots, 2);
	assert_int_equal(s.bad, 0);
	for (i = 0; i < NBIG; i++)
		if (s.hit[i] != ((i % 2 == 0 || expect_each) ? 1 : 0))
			fail_msg("entry %d seen %d times", i, s.hit[i]);
	free(s.hit);
}

static void test_dir_100k(void **state)
{
	struct tfs *t = tfs_big(131072, 16, NBIG + 1000);
	char name[32];
	struct fs_attr a;
	double t0, t1, t2;
	uint64_t d;
	int i;

	(void)state;
	d = tfs_mkdir(t, ROOT, "big");
	t0 = now_s();
	for (i = 0; i < NBIG; i++) {
		snprintf(name, sizeof(name), "file-%d", i);
		assert_int_equal(fs_mknod(t->fs, &t->ctx, d, name, S_IFREG | 0644,
					  0, &a), 0);
		fs_forget(t->fs, a.ino, 1);
	}
	t1 = now_s();
	for (i = 0; i < NBIG; i++) {
		snprintf(name, sizeof(name), "file-%d", (i * 7919) % NBIG);
		assert_int_equal(fs_lookup(t->fs, d, name, &a), 0);
		fs_forget(t->fs, a.ino, 1);
	}
	t2 = now_s();
	print_message("100k entries: %.0f creates/s, %.0f lookups/s (ASan)\n",
		      NBIG / (t1 - t0), NBIG / (t2 - t1));
	assert_int_equal(fs_lookup(t->fs, d, "file-100000", &a), -ENOENT);
	assert_int_equal(fs_mknod(t->fs, &t->ctx, d, "file-5", S_IFREG, 0, &a),
			 -EEXIST);
	readdir_all(t, d, 1);
	tfs_remount(t);
	for (i = 1; i < NBIG; i += 2) {
		snprintf(name, sizeof(name), "file-%d", i);
		assert_int_equal(fs_unlink(t->fs, d, name), 0);
	}
	readdir_all(t, d, 0);
	tfs_remount(t);
	readdir_all(t, d, 0);
	/* lookups stay fast: the last ones did not get slower than ~linear */
	assert_true(t2 - t1 < 30.0);
	tfs_free(t);
}

/* ---- sparse > 4 GiB ------------------------------------------------------------ */
static void test_sparse_5g(void **state)
{
	struct tfs *t = tfs_new(16384, 1);
	const uint64_t g = 1ull << 30;
	uint8_t w[8192], r[8192], z[8192] = { 0 };
	struct fs_attr a, in = { 0 };
	uint64_t f;

	(void)state;
	tfs_pattern(w, sizeof(w), 9);
	f = tfs_create(t, ROOT, "sparse");
	assert_int_equal(fs_write(t->fs, f, 0, 4096, w, 0), 4096);
	assert_int_equal(fs_write(t->fs, f, 5 * g, 8192, w, 0), 8192);
	assert_int_equal(fs_write(t->fs, f, 10 * g + 100, 100, w, 0), 100);
	assert_int_equal(fs_getattr(t->fs, f, &a), 0);
	assert_int_equal(a.size, 10 * g + 200);
	assert_int_equal(a.blocks, 4 * 8);
	assert_int_equal(fs_lseek(t->fs, f, 0, SEEK_HOLE), 4096);
	assert_int_equal(fs_lseek(t->fs, f, 4096, SEEK_DATA), 5 * g);
	assert_int_equal(fs_lseek(t->fs, f, 5 * g + 10, SEEK_HOLE), 5 * g + 8192);
	assert_int_equal(fs_lseek(t->fs, f, 5 * g + 8192, SEEK_DATA), 10 * g);
	assert_int_equal(fs_lseek(t->fs, f, 10 * g + 150, SEEK_HOLE), 10 * g + 200);
	assert_int_equal(fs_lseek(t->fs, f, 10 * g + 200, SEEK_DATA), -ENXIO);
	assert_int_equal(fs_read(t->fs, f, 3 * g, sizeof(r), r), sizeof(r));
	assert_memory_equal(r, z, sizeof(r));
	tfs_remount(t);
	assert_int_equal(fs_read(t->fs, f, 5 * g, sizeof(r), r), sizeof(r));
	assert_memory_equal(r, w, sizeof(r));
	in.size = 5 * g + 4096;
	assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_SIZE, &a), 0);
	assert_int_equal(a.blocks, 2 * 8);
	assert_int_equal(fs_write(t->fs, f, 16ull << 40, 1, "x", 0), 1);
	assert_int_equal(fs_getattr(t->fs, f, &a), 0);
	assert_int_equal(a.size, (16ull << 40) + 1);
	assert_int_equal(fs_write(t->fs, f, 1ull << 50, 1, "x", 0), -EFBIG);
	tfs_free(t);
}

/* ---- stripe-aligned large writes -------------------------------------------------- */
static void test_large_writes_are_striped(void **state)
{
	struct tfs *t = tfs_new(65536, 48);
	static uint8_t w[4 << 20], r[4 << 20];
	uint64_t calls0, calls1, blocks0, blocks1, f, off;
	struct fs_inode *ip;
	struct fs_extent e;
	bool found;

	(void)state;
	tfs_pattern(w, sizeof(w), 5);
	tfs_create(t, ROOT, "small");   /* metadata and small files first */
	f = tfs_create(t, ROOT, "big");
	assert_int_equal(fs_syncfs(t->fs), 0);
	tfs_stats(t, &blocks0, &calls0, NULL);
	for (off = 0; off < sizeof(w); off += 1 << 20)
		assert_int_equal(fs_write(t->fs, f, off, 1 << 20, w + off, 0), 1 << 20);
	tfs_stats(t, &blocks1, &calls1, NULL);
	/* four 1 MiB writes: a handful of device writes, not 1024 */
	assert_int_equal(blocks1 - blocks0, 1024);
	assert_true(calls1 - calls0 <= 8);
	assert_int_equal(fs_iget(t->fs, f, &ip), 0);
	assert_int_equal(fs_ext_map(t->fs, ip, 0, &e, &found), 0);
	assert_true(found);
	assert_int_equal(e.pblk % 48, 0);
	assert_true(e.len >= 1024 - 48);
	fs_iput(t->fs, ip);
	assert_int_equal(fs_read(t->fs, f, 0, sizeof(r), r), sizeof(r));
	assert_memory_equal(r, w, sizeof(r));
	tfs_free(t);
}

/* ---- concurrency ------------------------------------------------------------------ */
#define NTHREADS 6

struct worker {
	struct tfs *t;
	int id;
	uint64_t dir;
	int errors;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	static __thread uint8_t buf[256 << 10], rd[256 << 10];
	struct fs_attr a;
	char name[32];
	uint64_t f, fh, off = 0;
	int i;

	snprintf(name, sizeof(name), "data-%d", w->id);
	if (fs_create(w->t->fs, &w->t->ctx, ROOT, name, 0644, O_RDWR, &a, &fh))
		return (void *)1;
	f = a.ino;
	for (i = 0; i < 40; i++) {
		size_t len = (size_t)(i * 977 + w->id * 131) % sizeof(buf) + 1;

		tfs_pattern(buf, len, (uint64_t)w->id * 1000 + (uint64_t)i);
		if (fs_write(w->t->fs, f, off, len, buf, 0) != (ssize_t)len)
			w->errors++;
		if (fs_read(w->t->fs, f, off, len, rd) != (ssize_t)len ||
		    memcmp(buf, rd, len))
			w->errors++;
		off += len;
		snprintf(name, sizeof(name), "t%d-%d", w->id, i);
		if (fs_mknod(w->t->fs, &w->t->ctx, w->dir, name, S_IFREG | 0600,
			     0, &a))
			w->errors++;
		else
			fs_forget(w->t->fs, a.ino, 1);
		if (i % 3 == 0 && fs_unlink(w->t->fs, w->dir, name))
			w->errors++;
		if (i % 10 == 0 && fs_fsync(w->t->fs, f, 0))
			w->errors++;
	}
	fs_release(w->t->fs, f, fh);
	fs_forget(w->t->fs, f, 1);
	return NULL;
}

static int count_fill(void *arg, const char *name, const struct fs_attr *a,
		      uint64_t next)
{
	(*(int *)arg)++;
	return 0;
}

static void test_concurrent_writers(void **state)
{
	struct tfs *t = tfs_new(65536, 16);
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t shared;
	int i, n;

	(void)state;
	shared = tfs_mkdir(t, ROOT, "shared");
	for (i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ t, i, shared, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++) {
		void *ret;

		pthread_join(th[i], &ret);
		assert_null(ret);
		assert_int_equal(w[i].errors, 0);
	}
	tfs_remount(t);
	n = 0;
	assert_int_equal(fs_readdir(t->fs, shared, 0, 0, false, count_fill, &n), 0);
	assert_int_equal(n, 2 + NTHREADS * (40 - 14));
	for (i = 0; i < NTHREADS; i++) {
		static uint8_t buf[256 << 10], rd[256 << 10];
		char name[32];
		uint64_t off = 0, f;
		int k;

		snprintf(name, sizeof(name), "data-%d", i);
		f = tfs_lookup(t, ROOT, name);
		for (k = 0; k < 40; k++) {
			size_t len = (size_t)(k * 977 + i * 131) % sizeof(buf) + 1;

			tfs_pattern(buf, len, (uint64_t)i * 1000 + (uint64_t)k);
			assert_int_equal(fs_read(t->fs, f, off, len, rd), len);
			assert_memory_equal(buf, rd, len);
			off += len;
		}
	}
	tfs_free(t);
}

/* ---- namespace stress: many threads, shared directories --------------------- */
#define SDIRS 4
#define SNAMES 40
#define SOPS 1500

struct stress {
	struct tfs *t;
	uint64_t dirs[SDIRS];
	uint64_t seed;
	int bad;
};

static bool stress_err_ok(long e)
{
	return e >= 0 || e == -ENOENT || e == -EEXIST || e == -ENOTEMPTY ||
	       e == -EISDIR || e == -ENOTDIR || e == -EINVAL;
}

/* Takes every entry; in plus mode (arg: the fs) gives the reference back
 * as the kernel eventually would. */
static int null_fill(void *arg, const char *name, const struct fs_attr *a,
		     uint64_t next)
{
	if (arg && strcmp(name, ".") && strcmp(name, ".."))
		fs_forget(arg, a->ino, 1);
	return 0;
}

static void stress_op(struct stress *s, uint64_t r)
{
	static __thread uint8_t buf[20000];
	struct fs *fs = s->t->fs;
	uint64_t d = s->dirs[r % SDIRS], d2 = s->dirs[(r >> 8) % SDIRS];
	struct fs_attr a, in = { 0 };
	char n1[16], n2[16];
	long e = 0;

	snprintf(n1, sizeof(n1), "%s%d", (r >> 20) % 5 ? "n" : "s",
		 (int)((r >> 12) % SNAMES));
	snprintf(n2, sizeof(n2), "%s%d", (r >> 40) % 5 ? "n" : "s",
		 (int)((r >> 28) % SNAMES));
	switch ((r >> 50) % 11) {
	case 0:
		e = n1[0] == 's' ? fs_mkdir(fs, &s->t->ctx, d, n1, 0755, &a) :
		    fs_mknod(fs, &s->t->ctx, d, n1, S_IFREG | 0644, 0, &a);
		if (!e)
			fs_forget(fs, a.ino, 1);
		break;
	case 1:
		e = fs_unlink(fs, d, n1);
		break;
	case 2:
		e = fs_rmdir(fs, d, n1);
		break;
	case 3:
		e = fs_rename(fs, d, n1, d2, n2, (unsigned)(r >> 60) % 3 == 2 ?
			      RENAME_EXCHANGE : 0);
		break;
	case 4:
		e = fs_lookup(fs, d, n1, &a);
		if (!e) {
			fs_forget(fs, a.ino, 1);
			e = fs_link(fs, a.ino, d2, n2, &a);
			if (e == -EPERM)
				e = 0;
			if (!e)
				fs_forget(fs, a.ino, 1);
		}
		break;
	case 5: case 6:
		e = fs_lookup(fs, d, n1, &a);
		if (!e) {
			if (S_ISREG(a.mode))
				e = fs_write(fs, a.ino, (r >> 30) % 30000,
					     (r >> 10) % sizeof(buf), buf, 0);
			fs_forget(fs, a.ino, 1);
		}
		break;
	case 7:
		e = fs_lookup(fs, d, n1, &a);
		if (!e) {
			in.size = (r >> 33) % 40000;
			if (S_ISREG(a.mode))
				e = fs_setattr(fs, a.ino, &in, FS_SET_ATTR_SIZE,
					       NULL);
			fs_forget(fs, a.ino, 1);
		}
		break;
	case 8:
		e = fs_readdir(fs, d, 0, 0, (r >> 9) & 1, null_fill,
			       (r >> 9) & 1 ? fs : NULL);
		break;
	case 9:
		if ((r >> 16) % 8 == 0)
			e = fs_fsync(fs, d, 0);
		break;
	default:
		e = fs_setxattr(fs, &s->t->ctx, d, "user.x", n1, strlen(n1), 0);
		break;
	}
	if (!stress_err_ok(e)) {
		fprintf(stderr, "stress: op %llu: %ld\n",
			(unsigned long long)((r >> 50) % 11), e);
		s->bad++;
	}
}

static void *stress_main(void *arg)
{
	struct stress *s = arg;
	uint64_t x = s->seed * 0x9e3779b97f4a7c15ull + 1;
	int i;

	for (i = 0; i < SOPS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		stress_op(s, x);
	}
	return NULL;
}

struct walk {
	struct tfs *t;
	uint64_t inos[4096];
	uint64_t blocks[4096];
	uint32_t links[4096];         /* names found */
	uint32_t nlink[4096];
	uint32_t subdirs[4096];
	int n;
	uint64_t dirs[1024];
	int ndirs;
	uint64_t cur;                   /* the directory being listed */
};

static int walk_slot(struct walk *w, const struct fs_attr *a)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (w->inos[i] == a->ino)
			return i;
	assert_true(w->n < 4096);
	w->inos[w->n] = a->ino;
	w->blocks[w->n] = a->blocks / 8;
	w->nlink[w->n] = a->nlink;
	w->links[w->n] = 0;
	w->subdirs[w->n] = 0;
	return w->n++;
}

static int walk_fill(void *arg, const char *name, const struct fs_attr *unused,
		     uint64_t next)
{
	struct walk *w = arg;
	struct fs_attr a;
	int i;

	if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
		return 0;
	assert_int_equal(fs_lookup(w->t->fs, w->cur, name, &a), 0);
	fs_forget(w->t->fs, a.ino, 1);
	i = walk_slot(w, &a);
	w->links[i]++;
	if (S_ISDIR(a.mode)) {
		struct fs_attr pa;

		assert_int_equal(fs_getattr(w->t->fs, w->cur, &pa), 0);
		w->subdirs[walk_slot(w, &pa)]++;
		assert_true(w->ndirs < 1024);
		w->dirs[w->ndirs++] = a.ino;
	}
	return 0;
}

/* Walks the whole tree: link counts and space accounting must add up. */
static void check_tree(struct tfs *t)
{
	struct walk *w = calloc(1, sizeof(*w));
	struct statvfs st;
	struct fs_attr a;
	uint64_t blocks = 0;
	int i, done = 0;

	w->t = t;
	assert_int_equal(fs_getattr(t->fs, ROOT, &a), 0);
	walk_slot(w, &a);
	w->dirs[w->ndirs++] = ROOT;
	while (done < w->ndirs) {
		w->cur = w->dirs[done++];
		assert_int_equal(fs_readdir(t->fs, w->cur, 0, 0, false, walk_fill,
					    w), 0);
	}
	for (i = 0; i < w->n; i++) {
		struct fs_attr x;

		assert_int_equal(fs_getattr(t->fs, w->inos[i], &x), 0);
		if (S_ISDIR(x.mode))
			assert_int_equal(x.nlink, 2 + w->subdirs[i]);
		else
			assert_int_equal(x.nlink, w->links[i]);
		blocks += w->blocks[i];
	}
	assert_int_equal(fs_statfs(t->fs, &st), 0);
	assert_int_equal(st.f_blocks - st.f_bfree, blocks + tfs_inode_blocks(t));
	assert_int_equal(st.f_files - st.f_ffree, (uint64_t)w->n);
	free(w);
}

static void test_namespace_stress(void **state)
{
	struct tfs *t = tfs_new(32768, 16);
	struct stress s[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t dirs[SDIRS];
	char name[16];
	int i;

	(void)state;
	for (i = 0; i < SDIRS; i++) {
		snprintf(name, sizeof(name), "dir%d", i);
		dirs[i] = tfs_mkdir(t, ROOT, name);
	}
	for (i = 0; i < NTHREADS; i++) {
		s[i] = (struct stress){ .t = t, .seed = (uint64_t)i + 1 };
		memcpy(s[i].dirs, dirs, sizeof(dirs));
		assert_int_equal(pthread_create(&th[i], NULL, stress_main, &s[i]),
				 0);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(s[i].bad, 0);
	}
	check_tree(t);
	tfs_remount(t);
	check_tree(t);
	tfs_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir_100k),
		cmocka_unit_test(test_sparse_5g),
		cmocka_unit_test(test_large_writes_are_striped),
		cmocka_unit_test(test_concurrent_writers),
		cmocka_unit_test(test_namespace_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
