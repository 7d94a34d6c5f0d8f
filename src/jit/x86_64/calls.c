/* calls.c - everything that crosses a frame: prologues and exits of the main program and
 * of bpf-to-bpf functions, helper calls (System V, run ctx as 6th argument, then the
 * "stopped" check), callx through a C thunk, LD_ABS/LD_IND with their early exit, and the
 * shared stubs that unwind to the caller from any depth.  Frame layout: jit.c's comment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/filter.h>

#include "jit/x86_64/x86.h"

#define B (&st->buf)

/* Push order of callee-saved registers; pops go in reverse. */
static const uint8_t save_order[] = { RBP, RBX, R12, R13, R14, R15 };

static void push_saved(struct jit_state *st, uint16_t saved)
{
	for (size_t i = 0; i < sizeof(save_order); i++)
		if (saved & (1u << save_order[i]))
			emit_push(B, save_order[i]);
}

static void pop_saved(struct jit_state *st, uint16_t saved)
{
	for (size_t i = sizeof(save_order); i-- > 0;)
		if (saved & (1u << save_order[i]))
			emit_pop(B, save_order[i]);
}

/* sub rsp, n / add rsp, n */
static void adjust_rsp(struct jit_state *st, enum x86_alu op, uint32_t n)
{
	if (n)
		emit_alu_ri(B, op, true, RSP, (int32_t)n);
}

static void jump_stub(struct jit_state *st, enum x86_cc cc, enum jit_stub s, bool uncond)
{
	if (uncond)
		emit_jmp_rel(B, false, st->prev_stub[s]);
	else
		emit_jcc_rel(B, cc, false, st->prev_stub[s]);
}

/* may_goto's counter starts at BPF_MAX_LOOPS in each call of a function that has one, as
 * the prologue the kernel's rewrite adds (the slot is below r10's 512 bytes) */
static void loops_setup(struct jit_state *st, const struct jit_func *f)
{
	if (f->loops)
		emit_store_i(B, 8, RBP, BRT_JIT_LOOPS_OFF, (int32_t)BRT_MAX_LOOPS);
}

/* r10's frame: rbp at the top of the function's 512 bytes, when it has them. */
static void frame_setup(struct jit_state *st, const struct jit_func *f)
{
	if (f->stack)
		emit_mov_rr(B, true, RBP, RSP);
	adjust_rsp(st, ALU_SUB, f->frame);
	loops_setup(st, f);
}

/*
 * The three entries of a pkt_regs program, which share its one body and STUB_DONE:
 * brt_jit_call()'s (rdi = r1, rdx = run ctx) reads the packet out of the ctx and falls
 * into brt_jit_pkt_entry()'s (rdi = r1, rsi/rdx = the packet), which runs once with
 * BATCH_POS = 0; brt_jit_batch_entry()'s (rdi = ctx, rsi = packets, rdx = n, rcx = r0s)
 * runs once per packet, setting r1, the packet and the ctx's first word each time.
 * Either way ctx sits in a slot pushed below the saved registers, at [rsp + frame].
 */
static void pkt_regs_prologue(struct jit_state *st, const struct jit_func *f)
{
	size_t j_body, j_some;

	emit_load(B, 8, false, PKT_DATA, RDX, st->env->pkt_data_off);
	emit_load(B, 8, false, PKT_LEN, RDX, st->env->pkt_len_off);
	st->pkt_entry = (uint32_t)B->len;
	push_saved(st, f->saved);
	emit_push(B, RDI);
	emit_alu_rr(B, ALU_XOR, false, BATCH_POS, BATCH_POS);
	frame_setup(st, f);
	j_body = emit_jmp8_fwd(B);

	st->batch_entry = (uint32_t)B->len;
	emit_rr(B, 0x85, true, RDX, RDX); /* no packets: nothing to do */
	j_some = emit_jcc8_fwd(B, CC_NE);
	emit_ret(B);
	patch8_here(B, j_some);
	push_saved(st, f->saved);
	emit_push(B, RDI);
	frame_setup(st, f);
	emit_shift_ri(B, SH_SHL, true, RDX, 4); /* sizeof(struct brt_jit_pkt) */
	emit_mov_rr(B, true, BATCH_END, RSI);
	emit_alu_rr(B, ALU_ADD, true, BATCH_END, RDX);
	emit_mov_rr(B, true, BATCH_POS, RDX);
	emit_grp3(B, 3, true, BATCH_POS); /* neg */
	st->batch_next = (uint32_t)B->len;
	emit_load(B, 8, false, RDI, RSP, (int32_t)f->frame);
	emit_mov_rr(B, true, TMP, BATCH_END);
	emit_alu_rr(B, ALU_ADD, true, TMP, BATCH_POS);
	emit_load(B, 8, false, PKT_DATA, TMP, 0);
	emit_load(B, 4, false, PKT_LEN, TMP, 8);
	emit_load(B, 4, false, RAX, TMP, 12);
	emit_store_r(B, 4, RDI, 0, RAX); /* ctx_word */
	patch8_here(B, j_body);
}

