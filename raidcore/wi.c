/*
 * wi: the write-intent record (md's write-intent bitmap, ZFS's dirty time
 * log).  While some slot is not current, the regions of the array that
 * are written are recorded on every active member before the writes go
 * out, so that a member that comes back is rebuilt only there (a
 * catch-up; docs/DESIGN.md "Catch-up of a returning member", the bytes in
 * docs/FORMAT.md "Write-intent record").
 *
 *   rc_wi_init          geometry; the template's record read back whole,
 *                       or dropped (nobody is covered then)
 *   rc_wi_note          a commit, discard or replayed block wrote stripe s
 *   rc_wi_flush         the changed bitmap blocks out, flushed, before the
 *                       writes they cover
 *   rc_wi_checkpointed  every member flushed: pending starts over
 *   rc_wi_sb_prepare    (super.c, every superblock write) the record
 *                       starts when a slot stops being current, with
 *                       pending in it, and ends when every slot is again
 *   rc_wi_covers, rc_member_catchup_begin   a former member taken back
 *   rc_wi_rebuild_wants, rc_wi_batch_end    (rebuild.c) a catch-up's
 *                       stripes
 *
 * A healthy array pays one bit per committed stripe in memory (pending)
 * and nothing on the members: pending exists because a member that
 * leaves may have lost what it was given since its last flush, and those
 * writes were made while nothing was recorded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define WI_WORDS (RC_WI_MAX_REGIONS / 64)
#define WI_REGION_MIN_BLOCKS 256ull     /* 1 MiB of each member's data */

static bool bit_get(const uint64_t *b, uint64_t r)
{
	return b[r / 64] >> (r % 64) & 1;
}

static void bit_set(uint64_t *b, uint64_t r)
{
	b[r / 64] |= 1ull << (r % 64);
}

static uint32_t blocks_used(const struct rc_wi *w)
{
	return (uint32_t)RC_DIV_ROUND_UP(w->nregions, RC_WI_BITS_PER_BLOCK);
}

/* Stripes per region: 1 MiB of member data, or more when the bitmap
 * blocks would not hold the array's regions. */
static uint64_t region_stripes_for(const struct rc_array *a)
{
	uint64_t per = RC_DIV_ROUND_UP(WI_REGION_MIN_BLOCKS, a->g.chunk_blocks);
	uint64_t fit = RC_DIV_ROUND_UP(a->stripes, RC_WI_MAX_REGIONS);

	return per > fit ? per : fit ? fit : 1;
}

static bool slot_is_current(const struct rc_array *a, uint32_t s)
{
	return a->m[s].dev && a->m[s].state == RC_MEMBER_ACTIVE;
}

/* Caller holds state_lock and wi.lock (or the array is not shared): the
 * bitmap blocks to every active member, flushed; how many took them. */
static int blocks_write(struct rc_array *a)
{
	uint32_t nb = blocks_used(&a->wi);
	uint8_t *blk = rc_buf_alloc((size_t)nb * RC_BLOCK_SIZE);
	int ok = 0, ret;

	if (!blk)
		return 0;
	for (uint32_t i = 0; i < nb; i++)
		rc_wi_block_encode(a->sb.array_uuid, a->sb.wi.epoch, i,
				   a->wi.bits, blk + (size_t)i * RC_BLOCK_SIZE);
	for (uint32_t s = 0; s < a->g.members; s++) {
		if (!slot_is_current(a, s))
			continue;
		ret = rc_io_member_write(a, (int)s, RC_WI_FIRST_BLOCK, nb, blk);
		if (ret == 0)
			ret = rc_io_member_sync(a, (int)s);
		if (ret == 0)
			ok++;
		else
			rc_log("member %u (%s): the write-intent record could "
			       "not be written: %s", s, a->m[s].dev->name,
			       strerror(-ret));
	}
	free(blk);
	return ok;
}

/* Every bitmap block from some active member, valid for the template's
 * header, ORed together (a copy one update behind another only lacks
 * bits the other has): 0, or -EBADMSG naming what is missing in why. */
