/*
 * fuse_log: where the daemon's messages go.  In the foreground (-f) they go
 * to stderr; once daemonised, to syslog as "raidfs"; while daemonising,
 * both (the user's terminal still shows why a mount failed).  libfuse's own
 * messages are routed the same way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "fuse_ops.h"

static enum rfs_log_target log_target = RFS_LOG_STDERR;

static void log_vemit(int prio, const char *fmt, va_list ap)
{
	va_list ap2;

	va_copy(ap2, ap);
	if (log_target != RFS_LOG_SYSLOG) {
		fputs("raidfs: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	if (log_target != RFS_LOG_STDERR)
		vsyslog(prio, fmt, ap2);
	va_end(ap2);
}

/* libfuse ends its messages with a newline; syslog adds its own. */
static void log_fuse(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char msg[1024];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	rfs_log((int)level, "%s", msg);
}

void rfs_log_init(enum rfs_log_target target)
{
	if (target != RFS_LOG_STDERR && log_target == RFS_LOG_STDERR)
		openlog("raidfs", LOG_PID, LOG_DAEMON);
	log_target = target;
	fuse_set_log_func(log_fuse);
}

void rfs_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(prio, fmt, ap);
	va_end(ap);
}
