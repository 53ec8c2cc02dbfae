/*
 * parity_scalar: the reference P/Q implementation, plain C, always present.
 *
 * GF(2^8) with polynomial 0x11d and generator g = 2, as Linux lib/raid6.
 * Generation works on 64-bit words (eight GF bytes at a time, the
 * multiply-by-g done bytewise with masks, as lib/raid6/int.uc); recovery
 * works on bytes through 256-entry multiply tables derived from log/exp
 * tables that are computed once, not pasted.
 *
 * Every other implementation is tested against this one, so it favours
 * being obviously right over being fast.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "parity_impl.h"

/* gf_exp holds two periods so gf_exp[log a + log b] needs no reduction. */
static uint8_t gf_exp[2 * 255];
static uint8_t gf_log[256];
static pthread_once_t gf_once = PTHREAD_ONCE_INIT;

static void gf_tables_build(void)
{
	unsigned int x = 1;

	for (int i = 0; i < 255; i++) {
		gf_exp[i] = gf_exp[i + 255] = (uint8_t)x;
		gf_log[x] = (uint8_t)i;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
}

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
	if (a == 0 || b == 0)
		return 0;
	return gf_exp[gf_log[a] + gf_log[b]];
}

static uint8_t gf_inv(uint8_t a)
{
	assert(a != 0);
	return gf_exp[255 - gf_log[a]];
}

/* g^k for k >= 0 */
static uint8_t gf_pow2(int k)
{
	return gf_exp[k % 255];
}

static void gf_mul_table(uint8_t c, uint8_t table[256])
{
	for (int v = 0; v < 256; v++)
		table[v] = gf_mul(c, (uint8_t)v);
}

/* Buffers need not be 8-aligned: memcpy keeps the loads defined. */
static uint64_t word_load(const void *base, size_t off)
{
	uint64_t w;

	memcpy(&w, (const uint8_t *)base + off, sizeof(w));
	return w;
}

static void word_store(void *base, size_t off, uint64_t w)
{
	memcpy((uint8_t *)base + off, &w, sizeof(w));
}

/* Eight GF bytes times g: shift each byte, fold 0x1d into those that
 * overflowed.  (hi << 1) - (hi >> 7) turns each 0x80 into 0xff. */
static uint64_t word_mul2(uint64_t v)
{
	uint64_t hi = v & 0x8080808080808080ULL;
	uint64_t mask = (hi << 1) - (hi >> 7);

	return ((v << 1) & 0xfefefefefefefefeULL) ^ (mask & 0x1d1d1d1d1d1d1d1dULL);
}

void rc_parity_scalar_xor(int nsrc, size_t len, void *const *src, void *dst)
{
	assert(nsrc >= 1 && len % 8 == 0);
	for (size_t off = 0; off < len; off += 8) {
		uint64_t w = word_load(src[0], off);

		for (int k = 1; k < nsrc; k++)
			w ^= word_load(src[k], off);
		word_store(dst, off, w);
	}
}

/*
 * P and Q of the data columns, with columns skip_a and skip_b (or -1)
 * counted as zero, so that a lost column's buffer can receive the partial
 * syndrome.  Q by Horner from the highest index: q = q*g ^ D_k.  p or q may
 * be NULL when not wanted.
 */
static void scalar_syndrome(int ndata, size_t len, void *const *data,
			    int skip_a, int skip_b, void *p, void *q)
{
	for (size_t off = 0; off < len; off += 8) {
		uint64_t wp = 0, wq = 0;

		for (int k = ndata - 1; k >= 0; k--) {
			uint64_t d;

			wq = word_mul2(wq);
			if (k == skip_a || k == skip_b)
				continue;
			d = word_load(data[k], off);
			wp ^= d;
			wq ^= d;
		}
		if (p)
			word_store(p, off, wp);
		if (q)
			word_store(q, off, wq);
	}
}

static void scalar_gen_p(int ndata, size_t len, void *const *data, void *p)
{
	assert(ndata >= 1 && len % 64 == 0);
	rc_parity_scalar_xor(ndata, len, data, p);
}

static void scalar_gen_pq(int ndata, size_t len, void *const *data, void *p,
			  void *q)
{
	assert(ndata >= 1 && len % 64 == 0);
	scalar_syndrome(ndata, len, data, -1, -1, p, q);
}

/* D_x = P ^ (every other data column): XOR with P standing in for D_x. */
static void scalar_recover_data_p(int ndata, size_t len, void *const *cols,
				  int x)
{
	void *src[RC_PARITY_MAX_DATA];

	for (int k = 0; k < ndata; k++)
		src[k] = k == x ? cols[RC_PARITY_COL_P(ndata)] : cols[k];
	rc_parity_scalar_xor(ndata, len, src, cols[x]);
}

