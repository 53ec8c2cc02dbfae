/*
 * control: the daemon's control plane - the socket raidfsctl talks to, the
 * event history and the alert program.
 *
 *   control.c         the socket CTL_RUN_DIR/UUID.sock and the thread that
 *                     serves it (control_proto.h: requests, replies, events)
 *   control_cmds.c    what each request does (fail, remove, add, clear, set)
 *   control_status.c  the status object (docs/raidfsctl-status.schema.json)
 *   control_events.c  events: raidcore's (rc_array_set_event_handler) and
 *                     the daemon's, logged, kept in a history, followed
 *   control_alert.c   the configured program, run for every event
 *   control_scrub.c   the online scrub (raidfsctl scrub start|stop|status)
 *   control_damage.c  the files with unrecoverable data (status, clear)
 *
 * Threads: the server thread (socket, every request), the events thread
 * (turns raidcore's events into named ones, logs them), the alert thread
 * (runs the program, one event at a time, with a timeout).  None of them
 * serves FUSE and FUSE never waits for them: a slow request, a hung
 * program or a client that stops reading costs file I/O nothing.
 *
 * Usage (raidfs_main.c):
 *   control_start(&params, &c)   once mounted, before recovery starts (so
 *                                a resumed rebuild's events are seen)
 *   ... serve ...
 *   control_stop(c)              before source_close: no request then
 *                                touches the array; events stop
 */
#ifndef RAIDFS_CONTROL_H
#define RAIDFS_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include <json.h>

#include "raidcore.h"

struct fs;
struct control;
struct ctl_events;
struct ctl_damage;

struct control_params {
	struct rc_array *array;
	struct fs *fs;
	const char *mountpoint;
	const char *program;          /* alert program, or NULL */
	unsigned program_timeout_s;   /* 0: the default */
};

int control_start(const struct control_params *p, struct control **out);
void control_stop(struct control *c);

/* ---- control_events.c ---- */
/* Event names, as mdadm's monitor names them where it has one. */
#define CTL_EV_DEGRADED "DegradedArray"
#define CTL_EV_FAIL "Fail"
#define CTL_EV_SUSPENDED "ArraySuspended"
#define CTL_EV_SPARE_ACTIVE "SpareActive"
#define CTL_EV_REBUILD_STARTED "RebuildStarted"
#define CTL_EV_REBUILD_PROGRESS "RebuildProgress"
#define CTL_EV_REBUILD_FINISHED "RebuildFinished"
#define CTL_EV_MEMBER_RETURNED "MemberReturned"
#define CTL_EV_SPARE_ADDED "SpareAdded"
#define CTL_EV_REMOVED "DeviceRemoved"
#define CTL_EV_REPLACE_STARTED "ReplaceStarted"
#define CTL_EV_REPLACE_FINISHED "ReplaceFinished"
#define CTL_EV_MEMBER_DAMAGED "MemberDamaged"
#define CTL_EV_TEST "TestMessage"
/* raised by the online scrub (control_scrub.c); UnrecoverableData also by
 * the damage list (control_damage.c), naming the files */
#define CTL_EV_SCRUB_FINISHED "ScrubFinished"
#define CTL_EV_CSUM_REPAIRED "ChecksumRepaired"
#define CTL_EV_UNRECOVERABLE "UnrecoverableData"

struct ctl_event {
	uint64_t seq;                 /* 1, 2, ... in the order they happened */
	uint64_t time_ns;             /* CLOCK_REALTIME */
	const char *name;             /* CTL_EV_* */
	int slot;                     /* -1: none */
	char device[256];
	char message[1024];           /* UnrecoverableData: the files */
	int progress;                 /* percent, -1: none */
};

/*
 * The events of one array: wake(wake_ctx) is called (from the events
 * thread) after each new one is in the history; program (may be NULL) is
 * run for each (control_alert.c).
 */
int ctl_events_new(struct rc_array *a, const char *mountpoint,
		   const char *program, unsigned timeout_s,
		   void (*wake)(void *ctx), void *wake_ctx,
		   struct ctl_events **out);
/* Stops taking raidcore's events, then the threads; frees ev. */
void ctl_events_free(struct ctl_events *ev);
/* An event of the daemon's own (TestMessage, MemberReturned). */
void ctl_events_post(struct ctl_events *ev, const char *name, int slot,
		     const char *device, const char *message);
/* Copies the events after seq (at most max, oldest first) into out; the
 * number copied. */
size_t ctl_events_since(struct ctl_events *ev, uint64_t seq,
			struct ctl_event *out, size_t max);
json_object *ctl_event_json(const struct ctl_event *e);
/* Where raidcore's RC_EV_LOST go (NULL: nowhere); once this returns with
 * NULL, no call into the former one is running or will come. */
