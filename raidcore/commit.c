/*
 * commit: turns dirty stripes into new columns and puts them on the
 * members through the journal (docs/DESIGN.md, "No write hole").
 *
 *   rc_write            (writeback.c) copy into the stripe cache, mark
 *                       dirty (the first one activates the array:
 *                       activate.c)
 *   rc_commit           batch: lock stripes ascending, compute, journal,
 *                       flush (commit point), write in place, unlock
 *   rc_flush            rc_commit of everything
 *
 * A stripe whose data blocks are all dirty and all fresh (RC_WRITE_FRESH)
 * is a direct stripe: its columns are not copied into the journal; each
 * participant's records name it (RC_JENT_DIRECT) and it is written in
 * place after the commit point with the rest.  Its table blocks are
 * journaled as always.  Replay makes the direct stripes of the last batches
 * (those whose durability no later record proves) consistent as they are
 * found (replay.c, docs/DESIGN.md "Direct
 * stripes"); rc_flush flushes once more after them.
 *
 * For each run of rows of a stripe with the same set of dirty columns the
 * new parity is computed from full data (all dirty), by reconstruct-write
 * (read the clean columns) or by read-modify-write (read old dirty columns
 * and old parity), whichever reads fewer blocks.  Reads go through
 * rc_col_read, so they are verified and reconstructed when degraded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)
#define BATCH_MAX 256

/* One contiguous in-place write, also journaled. */
struct wrun {
	int member;
	uint64_t mblock;        /* data-region relative, or absolute if abs */
	uint32_t count;
	const uint8_t *data;
	bool abs;
	bool direct;            /* of a direct stripe: not journaled */
	bool credit;            /* a table block whose read had failed:
				   rc_csum_rewrite_done once written */
	uint64_t *csum;         /* per block, filled by wset_checksum */
};

/* A column piece read ahead for a parity run (wset_prefetch). */
struct pre {
	uint64_t stripe;
	uint32_t col, r0, nr;
	int member;
	uint64_t block;         /* absolute */
	uint8_t *buf;           /* in the arena */
	int err;                /* the member read's result */
};

struct wset {
	struct wrun *runs;
	uint32_t n, cap;
	uint64_t *direct;       /* the direct stripes, ascending */
	uint32_t ndirect;
	struct rc_arena *arena; /* scratch, taken back after the commit */
	uint8_t **bufs;         /* other buffers to free after the commit */
	uint32_t nbufs, capbufs;
	struct pre *pre;        /* read ahead, in the order they are used */
	uint32_t npre, cappre, pre_next;
};

static int wset_add(struct wset *w, struct wrun r)
{
	struct wrun *nr;

	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		nr = realloc(w->runs, w->cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		w->runs = nr;
	}
	w->runs[w->n++] = r;
	return 0;
}

static uint8_t *wset_alloc(struct wset *w, size_t bytes)
{
	return rc_arena_alloc(w->arena, bytes);
}

/* w frees buf (malloc'd elsewhere) with the rest. */
static int wset_adopt(struct wset *w, uint8_t *buf)
{
	uint8_t **nb;

	if (w->nbufs == w->capbufs) {
		w->capbufs = w->capbufs ? w->capbufs * 2 : 16;
		nb = realloc(w->bufs, w->capbufs * sizeof(*nb));
		if (!nb)
			return -ENOMEM;
		w->bufs = nb;
	}
	w->bufs[w->nbufs++] = buf;
	return 0;
}

/* Scratch kept between commits: a RAID 6 batch of full 64 KiB-chunk
 * stripes needs about this much. */
#define ARENA_KEEP (48u << 20)

static void wset_free(struct wset *w)
{
	for (uint32_t i = 0; i < w->nbufs; i++)
		free(w->bufs[i]);
	free(w->bufs);
	free(w->runs);
	free(w->direct);
	free(w->pre);
	rc_arena_reset(w->arena, ARENA_KEEP);
	memset(w, 0, sizeof(*w));
}

