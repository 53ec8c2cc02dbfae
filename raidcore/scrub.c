/*
 * scrub: verify every stripe of the array - every block against its
 * checksum, every row's parity (or copies) against its data - and, when
 * asked, repair what is wrong.
 *
 * With checksums a bad block is named exactly and rebuilt from the
 * verified columns (verify.c decides, by the repair rules of DESIGN.md).
 * A row whose blocks all pass their checksums but whose parity disagrees
 * (a lost write of a block together with its table entry) cannot say which
 * column is wrong: it is reported and left alone (md's "repair" recomputes
 * parity there, which makes one wrong data column permanent).  Each stripe
 * is handled under its lock, so scrub runs while the array is in use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)
#define SCRUB_BATCH_BYTES (4u << 20)    /* per member per batch */
#define SCRUB_BATCH_MAX 1024

/* Where rc_scrub_list puts the lost blocks; one per call, on its stack. */
struct bad_list {
	uint64_t *bad;
	uint64_t cap;
};

/* Logical numbers of the row's data blocks that are lost. */
static void report_bad(struct rc_array *a, const struct rc_stripe_map *map,
		       struct rc_scrub_report *rep, struct bad_list *bl,
		       uint32_t r, const struct rc_row *v)
{
	for (uint32_t c = 0; c < map->ndata; c++) {
		if (v->known[c])
			continue;
		if (bl->bad && rep->nbad < bl->cap)
			bl->bad[rep->nbad] = map->stripe * a->stripe_blocks +
					     c * a->g.chunk_blocks + r;
		rep->nbad++;
	}
}

static void count_row(struct rc_scrub_report *rep, const struct rc_stripe_map *map,
		      uint8_t **state, uint32_t r, const struct rc_row *v,
		      bool repair)
{
	for (uint32_t c = 0; c < map->ncols; c++) {
		uint8_t s = state[c][r];

		/* and an entry saying "never written" that the row proves
		 * false: a table that lies (-n said clean, a tester's find);
		 * or a parity block P and Q named though it verified */
		rep->csum_errors += s == BLK_BAD ||
				    ((s == BLK_ZERO || s == BLK_OK) &&
				     v->fix[c] != RC_FIX_NONE);
		rep->read_errors += s == BLK_EIO;
		rep->unverified += s == BLK_UNKNOWN;
		if (!v->known[c] && s != BLK_ABSENT && s != BLK_OK)
			rep->unrecoverable++;
		if (!repair)
			continue;
		rep->repaired += rc_fix_writes(v->fix[c], s);
		rep->entries_fixed += !rc_fix_writes(v->fix[c], s) &&
				      (v->fix[c] == RC_FIX_ENTRY ||
				       v->fix[c] == RC_FIX_ZERO_ENTRY);
	}
	rep->conflicts += v->conflicts;
}

#define RC_SUSPECT_MAX 4096

/* Stripe s disagrees with itself: noted for rc_block_suspect. */
static void suspect_note(struct rc_array *a, uint64_t s)
{
	uint32_t i;

	pthread_mutex_lock(&a->suspect_lock);
	if (!a->suspect && !a->suspect_all)
		a->suspect = malloc(RC_SUSPECT_MAX * sizeof(*a->suspect));
	if (!a->suspect || a->nsuspect == RC_SUSPECT_MAX) {
		a->suspect_all = true;
	} else {
		for (i = a->nsuspect; i > 0 && a->suspect[i - 1] > s; i--)
			;
		if (i == 0 || a->suspect[i - 1] != s) {
			memmove(&a->suspect[i + 1], &a->suspect[i],
				(a->nsuspect - i) * sizeof(*a->suspect));
			a->suspect[i] = s;
			a->nsuspect++;
		}
	}
	pthread_mutex_unlock(&a->suspect_lock);
}

/* Is s in the ascending v[0 .. n)? */
static bool in_sorted(const uint64_t *v, uint32_t n, uint64_t s)
{
	uint32_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid] < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == s;
}

bool rc_block_suspect(struct rc_array *a, uint64_t block)
{
	bool found;

	pthread_mutex_lock(&a->suspect_lock);
	found = a->suspect_all || in_sorted(a->suspect, a->nsuspect,
					    block / a->stripe_blocks);
	pthread_mutex_unlock(&a->suspect_lock);
	return found;
}

