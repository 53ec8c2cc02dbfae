/*
 * replay_gaps: what lost journal records held (docs/DESIGN.md "Journal
 * damage on one member").  replay.c replays a batch whose participants
 * without a complete record are no more than the redundancy; the columns
 * those members should have received are rebuilt here, after the whole
 * replay, from the others.
 *
 *   rc_gaps_rebuild
 *     rows_fold        per row, in batch order: a member that lost its
 *                      record of a batch touching the row owes the row;
 *                      one whose complete record of a later batch wrote
 *                      it pays; what is still owed at the end is rebuilt
 *     span_rebuild     rows of one stripe owed by the same members: the
 *                      row resolved (verify.c) with those columns ABSENT,
 *                      each cell rebuilt into the overlay with its table
 *                      entry (rebuild.c's rc_rebuild_cell); a cell that
 *                      cannot be rebuilt gets an entry no block matches,
 *                      so it reads as -EIO instead of stale data
 *     gaps_report      names each such member, counts it an error (so
 *                      fsck looks), puts its changed table blocks into
 *                      the overlay
 *   rc_gaps_conflict   before the last batch is replayed: would it leave a
 *                      row owed by more members than the redundancy?
 *
 * Only after the whole replay: a row rebuilt between batches would mix in
 * in-place writes of later batches already on the media.  Runs at
 * assembly, alone; writes nothing but the overlay.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

/* What was rebuilt for a member that lost records. */
struct gap_note {
	uint64_t first, last;   /* the batches, first and last */
	uint64_t blocks, lost;  /* cells rebuilt; those that could not be */
};

static int row_cmp(const void *x, const void *y)
{
	const struct rc_gap_row *p = x, *q = y;

	if (p->stripe != q->stripe)
		return p->stripe < q->stripe ? -1 : 1;
	if (p->row != q->row)
		return p->row < q->row ? -1 : 1;
	return (p->seq > q->seq) - (p->seq < q->seq);
}

/*
 * Sorts rows by (stripe, row, batch) and folds each row's entries into
 * one, its lost mask what is still owed; returns how many rows owe.  The
 * entries of one batch are merged first: a member lost its record of the
 * batch, or wrote the row in it, not both.
 */
static uint32_t rows_fold(struct rc_gap_row *rows, uint32_t n,
			  struct gap_note *note)
{
	uint32_t out = 0, i = 0, j;

	qsort(rows, n, sizeof(*rows), row_cmp);
	while (i < n) {
		struct rc_gap_row cur = rows[i];
		uint64_t owed = 0;

		while (i < n && rows[i].stripe == cur.stripe &&
		       rows[i].row == cur.row) {
			uint64_t wrote = 0, seq = rows[i].seq, lost = rows[i].lost;

			for (j = i; j < n && rows[j].stripe == cur.stripe &&
			     rows[j].row == cur.row && rows[j].seq == seq; j++)
				wrote |= rows[j].wrote;
			owed = (owed | lost) & ~wrote;
			for (uint32_t m = 0; m < RC_MAX_MEMBERS; m++)
				if (lost >> m & 1) {
					/* rows come in stripe order, not
					 * seq order: "142..135" was said */
					if (!note[m].first ||
					    seq < note[m].first)
						note[m].first = seq;
					if (seq > note[m].last)
						note[m].last = seq;
				}
			i = j;
		}
		if (owed) {
			cur.lost = owed;
			rows[out++] = cur;
		}
	}
	return out;
}

/* Rows rows[0 .. n) of one stripe, all owed by the same members. */
static int span_rebuild(struct rc_array *a, const struct rc_gap_row *rows,
			uint32_t n, uint8_t **cols, uint8_t **state,
			struct gap_note *note)
{
	uint32_t r0 = rows[0].row, nr = rows[n - 1].row - r0 + 1;
	uint64_t stripe = rows[0].stripe, absent = 0;
	struct rc_stripe_map map;
	struct rc_stripe *st;
	struct rc_row v;
	int ret = 0;

	rc_geom_stripe(&a->g, stripe, &map);
	for (uint32_t c = 0; c < map.ncols; c++)
		if (rows[0].lost >> map.col[c].member & 1)
			absent |= 1ull << c;
	if (!absent)
		return 0;
	st = rc_stripe_lock(a, stripe);
	rc_stripe_load_masked(a, &map, r0, nr, cols, state, absent);
	for (uint32_t i = 0; i < n && ret == 0; i++) {
		uint32_t row = rows[i].row, r = row - r0;

		ret = rc_row_resolve(a, &map, cols, row, r, state, &v);
		for (uint32_t c = 0; c < map.ncols && ret == 0; c++) {
			struct gap_note *gn = &note[map.col[c].member];

			if (!(absent >> c & 1) ||
			    !rc_member_usable(a, (int)map.col[c].member, stripe))
				continue;
			ret = rc_rebuild_cell(a, &map, c, cols, state, row, r, &v,
					      rc_overlay_put, NULL, &gn->lost);
			gn->blocks++;
		}
	}
	rc_stripe_unlock(a, st);
	return ret;
}