static uint64_t dirty_mask(const struct rc_array *a,
			   const struct rc_stripe *st, uint32_t r)
{
	uint64_t m = 0;

	for (uint32_t c = 0; c < a->ndata; c++)
		if (rc_stripe_block_dirty(st, c * a->g.chunk_blocks + r))
			m |= 1ull << c;
	return m;
}

/* How many rows from r0 on share row r0's dirty set (*mask). */
static uint32_t dirty_run(const struct rc_array *a, const struct rc_stripe *st,
			  uint32_t r0, uint64_t *mask)
{
	uint32_t nr = 1;

	*mask = dirty_mask(a, st, r0);
	while (r0 + nr < a->g.chunk_blocks &&
	       dirty_mask(a, st, r0 + nr) == *mask)
		nr++;
	return nr;
}

/* Queues the in-place writes of column c, rows [r0, r0 + nr), from buf. */
static int queue_col(struct rc_array *a, struct wset *w,
		     const struct rc_stripe_map *mp, uint32_t c, uint32_t r0,
		     uint32_t nr, const uint8_t *buf)
{
	const struct rc_col *col = &mp->col[c];

	if (!rc_member_usable(a, (int)col->member, mp->stripe))
		return 0;
	return wset_add(w, (struct wrun){ .member = (int)col->member,
		.mblock = col->offset + r0, .count = nr, .data = buf });
}

/*
 * The columns a run of rows whose dirty set is mask (not empty) reads for
 * its new parity: the clean data columns (reconstruct-write), or the
 * dirty ones and the parity (read-modify-write, *rmw), whichever reads
 * fewer blocks.  A column on a member that is not usable costs a whole
 * row's reads (its slow path).
 */
static uint64_t run_reads(struct rc_array *a, const struct rc_stripe_map *mp,
			  uint64_t mask, bool *rmw)
{
	uint32_t d = a->ndata, ndirty = (uint32_t)__builtin_popcountll(mask);
	uint32_t rcw_cost = 0, rmw_cost = ndirty + a->nred;
	uint64_t data = (1ull << d) - 1;

	for (uint32_t c = 0; c < d; c++)
		if (!(mask >> c & 1))
			rcw_cost += rc_member_usable(a, (int)mp->col[c].member,
						     mp->stripe) ? 1 : d;
	for (uint32_t k = 0; k < a->nred; k++)
		if (!rc_member_usable(a, (int)mp->col[d + k].member, mp->stripe))
			rmw_cost += d;
	*rmw = !(ndirty == d || rcw_cost <= rmw_cost);
	return *rmw ? mask | (((1ull << a->nred) - 1) << d) : data & ~mask;
}

static int pre_add(struct wset *w, struct pre p)
{
	struct pre *np;

	if (w->npre == w->cappre) {
		w->cappre = w->cappre ? w->cappre * 2 : 64;
		np = realloc(w->pre, w->cappre * sizeof(*np));
		if (!np)
			return -ENOMEM;
		w->pre = np;
	}
	w->pre[w->npre++] = p;
	return 0;
}

/*
 * Reads ahead, all at once, every column piece the parity runs of the
 * locked stripes st[0..n) will read (run_reads), so that the members'
 * waits overlap (rc_io_run) where one read after the other they would add
 * up: at RAID 5, two reads per random write.  What is not read here (a
 * member not usable now, or a choice that changed by the time the run is
 * computed) is read by col_get itself.
 */
static int wset_prefetch(struct rc_array *a, struct wset *w,
			 struct rc_stripe **st, uint32_t n)
{
	uint32_t chunk = a->g.chunk_blocks, nr;
	struct rc_stripe_map map;
	struct rc_io *io;
	uint64_t mask, reads;
	bool rmw;
	int ret = 0;

