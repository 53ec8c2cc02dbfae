/*
 * session: the FUSE session of the daemon, in the order daemon_run needs it
 * so that a mount that fails writes nothing:
 *
 *   rfs_session_new     parse what libfuse is given (our options and the
 *                       user's), install the SIGTERM/SIGINT handlers: before
 *                       the array is opened, since a bad option must not
 *                       cost a write
 *   rfs_session_mount   mount(2) the FUSE file system, once the array is
 *                       open (assembly writes nothing) and before the
 *                       filesystem is (its open writes)
 *   rfs_session_serve   the multi-threaded loop (with the attribute
 *                       invalidation thread and the ENOSPC check) until
 *                       umount or SIGTERM/SIGINT; then unmount and destroy
 *   rfs_session_destroy what new made, when the mount never happened
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuse_ops.h"

#define RFS_MAX_THREADS 16

/*
 * The options libfuse gets: ours first, then what the user passed on (the
 * last of suid/nosuid, dev/nodev wins).  libfuse mounts nosuid,nodev
 * unless told otherwise, and mount(8) passes no "suid" or "dev" for
 * "defaults": a root mount says them itself, so that device nodes open and
 * setuid programs run as on ext4.  (fusermount3 makes any mount by
 * another user nosuid,nodev whatever it is told.)
 */
static int session_opts(const struct config_opts *o, const char *source,
			char **out)
{
	char fsname[4200];
	int ret;

	*out = NULL;
	snprintf(fsname, sizeof(fsname), "fsname=%s", source);
	ret = fuse_opt_add_opt(out, "default_permissions,subtype=raidfs");
	if (!ret && geteuid() == 0)
		ret = fuse_opt_add_opt(out, "suid,dev");
	if (!ret)
		ret = fuse_opt_add_opt_escaped(out, fsname);
	if (!ret && o->ro)
		ret = fuse_opt_add_opt(out, "ro");
	if (!ret && o->allow_other)
		ret = fuse_opt_add_opt(out, "allow_other");
	if (!ret && o->debug)
		ret = fuse_opt_add_opt(out, "debug");
	if (!ret && o->fuse_opts)
		ret = fuse_opt_add_opt(out, o->fuse_opts);
	return ret ? -ENOMEM : 0;
}

int rfs_session_new(const struct config_opts *o, const char *source,
		    struct rfs_daemon *d, struct fuse_session **out)
{
	char *argv[] = { "raidfs", "-o", NULL, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse_session *se;
	char *opts;
	int ret = session_opts(o, source, &opts);

	if (ret)
		return ret;
	argv[2] = opts;
	ret = -EINVAL;
	se = fuse_session_new(&args, &rfs_ops, sizeof(rfs_ops), d);
	if (se && fuse_set_signal_handlers(se)) {
		fuse_session_destroy(se);
		se = NULL;
	}
	if (se)
		ret = 0;
	*out = se;
	fuse_opt_free_args(&args);
	free(opts);
	return ret;
}

void rfs_session_destroy(struct fuse_session *se)
{
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
}

int rfs_session_mount(struct fuse_session *se, const char *mountpoint)
{
	if (fuse_session_exited(se)) {
		rfs_log(LOG_ERR, "stopped by a signal before mounting");
		return -EINTR;
	}
	if (fuse_session_mount(se, mountpoint)) {
		rfs_log(LOG_ERR, "cannot mount on %s", mountpoint);
		return -EINVAL;
	}
	return 0;
}

int rfs_session_serve(struct fuse_session *se, struct rfs_daemon *d,
		      const char *mountpoint)
{
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int ret = -ENOMEM;

	if (cfg) {
		if (rfs_hook_install(se, d) < 0)
			rfs_log(LOG_WARNING, "libfuse reads /dev/fuse itself: "
				"no killpriv_v2, every write(2) asks for "
				"security.capability");
		fuse_loop_cfg_set_max_threads(cfg, RFS_MAX_THREADS);
		fuse_loop_cfg_set_clone_fd(cfg, 1);
		if (rfs_inval_start(d, se) < 0)
			rfs_log(LOG_WARNING, "no attribute invalidation thread: "
				"st_blocks may lag until the attribute timeout");
		if (!d->ro && rfs_space_start(d, mountpoint) < 0)
			rfs_log(LOG_WARNING, "write(2) is not checked near full: "
				"ENOSPC shows at fsync and close");
		ret = fuse_session_loop_mt(se, cfg);
		rfs_inval_stop(d);
		rfs_space_stop(d);
		fuse_loop_cfg_destroy(cfg);
	}
	fuse_session_unmount(se);
	rfs_session_destroy(se);
	return ret < 0 ? ret : 0;
}
