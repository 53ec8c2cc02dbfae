/*
 * config: what raidfs is told to mount, and how.
 *
 * Two inputs, both from the command line of raidfs / mount.raidfs
 * (option strings split and joined by libmount, as mount(8) does):
 *   SOURCE    the members joined by ':' ("/srv/a.img:/srv/b.img"), the
 *             path of an array configuration file (docs/CONFIG.md), or
 *             UUID=<array uuid> (the members found by scanning: scan.c)
 *   -o OPTS   comma-separated mount options, as mount(8) passes them
 *
 * Usage pattern:
 *   config_opts_init(&o)
 *   config_source_parse(source, &src, &o, ...)  file options become defaults
 *   config_opts_parse(optstr, &o, ...)          -o overrides them
 *   ... use src and o ...
 *   config_source_free(&src); config_opts_free(&o)
 *
 * Nothing here opens a member or talks to the kernel: it is pure parsing
 * (apart from reading the configuration file), so it is unit-tested whole.
 */
#ifndef RAIDFS_CONFIG_H
#define RAIDFS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONFIG_UUID_SIZE 16
#define CONFIG_ERR_MAX 512

enum config_degraded {
	CONFIG_DEGRADED_ALLOW = 0,   /* mount with members missing, if redundancy allows */
	CONFIG_DEGRADED_REFUSE = 1,  /* mount only with full redundancy */
};

/*
 * What SOURCE names.  nmembers == 0 only with has_uuid: the members are
 * to be found by scanning (source_members_find, scan.c), in the scan
 * directories when nscan > 0, else among the system's block devices.
 */
struct config_source {
	char **members;          /* paths, in the order given */
	int nmembers;
	char **spares;           /* only from a configuration file */
	int nspares;
	char **scan;             /* array.scan: directories to probe */
	int nscan;
	bool has_uuid;           /* the file (or UUID=) named the array's uuid */
	uint8_t uuid[CONFIG_UUID_SIZE];
	char *config_path;       /* the file SOURCE named, or NULL for a list */
};

/*
 * Options after parsing.  Fields a user did not set keep the values from
 * config_opts_init() (or from the configuration file).
 */
struct config_opts {
	bool ro;
	bool allow_other;
	bool debug;                   /* -o debug: libfuse traces every request */
	bool noatime;                 /* also passed on to libfuse */
	bool strictatime, nodiratime; /* fs applies them (fs.h) */
	enum config_degraded degraded;
	bool degraded_given;          /* degraded= was given (-o or the
					 configuration file) */
	bool catchup;                 /* not an option: the daemon sets it, so
					 a returning member catches up at
					 assembly (RC_ASSEMBLE_CATCHUP) */
	bool typo_check;              /* not an option: the daemon sets it, so
					 a member named in SOURCE that does
					 not exist refuses the mount unless
					 degraded is meant (source.c) */
	uint64_t cache_bytes;         /* 0: the library's default */
	char *fuse_opts;              /* comma list for libfuse, or NULL */
	char *ignored;                /* unknown options, for one warning, or NULL */
	char *logfile;                /* logfile=PATH: where the daemon's
					 messages go once detached (log.h) */
	char *program;                /* program=PATH: run for every event
					 (daemon/control_alert.c) */
	unsigned program_timeout_s;   /* program_timeout=S: killed past it;
					 0: the default (10 s) */
	unsigned degraded_wait_s;     /* degraded_wait=S: wait up to S for
					 late members before assembling
					 degraded (0: do not wait) */
	bool nofail;                  /* nofail: an array whose members are
					 missing is not a mount failure */
};

void config_opts_init(struct config_opts *o);
void config_opts_free(struct config_opts *o);

/*
 * Parses a comma-separated option string (may be NULL or empty) into o.
 * Options mount(8) and fstab pass that mean nothing to raidfs are accepted
 * silently; options libfuse knows go to o->fuse_opts; anything else is
 * collected in o->ignored and is not an error.  A known option with a
 * garbage value (degraded=maybe, cache_mb=abc), or a string libmount cannot
 * split (an unbalanced '"'), is -EINVAL with err set.
 */
int config_opts_parse(const char *optstr, struct config_opts *o, char *err,
		      size_t errlen);

/*
 * Copies optstr into *out (malloc'd, "" when nothing is left) without the
 * options only mount(8), fstab or systemd act on (defaults, nofail,
 * _netdev, x-*, comment=, ...): what raidfs acts on, as mount.raidfs -v
 * reports it.  -EINVAL as config_opts_parse for an unsplittable string.
 */
int config_opts_filter(const char *optstr, char **out);

/*
 * True when SOURCE names a configuration file rather than a member list:
 * an existing regular file whose first 4 KiB hold no NUL byte.  Member
 * images and devices always do (a raidcore superblock is binary), text
 * configuration never does.
 */
bool config_source_is_file(const char *source);

/*
 * Fills src from SOURCE: a configuration file, "UUID=<uuid>" (no members:
 * they are found by scanning), or the members joined by ':'.  A
 * configuration file's options section is
 * applied to o (call config_opts_parse afterwards so -o overrides it).
 * Errors name the file and line: "/etc/raidfs/a.conf:3: no such option 'x'".
 */
int config_source_parse(const char *source, struct config_source *src,
			struct config_opts *o, char *err, size_t errlen);
void config_source_free(struct config_source *src);

/* Parses "256M", "1G", "4096", "64k" into bytes; -EINVAL on garbage. */
int config_size_parse(const char *s, uint64_t *bytes);
/* A cache larger than the machine's memory can never be allocated:
 * -EINVAL and why in err. */
int config_cache_check(uint64_t bytes, char *err, size_t errlen);

/* Appends ",more" (or "more") to the malloc'd option string *opts; more
 * may itself be a list.  0 or -ENOMEM. */
int config_opts_append(char **opts, const char *more);

#endif
