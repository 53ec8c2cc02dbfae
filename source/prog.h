/*
 * prog: what every raidfs program does the same way (docs/DESIGN.md, "The
 * programs' conventions"), so raidfs, mount.raidfs, mkfs.raidfs and
 * fsck.raidfs answer alike.
 *
 *   --help        the usage on stdout, exit 0
 *   --version     prog_version_print on stdout, exit 0
 *   usage error   one line saying what is wrong, then prog_usage_hint
 *                 ("Try 'PROG --help'."), both on stderr, and the usage
 *                 exit code of the program's convention
 *
 * The exit codes are those of the system tool each program stands in for:
 * mount(8)'s for raidfs and mount.raidfs (MNT_EX_* from libmount.h),
 * fsck(8)'s for fsck.raidfs (enum fsck_exit, fsck/fsck.h), and 0 / 1 for
 * mkfs.raidfs as mke2fs.
 */
#ifndef RAIDFS_PROG_H
#define RAIDFS_PROG_H

/* The one version of the programs; the on-disk format has its own
 * (RC_SB_VERSION_*, FS_VERSION_*), printed beside it. */
#define RAIDFS_VERSION "0.1"

/* "PROG (raidfs) VERSION" and the on-disk format versions, on stdout. */
void prog_version_print(const char *prog);

/* "Try 'PROG --help'." on stderr: the last line of every usage error. */
void prog_usage_hint(const char *prog);

/* A whole usage error: "PROG: MSG" (unless msg is NULL: getopt has said
 * what), then the hint. */
void prog_usage_error(const char *prog, const char *msg);

/* The name a program was run as: argv[0] without its directory. */
const char *prog_basename(const char *argv0);

#endif
