/*
 * super: superblocks - two copies at the start of every member and spare
 * (docs/FORMAT.md "Superblock").
 *
 *   rc_sb_write_all   an assembled array rewrites every present member's
 *                     and spare's superblock from its template (a->sb),
 *                     events bumped: through io.c, so a read-only array
 *                     writes none and failures count against the member
 *   rc_sb_put_copies  the order of a superblock write, shared with
 *                     creation (create.c writes to devices directly)
 *   rc_sb_read_best   the best copy of a device's four, read straight
 *                     from the device: assembly and probing use it to
 *                     choose members, before there is an array;
 *                     rc_sb_read_copies also says which copies are
 *                     damaged (assembly logs and counts them)
 *   rc_sb_check_members  is every member still the device we last wrote
 *                     a superblock to (the recovery thread, every 10 s)?
 *
 * A member lies when what it returns is not what was written to it: a
 * disk that drops writes, an old image copied over it, another device
 * behind the same name, zeros.  Copy 0 of every member is therefore read
 * back right after every write, and again now and then.  A member whose
 * superblock write fails or does not come back is marked faulty here,
 * under state_lock, and the write starts over with it left out - unless
 * the array cannot run without it, which is said loudly instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "array.h"

uint64_t rc_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Copy 0, flushed, then copies 1 .. 3, flushed: a write torn by a crash
 * leaves copy 0 or the other three whole. */
int rc_sb_put_copies(struct rc_sb *sb, uint8_t *blk,
		     int (*put)(void *ctx, uint64_t block, const void *blk,
				bool sync),
		     void *ctx)
{
	int ret = 0;

	for (uint32_t c = 0; c < RC_SB_COPIES && ret == 0; c++) {
		sb->sb_copy = c;
		rc_sb_encode(sb, blk);
		ret = put(ctx, rc_sb_copy_block(c, sb->device_blocks), blk,
			  c == 0 || c == RC_SB_COPIES - 1);
	}
	return ret;
}

struct sb_target {
	struct rc_array *a;
	int slot;                       /* -1: a spare */
	struct rc_dev *dev;             /* the spare */
};

static int sb_put(void *ctx, uint64_t block, const void *blk, bool sync)
{
	struct sb_target *t = ctx;
	int ret;

	if (t->slot >= 0) {
		ret = rc_io_member_write(t->a, t->slot, block, 1, blk);
		return ret || !sync ? ret : rc_io_member_sync(t->a, t->slot);
	}
	ret = rc_io_unplaced_write(t->a, t->dev, block, 1, blk);
	return ret || !sync ? ret : rc_io_unplaced_sync(t->a, t->dev);
}

static void sb_for_member(const struct rc_array *a, int slot,
			  struct rc_sb *sb)
{
	*sb = a->sb;
	sb->role = (uint32_t)slot;
	memcpy(sb->member_uuid, a->m[slot].uuid, RC_UUID_SIZE);
	sb->journal_tail = a->m[slot].jtail;
	sb->device_blocks = a->m[slot].dev->size / RC_BLOCK_SIZE;
	sb->err_read = atomic_load(&a->m[slot].read_errors);
	sb->err_write = atomic_load(&a->m[slot].write_errors);
	sb->err_csum = atomic_load(&a->m[slot].csum_errors);
	sb->repaired = atomic_load(&a->m[slot].repaired);
}

/* Spare i's superblock; i -1: the replacement's (a spare's, too). */
static void sb_for_spare(const struct rc_array *a, int i, struct rc_sb *sb)
{
	const struct rc_dev *dev = i < 0 ? a->repl.dst : a->spare[i];

	*sb = a->sb;
	sb->role = RC_ROLE_SPARE;
	memcpy(sb->member_uuid, i < 0 ? a->repl.uuid :
	       a->spare_sb[i].member_uuid, RC_UUID_SIZE);
	sb->journal_tail = 0;
	sb->device_blocks = dev->size / RC_BLOCK_SIZE;
	sb->err_read = sb->err_write = sb->err_csum = sb->repaired = 0;
}

/* An online replacement's target: a spare entry after the spares, with
 * the slot it replaces and how far its copy is (ondisk.h, 2.1), so that
 * an assembly takes it back as the target, and a 2.0 one as a spare. */
