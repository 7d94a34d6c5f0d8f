/* test_ringbuf.c - ring buffer maps against the kernel: creation rules, element commands
 * (ENOTSUPP), and records written by programs (bpf_ringbuf_output, reserve + submit,
 * reserve + discard, a full buffer) read back - through bpfrt_ringbuf_consume() here and
 * through the kernel's mmap()ed consumer/producer pages there - and compared.  Wake-ups:
 * bpfrt_ringbuf_poll_fd() polled with epoll must become readable when the kernel's map fd
 * does (submit to a caught-up consumer, BPF_RB_FORCE_WAKEUP, not after consuming), also
 * when the producer is another process.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "harness.h"
#include "api/diff.h"

#define RB_SIZE 4096

static const char *const progs[] = {
	/* output 16 bytes from the stack; r0 = the helper's result */
	"stdw [%r10-8], 0x11223344\nstdw [%r10-16], 42\nmov %r2, %r10\nadd %r2, -16\n"
	"mov %r3, 16\nmov %r4, 0\nlddw %r1, map_fd 0\ncall 130\nexit\n",
	/* reserve 12, fill, submit */
	"lddw %r1, map_fd 0\nmov %r2, 12\nmov %r3, 0\ncall 131\njeq %r0, 0, +6\n"
	"stdw [%r0+0], 7\nstw [%r0+8], 9\nmov %r1, %r0\nmov %r2, 0\ncall 132\nmov %r0, 1\nexit\n",
	/* reserve 8, discard */
	"lddw %r1, map_fd 0\nmov %r2, 8\nmov %r3, 0\ncall 131\njeq %r0, 0, +4\n"
	"stdw [%r0+0], 5\nmov %r1, %r0\nmov %r2, 0\ncall 133\nmov %r0, 2\nexit\n",
	/* output 1000 bytes of stack-less data: the packet is not memory here, so 488 stack
	 * bytes twice is too much; output 400 bytes of stack */
	"mov %r1, 0\nstdw [%r10-400], 1\nmov %r2, %r10\nadd %r2, -400\nmov %r3, 400\n"
	"mov %r4, 0\nlddw %r1, map_fd 0\ncall 130\nexit\n",
};

struct rec_log {
	int n;
	uint32_t size[64];
	unsigned char data[64][16];
	int ret[32];
	int nret;
	int create_err[4];
	int cmd_err[4];
};

static int log_rec(void *arg, void *data, size_t size)
{
	struct rec_log *l = arg;

	if (l->n < 64) {
		l->size[l->n] = (uint32_t)size;
		/* the 400-byte records carry uninitialised stack after their first word */
		memcpy(l->data[l->n], data, size == 400 ? 8 : size < 16 ? size : 16);
		l->n++;
	}
	return 0;
}

/* The kernel side's consumer over its mmap()ed pages. */
static void consume_kernel(int fd, struct rec_log *l)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t *cons = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unsigned char *prod = mmap(NULL, pg + 2 * RB_SIZE, PROT_READ, MAP_SHARED, fd, pg);
	unsigned char *data = prod + pg;

	T_ASSERT(cons != MAP_FAILED && prod != MAP_FAILED);
	for (;;) {
		uint64_t p = __atomic_load_n((uint64_t *)prod, __ATOMIC_ACQUIRE), c = *cons;
		uint32_t len;

		if (c >= p)
			break;
		len = __atomic_load_n((uint32_t *)(data + (c & (RB_SIZE - 1))), __ATOMIC_ACQUIRE);
		if (len & (1u << 31))
			break;
		if (!(len & (1u << 30)))
			log_rec(l, data + (c & (RB_SIZE - 1)) + 8, len & 0x3fffffff);
		c += ((len & 0x3fffffff) + 8 + 7) & ~7ull;
		__atomic_store_n(cons, c, __ATOMIC_RELEASE);
	}
	munmap(cons, pg);
	munmap(prod, pg + 2 * RB_SIZE);
}

static int create(sys_fn sys, uint32_t key, uint32_t value, uint32_t max)
{
	return diff_map_new(sys, BPF_MAP_TYPE_RINGBUF, key, value, max, 0);
}

