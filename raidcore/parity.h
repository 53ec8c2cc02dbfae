/*
 * parity: P and Q generation and recovery behind an ops table.
 *
 * The scalar implementation is the reference and always present; faster
 * ones (ISA-L) are tested against it.  rc_parity_best() picks the fastest
 * available at start-up (measured once, like Linux lib/raid6).
 *
 * All buffers are len bytes, len a multiple of 64.  Q = sum(g^k * D_k)
 * over GF(2^8) with polynomial 0x11d, g = 2, k = data column index.
 */
#ifndef RC_PARITY_H
#define RC_PARITY_H

#include <stddef.h>
#include <stdbool.h>

struct rc_parity_ops {
	const char *name;
	bool (*available)(void);
	/* p = data[0] ^ ... ^ data[ndata-1]; ndata >= 1 */
	void (*gen_p)(int ndata, size_t len, void *const *data, void *p);
	/* p as above and q the syndrome; ndata >= 1 */
	void (*gen_pq)(int ndata, size_t len, void *const *data, void *p,
		       void *q);
	/*
	 * cols[0..ndata-1] data, cols[ndata] P, cols[ndata+1] Q (present only
	 * when nparity == 2).  Recomputes the nfailed columns listed in failed
	 * (distinct, ascending, nfailed <= nparity) from the others, in place.
	 * Returns 0, or -EINVAL when nfailed > nparity.
	 */
	int (*recover)(int ndata, int nparity, size_t len, void *const *cols,
		       const int *failed, int nfailed);
};

extern const struct rc_parity_ops rc_parity_scalar;
extern const struct rc_parity_ops rc_parity_isal;

/* NULL-terminated list of every implementation, scalar first. */
extern const struct rc_parity_ops *const rc_parity_all[];

/* The fastest available implementation; chosen once, thread-safe. */
const struct rc_parity_ops *rc_parity_best(void);

#endif