static void repl_slot_entry(struct rc_array *a)
{
	struct rc_slot *sl = &a->sb.slots[a->g.members + (uint32_t)a->nspares];

	a->sb.feature_compat &= ~RC_FEATURE_COMPAT_REPLACE;
	if (!a->repl.dst)
		return;
	memcpy(sl->uuid, a->repl.uuid, RC_UUID_SIZE);
	sl->state = RC_MEMBER_SPARE;
	sl->flags = RC_SLOT_F_REPLACING | (uint32_t)a->repl.slot;
	sl->rebuild_pos = atomic_load(&a->repl.pos);
	a->sb.nspares++;
	a->sb.feature_compat |= RC_FEATURE_COMPAT_REPLACE;
}

static void slots_from_members(struct rc_array *a)
{
	for (uint32_t i = 0; i < a->g.members; i++) {
		memcpy(a->sb.slots[i].uuid, a->m[i].uuid, RC_UUID_SIZE);
		a->sb.slots[i].state = a->m[i].state;
		a->sb.slots[i].rebuild_pos = a->m[i].rebuild_pos;
		a->sb.slots[i].flags = a->m[i].catchup &&
				       a->m[i].state == RC_MEMBER_REBUILDING ?
				       RC_SLOT_CATCHUP : 0;
		if (a->m[i].damaged && (a->m[i].state == RC_MEMBER_FAULTY ||
					a->m[i].state == RC_MEMBER_MISSING))
			a->sb.slots[i].flags |= RC_SLOT_DAMAGED;
		if (a->m[i].removed && a->m[i].state == RC_MEMBER_MISSING)
			a->sb.slots[i].flags |= RC_SLOT_REMOVED;
	}
	/* found damaged, not verified yet: kept across a remount, whose
	 * first write rewrites the damaged superblock copies that told
	 * (the state was lost at an unmount or crash during the scrub, and
	 * a resumed scrub let it be trusted: V1 D1) */
	rc_verify_prune(a);
	for (uint32_t i = 0; i < a->g.members; i++)
		if ((a->verify_slots >> i & 1) &&
		    a->m[i].state == RC_MEMBER_ACTIVE)
			a->sb.slots[i].flags |= RC_SLOT_UNVERIFIED;
	for (int i = 0; i < a->nspares; i++) {
		memcpy(a->sb.slots[a->g.members + i].uuid,
		       a->spare_sb[i].member_uuid, RC_UUID_SIZE);
		a->sb.slots[a->g.members + i].state = RC_MEMBER_SPARE;
		a->sb.slots[a->g.members + i].flags = 0;
		a->sb.slots[a->g.members + i].rebuild_pos = 0;
	}
	for (uint32_t i = a->g.members + (uint32_t)a->nspares; i < RC_SB_SLOTS; i++)
		memset(&a->sb.slots[i], 0, sizeof(a->sb.slots[i])),
		a->sb.slots[i].state = RC_MEMBER_EMPTY;
	a->sb.nspares = (uint32_t)a->nspares;
	repl_slot_entry(a);
}

/* Would the array lose data without slot?  Caller holds state_lock. */
static bool sb_member_needed(struct rc_array *a, int slot)
{
	/* members not verified counted lost: a slot rebuilt with holes
	 * needs the member they are filled from (a tester's find) */
	return rc_array_needs_unverified(a, slot);
}

/* Every copy of sb, just written to slot, reads back as written (NULL),
 * or why not: the copies at the device's end too.  Reading back copy 0 only, a member
 * whose last MiBs read as zeros (a dm-zero tail, a device that drops
 * writes there) had its end copies "rewritten" at every check, fsck -y
 * said "errors corrected" and the next check found them damaged again
 * (a tester's find). */
static const char *sb_reads_back(struct rc_array *a, int slot,
				 struct rc_sb *sb, uint8_t *blk, uint8_t *back)
{
	uint64_t dev_blocks = a->m[slot].dev->size / RC_BLOCK_SIZE;
	const char *why = NULL;

	for (uint32_t c = 0; !why && c < RC_SB_COPIES; c++) {
		sb->sb_copy = c;
		rc_sb_encode(sb, blk);
		if (rc_io_member_read(a, slot, rc_sb_copy_block(c, dev_blocks),
				      1, back) < 0)
			/* a tester's note: a read error was said to be
			 * writes lost */
			why = "its superblock could not be read back after "
			      "its write (read error)";
		else if (memcmp(blk, back, RC_BLOCK_SIZE))
			why = "its superblock did not read back as written "
			      "(writes lost, or another device answers)";
	}
	return why;
}

