/* test_unpriv_oracle.c - unprivileged loads, bpfrt against the running kernel.  Random
 * socket filter programs (map lookups, pointer arithmetic on two paths, spills, helper
 * writes into the stack, pointer comparisons and leaks, context reads) plus the
 * unprivileged cases of tests/verifier/cases and a few hand-written ones are loaded, by a
 * child that has become uid 65534 with no capability, through syscall(__NR_bpf) and
 * through bpfrt_bpf() (which picks the unprivileged level from the caller's capabilities).
 * Verdicts and first error lines are compared; the figures are printed and held to the
 * floors below.
 *
 * The kernel refuses every load without CAP_BPF while kernel.unprivileged_bpf_disabled is
 * 2, so the test sets it to 0 for its run, holding `flock /work/unpriv.lock` meanwhile
 * (BPFRT_UNPRIV_LOCK; verifier.cases_oracle and preload.libbpf hold it shared),
 * and puts 2 back: at the end, from a signal handler, and - should this process be killed
 * outright - from a guardian process that waits for this one's pipe to close.  It never
 * writes 1 (which locks the setting until reboot) and skips, with the reason, when the
 * setting is neither 0 nor 2 or cannot be written.
 * Usage: test_verifier_unpriv_oracle [PROGRAMS [SEED]]; UNPRIV_VERBOSE=1 lists the
 * differences (2: with the programs), UNPRIV_LOG=N prints both level-2 logs of random #N.
 */
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "unpriv.h"
#include "vc_run.h"


/* Floors (measured: docs/STATUS.md #16); a fix raises them, a regression fails. */
#define FLOOR_VERDICT_PCT 99
#define FLOOR_MSG_PCT 99
#define MAX_FALSE_ACCEPTS 0
/* whole level-2 logs: the random programs' one known difference is the kernel's own
 * "verifier bug: REG INVARIANTS VIOLATION" on a speculative path (docs/STATUS.md #16) */
#define FLOOR_LOG_PCT 99

typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static int sys_kernel(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static int sys_bpfrt(int cmd, union bpf_attr *attr, unsigned int size)
{
	return bpfrt_bpf(cmd, attr, size);
}

/* ---- one load on one side */

struct side {
	sys_fn sys;
	int maps[VC_MAX_MAPS]; /* fds, -1 unused */
};

static int map_create(sys_fn sys, const struct vc_map *m)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = m->type;
	a.key_size = m->key_size;
	a.value_size = m->value_size;
	a.max_entries = m->max_entries;
	a.map_flags = m->flags;
	return sys(BPF_MAP_CREATE, &a, sizeof(a));
}

/* UNPRIV_LOG=N: random program N is loaded with log level 2 and both logs printed */
static long show_log = -1;
static int log_level = 1;

/* FNV-1a of a whole log: level-2 logs are compared whole, without keeping them */
static uint64_t log_hash(const char *log)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *log; log++)
		h = (h ^ (uint8_t)*log) * 0x100000001b3ull;
	return h;
}

/* errno (0: accepted) and the first error line; lddw imm N names maps[N]; with l2, the
 * program loaded again at log level 2 and that whole log's hash */
static void load(const struct side *s, const struct bpf_insn *in, size_t n, uint32_t type,
		 uint32_t attach, struct vc_outcome *o, uint64_t *l2)
{
	static char log[1 << 20];
	static struct bpf_insn insns[4096];
	union bpf_attr a;
	int fd;

	o->err = E2BIG;
	o->msg[0] = 0;
	if (n > 4096)
		return;
	memcpy(insns, in, n * sizeof(*in));
	for (size_t i = 0; i + 1 < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (insns[i].src_reg == BPF_PSEUDO_MAP_FD ||
			    insns[i].src_reg == BPF_PSEUDO_MAP_VALUE) {
				int k = insns[i].imm;

				insns[i].imm = k >= 0 && k < VC_MAX_MAPS && s->maps[k] >= 0
						       ? s->maps[k] : 1000000;
			}
			i++;
		}
	memset(&a, 0, sizeof(a));
	a.prog_type = type ? type : BPF_PROG_TYPE_SOCKET_FILTER;
	a.expected_attach_type = attach;
	a.insn_cnt = (uint32_t)n;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_level = (uint32_t)log_level;
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	log[0] = 0;
	fd = s->sys(BPF_PROG_LOAD, &a, sizeof(a));
	o->err = fd < 0 ? errno : 0;
	o->processed = vc_processed(log);
	if (log_level > 1)
		printf("---- %s log:\n%s", s->sys == sys_kernel ? "kernel" : "bpfrt", log);
	if (fd >= 0)
		close(fd);
	else
		vc_first_error(log, o->msg, sizeof(o->msg));
	if (l2) {
		a.log_level = 2;
		log[0] = 0;
		fd = s->sys(BPF_PROG_LOAD, &a, sizeof(a));
		if (fd >= 0)
			close(fd);
		*l2 = log_hash(log);
	}
}

