/*
 * faultfs: a FUSE filesystem that serves the regular files of a directory
 * and makes them misbehave on command, so that integration tests can give
 * raidfs a member that fails the way real disks fail, while it is mounted
 * and busy (this kernel has no device-mapper, so no dm-flakey or dm-error).
 *
 *   faultfs [-f] [-r MIBPS] BACKDIR MOUNTPOINT
 *
 * MOUNTPOINT/NAME is BACKDIR/NAME (the top directory only), always with
 * direct I/O and no attribute cache, so every read and write of a member
 * reaches this program and a truncate of BACKDIR/NAME is seen at once.
 * Regular files can be made, removed and renamed there too (no
 * directories).
 * Faults are rules written, one per line, to MOUNTPOINT/.faultctl:
 *
 *   NAME eio-read OFF LEN        reads touching the range fail with EIO
 *   NAME eio-write OFF LEN       writes touching the range fail with EIO
 *   NAME eio-pending OFF LEN     bad sectors: reads touching a 4 KiB block
 *                                of the range fail with EIO until the block
 *                                is written (a disk reallocates a pending
 *                                sector when it is rewritten)
 *   NAME zero-read OFF LEN       the range reads as zeros (the media keeps
 *                                its contents)
 *   NAME lose-writes OFF LEN     writes to the range are acknowledged and
 *                                not stored
 *   NAME misdirect OFF LEN DELTA writes to the range land DELTA bytes away
 *   NAME vanish                  every operation on NAME fails with ENXIO
 *   NAME volatile                NAME has a disk's volatile write cache:
 *                                what is written reaches the media only
 *                                at its next fsync, or at a power cut
 *   * powercut KEEP SEED         the power goes, for every volatile file
 *                                at once: of each 4 KiB block written
 *                                since its file's last fsync, the old
 *                                contents come back, unless the block is
 *                                kept (KEEP percent of them, chosen by
 *                                SEED: a cache writes its blocks out in
 *                                any order); then every volatile file
 *                                vanishes, until "NAME clear vanish"
 *   NAME clear [KIND]            removes NAME's rules (of that kind only)
 *
 * Reading .faultctl lists the rules with how often each has fired.  Offsets
 * and lengths are bytes (suffixes k, M, G accepted).
 *
 * A file keeps its size, as a device does: a write past its end fails with
 * ENOSPC instead of growing it (so a member image truncated behind the
 * daemon's back stays short).  Truncate BACKDIR/NAME to change the size.
 *
 * With -r each file is also a disk of MIBPS MiB/s (bench/online.sh's
 * BENCH_DISK_MIBPS: rebuild and scrub against a member's sequential read,
 * where tmpfs reads at memory speed): a single server, busy while it
 * works and losing the time it stands idle.  A request of n bytes starts
 * when the disk is free (at once if idle), holds it for n / MIBPS and is
 * answered when that time ends, the copy done meanwhile; requests to one
 * file queue behind each other, to different files not.  A cgroup's blkio
 * throttle does not do this: it credits a device for its idle time, so a
 * program that reads one member and then writes another looks as fast as
 * one that keeps both busy.  Seeks are not modelled.  Requests are up to
 * 1 MiB (max_read, max_write), as a disk's would be.
 */
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <search.h>

#define CTL_NAME ".faultctl"
#define MAX_RULES 256

#define PENDING_BLOCK 4096
#define PENDING_MAX_LEN (1ULL << 30)

enum rule_kind { EIO_READ, EIO_WRITE, ZERO_READ, LOSE_WRITES, MISDIRECT,
		 EIO_PENDING, VOLATILE, VANISH };

static const char *const kind_names[] = {
	"eio-read", "eio-write", "zero-read", "lose-writes", "misdirect",
	"eio-pending", "volatile", "vanish",
};

/* VOLATILE: a block's contents before its first write since the file's
 * last fsync (what the media still holds). */
struct undo {
	uint64_t blk;                   /* offset / PENDING_BLOCK */
	uint32_t len;                   /* short at the end of the file */
	uint8_t data[PENDING_BLOCK];
};

