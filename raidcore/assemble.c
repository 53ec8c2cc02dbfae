/*
 * assemble: from a heap of devices to a running array.
 *
 *   1. read every device's superblocks (the better of two copies)
 *   2. leave out devices that are not members, duplicates, and members of
 *      another array (the array is the uuid most devices carry)
 *   3. take the slot table of the newest superblock; place each device in
 *      its slot, leaving out stale ones
 *   4. refuse if some stripe would lose more columns than it can rebuild
 *   5. only then: start (array.c): replay the journal if the array was not
 *      closed cleanly, record missing members, mark the array active.
 *
 * Assembly trusts the newest superblock (highest events) among the members
 * of the chosen array for the slot table: a device whose slot is not active
 * there, or whose uuid is not in it, is stale and left out, even if its own
 * superblock claims otherwise.  A device active in its slot there whose own
 * superblock is behind (cand_is_stale) is stale too: left out and not
 * written, until an administrator adds it (stale_leave).  Nothing is
 * written before every check has passed.
 *
 * Superblocks are read straight from the devices (rc_sb_read_best): until
 * the members are chosen there is no array for io.c to work for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>
#include "array.h"

struct cand {
	struct rc_dev *dev;
	struct rc_sb sb;
	struct rc_sb_damage dmg;        /* its copies that are not sb */
	bool ok;
	bool shrunk;                    /* left out: smaller than it was */
	uint32_t back;                  /* slot + 1 it may catch up in, 0:
					   none (RC_ASSEMBLE_CATCHUP) */
	uint32_t left;                  /* slot + 1 it was left out of as
					   stale (said by left_say) */
	uint32_t stale;                 /* slot + 1 it was left out of as
					   stale, not written (stale_leave;
					   its name in stale_name) */
	const char *stale_name;
};

static void leave_out(struct cand *c, const char *why)
{
	rc_log("%s: left out: %s", c->dev->name, why);
	c->ok = false;
}


/* A device smaller than its superblock says was cut short (a partition
 * shrunk, an image truncated): its tail, the last superblock copies with
 * it, is gone, and a superblock written to it now would record the
 * smaller size as if nothing had happened.  It is left out, never
 * written. */
static bool cand_is_shrunk(struct cand *c)
{
	uint64_t now = c->dev->size / RC_BLOCK_SIZE;

	if (now >= c->sb.device_blocks)
		return false;
	rc_log("%s: left out: the device is smaller than its superblock says "
	       "(%llu blocks, was %llu): shrunk or truncated; it is not "
	       "written", c->dev->name, (unsigned long long)now,
	       (unsigned long long)c->sb.device_blocks);
	return true;
}

/* Step 1 and 2: 0, or -EPROTONOSUPPORT if some member is too new. */
static int cands_read(struct cand *c, int n, char *err, size_t len)
{
	const char *why = NULL;
	int ret;

	for (int i = 0; i < n; i++) {
		if (!c[i].dev)
			continue;
		for (int j = 0; j < i; j++) {
			if (c[j].dev && rc_dev_same(c[i].dev, c[j].dev)) {
				rc_log("%s: left out: the same device as %s",
				       c[i].dev->name, c[j].dev->name);
				goto next;
			}
		}
		ret = rc_sb_read_copies(c[i].dev, &c[i].sb, &why, &c[i].dmg);
		if (ret == -EPROTONOSUPPORT) {
			snprintf(err, len, "%s: %s", c[i].dev->name, why);
			return ret;
		}
		if (ret < 0) {
			rc_log("%s: left out: %s", c[i].dev->name,
			       ret == -ENODATA ? "not a raidfs member" : why);
			continue;
		}
		c[i].shrunk = cand_is_shrunk(&c[i]);
		c[i].ok = !c[i].shrunk;
next:;
	}
	return 0;
}

/*
 * Every member of an array carries the time mkfs made it (ctime_ns); a
 * spare or a rebuilt device gets the array's.  Members that carry the
 * array's uuid but another creation time are of an array made again with
 * the same uuid (mkfs -U): which creation the administrator means cannot
 * be told by events (the older one may have more), and taking the wrong
 * one would rebuild the other's members over, so nothing is assembled.
 */
static int one_creation(struct cand *c, int n, char *err, size_t len)
{
	int first = -1;

	for (int i = 0; i < n; i++) {
		if (!c[i].ok)
			continue;
		if (first < 0) {
			first = i;
		} else if (c[i].sb.ctime_ns != c[first].sb.ctime_ns) {
			snprintf(err, len, "%s and %s carry the same array uuid "
				 "but were made by different mkfs runs "
				 "(created %s): the array was created again "
				 "with its uuid; name the members of one "
				 "creation only", c[first].dev->name,
				 c[i].dev->name,
				 c[i].sb.ctime_ns < c[first].sb.ctime_ns ?
				 "the second one earlier" :
				 "the second one later");
			return -EINVAL;
		}
	}
	return 0;
}