/* ---- random unprivileged socket filters */

static uint64_t rng;

static uint32_t rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng >> 33);
}

static uint32_t pick(uint32_t n)
{
	return rnd() % n;
}

/* map 0: array, 4-byte key, 48-byte value, 4 entries; map 1: hash, 4-byte key, 16-byte
 * value */
static const struct vc_map gen_maps[VC_MAX_MAPS] = {
	{ BPF_MAP_TYPE_ARRAY, 4, 48, 4, 0, 0, { 0 } },
	{ BPF_MAP_TYPE_HASH, 4, 16, 8, 0, 0, { 0 } },
};

#define MAXP 96

struct gen {
	struct bpf_insn p[MAXP + 16];
	size_t n;
	unsigned init; /* registers written on every path so far (bit per register) */
};

static void emit(struct gen *g, struct bpf_insn in)
{
	if (g->n < MAXP + 16)
		g->p[g->n++] = in;
}

#define E(...) emit(g, (struct bpf_insn)__VA_ARGS__)

/* lddw d, src_reg (map fd or map value), map m, second imm */
static void emit_ld(struct gen *g, int d, int src, int m, int imm2)
{
	emit(g, (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = (uint8_t)d,
				   .src_reg = (uint8_t)src, .imm = m });
	emit(g, (struct bpf_insn){ .imm = imm2 });
}

static const int ctx_offs[] = { 0, 4, 8, 16, 18, 20, 24, 28, 32, 36, 40, 48, 52, 56, 64,
				76, 80, 96, 140, 152, 160, 168, 176, 184, 188, 190, 200 };
static const int helpers[] = { BPF_FUNC_map_lookup_elem, BPF_FUNC_map_update_elem,
			       BPF_FUNC_map_delete_elem, BPF_FUNC_get_prandom_u32,
			       BPF_FUNC_ktime_get_ns, BPF_FUNC_get_current_pid_tgid,
			       BPF_FUNC_get_current_uid_gid, BPF_FUNC_skb_load_bytes,
			       BPF_FUNC_get_smp_processor_id, BPF_FUNC_get_socket_cookie,
			       BPF_FUNC_get_socket_uid };

/* r2 = fp - 8 holding a key in [0, 4) or a random one; r1 = map m; lookup */
static void gen_lookup(struct gen *g, int m)
{
	E(ST(BPF_W, 10, -8, pick(3) ? (int)pick(4) : (int)rnd()));
	E(MOV64_REG(2, 10));
	E(ALU64_IMM(BPF_ADD, 2, -8));
	emit_ld(g, 1, BPF_PSEUDO_MAP_FD, m, 0);
	E(CALL(BPF_FUNC_map_lookup_elem));
}

static const int sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
static const int st_sizes[] = { BPF_B, BPF_W, BPF_DW };
static const int alu_k[] = { BPF_ADD, BPF_AND, BPF_RSH, BPF_MUL, BPF_OR };
static const int alu_x[] = { BPF_ADD, BPF_SUB, BPF_AND, BPF_OR, BPF_MOV };
static const int jmp_k[] = { BPF_JEQ, BPF_JNE, BPF_JGT, BPF_JSGT };
static const int jmp_x[] = { BPF_JEQ, BPF_JNE, BPF_JGT };
#define PICK(a) a[pick(sizeof(a) / sizeof(a[0]))]

/* a register to read: one written before, now and then any */
static int rreg(const struct gen *g)
{
	for (int tries = 0; tries < 8; tries++) {
		int r = (int)pick(11);

		if (g->init >> r & 1 || !pick(30))
			return r;
	}
	return 10;
}