struct rule {
	char name[256];
	enum rule_kind kind;
	uint64_t off, len;
	int64_t delta;
	uint64_t hits;
	uint8_t *pending;       /* EIO_PENDING: bit i set, block i unwritten */
	void *cache;            /* VOLATILE: tsearch tree of struct undo */
};

#define MAX_DISKS 64

/* -r: a file's disk, the time it is busy until (CLOCK_MONOTONIC ns). */
struct disk {
	char name[256];
	uint64_t busy_until;
};

static struct {
	int backfd;                     /* BACKDIR */
	/* Held shared by a write from its undo entries to its store, and
	 * exclusively by a power cut, which comes between writes; before
	 * lock. */
	pthread_rwlock_t power;
	pthread_mutex_t lock;           /* rules, disks; a leaf */
	struct rule rules[MAX_RULES];
	int nrules;
	uint64_t bytes_per_s;           /* -r; 0: no disk model */
	struct disk disks[MAX_DISKS];
	int ndisks;
} fst = { .power = PTHREAD_RWLOCK_INITIALIZER,
	    .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* -r: holds name's disk for n bytes' worth of time from when it is free;
 * returns when that time ends (0: no model).  Past MAX_DISKS files a file
 * has no model. */
static uint64_t disk_take(const char *name, size_t n)
{
	struct disk *d = NULL;
	uint64_t end = 0, t = now_ns();

	if (!fst.bytes_per_s)
		return 0;
	pthread_mutex_lock(&fst.lock);
	for (int i = 0; i < fst.ndisks && !d; i++)
		if (!strcmp(fst.disks[i].name, name))
			d = &fst.disks[i];
	if (!d && fst.ndisks < MAX_DISKS) {
		d = &fst.disks[fst.ndisks++];
		snprintf(d->name, sizeof(d->name), "%s", name);
	}
	if (d) {
		end = (d->busy_until > t ? d->busy_until : t) +
		      (uint64_t)n * 1000000000ull / fst.bytes_per_s;
		d->busy_until = end;
	}
	pthread_mutex_unlock(&fst.lock);
	return end;
}

static void disk_wait(uint64_t end)
{
	struct timespec ts = { .tv_sec = (time_t)(end / 1000000000ull),
			       .tv_nsec = (long)(end % 1000000000ull) };

	while (end && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				      NULL) == EINTR)
		;
}

static bool overlaps(const struct rule *r, uint64_t off, uint64_t len)
{
	return off < r->off + r->len && r->off < off + len;
}

static bool rule_touches(const struct rule *r, enum rule_kind kind,
			 const char *name, uint64_t off, uint64_t len)
{
	return r->kind == kind && !strcmp(r->name, name) &&
	       overlaps(r, off, len);
}

/* The pending blocks of r that [off, off+len) touches: [*first, *end). */
static void pending_span(const struct rule *r, uint64_t off, uint64_t len,
			 uint64_t *first, uint64_t *end)
{
	uint64_t a = off > r->off ? off : r->off;
	uint64_t b = off + len < r->off + r->len ? off + len : r->off + r->len;

	*first = (a - r->off) / PENDING_BLOCK;
	*end = (b - r->off + PENDING_BLOCK - 1) / PENDING_BLOCK;
}

static bool pending_any(const struct rule *r, uint64_t off, uint64_t len)
{
	uint64_t i, end;

	pending_span(r, off, len, &i, &end);
	for (; i < end; i++)
		if (r->pending[i / 8] & (1u << (i % 8)))
			return true;
	return false;
}

/* A write heals the pending blocks it touches, in every rule of name.
 * Caller holds fst.lock. */
static void pending_heal(const char *name, uint64_t off, uint64_t len)
{
	for (int k = 0; k < fst.nrules; k++) {
		struct rule *r = &fst.rules[k];
		uint64_t i, end;

		if (!rule_touches(r, EIO_PENDING, name, off, len))
			continue;
		pending_span(r, off, len, &i, &end);
		for (; i < end; i++)
			r->pending[i / 8] &= (uint8_t)~(1u << (i % 8));
	}
}

