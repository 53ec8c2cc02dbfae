/*
 * log: raidcore's messages - where they go (rc_set_logger, default stderr)
 * and the names they print for levels and member states.  Calls nothing
 * else in raidcore: every other file may log.
 */
#include <stdarg.h>
#include <stdio.h>
#include "array.h"

static void (*rc_logger)(int level, const char *msg);

void rc_set_logger(void (*fn)(int level, const char *msg))
{
	rc_logger = fn;
}

void rc_log(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rc_logger)
		rc_logger(4, msg);
	else
		fprintf(stderr, "raidcore: %s\n", msg);
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
