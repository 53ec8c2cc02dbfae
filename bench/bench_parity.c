/*
 * bench_parity: throughput of every available parity implementation.
 *
 * For ndata 4 and 8 with 64 KiB chunks (64-byte aligned, as the stripe
 * cache allocates them): gen_p, gen_pq, recovery of one lost data column
 * (through P), of one data column and P (through Q) and of two data
 * columns (through P and Q).  Each cell repeats its call for
 * about 0.3 s and reports data bytes (ndata x chunk) per second, in GB/s
 * (10^9 bytes), so the figures of different operations compare directly.
 *
 * Usage: bench_parity [seconds per cell]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parity.h"

#define BENCH_CHUNK (64 * 1024)
#define BENCH_MAX_DATA 8

enum bench_op { OP_GEN_P, OP_GEN_PQ, OP_REC1, OP_REC_DP, OP_REC2, OP_COUNT };

static const char *const op_names[OP_COUNT] = {
	[OP_GEN_P] = "gen_p",
	[OP_GEN_PQ] = "gen_pq",
	[OP_REC1] = "recover 1 data",
	[OP_REC_DP] = "recover data+P",
	[OP_REC2] = "recover 2 data",
};

static const int bench_ndata[] = { 4, 8 };

static double now_sec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* One call of op on the stripe cols (ndata data, then P and Q). */
static int bench_call(const struct rc_parity_ops *ops, enum bench_op op,
		      int ndata, void *const *cols)
{
	static const int lost1[] = { 0 }, lost2[] = { 0, 1 };
	const int lost_dp[] = { 0, ndata };

	switch (op) {
	case OP_GEN_P:
		ops->gen_p(ndata, BENCH_CHUNK, cols, cols[ndata]);
		return 0;
	case OP_GEN_PQ:
		ops->gen_pq(ndata, BENCH_CHUNK, cols, cols[ndata],
			    cols[ndata + 1]);
		return 0;
	case OP_REC1:
		return ops->recover(ndata, 2, BENCH_CHUNK, cols, lost1, 1);
	case OP_REC_DP:
		return ops->recover(ndata, 2, BENCH_CHUNK, cols, lost_dp, 2);
	case OP_REC2:
		return ops->recover(ndata, 2, BENCH_CHUNK, cols, lost2, 2);
	default:
		return -EINVAL;
	}
}

/* GB/s of data bytes, or a negative errno if the call fails. */
static int bench_cell(const struct rc_parity_ops *ops, enum bench_op op,
		      int ndata, void *const *cols, double secs, double *gbps)
{
	double t0, t;
	long calls = 0;
	int err;

	err = bench_call(ops, op, ndata, cols);   /* warm caches and tables */
	if (err)
		return err;
	t0 = now_sec();
	do {
		err = bench_call(ops, op, ndata, cols);
		if (err)
			return err;
		calls++;
		t = now_sec() - t0;
	} while (t < secs);
	*gbps = (double)calls * ndata * BENCH_CHUNK / t / 1e9;
	return 0;
}

static void bench_print_header(void)
{
	printf("%-8s %-16s", "impl", "operation");
	for (size_t i = 0; i < sizeof(bench_ndata) / sizeof(bench_ndata[0]); i++)
		printf("  ndata=%-2d GB/s", bench_ndata[i]);
	printf("\n");
}

static int bench_impl(const struct rc_parity_ops *ops, void *const *cols,
		      double secs)
{
	for (int op = 0; op < OP_COUNT; op++) {
		printf("%-8s %-16s", ops->name, op_names[op]);
		for (size_t i = 0; i < sizeof(bench_ndata) / sizeof(bench_ndata[0]); i++) {
			double gbps;
			int err = bench_cell(ops, op, bench_ndata[i], cols, secs,
					     &gbps);

			if (err) {
				fprintf(stderr, "\n%s %s: %s\n", ops->name,
					op_names[op], strerror(-err));
				return err;
			}
			printf("  %14.2f", gbps);
			fflush(stdout);
		}
		printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	void *cols[BENCH_MAX_DATA + 2];
	unsigned char *mem;
	int err = 0;

	mem = aligned_alloc(64, (BENCH_MAX_DATA + 2) * (size_t)BENCH_CHUNK);
	if (!mem) {
		perror("bench_parity");
		return 1;
	}
	srand(1);
	for (size_t i = 0; i < (BENCH_MAX_DATA + 2) * (size_t)BENCH_CHUNK; i++)
		mem[i] = (unsigned char)rand();
	for (int i = 0; i < BENCH_MAX_DATA + 2; i++)
		cols[i] = mem + (size_t)i * BENCH_CHUNK;
	/* timing does not depend on the values; P and Q need not match */
	printf("parity: %d KiB chunks, %.2f s per cell, rc_parity_best() = %s\n",
	       BENCH_CHUNK / 1024, secs, rc_parity_best()->name);
	bench_print_header();
	for (int i = 0; rc_parity_all[i] && !err; i++) {
		if (!rc_parity_all[i]->available())
			continue;
		err = bench_impl(rc_parity_all[i], cols, secs);
	}
	free(mem);
	return err ? 1 : 0;
}
