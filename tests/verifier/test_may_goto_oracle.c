/* test_may_goto_oracle.c - may_goto (BPF_JMP | BPF_JCOND, src_reg BPF_MAY_GOTO) against
 * the kernel: the verifier's field checks ("invalid may_goto imm N", JMP32's unknown
 * opcode, jumps out of range), loops that only the hidden counter bounds (accepted, where
 * the same loop without may_goto is an infinite loop or too complex), loops bounded
 * otherwise too, may_goto in bpf-to-bpf calls, and errors found inside such
 * loops.  Verdict, errno and the error line must be equal; a program both accept is run
 * by BPF_PROG_TEST_RUN on the kernel and on each bpfrt engine and must give the same
 * errno and retval.  Runs whose result depends on how many iterations the counter allows
 * are not compared (the x86-64 kernel refills it for 250 ms, bpfrt counts BPF_MAX_LOOPS):
 * only that both end.  Known difference, not here: a scalar that changes each iteration
 * and is stored to the stack from a register (`r1 += 1; *(u64 *)(r10 - 8) = r1`) is
 * widened by the kernel (imprecise) but not by bpfrt, whose static relevance counts a
 * stored register as mattering, so bpfrt walks on to the 1M-insn limit.  Skips without
 * root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "oracle_load.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, i) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define ADD_X(d, s) I(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define JLT_K(d, i, o) I(BPF_JMP | BPF_JLT | BPF_K, d, 0, o, i)
#define MAY_GOTO(o) I(BPF_JMP | 0xe0, 0, 0, o, 0)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define CALL_LOCAL(o) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, o)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define P(...) ((const struct bpf_insn[]){ __VA_ARGS__ }), \
	       sizeof((const struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn)

/* Load (log level 1) and, when asked and loaded, one test run on a 64-byte frame. */
static void load_run(bpf_fn bpf, uint32_t flags, const struct bpf_insn *insns, size_t n,
		     int do_run, struct oracle_res *r)
{
	static unsigned char pkt[64];
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	attr.prog_flags = flags;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	pkt[12] = 0x08;
	oracle_load_run(bpf, &attr, do_run, pkt, sizeof(pkt), r);
}

static const uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
				    BPFRT_ENGINE_JIT
#endif
};

enum { NO_RUN = ORACLE_CMP_LOAD, RUN = ORACLE_CMP_RUN, RUN_ENDS = ORACLE_CMP_RUN_ERR };
static int compared, runs;

/* run: NO_RUN loads only; RUN compares errno and retval; RUN_ENDS only that both runs
 * end without an error (the retval counts iterations the counter allowed) */
static void check(const char *name, const struct bpf_insn *insns, size_t n, int run)
{
	struct oracle_res k, b;

	T_CASE(name);
	load_run(oracle_kernel_bpf, 0, insns, n, run != NO_RUN, &k);
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		load_run(bpfrt_bpf, BPFRT_F_ENGINE(engines[e]), insns, n, run != NO_RUN, &b);
		if (getenv("MAY_GOTO_DUMP"))
			fprintf(stderr, "%s [%u]: kernel %d '%s' run %d/%u | bpfrt %d '%s' run %d/%u\n",
				name, engines[e], k.err, k.last, k.run_err, k.retval, b.err, b.last,
				b.run_err, b.retval);
		runs += oracle_compare(name, &k, &b, (enum oracle_cmp)run, NULL);
		compared++;
		if (k.fd < 0)
			break; /* a refusal is the verifier's: one engine says it */
	}
}

/* The verifier log of a program both accept, as level 2 prints it: the instruction
 * lines must show may_goto as the kernel's disassembler does. */
