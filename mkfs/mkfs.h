/*
 * mkfs: the parts of mkfs.raidfs, one job per file.
 *
 *   options.c   command line -> struct mkfs_opts (no I/O)
 *   members.c   open every member (read-write, exclusive), find the same
 *               device named twice, sizes
 *   (source/probe.c: signatures already on a member - raidfs, libblkid -
 *   and wiping them, shared with fsck.raidfs)
 *   plan.c      a dry run of rc_array_create on stand-in devices: what the
 *               array would be, without writing a byte
 *   conffile.c  the array configuration file for raidfs and fstab
 *   report.c    what is printed: the plan, the result, the fstab line
 *   mkfs_main.c validate everything, then write, in that order
 *
 * Every function returns 0 or a negative errno; a function that fails has
 * already said why on stderr (through mkfs_err), so callers only unwind.
 */
#ifndef MKFS_MKFS_H
#define MKFS_MKFS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "probe.h"
#include "raidcore.h"

#define MKFS_PROG "mkfs.raidfs"
#define MKFS_DEFAULT_LEVEL RC_RAID5
#define MKFS_DEFAULT_CHUNK (64u << 10)     /* see docs/DESIGN.md, mkfs.raidfs */

struct mkfs_opts {
	enum rc_level level;
	uint32_t chunk_bytes;
	char label[RC_LABEL_MAX];
	uint8_t uuid[RC_UUID_SIZE];        /* always set: given or generated */
	const char *config_path;           /* -C, or NULL */
	uint64_t max_inodes;               /* -N, 0: none */
	uint64_t bytes_per_inode;          /* -i, 0: none */
	bool force, dry_run, quiet;
	/* Devices in creation order: the data members (role = index), then
	 * the spares.  Points into argv. */
	const char **paths;
	int ndevs;
	int nspares;
};

struct mkfs_member {
	const char *path;                  /* as given */
	bool spare;
	struct rc_dev *dev;                /* open read-write, exclusive */
	struct stat st;
	uint64_t size;                     /* bytes */
	struct probe_result found;         /* what it holds (source/probe.h) */
};

/* What the array will be, from the dry run. */
struct mkfs_plan {
	uint64_t array_blocks;             /* logical capacity */
	uint64_t smallest;                 /* bytes of the smallest device */
	int smallest_idx;
};

void mkfs_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* options.c */
int mkfs_opts_parse(int argc, char **argv, struct mkfs_opts *o);
void mkfs_usage(FILE *f);
int mkfs_level_parse(const char *s, enum rc_level *level);
int mkfs_chunk_parse(const char *s, uint32_t *bytes);

/* members.c */
/* Opens all o->ndevs members into m (every one is tried and reported). */
int mkfs_members_open(const struct mkfs_opts *o, struct mkfs_member *m);
void mkfs_members_close(struct mkfs_member *m, int n);

/* plan.c */
int mkfs_plan_make(const struct mkfs_opts *o, const struct mkfs_member *m,
		   struct mkfs_plan *plan);

/* conffile.c */
struct mkfs_conf;
int mkfs_conf_prepare(const struct mkfs_opts *o,
		      const struct mkfs_member *m, struct mkfs_conf **out);
int mkfs_conf_check(const struct mkfs_opts *o, const struct mkfs_member *m);
int mkfs_conf_commit(struct mkfs_conf *c);
void mkfs_conf_abort(struct mkfs_conf *c);
int mkfs_path_absolute(const char *path, char *buf, size_t len);

/* report.c */
void mkfs_size_human(uint64_t bytes, char *buf, size_t len);
void mkfs_report_plan(FILE *f, const struct mkfs_opts *o,
		      const struct mkfs_member *m,
		      const struct mkfs_plan *plan);
void mkfs_report_sigs(FILE *f, const struct mkfs_member *m, int n,
		      bool wiping);
void mkfs_report_done(FILE *f, const struct mkfs_opts *o,
		      const struct mkfs_member *m,
		      const struct mkfs_plan *plan);

#endif
