/*
 * options: the command line, as fsck(8) and distributions call it.
 *
 * fsck(8) passes -a for -p and may pass -C FD (a progress file
 * descriptor): -a is taken as -p, -C is accepted and ignored (the
 * progress bar goes to stderr when it is a terminal).
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "fsck.h"
#include "prog.h"

void fsck_usage(FILE *out)
{
	fprintf(out,
		"Usage: " FSCK_PROG " [-n | -y | -p] [-f] [-v] [--rebuild MEMBER] SOURCE\n"
		"Check and repair a raidfs array and its filesystem.\n\n"
		"  SOURCE           the members joined by ':', an array configuration file,\n"
		"                   or UUID=<array uuid> (its members found by scanning)\n"
		"  -n               check only: open read-only and write nothing\n"
		"  -p, -a           repair what is safe without asking (boot time)\n"
		"  -y               repair everything that can be repaired; a lost member is\n"
		"                   rebuilt onto its former device, a device in SOURCE that\n"
		"                   holds nothing, or a spare\n"
		"  -f               full check even when the array and filesystem are clean;\n"
		"                   with --rebuild, overwrite what MEMBER holds\n"
		"  -v               say more\n"
		"  --rebuild MEMBER reconstruct a lost member onto MEMBER, a new device (named\n"
		"                   in SOURCE in its place, or not), from the others; run\n"
		"                   again, it resumes an interrupted rebuild\n"
		"  -h, --help       this help\n"
		"  -V, --version    the version, and that of the on-disk format\n\n"
		"Exit status (fsck(8)): 0 no errors, 1 errors corrected, 4 errors left\n"
		"uncorrected, 8 operational error, 16 usage error, 32 cancelled.\n");
}

static int mode_set(struct fsck_opts *o, enum fsck_mode m, bool *set)
{
	if (*set && o->mode != m) {
		fprintf(stderr, FSCK_PROG ": only one of -n, -p and -y\n");
		return -EINVAL;
	}
	o->mode = m;
	*set = true;
	return 0;
}

enum { OPT_REBUILD = 256 };

/* 0, 1 for --help and --version (done), or -EINVAL after a message. */
int fsck_opts_parse(int argc, char **argv, struct fsck_opts *o)
{
	static const struct option longs[] = {
		{ "rebuild", required_argument, NULL, OPT_REBUILD },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool set = false;
	int c, ret = 0;

	memset(o, 0, sizeof(*o));
	o->mode = FSCK_MODE_NO;
	while (ret == 0 && (c = getopt_long(argc, argv, "nypafvrC:hV", longs,
					    NULL)) != -1) {
		switch (c) {
		case 'n': ret = mode_set(o, FSCK_MODE_NO, &set); break;
		case 'y': ret = mode_set(o, FSCK_MODE_YES, &set); break;
		case 'p':
		case 'a': ret = mode_set(o, FSCK_MODE_PREEN, &set); break;
		case 'f': o->force = true; break;
		case 'v': o->verbose++; break;
		case 'r': break;        /* e2fsck's "interactive": no questions here */
		case 'C': break;
		case OPT_REBUILD: o->rebuild = optarg; break;
		case 'h': fsck_usage(stdout); return 1;
		case 'V': prog_version_print(FSCK_PROG); return 1;
		default: ret = -EINVAL; break;
		}
	}
	if (ret == 0 && optind != argc - 1) {
		fprintf(stderr, FSCK_PROG ": %s\n", optind < argc ?
			"one SOURCE only" : "SOURCE is missing");
		ret = -EINVAL;
	}
	if (ret == 0 && o->rebuild && o->mode == FSCK_MODE_NO && set) {
		fprintf(stderr, FSCK_PROG ": --rebuild writes; it cannot go with -n\n");
		ret = -EINVAL;
	}
	if (ret == 0 && o->rebuild && !set)
		o->mode = FSCK_MODE_YES;
	if (ret == 0 && !set && !o->rebuild)
		o->mode = FSCK_MODE_NO;
	if (ret == 0)
		o->source = argv[optind];
	if (ret)
		prog_usage_hint(FSCK_PROG);
	return ret;
}
