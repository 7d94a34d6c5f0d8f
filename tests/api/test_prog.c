/* test_prog.c - BPF_PROG_LOAD and BPF_PROG_TEST_RUN against the kernel: each case loads
 * the same program (maps created the same way, lddw map_fd N naming the N-th map) through
 * bpfrt_bpf() and, as root, the real bpf(2), runs it, and compares load errno, retval,
 * data_out, ctx_out and the maps' contents afterwards.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "harness.h"
#include "api/diff.h"

struct mapspec {
	uint32_t type, key_size, value_size, max_entries;
};

struct prog_case {
	const char *name;
	uint32_t type;
	const char *text;
	struct mapspec maps[2];
	int load_err;
	/* test run */
	int run;
	uint32_t data_len;      /* packet of this many bytes (pattern), 0 none */
	uint32_t ctx_len;       /* context given: this many bytes (pattern zeroed but below) */
	uint64_t ctx_u64[4];    /* raw_tp arguments */
	uint32_t repeat;
	uint32_t data_out_room; /* 0: room for everything */
	int run_err;
	uint32_t retval;
	int check_retval;
	/* after: value of key 0..3 of map 0 (u32 keys) compared with the kernel */
	int dump_map0;
};

#define SKF BPF_PROG_TYPE_SOCKET_FILTER
#define TC BPF_PROG_TYPE_SCHED_CLS

static const struct prog_case cases[] = {
	{ "return 7", SKF, "mov %r0, 7\nexit\n", .run = 1, .data_len = 64, .retval = 7,
	  .check_retval = 1 },
	{ "socket filter: skb->len", SKF, "ldxw %r0, [%r1+0]\nexit\n", .run = 1,
	  .data_len = 60, .check_retval = 1, .retval = 46 },
	{ "socket filter: ldabsh 12 (ethertype)", SKF, "mov %r6, %r1\nldabsh 12\nexit\n",
	  .run = 1, .data_len = 64, .check_retval = 1 },
	{ "tc: skb->len counts the L2 header", TC, "ldxw %r0, [%r1+0]\nexit\n", .run = 1,
	  .data_len = 60, .check_retval = 1, .retval = 60 },
	{ "tc: write mark and cb[1], ctx_out", TC,
	  "stw [%r1+8], 0x1234\nstw [%r1+52], 99\nmov %r0, 0\nexit\n", .run = 1,
	  .data_len = 64, .ctx_len = sizeof(struct __sk_buff), .check_retval = 1 },
	{ "tc: direct packet write", TC,
	  "ldxw %r2, [%r1+76]\nldxw %r3, [%r1+80]\nmov %r4, %r2\nadd %r4, 4\n"
	  "jgt %r4, %r3, +1\nstw [%r2+0], 0x11223344\nmov %r0, 1\nexit\n",
	  .run = 1, .data_len = 64, .check_retval = 1 },
	{ "xdp: write a byte, XDP_TX", BPF_PROG_TYPE_XDP,
	  "ldxw %r2, [%r1+0]\nldxw %r3, [%r1+4]\nmov %r4, %r2\nadd %r4, 1\n"
	  "jgt %r4, %r3, +1\nstb [%r2+0], 0xaa\nmov %r0, 3\nexit\n",
	  .run = 1, .data_len = 80, .ctx_len = sizeof(struct xdp_md), .check_retval = 1,
	  .retval = 3 },
	{ "xdp: data_out too small is ENOSPC", BPF_PROG_TYPE_XDP, "mov %r0, 2\nexit\n",
	  .run = 1, .data_len = 80, .data_out_room = 10, .run_err = ENOSPC },
	{ "xdp: packet shorter than ETH_HLEN", BPF_PROG_TYPE_XDP, "mov %r0, 2\nexit\n",
	  .run = 1, .data_len = 10, .run_err = EINVAL },
	{ "raw_tp: sum of two args", BPF_PROG_TYPE_RAW_TRACEPOINT,
	  "ldxdw %r0, [%r1+0]\nldxdw %r2, [%r1+8]\nadd %r0, %r2\nexit\n", .run = 1,
	  .ctx_len = 16, .ctx_u64 = { 40, 2 }, .check_retval = 1, .retval = 42 },
	{ "raw_tp: repeat is EINVAL", BPF_PROG_TYPE_RAW_TRACEPOINT, "mov %r0, 0\nexit\n",
	  .run = 1, .ctx_len = 8, .repeat = 2, .run_err = EINVAL },
	{ "array counter: lookup + atomic add, repeat 5", SKF,
	  "stw [%r10-4], 1\nmov %r2, %r10\nadd %r2, -4\nlddw %r1, map_fd 0\ncall 1\n"
	  "jeq %r0, 0, +3\nmov %r1, 1\nlock add [%r0+0], %r1\nldxdw %r0, [%r0+0]\nexit\n",
	  { { BPF_MAP_TYPE_ARRAY, 4, 8, 4 } }, .run = 1, .data_len = 64, .repeat = 5,
	  .check_retval = 1, .retval = 5, .dump_map0 = 1 },
	{ "hash: update from the program", SKF,
	  "stw [%r10-4], 2\nstdw [%r10-16], 77\nmov %r2, %r10\nadd %r2, -4\n"
	  "mov %r3, %r10\nadd %r3, -16\nmov %r4, 0\nlddw %r1, map_fd 0\ncall 2\nexit\n",
	  { { BPF_MAP_TYPE_HASH, 4, 8, 4 } }, .run = 1, .data_len = 64, .check_retval = 1,
	  .dump_map0 = 1 },
	{ "hash: delete of a missing key returns -ENOENT", SKF,
	  "stw [%r10-4], 3\nmov %r2, %r10\nadd %r2, -4\nlddw %r1, map_fd 0\ncall 3\nexit\n",
	  { { BPF_MAP_TYPE_HASH, 4, 8, 4 } }, .run = 1, .data_len = 64, .check_retval = 1,
	  .retval = (uint32_t)-ENOENT },
	{ "direct value access (map_value)", SKF,
	  "lddw %r1, map_value 0 4\nstw [%r1+0], 5\nldxw %r0, [%r1+0]\nexit\n",
	  { { BPF_MAP_TYPE_ARRAY, 4, 8, 1 } }, .run = 1, .data_len = 64, .check_retval = 1,
	  .retval = 5, .dump_map0 = 1 },
	/* load errors */
	{ "unknown opcode", SKF, "mov %r0, 0\nexit\n", .load_err = EINVAL },
	{ "unknown prog type", 9999, "mov %r0, 0\nexit\n", .load_err = EINVAL },
};

