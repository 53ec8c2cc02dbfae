/*
 * parity_isal: P/Q through Intel ISA-L (xor_gen, pq_gen, and the erasure
 * code functions for recovery).
 *
 * ISA-L's raid functions have preconditions the ops table does not impose:
 * at least two sources, len an int and a multiple of 32, every pointer
 * 32-byte aligned (the AVX2 pq_gen uses aligned non-temporal loads).  Calls
 * that miss them go to the scalar code, which takes anything.
 *
 * Recovery treats the stripe as a systematic code whose (ndata + 2) x ndata
 * encode matrix is the identity over the data, then a row of ones (P) and
 * the row g^k (Q): ndata surviving rows are inverted with gf_invert_matrix
 * and the rows of the inverse for the lost data are applied with
 * ec_encode_data.  A single lost data column with P intact is a plain XOR.
 * Lost parity is regenerated afterwards from the complete data.  The GF
 * arithmetic here is ISA-L's own (gf_mul), independent of parity_scalar.c,
 * so the cross-check in the tests compares two derivations.
 */
#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include "parity_impl.h"

#define ISAL_ALIGN 32

static bool isal_fits(int nbuf, void *const *buf, size_t len)
{
	if (len > INT_MAX || len % ISAL_ALIGN)
		return false;
	for (int i = 0; i < nbuf; i++)
		if ((uintptr_t)buf[i] % ISAL_ALIGN)
			return false;
	return true;
}

/* dst = XOR of the nsrc sources. */
static void isal_xor(int nsrc, size_t len, void *const *src, void *dst)
{
	void *v[RC_PARITY_MAX_DATA + 1];

	if (nsrc < 2 || nsrc > RC_PARITY_MAX_DATA || !isal_fits(nsrc, src, len)
	    || !isal_fits(1, &dst, len))
		goto fallback;
	memcpy(v, src, nsrc * sizeof(*v));
	v[nsrc] = dst;
	if (xor_gen(nsrc + 1, (int)len, v) == 0)
		return;
fallback:
	rc_parity_scalar_xor(nsrc, len, src, dst);
}

static void isal_gen_p(int ndata, size_t len, void *const *data, void *p)
{
	assert(ndata >= 1 && len % 64 == 0);
	isal_xor(ndata, len, data, p);
}

static void isal_gen_pq(int ndata, size_t len, void *const *data, void *p,
			void *q)
{
	void *v[RC_PARITY_MAX_DATA + 2];

	assert(ndata >= 1 && len % 64 == 0);
	if (ndata < 2 || ndata > RC_PARITY_MAX_DATA
	    || !isal_fits(ndata, data, len) || !isal_fits(1, &p, len)
	    || !isal_fits(1, &q, len))
		goto fallback;
	memcpy(v, data, ndata * sizeof(*v));
	v[ndata] = p;
	v[ndata + 1] = q;
	if (pq_gen(ndata + 2, (int)len, v) == 0)
		return;
fallback:
	rc_parity_scalar.gen_pq(ndata, len, data, p, q);
}

/* Row c of the encode matrix: data columns are unit rows, P all ones,
 * Q the powers g^k. */
static void isal_encode_row(int ndata, int c, unsigned char *row)
{
	unsigned char gk = 1;

	for (int k = 0; k < ndata; k++) {
		if (c < ndata)
			row[k] = k == c;
		else if (c == RC_PARITY_COL_P(ndata))
			row[k] = 1;
		else
			row[k] = gk;
		gk = gf_mul(gk, 2);
	}
}

/* out[i] = sum_k coef[i][k] * src[k] for nout rows of ndata coefficients. */
static void isal_apply(int ndata, int nout, unsigned char *coef, size_t len,
		       unsigned char **src, unsigned char **out)
{
	unsigned char tables[32 * RC_PARITY_MAX_DATA * 2];

	assert(nout >= 1 && nout <= 2);
	ec_init_tables(ndata, nout, coef, tables);
	ec_encode_data((int)len, ndata, nout, tables, src, out);
}

/* Q alone, leaving the surviving P untouched. */
static void isal_gen_q(int ndata, size_t len, void *const *cols)
{
	unsigned char row[RC_PARITY_MAX_DATA];
	unsigned char *src[RC_PARITY_MAX_DATA];
	unsigned char *q = cols[RC_PARITY_COL_Q(ndata)];

	isal_encode_row(ndata, RC_PARITY_COL_Q(ndata), row);
	memcpy(src, cols, ndata * sizeof(*src));
	isal_apply(ndata, 1, row, len, src, &q);
}