/* The array uuid most candidates carry; -EINVAL on a tie. */
static int pick_array(struct cand *c, int n, unsigned flags, uint8_t *uuid,
		      char *err, size_t len)
{
	int best = -1, best_votes = 0, votes;
	bool tie = false;

	for (int i = 0; i < n; i++) {
		if (!c[i].ok)
			continue;
		votes = 0;
		for (int j = 0; j < n; j++)
			votes += c[j].ok && !memcmp(c[j].sb.array_uuid,
						    c[i].sb.array_uuid, 16);
		if (votes > best_votes) {
			best = i;
			best_votes = votes;
			tie = false;
		} else if (votes == best_votes &&
			   memcmp(c[best].sb.array_uuid, c[i].sb.array_uuid, 16)) {
			tie = true;
		}
	}
	if (best < 0) {
		snprintf(err, len, "no raidfs member among the devices given");
		return -ENODEV;
	}
	if (tie) {
		snprintf(err, len, "the devices belong to different arrays "
			 "in equal numbers; name the members of one array");
		return -EINVAL;
	}
	memcpy(uuid, c[best].sb.array_uuid, 16);
	for (int i = 0; i < n; i++) {
		if (!c[i].ok || !memcmp(c[i].sb.array_uuid, uuid, 16))
			continue;
		if (flags & RC_ASSEMBLE_NO_FOREIGN) {
			/* with every member there it stands for none: the
			 * degraded=allow advice would be wrong (T2 D2) */
			if (best_votes >= (int)c[best].sb.members)
				snprintf(err, len, "%s is a member of another "
					 "array, and this array's %u members "
					 "are all there without it: a mistyped "
					 "path? Nothing was written. Take it "
					 "out of SOURCE", c[i].dev->name,
					 c[best].sb.members);
			else
				snprintf(err, len, "%s is a member of another "
					 "array: a mistyped path? Nothing was "
					 "written. To run without the member "
					 "it stands for (degraded), add -o "
					 "degraded=allow", c[i].dev->name);
			return -EINVAL;
		}
		leave_out(&c[i], "member of another array");
	}
	return one_creation(c, n, err, len);
}

static int newest(struct cand *c, int n)
{
	int best = -1;

	for (int i = 0; i < n; i++)
		if (c[i].ok && (best < 0 || c[i].sb.events > c[best].sb.events))
			best = i;
	return best;
}

/* Is slot s a member slot whose device is in use (active, or being
 * rebuilt) in the slot table t? */
static bool slot_live(const struct rc_sb *t, uint32_t s)
{
	return s < t->members && s < RC_SB_SLOTS &&
	       (t->slots[s].state == RC_MEMBER_ACTIVE ||
		t->slots[s].state == RC_MEMBER_REBUILDING);
}

/* Which live slot of t, other than c's own, do c's checksum tables seal
 * for?  -1 when none does, or when any block sampled (the first, the
 * middle and the last of its table) seals for c's own member: a
 * superblock swapped in leaves every table block sealed for the member it
 * came from (creation seals them all), while one block copied over from
 * another member is damage to that block alone (a tester's find: one
 * such block refused the whole array).  A block that cannot be read
 * tells nothing. */
static int tables_sealed_for(const struct cand *c, const struct rc_sb *t,
			     uint8_t *blk)
{
	uint64_t nb = c->sb.csum_blocks, pick[3] = { 0, nb / 2, nb - 1 };
	int other = -1;

	for (int k = 0; k < 3 && nb; k++) {
		uint64_t tb = c->sb.csum_offset + pick[k];

		if ((tb + 1) * RC_BLOCK_SIZE > c->dev->size ||
		    rc_dev_read(c->dev, blk, RC_BLOCK_SIZE,
				tb * RC_BLOCK_SIZE) < 0)
			continue;
		if (rc_csum_block_ok(blk, rc_table_seed(c->sb.array_uuid,
							c->sb.member_uuid),
				     tb))
			return -1;
		for (uint32_t s = 0; other < 0 && s < t->members; s++)
			if (s != c->sb.role && slot_live(t, s) &&
			    rc_csum_block_ok(blk, rc_table_seed(c->sb.array_uuid,
								t->slots[s].uuid),
					     tb))
				other = (int)s;
	}
	return other;
}

/* Does own, a member's superblock behind newest, call every slot newest
 * has in use (its own slot aside) missing or faulty: a history of its
 * own (cand_diverged, below)? */
static bool sb_diverged(const struct rc_sb *newest, const struct rc_sb *own)
{
	bool apart = false;

	for (uint32_t s = 0; s < newest->members && s < RC_SB_SLOTS; s++) {
		enum rc_member_state n = newest->slots[s].state;
		enum rc_member_state m = own->slots[s].state;

		if (s == own->role || (n != RC_MEMBER_ACTIVE &&
				       n != RC_MEMBER_REBUILDING))
			continue;
		if (m == RC_MEMBER_ACTIVE || m == RC_MEMBER_REBUILDING)
			return false;   /* own was with it: one history */
		apart = true;
	}
	return apart;
}

/* Two devices holding one member: those whose superblock is behind the
 * newest holder's are old copies (a dd copy of the member made earlier,
 * a device whose superblocks were copied over from the member while the
 * array ran on) and are left out, as mdadm leaves out a device whose
 * event count is behind its member's (a tester's find: superblocks
 * copied over a member of a running array, which faulted it, refused
 * every later assembly).  Each is compared with the newest holder, not
 * with another copy: two copies alike beside the member refused by the
 * order they were named in (V1).  One that ran without the slots the
 * newest runs with may hold a history of its own (a split brain: its
 * events count its own updates, not its age): left out too, and said so.
 * Two newest holders at equal events cannot be told apart: nothing is
 * assembled. */
