/*
 * rebuild: put a device into a slot that is not active and reconstruct its
 * columns from the others (md's recovery), at the speed the limits allow
 * (rc_array_set_rebuild_speed).  A first write (activate.c); the other
 * calls on a slot (fail, remove, add) are manage.c's.
 *
 * The slot is REBUILDING with rebuild_pos = the stripes that are current on
 * it: reads below it use the device, reads above reconstruct, commits write
 * it only below it.  Each batch of stripes runs under commit_lock (no
 * commit interleaves), rebuilds every stripe under its lock, writes the
 * device's blocks and checksum tables in place, then checkpoints: flush
 * everything and record rebuild_pos in the superblocks.  A crash loses at
 * most the current batch; the rebuild resumes from the recorded position.
 * Rows that reconstruct to zeros are left unwritten (table entry 0 reads
 * as zeros), so the unused part of an array costs no writes.
 *
 * rc_rebuild_cell, one row of one column, is shared with replay.c, which
 * rebuilds the columns of members whose journal records were lost into
 * the overlay instead of onto the device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)
/* Read by the rebuild per member at once (rebuild_rows_pipe). */
#define REBUILD_READ_BYTES (2u << 20)
#define REBUILD_READ_MAX 512
/* Of each member between two checkpoints (rebuild_batch_stripes). */
#define REBUILD_BATCH_BYTES (32ull << 20)
/* An idle array's batch: up to this many (rebuild_rows_pipe). */
#define REBUILD_LONG_BATCHES 8

/* Chunk rows of each member a step reads. */
static uint64_t rebuild_read_rows(const struct rc_array *a)
{
	return rc_rows_for_bytes(a, REBUILD_READ_BYTES, REBUILD_READ_MAX);
}

/* Stripes a step holds: as many as fit in rebuild_read_rows rows. */
static uint64_t rebuild_read_stripes(const struct rc_array *a)
{
	return rc_rows_stripes(a, rebuild_read_rows(a), REBUILD_READ_MAX);
}

static int col_of(const struct rc_stripe_map *mp, int slot)
{
	for (uint32_t c = 0; c < mp->ncols; c++)
		if (mp->col[c].member == (uint32_t)slot)
			return (int)c;
	return -1;
}

/* Every column but c claims "never written": so does c, with no write. */
static bool row_unwritten(const struct rc_stripe_map *mp, uint8_t **state,
			  int c, uint32_t r)
{
	bool any = false;

	for (uint32_t k = 0; k < mp->ncols; k++) {
		if ((int)k == c || state[k][r] == BLK_ABSENT)
			continue;
		if (state[k][r] != BLK_ZERO)
			return false;
		any = true;
	}
	return any;
}

int rc_rebuild_cell(struct rc_array *a, const struct rc_stripe_map *mp,
		    uint32_t c, uint8_t **cols, uint8_t **state, uint32_t row,
		    uint32_t r, const struct rc_row *v, rc_block_put put,
		    void *ctx, uint64_t *lost)
{
	int slot = (int)mp->col[c].member, ret;
	uint64_t mb = mp->col[c].offset + row;

	if (!v->known[c]) {
		/* Unrecoverable: poison the entry so it reads as EIO. */
		(*lost)++;
		rc_log_block(a, slot, rc_abs(a, mb), "cannot be rebuilt (too "
			     "many other columns lost): reads as an I/O error");
		return rc_csum_update(a, slot, mb, RC_CSUM_POISON);
	}
	if (row_unwritten(mp, state, (int)c, r))
		return rc_csum_update(a, slot, mb, RC_CSUM_UNWRITTEN);
	ret = put(a, ctx, slot, rc_abs(a, mb), BLK(cols[c], r));
	if (ret == 0)
		ret = rc_csum_update(a, slot, mb,
				     rc_block_csum(BLK(cols[c], r), rc_abs(a, mb)));
	return ret;
}

static int member_put(struct rc_array *a, void *ctx, int slot,
		      uint64_t block, const void *data)
{
	int ret = rc_io_member_write(a, slot, block, 1, data);

	/* not the content a commit recorded for its check any more */
	a->m[slot].wcheck_dev[0] = NULL;
	if (ret < 0)
		rc_member_set_faulty_err(a, slot, "a write of its checksum "
					 "table failed during the rebuild", ret);
	return ret;
}

/*
 * The rebuild's writes to the new device, gathered: a block that
 * continues the last run on the member and in memory joins it, so a
 * stripe's column is one write, not one per block.  The blocks' table
 * entries are updated at once (by the caller), as before the write; the
 * tables reach the device only after the writes (rebuild_batch), and a
 * failed write fails the rebuild.
 */
