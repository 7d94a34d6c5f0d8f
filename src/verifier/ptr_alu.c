/* ptr_alu.c - pointer arithmetic: which operators and which pointer types the kernel
 * allows, how a pointer's fixed and variable offsets move, and the limits on where it may
 * point (sane offsets; without CAP_PERFMON, no offset that could leave its object).
 *
 * Also the speculative paths of programs loaded without CAP_PERFMON (6.18): after
 * pointer arithmetic by an unknown scalar the kernel also walks the next instructions
 * with the pointer unmoved (what a masked offset of 0 gives), and after a branch decided
 * by known values it walks the dead side with the compared registers unknown.  Those
 * states are speculative: an error there that is EPERM, EACCES or EINVAL does not
 * refuse the program; the kernel puts a speculation barrier before the instruction
 * (aux nospec), which also ends later speculative paths there and drops the
 * instruction's ALU mask.  A speculative state never prunes a real one.
 */
#include <errno.h>
#include <stdint.h>

#include "verifier/internal.h"

static int sane_offset(struct brt_env *env, const struct brt_reg *reg, uint32_t type)
{
	int known = brt_tnum_is_const(reg->var_off);
	int64_t val = (int64_t)reg->var_off.value, smin = reg->smin;

	if (known && (val >= BRT_MAX_VAR_OFF || val <= -BRT_MAX_VAR_OFF)) {
		brt_verr(env, "math between %s pointer and %lld is not allowed\n",
			 brt_reg_type_str(env, type), (long long)val);
		return 0;
	}
	if (reg->off >= BRT_MAX_VAR_OFF || reg->off <= -BRT_MAX_VAR_OFF) {
		brt_verr(env, "%s pointer offset %d is not allowed\n", brt_reg_type_str(env, type),
			 reg->off);
		return 0;
	}
	if (smin == INT64_MIN) {
		brt_verr(env, "math between %s pointer and register with unbounded min value is not "
			      "allowed\n",
			 brt_reg_type_str(env, type));
		return 0;
	}
	if (smin >= BRT_MAX_VAR_OFF || smin <= -BRT_MAX_VAR_OFF) {
		brt_verr(env, "value %lld makes %s pointer be out of bounds\n", (long long)smin,
			 brt_reg_type_str(env, type));
		return 0;
	}
	return 1;
}

/* Without CAP_PERFMON a pointer may not be moved where it could leave its object. */
static int check_bounds_unpriv(struct brt_env *env, const struct bpf_insn *insn,
			       struct brt_reg *dst)
{
	int regno = insn->dst_reg;

	if (env->bypass_spec_v1)
		return 0;
	if (BASE_TYPE(dst->type) == PTR_TO_STACK) {
		int64_t off = dst->off + (int64_t)dst->var_off.value;

		if (!brt_tnum_is_const(dst->var_off)) {
			char tn[48];

			brt_tnum_strn(tn, sizeof(tn), dst->var_off);
			/* off: the fixed offset plus var_off's known part, as the kernel's
			 * check_stack_access_for_ptr_arithmetic() prints it */
			brt_verr(env, "R%d variable stack access prohibited for !root, var_off=%s "
				      "off=%d\n",
				 regno, tn, (int)off);
			return -EACCES;
		}
		if (off >= 0 || off < -BRT_MAX_STACK) {
			brt_verr(env, "R%d stack pointer arithmetic goes out of range, prohibited "
				      "for !root; off=%lld\n",
				 regno, (long long)off);
			return -EACCES;
		}
	} else if (BASE_TYPE(dst->type) == PTR_TO_MAP_VALUE) {
		/* a one-byte access at the new offset must be allowed: the kernel's
		 * check_map_access() logs why not before the error */
		if (brt_check_map_value_range(env, regno, dst->off, 1)) {
			brt_verr(env, "R%d pointer arithmetic of map value goes out of range, "
				      "prohibited for !root\n",
				 regno);
			return -EACCES;
		}
	}
	return 0;
}

/* Spectre v1 sanitation (no CAP_PERFMON).  The kernel rewrites pointer += reg (and -=)
 * so that the offset is masked to the room the pointer has in its object; the mask is one
 * limit per instruction, recorded the first time the instruction is reached and compared
 * on every later path.  Only stack and map-value pointers can be masked. */
enum {
	ALU_SANITIZE_SRC = 1u << 0,
	ALU_SANITIZE_DST = 1u << 1,
	ALU_NEG_VALUE = 1u << 2,
	ALU_NON_POINTER = 1u << 3,
	ALU_IMMEDIATE = 1u << 4,
};

