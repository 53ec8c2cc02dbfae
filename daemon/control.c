/*
 * control: the control socket of a mounted array, CTL_RUN_DIR/UUID.sock,
 * and the thread that serves it (docs/DESIGN.md "The control socket";
 * the protocol in control_proto.h).
 *
 * Root only, twice: CTL_RUN_DIR is made 0700 and the socket 0600, and a
 * peer whose uid (SO_PEERCRED) is not 0 is answered EACCES.  A socket
 * left by a daemon that died is replaced (nothing answers it); one that
 * answers belongs to a daemon serving the same array: then this one
 * serves none (the mount goes on; raidfsctl reaches the other).
 *
 * One thread polls the listening socket, its clients and a wake-up pipe
 * (the events thread writes it when an event is in the history): it
 * answers requests in order and streams the history and new events to
 * the clients that asked.  Every send is non-blocking: a reply that does
 * not fit drops the client; an event stream that fills a client's socket
 * waits for POLLOUT (events it falls behind the history's 1024 by are
 * skipped), so no client is ever waited for.  The thread serves no FUSE request and
 * takes no lock FUSE holds for long.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/major.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "control_proto.h"
#include "log.h"

#define CTL_MAX_CLIENTS 32
#define CTL_EVENTS_BATCH 64

/* A client; after "events" it is streaming: the history, then (follow)
 * every new event, paced by its reading (blocked: its socket is full,
 * wait for POLLOUT). */
struct ctl_client {
	int fd;
	bool streaming, blocked;
	uint64_t seen;          /* events sent up to this seq */
	uint64_t until;         /* the last to send (UINT64_MAX: follow) */
};

struct control {
	struct control_params p;
	char *mountpoint;
	char path[108];
	int lfd;
	int wake[2];            /* the events thread -> the server thread */
	int stop[2];            /* control_stop closes stop[1] */
	struct ctl_client cl[CTL_MAX_CLIENTS];
	int ncl;
	struct ctl_events *ev;
	struct ctl_scrub *scrub;
	struct ctl_damage *damage;      /* NULL: none (no filesystem) */
	pthread_t thread;
	bool running;
	char *buf;              /* CTL_MSG_MAX + 1 */
};

static void wake_server(void *ctx)
{
	struct control *c = ctx;
	char b = 1;

	if (write(c->wake[1], &b, 1) < 0 && errno != EAGAIN)
		rfs_log(LOG_WARNING, "control: wake-up: %s", strerror(errno));
}

/* Sends one packet without waiting; false: the client is to go. */
static bool client_send(struct ctl_client *cl, char *pkt)
{
	bool ok = pkt && send(cl->fd, pkt, strlen(pkt),
			      MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)strlen(pkt);

	free(pkt);
	return ok;
}

/* One event packet: 1 sent, 0 the socket is full, -1 the client is to go. */
static int client_send_event(struct ctl_client *cl, const struct ctl_event *e)
{
	json_object *o = ctl_event_json(e);
	char *pkt = ctl_event_encode(o);
	ssize_t n = pkt ? send(cl->fd, pkt, strlen(pkt),
			       MSG_DONTWAIT | MSG_NOSIGNAL) : -1;
	int ret = pkt && n == (ssize_t)strlen(pkt) ? 1 :
		  n < 0 && pkt && errno == EAGAIN ? 0 : -1;

	json_object_put(o);
	free(pkt);
	return ret;
}

/* Sends the events after cl->seen, up to cl->until, until its socket is
 * full (then blocked); false: the client is to go. */
static bool client_pump(struct control *c, struct ctl_client *cl)
{
	struct ctl_event e[CTL_EVENTS_BATCH];
	size_t n;
	int r = 1;

	cl->blocked = false;
	while (cl->streaming && cl->seen < cl->until && r == 1 &&
	       (n = ctl_events_since(c->ev, cl->seen, e, CTL_EVENTS_BATCH))) {
		for (size_t i = 0; i < n && r == 1; i++) {
			if (e[i].seq > cl->until) {
				cl->seen = cl->until;   /* the rest is news */
				break;
			}
			r = client_send_event(cl, &e[i]);
			if (r == 1)
				cl->seen = e[i].seq;
		}
	}
	cl->blocked = r == 0;
	if (cl->seen >= cl->until)
		cl->streaming = false;
	return r >= 0;
}

