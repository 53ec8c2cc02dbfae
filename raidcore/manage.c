/*
 * manage: what an administrator does to the slots of a running array, as
 * mdadm's Manage.c does for md - fail a member (rc_member_fail; with
 * rc_member_fail_redundant only when the data does not need it), remove a
 * faulty member or a spare
 * (rc_member_remove), add a spare (rc_spare_add), take a former member
 * back (rc_member_readd: a catch-up, wi.c), replace a member online
 * (rc_member_replace_online: md's --replace).  The recovery thread
 * (recovery.c) then does the rest: a spare added while a slot is not
 * active is rebuilt into it at once, a member taken back catches up, a
 * replacement is filled (replace.c).
 *
 * Each is a first write (activate.c).  Slots and the spare list change
 * under commit_lock and state_lock, as rebuild.c's replace_begin changes
 * them; the superblocks are rewritten after, and the change is signalled
 * (rc_member_state_changed) so the recovery thread looks again.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <uuid/uuid.h>
#include "array.h"

/* What every call here checks first: slot below nslots, the array
 * writable, activated (the first write). */
static int manage_begin(struct rc_array *a, int slot, uint32_t nslots)
{
	if (slot < 0 || (uint32_t)slot >= nslots)
		return -EINVAL;
	if (a->rdonly)
		return -EROFS;
	return rc_array_activate(a);
}

int rc_member_fail(struct rc_array *a, int slot)
{
	int ret = manage_begin(a, slot, a->g.members);

	if (ret < 0)
		return ret;
	rc_member_set_failed(a, slot, "failed by request");
	return rc_array_failed(a) ? -EIO : 0;
}

int rc_member_fail_redundant(struct rc_array *a, int slot)
{
	bool present, needed, unverified;

	if (slot < 0 || (uint32_t)slot >= a->g.members)
		return -EINVAL;
	if (a->rdonly)
		return -EROFS;
	pthread_mutex_lock(&a->state_lock);
	present = rc_member_present(a, slot);
	needed = rc_array_needs(a, slot);
	unverified = rc_array_needs_unverified(a, slot);
	pthread_mutex_unlock(&a->state_lock);
	if (!present)
		return -EALREADY;
	if (needed)
		return -EBUSY;
	/* a member found damaged may need slot to repair what it lost */
	if (unverified)
		return -EINPROGRESS;
	return rc_member_fail(a, slot);
}

/* Caller holds commit_lock, slots_lock and state_lock: slot's faulty
 * device goes. */
static int slot_clear(struct rc_array *a, int slot, struct rc_dev **closing)
{
	struct rc_member *m = &a->m[slot];

	if (rc_member_present(a, slot))
		return -EBUSY;
	if (!m->dev)
		return -EALREADY;
	*closing = m->dev;
	__atomic_store_n(&m->dev, NULL, __ATOMIC_SEQ_CST);
	m->state = RC_MEMBER_MISSING;
	m->removed = true;
	return 0;
}

/* Caller holds commit_lock and state_lock: spare i goes. */
static int spare_clear(struct rc_array *a, int i, struct rc_dev **closing)
{
	if (i >= a->nspares)
		return -EINVAL;
	for (uint32_t s = 0; s < a->g.members; s++)
		if (!rc_member_present(a, (int)s) ||
		    a->m[s].state == RC_MEMBER_REBUILDING)
			return -EBUSY;
	*closing = a->spare[i];
	a->spare[i] = a->spare[a->nspares - 1];
	a->spare_sb[i] = a->spare_sb[a->nspares - 1];
	a->nspares--;
	return 0;
}

