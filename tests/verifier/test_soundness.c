/* test_soundness.c - the verifier must never accept a program that misbehaves: random
 * programs (ALU, stack and context accesses, pointer arithmetic, branches, bounded loops,
 * helper calls, map lookups with and without NULL checks, XDP packet accesses behind
 * right and wrong data_end checks, bpf-to-bpf calls, the ISA v4 forms sdiv, smod, movsx,
 * bswap and sign-extending loads) go through brt_verify() as root (half), bpf_capable (a
 * quarter) or unprivileged (a quarter: socket filters without loops or calls, where ALU
 * sanitation and speculative paths apply); every accepted one runs on the checked engine
 * with random inputs and must not fault (no access outside the context, the packet, a map
 * value or the stack, no budget exhaustion, no fall off the end, no helper given a bad key
 * pointer; for bpf_capable and unprivileged programs also no read of a register or stack
 * byte never written: write tracking).
 * Usage: test_verifier_soundness [PROGRAMS [SEED]]; prints "N programs, A accepted ...".
 * scripts/verifier-soundness.sh runs a long campaign in chunks.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>

#include "bpfrt.h"
#include "cases/case.h"
#include "harness.h"
#include "helpers/helpers.h"
#include "vm/vm.h"

#define MAXP 200
#define SKB_CTX 192
#define XDP_CTX 24

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33);
}

static uint32_t pick(uint32_t n)
{
	return rnd() % n;
}

/* ---- the maps the programs look up: values kept apart so an overflow hits no region */

#define NMAPS 2
#define VAL_GAP 64

struct fake_map {
	struct brt_map_info info;
	unsigned char *values; /* max_entries values, VAL_GAP bytes apart */
	uint32_t stride;
};

static struct fake_map maps[NMAPS];

static void maps_init(void)
{
	static const struct brt_map_info shapes[NMAPS] = {
		{ .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 48, .max_entries = 4 },
		{ .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 16, .max_entries = 8 },
	};

	for (int i = 0; i < NMAPS; i++) {
		maps[i].info = shapes[i];
		maps[i].info.ptr = &maps[i];
		maps[i].stride = shapes[i].value_size + VAL_GAP;
		maps[i].values = calloc(shapes[i].max_entries, maps[i].stride);
		if (!maps[i].values)
			exit(1);
	}
}

static int map_info(void *arg, int fd, struct brt_map_info *out)
{
	(void)arg;
	if (fd < 0 || fd >= NMAPS)
		return -EBADF;
	*out = maps[fd].info;
	return 0;
}

static int helper_fault;

/* map_lookup_elem: arrays hold every key below max_entries, the hash map the even ones */
static uint64_t lookup(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
		       struct bpfrt_run_ctx *ctx)
{
	struct fake_map *m = (struct fake_map *)(uintptr_t)r1;
	uint32_t key;

	(void)r3, (void)r4, (void)r5;
	if (m < maps || m >= maps + NMAPS ||
	    !bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)r2, 4, 0)) {
		helper_fault = 1;
		bpfrt_run_stop(ctx, 0);
		return 0;
	}
	memcpy(&key, (const void *)(uintptr_t)r2, 4);
	if (key >= m->info.max_entries || (m->info.type == BPF_MAP_TYPE_HASH && key % 2))
		return 0;
	return (uint64_t)(uintptr_t)(m->values + (size_t)key * m->stride);
}

/* ---- the generator ------------------------------------------------------------------ */

struct gen {
	struct bpf_insn p[MAXP];
	int n;
	int xdp;      /* XDP program (packet access) instead of a socket filter */
	int sub_at;   /* index of the pseudo call (or callback lddw) to patch, -1 if none */
	int sub_cb;   /* the subprogram is bpf_loop's callback */
	int capbpf;   /* verified as bpf_capable or unprivileged: no uninitialised stack reads
		       * either, run with write tracking */
	int unpriv;   /* verified without any capability (capbpf is set too) */
};

static void emit(struct gen *g, struct bpf_insn insn)
{
	if (g->n < MAXP)
		g->p[g->n++] = insn;
}

static const uint8_t alu_ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH,
				   BPF_RSH, BPF_NEG, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH };
static const uint8_t jmp_ops[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT,
				   BPF_JSGE, BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE };
