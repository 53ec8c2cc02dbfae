/*
 * log: where the programs' messages go (see log.h).
 *
 * Lock: sys_lock guards the descriptors of the system's log (the log file,
 * /dev/kmsg, syslog's connection); a leaf, held only while one message is
 * written.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <paths.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "raidcore.h"
#include "fs.h"
#include "log.h"

static enum rfs_log_target log_target = RFS_LOG_STDERR;
/* RFS_LOG_BOTH: the least severe message that also goes to stderr */
static int stderr_max = LOG_DEBUG;
static void (*log_sink)(int prio, const char *msg);
static const char *log_ident = "raidfs";

static pthread_mutex_t sys_lock = PTHREAD_MUTEX_INITIALIZER;
static char *file_path;         /* logfile=, absolute; NULL: none */
static int file_fd = -1;
static int kmsg_fd = -1;
static bool syslog_opened;

/* Does a syslog daemon listen?  syslog(3) would not say: it drops. */
static bool syslog_listens(void)
{
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool ok = false;
	int fd, i;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", _PATH_LOG);
	for (i = 0; i < 2 && !ok; i++) {
		fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		close(fd);
	}
	return ok;
}

static int fd_reopen(int *fd, const char *path, int flags)
{
	if (*fd < 0)
		*fd = open(path, flags | O_CLOEXEC, 0640);
	return *fd;
}

static bool write_line(int fd, const char *line, size_t len)
{
	return write(fd, line, len) == (ssize_t)len;
}

static bool file_emit(const char *msg)
{
	char line[1200], when[40];
	struct tm tm;
	time_t now = time(NULL);
	int n;

	if (fd_reopen(&file_fd, file_path, O_WRONLY | O_APPEND | O_CREAT) < 0)
		return false;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S%z",
		 localtime_r(&now, &tm));
	n = snprintf(line, sizeof(line), "%s %s[%d]: %s\n", when, log_ident,
		     (int)getpid(), msg);
	return write_line(file_fd, line, (size_t)n < sizeof(line) ?
			  (size_t)n : sizeof(line) - 1);
}

static bool syslog_emit(int prio, const char *msg)
{
	if (!syslog_listens())
		return false;
	if (!syslog_opened)
		openlog(log_ident, LOG_PID, LOG_DAEMON);
	syslog_opened = true;
	syslog(prio, "%s", msg);
	return true;
}

/* The kernel's log: "<facility|level>ident[pid]: msg", as syslog would. */
static bool kmsg_emit(int prio, const char *msg)
{
	char line[1200];
	int n;

	if (fd_reopen(&kmsg_fd, "/dev/kmsg", O_WRONLY) < 0)
		return false;
	n = snprintf(line, sizeof(line), "<%d>%s[%d]: %s\n",
		     LOG_DAEMON | (prio & LOG_PRIMASK), log_ident,
		     (int)getpid(), msg);
	return write_line(kmsg_fd, line, (size_t)n < sizeof(line) ?
			  (size_t)n : sizeof(line) - 1);
}

/* The system's log, in log.h's order; false when only stderr is left. */
static bool sys_emit(int prio, const char *msg)
{
	bool done;

	pthread_mutex_lock(&sys_lock);
	done = (file_path && file_emit(msg)) || syslog_emit(prio, msg) ||
	       kmsg_emit(prio, msg);
	pthread_mutex_unlock(&sys_lock);
	return done;
}

static void log_emit(int prio, const char *msg)
{
	bool to_stderr = log_target == RFS_LOG_STDERR ||
			 (log_target == RFS_LOG_BOTH &&
			  (prio & LOG_PRIMASK) <= stderr_max);

	if (log_sink) {
		log_sink(prio, msg);
		return;
	}
	if (log_target != RFS_LOG_STDERR && !sys_emit(prio, msg))
		to_stderr = true;
	if (to_stderr)
		fprintf(stderr, "%s: %s\n", log_ident, msg);
}

static void log_from_library(int prio, const char *msg)
{
	log_emit(prio, msg);
}

void rfs_log_stderr_max(int prio)
{
	stderr_max = prio;
}

void rfs_log_ident(const char *ident)
{
	log_ident = ident;
}

void rfs_log_init(enum rfs_log_target target)
{
	log_target = target;
	rc_set_logger(log_from_library);
	fs_set_logger(log_from_library);
}

int rfs_log_file(const char *path)
{
	char cwd[PATH_MAX], *abs;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

	if (fd < 0)
		return -errno;
	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		abs = strdup(path);
	else if (asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	if (!abs) {
		close(fd);
		return -ENOMEM;
	}
	pthread_mutex_lock(&sys_lock);
	free(file_path);
	if (file_fd >= 0)
		close(file_fd);
	file_path = abs;
	file_fd = fd;
	pthread_mutex_unlock(&sys_lock);
	return 0;
}

void rfs_log_reopen(void)
{
	pthread_mutex_lock(&sys_lock);
	if (file_fd >= 0)
		close(file_fd);
	if (kmsg_fd >= 0)
		close(kmsg_fd);
	file_fd = kmsg_fd = -1;
	if (syslog_opened)
		closelog();
	syslog_opened = false;
	pthread_mutex_unlock(&sys_lock);
}

const char *rfs_log_where(char *buf, size_t len)
{
	const char *where = "stderr";

	pthread_mutex_lock(&sys_lock);
	if (log_target == RFS_LOG_STDERR)
		where = "stderr";
	else if (file_path)
		where = file_path;
	else if (syslog_listens())
		where = "syslog";
	else if (fd_reopen(&kmsg_fd, "/dev/kmsg", O_WRONLY) >= 0)
		where = "the kernel log (/dev/kmsg)";
	snprintf(buf, len, "%s", where);
	pthread_mutex_unlock(&sys_lock);
	return buf;
}

void rfs_log_sink(void (*sink)(int prio, const char *msg))
{
	log_sink = sink;
	rc_set_logger(log_from_library);
	fs_set_logger(log_from_library);
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
