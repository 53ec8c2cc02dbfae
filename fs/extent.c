/*
 * extent: a file's map from file blocks to device blocks.
 *
 * Up to FS_INLINE_EXTENTS extents live in the inode; the first insert
 * beyond that moves them into a B+tree (FS_IFLAG_EXTENT_TREE) for good.
 * Holes are simply absent from the map: they cost nothing and read as
 * zeros.  Unwritten extents (fallocate) own their blocks but read as zeros
 * too; a write converts the part it covers.  Extents never overlap;
 * adjacent ones are merged when they are contiguous on disk and alike.
 *
 * Caller holds ip->lock (write for changes, inside a transaction).
 */
#include <string.h>
#include "fs_int.h"

#define EXT_MAX_LEN 0x40000000u

static struct fs_bt ext_tree(struct fs *fs, struct fs_inode *ip)
{
	return (struct fs_bt){ fs, &ip->d.map_root, &ip->d.map_depth,
			       sizeof(struct fs_extent_disk), FS_TREE_EXTENT,
			       ip->ino, &ip->d.blocks, 0 };
}

static bool is_tree(const struct fs_inode *ip)
{
	return ip->d.flags & FS_IFLAG_EXTENT_TREE;
}

static void ext_enc(struct fs_extent_disk *d, const struct fs_extent *e)
{
	d->lblk = fs_cpu64(e->lblk);
	d->pblk = fs_cpu64(e->pblk);
	d->len = fs_cpu32(e->len);
	d->flags = fs_cpu32(e->flags);
}

static void ext_dec(struct fs_extent *e, const struct fs_extent_disk *d)
{
	e->lblk = fs_le64(d->lblk);
	e->pblk = fs_le64(d->pblk);
	e->len = fs_le32(d->len);
	e->flags = fs_le32(d->flags);
}

/* Largest-lblk extent with lblk <= k (le) or smallest with lblk >= k. */
static int map_find(struct fs *fs, struct fs_inode *ip, uint64_t k, bool le,
		    struct fs_extent *e)
{
	struct fs_extent_disk d;
	struct fs_bt t;
	uint32_t i;
	int err;

	if (is_tree(ip)) {
		t = ext_tree(fs, ip);
		err = fs_bt_find(&t, k, le ? FS_BT_LE : FS_BT_GE, &d);
		if (!err)
			ext_dec(e, &d);
		return err;
	}
	if (le) {
		for (i = ip->d.nextents; i-- > 0;) {
			if (ip->d.ext[i].lblk <= k) {
				*e = ip->d.ext[i];
				return 0;
			}
		}
	} else {
		for (i = 0; i < ip->d.nextents; i++) {
			if (ip->d.ext[i].lblk >= k) {
				*e = ip->d.ext[i];
				return 0;
			}
		}
	}
	return -ENOENT;
}

static int map_to_tree(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	struct fs_extent_disk d;
	struct fs_bt t = ext_tree(fs, ip);
	uint32_t i;
	int err;

	ip->d.flags |= FS_IFLAG_EXTENT_TREE;
	ip->d.map_root = 0;
	ip->d.map_depth = 0;
	for (i = 0; i < ip->d.nextents; i++) {
		ext_enc(&d, &ip->d.ext[i]);
		err = fs_bt_insert(&t, tx, &d);
		if (err)
			return err;
	}
	ip->d.nextents = 0;
	memset(ip->d.ext, 0, sizeof(ip->d.ext));
	return 0;
}

static int map_insert(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		      const struct fs_extent *e)
{
	struct fs_extent_disk d;
	struct fs_bt t;
	uint32_t i, n = ip->d.nextents;
	int err;

	if (!is_tree(ip) && n == FS_INLINE_EXTENTS) {
		err = map_to_tree(fs, tx, ip);
		if (err)
			return err;
	}
	if (is_tree(ip)) {
		t = ext_tree(fs, ip);
		ext_enc(&d, e);
		return fs_bt_insert(&t, tx, &d);
	}
	for (i = 0; i < n && ip->d.ext[i].lblk < e->lblk; i++)
		;
	memmove(&ip->d.ext[i + 1], &ip->d.ext[i], (n - i) * sizeof(*e));
	ip->d.ext[i] = *e;
	ip->d.nextents++;
	return 0;
}

