/*
 * arena: the commit's scratch memory.  A commit allocates parity, old
 * columns, deltas and checksum arrays for every stripe of its batch and
 * frees them all at its end; with malloc that was a posix_memalign and a
 * free per stripe (a tenth of the daemon's time under 4 KiB random
 * writes).  The arena hands out pieces of large chunks it keeps from one
 * commit to the next and takes them back all at once.
 *
 * Pieces of a block or more are RC_BLOCK_SIZE aligned (member I/O may be
 * O_DIRECT), smaller ones 64-byte aligned.  Not thread-safe: the owner
 * serialises (rc_array.commit_arena is under commit_lock).
 */
#include <errno.h>
#include <stdlib.h>
#include "array.h"

#define ARENA_CHUNK (1u << 20)

static size_t align_up(size_t x, size_t a)
{
	return (x + a - 1) & ~(a - 1);
}

void *rc_arena_alloc(struct rc_arena *ar, size_t bytes)
{
	size_t align = bytes >= RC_BLOCK_SIZE ? RC_BLOCK_SIZE : 64, at;
	struct rc_arena_chunk *c, *nc;

	bytes = bytes ? bytes : 1;
	for (; ar->cur < ar->n; ar->cur++) {
		c = &ar->c[ar->cur];
		at = align_up(c->used, align);
		if (at <= c->size && bytes <= c->size - at) {
			c->used = at + bytes;
			return c->base + at;
		}
	}
	nc = realloc(ar->c, (ar->n + 1) * sizeof(*nc));
	if (!nc)
		return NULL;
	ar->c = nc;
	c = &ar->c[ar->n];
	c->size = align_up(bytes > ARENA_CHUNK ? bytes : ARENA_CHUNK,
			   RC_BLOCK_SIZE);
	c->base = rc_buf_alloc(c->size);
	if (!c->base)
		return NULL;
	c->used = bytes;
	ar->cur = ar->n++;
	return c->base;
}

void rc_arena_reset(struct rc_arena *ar, size_t keep)
{
	size_t kept = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < ar->n; i++) {
		if (kept + ar->c[i].size > keep) {
			free(ar->c[i].base);
			continue;
		}
		kept += ar->c[i].size;
		ar->c[i].used = 0;
		ar->c[n++] = ar->c[i];
	}
	ar->n = n;
	ar->cur = 0;
}

void rc_arena_fini(struct rc_arena *ar)
{
	rc_arena_reset(ar, 0);
	free(ar->c);
	ar->c = NULL;
}
