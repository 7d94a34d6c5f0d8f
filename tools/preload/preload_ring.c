/* preload_ring.c - the preload's rings: BPF output events (libbpf's perf_buffer) become
 * bpfrt perf output rings, libbpf's mmap() of a ring buffer map gets the data mapped twice,
 * and epoll waits on bpfrt's wake-up pipes in place of the rings' fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "preload_int.h"

#define MAX_RINGS 64
#define MAX_PERF 256

/* perf_event_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT) fds: bpfrt perf output
 * rings, which is where bpf_perf_event_output() of a bpfrt program writes (a kernel
 * perf event could never see those samples).  The ring's size is known only at mmap(),
 * so the fd starts as a one-page ring and mmap() replaces the file behind the same fd
 * number (dup3) by one of the size asked for. */
struct perf_fd {
	int fd;
	dev_t dev;
	ino_t ino;
	int cpu, cloexec;
	unsigned pages;
	struct bpfrt_perf_ring_opts opts;
};

static struct perf_fd perf_fds[MAX_PERF];
static int nperf;
static pthread_mutex_t perf_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of fd (perf_lock held) when it is still the file created for it. */
static struct perf_fd *perf_find(int fd)
{
	struct stat st;

	if (fd < 0 || !nperf)
		return NULL;
	for (int i = 0; i < nperf; i++) {
		if (perf_fds[i].fd != fd)
			continue;
		if (!fstat(fd, &st) && st.st_ino == perf_fds[i].ino && st.st_dev == perf_fds[i].dev)
			return &perf_fds[i];
		perf_fds[i] = perf_fds[--nperf]; /* closed and reused */
		return NULL;
	}
	return NULL;
}

int is_perf(int fd)
{
	int r;

	if (!nperf)
		return 0;
	pthread_mutex_lock(&perf_lock);
	r = perf_find(fd) != NULL;
	pthread_mutex_unlock(&perf_lock);
	return r;
}

static int perf_track(struct perf_fd *e)
{
	struct stat st;

	if (fstat(e->fd, &st))
		return -1;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	pthread_mutex_lock(&perf_lock);
	if (!perf_find(e->fd) && nperf < MAX_PERF)
		perf_fds[nperf++] = *e;
	pthread_mutex_unlock(&perf_lock);
	return 0;
}

/* 1 with *ret set when the call is a BPF output event (bpfrt's), 0 for the kernel. */
int route_perf_open(long a[6], long *ret)
{
	struct perf_event_attr attr;
	struct perf_fd e;
	unsigned long flags = (unsigned long)a[4];
	int fd;

	memset(&attr, 0, sizeof(attr));
	if (read_user((uint64_t)a[0], &attr, PERF_ATTR_SIZE_VER0) != PERF_ATTR_SIZE_VER0 ||
	    attr.type != PERF_TYPE_SOFTWARE || attr.config != PERF_COUNT_SW_BPF_OUTPUT)
		return 0;
	*ret = -1;
	if ((int)a[3] != -1 || (flags & ~(unsigned long)PERF_FLAG_FD_CLOEXEC)) {
		errno = EINVAL; /* groups and cgroups of a BPF output event: not here */
		return 1;
	}
	memset(&e, 0, sizeof(e));
	e.opts.sz = sizeof(e.opts);
	if (attr.watermark)
		e.opts.wakeup_watermark = attr.wakeup_watermark ? attr.wakeup_watermark : 1;
	else
		e.opts.wakeup_events = attr.wakeup_events ? attr.wakeup_events : 1;
	e.cpu = (int)a[2] >= 0 ? (int)a[2] : -1;
	e.pages = 1;
	e.cloexec = !!(flags & PERF_FLAG_FD_CLOEXEC);
	fd = bpfrt_perf_ring_create(e.cpu, e.pages, &e.opts);
	if (fd < 0)
		return 1;
	if (!e.cloexec)
		fcntl(fd, F_SETFD, 0);
	e.fd = fd;
	if (perf_track(&e)) {
		close(fd);
		return 1;
	}
	*ret = fd;
	return 1;
}

/* mmap() of a BPF output event's fd asks for 1 + 2^n pages: the ring behind the fd
 * becomes one of 2^n data pages (before anything wrote to it: libbpf maps first).
 * 0, or -1 with errno. */