/* One step: a few instructions of a kind real unprivileged programs (and their
 * mistakes) have. */
static void gen_step(struct gen *g)
{
	int d = 1 + (int)pick(9), s = rreg(g);
	size_t start = g->n;

	switch (pick(19)) {
	case 0: /* a map value in r7 behind a NULL check (most of the time) */
		gen_lookup(g, (int)pick(2));
		if (pick(5)) {
			E(JIMM(BPF_JNE, 0, 0, 2));
			E(MOV64_IMM(0, 0));
			E(EXIT());
		}
		E(MOV64_REG(6 + (int)pick(3), 0));
		break;
	case 1: /* pointer arithmetic whose offset depends on the path taken */
		E(LDX(BPF_W, 3, 6, (int)(4 * pick(4))));
		E(JIMM(BPF_JGT, 3, (int)pick(100), 2));
		E(MOV64_IMM(4, (int)(4 * pick(4))));
		E(JA(1));
		E(MOV64_IMM(4, (int)(4 * pick(4))));
		E(ALU64_REG(BPF_ADD, 6 + (int)pick(3), pick(2) ? 4 : 3));
		break;
	case 2: /* constant pointer arithmetic */
		E(ALU64_IMM(pick(4) ? BPF_ADD : BPF_SUB, 6 + (int)pick(4),
			    (int)pick(64) - (pick(8) ? 0 : 32)));
		break;
	case 3: /* a load through a register */
		E(LDX(PICK(sizes), d, 6 + (int)pick(4),
		      pick(4) ? 8 * (int)pick(5) : (int)pick(48) - 16));
		break;
	case 4: /* a store through a register (value: scalar or pointer) */
		E(STX(PICK(sizes), 6 + (int)pick(4), s,
		      pick(4) ? 8 * (int)pick(5) - (pick(2) ? 0 : 16) : (int)pick(64) - 48));
		break;
	case 5: /* a spill and maybe a fill */
		E(STX(BPF_DW, 10, s, -8 * (int)(1 + pick(6))));
		if (pick(2))
			E(LDX(pick(4) ? BPF_DW : BPF_W, d, 10, -8 * (int)(1 + pick(6))));
		break;
	case 6: /* a helper call with arguments from the registers as they are */
		if (pick(2)) {
			E(MOV64_REG(1, 6));
			E(MOV64_IMM(2, (int)pick(32)));
			E(MOV64_REG(3, 10));
			E(ALU64_IMM(BPF_ADD, 3, -8 * (int)(1 + pick(6))));
			E(MOV64_IMM(4, 1 << pick(5)));
			E(CALL(BPF_FUNC_skb_load_bytes));
		} else {
			E(MOV64_REG(1, 6));
			E(CALL(helpers[pick(sizeof(helpers) / sizeof(helpers[0]))]));
		}
		break;
	case 7: /* a context read */
		E(LDX(pick(4) ? BPF_W : (pick(2) ? BPF_H : BPF_B), d, 6,
		      ctx_offs[pick(sizeof(ctx_offs) / sizeof(ctx_offs[0]))]));
		break;
	case 8: /* scalar ALU */
		E(ALU64_IMM(PICK(alu_k), d,
			    (int)pick(16)));
		break;
	case 9: /* register ALU, pointers included */
		E(ALU64_REG(PICK(alu_x), d, s));
		break;
	case 10: /* a comparison, pointers included, skipping the next step's first insns */
		if (pick(2))
			E(JIMM(PICK(jmp_k), d,
			       (int)pick(3), (int)(1 + pick(3))));
		else
			E(JREG(PICK(jmp_x), d, s,
			       (int)(1 + pick(3))));
		E(MOV64_IMM(0, 0));
		E(MOV64_IMM((int)pick(6), 1));
		E(MOV64_IMM((int)pick(6), 2));
		break;
	case 11: /* a map pointer or a map value address from lddw */
		if (pick(2))
			emit_ld(g, d, BPF_PSEUDO_MAP_FD, (int)pick(2), 0);
		else
			emit_ld(g, d, BPF_PSEUDO_MAP_VALUE, 0, (int)pick(48));
		break;
	case 12: /* a stack store of a constant */
		E(ST(PICK(st_sizes), 10, -8 * (int)(1 + pick(6)),
		     (int)pick(8)));
		break;
	case 13: /* a fresh scalar into r8/r9 */
		E(MOV64_IMM(8 + (int)pick(2), (int)pick(20)));
		break;
	case 14: /* a stack pointer into r6..r9 */
		E(MOV64_REG(6 + (int)pick(4), 10));
		E(ALU64_IMM(BPF_ADD, 6 + (int)pick(4), -8 * (int)(1 + pick(6))));
		break;
	case 16: /* a branch decided by constants: its dead side runs only speculatively,
		  * with the compared registers unknown (a deref or a pointer move there) */
		E(MOV64_IMM(5, (int)pick(4)));
		E(JIMM(PICK(jmp_k), 5, (int)pick(4), 1 + (int)pick(2)));
		if (pick(2))
			E(LDX(PICK(sizes), d, 5, 0));
		else
			E(ALU64_REG(BPF_ADD, 6 + (int)pick(4), 5));
		E(MOV64_IMM(5, 1));
		break;
	case 17: /* pointer += a bounded unknown scalar, then an access the unmoved
		  * (speculative) pointer may not make */
		E(LDX(BPF_W, 3, 7, (int)(4 * pick(4))));
		E(ALU64_IMM(BPF_AND, 3, (int)pick(16)));
		if (pick(2))
			E(ALU64_IMM(BPF_ADD, 3, (int)(4 * pick(3))));
		E(ALU64_REG(pick(4) ? BPF_ADD : BPF_SUB, 6 + (int)pick(4), 3));
		E(LDX(PICK(sizes), d, 6 + (int)pick(4), (int)pick(24) - 12));
		break;
	case 18: /* a register compared with a constant it cannot equal (decided), or a
		  * pointer compared with 0 */
		E(JIMM(pick(2) ? BPF_JEQ : BPF_JNE, 6 + (int)pick(4), pick(3) ? 0 : -1,
		       1 + (int)pick(2)));
		E(STX(PICK(sizes), 10, 6 + (int)pick(4), -8 * (int)(1 + pick(6))));
		E(MOV64_REG(0, 6 + (int)pick(4)));
		break;
	default: /* a map value pointer copied around */
		E(MOV64_REG(6 + (int)pick(4), 6 + (int)pick(4)));
		break;
	}
	/* what the step wrote: calls clobber r1-r5, other writes set dst (roughly: a
	 * skipped write still counts, as a mistake real programs make) */
	for (size_t i = start; i < g->n; i++) {
		uint8_t c = g->p[i].code;

		if (c == (BPF_JMP | BPF_CALL))
			g->init = (g->init & ~0x3eu) | 1u;
		else if (BPF_CLASS(c) == BPF_ALU64 || BPF_CLASS(c) == BPF_ALU ||
			 BPF_CLASS(c) == BPF_LDX || c == (BPF_LD | BPF_IMM | BPF_DW))
			g->init |= 1u << g->p[i].dst_reg;
	}
}

