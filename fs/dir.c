/*
 * dir: the names of a directory, in a B+tree keyed by name hash.
 *
 * key = (XXH3-64(name, hash_seed) & FS_DIR_HASH_MASK) | index, where index
 * (0..255) tells apart names whose hashes collide in the upper 56 bits: a
 * new name takes the lowest index not used by another name with the same
 * hash.  Keys are at least 0x100, so readdir cookies 0 and 1 stay free for
 * "." and "..".  A key never changes while its entry exists, which is what
 * makes readdir cookies stable across concurrent inserts and deletes.
 *
 * Caller holds dp->lock (write for changes, inside a transaction) or
 * fs->ns_lock for writing, and marks dp dirty after a change.
 */
#include <string.h>
#include "fs_int.h"

#define FS_DIR_HASH_MASK 0x7fffffffffffff00ull
#define FS_DIR_KEY_MIN 0x100ull

static struct fs_bt dir_tree(struct fs *fs, struct fs_inode *dp)
{
	return (struct fs_bt){ fs, &dp->d.map_root, &dp->d.map_depth,
			       sizeof(struct fs_dirent_disk), FS_TREE_DIR,
			       dp->ino, &dp->d.blocks, 0 };
}

/* FS_DIR_HASH_MASK; tests narrow it to make collisions common. */
uint64_t fs_dir_hash_mask = FS_DIR_HASH_MASK;

uint64_t fs_dir_name_base(struct fs *fs, const char *name, size_t len)
{
	uint64_t k = fs_csum(name, len, fs_le64(fs->sb.hash_seed)) &
		     fs_dir_hash_mask;

	return k < FS_DIR_KEY_MIN ? FS_DIR_KEY_MIN : k;
}

static bool dirent_is(const void *rec, const char *name, size_t len)
{
	const struct fs_dirent_disk *d = rec;

	return d->name_len == len && !memcmp(d->name, name, len);
}

int fs_name_scan(struct fs *fs, struct fs_bt *t, const char *name,
		 bool (*is)(const void *rec, const char *name, size_t len),
		 void *rec, uint64_t used[4])
{
	size_t len = strlen(name);
	uint64_t base = fs_dir_name_base(fs, name, len), k = base;
	int err;

	if (used)
		memset(used, 0, 4 * sizeof(uint64_t));
	for (;;) {
		err = fs_bt_find(t, k, FS_BT_GE, rec);
		if (err)
			return err;
		k = fs_rec_key(rec);
		if (k > (base | 0xff))
			return -ENOENT;
		if (is(rec, name, len))
			return 0;
		if (used)
			used[(k & 0xff) / 64] |= 1ull << (k & 63);
		k++;
	}
}

int fs_name_index(const uint64_t used[4])
{
	int idx;

	for (idx = 0; idx < 256 && (used[idx / 64] >> (idx % 64) & 1); idx++)
		;
	return idx == 256 ? -ENOSPC : idx;
}

/* name in dp: 0 and rec, or -ENOENT with used[] (fs_name_scan). */
static int dir_scan(struct fs *fs, struct fs_inode *dp, const char *name,
		    struct fs_dirent_disk *rec, uint64_t used[4])
{
	struct fs_bt t = dir_tree(fs, dp);

	return fs_name_scan(fs, &t, name, dirent_is, rec, used);
}

int fs_dir_lookup(struct fs *fs, struct fs_inode *dp, const char *name,
		  uint64_t *ino, uint64_t *key)
{
	struct fs_dirent_disk rec;
	int err;

	err = dir_scan(fs, dp, name, &rec, NULL);
	if (err)
		return err;
	*ino = fs_le64(rec.ino);
	if (key)
		*key = fs_rec_key(&rec);
	return 0;
}

int fs_dir_add(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
	       const char *name, uint64_t ino, uint8_t type, uint64_t *key)
{
	struct fs_bt t = dir_tree(fs, dp);
	struct fs_dirent_disk rec;
	size_t len = strlen(name);
	uint64_t used[4];
	int idx, err;

	if (len > FS_NAME_MAX)
		return -ENAMETOOLONG;
	err = dir_scan(fs, dp, name, &rec, used);
	if (!err)
		return -EEXIST;
	if (err != -ENOENT)
		return err;
	idx = fs_name_index(used);
	if (idx < 0)
		return idx;
	memset(&rec, 0, sizeof(rec));
	rec.key = fs_cpu64(fs_dir_name_base(fs, name, len) | (uint64_t)idx);
	rec.ino = fs_cpu64(ino);
	rec.type = type;
	rec.name_len = (uint8_t)len;
	memcpy(rec.name, name, len);
	err = fs_bt_insert(&t, tx, &rec);
	if (err)
		return err;
	if (key)
		*key = fs_rec_key(&rec);
	dp->d.dir_entries++;
	dp->d.size = dp->d.blocks * FS_BSIZE;
	return 0;
}

int fs_dir_insert_rec(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
		      const struct fs_dirent_disk *rec)
{
	struct fs_bt t = dir_tree(fs, dp);
	int err = fs_bt_insert(&t, tx, rec);

	if (err)
		return err;
	dp->d.dir_entries++;
	dp->d.size = dp->d.blocks * FS_BSIZE;
	return 0;
}

int fs_dir_remove(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
		  const char *name)
{
	struct fs_bt t = dir_tree(fs, dp);
	struct fs_dirent_disk rec;
	int err;

	err = dir_scan(fs, dp, name, &rec, NULL);
	if (!err)
		err = fs_bt_delete(&t, tx, fs_rec_key(&rec));
	if (err)
		return err;
	dp->d.dir_entries--;
	dp->d.size = dp->d.blocks * FS_BSIZE;
	return 0;
}

int fs_dir_set(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
	       const char *name, uint64_t ino, uint8_t type)
{
	struct fs_bt t = dir_tree(fs, dp);
	struct fs_dirent_disk rec;
	int err;

	err = dir_scan(fs, dp, name, &rec, NULL);
	if (err)
		return err;
	rec.ino = fs_cpu64(ino);
	rec.type = type;
	return fs_bt_update(&t, tx, &rec);
}

int fs_dir_next(struct fs *fs, struct fs_inode *dp, uint64_t cookie,
		char *name, uint64_t *ino, uint8_t *type, uint64_t *key)
{
	struct fs_bt t = dir_tree(fs, dp);
	struct fs_dirent_disk rec;
	int err;

	err = fs_bt_find(&t, cookie, FS_BT_GE, &rec);
	if (err)
		return err;
	memcpy(name, rec.name, rec.name_len);
	name[rec.name_len] = '\0';
	*ino = fs_le64(rec.ino);
	*type = rec.type;
	*key = fs_rec_key(&rec);
	return 0;
}

int fs_dir_destroy(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp)
{
	struct fs_bt t = dir_tree(fs, dp);
	int err = fs_bt_destroy(&t, tx);

	if (!err)
		dp->d.dir_entries = 0;
	return err;
}
