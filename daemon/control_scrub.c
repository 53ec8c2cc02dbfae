/*
 * control_scrub: the online scrub `raidfsctl scrub start|stop|status` runs
 * - raidcore's scrub (rc_scrub_stripes: every block against its checksum,
 * every row against its parity, repairs from redundancy) over the whole
 * array, one range of stripes at a time in a thread of its own, while the
 * array serves.  Paced by the rebuild speed limits (md paces check and
 * repair by the same sync_speed limits); stoppable between ranges, and a
 * stopped scrub started again goes on from where it stopped.  When it
 * ends: ScrubFinished with the counts, ChecksumRepaired when it repaired
 * blocks, UnrecoverableData when some could not be (control_events.c).
 *
 * Kept on the members (raidcore's admin state, rc_array_set_scrub_state):
 * the position and counts of a scrub in progress, every SCRUB_SAVE_NS and
 * when it stops, and the last scrub that went through.  So a scrub stopped
 * by `scrub stop` goes on at the next `scrub start`, also after a remount,
 * and one running at unmount (or cut by a crash: from its last save) goes
 * on by itself at the next mount, as ZFS resumes a scrub at import.
 *
 * Lock: sc->lock guards the state and the counters; the thread holds it
 * only to publish a range's report, never across rc_scrub_stripes nor a
 * superblock write.  The events' lock (ctl_events_fails) is taken before
 * it, never under it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"
#include "log.h"

#define SCRUB_RANGE_STRIPES 64
#define SCRUB_SAVE_NS (5 * 1000000000ull)   /* position saved this often */

enum scrub_state { SCRUB_NONE, SCRUB_RUNNING, SCRUB_STOPPED, SCRUB_FINISHED };

struct ctl_scrub {
	struct rc_array *a;
	struct ctl_events *ev;
	struct ctl_damage *damage;      /* may be NULL */
	pthread_mutex_t lock;
	enum scrub_state state;
	uint64_t pos, total;            /* stripes scrubbed, of total */
	struct rc_scrub_report rep;     /* since the scrub began */
	uint64_t started_ns, ended_ns;  /* CLOCK_REALTIME */
	uint64_t run_t0, run_from;      /* this run's start (CLOCK_MONOTONIC)
					   and position then: the rate */
	uint64_t stripe_bytes;          /* data bytes per stripe */
	int err;                        /* of the last range, or 0 */
	uint64_t faulted;               /* members faulted while it ran, in
					   the runs before this one */
	uint64_t fails0;                /* ctl_events_fails at this run's
					   start */
	struct rc_scrub_record last;    /* the last one through (start 0: none) */
	atomic_bool stop;
	atomic_bool unmounting;         /* the stop is the unmount's: the next
					   mount goes on with it */
	bool thread_live;
	pthread_t thread;
	uint64_t verify_tried;          /* rc_info.verify_gen when a scrub was
					   last started to verify members
					   (server thread) */
};

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void report_add(struct rc_scrub_report *to, const struct rc_scrub_report *r)
{
	to->stripes += r->stripes;
	to->csum_errors += r->csum_errors;
	to->read_errors += r->read_errors;
	to->unverified += r->unverified;
	to->parity_mismatches += r->parity_mismatches;
	to->conflicts += r->conflicts;
	to->repaired += r->repaired;
	to->entries_fixed += r->entries_fixed;
	to->unrecoverable += r->unrecoverable;
	to->nbad += r->nbad;
}

static void record_from_report(struct rc_scrub_record *rec,
			       const struct rc_scrub_report *r)
{
	rec->stripes = r->stripes;
	rec->csum_errors = r->csum_errors;
	rec->read_errors = r->read_errors;
	rec->repaired = r->repaired;
	rec->unrecoverable = r->unrecoverable;
	rec->parity_mismatches = r->parity_mismatches;
}

static void report_from_record(struct rc_scrub_report *r,
			       const struct rc_scrub_record *rec)
{
	memset(r, 0, sizeof(*r));
	r->stripes = rec->stripes;
	r->csum_errors = rec->csum_errors;
	r->read_errors = rec->read_errors;
	r->repaired = rec->repaired;
	r->unrecoverable = rec->unrecoverable;
	r->parity_mismatches = rec->parity_mismatches;
}

/*
 * Records the scrub on the members: in progress (at pos, resumed by the
 * next mount when running), or through (then it is the last scrub).  A
 * read-only array keeps it in memory only.  Caller holds no lock.
 */