/* Special load-attr mistakes, run on both sides. */
enum load_mistake {
	LM_NONE,
	LM_ZERO_INSNS,
	LM_NULL_LICENSE,
	LM_BAD_INSNS_PTR,
	LM_BAD_NAME,
	LM_BAD_FLAGS,
	LM_LOG_NO_LEVEL,
	LM_CLOSED_MAP_FD,
	LM_PROG_FD_AS_MAP,
	LM_BAD_OPCODE,
};

static const struct {
	const char *name;
	enum load_mistake m;
	int err;
} mistakes[] = {
	{ "insn_cnt 0", LM_ZERO_INSNS, E2BIG },
	{ "license NULL", LM_NULL_LICENSE, EFAULT },
	{ "insns unmapped", LM_BAD_INSNS_PTR, EFAULT },
	{ "prog_name with '-'", LM_BAD_NAME, EINVAL },
	{ "unknown prog_flags", LM_BAD_FLAGS, EINVAL },
	{ "log_buf without log_level", LM_LOG_NO_LEVEL, EINVAL },
	{ "lddw map_fd of a closed fd", LM_CLOSED_MAP_FD, EBADF },
	{ "lddw map_fd of a program fd", LM_PROG_FD_AS_MAP, EINVAL },
	{ "opcode 0xff", LM_BAD_OPCODE, EINVAL },
};

static void *bad_ptr(void)
{
	static void *p;

	if (!p)
		p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p;
}