/* Caller holds state_lock: slot lied (why); faulty unless needed. */
static bool sb_member_lied(struct rc_array *a, int slot, const char *why)
{
	struct rc_member *m = &a->m[slot];

	if (sb_member_needed(a, slot)) {
		if (!atomic_exchange(&m->suspect_said, true))
			rc_log("member %d (%s): %s - but the array cannot run "
			       "without it: kept; its data is suspect", slot,
			       m->dev->name, why);
		return false;
	}
	rc_log("member %d (%s) is faulty: %s; the array goes on degraded",
	       slot, m->dev->name, why);
	m->state = RC_MEMBER_FAULTY;
	m->damaged = true;
	rc_event_emit(a, RC_EV_FAIL, slot, m->dev->name, why, 0, 0, 0);
	return true;
}

static bool sb_check_member(struct rc_array *a, int slot, uint8_t *blk,
			    struct rc_sb *sb);

/*
 * Caller holds state_lock.  Before a member's superblocks are rewritten:
 * is it still the device last written to?  An old image put back (or
 * writes lost) while the array runs would otherwise get current
 * superblocks over its stale tables and data, and nothing would ever
 * tell it from a current member again.  One read of copy 0.
 */
static bool sb_still_ours(struct rc_array *a, int slot, uint8_t *blk)
{
	struct rc_sb *tmp;
	bool ours = true;

	if (!a->m[slot].sb_events)
		return true;            /* nothing written by us yet */
	tmp = malloc(sizeof(*tmp));
	if (!tmp)
		return true;
	if (!sb_check_member(a, slot, blk, tmp) &&
	    (atomic_load(&a->m[slot].fault_pending) & RC_PEND_IDENTITY))
		ours = false;
	free(tmp);
	return ours;
}

/*
 * Caller holds state_lock.  false when a member failed (it is faulty now)
 * and the template changed: start over - at the same events.  One update
 * is one events step however many rounds it takes: with a step per
 * round, two members gone at once (the first faulted by its superblock
 * write, the round written again, the second then suspending the array)
 * left the first slot two updates ahead of the slots after the second,
 * which assembly then called stale, and the array could not be assembled
 * again (a tester's find).  A round started again rewrites the slots
 * before the failure first, so a round cut short leaves, as a crash does,
 * a suffix of the slots one update behind.
 */
static bool sb_write_round(struct rc_array *a, struct rc_sb *sb, uint8_t *blk,
			   uint8_t *back, uint64_t base)
{
	struct sb_target t = { .a = a };
	const char *lie;

	/* Before the superblocks that say a slot is not current: the
	 * write-intent record that covers its absence (wi.c). */
	rc_wi_sb_prepare(a, base);
	if (atomic_load(&a->errors_seen))
		a->sb.array_flags |= RC_AF_ERRORS;
	slots_from_members(a);
	for (uint32_t i = 0; i < a->g.members; i++) {
		if (!rc_member_present(a, (int)i))
			continue;
		if (!sb_still_ours(a, (int)i, blk) &&
		    sb_member_lied(a, (int)i, a->m[i].lie))
			return false;
		sb_for_member(a, (int)i, sb);
		t.slot = (int)i;
		if (rc_sb_put_copies(sb, blk, sb_put, &t) < 0) {
			/* Needed: the array is suspended, and this round
			 * stops here (rc_sb_write_all), the slots after this
			 * one left a suffix one update behind, as a crash
			 * during the update leaves them (assembly keeps
			 * such members, held to their journal). */
			/* why: a device that shrank under a scrub was said to
			 * have failed a superblock write only, with no slot
			 * (a tester's find) */
			char why[96] = "superblock write failed";

			if (rc_io_size_check(a, (int)i))
				rc_io_shrunk_why(a, (int)i, why,
						     sizeof(why));
			if (rc_array_suspend_locked(a, (int)i, why))
				return false;
			rc_log("member %u (%s) is faulty: %s; the array goes on "
			       "degraded", i, a->m[i].dev->name, why);
			a->m[i].state = RC_MEMBER_FAULTY;
			a->m[i].damaged = true;
			/* told, as every fault (it went unannounced: no Fail
			 * event, no alert; a tester's report) */
			rc_event_emit(a, RC_EV_FAIL, (int)i, a->m[i].dev->name,
				      why, 0, 0, 0);
			return false;
		}
		lie = sb_reads_back(a, (int)i, sb, blk, back);
		if (lie && sb_member_lied(a, (int)i, lie))
			return false;
		a->m[i].sb_events = sb->events;
	}
	t.slot = -1;
	for (int i = 0; i < a->nspares; i++) {
		sb_for_spare(a, i, sb);
		t.dev = a->spare[i];
		rc_sb_put_copies(sb, blk, sb_put, &t);
	}
	if (a->repl.dst) {
		sb_for_spare(a, -1, sb);
		t.dev = a->repl.dst;
		if (rc_sb_put_copies(sb, blk, sb_put, &t) < 0)
			atomic_store(&a->repl.failed, true);
	}
	return true;
}

