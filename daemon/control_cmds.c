/*
 * control_cmds: what raidfsctl's commands do to a running array, each a
 * call into raidcore's maintenance API (raidcore.h: rc_member_fail_redundant,
 * rc_member_remove, rc_spare_add, rc_member_replace_online,
 * rc_array_clear_errors,
 * rc_array_set_rebuild_speed), with the refusal said in words.  Run in the
 * server thread (control.c), one at a time.
 *
 * MEMBER is a slot number (spares follow the slots: slot members + i), a
 * member's uuid, or its device path (compared after realpath).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "control.h"
#include "control_proto.h"
#include "probe.h"

static int say(char *msg, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int say(char *msg, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return ret;
}

/* a, a member's name, and b, a path raidfsctl sent (absolute: a relative
 * one would be looked up in the daemon's working directory, not the
 * caller's) */
static bool same_path(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!strcmp(a, b))
		return true;
	return b[0] == '/' && realpath(a, ra) && realpath(b, rb) &&
	       !strcmp(ra, rb);
}

/* The slot (or members + spare index) MEMBER names, or -ENOENT. */
static int member_find(struct rc_array *a, const char *member)
{
	struct rc_member_status st;
	struct rc_info info;
	uint8_t uuid[RC_UUID_SIZE];
	bool by_uuid = uuid_parse(member, uuid) == 0;
	int slot;

	rc_array_info(a, &info);
	if (ctl_parse_slot(member, &slot))
		return (uint32_t)slot < info.members + info.spares ? slot : -ENOENT;
	for (slot = 0; (uint32_t)slot < info.members + info.spares; slot++) {
		if (rc_array_member_status(a, slot, &st))
			continue;
		if (by_uuid ? !memcmp(st.uuid, uuid, RC_UUID_SIZE) :
		    st.name[0] && same_path(st.name, member))
			return slot;
	}
	return -ENOENT;
}

/* member_find, and the array's info; msg says why when there is none. */
static int member_resolve(struct rc_array *a, const char *member,
			  struct rc_info *info, char *msg, size_t len)
{
	int slot = member_find(a, member);

	rc_array_info(a, info);
	return slot < 0 ? say(msg, len, slot, "no such member: %s", member) :
	       slot;
}

/*
 * MEMBER is the device an online replacement copies onto: failing or
 * removing it cancels the replacement, as mdadm --fail of a replacement
 * device does (it could not be stopped: a tester's find).  Waits up to
 * 10 s for the copy to let it go.  1 when MEMBER is not that device.
 */
static int replace_target_cancel(struct rc_array *a, const char *member,
				 char *msg, size_t len)
{
	struct rc_info info;
	uint8_t uuid[RC_UUID_SIZE];
	uint32_t slot;
	int ret;

	rc_array_info(a, &info);
	if (!info.replacing ||
	    !(uuid_parse(member, uuid) == 0 ?
	      !memcmp(uuid, info.replace_uuid, RC_UUID_SIZE) :
	      same_path(info.replace_dev, member)))
		return 1;
	slot = info.replace_slot;
	ret = rc_replace_cancel(a);
	if (ret)
		return say(msg, len, ret, "the replacement of slot %u: %s",
			   slot, strerror(-ret));
	for (int i = 0; i < 1000 && info.replacing; i++) {
		usleep(10000);
		rc_array_info(a, &info);
	}
	return info.replacing ?
	       say(msg, len, 0, "replacement of slot %u by %s cancelled: it "
		   "stops before its next batch; the slot keeps its device",
		   slot, member) :
	       say(msg, len, 0, "replacement of slot %u by %s cancelled: the "
		   "slot keeps its device, %s is let go", slot, member, member);
}

static int cmd_fail(struct rc_array *a, const char *member, char *msg,
		    size_t len)
{
	struct rc_info info;
	int slot = replace_target_cancel(a, member, msg, len), ret;

	if (slot <= 0)
		return slot;
	slot = member_resolve(a, member, &info, msg, len);

	if (slot < 0)
		return slot;
	if ((uint32_t)slot >= info.members)
		return say(msg, len, -EINVAL, "%s is a spare: remove it instead",
			   member);
	ret = rc_member_fail_redundant(a, slot);
	if (ret == -EBUSY)
		return say(msg, len, ret, "slot %d holds the only copy of some "
			   "data: the array cannot run without it", slot);
	if (ret == -EINPROGRESS) {
		rc_array_info(a, &info);
		return say(msg, len, -EBUSY, "not failed: %s, and a scrub has "
			   "not verified it yet - without slot %d, what that "
			   "member lost could not be rebuilt. A repairing "
			   "scrub of the whole array verifies it (raidfsctl "
			   "scrub status; scrub start if none runs)",
			   info.verify_why, slot);
	}
	if (ret == -EALREADY)
		return say(msg, len, ret, "slot %d is not in use (faulty, "
			   "missing or removed already)", slot);
	if (ret == -EROFS)
		return say(msg, len, ret, "mounted read-only");
	return ret ? say(msg, len, ret, "slot %d: %s", slot, strerror(-ret)) :
	       say(msg, len, 0, "slot %d failed", slot);
}