static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
static const int size_bytes[] = { [BPF_B] = 1, [BPF_H] = 2, [BPF_W] = 4, [BPF_DW] = 8 };

/* a scratch register: r0-r5 and r7-r9 (r6 keeps the context) */
static uint8_t sreg(void)
{
	static const uint8_t r[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9 };

	return r[pick(9)];
}

static int32_t small_imm(void)
{
	static const int32_t v[] = { 0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 63, 64, 255, -1, -8, 512,
				     0x7fffffff, -0x80000000LL };

	return v[pick(sizeof(v) / sizeof(v[0]))];
}

/* ISA v4 ALU forms the table above does not reach: signed division and modulo (off 1),
 * sign-extending moves (off 8/16/32) and byte swaps (BPF_ALU64 | BPF_END). */
static void gen_alu_v4(struct gen *g, uint8_t d, uint8_t s, uint8_t cls)
{
	static const int16_t sx[] = { 8, 16, 32 };
	static const int32_t width[] = { 16, 32, 64 };
	int32_t imm = small_imm();

	switch (pick(4)) {
	case 0:
	case 1: {
		uint8_t op = pick(2) ? BPF_DIV : BPF_MOD;

		if (pick(2))
			emit(g, (struct bpf_insn)I(cls | op | BPF_K, d, 0, 1, imm ? imm : -3));
		else
			emit(g, (struct bpf_insn)I(cls | op | BPF_X, d, s, 1, 0));
		break;
	}
	case 2: /* 32-bit movsx takes only 8 and 16 */
		emit(g, (struct bpf_insn)I(cls | BPF_MOV | BPF_X, d, s,
					    sx[pick(cls == BPF_ALU64 ? 3 : 2)], 0));
		break;
	default:
		if (pick(2))
			emit(g, (struct bpf_insn)I(BPF_ALU64 | BPF_END | BPF_TO_LE, d, 0, 0,
						    width[pick(3)]));
		else
			emit(g, (struct bpf_insn)I(BPF_ALU | BPF_END | (pick(2) ? BPF_TO_BE : BPF_TO_LE),
						    d, 0, 0, width[pick(3)]));
		break;
	}
}

static void gen_alu_reg(struct gen *g, uint8_t d, uint8_t s)
{
	uint8_t op = alu_ops[pick(sizeof(alu_ops))], cls = pick(3) ? BPF_ALU64 : BPF_ALU;
	int32_t imm = small_imm();

	if (!pick(8)) {
		gen_alu_v4(g, d, s, cls);
		return;
	}
	if (op == BPF_NEG) {
		emit(g, (struct bpf_insn)I(cls | op, d, 0, 0, 0));
		return;
	}
	if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH))
		imm &= cls == BPF_ALU64 ? 63 : 31;
	if ((op == BPF_DIV || op == BPF_MOD) && !imm)
		imm = 3;
	if (pick(2))
		emit(g, (struct bpf_insn)I(cls | op | BPF_K, d, 0, 0, imm));
	else
		emit(g, (struct bpf_insn)I(cls | op | BPF_X, d, s, 0, 0));
}

static void gen_alu(struct gen *g)
{
	gen_alu_reg(g, sreg(), sreg());
}

static int16_t ctx_off(const struct gen *g)
{
	if (g->xdp) /* xdp_md: five u32 fields (egress_ifindex needs a devmap attach) */
		return (int16_t)(4 * pick(pick(8) ? 5 : 6) + (pick(16) ? 0 : (int)pick(4)));
	return (int16_t)(4 * pick(12) + (pick(16) ? 0 : (int)pick(4)));
}

