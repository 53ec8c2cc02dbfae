/*
 * test_fs_policy: semantics the filesystem owns so that the FUSE daemon
 * only passes requests through - POSIX ACLs kept in step with the mode
 * (chmod, setfacl, inheritance), each change in one handle of one
 * transaction; the xattr namespace rules for the caller; the setgid rules
 * for the caller; chattr's flags; O_APPEND placed under the inode's lock.
 *
 * "One handle": fs->j.handles_started counts outermost fs_tx_begin calls.
 * A change made in two handles could be split by a commit between them,
 * and a power cut after that commit would leave mode and ACL apart.
 */
#include "fs_test_util.h"
#include "fs_int.h"
#include <linux/falloc.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sys/xattr.h>

#define ROOT FS_ROOT_INO
#define ACCESS "system.posix_acl_access"
#define DEFAULT "system.posix_acl_default"

enum { U_OBJ = 0x01, U = 0x02, G_OBJ = 0x04, G = 0x08, MASK = 0x10,
       OTHER = 0x20 };

struct ent { uint16_t tag, perm; uint32_t id; };

/* The kernel's posix_acl_xattr format. */
static size_t acl_make(uint8_t *b, const struct ent *e, int n)
{
	int i;

	memset(b, 0, 4 + 8 * (size_t)n);
	b[0] = 2;
	for (i = 0; i < n; i++) {
		uint8_t *p = b + 4 + 8 * i;

		p[0] = (uint8_t)e[i].tag;
		p[2] = (uint8_t)e[i].perm;
		p[4] = (uint8_t)e[i].id;
		p[5] = (uint8_t)(e[i].id >> 8);
	}
	return 4 + 8 * (size_t)n;
}

/* The perm of the entry with tag (and id, for named ones), or -1. */
static int acl_perm_of(const uint8_t *b, size_t len, uint16_t tag,
		       uint32_t id)
{
	size_t off;

	for (off = 4; off + 8 <= len; off += 8) {
		const uint8_t *p = b + off;
		uint32_t pid = p[4] | p[5] << 8 | p[6] << 16 |
			       (uint32_t)p[7] << 24;

		if ((p[0] | p[1] << 8) == tag &&
		    ((tag != U && tag != G) || pid == id))
			return p[2] | p[3] << 8;
	}
	return -1;
}

static mode_t mode_of(struct tfs *t, uint64_t ino)
{
	struct fs_attr a;

	assert_int_equal(fs_getattr(t->fs, ino, &a), 0);
	return a.mode & 07777;
}

static uint64_t handles(struct tfs *t)
{
	uint64_t n;

	pthread_mutex_lock(&t->fs->j.lock);
	n = t->fs->j.handles_started;
	pthread_mutex_unlock(&t->fs->j.lock);
	return n;
}

static void chmod_to(struct tfs *t, uint64_t ino, mode_t mode)
{
	struct fs_attr in = { .mode = mode };

	assert_int_equal(fs_setattr(t->fs, ino, &in, FS_SET_ATTR_MODE, NULL),
			 0);
}

/* setfacl, as the kernel passes it on */
static int set_acl(struct tfs *t, uint64_t ino, const uint8_t *acl,
		   size_t len)
{
	return fs_setxattr(t->fs, &t->ctx, ino, ACCESS, acl, len, 0);
}

static const struct ent extended[] = {
	{ U_OBJ, 6, 0 }, { U, 6, 1234 }, { G_OBJ, 4, 0 }, { MASK, 6, 0 },
	{ OTHER, 4, 0 },
};