static int record_load(struct rc_array *a, const char **why)
{
	uint8_t *blk = rc_buf_alloc(RC_BLOCK_SIZE);
	int ret = 0;

	if (!blk)
		return -ENOMEM;
	if (a->sb.wi.region_stripes != a->wi.region_stripes ||
	    a->sb.wi.nregions != a->wi.nregions) {
		*why = "its regions do not fit the array's geometry";
		ret = -EBADMSG;
	}
	for (uint32_t i = 0; i < blocks_used(&a->wi) && ret == 0; i++) {
		int got = 0;

		for (uint32_t s = 0; s < a->g.members; s++)
			if (slot_is_current(a, s) &&
			    rc_io_member_read(a, (int)s, RC_WI_FIRST_BLOCK + i,
					      1, blk) == 0 &&
			    rc_wi_block_merge(blk, a->sb.array_uuid,
					      a->sb.wi.epoch, i, a->wi.bits) == 0)
				got++;
		if (!got) {
			*why = "a bitmap block is unreadable or damaged on "
			       "every active member";
			ret = -EBADMSG;
		}
	}
	free(blk);
	return ret;
}

/* The template names a record: believe it only read back whole. */
static void record_resume(struct rc_array *a)
{
	const char *why = "";
	int ret = record_load(a, &why);

	if (ret == 0) {
		a->wi.recording = a->wi.loaded = true;
		return;
	}
	rc_log("the write-intent record cannot be used (%s): dropped; a "
	       "member that returns is rebuilt in full", why);
	memset(a->wi.bits, 0, WI_WORDS * sizeof(uint64_t));
	memset(&a->sb.wi, 0, sizeof(a->sb.wi));
	for (uint32_t s = 0; s < a->g.members; s++) {
		if (!a->m[s].catchup)
			continue;
		a->m[s].catchup = false;
		rc_log("slot %u: its catch-up goes on as a full rebuild from "
		       "stripe %llu", s, (unsigned long long)a->m[s].rebuild_pos);
	}
}

int rc_wi_init(struct rc_array *a)
{
	struct rc_wi *w = &a->wi;

	pthread_mutex_init(&w->lock, NULL);
	w->region_stripes = region_stripes_for(a);
	w->nregions = RC_DIV_ROUND_UP(a->stripes, w->region_stripes);
	w->pending = calloc(WI_WORDS, sizeof(uint64_t));
	w->bits = calloc(WI_WORDS, sizeof(uint64_t));
	if (!w->pending || !w->bits)
		return -ENOMEM;
	if (a->sb.wi.epoch)
		record_resume(a);
	return 0;
}

void rc_wi_fini(struct rc_array *a)
{
	if (!a->wi.region_stripes)
		return;         /* never initialised */
	free(a->wi.pending);
	free(a->wi.bits);
	a->wi.pending = a->wi.bits = NULL;
	pthread_mutex_destroy(&a->wi.lock);
}

/* A member of array uuid last updated at events: left within the record. */
static bool covers(struct rc_array *a, const uint8_t *uuid, uint64_t events)
{
	bool yes;

	pthread_mutex_lock(&a->wi.lock);
	yes = a->wi.recording && a->sb.wi.epoch &&
	      !memcmp(uuid, a->sb.array_uuid, RC_UUID_SIZE) &&
	      events >= a->sb.wi.base_events && events < a->sb.events;
	pthread_mutex_unlock(&a->wi.lock);
	return yes;
}

bool rc_wi_other_history(struct rc_array *a, const struct rc_sb *sb)
{
	bool yes;

	pthread_mutex_lock(&a->wi.lock);
	yes = a->wi.recording && sb->events > a->sb.wi.base_events + 1 &&
	      sb->events < a->sb.events && sb->wi.epoch != a->sb.wi.epoch;
	pthread_mutex_unlock(&a->wi.lock);
	return yes;
}

bool rc_wi_covers(struct rc_array *a, const struct rc_sb *sb)
{
	return covers(a, sb->array_uuid, sb->events) &&
	       !rc_wi_other_history(a, sb);
}

/* Is region r of the record set (written while a member was away)? */
static bool region_written(struct rc_array *a, uint64_t r)
{
	bool yes;

	pthread_mutex_lock(&a->wi.lock);
	yes = !a->wi.recording || bit_get(a->wi.bits, r);
	pthread_mutex_unlock(&a->wi.lock);
	return yes;
}