uint64_t rc_suspect_recheck(struct rc_array *a)
{
	struct rc_scrub_report rep;
	uint64_t *v = NULL, left = 0;
	uint32_t n, total, ngone = 0, k = 0;
	bool whole = true, all;

	/* a stripe can be seen to agree only with every column there: a
	 * degraded array has nothing to check a row against */
	pthread_mutex_lock(&a->state_lock);
	for (uint32_t m = 0; m < a->g.members; m++)
		whole &= a->m[m].dev && a->m[m].state == RC_MEMBER_ACTIVE;
	pthread_mutex_unlock(&a->state_lock);
	pthread_mutex_lock(&a->suspect_lock);
	all = a->suspect_all;
	total = a->nsuspect;
	n = all || !whole ? 0 : total;
	if (n && (v = malloc(n * sizeof(*v))))
		memcpy(v, a->suspect, n * sizeof(*v));
	pthread_mutex_unlock(&a->suspect_lock);
	if (!v)
		return all || total ? UINT64_MAX : 0;
	/* v keeps, ascending, the stripes that agree with themselves now */
	for (uint32_t i = 0; i < n; i++) {
		if (rc_scrub_stripes(a, v[i], 1, false, &rep) == 0 &&
		    !rep.parity_mismatches && !rep.unrecoverable) {
			v[ngone++] = v[i];
			continue;
		}
		left += rep.parity_mismatches ? rep.parity_mismatches : 1;
	}
	pthread_mutex_lock(&a->suspect_lock);
	for (uint32_t i = 0; i < a->nsuspect; i++)
		if (!in_sorted(v, ngone, a->suspect[i]))
			a->suspect[k++] = a->suspect[i];
	a->nsuspect = k;
	pthread_mutex_unlock(&a->suspect_lock);
	free(v);
	return left;
}

/*
 * The rows of one stripe whose columns are loaded: resolved, counted and,
 * when asked, repaired by verify.c's rules - never over a block that
 * verifies, never from evidence that disagrees.  A row whose blocks all
 * verify but whose redundancy disagrees is reported, not "fixed": which
 * column is wrong cannot be told.
 */
static int scrub_rows(struct rc_array *a, const struct rc_stripe_map *map,
		      bool repair, struct rc_scrub_report *rep,
		      struct bad_list *bl, uint8_t **cols, uint8_t **state)
{
	bool mismatch = false, named = false;
	struct rc_row v;
	uint32_t lost, u, failed, unheld = 0;
	int ret;

	for (uint32_t r = 0; r < a->g.chunk_blocks; r++) {
		ret = rc_row_resolve(a, map, cols, r, r, state, &v);
		if (ret)
			return ret;
		count_row(rep, map, state, r, &v, repair && !a->rdonly);
		failed = 0;
		u = rc_row_apply(a, map, cols, r, r, state, &v, repair,
				 &failed);
		/* rewritten, not repaired: counted as a mismatch below; not
		 * written at all (the member failed the write): not
		 * repaired either */
		rep->repaired -= u + failed < rep->repaired ?
				 u + failed : rep->repaired;
		unheld += u;
		mismatch |= v.mismatch;
		for (uint32_t c = 0; c < map->ncols; c++)
			named |= v.blamed[c];
		lost = rc_row_report_lost(a, map, r, &v, ~0ull);
		if (lost) {
			atomic_fetch_add(&a->unrecoverable, lost);
			atomic_store(&a->errors_seen, true);
		}
		report_bad(a, map, rep, bl, r, &v);
	}
	if (mismatch) {
		rc_log("stripe %llu: %s: not repaired",
		       (unsigned long long)map->stripe,
		       a->g.level == RC_RAID1 || a->g.level == RC_RAID10 ?
		       "its copies disagree, each verifying; which is wrong "
		       "cannot be told" :
		       named ? "P and Q name a data block that verifies "
			       "against its own entry (above); which to "
			       "believe cannot be told" :
		       "parity disagrees with data that verifies; which block "
		       "is wrong cannot be told");
		suspect_note(a, map->stripe);
	}
	/* A member that does not keep what is written to it (a member kept
	 * despite its errors, fail.c): its column of these rows is no
	 * redundancy - a stripe that would not survive the loss of another
	 * member, counted as a mismatch is. */
	if (unheld)
		rc_log("stripe %llu: %u repaired blocks do not read back as "
		       "written: the stripe has no working redundancy there",
		       (unsigned long long)map->stripe, unheld);
	if (mismatch || unheld) {
		rep->parity_mismatches++;
		atomic_store(&a->errors_seen, true);
	}
	return 0;
}