static size_t gen_prog(struct gen *g)
{
	size_t steps = 2 + pick(10);

	g->n = 0;
	g->init = 1u << 1 | 1u << 10;
	E(MOV64_REG(6, 1));
	g->init |= 1u << 6;
	/* r7 = a map value (or the stack), r8 = a scalar, r9 = a stack slot */
	if (pick(3)) {
		gen_lookup(g, (int)pick(2));
		E(JIMM(BPF_JNE, 0, 0, 2));
		E(MOV64_IMM(0, 0));
		E(EXIT());
		E(MOV64_REG(7, 0));
	} else {
		E(MOV64_REG(7, 10));
		E(ALU64_IMM(BPF_ADD, 7, -48));
	}
	E(MOV64_IMM(8, (int)pick(16)));
	E(MOV64_REG(9, 10));
	E(ALU64_IMM(BPF_ADD, 9, -16));
	g->init |= 1u << 7 | 1u << 8 | 1u << 9;
	for (size_t i = 0; i < steps && g->n < MAXP; i++)
		gen_step(g);
	switch (pick(6)) {
	case 0:
		E(MOV64_REG(0, rreg(g))); /* pointer leaks included */
		break;
	case 1:
		break; /* r0 as left */
	default:
		E(MOV64_IMM(0, (int)pick(2)));
	}
	E(EXIT());
	return g->n;
}

/* ---- hand-written: the differences issue 16 lists */