	if (!a->nred || a->g.level == RC_RAID1 || a->g.level == RC_RAID10)
		return 0;
	for (uint32_t i = 0; i < n && ret == 0; i++) {
		if (!st[i]->data || !st[i]->ndirty)
			continue;
		rc_geom_stripe(&a->g, st[i]->stripe, &map);
		for (uint32_t r0 = 0; r0 < chunk && ret == 0; r0 += nr) {
			nr = dirty_run(a, st[i], r0, &mask);
			reads = mask ? run_reads(a, &map, mask, &rmw) : 0;
			for (uint32_t c = 0; c < map.ncols && ret == 0; c++) {
				struct pre p = { .stripe = map.stripe, .col = c,
					.r0 = r0, .nr = nr,
					.member = (int)map.col[c].member,
					.block = rc_abs(a, map.col[c].offset + r0) };

				if (!(reads >> c & 1) ||
				    !rc_member_usable(a, p.member, map.stripe))
					continue;
				p.buf = wset_alloc(w, (size_t)nr * RC_BLOCK_SIZE);
				ret = p.buf ? pre_add(w, p) : -ENOMEM;
			}
		}
	}
	if (ret || !w->npre)
		return ret;
	io = calloc(w->npre, sizeof(*io));
	if (!io)
		return -ENOMEM;
	for (uint32_t i = 0; i < w->npre; i++)
		io[i] = (struct rc_io){ .member = w->pre[i].member,
			.buf = w->pre[i].buf, .block = w->pre[i].block,
			.count = w->pre[i].nr,
			.retried = true };      /* rc_col_check reads again */
	rc_io_run(a, io, (int)w->npre);
	for (uint32_t i = 0; i < w->npre; i++)
		w->pre[i].err = io[i].err;
	free(io);
	return 0;
}

/* The piece read ahead for column c, rows [r0, r0 + nr) of mp's stripe,
 * or NULL.  Pieces are asked for in the order they were read ahead. */
static struct pre *pre_find(struct wset *w, const struct rc_stripe_map *mp,
			    uint32_t c, uint32_t r0, uint32_t nr)
{
	for (uint32_t k = 0; k < w->npre; k++) {
		uint32_t i = (w->pre_next + k) % w->npre;
		struct pre *p = &w->pre[i];

		if (p->stripe == mp->stripe && p->col == c && p->r0 == r0 &&
		    p->nr == nr) {
			w->pre_next = i + 1;
			return p;
		}
	}
	return NULL;
}

/* Column c, rows [r0, r0 + nr) of mp's stripe, verified (rc_col_read's
 * rules for the write path) in *out: the piece read ahead, or read now. */
static int col_get(struct rc_array *a, struct wset *w,
		   const struct rc_stripe_map *mp, uint32_t c, uint32_t r0,
		   uint32_t nr, uint8_t **out)
{
	struct pre *p = pre_find(w, mp, c, r0, nr);

	if (p) {
		*out = p->buf;
		return rc_col_check(a, mp, c, r0, nr, p->buf, false, p->err);
	}
	*out = wset_alloc(w, (size_t)nr * RC_BLOCK_SIZE);
	if (!*out)
		return -ENOMEM;
	return rc_col_read(a, mp, c, r0, nr, *out, false);
}

/*
 * New parity for rows [r0, r0 + nr) whose dirty set is mask (not empty).
 * par[k] points at row r0 of parity column k.  other: by the method
 * run_reads did not choose (its reads failed: a row that holds a block
 * the array cannot rebuild may still be written the other way).
 */