static int cands_one_each(struct cand *c, int n, char *err, size_t len)
{
	for (int i = 0; i < n; i++) {
		char who[32] = "a spare", why[800];
		int best = i;

		if (!c[i].ok)
			continue;
		for (int j = 0; j < n; j++)
			if (c[j].ok && j != i &&
			    !memcmp(c[i].sb.member_uuid, c[j].sb.member_uuid,
				    RC_UUID_SIZE) &&
			    c[j].sb.events > c[best].sb.events)
				best = j;
		if (c[i].sb.role < RC_MAX_MEMBERS)
			snprintf(who, sizeof(who), "member %u", c[i].sb.role);
		for (int j = 0; j < n; j++) {
			if (!c[j].ok || j == best ||
			    memcmp(c[best].sb.member_uuid, c[j].sb.member_uuid,
				   RC_UUID_SIZE))
				continue;
			if (c[j].sb.events == c[best].sb.events) {
				snprintf(err, len, "%s and %s both hold %s of "
					 "the array (a copy of one over the "
					 "other?): which one is the real one "
					 "cannot be told. Nothing was written; "
					 "name only the real one",
					 c[best].dev->name, c[j].dev->name,
					 who);
				return -EINVAL;
			}
			snprintf(why, sizeof(why), "%s %s (events %llu; %s "
				 "holds it at %llu)%s",
				 sb_diverged(&c[best].sb, &c[j].sb) ?
				 "an older device of" : "an old copy of", who,
				 (unsigned long long)c[j].sb.events,
				 c[best].dev->name,
				 (unsigned long long)c[best].sb.events,
				 sb_diverged(&c[best].sb, &c[j].sb) ?
				 ", which ran without the members the other "
				 "runs with: a SPLIT BRAIN? Its writes are not "
				 "in this array; to keep them, mount it alone "
				 "(-o degraded=allow) and copy them off" : "");
			leave_out(&c[j], why);
		}
	}
	return 0;
}

/* Members at the newest events whose superblocks were written by another
 * update (another utime_ns: every member of one update carries the same,
 * super.c) come from another history: a copy of the whole array (a
 * backup, a cloned disk set) mounted and written on its own the same
 * number of times.  Taken together they served a mix of both histories
 * and fsck called it clean (a tester's find, x1).  Nothing is assembled.
 * A member one update behind (a crash during the update leaves a suffix
 * of the slots so) must carry the update before's time, which the newest
 * superblock keeps (prev_utime_ns, 2.7; 0 from an older writer: not
 * asked). */
static int cands_one_history(struct cand *c, int n, char *err, size_t len)
{
	int nb = newest(c, n);

	for (int i = 0; nb >= 0 && i < n; i++) {
		const struct rc_sb *x = &c[i].sb, *t = &c[nb].sb;
		const char *how;

		/* one that ran without the newest's slots is a split
		 * brain's other side, left out at its placement (t215) */
		if (!c[i].ok || x->role >= t->members || sb_diverged(t, x))
			continue;
		if (x->events == t->events && x->utime_ns != t->utime_ns)
			how = "carries the same update of the array as";
		else if (x->events + 1 == t->events && t->prev_utime_ns &&
			 x->utime_ns != t->prev_utime_ns)
			how = "is one update behind, but not the update before,";
		else
			continue;
		snprintf(err, len, "%s %s %s (events %llu), written apart: "
			 "members of two copies of the array, each mounted and "
			 "written on its own (a SPLIT BRAIN). Nothing was "
			 "written; name the members of one copy only",
			 c[i].dev->name, how, c[nb].dev->name,
			 (unsigned long long)t->events);
		return -EINVAL;
	}
	return 0;
}

/*
 * Is each device the member its superblock says?  Two devices holding one
 * member at equal events (a dd copy, a loop device over a member image
 * also named; the one behind is left out: cands_one_each), or a
 * device whose checksum tables seal for another slot's member
 * (the seal is keyed by the member's uuid, so that block was written for
 * that member: superblocks swapped or copied between members), cannot be
 * placed by their superblocks: taking one for the other reads every block
 * of both as damaged, and a repair then writes that judgment over the
 * data (a tester's find: fsck -y left a RAID 5 unmountable, a RAID 1 with
 * nothing readable).  Nothing is assembled; a table block that seals for
 * no member is damage, left to the table's own checks.  Only a device the
 * newest slot table has in use in its slot is asked, and only about the
 * members in use: a former member added back as a spare under a new uuid
 * keeps its old member's tables until its rebuild writes them.
 */
static int cands_identity(struct cand *c, int n, char *err, size_t len)
{
	const struct rc_sb *t;
	uint8_t *blk = rc_buf_alloc(RC_BLOCK_SIZE);
	int nb, ret;

	if (!blk)
		return -ENOMEM;
	ret = 0;
	nb = newest(c, n);
	t = nb < 0 ? NULL : &c[nb].sb;
	for (int i = 0; t && ret == 0 && i < n; i++) {
		int s;

		if (!c[i].ok || !slot_live(t, c[i].sb.role) ||
		    memcmp(t->slots[c[i].sb.role].uuid, c[i].sb.member_uuid,
			   RC_UUID_SIZE))
			continue;
		s = tables_sealed_for(&c[i], t, blk);
		if (s >= 0) {
			snprintf(err, len, "%s: its superblock says member %u, "
				 "but its checksum tables were written for "
				 "member %d: superblocks swapped or copied "
				 "between members. Nothing was written; leave "
				 "it out to run without it (degraded)",
				 c[i].dev->name, c[i].sb.role, s);
			ret = -EINVAL;
		}
	}
	if (ret == 0)
		ret = cands_one_each(c, n, err, len);
	if (ret == 0)
		ret = cands_one_history(c, n, err, len);
	free(blk);
	return ret;
}

