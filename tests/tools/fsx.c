/*
 * fsx: the file system exerciser, after the classic fsx (NeXT, Apple,
 * xfstests, LTP), written afresh for raidfs.
 *
 * One file, one in-memory model of it (good_buf, file_size).  A seeded
 * random sequence of operations is applied to both:
 *
 *   read, write, mapread, mapwrite (mmap + msync), truncate (grow and
 *   shrink), fallocate (extend or keep size), punch hole, zero range,
 *   copy_file_range (within the file), fsync, close/reopen
 *
 * and every read (plain, mapped, the size after each operation, the whole
 * file after each reopen and at the end) is compared with the model.  On a
 * mismatch fsx prints the seed, the operation log (the last LOGSIZE
 * operations) and the differing bytes, and exits 1.
 *
 * Invariant of the model: good_buf[file_size .. maxlen) is all zero, so
 * growing the file (truncate up, write past EOF, fallocate) needs no
 * bookkeeping and a shrink zeroes what it cuts off.
 *
 * Written bytes identify their operation: byte i of operation n is
 * n % 256 at even offsets and (n + orig[i]) % 256 at odd ones (orig is a
 * fixed random buffer), so a stale byte in a failure report names the
 * operation that wrote it.
 *
 * Optional operations are probed at start: one the filesystem answers
 * with EOPNOTSUPP/ENOSYS/EINVAL is disabled with a "disabling" line that
 * says why (a test greps those lines).  -Z makes any such disabling fatal.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>

enum fsx_op {
	OP_READ, OP_WRITE, OP_MAPREAD, OP_MAPWRITE, OP_TRUNCATE,
	OP_FALLOCATE, OP_PUNCH_HOLE, OP_ZERO_RANGE, OP_COPY_RANGE,
	OP_FSYNC, OP_REOPEN, OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"read", "write", "mapread", "mapwrite", "truncate", "fallocate",
	"punch_hole", "zero_range", "copy_range", "fsync", "close/open",
};

/* Relative frequency of each operation (reopen is driven by -c). */
static const int op_weight[OP_COUNT] = {
	[OP_READ] = 10, [OP_WRITE] = 10, [OP_MAPREAD] = 5, [OP_MAPWRITE] = 5,
	[OP_TRUNCATE] = 4, [OP_FALLOCATE] = 3, [OP_PUNCH_HOLE] = 3,
	[OP_ZERO_RANGE] = 3, [OP_COPY_RANGE] = 4, [OP_FSYNC] = 1,
};

struct log_entry {
	enum fsx_op op;
	unsigned long n;		/* operation number, from 1 */
	uint64_t off, len, off2;	/* off2: copy destination */
	uint64_t size_before, size_after;
	int flags;			/* LOG_* */
};

#define LOG_KEEP_SIZE	1
#define LOG_SKIPPED	2

#define LOGSIZE 1000

struct fsx {
	const char *path;
	int fd;
	unsigned char *good;		/* model of the file, maxlen bytes */
	unsigned char *orig;		/* fixed random pattern */
	unsigned char *tmp;		/* read buffer */
	uint64_t file_size;
	uint64_t maxlen, maxop;
	unsigned long nops, opnum;
	unsigned int seed;
	int reopen_prob;		/* 1 in N operations; 0 = never */
	bool enabled[OP_COUNT];
	bool strict;			/* -Z: disabling an op is fatal */
	bool verbose;
	bool drop_cache;		/* -I: drop cached pages at each reopen */
	const char *good_path;		/* -g: the model is saved here */
	long pagesize;
	struct log_entry log[LOGSIZE];
	unsigned long logcount;
	unsigned long weight_sum;
};

static uint64_t rnd(void)
{
	return ((uint64_t)random() << 31) ^ (uint64_t)random();
}

