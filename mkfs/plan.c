/*
 * plan: what the array will be, found by creating it on stand-ins.
 *
 * raidcore owns the member layout (journal, checksum tables, data offset)
 * and every rule about levels, member counts and chunk sizes.  Rather than
 * duplicate that arithmetic, mkfs runs rc_array_create on stand-in devices
 * (rc_dev_mem_create_like: sparse memory devices with the members' sizes
 * and identities, which keep only the non-zero blocks written to them: the
 * superblocks, as create zeroes the rest),
 * then reads the capacity back with rc_member_probe.  So -n and the
 * validation before a real run give exactly the answer the real create will,
 * and nothing touches a member.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "fs.h"
#include "mkfs.h"

#define PLAN_SEARCH_MAX_BLOCKS (1ull << 40)   /* 4 PiB: beyond is absurd */
/*
 * Arrays up to this many blocks also get a trial fs_format on the stand-ins:
 * whether the filesystem fits is decided by fs's private layout code, and
 * only a tiny array can be too small for it (its metadata is a few percent
 * of the device at most).  Larger trials would cost memory for nothing.
 */
#define PLAN_FS_TRIAL_BLOCKS 65536ull         /* 256 MiB */

/*
 * Assembles the stand-ins (the array takes them over) and formats the
 * filesystem on them: -ENOSPC when it does not fit.
 */
static int plan_fs_try(struct rc_dev **devs, int n, uint64_t blocks,
		       char *err, size_t errlen)
{
	struct fs_format_params fp = { .label = "" };
	struct fs_bdev *bdev = NULL;
	struct rc_array *a = NULL;
	int ret = rc_array_assemble(devs, n, 0, &a, err, errlen);

	if (ret < 0)
		return ret;
	for (int i = 0; i < n; i++)
		devs[i] = NULL;
	ret = fs_bdev_from_array(a, &bdev);
	if (ret == 0)
		ret = fs_format(bdev, &fp);
	fs_bdev_close(bdev);
	rc_array_close(a);
	if (ret == -ENOSPC || ret == -EINVAL) {
		snprintf(err, errlen, "the array would hold %llu KiB, too "
			 "little for the filesystem",
			 (unsigned long long)blocks * 4);
		ret = -ENOSPC;
	} else if (ret < 0) {
		snprintf(err, errlen, "a trial format failed: %s",
			 strerror(-ret));
	}
	return ret;
}

/*
 * rc_array_create on stand-ins of m's devices, each `size` bytes long
 * (0: its own size).  On success *blocks is the array's capacity.
 */
static int plan_try(const struct mkfs_opts *o, const struct mkfs_member *m,
		    uint64_t size, uint64_t *blocks, char *err, size_t errlen)
{
	struct rc_dev *devs[RC_MAX_MEMBERS + RC_MAX_SPARES] = { NULL };
	struct rc_create_params p = {
		.level = o->level, .chunk_bytes = o->chunk_bytes,
		.nspares = o->nspares,
	};
	struct rc_probe probe;
	int ret = -ENOMEM;

	memcpy(p.array_uuid, o->uuid, RC_UUID_SIZE);
	memcpy(p.label, o->label, sizeof(p.label));
	snprintf(err, errlen, "out of memory");
	for (int i = 0; i < o->ndevs; i++) {
		ret = rc_dev_mem_create_like(m[i].dev, size ? size : m[i].size,
					     &devs[i]);
		if (ret < 0)
			goto out;
	}
	err[0] = '\0';
	ret = rc_array_create_err(&p, devs, o->ndevs, err, errlen);
	if (ret == 0)
		ret = rc_member_probe(devs[0], &probe);
	if (ret == 0 && probe.array_blocks <= PLAN_FS_TRIAL_BLOCKS)
		ret = plan_fs_try(devs, o->ndevs, probe.array_blocks, err,
				  errlen);
	if (ret == 0)
		*blocks = probe.array_blocks;
	else if (!err[0])
		snprintf(err, errlen, "%s", strerror(-ret));
out:
	for (int i = 0; i < o->ndevs; i++)
		rc_dev_close(devs[i]);
	return ret;
}

/* The smallest member size (bytes) raidcore accepts, or 0 if none does. */
static uint64_t plan_min_size(const struct mkfs_opts *o,
			      const struct mkfs_member *m, uint64_t above)
{
	uint64_t lo = above / RC_BLOCK_SIZE, hi = lo ? lo * 2 : 1, blocks;
	char err[256];

	while (plan_try(o, m, hi * RC_BLOCK_SIZE, &blocks, err,
			sizeof(err)) == -ENOSPC) {
		if (hi >= PLAN_SEARCH_MAX_BLOCKS)
			return 0;
		lo = hi;
		hi *= 2;
	}
	/* Invariant: lo blocks are too small, hi blocks are enough. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (plan_try(o, m, mid * RC_BLOCK_SIZE, &blocks, err,
			     sizeof(err)) == -ENOSPC)
			lo = mid;
		else
			hi = mid;
	}
	return hi * RC_BLOCK_SIZE;
}

static void plan_too_small(const struct mkfs_opts *o,
			   const struct mkfs_member *m,
			   const struct mkfs_plan *plan)
{
	uint64_t need = plan_min_size(o, m, plan->smallest);
	char have[32], want[32];

	mkfs_size_human(need, want, sizeof(want));
	for (int i = 0; i < o->ndevs; i++) {
		if (m[i].size >= need && i != plan->smallest_idx)
			continue;
		mkfs_size_human(m[i].size, have, sizeof(have));
		mkfs_err("%s is too small (%s): a %s array with %u KiB chunks "
			 "needs at least %s on every member and spare",
			 m[i].path, have, rc_level_name(o->level),
			 o->chunk_bytes >> 10, need ? want : "(none fits)");
	}
}

/* Every member must be open.  Reports what is wrong and returns < 0. */
int mkfs_plan_make(const struct mkfs_opts *o, const struct mkfs_member *m,
		   struct mkfs_plan *plan)
{
	char err[256] = "";
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->smallest = UINT64_MAX;
	for (int i = 0; i < o->ndevs; i++) {
		if (m[i].size < plan->smallest) {
			plan->smallest = m[i].size;
			plan->smallest_idx = i;
		}
	}
	ret = plan_try(o, m, 0, &plan->array_blocks, err, sizeof(err));
	if (ret == -ENOSPC) {
		mkfs_err("%s", err);
		plan_too_small(o, m, plan);
	}
	else if (ret < 0 && strstr(err, "members"))
		mkfs_err("%s; %d given%s", err, o->ndevs - o->nspares,
			 o->nspares ? " (spares do not count)" : "");
	else if (ret < 0)
		mkfs_err("%s", err);
	return ret;
}