static int load(sys_fn sys, uint32_t type, const struct bpf_insn *insns, size_t n,
		const int *map_fds, enum load_mistake m)
{
	struct bpf_insn copy[64];
	static char log[4096];
	union bpf_attr a;

	memcpy(copy, insns, n * sizeof(*insns));
	for (size_t i = 0; i + 1 < n; i++)
		if (copy[i].code == (BPF_LD | BPF_IMM | BPF_DW) && copy[i].src_reg &&
		    copy[i].src_reg <= BPF_PSEUDO_MAP_VALUE)
			copy[i].imm = map_fds[copy[i].imm];
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)copy;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	switch (m) {
	case LM_ZERO_INSNS:
		a.insn_cnt = 0;
		break;
	case LM_NULL_LICENSE:
		a.license = 0;
		break;
	case LM_BAD_INSNS_PTR:
		a.insns = (uint64_t)(uintptr_t)bad_ptr();
		break;
	case LM_BAD_NAME:
		memcpy(a.prog_name, "a-b", 3);
		break;
	case LM_BAD_FLAGS:
		a.prog_flags = 1u << 20;
		break;
	case LM_LOG_NO_LEVEL:
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = sizeof(log);
		break;
	case LM_BAD_OPCODE:
		copy[0].code = 0xff;
		break;
	default:
		break;
	}
	return sys(BPF_PROG_LOAD, &a, sizeof(a));
}

struct outcome {
	int load_err;
	int run_err;
	uint32_t retval;
	uint32_t data_size_out;
	unsigned char data_out[256];
	unsigned char ctx_out[256];
	uint32_t ctx_size_out;
	uint64_t map0[4];
};

static void run_case(sys_fn sys, const struct prog_case *c, const struct bpf_insn *insns,
		     size_t n, struct outcome *out)
{
	int map_fds[2] = { -1, -1 }, pfd;
	unsigned char data[256], ctx[256];
	union bpf_attr a;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 2 && c->maps[i].type; i++) {
		memset(&a, 0, sizeof(a));
		a.map_type = c->maps[i].type;
		a.key_size = c->maps[i].key_size;
		a.value_size = c->maps[i].value_size;
		a.max_entries = c->maps[i].max_entries;
		map_fds[i] = sys(BPF_MAP_CREATE, &a, sizeof(a));
		T_ASSERT(map_fds[i] >= 0);
	}
	pfd = load(sys, c->type, insns, n, map_fds, strcmp(c->name, "unknown opcode") ?
							      LM_NONE : LM_BAD_OPCODE);
	out->load_err = pfd < 0 ? errno : 0;
	if (pfd >= 0 && c->run) {
		for (unsigned i = 0; i < sizeof(data); i++)
			data[i] = (unsigned char)(i * 7 + 1);
		memset(ctx, 0, sizeof(ctx));
		memcpy(ctx, c->ctx_u64, sizeof(c->ctx_u64));
		if (c->type == BPF_PROG_TYPE_XDP && c->ctx_len) {
			struct xdp_md md = { .data_end = c->data_len };

			memcpy(ctx, &md, sizeof(md));
		}
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)pfd;
		if (c->data_len) {
			a.test.data_in = (uint64_t)(uintptr_t)data;
			a.test.data_size_in = c->data_len;
			a.test.data_out = (uint64_t)(uintptr_t)out->data_out;
			a.test.data_size_out = c->data_out_room ? c->data_out_room :
								  sizeof(out->data_out);
		}
		if (c->ctx_len) {
			a.test.ctx_in = (uint64_t)(uintptr_t)ctx;
			a.test.ctx_size_in = c->ctx_len;
			if (c->type != BPF_PROG_TYPE_RAW_TRACEPOINT) {
				a.test.ctx_out = (uint64_t)(uintptr_t)out->ctx_out;
				a.test.ctx_size_out = sizeof(out->ctx_out);
			}
		}
		a.test.repeat = c->repeat;
		out->run_err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? errno : 0;
		out->retval = a.test.retval;
		out->data_size_out = a.test.data_size_out;
		out->ctx_size_out = a.test.ctx_size_out;
	}
	if (c->dump_map0) {
		for (uint32_t k = 0; k < 4; k++) {
			memset(&a, 0, sizeof(a));
			a.map_fd = (uint32_t)map_fds[0];
			a.key = (uint64_t)(uintptr_t)&k;
			a.value = (uint64_t)(uintptr_t)&out->map0[k];
			if (sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)))
				out->map0[k] = 0xdeadbeef;
		}
	}
	if (pfd >= 0)
		close(pfd);
	for (int i = 0; i < 2; i++)
		if (map_fds[i] >= 0)
			close(map_fds[i]);
}

