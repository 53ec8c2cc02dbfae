/*
 * control_damage: the files with unrepaired damage - what `raidfsctl
 * status` lists (the status object's "damaged") and UnrecoverableData
 * names, until `raidfsctl clear`.
 *
 * raidcore names every logical block of data it finds it cannot establish
 * (RC_EV_LOST: a read, the scrub, a rebuild meeting a survivor's read
 * error); control_events.c hands them to ctl_damage_note, under raidcore's
 * locks, so that only queues them.  The damage thread takes the queue
 * after a short pause (one scan for a burst), asks the filesystem which
 * files hold them (fs_blocks_owners: a scan of every inode's map, there is
 * no reverse map) and keeps each as a range of bytes of one inode, with
 * the path the filesystem knows for it (none for an unlinked file), merged
 * with the ranges of that inode it touches: so a block met again (the
 * kernel retries a failed page, a scrub after a read) changes nothing and
 * raises no new event; and a block looked up once is not looked up again
 * until `clear` (a program retrying a read of it costs no scans).  Blocks
 * no file holds (metadata, free space) are counted apart.  Bounded:
 * DAMAGE_RANGES ranges, DAMAGE_QUEUE blocks queued, DAMAGE_SEEN blocks
 * remembered; past them ranges or blocks are counted, not kept.
 *
 * Lock: d->lock guards the queue and the list; a leaf, held for copies
 * only, never across the scan or an event post.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"
#include "fs.h"
#include "log.h"

#define DAMAGE_RANGES 64
#define DAMAGE_QUEUE 4096
#define DAMAGE_OTHER 256             /* blocks in no file, kept to count once */
#define DAMAGE_SEEN 1024             /* blocks looked up, not looked up again */
#define DAMAGE_PAUSE_MS 200          /* a burst of blocks: one scan */

struct damage_range {
	uint64_t ino, generation;        /* generation: a later file under
					    the same number is another */
	uint64_t from, to;               /* bytes [from, to) of the file */
	char path[1024];                 /* "" when no name is known */
};

struct ctl_damage {
	struct fs *fs;
	struct ctl_events *ev;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t queue[DAMAGE_QUEUE];
	size_t nqueue;
	uint64_t queue_dropped;          /* blocks that found the queue full */
	uint64_t last_ns;                /* CLOCK_MONOTONIC of the last block
					    noted (0: none) */
	struct damage_range r[DAMAGE_RANGES];
	size_t nr;
	uint64_t ranges_dropped;         /* ranges that found the list full */
	uint64_t other[DAMAGE_OTHER];    /* blocks in no file */
	size_t nother;
	uint64_t other_more;
	uint64_t seen[DAMAGE_SEEN];      /* sorted: blocks already looked up */
	size_t nseen;
	/* lines said this second, and those not said (damage_say_ok) */
	time_t said_second;
	unsigned said, unsaid;
	bool stop;
	pthread_t thread;
};

/* One scan's findings: the blocks a file holds, and which did. */
struct damage_scan {
	const uint64_t *blocks;
	size_t n;
	bool *owned;
	struct { uint64_t ino, off; } *hit;
	size_t nhit, cap;
};

void ctl_damage_note(struct ctl_damage *d, uint64_t block, uint64_t count)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&d->lock);
	d->last_ns = (uint64_t)now.tv_sec * 1000000000ull +
		     (uint64_t)now.tv_nsec;
	for (uint64_t i = 0; i < count; i++) {
		if (d->nqueue == DAMAGE_QUEUE) {
			d->queue_dropped += count - i;
			break;
		}
		d->queue[d->nqueue++] = block + i;
	}
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Sorts and drops repeats: the new length. */
static size_t blocks_unique(uint64_t *b, size_t n)
{
	size_t k = 0;

	qsort(b, n, sizeof(*b), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || b[k - 1] != b[i])
			b[k++] = b[i];
	return k;
}

static void scan_hit(void *ctx, uint64_t ino, uint64_t off, uint64_t block)
{
	struct damage_scan *sc = ctx;
	const uint64_t *p = bsearch(&block, sc->blocks, sc->n, sizeof(*p),
				    u64_cmp);

	if (p)
		sc->owned[p - sc->blocks] = true;
	if (sc->nhit == sc->cap)
		return;
	sc->hit[sc->nhit].ino = ino;
	sc->hit[sc->nhit++].off = off;
}

