/*
 * config: SOURCE and -o parsing for raidfs and mount.raidfs (see config.h;
 * the file format is docs/CONFIG.md).
 *
 * Options are looked up in one table.  mount(8) hands a helper whatever is
 * in fstab, so an option raidfs does not know must never stop a mount: it
 * is either one mount(8) itself acts on (ignored), one libfuse knows
 * (passed through), or collected and reported once as ignored.  Option
 * strings are split and joined by libmount's optstr functions, so a
 * quoted value holding commas (comment="a,b") means what it means to
 * mount(8).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <confuse.h>
#include <libmount.h>
#include <uuid/uuid.h>

#include "config.h"

enum opt_kind {
	OPT_IGNORE,     /* for mount(8), fstab or systemd; nothing to do */
	OPT_FUSE,       /* libfuse / the kernel knows it: pass it on */
	OPT_RO,
	OPT_RW,
	OPT_ALLOW_OTHER,
	OPT_DEFAULT_PERMISSIONS,   /* always on; accepted */
	OPT_DEBUG,
	OPT_DEGRADED,   /* =allow|refuse */
	OPT_CACHE_MB,   /* =N mebibytes */
	OPT_CACHE,      /* =SIZE with K/M/G */
	OPT_LOGFILE,    /* =PATH */
	OPT_ATIME,      /* an atime policy libfuse rejects: fs keeps it */
	OPT_PROGRAM,    /* =PATH, absolute */
	OPT_PROGRAM_TIMEOUT,   /* =SECONDS, 1 .. 3600 */
	OPT_DEGRADED_WAIT,     /* =SECONDS, 0 .. 3600 */
	OPT_NOFAIL,     /* for mount(8) too: a missing array is no failure */
};

/* name ending in '=' or '-' matches as a prefix; others match exactly. */
struct opt_rule {
	const char *name;
	enum opt_kind kind;
};

static const struct opt_rule opt_rules[] = {
	{ "ro", OPT_RO },
	{ "rw", OPT_RW },
	{ "allow_other", OPT_ALLOW_OTHER },
	{ "default_permissions", OPT_DEFAULT_PERMISSIONS },
	{ "debug", OPT_DEBUG },
	{ "degraded=", OPT_DEGRADED },
	{ "cache_mb=", OPT_CACHE_MB },
	{ "cache=", OPT_CACHE },
	{ "logfile=", OPT_LOGFILE },
	{ "program=", OPT_PROGRAM },
	{ "program_timeout=", OPT_PROGRAM_TIMEOUT },
	{ "degraded_wait=", OPT_DEGRADED_WAIT },
	{ "nofail", OPT_NOFAIL },
	/* mount(8), fstab and systemd options */
	{ "defaults", OPT_IGNORE }, { "auto", OPT_IGNORE },
	{ "noauto", OPT_IGNORE },
	{ "user", OPT_IGNORE }, { "users", OPT_IGNORE },
	{ "nouser", OPT_IGNORE }, { "user=", OPT_IGNORE },
	{ "owner", OPT_IGNORE }, { "group", OPT_IGNORE },
	{ "_netdev", OPT_IGNORE }, { "x-", OPT_IGNORE },
	{ "comment=", OPT_IGNORE }, { "helper=", OPT_IGNORE },
	/* atime policies libfuse rejects: the filesystem applies them (the
	 * kernel never moves atime on FUSE) */
	{ "relatime", OPT_ATIME }, { "norelatime", OPT_ATIME },
	{ "strictatime", OPT_ATIME }, { "nostrictatime", OPT_ATIME },
	{ "nodiratime", OPT_ATIME }, { "diratime", OPT_ATIME },
	{ "lazytime", OPT_IGNORE }, { "nolazytime", OPT_IGNORE },
	{ "iversion", OPT_IGNORE }, { "noiversion", OPT_IGNORE },
	{ "mand", OPT_IGNORE }, { "nomand", OPT_IGNORE },
	{ "silent", OPT_IGNORE }, { "loud", OPT_IGNORE },
	/* what libfuse 3.14's fuse_session_new accepts (checked by trying) */
	{ "suid", OPT_FUSE }, { "nosuid", OPT_FUSE },
	{ "dev", OPT_FUSE }, { "nodev", OPT_FUSE },
	{ "exec", OPT_FUSE }, { "noexec", OPT_FUSE },
	{ "sync", OPT_FUSE }, { "async", OPT_FUSE },
	{ "dirsync", OPT_FUSE },
	{ "atime", OPT_FUSE }, { "noatime", OPT_FUSE },
	{ "allow_root", OPT_FUSE }, { "auto_unmount", OPT_FUSE },
	{ "fsname=", OPT_FUSE }, { "subtype=", OPT_FUSE },
	{ "max_read=", OPT_FUSE },
	{ "context=", OPT_FUSE }, { "fscontext=", OPT_FUSE },
	{ "defcontext=", OPT_FUSE }, { "rootcontext=", OPT_FUSE },
};

