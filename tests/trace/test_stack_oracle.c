/* test_stack_oracle.c - bpf_get_stackid() and bpf_get_stack() on the call chains of
 * kernel tracepoint records, against the kernel.
 *
 * One tracepoint program (for this process only) calls both helpers every way a real
 * program does: user and kernel stacks, a skip, BPF_F_FAST_STACK_CMP, a one-bucket map
 * with and without BPF_F_REUSE_STACKID (-EEXIST for a second stack), a build-id map and
 * BPF_F_USER_BUILD_ID, a skip past the stack (-EFAULT), and writes every answer and
 * buffer into an array.  It runs attached in the kernel (perf event + SET_BPF) and in
 * bpfrt (bpfrt_tracepoint_attach: the records' PERF_SAMPLE_CALLCHAIN), on the same
 * three events from the same call sites (two stacks): task:task_rename
 * (prctl(PR_SET_NAME): kernel and user chains) and syscalls:sys_enter_getppid.  Both
 * sides' answers, buffers and stack maps (ids and frames) must be equal, and the kernel
 * frames bpfrt saw must be kernel text in /proc/kallsyms.  Known difference: a
 * syscalls:* record carries no kernel chain (perf samples it from the syscall's user
 * registers; the kernel's program gets registers fetched in perf_syscall_enter(), a
 * kernel chain), so bpfrt's kernel stacks there are empty (get_stackid -EFAULT,
 * get_stack 0: the kernel's answers for a chain it cannot walk from user registers);
 * those answers are checked as such, the user stacks compared.  The kernel stacks go to
 * a stack map of their own: in a shared one the kernel's extra bucket could take the one
 * a user stack hashes to (-EEXIST on the kernel's side only, about 1 run in 20 as ASLR
 * places the stacks).  The program's runs are numbered in the order the events happened
 * (the kernel's order), and the test moves between CPUs between the events, so bpfrt
 * must run the records of different CPUs' rings in that order too (trace/perf_ring.c).
 * The kernel's build ids are best effort: stack_map_get_build_id_offset() takes the
 * task's mmap lock with a trylock and reads the note without faulting, and when either
 * fails every frame keeps its ip (status BPF_STACK_BUILD_ID_IP): one helper call of one
 * run (a bpf_get_stack buffer of ips, or a stackid -EEXIST: the same ips hash to the
 * bucket the run before filled with build ids).  Any thread of the task mapping or
 * unmapping then does it; here it was the link thread of bpfrt's side of the case
 * before, unmapping its perf rings after the close() of its link (1 run in 12), so the
 * kernel's side waits for that thread to end.  bpfrt reads the mappings after the
 * event and does not fail so; a case whose kernel side still shows the fallback is run
 * again (both sides, fresh maps, at most ATTEMPTS times; the last attempt is compared
 * whatever it shows).
 * Then a raw tracepoint
 * test run, the one program type with these helpers the kernel test-runs: the kernel
 * walks the stacks of its own bpf() call (ids and lengths), bpfrt has no event and no
 * chain (-EFAULT on every call, the kernel's answer when it cannot fetch one) - a
 * known difference, checked as such.  User stacks are walked by frame pointers, so the
 * test is built with them (tests.cmake) and fires both sides from one call site.
 * Skips without root, tracefs or the tracepoints.
 */
#include <fcntl.h>
#include <sched.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "trace_test.h"
#include "transcript.h" /* kernel_bpf(), create_map(), elem() */

#define NRUNS 3
#define VALUE 464 /* the results array's value: see the program */
#define USER_BUF 80
#define KERN_BUF 208
#define BID_BUF 336
#define ATTEMPTS 5 /* of a case whose kernel side took the build-id fallback */

struct side {
	int kernel;
	int res, cnt, st, stk, stb, st1, st1r; /* maps */
	int prog, link;
};

static int map_create(const struct side *s, uint32_t type, uint32_t vs, uint32_t n,
		      uint32_t flags)
{
	if (!s->kernel) {
		BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = flags);
		return bpfrt_map_create(type, "m", 4, vs, n, &o);
	}
	return create_map(kernel_bpf, type, 4, vs, n, flags, 0);
}

static int lookup(const struct side *s, int fd, uint32_t key, void *val)
{
	if (!s->kernel)
		return bpfrt_map_lookup_elem(fd, &key, val);
	return elem(kernel_bpf, BPF_MAP_LOOKUP_ELEM, fd, &key, val, 0);
}

