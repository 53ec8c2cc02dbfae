/*
 * report: what the filesystem tells about damage it meets while mounted -
 * the path of an inode (fs_path), and the file ranges a read could not
 * deliver, each logged once with the inode, its path and the bytes
 * (fs_report_unreadable), and which files hold given blocks
 * (fs_blocks_owners: the daemon lists the files with unrecoverable data).
 * fsck's report of a whole scan is repair.c's.
 *
 * Paths come from memory, not from a scan: every inode remembers the
 * directory entry it was last reached through (fs_inode_named: lookup,
 * create, link, readdirplus, rename), a directory its parent pointer, so a
 * path costs one directory lookup per level.  Names are read under
 * ns_lock (read), so no rename moves them meanwhile.
 */
#include <string.h>
#include "fs_int.h"

/* The name ino has in directory dir: the entry at key while it is still
 * ino's, else the first entry naming ino.  Caller holds ns_lock. */
static int name_in_dir(struct fs *fs, uint64_t dir, uint64_t ino,
		       uint64_t key, char *name)
{
	struct fs_inode *dp;
	uint64_t got, k;
	uint8_t dt;
	int err = fs_iget(fs, dir, &dp);

	if (err)
		return err;
	if (!S_ISDIR(dp->d.mode)) {
		fs_iput(fs, dp);
		return -ENOTDIR;
	}
	pthread_rwlock_rdlock(&dp->lock);
	err = -ENOENT;
	if (key && !fs_dir_next(fs, dp, key, name, &got, &dt, &k) &&
	    k == key && got == ino)
		err = 0;
	for (k = 0; err && !fs_dir_next(fs, dp, k, name, &got, &dt, &k); k++)
		if (got == ino)
			err = 0;
	pthread_rwlock_unlock(&dp->lock);
	fs_iput(fs, dp);
	return err;
}

/* The directory ino is in, and its entry's key there (0: unknown).  A
 * directory's parent pointer is authoritative; other inodes have the entry
 * they were last reached through. */
static int name_place(struct fs *fs, uint64_t ino, uint64_t *dir,
		      uint64_t *key)
{
	struct fs_inode *ip;
	uint64_t d, k;
	int err = fs_iget(fs, ino, &ip);

	if (err)
		return err;
	err = fs_inode_name(fs, ip, &d, &k);
	if (S_ISDIR(ip->d.mode)) {
		*dir = ip->d.parent;       /* stable under ns_lock */
		*key = !err && d == *dir ? k : 0;
		err = 0;
	} else if (!err) {
		*dir = d;
		*key = k;
	}
	fs_iput(fs, ip);
	return err;
}