/* ---- chmod ------------------------------------------------------------- */
static void test_chmod_updates_access_acl_in_one_handle(void **state)
{
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f"), h;
	uint8_t acl[64], got[64];
	size_t len = acl_make(acl, extended, 5);
	ssize_t n;

	assert_int_equal(set_acl(t, f, acl, len), 0);
	assert_int_equal(mode_of(t, f), 0664);
	h = handles(t);
	chmod_to(t, f, 0710);
	assert_int_equal(handles(t), h + 1);
	assert_int_equal(mode_of(t, f), 0710);
	n = fs_getxattr(t->fs, &t->ctx, f, ACCESS, got, sizeof(got));
	assert_int_equal(n, len);
	assert_int_equal(acl_perm_of(got, len, U_OBJ, 0), 7);
	assert_int_equal(acl_perm_of(got, len, MASK, 0), 1);   /* group bits */
	assert_int_equal(acl_perm_of(got, len, OTHER, 0), 0);
	assert_int_equal(acl_perm_of(got, len, G_OBJ, 0), 4);  /* untouched */
	assert_int_equal(acl_perm_of(got, len, U, 1234), 6);   /* untouched */
	/* both on disk, from that one transaction */
	tfs_remount(t);
	assert_int_equal(mode_of(t, f), 0710);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, ACCESS, got,
				     sizeof(got)), len);
	assert_int_equal(acl_perm_of(got, len, MASK, 0), 1);
}

static void test_chmod_without_mask_sets_owning_group(void **state)
{
	static const struct ent no_mask[] = {
		{ U_OBJ, 6, 0 }, { G_OBJ, 4, 0 }, { OTHER, 4, 0 },
	};
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f");
	uint8_t acl[64], got[64];
	size_t len = acl_make(acl, no_mask, 3);
	struct fs_inode *ip;
	struct fs_tx *tx;

	/* fs stores no ACL without a mask (the mode says it all), but one
	 * written before it kept to that must follow chmod too */
	assert_int_equal(fs_iget(t->fs, f, &ip), 0);
	pthread_rwlock_wrlock(&ip->lock);
	assert_int_equal(fs_tx_begin(t->fs, &tx), 0);
	assert_int_equal(fs_xattr_set(t->fs, tx, ip, ACCESS, acl, len, 0), 0);
	fs_tx_end(t->fs, tx);
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(t->fs, ip);
	chmod_to(t, f, 0751);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, ACCESS, got,
				     sizeof(got)), len);
	assert_int_equal(acl_perm_of(got, len, U_OBJ, 0), 7);
	assert_int_equal(acl_perm_of(got, len, G_OBJ, 0), 5);
	assert_int_equal(acl_perm_of(got, len, OTHER, 0), 1);
}

static void test_chmod_without_acl_stores_none(void **state)
{
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f");
	char names[64];

	chmod_to(t, f, 0600);
	assert_int_equal(mode_of(t, f), 0600);
	assert_int_equal(fs_listxattr(t->fs, &t->ctx, f, names, sizeof(names)),
			 0);
}

/* ---- setfacl: setxattr of the access ACL -------------------------------- */
static void test_set_access_acl_sets_mode_in_one_handle(void **state)
{
	static const struct ent e[] = {
		{ U_OBJ, 7, 0 }, { U, 4, 1234 }, { G_OBJ, 4, 0 },
		{ MASK, 5, 0 }, { OTHER, 0, 0 },
	};
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f"), h;
	uint8_t acl[64], got[64];
	size_t len = acl_make(acl, e, 5);

	assert_int_equal(mode_of(t, f), 0644);
	h = handles(t);
	assert_int_equal(set_acl(t, f, acl, len), 0);
	assert_int_equal(handles(t), h + 1);
	/* owner from user::, group from the mask, other from other:: */
	assert_int_equal(mode_of(t, f), 0750);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, ACCESS, got,
				     sizeof(got)), len);
	assert_memory_equal(got, acl, len);
	tfs_remount(t);
	assert_int_equal(mode_of(t, f), 0750);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, ACCESS, got,
				     sizeof(got)), len);
}

