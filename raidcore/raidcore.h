/*
 * raidcore: the striped-parity block layer of raidfs.
 *
 * raidcore assembles an array from member devices and presents one logical
 * device of RC_BLOCK_SIZE blocks. It knows nothing of files.
 *
 * Usage pattern:
 *   rc_dev_open_file() for every member   (or rc_dev_mem_create / rc_fault_wrap)
 *   rc_array_create()                     once, to format the members
 *   rc_array_assemble()                   to open an existing array
 *   rc_read() / rc_write() / rc_flush()   from any number of threads
 *   rc_array_close()                      flushes, marks the array clean
 *
 * Every function returns 0 (or a non-negative count) on success and a
 * negative errno on failure.  Writes are buffered in a volatile stripe cache
 * (like a disk's write cache): only rc_flush() makes them durable, and a
 * successful rc_flush() means every write that returned before it was called
 * survives a crash.
 */
#ifndef RAIDCORE_H
#define RAIDCORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/uio.h>

#define RC_BLOCK_SIZE 4096u
#define RC_BLOCK_SHIFT 12
#define RC_MAX_MEMBERS 32      /* raid slots */
#define RC_MAX_SPARES 16
#define RC_LABEL_MAX 64        /* bytes, including the NUL */
#define RC_UUID_SIZE 16

enum rc_level {
	RC_RAID0 = 0,
	RC_RAID1 = 1,
	RC_RAID4 = 4,
	RC_RAID5 = 5,
	RC_RAID6 = 6,
	RC_RAID10 = 10,
};

/* Layouts are recorded explicitly on disk; never inferred from the level. */
enum rc_layout {
	RC_LAYOUT_NONE = 0,            /* RAID 0, 1 */
	RC_LAYOUT_PARITY_LAST = 1,     /* RAID 4: parity on the last member */
	RC_LAYOUT_LEFT_SYMMETRIC = 2,  /* RAID 5/6, md's algorithm 2 */
	RC_LAYOUT_NEAR2 = 3,           /* RAID 10: two adjacent copies */
};

/* ---- Member devices ------------------------------------------------------
 * One backend per file in dev/: file/block device (file.c), sparse memory
 * (mem.c), fault injection (fault.c, tests only, rc_fault.h); what they
 * share in dev.c.  Offsets and lengths are in bytes.  read/write transfer all of len or fail; they return 0 or
 * -errno.  sync makes every completed write durable.
 */
struct rc_dev;

struct rc_dev_ops {
	int (*read)(struct rc_dev *dev, void *buf, size_t len, uint64_t off);
	int (*write)(struct rc_dev *dev, const void *buf, size_t len, uint64_t off);
	int (*sync)(struct rc_dev *dev);
	void (*close)(struct rc_dev *dev);   /* frees dev */
	/* Optional: make [off, off + len) read as zeros, cheaply (a hole, or
	 * BLKZEROOUT).  NULL: rc_dev_zero writes zeros. */
	int (*zero)(struct rc_dev *dev, uint64_t off, uint64_t len);
	/* Optional: the device's size now, in bytes (a file or a disk can
	 * shrink under an open handle; dev->size stays what it was at open).
	 * NULL: it never changes. */
	int (*size_now)(struct rc_dev *dev, uint64_t *bytes);
	/* Optional: one read of [off, off + the iovecs' length) into the
	 * iovecs, in order (preadv: one request to the device where reads
	 * of each would be several).  NULL: rc_dev_readv reads each. */
	int (*readv)(struct rc_dev *dev, const struct iovec *iov, int iovcnt,
		     uint64_t off);
};

struct rc_dev {
	const struct rc_dev_ops *ops;
	void *ctx;
	uint64_t size;          /* bytes */
	char name[256];         /* for messages: the path, or "mem0" */
	dev_t rdev;             /* st_rdev of a block device, else 0 */
	ino_t ino;              /* identity of the file, to find duplicates */
	dev_t st_dev;
	ino_t back_ino;         /* a loop device's backing file (st_ino and */
	dev_t back_dev;         /* st_dev), else 0: the same member as it */
	bool waits;             /* each request waits for the device (direct
				   I/O): worth overlapping across members */
};

enum rc_dev_flags {
	RC_DEV_RDONLY = 1 << 0,
	RC_DEV_EXCL = 1 << 1,     /* O_EXCL on block devices */
};

/*
 * Opens a member.  Besides O_EXCL for block devices, the file is locked
 * with flock (exclusive, or shared with RC_DEV_RDONLY), so a second daemon
 * or a writing tool on the same member fails with -EBUSY instead of
 * running alongside the first.
 */
