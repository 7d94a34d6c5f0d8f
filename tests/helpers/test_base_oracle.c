/* test_base_oracle.c - helpers of the kernel's bpf_base_func_proto() that real programs
 * call (issue #15), against the kernel: the same assembly programs load or fail with the
 * same errno and last log line, and BPF_PROG_TEST_RUN gives the same retval, on the
 * kernel's bpf() and on bpfrt_bpf() with each engine (interpreter, checked engine, JIT).
 * One transcript per side, compared line by line (tests/transcript.h).
 *   bpf_map_lookup_percpu_elem: per-CPU array, hash and LRU hash, every CPU and past the
 *   last, map types it refuses, the NULL check, writes through it read back by bpf().
 *   bpf_copy_from_user(_task): syscall programs (sleepable) read this process's memory
 *   as the kernel's test run does; refused where the program cannot sleep.
 *   bpf_strtol, bpf_strtoul: 35 inputs (bases, prefixes, signs, white space, limits),
 *   answer and result; the result pointer's checks.  bpf_strncmp: against a constant
 *   string, and the verifier's rules for one (frozen, read-only, one element, NUL).
 *   bpf_get_retval / bpf_set_retval and bpf_get_socket_cookie of the context: which
 *   program and attach types have them (19 of each), and the sysctl and socket option
 *   helpers (bpf_sysctl_*, bpf_getsockopt/setsockopt), bpf_bind, bpf_get_netns_cookie,
 *   bpf_sock_ops_cb_flags_set, the TCP header option helpers (bpf_load/store/reserve_hdr_opt)
 *   and the sk_msg data helpers on the same 19; test runs of
 *   bpf_get_netns_cookie (socket filter, tc).  bpf_skb_set_tstamp: tc test runs
 *   on IPv4, IPv6 and ARP frames, each clock type, tstamp 0, the fields read back.
 *   bpf_send_signal(_thread): a test run's signal to this process, 0 and bad signals.
 *   The kfunc bpf_stream_vprintk_impl: its format and argument checks, its run-time
 *   answers for stream ids, lengths and formats.
 * Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "harness.h"
#include "transcript.h"

#define INSN(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })

struct side {
	sys_fn sys;
	uint32_t prog_flags; /* bpfrt: BPFRT_F_ENGINE(); kernel: 0 */
	struct transcript *t;
};

/* Assemble the formatted text and load it (GPL, log level 1): the fd, or -1 after saying
 * "<what>: load <-errno> <last log line>" (statistics lines skipped).  On success only
 * "<what>: " is said. */
static int load_raw(struct side *s, uint32_t type, uint32_t attach,
		    const struct bpf_insn *insns, size_t n);

static __attribute__((format(printf, 5, 6))) int load(struct side *s, const char *what,
							 uint32_t type, uint32_t attach,
							 const char *fmt, ...)
{
	static char text[8192];
	struct bpf_insn *insns;
	char err[256];
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
	fd = load_raw(s, type, attach, insns, n);
	free(insns);
	return fd;
}

/* load() of instructions as they are (kfunc calls, which the assembler does not write) */
static int load_insns(struct side *s, const char *what, uint32_t type,
		      const struct bpf_insn *insns, size_t n)
{
	s->t->steps++;
	say(s->t, "%s: ", what);
	return load_raw(s, type, 0, insns, n);
}

static int load_raw(struct side *s, uint32_t type, uint32_t attach,
		    const struct bpf_insn *insns, size_t n)
{
	static char log[1 << 16];
	union bpf_attr a;
	int fd;

	prog_attr(&a, type, attach, insns, n);
	a.prog_flags = s->prog_flags;
	if (type == BPF_PROG_TYPE_SYSCALL)
		a.prog_flags |= BPF_F_SLEEPABLE;
	fd = prog_load_log(s->sys, &a, log, sizeof(log), 1);
	if (fd >= 0)
		return fd;
	say_load_error(s->t, NULL, fd, log);
	return -1;
}

/* the Ethernet type of the test runs' packet */
static uint16_t run_ethertype = 0x0800;

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
		pkt[12] = (unsigned char)(run_ethertype >> 8); /* IPv4 unless set */
		pkt[13] = (unsigned char)run_ethertype;
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

/* ---- bpf_copy_from_user, bpf_copy_from_user_task (sleepable: syscall programs) ---------- */

static volatile uint64_t user_word = 0x1122334455667788ULL;

/* 8 bytes from address at into fp-8: r0 = the helper's answer, or the low word read */
#define CFU_RUN(call)                                                                     \
	"stdw [%%r10-8], -1\nmov %%r1, %%r10\nadd %%r1, -8\nmov %%r2, 8\nlddw %%r3, %llu\n"  \
	call "jne %%r0, 0, +1\nldxw %%r0, [%%r10-8]\nldxw %%r1, [%%r10-4]\nadd %%r0, %%r1\nexit\n"