int rc_member_remove(struct rc_array *a, int slot)
{
	struct rc_dev *closing = NULL;
	char name[256];
	int ret = manage_begin(a, slot, a->g.members + RC_MAX_SPARES);

	if (ret < 0)
		return ret;
	rc_commit_lock(a);
	rc_slots_wrlock(a);
	pthread_mutex_lock(&a->state_lock);
	if ((uint32_t)slot < a->g.members)
		ret = slot_clear(a, slot, &closing);
	else
		ret = spare_clear(a, slot - (int)a->g.members, &closing);
	pthread_mutex_unlock(&a->state_lock);
	rc_slots_unlock(a);
	if (ret == 0)
		ret = rc_sb_write_all(a);
	pthread_mutex_unlock(&a->commit_lock);
	if (!closing)
		return ret;
	snprintf(name, sizeof(name), "%s", closing->name);
	if ((uint32_t)slot < a->g.members)
		rc_member_dev_retire(a, slot, closing);
	else
		rc_dev_close(closing);  /* spares: I/O only under state_lock */
	rc_log("%s %s removed", (uint32_t)slot < a->g.members ? "member" :
	       "spare", name);
	rc_event_emit(a, RC_EV_REMOVED, (uint32_t)slot < a->g.members ?
		      slot : -1, name, NULL, 0, 0, 0);
	rc_member_state_changed(a);
	return ret;
}

/* The same file or device as one the array holds (a loop device over one
 * of its image files included)? */
static bool dev_is_ours(struct rc_array *a, const struct rc_dev *dev)
{
	const struct rc_dev *o;

	for (int i = 0; i <= (int)a->g.members + a->nspares; i++) {
		o = i < (int)a->g.members ? a->m[i].dev :
		    i < (int)a->g.members + a->nspares ?
		    a->spare[i - (int)a->g.members] : a->repl.dst;
		if (o && rc_dev_same(dev, o))
			return true;
	}
	return false;
}

int rc_array_holds_member(struct rc_array *a, const uint8_t *uuid)
{
	int ret = -1;

	pthread_mutex_lock(&a->state_lock);
	for (uint32_t s = 0; s < a->g.members && ret < 0; s++)
		if (a->m[s].dev && (a->m[s].state == RC_MEMBER_ACTIVE ||
				    a->m[s].state == RC_MEMBER_REBUILDING) &&
		    !memcmp(a->m[s].uuid, uuid, RC_UUID_SIZE))
			ret = (int)s;
	for (int i = 0; i < a->nspares && ret < 0; i++)
		if (!memcmp(a->spare_sb[i].member_uuid, uuid, RC_UUID_SIZE))
			ret = RC_MAX_MEMBERS;
	if (ret < 0 && a->repl.dst &&
	    !memcmp(a->repl.uuid, uuid, RC_UUID_SIZE))
		ret = RC_MAX_MEMBERS;
	pthread_mutex_unlock(&a->state_lock);
	return ret;
}

/* One more spare entry fits (the replacement's counts as one). */
static bool slot_table_has_room(const struct rc_array *a)
{
	uint32_t used = a->g.members + (uint32_t)a->nspares + (a->repl.dst != NULL);

	return a->nspares + (a->repl.dst != NULL) < RC_MAX_SPARES &&
	       used < RC_SB_SLOTS;
}

/* Caller holds commit_lock and state_lock. */
static int spare_append(struct rc_array *a, struct rc_dev *dev)
{
	struct rc_sb *sb;

	if (dev_is_ours(a, dev))
		return -EEXIST;
	if (!slot_table_has_room(a))
		return -EMLINK;
	sb = &a->spare_sb[a->nspares];
	*sb = a->sb;
	sb->role = RC_ROLE_SPARE;
	/* a new device: no errors of its own (the template's are a
	 * member's, and go with the device into a slot: rebuild.c) */
	sb->err_read = sb->err_write = sb->err_csum = sb->repaired = 0;
	uuid_generate(sb->member_uuid);
	a->spare[a->nspares++] = dev;
	return 0;
}

