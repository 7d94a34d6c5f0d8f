/* test_base_oracle.c - helpers of the kernel's bpf_base_func_proto() that real programs
 * call (issue #15), against the kernel: the same assembly programs load or fail with the
 * same errno and last log line, and BPF_PROG_TEST_RUN gives the same retval, on the
 * kernel's bpf() and on bpfrt_bpf() with each engine (interpreter, checked engine, JIT).
 * One transcript per side, compared line by line (tests/transcript.h).
 *   bpf_map_lookup_percpu_elem: per-CPU array, hash and LRU hash, every CPU and past the
 *   last, map types it refuses, the NULL check, writes through it read back by bpf().
 * Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"

struct side {
	sys_fn sys;
	uint32_t prog_flags; /* bpfrt: BPFRT_F_ENGINE(); kernel: 0 */
	struct transcript *t;
};

/* Assemble the formatted text and load it (GPL, log level 1): the fd, or -1 after saying
 * "<what>: load <-errno> <last log line>" (statistics lines skipped).  On success only
 * "<what>: " is said. */
static __attribute__((format(printf, 5, 6))) int load(struct side *s, const char *what,
							 uint32_t type, uint32_t attach,
							 const char *fmt, ...)
{
	static char log[1 << 16], text[8192];
	const char *line = log, *p;
	struct bpf_insn *insns;
	char err[256];
	union bpf_attr a;
	va_list ap;
	size_t n;
	int fd;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	s->t->steps++;
	say(s->t, "%s: ", what);
	if (bpfrt_asm(text, "test.s", &insns, &n, err, sizeof(err))) {
		say(s->t, "asm %s\n", err);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.expected_attach_type = attach;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	a.prog_flags = s->prog_flags;
	if (type == BPF_PROG_TYPE_SYSCALL)
		a.prog_flags |= BPF_F_SLEEPABLE;
	log[0] = 0;
	fd = s->sys(BPF_PROG_LOAD, &a, sizeof(a));
	free(insns);
	if (fd >= 0)
		return fd;
	fd = -errno;
	for (p = log; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n'))
		if (strncmp(p, "processed ", 10) && strncmp(p, "verification time", 17) &&
		    strncmp(p, "stack depth", 11) && *p != '\n')
			line = p;
	say(s->t, "load %d %.*s\n", fd, (int)strcspn(line, "\n"), line);
	return -1;
}

/* One BPF_PROG_TEST_RUN: a 64-byte packet for packet programs, 8 zero bytes of context for
 * raw tracepoints, nothing for syscall programs.  Says "retval N" or "run -errno". */
static void run(struct side *s, int fd, uint32_t type)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	if (type == BPF_PROG_TYPE_RAW_TRACEPOINT) {
		a.test.ctx_in = (uint64_t)(uintptr_t)pkt;
		a.test.ctx_size_in = 8;
	} else if (type != BPF_PROG_TYPE_SYSCALL) {
		pkt[12] = 0x08; /* an IPv4 ethertype */
		a.test.data_in = (uint64_t)(uintptr_t)pkt;
		a.test.data_size_in = sizeof(pkt);
		a.test.repeat = 1;
	}
	if (s->sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
		say(s->t, "run %d\n", -errno);
	else
		say(s->t, "retval %u\n", a.test.retval);
}

/* load, and run when it loads ("<what>: retval N"); the fd is closed */
#define LOAD_RUN(s, what, type, ...)                                                      \
	do {                                                                             \
		int fd_ = load((s), (what), (type), 0, __VA_ARGS__);                      \
		if (fd_ >= 0) {                                                          \
			run((s), fd_, (type));                                           \
			close(fd_);                                                      \
		}                                                                        \
	} while (0)

/* load only ("<what>: ok") */
#define LOAD_ONLY(s, what, type, ...)                                                     \
	do {                                                                             \
		int fd_ = load((s), (what), (type), 0, __VA_ARGS__);                      \
		if (fd_ >= 0) {                                                          \
			say((s)->t, "ok\n");                                             \
			close(fd_);                                                      \
		}                                                                        \
	} while (0)

/* ---- bpf_map_lookup_percpu_elem ---------------------------------------------------------- */

/* key (u32) at fp-4, r3 = the CPU: r0 = the value's first u64, or 1000 for NULL */
#define PERCPU_LOOKUP(key, cpu)                                                           \
	"stw [%%r10-4], " #key "\nlddw %%r1, map_fd %d\nmov %%r2, %%r10\nadd %%r2, -4\n"    \
	"lddw %%r3, " cpu "\ncall bpf_map_lookup_percpu_elem\njne %%r0, 0, +2\n"           \
	"mov %%r0, 1000\nexit\nldxdw %%r0, [%%r0+0]\nexit\n"

static void percpu(struct side *s)
{
	static const uint32_t types[] = { BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_PERCPU_HASH,
					  BPF_MAP_TYPE_LRU_PERCPU_HASH };
	uint32_t ncpu = (uint32_t)bpfrt_num_possible_cpus();
	char what[128], cpus[4][24];
	uint64_t *vals = calloc(ncpu, 16);
	uint32_t key = 1;

	if (!vals)
		return;
	/* CPU 0, the last, one past it, and 2^32 (only the low 32 bits count) */
	snprintf(cpus[0], sizeof(cpus[0]), "0");
	snprintf(cpus[1], sizeof(cpus[1]), "%u", ncpu - 1);
	snprintf(cpus[2], sizeof(cpus[2]), "%u", ncpu);
	snprintf(cpus[3], sizeof(cpus[3]), "%llu", 1ULL << 32);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int fd = create_map(s->sys, types[i], 4, 8, 4, 0, 0);
		int arr = create_map(s->sys, BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0, 0);

		say(s->t, "map type %u: %s\n", types[i], fd >= 0 ? "ok" : "failed");
		if (fd < 0)
			return;
		for (uint32_t c = 0; c < ncpu; c++)
			vals[c] = 100 + c;
		say(s->t, "update key 1: %d\n", elem(s->sys, BPF_MAP_UPDATE_ELEM, fd, &key, vals, 0));
		for (int c = 0; c < 4; c++) {
			snprintf(what, sizeof(what), "type %u key 1 cpu %s", types[i],
				 c == 1 ? "last" : c == 2 ? "past the last" : cpus[c]);
			for (uint32_t type = BPF_PROG_TYPE_SCHED_CLS; type <= BPF_PROG_TYPE_XDP;
			     type += BPF_PROG_TYPE_XDP - BPF_PROG_TYPE_SCHED_CLS)
				LOAD_RUN(s, what, type, PERCPU_LOOKUP(1, "%s"), fd, cpus[c]);
		}
		snprintf(what, sizeof(what), "type %u missing key", types[i]);
		LOAD_RUN(s, what, BPF_PROG_TYPE_SCHED_CLS, PERCPU_LOOKUP(3, "0"), fd);
		snprintf(what, sizeof(what), "type %u from a socket filter", types[i]);
		LOAD_RUN(s, what, BPF_PROG_TYPE_SOCKET_FILTER, PERCPU_LOOKUP(1, "0"), fd);
		snprintf(what, sizeof(what), "type %u from a raw tracepoint", types[i]);
		LOAD_RUN(s, what, BPF_PROG_TYPE_RAW_TRACEPOINT, PERCPU_LOOKUP(1, "%s"), fd,
			 cpus[1]);
		snprintf(what, sizeof(what), "type %u from a syscall program", types[i]);
		LOAD_RUN(s, what, BPF_PROG_TYPE_SYSCALL, PERCPU_LOOKUP(1, "0"), fd);
		/* the result may be NULL, even for an array key that exists (the kernel
		 * elides the check only for bpf_map_lookup_elem) */
		snprintf(what, sizeof(what), "type %u result not checked", types[i]);
		LOAD_ONLY(s, what, BPF_PROG_TYPE_SCHED_CLS,
			  "stw [%%r10-4], 0\nlddw %%r1, map_fd %d\nmov %%r2, %%r10\nadd %%r2, -4\n"
			  "mov %%r3, 0\ncall bpf_map_lookup_percpu_elem\nldxdw %%r0, [%%r0+0]\n"
			  "exit\n", fd);
		snprintf(what, sizeof(what), "type %u read past the value", types[i]);
		LOAD_ONLY(s, what, BPF_PROG_TYPE_SCHED_CLS,
			  "stw [%%r10-4], 0\nlddw %%r1, map_fd %d\nmov %%r2, %%r10\nadd %%r2, -4\n"
			  "mov %%r3, 0\ncall bpf_map_lookup_percpu_elem\njeq %%r0, 0, +1\n"
			  "ldxdw %%r0, [%%r0+4]\nexit\n", fd);
		snprintf(what, sizeof(what), "type %u key not initialised", types[i]);
		LOAD_ONLY(s, what, BPF_PROG_TYPE_SCHED_CLS,
			  "lddw %%r1, map_fd %d\nmov %%r2, %%r10\nadd %%r2, -4\n"
			  "mov %%r3, 0\ncall bpf_map_lookup_percpu_elem\nmov %%r0, 0\nexit\n", fd);
		snprintf(what, sizeof(what), "type %u cpu a pointer", types[i]);
		LOAD_ONLY(s, what, BPF_PROG_TYPE_SCHED_CLS,
			  "stw [%%r10-4], 0\nlddw %%r1, map_fd %d\nmov %%r2, %%r10\nadd %%r2, -4\n"
			  "mov %%r3, %%r10\ncall bpf_map_lookup_percpu_elem\nmov %%r0, 0\nexit\n", fd);
		/* the last CPU's value written through the pointer, read back by bpf() */
		snprintf(what, sizeof(what), "type %u store into the last cpu's value", types[i]);
		LOAD_RUN(s, what, BPF_PROG_TYPE_SCHED_CLS,
			 "stw [%%r10-4], 1\nlddw %%r1, map_fd %d\nmov %%r2, %%r10\nadd %%r2, -4\n"
			 "mov %%r3, %u\ncall bpf_map_lookup_percpu_elem\njeq %%r0, 0, +2\n"
			 "stdw [%%r0+0], 77\nmov %%r0, 1\nexit\n", fd, ncpu - 1);
		memset(vals, 0, (size_t)ncpu * 8);
		say(s->t, "lookup key 1: %d", elem(s->sys, BPF_MAP_LOOKUP_ELEM, fd, &key, vals, 0));
		for (uint32_t c = 0; c < ncpu; c++)
			say(s->t, " %llu", (unsigned long long)vals[c]);
		say(s->t, "\n");
		snprintf(what, sizeof(what), "type %u lookup_elem on it", types[i]);
		LOAD_RUN(s, what, BPF_PROG_TYPE_SCHED_CLS,
			 "stw [%%r10-4], 1\nlddw %%r1, map_fd %d\nmov %%r2, %%r10\nadd %%r2, -4\n"
			 "call bpf_map_lookup_elem\njne %%r0, 0, +2\nmov %%r0, 1000\nexit\n"
			 "ldxdw %%r0, [%%r0+0]\nexit\n", fd);
		close(fd);
		if (i)
			close(arr);
		else /* a plain array refuses it ("cannot pass map_type 2 ...") */
			LOAD_ONLY(s, "array", BPF_PROG_TYPE_SCHED_CLS, PERCPU_LOOKUP(1, "0"), arr);
	}
	{
		int h = create_map(s->sys, BPF_MAP_TYPE_HASH, 4, 8, 4, 0, 0);
		int q = create_map(s->sys, BPF_MAP_TYPE_QUEUE, 0, 8, 4, 0, 0);

		LOAD_ONLY(s, "hash", BPF_PROG_TYPE_SCHED_CLS, PERCPU_LOOKUP(1, "0"), h);
		LOAD_ONLY(s, "queue", BPF_PROG_TYPE_SCHED_CLS, PERCPU_LOOKUP(1, "0"), q);
		close(h);
		close(q);
	}
	LOAD_ONLY(s, "no map", BPF_PROG_TYPE_SCHED_CLS,
		  "stw [%%r10-4], 0\nmov %%r1, 0\nmov %%r2, %%r10\nadd %%r2, -4\nmov %%r3, 0\n"
		  "call bpf_map_lookup_percpu_elem\nmov %%r0, 0\nexit\n");
	free(vals);
}

static void script(struct side *s)
{
	percpu(s);
}

int main(void)
{
	static struct transcript kern, ours;
	static const uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
					    BPFRT_ENGINE_JIT };
	struct side k = { kernel_bpf, 0, &kern };
	int probe = create_map(kernel_bpf, BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, 0);

	cpu_set_t one;

	if (geteuid() != 0 || probe < 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	close(probe);
	/* both sides' test runs see the CPU they run on (bpf_map_lookup_elem of a per-CPU
	 * map): keep them on one */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		T_SKIP("cannot pin to CPU 0: %s", strerror(errno));
	script(&k);
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		struct side b = { bpfrt_bpf, BPFRT_F_ENGINE(engines[e]), &ours };

		memset(&ours, 0, sizeof(ours));
		script(&b);
		if (e == 0 && getenv("BASE_ORACLE_SHOW"))
			fputs(kern.text, stdout);
		printf("engine %u: %u steps per side, %u differ\n", engines[e], kern.steps,
		       transcript_diffs(&kern, &ours, 0));
		compare_transcripts(&kern, &ours);
	}
	return t_done();
}