/* Merges [from, to) of ino into the list; true when it says something
 * new.  Caller holds d->lock. */
static bool range_add(struct ctl_damage *d, uint64_t ino, uint64_t gen,
		      uint64_t from, uint64_t to, const char *path)
{
	for (size_t i = 0; i < d->nr; i++) {
		struct damage_range *r = &d->r[i];

		if (r->ino != ino || r->generation != gen || from > r->to ||
		    to < r->from)
			continue;
		if (from >= r->from && to <= r->to)
			return false;
		r->from = from < r->from ? from : r->from;
		r->to = to > r->to ? to : r->to;
		return true;
	}
	if (d->nr == DAMAGE_RANGES) {
		d->ranges_dropped++;
		return true;
	}
	d->r[d->nr] = (struct damage_range){ .ino = ino, .generation = gen,
					     .from = from, .to = to };
	snprintf(d->r[d->nr++].path, sizeof(d->r[0].path), "%s", path);
	return true;
}

/* A block no file holds; true when it was not counted yet.  Caller holds
 * d->lock. */
static bool other_add(struct ctl_damage *d, uint64_t block)
{
	for (size_t i = 0; i < d->nother; i++)
		if (d->other[i] == block)
			return false;
	if (d->nother < DAMAGE_OTHER)
		d->other[d->nother++] = block;
	else
		d->other_more++;
	return true;
}

/* "/a/b (inode 12): bytes 0-4095" */
static void range_say(char *buf, size_t len, uint64_t ino, const char *path,
		      uint64_t from, uint64_t to)
{
	if (path[0])
		snprintf(buf, len, "%s (inode %llu): bytes %llu-%llu", path,
			 (unsigned long long)ino, (unsigned long long)from,
			 (unsigned long long)to - 1);
	else
		snprintf(buf, len, "inode %llu (no name): bytes %llu-%llu",
			 (unsigned long long)ino, (unsigned long long)from,
			 (unsigned long long)to - 1);
}

/*
 * May one more "unrecoverable data" line go to the log?  At most
 * DAMAGE_SAY_PER_SECOND a second, then a count once the second is over:
 * past the list's bounds every block met again is new to it, and a
 * program re-reading a file beyond the redundancy met tens of thousands
 * a minute (raidfsctl status and the events list the ranges).
 */
#define DAMAGE_SAY_PER_SECOND 10

static bool damage_say_ok(struct ctl_damage *d)
{
	struct timespec ts;
	unsigned unsaid = 0;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&d->lock);
	if (ts.tv_sec != d->said_second) {
		d->said_second = ts.tv_sec;
		unsaid = d->unsaid;
		d->said = 0;
		d->unsaid = 0;
	}
	ok = d->said < DAMAGE_SAY_PER_SECOND;
	if (ok)
		d->said++;
	else
		d->unsaid++;
	pthread_mutex_unlock(&d->lock);
	if (unsaid)
		rfs_log(LOG_ERR, "unrecoverable data: %u more ranges not shown "
			"(raidfsctl status lists them)", unsaid);
	return ok;
}

#define DAMAGE_MORE "; and more (raidfsctl status lists them)"

/* The scan's hits into the list; the new ones said in msg, as many whole
 * ranges as fit. */