/* The first rule of kind for name touching [off, off+len), or NULL;
 * counts a hit.  Caller holds fst.lock. */
static struct rule *rule_find(const char *name, enum rule_kind kind,
			      uint64_t off, uint64_t len)
{
	for (int i = 0; i < fst.nrules; i++) {
		struct rule *r = &fst.rules[i];

		if (r->kind == kind && !strcmp(r->name, name) &&
		    (kind == VANISH || kind == VOLATILE ||
		     overlaps(r, off, len)) &&
		    (kind != EIO_PENDING || pending_any(r, off, len)))
			return r;
	}
	return NULL;
}

static bool vanished(const char *name)
{
	bool v;

	pthread_mutex_lock(&fst.lock);
	v = rule_find(name, VANISH, 0, 0) != NULL;
	pthread_mutex_unlock(&fst.lock);
	return v;
}

static int size_parse(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (end == s || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static enum rule_kind kind_parse(const char *s)
{
	enum rule_kind k;

	for (k = 0; k <= VANISH; k++)
		if (!strcmp(s, kind_names[k]))
			break;
	return k;
}

/* Every block of an eio-pending range starts bad. */
static int pending_init(struct rule *r)
{
	uint64_t blocks = (r->len + PENDING_BLOCK - 1) / PENDING_BLOCK;

	if (r->len == 0 || r->len > PENDING_MAX_LEN)
		return -EINVAL;
	r->pending = malloc((blocks + 7) / 8);
	if (!r->pending)
		return -ENOMEM;
	memset(r->pending, 0xff, (blocks + 7) / 8);
	return 0;
}

/* Removes name's rules, or only those of kind (a name).  Caller holds
 * fst.lock. */
static int rules_clear(const char *name, const char *kind)
{
	enum rule_kind only = kind ? kind_parse(kind) : VANISH + 1;
	int k = 0;

	if (kind && only > VANISH)
		return -EINVAL;
	for (int i = 0; i < fst.nrules; i++) {
		struct rule *r = &fst.rules[i];

		if (!strcmp(r->name, name) && (!kind || r->kind == only)) {
			free(r->pending);
			tdestroy(r->cache, free);
		} else
			fst.rules[k++] = *r;
	}
	fst.nrules = k;
	return 0;
}

/* ---- a volatile write cache, and the power cut ----------------------- */

static int undo_cmp(const void *x, const void *y)
{
	const struct undo *a = x, *b = y;

	return a->blk < b->blk ? -1 : a->blk > b->blk;
}

/*
 * Before name's [off, off+len) is written: the old contents of each of
 * its blocks not written since the last fsync go into the cache, so that
 * a power cut can put them back.  Caller holds power shared.
 */
static int cache_note(const char *name, int fd, uint64_t off, uint64_t len)
{
	struct rule *r;
	struct undo key, *u;
	ssize_t n;
	int ret = 0;

	pthread_mutex_lock(&fst.lock);
	r = rule_find(name, VOLATILE, 0, 0);
	for (key.blk = off / PENDING_BLOCK;
	     r && ret == 0 && key.blk * PENDING_BLOCK < off + len; key.blk++) {
		if (tfind(&key, &r->cache, undo_cmp))
			continue;
		u = malloc(sizeof(*u));
		if (!u) {
			ret = -ENOMEM;
			break;
		}
		u->blk = key.blk;
		n = pread(fd, u->data, PENDING_BLOCK,
			  (off_t)(key.blk * PENDING_BLOCK));
		u->len = n > 0 ? (uint32_t)n : 0;
		if (!tsearch(u, &r->cache, undo_cmp)) {
			free(u);
			ret = -ENOMEM;
		}
		r->hits++;
	}
	pthread_mutex_unlock(&fst.lock);
	return ret;
}

/* An fsync of name: its cache is on the media. */
static void cache_synced(const char *name)
{
	struct rule *r;

	pthread_mutex_lock(&fst.lock);
	r = rule_find(name, VOLATILE, 0, 0);
	if (r) {
		tdestroy(r->cache, free);
		r->cache = NULL;
	}
	pthread_mutex_unlock(&fst.lock);
}

struct cut {
	int fd;                 /* the backing file */
	int keep;               /* percent of the cached blocks kept */
	unsigned seed;
	uint64_t kept, lost;
};

static void cut_block(const void *node, VISIT which, void *arg)
{
	const struct undo *u = *(const struct undo *const *)node;
	struct cut *c = arg;

	if (which != postorder && which != leaf)
		return;
	if ((int)(rand_r(&c->seed) % 100) < c->keep) {
		c->kept++;
		return;
	}
	if (u->len && pwrite(c->fd, u->data, u->len,
			     (off_t)(u->blk * PENDING_BLOCK)) != (ssize_t)u->len)
		fprintf(stderr, "faultfs: power cut: block %llu: %s\n",
			(unsigned long long)u->blk, strerror(errno));
	c->lost++;
}

/*
 * The power goes: every volatile file loses the blocks of its cache not
 * kept, between two writes (power exclusive), and vanishes.
 */
static int power_cut(int keep, unsigned seed)
{
	struct cut c = { .keep = keep, .seed = seed };
	struct rule gone = { .kind = VANISH };
	int nvol = 0, ret = 0;

	if (keep < 0 || keep > 100)
		return -EINVAL;
	pthread_rwlock_wrlock(&fst.power);
	pthread_mutex_lock(&fst.lock);
	for (int i = 0; i < fst.nrules && ret == 0; i++) {
		struct rule *r = &fst.rules[i];

		if (r->kind != VOLATILE)
			continue;
		c.fd = openat(fst.backfd, r->name, O_WRONLY | O_CLOEXEC);
		if (c.fd < 0) {
			ret = -errno;
			break;
		}
		twalk_r(r->cache, cut_block, &c);
		close(c.fd);
		tdestroy(r->cache, free);
		r->cache = NULL;
		nvol++;
	}
	for (int i = 0; i < fst.nrules && ret == 0 && nvol; i++) {
		if (fst.rules[i].kind != VOLATILE)
			continue;
		if (fst.nrules == MAX_RULES) {
			ret = -ENOSPC;
			break;
		}
		snprintf(gone.name, sizeof(gone.name), "%s", fst.rules[i].name);
		fst.rules[fst.nrules++] = gone;
	}
	pthread_mutex_unlock(&fst.lock);
	pthread_rwlock_unlock(&fst.power);
	fprintf(stderr, "faultfs: power cut: %d volatile files, %llu cached "
		"blocks kept, %llu lost\n", nvol, (unsigned long long)c.kept,
		(unsigned long long)c.lost);
	return ret;
}

/* One control line: "NAME KIND [OFF LEN [DELTA]]" or "NAME clear [KIND]". */
static int ctl_line(char *line)
{
	char *tok[6], *save = NULL;
	struct rule r = { 0 };
	int n = 0, ret = -EINVAL;

	for (char *t = strtok_r(line, " \t\n", &save); t && n < 6;
	     t = strtok_r(NULL, " \t\n", &save))
		tok[n++] = t;
	if (n == 0)
		return 0;
	if (n < 2 || strlen(tok[0]) >= sizeof(r.name))
		return -EINVAL;
	snprintf(r.name, sizeof(r.name), "%s", tok[0]);
	pthread_mutex_lock(&fst.lock);
	if (!strcmp(tok[1], "clear")) {
		ret = rules_clear(r.name, n > 2 ? tok[2] : NULL);
		goto out;
	}
	if (!strcmp(tok[1], "powercut")) {
		pthread_mutex_unlock(&fst.lock);
		return n == 4 ? power_cut(atoi(tok[2]), (unsigned)atol(tok[3])) :
			-EINVAL;
	}
	r.kind = kind_parse(tok[1]);
	if (r.kind > VANISH || fst.nrules == MAX_RULES)
		goto out;
	if (r.kind == VOLATILE && rule_find(r.name, VOLATILE, 0, 0)) {
		ret = 0;        /* already */
		goto out;
	}
	if (r.kind != VANISH && r.kind != VOLATILE) {
		if (n < 4 || size_parse(tok[2], &r.off) || size_parse(tok[3], &r.len))
			goto out;
		if (r.kind == MISDIRECT) {
			if (n < 5)
				goto out;
			r.delta = strtoll(tok[4], NULL, 0);
		}
		if (r.kind == EIO_PENDING && pending_init(&r))
			goto out;
	}
	fst.rules[fst.nrules++] = r;
	ret = 0;
out:
	pthread_mutex_unlock(&fst.lock);
	return ret;
}

static const char *base(const char *path)
{
	return path[0] == '/' ? path + 1 : path;
}

static bool is_ctl(const char *path)
{
	return !strcmp(base(path), CTL_NAME);
}

static int ff_getattr(const char *path, struct stat *st,
		      struct fuse_file_info *fi)
{
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (is_ctl(path)) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		return 0;
	}
	if (strchr(base(path), '/'))
		return -ENOENT;
	if (vanished(base(path)))
		return -ENXIO;
	return fstatat(fst.backfd, base(path), st, AT_SYMLINK_NOFOLLOW) ?
		-errno : 0;
}

static int ff_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	int fd = dup(fst.backfd);
	DIR *d;
	struct dirent *e;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, CTL_NAME, NULL, 0, 0);
	while ((e = readdir(d)))
		if (e->d_type == DT_REG)
			fill(buf, e->d_name, NULL, 0, 0);
	closedir(d);
	return 0;
}