enum { REASON_BOUNDS = -1, REASON_TYPE = -2, REASON_PATHS = -3, REASON_LIMIT = -4 };

struct sanitize {
	uint8_t state;
	uint32_t limit;
	int mask_to_left;
};

static int skip_sanitation(const struct brt_env *env, const struct bpf_insn *insn)
{
	return env->bypass_spec_v1 || BPF_SRC(insn->code) == BPF_K ||
	       env->aux[env->insn_idx].nospec;
}

int brt_spec_recoverable(const struct brt_env *env, int err)
{
	return env->cur->speculative && (err == -EPERM || err == -EACCES || err == -EINVAL);
}

int brt_push_speculative(struct brt_env *env, const struct bpf_insn *insn, int insn_idx,
			 int prev_insn_idx)
{
	struct brt_vstate *st;
	struct brt_reg *regs;
	int err = brt_push_stack(env, insn_idx, prev_insn_idx, &st);

	if (err)
		return err;
	st->speculative = 1;
	if (!insn)
		return 0;
	regs = st->frame[st->curframe]->regs;
	brt_mark_reg_unknown(env, &regs[insn->dst_reg]);
	if (BPF_SRC(insn->code) == BPF_X)
		brt_mark_reg_unknown(env, &regs[insn->src_reg]);
	return 0;
}

/* how far the pointer may move in the masked direction, or a REASON_* */
static int ptr_limit(const struct brt_env *env, const struct brt_reg *ptr, int to_left,
		     uint32_t *limit)
{
	uint32_t max, lim;

	switch (BASE_TYPE(ptr->type)) {
	case PTR_TO_STACK:
		max = BRT_MAX_STACK + (uint32_t)to_left;
		lim = (uint32_t)-(int64_t)(ptr->var_off.value + (uint64_t)(int64_t)ptr->off);
		break;
	case PTR_TO_MAP_VALUE:
		max = env->maps[ptr->map_idx].info.value_size;
		lim = (uint32_t)((to_left ? (uint64_t)ptr->smin : ptr->umax) +
				 (uint64_t)(int64_t)ptr->off);
		break;
	default:
		return REASON_TYPE;
	}
	if (lim >= max)
		return REASON_LIMIT;
	*limit = lim;
	return 0;
}

static int record_sanitation(struct brt_env *env, uint8_t state, uint32_t limit)
{
	struct brt_insn_aux *aux = &env->aux[env->insn_idx];

	if (aux->alu_state && (aux->alu_state != state || aux->alu_limit != limit))
		return REASON_PATHS;
	aux->alu_state = state;
	aux->alu_limit = limit;
	return 0;
}

/* The register named: 6.18's source picks the offset (mixed bounds) or the pointer
 * (unsupported type) by comparing its off_reg with dst_reg, but the running 6.18.44 names
 * the source for mixed bounds and the destination for the type whichever operand is the
 * pointer (`scalar += ctx` names the scalar, `scalar += map_value` with mixed bounds the
 * map value: hand-written cases of verifier.unpriv_oracle), so bpfrt does that. */
static int sanitize_err(struct brt_env *env, const struct bpf_insn *insn, int reason)
{
	const char *err = "pointer arithmetic with it prohibited for !root";
	const char *op = BPF_OP(insn->code) == BPF_ADD ? "add" : "sub";

	switch (reason) {
	case REASON_BOUNDS:
		brt_verr(env, "R%d has unknown scalar with mixed signed bounds, %s\n",
			 insn->src_reg, err);
		break;
	case REASON_TYPE:
		brt_verr(env, "R%d has pointer with unsupported alu operation, %s\n",
			 insn->dst_reg, err);
		break;
	case REASON_PATHS:
		brt_verr(env, "R%d tried to %s from different maps, paths or scalars, %s\n",
			 insn->dst_reg, op, err);
		break;
	default:
		brt_verr(env, "R%d tried to %s beyond pointer bounds, %s\n", insn->dst_reg, op,
			 err);
		break;
	}
	return -EACCES;
}

/* Before the arithmetic: the offset's sign must be known and the pointer maskable. */
static int sanitize_before(struct brt_env *env, const struct bpf_insn *insn,
			   const struct brt_reg *ptr, const struct brt_reg *off, int ptr_is_dst,
			   struct sanitize *s)
{
	int op = BPF_OP(insn->code), imm = brt_tnum_is_const(off->var_off);
	int neg = off->smin < 0, err;

