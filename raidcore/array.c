/*
 * array: creating, assembling and closing arrays; superblocks and member
 * states.  See array.h for the lock order.
 *
 * Assembly trusts the newest superblock (highest events) among the members
 * of the chosen array for the slot table: a device whose slot is not active
 * there, or whose uuid is not in it, is stale and left out, even if its own
 * superblock claims otherwise.  Nothing is written before every check has
 * passed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>
#include "array.h"

static void (*rc_logger)(int level, const char *msg);

void rc_set_logger(void (*fn)(int level, const char *msg))
{
	rc_logger = fn;
}

void rc_log(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rc_logger)
		rc_logger(4, msg);
	else
		fprintf(stderr, "raidcore: %s\n", msg);
}

const char *rc_level_name(enum rc_level level)
{
	switch (level) {
	case RC_RAID0: return "raid0";
	case RC_RAID1: return "raid1";
	case RC_RAID4: return "raid4";
	case RC_RAID5: return "raid5";
	case RC_RAID6: return "raid6";
	case RC_RAID10: return "raid10";
	}
	return "unknown";
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool rc_member_usable(struct rc_array *a, int slot, uint64_t stripe)
{
	struct rc_member *m = &a->m[slot];

	if (!m->dev)
		return false;
	return m->state == RC_MEMBER_ACTIVE ||
	       (m->state == RC_MEMBER_REBUILDING && stripe < m->rebuild_pos);
}

/* Does some stripe lose more columns than it can rebuild, given which
 * slots are gone (gone[slot] true)? */
static bool geom_lost(const struct rc_geom *g, const bool *gone)
{
	struct rc_stripe_map map;
	uint64_t n = rc_geom_stripes(g);
	uint32_t red = rc_geom_redundancy(g), lost;

	n = n < 2ull * g->members ? n : 2ull * g->members;
	for (uint64_t s = 0; s < n; s++) {
		rc_geom_stripe(g, s, &map);
		lost = 0;
		for (uint32_t c = 0; c < map.ncols; c++)
			lost += gone[map.col[c].member];
		if (lost > red)
			return true;
	}
	return false;
}

bool rc_array_failed_beyond(struct rc_array *a)
{
	bool gone[RC_MAX_MEMBERS] = { false };

	for (uint32_t i = 0; i < a->g.members; i++)
		gone[i] = !a->m[i].dev || (a->m[i].state != RC_MEMBER_ACTIVE &&
					   a->m[i].state != RC_MEMBER_REBUILDING);
	return geom_lost(&a->g, gone);
}

bool rc_array_failed(struct rc_array *a)
{
	bool gone[RC_MAX_MEMBERS] = { false };

	for (uint32_t i = 0; i < a->g.members; i++)
		gone[i] = !a->m[i].dev || a->m[i].state != RC_MEMBER_ACTIVE;
	return geom_lost(&a->g, gone);
}

/* ---- superblocks --------------------------------------------------------- */

static void sb_for_member(const struct rc_array *a, int slot,
			  struct rc_sb *sb)
{
	*sb = a->sb;
	sb->role = (uint32_t)slot;
	memcpy(sb->member_uuid, a->m[slot].uuid, RC_UUID_SIZE);
	sb->journal_tail = a->m[slot].jtail;
	sb->device_blocks = a->m[slot].dev->size / RC_BLOCK_SIZE;
}

/* Both copies, one after the other, each flushed: a torn write leaves the
 * other copy whole. */
static int sb_write_dev(struct rc_dev *dev, struct rc_sb *sb, uint8_t *blk)
{
	int ret = 0;

	for (uint32_t c = 0; c < RC_SB_COPIES && ret == 0; c++) {
		sb->sb_copy = c;
		rc_sb_encode(sb, blk);
		ret = rc_dev_write(dev, blk, RC_BLOCK_SIZE,
				   (uint64_t)c * RC_BLOCK_SIZE);
		if (ret == 0)
			ret = rc_dev_sync(dev);
	}
	return ret;
}

