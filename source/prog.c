/*
 * prog: the programs' shared conventions (see prog.h).
 *
 * The format versions come from the one home of each on-disk format
 * (raidcore/ondisk.h, fs/ondisk_fs.h), so --version can never disagree
 * with what mkfs writes and the daemon accepts.
 */
#include <stdio.h>
#include <string.h>

#include "ondisk.h"
#include "ondisk_fs.h"
#include "prog.h"

void prog_version_print(const char *prog)
{
	printf("%s (raidfs) %s\n", prog, RAIDFS_VERSION);
	printf("on-disk format: array %d.%d, filesystem %d.%d\n",
	       RC_SB_VERSION_MAJOR, RC_SB_VERSION_MINOR, FS_VERSION_MAJOR,
	       FS_VERSION_MINOR);
}

void prog_usage_hint(const char *prog)
{
	fprintf(stderr, "Try '%s --help'.\n", prog);
}

void prog_usage_error(const char *prog, const char *msg)
{
	if (msg)
		fprintf(stderr, "%s: %s\n", prog, msg);
	prog_usage_hint(prog);
}

const char *prog_basename(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	if (!argv0)
		return "";
	return slash ? slash + 1 : argv0;
}