static void err_set(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* mount(8)'s meanings: relatime and nostrictatime are the default,
 * norelatime is strictatime. */
static void opt_atime_set(const char *opt, size_t len, struct config_opts *o)
{
	if (len == 10 && !strncmp(opt, "nodiratime", len))
		o->nodiratime = true;
	else if (len == 8 && !strncmp(opt, "diratime", len))
		o->nodiratime = false;
	else
		o->strictatime = (len == 11 && !strncmp(opt, "strictatime", len)) ||
				 (len == 10 && !strncmp(opt, "norelatime", len));
}

static void err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void config_opts_init(struct config_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->degraded = CONFIG_DEGRADED_ALLOW;
}

void config_opts_free(struct config_opts *o)
{
	free(o->fuse_opts);
	free(o->ignored);
	free(o->logfile);
	free(o->program);
	o->fuse_opts = NULL;
	o->ignored = NULL;
	o->logfile = NULL;
	o->program = NULL;
}

/* A path option's value, however long (not through opt_apply's buffer). */
static int opt_path_set(char **dst, const char *val, size_t len)
{
	char *copy;

	if (!len)
		return -EINVAL;
	copy = strndup(val, len);
	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

/* Appends item[0..len) to a comma list held in *list. */
static int list_append(char **list, const char *item, size_t len)
{
	char *copy = strndup(item, len);
	int ret = copy ? config_opts_append(list, copy) : -ENOMEM;

	free(copy);
	return ret;
}

int config_size_parse(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'b' || *end == 'B') && shift)
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

static const struct opt_rule *opt_rule_find(const char *opt, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(opt_rules) / sizeof(opt_rules[0]); i++) {
		const char *name = opt_rules[i].name;
		size_t n = strlen(name);
		bool prefix = name[n - 1] == '=' || name[n - 1] == '-';

		if (prefix ? (len >= n && !strncmp(opt, name, n))
			   : (len == n && !strncmp(opt, name, n)))
			return &opt_rules[i];
	}
	return NULL;
}

static int opt_degraded_set(const char *val, struct config_opts *o)
{
	if (!strcmp(val, "allow"))
		o->degraded = CONFIG_DEGRADED_ALLOW;
	else if (!strcmp(val, "refuse"))
		o->degraded = CONFIG_DEGRADED_REFUSE;
	else
		return -EINVAL;
	o->degraded_given = true;
	return 0;
}

static int opt_cache_mb_set(const char *val, struct config_opts *o)
{
	unsigned long long mb;
	char *end;

	if (*val < '0' || *val > '9')
		return -EINVAL;
	errno = 0;
	mb = strtoull(val, &end, 10);
	if (errno || *end || mb > (UINT64_MAX >> 20))
		return -EINVAL;
	o->cache_bytes = (uint64_t)mb << 20;
	return 0;
}

/* The alert program: run from a daemon whose working directory is /,
 * so only an absolute path means what the user meant. */
static int opt_program_set(char **dst, const char *val, size_t len)
{
	if (!len || val[0] != '/')
		return -EINVAL;
	return opt_path_set(dst, val, len);
}

/* A number of seconds in [min, 3600]. */
static int opt_seconds_set(const char *val, unsigned min, unsigned *dst)
{
	unsigned long s;
	char *end;

	if (*val < '0' || *val > '9')
		return -EINVAL;
	errno = 0;
	s = strtoul(val, &end, 10);
	if (errno || *end || s < min || s > 3600)
		return -EINVAL;
	*dst = (unsigned)s;
	return 0;
}