#define LOOKUP0_CHECKED LOOKUP_MAP0, JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT()

static const struct {
	const char *name;
	struct bpf_insn p[32];
	size_t n;
} hand[] = {
#define H(nm, ...) { nm, { __VA_ARGS__ }, \
		     sizeof((struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn) }
	H("map value + offset differing by path", LOOKUP0_CHECKED, LDX(BPF_W, 3, 0, 0),
	  MOV64_IMM(4, 8), JIMM(BPF_JGT, 3, 5, 1), MOV64_IMM(4, 16), ALU64_REG(BPF_ADD, 0, 4),
	  LDX(BPF_W, 0, 0, 0), EXIT()),
	H("map value + same offset on both paths", LOOKUP0_CHECKED, LDX(BPF_W, 3, 0, 0),
	  MOV64_IMM(4, 8), JIMM(BPF_JGT, 3, 5, 1), MOV64_IMM(4, 8), ALU64_REG(BPF_ADD, 0, 4),
	  LDX(BPF_W, 0, 0, 0), EXIT()),
	H("skb_load_bytes over a spilled pointer", STX(BPF_DW, 10, 1, -8), MOV64_IMM(2, 0),
	  MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -8), MOV64_IMM(4, 4),
	  CALL(BPF_FUNC_skb_load_bytes), MOV64_IMM(0, 0), EXIT()),
	H("get_current_pid_tgid", CALL(BPF_FUNC_get_current_pid_tgid), MOV64_IMM(0, 0), EXIT()),
	H("get_current_uid_gid", CALL(BPF_FUNC_get_current_uid_gid), MOV64_IMM(0, 0), EXIT()),
	H("__sk_buff->sk read", LDX(BPF_DW, 2, 1, 168), MOV64_IMM(0, 0), EXIT()),
	H("__sk_buff->sk deref without check", LDX(BPF_DW, 2, 1, 168), LDX(BPF_W, 0, 2, 0),
	  EXIT()),
	H("__sk_buff->sk deref after check", LDX(BPF_DW, 2, 1, 168), JIMM(BPF_JEQ, 2, 0, 2),
	  LDX(BPF_W, 0, 2, 4), EXIT(), MOV64_IMM(0, 0), EXIT()),
	H("if map_ptr == 0", LD_MAP(1, 0), JIMM(BPF_JEQ, 1, 0, 1), MOV64_IMM(0, 0), EXIT()),
	H("if map_ptr != 0", LD_MAP(1, 0), MOV64_IMM(0, 0), JIMM(BPF_JNE, 1, 0, 1),
	  MOV64_IMM(0, 1), EXIT()),
	H("bpf_array field read", LD_MAP(1, 0), LDX(BPF_W, 0, 1, 0), EXIT()),
	H("bpf_htab field read", LD_MAP(1, 1), LDX(BPF_W, 0, 1, 0), EXIT()),
	H("skb->protocol upper half", LDX(BPF_H, 0, 1, 18), EXIT()),
	/* which register the sanitation errors name, for each operand order */
	H("scalar += ctx", MOV64_IMM(8, 9), ALU64_REG(BPF_ADD, 8, 1), MOV64_IMM(0, 0), EXIT()),
	H("scalar -= ctx", MOV64_IMM(8, 9), ALU64_REG(BPF_SUB, 8, 1), MOV64_IMM(0, 0), EXIT()),
	H("ctx += scalar", MOV64_IMM(8, 9), ALU64_REG(BPF_ADD, 1, 8), MOV64_IMM(0, 0), EXIT()),
	H("mixed-sign scalar += map value", LOOKUP0_CHECKED, LDX(BPF_W, 3, 0, 0),
	  ALU64_IMM(BPF_ADD, 3, -8), ALU64_REG(BPF_ADD, 3, 0), LDX(BPF_W, 0, 3, 0), EXIT()),
	H("map value += mixed-sign scalar", LOOKUP0_CHECKED, LDX(BPF_W, 3, 0, 0),
	  ALU64_IMM(BPF_ADD, 3, -8), ALU64_REG(BPF_ADD, 0, 3), LDX(BPF_W, 0, 0, 0), EXIT()),
	H("map value -= mixed-sign scalar", LOOKUP0_CHECKED, LDX(BPF_W, 3, 0, 0),
	  ALU64_IMM(BPF_ADD, 3, -8), ALU64_REG(BPF_SUB, 0, 3), LDX(BPF_W, 0, 0, 0), EXIT()),
	H("scalar += map value on two paths", LOOKUP0_CHECKED, LDX(BPF_W, 3, 0, 0),
	  MOV64_IMM(4, 8), JIMM(BPF_JGT, 3, 5, 1), MOV64_IMM(4, 16), ALU64_REG(BPF_ADD, 4, 0),
	  LDX(BPF_W, 0, 4, 0), EXIT()),
