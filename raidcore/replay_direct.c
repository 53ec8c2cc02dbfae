/*
 * replay_direct: the direct stripes of the last batches replayed
 * (docs/DESIGN.md "Direct stripes": the last one, and the one before it
 * when no later record proves the last one's flush returned).  A direct
 * stripe's columns were not copied into the journal; they go in place
 * after the commit point and only the next flush makes them durable, so a
 * crash before it may leave any mix of old and new columns, while the
 * replayed table blocks hold the new entries.  The caller promised
 * (RC_WRITE_FRESH) that nothing depends on such a stripe until a flush
 * returned, and none is proven to have returned since those batches:
 * whatever the columns hold is taken as it is and made consistent -
 *
 *   RAID 4, 5, 6: missing columns (no device, faulty, not rebuilt that
 *   far) recovered from the parity, when no more are missing than the
 *   redundancy; the parity made again from the data;
 *   RAID 1, 10: the first copy there given to the others;
 *   RAID 0: the columns as they are;
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

/* Puts column c (its member usable) into the overlay, if changed, and its
 * table entries; *touched gets the member. */
static int settle_put(struct rc_array *a, const struct rc_stripe_map *mp,
		      uint32_t c, const uint8_t *col, bool changed,
		      uint64_t *touched)
{
	int m = (int)mp->col[c].member, ret = 0;

	for (uint32_t r = 0; r < a->g.chunk_blocks && ret == 0; r++) {
		uint64_t mb = mp->col[c].offset + r;

		if (changed)
			ret = rc_overlay_put(a, NULL, m, rc_abs(a, mb), BLK(col, r));
		if (ret == 0)
			ret = rc_csum_update(a, m, mb,
					     rc_block_csum(BLK(col, r),
							   rc_abs(a, mb)));
	}
	*touched |= 1ull << m;
	return ret;
}

/* Parity levels: the missing columns recovered, the parity made again;
 * true when the parity columns so changed (when no more are missing than
 * the redundancy).  RAID 0: nothing to make. */
static int settle_parity(struct rc_array *a, uint8_t **cols, int *failed,
			 int nfailed, bool *changed)
{
	size_t len = (size_t)a->g.chunk_blocks * RC_BLOCK_SIZE;
	int d = (int)a->ndata, ret = 0;

	*changed = a->nred && (uint32_t)nfailed <= a->nred;
	if (!*changed)
		return 0;
	if (nfailed)
		ret = a->par->recover(d, (int)a->nred, len, (void *const *)cols,
				      failed, nfailed);
	if (ret == 0 && a->nred == 2)
		a->par->gen_pq(d, len, (void *const *)cols, cols[d], cols[d + 1]);
	else if (ret == 0)
		a->par->gen_p(d, len, (void *const *)cols, cols[d]);
	return ret;
}

static int settle_stripe(struct rc_array *a, uint64_t s, uint8_t **cols,
			 uint64_t *touched)
{
	size_t len = (size_t)a->g.chunk_blocks * RC_BLOCK_SIZE;
	bool mirror = a->g.level == RC_RAID1 || a->g.level == RC_RAID10;
	bool missing[RC_MAX_MEMBERS] = { 0 }, changed = false;
	int failed[RC_MAX_MEMBERS], nfailed, src = -1, ret = 0;
	struct rc_stripe_map map;

	rc_geom_stripe(&a->g, s, &map);
	settle_load(a, &map, cols, failed, &nfailed);
	for (int i = 0; i < nfailed; i++)
		missing[failed[i]] = true;
	/* Mirrors: the first copy there is the stripe's content, and goes to
	 * the others.  Otherwise the columns as found, the parity made from
	 * them; more missing than the redundancy: nothing can be implied,
	 * the present cells are taken as they are. */
	for (uint32_t c = 0; mirror && src < 0 && c < map.ncols; c++)
		if (!missing[c])
			src = (int)c;
	if (!mirror)
		ret = settle_parity(a, cols, failed, nfailed, &changed);
	for (uint32_t c = 0; c < map.ncols && ret == 0; c++) {
		if (missing[c])
			continue;
		if (mirror)
			ret = settle_put(a, &map, c, cols[src], (int)c != src &&
					 memcmp(cols[c], cols[src], len), touched);
		else
			ret = settle_put(a, &map, c, cols[c],
					 c >= a->ndata && changed, touched);
	}
	return ret;
}

int rc_direct_settle(struct rc_array *a, const uint64_t *stripes, uint32_t n)
{
	uint8_t *cols[RC_MAX_MEMBERS] = { 0 };
	uint64_t touched = 0;
	int ret = 0;

	if (!n)
		return 0;
	for (uint32_t c = 0; c < a->g.members && ret == 0; c++)
		if (!(cols[c] = rc_buf_alloc((size_t)a->g.chunk_blocks *
					     RC_BLOCK_SIZE)))
			ret = -ENOMEM;
	for (uint32_t i = 0; i < n && ret == 0; i++)
		ret = settle_stripe(a, stripes[i], cols, &touched);
	for (uint32_t m = 0; m < a->g.members && ret == 0; m++)
		if (touched >> m & 1)
			ret = rc_tables_put(a, (int)m, rc_overlay_put, NULL);
	if (ret == 0)
		rc_log("journal: %u direct stripes of the last batches made "
		       "consistent as found", n);
	for (uint32_t c = 0; c < a->g.members; c++)
		free(cols[c]);
	return ret;
}
