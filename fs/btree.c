/*
 * btree: a B+tree of fixed-size records keyed by their first 8 bytes (a
 * little-endian u64), one node per 4 KiB block.  Used for file extent maps
 * (key: file block), directories (key: name hash | collision index) and the
 * orphan list (key: inode number).
 *
 * Internal nodes hold (key, child) pairs; child i holds keys >= key i and
 * < key i+1 (key 0 is never consulted).  Deletion frees empty nodes, merges
 * a node under a quarter full into a sibling when both fit in one, and
 * shortens a root with one child; separators are not raised when the
 * smallest key under them goes, so a search that falls off a leaf restarts
 * from the neighbouring separator (fs_bt_find).
 *
 * Caller holds whatever lock protects the tree's holder; modifications run
 * inside a transaction.  The holder (inode or superblock) must be marked
 * dirty by the caller after a modifying call: the root may have moved.
 */
#include <string.h>
#include "fs_int.h"

#define PTR_SIZE ((unsigned)sizeof(struct fs_bt_ptr_disk))

static struct fs_node_disk *node(struct fs_buf *b)
{
	return (struct fs_node_disk *)b->data;
}

static unsigned node_cap(unsigned rs)
{
	return (FS_BSIZE - FS_NODE_HDR) / rs;
}

static unsigned rsize(struct fs_bt *t, unsigned lvl)
{
	return lvl ? PTR_SIZE : t->rec_size;
}

static uint8_t *rec_at(struct fs_buf *b, unsigned i, unsigned rs)
{
	return b->data + FS_NODE_HDR + (size_t)i * rs;
}

static uint64_t key_at(struct fs_buf *b, unsigned i, unsigned rs)
{
	return fs_rec_key(rec_at(b, i, rs));
}

static unsigned count_of(struct fs_buf *b)
{
	return fs_le16(node(b)->count);
}

static void count_set(struct fs_buf *b, unsigned n)
{
	node(b)->count = fs_cpu16((uint16_t)n);
}

static uint64_t child_at(struct fs_buf *b, unsigned i)
{
	return fs_le64(((struct fs_bt_ptr_disk *)rec_at(b, i, PTR_SIZE))->child);
}

static int node_read(struct fs_bt *t, uint64_t blk, unsigned lvl,
		     struct fs_buf **out)
{
	struct fs_node_disk *n;
	unsigned rs = rsize(t, lvl);
	int err;

	err = bc_read_meta(t->fs, blk, FS_BT_NODE, out);
	if (err)
		return err;
	n = node(*out);
	if (fs_le16(n->level) != lvl || fs_le16(n->rec_size) != rs ||
	    fs_le16(n->tree) != t->kind || fs_le64(n->h.owner) != t->owner ||
	    fs_le16(n->count) == 0 || fs_le16(n->count) > node_cap(rs)) {
		fs_log(LOG_ERR, "B+tree node %llu of inode %llu is "
		       "inconsistent", (unsigned long long)blk,
		       (unsigned long long)t->owner);
		bc_put(t->fs, *out);
		*out = NULL;
		return -EUCLEAN;
	}
	return 0;
}

static int node_new(struct fs_bt *t, struct fs_tx *tx, unsigned lvl,
		    struct fs_buf **out)
{
	struct fs_node_disk *n;
	uint64_t blk;
	int err;

	err = fs_alloc_meta(t->fs, tx, t->goal, &blk);
	if (err)
		return err;
	err = bc_new(t->fs, blk, out);
	if (err) {
		fs_free_blocks(t->fs, tx, blk, 1, true);
		return err;
	}
	t->goal = blk + 1;
	if (t->nblocks)
		(*t->nblocks)++;
	n = node(*out);
	fs_bhdr_init(n, FS_BT_NODE, blk, t->owner);
	n->level = fs_cpu16((uint16_t)lvl);
	n->rec_size = fs_cpu16((uint16_t)rsize(t, lvl));
	n->tree = fs_cpu16(t->kind);
	fs_tx_dirty_new(t->fs, tx, *out);
	return 0;
}

static void node_free(struct fs_bt *t, struct fs_tx *tx, uint64_t blk)
{
	fs_free_blocks(t->fs, tx, blk, 1, true);
	if (t->nblocks)
		(*t->nblocks)--;
}

