/* test_tail_call.c - bpf_tail_call() made from bpf-to-bpf functions, against the kernel:
 * the target replaces only the calling function's frame, so its r0 comes back to that
 * function's caller; the 33-call limit is shared by every frame of a run; a target may
 * tail-call on; and the verifier's rules (BTF needed, at most 256 bytes of stack in the
 * frames below the function that tail-calls) with the kernel's messages.  Each engine
 * (JIT, fast interpreter, checked interpreter) must answer what the kernel answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/btf.h>

#include "btf_blob.h"
#include "harness.h"
#include "vm/vm.h"
#include "api/diff.h"
#include "../verifier/cases/case.h"

#define MAX_INSNS 200
#define MAX_FUNCS 4

/* prog array slots: 0 -> 42, 1 -> tail-calls slot 0 (else 5), 2 -> 1; 3 stays empty */
enum { SLOT_42, SLOT_CHAIN, SLOT_ONE, SLOT_EMPTY, NSLOTS };

struct prog {
	const char *name;
	struct bpf_insn insns[MAX_INSNS];
	uint32_t n;
	int btf;          /* load with func_info */
};

/* sub: tail call slot s of map 0, else return 7 */
#define TAIL_SUB(s) LD_MAP(2, 0), MOV64_IMM(3, s), CALL(BPF_FUNC_tail_call), MOV64_IMM(0, 7), EXIT()

static void add(struct prog *p, const struct bpf_insn *in, uint32_t n)
{
	memcpy(p->insns + p->n, in, n * sizeof(*in));
	p->n += n;
}

#define ADD(p, ...)                                                                    \
	do {                                                                           \
		const struct bpf_insn add_[] = { __VA_ARGS__ };                        \
		add(p, add_, sizeof(add_) / sizeof(add_[0]));                          \
	} while (0)

/* main calls sub, adds 1000 */
static void one_call(struct prog *p, const char *name, int slot)
{
	p->name = name;
	p->btf = 1;
	ADD(p, CALL_SUB(2), ALU64_IMM(BPF_ADD, 0, 1000), EXIT(), TAIL_SUB(slot));
}

/* main calls sub 40 times, summing what it returns: 33 targets run, then the limit */
static void many_calls(struct prog *p)
{
	const int calls = 40;

	p->name = "limit shared by frames";
	p->btf = 1;
	ADD(p, MOV64_REG(6, 1), MOV64_IMM(7, 0));
	for (int i = 0; i < calls; i++)
		ADD(p, MOV64_REG(1, 6), CALL_SUB(3 * (calls - i)), ALU64_REG(BPF_ADD, 7, 0));
	ADD(p, MOV64_REG(0, 7), EXIT());
	ADD(p, LD_MAP(2, 0), MOV64_IMM(3, SLOT_ONE), CALL(BPF_FUNC_tail_call), MOV64_IMM(0, 0),
	    EXIT());
}

static int build(struct prog *ps)
{
	int n = 0;

	one_call(&ps[n++], "target returns to the caller", SLOT_42);
	one_call(&ps[n++], "empty slot falls through", SLOT_EMPTY);
	one_call(&ps[n++], "target tail-calls on", SLOT_CHAIN);
	many_calls(&ps[n++]);
	ps[n].name = "two frames deep";
	ps[n].btf = 1;
	ADD(&ps[n], CALL_SUB(2), ALU64_IMM(BPF_ADD, 0, 1000), EXIT(), CALL_SUB(2),
	    ALU64_IMM(BPF_ADD, 0, 100), EXIT(), TAIL_SUB(SLOT_42));
	n++;
	ps[n].name = "main tail call with a subprogram";
	ps[n].btf = 1;
	ADD(&ps[n], MOV64_REG(6, 1), CALL_SUB(7), MOV64_REG(1, 6), LD_MAP(2, 0), MOV64_IMM(3, 0),
	    CALL(BPF_FUNC_tail_call), MOV64_IMM(0, 9), EXIT(), MOV64_IMM(0, 3), EXIT());
	n++;
	ps[n].name = "240 bytes below: allowed";
	ps[n].btf = 1;
	ADD(&ps[n], ST(BPF_DW, 10, -240, 0), CALL_SUB(1), EXIT(), TAIL_SUB(SLOT_42));
	n++;
	ps[n].name = "256 bytes below: refused";
	ps[n].btf = 1;
	ADD(&ps[n], ST(BPF_DW, 10, -256, 0), CALL_SUB(1), EXIT(), TAIL_SUB(SLOT_42));
	n++;
	ps[n].name = "no BTF: refused";
	ADD(&ps[n], CALL_SUB(2), ALU64_IMM(BPF_ADD, 0, 1000), EXIT(), TAIL_SUB(SLOT_42));
	n++;
	return n;
}

