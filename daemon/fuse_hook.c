/*
 * fuse_hook: the daemon's own reads and writes of /dev/fuse (libfuse's
 * custom I/O), for what libfuse 3.14 does not pass on: FUSE_HANDLE_KILLPRIV_V2.
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
 *           FUSE_HANDLE_KILLPRIV_V2 when the kernel offered it.
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
 * State: d->killpriv_v2 and d->hook_init_unique are written by the thread
 * that reads and answers INIT; the kernel sends no other request before
 * that answer, so the other threads only ever read them.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_ops.h"

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

static ssize_t hook_writev(int fd, struct iovec *iov, int count,
			   void *userdata)
{
	struct rfs_daemon *d = userdata;
	const struct fuse_out_header *out = iov[0].iov_base;

	if (count >= 2 && iov[0].iov_len >= sizeof(*out) &&
	    out->unique == d->hook_init_unique) {
		d->hook_init_unique = UINT64_MAX;
		if (out->error == 0 && d->killpriv_v2 &&
		    iov[1].iov_len >= offsetof(struct fuse_init_out, flags) + 4)
			((struct fuse_init_out *)iov[1].iov_base)->flags |=
				FUSE_HANDLE_KILLPRIV_V2;
		else
			d->killpriv_v2 = false;
	}
	return writev(fd, iov, count);
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