int rc_spare_add(struct rc_array *a, struct rc_dev *dev)
{
	int ret = -EROFS;

	if (a->rdonly)
		goto out_close;
	ret = -ENOSPC;
	if (dev->size / RC_BLOCK_SIZE < rc_sb_device_blocks_min(&a->sb))
		goto out_close;
	ret = rc_array_activate(a);
	if (ret < 0)
		goto out_close;
	rc_commit_lock(a);
	pthread_mutex_lock(&a->state_lock);
	ret = spare_append(a, dev);
	pthread_mutex_unlock(&a->state_lock);
	if (ret == 0)
		ret = rc_sb_write_all(a);
	pthread_mutex_unlock(&a->commit_lock);
	if (ret == -EEXIST || ret == -EMLINK)
		goto out_close;
	rc_log("%s added as a spare", dev->name);
	rc_event_emit(a, RC_EV_SPARE_ADDED, -1, dev->name, NULL, 0, 0, ret);
	rc_member_state_changed(a);
	return ret;
out_close:
	rc_dev_close(dev);
	return ret;
}

/* Caller holds state_lock: the slot dev's superblock sb names, when dev
 * may take it back as a catch-up; else -1.  Not a device that left in
 * the middle of a full rebuild onto it (failed by request, or a mount
 * made without it): its catch-up said the slot in sync with most of it
 * never written, and the next member lost took files (a tester's find,
 * W3; the assembly already knew, cand_unsynced). */
static int readd_slot(struct rc_array *a, const struct rc_sb *sb)
{
	int slot = (int)sb->role;

	if (sb->role >= a->g.members ||
	    memcmp(a->m[slot].uuid, sb->member_uuid, RC_UUID_SIZE) ||
	    (a->m[slot].state != RC_MEMBER_MISSING &&
	     a->m[slot].state != RC_MEMBER_FAULTY) ||
	    a->m[slot].damaged || rc_sb_rebuild_unfinished(sb) ||
	    !rc_wi_covers(a, sb))
		return -1;
	return slot;
}

/* Before the locks (it reads): may dev, whose superblock is sb, catch up
 * as far as its checksum tables tell (rc_wi_tables_whole)?  Only asked
 * of a device readd_slot may take; true of any other, which readd_slot
 * turns away itself. */
static bool readd_tables_whole(struct rc_array *a, struct rc_dev *dev,
			       const struct rc_sb *sb)
{
	bool ask;

	pthread_mutex_lock(&a->state_lock);
	ask = readd_slot(a, sb) >= 0;
	pthread_mutex_unlock(&a->state_lock);
	return !ask || rc_wi_tables_whole(a, (int)sb->role, dev, sb);
}

int rc_member_readd(struct rc_array *a, struct rc_dev *dev)
{
	struct rc_dev *old = NULL;
	const char *why = NULL;
	struct rc_sb sb;
	int slot, ret;

	if (a->rdonly)
		return -EROFS;
	ret = rc_sb_read_best(dev, &sb, &why);
	if (ret < 0 || !readd_tables_whole(a, dev, &sb))
		return -ENOENT;
	ret = rc_array_activate(a);
	if (ret < 0)
		return ret;
	rc_commit_lock(a);
	rc_slots_wrlock(a);
	pthread_mutex_lock(&a->state_lock);
	slot = readd_slot(a, &sb);
	if (slot >= 0) {
		old = a->m[slot].dev;       /* the faulty handle, if any */
		rc_member_catchup_begin(a, slot, dev, &sb);
	}
	pthread_mutex_unlock(&a->state_lock);
	if (slot >= 0)
		rc_csum_drop_slot(a, slot);
	rc_slots_unlock(a);
	/* Its superblocks say so from now on (a failure here faults it, and
	 * the catch-up does not start). */
	if (slot >= 0)
		rc_journal_checkpoint(a, false);
	pthread_mutex_unlock(&a->commit_lock);
	if (slot < 0)
		return -ENOENT;
	if (old && old != dev)
		rc_member_dev_retire(a, slot, old);
	rc_member_state_changed(a);
	return slot;
}

/* Caller holds commit_lock and state_lock: dev becomes slot's replacement
 * target, its copy not begun. */