/* A pkt_regs program's exits: STUB_DONE stores r0 and moves to the batch's next packet,
 * or returns r0 (single runs, the batch's end). */
static void pkt_regs_stubs(struct jit_state *st)
{
	const struct jit_func *f = &st->funcs[0];
	size_t j_single;

	st->stub[STUB_ZERO] = (uint32_t)B->len;
	emit_alu_rr(B, ALU_XOR, false, RAX, RAX);
	st->stub[STUB_DONE] = (uint32_t)B->len;
	emit_rr(B, 0x85, true, BATCH_POS, BATCH_POS);
	j_single = emit_jcc8_fwd(B, CC_E);
	emit_store_r(B, 4, BATCH_OUT, 0, RAX);
	emit_alu_ri(B, ALU_ADD, true, BATCH_OUT, 4);
	emit_alu_ri(B, ALU_ADD, true, BATCH_POS, 16);
	emit_jcc_rel(B, CC_NE, false, st->batch_next);
	patch8_here(B, j_single);
	adjust_rsp(st, ALU_ADD, f->frame + 8); /* and the ctx slot */
	pop_saved(st, f->saved);
	emit_ret(B);
}

/* The entry frame's slots, ANCHOR pointing at them; the run ctx comes in ctx_reg. */
static void emit_slots(struct jit_state *st, int ctx_reg)
{
	adjust_rsp(st, ALU_SUB, JIT_SLOTS_SIZE);
	emit_store_r(B, 8, RSP, JIT_SLOT_CTX, ctx_reg);
	emit_mov_rr(B, true, ANCHOR, RSP);
	if (st->uses_callx) {
		emit_mov_imm64(B, TMP, (uint64_t)(uintptr_t)st->prog);
		emit_store_r(B, 8, ANCHOR, JIT_SLOT_PROG, TMP);
	}
}

void brt_jit_emit_prologue(struct jit_state *st, const struct jit_func *f)
{
	bool is_main = f == &st->funcs[0];

	if (is_main && st->pkt_regs) {
		pkt_regs_prologue(st, f);
		return;
	}
	push_saved(st, f->saved);
	if (is_main && st->anchor)
		emit_slots(st, RDX); /* ctx: 3rd argument */
	if (f->stack)
		emit_mov_rr(B, true, RBP, RSP); /* r10: top of this function's 512 bytes */
	adjust_rsp(st, ALU_SUB, f->frame);
	loops_setup(st, f);
}

/* Return rax to whoever called this function. */
void brt_jit_emit_exit(struct jit_state *st)
{
	const struct jit_func *f = &st->funcs[st->cur];

	if (st->pkt_regs) {
		jump_stub(st, 0, STUB_DONE, true);
		return;
	}
	if (st->cur == 0 && st->anchor)
		emit_lea(B, RSP, ANCHOR, JIT_SLOTS_SIZE);
	else if (st->cur != 0 && f->stack)
		emit_mov_rr(B, true, RSP, RBP);
	else
		adjust_rsp(st, ALU_ADD, f->frame);
	pop_saved(st, f->saved);
	emit_ret(B);
}