void ctl_events_set_damage(struct ctl_events *ev, struct ctl_damage *d);
/* The seq of the newest event in the history (0: none yet). */
uint64_t ctl_events_last_seq(struct ctl_events *ev);
/* members faulted (Fail events) since the mount: told at once, before
 * the event is queued */
uint64_t ctl_events_fails(struct ctl_events *ev);
/* Where slot's running rebuild started: when (CLOCK_MONOTONIC ns) and
 * from which stripe; false when none was seen starting. */
bool ctl_events_rebuild_start(struct ctl_events *ev, int slot,
			      uint64_t *mono_ns, uint64_t *from);
/* The same for the online replacement's copy. */
bool ctl_events_replace_start(struct ctl_events *ev, uint64_t *mono_ns,
			      uint64_t *from);

/* ---- control_alert.c ---- */
struct ctl_alert;
int ctl_alert_new(const char *program, unsigned timeout_s,
		  const char *mountpoint, const uint8_t *uuid,
		  struct ctl_alert **out);
/* Queues e for the program; never blocks (a full queue drops the oldest,
 * logged). */
void ctl_alert_queue(struct ctl_alert *al, const struct ctl_event *e);
/* Runs what is queued (each within its timeout), then frees al. */
void ctl_alert_free(struct ctl_alert *al);

/* ---- control_scrub.c ---- */
struct ctl_scrub;
struct ctl_damage;
/* damage (may be NULL): the list a clean scrub clears
 * (ctl_damage_scrubbed). */
int ctl_scrub_new(struct rc_array *a, struct ctl_events *ev,
		  struct ctl_damage *damage, struct ctl_scrub **out);
/* Starts a scrub, or resumes a stopped one; -EBUSY while one runs.
 * msg says what happened.  Server thread only (as stop and free). */
int ctl_scrub_start(struct ctl_scrub *sc, char *msg, size_t len);
/* Stops the running scrub between two ranges; -EALREADY when none runs. */
int ctl_scrub_stop(struct ctl_scrub *sc, char *msg, size_t len);
bool ctl_scrub_running(struct ctl_scrub *sc);
/* Starts the scrub that verifies members found damaged, when it is due
 * (rc_info.verify_slots).  Server thread only. */
void ctl_scrub_verify_poll(struct ctl_scrub *sc);
/* state, position, the counts so far, and the last scrub that went
 * through, kept on the members (the status object's "scrub") */
json_object *ctl_scrub_json(struct ctl_scrub *sc);
/* Stops a running scrub, frees sc. */
void ctl_scrub_free(struct ctl_scrub *sc);

/* ---- control_damage.c ---- */
/* The files with unrepaired damage (the status object's "damaged"). */
struct ctl_damage;
/* Its thread names the files of the blocks noted, through fs, and posts
 * UnrecoverableData to ev for each new range. */
int ctl_damage_new(struct fs *fs, struct ctl_events *ev,
		   struct ctl_damage **out);
/* Logical blocks [block, block + count) cannot be established (raidcore's
 * RC_EV_LOST): queued, never blocks; callable under raidcore's locks. */
void ctl_damage_note(struct ctl_damage *d, uint64_t block, uint64_t count);
/* raidfsctl clear: the list is emptied (repaired, or the files deleted). */
void ctl_damage_clear(struct ctl_damage *d);
/* A scrub that started at since_ns (CLOCK_MONOTONIC) went through the
 * whole array and found nothing it could not establish: every block
 * listed before it reads again (repaired, rewritten, or freed), and the
 * list is emptied, as ZFS's error log after a clean scrub - unless a block
 * was noted since.  The entries dropped. */
size_t ctl_damage_scrubbed(struct ctl_damage *d, uint64_t since_ns);
json_object *ctl_damage_json(struct ctl_damage *d);
/* Stops the thread (what is queued is dropped), frees d. */
void ctl_damage_free(struct ctl_damage *d);

/* ---- control_status.c ---- */
/* The status object of the array (schema version CTL_STATUS_VERSION);
 * sc may be NULL (no scrub shown). */
#define CTL_STATUS_VERSION 1
json_object *ctl_status_json(struct rc_array *a, struct fs *fs,
			     const char *mountpoint, struct ctl_events *ev,
			     struct ctl_scrub *sc, struct ctl_damage *dmg);

/* ---- control_cmds.c ---- */
struct ctl_request;
/* Carries out a request other than status, identify and events: 0 or a
 * negative errno with msg saying why. */
int ctl_cmd_run(struct rc_array *a, struct ctl_events *ev,
		const struct ctl_request *r, char *msg, size_t msglen);

#endif
