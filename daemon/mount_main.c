/*
 * mount.raidfs: the helper mount(8) runs for "-t raidfs" and fstab lines of
 * type raidfs (mount(8), EXTERNAL HELPERS):
 *
 *   mount.raidfs SOURCE MOUNTPOINT [-sfnv] [-N NAMESPACE] [-o OPTIONS] [-t TYPE]
 *
 * It checks the options, drops those only mount(8) acts on, and replaces
 * itself with the raidfs daemon found next to it (the directory of
 * /proc/self/exe), else on PATH.  raidfs returns once the filesystem is
 * mounted (or failed to mount), so its exit status is ours, in mount(8)'s
 * codes: 0 mounted, 1 usage, 32 mount failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

#define EX_USAGE_MOUNT 1
#define EX_SYSERR_MOUNT 2
#define EX_FAIL_MOUNT 32

struct helper_args {
	const char *source;
	const char *mountpoint;
	char *opts;            /* every -o joined with ',' */
	const char *ns;        /* -N */
	bool fake;             /* -f: do everything but mount */
	bool verbose;          /* -v */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: mount.raidfs SOURCE MOUNTPOINT [-sfnv] [-N NS] "
		"[-o OPTIONS]\n"
		"SOURCE is the members joined by ':' or an array "
		"configuration file.\n");
}

static int args_parse(int argc, char **argv, struct helper_args *a)
{
	int c;

	/* GNU getopt permutes: SOURCE and MOUNTPOINT come first from mount(8)
	 * and are left at optind. */
	while ((c = getopt(argc, argv, "sfnvo:N:t:h")) != -1) {
		switch (c) {
		case 's':   /* sloppy: unknown options are never fatal anyway */
		case 'n':   /* no mtab: /etc/mtab is the kernel's table */
			break;
		case 'f': a->fake = true; break;
		case 'v': a->verbose = true; break;
		case 'N': a->ns = optarg; break;
		case 't':   /* "raidfs" or "fuse.raidfs": nothing to choose */
			break;
		case 'o':
			if (config_opts_append(&a->opts, optarg))
				return -ENOMEM;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (argc - optind != 2)
		return -EINVAL;
	a->source = argv[optind];
	a->mountpoint = argv[optind + 1];
	return 0;
}

/* -N takes a PID or the path of a mount namespace file. */
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

/* The raidfs next to this program, or plain "raidfs" for PATH. */
static void daemon_path_find(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	snprintf(buf, len, "raidfs");
	if (n <= 0)
		return;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/raidfs", self) < len &&
	    access(buf, X_OK) == 0)
		return;
	snprintf(buf, len, "raidfs");
}

static int daemon_exec(const struct helper_args *a, const char *opts)
{
	char prog[PATH_MAX];
	char *argv[8];
	int i = 0;

	daemon_path_find(prog, sizeof(prog));
	argv[i++] = prog;
	if (*opts) {
		argv[i++] = "-o";
		argv[i++] = (char *)opts;
	}
	argv[i++] = (char *)a->source;
	argv[i++] = (char *)a->mountpoint;
	argv[i] = NULL;
	if (a->verbose || a->fake)
		fprintf(stderr, "mount.raidfs: %s%s%s %s %s\n", prog,
			*opts ? " -o " : "", opts, a->source, a->mountpoint);
	if (a->fake)
		return 0;
	execvp(prog, argv);
	fprintf(stderr, "mount.raidfs: cannot run %s: %s\n", prog,
		strerror(errno));
	return -errno;
}

int main(int argc, char **argv)
{
	struct helper_args a = { 0 };
	struct config_opts o;
	char err[CONFIG_ERR_MAX] = "";
	char *opts = NULL;
	int ret, status = EX_USAGE_MOUNT;

	config_opts_init(&o);
	if (args_parse(argc, argv, &a)) {
		usage(stderr);
		goto out;
	}
	/* Check now, so a typo in fstab is reported by mount, not syslog. */
	if (config_opts_parse(a.opts, &o, err, sizeof(err))) {
		fprintf(stderr, "mount.raidfs: %s\n", err);
		goto out;
	}
	status = EX_SYSERR_MOUNT;
	if (config_opts_filter(a.opts, &opts))
		goto out;
	if (a.ns && (ret = namespace_enter(a.ns))) {
		fprintf(stderr, "mount.raidfs: namespace %s: %s\n", a.ns,
			strerror(-ret));
		goto out;
	}
	status = daemon_exec(&a, opts) ? EX_FAIL_MOUNT : 0;
out:
	free(opts);
	free(a.opts);
	config_opts_free(&o);
	return status;
}