static const struct { int ret; int err; const char *msg; } expected[] = {
	{ 1042, 0, NULL },
	{ 1007, 0, NULL },
	{ 1042, 0, NULL },
	{ 33, 0, NULL },
	{ 1142, 0, NULL },
	{ 42, 0, NULL },
	{ 42, 0, NULL },
	{ 0, EACCES,
	  "tail_calls are not allowed when call stack of previous frames is 256 bytes. Too large" },
	{ 0, EINVAL, "tail_call is not allowed in subprogs without BTF" },
};
#define NPROGS (sizeof(expected) / sizeof(expected[0]))

/* int, a prototype returning it, and one FUNC per function (static linkage) */
static int load_btf(sys_fn sys)
{
	static const char strs[] = "\0int\0f0\0f1\0f2\0f3";
	uint32_t types[4 + 3 + 3 * MAX_FUNCS];
	uint32_t k = 0;

	/* [1] int */
	types[k++] = 1;
	types[k++] = BTF_KIND_INT << 24;
	types[k++] = 4;
	types[k++] = (BTF_INT_SIGNED << 24) | 32;
	/* [2] int (void) */
	types[k++] = 0;
	types[k++] = BTF_KIND_FUNC_PROTO << 24;
	types[k++] = 1;
	/* [3 + f] static function "f<f>" */
	for (uint32_t f = 0; f < MAX_FUNCS; f++) {
		types[k++] = 5 + 3 * f;
		types[k++] = BTF_KIND_FUNC << 24;
		types[k++] = 2;
	}
	return btf_blob_load(sys, types, k * 4, strs, sizeof(strs));
}

/* BPFRT_F_ENGINE() of the engine scenario() runs bpfrt on; 0 for the kernel */
static uint32_t engine_flags;

static int load_insns(sys_fn sys, const struct bpf_insn *in, uint32_t n, int btf,
		      const int *maps, char *log, uint32_t log_size)
{
	struct bpf_insn insns[MAX_INSNS];
	struct bpf_func_info fi[MAX_FUNCS] = { { 0 } };
	uint32_t nf = 1;
	union bpf_attr a;

	memcpy(insns, in, n * sizeof(*in));
	for (uint32_t i = 0; i < n; i++) {
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg == 1)
			insns[i].imm = maps[insns[i].imm];
		if (insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == BPF_PSEUDO_CALL) {
			uint32_t t = i + 1 + (uint32_t)insns[i].imm, f;

			for (f = 0; f < nf && fi[f].insn_off != t; f++)
				;
			if (f == nf && nf < MAX_FUNCS)
				fi[nf++].insn_off = t;
		}
	}
	/* func_info in instruction order */
	for (uint32_t x = 1; x < nf; x++)
		for (uint32_t y = x; y > 1 && fi[y - 1].insn_off > fi[y].insn_off; y--) {
			struct bpf_func_info t = fi[y];

			fi[y] = fi[y - 1];
			fi[y - 1] = t;
		}
	for (uint32_t f = 0; f < nf; f++)
		fi[f].type_id = 3 + f;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.prog_flags = engine_flags;
	if (btf >= 0) {
		a.prog_btf_fd = (uint32_t)btf;
		a.func_info = (uint64_t)(uintptr_t)fi;
		a.func_info_rec_size = sizeof(fi[0]);
		a.func_info_cnt = nf;
	}
	if (log) {
		log[0] = 0;
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = log_size;
		a.log_level = 1;
	}
	return sys(BPF_PROG_LOAD, &a, sizeof(a));
}

struct outcome {
	int ret[NPROGS];
	int err[NPROGS];
	char msg[NPROGS][160]; /* the log's error line */
};