static void scan_record(struct ctl_damage *d, struct damage_scan *sc,
			char *msg, size_t len, size_t *nnew)
{
	char path[1024], one[1200];
	size_t at = strlen(msg);

	for (size_t i = 0; i < sc->nhit; i++) {
		uint64_t ino = sc->hit[i].ino, off = sc->hit[i].off;
		struct fs_attr at_ino;
		bool fresh;

		if (fs_path_find(d->fs, ino, path, sizeof(path)))
			path[0] = '\0';
		if (fs_getattr(d->fs, ino, &at_ino))
			at_ino.generation = 0;
		pthread_mutex_lock(&d->lock);
		fresh = range_add(d, ino, at_ino.generation, off, off + 4096,
				  path);
		pthread_mutex_unlock(&d->lock);
		if (!fresh)
			continue;
		range_say(one, sizeof(one), ino, path, off, off + 4096);
		if (damage_say_ok(d))
			rfs_log(LOG_ERR, "unrecoverable data: %s (listed by "
				"raidfsctl status until `raidfsctl clear`)",
				one);
		/* whole ranges only, and a mark where they stop fitting */
		if (at + strlen(one) + sizeof(DAMAGE_MORE) + 2 < len)
			at += (size_t)snprintf(msg + at, len - at, "%s%s",
					       *nnew ? "; " : "", one);
		else if (!strstr(msg, DAMAGE_MORE))
			at += (size_t)snprintf(msg + at, len - at, "%s",
					       DAMAGE_MORE);
		(*nnew)++;
	}
}

/* The blocks no file holds, counted once each. */
static size_t scan_others(struct ctl_damage *d, struct damage_scan *sc)
{
	size_t fresh = 0;

	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < sc->n; i++)
		if (!sc->owned[i])
			fresh += other_add(d, sc->blocks[i]);
	pthread_mutex_unlock(&d->lock);
	return fresh;
}

/* Who holds blocks[0 .. n) (sorted, unique); UnrecoverableData for what
 * is new. */
static void damage_resolve(struct ctl_damage *d, const uint64_t *blocks,
			   size_t n)
{
	struct damage_scan sc = { .blocks = blocks, .n = n, .cap = n };
	char msg[sizeof(((struct ctl_event *)0)->message)] = "";
	size_t nnew = 0, others;
	int ret;

	sc.owned = calloc(n, sizeof(*sc.owned));
	sc.hit = calloc(sc.cap, sizeof(*sc.hit));
	ret = sc.owned && sc.hit ? fs_blocks_owners(d->fs, blocks, n, scan_hit,
						     &sc) : -ENOMEM;
	if (ret) {
		rfs_log(LOG_WARNING, "%zu unrecoverable blocks: which files hold "
			"them could not be found (%s)", n, strerror(-ret));
		goto out;
	}
	scan_record(d, &sc, msg, sizeof(msg), &nnew);
	others = scan_others(d, &sc);
	if (others && damage_say_ok(d))
		rfs_log(LOG_ERR, "unrecoverable data: %zu blocks that no file "
			"holds (metadata or free space)", others);
	if (nnew)
		ctl_events_post(d->ev, CTL_EV_UNRECOVERABLE, -1, NULL, msg);
out:
	free(sc.owned);
	free(sc.hit);
}

/* Drops from b[0 .. n) (sorted, unique) the blocks looked up before, and
 * remembers the others (while there is room): the new length. */
static size_t blocks_new(struct ctl_damage *d, uint64_t *b, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = d->nseen, mid;

		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (d->seen[mid] < b[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < d->nseen && d->seen[lo] == b[i])
			continue;
		if (d->nseen < DAMAGE_SEEN) {
			memmove(d->seen + lo + 1, d->seen + lo,
				(d->nseen++ - lo) * sizeof(d->seen[0]));
			d->seen[lo] = b[i];
		}
		b[k++] = b[i];
	}
	return k;
}

/* Waits for blocks (and the pause after the first); false at stop. */
static bool damage_wait(struct ctl_damage *d, uint64_t *out, size_t *n)
{
	struct timespec ts;
	bool go;

	pthread_mutex_lock(&d->lock);
	while (!d->nqueue && !d->stop)
		pthread_cond_wait(&d->cond, &d->lock);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += DAMAGE_PAUSE_MS * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	while (!d->stop && pthread_cond_timedwait(&d->cond, &d->lock, &ts) == 0)
		;
	go = !d->stop;
	*n = d->nqueue;
	memcpy(out, d->queue, *n * sizeof(*out));
	d->nqueue = 0;
	pthread_mutex_unlock(&d->lock);
	return go;
}

