/*
 * fhandle: file handles, for tests of export support (issue 11 item 6;
 * python has no name_to_handle_at).
 *
 *   fhandle save PATH HANDLEFILE     name_to_handle_at(PATH) -> HANDLEFILE
 *   fhandle cat MOUNTDIR HANDLEFILE  open_by_handle_at (read-only) and
 *                                    copy a file's contents to stdout; a
 *                                    directory prints "dir"
 *
 * Exit 0 done, 1 with the errno's name on stderr (ESTALE: the handle no
 * longer names an inode), 2 usage.  open_by_handle_at needs
 * CAP_DAC_READ_SEARCH (root).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "fhandle: %s: %s\n", what,
		errno == ESTALE ? "ESTALE" : strerror(errno));
	return 1;
}

static int save(const char *path, const char *out)
{
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
	int mount_id, fd, ret = 1;

	if (!h)
		return fail("malloc");
	h->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0)) {
		ret = fail(path);
		goto out;
	}
	fd = open(out, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0 || write(fd, h, sizeof(*h) + h->handle_bytes) < 0 ||
	    close(fd))
		ret = fail(out);
	else
		ret = 0;
out:
	free(h);
	return ret;
}

static int copy_out(int fd)
{
	char buf[65536];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st))
		return fail("fstat");
	if (S_ISDIR(st.st_mode))
		return printf("dir\n") < 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return fail("stdout");
	return n < 0 ? fail("read") : 0;
}

static int cat(const char *mountdir, const char *in)
{
	char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	int mfd = open(mountdir, O_RDONLY | O_DIRECTORY);
	int hfd = open(in, O_RDONLY);
	int fd, ret;

	if (mfd < 0 || hfd < 0 || read(hfd, buf, sizeof(buf)) <
	    (ssize_t)sizeof(struct file_handle))
		return fail("setup");
	close(hfd);
	fd = open_by_handle_at(mfd, (struct file_handle *)buf, O_RDONLY);
	close(mfd);
	if (fd < 0)
		return fail("open_by_handle_at");
	ret = copy_out(fd);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "save"))
		return save(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "cat"))
		return cat(argv[2], argv[3]);
	fprintf(stderr, "usage: fhandle save PATH HANDLEFILE | "
		"fhandle cat MOUNTDIR HANDLEFILE\n");
	return 2;
}
