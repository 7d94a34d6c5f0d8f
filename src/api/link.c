/* link.c - link fds: what keeps a program attached to an event source.  A link's fd is
 * one end of a socketpair; the runtime keeps the other end and a thread per link that
 * waits on it (and on the source's own fds, for sources that need reading).  When every
 * copy of the user's fd is closed, in any process, the peer sees a hangup and the thread
 * detaches the program - close() detaches, as in the kernel.  bpfrt_link_detach()
 * (BPF_LINK_DETACH) detaches at once and leaves the fd open but inert.  A link holds a
 * reference on its program, so closing the program's fd alone does not detach it (the
 * kernel's bpf_link rule).  A link published as a kernel link type gets an id and a
 * record other processes read (link_rec.c); a byte written on the user's end (a detach
 * from another process) stops the thread as a hangup does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "api/api.h"
#include "api/link_rec.h"
#include "obj/obj.h"
#include "util/util.h"

static pthread_mutex_t links_lock = PTHREAD_MUTEX_INITIALIZER;
static struct brt_link *links;
/* links listed (changed under links_lock): bpfrt_link_close() of an fd when there are
 * none is a close() and nothing else (the preload calls it for every close()) */
static atomic_int nlisted;
/* This thread holds links_lock: the record files closed meanwhile (link_rec.c) reach
 * bpfrt_link_close() through the preload's close(), which must not take it again. */
static _Thread_local int holding;

static void lock_links(void)
{
	pthread_mutex_lock(&links_lock);
	holding = 1;
}

static void unlock_links(void)
{
	holding = 0;
	pthread_mutex_unlock(&links_lock);
}