int rc_sb_write_all(struct rc_array *a)
{
	struct rc_sb *sb = malloc(sizeof(*sb));
	uint8_t *blk = malloc(RC_BLOCK_SIZE), *back = malloc(RC_BLOCK_SIZE);
	bool failed = false;
	uint64_t base;
	int ret = 0;

	if (!sb || !blk || !back) {
		ret = -ENOMEM;
		goto out;
	}
	if (!rc_io_may_write(a))
		goto out;
	pthread_mutex_lock(&a->state_lock);
	/* After a round a crash cut short (members kept one behind), the
	 * first round completes it, at its events: a new one cut short by a
	 * second crash left those members two behind - stale, and a RAID 5
	 * whose last two slots they were refused to assemble for good (a
	 * tester's two kills in a row, the second in the mount's first
	 * round).  Members already at these events get the new contents. */
	/* An update is its events and its time (utime_ns): the round that
	 * completes a torn one keeps both, so that the assembly can tell two
	 * copies of the array run on their own, whose members reach the same
	 * events at different times (cands_one_history). */
	if (a->sb_torn) {
		base = a->sb.events - 1;
	} else {
		base = a->sb.events;
		a->sb.events++;
		a->sb.prev_utime_ns = a->sb.utime_ns;
		a->sb.utime_ns = rc_time_ns();
	}
	a->sb.journal_seq = a->jcheckpoint;
	while (!rc_array_suspended(a) &&
	       !sb_write_round(a, sb, blk, back, base))
		failed = true;
	if (!rc_array_suspended(a))
		a->sb_torn = false;
	if (rc_array_failed(a))
		ret = -EIO;
	if (failed) {
		/* rc_member_state_changed, with state_lock already held */
		a->state_changes++;
		pthread_cond_broadcast(&a->state_cond);
	}
	pthread_mutex_unlock(&a->state_lock);
out:
	free(sb);
	free(blk);
	free(back);
	return ret;
}

/* Does copy c of slot say it is what we last wrote there?  NULL if so,
 * else how it differs (into msg); *lie: it holds a superblock, but not the
 * one we wrote (older, newer, another member's or array's) - not damage
 * that a rewrite mends, but a device that does not keep what it is given,
 * or another one behind the name. */
static const char *sb_copy_differs(struct rc_array *a, int slot, uint32_t c,
				   uint8_t *blk, struct rc_sb *sb, char *msg,
				   size_t len, bool *lie)
{
	const struct rc_member *m = &a->m[slot];
	const char *why = NULL;

	*lie = false;
	if (rc_io_member_read(a, slot, rc_sb_copy_block(c, m->dev->size /
							  RC_BLOCK_SIZE),
			      1, blk) < 0)
		return "its superblock cannot be read";
	if (rc_sb_decode(blk, sb, &why) < 0)
		return "its superblock is gone (zeros, garbage or another "
		       "format where it was)";
	*lie = true;
	if (memcmp(sb->array_uuid, a->sb.array_uuid, RC_UUID_SIZE))
		return "it carries another array's superblock";
	if (memcmp(sb->member_uuid, m->uuid, RC_UUID_SIZE))
		return "it carries another member's superblock";
	if (sb->events == m->sb_events) {
		*lie = false;
		return NULL;
	}
	snprintf(msg, len, "its superblock is %s the one last written (events "
		 "%llu, written %llu): %s", sb->events < m->sb_events ?
		 "older than" : "newer than", (unsigned long long)sb->events,
		 (unsigned long long)m->sb_events, sb->events < m->sb_events ?
		 "writes were lost, or an old image was copied over it" :
		 "something else writes to it");
	return msg;
}

/* A damaged copy found while the array runs: counted on the member (an
 * unreadable one as a read error, as assembly counts them) and recorded. */