	if (!imm && (off->smin < 0) != (off->smax < 0))
		return REASON_BOUNDS;
	s->mask_to_left = (op == BPF_ADD && neg) || (op == BPF_SUB && !neg);
	err = ptr_limit(env, ptr, s->mask_to_left, &s->limit);
	if (err)
		return err;
	s->state = (uint8_t)((neg ? ALU_NEG_VALUE : 0) | (imm ? ALU_IMMEDIATE : 0) |
			     (ptr_is_dst ? ALU_SANITIZE_SRC : ALU_SANITIZE_DST));
	return 0;
}

/* After it: the window narrows to the distance actually moved, recorded for the insn. */
static int sanitize_after(struct brt_env *env, const struct brt_reg *dst,
			  const struct sanitize *s)
{
	uint32_t lim;
	int err = ptr_limit(env, dst, s->mask_to_left, &lim);

	if (err)
		return err;
	lim = s->limit - lim;
	if ((int32_t)lim < 0)
		lim = (uint32_t)-(int32_t)lim;
	return record_sanitation(env, s->state, lim);
}

int brt_sanitize_val_alu(struct brt_env *env, const struct bpf_insn *insn)
{
	int op = BPF_OP(insn->code);

	if ((op != BPF_ADD && op != BPF_SUB) || skip_sanitation(env, insn))
		return 0;
	if (record_sanitation(env, ALU_NON_POINTER, 0))
		return sanitize_err(env, insn, REASON_PATHS);
	return 0;
}

