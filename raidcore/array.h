/*
 * array: raidcore's internal state, shared by every file of raidcore/; the
 * functions each file offers the others, declared below in the order of
 * the files, bottom up (a file calls only files declared before it; see
 * docs/DESIGN.md "raidcore", Files).
 *
 * Lock order (take left before right, never the reverse):
 *
 *   commit_lock -> slots_lock -> stripe locks (ascending stripe number)
 *               -> state_lock -> wi.lock -> cache_lock -> csum_lock
 *
 * and the leaves, taken last and holding nothing else: pool_lock (stripe
 * buffers), each member worker's lock (io.c), each device's own locks,
 * event_lock (event.c: held around the event handler, which takes no
 * raidcore lock).
 * Every lock is declared below with what it guards.
 */
#ifndef RC_ARRAY_H
#define RC_ARRAY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "hcache.h"
#include "raidcore.h"
#include "geom.h"
#include "ondisk.h"
#include "parity.h"

struct rc_worker;

/*
 * Does a device's superblock say it left its slot in the middle of a full
 * rebuild onto it (its own slot REBUILDING, not a catch-up)?  Everything
 * past the rebuild's position is unwritten; the write-intent record covers
 * only what changed while it was away, so a catch-up would call the slot
 * in sync with most of it never rebuilt (assemble.c, manage.c readd_slot).
 */
static inline bool rc_sb_rebuild_unfinished(const struct rc_sb *sb)
{
	return sb->role < RC_SB_SLOTS &&
	       sb->slots[sb->role].state == RC_MEMBER_REBUILDING &&
	       !(sb->slots[sb->role].flags & RC_SLOT_CATCHUP);
}

/*
 * Blocks a copy wrote (a rebuild onto its slot's device, an online
 * replacement onto the new one): a uniform sample of at most RC_SAMPLES
 * of them (reservoir sampling), what the copy's read-back checks
 * (rc_csum_verify_blocks).  Samples spread over the whole device found
 * almost nothing written on a mostly empty array, and a spare that
 * dropped writes was said in sync (a tester's find, U5 D4).  Only the
 * copy's thread touches it.
 */
#define RC_SAMPLES 256
struct rc_sample {
	uint64_t mb[RC_SAMPLES];        /* data-region blocks */
	uint64_t offered;
	uint64_t rng;
};

static inline void rc_sample_offer(struct rc_sample *s, uint64_t mb)
{
	uint64_t j;

	if (s->offered < RC_SAMPLES) {
		s->mb[s->offered++] = mb;
		return;
	}
	s->rng = s->rng * 6364136223846793005ull + 1442695040888963407ull;
	j = (s->rng >> 11) % ++s->offered;
	if (j < RC_SAMPLES)
		s->mb[j] = mb;
}

struct rc_member {
	struct rc_dev *dev;             /* NULL when missing; changed under
					   state_lock (__atomic stores), read
					   by io.c under an I/O hold */
	enum rc_member_state state;     /* state_lock */
	uint8_t uuid[RC_UUID_SIZE];
	uint8_t verify_uuid[RC_UUID_SIZE]; /* the member found damaged
					     (rc_verify_want; state_lock) */
	uint64_t rebuild_pos;           /* stripes current on a REBUILDING
					   member; state_lock */
	struct rc_sample sample;        /* what its rebuild wrote, sampled */
	char stop_why[200];             /* why its rebuild stopped, if the
					   rebuild's own check stopped it */
	uint64_t jhead;                 /* next free ring block */
	uint64_t jtail;                 /* ring block of the first live record */
	uint64_t jused;                 /* ring blocks in use since the tail */
	struct rc_worker *worker;
	/* Counted over the device's life (kept in its superblock). */
	atomic_uint_fast64_t read_errors, write_errors, csum_errors, repaired;
	/* io.c: errors in the current window (rc_member_note_error), and
	 * verdicts waiting for rc_member_faults_apply (fail.c) to act on
	 * them: RC_PEND_* bits, set lock-free by whoever finds the member
	 * lying - too many errors, a smaller size (shrunk, and shrunk_to in
	 * bytes, from rc_io_size_check), a superblock that is not the one last written
	 * (lie says how, under state_lock). */
	atomic_uint_fast64_t err_window_start_ns;
	atomic_uint err_window_count;
	atomic_uint_fast64_t err_over_ns;  /* when the count passed the
					    * threshold (0: it has not) */
	atomic_uint_fast64_t corrected_ns; /* the last correction (0: none) */
	atomic_bool errors_kept_said;   /* "kept despite its errors" logged */
	atomic_bool kept_for_redundancy; /* kept as the last redundancy
					    (fail.c): a spare replaces it
					    online (recovery.c) */
	atomic_uint_fast64_t kept_until_ns; /* kept: asked again after */
	atomic_uint fault_pending;
	atomic_bool shrunk;
	atomic_uint_fast64_t shrunk_to;
	char lie[160];
	/* super.c: events of the last superblock written to it (state_lock);
	 * 0 before the first. */
	uint64_t sb_events;
	/* commit.c: the last checksum table block ([0]) and the last data
	 * block ([1]) a commit wrote in place (member block, rc_block_csum
	 * of what was written, the device it went to: NULL for none;
	 * commit_lock), read back by the next checkpoint
	 * (rc_member_writes_check, fail.c). */
	uint64_t wcheck_block[2], wcheck_sum[2];
	struct rc_dev *wcheck_dev[2];
	/* wi.c: REBUILDING as a catch-up (only the regions the write-intent
	 * record names; state_lock), and what the last catch-up rebuilt
	 * (commit_lock). */
	bool catchup;
	bool stale_copy;                /* assembly: a device given for the
					   slot was an old copy (stale_leave) */
	uint64_t resync_stripes, resync_regions, resync_last_region;
	/* fail.c: faulted for what it held, not by request: it returns only
	 * by a full rebuild (RC_SLOT_DAMAGED; state_lock) */
	bool damaged;
	/* manage.c: its member was removed by request: a device comes back
	 * only by request (RC_SLOT_REMOVED; state_lock) */
	bool removed;
	/* assemble.c: kept one superblock update behind the others, as a
	 * torn update leaves the last slots; replay.c holds it to its
	 * journal (an old copy lacks records the others name it in) */
	bool one_behind;
	/* log.c: messages about this member in the current second */
	atomic_uint_fast64_t log_second;
	atomic_uint log_count, log_dropped;
	/* "kept; its data is suspect" said (fail.c, super.c): once, until
	 * rc_array_clear_errors, not at every flush that finds it again */
	atomic_bool suspect_said;
	/* io.c: I/O in flight on dev, counted in the epoch it began in; a
	 * device taken out of its slot is closed only once the epoch before
	 * its removal has drained (rc_member_dev_retire). */
	atomic_uint io_epoch;
	atomic_uint io_holds[2];
	/* io.c: how long its last flush took (ns; UINT64_MAX before the
	 * first), so that flushes that return at once are not handed to
	 * the workers (rc_io_sync_all). */
	atomic_uint_fast64_t sync_ns;
	/* io.c: how long its reads wait, beyond copying what they read (a
	 * moving average, ns): a member whose reads wait gets its share of
	 * a batch on its worker (tasks_wait). */
	atomic_uint_fast64_t read_wait_ns;
	/* the same for its writes (beyond copying into the page cache) */
	atomic_uint_fast64_t write_wait_ns;
};

/* commit.c: the dropped writes an array remembers (rc_write_failed) */
#define RC_WDROP_KEEP 64

