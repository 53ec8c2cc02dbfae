/*
 * rc_test_util: fixtures shared by raidcore's array-level tests.
 *
 * A test keeps its members as memory devices in a struct rc_testbed and
 * hands the array "borrowed" views of them (second handles on the same
 * storage, rc_dev_mem_share: closing a view leaves the memory alone),
 * optionally through the fault wrapper, so the same members
 * can be assembled again and again, with faults, power cuts, members
 * missing or swapped.
 */
#ifndef RC_TEST_UTIL_H
#define RC_TEST_UTIL_H

#include <stdint.h>
#include "raidcore.h"
#include "rc_fault.h"

#define TB_MAX 16

struct rc_testbed {
	int n;                          /* devices, members then spares */
	struct rc_dev *mem[TB_MAX];     /* the media */
	struct rc_fault *fault[TB_MAX]; /* of the last tb_devs() views */
	struct rc_power *power;         /* of the last tb_devs() views */
	uint64_t dev_bytes;
	/* snapshots given back, for the next tb_snapshot: a fresh buffer
	 * per device per snapshot (mmap'd, under ASan) took half of
	 * test_crash's time in page faults */
	uint8_t **pool[4];
	int npool;
};

/* Makes n memory devices of dev_bytes each. */
void tb_init(struct rc_testbed *tb, int n, uint64_t dev_bytes);
void tb_fini(struct rc_testbed *tb);
/* A handle on device i's media (same identity); closing it keeps them. */
struct rc_dev *tb_borrow(struct rc_testbed *tb, int i);
/*
 * Views of every device through the fault wrapper (tb->fault[i]), all in
 * one power domain (tb->power) when power is true.  skip: bitmask of
 * devices to give as NULL (missing).
 */
void tb_devs(struct rc_testbed *tb, struct rc_dev **out, bool power,
	     uint32_t skip);
/* The same with a power domain of the given mode and seed. */
void tb_devs_power(struct rc_testbed *tb, struct rc_dev **out,
		   enum rc_power_mode mode, uint64_t seed, uint32_t skip);
/* Copies of every device's media, to restore the same crash image
 * (tb_snapshot_free gives the buffers back for the next one). */
uint8_t **tb_snapshot(struct rc_testbed *tb);
void tb_restore(struct rc_testbed *tb, uint8_t **snap);
void tb_snapshot_free(struct rc_testbed *tb, uint8_t **snap);
/* XXH3 of all media, to show that nothing was written. */
uint64_t tb_media_hash(struct rc_testbed *tb);
/* Assembles into *out; returns the error (err gets the reason). */
int tb_try_assemble(struct rc_testbed *tb, struct rc_dev **devs,
		    unsigned flags, struct rc_array **out, char *err,
		    size_t len);
/* Formats the devices: level, chunk bytes, spares (the last ones). */
void tb_create(struct rc_testbed *tb, enum rc_level level, uint32_t chunk,
	       int nspares);
/* Assembles; asserts success unless expect_err is non-zero. */
struct rc_array *tb_assemble(struct rc_testbed *tb, uint32_t skip,
			     unsigned flags);
/* Deterministic pattern for logical block b of generation gen. */
void tb_pattern(void *buf, uint64_t b, uint32_t gen);
bool tb_check(const void *buf, uint64_t b, uint32_t gen);
uint64_t tb_rand(uint64_t *state);
/* A scrub without repair finds no checksum error, no parity mismatch and
 * nothing unrecoverable; fails the test naming what otherwise. */
void tb_scrub_clean(struct rc_array *a, const char *what);

#endif
