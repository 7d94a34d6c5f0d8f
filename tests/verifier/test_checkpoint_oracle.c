/* test_checkpoint_oracle.c - where the verifier stores its states (checkpoints), bpfrt's
 * against the running kernel's, through the statistics line of a BPF_LOG_STATS load
 * ("processed N insns ... total_states T peak_states P mark_read M"), which counts them.
 *
 * A state's history (the kernel's jmp_history) forces a checkpoint once it holds more than
 * 40 entries: one for each visit of a jump target, each spill or fill of a register, and
 * each conditional jump whose operands' ids link more than one scalar (check_cond_jmp_op()
 * pushes linked_regs only when linked_regs.cnt > 1).  The program compares a scalar that
 * alone has its id (`r7 = r6; r7 = 0` leaves r6's id to r6) in jumps separated by 20
 * spill/fill pairs: 40 entries, no checkpoint forced, unless the jump counted too (bpfrt
 * did until session 18: Tetragon's generic_*_process_filter 358,971 processed insns where
 * the kernel has 364,017, otel-profiler's unwind_beam 17,740 for 15,196).  A second shape
 * compares two linked scalars, which does take an entry (41: forced).
 * A third shape is about stack liveness (6.18's liveness.c): reads are propagated only at a
 * path's end or a function's exit, so a stored state cleaned at a later visit loses the
 * slots the current path has read since (4 bytes of fp-8's slot ZERO, the visitor's MISC): the kernel prunes the visit, bpfrt walked it again until session 19
 * (otel-profiler's unwind_php 12,896 processed insns for the kernel's 12,826).
 * A fourth (loop_exit_evict) is about peak_states: when a state evicted from its list
 * leaves the count while a loop has backedges.  A fifth (many_states()): a state that
 * covers the current one far down its instruction's list.
 * Each case: bpfrt must print the kernel's line (recorded here); as root the kernel must
 * print it too.
 */
#include <stdio.h>
#include <string.h>

#include "bpfrt.h"
#include "harness.h"
#include "api/diff.h"

#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define MAX_INSNS 16384

struct cp_case {
	const char *name;
	int linked;        /* the compared scalar shares its id with another live one */
	int pairs;         /* spill/fill pairs between two jumps */
	int segments;      /* jumps */
	const char *stats; /* the kernel's statistics line */
	const struct bpf_insn *prog; /* a fixed program instead (len insns) */
	size_t len;
	int many;          /* many_states()'s program with this many paths instead */
};

/* r6 = skb->len, r7 = skb->pkt_type (unknown); fp-4's 4 bytes ZERO (a store not 8-byte
 * aligned is no spill); path A (r6 != 5)
 * stores a state at X (insn 8, r9 = 0: its jump to R never taken) and exits; path B
 * (r6 == 5) writes fp-4 with r7 (STACK_MISC), reads it at R and comes back to X with
 * r9 = 0 */
static const struct bpf_insn stale_live[] = {
	I(BPF_LDX | BPF_MEM | BPF_W, 6, 1, 0, 0),
	I(BPF_LDX | BPF_MEM | BPF_W, 7, 1, 4, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0),
	I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 9, 0, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0),
	I(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 6, 5),  /* 6: -> B (13) */
	I(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 3, 6),  /* 7: -> 11 */
	I(BPF_JMP | BPF_JNE | BPF_K, 9, 0, 6, 0),  /* 8 (X): -> R (15) */
	I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
	I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1),
	I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	I(BPF_STX | BPF_MEM | BPF_W, 10, 7, -4, 0), /* 13 (B) */
	I(BPF_ALU64 | BPF_MOV | BPF_K, 9, 0, 0, 0),
	I(BPF_LDX | BPF_MEM | BPF_W, 0, 10, -4, 0), /* 15 (R) */
	I(BPF_JMP | BPF_JA, 0, 0, -9, 0),           /* -> X */
};

/* A may_goto loop (insn 3) whose body leaves it at 5 to code that is no part of the loop
 * (9-24), explored while the loop's backedge (made at the second visit of 3) waits: five
 * diamonds on r9 give r8 32 stack offsets, and the may_goto +0 at 21 is a forced
 * checkpoint, so each offset stores a state there and the first, complete, is evicted at
 * its fourth miss.  The kernel frees an evicted state unless its own loop's marks are
 * incomplete (maybe_free_verifier_state(), incomplete_read_marks()): 21 is in none, so it
 * leaves the count at once; bpfrt kept every evicted state counted while any loop had
 * backedges (peak_states 16 for the kernel's 14 until session 24: otel-profiler's
 * unwind_stop 197 for 196). */
