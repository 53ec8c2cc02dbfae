/*
 * fuse_space: write(2) fails with ENOSPC when the filesystem is full,
 * although the kernel's writeback cache accepts writes into its page cache
 * and sends them to the daemon only later (docs/DESIGN.md, "ENOSPC from
 * write(2)").
 *
 * The hook: with the writeback cache, every write(2) on a FUSE file first
 * refreshes the inode's size and mode when its cached attributes have
 * expired (fs/fuse/file.c, fuse_cache_write_iter -> fuse_update_attributes),
 * with a GETATTR that carries the file handle (FUSE_GETATTR_FH); an error
 * there fails the write(2) itself.  The bound: the kernel throttles the
 * writers of this mount so that its dirty and in-flight pages stay below
 * the backing device's limit (/sys/class/bdi/MAJ:MIN/max_bytes; FUSE sets
 * strict_limit), which the daemon lowers to a few MiB at mount.
 *
 *   normal   avail >= near: long attribute timeouts, nothing checked
 *   near     avail <  near: inodes open for writing get their attributes
 *            dropped, and dropped again before every reply that carries
 *            them (rfs_attr_timeout), so each write(2) asks; a GETATTR
 *            with a write handle fails with ENOSPC once avail < reserve
 * reserve = dirty_max + dirty_max / 4 + 2 MiB, plus 2 MiB for every other
 * handle writing through the cache (up to CACHED_MAX of them): what the
 * kernel may still hold (and overshoot by), the write(2) being admitted
 * and one more in flight through each other handle, so every byte an
 * admitted write(2) accepted finds room when it arrives.  near = 2 *
 * reserve + 2 MiB: room for what was accepted before the attributes were
 * dropped, a call in flight through every handle included.  The state is
 * left only at near + near / 4 (each change drops attributes and logs).
 * It is judged again after every change that takes space: a WRITE,
 * fallocate, copy_file_range, and a name, symlink or attribute made
 * (rfs_space_changed, fuse_ops.h), and before a write handle is opened.
 *
 * Near full, a handle opened for writing gets FOPEN_DIRECT_IO
 * (rfs_space_open_direct): its write(2)s reach fs with their offsets, and
 * fail only when their own range needs blocks that are not there, so an
 * overwrite in place and a write into a fallocated range succeed on a full
 * filesystem, and new data fills it to the last block.  While any handle
 * writes through the page cache (sp->cached), what it was admitted for
 * must still find room: such writes, fallocate and new symlinks,
 * attributes and inode chunks leave `reserve` free (fs_space_keep).
 * Handles opened before the filesystem got near full keep the page
 * cache, and the check above.
 *
 * The mount's readahead is raised through the same sysfs directory
 * (rfs_readahead_raise, called by fuse_hook.c once INIT is answered).
 *
 * Write handles are told apart by a bit in fi->fh (fuse_ops.h); the
 * writers table counts them per inode.  Lock order: space->lock, then
 * inval->lock (rfs_inval_attr), fs's allocator lock (fs_space_keep) or
 * fs's icache_lock (fs_wb_settle); nothing else is taken under it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libmount.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "hcache.h"
#include "fs.h"
#include "fuse_ops.h"

#define MIB ((uint64_t)1 << 20)
/* FUSE keeps up to max_background (12) WRITEs of max_write (1 MiB) in
 * flight, and they count against the limit: much under twice that, every
 * writer is throttled (docs/DESIGN.md, "ENOSPC from write(2)"). */
#define DIRTY_MIN (2 * MIB)
#define DIRTY_MAX (64 * MIB)
#define SPACE_SLACK ((uint64_t)2 * RFS_MAX_WRITE)
/* Other cached write handles counted in reserve: past this many, a
 * write(2) in flight through each is no longer covered (DESIGN.md). */
#define CACHED_MAX 32

struct rfs_space {
	pthread_mutex_t lock;
	struct hcache writers;      /* struct writer by inode number */
	uint64_t dirty_max;         /* the kernel's dirty limit for the mount */
	uint64_t reserve;           /* bytes of avail: with one cached handle */
	uint32_t cached;            /* atomic: write handles through the cache */
	bool is_near;               /* atomic: read without the lock */
	bool told_full;             /* this episode's first refusal logged */
};

struct writer {
	struct hc_node node;
	uint32_t handles;
};

/* ---- the kernel's dirty limit for this mount ---------------------------- */

/* /sys/class/bdi/MAJ:MIN of the FUSE mount on mountpoint: from the mount
 * table, never by stat(2), which would ask this daemon before it serves. */