static int compute_parity_run(struct rc_array *a, struct wset *w,
			      const struct rc_stripe_map *mp,
			      struct rc_stripe *st, uint32_t r0, uint32_t nr,
			      uint64_t mask, uint8_t **par, bool other)
{
	uint32_t d = a->ndata, chunk = a->g.chunk_blocks;
	size_t len = (size_t)nr * RC_BLOCK_SIZE;
	void *data[RC_MAX_MEMBERS], *src[2];
	uint8_t *old, *oldpar[2], *dp, *dq;
	bool rmw;
	uint64_t reads = run_reads(a, mp, mask, &rmw);
	int ret;

	if (other) {
		rmw = !rmw;
		reads = rmw ? mask | (((1ull << a->nred) - 1) << d) :
			      ((1ull << d) - 1) & ~mask;
	}

	for (uint32_t c = 0; c < d; c++) {
		data[c] = BLK(st->data, c * chunk + r0);
		if (!(reads >> c & 1))
			continue;
		ret = col_get(a, w, mp, c, r0, nr, &old);
		if (ret < 0)
			return ret;
		if (!rmw) {
			data[c] = old;
			continue;
		}
		/* read-modify-write: the column's delta, old ^ new */
		dp = wset_alloc(w, len);
		if (!dp)
			return -ENOMEM;
		src[0] = old;
		src[1] = data[c];
		a->par->gen_p(2, len, src, dp);
		data[c] = dp;
	}
	if (!rmw) {
		if (a->nred == 2)
			a->par->gen_pq((int)d, len, data, par[0], par[1]);
		else
			a->par->gen_p((int)d, len, data, par[0]);
		return 0;
	}
	/* New P = old P ^ P(deltas), and for Q the syndrome of the deltas
	 * added to the old Q. */
	for (uint32_t c = 0; c < d; c++)
		if (!(mask >> c & 1))
			data[c] = a->zero;
	for (uint32_t k = 0; k < a->nred; k++) {
		ret = col_get(a, w, mp, d + k, r0, nr, &oldpar[k]);
		if (ret < 0)
			return ret;
	}
	dp = wset_alloc(w, len);
	dq = wset_alloc(w, len);
	if (!dp || !dq)
		return -ENOMEM;
	if (a->nred == 2)
		a->par->gen_pq((int)d, len, data, dp, dq);
	else
		a->par->gen_p((int)d, len, data, dp);
	for (uint32_t k = 0; k < a->nred; k++) {
		src[0] = oldpar[k];
		src[1] = k ? dq : dp;
		a->par->gen_p(2, len, src, par[k]);
	}
	return 0;
}

/* Does the stripe go direct: every data block dirty and fresh? */
static bool stripe_direct(const struct rc_array *a, const struct rc_stripe *st)
{
	return !st->stale && st->ndirty == a->stripe_blocks;
}

/*
 * A run of rows whose new parity cannot be made either way: a block it
 * needs is lost (a degraded RAID 5 whose row holds a block lost to a read
 * error, written over).  Its writes are dropped, not queued - named in
 * the log, raised as lost blocks and remembered (rc_write_failed) - and
 * the batch goes on: before 2026-12-07 the stripe stayed dirty and failed
 * every later commit, so every flush of the array failed and its close
 * lost what the cache held (the filesystem read-only after one write next
 * to a damaged file).  Caller holds commit_lock and the stripe's lock.
 */
static void drop_run(struct rc_array *a, const struct rc_stripe_map *mp,
		     uint32_t r0, uint32_t nr, uint64_t mask)
{
	uint64_t first = mp->stripe * a->stripe_blocks, i;

	rc_log("stripe %llu, rows %u-%u: the write cannot be placed: the row "
	       "holds blocks the array cannot rebuild, which its new parity "
	       "needs; %u written blocks are dropped (they read as before)",
	       (unsigned long long)mp->stripe, r0, r0 + nr - 1,
	       nr * (uint32_t)__builtin_popcountll(mask));
	for (uint32_t c = 0; c < a->ndata; c++) {
		if (!(mask >> c & 1))
			continue;
		i = atomic_load(&a->wdrop_n);
		a->wdrop[i % RC_WDROP_KEEP].block = first + c * a->g.chunk_blocks + r0;
		a->wdrop[i % RC_WDROP_KEEP].count = nr;
		atomic_store(&a->wdrop_n, i + 1);
		for (uint32_t r = r0; r < r0 + nr; r++)
			rc_event_emit(a, RC_EV_LOST, -1, NULL, NULL,
				      first + c * a->g.chunk_blocks + r, 1, -EIO);
	}
	atomic_store(&a->errors_seen, true);
}

