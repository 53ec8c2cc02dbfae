/*
 * options: mkfs.raidfs's command line, parsed into struct mkfs_opts.
 *
 * Pure parsing, no I/O: every value is checked here so that a typo is
 * reported before any member is opened.  Sizes follow mdadm: a chunk size
 * without a suffix is in KiB (mdadm --chunk=64 means 64 KiB).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uuid/uuid.h>

#include "mkfs.h"
#include "prog.h"

void mkfs_usage(FILE *f)
{
	fprintf(f,
"Usage: " MKFS_PROG " [-l LEVEL] [-c CHUNK] [-L LABEL] [-U UUID] [-s SPARE]...\n"
"                   [-N INODES | -i BYTES] [-C CONFIG] [-f] [-n] [-q] MEMBER...\n"
"Creates a raidfs array on the MEMBERs (image files, partitions or disks)\n"
"and an empty filesystem on it.\n"
"\n"
"  -l, --level LEVEL    0, 1, 4, 5, 6 or 10 (also raid5, RAID5, stripe,\n"
"                       mirror); default 5\n"
"  -c, --chunk CHUNK    power of two from 4K to 1M; K or M suffix, no suffix\n"
"                       means KiB as in mdadm; default 64K\n"
"  -L, --label LABEL    up to %d bytes\n"
"  -U, --uuid UUID      the array's UUID (default: a random one)\n"
"  -s, --spare SPARE    a spare member (repeat for more)\n"
"  -N, --inodes N       at most N files (inodes are allocated as they are\n"
"                       needed; default: as many as the space holds)\n"
"  -i, --bytes-per-inode BYTES\n"
"                       at most one file per BYTES of the filesystem (K, M\n"
"                       suffixes; 1024 or more); -N and -i set a maximum\n"
"                       only, nothing is reserved\n"
"  -C, --config FILE    also write an array configuration file for raidfs\n"
"                       and fstab\n"
"  -f, --force          overwrite members that hold a filesystem, RAID\n"
"                       member or partition table (it is erased)\n"
"  -n, --dry-run        print what would be done, write nothing\n"
"  -q, --quiet          print only errors\n"
"  -h, --help           this text\n"
"  -V, --version        the version, and that of the on-disk format\n"
"Exit status: 0 on success, 1 on any error.\n", RC_LABEL_MAX - 1);
}

struct level_name {
	const char *name;
	enum rc_level level;
};

/* Spellings mdadm accepts, after an optional "raid" prefix. */
static const struct level_name level_names[] = {
	{ "0", RC_RAID0 }, { "stripe", RC_RAID0 },
	{ "1", RC_RAID1 }, { "mirror", RC_RAID1 },
	{ "4", RC_RAID4 }, { "5", RC_RAID5 }, { "6", RC_RAID6 },
	{ "10", RC_RAID10 },
};

int mkfs_level_parse(const char *s, enum rc_level *level)
{
	size_t i;

	if (!strncasecmp(s, "raid", 4) && s[4])
		s += 4;
	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (!strcasecmp(s, level_names[i].name)) {
			*level = level_names[i].level;
			return 0;
		}
	}
	return -EINVAL;
}

/* "64", "64K", "64KiB", "1M", "65536B" -> bytes; no suffix means KiB. */
static int size_kib_parse(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned shift = 10;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'b': case 'B': shift = 0; end++; break;
	default: return -EINVAL;
	}
	if (shift && !strcmp(end, "iB"))
		end += 2;
	else if (shift && (*end == 'B' || *end == 'b'))
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

int mkfs_chunk_parse(const char *s, uint32_t *bytes)
{
	uint64_t v;

	if (size_kib_parse(s, &v) < 0) {
		mkfs_err("-c %s: not a size (examples: 64K, 512K, 1M)", s);
		return -EINVAL;
	}
	if (v < 4096 || v > (1u << 20) || (v & (v - 1))) {
		mkfs_err("-c %s: the chunk size must be a power of two from 4K "
			 "to 1M (a number without a suffix is in KiB)", s);
		return -EINVAL;
	}
	*bytes = (uint32_t)v;
	return 0;
}

static int uuid_arg_parse(const char *s, uint8_t *uuid)
{
	if (!strcmp(s, "random") || !strcmp(s, "time")) {
		uuid_generate(uuid);
		return 0;
	}
	if (uuid_parse(s, uuid)) {
		mkfs_err("-U %s: not a UUID (like 8c9f2a6e-1d3b-4f7a-9e0c-"
			 "5b2d7f1a3c4e, or 'random')", s);
		return -EINVAL;
	}
	if (uuid_is_null(uuid)) {
		mkfs_err("-U %s: the nil UUID cannot name an array", s);
		return -EINVAL;
	}
	return 0;
}

static int label_arg_parse(const char *s, char *label)
{
	const unsigned char *p;

	if (strlen(s) >= RC_LABEL_MAX) {
		mkfs_err("-L: the label is %zu bytes long; at most %d are "
			 "allowed", strlen(s), RC_LABEL_MAX - 1);
		return -EINVAL;
	}
	/* The label is also printed and written into the config file. */
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			mkfs_err("-L: the label holds a control character");
			return -EINVAL;
		}
	}
	strcpy(label, s);
	return 0;
}

