/* test_user_ringbuf_producer_oracle.c - a user ring buffer producer's writable mapping
 * where bpfrt's bpfrt_user_ringbuf_producer_fd() had answers the kernel's mmap() of the
 * map's fd never gives (session 25):
 *  - a signal without SA_RESTART during its wait for a concurrent freeze (the open-file-
 *    description lock, maps/ringbuf.c) made it fail EINTR; the kernel's mmap() does not
 *    wait and maps;
 *  - a process the map's file refuses (it dropped its privileges after creating the map,
 *    or got the fd over SCM_RIGHTS after dropping them) got EACCES from the reopening of
 *    /proc/self/fd/N, and a ring it had never seen could not be resolved (the ring's own
 *    mapping was made the same way); the kernel maps: bpf_map_mmap() asks no credentials.
 * Each step on the kernel (mmap() of the map's fd) and on bpfrt (mmap() of the producer
 * fd), in the same order; the answers must be equal, and be the kernel's (0).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "maps/maps.h"
#include "transcript.h"

#define PAGE 4096
#define NOBODY 65534
#define NSTEPS 5

static const char *const names[NSTEPS] = {
	"producer mapping, a signal without SA_RESTART during a concurrent freeze's hold",
	"producer mapping after dropping privileges (the map created before)",
	"producer mapping of a ring received over SCM_RIGHTS after dropping privileges",
	"the received ring's record written by the child, read by the parent",
	"producer mapping through a read-only fd bpf() did not make",
};

/* The producer page mapped writable and a byte written there: 0 or -errno */
static int producer_map(sys_fn sys, int fd, unsigned char **out)
{
	int mfd = sys == bpfrt_bpf ? bpfrt_user_ringbuf_producer_fd(fd) : fd;
	void *m;

	if (mfd < 0)
		return mfd;
	m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, PAGE);
	if (mfd != fd)
		close(mfd);
	if (m == MAP_FAILED)
		return -errno;
	if (out)
		*out = m;
	else
		munmap(m, PAGE);
	return 0;
}

static atomic_int sigs, done;

static void on_sig(int sig)
{
	(void)sig;
	atomic_fetch_add(&sigs, 1);
}

struct waiter {
	sys_fn sys;
	int fd, r;
};

static void *wait_producer(void *arg)
{
	struct waiter *w = arg;

	w->r = producer_map(w->sys, w->fd, NULL);
	atomic_store(&done, 1);
	return NULL;
}

/* Step 0: bpfrt's freeze holds the producers' lock (brt_user_ringbuf_freeze_hold(), as
 * BPF_MAP_FREEZE does while it freezes); a thread maps meanwhile and is signalled while it
 * waits.  On the kernel nothing waits.  -2000: the thread was not waiting when signalled. */
static int signalled_wait(sys_fn sys)
{
	struct sigaction sa;
	struct waiter w = { sys, -1, -1000 };
	struct brt_map *map;
	int hold = -1, waited = 1;
	pthread_t th;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig; /* no SA_RESTART: a blocking fcntl() returns EINTR */
	if (sigaction(SIGUSR1, &sa, NULL))
		return -1001;
	w.fd = create_map(sys, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0);
	if (w.fd < 0)
		return w.fd - 100;
	if (sys == bpfrt_bpf) {
		if (brt_map_from_fd(w.fd, &map))
			return -1002;
		if (brt_user_ringbuf_freeze_hold(map, w.fd, &hold) || hold < 0)
			return -1003;
		brt_map_put(map);
	}
	atomic_store(&done, 0);
	atomic_store(&sigs, 0);
	if (pthread_create(&th, NULL, wait_producer, &w))
		return -1004;
	for (int i = 0; i < 5; i++) {
		usleep(20000);
		if (sys == bpfrt_bpf && atomic_load(&done))
			waited = 0; /* it did not wait for the hold */
		pthread_kill(th, SIGUSR1);
	}
	usleep(20000);
	if (sys == bpfrt_bpf && (atomic_load(&done) || atomic_load(&sigs) < 5))
		waited = 0;
	if (hold >= 0)
		close(hold);
	pthread_join(th, NULL);
	close(w.fd);
	return waited ? w.r : w.r < 0 ? w.r : -2000;
}

static int drop_privileges(void)
{
	return setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
			       setresuid(NOBODY, NOBODY, NOBODY) ?
		       -errno :
		       0;
}