#define PUT_RUNS_MAX 64
struct put_runs {
	struct rc_io io[PUT_RUNS_MAX];
	int n;
};

/* Writes what is gathered: 0 or the first error; none are left.  A
 * device that fails a write is faulty, as everywhere else (commit.c): the
 * rebuild stops, and the slot is not left "rebuilding" for good. */
static int runs_write(struct rc_array *a, struct put_runs *pr)
{
	int ret = 0;

	rc_io_run(a, pr->io, pr->n);
	for (int i = 0; i < pr->n; i++) {
		if (pr->io[i].err >= 0)
			continue;
		if (ret == 0)
			ret = pr->io[i].err;
		rc_member_set_faulty_err(a, pr->io[i].member, "a write to "
					 "it failed during the rebuild",
					 pr->io[i].err);
	}
	pr->n = 0;
	return ret;
}

static int runs_put(struct rc_array *a, void *ctx, int slot, uint64_t block,
		    const void *data)
{
	struct put_runs *pr = ctx;
	struct rc_io *last = pr->n ? &pr->io[pr->n - 1] : NULL;
	int ret = 0;

	rc_sample_offer(&a->m[slot].sample, block - rc_abs(a, 0));

	if (last && last->member == slot && last->block + last->count == block &&
	    (const uint8_t *)last->buf + (size_t)last->count * RC_BLOCK_SIZE ==
	    (const uint8_t *)data) {
		last->count++;
		return 0;
	}
	if (pr->n == PUT_RUNS_MAX)
		ret = runs_write(a, pr);        /* full: these go now */
	pr->io[pr->n++] = (struct rc_io){ .member = slot, .write = true,
		.buf = (void *)data, .block = block, .count = 1 };
	return ret;
}

/*
 * Rebuilds one row range of one column on the new device, from what
 * verify.c establishes of the others (their own repairs go along).
 * Rows that were never written stay unwritten (entry 0, no write), so the
 * unused part of an array costs no writes; every other row is written,
 * zeros included, through pr (the caller writes what is left in it).
 */
static int rebuild_rows(struct rc_array *a, const struct rc_stripe_map *mp,
			int c, uint8_t **cols, uint8_t **state, uint32_t r0,
			uint32_t nr, struct put_runs *pr, uint64_t *lost)
{
	struct rc_row v;
	int ret = 0;

	for (uint32_t r = r0; r < r0 + nr && ret == 0; r++) {
		ret = rc_row_resolve(a, mp, cols, r, r, state, &v);
		if (ret)
			break;
		rc_row_apply(a, mp, cols, r, r, state, &v, true, NULL);
		/* a survivor's read error costs the row's unknown data alone:
		 * named (the daemon lists the files), and the rebuild goes on */
		rc_row_report_lost(a, mp, r, &v, ~0ull);
		ret = rc_rebuild_cell(a, mp, (uint32_t)c, cols, state, r, r, &v,
				      runs_put, pr, lost);
	}
	return ret;
}

static void rebuild_pos_set(struct rc_array *a, int slot, uint64_t pos)
{
	pthread_mutex_lock(&a->state_lock);
	a->m[slot].rebuild_pos = pos;
	pthread_mutex_unlock(&a->state_lock);
}

/*
 * k consecutive stripes at once: the member rows they lie in
 * (rc_geom_stripes_rows), one large read per surviving member that holds
 * a column of them, all in parallel (as scrub reads), and the slot's
 * columns reconstructed into membuf[slot], where they lie as on the
 * device, so they go out as one write.  The survivors' blocks are
 * verified against their entries, read errors retried block by block.
 */
struct rows_step {
	uint64_t s0, k, nwant;
	uint64_t row0, nrows;           /* the rows they lie in */
	uint64_t absent;                /* members not read: the slot, and
					   at RAID 10 those with no column
					   in a stripe that has the slot's */
	bool want[REBUILD_READ_MAX];
	struct rc_stripe *st[REBUILD_READ_MAX];
	uint8_t how[RC_MAX_MEMBERS];
	uint8_t **membuf;               /* one of the two sets */
	struct put_runs pr;             /* its writes, once reconstructed */
};

/*
 * The checksum table blocks of the step's rows, of every member it reads
 * and of the slot, in the cache, read now, while the members stand idle:
 * the reconstruction would read a missing one behind the next step's
 * large read or write on that member, and wait for it.
 */
static void step_tables_touch(struct rc_array *a, const struct rows_step *sp)
{
	uint64_t nr = a->g.chunk_blocks, b0 = sp->row0 * nr, csum;
	uint64_t b1 = (sp->row0 + sp->nrows) * nr;

	for (uint32_t m = 0; m < a->g.members; m++) {
		if (!rc_member_present(a, (int)m))
			continue;
		for (uint64_t b = b0; b < b1; b += RC_CSUM_PER_BLOCK -
						   b % RC_CSUM_PER_BLOCK)
			(void)rc_csum_entry(a, (int)m, b, &csum);
	}
}

