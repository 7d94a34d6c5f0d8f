/* test_opt_const.c - passes rodata and constjump (src/jit/x86_64/opt_const.c): a load from a
 * frozen read-only value at a known address is its bytes read at compile time, a jump on
 * known values is decided and the code no path reaches is not emitted; near misses are
 * left alone; blinded code keeps its loads.  Whether a load was folded shows when the
 * bytes change after the compile (which a frozen map never does): a folded load keeps
 * the old value.  Then the whole path: BPF_PROG_LOAD of a program reading a frozen
 * BPF_F_RDONLY_PROG array, and of the same array not frozen.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "bpfrt.h"
#include "harness.h"
#include "isa/isa.h"
#include "jit/jit.h"
#include "jit_test.h"

static uint8_t ro[16] __attribute__((aligned(8)));

#define RO_ADDR ((uint64_t)(uintptr_t)ro)

static size_t code_size(const struct brt_jit_prog *p)
{
	size_t size;

	brt_jit_code(p, &size, NULL);
	return size;
}

/* Whether the code holds the 8 bytes of v (a movabs of it). */
static bool has_u64(const struct brt_jit_prog *p, uint64_t v)
{
	size_t size;
	const uint8_t *code = brt_jit_code(p, &size, NULL);

	for (size_t k = 0; k + 8 <= size; k++)
		if (!memcmp(code + k, &v, 8))
			return true;
	return false;
}

static struct brt_jit_prog *compile(const struct bpf_insn *insns, size_t n, uint32_t off,
				    uint32_t flags, uint64_t ro_size)
{
	struct brt_jit_rodata r = { .addr = RO_ADDR, .size = ro_size };
	struct brt_jit_env e = { .pkt_data_off = -1, .pkt_len_off = -1, .flags = flags,
				 .passes_off = off, .rodata = &r, .nrodata = ro_size ? 1 : 0 };
	struct brt_jit_prog *p = NULL;
	char err[128];

	T_EQ_INT(0, brt_jit_compile(insns, n, &e, &p, err, sizeof(err)));
	return p;
}

struct ro_case {
	const char *name;
	struct bpf_insn insns[16];
	uint64_t ro_size;  /* the range handed to the JIT */
	uint64_t before;   /* r0 with ro as set up */
	uint64_t after;    /* r0 of the plain loads once ro[4..12) is zeroed */
	bool folded;       /* with the passes on, r0 stays `before` then */
};

static void fill_ro(void)
{
	for (unsigned i = 0; i < sizeof(ro); i++)
		ro[i] = (uint8_t)(0x80 + i);
}

static size_t prog_len(const struct bpf_insn *insns, size_t max)
{
	size_t n = max;

	while (n && !insns[n - 1].code)
		n--;
	return n;
}

