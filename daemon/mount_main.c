/*
 * mount.raidfs: the command line mount(8) gives the helper it runs for
 * "-t raidfs" and fstab lines of type raidfs (mount(8), EXTERNAL HELPERS):
 *
 *   mount.raidfs SOURCE MOUNTPOINT [-sfnv] [-N NAMESPACE] [-o OPTIONS] [-t TYPE]
 *
 * This is the raidfs binary run under the helper's name (daemon.h): the
 * command line is turned into struct daemon_args and the daemon itself
 * mounts, in this process, so there is no second program to find.  The
 * options go to the daemon as mount(8) passed them: the option parser
 * (source/config.c) already ignores those only mount(8), fstab or systemd
 * act on.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libmount.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "prog.h"

struct helper_flags {
	const char *ns;        /* -N */
	bool verbose;          /* -v */
};

static void usage(void)
{
	printf("Usage: " DAEMON_HELPER_PROG " SOURCE MOUNTPOINT [-sfnv] [-N NS] "
	       "[-o OPTIONS]\n"
	       "The helper mount(8) runs for -t raidfs and fstab lines of "
	       "type raidfs.\n\n"
	       "  SOURCE      members joined by ':', or an array configuration "
	       "file\n"
	       "  -o OPTIONS  raidfs's options (docs/CONFIG.md) and what "
	       "fstab carries\n"
	       "  -f          fake: check SOURCE and the options, mount "
	       "nothing\n"
	       "  -v          say what is mounted\n"
	       "  -N NS       mount in the mount namespace NS (a PID or a "
	       "namespace file)\n"
	       "  -s, -n      accepted (sloppy; no mtab)\n"
	       "  -h, --help  this text\n"
	       "  -V, --version\n\n"
	       "Exit status (mount(8)): 0 mounted, 1 usage error, 2 system "
	       "error, 32 mount failure.\n");
}

static int usage_error(const char *msg)
{
	prog_usage_error(DAEMON_HELPER_PROG, msg);
	return MNT_EX_USAGE;
}

/* One option; DAEMON_GO to go on, else the exit status. */
static int opt_apply(int c, struct daemon_args *a, struct helper_flags *h)
{
	switch (c) {
	case 's':   /* sloppy: unknown options are never fatal anyway */
	case 'n':   /* no mtab: /etc/mtab is the kernel's table */
	case 't':   /* "raidfs" or "fuse.raidfs": nothing to choose */
		return DAEMON_GO;
	case 'f': a->fake = true; return DAEMON_GO;
	case 'v': h->verbose = true; return DAEMON_GO;
	case 'N': h->ns = optarg; return DAEMON_GO;
	case 'o':
		if (config_opts_append(&a->opts, optarg))
			return MNT_EX_SYSERR;
		return DAEMON_GO;
	case 'h': usage(); return MNT_EX_SUCCESS;
	case 'V': prog_version_print(DAEMON_HELPER_PROG); return MNT_EX_SUCCESS;
	default: return usage_error(NULL);   /* getopt said what */
	}
}

static int args_parse(int argc, char **argv, struct daemon_args *a,
		      struct helper_flags *h)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = DAEMON_GO;

	/* GNU getopt permutes: SOURCE and MOUNTPOINT come first from mount(8)
	 * and are left at optind. */
	while (ret == DAEMON_GO &&
	       (c = getopt_long(argc, argv, "sfnvo:N:t:hV", longs, NULL)) != -1)
		ret = opt_apply(c, a, h);
	if (ret != DAEMON_GO)
		return ret;
	return daemon_args_operands(argc, argv, a);
}

/* -N takes a PID or the path of a mount namespace file.  Before any
 * thread exists: setns(CLONE_NEWNS) refuses a multi-threaded caller. */
static int namespace_enter(const char *ns)
{
	char path[PATH_MAX];
	char *end;
	int fd, ret = 0;

	strtol(ns, &end, 10);
	if (!*end)
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", ns);
	else
		snprintf(path, sizeof(path), "%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNS))
		ret = -errno;
	close(fd);
	return ret;
}

/* -v and -f: what would reach the daemon, without mount(8)'s own options. */
int mount_helper_announce(const struct daemon_args *a)
{
	char *opts = NULL;

	if (config_opts_filter(a->opts, &opts))
		return -ENOMEM;
	fprintf(stderr, DAEMON_HELPER_PROG ": %s %s on %s%s%s\n",
		a->fake ? "would mount" : "mounting", a->source, a->mountpoint,
		*opts ? " with -o " : "", opts);
	free(opts);
	return 0;
}

int mount_helper_args(int argc, char **argv, struct daemon_args *a)
{
	struct helper_flags h = { 0 };
	int ret;

	a->prog = DAEMON_HELPER_PROG;
	ret = args_parse(argc, argv, a, &h);
	if (ret != DAEMON_GO)
		return ret;
	if (h.ns && (ret = namespace_enter(h.ns))) {
		fprintf(stderr, DAEMON_HELPER_PROG ": namespace %s: %s\n", h.ns,
			strerror(-ret));
		return MNT_EX_SYSERR;
	}
	/* -f says "would mount" only once SOURCE and the options have been
	 * read (daemon_main): before, it said so, then a configuration
	 * file's syntax error (a tester's find) */
	if (h.verbose && !a->fake && mount_helper_announce(a))
		return MNT_EX_SYSERR;
	/* quiet on success without -v (the system's log has it all) */
	if (!h.verbose)
		rfs_log_stderr_max(LOG_WARNING);
	return DAEMON_GO;
}