static void slots_from_members(struct rc_array *a)
{
	for (uint32_t i = 0; i < a->g.members; i++) {
		memcpy(a->sb.slots[i].uuid, a->m[i].uuid, RC_UUID_SIZE);
		a->sb.slots[i].state = a->m[i].state;
		a->sb.slots[i].rebuild_pos = a->m[i].rebuild_pos;
	}
	for (int i = 0; i < a->nspares; i++) {
		memcpy(a->sb.slots[a->g.members + i].uuid,
		       a->spare_sb[i].member_uuid, RC_UUID_SIZE);
		a->sb.slots[a->g.members + i].state = RC_MEMBER_SPARE;
	}
	for (uint32_t i = a->g.members + (uint32_t)a->nspares; i < RC_SB_SLOTS; i++)
		memset(&a->sb.slots[i], 0, sizeof(a->sb.slots[i])),
		a->sb.slots[i].state = RC_MEMBER_EMPTY;
	a->sb.nspares = (uint32_t)a->nspares;
}

int rc_sb_write_all(struct rc_array *a)
{
	struct rc_sb *sb = malloc(sizeof(*sb));
	uint8_t *blk = malloc(RC_BLOCK_SIZE);
	bool again = true;
	int ret = 0;

	if (!sb || !blk) {
		ret = -ENOMEM;
		goto out;
	}
	if (a->rdonly)
		goto out;
	pthread_mutex_lock(&a->state_lock);
	while (again) {
		again = false;
		a->sb.events++;
		a->sb.utime_ns = now_ns();
		a->sb.journal_seq = a->jcheckpoint;
		slots_from_members(a);
		for (uint32_t i = 0; i < a->g.members && !again; i++) {
			if (!a->m[i].dev || (a->m[i].state != RC_MEMBER_ACTIVE &&
					     a->m[i].state != RC_MEMBER_REBUILDING))
				continue;
			sb_for_member(a, (int)i, sb);
			if (sb_write_dev(a->m[i].dev, sb, blk) < 0) {
				rc_log("%s: superblock write failed; marking it faulty",
				       a->m[i].dev->name);
				a->m[i].state = RC_MEMBER_FAULTY;
				again = true;
			}
		}
		for (int i = 0; i < a->nspares && !again; i++) {
			*sb = a->sb;
			sb->role = RC_ROLE_SPARE;
			memcpy(sb->member_uuid, a->spare_sb[i].member_uuid,
			       RC_UUID_SIZE);
			sb->journal_tail = 0;
			sb->device_blocks = a->spare[i]->size / RC_BLOCK_SIZE;
			sb_write_dev(a->spare[i], sb, blk);
		}
	}
	if (rc_array_failed(a))
		ret = -EIO;
	pthread_mutex_unlock(&a->state_lock);
out:
	free(sb);
	free(blk);
	return ret;
}

void rc_member_set_faulty(struct rc_array *a, int slot, const char *why)
{
	bool changed = false;

	pthread_mutex_lock(&a->state_lock);
	if (a->m[slot].state == RC_MEMBER_ACTIVE ||
	    a->m[slot].state == RC_MEMBER_REBUILDING) {
		a->m[slot].state = RC_MEMBER_FAULTY;
		changed = true;
	}
	pthread_mutex_unlock(&a->state_lock);
	if (!changed)
		return;
	rc_log("member %d (%s) is faulty: %s; the array goes on degraded",
	       slot, a->m[slot].dev ? a->m[slot].dev->name : "?", why);
	rc_sb_write_all(a);
	rc_recovery_kick(a);
}

int rc_member_fail(struct rc_array *a, int slot)
{
	if (slot < 0 || (uint32_t)slot >= a->g.members)
		return -EINVAL;
	if (a->rdonly)
		return -EROFS;
	rc_member_set_faulty(a, slot, "failed by request");
	return rc_array_failed(a) ? -EIO : 0;
}

/* Reads both copies and returns the valid one with the higher events. */
int rc_sb_read_best(struct rc_dev *dev, struct rc_sb *best,
			const char **why)
{
	uint8_t *blk = malloc(RC_BLOCK_SIZE);
	struct rc_sb *sb = malloc(sizeof(*sb));
	int ret = -ENODATA, r;
	bool found = false;

	if (!blk || !sb) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t c = 0; c < RC_SB_COPIES; c++) {
		if (dev->size < (uint64_t)(c + 1) * RC_BLOCK_SIZE ||
		    rc_dev_read(dev, blk, RC_BLOCK_SIZE,
				(uint64_t)c * RC_BLOCK_SIZE) < 0) {
			*why = "cannot read the superblock";
			ret = found ? 0 : -EIO;
			continue;
		}
		r = rc_sb_decode(blk, sb, why);
		if (r == 0 && (!found || sb->events > best->events)) {
			*best = *sb;
			found = true;
		}
		if (!found && r != -ENODATA && (ret == -ENODATA || r ==
						-EPROTONOSUPPORT))
			ret = r;
	}
	if (found)
		ret = 0;