static void scrub_save(struct ctl_scrub *sc, bool running)
{
	struct rc_admin ad;
	int ret;

	rc_array_get_admin(sc->a, &ad);
	pthread_mutex_lock(&sc->lock);
	ad.scrub_active = sc->state != SCRUB_FINISHED;
	ad.scrub_running = running;
	ad.scrub_pos = sc->pos;
	memset(&ad.scrub, 0, sizeof(ad.scrub));
	ad.scrub.start_ns = sc->started_ns;
	record_from_report(&ad.scrub, &sc->rep);
	if (sc->state == SCRUB_FINISHED) {
		ad.scrub.end_ns = sc->ended_ns;
		sc->last = ad.scrub;
	}
	ad.last = sc->last;
	pthread_mutex_unlock(&sc->lock);
	ret = rc_array_set_scrub_state(sc->a, &ad);
	if (ret && ret != -EROFS)
		rfs_log(LOG_WARNING, "scrub: its state could not be recorded on "
			"the members (%s): a remount forgets it", strerror(-ret));
}

/* Sleeps what keeps n stripes since t0 under the rebuild speed limit. */
static void scrub_pace(struct ctl_scrub *sc, uint64_t n, uint64_t t0,
		       uint64_t stripe_kib)
{
	uint64_t min, max, want, now;
	struct timespec ts = { 0, 20000000 };

	rc_array_get_rebuild_speed(sc->a, &min, &max);
	if (!max)
		return;
	want = t0 + n * stripe_kib * 1000000000ull / max;
	while (!atomic_load(&sc->stop) && (now = now_ns(CLOCK_MONOTONIC)) < want)
		nanosleep(&ts, NULL);
}

static void scrub_events(struct ctl_scrub *sc)
{
	struct rc_scrub_report r;
	char msg[200];

	pthread_mutex_lock(&sc->lock);
	r = sc->rep;
	pthread_mutex_unlock(&sc->lock);
	snprintf(msg, sizeof(msg), "%llu stripes: %llu checksum errors, %llu "
		 "read errors, %llu repaired, %llu unrecoverable, %llu parity "
		 "mismatches", (unsigned long long)r.stripes,
		 (unsigned long long)r.csum_errors,
		 (unsigned long long)r.read_errors,
		 (unsigned long long)r.repaired,
		 (unsigned long long)r.unrecoverable,
		 (unsigned long long)r.parity_mismatches);
	ctl_events_post(sc->ev, CTL_EV_SCRUB_FINISHED, -1, NULL, msg);
	if (r.repaired) {
		snprintf(msg, sizeof(msg), "%llu blocks rewritten from redundancy",
			 (unsigned long long)r.repaired);
		ctl_events_post(sc->ev, CTL_EV_CSUM_REPAIRED, -1, NULL, msg);
	}
	if (r.unrecoverable || r.nbad) {
		snprintf(msg, sizeof(msg), "%llu blocks could not be established "
			 "(%llu data blocks lost): they read as I/O errors",
			 (unsigned long long)r.unrecoverable,
			 (unsigned long long)r.nbad);
		ctl_events_post(sc->ev, CTL_EV_UNRECOVERABLE, -1, NULL, msg);
	}
}

/* A run an error ended at stripe s: no verdict, said so. */
static void scrub_error_event(struct ctl_scrub *sc, uint64_t s,
			      uint64_t total, int err)
{
	char msg[200];

	snprintf(msg, sizeof(msg), "stopped by an error at stripe %llu of "
		 "%llu (%s): not a verdict", (unsigned long long)s,
		 (unsigned long long)total, strerror(-err));
	ctl_events_post(sc->ev, CTL_EV_SCRUB_FINISHED, -1, NULL, msg);
}

/* A scrub of the whole array in this run that established every block:
 * the damage listed before it is gone (ctl_damage_scrubbed). */
static void scrub_clears_damage(struct ctl_scrub *sc)
{
	uint64_t from, t0, lost;
	size_t n;

	pthread_mutex_lock(&sc->lock);
	from = sc->run_from;
	t0 = sc->run_t0;
	lost = sc->rep.unrecoverable + sc->rep.nbad;
	pthread_mutex_unlock(&sc->lock);
	if (from || lost)
		return;
	n = ctl_damage_scrubbed(sc->damage, t0);
	if (n)
		rfs_log(LOG_INFO, "scrub: every block established: the list of "
			"unrecoverable data (%zu entries) is cleared", n);
}

