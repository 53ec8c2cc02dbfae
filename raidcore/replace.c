/*
 * replace: the copy of an online replacement (md's --replace, zpool
 * replace), run by the recovery thread: a device with no slot (repl.dst,
 * set up by manage.c's rc_member_replace_online) is filled with slot's
 * column while slot's device (repl.src) goes on serving every read, so
 * the array keeps its redundancy all along.  struct rc_replace (array.h)
 * states the contract with io.c, which mirrors every write to src onto
 * dst in the stripes the copy has passed.
 *
 *   copy    batch by batch under commit_lock, each stripe under its lock:
 *           src's column read verified (rc_col_read: a block failing its
 *           checksum or its read is reconstructed from the others and
 *           repaired on src - it costs nothing), written to dst; pos moves
 *           past the stripe before its lock goes; a column never written
 *           is not copied (its entry 0 reads as zeros on dst too).  After
 *           each batch dst is flushed and the checkpoint records pos in
 *           the superblocks (the spare entry's rebuild_pos), at the
 *           rebuild's pace (rc_rebuild_pace).
 *   verify  blocks sampled across dst read back against slot's checksum
 *           entries (copy_verify): a device that does not keep what it is
 *           given is dropped, src keeps the slot.
 *   swap    dst's checksum table written from slot's entries, sealed as
 *           dst's, while the array serves; then under commit_lock a
 *           checkpoint (nothing left in the rings), the table blocks that
 *           changed meanwhile written again, dst takes the slot (its
 *           uuid, rings empty) and a second checkpoint writes every
 *           member's superblock, events bumped: the commit point.  src is let go: its uuid is no
 *           longer in the slot table, so it is never assembled back.
 *   end     src failed meanwhile: dst becomes the first spare, which the
 *           recovery thread rebuilds into the slot at once; dst failed:
 *           it is dropped and the slot keeps src.
 *
 * Lock order as rebuild.c: commit_lock, stripe lock, state_lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)

bool rc_replace_pending(struct rc_array *a)
{
	return __atomic_load_n(&a->repl.dst, __ATOMIC_SEQ_CST) != NULL;
}

/* Is src still the slot's device, active?  Takes state_lock. */
static bool src_serves(struct rc_array *a)
{
	struct rc_member *m = &a->m[a->repl.slot];
	bool yes;

	pthread_mutex_lock(&a->state_lock);
	yes = m->dev && m->dev == a->repl.src && m->state == RC_MEMBER_ACTIVE;
	pthread_mutex_unlock(&a->state_lock);
	return yes;
}

/* A slot the recovery thread could rebuild now (it goes first). */
static bool rebuild_waits(struct rc_array *a)
{
	bool yes = false;

	pthread_mutex_lock(&a->state_lock);
	for (uint32_t s = 0; s < a->g.members && !yes; s++)
		yes = (int)s != a->repl.slot &&
		      ((a->m[s].dev && a->m[s].state == RC_MEMBER_REBUILDING) ||
		       ((!a->m[s].dev || a->m[s].state != RC_MEMBER_ACTIVE) &&
			a->nspares));
	pthread_mutex_unlock(&a->state_lock);
	return yes;
}

/* Rows of src's column that cannot be read even from redundancy: row by
 * row, the lost ones left as zeros (dst gets src's entry for them, which
 * they fail: they read as errors there too). */
static void copy_rows(struct rc_array *a, const struct rc_stripe_map *mp,
		      uint32_t c, uint8_t *buf, uint64_t *lost)
{
	for (uint32_t r = 0; r < a->g.chunk_blocks; r++) {
		if (rc_col_read(a, mp, c, r, 1, BLK(buf, r), true) == 0)
			continue;
		memset(BLK(buf, r), 0, RC_BLOCK_SIZE);
		(*lost)++;
	}
}

