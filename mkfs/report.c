/*
 * report: everything mkfs.raidfs prints on success, in one place so -n and
 * a real run say the same things in the same words.
 *
 * The plan: level, chunk, UUID, label, every member with its size and the
 * space the smallest member leaves unused on it, the capacity, and the
 * fstab line.  Sizes are binary (KiB, MiB, GiB), as lsblk and mdadm print.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libmount.h>
#include <uuid/uuid.h>

#include "mkfs.h"

void mkfs_size_human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB",
					    "PiB", "EiB" };
	unsigned u = 0;
	double v = (double)bytes;

	while (v >= 1024.0 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024.0;
		u++;
	}
	if (bytes % (1ull << (10 * u)) == 0)
		snprintf(buf, len, "%llu %s",
			 (unsigned long long)(bytes >> (10 * u)), unit[u]);
	else
		snprintf(buf, len, "%.2f %s", v, unit[u]);
}

/* fstab(5) fields cannot hold blanks: libmount writes them as the octal
 * escapes mount(8) reads back. */
static bool fstab_field_put(FILE *f, const char *s)
{
	char *m = mnt_mangle(s);

	if (!m)
		return false;
	fputs(m, f);
	free(m);
	return true;
}

/* The SOURCE raidfs is given: the config file, or the members joined by ':'. */
static bool source_put(FILE *f, const struct mkfs_opts *o,
		       const struct mkfs_member *m)
{
	char abs[PATH_MAX];

	if (o->config_path) {
		if (mkfs_path_absolute(o->config_path, abs, sizeof(abs)) < 0)
			return false;
		return fstab_field_put(f, abs);
	}
	for (int i = 0; i < o->ndevs; i++)
		if (strchr(m[i].path, ':'))
			return false;
	for (int i = 0; i < o->ndevs; i++) {
		if (mkfs_path_absolute(m[i].path, abs, sizeof(abs)) < 0)
			return false;
		if (i)
			fputc(':', f);
		if (!fstab_field_put(f, abs))
			return false;
	}
	return true;
}

static void fstab_line_put(FILE *f, const struct mkfs_opts *o,
			   const struct mkfs_member *m)
{
	fputs("  fstab     ", f);
	if (!source_put(f, o, m)) {
		fputs("(a member path holds ':', so only a configuration file "
		      "can name the array: use -C FILE)\n", f);
		return;
	}
	fputs(" /mnt/point raidfs defaults,nofail 0 0\n", f);
}

static void member_line_put(FILE *f, const struct mkfs_member *m, int idx,
			    const struct mkfs_plan *plan)
{
	char size[32], unused[32], role[16];

	mkfs_size_human(m->size, size, sizeof(size));
	if (m->spare)
		snprintf(role, sizeof(role), "spare");
	else
		snprintf(role, sizeof(role), "%d", idx);
	fprintf(f, "  %-9s %-5s %s  %s", idx ? "" : "members", role, m->path,
		size);
	if (m->size - plan->smallest >= RC_BLOCK_SIZE) {
		mkfs_size_human(m->size - plan->smallest, unused,
				sizeof(unused));
		fprintf(f, "  (%s unused: the smallest decides)", unused);
	}
	fputc('\n', f);
}

static void plan_body_put(FILE *f, const struct mkfs_opts *o,
			  const struct mkfs_member *m,
			  const struct mkfs_plan *plan)
{
	char uuid[40], cap[32], abs[PATH_MAX];
	int nmembers = o->ndevs - o->nspares;

	uuid_unparse(o->uuid, uuid);
	fprintf(f, "  level     %s, %d member%s, %d spare%s\n",
		rc_level_name(o->level), nmembers, nmembers == 1 ? "" : "s",
		o->nspares, o->nspares == 1 ? "" : "s");
	fprintf(f, "  chunk     %u KiB\n", o->chunk_bytes >> 10);
	fprintf(f, "  uuid      %s\n", uuid);
	fprintf(f, "  label     %s%s%s\n", o->label[0] ? "'" : "",
		o->label[0] ? o->label : "(none)", o->label[0] ? "'" : "");
	for (int i = 0; i < o->ndevs; i++)
		member_line_put(f, &m[i], i, plan);
	mkfs_size_human(plan->array_blocks * RC_BLOCK_SIZE, cap, sizeof(cap));
	fprintf(f, "  capacity  %s (%llu blocks of 4 KiB), before filesystem "
		"metadata\n", cap, (unsigned long long)plan->array_blocks);
	if (o->config_path &&
	    mkfs_path_absolute(o->config_path, abs, sizeof(abs)) == 0)
		fprintf(f, "  config    %s\n", abs);
	fstab_line_put(f, o, m);
}

void mkfs_report_plan(FILE *f, const struct mkfs_opts *o,
		      const struct mkfs_member *m,
		      const struct mkfs_plan *plan)
{
	fprintf(f, MKFS_PROG ": dry run (-n): nothing has been written; "
		"this is what would be created:\n");
	plan_body_put(f, o, m, plan);
}

void mkfs_report_done(FILE *f, const struct mkfs_opts *o,
		      const struct mkfs_member *m,
		      const struct mkfs_plan *plan)
{
	fprintf(f, MKFS_PROG ": created a raidfs array with an empty "
		"filesystem:\n");
	plan_body_put(f, o, m, plan);
}

static void sig_line_put(FILE *f, const char *lead,
			 const struct mkfs_member *m, const struct probe_sig *s)
{
	char what[512];

	probe_sig_describe(s, what, sizeof(what));
	fprintf(f, "%s%s %s\n", lead, m->path, what);
}

/*
 * Without -f these are the reasons for refusing (stderr); with -f, what
 * is about to be erased (stdout, unless -q).
 */
void mkfs_report_sigs(FILE *f, const struct mkfs_member *m, int n,
		      bool wiping)
{
	const char *lead = wiping ? "  " : MKFS_PROG ": ";

	for (int i = 0; i < n; i++) {
		for (int j = 0; j < m[i].found.nsigs; j++)
			sig_line_put(f, lead, &m[i], &m[i].found.sigs[j]);
		if (m[i].found.truncated)
			fprintf(f, "%s%s holds more signatures than these\n",
				lead, m[i].path);
	}
}
