/*
 * raidfs: the daemon that serves a raidfs array through FUSE.
 *
 *   raidfs [-f] [-o OPTIONS] SOURCE MOUNTPOINT
 *
 * Run as mount.raidfs it takes mount(8)'s helper command line instead
 * (mount_main.c, daemon.h).  SOURCE is the members joined by ':' or an
 * array configuration file (docs/CONFIG.md); OPTIONS as source/config.h
 * parses them.  Without -f the daemon goes to the background, but only
 * once the filesystem is mounted or has failed to mount: the command's
 * exit status says which (0, or 32 as mount(8) helpers do), and the reason
 * is printed on the terminal.
 *
 * Order of events, every check that can fail before the first write:
 *   block SIGUSR1/USR2/HUP/PIPE (signals.c), parse SOURCE and -o
 *   fork (before any thread exists: raidcore and fs start threads)
 *   create the FUSE session (its options checked; nothing mounted)
 *   find the members (a scan by uuid, degraded_wait: scan.h),
 *   assemble the array, mount fs, mount the FUSE session
 *   start the control socket (control.h), then recovery (rebuilds);
 *   tell the waiting parent; detach
 *   serve until umount or SIGTERM/SIGINT; stop the control socket
 *   fs_unmount (commit, checkpoint, clean) and rc_array_close (clean)
 * A mount that fails closes everything before the parent hears of it, so
 * nothing is written after the command returned.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <getopt.h>
#include <libmount.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "raidcore.h"
#include "fs.h"
#include "config.h"
#include "control.h"
#include "daemon.h"
#include "fuse_ops.h"
#include "prog.h"
#include "scan.h"
#include "source.h"

/* Entry and attribute cache lifetime: the daemon is the only writer. */
#define RFS_TIMEOUT_S 86400.0

struct daemon_state {
	struct config_source src;
	struct config_opts o;
	struct source_array sa;
	struct rfs_daemon d;
	struct fuse_session *se;
	struct control *ctl;    /* the control socket (raidfsctl), or NULL */
	int notify_fd;          /* pipe to the waiting parent, or -1 */
	bool foreground;
};

static void usage(void)
{
	printf("Usage: " DAEMON_PROG " [-f] [-o OPTIONS] SOURCE MOUNTPOINT\n"
	       "Mounts a raidfs array and serves it through FUSE.\n\n"
	       "  SOURCE         members joined by ':' "
	       "(/srv/a.img:/srv/b.img:/dev/sdc1)\n"
	       "                 or an array configuration file "
	       "(docs/CONFIG.md),\n"
	       "                 or UUID=<array uuid> (its members found "
	       "by scanning)\n"
	       "  -f             stay in the foreground, log to stderr\n"
	       "  -d             -f and -o debug\n"
	       "  -o OPTIONS     ro, allow_other, degraded=allow|refuse, "
	       "degraded_wait=S,\n"
	       "                 nofail, cache_mb=N or cache=SIZE, debug, "
	       "and the kernel\n"
	       "                 flags nosuid, nodev, noexec, noatime, "
	       "sync, ...\n"
	       "  -h, --help     this text\n"
	       "  -V, --version  the version, and those of the on-disk format "
	       "and libfuse\n\n"
	       "Exit status (mount(8)): 0 mounted (with nofail also: not "
	       "mounted, members\nmissing), 1 usage error or bad option, "
	       "32 mount failure.\n");
}

static void version(void)
{
	prog_version_print(DAEMON_PROG);
	printf("libfuse %s\n", fuse_pkgversion());
}

static int usage_error(const char *msg)
{
	prog_usage_error(DAEMON_PROG, msg);
	return MNT_EX_USAGE;
}

int daemon_args_operands(int argc, char **argv, struct daemon_args *a)
{
	if (argc - optind == 2) {
		a->source = argv[optind];
		a->mountpoint = argv[optind + 1];
		return DAEMON_GO;
	}
	prog_usage_error(a->prog, argc - optind < 2 ?
			 "SOURCE and MOUNTPOINT are required" :
			 "too many arguments");
	return MNT_EX_USAGE;
}