static int fd_ino(int fd, dev_t *dev, ino_t *ino)
{
	struct stat st;

	/* nonzero on every failure (callers read *dev and *ino only after a 0): errno as
	 * the compiler sees it may be 0 */
	if (fstat(fd, &st))
		return errno > 0 ? -errno : -EBADF;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* The wait of links without their own loop: until hangup or stop. */
static void wait_stop(struct brt_link *link)
{
	struct pollfd p[2] = { { .fd = link->peer, .events = POLLIN },
			       { .fd = link->wake, .events = POLLIN } };

	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
}

int brt_link_stopping(const struct pollfd *peer_wake)
{
	/* nothing is ever sent on a link: a readable peer means the user's end is closed */
	return peer_wake[0].revents || peer_wake[1].revents;
}

int brt_link_should_stop(const struct brt_link *link)
{
	struct pollfd p[2] = { { .fd = link->peer, .events = POLLIN },
			       { .fd = link->wake, .events = POLLIN } };

	return poll(p, 2, 0) > 0 && brt_link_stopping(p);
}

static int fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

static void link_free(struct brt_link *link)
{
	close(link->peer);
	close(link->wake);
	if (link->prog)
		brt_obj_put(&link->prog->obj);
	free(link);
}

static void unlist(struct brt_link *link)
{
	for (struct brt_link **p = &links; *p; p = &(*p)->next)
		if (*p == link) {
			*p = link->next;
			atomic_fetch_sub_explicit(&nlisted, 1, memory_order_relaxed);
			return;
		}
}

/* The kernel's perf and raw tracepoint links have no detach (link_detach(): the link
 * ops' detach is NULL): BPF_LINK_DETACH of one answers EOPNOTSUPP. */
static int kernel_detachable(uint32_t type)
{
	return type != BRT_LINK_PERF_EVENT && type != BRT_LINK_RAW_TRACEPOINT;
}

/* Does some fd of the user's end remain (no hangup on the peer)? */
static int user_end_open(const struct brt_link *link)
{
	struct pollfd p = { .fd = link->peer, .events = POLLIN };

	return poll(&p, 1, 0) >= 0 && !(p.revents & (POLLHUP | POLLERR));
}

/* Take the link's record away (links_lock held): no other process finds it any more. */
static void unpublish(struct brt_link *link)
{
	if (link->rec_id)
		brt_link_rec_remove(link->rec_id, link->peer_ino);
	link->rec_id = 0;
}

static void *link_thread(void *arg)
{
	struct brt_link *link = arg;
	int joined;

	if (link->ops->run)
		link->ops->run(link);
	else
		wait_stop(link);
	lock_links();
	link->stopped = 1;
	/* a detach (not the last close) of a link the kernel keeps listing once detached */
	if (link->rec_id && kernel_detachable(link->rec_type) && user_end_open(link)) {
		brt_link_rec_detached(link->rec_id, link->peer_ino);
		link->rec_id = 0;
	}
	unpublish(link);
	unlock_links();
	link->ops->detach(link);
	lock_links();
	unlist(link);
	joined = link->joined;
	if (!joined)
		pthread_detach(pthread_self());
	unlock_links();
	if (!joined)
		link_free(link);
	return NULL;
}

int brt_link_create(const struct brt_link_ops *ops, struct brt_prog *prog, void *priv,
		    struct brt_link **out)
{
	struct brt_link *link = calloc(1, sizeof(*link));
	int sv[2] = { -1, -1 }, err;

	if (!link)
		return -ENOMEM;
	link->ops = ops;
	link->priv = priv;
	link->peer = -1;
	link->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (link->wake < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		goto out_free;
	}
	link->peer = sv[1];
	err = fd_ino(sv[0], &link->dev, &link->ino);
	if (err)
		goto out_free;
	brt_obj_get(&prog->obj);
	link->prog = prog;
	*out = link;
	lock_links();
	err = pthread_create(&link->thread, NULL, link_thread, link);
	if (!err) {
		link->next = links;
		links = link;
		atomic_fetch_add_explicit(&nlisted, 1, memory_order_relaxed);
	}
	unlock_links();
	if (err) {
		err = -err;
		goto out_free;
	}
	return sv[0];
out_free:
	if (sv[0] >= 0)
		close(sv[0]);
	if (link->wake >= 0)
		close(link->wake);
	if (link->peer >= 0)
		close(link->peer);
	if (link->prog)
		brt_obj_put(&link->prog->obj);
	free(link);
	return err;
}

static void publish(struct brt_link *link, void *arg)
{
	const struct brt_link_desc *d = arg;
	struct stat st;
	uint32_t id;

	if (link->stopped || link->rec_id || fstat(link->peer, &st))
		return;
	id = brt_obj_new_id(BRT_OBJ_LINK);
	link->peer_ino = st.st_ino;
	if (!brt_link_rec_write(d, id, link->prog->obj.snap.id, link->peer, st.st_ino,
				link->ino)) {
		link->rec_id = id;
		link->rec_type = d->type;
	}
}

void brt_link_publish(int link_fd, const struct brt_link_desc *d)
{
	brt_link_with(link_fd, NULL, publish, (void *)(uintptr_t)d);
}

/* The live link behind fd (links_lock held), or NULL. */
static struct brt_link *find(int fd)
{
	dev_t dev;
	ino_t ino;

	if (fd_ino(fd, &dev, &ino))
		return NULL;
	for (struct brt_link *l = links; l; l = l->next)
		if (l->ino == ino && l->dev == dev)
			return l;
	return NULL;
}

int bpfrt_link_detach(int link_fd)
{
	struct brt_link *link;
	uint64_t one = 1;

	lock_links();
	link = find(link_fd);
	if (link) {
		link->joined = 1;
		(void)!write(link->wake, &one, sizeof(one));
	}
	unlock_links();
	if (!link)
		return -(errno = fd_open(link_fd) ? EINVAL : EBADF);
	pthread_join(link->thread, NULL);
	link_free(link);
	return 0;
}

/* close() of a link fd, and when it was the link's last fd in every process (the peer
 * sees the hangup at once), the link's detach waited for: the kernel's close() of a
 * link's last fd releases the link before it returns (bpf_link_release(): the program
 * is off the tracepoint or perf event, its rings unmapped), where the link thread alone
 * would do it a little later.  Another copy of the fd left open (dup, fork, SCM_RIGHTS):
 * only closed, as the kernel's close() of a copy.  Any other fd: closed.  The close is
 * the system call itself, not libc's close(): the preload's close() (an interposed
 * symbol this library's calls would reach too) is where this is called from. */
int bpfrt_link_close(int link_fd)
{
	struct brt_link *link = NULL, *l;
	dev_t dev = 0;
	ino_t ino = 0;

	if (!holding && atomic_load_explicit(&nlisted, memory_order_relaxed)) {
		lock_links();
		link = find(link_fd);
		if (link) {
			dev = link->dev;
			ino = link->ino;
		}
		unlock_links();
	}
	if (syscall(SYS_close, link_fd))
		return -errno;
	if (!link)
		return 0;
	lock_links();
	/* still listed: its thread has not yet read joined (it does, and unlists itself,
	 * under this lock), so setting joined here makes the join below ours */
	for (l = links; l && l != link; l = l->next)
		;
	if (!l || l->dev != dev || l->ino != ino || l->joined || user_end_open(l)) {
		unlock_links();
		return 0;
	}
	l->joined = 1;
	unlock_links();
	pthread_join(l->thread, NULL);
	link_free(l);
	return 0;
}

int brt_link_with(int fd, const struct brt_link_ops *ops,
		  void (*fn)(struct brt_link *link, void *arg), void *arg)
{
	struct brt_link *link;

	lock_links();
	link = find(fd);
	if (link && (!ops || link->ops == ops))
		fn(link, arg);
	unlock_links();
	if (!link || (ops && link->ops != ops))
		return fd_open(fd) ? -EINVAL : -EBADF;
	return 0;
}

static void hide(struct brt_link *link, void *arg)
{
	(void)arg;
	unpublish(link);
	link->rec_type = 0;
}

int bpfrt_link_hide(int link_fd)
{
	int err = brt_link_with(link_fd, NULL, hide, NULL);

	return err ? -(errno = -err) : 0;
}

static void read_type(struct brt_link *link, void *arg)
{
	*(uint32_t *)arg = link->rec_type;
}

static void read_stats(struct brt_link *link, void *arg)
{
	struct bpfrt_link_stats *st = arg;

	memset(st, 0, sizeof(*st));
	st->events = atomic_load(&link->events);
	st->lost = atomic_load(&link->lost);
	st->errors = atomic_load(&link->errors);
	st->nonzero = atomic_load(&link->nonzero);
}

int bpfrt_link_stats(int link_fd, struct bpfrt_link_stats *st)
{
	int err = brt_link_with(link_fd, NULL, read_stats, st);

	return err ? -(errno = -err) : 0;
}

int brt_cmd_link_detach(struct brt_call *call)
{
	int fd = (int)call->attr->link_detach.link_fd, err;
	char name[BRT_LINK_REC_NAME_MAX];
	struct brt_link_rec r;
	uint32_t type = 0;

	if (!brt_link_with(fd, NULL, read_type, &type)) {
		if (!kernel_detachable(type))
			return -EOPNOTSUPP;
		err = bpfrt_link_detach(fd);
		return err < 0 ? err : 0;
	}
	/* another process's link (an fd from LINK_GET_FD_BY_ID, SCM_RIGHTS, fork) */
	if (!brt_link_rec_of_fd(fd, &r, name))
		return kernel_detachable(r.type) ? brt_link_rec_detach_remote(fd, &r)
						 : -EOPNOTSUPP;
	return fd_open(fd) ? -EINVAL : -EBADF;
}