static void gen_mem(struct gen *g)
{
	uint8_t sz = sizes[pick(4)], r = sreg();
	int16_t soff = (int16_t)(-8 * (int)(1 + pick(8)) + (pick(4) ? 0 : (int)pick(8)));

	switch (pick(6)) {
	case 0:
		emit(g, (struct bpf_insn)ST(sz, 10, soff, small_imm()));
		break;
	case 1:
		emit(g, (struct bpf_insn)STX(sz, 10, r, soff));
		break;
	case 2: /* a quarter sign-extending (BPF_MEMSX has no DW form) */
		if (sz != BPF_DW && !pick(4))
			emit(g, (struct bpf_insn)LDXSX(sz, r, 10, soff));
		else
			emit(g, (struct bpf_insn)LDX(sz, r, 10, soff));
		break;
	case 3: /* mostly a whole u32 field */
		emit(g, (struct bpf_insn)LDX(pick(4) ? BPF_W : sz, r, 6, ctx_off(g)));
		break;
	case 4: /* variable stack address: r2 = fp - 64 + (rX & mask) */
		emit(g, (struct bpf_insn)MOV64_REG(2, 10));
		emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 2, -64));
		emit(g, (struct bpf_insn)ALU64_IMM(BPF_AND, r, (int32_t)(pick(2) ? 63 : 127)));
		emit(g, (struct bpf_insn)ALU64_REG(BPF_ADD, 2, r));
		if (pick(2))
			emit(g, (struct bpf_insn)ST(sz, 2, (int16_t)pick(8), 1));
		else
			emit(g, (struct bpf_insn)LDX(sz, sreg(), 2, 0));
		break;
	default: /* write into cb[] of the context (a socket filter's only writable field) */
		emit(g, (struct bpf_insn)STX(BPF_W, 6, r, (int16_t)(48 + 4 * pick(6))));
		break;
	}
}

/* a map value access through r0: constant offset near the ends, or a masked variable one */
static void gen_value_access(struct gen *g, uint32_t vsize)
{
	uint8_t sz = sizes[pick(4)], r = (uint8_t)(7 + pick(3));
	int32_t off = pick(3) ? (int32_t)pick(vsize) : (int32_t)vsize - (int32_t)pick(12);

	if (!pick(3)) {
		emit(g, (struct bpf_insn)LDX(BPF_B, r, 6, ctx_off(g)));
		emit(g, (struct bpf_insn)ALU64_IMM(BPF_AND, r, (int32_t)(pick(2) ? 15 : 63)));
		emit(g, (struct bpf_insn)ALU64_REG(BPF_ADD, 0, r));
		off = (int32_t)pick(vsize / 2);
	}
	if (!pick(8))
		off = -(int32_t)pick(8);
	if (pick(2))
		emit(g, (struct bpf_insn)LDX(sz, r, 0, (int16_t)off));
	else if (pick(2))
		emit(g, (struct bpf_insn)ST(sz, 0, (int16_t)off, small_imm()));
	else
		emit(g, (struct bpf_insn)STX(sz, 0, sreg(), (int16_t)off));
}

/* key at fp-4 (or not written), lookup, then a NULL check (sometimes missing) */
static void gen_lookup(struct gen *g)
{
	int m = (int)pick(NMAPS);
	int skip_check = !pick(10), at, accesses = 1 + (int)pick(3);

	switch (pick(8)) {
	case 0:
		break; /* key maybe never written */
	case 1:
	case 2:
		emit(g, (struct bpf_insn)LDX(BPF_W, 3, 6, ctx_off(g)));
		if (pick(2))
			emit(g, (struct bpf_insn)ALU64_IMM(BPF_AND, 3, 7));
		emit(g, (struct bpf_insn)STX(BPF_W, 10, 3, -4));
		break;
	default:
		emit(g, (struct bpf_insn)ST(BPF_W, 10, -4, (int32_t)pick(10)));
		break;
	}
	emit(g, (struct bpf_insn)MOV64_REG(2, 10));
	emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 2, pick(16) ? -4 : -2));
	emit(g, (struct bpf_insn)I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, m));
	emit(g, (struct bpf_insn)I(0, 0, 0, 0, 0));
	emit(g, (struct bpf_insn)CALL(BPF_FUNC_map_lookup_elem));
	at = g->n;
	if (!skip_check)
		emit(g, (struct bpf_insn)JIMM(pick(6) ? BPF_JEQ : BPF_JNE, 0, 0, 0));
	for (int i = 0; i < accesses; i++)
		gen_value_access(g, maps[m].info.value_size);
	if (!pick(6)) /* a pointer kept in a callee-saved register, used after other work */
		emit(g, (struct bpf_insn)MOV64_REG(8, 0));
	if (!skip_check)
		g->p[at].off = (int16_t)(g->n - at - 1);
}

/* XDP: data and data_end from the context, a bounds check (sometimes one byte short or
 * the wrong way round), accesses behind it, sometimes a variable offset checked again */