/* Applies one option (opt[0..len), not NUL-terminated) to o. */
static int opt_apply(const char *opt, size_t len, struct config_opts *o,
		     char *err, size_t errlen)
{
	const struct opt_rule *r = opt_rule_find(opt, len);
	char val[256] = "";
	const char *eq = memchr(opt, '=', len);
	int ret = 0;

	/* a flag given a value: ro=1 was an unknown option, ignored, and
	 * the array mounted read-write (a tester's find) */
	if (!r && eq && opt_rule_find(opt, (size_t)(eq - opt))) {
		err_set(err, errlen, "bad value in option %.*s: %.*s takes "
			"no value", (int)len, opt, (int)(eq - opt), opt);
		return -EINVAL;
	}
	if (!r)
		return list_append(&o->ignored, opt, len);
	if (eq) {
		size_t vlen = len - (size_t)(eq + 1 - opt);

		if (vlen >= sizeof(val))
			vlen = sizeof(val) - 1;
		memcpy(val, eq + 1, vlen);
		val[vlen] = '\0';
	}
	switch (r->kind) {
	case OPT_IGNORE:
	case OPT_DEFAULT_PERMISSIONS:
		break;
	case OPT_FUSE:
		if (len == 7 && !strncmp(opt, "noatime", len))
			o->noatime = true;
		else if (len == 5 && !strncmp(opt, "atime", len))
			o->noatime = false;
		ret = list_append(&o->fuse_opts, opt, len);
		break;
	case OPT_ATIME:
		opt_atime_set(opt, len, o);
		break;
	case OPT_RO: o->ro = true; break;
	case OPT_RW: o->ro = false; break;
	case OPT_ALLOW_OTHER: o->allow_other = true; break;
	case OPT_DEBUG: o->debug = true; break;
	case OPT_DEGRADED:
		ret = opt_degraded_set(val, o);
		break;
	case OPT_CACHE_MB:
		ret = opt_cache_mb_set(val, o);
		break;
	case OPT_CACHE:
		ret = config_size_parse(val, &o->cache_bytes);
		break;
	case OPT_LOGFILE:
		ret = opt_path_set(&o->logfile, eq + 1,
				   len - (size_t)(eq + 1 - opt));
		break;
	case OPT_PROGRAM:
		ret = opt_program_set(&o->program, eq + 1,
				      len - (size_t)(eq + 1 - opt));
		break;
	case OPT_PROGRAM_TIMEOUT:
		ret = opt_seconds_set(val, 1, &o->program_timeout_s);
		break;
	case OPT_DEGRADED_WAIT:
		ret = opt_seconds_set(val, 0, &o->degraded_wait_s);
		break;
	case OPT_NOFAIL: o->nofail = true; break;
	}
	if (ret == -EINVAL)
		err_set(err, errlen, "bad value in option '%.*s'%s", (int)len,
			opt, r->kind == OPT_DEGRADED ?
			" (allow or refuse)" : "");
	return ret;
}

/*
 * The next option of the string at *s, split by libmount: *opt and *len
 * span "name" or "name=value" (not NUL-terminated).  0, 1 at the end, or
 * -EINVAL when what is left cannot be split (an unbalanced '"').
 */
static int opt_next(char **s, const char **opt, size_t *len)
{
	char *name, *value;
	size_t nlen, vlen;
	int ret = mnt_optstr_next_option(s, &name, &nlen, &value, &vlen);

	if (ret == 0) {
		*opt = name;
		*len = value ? (size_t)(value + vlen - name) : nlen;
		return 0;
	}
	/* libmount stops without a word before an unbalanced quote */
	return ret < 0 || (*s)[strspn(*s, ",")] ? -EINVAL : 1;
}

int config_opts_parse(const char *optstr, struct config_opts *o, char *err,
		      size_t errlen)
{
	char *s = (char *)optstr;     /* libmount only reads through it */
	const char *opt;
	size_t len;
	int ret = 0;

	while (s && !ret) {
		ret = opt_next(&s, &opt, &len);
		if (ret == 0)
			ret = opt_apply(opt, len, o, err, errlen);
		else if (ret == -EINVAL)
			err_set(err, errlen, "bad option string '%s' "
				"(unbalanced '\"')", optstr);
	}
	if (ret == -ENOMEM)
		err_set(err, errlen, "out of memory");
	return ret == 1 ? 0 : ret;
}

