/*
 * journal: the distributed write journal (docs/DESIGN.md "No write hole",
 * docs/FORMAT.md "Journal"); its replay is replay.c.
 *
 *   rc_journal_write       one commit batch: records on every member
 *   rc_journal_checkpoint  flush in-place writes, move the tails forward
 *
 * Each member has its own ring; a transaction is one record (header +
 * payload) on each of its participants, all with the same seq; a batch is
 * the transactions seq .. batch_end written before one flush.  Every
 * transaction of a batch has the batch's participants (a member with no
 * blocks left for it gets an empty record), and there are at least
 * nred + 1 of them, so that losing the journal of nred members never
 * hides a transaction from replay.  Records never wrap: one that does not
 * fit before the end of the ring starts at block 0.  A member's entries
 * without data are direct-stripe entries (RC_JENT_DIRECT): they come after
 * its payload entries and take no payload block.  Caller holds
 * commit_lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"

#define BLK(buf, r) ((uint8_t *)(buf) + (size_t)(r) * RC_BLOCK_SIZE)

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

/* Member m's payload entries: the ones before its first direct one. */
static uint32_t payload_of(struct rc_jwrite *const *w, const uint32_t *n,
			   uint32_t m)
{
	uint32_t p = 0;

	while (p < n[m] && w[m][p].data)
		p++;
	return p;
}

static uint32_t tx_entries(uint32_t n, uint32_t k)
{
	uint32_t first = k * RC_JHDR_MAX_ENTRIES;

	if (n <= first)
		return 0;
	return n - first < RC_JHDR_MAX_ENTRIES ? n - first :
						 RC_JHDR_MAX_ENTRIES;
}

/* Members with blocks to write and, for a batch with fewer than nred + 1
 * of them (table blocks of one member), present members to make up the
 * number with empty records. */
static uint64_t batch_participants(struct rc_array *a, const uint32_t *n)
{
	uint64_t part = 0;
	uint32_t np = 0;

	for (uint32_t m = 0; m < a->g.members; m++)
		if (n[m]) {
			part |= 1ull << m;
			np++;
		}
	for (uint32_t m = 0; m < a->g.members && np < a->nred + 1; m++)
		if (!(part >> m & 1) && rc_member_present(a, (int)m)) {
			part |= 1ull << m;
			np++;
		}
	return part;
}

static bool journal_fits(struct rc_array *a, const uint32_t *n,
			 const uint32_t *np)
{
	uint32_t ntx = ntx_of(n, a->g.members);
	uint64_t part = batch_participants(a, n);

	for (uint32_t m = 0; m < a->g.members; m++) {
		uint64_t head = a->m[m].jhead, used = a->m[m].jused, e;

		if (!(part >> m & 1))
			continue;
		for (uint32_t k = 0; k < ntx; k++) {
			e = tx_entries(np[m], k);
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
	uint32_t np = 0;
	uint8_t *rec;

	while (np < nent && w[np].data)
		np++;
	rec = jbuf_get(a, idx, (size_t)(1 + np) * RC_BLOCK_SIZE);

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
		if (!w[i].data)
			continue;       /* direct: no payload, csum 0 */
		h->csum[i] = w[i].csum ? w[i].csum :
			     rc_block_csum(w[i].data, w[i].target);
		memcpy(BLK(rec, 1 + i), w[i].data, RC_BLOCK_SIZE);
	}
	rc_jhdr_encode(h, rec);
	free(h);
	return rec;
}

static int records_write(struct rc_array *a, struct rc_jwrite **w,
			 const uint32_t *n, const uint32_t *np, uint32_t ntx)
{
	uint64_t part = batch_participants(a, n);
	uint32_t nrec = (uint32_t)__builtin_popcountll(part) * ntx, i = 0;
	struct rc_io *io;
	int ret = 0;

	io = calloc(nrec, sizeof(*io));
	if (!io)
		return -ENOMEM;
	for (uint32_t k = 0; k < ntx; k++) {
		for (uint32_t m = 0; m < a->g.members; m++) {
			uint32_t e = tx_entries(n[m], k), p = tx_entries(np[m], k);
			uint64_t pos;

			if (!(part >> m & 1))
				continue;
			pos = ring_place(a, a->m[m].jhead, 1 + p, &a->m[m].jused);
			a->m[m].jhead = pos + 1 + p;
			io[i] = (struct rc_io){ .member = (int)m, .write = true,
				.block = rc_ring_block(a, pos), .count = 1 + p };
			io[i].buf = record_build(a, i, m,
				e ? w[m] + k * RC_JHDR_MAX_ENTRIES : NULL, e,
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
			rc_member_set_faulty_err(a, io[i].member,
						 "journal write failed",
						 io[i].err);
	}
	free(io);
	if (ret == 0 && rc_array_failed(a))
		ret = -EIO;
	return ret;
}

int rc_journal_write(struct rc_array *a, struct rc_jwrite **w,
		     const uint32_t *n)
{
	uint32_t np[RC_MAX_MEMBERS] = { 0 };
	int ret;

	for (uint32_t m = 0; m < a->g.members; m++)
		np[m] = payload_of(w, n, m);
	if (!journal_fits(a, n, np)) {
		ret = rc_journal_checkpoint(a, false);
		if (ret < 0)
			return ret;
		if (!journal_fits(a, n, np))
			return -ENOSPC;
	}
	return records_write(a, w, n, np, ntx_of(n, a->g.members));
}

int rc_journal_checkpoint(struct rc_array *a, bool clean)
{
	int ret;

	ret = rc_member_sync_all(a);
	if (ret < 0 && rc_array_failed(a))
		return ret;
	/* Every member took every write so far: none that leaves now lost
	 * one unrecorded (wi.c). */
	if (ret == 0) {
		rc_wi_checkpointed(a);
		a->direct_unsynced = false;
		rc_member_writes_check(a);
	}
	/* A member that shrank is no longer where its blocks were written. */
	for (uint32_t m = 0; m < a->g.members; m++)
		if (rc_member_present(a, (int)m))
			rc_io_size_check(a, (int)m);
	rc_member_faults_apply(a);
	pthread_mutex_lock(&a->state_lock);
	a->jcheckpoint = a->jseq;
	for (uint32_t m = 0; m < a->g.members; m++) {
		a->m[m].jtail = a->m[m].jhead;
		a->m[m].jused = 0;
	}
	a->sb.array_state = clean ? RC_STATE_CLEAN : RC_STATE_ACTIVE;
	/* Direct entries may follow in the journal: an older raidcore, which
	 * would replay them as payload, must not take the array. */
	a->sb.feature_incompat &= ~(RC_FEATURE_INCOMPAT_DIRECT |
				    RC_FEATURE_INCOMPAT_DIRECT_NOPARITY);
	if (!clean)
		a->sb.feature_incompat |= rc_direct_features(a);
	pthread_mutex_unlock(&a->state_lock);
	return rc_sb_write_all(a);
}