static int send_fd(int sock, int fd)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 }, c = 'f';
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			     .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 }, c;
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			     .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, 0) != 1 || !(cm = CMSG_FIRSTHDR(&mh)) ||
	    cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Steps 1-3 in a child that drops its privileges: the first ring created before (and
 * inherited), the second created by the parent afterwards and sent over SCM_RIGHTS; the
 * child writes its answer byte into the second ring's producer page (*pp), which the
 * parent reads through a mapping of its own (step 3: 1 when it sees the child's byte). */
static void unprivileged(sys_fn sys, int *r)
{
	int before = create_map(sys, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0);
	int sv[2], st = 0, after, res[2];
	unsigned char *mine, *theirs = NULL;
	pid_t pid;

	r[1] = r[2] = r[3] = -1000;
	if (before < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd;

		close(sv[0]);
		res[0] = drop_privileges();
		if (!res[0])
			res[0] = producer_map(sys, before, NULL);
		fd = recv_fd(sv[1]);
		res[1] = fd < 0 ? -1005 : producer_map(sys, fd, &theirs);
		if (theirs)
			theirs[8] = 0xa5;
		_exit(write(sv[1], res, sizeof(res)) == sizeof(res) ? 0 : 3);
	}
	close(sv[1]);
	after = create_map(sys, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0);
	if (pid < 0 || after < 0 || send_fd(sv[0], after) ||
	    read(sv[0], res, sizeof(res)) != sizeof(res) || waitpid(pid, &st, 0) != pid || st)
		return;
	r[1] = res[0];
	r[2] = res[1];
	r[3] = producer_map(sys, after, &mine) ? -1006 : mine[8] == 0xa5;
	if (!r[3])
		printf("the child's byte: %#x\n", mine[8]);
	close(sv[0]);
	close(before);
	close(after);
}

/* A read-only fd of a new ring: the kernel's from BPF_MAP_GET_FD_BY_ID with BPF_F_RDONLY;
 * bpfrt's a read-only open of its file through /proc (no bpf() call marks the map as
 * having read-only fds: bpfrt_user_ringbuf_producer_fd() must ask the fd itself).  The
 * producer mapping through it: -EACCES on both sides (do_mmap()). */
static int readonly_fd(sys_fn sys)
{
	int fd = create_map(sys, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0), ro, r;
	struct bpf_map_info info;
	union bpf_attr a;
	char path[48];

	if (fd < 0)
		return -1000;
	if (sys == kernel_bpf) {
		memset(&info, 0, sizeof(info));
		if (map_info(sys, fd, &info))
			return -1001;
		memset(&a, 0, sizeof(a));
		a.map_id = info.id;
		a.open_flags = BPF_F_RDONLY;
		ro = sys(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	} else {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ro = open(path, O_RDONLY | O_CLOEXEC);
	}
	r = ro < 0 ? -1002 : producer_map(sys, ro, NULL);
	if (ro >= 0)
		close(ro);
	close(fd);
	return r;
}

int main(void)
{
	int k[NSTEPS], b[NSTEPS], fd;

	fd = create_map(kernel_bpf, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0);
	if (fd < 0)
		T_SKIP("no kernel user ring buffer (root and Linux >= 6.1): %s", strerror(-fd));
	close(fd);
	if (geteuid())
		T_SKIP("not root: no privileges to drop");
	k[0] = signalled_wait(kernel_bpf);
	b[0] = signalled_wait(bpfrt_bpf);
	unprivileged(kernel_bpf, k);
	unprivileged(bpfrt_bpf, b);
	k[4] = readonly_fd(kernel_bpf);
	b[4] = readonly_fd(bpfrt_bpf);
	for (int i = 0; i < NSTEPS; i++) {
		T_CASE(names[i]);
		if (k[i] != b[i])
			printf("differs: %s: kernel %d, bpfrt %d\n", names[i], k[i], b[i]);
		T_EQ_INT(k[i], b[i]);
	}
	T_CASE("the kernel's answers");
	T_EQ_INT(0, k[0]);
	T_EQ_INT(0, k[1]);
	T_EQ_INT(0, k[2]);
	T_EQ_INT(1, k[3]);
	T_EQ_INT(-EACCES, k[4]);
	return t_done();
}