/* Is candidate i, in the slot its superblock and the newest slot table
 * agree on, behind the others?  Every superblock update bumps events on
 * every member, written in slot order (super.c), so a crash during one
 * leaves a suffix of the slots one behind, current in all else (mdadm's
 * event margin of 1, narrowed to that suffix).  Anything else behind is an
 * old copy of the member or a member that lost writes: its blocks verify
 * against its own old tables, so it must not be read. */
static bool cand_is_stale(const struct cand *c, int n, int i,
			  const struct rc_sb *t)
{
	if (c[i].sb.events >= t->events)
		return false;
	if (c[i].sb.events + 1 < t->events)
		return true;
	for (int j = 0; j < n; j++)
		if (c[j].ok && c[j].sb.role > c[i].sb.role &&
		    c[j].sb.role < t->members && c[j].sb.events == t->events)
			return true;
	return false;
}

/* Did replay find the member of this uuid stale (rc_array_assemble)? */
static bool found_stale(const struct rc_array *a, const uint8_t *uuid)
{
	for (int k = 0; k < a->nstale; k++)
		if (!memcmp(a->stale_uuid[k], uuid, RC_UUID_SIZE))
			return true;
	return false;
}

/* c's device joins the spares as a new device (a new member uuid): it is
 * rebuilt in full into the first slot that needs one. */
static bool take_as_spare(struct rc_array *a, struct cand *c)
{
	if (a->nspares >= RC_MAX_SPARES)
		return false;
	a->spare[a->nspares] = c->dev;
	a->spare_sb[a->nspares] = c->sb;
	a->spare_sb[a->nspares].role = RC_ROLE_SPARE;
	uuid_generate(a->spare_sb[a->nspares++].member_uuid);
	c->dev = NULL;
	return true;
}

/*
 * Does one end of c hold an older image of it?  Both superblock copies at
 * the front (0, 1), or both at the end (2, 3), are valid but older than
 * its best - not a torn update, which writes copy 0 first and leaves the
 * others at most one behind it.  An old image of a member copied back
 * over part of the device (dd of a saved front, a restore cut short)
 * brings its old checksum tables along with its old blocks: they verify
 * against each other, and the current copies at the other end made the
 * member look current.  Until 2026-12-06 it was taken as such and read: a
 * RAID 1 file read back as its previous version with no error (found
 * while testing, `test_old_image_half`).  One copy alone older (that
 * block damaged, or a copy written back by hand) is damage, rewritten.
 */
static bool cand_old_image(const struct cand *c)
{
	return (c->dmg.old & 0x3) == 0x3 || (c->dmg.old & 0xc) == 0xc;
}

/*
 * A stale member is left out of its slot, and not written: the slot reads
 * through reconstruction, and the device is rebuilt only when an
 * administrator adds it (raidfsctl add, fsck --rebuild), as mdadm kicks a
 * non-fresh device and writes it only on --add or --re-add.  It was taken
 * as a spare and rebuilt at once: an old copy of a member named by mistake
 * (m3.img.bak for m3.img) was overwritten, and the real member, named at
 * the next mount, no longer had a slot (a tester's find).
 */
static void stale_leave(struct rc_array *a, struct cand *c, uint32_t s)
{
	if (cand_old_image(c))
		rc_log("%s: stale: its superblock copies %s are older than the "
		       "copies at its other end: part of it holds an older "
		       "image of member %u (copied back over it?)",
		       c->dev->name, (c->dmg.old & 0x3) == 0x3 ?
		       "0 and 1, at its start," : "2 and 3, at its end,", s);
	else
		rc_log("%s: stale: its superblock is %llu updates behind the "
		       "newest (events %llu, newest %llu): an old copy of "
		       "member %u, or a disk that lost writes", c->dev->name,
		       (unsigned long long)(a->sb.events - c->sb.events),
		       (unsigned long long)c->sb.events,
		       (unsigned long long)a->sb.events, s);
	rc_log("%s: left out and not written: slot %u runs without it. If it "
	       "is the member's own disk, rebuild it in full (raidfsctl add "
	       "%s on the mount, or fsck.raidfs -y --rebuild %s)",
	       c->dev->name, s, c->dev->name, c->dev->name);
	/* Counted as the writes it lost, on the slot; and recorded: the
	 * next fsck checks in full. */
	atomic_store(&a->errors_seen, true);
	atomic_fetch_add(&a->m[s].write_errors, 1);
	a->m[s].stale_copy = true;
	c->stale = s + 1;
	c->stale_name = c->dev->name;
}

/*
 * Was c never in sync with its slot?  Its own superblock, at its last
 * update, has the slot rebuilding in full (not a catch-up): c left in the
 * middle of a rebuild onto it, and all past the rebuild's position is
 * unwritten, its checksum tables sealed "never written".  The
 * write-intent record covers only what changed while it was away, so a
 * catch-up would call the slot in sync with most of it never rebuilt.
 * (While the newest superblock still has it rebuilding, place() resumes
 * that rebuild; this is the case of a mount made without it since.)
 */
static bool cand_unsynced(const struct cand *c)
{
	return rc_sb_rebuild_unfinished(&c->sb);
}

