/*
 * bench_array: raidcore throughput on member files in a directory
 * (default /dev/shm, tmpfs), side by side with the same workload on one
 * plain file in the same directory.
 *
 *   bench_array [DIR] [MiB]
 *
 * Reports MB/s of logical data for sequential writes (1 MiB requests, then
 * a flush), sequential reads, and 4 KiB random writes with a flush every
 * 64, for RAID 5 on 4 members and RAID 6 on 6 members.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "raidcore.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill(uint8_t *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 8) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		memcpy(buf + i, &seed, 8);
	}
}

/* The reference: the same I/O on one file with pwrite/pread/fdatasync. */
static void bench_plain(const char *dir, uint64_t mib, uint8_t *buf)
{
	char path[512];
	double t0, tw, tr, trand;
	uint64_t n = mib;
	int fd;

	snprintf(path, sizeof(path), "%s/bench_plain.img", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(mib << 20)) < 0) {
		perror(path);
		exit(1);
	}
	t0 = now();
	for (uint64_t i = 0; i < n; i++)
		if (pwrite(fd, buf, 1 << 20, (off_t)(i << 20)) != 1 << 20)
			exit(1);
	fdatasync(fd);
	tw = now() - t0;
	t0 = now();
	for (uint64_t i = 0; i < n; i++)
		if (pread(fd, buf, 1 << 20, (off_t)(i << 20)) != 1 << 20)
			exit(1);
	tr = now() - t0;
	t0 = now();
	for (uint64_t i = 0; i < n * 64; i++) {
		uint64_t b = (i * 2654435761u) % (n * 256);

		if (pwrite(fd, buf, 4096, (off_t)(b * 4096)) != 4096)
			exit(1);
		if (i % 64 == 63)
			fdatasync(fd);
	}
	trand = now() - t0;
	printf("%-22s %10.0f %10.0f %12.0f\n", "plain file", mib / tw,
	       mib / tr, n * 64 * 4096 / 1048576.0 / trand);
	close(fd);
	unlink(path);
}

static void bench_raid(const char *dir, uint64_t mib, uint8_t *buf,
		       enum rc_level level, int members)
{
	struct rc_create_params p = { .level = level, .chunk_bytes = 65536 };
	struct rc_dev *devs[16];
	struct rc_array *a;
	struct rc_info info;
	char path[16][512], err[256], name[64];
	double t0, tw, tr, trand, trebuild;
	uint64_t dev_bytes = (mib << 20) / (uint64_t)(members - (level == RC_RAID6 ? 2 : 1))
			     + (64ull << 20);
	uint64_t n;

	for (int i = 0; i < members; i++) {
		int fd;

		snprintf(path[i], sizeof(path[i]), "%s/bench_m%d.img", dir, i);
		fd = open(path[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)dev_bytes) < 0)
			exit(1);
		close(fd);
		if (rc_dev_open_file(path[i], 0, &devs[i]) < 0)
			exit(1);
	}
	if (rc_array_create_err(&p, devs, members, err, sizeof(err)) < 0) {
		fprintf(stderr, "create: %s\n", err);
		exit(1);
	}
	if (rc_array_assemble(devs, members, 0, &a, err, sizeof(err)) < 0) {
		fprintf(stderr, "assemble: %s\n", err);
		exit(1);
	}
	rc_array_info(a, &info);
	n = mib < info.blocks / 256 ? mib : info.blocks / 256;
	t0 = now();
	for (uint64_t i = 0; i < n; i++)
		if (rc_write(a, i * 256, 256, buf) < 0)
			exit(1);
	rc_flush(a);
	tw = now() - t0;
	t0 = now();
	for (uint64_t i = 0; i < n; i++)
		if (rc_read(a, i * 256, 256, buf) < 0)
			exit(1);
	tr = now() - t0;
	t0 = now();
	for (uint64_t i = 0; i < n * 64; i++) {
		uint64_t b = (i * 2654435761u) % (n * 256);

		if (rc_write(a, b, 1, buf) < 0)
			exit(1);
		if (i % 64 == 63)
			rc_flush(a);
	}
	trand = now() - t0;
	rc_flush(a);
	/* Rebuild of one member onto a fresh file. */
	{
		char rpath[600];
		struct rc_dev *nd;
		int fd;

		snprintf(rpath, sizeof(rpath), "%s.new", path[1]);
		fd = open(rpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)dev_bytes) < 0)
			exit(1);
		close(fd);
		if (rc_dev_open_file(rpath, 0, &nd) < 0 || rc_member_fail(a, 1) < 0)
			exit(1);
		t0 = now();
		if (rc_member_replace(a, 1, nd, NULL, NULL) < 0)
			exit(1);
		trebuild = now() - t0;
		unlink(rpath);
	}
	snprintf(name, sizeof(name), "raidcore %s x%d", rc_level_name(level),
		 members);
	printf("%-22s %10.0f %10.0f %12.0f %10.2f s\n", name, n / tw, n / tr,
	       n * 64 * 4096 / 1048576.0 / trand, trebuild);
	rc_array_close(a);
	for (int i = 0; i < members; i++)
		unlink(path[i]);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 256;
	uint8_t *buf = aligned_alloc(4096, 1 << 20);

	fill(buf, 1 << 20, 1);
	printf("%-22s %10s %10s %12s %12s   (MB/s, %llu MiB in %s)\n", "",
	       "seq write", "seq read", "rand 4K wr", "rebuild 1",
	       (unsigned long long)mib, dir);
	bench_plain(dir, mib, buf);
	bench_raid(dir, mib, buf, RC_RAID5, 4);
	bench_raid(dir, mib, buf, RC_RAID6, 6);
	free(buf);
	return 0;
}
