/*
 * progress: how far a long phase has got.  On a terminal (stderr), one
 * line redrawn at most ten times a second: a bar, percent, rate and time
 * left.  Otherwise a plain line every 10 seconds, so logs stay readable.
 *
 * A cancel request (SIGINT) seen here ends a read-only run at once: it has
 * written nothing.  A run that writes stops at the next phase boundary
 * (fsck_cancel_point), because raidcore offers no way to stop a scrub or a
 * rebuild half-way other than a crash.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsck.h"

#define BAR_WIDTH 30

double fsck_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void fsck_progress_init(struct fsck_progress *p, const char *what,
			uint64_t total_bytes, bool rdonly)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->tty = isatty(STDERR_FILENO);
	p->rdonly = rdonly;
	p->total_bytes = total_bytes;
	p->t0 = p->last = fsck_now();
}

static void eta_str(double secs, char *buf, size_t len)
{
	unsigned long s = secs > 0 && secs < 1e7 ? (unsigned long)secs : 0;

	snprintf(buf, len, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
}

void fsck_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct fsck_progress *p = ctx;
	double now = fsck_now(), frac, el, rate;
	char bar[BAR_WIDTH + 1], eta[32];
	int fill;

	if (fsck_cancelled && p->rdonly) {
		fprintf(stderr, "\n" FSCK_PROG ": cancelled by the user\n");
		_exit(FSCK_CANCELLED);
	}
	if (!total || now - p->last < (p->tty ? 0.1 : 10.0))
		return;
	p->last = now;
	frac = (double)done / (double)total;
	el = now - p->t0;
	rate = el > 0 ? frac * (double)p->total_bytes / el / (1 << 20) : 0;
	eta_str(frac > 0 ? el / frac - el : 0, eta, sizeof(eta));
	if (!p->tty) {
		fprintf(stderr, "%s: %.1f%% done, %.0f MiB/s, %s left\n",
			p->what, frac * 100, rate, eta);
		return;
	}
	fill = (int)(frac * BAR_WIDTH);
	memset(bar, '#', (size_t)fill);
	memset(bar + fill, '.', (size_t)(BAR_WIDTH - fill));
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\r  %s [%s] %5.1f%% %6.0f MiB/s ETA %s ", p->what,
		bar, frac * 100, rate, eta);
}

void fsck_progress_end(struct fsck_progress *p)
{
	if (p->tty && fsck_now() - p->t0 >= 0.1)
		fputs("\r\033[K", stderr);
}

uint64_t fsck_member_bytes(const struct rc_info *i)
{
	uint64_t cols = i->data_columns ? i->data_columns : 1;

	return i->blocks / cols * i->members * RC_BLOCK_SIZE;
}