static void unsynced_to_spare(struct rc_array *a, struct cand *c, uint32_t s)
{
	rc_log("%s: slot %u's rebuild onto it had not finished when it left "
	       "(a mount was made without it since): it is not in sync, and "
	       "is %s", c->dev->name, s, a->nspares < RC_MAX_SPARES ?
	       "taken as a spare to rebuild the slot again in full" :
	       "left out (no room for another spare)");
	take_as_spare(a, c);
}

/* Appends "copies 0 1 what" to buf (at off) if mask names any copy. */
static size_t damage_part(char *buf, size_t len, size_t off, uint8_t mask,
			  const char *what)
{
	if (!mask)
		return off;
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "%scopies",
					off ? "; " : "");
	for (uint32_t c = 0; c < RC_SB_COPIES; c++)
		if (mask >> c & 1 && off < len)
			off += (size_t)snprintf(buf + off, len - off, " %u", c);
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, " %s", what);
	return off;
}

/* Slot s's device had damaged superblock copies: told and counted on the
 * member, which makes the next superblock write (the array's first write,
 * never a read-only assembly's) carry the ERRORS flag and rewrite every
 * copy from the template. */
static void sb_damage_note(struct rc_array *a, uint32_t s,
			   const struct cand *c)
{
	const struct rc_sb_damage *d = &c->dmg;
	char msg[128], why[160];
	size_t off = 0;

	if (d->torn && !(d->eio | d->bad | d->old))
		rc_log("member %u (%s): superblock copies one update behind "
		       "copy 0 (a write cut short by the crash): rewritten at "
		       "the array's first write", s, c->dev->name);
	if (!(d->eio | d->bad | d->old))
		return;
	off = damage_part(msg, sizeof(msg), off, d->eio, "unreadable");
	off = damage_part(msg, sizeof(msg), off, d->bad,
			  "invalid (zeros, garbage, another member's)");
	damage_part(msg, sizeof(msg), off, d->old, "older than the others");
	rc_log("member %u (%s): superblock %s; copy %u is good: the others "
	       "are rewritten at the array's first write", s, c->dev->name,
	       msg, c->sb.sb_copy);
	atomic_fetch_add(&a->m[s].read_errors,
			 (uint64_t)__builtin_popcount(d->eio));
	atomic_fetch_add(&a->m[s].csum_errors,
			 (uint64_t)__builtin_popcount(d->bad | d->old));
	atomic_store(&a->errors_seen, true);
	/* What wiped or overwrote those copies may have reached the rest of
	 * the member: it is verified before it is trusted as redundancy. */
	snprintf(why, sizeof(why), "superblock %s", msg);
	pthread_mutex_lock(&a->state_lock);
	rc_verify_want(a, (int)s, why);
	pthread_mutex_unlock(&a->state_lock);
}

/* Is candidate i slot s's former member that may catch up (a write-intent
 * record decides after the start), rather than stale?  Only a member that
 * was missing: one the array found faulty (errors, lies) comes back only
 * when an administrator says so (rc_member_readd), and one the newest
 * superblocks call active although its own is behind lost writes. */
static bool cand_may_return(const struct cand *c, int i, uint32_t s,
			    const struct rc_slot *sl, bool catchup)
{
	return catchup && c[i].sb.role == s && sl->state == RC_MEMBER_MISSING &&
	       !(sl->flags & (RC_SLOT_DAMAGED | RC_SLOT_REMOVED)) &&
	       !cand_unsynced(&c[i]);
}

/*
 * A spare entry that is an online replacement's target (RC_SLOT_F_REPLACING)
 * becomes the replacement again, its copy resumed by the recovery thread:
 * from its recorded position after a clean close, from the start after a
 * crash, whose replayed journal reaches the slot's device only.  Its slot
 * is taken only later (place fills slots in order), so it is checked
 * when the copy starts (replace.c).
 */
static bool repl_take(struct rc_array *a, const struct rc_slot *sl,
		      struct rc_dev *dev)
{
	uint32_t slot = sl->flags & RC_SLOT_F_TARGET;

	if (!(sl->flags & RC_SLOT_F_REPLACING) || a->repl.dst ||
	    slot >= a->sb.members)
		return false;
	a->repl.dst = dev;
	a->repl.slot = (int)slot;
	memcpy(a->repl.uuid, sl->uuid, RC_UUID_SIZE);
	atomic_store(&a->repl.pos, a->sb.array_state == RC_STATE_CLEAN ?
		     sl->rebuild_pos : 0);
	return true;
}

/* A slot whose device was left out because it shrank lost its tail: it
 * returns only by a full rebuild (RC_SLOT_DAMAGED, once the slot is
 * recorded missing).  Caught up on the regions written meanwhile, as a
 * member that was merely absent is, the device came back at its full
 * size with its tail zeroed, the array said clean, and the next member
 * lost took files with it (a tester's find). */
static void shrunk_mark(struct rc_array *a, const struct cand *c, int n)
{
	for (int i = 0; i < n; i++)
		for (uint32_t s = 0; c[i].shrunk && s < a->sb.members; s++)
			if (!a->m[s].dev && !memcmp(c[i].sb.member_uuid,
						    a->sb.slots[s].uuid,
						    RC_UUID_SIZE))
				a->m[s].damaged = true;
}

