/*
 * replay: the journal after an unclean shutdown (docs/DESIGN.md "No write
 * hole" and "Journal damage on one member", docs/FORMAT.md "Recovery and
 * replay").
 *
 *   rc_journal_replay       at assembly, before the array is shared
 *     scan_all              every present member's records from its tail;
 *                           a member that others' records name after the
 *                           end of its scan is scanned again, block by
 *                           block past the damage, for its later records
 *     batch_gaps            the participants of a batch without a complete
 *                           record of it: the batch is replayed when they,
 *                           with the members that are not all there, are
 *                           no more than the redundancy
 *     direct_supersede      first, what earlier batches put on the cells
 *                           of the batch's direct stripes is taken back:
 *                           the members hold newer (their in-place write)
 *     batch_apply           its records into the overlay (io.c)
 *     batch_rows            the rows it touched, who lost and who wrote
 *                           them, for rc_gaps_rebuild (replay_gaps.c): once
 *                           every batch is in, the lost participants'
 *                           columns are rebuilt from the others, with their
 *                           table entries, into the overlay too
 *     direct_to_settle      the direct stripes of the last batch replayed
 *                           (and of the one before it, unless a later
 *                           record proves the last one's flush) and of the
 *                           one replay stopped at, which may be torn: left
 *                           out of the gaps rebuilt, made
 *                           consistent as found (replay_direct.c)
 *
 * Replay stops at the first batch with more gaps, or one whose transactions
 * are not all known: it was not committed.  Nothing reaches the media here:
 * the overlay serves reads until the first write puts it in place
 * (activate.c), or, read-only, to the end.  Runs alone (assembly), so it
 * takes stripe locks only because verify.c expects them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)

struct jrec {
	uint64_t seq;
	uint64_t pos;
	struct rc_jhdr *h;
	bool loaded;            /* payload read and checked */
	bool complete;          /* ... and every block matched */
	uint8_t *payload;       /* while its batch is replayed */
};

/* One member's records, in ring order (ascending seq). */
struct jscan {
	struct jrec *rec;
	uint32_t n;
};


/* ---- scanning ----------------------------------------------------------- */

/* The header at ring block pos of member m, if it is one of m's records
 * with a seq above min_seq that fits in the ring. */
static bool header_at(struct rc_array *a, uint32_t m, uint64_t pos,
		      uint64_t min_seq, uint8_t *blk, struct rc_jhdr *h)
{
	return pos < a->journal_blocks &&
	       rc_io_member_read(a, (int)m, rc_ring_block(a, pos), 1, blk) == 0 &&
	       rc_jhdr_decode(blk, h) == 0 &&
	       memcmp(h->array_uuid, a->sb.array_uuid, RC_UUID_SIZE) == 0 &&
	       h->role == m && h->ring_pos == pos && h->seq > min_seq &&
	       pos + 1 + h->npayload <= a->journal_blocks;
}

static int scan_add(struct jscan *js, uint64_t pos, struct rc_jhdr *h)
{
	struct jrec *nr = realloc(js->rec, (js->n + 1) * sizeof(*nr));

	if (!nr)
		return -ENOMEM;
	js->rec = nr;
	js->rec[js->n++] = (struct jrec){ .seq = h->seq, .pos = pos, .h = h };
	return 0;
}

static void scan_free(struct jscan *js)
{
	for (uint32_t i = 0; i < js->n; i++) {
		free(js->rec[i].h);
		free(js->rec[i].payload);
	}
	free(js->rec);
	memset(js, 0, sizeof(*js));
}

/*
 * Follows member m's chain of records from its tail, once round the ring.
 * Without search the chain ends where no record follows (after one try at
 * ring block 0, where a record that did not fit at the end starts).  With
 * search a block that holds no record is stepped over, so records after a
 * damaged one are found: only those above the checkpoint count then, as
 * older ones are left from earlier passes.
 */