static int cmd_remove(struct rc_array *a, const char *member, char *msg,
		      size_t len)
{
	struct rc_info info;
	int slot = replace_target_cancel(a, member, msg, len), ret;

	if (slot <= 0)
		return slot;
	slot = member_resolve(a, member, &info, msg, len);

	if (slot < 0)
		return slot;
	ret = rc_member_remove(a, slot);
	if (ret == -EBUSY && (uint32_t)slot < info.members)
		return say(msg, len, ret, "slot %d is in use: fail it first", slot);
	if (ret == -EBUSY)
		return say(msg, len, ret, "the array is degraded or rebuilding: "
			   "the spare is needed");
	if (ret == -EALREADY)
		return say(msg, len, ret, "slot %d has no device", slot);
	if (ret == -EROFS)
		return say(msg, len, ret, "mounted read-only");
	return ret ? say(msg, len, ret, "%s: %s", member, strerror(-ret)) :
	       say(msg, len, 0, "%s removed", member);
}

/* What is on the device already: another array's member, a filesystem,
 * a partition table are not overwritten; our own former member is
 * welcome back (1). */
static int add_check(struct rc_array *a, const char *path,
		     struct rc_dev *dev, char *msg, size_t len)
{
	struct probe_result r;
	struct rc_info info;
	char what[400], err[256] = "";
	int ret = probe_sigs_find(path, dev, &r, err, sizeof(err)), held;

	if (ret)
		return say(msg, len, ret, "%s", err);
	rc_array_info(a, &info);
	if (r.raidfs_ret == 0 &&
	    memcmp(r.raidfs.array_uuid, info.uuid, RC_UUID_SIZE))
		return say(msg, len, -EEXIST, "%s is a member of another raidfs "
			   "array: to reuse it, zero its first and last MiB "
			   "first (wipefs does not know raidfs)", path);
	held = r.raidfs_ret == 0 ?
	       rc_array_holds_member(a, r.raidfs.member_uuid) : -1;
	if (held >= RC_MAX_MEMBERS)
		return say(msg, len, -EEXIST, "%s holds the superblock of a "
			   "spare of this array in service: it is that device "
			   "under another name, or a copy of it; not "
			   "overwritten (to reuse a copy, zero its first and "
			   "last MiB first)", path);
	if (held >= 0)
		return say(msg, len, -EEXIST, "%s holds the superblock of slot "
			   "%d of this array, which is active: it is that "
			   "member under another name, or a copy of it; not "
			   "overwritten (to reuse a copy, zero its first and "
			   "last MiB first)", path, held);
	if (probe_has_foreign(&r)) {
		for (int i = 0; i < r.nsigs; i++)
			if (!r.sigs[i].raidfs) {
				probe_sig_describe(&r.sigs[i], what, sizeof(what));
				break;
			}
		return say(msg, len, -EEXIST, "%s %s: wipe it first (wipefs -a)",
			   path, what);
	}
	return r.raidfs_ret == 0;
}

/* DEVICE opened exclusively and checked (add_check), nothing written;
 * *former: it is our own former member. */
static int device_open(struct rc_array *a, const char *path,
		       struct rc_dev **dev, bool *former, char *msg, size_t len)
{
	int ret;

	if (path[0] != '/')
		return say(msg, len, -EINVAL, "%s: not an absolute path", path);
	ret = rc_dev_open_file(path, RC_DEV_EXCL, dev);
	if (ret)
		return say(msg, len, ret, "%s: %s", path, ret == -EBUSY ?
			   "in use (mounted, or a member of a running array)" :
			   strerror(-ret));
	ret = add_check(a, path, *dev, msg, len);
	if (ret < 0) {
		rc_dev_close(*dev);
		return ret;
	}
	*former = ret == 1;
	return 0;
}

