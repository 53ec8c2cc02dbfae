/*
 * scan: an array's members found by uuid, late members waited for (see
 * scan.h).
 *
 * One pass probes every candidate into a scan_set (what each device says
 * it is); the wait repeats passes until the set covers every slot of the
 * array or the time is up; the set then becomes src's member list.  A
 * pass starts from nothing, so a device that vanished since the last one
 * is not kept.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <libudev.h>
#include <linux/fs.h>
#include <uuid/uuid.h>

#include "raidcore.h"
#include "log.h"
#include "scan.h"

#define SCAN_POLL_MS 250
#define ROLE_SPARE 0xffffffffu

/* What one device said.  The identity (rdev for a block device, else
 * st_dev and ino) makes the same device under two names one hit. */
struct scan_hit {
	char *path;
	struct rc_probe p;
	dev_t rdev, st_dev;
	ino_t ino;
};

/* One pass.  Invariant: no two hits share an identity. */
struct scan_set {
	struct scan_hit *hits;
	int n;
};

static void set_clear(struct scan_set *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->hits[i].path);
	free(s->hits);
	s->hits = NULL;
	s->n = 0;
}

/* ---- a probe-only device: pread on a plain O_RDONLY descriptor ---------- */

struct peek {
	struct rc_dev dev;
	int fd;
};