static void *scrub_main(void *arg)
{
	struct ctl_scrub *sc = arg;
	struct rc_scrub_bufs *bufs = NULL;
	struct rc_scrub_report r;
	struct rc_info info;
	uint64_t s, n, t0, stripe_kib, saved = now_ns(CLOCK_MONOTONIC);
	bool through;
	int ret = 0;

	rc_array_info(sc->a, &info);
	stripe_kib = (uint64_t)info.chunk_blocks * (RC_BLOCK_SIZE / 1024);
	pthread_mutex_lock(&sc->lock);
	s = sc->pos;
	pthread_mutex_unlock(&sc->lock);
	/* one buffer set for the whole run (rc_scrub_bufs_new) */
	ret = rc_scrub_bufs_new(sc->a, &bufs);
	if (ret) {
		pthread_mutex_lock(&sc->lock);
		sc->err = ret;
		pthread_mutex_unlock(&sc->lock);
	}
	while (s < info.stripes && !atomic_load(&sc->stop) && ret == 0) {
		n = info.stripes - s < SCRUB_RANGE_STRIPES ? info.stripes - s :
		    SCRUB_RANGE_STRIPES;
		t0 = now_ns(CLOCK_MONOTONIC);
		ret = rc_scrub_stripes_bufs(sc->a, bufs, s, n, !info.rdonly, &r);
		s += n;
		pthread_mutex_lock(&sc->lock);
		report_add(&sc->rep, &r);
		sc->pos = s;
		sc->err = ret;
		pthread_mutex_unlock(&sc->lock);
		if (s < info.stripes && now_ns(CLOCK_MONOTONIC) - saved > SCRUB_SAVE_NS) {
			scrub_save(sc, true);
			saved = now_ns(CLOCK_MONOTONIC);
		}
		scrub_pace(sc, n, t0, stripe_kib);
	}
	rc_scrub_bufs_free(bufs);
	rc_array_settle_faults(sc->a);  /* the verdict includes them */
	through = s >= info.stripes || ret;
	n = ctl_events_fails(sc->ev);
	pthread_mutex_lock(&sc->lock);
	sc->faulted += n - sc->fails0;
	sc->state = through ? SCRUB_FINISHED : SCRUB_STOPPED;
	sc->ended_ns = now_ns(CLOCK_REALTIME);
	pthread_mutex_unlock(&sc->lock);
	scrub_save(sc, !through && atomic_load(&sc->unmounting));
	if (through && ret == 0)
		scrub_events(sc);
	else if (through)
		scrub_error_event(sc, s, info.stripes, ret);
	if (through && ret == 0)
		scrub_clears_damage(sc);
	return NULL;
}

/* What the members recorded: a scrub in progress is a stopped one here;
 * true when it was running at unmount (it goes on now). */
static bool scrub_load(struct ctl_scrub *sc)
{
	struct rc_admin ad;
	struct rc_info info;

	rc_array_get_admin(sc->a, &ad);
	rc_array_info(sc->a, &info);
	sc->last = ad.last;
	sc->total = info.stripes;
	if (!ad.scrub_active)
		return false;
	sc->state = SCRUB_STOPPED;
	sc->pos = ad.scrub_pos < info.stripes ? ad.scrub_pos : info.stripes;
	sc->started_ns = ad.scrub.start_ns;
	sc->ended_ns = 0;
	report_from_record(&sc->rep, &ad.scrub);
	return ad.scrub_running;
}

int ctl_scrub_new(struct rc_array *a, struct ctl_events *ev,
		  struct ctl_damage *damage, struct ctl_scrub **out)
{
	struct ctl_scrub *sc = calloc(1, sizeof(*sc));
	char msg[160];

	if (!sc)
		return -ENOMEM;
	sc->a = a;
	sc->ev = ev;
	sc->damage = damage;
	pthread_mutex_init(&sc->lock, NULL);
	if (scrub_load(sc)) {
		int ret = ctl_scrub_start(sc, msg, sizeof(msg));

		rfs_log(ret ? LOG_WARNING : LOG_INFO, "the scrub running at the "
			"last unmount: %s", msg);
	}
	*out = sc;
	return 0;
}

/* Joins a thread that ended or is told to (server thread only). */
static void scrub_join(struct ctl_scrub *sc, bool stop)
{
	if (!sc->thread_live)
		return;
	if (stop)
		atomic_store(&sc->stop, true);
	pthread_join(sc->thread, NULL);
	sc->thread_live = false;
}

