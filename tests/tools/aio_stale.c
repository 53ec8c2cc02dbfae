/*
 * aio_stale: does a buffered read after an AIO O_DIRECT write see the new
 * data?  (issue 11 item 1; the shape of xfstests generic/451.)
 *
 *   aio_stale FILE [ROUNDS]
 *
 * FILE (on the filesystem under test) gets 640 KiB.  Two child processes
 * read it through the page cache without pause.  Each round writes the
 * whole file with one of two patterns by io_submit on a new O_DIRECT
 * descriptor, waits for the write, then reads it through a new buffered
 * descriptor: that read must return the new pattern, not pages a reader
 * cached while the write was in flight.  Exit 0 when every round did, 1
 * with the round that read stale bytes, 2 on a setup error.
 */
#include <fcntl.h>
#include <libaio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILE_SIZE (640 * 1024)

static void reader(const char *path, char *buf)
{
	for (;;) {
		int fd = open(path, O_RDONLY);

		if (fd < 0 || pread(fd, buf, FILE_SIZE, 0) < 0)
			_exit(2);
		close(fd);
	}
}

static int direct_write(io_context_t ctx, const char *path, void *buf)
{
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;
	int fd = open(path, O_RDWR | O_DIRECT);
	int ret = -1;

	if (fd < 0)
		return -1;
	io_prep_pwrite(&cb, fd, buf, FILE_SIZE, 0);
	if (io_submit(ctx, 1, cbs) == 1 &&
	    io_getevents(ctx, 1, 1, &ev, NULL) == 1 && ev.res == FILE_SIZE)
		ret = 0;
	close(fd);
	return ret;
}

/* 0 the new pattern, 1 stale, -1 error */
static int buffered_check(const char *path, const char *want, char *buf)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, FILE_SIZE, 0);
	close(fd);
	if (n != FILE_SIZE)
		return -1;
	return memcmp(buf, want, FILE_SIZE) ? 1 : 0;
}

static int run(const char *path, int rounds, void *pat[2], char *buf)
{
	io_context_t ctx = 0;
	int r, s = 0;

	if (io_setup(1, &ctx))
		return 2;
	for (r = 1; r <= rounds && !s; r++) {
		if (direct_write(ctx, path, pat[r % 2])) {
			s = -1;
			break;
		}
		s = buffered_check(path, pat[r % 2], buf);
	}
	io_destroy(ctx);
	if (s > 0)
		fprintf(stderr, "round %d: stale data after the direct "
			"write\n", r - 1);
	return s < 0 ? 2 : s;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 500;
	pid_t kids[2] = { 0, 0 };
	void *pat[2], *buf;
	int i, fd, ret = 2;

	if (argc < 2) {
		fprintf(stderr, "usage: aio_stale FILE [ROUNDS]\n");
		return 2;
	}
	if (posix_memalign(&pat[0], 4096, FILE_SIZE) ||
	    posix_memalign(&pat[1], 4096, FILE_SIZE) ||
	    posix_memalign(&buf, 4096, FILE_SIZE))
		return 2;
	memset(pat[0], 0x55, FILE_SIZE);
	memset(pat[1], 0xaa, FILE_SIZE);
	fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0 || pwrite(fd, pat[0], FILE_SIZE, 0) != FILE_SIZE ||
	    fsync(fd) || close(fd)) {
		perror(argv[1]);
		return 2;
	}
	for (i = 0; i < 2; i++)
		if (!(kids[i] = fork()))
			reader(argv[1], buf);
	if (kids[0] > 0 && kids[1] > 0)
		ret = run(argv[1], rounds, pat, buf);
	for (i = 0; i < 2; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	return ret;
}