static int load(sys_fn sys, const char *text, int map_fd)
{
	struct bpf_insn *insns;
	char err[128];
	size_t n;
	int fd;

	if (bpfrt_asm(text, "rb", &insns, &n, err, sizeof(err))) {
		T_FAIL("asm: %s", err);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg == 1)
			insns[i].imm = map_fd;
	fd = diff_prog_load(sys, BPF_PROG_TYPE_SOCKET_FILTER, insns, (uint32_t)n);
	free(insns);
	return fd;
}

static int run(sys_fn sys, int prog)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
		return -1000 - errno;
	return (int)a.test.retval;
}

static void scenario(sys_fn sys, struct rec_log *l)
{
	static const uint32_t bad[][3] = { { 0, 0, 4095 }, { 0, 0, 12288 }, { 4, 0, 4096 },
					   { 0, 8, 4096 } };
	uint32_t key = 0;
	uint64_t val = 0;
	union bpf_attr a;
	int fd, p[4];

	memset(l, 0, sizeof(*l));
	for (int i = 0; i < 4; i++) {
		fd = create(sys, bad[i][0], bad[i][1], bad[i][2]);
		l->create_err[i] = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	}
	fd = create(sys, 0, 0, RB_SIZE);
	T_ASSERT(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&val;
	l->cmd_err[0] = sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) ? errno : 0;
	l->cmd_err[1] = sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)) ? errno : 0;
	l->cmd_err[2] = sys(BPF_MAP_DELETE_ELEM, &a, sizeof(a)) ? errno : 0;
	a.next_key = a.value;
	l->cmd_err[3] = sys(BPF_MAP_GET_NEXT_KEY, &a, sizeof(a)) ? errno : 0;
	for (int i = 0; i < 4; i++) {
		p[i] = load(sys, progs[i], fd);
		T_ASSERT(p[i] >= 0);
	}
	l->ret[l->nret++] = run(sys, p[0]);
	l->ret[l->nret++] = run(sys, p[1]);
	l->ret[l->nret++] = run(sys, p[2]);
	l->ret[l->nret++] = run(sys, p[0]);
	for (int i = 0; i < 12; i++)
		l->ret[l->nret++] = run(sys, p[3]);
	if (sys == sys_kernel)
		consume_kernel(fd, l);
	else
		T_ASSERT(bpfrt_ringbuf_consume(fd, log_rec, l) >= 0);
	/* room again after consuming */
	l->ret[l->nret++] = run(sys, p[0]);
	for (int i = 0; i < 4; i++)
		close(p[i]);
	close(fd);
}

/* output 16 bytes with flags %d in r4 */
static const char wake_prog[] =
	"stdw [%%r10-8], 1\nstdw [%%r10-16], 2\nmov %%r2, %%r10\nadd %%r2, -16\n"
	"mov %%r3, 16\nmov %%r4, %d\nlddw %%r1, map_fd 0\ncall 130\nexit\n";

static int ready(int fd, int timeout_ms)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC), n;

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		return -1;
	n = epoll_wait(ep, &ev, 1, timeout_ms);
	close(ep);
	return n;
}

enum { W_EMPTY, W_SUBMIT, W_CONSUMED, W_FORCE, W_CONSUMED2, W_NOWAKE, W_CHILD, W_N };

