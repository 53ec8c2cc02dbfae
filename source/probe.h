/*
 * probe: what a device already holds, so that no raidfs program overwrites
 * it silently - mkfs.raidfs before it creates an array on a member,
 * fsck.raidfs before it rebuilds onto a device.
 *
 * Two sources: raidcore's own superblock (rc_member_probe: libblkid does
 * not know raidfs) and libblkid for everything else - filesystems, md,
 * LVM, ZFS, LUKS, swap and partition tables.  Every signature on the
 * device is found, not only the first (as wipefs(8) does).
 *
 * Layer: the shared layer, above raidcore; no array is assembled.
 *
 * Usage pattern:
 *   probe_sigs_find(path, dev, &res, err, len)   reads only
 *   ... res.sigs[0 .. nsigs), res.raidfs_ret / res.raidfs ...
 *   probe_sigs_wipe(path, err, len)              with -f: libblkid's only
 *
 * Errors are -errno with err saying what went wrong, the device named.
 */
#ifndef RAIDFS_PROBE_H
#define RAIDFS_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raidcore.h"

#define PROBE_MAX_SIGS 8                  /* signatures reported per device */

/* Something found on a device that writing it would destroy. */
struct probe_sig {
	char what[160];                   /* "a filesystem: ext4", ... */
	char detail[200];                 /* "label 'x', UUID ...", or "" */
	uint64_t offset;                  /* bytes (libblkid's magic) */
	bool raidfs;                      /* raidcore's superblock, not libblkid's */
};

struct probe_result {
	struct probe_sig sigs[PROBE_MAX_SIGS];
	int nsigs;
	bool truncated;                   /* more than PROBE_MAX_SIGS */
	/* rc_member_probe's answer: 0 (raidfs filled in), -ENODATA (no raidfs
	 * superblock), -EBADMSG (every copy damaged), -EPROTONOSUPPORT (newer
	 * format), -EINVAL (smaller than a superblock) */
	int raidfs_ret;
	struct rc_probe raidfs;
};

/* Fills r with every signature on dev (opened on path).  Reads only. */
int probe_sigs_find(const char *path, struct rc_dev *dev,
		    struct probe_result *r, char *err, size_t errlen);

/* Does dev read as zeros in its first and last MiB and in 62 blocks
 * spread between (a new disk, a member that returns zeros)? */
bool probe_reads_blank(struct rc_dev *dev);

/* Does dev (opened on path) hold zeros and nothing else?  Reads it whole:
 * a regular file's data extents only (SEEK_DATA: a sparse image proves
 * itself at once), every byte of anything else.  1: blank; 0: not, *at
 * the first byte that is not zero; negative errno when it cannot be
 * read.  Before a device not named for it is overwritten (fsck's rebuild
 * targets), where probe_reads_blank's samples miss data between them. */
int probe_proves_blank(const char *path, struct rc_dev *dev, uint64_t *at);

/* Does r hold a signature libblkid found (not raidcore's)? */
bool probe_has_foreign(const struct probe_result *r);

/* "holds WHAT (DETAIL) at byte N" for messages. */
void probe_sig_describe(const struct probe_sig *s, char *buf, size_t len);

/*
 * Erases every signature libblkid finds on path (blkid_do_wipe: their
 * magic bytes only), then flushes.  raidfs's own superblock is left for
 * the caller to overwrite.
 */
int probe_sigs_wipe(const char *path, char *err, size_t errlen);

#endif
