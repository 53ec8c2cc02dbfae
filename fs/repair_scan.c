/*
 * repair_scan: the read-only half of filesystem repair.
 *
 * Order: the inode chunk map (its blocks are used), every inode in its
 * chunks (what is in use), then a walk from the root
 * (names, links, blocks of every reachable inode), the orphan list, the
 * inodes nothing reaches (their blocks count as used: they go to
 * lost+found, data and all), and last the block bitmap and the chunk
 * map's in-use bits against all of that.
 * Every problem becomes a sentence for the log and, when fixable, an
 * rp_fix for repair_apply.c.
 */
#include <dirent.h>
#include <stdarg.h>
#include <string.h>
#include "repair_int.h"

#define RP_LOG_MAX 200          /* sentences; the counts say the rest */

void rp_say(struct fs_repair *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!r->log || r->logged++ >= RP_LOG_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->log(r->log_arg, msg);
}

/* Room for one more of n elements of size at *v (capacity *cap). */
static int rp_grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, (*cap * 2 + 16) * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = *cap * 2 + 16;
	return 0;
}

int rp_fix_add(struct fs_repair *r, enum rp_fix_kind kind, uint64_t ino,
	       unsigned what, const struct fs_dirent_disk *rec)
{
	struct rp_fix *f;

	if (rp_grow((void **)&r->fix, &r->fixcap, r->nfix, sizeof(*f)))
		return -ENOMEM;
	f = &r->fix[r->nfix++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->ino = ino;
	f->what = what;
	if (rec)
		f->rec = *rec;
	r->c.problems++;
	return 0;
}

uint8_t rp_dtype(uint32_t mode)
{
	return (uint8_t)((mode & S_IFMT) >> 12);    /* DT_* == S_IFMT >> 12 */
}

int rp_inode_read(struct fs *fs, uint64_t ino, struct fs_inode_disk *d)
{
	uint64_t blk = fs_ichunk_blk(fs, ino);
	struct fs_inode_disk tmp;
	struct fs_buf *b;
	int err;

	if (!blk)
		return -ENOENT;
	err = bc_read(fs, blk, FS_BUF_ITABLE, &b);
	if (err)
		return err;
	fs_itable_slot_check(fs, b, ino);
	memcpy(d, b->data + (ino % FS_INODES_PER_BLOCK) * FS_INODE_SIZE,
	       sizeof(*d));
	bc_put(fs, b);
	if (fs_le16(d->magic) != FS_INODE_MAGIC)
		return -ENOENT;
	tmp = *d;
	tmp.csum = 0;
	if (fs_csum(&tmp, sizeof(tmp), ino) != fs_le64(d->csum) ||
	    fs_le64(d->ino) != ino || fs_le32(d->nextents) > FS_INLINE_EXTENTS)
		return -EUCLEAN;
	return 0;
}

static int rp_queue(struct fs_repair *r, uint64_t ino)
{
	uint64_t *q;

	if (r->nqueue == r->qcap) {
		q = realloc(r->queue, (r->qcap * 2 + 64) * sizeof(*q));
		if (!q)
			return -ENOMEM;
		r->queue = q;
		r->qcap = r->qcap * 2 + 64;
	}
	r->queue[r->nqueue++] = ino;
	return 0;
}

/* ---- the inode table ------------------------------------------------------ */
/* d, read for ino, is a sound inode of another number. */
static bool rp_inode_elsewhere(const struct fs_inode_disk *d, uint64_t ino)
{
	struct fs_inode_disk tmp = *d;
	uint64_t other = fs_le64(d->ino);

	if (fs_le16(d->magic) != FS_INODE_MAGIC || other == ino || !other)
		return false;
	tmp.csum = 0;
	return fs_csum(&tmp, sizeof(tmp), other) == fs_le64(d->csum);
}

static int scan_table(struct fs_repair *r)
{
	struct fs_inode_disk d;
	uint64_t ino, noted = 0;
	int err;

	for (ino = 1; ino < r->ninodes; ino++) {
		err = rp_inode_read(r->fs, ino, &d);
		if (err == -ENOENT)
			continue;
		/* A table block that cannot be read (beyond redundancy)
		 * loses the inodes the chunk map says are in it, no more:
		 * each is cleared as a damaged one, and the scan goes on (it
		 * stopped the whole check). */
		if (err == -EIO && !(r->ibits[ino / 16] >> (ino % 16) & 1)) {
			/* no inode lost here, but the block still fails
			 * every read (an inode allocated in it would too):
			 * written anew, free, once for the block */
			if (fs_ichunk_blk(r->fs, ino) == noted)
				continue;
			noted = fs_ichunk_blk(r->fs, ino);
			if (r->ibits[ino / 16])
				continue;       /* its in-use slots clear it */
			rp_say(r, "inode table block %llu (inodes %llu-%llu, "
			       "none in use) is unreadable: rewritten",
			       (unsigned long long)noted,
			       (unsigned long long)(ino / 16 * 16),
			       (unsigned long long)(ino / 16 * 16 + 15));
			r->c.problems++;
			err = rp_fix_add(r, RP_FIX_CLEAR, ino, 0, NULL);
			if (err)
				return err;
			continue;
		}
		/* a whole inode of another number: the chunk map points
		 * this chunk at another chunk's block, and clearing would
		 * destroy that one's inodes */
		if (err == -EUCLEAN && rp_inode_elsewhere(&d, ino)) {
			rp_say(r, "inode table block %llu holds inode %llu "
			       "where the inode chunk map puts inode %llu: the "
			       "map is damaged, not repairable",
			       (unsigned long long)fs_ichunk_blk(r->fs, ino),
			       (unsigned long long)fs_le64(d.ino),
			       (unsigned long long)ino);
			r->unfixable++;
			r->c.problems++;
			return -EUCLEAN;
		}
		if (err == -EUCLEAN || err == -EIO) {
			r->st[ino] = RP_BAD;
			rp_say(r, "inode %llu is %s: cleared",
			       (unsigned long long)ino, err == -EIO ?
			       "unreadable (its table block cannot be read)" :
			       "damaged (checksum)");
			r->c.cleared++;
			err = rp_fix_add(r, RP_FIX_CLEAR, ino, 0, NULL);
			if (err)
				return err;
			continue;
		}
		if (err)
			return err;
		r->st[ino] = RP_VALID;
		r->dtype[ino] = rp_dtype(fs_le32(d.mode));
	}
	/* As e2fsck: a root that is lost (or not a directory) is made anew,
	 * empty; the walk stops here, and the next round's finds every inode
	 * the old root reached unreachable and links it into lost+found. */
	if ((r->st[FS_ROOT_INO] & RP_KIND) != RP_VALID ||
	    r->dtype[FS_ROOT_INO] != DT_DIR) {
		rp_say(r, "the root directory is %s: made anew, empty (what it "
		       "held goes to /lost+found)",
		       (r->st[FS_ROOT_INO] & RP_KIND) == RP_VALID ?
		       "not a directory" : "lost");
		r->c.root++;
		r->c.problems++;
		err = rp_fix_add(r, RP_FIX_ROOT, FS_ROOT_INO, 0, NULL);
		return err ? err : -EUCLEAN;
	}
	return 0;
}

/* ---- blocks --------------------------------------------------------------- */
static void rp_use(struct fs_repair *r, uint64_t blk)
{
	if (rp_bit(r->used, blk)) {
		if (!r->double_claimed++)
			r->c.problems++;
		r->c.double_claimed++;
		rp_say(r, "block %llu is used twice (again by inode %llu): "
		       "not repaired", (unsigned long long)blk,
		       (unsigned long long)r->cur);
		return;
	}
	rp_bit_set(r->used, blk);
}

static int rp_node(void *arg, uint64_t blk)
{
	struct fs_repair *r = arg;

	if (blk < fs_le64(r->fs->sb.data_start) || blk >= r->nblocks)
		return -EUCLEAN;
	rp_use(r, blk);
	r->nblk[r->cur]++;
	return 0;
}

static bool rp_extent_ok(struct fs_repair *r, const struct fs_extent_disk *e)
{
	uint64_t p = fs_le64(e->pblk), n = fs_le32(e->len);

	return n && p >= fs_le64(r->fs->sb.data_start) && p + n <= r->nblocks &&
	       p + n > p;
}

static int rp_extent(void *arg, const void *rec)
{
	const struct fs_extent_disk *e = rec;
	struct fs_repair *r = arg;
	uint64_t i, p = fs_le64(e->pblk), n = fs_le32(e->len);

	if (!rp_extent_ok(r, e))
		return -EUCLEAN;
	if (rp_grow((void **)&r->exts, &r->extcap, r->nexts, sizeof(*e)))
		return -ENOMEM;
	r->exts[r->nexts++] = *e;
	for (i = 0; i < n; i++)
		rp_use(r, p + i);
	r->nblk[r->cur] += n;
	return 0;
}

static int rp_dirent(void *arg, const void *rec)
{
	struct fs_repair *r = arg;

	if (rp_grow((void **)&r->ents, &r->entcap, r->nents, sizeof(*r->ents)))
		return -ENOMEM;
	memcpy(&r->ents[r->nents++], rec, sizeof(*r->ents));
	return 0;
}

/* The map of d (its records into r->ents or r->exts), past damage: the
 * parts that fail are counted in *damaged. */
static int salvage_tree(struct fs_repair *r, struct fs_inode_disk *d,
			uint16_t kind, uint64_t *damaged)
{
	uint64_t root = fs_le64(d->map_root);
	uint32_t depth = fs_le32(d->map_depth);
	struct fs_bt t = { r->fs, &root, &depth,
			   kind == FS_TREE_DIR ? sizeof(struct fs_dirent_disk) :
			   sizeof(struct fs_extent_disk), kind, r->cur, NULL, 0 };

	return fs_bt_salvage(&t, rp_node, kind == FS_TREE_DIR ? rp_dirent :
			     rp_extent, r, damaged);
}

/* ---- the inode chunk map -------------------------------------------------- */
static int rp_ichunk(void *arg, const void *rec)
{
	const struct fs_ichunk_disk *d = rec;
	struct fs_repair *r = arg;
	uint64_t k = fs_rec_key(d), p = fs_le64(d->pblk);

	if (k >= r->ninodes / 16 || r->ichunks_seen != k ||
	    p < fs_le64(r->fs->sb.data_start) || p >= r->nblocks)
		return -EUCLEAN;
	if (rp_bit(r->used, p) && !r->ichunk_twice)
		r->ichunk_twice = p;
	rp_use(r, p);
	r->ibits[k] = fs_le16(d->used);
	r->ichunks_seen++;
	return 0;
}

/* Its blocks are used; its bits are compared last (scan_bitmaps).  The
 * mount read it whole already, so damage here is a contradiction. */
static int scan_ichunks(struct fs_repair *r)
{
	struct fs_ichunks *ic = &r->fs->ichunks;
	uint64_t root = ic->root;
	uint32_t depth = ic->depth;
	struct fs_bt t = { r->fs, &root, &depth, sizeof(struct fs_ichunk_disk),
			   FS_TREE_ICHUNK, 0, NULL, 0 };
	int err;

	r->cur = 0;
	err = fs_bt_walk(&t, rp_node, rp_ichunk, r);
	if (!err && r->ichunks_seen * 16 == r->ninodes && !r->ichunk_twice)
		return 0;
	if (err == -ENOMEM)
		return err;
	/* Two chunks in one block: the inodes read for one are the
	 * other's, and clearing them as damaged wrote into the other's
	 * (a tester's find: fsck -y cleared 30 inodes, the root's
	 * among them, for one wrong pointer) */
	if (!err && r->ichunk_twice)
		rp_say(r, "the inode chunk map puts two chunks in block %llu: "
		       "damaged, not repairable",
		       (unsigned long long)r->ichunk_twice);
	else
		rp_say(r, "the inode chunk map is damaged: not repairable");
	r->unfixable++;
	r->c.problems++;
	return -EUCLEAN;
}

/* ---- extended attributes -------------------------------------------------- */
/* Value blocks and tree nodes count as the inode's only once r->xmark is
 * set: a first pass proves the whole tree readable, so a damaged one
 * leaves no half-counted blocks behind. */
static int rp_xblock(void *arg, uint64_t blk)
{
	struct fs_repair *r = arg;

	if (blk < fs_le64(r->fs->sb.data_start) || blk >= r->nblocks)
		return -EUCLEAN;
	if (r->xmark) {
		rp_use(r, blk);
		r->nblk[r->cur]++;
	}
	return 0;
}

static int rp_xattr(void *arg, const void *rec)
{
	const struct fs_xattr_rec_disk *x = rec;
	struct fs_repair *r = arg;
	int err;

	err = fs_xattr_rec_check(r->fs, x);
	if (!err && (x->flags & FS_XREC_EXTERNAL))
		err = fs_xattr_chain_read(r->fs, r->cur, x, NULL, rp_xblock, r);
	return err;
}

/* 0, or -EUCLEAN when the xattr tree of d is damaged anywhere. */
static int walk_xattrs(struct fs_repair *r, struct fs_inode_disk *d)
{
	uint64_t root = fs_le64(d->xattr_root);
	uint32_t depth = fs_le32(d->xattr_depth);
	struct fs_bt t = { r->fs, &root, &depth,
			   sizeof(struct fs_xattr_rec_disk), FS_TREE_XATTR,
			   r->cur, NULL, 0 };
	int err;

	r->xmark = false;
	err = fs_bt_walk(&t, rp_xblock, rp_xattr, r);
	if (err)
		return err == -ENOMEM ? err : -EUCLEAN;
	r->xmark = true;
	err = fs_bt_walk(&t, rp_xblock, rp_xattr, r);
	r->xmark = false;
	return err;
}

/* A copy of the n records of size each at recs (NULL when n is 0). */
static void *recs_copy(const void *recs, size_t n, size_t size, int *err)
{
	void *c;

	if (!n)
		return NULL;
	c = malloc(n * size);
	if (!c)
		*err = -ENOMEM;
	else
		memcpy(c, recs, n * size);
	return c;
}

/*
 * The map and xattrs of inode r->cur; bad ones become RP_FIX_MAP.  A map
 * damaged in places (a node or a record that fails) keeps what verifies:
 * the fix rebuilds it from those records (what 4), as e2fsck drops only a
 * bad extent node and rehashes a directory from the entries it can read;
 * until 2026-12-06 one bad node emptied the whole file or directory (a
 * tester's find).  A file loses the blocks the damage held (they read as
 * a hole), a directory the entries (their inodes go to lost+found).
 */
static int walk_blocks(struct fs_repair *r, struct fs_inode_disk *d)
{
	uint32_t mode = fs_le32(d->mode), i;
	uint64_t before, damaged = 0;
	unsigned what = 0;
	size_t kept;
	int err = 0, e;

	r->nents = 0;
	r->nexts = 0;
	if (S_ISDIR(mode))
		err = salvage_tree(r, d, FS_TREE_DIR, &damaged);
	else if (fs_le32(d->flags) & FS_IFLAG_EXTENT_TREE)
		err = salvage_tree(r, d, FS_TREE_EXTENT, &damaged);
	else
		for (i = 0; i < fs_le32(d->nextents) && !err; i++)
			if ((e = rp_extent(r, &d->ext[i])) == -ENOMEM)
				err = e;
			else if (e)
				damaged++;
	if (err)
		return err;
	kept = S_ISDIR(mode) ? r->nents : r->nexts;
	if (damaged)
		what |= kept ? 1 | 4 : 1;
	before = r->nblk[r->cur];
	err = walk_xattrs(r, d);
	if (err == -ENOMEM)
		return err;
	if (err)
		what |= 2;
	if (!what)
		return 0;
	r->st[r->cur] |= RP_MAPBAD;
	r->c.maps++;
	if (what & 4)
		rp_say(r, "inode %llu: %s damaged (%llu part%s unreadable or "
		       "wrong): rebuilt from the %zu %s that verify, the rest "
		       "dropped%s", (unsigned long long)r->cur,
		       S_ISDIR(mode) ? "name tree" : "block map",
		       (unsigned long long)damaged, damaged == 1 ? "" : "s",
		       kept, S_ISDIR(mode) ? "entries" : "extents",
		       what & 2 ? "; extended attributes unreadable: emptied" :
		       "");
	else
		rp_say(r, "inode %llu: %s%s%s unreadable: emptied",
		       (unsigned long long)r->cur,
		       what & 1 ? (S_ISDIR(mode) ? "name tree" : "block map") : "",
		       (what & 3) == 3 ? " and " : "",
		       what & 2 ? "extended attributes" : "");
	err = rp_fix_add(r, RP_FIX_MAP, r->cur, what, NULL);
	if (err)
		return err;
	r->fix[r->nfix - 1].xblocks = r->nblk[r->cur] - before;
	if (what & 4) {
		r->fix[r->nfix - 1].nrecs = kept;
		r->fix[r->nfix - 1].recs = S_ISDIR(mode) ?
			recs_copy(r->ents, kept, sizeof(*r->ents), &err) :
			recs_copy(r->exts, kept, sizeof(*r->exts), &err);
	}
	return err;
}

/* ---- names ---------------------------------------------------------------- */
static bool entry_key_ok(struct fs_repair *r, const struct fs_dirent_disk *e)
{
	uint64_t base = fs_csum(e->name, e->name_len,
				fs_le64(r->fs->sb.hash_seed)) & fs_dir_hash_mask;

	if (base < 0x100)
		base = 0x100;
	return (fs_rec_key(e) & ~0xffull) == base;
}

static int entry_drop(struct fs_repair *r, const struct fs_dirent_disk *e,
		      const char *why)
{
	rp_say(r, "directory %llu: entry '%.*s' %s: removed",
	       (unsigned long long)r->cur, e->name_len, e->name, why);
	r->c.dangling++;
	return rp_fix_add(r, RP_FIX_DANGLING, r->cur, 0, e);
}

/* One entry of a reachable directory. */
static int entry_check(struct fs_repair *r, const struct fs_dirent_disk *e)
{
	uint64_t ino = fs_le64(e->ino);
	uint8_t kind;
	int err;

	if (!e->name_len || memchr(e->name, '/', e->name_len) ||
	    memchr(e->name, 0, e->name_len))
		return entry_drop(r, e, "has an invalid name");
	if (!ino || ino >= r->ninodes || ino == FS_ROOT_INO)
		return entry_drop(r, e, "names an impossible inode");
	kind = r->st[ino] & RP_KIND;
	if (kind != RP_VALID)
		return entry_drop(r, e, kind == RP_BAD ?
				  "names a damaged inode" : "names a free inode");
	if (r->dtype[ino] == DT_DIR && (r->st[ino] & RP_REACHED))
		return entry_drop(r, e, "is a second name of a directory");
	if (!entry_key_ok(r, e)) {
		rp_say(r, "directory %llu: entry '%.*s' is filed under the "
		       "wrong key: re-inserted", (unsigned long long)r->cur,
		       e->name_len, e->name);
		r->c.bad_keys++;
		err = rp_fix_add(r, RP_FIX_REKEY, r->cur, 0, e);
		if (err)
			return err;
	} else if (e->type != r->dtype[ino]) {
		rp_say(r, "directory %llu: entry '%.*s' has type %u, the inode "
		       "%u: corrected", (unsigned long long)r->cur,
		       e->name_len, e->name, e->type, r->dtype[ino]);
		r->c.types++;
		err = rp_fix_add(r, RP_FIX_TYPE, r->cur, 0, e);
		if (err)
			return err;
	}
	r->entries[r->cur]++;
	if (r->dtype[ino] == DT_DIR)
		r->subdirs[r->cur]++;
	if (r->links[ino]++)
		return 0;
	r->st[ino] |= RP_REACHED;
	r->parent_of[ino] = r->cur;
	r->name[ino] = strndup((const char *)e->name, e->name_len);
	if (!r->name[ino])
		return -ENOMEM;
	return rp_queue(r, ino);
}

static int visit(struct fs_repair *r, uint64_t ino)
{
	struct fs_inode_disk d;
	size_t i;
	int err;

	err = rp_inode_read(r->fs, ino, &d);
	if (err)
		return err == -ENOMEM ? err : 0;   /* the table scan judged it */
	r->cur = ino;
	err = walk_blocks(r, &d);
	if (err || r->cur_lost)
		return err;
	for (i = 0; i < r->nents && !err; i++)
		err = entry_check(r, &r->ents[i]);
	return err;
}

/* ---- the orphan list ------------------------------------------------------ */
static int rp_orphan(void *arg, const void *rec)
{
	struct fs_repair *r = arg;
	uint64_t ino = fs_rec_key(rec);

	if (!ino || ino >= r->ninodes || (r->st[ino] & RP_KIND) != RP_VALID) {
		rp_say(r, "the orphan list names inode %llu, which is not in "
		       "use: not repaired", (unsigned long long)ino);
		r->unfixable++;
		r->c.problems++;
		return 0;
	}
	if (r->st[ino] & (RP_REACHED | RP_ORPHAN))
		return 0;
	r->st[ino] |= RP_ORPHAN;
	return rp_queue(r, ino);
}

static int scan_orphans(struct fs_repair *r)
{
	struct fs_buf *b;
	uint64_t root;
	uint32_t depth;
	struct fs_bt t;
	int err;

	err = fs_sb_get(r->fs, &b);
	if (err)
		return err;
	root = fs_le64(((struct fs_sb_disk *)b->data)->orphan_root);
	depth = fs_le32(((struct fs_sb_disk *)b->data)->orphan_depth);
	bc_put(r->fs, b);
	t = (struct fs_bt){ r->fs, &root, &depth, sizeof(struct fs_orphan_disk),
			    FS_TREE_ORPHAN, 0, NULL, 0 };
	r->cur = 0;
	err = fs_bt_walk(&t, rp_node, rp_orphan, r);
	if (err && err != -ENOMEM) {
		rp_say(r, "the orphan list is unreadable: not repaired");
		r->unfixable++;
		r->c.problems++;
		err = 0;
	}
	return err;
}

/* ---- counts of reached inodes --------------------------------------------- */
static int counts_check(struct fs_repair *r, uint64_t ino)
{
	struct fs_inode_disk d;
	uint32_t want_nlink;
	bool dir, wrong;

	if ((r->st[ino] & RP_MAPBAD) || rp_inode_read(r->fs, ino, &d))
		return 0;
	dir = S_ISDIR(fs_le32(d.mode));
	want_nlink = dir ? 2 + r->subdirs[ino] : r->links[ino];
	wrong = fs_le64(d.blocks) != r->nblk[ino];
	if (!(r->st[ino] & RP_ORPHAN) || r->links[ino])
		wrong |= fs_le32(d.nlink) != want_nlink;
	if (dir) {
		wrong |= fs_le64(d.dir_entries) != r->entries[ino];
		if (ino != FS_ROOT_INO && r->links[ino])
			wrong |= fs_le64(d.parent) != r->parent_of[ino];
	}
	if (!wrong)
		return 0;
	rp_say(r, "inode %llu: nlink %u blocks %llu%s, the tree says %u, %llu: "
	       "corrected", (unsigned long long)ino, fs_le32(d.nlink),
	       (unsigned long long)fs_le64(d.blocks),
	       dir ? " (and entries, parent)" : "", want_nlink,
	       (unsigned long long)r->nblk[ino]);
	r->c.counts++;
	return rp_fix_add(r, RP_FIX_COUNTS, ino, 0, NULL);
}

/* ---- unreachable inodes --------------------------------------------------- */
static int scan_lost(struct fs_repair *r)
{
	uint64_t ino;
	size_t i;
	int err = 0;

	r->cur_lost = true;
	for (ino = 2; ino < r->ninodes && !err; ino++) {
		if ((r->st[ino] & RP_KIND) != RP_VALID ||
		    (r->st[ino] & (RP_REACHED | RP_ORPHAN)))
			continue;
		r->st[ino] |= RP_LOST;
		err = visit(r, ino);
		for (i = 0; i < r->nents && !err; i++) {
			uint64_t c = fs_le64(r->ents[i].ino);

			if (c > FS_ROOT_INO && c < r->ninodes && c != ino)
				r->st[c] |= RP_NAMED_BY_LOST;
		}
	}
	r->cur_lost = false;
	for (ino = 2; ino < r->ninodes && !err; ino++) {
		if (!(r->st[ino] & RP_LOST) || (r->st[ino] & RP_NAMED_BY_LOST))
			continue;
		rp_say(r, "inode %llu is in use but no directory names it: "
		       "moved to /lost+found/#%llu", (unsigned long long)ino,
		       (unsigned long long)ino);
		r->c.unreachable++;
		err = rp_fix_add(r, RP_FIX_LOST, ino, 0, NULL);
	}
	return err;
}

/* ---- bitmaps -------------------------------------------------------------- */
static int bitmap_compare(struct fs_repair *r, uint64_t start, uint64_t nb,
			  enum fs_btype type, uint64_t bits, const uint8_t *want,
			  const char *what, uint64_t *wrong)
{
	struct fs_buf *b;
	uint64_t i, k, bit;
	bool on;

	for (i = 0; i < nb; i++) {
		if (bc_read_meta(r->fs, start + i, type, &b)) {
			rp_say(r, "%s bitmap block %llu is unreadable: rewritten",
			       what, (unsigned long long)(start + i));
			*wrong += 1;
			continue;
		}
		for (k = 0; k < FS_BITS_PER_BITMAP; k++) {
			bit = i * FS_BITS_PER_BITMAP + k;
			if (bit >= bits)
				break;
			on = rp_bit(b->data + FS_BITMAP_HDR, k);
			if (on == rp_bit(want, bit))
				continue;
			if (++*wrong <= 20)
				rp_say(r, "%s %llu is %s in the bitmap but %s: "
				       "corrected", what, (unsigned long long)bit,
				       on ? "used" : "free",
				       on ? "unreferenced" : "in use");
		}
		bc_put(r->fs, b);
	}
	return 0;
}

/* The in-use bits of the inode chunk map against what the walk found. */
static void ichunk_compare(struct fs_repair *r, const uint8_t *want)
{
	uint64_t ino;
	bool on;

	for (ino = 0; ino < r->ninodes; ino++) {
		on = r->ibits[ino / 16] >> (ino % 16) & 1;
		if (on == rp_bit(want, ino))
			continue;
		if (++r->ibits_wrong <= 20)
			rp_say(r, "inode %llu is %s in the inode chunk map but "
			       "%s: corrected", (unsigned long long)ino,
			       on ? "used" : "free",
			       on ? "unreferenced" : "in use");
	}
}

/* The inode bitmap as it should be. */
uint8_t *rp_imap_want(struct fs_repair *r)
{
	uint8_t *m = calloc(r->ninodes / 8 + 1, 1);
	uint64_t ino;

	if (!m)
		return NULL;
	rp_bit_set(m, 0);
	for (ino = 1; ino < r->ninodes; ino++)
		if (r->st[ino] & (RP_REACHED | RP_ORPHAN | RP_LOST))
			rp_bit_set(m, ino);
	return m;
}

static int scan_bitmaps(struct fs_repair *r)
{
	struct fs_sb_disk *sb = &r->fs->sb;
	uint8_t *im = rp_imap_want(r);
	int err;

	if (!im)
		return -ENOMEM;
	err = bitmap_compare(r, fs_le64(sb->bbitmap_start),
			     fs_le64(sb->bbitmap_blocks), FS_BT_BBITMAP,
			     r->nblocks, r->used, "block", &r->bbits_wrong);
	if (!err)
		ichunk_compare(r, im);
	free(im);
	if (r->bbits_wrong + r->ibits_wrong) {
		r->c.bitmap_bits = r->bbits_wrong + r->ibits_wrong;
		r->c.problems++;
	}
	return err;
}

/* ---- the whole scan ------------------------------------------------------- */
static int rp_alloc(struct fs_repair *r)
{
	uint64_t n = r->ninodes;

	r->used = calloc(r->nblocks / 8 + 1, 1);
	r->st = calloc(n, 1);
	r->dtype = calloc(n, 1);
	r->links = calloc(n, sizeof(*r->links));
	r->subdirs = calloc(n, sizeof(*r->subdirs));
	r->entries = calloc(n, sizeof(*r->entries));
	r->nblk = calloc(n, sizeof(*r->nblk));
	r->parent_of = calloc(n, sizeof(*r->parent_of));
	r->name = calloc(n, sizeof(*r->name));
	r->ibits = calloc(n / 16 + 1, sizeof(*r->ibits));
	return r->used && r->st && r->dtype && r->links && r->subdirs &&
	       r->entries && r->nblk && r->parent_of && r->name && r->ibits ?
	       0 : -ENOMEM;
}

/* The scan allocates what it finds (rp_alloc, rp_fix_add): it frees it. */
void fs_repair_free(struct fs_repair *r)
{
	uint64_t i;

	if (!r)
		return;
	if (r->name)
		for (i = 0; i < r->ninodes; i++)
			free(r->name[i]);
	free(r->name);
	free(r->used);
	free(r->st);
	free(r->dtype);
	free(r->links);
	free(r->subdirs);
	free(r->entries);
	free(r->nblk);
	free(r->parent_of);
	free(r->ibits);
	free(r->queue);
	for (i = 0; i < r->nfix; i++)
		free(r->fix[i].recs);
	free(r->fix);
	free(r->ents);
	free(r->exts);
	free(r);
}

bool fs_repair_block_free(const struct fs_repair *r, uint64_t blk)
{
	if (fs_journal_idle(r->fs, blk))
		return true;
	return blk >= fs_le64(r->fs->sb.data_start) && blk < r->nblocks &&
	       !rp_bit(r->used, blk);
}

/* Replay stopped at a journal block it could not read (fsck's mounts):
 * the read-write mount of the repair clears the journal. */
static void scan_journal(struct fs_repair *r)
{
	const struct fs_journal *j = &r->fs->j;

	if (!j->lost || j->reset)
		return;
	if (j->lost_pos == UINT64_MAX)
		rp_say(r, "the journal superblock cannot be read: the journal's "
		       "transactions since its last checkpoint are lost; the "
		       "journal is cleared");
	else
		rp_say(r, "journal block %llu cannot be read: the transactions "
		       "from there on are lost; the journal is cleared",
		       (unsigned long long)(j->g.ring_start + j->lost_pos));
	r->c.problems++;
	r->c.journal++;
}

static int rp_run(struct fs_repair *r)
{
	uint64_t i;
	size_t done = 0;
	int err;

	for (i = 0; i < fs_le64(r->fs->sb.data_start); i++)
		rp_bit_set(r->used, i);
	scan_journal(r);
	err = scan_ichunks(r);
	if (!err)
		err = scan_table(r);
	if (err)
		return err;
	r->st[FS_ROOT_INO] |= RP_REACHED;
	r->parent_of[FS_ROOT_INO] = FS_ROOT_INO;
	err = rp_queue(r, FS_ROOT_INO);
	while (!err && done < r->nqueue)
		err = visit(r, r->queue[done++]);
	if (!err)
		err = scan_orphans(r);
	while (!err && done < r->nqueue)
		err = visit(r, r->queue[done++]);
	for (i = 0; i < r->nqueue && !err; i++) {
		r->c.inodes++;
		r->c.dirs += r->dtype[r->queue[i]] == DT_DIR;
		err = counts_check(r, r->queue[i]);
	}
	if (!err)
		err = scan_lost(r);
	if (!err)
		err = scan_bitmaps(r);
	return err;
}

int fs_repair_scan(struct fs *fs, fs_repair_log_t log, void *arg,
		   struct fs_repair **out)
{
	struct fs_repair *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->fs = fs;
	r->log = log;
	r->log_arg = arg;
	r->nblocks = fs_le64(fs->sb.blocks);
	r->ninodes = fs_ichunk_inodes(fs);
	err = rp_alloc(r);
	if (!err) {
		pthread_rwlock_wrlock(&fs->ns_lock);
		__atomic_store_n(&fs->suspect_reads, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&fs->suspect_watch, true, __ATOMIC_RELAXED);
		err = rp_run(r);
		__atomic_store_n(&fs->suspect_watch, false, __ATOMIC_RELAXED);
		r->c.suspect = __atomic_load_n(&fs->suspect_reads,
					       __ATOMIC_RELAXED);
		r->c.suspect_first = __atomic_load_n(&fs->suspect_first,
						     __ATOMIC_RELAXED);
		pthread_rwlock_unlock(&fs->ns_lock);
	}
	/* a damaged root stops the walk but is a finding, not a failure */
	if (err == -EUCLEAN && (r->unfixable || r->c.root))
		err = 0;
	if (err) {
		fs_repair_free(r);
		return err;
	}
	*out = r;
	return 0;
}