/* A cached stripe: its lock and, while dirty, its new data. */
struct rc_stripe {
	struct hc_node node;            /* in a->stab, key: stripe */
	uint64_t stripe;
	struct rc_stripe *dnext;        /* dirty list */
	uint32_t refs;                  /* holders and waiters */
	bool locked;
	bool dirty_listed;
	atomic_uint ndirty;             /* dirty data blocks; read as a hint
					   under cache_lock */
	uint8_t *data;                  /* stripe_blocks blocks, column-major */
	uint64_t *dirty;                /* bitmap over stripe_blocks */
	bool stale;                     /* some dirty block was written
					   without RC_WRITE_FRESH: its old
					   contents may be live */
};

struct rc_csum_cache;

/*
 * The write-intent record in memory (wi.c; docs/DESIGN.md "Catch-up of a
 * returning member").  Bit r of a bitmap: region r (region_stripes
 * stripes from r * region_stripes) was written.  pending: since the last
 * checkpoint (what a member that leaves now may have lost unflushed);
 * bits: the record, kept while recording (some slot not current) and
 * written to the active members' bitmap blocks before the writes it
 * covers go out; dirty: bitmap blocks changed since.  All under lock.
 */
struct rc_wi {
	pthread_mutex_t lock;
	uint64_t region_stripes, nregions;
	uint64_t *pending, *bits;
	uint32_t dirty;                 /* bit i: bitmap block i */
	bool recording;
	bool loaded;                    /* the template's record was read
					   back whole at assembly */
};

/*
 * replace.c: an online replacement (md's --replace): dst, a device with
 * no slot, is filled with slot's column while slot's device (src) keeps
 * serving; at the end dst takes the slot.  pos: stripes current on dst.
 * Every write io.c makes to src in the data region below pos goes to dst
 * too (rc_io_member_write, under src's I/O hold), so what is copied stays
 * current; the copy of stripe s runs under commit_lock and s's lock,
 * which exclude every writer of s, and pos moves past s before the lock
 * goes.  dst is set and cleared (atomic stores) under commit_lock and
 * state_lock; src, slot, uuid do not change while dst is set; io.c reads
 * dst, src and pos lock-free.  A cleared dst may still be written by a
 * mirror in flight: rc_io_drain(slot) waits those out.  src is cleared
 * (atomically) when its device leaves the slot (rc_member_dev_retire),
 * so it never names another device.  Never more than one at a time.
 */
struct rc_replace {
	struct rc_dev *dst;             /* NULL: no replacement */
	struct rc_dev *src;
	int slot;
	uint8_t uuid[RC_UUID_SIZE];     /* dst's member uuid (a spare's entry) */
	atomic_uint_fast64_t pos;
	atomic_bool failed;             /* a write to dst failed */
	atomic_bool cancel;             /* rc_replace_cancel: stop, drop dst */
	struct rc_sample sample;        /* what the copy wrote, sampled */
	/* RC_EV_REPLACE_STARTED emitted for this replacement: by the request
	 * (rc_member_replace_online), or, resumed at assembly, by the copy's
	 * first run - once either way. */
	atomic_bool announced;
	/* While the swap writes dst's checksum table: bit i set when slot's
	 * table block i changes (rc_csum_update); csum_lock. */
	uint64_t *touched;
};

/* arena.c: scratch memory handed out in pieces and taken back at once. */
struct rc_arena {
	struct rc_arena_chunk {
		uint8_t *base;
		size_t size, used;
	} *c;
	uint32_t n, cur;        /* chunks; the one being filled */
};

void *rc_arena_alloc(struct rc_arena *ar, size_t bytes);
/* Takes every piece back; keeps at most keep bytes of chunks. */
void rc_arena_reset(struct rc_arena *ar, size_t keep);
void rc_arena_fini(struct rc_arena *ar);

struct rc_array {
	struct rc_geom g;
	struct rc_sb sb;                /* template: the newest superblock */
	struct rc_member m[RC_MAX_MEMBERS];
	struct rc_dev *spare[RC_MAX_SPARES];
	struct rc_sb spare_sb[RC_MAX_SPARES];
	int nspares;
	/* member uuids of devices left out as a split brain's other side
	 * (assemble.c cand_diverged); set at assembly only */
	uint8_t split[RC_MAX_MEMBERS][RC_UUID_SIZE];
	int nsplit;
	const struct rc_parity_ops *par;
	uint32_t ndata, nred;           /* data columns, redundancy */
	uint32_t stripe_blocks;
	uint64_t stripes;
	bool rdonly;
	bool was_unclean;
	uint64_t journal_lost;          /* replay.c: rc_info's */
	/* assemble.c: the member replay found stale although one update
	 * behind (rc_journal_replay's -ESTALE), and the uuids assembly then
	 * leaves out as stale */
	int stale_slot;
	const uint8_t (*stale_uuid)[RC_UUID_SIZE];
	int nstale;
	uint64_t replayed_txns;

	/* First in the lock order: serialises commits, checkpoints, rebuild
	 * batches and superblock writes that move the journal.  Taken before
	 * any stripe lock (rc_stripe_lock, stripe.c, the second).  Taken
	 * with rc_commit_lock, which counts the threads waiting for it in
	 * commit_waiting: a rebuild holds it past its shortest batch only
	 * while nobody does (rebuild.c). */
	pthread_mutex_t commit_lock;
	/* After commit_lock, before the stripe locks: taken to write
	 * (rc_slots_wrlock) where a slot's device is swapped at run time (a
	 * spare or a re-added member taking the slot, an online
	 * replacement's swap, a faulty device removed), to read by a scrub
	 * batch from its loads to its repairs, so that what it read, the
	 * checksum entries it judges them by and the device a repair goes
	 * to are one device's (a member that vanished in a scrub, a spare
	 * taking its slot meanwhile: the scrub judged the spare's blank
	 * blocks by their blank tables, called 1008 blocks lost, and faulted
	 * the spare for the vanished one's failed write, a tester's find).
	 * Writer-preferring. */
	pthread_rwlock_t slots_lock;
	atomic_uint commit_waiting;
	/* Alone, never with another lock held: one device retirement at a
	 * time (rc_member_dev_retire, io.c). */
	pthread_mutex_t retire_lock;
	/* After the stripe locks: member states, the superblock template and
	 * its events.  state_cond is signalled after a member changed state
	 * (rc_member_state_changed, member.c); state_changes counts those
	 * signals. */
	pthread_mutex_t state_lock;
	pthread_cond_t state_cond;
	uint64_t state_changes;

	/* Under state_lock: members found damaged and not yet verified by a
	 * repairing scrub over the whole array (rc_info.verify_slots;
	 * member.c rc_verify_want), what was found, and the scrub pass that
	 * set out from stripe 0 to verify verify_pass, now at verify_next
	 * (scrub.c); verify_gen counts the members newly found so. */
	uint32_t verify_slots, verify_pass;
	uint64_t verify_next, verify_gen;
	char verify_why[160];

	/* After state_lock: the stripe table (hash, dirty list) and the
	 * entries' lock flags, with waiters on cache_cond. */
	pthread_mutex_t cache_lock;
	pthread_cond_t cache_cond;
	struct hcache stab;             /* struct rc_stripe by stripe number */
	struct rc_stripe *dirty_head;   /* stripes with dirty data */
	/* Free stripe data buffers, reused: allocating and freeing them (they
	 * are large, so malloc maps and unmaps them) costs page faults on
	 * every stripe.  As many as max_dirty_stripes (rc_stripe_pool_limit).
	 * pool_lock is a leaf. */
	pthread_mutex_t pool_lock;
	void **pool;
	uint32_t npool, pool_max;
	/* The commit's scratch buffers (arena.c, commit_lock). */
	struct rc_arena commit_arena;
	/* Journal record buffers, reused by every commit (commit_lock). */
	uint8_t **jbuf;
	size_t *jbuf_cap;
	uint32_t njbuf;
	atomic_uint ndirty_stripes;     /* read without cache_lock as a hint */
	uint32_t max_dirty_stripes;

	struct rc_wi wi;

