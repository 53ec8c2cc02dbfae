/*
 * ceiling_ll: the FUSE passthrough ceiling of the benchmark suite.
 *
 * libfuse's own example passthrough_ll.c, compiled from the copy
 * libfuse3-dev installs (/usr/share/doc/libfuse3-dev/examples; the Makefile
 * passes its folder with -I), unchanged but for one thing: its init
 * callback is wrapped to ask the kernel for what the suite's ceiling is
 * defined by (docs/BENCHMARKS.md): 1 MiB writes (max_write, which needs
 * max_pages 256: libfuse asks for that when max_write > 128 KiB) and
 * splice in both directions.  The writeback cache is the example's own
 * "-o writeback".
 *
 *   ceiling_ll -f -o source=DIR,writeback MOUNTPOINT
 */
/* The example defines these itself, first thing; the same values here. */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

static struct fuse_session *ceiling_session_new(struct fuse_args *args,
		const struct fuse_lowlevel_ops *op, size_t op_size, void *userdata);
#define fuse_session_new ceiling_session_new
#undef _GNU_SOURCE
#undef FUSE_USE_VERSION
#include "passthrough_ll.c"
#undef fuse_session_new

#define CEILING_MAX_WRITE (1u << 20)

static void (*ceiling_example_init)(void *userdata, struct fuse_conn_info *conn);
static struct fuse_lowlevel_ops ceiling_ops;

static void ceiling_init(void *userdata, struct fuse_conn_info *conn)
{
	const unsigned splice = FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
				FUSE_CAP_SPLICE_MOVE;

	ceiling_example_init(userdata, conn);
	conn->want |= conn->capable & splice;
	conn->max_write = CEILING_MAX_WRITE;
}

static struct fuse_session *ceiling_session_new(struct fuse_args *args,
		const struct fuse_lowlevel_ops *op, size_t op_size, void *userdata)
{
	ceiling_ops = *op;
	ceiling_example_init = op->init;
	ceiling_ops.init = ceiling_init;
	return fuse_session_new(args, &ceiling_ops, op_size, userdata);
}