static bool isal_is_lost(int c, const int *failed, int nfailed)
{
	for (int i = 0; i < nfailed; i++)
		if (failed[i] == c)
			return true;
	return false;
}

/*
 * The lost data columns lost[0..nlost-1] from the first ndata survivors.
 * Those rows of the encode matrix are invertible for any failure the
 * parity covers (g^x != 0, g^x != g^y for x != y < 255), so a singular
 * matrix is a broken invariant.
 */
static void isal_recover_data_matrix(int ndata, int nparity, size_t len,
				     void *const *cols, const int *failed,
				     int nfailed, const int *lost, int nlost)
{
	unsigned char sub[RC_PARITY_MAX_DATA * RC_PARITY_MAX_DATA];
	unsigned char inv[RC_PARITY_MAX_DATA * RC_PARITY_MAX_DATA];
	unsigned char dec[2 * RC_PARITY_MAX_DATA];
	unsigned char *src[RC_PARITY_MAX_DATA], *out[2];
	int nsrc = 0, singular;

	for (int c = 0; c < ndata + nparity && nsrc < ndata; c++) {
		if (isal_is_lost(c, failed, nfailed))
			continue;
		isal_encode_row(ndata, c, sub + nsrc * ndata);
		src[nsrc++] = cols[c];
	}
	assert(nsrc == ndata);
	singular = gf_invert_matrix(sub, inv, ndata);
	assert(!singular);
	(void)singular;
	for (int i = 0; i < nlost; i++) {
		memcpy(dec + i * ndata, inv + lost[i] * ndata, ndata);
		out[i] = cols[lost[i]];
	}
	isal_apply(ndata, nlost, dec, len, src, out);
}

/* D_x = P ^ (every other data column). */
static void isal_recover_data_p(int ndata, size_t len, void *const *cols,
				int x)
{
	void *src[RC_PARITY_MAX_DATA];

	for (int k = 0; k < ndata; k++)
		src[k] = k == x ? cols[RC_PARITY_COL_P(ndata)] : cols[k];
	isal_xor(ndata, len, src, cols[x]);
}

static void isal_rebuild_parity(int ndata, size_t len, void *const *cols,
				bool p_lost, bool q_lost)
{
	if (p_lost && q_lost)
		isal_gen_pq(ndata, len, cols, cols[RC_PARITY_COL_P(ndata)],
			    cols[RC_PARITY_COL_Q(ndata)]);
	else if (p_lost)
		isal_xor(ndata, len, cols, cols[RC_PARITY_COL_P(ndata)]);
	else if (q_lost)
		isal_gen_q(ndata, len, cols);
}

static int isal_recover(int ndata, int nparity, size_t len,
			void *const *cols, const int *failed, int nfailed)
{
	int lost[2], nlost = 0, err;
	bool p_lost, q_lost;

	err = rc_parity_recover_check(ndata, nparity, len, failed, nfailed);
	if (err)
		return err;
	/* ec_encode_data takes an int length */
	if (len > INT_MAX)
		return rc_parity_scalar.recover(ndata, nparity, len, cols,
						failed, nfailed);
	for (int i = 0; i < nfailed; i++)
		if (failed[i] < ndata)
			lost[nlost++] = failed[i];
	p_lost = isal_is_lost(RC_PARITY_COL_P(ndata), failed, nfailed);
	q_lost = isal_is_lost(RC_PARITY_COL_Q(ndata), failed, nfailed);

	if (nlost == 1 && !p_lost)
		isal_recover_data_p(ndata, len, cols, lost[0]);
	else if (nlost > 0)
		isal_recover_data_matrix(ndata, nparity, len, cols, failed,
					 nfailed, lost, nlost);
	isal_rebuild_parity(ndata, len, cols, p_lost, q_lost);
	return 0;
}

static bool isal_available(void)
{
	/* ISA-L dispatches to its own base code on CPUs without SIMD. */
	return true;
}

const struct rc_parity_ops rc_parity_isal = {
	.name = "isal",
	.available = isal_available,
	.gen_p = isal_gen_p,
	.gen_pq = isal_gen_pq,
	.recover = isal_recover,
};