/* Queues every write of one locked dirty stripe. */
static int stripe_prepare(struct rc_array *a, struct wset *w,
			  struct rc_stripe *st)
{
	struct rc_stripe_map map;
	uint32_t chunk = a->g.chunk_blocks, r0, nr;
	uint8_t *par[2] = { NULL, NULL };
	uint64_t mask;
	int ret = 0;

	rc_geom_stripe(&a->g, st->stripe, &map);
	if (a->nred && !(a->g.level == RC_RAID1 || a->g.level == RC_RAID10)) {
		for (uint32_t k = 0; k < a->nred; k++) {
			par[k] = wset_alloc(w, (size_t)chunk * RC_BLOCK_SIZE);
			if (!par[k])
				return -ENOMEM;
		}
	}
	for (r0 = 0; r0 < chunk && ret == 0; r0 += nr) {
		nr = dirty_run(a, st, r0, &mask);
		if (!mask)
			continue;
		for (uint32_t k = 0; par[0] && k < a->nred; k++)
			par[k] += (size_t)r0 * RC_BLOCK_SIZE;
		if (par[0])
			ret = compute_parity_run(a, w, &map, st, r0, nr, mask,
						 par, false);
		if (ret == -EIO && __builtin_popcountll(mask) < a->ndata)
			ret = compute_parity_run(a, w, &map, st, r0, nr, mask,
						 par, true);
		for (uint32_t k = 0; par[0] && k < a->nred; k++)
			par[k] -= (size_t)r0 * RC_BLOCK_SIZE;
		/* the array itself failing is not this row's doing */
		if (ret == -EIO && !rc_array_failed(a)) {
			drop_run(a, &map, r0, nr, mask);
			ret = 0;
			continue;
		}
		for (uint32_t c = 0; c < a->ndata && ret == 0; c++) {
			if (!(mask >> c & 1))
				continue;
			ret = queue_col(a, w, &map, c, r0, nr,
					BLK(st->data, c * chunk + r0));
			/* Mirrors: the same data to every copy. */
			for (uint32_t k = a->ndata; par[0] == NULL &&
			     k < map.ncols && ret == 0; k++)
				ret = queue_col(a, w, &map, k, r0, nr,
						BLK(st->data, c * chunk + r0));
		}
		for (uint32_t k = 0; par[0] && k < a->nred && ret == 0; k++)
			ret = queue_col(a, w, &map, a->ndata + k, r0, nr,
					par[k] + (size_t)r0 * RC_BLOCK_SIZE);
	}
	return ret;
}

/* Checksums of every queued block into the tables. */
static int wset_checksum(struct rc_array *a, struct wset *w)
{
	int ret = 0;

	for (uint32_t i = 0; i < w->n && ret == 0; i++) {
		struct wrun *run = &w->runs[i];

		run->csum = (uint64_t *)wset_alloc(w, run->count * sizeof(uint64_t));
		if (!run->csum)
			return -ENOMEM;
		for (uint32_t b = 0; b < run->count && ret == 0; b++) {
			uint64_t mb = run->mblock + b;

			run->csum[b] = rc_block_csum(BLK(run->data, b),
						     rc_abs(a, mb));
			ret = rc_csum_update(a, run->member, mb, run->csum[b]);
		}
	}
	return ret;
}