static void test_minimal_acl_is_only_mode(void **state)
{
	static const struct ent minimal[] = {
		{ U_OBJ, 6, 0 }, { G_OBJ, 0, 0 }, { OTHER, 4, 0 },
	};
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f"), h;
	uint8_t acl[64], got[64];
	size_t len = acl_make(acl, extended, 5);

	assert_int_equal(set_acl(t, f, acl, len), 0);
	/* setfacl -b: an ACL the mode bits say as well replaces it */
	len = acl_make(acl, minimal, 3);
	h = handles(t);
	assert_int_equal(set_acl(t, f, acl, len), 0);
	assert_int_equal(handles(t), h + 1);
	assert_int_equal(mode_of(t, f), 0604);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, ACCESS, got,
				     sizeof(got)), -ENODATA);
	assert_int_equal(fs_listxattr(t->fs, &t->ctx, f, (char *)got,
				      sizeof(got)), 0);
}

static void test_remove_access_acl_keeps_mode(void **state)
{
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f");
	uint8_t acl[64];
	size_t len = acl_make(acl, extended, 5);

	assert_int_equal(set_acl(t, f, acl, len), 0);
	chmod_to(t, f, 0640);
	assert_int_equal(fs_removexattr(t->fs, &t->ctx, f, ACCESS), 0);
	assert_int_equal(mode_of(t, f), 0640);
}

static void test_invalid_acl_changes_nothing(void **state)
{
	static const struct ent no_other[] = {
		{ U_OBJ, 7, 0 }, { G_OBJ, 7, 0 },
	};
	static const struct ent bad_tag[] = {
		{ U_OBJ, 7, 0 }, { G_OBJ, 7, 0 }, { 0x40, 7, 0 },
		{ OTHER, 7, 0 },
	};
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f");
	uint8_t acl[64];
	size_t len;

	len = acl_make(acl, no_other, 2);
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, f, ACCESS, acl, len, 0),
			 -EINVAL);
	len = acl_make(acl, bad_tag, 4);
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, f, ACCESS, acl, len, 0),
			 -EINVAL);
	acl[0] = 3;                     /* unknown version */
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, f, ACCESS, acl, len, 0),
			 -EINVAL);
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, f, ACCESS, acl, 7, 0),
			 -EINVAL);
	assert_int_equal(mode_of(t, f), 0644);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, ACCESS, acl,
				     sizeof(acl)), -ENODATA);
}

/* ---- inheritance ------------------------------------------------------- */
static void test_default_acl_applied_in_the_create(void **state)
{
	struct tfs *t = *state;
	uint64_t d = tfs_mkdir(t, ROOT, "d"), h;
	uint8_t acl[64], got[64];
	size_t len = acl_make(acl, extended, 5);
	struct fs_attr a;

	assert_int_equal(fs_setxattr(t->fs, &t->ctx, d, DEFAULT, acl, len, 0),
			 0);
	h = handles(t);
	assert_int_equal(fs_mkdir(t->fs, &t->ctx, d, "sub", 0777, &a), 0);
	fs_forget(t->fs, a.ino, 1);
	assert_int_equal(handles(t), h + 1);
	/* masked by the ACL, not by the umask (022) */
	assert_int_equal(a.mode & 07777, 0664);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, a.ino, ACCESS, got,
				     sizeof(got)), len);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, a.ino, DEFAULT, got,
				     sizeof(got)), len);
	assert_memory_equal(got, acl, len);
}

