/*
 * rc_fault: a fault-injecting member backend over any other, for tests
 * (after SQLite's test_vfs and littlefs's emubd).
 *
 * Faults are rules over byte ranges of the wrapped device:
 *   EIO on read or write      transient (the next count hits) or persistent
 *   bit flips on read         the data returned is corrupt, the media is not
 *   lost writes               acknowledged, not stored
 *   vanish                    every later operation fails with -ENXIO
 *   shrink                    the device reports a smaller size, and I/O
 *                             beyond it fails with -EIO
 *   swap                      another device answers under the same name
 * and rc_fault_corrupt() flips bits on the media itself (silent corruption).
 *
 * Power: devices wrapped with the same struct rc_power share one power
 * supply.  Writes are held in a volatile cache per device until sync; the
 * power is cut after the Nth write counted across the domain (the Nth write
 * itself is lost), every device's unsynced writes are dropped (or, with
 * RC_POWER_REORDER, a random subset of them reaches the media, in any
 * order), and every later operation fails with -EIO.  The lower devices
 * then hold exactly what a real power cut would have left.  A write limit
 * makes the domain's writes fail after N blocks, the one that crosses the
 * limit torn, while reads and syncs go on until the cut.
 */
#ifndef RC_FAULT_H
#define RC_FAULT_H

#include <pthread.h>
#include <stdbool.h>
#include "raidcore.h"

struct rc_fault;
struct rc_power;

enum rc_fault_op {
	RC_FAULT_READ = 1,
	RC_FAULT_WRITE = 2,
};

#define RC_FAULT_PERSISTENT (-1)

/*
 * Wraps lower; the new device owns lower (closing it closes lower).  power
 * may be NULL (writes go straight through).  ctl stays valid until the
 * device is closed.
 */
int rc_fault_wrap(struct rc_dev *lower, struct rc_power *power,
		  struct rc_dev **out, struct rc_fault **ctl);

/* The next count operations (or all, RC_FAULT_PERSISTENT) touching
 * [off, off + len) fail with -EIO. */
int rc_fault_eio(struct rc_fault *f, enum rc_fault_op op, uint64_t off,
		 uint64_t len, int count);
/* Reads touching [off, off + len) fail with -EIO until a write covering
 * it all is stored: a disk's pending sectors, remapped when written. */
int rc_fault_pending(struct rc_fault *f, uint64_t off, uint64_t len);
/* Reads touching the range return data with one bit flipped per block. */
int rc_fault_flip_on_read(struct rc_fault *f, uint64_t off, uint64_t len,
			  int count);
/* Writes touching the range are acknowledged and not stored. */
int rc_fault_lose_writes(struct rc_fault *f, uint64_t off, uint64_t len,
			 int count);
/* Flips nbits random bits (seeded) of the media in [off, off + len). */
int rc_fault_corrupt(struct rc_fault *f, uint64_t off, uint64_t len,
		     int nbits, uint64_t seed);
/* From now on every operation fails with -ENXIO. */
void rc_fault_vanish(struct rc_fault *f);
/* From now on the device is bytes long (size_now says so; dev->size, the
 * size at open, does not change) and I/O reaching past it fails with
 * -EIO, as on a disk or a device-mapper target that shrank. */
void rc_fault_shrink(struct rc_fault *f, uint64_t bytes);
/* From now on other (owned by the device from here on) answers every
 * read, write and sync instead of the wrapped device: another disk behind
 * the same name.  Rules, power and counters stay.  Once only; -EBUSY the
 * second time, -EINVAL when other is smaller. */
int rc_fault_swap(struct rc_fault *f, struct rc_dev *other);
/* Every later sync first sleeps usec, as a disk's cache flush takes its
 * time (0: none; rc_fault_clear leaves it). */
void rc_fault_sync_delay(struct rc_fault *f, unsigned usec);
/* Every later read (op RC_FAULT_READ) or write (RC_FAULT_WRITE) first
 * sleeps usec, as a disk's seek and transfer take their time (0: none;
 * rc_fault_clear leaves it). */
void rc_fault_delay(struct rc_fault *f, enum rc_fault_op op, unsigned usec);
/* Did the last sync run on thread t? */
bool rc_fault_last_sync_on(struct rc_fault *f, pthread_t t);
/* Reads (op RC_FAULT_READ) or writes (RC_FAULT_WRITE) touching
 * [off, off + len) wait, each inside its call, until rc_fault_release (a
 * disk that has not answered yet); one range at a time, not removed by
 * rc_fault_clear.  rc_fault_wait_held returns once n of them wait. */
void rc_fault_hold(struct rc_fault *f, enum rc_fault_op op, uint64_t off,
		   uint64_t len);
void rc_fault_wait_held(struct rc_fault *f, unsigned n);
void rc_fault_release(struct rc_fault *f);
/* From now on reads (op RC_FAULT_READ) or writes (RC_FAULT_WRITE)
 * touching [off, off + len) are counted (one range at a time;
 * rc_fault_watched returns the count since the call). */
void rc_fault_watch(struct rc_fault *f, enum rc_fault_op op, uint64_t off,
		    uint64_t len);
uint64_t rc_fault_watched(struct rc_fault *f);
/* Removes every rule (vanish and shrink included; a swap stays). */
void rc_fault_clear(struct rc_fault *f);
/* Operations seen, for assertions: every call, failed or not. */
uint64_t rc_fault_reads(const struct rc_fault *f);
uint64_t rc_fault_writes(const struct rc_fault *f);
uint64_t rc_fault_syncs(const struct rc_fault *f);
/* Bytes the device took: all of each write that returned 0, and the part
 * of a torn write (rc_power_write_limit) that was taken. */
uint64_t rc_fault_bytes_written(const struct rc_fault *f);

enum rc_power_mode {
	RC_POWER_DROP = 0,        /* unsynced writes are all lost */
	RC_POWER_REORDER = 1,     /* a random subset survives */
};

struct rc_power *rc_power_create(enum rc_power_mode mode, uint64_t seed);
/* Cut after the nth write from now (1: the next write is lost).  0: never. */
void rc_power_cut_after(struct rc_power *p, uint64_t nth);
/*
 * After nblocks more 4 KiB blocks written in the domain (-1: no limit),
 * writes stop: the write that crosses the limit is torn (its bytes up to
 * the limit are taken, into the cache, and it fails with -EIO) and every
 * later write fails with -EIO and stores nothing.  Reads and syncs go on,
 * so what was written before can still be made durable - a disk whose
 * writes fail some time before its power goes (rc_power_cut, which then
 * drops whatever was not synced).  The filesystem's crash tests cut so.
 */
void rc_power_write_limit(struct rc_power *p, int64_t nblocks);
/* Cut now. */
void rc_power_cut(struct rc_power *p);
bool rc_power_is_off(const struct rc_power *p);
/* Writes counted so far in the domain. */
uint64_t rc_power_writes(const struct rc_power *p);
/* Freed after every device in the domain is closed. */
void rc_power_destroy(struct rc_power *p);

#endif
