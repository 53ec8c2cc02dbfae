/*
 * test_common_hcache: the one cache shape (common/hcache.h) against a
 * model - an array of objects with an "in table" and an "on LRU" flag and
 * an LRU order kept as a sequence number - over random operations; then
 * the fini callback sees every object exactly once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "hcache.h"

#define NOBJ 512

struct obj {
	struct hc_node node;
	uint64_t key;
	bool in_table, idle;
	uint64_t idle_seq;        /* model: when it went onto the LRU */
	int finied;
};

static struct obj objs[NOBJ];

static struct obj *model_oldest(void)
{
	struct obj *best = NULL;
	int i;

	for (i = 0; i < NOBJ; i++)
		if (objs[i].in_table && objs[i].idle &&
		    (!best || objs[i].idle_seq < best->idle_seq))
			best = &objs[i];
	return best;
}

static void check_model(struct hcache *c)
{
	size_t count = 0, nlru = 0;
	struct hc_node *n;
	uint64_t last = 0;
	int i;

	for (i = 0; i < NOBJ; i++) {
		struct hc_node *f = hc_find(c, objs[i].key);

		if (objs[i].in_table) {
			assert_ptr_equal(f, &objs[i].node);
			count++;
			nlru += objs[i].idle;
		} else {
			assert_null(f);
		}
	}
	assert_int_equal(c->count, count);
	assert_int_equal(c->nlru, nlru);
	/* the LRU walks idle objects oldest first */
	for (n = hc_lru_oldest(c); n; n = hc_lru_next(n)) {
		struct obj *o = hc_entry(n, struct obj, node);

		assert_true(o->in_table && o->idle);
		assert_true(o->idle_seq > last);
		last = o->idle_seq;
		nlru--;
	}
	assert_int_equal(nlru, 0);
	n = hc_lru_oldest(c);
	assert_ptr_equal(n ? hc_entry(n, struct obj, node) : NULL,
			 model_oldest());
}

static int count_cb(struct hc_node *n, void *arg)
{
	(*(size_t *)arg)++;
	return 0;
}

static void fini_cb(struct hc_node *n, void *arg)
{
	hc_entry(n, struct obj, node)->finied++;
}

static void test_random_ops(void **state)
{
	struct hcache c;
	uint64_t seq = 0;
	size_t seen = 0;
	int step, i;

	srandom(7);
	assert_int_equal(hc_init(&c, 61), 0);   /* few buckets: long chains */
	for (i = 0; i < NOBJ; i++)
		objs[i] = (struct obj){ .key = (uint64_t)i * 4096 + 17 };
	for (step = 0; step < 20000; step++) {
		struct obj *o = &objs[random() % NOBJ];

		switch (random() % 4) {
		case 0:
			if (!o->in_table) {
				hc_insert(&c, &o->node, o->key);
				o->in_table = true;
				o->idle = false;
			}
			break;
		case 1:
			if (o->in_table) {
				hc_remove(&c, &o->node);
				o->in_table = o->idle = false;
			}
			break;
		case 2:
			if (o->in_table) {
				hc_lru_add(&c, &o->node);
				o->idle = true;
				o->idle_seq = ++seq;
			}
			break;
		case 3:
			if (o->in_table) {
				hc_lru_del(&c, &o->node);
				o->idle = false;
			}
			break;
		}
		if (step % 97 == 0)
			check_model(&c);
	}
	check_model(&c);
	assert_int_equal(hc_foreach(&c, count_cb, &seen), 0);
	assert_int_equal(seen, c.count);
	hc_fini(&c, fini_cb, NULL);
	for (i = 0; i < NOBJ; i++)
		assert_int_equal(objs[i].finied, objs[i].in_table ? 1 : 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