static void test_rodata(void)
{
	/* ro: bytes 0..15 = 0x80 + i; then bytes 4..11 rewritten to 0. */
	const struct ro_case ro_cases[] = {
		{ "u32 load, jump decided",
		  { LD_IMM64(1, RO_ADDR), LDX(BPF_W, 2, 1, 4),
		    JMP32_IMM(BPF_JEQ, 2, (int32_t)0x87868584, 2), MOV64_IMM(0, 1), EXIT(), MOV64_IMM(0, 2),
		    EXIT() },
		  16, 2, 1, true },
		{ "u64 load returned", { LD_IMM64(1, RO_ADDR + 4), LDX(BPF_DW, 0, 1, 0), EXIT() },
		  16, 0x8b8a898887868584ull, 0, true },
		{ "sign-extending byte load", { LD_IMM64(1, RO_ADDR), LDXS(BPF_B, 0, 1, 5), EXIT() },
		  16, (uint64_t)(int64_t)(int8_t)0x85, 0, true },
		{ "address through a copy and an add",
		  { LD_IMM64(3, RO_ADDR), MOV64_REG(1, 3), ALU64_IMM(BPF_ADD, 1, 6), LDX(BPF_H, 0, 1, 0),
		    EXIT() },
		  16, 0x8786, 0, true },
		{ "load across the range's end: kept", { LD_IMM64(1, RO_ADDR), LDX(BPF_W, 0, 1, 6), EXIT() },
		  8, 0x89888786, 0, false },
		{ "address from the argument: kept",
		  { JMP_IMM(BPF_JEQ, 1, 0, 2), LD_IMM64(1, RO_ADDR), LDX(BPF_W, 0, 1, 4), EXIT() },
		  16, 0x87868584, 0, false },
		{ "address differing by path: kept",
		  { LD_IMM64(2, RO_ADDR), JMP_IMM(BPF_JEQ, 1, 0, 1), ALU64_IMM(BPF_ADD, 2, 4),
		    LDX(BPF_B, 0, 2, 4), EXIT() },
		  16, 0x88, 0, false },
		{ "no range: kept", { LD_IMM64(1, RO_ADDR), LDX(BPF_W, 0, 1, 4), EXIT() }, 0, 0x87868584, 0,
		  false },
	};

	for (size_t i = 0; i < sizeof(ro_cases) / sizeof(ro_cases[0]); i++) {
		const struct ro_case *c = &ro_cases[i];
		size_t n = prog_len(c->insns, 16);

		for (int v = 0; v < 3; v++) { /* all passes, rodata off, blinded */
			struct brt_jit_prog *p;
			bool folded = c->folded && v == 0;

			T_CASE(c->name);
			fill_ro();
			p = compile(c->insns, n, v == 1 ? BRT_JIT_PASS(rodata) : 0,
				    v == 2 ? BRT_JIT_BLIND : 0, c->ro_size);
			if (!p)
				continue;
			T_EQ_U64(c->before, brt_jit_call(p, 1, 0, NULL));
			/* folded, the address is needed no more: its lddw is dropped too */
			if (folded)
				T_ASSERT(!has_u64(p, RO_ADDR) && !has_u64(p, RO_ADDR + 4));
			memset(ro + 4, 0, 8);
			/* blinded: the loads stay, but the jump the first case decides on the
			 * frozen value stays decided */
			T_EQ_U64(folded || (v == 2 && i == 0) ? c->before : c->after,
				 brt_jit_call(p, 1, 0, NULL));
			brt_jit_free(p);
		}
	}
}

/* constjump: the jump on a value computed from constants is decided; the path not taken
 * is not emitted (the code shrinks), the result is the same; a jump on the argument, a
 * backward jump and the 32-bit and signed compares follow eBPF's rules. */
struct cj_case {
	const char *name;
	struct bpf_insn insns[24];
	uint64_t r1;
	uint64_t r0;
	bool shrinks;
};

