/* waker.c - how a producer in any process wakes a consumer that sleeps in poll/epoll on
 * one of our objects (ring buffer maps, perf output rings): the consumer owns a pipe and
 * publishes "pid, fd number of the write end, inode of the pipe" in the object's shared
 * memory; a producer writes a byte to its own write end, or to one it opened through
 * /proc/pid/fd/fd and checked by inode, so a reused pid or fd number never gets a byte.
 * Used by ringbuf.c and perf_ring.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "obj/obj.h"
#include "util/util.h"

void brt_waker_init(struct brt_waker_view *w, struct brt_waker *shared)
{
	pthread_mutex_init(&w->lock, NULL);
	w->shared = shared;
	w->poll_r = w->poll_w = w->peer = w->user_fd = -1;
	w->peer_pid = 0;
	w->peer_ino = 0;
}

void brt_waker_fini(struct brt_waker_view *w)
{
	/* a consumer that goes away stops the producers' wake-ups */
	if (w->poll_w >= 0 &&
	    atomic_load_explicit(&w->shared->pid, memory_order_acquire) == (uint32_t)getpid() &&
	    atomic_load_explicit(&w->shared->fd, memory_order_relaxed) == w->poll_w)
		atomic_store_explicit(&w->shared->pid, 0, memory_order_release);
	if (w->poll_r >= 0)
		close(w->poll_r);
	if (w->poll_w >= 0)
		close(w->poll_w);
	if (w->peer >= 0)
		close(w->peer);
	w->poll_r = w->poll_w = w->peer = -1;
	pthread_mutex_destroy(&w->lock);
}

/* Make this process the consumer: create its pipe on first use and publish it.  Returns a
 * new read end (the caller closes it) or -errno.  Called under w->lock. */
static int make_pipe(struct brt_waker_view *w)
{
	struct stat st;
	int p[2], ret;

	if (w->poll_w >= 0) {
		/* one pipe per process: hand out another read end of it */
		ret = fcntl(w->poll_r, F_DUPFD_CLOEXEC, 0);
		return ret < 0 ? -errno : ret;
	}
	/* the private read end lets drain() empty the pipe whatever the caller does with
	 * the fd it gets */
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
		return -errno;
	w->poll_r = fcntl(p[0], F_DUPFD_CLOEXEC, 0);
	if (w->poll_r < 0 || fstat(p[0], &st)) {
		ret = -errno;
		close(p[0]);
		close(p[1]);
		if (w->poll_r >= 0)
			close(w->poll_r);
		w->poll_r = -1;
		return ret;
	}
	w->poll_w = p[1];
	atomic_store_explicit(&w->shared->pid, 0, memory_order_relaxed);
	atomic_store_explicit(&w->shared->fd, p[1], memory_order_relaxed);
	atomic_store_explicit(&w->shared->ino, (uint64_t)st.st_ino, memory_order_relaxed);
	/* seq_cst: the caller then looks for records left unread (perf_output.c), against
	 * a producer's seq_cst load of pid in waker_fd(): it reaches this pipe or we see
	 * its record */
	atomic_store_explicit(&w->shared->pid, (uint32_t)getpid(), memory_order_seq_cst);
	return p[0];
}

int brt_waker_poll_fd(struct brt_waker_view *w)
{
	int ret;

	pthread_mutex_lock(&w->lock);
	ret = make_pipe(w);
	if (ret >= 0)
		w->user_fd = ret;
	pthread_mutex_unlock(&w->lock);
	return ret;
}

/* The consumer seen as pid is gone (its process, or the pipe it published): unpublish
 * it, so producers stop trying to reach it - unless another consumer replaced it. */
static void gone(struct brt_waker_view *w, uint32_t pid)
{
	atomic_compare_exchange_strong_explicit(&w->shared->pid, &pid, 0, memory_order_seq_cst,
						memory_order_relaxed);
}

/* The consumer's pipe as this process can write it, or -1.  Called under w->lock. */
static int waker_fd(struct brt_waker_view *w)
{
	uint32_t pid = atomic_load_explicit(&w->shared->pid, memory_order_seq_cst);
	int32_t fd = atomic_load_explicit(&w->shared->fd, memory_order_relaxed);
	uint64_t ino = atomic_load_explicit(&w->shared->ino, memory_order_relaxed);
	char path[64];
	struct stat st;

	if (!pid)
		return -1;
	if (pid == (uint32_t)getpid())
		return fd == w->poll_w ? w->poll_w : -1;
	if (w->peer >= 0 && w->peer_pid == pid && w->peer_ino == ino)
		return w->peer;
	if (w->peer >= 0)
		close(w->peer);
	w->peer = -1;
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			gone(w, pid);
		return -1;
	}
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode) || (uint64_t)st.st_ino != ino) {
		/* the fd number names something else now; fd and ino may also be a new
		 * consumer's, half published: it cleared pid first, so gone() leaves it */
		gone(w, pid);
		close(fd);
		return -1;
	}
	w->peer = fd;
	w->peer_pid = pid;
	w->peer_ino = ino;
	return fd;
}

