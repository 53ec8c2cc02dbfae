/*
 * mkfs.raidfs: create a raidfs array and an empty filesystem on it.
 *
 *   mkfs.raidfs [-l LEVEL] [-c CHUNK] [-L LABEL] [-U UUID] [-s SPARE]...
 *               [-C CONFIG] [-f] [-n] [-q] MEMBER...
 *
 * Two phases, and the first writes nothing:
 *   validate   options; open every member read-write and exclusive; the
 *              same device named twice; what each member already holds;
 *              the array planned on stand-ins (plan.c), which applies all
 *              of raidcore's rules on level, member count, chunk and size
 *   write      (not with -n) the configuration file's temporary copy;
 *              with -f, erase old signatures; rc_array_create; assemble;
 *              fs_format; close; rename the configuration file into place
 * Exit status 0 on success, 1 on any error (as mke2fs), with the reason on
 * stderr.  `mkfs -t raidfs` runs this program by its name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "fs.h"
#include "mkfs.h"
#include "prog.h"

void mkfs_err(const char *fmt, ...)
{
	va_list ap;

	fputs(MKFS_PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int signatures_find(const struct mkfs_opts *o, struct mkfs_member *m)
{
	char err[512];
	int ret = 0;

	for (int i = 0; i < o->ndevs; i++) {
		int r = probe_sigs_find(m[i].path, m[i].dev, &m[i].found, err,
					sizeof(err));

		if (r)
			mkfs_err("%s", err);
		ret = ret ? ret : r;
	}
	return ret;
}

/* Without -f, anything on a member stops mkfs; with -f it is listed. */
static int signatures_judge(const struct mkfs_opts *o,
			    const struct mkfs_member *m)
{
	int holding = 0;

	for (int i = 0; i < o->ndevs; i++)
		holding += m[i].found.nsigs > 0;
	if (!holding)
		return 0;
	if (!o->force) {
		mkfs_report_sigs(stderr, m, o->ndevs, false);
		mkfs_err("refusing to overwrite %d member%s: -f erases what "
			 "%s", holding, holding == 1 ? "" : "s",
			 holding == 1 ? "it holds" : "they hold");
		return -EEXIST;
	}
	if (!o->quiet) {
		printf(MKFS_PROG ": -f: %s what the members hold:\n",
		       o->dry_run ? "would erase" : "erasing");
		mkfs_report_sigs(stdout, m, o->ndevs, true);
	}
	return 0;
}

static int validate(const struct mkfs_opts *o, struct mkfs_member *m,
		    struct mkfs_plan *plan)
{
	int ret = mkfs_members_open(o, m);

	if (ret == 0)
		ret = signatures_find(o, m);
	if (ret == 0)
		ret = mkfs_plan_make(o, m, plan);
	if (ret == 0 && o->config_path)
		ret = mkfs_conf_check(o, m);
	if (ret == 0)
		ret = signatures_judge(o, m);
	return ret;
}

/* Only what libblkid found: raidfs's own superblock is overwritten anyway. */
static int signatures_wipe(const struct mkfs_opts *o, struct mkfs_member *m)
{
	char err[512];

	for (int i = 0; i < o->ndevs; i++) {
		if (probe_has_foreign(&m[i].found) &&
		    probe_sigs_wipe(m[i].path, err, sizeof(err)) < 0) {
			mkfs_err("%s", err);
			return -EIO;
		}
	}
	return 0;
}

static int array_create(const struct mkfs_opts *o, struct mkfs_member *m)
{
	struct rc_dev *devs[RC_MAX_MEMBERS + RC_MAX_SPARES];
	struct rc_create_params p = {
		.level = o->level, .chunk_bytes = o->chunk_bytes,
		.nspares = o->nspares,
	};
	char err[256] = "";
	int ret;

	memcpy(p.array_uuid, o->uuid, RC_UUID_SIZE);
	memcpy(p.label, o->label, sizeof(p.label));
	for (int i = 0; i < o->ndevs; i++)
		devs[i] = m[i].dev;
	ret = rc_array_create_err(&p, devs, o->ndevs, err, sizeof(err));
	if (ret < 0)
		mkfs_err("creating the array failed: %s",
			 err[0] ? err : strerror(-ret));
	return ret;
}

