/*
 * probe: what a device's superblock says, without assembling anything
 * (rc_member_probe: mkfs's signature check, fsck's member listing).
 * Reads only, straight from the device: there is no array.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

int rc_member_probe(struct rc_dev *dev, struct rc_probe *p)
{
	struct rc_sb *sb = malloc(sizeof(*sb));
	struct rc_sb_damage dmg;
	const char *why = NULL;
	int ret;

	if (!sb)
		return -ENOMEM;
	/* Which copies decode cleanly on their own, in their place, and say
	 * the same as the best one; which are one update behind it. */
	ret = rc_sb_read_copies(dev, sb, &why, &dmg);
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
		p->copies_ok = (uint8_t)(~(dmg.eio | dmg.bad | dmg.old |
					   dmg.torn) & 0xf);
		p->copies_torn = dmg.torn;
		p->errors = sb->array_flags & RC_AF_ERRORS;
		p->err_read = sb->err_read;
		p->err_write = sb->err_write;
		p->err_csum = sb->err_csum;
		p->device_blocks_min = rc_sb_device_blocks_min(sb);
	}
	free(sb);
	return ret;
}