int fs_path(struct fs *fs, uint64_t ino, char *buf, size_t len)
{
	char name[FS_NAME_MAX + 1];
	size_t pos = len - 1, n;
	uint64_t cur = ino, dir, key;
	int depth = 0;

	if (len < 2)
		return -ENAMETOOLONG;
	buf[pos] = '\0';
	pthread_rwlock_rdlock(&fs->ns_lock);
	while (cur != FS_ROOT_INO && depth++ < 4096) {
		if (name_place(fs, cur, &dir, &key) ||
		    name_in_dir(fs, dir, cur, key, name))
			break;
		n = strlen(name);
		if (n + 1 > pos)
			break;
		pos -= n;
		memcpy(buf + pos, name, n);
		buf[--pos] = '/';
		cur = dir;
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	if (ino == FS_ROOT_INO)
		snprintf(buf, len, "/");
	else if (cur == FS_ROOT_INO)
		memmove(buf, buf + pos, len - pos);
	else
		buf[0] = '\0';
	return buf[0] ? 0 : -ENOENT;
}

/* ---- a path by search ----------------------------------------------------- */
#define SEARCH_DEPTH 64
#define SEARCH_DIRS 100000u             /* directories looked at, at most */

struct path_search {
	uint64_t ino;
	char *buf;                      /* the path so far, NUL-terminated */
	size_t cap;
	unsigned dirs;
};

/*
 * Depth first below dir (whose path is ps->buf): the first entry naming
 * ps->ino, its path left in ps->buf.  One entry is read at a time under
 * the directory's lock, never held across the descent.  Caller holds
 * ns_lock (read): no name changes meanwhile.
 */
static int search_dir(struct fs *fs, uint64_t dir, struct path_search *ps,
		      int depth)
{
	char name[FS_NAME_MAX + 1];
	size_t at = strlen(ps->buf);
	struct fs_inode *dp;
	uint64_t got, k = 0;
	uint8_t dt;
	int err;

	if (depth > SEARCH_DEPTH || ++ps->dirs > SEARCH_DIRS ||
	    fs_iget(fs, dir, &dp))
		return -ENOENT;
	for (err = -ENOENT; err == -ENOENT; k++) {
		pthread_rwlock_rdlock(&dp->lock);
		err = S_ISDIR(dp->d.mode) ? fs_dir_next(fs, dp, k, name, &got,
							 &dt, &k) : -ENOTDIR;
		pthread_rwlock_unlock(&dp->lock);
		if (err)
			break;
		if (at + 1 + strlen(name) + 1 > ps->cap) {
			err = -ENOENT;
			continue;
		}
		snprintf(ps->buf + at, ps->cap - at, "/%s", name);
		if (got == ps->ino)
			break;
		err = -ENOENT;
		if (S_ISDIR((mode_t)dt << 12))
			err = search_dir(fs, got, ps, depth + 1);
		if (err)
			ps->buf[at] = '\0';
	}
	fs_iput(fs, dp);
	return err ? -ENOENT : 0;
}

int fs_path_find(struct fs *fs, uint64_t ino, char *buf, size_t len)
{
	struct path_search ps = { ino, buf, len, 0 };
	int err;

	if (!fs_path(fs, ino, buf, len))
		return 0;
	if (len < 2)
		return -ENAMETOOLONG;
	buf[0] = '\0';
	pthread_rwlock_rdlock(&fs->ns_lock);
	err = search_dir(fs, FS_ROOT_INO, &ps, 0);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (err)
		buf[0] = '\0';
	return err;
}

/* ---- unreadable ranges --------------------------------------------------- */
#define REPORT_RUNS_MAX 8
#define REPORT_REPEAT_NS (10 * 1000000000ull)

/*
 * The kernel asks again for what its readahead could not read (the page
 * alone), and a program retries: a run inside one of the runs reported
 * last (fs->reports), within a few seconds, says nothing new.
 */
static bool report_is_new(struct fs *fs, uint64_t ino, uint64_t from,
			  uint64_t to)
{
	struct fs_reports *rs = &fs->reports;
	uint64_t now = fs_now_ns();
	bool fresh = true;
	unsigned i;

	pthread_mutex_lock(&rs->lock);
	for (i = 0; i < FS_REPORTS_RECENT && fresh; i++)
		fresh = rs->r[i].ino != ino || from < rs->r[i].from ||
			to > rs->r[i].to ||
			now - rs->r[i].when_ns > REPORT_REPEAT_NS;
	if (fresh)
		rs->r[rs->next++ % FS_REPORTS_RECENT] =
			(struct fs_report_run){ ino, from, to, now };
	pthread_mutex_unlock(&rs->lock);
	return fresh;
}

struct report_runs {
	struct { uint64_t from, to; } v[REPORT_RUNS_MAX];   /* blocks */
	int n;
	bool more;
};

static void runs_add(struct report_runs *r, uint64_t b)
{
	if (r->n && r->v[r->n - 1].to == b)
		r->v[r->n - 1].to = b + 1;
	else if (r->n < REPORT_RUNS_MAX)
		r->v[r->n].from = b, r->v[r->n++].to = b + 1;
	else
		r->more = true;
}

/* Reads [off, off + size) again block by block: the runs that fail. */
static void runs_find(struct fs *fs, struct fs_inode *ip, uint64_t off,
		      size_t size, struct report_runs *r, uint64_t *isize)
{
	uint8_t *blk;
	uint64_t b, end;

	if (posix_memalign((void **)&blk, 4096, FS_BSIZE))
		return;
	pthread_rwlock_rdlock(&ip->lock);
	*isize = ip->d.size;
	end = off + size < ip->d.size ? off + size : ip->d.size;
	for (b = off >> FS_BSHIFT; b << FS_BSHIFT < end; b++)
		if (fs_file_read(fs, ip, b << FS_BSHIFT, FS_BSIZE, blk) == -EIO)
			runs_add(r, b);
	pthread_rwlock_unlock(&ip->lock);
	free(blk);
}

void fs_report_unreadable(struct fs *fs, struct fs_inode *ip, uint64_t off,
			  size_t size)
{
	struct report_runs r = { .n = 0 };
	char path[1024], where[1100];
	uint64_t isize = 0, from, to;
	int i;

	runs_find(fs, ip, off, size, &r, &isize);
	if (fs_path(fs, ip->ino, path, sizeof(path)))
		snprintf(where, sizeof(where), "inode %llu",
			 (unsigned long long)ip->ino);
	else
		snprintf(where, sizeof(where), "inode %llu (%s)",
			 (unsigned long long)ip->ino, path);
	for (i = 0; i < r.n; i++) {
		from = r.v[i].from << FS_BSHIFT;
		to = r.v[i].to << FS_BSHIFT;
		if (to > isize)
			to = isize;
		if (report_is_new(fs, ip->ino, from, to))
			fs_log(LOG_ERR, "%s: bytes %llu-%llu unreadable", where,
			       (unsigned long long)from,
			       (unsigned long long)to - 1);
	}
	if (r.more)
		fs_log(LOG_ERR, "%s: more unreadable ranges in bytes %llu-%llu",
		       where, (unsigned long long)r.v[r.n - 1].to << FS_BSHIFT,
		       (unsigned long long)(off + size - 1));
}

/* ---- which files hold blocks --------------------------------------------- */
struct owner_walk {
	const uint64_t *blocks;         /* sorted */
	size_t n;
	uint64_t ino;
	void (*fn)(void *ctx, uint64_t ino, uint64_t off, uint64_t block);
	void *ctx;
};

/* The blocks of the sorted list inside one extent, to fn. */
static void owner_extent(struct owner_walk *w, uint64_t lblk, uint64_t pblk,
			 uint32_t len, uint32_t flags)
{
	size_t lo = 0, hi = w->n, mid;

	if (flags & FS_EXT_UNWRITTEN)
		return;                 /* reads as zeros: nothing of it lost */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (w->blocks[mid] < pblk)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < w->n && w->blocks[lo] < pblk + len; lo++)
		w->fn(w->ctx, w->ino, (lblk + w->blocks[lo] - pblk) << FS_BSHIFT,
		      w->blocks[lo]);
}

