/*
 * test_config: SOURCE and -o parsing (source/config.c) as mount(8), fstab and
 * a user at a shell hand them to raidfs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "config.h"
#include "probe.h"

static char tmpdir[] = "/tmp/test_config.XXXXXX";

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

static int group_setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	return nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Writes len bytes of text to tmpdir/name; returns the path (static). */
static const char *file_write(const char *name, const void *text, size_t len)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

static const char *text_write(const char *name, const char *text)
{
	return file_write(name, text, strlen(text));
}

/* ---- -o options ---------------------------------------------------------- */

struct opts_case {
	const char *in;
	int ret;
	bool ro;
	bool allow_other;
	enum config_degraded degraded;
	uint64_t cache_bytes;
	const char *fuse_opts;     /* NULL: none */
	const char *ignored;       /* NULL: none */
};

static const struct opts_case opts_cases[] = {
	{ NULL, 0, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "", 0, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "ro", 0, true, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "ro,rw", 0, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "rw,ro", 0, true, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "allow_other", 0, false, true, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "degraded=refuse", 0, false, false, CONFIG_DEGRADED_REFUSE, 0, NULL, NULL },
	{ "degraded=refuse,degraded=allow", 0, false, false,
	  CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "cache_mb=256", 0, false, false, CONFIG_DEGRADED_ALLOW, 256ull << 20,
	  NULL, NULL },
	{ "cache=1G", 0, false, false, CONFIG_DEGRADED_ALLOW, 1ull << 30, NULL, NULL },
	{ "cache=64k", 0, false, false, CONFIG_DEGRADED_ALLOW, 64ull << 10, NULL, NULL },
	{ "cache=512MiB", 0, false, false, CONFIG_DEGRADED_ALLOW, 512ull << 20,
	  NULL, NULL },
	{ "default_permissions", 0, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	/* fstab and mount(8) options: accepted, silent, no effect */
	{ "defaults,auto,noauto,nofail,user,users,nouser,_netdev", 0, false,
	  false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "x-systemd.automount,x-systemd.device-timeout=10s,x-foo", 0, false,
	  false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "comment=hello,relatime,nodiratime,strictatime,lazytime", 0, false,
	  false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	/* a quoted value may hold commas */
	{ "comment=\"a,b,c\",ro", 0, true, false, CONFIG_DEGRADED_ALLOW, 0,
	  NULL, NULL },
	/* kernel flags libfuse takes: passed through, in order */
	{ "suid,nosuid,dev,nodev,exec,noexec,atime,noatime,sync,async", 0,
	  false, false, CONFIG_DEGRADED_ALLOW, 0,
	  "suid,nosuid,dev,nodev,exec,noexec,atime,noatime,sync,async", NULL },
	{ "defaults,nodev,ro,fsname=/x,nofail", 0, true, false,
	  CONFIG_DEGRADED_ALLOW, 0, "nodev,fsname=/x", NULL },
	/* unknown: collected for one warning, never fatal */
	{ "frobnicate,ro,zzz=3", 0, true, false, CONFIG_DEGRADED_ALLOW, 0,
	  NULL, "frobnicate,zzz=3" },
	/* empty items between commas are nothing */
	{ ",,ro,,", 0, true, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	/* garbage values of known options are errors */
	{ "degraded=maybe", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW, 0,
	  NULL, NULL },
	{ "degraded=", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "cache_mb=abc", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "cache_mb=-1", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "cache_mb=12x", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "cache=lots", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "cache=99999999999999G", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW,
	  0, NULL, NULL },
	/* a flag given a value: ro=1 was ignored as unknown, and the array
	 * mounted read-write (a tester's find) */
	{ "ro=1", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL, NULL },
	{ "allow_other=yes", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW, 0,
	  NULL, NULL },
	{ "nofail=0", -EINVAL, false, false, CONFIG_DEGRADED_ALLOW, 0, NULL,
	  NULL },
};

static void assert_str_or_null(const char *got, const char *want)
{
	if (!want)
		assert_null(got);
	else
		assert_string_equal(got, want);
}

static void test_opts_table(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(opts_cases) / sizeof(opts_cases[0]); i++) {
		const struct opts_case *c = &opts_cases[i];
		struct config_opts o;
		char err[CONFIG_ERR_MAX] = "";
		int ret;

		config_opts_init(&o);
		ret = config_opts_parse(c->in, &o, err, sizeof(err));
		print_message("-o '%s' -> %d %s\n", c->in ? c->in : "(null)",
			      ret, err);
		assert_int_equal(ret, c->ret);
		if (ret) {
			/* the message names the option that was wrong */
			assert_non_null(strstr(err, strchr(c->in, '=') ?
					       "bad value" : ""));
			assert_non_null(strstr(err, c->in));
		} else {
			assert_int_equal(o.ro, c->ro);
			assert_int_equal(o.allow_other, c->allow_other);
			assert_int_equal(o.degraded, c->degraded);
			assert_int_equal(o.cache_bytes, c->cache_bytes);
			assert_str_or_null(o.fuse_opts, c->fuse_opts);
			assert_str_or_null(o.ignored, c->ignored);
		}
		config_opts_free(&o);
	}
}

static void test_opts_debug_noatime(void **state)
{
	struct config_opts o;

	config_opts_init(&o);
	assert_false(o.debug);
	assert_false(o.noatime);
	assert_int_equal(config_opts_parse("debug,noatime", &o, NULL, 0), 0);
	assert_true(o.debug);
	assert_true(o.noatime);
	assert_string_equal(o.fuse_opts, "noatime");
	assert_int_equal(config_opts_parse("atime", &o, NULL, 0), 0);
	assert_false(o.noatime);
	config_opts_free(&o);
}

/* the atime policies libfuse rejects are kept for fs, not passed on */
static void test_opts_atime_policies(void **state)
{
	struct config_opts o;

	config_opts_init(&o);
	assert_false(o.strictatime);
	assert_false(o.nodiratime);
	assert_int_equal(config_opts_parse("strictatime,nodiratime", &o, NULL,
					   0), 0);
	assert_true(o.strictatime);
	assert_true(o.nodiratime);
	assert_null(o.fuse_opts);
	assert_int_equal(config_opts_parse("relatime,diratime", &o, NULL, 0), 0);
	assert_false(o.strictatime);
	assert_false(o.nodiratime);
	assert_int_equal(config_opts_parse("norelatime", &o, NULL, 0), 0);
	assert_true(o.strictatime);
	assert_int_equal(config_opts_parse("nostrictatime", &o, NULL, 0), 0);
	assert_false(o.strictatime);
	config_opts_free(&o);
}

static void test_opts_filter(void **state)
{
	static const struct {
		const char *in;
		const char *out;
	} cases[] = {
		{ NULL, "" }, { "", "" },
		{ "defaults,nofail", "" },
		{ "ro,defaults,noauto,_netdev,x-systemd.automount,allow_other",
		  "ro,allow_other" },
		{ "comment=\"x,y\",degraded=refuse,frob", "degraded=refuse,frob" },
		{ "nodev,cache=1G,user,users", "nodev,cache=1G" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = NULL;

		assert_int_equal(config_opts_filter(cases[i].in, &out), 0);
		assert_string_equal(out, cases[i].out);
		free(out);
	}
}

/* A quote left open cannot be split as mount(8) would: an error that
 * says so, never a silently dropped option. */
static void test_opts_unbalanced_quote(void **state)
{
	static const char *const cases[] = {
		"comment=\"a,b", "ro,comment=\"x", "\"",
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_opts o;
		char err[CONFIG_ERR_MAX] = "";
		char *out = NULL;

		config_opts_init(&o);
		assert_int_equal(config_opts_parse(cases[i], &o, err,
						   sizeof(err)), -EINVAL);
		print_message("-o '%s' -> %s\n", cases[i], err);
		assert_non_null(strstr(err, "unbalanced"));
		assert_int_equal(config_opts_filter(cases[i], &out), -EINVAL);
		assert_null(out);
		config_opts_free(&o);
	}
}

/* -o given several times: joined with commas, lists kept whole. */
static void test_opts_append(void **state)
{
	char *opts = NULL;

	assert_int_equal(config_opts_append(&opts, "ro"), 0);
	assert_string_equal(opts, "ro");
	assert_int_equal(config_opts_append(&opts, "nodev,cache=1G"), 0);
	assert_int_equal(config_opts_append(&opts, "comment=\"a,b\""), 0);
	assert_string_equal(opts, "ro,nodev,cache=1G,comment=\"a,b\"");
	free(opts);
}

/* ---- sizes ------------------------------------------------------------- */

static void test_size_parse(void **state)
{
	static const struct {
		const char *in;
		int ret;
		uint64_t bytes;
	} cases[] = {
		{ "0", 0, 0 }, { "4096", 0, 4096 }, { "1k", 0, 1024 },
		{ "1K", 0, 1024 }, { "3M", 0, 3ull << 20 }, { "2G", 0, 2ull << 30 },
		{ "1T", 0, 1ull << 40 }, { "5MiB", 0, 5ull << 20 },
		{ "5MB", 0, 5ull << 20 }, { "", -EINVAL, 0 }, { "M", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 }, { "1X", -EINVAL, 0 }, { "1 M", -EINVAL, 0 },
		{ "1MM", -EINVAL, 0 }, { "16777216T", -EINVAL, 0 },
		{ "99999999999999999999", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t b = 12345;

		assert_int_equal(config_size_parse(cases[i].in, &b), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(b, cases[i].bytes);
	}
}

/* ---- SOURCE as a member list -------------------------------------------- */

static void test_source_list(void **state)
{
	static const struct {
		const char *in;
		int ret;
		int n;
		const char *m[4];
	} cases[] = {
		{ "/srv/a.img:/srv/b.img:/dev/sdc1", 0, 3,
		  { "/srv/a.img", "/srv/b.img", "/dev/sdc1" } },
		{ "/srv/one.img", 0, 1, { "/srv/one.img" } },
		{ "rel/a:rel/b", 0, 2, { "rel/a", "rel/b" } },
		{ "", -EINVAL, 0, { NULL } },
		{ "/a::/b", -EINVAL, 0, { NULL } },
		{ ":/a", -EINVAL, 0, { NULL } },
		{ "/a:", -EINVAL, 0, { NULL } },
	};
	size_t i;
	int j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_source src;
		struct config_opts o;
		char err[CONFIG_ERR_MAX] = "";

		config_opts_init(&o);
		assert_int_equal(config_source_parse(cases[i].in, &src, &o, err,
						     sizeof(err)), cases[i].ret);
		if (cases[i].ret) {
			assert_true(err[0] != '\0');
			continue;
		}
		assert_int_equal(src.nmembers, cases[i].n);
		for (j = 0; j < src.nmembers; j++)
			assert_string_equal(src.members[j], cases[i].m[j]);
		assert_int_equal(src.nspares, 0);
		assert_null(src.config_path);
		assert_false(src.has_uuid);
		config_source_free(&src);
		config_opts_free(&o);
	}
}

/* ---- config file or member? --------------------------------------------- */

static void test_source_is_file(void **state)
{
	/* a raidcore superblock starts "RAIDFSMB" and is binary */
	static const char member[16] = "RAIDFSMB\1\0\0\0\0\0\0";
	static const char zeros[4096];
	char path[512];

	assert_true(config_source_is_file(text_write("t.conf",
				"array { members = {\"/a\"} }\n")));
	assert_true(config_source_is_file(text_write("empty.conf", "")));
	assert_false(config_source_is_file(file_write("m.img", member,
						      sizeof(member))));
	assert_false(config_source_is_file(file_write("z.img", zeros,
						      sizeof(zeros))));
	assert_false(config_source_is_file(tmpdir));    /* a directory */
	snprintf(path, sizeof(path), "%s/absent.conf", tmpdir);
	assert_false(config_source_is_file(path));
	assert_false(config_source_is_file("/a.img:/b.img"));
}

/* A single member given by path is a member, not a config file. */
static void test_source_single_member(void **state)
{
	static const char member[16] = "RAIDFSMB\1\0\0\0\0\0\0";
	struct config_source src;
	struct config_opts o;
	char err[CONFIG_ERR_MAX] = "";
	char path[512];

	snprintf(path, sizeof(path), "%s", file_write("one.img", member,
						      sizeof(member)));
	config_opts_init(&o);
	assert_int_equal(config_source_parse(path, &src, &o, err, sizeof(err)), 0);
	assert_int_equal(src.nmembers, 1);
	assert_string_equal(src.members[0], path);
	assert_null(src.config_path);
	config_source_free(&src);
	config_opts_free(&o);
}

/* ---- SOURCE as a configuration file ------------------------------------- */

static void test_config_file_good(void **state)
{
	static const char text[] =
		"# the data array\n"
		"array {\n"
		"  uuid = \"0f0e0d0c-0b0a-0908-0706-050403020100\"\n"
		"  members = { \"/srv/a.img\", \"b.img\", \"/dev/sdc1\" }\n"
		"  spares = { \"/srv/c.img\" }\n"
		"}\n"
		"options { cache_mb = 256  degraded = \"refuse\"  ro = true }\n";
	static const uint8_t uuid[16] = { 15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
					  5, 4, 3, 2, 1, 0 };
	struct config_source src;
	struct config_opts o;
	char err[CONFIG_ERR_MAX] = "";
	char path[512], rel[600];

	snprintf(path, sizeof(path), "%s", text_write("good.conf", text));
	config_opts_init(&o);
	assert_int_equal(config_source_parse(path, &src, &o, err, sizeof(err)), 0);
	assert_int_equal(src.nmembers, 3);
	assert_string_equal(src.members[0], "/srv/a.img");
	snprintf(rel, sizeof(rel), "%s/b.img", tmpdir);
	assert_string_equal(src.members[1], rel);   /* relative to the file */
	assert_string_equal(src.members[2], "/dev/sdc1");
	assert_int_equal(src.nspares, 1);
	assert_string_equal(src.spares[0], "/srv/c.img");
	assert_true(src.has_uuid);
	assert_memory_equal(src.uuid, uuid, 16);
	assert_string_equal(src.config_path, path);
	assert_true(o.ro);
	assert_int_equal(o.degraded, CONFIG_DEGRADED_REFUSE);
	assert_int_equal(o.cache_bytes, 256ull << 20);

	/* -o given after the file overrides what the file says */
	assert_int_equal(config_opts_parse("rw,degraded=allow,cache=1G", &o,
					   err, sizeof(err)), 0);
	assert_false(o.ro);
	assert_int_equal(o.degraded, CONFIG_DEGRADED_ALLOW);
	assert_int_equal(o.cache_bytes, 1ull << 30);
	config_source_free(&src);
	config_opts_free(&o);
}

/* A section left open at the end of the file (libconfuse takes it as
 * closed: a file cut short mounted, a tester's find), or a '}' closing
 * none: an error naming the line.  Braces in strings and comments do not
 * count. */
static void test_config_file_braces(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "array {\n  members = { \"/a\", \"/b\" }\n", ":1: a section opened here is not closed" },
		{ "# {\narray {\n  members = { \"/a\" }\n}\noptions {\n  ro = true\n",
		  ":5: a section opened here is not closed" },
		{ "array {\n  members = { \"/a\" }\n}\n}\n", ":4: a closing brace closes no section" },
		{ "array { // {\n  members = { \"/a{\" } /* { */\n}\n", NULL },
	};
	struct config_source src;
	struct config_opts o;
	char err[CONFIG_ERR_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = text_write("braces.conf", cases[i].text);
		int ret;

		err[0] = 0;
		config_opts_init(&o);
		ret = config_source_parse(path, &src, &o, err, sizeof(err));
		print_message("case %zu -> %d %s\n", i, ret, err);
		if (cases[i].want) {
			assert_int_equal(ret, -EINVAL);
			assert_non_null(strstr(err, cases[i].want));
		} else {
			assert_int_equal(ret, 0);
			config_source_free(&src);
		}
		config_opts_free(&o);
	}
}

/* logfile=: a path of any length, never empty; in a file, relative to it. */
static void test_opts_logfile(void **state)
{
	struct config_source src;
	struct config_opts o;
	char err[CONFIG_ERR_MAX] = "", opt[700], path[512], want[600];
	char longpath[600];

	config_opts_init(&o);
	assert_int_equal(config_opts_parse("logfile=/var/log/r.log,ro", &o, err,
					   sizeof(err)), 0);
	assert_string_equal(o.logfile, "/var/log/r.log");
	assert_true(o.ro);
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	snprintf(opt, sizeof(opt), "logfile=%s", longpath);
	assert_int_equal(config_opts_parse(opt, &o, err, sizeof(err)), 0);
	assert_string_equal(o.logfile, longpath);
	assert_int_equal(config_opts_parse("logfile=", &o, err, sizeof(err)),
			 -EINVAL);
	config_opts_free(&o);

	snprintf(path, sizeof(path), "%s", text_write("log.conf",
		 "array { members = { \"/a\" } }\n"
		 "options { logfile = \"raidfs.log\" }\n"));
	config_opts_init(&o);
	assert_int_equal(config_source_parse(path, &src, &o, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/raidfs.log", tmpdir);
	assert_string_equal(o.logfile, want);
	config_source_free(&src);
	config_opts_free(&o);
}

/* program= and program_timeout=: an absolute path, 1 .. 3600 s; the
 * same in a file, where a relative path or a zero timeout is an error. */
static void test_opts_program(void **state)
{
	struct config_source src;
	struct config_opts o;
	char err[CONFIG_ERR_MAX] = "", path[512];

	config_opts_init(&o);
	assert_int_equal(config_opts_parse("program=/usr/local/bin/alert,"
					   "program_timeout=3", &o, err,
					   sizeof(err)), 0);
	assert_string_equal(o.program, "/usr/local/bin/alert");
	assert_int_equal(o.program_timeout_s, 3);
	assert_int_equal(config_opts_parse("program=alert", &o, err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(config_opts_parse("program=", &o, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(config_opts_parse("program_timeout=0", &o, err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(config_opts_parse("program_timeout=3601", &o, err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(config_opts_parse("program_timeout=5s", &o, err,
					   sizeof(err)), -EINVAL);
	config_opts_free(&o);

	snprintf(path, sizeof(path), "%s", text_write("prog.conf",
		 "array { members = { \"/a\" } }\n"
		 "options { program = \"/sbin/alert\" program_timeout = 20 }\n"));
	config_opts_init(&o);
	assert_int_equal(config_source_parse(path, &src, &o, err, sizeof(err)), 0);
	assert_string_equal(o.program, "/sbin/alert");
	assert_int_equal(o.program_timeout_s, 20);
	config_source_free(&src);
	config_opts_free(&o);

	snprintf(path, sizeof(path), "%s", text_write("prog2.conf",
		 "array { members = { \"/a\" } }\n"
		 "options { program = \"alert\" }\n"));
	config_opts_init(&o);
	assert_int_equal(config_source_parse(path, &src, &o, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "absolute"));
	config_opts_free(&o);
	snprintf(path, sizeof(path), "%s", text_write("prog3.conf",
		 "array { members = { \"/a\" } }\n"
		 "options { program_timeout = 0 }\n"));
	config_opts_init(&o);
	assert_int_equal(config_source_parse(path, &src, &o, err, sizeof(err)),
			 -EINVAL);
	config_opts_free(&o);
}

/* Options the file does not name keep the caller's values. */
static void test_config_file_minimal(void **state)
{
	struct config_source src;
	struct config_opts o;
	char err[CONFIG_ERR_MAX] = "";
	char path[512];

	snprintf(path, sizeof(path), "%s", text_write("min.conf",
			"array { members = { \"/x\", \"/y\" } }\n"));
	config_opts_init(&o);
	o.cache_bytes = 777;
	o.allow_other = true;
	assert_int_equal(config_source_parse(path, &src, &o, err, sizeof(err)), 0);
	assert_int_equal(src.nmembers, 2);
	assert_int_equal(src.nspares, 0);
	assert_false(src.has_uuid);
	assert_int_equal(o.cache_bytes, 777);
	assert_true(o.allow_other);
	assert_false(o.ro);
	config_source_free(&src);
	config_opts_free(&o);
}

/* Each malformed file fails with a message naming the file and line. */
static void test_config_file_malformed(void **state)
{
	static const struct {
		const char *text;
		const char *where;     /* ":LINE:" expected, or "" */
		const char *what;      /* a piece of the message */
	} cases[] = {
		{ "array {\n members = { \"/a\" }\n bogus = 3\n}\n", ":3:",
		  "bogus" },
		{ "array { members = { \"/a\" } }\nunknown_section { }\n", ":2:",
		  "unknown_section" },
		{ "array { members = { \"/a\" } }\noptions {\n\n degraded = \"maybe\"\n}\n",
		  ":4:", "maybe" },
		{ "array { members = { \"/a\" } }\noptions {\ncache_mb = abc }\n",
		  ":3:", "cache_mb" },
		{ "array { members = { \"/a\" } }\noptions {\ncache_mb = -5 }\n",
		  ":3:", "negative" },
		{ "array { members = { \"/a\" } }\noptions {\ncache = \"12Q\" }\n",
		  ":3:", "12Q" },
		{ "array { members = { \"/a\" } }\noptions {\nro = perhaps }\n",
		  ":3:", "ro" },
		{ "array {\n uuid = \"not-a-uuid\"\n members = { \"/a\" } }\n",
		  ":2:", "not-a-uuid" },
		{ "array {\n members = { \"/a\" }\n}\n}}}\n", ":4:", "brace" },
		{ "array {\n members = { \"/a\" \n", "", "" },
		{ "garbage garbage garbage\n", ":1:", "garbage" },
		{ "options { ro = true }\n", "", "no members" },
		{ "array { spares = { \"/s\" } }\n", "", "no members" },
		{ "", "", "no members" },
		{ "array { members = {\"/x\"} }\narray { members = {\"/y\"} }\n",
		  "", "more than one array" },
		/* scan is for finding members by uuid, not beside a list */
		{ "array { uuid = \"0f0e0d0c-0b0a-0908-0706-050403020100\"\n"
		  " members = { \"/a\" } scan = { \"/srv\" } }\n", "",
		  "not both" },
		{ "array { scan = { \"/srv\" } }\n", "", "no members" },
		{ "array { members = { \"/a\" } }\noptions {\ndegraded_wait = 3601 }\n",
		  ":3:", "degraded_wait" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_source src;
		struct config_opts o;
		char err[CONFIG_ERR_MAX] = "";
		char path[512], name[32];

		snprintf(name, sizeof(name), "bad%zu.conf", i);
		snprintf(path, sizeof(path), "%s",
			 text_write(name, cases[i].text));
		config_opts_init(&o);
		assert_int_equal(config_source_parse(path, &src, &o, err,
						     sizeof(err)), -EINVAL);
		print_message("%s\n", err);
		assert_non_null(strstr(err, name));
		assert_non_null(strstr(err, cases[i].where));
		assert_non_null(strstr(err, cases[i].what));
		assert_null(src.members);    /* nothing half-filled */
		config_opts_free(&o);
	}
}

/* ---- members named by the array's uuid (found by scanning) -------------- */

static const uint8_t uuid_0f[16] = { 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4,
				     3, 2, 1, 0 };

static void test_source_uuid(void **state)
{
	struct config_source src;
	struct config_opts o;
	char err[CONFIG_ERR_MAX] = "";

	config_opts_init(&o);
	assert_int_equal(config_source_parse(
		"UUID=0f0e0d0c-0b0a-0908-0706-050403020100", &src, &o, err,
		sizeof(err)), 0);
	assert_true(src.has_uuid);
	assert_memory_equal(src.uuid, uuid_0f, 16);
	assert_int_equal(src.nmembers, 0);
	assert_int_equal(src.nscan, 0);     /* every block device */
	assert_null(src.config_path);
	config_source_free(&src);
	assert_int_equal(config_source_parse("UUID=0f0e-nonsense", &src, &o,
					     err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "UUID=0f0e-nonsense"));
	assert_null(src.members);
	config_opts_free(&o);
}

static void test_config_file_uuid_only(void **state)
{
	static const char text[] =
		"array {\n"
		"  uuid = \"0f0e0d0c-0b0a-0908-0706-050403020100\"\n"
		"  scan = { \"imgs\", \"/dev\" }\n"
		"}\n"
		"options { degraded_wait = 30 }\n";
	struct config_source src;
	struct config_opts o;
	char err[CONFIG_ERR_MAX] = "";
	char path[512], rel[600];

	snprintf(path, sizeof(path), "%s", text_write("uuid.conf", text));
	config_opts_init(&o);
	assert_int_equal(config_source_parse(path, &src, &o, err, sizeof(err)), 0);
	assert_true(src.has_uuid);
	assert_memory_equal(src.uuid, uuid_0f, 16);
	assert_int_equal(src.nmembers, 0);
	assert_int_equal(src.nscan, 2);
	snprintf(rel, sizeof(rel), "%s/imgs", tmpdir);
	assert_string_equal(src.scan[0], rel);      /* relative to the file */
	assert_string_equal(src.scan[1], "/dev");
	assert_int_equal(o.degraded_wait_s, 30);
	config_source_free(&src);
	config_opts_free(&o);
}

static void test_opts_degraded_wait_nofail(void **state)
{
	static const struct {
		const char *in;
		int ret;
		unsigned wait_s;
		bool nofail;
	} cases[] = {
		{ "degraded_wait=30,nofail", 0, 30, true },
		{ "degraded_wait=0", 0, 0, false },
		{ "degraded_wait=3600", 0, 3600, false },
		{ "defaults,nofail", 0, 0, true },
		{ "degraded_wait=3601", -EINVAL, 0, false },
		{ "degraded_wait=5s", -EINVAL, 0, false },
		{ "degraded_wait=", -EINVAL, 0, false },
		{ "degraded_wait=-1", -EINVAL, 0, false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_opts o;
		char err[CONFIG_ERR_MAX] = "";

		config_opts_init(&o);
		assert_int_equal(config_opts_parse(cases[i].in, &o, err,
						   sizeof(err)), cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(o.degraded_wait_s, cases[i].wait_s);
			assert_int_equal(o.nofail, cases[i].nofail);
		} else {
			assert_non_null(strstr(err, "degraded_wait"));
		}
		config_opts_free(&o);
	}
}

/* probe_proves_blank (fsck's rebuild targets): a sparse file and one
 * written with zeros are blank; one byte anywhere is not, at its offset,
 * also where probe_reads_blank's samples do not look (a tester's find:
 * fsck -y rebuilt over a file of data there); a loop device (no extents
 * to ask for: read whole) the same, when root can make one. */
static void test_probe_proves_blank(void **state)
{
	static uint8_t zeros[1 << 20];
	const uint64_t hidden = 1638400 + 4096 * 7 + 13;
	char path[300], cmd[400], loop[64] = "";
	struct rc_dev *dev;
	uint64_t at;
	FILE *p;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/blank.img", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 64 << 20), 0);
	assert_int_equal(pwrite(fd, zeros, sizeof(zeros), 8 << 20),
			 (ssize_t)sizeof(zeros));           /* zeros, written */
	assert_int_equal(rc_dev_open_file(path, RC_DEV_RDONLY, &dev), 0);
	assert_int_equal(probe_proves_blank(path, dev, &at), 1);
	assert_true(probe_reads_blank(dev));
	rc_dev_close(dev);
	assert_int_equal(pwrite(fd, "x", 1, (off_t)hidden), 1);
	assert_int_equal(rc_dev_open_file(path, RC_DEV_RDONLY, &dev), 0);
	assert_true(probe_reads_blank(dev));            /* the samples miss it */
	assert_int_equal(probe_proves_blank(path, dev, &at), 0);
	assert_int_equal(at, hidden);
	rc_dev_close(dev);
	close(fd);

	snprintf(cmd, sizeof(cmd), "losetup --find --show '%s' 2>/dev/null",
		 path);
	p = geteuid() == 0 ? popen(cmd, "r") : NULL;
	if (p && (!fgets(loop, sizeof(loop), p) || !loop[0]))
		loop[0] = 0;
	if (p)
		pclose(p);
	loop[strcspn(loop, "\n")] = 0;
	if (!loop[0]) {
		print_message("no loop device (not root, or losetup failed)\n");
		return;
	}
	assert_int_equal(rc_dev_open_file(loop, RC_DEV_RDONLY, &dev), 0);
	assert_int_equal(probe_proves_blank(loop, dev, &at), 0);
	assert_int_equal(at, hidden);
	rc_dev_close(dev);
	snprintf(cmd, sizeof(cmd), "losetup -d '%s'", loop);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_table),
		cmocka_unit_test(test_opts_debug_noatime),
		cmocka_unit_test(test_opts_atime_policies),
		cmocka_unit_test(test_opts_filter),
		cmocka_unit_test(test_opts_unbalanced_quote),
		cmocka_unit_test(test_opts_append),
		cmocka_unit_test(test_size_parse),
		cmocka_unit_test(test_source_list),
		cmocka_unit_test(test_source_is_file),
		cmocka_unit_test(test_source_single_member),
		cmocka_unit_test(test_opts_logfile),
		cmocka_unit_test(test_opts_program),
		cmocka_unit_test(test_config_file_good),
		cmocka_unit_test(test_config_file_braces),
		cmocka_unit_test(test_config_file_minimal),
		cmocka_unit_test(test_config_file_malformed),
		cmocka_unit_test(test_source_uuid),
		cmocka_unit_test(test_config_file_uuid_only),
		cmocka_unit_test(test_opts_degraded_wait_nofail),
		cmocka_unit_test(test_probe_proves_blank),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