/* Adds every member's dirty checksum table blocks to the set. */
static int wset_add_tables(struct rc_array *a, struct wset *w)
{
	uint8_t *blocks;
	uint64_t *targets;
	bool *credit;
	uint32_t n;
	int ret = 0;

	for (uint32_t m = 0; m < a->g.members && ret == 0; m++) {
		if (!a->m[m].dev)
			continue;
		ret = rc_csum_take_dirty(a, (int)m, &blocks, &targets, &credit,
					 &n);
		if (ret < 0 || n == 0)
			continue;
		if (wset_adopt(w, blocks) < 0) {
			free(blocks);
			free(targets);
			free(credit);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < n && ret == 0; i++)
			ret = wset_add(w, (struct wrun){ .member = (int)m,
				.mblock = targets[i], .count = 1,
				.data = BLK(blocks, i), .abs = true,
				.credit = credit[i] });
		free(targets);
		free(credit);
	}
	return ret;
}

/* Journals the whole set as one batch; the flush is the commit point. */
static int wset_journal(struct rc_array *a, struct wset *w)
{
	struct rc_jwrite *jw[RC_MAX_MEMBERS] = { 0 };
	uint32_t n[RC_MAX_MEMBERS] = { 0 };
	uint64_t named = 0;     /* members a direct run goes to */
	int ret = 0;

	for (uint32_t i = 0; i < w->n; i++) {
		if (w->runs[i].direct)
			named |= 1ull << w->runs[i].member;
		else
			n[w->runs[i].member] += w->runs[i].count;
	}
	for (uint32_t m = 0; m < a->g.members; m++) {
		if (named >> m & 1)
			n[m] += w->ndirect;
		if (!n[m])
			continue;
		jw[m] = malloc(n[m] * sizeof(**jw));
		if (!jw[m]) {
			ret = -ENOMEM;
			goto out;
		}
		n[m] = 0;
	}
	for (uint32_t i = 0; i < w->n; i++) {
		struct wrun *run = &w->runs[i];

		for (uint32_t b = 0; b < run->count && !run->direct; b++)
			jw[run->member][n[run->member]++] = (struct rc_jwrite){
				.target = run->abs ? run->mblock + b :
					  rc_abs(a, run->mblock + b),
				.data = BLK(run->data, b),
				.csum = run->csum ? run->csum[b] : 0 };
	}
	/* After the payload: every member the direct stripes write to names
	 * them all, so losing nred members' records hides none. */
	for (uint32_t m = 0; m < a->g.members; m++)
		for (uint32_t k = 0; (named >> m & 1) && k < w->ndirect; k++)
			jw[m][n[m]++] = (struct rc_jwrite){
				.target = RC_JENT_DIRECT | w->direct[k] };
	ret = rc_journal_write(a, jw, n);
out:
	for (uint32_t m = 0; m < a->g.members; m++)
		free(jw[m]);
	return ret;
}

static void wset_write_in_place(struct rc_array *a, struct wset *w)
{
	struct rc_io *io = calloc(w->n ? w->n : 1, sizeof(*io));

	if (!io) {
		/* The journal holds it all: replay at the next assembly. */
		return;
	}
	for (uint32_t i = 0; i < w->n; i++)
		io[i] = (struct rc_io){ .member = w->runs[i].member,
			.write = true, .buf = (void *)w->runs[i].data,
			.block = w->runs[i].abs ? w->runs[i].mblock :
				 rc_abs(a, w->runs[i].mblock),
			.count = w->runs[i].count };
	rc_io_run(a, io, (int)w->n);
	for (uint32_t i = 0; i < w->n; i++) {
		struct rc_member *m = &a->m[io[i].member];
		int k;

		if (io[i].err < 0) {
			rc_member_set_faulty_err(a, io[i].member,
						 "in-place write failed",
						 io[i].err);
			continue;
		}
		if (w->runs[i].credit)
			rc_csum_rewrite_done(a, io[i].member, io[i].block);
		/* the checkpoint reads the last table block and the last
		 * data block back (fail.c) */
		k = io[i].block >= a->sb.csum_offset &&
		    io[i].block < a->sb.csum_offset + a->sb.csum_blocks ? 0 : 1;
		m->wcheck_block[k] = io[i].block;
		m->wcheck_sum[k] = rc_block_csum(io[i].buf, io[i].block);
		m->wcheck_dev[k] = m->dev;
	}
	free(io);
}