/* Step 3: fills a->m[] and the spares from the newest slot table. */
static void place(struct rc_array *a, struct cand *c, int n, bool catchup)
{
	const struct rc_sb *t = &a->sb;

	for (uint32_t s = 0; s < t->members + t->nspares; s++) {
		const struct rc_slot *sl = &t->slots[s];

		if (s < t->members) {
			memcpy(a->m[s].uuid, sl->uuid, RC_UUID_SIZE);
			a->m[s].state = sl->state == RC_MEMBER_ACTIVE ||
					sl->state == RC_MEMBER_REBUILDING ?
					RC_MEMBER_MISSING : sl->state;
			a->m[s].rebuild_pos = sl->rebuild_pos;
			a->m[s].damaged = (sl->state == RC_MEMBER_FAULTY ||
					   sl->state == RC_MEMBER_MISSING) &&
					  (sl->flags & RC_SLOT_DAMAGED);
			a->m[s].removed = sl->state == RC_MEMBER_MISSING &&
					  (sl->flags & RC_SLOT_REMOVED);
		}
		for (int i = 0; i < n; i++) {
			if (!c[i].ok || memcmp(c[i].sb.member_uuid, sl->uuid, 16))
				continue;
			if (s >= t->members) {
				if (sl->state == RC_MEMBER_SPARE &&
				    repl_take(a, sl, c[i].dev)) {
					c[i].dev = NULL;
				} else if (sl->state == RC_MEMBER_SPARE &&
				    a->nspares < RC_MAX_SPARES) {
					a->spare[a->nspares] = c[i].dev;
					a->spare_sb[a->nspares++] = c[i].sb;
					c[i].dev = NULL;
				}
			} else if ((sl->state == RC_MEMBER_ACTIVE ||
				    sl->state == RC_MEMBER_REBUILDING) &&
				   c[i].sb.role == s && !a->m[s].dev &&
				   (cand_is_stale(c, n, i, t) ||
				    found_stale(a, sl->uuid) ||
				    cand_old_image(&c[i]))) {
				stale_leave(a, &c[i], s);
			} else if ((sl->state == RC_MEMBER_ACTIVE ||
				    sl->state == RC_MEMBER_REBUILDING) &&
				   c[i].sb.role == s && !a->m[s].dev) {
				a->m[s].dev = c[i].dev;
				a->m[s].state = sl->state;
				a->m[s].catchup = sl->state == RC_MEMBER_REBUILDING &&
						  (sl->flags & RC_SLOT_CATCHUP);
				a->m[s].jtail = c[i].sb.journal_tail;
				a->m[s].one_behind = c[i].sb.events + 1 ==
						     t->events;
				a->sb_torn |= a->m[s].one_behind;
				/* the device's own counters go on */
				rc_member_counts_load(&a->m[s], &c[i].sb);
				sb_damage_note(a, s, &c[i]);
				if (sl->flags & RC_SLOT_UNVERIFIED &&
				    sl->state == RC_MEMBER_ACTIVE) {
					pthread_mutex_lock(&a->state_lock);
					rc_verify_want(a, (int)s, "found damaged "
						       "before, and not verified "
						       "since (recorded on the "
						       "members)");
					pthread_mutex_unlock(&a->state_lock);
				}
				c[i].dev = NULL;
			} else if (!a->m[s].dev &&
				   cand_may_return(c, i, s, sl, catchup)) {
				c[i].back = s + 1;
			} else if (!a->m[s].dev && c[i].sb.role == s &&
				   sl->state == RC_MEMBER_MISSING &&
				   !(sl->flags & (RC_SLOT_DAMAGED |
						  RC_SLOT_REMOVED)) &&
				   cand_unsynced(&c[i])) {
				unsynced_to_spare(a, &c[i], s);
			} else {
				c[i].left = s + 1;
			}
			c[i].ok = false;
		}
	}
	for (int i = 0; i < n; i++)
		if (c[i].ok)
			leave_out(&c[i], "no longer in the array's slot table");
	/* an online replacement whose target was not given ends here: said,
	 * not dropped in silence (a tester's find) */
	for (uint32_t s = t->members; s < t->members + t->nspares &&
	     s < RC_SB_SLOTS; s++) {
		const struct rc_slot *sl = &t->slots[s];
		char u[37];

		if (!(sl->flags & RC_SLOT_F_REPLACING) || a->repl.dst)
			continue;
		uuid_unparse(sl->uuid, u);
		rc_log("the online replacement of slot %u (its target, member "
		       "%s, was not given) is cancelled: the slot keeps its "
		       "device. To go on with it, name the target in SOURCE "
		       "(beside the member it replaces) until it finishes",
		       sl->flags & RC_SLOT_F_TARGET, u);
	}
	/* writes below the recorded position go on reaching the target */
	if (a->repl.dst)
		a->repl.src = a->m[a->repl.slot].dev;
}

/*
 * Did c's array run on a history of its own?  Each superblock update
 * reaches every member present, so within one history a member that left
 * still calls active those it was with at its last update, and the
 * newest superblock's active members (whoever is present now) carry that
 * history on.  c's own superblock calling every slot the newest one has
 * active missing or faulty means c was assembled without all of them, as
 * they were without it: two histories, a split brain (each side mounted
 * degraded on its own and written).  A slot whose member changed since
 * counts too: c ran without that slot's member, which the newest history
 * then replaced.  Its writes are in no superblock of this side; a rebuild
 * or a catch-up would destroy them.
 *
 * Without a history id in the superblocks this cannot see everything: a
 * member whose history went on through another that has left since
 * (RAID 1 of 3: a with b, b with c, c mounted alone, then a back) looks
 * diverged; a side that replaced the slot it ran without (its table
 * names the new member active) does not.
 */
