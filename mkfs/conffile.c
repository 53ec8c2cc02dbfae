/*
 * conffile: the array configuration file that -C writes (docs/CONFIG.md,
 * parsed by fs/config.c for raidfs, mount.raidfs and fstab).
 *
 * Usage: mkfs_conf_prepare() before any member is written (so a directory
 * that cannot take the file stops mkfs before it has destroyed anything),
 * then mkfs_conf_commit() once the array exists, or mkfs_conf_abort().
 *
 * The file is written to a temporary name in the same directory, read back
 * through the daemon's own parser (config_source_parse) and only then
 * renamed over FILE: a reader sees the old file or the complete new one,
 * and mkfs never leaves a file raidfs would reject.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "config.h"
#include "mkfs.h"

struct mkfs_conf {
	char path[PATH_MAX];
	char tmp[PATH_MAX];
	char dir[PATH_MAX];
};

/* Member paths are absolute: the file may be read from any directory. */
int mkfs_path_absolute(const char *path, char *buf, size_t len)
{
	char cwd[PATH_MAX];
	int n;

	if (path[0] == '/')
		n = snprintf(buf, len, "%s", path);
	else if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	else
		n = snprintf(buf, len, "%s/%s", cwd, path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A libconfuse single-quoted string: only ' and \ are escaped. */
static void conf_quote_put(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

static int conf_list_put(FILE *f, const char *key,
			 const struct mkfs_member *m, int from, int to)
{
	char abs[PATH_MAX];
	int ret;

	fprintf(f, "\t%s = {", key);
	for (int i = from; i < to; i++) {
		ret = mkfs_path_absolute(m[i].path, abs, sizeof(abs));
		if (ret < 0)
			return ret;
		fputs(i == from ? "\n\t\t" : ",\n\t\t", f);
		conf_quote_put(f, abs);
	}
	fputs("\n\t}\n", f);
	return 0;
}

static int conf_body_put(FILE *f, const struct mkfs_opts *o,
			 const struct mkfs_member *m, const char *path)
{
	int nmembers = o->ndevs - o->nspares, ret;
	char uuid[40], when[64];
	time_t now = time(NULL);

	uuid_unparse(o->uuid, uuid);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", localtime(&now));
	fprintf(f, "# raidfs array configuration, written by " MKFS_PROG
		" on %s\n", when);
	fprintf(f, "# %s, %u KiB chunks, %d members, %d spare%s%s%s%s\n",
		rc_level_name(o->level), o->chunk_bytes >> 10, nmembers,
		o->nspares, o->nspares == 1 ? "" : "s",
		o->label[0] ? ", label '" : "", o->label,
		o->label[0] ? "'" : "");
	fprintf(f, "#\n# mount:  raidfs %s /mnt/point\n", path);
	fprintf(f, "# fstab:  %s /mnt/point raidfs defaults,nofail 0 0\n\n",
		path);
	fprintf(f, "array {\n\tuuid = \"%s\"\n", uuid);
	ret = conf_list_put(f, "members", m, 0, nmembers);
	if (ret == 0 && o->nspares)
		ret = conf_list_put(f, "spares", m, nmembers, o->ndevs);
	fputs("}\n", f);
	return ret;
}

/* The file must parse back into exactly what was meant. */
static int conf_verify(const char *tmp, const struct mkfs_opts *o)
{
	struct config_source src;
	struct config_opts co;
	char err[CONFIG_ERR_MAX] = "";
	int ret;

	config_opts_init(&co);
	ret = config_source_parse(tmp, &src, &co, err, sizeof(err));
	if (ret < 0) {
		mkfs_err("the configuration file does not parse: %s", err);
		goto out;
	}
	if (!src.has_uuid || memcmp(src.uuid, o->uuid, RC_UUID_SIZE) ||
	    src.nmembers != o->ndevs - o->nspares ||
	    src.nspares != o->nspares) {
		mkfs_err("the configuration file reads back differently");
		ret = -EIO;
	}
	config_source_free(&src);
out:
	config_opts_free(&co);
	return ret;
}

static int conf_file_write(struct mkfs_conf *c, const struct mkfs_opts *o,
			   const struct mkfs_member *m)
{
	int fd = mkstemp(c->tmp), ret;
	FILE *f;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = fchmod(fd, 0644) < 0 ? -errno : 0;
	if (ret == 0)
		ret = conf_body_put(f, o, m, c->path);
	if (fflush(f) != 0 || fsync(fd) < 0)
		ret = ret ? ret : -errno;
	if (fclose(f) != 0)
		ret = ret ? ret : -errno;
	return ret;
}

/* FILE may be replaced only when it is a configuration file itself, and
 * with -f (it may be another array's, as mkfs wants -f over members). */
static int conf_target_check(const char *path, const char *shown,
			     const struct mkfs_member *m, int n, bool force)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		if (st.st_dev == m[i].st.st_dev && st.st_ino == m[i].st.st_ino) {
			mkfs_err("-C %s: is one of the members", shown);
			return -EINVAL;
		}
	}
	if (!S_ISREG(st.st_mode) || !config_source_is_file(path)) {
		mkfs_err("-C %s: exists and is not a configuration file; "
			 "refusing to replace it", shown);
		return -EEXIST;
	}
	if (!force) {
		mkfs_err("-C %s: exists (a configuration file, maybe another "
			 "array's); give -f to replace it", shown);
		return -EEXIST;
	}
	return 0;
}

static int conf_names_set(struct mkfs_conf *c, const char *path)
{
	char *slash;
	int ret = mkfs_path_absolute(path, c->path, sizeof(c->path));

	if (ret < 0)
		return ret;
	snprintf(c->dir, sizeof(c->dir), "%s", c->path);
	slash = strrchr(c->dir, '/');
	slash[slash == c->dir ? 1 : 0] = '\0';
	if (snprintf(c->tmp, sizeof(c->tmp), "%s.mkfs.XXXXXX", c->path) >=
	    (int)sizeof(c->tmp))
		return -ENAMETOOLONG;
	return 0;
}

/* What -n can check without writing: the names and the target. */
int mkfs_conf_check(const struct mkfs_opts *o, const struct mkfs_member *m)
{
	struct mkfs_conf c;
	int ret = conf_names_set(&c, o->config_path);

	if (ret < 0) {
		mkfs_err("-C %s: %s", o->config_path, strerror(-ret));
		return ret;
	}
	if (access(c.dir, W_OK) < 0) {
		ret = -errno;
		mkfs_err("-C %s: cannot write in %s: %s", o->config_path, c.dir,
			 strerror(errno));
		return ret;
	}
	ret = conf_target_check(c.path, o->config_path, m, o->ndevs, o->force);
	if (ret < 0 && ret != -EINVAL && ret != -EEXIST)
		mkfs_err("-C %s: %s", o->config_path, strerror(-ret));
	return ret;
}

int mkfs_conf_prepare(const struct mkfs_opts *o, const struct mkfs_member *m,
		      struct mkfs_conf **out)
{
	struct mkfs_conf *c;
	int ret = mkfs_conf_check(o, m);

	*out = NULL;
	if (ret < 0)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c) {
		mkfs_err("out of memory");
		return -ENOMEM;
	}
	conf_names_set(c, o->config_path);
	ret = conf_file_write(c, o, m);
	if (ret < 0) {
		mkfs_err("-C %s: cannot write %s: %s", o->config_path, c->tmp,
			 strerror(-ret));
		goto fail;
	}
	ret = conf_verify(c->tmp, o);
	if (ret < 0)
		goto fail;
	*out = c;
	return 0;
fail:
	if (!strstr(c->tmp, "XXXXXX"))
		unlink(c->tmp);
	free(c);
	return ret;
}

int mkfs_conf_commit(struct mkfs_conf *c)
{
	int ret = 0, dfd;

	if (rename(c->tmp, c->path) < 0) {
		ret = -errno;
		mkfs_err("%s: %s (the array was created; only this file is "
			 "missing: run again with -f -C to write it)", c->path,
			 strerror(errno));
		unlink(c->tmp);
		goto out;
	}
	/* The rename itself must survive a crash. */
	dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
out:
	free(c);
	return ret;
}

void mkfs_conf_abort(struct mkfs_conf *c)
{
	if (!c)
		return;
	unlink(c->tmp);
	free(c);
}