static void log_add(struct fsx *f, enum fsx_op op, uint64_t off, uint64_t len,
		    uint64_t off2, uint64_t before, int flags)
{
	struct log_entry *e = &f->log[f->logcount % LOGSIZE];

	*e = (struct log_entry){ op, f->opnum, off, len, off2, before,
				 f->file_size, flags };
	f->logcount++;
	if (f->verbose)
		printf("%lu %s 0x%" PRIx64 " len 0x%" PRIx64 "\n", f->opnum,
		       op_names[op], off, len);
}

static void log_print_one(const struct log_entry *e)
{
	printf("%6lu %-10s off 0x%-8" PRIx64 " len 0x%-7" PRIx64, e->n,
	       op_names[e->op], e->off, e->len);
	if (e->op == OP_COPY_RANGE)
		printf(" to 0x%" PRIx64, e->off2);
	if (e->size_before != e->size_after)
		printf(" size 0x%" PRIx64 " -> 0x%" PRIx64, e->size_before,
		       e->size_after);
	if (e->flags & LOG_KEEP_SIZE)
		printf(" keep_size");
	if (e->flags & LOG_SKIPPED)
		printf(" (skipped)");
	printf("\n");
}

static void log_dump(const struct fsx *f)
{
	unsigned long i, first = f->logcount > LOGSIZE ? f->logcount - LOGSIZE : 0;

	printf("LOG DUMP (%lu operations, last %lu shown):\n", f->logcount,
	       f->logcount - first);
	for (i = first; i < f->logcount; i++)
		log_print_one(&f->log[i % LOGSIZE]);
}

/* -g: the model, for comparing the file after a remount (or a failure). */
static void good_save(const struct fsx *f)
{
	FILE *out;

	if (!f->good_path || !f->good)
		return;
	out = fopen(f->good_path, "w");
	if (!out || fwrite(f->good, 1, f->file_size, out) != f->file_size ||
	    fclose(out) != 0)
		fprintf(stderr, "fsx: cannot save the model to %s\n", f->good_path);
}

static void __attribute__((noreturn, format(printf, 2, 3)))
fsx_fail(const struct fsx *f, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	printf("fsx FAILURE at operation %lu (seed %u, file %s): ", f->opnum,
	       f->seed, f->path);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	log_dump(f);
	printf("fsx: reproduce with: fsx -S %u -N %lu -l %" PRIu64 " -o %" PRIu64
	       " ... %s\n", f->seed, f->nops, f->maxlen, f->maxop, f->path);
	fflush(stdout);
	good_save(f);
	exit(1);
}

/* Which operation wrote this byte (see the pattern in the file comment). */
static unsigned int byte_opnum(const struct fsx *f, uint64_t off,
			       unsigned char c)
{
	return (off & 1) ? (unsigned char)(c - f->orig[off]) : c;
}

static void report_mismatch(const struct fsx *f, uint64_t off, uint64_t len,
			    const unsigned char *got, const char *what)
{
	uint64_t i, first = UINT64_MAX, bad = 0;
	int shown = 0;

	for (i = 0; i < len; i++) {
		if (got[i] == f->good[off + i])
			continue;
		if (first == UINT64_MAX)
			first = i;
		bad++;
	}
	printf("%s: %" PRIu64 " bad bytes in [0x%" PRIx64 ", 0x%" PRIx64
	       "), first at 0x%" PRIx64 "\n", what, bad, off, off + len,
	       off + first);
	printf("OFFSET      GOOD  BAD   OP#(mod 256) of bad byte\n");
	for (i = first; i < len && shown < 32; i++) {
		if (got[i] == f->good[off + i])
			continue;
		printf("0x%-8" PRIx64 "  0x%02x  0x%02x  %u\n", off + i,
		       f->good[off + i], got[i], byte_opnum(f, off + i, got[i]));
		shown++;
	}
	fsx_fail(f, "%s returned wrong data", what);
}

static void check_buf(const struct fsx *f, uint64_t off, uint64_t len,
		      const unsigned char *got, const char *what)
{
	if (memcmp(got, f->good + off, len) != 0)
		report_mismatch(f, off, len, got, what);
}