/* ---- namespaces ---------------------------------------------------------- */
static void test_xattr_namespaces(void **state)
{
	struct tfs *t = *state;
	struct fs_ctx root = { .uid = 0, .gid = 0, .umask = 022 };
	uint64_t f = tfs_create(t, ROOT, "f"), d = tfs_mkdir(t, ROOT, "d");
	struct fs *fs = t->fs;
	struct fs_attr a;
	char buf[256];

	assert_int_equal(fs_symlink(fs, &t->ctx, "f", ROOT, "l", &a), 0);
	fs_forget(fs, a.ino, 1);
	/* system.*: the two ACLs only; unknown prefixes: none */
	assert_int_equal(fs_setxattr(fs, &t->ctx, f, "system.foo", "x", 1, 0),
			 -EOPNOTSUPP);
	assert_int_equal(fs_getxattr(fs, &t->ctx, f, "system.foo", buf,
				     sizeof(buf)), -EOPNOTSUPP);
	assert_int_equal(fs_setxattr(fs, &t->ctx, f, "plain", "x", 1, 0),
			 -EOPNOTSUPP);
	/* trusted.*: uid 0 only, and hidden from the others' lists */
	assert_int_equal(fs_setxattr(fs, &t->ctx, f, "trusted.t", "x", 1, 0),
			 -EPERM);
	assert_int_equal(fs_setxattr(fs, &root, f, "trusted.t", "x", 1, 0), 0);
	assert_int_equal(fs_getxattr(fs, &t->ctx, f, "trusted.t", buf,
				     sizeof(buf)), -ENODATA);
	assert_int_equal(fs_getxattr(fs, &root, f, "trusted.t", buf,
				     sizeof(buf)), 1);
	assert_int_equal(fs_removexattr(fs, &t->ctx, f, "trusted.t"), -EPERM);
	assert_int_equal(fs_setxattr(fs, &t->ctx, f, "user.u", "y", 1, 0), 0);
	assert_int_equal(fs_setxattr(fs, &t->ctx, f, "security.s", "z", 1, 0),
			 0);
	assert_int_equal(fs_listxattr(fs, &root, f, NULL, 0), 10 + 7 + 11);
	assert_int_equal(fs_listxattr(fs, &t->ctx, f, NULL, 0), 7 + 11);
	assert_int_equal(fs_listxattr(fs, &t->ctx, f, buf, 18), 18);
	/* in name-hash order (format 2) */
	assert_non_null(memmem(buf, 18, "user.u", 7));
	assert_non_null(memmem(buf, 18, "security.s", 11));
	/* user.*: regular files and directories only */
	assert_int_equal(fs_setxattr(fs, &t->ctx, d, "user.u", "y", 1, 0), 0);
	assert_int_equal(fs_setxattr(fs, &t->ctx, a.ino, "user.u", "y", 1, 0),
			 -EPERM);
	assert_int_equal(fs_getxattr(fs, &t->ctx, a.ino, "user.u", buf,
				     sizeof(buf)), -ENODATA);
	assert_int_equal(fs_setxattr(fs, &t->ctx, a.ino, "security.s", "z", 1,
				     0), 0);
}

/* ---- O_APPEND ---------------------------------------------------------- */
#define REC 1000
#define NREC 200

struct appender {
	struct tfs *t;
	uint64_t ino;
	uint8_t byte;
};

static void *append_records(void *arg)
{
	struct appender *ap = arg;
	uint8_t rec[REC];
	int i;

	memset(rec, ap->byte, sizeof(rec));
	for (i = 0; i < NREC; i++)
		if (fs_write(ap->t->fs, ap->ino, 0, REC, rec, O_APPEND) != REC)
			return (void *)1;
	return NULL;
}

static void test_append_goes_to_the_end(void **state)
{
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f");
	struct appender ap[2] = { { t, f, 'a' }, { t, f, 'b' } };
	static uint8_t got[2 * NREC * REC];
	struct fs_attr empty = { .size = 0 };
	pthread_t th[2];
	void *ret;
	int i, k, na = 0;
	char buf[8];

	assert_int_equal(fs_write(t->fs, f, 0, 3, "abc", 0), 3);
	assert_int_equal(fs_write(t->fs, f, 0, 2, "de", O_APPEND | O_WRONLY),
			 2);
	assert_int_equal(fs_read(t->fs, f, 0, sizeof(buf), buf), 5);
	assert_memory_equal(buf, "abcde", 5);
	assert_int_equal(fs_setattr(t->fs, f, &empty, FS_SET_ATTR_SIZE, NULL),
			 0);
	/* two appenders at once: every record whole, none overwritten */
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, append_records,
						&ap[i]), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(th[i], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(fs_read(t->fs, f, 0, sizeof(got), got), sizeof(got));
	for (k = 0; k < 2 * NREC; k++) {
		for (i = 1; i < REC; i++)
			assert_int_equal(got[k * REC + i], got[k * REC]);
		na += got[k * REC] == 'a';
	}
	assert_int_equal(na, NREC);
}

