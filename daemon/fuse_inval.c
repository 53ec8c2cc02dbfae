/*
 * fuse_inval: tells the kernel to drop its cached attributes of an inode,
 * from a thread of its own, or its cached data of a range, at once.
 *
 * With writeback caching and long attribute timeouts the kernel keeps
 * st_blocks (and, after fallocate, the times) from the last getattr; after
 * fsync, release, fallocate and copy_file_range they may have changed in
 * the filesystem.  The notification cannot be sent from the handler itself
 * (the kernel may hold the inode lock the notification needs: libfuse's
 * fuse_lowlevel_notify_inval_inode warns of the deadlock), so handlers
 * queue the inode and this thread sends it.  Dropping attributes only
 * (offset -1) takes no inode lock in the kernel (fuse_reverse_inval_inode
 * bumps attr_version under the inode's spinlock), so fsync and fallocate,
 * which must not return with stale st_blocks, send it themselves before
 * replying (rfs_inval_attr_now).  Dropping a data range
 * (rfs_inval_data_now: after an O_DIRECT write, before SEEK_DATA) takes
 * the range's page locks and writes dirty pages back first; it is sent
 * from a handler whose request holds none of them (the other threads of
 * the loop answer the READs and WRITEs it may wait for).
 *
 * Lock order: inval->lock is a leaf.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "fuse_ops.h"

struct rfs_inval {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t *q;
	size_t n, cap;
	bool stop;
	struct fuse_session *se;
};

static void *inval_main(void *arg)
{
	struct rfs_inval *iv = arg;
	uint64_t *batch = NULL;
	size_t n;

	pthread_mutex_lock(&iv->lock);
	for (;;) {
		while (!iv->n && !iv->stop)
			pthread_cond_wait(&iv->cond, &iv->lock);
		if (!iv->n)
			break;
		batch = iv->q;
		n = iv->n;
		iv->q = NULL;
		iv->n = iv->cap = 0;
		pthread_mutex_unlock(&iv->lock);
		/* -ENOENT: the kernel does not cache it; fine. */
		for (size_t i = 0; i < n; i++)
			fuse_lowlevel_notify_inval_inode(iv->se, batch[i], -1, 0);
		free(batch);
		pthread_mutex_lock(&iv->lock);
	}
	pthread_mutex_unlock(&iv->lock);
	return NULL;
}

int rfs_inval_start(struct rfs_daemon *d, struct fuse_session *se)
{
	struct rfs_inval *iv = calloc(1, sizeof(*iv));

	if (!iv)
		return -ENOMEM;
	iv->se = se;
	pthread_mutex_init(&iv->lock, NULL);
	pthread_cond_init(&iv->cond, NULL);
	if (pthread_create(&iv->thread, NULL, inval_main, iv)) {
		free(iv);
		return -EAGAIN;
	}
	d->inval = iv;
	return 0;
}

void rfs_inval_stop(struct rfs_daemon *d)
{
	struct rfs_inval *iv = d->inval;

	if (!iv)
		return;
	pthread_mutex_lock(&iv->lock);
	iv->stop = true;
	pthread_cond_signal(&iv->cond);
	pthread_mutex_unlock(&iv->lock);
	pthread_join(iv->thread, NULL);
	free(iv->q);
	pthread_mutex_destroy(&iv->lock);
	pthread_cond_destroy(&iv->cond);
	free(iv);
	d->inval = NULL;
}

void rfs_inval_attr(struct rfs_daemon *d, uint64_t ino)
{
	struct rfs_inval *iv = d->inval;

	if (!iv)
		return;
	pthread_mutex_lock(&iv->lock);
	if (iv->n == iv->cap) {
		size_t cap = iv->cap ? iv->cap * 2 : 64;
		uint64_t *q = realloc(iv->q, cap * sizeof(*q));

		if (!q) {
			pthread_mutex_unlock(&iv->lock);
			return;         /* only a stale st_blocks until timeout */
		}
		iv->q = q;
		iv->cap = cap;
	}
	iv->q[iv->n++] = ino;
	pthread_cond_signal(&iv->cond);
	pthread_mutex_unlock(&iv->lock);
}

void rfs_inval_attr_now(struct rfs_daemon *d, uint64_t ino)
{
	if (d->inval)
		fuse_lowlevel_notify_inval_inode(d->inval->se, ino, -1, 0);
}

void rfs_inval_data_now(struct rfs_daemon *d, uint64_t ino, off_t off,
			off_t len)
{
	if (d->inval)
		fuse_lowlevel_notify_inval_inode(d->inval->se, ino, off, len);
}
