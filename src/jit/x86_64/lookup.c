/* lookup.c - bpf_map_lookup_elem calls bound at load to one map (struct brt_jit_lookup):
 * an array's lookup becomes the bounds check and address computation inline, any other
 * map's a direct call of its type's lookup, skipping the generic helper, the run ctx and
 * the "stopped" check.  A call is bound only while the helper table resolves it to the
 * generic helper the binding stands in for, so a host's own map_lookup_elem still wins.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "jit/x86_64/x86.h"

#define B (&st->buf)

static const struct brt_jit_lookup *find(const struct brt_jit_env *env, size_t pc)
{
	size_t lo = 0, hi = env->nlookups;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (env->lookups[mid].insn == pc)
			return &env->lookups[mid];
		if (env->lookups[mid].insn < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* How the binding of call pc is emitted, 0 when it is an ordinary helper call. */
static uint8_t kind_of(const struct jit_state *st, const struct brt_jit_lookup *l)
{
	if (l->kind == BRT_JIT_LOOKUP_ARRAY && l->stride && l->stride <= INT32_MAX &&
	    !(st->env->flags & BRT_JIT_BLIND)) /* blinding: no map constant in the code */
		return BRT_JIT_LOOKUP_ARRAY;
	return l->op ? BRT_JIT_LOOKUP_OP : 0;
}

int brt_jit_bind_lookups(struct jit_state *st, const uint16_t *ops)
{
	const struct brt_jit_env *env = st->env;
	bool any = false;

	if (!env->nlookups)
		return 0;
	st->prog->lookup_kind = calloc(st->n, 1);
	if (!st->prog->lookup_kind) {
		snprintf(st->err, st->errlen, "out of memory for %zu instructions", st->n);
		return -ENOMEM;
	}
	for (size_t pc = 0; pc < st->n; pc++) {
		const struct brt_jit_lookup *l;

		if (ops[pc] != BRT_OP_call_helper || st->insns[pc].imm != BPF_FUNC_map_lookup_elem)
			continue;
		l = find(env, pc);
		if (!l || !env->helper || env->helper(env->helper_arg, BPF_FUNC_map_lookup_elem) !=
					      l->helper)
			continue;
		st->prog->lookup_kind[pc] = kind_of(st, l);
		any |= st->prog->lookup_kind[pc] != 0;
	}
	if (!any) {
		free(st->prog->lookup_kind);
		st->prog->lookup_kind = NULL;
	}
	return 0;
}

bool brt_jit_is_bound(const struct jit_state *st, size_t pc)
{
	return st->prog->lookup_kind && st->prog->lookup_kind[pc];
}

/* The verifier proved r1 is the bound map and r2 points at key_size readable bytes; r1-r5
 * are dead after the call, so only r0 (rax) and the scratch registers change. */
void brt_jit_emit_lookup(struct jit_state *st, size_t pc)
{
	const struct brt_jit_lookup *l = find(st->env, pc);
	size_t j_null, j_done;

	if (st->prog->lookup_kind[pc] == BRT_JIT_LOOKUP_OP) {
		emit_mov_imm64(B, RAX, (uint64_t)(uintptr_t)l->op);
		emit_call_r(B, RAX);
		return;
	}
	/* r0 = *(u32 *)r2; if (r0 >= max_entries) r0 = 0; else r0 = base + r0 * stride */
	emit_load(B, 4, false, RAX, xreg(BPF_REG_2), 0);
	emit_alu_ri(B, ALU_CMP, false, RAX, (int32_t)l->max_entries);
	j_null = emit_jcc8_fwd(B, CC_AE);
	if (!(l->stride & (l->stride - 1)))
		emit_shift_ri(B, SH_SHL, true, RAX, (uint8_t)__builtin_ctz(l->stride));
	else
		emit_imul_rri(B, true, RAX, RAX, (int32_t)l->stride);
	if (is_simm32((int64_t)l->base)) {
		emit_alu_ri(B, ALU_ADD, true, RAX, (int32_t)l->base);
	} else {
		emit_mov_imm64(B, TMP, l->base);
		emit_alu_rr(B, ALU_ADD, true, RAX, TMP);
	}
	j_done = emit_jmp8_fwd(B);
	patch8_here(B, j_null);
	emit_alu_rr(B, ALU_XOR, false, RAX, RAX);
	patch8_here(B, j_done);
}