static int scan_member(struct rc_array *a, uint32_t m, struct jscan *js,
		       bool search)
{
	uint8_t *blk = malloc(RC_BLOCK_SIZE);
	struct rc_jhdr *h = malloc(sizeof(*h));
	uint64_t pos = a->m[m].jtail, scanned = 0, min_seq = 0;
	bool wrapped = false;
	int ret = 0;

	if (!blk || !h) {
		ret = -ENOMEM;
		goto out;
	}
	while (scanned < a->journal_blocks) {
		if (pos >= a->journal_blocks) {
			pos = 0;
			wrapped = true;
		}
		if (!header_at(a, m, pos, min_seq, blk, h)) {
			if (search) {
				if (min_seq < a->jcheckpoint)
					min_seq = a->jcheckpoint;
				pos++;
				scanned++;
				continue;
			}
			if (wrapped || pos == 0)
				break;
			scanned += a->journal_blocks - pos;
			pos = 0;
			wrapped = true;
			continue;
		}
		ret = scan_add(js, pos, h);
		if (ret)
			goto out;
		min_seq = h->seq;
		scanned += 1 + h->npayload;
		pos += 1 + h->npayload;
		h = malloc(sizeof(*h));
		if (!h) {
			ret = -ENOMEM;
			goto out;
		}
	}
out:
	free(blk);
	free(h);
	return ret;
}

/* Does another member's record name m as a participant of a transaction
 * after m's last one?  Then m's chain ended at damage, not at its head. */
static bool scan_short(struct rc_array *a, struct jscan *js, uint32_t m)
{
	uint64_t last = js[m].n ? js[m].rec[js[m].n - 1].seq : 0;

	last = last > a->jcheckpoint ? last : a->jcheckpoint;
	for (uint32_t o = 0; o < a->g.members; o++)
		for (uint32_t i = 0; o != m && i < js[o].n; i++)
			if (js[o].rec[i].seq > last &&
			    (js[o].rec[i].h->participants >> m & 1))
				return true;
	return false;
}

/*
 * Member m was kept one superblock update behind the others, as a crash
 * during an update leaves the last slots (assemble.c), yet its journal
 * lacks records the others name it in, even past damage: a torn update
 * leaves every record it took part in, an old copy of the member (or a
 * disk that dropped writes) does not, and its blocks would verify against
 * its own old tables.  -ESTALE: assembly starts again with it stale, when
 * the others can do without it; otherwise it is kept, as before, and said.
 */
static int one_behind_stale(struct rc_array *a, uint32_t m)
{
	if (rc_array_needs(a, (int)m)) {      /* nothing shares a yet */
		rc_log("member %u (%s): one superblock update behind and its "
		       "journal lacks records the others name it in: an old "
		       "copy or a disk that lost writes, and the array cannot "
		       "do without it: its data is suspect%s", m,
		       a->m[m].dev->name, a->rdonly ? "" : "; not assembled "
		       "for writing (read-only, it is: copy the data off)");
		atomic_fetch_add(&a->m[m].write_errors, 1);
		atomic_store(&a->errors_seen, true);
		return a->rdonly ? 0 : -EUCLEAN;
	}
	rc_log("member %u (%s): one superblock update behind, as a torn "
	       "update would leave it, but its journal lacks records the "
	       "others name it in: an old copy or a disk that lost writes; "
	       "assembling again with it stale", m, a->m[m].dev->name);
	a->stale_slot = (int)m;
	return -ESTALE;
}

static bool later_batch(struct rc_array *a, struct jscan *js, uint64_t end);
static bool batch_gaps(struct rc_array *a, struct jscan *js, uint64_t seq,
		       uint64_t end, uint64_t *gaps);
static bool gaps_tolerable(struct rc_array *a, uint64_t gaps);

/*
 * Does m lack a record, named in another ring, of a batch that was
 * committed as far as the rings tell - one a later batch proves committed,
 * or one replay would take with m's columns rebuilt from the others?  A
 * batch too few members took to be replayed even with m counted as a gap
 * was never committed (its commit failed: its writer got the error), and
 * m lacking it says nothing about m: two members of a RAID 5 gone at
 * once while a batch went out (the first faulted, the second suspended
 * the array) left the second one update behind and without that batch,
 * and it was taken for an old copy - the array read-only for good (a
 * tester's find).
 */
