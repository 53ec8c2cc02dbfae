/*
 * log: raidcore's messages - where they go (rc_set_logger, default stderr)
 * and the names they print for levels and member states.  Calls nothing
 * else in raidcore: every other file may log.
 */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>
#include "array.h"

#define RC_LOG_PER_SECOND 10

static void (*rc_logger)(int level, const char *msg);

void rc_set_logger(void (*fn)(int level, const char *msg))
{
	rc_logger = fn;
}

static void log_emit(int level, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (rc_logger)
		rc_logger(level, msg);
	else
		fprintf(stderr, "raidcore: %s\n", msg);
}

void rc_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void rc_log_level(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(level, fmt, ap);
	va_end(ap);
}

static uint64_t now_second(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

void rc_log_block(struct rc_array *a, int slot, uint64_t mblock,
		  const char *what)
{
	struct rc_member *m = &a->m[slot];
	const char *name = m->dev ? m->dev->name : "(missing)";
	uint64_t sec = now_second(), was = atomic_load(&m->log_second);
	unsigned dropped;

	if (was != sec && atomic_compare_exchange_strong(&m->log_second, &was,
							 sec)) {
		dropped = atomic_exchange(&m->log_dropped, 0);
		atomic_store(&m->log_count, 0);
		if (dropped)
			rc_log_level(LOG_ERR, "member %d (%s): %u more such "
				     "events not shown", slot, name, dropped);
	}
	if (atomic_fetch_add(&m->log_count, 1) >= RC_LOG_PER_SECOND) {
		atomic_fetch_add(&m->log_dropped, 1);
		return;
	}
	rc_log_level(LOG_ERR, "member %d (%s), block %llu: %s", slot, name,
		     (unsigned long long)mblock, what);
}

const char *rc_level_name(enum rc_level level)
{
	switch (level) {
	case RC_RAID0: return "raid0";
	case RC_RAID1: return "raid1";
	case RC_RAID4: return "raid4";
	case RC_RAID5: return "raid5";
	case RC_RAID6: return "raid6";
	case RC_RAID10: return "raid10";
	}
	return "unknown";
}

const char *rc_member_state_name(enum rc_member_state s)
{
	static const char *names[] = { "active", "faulty", "missing",
				       "rebuilding", "spare", "empty" };

	return (unsigned)s < 6 ? names[s] : "?";
}