void brt_jit_emit_call(struct jit_state *st, const void *addr)
{
	if (st->ncalls == st->calls_cap && (st->passes & BRT_JIT_PASS(directcall))) {
		size_t cap = st->calls_cap ? st->calls_cap * 2 : 16;
		uint32_t *c = realloc(st->calls, cap * sizeof(*c));

		if (c) { /* else this call stays indirect */
			st->calls = c;
			st->calls_cap = cap;
		}
	}
	if (st->ncalls < st->calls_cap)
		st->calls[st->ncalls++] = (uint32_t)B->len;
	emit_rex(B, true, 0, RAX, false); /* movabs rax, addr: always 10 bytes */
	emit1(B, 0xb8);
	emit_u64(B, (uint64_t)(uintptr_t)addr);
	emit_call_r(B, RAX);
}

static const bpfrt_helper_fn *leaf_fns;
static size_t leaf_n;

void brt_jit_set_leaf_helpers(const bpfrt_helper_fn *fns, size_t n)
{
	leaf_fns = fns;
	leaf_n = n;
}

static bool is_leaf(const struct jit_state *st, bpfrt_helper_fn fn)
{
	if (!(st->passes & BRT_JIT_PASS(leafcall)))
		return false;
	for (size_t i = 0; i < leaf_n; i++)
		if (leaf_fns[i] == fn)
			return true;
	return false;
}

bool brt_jit_is_leaf_call(const struct jit_state *st, size_t pc, enum brt_op op)
{
	const struct bpf_insn *insn = &st->insns[pc];

	return op == BRT_OP_call_helper && insn->imm >= 0 && insn->imm != BPF_FUNC_tail_call &&
	       st->env->helper && leaf_n &&
	       is_leaf(st, st->env->helper(st->env->helper_arg, (uint32_t)insn->imm));
}

/* After a helper: if it stopped the run (bpfrt_run_stop()), leave with ctx->stop_r0. */
static void check_stopped(struct jit_state *st)
{
	emit_load(B, 8, false, TMP, ANCHOR, JIT_SLOT_CTX);
	emit_cmp_mem_i8(B, TMP, BRT_JIT_CTX_STOPPED_OFF, 0);
	jump_stub(st, CC_NE, STUB_STOPPED, false);
}

/* bpf_tail_call from a bpf-to-bpf function (r9 = ctx): the target must return to this
 * function's caller, so it may not replace the code in place (tail_jump cleared around
 * the call) and runs nested; its result (stopped == BRT_JIT_STOP_TAIL, r0 in stop_r0)
 * is then this function's return value. */
static void tail_call_in_function(struct jit_state *st, const void *helper)
{
	size_t j_none, j_tail;

	emit_store_i(B, 4, R9, BRT_JIT_CTX_TAIL_JUMP_OFF, 0);
	emit_mov_imm64(B, RAX, (uint64_t)(uintptr_t)helper);
	emit_call_r(B, RAX);
	emit_load(B, 8, false, TMP, ANCHOR, JIT_SLOT_CTX);
	emit_store_i(B, 4, TMP, BRT_JIT_CTX_TAIL_JUMP_OFF, 1);
	emit_cmp_mem_i8(B, TMP, BRT_JIT_CTX_STOPPED_OFF, 0);
	j_none = emit_jcc8_fwd(B, CC_E); /* fell through: empty slot, limit reached */
	emit_cmp_mem_i8(B, TMP, BRT_JIT_CTX_STOPPED_OFF, BRT_JIT_STOP_TAIL);
	j_tail = emit_jcc8_fwd(B, CC_E);
	jump_stub(st, 0, STUB_STOPPED, true); /* the target stopped the whole run */
	patch8_here(B, j_tail);
	emit_store_i(B, 8, TMP, BRT_JIT_CTX_STOPPED_OFF, 0);
	emit_load(B, 8, false, RAX, TMP, BRT_JIT_CTX_STOP_R0_OFF);
	brt_jit_emit_exit(st);
	patch8_here(B, j_none);
}