static void copy_user(struct side *s)
{
	unsigned long long at = (unsigned long long)(uintptr_t)&user_word;

	LOAD_RUN(s, "copy_from_user of this process", BPF_PROG_TYPE_SYSCALL,
		 CFU_RUN("call bpf_copy_from_user\n"), at);
	LOAD_RUN(s, "copy_from_user of page 1", BPF_PROG_TYPE_SYSCALL,
		 CFU_RUN("call bpf_copy_from_user\n"), 4096ULL);
	LOAD_RUN(s, "copy_from_user of the NULL page", BPF_PROG_TYPE_SYSCALL,
		 CFU_RUN("call bpf_copy_from_user\n"), 16ULL);
	LOAD_ONLY(s, "copy_from_user from a raw tracepoint", BPF_PROG_TYPE_RAW_TRACEPOINT,
		  CFU_RUN("call bpf_copy_from_user\n"), at);
	LOAD_RUN(s, "copy_from_user_task of current", BPF_PROG_TYPE_SYSCALL,
		 "call bpf_get_current_task_btf\nmov %%r4, %%r0\nmov %%r5, 0\n"
		 CFU_RUN("call bpf_copy_from_user_task\n"), at);
	LOAD_RUN(s, "copy_from_user_task, flags 1", BPF_PROG_TYPE_SYSCALL,
		 "call bpf_get_current_task_btf\nmov %%r4, %%r0\nmov %%r5, 1\n"
		 CFU_RUN("call bpf_copy_from_user_task\n"), at);
	LOAD_RUN(s, "copy_from_user_task of page 1", BPF_PROG_TYPE_SYSCALL,
		 "call bpf_get_current_task_btf\nmov %%r4, %%r0\nmov %%r5, 0\n"
		 CFU_RUN("call bpf_copy_from_user_task\n"), 4096ULL);
	LOAD_RUN(s, "copy_from_user, size 0", BPF_PROG_TYPE_SYSCALL,
		 "mov %%r1, %%r10\nadd %%r1, -8\nmov %%r2, 0\nlddw %%r3, %llu\n"
		 "call bpf_copy_from_user\nexit\n", at);
	LOAD_RUN(s, "task_pt_regs of current", BPF_PROG_TYPE_SYSCALL,
		 "call bpf_get_current_task_btf\nmov %%r1, %%r0\ncall bpf_task_pt_regs\n"
		 "mov %%r0, 3\nexit\n");
}

/* ---- bpf_strtol, bpf_strtoul, bpf_strncmp ------------------------------------------------ */

/* "stb [%r10-OFF], C" for each byte of s (len bytes) from fp+base on */
static void put_bytes(char *out, size_t room, const char *s, size_t len, int base)
{
	size_t n = 0;

	out[0] = 0;
	for (size_t i = 0; i < len && n < room; i++)
		n += (size_t)snprintf(out + n, room - n, "stb [%%r10%+d], %d\n", (int)i + base,
				      (int)(unsigned char)s[i]);
}