static void gen_packet(struct gen *g)
{
	uint8_t sz = sizes[pick(4)];
	int32_t n = 1 + (int32_t)pick(40), at, off;
	uint8_t op = pick(8) ? BPF_JGT : (pick(2) ? BPF_JGE : BPF_JLT);

	emit(g, (struct bpf_insn)LDX(BPF_W, 2, 6, 0));
	emit(g, (struct bpf_insn)LDX(BPF_W, 3, 6, 4));
	emit(g, (struct bpf_insn)MOV64_REG(4, 2));
	emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 4, n - (pick(10) ? 0 : 1)));
	at = g->n;
	emit(g, (struct bpf_insn)JREG(op, 4, 3, 0));
	off = pick(4) ? (int32_t)pick((uint32_t)n) : n - (int32_t)pick(4);
	switch (pick(4)) {
	case 0:
		emit(g, (struct bpf_insn)ST(sz, 2, (int16_t)off, small_imm()));
		break;
	case 1: /* variable offset from a packet byte, then a second check */
		emit(g, (struct bpf_insn)LDX(BPF_B, 5, 2, 0));
		emit(g, (struct bpf_insn)ALU64_IMM(BPF_AND, 5, (int32_t)(pick(2) ? 15 : 31)));
		emit(g, (struct bpf_insn)ALU64_REG(BPF_ADD, 2, 5));
		emit(g, (struct bpf_insn)MOV64_REG(4, 2));
		emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 4, (int32_t)(pick(8) + 1)));
		emit(g, (struct bpf_insn)JREG(BPF_JGT, 4, 3, 1));
		emit(g, (struct bpf_insn)LDX(sz, sreg(), 2, (int16_t)pick(8)));
		break;
	default:
		emit(g, (struct bpf_insn)LDX(sz, sreg(), 2, (int16_t)off));
		break;
	}
	g->p[at].off = (int16_t)(g->n - at - 1);
	(void)size_bytes;
}

/* Unprivileged: a lookup whose value pointer is moved by a scalar that differs between
 * two paths (a constant on one, a masked context byte or a register on the other), then
 * accessed: the kernel's per-instruction sanitation limits and the speculative walk of the
 * branch's dead side decide these. */
static void gen_two_paths(struct gen *g)
{
	int m = (int)pick(NMAPS), at, j;
	uint32_t vsize = maps[m].info.value_size;

	emit(g, (struct bpf_insn)ST(BPF_W, 10, -4, (int32_t)pick(6)));
	emit(g, (struct bpf_insn)MOV64_REG(2, 10));
	emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 2, -4));
	emit(g, (struct bpf_insn)I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, m));
	emit(g, (struct bpf_insn)I(0, 0, 0, 0, 0));
	emit(g, (struct bpf_insn)CALL(BPF_FUNC_map_lookup_elem));
	at = g->n;
	emit(g, (struct bpf_insn)JIMM(BPF_JEQ, 0, 0, 0));
	emit(g, (struct bpf_insn)LDX(BPF_B, 7, 6, ctx_off(g)));
	j = g->n;
	emit(g, (struct bpf_insn)JIMM(pick(2) ? BPF_JGT : BPF_JEQ, 7, (int32_t)pick(8), 0));
	emit(g, (struct bpf_insn)MOV64_IMM(8, (int32_t)pick(vsize + 8)));
	emit(g, (struct bpf_insn)JA(pick(3) ? 1 : 2));
	g->p[j].off = (int16_t)(g->n - j - 1);
	emit(g, (struct bpf_insn)ALU64_IMM(BPF_AND, 7, (int32_t)(pick(2) ? 7 : 31)));
	emit(g, (struct bpf_insn)MOV64_REG(8, 7));
	if (pick(4))
		emit(g, (struct bpf_insn)ALU64_REG(BPF_ADD, 0, 8));
	else
		emit(g, (struct bpf_insn)ALU64_REG(BPF_SUB, 0, 8));
	switch (pick(3)) {
	case 0:
		emit(g, (struct bpf_insn)LDX(sizes[pick(4)], 9, 0, (int16_t)pick(8)));
		break;
	case 1:
		emit(g, (struct bpf_insn)ST(sizes[pick(4)], 0, (int16_t)pick(16), 1));
		break;
	default: /* spill and fill the moved pointer first */
		emit(g, (struct bpf_insn)STX(BPF_DW, 10, 0, -16));
		emit(g, (struct bpf_insn)LDX(BPF_DW, 4, 10, -16));
		emit(g, (struct bpf_insn)LDX(sizes[pick(4)], 9, 4, 0));
		break;
	}
	g->p[at].off = (int16_t)(g->n - at - 1);
}

