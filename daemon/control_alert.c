/*
 * control_alert: the program the configuration names (`program =`,
 * mdadm's PROGRAM, ZFS's zedlets), run once for every event:
 *
 *   PROGRAM EVENT MOUNTPOINT [DEVICE]
 *
 * with the details in its environment (RAIDFS_EVENT, RAIDFS_SEQ,
 * RAIDFS_TIME, RAIDFS_UUID, RAIDFS_MOUNTPOINT, RAIDFS_SLOT,
 * RAIDFS_DEVICE, RAIDFS_PROGRESS, RAIDFS_MESSAGE; docs/CONFIG.md).
 *
 * One thread runs them one at a time, in the order of the events, so the
 * program sees them in order.  Nothing waits for it: events are queued
 * (a full queue drops the oldest, logged).  A program that runs longer
 * than its timeout is killed with its process group; one that fails is
 * logged.  It inherits no descriptor beyond stdin, stdout and stderr (no
 * member, no flock, no FUSE device), the default signal mask and
 * dispositions, and a process group of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "control.h"
#include "log.h"

#define ALERT_QUEUE 64
#define ALERT_TIMEOUT_DEFAULT_S 10
#define ALERT_ENV_MAX 16

extern char **environ;

struct ctl_alert {
	char *program;
	unsigned timeout_s;
	char mountpoint[4096];
	char uuid[37];
	pthread_mutex_t lock;           /* a leaf: the queue and stop */
	pthread_cond_t cond;
	struct ctl_event q[ALERT_QUEUE];
	unsigned head, count;
	uint64_t dropped;
	bool stop;
	pthread_t thread;
	char vars[ALERT_ENV_MAX][4400];   /* the alert thread's: RAIDFS_* */
};

void ctl_alert_queue(struct ctl_alert *al, const struct ctl_event *e)
{
	pthread_mutex_lock(&al->lock);
	if (al->count == ALERT_QUEUE) {
		al->head = (al->head + 1) % ALERT_QUEUE;
		al->count--;
		al->dropped++;
	}
	al->q[(al->head + al->count++) % ALERT_QUEUE] = *e;
	pthread_cond_signal(&al->cond);
	pthread_mutex_unlock(&al->lock);
}

/* RAIDFS_* for e (in al->vars), then the daemon's own environment
 * without them. */
static char **alert_env(struct ctl_alert *al, const struct ctl_event *e)
{
	char (*vars)[4400] = al->vars;
	size_t n = 0, own = 0;
	char **env;

	while (environ[own])
		own++;
	env = calloc(own + ALERT_ENV_MAX + 1, sizeof(*env));
	if (!env)
		return NULL;
#define VAR(...) (snprintf(vars[n], sizeof(vars[0]), __VA_ARGS__), env[n] = vars[n], n++)
	VAR("RAIDFS_EVENT=%s", e->name);
	VAR("RAIDFS_SEQ=%llu", (unsigned long long)e->seq);
	VAR("RAIDFS_TIME=%llu", (unsigned long long)(e->time_ns / 1000000000ull));
	VAR("RAIDFS_UUID=%s", al->uuid);
	VAR("RAIDFS_MOUNTPOINT=%s", al->mountpoint);
	VAR("RAIDFS_SLOT=%s", "");
	if (e->slot >= 0)
		snprintf(vars[n - 1], sizeof(vars[0]), "RAIDFS_SLOT=%d", e->slot);
	VAR("RAIDFS_DEVICE=%s", e->device);
	VAR("RAIDFS_PROGRESS=%s", "");
	if (e->progress >= 0)
		snprintf(vars[n - 1], sizeof(vars[0]), "RAIDFS_PROGRESS=%d",
			 e->progress);
	VAR("RAIDFS_MESSAGE=%s", e->message);
#undef VAR
	for (size_t i = 0; i < own; i++)
		if (strncmp(environ[i], "RAIDFS_", 7))
			env[n++] = environ[i];
	return env;
}