#undef H
};

/* ---- comparison */

struct tally {
	size_t run, verdict_same, both_reject, msg_same, false_accept, false_reject;
	size_t both_accept, processed_same; /* "processed N insns" equal: the same walk,
					     * speculative paths included */
	size_t log_same; /* whole level-2 logs equal (every program) */
};

static void compare(struct tally *t, const char *name, const struct vc_outcome *k,
		    const struct vc_outcome *b, uint64_t kl2, uint64_t bl2, int show)
{
	t->run++;
	t->log_same += kl2 == bl2;
	if (show > 1 && kl2 != bl2)
		printf("  level-2 log differs: %s\n", name);
	if ((k->err == 0) == (b->err == 0))
		t->verdict_same++;
	else if (k->err)
		t->false_accept++;
	else
		t->false_reject++;
	if (k->err && b->err) {
		t->both_reject++;
		if (!strcmp(k->msg, b->msg))
			t->msg_same++;
	}
	if (!k->err && !b->err) {
		t->both_accept++;
		t->processed_same += k->processed == b->processed;
		if (show > 1 && k->processed != b->processed)
			printf("  processed: %s: kernel %u, bpfrt %u\n", name, k->processed,
			       b->processed);
	}
	if (show && ((k->err == 0) != (b->err == 0) || strcmp(k->msg, b->msg)))
		printf("  differs: %s: kernel %s '%s', bpfrt %s '%s'\n", name,
		       k->err ? strerror(k->err) : "accept", k->msg,
		       b->err ? strerror(b->err) : "accept", b->msg);
}

static void report(const char *what, const struct tally *t)
{
	printf("%s: %zu programs, verdicts agree %zu (%.1f%%), kernel refuses/bpfrt accepts %zu, "
	       "kernel accepts/bpfrt refuses %zu, both refuse %zu, same first message %zu "
	       "(%.1f%%), both accept %zu, same processed insns %zu, same whole level-2 log %zu "
	       "(%.1f%%)\n", what, t->run,
	       t->verdict_same,
	       t->run ? 100.0 * (double)t->verdict_same / (double)t->run : 0.0, t->false_accept,
	       t->false_reject, t->both_reject, t->msg_same,
	       t->both_reject ? 100.0 * (double)t->msg_same / (double)t->both_reject : 0.0,
	       t->both_accept, t->processed_same, t->log_same,
	       t->run ? 100.0 * (double)t->log_same / (double)t->run : 0.0);
}