static void sb_damage_count(struct rc_array *a, int slot, const char *why)
{
	struct rc_member *m = &a->m[slot];

	if (strstr(why, "cannot be read"))
		atomic_fetch_add(&m->read_errors, 1);
	else
		atomic_fetch_add(&m->csum_errors, 1);
	atomic_store(&a->errors_seen, true);
}

/* Caller holds state_lock.  One member: true when one of its copies is
 * damaged but another vouches for it (the copies are then rewritten). */
static bool sb_check_member(struct rc_array *a, int slot, uint8_t *blk,
			    struct rc_sb *sb)
{
	struct rc_member *m = &a->m[slot];
	char msg[160], vwhy[224];
	bool lie;
	const char *why = sb_copy_differs(a, slot, 0, blk, sb, msg, sizeof(msg),
					  &lie);

	if (!why) {
		/* copy 0 is ours: the others (the end of the device too)
		 * must be as well */
		for (uint32_t c = 1; c < RC_SB_COPIES; c++) {
			why = sb_copy_differs(a, slot, c, blk, sb, msg,
					      sizeof(msg), &lie);
			if (!why)
				continue;
			if (lie)
				goto lied;
			rc_log("member %d (%s): superblock copy %u is damaged "
			       "(%s), copy 0 is intact: rewriting them", slot,
			       m->dev->name, c, why);
			sb_damage_count(a, slot, why);
			snprintf(vwhy, sizeof(vwhy), "superblock copy %u: %s",
				 c, why);
			rc_verify_want(a, slot, vwhy);
			return true;
		}
		return false;
	}
	/* An old (or foreign) superblock where ours was: an old image being
	 * put back, or writes dropped - whatever the other copies say (a copy
	 * at the far end may just not be overwritten yet). */
	for (uint32_t c = 1; c < RC_SB_COPIES && !lie; c++) {
		char other[160];
		bool olie;

		if (sb_copy_differs(a, slot, c, blk, sb, other, sizeof(other),
				    &olie))
			continue;
		rc_log("member %d (%s): superblock copy 0 is damaged (%s), copy "
		       "%u is intact: rewriting them", slot, m->dev->name, why, c);
		sb_damage_count(a, slot, why);
		snprintf(vwhy, sizeof(vwhy), "superblock copy 0: %s", why);
		rc_verify_want(a, slot, vwhy);
		return true;
	}
lied:
	snprintf(m->lie, sizeof(m->lie), "%s", why);
	atomic_fetch_or(&m->fault_pending, RC_PEND_IDENTITY);
	return false;
}

bool rc_sb_check_members(struct rc_array *a)
{
	struct rc_sb *sb = malloc(sizeof(*sb));
	uint8_t *blk = malloc(RC_BLOCK_SIZE);
	bool rewrite = false;

	if (!sb || !blk)
		goto out;
	pthread_mutex_lock(&a->state_lock);
	for (uint32_t i = 0; i < a->g.members; i++)
		if (rc_member_present(a, (int)i) && a->m[i].sb_events)
			rewrite |= sb_check_member(a, (int)i, blk, sb);
	pthread_mutex_unlock(&a->state_lock);
out:
	free(sb);
	free(blk);
	return rewrite;
}

/* One copy c of dev into sb: 0, or why not (dmg says which kind). */
static int sb_read_copy(struct rc_dev *dev, uint32_t c, uint8_t *blk,
			struct rc_sb *sb, const char **why,
			struct rc_sb_damage *dmg)
{
	uint64_t dev_blocks = dev->size / RC_BLOCK_SIZE;
	int r;

	if (dev_blocks < RC_SB_COPIES ||
	    rc_dev_read(dev, blk, RC_BLOCK_SIZE,
			rc_sb_copy_block(c, dev_blocks) * RC_BLOCK_SIZE) < 0) {
		*why = "cannot read the superblock";
		dmg->eio |= (uint8_t)(1u << c);
		return -EIO;
	}
	r = rc_sb_decode(blk, sb, why);
	if (r == 0 && sb->sb_copy != c) {
		*why = "superblock copy found at another copy's place";
		r = -EINVAL;
	}
	if (r < 0)
		dmg->bad |= (uint8_t)(1u << c);
	return r;
}

/* Do c and d name the same member of the same array? */
static bool sb_same_member(const struct rc_sb *c, const struct rc_sb *d)
{
	return !memcmp(c->array_uuid, d->array_uuid, RC_UUID_SIZE) &&
	       !memcmp(c->member_uuid, d->member_uuid, RC_UUID_SIZE);
}

