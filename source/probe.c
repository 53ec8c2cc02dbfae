/*
 * probe: what a device already holds (see probe.h), for mkfs.raidfs and
 * fsck.raidfs alike.
 *
 * blkid_do_probe is called in a loop, as wipefs(8) does, so every
 * signature on the device is found, not only the first (an md 0.90
 * superblock sits at the end of a device that may also start with an
 * ext4 one).  The wipe (blkid_do_wipe) erases the magic bytes only:
 * raidcore overwrites only its own regions, and a stale md or GPT
 * signature near the end of a device would make udev, mdadm or the
 * partition code claim it later.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <blkid/blkid.h>
#include <uuid/uuid.h>

#include "probe.h"

#define WIPE_MAX_ROUNDS 64   /* a signature that survives its wipe: stop */

struct type_name {
	const char *type;
	const char *what;
};

/* Types whose name alone would not tell a user what they are about to lose. */
static const struct type_name type_names[] = {
	{ "linux_raid_member", "md" },
	{ "LVM2_member", "LVM physical volume" },
	{ "LVM1_member", "LVM1 physical volume" },
	{ "zfs_member", "ZFS pool member" },
	{ "crypto_LUKS", "LUKS" },
	{ "isw_raid_member", "Intel firmware RAID" },
	{ "ddf_raid_member", "DDF firmware RAID" },
};

static const char *type_explain(const char *type)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (!strcmp(type, type_names[i].type))
			return type_names[i].what;
	return NULL;
}

static const char *usage_name(const char *usage)
{
	if (!usage)
		return "a signature";
	if (!strcmp(usage, "filesystem"))
		return "a filesystem";
	if (!strcmp(usage, "raid"))
		return "a RAID member";
	if (!strcmp(usage, "crypto"))
		return "an encrypted volume";
	return "a signature";
}

/* Appends "name value" to a comma-separated detail string. */
static void detail_add(char *buf, size_t len, const char *name,
		       const char *value)
{
	size_t n = strlen(buf);

	if (!value || n >= len)
		return;
	snprintf(buf + n, len - n, "%s%s%s", n ? ", " : "", name, value);
}

static void sig_describe(blkid_probe pr, struct probe_sig *s)
{
	const char *type = NULL, *usage = NULL, *label = NULL, *uuid = NULL;
	const char *off = NULL;
	char quoted[96];

	if (blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL) == 0) {
		snprintf(s->what, sizeof(s->what), "a partition table: %s",
			 type);
		blkid_probe_lookup_value(pr, "PTMAGIC_OFFSET", &off, NULL);
		blkid_probe_lookup_value(pr, "PTUUID", &uuid, NULL);
	} else {
		blkid_probe_lookup_value(pr, "TYPE", &type, NULL);
		blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
		blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
		blkid_probe_lookup_value(pr, "UUID", &uuid, NULL);
		blkid_probe_lookup_value(pr, "SBMAGIC_OFFSET", &off, NULL);
		type = type ? type : "unknown";
		snprintf(s->what, sizeof(s->what), "%s: %s", usage_name(usage),
			 type);
		detail_add(s->detail, sizeof(s->detail), "", type_explain(type));
	}
	if (label)
		snprintf(quoted, sizeof(quoted), "'%s'", label);
	detail_add(s->detail, sizeof(s->detail), "label ", label ? quoted : NULL);
	detail_add(s->detail, sizeof(s->detail), "UUID ", uuid);
	s->offset = off ? strtoull(off, NULL, 10) : 0;
}

static struct probe_sig *sig_add(struct probe_result *r)
{
	if (r->nsigs == PROBE_MAX_SIGS) {
		r->truncated = true;
		return NULL;
	}
	return memset(&r->sigs[r->nsigs++], 0, sizeof(r->sigs[0]));
}

static void raidfs_describe(const struct rc_probe *p, struct probe_sig *s)
{
	char uuid[40], role[40];

	uuid_unparse(p->array_uuid, uuid);
	if (p->role == 0xffffffffu)
		snprintf(role, sizeof(role), "a spare");
	else
		snprintf(role, sizeof(role), "member %u of %u", p->role,
			 p->members);
	snprintf(s->what, sizeof(s->what), "%s of the raidfs %s array %s",
		 role, rc_level_name(p->level), uuid);
	snprintf(s->detail, sizeof(s->detail), "label '%s'", p->label);
	if (!p->label[0])
		s->detail[0] = '\0';
}

static int raidfs_find(const char *path, struct rc_dev *dev,
		       struct probe_result *r, char *err, size_t errlen)
{
	struct probe_sig *s;
	int ret = rc_member_probe(dev, &r->raidfs);

	r->raidfs_ret = ret;
	/* -EINVAL: smaller than a superblock; the caller's size check says so. */
	if (ret == -ENODATA || ret == -EINVAL)
		return 0;
	if (ret < 0 && ret != -EBADMSG && ret != -EPROTONOSUPPORT) {
		snprintf(err, errlen, "%s: cannot be read: %s", path,
			 strerror(-ret));
		return ret;
	}
	s = sig_add(r);
	if (!s)
		return 0;
	s->raidfs = true;
	if (ret == -EBADMSG)
		snprintf(s->what, sizeof(s->what),
			 "a damaged raidfs superblock (every copy)");
	else if (ret == -EPROTONOSUPPORT)
		snprintf(s->what, sizeof(s->what),
			 "a raidfs superblock of a newer format");
	else
		raidfs_describe(&r->raidfs, s);
	return 0;
}

/* The superblock and partition probers, reporting magic offsets. */
static void blkid_probe_setup(blkid_probe pr)
{
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
		BLKID_SUBLKS_USAGE | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
		BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
}

