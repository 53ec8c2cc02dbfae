/*
 * journal: the distributed write journal (docs/DESIGN.md "No write hole",
 * docs/FORMAT.md "Journal").
 *
 *   rc_journal_write       one commit batch: records on every member
 *   rc_journal_checkpoint  flush in-place writes, move the tails forward
 *   rc_journal_replay      at assembly after an unclean shutdown
 *
 * Each member has its own ring; a transaction is one record (header +
 * payload) on each member it writes to, all with the same seq; a batch is
 * the transactions seq .. batch_end written before one flush.  Records
 * never wrap: one that does not fit before the end of the ring starts at
 * block 0.  Caller holds commit_lock for write and checkpoint; replay runs
 * before the array is shared.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)

static uint64_t ring_block(const struct rc_array *a, uint64_t pos)
{
	return a->sb.journal_offset + pos;
}

/* Ring position for a record of len blocks at the head; adds the blocks
 * it uses (with the skipped tail) to *used. */
static uint64_t ring_place(const struct rc_array *a, uint64_t head,
			   uint64_t len, uint64_t *used)
{
	if (head + len > a->journal_blocks) {
		*used += a->journal_blocks - head;
		head = 0;
	}
	*used += len;
	return head;
}

static uint32_t ntx_of(const uint32_t *n, uint32_t members)
{
	uint32_t ntx = 0;

	for (uint32_t m = 0; m < members; m++) {
		uint32_t t = RC_DIV_ROUND_UP(n[m], RC_JHDR_MAX_ENTRIES);

		ntx = t > ntx ? t : ntx;
	}
	return ntx;
}

static uint32_t tx_entries(uint32_t n, uint32_t k)
{
	uint32_t first = k * RC_JHDR_MAX_ENTRIES;

	if (n <= first)
		return 0;
	return n - first < RC_JHDR_MAX_ENTRIES ? n - first :
						 RC_JHDR_MAX_ENTRIES;
}

bool rc_journal_fits(struct rc_array *a, const uint32_t *n)
{
	uint32_t ntx = ntx_of(n, a->g.members);

	for (uint32_t m = 0; m < a->g.members; m++) {
		uint64_t head = a->m[m].jhead, used = a->m[m].jused, e;

		for (uint32_t k = 0; k < ntx; k++) {
			e = tx_entries(n[m], k);
			if (e)
				head = ring_place(a, head, 1 + e, &used) + 1 + e;
		}
		if (used > a->journal_blocks)
			return false;
	}
	return true;
}

/* Record buffer i, at least bytes long, kept for the next commit. */
static uint8_t *jbuf_get(struct rc_array *a, uint32_t i, size_t bytes)
{
	if (i >= a->njbuf) {
		uint32_t n = i + 16;
		uint8_t **nb = realloc(a->jbuf, n * sizeof(*nb));
		size_t *nc;

		if (!nb)
			return NULL;
		a->jbuf = nb;
		nc = realloc(a->jbuf_cap, n * sizeof(*nc));
		if (!nc)
			return NULL;
		a->jbuf_cap = nc;
		for (uint32_t k = a->njbuf; k < n; k++) {
			a->jbuf[k] = NULL;
			a->jbuf_cap[k] = 0;
		}
		a->njbuf = n;
	}
	if (a->jbuf_cap[i] < bytes) {
		free(a->jbuf[i]);
		a->jbuf_cap[i] = 0;
		a->jbuf[i] = rc_buf_alloc(bytes);
		if (!a->jbuf[i])
			return NULL;
		a->jbuf_cap[i] = bytes;
	}
	return a->jbuf[i];
}

void rc_journal_fini(struct rc_array *a)
{
	for (uint32_t i = 0; i < a->njbuf; i++)
		free(a->jbuf[i]);
	free(a->jbuf);
	free(a->jbuf_cap);
	a->jbuf = NULL;
	a->jbuf_cap = NULL;
	a->njbuf = 0;
}

/* Builds header + payload of member m's record of transaction k into
 * record buffer idx. */
static uint8_t *record_build(struct rc_array *a, uint32_t idx, uint32_t m,
			     const struct rc_jwrite *w, uint32_t nent,
			     uint64_t seq, uint64_t batch_end,
			     uint64_t participants, uint64_t pos)
{
	struct rc_jhdr *h = calloc(1, sizeof(*h));
	uint8_t *rec = jbuf_get(a, idx, (size_t)(1 + nent) * RC_BLOCK_SIZE);

	if (!h || !rec) {
		free(h);
		return NULL;
	}
	h->seq = seq;
	memcpy(h->array_uuid, a->sb.array_uuid, RC_UUID_SIZE);
	h->role = m;
	h->nentries = nent;
	h->participants = participants;
	h->ring_pos = pos;
	h->batch_end = batch_end;
	for (uint32_t i = 0; i < nent; i++) {
		h->target[i] = w[i].target;
		h->csum[i] = w[i].csum ? w[i].csum :
			     rc_block_csum(w[i].data, w[i].target);
		memcpy(BLK(rec, 1 + i), w[i].data, RC_BLOCK_SIZE);
	}
	rc_jhdr_encode(h, rec);
	free(h);
	return rec;
}

