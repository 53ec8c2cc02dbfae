/*
 * parity: the table of P/Q implementations and the start-up choice among
 * them.
 *
 * Like Linux lib/raid6/algos.c, rc_parity_best() times gen_pq of every
 * available implementation once, on a small stripe, and keeps the fastest
 * for the life of the process.  RAIDCORE_PARITY=<name> overrides the
 * measurement (tests, debugging, a suspected bad implementation).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parity_impl.h"
#include "raidcore.h"

_Static_assert(RC_PARITY_MAX_DATA >= RC_MAX_MEMBERS - 1,
	       "recovery must cover the widest RAID 5 stripe");
_Static_assert(RC_PARITY_MAX_DATA < 255, "g^k must differ for every column");

/* Stripe timed at start-up: big enough to leave the call overhead behind,
 * small enough to stay in cache, as the kernel does. */
#define BENCH_NDATA 8
#define BENCH_LEN 4096
#define BENCH_NSEC 3000000L

const struct rc_parity_ops *const rc_parity_all[] = {
	&rc_parity_scalar,
	&rc_parity_isal,
	NULL,
};

static const struct rc_parity_ops *parity_best;
static pthread_once_t parity_best_once = PTHREAD_ONCE_INIT;

int rc_parity_recover_check(int ndata, int nparity, size_t len,
			    const int *failed, int nfailed)
{
	if (ndata < 1 || ndata > RC_PARITY_MAX_DATA)
		return -EINVAL;
	if (nparity < 1 || nparity > 2 || len == 0 || len % 64)
		return -EINVAL;
	if (nfailed < 0 || nfailed > nparity)
		return -EINVAL;
	for (int i = 0; i < nfailed; i++) {
		if (failed[i] < 0 || failed[i] >= ndata + nparity)
			return -EINVAL;
		if (i > 0 && failed[i] <= failed[i - 1])
			return -EINVAL;
	}
	return 0;
}

static long parity_nsec_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000000L + t.tv_nsec - t0->tv_nsec;
}

/* gen_pq calls completed in BENCH_NSEC, after one warm-up call. */
static long parity_rate(const struct rc_parity_ops *ops, void *const *bufs)
{
	struct timespec t0;
	long calls = 0;

	ops->gen_pq(BENCH_NDATA, BENCH_LEN, bufs, bufs[BENCH_NDATA],
		    bufs[BENCH_NDATA + 1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ops->gen_pq(BENCH_NDATA, BENCH_LEN, bufs, bufs[BENCH_NDATA],
			    bufs[BENCH_NDATA + 1]);
		calls++;
	} while (parity_nsec_since(&t0) < BENCH_NSEC);
	return calls;
}

/* The fastest available implementation; scalar if memory is short. */
static const struct rc_parity_ops *parity_measure(void)
{
	const struct rc_parity_ops *best = &rc_parity_scalar;
	void *bufs[BENCH_NDATA + 2];
	unsigned char *mem;
	long best_calls = -1;

	mem = aligned_alloc(64, (BENCH_NDATA + 2) * BENCH_LEN);
	if (!mem)
		goto out;
	for (int i = 0; i < BENCH_NDATA + 2; i++) {
		bufs[i] = mem + i * BENCH_LEN;
		memset(bufs[i], 0x5a + i, BENCH_LEN);
	}
	for (int i = 0; rc_parity_all[i]; i++) {
		long calls;

		if (!rc_parity_all[i]->available())
			continue;
		calls = parity_rate(rc_parity_all[i], bufs);
		if (calls > best_calls) {
			best = rc_parity_all[i];
			best_calls = calls;
		}
	}
	free(mem);
out:
	return best;
}

const struct rc_parity_ops *rc_parity_choose(const char *forced)
{
	if (!forced || !*forced)
		return parity_measure();
	for (int i = 0; rc_parity_all[i]; i++)
		if (!strcmp(rc_parity_all[i]->name, forced)
		    && rc_parity_all[i]->available())
			return rc_parity_all[i];
	fprintf(stderr, "raidcore: RAIDCORE_PARITY=%s is not an available "
		"parity implementation; measuring instead\n", forced);
	return parity_measure();
}

static void parity_best_init(void)
{
	/* secure_getenv: a set-uid mount helper must not take it from users */
	parity_best = rc_parity_choose(secure_getenv("RAIDCORE_PARITY"));
}

const struct rc_parity_ops *rc_parity_best(void)
{
	pthread_once(&parity_best_once, parity_best_init);
	return parity_best;
}