static const struct bpf_insn loop_exit_evict[] = {
	I(BPF_LDX | BPF_MEM | BPF_W, 6, 1, 0, 0),
	I(BPF_LDX | BPF_MEM | BPF_W, 9, 1, 4, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 7, 0, 0, 0),
	I(BPF_JMP | 0xe0, 0, 0, 3, 0), /* 3: may_goto -> 7 */
	I(BPF_ALU64 | BPF_ADD | BPF_K, 7, 0, 0, 1),
	I(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 3, 7),      /* 5: out of the loop -> 9 */
	I(BPF_JMP | BPF_JA, 0, 0, -4, 0),              /* -> 3 */
	I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
	I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 8, 10, 0, 0),   /* 9 */
	I(BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, -8),
	I(BPF_JMP | BPF_JEQ | BPF_K, 9, 0, 1, 10),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, -8),
	I(BPF_JMP | BPF_JEQ | BPF_K, 9, 0, 1, 11),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, -16),
	I(BPF_JMP | BPF_JEQ | BPF_K, 9, 0, 1, 12),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, -32),
	I(BPF_JMP | BPF_JEQ | BPF_K, 9, 0, 1, 13),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, -64),
	I(BPF_JMP | BPF_JEQ | BPF_K, 9, 0, 1, 14),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, -128),
	I(BPF_JMP | 0xe0, 0, 0, 0, 0), /* 21: a forced checkpoint */
	I(BPF_ST | BPF_MEM | BPF_DW, 8, 0, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
	I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
};

static const struct cp_case cases[] = {
	{ "lone id, 40 entries between jumps", 0, 20, 8,
	  "processed 344 insns (limit 1000000) max_states_per_insn 0 total_states 4 peak_states 4 "
	  "mark_read 0" },
	{ "linked ids, 41 entries between jumps", 1, 20, 8,
	  "processed 343 insns (limit 1000000) max_states_per_insn 0 total_states 8 peak_states 8 "
	  "mark_read 0" },
	{ "lone id, 39 entries between jumps", 0, 19, 8,
	  "processed 328 insns (limit 1000000) max_states_per_insn 0 total_states 4 peak_states 4 "
	  "mark_read 0" },
	{ "a read not yet propagated when a state is cleaned", 0, 0, 0,
	  "processed 18 insns (limit 1000000) max_states_per_insn 0 total_states 1 peak_states 1 "
	  "mark_read 0", stale_live, sizeof(stale_live) / sizeof(stale_live[0]) },
	{ "a state evicted out of a loop while the loop has backedges", 0, 0, 0,
	  "processed 102 insns (limit 1000000) max_states_per_insn 4 total_states 15 peak_states 14 "
	  "mark_read 0", loop_exit_evict, sizeof(loop_exit_evict) / sizeof(loop_exit_evict[0]) },
	{ "the state that covers is the 70th of its instruction's list", 0, 0, 0,
	  "processed 8500 insns (limit 1000000) max_states_per_insn 69 total_states 849 peak_states 849 "
	  "mark_read 0", .many = 70 },
};

/* Many complete states at one instruction X, each with its own precise r6 (the path's
 * number, a stack offset after X), kept in the list by their hits (DEPTH arrivals each
 * after the first: a state leaves after more than 3 * hits + 3 misses); a last path
 * arrives with the first-explored path's r6, whose state is then the paths-th in the
 * list (newest first).  The kernel compares every state of the list: it prunes there.
 * bpfrt compared at most 64 per visit until session 25 and walked on past X (Falco's
 * sendmmsg_x: a state at a callback's return not found, its level-2 log parted from
 * the kernel's after 2 million lines, its ids after). */