/* The worker: runs as nobody; returns the harness's exit status. */
static int worker(const struct side *k, const struct side *b, size_t nprogs, uint64_t seed,
		  int verbose)
{
	struct tally th = { 0 }, tc = { 0 }, tr = { 0 };
	struct vcase_list l = { 0 };
	struct vc_outcome ko, bo;
	uint64_t kl, bl;
	static struct gen g;

	if (become_nobody()) {
		printf("skipped: cannot become uid %d\n", NOBODY);
		return 77;
	}
	for (size_t i = 0; i < sizeof(hand) / sizeof(hand[0]); i++) {
		load(k, hand[i].p, hand[i].n, 0, 0, &ko, &kl);
		load(b, hand[i].p, hand[i].n, 0, 0, &bo, &bl);
		compare(&th, hand[i].name, &ko, &bo, kl, bl, 1 + (verbose > 1));
	}
	report("hand-written", &th);

	/* the case tables' unprivileged cases, each with its own maps on both sides */
	vc_all(&l);
	for (size_t i = 0; i < l.n; i++) {
		const struct vcase *c = &l.v[i];
		struct side kc = { k->sys, { -1, -1, -1, -1 } }, bc = { b->sys, { -1, -1, -1, -1 } };
		int ok = 1;

		if (c->priv != BRT_PRIV_UNPRIV || c->btf || c->prog_flags || c->non_gpl)
			continue;
		for (int m = 0; m < VC_MAX_MAPS; m++) {
			if (!c->maps[m].type)
				continue;
			kc.maps[m] = map_create(k->sys, &c->maps[m]);
			bc.maps[m] = map_create(b->sys, &c->maps[m]);
			ok &= kc.maps[m] >= 0 && bc.maps[m] >= 0;
		}
		if (ok) {
			load(&kc, c->insns, c->len, c->prog_type, c->attach, &ko, &kl);
			load(&bc, c->insns, c->len, c->prog_type, c->attach, &bo, &bl);
			compare(&tc, c->name, &ko, &bo, kl, bl, 1 + (verbose > 1));
		}
		for (int m = 0; m < VC_MAX_MAPS; m++) {
			if (kc.maps[m] >= 0)
				close(kc.maps[m]);
			if (bc.maps[m] >= 0)
				close(bc.maps[m]);
		}
	}
	report("case tables (unprivileged)", &tc);

	rng = seed;
	for (size_t i = 0; i < nprogs; i++) {
		size_t n = gen_prog(&g);
		char name[48];

		snprintf(name, sizeof(name), "random #%zu", i);
		log_level = (long)i == show_log ? 2 : 1;
		load(k, g.p, n, 0, 0, &ko, &kl);
		load(b, g.p, n, 0, 0, &bo, &bl);
		compare(&tr, name, &ko, &bo, kl, bl, verbose);
		if (verbose > 2)
			printf("kmsg %s\n", ko.err ? ko.msg : "accept");
		if (verbose > 1 && ((ko.err == 0) != (bo.err == 0) || strcmp(ko.msg, bo.msg)))
			for (size_t j = 0; j < n; j++)
				printf("    %zu: %02x %u %u %d %d\n", j, g.p[j].code, g.p[j].dst_reg,
				       g.p[j].src_reg, g.p[j].off, g.p[j].imm);
	}
	report("random", &tr);

	T_CASE("hand-written and case tables: no false accept");
	T_EQ_INT(0, th.false_accept + tc.false_accept);
	T_CASE("hand-written and case tables: whole level-2 logs");
	T_EQ_INT((long)(th.run + tc.run), (long)(th.log_same + tc.log_same));
	T_CASE("random: whole level-2 logs");
	T_ASSERT(tr.log_same * 100 >= tr.run * FLOOR_LOG_PCT);
	T_CASE("random: verdicts");
	T_ASSERT(tr.false_accept <= MAX_FALSE_ACCEPTS);
	T_ASSERT(tr.verdict_same * 100 >= tr.run * FLOOR_VERDICT_PCT);
	T_CASE("random: first messages");
	T_ASSERT(tr.msg_same * 100 >= tr.both_reject * FLOOR_MSG_PCT);
	return t_done();
}

int main(int argc, char **argv)
{
	size_t nprogs = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 16;
	int verbose = getenv("UNPRIV_VERBOSE") ? atoi(getenv("UNPRIV_VERBOSE")) : 0;

	if (getenv("UNPRIV_LOG"))
		show_log = atol(getenv("UNPRIV_LOG"));
	struct side k = { sys_kernel, { -1, -1, -1, -1 } }, b = { sys_bpfrt, { -1, -1, -1, -1 } };
	const char *why;
	pid_t pid;
	int st = 0;

	if (geteuid() != 0)
		T_SKIP("needs root to change kernel.unprivileged_bpf_disabled");
	for (int m = 0; m < 2; m++) {
		k.maps[m] = map_create(sys_kernel, &gen_maps[m]);
		b.maps[m] = map_create(sys_bpfrt, &gen_maps[m]);
		if (k.maps[m] < 0 || b.maps[m] < 0)
			T_SKIP("cannot create the maps (%s)", strerror(errno));
	}
	why = unpriv_enable();
	if (why)
		T_SKIP("%s", why);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		st = worker(&k, &b, nprogs, seed, verbose);
		fflush(stdout); /* _exit() does not */
		fflush(stderr);
		_exit(st);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = 1 << 8;
	restore();
	if (WIFSIGNALED(st)) {
		printf("FAIL: the worker died of signal %d\n", WTERMSIG(st));
		return 1;
	}
	return WEXITSTATUS(st);
}