/* Stripe s of slot onto dst.  Caller holds commit_lock. */
static int copy_stripe(struct rc_array *a, uint64_t s, uint8_t *buf,
		       uint64_t *lost)
{
	uint32_t nr = a->g.chunk_blocks;
	struct rc_stripe_map map;
	struct rc_stripe *st;
	int ret = 0;

	rc_geom_stripe(&a->g, s, &map);
	st = rc_stripe_lock(a, s);
	for (uint32_t c = 0; c < map.ncols && ret == 0; c++) {
		const struct rc_col *col = &map.col[c];

		if ((int)col->member != a->repl.slot ||
		    rc_col_is_unwritten(a, a->repl.slot, col->offset, nr))
			continue;
		if (rc_col_read(a, &map, c, 0, nr, buf, true) < 0)
			copy_rows(a, &map, c, buf, lost);
		ret = rc_io_unplaced_write(a, a->repl.dst, rc_abs(a, col->offset),
					   nr, buf);
		for (uint32_t r = 0; r < nr && ret == 0; r++) {
			uint64_t e;

			if (rc_csum_entry(a, a->repl.slot, col->offset + r,
					  &e) == RC_ENTRY_SUM)
				rc_sample_offer(&a->repl.sample,
						col->offset + r);
		}
	}
	if (ret == 0)
		atomic_store(&a->repl.pos, s + 1);
	rc_stripe_unlock(a, st);
	return ret;
}

/* Stripes [s0, s1), then dst flushed and pos checkpointed. */
static int copy_batch(struct rc_array *a, uint64_t s0, uint64_t s1,
		      uint8_t *buf, uint64_t *lost)
{
	int ret = 0;

	rc_commit_lock(a);
	for (uint64_t s = s0; s < s1 && ret == 0; s++)
		ret = copy_stripe(a, s, buf, lost);
	if (ret == 0)
		ret = rc_io_unplaced_sync(a, a->repl.dst);
	if (ret < 0)
		atomic_store(&a->repl.failed, true);
	else
		ret = rc_journal_checkpoint(a, false);
	pthread_mutex_unlock(&a->commit_lock);
	return ret;
}

/* Table block index of dst: slot's entries, sealed with dst's seed; an
 * entry that cannot be known gets one no block matches (its block is
 * verified against redundancy on dst, as on src). */
static int table_block(struct rc_array *a, uint64_t index, uint64_t seed,
		       uint8_t *blk)
{
	uint64_t mb, csum;
	int kind;

	memset(blk, 0, RC_BLOCK_SIZE);
	for (uint32_t j = 0; j < RC_CSUM_PER_BLOCK; j++) {
		mb = index * RC_CSUM_PER_BLOCK + j;
		if (mb >= a->g.member_blocks)
			break;
		kind = rc_csum_entry(a, a->repl.slot, mb, &csum);
		if (kind < 0)
			return kind;
		rc_csum_set(blk, j, kind == RC_ENTRY_SUM ? csum :
			    kind == RC_ENTRY_ZERO ? RC_CSUM_UNWRITTEN :
			    RC_CSUM_POISON);
	}
	rc_csum_block_seal(blk, seed, a->sb.csum_offset + index);
	return 0;
}

/* dst's table blocks [0, csum_blocks) - those set in only, if not NULL. */
static int tables_put(struct rc_array *a, const uint64_t *only)
{
	uint64_t seed = rc_table_seed(a->sb.array_uuid, a->repl.uuid);
	uint8_t *blk = rc_buf_alloc(RC_BLOCK_SIZE);
	int ret = blk ? 0 : -ENOMEM;

	for (uint64_t i = 0; i < a->sb.csum_blocks && ret == 0; i++) {
		if (only && !(only[i / 64] >> (i % 64) & 1))
			continue;
		ret = table_block(a, i, seed, blk);
		if (ret == 0)
			ret = rc_io_unplaced_write(a, a->repl.dst,
						   a->sb.csum_offset + i, 1, blk);
	}
	free(blk);
	return ret;
}

/* Starts (words: the bitmap's size) or ends (0) the record of the
 * slot's table blocks that change. */
static int touched_track(struct rc_array *a, size_t words)
{
	uint64_t *t = words ? calloc(words, sizeof(*t)) : NULL, *old;

	if (words && !t)
		return -ENOMEM;
	pthread_mutex_lock(&a->csum_lock);
	old = a->repl.touched;
	a->repl.touched = t;
	pthread_mutex_unlock(&a->csum_lock);
	free(old);
	return 0;
}