static bool lacks_committed(struct rc_array *a, struct jscan *js, uint32_t m)
{
	uint64_t last = js[m].n ? js[m].rec[js[m].n - 1].seq : 0, gaps;

	last = last > a->jcheckpoint ? last : a->jcheckpoint;
	for (uint32_t o = 0; o < a->g.members; o++) {
		for (uint32_t i = 0; o != m && i < js[o].n; i++) {
			const struct jrec *r = &js[o].rec[i];

			if (r->seq <= last || !(r->h->participants >> m & 1))
				continue;
			if (later_batch(a, js, r->h->batch_end) ||
			    (batch_gaps(a, js, r->seq, r->h->batch_end, &gaps) &&
			     gaps_tolerable(a, gaps | 1ull << m)))
				return true;
		}
	}
	return false;
}

static int scan_all(struct rc_array *a, struct jscan *js, uint64_t *maxseen)
{
	int ret = 0;

	for (uint32_t m = 0; m < a->g.members && ret == 0; m++)
		if (rc_member_present(a, (int)m))
			ret = scan_member(a, m, &js[m], false);
	for (uint32_t m = 0; m < a->g.members && ret == 0; m++) {
		if (!rc_member_present(a, (int)m) || !scan_short(a, js, m))
			continue;
		rc_log("member %u (%s): its journal ends before the others say "
		       "it should: looking past the damage", m,
		       a->m[m].dev->name);
		scan_free(&js[m]);
		ret = scan_member(a, m, &js[m], true);
		if (ret == 0 && a->m[m].one_behind &&
		    lacks_committed(a, js, m))
			ret = one_behind_stale(a, m);
	}
	for (uint32_t m = 0; m < a->g.members; m++)
		for (uint32_t i = 0; i < js[m].n; i++)
			if (js[m].rec[i].seq > *maxseen)
				*maxseen = js[m].rec[i].seq;
	return ret;
}

/* Does any ring hold a record of a batch after end (which proves the
 * batch ending at end committed: the next began after its commit)? */
static bool later_batch(struct rc_array *a, struct jscan *js, uint64_t end)
{
	for (uint32_t m = 0; m < a->g.members; m++)
		for (uint32_t i = 0; i < js[m].n; i++)
			if (js[m].rec[i].seq > end)
				return true;
	return false;
}

static struct jrec *find_rec(struct jscan *js, uint64_t seq)
{
	for (uint32_t i = 0; i < js->n; i++)
		if (js->rec[i].seq == seq)
			return &js->rec[i];
	return NULL;
}

/* Participants and batch end of seq, from whichever member has it. */
static bool seq_info(struct rc_array *a, struct jscan *js, uint64_t seq,
		     uint64_t *part, uint64_t *end)
{
	struct jrec *r;

	for (uint32_t m = 0; m < a->g.members; m++) {
		r = find_rec(&js[m], seq);
		if (r) {
			*part = r->h->participants;
			*end = r->h->batch_end;
			return true;
		}
	}
	return false;
}

/* Reads and checks a record's payload once; false when incomplete or
 * corrupt (or out of memory: then it is not replayed either). */
static bool record_complete(struct rc_array *a, uint32_t m, struct jrec *r)
{
	uint32_t n = r->h->npayload;
	uint8_t *p;

	if (r->loaded)
		return r->complete;
	r->loaded = true;
	p = rc_buf_alloc((size_t)(n ? n : 1) * RC_BLOCK_SIZE);
	if (!p)
		return false;
	if (n && rc_io_member_read(a, (int)m, rc_ring_block(a, r->pos + 1), n,
				   p))
		goto bad;
	for (uint32_t i = 0; i < n; i++)
		if (rc_block_csum(BLK(p, i), r->h->target[i]) != r->h->csum[i])
			goto bad;
	r->payload = p;
	r->complete = true;
	return true;
bad:
	free(p);
	return false;
}

/* ---- deciding ----------------------------------------------------------- */

/*
 * The present participants of transactions seq .. end without a complete
 * record of them, in *gaps.  false when some transaction of the batch is
 * known to nobody (it cannot be judged: not committed).
 */