static int owner_rec(void *arg, const void *rec)
{
	const struct fs_extent_disk *e = rec;

	owner_extent(arg, fs_le64(e->lblk), fs_le64(e->pblk), fs_le32(e->len),
		     fs_le32(e->flags));
	return 0;
}

static int owner_node(void *arg, uint64_t blk)
{
	return 0;
}

/* An inode's extent tree.  Caller holds ip->lock (read). */
static int owner_tree(struct fs *fs, struct fs_inode *ip, struct owner_walk *w)
{
	uint64_t root = ip->d.map_root;
	uint32_t depth = ip->d.map_depth;
	struct fs_bt t = { fs, &root, &depth, sizeof(struct fs_extent_disk),
			   FS_TREE_EXTENT, ip->ino, NULL, 0 };

	return fs_bt_walk(&t, owner_node, owner_rec, w);
}

/* The extents of ino, under its lock (read). */
static int owner_inode(struct fs *fs, uint64_t ino, struct owner_walk *w)
{
	struct fs_inode *ip;
	int err = 0;

	if (!fs_inode_is_allocated(fs, ino) || fs_iget(fs, ino, &ip))
		return 0;
	pthread_rwlock_rdlock(&ip->lock);
	w->ino = ino;
	if ((!S_ISREG(ip->d.mode) && !S_ISLNK(ip->d.mode)) || ip->dead) {
		/* directories, devices: metadata or nothing */
	} else if (!(ip->d.flags & FS_IFLAG_EXTENT_TREE)) {
		for (uint32_t i = 0; i < ip->d.nextents; i++)
			owner_extent(w, ip->d.ext[i].lblk, ip->d.ext[i].pblk,
				     ip->d.ext[i].len, ip->d.ext[i].flags);
	} else {
		err = owner_tree(fs, ip, w);
	}
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	/* a map that cannot be read is damage of its own, logged by the
	 * walk: the other files are still looked at */
	return err == -ENOMEM ? err : 0;
}

int fs_blocks_owners(struct fs *fs, const uint64_t *blocks, size_t n,
		     void (*fn)(void *ctx, uint64_t ino, uint64_t off,
				uint64_t block),
		     void *ctx)
{
	struct owner_walk w = { blocks, n, 0, fn, ctx };
	uint64_t end = fs_ichunk_inodes(fs);
	int err = 0;

	for (uint64_t ino = 1; ino < end && n && !err; ino++)
		err = owner_inode(fs, ino, &w);
	return err;
}