static int repl_set(struct rc_array *a, int slot, struct rc_dev *dev,
		    char *old, size_t len)
{
	struct rc_member *m = &a->m[slot];

	if (a->repl.dst)
		return -EBUSY;
	if (!m->dev || m->state != RC_MEMBER_ACTIVE)
		return -ENXIO;
	if (dev_is_ours(a, dev))
		return -EEXIST;
	if (!slot_table_has_room(a))
		return -EMLINK;
	snprintf(old, len, "%s", m->dev->name);
	a->repl.src = m->dev;
	a->repl.slot = slot;
	uuid_generate(a->repl.uuid);
	atomic_store(&a->repl.pos, 0);
	atomic_store(&a->repl.failed, false);
	atomic_store(&a->repl.cancel, false);
	memset(&a->repl.sample, 0, sizeof(a->repl.sample));
	atomic_store(&a->repl.announced, true);
	__atomic_store_n(&a->repl.dst, dev, __ATOMIC_SEQ_CST);
	return 0;
}

int rc_spare_replace_kept(struct rc_array *a)
{
	struct rc_dev *dev = NULL;
	char old[256] = "";
	int slot = -1, ret;

	for (uint32_t s = 0; s < a->g.members && slot < 0; s++)
		if (atomic_load(&a->m[s].kept_for_redundancy))
			slot = (int)s;
	if (slot < 0 || !a->nspares)
		return -ENOENT;
	ret = manage_begin(a, slot, a->g.members);
	if (ret < 0)
		return ret;
	rc_commit_lock(a);
	pthread_mutex_lock(&a->state_lock);
	ret = a->nspares ? 0 : -ENOENT;
	if (ret == 0) {
		/* out of the spare list first (repl_set refuses a device the
		 * array holds); back at its end if refused */
		struct rc_sb dsb = a->spare_sb[0];

		dev = a->spare[0];
		a->spare[0] = a->spare[a->nspares - 1];
		a->spare_sb[0] = a->spare_sb[a->nspares - 1];
		a->nspares--;
		ret = repl_set(a, slot, dev, old, sizeof(old));
		if (ret) {
			a->spare_sb[a->nspares] = dsb;
			a->spare[a->nspares++] = dev;
		}
	}
	pthread_mutex_unlock(&a->state_lock);
	if (ret == 0)
		ret = rc_sb_write_all(a);
	pthread_mutex_unlock(&a->commit_lock);
	if (ret == -ENOENT || ret == -EBUSY || ret == -ENXIO ||
	    ret == -EEXIST || ret == -EMLINK)
		return ret;
	rc_log("%s: a spare replaces slot %d (%s), kept despite its errors; "
	       "it serves meanwhile, its good blocks are copied", dev->name,
	       slot, old);
	rc_event_emit(a, RC_EV_REPLACE_STARTED, slot, dev->name, old, 0,
		      a->stripes, ret);
	rc_member_state_changed(a);
	return ret;
}

int rc_member_replace_online(struct rc_array *a, int slot, struct rc_dev *dev)
{
	int ret = manage_begin(a, slot, a->g.members);
	char old[256] = "";

	if (ret == 0 && dev->size / RC_BLOCK_SIZE <
	    rc_sb_device_blocks_min(&a->sb))
		ret = -ENOSPC;
	if (ret < 0)
		goto out_close;
	rc_commit_lock(a);
	pthread_mutex_lock(&a->state_lock);
	ret = repl_set(a, slot, dev, old, sizeof(old));
	pthread_mutex_unlock(&a->state_lock);
	if (ret == 0)
		ret = rc_sb_write_all(a);
	pthread_mutex_unlock(&a->commit_lock);
	if (ret == -EBUSY || ret == -ENXIO || ret == -EEXIST || ret == -EMLINK)
		goto out_close;
	rc_log("%s: replacing slot %d (%s), which serves meanwhile", dev->name,
	       slot, old);
	rc_event_emit(a, RC_EV_REPLACE_STARTED, slot, dev->name, old, 0,
		      a->stripes, ret);
	rc_member_state_changed(a);
	return ret;
out_close:
	rc_dev_close(dev);
	return ret;
}