int rc_dev_open_file(const char *path, unsigned flags, struct rc_dev **out);
/* Makes a byte range read as zeros (ops->zero, or by writing zeros). */
int rc_dev_zero(struct rc_dev *dev, uint64_t off, uint64_t len);
/* The device's size now (ops->size_now, or dev->size), in bytes. */
int rc_dev_size_now(struct rc_dev *dev, uint64_t *bytes);
void rc_dev_close(struct rc_dev *dev);
/* The same member: one device, one file, or a loop device and the file
 * behind it (or two loop devices over one file). */
bool rc_dev_same(const struct rc_dev *a, const struct rc_dev *b);

/*
 * Memory devices (dev/mem.c): sparse (only blocks that are not all zeros
 * take memory; zeroing frees them), size bytes long, reading as zeros at
 * first.  rc_dev_mem_create gives a device of its own (name NULL: "mem");
 * rc_dev_mem_create_like a stand-in with real's name and identity (rdev,
 * ino, st_dev), so assembly and creation judge it as they would real.
 * rc_dev_mem_share opens a second handle on the storage of a memory device
 * (same size and identity; -EINVAL for any other device): the storage lives
 * until its last handle is closed.
 */
int rc_dev_mem_create(uint64_t size, const char *name, struct rc_dev **out);
int rc_dev_mem_create_like(const struct rc_dev *real, uint64_t size,
			   struct rc_dev **out);
int rc_dev_mem_share(struct rc_dev *dev, struct rc_dev **out);
/* Blocks a memory device's storage holds (0 for other devices). */
uint64_t rc_dev_mem_blocks_held(struct rc_dev *dev);

static inline int rc_dev_read(struct rc_dev *d, void *b, size_t l, uint64_t o)
{
	return d->ops->read(d, b, l, o);
}

/* [off, ...) into iovcnt buffers, one after the other on the device. */
int rc_dev_readv(struct rc_dev *d, const struct iovec *iov, int iovcnt,
		 uint64_t off);
/* The same, a read of each buffer (ops->read): a backend's readv where
 * one request cannot do it. */
int rc_dev_readv_each(struct rc_dev *d, const struct iovec *iov, int iovcnt,
		      uint64_t off);

static inline int rc_dev_write(struct rc_dev *d, const void *b, size_t l,
			       uint64_t o)
{
	return d->ops->write(d, b, l, o);
}

static inline int rc_dev_sync(struct rc_dev *d)
{
	return d->ops->sync(d);
}

/* ---- Arrays -------------------------------------------------------------- */
struct rc_array;

struct rc_create_params {
	enum rc_level level;
	uint32_t chunk_bytes;          /* power of two, 4 KiB .. 1 MiB */
	uint8_t array_uuid[RC_UUID_SIZE];   /* all zero: generate */
	char label[RC_LABEL_MAX];
	uint64_t journal_blocks;       /* per member; 0: default */
	int nspares;                   /* the last nspares devices are spares */
};

enum rc_assemble_flags {
	RC_ASSEMBLE_RDONLY = 1 << 0,     /* never write a member */
	RC_ASSEMBLE_NO_DEGRADED = 1 << 1,/* refuse unless fully redundant */
	RC_ASSEMBLE_CATCHUP = 1 << 2,    /* a former member whose absence the
					    write-intent record covers takes
					    its slot back and catches up on
					    what changed (the daemon); without
					    it, it is stale, as for fsck */
	RC_ASSEMBLE_NO_FOREIGN = 1 << 3, /* a device given that is a member
					    of another array refuses the
					    assembly (-EINVAL): a mistyped
					    path, not a missing member */
};

/*
 * Formats devs[0..n-1] as a new array: devs[i] for i < n - nspares gets
 * role i; the rest become spares.  Checks everything before writing.
 */
int rc_array_create(const struct rc_create_params *p, struct rc_dev **devs,
		    int n);
/* The same, with the reason for a failure in err. */
int rc_array_create_err(const struct rc_create_params *p, struct rc_dev **devs,
			int n, char *err, size_t errlen);

/*
 * Opens an array from devs in any order.  NULL entries are allowed (a
 * member the caller could not open).  Members are identified by their
 * superblocks; foreign, duplicate and stale members are left out (and
 * reported through rc_array_status), and assembly fails with -ENODEV when
 * more members are missing than the level tolerates.  On success the array
 * owns every device in devs (it closes the ones it left out).  Replays the
 * write journal after an unclean shutdown, into memory: nothing is written
 * to the members until the array is first used for writing (rc_write, a
 * flush with something to flush, rc_discard, rc_member_replace,
 * rc_member_fail, rc_scrub with repair, rc_array_clear_errors,
 * rc_array_start_recovery, a repair a read makes).  err, if not NULL,
 * receives a human-readable reason on failure.
 */
int rc_array_assemble(struct rc_dev **devs, int n, unsigned flags,
		      struct rc_array **out, char *err, size_t errlen);

