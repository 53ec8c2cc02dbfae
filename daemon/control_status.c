/*
 * control_status: the array at a glance, as the JSON object raidfsctl
 * prints (`status --json` gives it as is; docs/raidfsctl-status.schema.json
 * is its schema, version CTL_STATUS_VERSION), with the scrub's state and
 * the last scrub's result (control_scrub.c).  Read from raidcore's
 * status calls (a few locks held for microseconds, no I/O) and the
 * filesystem's statfs.
 */
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "control.h"
#include "fs.h"

static const char *layout_name(enum rc_layout l)
{
	switch (l) {
	case RC_LAYOUT_PARITY_LAST: return "parity-last";
	case RC_LAYOUT_LEFT_SYMMETRIC: return "left-symmetric";
	case RC_LAYOUT_NEAR2: return "near2";
	default: return "none";
	}
}

/* suspended, failed, rebuilding, degraded, replacing, scrubbing or
 * clean. */
static const char *array_state(const struct rc_info *info, bool rebuilding,
			       bool scrubbing)
{
	if (info->suspended)
		return "suspended";
	if (info->failed)
		return "failed";
	if (rebuilding)
		return "rebuilding";
	if (info->degraded)
		return "degraded";
	if (info->replacing)
		return "replacing";
	return scrubbing ? "scrubbing" : "clean";
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

/* Members found damaged, not yet verified by a scrub (or NULL). */
static json_object *unverified_json(const struct rc_info *info)
{
	json_object *o, *slots;

	if (!info->verify_slots)
		return NULL;
	o = json_object_new_object();
	slots = json_object_new_array();
	for (int s = 0; s < RC_MAX_MEMBERS; s++)
		if (info->verify_slots >> s & 1)
			json_object_array_add(slots, json_object_new_int(s));
	json_object_object_add(o, "slots", slots);
	json_object_object_add(o, "why", json_object_new_string(info->verify_why));
	return o;
}

static json_object *device_json(int slot, bool spare,
				const struct rc_member_status *st)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();
	char u[37];

	uuid_unparse_lower(st->uuid, u);
	json_object_object_add(o, "slot", spare ? NULL : json_object_new_int(slot));
	json_object_object_add(o, "role", json_object_new_string(spare ? "spare" :
							       "member"));
	json_object_object_add(o, "state", json_object_new_string(
		rc_member_state_name(st->state)));
	json_object_object_add(o, "device", json_object_new_string(st->name));
	json_object_object_add(o, "uuid", json_object_new_string(u));
	add_u64(e, "read", st->read_errors);
	add_u64(e, "write", st->write_errors);
	add_u64(e, "cksum", st->csum_errors);
	json_object_object_add(o, "errors", e);
	add_u64(o, "repaired", st->repaired);
	if (!spare)
		json_object_object_add(o, "kept_failing",
				       json_object_new_boolean(st->kept_failing));
	return o;
}

/* A returning member's catch-up: what it resynced so far (raidcore wi.c). */
static json_object *catchup_json(const struct rc_member_status *st)
{
	json_object *o = json_object_new_object();

	add_u64(o, "regions_resynced", st->resync_regions);
	add_u64(o, "stripes_resynced", st->resync_stripes);
	return o;
}

/* How far a copy onto a member has come (done of the array's stripes),
 * and, when its start was seen (timed: at t0, CLOCK_MONOTONIC, from
 * stripe from), its rate in member bytes a second and the time left. */