static void check_size(const struct fsx *f)
{
	struct stat st;

	if (fstat(f->fd, &st) != 0)
		fsx_fail(f, "fstat: %s", strerror(errno));
	if ((uint64_t)st.st_size != f->file_size)
		fsx_fail(f, "size is 0x%" PRIx64 ", expected 0x%" PRIx64,
			 (uint64_t)st.st_size, f->file_size);
}

static void pread_all(const struct fsx *f, uint64_t off, uint64_t len)
{
	uint64_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(f->fd, f->tmp + done, len - done, off + done);
		if (n < 0)
			fsx_fail(f, "pread(0x%" PRIx64 ", 0x%" PRIx64 "): %s",
				 off + done, len - done, strerror(errno));
		if (n == 0)
			fsx_fail(f, "pread(0x%" PRIx64 "): short read, 0x%" PRIx64
				 " of 0x%" PRIx64 " bytes", off, done, len);
		done += n;
	}
}

static void pwrite_all(const struct fsx *f, const unsigned char *buf,
		       uint64_t off, uint64_t len)
{
	uint64_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(f->fd, buf + done, len - done, off + done);
		if (n <= 0)
			fsx_fail(f, "pwrite(0x%" PRIx64 ", 0x%" PRIx64 "): %s",
				 off + done, len - done,
				 n < 0 ? strerror(errno) : "wrote nothing");
		done += n;
	}
}

/* A random range: offset below limit, length 1..maxop clipped to limit. */
static void range_pick(const struct fsx *f, uint64_t limit, uint64_t *off,
		       uint64_t *len)
{
	*off = rnd() % limit;
	*len = rnd() % f->maxop + 1;
	if (*off + *len > limit)
		*len = limit - *off;
}

static void read_verify(const struct fsx *f, uint64_t off, uint64_t len,
			const char *what)
{
	pread_all(f, off, len);
	check_buf(f, off, len, f->tmp, what);
}

static void op_read(struct fsx *f)
{
	uint64_t off, len;

	if (f->file_size == 0) {
		log_add(f, OP_READ, 0, 0, 0, 0, LOG_SKIPPED);
		return;
	}
	range_pick(f, f->file_size, &off, &len);
	log_add(f, OP_READ, off, len, 0, f->file_size, 0);
	read_verify(f, off, len, "read");
}

/* Maps [off, off + len) of the file; *base is the page-aligned start. */
static unsigned char *map_range(const struct fsx *f, uint64_t off, uint64_t len,
				int prot, uint64_t *pg_off, size_t *map_len)
{
	void *p;

	*pg_off = off & ~((uint64_t)f->pagesize - 1);
	*map_len = off + len - *pg_off;
	p = mmap(NULL, *map_len, prot, MAP_SHARED, f->fd, *pg_off);
	if (p == MAP_FAILED)
		fsx_fail(f, "mmap(0x%" PRIx64 ", 0x%zx): %s", *pg_off, *map_len,
			 strerror(errno));
	return p;
}

/*
 * The bytes of the last page past EOF must read as zeros through a
 * mapping (the classic fsx "mmap last-page zero fill" check).
 */
static void check_eof_page(const struct fsx *f)
{
	uint64_t pg = f->file_size & ~((uint64_t)f->pagesize - 1);
	uint64_t in_page = f->file_size - pg, i;
	unsigned char *p;

	if (in_page == 0)
		return;
	p = mmap(NULL, f->pagesize, PROT_READ, MAP_SHARED, f->fd, pg);
	if (p == MAP_FAILED)
		fsx_fail(f, "mmap of EOF page: %s", strerror(errno));
	for (i = in_page; i < (uint64_t)f->pagesize; i++)
		if (p[i] != 0)
			fsx_fail(f, "mapped EOF page: byte 0x%" PRIx64
				 " past EOF 0x%" PRIx64 " is 0x%02x, not 0",
				 pg + i, f->file_size, p[i]);
	munmap(p, f->pagesize);
}

