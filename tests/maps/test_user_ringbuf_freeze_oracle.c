/* test_user_ringbuf_freeze_oracle.c - BPF_MAP_FREEZE of a BPF_MAP_TYPE_USER_RINGBUF and its
 * producer's writable mapping, against the kernel.  The kernel counts a map's writable
 * mappings (bpf_map_mmap(): writecnt; a forked child's copy of one counts, munmap()
 * uncounts): map_freeze() is EBUSY while one lasts, and bpf_map_mmap() refuses a writable
 * mapping of a frozen map (EPERM) but makes a read-only one.  The producer (libbpf's
 * user_ring_buffer__new()) maps the producer page writable.  bpfrt's fd is the map's
 * file, whose mmap() bpfrt does not see: its producer maps through
 * bpfrt_user_ringbuf_producer_fd() (the preload does it for libbpf).  Before session 24
 * bpfrt froze a user ring buffer under its producer (0 for EBUSY) and mapped a frozen
 * one writable (0 for EPERM).  Each side's steps through syscall(__NR_bpf) with mmap() of
 * the map's fd, and bpfrt_bpf() with the producer fd; the answers must be equal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"

#define PAGE 4096
#define NSTEPS 13

static int freeze(sys_fn sys, int fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	return sys(BPF_MAP_FREEZE, &a, sizeof(a)) ? -errno : 0;
}

/* The producer page mapped (prot), as the producer maps it: the kernel's through the
 * map's fd, bpfrt's writable one through the producer fd.  The address, or NULL with
 * *err set. */
static void *producer_map(sys_fn sys, int fd, int prot, int *err)
{
	int mfd = fd;
	void *m;

	if (sys == bpfrt_bpf && (prot & PROT_WRITE)) {
		mfd = bpfrt_user_ringbuf_producer_fd(fd);
		if (mfd < 0) {
			*err = mfd;
			return NULL;
		}
	}
	m = mmap(NULL, PAGE, prot, MAP_SHARED, mfd, PAGE);
	*err = m == MAP_FAILED ? -errno : 0;
	if (mfd != fd)
		close(mfd);
	return m == MAP_FAILED ? NULL : m;
}

static int unmap(void *m)
{
	return m && !munmap(m, PAGE) ? 0 : -EINVAL;
}

static const char *const names[NSTEPS] = {
	"freeze with no producer mapping",
	"producer's writable mapping of the frozen map: EPERM",
	"read-only mapping of the frozen map's producer page",
	"producer mapping of a second map",
	"freeze under the producer mapping: EBUSY",
	"a second producer mapping, the first unmapped: freeze EBUSY",
	"the second unmapped: freeze",
	"producer mapping of a third map, then fork",
	"parent unmapped, the child's copy lasts: freeze EBUSY",
	"the child exited: freeze",
	"producer mapping of the frozen third map: EPERM",
	"freeze again: EPERM (a frozen map has no write access)",
	"producer mapping through a write-only fd: EACCES",
};

/* a BPF_F_WRONLY fd of the map fd names (MAP_GET_FD_BY_ID), or -errno */
static int wronly_fd(sys_fn sys, int fd)
{
	struct bpf_map_info info;
	union bpf_attr a;
	int r;

	if ((r = map_info(sys, fd, &info)))
		return r;
	memset(&a, 0, sizeof(a));
	a.map_id = info.id;
	a.open_flags = BPF_F_WRONLY;
	r = sys(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	return r < 0 ? -errno : r;
}

static void steps(sys_fn sys, int *r)
{
	int u1 = create_map(sys, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0);
	int u2 = create_map(sys, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0);
	int u3 = create_map(sys, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0);
	int p[2], q[2], st = 0, u4;
	void *a, *b;
	char c = 0;
	pid_t pid;

	for (int i = 0; i < NSTEPS; i++)
		r[i] = -1000;
	if (u1 < 0 || u2 < 0 || u3 < 0 || pipe(p) || pipe(q))
		return;
	r[0] = freeze(sys, u1);
	a = producer_map(sys, u1, PROT_READ | PROT_WRITE, &r[1]);
	unmap(a);
	a = producer_map(sys, u1, PROT_READ, &r[2]);
	unmap(a);

	a = producer_map(sys, u2, PROT_READ | PROT_WRITE, &r[3]);
	r[4] = freeze(sys, u2);
	b = producer_map(sys, u2, PROT_READ | PROT_WRITE, &st);
	r[5] = st ? st - 100 : (unmap(a) ? -2000 : freeze(sys, u2));
	r[6] = unmap(b) ? -2000 : freeze(sys, u2);

	a = producer_map(sys, u3, PROT_READ | PROT_WRITE, &r[7]);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* the mapping's copy lives until the parent says go */
		close(p[0]);
		close(q[1]);
		_exit(write(p[1], "r", 1) == 1 && read(q[0], &c, 1) == 1 ? 0 : 3);
	}
	close(p[1]);
	close(q[0]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		return;
	r[8] = unmap(a) ? -2000 : freeze(sys, u3);
	if (write(q[1], "x", 1) != 1 || waitpid(pid, &st, 0) != pid || st)
		return;
	r[9] = freeze(sys, u3);
	a = producer_map(sys, u3, PROT_READ | PROT_WRITE, &r[10]);
	unmap(a);
	r[11] = freeze(sys, u3);
	/* mmap() needs read access (do_mmap(): EACCES): the producer fd, a read-write
	 * description, must not be made from a write-only fd */
	u4 = create_map(sys, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0);
	st = u4 < 0 ? u4 : wronly_fd(sys, u4);
	if (st < 0) {
		r[12] = st - 100;
	} else {
		a = producer_map(sys, st, PROT_READ | PROT_WRITE, &r[12]);
		unmap(a);
		close(st);
	}
	if (u4 >= 0)
		close(u4);
	close(p[0]);
	close(q[1]);
	close(u1);
	close(u2);
	close(u3);
}

int main(void)
{
	int k[NSTEPS], b[NSTEPS], fd;

	fd = create_map(kernel_bpf, BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PAGE, 0, 0);
	if (fd < 0)
		T_SKIP("no kernel user ring buffer (root and Linux >= 6.1): %s", strerror(-fd));
	close(fd);
	steps(kernel_bpf, k);
	steps(bpfrt_bpf, b);
	for (int i = 0; i < NSTEPS; i++) {
		T_CASE(names[i]);
		if (k[i] != b[i])
			printf("differs: %s: kernel %d, bpfrt %d\n", names[i], k[i], b[i]);
		T_EQ_INT(k[i], b[i]);
	}
	/* the kernel's answers, so that both sides cannot agree on something else */
	T_CASE("the kernel's answers");
	T_EQ_INT(0, k[0]);
	T_EQ_INT(-EPERM, k[1]);
	T_EQ_INT(0, k[2]);
	T_EQ_INT(-EBUSY, k[4]);
	T_EQ_INT(-EBUSY, k[5]);
	T_EQ_INT(0, k[6]);
	T_EQ_INT(-EBUSY, k[8]);
	T_EQ_INT(0, k[9]);
	T_EQ_INT(-EPERM, k[10]);
	T_EQ_INT(-EACCES, k[12]);
	return t_done();
}