/* What a device's superblock says, without assembling anything. */
struct rc_probe {
	uint8_t array_uuid[RC_UUID_SIZE];
	uint8_t member_uuid[RC_UUID_SIZE];
	uint32_t role;                 /* slot, or 0xffffffff for a spare */
	enum rc_level level;
	uint32_t members, spares, chunk_blocks;
	uint64_t events, array_blocks;
	bool clean;
	char label[RC_LABEL_MAX];
	uint8_t copies_ok;             /* bit c: superblock copy c (of 4) is
					  valid and current */
	uint8_t copies_torn;           /* bit c: copy c one update behind
					  copy 0, the best: a superblock
					  write a crash cut short (copy 0
					  goes first), not damage */
	bool errors;                   /* errors were seen since the last
					  clean check (RC_AF_ERRORS) */
	uint64_t err_read, err_write, err_csum;   /* recorded on this device */
	uint64_t device_blocks_min;    /* what the device must hold: its data
					  region and the two copies after it */
};

/*
 * Is a former member of a slot the array runs without (its superblock read
 * as p) the device that left it: its events within the write-intent
 * record's, which began when the slot went missing?  An older copy of the
 * member is not (its writes stop before), nor is any without a record.
 */
bool rc_array_may_return(struct rc_array *a, const struct rc_probe *p);

/*
 * 0 when dev carries a raidfs superblock (the better of its two copies);
 * -ENODATA when it does not; -EBADMSG when both copies are damaged;
 * -EPROTONOSUPPORT for a newer format.  Reads only.
 */
int rc_member_probe(struct rc_dev *dev, struct rc_probe *p);

/* Flushes, marks the array clean and closes every member; an array never
 * written to since assembly is closed without writing anything (an
 * unclean one stays so: the next assembly replays again). */
int rc_array_close(struct rc_array *a);

/* I/O on the logical device, in blocks.  Thread-safe. */
int rc_read(struct rc_array *a, uint64_t block, uint32_t count, void *buf);
int rc_write(struct rc_array *a, uint64_t block, uint32_t count,
	     const void *buf);
/*
 * The layer above found block wrong as read though it verified against
 * its checksum entry (its own check fails: the block and its entry were
 * rewritten together - a lost write of both, or damage resealed).  The
 * other reading the array's redundancy gives - the column rebuilt from
 * the others, or the one other copy of a mirror - is offered to proves;
 * when it proves itself and the block as read (the caller's copy, in
 * out) does not, it is written over the block (its entry with it; in a
 * read-only array only served), copied to out, and 0 returned.  -ENODATA when there is no such reading
 * (the block is dirty in the cache, the row cannot rebuild it, nothing
 * else proves itself).  proves runs under a stripe lock: no I/O, no lock.
 */
int rc_block_reconsider(struct rc_array *a, uint64_t block,
			bool (*proves)(void *ctx, const void *data), void *ctx,
			void *out);
/*
 * rc_write with flags.  RC_WRITE_FRESH: the caller promises that, until
 * the next rc_flush returns, nothing it keeps depends on what
 * [block, block + count) held before nor on this write (blocks allocated
 * since its last commit, whose references it commits only after a
 * flush).  A stripe whose every data block is dirty and fresh is then
 * written in place once, without a journal copy (docs/DESIGN.md "Direct
 * stripes"); a crash before the flush may leave it holding any mix of old
 * and new blocks, always consistent with its parity and checksums.
 */
#define RC_WRITE_FRESH 1u
int rc_write_flags(struct rc_array *a, uint64_t block, uint32_t count,
		   const void *buf, unsigned flags);
int rc_flush(struct rc_array *a);
/*
 * A write the array cannot place is dropped at its commit: a run of rows
 * whose new parity needs a block that neither its old contents nor the
 * row's other columns give (a degraded RAID 5 whose row holds a block
 * lost to a read error, written over).  The rest of the commit goes on;
 * the dropped blocks read as before, are logged and raised as lost
 * (RC_EV_LOST).  rc_flush fails (-EIO) when a write was dropped during
 * it; rc_flush_dropping does not, for a caller that asks which writes
 * were (the filesystem: a file's fsync fails, not the whole mount).
 * rc_write_failures counts the dropped ranges so far; rc_write_failed
 * says whether one dropped after the count was `since` meets [block,
 * block + count) - true also when too many were dropped since to tell.
 */
int rc_flush_dropping(struct rc_array *a);
uint64_t rc_write_failures(struct rc_array *a);
bool rc_write_failed(struct rc_array *a, uint64_t since, uint64_t block,
		     uint64_t count);
/*
 * Drops what the stripe cache holds unwritten for the stripes of [block,
 * block + count): they read as the members say again.  For a writer whose
 * flush of them failed and that would rather leave them as they were
 * (fsck zeroing lost blocks in free space: a row that holds another lost
 * block cannot be committed, and left dirty it failed every later flush,
 * the close's too).  Never for what a user wrote.
 */