/* ---- setgid rules (Linux 6.x setattr_prepare, setattr_should_drop_sgid) -- */

static bool in_group_7(const struct fs_ctx *ctx, gid_t g)
{
	return g == 7;
}

struct mode_case {
	const char *what;
	uid_t uid;              /* the caller's; its gid 1000, groups 7 */
	gid_t file_gid;         /* the file is uid 1000's */
	int to_set;
	mode_t mode, want;
};

/* Each case on one file: its owner, group and mode set, then to_set by
 * the caller; the mode must be want. */
static void run_mode_cases(struct tfs *t, const struct mode_case *cases,
			   size_t n)
{
	uint64_t f = tfs_create(t, ROOT, "f");
	size_t i;

	for (i = 0; i < n; i++) {
		struct fs_ctx ctx = { .uid = cases[i].uid, .gid = 1000,
				      .in_groups = in_group_7 };
		struct fs_attr in = { .mode = cases[i].mode, .uid = 1000,
				      .gid = cases[i].file_gid };

		assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_MODE |
					    FS_SET_ATTR_UID | FS_SET_ATTR_GID,
					    NULL), 0);
		assert_int_equal(fs_setattr_ctx(t->fs, &ctx, f, &in,
						cases[i].to_set, NULL), 0);
		if (mode_of(t, f) != cases[i].want)
			fail_msg("%s: mode %o, want %o", cases[i].what,
				 mode_of(t, f), cases[i].want);
	}
}

/* The file belongs to uid 1000, group 5 (7 in the last row); the caller
 * is uid 1000 or 2000, gid 1000, supplementary group 7. */
