/*
 * client: raidfsctl's side of the control socket - which socket serves a
 * mount point or uuid, one request and its reply.
 *
 * A uuid names its socket directly (CTL_RUN_DIR/UUID.sock).  A mount
 * point is looked up in the mount table (libmount, /proc/self/mountinfo):
 * the fuse.raidfs mount the path is on, or "not mounted"; then every
 * socket in CTL_RUN_DIR is asked who it is ("identify") until one serves
 * that mount point.  So a daemon is found however its array was named at
 * mount time, and a path in a raidfs mount that is not its root works as
 * mount(8) would take it.
 */
#include <dirent.h>
#include <errno.h>
#include <libmount.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "ctl.h"

int ctl_exit_for(int err)
{
	if (err == -EACCES || err == -EPERM)
		return CTL_EXIT_PERM;
	if (err == -EPROTO)
		return CTL_EXIT_COMM;
	return err ? CTL_EXIT_REFUSED : CTL_EXIT_OK;
}

const char *ctl_json_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ?
	       json_object_get_string(v) : "";
}

uint64_t ctl_json_u64(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ?
	       json_object_get_uint64(v) : 0;
}

bool ctl_json_has(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v;
}

/*
 * A daemon that is stopped or stuck never answers, and one whose listen
 * queue is full never accepts: every wait on its socket has a limit
 * (ms, 0: none), so raidfsctl says so and exits 5 instead of hanging -
 * one stopped daemon of any array blocked every command naming a mount
 * point, which asks every socket whom it serves (a tester's find).
 */
static void sock_limit(int fd, unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int ctl_connect_path(const char *path, struct ctl_conn *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	sock_limit(c->fd, CTL_ANSWER_MS);       /* connect waits by SNDTIMEO */
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int ret = errno == EAGAIN || errno == EINPROGRESS ?
			  -ETIMEDOUT : -errno;

		close(c->fd);
		c->fd = -1;
		return ret;
	}
	return 0;
}

void ctl_close(struct ctl_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int recv_packet(struct ctl_conn *c, char **buf, size_t *len)
{
	ssize_t n;

	*buf = malloc(CTL_MSG_MAX + 1);
	if (!*buf)
		return -ENOMEM;
	n = recv(c->fd, *buf, CTL_MSG_MAX + 1, MSG_TRUNC);
	if (n <= 0 || n > CTL_MSG_MAX) {
		free(*buf);
		*buf = NULL;
		return n < 0 ? (errno == EAGAIN ? -ETIMEDOUT : -errno) :
		       n == 0 ? -ECONNRESET : -EMSGSIZE;
	}
	*len = (size_t)n;
	return 0;
}

/* Sends r; 0 with the reply's errno in *err, or -errno of the exchange
 * (-ETIMEDOUT: no answer within ms).  Later receives (events) wait as
 * long as it takes. */
static int exchange(struct ctl_conn *c, const struct ctl_request *r, int *err,
		    json_object **result, char *msg, size_t msglen,
		    unsigned ms)
{
	char *pkt = ctl_request_encode(r), *buf;
	size_t len;
	int ret;

	if (!pkt)
		return -ENOMEM;
	sock_limit(c->fd, ms);
	ret = send(c->fd, pkt, strlen(pkt), MSG_NOSIGNAL) < 0 ?
	      (errno == EAGAIN ? -ETIMEDOUT : -errno) : 0;
	free(pkt);
	if (!ret)
		ret = recv_packet(c, &buf, &len);
	sock_limit(c->fd, 0);
	if (ret)
		return ret;
	ret = ctl_reply_decode(buf, len, err, msg, msglen, result);
	free(buf);
	if (ret == 1) {             /* an event where a reply belongs */
		json_object_put(*result);
		*result = NULL;
		ret = -EPROTO;
	}
	return ret;
}

int ctl_call(struct ctl_conn *c, const struct ctl_request *r,
	     json_object **result, char *msg, size_t msglen)
{
	json_object *res = NULL;
	int err = 0, ret = exchange(c, r, &err, &res, msg, msglen,
				    CTL_REPLY_MS);

	if (ret == -ETIMEDOUT) {
		fprintf(stderr, CTL_PROG ": %s: the daemon did not answer "
			"within %u s (stopped, or stuck in I/O); the request "
			"may still be carried out when it goes on\n", c->where,
			CTL_REPLY_MS / 1000);
		return CTL_EXIT_COMM;
	}
	if (ret) {
		fprintf(stderr, CTL_PROG ": %s: %s\n", c->where, ret == -EPROTO ?
			"the daemon speaks another protocol version" :
			strerror(-ret));
		return CTL_EXIT_COMM;
	}
	if (err) {
		fprintf(stderr, CTL_PROG ": %s: %s\n", c->where, msg);
		json_object_put(res);
		return ctl_exit_for(err);
	}
	if (result)
		*result = res;
	else
		json_object_put(res);
	return CTL_EXIT_OK;
}

int ctl_next_event(struct ctl_conn *c, json_object **ev)
{
	char *buf;
	size_t len;
	int err, ret = recv_packet(c, &buf, &len);

	if (ret)
		return ret;
	ret = ctl_reply_decode(buf, len, &err, NULL, 0, ev);
	free(buf);
	if (ret == 1)
		return 0;
	json_object_put(*ev);
	*ev = NULL;
	return -EPROTO;
}

char **ctl_sockets_list(void)
{
	DIR *d = opendir(CTL_RUN_DIR);
	struct dirent *e;
	char **list = NULL, **grown;
	size_t n = 0;
	size_t l;

	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".sock"))
			continue;
		grown = realloc(list, (n + 2) * sizeof(*list));
		if (!grown)
			break;
		list = grown;
		if (asprintf(&list[n], CTL_RUN_DIR "/%s", e->d_name) < 0)
			break;
		list[++n] = NULL;
	}
	closedir(d);
	return list;
}