static void strto(struct side *s)
{
	static const struct {
		const char *str;
		uint32_t len, flags;
	} in[] = {
		{ "123", 3, 0 },        { " \t 123", 6, 10 },     { "-42", 3, 0 },
		{ "0x1f", 4, 0 },       { "0x1f", 4, 16 },        { "0x", 2, 0 },
		{ "0x", 2, 16 },        { "0xg", 3, 0 },          { "077", 3, 0 },
		{ "08", 2, 0 },         { "08", 2, 8 },           { "abc", 3, 16 },
		{ "ABC", 3, 16 },       { "abc", 3, 10 },         { "-", 1, 0 },
		{ "   ", 3, 0 },        { "- 5", 3, 0 },          { "12abc", 5, 0 },
		{ "12\0" "34", 5, 0 },  { "\xa0" "5", 2, 0 },     { "123", 3, 7 },
		{ "123", 3, 0x20 },     { "123", 3, 0x1a },       { "123", 2, 0 },
		{ "99999999999999999999", 20, 0 },
		{ "18446744073709551615", 20, 0 },
		{ "18446744073709551616", 20, 0 },
		{ "9223372036854775807", 19, 0 },
		{ "9223372036854775808", 19, 0 },
		{ "-9223372036854775808", 20, 0 },
		{ "-9223372036854775809", 20, 0 },
		{ "ffffffffffffffff", 16, 16 },
		/* only the first 63 characters are parsed */
		{ "0000000000000000000000000000000000000000000000000000000000000000000001", 70, 0 },
		{ "000000000000000000000000000000000000000000000000000000000000017", 63, 0 },
		{ "  -0x10", 7, 0 },
	};
	int out = create_map(s->sys, BPF_MAP_TYPE_ARRAY, 4, 16, 1, 0, 0);
	static char bytes[8192];
	uint32_t k0 = 0;

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		for (int u = 0; u < 2; u++) {
			char what[160];
			uint64_t v[2] = { 0, 0 };
			int fd;

			put_bytes(bytes, sizeof(bytes), in[i].str, in[i].len, -128);
			snprintf(what, sizeof(what), "%s \"%.24s\" len %u flags %#x",
				 u ? "strtoul" : "strtol", in[i].str, in[i].len, in[i].flags);
			/* r0 = the answer; out[0] = { answer, *res } */
			fd = load(s, what, BPF_PROG_TYPE_SCHED_CLS, 0,
				  "%sstdw [%%r10-8], 77\nmov %%r1, %%r10\nadd %%r1, -128\nmov %%r2, %u\n"
				  "mov %%r3, %u\nmov %%r4, %%r10\nadd %%r4, -8\ncall %s\n"
				  "stxdw [%%r10-16], %%r0\nstw [%%r10-20], 0\nlddw %%r1, map_fd %d\n"
				  "mov %%r2, %%r10\nadd %%r2, -20\nmov %%r3, %%r10\nadd %%r3, -16\n"
				  "mov %%r4, 0\ncall bpf_map_update_elem\nldxdw %%r0, [%%r10-16]\nexit\n",
				  bytes, in[i].len, in[i].flags, u ? "bpf_strtoul" : "bpf_strtol",
				  out);
			if (fd < 0)
				continue;
			run(s, fd, BPF_PROG_TYPE_SCHED_CLS);
			close(fd);
			elem(s->sys, BPF_MAP_LOOKUP_ELEM, out, &k0, v, 0);
			say(s->t, "  answer %lld res %lld\n", (long long)v[0], (long long)v[1]);
		}
	close(out);
	/* the verifier's side of the result pointer: 8 aligned writable bytes */
	LOAD_ONLY(s, "strtol into fp-12 (misaligned)", BPF_PROG_TYPE_SCHED_CLS,
		  "stw [%%r10-64], 0x31\nmov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 1\nmov %%r3, 0\n"
		  "mov %%r4, %%r10\nadd %%r4, -12\ncall bpf_strtol\nmov %%r0, 0\nexit\n");
	LOAD_ONLY(s, "strtol into fp-4 (4 bytes)", BPF_PROG_TYPE_SCHED_CLS,
		  "stw [%%r10-64], 0x31\nmov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 1\nmov %%r3, 0\n"
		  "mov %%r4, %%r10\nadd %%r4, -4\ncall bpf_strtol\nmov %%r0, 0\nexit\n");
	LOAD_ONLY(s, "strtol into the context", BPF_PROG_TYPE_SCHED_CLS,
		  "mov %%r4, %%r1\nstw [%%r10-64], 0x31\nmov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 1\n"
		  "mov %%r3, 0\ncall bpf_strtol\nmov %%r0, 0\nexit\n");
	LOAD_ONLY(s, "strtoul of uninitialised stack", BPF_PROG_TYPE_SCHED_CLS,
		  "mov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 4\nmov %%r3, 0\n"
		  "mov %%r4, %%r10\nadd %%r4, -8\ncall bpf_strtoul\nmov %%r0, 0\nexit\n");
	LOAD_ONLY(s, "strtoul, size 0", BPF_PROG_TYPE_SCHED_CLS,
		  "stw [%%r10-64], 0x31\nmov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 0\nmov %%r3, 0\n"
		  "mov %%r4, %%r10\nadd %%r4, -8\ncall bpf_strtoul\nmov %%r0, 0\nexit\n");
	LOAD_ONLY(s, "strtoul from a socket filter", BPF_PROG_TYPE_SOCKET_FILTER,
		  "stw [%%r10-64], 0x31\nmov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 1\nmov %%r3, 0\n"
		  "mov %%r4, %%r10\nadd %%r4, -8\ncall bpf_strtoul\nmov %%r0, 0\nexit\n");
}

/* a frozen read-only array of one 16-byte element holding text (NUL-padded) */
static int const_str_map(struct side *s, const char *text, size_t len, uint32_t flags,
			 uint32_t max, int freeze)
{
	int fd = create_map(s->sys, BPF_MAP_TYPE_ARRAY, 4, 16, max, flags, 0);
	char v[16] = { 0 };
	uint32_t k0 = 0;
	union bpf_attr a;

	if (fd < 0)
		return fd;
	memcpy(v, text, len < sizeof(v) ? len : sizeof(v));
	elem(s->sys, BPF_MAP_UPDATE_ELEM, fd, &k0, v, 0);
	if (freeze) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		s->sys(BPF_MAP_FREEZE, &a, sizeof(a));
	}
	return fd;
}

static void strncmp_cases(struct side *s)
{
	static const struct {
		const char *s1;
		uint32_t len;
	} in[] = { { "hello", 6 }, { "hello", 5 }, { "hellp", 6 }, { "hella", 6 },
		   { "help", 3 },  { "help", 4 },  { "", 1 },      { "hello world", 12 },
		   { "h\xe9llo", 6 } };
	int str = const_str_map(s, "hello", 6, BPF_F_RDONLY_PROG, 1, 1);
	int rw = const_str_map(s, "hello", 6, 0, 1, 0);
	int unfrozen = const_str_map(s, "hello", 6, BPF_F_RDONLY_PROG, 1, 0);
	int two = const_str_map(s, "hello", 6, BPF_F_RDONLY_PROG, 2, 1);
	int full = const_str_map(s, "0123456789abcdef", 16, BPF_F_RDONLY_PROG, 1, 1);
	static char bytes[4096];
	char what[128];

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		put_bytes(bytes, sizeof(bytes), in[i].s1, strlen(in[i].s1) + 1, -64);
		snprintf(what, sizeof(what), "strncmp \"%s\" %u with \"hello\"", in[i].s1, in[i].len);
		LOAD_RUN(s, what, BPF_PROG_TYPE_SCHED_CLS,
			 "%smov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, %u\nlddw %%r3, map_value %d 0\n"
			 "call bpf_strncmp\nexit\n", bytes, in[i].len, str);
	}
	snprintf(what, sizeof(what), "strncmp with \"llo\" (offset 2)");
	put_bytes(bytes, sizeof(bytes), "llo", 4, -64);
	LOAD_RUN(s, what, BPF_PROG_TYPE_SCHED_CLS,
		 "%smov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 4\nlddw %%r3, map_value %d 2\n"
		 "call bpf_strncmp\nexit\n", bytes, str);
