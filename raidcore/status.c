/*
 * status: what an array is and how its members are doing
 * (rc_array_info, rc_array_member_status), read under state_lock for the
 * member states and the events counter, atomically for the error counts;
 * the admin state kept in the superblock template (a->sb.admin, under
 * state_lock), rewritten on every member when it changes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "array.h"

int rc_array_info(struct rc_array *a, struct rc_info *info)
{
	memset(info, 0, sizeof(*info));
	info->level = a->g.level;
	info->layout = a->g.layout;
	info->members = a->g.members;
	info->chunk_blocks = a->g.chunk_blocks;
	info->data_columns = a->ndata;
	info->stripe_blocks = a->stripe_blocks;
	info->blocks = a->sb.array_blocks;
	info->device_blocks_min = rc_sb_device_blocks_min(&a->sb);
	pthread_mutex_lock(&a->state_lock);
	info->spares = (uint32_t)a->nspares;
	info->events = a->sb.events;
	for (uint32_t s = 0; s < a->g.members; s++)
		info->degraded |= !a->m[s].dev ||
				  a->m[s].state != RC_MEMBER_ACTIVE;
	info->replacing = a->repl.dst != NULL;
	if (info->replacing) {
		info->replace_slot = (uint32_t)a->repl.slot;
		info->replace_done = atomic_load(&a->repl.pos);
		snprintf(info->replace_dev, sizeof(info->replace_dev), "%s",
			 a->repl.dst->name);
		memcpy(info->replace_uuid, a->repl.uuid, RC_UUID_SIZE);
	}
	pthread_mutex_unlock(&a->state_lock);
	memcpy(info->uuid, a->sb.array_uuid, RC_UUID_SIZE);
	memcpy(info->label, a->sb.label, RC_LABEL_MAX);
	info->rdonly = a->rdonly;
	info->was_unclean = a->was_unclean;
	info->journal_lost = a->journal_lost;
	info->replayed_txns = a->replayed_txns;
	info->direct_stripes = a->direct_stripes;
	info->dirty_stripes = atomic_load(&a->ndirty_stripes);
	info->dirty_max = a->max_dirty_stripes;
	info->unrecoverable = atomic_load(&a->unrecoverable);
	info->tables_unverified = rc_csum_unknown_blocks(a);
	info->stripes = a->stripes;
	info->redundancy = a->nred;
	pthread_mutex_lock(&a->state_lock);
	/* A rebuilding slot counts as lost: the stripes its rebuild has not
	 * reached have lost it, and with more lost than the redundancy the
	 * rebuild cannot finish (it stops) - "rebuilding" would stay for
	 * ever. */
	info->failed = rc_array_failed(a);
	info->suspended = rc_array_suspended(a);
	if (info->suspended) {
		info->suspend_slot = a->suspend_slot;
		snprintf(info->suspend_why, sizeof(info->suspend_why), "%s",
			 a->suspend_why);
	}
	info->errors = atomic_load(&a->errors_seen) ||
		       (a->sb.array_flags & RC_AF_ERRORS);
	rc_verify_prune(a);
	info->verify_slots = a->verify_slots;
	info->verify_gen = a->verify_gen;
	snprintf(info->verify_why, sizeof(info->verify_why), "%s",
		 a->verify_slots ? a->verify_why : "");
	pthread_mutex_unlock(&a->state_lock);
	return 0;
}

/* Before a change of the superblocks an administrator asks for. */
static int sb_change_begin(struct rc_array *a)
{
	int ret;

	if (a->rdonly)
		return -EROFS;
	ret = rc_array_activate(a);
	return ret < 0 ? ret : 0;
}