static int ff_open(const char *path, struct fuse_file_info *fi)
{
	int fd;

	fi->direct_io = 1;
	if (is_ctl(path)) {
		fi->fh = (uint64_t)-1;
		return 0;
	}
	if (vanished(base(path)))
		return -ENXIO;
	fd = openat(fst.backfd, base(path), (fi->flags & O_ACCMODE) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int ff_release(const char *path, struct fuse_file_info *fi)
{
	if (fi->fh != (uint64_t)-1)
		close((int)fi->fh);
	return 0;
}

static int ctl_read(char *buf, size_t size, off_t off)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int n;

	if (!m)
		return -ENOMEM;
	pthread_mutex_lock(&fst.lock);
	for (int i = 0; i < fst.nrules; i++) {
		const struct rule *r = &fst.rules[i];

		fprintf(m, "%s %s %llu %llu %lld hits=%llu\n", r->name,
			kind_names[r->kind], (unsigned long long)r->off,
			(unsigned long long)r->len, (long long)r->delta,
			(unsigned long long)r->hits);
	}
	pthread_mutex_unlock(&fst.lock);
	fclose(m);
	n = (size_t)off < len ? (int)(len - (size_t)off < size ? len - (size_t)off : size) : 0;
	if (n > 0)
		memcpy(buf, text + off, (size_t)n);
	free(text);
	return n;
}

/* Zeroes the parts of [off, off+len) that a zero-read rule covers. */
static void zero_ranges(const char *name, char *buf, uint64_t off, size_t len)
{
	pthread_mutex_lock(&fst.lock);
	for (int i = 0; i < fst.nrules; i++) {
		struct rule *r = &fst.rules[i];
		uint64_t a, b;

		if (!rule_touches(r, ZERO_READ, name, off, len))
			continue;
		a = r->off > off ? r->off : off;
		b = r->off + r->len < off + len ? r->off + r->len : off + len;
		memset(buf + (a - off), 0, b - a);
		r->hits++;
	}
	pthread_mutex_unlock(&fst.lock);
}

static int ff_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	const char *name = base(path);
	struct rule *r;
	uint64_t end;
	ssize_t n;

	if (fi->fh == (uint64_t)-1)
		return ctl_read(buf, size, off);
	pthread_mutex_lock(&fst.lock);
	r = rule_find(name, VANISH, 0, 0);
	if (!r)
		r = rule_find(name, EIO_READ, (uint64_t)off, size);
	if (!r)
		r = rule_find(name, EIO_PENDING, (uint64_t)off, size);
	if (r)
		r->hits++;
	pthread_mutex_unlock(&fst.lock);
	if (r)
		return r->kind == VANISH ? -ENXIO : -EIO;
	end = disk_take(name, size);
	n = pread((int)fi->fh, buf, size, off);
	disk_wait(end);
	if (n < 0)
		return -errno;
	zero_ranges(name, buf, (uint64_t)off, (size_t)n);
	return (int)n;
}

