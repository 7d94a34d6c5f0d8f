/* print.c - the abstract state in the kernel's log notation: register types
 * ("map_value_or_null"), scalar ranges ("scalar(smin=0,smax=255,var_off=(0x0; 0xff))"),
 * and stack slots ("fp-8=mmmmmmmm"), as print_verifier_state() writes them, and the
 * instructions of the trace ("(bf) r0 = r2"), which the walk and precision backtracking
 * both print.
 */
#include <stdio.h>
#include <string.h>

#include "verifier/internal.h"

static const char *const type_names[BRT_REG_TYPE_COUNT] = {
	[NOT_INIT] = "?",
	[SCALAR_VALUE] = "scalar",
	[PTR_TO_CTX] = "ctx",
	[CONST_PTR_TO_MAP] = "map_ptr",
	[PTR_TO_MAP_VALUE] = "map_value",
	[PTR_TO_MAP_KEY] = "map_key",
	[PTR_TO_STACK] = "fp",
	[PTR_TO_PACKET_META] = "pkt_meta",
	[PTR_TO_PACKET] = "pkt",
	[PTR_TO_PACKET_END] = "pkt_end",
	[PTR_TO_MEM] = "mem",
	[PTR_TO_FUNC] = "func",
	[PTR_TO_SOCKET] = "sock",
	[PTR_TO_SOCK_COMMON] = "sock_common",
	[PTR_TO_FLOW_KEYS] = "flow_keys",
	[PTR_TO_TP_BUFFER] = "tp_buffer",
	[PTR_TO_TCP_SOCK] = "tcp_sock",
	[PTR_TO_BTF_ID] = "ptr_",
	[CONST_PTR_TO_DYNPTR] = "dynptr_ptr",
};

/* "rdonly_" / "ringbuf_" prefix and "_or_null" suffix around the base name, as the
 * kernel's reg_type_str(); the result lives until the next call with the same env. */
const char *brt_reg_type_str(struct brt_env *env, uint32_t type)
{
	char *buf = env->tmp_str;
	const char *base = BASE_TYPE(type) < BRT_REG_TYPE_COUNT ? type_names[BASE_TYPE(type)] : "?";

	snprintf(buf, sizeof(env->tmp_str), "%s%s%s%s%s%s%s%s%s",
		 type & MEM_RDONLY ? "rdonly_" : "", type & MEM_RINGBUF ? "ringbuf_" : "",
		 type & MEM_USER ? "user_" : "", type & MEM_PERCPU ? "percpu_" : "",
		 type & MEM_RCU ? "rcu_" : "", type & PTR_UNTRUSTED ? "untrusted_" : "",
		 type & PTR_TRUSTED ? "trusted_" : "", base,
		 !(type & PTR_MAYBE_NULL)	 ? ""
		 : BASE_TYPE(type) == PTR_TO_BTF_ID ? "or_null_"
						    : "_or_null");
	return buf;
}

/* The kernel prints small numbers in decimal and the rest in hex: 6.18's log.c bounds
 * (UNUM_MAX_DECIMAL U16_MAX, SNUM_MIN/MAX_DECIMAL S16_MIN/MAX). */
#define SNUM_DECIMAL(v) ((v) >= INT16_MIN && (v) <= INT16_MAX)

static void print_snum(struct brt_env *env, int64_t v)
{
	if (SNUM_DECIMAL(v))
		brt_vinfo(env, "%lld", (long long)v);
	else
		brt_vinfo(env, "0x%llx", (unsigned long long)v);
}

static void print_unum(struct brt_env *env, uint64_t v)
{
	if (v <= UINT16_MAX)
		brt_vinfo(env, "%llu", (unsigned long long)v);
	else
		brt_vinfo(env, "0x%llx", (unsigned long long)v);
}

static void print_ranges(struct brt_env *env, const struct brt_reg *reg, const char **sep)
{
	struct {
		const char *name;
		uint64_t val;
		int omit;
	} m[8] = {
		{ "smin", (uint64_t)reg->smin, reg->smin == INT64_MIN },
		{ "smax", (uint64_t)reg->smax, reg->smax == INT64_MAX },
		{ "umin", reg->umin, reg->umin == 0 },
		{ "umax", reg->umax, reg->umax == UINT64_MAX },
		{ "smin32",
		  SNUM_DECIMAL(reg->s32_min) ? (uint64_t)(int64_t)reg->s32_min
							      : (uint32_t)reg->s32_min,
		  reg->s32_min == INT32_MIN },
		{ "smax32",
		  SNUM_DECIMAL(reg->s32_max) ? (uint64_t)(int64_t)reg->s32_max
							      : (uint32_t)reg->s32_max,
		  reg->s32_max == INT32_MAX },
		{ "umin32", reg->u32_min, reg->u32_min == 0 },
		{ "umax32", reg->u32_max, reg->u32_max == UINT32_MAX },
	};

	for (int i = 0; i < 8; i++) {
		int neg1 = m[i].name[0] == 's' && (int64_t)m[i].val < 0;

		if (m[i].omit)
			continue;
		brt_vinfo(env, "%s%s=", *sep, m[i].name);
		*sep = ",";
		for (int j = i + 2; j < 8; j += 2) {
			int neg2 = m[j].name[0] == 's' && (int64_t)m[j].val < 0;

			if (m[j].omit || m[j].val != m[i].val || neg1 != neg2)
				continue;
			m[j].omit = 1;
			brt_vinfo(env, "%s=", m[j].name);
		}
		if (m[i].name[0] == 's')
			print_snum(env, (int64_t)m[i].val);
		else
			print_unum(env, m[i].val);
	}
}