/*
 * A member that lost records of a batch some later batch followed had its
 * ring damaged: the later batch began only after the flush that made the
 * earlier one whole on every member.  It is named, and counted, so that
 * fsck looks.  One whose gaps are all in the last batch written lost what
 * the crash cut short (a batch's records go to every participant at once;
 * a crash between the writes leaves them on some): told, not counted -
 * counting it blamed a member that did nothing wrong.
 */
static int gaps_report(struct rc_array *a, const struct gap_note *note,
		       uint64_t torn)
{
	int ret = 0;

	for (uint32_t m = 0; m < a->g.members && ret == 0; m++) {
		const struct gap_note *gn = &note[m];
		bool cut = torn >> m & 1;

		if (!gn->first)
			continue;
		rc_log("member %u (%s): journal records %s (batches at "
		       "transactions %llu..%llu): its columns of the rows they "
		       "touched rebuilt from the other members (%llu blocks%s)",
		       m, a->m[m].dev->name, cut ? "cut short by the crash" :
		       "missing or damaged", (unsigned long long)gn->first,
		       (unsigned long long)gn->last,
		       (unsigned long long)gn->blocks,
		       gn->lost ? "; some could not be: they read as I/O errors"
				: "");
		if (!cut) {
			atomic_fetch_add(&a->m[m].csum_errors, 1);
			rc_member_note_error(a, (int)m, RC_ERR_CSUM);
		}
		ret = rc_tables_put(a, (int)m, rc_overlay_put, NULL);
	}
	return ret;
}

/* The members counted absent everywhere: missing, faulty, rebuilding. */
uint64_t rc_gaps_out(const struct rc_array *a)
{
	uint64_t out = 0;

	for (uint32_t s = 0; s < a->g.members; s++)
		if (!a->m[s].dev || a->m[s].state != RC_MEMBER_ACTIVE)
			out |= 1ull << s;
	return out;
}

/*
 * Rows old[0 .. nold) owed so far, add[0 .. nadd) the rows of a batch not
 * yet replayed: is some row of a stripe then owed, with the members that
 * are not all there, by more of the stripe's columns than the redundancy
 * covers?  Counted per stripe (a RAID 10 stripe spans two members).
 */
int rc_gaps_conflict(struct rc_array *a, const struct rc_gap_row *old,
		     uint32_t nold, const struct rc_gap_row *add, uint32_t nadd,
		     bool *conflict)
{
	struct rc_gap_row *rows = malloc((size_t)(nold + nadd + 1) *
					 sizeof(*rows));
	struct gap_note note[RC_MAX_MEMBERS] = { 0 };
	uint64_t out = rc_gaps_out(a);
	struct rc_stripe_map map;
	uint32_t n;

	*conflict = false;
	if (!rows)
		return -ENOMEM;
	memcpy(rows, old, (size_t)nold * sizeof(*rows));
	memcpy(rows + nold, add, (size_t)nadd * sizeof(*rows));
	n = rows_fold(rows, nold + nadd, note);
	for (uint32_t i = 0; i < n && !*conflict; i++) {
		uint32_t absent = 0;

		rc_geom_stripe(&a->g, rows[i].stripe, &map);
		for (uint32_t c = 0; c < map.ncols; c++)
			absent += (uint32_t)((rows[i].lost | out) >>
					     map.col[c].member & 1);
		*conflict = absent > a->nred;
	}
	free(rows);
	return 0;
}

int rc_gaps_rebuild(struct rc_array *a, struct rc_gap_row *rows, uint32_t n,
		    uint64_t torn)
{
	struct gap_note note[RC_MAX_MEMBERS] = { 0 };
	uint8_t *cols[RC_MAX_MEMBERS] = { 0 }, **state;
	uint32_t chunk = a->g.chunk_blocks;
	int ret = 0;

	n = rows_fold(rows, n, note);
	state = rc_state_alloc(a->g.members, chunk);
	if (!state)
		ret = -ENOMEM;
	for (uint32_t c = 0; c < a->g.members && ret == 0; c++)
		if (!(cols[c] = rc_buf_alloc((size_t)chunk * RC_BLOCK_SIZE)))
			ret = -ENOMEM;
	for (uint32_t i = 0, j; ret == 0 && i < n; i = j) {
		for (j = i + 1; j < n && rows[j].stripe == rows[i].stripe &&
		     rows[j].lost == rows[i].lost; j++)
			;
		ret = span_rebuild(a, rows + i, j - i, cols, state, note);
	}
	if (ret == 0)
		ret = gaps_report(a, note, torn);
	for (uint32_t c = 0; c < a->g.members; c++)
		free(cols[c]);
	rc_state_free(state, a->g.members);
	return ret;
}
