/*
 * hcache: the one cache shape raidfs uses everywhere - a hash table of
 * objects keyed by a 64-bit number, and an LRU list of the idle ones.
 *
 * Users: the filesystem's buffer cache (fs/bcache.c) and inode cache
 * (fs/inode.c), raidcore's stripe table (raidcore/stripe.c) and checksum
 * table cache (raidcore/csum.c), and the blocks a memory device holds
 * (raidcore/dev/mem.c; as a plain hash, its LRU unused).
 *
 * Intrusive, as the kernel's lists: a struct hc_node lives inside each
 * cached object and hc_entry() gets the object back, so the cache never
 * allocates per object and never frees one - the owner decides when an
 * object dies (usually: its last holder is gone and it is idle on the LRU).
 *
 * No locks: every call is made under the owner's lock (the lock that
 * guards the cache in its owner's lock order).
 *
 * Usage pattern:
 *   hc_init(&c, nbuckets)
 *   n = hc_find(&c, key); if (!n) { obj = alloc; hc_insert(&c, &obj->node, key); }
 *   hc_lru_del(&c, n) while in use; hc_lru_add(&c, n) when idle
 *   while ((n = hc_lru_oldest(&c)) && over the limit) { hc_remove(&c, n); free }
 *   hc_fini(&c, free_fn, arg)   frees what is left through free_fn
 */
#ifndef RAIDFS_HCACHE_H
#define RAIDFS_HCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

struct hc_node {
	struct hc_node *hnext;          /* hash chain */
	TAILQ_ENTRY(hc_node) lru;       /* valid while on_lru */
	uint64_t key;
	bool on_lru;
};

TAILQ_HEAD(hc_lru_head, hc_node);

struct hcache {
	struct hc_node **tab;
	size_t nbuckets;
	size_t count;                   /* objects in the table */
	size_t nlru;                    /* of which idle, on the LRU */
	struct hc_lru_head lru;         /* first: least recently used */
};

#define hc_entry(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* 0, or -ENOMEM.  nbuckets 0 is taken as 1. */
int hc_init(struct hcache *c, size_t nbuckets);
/* Calls fn (may be NULL) on every object still in the table, after
 * removing it, then frees the table itself. */
void hc_fini(struct hcache *c, void (*fn)(struct hc_node *n, void *arg),
	     void *arg);

struct hc_node *hc_find(const struct hcache *c, uint64_t key);
/* n must not be in a table; keys need not be unique (hc_find returns the
 * newest), but every user here keeps them unique. */
void hc_insert(struct hcache *c, struct hc_node *n, uint64_t key);
/* Takes n out of the table and, if it is there, off the LRU. */
void hc_remove(struct hcache *c, struct hc_node *n);

/* The LRU of idle objects: add puts n at the most recently used end (or
 * moves it there), del takes it off (no-op when it is not on it). */
void hc_lru_add(struct hcache *c, struct hc_node *n);
void hc_lru_del(struct hcache *c, struct hc_node *n);
/* Least recently used idle object, or NULL. */
struct hc_node *hc_lru_oldest(const struct hcache *c);
/* The next more recently used one after n, or NULL. */
struct hc_node *hc_lru_next(const struct hc_node *n);

/* Calls fn on every object in the table (fn must not change the table);
 * stops at the first non-zero return and passes it on. */
int hc_foreach(const struct hcache *c, int (*fn)(struct hc_node *n, void *arg),
	       void *arg);

#endif