static void test_setgid_dropped_outside_the_group(void **state)
{
	static const struct mode_case cases[] = {
		{ "chmod by the owner outside", 1000, 5, FS_SET_ATTR_MODE,
		  02755, 0755 },
		{ "chmod by root", 0, 5, FS_SET_ATTR_MODE, 02755, 02755 },
		{ "write by another outside", 2000, 5, FS_SET_ATTR_KILL_SGID,
		  02666, 0666 },
		{ "write by root", 0, 5, FS_SET_ATTR_KILL_SGID, 02666, 02666 },
		{ "truncate by another outside", 2000, 5, FS_SET_ATTR_SIZE,
		  02666, 0666 },
		{ "times only", 2000, 5, FS_SET_ATTR_MTIME_NOW, 02666, 02666 },
		{ "write by a supplementary member", 2000, 7,
		  FS_SET_ATTR_KILL_SGID, 02666, 02666 },
	};

	run_mode_cases(*state, cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * The kernel's kill requests (FS_SET_ATTR_KILL_SUIDGID: killpriv_v2's
 * FATTR_KILL_SUIDGID; FS_SET_ATTR_KILL_SGID: the SETATTR with no
 * attribute) as Linux's setattr_should_drop_suidgid and chown_common
 * decide.  Same file and callers as above.
 */
#define KILL FS_SET_ATTR_KILL_SUIDGID
#define CHOWN_KILL (FS_SET_ATTR_KILL_SUIDGID | FS_SET_ATTR_UID)
#define CHOWN_SAME_KILL (FS_SET_ATTR_KILL_SUIDGID | FS_SET_ATTR_CHOWN)
static void test_privs_killed_as_linux(void **state)
{
	static const struct mode_case cases[] = {
		{ "write by another outside", 2000, 5, KILL, 06777, 0777 },
		{ "write outside, no group x", 2000, 5, KILL, 06766, 0766 },
		{ "write outside, setuid only", 2000, 5, KILL, 04766, 0766 },
		{ "write by a member, group x", 2000, 7, KILL, 06777, 0777 },
		{ "write by a member, no group x", 2000, 7, KILL, 06766, 02766 },
		{ "write by root", 0, 5, KILL, 06777, 06777 },
		{ "empty SETATTR, setuid", 2000, 5, FS_SET_ATTR_KILL_SGID,
		  04766, 0766 },
		{ "empty SETATTR by root", 0, 5, FS_SET_ATTR_KILL_SGID,
		  06777, 06777 },
		{ "truncate by another", 2000, 7, KILL | FS_SET_ATTR_SIZE,
		  06777, 0777 },
		{ "chown by root, group x", 0, 5, CHOWN_KILL, 06755, 0755 },
		{ "chown by root, no group x", 0, 5, CHOWN_KILL, 02745, 02745 },
		{ "chown by root, setuid", 0, 5, CHOWN_KILL, 04700, 0700 },
		{ "chown -1 -1 by the owner outside", 1000, 5,
		  CHOWN_SAME_KILL, 02745, 0745 },
		{ "chown -1 -1 by the owner, a member", 1000, 7,
		  CHOWN_SAME_KILL, 06745, 02745 },
		{ "nothing asked", 2000, 5, FS_SET_ATTR_MTIME_NOW, 04777, 04777 },
	};

	run_mode_cases(*state, cases, sizeof(cases) / sizeof(cases[0]));
}
#undef KILL
#undef CHOWN_KILL
#undef CHOWN_SAME_KILL

/* A WRITE or O_TRUNC open with the kernel's kill flag: fs_kill_privs says
 * whether it changed the mode; directories keep theirs. */
static void test_kill_privs_of_a_write(void **state)
{
	struct tfs *t = *state;
	struct fs_ctx other = { .uid = 2000, .gid = 1000 };
	struct fs_ctx root = { .uid = 0, .gid = 0 };
	struct fs_attr in = { .mode = 06777, .uid = 1000, .gid = 5 };
	uint64_t f = tfs_create(t, ROOT, "f");
	uint64_t d = tfs_mkdir(t, ROOT, "d");
	const int set = FS_SET_ATTR_MODE | FS_SET_ATTR_UID | FS_SET_ATTR_GID;

	assert_int_equal(fs_setattr(t->fs, f, &in, set, NULL), 0);
	assert_int_equal(fs_kill_privs(t->fs, &root, f), 0);
	assert_int_equal(mode_of(t, f), 06777);
	assert_int_equal(fs_kill_privs(t->fs, &other, f), 1);
	assert_int_equal(mode_of(t, f), 0777);
	assert_int_equal(fs_kill_privs(t->fs, &other, f), 0);
	in.mode = 02775;
	assert_int_equal(fs_setattr(t->fs, d, &in, set, NULL), 0);
	assert_int_equal(fs_kill_privs(t->fs, &other, d), 0);
	assert_int_equal(mode_of(t, d), 02775);
}

/* A write on a FOPEN_DIRECT_IO handle: fs_kill_caps drops
 * security.capability (whoever writes), leaves other attributes, says
 * whether there was one, and takes nothing from a file that refuses the
 * write; it survives a remount. */
static void test_kill_caps_of_a_direct_write(void **state)
{
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f"), g = tfs_create(t, ROOT, "g");
	uint64_t bare = tfs_create(t, ROOT, "bare");
	const char cap[20] = { 1, 0, 0, 2 };           /* any value will do */
	char buf[32];

	assert_int_equal(fs_kill_caps(t->fs, bare), 0);
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, f, "security.capability",
				     cap, sizeof(cap), 0), 0);
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, f, "user.keep", "1", 1,
				     0), 0);
	assert_int_equal(fs_kill_caps(t->fs, f), 1);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, "security.capability",
				     buf, sizeof(buf)), -ENODATA);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, "user.keep", buf,
				     sizeof(buf)), 1);
	assert_int_equal(fs_kill_caps(t->fs, f), 0);
	tfs_remount(t);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, "security.capability",
				     buf, sizeof(buf)), -ENODATA);
	/* immutable: the write fails, the capabilities stay */
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, g, "security.capability",
				     cap, sizeof(cap), 0), 0);
	assert_int_equal(fs_setflags(t->fs, g, FS_IMMUTABLE_FL), 0);
	assert_int_equal(fs_kill_caps(t->fs, g), 0);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, g, "security.capability",
				     buf, sizeof(buf)), sizeof(cap));
	assert_int_equal(fs_setflags(t->fs, g, 0), 0);
	assert_int_equal(fs_kill_caps(t->fs, g), 1);
}