static json_object *identify_json(struct control *c)
{
	json_object *o = ctl_status_json(c->p.array, NULL, c->mountpoint, c->ev,
					 NULL, NULL);
	json_object *id = json_object_new_object(), *v;

	if (o && json_object_object_get_ex(o, "uuid", &v))
		json_object_object_add(id, "uuid", json_object_get(v));
	json_object_put(o);
	json_object_object_add(id, "mountpoint",
			       json_object_new_string(c->mountpoint));
	json_object_object_add(id, "pid", json_object_new_int((int)getpid()));
	return id;
}

/* "events": the reply says the last seq of the history, which follows
 * as event packets (client_pump), then, with follow, every new event. */
static json_object *events_begin(struct control *c, struct ctl_client *cl,
				 bool follow)
{
	json_object *o = json_object_new_object();
	uint64_t last = ctl_events_last_seq(c->ev);

	cl->seen = 0;
	cl->until = follow ? UINT64_MAX : last;
	cl->streaming = true;
	json_object_object_add(o, "last_seq", json_object_new_uint64(last));
	return o;
}

static char *scrub_answer(struct control *c, const struct ctl_request *r)
{
	char msg[512] = "";
	int ret;

	if (!strcmp(r->arg, "status"))
		return ctl_reply_encode(0, NULL, ctl_scrub_json(c->scrub));
	ret = !strcmp(r->arg, "start") ? ctl_scrub_start(c->scrub, msg, sizeof(msg)) :
	      ctl_scrub_stop(c->scrub, msg, sizeof(msg));
	rfs_log(ret ? LOG_WARNING : LOG_INFO, "raidfsctl scrub %s: %s", r->arg, msg);
	return ctl_reply_encode(ret, msg, NULL);
}

/*
 * Does device d store its blocks on the filesystem whose device is mnt:
 * d is mnt, or a loop device whose backing file is there (through loop
 * devices over files on loop devices, a few levels down)?
 */
static bool dev_over(dev_t d, dev_t mnt, int depth)
{
	char link[64], path[PATH_MAX];
	struct stat st;
	ssize_t n;
	FILE *f;

	if (d == mnt)
		return true;
	if (depth > 8 || major(d) != LOOP_MAJOR)
		return false;
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(d), minor(d));
	f = fopen(link, "re");
	if (!f)
		return false;
	n = fgets(path, sizeof(path), f) ? (ssize_t)strcspn(path, "\n") : 0;
	fclose(f);
	path[n] = 0;
	return n > 0 && stat(path, &st) == 0 && dev_over(st.st_dev, mnt, depth + 1);
}

/*
 * Is path on this array's own filesystem?  Its writes would come back
 * through the mount into the array that makes them: the first flush
 * waits on itself and the daemon hangs, unkillable (a tester's
 * `raidfsctl add /srv/data /srv/data/spare.img`).  A loop device over a
 * file there does the same (its fsync comes back as a FUSE FSYNC: a
 * tester's find, W3).  The stats reach this daemon's FUSE threads, not
 * the control thread.
 */
static bool on_own_mount(const char *mountpoint, const char *path)
{
	struct stat dev, mnt;

	if (!path[0] || stat(path, &dev) != 0 || stat(mountpoint, &mnt) != 0)
		return false;
	return dev_over(dev.st_dev, mnt.st_dev, 0) ||
	       (S_ISBLK(dev.st_mode) && dev_over(dev.st_rdev, mnt.st_dev, 0));
}

