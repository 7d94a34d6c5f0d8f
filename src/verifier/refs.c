/* refs.c - pointers that stop being valid: references a helper or kfunc acquired (ring
 * buffer records, sockets, dynptrs), which must be released on every path and whose copies
 * die with them, and packet pointers, which die when a helper may move the packet.
 */
#include <errno.h>
#include <string.h>

#include "verifier/internal.h"

/* ---- pointers that die --------------------------------------------------------------- */
/* Pointers into a released object or a changed packet: unusable, or unknown numbers for
 * programs that may leak pointers (the kernel's mark_reg_invalid()). */
static void mark_reg_invalid(struct brt_env *env, struct brt_reg *reg)
{
	if (env->allow_ptr_leaks)
		brt_mark_reg_unknown(env, reg);
	else
		brt_mark_reg_not_init(reg);
}

/* mark_reg_invalid() on every frame's registers and spilled stack slots that dead(reg, id)
 * picks */
static void mark_dead_pointers(struct brt_env *env,
			       int (*dead)(const struct brt_reg *reg, uint32_t id), uint32_t id)
{
	struct brt_vstate *st = env->cur;

	for (int fi = 0; fi <= st->curframe; fi++) {
		struct brt_frame *f = st->frame[fi];

		for (int r = 0; r < BRT_NREGS; r++)
			if (dead(&f->regs[r], id))
				mark_reg_invalid(env, &f->regs[r]);
		for (int s = 0; s < f->allocated_stack / 8; s++)
			if (brt_is_spilled(&f->stack[s]) && dead(&f->stack[s].spilled, id))
				mark_reg_invalid(env, &f->stack[s].spilled);
	}
}

/* ---- references ------------------------------------------------------------------------- */
int brt_acquire_ref(struct brt_env *env, int insn_idx)
{
	struct brt_vstate *st = env->cur;

	if (st->nrefs >= BRT_MAX_REFS) {
		brt_verr(env, "too many references\n");
		return -ENOMEM;
	}
	st->refs[st->nrefs].id = ++env->id_gen;
	st->refs[st->nrefs++].insn_idx = insn_idx;
	return (int)env->id_gen;
}

int brt_release_ref_state(struct brt_vstate *st, uint32_t id)
{
	for (int i = 0; i < st->nrefs; i++)
		if (st->refs[i].id == id) {
			memmove(&st->refs[i], &st->refs[i + 1],
				sizeof(st->refs[0]) * (size_t)(st->nrefs - i - 1));
			st->nrefs--;
			return 0;
		}
	return -EINVAL;
}

static int holds_ref(const struct brt_reg *reg, uint32_t id)
{
	return reg->ref_obj_id == id;
}

/* The kernel's release_reference(): the reference leaves the state (the rest keep their
 * order: brt_release_ref_state()) and every copy of the pointer becomes unusable, as
 * mark_reg_invalid(). */
int brt_release_ref(struct brt_env *env, uint32_t id)
{
	if (brt_release_ref_state(env->cur, id))
		return -EINVAL;
	mark_dead_pointers(env, holds_ref, id);
	return 0;
}

int brt_check_exit_refs(struct brt_env *env)
{
	struct brt_vstate *st = env->cur;

	if (!st->nrefs)
		return 0;
	for (int i = 0; i < st->nrefs; i++)
		brt_verr(env, "Unreleased reference id=%u alloc_insn=%d\n", st->refs[i].id,
			 st->refs[i].insn_idx);
	brt_verr(env, "BPF_EXIT instruction in main prog would lead to reference leak\n");
	return -EINVAL;
}

/* ---- helpers and the packet ------------------------------------------------------------ */
/* Helpers that may move or reallocate the packet (the kernel's
 * bpf_helper_changes_pkt_data()): every packet pointer the program holds is stale after
 * them.  bpf_tail_call is one because the program it runs may call the others. */
int brt_helper_changes_pkt_data(int32_t id)
{
	switch (id) {
	case BPF_FUNC_clone_redirect:
	case BPF_FUNC_l3_csum_replace:
	case BPF_FUNC_l4_csum_replace:
	case BPF_FUNC_lwt_push_encap:
	case BPF_FUNC_lwt_seg6_action:
	case BPF_FUNC_lwt_seg6_adjust_srh:
	case BPF_FUNC_lwt_seg6_store_bytes:
	case BPF_FUNC_msg_pop_data:
	case BPF_FUNC_msg_pull_data:
	case BPF_FUNC_msg_push_data:
	case BPF_FUNC_skb_adjust_room:
	case BPF_FUNC_skb_change_head:
	case BPF_FUNC_skb_change_proto:
	case BPF_FUNC_skb_change_tail:
	case BPF_FUNC_skb_pull_data:
	case BPF_FUNC_skb_store_bytes:
	case BPF_FUNC_skb_vlan_pop:
	case BPF_FUNC_skb_vlan_push:
	case BPF_FUNC_store_hdr_opt:
	case BPF_FUNC_xdp_adjust_head:
	case BPF_FUNC_xdp_adjust_meta:
	case BPF_FUNC_xdp_adjust_tail:
	case BPF_FUNC_tail_call:
		return 1;
	default:
		return 0;
	}
}

/* packet pointers and slices of a packet dynptr (the kernel's reg_is_pkt_pointer_any()
 * and reg_is_dynptr_slice_pkt()) */
static int is_pkt_pointer_any(const struct brt_reg *r, uint32_t unused)
{
	(void)unused;
	return r->type == PTR_TO_PACKET || r->type == PTR_TO_PACKET_META ||
	       r->type == PTR_TO_PACKET_END ||
	       (BASE_TYPE(r->type) == PTR_TO_MEM && (r->type & DYNPTR_TYPE_PKT));
}

/* The kernel's clear_all_pkt_pointers(): packet pointers in every frame's registers and
 * spilled stack slots become unusable, as mark_reg_invalid() */
void brt_clear_all_pkt_pointers(struct brt_env *env)
{
	mark_dead_pointers(env, is_pkt_pointer_any, 0);
}