/*
 * path made absolute and canonical without looking into it: a dead FUSE
 * mount point (its daemon killed) fails every lookup with ENOTCONN, so
 * its parent is resolved and its own name added.
 */
static int path_real(const char *path, char *real)
{
	char dir[PATH_MAX], *slash;
	const char *base;

	if (realpath(path, real))
		return 0;
	if (errno != ENOTCONN || strlen(path) >= sizeof(dir))
		return -errno;
	strcpy(dir, path);
	while ((slash = strrchr(dir, '/')) && slash != dir && !slash[1])
		*slash = 0;     /* trailing slashes */
	slash = strrchr(dir, '/');
	base = slash ? slash + 1 : dir;
	if (!realpath(slash == dir ? "/" : slash ? (*slash = 0, dir) : ".",
		      real) || strlen(real) + strlen(base) + 2 > PATH_MAX)
		return -ENOTCONN;
	if (strcmp(real, "/"))
		strcat(real, "/");
	strcat(real, slash ? path + (base - dir) : base);
	return 0;
}

/* statfs, not stat: the kernel answers a stat of the mount point from the
 * attributes it cached while the daemon lived (a daemon killed after it
 * served the mount looked alive and merely socketless); FUSE sends every
 * statfs to the daemon, and a dead connection fails it with ENOTCONN. */
/*
 * A killed daemon's mount fails at once with ENOTCONN; a stopped or stuck
 * one's holds the caller until it answers, so the question is asked by a
 * child, given CTL_ANSWER_MS (a FUSE request's wait is killable): no
 * answer is "not known dead", and the control socket then says why.
 */
bool ctl_mount_dead(const char *mp)
{
	struct statfs sf;
	struct stat st;
	pid_t pid = fork();
	int status = 0;
	unsigned waited = 0;

	if (pid == 0)
		_exit((statfs(mp, &sf) && errno == ENOTCONN) ||
		      (stat(mp, &st) && errno == ENOTCONN));
	if (pid < 0)
		return false;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited >= CTL_ANSWER_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return false;
		}
		usleep(10000);
		waited += 10;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

char **ctl_mounts_list(void)
{
	struct libmnt_table *tb = mnt_new_table();
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	char **list = NULL, **grown;
	size_t n = 0;

	if (tb && it && !mnt_table_parse_mtab(tb, NULL))
		while (!mnt_table_next_fs(tb, it, &fs)) {
			if (strcmp(mnt_fs_get_fstype(fs) ?
				   mnt_fs_get_fstype(fs) : "", "fuse.raidfs"))
				continue;
			grown = realloc(list, (n + 2) * sizeof(*list));
			if (!grown)
				break;
			list = grown;
			list[n] = strdup(mnt_fs_get_target(fs));
			if (!list[n])
				break;
			list[++n] = NULL;
		}
	mnt_free_iter(it);
	mnt_unref_table(tb);
	return list;
}

/* The mount point of the fuse.raidfs mount path is on, into mp. */
static int mount_of(const char *path, char *mp, size_t len)
{
	struct libmnt_table *tb;
	struct libmnt_fs *fs = NULL;
	char real[PATH_MAX];
	int ret = path_real(path, real);

	if (ret)
		return ret;     /* before the table: nothing to free */
	ret = -ENOENT;
	tb = mnt_new_table();
	if (!tb || mnt_table_parse_mtab(tb, NULL)) {
		mnt_unref_table(tb);
		return -EIO;
	}
	/* libmount looks into the path: not into a dead one, whose
	 * mount point is found by its name, the path cut back */
	if (ctl_mount_dead(real)) {
		char *slash;

		while (!(fs = mnt_table_find_target(tb, real,
						    MNT_ITER_BACKWARD)) &&
		       (slash = strrchr(real, '/')) && slash != real)
			*slash = 0;
	} else {
		fs = mnt_table_find_mountpoint(tb, real, MNT_ITER_BACKWARD);
	}
	if (fs && !strcmp(mnt_fs_get_fstype(fs) ? mnt_fs_get_fstype(fs) : "",
			  "fuse.raidfs")) {
		snprintf(mp, len, "%s", mnt_fs_get_target(fs));
		ret = 0;
	}
	mnt_unref_table(tb);
	return ret;
}