static int next_key(const struct side *s, int fd, const uint32_t *key, uint32_t *next)
{
	if (!s->kernel)
		return bpfrt_map_get_next_key(fd, key, next);
	/* the attr's value is its next_key */
	return elem(kernel_bpf, BPF_MAP_GET_NEXT_KEY, fd, key, next, 0);
}

/* The program: for this process, the counter's old value picks the results slot. */
static void program(const struct side *s, char *text, size_t len)
{
#define STACKID(map, flags, off)                                                          \
	"mov %%r1, %%r6\nlddw %%r2, map_fd %d\nlddw %%r3, " flags "\ncall bpf_get_stackid\n" \
	"stxdw [%%r7+" off "], %%r0\n"
#define GETSTACK(buf, size, flags, off)                                                   \
	"mov %%r1, %%r6\nmov %%r2, %%r7\nadd %%r2, " buf "\nmov %%r3, " size "\n"          \
	"lddw %%r4, " flags "\ncall bpf_get_stack\nstxdw [%%r7+" off "], %%r0\n"
	snprintf(text, len,
		 "mov %%r6, %%r1\ncall bpf_get_current_pid_tgid\nrsh %%r0, 32\n"
		 "jne %%r0, %d, out\n"
		 "stw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\n"
		 "call bpf_map_lookup_elem\njeq %%r0, 0, out\n"
		 "mov %%r1, 1\nlock fetch add [%%r0+0], %%r1\nand %%r1, 7\n"
		 "stxw [%%r10-4], %%r1\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\n"
		 "call bpf_map_lookup_elem\njeq %%r0, 0, out\nmov %%r7, %%r0\n"
		 STACKID(st, "0x100", "0")
		 STACKID(stk, "0", "8")
		 GETSTACK("80", "128", "0x100", "16")
		 GETSTACK("208", "128", "0", "24")
		 STACKID(stb, "0x100", "32")
		 GETSTACK("336", "128", "0x900", "40")
		 STACKID(st1, "0x100", "48")
		 STACKID(st1r, "0x500", "56")
		 STACKID(st, "0x302", "64")
		 STACKID(st, "200", "72")
		 /* then the second counter: the run is complete (the first one counts runs
		  * as they start, and the test would read a slot still being written) */
		 "stw [%%r10-4], 1\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\n"
		 "call bpf_map_lookup_elem\njeq %%r0, 0, out\n"
		 "mov %%r1, 1\nlock add [%%r0+0], %%r1\n"
		 "out:\nmov %%r0, 1\nexit\n",
		 (int)getpid(), s->cnt, s->res, s->st, s->stk, s->stb, s->st1, s->st1r, s->st,
		 s->st, s->cnt);
#undef STACKID
#undef GETSTACK
}