int brt_jit_emit_helper_call(struct jit_state *st, size_t pc)
{
	const struct bpf_insn *insn = &st->insns[pc];
	bpfrt_helper_fn fn = NULL;
	void *addr;

	if (st->env->helper && insn->imm >= 0)
		fn = st->env->helper(st->env->helper_arg, (uint32_t)insn->imm);
	if (!fn) {
		snprintf(st->err, st->errlen, "insn %zu: call to unknown helper %d", pc, insn->imm);
		return -EINVAL;
	}
	memcpy(&addr, &fn, sizeof(addr));
	if (is_leaf(st, fn) && insn->imm != BPF_FUNC_tail_call) {
		brt_jit_emit_call(st, addr);
		return 0;
	}
	emit_load(B, 8, false, R9, ANCHOR, JIT_SLOT_CTX);
	if (insn->imm == BPF_FUNC_tail_call && st->cur != 0) {
		tail_call_in_function(st, addr);
		return 0;
	}
	brt_jit_emit_call(st, addr);
	check_stopped(st);
	if (insn->imm == BPF_FUNC_tail_call) {
		/* the target is JIT code: replace this program with it */
		emit_load(B, 8, false, TMP, ANCHOR, JIT_SLOT_CTX);
		emit_cmp_mem_i8(B, TMP, BRT_JIT_CTX_TAIL_ENTRY_OFF, 0);
		jump_stub(st, CC_NE, STUB_TAIL, false);
	}
	return 0;
}

int brt_jit_emit_callx(struct jit_state *st, size_t pc)
{
	uint64_t (*thunk)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t *) =
		brt_jit_callx_thunk;
	void *addr;

	memcpy(&addr, &thunk, sizeof(addr));
	emit_store_r(B, 8, ANCHOR, JIT_SLOT_CALLX, xreg(st, st->insns[pc].dst_reg));
	emit_mov_rr(B, true, R9, ANCHOR);
	emit_mov_imm64(B, RAX, (uint64_t)(uintptr_t)addr);
	emit_call_r(B, RAX);
	check_stopped(st);
	return 0;
}

/* callx resolves the helper at run time: unknown ids stop the run with r0 = 0, the way a
 * helper calling bpfrt_run_stop() would. */
uint64_t brt_jit_callx_thunk(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			     uint64_t *slots)
{
	const struct brt_jit_prog *p = (const struct brt_jit_prog *)(uintptr_t)slots[JIT_SLOT_PROG / 8];
	uint64_t id = slots[JIT_SLOT_CALLX / 8];
	struct bpfrt_run_ctx *ctx = (struct bpfrt_run_ctx *)(uintptr_t)slots[JIT_SLOT_CTX / 8];
	bpfrt_helper_fn fn = NULL;

	if (p->helper && id <= UINT32_MAX)
		fn = p->helper(p->helper_arg, (uint32_t)id);
	if (!fn) {
		uint64_t stop[2] = { 1, 0 };

		memcpy((char *)ctx + BRT_JIT_CTX_STOPPED_OFF, &stop[0], 8);
		memcpy((char *)ctx + BRT_JIT_CTX_STOP_R0_OFF, &stop[1], 8);
		return 0;
	}
	return fn(r1, r2, r3, r4, r5, ctx);
}

int brt_jit_emit_local_call(struct jit_state *st, size_t pc)
{
	size_t t = pc + 1 + (size_t)(int64_t)st->insns[pc].imm;

	emit_call_rel(B, t <= pc ? st->entry[t] : st->prev_entry[t]);
	return 0;
}

/* r0 from network to host byte order after a zero-extending packet load of size bytes. */
static void to_host_order(struct jit_state *st, unsigned size)
{
	if (size == 2) {
		emit_rol16_8(B, RAX); /* bits 16-63 stay zero from the load's movzx */
	} else if (size == 4) {
		emit_bswap(B, false, RAX);
	}
}

/* LD_IND's offset src + imm into AUX as a packet offset: 32-bit add, sign-extended;
 * negative ones from the SKF_NET_OFF or SKF_LL_OFF bases count from the packet start
 * (both bases are the start here), other negative ones end the program with r0 = 0. */
