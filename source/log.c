/*
 * log: where the programs' messages go (see log.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "raidcore.h"
#include "log.h"

static enum rfs_log_target log_target = RFS_LOG_STDERR;
static void (*log_sink)(int prio, const char *msg);
static const char *log_ident = "raidfs";

static void log_emit(int prio, const char *msg)
{
	if (log_sink) {
		log_sink(prio, msg);
		return;
	}
	if (log_target != RFS_LOG_SYSLOG)
		fprintf(stderr, "%s: %s\n", log_ident, msg);
	if (log_target != RFS_LOG_STDERR)
		syslog(prio, "%s", msg);
}

static void log_from_raidcore(int prio, const char *msg)
{
	log_emit(prio, msg);
}

void rfs_log_ident(const char *ident)
{
	log_ident = ident;
}

void rfs_log_init(enum rfs_log_target target)
{
	if (target != RFS_LOG_STDERR && log_target == RFS_LOG_STDERR)
		openlog(log_ident, LOG_PID, LOG_DAEMON);
	log_target = target;
	rc_set_logger(log_from_raidcore);
}

void rfs_log_sink(void (*sink)(int prio, const char *msg))
{
	log_sink = sink;
	rc_set_logger(log_from_raidcore);
}

void rfs_log(int prio, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_emit(prio, msg);
}
