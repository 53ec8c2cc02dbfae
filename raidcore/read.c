/*
 * read: the read path - read a column, verify every block against its
 * checksum, and for what does not verify (or claims "never written" in a
 * row that was written) take the slow path: the whole rows, resolved and
 * repaired by verify.c.  Wrong data is never returned: a block the
 * evidence cannot establish fails with -EIO.
 *
 * All functions here run under the stripe lock of the stripe they touch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)

/* rc_stripe_read_rows with its mask row by row: want_row[r] for row
 * r0 + r, or want for every row when want_row is NULL. */
static int read_rows(struct rc_array *a, const struct rc_stripe_map *mp,
		     uint32_t r0, uint32_t nr, uint8_t **cols, uint64_t want,
		     const uint64_t *want_row)
{
	uint8_t **state = rc_state_alloc(mp->ncols, nr);
	struct rc_row v;
	int ret = 0, err;

	if (!state)
		return -ENOMEM;
	rc_stripe_load(a, mp, r0, nr, cols, state);
	for (uint32_t r = 0; r < nr; r++) {
		if (want_row)
			want = want_row[r];
		err = rc_row_resolve(a, mp, cols, r0 + r, r, state, &v);
		if (err) {
			ret = err;
			break;
		}
		rc_row_apply(a, mp, cols, r0 + r, r, state, &v, true, NULL);
		for (uint32_t c = 0; c < mp->ncols; c++) {
			if (!(want >> c & 1) || v.known[c])
				continue;
			atomic_fetch_add(&a->unrecoverable, 1);
			atomic_store(&a->errors_seen, true);
			ret = -EIO;
		}
		rc_row_report_lost(a, mp, r0 + r, &v, want);
	}
	rc_state_free(state, mp->ncols);
	return ret;
}

int rc_stripe_read_rows(struct rc_array *a, const struct rc_stripe_map *mp,
			uint32_t r0, uint32_t nr, uint8_t **cols, uint64_t want)
{
	return read_rows(a, mp, r0, nr, cols, want, NULL);
}

