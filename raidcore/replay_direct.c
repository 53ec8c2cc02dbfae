/*
 * replay_direct: the direct stripes of the last batches replayed
 * (docs/DESIGN.md "Direct stripes": the last one, and the one before it
 * when no later record proves the last one's flush returned).  A direct
 * stripe's columns were not copied into the journal; they go in place
 * after the commit point and only the next flush makes them durable, so a
 * crash before it may leave any mix of old and new columns, while the
 * replayed table blocks hold the new entries.  The caller promised
 * (RC_WRITE_FRESH) that nothing depends on such a stripe until a flush
 * returned, and none is proven to have returned since those batches; but
 * one may have (the next batch never came), so each row's cells are
 * first held to the entries the batch wrote, and only a row that cannot
 * be had that way is taken as found and made consistent -
 *
 *   RAID 4, 5, 6: the cells failing their entries, with the missing ones
 *   (no device, faulty, not rebuilt that far), recovered from the others
 *   when no more than the redundancy and the result bears out the
 *   entries; else the missing recovered from the parity (when no more
 *   than the redundancy) and the parity made again from the data;
 *   RAID 1, 10: the first copy that bears out its entry (else the first
 *   there) given to the others;
 *   RAID 0: the cells as they are;
 *   every present cell's table entry its content's,
 *
 * into the overlay, like the rest of the replay.  Afterwards scrub finds
 * nothing, a read-modify-write of the stripe starts from parity that
 * agrees with its data, and a later loss of a member rebuilds what the
 * others imply.  A stripe the crash did not tear comes out as it was.
 * Runs at assembly, alone; writes nothing but the overlay.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)

/* Reads the usable columns of stripe s into cols; the others in *failed. */
static void settle_load(struct rc_array *a, const struct rc_stripe_map *mp,
			uint8_t **cols, int *failed, int *nfailed)
{
	uint32_t chunk = a->g.chunk_blocks;

	*nfailed = 0;
	for (uint32_t c = 0; c < mp->ncols; c++) {
		int m = (int)mp->col[c].member;

		if (!rc_member_usable(a, m, mp->stripe) ||
		    rc_io_member_read(a, m, rc_abs(a, mp->col[c].offset), chunk,
				      cols[c]) < 0)
			failed[(*nfailed)++] = (int)c;
	}
}

/* Puts column c (its member usable) into the overlay where it differs
 * from orig (what the member holds), and its table entries; *touched gets
 * the member. */
static int settle_put(struct rc_array *a, const struct rc_stripe_map *mp,
		      uint32_t c, const uint8_t *col, const uint8_t *orig,
		      uint64_t *touched)
{
	int m = (int)mp->col[c].member, ret = 0;

	for (uint32_t r = 0; r < a->g.chunk_blocks && ret == 0; r++) {
		uint64_t mb = mp->col[c].offset + r;

		if (memcmp(BLK(col, r), BLK(orig, r), RC_BLOCK_SIZE))
			ret = rc_overlay_put(a, NULL, m, rc_abs(a, mb), BLK(col, r));
		if (ret == 0)
			ret = rc_csum_update(a, m, mb,
					     rc_block_csum(BLK(col, r),
							   rc_abs(a, mb)));
	}
	*touched |= 1ull << m;
	return ret;
}

/* Does row r of column c hold what its table entry - the replayed
 * batch's, for a cell it wrote - says? */
static bool cell_ok(struct rc_array *a, const struct rc_stripe_map *mp,
		    uint32_t c, uint32_t r, const uint8_t *col)
{
	uint64_t mb = mp->col[c].offset + r, want = 0;

	return rc_csum_entry(a, (int)mp->col[c].member, mb, &want) ==
	       RC_ENTRY_SUM && rc_block_csum(BLK(col, r), rc_abs(a, mb)) == want;
}

/* Mirrors, row r: the first copy that bears out its entry (else the first
 * present, as found) given to the others. */
static void settle_mirror_row(struct rc_array *a,
			      const struct rc_stripe_map *mp, uint8_t **cols,
			      const bool *missing, uint32_t r)
{
	int src = -1, first = -1;

	for (uint32_t c = 0; c < mp->ncols && src < 0; c++) {
		if (missing[c])
			continue;
		if (first < 0)
			first = (int)c;
		if (cell_ok(a, mp, c, r, cols[c]))
			src = (int)c;
	}
	if (src < 0)
		src = first;
	for (uint32_t c = 0; src >= 0 && c < mp->ncols; c++)
		if (!missing[c] && (int)c != src)
			memcpy(BLK(cols[c], r), BLK(cols[src], r), RC_BLOCK_SIZE);
}

