/*
 * repair: the results of a scan (repair_scan.c) for fsck's report - counts,
 * paths, and every file's extents for the damage report.
 */
#include <string.h>
#include "repair_int.h"

void fs_repair_counts(const struct fs_repair *r, struct fs_repair_counts *c)
{
	*c = r->c;
}

uint64_t fs_repair_unfixable(const struct fs_repair *r)
{
	return r->unfixable + (r->double_claimed ? 1 : 0);
}

/* Builds the path from the leaf up, then moves it to the front of buf. */
void fs_repair_path(const struct fs_repair *r, uint64_t ino, char *buf,
		    size_t len)
{
	size_t pos = len - 1, n;
	uint64_t cur = ino;
	int depth = 0;

	if (len < 2)
		return;
	buf[pos] = '\0';
	if (ino == FS_ROOT_INO) {
		snprintf(buf, len, "/");
		return;
	}
	while (cur != FS_ROOT_INO && cur < r->ninodes && r->name[cur] &&
	       depth++ < 4096) {
		n = strlen(r->name[cur]);
		if (n + 1 > pos)
			goto fallback;
		pos -= n;
		memcpy(buf + pos, r->name[cur], n);
		buf[--pos] = '/';
		cur = r->parent_of[cur];
	}
	if (cur != FS_ROOT_INO)
		goto fallback;
	memmove(buf, buf + pos, len - pos);
	return;
fallback:
	snprintf(buf, len, "inode %llu", (unsigned long long)ino);
}

struct rp_ext_walk {
	fs_repair_extent_fn fn;
	void *arg;
	uint64_t ino;
};

static int ext_cb(void *arg, const void *rec)
{
	const struct fs_extent_disk *e = rec;
	struct rp_ext_walk *w = arg;

	if (fs_le32(e->flags) & FS_EXT_UNWRITTEN)
		return 0;
	return w->fn(w->arg, w->ino, fs_le64(e->lblk), fs_le64(e->pblk),
		     fs_le32(e->len));
}

static int no_node(void *arg, uint64_t blk)
{
	return 0;
}

static int inode_extents(struct fs_repair *r, uint64_t ino,
			 struct rp_ext_walk *w)
{
	struct fs_inode_disk d;
	uint64_t root;
	uint32_t depth, i;
	struct fs_bt t;
	int err;

	if (rp_inode_read(r->fs, ino, &d))
		return 0;
	if (!S_ISREG(fs_le32(d.mode)) && !S_ISLNK(fs_le32(d.mode)))
		return 0;
	w->ino = ino;
	if (!(fs_le32(d.flags) & FS_IFLAG_EXTENT_TREE)) {
		for (i = 0, err = 0; i < fs_le32(d.nextents) && !err; i++)
			err = ext_cb(w, &d.ext[i]);
		return err;
	}
	root = fs_le64(d.map_root);
	depth = fs_le32(d.map_depth);
	t = (struct fs_bt){ r->fs, &root, &depth, sizeof(struct fs_extent_disk),
			    FS_TREE_EXTENT, ino, NULL, 0 };
	err = fs_bt_walk(&t, no_node, ext_cb, w);
	return err == -ENOMEM || err == -EINTR ? err : 0;
}

int fs_repair_extents(struct fs_repair *r, fs_repair_extent_fn fn, void *arg)
{
	struct rp_ext_walk w = { fn, arg, 0 };
	uint64_t ino;
	int err = 0;

	for (ino = 1; ino < r->ninodes && !err; ino++)
		if ((r->st[ino] & (RP_REACHED | RP_ORPHAN | RP_LOST)) &&
		    !(r->st[ino] & RP_MAPBAD))
			err = inode_extents(r, ino, &w);
	return err;
}

bool fs_repair_sb_clean(struct fs *fs)
{
	return fs_le32(fs->sb.state) == FS_STATE_CLEAN;
}