void rc_write_abandon(struct rc_array *a, uint64_t block, uint64_t count);
/*
 * The filesystem no longer needs [block, block + count): whole stripes in
 * it become "never written" (they read as zeros and cost nothing to
 * rebuild or scrub).  Advisory, like TRIM; durable with the next flush.
 */
int rc_discard(struct rc_array *a, uint64_t block, uint64_t count);

/* ---- Status -------------------------------------------------------------- */
enum rc_member_state {
	RC_MEMBER_ACTIVE = 0,
	RC_MEMBER_FAULTY = 1,      /* failed I/O; not used */
	RC_MEMBER_MISSING = 2,     /* not present at assembly */
	RC_MEMBER_REBUILDING = 3,  /* being reconstructed, up to a checkpoint */
	RC_MEMBER_SPARE = 4,
	RC_MEMBER_EMPTY = 5,       /* unused table slot */
};

struct rc_member_status {
	enum rc_member_state state;
	char name[256];            /* device name, "" when missing */
	uint8_t uuid[RC_UUID_SIZE];
	uint64_t rebuild_done;     /* stripes rebuilt, when rebuilding */
	uint64_t read_errors;      /* EIO on read */
	uint64_t write_errors;
	uint64_t csum_errors;      /* checksum mismatches found on this member */
	uint64_t repaired;         /* blocks rewritten with reconstructed data */
	bool catchup;              /* rebuilding only what changed while it
				      was away (rc_member_readd) */
	uint64_t resync_regions;   /* the last catch-up (so far): write-intent */
	uint64_t resync_stripes;   /* regions and stripes rebuilt, 0: none */
	bool kept_failing;         /* more errors than fault a member, kept
				      only as the last redundancy (or in a
				      read-only array): replace it */
	bool stale_copy;           /* a device given for this slot, active at
				      the last update, was behind it: an old
				      copy of the member, or a disk that lost
				      writes; left out, not written */
};

struct rc_info {
	enum rc_level level;
	enum rc_layout layout;
	uint32_t members;          /* raid slots */
	uint32_t spares;
	uint32_t chunk_blocks;
	uint32_t data_columns;     /* data chunks per stripe */
	uint32_t stripe_blocks;    /* data blocks per stripe: the write unit */
	uint64_t blocks;           /* logical capacity in blocks */
	uint64_t events;
	uint8_t uuid[RC_UUID_SIZE];
	char label[RC_LABEL_MAX];
	bool degraded;             /* some slot is not active */
	bool replacing;            /* an online replacement (not yet done) */
	uint32_t replace_slot;     /* ... of this slot */
	uint64_t replace_done;     /* ... stripes copied */
	char replace_dev[256];     /* ... onto this device */
	uint8_t replace_uuid[RC_UUID_SIZE];  /* ... its member uuid */
	bool rdonly;
	bool was_unclean;          /* the journal was replayed at assembly */
	uint64_t replayed_txns;
	uint64_t journal_lost;     /* first committed transaction replay could
				      not apply (0: none): it and the later
				      ones are lost */
	uint64_t direct_stripes;   /* full stripes written without a journal
				      copy since assembly (RC_WRITE_FRESH) */
	uint64_t dirty_stripes;    /* in the stripe cache, not yet committed */
	uint64_t dirty_max;        /* where writers commit themselves */
	uint64_t unrecoverable;    /* reads that returned -EIO for lack of redundancy */
	bool errors;               /* errors were seen since the last clean
				      check (kept on the members: RC_AF_ERRORS) */
	uint64_t device_blocks_min;/* a device that takes a slot needs this
				      many blocks (rc_member_replace) */
	uint64_t tables_unverified; /* checksum table blocks found failing
				      their seal, not yet re-derived */
	uint32_t verify_slots;     /* bit s: member s was found damaged
				      (superblock copies invalid, old or
				      unreadable, at assembly or by the
				      health check) and no repairing scrub
				      has gone over the whole array since
				      (scrub.c); its other blocks may be
				      damaged too */
	char verify_why[160];      /* what was found, for the first of them */
	uint64_t verify_gen;       /* counts members newly found damaged */
	bool failed;               /* more slots lost than the level
				      tolerates (a rebuilding one counted
				      as lost: what it has not reached), or
				      suspended */
	bool suspended;            /* a member it cannot run without failed
				      an I/O: nothing more is read or
				      written until it is assembled again */
	int suspend_slot;          /* ... that member's slot */
	char suspend_why[160];     /* ... and what failed */
	uint64_t stripes;          /* stripes: what rebuild_done counts to */
	uint32_t redundancy;       /* slots the level can lose */
};

int rc_array_info(struct rc_array *a, struct rc_info *info);
/* After a check that left nothing wrong: the ERRORS flag goes, and with
 * counters the members' error counters too; written to the superblocks. */