static char *request_answer(struct control *c, struct ctl_client *cl,
			    const char *buf, size_t len)
{
	struct ctl_request r;
	char msg[512] = "";
	int ret = ctl_request_decode(buf, len, &r, msg, sizeof(msg));

	if (ret)
		return ctl_reply_encode(ret, msg, NULL);
	switch (r.cmd) {
	case CTL_IDENTIFY:
		return ctl_reply_encode(0, NULL, identify_json(c));
	case CTL_STATUS:
		return ctl_reply_encode(0, NULL, ctl_status_json(
			c->p.array, c->p.fs, c->mountpoint, c->ev, c->scrub,
			c->damage));
	case CTL_SCRUB:
		return scrub_answer(c, &r);
	case CTL_EVENTS:
		return ctl_reply_encode(0, NULL, events_begin(c, cl, r.follow));
	case CTL_ADD:
	case CTL_REPLACE:
		if (on_own_mount(c->mountpoint, r.cmd == CTL_ADD ? r.arg :
				 r.device)) {
			snprintf(msg, sizeof(msg), "%.200s is on this array's "
				 "own filesystem (%.200s): a member cannot live "
				 "on the array it serves", r.cmd == CTL_ADD ?
				 r.arg : r.device, c->mountpoint);
			rfs_log(LOG_WARNING, "raidfsctl %s: %s",
				ctl_cmd_name(r.cmd), msg);
			return ctl_reply_encode(-EINVAL, msg, NULL);
		}
		/* fall through */
	default:
		ret = ctl_cmd_run(c->p.array, c->ev, &r, msg, sizeof(msg));
		if (ret == 0 && r.cmd == CTL_CLEAR && c->damage)
			ctl_damage_clear(c->damage);    /* repaired, or deleted */
		rfs_log(ret ? LOG_WARNING : LOG_INFO, "raidfsctl %s%s%s: %s",
			ctl_cmd_name(r.cmd), r.arg[0] ? " " : "", r.arg, msg);
		return ctl_reply_encode(ret, msg, NULL);
	}
}

static bool peer_is_root(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) && cr.uid == 0;
}

/* One packet from cl; false: the client is to go. */
static bool client_serve(struct control *c, struct ctl_client *cl)
{
	ssize_t n = recv(cl->fd, c->buf, CTL_MSG_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false;
	if (n > CTL_MSG_MAX)
		return client_send(cl, ctl_reply_encode(-EMSGSIZE, NULL, NULL));
	if (!peer_is_root(cl->fd))
		return client_send(cl, ctl_reply_encode(-EACCES,
			"permission denied: root only", NULL));
	return client_send(cl, request_answer(c, cl, c->buf, (size_t)n)) &&
	       (!cl->streaming || client_pump(c, cl));
}

/* What poll said of cl; false: the client is to go. */
static bool client_ready(struct control *c, struct ctl_client *cl, short ev)
{
	if ((ev & POLLOUT) && !client_pump(c, cl))
		return false;
	return !(ev & (POLLIN | POLLHUP | POLLERR)) || client_serve(c, cl);
}

static void client_accept(struct control *c)
{
	int fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (c->ncl == CTL_MAX_CLIENTS) {
		client_send(&(struct ctl_client){ .fd = fd },
			    ctl_reply_encode(-EUSERS, "too many clients", NULL));
		close(fd);
		return;
	}
	c->cl[c->ncl++] = (struct ctl_client){ .fd = fd };
}

static void client_drop(struct control *c, int i)
{
	close(c->cl[i].fd);
	c->cl[i] = c->cl[--c->ncl];
}

/* After a wake-up: new events to the followers. */
static void followers_send(struct control *c)
{
	char b[64];

	while (read(c->wake[0], b, sizeof(b)) > 0)
		;
	for (int i = c->ncl - 1; i >= 0; i--)
		if (c->cl[i].streaming && !c->cl[i].blocked &&
		    !client_pump(c, &c->cl[i]))
			client_drop(c, i);
}

static void *control_main(void *arg)
{
	struct control *c = arg;
	struct pollfd p[CTL_MAX_CLIENTS + 3];
	int n, nc;

	for (;;) {
		p[0] = (struct pollfd){ .fd = c->wake[0], .events = POLLIN };
		p[1] = (struct pollfd){ .fd = c->lfd, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = c->stop[0], .events = POLLIN };
		nc = c->ncl;
		for (int i = 0; i < nc; i++)
			p[i + 3] = (struct pollfd){ .fd = c->cl[i].fd,
				.events = POLLIN | (c->cl[i].blocked ? POLLOUT : 0) };
		n = poll(p, (nfds_t)nc + 3, -1);
		if (n < 0 && errno != EINTR)
			break;
		if (p[2].revents)
			break;          /* control_stop closed stop[1] */
		if (p[0].revents & POLLIN) {
			followers_send(c);
			/* MemberDamaged and ScrubFinished wake us too */
			ctl_scrub_verify_poll(c->scrub);
		}
		for (int i = nc - 1; i >= 0; i--)
			if (p[i + 3].revents &&
			    !client_ready(c, &c->cl[i], p[i + 3].revents))
				client_drop(c, i);
		if (p[1].revents & POLLIN)
			client_accept(c);
	}
	return NULL;
}

/* Is someone serving path?  A socket nobody answers is a dead daemon's. */
static bool socket_answers(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool yes = fd >= 0 && !connect(fd, (const struct sockaddr *)sa,
				       sizeof(*sa));

	if (fd >= 0)
		close(fd);
	return yes;
}

static int socket_listen(struct control *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int ret;

	if (mkdir(CTL_RUN_DIR, 0700) && errno != EEXIST)
		return -errno;
	if (chmod(CTL_RUN_DIR, 0700))
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->path);
	if (socket_answers(&sa))
		return -EADDRINUSE;
	unlink(c->path);
	c->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->lfd < 0)
		return -errno;
	old = umask(0177);
	ret = bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (!ret && listen(c->lfd, 8))
		ret = -errno;
	return ret;
}