static int map_delete(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		      uint64_t lblk)
{
	struct fs_bt t;
	uint32_t i, n = ip->d.nextents;

	if (is_tree(ip)) {
		t = ext_tree(fs, ip);
		return fs_bt_delete(&t, tx, lblk);
	}
	for (i = 0; i < n && ip->d.ext[i].lblk != lblk; i++)
		;
	FS_ASSERT(i < n);
	memmove(&ip->d.ext[i], &ip->d.ext[i + 1],
		(n - i - 1) * sizeof(ip->d.ext[0]));
	ip->d.nextents--;
	memset(&ip->d.ext[ip->d.nextents], 0, sizeof(ip->d.ext[0]));
	return 0;
}

static int map_update(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		      const struct fs_extent *e)
{
	struct fs_extent_disk d;
	struct fs_bt t;
	uint32_t i;

	if (is_tree(ip)) {
		t = ext_tree(fs, ip);
		ext_enc(&d, e);
		return fs_bt_update(&t, tx, &d);
	}
	for (i = 0; i < ip->d.nextents; i++) {
		if (ip->d.ext[i].lblk == e->lblk) {
			ip->d.ext[i] = *e;
			return 0;
		}
	}
	return -ENOENT;
}

int fs_ext_map(struct fs *fs, struct fs_inode *ip, uint64_t lblk,
	       struct fs_extent *e, bool *found)
{
	int err;

	*found = false;
	err = map_find(fs, ip, lblk, true, e);
	if (!err && lblk < e->lblk + e->len) {
		*found = true;
		return 0;
	}
	if (err && err != -ENOENT)
		return err;
	err = map_find(fs, ip, lblk, false, e);
	if (err == -ENOENT) {
		memset(e, 0, sizeof(*e));
		return 0;
	}
	return err;
}

int fs_ext_add(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
	       uint64_t lblk, uint64_t pblk, uint32_t len, uint32_t flags)
{
	struct fs_extent l, e = { lblk, pblk, len, flags };

	if (lblk > 0 && !map_find(fs, ip, lblk - 1, true, &l) &&
	    l.lblk + l.len == lblk && l.pblk + l.len == pblk &&
	    l.flags == flags && (uint64_t)l.len + len <= EXT_MAX_LEN) {
		l.len += len;
		return map_update(fs, tx, ip, &l);
	}
	return map_insert(fs, tx, ip, &e);
}

/* Unmaps [s, t) which lies inside extent e. */
static int ext_cut(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		   struct fs_extent e, uint64_t s, uint64_t t)
{
	uint64_t end = e.lblk + e.len;
	struct fs_extent right = { t, e.pblk + (t - e.lblk),
				   (uint32_t)(end - t), e.flags };
	int err;

	if (s == e.lblk) {
		err = map_delete(fs, tx, ip, e.lblk);
		if (!err && t < end)
			err = map_insert(fs, tx, ip, &right);
	} else {
		e.len = (uint32_t)(s - e.lblk);
		err = map_update(fs, tx, ip, &e);
		if (!err && t < end)
			err = map_insert(fs, tx, ip, &right);
	}
	if (err)
		return err;
	fs_free_blocks(fs, tx, e.pblk + (s - e.lblk), t - s, false);
	ip->d.blocks -= t - s;
	return 0;
}