static int blkid_find(const char *path, struct probe_result *r, char *err,
		      size_t errlen)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	struct probe_sig *s;
	int ret;

	if (!pr) {
		snprintf(err, errlen, "%s: cannot be probed for existing "
			 "signatures: %s", path, strerror(errno ? errno : EIO));
		return -EIO;
	}
	blkid_probe_setup(pr);
	while ((ret = blkid_do_probe(pr)) == 0) {
		s = sig_add(r);
		if (s)
			sig_describe(pr, s);
	}
	blkid_free_probe(pr);
	if (ret < 0) {
		snprintf(err, errlen, "%s: cannot be read while probing for "
			 "signatures", path);
		return -EIO;
	}
	return 0;
}

int probe_sigs_find(const char *path, struct rc_dev *dev,
		    struct probe_result *r, char *err, size_t errlen)
{
	int ret;

	memset(r, 0, sizeof(*r));
	ret = raidfs_find(path, dev, r, err, errlen);
	if (ret == 0)
		ret = blkid_find(path, r, err, errlen);
	return ret;
}

/* The first byte of buf[0, len) that is not zero: len when none. */
static size_t first_nonzero(const uint8_t *buf, size_t len)
{
	size_t i = 0;

	while (i + 8 <= len && *(const uint64_t *)(buf + i) == 0)
		i += 8;
	while (i < len && buf[i] == 0)
		i++;
	return i;
}

/* Zeros in its first and last MiB and in 62 blocks spread between? */
bool probe_reads_blank(struct rc_dev *dev)
{
	enum { EDGE = 1 << 20, BLK = 4096, SPREAD = 62 };
	uint64_t size = dev->size, off;
	uint8_t *buf = NULL;
	bool blank = posix_memalign((void **)&buf, BLK, EDGE) == 0;

	for (int k = 0; blank && k < SPREAD + 2; k++) {
		size_t len = k == 0 || k == SPREAD + 1 ? EDGE : BLK;

		off = k == 0 ? 0 : k == SPREAD + 1 ?
		      (size > EDGE ? size - EDGE : 0) :
		      size / (SPREAD + 1) * (uint64_t)k / BLK * BLK;
		if (len > size - off)
			len = (size_t)(size - off);
		if (!len)
			continue;
		blank = rc_dev_read(dev, buf, len, off) == 0 &&
			first_nonzero(buf, len) == len;
	}
	free(buf);
	return blank;
}

/* Reads [off, end) of dev in chunks of len into buf: 1 all zeros, 0 not
 * (*at set), negative errno. */
static int range_zero(struct rc_dev *dev, uint8_t *buf, size_t len,
		      uint64_t off, uint64_t end, uint64_t *at)
{
	size_t n, z;
	int ret = 1;

	while (ret == 1 && off < end) {
		n = end - off < len ? (size_t)(end - off) : len;
		ret = rc_dev_read(dev, buf, n, off);
		if (ret < 0)
			break;
		z = first_nonzero(buf, n);
		if (z < n)
			*at = off + z;
		ret = z == n;
		off += n;
	}
	return ret;
}

int probe_proves_blank(const char *path, struct rc_dev *dev, uint64_t *at)
{
	enum { CHUNK = 1 << 20 };
	uint64_t size = dev->size, off = 0;
	uint8_t *buf = NULL;
	struct stat st;
	off_t data, hole;
	int fd = -1, ret;

	*at = 0;
	ret = posix_memalign((void **)&buf, 4096, CHUNK) ? -ENOMEM : 1;
	if (ret == 1) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			/* not a file (or no extents to ask for): all of it */
			ret = range_zero(dev, buf, CHUNK, 0, size, at);
			off = size;
		}
	}
	/* a file: only its data extents hold anything but zeros */
	while (ret == 1 && off < size) {
		data = lseek(fd, (off_t)off, SEEK_DATA);
		if (data < 0) {
			ret = errno == ENXIO ? 1 : -errno;
			break;
		}
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0) {
			ret = -errno;
			break;
		}
		if ((uint64_t)hole > size)
			hole = (off_t)size;
		ret = range_zero(dev, buf, CHUNK, (uint64_t)data,
				 (uint64_t)hole, at);
		off = (uint64_t)hole;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

bool probe_has_foreign(const struct probe_result *r)
{
	for (int i = 0; i < r->nsigs; i++)
		if (!r->sigs[i].raidfs)
			return true;
	return r->truncated;
}

void probe_sig_describe(const struct probe_sig *s, char *buf, size_t len)
{
	int n = snprintf(buf, len, "holds %s", s->what);

	if (s->detail[0] && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " (%s)", s->detail);
	if (!s->raidfs && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " at byte %llu",
			 (unsigned long long)s->offset);
}

int probe_sigs_wipe(const char *path, char *err, size_t errlen)
{
	blkid_probe pr = NULL;
	int fd, ret = 0, rounds = 0;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	pr = blkid_new_probe();
	if (!pr || blkid_probe_set_device(pr, fd, 0, 0) < 0) {
		ret = -ENOMEM;
		goto fail;
	}
	blkid_probe_setup(pr);
	while (blkid_do_probe(pr) == 0 && ret == 0) {
		if (++rounds > WIPE_MAX_ROUNDS)
			ret = -ELOOP;
		else if (blkid_do_wipe(pr, 0) < 0)
			ret = errno ? -errno : -EIO;
	}
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (ret < 0)
		goto fail;
	blkid_free_probe(pr);
	close(fd);
	return 0;
fail:
	snprintf(err, errlen, "%s: erasing the old signatures failed: %s",
		 path, strerror(-ret));
	blkid_free_probe(pr);
	if (fd >= 0)
		close(fd);
	return ret;
}