/* after a call r1-r5 are unreadable: give most of them values again */
static void reinit_args(struct gen *g)
{
	for (uint8_t r = 1; r <= 5; r++)
		if (pick(4))
			emit(g, (struct bpf_insn)MOV64_IMM(r, small_imm()));
}

static void gen_body(struct gen *g, int len)
{
	int start = g->n;

	while (g->n - start < len && g->n < MAXP - 40) {
		uint32_t k = pick(24);

		if (k < 8) {
			gen_alu(g);
		} else if (k < 14) {
			gen_mem(g);
		} else if (k < 17) {
			uint8_t op = jmp_ops[pick(sizeof(jmp_ops))];
			uint8_t cls = pick(4) ? BPF_JMP : BPF_JMP32;
			int steps = 1 + (int)pick(3), at = g->n;

			if (pick(2))
				emit(g, (struct bpf_insn)I(cls | op | BPF_K, sreg(), 0, 0, small_imm()));
			else
				emit(g, (struct bpf_insn)I(cls | op | BPF_X, sreg(), sreg(), 0, 0));
			/* the skipped steps: mostly ALU, sometimes a stack access, so that the
			 * two paths' stacks differ (pruning compares them on the live slots,
			 * a caller's too when a call follows) */
			for (int i = 0; i < steps; i++)
				if (pick(4))
					gen_alu(g);
				else
					gen_mem(g);
			g->p[at].off = (int16_t)(g->n - at - 1);
		} else if (k < 18) {
			emit(g, (struct bpf_insn)CALL(BPF_FUNC_ktime_get_ns));
			reinit_args(g);
		} else if (k < 20) {
			gen_lookup(g);
			reinit_args(g);
		} else if (k < 22 && g->xdp) {
			gen_packet(g);
		} else if (g->unpriv) {
			/* no loops or calls without CAP_BPF: more lookups and a map value
			 * pointer moved on two paths (ALU sanitation, speculative paths) */
			if (pick(2))
				gen_lookup(g);
			else
				gen_two_paths(g);
			reinit_args(g);
		} else if (k < 22 && g->sub_at < 0 && pick(2)) {
			/* bpf_loop(n, sub, a stack pointer or NULL, 0) */
			if (pick(2))
				emit(g, (struct bpf_insn)MOV64_IMM(1, (int32_t)pick(6)));
			else
				emit(g, (struct bpf_insn)LDX(BPF_B, 1, 6, ctx_off(g)));
			g->sub_at = g->n;
			g->sub_cb = 1;
			emit(g, (struct bpf_insn)I(BPF_LD | BPF_IMM | BPF_DW, 2, BPF_PSEUDO_FUNC, 0, 0));
			emit(g, (struct bpf_insn)I(0, 0, 0, 0, 0));
			emit(g, (struct bpf_insn)MOV64_REG(3, 10));
			emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 3, -8 * (int32_t)(1 + pick(4))));
			if (!pick(4))
				emit(g, (struct bpf_insn)MOV64_IMM(3, 0));
			emit(g, (struct bpf_insn)MOV64_IMM(4, 0));
			emit(g, (struct bpf_insn)CALL(BPF_FUNC_loop));
			reinit_args(g);
		} else if (k < 22 && g->sub_at < 0) {
			/* bpf-to-bpf call: r1 = a stack pointer or a scalar, r2 a scalar.
			 * Sometimes a diamond first leaves the context pointer in a slot on
			 * one side and a number on the other, and after the call a fill of
			 * the slot is dereferenced: only a prune in the callee that took the
			 * slot for dead could let the number through (caller-frame stack
			 * liveness) */
			int16_t dslot = (int16_t)(-8 * (int)(1 + pick(4)));
			int diamond = !pick(3);

			if (diamond) {
				emit(g, (struct bpf_insn)JIMM(BPF_JNE, sreg(), small_imm(), 2));
				emit(g, (struct bpf_insn)STX(BPF_DW, 10, 6, dslot));
				emit(g, (struct bpf_insn)JA(1));
				emit(g, (struct bpf_insn)ST(BPF_DW, 10, dslot, small_imm()));
			}
			if (pick(2)) {
				emit(g, (struct bpf_insn)MOV64_REG(1, 10));
				emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 1, -8 * (int32_t)(1 + pick(4))));
			}
			g->sub_at = g->n;
			emit(g, (struct bpf_insn)CALL_SUB(0));
			reinit_args(g);
			if (diamond && pick(2)) {
				emit(g, (struct bpf_insn)LDX(BPF_DW, 7, 10, dslot));
				emit(g, (struct bpf_insn)LDX(BPF_W, 7, 7, 0));
			}
		} else {
			/* a bounded loop over r9 */
			int body = 1 + (int)pick(3), top;

			emit(g, (struct bpf_insn)MOV64_IMM(9, 0));
			top = g->n;
			for (int i = 0; i < body; i++) {
				uint8_t d = sreg();

				/* a body that clobbers the counter rarely: such loops run into
				 * the 1,000,000-instruction limit, which costs ~1 s each */
				if (d == 9 && pick(16))
					d = 8;
				gen_alu_reg(g, d, sreg());
			}
			emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 9, 1));
			emit(g, (struct bpf_insn)JIMM(BPF_JLT, 9, (int32_t)(1 + pick(20)),
						       (int16_t)(top - g->n - 1)));
		}
	}
}