/* The step's stripes that want rebuilding, locked (none if none do),
 * and the members they need read. */
static void step_lock(struct rc_array *a, int slot, struct rows_step *sp,
		      uint64_t s0, uint64_t k, uint8_t **membuf)
{
	struct rc_stripe_map map;
	uint64_t need = 0;

	sp->s0 = s0;
	sp->k = k;
	sp->nwant = 0;
	sp->membuf = membuf;
	sp->pr.n = 0;
	rc_geom_stripes_rows(&a->g, s0, k, &sp->row0, &sp->nrows);
	for (uint64_t i = 0; i < k; i++) {
		sp->want[i] = false;
		rc_geom_stripe(&a->g, s0 + i, &map);
		if (col_of(&map, slot) < 0 || !rc_wi_rebuild_wants(a, slot, s0 + i))
			continue;
		sp->want[i] = true;
		sp->nwant++;
		for (uint32_t c = 0; c < map.ncols; c++)
			need |= 1ull << map.col[c].member;
	}
	sp->absent = ~need | 1ull << slot;
	for (uint64_t i = 0; i < k && sp->nwant; i++)
		sp->st[i] = rc_stripe_lock(a, s0 + i);
	if (sp->nwant)
		step_tables_touch(a, sp);
}

/* Starts the step's reads (none when it wants nothing). */
static void step_load_start(struct rc_array *a, struct rows_step *sp,
			    struct rc_rows_loading *ld)
{
	rc_rows_load_start(a, sp->row0, sp->nwant ? sp->nrows : 0, sp->absent,
			   sp->membuf, sp->how, ld);
}

static void step_unlock(struct rc_array *a, struct rows_step *sp)
{
	for (uint64_t i = sp->k; sp->nwant && i-- > 0;)
		rc_stripe_unlock(a, sp->st[i]);
}

/* The step's loaded stripes reconstructed into sp->pr (not yet written). */
static int step_rebuild(struct rc_array *a, int slot, struct rows_step *sp,
			uint64_t *lost)
{
	uint32_t nr = a->g.chunk_blocks;
	uint8_t **state, *cols[RC_MAX_MEMBERS];
	struct rc_stripe_map map;
	int ret = 0;

	if (sp->nwant == 0)
		return 0;
	state = rc_state_alloc(a->g.members, nr);
	if (!state)
		return -ENOMEM;
	for (uint64_t i = 0; i < sp->k && ret == 0; i++) {
		uint8_t chow[RC_MAX_MEMBERS];

		if (!sp->want[i])
			continue;
		rc_geom_stripe(&a->g, sp->s0 + i, &map);
		for (uint32_t j = 0; j < map.ncols; j++) {
			cols[j] = rc_rows_col(a, sp->membuf, &map, j, sp->row0);
			chow[j] = sp->how[map.col[j].member];
		}
		rc_stripe_verify_loaded(a, &map, cols, state, chow);
		ret = rebuild_rows(a, &map, col_of(&map, slot), cols, state, 0,
				   nr, &sp->pr, lost);
	}
	rc_state_free(state, a->g.members);
	return ret;
}

static bool member_is_rebuilding(struct rc_array *a, int slot)
{
	bool yes;

	pthread_mutex_lock(&a->state_lock);
	yes = a->m[slot].state == RC_MEMBER_REBUILDING;
	pthread_mutex_unlock(&a->state_lock);
	return yes;
}

/*
 * Past its batch, a rebuild goes on while nobody waits for commit_lock
 * (a commit, a checkpoint, an admin command), no close stops it and the
 * slot still rebuilds: each batch's end costs a disk a read alone (about
 * a tenth of a 32 MiB batch), and an idle array has nobody to give the
 * lock to.  Whoever comes waits for the steps in flight (two of 2 MiB
 * of each member).
 */
static bool pipe_goes_on(struct rc_array *a, int slot)
{
	return atomic_load(&a->commit_waiting) == 0 &&
	       !atomic_load(&a->rebuild_abort) && member_is_rebuilding(a, slot);
}