/* The same call sites for both sides: two stacks, A twice then B. */
__attribute__((noinline)) static void fire(int rename, int i)
{
	char name[16];

	snprintf(name, sizeof(name), "stk-%d", i);
	if (rename)
		prctl(PR_SET_NAME, name);
	else
		syscall(SYS_getppid);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_b(int rename, int i)
{
	fire(rename, i);
	__asm__ volatile("" ::: "memory");
}

/* loop bounds the compiler cannot unroll: one call site per loop body */
static volatile int nfire = NRUNS - 1, nsides = 2;

/* Run on CPU cpu (when there are two): the events of one run land in different CPUs'
 * rings, the later ones on a lower CPU (file comment). */
static void move_cpu(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

__attribute__((noinline)) static void fire_all(int rename)
{
	cpu_set_t saved;
	int have = !sched_getaffinity(0, sizeof(saved), &saved);

	for (int i = 0; i < nfire; i++) {
		move_cpu(1);
		fire(rename, i);
	}
	move_cpu(0);
	site_b(rename, NRUNS - 1);
	if (have)
		sched_setaffinity(0, sizeof(saved), &saved);
}

/* The event: tracepoint id, or (kprobe set) a kprobe on that kernel function. */
static void event_attr(struct perf_event_attr *attr, uint32_t id, const char *kprobe)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = id;
	if (kprobe) {
		attr->type = (uint32_t)id; /* the kprobe PMU's type */
		attr->config = 0;
		attr->config1 = (uint64_t)(uintptr_t)kprobe;
	}
	attr->sample_period = 1;
}

static int attach_kernel(int prog, uint32_t id, const char *kprobe)
{
	struct perf_event_attr attr;
	int fd;

	event_attr(&attr, id, kprobe);
	attr.disabled = 1;
	fd = (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Everything one side recorded, as text: the results and each stack map's buckets. */
struct dump {
	uint8_t res[NRUNS][VALUE];
	char maps[5][4096];
};

static void dump_map(const struct side *s, int fd, uint32_t vs, char *out, size_t len)
{
	uint32_t key, next, *kp = NULL;
	uint8_t val[4096];
	size_t n = 0;

	out[0] = 0;
	while (!next_key(s, fd, kp, &next) && n + 64 < len) {
		key = next, kp = &key;
		if (lookup(s, fd, key, val))
			continue;
		n += (size_t)snprintf(out + n, len - n, "id %u:", key);
		for (uint32_t i = 0; i < vs && n + 24 < len; i += 8) {
			uint64_t v;

			memcpy(&v, val + i, 8);
			n += (size_t)snprintf(out + n, len - n, " %llx", (unsigned long long)v);
		}
		n += (size_t)snprintf(out + n, len - n, "\n");
	}
}

/* Wait (at most 2 s) until this process has one thread: the link threads of bpfrt's
 * side of the case before are gone.  A link's thread tears down after the close() of
 * its fd, and its munmap()s of the perf rings hold the mmap lock for writing: a kernel
 * event then fails its build ids' trylock (file comment; seen in the lock's tracepoints). */
static void wait_one_thread(void)
{
	for (int i = 0; i < 200; i++) {
		char line[256];
		int n = 0;
		FILE *f = fopen("/proc/self/status", "re");

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "Threads:", 8))
				n = atoi(line + 8);
		if (f)
			fclose(f);
		if (n <= 1)
			return;
		usleep(10000);
	}
}

__attribute__((noinline)) static int run_side(struct side *s, const char *tp, uint32_t id,
					       int rename, const char *kprobe, struct dump *d)
{
	uint32_t type = kprobe ? BPF_PROG_TYPE_KPROBE : BPF_PROG_TYPE_TRACEPOINT;
	struct perf_event_attr attr;
	static char log[65536];
	char text[8192];
	uint64_t count = 0;

	s->res = map_create(s, BPF_MAP_TYPE_ARRAY, VALUE, 8, 0);
	s->cnt = map_create(s, BPF_MAP_TYPE_ARRAY, 8, 2, 0); /* runs started, runs done */
	s->st = map_create(s, BPF_MAP_TYPE_STACK_TRACE, 16 * 8, 64, 0);
	s->stk = map_create(s, BPF_MAP_TYPE_STACK_TRACE, 16 * 8, 64, 0);
	s->stb = map_create(s, BPF_MAP_TYPE_STACK_TRACE, 4 * 32, 64, BPF_F_STACK_BUILD_ID);
	s->st1 = map_create(s, BPF_MAP_TYPE_STACK_TRACE, 16 * 8, 1, 0);
	s->st1r = map_create(s, BPF_MAP_TYPE_STACK_TRACE, 16 * 8, 1, 0);
	T_ASSERT(s->res >= 0 && s->cnt >= 0 && s->st >= 0 && s->stk >= 0 && s->stb >= 0 && s->st1 >= 0 &&
		 s->st1r >= 0);
	program(s, text, sizeof(text));
	s->prog = s->kernel ? tt_kload(type, "GPL", text, log, sizeof(log))
			    : tt_load(type, "GPL", text, log, sizeof(log));
	if (s->prog < 0) {
		fprintf(stderr, "%s load: %s\n%s\n", s->kernel ? "kernel" : "bpfrt",
			strerror(-s->prog), log);
		return -1;
	}
	event_attr(&attr, id, kprobe);
	if (s->kernel)
		s->link = attach_kernel(s->prog, id, kprobe);
	else if (kprobe)
		s->link = bpfrt_perf_event_attach(s->prog, &attr, sizeof(attr), -1, NULL);
	else
		s->link = bpfrt_tracepoint_attach(s->prog, tp, NULL);
	if (s->link < 0) {
		fprintf(stderr, "%s attach %s: %s\n", s->kernel ? "kernel" : "bpfrt", tp,
			strerror(-s->link));
		return -1;
	}
	if (s->kernel)
		wait_one_thread();
	fire_all(rename);
	for (int i = 0; i < 500; i++) {
		if (!lookup(s, s->cnt, 1, &count) && count >= NRUNS)
			break;
		usleep(10000);
	}
	close(s->link);
	T_EQ_U64(NRUNS, count);
	T_EQ_INT(0, lookup(s, s->cnt, 0, &count));
	T_EQ_U64(NRUNS, count);
	for (uint32_t i = 0; i < NRUNS; i++)
		T_EQ_INT(0, lookup(s, s->res, i, d->res[i]));
	dump_map(s, s->st, 16 * 8, d->maps[0], sizeof(d->maps[0]));
	dump_map(s, s->stb, 4 * 32, d->maps[1], sizeof(d->maps[1]));
	dump_map(s, s->st1, 16 * 8, d->maps[2], sizeof(d->maps[2]));
	dump_map(s, s->st1r, 16 * 8, d->maps[3], sizeof(d->maps[3]));
	dump_map(s, s->stk, 16 * 8, d->maps[4], sizeof(d->maps[4]));
	close(s->prog);
	close(s->res), close(s->cnt), close(s->st), close(s->stk), close(s->stb), close(s->st1), close(s->st1r);
	return 0;
}

static int64_t word(const uint8_t *v, unsigned off)
{
	int64_t x;

	memcpy(&x, v + off, 8);
	return x;
}

/* Is ip inside kernel text: after a text symbol of /proc/kallsyms, within 1 MiB of it
 * and below _etext or in a module? */
static int kernel_text(uint64_t ip, char *sym, size_t len)
{
	char line[512], name[256], type;
	unsigned long long a, best = 0, etext = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	snprintf(sym, len, "?");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (!strcmp(name, "_etext"))
			etext = a;
		if ((type == 't' || type == 'T') && a <= ip && a > best) {
			best = a;
			snprintf(sym, len, "%s+0x%llx", name, (unsigned long long)(ip - a));
		}
	}
	fclose(f);
	return best && ip - best < (1u << 20) && (ip < etext || strchr(sym, '['));
}

