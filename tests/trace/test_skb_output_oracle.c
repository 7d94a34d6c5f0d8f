/* test_skb_output_oracle.c - bpf_skb_output and bpf_xdp_output (tracing_prog_func_proto():
 * a tracing or LSM program's perf output of the kernel packet it was handed; ptcpdump's
 * tp_btf/net_dev_queue and tp_btf/netif_receive_skb call bpf_skb_output) against the
 * kernel: the same programs, each side with its own perf event array, load or fail alike
 * through bpf(2) and bpfrt_bpf() with the same errno and the kernel's error line: the
 * packet argument's BTF type (sk_buff, xdp_buff, a task_struct, a moved pointer, a scalar),
 * the map type, the data's size, the licence (GPL only) and the program types that lack
 * them (a syscall program has them: syscall_prog_func_proto()).  Programs both accept are test-run on both sides (a tp_btf program's run is
 * refused alike).  Root only (the kernel side); otherwise skipped.
 */
#include "trace_test.h"

#include "btf/btf.h"
#include "maps/storage_oracle.h"

struct ocase {
	const char *name;
	uint32_t type;      /* BPF_PROG_TYPE_* */
	const char *target; /* tp_btf tracepoint; NULL: none */
	const char *lic;
	int map_type;       /* of the map "map_fd @map" names */
	const char *text;   /* assembly, "@map": the map's fd */
	const char *msg;    /* a line both logs must contain (NULL: both accept) */
};

/* r1 = the tracepoint's first pointer argument, r2 = the map, r3 = BPF_F_CURRENT_CPU,
 * r4/r5 = 8 bytes at fp-8 */
#define ARGS(reg1)                                                                        \
	"stdw [%r10-8], 7\n" reg1 "lddw %r2, map_fd @map\nlddw %r3, 0xffffffff\n"            \
	"mov %r4, %r10\nadd %r4, -8\nmov %r5, 8\n"
#define SKB "ldxdw %r1, [%r1+0]\n"
#define PERF BPF_MAP_TYPE_PERF_EVENT_ARRAY
#define TR BPF_PROG_TYPE_TRACING
#define NDQ "net_dev_queue" /* (struct sk_buff *skb) */
#define CGRP 32 /* BPF_MAP_TYPE_CGRP_STORAGE, newer than the uapi header */
/* bpf_cgrp_storage_get(map, r2 = the first argument + more, NULL, 0) */
#define CGRP_GET(more)                                                                    \
	"ldxdw %r2, [%r1+0]\n" more "lddw %r1, map_fd @map\nmov %r3, 0\nmov %r4, 0\n"        \
	"call 210\nmov %r0, 0\nexit\n"

