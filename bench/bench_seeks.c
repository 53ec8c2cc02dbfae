/*
 * bench_seeks: the seeds' file benchmark (bench/jobs/seeks.sh), one phase
 * per run so the caller can time each, drop the page cache between them
 * and charge each its CPU (that of the filesystem's daemon included).
 *
 *   bench_seeks write FILE MB     MB MiB in 1 MiB writes, fsync before close
 *   bench_seeks seek FILE N       N random lseek + 4 KiB read
 *   bench_seeks read FILE         the whole file sequentially, 1 MiB reads
 *
 * The written bytes are pseudo-random (compression gains nothing); the
 * seeks use a fixed seed so every target reads the same offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEEKS_BUF (1u << 20)
#define SEEKS_READ 4096

static uint64_t seeks_rand(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 11;
}

static int seeks_write(int fd, uint8_t *buf, long mb)
{
	uint64_t seed = 1;

	for (long i = 0; i < mb; i++) {
		for (size_t j = 0; j < SEEKS_BUF; j += 8) {
			uint64_t v = seeks_rand(&seed);

			memcpy(buf + j, &v, 8);
		}
		if (write(fd, buf, SEEKS_BUF) != SEEKS_BUF)
			return errno ? -errno : -EIO;
	}
	return fsync(fd) < 0 ? -errno : 0;
}

static int seeks_seek(int fd, uint8_t *buf, long n)
{
	uint64_t seed = 42;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size < SEEKS_READ)
		return -EINVAL;
	for (long i = 0; i < n; i++) {
		off_t off = (off_t)(seeks_rand(&seed) % (uint64_t)(st.st_size / SEEKS_READ)) * SEEKS_READ;

		if (lseek(fd, off, SEEK_SET) < 0)
			return -errno;
		if (read(fd, buf, SEEKS_READ) != SEEKS_READ)
			return errno ? -errno : -EIO;
	}
	return 0;
}

static int seeks_read(int fd, uint8_t *buf)
{
	ssize_t got;

	while ((got = read(fd, buf, SEEKS_BUF)) > 0)
		;
	return got < 0 ? -errno : 0;
}

int main(int argc, char **argv)
{
	uint8_t *buf = malloc(SEEKS_BUF);
	int write_phase = argc == 4 && strcmp(argv[1], "write") == 0;
	int rc = -EINVAL, fd;

	if (!buf || argc < 3 || (!write_phase && strcmp(argv[1], "seek") && strcmp(argv[1], "read"))) {
		fprintf(stderr, "usage: bench_seeks write FILE MB | seek FILE N | read FILE\n");
		return 2;
	}
	fd = write_phase ? open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644) : open(argv[2], O_RDONLY);
	if (fd < 0)
		rc = -errno;
	else if (write_phase)
		rc = seeks_write(fd, buf, atol(argv[3]));
	else if (strcmp(argv[1], "seek") == 0 && argc == 4)
		rc = seeks_seek(fd, buf, atol(argv[3]));
	else if (strcmp(argv[1], "read") == 0)
		rc = seeks_read(fd, buf);
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = -errno;
	free(buf);
	if (rc < 0) {
		fprintf(stderr, "bench_seeks %s %s: %s\n", argv[1], argv[2], strerror(-rc));
		return 1;
	}
	return 0;
}