/* What add and replace refuse alike, in words; 1: not one of those. */
static int device_refused(int ret, const struct rc_info *info,
			  const char *path, char *msg, size_t len)
{
	if (ret == -ENOSPC)
		return say(msg, len, ret, "%s is too small: a member needs %llu "
			   "bytes", path, (unsigned long long)
			   (info->device_blocks_min * RC_BLOCK_SIZE));
	if (ret == -EEXIST)
		return say(msg, len, ret, "%s is already a device of this array",
			   path);
	if (ret == -EROFS)
		return say(msg, len, ret, "mounted read-only");
	return 1;
}

static int spare_add(struct rc_array *a, const char *path, struct rc_dev *dev,
		     char *msg, size_t len);

/* Our own former member: it catches up on what changed when the
 * write-intent record covers its absence (md's --re-add), else it is a
 * spare rebuilt in full. */
static int add_former(struct rc_array *a, struct ctl_events *ev,
		      const char *path, struct rc_dev *dev, char *msg,
		      size_t len)
{
	int slot = rc_member_readd(a, dev);

	if (slot >= 0) {
		ctl_events_post(ev, CTL_EV_MEMBER_RETURNED, slot, path,
				"a former member of this array is back: it "
				"catches up on what changed while it was away");
		return say(msg, len, 0, "%s is slot %d's former member: "
			   "catching up on what changed", path, slot);
	}
	if (slot != -ENOENT) {
		rc_dev_close(dev);
		return say(msg, len, slot, "%s: %s", path, strerror(-slot));
	}
	ctl_events_post(ev, CTL_EV_MEMBER_RETURNED, -1, path,
			"a former member of this array is back: it is taken "
			"as a spare and rebuilt in full");
	return spare_add(a, path, dev, msg, len);
}

static int cmd_add(struct rc_array *a, struct ctl_events *ev, const char *path,
		   char *msg, size_t len)
{
	struct rc_dev *dev;
	bool former;
	int ret = device_open(a, path, &dev, &former, msg, len);

	if (ret)
		return ret;
	if (former)
		return add_former(a, ev, path, dev, msg, len);
	return spare_add(a, path, dev, msg, len);
}

/* Is there a slot with no device, that a new spare is rebuilt into?  One
 * being rebuilt onto another device already is not: "rebuilding onto
 * it" was said of a device that only became a spare (a tester's find). */
static bool slot_waits(struct rc_array *a, const struct rc_info *info)
{
	struct rc_member_status st;

	for (uint32_t s = 0; s < info->members; s++)
		if (!rc_array_member_status(a, (int)s, &st) &&
		    (st.state == RC_MEMBER_MISSING ||
		     st.state == RC_MEMBER_FAULTY))
			return true;
	return false;
}

static int spare_add(struct rc_array *a, const char *path, struct rc_dev *dev,
		     char *msg, size_t len)
{
	struct rc_info info;
	bool waits;
	int ret;

	rc_array_info(a, &info);
	/* before the add: the recovery thread may take it into the slot
	 * at once */
	waits = info.spares == 0 && slot_waits(a, &info);
	ret = rc_spare_add(a, dev);           /* owns dev now */
	if (ret && device_refused(ret, &info, path, msg, len) <= 0)
		return ret;
	if (ret)
		return say(msg, len, ret, "%s: %s", path, strerror(-ret));
	return say(msg, len, 0, waits ? "%s added: rebuilding onto it" :
		   "%s added as a spare", path);
}

/* MEMBER names an active slot (replace needs one serving). */
static int replace_slot(struct rc_array *a, const char *member,
			struct rc_info *info, char *msg, size_t len)
{
	struct rc_member_status st;
	int slot = member_resolve(a, member, info, msg, len);

	if (slot < 0)
		return slot;
	if ((uint32_t)slot >= info->members)
		return say(msg, len, -EINVAL, "%s is a spare: only a member can "
			   "be replaced", member);
	if (rc_array_member_status(a, slot, &st) == 0 &&
	    st.state != RC_MEMBER_ACTIVE)
		return say(msg, len, -ENXIO, "slot %d is %s: nothing serves "
			   "it to copy from; use 'raidfsctl add' to rebuild it",
			   slot, rc_member_state_name(st.state));
	return slot;
}