/*
 * The stripes [s0, s1) as a pipeline of steps (k stripes each) over
 * two buffer sets: while step j is reconstructed and written here, the
 * survivors read step j + 1 into the other set, each on its own worker.
 * A disk then rebuilds at the speed it writes, not at that of a read, a
 * reconstruction and a write one after the other; the write is made by
 * the thread that reconstructed the data, while it is in its cache.
 *
 * A step's stripes are locked from before its reads to after its write,
 * as a single step's always were; rebuild_pos passes it after its write.
 *
 * The pipeline drains at the batch's end (a step's read alone, then the
 * checkpoint): it goes on past s1, a step at a time up to smax, while
 * nobody waits for commit_lock (pipe_goes_on); *s1 is where it stopped.
 */
static int rebuild_rows_pipe(struct rc_array *a, int slot, uint64_t s0,
			     uint64_t *s1, uint64_t smax, uint8_t **sets[2],
			     uint64_t *lost)
{
	uint64_t per = rebuild_read_stripes(a), end = *s1;
	struct rows_step step[2], *cur, *next;
	struct rc_rows_loading ld;
	int ret = 0;

	if (s0 >= end)
		return 0;
	step_lock(a, slot, &step[0], s0, end - s0 < per ? end - s0 : per,
		  sets[0]);
	step_load_start(a, &step[0], &ld);
	for (int j = 0;; j++) {
		uint64_t n0;
		bool more;

		cur = &step[j & 1];
		next = &step[~j & 1];
		n0 = cur->s0 + cur->k;
		if (n0 >= end && n0 < smax && pipe_goes_on(a, slot))
			end = n0 + per < smax ? n0 + per : smax;
		more = n0 < end;
		*s1 = end;
		rc_rows_load_finish(&ld);
		if (more) {
			step_lock(a, slot, next, n0, end - n0 < per ? end - n0 :
				  per, sets[~j & 1]);
			step_load_start(a, next, &ld);
		}
		ret = step_rebuild(a, slot, cur, lost);
		if (ret == 0)
			ret = runs_write(a, &cur->pr);
		/* every block of them is on the device: readers may use it */
		if (ret == 0)
			rebuild_pos_set(a, slot, n0);
		step_unlock(a, cur);
		if (more && ret) {
			rc_rows_load_finish(&ld);
			step_unlock(a, next);
		}
		if (!more || ret)
			break;
	}
	return ret;
}

int rc_tables_put(struct rc_array *a, int slot, rc_block_put put, void *ctx)
{
	uint8_t *blocks;
	uint64_t *targets;
	uint32_t n;
	int ret;

	ret = rc_csum_take_dirty(a, slot, &blocks, &targets, NULL, &n);
	for (uint32_t i = 0; i < n && ret == 0; i++)
		ret = put(a, ctx, slot, targets[i], BLK(blocks, i));
	free(blocks);
	free(targets);
	return ret;
}

struct table_put {
	struct rc_array *a;
	struct rc_dev *dev;
};

static int table_put(void *ctx, uint64_t block, uint32_t n, const void *buf)
{
	struct table_put *t = ctx;

	return rc_io_unplaced_write(t->a, t->dev, block, n, buf);
}

/* Before dev takes its slot with the identity uuid: empty, sealed tables
 * ("nothing written yet"), which the rebuild then fills. */
static int tables_format(struct rc_array *a, struct rc_dev *dev,
			 const uint8_t *uuid)
{
	struct table_put t = { a, dev };
	int ret = rc_csum_tables_format(rc_table_seed(a->sb.array_uuid, uuid),
					a->sb.csum_offset, a->sb.csum_blocks,
					table_put, &t);

	return ret ? ret : rc_io_unplaced_sync(a, dev);
}

/* Takes dev out of the spare list if it is there; true if it was, its
 * superblock in *sb. */
static bool spare_take(struct rc_array *a, struct rc_dev *dev,
		       struct rc_sb *sb)
{
	for (int i = 0; i < a->nspares; i++) {
		if (a->spare[i] != dev)
			continue;
		*sb = a->spare_sb[i];
		a->spare[i] = a->spare[a->nspares - 1];
		a->spare_sb[i] = a->spare_sb[a->nspares - 1];
		a->nspares--;
		return true;
	}
	return false;
}