/* After rc_array_init (the write-intent record read). */
static bool cand_diverged(struct rc_array *a, const struct cand *c)
{
	return sb_diverged(&a->sb, &c->sb) || rc_wi_other_history(a, &c->sb);
}

/* Notes c as a split brain's other side (rc_array_split_member). */
static void split_note(struct rc_array *a, const struct cand *c, uint32_t s)
{
	rc_log("%s: left out: SPLIT BRAIN - its own superblock (events %llu) "
	       "says slot %u ran without every member this array runs on, as "
	       "they ran without it: each side may have been mounted on its "
	       "own and written, and its writes are not in this array. It is "
	       "never rebuilt or caught up over unless named: to keep its "
	       "writes, mount it alone (-o degraded=allow) and copy them off; "
	       "if it was only away (stale), rebuild it (raidfsctl add, or "
	       "fsck.raidfs -y --rebuild %s)", c->dev->name,
	       (unsigned long long)c->sb.events, s, c->dev->name);
	if (a->nsplit < RC_MAX_MEMBERS)
		memcpy(a->split[a->nsplit++], c->sb.member_uuid, RC_UUID_SIZE);
}

/* What place() left out as stale, said once every slot is placed. */
static void left_say(struct rc_array *a, struct cand *c, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t s = c[i].left - 1;

		if (!c[i].left || !c[i].dev)
			continue;
		/* the record is not read yet (rc_array_init): the slot tables
		 * alone */
		if (sb_diverged(&a->sb, &c[i].sb))
			split_note(a, &c[i], s);
		else if (a->m[s].removed && !memcmp(c[i].sb.member_uuid,
						    a->m[s].uuid, RC_UUID_SIZE))
			rc_log("%s: left out: slot %u's member, removed by an "
			       "administrator (raidfsctl remove): it comes back "
			       "only when added again (raidfsctl add)",
			       c[i].dev->name, s);
		else
			rc_log("%s: left out: stale (slot %u is %s in the "
			       "newest superblock)", c[i].dev->name, s,
			       a->m[s].dev && a->sb.slots[s].state ==
			       RC_MEMBER_ACTIVE ? "taken" :
			       rc_member_state_name(a->sb.slots[s].state));
	}
}

/* A refusal names the devices given for slots it counts missing that
 * were left out as stale (it said only "slot 3 ... missing": a tester's
 * find). */
static void left_name(const struct cand *c, int n, char *err, size_t len)
{
	size_t off = strlen(err);

	for (int i = 0; i < n && off < len; i++) {
		if (c[i].left && c[i].dev)
			off += (size_t)snprintf(err + off, len - off,
						"; %s was given for slot %u "
						"but is stale (left out above)",
						c[i].dev->name, c[i].left - 1);
		else if (c[i].stale)
			off += (size_t)snprintf(err + off, len - off,
						"; %s was given for slot %u "
						"but is stale (above)",
						c[i].stale_name, c[i].stale - 1);
		else if (c[i].back && c[i].dev)
			off += (size_t)snprintf(err + off, len - off,
						"; %s was given for slot %u "
						"but missed writes (it catches "
						"up on them while the array "
						"runs, which needs every other "
						"slot there and no "
						"degraded=refuse)",
						c[i].dev->name, c[i].back - 1);
	}
}

bool rc_array_split_member(const struct rc_array *a, const uint8_t *uuid)
{
	for (int i = 0; i < a->nsplit; i++)
		if (!memcmp(a->split[i], uuid, RC_UUID_SIZE))
			return true;
	return false;
}

/* Step 5, after the start (replay done, nothing written): a former member
 * whose absence the write-intent record covers takes its slot back as a
 * catch-up; one it does not cover is left out, stale, as before. */
static void returning_place(struct rc_array *a, struct cand *c, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t s = c[i].back - 1;

		if (!c[i].back || !c[i].dev)
			continue;
		if (cand_diverged(a, &c[i])) {
			split_note(a, &c[i], s);
		} else if (!a->m[s].dev && rc_wi_covers(a, &c[i].sb) &&
			   !rc_wi_tables_whole(a, (int)s, c[i].dev, &c[i].sb)) {
			rc_log("%s: left out: rebuild it in full (raidfsctl add "
			       "%s on the mount, or fsck.raidfs -y --rebuild %s)",
			       c[i].dev->name, c[i].dev->name, c[i].dev->name);
		} else if (!a->m[s].dev && rc_wi_covers(a, &c[i].sb)) {
			rc_member_catchup_begin(a, (int)s, c[i].dev, &c[i].sb);
			rc_csum_drop_slot(a, (int)s);
			c[i].dev = NULL;
		} else {
			rc_log("%s: left out: stale (slot %u is missing in the "
			       "newest superblock, and the write-intent record "
			       "does not cover its absence)", c[i].dev->name, s);
		}
	}
}