/*
 * dst's whole checksum table, in two passes so that writes wait only for
 * the second: all of it while the array serves, then, under commit_lock
 * (taken by the caller between the two), what changed meanwhile.
 * phase 0: the first pass; phase 1: the second, then flushed.
 */
static int tables_write(struct rc_array *a, int phase)
{
	size_t words = RC_DIV_ROUND_UP(a->sb.csum_blocks, 64);
	uint64_t *t;
	int ret;

	if (phase == 0) {
		ret = touched_track(a, words);
		return ret ? ret : tables_put(a, NULL);
	}
	t = calloc(words, sizeof(*t));
	if (!t)
		return -ENOMEM;
	pthread_mutex_lock(&a->csum_lock);
	memcpy(t, a->repl.touched, words * sizeof(*t));
	pthread_mutex_unlock(&a->csum_lock);
	ret = tables_put(a, t);
	free(t);
	return ret ? ret : rc_io_unplaced_sync(a, a->repl.dst);
}

/* Caller holds commit_lock, slots_lock and state_lock: dst into the
 * slot. */
static void slot_take(struct rc_array *a)
{
	struct rc_member *m = &a->m[a->repl.slot];

	__atomic_store_n(&m->dev, a->repl.dst, __ATOMIC_SEQ_CST);
	memcpy(m->uuid, a->repl.uuid, RC_UUID_SIZE);
	m->jhead = m->jtail = m->jused = 0;
	/* What was found about, and counted against, src is not dst's. */
	m->sb_events = 0;
	atomic_store(&m->fault_pending, 0);
	rc_member_errors_forget(m);
	rc_member_counts_load(m, NULL);
	atomic_store(&m->shrunk, false);
	__atomic_store_n(&a->repl.dst, NULL, __ATOMIC_SEQ_CST);
}

/*
 * Before src is let go, dst must be shown to keep what was copied: blocks
 * sampled among those copied (repl.sample) read back from dst and checked against
 * the slot's checksum entries, after a checkpoint has put every committed
 * write in place (on dst too).  A device that returns zeros or drops
 * writes (a dm-zero target, a disk losing its writes) took the whole copy
 * and the swap let the good member go: the array said redundant, and the
 * next member lost took every file with it (a tester's find).  Then the
 * replacement is abandoned: src keeps the slot.
 */
static int copy_verify(struct rc_array *a, const char *dstname,
		       uint8_t *blk)
{
	int slot = a->repl.slot, ret;
	uint64_t bad = 0, seen = 0;

	rc_commit_lock(a);
	ret = rc_journal_checkpoint(a, false);
	if (ret == 0)
		bad = rc_csum_verify_blocks(a, slot, a->repl.dst,
					    &a->repl.sample, false, blk, &seen);
	pthread_mutex_unlock(&a->commit_lock);
	if (ret == 0 && bad) {
		rc_log("replacement of slot %d: %llu of %llu blocks sampled on "
		       "%s do not read back as copied (the device returns "
		       "zeros or drops writes): abandoned, the slot keeps its "
		       "device", slot, (unsigned long long)bad,
		       (unsigned long long)seen, dstname);
		atomic_store(&a->repl.failed, true);
		ret = -EIO;
	}
	return ret;
}

/* The swap queues ReplaceFinished under the state_lock that makes dst the
 * slot's: nobody sees the slot replaced before the event is on its way. */