/* The array owns the members from a successful assembly on. */
static int filesystem_format(const struct mkfs_opts *o, struct mkfs_member *m,
			     struct mkfs_plan *plan)
{
	struct rc_dev *devs[RC_MAX_MEMBERS + RC_MAX_SPARES];
	struct fs_format_params fp = { .label = "" };
	struct fs_bdev *bdev = NULL;
	struct rc_array *a = NULL;
	struct rc_info info;
	char err[512] = "";
	int ret, r;

	for (int i = 0; i < o->ndevs; i++)
		devs[i] = m[i].dev;
	ret = rc_array_assemble(devs, o->ndevs, RC_ASSEMBLE_NO_DEGRADED, &a,
				err, sizeof(err));
	if (ret < 0) {
		mkfs_err("the new array does not assemble: %s",
			 err[0] ? err : strerror(-ret));
		return ret;
	}
	for (int i = 0; i < o->ndevs; i++)
		m[i].dev = NULL;
	snprintf(fp.label, sizeof(fp.label), "%s", o->label);
	fp.inodes = o->max_inodes;
	fp.bytes_per_inode = (uint32_t)(o->bytes_per_inode > UINT32_MAX ?
					UINT32_MAX : o->bytes_per_inode);
	ret = rc_array_info(a, &info);
	if (ret == 0)
		plan->array_blocks = info.blocks;
	if (ret == 0)
		ret = fs_bdev_from_array(a, &bdev);
	if (ret == 0)
		ret = fs_format(bdev, &fp);
	if (ret < 0)
		mkfs_err("writing the filesystem failed: %s", strerror(-ret));
	fs_bdev_close(bdev);
	r = rc_array_close(a);
	if (r < 0 && ret == 0) {
		mkfs_err("closing the array failed: %s", strerror(-r));
		ret = r;
	}
	return ret;
}

static int write_all(const struct mkfs_opts *o, struct mkfs_member *m,
		     struct mkfs_plan *plan)
{
	struct mkfs_conf *conf = NULL;
	int ret = 0;

	if (o->config_path)
		ret = mkfs_conf_prepare(o, m, &conf);
	if (ret < 0)
		return ret;
	/* From here on members are written: a failure leaves no array. */
	if (o->force)
		ret = signatures_wipe(o, m);
	if (ret == 0)
		ret = array_create(o, m);
	if (ret == 0)
		ret = filesystem_format(o, m, plan);
	if (ret < 0) {
		mkfs_conf_abort(conf);
		mkfs_err("the members hold no usable array now; run " MKFS_PROG
			 " again once the cause is fixed");
		return ret;
	}
	return conf ? mkfs_conf_commit(conf) : 0;
}

int main(int argc, char **argv)
{
	struct mkfs_member m[RC_MAX_MEMBERS + RC_MAX_SPARES];
	struct mkfs_opts o;
	struct mkfs_plan plan;
	int ret = mkfs_opts_parse(argc, argv, &o);

	if (ret != 0) {
		if (ret < 0)
			prog_usage_hint(MKFS_PROG);
		free(o.paths);
		return ret < 0 ? 1 : 0;
	}
	ret = validate(&o, m, &plan);
	if (ret == 0 && o.dry_run && !o.quiet)
		mkfs_report_plan(stdout, &o, m, &plan);
	if (ret == 0 && !o.dry_run)
		ret = write_all(&o, m, &plan);
	if (ret == 0 && !o.dry_run && !o.quiet)
		mkfs_report_done(stdout, &o, m, &plan);
	mkfs_members_close(m, o.ndevs);
	free(o.paths);
	return ret < 0 ? 1 : 0;
}