int rc_array_clear_errors(struct rc_array *a, bool counters);
/* Errors seen (or, with found, damage the caller found itself: a member
 * of ours left out as shrunk) and not yet on the members: the ERRORS
 * flag written to the superblocks, with the slots as they are now (the
 * daemon's recovery thread does so by itself; a tool that leaves errors
 * calls it), so the next check is in full. */
int rc_array_record_errors(struct rc_array *a, bool found);
/*
 * Was the device of member uuid left out at assembly as a split brain's
 * other side: assembled without every member placed now, as they were
 * without it (each side mounted degraded on its own and written)?  Its
 * writes are in no superblock of this array: nothing may rebuild over it
 * unless an administrator names it.
 */
bool rc_array_split_member(const struct rc_array *a, const uint8_t *uuid);
int rc_array_member_status(struct rc_array *a, int slot,
			   struct rc_member_status *st);

/* ---- Maintenance --------------------------------------------------------- */

/*
 * Marks slot faulty (as md's --fail): it is no longer read or written.
 */
int rc_member_fail(struct rc_array *a, int slot);

/*
 * Puts dev (a blank device, or the stale former member) into slot (or, with
 * slot -1, the first slot that is not active) and rebuilds it from the
 * others; the array owns dev from the call on (one it refuses or cannot
 * write is closed, and the error returned).  dev NULL: resume the slot's
 * interrupted rebuild, or else use the first spare.  Blocks until the
 * rebuild is done; progress, if not NULL, is called now and then.
 * -EIO when some blocks could not be rebuilt (they read as -EIO).
 */
int rc_member_replace(struct rc_array *a, int slot, struct rc_dev *dev,
		      void (*progress)(void *ctx, uint64_t done, uint64_t total),
		      void *ctx);

/*
 * md's --fail for an administrator: like rc_member_fail, but -EBUSY when
 * the array could not run without slot (its last copy of some data),
 * -EINPROGRESS when it could not without slot if the members found
 * damaged and not yet verified (rc_info.verify_slots) were lost too,
 * -EALREADY when slot is neither active nor rebuilding, -EINVAL when
 * there is no such slot.
 */
int rc_member_fail_redundant(struct rc_array *a, int slot);

/*
 * md's --remove.  slot < members: a faulty member's device is closed and
 * the slot is missing (-EBUSY while it is active or rebuilding: fail it
 * first).  slot >= members: the spare members + i is given up (-EBUSY
 * while the array is degraded: the recovery thread may be taking it).
 * The superblocks are rewritten.
 */
int rc_member_remove(struct rc_array *a, int slot);

/*
 * md's --add: dev (the array owns it from then on, also on failure)
 * becomes a spare; the superblocks are rewritten (dev gets a spare's) and
 * the recovery thread, if running, rebuilds it at once into a slot that
 * is not active.  -ENOSPC when dev is too small (rc_info
 * device_blocks_min), -EEXIST when it is already one of the array's
 * devices, -EMLINK when the array has RC_MAX_SPARES spares.
 */
int rc_spare_add(struct rc_array *a, struct rc_dev *dev);

/*
 * Does a device of the array in service carry member uuid: an active or
 * rebuilding slot's (its slot), a spare's or the online replacement's
 * target (RC_MAX_MEMBERS)?  -1 if none.  A device whose superblock names
 * such a member is that member under another name (a partition, a
 * device-mapper or loop device over it) or a copy of it: mdadm refuses to
 * --add it, and so do raidfsctl add and replace.
 */
int rc_array_holds_member(struct rc_array *a, const uint8_t *uuid);

/*
 * md's --re-add: dev is a former member whose absence the write-intent
 * record covers (its slot missing or faulty, its events at or after the
 * record's start): it takes its slot back and the recovery thread (or
 * rc_member_replace(a, slot, NULL, ...)) rebuilds only the regions
 * written since - a catch-up.  Returns the slot (the array owns dev), or
 * -ENOENT when dev is not such a member, -EROFS or an activation error
 * (the caller keeps dev on every error: add it as a spare, rebuilt in
 * full, or close it).
 */
int rc_member_readd(struct rc_array *a, struct rc_dev *dev);

/*
 * md's --replace, zpool replace: dev (owned by the array from the call
 * on, also on failure) is filled with slot's column while slot's device
 * goes on serving, so the array never loses redundancy: the recovery
 * thread (if running) copies it (verified blocks read from the slot's
 * device, the others reconstructed), every write reaches both meanwhile,
 * and at the end dev takes the slot and the old device is let go (its
 * uuid no longer in the slot table: never assembled back).  If the old
 * device fails meanwhile, dev becomes the first spare and is rebuilt into
 * the slot.  Returns once the replacement is recorded: -EINVAL no such
 * slot, -EROFS, -ENXIO the slot is not active (use rc_spare_add),
 * -EBUSY a replacement runs already, -ENOSPC dev too small, -EEXIST dev
 * is already one of the array's devices, -EMLINK no room in the slot
 * table.
 */