/* the callee: works on r0-r5 and its own frame; r1 (a callback's r2) may point into the
 * caller's stack */
static void gen_sub(struct gen *g)
{
	int len = 2 + (int)pick(10);
	uint8_t ptr = g->sub_cb ? 2 : 1;

	g->p[g->sub_at].imm = g->n - g->sub_at - 1;
	for (int i = 0; i < len; i++) {
		uint8_t d = (uint8_t)pick(6), sz = sizes[pick(4)];
		int16_t soff = (int16_t)(-8 * (int)(1 + pick(4)));

		switch (pick(7)) {
		case 0:
			emit(g, (struct bpf_insn)STX(sz, 10, d, soff));
			break;
		case 1:
			emit(g, (struct bpf_insn)LDX(sz, d, 10, soff));
			break;
		case 3: /* a forward branch: its target is a prune point where the caller's
			 * frame is compared on the slots still live (each step emits one insn,
			 * so the target is at most the exit) */
			if (i + 1 < len) {
				static const uint8_t jops[] = { BPF_JEQ, BPF_JNE, BPF_JGT, BPF_JSGT,
								BPF_JSET };
				int skip = 1 + (int)pick((uint32_t)(len - i - 1 < 3 ? len - i - 1 : 3));

				emit(g, (struct bpf_insn)JIMM(jops[pick(sizeof(jops))], d,
							       small_imm(), (int16_t)skip));
			} else {
				gen_alu_reg(g, d, (uint8_t)pick(6));
			}
			break;
		case 2: /* through the caller's pointer */
			if (!pick(4)) { /* a pointer the caller may have left there */
				emit(g, (struct bpf_insn)LDX(BPF_DW, 3, ptr, 0));
				emit(g, (struct bpf_insn)LDX(BPF_W, d, 3, 0));
			} else if (pick(2))
				emit(g, (struct bpf_insn)LDX(sz, d ? d : 3, ptr,
							     (int16_t)(pick(3) * 4)));
			else
				emit(g, (struct bpf_insn)ST(sz, ptr, (int16_t)(pick(3) * 4), 7));
			break;
		default:
			gen_alu_reg(g, d, (uint8_t)pick(6));
			break;
		}
	}
	/* a callee may leave r0 unset when the caller never reads it (the kernel accepts
	 * that), but write tracking counts its exit as a read */
	if (pick(4) || g->capbpf)
		emit(g, (struct bpf_insn)MOV64_IMM(0, (int32_t)pick(3)));
	emit(g, (struct bpf_insn)EXIT());
}