static int replace_begin(struct rc_array *a, int slot, struct rc_dev *dev)
{
	struct rc_sb spare_sb = { 0 };
	struct rc_member *m = &a->m[slot];
	uint8_t uuid[RC_UUID_SIZE];
	struct rc_dev *old;
	bool was_spare;
	int ret;

	uuid_generate(uuid);
	ret = tables_format(a, dev, uuid);
	if (ret < 0)
		return ret;
	rc_commit_lock(a);
	rc_slots_wrlock(a);
	pthread_mutex_lock(&a->state_lock);
	was_spare = spare_take(a, dev, &spare_sb);
	old = m->dev;
	__atomic_store_n(&m->dev, dev, __ATOMIC_SEQ_CST);
	memcpy(m->uuid, uuid, RC_UUID_SIZE);
	m->state = RC_MEMBER_REBUILDING;
	m->catchup = false;
	m->damaged = false;
	m->removed = false;
	m->rebuild_pos = 0;
	m->jhead = m->jtail = m->jused = 0;
	/* What was found about the old device does not hold for this one. */
	m->sb_events = 0;
	atomic_store(&m->fault_pending, 0);
	rc_member_errors_forget(m);
	/* the device's own counts: none for a new one, what a stale former
	 * member lost (assemble.c) */
	rc_member_counts_load(m, was_spare ? &spare_sb : NULL);
	atomic_store(&m->shrunk, false);
	pthread_mutex_unlock(&a->state_lock);
	rc_csum_drop_slot(a, slot);
	rc_slots_unlock(a);
	ret = rc_journal_checkpoint(a, false);
	pthread_mutex_unlock(&a->commit_lock);
	/* the faulty device the slot held goes with it: said, as a remove
	 * says it (it left status with no word: a tester's note) */
	if (old && old != dev) {
		char why[300];

		snprintf(why, sizeof(why), "replaced by %s", dev->name);
		rc_event_emit(a, RC_EV_REMOVED, slot, old->name, why, 0, 0, 0);
		rc_member_dev_retire(a, slot, old);
	}
	if (was_spare)
		rc_event_emit(a, RC_EV_SPARE_ACTIVE, slot, dev->name, NULL, 0,
			      a->stripes, ret);
	return ret;
}

/* What RebuildFinished says: lost blocks, and what a catch-up resynced
 * (logged by the caller). */
static void rebuild_finished_why(struct rc_array *a, int slot, bool catchup,
				 uint64_t lost, char *why, size_t len)
{
	const struct rc_member *m = &a->m[slot];

	why[0] = 0;
	if (catchup) {
		/* what it held elsewhere is trusted, as md's --re-add does:
		 * a device that came back damaged there (zeros) is found
		 * only by a scrub (a tester's find) */
		snprintf(why, len, "catch-up: %llu regions (%llu stripes) "
			 "resynced of %llu regions; the rest of it was not "
			 "read: a scrub verifies it (raidfsctl scrub start)",
			 (unsigned long long)m->resync_regions,
			 (unsigned long long)m->resync_stripes,
			 (unsigned long long)a->wi.nregions);
	}
	if (lost)
		snprintf(why + strlen(why), len - strlen(why), "%s%s",
			 why[0] ? "; " : "", "some blocks could not be rebuilt");
}

/*
 * Before the slot is said in sync, its device must be shown to keep what
 * it was given, blocks and tables (rc_csum_verify_blocks over what the
 * rebuild wrote, sampled as it went): a spare that returns zeros or
 * drops writes was reported in sync, the array redundant, until a later
 * checkpoint's read-back or the next member loss found it (a tester's
 * find).  It is failed instead; the array stays degraded.  A catch-up's
 * writes are sampled and read back the same way (a member that came back
 * acknowledging writes it does not keep was said in sync on them); what
 * it did not resync is trusted as md's --re-add trusts it, and its
 * RebuildFinished says a scrub verifies it.
 */
static int rebuild_readback(struct rc_array *a, int slot)
{
	uint8_t *blk = rc_buf_alloc(RC_BLOCK_SIZE);
	uint64_t bad, seen;
	char why[200];

	if (!blk)
		return -ENOMEM;
	bad = rc_csum_verify_blocks(a, slot, a->m[slot].dev, &a->m[slot].sample,
				    true, blk, &seen);
	free(blk);
	if (bad == 0)
		return 0;
	snprintf(why, sizeof(why), "%llu of %llu blocks sampled after its "
		 "rebuild do not read back as written, or their checksum "
		 "table does not (the device returns zeros or drops writes)",
		 (unsigned long long)bad, (unsigned long long)seen);
	snprintf(a->m[slot].stop_why, sizeof(a->m[slot].stop_why),
		 "reached the end, but %llu of %llu blocks sampled do not "
		 "read back as written: the device is failed",
		 (unsigned long long)bad, (unsigned long long)seen);
	rc_member_set_faulty(a, slot, why);
	return -EIO;
}

/* The last batch puts the slot in sync and queues RebuildFinished under
 * the same state_lock (the handler is a leaf): nobody sees the array
 * redundant before the event is on its way (*finished). */