/* raidcore's RC_EV_LOST stop going to the list before it goes. */
static void control_damage_stop(struct control *c)
{
	if (!c->damage)
		return;
	ctl_events_set_damage(c->ev, NULL);
	ctl_damage_free(c->damage);
	c->damage = NULL;
}

static void control_free(struct control *c)
{
	if (c->lfd >= 0) {
		close(c->lfd);
		unlink(c->path);
	}
	for (int i = 0; i < c->ncl; i++)
		close(c->cl[i].fd);
	for (int i = 0; i < 2; i++) {
		if (c->wake[i] >= 0)
			close(c->wake[i]);
		if (c->stop[i] >= 0)
			close(c->stop[i]);
	}
	free(c->buf);
	free(c->mountpoint);
	free(c);
}

static int control_setup(struct control *c)
{
	struct rc_info info;
	int ret;

	rc_array_info(c->p.array, &info);
	ret = ctl_socket_path(info.uuid, c->path, sizeof(c->path));
	if (!ret && (pipe2(c->wake, O_CLOEXEC | O_NONBLOCK) ||
		     pipe2(c->stop, O_CLOEXEC)))
		ret = -errno;
	if (!ret)
		ret = socket_listen(c);
	if (!ret)
		ret = ctl_events_new(c->p.array, c->mountpoint, c->p.program,
				     c->p.program_timeout_s, wake_server, c,
				     &c->ev);
	if (!ret && c->p.fs && ctl_damage_new(c->p.fs, c->ev, &c->damage))
		rfs_log(LOG_WARNING, "no damage list: files with unrecoverable "
			"data are not named");
	if (c->damage)
		ctl_events_set_damage(c->ev, c->damage);
	if (!ret)
		ret = ctl_scrub_new(c->p.array, c->ev, c->damage,
				    &c->scrub);
	if (!ret)
		ctl_scrub_verify_poll(c->scrub);        /* found at assembly */
	if (!ret)
		ret = -pthread_create(&c->thread, NULL, control_main, c);
	return ret;
}

int control_start(const struct control_params *p, struct control **out)
{
	struct control *c = calloc(1, sizeof(*c));
	int ret = -ENOMEM;

	*out = NULL;
	if (!c)
		return ret;
	c->p = *p;
	c->lfd = c->wake[0] = c->wake[1] = c->stop[0] = c->stop[1] = -1;
	c->mountpoint = strdup(p->mountpoint);
	c->buf = malloc(CTL_MSG_MAX + 1);
	if (c->mountpoint && c->buf)
		ret = control_setup(c);
	if (ret) {
		rfs_log(LOG_WARNING, "no control socket%s%s: %s (raidfsctl "
			"cannot reach this mount)", c->path[0] ? " " : "",
			c->path, strerror(-ret));
		ctl_scrub_free(c->scrub);
		control_damage_stop(c);
		ctl_events_free(c->ev);
		control_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

void control_stop(struct control *c)
{
	if (!c)
		return;
	close(c->stop[1]);              /* the server thread ends */
	c->stop[1] = -1;
	pthread_join(c->thread, NULL);
	ctl_scrub_free(c->scrub);       /* a running scrub stops */
	control_damage_stop(c);
	ctl_events_free(c->ev);         /* its wake-ups go to a full pipe */
	control_free(c);
}