/* Flushes every member; earlier direct stripes are durable after it. */
static int commit_sync(struct rc_array *a)
{
	int ret = rc_member_sync_all(a) < 0 && rc_array_failed(a) ? -EIO : 0;

	if (ret == 0)
		a->direct_unsynced = false;
	return ret;
}

static int commit_batch(struct rc_array *a, const uint64_t *stripes,
			uint32_t n)
{
	struct rc_stripe *st[BATCH_MAX];
	struct wset w = { .arena = &a->commit_arena };
	int ret = 0;

	for (uint32_t i = 0; i < n; i++)
		st[i] = rc_stripe_lock(a, stripes[i]);
	if (n && !(w.direct = malloc(n * sizeof(*w.direct))))
		ret = -ENOMEM;
	if (ret == 0)
		ret = wset_prefetch(a, &w, st, n);
	for (uint32_t i = 0; i < n && ret == 0; i++) {
		uint32_t first = w.n;

		if (!st[i]->data || !st[i]->ndirty)
			continue;
		ret = stripe_prepare(a, &w, st[i]);
		if (ret == 0 && stripe_direct(a, st[i])) {
			w.direct[w.ndirect++] = stripes[i];
			for (; first < w.n; first++)
				w.runs[first].direct = true;
		}
	}
	if (ret == 0)
		ret = wset_checksum(a, &w);
	if (ret == 0)
		ret = wset_add_tables(a, &w);
	/* Recorded before anything of the batch reaches a member. */
	for (uint32_t i = 0; i < n && ret == 0 && w.n; i++)
		rc_wi_note(a, stripes[i]);
	if (ret == 0 && w.n)
		ret = rc_wi_flush(a);
	if (ret == 0 && w.n)
		ret = wset_journal(a, &w);
	if (ret == 0 && w.n)
		ret = commit_sync(a);
	/* Committed: the new state is durable in the journal, but for the
	 * direct stripes, which only the next flush makes durable. */
	if (ret == 0)
		wset_write_in_place(a, &w);
	if (ret == 0 && w.ndirect) {
		a->direct_unsynced = true;
		a->direct_stripes += w.ndirect;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (ret == 0)
			rc_stripe_clean(a, st[i]);
		else if (st[i]->data && st[i]->ndirty)
			rc_stripe_relist(a, st[i]);
		rc_stripe_unlock(a, st[i]);
	}
	wset_free(&w);
	return ret;
}

/* Stripes per batch, so one batch fits easily in every member's ring. */
static uint32_t batch_stripes(const struct rc_array *a)
{
	uint64_t per = a->g.chunk_blocks + 2, room = a->journal_blocks / 4;
	uint64_t n = room / per;

	if (a->g.level == RC_RAID1 || a->g.level == RC_RAID10 ||
	    a->g.level == RC_RAID0)
		n = room / (per * a->ndata);
	n = n < 1 ? 1 : n;
	return n > BATCH_MAX ? BATCH_MAX : (uint32_t)n;
}

int rc_commit(struct rc_array *a, bool all)
{
	uint64_t stripes[BATCH_MAX];
	uint32_t n, target = all ? 0 : a->max_dirty_stripes / 2;
	int ret = 0;

	if (a->rdonly)
		return 0;
	if (rc_array_suspended(a))
		return -EIO;
	/* Nothing was written yet (rc_write activates): nothing to flush. */
	if (!rc_array_is_active(a))
		return 0;
	rc_commit_lock(a);
	while (ret == 0 && a->ndirty_stripes > target) {
		n = rc_stripe_take_dirty(a, stripes, batch_stripes(a));
		if (n == 0)
			break;
		ret = commit_batch(a, stripes, n);
	}
	/* Table entries fixed by repairs, when nothing else carried them. */
	if (ret == 0 && all)
		ret = commit_batch(a, NULL, 0);
	/* A flush: the direct stripes are durable once it returns. */
	if (ret == 0 && all && a->direct_unsynced)
		ret = commit_sync(a);
	pthread_mutex_unlock(&a->commit_lock);
	return ret;
}

