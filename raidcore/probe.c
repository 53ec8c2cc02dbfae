/*
 * probe: what a device's superblock says, without assembling anything
 * (rc_member_probe: mkfs's signature check, fsck's member listing).
 * Reads only, straight from the device: there is no array.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

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