static bool batch_gaps(struct rc_array *a, struct jscan *js, uint64_t seq,
		       uint64_t end, uint64_t *gaps)
{
	uint64_t part, e;

	*gaps = 0;
	for (uint64_t s = seq; s <= end; s++) {
		if (!seq_info(a, js, s, &part, &e))
			return false;
		for (uint32_t m = 0; m < a->g.members; m++) {
			struct jrec *r;

			if (!(part >> m & 1) || !rc_member_present(a, (int)m))
				continue;
			r = find_rec(&js[m], s);
			if (!r || !record_complete(a, m, r))
				*gaps |= 1ull << m;
		}
	}
	return true;
}

/*
 * Can the columns of the gap members be rebuilt in every stripe the batch
 * touched?  Counted with every member that is not all there (missing,
 * faulty, rebuilding): a row level's stripe spans every member, and for a
 * RAID 10 stripe (two members) counting them all only errs on the safe
 * side.  A batch is counted whole, not transaction by transaction: it may
 * split one stripe's new columns over several transactions.
 */
static bool gaps_tolerable(struct rc_array *a, uint64_t gaps)
{
	uint64_t out = gaps | rc_gaps_out(a);

	return (uint32_t)__builtin_popcountll(out) <= a->nred;
}

/* ---- applying ----------------------------------------------------------- */

/* Every complete record of the batch into the overlay; the table blocks
 * among them replace what the checksum cache held. */
static int batch_apply(struct rc_array *a, struct jscan *js, uint64_t seq,
		       uint64_t end)
{
	uint64_t t0 = a->sb.csum_offset, t1 = t0 + a->sb.csum_blocks;
	int ret = 0;

	for (uint64_t s = seq; s <= end && ret == 0; s++) {
		for (uint32_t m = 0; m < a->g.members && ret == 0; m++) {
			struct jrec *r = find_rec(&js[m], s);

			if (!r || !rc_member_present(a, (int)m) ||
			    !record_complete(a, m, r))
				continue;
			for (uint32_t i = 0; i < r->h->npayload && ret == 0; i++) {
				uint64_t t = r->h->target[i];

				ret = rc_overlay_put(a, NULL, (int)m, t, BLK(r->payload, i));
				if (t >= t0 && t < t1)
					rc_csum_forget(a, (int)m, t);
			}
		}
	}
	return ret;
}

/* Row entries replay hands to replay_gaps.c, grown as batches go. */
struct gap_rows {
	struct rc_gap_row *v;
	uint32_t n, cap;
};