static void check_disasm(void)
{
	const struct bpf_insn prog[] = { MOV_K(0, 0), MAY_GOTO(1), ADD_K(0, 1), EXIT() };
	union bpf_attr attr;
	static char klog[4096], blog[4096];
	char *bp[2] = { klog, blog };
	bpf_fn fns[2] = { oracle_kernel_bpf, bpfrt_bpf };

	T_CASE("log shows may_goto pc+1");
	for (int s = 0; s < 2; s++) {
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.prog_type = BPF_PROG_TYPE_SCHED_CLS;
		attr.insns = (uintptr_t)prog;
		attr.insn_cnt = sizeof(prog) / sizeof(prog[0]);
		attr.license = (uintptr_t) "GPL";
		attr.log_buf = (uintptr_t)bp[s];
		attr.log_size = sizeof(klog);
		attr.log_level = 2 | 4; /* instructions and statistics */
		fd = fns[s](BPF_PROG_LOAD, &attr, sizeof(attr));
		T_ASSERT(fd >= 0);
		close(fd);
	}
	/* the whole log but the time it took */
	for (int s = 0; s < 2; s++) {
		char *t = strstr(bp[s], "verification time ");
		char *nl = t ? strchr(t, '\n') : NULL;

		if (nl)
			memmove(t, nl + 1, strlen(nl + 1) + 1);
	}
	T_EQ_STR(klog, blog);
	T_ASSERT(strstr(klog, "1: (e5) may_goto pc+1\n") != NULL);
	T_ASSERT(strstr(blog, "1: (e5) may_goto pc+1\n") != NULL);
	/* the kernel counts the counter's hidden slots (16 bytes on x86-64) in the depth */
	T_ASSERT(strstr(klog, "stack depth 16\n") != NULL);
	T_ASSERT(strstr(blog, "stack depth 16\n") != NULL);
	if (getenv("MAY_GOTO_DUMP"))
		fprintf(stderr, "kernel:\n%s\nbpfrt:\n%s\n", klog, blog);
	compared++;
}