/* fs_blocks_changed until fs_blocks_shown: yes once per change of
 * st_blocks, whatever made it, and no for writes over blocks the file
 * has. */
static bool blocks_changed(struct tfs *t, uint64_t ino)
{
	uint64_t v;
	bool changed = fs_blocks_changed(t->fs, ino, &v);

	fs_blocks_shown(t->fs, ino, v);
	return changed;
}

static void test_blocks_changed_once_per_change(void **state)
{
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f");
	struct fs_attr in = { .size = 4096 };
	static char big[8192], page[4096];
	uint64_t v1, v2;

	assert_true(blocks_changed(t, f));      /* first call */
	assert_false(blocks_changed(t, f));
	assert_int_equal(fs_write(t->fs, f, 0, sizeof(big), big, 0),
			 sizeof(big));
	assert_true(blocks_changed(t, f));
	assert_false(blocks_changed(t, f));
	assert_int_equal(fs_write(t->fs, f, 4096, sizeof(page), page, 0),
			 sizeof(page));
	assert_int_equal(fs_write(t->fs, f, 0, 10, "overwrite!", 0), 10);
	assert_false(blocks_changed(t, f));
	assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_SIZE, NULL), 0);
	assert_true(blocks_changed(t, f));
	/* grown and shrunk back between two calls: still a change */
	assert_int_equal(fs_write(t->fs, f, 4096, sizeof(page), page, 0),
			 sizeof(page));
	assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_SIZE, NULL), 0);
	assert_true(blocks_changed(t, f));
	assert_false(blocks_changed(t, f));
	/* two callers at once: both see a change until one showed it */
	assert_int_equal(fs_write(t->fs, f, 4096, sizeof(page), page, 0),
			 sizeof(page));
	assert_true(fs_blocks_changed(t->fs, f, &v1));
	assert_true(fs_blocks_changed(t->fs, f, &v2));
	fs_blocks_shown(t->fs, f, v2);
	fs_blocks_shown(t->fs, f, v1);
	assert_false(blocks_changed(t, f));
}

/* setfacl by the owner outside the group drops S_ISGID, as chmod does */
static void test_set_acl_drops_setgid_outside_the_group(void **state)
{
	struct tfs *t = *state;
	struct fs_ctx owner = { .uid = 1000, .gid = 1000 };
	struct fs_attr in = { .mode = 02775, .uid = 1000, .gid = 5 };
	uint64_t f = tfs_create(t, ROOT, "f");
	uint8_t acl[64];
	size_t len = acl_make(acl, extended, 5);

	assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_MODE |
				    FS_SET_ATTR_UID | FS_SET_ATTR_GID, NULL), 0);
	assert_int_equal(fs_setxattr(t->fs, &owner, f, ACCESS, acl, len, 0), 0);
	assert_int_equal(mode_of(t, f), 0664);
	chmod_to(t, f, 02775);
	owner.uid = 0;                                  /* root: kept */
	assert_int_equal(fs_setxattr(t->fs, &owner, f, ACCESS, acl, len, 0), 0);
	assert_int_equal(mode_of(t, f), 02664);
}

/* ---- chattr flags (iflags.c) ------------------------------------------- */

static int open_with(struct tfs *t, uint64_t ino, int flags)
{
	uint64_t fh;
	int err = fs_open(t->fs, ino, flags, &fh);

	if (!err)
		fs_release(t->fs, ino, fh);
	return err;
}