static int rebuild_batch(struct rc_array *a, int slot, uint64_t s0,
			 uint64_t *s1, uint64_t smax, uint8_t **sets[2],
			 uint64_t *lost, bool *finished)
{
	uint64_t lost0 = *lost;
	int ret = 0;

	rc_commit_lock(a);
	ret = rebuild_rows_pipe(a, slot, s0, s1, smax, sets, lost);
	/* Rows another member could not give are holes in the redundancy:
	 * the slot is not counted on until a repairing scrub has filled them
	 * (the daemon starts one).  Said at once, so that the slot table
	 * keeps it past a restart, which resumes the rebuild knowing
	 * nothing of the holes behind it.  A slot said in sync and
	 * redundant with holes lost files at the next member lost (a
	 * tester's find). */
	if (*lost > lost0) {
		char vwhy[96];

		snprintf(vwhy, sizeof(vwhy), "%llu " RC_WHY_HOLES,
			 (unsigned long long)(*lost - lost0));
		pthread_mutex_lock(&a->state_lock);
		rc_verify_want(a, slot, vwhy);
		pthread_mutex_unlock(&a->state_lock);
	}
	/* Straight to the device, not journaled: a crash before the
	 * checkpoint redoes the batch from the recorded position. */
	if (ret == 0)
		ret = rc_tables_put(a, slot, member_put, NULL);
	if (ret == 0 && *s1 == a->stripes)
		ret = rebuild_readback(a, slot);
	if (ret == 0 && *s1 == a->stripes) {
		char why[160];

		rebuild_finished_why(a, slot, a->m[slot].catchup, *lost, why,
				     sizeof(why));
		pthread_mutex_lock(&a->state_lock);
		if (a->m[slot].state == RC_MEMBER_REBUILDING) {
			a->m[slot].state = RC_MEMBER_ACTIVE;
			a->m[slot].catchup = false;
			a->m[slot].rebuild_pos = 0;
			/* still degraded, still recording: the slot, active
			 * now, takes the record's bitmap blocks at the next
			 * flush (it had none; alone later, it could not give
			 * the record back and it was dropped) */
			pthread_mutex_lock(&a->wi.lock);
			if (a->wi.recording)
				a->wi.dirty |= 1;
			pthread_mutex_unlock(&a->wi.lock);
			rc_event_emit(a, RC_EV_REBUILD_FINISHED, slot,
				      a->m[slot].dev->name, why[0] ? why : NULL,
				      a->stripes, a->stripes, *lost ? -EIO : 0);
			*finished = true;
		} else {
			ret = -EIO;     /* it failed in this batch */
		}
		pthread_mutex_unlock(&a->state_lock);
	}
	if (ret == 0)
		ret = rc_journal_checkpoint(a, false);
	pthread_mutex_unlock(&a->commit_lock);
	return ret;
}

/* The slot a replacement goes to, and its device: -EBUSY, -ENODEV,
 * -ENOSPC when there is none or it cannot take it; 0 when *dev must be
 * taken into the slot first, 1 when it is the slot's already (resume). */
static int replace_target(struct rc_array *a, int *slotp, struct rc_dev **dev)
{
	int slot = *slotp;

	if (slot < 0)
		for (slot = 0; (uint32_t)slot < a->g.members &&
		     a->m[slot].dev && a->m[slot].state == RC_MEMBER_ACTIVE; slot++)
			;
	*slotp = slot;
	if ((uint32_t)slot >= a->g.members ||
	    (a->m[slot].state == RC_MEMBER_ACTIVE && a->m[slot].dev))
		return -EBUSY;
	if (!*dev && a->m[slot].state == RC_MEMBER_REBUILDING)
		*dev = a->m[slot].dev;            /* resume */
	else if (!*dev && a->nspares)
		*dev = a->spare[0];
	if (!*dev)
		return -ENODEV;
	if ((*dev)->size / RC_BLOCK_SIZE < rc_sb_device_blocks_min(&a->sb))
		return -ENOSPC;
	return a->m[slot].state == RC_MEMBER_REBUILDING &&
	       a->m[slot].dev == *dev;
}

/* In effect at once; on the superblocks (admin state) with the next
 * superblock write, forced here. */
int rc_array_set_rebuild_speed(struct rc_array *a, uint64_t min_kib,
			       uint64_t max_kib)
{
	atomic_store(&a->rebuild_min_kib, min_kib);
	atomic_store(&a->rebuild_max_kib, max_kib);
	pthread_mutex_lock(&a->state_lock);
	a->sb.admin.rebuild_min_kib = min_kib;
	a->sb.admin.rebuild_max_kib = max_kib;
	pthread_mutex_unlock(&a->state_lock);
	return a->rdonly ? 0 : rc_sb_write_all(a);
}

void rc_array_get_rebuild_speed(struct rc_array *a, uint64_t *min_kib,
				uint64_t *max_kib)
{
	*min_kib = atomic_load(&a->rebuild_min_kib);
	*max_kib = atomic_load(&a->rebuild_max_kib);
}