static void ind_offset(struct jit_state *st, const struct bpf_insn *insn)
{
	size_t j_pos, j_net;

	emit_mov_rr(B, false, AUX, xreg(st, insn->src_reg));
	if (insn->imm)
		emit_alu_ri(B, ALU_ADD, false, AUX, insn->imm);
	emit_movsxd_rr(B, AUX, AUX);
	emit_rr(B, 0x85, true, AUX, AUX);
	j_pos = emit_jcc8_fwd(B, CC_GE);
	emit_alu_ri(B, ALU_CMP, true, AUX, SKF_NET_OFF);
	j_net = emit_jcc8_fwd(B, CC_GE);
	emit_alu_ri(B, ALU_CMP, true, AUX, SKF_LL_OFF);
	jump_stub(st, CC_L, STUB_ZERO, false);
	emit_alu_ri(B, ALU_ADD, true, AUX, SKF_NET_OFF - SKF_LL_OFF);
	patch8_here(B, j_net);
	emit_alu_ri(B, ALU_SUB, true, AUX, SKF_NET_OFF);
	patch8_here(B, j_pos);
}

/* cmp rax, <packet length>: PKT_LEN in pkt_regs programs, else the run ctx's field (the
 * ctx in TMP). */
static void cmp_pkt_len(struct jit_state *st)
{
	if (st->pkt_regs) {
		emit_alu_rr(B, ALU_CMP, true, RAX, PKT_LEN);
		return;
	}
	emit_rex(B, true, RAX, TMP, false);
	emit1(B, 0x3b); /* cmp rax, qword [TMP + len_off] */
	emit_modrm_mem(B, RAX, TMP, st->env->pkt_len_off);
}

/* The register holding the packet's start: PKT_DATA, or TMP loaded from the run ctx. */
static int pkt_base(struct jit_state *st)
{
	if (st->pkt_regs)
		return PKT_DATA;
	emit_load(B, 8, false, TMP, TMP, st->env->pkt_data_off);
	return TMP;
}

/* A negative packet offset (in AUX, or the constant k when !in_aux): rax =
 * env->ld_neg(ctx, offset, size), which knows the run's network and link-layer headers;
 * UINT64_MAX (negative) ends the program with r0 = 0.  r1-r5's registers are kept (the
 * interpreter keeps them; unverified programs may read them) and the call made on an
 * aligned stack, as the budget stub does.  ctx is in TMP. */
static void ld_neg_call(struct jit_state *st, bool in_aux, int64_t k, unsigned size)
{
	static const uint8_t live[] = { RDI, RSI, RDX, RCX, R8 };
	void *fn;

	memcpy(&fn, &st->env->ld_neg, sizeof(fn)); /* code to data pointer, as dlsym */
	for (size_t i = 0; i < sizeof(live); i++)
		emit_push(B, live[i]);
	emit_push(B, RBP);
	emit_mov_rr(B, true, RBP, RSP);
	emit_alu_ri(B, ALU_AND, true, RSP, -16);
	if (in_aux)
		emit_mov_rr(B, true, RSI, AUX);
	else
		emit_mov_imm64(B, RSI, (uint64_t)k);
	emit_mov_rr(B, true, RDI, TMP);
	emit_mov_ri32(B, RDX, size);
	emit_mov_imm64(B, RAX, (uint64_t)(uintptr_t)fn);
	emit_call_r(B, RAX);
	emit_mov_rr(B, true, RSP, RBP);
	emit_pop(B, RBP);
	for (size_t i = sizeof(live); i-- > 0;)
		emit_pop(B, live[i]);
	emit_rr(B, 0x85, true, RAX, RAX);
	jump_stub(st, CC_L, STUB_ZERO, false);
}

/*
 * LD_ABS/LD_IND: r0 = big-endian load of 1/2/4 bytes at packet offset imm (+ src for
 * IND, added in 32 bits and sign-extended, as Linux does); an offset outside the packet
 * ends the program with r0 = 0.  Negative offsets from SKF_NET_OFF or SKF_LL_OFF go to
 * env->ld_neg (the run's headers) when there is one; pkt_regs programs (no run ctx, no
 * negative LD_ABS: brt_jit_pkt_regs_fit) and compiles without it count them from the
 * packet start.  The packet's start and length are in registers (pkt_regs) or fields of
 * the run ctx.
 */