static void op_mapread(struct fsx *f)
{
	uint64_t off, len, pg_off;
	unsigned char *p;
	size_t map_len;

	if (f->file_size == 0) {
		log_add(f, OP_MAPREAD, 0, 0, 0, 0, LOG_SKIPPED);
		return;
	}
	range_pick(f, f->file_size, &off, &len);
	log_add(f, OP_MAPREAD, off, len, 0, f->file_size, 0);
	p = map_range(f, off, len, PROT_READ, &pg_off, &map_len);
	memcpy(f->tmp, p + (off - pg_off), len);
	munmap(p, map_len);
	check_buf(f, off, len, f->tmp, "mapread");
	check_eof_page(f);
}

static void fill_pattern(struct fsx *f, uint64_t off, uint64_t len)
{
	uint64_t i;

	for (i = off; i < off + len; i++)
		f->good[i] = (i & 1) ? (unsigned char)(f->opnum + f->orig[i])
				     : (unsigned char)f->opnum;
}

static void model_grow(struct fsx *f, uint64_t end)
{
	if (end > f->file_size)
		f->file_size = end;
}

static void op_write(struct fsx *f)
{
	uint64_t off, len, before = f->file_size;

	range_pick(f, f->maxlen, &off, &len);
	fill_pattern(f, off, len);
	model_grow(f, off + len);
	log_add(f, OP_WRITE, off, len, 0, before, 0);
	pwrite_all(f, f->good + off, off, len);
}

static void op_mapwrite(struct fsx *f)
{
	uint64_t off, len, pg_off, before = f->file_size;
	unsigned char *p;
	size_t map_len;

	range_pick(f, f->maxlen, &off, &len);
	fill_pattern(f, off, len);
	model_grow(f, off + len);
	log_add(f, OP_MAPWRITE, off, len, 0, before, 0);
	/* a mapping cannot extend a file: grow it first, as fsx does */
	if (f->file_size > before && ftruncate(f->fd, f->file_size) != 0)
		fsx_fail(f, "ftruncate before mapwrite: %s", strerror(errno));
	p = map_range(f, off, len, PROT_READ | PROT_WRITE, &pg_off, &map_len);
	memcpy(p + (off - pg_off), f->good + off, len);
	if (msync(p, map_len, MS_SYNC) != 0)
		fsx_fail(f, "msync: %s", strerror(errno));
	munmap(p, map_len);
}

static void op_truncate(struct fsx *f)
{
	uint64_t size = rnd() % (f->maxlen + 1), before = f->file_size;

	if (size < before)
		memset(f->good + size, 0, before - size);
	f->file_size = size;
	log_add(f, OP_TRUNCATE, size, 0, 0, before, 0);
	if (ftruncate(f->fd, size) != 0)
		fsx_fail(f, "ftruncate(0x%" PRIx64 "): %s", size, strerror(errno));
}

static void do_fallocate(struct fsx *f, enum fsx_op op, int mode, uint64_t off,
			 uint64_t len)
{
	if (fallocate(f->fd, mode, off, len) != 0)
		fsx_fail(f, "%s(0x%" PRIx64 ", 0x%" PRIx64 "): %s", op_names[op],
			 off, len, strerror(errno));
}

static void op_fallocate(struct fsx *f)
{
	uint64_t off, len, before = f->file_size;
	int keep = random() & 1;

	range_pick(f, f->maxlen, &off, &len);
	if (!keep)
		model_grow(f, off + len);
	log_add(f, OP_FALLOCATE, off, len, 0, before, keep ? LOG_KEEP_SIZE : 0);
	do_fallocate(f, OP_FALLOCATE, keep ? FALLOC_FL_KEEP_SIZE : 0, off, len);
}