/* Asks the socket at path whom it serves; true when mp.  *mute: it did
 * not answer in time. */
static bool socket_serves(const char *path, const char *mp, struct ctl_conn *c,
			  bool *mute)
{
	struct ctl_request r = { .cmd = CTL_IDENTIFY };
	json_object *res = NULL, *v;
	char msg[256];
	int err, ret;
	bool yes = false;

	ret = ctl_connect_path(path, c);
	if (ret) {
		*mute |= ret == -ETIMEDOUT;
		return false;
	}
	ret = exchange(c, &r, &err, &res, msg, sizeof(msg), CTL_ANSWER_MS);
	*mute |= ret == -ETIMEDOUT;
	if (!ret && !err &&
	    json_object_object_get_ex(res, "mountpoint", &v) &&
	    !strcmp(json_object_get_string(v), mp))
		yes = true;
	json_object_put(res);
	if (!yes)
		ctl_close(c);
	return yes;
}

static int connect_uuid(const char *target, const uint8_t *uuid,
			struct ctl_conn *c)
{
	char path[128];
	int ret;

	ctl_socket_path(uuid, path, sizeof(path));
	ret = ctl_connect_path(path, c);
	if (ret == -EACCES || ret == -EPERM) {
		fprintf(stderr, CTL_PROG ": %s: permission denied (root only)\n",
			target);
		return CTL_EXIT_PERM;
	}
	if (ret) {
		fprintf(stderr, CTL_PROG ": %s: no mounted raidfs array with "
			"this uuid\n", target);
		return CTL_EXIT_NOT_MOUNTED;
	}
	return CTL_EXIT_OK;
}

void ctl_dead_say(const char *mp)
{
	fprintf(stderr, CTL_PROG ": %s: mounted, but the raidfs daemon that "
		"served it is gone (killed or crashed): unmount it (umount %s) "
		"and mount the array again; its journals are replayed at "
		"mount\n", mp, mp);
}

int ctl_connect(const char *target, struct ctl_conn *c)
{
	uint8_t uuid[16];
	char mp[PATH_MAX];
	char **socks;
	bool mute = false;
	int ret;

	c->fd = -1;
	snprintf(c->where, sizeof(c->where), "%s", target);
	if (uuid_parse(target, uuid) == 0 && access(target, F_OK))
		return connect_uuid(target, uuid, c);
	/* before the mount point: another user may not even see it */
	if (access(CTL_RUN_DIR, X_OK) && errno == EACCES) {
		fprintf(stderr, CTL_PROG ": %s: permission denied (root only)\n",
			target);
		return CTL_EXIT_PERM;
	}
	ret = mount_of(target, mp, sizeof(mp));
	if (ret == -ENOTCONN) {         /* inside a dead mount */
		fprintf(stderr, CTL_PROG ": %s: on a mount whose daemon is "
			"gone (killed or crashed): unmount that mount and "
			"mount the array again\n", target);
		return CTL_EXIT_COMM;
	}
	if (ret) {
		fprintf(stderr, CTL_PROG ": %s: %s\n", target, ret == -ENOENT ?
			"not a mounted raidfs filesystem" : strerror(-ret));
		return ret == -EACCES ? CTL_EXIT_PERM : CTL_EXIT_NOT_MOUNTED;
	}
	if (ctl_mount_dead(mp)) {
		ctl_dead_say(mp);
		return CTL_EXIT_COMM;
	}
	socks = ctl_sockets_list();
	for (size_t i = 0; socks && socks[i]; i++) {
		if (c->fd < 0)
			socket_serves(socks[i], mp, c, &mute);
		free(socks[i]);
	}
	free(socks);
	if (c->fd >= 0)
		return CTL_EXIT_OK;
	if (mute) {
		fprintf(stderr, CTL_PROG ": %s: a raidfs daemon did not answer "
			"within %u s (stopped, or stuck in I/O): it may be the "
			"one serving it\n", target, CTL_ANSWER_MS / 1000);
		return CTL_EXIT_COMM;
	}
	fprintf(stderr, CTL_PROG ": %s: mounted, but its daemon has no control "
		"socket in " CTL_RUN_DIR "\n", target);
	return CTL_EXIT_NOT_MOUNTED;
}
