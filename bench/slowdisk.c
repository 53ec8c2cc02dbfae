/*
 * slowdisk: the regular files of a directory, served through FUSE as
 * disks of a given speed, so that rebuild and scrub can be measured
 * against what a member reads sequentially (issue 10's 0.8x) on a
 * machine with no disks to spare.
 *
 *   slowdisk DIR MNT MIBPS [-f]
 *
 * Each file is one disk: a single server that moves MIBPS MiB per second
 * while it has work and loses the time it stands idle.  A request of n
 * bytes starts when the disk is free (at once if it is idle), holds it
 * for n / MIBPS, and is answered when it ends; requests to one file queue
 * behind each other, requests to different files do not.  That is what
 * a cgroup's blkio throttle does not do: it credits a device for the time
 * it stood idle, so a program that reads one member and then writes
 * another looks as fast there as one that keeps both busy.  Seek time is
 * not modelled (the measured jobs are sequential).
 *
 * Files are opened direct_io (no page cache between the program and the
 * model); the data itself lives in DIR.  Only what an array of image
 * files needs is served: getattr, readdir, open, read, write, fsync,
 * truncate, statfs.
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define SLOWDISK_MAX 32

/* One disk: the time it is busy until (CLOCK_MONOTONIC ns). */
struct slowdisk_disk {
	char name[NAME_MAX + 1];
	pthread_mutex_t lock;           /* guards busy_until */
	uint64_t busy_until;
};

static struct {
	int dirfd;
	uint64_t bytes_per_s;
	pthread_mutex_t lock;           /* guards n and the names; taken
					   before no other lock */
	int n;
	struct slowdisk_disk disk[SLOWDISK_MAX];
} sd = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t slowdisk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The disk of the file name, a new one on first use. */
static struct slowdisk_disk *slowdisk_of(const char *name)
{
	struct slowdisk_disk *d = NULL;

	pthread_mutex_lock(&sd.lock);
	for (int i = 0; i < sd.n && !d; i++)
		if (strcmp(sd.disk[i].name, name) == 0)
			d = &sd.disk[i];
	if (!d && sd.n < SLOWDISK_MAX && strlen(name) <= NAME_MAX) {
		d = &sd.disk[sd.n++];
		strcpy(d->name, name);
		pthread_mutex_init(&d->lock, NULL);
	}
	pthread_mutex_unlock(&sd.lock);
	return d;
}

/* Holds the disk for n bytes' worth of time, from when it is free: the
 * time the request ends.  The caller moves the data meanwhile and waits
 * for that time with slowdisk_wait (the copy is the disk's own time, not
 * idle time between two requests). */
static uint64_t slowdisk_serve(struct slowdisk_disk *d, size_t n)
{
	uint64_t start, end;

	pthread_mutex_lock(&d->lock);
	start = d->busy_until > slowdisk_now() ? d->busy_until : slowdisk_now();
	end = start + (uint64_t)n * 1000000000ull / sd.bytes_per_s;
	d->busy_until = end;
	pthread_mutex_unlock(&d->lock);
	return end;
}

static void slowdisk_wait(uint64_t end)
{
	struct timespec ts = { .tv_sec = (time_t)(end / 1000000000ull),
			       .tv_nsec = (long)(end % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* "/name" -> "name"; the root is "." */
static const char *slowdisk_rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static int slowdisk_getattr(const char *path, struct stat *st,
			    struct fuse_file_info *fi)
{
	int ret = fi ? fstat((int)fi->fh, st) :
		  fstatat(sd.dirfd, slowdisk_rel(path), st, 0);

	return ret < 0 ? -errno : 0;
}

static int slowdisk_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
			    off_t off, struct fuse_file_info *fi,
			    enum fuse_readdir_flags flags)
{
	struct dirent *e;
	DIR *dir;
	int fd = dup(sd.dirfd);

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	rewinddir(dir);
	while ((e = readdir(dir)))
		if (fill(buf, e->d_name, NULL, 0, 0))
			break;
	closedir(dir);
	return 0;
}

static int slowdisk_open(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(sd.dirfd, slowdisk_rel(path), fi->flags & ~O_DIRECT);

	if (fd < 0)
		return -errno;
	if (!slowdisk_of(slowdisk_rel(path))) {
		close(fd);
		return -EMFILE;
	}
	fi->fh = (uint64_t)fd;
	fi->direct_io = 1;
	return 0;
}

static int slowdisk_read(const char *path, char *buf, size_t n, off_t off,
			 struct fuse_file_info *fi)
{
	uint64_t end = slowdisk_serve(slowdisk_of(slowdisk_rel(path)), n);
	ssize_t got = pread((int)fi->fh, buf, n, off);
	slowdisk_wait(end);
	return got < 0 ? -errno : (int)got;
}

static int slowdisk_write(const char *path, const char *buf, size_t n,
			  off_t off, struct fuse_file_info *fi)
{
	uint64_t end = slowdisk_serve(slowdisk_of(slowdisk_rel(path)), n);
	ssize_t put = pwrite((int)fi->fh, buf, n, off);
	slowdisk_wait(end);
	return put < 0 ? -errno : (int)put;
}

static int slowdisk_fsync(const char *path, int datasync,
			  struct fuse_file_info *fi)
{
	return fdatasync((int)fi->fh) < 0 ? -errno : 0;
}

static int slowdisk_truncate(const char *path, off_t size,
			     struct fuse_file_info *fi)
{
	int ret;

	if (fi)
		ret = ftruncate((int)fi->fh, size);
	else {
		int fd = openat(sd.dirfd, slowdisk_rel(path), O_WRONLY);

		ret = fd < 0 ? -1 : ftruncate(fd, size);
		if (fd >= 0)
			close(fd);
	}
	return ret < 0 ? -errno : 0;
}

static int slowdisk_release(const char *path, struct fuse_file_info *fi)
{
	close((int)fi->fh);
	return 0;
}

static int slowdisk_statfs(const char *path, struct statvfs *st)
{
	return fstatvfs(sd.dirfd, st) < 0 ? -errno : 0;
}

static void *slowdisk_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	conn->max_read = 1u << 20;       /* as the mount option says */
	conn->max_write = 1u << 20;
	cfg->use_ino = 1;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->direct_io = 1;
	return NULL;
}

static const struct fuse_operations slowdisk_ops = {
	.init = slowdisk_init,
	.getattr = slowdisk_getattr,
	.readdir = slowdisk_readdir,
	.open = slowdisk_open,
	.read = slowdisk_read,
	.write = slowdisk_write,
	.fsync = slowdisk_fsync,
	.truncate = slowdisk_truncate,
	.release = slowdisk_release,
	.statfs = slowdisk_statfs,
};

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0], NULL, "-o", "max_read=1048576", NULL, NULL };
	int fargc = 4;
	long mibps;

	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "-f"))) {
		fprintf(stderr, "usage: slowdisk DIR MNT MIBPS [-f]\n");
		return 2;
	}
	mibps = strtol(argv[3], NULL, 10);
	sd.dirfd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (sd.dirfd < 0 || mibps <= 0) {
		fprintf(stderr, "slowdisk: %s: %s\n", sd.dirfd < 0 ? argv[1] :
			argv[3], sd.dirfd < 0 ? strerror(errno) :
			"not a speed in MiB/s");
		return 2;
	}
	sd.bytes_per_s = (uint64_t)mibps << 20;
	fargv[1] = argv[2];
	if (argc == 5)
		fargv[fargc++] = "-f";
	return fuse_main(fargc, fargv, &slowdisk_ops, NULL);
}