bool rc_wi_tables_whole(struct rc_array *a, int slot, struct rc_dev *dev,
			const struct rc_sb *sb)
{
	uint64_t rs = a->wi.region_stripes, last = UINT64_MAX;
	uint8_t *blk = rc_buf_alloc(RC_BLOCK_SIZE);
	struct rc_stripe_map map;
	bool whole = blk != NULL;

	for (uint64_t r = 0; whole && rs && r * rs < a->stripes; r++) {
		if (!region_written(a, r))
			continue;
		for (uint64_t s = r * rs; whole && s < (r + 1) * rs &&
		     s < a->stripes; s++) {
			rc_geom_stripe(&a->g, s, &map);
			for (uint32_t c = 0; whole && c < map.ncols; c++) {
				uint64_t i, end;

				if (map.col[c].member != (uint32_t)slot)
					continue;
				i = map.col[c].offset / RC_CSUM_PER_BLOCK;
				end = (map.col[c].offset + a->g.chunk_blocks - 1) /
				      RC_CSUM_PER_BLOCK;
				for (; whole && i <= end; i++) {
					uint64_t tb = sb->csum_offset + i;

					if (i == last)
						continue;
					last = i;
					whole = rc_table_block_read_ok(dev,
						sb->array_uuid, sb->member_uuid,
						tb, blk);
					if (!whole)
						rc_log("member %d (%s): its checksum "
						       "table block %llu fails its "
						       "seal (or its read) in a "
						       "region written while it was "
						       "away: it cannot catch up, "
						       "only be rebuilt in full",
						       slot, dev->name,
						       (unsigned long long)tb);
				}
			}
		}
	}
	free(blk);
	return whole;
}

bool rc_array_may_return(struct rc_array *a, const struct rc_probe *p)
{
	return covers(a, p->array_uuid, p->events);
}

void rc_wi_note(struct rc_array *a, uint64_t s)
{
	struct rc_wi *w = &a->wi;
	uint64_t r;

	if (!w->pending)
		return;
	r = s / w->region_stripes;
	pthread_mutex_lock(&w->lock);
	bit_set(w->pending, r);
	if (w->recording && !bit_get(w->bits, r)) {
		bit_set(w->bits, r);
		w->dirty |= 1u << (r / RC_WI_BITS_PER_BLOCK);
	}
	pthread_mutex_unlock(&w->lock);
}

static void overlay_note(struct rc_array *a, int slot, uint64_t block)
{
	uint64_t stripe;
	uint32_t col;

	if (block < a->sb.data_offset ||
	    block >= a->sb.data_offset + a->sb.member_blocks)
		return;
	if (rc_geom_reverse(&a->g, (uint32_t)slot, block - a->sb.data_offset,
			    &stripe, &col) == 0)
		rc_wi_note(a, stripe);
}

void rc_wi_note_overlay(struct rc_array *a)
{
	rc_overlay_each(a, overlay_note);
}

int rc_wi_flush(struct rc_array *a)
{
	int ret = 0;

	pthread_mutex_lock(&a->wi.lock);
	if (!a->wi.dirty) {
		pthread_mutex_unlock(&a->wi.lock);
		return 0;
	}
	pthread_mutex_unlock(&a->wi.lock);
	pthread_mutex_lock(&a->state_lock);
	pthread_mutex_lock(&a->wi.lock);
	if (a->wi.recording && a->wi.dirty) {
		if (blocks_write(a) > 0)
			a->wi.dirty = 0;
		else
			ret = -EIO;
	}
	pthread_mutex_unlock(&a->wi.lock);
	pthread_mutex_unlock(&a->state_lock);
	return ret;
}

/*
 * Every present member flushed: pending starts over - unless a slot is
 * not current while no record runs.  Then pending is what its member may
 * lack and the record about to start must take: after a crash that took
 * the member's unflushed writes, with the member missing at the assembly,
 * the replay wrote them again on the others only (rc_wi_note_overlay and
 * the replay's direct stripes), and the activation's checkpoint, which
 * comes before the superblock write that starts the record, cleared them
 * (until 2026-12-07: the member caught up without them, its old columns
 * then disagreeing with the parity - test_catchup_after_crash).
 */
void rc_wi_checkpointed(struct rc_array *a)
{
	bool behind = false;

	if (!a->wi.pending)
		return;
	pthread_mutex_lock(&a->state_lock);
	for (uint32_t s = 0; s < a->g.members; s++)
		behind |= !slot_is_current(a, s);
	pthread_mutex_lock(&a->wi.lock);
	if (!behind || a->wi.recording)
		memset(a->wi.pending, 0, RC_DIV_ROUND_UP(a->wi.nregions, 64) *
		       sizeof(uint64_t));
	pthread_mutex_unlock(&a->wi.lock);
	pthread_mutex_unlock(&a->state_lock);
}