static void test_iflags_enforced_and_kept(void **state)
{
	struct tfs *t = *state;
	uint64_t f = tfs_create(t, ROOT, "f"), g = tfs_create(t, ROOT, "g");
	struct fs_attr in = { .mode = 0600, .size = 0 };
	unsigned fl;

	assert_int_equal(fs_setflags(t->fs, f, FS_IMMUTABLE_FL), 0);
	assert_int_equal(fs_setflags(t->fs, g, FS_APPEND_FL | FS_NODUMP_FL), 0);
	assert_int_equal(fs_setflags(t->fs, g, 0x1), -EOPNOTSUPP);  /* SECRM */
	tfs_remount(t);
	assert_int_equal(fs_getflags(t->fs, f, &fl), 0);
	assert_int_equal(fl, FS_IMMUTABLE_FL);
	assert_int_equal(fs_getflags(t->fs, g, &fl), 0);
	assert_int_equal(fl, FS_APPEND_FL | FS_NODUMP_FL);
	/* immutable: nothing changes */
	assert_int_equal(fs_write(t->fs, f, 0, 1, "x", 0), -EPERM);
	assert_int_equal(open_with(t, f, O_WRONLY | O_APPEND), -EPERM);
	assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_MODE, NULL),
			 -EPERM);
	assert_int_equal(fs_setxattr(t->fs, &t->ctx, f, "user.a", "1", 1, 0),
			 -EPERM);
	assert_int_equal(fs_unlink(t->fs, ROOT, "f"), -EPERM);
	assert_int_equal(fs_rename(t->fs, ROOT, "f", ROOT, "h", 0), -EPERM);
	assert_int_equal(open_with(t, f, O_RDONLY), 0);
	/* append-only: it only grows */
	assert_int_equal(open_with(t, g, O_WRONLY), -EPERM);
	assert_int_equal(open_with(t, g, O_WRONLY | O_APPEND), 0);
	assert_int_equal(open_with(t, g, O_WRONLY | O_APPEND | O_TRUNC), -EPERM);
	assert_int_equal(fs_write(t->fs, g, 0, 1, "x", O_APPEND), 1);
	assert_int_equal(fs_setattr(t->fs, g, &in, FS_SET_ATTR_SIZE, NULL),
			 -EPERM);
	assert_int_equal(fs_fallocate(t->fs, g, FALLOC_FL_PUNCH_HOLE |
				      FALLOC_FL_KEEP_SIZE, 0, 1), -EPERM);
	assert_int_equal(fs_unlink(t->fs, ROOT, "g"), -EPERM);
	/* cleared, they are ordinary files again */
	assert_int_equal(fs_setflags(t->fs, f, 0), 0);
	assert_int_equal(fs_setflags(t->fs, g, 0), 0);
	assert_int_equal(fs_unlink(t->fs, ROOT, "f"), 0);
	assert_int_equal(fs_unlink(t->fs, ROOT, "g"), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, tfs_setup, tfs_teardown)
	const struct CMUnitTest tests[] = {
		T(test_chmod_updates_access_acl_in_one_handle),
		T(test_chmod_without_mask_sets_owning_group),
		T(test_chmod_without_acl_stores_none),
		T(test_set_access_acl_sets_mode_in_one_handle),
		T(test_minimal_acl_is_only_mode),
		T(test_remove_access_acl_keeps_mode),
		T(test_invalid_acl_changes_nothing),
		T(test_default_acl_applied_in_the_create),
		T(test_xattr_namespaces),
		T(test_append_goes_to_the_end),
		T(test_setgid_dropped_outside_the_group),
		T(test_privs_killed_as_linux),
		T(test_kill_privs_of_a_write),
		T(test_kill_caps_of_a_direct_write),
		T(test_blocks_changed_once_per_change),
		T(test_set_acl_drops_setgid_outside_the_group),
		T(test_iflags_enforced_and_kept),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
