/*
 * log: where a program's messages go, shared by every raidfs program.
 *
 * In the foreground they go to stderr; once the daemon has detached, to
 * syslog as "raidfs"; while it daemonises, both (the user's terminal still
 * shows why a mount failed).  A tool that prints its own way (fsck's
 * phases) installs a sink instead.  raidcore's messages are routed here
 * too (rfs_log_init installs rc_set_logger).
 *
 * Usage: rfs_log_init(RFS_LOG_STDERR) once; rfs_log(LOG_ERR, "...").
 */
#ifndef RAIDFS_LOG_H
#define RAIDFS_LOG_H

#include <syslog.h>

enum rfs_log_target {
	RFS_LOG_STDERR,
	RFS_LOG_BOTH,          /* daemonising: the user's terminal is still there */
	RFS_LOG_SYSLOG,
};

/* The program's name in messages and syslog ("raidfs" when never set). */
void rfs_log_ident(const char *ident);
void rfs_log_init(enum rfs_log_target target);
/* Every message goes to sink instead (NULL: back to the target). */
void rfs_log_sink(void (*sink)(int prio, const char *msg));
void rfs_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