static int perf_resize(int fd, size_t len)
{
	struct perf_fd *e, copy;
	size_t pages = len / PRELOAD_PAGE;
	struct stat st;
	int nfd, found;

	/* not held while creating: bpfrt's own mmap() of the new ring comes back here */
	pthread_mutex_lock(&perf_lock);
	e = perf_find(fd);
	found = e != NULL;
	if (e)
		copy = *e;
	pthread_mutex_unlock(&perf_lock);
	if (!found)
		return 0;
	if (len % PRELOAD_PAGE || pages < 2 || pages - 1 > (1u << 20)) {
		errno = EINVAL;
		return -1;
	}
	if (pages - 1 == copy.pages)
		return 0;
	nfd = bpfrt_perf_ring_create(copy.cpu, (unsigned)(pages - 1), &copy.opts);
	if (nfd < 0)
		return -1;
	if (dup3(nfd, fd, copy.cloexec ? O_CLOEXEC : 0) < 0 || fstat(fd, &st)) {
		close(nfd);
		return -1;
	}
	close(nfd);
	pthread_mutex_lock(&perf_lock);
	for (int i = 0; i < nperf; i++)
		if (perf_fds[i].fd == fd && perf_fds[i].ino == copy.ino && perf_fds[i].dev == copy.dev) {
			perf_fds[i].dev = st.st_dev;
			perf_fds[i].ino = st.st_ino;
			perf_fds[i].pages = (unsigned)(pages - 1);
		}
	pthread_mutex_unlock(&perf_lock);
	return 0;
}

static void *map_ringbuf(size_t len, int prot, int flags, int fd, uint32_t size, uint32_t type)
{
	unsigned char *base, *p;
	int pfd = -1;

	/* a user ring buffer's producer maps through a description of its own, whose
	 * mappings bpfrt's freeze sees (EPERM here for a frozen map, as the kernel's) */
	if (type == BPF_MAP_TYPE_USER_RINGBUF && (prot & PROT_WRITE)) {
		pfd = bpfrt_user_ringbuf_producer_fd(fd);
		if (pfd < 0)
			return MAP_FAILED;
		fd = pfd;
	}
	base = real_mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		if (pfd >= 0)
			close(pfd);
		return MAP_FAILED;
	}
	/* producer page and data, then the data again right after it */
	p = real_mmap(base, PRELOAD_PAGE + (size_t)size, prot, flags | MAP_FIXED, fd,
		      PRELOAD_PAGE);
	if (p != MAP_FAILED)
		p = real_mmap(base + PRELOAD_PAGE + size, size, prot, flags | MAP_FIXED, fd,
			      2 * PRELOAD_PAGE);
	if (p == MAP_FAILED) {
		int e = errno;

		munmap(base, len);
		errno = e;
		base = MAP_FAILED;
	}
	if (pfd >= 0) {
		int e = errno;

		close(pfd); /* the mappings keep its description */
		errno = e;
	}
	return base;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	uint32_t size, type;

	resolve();
	/* libbpf maps the producer page and the data twice in one call; bpfrt's file holds
	 * the data once, so it is mapped piecewise.  Only that call shape is looked at. */
	if (fd >= 0 && off == PRELOAD_PAGE && !addr && !(flags & MAP_FIXED) &&
	    (flags & MAP_SHARED) && is_ringbuf(fd, &size, &type) &&
	    len == PRELOAD_PAGE + 2 * (size_t)size)
		return map_ringbuf(len, prot, flags, fd, size, type);
	if (fd >= 0 && !off && is_perf(fd) && perf_resize(fd, len))
		return MAP_FAILED;
	return real_mmap(addr, len, prot, flags, fd, off);
}

/* libbpf calls the 64-bit name (one function on LP64: off_t is 64 bits) */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

/* Ring buffers registered with an epoll set: the map fd the caller named and the wake-up
 * pipe registered in its place (its inode: see pipe_close()). */
struct ring_wait {
	int epfd, map_fd, pipe_fd;
	int perf; /* a perf output ring (else a ring buffer map) */
	int rd_fd; /* a user ring buffer's: the read end of the pipe whose write end is
		    * registered (else -1) */
	dev_t dev;
	ino_t ino;
};

/* A user ring buffer's producer (libbpf's user_ring_buffer__new()) waits in epoll for
 * room (EPOLLOUT), which the kernel signals when a program drains; bpfrt's drain wakes
 * no one, so the set gets the write end of an empty pipe, always writable: a blocking
 * reserve (user_ring_buffer__reserve_blocking()) polls the ring until its timeout
 * instead of sleeping.  The write end, or -errno; *rd its read end. */
static int room_fd(int *rd)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	*rd = p[0];
	return p[1];
}

static struct ring_wait rings[MAX_RINGS];
static int nrings;
static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;

static struct ring_wait *ring_find(int epfd, int map_fd)
{
	for (int i = 0; i < nrings; i++)
		if (rings[i].epfd == epfd && rings[i].map_fd == map_fd)
			return &rings[i];
	return NULL;
}

/* Close the wake-up pipe of r, if its number still names it: the application may have
 * closed the set and the pipe behind the preload's back (close_range(), a raw close(2))
 * and opened files of its own under those numbers since; closing the set's number then
 * must close none of them. */
static void pipe_close(const struct ring_wait *r)
{
	struct stat st;

	if (!fstat(r->pipe_fd, &st) && S_ISFIFO(st.st_mode) && st.st_dev == r->dev &&
	    st.st_ino == r->ino)
		close(r->pipe_fd);
	if (r->rd_fd >= 0 && !fstat(r->rd_fd, &st) && S_ISFIFO(st.st_mode) &&
	    st.st_dev == r->dev && st.st_ino == r->ino)
		close(r->rd_fd);
}