static int alert_spawn(struct ctl_alert *al, const struct ctl_event *e,
		       pid_t *pid)
{
	char *argv[] = { al->program, (char *)e->name, al->mountpoint,
			 e->device[0] ? (char *)e->device : NULL, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	char **env = alert_env(al, e);
	int ret;

	if (!env)
		return ENOMEM;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
				 POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	ret = posix_spawn(pid, al->program, &fa, &at, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(env);
	return ret;
}

/* Waits for pid up to the timeout; kills its group past it. */
static void alert_wait(struct ctl_alert *al, const struct ctl_event *e,
		       pid_t pid)
{
	int fd = pidfd_open(pid, 0), status = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	bool late = false;

	if (fd >= 0) {
		late = poll(&p, 1, (int)al->timeout_s * 1000) == 0;
		close(fd);
	}
	if (late) {
		kill(-pid, SIGKILL);
		rfs_log(LOG_ERR, "alert program %s (%s): still running after "
			"%u s: killed", al->program, e->name, al->timeout_s);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!late && WIFEXITED(status) && WEXITSTATUS(status))
		rfs_log(LOG_ERR, "alert program %s (%s): exit status %d",
			al->program, e->name, WEXITSTATUS(status));
	else if (!late && WIFSIGNALED(status))
		rfs_log(LOG_ERR, "alert program %s (%s): killed by signal %d",
			al->program, e->name, WTERMSIG(status));
}

static void alert_run(struct ctl_alert *al, const struct ctl_event *e)
{
	pid_t pid;
	int ret = alert_spawn(al, e, &pid);

	if (ret) {
		rfs_log(LOG_ERR, "alert program %s (%s): cannot run: %s",
			al->program, e->name, strerror(ret));
		return;
	}
	alert_wait(al, e, pid);
}

static void *alert_main(void *arg)
{
	struct ctl_alert *al = arg;
	struct ctl_event e;
	uint64_t dropped;

	pthread_mutex_lock(&al->lock);
	for (;;) {
		while (!al->count && !al->stop)
			pthread_cond_wait(&al->cond, &al->lock);
		if (al->stop)
			break;
		e = al->q[al->head];
		al->head = (al->head + 1) % ALERT_QUEUE;
		al->count--;
		dropped = al->dropped;
		al->dropped = 0;
		pthread_mutex_unlock(&al->lock);
		if (dropped)
			rfs_log(LOG_WARNING, "alert program %s: %llu events not "
				"given to it (it is too slow)", al->program,
				(unsigned long long)dropped);
		alert_run(al, &e);
		pthread_mutex_lock(&al->lock);
	}
	if (al->count)
		rfs_log(LOG_WARNING, "alert program %s: %u events not given to "
			"it (unmounting)", al->program, al->count);
	pthread_mutex_unlock(&al->lock);
	return NULL;
}

int ctl_alert_new(const char *program, unsigned timeout_s,
		  const char *mountpoint, const uint8_t *uuid,
		  struct ctl_alert **out)
{
	struct ctl_alert *al = calloc(1, sizeof(*al));
	int ret = -ENOMEM;

	if (!al || !(al->program = strdup(program)))
		goto out_free;
	al->timeout_s = timeout_s ? timeout_s : ALERT_TIMEOUT_DEFAULT_S;
	snprintf(al->mountpoint, sizeof(al->mountpoint), "%s", mountpoint);
	uuid_unparse_lower(uuid, al->uuid);
	pthread_mutex_init(&al->lock, NULL);
	pthread_cond_init(&al->cond, NULL);
	ret = -pthread_create(&al->thread, NULL, alert_main, al);
	if (!ret) {
		*out = al;
		return 0;
	}
	pthread_cond_destroy(&al->cond);
	pthread_mutex_destroy(&al->lock);
out_free:
	if (al)
		free(al->program);
	free(al);
	return ret;
}

/* The event being run finishes (within its timeout); the rest are
 * dropped: an unmount does not wait for a queue of slow programs. */
void ctl_alert_free(struct ctl_alert *al)
{
	pthread_mutex_lock(&al->lock);
	al->stop = true;
	pthread_cond_signal(&al->cond);
	pthread_mutex_unlock(&al->lock);
	pthread_join(al->thread, NULL);
	pthread_cond_destroy(&al->cond);
	pthread_mutex_destroy(&al->lock);
	free(al->program);
	free(al);
}