static void gen_prog(struct gen *g)
{
	g->n = 0;
	switch (pick(4)) {
	case 0:
		g->capbpf = 1, g->unpriv = 0;
		break;
	case 1: /* socket filters only */
		g->capbpf = 1, g->unpriv = 1;
		break;
	default:
		g->capbpf = 0, g->unpriv = 0;
		break;
	}
	g->xdp = !g->unpriv && !pick(3);
	g->sub_at = -1;
	g->sub_cb = 0;
	emit(g, (struct bpf_insn)MOV64_REG(6, 1));
	for (uint8_t r = 0; r <= 9; r++) {
		if (r == 6 || !pick(20))
			continue;
		if (pick(2))
			emit(g, (struct bpf_insn)MOV64_IMM(r, small_imm()));
		else
			emit(g, (struct bpf_insn)LDX(BPF_W, r, 6, ctx_off(g)));
	}
	gen_body(g, 4 + (int)pick(40));
	if (pick(4))
		emit(g, (struct bpf_insn)MOV64_IMM(0, (int32_t)pick(g->xdp ? 4 : 2)));
	emit(g, (struct bpf_insn)EXIT());
	if (g->sub_at >= 0)
		gen_sub(g);
}

static void dump(const struct gen *g)
{
	const uint8_t *b = (const uint8_t *)g->p;

	fprintf(stderr, "%s program (%s), %d insns:\n", g->xdp ? "xdp" : "socket filter",
		g->unpriv   ? "unprivileged, write tracking"
		: g->capbpf ? "bpf_capable, write tracking"
			    : "root",
		g->n);
	for (int i = 0; i < g->n * 8; i++)
		fprintf(stderr, "%02x%s", b[i], i % 8 == 7 ? "\n" : " ");
}

/* Whether p holds an ISA v4 form gen_alu_v4() or gen_mem() emit (so the count of such
 * accepted programs shows they are exercised, not only generated). */
static int has_v4(const struct gen *g)
{
	for (int i = 0; i < g->n; i++) {
		uint8_t c = g->p[i].code, cls = BPF_CLASS(c);

		if (cls == BPF_LDX && BPF_MODE(c) == BPF_MEMSX)
			return 1;
		if ((cls == BPF_ALU || cls == BPF_ALU64) && g->p[i].off &&
		    (BPF_OP(c) == BPF_DIV || BPF_OP(c) == BPF_MOD || BPF_OP(c) == BPF_MOV))
			return 1;
		if (c == (BPF_ALU64 | BPF_END | BPF_TO_LE))
			return 1;
	}
	return 0;
}

/* ---- running an accepted program ------------------------------------------------------ */

static brt_helper_fn helpers[256];
static unsigned char *pkt_page; /* below 4 GiB: xdp_md holds 32-bit addresses */

/* Run three times on random inputs; returns 0 or -1 after reporting the fault. */
static int run_prog(struct gen *g, long i, uint64_t seed)
{
	BPFRT_OPTS(bpfrt_vm_opts, vo, .engine = BPFRT_ENGINE_CHECKED, .insn_budget = 10000000);
	struct brt_region regions[2 + NMAPS * 8];
	unsigned char ctx[SKB_CTX];
	struct bpfrt_vm *vm;
	size_t nr = 0;
	char err[256];
	uint64_t r0;
	int ret = 0;

	for (int k = 0; k + 1 < g->n; k++)
		if (g->p[k].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    g->p[k].src_reg == BPF_PSEUDO_FUNC) {
			k++;
		} else if (g->p[k].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			uint64_t a = (uint64_t)(uintptr_t)&maps[g->p[k].imm];

			g->p[k].src_reg = 0;
			g->p[k].imm = (int32_t)(uint32_t)a;
			g->p[k + 1].imm = (int32_t)(uint32_t)(a >> 32);
			k++;
		}
	if (bpfrt_vm_load(g->p, (size_t)g->n, &vo, &vm, err, sizeof(err))) {
		T_FAIL("program %ld: accepted but does not load: %s", i, err);
		return -1;
	}
	for (int m = 0; m < NMAPS; m++)
		for (uint32_t e = 0; e < maps[m].info.max_entries; e++)
			regions[nr++] = (struct brt_region){
				(uint64_t)(uintptr_t)(maps[m].values + (size_t)e * maps[m].stride),
				maps[m].info.value_size, 1 };
	for (int run = 0; run < 3 && !ret; run++) {
		/* bpf_capable programs also run with write tracking: reading a register or a
		 * stack byte never written faults (root may read uninitialised stack) */
		struct brt_run_opts ro = { .r1 = (uint64_t)(uintptr_t)ctx, .regions = regions,
					   .helpers = helpers, .nr_helpers = 256,
					   .track = (uint8_t)g->capbpf };
		size_t n = nr;

		for (size_t k = 0; k < sizeof(ctx); k++)
			ctx[k] = (uint8_t)rnd();
		if (g->xdp) {
			uint32_t len = pick(64), data = (uint32_t)(uintptr_t)(pkt_page + 256);
			uint32_t end = data + len;

			for (uint32_t k = 0; k < len; k++)
				pkt_page[256 + k] = (uint8_t)rnd();
			memcpy(ctx, &data, 4);
			memcpy(ctx + 4, &end, 4);
			memcpy(ctx + 8, &data, 4); /* data_meta: no metadata */
			regions[n++] = (struct brt_region){ (uint64_t)(uintptr_t)ctx, XDP_CTX, 0 };
			regions[n++] = (struct brt_region){ data, len, 1 };
		} else {
			regions[n++] = (struct brt_region){ (uint64_t)(uintptr_t)ctx, SKB_CTX, 1 };
		}
		ro.nr_regions = n;
		helper_fault = 0;
		if (brt_vm_run_opts(vm, &ro, &r0, err, sizeof(err)) || helper_fault) {
			T_FAIL("program %ld (seed %#llx): verified but faults: %s", i,
			       (unsigned long long)seed, helper_fault ? "bad key pointer" : err);
			dump(g);
			ret = -1;
		}
	}
	bpfrt_vm_free(vm);
	return ret;
}

