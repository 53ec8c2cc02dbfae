/*
 * control_events: what happened to the array, as named events (mdadm's
 * monitor names: Fail, DegradedArray, SpareActive, RebuildStarted, ...),
 * each logged, kept in a history raidfsctl reads and follows, and handed
 * to the alert program (control_alert.c).
 *
 * raidcore calls ctl_events_raidcore (its event handler) in whatever
 * thread changed a member, holding raidcore's locks: it only queues the
 * event under ev->lock, a leaf, and wakes the events thread, which names
 * it, logs it (logging may block: a syslog socket), puts it in the
 * history and calls wake (the server thread then sends it to whoever
 * follows).  The daemon's own events (TestMessage) take the same queue,
 * so the history is in the order things happened.
 *
 * The move to a degraded state always gives DegradedArray: after the
 * first Fail while redundant, and at start when the array was assembled
 * degraded (ZFS users miss that one).  It is told again only after a
 * rebuild made the array redundant.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"
#include "log.h"

#define EV_HISTORY 1024     /* events kept for raidfsctl events */
#define EV_PENDING 256      /* waiting for the events thread */

struct ev_pending {
	bool own;                       /* own: e, else rc */
	struct rc_event rc;
	struct ctl_event e;
	uint64_t time_ns;
};

struct ctl_events {
	struct rc_array *a;
	const char *mountpoint;
	pthread_mutex_t lock;           /* a leaf: everything below */
	pthread_cond_t cond;
	struct ev_pending pend[EV_PENDING];
	unsigned phead, pcount;
	uint64_t pdropped;
	/* pushed to the queue, and handled by the events thread: drained
	 * is signalled as handled moves */
	uint64_t pushed, handled;
	pthread_cond_t drained;
	struct ctl_event hist[EV_HISTORY];   /* seq s at hist[(s - 1) % N] */
	uint64_t last_seq;
	struct ev_run {
		bool valid;
		uint64_t mono_ns, from;
	} rebuild[RC_MAX_MEMBERS], replace;     /* where each started */
	struct ctl_damage *damage;      /* where RC_EV_LOST go (ev->lock) */
	uint64_t fails;                 /* Fail events so far (ev->lock) */
	bool stop;
	pthread_t thread;
	/* the events thread's own */
	bool degraded_told;
	struct ctl_alert *alert;
	void (*wake)(void *ctx);
	void *wake_ctx;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Caller holds ev->lock. */
static void pending_push(struct ctl_events *ev, const struct ev_pending *p)
{
	if (ev->pcount == EV_PENDING) {
		ev->pdropped++;
		return;
	}
	ev->pend[(ev->phead + ev->pcount++) % EV_PENDING] = *p;
	ev->pushed++;
	pthread_cond_signal(&ev->cond);
}

/* raidcore's event handler: under raidcore's locks, so queue and go. */
static void ctl_events_raidcore(void *ctx, const struct rc_event *rc)
{
	struct ctl_events *ev = ctx;
	struct ev_pending p = { .rc = *rc, .time_ns = clock_ns(CLOCK_REALTIME) };

	pthread_mutex_lock(&ev->lock);
	if (rc->kind == RC_EV_LOST) {
		/* named by the damage list, which posts UnrecoverableData */
		if (ev->damage)
			ctl_damage_note(ev->damage, rc->done, rc->total);
		pthread_mutex_unlock(&ev->lock);
		return;
	}
	if (rc->kind == RC_EV_REBUILD_STARTED && rc->slot >= 0 &&
	    rc->slot < RC_MAX_MEMBERS) {
		ev->rebuild[rc->slot].valid = true;
		ev->rebuild[rc->slot].mono_ns = clock_ns(CLOCK_MONOTONIC);
		ev->rebuild[rc->slot].from = rc->done;
	}
	if (rc->kind == RC_EV_REBUILD_FINISHED && rc->slot >= 0 &&
	    rc->slot < RC_MAX_MEMBERS)
		ev->rebuild[rc->slot].valid = false;
	if (rc->kind == RC_EV_REPLACE_STARTED)
		ev->replace = (struct ev_run){ true, clock_ns(CLOCK_MONOTONIC),
					       rc->done };
	if (rc->kind == RC_EV_REPLACE_FINISHED)
		ev->replace.valid = false;
	if (rc->kind == RC_EV_FAIL)
		ev->fails++;
	pending_push(ev, &p);
	pthread_mutex_unlock(&ev->lock);
}

uint64_t ctl_events_fails(struct ctl_events *ev)
{
	uint64_t n;

	pthread_mutex_lock(&ev->lock);
	n = ev->fails;
	pthread_mutex_unlock(&ev->lock);
	return n;
}

void ctl_events_post(struct ctl_events *ev, const char *name, int slot,
		     const char *device, const char *message)
{
	struct ev_pending p = { .own = true, .time_ns = clock_ns(CLOCK_REALTIME) };

	p.e.name = name;
	p.e.slot = slot;
	p.e.progress = -1;
	snprintf(p.e.device, sizeof(p.e.device), "%s", device ? device : "");
	snprintf(p.e.message, sizeof(p.e.message), "%s", message ? message : "");
	pthread_mutex_lock(&ev->lock);
	pending_push(ev, &p);
	pthread_mutex_unlock(&ev->lock);
}

void ctl_events_set_damage(struct ctl_events *ev, struct ctl_damage *d)
{
	pthread_mutex_lock(&ev->lock);
	ev->damage = d;
	pthread_mutex_unlock(&ev->lock);
}

static bool run_start(struct ctl_events *ev, const struct ev_run *r,
		      uint64_t *mono_ns, uint64_t *from)
{
	bool valid;

	pthread_mutex_lock(&ev->lock);
	valid = r->valid;
	*mono_ns = r->mono_ns;
	*from = r->from;
	pthread_mutex_unlock(&ev->lock);
	return valid;
}

bool ctl_events_rebuild_start(struct ctl_events *ev, int slot,
			      uint64_t *mono_ns, uint64_t *from)
{
	if (slot < 0 || slot >= RC_MAX_MEMBERS)
		return false;
	return run_start(ev, &ev->rebuild[slot], mono_ns, from);
}

bool ctl_events_replace_start(struct ctl_events *ev, uint64_t *mono_ns,
			      uint64_t *from)
{
	return run_start(ev, &ev->replace, mono_ns, from);
}

size_t ctl_events_since(struct ctl_events *ev, uint64_t seq,
			struct ctl_event *out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&ev->lock);
	if (ev->last_seq > EV_HISTORY && seq < ev->last_seq - EV_HISTORY)
		seq = ev->last_seq - EV_HISTORY;
	for (uint64_t s = seq + 1; s <= ev->last_seq && n < max; s++)
		out[n++] = ev->hist[(s - 1) % EV_HISTORY];
	pthread_mutex_unlock(&ev->lock);
	return n;
}