/* Step 4: a message naming every missing slot. */
static int check_missing(struct rc_array *a, unsigned flags, char *err,
			 size_t len)
{
	bool gone[RC_MAX_MEMBERS] = { false }, any = false;
	size_t off;
	char u[37];

	/* A slot rebuilding onto a device is not missing: not in sync. */
	off = (size_t)snprintf(err, len, "degraded:");
	for (uint32_t s = 0; s < a->g.members; s++) {
		gone[s] = !a->m[s].dev || a->m[s].state != RC_MEMBER_ACTIVE;
		if (!gone[s])
			continue;
		uuid_unparse(a->m[s].uuid, u);
		if (off < len && a->m[s].dev &&
		    a->m[s].state == RC_MEMBER_REBUILDING)
			off += (size_t)snprintf(err + off, len - off,
						"%s slot %u (member %s) "
						"rebuilding onto %s",
						any ? "," : "", s, u,
						a->m[s].dev->name);
		else if (off < len)
			off += (size_t)snprintf(err + off, len - off,
						"%s slot %u (member %s) %s",
						any ? "," : "", s, u,
						rc_member_state_name(a->m[s].dev ?
							   a->m[s].state :
							   RC_MEMBER_MISSING));
		any = true;
	}
	if (any && (flags & RC_ASSEMBLE_NO_DEGRADED)) {
		if (off < len)
			snprintf(err + off, len - off,
				 "; not assembling degraded as asked");
		return -ENODEV;
	}
	if (a->g.level == RC_RAID0 ? any : rc_array_failed(a)) {
		if (off < len)
			snprintf(err + off, len - off,
				 "; more than %s %s can do without",
				 rc_level_name(a->g.level),
				 a->g.level == RC_RAID1 ? "(all copies)" :
				 "redundancy");
		return -ENODEV;
	}
	if (!any)
		err[0] = 0;
	return 0;
}

/* One assembly; stale: nstale member uuids to take as stale, and where
 * the one replay finds stale goes (-ESTALE). */
static int assemble_once(struct rc_dev **devs, int n, unsigned flags,
			 uint8_t (*stale)[RC_UUID_SIZE], int nstale,
			 struct rc_array **out, char *err, size_t errlen)
{
	struct cand *c = calloc((size_t)(n ? n : 1), sizeof(*c));
	struct rc_array *a = calloc(1, sizeof(*a));
	uint8_t uuid[16];
	int ret, nb;

	err[0] = 0;
	if (!c || !a) {
		ret = -ENOMEM;
		goto fail;
	}
	a->stale_uuid = (const uint8_t (*)[RC_UUID_SIZE])stale;
	a->nstale = nstale;
	for (int i = 0; i < n; i++)
		c[i].dev = devs[i];
	ret = cands_read(c, n, err, errlen);
	if (ret == 0)
		ret = pick_array(c, n, flags, uuid, err, errlen);
	if (ret == 0)
		ret = cands_identity(c, n, err, errlen);
	if (ret < 0)
		goto fail;
	nb = newest(c, n);
	a->sb = c[nb].sb;
	/* The speed limits an administrator set are kept (rebuild.c). */
	atomic_store(&a->rebuild_min_kib, a->sb.admin.rebuild_min_kib);
	atomic_store(&a->rebuild_max_kib, a->sb.admin.rebuild_max_kib);
	if (a->sb.feature_ro_compat & ~RC_FEATURE_RO_COMPAT_SUPP)
		flags |= RC_ASSEMBLE_RDONLY;
	place(a, c, n, (flags & RC_ASSEMBLE_CATCHUP) &&
	      !(flags & RC_ASSEMBLE_RDONLY));
	shrunk_mark(a, c, n);
	left_say(a, c, n);
	a->g.members = a->sb.members;
	a->g.level = a->sb.level;
	a->g.chunk_blocks = a->sb.chunk_blocks;
	a->g.member_blocks = a->sb.member_blocks;
	a->g.layout = a->sb.layout;
	ret = check_missing(a, flags, err, errlen);
	if (ret == -ENODEV)
		left_name(c, n, err, errlen);
	if (ret < 0)
		goto fail_placed;
	if (err[0])
		rc_log("%s", err);
	ret = rc_array_init(a, flags);
	if (ret == 0)
		ret = rc_array_start(a);
	if (ret == 0)
		returning_place(a, c, n);
	if (ret == -ESTALE)
		memcpy(stale[nstale], a->m[a->stale_slot].uuid, RC_UUID_SIZE);
	if (ret < 0) {
		snprintf(err, errlen, "starting the array failed: %s",
			 strerror(-ret));
		goto fail_placed;
	}
	for (int i = 0; i < n; i++)
		rc_dev_close(c[i].dev);
	free(c);
	*out = a;
	return 0;

fail_placed:
	/* Devices placed in the array go back to the caller's list. */
	for (uint32_t s = 0; s < RC_MAX_MEMBERS; s++)
		a->m[s].dev = NULL;
	for (int i = 0; i < a->nspares; i++)
		a->spare[i] = NULL;
	a->nspares = 0;
	a->repl.dst = NULL;
	rc_array_free(a);
	a = NULL;
fail:
	free(c);
	free(a);
	return ret;
}

/*
 * A member kept one update behind (a torn superblock update, by the
 * superblocks alone) whose journal then lacks records the others name it
 * in is an old copy, or a disk that lost writes: replay says -ESTALE, and
 * the array is assembled again with it stale (nothing was written).
 */
int rc_array_assemble(struct rc_dev **devs, int n, unsigned flags,
		      struct rc_array **out, char *err, size_t errlen)
{
	uint8_t stale[RC_MAX_MEMBERS][RC_UUID_SIZE];
	char dummy[8];
	int ret, nstale = 0;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	do {
		ret = assemble_once(devs, n, flags, stale, nstale, out, err,
				    errlen);
	} while (ret == -ESTALE && ++nstale < RC_MAX_MEMBERS);
	return ret == -ESTALE ? -EIO : ret;
}
