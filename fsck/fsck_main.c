/*
 * fsck.raidfs: check and repair a raidfs array and its filesystem
 * (fsck.h lists the phases and their files).
 *
 * Fast path: without -f, an array whose every member says clean (and
 * records no errors) and whose filesystem was unmounted cleanly is judged
 * by those flags alone (read only, nothing written, whatever the mode).
 * Otherwise every phase runs.  Phase 1 always assembles read-only, and
 * every check that can refuse the run is made there; the mode decides
 * only whether anything is written after it: -n keeps the read-only
 * assembly (raidcore replays an unclean journal into memory) and mounts
 * the filesystem read-only, so the members are bit-for-bit unchanged
 * afterwards; -y and -p assemble again, read-write.  A writing pass that
 * leaves nothing uncorrected clears the error record on the members.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdev.h"
#include "fs.h"
#include "fsck.h"
#include "scan.h"

volatile sig_atomic_t fsck_cancelled;

void fsck_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void fsck_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(FSCK_PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void fsck_verbose(const struct fsck *f, const char *fmt, ...)
{
	va_list ap;

	if (!f->o.verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void fsck_phase(int n, const char *title)
{
	fsck_msg("Phase %d: %s", n, title);
}

static void on_sigint(int sig)
{
	static const char msg[] = "\n" FSCK_PROG ": cancelled\n";

	if (fsck_cancelled) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(FSCK_CANCELLED);
		_exit(FSCK_CANCELLED);
	}
	fsck_cancelled = 1;
}

void fsck_cancel_point(struct fsck *f)
{
	if (!fsck_cancelled)
		return;
	fsck_err("cancelled by the user");
	fsck_array_close(f);
	exit(FSCK_CANCELLED | f->status);
}

static void signals_init(void)
{
	struct sigaction sa = { .sa_handler = on_sigint };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int run(struct fsck *f)
{
	bool done;
	int ret;

	ret = fsck_members(f);
	if (ret) {
		/* stopped before the read-write assembly: nothing written,
		 * so nothing corrected, whatever phase 1 meant to mend (a
		 * refused --rebuild exited 9: x1's find) */
		f->status &= ~FSCK_CORRECTED;
		return ret;
	}
	fsck_cancel_point(f);
	ret = fsck_fast_path(f, &done);
	if (ret || done)
		return ret;
	ret = fsck_array_writable(f);
	if (ret)
		return ret;
	ret = fsck_rebuild(f);
	if (ret)
		return ret;
	fsck_cancel_point(f);
	ret = fsck_redundancy(f);
	if (ret)
		return ret;
	fsck_cancel_point(f);
	ret = fsck_filesystem(f);
	if (ret)
		return ret;
	return fsck_errors_clear(f);
}

/* A SOURCE naming the array by uuid: its members are scanned for first. */
static int members_find(struct fsck *f)
{
	char err[CONFIG_ERR_MAX] = "";
	int ret = source_members_find(&f->src, &f->co, err, sizeof(err));

	if (ret)
		fsck_err("%s", err);
	return ret;
}

/* degraded: the array ends the run with a slot not in sync (-p lets a
 * boot go on with it, exit 0, but "clean" alone misled: x1's note) */
static const char *verdict(int status, bool degraded)
{
	if (status & FSCK_OPERATIONAL)
		return "check not completed";
	if (status & FSCK_UNCORRECTED)
		return "ERRORS LEFT UNCORRECTED";
	if (status & FSCK_CORRECTED)
		return degraded ? "errors corrected, the array DEGRADED" :
				  "errors corrected";
	return degraded ? "clean, the array DEGRADED" : "clean";
}

int main(int argc, char **argv)
{
	struct fsck f = { 0 };
	char err[CONFIG_ERR_MAX];
	struct rc_info info;
	bool degraded = false;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = fsck_opts_parse(argc, argv, &f.o);
	if (ret)
		return ret > 0 ? FSCK_OK : FSCK_USAGE;
	signals_init();
	config_opts_init(&f.co);
	if (config_source_parse(f.o.source, &f.src, &f.co, err, sizeof(err))) {
		fsck_err("%s", err);
		config_opts_free(&f.co);
		return FSCK_USAGE;
	}
	ret = members_find(&f);
	if (!ret)
		ret = run(&f);
	if (ret)
		f.status |= FSCK_OPERATIONAL;
	if (f.array && rc_array_info(f.array, &info) == 0)
		degraded = info.degraded;
	if (fsck_array_close(&f))
		f.status |= FSCK_OPERATIONAL;
	fsck_msg("%s: %s", f.o.source, verdict(f.status, degraded));
	free(f.devs);
	free(f.bad);
	config_source_free(&f.src);
	config_opts_free(&f.co);
	return f.status;
}