static int peek_read(struct rc_dev *dev, void *buf, size_t len, uint64_t off)
{
	struct peek *pk = (struct peek *)dev;
	ssize_t n;

	while (len) {
		n = pread(pk->fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf = (char *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int peek_write(struct rc_dev *dev, const void *buf, size_t len,
		      uint64_t off)
{
	return -EROFS;
}

static int peek_sync(struct rc_dev *dev)
{
	return 0;
}

static void peek_close(struct rc_dev *dev)
{
}

static const struct rc_dev_ops peek_ops = {
	.read = peek_read, .write = peek_write, .sync = peek_sync,
	.close = peek_close,
};

/* 0 with *p filled when path is a file or block device holding a raidfs
 * superblock; -errno (-ENODATA: no superblock) otherwise. */
static int path_probe(const char *path, const struct stat *st,
		      struct rc_probe *p)
{
	struct peek pk = { .dev = { .ops = &peek_ops }, .fd = -1 };
	uint64_t size = (uint64_t)st->st_size;
	int ret;

	pk.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (pk.fd < 0)
		return -errno;
	if (S_ISBLK(st->st_mode) && ioctl(pk.fd, BLKGETSIZE64, &size))
		size = 0;
	pk.dev.size = size;
	snprintf(pk.dev.name, sizeof(pk.dev.name), "%s", path);
	ret = size >= 4 * RC_BLOCK_SIZE ? rc_member_probe(&pk.dev, p) :
	      -ENODATA;
	close(pk.fd);
	return ret;
}

/* ---- one pass ----------------------------------------------------------- */

static bool hit_same(const struct scan_hit *h, const struct stat *st)
{
	if (S_ISBLK(st->st_mode))
		return h->rdev && h->rdev == st->st_rdev;
	return !h->rdev && h->st_dev == st->st_dev && h->ino == st->st_ino;
}

/* Probes path; a raidfs member (of any array) joins the set. */
static int set_probe(struct scan_set *s, const char *path)
{
	struct scan_hit *h;
	struct rc_probe p;
	struct stat st;

	if (stat(path, &st) || (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)))
		return 0;
	for (int i = 0; i < s->n; i++)
		if (hit_same(&s->hits[i], &st))
			return 0;
	if (path_probe(path, &st, &p))
		return 0;
	h = realloc(s->hits, (size_t)(s->n + 1) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	s->hits = h;
	h = &s->hits[s->n];
	memset(h, 0, sizeof(*h));
	h->path = strdup(path);
	if (!h->path)
		return -ENOMEM;
	h->p = p;
	h->rdev = S_ISBLK(st.st_mode) ? st.st_rdev : 0;
	h->st_dev = st.st_dev;
	h->ino = st.st_ino;
	s->n++;
	return 0;
}

/* The entries of dir (not below), in name order so that a pass is
 * repeatable. */
static int set_probe_dir(struct scan_set *s, const char *dir)
{
	struct dirent **names = NULL;
	char path[4096];
	int i, n = scandir(dir, &names, NULL, alphasort), ret = 0;

	if (n < 0) {
		rfs_log(LOG_WARNING, "scan %s: %s", dir, strerror(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (!ret && names[i]->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s", dir,
			     names[i]->d_name) < (int)sizeof(path))
			ret = set_probe(s, path);
		free(names[i]);
	}
	free(names);
	return ret;
}

/* Every block device the kernel has (libudev reads sysfs: no udev daemon
 * needed), but empty ones (a loop device with nothing attached). */
static int set_probe_block(struct scan_set *s)
{
	struct udev *u = udev_new();
	struct udev_enumerate *e = u ? udev_enumerate_new(u) : NULL;
	struct udev_list_entry *l;
	int ret = -ENOMEM;

	if (!e || udev_enumerate_add_match_subsystem(e, "block") ||
	    udev_enumerate_scan_devices(e))
		goto out;
	ret = 0;
	udev_list_entry_foreach(l, udev_enumerate_get_list_entry(e)) {
		struct udev_device *d =
			udev_device_new_from_syspath(u, udev_list_entry_get_name(l));
		const char *node = d ? udev_device_get_devnode(d) : NULL;
		const char *size = d ? udev_device_get_sysattr_value(d, "size") :
				   NULL;

		if (!ret && node && size && strcmp(size, "0"))
			ret = set_probe(s, node);
		udev_device_unref(d);
	}
out:
	udev_enumerate_unref(e);
	udev_unref(u);
	return ret;
}

static int set_pass(struct scan_set *s, const struct config_source *src,
		    bool scan)
{
	int i, ret = 0;

	set_clear(s);
	if (scan && !src->nscan)
		return set_probe_block(s);
	for (i = 0; !ret && scan && i < src->nscan; i++)
		ret = set_probe_dir(s, src->scan[i]);
	for (i = 0; !ret && !scan && i < src->nmembers + src->nspares; i++)
		ret = set_probe(s, i < src->nmembers ? src->members[i] :
				src->spares[i - src->nmembers]);
	return ret;
}

/* ---- what a pass found -------------------------------------------------- */

static bool hit_ours(const struct scan_hit *h, const uint8_t *uuid)
{
	return !memcmp(h->p.array_uuid, uuid, RC_UUID_SIZE);
}

/* The array a list of members means: the named one, else that of the
 * newest superblock among them.  false when nothing holds one. */
static bool set_uuid(const struct scan_set *s, const struct config_source *src,
		     uint8_t *uuid)
{
	const struct scan_hit *best = NULL;

	if (src->has_uuid) {
		memcpy(uuid, src->uuid, RC_UUID_SIZE);
		return true;
	}
	for (int i = 0; i < s->n; i++)
		if (!best || s->hits[i].p.events > best->p.events)
			best = &s->hits[i];
	if (best)
		memcpy(uuid, best->p.array_uuid, RC_UUID_SIZE);
	return best != NULL;
}

/* How many of the array's slots a device holds (*have) of how many
 * (*want, from its newest superblock; 0 when no device holds it). */
static void set_slots(const struct scan_set *s, const uint8_t *uuid,
		      uint32_t *have, uint32_t *want)
{
	bool held[RC_MAX_MEMBERS] = { false };
	uint64_t events = 0;

	*have = *want = 0;
	for (int i = 0; i < s->n; i++)
		if (hit_ours(&s->hits[i], uuid) &&
		    (!*want || s->hits[i].p.events > events)) {
			*want = s->hits[i].p.members;
			events = s->hits[i].p.events;
		}
	for (int i = 0; i < s->n; i++) {
		uint32_t r = s->hits[i].p.role;

		if (hit_ours(&s->hits[i], uuid) && r < *want &&
		    r < RC_MAX_MEMBERS && !held[r]) {
			held[r] = true;
			(*have)++;
		}
	}
}

/* Is there a hit of member m of ours newer than events? */
static bool newer_hit(const struct scan_set *s, const uint8_t *uuid,
		      const uint8_t *m, uint64_t events)
{
	for (int i = 0; i < s->n; i++)
		if (hit_ours(&s->hits[i], uuid) &&
		    !memcmp(s->hits[i].p.member_uuid, m, RC_UUID_SIZE) &&
		    s->hits[i].p.events > events)
			return true;
	return false;
}

/* Two devices, one member of ours, at equal events and none newer: which
 * one is live cannot be told.  Otherwise all go on to the assembly, which
 * leaves out those behind the newest as old copies (a backup image, a dd
 * copy made earlier; two alike refused here, beside the member: V1). */
static int set_ambiguity(const struct scan_set *s, const uint8_t *uuid,
			 char *err, size_t errlen)
{
	char u[37];

	for (int i = 0; i < s->n; i++)
		for (int j = i + 1; j < s->n; j++) {
			const struct scan_hit *a = &s->hits[i], *b = &s->hits[j];

			if (!hit_ours(a, uuid) || !hit_ours(b, uuid) ||
			    memcmp(a->p.member_uuid, b->p.member_uuid,
				   RC_UUID_SIZE) || a->p.events != b->p.events ||
			    newer_hit(s, uuid, a->p.member_uuid, a->p.events))
				continue;
			uuid_unparse(a->p.member_uuid, u);
			snprintf(err, errlen, "%s and %s both hold member %s "
				 "of the array (a copy? a loop device over a "
				 "scanned image?): name the members in a "
				 "configuration file", a->path, b->path, u);
			return -EINVAL;
		}
	return 0;
}

/* ---- the result --------------------------------------------------------- */

static int path_append(char ***list, int *n, const char *path)
{
	char **l = realloc(*list, (size_t)(*n + 1) * sizeof(*l));

	if (!l)
		return -ENOMEM;
	*list = l;
	l[*n] = strdup(path);
	if (!l[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* src's members, by slot, and spares: the devices of the set holding ours;
 * the others are named as left alone. */
static int set_to_source(const struct scan_set *s, const uint8_t *uuid,
			 struct config_source *src)
{
	char u[37];
	int ret = 0;

	for (uint32_t slot = 0; !ret && slot < RC_MAX_MEMBERS; slot++)
		for (int i = 0; !ret && i < s->n; i++)
			if (hit_ours(&s->hits[i], uuid) &&
			    s->hits[i].p.role == slot)
				ret = path_append(&src->members, &src->nmembers,
						  s->hits[i].path);
	for (int i = 0; !ret && i < s->n; i++) {
		const struct scan_hit *h = &s->hits[i];

		if (hit_ours(h, uuid) && h->p.role == ROLE_SPARE) {
			ret = path_append(&src->spares, &src->nspares, h->path);
		} else if (!hit_ours(h, uuid)) {
			uuid_unparse(h->p.array_uuid, u);
			rfs_log(LOG_INFO, "scan: %s holds array %s: left alone",
				h->path, u);
		}
	}
	return ret;
}

/* have: the slots held; the devices beyond them are old copies, which the
 * assembly leaves out (they were counted as members: "4 of 3", V1). */
static void scan_found_log(const struct config_source *src, uint32_t have,
			   uint32_t want)
{
	int copies = src->nmembers - (int)have;
	char u[37];

	uuid_unparse(src->uuid, u);
	rfs_log(LOG_INFO, "scan: array %s: %u of %u members found%s, %d "
		"spare%s%s", u, have, want, src->nscan ?
		" in the scan directories" : " among the block devices",
		src->nspares, src->nspares == 1 ? "" : "s",
		copies > 0 ? ", and older devices of members (left out)" : "");
}

/* ---- waiting ------------------------------------------------------------ */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Passes until every slot is held or o->degraded_wait_s is over; the last
 * pass stays in s.  *want as set_slots. */
static int passes_run(struct scan_set *s, const struct config_source *src,
		      const struct config_opts *o, bool scan, uint32_t *want)
{
	struct timespec nap = { 0, SCAN_POLL_MS * 1000000L };
	double start = now_s();
	uint8_t uuid[RC_UUID_SIZE];
	uint32_t have = 0;
	bool waited = false;
	char u[37] = "?";
	int ret;

	for (;;) {
		ret = set_pass(s, src, scan);
		*want = 0;
		if (!ret && set_uuid(s, src, uuid))
			set_slots(s, uuid, &have, want);
		if (ret || (*want && have == *want) ||
		    now_s() - start >= o->degraded_wait_s)
			break;
		if (!waited && set_uuid(s, src, uuid))
			uuid_unparse(uuid, u);
		if (!waited)
			rfs_log(LOG_NOTICE, "array %s: %u of %u members present; "
				"waiting up to %u s for the others "
				"(degraded_wait)", u, have, *want,
				o->degraded_wait_s);
		waited = true;
		nanosleep(&nap, NULL);
	}
	if (!ret && waited)
		rfs_log(*want && have == *want ? LOG_INFO : LOG_WARNING,
			"array %s: %u of %u members after %.1f s%s", u, have,
			*want, now_s() - start, *want && have == *want ? "" :
			": going on without the others");
	return ret;
}

int source_members_find(struct config_source *src,
			const struct config_opts *o, char *err, size_t errlen)
{
	bool scan = src->has_uuid && !src->nmembers;
	struct scan_set s = { 0 };
	uint32_t want = 0, have = 0;
	char u[37];
	int ret;

	if (!scan && !o->degraded_wait_s)
		return 0;
	ret = passes_run(&s, src, o, scan, &want);
	if (ret || !scan)
		goto out;
	ret = set_ambiguity(&s, src->uuid, err, errlen);
	if (!ret)
		ret = set_to_source(&s, src->uuid, src);
	if (!ret && !src->nmembers && !src->nspares) {
		uuid_unparse(src->uuid, u);
		snprintf(err, errlen, "no device holds array %s (scanned %s)",
			u, src->nscan ? "the scan directories" :
			"every block device");
		ret = -ENODEV;
	}
	if (!ret) {
		set_slots(&s, src->uuid, &have, &want);
		scan_found_log(src, have, want);
	}
out:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	set_clear(&s);
	return ret;
}