static const struct ocase cases[] = {
	{ "skb_output of net_dev_queue's skb", TR, NDQ, "GPL", PERF,
	  ARGS(SKB) "call bpf_skb_output\nmov %r0, 0\nexit\n", NULL },
	{ "skb_output with ctxlen bytes of the packet", TR, NDQ, "GPL", PERF,
	  "stdw [%r10-8], 7\nldxdw %r1, [%r1+0]\nlddw %r2, map_fd @map\n"
	  "lddw %r3, 0x40ffffffff\nmov %r4, %r10\nadd %r4, -8\nmov %r5, 8\n"
	  "call bpf_skb_output\nmov %r0, 0\nexit\n", NULL },
	{ "skb_output's result used", TR, NDQ, "GPL", PERF,
	  ARGS(SKB) "call bpf_skb_output\nexit\n", NULL },
	{ "xdp_output of an sk_buff", TR, NDQ, "GPL", PERF,
	  ARGS(SKB) "call bpf_xdp_output\nmov %r0, 0\nexit\n",
	  "R1 is of type sk_buff but xdp_buff is expected" },
	{ "skb_output into an array", TR, NDQ, "GPL", BPF_MAP_TYPE_ARRAY,
	  ARGS(SKB) "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "cannot pass map_type 2 into func bpf_skb_output#111" },
	{ "skb_output into a hash", TR, NDQ, "GPL", BPF_MAP_TYPE_HASH,
	  ARGS(SKB) "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "cannot pass map_type 1 into func bpf_skb_output#111" },
	{ "skb_output of a scalar", TR, NDQ, "GPL", PERF,
	  ARGS("mov %r1, 0\n") "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "R1 type=scalar expected=ptr_, trusted_ptr_, rcu_ptr_" },
	{ "skb_output of the context", TR, NDQ, "GPL", PERF,
	  ARGS("") "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "R1 type=ctx expected=ptr_, trusted_ptr_, rcu_ptr_" },
	{ "skb_output of the skb moved by 8", TR, NDQ, "GPL", PERF,
	  ARGS(SKB "add %r1, 8\n") "call bpf_skb_output\nmov %r0, 0\nexit\n", "R1" },
	{ "skb_output of sched_switch's prev", TR, "sched_switch", "GPL", PERF,
	  ARGS("ldxdw %r1, [%r1+8]\n") "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "R1 is of type task_struct but sk_buff is expected" },
	{ "skb_output of 16 bytes of 8 written", TR, NDQ, "GPL", PERF,
	  "stdw [%r10-8], 7\nldxdw %r1, [%r1+0]\nlddw %r2, map_fd @map\n"
	  "lddw %r3, 0xffffffff\nmov %r4, %r10\nadd %r4, -8\nmov %r5, 16\n"
	  "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "invalid read from stack R4 off=-8 size=16" },
	{ "skb_output with a variable size", TR, NDQ, "GPL", PERF,
	  "ldxdw %r6, [%r1+0]\nstdw [%r10-8], 7\ncall bpf_get_prandom_u32\n"
	  "mov %r5, %r0\nand %r5, 7\nmov %r1, %r6\nlddw %r2, map_fd @map\n"
	  "lddw %r3, 0xffffffff\nmov %r4, %r10\nadd %r4, -8\ncall bpf_skb_output\n"
	  "mov %r0, 0\nexit\n", NULL },
	{ "skb_output from a non-GPL program", TR, NDQ, "Proprietary", PERF,
	  ARGS(SKB) "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "cannot call GPL-restricted function from non-GPL compatible program" },
	{ "skb_output in a kprobe", BPF_PROG_TYPE_KPROBE, NULL, "GPL", PERF,
	  ARGS("") "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_skb_output#111" },
	{ "skb_output in a raw tracepoint", BPF_PROG_TYPE_RAW_TRACEPOINT, NULL, "GPL", PERF,
	  ARGS(SKB) "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_skb_output#111" },
	{ "xdp_output in an XDP program", BPF_PROG_TYPE_XDP, NULL, "GPL", PERF,
	  ARGS("") "call bpf_xdp_output\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_xdp_output#121" },
	{ "skb_output in a tc program", BPF_PROG_TYPE_SCHED_CLS, NULL, "GPL", PERF,
	  ARGS("") "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_skb_output#111" },
	/* syscall_prog_func_proto() falls back on tracing_prog_func_proto(): a syscall
	 * program has both, and only its context to give them (and no perf event array: a
	 * sleepable program's map; an array, whose check comes after R1's) */
	{ "skb_output in a syscall program", BPF_PROG_TYPE_SYSCALL, NULL, "GPL", BPF_MAP_TYPE_ARRAY,
	  ARGS("") "call bpf_skb_output\nmov %r0, 0\nexit\n",
	  "R1 type=ctx expected=ptr_, trusted_ptr_, rcu_ptr_" },
	{ "xdp_output in a syscall program", BPF_PROG_TYPE_SYSCALL, NULL, "GPL", BPF_MAP_TYPE_ARRAY,
	  ARGS("") "call bpf_xdp_output\nmov %r0, 0\nexit\n",
	  "R1 type=ctx expected=ptr_, trusted_ptr_, rcu_ptr_" },
	/* the same fallback's other helpers of a kernel pointer (review25: bpfrt refused them
	 * EINVAL, "program of this type cannot use helper") */
	{ "skc_to_tcp_sock in a syscall program", BPF_PROG_TYPE_SYSCALL, NULL, "GPL", PERF,
	  "call bpf_skc_to_tcp_sock\nmov %r0, 0\nexit\n",
	  "R1 type=ctx expected=sock_common, sock, tcp_sock, xdp_sock, ptr_, trusted_ptr_" },
	{ "d_path in a syscall program", BPF_PROG_TYPE_SYSCALL, NULL, "GPL", PERF,
	  "call bpf_d_path\nmov %r0, 0\nexit\n", "helper call is not allowed in probe" },
	{ "get_socket_cookie in a syscall program", BPF_PROG_TYPE_SYSCALL, NULL, "GPL", PERF,
	  "call bpf_get_socket_cookie\nmov %r0, 0\nexit\n",
	  "R1 type=ctx expected=sock_common, sock, tcp_sock, xdp_sock, ptr_, trusted_ptr_" },
	{ "sk_storage_get in a syscall program", BPF_PROG_TYPE_SYSCALL, NULL, "GPL", PERF,
	  "call bpf_sk_storage_get\nmov %r0, 0\nexit\n", "helper call is not allowed in probe" },
	/* btf_struct_ids_match() walks the pointer's struct to its offset (session 26: bpfrt
	 * compared the type's name at offset 0 only): tp_btf/cgroup_setup_root's root (a
	 * trusted struct cgroup_root) at 64 holds its struct cgroup, cgrp */
	{ "cgrp_storage_get of &root->cgrp", TR, "cgroup_setup_root", "GPL", CGRP,
	  CGRP_GET("add %r2, 64\n"), NULL },
	{ "cgrp_storage_get of the root itself", TR, "cgroup_setup_root", "GPL", CGRP,
	  CGRP_GET(""), "R2 is of type cgroup_root but cgroup is expected" },
	{ "cgrp_storage_get of root + 8", TR, "cgroup_setup_root", "GPL", CGRP,
	  CGRP_GET("add %r2, 8\n"), "R2 is of type cgroup_root but cgroup is expected" },
	{ "cgrp_storage_get of root + 72, inside cgrp", TR, "cgroup_setup_root", "GPL", CGRP,
	  CGRP_GET("add %r2, 72\n"), "R2 is of type cgroup_root but cgroup is expected" },
};

static const struct brt_btf *vmlinux;

static int map_create(int kernel, int type)
{
	union bpf_attr a;
	int fd;

	if (type == CGRP) /* an int key, u8[16] values, BTF-typed */
		return storage_create(kernel ? kernel_bpf : bpfrt_bpf, CGRP, 4, 16, 0,
				      BPF_F_NO_PREALLOC, 1, 3);

	memset(&a, 0, sizeof(a));
	a.map_type = (uint32_t)type;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 4;
	fd = kernel ? (int)syscall(__NR_bpf, BPF_MAP_CREATE, &a, sizeof(a))
		    : bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

static int load(int kernel, const struct ocase *c, int map, char *log, size_t loglen)
{
	static char text[4096];
	struct bpf_insn *insns;
	union bpf_attr a;
	char err[256];
	size_t n;
	int fd;

	/* the text with "@map" replaced by the map's fd */
	{
		const char *at = strstr(c->text, "@map");

		if (!at)
			snprintf(text, sizeof(text), "%s", c->text);
		else
			snprintf(text, sizeof(text), "%.*s%d%s", (int)(at - c->text), c->text,
				 map, at + 4);
	}
	if (bpfrt_asm(text, "test.s", &insns, &n, err, sizeof(err))) {
		fprintf(stderr, "asm: %s\n", err);
		return -EINVAL;
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = c->type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)c->lic;
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = (uint32_t)loglen;
	a.log_level = 1;
	log[0] = 0;
	/* a syscall program loads sleepable only ("Syscall programs can only be sleepable") */
	if (c->type == BPF_PROG_TYPE_SYSCALL)
		a.prog_flags = BPF_F_SLEEPABLE;
	if (c->target) {
		int id = brt_btf_attach_id(vmlinux, BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP,
					   c->target);

		a.expected_attach_type = BPF_TRACE_RAW_TP;
		a.attach_btf_id = id > 0 ? (uint32_t)id : 0;
	}
	fd = kernel ? (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a))
		    : bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		fd = -errno;
	free(insns);
	return fd;
}

/* BPF_PROG_TEST_RUN with 8 zero bytes of context: -errno or the retval */
static int run(int kernel, int fd)
{
	unsigned char ctx[8] = { 0 };
	union bpf_attr a;
	int r;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.ctx_in = (uint64_t)(uintptr_t)ctx;
	a.test.ctx_size_in = sizeof(ctx);
	r = kernel ? (int)syscall(__NR_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a))
		   : bpfrt_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a));
	return r < 0 ? -errno : (int)a.test.retval;
}

/* c on both sides: the same verdict, errno and (for a refusal) c->msg in both logs; test
 * runs of what both accept compared.  1 when both accepted. */
static int check_case(const struct ocase *c, char *log1, char *log2, size_t loglen)
{
	int bm = map_create(0, c->map_type), km = map_create(1, c->map_type);
	int a, b, both = 0;

	T_CASE(c->name);
	T_ASSERT(bm >= 0 && km >= 0);
	a = load(0, c, bm, log1, loglen);
	b = load(1, c, km, log2, loglen);
	T_EQ_INT(b < 0 ? b : 0, a < 0 ? a : 0);
	if ((a < 0) != (b < 0) || (a < 0 && a != b))
		fprintf(stderr, "  bpfrt log:\n%s  kernel log:\n%s", log1, log2);
	if (c->msg) {
		T_CONTAINS(c->msg, log1);
		T_CONTAINS(c->msg, log2);
		T_ASSERT(a < 0);
	} else {
		T_ASSERT(a >= 0);
	}
	if (a >= 0 && b >= 0) {
		T_EQ_INT(run(1, b), run(0, a));
		both = 1;
	}
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	close(bm);
	close(km);
	return both;
}

int main(void)
{
	static char log1[65536], log2[65536];
	int accepted = 0;

	if (geteuid() != 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	vmlinux = brt_btf_vmlinux();
	if (!vmlinux)
		T_SKIP("no kernel BTF (/sys/kernel/btf/vmlinux)");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		accepted += check_case(&cases[i], log1, log2, sizeof(log1));
	T_CASE("cases both accept");
	T_ASSERT(accepted >= 4);
	return t_done();
}
