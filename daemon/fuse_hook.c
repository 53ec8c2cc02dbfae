/*
 * fuse_hook: the daemon's own reads and writes of /dev/fuse (libfuse's
 * custom I/O), for what libfuse 3.14 does not pass on: FUSE_HANDLE_KILLPRIV_V2
 * and FUSE_DIRECT_IO_ALLOW_MMAP.
 *
 * Without it the kernel asks the daemon, before every write(2) reaches the
 * page cache, whether the file holds security.capability (a GETXATTR round
 * trip: file_remove_privs; ENODATA is not cached).  The kernel stops asking
 * once an inode is S_NOSEC, which needs SB_NOSEC, which FUSE sets only when
 * the daemon answers INIT with FUSE_HANDLE_KILLPRIV_V2; libfuse 3.14 knows
 * neither the flag nor the per-request ones that come with it.  So:
 *
 *   read    one request, as libfuse would; FUSE_INIT's unique and flags are
 *           noted, and for the request this thread is about to handle,
 *           whether it carries FUSE_WRITE_KILL_SUIDGID (WRITE) or
 *           FUSE_OPEN_KILL_SUIDGID (OPEN; a CREATE makes a new file, which
 *           has nothing to lose): rfs_req_kills_privs();
 *   writev  the reply, as libfuse would; the INIT reply gets
 *           FUSE_HANDLE_KILLPRIV_V2 when the kernel offered it, and
 *           FUSE_DIRECT_IO_ALLOW_MMAP (a flags2 bit, Linux 6.6 and later)
 *           when the kernel offered that: only then do O_DIRECT opens get
 *           FOPEN_DIRECT_IO (fuse_io.c, open_reply), so that a shared
 *           mmap of such a file still works and the kernel writes back
 *           and drops its cached pages of the range before each direct
 *           read or write, as it does for O_DIRECT on a local filesystem.
 *           Once the INIT reply is written the mount's readahead is
 *           raised (rfs_readahead_raise): the reply itself set it to the
 *           smaller of the kernel's offer and ours.
 *
 * libfuse handles a request in the thread that read it (fuse_do_work:
 * receive, then process), so a thread-local note is the request's own.
 * FATTR_KILL_SUIDGID needs no hook: it is bit 11 of SETATTR's valid, which
 * libfuse passes to the handler as FUSE_SET_ATTR_KILL_SUID.  What the daemon
 * then owes the kernel (setuid and setgid cleared on write, truncate and
 * chown; DESIGN.md "Linux semantics through FUSE") is in fs_kill_privs and
 * fs_setattr_ctx.  Requests are read, never spliced: the hook must see
 * them, and splice would save no copy (DESIGN.md).  Replies may still be
 * spliced.
 *
 * State: d->killpriv_v2, d->direct_io and d->hook_init_unique are written
 * by the thread that reads and answers INIT; the kernel sends no other
 * request before that answer, so the other threads only ever read them.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_ops.h"

/* Linux 6.6's name (include/uapi/linux/fuse.h, 7.39); older headers have
 * neither it nor its first name, FUSE_DIRECT_IO_RELAX. */
#ifndef FUSE_DIRECT_IO_ALLOW_MMAP
#define FUSE_DIRECT_IO_ALLOW_MMAP (1ULL << 36)
#endif
#define ALLOW_MMAP_FLAGS2 ((uint32_t)(FUSE_DIRECT_IO_ALLOW_MMAP >> 32))

static __thread bool req_kills_privs;

bool rfs_req_kills_privs(void)
{
	return req_kills_privs;
}