out:
	free(blk);
	free(sb);
	return ret;
}

/* ---- creation ------------------------------------------------------------ */

static int check_distinct(struct rc_dev **devs, int n, char *err, size_t len)
{
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < i; j++) {
			bool same = devs[i]->rdev ? devs[i]->rdev == devs[j]->rdev :
				    devs[i]->st_dev == devs[j]->st_dev &&
				    devs[i]->ino == devs[j]->ino &&
				    devs[i]->ino != 0;

			if (same) {
				snprintf(err, len, "%s and %s are the same device",
					 devs[j]->name, devs[i]->name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int zero_range(struct rc_dev *dev, uint64_t block, uint64_t count)
{
	return rc_dev_zero(dev, block * RC_BLOCK_SIZE, count * RC_BLOCK_SIZE);
}

static int create_check(const struct rc_create_params *p, struct rc_dev **devs,
			int n, struct rc_sb *sb, char *err, size_t len)
{
	int members = n - p->nspares;
	uint64_t min_blocks = UINT64_MAX;
	const char *why = NULL;
	struct rc_geom g;
	int ret;

	if (p->nspares < 0 || p->nspares > RC_MAX_SPARES || members < 1) {
		snprintf(err, len, "bad number of spares");
		return -EINVAL;
	}
	for (int i = 0; i < n; i++)
		min_blocks = devs[i]->size / RC_BLOCK_SIZE < min_blocks ?
			     devs[i]->size / RC_BLOCK_SIZE : min_blocks;
	ret = check_distinct(devs, n, err, len);
	if (ret < 0)
		return ret;
	memset(sb, 0, sizeof(*sb));
	sb->chunk_blocks = p->chunk_bytes / RC_BLOCK_SIZE;
	if (p->chunk_bytes % RC_BLOCK_SIZE || !sb->chunk_blocks) {
		snprintf(err, len, "chunk size %u is not a multiple of 4 KiB",
			 p->chunk_bytes);
		return -EINVAL;
	}
	/* Level, member count and chunk first, on a one-chunk member. */
	g = (struct rc_geom){ .level = p->level,
		.layout = rc_geom_default_layout(p->level),
		.members = (uint32_t)members, .chunk_blocks = sb->chunk_blocks,
		.member_blocks = sb->chunk_blocks };
	if (rc_geom_validate(&g, &why) < 0) {
		snprintf(err, len, "%s", why);
		return -EINVAL;
	}
	sb->journal_blocks = p->journal_blocks;
	if (!sb->journal_blocks) {
		uint64_t j = min_blocks / 64;

		j = j < RC_MIN_JOURNAL_BLOCKS ? RC_MIN_JOURNAL_BLOCKS : j;
		sb->journal_blocks = j > RC_MAX_JOURNAL_BLOCKS ?
				     RC_MAX_JOURNAL_BLOCKS : j;
	}
	if (sb->journal_blocks < 4ull * (sb->chunk_blocks + 8))
		sb->journal_blocks = 4ull * (sb->chunk_blocks + 8);
	if (rc_layout_member(sb, min_blocks) < 0) {
		snprintf(err, len, "members are too small (%llu KiB) for this "
			 "chunk size", (unsigned long long)min_blocks * 4);
		return -ENOSPC;
	}
	g = (struct rc_geom){ .level = p->level,
		.layout = rc_geom_default_layout(p->level),
		.members = (uint32_t)members, .chunk_blocks = sb->chunk_blocks,
		.member_blocks = sb->member_blocks };
	if (rc_geom_validate(&g, &why) < 0) {
		snprintf(err, len, "%s", why);
		return -EINVAL;
	}
	sb->level = p->level;
	sb->layout = g.layout;
	sb->members = (uint32_t)members;
	sb->nspares = (uint32_t)p->nspares;
	sb->array_blocks = rc_geom_capacity(&g);
	return 0;
}

int rc_array_create_err(const struct rc_create_params *p, struct rc_dev **devs,
			int n, char *err, size_t len)
{
	struct rc_sb *sb = calloc(1, sizeof(*sb));
	uint8_t *blk = malloc(RC_BLOCK_SIZE);
	int ret, members = n - p->nspares;

	if (!sb || !blk) {
		ret = -ENOMEM;
		goto out;
	}
	ret = create_check(p, devs, n, sb, err, len);
	if (ret < 0)
		goto out;
	sb->version_major = RC_SB_VERSION_MAJOR;
	sb->version_minor = RC_SB_VERSION_MINOR;
	memcpy(sb->array_uuid, p->array_uuid, RC_UUID_SIZE);
	if (uuid_is_null(sb->array_uuid))
		uuid_generate(sb->array_uuid);
	snprintf(sb->label, sizeof(sb->label), "%s", p->label);
	sb->ctime_ns = sb->utime_ns = now_ns();
	sb->events = 1;
	sb->array_state = RC_STATE_CLEAN;
	for (int i = 0; i < RC_SB_SLOTS; i++)
		sb->slots[i].state = RC_MEMBER_EMPTY;
	for (int i = 0; i < n; i++) {
		uuid_generate(sb->slots[i].uuid);
		sb->slots[i].state = i < members ? RC_MEMBER_ACTIVE :
				     RC_MEMBER_SPARE;
	}
	/* Checksum tables first: an interrupted create leaves no superblock. */
	for (int i = 0; i < n && ret == 0; i++) {
		ret = zero_range(devs[i], 0, 2);
		if (ret == 0)
			ret = zero_range(devs[i], sb->csum_offset, sb->csum_blocks);
		if (ret == 0)
			ret = rc_dev_sync(devs[i]);
		if (ret < 0)
			snprintf(err, len, "%s: %s", devs[i]->name, strerror(-ret));
	}
	for (int i = 0; i < n && ret == 0; i++) {
		sb->role = i < members ? (uint32_t)i : RC_ROLE_SPARE;
		memcpy(sb->member_uuid, sb->slots[i].uuid, RC_UUID_SIZE);
		sb->device_blocks = devs[i]->size / RC_BLOCK_SIZE;
		ret = sb_write_dev(devs[i], sb, blk);
		if (ret < 0)
			snprintf(err, len, "%s: %s", devs[i]->name, strerror(-ret));
	}
out:
	free(sb);
	free(blk);
	return ret;
}

int rc_array_create(const struct rc_create_params *p, struct rc_dev **devs,
		    int n)
{
	char err[256];
	int ret = rc_array_create_err(p, devs, n, err, sizeof(err));

	if (ret < 0)
		rc_log("create: %s", err);
	return ret;
}

/* Which superblock copies decode cleanly on their own. */
static uint8_t sb_copies_ok(struct rc_dev *dev)
{
	uint8_t *blk = malloc(RC_BLOCK_SIZE), ok = 0;
	struct rc_sb *sb = malloc(sizeof(*sb));
	const char *why;

	for (uint32_t c = 0; blk && sb && c < RC_SB_COPIES; c++)
		if (rc_dev_read(dev, blk, RC_BLOCK_SIZE,
				(uint64_t)c * RC_BLOCK_SIZE) == 0 &&
		    rc_sb_decode(blk, sb, &why) == 0)
			ok |= (uint8_t)(1u << c);
	free(blk);
	free(sb);
	return ok;
}

int rc_member_probe(struct rc_dev *dev, struct rc_probe *p)
{
	struct rc_sb *sb = malloc(sizeof(*sb));
	const char *why = NULL;
	int ret;

	if (!sb)
		return -ENOMEM;
	ret = rc_sb_read_best(dev, sb, &why);
	if (ret == 0) {
		memset(p, 0, sizeof(*p));
		memcpy(p->array_uuid, sb->array_uuid, RC_UUID_SIZE);
		memcpy(p->member_uuid, sb->member_uuid, RC_UUID_SIZE);
		p->role = sb->role;
		p->level = sb->level;
		p->members = sb->members;
		p->spares = sb->nspares;
		p->chunk_blocks = sb->chunk_blocks;
		p->events = sb->events;
		p->array_blocks = sb->array_blocks;
		p->clean = sb->array_state == RC_STATE_CLEAN;
		memcpy(p->label, sb->label, RC_LABEL_MAX);
		p->copies_ok = sb_copies_ok(dev);
	}
	free(sb);
	return ret;
}