/* One pwrite within the file's size (a device does not grow). */
static int store_at(int fd, const char *buf, size_t n, int64_t at)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (at < 0 || at + (int64_t)n > st.st_size)
		return -ENOSPC;
	return pwrite(fd, buf, n, (off_t)at) == (ssize_t)n ? 0 : -EIO;
}

/* Stores buf at off, except what lose-writes rules drop; misdirected
 * parts go DELTA bytes away. */
static int store(const char *name, int fd, const char *buf, size_t size,
		 uint64_t off)
{
	for (size_t done = 0; done < size;) {
		uint64_t pos = off + done;
		size_t n = size - done;
		int64_t delta = 0;
		bool lost = false;

		pthread_mutex_lock(&fst.lock);
		for (int i = 0; i < fst.nrules; i++) {
			struct rule *r = &fst.rules[i];

			if (strcmp(r->name, name) ||
			    (r->kind != LOSE_WRITES && r->kind != MISDIRECT))
				continue;
			if (pos >= r->off && pos < r->off + r->len) {
				/* inside: up to the end of the rule */
				n = r->off + r->len - pos < n ? r->off + r->len - pos : n;
				lost = r->kind == LOSE_WRITES;
				delta = r->kind == MISDIRECT ? r->delta : 0;
				r->hits++;
				break;
			}
			if (r->off > pos && r->off - pos < n)
				n = r->off - pos;  /* stop where a rule begins */
		}
		if (!lost)
			pending_heal(name, (uint64_t)((int64_t)pos + delta), n);
		pthread_mutex_unlock(&fst.lock);
		if (!lost) {
			int ret = store_at(fd, buf + done, n, (int64_t)pos + delta);

			if (ret)
				return ret;
		}
		done += n;
	}
	return 0;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	const char *name = base(path);
	struct rule *r;
	uint64_t end;
	int ret;

	if (fi->fh == (uint64_t)-1) {
		char *line = strndup(buf, size), *save = NULL;

		if (!line)
			return -ENOMEM;
		ret = 0;
		for (char *l = strtok_r(line, "\n", &save); l && !ret;
		     l = strtok_r(NULL, "\n", &save))
			ret = ctl_line(l);
		free(line);
		return ret ? ret : (int)size;
	}
	pthread_mutex_lock(&fst.lock);
	r = rule_find(name, VANISH, 0, 0);
	if (!r)
		r = rule_find(name, EIO_WRITE, (uint64_t)off, size);
	if (r)
		r->hits++;
	pthread_mutex_unlock(&fst.lock);
	if (r)
		return r->kind == VANISH ? -ENXIO : -EIO;
	end = disk_take(name, size);
	pthread_rwlock_rdlock(&fst.power);
	/* the power may have gone since the check above */
	ret = vanished(name) ? -ENXIO :
	      cache_note(name, (int)fi->fh, (uint64_t)off, size);
	if (ret == 0)
		ret = store(name, (int)fi->fh, buf, size, (uint64_t)off);
	pthread_rwlock_unlock(&fst.power);
	disk_wait(end);
	return ret ? ret : (int)size;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	int ret;

	if (fi->fh == (uint64_t)-1)
		return 0;
	pthread_rwlock_rdlock(&fst.power);
	ret = vanished(base(path)) ? -ENXIO :
	      (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) ?
	      -errno : 0;
	if (ret == 0)
		cache_synced(base(path));
	pthread_rwlock_unlock(&fst.power);
	return ret;
}