static void check_case(const struct prog_case *c, const struct outcome *o)
{
	T_EQ_INT(c->load_err, o->load_err);
	if (c->load_err)
		return;
	T_EQ_INT(c->run_err, o->run_err);
	if (c->check_retval && c->retval)
		T_EQ_U64(c->retval, o->retval);
}

static void compare(const struct outcome *a, const struct outcome *b)
{
	T_EQ_INT(b->load_err, a->load_err);
	T_EQ_INT(b->run_err, a->run_err);
	T_EQ_U64(b->retval, a->retval);
	T_EQ_U64(b->data_size_out, a->data_size_out);
	if (memcmp(a->data_out, b->data_out, sizeof(a->data_out))) {
		T_FAIL("data_out differs from the kernel's");
		for (unsigned i = 0; i < sizeof(a->data_out); i++)
			if (a->data_out[i] != b->data_out[i]) {
				fprintf(stderr, "  data_out[%u]: bpfrt %02x kernel %02x\n", i,
					a->data_out[i], b->data_out[i]);
				break;
			}
	}
	T_EQ_U64(b->ctx_size_out, a->ctx_size_out);
	if (memcmp(a->ctx_out, b->ctx_out, sizeof(a->ctx_out))) {
		T_FAIL("ctx_out differs from the kernel's");
		for (unsigned i = 0; i < a->ctx_size_out && i < sizeof(a->ctx_out); i++)
			if (a->ctx_out[i] != b->ctx_out[i])
				fprintf(stderr, "  ctx_out[%u]: bpfrt %02x kernel %02x\n", i,
					a->ctx_out[i], b->ctx_out[i]);
	}
	for (int k = 0; k < 4; k++)
		T_EQ_U64(b->map0[k], a->map0[k]);
}

static void run_mistake(sys_fn sys, enum load_mistake m, int *err)
{
	static const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_insn lddw[] = {
		{ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fds[1], pfd = -1;

	if (m == LM_CLOSED_MAP_FD || m == LM_PROG_FD_AS_MAP) {
		if (m == LM_PROG_FD_AS_MAP) {
			pfd = load(sys, BPF_PROG_TYPE_SOCKET_FILTER, ret0, 2, NULL, LM_NONE);
			fds[0] = pfd;
		} else {
			fds[0] = dup(0);
			close(fds[0]);
		}
		*err = load(sys, BPF_PROG_TYPE_SOCKET_FILTER, lddw, 4, fds, LM_NONE) < 0 ? errno : 0;
		if (pfd >= 0)
			close(pfd);
		return;
	}
	*err = load(sys, BPF_PROG_TYPE_SOCKET_FILTER, ret0, 2, NULL, m) < 0 ? errno : 0;
}

int main(void)
{
	int kernel = kernel_available();
	struct outcome mine, theirs;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct prog_case *c = &cases[i];
		struct bpf_insn *insns;
		size_t n;
		char err[256];

		T_CASE(c->name);
		if (bpfrt_asm(c->text, c->name, &insns, &n, err, sizeof(err))) {
			T_FAIL("asm: %s", err);
			continue;
		}
		run_case(sys_bpfrt, c, insns, n, &mine);
		check_case(c, &mine);
		if (kernel) {
			run_case(sys_kernel, c, insns, n, &theirs);
			check_case(c, &theirs);
			compare(&mine, &theirs);
		}
		free(insns);
	}
	for (size_t i = 0; i < sizeof(mistakes) / sizeof(mistakes[0]); i++) {
		int e1, e2;

		T_CASE(mistakes[i].name);
		run_mistake(sys_bpfrt, mistakes[i].m, &e1);
		T_EQ_INT(mistakes[i].err, e1);
		if (kernel) {
			run_mistake(sys_kernel, mistakes[i].m, &e2);
			T_EQ_INT(mistakes[i].err, e2);
		}
	}
	return t_done();
}