static void *damage_main(void *arg)
{
	struct ctl_damage *d = arg;
	uint64_t *blocks = malloc(DAMAGE_QUEUE * sizeof(*blocks));
	size_t n;

	if (!blocks) {
		rfs_log(LOG_ERR, "no memory for the damage list: unrecoverable "
			"blocks are not named");
		return NULL;
	}
	while (damage_wait(d, blocks, &n)) {
		n = blocks_unique(blocks, n);
		pthread_mutex_lock(&d->lock);
		n = blocks_new(d, blocks, n);
		pthread_mutex_unlock(&d->lock);
		if (n)
			damage_resolve(d, blocks, n);
	}
	free(blocks);
	return NULL;
}

int ctl_damage_new(struct fs *fs, struct ctl_events *ev,
		   struct ctl_damage **out)
{
	struct ctl_damage *d = calloc(1, sizeof(*d));
	int ret;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->fs = fs;
	d->ev = ev;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	ret = fs ? -pthread_create(&d->thread, NULL, damage_main, d) : -EINVAL;
	if (ret) {
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return ret;
	}
	*out = d;
	return 0;
}

/* Caller holds d->lock. */
static void damage_empty(struct ctl_damage *d)
{
	d->nr = d->nother = d->nseen = 0;
	d->ranges_dropped = d->other_more = d->queue_dropped = 0;
}

void ctl_damage_clear(struct ctl_damage *d)
{
	pthread_mutex_lock(&d->lock);
	damage_empty(d);
	pthread_mutex_unlock(&d->lock);
}

size_t ctl_damage_scrubbed(struct ctl_damage *d, uint64_t since_ns)
{
	size_t n = 0;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->lock);
	if (d->last_ns && d->last_ns < since_ns) {
		n = d->nr + d->nother + d->ranges_dropped + d->other_more;
		damage_empty(d);
		d->nqueue = 0;
		d->last_ns = 0;
	}
	pthread_mutex_unlock(&d->lock);
	return n;
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static json_object *range_json(const struct damage_range *r)
{
	json_object *o = json_object_new_object();

	add_u64(o, "inode", r->ino);
	json_object_object_add(o, "path", r->path[0] ?
			       json_object_new_string(r->path) : NULL);
	add_u64(o, "from_byte", r->from);
	add_u64(o, "to_byte", r->to - 1);
	return o;
}

/*
 * Drops the ranges of files deleted since (the inode gone, or another
 * file under its number): their blocks are free space now, and the list
 * named a file that no longer exists (a tester's report).  An unlinked
 * file still open stays.  fs is asked with no lock held.
 */
static void damage_prune(struct ctl_damage *d)
{
	struct { uint64_t ino, gen; } gone[DAMAGE_RANGES];
	size_t n = 0, ngone = 0;

	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < d->nr; i++) {
		gone[n].ino = d->r[i].ino;
		gone[n++].gen = d->r[i].generation;
	}
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < n; i++) {
		struct fs_attr a;
		int ret = fs_getattr(d->fs, gone[i].ino, &a);

		if (ret == -ENOENT || (ret == 0 && a.generation != gone[i].gen))
			gone[ngone++] = gone[i];
	}
	pthread_mutex_lock(&d->lock);
	for (size_t k = 0; k < ngone; k++) {
		size_t i = 0;

		while (i < d->nr) {
			if (d->r[i].ino == gone[k].ino &&
			    d->r[i].generation == gone[k].gen)
				d->r[i] = d->r[--d->nr];
			else
				i++;
		}
	}
	/* the freed blocks, met again, are looked up again (in no file) */
	if (ngone)
		d->nseen = 0;
	pthread_mutex_unlock(&d->lock);
}

json_object *ctl_damage_json(struct ctl_damage *d)
{
	json_object *o = json_object_new_object(), *files = json_object_new_array();

	damage_prune(d);
	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < d->nr; i++)
		json_object_array_add(files, range_json(&d->r[i]));
	json_object_object_add(o, "files", files);
	add_u64(o, "ranges_not_kept", d->ranges_dropped);
	add_u64(o, "other_blocks", d->nother + d->other_more);
	add_u64(o, "blocks_not_looked_up", d->queue_dropped);
	pthread_mutex_unlock(&d->lock);
	return o;
}

void ctl_damage_free(struct ctl_damage *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