int rc_member_replace_online(struct rc_array *a, int slot, struct rc_dev *dev);
/*
 * Stops the online replacement (mdadm: failing the replacement device):
 * the recovery thread lets the new device go before its next batch (it
 * is closed, not kept as a spare) and the slot keeps its device;
 * ReplaceFinished says -ECANCELED.  -ENOENT when none runs.  Returns at
 * once; rc_array_info's replacing turns false when it is done.
 */
int rc_replace_cancel(struct rc_array *a);

/*
 * The recovery thread's: a member kept despite its errors because the
 * array would have no redundancy left without it (its good blocks serve
 * the rows other members' errors hit) is replaced online by the first
 * spare, as ZFS's spare takes a degraded vdev's place: its verified
 * blocks are copied, the rest reconstructed.  -ENOENT when no member is
 * kept so or no spare waits; otherwise as rc_member_replace_online.
 */
int rc_spare_replace_kept(struct rc_array *a);

/*
 * Rebuild speed, in KiB/s written to the rebuilt member (md's
 * speed_limit_min / speed_limit_max): a rebuild runs at up to max, and at
 * up to min while the array served reads or writes within the last
 * second (it yields to them).  0: no limit.  Defaults: no limits.  Kept
 * on the members' superblocks (struct rc_admin) across mounts: the
 * superblocks are rewritten (0, or their write's error; a read-only or
 * not yet activated array keeps them in memory until its next write).
 */
int rc_array_set_rebuild_speed(struct rc_array *a, uint64_t min_kib,
			       uint64_t max_kib);
void rc_array_get_rebuild_speed(struct rc_array *a, uint64_t *min_kib,
				uint64_t *max_kib);
/* This assembly's rebuilds run with no limit, the ones kept on the members
 * left as they are (fsck.raidfs: an array nobody else is served from has
 * nothing to yield to; a 1 MiB/s limit set for a busy mount made an
 * offline rebuild of 128 MiB take two minutes). */
void rc_array_rebuild_unlimited(struct rc_array *a);

/* ---- Admin state: kept on the members across mounts ---------------------- */
/* One online scrub's counts (the daemon's, rc_scrub_stripes ranges added). */
struct rc_scrub_record {
	uint64_t start_ns, end_ns;   /* CLOCK_REALTIME; start 0: none; end 0:
					not through yet */
	uint64_t stripes;            /* stripes checked */
	uint64_t csum_errors, read_errors;
	uint64_t repaired;           /* blocks rewritten from redundancy */
	uint64_t unrecoverable;      /* blocks that could not be established */
	uint64_t parity_mismatches;
};

struct rc_admin {
	bool scrub_active;           /* a scrub started and not through: a
					start goes on at scrub_pos */
	bool scrub_running;          /* ... and it was running when the array
					was closed: the daemon goes on with
					it at the next mount */
	uint64_t scrub_pos;          /* stripes done by it */
	struct rc_scrub_record scrub;    /* ... and its counts so far */
	struct rc_scrub_record last;     /* the last scrub that went through */
	uint64_t rebuild_min_kib, rebuild_max_kib;  /* rc_array_set_rebuild_speed */
};

/* The admin state as the newest superblock had it, updated since. */
void rc_array_get_admin(struct rc_array *a, struct rc_admin *ad);
/*
 * Records the scrub part of ad (scrub_active, scrub_running, scrub_pos,
 * scrub, last; the speeds are rc_array_set_rebuild_speed's) on every
 * member's superblock.
 * -EROFS on a read-only array (nothing recorded); else 0 or the error of
 * the superblock write.
 */
int rc_array_set_scrub_state(struct rc_array *a, const struct rc_admin *ad);

/* ---- Events -------------------------------------------------------------- */
enum rc_event_kind {
	RC_EV_FAIL = 0,              /* slot turned faulty (why) */
	RC_EV_SPARE_ACTIVE = 1,      /* a spare took slot; its rebuild follows */
	RC_EV_REBUILD_STARTED = 2,   /* done: the stripe it starts from */
	RC_EV_REBUILD_PROGRESS = 3,  /* every 20 %: done of total stripes */
	RC_EV_REBUILD_FINISHED = 4,  /* err 0: slot is active again; else
					the rebuild stopped with err (-EIO:
					done, lost blocks read as errors) */
	RC_EV_SPARE_ADDED = 5,       /* rc_spare_add */
	RC_EV_REMOVED = 6,           /* rc_member_remove; a faulty device
					a spare or a new device took the
					slot of (why: "replaced by ...") */
	RC_EV_REPLACE_STARTED = 7,   /* rc_member_replace_online: dev replaces
					slot's device (why: its name) */
	RC_EV_REPLACE_FINISHED = 8,  /* err 0: dev took slot (why: the old
					device); else the copy stopped (-EIO:
					the old device failed, or blocks were
					lost; -ENODEV: dev, the new one,
					failed and was let go; why: the old
					device) */
	RC_EV_LOST = 9,              /* logical blocks [done, done + total)
					of data cannot be established (a
					read, a scrub, a rebuild found them;
					they read as -EIO): the daemon names
					the files.  Raised again each time
					they are met */
	RC_EV_SUSPENDED = 10,        /* slot failed an I/O (why) and the
					array cannot run without it: nothing
					more is read or written, the member
					is not recorded faulty (fail.c) */
	RC_EV_VERIFY = 11,           /* slot was found damaged (why: its
					superblock copies), or its rebuild
					left holes (why: "N " RC_WHY_HOLES),
					while the array runs: a scrub
					should verify it
					(rc_info.verify_slots) */
};

