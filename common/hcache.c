/*
 * hcache: hash table + LRU list (see hcache.h).  Chained buckets, the
 * bucket chosen by Fibonacci hashing of the key (multiplicative, high bits),
 * which spreads sequential block and inode numbers evenly.
 */
#include <errno.h>
#include <stdlib.h>
#include "hcache.h"

static size_t hc_bucket(const struct hcache *c, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 24) % c->nbuckets;
}

int hc_init(struct hcache *c, size_t nbuckets)
{
	c->nbuckets = nbuckets ? nbuckets : 1;
	c->count = 0;
	c->nlru = 0;
	TAILQ_INIT(&c->lru);
	c->tab = calloc(c->nbuckets, sizeof(*c->tab));
	return c->tab ? 0 : -ENOMEM;
}

void hc_fini(struct hcache *c, void (*fn)(struct hc_node *n, void *arg),
	     void *arg)
{
	struct hc_node *n, *next;
	size_t i;

	if (!c->tab)
		return;
	for (i = 0; i < c->nbuckets; i++) {
		for (n = c->tab[i]; n; n = next) {
			next = n->hnext;
			hc_remove(c, n);
			if (fn)
				fn(n, arg);
		}
	}
	free(c->tab);
	c->tab = NULL;
}

struct hc_node *hc_find(const struct hcache *c, uint64_t key)
{
	struct hc_node *n;

	for (n = c->tab[hc_bucket(c, key)]; n; n = n->hnext)
		if (n->key == key)
			return n;
	return NULL;
}

void hc_insert(struct hcache *c, struct hc_node *n, uint64_t key)
{
	struct hc_node **b = &c->tab[hc_bucket(c, key)];

	n->key = key;
	n->on_lru = false;
	n->hnext = *b;
	*b = n;
	c->count++;
}

void hc_remove(struct hcache *c, struct hc_node *n)
{
	struct hc_node **pp = &c->tab[hc_bucket(c, n->key)];

	while (*pp && *pp != n)
		pp = &(*pp)->hnext;
	if (!*pp)
		return;
	*pp = n->hnext;
	n->hnext = NULL;
	c->count--;
	hc_lru_del(c, n);
}

void hc_lru_add(struct hcache *c, struct hc_node *n)
{
	if (n->on_lru)
		TAILQ_REMOVE(&c->lru, n, lru);
	else
		c->nlru++;
	TAILQ_INSERT_TAIL(&c->lru, n, lru);
	n->on_lru = true;
}

void hc_lru_del(struct hcache *c, struct hc_node *n)
{
	if (!n->on_lru)
		return;
	TAILQ_REMOVE(&c->lru, n, lru);
	n->on_lru = false;
	c->nlru--;
}

struct hc_node *hc_lru_oldest(const struct hcache *c)
{
	return TAILQ_FIRST(&c->lru);
}

struct hc_node *hc_lru_next(const struct hc_node *n)
{
	return TAILQ_NEXT(n, lru);
}

int hc_foreach(const struct hcache *c, int (*fn)(struct hc_node *n, void *arg),
	       void *arg)
{
	struct hc_node *n;
	size_t i;
	int ret;

	for (i = 0; i < c->nbuckets; i++)
		for (n = c->tab[i]; n; n = n->hnext)
			if ((ret = fn(n, arg)) != 0)
				return ret;
	return 0;
}