static int ring_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev, int perf,
			  uint32_t type)
{
	struct ring_wait *r;
	struct stat st;
	int ret = -1, err = 0, pfd, rd = -1;

	pthread_mutex_lock(&rings_lock);
	r = ring_find(epfd, fd);
	if (op == EPOLL_CTL_ADD) {
		if (r) {
			err = EEXIST;
		} else if (nrings == MAX_RINGS) {
			err = ENOSPC;
		} else if ((pfd = perf				       ? bpfrt_perf_ring_poll_fd(fd)
				  : type == BPF_MAP_TYPE_USER_RINGBUF ? room_fd(&rd)
								      : bpfrt_ringbuf_poll_fd(fd)) < 0) {
			err = -pfd;
		} else if (fstat(pfd, &st) || real_epoll_ctl(epfd, op, pfd, ev) < 0) {
			err = errno;
			close(pfd);
			if (rd >= 0)
				close(rd);
		} else {
			rings[nrings++] = (struct ring_wait){ epfd, fd, pfd, perf, rd, st.st_dev,
							      st.st_ino };
			ret = 0;
		}
	} else if (!r) {
		err = ENOENT;
	} else if ((ret = real_epoll_ctl(epfd, op, r->pipe_fd, ev)) < 0) {
		err = errno;
	} else if (op == EPOLL_CTL_DEL) {
		pipe_close(r);
		*r = rings[--nrings];
	}
	pthread_mutex_unlock(&rings_lock);
	if (ret < 0)
		errno = err;
	return ret;
}

/* libbpf's ring_buffer__free() and perf_buffer__free() close their epoll set without
 * EPOLL_CTL_DEL: the wake-up pipes registered in it are closed with it, so the process
 * stops being the rings' consumer (a ring buffer's freeze then succeeds, as the kernel's
 * after libbpf's munmap() of the consumer page) and no pipe is left open per ring. */
void ring_epoll_closed(int epfd)
{
	struct ring_wait gone[MAX_RINGS];
	int n = 0;

	pthread_mutex_lock(&rings_lock);
	for (int i = 0; i < nrings;) {
		if (rings[i].epfd == epfd) {
			gone[n++] = rings[i];
			rings[i] = rings[--nrings];
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&rings_lock);
	for (int i = 0; i < n; i++)
		pipe_close(&gone[i]);
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	uint32_t size, type;
	int ret;

	resolve();
	ret = real_epoll_ctl(epfd, op, fd, ev);
	/* The kernel refuses a regular file (a bpfrt object) with EPERM; only then look. */
	if (ret < 0 && errno == EPERM) {
		if (is_ringbuf(fd, &size, &type))
			return ring_epoll_ctl(epfd, op, fd, ev, 0, type);
		if (is_perf(fd))
			return ring_epoll_ctl(epfd, op, fd, ev, 1, 0);
		errno = EPERM; /* is_ringbuf() asked bpfrt, which set errno */
	}
	if (ret < 0 && errno == ENOENT && op != EPOLL_CTL_ADD) {
		pthread_mutex_lock(&rings_lock);
		struct ring_wait *r = ring_find(epfd, fd);
		int perf = r ? r->perf : 0;

		ret = r ? 1 : -1;
		pthread_mutex_unlock(&rings_lock);
		if (ret > 0)
			return ring_epoll_ctl(epfd, op, fd, ev, perf, 0);
		errno = ENOENT;
	}
	return ret;
}

/* After a wait: empty the wake-up pipes of epfd's rings.  Records whose wake-ups these
 * bytes were are in the ring already, so the consumption that follows sees them; a
 * record submitted later writes a new byte once the consumer catches up. */
static void drain(int epfd)
{
	char buf[256];

	pthread_mutex_lock(&rings_lock);
	for (int i = 0; i < nrings; i++)
		if (rings[i].epfd == epfd && rings[i].perf)
			bpfrt_perf_ring_drain(rings[i].map_fd); /* re-arms its wake-ups too */
		else if (rings[i].epfd == epfd && rings[i].rd_fd < 0) /* no user ring buffer's */
			while (read(rings[i].pipe_fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf))
				;
	pthread_mutex_unlock(&rings_lock);
}

int epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
	int n;

	resolve();
	n = real_epoll_wait(epfd, evs, max, timeout);
	if (n > 0 && nrings)
		drain(epfd);
	return n;
}

int epoll_pwait(int epfd, struct epoll_event *evs, int max, int timeout, const sigset_t *ss)
{
	int n;

	resolve();
	n = real_epoll_pwait(epfd, evs, max, timeout, ss);
	if (n > 0 && nrings)
		drain(epfd);
	return n;
}