/* The end of RC_EV_VERIFY's why for a rebuild's holes. */
#define RC_WHY_HOLES "blocks its rebuild could not make"

struct rc_event {
	enum rc_event_kind kind;
	int slot;                    /* -1: none (a spare) */
	char dev[256];               /* the device's name, or "" */
	char why[160];
	uint64_t done, total;        /* stripes, for rebuild events */
	int err;
};

/*
 * Every event goes to fn(ctx, ev), called in the thread that caused it,
 * possibly holding raidcore's locks: fn must not call into raidcore nor
 * block (queue ev and return).  Once rc_array_set_event_handler(a, NULL,
 * NULL) returns, no call is running or will come.
 */
void rc_array_set_event_handler(struct rc_array *a,
				void (*fn)(void *ctx, const struct rc_event *ev),
				void *ctx);

/*
 * What the layer above can say of a block raidcore cannot verify and has
 * nothing left to verify against: its checksum entry is unknown (the
 * table block holding it is damaged) and too few other columns of its row
 * are there to rebuild or check it (a degraded array).  fn gets the
 * logical block number and the block as read, and says whether the
 * contents prove themselves: RC_VOUCH_HERE when they prove they belong at
 * that block (the filesystem's metadata carries a checksum seeded with its
 * own block number), RC_VOUCH_SELF when they are only consistent in
 * themselves (inode chunks: each inode's checksum is seeded with its
 * number, not the block's, so a copy of one - a journal ring's, a stale
 * member's - proves itself anywhere), RC_VOUCH_NO otherwise.  Either makes
 * the block read as found and its entry re-derived from it.  Without it
 * one damaged table block of a degraded RAID 1 made 511 blocks
 * unreadable, the filesystem's first ones among them, and the filesystem
 * unmountable with its data intact (a tester's find).  File data proves
 * nothing and stays an I/O error.  Where the word overrules a block that
 * verifies against its own entry (a row that disagrees: which column is
 * wrong; mirror copies that differ) only RC_VOUCH_HERE counts: an inode
 * chunk rebuilt from a row with a stale member's column proved itself
 * where a journal copy of a directory block stood, and fsck -p wrote it
 * over the good block (a tester's find, T2 D1).  And only over a block
 * that is recognisably a damaged version of the one that belongs there
 * (RC_VOUCH_DAMAGED: its header names this block, its checksum fails) or
 * a "never written" claim: a version that proves itself is not proven
 * newer than a block that is something else now (a stale member's old
 * journal descriptor outvoted two healthy copies of the ring block that
 * replaced it: V2 D4; a block freed and reused for file data would go
 * the same way).  fn runs under a stripe lock: no I/O, no lock.
 */
enum rc_vouch { RC_VOUCH_NO = 0, RC_VOUCH_SELF = 1, RC_VOUCH_HERE = 2,
		RC_VOUCH_DAMAGED = 3 };
void rc_array_set_vouch(struct rc_array *a,
			enum rc_vouch (*fn)(void *ctx, uint64_t block,
					    const void *data),
			void *ctx);

/*
 * Starts the background recovery thread: it resumes an interrupted rebuild
 * and rebuilds onto a spare when a member fails (now or later), as md does;
 * it faults members found lying (see rc_array_set_health_interval) and
 * records errors on the members' superblocks as soon as they are seen.
 * Starting it counts as a first write (the array is activated).
 * The daemon calls this after mounting; tools that want to stay passive do
 * not.  It stops at rc_array_close (an unfinished rebuild resumes from its
 * checkpoint next time).
 */
int rc_array_start_recovery(struct rc_array *a);

struct rc_scrub_report {
	uint64_t stripes;
	uint64_t csum_errors;        /* blocks whose checksum did not match */
	uint64_t read_errors;        /* blocks that could not be read */
	uint64_t unverified;         /* blocks whose table entry was lost */
	uint64_t parity_mismatches;  /* stripes whose parity disagrees with
					data that verifies: not repaired */
	uint64_t conflicts;          /* blocks whose evidence disagrees: not
					repaired, they read as EIO */
	uint64_t repaired;           /* blocks rewritten from redundancy */
	uint64_t entries_fixed;      /* table entries re-derived (the block
					itself was right) */
	uint64_t unrecoverable;      /* blocks that could not be established */
	uint64_t nbad;               /* lost data blocks (see rc_scrub_list) */
};