static int replace_swap(struct rc_array *a, const char *dstname,
			const char *srcname, uint64_t lost)
{
	int slot = a->repl.slot, ret;
	struct rc_dev *src = a->repl.src;
	bool taken = false;

	if ((ret = tables_write(a, 0)) < 0) {
		atomic_store(&a->repl.failed, true);
		touched_track(a, 0);
		return ret;
	}
	rc_commit_lock(a);
	ret = rc_journal_checkpoint(a, false);
	if (ret == 0 && (ret = tables_write(a, 1)) < 0)
		atomic_store(&a->repl.failed, true);
	touched_track(a, 0);
	rc_slots_wrlock(a);
	pthread_mutex_lock(&a->state_lock);
	if (ret == 0 && (a->m[slot].dev != src ||
			 a->m[slot].state != RC_MEMBER_ACTIVE))
		ret = -EIO;             /* src failed at the last moment */
	if (ret == 0) {
		slot_take(a);
		rc_event_emit(a, RC_EV_REPLACE_FINISHED, slot, dstname,
			      srcname, a->stripes, a->stripes, lost ? -EIO : 0);
	}
	taken = ret == 0;
	pthread_mutex_unlock(&a->state_lock);
	if (ret == 0)
		rc_csum_drop_slot(a, slot);
	rc_slots_unlock(a);
	/* The commit point: every member's superblock names dst. */
	if (ret == 0)
		ret = rc_journal_checkpoint(a, false);
	pthread_mutex_unlock(&a->commit_lock);
	if (taken)
		rc_member_dev_retire(a, slot, src);
	return ret;
}

/* The replacement ends without the swap: dst becomes the first spare
 * (keep; src failed: the recovery thread rebuilds it into the slot) or
 * is closed (dst failed). */
static void replace_drop(struct rc_array *a, bool keep)
{
	struct rc_dev *dst = a->repl.dst;
	uint8_t uuid[RC_UUID_SIZE];
	int n, slot = a->repl.slot;

	/* a->repl is free for another replacement once dst is cleared */
	memcpy(uuid, a->repl.uuid, RC_UUID_SIZE);
	rc_commit_lock(a);
	pthread_mutex_lock(&a->state_lock);
	__atomic_store_n(&a->repl.dst, NULL, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&a->state_lock);
	pthread_mutex_unlock(&a->commit_lock);
	/* no mirror write to dst is in flight after this */
	rc_io_drain(a, slot);
	rc_commit_lock(a);
	pthread_mutex_lock(&a->state_lock);
	n = a->nspares;
	if (keep && n < RC_MAX_SPARES) {
		a->spare[n] = a->spare[0];
		a->spare_sb[n] = a->spare_sb[0];
		a->spare[0] = dst;
		a->spare_sb[0] = a->sb;
		a->spare_sb[0].role = RC_ROLE_SPARE;
		memcpy(a->spare_sb[0].member_uuid, uuid, RC_UUID_SIZE);
		a->nspares++;
		dst = NULL;
	}
	pthread_mutex_unlock(&a->state_lock);
	rc_sb_write_all(a);
	pthread_mutex_unlock(&a->commit_lock);
	rc_dev_close(dst);
	rc_member_state_changed(a);
}

int rc_replace_cancel(struct rc_array *a)
{
	int ret = 0;

	rc_commit_lock(a);
	pthread_mutex_lock(&a->state_lock);
	if (!a->repl.dst)
		ret = -ENOENT;
	else
		atomic_store(&a->repl.cancel, true);
	pthread_mutex_unlock(&a->state_lock);
	pthread_mutex_unlock(&a->commit_lock);
	if (ret == 0)
		rc_member_nudge(a);
	return ret;
}

/* Logged, and ReplaceFinished of slot at pos unless the swap told it
 * (done). */
static void replace_told(struct rc_array *a, int slot, uint64_t pos,
			 const char *dst, const char *src, int err, bool done)
{
	rc_log("replacement of slot %d (%s) by %s: %s", slot, src, dst,
	       done && err == 0 ? "done, the old device is let go" :
	       done ? "done, some blocks could not be copied" :
	       err == -EINTR ? "interrupted: it resumes" :
	       err == -ECANCELED ? "cancelled: the slot keeps its device, the "
				   "new one is let go" : "stopped");
	if (!done)
		rc_event_emit(a, RC_EV_REPLACE_FINISHED, slot, dst, src, pos,
			      a->stripes, err);
}

/* Why the copy cannot go on, or 0.  Checked before every batch and after
 * the last, before the swap. */