/* Waits (a second at most: a syslog socket may block the events thread)
 * until what was queued before the call is in the history: whoever saw a
 * state (status) then reads the history finds the events that led to it. */
uint64_t ctl_events_last_seq(struct ctl_events *ev)
{
	uint64_t seq, want, t = clock_ns(CLOCK_REALTIME) + 1000000000ull;
	struct timespec ts;

	ts.tv_sec = (time_t)(t / 1000000000ull);
	ts.tv_nsec = (long)(t % 1000000000ull);
	pthread_mutex_lock(&ev->lock);
	want = ev->pushed;
	while (ev->handled < want && !ev->stop)
		if (pthread_cond_timedwait(&ev->drained, &ev->lock, &ts))
			break;
	seq = ev->last_seq;
	pthread_mutex_unlock(&ev->lock);
	return seq;
}

json_object *ctl_event_json(const struct ctl_event *e)
{
	json_object *o = json_object_new_object();
	char when[64];
	struct tm tm;
	time_t t = (time_t)(e->time_ns / 1000000000ull);

	if (!o)
		return NULL;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(o, "seq", json_object_new_uint64(e->seq));
	json_object_object_add(o, "time", json_object_new_string(when));
	json_object_object_add(o, "time_ns", json_object_new_uint64(e->time_ns));
	json_object_object_add(o, "event", json_object_new_string(e->name));
	json_object_object_add(o, "slot", e->slot >= 0 ?
			       json_object_new_int(e->slot) : NULL);
	json_object_object_add(o, "device", json_object_new_string(e->device));
	json_object_object_add(o, "message", json_object_new_string(e->message));
	json_object_object_add(o, "progress", e->progress >= 0 ?
			       json_object_new_int(e->progress) : NULL);
	return o;
}

