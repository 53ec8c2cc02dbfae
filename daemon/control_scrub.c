/*
 * control_scrub: the online scrub `raidfsctl scrub start|stop|status` runs
 * - raidcore's scrub (rc_scrub_stripes: every block against its checksum,
 * every row against its parity, repairs from redundancy) over the whole
 * array, one range of stripes at a time in a thread of its own, while the
 * array serves.  Paced by the rebuild speed limits (md paces check and
 * repair by the same sync_speed limits); stoppable between ranges, and a
 * stopped scrub started again goes on from where it stopped (in memory:
 * an unmount forgets it).  When it ends: ScrubFinished with the counts,
 * ChecksumRepaired when it repaired blocks, UnrecoverableData when some
 * could not be (control_events.c).
 *
 * Lock: sc->lock guards the state and the counters; the thread holds it
 * only to publish a range's report, never across rc_scrub_stripes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"

#define SCRUB_RANGE_STRIPES 64

enum scrub_state { SCRUB_NONE, SCRUB_RUNNING, SCRUB_STOPPED, SCRUB_FINISHED };

struct ctl_scrub {
	struct rc_array *a;
	struct ctl_events *ev;
	pthread_mutex_t lock;
	enum scrub_state state;
	uint64_t pos, total;            /* stripes scrubbed, of total */
	struct rc_scrub_report rep;     /* since the scrub began */
	uint64_t started_ns, ended_ns;  /* CLOCK_REALTIME */
	int err;                        /* of the last range, or 0 */
	atomic_bool stop;
	bool thread_live;
	pthread_t thread;
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

static void *scrub_main(void *arg)
{
	struct ctl_scrub *sc = arg;
	struct rc_scrub_report r;
	struct rc_info info;
	uint64_t s, n, t0, stripe_kib;
	int ret = 0;

	rc_array_info(sc->a, &info);
	stripe_kib = (uint64_t)info.chunk_blocks * (RC_BLOCK_SIZE / 1024);
	pthread_mutex_lock(&sc->lock);
	s = sc->pos;
	pthread_mutex_unlock(&sc->lock);
	while (s < info.stripes && !atomic_load(&sc->stop) && ret == 0) {
		n = info.stripes - s < SCRUB_RANGE_STRIPES ? info.stripes - s :
		    SCRUB_RANGE_STRIPES;
		t0 = now_ns(CLOCK_MONOTONIC);
		ret = rc_scrub_stripes(sc->a, s, n, !info.rdonly, &r);
		s += n;
		pthread_mutex_lock(&sc->lock);
		report_add(&sc->rep, &r);
		sc->pos = s;
		sc->err = ret;
		pthread_mutex_unlock(&sc->lock);
		scrub_pace(sc, n, t0, stripe_kib);
	}
	pthread_mutex_lock(&sc->lock);
	sc->state = s >= info.stripes || ret ? SCRUB_FINISHED : SCRUB_STOPPED;
	sc->ended_ns = now_ns(CLOCK_REALTIME);
	pthread_mutex_unlock(&sc->lock);
	if (s >= info.stripes || ret)
		scrub_events(sc);
	return NULL;
}

int ctl_scrub_new(struct rc_array *a, struct ctl_events *ev,
		  struct ctl_scrub **out)
{
	struct ctl_scrub *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return -ENOMEM;
	sc->a = a;
	sc->ev = ev;
	pthread_mutex_init(&sc->lock, NULL);
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
	uint64_t from;
	bool resume;
	int ret;

	pthread_mutex_lock(&sc->lock);
	ret = sc->state == SCRUB_RUNNING ? -EBUSY : 0;
	pthread_mutex_unlock(&sc->lock);
	if (ret)
		return snprintf(msg, len, "a scrub is running"), ret;
	scrub_join(sc, false);
	rc_array_info(sc->a, &info);
	pthread_mutex_lock(&sc->lock);
	resume = sc->state == SCRUB_STOPPED;
	if (!resume) {
		memset(&sc->rep, 0, sizeof(sc->rep));
		sc->pos = 0;
		sc->started_ns = now_ns(CLOCK_REALTIME);
	}
	sc->total = info.stripes;
	sc->state = SCRUB_RUNNING;
	sc->err = 0;
	from = sc->pos;
	pthread_mutex_unlock(&sc->lock);
	atomic_store(&sc->stop, false);
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

json_object *ctl_scrub_json(struct ctl_scrub *sc)
{
	static const char *const names[] = { "none", "running", "stopped",
					     "finished" };
	json_object *o = json_object_new_object();

	pthread_mutex_lock(&sc->lock);
	json_object_object_add(o, "state", json_object_new_string(names[sc->state]));
	add_u64(o, "done_stripes", sc->pos);
	add_u64(o, "total_stripes", sc->total);
	json_object_object_add(o, "started_ns", sc->state == SCRUB_NONE ? NULL :
			       json_object_new_uint64(sc->started_ns));
	json_object_object_add(o, "ended_ns", sc->state == SCRUB_FINISHED ||
			       sc->state == SCRUB_STOPPED ?
			       json_object_new_uint64(sc->ended_ns) : NULL);
	json_object_object_add(o, "error", sc->err ?
			       json_object_new_string(strerror(-sc->err)) : NULL);
	json_object_object_add(o, "report", report_json(&sc->rep));
	pthread_mutex_unlock(&sc->lock);
	return o;
}

void ctl_scrub_free(struct ctl_scrub *sc)
{
	if (!sc)
		return;
	scrub_join(sc, true);
	pthread_mutex_destroy(&sc->lock);
	free(sc);
}