static int copy_check(struct rc_array *a, bool may_yield)
{
	if (atomic_load(&a->rebuild_abort))
		return -EINTR;
	if (!src_serves(a))
		return -ENXIO;
	if (atomic_load(&a->repl.cancel))
		return -ECANCELED;
	if (atomic_load(&a->repl.failed) || rc_io_repl_shrunk(a, a->repl.dst))
		return -EIO;
	return may_yield && rebuild_waits(a) ? -EAGAIN : 0;
}

/* What the caller calls between batches (no lock held). */
struct copy_progress {
	void (*fn)(void *ctx, uint64_t done, uint64_t total);
	void *ctx;
};

static int copy_run(struct rc_array *a, bool may_yield, uint8_t *buf,
		    uint64_t *lost, const struct copy_progress *p)
{
	uint64_t s = atomic_load(&a->repl.pos), t0, end, n = a->stripes;
	int ret = 0;

	while (s < n && ret == 0) {
		ret = copy_check(a, may_yield);
		if (ret)
			break;
		t0 = rc_mono_ns();
		end = s + rc_rebuild_pace_stripes(a);
		end = end < n ? end : n;
		ret = copy_batch(a, s, end, buf, lost);
		if (ret == 0 && s * 5 / n != end * 5 / n && end < n)
			rc_event_emit(a, RC_EV_REBUILD_PROGRESS, a->repl.slot,
				      a->repl.dst->name, "replace", end, n, 0);
		if (p->fn)
			p->fn(p->ctx, end, n);
		rc_rebuild_pace(a, end - s, t0);
		s = end;
	}
	return ret ? ret : copy_check(a, false);
}

/* The names of both devices, for messages: src's only while it is the
 * slot's (state_lock keeps it open then). */
static void names_get(struct rc_array *a, char *dst, char *src, size_t len)
{
	struct rc_dev *s;

	snprintf(dst, len, "%s", a->repl.dst->name);
	pthread_mutex_lock(&a->state_lock);
	s = a->repl.src;
	snprintf(src, len, "%s", s && a->m[a->repl.slot].dev == s ? s->name :
		 "(missing)");
	pthread_mutex_unlock(&a->state_lock);
}

int rc_replace_run(struct rc_array *a, bool may_yield,
		   void (*progress)(void *ctx, uint64_t done, uint64_t total),
		   void *ctx)
{
	const struct copy_progress p = { progress, ctx };
	uint8_t *buf = rc_buf_alloc((size_t)a->g.chunk_blocks * RC_BLOCK_SIZE);
	char dst[256], src[256];
	uint64_t lost = 0, pos;
	int ret, slot = a->repl.slot;
	bool done = false, dst_failed;

	if (!buf)
		return -ENOMEM;
	names_get(a, dst, src, sizeof(dst));
	if (!atomic_exchange(&a->repl.announced, true))
		rc_event_emit(a, RC_EV_REPLACE_STARTED, a->repl.slot, dst, src,
			      atomic_load(&a->repl.pos), a->stripes, 0);
	ret = copy_run(a, may_yield, buf, &lost, &p);
	if (ret == 0)
		ret = copy_verify(a, dst, buf);
	free(buf);
	pos = atomic_load(&a->repl.pos);
	if (ret == 0) {
		ret = replace_swap(a, dst, src, lost);
		done = !rc_replace_pending(a);
	}
	if (ret == -EAGAIN || ret == -EINTR) {
		replace_told(a, slot, pos, dst, src, -EINTR, false);
		return ret;
	}
	dst_failed = atomic_load(&a->repl.failed);
	if (ret < 0 && ret != -ENOMEM && rc_replace_pending(a))
		replace_drop(a, !dst_failed && ret != -ECANCELED);
	if (lost)
		rc_log("replacement of slot %d: %llu blocks could not be read "
		       "from any member: they read as errors on %s too",
		       slot, (unsigned long long)lost, dst);
	replace_told(a, slot, pos, dst, src, ret == -ECANCELED ? ret :
		     ret < 0 && dst_failed ? -ENODEV :
		     ret < 0 || lost ? -EIO : 0, done);
	return ret < 0 ? -EIO : 0;
}