/*
 * The table blocks on the media under the rows a batch read, of every
 * member it read: one damaged while the array ran is counted as a
 * checksum error and, with repair, written again (rc_csum_media_check).
 * Run after the stripe locks are let go: a repair activates the array.
 */
static int scrub_tables(struct rc_array *a, uint64_t row0, uint64_t nrows,
			const uint8_t *how, bool repair,
			struct rc_scrub_report *rep)
{
	uint64_t nr = a->g.chunk_blocks;
	bool write = repair && !a->rdonly;
	uint32_t found = 0;
	uint64_t unreadable, rewritten;
	int ret = 0;

	for (uint32_t m = 0; m < a->g.members; m++)
		if (how[m] != RC_LOADED_ABSENT)
			found += rc_csum_media_check(a, (int)m, row0 * nr,
						     nrows * nr, write);
	if (found || atomic_load(&a->tables_unreadable)) {
		atomic_store(&a->errors_seen, true);
		if (write)
			ret = rc_array_activate(a);
	}
	/* Unreadable table blocks made whole again go home now, not at the
	 * end of a pass that may take hours: their read errors are credited
	 * only once written, and meanwhile they count against the member,
	 * which a pass full of them would fault (csum.c read_fixed). */
	if (ret == 0 && write && atomic_load(&a->tables_credit_queued))
		ret = rc_commit_tables(a);
	/* table blocks found unreadable (by this look, or by a load of the
	 * rows'), and written home again, since the last report */
	unreadable = atomic_exchange(&a->tables_unreadable, 0);
	rewritten = atomic_exchange(&a->tables_rewritten, 0);
	rep->csum_errors += found;
	/* an unreadable table block: a read error, repaired once written
	 * again (it reported none: a tester's find, W4) */
	rep->read_errors += unreadable;
	rep->repaired += rewritten;
	if (write)
		rep->repaired += found;         /* a table block written again */
	return ret;
}

/*
 * k consecutive stripes at once: the member rows they lie in, one large
 * read per member, all members in parallel, so scrub runs at the speed
 * of reading the members.  At RAID 10 the first and last rows may hold
 * columns of stripes outside the batch: read, not used.
 */
static int scrub_rows_batch(struct rc_array *a, uint64_t s0, uint64_t k,
			    bool repair, struct rc_scrub_report *rep,
			    struct bad_list *bl, uint8_t **membuf)
{
	struct rc_stripe *st[SCRUB_BATCH_MAX];
	uint8_t how[RC_MAX_MEMBERS], **state, *cols[RC_MAX_MEMBERS];
	struct rc_stripe_map map;
	uint64_t row0, nrows;
	int ret = 0;

	state = rc_state_alloc(a->g.members, a->g.chunk_blocks);
	if (!state)
		return -ENOMEM;
	rc_geom_stripes_rows(&a->g, s0, k, &row0, &nrows);
	rc_slots_rdlock(a);
	for (uint64_t i = 0; i < k; i++)
		st[i] = rc_stripe_lock(a, s0 + i);
	rc_rows_load(a, row0, nrows, 0, membuf, how);
	for (uint64_t i = 0; i < k; i++) {
		uint8_t chow[RC_MAX_MEMBERS];

		rc_geom_stripe(&a->g, s0 + i, &map);
		for (uint32_t c = 0; c < map.ncols; c++) {
			cols[c] = rc_rows_col(a, membuf, &map, c, row0);
			chow[c] = how[map.col[c].member];
		}
		rc_stripe_verify_loaded(a, &map, cols, state, chow);
		ret = scrub_rows(a, &map, repair, rep, bl, cols, state);
		rep->stripes++;
		if (ret)
			break;
	}
	for (uint64_t i = k; i-- > 0;)
		rc_stripe_unlock(a, st[i]);
	rc_slots_unlock(a);
	rc_state_free(state, a->g.members);
	if (ret == 0)
		ret = scrub_tables(a, row0, nrows, how, repair, rep);
	return ret;
}