/* -N and -i: a count of at least min, with an optional K or M suffix
 * (powers of 1024, as mke2fs). */
static int count_arg_parse(char opt, const char *s, uint64_t min,
			   uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	if (shift)
		end++;
	if (errno || *s < '0' || *s > '9' || *end || v > (1ull << 40) ||
	    (v << shift) < min) {
		mkfs_err("-%c %s: not a number from %llu to 2^40 (K and M "
			 "suffixes allowed)", opt, s, (unsigned long long)min);
		return -EINVAL;
	}
	*out = (uint64_t)v << shift;
	return 0;
}

static const struct option long_opts[] = {
	{ "level", required_argument, NULL, 'l' },
	{ "chunk", required_argument, NULL, 'c' },
	{ "label", required_argument, NULL, 'L' },
	{ "uuid", required_argument, NULL, 'U' },
	{ "spare", required_argument, NULL, 's' },
	{ "inodes", required_argument, NULL, 'N' },
	{ "bytes-per-inode", required_argument, NULL, 'i' },
	{ "config", required_argument, NULL, 'C' },
	{ "force", no_argument, NULL, 'f' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* Applies one option; 1 when the program should stop with success. */
static int opt_apply(int c, const char *arg, struct mkfs_opts *o,
		     const char **spares, bool *have_uuid)
{
	switch (c) {
	case 'l':
		if (mkfs_level_parse(arg, &o->level) == 0)
			return 0;
		mkfs_err("-l %s: not a RAID level (0, 1, 4, 5, 6 or 10)", arg);
		return -EINVAL;
	case 'c': return mkfs_chunk_parse(arg, &o->chunk_bytes);
	case 'L': return label_arg_parse(arg, o->label);
	case 'U':
		*have_uuid = true;
		return uuid_arg_parse(arg, o->uuid);
	case 's':
		if (o->nspares >= RC_MAX_SPARES) {
			mkfs_err("too many spares (at most %d)", RC_MAX_SPARES);
			return -EINVAL;
		}
		spares[o->nspares++] = arg;
		return 0;
	case 'N': return count_arg_parse('N', arg, 1, &o->max_inodes);
	case 'i': return count_arg_parse('i', arg, 1024, &o->bytes_per_inode);
	case 'C': o->config_path = arg; return 0;
	case 'f': o->force = true; return 0;
	case 'n': o->dry_run = true; return 0;
	case 'q': o->quiet = true; return 0;
	case 'h': mkfs_usage(stdout); return 1;
	case 'V': prog_version_print(MKFS_PROG); return 1;
	case ':':
		mkfs_err("option -%c needs an argument", optopt);
		return -EINVAL;
	default:
		if (optopt)
			mkfs_err("unknown option -%c", optopt);
		else
			mkfs_err("unknown option %s", arg);
		return -EINVAL;
	}
}

/* Members first, spares last: the order rc_array_create takes. */
static int paths_collect(int argc, char **argv, struct mkfs_opts *o,
			 const char **spares)
{
	int nmembers = argc - optind;

	if (nmembers <= 0) {
		mkfs_err("no members given");
		return -EINVAL;
	}
	if (nmembers > RC_MAX_MEMBERS) {
		mkfs_err("%d members given; at most %d are allowed", nmembers,
			 RC_MAX_MEMBERS);
		return -EINVAL;
	}
	o->ndevs = nmembers + o->nspares;
	o->paths = calloc((size_t)o->ndevs, sizeof(*o->paths));
	if (!o->paths) {
		mkfs_err("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < nmembers; i++)
		o->paths[i] = argv[optind + i];
	for (int i = 0; i < o->nspares; i++)
		o->paths[nmembers + i] = spares[i];
	return 0;
}

/*
 * Fills o from argv.  0: go on; 1: done (--help, --version); <0: a usage
 * error, already reported.  o->paths is malloc'd (free it).
 */
int mkfs_opts_parse(int argc, char **argv, struct mkfs_opts *o)
{
	const char *spares[RC_MAX_SPARES];
	bool have_uuid = false;
	int c, ret = 0;

	memset(o, 0, sizeof(*o));
	o->level = MKFS_DEFAULT_LEVEL;
	o->chunk_bytes = MKFS_DEFAULT_CHUNK;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, ":l:c:L:U:s:N:i:C:fnqhV",
					    long_opts, NULL)) != -1)
		ret = opt_apply(c, c == '?' ? argv[optind - 1] : optarg, o,
				spares, &have_uuid);
	if (ret != 0)
		return ret;
	if (o->max_inodes && o->bytes_per_inode) {
		mkfs_err("-N and -i both set the most files: give one");
		return -EINVAL;
	}
	if (!have_uuid)
		uuid_generate(o->uuid);
	return paths_collect(argc, argv, o, spares);
}