static int gap_rows_add(struct gap_rows *gr, struct rc_gap_row r)
{
	struct rc_gap_row *nv;

	if (gr->n == gr->cap) {
		gr->cap = gr->cap ? 2 * gr->cap : 256;
		nv = realloc(gr->v, gr->cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		gr->v = nv;
	}
	gr->v[gr->n++] = r;
	return 0;
}

/* The rows of a direct stripe a record names: the member wrote them in
 * place when its record (with its table blocks) is complete. */
static int direct_rows(struct rc_array *a, uint64_t stripe, uint64_t seq,
		       uint64_t gaps, uint64_t wrote, struct gap_rows *gr)
{
	int ret = 0;

	for (uint32_t row = 0; stripe < a->stripes && row < a->g.chunk_blocks &&
	     ret == 0; row++)
		ret = gap_rows_add(gr, (struct rc_gap_row){ .stripe = stripe,
			.seq = seq, .row = row, .lost = gaps, .wrote = wrote });
	return ret;
}

/*
 * Every data-region row batch seq .. end names (headers are checked, so
 * those of incomplete records count too), with the batch's gap members as
 * lost and, per record, its member as having written the row when the
 * record was complete.
 */
static int batch_rows(struct rc_array *a, struct jscan *js, uint64_t seq,
		      uint64_t end, uint64_t gaps, struct gap_rows *gr)
{
	uint64_t d0 = a->sb.data_offset, stripe;
	struct rc_stripe_map map;
	uint32_t col;
	int ret = 0;

	for (uint64_t s = seq; s <= end; s++) {
		for (uint32_t m = 0; m < a->g.members; m++) {
			struct jrec *r = find_rec(&js[m], s);

			for (uint32_t i = 0; r && i < r->h->nentries && ret == 0;
			     i++) {
				uint64_t t = r->h->target[i];

				if (i >= r->h->npayload) {
					ret = direct_rows(a, t & ~RC_JENT_DIRECT,
							  seq, gaps, r->complete ?
							  1ull << m : 0, gr);
					continue;
				}
				if (t < d0 || rc_geom_reverse(&a->g, m, t - d0,
							     &stripe, &col))
					continue;
				rc_geom_stripe(&a->g, stripe, &map);
				ret = gap_rows_add(gr, (struct rc_gap_row){
					.stripe = stripe, .seq = seq,
					.row = (uint32_t)(t - d0 -
							  map.col[col].offset),
					.lost = gaps,
					.wrote = r->complete ? 1ull << m : 0 });
			}
		}
	}
	return ret;
}

/* The payloads of a replayed batch are not needed again. */
static void batch_release(struct rc_array *a, struct jscan *js, uint64_t seq,
			  uint64_t end)
{
	for (uint32_t m = 0; m < a->g.members; m++)
		for (uint32_t i = 0; i < js[m].n; i++)
			if (js[m].rec[i].seq >= seq && js[m].rec[i].seq <= end) {
				free(js[m].rec[i].payload);
				js[m].rec[i].payload = NULL;
			}
}

/* The highest transaction any member holds a record of. */
static uint64_t last_recorded(const struct rc_array *a, const struct jscan *js)
{
	uint64_t last = 0;

	for (uint32_t m = 0; m < a->g.members; m++)
		if (js[m].n && js[m].rec[js[m].n - 1].seq > last)
			last = js[m].rec[js[m].n - 1].seq;
	return last;
}

/*
 * The members whose gaps are all in the last batch written: no member
 * holds a record after it.  A batch's records go to its participants at
 * once and the next batch starts only after the flush that commits it, so
 * a record of a later batch anywhere proves the earlier batch was whole on
 * every member: a gap there is damage.  In the last batch a gap is what
 * the crash cut short (gaps_report in replay_gaps.c).  first_gap_end[m]:
 * the end of m's first batch with a gap, 0 if none.
 */
static uint64_t torn_members(const struct rc_array *a, const struct jscan *js,
			     const uint64_t *first_gap_end)
{
	uint64_t torn = 0, last = last_recorded(a, js);

	for (uint32_t m = 0; m < a->g.members; m++)
		if (first_gap_end[m] && first_gap_end[m] >= last)
			torn |= 1ull << m;
	return torn;
}

/*
 * The last batch written, with gaps: the crash cut its records short, so
 * its flush never completed, nothing of it went in place and nobody was
 * told it was durable.  Replaying it rebuilds the gap members' columns;
 * when a row it touches is also owed by another member from an earlier
 * batch (that member's ring damaged), neither could be rebuilt and both
 * cells would read as errors.  Then it is not replayed: the array is as
 * it was just before it, which the crash could as well have left.
 * *skip says so.
 */
static int torn_last_skip(struct rc_array *a, struct jscan *js, uint64_t seq,
			  uint64_t end, uint64_t gaps, const struct gap_rows *gr,
			  bool *skip)
{
	struct gap_rows add = { 0 };
	int ret = 0;

	*skip = false;
	if (!gaps || !gr->n || end < last_recorded(a, js))
		return 0;
	ret = batch_rows(a, js, seq, end, gaps, &add);
	if (ret == 0)
		ret = rc_gaps_conflict(a, gr->v, gr->n, add.v, add.n, skip);
	free(add.v);
	return ret;
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;

	return (p > q) - (p < q);
}

/* A growing list of stripe numbers. */
struct stripe_list {
	uint64_t *v;
	uint32_t n, cap;
};

/* The direct stripes the batch seq .. end names, in any member's record,
 * added to l. */
static int direct_collect(struct rc_array *a, struct jscan *js, uint64_t seq,
			  uint64_t end, struct stripe_list *l)
{
	uint64_t *nv;

	for (uint32_t m = 0; m < a->g.members; m++)
		for (uint32_t i = 0; i < js[m].n; i++) {
			const struct rc_jhdr *h = js[m].rec[i].h;

			if (js[m].rec[i].seq < seq || js[m].rec[i].seq > end)
				continue;
			for (uint32_t e = h->npayload; e < h->nentries; e++) {
				if (l->n == l->cap) {
					l->cap = l->cap ? 2 * l->cap : 64;
					nv = realloc(l->v, l->cap * sizeof(*nv));
					if (!nv)
						return -ENOMEM;
					l->v = nv;
				}
				l->v[l->n++] = h->target[e] & ~RC_JENT_DIRECT;
			}
		}
	return 0;
}

/*
 * A direct stripe of batch seq .. end (named by any record of it) was
 * written in place whole after the batch's commit point: what an earlier
 * batch's payload put in the overlay for its cells is older than what the
 * members hold, and must not hide it.  The stripe's old contents are
 * nobody's (RC_WRITE_FRESH): where the crash tore the direct write, the
 * stripe is settled as found (replay_direct.c).
 */
static int direct_supersede(struct rc_array *a, struct jscan *js,
			    uint64_t seq, uint64_t end)
{
	struct stripe_list l = { 0 };
	struct rc_stripe_map map;
	int ret = direct_collect(a, js, seq, end, &l);

	for (uint32_t i = 0; ret == 0 && i < l.n; i++) {
		if (l.v[i] >= a->stripes)
			continue;
		/* a member missing now may have lost its columns (its cells
		 * leave the overlay, so rc_wi_note_overlay does not see them) */
		rc_wi_note(a, l.v[i]);
		rc_geom_stripe(&a->g, l.v[i], &map);
		for (uint32_t c = 0; c < map.ncols; c++)
			for (uint32_t row = 0; row < a->g.chunk_blocks; row++)
				rc_overlay_drop(a, (int)map.col[c].member,
						rc_abs(a, map.col[c].offset + row));
	}
	free(l.v);
	return ret;
}

/*
 * The direct stripes to settle (replay_direct.c), ascending, each once:
 * those of the last batch replayed (last), and of the batch replay
 * stopped at, if any.  Only they may be torn: the flush that committed
 * any later batch made an earlier batch's in-place writes durable.  But a
 * batch replayed is not proven committed - its records may have reached
 * the members without its flush (or on too few of them: replayed from the
 * others) - so while no member holds a record of a later batch, the
 * direct stripes of the batch before it (prev) may be torn as well: they
 * went in place after prev's commit point, and only last's flush would
 * have made them durable.  A batch that was not replayed may still have
 * gone in place (its records damaged after its commit), so its stripes
 * are taken as found too.
 */
static int direct_to_settle(struct rc_array *a, struct jscan *js,
			    const uint64_t prev[2], const uint64_t last[2],
			    uint64_t stop, struct stripe_list *l)
{
	uint64_t part, end;
	uint32_t u = 0;
	int ret = 0;

	if (last[0])
		ret = direct_collect(a, js, last[0], last[1], l);
	if (ret == 0 && prev[0] && last_recorded(a, js) <= last[1])
		ret = direct_collect(a, js, prev[0], prev[1], l);
	if (ret == 0 && seq_info(a, js, stop, &part, &end) && end >= stop)
		ret = direct_collect(a, js, stop, end, l);
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), u64_cmp);
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i] < a->stripes && (u == 0 || l->v[u - 1] != l->v[i]))
			l->v[u++] = l->v[i];
	l->n = ret ? 0 : u;
	return ret;
}