#define DEPTH 24
static size_t many_states(int paths, struct bpf_insn *p)
{
	size_t n = 0, start[128], to_x[128 * (DEPTH + 1)], dispatch;
	int nx = 0;

	p[n++] = (struct bpf_insn)I(BPF_LDX | BPF_MEM | BPF_W, 7, 1, 0, 0);
	p[n++] = (struct bpf_insn)I(BPF_LDX | BPF_MEM | BPF_W, 8, 1, 4, 0);
	for (int k = 1; k <= 16; k++)
		p[n++] = (struct bpf_insn)I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, (int16_t)(-8 * k), 0);
	/* the dispatch compares `paths` (the repeat) first, so its path is pushed first
	 * and walked last; path 0 is pushed last, walked first: the repeat takes its r6 */
	dispatch = n;
	for (int j = paths; j >= 0; j--)
		p[n++] = (struct bpf_insn)I(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 0, j);
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[n++] = (struct bpf_insn)I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	for (int j = 0; j <= paths; j++) {
		int depth = j == paths ? 0 : DEPTH, r6 = j == paths ? 0 : j;
		size_t cmp = n;

		start[j] = n;
		for (int k = 1; k <= depth; k++)
			p[n++] = (struct bpf_insn)I(BPF_JMP | BPF_JEQ | BPF_K, 8, 0, 0, k);
		/* the fall-through (first arrival) stores the state: 8 insns since the last */
		p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 6, 0, 0, r6);
		for (int k = 0; k < 6; k++)
			p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, k);
		to_x[nx++] = n;
		p[n++] = (struct bpf_insn)I(BPF_JMP | BPF_JA, 0, 0, 0, 0);
		for (int k = 1; k <= depth; k++) {
			p[cmp + k - 1].off = (int16_t)(n - (cmp + k - 1) - 1);
			p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 6, 0, 0, r6);
			to_x[nx++] = n;
			p[n++] = (struct bpf_insn)I(BPF_JMP | BPF_JA, 0, 0, 0, 0);
		}
	}
	for (int j = paths; j >= 0; j--) {
		size_t at = dispatch + (size_t)(paths - j);

		p[at].off = (int16_t)(start[j] - at - 1);
	}
	/* X: r6 indexes the zeroed stack (precise), then a few insns a prune saves */
	for (int k = 0; k < nx; k++)
		p[to_x[k]].off = (int16_t)(n - to_x[k] - 1);
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -128);
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_ADD | BPF_X, 2, 6, 0, 0);
	p[n++] = (struct bpf_insn)I(BPF_LDX | BPF_MEM | BPF_B, 0, 2, 0, 0);
	for (int k = 0; k < 10; k++)
		p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1);
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[n++] = (struct bpf_insn)I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

/* r6 = skb->len (unknown); r7 = r6 (one id); r7 = 0 unless linked; then per segment
 * `if r6 == k goto out` and the spill/fill pairs; r0 = 0; exit; out: r0 = 1; exit. */
static size_t build(const struct cp_case *c, struct bpf_insn *p)
{
	size_t n = 0, jumps[64];
	int nj = 0;

	if (c->prog) {
		memcpy(p, c->prog, c->len * sizeof(*p));
		return c->len;
	}
	if (c->many)
		return many_states(c->many, p);
	p[n++] = (struct bpf_insn)I(BPF_LDX | BPF_MEM | BPF_W, 6, 1, 0, 0);
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_X, 7, 6, 0, 0);
	if (!c->linked)
		p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 7, 0, 0, 0);
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 8, 0, 0, 1);
	for (int s = 0; s < c->segments; s++) {
		jumps[nj++] = n;
		p[n++] = (struct bpf_insn)I(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 0, s);
		for (int k = 0; k < c->pairs; k++) {
			p[n++] = (struct bpf_insn)I(BPF_STX | BPF_MEM | BPF_DW, 10, 8, -8, 0);
			p[n++] = (struct bpf_insn)I(BPF_LDX | BPF_MEM | BPF_DW, 9, 10, -8, 0);
		}
	}
	/* r7 is read at the end when linked, so it stays live (the kernel links live ones) */
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_X, 0, c->linked ? 7 : 8, 0, 0);
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[n++] = (struct bpf_insn)I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	for (int j = 0; j < nj; j++)
		p[jumps[j]].off = (int16_t)(n - jumps[j] - 1);
	p[n++] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1);
	p[n++] = (struct bpf_insn)I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

static void check(sys_fn sys, const char *who, const struct cp_case *c)
{
	static struct bpf_insn insns[MAX_INSNS];
	char name[160], log[4096], *line, *end;
	union bpf_attr a;
	int fd;

	snprintf(name, sizeof(name), "%s: %s", who, c->name);
	T_CASE(name);
	memset(&a, 0, sizeof(a));
	memset(log, 0, sizeof(log));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)build(c, insns);
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 4;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	T_ASSERT(fd >= 0);
	if (fd >= 0)
		close(fd);
	line = strstr(log, "processed ");
	end = line ? strchr(line, '\n') : NULL;
	if (end)
		*end = 0;
	T_EQ_STR(c->stats, line ? line : "(no statistics line)");
}

int main(void)
{
	int kernel = kernel_available();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check(sys_bpfrt, "bpfrt", &cases[i]);
		if (kernel)
			check(sys_kernel, "kernel", &cases[i]);
	}
	if (!kernel)
		printf("note: not root or no bpf(2): bpfrt checked against the recorded lines only\n");
	return t_done();
}
