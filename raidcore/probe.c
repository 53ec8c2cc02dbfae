/*
 * probe: what a device's superblock says, without assembling anything
 * (rc_member_probe: mkfs's signature check, fsck's member listing).
 * Reads only, straight from the device: there is no array.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

/* Which superblock copies decode cleanly on their own, in their place,
 * and say the same as the best one (same events). */
static uint8_t sb_copies_ok(struct rc_dev *dev, uint64_t events)
{
	uint8_t *blk = malloc(RC_BLOCK_SIZE), ok = 0;
	struct rc_sb *sb = malloc(sizeof(*sb));
	uint64_t dev_blocks = dev->size / RC_BLOCK_SIZE;
	const char *why;

	for (uint32_t c = 0; blk && sb && c < RC_SB_COPIES &&
	     dev_blocks >= RC_SB_COPIES; c++)
		if (rc_dev_read(dev, blk, RC_BLOCK_SIZE,
				rc_sb_copy_block(c, dev_blocks) *
				RC_BLOCK_SIZE) == 0 &&
		    rc_sb_decode(blk, sb, &why) == 0 && sb->sb_copy == c &&
		    sb->events == events)
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
		p->copies_ok = sb_copies_ok(dev, sb->events);
		p->errors = sb->array_flags & RC_AF_ERRORS;
		p->err_read = sb->err_read;
		p->err_write = sb->err_write;
		p->err_csum = sb->err_csum;
		p->device_blocks_min = rc_sb_device_blocks_min(sb);
	}
	free(sb);
	return ret;
}