/* The events thread: into the history, the log, the program. */
static void event_publish(struct ctl_events *ev, struct ctl_event *e,
			  uint64_t time_ns)
{
	bool bad = !strcmp(e->name, CTL_EV_FAIL) ||
		   !strcmp(e->name, CTL_EV_DEGRADED) ||
		   !strcmp(e->name, CTL_EV_SUSPENDED);
	char where[300] = "";

	e->time_ns = time_ns;
	pthread_mutex_lock(&ev->lock);
	e->seq = ++ev->last_seq;
	ev->hist[(e->seq - 1) % EV_HISTORY] = *e;
	pthread_mutex_unlock(&ev->lock);
	if (e->slot >= 0)
		snprintf(where, sizeof(where), " slot %d", e->slot);
	if (e->device[0])
		snprintf(where + strlen(where), sizeof(where) - strlen(where),
			 " (%s)", e->device);
	rfs_log(bad ? LOG_WARNING : LOG_INFO, "event %s%s%s%s", e->name, where,
		e->message[0] ? ": " : "", e->message);
	if (ev->alert)
		ctl_alert_queue(ev->alert, e);
	if (ev->wake)
		ev->wake(ev->wake_ctx);
}

static void event_emit(struct ctl_events *ev, const char *name, int slot,
		       const char *device, int progress, uint64_t time_ns,
		       const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void event_emit(struct ctl_events *ev, const char *name, int slot,
		       const char *device, int progress, uint64_t time_ns,
		       const char *fmt, ...)
{
	struct ctl_event e = { .name = name, .slot = slot, .progress = progress };
	va_list ap;

	snprintf(e.device, sizeof(e.device), "%s", device ? device : "");
	va_start(ap, fmt);
	vsnprintf(e.message, sizeof(e.message), fmt, ap);
	va_end(ap);
	event_publish(ev, &e, time_ns);
}

static int percent(uint64_t done, uint64_t total)
{
	return total ? (int)(done * 100 / total) : 100;
}

static void rebuild_finished(struct ctl_events *ev, const struct rc_event *rc,
			     uint64_t t)
{
	struct rc_info info;

	/* why: lost blocks (-EIO), and what a catch-up resynced */
	event_emit(ev, CTL_EV_REBUILD_FINISHED, rc->slot, rc->dev,
		   percent(rc->done, rc->total), t, "%s%s%s", rc->err == 0 ?
		   "the slot is in sync" : rc->err == -EIO && rc->why[0] ?
		   rc->why : "stopped before the end",
		   rc->err == 0 && rc->why[0] ? "; " : "",
		   rc->err == 0 ? rc->why : "");
	if (rc->err == 0 && rc_array_info(ev->a, &info) == 0 && !info.degraded)
		ev->degraded_told = false;
}

static void replace_finished(struct ctl_events *ev, const struct rc_event *rc,
			     uint64_t t)
{
	int pc = percent(rc->done, rc->total);

	if (rc->err == 0)
		event_emit(ev, CTL_EV_REPLACE_FINISHED, rc->slot, rc->dev, pc, t,
			   "took slot %d from %s, which is let go", rc->slot,
			   rc->why);
	else if (rc->err == -EINTR)
		event_emit(ev, CTL_EV_REPLACE_FINISHED, rc->slot, rc->dev, pc, t,
			   "interrupted: resumes from its checkpoint");
	else if (rc->err == -ENODEV)
		event_emit(ev, CTL_EV_REPLACE_FINISHED, rc->slot, rc->dev, pc, t,
			   "stopped: the new device failed and is let go; slot "
			   "%d keeps %s", rc->slot, rc->why);
	else if (rc->err == -ECANCELED)
		event_emit(ev, CTL_EV_REPLACE_FINISHED, rc->slot, rc->dev, pc, t,
			   "cancelled: the new device is let go; slot %d keeps "
			   "%s", rc->slot, rc->why);
	else
		event_emit(ev, CTL_EV_REPLACE_FINISHED, rc->slot, rc->dev, pc, t,
			   "stopped: a device failed (the old one: the new one "
			   "is rebuilt into slot %d as a spare)", rc->slot);
}

/* One of raidcore's events, named (and DegradedArray after a Fail). */
static void event_from_raidcore(struct ctl_events *ev, const struct rc_event *rc,
				uint64_t t)
{
	switch (rc->kind) {
	case RC_EV_LOST:                /* never queued: control_damage.c's */
		break;
	case RC_EV_FAIL:
		event_emit(ev, CTL_EV_FAIL, rc->slot, rc->dev, -1, t, "%s", rc->why);
		if (!ev->degraded_told)
			event_emit(ev, CTL_EV_DEGRADED, -1, NULL, -1, t,
				   "slot %d failed: the array runs degraded",
				   rc->slot);
		ev->degraded_told = true;
		break;
	case RC_EV_SUSPENDED:
		event_emit(ev, CTL_EV_SUSPENDED, rc->slot, rc->dev, -1, t,
			   "%s; the array cannot run without this member: "
			   "nothing more is read or written - bring it back, "
			   "unmount and mount again (the journal replays)",
			   rc->why);
		break;
	case RC_EV_SPARE_ACTIVE:
		event_emit(ev, CTL_EV_SPARE_ACTIVE, rc->slot, rc->dev, -1, t,
			   "a spare took slot %d", rc->slot);
		break;
	case RC_EV_REBUILD_STARTED:
		event_emit(ev, CTL_EV_REBUILD_STARTED, rc->slot, rc->dev,
			   percent(rc->done, rc->total), t, "%s%s", rc->done ?
			   "resumed from its checkpoint" : "from the start",
			   rc->why[0] ? " (catch-up: only what changed)" : "");
		break;
	case RC_EV_REBUILD_PROGRESS:
		event_emit(ev, CTL_EV_REBUILD_PROGRESS, rc->slot, rc->dev,
			   rc->total ? (int)(rc->done * 5 / rc->total) * 20 : 0,
			   t, "slot %d: %llu of %llu stripes rebuilt", rc->slot,
			   (unsigned long long)rc->done,
			   (unsigned long long)rc->total);
		break;
	case RC_EV_REBUILD_FINISHED:
		rebuild_finished(ev, rc, t);
		break;
	case RC_EV_SPARE_ADDED:
		event_emit(ev, CTL_EV_SPARE_ADDED, -1, rc->dev, -1, t,
			   "a spare, used when a slot fails");
		break;
	case RC_EV_REMOVED:
		if (rc->slot >= 0 && rc->why[0])
			event_emit(ev, CTL_EV_REMOVED, rc->slot, rc->dev, -1, t,
				   "taken out of slot %d: %s", rc->slot,
				   rc->why);
		else if (rc->slot >= 0)
			event_emit(ev, CTL_EV_REMOVED, rc->slot, rc->dev, -1, t,
				   "taken out of slot %d, which is empty now",
				   rc->slot);
		else
			event_emit(ev, CTL_EV_REMOVED, rc->slot, rc->dev, -1, t,
				   "a spare, taken out");
		break;
	case RC_EV_REPLACE_STARTED:
		event_emit(ev, CTL_EV_REPLACE_STARTED, rc->slot, rc->dev,
			   percent(rc->done, rc->total), t, "replacing %s%s",
			   rc->why, rc->done ? " (resumed)" : "");
		break;
	case RC_EV_REPLACE_FINISHED:
		replace_finished(ev, rc, t);
		break;
	case RC_EV_VERIFY:
		/* a rebuild's holes are known; other damage may have
		 * reached further */
		event_emit(ev, CTL_EV_MEMBER_DAMAGED, rc->slot, rc->dev, -1, t,
			   "%s: %sa repairing scrub verifies it", rc->why,
			   strstr(rc->why, RC_WHY_HOLES) ? "" :
			   "the rest of the member may be damaged too; ");
		break;
	}
}

static void *events_main(void *arg)
{
	struct ctl_events *ev = arg;
	struct ev_pending p;
	uint64_t dropped;

	pthread_mutex_lock(&ev->lock);
	for (;;) {
		while (!ev->pcount && !ev->stop)
			pthread_cond_wait(&ev->cond, &ev->lock);
		if (!ev->pcount)
			break;
		p = ev->pend[ev->phead];
		ev->phead = (ev->phead + 1) % EV_PENDING;
		ev->pcount--;
		dropped = ev->pdropped;
		ev->pdropped = 0;
		pthread_mutex_unlock(&ev->lock);
		if (dropped)
			rfs_log(LOG_WARNING, "%llu events lost (too many at once)",
				(unsigned long long)dropped);
		if (p.own)
			event_publish(ev, &p.e, p.time_ns);
		else
			event_from_raidcore(ev, &p.rc, p.time_ns);
		pthread_mutex_lock(&ev->lock);
		ev->handled++;
		pthread_cond_broadcast(&ev->drained);
	}
	pthread_mutex_unlock(&ev->lock);
	return NULL;
}

/* Assembled degraded: say so now (the first event of the history). */
static void degraded_at_start(struct ctl_events *ev)
{
	struct rc_info info;
	char msg[160];

	if (rc_array_info(ev->a, &info) || !info.degraded)
		return;
	snprintf(msg, sizeof(msg), "assembled with %s", info.failed ?
		 "more members missing than the level tolerates" :
		 "members missing or not in sync");
	ev->degraded_told = true;
	ctl_events_post(ev, CTL_EV_DEGRADED, -1, NULL, msg);
}

int ctl_events_new(struct rc_array *a, const char *mountpoint,
		   const char *program, unsigned timeout_s,
		   void (*wake)(void *ctx), void *wake_ctx,
		   struct ctl_events **out)
{
	struct ctl_events *ev = calloc(1, sizeof(*ev));
	struct rc_info info;
	int ret = -ENOMEM;

	if (!ev)
		return ret;
	ev->a = a;
	ev->mountpoint = mountpoint;
	ev->wake = wake;
	ev->wake_ctx = wake_ctx;
	rc_array_info(a, &info);
	if (program && (ret = ctl_alert_new(program, timeout_s, mountpoint,
					    info.uuid, &ev->alert)))
		goto out_free;
	pthread_mutex_init(&ev->lock, NULL);
	pthread_cond_init(&ev->cond, NULL);
	pthread_cond_init(&ev->drained, NULL);
	ret = -pthread_create(&ev->thread, NULL, events_main, ev);
	if (ret)
		goto out_alert;
	degraded_at_start(ev);
	rc_array_set_event_handler(a, ctl_events_raidcore, ev);
	*out = ev;
	return 0;
out_alert:
	pthread_cond_destroy(&ev->drained);
	pthread_cond_destroy(&ev->cond);
	pthread_mutex_destroy(&ev->lock);
	if (ev->alert)
		ctl_alert_free(ev->alert);
out_free:
	free(ev);
	return ret;
}

void ctl_events_free(struct ctl_events *ev)
{
	if (!ev)
		return;
	rc_array_set_event_handler(ev->a, NULL, NULL);
	pthread_mutex_lock(&ev->lock);
	ev->stop = true;
	pthread_cond_signal(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
	pthread_join(ev->thread, NULL);
	if (ev->alert)
		ctl_alert_free(ev->alert);
	pthread_cond_destroy(&ev->drained);
	pthread_cond_destroy(&ev->cond);
	pthread_mutex_destroy(&ev->lock);
	free(ev);
}