#define VA(...)                                   \
	do {                                      \
		brt_vinfo(env, "%s", sep);        \
		brt_vinfo(env, __VA_ARGS__);      \
		sep = ",";                        \
	} while (0)

static void print_reg(struct brt_env *env, const struct brt_frame *f, const struct brt_reg *reg)
{
	uint32_t t = reg->type, bt = BASE_TYPE(t);
	const char *sep = "";

	if (brt_reg_precise(env, reg))
		brt_vinfo(env, "P");
	if (t == SCALAR_VALUE && brt_tnum_is_const(reg->var_off)) {
		print_snum(env, (int64_t)reg->var_off.value);
		return;
	}
	brt_vinfo(env, "%s", brt_reg_type_str(env, t));
	if (t == PTR_TO_STACK) {
		if (f->frameno != reg->frameno)
			brt_vinfo(env, "[%d]", reg->frameno);
		if (brt_tnum_is_const(reg->var_off)) {
			print_snum(env, (int64_t)reg->var_off.value + reg->off);
			return;
		}
	}
	if (bt == PTR_TO_BTF_ID)
		brt_vinfo(env, "%s", brt_btf_local(t) ? brt_local_type_name(env, reg->map_idx, reg->btf_id)
						     : brt_btf_reg_name(env, reg->btf_id));
	brt_vinfo(env, "(");
	if (reg->id)
		VA("id=%u", reg->id & ~BRT_ADD_CONST);
	if (reg->id & BRT_ADD_CONST)
		brt_vinfo(env, "%+d", reg->off);
	if (reg->ref_obj_id)
		VA("ref_obj_id=%u", reg->ref_obj_id);
	if (t & NON_OWN_REF)
		VA("non_own_ref");
	if (bt == CONST_PTR_TO_MAP || bt == PTR_TO_MAP_VALUE || bt == PTR_TO_MAP_KEY) {
		const struct brt_map_info *m = &env->maps[reg->map_idx].info;

		if (m->map_name[0])
			VA("map=%s", m->map_name);
		VA("ks=%u,vs=%u", m->key_size, m->value_size);
	}
	/* numbers as the kernel's verbose_snum/verbose_unum print them (a negative range, a
	 * packet pointer past a failed check, is an unsigned 64-bit number there) */
	if (t != SCALAR_VALUE && reg->off) {
		VA("off=");
		print_snum(env, reg->off);
	}
	if (bt == PTR_TO_PACKET || bt == PTR_TO_PACKET_META) {
		VA("r=");
		print_unum(env, (uint64_t)(int64_t)reg->range);
	}
	if (bt == PTR_TO_MEM) {
		VA("sz=");
		print_unum(env, reg->mem_size);
		if (brt_slice_buf(reg))
			VA("buf=fp[%d]%d+%u", reg->frameno, reg->range, reg->map_idx);
	}
	if (t == CONST_PTR_TO_DYNPTR)
		VA("type=%s", brt_dynptr_type_str(brt_dynptr_type(reg)));
	if (brt_tnum_is_const(reg->var_off)) {
		if (reg->var_off.value) {
			VA("imm=");
			print_snum(env, (int64_t)reg->var_off.value);
		}
	} else {
		print_ranges(env, reg, &sep);
		if (!brt_tnum_is_unknown(reg->var_off)) {
			char tn[48];

			brt_tnum_strn(tn, sizeof(tn), reg->var_off);
			VA("var_off=%s", tn);
		}
	}
	brt_vinfo(env, ")");
}

static const char slot_char[8] = { [STACK_INVALID] = '?', [STACK_SPILL] = 'r',
				   [STACK_MISC] = 'm', [STACK_ZERO] = '0', [STACK_DYNPTR] = 'd',
				   [STACK_ITER] = 'i', [STACK_IRQ_FLAG] = 'f' };