/* Does dev's first checksum table block seal for the member sb names? */
static bool sb_tables_agree(struct rc_dev *dev, const struct rc_sb *sb,
			    uint8_t *blk)
{
	return rc_table_block_read_ok(dev, sb->array_uuid, sb->member_uuid,
				      sb->csum_offset, blk);
}

/*
 * Valid copies that name different members (another member's copied over
 * some of them): which is this device's?  The one its checksum tables
 * were written for, when exactly one is; else the one most copies name
 * (the first copy's on a tie).  One copied block refused the whole array
 * as swapped superblocks, and three copied over one left the wrong ones
 * in place while fsck said clean (V1).  Returns the copy to keep.
 */
static uint32_t sb_copies_vote(struct rc_dev *dev, const struct rc_sb *cp,
			       const bool *valid, uint8_t *blk)
{
	uint32_t pick = RC_SB_COPIES, votes = 0, sealed = 0, seal_pick = 0;

	for (uint32_t c = 0; c < RC_SB_COPIES; c++) {
		uint32_t v = 0;
		bool seen = false;

		if (!valid[c])
			continue;
		for (uint32_t d = 0; d < c && !seen; d++)
			seen = valid[d] && sb_same_member(&cp[c], &cp[d]);
		if (seen)
			continue;
		for (uint32_t d = c; d < RC_SB_COPIES; d++)
			v += valid[d] && sb_same_member(&cp[c], &cp[d]);
		if (pick == RC_SB_COPIES || v > votes) {
			pick = c;
			votes = v;
		}
		if (sb_tables_agree(dev, &cp[c], blk)) {
			sealed++;
			seal_pick = c;
		}
	}
	return sealed == 1 ? seal_pick : pick;
}

/* Reads the four copies and returns the valid one with the highest events.
 * A copy counts only where it belongs (its sb_copy is its position), and
 * only when it names the member the device's copies agree on
 * (sb_copies_vote); one naming another is damage (bad). */
int rc_sb_read_copies(struct rc_dev *dev, struct rc_sb *best,
		      const char **why, struct rc_sb_damage *dmg)
{
	uint8_t *blk = malloc(RC_BLOCK_SIZE);
	struct rc_sb *cp = calloc(RC_SB_COPIES, sizeof(*cp));
	uint64_t events[RC_SB_COPIES] = { 0 };
	bool valid[RC_SB_COPIES] = { false };
	int ret = -ENODATA, r;
	bool found = false, zero_best;
	uint32_t keep = 0;

	memset(dmg, 0, sizeof(*dmg));
	if (!blk || !cp) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t c = 0; c < RC_SB_COPIES; c++) {
		r = sb_read_copy(dev, c, blk, &cp[c], why, dmg);
		valid[c] = r == 0;
		if (!found && r < 0 && r != -ENODATA &&
		    (ret == -ENODATA || r == -EPROTONOSUPPORT))
			ret = r;
		if (r == 0 && !found)
			keep = c;
		found |= r == 0;
	}
	if (!found)
		goto out;
	for (uint32_t c = 0; c < RC_SB_COPIES; c++)
		if (valid[c] && !sb_same_member(&cp[c], &cp[keep])) {
			keep = sb_copies_vote(dev, cp, valid, blk);
			break;
		}
	for (uint32_t c = 0; c < RC_SB_COPIES; c++) {
		if (valid[c] && !sb_same_member(&cp[c], &cp[keep])) {
			valid[c] = false;
			dmg->bad |= (uint8_t)(1u << c);
			continue;
		}
		if (!valid[c])
			continue;
		events[c] = cp[c].events;
		if (cp[c].events > cp[keep].events)
			keep = c;
	}
	*best = cp[keep];
	ret = 0;
	zero_best = !((dmg->eio | dmg->bad) & 1) && events[0] == best->events;
	for (uint32_t c = 0; c < RC_SB_COPIES; c++) {
		if (((dmg->eio | dmg->bad) >> c & 1) ||
		    events[c] >= best->events)
			continue;
		if (c > 0 && zero_best && events[c] + 1 == best->events)
			dmg->torn |= (uint8_t)(1u << c);
		else
			dmg->old |= (uint8_t)(1u << c);
	}
out:
	free(blk);
	free(cp);
	return ret;
}

int rc_sb_read_best(struct rc_dev *dev, struct rc_sb *best, const char **why)
{
	struct rc_sb_damage dmg;

	return rc_sb_read_copies(dev, best, why, &dmg);
}