int config_opts_filter(const char *optstr, char **out)
{
	char *s = (char *)optstr;
	const char *opt;
	size_t len;
	int ret = 0;

	*out = NULL;
	while (s && !ret && !(ret = opt_next(&s, &opt, &len))) {
		const struct opt_rule *r = opt_rule_find(opt, len);

		if (!r || (r->kind != OPT_IGNORE && r->kind != OPT_NOFAIL))
			ret = list_append(out, opt, len);
	}
	if (ret >= 0 && !*out && !(*out = strdup("")))
		ret = -ENOMEM;
	if (ret < 0) {
		free(*out);
		*out = NULL;
		return ret;
	}
	return 0;
}

/* ---- SOURCE ------------------------------------------------------------ */

bool config_source_is_file(const char *source)
{
	char buf[4096];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(source, &st) || !S_ISREG(st.st_mode))
		return false;
	fd = open(source, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	return n >= 0 && !memchr(buf, '\0', (size_t)n);
}

void config_source_free(struct config_source *src)
{
	int i;

	for (i = 0; i < src->nmembers; i++)
		free(src->members[i]);
	for (i = 0; i < src->nspares; i++)
		free(src->spares[i]);
	for (i = 0; i < src->nscan; i++)
		free(src->scan[i]);
	free(src->members);
	free(src->spares);
	free(src->scan);
	free(src->config_path);
	memset(src, 0, sizeof(*src));
}

static int path_list_add(char ***list, int *n, const char *path, size_t len)
{
	char **l = realloc(*list, (size_t)(*n + 1) * sizeof(*l));

	if (!l)
		return -ENOMEM;
	*list = l;
	l[*n] = strndup(path, len);
	if (!l[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int source_list_parse(const char *source, struct config_source *src,
			     char *err, size_t errlen)
{
	const char *s = source;
	int ret = 0;

	if (!*source) {
		err_set(err, errlen, "empty SOURCE");
		return -EINVAL;
	}
	while (!ret) {
		const char *colon = strchr(s, ':');
		size_t len = colon ? (size_t)(colon - s) : strlen(s);

		if (!len) {
			err_set(err, errlen,
				"empty member name in '%s' (members are joined by ':')",
				source);
			return -EINVAL;
		}
		ret = path_list_add(&src->members, &src->nmembers, s, len);
		if (!colon)
			break;
		s = colon + 1;
	}
	if (ret)
		err_set(err, errlen, "out of memory");
	return ret;
}

/*
 * libconfuse reports errors through a function without a context pointer:
 * the message goes to a thread-local buffer for the duration of a parse.
 */
static __thread char *cfg_errbuf;
static __thread size_t cfg_errlen;

static void cfg_errfunc(cfg_t *cfg, const char *fmt, va_list ap)
{
	char msg[CONFIG_ERR_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!cfg_errbuf || cfg_errbuf[0])
		return;   /* keep the first error: later ones are consequences */
	if (cfg && cfg->filename && cfg->line)
		snprintf(cfg_errbuf, cfg_errlen, "%s:%d: %s", cfg->filename,
			 cfg->line, msg);
	else if (cfg && cfg->filename)
		snprintf(cfg_errbuf, cfg_errlen, "%s: %s", cfg->filename, msg);
	else
		snprintf(cfg_errbuf, cfg_errlen, "%s", msg);
}

static int cfg_validate_degraded(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (v && (!strcmp(v, "allow") || !strcmp(v, "refuse")))
		return 0;
	cfg_error(cfg, "degraded must be \"allow\" or \"refuse\", not \"%s\"",
		  v ? v : "");
	return -1;
}

static int cfg_validate_uuid(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);
	uuid_t u;

	if (v && !uuid_parse(v, u))
		return 0;
	cfg_error(cfg, "uuid \"%s\" is not a UUID", v ? v : "");
	return -1;
}

int config_cache_check(uint64_t bytes, char *err, size_t errlen)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t mem = pages > 0 && psize > 0 ?
		       (uint64_t)pages * (uint64_t)psize : 0;

	if (!mem || bytes <= mem)
		return 0;
	err_set(err, errlen, "a cache of %llu MiB is more than this machine's "
		"memory (%llu MiB)", (unsigned long long)(bytes >> 20),
		(unsigned long long)(mem >> 20));
	return -EINVAL;
}

/* cfg_error with config_cache_check's message: the file and line */
static int cfg_cache_fits(cfg_t *cfg, uint64_t bytes)
{
	char msg[CONFIG_ERR_MAX];

	if (!config_cache_check(bytes, msg, sizeof(msg)))
		return 0;
	cfg_error(cfg, "%s", msg);
	return -1;
}

static int cfg_validate_cache(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);
	uint64_t bytes;

	if (v && !config_size_parse(v, &bytes))
		return cfg_cache_fits(cfg, bytes);
	cfg_error(cfg, "cache \"%s\" is not a size (like 256M or 1G)",
		  v ? v : "");
	return -1;
}