void rc_array_rebuild_unlimited(struct rc_array *a)
{
	atomic_store(&a->rebuild_min_kib, 0);
	atomic_store(&a->rebuild_max_kib, 0);
}

/* KiB/s the rebuild may go at now, 0 for no limit: md's speed_limit_max,
 * or speed_limit_min while the array served I/O within the last second. */
static uint64_t rebuild_limit(struct rc_array *a)
{
	uint64_t min = atomic_load(&a->rebuild_min_kib);
	uint64_t max = atomic_load(&a->rebuild_max_kib);
	uint64_t last = atomic_load_explicit(&a->last_io_ns,
					     memory_order_relaxed);
	bool busy = last && rc_mono_ns() - last < 1000000000ull;

	if (busy && min && (!max || min < max))
		return min;
	return max;
}

/* Stripes per batch: 32 MiB of each member (rebuild_rows_pipe fills and
 * drains once a batch: at 16 MiB that cost a disk a tenth of its speed),
 * or about a tenth of a second at the speed limit, so the pace is even
 * and progress is seen. */
static uint64_t rebuild_batch_stripes(struct rc_array *a)
{
	uint64_t rows = rc_rows_for_bytes(a, REBUILD_BATCH_BYTES, UINT64_MAX);
	uint64_t per = rc_rows_stripes(a, rows, UINT64_MAX);
	uint64_t limit = rebuild_limit(a);
	uint64_t lim = limit / 10 / (a->g.chunk_blocks * (RC_BLOCK_SIZE / 1024));

	if (limit && lim < per)
		per = lim ? lim : 1;
	return per;
}

/* Where the batch [s, end) of per stripes may run on to on an idle array
 * (rebuild_rows_pipe): as md records its recovery offset, at least every
 * sixteenth of the member, so a resume loses no more; no further than
 * REBUILD_LONG_BATCHES batches; nowhere for a catch-up, which skips
 * regions, or a paced rebuild. */
static uint64_t rebuild_batch_max(struct rc_array *a, uint64_t s, uint64_t end,
				  uint64_t per, bool catchup)
{
	uint64_t most = a->stripes / 16;

	if (catchup || rebuild_limit(a))
		return end;
	if (most < per)
		most = per;
	if (most > REBUILD_LONG_BATCHES * per)
		most = REBUILD_LONG_BATCHES * per;
	return a->stripes - s > most ? s + most : a->stripes;
}

/*
 * After a batch of n stripes that took since start_ns (no lock held):
 * sleeps what keeps it under the limit, waking for close.  The limit is
 * asked again at every wake (a tenth of a second): one set lower or
 * lifted meanwhile, or the array gone idle (the maximum instead of the
 * minimum), counts at once.  The wait was computed once: at a 1 KiB/s
 * minimum a 64 KiB stripe held the rebuild a minute after the limit was
 * lifted (a tester's catch-up stalled so at every mount).
 */
static void rebuild_throttle(struct rc_array *a, uint64_t n, uint64_t start_ns)
{
	uint64_t kib = n * a->g.chunk_blocks * (RC_BLOCK_SIZE / 1024);
	uint64_t limit, want_ns, now;
	struct timespec ts;

	while (!atomic_load(&a->rebuild_abort) && (limit = rebuild_limit(a)) &&
	       (now = rc_mono_ns()) <
	       (want_ns = start_ns + kib * 1000000000ull / limit)) {
		uint64_t d = want_ns - now < 100000000ull ? want_ns - now :
			     100000000ull;

		ts.tv_sec = 0;
		ts.tv_nsec = (long)d;
		nanosleep(&ts, NULL);
	}
}

uint64_t rc_rebuild_pace_stripes(struct rc_array *a)
{
	return rebuild_batch_stripes(a);
}

void rc_rebuild_pace(struct rc_array *a, uint64_t n, uint64_t start_ns)
{
	rebuild_throttle(a, n, start_ns);
}

/* RebuildProgress each time the rebuild passes a multiple of 20 %.  name:
 * the device's, kept (it may be removed and closed under the rebuild). */
static void rebuild_progress_event(struct rc_array *a, int slot,
				   const char *name, uint64_t before,
				   uint64_t after)
{
	uint64_t n = a->stripes;

	if (n && after < n && before * 5 / n != after * 5 / n)
		rc_event_emit(a, RC_EV_REBUILD_PROGRESS, slot, name, NULL,
			      after, n, 0);
}

