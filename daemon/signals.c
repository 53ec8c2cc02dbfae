/*
 * signals: what the daemon does with the signals an administrator or its
 * surroundings send it.  None of these ends it:
 *
 *   SIGUSR1   logs a status summary: the array, every member's state and
 *             error counters, free space, the ENOSPC check's state
 *   SIGHUP    reopens the log (a log file after logrotate, syslog after
 *             its daemon restarted) and says where messages now go
 *   SIGUSR2   logged and ignored (reserved)
 *   SIGPIPE   ignored: a write to a closed pipe or socket fails with EPIPE
 *             (stderr of `raidfs -f ... | tee` when tee is gone)
 *
 * SIGTERM and SIGINT leave the session loop and unmount cleanly (libfuse's
 * handlers, fuse_set_signal_handlers); umount does the same.
 *
 * How: the four are blocked before any thread exists (daemon_signals_block,
 * first thing in main), so every thread inherits the mask and none of them
 * can be killed by one; once mounted, one thread takes them with
 * sigwaitinfo and acts in ordinary thread context (no async-signal-safety
 * limits on logging).  One that arrives before that thread starts, or after
 * it stops, stays pending and harmless.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "daemon.h"
#include "log.h"

static sigset_t sig_set;
static pthread_t sig_thread;
static bool sig_running;
static bool sig_stop;           /* atomic */
static void (*sig_status)(void *arg);
static void *sig_status_arg;

void daemon_signals_block(void)
{
	sigemptyset(&sig_set);
	sigaddset(&sig_set, SIGUSR1);
	sigaddset(&sig_set, SIGUSR2);
	sigaddset(&sig_set, SIGHUP);
	sigaddset(&sig_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sig_set, NULL);
}

static void signal_act(const siginfo_t *si)
{
	char where[4200];

	switch (si->si_signo) {
	case SIGUSR1:
		rfs_log(LOG_INFO, "SIGUSR1 (from pid %d): status", si->si_pid);
		sig_status(sig_status_arg);
		break;
	case SIGHUP:
		rfs_log_reopen();
		rfs_log(LOG_INFO, "SIGHUP (from pid %d): log reopened, messages "
			"go to %s", si->si_pid,
			rfs_log_where(where, sizeof(where)));
		break;
	default:
		rfs_log(LOG_INFO, "SIG%s (from pid %d) ignored",
			sigabbrev_np(si->si_signo), si->si_pid);
		break;
	}
}

static void *signals_main(void *arg)
{
	siginfo_t si;

	for (;;) {
		if (sigwaitinfo(&sig_set, &si) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (__atomic_load_n(&sig_stop, __ATOMIC_ACQUIRE))
			break;
		signal_act(&si);
	}
	return NULL;
}

int daemon_signals_start(void (*status)(void *arg), void *arg)
{
	sig_status = status;
	sig_status_arg = arg;
	sig_stop = false;
	if (pthread_create(&sig_thread, NULL, signals_main, NULL))
		return -EAGAIN;
	sig_running = true;
	return 0;
}

/* The thread takes a signal sent to it alone (pthread_kill) as any other:
 * the flag set first tells it to end. */
void daemon_signals_stop(void)
{
	if (!sig_running)
		return;
	__atomic_store_n(&sig_stop, true, __ATOMIC_RELEASE);
	pthread_kill(sig_thread, SIGUSR2);
	pthread_join(sig_thread, NULL);
	sig_running = false;
}