/* The slow path: read the whole rows, rebuild, copy column col out. */
static int col_read_slow(struct rc_array *a, const struct rc_stripe_map *mp,
			 uint32_t col, uint32_t r0, uint32_t nr, void *buf)
{
	uint8_t *cols[RC_MAX_MEMBERS] = { 0 };
	int ret = 0;

	for (uint32_t c = 0; c < mp->ncols; c++) {
		cols[c] = c == col ? buf : rc_buf_alloc((size_t)nr * RC_BLOCK_SIZE);
		if (!cols[c]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = rc_stripe_read_rows(a, mp, r0, nr, cols, 1ull << col);
out:
	for (uint32_t c = 0; c < mp->ncols; c++)
		if (c != col)
			free(cols[c]);
	return ret;
}

/*
 * A "never written" claim is taken at once only when the rest of the row
 * says so too (parity is rewritten with every write to a row, so a row
 * with any written column has written redundancy); otherwise the whole row
 * must bear it out (the slow path).
 */
static bool zero_claim_holds(struct rc_array *a, const struct rc_stripe_map *mp,
			     uint32_t col, uint32_t row)
{
	uint64_t csum;

	for (uint32_t c = 0; c < mp->ncols; c++) {
		const struct rc_col *k = &mp->col[c];

		if (c == col || !rc_member_usable(a, (int)k->member, mp->stripe))
			continue;
		if (rc_csum_entry(a, (int)k->member, k->offset + row, &csum) !=
		    RC_ENTRY_ZERO)
			return false;
	}
	return true;
}

static bool block_is_zero(const uint8_t *b)
{
	return b[0] == 0 && memcmp(b, b + 1, RC_BLOCK_SIZE - 1) == 0;
}

/*
 * A "never written" claim of row r, whose media is in blk, may stand.
 * Reads (strict) need the row to say so too.  The write path, reading old
 * data for parity, may also take it when the media holds zeros: zeros are
 * then the old content either way.  A claim over non-zero media with
 * written redundancy is a stale table (a lost table write): taken as
 * zeros, the new parity would make the zeros consistent and the data
 * would be lost for good, so the row decides (the slow path).
 */
static bool zero_claim_stands(struct rc_array *a, const struct rc_stripe_map *mp,
			      uint32_t col, uint32_t row, const uint8_t *blk,
			      bool strict)
{
	if (!strict && block_is_zero(blk))
		return true;
	return zero_claim_holds(a, mp, col, row);
}

int rc_col_read(struct rc_array *a, const struct rc_stripe_map *mp,
		uint32_t col, uint32_t r0, uint32_t nr, void *buf, bool strict)
{
	const struct rc_col *cp = &mp->col[col];

	if (!rc_member_usable(a, (int)cp->member, mp->stripe))
		return col_read_slow(a, mp, col, r0, nr, buf);
	return rc_col_check(a, mp, col, r0, nr, buf, strict,
			    rc_io_member_read_run(a, (int)cp->member,
						  rc_abs(a, cp->offset + r0),
						  nr, buf));
}

int rc_col_check(struct rc_array *a, const struct rc_stripe_map *mp,
		 uint32_t col, uint32_t r0, uint32_t nr, void *buf, bool strict,
		 int read_ret)
{
	const struct rc_col *cp = &mp->col[col];
	uint32_t bad_first = nr, bad_last = 0;
	uint64_t want;

	if (read_ret < 0)
		return col_read_slow(a, mp, col, r0, nr, buf);
	for (uint32_t r = 0; r < nr; r++) {
		uint64_t mb = cp->offset + r0 + r;
		int kind = rc_csum_entry(a, (int)cp->member, mb, &want);
		bool ok = kind == RC_ENTRY_SUM &&
			  rc_block_csum(BLK(buf, r), rc_abs(a, mb)) == want;

		if (kind == RC_ENTRY_ZERO &&
		    zero_claim_stands(a, mp, col, r0 + r, BLK(buf, r), strict)) {
			memset(BLK(buf, r), 0, RC_BLOCK_SIZE);
			ok = true;
		}
		if (!ok) {
			/* counted when the slow path reads them again */
			bad_first = r < bad_first ? r : bad_first;
			bad_last = r;
		}
	}
	if (bad_first == nr)
		return 0;
	return col_read_slow(a, mp, col, r0 + bad_first,
			     bad_last - bad_first + 1, BLK(buf, bad_first));
}

/* Copies the stripe's dirty blocks over a column piece just read. */
static void overlay_dirty(const struct rc_array *a, const struct rc_stripe *st,
			  uint32_t col, uint32_t r0, uint32_t nr, uint8_t *buf)
{
	uint32_t base = col * a->g.chunk_blocks + r0;

	for (uint32_t r = 0; r < nr; r++)
		if (rc_stripe_block_dirty(st, base + r))
			memcpy(BLK(buf, r), BLK(st->data, base + r),
			       RC_BLOCK_SIZE);
}

static bool all_dirty(const struct rc_stripe *st, uint32_t first, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!rc_stripe_block_dirty(st, first + i))
			return false;
	return true;
}

/* Reads a run of blocks inside one column of one stripe. */
static int read_piece(struct rc_array *a, const struct rc_stripe_map *mp,
		      struct rc_stripe *st, uint32_t col, uint32_t r0,
		      uint32_t nr, uint8_t *buf)
{
	uint32_t base = col * a->g.chunk_blocks + r0;
	int ret = 0;

	if (!st->data || !all_dirty(st, base, nr))
		ret = rc_col_read(a, mp, col, r0, nr, buf, true);
	if (st->data && (ret == 0 || all_dirty(st, base, nr))) {
		overlay_dirty(a, st, col, r0, nr, buf);
		ret = 0;
	}
	return ret;
}

/*
 * A span: consecutive stripes of one request whose column pieces are read
 * in one batch (rc_io_run), their locks held in ascending order, then
 * checked piece by piece as rc_col_read checks them; a piece on a member
 * that is not usable, or whose blocks are all dirty, takes read_piece.
 * Stripe by stripe, each stripe's reads had waited for the slowest of
 * them before the next stripe's began: on members whose requests wait
 * (block devices, disks) a member sat idle at every stripe's end.
 */
#define SPAN_STRIPES 16
#define SPAN_PIECES 64

struct span_piece {
	uint32_t s, col, r0, nr;        /* stripe (index into the span) ... */
	uint8_t *out;
	int io;                         /* index into io[], -1: read_piece */
};

struct span {
	struct rc_stripe_map map[SPAN_STRIPES];
	struct rc_stripe *st[SPAN_STRIPES];
	struct rc_io io[SPAN_PIECES];
	struct span_piece p[SPAN_PIECES];
	uint32_t nst, np, nio;
	/* span_merge's: the reads as issued, their buffers, and for each
	 * io[] the read that holds it */
	struct rc_io rd[SPAN_PIECES];
	struct iovec iov[SPAN_PIECES];
	int rd_of[SPAN_PIECES];
};

/* Whether n blocks from row r of a column on still fit in the span. */
static bool span_fits(const struct rc_array *a, const struct span *sp,
		      uint32_t r, uint32_t n)
{
	return sp->nst < SPAN_STRIPES &&
	       sp->np + RC_DIV_ROUND_UP(r + n, a->g.chunk_blocks) <= SPAN_PIECES;
}

/* Adds the pieces of n blocks from column col, row r on, into buf, of the
 * span's last stripe (span_fits). */
static void span_add(struct rc_array *a, struct span *sp, uint32_t col,
		     uint32_t r, uint32_t n, uint8_t *buf)
{
	const struct rc_stripe_map *mp = &sp->map[sp->nst - 1];
	struct rc_stripe *st = sp->st[sp->nst - 1];
	uint32_t chunk = a->g.chunk_blocks;

	for (; n; col++, r = 0) {
		struct span_piece *p = &sp->p[sp->np++];

		*p = (struct span_piece){ .s = sp->nst - 1, .col = col,
			.r0 = r, .nr = chunk - r < n ? chunk - r : n,
			.out = buf, .io = -1 };
		if (rc_member_usable(a, (int)mp->col[col].member, mp->stripe) &&
		    !(st->data && all_dirty(st, col * chunk + r, p->nr))) {
			p->io = (int)sp->nio;
			sp->io[sp->nio++] = (struct rc_io){
				.member = (int)mp->col[col].member, .buf = buf,
				.block = rc_abs(a, mp->col[col].offset + r),
				.count = p->nr,
				.retried = true };      /* rc_col_check */
		}
		buf += (size_t)p->nr * RC_BLOCK_SIZE;
		n -= p->nr;
	}
}

/*
 * The span's reads as the members get them (sp->rd): a member's pieces
 * that follow each other on it - its chunks of consecutive stripes, at
 * RAID 5 all but where it holds parity - are one read into several
 * buffers (rc_dev_readv: one request where there were several; on loop
 * devices over tmpfs a RAID 5 of 5 with 256 KiB chunks reads a third
 * faster than with 64 KiB ones).  Returns how many reads.
 */
static int span_merge(struct span *sp)
{
	bool placed[SPAN_PIECES] = { false };
	int nrd = 0, niov = 0;

	for (uint32_t i = 0; i < sp->nio; i++) {
		struct rc_io *rd = NULL;

		if (placed[i])
			continue;
		/* io[i]'s member, its pieces in order: ascending on it */
		for (uint32_t j = i; j < sp->nio; j++) {
			const struct rc_io *io = &sp->io[j];

			if (placed[j] || io->member != sp->io[i].member)
				continue;
			placed[j] = true;
			if (!rd || rd->block + rd->count != io->block) {
				rd = &sp->rd[nrd++];
				*rd = *io;
				rd->iov = &sp->iov[niov];
				rd->iovcnt = 0;
				rd->count = 0;
			}
			sp->iov[niov++] = (struct iovec){ io->buf,
				(size_t)io->count * RC_BLOCK_SIZE };
			rd->iovcnt++;
			rd->count += io->count;
			sp->rd_of[j] = nrd - 1;
		}
	}
	for (int r = 0; r < nrd; r++)
		if (sp->rd[r].iovcnt == 1)
			sp->rd[r].iov = NULL;   /* a plain read into buf */
	return nrd;
}

/* Reads the span's pieces, checks them, and lets its stripes go. */
static int span_read(struct rc_array *a, struct span *sp)
{
	int ret = 0, nrd = span_merge(sp);

	rc_io_run(a, sp->rd, nrd);
	for (uint32_t i = 0; i < sp->nio; i++)
		sp->io[i].err = sp->rd[sp->rd_of[i]].err;
	for (uint32_t i = 0; i < sp->np && ret == 0; i++) {
		struct span_piece *p = &sp->p[i];
		struct rc_stripe *st = sp->st[p->s];

		if (p->io < 0) {
			ret = read_piece(a, &sp->map[p->s], st, p->col, p->r0,
					 p->nr, p->out);
			continue;
		}
		ret = rc_col_check(a, &sp->map[p->s], p->col, p->r0, p->nr,
				   p->out, true, sp->io[p->io].err);
		if (st->data && ret == 0)
			overlay_dirty(a, st, p->col, p->r0, p->nr, p->out);
	}
	for (uint32_t s = 0; s < sp->nst; s++)
		rc_stripe_unlock(a, sp->st[s]);
	sp->nst = sp->np = sp->nio = 0;
	return ret;
}

/*
 * A request that covers more than one column of a stripe, one of them on
 * a member that is not usable: the rows are read once across all columns
 * and resolved row by row, where the per-column path reads each column on
 * its own and then the lost one again with all the others (at RAID 5 of
 * 5, seven column reads where four do).  Taken only when the request
 * spans every row of the chunk (no row is read for nothing) and none of
 * its blocks is dirty in the stripe (read_piece overlays those).  first:
 * the request's first block in the stripe's data (column * chunk + row),
 * count its blocks in this stripe.  Returns 1 when not taken.
 */
static int read_stripe_rows(struct rc_array *a, const struct rc_stripe_map *mp,
			    const struct rc_stripe *st, uint32_t first,
			    uint32_t count, uint8_t *out)
{
	uint32_t nrow = a->g.chunk_blocks, end = first + count;
	uint32_t c0 = first / nrow, c1 = (end - 1) / nrow;
	uint8_t *cols[RC_MAX_MEMBERS] = { 0 };
	bool own[RC_MAX_MEMBERS] = { 0 }, lost = false;
	bool direct = (uintptr_t)out % RC_BLOCK_SIZE == 0;
	uint64_t want[256] = { 0 };     /* geom.h: chunk_blocks <= 256 */
	int ret = 0;

	if (count < nrow || c0 == c1 || nrow > 256)
		return 1;
	for (uint32_t c = c0; c <= c1; c++)
		lost |= !rc_member_usable(a, (int)mp->col[c].member, mp->stripe);
	if (!lost)
		return 1;
	for (uint32_t i = first; i < end; i++)
		if (rc_stripe_block_dirty(st, i))
			return 1;
	for (uint32_t i = first; i < end; i++)
		want[i % nrow] |= 1ull << (i / nrow);
	for (uint32_t c = 0; c < mp->ncols; c++) {
		/* a column the request holds whole is read in place */
		if (direct && c >= c0 && c <= c1 && c * nrow >= first &&
		    (c + 1) * nrow <= end) {
			cols[c] = BLK(out, c * nrow - first);
			continue;
		}
		cols[c] = rc_buf_alloc((size_t)nrow * RC_BLOCK_SIZE);
		own[c] = true;
		if (!cols[c]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = read_rows(a, mp, 0, nrow, cols, 0, want);
	for (uint32_t c = c0; c <= c1 && ret == 0; c++) {
		uint32_t lo = c * nrow > first ? c * nrow : first;
		uint32_t hi = (c + 1) * nrow < end ? (c + 1) * nrow : end;

		if (own[c])
			memcpy(BLK(out, lo - first), BLK(cols[c], lo - c * nrow),
			       (size_t)(hi - lo) * RC_BLOCK_SIZE);
	}
out:
	for (uint32_t c = 0; c < mp->ncols; c++)
		if (own[c])
			free(cols[c]);
	return ret;
}

int rc_read(struct rc_array *a, uint64_t block, uint32_t count, void *buf)
{
	struct span sp;        /* 19 KiB, not initialised: nst, np, nio */
	struct rc_stripe *st;
	uint64_t stripe;
	uint32_t col, r, n, chunk = a->g.chunk_blocks;
	uint8_t *out = buf;
	int ret = 0, ret2;

	if (block > a->sb.array_blocks || count > a->sb.array_blocks - block)
		return -EINVAL;
	/* suspended (fail.c): a column whose in-place write failed would
	 * read back old once its device answers again */
	if (rc_array_suspended(a))
		return -EIO;
	sp.nst = sp.np = sp.nio = 0;
	/* a rebuild yields to user I/O (rebuild.c, rebuild_throttle) */
	atomic_store_explicit(&a->last_io_ns, rc_mono_ns(), memory_order_relaxed);
	while (count && ret == 0) {
		rc_geom_locate(&a->g, block, &stripe, &col, &r);
		n = (a->ndata - col) * chunk - r;
		n = n < count ? n : count;
		if (!span_fits(a, &sp, r, n))
			ret = span_read(a, &sp);
		if (ret)
			break;
		rc_geom_stripe(&a->g, stripe, &sp.map[sp.nst]);
		st = rc_stripe_lock(a, stripe);
		ret = read_stripe_rows(a, &sp.map[sp.nst], st, col * chunk + r,
				       n, out);
		if (ret == 1) {
			/* Or every column piece of this stripe that the
			 * request covers, each on its own, in the span. */
			sp.st[sp.nst++] = st;
			span_add(a, &sp, col, r, n, out);
			ret = 0;
		} else {
			rc_stripe_unlock(a, st);
		}
		block += n;
		count -= n;
		out += (size_t)n * RC_BLOCK_SIZE;
	}
	ret2 = span_read(a, &sp);
	ret = ret ? ret : ret2;
	/* a member whose errors passed the threshold goes now, lock-free */
	rc_member_faults_apply(a);
	if (atomic_load(&a->tables_to_heal))
		rc_member_wake(a);
	return ret;
}

/*
 * The one other reading the row gives of column col (row r): the copy of
 * a mirror that proves itself, alone among the copies that differ from
 * cur; or the column rebuilt from the others.  true when cand holds it.
 */
static bool other_reading(struct rc_array *a, const struct rc_stripe_map *mp,
			  uint8_t **cols, uint8_t **state, uint32_t col,
			  const uint8_t *cur, uint8_t *cand,
			  bool (*proves)(void *ctx, const void *data), void *ctx)
{
	int f[RC_MAX_MEMBERS], nf = 0, found = 0;

	if (a->g.level == RC_RAID1 || a->g.level == RC_RAID10) {
		for (uint32_t c = 0; c < mp->ncols; c++) {
			uint8_t s = state[c][0];

			if (s == BLK_ABSENT || s == BLK_EIO || s == BLK_ZERO ||
			    !memcmp(cols[c], cur, RC_BLOCK_SIZE) ||
			    (found && !memcmp(cols[c], cand, RC_BLOCK_SIZE)) ||
			    !proves(ctx, cols[c]))
				continue;
			memcpy(cand, cols[c], RC_BLOCK_SIZE);
			found++;
		}
		return found == 1;
	}
	for (uint32_t c = 0; c < mp->ncols; c++)
		if (c == col || (state[c][0] != BLK_OK && state[c][0] != BLK_ZERO))
			f[nf++] = (int)c;
	if (nf > (int)a->nred ||
	    a->par->recover((int)mp->ndata, (int)a->nred, RC_BLOCK_SIZE,
			    (void *const *)cols, f, nf) != 0)
		return false;
	memcpy(cand, cols[col], RC_BLOCK_SIZE);
	return memcmp(cand, cur, RC_BLOCK_SIZE) != 0 && proves(ctx, cand);
}

int rc_block_reconsider(struct rc_array *a, uint64_t block,
			bool (*proves)(void *ctx, const void *data), void *ctx,
			void *out)
{
	uint8_t *cols[RC_MAX_MEMBERS] = { 0 }, **state = NULL, *cur = NULL;
	bool copy = a->g.level == RC_RAID1 || a->g.level == RC_RAID10;
	bool held = false, writable;
	uint8_t *cand = NULL;
	struct rc_stripe_map mp;
	struct rc_stripe *st;
	uint64_t stripe;
	uint32_t col, r;
	int ret = -ENODATA;

	if (block >= a->sb.array_blocks)
		return -EINVAL;
	if (a->nred == 0 || rc_array_suspended(a))
		return -ENODATA;
	rc_geom_locate(&a->g, block, &stripe, &col, &r);
	rc_geom_stripe(&a->g, stripe, &mp);
	st = rc_stripe_lock(a, stripe);
	/* what was read came from the cache: the media is not its source */
	if (rc_stripe_block_dirty(st, col * a->g.chunk_blocks + r))
		goto out;
	state = rc_state_alloc(mp.ncols, 1);
	cur = rc_buf_alloc(RC_BLOCK_SIZE);
	cand = rc_buf_alloc(RC_BLOCK_SIZE);
	for (uint32_t c = 0; c < mp.ncols; c++)
		if (!(cols[c] = rc_buf_alloc(RC_BLOCK_SIZE)))
			ret = -ENOMEM;
	if (!state || !cur || !cand || ret == -ENOMEM) {
		ret = -ENOMEM;
		goto out;
	}
	rc_stripe_load(a, &mp, r, 1, cols, state);
	/* the block as the caller read it: a column that verifies holds it
	 * (for a mirror, any copy), and the caller's check fails on it */
	memcpy(cur, out, RC_BLOCK_SIZE);
	for (uint32_t c = 0; c < mp.ncols; c++)
		if ((c == col || copy) && state[c][0] == BLK_OK &&
		    !memcmp(cols[c], cur, RC_BLOCK_SIZE))
			held = true;
	if (!held || proves(ctx, cur) ||
	    !other_reading(a, &mp, cols, state, col, cur, cand, proves, ctx))
		goto out;
	memcpy(out, cand, RC_BLOCK_SIZE);
	ret = 0;
	writable = !a->rdonly && rc_array_activate_try(a) == 0;
	for (uint32_t c = 0; c < mp.ncols; c++) {
		const struct rc_col *k = &mp.col[c];
		uint64_t mb = k->offset + r, at = rc_abs(a, mb);

		/* the columns holding the reading that fails: this one, or
		 * every copy of a mirror that holds it */
		if (copy ? state[c][0] == BLK_ABSENT ||
			   memcmp(cols[c], cur, RC_BLOCK_SIZE) : c != col)
			continue;
		atomic_fetch_add(&a->m[k->member].csum_errors, 1);
		rc_member_note_error(a, (int)k->member, RC_ERR_CSUM);
		if (!writable ||
		    rc_io_member_write(a, (int)k->member, at, 1, cand) < 0) {
			rc_log_block(a, (int)k->member, at, "verifies against "
				     "its checksum entry, but the layer above "
				     "proves another reading the redundancy "
				     "gives: served, not written");
			continue;
		}
		rc_csum_update(a, (int)k->member, mb, rc_block_csum(cand, at));
		atomic_fetch_add(&a->m[k->member].repaired, 1);
		rc_log_block(a, (int)k->member, at, "verified against its "
			     "checksum entry, but the layer above proves "
			     "another reading the redundancy gives, not it: "
			     "rewritten with that reading (the block and its "
			     "entry had been rewritten together)");
	}
out:
	rc_stripe_unlock(a, st);
	for (uint32_t c = 0; c < mp.ncols; c++)
		free(cols[c]);
	rc_state_free(state, mp.ncols);
	free(cur);
	free(cand);
	return ret;
}