/* First record index with key >= k. */
static unsigned lower_bound(struct fs_buf *b, unsigned rs, uint64_t k)
{
	unsigned lo = 0, hi = count_of(b), mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (key_at(b, mid, rs) < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The child of an internal node that covers k. */
static unsigned child_index(struct fs_buf *b, uint64_t k)
{
	unsigned lo = 1, hi = count_of(b), mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (key_at(b, mid, PTR_SIZE) <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* Descends to the leaf for k; next/prev: the tightest separators around it. */
static int descend(struct fs_bt *t, uint64_t k, struct fs_buf **leaf,
		   uint64_t *next, bool *has_next, uint64_t *prev,
		   bool *has_prev)
{
	uint64_t blk = *t->root;
	unsigned lvl = *t->depth - 1, i;
	struct fs_buf *b;
	int err;

	*has_next = *has_prev = false;
	for (;;) {
		err = node_read(t, blk, lvl, &b);
		if (err)
			return err;
		if (lvl == 0)
			break;
		i = child_index(b, k);
		if (i + 1 < count_of(b)) {
			*next = key_at(b, i + 1, PTR_SIZE);
			*has_next = true;
		}
		if (i > 0) {
			*prev = key_at(b, i, PTR_SIZE);
			*has_prev = true;
		}
		blk = child_at(b, i);
		bc_put(t->fs, b);
		lvl--;
	}
	*leaf = b;
	return 0;
}

int fs_bt_find(struct fs_bt *t, uint64_t key, enum fs_bt_find how, void *rec)
{
	uint64_t next = 0, prev = 0;
	bool has_next, has_prev;
	struct fs_buf *b;
	unsigned pos, n;
	int err;

	if (*t->depth == 0)
		return -ENOENT;
	for (;;) {
		err = descend(t, key, &b, &next, &has_next, &prev, &has_prev);
		if (err)
			return err;
		n = count_of(b);
		pos = lower_bound(b, t->rec_size, key);
		err = -ENOENT;
		if (how == FS_BT_EQ) {
			if (pos < n && key_at(b, pos, t->rec_size) == key)
				err = 0;
		} else if (how == FS_BT_GE) {
			if (pos < n)
				err = 0;
		} else {
			if (pos < n && key_at(b, pos, t->rec_size) == key)
				err = 0;
			else if (pos > 0 && (pos--, true))
				err = 0;
		}
		if (!err)
			memcpy(rec, rec_at(b, pos, t->rec_size), t->rec_size);
		bc_put(t->fs, b);
		if (!err || how == FS_BT_EQ)
			return err;
		/* Fell off the leaf: restart next to it (see the header). */
		if (how == FS_BT_GE && has_next)
			key = next;
		else if (how == FS_BT_LE && has_prev && prev > 0)
			key = prev - 1;
		else
			return -ENOENT;
	}
}

/* Inserts rec (rs bytes) at pos of b, which has room. */
static void node_insert_at(struct fs_buf *b, unsigned rs, unsigned pos,
			   const void *rec)
{
	unsigned n = count_of(b);

	memmove(rec_at(b, pos + 1, rs), rec_at(b, pos, rs),
		(size_t)(n - pos) * rs);
	memcpy(rec_at(b, pos, rs), rec, rs);
	count_set(b, n + 1);
}

/*
 * Inserts rec at pos of the full node b by splitting it: the upper half
 * moves to a new node, whose first key and block are returned.
 */
static int node_split_insert(struct fs_bt *t, struct fs_tx *tx,
			     struct fs_buf *b, unsigned lvl, unsigned pos,
			     const void *rec, uint64_t *skey, uint64_t *sblk)
{
	unsigned rs = rsize(t, lvl), n = count_of(b), mid = n / 2;
	struct fs_buf *nb;
	int err;

	err = node_new(t, tx, lvl, &nb);
	if (err)
		return err;
	memcpy(rec_at(nb, 0, rs), rec_at(b, mid, rs), (size_t)(n - mid) * rs);
	count_set(nb, n - mid);
	count_set(b, mid);
	if (pos <= mid)
		node_insert_at(b, rs, pos, rec);
	else
		node_insert_at(nb, rs, pos - mid, rec);
	*skey = key_at(nb, 0, rs);
	*sblk = nb->blk;
	bc_put(t->fs, nb);
	return 1;
}

static int bt_ins(struct fs_bt *t, struct fs_tx *tx, uint64_t blk,
		  unsigned lvl, const void *rec, uint64_t *skey, uint64_t *sblk)
{
	uint64_t k = fs_rec_key(rec), ck, cb;
	struct fs_bt_ptr_disk p;
	struct fs_buf *b;
	unsigned pos, rs = rsize(t, lvl);
	int err;

	err = node_read(t, blk, lvl, &b);
	if (err)
		return err;
	if (lvl == 0) {
		pos = lower_bound(b, rs, k);
		if (pos < count_of(b) && key_at(b, pos, rs) == k) {
			err = -EEXIST;
			goto out;
		}
	} else {
		pos = child_index(b, k);
		err = bt_ins(t, tx, child_at(b, pos), lvl - 1, rec, &ck, &cb);
		if (err <= 0)
			goto out;
		p.key = fs_cpu64(ck);
		p.child = fs_cpu64(cb);
		rec = &p;
		pos++;
	}
	fs_tx_dirty(t->fs, tx, b);
	if (count_of(b) < node_cap(rs)) {
		node_insert_at(b, rs, pos, rec);
		err = 0;
	} else {
		err = node_split_insert(t, tx, b, lvl, pos, rec, skey, sblk);
	}
out:
	bc_put(t->fs, b);
	return err;
}

static int bt_grow(struct fs_bt *t, struct fs_tx *tx, uint64_t skey,
		   uint64_t sblk)
{
	struct fs_bt_ptr_disk p[2];
	struct fs_buf *r;
	int err;

	err = node_new(t, tx, *t->depth, &r);
	if (err)
		return err;
	p[0].key = 0;
	p[0].child = fs_cpu64(*t->root);
	p[1].key = fs_cpu64(skey);
	p[1].child = fs_cpu64(sblk);
	memcpy(rec_at(r, 0, PTR_SIZE), p, sizeof(p));
	count_set(r, 2);
	*t->root = r->blk;
	(*t->depth)++;
	bc_put(t->fs, r);
	return 0;
}

int fs_bt_insert(struct fs_bt *t, struct fs_tx *tx, const void *rec)
{
	uint64_t skey, sblk;
	struct fs_buf *b;
	int err;

	if (*t->depth == 0) {
		err = node_new(t, tx, 0, &b);
		if (err)
			return err;
		node_insert_at(b, t->rec_size, 0, rec);
		*t->root = b->blk;
		*t->depth = 1;
		bc_put(t->fs, b);
		return 0;
	}
	err = bt_ins(t, tx, *t->root, *t->depth - 1, rec, &skey, &sblk);
	if (err == 1)
		err = bt_grow(t, tx, skey, sblk);
	return err;
}

int fs_bt_update(struct fs_bt *t, struct fs_tx *tx, const void *rec)
{
	uint64_t k = fs_rec_key(rec), x;
	struct fs_buf *b;
	bool h1, h2;
	unsigned pos;
	int err;

	if (*t->depth == 0)
		return -ENOENT;
	err = descend(t, k, &b, &x, &h1, &x, &h2);
	if (err)
		return err;
	pos = lower_bound(b, t->rec_size, k);
	err = -ENOENT;
	if (pos < count_of(b) && key_at(b, pos, t->rec_size) == k) {
		fs_tx_dirty(t->fs, tx, b);
		memcpy(rec_at(b, pos, t->rec_size), rec, t->rec_size);
		err = 0;
	}
	bc_put(t->fs, b);
	return err;
}

enum { BT_DEL_OK = 0, BT_DEL_EMPTY = 1, BT_DEL_UNDER = 2 };

/* What a node with n records tells its parent after a deletion. */
static int del_state(struct fs_bt *t, unsigned lvl, unsigned n)
{
	if (n == 0)
		return BT_DEL_EMPTY;
	return n < node_cap(rsize(t, lvl)) / 4 ? BT_DEL_UNDER : BT_DEL_OK;
}

/*
 * Merges child i + 1 of parent p into child i when both fit in one node,
 * so that deletions do not leave a tree of nearly empty nodes.  Internal
 * children: the right node's first pointer gets the parent's separator as
 * its key, since it stops being the first of its node.
 */
static int bt_merge(struct fs_bt *t, struct fs_tx *tx, struct fs_buf *p,
		    unsigned i, unsigned lvl)
{
	unsigned rs = rsize(t, lvl), nl, nr;
	struct fs_buf *l, *r;
	uint64_t rblk = child_at(p, i + 1);
	int err;

	err = node_read(t, child_at(p, i), lvl, &l);
	if (err)
		return err;
	err = node_read(t, rblk, lvl, &r);
	if (err)
		goto out_l;
	nl = count_of(l);
	nr = count_of(r);
	if (nl + nr > node_cap(rs))
		goto out_r;
	fs_tx_dirty(t->fs, tx, l);
	fs_tx_dirty(t->fs, tx, p);
	memcpy(rec_at(l, nl, rs), rec_at(r, 0, rs), (size_t)nr * rs);
	if (lvl > 0)
		*(uint64_t *)rec_at(l, nl, rs) = fs_cpu64(key_at(p, i + 1,
								 PTR_SIZE));
	count_set(l, nl + nr);
	memmove(rec_at(p, i + 1, PTR_SIZE), rec_at(p, i + 2, PTR_SIZE),
		(size_t)(count_of(p) - i - 2) * PTR_SIZE);
	count_set(p, count_of(p) - 1);
	node_free(t, tx, rblk);
out_r:
	bc_put(t->fs, r);
out_l:
	bc_put(t->fs, l);
	return err;
}

/* Removes record pos of b (caller dirtied b). */
static void node_remove_at(struct fs_buf *b, unsigned rs, unsigned pos)
{
	unsigned n = count_of(b);

	memmove(rec_at(b, pos, rs), rec_at(b, pos + 1, rs),
		(size_t)(n - pos - 1) * rs);
	count_set(b, n - 1);
}

/*
 * Deletes k below the node at blk; returns BT_DEL_EMPTY when the node is
 * now empty (the caller unlinks and frees it), BT_DEL_UNDER when it is
 * under a quarter full (the caller may merge it with a sibling).
 */
static int bt_del(struct fs_bt *t, struct fs_tx *tx, uint64_t blk,
		  unsigned lvl, uint64_t k)
{
	unsigned rs = rsize(t, lvl), pos;
	struct fs_buf *b;
	int err;

	err = node_read(t, blk, lvl, &b);
	if (err)
		return err;
	if (lvl == 0) {
		pos = lower_bound(b, rs, k);
		err = -ENOENT;
		if (pos >= count_of(b) || key_at(b, pos, rs) != k)
			goto out;
		fs_tx_dirty(t->fs, tx, b);
		node_remove_at(b, rs, pos);
	} else {
		pos = child_index(b, k);
		err = bt_del(t, tx, child_at(b, pos), lvl - 1, k);
		if (err < 0 || err == BT_DEL_OK)
			goto out;
		if (err == BT_DEL_EMPTY) {
			fs_tx_dirty(t->fs, tx, b);
			node_free(t, tx, child_at(b, pos));
			node_remove_at(b, rs, pos);
		} else if (count_of(b) > 1) {
			err = bt_merge(t, tx, b, pos + 1 < count_of(b) ?
				       pos : pos - 1, lvl - 1);
			if (err)
				goto out;
		}
	}
	err = del_state(t, lvl, count_of(b));
out:
	bc_put(t->fs, b);
	return err;
}

/* A root with a single child gives way to the child. */
static int bt_shrink(struct fs_bt *t, struct fs_tx *tx)
{
	struct fs_buf *b;
	uint64_t child;
	int err;

	while (*t->depth > 1) {
		err = node_read(t, *t->root, *t->depth - 1, &b);
		if (err)
			return err;
		if (count_of(b) > 1) {
			bc_put(t->fs, b);
			break;
		}
		child = child_at(b, 0);
		bc_put(t->fs, b);
		node_free(t, tx, *t->root);
		*t->root = child;
		(*t->depth)--;
	}
	return 0;
}

int fs_bt_delete(struct fs_bt *t, struct fs_tx *tx, uint64_t key)
{
	int err;

	if (*t->depth == 0)
		return -ENOENT;
	err = bt_del(t, tx, *t->root, *t->depth - 1, key);
	if (err < 0)
		return err;
	if (err == BT_DEL_EMPTY) {
		node_free(t, tx, *t->root);
		*t->root = 0;
		*t->depth = 0;
		return 0;
	}
	return bt_shrink(t, tx);
}

static int bt_destroy_node(struct fs_bt *t, struct fs_tx *tx, uint64_t blk,
			   unsigned lvl)
{
	struct fs_buf *b;
	unsigned i;
	int err;

	if (lvl > 0) {
		err = node_read(t, blk, lvl, &b);
		if (err)
			return err;
		for (i = 0; i < count_of(b) && !err; i++)
			err = bt_destroy_node(t, tx, child_at(b, i), lvl - 1);
		bc_put(t->fs, b);
		if (err)
			return err;
	}
	node_free(t, tx, blk);
	return 0;
}

int fs_bt_destroy(struct fs_bt *t, struct fs_tx *tx)
{
	int err = 0;

	if (*t->depth)
		err = bt_destroy_node(t, tx, *t->root, *t->depth - 1);
	if (!err) {
		*t->root = 0;
		*t->depth = 0;
	}
	return err;
}

/* ---- walking the whole tree (fs_check) ---------------------------------------- */
struct bt_walk {
	struct fs_bt *t;
	int (*node_cb)(void *arg, uint64_t blk);
	int (*rec_cb)(void *arg, const void *rec);
	void *arg;
	uint64_t *damaged;      /* salvage: damage skipped, counted (or NULL) */
};

/* Are the node's keys sorted and within [lo, hi)? */
static bool keys_ok(struct fs_buf *b, unsigned rs, unsigned lvl, uint64_t lo,
		    uint64_t hi, bool has_hi)
{
	unsigned n = count_of(b);
	uint64_t k, prev = 0;

	for (unsigned i = 0; i < n; i++) {
		k = key_at(b, i, rs);
		if ((i > 0 && k <= prev) || ((lvl == 0 || i > 0) && k < lo) ||
		    (has_hi && k >= hi))
			return false;
		prev = k;
	}
	return true;
}

/*
 * Every key of the node at blk must lie in [lo, hi).  Salvaging, a child
 * (a subtree) or a record that fails is counted and skipped, the rest
 * visited; a node is checked whole before anything in it is visited, so
 * nothing is taken from a node found wrong.
 */
static int bt_walk_node(struct bt_walk *w, uint64_t blk, unsigned lvl,
			uint64_t lo, uint64_t hi, bool has_hi)
{
	unsigned rs = rsize(w->t, lvl), i, n;
	struct fs_buf *b;
	uint64_t k;
	int err;

	err = w->node_cb(w->arg, blk);
	if (!err)
		err = node_read(w->t, blk, lvl, &b);
	if (err)
		return err;
	n = count_of(b);
	if (!keys_ok(b, rs, lvl, lo, hi, has_hi))
		err = -EUCLEAN;
	for (i = 0; i < n && !err; i++) {
		k = key_at(b, i, rs);
		if (lvl == 0)
			err = w->rec_cb(w->arg, rec_at(b, i, rs));
		else
			err = bt_walk_node(w, child_at(b, i), lvl - 1,
					   i ? k : lo,
					   i + 1 < n ? key_at(b, i + 1, rs) : hi,
					   i + 1 < n || has_hi);
		if (err && err != -ENOMEM && w->damaged) {
			(*w->damaged)++;
			err = 0;
		}
	}
	bc_put(w->t->fs, b);
	return err;
}

int fs_bt_walk(struct fs_bt *t, int (*node_cb)(void *arg, uint64_t blk),
	       int (*rec_cb)(void *arg, const void *rec), void *arg)
{
	struct bt_walk w = { t, node_cb, rec_cb, arg, NULL };

	if (*t->depth == 0)
		return *t->root ? -EUCLEAN : 0;
	return bt_walk_node(&w, *t->root, *t->depth - 1, 0, 0, false);
}

int fs_bt_salvage(struct fs_bt *t, int (*node_cb)(void *arg, uint64_t blk),
		  int (*rec_cb)(void *arg, const void *rec), void *arg,
		  uint64_t *damaged)
{
	struct bt_walk w = { t, node_cb, rec_cb, arg, damaged };
	int err = 0;

	*damaged = 0;
	if (*t->depth == 0)
		*damaged = *t->root != 0;
	else
		err = bt_walk_node(&w, *t->root, *t->depth - 1, 0, 0, false);
	if (err && err != -ENOMEM) {
		(*damaged)++;
		err = 0;
	}
	return err;
}