static int records_write(struct rc_array *a, struct rc_jwrite **w,
			 const uint32_t *n, uint32_t ntx)
{
	uint32_t nrec = 0, i = 0;
	struct rc_io *io;
	uint64_t part;
	int ret = 0;

	for (uint32_t m = 0; m < a->g.members; m++)
		nrec += RC_DIV_ROUND_UP(n[m], RC_JHDR_MAX_ENTRIES);
	io = calloc(nrec, sizeof(*io));
	if (!io)
		return -ENOMEM;
	for (uint32_t k = 0; k < ntx; k++) {
		part = 0;
		for (uint32_t m = 0; m < a->g.members; m++)
			if (tx_entries(n[m], k))
				part |= 1ull << m;
		for (uint32_t m = 0; m < a->g.members; m++) {
			uint32_t e = tx_entries(n[m], k);
			uint64_t pos;

			if (!e)
				continue;
			pos = ring_place(a, a->m[m].jhead, 1 + e, &a->m[m].jused);
			a->m[m].jhead = pos + 1 + e;
			io[i] = (struct rc_io){ .member = (int)m, .write = true,
				.block = ring_block(a, pos), .count = 1 + e };
			io[i].buf = record_build(a, i, m,
				w[m] + k * RC_JHDR_MAX_ENTRIES, e,
				a->jseq + 1 + k, a->jseq + ntx, part, pos);
			if (!io[i++].buf)
				ret = -ENOMEM;
		}
	}
	a->jseq += ntx;
	if (ret == 0)
		rc_io_run(a, io, (int)nrec);
	for (i = 0; i < nrec; i++) {
		if (ret == 0 && io[i].err < 0)
			rc_member_set_faulty(a, io[i].member,
					     "journal write failed");
	}
	free(io);
	if (ret == 0 && rc_array_failed(a))
		ret = -EIO;
	return ret;
}

int rc_journal_write(struct rc_array *a, struct rc_jwrite **w,
		     const uint32_t *n)
{
	int ret;

	if (!rc_journal_fits(a, n)) {
		ret = rc_journal_checkpoint(a, false);
		if (ret < 0)
			return ret;
		if (!rc_journal_fits(a, n))
			return -ENOSPC;
	}
	return records_write(a, w, n, ntx_of(n, a->g.members));
}

int rc_journal_checkpoint(struct rc_array *a, bool clean)
{
	int ret;

	ret = rc_member_sync_all(a);
	if (ret < 0 && rc_array_failed(a))
		return ret;
	pthread_mutex_lock(&a->state_lock);
	a->jcheckpoint = a->jseq;
	for (uint32_t m = 0; m < a->g.members; m++) {
		a->m[m].jtail = a->m[m].jhead;
		a->m[m].jused = 0;
	}
	a->sb.array_state = clean ? RC_STATE_CLEAN : RC_STATE_ACTIVE;
	pthread_mutex_unlock(&a->state_lock);
	return rc_sb_write_all(a);
}

/* ---- replay -------------------------------------------------------------- */

struct jrec {
	uint64_t seq;
	uint64_t pos;
	struct rc_jhdr *h;
};

struct jscan {
	struct jrec *rec;
	uint32_t n;
};

/* Reads and checks a record's payload; NULL when incomplete or corrupt. */
static uint8_t *record_payload(struct rc_array *a, uint32_t m,
			       const struct jrec *r)
{
	uint32_t n = r->h->nentries;
	uint8_t *p = rc_buf_alloc((size_t)(n ? n : 1) * RC_BLOCK_SIZE);

	if (!p)
		return NULL;
	if (n && rc_io_member_read(a, (int)m, ring_block(a, r->pos + 1), n, p))
		goto bad;
	for (uint32_t i = 0; i < n; i++)
		if (rc_block_csum(BLK(p, i), r->h->target[i]) != r->h->csum[i])
			goto bad;
	return p;
bad:
	free(p);
	return NULL;
}