static int cfg_validate_cache_mb(cfg_t *cfg, cfg_opt_t *opt)
{
	long v = cfg_opt_getnint(opt, cfg_opt_size(opt) - 1);

	if (v >= 0)
		return cfg_cache_fits(cfg, (uint64_t)v << 20);
	cfg_error(cfg, "cache_mb must not be negative");
	return -1;
}

static int cfg_validate_logfile(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (v && *v)
		return 0;
	cfg_error(cfg, "logfile must not be empty");
	return -1;
}

static int cfg_validate_program(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (v && v[0] == '/')
		return 0;
	cfg_error(cfg, "program \"%s\" must be an absolute path", v ? v : "");
	return -1;
}

/* program_timeout (1 .. 3600) and degraded_wait (0 .. 3600), as their -o
 * forms (opt_seconds_set). */
static int cfg_validate_seconds(cfg_t *cfg, cfg_opt_t *opt)
{
	long v = cfg_opt_getnint(opt, cfg_opt_size(opt) - 1);
	long min = strcmp(cfg_opt_name(opt), "program_timeout") ? 0 : 1;

	if (v >= min && v <= 3600)
		return 0;
	cfg_error(cfg, "%s must be %ld to 3600 seconds", cfg_opt_name(opt), min);
	return -1;
}

static cfg_t *cfg_new(void)
{
	static cfg_opt_t array_opts[] = {
		CFG_STR("uuid", NULL, CFGF_NODEFAULT),
		CFG_STR_LIST("members", NULL, CFGF_NODEFAULT),
		CFG_STR_LIST("spares", NULL, CFGF_NODEFAULT),
		CFG_STR_LIST("scan", NULL, CFGF_NODEFAULT),
		CFG_END()
	};
	static cfg_opt_t options_opts[] = {
		CFG_INT("cache_mb", 0, CFGF_NODEFAULT),
		CFG_STR("cache", NULL, CFGF_NODEFAULT),
		CFG_STR("degraded", NULL, CFGF_NODEFAULT),
		CFG_BOOL("ro", cfg_false, CFGF_NODEFAULT),
		CFG_BOOL("allow_other", cfg_false, CFGF_NODEFAULT),
		CFG_STR("logfile", NULL, CFGF_NODEFAULT),
		CFG_STR("program", NULL, CFGF_NODEFAULT),
		CFG_INT("program_timeout", 0, CFGF_NODEFAULT),
		CFG_INT("degraded_wait", 0, CFGF_NODEFAULT),
		CFG_END()
	};
	static cfg_opt_t top_opts[] = {
		/* MULTI only so that a second section is an error, not a
		 * silent override */
		CFG_SEC("array", array_opts, CFGF_MULTI),
		CFG_SEC("options", options_opts, CFGF_MULTI),
		CFG_END()
	};
	cfg_t *cfg = cfg_init(top_opts, CFGF_NONE);

	if (!cfg)
		return NULL;
	cfg_set_error_function(cfg, cfg_errfunc);
	cfg_set_validate_func(cfg, "array|uuid", cfg_validate_uuid);
	cfg_set_validate_func(cfg, "options|degraded", cfg_validate_degraded);
	cfg_set_validate_func(cfg, "options|cache", cfg_validate_cache);
	cfg_set_validate_func(cfg, "options|cache_mb", cfg_validate_cache_mb);
	cfg_set_validate_func(cfg, "options|program", cfg_validate_program);
	cfg_set_validate_func(cfg, "options|logfile", cfg_validate_logfile);
	cfg_set_validate_func(cfg, "options|program_timeout",
			      cfg_validate_seconds);
	cfg_set_validate_func(cfg, "options|degraded_wait",
			      cfg_validate_seconds);
	return cfg;
}