int rc_commit_tables(struct rc_array *a)
{
	return rc_commit(a, true);
}

int rc_flush_dropping(struct rc_array *a)
{
	int ret = rc_commit(a, true);

	rc_member_faults_apply(a);
	return ret;
}

int rc_flush(struct rc_array *a)
{
	uint64_t n = atomic_load(&a->wdrop_n);
	int ret = rc_flush_dropping(a);

	return ret == 0 && atomic_load(&a->wdrop_n) != n ? -EIO : ret;
}

uint64_t rc_write_failures(struct rc_array *a)
{
	return atomic_load(&a->wdrop_n);
}

bool rc_write_failed(struct rc_array *a, uint64_t since, uint64_t block,
		     uint64_t count)
{
	uint64_t n;
	bool hit = false;

	if (atomic_load(&a->wdrop_n) == since)
		return false;
	rc_commit_lock(a);
	n = atomic_load(&a->wdrop_n);
	if (n - since > RC_WDROP_KEEP)
		hit = true;             /* forgotten since: cannot tell */
	for (uint64_t i = since; i < n && !hit; i++)
		hit = a->wdrop[i % RC_WDROP_KEEP].block < block + count &&
		      block < a->wdrop[i % RC_WDROP_KEEP].block +
			      a->wdrop[i % RC_WDROP_KEEP].count;
	pthread_mutex_unlock(&a->commit_lock);
	return hit;
}

void rc_write_abandon(struct rc_array *a, uint64_t block, uint64_t count)
{
	uint64_t sb = a->stripe_blocks, last;
	struct rc_stripe *st;

	if (!count || block >= a->sb.array_blocks)
		return;
	last = (block + count - 1) / sb;
	for (uint64_t s = block / sb; s <= last; s++) {
		st = rc_stripe_lock(a, s);
		if (st->data && st->ndirty)
			rc_stripe_forget(a, st);
		rc_stripe_unlock(a, st);
	}
}

/*
 * Discard: whole stripes inside the range become "never written" - every
 * column's table entries go to 0, so they read as zeros, parity included,
 * and rebuild and scrub skip them.  The table blocks reach the media with
 * the next commit; until then a crash brings back the old, still
 * consistent, contents.  Parts of stripes at the edges are left alone (a
 * discard is advisory, like TRIM).
 */
int rc_discard(struct rc_array *a, uint64_t block, uint64_t count)
{
	uint64_t sb = a->stripe_blocks, first, last;
	struct rc_stripe_map map;
	struct rc_stripe *st;
	int ret = 0;

	ret = rc_array_write_begin(a, block, count);
	if (ret < 0)
		return ret;
	first = RC_DIV_ROUND_UP(block, sb);
	last = (block + count) / sb;
	for (uint64_t s = first; s < last && ret == 0; s++) {
		rc_geom_stripe(&a->g, s, &map);
		st = rc_stripe_lock(a, s);
		rc_wi_note(a, s);
		if (st->data)
			rc_stripe_forget(a, st);
		for (uint32_t c = 0; c < map.ncols && ret == 0; c++) {
			if (!rc_member_usable(a, (int)map.col[c].member, s))
				continue;
			for (uint32_t r = 0; r < a->g.chunk_blocks && ret == 0; r++)
				ret = rc_csum_update(a, (int)map.col[c].member,
						     map.col[c].offset + r,
						     RC_CSUM_UNWRITTEN);
		}
		rc_stripe_unlock(a, st);
	}
	return ret;
}