static int bdi_dir(const char *mountpoint, char *buf, size_t len)
{
	struct libmnt_table *tb = mnt_new_table();
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_BACKWARD);
	struct libmnt_fs *fs;
	const char *target;
	dev_t dev;
	int ret = -ENOMEM;

	if (!tb || !it || mnt_table_parse_file(tb, "/proc/self/mountinfo"))
		goto out;
	ret = -ENOENT;
	while (ret && mnt_table_next_fs(tb, it, &fs) == 0) {
		target = mnt_fs_get_target(fs);
		if (!target || strcmp(target, mountpoint))
			continue;
		dev = mnt_fs_get_devno(fs);
		snprintf(buf, len, "/sys/class/bdi/%u:%u", major(dev),
			 minor(dev));
		ret = 0;
	}
out:
	mnt_free_iter(it);
	mnt_unref_table(tb);
	return ret;
}

static FILE *sysfs_open(const char *dir, const char *name, const char *mode)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, mode);
}

static int sysfs_read(const char *dir, const char *name, uint64_t *val)
{
	FILE *f = sysfs_open(dir, name, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%" SCNu64, val) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static int sysfs_write(const char *dir, const char *name, uint64_t val)
{
	FILE *f = sysfs_open(dir, name, "we");
	int ok;

	if (!f)
		return -errno;
	ok = fprintf(f, "%" PRIu64 "\n", val) > 0;
	ok = fclose(f) == 0 && ok;
	return ok ? 0 : -EIO;
}

/*
 * Lowers the mount's dirty limit to want and returns what the kernel then
 * allows (it keeps limits as a ratio of the global one).  Without
 * max_bytes to read (kernels before 6.2), FUSE's own default: 1 % of
 * memory at most.
 */
static uint64_t dirty_limit_set(const char *mountpoint, uint64_t want)
{
	char dir[96];
	uint64_t cur;

	if (!bdi_dir(mountpoint, dir, sizeof(dir)) &&
	    !sysfs_read(dir, "max_bytes", &cur)) {
		if (cur > want && sysfs_write(dir, "max_bytes", want))
			rfs_log(LOG_INFO, "%s/max_bytes stays %" PRIu64
				" (cannot write it)", dir, cur);
		if (!sysfs_read(dir, "max_bytes", &cur) && cur)
			return cur;
	}
	return (uint64_t)sysconf(_SC_PHYS_PAGES) *
	       (uint64_t)sysconf(_SC_PAGESIZE) / 100;
}

/* ---- the mount's readahead ---------------------------------------------- */

void rfs_readahead_raise(const char *mountpoint, uint32_t kb)
{
	char dir[96];
	uint64_t cur;

	if (bdi_dir(mountpoint, dir, sizeof(dir)) ||
	    sysfs_read(dir, "read_ahead_kb", &cur) || cur >= kb)
		return;
	if (sysfs_write(dir, "read_ahead_kb", kb))
		rfs_log(LOG_INFO, "%s/read_ahead_kb stays %" PRIu64
			" (cannot write it)", dir, cur);
}

/* ---- state -------------------------------------------------------------- */

static bool space_is_near(const struct rfs_space *sp)
{
	return __atomic_load_n(&sp->is_near, __ATOMIC_ACQUIRE);
}

/* Only cached writes need the check: without the writeback cache every
 * write(2) reaches fs_write, which says ENOSPC itself. */
static bool space_checks(const struct rfs_daemon *d)
{
	return d->space && d->writeback && space_is_near(d->space);
}

/* Entering near full: the writers' attributes dropped (each write(2)
 * asks from now on), and what they stored so far never cut (fs_wb_settle:
 * write(2)s accepted before the check, one larger than the room among
 * them, must not take back what a close answered for). */
static int writer_inval(struct hc_node *n, void *arg)
{
	struct rfs_daemon *d = arg;

	fs_wb_settle(d->fs, n->key);
	rfs_inval_attr(d, n->key);
	return 0;
}

/* reserve, and near, for the handles now writing through the cache */
static uint64_t reserve_now(const struct rfs_space *sp)
{
	uint32_t n = __atomic_load_n(&sp->cached, __ATOMIC_RELAXED);

	n = n > CACHED_MAX ? CACHED_MAX : n;
	return sp->reserve + (n > 1 ? n - 1 : 0) * SPACE_SLACK;
}

static uint64_t near_now(const struct rfs_space *sp)
{
	return 2 * reserve_now(sp) + SPACE_SLACK;
}

/* Enters or leaves the near state for avail bytes; entering drops the
 * cached attributes of every inode open for writing. */
static void space_judge(struct rfs_daemon *d, uint64_t avail)
{
	struct rfs_space *sp = d->space;
	uint64_t near_at = near_now(sp);
	bool near = space_is_near(sp) ? avail < near_at + near_at / 4 :
					avail < near_at;

	if (near == space_is_near(sp))
		return;
	pthread_mutex_lock(&sp->lock);
	if (near != sp->is_near) {
		__atomic_store_n(&sp->is_near, near, __ATOMIC_RELEASE);
		sp->told_full = false;
		if (near)
			hc_foreach(&sp->writers, writer_inval, d);
		rfs_log(near ? LOG_NOTICE : LOG_INFO, near ?
			"filesystem nearly full (%" PRIu64 " MiB left): every "
			"write(2) is checked" : "filesystem has room again (%"
			PRIu64 " MiB): writes are cached", avail / MIB);
	}
	pthread_mutex_unlock(&sp->lock);
}

void rfs_space_update(struct rfs_daemon *d)
{
	if (d->space)
		space_judge(d, fs_space_avail(d->fs));
}

/* Caller holds sp->lock. */
static struct writer *writer_find(struct rfs_space *sp, uint64_t ino)
{
	struct hc_node *n = hc_find(&sp->writers, ino);

	return n ? hc_entry(n, struct writer, node) : NULL;
}

static bool ino_has_writers(struct rfs_space *sp, uint64_t ino)
{
	bool yes;

	pthread_mutex_lock(&sp->lock);
	yes = writer_find(sp, ino) != NULL;
	pthread_mutex_unlock(&sp->lock);
	return yes;
}

bool rfs_space_has_writers(const struct rfs_daemon *d, uint64_t ino)
{
	return !d->space || ino_has_writers(d->space, ino);
}

/*
 * Near full, the kernel's attributes of an inode open for writing are
 * kept invalid, so that every write(2) asks GETATTR first: it wants the
 * size and the mode, and the mode is not the kernel's own with the
 * writeback cache (fuse_get_cache_mask).  A reply carrying them makes
 * them valid again, so:
 *  - before a reply that is not that GETATTR (a LOOKUP, a GETATTR without
 *    a write handle, a SETATTR) they are dropped: the kernel then
 *    discards the reply's (its attr_version is older than the drop's);
 *  - after the GETATTR a write(2) sends (rfs_space_checked), they are
 *    dropped again, once the reply has set a long timeout;
 *  - a file created near full gets timeout 0 (rfs_space_create_timeout):
 *    a drop cannot reach an inode the kernel does not have yet, and its
 *    first write(2) must ask too.
 * The timeout is otherwise long: a read past the end of file and
 * lseek(SEEK_END) want the size only, which the kernel keeps itself, so
 * they ask only once it has run out.  With timeout 0 for every inode
 * open for writing they asked every time, with the write handle, and
 * failed with ENOSPC once full.
 */
double rfs_attr_timeout(struct rfs_daemon *d, uint64_t ino)
{
	/* near full, or immutable (op_getattr), an inode open for writing
	 * keeps its attributes invalid: every write(2) asks */
	if (d->space && d->writeback &&
	    (space_is_near(d->space) ||
	     __atomic_load_n(&d->immutable_seen, __ATOMIC_RELAXED)) &&
	    ino_has_writers(d->space, ino) &&
	    (space_is_near(d->space) || rfs_immutable(d, ino)))
		rfs_inval_attr_now(d, ino);
	return d->timeout;
}

double rfs_space_create_timeout(const struct rfs_daemon *d, uint64_t fh)
{
	return space_checks(d) && rfs_fh_writes(fh) && !rfs_fh_direct(fh) ?
	       0 : d->timeout;
}

void rfs_space_checked(struct rfs_daemon *d, uint64_t ino,
		       const struct fuse_file_info *fi)
{
	if (fi && rfs_fh_writes(fi->fh) && !rfs_fh_direct(fi->fh) &&
	    space_checks(d))
		rfs_inval_attr_now(d, ino);
}

bool rfs_space_open_direct(const struct rfs_daemon *d, int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY && space_checks(d);
}

int rfs_space_check(struct rfs_daemon *d, uint64_t ino,
		    const struct fuse_file_info *fi)
{
	struct rfs_space *sp = d->space;
	uint64_t avail;
	bool tell;

	/* a direct handle's write(2) sends no GETATTR: fs checks its range */
	if (!fi || !rfs_fh_writes(fi->fh) || rfs_fh_direct(fi->fh) ||
	    !space_checks(d))
		return 0;
	avail = fs_space_avail(d->fs);
	space_judge(d, avail);
	if (avail >= reserve_now(sp))
		return 0;
	pthread_mutex_lock(&sp->lock);
	tell = !sp->told_full;
	sp->told_full = true;
	pthread_mutex_unlock(&sp->lock);
	if (tell)
		rfs_log(LOG_WARNING, "filesystem full (%" PRIu64 " KiB left "
			"for cached writes): write(2) fails with ENOSPC",
			avail >> 10);
	return -ENOSPC;
}

/* ---- writers ------------------------------------------------------------ */

/* One more (delta 1) or one fewer (-1) handle of ino open for writing;
 * cached: through the page cache.  While any is open, what takes space
 * through fs leaves the reserve for them free; the last one's release
 * (after its flush wrote its pages back) gives it back. */
static void writers_count(struct rfs_daemon *d, uint64_t ino, int delta,
			  bool cached)
{
	struct rfs_space *sp = d->space;
	struct writer *w;

	pthread_mutex_lock(&sp->lock);
	if (cached) {
		__atomic_store_n(&sp->cached, sp->cached + (uint32_t)delta,
				 __ATOMIC_RELAXED);
		fs_space_keep(d->fs, sp->cached ? reserve_now(sp) : 0);
	}
	w = writer_find(sp, ino);
	if (!w && delta > 0 && (w = calloc(1, sizeof(*w))))
		hc_insert(&sp->writers, &w->node, ino);
	if (w)
		w->handles += (uint32_t)delta;
	if (w && !w->handles) {
		hc_remove(&sp->writers, &w->node);
		free(w);
	}
	pthread_mutex_unlock(&sp->lock);
}

void rfs_space_opened(struct rfs_daemon *d, uint64_t ino, uint64_t fh)
{
	bool cached = d->writeback && !rfs_fh_direct(fh);

	if (!d->space || !rfs_fh_writes(fh))
		return;
	writers_count(d, ino, 1, cached);
	if (cached)             /* near is further off with one more */
		rfs_space_update(d);
	/* attributes only: takes no inode lock in the kernel (fuse_inval.c) */
	if (space_is_near(d->space))
		rfs_inval_attr_now(d, ino);
}

void rfs_space_released(struct rfs_daemon *d, uint64_t ino, uint64_t fh)
{
	if (d->space && rfs_fh_writes(fh))
		writers_count(d, ino, -1, d->writeback && !rfs_fh_direct(fh));
}

/* statfs's f_bavail: what one writer through the page cache may take.
 * Its writes, and fallocate or new blocks while it is open, leave the
 * reserve free (fs_space_keep), so Available leaves it out too, as ext4's
 * leaves out the blocks kept for root: an fallocate of all that df shows
 * failed with ENOSPC (xfstests generic/103).  f_bfree still counts it. */
void rfs_space_statfs(const struct rfs_daemon *d, struct statvfs *st)
{
	const struct rfs_space *sp = d->space;
	uint64_t keep;

	if (!sp || !d->writeback || !st->f_frsize)
		return;
	keep = (sp->reserve + st->f_frsize - 1) / st->f_frsize;
	st->f_bavail = st->f_bavail > keep ? st->f_bavail - keep : 0;
}

/* ---- life --------------------------------------------------------------- */

int rfs_space_start(struct rfs_daemon *d, const char *mountpoint)
{
	struct rfs_space *sp = calloc(1, sizeof(*sp));
	struct statvfs st;
	uint64_t want;

	if (!sp || hc_init(&sp->writers, 256)) {
		free(sp);
		return -ENOMEM;
	}
	pthread_mutex_init(&sp->lock, NULL);
	want = fs_statfs(d->fs, &st) ? DIRTY_MAX :
	       st.f_blocks * st.f_frsize / 64;
	want = want < DIRTY_MIN ? DIRTY_MIN : want > DIRTY_MAX ? DIRTY_MAX :
	       want;
	sp->dirty_max = dirty_limit_set(mountpoint, want);
	sp->reserve = sp->dirty_max + sp->dirty_max / 4 + SPACE_SLACK;
	d->space = sp;
	rfs_log(LOG_INFO, "cached writes: at most %" PRIu64 " KiB dirty; "
		"write(2) checked below %" PRIu64 " MiB free, ENOSPC below %"
		PRIu64 " KiB (%" PRIu64 " MiB more for each further writer)",
		sp->dirty_max >> 10, near_now(sp) / MIB, sp->reserve >> 10,
		SPACE_SLACK / MIB);
	rfs_space_update(d);
	return 0;
}

static void writer_free(struct hc_node *n, void *arg)
{
	free(hc_entry(n, struct writer, node));
}

void rfs_space_stop(struct rfs_daemon *d)
{
	struct rfs_space *sp = d->space;

	if (!sp)
		return;
	d->space = NULL;
	hc_fini(&sp->writers, writer_free, NULL);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
}

void rfs_space_log(const struct rfs_daemon *d)
{
	const struct rfs_space *sp = d->space;

	if (sp)
		rfs_log(LOG_INFO, "cached writes: %s, %" PRIu64 " MiB left, "
			"checked below %" PRIu64 " MiB, ENOSPC below %" PRIu64
			" KiB", space_is_near(sp) ? "checked" : "not checked",
			fs_space_avail(d->fs) / MIB, near_now(sp) / MIB,
			reserve_now(sp) >> 10);
}