int main(void)
{
	if (geteuid() != 0)
		T_SKIP("needs root for bpf(BPF_PROG_LOAD)");

	/* ---- the instruction's fields ---- */
	check("dst_reg set", P(MOV_K(0, 0), I(BPF_JMP | 0xe0, 1, 0, 1, 0), ADD_K(0, 1), EXIT()),
	      NO_RUN);
	check("imm set", P(MOV_K(0, 0), I(BPF_JMP | 0xe0, 0, 0, 1, 7), ADD_K(0, 1), EXIT()),
	      NO_RUN);
	check("src_reg 1", P(MOV_K(0, 0), I(BPF_JMP | 0xe0, 0, 1, 1, 0), ADD_K(0, 1), EXIT()),
	      NO_RUN);
	check("negative imm", P(MOV_K(0, 0), I(BPF_JMP | 0xe0, 0, 0, 1, -3), ADD_K(0, 1), EXIT()),
	      NO_RUN);
	check("JMP32 | JCOND", P(MOV_K(0, 0), I(BPF_JMP32 | 0xe0, 0, 0, 1, 0), ADD_K(0, 1), EXIT()),
	      NO_RUN);
	check("JCOND | BPF_X", P(MOV_K(0, 0), I(BPF_JMP | 0xe8, 0, 0, 1, 0), ADD_K(0, 1), EXIT()),
	      NO_RUN);
	check("target past the end", P(MOV_K(0, 0), MAY_GOTO(5), ADD_K(0, 1), EXIT()), NO_RUN);
	check("target before the start", P(MOV_K(0, 0), MAY_GOTO(-3), ADD_K(0, 1), EXIT()), NO_RUN);
	check("may_goto +0", P(MOV_K(0, 3), MAY_GOTO(0), EXIT()), RUN);
	check("last insn", P(MOV_K(0, 0), EXIT(), MAY_GOTO(-2)), NO_RUN);
	check("forward, runs once", P(MOV_K(0, 0), MAY_GOTO(1), ADD_K(0, 1), EXIT()), RUN);

	/* ---- loops ---- */
	check("loop bounded by its compare too",
	      P(MOV_K(0, 0), MAY_GOTO(2), ADD_K(0, 1), JLT_K(0, 100, -3), EXIT()), RUN);
	check("bounded loop of 5000",
	      P(MOV_K(0, 0), MOV_K(1, 0), MAY_GOTO(3), ADD_K(1, 1), ADD_K(0, 2), JLT_K(1, 5000, -4),
		EXIT()),
	      RUN);
	check("infinite loop without may_goto", P(MOV_K(0, 0), JA(-1), EXIT()), NO_RUN);
	check("infinite loop ended by may_goto", P(MOV_K(0, 7), MAY_GOTO(1), JA(-2), EXIT()),
	      RUN);
	check("counting until the counter ends",
	      P(MOV_K(0, 0), MAY_GOTO(2), ADD_K(0, 1), JA(-3), EXIT()), RUN_ENDS);
	check("changing scalar spilled each iteration, filled at the end",
	      P(MOV_K(1, 0), STX(BPF_DW, 10, 1, -8), MAY_GOTO(4), LDX(BPF_DW, 1, 10, -8), ADD_K(1, 1),
		STX(BPF_DW, 10, 1, -8), JA(-5), MOV_K(0, 0), EXIT()),
	      RUN);
	check("changing scalar returned",
	      P(MOV_K(0, 0), MAY_GOTO(2), ADD_K(0, 3), JA(-3), EXIT()), RUN_ENDS);
	/* the loop's body reads the stack at an offset the loop moves: an error on some
	 * iteration, found as the kernel finds it */
	check("stack offset walks out of the frame",
	      P(ST(BPF_DW, 10, -8, 0), MOV_X(2, 10), ADD_K(2, -8), MOV_K(0, 0), MAY_GOTO(3),
		LDX(BPF_DW, 3, 2, 0), ADD_K(2, -8), JA(-4), EXIT()),
	      NO_RUN);
	check("uninitialised register read after the loop",
	      P(MOV_K(0, 0), MAY_GOTO(2), MOV_K(3, 1), JA(-3), ADD_X(0, 3), EXIT()), NO_RUN);
	check("register set only inside the loop, read inside",
	      P(MOV_K(0, 0), MOV_K(3, 0), MAY_GOTO(3), ADD_X(0, 3), MOV_K(3, 1), JA(-4), EXIT()),
	      RUN_ENDS);
	check("nested may_goto loops",
	      P(MOV_K(0, 0), MOV_K(1, 0), MAY_GOTO(6), MOV_K(2, 0), MAY_GOTO(2), ADD_K(2, 1),
		JLT_K(2, 10, -3), ADD_K(1, 1), JLT_K(1, 10, -7), MOV_X(0, 1), EXIT()),
	      RUN);
	check("two may_goto in one loop",
	      P(MOV_K(0, 0), MAY_GOTO(4), ADD_K(0, 1), MAY_GOTO(2), ADD_K(0, 1), JLT_K(0, 40, -5),
		EXIT()),
	      RUN);

	/* ---- functions: each call has its own counter ---- */
	check("loop in a subprog",
	      P(MOV_K(1, 0), CALL_LOCAL(2), ADD_K(0, 1), EXIT(),
		MOV_K(0, 0), MAY_GOTO(2), ADD_K(0, 1), JLT_K(0, 50, -3), EXIT()),
	      RUN);
	check("loops in main and subprog",
	      P(MOV_K(6, 0), MOV_K(7, 0), MAY_GOTO(4), CALL_LOCAL(5), ADD_X(6, 0), ADD_K(7, 1),
		JLT_K(7, 3, -5), MOV_X(0, 6), EXIT(),
		MOV_K(0, 0), MAY_GOTO(2), ADD_K(0, 1), JLT_K(0, 30, -3), EXIT()),
	      RUN);
	check("endless loop in a subprog",
	      P(CALL_LOCAL(2), MOV_K(0, 1), EXIT(), MAY_GOTO(1), JA(-2), MOV_K(0, 0), EXIT()),
	      RUN);
	check_disasm();
	printf("%d comparisons with the kernel, %d test runs\n", compared, runs);
	return t_done();
}