int main(int argc, char **argv)
{
	long programs = argc > 1 ? strtol(argv[1], NULL, 0) : 20000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed;
	long accepted = 0, faults = 0, kinds[2] = { 0, 0 }, callbacks = 0, v4 = 0, unpriv = 0;
	size_t nh;
	const brt_helper_fn *def = brt_helper_default_table(&nh);
	struct gen g;

	maps_init();
	memcpy(helpers, def, (nh < 256 ? nh : 256) * sizeof(*helpers));
	helpers[BPF_FUNC_map_lookup_elem] = lookup;
	pkt_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
			-1, 0);
	if (pkt_page == MAP_FAILED)
		T_SKIP("no memory below 4 GiB for the packet");
	rng_state = seed;
	for (long i = 0; i < programs; i++) {
		static const uint8_t all_static[2]; /* func_info: callbacks are static */
		struct brt_verify_opts o = { .prog_type = BPF_PROG_TYPE_SOCKET_FILTER, .gpl = 1,
					     .map_info = map_info, .func_linkage = all_static,
					     .nfuncs = 2 };

		gen_prog(&g);
		if (g.xdp)
			o.prog_type = BPF_PROG_TYPE_XDP;
		if (g.capbpf)
			o.priv = g.unpriv ? BRT_PRIV_UNPRIV : BRT_PRIV_BPF_CAPABLE;
		struct brt_verify_result res;

		if (brt_verify(g.p, (size_t)g.n, &o, &res)) {
			if (getenv("SOUNDNESS_WHY"))
				printf("reject: %s (processed %u, peak states %u)\n", res.err_msg,
				       res.insn_processed, res.peak_states);
			continue;
		}
		accepted++;
		kinds[g.xdp]++;
		unpriv += g.unpriv;
		callbacks += g.sub_cb;
		v4 += has_v4(&g);
		if (run_prog(&g, i, seed))
			faults++;
	}
	printf("%ld programs, %ld accepted by the verifier (%ld socket filters, %ld xdp, %ld "
	       "unprivileged, %ld with a bpf_loop callback, %ld with sdiv/smod/movsx/bswap/ldsx), "
	       "%ld faulted when run\n",
	       programs, accepted, kinds[0], kinds[1], unpriv, callbacks, v4, faults);
	munmap(pkt_page, 4096);
	for (int m = 0; m < NMAPS; m++)
		free(maps[m].values);
	T_CASE("campaign");
	T_ASSERT(accepted * 25 >= programs); /* the generator must exercise acceptance (~5.7 %) */
	T_ASSERT(v4 * 100 >= accepted); /* and the ISA v4 forms among the accepted */
	T_ASSERT(unpriv * 20 >= accepted); /* and unprivileged programs */
	T_EQ_INT(0, faults);
	return t_done();
}