/* Caller holds state_lock and wi.lock: the record starts now, with what
 * was written since the last checkpoint; base is the events every member
 * current until now carries.  Not started when no member takes it. */
static void record_start(struct rc_array *a, uint64_t base)
{
	struct rc_wi *w = &a->wi;

	a->sb.wi = (struct rc_wi_hdr){
		/* records start at increasing events: base tells them apart */
		.epoch = (base << 24 ^ (rc_mono_ns() & 0xffffff)) | 1,
		.base_events = base, .region_stripes = w->region_stripes,
		.nregions = w->nregions };
	memcpy(w->bits, w->pending, WI_WORDS * sizeof(uint64_t));
	if (blocks_write(a) == 0) {
		memset(&a->sb.wi, 0, sizeof(a->sb.wi));
		rc_log("the write-intent record could not be started: a member "
		       "that returns is rebuilt in full");
		return;
	}
	w->recording = true;
	w->dirty = 0;
	a->sb.feature_compat |= RC_FEATURE_COMPAT_WRITE_INTENT;
	rc_log("write-intent record started (regions of %llu stripes): a "
	       "member that returns catches up on what changed",
	       (unsigned long long)w->region_stripes);
}

void rc_wi_sb_prepare(struct rc_array *a, uint64_t base)
{
	bool degraded = false;

	if (!a->wi.pending)
		return;
	for (uint32_t s = 0; s < a->g.members; s++)
		degraded |= !slot_is_current(a, s);
	pthread_mutex_lock(&a->wi.lock);
	if (degraded && !a->wi.recording) {
		record_start(a, base);
	} else if (!degraded && a->wi.recording) {
		a->wi.recording = false;
		a->wi.dirty = 0;
		memset(a->wi.bits, 0, WI_WORDS * sizeof(uint64_t));
		memset(&a->sb.wi, 0, sizeof(a->sb.wi));
		rc_log("every member is current: the write-intent record is "
		       "cleared");
	}
	pthread_mutex_unlock(&a->wi.lock);
}

void rc_member_catchup_begin(struct rc_array *a, int slot,
			     struct rc_dev *dev, const struct rc_sb *sb)
{
	struct rc_member *m = &a->m[slot];

	__atomic_store_n(&m->dev, dev, __ATOMIC_SEQ_CST);
	m->state = RC_MEMBER_REBUILDING;
	m->catchup = true;
	m->removed = false;
	m->rebuild_pos = 0;
	m->resync_stripes = m->resync_regions = m->resync_last_region = 0;
	m->jhead = m->jtail = m->jused = 0;
	m->sb_events = 0;
	atomic_store(&m->fault_pending, 0);
	rc_member_errors_forget(m);
	atomic_store(&m->shrunk, false);
	rc_member_counts_load(m, sb);
	rc_log("member %d (%s) is back, %llu updates behind: the write-intent "
	       "record covers its absence; it catches up on the regions "
	       "written since", slot, dev->name,
	       (unsigned long long)(a->sb.events - sb->events));
}

bool rc_wi_rebuild_wants(struct rc_array *a, int slot, uint64_t s)
{
	struct rc_member *m = &a->m[slot];
	uint64_t r;
	bool want;

	if (!m->catchup)
		return true;
	r = s / a->wi.region_stripes;
	pthread_mutex_lock(&a->wi.lock);
	want = !a->wi.recording || bit_get(a->wi.bits, r);
	pthread_mutex_unlock(&a->wi.lock);
	if (!want)
		return false;
	m->resync_stripes++;
	if (m->resync_last_region != r + 1) {
		m->resync_regions++;
		m->resync_last_region = r + 1;
	}
	return true;
}

uint64_t rc_wi_batch_end(struct rc_array *a, int slot, uint64_t s,
			 uint64_t per)
{
	uint64_t rs = a->wi.region_stripes, n = 0, e = s, rend, take;

	if (!a->m[slot].catchup)
		return s + per < a->stripes ? s + per : a->stripes;
	pthread_mutex_lock(&a->wi.lock);
	while (e < a->stripes && n < per) {
		rend = (e / rs + 1) * rs;
		rend = rend < a->stripes ? rend : a->stripes;
		if (a->wi.recording && !bit_get(a->wi.bits, e / rs)) {
			e = rend;
			continue;
		}
		take = rend - e < per - n ? rend - e : per - n;
		n += take;
		e += take;
	}
	pthread_mutex_unlock(&a->wi.lock);
	return e;
}