static void progress_add(json_object *o, const struct rc_info *info,
			 uint64_t done, bool timed, uint64_t t0, uint64_t from)
{
	uint64_t bytes_per_stripe = (uint64_t)info->chunk_blocks * RC_BLOCK_SIZE;
	uint64_t now, rate = 0;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	add_u64(o, "done_stripes", done);
	add_u64(o, "total_stripes", info->stripes);
	json_object_object_add(o, "percent", json_object_new_double(
		info->stripes ? 100.0 * (double)done / (double)info->stripes :
		100.0));
	if (timed && now > t0 && done > from)
		rate = (uint64_t)((double)(done - from) *
				  (double)bytes_per_stripe * 1e9 /
				  (double)(now - t0));
	json_object_object_add(o, "rate_bytes_per_s", rate ?
			       json_object_new_uint64(rate) : NULL);
	json_object_object_add(o, "seconds_left", rate ? json_object_new_uint64(
		(info->stripes - done) * bytes_per_stripe / rate) : NULL);
}

/* The rebuild of slot: how far, how fast, how long still. */
static json_object *rebuild_json(const struct rc_info *info, int slot,
				 const struct rc_member_status *st,
				 struct ctl_events *ev)
{
	json_object *o = json_object_new_object();
	uint64_t t0, from;
	bool timed = ctl_events_rebuild_start(ev, slot, &t0, &from);

	json_object_object_add(o, "slot", json_object_new_int(slot));
	json_object_object_add(o, "device", json_object_new_string(st->name));
	progress_add(o, info, st->rebuild_done, timed, t0, from);
	json_object_object_add(o, "catch_up", st->catchup ? catchup_json(st) :
			       NULL);
	return o;
}

/* An online replacement's target, as a device. */
static json_object *replacement_json(const struct rc_info *info)
{
	struct rc_member_status st = { .state = RC_MEMBER_SPARE };
	json_object *o;

	snprintf(st.name, sizeof(st.name), "%s", info->replace_dev);
	memcpy(st.uuid, info->replace_uuid, RC_UUID_SIZE);
	o = device_json((int)info->replace_slot, false, &st);
	json_object_object_add(o, "role", json_object_new_string("replacement"));
	json_object_object_add(o, "state", json_object_new_string("replacing"));
	return o;
}

/* The replacement's progress (done_stripes of total_stripes copied). */
static json_object *replace_json(const struct rc_info *info,
				 struct ctl_events *ev)
{
	uint64_t t0, from;
	json_object *o;
	bool timed;

	if (!info->replacing)
		return NULL;
	timed = ctl_events_replace_start(ev, &t0, &from);
	o = json_object_new_object();
	json_object_object_add(o, "slot", json_object_new_int(
		(int)info->replace_slot));
	json_object_object_add(o, "device", json_object_new_string(
		info->replace_dev));
	progress_add(o, info, info->replace_done, timed, t0, from);
	return o;
}

/* Every slot and spare into devices; the rebuild, if one runs. */
static json_object *devices_json(struct rc_array *a, const struct rc_info *info,
				 struct ctl_events *ev, json_object **rebuild)
{
	json_object *list = json_object_new_array();
	struct rc_member_status st;
	uint32_t n = info->members + info->spares;

	*rebuild = NULL;
	for (uint32_t s = 0; s < n; s++) {
		if (rc_array_member_status(a, (int)s, &st))
			continue;
		json_object_array_add(list, device_json((int)s,
							s >= info->members, &st));
		if (st.state == RC_MEMBER_REBUILDING && !*rebuild)
			*rebuild = rebuild_json(info, (int)s, &st, ev);
	}
	if (info->replacing)
		json_object_array_add(list, replacement_json(info));
	return list;
}

static json_object *space_json(const struct rc_info *info, struct fs *fs)
{
	json_object *o = json_object_new_object();
	struct statvfs sv;

	add_u64(o, "array_bytes", info->blocks * RC_BLOCK_SIZE);
	if (fs && fs_statfs(fs, &sv) == 0) {
		add_u64(o, "size_bytes", (uint64_t)sv.f_blocks * sv.f_frsize);
		add_u64(o, "used_bytes", (uint64_t)(sv.f_blocks - sv.f_bfree) *
			sv.f_frsize);
		add_u64(o, "available_bytes", (uint64_t)sv.f_bavail * sv.f_frsize);
		add_u64(o, "inodes", sv.f_files);
		add_u64(o, "inodes_free", sv.f_ffree);
	}
	return o;
}