/* Q ^ Qx = g^x D_x, where Qx is Q computed with D_x = 0. */
static void scalar_recover_data_q(int ndata, size_t len, void *const *cols,
				  int x)
{
	const uint8_t *q = cols[RC_PARITY_COL_Q(ndata)];
	uint8_t *dx = cols[x];
	uint8_t mul[256];

	scalar_syndrome(ndata, len, cols, x, -1, NULL, dx);
	gf_mul_table(gf_inv(gf_pow2(x)), mul);
	for (size_t i = 0; i < len; i++)
		dx[i] = mul[dx[i] ^ q[i]];
}

/*
 * With Pxy, Qxy the syndromes computed with D_x = D_y = 0:
 *   P ^ Pxy = D_x ^ D_y,  Q ^ Qxy = g^x D_x ^ g^y D_y,  so
 *   D_x = A (P ^ Pxy) ^ B (Q ^ Qxy),  D_y = (P ^ Pxy) ^ D_x,
 *   A = g^(y-x) / (g^(y-x) ^ 1),  B = g^-x / (g^(y-x) ^ 1).
 * The lost buffers hold Pxy and Qxy meanwhile.
 */
static void scalar_recover_data2(int ndata, size_t len, void *const *cols,
				 int x, int y)
{
	const uint8_t *p = cols[RC_PARITY_COL_P(ndata)];
	const uint8_t *q = cols[RC_PARITY_COL_Q(ndata)];
	uint8_t *dx = cols[x], *dy = cols[y];
	uint8_t gyx = gf_pow2(y - x);
	uint8_t denom = gf_inv(gyx ^ 1);
	uint8_t mul_a[256], mul_b[256];

	assert(x < y);
	gf_mul_table(gf_mul(gyx, denom), mul_a);
	gf_mul_table(gf_mul(gf_inv(gf_pow2(x)), denom), mul_b);
	scalar_syndrome(ndata, len, cols, x, y, dx, dy);
	for (size_t i = 0; i < len; i++) {
		uint8_t px = dx[i] ^ p[i];
		uint8_t qx = dy[i] ^ q[i];

		dx[i] = mul_a[px] ^ mul_b[qx];
		dy[i] = px ^ dx[i];
	}
}

/* Regenerates whichever of P and Q is lost, never writing a survivor. */
static void scalar_rebuild_parity(int ndata, size_t len, void *const *cols,
				  bool p_lost, bool q_lost)
{
	void *p = p_lost ? cols[RC_PARITY_COL_P(ndata)] : NULL;
	void *q = q_lost ? cols[RC_PARITY_COL_Q(ndata)] : NULL;

	if (q)
		scalar_syndrome(ndata, len, cols, -1, -1, p, q);
	else if (p)
		rc_parity_scalar_xor(ndata, len, cols, p);
}

/*
 * Lost data first (through P while P survives, else through Q), then lost
 * parity from the complete data.  failed is ascending, so a lost data
 * column is always failed[0].
 */
static int scalar_recover(int ndata, int nparity, size_t len,
			  void *const *cols, const int *failed, int nfailed)
{
	int err, x, y;
	bool p_lost, q_lost;

	err = rc_parity_recover_check(ndata, nparity, len, failed, nfailed);
	if (err)
		return err;
	pthread_once(&gf_once, gf_tables_build);
	x = nfailed > 0 ? failed[0] : -1;
	y = nfailed > 1 ? failed[1] : -1;
	p_lost = x == RC_PARITY_COL_P(ndata) || y == RC_PARITY_COL_P(ndata);
	q_lost = x == RC_PARITY_COL_Q(ndata) || y == RC_PARITY_COL_Q(ndata);

	if (y >= 0 && y < ndata)
		scalar_recover_data2(ndata, len, cols, x, y);
	else if (x >= 0 && x < ndata && p_lost)
		scalar_recover_data_q(ndata, len, cols, x);
	else if (x >= 0 && x < ndata)
		scalar_recover_data_p(ndata, len, cols, x);
	scalar_rebuild_parity(ndata, len, cols, p_lost, q_lost);
	return 0;
}

static bool scalar_available(void)
{
	return true;
}

const struct rc_parity_ops rc_parity_scalar = {
	.name = "scalar",
	.available = scalar_available,
	.gen_p = scalar_gen_p,
	.gen_pq = scalar_gen_pq,
	.recover = scalar_recover,
};
