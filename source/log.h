/*
 * log: where a program's messages go, shared by every raidfs program.
 *
 * In the foreground they go to stderr.  Once the daemon has detached they
 * go to the system's log, and never nowhere: the first of
 *   1. the log file the options name (logfile=PATH), if any;
 *   2. syslog, when a syslog socket (/dev/log) accepts a connection;
 *   3. the kernel's log (/dev/kmsg, read with dmesg or journalctl -k);
 *   4. stderr, when nothing else can be written.
 * syslog(3) drops a message silently when no syslog daemon listens, so the
 * socket is tried before every message: a syslog daemon that starts or
 * stops later is followed.  While the daemon daemonises, both stderr and
 * the system's log (the user's terminal still shows why a mount failed).
 * A tool that prints its own way (fsck's phases) installs a sink instead.
 * raidcore's and the filesystem's messages are routed here too
 * (rfs_log_init installs rc_set_logger and fs_set_logger).
 *
 * Usage: rfs_log_init(RFS_LOG_STDERR) once; rfs_log(LOG_ERR, "...").
 * Thread-safe.
 */
#ifndef RAIDFS_LOG_H
#define RAIDFS_LOG_H

#include <stddef.h>
#include <syslog.h>

enum rfs_log_target {
	RFS_LOG_STDERR,
	RFS_LOG_BOTH,          /* daemonising: stderr (the user's terminal is
				  still there) and the system's log */
	RFS_LOG_SYSLOG,        /* the system's log, as above */
};

/* While daemonising (RFS_LOG_BOTH), only messages at prio or more severe
 * go to stderr too (the system's log gets them all): a mount helper says
 * nothing on success unless asked (-v), as mount(8)'s helpers do.
 * Default: LOG_DEBUG, everything. */
void rfs_log_stderr_max(int prio);
/* The program's name in messages and syslog ("raidfs" when never set). */
void rfs_log_ident(const char *ident);
void rfs_log_init(enum rfs_log_target target);
/*
 * Messages for the system's log go to the file at path (appended, one
 * timestamped line each; a relative path is taken from the working
 * directory now).  0 or -errno (the file cannot be opened: nothing
 * changes).
 */
int rfs_log_file(const char *path);
/* Closes what the system's log is written through, so the next message
 * opens it again: the log file after logrotate moved it, syslog after its
 * daemon restarted (SIGHUP). */
void rfs_log_reopen(void);
/* Where the next message for the system's log goes, for messages: "syslog",
 * "the kernel log (/dev/kmsg)", the log file's path, or "stderr". */
const char *rfs_log_where(char *buf, size_t len);
/* Every message goes to sink instead (NULL: back to the target). */
void rfs_log_sink(void (*sink)(int prio, const char *msg));
void rfs_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