#define STRNCMP_TO(map, off)                                                              \
	"stw [%%r10-64], 0x68\nmov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 4\n"                 \
	"lddw %%r3, map_value %d " off "\ncall bpf_strncmp\nexit\n", map
	LOAD_ONLY(s, "strncmp with a writable map", BPF_PROG_TYPE_SCHED_CLS, STRNCMP_TO(rw, "0"));
	LOAD_ONLY(s, "strncmp with an unfrozen read-only map", BPF_PROG_TYPE_SCHED_CLS,
		  STRNCMP_TO(unfrozen, "0"));
	LOAD_ONLY(s, "strncmp with a frozen map of 2 elements", BPF_PROG_TYPE_SCHED_CLS,
		  STRNCMP_TO(two, "0"));
	LOAD_ONLY(s, "strncmp with no NUL in the value", BPF_PROG_TYPE_SCHED_CLS,
		  STRNCMP_TO(full, "0"));
	LOAD_ONLY(s, "strncmp with the value's last byte", BPF_PROG_TYPE_SCHED_CLS,
		  STRNCMP_TO(str, "15"));
	LOAD_ONLY(s, "strncmp past the value", BPF_PROG_TYPE_SCHED_CLS, STRNCMP_TO(str, "16"));
	LOAD_ONLY(s, "strncmp with a stack string", BPF_PROG_TYPE_SCHED_CLS,
		  "stw [%%r10-64], 0x68\nmov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 4\n"
		  "mov %%r3, %%r10\nadd %%r3, -64\ncall bpf_strncmp\nexit\n");
	LOAD_ONLY(s, "strncmp with a variable offset", BPF_PROG_TYPE_SCHED_CLS,
		  "call bpf_get_prandom_u32\nand %%r0, 3\nstw [%%r10-64], 0x68\nmov %%r1, %%r10\n"
		  "add %%r1, -64\nmov %%r2, 4\nlddw %%r3, map_value %d 0\nadd %%r3, %%r0\n"
		  "call bpf_strncmp\nexit\n", str);
	LOAD_ONLY(s, "strncmp, size 0", BPF_PROG_TYPE_SCHED_CLS,
		  "stw [%%r10-64], 0x68\nmov %%r1, %%r10\nadd %%r1, -64\nmov %%r2, 0\n"
		  "lddw %%r3, map_value %d 0\ncall bpf_strncmp\nexit\n", str);
	LOAD_ONLY(s, "strncmp from a socket filter", BPF_PROG_TYPE_SOCKET_FILTER,
		  STRNCMP_TO(str, "0"));
#undef STRNCMP_TO
	close(str);
	close(rw);
	close(unfrozen);
	close(two);
	close(full);
}

/* ---- the kfunc bpf_stream_vprintk_impl (6.17+; libbpf-rs's stream test) -------------------- */
/* its format a constant string (__str: check_reg_const_str()), args and len__sz a memory
 * pair (KF_TRUSTED_ARGS: not NULL), aux__prog the verifier's; at run time the stream id,
 * the length and the format checked (-ENOENT, -EINVAL; the text itself is not compared:
 * bpfrt keeps no stream) */
