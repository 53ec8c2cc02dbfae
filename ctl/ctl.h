/*
 * raidfsctl: the administrator's tool for mounted raidfs arrays, talking
 * to each array's daemon through its control socket (daemon/control_proto.h).
 *
 *   raidfsctl.c     the command line: a small main that dispatches
 *   client.c        finding an array's socket (by mount point or uuid),
 *                   one request and its reply
 *   cmd_status.c    status [-v] [--json] [MOUNTPOINT|UUID]
 *   cmd_manage.c    fail, remove, add, clear, set, test-alert
 *   cmd_events.c    events [-f] [--json]
 *   cmd_scrub.c     scrub start [--wait]|stop|status
 *
 * Exit codes (docs/DESIGN.md "raidfsctl"): CTL_EXIT_*.
 */
#ifndef RAIDFS_CTL_H
#define RAIDFS_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include <json.h>

#include "control_proto.h"

#define CTL_PROG "raidfsctl"

enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_REFUSED = 1,      /* the daemon refused or the command failed */
	CTL_EXIT_USAGE = 2,
	CTL_EXIT_NOT_MOUNTED = 3,  /* no mounted raidfs array there */
	CTL_EXIT_PERM = 4,         /* permission denied (not root) */
	CTL_EXIT_COMM = 5,         /* the daemon did not answer as expected */
};

/* How long a daemon may take (client.c sock_limit): to accept and say
 * whom it serves, and to answer a request.  Events wait without limit. */
#define CTL_ANSWER_MS 2000u
#define CTL_REPLY_MS 30000u

struct ctl_conn {
	int fd;
	char where[4096];          /* for messages: the mount point or uuid */
};

/*
 * Connects to the daemon serving TARGET: a mount point (or a path in
 * it: the raidfs mount it is on), or an array uuid.  On failure prints
 * why and returns the exit code.
 */
int ctl_connect(const char *target, struct ctl_conn *c);
/* Every array's socket under CTL_RUN_DIR that answers, by path (malloc'd
 * list, NULL-terminated); NULL when there is none (or on error). */
char **ctl_sockets_list(void);
int ctl_connect_path(const char *path, struct ctl_conn *c);
/* Every fuse.raidfs mount point in the mount table (malloc'd list,
 * NULL-terminated, or NULL); whether one's daemon is gone (a dead mount:
 * ENOTCONN), and the message that says so. */
char **ctl_mounts_list(void);
bool ctl_mount_dead(const char *mp);
void ctl_dead_say(const char *mp);
void ctl_close(struct ctl_conn *c);
/*
 * Sends r and waits for its reply: CTL_EXIT_OK with *result (the
 * caller's, may be NULL) and the daemon's message in msg, or the exit
 * code after printing why (the daemon's message).
 */
int ctl_call(struct ctl_conn *c, const struct ctl_request *r,
	     json_object **result, char *msg, size_t msglen);
/* The next event packet of a followed stream: 0 with *ev, or -errno. */
int ctl_next_event(struct ctl_conn *c, json_object **ev);

/* A reply's fields: "" / 0 / false when absent or null. */
const char *ctl_json_str(json_object *o, const char *key);
uint64_t ctl_json_u64(json_object *o, const char *key);
bool ctl_json_has(json_object *o, const char *key);

/* An exit code for a daemon's errno. */
int ctl_exit_for(int err);

int cmd_status(int argc, char **argv);
int cmd_manage(enum ctl_cmd cmd, int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_scrub(int argc, char **argv);
/* The status object's "scrub", as text. */
void ctl_scrub_print(json_object *scrub);

#endif