int ctl_scrub_start(struct ctl_scrub *sc, char *msg, size_t len)
{
	struct rc_info info;
	uint64_t from, fails;
	bool resume;
	int ret;

	pthread_mutex_lock(&sc->lock);
	ret = sc->state == SCRUB_RUNNING ? -EBUSY : 0;
	pthread_mutex_unlock(&sc->lock);
	if (ret)
		return snprintf(msg, len, "a scrub is running"), ret;
	scrub_join(sc, false);
	rc_array_info(sc->a, &info);
	/* nothing is read (raidcore fail.c): a scrub would only "finish" */
	if (info.suspended)
		return snprintf(msg, len, "the array is suspended (a member it "
				"cannot run without failed): nothing is read "
				"until it is mounted again with the member "
				"back"), -EIO;
	fails = ctl_events_fails(sc->ev);
	pthread_mutex_lock(&sc->lock);
	resume = sc->state == SCRUB_STOPPED;
	if (!resume) {
		memset(&sc->rep, 0, sizeof(sc->rep));
		sc->pos = 0;
		sc->started_ns = now_ns(CLOCK_REALTIME);
		sc->faulted = 0;
	}
	sc->fails0 = fails;
	sc->total = info.stripes;
	sc->state = SCRUB_RUNNING;
	sc->err = 0;
	from = sc->pos;
	sc->run_t0 = now_ns(CLOCK_MONOTONIC);
	sc->run_from = from;
	sc->stripe_bytes = (uint64_t)info.stripe_blocks * RC_BLOCK_SIZE;
	pthread_mutex_unlock(&sc->lock);
	atomic_store(&sc->stop, false);
	atomic_store(&sc->unmounting, false);
	scrub_save(sc, true);           /* a crash before the next save: the
					   next mount goes on from here */
	ret = -pthread_create(&sc->thread, NULL, scrub_main, sc);
	sc->thread_live = ret == 0;
	if (ret) {
		pthread_mutex_lock(&sc->lock);
		sc->state = SCRUB_NONE;
		pthread_mutex_unlock(&sc->lock);
		return snprintf(msg, len, "cannot start: %s", strerror(-ret)), ret;
	}
	snprintf(msg, len, resume ? "scrub resumed at stripe %llu of %llu%s" :
		 "scrub started (%llu of %llu stripes)%s",
		 (unsigned long long)from, (unsigned long long)info.stripes,
		 info.rdonly ? ", read-only: nothing repaired" : "");
	return 0;
}

int ctl_scrub_stop(struct ctl_scrub *sc, char *msg, size_t len)
{
	bool running;

	pthread_mutex_lock(&sc->lock);
	running = sc->state == SCRUB_RUNNING;
	pthread_mutex_unlock(&sc->lock);
	if (!running)
		return snprintf(msg, len, "no scrub is running"), -EALREADY;
	scrub_join(sc, true);
	snprintf(msg, len, "scrub stopped at stripe %llu of %llu: "
		 "`scrub start` goes on from there",
		 (unsigned long long)sc->pos, (unsigned long long)sc->total);
	return 0;
}

/*
 * Members found damaged (rc_info.verify_slots: superblock copies wiped or
 * overwritten, at assembly or while mounted) are verified by a repairing
 * scrub of the whole array, started here when none runs - as md resyncs
 * an array it finds dirty, rather than trusting the member as redundancy
 * until an administrator thinks of a scrub (a tester's find: a member
 * zeroed but for its last superblock copies was kept "active" in a
 * "clean" array, and the next failure lost every file).  Once per set of
 * such members: a scrub they outlive (one that was running already, or
 * stopped by an error) is followed by one more, not by a loop; one an
 * administrator stops stays stopped.  Server thread only.
 */
void ctl_scrub_verify_poll(struct ctl_scrub *sc)
{
	struct rc_info info;
	enum scrub_state st;
	char msg[160];
	int ret;

	if (rc_array_info(sc->a, &info) || !info.verify_slots ||
	    info.verify_gen == sc->verify_tried || info.suspended)
		return;
	if (info.rdonly) {
		sc->verify_tried = info.verify_gen;
		rfs_log(LOG_WARNING, "%s: mounted read-only, so no scrub "
			"repairs it; mount read-write or run fsck.raidfs",
			info.verify_why);
		return;
	}
	pthread_mutex_lock(&sc->lock);
	st = sc->state;
	pthread_mutex_unlock(&sc->lock);
	if (st == SCRUB_RUNNING)
		return;         /* its end wakes us (ScrubFinished) */
	sc->verify_tried = info.verify_gen;
	scrub_join(sc, false);
	pthread_mutex_lock(&sc->lock);
	sc->state = SCRUB_NONE;         /* from stripe 0: a stopped one's
					   first part was before the damage */
	pthread_mutex_unlock(&sc->lock);
	ret = ctl_scrub_start(sc, msg, sizeof(msg));
	rfs_log(ret ? LOG_ERR : LOG_WARNING, "%s: %s%s", info.verify_why,
		ret ? "the scrub that verifies it could not start: " :
		"a repairing scrub of the whole array verifies it: ", msg);
}