void brt_jit_emit_ld_pkt(struct jit_state *st, const struct bpf_insn *insn, bool ind)
{
	unsigned size = brt_isa_access_size(insn->code);
	bool slow = !st->pkt_regs && st->env->ld_neg;

	if (!st->pkt_regs)
		emit_load(B, 8, false, TMP, ANCHOR, JIT_SLOT_CTX);
	if (ind && slow) {
		size_t j_pos, j_done;

		emit_mov_rr(B, false, AUX, xreg(st, insn->src_reg));
		if (insn->imm)
			emit_alu_ri(B, ALU_ADD, false, AUX, insn->imm);
		emit_movsxd_rr(B, AUX, AUX);
		emit_rr(B, 0x85, true, AUX, AUX);
		j_pos = emit_jcc8_fwd(B, CC_GE);
		ld_neg_call(st, true, 0, size);
		j_done = emit_jmp8_fwd(B);
		patch8_here(B, j_pos);
		emit_lea(B, RAX, AUX, (int32_t)size);
		cmp_pkt_len(st);
		jump_stub(st, CC_A, STUB_ZERO, false);
		emit_alu_rr(B, ALU_ADD, true, AUX, pkt_base(st));
		emit_load(B, size, false, RAX, AUX, 0);
		to_host_order(st, size);
		patch8_here(B, j_done);
		return;
	}
	if (ind) {
		ind_offset(st, insn);
		emit_lea(B, RAX, AUX, (int32_t)size);
		cmp_pkt_len(st);
		jump_stub(st, CC_A, STUB_ZERO, false);
		emit_alu_rr(B, ALU_ADD, true, AUX, pkt_base(st));
		emit_load(B, size, false, RAX, AUX, 0);
	} else {
		int64_t k = insn->imm;

		if (k < 0 && slow) {
			ld_neg_call(st, false, k, size);
			return;
		}
		if (k < 0 && k >= SKF_NET_OFF)
			k -= SKF_NET_OFF;
		else if (k < 0 && k >= SKF_LL_OFF)
			k -= SKF_LL_OFF;
		if (k < 0) {
			jump_stub(st, 0, STUB_ZERO, true);
			return;
		}
		if (st->pkt_regs && k + size <= INT32_MAX) {
			emit_alu_ri(B, ALU_CMP, true, PKT_LEN, (int32_t)(k + size));
			jump_stub(st, CC_B, STUB_ZERO, false);
		} else {
			emit_mov_imm64(B, RAX, (uint64_t)k + size);
			cmp_pkt_len(st);
			jump_stub(st, CC_A, STUB_ZERO, false);
		}
		emit_load(B, size, false, RAX, pkt_base(st), (int32_t)k);
	}
	to_host_order(st, size);
}

/* The shared ways out, placed after the last function. */
void brt_jit_emit_stubs(struct jit_state *st)
{
	if (st->pkt_regs) {
		pkt_regs_stubs(st);
		return;
	}
	if (!st->anchor)
		return;
	st->stub[STUB_STOPPED] = (uint32_t)B->len;
	emit_load(B, 8, false, TMP, ANCHOR, JIT_SLOT_CTX);
	emit_load(B, 8, false, RAX, TMP, BRT_JIT_CTX_STOP_R0_OFF);
	emit2(B, 0xeb, 2); /* jmp over the xor below */
	st->stub[STUB_ZERO] = (uint32_t)B->len;
	emit_alu_rr(B, ALU_XOR, false, RAX, RAX);
	st->stub[STUB_UNWIND] = (uint32_t)B->len;
	emit_lea(B, RSP, ANCHOR, JIT_SLOTS_SIZE);
	pop_saved(st, st->funcs[0].saved);
	emit_ret(B);
	if (!st->uses_tail_call)
		return;
	/* enter the target as brt_jit_call() would: rdi = r1, rsi = 0, rdx = ctx, and the
	 * return address of our own caller on top of the stack */
	st->stub[STUB_TAIL] = (uint32_t)B->len;
	emit_load(B, 8, false, RDX, ANCHOR, JIT_SLOT_CTX);
	emit_load(B, 8, false, RAX, RDX, BRT_JIT_CTX_TAIL_ENTRY_OFF);
	/* consumed: the target's own fall-through tail calls must not see it */
	emit_store_i(B, 8, RDX, BRT_JIT_CTX_TAIL_ENTRY_OFF, 0);
	emit_load(B, 8, false, RDI, RDX, BRT_JIT_CTX_TAIL_R1_OFF);
	emit_alu_rr(B, ALU_XOR, false, RSI, RSI);
	emit_lea(B, RSP, ANCHOR, JIT_SLOTS_SIZE);
	pop_saved(st, st->funcs[0].saved);
	emit2(B, 0xff, 0xe0); /* jmp rax */
}