int rc_scrub(struct rc_array *a, bool repair, struct rc_scrub_report *rep,
	     void (*progress)(void *ctx, uint64_t done, uint64_t total),
	     void *ctx)
{
	return rc_scrub_list(a, repair, rep, NULL, 0, progress, ctx);
}

/* Chunk rows of each member a batch reads. */
static uint64_t scrub_rows_per(struct rc_array *a)
{
	return rc_rows_for_bytes(a, SCRUB_BATCH_BYTES, SCRUB_BATCH_MAX);
}

/* Stripes per batch: as many as fit in scrub_rows_per rows. */
static uint64_t scrub_per(struct rc_array *a)
{
	return rc_rows_stripes(a, scrub_rows_per(a), SCRUB_BATCH_MAX);
}

/* Buffers for scrub_rows_per rows of every member (scrub_bufs_free). */
static int scrub_bufs_alloc(struct rc_array *a, uint8_t **bufs)
{
	size_t chunk = (size_t)a->g.chunk_blocks * RC_BLOCK_SIZE;
	int ret = 0;

	for (uint32_t m = 0; m < a->g.members; m++)
		if (!(bufs[m] = rc_buf_alloc(scrub_rows_per(a) * chunk)))
			ret = -ENOMEM;
	return ret;
}

static void scrub_bufs_free(struct rc_array *a, uint8_t **bufs)
{
	for (uint32_t m = 0; m < a->g.members; m++)
		free(bufs[m]);
}

/* Stripes [first, end) in batches of per; progress as rc_scrub_list. */
static int scrub_range(struct rc_array *a, uint64_t first, uint64_t end,
		       bool repair, struct rc_scrub_report *rep,
		       struct bad_list *bl, uint8_t **bufs, uint64_t per,
		       void (*progress)(void *ctx, uint64_t done, uint64_t total),
		       void *ctx)
{
	uint64_t next_report = 0;
	int ret = 0;

	/* suspended (fail.c): nothing is read, no member is blamed */
	if (rc_array_suspended(a))
		return -EIO;
	/* Repairing is writing: a repair activates the array (verify.c).
	 * An unclean one is activated first, which settles its replayed
	 * journal; a clean one only when something is repaired - a clean
	 * degraded array that needs nothing stays untouched (fsck -y with a
	 * member path mistyped rewrote every superblock, the slot missing:
	 * a tester's find). */
	if (repair && !a->rdonly && a->was_unclean)
		ret = rc_array_activate(a);
	for (uint64_t s = first; s < end && ret == 0; s += per) {
		uint64_t k = end - s < per ? end - s : per;

		ret = scrub_rows_batch(a, s, k, repair, rep, bl, bufs);
		if (progress && (s + k >= next_report || s + k == end)) {
			progress(ctx, s + k, end);
			next_report = s + k + end / 100 + 1;
		}
	}
	/* Table entries fixed by repairs go out with the next commit. */
	if (ret == 0 && repair && !a->rdonly && rc_array_is_active(a))
		ret = rc_commit_tables(a);
	/* with the unreadable table blocks that commit wrote again */
	rep->read_errors += atomic_exchange(&a->tables_unreadable, 0);
	rep->repaired += atomic_exchange(&a->tables_rewritten, 0);
	return ret;
}

/*
 * A repairing scrub that goes over the whole array in order, from stripe 0
 * to the last without an error, has verified every member found damaged
 * before it set out (verify_slots): they are trusted again.  Ranges
 * [first, end) as scrubbed, err their result.
 */
static void verify_pass_note(struct rc_array *a, uint64_t first,
			     uint64_t end, bool repair, int err,
			     const struct rc_scrub_report *rep)
{
	/* rows it could not make whole leave the damage it set out to find
	 * (a slot rebuilt with holes was verified by a scrub that met the
	 * same read errors and called 928 blocks unrecoverable; the fail of
	 * the member they needed then went through: a tester's find) */
	if (err == 0 && (rep->unrecoverable || rep->parity_mismatches))
		err = -EIO;
	uint32_t done = 0;

	pthread_mutex_lock(&a->state_lock);
	if (first == 0) {
		a->verify_pass = a->verify_slots;
		a->verify_next = 0;
	}
	if (!repair || err || first != a->verify_next)
		a->verify_pass = 0;
	a->verify_next = end;
	rc_verify_prune(a);     /* those gone meanwhile were not verified */
	if (end >= a->stripes && a->verify_pass) {
		done = a->verify_pass;
		a->verify_slots &= ~done;
		a->verify_pass = 0;
	}
	pthread_mutex_unlock(&a->state_lock);
	for (uint32_t s = 0; s < RC_MAX_MEMBERS; s++) {
		if (!(done >> s & 1))
			continue;
		/* the errors the pass found and repaired on it were the
		 * damage it was verified for: they fault it no more (it was
		 * shown FAILING in a whole array: V1 D4) */
		rc_member_errors_forget(&a->m[s]);
		rc_log("member %u: verified by a scrub of the whole array "
		       "since it was found damaged", s);
	}
}

