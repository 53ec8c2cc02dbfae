/*
 * daemon: the raidfs program and the two command lines it answers to.
 *
 *   raidfs [-f] [-o OPTIONS] SOURCE MOUNTPOINT                raidfs_main.c
 *   mount.raidfs SOURCE MOUNTPOINT [-sfnv] [-N NS] [-o OPTS]  mount_main.c
 *
 * mount.raidfs is not a program of its own: it is this binary under the
 * helper's name (make install links /sbin/mount.raidfs to $PREFIX/bin/raidfs,
 * as ntfs-3g does), and main() picks the command line by the name it was
 * run as.  Either command line fills struct daemon_args and the same
 * daemon_main mounts and serves, so mount(8) never depends on PATH or on
 * where the daemon was installed.
 *
 * Exit codes are mount(8)'s (MNT_EX_*, libmount.h): 0 mounted, 1 usage
 * error or bad option value, 2 system error, 32 mount failure.
 */
#ifndef RAIDFS_DAEMON_H
#define RAIDFS_DAEMON_H

#include <stdbool.h>

#define DAEMON_PROG "raidfs"
#define DAEMON_HELPER_PROG "mount.raidfs"
/* mount(8)'s helper for the type the mount table shows (fuse.raidfs):
 * what a remount (mount -o remount,ro DIR) runs; the same helper */
#define DAEMON_HELPER_FUSE_PROG "mount.fuse.raidfs"

/* What a command line asks for.  opts is malloc'd (every -o joined). */
struct daemon_args {
	const char *prog;       /* for messages: raidfs or mount.raidfs */
	bool foreground;
	bool fake;              /* mount.raidfs -f: check, mount nothing */
	char *opts;
	const char *source;
	const char *mountpoint;
};

/* Returned by the command-line parsers to go on and mount; anything else
 * is the exit status to end with (0 after --help or --version). */
#define DAEMON_GO (-1)

/* raidfs_main.c: SOURCE and MOUNTPOINT, the two operands both command
 * lines end with (argv[optind..]); DAEMON_GO or a usage error (a->prog
 * names the program in the message). */
int daemon_args_operands(int argc, char **argv, struct daemon_args *a);

/* mount_main.c: mount(8)'s command line, as mount(8) runs a helper;
 * enters the mount namespace -N names. */
int mount_helper_args(int argc, char **argv, struct daemon_args *a);
/* -v and -f: "mounting" (or "would mount") SOURCE on MOUNTPOINT with the
 * options; -f says it once SOURCE and the options were read without an
 * error (raidfs_main.c). */
int mount_helper_announce(const struct daemon_args *a);

/*
 * signals.c: SIGUSR1 (status), SIGHUP (reopen the log), SIGUSR2 and
 * SIGPIPE never end the daemon.  block: first thing in main, before any
 * thread exists; start once mounted (status(arg) logs the status); stop
 * before the array is closed.
 */
void daemon_signals_block(void);
int daemon_signals_start(void (*status)(void *arg), void *arg);
void daemon_signals_stop(void);

#endif