int rc_array_clear_errors(struct rc_array *a, bool counters)
{
	int ret = sb_change_begin(a);

	if (ret)
		return ret;
	pthread_mutex_lock(&a->state_lock);
	atomic_store(&a->errors_seen, false);
	a->sb.array_flags &= ~RC_AF_ERRORS;
	for (uint32_t s = 0; s < a->g.members && counters; s++) {
		/* and the window that judges them (FAILING outlived it: a
		 * tester's find, V1 D5) */
		rc_member_errors_forget(&a->m[s]);
		atomic_store(&a->m[s].read_errors, 0);
		atomic_store(&a->m[s].write_errors, 0);
		atomic_store(&a->m[s].csum_errors, 0);
		atomic_store(&a->m[s].repaired, 0);
		atomic_store(&a->m[s].suspect_said, false);
	}
	pthread_mutex_unlock(&a->state_lock);
	return rc_sb_write_all(a);
}

int rc_array_record_errors(struct rc_array *a, bool found)
{
	bool record;
	int ret;

	if (found)
		atomic_store(&a->errors_seen, true);
	pthread_mutex_lock(&a->state_lock);
	record = atomic_load(&a->errors_seen) &&
		 !(a->sb.array_flags & RC_AF_ERRORS);
	pthread_mutex_unlock(&a->state_lock);
	if (!record)
		return 0;
	ret = sb_change_begin(a);
	return ret ? ret : rc_sb_write_all(a);
}

int rc_array_member_status(struct rc_array *a, int slot,
			   struct rc_member_status *st)
{
	struct rc_member *m;

	memset(st, 0, sizeof(*st));
	if (slot < 0 || (uint32_t)slot >= a->g.members + (uint32_t)a->nspares)
		return -EINVAL;
	if ((uint32_t)slot >= a->g.members) {
		int i = slot - (int)a->g.members;

		st->state = RC_MEMBER_SPARE;
		snprintf(st->name, sizeof(st->name), "%s", a->spare[i]->name);
		memcpy(st->uuid, a->spare_sb[i].member_uuid, RC_UUID_SIZE);
		return 0;
	}
	m = &a->m[slot];
	pthread_mutex_lock(&a->state_lock);
	st->state = m->dev ? m->state : RC_MEMBER_MISSING;
	st->rebuild_done = m->rebuild_pos;
	st->catchup = m->catchup;
	st->stale_copy = m->stale_copy;
	/* kept despite a verdict that faults a member: its errors, or a
	 * fault the array could not take (fail.c's "kept; its data is
	 * suspect") */
	st->kept_failing = m->dev && m->state == RC_MEMBER_ACTIVE &&
			   (atomic_load(&m->suspect_said) ||
			    (atomic_load(&m->errors_kept_said) &&
			     atomic_load(&m->err_window_count) >
			     a->fault_errors));
	st->resync_regions = m->resync_regions;
	st->resync_stripes = m->resync_stripes;
	if (m->dev)
		snprintf(st->name, sizeof(st->name), "%s", m->dev->name);
	memcpy(st->uuid, m->uuid, RC_UUID_SIZE);
	pthread_mutex_unlock(&a->state_lock);
	st->read_errors = atomic_load(&m->read_errors);
	st->write_errors = atomic_load(&m->write_errors);
	st->csum_errors = atomic_load(&m->csum_errors);
	st->repaired = atomic_load(&m->repaired);
	return 0;
}

void rc_array_get_admin(struct rc_array *a, struct rc_admin *ad)
{
	pthread_mutex_lock(&a->state_lock);
	*ad = a->sb.admin;
	pthread_mutex_unlock(&a->state_lock);
	ad->rebuild_min_kib = atomic_load(&a->rebuild_min_kib);
	ad->rebuild_max_kib = atomic_load(&a->rebuild_max_kib);
}

int rc_array_set_scrub_state(struct rc_array *a, const struct rc_admin *ad)
{
	struct rc_admin *to = &a->sb.admin;
	int ret = sb_change_begin(a);

	if (ret)
		return ret;
	pthread_mutex_lock(&a->state_lock);
	to->scrub_active = ad->scrub_active;
	to->scrub_running = ad->scrub_active && ad->scrub_running;
	to->scrub_pos = ad->scrub_active ? ad->scrub_pos : 0;
	to->scrub = ad->scrub;
	to->last = ad->last;
	pthread_mutex_unlock(&a->state_lock);
	return rc_sb_write_all(a);
}
