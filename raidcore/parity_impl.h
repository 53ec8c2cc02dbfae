/*
 * parity_impl: what the parity implementations share, and what the parity
 * tests may reach beyond the public ops table.  Not part of the API: only
 * raidcore/parity*.c and tests/unit/test_parity.c include it.
 *
 * Column numbering in recover(): 0..ndata-1 data, RC_PARITY_COL_P(ndata)
 * and RC_PARITY_COL_Q(ndata).
 */
#ifndef RC_PARITY_IMPL_H
#define RC_PARITY_IMPL_H

#include "parity.h"

/*
 * The most data columns recover() accepts: the widest stripe (RC_MAX_MEMBERS
 * members with one parity), so that recovery works on the stack.  It must
 * stay below 255, where g^k starts to repeat and Q stops telling columns
 * apart.  gen_p and gen_pq take any ndata >= 1.
 */
#define RC_PARITY_MAX_DATA 31

#define RC_PARITY_COL_P(ndata) (ndata)
#define RC_PARITY_COL_Q(ndata) ((ndata) + 1)

/*
 * Argument check common to every recover(): ndata in 1..RC_PARITY_MAX_DATA,
 * nparity 1 or 2, len a non-zero multiple of 64, failed strictly ascending
 * column numbers below ndata + nparity, 0 <= nfailed <= nparity.
 * Returns 0 or -EINVAL.
 */
int rc_parity_recover_check(int ndata, int nparity, size_t len,
			    const int *failed, int nfailed);

/* dst = src[0] ^ ... ^ src[nsrc-1]; nsrc >= 1, len a multiple of 8, dst not
 * among the sources.  The scalar XOR, also the fallback of faster ones. */
void rc_parity_scalar_xor(int nsrc, size_t len, void *const *src, void *dst);

/*
 * The implementation rc_parity_best() would pick: the available one named
 * forced if there is one, otherwise the fastest gen_pq measured now.
 * Exposed so tests can exercise the choice without the cached result.
 */
const struct rc_parity_ops *rc_parity_choose(const char *forced);

#endif