void brt_print_state(struct brt_env *env, const struct brt_vstate *st, int frameno, int print_all)
{
	const struct brt_frame *f = st->frame[frameno];

	if (f->frameno)
		brt_vinfo(env, " frame%d:", f->frameno);
	/* without print_all, only what the last insn touched (the kernel's scratch marks) */
	for (int i = 0; i < BRT_NREGS; i++) {
		if (f->regs[i].type == NOT_INIT ||
		    (!print_all && !(env->scratched_regs & (1u << i))))
			continue;
		brt_vinfo(env, " R%d=", i);
		print_reg(env, f, &f->regs[i]);
	}
	for (int i = 0; i < f->allocated_stack / 8; i++) {
		const struct brt_stack_slot *s = &f->stack[i];
		char types[9];
		int valid = 0, j;

		for (j = 0; j < 8; j++) {
			valid |= s->type[j] != STACK_INVALID;
			types[j] = slot_char[s->type[j] & 7];
		}
		types[8] = 0;
		if (!valid || (!print_all && !(env->scratched_stack & (1ULL << (i & 63)))))
			continue;
		if (s->type[7] == STACK_DYNPTR && i + 1 < f->allocated_stack / 8) {
			/* one line for both slots, at the first (higher) one; the kernel's
			 * dynptr_id there is the first-slot flag it shares a union with */
			const struct brt_reg *d = &f->stack[++i].spilled;
			const char *sep = "";

			brt_vinfo(env, " fp%d=dynptr_%s(", (-i - 1) * 8,
				  brt_dynptr_type_str(brt_dynptr_type(d)));
			if (d->id) {
				brt_vinfo(env, "id=%u", d->id);
				sep = ",";
			}
			if (d->ref_obj_id) {
				brt_vinfo(env, "%sref_id=%u", sep, d->ref_obj_id);
				sep = ",";
			}
			brt_vinfo(env, "%sdynptr_id=1)", sep);
		} else if (s->type[7] == STACK_ITER) {
			/* the first slot only: the one with the reference */
			const struct brt_reg *it = &s->spilled;

			if (!it->ref_obj_id)
				continue;
			brt_vinfo(env, " fp%d=iter_%s(ref_id=%u,state=%s,depth=%u)", (-i - 1) * 8,
				  brt_iter_type_str(env->kbtf, it->btf_id), it->ref_obj_id,
				  brt_iter_state_str(brt_iter_state(it)), brt_iter_depth(it));
		} else if (s->type[7] == STACK_SPILL) {
			for (j = 0; j < 8 && s->type[j] != STACK_SPILL; j++)
				;
			types[j] = 0;
			brt_vinfo(env, " fp%d=%s", (-i - 1) * 8, types);
			print_reg(env, f, &s->spilled);
		} else {
			brt_vinfo(env, " fp%d=%s", (-i - 1) * 8, types);
		}
	}
	/* every reference, locks included (a lock's id is its value pointer's, 0 for a
	 * direct address): none when the first one's id is 0, then the non-zero ones */
	if (st->nrefs && st->refs[0].id) {
		brt_vinfo(env, " refs=%u", st->refs[0].id);
		for (int i = 1; i < st->nrefs; i++)
			if (st->refs[i].id)
				brt_vinfo(env, ",%u", st->refs[i].id);
	}
	if (f->in_callback_fn)
		brt_vinfo(env, " cb");
	if (f->in_async_cb)
		brt_vinfo(env, " async_cb");
	brt_vinfo(env, "\n");
}

void brt_print_insn(struct brt_env *env, int idx)
{
	const struct bpf_insn *in = &env->insns[idx];
	char buf[128];

	if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_KFUNC_CALL) {
		/* the kernel's disasm_kfunc_name(); id 0 falls back to func_id_str[0] */
		const struct brt_btf *vml = brt_btf_vmlinux();
		const char *name = in->imm && vml && !in->off ? brt_btf_name(vml, (uint32_t)in->imm)
							      : "";

		snprintf(buf, sizeof(buf), "(%02x) call %s#%d", in->code,
			 name[0] ? name : in->imm ? "unknown" : "unspec", in->imm);
	} else if (in->code == (BPF_LD | BPF_IMM | BPF_DW) && !env->allow_ptr_leaks &&
		   (in->src_reg == BPF_PSEUDO_MAP_FD || in->src_reg == BPF_PSEUDO_MAP_VALUE)) {
		/* print_bpf_insn() hides a map's address from a loader without CAP_PERFMON */
		snprintf(buf, sizeof(buf), "(%02x) r%u = 0x0", in->code, in->dst_reg);
	} else if (brt_disasm_insn(in, (size_t)(env->len - idx), BRT_DISASM_KERNEL, buf,
				   sizeof(buf)) < 0 &&
		   brt_disasm_kernel_unchecked(in, (size_t)(env->len - idx), buf, sizeof(buf)) < 0) {
		snprintf(buf, sizeof(buf), "(%02x) ?", in->code);
	}
	brt_vinfo(env, "%s\n", buf);
}