	/* Last: the checksum table cache. */
	pthread_mutex_t csum_lock;
	struct rc_csum_cache *cc;

	uint64_t jseq;                  /* last committed transaction */
	uint64_t jcheckpoint;           /* last checkpointed transaction */
	uint64_t journal_blocks;
	/* assemble.c: a member was kept one update behind (a superblock
	 * round a crash cut short): the next round completes that one, at
	 * its events, instead of starting another (super.c
	 * rc_sb_write_all; state_lock). */
	bool sb_torn;
	/* Direct stripes were written in place since the last flush of every
	 * member (commit_lock): rc_flush flushes once more. */
	bool direct_unsynced;
	uint64_t direct_stripes;        /* written so (statistics) */
	/* Writes dropped at their commit (rc_write_failures): how many
	 * ranges so far (atomic, written under commit_lock), and the last
	 * RC_WDROP_KEEP of them (commit_lock): range i is at i %
	 * RC_WDROP_KEEP. */
	atomic_uint_fast64_t wdrop_n;
	struct { uint64_t block, count; } wdrop[RC_WDROP_KEEP];

	/* Replayed journal blocks of an unclean journal, until the first
	 * write puts them in place (activate.c; a read-only array keeps them
	 * to the end): member reads see them instead of the media.  Built
	 * before the array is shared; overlay_lock (a leaf) lets activation
	 * drop it under readers, who look only while overlay_live. */
	struct rc_overlay *overlay;
	pthread_rwlock_t overlay_lock;
	atomic_bool overlay_live;
	/* activate.c: a read-write array writes nothing until it is first
	 * used for writing; io.c refuses writes until writable, and active
	 * says the activation (replay in place, first checkpoint) is done. */
	atomic_bool writable;
	atomic_bool active;

	atomic_uint_fast64_t unrecoverable;
	/* fail.c: a member the array cannot run without failed an I/O; it
	 * was not recorded faulty, and from then on nothing is read or
	 * written (rc_array_suspend_locked).  suspend_slot and suspend_why
	 * are set once, under state_lock, before suspended turns true. */
	atomic_bool suspended;
	int suspend_slot;
	char suspend_why[160];
	atomic_uint_fast64_t tables_rewritten; /* unreadable table blocks
					   written again, not yet in a scrub's
					   report (rc_csum_rewrite_done) */
	atomic_uint_fast64_t tables_credit_queued; /* read_fixed blocks not
					   yet taken by a commit */
	atomic_uint_fast64_t tables_unreadable; /* table blocks found
					   unreadable, not yet in a scrub's
					   report (csum.c) */
	atomic_bool errors_seen;        /* RC_AF_ERRORS from the next superblock
					   write on */
	atomic_bool tables_to_heal;     /* csum.c found table blocks failing
					   their seal: heal.c has work */
	uint32_t fault_errors;          /* member.c: errors within the window
					   that fault a member; 0: never */
	uint8_t *zero;                  /* one zero chunk */

	/* writeback.c: the stripe cache's writeback thread, when asked for
	 * (rc_array_set_writeback); lock is a leaf, cond wakes the thread. */
	struct rc_writeback {
		pthread_mutex_t lock;
		pthread_cond_t cond;
		pthread_t thread;
		bool enabled, started, stop, kicked;
	} wb;

	/* recovery.c: the thread waits on state_cond (CLOCK_MONOTONIC) with
	 * a timeout; recovery_stop is guarded by state_lock.  Every
	 * health_interval_ns (0: never) it re-reads every member's
	 * superblock (super.c, rc_sb_check_members). */
	pthread_t recovery_thread;
	bool recovery_running, recovery_stop;
	atomic_bool rebuild_abort;      /* set at close: stop between batches */
	uint64_t health_interval_ns;

	/* scrub.c: stripes a scrub found whose redundancy disagrees with
	 * data that verifies (rc_block_suspect), ascending, at most
	 * RC_SUSPECT_MAX (past that every block is suspect); under
	 * suspect_lock, a leaf. */
	pthread_mutex_t suspect_lock;
	uint64_t *suspect;
	uint32_t nsuspect;
	bool suspect_all;

	/* event.c: the event handler, called under event_lock (a leaf:
	 * taken under any lock, the handler takes none of ours). */
	pthread_mutex_t event_lock;
	void (*event_fn)(void *ctx, const struct rc_event *ev);
	void *event_ctx;
	/* verify.c: rc_array_set_vouch's (set before the array is shared) */
	enum rc_vouch (*vouch_fn)(void *ctx, uint64_t block, const void *data);
	void *vouch_ctx;
	/* rebuild.c: speed limits (KiB/s, 0: none) and when the array last
	 * served I/O (rc_read, rc_write: ns on the monotonic clock). */
	atomic_uint_fast64_t rebuild_min_kib, rebuild_max_kib;
	atomic_uint_fast64_t last_io_ns;
	struct rc_replace repl;
};

/* commit_lock, counted in commit_waiting while it is waited for. */
static inline void rc_commit_lock(struct rc_array *a)
{
	atomic_fetch_add(&a->commit_waiting, 1);
	pthread_mutex_lock(&a->commit_lock);
	atomic_fetch_sub(&a->commit_waiting, 1);
}