static const struct cj_case cj_cases[] = {
	{ "shift then jgt: taken",
	  { MOV64_IMM(1, 5), ALU64_IMM(BPF_LSH, 1, 2), JMP_IMM(BPF_JGT, 1, 19, 3), MOV64_IMM(0, 1),
	    ALU64_IMM(BPF_MUL, 0, 7), EXIT(), MOV64_IMM(0, 2), EXIT() },
	  0, 2, true },
	{ "jeq never taken", { MOV64_IMM(1, 5), JMP_IMM(BPF_JEQ, 1, 6, 2), MOV64_IMM(0, 1), EXIT(),
	  MOV64_IMM(0, 9), ALU64_IMM(BPF_MUL, 0, 3), EXIT() }, 0, 1, true },
	{ "jmp32 on the low half", { LD_IMM64(2, 0x100000001ull), JMP32_IMM(BPF_JEQ, 2, 1, 2),
	  MOV64_IMM(0, 1), EXIT(), MOV64_IMM(0, 2), EXIT() }, 0, 2, true },
	{ "jmp64 on the whole value", { LD_IMM64(2, 0x100000001ull), JMP_IMM(BPF_JEQ, 2, 1, 2),
	  MOV64_IMM(0, 1), EXIT(), MOV64_IMM(0, 2), EXIT() }, 0, 1, true },
	{ "signed compare of -1", { MOV64_IMM(2, -1), JMP_IMM(BPF_JSLT, 2, 0, 2), MOV64_IMM(0, 1),
	  EXIT(), MOV64_IMM(0, 2), EXIT() }, 0, 2, true },
	{ "unsigned compare of -1", { MOV64_IMM(2, -1), JMP_IMM(BPF_JLT, 2, 0, 2), MOV64_IMM(0, 1),
	  EXIT(), MOV64_IMM(0, 2), EXIT() }, 0, 1, true },
	{ "w32 arsh", { MOV32_IMM(2, (int32_t)0x80000000), ALU32_IMM(BPF_ARSH, 2, 31),
	  JMP_IMM(BPF_JEQ, 2, 0xffffffff, 2), MOV64_IMM(0, 1), EXIT(), MOV64_IMM(0, 2), EXIT() },
	  0, 1, true }, /* the imm sign-extends to 64 bits, w2 zero-extends: not equal */
	{ "be16 of a constant", { MOV64_IMM(2, 0x1234), ENDIAN(BPF_TO_BE, 2, 16),
	  JMP_IMM(BPF_JEQ, 2, 0x3412, 2), MOV64_IMM(0, 1), EXIT(), MOV64_IMM(0, 2), EXIT() },
	  0, 2, true },
	{ "register compare", { MOV64_IMM(2, 7), MOV64_IMM(3, 7), JMP_REG(BPF_JNE, 2, 3, 2),
	  MOV64_IMM(0, 1), EXIT(), MOV64_IMM(0, 2), EXIT() }, 0, 1, true },
	{ "on the argument: kept", { JMP_IMM(BPF_JEQ, 1, 6, 2), MOV64_IMM(0, 1), EXIT(),
	  MOV64_IMM(0, 2), EXIT() }, 6, 2, false },
	{ "merged paths differ: kept", { MOV64_IMM(2, 1), JMP_IMM(BPF_JEQ, 1, 0, 1),
	  MOV64_IMM(2, 2), JMP_IMM(BPF_JEQ, 2, 2, 2), MOV64_IMM(0, 1), EXIT(), MOV64_IMM(0, 2),
	  EXIT() }, 0, 1, false },
	{ "division left unknown", { MOV64_IMM(2, 6), ALU64_IMM(BPF_DIV, 2, 3),
	  JMP_IMM(BPF_JEQ, 2, 2, 2), MOV64_IMM(0, 1), EXIT(), MOV64_IMM(0, 2), EXIT() },
	  0, 2, false },
	{ "loop counting down: kept", { MOV64_IMM(0, 0), MOV64_IMM(2, 3), ALU64_IMM(BPF_ADD, 0, 5),
	  ALU64_IMM(BPF_SUB, 2, 1), JMP_IMM(BPF_JNE, 2, 0, -3), EXIT() }, 0, 15, false },
	{ "a callee is kept", { MOV64_IMM(2, 1), JMP_IMM(BPF_JEQ, 2, 1, 1), CALL_LOCAL(4),
	  MOV64_IMM(0, 4), EXIT(), MOV64_IMM(0, 2), EXIT(), MOV64_IMM(0, 9), EXIT() },
	  0, 4, true },
};

static void test_constjump(void)
{
	for (size_t i = 0; i < sizeof(cj_cases) / sizeof(cj_cases[0]); i++) {
		const struct cj_case *c = &cj_cases[i];
		size_t n = prog_len(c->insns, 24), on = 0, off = 0;

		for (int v = 0; v < 3; v++) { /* all passes, constjump off, blinded */
			struct brt_jit_prog *p;

			T_CASE(c->name);
			p = compile(c->insns, n, v == 1 ? BRT_JIT_PASS(constjump) : 0,
				    v == 2 ? BRT_JIT_BLIND : 0, 0);
			if (!p)
				continue;
			T_EQ_U64(c->r0, brt_jit_call(p, c->r1, 0, NULL));
			if (v == 0)
				on = code_size(p);
			else if (v == 1)
				off = code_size(p);
			brt_jit_free(p);
		}
		T_ASSERT(c->shrinks ? on < off : on == off);
	}
}