int brt_ptr_alu(struct brt_env *env, const struct bpf_insn *insn, const struct brt_reg *ptr,
		const struct brt_reg *offr)
{
	struct brt_reg *regs = brt_cur_regs(env), *dst = &regs[insn->dst_reg];
	int op = BPF_OP(insn->code), regno = insn->dst_reg;
	int known = brt_tnum_is_const(offr->var_off);
	int64_t smin_val = offr->smin, smax_val = offr->smax;
	uint64_t umin_val = offr->umin, umax_val = offr->umax;
	struct brt_reg p = *ptr, o = *offr;
	struct sanitize san = { 0 };
	int sanitize, err;

	/* an offset whose bounds contradict each other (a dead branch's) taints dst */
	if ((known && (smin_val != smax_val || umin_val != umax_val)) || smin_val > smax_val ||
	    umin_val > umax_val) {
		brt_mark_reg_unknown(env, dst);
		return 0;
	}
	if (BPF_CLASS(insn->code) != BPF_ALU64) {
		if (op == BPF_SUB && env->allow_ptr_leaks) {
			brt_mark_reg_unknown(env, dst);
			return 0;
		}
		brt_verr(env, "R%d 32-bit pointer arithmetic prohibited\n", regno);
		return -EACCES;
	}
	if (p.type & PTR_MAYBE_NULL) {
		brt_verr(env, "R%d pointer arithmetic on %s prohibited, null-check it first\n",
			 regno, brt_reg_type_str(env, p.type));
		return -EACCES;
	}
	/* untrusted memory (a kernel pointer loaded through BTF) is read by probe loads, so
	 * the kernel tracks no offset: whatever the operator, dst is the pointer as it was
	 * (`r3 += r1`, `r3 &= r1`; a scalar plus such a pointer becomes the pointer: probed
	 * on 6.18.44) */
	if (BASE_TYPE(p.type) == PTR_TO_MEM && (p.type & PTR_UNTRUSTED)) {
		*dst = p;
		return 0;
	}
	switch (BASE_TYPE(p.type)) {
	case PTR_TO_CTX:
	case PTR_TO_MAP_VALUE:
	case PTR_TO_MAP_KEY:
	case PTR_TO_STACK:
	case PTR_TO_PACKET_META:
	case PTR_TO_PACKET:
	case PTR_TO_MEM:
	case PTR_TO_BTF_ID: /* loads then check the offset against the struct */
	case PTR_TO_FUNC: /* allowed, but a helper refuses a moved one */
	case PTR_TO_TP_BUFFER:
		break;
	case PTR_TO_FLOW_KEYS:
		if (known)
			break;
		__attribute__((fallthrough)); /* flow keys only move by constants */
	case CONST_PTR_TO_MAP:
		if (known && smin_val == 0 && op == BPF_ADD)
			break;
		__attribute__((fallthrough)); /* map pointer moved by other than 0: refused */
	default:
		brt_verr(env, "R%d pointer arithmetic on %s prohibited\n", regno,
			 brt_reg_type_str(env, p.type));
		return -EACCES;
	}
	*dst = p;
	if (!sane_offset(env, &o, p.type) || !sane_offset(env, &p, p.type))
		return -EINVAL;
	sanitize = (op == BPF_ADD || op == BPF_SUB) && !skip_sanitation(env, insn);
	/* a speculative path only simulates: the mask was set by the real ones */
	if (sanitize && !env->cur->speculative) {
		err = sanitize_before(env, insn, &p, &o, ptr == &regs[insn->dst_reg], &san);
		if (err)
			return sanitize_err(env, insn, err);
		if (!known)
			env->explore_alu_limits = 1;
	}
	if (sanitize && !known) {
		/* the offset masked to 0 under misspeculation: the next insns with the pointer
		 * where it was (dst holds it now, for scalar += pointer too) */
		if (ptr == dst) {
			dst->s32_min = S32_MIN;
			dst->s32_max = S32_MAX;
			dst->u32_min = 0;
			dst->u32_max = U32_MAX;
		}
		err = brt_push_speculative(env, NULL, env->insn_idx + 1, env->insn_idx);
		if (err) {
			if (err == -ENOMEM)
				brt_verr(env, "R%d could not be pushed for speculative verification, "
					      "pointer arithmetic with it prohibited for !root\n",
					 regno);
			return err;
		}
	}
	dst->s32_min = S32_MIN;
	dst->s32_max = S32_MAX;
	dst->u32_min = 0;
	dst->u32_max = U32_MAX;
	switch (op) {
	case BPF_ADD:
		if (known && (int64_t)p.off + smin_val == (int64_t)(int32_t)(p.off + smin_val)) {
			dst->off = (int32_t)(p.off + smin_val);
			break;
		}
		if (__builtin_add_overflow(p.smin, smin_val, &dst->smin) ||
		    __builtin_add_overflow(p.smax, smax_val, &dst->smax)) {
			dst->smin = INT64_MIN;
			dst->smax = INT64_MAX;
		}
		if (__builtin_add_overflow(p.umin, umin_val, &dst->umin) ||
		    __builtin_add_overflow(p.umax, umax_val, &dst->umax)) {
			dst->umin = 0;
			dst->umax = UINT64_MAX;
		}
		dst->var_off = brt_tnum_add(p.var_off, o.var_off);
		if (BASE_TYPE(p.type) == PTR_TO_PACKET || BASE_TYPE(p.type) == PTR_TO_PACKET_META) {
			dst->id = ++env->id_gen;
			dst->range = 0;
		}
		break;
	case BPF_SUB:
		if (dst == offr) {
			brt_verr(env, "R%d tried to subtract pointer from scalar\n", regno);
			return -EACCES;
		}
		if (BASE_TYPE(p.type) == PTR_TO_STACK) {
			brt_verr(env, "R%d subtraction from stack pointer prohibited\n", regno);
			return -EACCES;
		}
		if (known && (int64_t)p.off - smin_val == (int64_t)(int32_t)(p.off - smin_val)) {
			dst->off = (int32_t)(p.off - smin_val);
			break;
		}
		if (__builtin_sub_overflow(p.smin, smax_val, &dst->smin) ||
		    __builtin_sub_overflow(p.smax, smin_val, &dst->smax)) {
			dst->smin = INT64_MIN;
			dst->smax = INT64_MAX;
		}
		if (p.umin < umax_val) {
			dst->umin = 0;
			dst->umax = UINT64_MAX;
		} else {
			dst->umin = p.umin - umax_val;
			dst->umax = p.umax - umin_val;
		}
		dst->var_off = brt_tnum_sub(p.var_off, o.var_off);
		if (BASE_TYPE(p.type) == PTR_TO_PACKET || BASE_TYPE(p.type) == PTR_TO_PACKET_META) {
			dst->id = ++env->id_gen;
			if (smin_val < 0)
				dst->range = 0;
		}
		break;
	case BPF_AND:
	case BPF_OR:
	case BPF_XOR:
		brt_verr(env, "R%d bitwise operator %s on pointer prohibited\n", regno,
			 brt_isa_alu_sym((uint8_t)op));
		return -EACCES;
	default:
		brt_verr(env, "R%d pointer arithmetic with %s operator prohibited\n", regno,
			 brt_isa_alu_sym((uint8_t)op));
		return -EACCES;
	}
	if (!sane_offset(env, dst, p.type))
		return -EINVAL;
	brt_reg_bounds_sync(dst);
	err = check_bounds_unpriv(env, insn, dst);
	if (err)
		return err;
	if (sanitize && !env->cur->speculative) {
		err = sanitize_after(env, dst, &san);
		if (err)
			return sanitize_err(env, insn, err);
	}
	return 0;
}