/*
 * Parity levels, row r.  The cells that fail their entries, with the
 * missing ones, recovered from the others when they are no more than the
 * redundancy and what comes out bears out the entries: a cell the crash
 * left old, or one damaged since (a member's column zeroed while the
 * array was down), gets the batch's content back from the cells that
 * hold it.  Otherwise as found: the missing cells recovered from the
 * present ones (when no more than the redundancy), the parity made from
 * the data.  RAID 0: the cells as they are.
 */
static int settle_parity_row(struct rc_array *a,
			     const struct rc_stripe_map *mp, uint8_t **cols,
			     uint8_t **orig, const bool *missing, uint32_t r)
{
	int d = (int)a->ndata, nred = (int)a->nred, failed[RC_MAX_MEMBERS];
	int nf = 0, nmiss = 0, ret;
	void *row[RC_MAX_MEMBERS];
	bool ok = true;

	for (uint32_t c = 0; c < mp->ncols; c++) {
		row[c] = BLK(cols[c], r);
		if (missing[c])
			nmiss++;
		if (missing[c] || !cell_ok(a, mp, c, r, cols[c]))
			failed[nf++] = (int)c;
	}
	if (!nred || !nf)
		return 0;
	if (nf <= nred) {
		ret = a->par->recover(d, nred, RC_BLOCK_SIZE, row, failed, nf);
		for (int i = 0; i < nf && ret == 0 && ok; i++)
			ok = missing[failed[i]] ||
			     cell_ok(a, mp, (uint32_t)failed[i], r,
				     cols[failed[i]]);
		if (ret == 0 && ok)
			return 0;
		/* back to as found (a missing cell has no orig: the as-found
		 * path recovers it again, or it is never put) */
		for (int i = 0; i < nf; i++)
			if (!missing[failed[i]])
				memcpy(row[failed[i]], BLK(orig[failed[i]], r),
				       RC_BLOCK_SIZE);
	}
	if (nmiss > nred)
		return 0;
	nf = 0;
	for (uint32_t c = 0; c < mp->ncols; c++)
		if (missing[c])
			failed[nf++] = (int)c;
	ret = nf ? a->par->recover(d, nred, RC_BLOCK_SIZE, row, failed, nf) : 0;
	if (ret == 0 && nred == 2)
		a->par->gen_pq(d, RC_BLOCK_SIZE, row, row[d], row[d + 1]);
	else if (ret == 0)
		a->par->gen_p(d, RC_BLOCK_SIZE, row, row[d]);
	return ret;
}

static int settle_stripe(struct rc_array *a, uint64_t s, uint8_t **cols,
			 uint8_t **orig, uint64_t *touched)
{
	size_t len = (size_t)a->g.chunk_blocks * RC_BLOCK_SIZE;
	bool mirror = a->g.level == RC_RAID1 || a->g.level == RC_RAID10;
	bool missing[RC_MAX_MEMBERS] = { 0 };
	int failed[RC_MAX_MEMBERS], nfailed, ret = 0;
	struct rc_stripe_map map;

	rc_geom_stripe(&a->g, s, &map);
	settle_load(a, &map, cols, failed, &nfailed);
	for (int i = 0; i < nfailed; i++)
		missing[failed[i]] = true;
	for (uint32_t c = 0; c < map.ncols; c++)
		if (!missing[c])
			memcpy(orig[c], cols[c], len);
	for (uint32_t r = 0; r < a->g.chunk_blocks && ret == 0; r++) {
		if (mirror)
			settle_mirror_row(a, &map, cols, missing, r);
		else
			ret = settle_parity_row(a, &map, cols, orig, missing, r);
	}
	for (uint32_t c = 0; c < map.ncols && ret == 0; c++)
		if (!missing[c])
			ret = settle_put(a, &map, c, cols[c], orig[c], touched);
	return ret;
}

int rc_direct_settle(struct rc_array *a, const uint64_t *stripes, uint32_t n)
{
	uint8_t *cols[RC_MAX_MEMBERS] = { 0 }, *orig[RC_MAX_MEMBERS] = { 0 };
	size_t len = (size_t)a->g.chunk_blocks * RC_BLOCK_SIZE;
	uint64_t touched = 0;
	int ret = 0;

	if (!n)
		return 0;
	for (uint32_t c = 0; c < a->g.members && ret == 0; c++)
		if (!(cols[c] = rc_buf_alloc(len)) ||
		    !(orig[c] = rc_buf_alloc(len)))
			ret = -ENOMEM;
	for (uint32_t i = 0; i < n && ret == 0; i++)
		ret = settle_stripe(a, stripes[i], cols, orig, &touched);
	for (uint32_t m = 0; m < a->g.members && ret == 0; m++)
		if (touched >> m & 1)
			ret = rc_tables_put(a, (int)m, rc_overlay_put, NULL);
	if (ret == 0)
		rc_log("journal: %u direct stripes of the last batches made "
		       "consistent as found", n);
	for (uint32_t c = 0; c < a->g.members; c++) {
		free(cols[c]);
		free(orig[c]);
	}
	return ret;
}