/* Readiness after each step; the kernel polls its map fd, bpfrt the poll fd. */
static void wake_scenario(sys_fn sys, int res[W_N])
{
	char text[512];
	int fd = create(sys, 0, 0, RB_SIZE), pfd, p[3];
	struct rec_log l = { 0 };
	pid_t pid;
	int st;

	T_ASSERT(fd >= 0);
	pfd = sys == sys_kernel ? fd : bpfrt_ringbuf_poll_fd(fd);
	T_ASSERT(pfd >= 0);
	for (int i = 0; i < 3; i++) {
		snprintf(text, sizeof(text), wake_prog,
			 i == 0 ? 0 : i == 1 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
		p[i] = load(sys, text, fd);
		T_ASSERT(p[i] >= 0);
	}
	res[W_EMPTY] = ready(pfd, 0);
	run(sys, p[0]);
	res[W_SUBMIT] = ready(pfd, 0);
	run(sys, p[0]); /* the consumer is behind: no new wake-up, still readable */
	if (sys == sys_kernel)
		consume_kernel(fd, &l);
	else
		bpfrt_ringbuf_consume(fd, NULL, NULL);
	res[W_CONSUMED] = ready(pfd, 0);
	run(sys, p[0]);
	if (sys == sys_kernel)
		consume_kernel(fd, &l);
	else
		bpfrt_ringbuf_consume(fd, NULL, NULL);
	/* a forced wake-up with the consumer behind */
	run(sys, p[2]);
	run(sys, p[1]);
	res[W_FORCE] = ready(pfd, 0);
	if (sys == sys_kernel)
		consume_kernel(fd, &l);
	else
		bpfrt_ringbuf_consume(fd, NULL, NULL);
	res[W_CONSUMED2] = ready(pfd, 0);
	/* BPF_RB_NO_WAKEUP: the kernel's poll still sees the data, bpfrt's pipe has no
	 * byte (a documented difference) */
	run(sys, p[2]);
	res[W_NOWAKE] = ready(pfd, 0);
	if (sys == sys_kernel)
		consume_kernel(fd, &l);
	else
		bpfrt_ringbuf_consume(fd, NULL, NULL);
	/* another process produces while this one sleeps in epoll_wait */
	pid = fork();
	if (pid == 0) {
		usleep(50000);
		_exit(run(sys, p[0]) == 0 ? 0 : 1);
	}
	res[W_CHILD] = ready(pfd, 20000);
	waitpid(pid, &st, 0);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (int i = 0; i < 3; i++)
		close(p[i]);
	if (pfd != fd)
		close(pfd);
	close(fd);
}

static void test_wake(int kernel)
{
	static const int want[W_N] = { 0, 1, 0, 1, 0, 0, 1 };
	int mine[W_N], theirs[W_N], arr;

	wake_scenario(sys_bpfrt, mine);
	T_CASE("wake-ups: bpfrt");
	for (int i = 0; i < W_N; i++)
		T_EQ_INT(want[i], mine[i]);
	arr = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
	T_EQ_INT(-EINVAL, bpfrt_ringbuf_poll_fd(arr));
	close(arr);
	T_EQ_INT(-EBADF, bpfrt_ringbuf_poll_fd(-1));
	if (!kernel)
		return;
	wake_scenario(sys_kernel, theirs);
	T_CASE("wake-ups: same as the kernel");
	for (int i = 0; i < W_N; i++)
		if (i != W_NOWAKE)
			T_EQ_INT(theirs[i], mine[i]);
	T_EQ_INT(1, theirs[W_NOWAKE]);
}

int main(void)
{
	static struct rec_log mine, theirs;
	int kernel = kernel_available();

	test_wake(kernel);

	scenario(sys_bpfrt, &mine);
	T_CASE("bpfrt");
	T_EQ_INT(EINVAL, mine.create_err[0]);
	T_EQ_INT(EINVAL, mine.create_err[1]);
	T_EQ_INT(EINVAL, mine.cmd_err[0]); /* a key for a keyless map, checked first */
	T_EQ_INT(0, mine.ret[0]);
	T_EQ_INT(1, mine.ret[1]);
	T_EQ_INT(2, mine.ret[2]);
	T_EQ_INT(-EAGAIN, mine.ret[15]);
	T_EQ_INT(0, mine.ret[16]);
	T_ASSERT(mine.n >= 4);
	T_EQ_INT(16, mine.size[0]);
	T_EQ_INT(12, mine.size[1]);
	T_EQ_INT(42, mine.data[0][0]);
	T_EQ_INT(7, mine.data[1][0]);
	if (!kernel)
		return t_done();
	scenario(sys_kernel, &theirs);
	T_CASE("same as the kernel");
	for (int i = 0; i < 4; i++) {
		T_EQ_INT(theirs.create_err[i], mine.create_err[i]);
		T_EQ_INT(theirs.cmd_err[i], mine.cmd_err[i]);
	}
	T_EQ_INT(theirs.nret, mine.nret);
	for (int i = 0; i < mine.nret; i++)
		T_EQ_INT(theirs.ret[i], mine.ret[i]);
	T_EQ_INT(theirs.n, mine.n);
	for (int i = 0; i < mine.n && i < theirs.n; i++) {
		T_EQ_INT(theirs.size[i], mine.size[i]);
		if (memcmp(theirs.data[i], mine.data[i], 16)) {
			T_FAIL("record %d differs", i);
			for (int j = 0; j < 16; j++)
				fprintf(stderr, "%02x/%02x ", mine.data[i][j], theirs.data[i][j]);
			fprintf(stderr, "\n");
		}
	}
	return t_done();
}