/* raidfs's own command line; DAEMON_GO or the exit status. */
static int args_parse(int argc, char **argv, struct daemon_args *a)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->prog = DAEMON_PROG;
	while ((c = getopt_long(argc, argv, "fdo:hV", longs, NULL)) != -1) {
		switch (c) {
		case 'f': a->foreground = true; break;
		case 'd':
			a->foreground = true;
			if (config_opts_append(&a->opts, "debug"))
				return MNT_EX_SYSERR;
			break;
		case 'o':
			if (config_opts_append(&a->opts, optarg))
				return MNT_EX_SYSERR;
			break;
		case 'h': usage(); return MNT_EX_SUCCESS;
		case 'V': version(); return MNT_EX_SUCCESS;
		default: return usage_error(NULL);   /* getopt said what */
		}
	}
	return daemon_args_operands(argc, argv, a);
}

/* ---- daemonising --------------------------------------------------------- */

/*
 * Forks; the parent waits for one status byte from the child and exits
 * with it (MNT_EX_FAIL if the child dies first).  Returns in the child.
 */
static int daemon_fork(int *notify_fd)
{
	int p[2];
	pid_t pid;
	char status = MNT_EX_FAIL;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &status, 1) != 1)
			status = MNT_EX_FAIL;
		_exit(status);
	}
	close(p[0]);
	setsid();
	*notify_fd = p[1];
	return 0;
}

static void daemon_notify(struct daemon_state *s, int status)
{
	char c = (char)status;

	if (s->notify_fd < 0)
		return;
	if (write(s->notify_fd, &c, 1) != 1)
		rfs_log(LOG_ERR, "cannot reach the starting process");
	close(s->notify_fd);
	s->notify_fd = -1;
}