static int rebuild_run(struct rc_array *a, int slot, const char *name,
		       uint8_t **sets[2], uint64_t *lost, bool *finished,
		       void (*progress)(void *ctx, uint64_t done, uint64_t total),
		       void *ctx)
{
	uint64_t s, t0, per;
	int ret = 0;

	for (s = a->m[slot].rebuild_pos; s < a->stripes && ret == 0; ) {
		if (atomic_load(&a->rebuild_abort))
			return -EINTR;
		/* The device failed (or was found lying) under the rebuild. */
		if (!member_is_rebuilding(a, slot))
			return -EIO;
		t0 = rc_mono_ns();
		per = rebuild_batch_stripes(a);
		uint64_t end = rc_wi_batch_end(a, slot, s, per);
		/* a catch-up is paced by what it rebuilds, not what it skips */
		bool catchup = a->m[slot].catchup;
		uint64_t done0 = a->m[slot].resync_stripes;
		uint64_t smax = rebuild_batch_max(a, s, end, per, catchup);

		ret = rebuild_batch(a, slot, s, &end, smax, sets, lost,
				    finished);
		rebuild_progress_event(a, slot, name, s, end);
		if (progress)
			progress(ctx, end, a->stripes);
		rebuild_throttle(a, catchup ? a->m[slot].resync_stripes - done0 :
				 end - s, t0);
		s = end;
	}
	if (ret == 0 && a->stripes == 0) {
		uint64_t end = 0;

		ret = rebuild_batch(a, slot, 0, &end, 0, sets, lost, finished);
	}
	return ret;
}

/* The slot's device given by the caller is the array's once in the slot;
 * one refused before that is closed here, as the contract says. */
int rc_member_replace(struct rc_array *a, int slot, struct rc_dev *given,
		      void (*progress)(void *ctx, uint64_t done, uint64_t total),
		      void *ctx)
{
	uint8_t *buf[2][RC_MAX_MEMBERS] = { { 0 } };
	uint8_t **sets[2] = { buf[0], buf[1] };
	uint64_t lost = 0;
	struct rc_dev *dev = given;
	bool taken = false;
	int ret;

	ret = a->rdonly ? -EROFS : rc_array_activate(a);
	if (ret == 0)
		ret = replace_target(a, &slot, &dev);
	taken = ret == 1;
	if (ret == 0) {
		ret = replace_begin(a, slot, dev);
		taken = a->m[slot].dev == dev;
		if (ret < 0)
			rc_log("slot %d: %s cannot be taken in (%s): nothing "
			       "was rebuilt", slot, dev->name, strerror(-ret));
	}
	if (given && !taken)
		rc_dev_close(given);
	if (ret < 0)
		return ret;
	ret = 0;
	/* rebuild_read_rows chunks per member, in each of the pipeline's
	 * two sets (rebuild_rows_pipe) */
	for (uint32_t c = 0; c < 2 * a->g.members && ret == 0; c++)
		if (!(buf[c & 1][c / 2] = rc_buf_alloc(rebuild_read_rows(a) *
				a->g.chunk_blocks * RC_BLOCK_SIZE)))
			ret = -ENOMEM;
	if (ret == 0) {
		bool catchup = a->m[slot].catchup;
		bool finished = false;
		char why[240], name[256];

		/* dev may be failed, removed and closed under the rebuild
		 * (raidfsctl fail, then remove): its name is kept for the
		 * last event (a use after free, found by a test) */
		snprintf(name, sizeof(name), "%s", dev->name);
		memset(&a->m[slot].sample, 0, sizeof(a->m[slot].sample));
		a->m[slot].stop_why[0] = 0;
		rc_event_emit(a, RC_EV_REBUILD_STARTED, slot, name,
			      catchup ? "catch-up" : NULL,
			      a->m[slot].rebuild_pos, a->stripes, 0);
		ret = rebuild_run(a, slot, name, sets, &lost, &finished,
				  progress, ctx);
		rebuild_finished_why(a, slot, catchup, lost, why, sizeof(why));
		if (catchup)
			rc_log("slot %d: %s", slot, why);
		if (!finished && a->m[slot].stop_why[0])
			snprintf(why, sizeof(why), "%s", a->m[slot].stop_why);
		if (!finished)
			rc_event_emit(a, RC_EV_REBUILD_FINISHED, slot, name,
				      why[0] ? why : NULL, a->m[slot].rebuild_pos,
				      a->stripes, ret < 0 ? ret : -EIO);
	}
	if (lost)
		rc_log("rebuild of slot %d: %llu blocks could not be rebuilt "
		       "(more columns lost than the level tolerates)", slot,
		       (unsigned long long)lost);
	for (uint32_t c = 0; c < a->g.members; c++) {
		free(buf[0][c]);
		free(buf[1][c]);
	}
	return ret < 0 ? ret : lost ? -EIO : 0;
}