int rc_scrub_list(struct rc_array *a, bool repair, struct rc_scrub_report *rep,
		  uint64_t *bad, uint64_t bad_cap,
		  void (*progress)(void *ctx, uint64_t done, uint64_t total),
		  void *ctx)
{
	struct bad_list bl = { .bad = bad, .cap = bad_cap };
	uint8_t *bufs[RC_MAX_MEMBERS] = { 0 };
	uint64_t per = scrub_per(a);
	int ret;

	memset(rep, 0, sizeof(*rep));
	ret = scrub_bufs_alloc(a, bufs);
	if (ret == 0)
		ret = scrub_range(a, 0, a->stripes, repair, rep, &bl, bufs, per,
				  progress, ctx);
	verify_pass_note(a, 0, a->stripes, repair, ret, rep);
	scrub_bufs_free(a, bufs);
	return ret;
}

struct rc_scrub_bufs {
	uint32_t members;
	uint64_t per;                   /* stripes a batch of the buffers
					   holds (scrub_per) */
	uint8_t *bufs[RC_MAX_MEMBERS];
};

int rc_scrub_bufs_new(struct rc_array *a, struct rc_scrub_bufs **out)
{
	struct rc_scrub_bufs *b = calloc(1, sizeof(*b));
	int ret = b ? 0 : -ENOMEM;

	if (b) {
		b->members = a->g.members;
		b->per = scrub_per(a);
		ret = scrub_bufs_alloc(a, b->bufs);
	}
	if (ret) {
		rc_scrub_bufs_free(b);
		b = NULL;
	}
	*out = b;
	return ret;
}

void rc_scrub_bufs_free(struct rc_scrub_bufs *b)
{
	if (!b)
		return;
	for (uint32_t m = 0; m < b->members; m++)
		free(b->bufs[m]);
	free(b);
}

/* Stripes [first, first + count) with b's buffers; *end where it ends. */
static int scrub_stripes(struct rc_array *a, struct rc_scrub_bufs *b,
			 uint64_t first, uint64_t count, bool repair,
			 struct rc_scrub_report *rep, uint64_t *end)
{
	struct bad_list bl = { 0 };
	uint64_t per = b->per;

	memset(rep, 0, sizeof(*rep));
	*end = first;
	if (first >= a->stripes)
		return 0;
	*end = a->stripes - first < count ? a->stripes : first + count;
	per = per > *end - first ? *end - first : per;
	return scrub_range(a, first, *end, repair, rep, &bl, b->bufs, per,
			   NULL, NULL);
}

/* The scrub of the whole array, range by range (the daemon's): it is what
 * verifies members found damaged (verify_pass_note).  Repairs of a few
 * stripes (heal.c's rc_scrub_stripes) go beside it and do not count. */
int rc_scrub_stripes_bufs(struct rc_array *a, struct rc_scrub_bufs *b,
			  uint64_t first, uint64_t count, bool repair,
			  struct rc_scrub_report *rep)
{
	uint64_t end;
	int ret = scrub_stripes(a, b, first, count, repair, rep, &end);

	if (first < a->stripes)
		verify_pass_note(a, first, end, repair, ret, rep);
	return ret;
}

int rc_scrub_stripes(struct rc_array *a, uint64_t first, uint64_t count,
		     bool repair, struct rc_scrub_report *rep)
{
	struct rc_scrub_bufs *b;
	uint64_t end;
	int ret;

	memset(rep, 0, sizeof(*rep));
	if (first >= a->stripes)
		return 0;
	ret = rc_scrub_bufs_new(a, &b);
	if (ret == 0)
		ret = scrub_stripes(a, b, first, count, repair, rep, &end);
	rc_scrub_bufs_free(b);
	return ret;
}