/* A callback's C entry (at f->cb_entry, which the caller sets): uint64_t entry(r1, r2,
 * r3, r4, r5, ctx), which is also the eBPF helper convention, so the arguments are in
 * place.  It sets up a frame like the main prologue's (same saved registers, slots,
 * ANCHOR), so an early exit from inside the callback unwinds to here and returns to the
 * helper that called it. */
void brt_jit_emit_cb_entry(struct jit_state *st, const struct jit_func *f)
{
	unsigned pushed = (unsigned)__builtin_popcount(st->funcs[0].saved) * 8;

	push_saved(st, st->funcs[0].saved);
	emit_slots(st, R9); /* ctx: 6th argument */
	/* rsp 16-byte aligned at the call, as every function expects */
	adjust_rsp(st, ALU_SUB, (8 + pushed + JIT_SLOTS_SIZE) % 16);
	emit_call_rel(B, st->entry[f->start]);
	emit_lea(B, RSP, ANCHOR, JIT_SLOTS_SIZE);
	pop_saved(st, st->funcs[0].saved);
	emit_ret(B);
}

/* Before a backward jump closing a loop of `charge` instructions: take the charge off
 * the run budget's counter in the run ctx and, when it wraps, call STUB_BUDGET.  Placed
 * before the jump's compare, so flags are free; AUX holds nothing between instructions. */
void brt_jit_emit_budget(struct jit_state *st, uint32_t charge)
{
	size_t j_ok;

	emit_load(B, 8, false, AUX, ANCHOR, JIT_SLOT_CTX);
	emit_rex(B, true, 0, AUX, false); /* sub qword [AUX + budget_left], charge */
	if (is_imm8(charge)) {
		emit1(B, 0x83);
		emit_modrm_mem(B, ALU_SUB, AUX, BRT_JIT_CTX_BUDGET_OFF);
		emit1(B, (uint8_t)charge);
	} else {
		emit1(B, 0x81);
		emit_modrm_mem(B, ALU_SUB, AUX, BRT_JIT_CTX_BUDGET_OFF);
		emit_u32(B, charge);
	}
	j_ok = emit_jcc8_fwd(B, CC_AE); /* no borrow: budget left */
	emit_call_rel(B, st->prev_stub[STUB_BUDGET]);
	patch8_here(B, j_ok);
}

/* The budget's slow path, reached by `call` from any depth with every eBPF register
 * live: save the caller-saved ones (r0-r5), call env->budget_slow(ctx) on an aligned
 * stack, restore, and either return to the loop or leave through STUB_STOPPED (the
 * return address left on the stack goes with the unwind). */
void brt_jit_emit_budget_stub(struct jit_state *st)
{
	static const uint8_t live[] = { RAX, RDI, RSI, RDX, RCX, R8 };
	void *fn;

	if (!st->budget)
		return;
	st->stub[STUB_BUDGET] = (uint32_t)B->len;
	for (size_t i = 0; i < sizeof(live); i++)
		emit_push(B, live[i]);
	emit_push(B, RBP);
	emit_mov_rr(B, true, RBP, RSP);
	emit_alu_ri(B, ALU_AND, true, RSP, -16);
	emit_load(B, 8, false, RDI, ANCHOR, JIT_SLOT_CTX);
	memcpy(&fn, &st->env->budget_slow, sizeof(fn)); /* code to data pointer, as dlsym */
	emit_mov_imm64(B, RAX, (uint64_t)(uintptr_t)fn);
	emit_call_r(B, RAX);
	emit_mov_rr(B, true, RSP, RBP);
	emit_pop(B, RBP);
	emit_rr(B, 0x85, false, RAX, RAX); /* test eax, eax: pops keep the flags */
	for (size_t i = sizeof(live); i-- > 0;)
		emit_pop(B, live[i]);
	jump_stub(st, CC_NE, STUB_STOPPED, false);
	emit_ret(B);
}