static int ff_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (is_ctl(path))
		return 0;
	if (fi && fi->fh != (uint64_t)-1)
		return ftruncate((int)fi->fh, size) ? -errno : 0;
	{
		int fd = openat(fst.backfd, base(path), O_WRONLY | O_CLOEXEC);
		int ret;

		if (fd < 0)
			return -errno;
		ret = ftruncate(fd, size) ? -errno : 0;
		close(fd);
		return ret;
	}
}

static int ff_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	if (fi->fh == (uint64_t)-1)
		return -EOPNOTSUPP;
	return fallocate((int)fi->fh, mode, off, len) ? -errno : 0;
}

/* New files (bench/run.sh's targets make their member images through a
 * disk-model mount): regular files at the top only. */
static int ff_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int fd;

	if (is_ctl(path) || strchr(base(path), '/'))
		return -EPERM;
	fi->direct_io = 1;
	fd = openat(fst.backfd, base(path), (fi->flags & O_ACCMODE) | O_CREAT |
		    O_EXCL | O_CLOEXEC, mode & 07777);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

/* Forgets name's disk (-r): a file made later under the name is a new,
 * idle disk, and the table keeps room. */
static void disk_forget(const char *name)
{
	pthread_mutex_lock(&fst.lock);
	for (int i = 0; i < fst.ndisks; i++) {
		if (strcmp(fst.disks[i].name, name))
			continue;
		fst.disks[i] = fst.disks[--fst.ndisks];
		break;
	}
	pthread_mutex_unlock(&fst.lock);
}

