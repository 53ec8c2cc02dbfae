/*
 * bench_meta: the metadata job of the benchmark suite (bench/jobs/meta.sh),
 * one phase per run so the caller can time each and charge it its CPU.
 *
 *   bench_meta create DIR N   N files of 4 KiB in DIR (made), then syncfs
 *   bench_meta stat DIR N     stat(2) each of them
 *   bench_meta delete DIR N   unlink each, rmdir DIR, then syncfs
 *   bench_meta link DIR N     a hard link hI to each fI, then syncfs
 *   bench_meta symlink DIR N  a symlink sI -> fI to each, then syncfs
 *
 * Files are named f0 .. f(N-1), created in that order, as a tar or a
 * compiler would.  delete removes only the fI: the links phases are run
 * on a directory of their own (jobs/links.sh), removed after.  Exit
 * status 1 on the first error, with its message.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define META_FILE_SIZE 4096

static int meta_sync(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (syncfs(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static int meta_create_one(const char *path, const char *buf)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, buf, META_FILE_SIZE) != META_FILE_SIZE)
		rc = errno ? -errno : -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Runs PHASE on file I of DIR: 0 or -errno. */
static int meta_one(const char *phase, const char *dir, long i, const char *buf)
{
	char path[4096];
	struct stat st;

	char other[4096];

	snprintf(path, sizeof(path), "%s/f%ld", dir, i);
	if (strcmp(phase, "create") == 0)
		return meta_create_one(path, buf);
	if (strcmp(phase, "stat") == 0)
		return stat(path, &st) < 0 ? -errno : 0;
	if (strcmp(phase, "link") == 0) {
		snprintf(other, sizeof(other), "%s/h%ld", dir, i);
		return link(path, other) < 0 ? -errno : 0;
	}
	if (strcmp(phase, "symlink") == 0) {
		snprintf(other, sizeof(other), "%s/s%ld", dir, i);
		return symlink(path + strlen(dir) + 1, other) < 0 ? -errno : 0;
	}
	return unlink(path) < 0 ? -errno : 0;
}

static bool meta_is_phase(const char *p)
{
	static const char *const phases[] = { "create", "stat", "delete",
					      "link", "symlink" };
	size_t i;

	for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		if (strcmp(p, phases[i]) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static char buf[META_FILE_SIZE];
	const char *phase, *dir;
	long n, i;
	int rc = 0;

	if (argc != 4 || !meta_is_phase(argv[1])) {
		fprintf(stderr, "usage: bench_meta create|stat|delete|link|symlink DIR N\n");
		return 2;
	}
	phase = argv[1], dir = argv[2], n = atol(argv[3]);
	memset(buf, 'm', sizeof(buf));
	if (strcmp(phase, "create") == 0 && mkdir(dir, 0755) < 0)
		rc = -errno;
	for (i = 0; rc == 0 && i < n; i++)
		rc = meta_one(phase, dir, i, buf);
	if (rc == 0 && strcmp(phase, "delete") == 0 && rmdir(dir) < 0)
		rc = -errno;
	if (rc == 0 && strcmp(phase, "stat") != 0)
		rc = meta_sync(strcmp(phase, "delete") == 0 ? "." : dir);
	if (rc < 0) {
		fprintf(stderr, "bench_meta %s %s: file %ld: %s\n", phase, dir, i, strerror(-rc));
		return 1;
	}
	return 0;
}