int brt_waker_armed(const struct brt_waker_view *w)
{
	return atomic_load_explicit(&w->shared->pid, memory_order_acquire) != 0;
}

/* Does this process keep a read end of its consumer pipe besides bpfrt's own (poll_r)?
 * Every read end handed out is a dup of poll_r (make_pipe()), and a caller may hold
 * several (two libbpf ring_buffer instances on one map, the preload's registration) and
 * close them in any order: the kernel's consumer is live while any writable mapping is.
 * So the process's fds are looked at, not the number handed out last (closed, then
 * reused by the application for something else, it proved nothing).  When /proc cannot
 * be read: that number, if it still names a read end of the pipe.  Under w->lock. */
static int own_reader(struct brt_waker_view *w)
{
	struct brt_dents d;
	struct stat pst, st;
	const char *name;
	int dfd, found = 0, fl;

	if (w->poll_r < 0 || fstat(w->poll_r, &pst))
		return 0;
	dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || brt_dents_start(&d, dfd)) {
		if (dfd >= 0)
			close(dfd);
		return w->user_fd >= 0 && !fstat(w->user_fd, &st) && S_ISFIFO(st.st_mode) &&
		       st.st_ino == pst.st_ino && st.st_dev == pst.st_dev &&
		       (fl = fcntl(w->user_fd, F_GETFL)) >= 0 && (fl & O_ACCMODE) == O_RDONLY;
	}
	while (!found && (name = brt_dents_next(&d))) {
		char *end;
		long fd = strtol(name, &end, 10);

		if (*end || fd < 0 || fd > INT_MAX || fd == dfd || fd == w->poll_r ||
		    fd == w->poll_w || fstat((int)fd, &st) || !S_ISFIFO(st.st_mode) ||
		    st.st_ino != pst.st_ino || st.st_dev != pst.st_dev)
			continue;
		fl = fcntl((int)fd, F_GETFL);
		found = fl >= 0 && (fl & O_ACCMODE) == O_RDONLY;
	}
	close(dfd);
	return found;
}

int brt_waker_live(struct brt_waker_view *w)
{
	uint32_t pid;
	struct pollfd p;
	int fd;

	pthread_mutex_lock(&w->lock);
	pid = atomic_load_explicit(&w->shared->pid, memory_order_seq_cst);
	fd = waker_fd(w);
	/* this process: while the caller keeps a read end it got (bpfrt's own stays) */
	if (fd >= 0 && fd == w->poll_w && !own_reader(w))
		fd = -1;
	/* another process's pipe, whose read end may be gone with its consumer: POLLERR */
	if (fd >= 0 && fd == w->peer) {
		p.fd = fd;
		p.events = POLLOUT;
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR)) {
			gone(w, pid);
			close(w->peer);
			w->peer = fd = -1;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return fd >= 0;
}

/* Write the wake-up byte to another process's pipe.  That consumer may have exited since
 * we opened it: the write then fails with EPIPE, and the SIGPIPE it raises (which would
 * kill a producer that never asked for it) is blocked and taken back. */
static int write_peer(int fd)
{
	sigset_t pipe_set, old;
	int ret, err;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	ret = (int)write(fd, "", 1);
	err = errno;
	if (ret < 0 && err == EPIPE && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return ret;
}

int brt_waker_wake(struct brt_waker_view *w)
{
	int fd, ret = 0;

	pthread_mutex_lock(&w->lock);
	fd = waker_fd(w);
	/* EAGAIN: the pipe is full of earlier wake-ups, as good as one more */
	if (fd >= 0 && fd == w->peer) {
		if (write_peer(fd) == 1 || errno == EAGAIN) {
			ret = 1;
		} else {
			/* EPIPE: no read end is left, its process exited */
			if (errno == EPIPE)
				gone(w, w->peer_pid);
			close(w->peer);
			w->peer = -1;
		}
	} else if (fd >= 0) {
		/* our own pipe: our private read end keeps it open */
		ret = write(fd, "", 1) == 1 || errno == EAGAIN;
	}
	pthread_mutex_unlock(&w->lock);
	return ret;
}

void brt_waker_drain(struct brt_waker_view *w)
{
	char buf[256];

	if (w->poll_r >= 0)
		while (read(w->poll_r, buf, sizeof(buf)) > 0)
			;
}
