/*
 * control_proto: the request/reply protocol between raidfsctl (ctl/) and
 * a mounted array's daemon (daemon/control.c), shared by both sides;
 * docs/DESIGN.md "The control socket" describes it.
 *
 * Transport: one SOCK_SEQPACKET Unix socket per mounted array,
 * CTL_RUN_DIR/UUID.sock (root only: the directory is 0700, the socket
 * 0600, and the daemon checks the peer's uid).  Every message is one JSON
 * object (json-c) in one packet of at most CTL_MSG_MAX bytes:
 *
 *   request  {"proto": 1, "cmd": "status", ...arguments}
 *   reply    {"proto": 1, "errno": 0, "error": "", "result": {...}}
 *   event    {"proto": 1, "event": {...}}     (after "events" with follow)
 *
 * A connection carries any number of requests, each answered by exactly
 * one reply, in order.  "proto" is the protocol's major version: a peer
 * that speaks another one is answered (or refused) with EPROTO.  New
 * optional fields may appear in any message; readers ignore what they do
 * not know.
 *
 * Pure encoding and decoding: no sockets here, so it is unit-tested whole
 * (tests/unit/test_control_proto.c).
 */
#ifndef RAIDFS_CONTROL_PROTO_H
#define RAIDFS_CONTROL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json.h>

#define CTL_PROTO_VERSION 1
#define CTL_RUN_DIR "/run/raidfs"
#define CTL_MSG_MAX (256 * 1024)
#define CTL_ARG_MAX 4096

enum ctl_cmd {
	CTL_IDENTIFY = 0,     /* -> uuid, mountpoint, pid */
	CTL_STATUS,           /* -> the status object (docs/raidfsctl-status...) */
	CTL_FAIL,             /* member */
	CTL_REMOVE,           /* member */
	CTL_ADD,              /* device (absolute path) */
	CTL_CLEAR,            /* error counters and the ERRORS flag */
	CTL_EVENTS,           /* the history; follow: then every new event */
	CTL_TEST_ALERT,       /* a TestMessage event */
	CTL_SET,              /* rebuild-speed-min / -max (KiB/s) */
	CTL_SCRUB,            /* action: start, stop or status */
	CTL_REPLACE,          /* member, device (absolute path) */
	CTL_NCMDS
};

struct ctl_request {
	enum ctl_cmd cmd;
	char arg[CTL_ARG_MAX];      /* member (fail, remove, replace), device
				       (add) or action (scrub) */
	char device[CTL_ARG_MAX];   /* replace: the new device */
	bool follow;                /* events */
	bool has_speed_min, has_speed_max;
	uint64_t speed_min_kib, speed_max_kib;
};

const char *ctl_cmd_name(enum ctl_cmd cmd);

/* The request as a packet (malloc'd, NUL-terminated), or NULL. */
char *ctl_request_encode(const struct ctl_request *r);
/*
 * Parses a packet of len bytes.  0; -EPROTO for another protocol version;
 * -EINVAL (with err set) for anything malformed: not JSON, no or unknown
 * cmd, an argument missing or of the wrong type or too long.
 */
int ctl_request_decode(const char *buf, size_t len, struct ctl_request *r,
		       char *err, size_t errlen);

/* A reply: err a negative errno (0: success), msg why (may be NULL),
 * result (owned by the reply; may be NULL).  As a packet, malloc'd. */
char *ctl_reply_encode(int err, const char *msg, json_object *result);
/*
 * Parses a reply or an event packet.  A reply: 0 with *err (negative
 * errno or 0), msg and *result (the caller's, put with json_object_put;
 * NULL when absent).  An event: 1 with *result the event object.
 * -EPROTO for another version or anything malformed.
 */
int ctl_reply_decode(const char *buf, size_t len, int *err, char *msg,
		     size_t msglen, json_object **result);
/* An event packet for the event object ev (a reference is taken). */
char *ctl_event_encode(json_object *ev);

/* CTL_RUN_DIR/UUID.sock; -ENAMETOOLONG if it does not fit. */
int ctl_socket_path(const uint8_t uuid[16], char *buf, size_t len);

/* "0".."47": a slot number (*slot set, true); anything else false. */
bool ctl_parse_slot(const char *s, int *slot);
/* "rebuild-speed-min=N" / "rebuild-speed-max=N" (KiB/s, with K/M/G
 * suffixes of KiB) into r; -EINVAL for anything else. */
int ctl_parse_setting(const char *s, struct ctl_request *r);

#endif