bool ctl_scrub_running(struct ctl_scrub *sc)
{
	bool yes;

	pthread_mutex_lock(&sc->lock);
	yes = sc->state == SCRUB_RUNNING;
	pthread_mutex_unlock(&sc->lock);
	return yes;
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static json_object *report_json(const struct rc_scrub_report *r)
{
	json_object *o = json_object_new_object();

	add_u64(o, "stripes", r->stripes);
	add_u64(o, "checksum_errors", r->csum_errors);
	add_u64(o, "read_errors", r->read_errors);
	add_u64(o, "unverified", r->unverified);
	add_u64(o, "parity_mismatches", r->parity_mismatches);
	add_u64(o, "conflicts", r->conflicts);
	add_u64(o, "repaired", r->repaired);
	add_u64(o, "entries_fixed", r->entries_fixed);
	add_u64(o, "unrecoverable", r->unrecoverable);
	add_u64(o, "lost_data_blocks", r->nbad);
	return o;
}

/* A running scrub's rate (data bytes a second, since this run began) and
 * the time left at it; null while there is nothing to tell.  sc->lock. */
static void rate_add(json_object *o, const struct ctl_scrub *sc)
{
	uint64_t t = now_ns(CLOCK_MONOTONIC), rate = 0;

	if (sc->state == SCRUB_RUNNING && t > sc->run_t0 &&
	    sc->pos > sc->run_from)
		rate = (uint64_t)((double)(sc->pos - sc->run_from) *
				  (double)sc->stripe_bytes * 1e9 /
				  (double)(t - sc->run_t0));
	json_object_object_add(o, "rate_bytes_per_s", rate ?
			       json_object_new_uint64(rate) : NULL);
	json_object_object_add(o, "seconds_left", rate ? json_object_new_uint64(
		(sc->total - sc->pos) * sc->stripe_bytes / rate) : NULL);
}

/* The last scrub that went through, as the members keep it; NULL: none. */
static json_object *last_json(const struct rc_scrub_record *r)
{
	json_object *o;

	if (!r->start_ns)
		return NULL;
	o = json_object_new_object();
	add_u64(o, "started_ns", r->start_ns);
	add_u64(o, "ended_ns", r->end_ns);
	add_u64(o, "stripes", r->stripes);
	add_u64(o, "checksum_errors", r->csum_errors);
	add_u64(o, "read_errors", r->read_errors);
	add_u64(o, "repaired", r->repaired);
	add_u64(o, "unrecoverable", r->unrecoverable);
	add_u64(o, "parity_mismatches", r->parity_mismatches);
	return o;
}

json_object *ctl_scrub_json(struct ctl_scrub *sc)
{
	static const char *const names[] = { "none", "running", "stopped",
					     "finished" };
	json_object *o = json_object_new_object();
	uint64_t fails = ctl_events_fails(sc->ev);

	pthread_mutex_lock(&sc->lock);
	json_object_object_add(o, "state", json_object_new_string(names[sc->state]));
	add_u64(o, "done_stripes", sc->pos);
	add_u64(o, "total_stripes", sc->total);
	rate_add(o, sc);
	json_object_object_add(o, "started_ns", sc->state == SCRUB_NONE ? NULL :
			       json_object_new_uint64(sc->started_ns));
	json_object_object_add(o, "ended_ns", sc->state == SCRUB_FINISHED ||
			       sc->state == SCRUB_STOPPED ?
			       json_object_new_uint64(sc->ended_ns) : NULL);
	json_object_object_add(o, "error", sc->err ?
			       json_object_new_string(strerror(-sc->err)) : NULL);
	json_object_object_add(o, "report", report_json(&sc->rep));
	/* a member faulted while it ran: its errors, a failed write, a
	 * device gone - even when a spare made the array whole again */
	add_u64(o, "members_faulted", sc->faulted +
		(sc->state == SCRUB_RUNNING ? fails - sc->fails0 : 0));
	json_object_object_add(o, "last", last_json(&sc->last));
	pthread_mutex_unlock(&sc->lock);
	return o;
}

void ctl_scrub_free(struct ctl_scrub *sc)
{
	if (!sc)
		return;
	atomic_store(&sc->unmounting, true);
	scrub_join(sc, true);
	pthread_mutex_destroy(&sc->lock);
	free(sc);
}
