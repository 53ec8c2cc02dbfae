/*
 * event: what happened to an array, told to whoever asked
 * (rc_array_set_event_handler: the daemon's control server) - a member
 * failed, a spare took a slot, a rebuild started, moved on, finished.
 * The places that change member states call rc_event_emit; the handler
 * is called in their thread, under event_lock, a leaf taken under any of
 * raidcore's locks, so the handler may only queue the event.
 * Calls nothing else in raidcore.
 */
#include <stdio.h>
#include <string.h>
#include "array.h"

void rc_array_set_event_handler(struct rc_array *a,
				void (*fn)(void *ctx, const struct rc_event *ev),
				void *ctx)
{
	pthread_mutex_lock(&a->event_lock);
	a->event_fn = fn;
	a->event_ctx = ctx;
	pthread_mutex_unlock(&a->event_lock);
}

void rc_array_set_vouch(struct rc_array *a,
			enum rc_vouch (*fn)(void *ctx, uint64_t block,
					    const void *data),
			void *ctx)
{
	a->vouch_fn = fn;
	a->vouch_ctx = ctx;
}

void rc_event_emit(struct rc_array *a, enum rc_event_kind kind, int slot,
		   const char *dev, const char *why, uint64_t done,
		   uint64_t total, int err)
{
	struct rc_event ev = { .kind = kind, .slot = slot, .done = done,
			       .total = total, .err = err };

	snprintf(ev.dev, sizeof(ev.dev), "%s", dev ? dev : "");
	snprintf(ev.why, sizeof(ev.why), "%s", why ? why : "");
	pthread_mutex_lock(&a->event_lock);
	if (a->event_fn)
		a->event_fn(a->event_ctx, &ev);
	pthread_mutex_unlock(&a->event_lock);
}