/* Drops the rows of the stripes to settle from the gaps to rebuild: a
 * settled stripe is taken whole as found, and rebuilding a column of it
 * from torn others would blame members that did nothing wrong. */
static void rows_drop_settled(struct gap_rows *gr, const uint64_t *v,
			      uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; n && i < gr->n; i++)
		if (!bsearch(&gr->v[i].stripe, v, n, sizeof(*v), u64_cmp))
			gr->v[k++] = gr->v[i];
	if (n)
		gr->n = k;
}

/*
 * Replays every batch after the checkpoint that can be, in order, and
 * stops at the first that cannot.  Then moves the sequence past every
 * record seen anywhere, so stale records of an abandoned batch can never
 * be mistaken for new ones.
 */
int rc_journal_replay(struct rc_array *a)
{
	struct jscan js[RC_MAX_MEMBERS] = { 0 };
	struct gap_rows gr = { 0 };
	uint64_t seq = a->jcheckpoint + 1, part, end, gaps, any = 0;
	uint64_t prev[2] = { 0 }, last[2] = { 0 };  /* batches: seq, end */
	struct stripe_list settle = { 0 };
	uint64_t maxseen = a->jseq, first_gap_end[RC_MAX_MEMBERS] = { 0 };
	int ret = scan_all(a, js, &maxseen);
	bool skip;

	while (ret == 0 && seq_info(a, js, seq, &part, &end) && end >= seq) {
		if (!batch_gaps(a, js, seq, end, &gaps)) {
			rc_log("journal: a transaction of %llu..%llu has no record "
			       "on any member: not committed, not replayed",
			       (unsigned long long)seq, (unsigned long long)end);
			break;
		}
		if (gaps && !gaps_tolerable(a, gaps) &&
		    !later_batch(a, js, end)) {
			rc_log("journal: transactions %llu..%llu lack records on "
			       "more members than the redundancy covers: not "
			       "committed, not replayed",
			       (unsigned long long)seq, (unsigned long long)end);
			break;
		}
		if (gaps && !gaps_tolerable(a, gaps)) {
			/* a later batch began only after this one's commit:
			 * what it and the later ones wrote is lost, and said
			 * (it was called "not committed", and fsck "clean") */
			rc_log("journal: transactions %llu..%llu were committed "
			       "(a later batch follows) but lack records on more "
			       "members than the redundancy covers: not replayed; "
			       "what they and the later ones wrote is lost",
			       (unsigned long long)seq, (unsigned long long)end);
			atomic_store(&a->errors_seen, true);
			a->journal_lost = seq;
			break;
		}
		ret = torn_last_skip(a, js, seq, end, gaps, &gr, &skip);
		if (ret == 0 && skip) {
			rc_log("journal: transactions %llu..%llu, the last "
			       "written, were cut short by the crash where "
			       "another member's journal is damaged too: never "
			       "acknowledged, not replayed",
			       (unsigned long long)seq, (unsigned long long)end);
			break;
		}
		if (ret)
			break;
		ret = direct_supersede(a, js, seq, end);
		if (ret == 0)
			ret = batch_apply(a, js, seq, end);
		/* Rows from the first batch with a gap on: a later record
		 * may have rewritten what an earlier one lost. */
		any |= gaps;
		for (uint32_t m = 0; m < a->g.members; m++)
			if ((gaps >> m & 1) && !first_gap_end[m])
				first_gap_end[m] = end;
		if (ret == 0 && any)
			ret = batch_rows(a, js, seq, end, gaps, &gr);
		batch_release(a, js, seq, end);
		a->replayed_txns += end - seq + 1;
		prev[0] = last[0];
		prev[1] = last[1];
		last[0] = seq;
		last[1] = end;
		seq = end + 1;
	}
	/* Only now, with every batch in the overlay: rows rebuilt halfway
	 * would mix in the in-place writes of later batches already on the
	 * media. */
	if (ret == 0)
		ret = direct_to_settle(a, js, prev, last, seq, &settle);
	rows_drop_settled(&gr, settle.v, settle.n);
	if (ret == 0 && gr.n)
		ret = rc_gaps_rebuild(a, gr.v, gr.n,
				      torn_members(a, js, first_gap_end));
	/* the stop batch's too: they may have gone in place (wi.c) */
	for (uint32_t i = 0; ret == 0 && i < settle.n; i++)
		rc_wi_note(a, settle.v[i]);
	if (ret == 0 && settle.n)
		ret = rc_direct_settle(a, settle.v, settle.n);
	free(settle.v);
	free(gr.v);
	for (uint32_t m = 0; m < a->g.members; m++)
		scan_free(&js[m]);
	a->jseq = maxseen;
	return ret;
}
