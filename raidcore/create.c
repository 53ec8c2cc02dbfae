/*
 * create: formatting devices as a new array (rc_array_create).
 *
 * Everything is checked before anything is written: distinct devices, a
 * level, member count and chunk size raidcore can lay out, members large
 * enough.  Then the checksum tables and superblock areas of every device
 * are zeroed and flushed, and only then the superblocks written, so an
 * interrupted create leaves no superblock behind.
 *
 * There is no array yet, so this is the one writer that goes to the
 * devices directly (rc_dev_*) rather than through io.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>
#include "array.h"

static int check_distinct(struct rc_dev **devs, int n, char *err, size_t len)
{
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < i; j++) {
			if (rc_dev_same(devs[i], devs[j])) {
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

/* rc_sb_put_copies' put: one block straight to the device. */
static int create_put(void *ctx, uint64_t block, const void *blk, bool sync)
{
	struct rc_dev *dev = ctx;
	int ret = rc_dev_write(dev, blk, RC_BLOCK_SIZE, block * RC_BLOCK_SIZE);

	return ret || !sync ? ret : rc_dev_sync(dev);
}

/* rc_csum_tables_format's put: a run of table blocks to the device. */
static int create_tables_put(void *ctx, uint64_t block, uint32_t n,
			     const void *buf)
{
	return rc_dev_write(ctx, buf, (size_t)n * RC_BLOCK_SIZE,
			    block * RC_BLOCK_SIZE);
}

/* The geometry p asks for, on members of member_blocks data blocks. */
static int create_geom(const struct rc_create_params *p, int members,
		       uint32_t chunk_blocks, uint64_t member_blocks,
		       struct rc_geom *g, char *err, size_t len)
{
	const char *why = NULL;

	*g = (struct rc_geom){ .level = p->level,
		.layout = rc_geom_default_layout(p->level),
		.members = (uint32_t)members, .chunk_blocks = chunk_blocks,
		.member_blocks = member_blocks };
	if (rc_geom_validate(g, &why) < 0) {
		snprintf(err, len, "%s", why);
		return -EINVAL;
	}
	return 0;
}

static int create_check(const struct rc_create_params *p, struct rc_dev **devs,
			int n, struct rc_sb *sb, char *err, size_t len)
{
	int members = n - p->nspares;
	uint64_t min_blocks = UINT64_MAX;
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
	ret = create_geom(p, members, sb->chunk_blocks, sb->chunk_blocks, &g,
			  err, len);
	if (ret < 0)
		return ret;
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
	ret = create_geom(p, members, sb->chunk_blocks, sb->member_blocks, &g,
			  err, len);
	if (ret < 0)
		return ret;
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
	sb->ctime_ns = sb->utime_ns = rc_time_ns();
	sb->events = 1;
	sb->array_state = RC_STATE_CLEAN;
	for (int i = 0; i < RC_SB_SLOTS; i++)
		sb->slots[i].state = RC_MEMBER_EMPTY;
	for (int i = 0; i < n; i++) {
		uuid_generate(sb->slots[i].uuid);
		sb->slots[i].state = i < members ? RC_MEMBER_ACTIVE :
				     RC_MEMBER_SPARE;
	}
	/* Checksum tables first, sealed with each member's identity ("nothing
	 * written yet"): an interrupted create leaves no superblock. */
	for (int i = 0; i < n && ret == 0; i++) {
		uint64_t dev_blocks = devs[i]->size / RC_BLOCK_SIZE;

		ret = zero_range(devs[i], 0, RC_SB_HEAD_COPIES);
		if (ret == 0)
			ret = zero_range(devs[i], dev_blocks - RC_SB_TAIL_BLOCKS,
					 RC_SB_TAIL_BLOCKS);
		if (ret == 0)
			ret = rc_csum_tables_format(
				rc_table_seed(sb->array_uuid, sb->slots[i].uuid),
				sb->csum_offset, sb->csum_blocks,
				create_tables_put, devs[i]);
		if (ret == 0)
			ret = rc_dev_sync(devs[i]);
		if (ret < 0)
			snprintf(err, len, "%s: %s", devs[i]->name, strerror(-ret));
	}
	for (int i = 0; i < n && ret == 0; i++) {
		sb->role = i < members ? (uint32_t)i : RC_ROLE_SPARE;
		memcpy(sb->member_uuid, sb->slots[i].uuid, RC_UUID_SIZE);
		sb->device_blocks = devs[i]->size / RC_BLOCK_SIZE;
		ret = rc_sb_put_copies(sb, blk, create_put, devs[i]);
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