static int ff_unlink(const char *path)
{
	if (is_ctl(path))
		return -EPERM;
	if (unlinkat(fst.backfd, base(path), 0))
		return -errno;
	disk_forget(base(path));
	return 0;
}

static int ff_rename(const char *from, const char *to, unsigned int flags)
{
	if (is_ctl(from) || is_ctl(to) || flags)
		return -EPERM;
	if (renameat(fst.backfd, base(from), fst.backfd, base(to)))
		return -errno;
	disk_forget(base(from));
	disk_forget(base(to));
	return 0;
}

static void *ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	if (fst.bytes_per_s) {
		conn->max_read = 1u << 20;      /* as main's max_read says */
		conn->max_write = 1u << 20;
	}
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = 1;
	cfg->use_ino = 0;
	return NULL;
}

static const struct fuse_operations ff_ops = {
	.init = ff_init,
	.getattr = ff_getattr,
	.readdir = ff_readdir,
	.open = ff_open,
	.release = ff_release,
	.read = ff_read,
	.write = ff_write,
	.fsync = ff_fsync,
	.truncate = ff_truncate,
	.fallocate = ff_fallocate,
	.create = ff_create,
	.unlink = ff_unlink,
	.rename = ff_rename,
};

int main(int argc, char **argv)
{
	char *fargv[10];
	int fargc = 0, i = 1;
	bool fg = false;
	long mibps = 0;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-f"))
			fg = true;
		else if (!strcmp(argv[i], "-r") && i + 1 < argc &&
			 (mibps = strtol(argv[i + 1], NULL, 10)) > 0)
			i++;
		else
			break;
	}
	if (argc - i != 2) {
		fprintf(stderr, "usage: faultfs [-f] [-r MIBPS] BACKDIR MOUNTPOINT\n");
		return 2;
	}
	fst.bytes_per_s = (uint64_t)mibps << 20;
	fst.backfd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fst.backfd < 0) {
		perror(argv[i]);
		return 1;
	}
	fargv[fargc++] = argv[0];
	if (fg)
		fargv[fargc++] = "-f";
	fargv[fargc++] = "-o";
	fargv[fargc++] = "fsname=faultfs,allow_other,default_permissions";
	if (mibps) {
		fargv[fargc++] = "-o";
		fargv[fargc++] = "max_read=1048576";
	}
	fargv[fargc++] = argv[i + 1];
	fargv[fargc] = NULL;
	return fuse_main(fargc, fargv, &ff_ops, NULL);
}