static void stream_cases(struct side *s)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	int32_t k = vml ? brt_btf_find(vml, "bpf_stream_vprintk_impl", BTF_KIND_FUNC) : -1;
	int str = const_str_map(s, "v=%d\n", 6, BPF_F_RDONLY_PROG, 1, 1);
	int bad = const_str_map(s, "v=%q\n", 6, BPF_F_RDONLY_PROG, 1, 1);
	int unfrozen = const_str_map(s, "v=%d\n", 6, BPF_F_RDONLY_PROG, 1, 0);
	static const struct {
		const char *what;
		uint32_t type;
		int32_t id, len;
		int fmt;      /* 0: str, 1: bad, 2: unfrozen, 3: the stack */
		int null_arg; /* args NULL */
	} c[] = {
		{ "stream_vprintk stdout", BPF_PROG_TYPE_SYSCALL, 1, 8, 0, 0 },
		{ "stream_vprintk stderr", BPF_PROG_TYPE_SYSCALL, 2, 8, 0, 0 },
		{ "stream_vprintk stream 3", BPF_PROG_TYPE_SYSCALL, 3, 8, 0, 0 },
		{ "stream_vprintk stream 0", BPF_PROG_TYPE_SYSCALL, 0, 8, 0, 0 },
		{ "stream_vprintk length 4", BPF_PROG_TYPE_SYSCALL, 1, 4, 0, 0 },
		{ "stream_vprintk length 0", BPF_PROG_TYPE_SYSCALL, 1, 0, 0, 0 },
		{ "stream_vprintk bad format", BPF_PROG_TYPE_SYSCALL, 1, 8, 1, 0 },
		{ "stream_vprintk format unfrozen", BPF_PROG_TYPE_SYSCALL, 1, 8, 2, 0 },
		{ "stream_vprintk format on the stack", BPF_PROG_TYPE_SYSCALL, 1, 8, 3, 0 },
		{ "stream_vprintk args NULL", BPF_PROG_TYPE_SYSCALL, 1, 0, 0, 1 },
		{ "stream_vprintk from tc", BPF_PROG_TYPE_SCHED_CLS, 1, 8, 0, 0 },
		{ "stream_vprintk from a socket filter", BPF_PROG_TYPE_SOCKET_FILTER, 1, 8, 0, 0 },
	};

	for (size_t i = 0; k > 0 && str >= 0 && i < sizeof(c) / sizeof(c[0]); i++) {
		int fmt = c[i].fmt == 1 ? bad : c[i].fmt == 2 ? unfrozen : str;
		struct bpf_insn p[16];
		size_t n = 0;
		int fd;

		p[n++] = INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 42);
		p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, c[i].id);
		if (c[i].fmt == 3) {
			p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, BPF_REG_10, 0, 0);
			p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8);
		} else {
			p[n++] = INSN(BPF_LD | BPF_IMM | BPF_DW, 2, BPF_PSEUDO_MAP_VALUE, 0, fmt);
			p[n++] = INSN(0, 0, 0, 0, 0);
		}
		if (c[i].null_arg) {
			p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0);
		} else {
			p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 3, BPF_REG_10, 0, 0);
			p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, -8);
		}
		p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, c[i].len);
		p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, 0);
		p[n++] = INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, k);
		p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		fd = load_insns(s, c[i].what, c[i].type, p, n);
		if (fd >= 0) {
			if (c[i].type == BPF_PROG_TYPE_SYSCALL)
				run(s, fd, c[i].type);
			else
				say(s->t, "ok\n");
			close(fd);
		}
	}
	close(str);
	close(bad);
	close(unfrozen);
}

/* copy_from_user inside an RCU read section or a non-preemptible region: refused
 * ("sleepable helper ... in rcu_read_lock region", "... in non-preemptible region") */
static void sleep_regions(struct side *s)
{
	static const char *const names[] = { "bpf_rcu_read_lock", "bpf_rcu_read_unlock",
					     "bpf_preempt_disable", "bpf_preempt_enable" };
	const struct brt_btf *vml = brt_btf_vmlinux();
	int32_t id[4];

	for (int i = 0; i < 4; i++)
		id[i] = vml ? brt_btf_find(vml, names[i], BTF_KIND_FUNC) : -1;
	for (int r = 0; r < 3; r++) {
		/* 8 bytes from page 1 into fp-8, between the kfunc pair r (or after it) */
		int32_t on = id[r == 1 ? 2 : 0], off = id[r == 1 ? 3 : 1];
		struct bpf_insn after[] = {
			INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, on),
			INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, off),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -8),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 8),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 4096),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_copy_from_user),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};
		struct bpf_insn inside[] = {
			after[0], after[2], after[3], after[4], after[5], after[6], after[1],
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), after[7],
		};
		const char *what = r == 0 ? "copy_from_user inside bpf_rcu_read_lock"
				   : r == 1 ? "copy_from_user inside bpf_preempt_disable"
					    : "copy_from_user after bpf_rcu_read_unlock";
		int fd;

		if (on <= 0 || off <= 0)
			continue; /* no kernel BTF: both sides would refuse alike */
		fd = r < 2 ? load_insns(s, what, BPF_PROG_TYPE_SYSCALL, inside, 9)
			   : load_insns(s, what, BPF_PROG_TYPE_SYSCALL, after, 8);
		if (fd >= 0) {
			run(s, fd, BPF_PROG_TYPE_SYSCALL);
			close(fd);
		}
	}
}

/* ---- bpf_get_retval, bpf_set_retval; bpf_get_socket_cookie of socket contexts ---------- */