static void compare(const char *tp, struct dump *k, struct dump *b, int rename)
{
	static const char *const slot[] = {
		"stackid user", "stackid kernel", "get_stack user", "get_stack kernel",
		"stackid build-id map", "get_stack user build id", "stackid 1 bucket",
		"stackid 1 bucket REUSE", "stackid FAST_CMP skip 2", "stackid skip 200",
	};
	static char what[160];

	for (int r = 0; r < NRUNS; r++) {
		for (unsigned i = 0; i < sizeof(slot) / sizeof(slot[0]); i++) {
			snprintf(what, sizeof(what), "%s run %d: %s", tp, r, slot[i]);
			T_CASE(what);
			/* known difference (file comment): an empty kernel chain */
			if (!rename && i == 1)
				T_EQ_INT(-EFAULT, word(b->res[r], i * 8));
			else if (!rename && i == 3)
				T_EQ_INT(0, word(b->res[r], i * 8));
			else
				T_EQ_INT(word(k->res[r], i * 8), word(b->res[r], i * 8));
		}
		snprintf(what, sizeof(what), "%s run %d: user frames", tp, r);
		T_CASE(what);
		T_ASSERT(!memcmp(k->res[r] + USER_BUF, b->res[r] + USER_BUF, 128));
		snprintf(what, sizeof(what), "%s run %d: kernel frames", tp, r);
		T_CASE(what);
		if (rename)
			T_ASSERT(!memcmp(k->res[r] + KERN_BUF, b->res[r] + KERN_BUF, 128));
		snprintf(what, sizeof(what), "%s run %d: user build-id frames", tp, r);
		T_CASE(what);
		T_ASSERT(!memcmp(k->res[r] + BID_BUF, b->res[r] + BID_BUF, 128));
	}
	/* map 4 holds the kernel stacks, which bpfrt lacks for syscalls:* (file comment) */
	for (int m = 0; m < (rename ? 5 : 4); m++) {
		snprintf(what, sizeof(what), "%s: stack map %d buckets", tp, m);
		T_CASE(what);
		T_EQ_STR(k->maps[m], b->maps[m]);
	}
	snprintf(what, sizeof(what), "%s: depths and kernel symbols", tp);
	T_CASE(what);
	for (int r = 0; r < NRUNS; r++) {
		int64_t ku = word(b->res[r], 16), kk = word(b->res[r], 24);

		T_ASSERT(ku >= 16 && ku <= 128); /* at least fire(), its caller and main */
		if (!rename)
			continue;
		T_ASSERT(kk >= 32 && kk <= 128);
		for (int64_t i = 0; i < kk / 8; i++) {
			uint64_t ip = (uint64_t)word(b->res[r], KERN_BUF + (unsigned)i * 8);
			char sym[300];

			T_ASSERT(kernel_text(ip, sym, sizeof(sym)));
			if (!r)
				printf("  %s kernel frame %lld: %s\n", tp, (long long)i, sym);
		}
	}
}