/* ---- log.c: messages and the names they use ---- */
void rc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rc_log_level(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* One event about a block of slot (member block mblock, absolute), named
 * with the member; at most RC_LOG_PER_SECOND such lines a second per
 * member, the rest counted and summed up on the next line.  Lock-free. */
void rc_log_block(struct rc_array *a, int slot, uint64_t mblock,
		  const char *what);

/* ---- event.c: events to the handler (rc_array_set_event_handler) ---- */
/* Lock-free for the caller (event_lock is a leaf): callable under any
 * lock.  dev and why may be NULL. */
void rc_event_emit(struct rc_array *a, enum rc_event_kind kind, int slot,
		   const char *dev, const char *why, uint64_t done,
		   uint64_t total, int err);

/* ---- io.c (rc_member_note_error), member.c: member states ---- */
enum rc_err_kind { RC_ERR_READ, RC_ERR_WRITE, RC_ERR_CSUM };
/*
 * A read error or checksum mismatch on slot: the array now has errors to
 * report (RC_AF_ERRORS), and a member with more than a->fault_errors of
 * them within RC_FAULT_WINDOW_NS gets a pending fault, which
 * rc_member_faults_apply() (called where no lock is held) carries out, as
 * ZFS faults a vdev with too many checksum errors.  Lock-free: callable
 * under any lock.
 */
void rc_member_note_error(struct rc_array *a, int slot, enum rc_err_kind kind);
/*
 * One of slot's errors was corrected: its block was rewritten and read
 * back as written (a pending sector the disk reallocated on the write, a
 * range a crash or an old copy left behind).  It no longer counts towards
 * the fault, as md's "read error corrected": what a scrub repairs does not
 * cost the array the member it repaired.  A member that goes on returning
 * what was not written (the read-back differs) is never credited.
 */
void rc_member_note_corrected(struct rc_array *a, int slot);
/* A new device in m's slot: the errors counted towards a fault, and what
 * was decided about them, were the old one's. */
void rc_member_errors_forget(struct rc_member *m);
/* The error counts shown for m's device (and kept in its superblock):
 * those its superblock sb recorded, or 0 (sb NULL) for a new device, as
 * md's for a new device. */
void rc_member_counts_load(struct rc_member *m, const struct rc_sb *sb);
#define RC_FAULT_ERRORS_DEFAULT 32
#define RC_HEALTH_INTERVAL_MS 10000     /* superblocks re-read (recovery.c) */
#define RC_FAULT_WINDOW_NS (60ull * 1000000000ull)
/* A fault for too many errors waits this long after the count passed the
 * threshold and after the member's last correction: while repairs of
 * blocks already counted still come in (a slow disk, many readers), the
 * count is not the verdict.  At most RC_FAULT_WINDOW_NS. */
#define RC_FAULT_SETTLE_NS (1000ull * 1000000ull)
/* Why a member's fault is pending (rc_member.fault_pending). */
enum {
	RC_PEND_ERRORS = 1u << 0,       /* too many errors in the window */
	RC_PEND_SHRUNK = 1u << 1,       /* smaller than when it was opened */
	RC_PEND_IDENTITY = 1u << 2,     /* its superblock is not ours */
	RC_PEND_UNHELD = 1u << 3,       /* a repaired block (or a block a
					   checkpoint read back) read back other
					   than written: it does not keep
					   what is written (verify.c) */
};
/* Wakes the recovery thread without state_lock (lock-free callers): it
 * looks at pending faults and the errors flag. */
void rc_member_nudge(struct rc_array *a);
/* Has a device and is active or rebuilding: it is written to. */
bool rc_member_present(struct rc_array *a, int slot);
/* Holds current data of stripe (active, or rebuilt past it). */
bool rc_member_usable(struct rc_array *a, int slot, uint64_t stripe);
/* More slots unusable than the level tolerates, or suspended. */
bool rc_array_failed(struct rc_array *a);
/* Suspended (fail.c): nothing more is read or written. */
bool rc_array_suspended(struct rc_array *a);
/* Caller holds state_lock.  slot failed an I/O (why): when the array
 * cannot run without it, the array is suspended instead of the member
 * recorded faulty, and true is returned (true too when it already was
 * suspended: nothing is recorded then either). */
bool rc_array_suspend_locked(struct rc_array *a, int slot, const char *why);
/* Would the array lose data with the slots in gone[] gone? */
bool rc_array_would_fail(struct rc_array *a, const bool *gone);
/* Would it lose data without slot?  Only an active slot counts as holding
 * everything: a rebuilding one holds only what its rebuild reached, so
 * it is gone for the stripes past it (counted present, a survivor was
 * faulted for a read error during a rebuild and an administrator's
 * second fail went through: the array failed).  Caller holds
 * state_lock. */
bool rc_array_needs(struct rc_array *a, int slot);
/* The same, with the members found damaged and not yet verified
 * (verify_slots) counted gone too.  Caller holds state_lock. */
bool rc_array_needs_unverified(struct rc_array *a, int slot);
/* Slot was found damaged (why): recorded in verify_slots until a
 * repairing scrub goes over the whole array; told (RC_EV_VERIFY) when
 * newly so, or when found so again while a pass verifies it (it starts
 * over).  Caller holds state_lock. */
void rc_verify_want(struct rc_array *a, int slot, const char *why);
/* verify_slots without the members that left their slot since they were
 * found damaged (faulty, missing, another member rebuilt in).  Caller
 * holds state_lock. */
void rc_verify_prune(struct rc_array *a);
/* The same, counting a rebuilding slot as usable (it is, up to its
 * position): true when rebuilding cannot help any more. */
bool rc_array_failed_beyond(struct rc_array *a);
/* Wakes the recovery thread for work that is no state change (a table
 * block to heal); takes state_lock, so call it holding no lock. */
void rc_member_wake(struct rc_array *a);
/* A member changed state: wakes the waiters on state_cond (the recovery
 * thread).  Caller does not hold state_lock. */
void rc_member_state_changed(struct rc_array *a);

/* ---- io.c: every member read, write and flush of an assembled array ---- */
/* CLOCK_MONOTONIC in ns: error windows, the recovery thread's timers. */
uint64_t rc_mono_ns(void);
struct rc_io {
	int member;
	bool write;
	void *buf;
	const struct iovec *iov;        /* a read into iovcnt buffers instead
					   of buf (count blocks in all) */
	int iovcnt;
	uint64_t block;                 /* absolute member block */
	uint32_t count;
	bool retried;                   /* the caller reads a failed read
					   again, block by block: only the
					   retries count as errors */
	int err;
};
int rc_io_member_read(struct rc_array *a, int slot, uint64_t block,
		      uint32_t count, void *buf);
/* The slot's device now is smaller than at open: a shrink verdict found
 * earlier still holds (it may have been about a device since replaced). */
bool rc_io_still_shrunk(struct rc_array *a, int slot);
/* old was just taken out of slot (its dev now another device or NULL,
 * stored under state_lock): waits, with no lock held, until no I/O that
 * may still use old is in flight, then closes it. */
void rc_member_dev_retire(struct rc_array *a, int slot, struct rc_dev *old);
/* The same, for a read the caller reads again (block by block) if it
 * fails: only the retries count (one bad sector is one read error, not
 * two). */
int rc_io_member_read_run(struct rc_array *a, int slot, uint64_t block,
			  uint32_t count, void *buf);
int rc_io_member_write(struct rc_array *a, int slot, uint64_t block,
		       uint32_t count, const void *buf);
int rc_io_member_sync(struct rc_array *a, int slot);
/* Waits, holding no lock, until no I/O begun on slot before the call is
 * in flight (a mirror write to a replacement just cleared among them). */
void rc_io_drain(struct rc_array *a, int slot);
/* Runs every request, members in parallel; sets each io->err. */
void rc_io_run(struct rc_array *a, struct rc_io *io, int n);
/* rc_io_run in two halves: rc_io_submit queues every request on its
 * member's worker and returns at once, rc_io_wait waits for them all
 * (and frees the batch).  io[] and the buffers stay the workers' between
 * the two.  Out of memory: every io->err is -ENOMEM, the batch NULL. */
struct rc_io_batch;
struct rc_io_batch *rc_io_submit(struct rc_array *a, struct rc_io *io, int n);
void rc_io_wait(struct rc_io_batch *ib);
/* fdatasync of every present member in parallel; -EIO when some failed,
 * their slots in the bitmask *failed.  Faulting them is the caller's. */
int rc_io_sync_all(struct rc_array *a, uint32_t *failed);
/* Devices of the array that hold no slot: spares, and a replacement before
 * it takes its slot.  The write guard applies; no member counts. */
int rc_io_unplaced_write(struct rc_array *a, struct rc_dev *dev,
			 uint64_t block, uint32_t count, const void *buf);
int rc_io_unplaced_sync(struct rc_array *a, struct rc_dev *dev);
int rc_io_start(struct rc_array *a);
void rc_io_stop(struct rc_array *a);
/* May the array write now (not read-only, and activated)?  Read-path
 * repairs and superblock writes wait until it may. */
bool rc_io_may_write(struct rc_array *a);
/* The device of slot is smaller than it was at open: shrunk_to and a
 * pending RC_PEND_SHRUNK fault are set, and true returned.  Lock-free;
 * called on every member I/O error, at checkpoints and by the recovery
 * thread. */
bool rc_io_size_check(struct rc_array *a, int slot);
/* "it shrank from A to B blocks": slot's device at open, and shrunk_to. */
void rc_io_shrunk_why(struct rc_array *a, int slot, char *msg, size_t len);
/* Is dev the replacement target, and has it shrunk since it was given
 * (an image truncated: what was copied is gone)?  Then the replacement
 * has failed (repl.failed, logged once).  Checked before every write to
 * it, so a write cannot grow a truncated image back unnoticed. */
bool rc_io_repl_shrunk(struct rc_array *a, struct rc_dev *dev);
/* The overlay of replayed blocks (built before the array is shared);
 * an rc_block_put, ctx unused. */
int rc_overlay_put(struct rc_array *a, void *ctx, int slot, uint64_t block,
		   const void *data);
/* Drops block of slot from the overlay, if there (replay, alone): the
 * media's block serves again. */
void rc_overlay_drop(struct rc_array *a, int slot, uint64_t block);
/* Writes every overlay block in place (activation), the slots whose
 * writes failed in *failed; the overlay stays until rc_overlay_free. */
void rc_overlay_write_back(struct rc_array *a, uint32_t *failed);
/* Drops the overlay; safe against concurrent member reads. */
void rc_overlay_free(struct rc_array *a);
/* Calls fn for every block in the overlay (slot, absolute block). */
void rc_overlay_each(struct rc_array *a,
		     void (*fn)(struct rc_array *a, int slot, uint64_t block));

/* ---- wi.c: the write-intent record ---- */
/* Geometry and buffers (from a->sb and a->g), then the template's record
 * read back from the active members' devices (before the array runs:
 * straight from them): a record not read back whole is dropped - nobody
 * is covered, and a new one starts at the next superblock write. */
int rc_wi_init(struct rc_array *a);
void rc_wi_fini(struct rc_array *a);
/* Does the record cover a former member whose superblock is sb (its
 * events at or after the record's base, behind the template, and not of
 * another history)? */
bool rc_wi_covers(struct rc_array *a, const struct rc_sb *sb);
/* Was sb, a former member's superblock, written after the record's base
 * (beyond the update that started it) without the record?  Every update
 * of this history since then carries the record's epoch: sb's history
 * went on apart - a copy of the array mounted on its own, whose member
 * a catch-up took for current and mixed in (a tester's find, V1). */
bool rc_wi_other_history(struct rc_array *a, const struct rc_sb *sb);
/* Does member block tb of dev (a checksum table block) read and seal for
 * the member member_uuid of array array_uuid?  blk: a block of scratch.
 * Reads dev directly, outside the array (assembly, probing). */
bool rc_table_block_read_ok(struct rc_dev *dev, const uint8_t *array_uuid,
			    const uint8_t *member_uuid, uint64_t tb,
			    uint8_t *blk);
/* Before dev, slot's former member whose superblock is sb, catches up:
 * do its checksum table blocks that cover the regions the record has
 * written pass their seals?  A catch-up writes only those regions and
 * leaves a table block it cannot complete (entries of other blocks it
 * does not know) as it found it, so its read-back then finds the blocks
 * it wrote unsealed and faults a healthy device as one that drops writes
 * (a tester's find, x3).  A device with such damage is rebuilt in full;
 * logs which block.  Reads, taking no lock but wi.lock for moments. */
bool rc_wi_tables_whole(struct rc_array *a, int slot, struct rc_dev *dev,
			const struct rc_sb *sb);
/* Stripe s is written (a commit, a discard, a replayed block): pending,
 * and the record while recording.  Caller holds commit_lock (or the array
 * is not shared yet). */
void rc_wi_note(struct rc_array *a, uint64_t s);
/* Before the covered writes go out: writes the changed bitmap blocks to
 * every active member and flushes them.  -EIO when no member took them.
 * Caller holds commit_lock (and maybe stripe locks), not state_lock. */
int rc_wi_flush(struct rc_array *a);
/* A checkpoint flushed every member: pending starts over. */
void rc_wi_checkpointed(struct rc_array *a);
/* The blocks an unclean journal's replay put in the overlay are writes
 * since the last checkpoint: pending (activation, before they go in
 * place). */
void rc_wi_note_overlay(struct rc_array *a);
/* Caller holds state_lock, before a superblock write: starts the record
 * when some slot is not current (pending in it, written out first; base:
 * the events before this write) and ends it when every slot is; sets the
 * template's header and slot flags. */
void rc_wi_sb_prepare(struct rc_array *a, uint64_t base);
/* Caller holds state_lock, and slots_lock to write (or the array is not
 * shared yet), slot has no device, and rc_wi_covers(a, sb): dev, the
 * slot's former member whose
 * superblock is sb, takes the slot back, REBUILDING as a catch-up.  The
 * caller drops the slot's cached tables (rc_csum_drop_slot). */
void rc_member_catchup_begin(struct rc_array *a, int slot,
			     struct rc_dev *dev, const struct rc_sb *sb);
/* Caller holds commit_lock: must a catch-up of slot rebuild stripe s
 * (always, for a full rebuild)?  Counts what a catch-up rebuilds. */
bool rc_wi_rebuild_wants(struct rc_array *a, int slot, uint64_t s);
/* Where a rebuild batch of slot from s of at most per rebuilt stripes
 * ends: s + per for a full rebuild, past per stripes of written regions
 * for a catch-up. */
uint64_t rc_wi_batch_end(struct rc_array *a, int slot, uint64_t s,
			 uint64_t per);

/* ---- super.c: superblocks ---- */
uint64_t rc_time_ns(void);
/* Writes the four copies of sb through put (which writes one block and,
 * with sync, flushes): copy 0 flushed first, then the others, encoding
 * each copy into blk. */
int rc_sb_put_copies(struct rc_sb *sb, uint8_t *blk,
		     int (*put)(void *ctx, uint64_t block, const void *blk,
				bool sync),
		     void *ctx);
/* Rewrites every present member's and spare's superblock from the
 * template, events bumped, and reads copy 0 of each member back: a member
 * whose write fails, or whose copy does not come back as written, is
 * faulty (unless the array cannot run without it: then it is kept, and
 * said so).  Holds state_lock throughout; a caller that moved the journal
 * holds commit_lock (a checkpoint), one failing a member may hold stripe
 * locks.  Writes nothing before the array may write (rc_io_may_write). */
int rc_sb_write_all(struct rc_array *a);
/* Re-reads copy 0 of every present member and compares array uuid,
 * member uuid and events with the last superblock written to it: a
 * member whose copy is not that one, and none of whose other copies is
 * either, gets a pending identity fault (rc_member_faults_apply).  true
 * when some member's copy 0 was damaged while another copy still proves
 * it is ours: the superblocks want rewriting.  Takes state_lock. */
bool rc_sb_check_members(struct rc_array *a);
/* Before assembly (no array yet: straight from the device): the valid
 * copy with the higher events. */
int rc_sb_read_best(struct rc_dev *dev, struct rc_sb *best, const char **why);
/* Which of a device's four copies are not the best one (bit c: copy c). */
struct rc_sb_damage {
	uint8_t eio;            /* unreadable */
	uint8_t bad;            /* invalid (zeros, garbage, misplaced) */
	uint8_t old;            /* valid, with lower events than the best */
	uint8_t torn;           /* copies 1-3 one update behind copy 0, the
				   best: a write of them a crash cut short
				   (written copy 0 first, then the others) -
				   not damage, rewritten all the same */
};
/* rc_sb_read_best, saying which copies are damaged (assembly logs and
 * counts them; the first superblock write rewrites them). */
int rc_sb_read_copies(struct rc_dev *dev, struct rc_sb *best,
		      const char **why, struct rc_sb_damage *dmg);
/* Blocks a device needs to hold a member laid out as sb says (to take
 * its slot): the data region, and the two superblock copies after it. */
static inline uint64_t rc_sb_device_blocks_min(const struct rc_sb *sb)
{
	return sb->data_offset + sb->member_blocks + RC_SB_TAIL_BLOCKS;
}

/* ---- fail.c: a member fails ---- */
/* Faults the members with a pending fault (RC_PEND_*: errors, shrunk,
 * identity), unless the array could not run without them: those are
 * kept, loudly.  The caller holds neither state_lock nor any lock after
 * it (commit_lock and stripe locks are fine). */
void rc_member_faults_apply(struct rc_array *a);
/* Marks slot faulty, rewrites the superblocks, signals the change (or,
 * when the array cannot run without it, suspends the array: nothing is
 * recorded).  A member found shrunk is named so, whatever why says. */
void rc_member_set_faulty(struct rc_array *a, int slot, const char *why);
/* The same for a write that failed with err: why and what err says (a
 * member on a full filesystem is not a broken disk: ENOSPC named). */
void rc_member_set_faulty_err(struct rc_array *a, int slot, const char *why,
			      int err);
/* The same, by an administrator's request: the member's contents are not
 * in doubt, so it may come back as a catch-up. */
void rc_member_set_failed(struct rc_array *a, int slot, const char *why);
/* Reads back each member's last table block and last data block written
 * in place: a member that drops writes gets RC_PEND_UNHELD.  Caller holds
 * commit_lock, after a flush. */
void rc_member_writes_check(struct rc_array *a);
/* The flush barrier: rc_io_sync_all, members that fail it are faulty. */
int rc_member_sync_all(struct rc_array *a);

/* A slot's device swapped at run time: slots_lock to write, taken after
 * commit_lock and let go once the slot's cached tables are dropped too. */
static inline void rc_slots_wrlock(struct rc_array *a)
{
	pthread_rwlock_wrlock(&a->slots_lock);
}

/* A scrub batch: no slot changes device from its loads to its repairs. */
static inline void rc_slots_rdlock(struct rc_array *a)
{
	pthread_rwlock_rdlock(&a->slots_lock);
}

static inline void rc_slots_unlock(struct rc_array *a)
{
	pthread_rwlock_unlock(&a->slots_lock);
}

/* ---- csum.c: checksum tables ---- */
int rc_csum_init(struct rc_array *a);
void rc_csum_fini(struct rc_array *a);
/* What slot's table says of data-region block mblock: RC_ENTRY_SUM
 * (*csum set), RC_ENTRY_ZERO (never written), RC_ENTRY_UNKNOWN (its table
 * block failed its seal or could not be read), or -ENOMEM. */
enum { RC_ENTRY_SUM = 0, RC_ENTRY_ZERO = 1, RC_ENTRY_UNKNOWN = 2 };
/*
 * The read-back of a copy: the blocks sample holds (what it wrote to
 * slot's column), those its entries record as written, read from dev -
 * the slot's device after a rebuild, or the device a replacement copies
 * onto - and checked against the entries; with tables, the table block
 * of each on dev too (its seal, and the entry).  *seen counts the blocks
 * checked; returns how many did not read back (a read error counts).
 * What is on the media is read, not a cache: the caller has flushed the
 * copy.  blk: a block-sized buffer.  A device that returns zeros or
 * drops writes is caught here, not at the next member loss (replace.c
 * copy_verify, rebuild.c rebuild_readback).
 */
uint64_t rc_csum_verify_blocks(struct rc_array *a, int slot,
			       struct rc_dev *dev,
			       const struct rc_sample *sample, bool tables,
			       uint8_t *blk, uint64_t *seen);
/*
 * The scrub's look at the media under slot's data-region blocks
 * [mb0, mb0 + span): the table blocks that begin there (so a pass checks
 * each once) read and their seals checked.  The cache serves reads, so a
 * table block damaged on the media while the array runs was seen only at
 * the next mount (a tester's find); one so found is counted on the
 * member and, with repair, written home again from its cached copy (it
 * is then dirty: the scrub's closing rc_commit_tables writes it).
 * Returns how many were counted.  One that cannot be read is a read
 * error (tables_unreadable), credited as corrected once its block, whole
 * in memory, was written home again (csum.c read_fixed).
 */
uint32_t rc_csum_media_check(struct rc_array *a, int slot, uint64_t mb0,
			     uint64_t span, bool repair);
int rc_csum_entry(struct rc_array *a, int slot, uint64_t mblock,
		  uint64_t *csum);
/* The seed of slot's table seals (its array's and its own uuid). */
uint64_t rc_csum_seed(const struct rc_array *a, int slot);
/* Writes count sealed, empty table blocks from member block first on,
 * through put, in runs. */
int rc_csum_tables_format(uint64_t seed, uint64_t first, uint64_t count,
			  int (*put)(void *ctx, uint64_t block, uint32_t n,
				     const void *buf),
			  void *ctx);
int rc_csum_update(struct rc_array *a, int slot, uint64_t mblock,
		   uint64_t csum);
/* Copies out every dirty table block into *blocks/targets (malloc'd) and
 * marks them clean; the caller journals and writes them.  credit (may be
 * NULL; malloc'd): the blocks whose media read had failed, whose write,
 * once it succeeded, the caller reports (rc_csum_rewrite_done). */
int rc_csum_take_dirty(struct rc_array *a, int slot, uint8_t **blocks,
		       uint64_t **targets, bool **credit, uint32_t *n);
/* Table block `block` (absolute) of slot, unreadable before, was written
 * again: the read error is corrected, counted as repaired. */
void rc_csum_rewrite_done(struct rc_array *a, int slot, uint64_t block);
void rc_csum_drop_slot(struct rc_array *a, int slot);
/* Forgets the cached copy of table block `block` (absolute) of slot:
 * replay has just put a newer one under it. */
void rc_csum_forget(struct rc_array *a, int slot, uint64_t block);

/* ---- stripe.c: the stripe table and locks ---- */
int rc_stripe_table_init(struct rc_array *a);
void rc_stripe_pool_limit(struct rc_array *a);
void rc_stripe_table_fini(struct rc_array *a);
struct rc_stripe *rc_stripe_lock(struct rc_array *a, uint64_t stripe);
void rc_stripe_unlock(struct rc_array *a, struct rc_stripe *st);
int rc_stripe_ensure_data(struct rc_array *a, struct rc_stripe *st);
bool rc_stripe_block_dirty(const struct rc_stripe *st, uint32_t i);
void rc_stripe_mark_dirty_run(struct rc_array *a, struct rc_stripe *st,
			      uint32_t i, uint32_t n);
/* Removes up to max dirty stripes from the dirty list (ascending order),
 * returning their numbers. */
uint32_t rc_stripe_take_dirty(struct rc_array *a, uint64_t *out,
			      uint32_t max);
/* Under the stripe lock: the dirty data is on disk now / goes back on the
 * dirty list after a failed commit. */
void rc_stripe_clean(struct rc_array *a, struct rc_stripe *st);
void rc_stripe_relist(struct rc_array *a, struct rc_stripe *st);
void rc_stripe_forget(struct rc_array *a, struct rc_stripe *st);

/* ---- verify.c: what a row really holds (DESIGN "Evidence") ---- */
/* A block's verdict, from its member's sealed table and its content. */
enum rc_blk_state {
	BLK_OK = 0,          /* matches a non-zero entry */
	BLK_ZERO = 1,        /* entry 0: claimed never written; zeros in the
				buffer */
	BLK_UNKNOWN = 2,     /* no entry can be known (table block unreadable
				or failing its seal); the media in the buffer */
	BLK_BAD = 3,         /* does not match its non-zero entry */
	BLK_EIO = 4,         /* could not be read */
	BLK_ABSENT = 5,      /* member missing, faulty or not yet rebuilt */
};

/* Reads rows [row0, row0+nr) of every column into cols, each block's
 * verdict in state[c][r]; ZERO blocks as zeros.  Counts and logs
 * mismatches; rebuilds and writes nothing. */
int rc_stripe_load(struct rc_array *a, const struct rc_stripe_map *mp,
		   uint32_t row0, uint32_t nr, uint8_t **cols, uint8_t **state);
/* The same, with the columns in the mask absent taken as ABSENT (not
 * read, nothing counted against them). */
int rc_stripe_load_masked(struct rc_array *a, const struct rc_stripe_map *mp,
			  uint32_t row0, uint32_t nr, uint8_t **cols,
			  uint8_t **state, uint64_t absent);
/* How a column of a stripe read by the caller (whole chunks) came in. */
enum rc_loaded {
	RC_LOADED_READ = 0,      /* read fine: verify it */
	RC_LOADED_ZERO = 1,      /* every entry 0: zeros, not read */
	RC_LOADED_ABSENT = 2,    /* member not usable */
	RC_LOADED_ERROR = 3,     /* the read failed */
};
void rc_stripe_verify_loaded(struct rc_array *a, const struct rc_stripe_map *mp,
			     uint8_t **cols, uint8_t **state,
			     const uint8_t *how);
/* The chunk rows [row0, row0 + nrows) of every member into membuf[m]
 * (rc_geom_stripes_rows: the rows a run of stripes lies in, at every
 * level), one large read per member, all in parallel (scrub, rebuild);
 * members in the absent mask, or not usable for every stripe their rows
 * hold, are RC_LOADED_ABSENT and not read; how[m] says how each came in
 * (rc_stripe_verify_loaded takes it per column; rc_rows_col finds a
 * column).  The caller holds the locks of the stripes it will use. */
void rc_rows_load(struct rc_array *a, uint64_t row0, uint64_t nrows,
		  uint64_t absent, uint8_t **membuf, uint8_t *how);
uint8_t *rc_rows_col(struct rc_array *a, uint8_t **membuf,
		     const struct rc_stripe_map *mp, uint32_t c, uint64_t row0);
/* Chunk rows of each member in bytes, at least 2 (a RAID 10 stripe may
 * span two) and at most max: what a batch of rc_rows_load reads. */
uint64_t rc_rows_for_bytes(const struct rc_array *a, uint64_t bytes,
			   uint64_t max);
/* Stripes that fit in rows rows wherever they start, at most max. */
uint64_t rc_rows_stripes(const struct rc_array *a, uint64_t rows,
			 uint64_t max);
/* rc_rows_load in two halves, the caller working between them (the
 * rebuild reconstructs and writes the batch before): _start queues the
 * reads on the members' workers (nrows == 0 reads nothing), _finish waits
 * for them and sets how[].  The stripes' locks are held from before
 * _start to after _finish. */
struct rc_rows_loading {
	struct rc_io io[RC_MAX_MEMBERS];
	int n;
	uint8_t *how;
	struct rc_io_batch *b;
};
void rc_rows_load_start(struct rc_array *a, uint64_t row0, uint64_t nrows,
			uint64_t absent, uint8_t **membuf, uint8_t *how,
			struct rc_rows_loading *ld);
void rc_rows_load_finish(struct rc_rows_loading *ld);
/* Every table entry of [mblock, mblock + count) of slot is 0. */
bool rc_col_is_unwritten(struct rc_array *a, int slot, uint64_t mblock,
			 uint64_t count);

/* What resolution decided for one block. */
enum rc_fix {
	RC_FIX_NONE = 0,
	RC_FIX_WRITE = 1,        /* write the resolved content and its entry */
	RC_FIX_ENTRY = 2,        /* the media is right: record its entry */
	RC_FIX_ZERO_ENTRY = 3,   /* never written: record entry 0 (and, over
				    a read error, write the zeros) */
};
/* The fix writes the block's media (and so counts as a repair). */
bool rc_fix_writes(uint8_t fix, uint8_t state);
struct rc_row {
	bool known[RC_MAX_MEMBERS];     /* cols[c] now holds what column c
					   truly holds in this row */
	uint8_t fix[RC_MAX_MEMBERS];    /* enum rc_fix */
	bool mismatch;                  /* every block verifies, the redundancy
					   disagrees: nobody can be blamed */
	bool vouched[RC_MAX_MEMBERS];   /* known by the layer above's word
					   (rc_array_set_vouch), not the row's */
	bool blamed[RC_MAX_MEMBERS];    /* with a mismatch: a data block that
					   verifies, but P and Q both name it */
	uint32_t conflicts;             /* blocks whose evidence disagrees */
};
/*
 * Row r of the buffers (row `row` of the chunk): reconstructs what is not
 * established, checks it against the redundancy left over, and decides
 * the repairs (docs/DESIGN.md "Repair rules").  A column not known must
 * not be used.  -ENOMEM only; writes nothing.
 */
int rc_row_resolve(struct rc_array *a, const struct rc_stripe_map *mp,
		   uint8_t **cols, uint32_t row, uint32_t r, uint8_t **state,
		   struct rc_row *out);
/* Carries out v's repairs when repair (and the array is writable), and
 * logs every block it repairs or cannot vouch for.  Returns how many of
 * its rewrites did not hold (do not read back as written: the row has no
 * working redundancy in that column); *failed (may be NULL) grows by the
 * rewrites whose write failed (repaired nothing). */
uint32_t rc_row_apply(struct rc_array *a, const struct rc_stripe_map *mp,
		  uint8_t **cols, uint32_t row, uint32_t r, uint8_t **state,
		  const struct rc_row *v, bool repair, uint32_t *failed);
uint8_t **rc_state_alloc(uint32_t ncols, uint32_t nr);
void rc_state_free(uint8_t **state, uint32_t ncols);
/* RC_EV_LOST for every data column of row `row` among which (bit c:
 * column c) that v does not know: how reads, scrub and rebuild tell which
 * logical blocks are lost.  Returns how many. */
uint32_t rc_row_report_lost(struct rc_array *a, const struct rc_stripe_map *mp,
			    uint32_t row, const struct rc_row *v, uint64_t which);

/* ---- read.c: reads ---- */
/*
 * Reads rows [r0, r0 + nr) of column col of stripe map mp into buf,
 * verified, reconstructing what is missing or corrupt and repairing it.
 * strict: a "never written" claim must be borne out by the rest of the row
 * (reads for a program); the write path passes false, and then a claim
 * over media that holds zeros stands too (the old content is zeros either
 * way).  Caller holds the stripe lock.
 */
int rc_col_read(struct rc_array *a, const struct rc_stripe_map *mp,
		uint32_t col, uint32_t r0, uint32_t nr, void *buf, bool strict);
/* rc_col_read's second half, for a piece already read from its member
 * into buf (rc_io_member_read_run or an rc_io with retried set) with
 * result read_ret: verified, and the slow path for what does not verify
 * or was not read. */
int rc_col_check(struct rc_array *a, const struct rc_stripe_map *mp,
		 uint32_t col, uint32_t r0, uint32_t nr, void *buf, bool strict,
		 int read_ret);
/* Reads rows [r0, r0+nr) of every column (cols[c] = buffer of nr blocks),
 * resolving and repairing; -EIO if a column in the mask want is not known
 * in some row. */
int rc_stripe_read_rows(struct rc_array *a, const struct rc_stripe_map *mp,
			uint32_t r0, uint32_t nr, uint8_t **cols, uint64_t want);

/* ---- journal.c: the write journal ---- */
struct rc_jwrite {
	uint64_t target;                /* absolute member block, or
					   RC_JENT_DIRECT | stripe (data NULL:
					   after the member's payload ones) */
	const void *data;
	uint64_t csum;                  /* rc_block_csum(data, target), 0: compute */
};
/* Writes one batch's records: n[m] blocks for member m, in transactions
 * of at most RC_JHDR_MAX_ENTRIES per record; every transaction has a
 * record (empty if need be) on every participant of the batch, and a
 * batch has at least nred + 1 participants, so that the journal of one
 * member (nred members) can be lost without losing a transaction. */
int rc_journal_write(struct rc_array *a, struct rc_jwrite **w,
		     const uint32_t *n);
/* Flushes, checks every member's size (a shrunk one is faulty), moves the
 * tails to the heads and writes the superblocks.  Caller holds
 * commit_lock. */
int rc_journal_checkpoint(struct rc_array *a, bool clean);
void rc_journal_fini(struct rc_array *a);

/* ---- activate.c: the first write ---- */
/* Before the first write of a read-write array: puts the replayed journal
 * (the overlay) in place and checkpoints, marking the array active.  Once;
 * later calls return at once.  -EROFS on a read-only array.  Takes
 * commit_lock: the caller holds no raidcore lock. */
int rc_array_activate(struct rc_array *a);
/* The start of every write of [block, block + count): -EROFS on a
 * read-only array, -EINVAL past its end, then activation. */
int rc_array_write_begin(struct rc_array *a, uint64_t block, uint64_t count);
/* The same for a caller holding stripe locks (a repair on the read path):
 * -EAGAIN instead of waiting when commit_lock is taken. */
int rc_array_activate_try(struct rc_array *a);
bool rc_array_is_active(struct rc_array *a);

/* writeback.c.  Wakes the writeback thread (started on first use) if
 * the array has one: false when the caller is to commit itself. */
bool rc_writeback_kick(struct rc_array *a);
/* Stops the thread (it finishes the batch it is committing); the array
 * has none until rc_array_set_writeback again. */
void rc_writeback_stop(struct rc_array *a);
void rc_writeback_init(struct rc_array *a);
void rc_writeback_fini(struct rc_array *a);
/* ---- commit.c: writing dirty stripes through the journal ---- */
int rc_commit(struct rc_array *a, bool all);   /* takes commit_lock */
/* Journals and writes checksum table blocks changed by repairs. */
int rc_commit_tables(struct rc_array *a);
/* Up to max table blocks that fail their seal and were never handed out
 * before, as (slot, table block index) pairs; clears tables_to_heal (set
 * again when more wait). */
uint32_t rc_csum_unknown_take(struct rc_array *a, int *slots,
			      uint64_t *indexes, uint32_t max);
/* Cached table blocks with entries not yet re-derived. */
uint64_t rc_csum_unknown_blocks(struct rc_array *a);
/* Re-derives the table blocks found failing their seal (heal.c). */
void rc_tables_heal(struct rc_array *a);

/* ---- rebuild.c: reconstructing a column ---- */
/* Where a reconstructed block goes: the member (rebuild) or the overlay
 * (replay); ctx is the caller's, given with the function. */
typedef int (*rc_block_put)(struct rc_array *a, void *ctx, int slot,
			    uint64_t block, const void *data);
/* Column c of row `row` (buffer index r) after rc_row_resolve gave v, c
 * being ABSENT in state: a row never written anywhere else gets entry 0
 * and no write; a reconstructed block goes to put with its entry; one
 * that cannot be reconstructed gets an entry no block matches (it reads
 * as -EIO), counted in *lost. */
int rc_rebuild_cell(struct rc_array *a, const struct rc_stripe_map *mp,
		    uint32_t c, uint8_t **cols, uint8_t **state, uint32_t row,
		    uint32_t r, const struct rc_row *v, rc_block_put put,
		    void *ctx, uint64_t *lost);
/* Seals slot's changed table blocks and hands them to put. */
int rc_tables_put(struct rc_array *a, int slot, rc_block_put put, void *ctx);

/* The rebuild's pace (its speed limits), shared with replace.c: stripes
 * per batch now, and the sleep after a batch of n stripes begun at
 * start_ns (no lock held; cut short at close). */
uint64_t rc_rebuild_pace_stripes(struct rc_array *a);
void rc_rebuild_pace(struct rc_array *a, uint64_t n, uint64_t start_ns);

/* ---- replace.c: the online replacement's copy (struct rc_replace) ---- */
/* Run by the recovery thread while a->repl.dst is set: copies slot's
 * column onto dst from repl.pos on, batch by batch (calling progress, if
 * not NULL, between them with no lock held), then dst takes the slot and
 * src goes.  0 when done; -EINTR at close (the position is in the
 * superblocks: it resumes), -EAGAIN when a rebuild elsewhere should go
 * first (may_yield; resumed after it), -EIO when src failed (dst became
 * the first spare, rebuilt into the slot as any spare) or dst did
 * (dropped). */
int rc_replace_run(struct rc_array *a, bool may_yield,
		   void (*progress)(void *ctx, uint64_t done, uint64_t total),
		   void *ctx);
/* Is a replacement waiting for the recovery thread? */
bool rc_replace_pending(struct rc_array *a);

/* ---- replay_gaps.c: what lost journal records held ---- */
/* A row a replayed batch touched: the members that lost their record of
 * the batch (the batch's gaps), and one whose complete record wrote it. */
struct rc_gap_row {
	uint64_t stripe;
	uint32_t row;
	uint64_t seq;                   /* the batch's first transaction */
	uint64_t lost, wrote;           /* slot masks */
};
/* After the whole replay: every column of rows[0 .. n) whose member lost
 * its record of the last batch that touched it is rebuilt from the others
 * into the overlay, with its table entry; the members are named and
 * counted an error.  Sorts and folds rows in place. */
/* torn: the members whose gaps are all in the last batch written (no
 * member holds a later record): what the crash cut short, not damage -
 * rebuilt the same, told, not counted as an error. */
int rc_gaps_rebuild(struct rc_array *a, struct rc_gap_row *rows, uint32_t n,
		    uint64_t torn);
/* The members not all there (missing, faulty, rebuilding), as a mask. */
uint64_t rc_gaps_out(const struct rc_array *a);

/* ---- replay_direct.c: direct stripes a crash may have torn ---- */
/* Each of stripes[0 .. n) (ascending) is made consistent as found, into
 * the overlay: missing columns recovered from the parity, the parity made
 * again from the data, every present cell's table entry its content's. */
int rc_direct_settle(struct rc_array *a, const uint64_t *stripes, uint32_t n);
/* *conflict: rows old[] owed so far and a batch's rows add[] leave some
 * row owed by more of its stripe's columns than the redundancy covers. */
int rc_gaps_conflict(struct rc_array *a, const struct rc_gap_row *old,
		     uint32_t nold, const struct rc_gap_row *add, uint32_t nadd,
		     bool *conflict);

/* ---- replay.c: the journal after an unclean shutdown ---- */
/* Replays the committed batches after the checkpoint into the overlay
 * (nothing is written), reconstructing the columns of members whose
 * records were lost (docs/DESIGN.md "Journal damage on one member"). */
int rc_journal_replay(struct rc_array *a);

/* ---- recovery.c: the background rebuild thread ---- */
void rc_recovery_stop(struct rc_array *a);

/* ---- array.c: an array's life after assembly chose its members ---- */
/* Geometry, locks, tables and I/O workers from a->sb and a->m[]. */
int rc_array_init(struct rc_array *a, unsigned flags);
/* Replays the journal into the overlay if the array was not closed
 * cleanly; writes nothing (the first write activates, activate.c). */
int rc_array_start(struct rc_array *a);
/* Stops everything, closes the devices the array holds, frees a. */
void rc_array_free(struct rc_array *a);

static inline uint64_t rc_abs(const struct rc_array *a, uint64_t mblock)
{
	return a->sb.data_offset + mblock;
}

/* The incompat features the journal of an active array needs
 * (journal.c): full fresh stripes go direct at every level (commit.c);
 * at a level without parity their settling after a crash
 * (replay_direct.c) is 2.3's. */
static inline uint64_t rc_direct_features(const struct rc_array *a)
{
	bool parity = a->g.level == RC_RAID4 || a->g.level == RC_RAID5 ||
		      a->g.level == RC_RAID6;

	return RC_FEATURE_INCOMPAT_DIRECT |
	       (parity ? 0 : RC_FEATURE_INCOMPAT_DIRECT_NOPARITY);
}

/* Member block of ring block pos of the journal. */
static inline uint64_t rc_ring_block(const struct rc_array *a, uint64_t pos)
{
	return a->sb.journal_offset + pos;
}

#define RC_DIV_ROUND_UP(x, y) (((x) + (y) - 1) / (y))

/* Block buffers: 4 KiB aligned, so SIMD parity takes its fast path (and
 * O_DIRECT would work).  Free with free(). */
static inline void *rc_buf_alloc(size_t bytes)
{
	void *p = NULL;

	return posix_memalign(&p, RC_BLOCK_SIZE, bytes ? bytes : 1) ? NULL : p;
}

#endif