static void cgroup_helpers(struct side *s)
{
	static const struct {
		const char *name;
		uint32_t type, attach;
	} at[] = {
		{ "cgroup_skb ingress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS },
		{ "cgroup_skb egress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS },
		{ "cgroup_sock create", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_CREATE },
		{ "cgroup_sock post_bind4", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET4_POST_BIND },
		{ "sock_addr connect4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT },
		{ "sock_addr sendmsg6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP6_SENDMSG },
		{ "sock_addr recvmsg4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP4_RECVMSG },
		{ "sock_addr getpeername6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR,
		  BPF_CGROUP_INET6_GETPEERNAME },
		{ "sock_addr getsockname4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR,
		  BPF_CGROUP_INET4_GETSOCKNAME },
		{ "sock_ops", BPF_PROG_TYPE_SOCK_OPS, BPF_CGROUP_SOCK_OPS },
		{ "cgroup_device", BPF_PROG_TYPE_CGROUP_DEVICE, BPF_CGROUP_DEVICE },
		{ "cgroup_sysctl", BPF_PROG_TYPE_CGROUP_SYSCTL, BPF_CGROUP_SYSCTL },
		{ "sockopt get", BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_GETSOCKOPT },
		{ "sockopt set", BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_SETSOCKOPT },
		{ "sk_skb", BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_VERDICT },
		{ "sk_msg", BPF_PROG_TYPE_SK_MSG, BPF_SK_MSG_VERDICT },
		{ "socket filter", BPF_PROG_TYPE_SOCKET_FILTER, 0 },
		{ "xdp", BPF_PROG_TYPE_XDP, 0 },
		{ "tc", BPF_PROG_TYPE_SCHED_CLS, 0 },
	};
	/* the sysctl and socket option helpers: their program types and arguments */
	static const struct {
		const char *name, *text;
	} more[] = {
		{ "sysctl_get_name", "mov %r2, %r10\nadd %r2, -16\nmov %r3, 16\nmov %r4, 1\n"
				     "call bpf_sysctl_get_name\nmov %r0, 1\nexit\n" },
		{ "sysctl_get_current_value", "mov %r2, %r10\nadd %r2, -16\nmov %r3, 16\n"
					      "call bpf_sysctl_get_current_value\nmov %r0, 1\nexit\n" },
		{ "sysctl_get_new_value", "mov %r2, %r10\nadd %r2, -16\nmov %r3, 16\n"
					  "call bpf_sysctl_get_new_value\nmov %r0, 1\nexit\n" },
		{ "sysctl_set_new_value of uninitialised stack",
		  "mov %r2, %r10\nadd %r2, -16\nmov %r3, 16\ncall bpf_sysctl_set_new_value\n"
		  "mov %r0, 1\nexit\n" },
		{ "getsockopt", "mov %r2, 1\nmov %r3, 2\nmov %r4, %r10\nadd %r4, -16\nmov %r5, 16\n"
				"call bpf_getsockopt\nmov %r0, 1\nexit\n" },
		{ "setsockopt", "stdw [%r10-8], 1\nmov %r2, 1\nmov %r3, 2\nmov %r4, %r10\n"
				"add %r4, -8\nmov %r5, 4\ncall bpf_setsockopt\nmov %r0, 1\nexit\n" },
		{ "setsockopt of uninitialised stack",
		  "mov %r2, 1\nmov %r3, 2\nmov %r4, %r10\nadd %r4, -8\nmov %r5, 4\n"
		  "call bpf_setsockopt\nmov %r0, 1\nexit\n" },
		/* (session 24: Merbridge's and Kmesh's programs call these) */
		{ "bind", "stdw [%r10-16], 2\nstdw [%r10-8], 0\nmov %r2, %r10\nadd %r2, -16\n"
			  "mov %r3, 16\ncall bpf_bind\nmov %r0, 1\nexit\n" },
		{ "bind of uninitialised stack", "mov %r2, %r10\nadd %r2, -16\nmov %r3, 16\n"
						 "call bpf_bind\nmov %r0, 1\nexit\n" },
		{ "get_netns_cookie of the context", "call bpf_get_netns_cookie\nmov %r0, 1\nexit\n" },
		{ "get_netns_cookie of NULL", "mov %r1, 0\ncall bpf_get_netns_cookie\nmov %r0, 1\n"
					      "exit\n" },
		{ "get_netns_cookie of a scalar", "mov %r1, 1\ncall bpf_get_netns_cookie\n"
						  "mov %r0, 1\nexit\n" },
		{ "get_netns_cookie of the context moved", "add %r1, 8\ncall bpf_get_netns_cookie\n"
							   "mov %r0, 1\nexit\n" },
		{ "sock_ops_cb_flags_set", "mov %r2, 1\ncall bpf_sock_ops_cb_flags_set\nmov %r0, 1\n"
					   "exit\n" },
		/* (session 26: libbpf-rs's tcp_option example stores a header option) */
		{ "load_hdr_opt", "stdw [%r10-8], 1026\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 8\n"
				  "mov %r4, 0\ncall bpf_load_hdr_opt\nmov %r0, 1\nexit\n" },
		{ "load_hdr_opt of uninitialised stack", "mov %r2, %r10\nadd %r2, -8\nmov %r3, 8\n"
							 "mov %r4, 0\ncall bpf_load_hdr_opt\nmov %r0, 1\n"
							 "exit\n" },
		{ "store_hdr_opt", "stdw [%r10-8], 1026\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 4\n"
				   "mov %r4, 0\ncall bpf_store_hdr_opt\nmov %r0, 1\nexit\n" },
		{ "store_hdr_opt of uninitialised stack", "mov %r2, %r10\nadd %r2, -8\nmov %r3, 4\n"
							  "mov %r4, 0\ncall bpf_store_hdr_opt\n"
							  "mov %r0, 1\nexit\n" },
		{ "store_hdr_opt of size 0", "stdw [%r10-8], 0\nmov %r2, %r10\nadd %r2, -8\n"
					     "mov %r3, 0\nmov %r4, 0\ncall bpf_store_hdr_opt\n"
					     "mov %r0, 1\nexit\n" },
		{ "reserve_hdr_opt", "mov %r2, 4\nmov %r3, 0\ncall bpf_reserve_hdr_opt\nmov %r0, 1\n"
				     "exit\n" },
		{ "msg_apply_bytes", "mov %r2, 1\ncall bpf_msg_apply_bytes\nmov %r0, 1\nexit\n" },
		{ "msg_cork_bytes", "mov %r2, 1\ncall bpf_msg_cork_bytes\nmov %r0, 1\nexit\n" },
		{ "msg_pull_data", "mov %r2, 0\nmov %r3, 1\nmov %r4, 0\ncall bpf_msg_pull_data\n"
				   "mov %r0, 1\nexit\n" },
		{ "msg_push_data", "mov %r2, 0\nmov %r3, 1\nmov %r4, 0\ncall bpf_msg_push_data\n"
				   "mov %r0, 1\nexit\n" },
		{ "msg_pop_data", "mov %r2, 0\nmov %r3, 1\nmov %r4, 0\ncall bpf_msg_pop_data\n"
				  "mov %r0, 1\nexit\n" },
	};
	char what[128];
	int fd;

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		/* return values the hook accepts: 1 (0 for sock_ops and sysctl is fine too) */
		snprintf(what, sizeof(what), "%s: get_retval", at[i].name);
		fd = load(s, what, at[i].type, at[i].attach, "call bpf_get_retval\nmov %%r0, 1\nexit\n");
		if (fd >= 0) {
			say(s->t, "ok\n");
			close(fd);
		}
		snprintf(what, sizeof(what), "%s: set_retval", at[i].name);
		fd = load(s, what, at[i].type, at[i].attach,
			  "mov %%r1, -1\ncall bpf_set_retval\nmov %%r0, 1\nexit\n");
		if (fd >= 0) {
			say(s->t, "ok\n");
			close(fd);
		}
		snprintf(what, sizeof(what), "%s: get_socket_cookie of the context", at[i].name);
		fd = load(s, what, at[i].type, at[i].attach,
			  "call bpf_get_socket_cookie\nmov %%r0, 1\nexit\n");
		if (fd >= 0) {
			say(s->t, "ok\n");
			close(fd);
		}
		for (size_t h = 0; h < sizeof(more) / sizeof(more[0]); h++) {
			snprintf(what, sizeof(what), "%s: %s", at[i].name, more[h].name);
			fd = load(s, what, at[i].type, at[i].attach, "%s", more[h].text);
			if (fd >= 0) {
				say(s->t, "ok\n");
				close(fd);
			}
		}
	}
	LOAD_ONLY(s, "sockopt get: set_retval of a pointer", BPF_PROG_TYPE_CGROUP_SOCKOPT,
		  "mov %%r1, %%r10\ncall bpf_set_retval\nmov %%r0, 1\nexit\n");
	/* bpf_get_netns_cookie in test runs: the test run's skb belongs to a socket made in
	 * the caller's namespace; NULL asks for the initial namespace's (this test runs in
	 * the initial one).  Both halves of the cookie. */
	LOAD_RUN(s, "socket filter: get_netns_cookie of the context, low half",
		 BPF_PROG_TYPE_SOCKET_FILTER, "call bpf_get_netns_cookie\nexit\n");
	LOAD_RUN(s, "socket filter: get_netns_cookie of the context, high half",
		 BPF_PROG_TYPE_SOCKET_FILTER, "call bpf_get_netns_cookie\nrsh %%r0, 32\nexit\n");
	LOAD_RUN(s, "tc: get_netns_cookie of the context, low half", BPF_PROG_TYPE_SCHED_CLS,
		 "call bpf_get_netns_cookie\nexit\n");
	LOAD_RUN(s, "tc: get_netns_cookie of NULL, low half", BPF_PROG_TYPE_SCHED_CLS,
		 "mov %%r1, 0\ncall bpf_get_netns_cookie\nexit\n");
	LOAD_RUN(s, "tc: get_netns_cookie nonzero", BPF_PROG_TYPE_SCHED_CLS,
		 "call bpf_get_netns_cookie\nmov %%r1, %%r0\nmov %%r0, 0\njeq %%r1, 0, +1\n"
		 "mov %%r0, 1\nexit\n");
}

/* ---- bpf_skb_set_tstamp (tc) ---------------------------------------------------------------- */

static void set_tstamp(struct side *s)
{
	static const struct {
		uint16_t ethertype;
		int64_t tstamp;
		int32_t type;
	} in[] = { { 0x0800, 1000, 0 }, { 0x0800, 0, 0 },     { 0x0800, 1000, 1 },
		   { 0x0800, 0, 1 },    { 0x86dd, 5000, 2 },  { 0x86dd, 0, 2 },
		   { 0x0800, 7, 3 },    { 0x0800, 7, -1 },    { 0x0806, 1000, 0 },
		   { 0x0800, -1, 1 } };
	int out = create_map(s->sys, BPF_MAP_TYPE_ARRAY, 4, 24, 1, 0, 0);
	uint32_t k0 = 0;
	char what[128];

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		uint64_t v[3] = { 0, 0, 0 };
		int fd;

		snprintf(what, sizeof(what), "skb_set_tstamp ethertype %#x tstamp %lld type %d",
			 in[i].ethertype, (long long)in[i].tstamp, in[i].type);
		/* out[0] = { answer, skb->tstamp, skb->tstamp_type } */
		fd = load(s, what, BPF_PROG_TYPE_SCHED_CLS, 0,
			  "mov %%r6, %%r1\nlddw %%r2, %lld\nmov %%r3, %d\ncall bpf_skb_set_tstamp\n"
			  "stxdw [%%r10-24], %%r0\nldxdw %%r1, [%%r6+152]\nstxdw [%%r10-16], %%r1\n"
			  "ldxb %%r1, [%%r6+180]\nstxdw [%%r10-8], %%r1\nstw [%%r10-28], 0\n"
			  "lddw %%r1, map_fd %d\nmov %%r2, %%r10\nadd %%r2, -28\nmov %%r3, %%r10\n"
			  "add %%r3, -24\nmov %%r4, 0\ncall bpf_map_update_elem\nmov %%r0, 0\nexit\n",
			  (long long)in[i].tstamp, in[i].type, out);
		if (fd < 0)
			continue;
		run_ethertype = in[i].ethertype;
		run(s, fd, BPF_PROG_TYPE_SCHED_CLS);
		run_ethertype = 0x0800;
		close(fd);
		elem(s->sys, BPF_MAP_LOOKUP_ELEM, out, &k0, v, 0);
		say(s->t, "  answer %lld tstamp %lld type %lld\n", (long long)v[0], (long long)v[1],
		    (long long)v[2]);
	}
	close(out);
	LOAD_ONLY(s, "skb_set_tstamp from xdp", BPF_PROG_TYPE_XDP,
		  "mov %%r2, 0\nmov %%r3, 0\ncall bpf_skb_set_tstamp\nexit\n");
	LOAD_ONLY(s, "skb_set_tstamp from cgroup_skb", BPF_PROG_TYPE_CGROUP_SKB,
		  "mov %%r2, 0\nmov %%r3, 0\ncall bpf_skb_set_tstamp\nmov %%r0, 1\nexit\n");
	LOAD_ONLY(s, "skb_set_tstamp of the stack", BPF_PROG_TYPE_SCHED_CLS,
		  "mov %%r1, %%r10\nmov %%r2, 0\nmov %%r3, 0\ncall bpf_skb_set_tstamp\nexit\n");
}

/* ---- bpf_send_signal, bpf_send_signal_thread -------------------------------------------- */

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

/* Current of a test run is the thread that runs it: the signal comes to this process (a
 * SIGUSR1 counted by on_usr1, which the transcript says), 0 only checks, past _NSIG is
 * -EINVAL; from a syscall program (not atomic), a raw tracepoint and XDP. */
static void send_signal(struct side *s)
{
	static const struct {
		const char *what;
		uint32_t type;
		const char *call;
		int sig;
	} c[] = {
		{ "send_signal SIGUSR1, syscall", BPF_PROG_TYPE_SYSCALL, "bpf_send_signal", SIGUSR1 },
		{ "send_signal_thread SIGUSR1, syscall", BPF_PROG_TYPE_SYSCALL,
		  "bpf_send_signal_thread", SIGUSR1 },
		{ "send_signal 0, syscall", BPF_PROG_TYPE_SYSCALL, "bpf_send_signal", 0 },
		{ "send_signal 65, syscall", BPF_PROG_TYPE_SYSCALL, "bpf_send_signal", 65 },
		{ "send_signal_thread -1, syscall", BPF_PROG_TYPE_SYSCALL,
		  "bpf_send_signal_thread", -1 },
		{ "send_signal SIGUSR1, raw tracepoint", BPF_PROG_TYPE_RAW_TRACEPOINT,
		  "bpf_send_signal", SIGUSR1 },
		{ "send_signal_thread SIGUSR1, xdp", BPF_PROG_TYPE_XDP, "bpf_send_signal_thread",
		  SIGUSR1 },
		{ "send_signal 65, xdp", BPF_PROG_TYPE_XDP, "bpf_send_signal", 65 },
	};
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, &old);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		usr1 = 0;
		LOAD_RUN(s, c[i].what, c[i].type, "mov %%r1, %d\ncall %s\nexit\n", c[i].sig,
			 c[i].call);
		say(s->t, "%s: SIGUSR1 %d\n", c[i].what, (int)usr1);
	}
	sigaction(SIGUSR1, &old, NULL);
}

static void script(struct side *s)
{
	percpu(s);
	copy_user(s);
	sleep_regions(s);
	strto(s);
	strncmp_cases(s);
	stream_cases(s);
	cgroup_helpers(s);
	set_tstamp(s);
	send_signal(s);
}

int main(void)
{
	static struct transcript kern, ours;
	/* a build without the JIT (the switch preset) compares the engines it has */
	static const uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
					    BPFRT_ENGINE_JIT
#endif
	};
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