int fs_ext_remove(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		  uint64_t from, uint64_t to, int max, bool *more)
{
	struct fs_extent e;
	bool found;
	uint64_t s, t;
	int err, n = 0;

	*more = false;
	while (from < to) {
		err = fs_ext_map(fs, ip, from, &e, &found);
		if (err)
			return err;
		if (!e.len || e.lblk >= to)
			return 0;
		if (n++ == max) {
			*more = true;
			return 0;
		}
		s = from > e.lblk ? from : e.lblk;
		t = e.lblk + e.len < to ? e.lblk + e.len : to;
		err = ext_cut(fs, tx, ip, e, s, t);
		if (err)
			return err;
		from = t;
	}
	return 0;
}

/* Where the block after lblk - 1 would continue contiguously, or 0. */
static uint64_t ext_goal(struct fs *fs, struct fs_inode *ip, uint64_t lblk)
{
	struct fs_extent l;

	if (lblk > 0 && !map_find(fs, ip, lblk - 1, true, &l))
		return l.pblk + (lblk - l.lblk);
	return 0;
}

int fs_ext_fill(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		uint64_t from, uint64_t to, bool unwritten)
{
	struct fs_extent e;
	uint64_t hole_end, blk, got;
	bool found;
	int err;

	while (from < to) {
		err = fs_ext_map(fs, ip, from, &e, &found);
		if (err)
			return err;
		if (found) {
			from = e.lblk + e.len;
			continue;
		}
		hole_end = e.len && e.lblk < to ? e.lblk : to;
		if (hole_end - from > EXT_MAX_LEN)
			hole_end = from + EXT_MAX_LEN;
		err = fs_alloc_data(fs, tx, ext_goal(fs, ip, from),
				    hole_end - from, &blk, &got);
		if (err)
			return err;
		err = fs_ext_add(fs, tx, ip, from, blk, (uint32_t)got,
				 unwritten ? FS_EXT_UNWRITTEN : 0);
		if (err) {
			fs_free_blocks(fs, tx, blk, got, false);
			return err;
		}
		ip->d.blocks += got;
		from += got;
	}
	return 0;
}

uint64_t fs_ext_holes(struct fs *fs, struct fs_inode *ip, uint64_t from,
		      uint64_t to)
{
	struct fs_extent e;
	uint64_t holes = 0, end;
	bool found;

	while (from < to) {
		if (fs_ext_map(fs, ip, from, &e, &found))
			return to - from + holes;
		if (found) {
			from = e.lblk + e.len;
			continue;
		}
		end = e.len && e.lblk < to ? e.lblk : to;
		holes += end - from;
		from = end;
	}
	return holes;
}

/* Converts the unwritten part of e within [from, to) to written. */
static int ext_convert(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		       struct fs_extent e, uint64_t from, uint64_t to)
{
	uint64_t s = from > e.lblk ? from : e.lblk;
	uint64_t t = e.lblk + e.len < to ? e.lblk + e.len : to;
	uint64_t end = e.lblk + e.len;
	struct fs_extent mid = { s, e.pblk + (s - e.lblk), (uint32_t)(t - s), 0 };
	struct fs_extent right = { t, e.pblk + (t - e.lblk),
				   (uint32_t)(end - t), FS_EXT_UNWRITTEN };
	int err;

	fs_tx_ordered(tx);              /* the data written there shows now */
	if (s == e.lblk) {
		err = map_delete(fs, tx, ip, e.lblk);
	} else {
		e.len = (uint32_t)(s - e.lblk);
		err = map_update(fs, tx, ip, &e);
	}
	if (!err)
		err = map_insert(fs, tx, ip, &mid);
	if (!err && t < end)
		err = map_insert(fs, tx, ip, &right);
	return err;
}

int fs_ext_mark_written(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
			uint64_t from, uint64_t to)
{
	struct fs_extent e;
	bool found;
	int err, n = 0;

	while (from < to) {
		err = fs_ext_map(fs, ip, from, &e, &found);
		if (err)
			return err;
		if (!e.len || e.lblk >= to)
			break;
		if (e.flags & FS_EXT_UNWRITTEN) {
			err = ext_convert(fs, tx, ip, e, from, to);
			if (err)
				return err;
			n++;
		}
		from = e.lblk + e.len;
	}
	return n;
}