static void last_line(const char *log, char *out, size_t cap)
{
	const char *end = log + strlen(log), *l;

	while (end > log && end[-1] == '\n')
		end--;
	for (l = end; l > log && l[-1] != '\n'; l--)
		;
	/* the kernel ends with "processed N insns ...": the error is the line before */
	if (!strncmp(l, "processed ", 10) && l > log) {
		end = l - 1;
		for (l = end; l > log && l[-1] != '\n'; l--)
			;
	}
	snprintf(out, cap, "%.*s", (int)(end - l), l);
}

static void scenario(sys_fn sys, const char *engine, const struct prog *ps, struct outcome *o)
{
	static const struct bpf_insn targets[NSLOTS - 1][8] = {
		{ MOV64_IMM(0, 42), EXIT() },
		{ LD_MAP(2, 0), MOV64_IMM(3, SLOT_42), CALL(BPF_FUNC_tail_call), MOV64_IMM(0, 5),
		  EXIT() },
		{ MOV64_IMM(0, 1), EXIT() },
	};
	static const uint32_t tn[NSLOTS - 1] = { 2, 6, 2 };
	static char log[65536];
	int map, btf, t[NSLOTS - 1];
	union bpf_attr a;

	memset(o, 0, sizeof(*o));
	enum bpfrt_engine e = BPFRT_ENGINE_DEFAULT;

	if (engine)
		T_EQ_INT(0, brt_vm_engine_parse(engine, 0, &e));
	engine_flags = BPFRT_F_ENGINE(e);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_PROG_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = NSLOTS;
	map = sys(BPF_MAP_CREATE, &a, sizeof(a));
	btf = load_btf(sys);
	T_ASSERT(map >= 0 && btf >= 0);
	for (int s = 0; s < NSLOTS - 1; s++) {
		uint32_t key = (uint32_t)s, val;

		t[s] = load_insns(sys, targets[s], tn[s], -1, &map, NULL, 0);
		T_ASSERT(t[s] >= 0);
		val = (uint32_t)t[s];
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&val;
		T_EQ_INT(0, sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)));
	}
	for (size_t i = 0; i < NPROGS; i++) {
		int fd = load_insns(sys, ps[i].insns, ps[i].n, ps[i].btf ? btf : -1, &map, log,
				    sizeof(log));

		o->err[i] = fd < 0 ? errno : 0;
		if (fd < 0) {
			last_line(log, o->msg[i], sizeof(o->msg[i]));
			continue;
		}
		o->ret[i] = diff_run64(sys, fd, 0);
		close(fd);
	}
	for (int s = 0; s < NSLOTS - 1; s++) {
		uint32_t key = (uint32_t)s;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map;
		a.key = (uint64_t)(uintptr_t)&key;
		sys(BPF_MAP_DELETE_ELEM, &a, sizeof(a)); /* targets referring to the map */
		close(t[s]);
	}
	close(map);
	close(btf);
	engine_flags = 0;
}

int main(void)
{
	static struct prog ps[NPROGS];
	static struct outcome eng[3], kernel;
	static const char *const engines[] = { "jit", "interp", "checked" };
	char name[160];
	int have_kernel = kernel_available();

	T_ASSERT(build(ps) == (int)NPROGS);
	if (have_kernel)
		scenario(sys_kernel, NULL, ps, &kernel);
	else
		printf("kernel comparison skipped: not root or no bpf()\n");
	for (int e = 0; e < 3; e++) {
#ifndef BPFRT_HAVE_JIT
		if (!strcmp(engines[e], "jit"))
			continue;
#endif
		scenario(sys_bpfrt, engines[e], ps, &eng[e]);
		for (size_t i = 0; i < NPROGS; i++) {
			snprintf(name, sizeof(name), "%s: %s", engines[e], ps[i].name);
			T_CASE(name);
			T_EQ_INT(expected[i].err, eng[e].err[i]);
			T_EQ_INT(expected[i].ret, eng[e].ret[i]);
			if (expected[i].msg)
				T_EQ_STR(expected[i].msg, eng[e].msg[i]);
			if (!have_kernel)
				continue;
			snprintf(name, sizeof(name), "%s vs kernel: %s", engines[e], ps[i].name);
			T_CASE(name);
			T_EQ_INT(kernel.err[i], eng[e].err[i]);
			T_EQ_INT(kernel.ret[i], eng[e].ret[i]);
			T_EQ_STR(kernel.msg[i], eng[e].msg[i]);
		}
	}
	return t_done();
}