static int cmd_replace(struct rc_array *a, const struct ctl_request *r,
		       char *msg, size_t len)
{
	struct rc_dev *dev;
	bool former;            /* a former member: overwritten like any */
	struct rc_info info;
	int slot = replace_slot(a, r->arg, &info, msg, len), ret;

	if (slot < 0)
		return slot;
	if (info.replacing)
		return say(msg, len, -EBUSY, "slot %u is being replaced already",
			   info.replace_slot);
	ret = device_open(a, r->device, &dev, &former, msg, len);
	if (ret)
		return ret;
	ret = rc_member_replace_online(a, slot, dev);   /* owns dev now */
	if (ret && device_refused(ret, &info, r->device, msg, len) <= 0)
		return ret;
	if (ret == -ENXIO)
		return say(msg, len, ret, "slot %d is not active: use 'raidfsctl "
			   "add' to rebuild it", slot);
	if (ret == -EBUSY)
		return say(msg, len, ret, "a replacement runs already");
	if (ret)
		return say(msg, len, ret, "%s: %s", r->device, strerror(-ret));
	return say(msg, len, 0, "replacing slot %d by %s: the old device serves "
		   "until the copy is done", slot, r->device);
}

static int cmd_set(struct rc_array *a, const struct ctl_request *r, char *msg,
		   size_t len)
{
	uint64_t min, max;
	int ret;

	rc_array_get_rebuild_speed(a, &min, &max);
	if (r->has_speed_min)
		min = r->speed_min_kib;
	if (r->has_speed_max)
		max = r->speed_max_kib;
	if (min && max && min > max)
		return say(msg, len, -EINVAL, "rebuild-speed-min (%llu KiB/s) is "
			   "above rebuild-speed-max (%llu KiB/s)",
			   (unsigned long long)min, (unsigned long long)max);
	ret = rc_array_set_rebuild_speed(a, min, max);
	if (ret)
		return say(msg, len, ret, "rebuild speed set, but not recorded on "
			   "the members (%s): a remount forgets it", strerror(-ret));
	return say(msg, len, 0, "rebuild speed: min %llu KiB/s, max %llu KiB/s "
		   "(0: no limit)", (unsigned long long)min,
		   (unsigned long long)max);
}

/*
 * A suspended array (raidcore fail.c) takes no change of its members:
 * said so, naming the member it waits for, before any device named in
 * the request is opened.  Each command failed with EIO and named the new
 * device, which was not at fault (a tester's find, U3 D13).
 */
static int suspended_refusal(struct rc_array *a, char *msg, size_t len)
{
	struct rc_member_status st;
	struct rc_info info;

	if (rc_array_info(a, &info) || !info.suspended)
		return 0;
	if (rc_array_member_status(a, (int)info.suspend_slot, &st))
		st.name[0] = 0;
	return say(msg, len, -EIO, "the array is suspended (slot %u, %s: %s): "
		   "no member can be changed; unmount, put the device back "
		   "and mount again", info.suspend_slot,
		   st.name[0] ? st.name : "no device", info.suspend_why);
}

int ctl_cmd_run(struct rc_array *a, struct ctl_events *ev,
		const struct ctl_request *r, char *msg, size_t msglen)
{
	int ret;

	if (r->cmd == CTL_FAIL || r->cmd == CTL_REMOVE || r->cmd == CTL_ADD ||
	    r->cmd == CTL_REPLACE || r->cmd == CTL_CLEAR) {
		ret = suspended_refusal(a, msg, msglen);
		if (ret)
			return ret;
	}
	switch (r->cmd) {
	case CTL_FAIL:
		return cmd_fail(a, r->arg, msg, msglen);
	case CTL_REMOVE:
		return cmd_remove(a, r->arg, msg, msglen);
	case CTL_ADD:
		return cmd_add(a, ev, r->arg, msg, msglen);
	case CTL_REPLACE:
		return cmd_replace(a, r, msg, msglen);
	case CTL_CLEAR:
		ret = rc_array_clear_errors(a, true);
		return ret ? say(msg, msglen, ret, "%s", ret == -EROFS ?
				 "mounted read-only" : strerror(-ret)) :
		       say(msg, msglen, 0, "error counters cleared");
	case CTL_SET:
		return cmd_set(a, r, msg, msglen);
	case CTL_TEST_ALERT:
		ctl_events_post(ev, CTL_EV_TEST, -1, NULL,
				"raidfsctl test-alert");
		return say(msg, msglen, 0, "TestMessage sent");
	default:
		return say(msg, msglen, -EINVAL, "not a command");
	}
}