/* Follows member m's chain of records from its tail. */
static int scan_member(struct rc_array *a, uint32_t m, struct jscan *js)
{
	uint8_t *blk = malloc(RC_BLOCK_SIZE);
	struct rc_jhdr *h = malloc(sizeof(*h));
	uint64_t pos = a->m[m].jtail, scanned = 0, last = 0;
	bool wrapped = false;
	int ret = 0;

	if (!blk || !h) {
		ret = -ENOMEM;
		goto out;
	}
	while (scanned < a->journal_blocks) {
		bool ok = pos < a->journal_blocks &&
			  rc_io_member_read(a, (int)m, ring_block(a, pos), 1,
					    blk) == 0 &&
			  rc_jhdr_decode(blk, h) == 0 &&
			  memcmp(h->array_uuid, a->sb.array_uuid,
				 RC_UUID_SIZE) == 0 &&
			  h->role == m && h->ring_pos == pos && h->seq > last &&
			  pos + 1 + h->nentries <= a->journal_blocks;
		struct jrec *nr;

		if (!ok) {
			if (wrapped || pos == 0)
				break;
			scanned += a->journal_blocks - pos;
			pos = 0;
			wrapped = true;
			continue;
		}
		nr = realloc(js->rec, (js->n + 1) * sizeof(*nr));
		if (!nr) {
			ret = -ENOMEM;
			goto out;
		}
		js->rec = nr;
		js->rec[js->n++] = (struct jrec){ .seq = h->seq, .pos = pos,
						  .h = h };
		h = malloc(sizeof(*h));
		if (!h) {
			ret = -ENOMEM;
			goto out;
		}
		last = js->rec[js->n - 1].seq;
		scanned += 1 + js->rec[js->n - 1].h->nentries;
		pos += 1 + js->rec[js->n - 1].h->nentries;
		if (pos >= a->journal_blocks) {
			pos = 0;
			wrapped = true;
		}
	}
out:
	free(blk);
	free(h);
	return ret;
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

/* true when every present participant has a complete record of seq. */
static bool seq_complete(struct rc_array *a, struct jscan *js, uint64_t seq)
{
	uint64_t part, end;
	uint8_t *p;

	if (!seq_info(a, js, seq, &part, &end))
		return false;
	for (uint32_t m = 0; m < a->g.members; m++) {
		struct jrec *r;

		if (!(part >> m & 1) || !rc_member_present(a, (int)m))
			continue;
		r = find_rec(&js[m], seq);
		if (!r || !(p = record_payload(a, m, r)))
			return false;
		free(p);
	}
	return true;
}

static int seq_apply(struct rc_array *a, struct jscan *js, uint64_t seq)
{
	int ret = 0;

	for (uint32_t m = 0; m < a->g.members && ret == 0; m++) {
		struct jrec *r = find_rec(&js[m], seq);
		uint8_t *p;

		if (!r || !rc_member_present(a, (int)m))
			continue;
		p = record_payload(a, m, r);
		if (!p)
			return -EIO;
		for (uint32_t i = 0; i < r->h->nentries && ret == 0; i++) {
			if (a->rdonly)
				ret = rc_overlay_put(a, (int)m, r->h->target[i],
						     BLK(p, i));
			else
				ret = rc_io_member_write(a, (int)m,
							 r->h->target[i], 1,
							 BLK(p, i));
		}
		free(p);
	}
	return ret;
}

/*
 * Replays every complete batch after the checkpoint, in order, and stops at
 * the first incomplete one.  Then moves the sequence past every record seen
 * anywhere, so stale records of an incomplete batch can never be mistaken
 * for new ones.
 */
int rc_journal_replay(struct rc_array *a)
{
	struct jscan js[RC_MAX_MEMBERS] = { 0 };
	uint64_t seq = a->jcheckpoint + 1, part, end, maxseen = a->jseq;
	int ret = 0;

	for (uint32_t m = 0; m < a->g.members && ret == 0; m++) {
		if (rc_member_present(a, (int)m))
			ret = scan_member(a, m, &js[m]);
		for (uint32_t i = 0; i < js[m].n; i++)
			maxseen = js[m].rec[i].seq > maxseen ?
				  js[m].rec[i].seq : maxseen;
	}
	while (ret == 0 && seq_info(a, js, seq, &part, &end) && end >= seq) {
		uint64_t s;

		for (s = seq; s <= end && seq_complete(a, js, s); s++)
			;
		if (s <= end)
			break;
		for (s = seq; s <= end && ret == 0; s++)
			ret = seq_apply(a, js, s);
		a->replayed_txns += end - seq + 1;
		seq = end + 1;
	}
	for (uint32_t m = 0; m < a->g.members; m++) {
		for (uint32_t i = 0; i < js[m].n; i++)
			free(js[m].rec[i].h);
		free(js[m].rec);
	}
	a->jseq = maxseen;
	return ret;
}