/* Verifies (and with repair, fixes) every stripe: checksums and parity. */
int rc_scrub(struct rc_array *a, bool repair, struct rc_scrub_report *r,
	     void (*progress)(void *ctx, uint64_t done, uint64_t total),
	     void *ctx);
/* The same, also listing the logical numbers of the data blocks that could
 * not be rebuilt in bad[0 .. min(nbad, bad_cap)). */
int rc_scrub_list(struct rc_array *a, bool repair, struct rc_scrub_report *r,
		  uint64_t *bad, uint64_t bad_cap,
		  void (*progress)(void *ctx, uint64_t done, uint64_t total),
		  void *ctx);
/*
 * Does logical block lie in a stripe a scrub of this assembly found whose
 * parity disagrees with data that verifies (which block is wrong cannot
 * be told: an old or misdirected write on one member, with its table
 * entry, reads as good)?  A repair above the array must not build on such
 * a block: the other reading, from parity, may be the right one.
 */
bool rc_block_suspect(struct rc_array *a, uint64_t block);
/* The suspect stripes scrubbed again, repairing nothing: those that agree
 * with themselves now (a repair above the array made them whole:
 * rc_block_reconsider) are suspect no more.  The rows that still
 * disagree; UINT64_MAX when every block is suspect (too many to list). */
uint64_t rc_suspect_recheck(struct rc_array *a);

/* Scrubs stripes [first, first + count) (rc_info stripes), repairing when
 * asked; *rep counts those stripes alone.  Each stripe is handled under
 * its lock, so it runs while the array serves: an online scrub is a loop
 * over ranges (the daemon's, stoppable between them). */
int rc_scrub_stripes(struct rc_array *a, uint64_t first, uint64_t count,
		     bool repair, struct rc_scrub_report *rep);
/* The same with buffers the caller keeps from range to range
 * (rc_scrub_bufs_new; freed by rc_scrub_bufs_free, NULL too): a fresh set
 * per range is an mmap, a page fault on each page and an munmap, each
 * time (about 12 ms a range of 64 stripes at RAID 5 of 5: the online
 * scrub of an empty 1.2 GiB array took 0.9 s).  One set per thread. */
struct rc_scrub_bufs;
int rc_scrub_bufs_new(struct rc_array *a, struct rc_scrub_bufs **out);
void rc_scrub_bufs_free(struct rc_scrub_bufs *b);
/* The same with buffers of one's own.  Meant for a scrub of the whole
 * array range by range: one that goes from stripe 0 to the last in order,
 * repairing, without an error, verifies the members found damaged before
 * it set out (rc_info.verify_slots); rc_scrub_stripes does not count. */
int rc_scrub_stripes_bufs(struct rc_array *a, struct rc_scrub_bufs *b,
			  uint64_t first, uint64_t count, bool repair,
			  struct rc_scrub_report *rep);

const char *rc_level_name(enum rc_level level);
/* "active", "faulty", "missing", "rebuilding", "spare", "empty" */
const char *rc_member_state_name(enum rc_member_state s);

/* Where raidcore's messages go (default: stderr).  level is syslog's. */
void rc_set_logger(void (*fn)(int level, const char *msg));

/*
 * A member with more than errors read or checksum errors within a minute is
 * marked faulty (unless the array cannot run without it), as ZFS faults a
 * vdev with too many checksum errors.  An error whose block was rewritten
 * and read back as written is corrected and no longer counts.  Default 32;
 * 0: never (fsck, which repairs in place).
 */
void rc_array_set_fault_errors(struct rc_array *a, uint32_t errors);
/*
 * A fault for errors waits a second after the count passed the threshold
 * (for the corrections of rows being repaired): this waits out what is
 * pending and applies it, so that a scrub's verdict includes the members
 * its errors faulted.  Call with no lock held.
 */
void rc_array_settle_faults(struct rc_array *a);

/*
 * How often the recovery thread (rc_array_start_recovery) re-reads every
 * member's superblock to check that the member is still the device it
 * wrote to (not an old image copied over it, a device that drops writes,
 * another disk behind the same name): default 10000 ms; 0: never.
 */
void rc_array_set_health_interval(struct rc_array *a, uint32_t ms);

/* Dirty data the stripe cache may hold before it writes back (bytes). */
void rc_array_set_cache(struct rc_array *a, uint64_t bytes);
/* background: the cache is written back by a thread of the array's own
 * from half its limit on, while rc_write goes on (a writer still commits
 * itself past the whole limit); otherwise (the default) by the writer
 * that fills it.  Durability is rc_flush's either way. */
void rc_array_set_writeback(struct rc_array *a, bool background);

#endif