/* Why nothing is read or written any more (raidcore fail.c); NULL when
 * the array is not suspended. */
static json_object *suspended_json(struct rc_array *a,
				   const struct rc_info *info)
{
	struct rc_member_status st;
	json_object *o;

	if (!info->suspended)
		return NULL;
	o = json_object_new_object();
	rc_array_member_status(a, info->suspend_slot, &st);
	json_object_object_add(o, "slot", json_object_new_int(info->suspend_slot));
	json_object_object_add(o, "device", json_object_new_string(st.name));
	json_object_object_add(o, "why", json_object_new_string(info->suspend_why));
	return o;
}

/* Transactions the journal replay at assembly found committed but could
 * not replay (raidcore replay.c), or NULL. */
static json_object *journal_lost_json(const struct rc_info *info)
{
	json_object *o;

	if (!info->journal_lost)
		return NULL;
	o = json_object_new_object();
	add_u64(o, "from_transaction", info->journal_lost);
	return o;
}

json_object *ctl_status_json(struct rc_array *a, struct fs *fs,
			     const char *mountpoint, struct ctl_events *ev,
			     struct ctl_scrub *sc, struct ctl_damage *dmg)
{
	json_object *o = json_object_new_object(), *rebuild, *devs, *speed;
	struct rc_info info;
	uint64_t min, max;
	char u[37];

	if (!o || rc_array_info(a, &info)) {
		json_object_put(o);
		return NULL;
	}
	uuid_unparse_lower(info.uuid, u);
	json_object_object_add(o, "version", json_object_new_int(CTL_STATUS_VERSION));
	json_object_object_add(o, "uuid", json_object_new_string(u));
	json_object_object_add(o, "label", json_object_new_string(info.label));
	json_object_object_add(o, "mountpoint", json_object_new_string(mountpoint));
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	devs = devices_json(a, &info, ev, &rebuild);
	json_object_object_add(o, "state", json_object_new_string(
		array_state(&info, rebuild != NULL, sc && ctl_scrub_running(sc))));
	json_object_object_add(o, "level", json_object_new_string(
		rc_level_name(info.level)));
	json_object_object_add(o, "layout", json_object_new_string(
		layout_name(info.layout)));
	add_u64(o, "chunk_bytes", (uint64_t)info.chunk_blocks * RC_BLOCK_SIZE);
	json_object_object_add(o, "slots", json_object_new_int((int)info.members));
	json_object_object_add(o, "spares", json_object_new_int((int)info.spares));
	json_object_object_add(o, "redundancy",
			       json_object_new_int((int)info.redundancy));
	json_object_object_add(o, "read_only", json_object_new_boolean(info.rdonly));
	json_object_object_add(o, "errors_seen", json_object_new_boolean(info.errors));
	add_u64(o, "unrecoverable_reads", info.unrecoverable);
	add_u64(o, "events_counter", info.events);
	json_object_object_add(o, "space", space_json(&info, fs));
	json_object_object_add(o, "rebuild", rebuild);
	json_object_object_add(o, "replace", replace_json(&info, ev));
	json_object_object_add(o, "scrub", sc ? ctl_scrub_json(sc) : NULL);
	json_object_object_add(o, "damaged", dmg ? ctl_damage_json(dmg) : NULL);
	json_object_object_add(o, "suspended", suspended_json(a, &info));
	json_object_object_add(o, "unverified", unverified_json(&info));
	json_object_object_add(o, "journal_lost", journal_lost_json(&info));
	rc_array_get_rebuild_speed(a, &min, &max);
	speed = json_object_new_object();
	add_u64(speed, "min_kib_per_s", min);
	add_u64(speed, "max_kib_per_s", max);
	json_object_object_add(o, "rebuild_speed", speed);
	json_object_object_add(o, "devices", devs);
	return o;
}
