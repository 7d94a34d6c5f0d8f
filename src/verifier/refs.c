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
void brt_mark_reg_invalid(struct brt_env *env, struct brt_reg *reg)
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
				brt_mark_reg_invalid(env, &f->regs[r]);
		for (int s = 0; s < f->allocated_stack / 8; s++)
			if (brt_is_spilled(&f->stack[s]) && dead(&f->stack[s].spilled, id))
				brt_mark_reg_invalid(env, &f->stack[s].spilled);
	}
}

/* ---- references ------------------------------------------------------------------------- */
static struct brt_ref *new_ref(struct brt_env *env, int insn_idx, uint16_t type)
{
	struct brt_vstate *st = env->cur;
	struct brt_ref *r;

	if (st->nrefs >= BRT_MAX_REFS) {
		brt_verr(env, "too many references\n");
		return NULL;
	}
	r = &st->refs[st->nrefs++];
	memset(r, 0, sizeof(*r));
	r->insn_idx = insn_idx;
	r->type = type;
	return r;
}

int brt_acquire_ref(struct brt_env *env, int insn_idx)
{
	struct brt_ref *r = new_ref(env, insn_idx, BRT_REF_PTR);

	if (!r)
		return -ENOMEM;
	r->id = ++env->id_gen;
	return (int)r->id;
}

/* release_reference_state(): the rest keep their order (locks and irq flags rely on it) */
static void drop_ref(struct brt_vstate *st, int i)
{
	memmove(&st->refs[i], &st->refs[i + 1], sizeof(st->refs[0]) * (size_t)(st->nrefs - i - 1));
	st->nrefs--;
}

int brt_release_ref_state(struct brt_vstate *st, uint32_t id)
{
	for (int i = 0; i < st->nrefs; i++)
		if (st->refs[i].type == BRT_REF_PTR && st->refs[i].id == id) {
			drop_ref(st, i);
			return 0;
		}
	return -EINVAL;
}

int brt_lock_ptr_eq(const struct brt_env *env, uint16_t a, uint16_t b)
{
	const struct brt_map_info *ma, *mb;

	if (a == b)
		return 1;
	if (!a || !b || a == BRT_LOCK_PTR_ALLOC || b == BRT_LOCK_PTR_ALLOC)
		return 0;
	ma = &env->maps[a - 1].info;
	mb = &env->maps[b - 1].info;
	return ma->ptr && ma->ptr == mb->ptr;
}

int brt_acquire_lock_state(struct brt_env *env, int insn_idx, uint16_t type, uint32_t id,
			   uint16_t ptr)
{
	struct brt_ref *r = new_ref(env, insn_idx, type);

	if (!r)
		return -ENOMEM;
	r->id = id;
	r->ptr = ptr;
	env->cur->active_locks++;
	env->cur->active_lock_id = id;
	env->cur->active_lock_ptr = ptr;
	return 0;
}

int brt_release_lock_state(struct brt_env *env, uint16_t type, uint32_t id, uint16_t ptr)
{
	struct brt_vstate *st = env->cur;
	uint32_t prev_id = 0;
	uint16_t prev_ptr = 0;

	for (int i = 0; i < st->nrefs; i++) {
		struct brt_ref *r = &st->refs[i];

		if (r->type == type && r->id == id && brt_lock_ptr_eq(env, r->ptr, ptr)) {
			drop_ref(st, i);
			st->active_locks--;
			/* the lock taken before it is the one to release next */
			st->active_lock_id = prev_id;
			st->active_lock_ptr = prev_ptr;
			return 0;
		}
		if (r->type & BRT_REF_LOCK_MASK) {
			prev_id = r->id;
			prev_ptr = r->ptr;
		}
	}
	return -EINVAL;
}

const struct brt_ref *brt_find_lock_state(const struct brt_env *env, uint16_t types,
					  uint32_t id, uint16_t ptr)
{
	const struct brt_vstate *st = env->cur;

	for (int i = 0; i < st->nrefs; i++)
		if ((st->refs[i].type & types) && st->refs[i].id == id &&
		    brt_lock_ptr_eq(env, st->refs[i].ptr, ptr))
			return &st->refs[i];
	return NULL;
}

int brt_acquire_irq_state(struct brt_env *env, int insn_idx)
{
	struct brt_ref *r = new_ref(env, insn_idx, BRT_REF_IRQ);

	if (!r)
		return -ENOMEM;
	r->id = ++env->id_gen;
	env->cur->active_irq_id = r->id;
	return (int)r->id;
}

int brt_release_irq_state(struct brt_vstate *st, uint32_t id)
{
	uint32_t prev_id = 0;

	if (id != st->active_irq_id)
		return -EACCES;
	for (int i = 0; i < st->nrefs; i++) {
		if (st->refs[i].type != BRT_REF_IRQ)
			continue;
		if (st->refs[i].id == id) {
			drop_ref(st, i);
			st->active_irq_id = prev_id;
			return 0;
		}
		prev_id = st->refs[i].id;
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

/* check_reference_leak(): every pointer reference still held */
static int reference_leak(struct brt_env *env, int exception_exit)
{
	const struct brt_vstate *st = env->cur;
	int leak = 0;

	if (!exception_exit && st->curframe)
		return 0;
	for (int i = 0; i < st->nrefs; i++) {
		if (st->refs[i].type != BRT_REF_PTR)
			continue;
		brt_verr(env, "Unreleased reference id=%u alloc_insn=%d\n", st->refs[i].id,
			 st->refs[i].insn_idx);
		leak = 1;
	}
	return leak ? -EINVAL : 0;
}

int brt_check_resource_leak(struct brt_env *env, int exception_exit, int check_lock,
			    const char *prefix)
{
	const struct brt_vstate *st = env->cur;

	if (check_lock && st->active_locks) {
		brt_verr(env, "%s cannot be used inside bpf_spin_lock-ed region\n", prefix);
		return -EINVAL;
	}
	if (reference_leak(env, exception_exit)) {
		brt_verr(env, "%s would lead to reference leak\n", prefix);
		return -EINVAL;
	}
	if (check_lock && st->active_irq_id) {
		brt_verr(env, "%s cannot be used inside bpf_local_irq_save-ed region\n", prefix);
		return -EINVAL;
	}
	if (check_lock && st->active_rcu) {
		brt_verr(env, "%s cannot be used inside bpf_rcu_read_lock-ed region\n", prefix);
		return -EINVAL;
	}
	if (check_lock && st->active_preempt) {
		brt_verr(env, "%s cannot be used inside bpf_preempt_disable-ed region\n", prefix);
		return -EINVAL;
	}
	return 0;
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