/* Did the kernel's side take the build-id fallback (file comment) in one of its user
 * stacks: a frame of a BPF_F_USER_BUILD_ID buffer or of a build-id map's bucket left an
 * ip (every frame of these stacks is in a file with a build id: libc and the test), or a
 * stackid -EEXIST for ips an earlier run stored (same ips, same bucket: only the build
 * ids can differ)? */
static int kernel_fell_back(const struct dump *k)
{
	const char *p = k->maps[1];

	for (int r = 0; r < NRUNS; r++) {
		int64_t len = word(k->res[r], 40);

		for (int64_t i = 0; i < len / 32 && i < 4; i++)
			if ((int32_t)word(k->res[r], BID_BUF + (unsigned)i * 32) ==
			    BPF_STACK_BUILD_ID_IP)
				return 1;
		for (int e = 0; e < r && word(k->res[r], 32) == -EEXIST; e++)
			if (word(k->res[e], 32) >= 0 &&
			    !memcmp(k->res[e] + USER_BUF, k->res[r] + USER_BUF, 4 * 8))
				return 1;
	}
	/* the map's lines: "id N: w w w w ..." with a frame's status in its first word */
	while (*p) {
		const char *end = strchr(p, '\n');
		unsigned long long w;
		int n = 0, pos = 0;

		p = strchr(p, ':');
		if (!p)
			break;
		p++;
		while (sscanf(p, " %llx%n", &w, &pos) == 1 && (!end || p < end)) {
			if (n++ % 4 == 0 && (uint32_t)w == BPF_STACK_BUILD_ID_IP)
				return 1;
			p += pos;
			if (end && p >= end)
				break;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

/* A raw tracepoint program's test run: the four answers (stackid kernel, user; get_stack
 * kernel, user) from the results array. */
static int test_run(struct side *s, int64_t out[4])
{
	char text[4096];
	uint8_t val[VALUE];
	uint32_t retval = 0;
	int err;

	s->res = map_create(s, BPF_MAP_TYPE_ARRAY, VALUE, 1, 0);
	s->st = map_create(s, BPF_MAP_TYPE_STACK_TRACE, 16 * 8, 64, 0);
	snprintf(text, sizeof(text),
		 "mov %%r6, %%r1\nstw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\n"
		 "lddw %%r1, map_fd %d\ncall bpf_map_lookup_elem\njeq %%r0, 0, out\n"
		 "mov %%r7, %%r0\n"
		 "mov %%r1, %%r6\nlddw %%r2, map_fd %d\nmov %%r3, 0\ncall bpf_get_stackid\n"
		 "stxdw [%%r7+0], %%r0\n"
		 "mov %%r1, %%r6\nlddw %%r2, map_fd %d\nmov %%r3, 0x100\ncall bpf_get_stackid\n"
		 "stxdw [%%r7+8], %%r0\n"
		 "mov %%r1, %%r6\nmov %%r2, %%r7\nadd %%r2, 80\nmov %%r3, 128\nmov %%r4, 0\n"
		 "call bpf_get_stack\nstxdw [%%r7+16], %%r0\n"
		 "mov %%r1, %%r6\nmov %%r2, %%r7\nadd %%r2, 208\nmov %%r3, 128\n"
		 "mov %%r4, 0x100\ncall bpf_get_stack\nstxdw [%%r7+24], %%r0\n"
		 "out:\nmov %%r0, 0\nexit\n", s->res, s->st, s->st);
	s->prog = s->kernel ? tt_kload(BPF_PROG_TYPE_RAW_TRACEPOINT, "GPL", text, NULL, 0)
			    : tt_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "GPL", text, NULL, 0);
	if (s->prog < 0)
		return s->prog;
	if (s->kernel) {
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)s->prog;
		err = kernel_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
	} else {
		err = tt_run(s->prog, NULL, 0, &retval);
	}
	if (!err)
		err = lookup(s, s->res, 0, val);
	for (int i = 0; i < 4 && !err; i++)
		out[i] = word(val, (unsigned)i * 8);
	close(s->prog), close(s->res), close(s->st);
	return err;
}

int main(void)
{
	static const struct {
		const char *tp;
		int rename;
		const char *kprobe; /* a kprobe on this function, not a tracepoint */
	} tps[] = {
		{ "syscalls:sys_enter_getppid", 0, NULL },
		{ "task:task_rename", 1, NULL },
		{ "kprobe:__set_task_comm", 1, "__set_task_comm" },
	};
	static struct dump dk, db;

	tt_private_fs("stack_oracle");
	if (geteuid() != 0)
		T_SKIP("needs root for the kernel's programs and perf_event_open");
#ifdef BPFRT_TEST_SANITIZED
	T_SKIP("sanitizer build: prctl() and syscall() run through the sanitizer's interceptors, "
	       "whose frames have no frame pointer, so the user stacks both sides walk are "
	       "garbage that differs per call (the release build compares them)");
#endif
	for (size_t t = 0; t < sizeof(tps) / sizeof(tps[0]); t++) {
		struct side sides[2] = { { .kernel = 1 }, { .kernel = 0 } };
		struct dump *dumps[2] = { &dk, &db };
		int rc[2] = { 0, 0 };
		uint32_t size = 0, id = 0;
		char saved[16] = "";

		if (tps[t].kprobe) {
			FILE *f = fopen("/sys/bus/event_source/devices/kprobe/type", "re");

			if (!f || fscanf(f, "%u", &id) != 1) {
				printf("skipped %s: no kprobe PMU\n", tps[t].tp);
				if (f)
					fclose(f);
				continue;
			}
			fclose(f);
		} else if (bpfrt_tracepoint_fields(tps[t].tp, NULL, 0, &size, &id) < 0) {
			T_SKIP("no tracefs or no %s tracepoint", tps[t].tp);
		}
		prctl(PR_GET_NAME, saved);
		T_CASE(tps[t].tp);
		for (int a = 0; a < ATTEMPTS; a++) {
			memset(&dk, 0, sizeof(dk));
			memset(&db, 0, sizeof(db));
			/* both sides from one call site: the same user stacks above it */
			for (int i = 0; i < nsides; i++)
				rc[i] = run_side(&sides[i], tps[t].tp, id, tps[t].rename,
						 tps[t].kprobe, dumps[i]);
			if (rc[0])
				T_SKIP("the kernel refuses the program or the attach");
			T_EQ_INT(0, rc[1]);
			prctl(PR_SET_NAME, saved);
			if (rc[1] || !kernel_fell_back(&dk))
				break;
			printf("%s: the kernel's build ids fell back to ips (attempt %d), again\n",
			       tps[t].tp, a + 1);
		}
		compare(tps[t].tp, &dk, &db, tps[t].rename);
		printf("%s: kernel %s bpfrt %s\n", tps[t].tp, dk.maps[0], db.maps[0]);
	}
	{
		struct side k = { .kernel = 1 }, b = { .kernel = 0 };
		int64_t ko[4] = { 0 }, bo[4] = { 0 };

		T_CASE("raw tracepoint test run");
		T_EQ_INT(0, test_run(&k, ko));
		T_EQ_INT(0, test_run(&b, bo));
		printf("test run: kernel %lld %lld %lld %lld, bpfrt %lld %lld %lld %lld\n",
		       (long long)ko[0], (long long)ko[1], (long long)ko[2], (long long)ko[3],
		       (long long)bo[0], (long long)bo[1], (long long)bo[2], (long long)bo[3]);
		/* known difference: the kernel walks its own bpf() call's stacks */
		/* the user stack's bucket may be the kernel stack's: -EEXIST (1 run in 64) */
		T_ASSERT(ko[0] >= 0 && (ko[1] >= 0 || ko[1] == -EEXIST) && ko[2] > 0 && ko[3] > 0);
		for (int i = 0; i < 4; i++)
			T_EQ_INT(-EFAULT, bo[i]);
	}
	tt_cleanup_fs();
	return t_done();
}