/* Member paths in a file are relative to the file's directory. */
static int cfg_path_add(char ***list, int *n, const char *dir, const char *p)
{
	char buf[PATH_MAX];

	if (p[0] == '/' || !dir)
		return path_list_add(list, n, p, strlen(p));
	if (snprintf(buf, sizeof(buf), "%s/%s", dir, p) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	return path_list_add(list, n, buf, strlen(buf));
}

static int cfg_array_read(cfg_t *arr, const char *dir,
			  struct config_source *src)
{
	unsigned i;
	int ret = 0;

	for (i = 0; !ret && i < cfg_size(arr, "members"); i++)
		ret = cfg_path_add(&src->members, &src->nmembers, dir,
				   cfg_getnstr(arr, "members", i));
	for (i = 0; !ret && i < cfg_size(arr, "spares"); i++)
		ret = cfg_path_add(&src->spares, &src->nspares, dir,
				   cfg_getnstr(arr, "spares", i));
	for (i = 0; !ret && i < cfg_size(arr, "scan"); i++)
		ret = cfg_path_add(&src->scan, &src->nscan, dir,
				   cfg_getnstr(arr, "scan", i));
	if (!ret && cfg_size(arr, "uuid")) {
		uuid_parse(cfg_getstr(arr, "uuid"), src->uuid);
		src->has_uuid = true;
	}
	return ret;
}

/* The logfile, like member paths, is relative to the file's directory. */
static int cfg_logfile_read(cfg_t *op, const char *dir, struct config_opts *o)
{
	const char *p = cfg_getstr(op, "logfile");
	char buf[PATH_MAX];

	if (!p)         /* an empty one: cfg_validate_logfile refused it */
		return -EINVAL;
	if (p[0] != '/' && dir) {
		if (snprintf(buf, sizeof(buf), "%s/%s", dir, p) >=
		    (int)sizeof(buf))
			return -ENAMETOOLONG;
		p = buf;
	}
	return opt_path_set(&o->logfile, p, strlen(p));
}

static int cfg_options_read(cfg_t *op, const char *dir, struct config_opts *o)
{
	if (cfg_size(op, "cache_mb"))
		o->cache_bytes = (uint64_t)cfg_getint(op, "cache_mb") << 20;
	if (cfg_size(op, "cache"))
		config_size_parse(cfg_getstr(op, "cache"), &o->cache_bytes);
	if (cfg_size(op, "degraded"))
		opt_degraded_set(cfg_getstr(op, "degraded"), o);
	if (cfg_size(op, "ro"))
		o->ro = cfg_getbool(op, "ro");
	if (cfg_size(op, "allow_other"))
		o->allow_other = cfg_getbool(op, "allow_other");
	if (cfg_size(op, "program_timeout"))
		o->program_timeout_s = (unsigned)cfg_getint(op, "program_timeout");
	if (cfg_size(op, "degraded_wait"))
		o->degraded_wait_s = (unsigned)cfg_getint(op, "degraded_wait");
	if (cfg_size(op, "program") &&
	    opt_path_set(&o->program, cfg_getstr(op, "program"),
			 strlen(cfg_getstr(op, "program"))))
		return -ENOMEM;
	return cfg_size(op, "logfile") ? cfg_logfile_read(op, dir, o) : 0;
}

/*
 * The array section names its members, or its uuid alone (the members are
 * then found by scanning, in the scan directories if any): scan beside a
 * member list would leave one of the two unused.
 */
static int cfg_array_check(cfg_t *cfg, const char *path, char *err,
			   size_t errlen)
{
	cfg_t *arr = cfg_size(cfg, "array") ? cfg_getsec(cfg, "array") : NULL;
	bool members = arr && cfg_size(arr, "members");

	if (!arr || (!members && !cfg_size(arr, "uuid"))) {
		err_set(err, errlen, "%s: no members (array { members = {...} }, "
			"or uuid = \"...\" to find them by scanning)", path);
		return -EINVAL;
	}
	if (members && cfg_size(arr, "scan")) {
		err_set(err, errlen, "%s: scan is for finding members by uuid; "
			"give members or scan, not both", path);
		return -EINVAL;
	}
	return 0;
}

static char *path_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return NULL;
	return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/*
 * libconfuse takes a section left open at the end of the file as closed:
 * a file cut short, or a '}' forgotten, mounted (a tester's find).  The
 * braces outside strings and comments must pair up; 0, or the line of
 * the first '{' left open (-1: a '}' with none open, at *line).
 */
static int braces_open_at(FILE *f, int *line)
{
	int c, d = 0, quote = 0, depth = 0, first = 0, n = 1;

	while ((c = fgetc(f)) != EOF) {
		if (c == '\n') {
			n++;
		} else if (quote) {
			if (c == '\\' && (d = fgetc(f)) != EOF)
				n += d == '\n';
			else if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'') {
			quote = c;
		} else if (c == '#' ||
			   (c == '/' && (d = fgetc(f)) == '/')) {
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			n += c == '\n';
		} else if (c == '/' && d == '*') {
			for (c = 0; (d = fgetc(f)) != EOF &&
				    !(c == '*' && d == '/'); c = d)
				n += d == '\n';
		} else if (c == '/') {
			if (d != EOF)
				ungetc(d, f);
		} else if (c == '{') {
			first = depth++ ? first : n;
		} else if (c == '}' && --depth < 0) {
			*line = n;
			return -1;
		}
	}
	return depth > 0 ? first : 0;
}

static int braces_check(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	int line = 0, open;

	if (!f)
		return 0;       /* cfg_parse says why */
	open = braces_open_at(f, &line);
	fclose(f);
	if (open > 0)
		err_set(err, errlen, "%s:%d: a section opened here is not "
			"closed (a closing brace is missing)", path, open);
	else if (open < 0)
		err_set(err, errlen, "%s:%d: a closing brace closes no "
			"section", path, line);
	return open ? -EINVAL : 0;
}

static int source_file_parse(const char *path, struct config_source *src,
			     struct config_opts *o, char *err, size_t errlen)
{
	char msg[CONFIG_ERR_MAX] = "";
	char *dir = path_dirname(path);
	cfg_t *cfg = cfg_new();
	int ret = -ENOMEM;

	if (!cfg)
		goto out;
	ret = braces_check(path, err, errlen);
	if (ret)
		goto out_cfg;
	cfg_errbuf = msg;
	cfg_errlen = sizeof(msg);
	ret = cfg_parse(cfg, path);
	cfg_errbuf = NULL;
	if (ret != CFG_SUCCESS) {
		if (!msg[0])
			snprintf(msg, sizeof(msg), "%s: cannot read: %s", path,
				 strerror(errno));
		err_set(err, errlen, "%s", msg);
		ret = ret == CFG_FILE_ERROR ? -ENOENT : -EINVAL;
		goto out_cfg;
	}
	ret = -EINVAL;
	if (cfg_size(cfg, "array") > 1 || cfg_size(cfg, "options") > 1) {
		err_set(err, errlen, "%s: more than one %s section", path,
			cfg_size(cfg, "array") > 1 ? "array" : "options");
		goto out_cfg;
	}
	if (cfg_array_check(cfg, path, err, errlen))
		goto out_cfg;
	ret = cfg_array_read(cfg_getsec(cfg, "array"), dir, src);
	if (ret) {
		err_set(err, errlen, "%s: %s", path, strerror(-ret));
		goto out_cfg;
	}
	if (cfg_size(cfg, "options"))
		ret = cfg_options_read(cfg_getsec(cfg, "options"), dir, o);
	if (ret)
		err_set(err, errlen, "%s: logfile: %s", path, strerror(-ret));
	src->config_path = ret ? NULL : strdup(path);
	if (!ret && !src->config_path)
		ret = -ENOMEM;
out_cfg:
	cfg_free(cfg);
out:
	free(dir);
	return ret;
}

/*
 * "UUID=<uuid>", as in fstab (a path of that name, however unlikely, is
 * still a path): the array is named, its members are to be found.
 */
static bool source_is_uuid(const char *source)
{
	struct stat st;

	return !strncmp(source, "UUID=", 5) && stat(source, &st) != 0;
}

static int source_uuid_parse(const char *source, struct config_source *src,
			     char *err, size_t errlen)
{
	if (uuid_parse(source + 5, src->uuid)) {
		err_set(err, errlen, "'%s' is not UUID=<array uuid>", source);
		return -EINVAL;
	}
	src->has_uuid = true;
	return 0;
}

int config_source_parse(const char *source, struct config_source *src,
			struct config_opts *o, char *err, size_t errlen)
{
	int ret;

	memset(src, 0, sizeof(*src));
	if (config_source_is_file(source))
		ret = source_file_parse(source, src, o, err, errlen);
	else if (source_is_uuid(source))
		ret = source_uuid_parse(source, src, err, errlen);
	else
		ret = source_list_parse(source, src, err, errlen);
	if (ret)
		config_source_free(src);
	return ret;
}

int config_opts_append(char **opts, const char *more)
{
	/* libmount adds the comma; "more" may itself be a list */
	return mnt_optstr_append_option(opts, more, NULL);
}
