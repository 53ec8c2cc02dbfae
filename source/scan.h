/*
 * scan: an array's members found by its uuid, and late members waited for
 * (mdadm --assemble --scan, and md's last-resort timer).
 *
 * A SOURCE may name an array without naming its members: "UUID=<uuid>",
 * or a configuration file with `uuid` and no `members`.  Then every
 * candidate device is probed with raidcore's own superblock reader
 * (rc_member_probe; libblkid does not know raidfs and is taught nothing):
 * the regular files and block devices in the configuration's `scan`
 * directories, or, without them, every block device libudev lists.
 * Devices of other arrays are left alone; two devices claiming the same
 * member of ours (a copy, a loop device over an image also scanned) are
 * an error, since assembly could pick the wrong one.
 *
 * Probing is read-only and takes no lock (the device is opened O_RDONLY
 * through a probe-only rc_dev, not rc_dev_open_file): a scan never gets
 * in the way of a device another program holds.  Only the members found
 * are opened later, by source_array_open, with its locks.
 *
 * Layer: the shared layer, above raidcore; nothing is assembled or
 * written here.
 *
 * Usage pattern:
 *   config_source_parse / source_load      (src, o)
 *   source_members_find(&src, &o, err, len)  fills src's members and spares
 *   source_array_open(&src, &o, ...)
 */
#ifndef RAIDFS_SCAN_H
#define RAIDFS_SCAN_H

#include <stddef.h>

#include "config.h"

/*
 * When src names the array by uuid only, fills src->members (by slot) and
 * src->spares with the devices found holding it; -ENODEV (err set) when
 * none does, -EINVAL (err set, nothing filled) on an ambiguity.
 * With o->degraded_wait_s, first waits up to that many seconds, polling
 * four times a second, until every slot of the array is held by a device
 * present (scanned, or among the listed members), then returns what is
 * there either way: raidcore decides whether that can run.  Otherwise a
 * no-op for a src that lists its members.  Reads only.
 */
int source_members_find(struct config_source *src,
			const struct config_opts *o, char *err, size_t errlen);

#endif