static void op_punch_hole(struct fsx *f)
{
	uint64_t off, len;

	if (f->file_size == 0) {
		log_add(f, OP_PUNCH_HOLE, 0, 0, 0, 0, LOG_SKIPPED);
		return;
	}
	range_pick(f, f->file_size, &off, &len);
	memset(f->good + off, 0, len);
	log_add(f, OP_PUNCH_HOLE, off, len, 0, f->file_size, LOG_KEEP_SIZE);
	do_fallocate(f, OP_PUNCH_HOLE,
		     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
}

static void op_zero_range(struct fsx *f)
{
	uint64_t off, len, before = f->file_size;
	int keep = random() & 1;

	range_pick(f, f->maxlen, &off, &len);
	memset(f->good + off, 0, len);
	if (!keep)
		model_grow(f, off + len);
	log_add(f, OP_ZERO_RANGE, off, len, 0, before, keep ? LOG_KEEP_SIZE : 0);
	do_fallocate(f, OP_ZERO_RANGE,
		     FALLOC_FL_ZERO_RANGE | (keep ? FALLOC_FL_KEEP_SIZE : 0),
		     off, len);
}

/*
 * copy_file_range within the file; the kernel refuses overlapping ranges
 * of one file (EINVAL), so the destination is picked outside the source.
 */
static bool copy_pick(const struct fsx *f, uint64_t *src, uint64_t *dst,
		      uint64_t *len)
{
	int tries;

	range_pick(f, f->file_size, src, len);
	for (tries = 0; tries < 16; tries++) {
		*dst = rnd() % (f->maxlen - *len + 1);
		if (*dst + *len <= *src || *dst >= *src + *len)
			return true;
	}
	return false;
}

static void op_copy_range(struct fsx *f)
{
	uint64_t src = 0, dst = 0, len = 0, before = f->file_size, done = 0;
	loff_t in, out;
	ssize_t n;

	if (f->file_size == 0 || !copy_pick(f, &src, &dst, &len)) {
		log_add(f, OP_COPY_RANGE, src, len, dst, before, LOG_SKIPPED);
		return;
	}
	memmove(f->good + dst, f->good + src, len);
	model_grow(f, dst + len);
	log_add(f, OP_COPY_RANGE, src, len, dst, before, 0);
	while (done < len) {
		in = src + done;
		out = dst + done;
		n = copy_file_range(f->fd, &in, f->fd, &out, len - done, 0);
		if (n < 0)
			fsx_fail(f, "copy_file_range(0x%" PRIx64 " -> 0x%" PRIx64
				 ", 0x%" PRIx64 "): %s", src + done, dst + done,
				 len - done, strerror(errno));
		if (n == 0)
			fsx_fail(f, "copy_file_range: copied 0x%" PRIx64 " of 0x%"
				 PRIx64 " bytes, then 0 (source within EOF)",
				 done, len);
		done += n;
	}
}

static void op_fsync(struct fsx *f)
{
	log_add(f, OP_FSYNC, 0, 0, 0, f->file_size, 0);
	if (fsync(f->fd) != 0)
		fsx_fail(f, "fsync: %s", strerror(errno));
}

static void file_open(struct fsx *f, int extra)
{
	f->fd = open(f->path, O_RDWR | extra, 0644);
	if (f->fd < 0) {
		fprintf(stderr, "fsx: open %s: %s\n", f->path, strerror(errno));
		exit(2);
	}
}

static void verify_whole(const struct fsx *f, const char *what)
{
	check_size(f);
	if (f->file_size)
		read_verify(f, 0, f->file_size, what);
}

static void op_reopen(struct fsx *f)
{
	log_add(f, OP_REOPEN, 0, 0, 0, f->file_size, 0);
	/*
	 * Best effort: clean cached pages go, so the reads after the reopen
	 * reach the filesystem instead of the page cache.
	 */
	if (f->drop_cache && posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		fsx_fail(f, "posix_fadvise(DONTNEED): %s", strerror(errno));
	if (close(f->fd) != 0)
		fsx_fail(f, "close: %s", strerror(errno));
	file_open(f, 0);
	verify_whole(f, "whole-file read after reopen");
}

typedef void (*op_fn)(struct fsx *);

static const op_fn op_table[OP_COUNT] = {
	[OP_READ] = op_read, [OP_WRITE] = op_write, [OP_MAPREAD] = op_mapread,
	[OP_MAPWRITE] = op_mapwrite, [OP_TRUNCATE] = op_truncate,
	[OP_FALLOCATE] = op_fallocate, [OP_PUNCH_HOLE] = op_punch_hole,
	[OP_ZERO_RANGE] = op_zero_range, [OP_COPY_RANGE] = op_copy_range,
	[OP_FSYNC] = op_fsync, [OP_REOPEN] = op_reopen,
};

static enum fsx_op op_choose(const struct fsx *f)
{
	unsigned long r = random() % f->weight_sum;
	int op;

	for (op = 0; op < OP_COUNT; op++) {
		if (!f->enabled[op])
			continue;
		if (r < (unsigned long)op_weight[op])
			return op;
		r -= op_weight[op];
	}
	return OP_READ;
}

static void op_disable(struct fsx *f, enum fsx_op op, const char *why)
{
	if (!f->enabled[op])
		return;
	printf("fsx: disabling %s: %s\n", op_names[op], why);
	if (f->strict) {
		printf("fsx: -Z given: every operation must be supported\n");
		exit(2);
	}
	f->enabled[op] = false;
}

static bool errno_is_unsupported(int e)
{
	return e == EOPNOTSUPP || e == ENOSYS || e == EINVAL || e == EXDEV;
}

/* Probes on the empty file; a supported operation leaves it empty. */
static void probe_ops(struct fsx *f)
{
	static const struct { enum fsx_op op; int mode; } fa[] = {
		{ OP_FALLOCATE, FALLOC_FL_KEEP_SIZE },
		{ OP_PUNCH_HOLE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE },
		{ OP_ZERO_RANGE, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE },
	};
	char why[128];
	loff_t in = 0, out = 4096;
	size_t i;

	for (i = 0; i < sizeof(fa) / sizeof(fa[0]); i++) {
		if (!f->enabled[fa[i].op] || fallocate(f->fd, fa[i].mode, 0, 4096) == 0)
			continue;
		snprintf(why, sizeof(why), "fallocate(mode 0x%x) failed: %s",
			 fa[i].mode, strerror(errno));
		if (errno_is_unsupported(errno))
			op_disable(f, fa[i].op, why);
		else
			fsx_fail(f, "probe: %s", why);
	}
	if (f->enabled[OP_COPY_RANGE] &&
	    copy_file_range(f->fd, &in, f->fd, &out, 1, 0) < 0) {
		snprintf(why, sizeof(why), "copy_file_range failed: %s",
			 strerror(errno));
		if (errno_is_unsupported(errno))
			op_disable(f, OP_COPY_RANGE, why);
		else
			fsx_fail(f, "probe: %s", why);
	}
	if (ftruncate(f->fd, 0) != 0)
		fsx_fail(f, "ftruncate(0) after probes: %s", strerror(errno));
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fsx [-dqZ] [-N ops] [-S seed] [-l maxlen] [-o maxop]\n"
		"           [-c reopen-prob] [-g model-file] [-I] [-RWTFHzEy] FILE\n"
		"  -N n  operations (default 10000)   -S n  seed (default: time)\n"
		"  -l n  max file size (default 8 MiB) -o n  max op size (256 KiB)\n"
		"  -c n  close/reopen 1 in n ops (default 50, 0 = never)\n"
		"  disable: -R mapread -W mapwrite -T truncate -F fallocate\n"
		"           -H punch hole -z zero range -E copy_file_range -y fsync\n"
		"  -I    drop the file's cached pages at each reopen (fadvise)\n"
		"  -g f  save the model (expected contents) to f at the end\n"
		"  -Z    fail if the filesystem lacks an enabled operation\n"
		"  -d    print every operation   -q  no progress lines\n");
	exit(2);
}

static int parse_args(struct fsx *f, int argc, char **argv, bool *quiet)
{
	static const struct { char opt; enum fsx_op op; } off[] = {
		{ 'R', OP_MAPREAD }, { 'W', OP_MAPWRITE }, { 'T', OP_TRUNCATE },
		{ 'F', OP_FALLOCATE }, { 'H', OP_PUNCH_HOLE },
		{ 'z', OP_ZERO_RANGE }, { 'E', OP_COPY_RANGE }, { 'y', OP_FSYNC },
	};
	int c;
	size_t i;

	while ((c = getopt(argc, argv, "N:S:l:o:c:g:IRWTFHzEydqZ")) != -1) {
		switch (c) {
		case 'N': f->nops = strtoul(optarg, NULL, 0); break;
		case 'S': f->seed = strtoul(optarg, NULL, 0); break;
		case 'l': f->maxlen = strtoull(optarg, NULL, 0); break;
		case 'o': f->maxop = strtoull(optarg, NULL, 0); break;
		case 'c': f->reopen_prob = atoi(optarg); break;
		case 'd': f->verbose = true; break;
		case 'g': f->good_path = optarg; break;
		case 'I': f->drop_cache = true; break;
		case 'q': *quiet = true; break;
		case 'Z': f->strict = true; break;
		default:
			for (i = 0; i < sizeof(off) / sizeof(off[0]); i++)
				if (off[i].opt == c)
					break;
			if (i == sizeof(off) / sizeof(off[0]))
				usage();
			op_disable(f, off[i].op, "disabled on the command line");
		}
	}
	if (optind != argc - 1 || f->maxlen == 0 || f->maxop == 0)
		usage();
	f->path = argv[optind];
	return 0;
}

static void fsx_init(struct fsx *f)
{
	uint64_t i;
	int op;

	f->good = calloc(1, f->maxlen);
	f->orig = malloc(f->maxlen);
	f->tmp = malloc(f->maxlen);
	if (!f->good || !f->orig || !f->tmp) {
		fprintf(stderr, "fsx: out of memory\n");
		exit(2);
	}
	srandom(f->seed);
	for (i = 0; i < f->maxlen; i++)
		f->orig[i] = random();
	if (f->maxop > f->maxlen)
		f->maxop = f->maxlen;
	for (op = 0; op < OP_COUNT; op++)
		if (f->enabled[op])
			f->weight_sum += op_weight[op];
}

int main(int argc, char **argv)
{
	static struct fsx f = {
		.nops = 10000, .maxlen = 8 << 20, .maxop = 256 << 10,
		.reopen_prob = 50,
	};
	bool quiet = false;
	int op;

	for (op = 0; op < OP_COUNT; op++)
		f.enabled[op] = op != OP_REOPEN;
	f.seed = time(NULL) ^ getpid();
	f.pagesize = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(&f, argc, argv, &quiet);
	file_open(&f, O_CREAT | O_TRUNC);
	probe_ops(&f);
	fsx_init(&f);
	printf("fsx: seed %u, %lu operations, file up to 0x%" PRIx64
	       ", ops up to 0x%" PRIx64 "\n", f.seed, f.nops, f.maxlen, f.maxop);
	for (f.opnum = 1; f.opnum <= f.nops; f.opnum++) {
		if (f.reopen_prob && random() % f.reopen_prob == 0)
			op_reopen(&f);
		else
			op_table[op_choose(&f)](&f);
		check_size(&f);
		if (!quiet && f.opnum % 5000 == 0)
			printf("fsx: %lu operations done\n", f.opnum);
	}
	verify_whole(&f, "final whole-file read");
	if (close(f.fd) != 0)
		fsx_fail(&f, "final close: %s", strerror(errno));
	good_save(&f);
	printf("fsx: %lu operations passed\n", f.nops);
	return 0;
}