/* Notes what the hook needs of the request in buf (n bytes, whole). */
static void hook_note(struct rfs_daemon *d, const void *buf, size_t n)
{
	const struct fuse_in_header *in = buf;
	const char *arg = (const char *)buf + sizeof(*in);
	size_t len = n - sizeof(*in);

	req_kills_privs = false;
	switch (in->opcode) {
	case FUSE_INIT:
		if (len >= offsetof(struct fuse_init_in, flags) + 4) {
			const struct fuse_init_in *ii = (const void *)arg;

			d->hook_init_unique = in->unique;
			d->killpriv_v2 = ii->major == 7 && ii->minor >= 33 &&
				(ii->flags & FUSE_HANDLE_KILLPRIV_V2);
			d->direct_io = ii->major == 7 && ii->minor >= 36 &&
				(ii->flags & FUSE_INIT_EXT) &&
				len >= offsetof(struct fuse_init_in, flags2) + 4 &&
				(ii->flags2 & ALLOW_MMAP_FLAGS2);
		}
		break;
	case FUSE_WRITE:
		if (len >= sizeof(struct fuse_write_in))
			req_kills_privs = ((const struct fuse_write_in *)
					   (const void *)arg)->write_flags &
				FUSE_WRITE_KILL_SUIDGID;
		break;
	case FUSE_OPEN:
		if (len >= sizeof(struct fuse_open_in))
			req_kills_privs = ((const struct fuse_open_in *)
					   (const void *)arg)->open_flags &
				FUSE_OPEN_KILL_SUIDGID;
		break;
	default:
		break;
	}
}

static ssize_t hook_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);

	if (n >= (ssize_t)sizeof(struct fuse_in_header))
		hook_note(userdata, buf, (size_t)n);
	return n;
}

/* Adds what the kernel offered of the flags above to libfuse's INIT reply
 * (its iov[1], NULL if it has none); what it could not add is off. */
static void hook_init_reply(struct rfs_daemon *d, const struct iovec *reply,
			    bool ok)
{
	struct fuse_init_out *io = reply ? reply->iov_base : NULL;

	if (!ok || !reply ||
	    reply->iov_len < offsetof(struct fuse_init_out, flags) + 4) {
		d->killpriv_v2 = d->direct_io = false;
		return;
	}
	if (d->killpriv_v2)
		io->flags |= FUSE_HANDLE_KILLPRIV_V2;
	if (d->direct_io &&
	    reply->iov_len >= offsetof(struct fuse_init_out, flags2) + 4) {
		io->flags |= FUSE_INIT_EXT;
		io->flags2 |= ALLOW_MMAP_FLAGS2;
	} else {
		d->direct_io = false;
	}
}

static ssize_t hook_writev(int fd, struct iovec *iov, int count,
			   void *userdata)
{
	struct rfs_daemon *d = userdata;
	const struct fuse_out_header *out = iov[0].iov_base;
	bool init = false;
	ssize_t n;

	if (count >= 1 && iov[0].iov_len >= sizeof(*out) &&
	    out->unique == d->hook_init_unique) {
		d->hook_init_unique = UINT64_MAX;
		init = out->error == 0;
		hook_init_reply(d, count >= 2 ? &iov[1] : NULL, init);
	}
	n = writev(fd, iov, count);
	/* the kernel applied the INIT reply in this writev, readahead too */
	if (init && n >= 0 && d->mountpoint)
		rfs_readahead_raise(d->mountpoint, RFS_READAHEAD >> 10);
	return n;
}

static ssize_t hook_splice_send(int fdin, off_t *offin, int fdout,
				off_t *offout, size_t len, unsigned int flags,
				void *userdata)
{
	return splice(fdin, offin, fdout, offout, len, flags);
}

int rfs_hook_install(struct fuse_session *se, struct rfs_daemon *d)
{
	static const struct fuse_custom_io io = {
		.read = hook_read,
		.writev = hook_writev,
		.splice_send = hook_splice_send,
	};

	int ret;

	d->hook_init_unique = UINT64_MAX;   /* INIT's is never that */
	ret = fuse_session_custom_io(se, &io, fuse_session_fd(se));
	d->hook = ret == 0;
	return ret;
}