/* After a successful mount: no terminal, no working directory. */
static void daemon_detach(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	char where[4200];

	rfs_log(LOG_INFO, "detaching: messages go to %s from now on",
		rfs_log_where(where, sizeof(where)));
	rfs_log_init(RFS_LOG_SYSLOG);
	if (chdir("/"))
		rfs_log(LOG_WARNING, "chdir /: %s", strerror(errno));
	if (fd < 0)
		return;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

/* ---- mounting ------------------------------------------------------------ */

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

static int fs_start(struct daemon_state *s)
{
	char err[CONFIG_ERR_MAX] = "";
	int ret = source_fs_mount(&s->sa, &s->o, err, sizeof(err));

	if (ret) {
		rfs_log(LOG_ERR, "%s: %s",
			s->src.config_path ? s->src.config_path : "SOURCE", err);
		return ret;
	}
	s->d.fs = s->sa.fs;
	return 0;
}

/* Once mounted: keep the array redundant from now on (resume an
 * interrupted rebuild, rebuild onto a spare when a member fails). */
static void recovery_start(struct daemon_state *s)
{
	if (!s->o.ro && rc_array_start_recovery(s->sa.array) < 0)
		rfs_log(LOG_WARNING, "cannot start the recovery thread");
}

/* Once mounted, before recovery (its events are the control plane's). */
static void control_begin(struct daemon_state *s, const char *mountpoint)
{
	struct control_params p = {
		.array = s->sa.array, .fs = s->sa.fs, .mountpoint = mountpoint,
		.program = s->o.program, .program_timeout_s = s->o.program_timeout_s,
	};

	control_start(&p, &s->ctl);     /* says why itself when it cannot */
}

/* SIGUSR1 */
static void status_log(void *arg)
{
	struct daemon_state *s = arg;

	source_status_log(&s->sa);
	rfs_space_log(&s->d);
}

/*
 * The array could not be opened.  Members missing beyond what the array
 * can do without (-ENODEV: none found, too few, or degraded=refuse) under
 * nofail is what a missing device is to mount(8) with nofail: no failure,
 * so a boot goes on; it is said on one line.
 */
static int array_missing_status(const struct daemon_state *s, int ret,
				const char *err, const char *mountpoint)
{
	if (ret != -ENODEV || !s->o.nofail) {
		rfs_log(LOG_ERR, "%s", err);
		return MNT_EX_FAIL;
	}
	rfs_log(LOG_WARNING, "%s not mounted (nofail): %s", mountpoint, err);
	return MNT_EX_SUCCESS;
}

/* Everything after the fork; returns the exit status. */
static int daemon_run(struct daemon_state *s, const char *source,
		      const char *mountpoint)
{
	char err[CONFIG_ERR_MAX] = "";
	int ret, status = MNT_EX_FAIL;

	s->d.timeout = RFS_TIMEOUT_S;
	s->d.ro = s->o.ro;
	/* fs applies the umask itself (fs_ctx), and must not under a
	 * default ACL: ask the kernel to leave it to us (op_init) */
	s->d.dont_mask = true;
	if (rfs_session_new(&s->o, source, &s->d, &s->se))
		goto out;
	ret = source_members_find(&s->src, &s->o, err, sizeof(err));
	if (!ret)
		ret = source_array_open(&s->src, &s->o, &s->sa, err,
					sizeof(err));
	if (ret) {
		status = array_missing_status(s, ret, err, mountpoint);
		goto out_session;
	}
	s->d.mountpoint = mountpoint;
	/* mount(2) before the filesystem is opened, which writes: an option
	 * the kernel refuses (an empty fsname=) then costs no
	 * write.  The kernel's first request waits in /dev/fuse until the
	 * loop runs; a filesystem that cannot be opened unmounts again. */
	if (rfs_session_mount(s->se, mountpoint))
		goto out_close;
	if (fs_start(s)) {
		fuse_session_unmount(s->se);
		goto out_close;
	}
	control_begin(s, mountpoint);
	recovery_start(s);
	rfs_log(LOG_INFO, "mounted on %s", mountpoint);
	daemon_notify(s, MNT_EX_SUCCESS);
	if (!s->foreground)
		daemon_detach();
	if (daemon_signals_start(status_log, s))
		rfs_log(LOG_WARNING, "no signal thread: SIGUSR1 and SIGHUP "
			"stay pending");
	status = rfs_session_serve(s->se, &s->d, mountpoint) ? 1 :
		 MNT_EX_SUCCESS;
	s->se = NULL;
	daemon_signals_stop();
	control_stop(s->ctl);
out_close:
	/* shut down clean, and not redundant: said so (a rebuild that
	 * stopped at the unmount goes on at the next mount; a member the
	 * unmount's own writes failed counts: it said "clean" then, a
	 * tester's find).  A close that fails after a mount that failed
	 * (the array suspended while the filesystem was opened) leaves 32,
	 * the mount's failure: 1 is a usage error */
	if (source_close(&s->sa)) {
		if (status == MNT_EX_SUCCESS)
			status = 1;
	} else if (status == MNT_EX_SUCCESS)
		rfs_log(LOG_INFO, "%s unmounted, array clean%s", mountpoint,
			s->sa.closed_degraded ? " but degraded (a slot "
			"missing, failed, or not yet "
			"rebuilt)" : "");
out_session:
	if (s->se)
		rfs_session_destroy(s->se);
	s->se = NULL;
out:
	daemon_notify(s, status);
	return status;
}

/* ---- main ---------------------------------------------------------------- */

/*
 * The daemon leaves its working directory, and libfuse unmounts by the
 * path it was given: the mount point is made absolute first.
 */
static int mountpoint_resolve(const char *path, char **abs)
{
	struct statfs sf;
	struct stat st;

	*abs = NULL;
	/* statfs first: a stat of a dead FUSE mount is answered from the
	 * attributes the kernel cached while its daemon lived */
	if ((statfs(path, &sf) && errno == ENOTCONN) || stat(path, &st)) {
		int err = errno;

		/* ENOTCONN: a FUSE mount whose daemon died is still there */
		rfs_log(LOG_ERR, "mount point %s: %s%s", path, strerror(err),
			err == ENOTCONN ? " (a FUSE mount whose daemon is "
			"gone is still there: unmount it first, umount "
			"MOUNTPOINT)" : "");
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		rfs_log(LOG_ERR, "mount point %s is not a directory", path);
		return -ENOTDIR;
	}
	*abs = realpath(path, NULL);
	return *abs ? 0 : -errno;
}

/* A relative member path made absolute, now, in the directory it was
 * given in: the daemon leaves it (fuse_daemonize), and raidfsctl could
 * not name such a member by its path (a tester's find). */
static int path_absolute(char **path)
{
	char cwd[PATH_MAX], *abs;

	if ((*path)[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return 0;
	if (asprintf(&abs, "%s/%s", cwd, *path) < 0)
		return -ENOMEM;
	free(*path);
	*path = abs;
	return 0;
}

/* SOURCE, then -o over what a configuration file said. */
static int config_load(struct daemon_state *s, const struct daemon_args *a)
{
	char err[CONFIG_ERR_MAX] = "";
	int ret = 0;

	if (source_load(a->source, a->opts, &s->src, &s->o, err, sizeof(err))) {
		rfs_log(LOG_ERR, "%s", err);
		return -EINVAL;
	}
	for (int i = 0; ret == 0 && i < s->src.nmembers; i++)
		ret = path_absolute(&s->src.members[i]);
	for (int i = 0; ret == 0 && i < s->src.nspares; i++)
		ret = path_absolute(&s->src.spares[i]);
	if (ret) {
		rfs_log(LOG_ERR, "%s", strerror(-ret));
		return ret;
	}
	if (s->o.ignored)
		rfs_log(LOG_WARNING, "ignoring unknown options: %s",
			s->o.ignored);
	return 0;
}

/* logfile=: opened now, on the terminal's watch, written once detached. */
static int log_file_open(const struct daemon_state *s)
{
	int ret = s->o.logfile ? rfs_log_file(s->o.logfile) : 0;

	if (ret)
		rfs_log(LOG_ERR, "log file %s: %s", s->o.logfile,
			strerror(-ret));
	return ret;
}

/* Is dir (resolved) a raidfs mount point now? */
static bool raidfs_mounted_on(const char *dir)
{
	struct libmnt_table *tb = mnt_new_table();
	struct libmnt_fs *fs = NULL;
	bool yes = false;

	if (tb && mnt_table_parse_file(tb, "/proc/self/mountinfo") == 0) {
		fs = mnt_table_find_target(tb, dir, MNT_ITER_BACKWARD);
		yes = fs && mnt_fs_get_fstype(fs) &&
		      !strcmp(mnt_fs_get_fstype(fs), "fuse.raidfs");
	}
	mnt_unref_table(tb);
	return yes;
}

/*
 * mount -o remount[,ro|rw,...]: mount(8) runs the helper again for a
 * mounted array.  The kernel's FUSE client changes the read-only flag and
 * the mount flags itself (it syncs the filesystem first, so the daemon
 * flushes); nothing is assembled.  Before, the helper took "remount" for
 * an unknown option and assembled the array a second time, which waited
 * for its own members, in use, and failed.  A mount made with ro keeps its
 * array read-only in the daemon: made writable here, its writes still
 * fail with EROFS (docs/DESIGN.md).
 */
static int daemon_remount(const struct daemon_args *a)
{
	unsigned long flags = 0;
	char *dir = NULL;
	int status = MNT_EX_FAIL;

	if (mountpoint_resolve(a->mountpoint, &dir))
		goto out;
	if (!raidfs_mounted_on(dir)) {
		rfs_log(LOG_ERR, "remount: %s is not a mounted raidfs", dir);
		goto out;
	}
	if (mnt_optstr_get_flags(a->opts, &flags,
				 mnt_get_builtin_optmap(MNT_LINUX_MAP))) {
		rfs_log(LOG_ERR, "remount: cannot parse options %s", a->opts);
		status = MNT_EX_USAGE;
		goto out;
	}
	if (a->fake) {
		status = MNT_EX_SUCCESS;
		goto out;
	}
	if (mount(NULL, dir, NULL, flags | MS_REMOUNT, NULL)) {
		rfs_log(LOG_ERR, "remount %s: %s", dir, strerror(errno));
		goto out;
	}
	status = MNT_EX_SUCCESS;
out:
	free(dir);
	return status;
}

/*
 * mount.raidfs -f: SOURCE and the options read; says what it would mount,
 * and each member path named that is not there (the mount would run
 * degraded, or be refused as a typo: a check of a new fstab line or
 * configuration file should say so, and said nothing).
 */
/* The exit status the mount would have for a path that is not there:
 * refused as a typo in a list of paths the daemon checks (source.c), else
 * run without it.  "would run degraded or be refused" with exit 0 was
 * said where the mount then refused with 32 (a tester's find). */
static int fake_report(const struct daemon_state *s,
		       const struct daemon_args *a)
{
	bool named = !s->src.config_path && !s->src.has_uuid &&
		     !s->o.degraded_given && !s->o.degraded_wait_s &&
		     !s->o.nofail;
	int n = s->src.nmembers + s->src.nspares, gone = 0;
	struct stat st;

	for (int i = 0; named && i < n; i++)
		gone += stat(i < s->src.nmembers ? s->src.members[i] :
			     s->src.spares[i - s->src.nmembers], &st) != 0;
	if (!gone && mount_helper_announce(a))
		return MNT_EX_SUCCESS;
	for (int i = 0; i < n; i++) {
		const char *p = i < s->src.nmembers ? s->src.members[i] :
			       s->src.spares[i - s->src.nmembers];

		if (!stat(p, &st))
			continue;
		fprintf(stderr, "%s: %s %s: %s: %s\n", DAEMON_HELPER_PROG,
			i < s->src.nmembers ? "member" : "spare", p,
			strerror(errno), named ? "a mistyped path? the mount "
			"would be refused, unless -o degraded=allow" :
			"the mount would run without it (degraded), if the "
			"level's redundancy allows");
	}
	return gone ? MNT_EX_FAIL : MNT_EX_SUCCESS;
}

/* Mounts what a command line asked for and serves it; the exit status. */
static int daemon_main(const struct daemon_args *a)
{
	struct daemon_state s = { .notify_fd = -1 };
	char *mountpoint = NULL;
	int status = MNT_EX_USAGE;

	if (a->opts && mnt_optstr_get_option(a->opts, "remount", NULL,
					     NULL) == 0)
		return daemon_remount(a);
	config_opts_init(&s.o);
	if (config_load(&s, a))
		goto out_src;     /* SOURCE may be parsed when -o is not */
	s.o.catchup = true;   /* the daemon takes returning members back */
	s.o.typo_check = true;  /* and refuses a mistyped member path */
	status = MNT_EX_SUCCESS;
	if (a->fake) {
		status = fake_report(&s, a);
		goto out_src;
	}
	status = MNT_EX_FAIL;
	if (mountpoint_resolve(a->mountpoint, &mountpoint) || log_file_open(&s))
		goto out_src;
	s.foreground = a->foreground || s.o.debug;
	if (!s.foreground) {
		rfs_log_init(RFS_LOG_BOTH);
		if (daemon_fork(&s.notify_fd)) {
			rfs_log(LOG_ERR, "fork: %s", strerror(errno));
			goto out_src;
		}
	}
	status = daemon_run(&s, a->source, mountpoint);
out_src:
	free(mountpoint);
	config_source_free(&s.src);
	config_opts_free(&s.o);
	return status;
}

int main(int argc, char **argv)
{
	struct daemon_args a = { 0 };
	int status;

	daemon_signals_block();
	rfs_log_init(RFS_LOG_STDERR);
	fuse_set_log_func(log_fuse);
	if (!strcmp(prog_basename(argv[0]), DAEMON_HELPER_PROG) ||
	    !strcmp(prog_basename(argv[0]), DAEMON_HELPER_FUSE_PROG))
		status = mount_helper_args(argc, argv, &a);
	else
		status = args_parse(argc, argv, &a);
	if (status == DAEMON_GO)
		status = daemon_main(&a);
	free(a.opts);
	return status;
}