/* The whole path: a BPF_F_RDONLY_PROG array frozen before BPF_PROG_LOAD gets its load
 * folded and the dead branch dropped (a shorter image than with the passes off); the
 * same array not frozen keeps its load, and a later update shows. */
static int sys(int cmd, union bpf_attr *a)
{
	return bpfrt_bpf(cmd, a, sizeof(*a));
}

static int load_prog(int map_fd)
{
	struct bpf_insn insns[] = {
		I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_VALUE, 0, map_fd), I(0, 0, 0, 0, 4),
		LDX(BPF_W, 2, 1, 0), JMP_IMM(BPF_JEQ, 2, 0, 4), MOV64_IMM(0, 7),
		ALU64_IMM(BPF_MUL, 0, 3), ALU64_IMM(BPF_ADD, 0, 1), EXIT(), MOV64_IMM(0, 2), EXIT() };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	a.license = (uint64_t)(uintptr_t)"GPL";
	return sys(BPF_PROG_LOAD, &a);
}

static uint32_t run(int prog_fd)
{
	uint8_t pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog_fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	if (sys(BPF_PROG_TEST_RUN, &a))
		return UINT32_MAX;
	return a.test.retval;
}

static uint32_t jited_len(int prog_fd)
{
	struct bpf_prog_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)prog_fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	return sys(BPF_OBJ_GET_INFO_BY_FD, &a) ? 0 : info.jited_prog_len;
}

static int set_value(int map_fd, uint64_t v)
{
	uint32_t key = 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map_fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&v;
	return sys(BPF_MAP_UPDATE_ELEM, &a);
}

static void test_load_path(void)
{
	uint32_t len[2][2] = { { 0 } };

	for (int frozen = 0; frozen < 2; frozen++) {
		for (int passes = 0; passes < 2; passes++) {
			union bpf_attr a;
			int map_fd, prog_fd;

			T_CASE(frozen ? "load path: frozen" : "load path: not frozen");
			memset(&a, 0, sizeof(a));
			a.map_type = BPF_MAP_TYPE_ARRAY;
			a.key_size = 4;
			a.value_size = 8;
			a.max_entries = 1;
			a.map_flags = BPF_F_RDONLY_PROG;
			map_fd = sys(BPF_MAP_CREATE, &a);
			T_ASSERT(map_fd >= 0);
			if (map_fd < 0)
				return;
			T_EQ_INT(0, set_value(map_fd, 0));
			memset(&a, 0, sizeof(a));
			a.map_fd = (uint32_t)map_fd;
			if (frozen)
				T_EQ_INT(0, sys(BPF_MAP_FREEZE, &a));
			setenv("BPFRT_JIT_PASSES", passes ? "all" : "-rodata,-constjump", 1);
			setenv("BPFRT_ENGINE", "jit", 1);
			prog_fd = load_prog(map_fd);
			T_ASSERT(prog_fd >= 0);
			if (prog_fd >= 0) {
				len[frozen][passes] = jited_len(prog_fd);
				T_EQ_INT(2, (int)run(prog_fd));
				if (!frozen) { /* not frozen: the program reads the update */
					T_EQ_INT(0, set_value(map_fd, 1ull << 32));
					T_EQ_INT(22, (int)run(prog_fd));
				}
				close(prog_fd);
			}
			close(map_fd);
		}
	}
	unsetenv("BPFRT_JIT_PASSES");
	T_CASE("load path: image sizes");
	T_ASSERT(len[0][0] && len[0][0] == len[0][1]);
	T_ASSERT(len[1][1] && len[1][1] < len[1][0]);
}

int main(void)
{
	test_rodata();
	test_constjump();
	test_load_path();
	return t_done();
}
