/* calls.c - helper calls.  A helper exists when the helper registry knows it (a row of
 * src/vm/helpers.def, or the host registered it), and the program type may call it (the
 * kernel's per-type helper sets, summarised below); arguments are checked against the
 * prototype, r1-r5 are clobbered and r0 gets the return type.  Acquired references
 * (ringbuf records) must be released on every path.  bpf-to-bpf calls are func_calls.c.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/btf.h>

#include "btf/btf.h"
#include "util/util.h"
#include "verifier/internal.h"

/* ---- prototypes, from the helper registry (vm/helper_proto.h) --------------------------- */
/* Set once when the library is loaded (src/helpers/source.c). */
static _Atomic(const struct brt_helper_source *) helper_source;

void brt_verify_set_helper_source(const struct brt_helper_source *src)
{
	atomic_store_explicit(&helper_source, src, memory_order_release);
}

static const struct brt_helper_proto *find_proto(int32_t id)
{
	const struct brt_helper_source *src =
		atomic_load_explicit(&helper_source, memory_order_acquire);

	return id >= 0 && src ? src->get((uint32_t)id) : NULL;
}

uint16_t brt_helper_arg_regs(int32_t id)
{
	const struct brt_helper_proto *fn = find_proto(id);
	uint16_t regs = 0;

	if (!fn)
		return 0x3e; /* unknown: r1-r5, conservatively */
	for (int i = 0; i < 5; i++)
		if (fn->args[i] != BRT_ARG_DONTCARE)
			regs |= (uint16_t)(1u << (i + 1));
	return regs;
}

const char *brt_verifier_helper_name(int32_t id)
{
	const struct brt_helper_proto *p = find_proto(id);

	if (p && p->host)
		return p->name;
	if (id == 210)
		return "bpf_cgrp_storage_get";
	if (id == 211)
		return "bpf_cgrp_storage_delete";
	return brt_isa_helper_name(id);
}

/* ---- which program types may call which helper (the kernel's *_func_proto) ------------- */
/* Each helper's row in the registry says which helper sets offer it (BRT_FOR_*, given by
 * the folder that implements it); a program type has the set prog_types.def names. */
_Static_assert(BRT_PROG_TYPE_COUNT <= 62, "helper set bits overlap BRT_NEED_*");

/* attach types newer than the 6.1 uapi header */
#define BRT_TRACE_KPROBE_MULTI 43
#define BRT_TRACE_UPROBE_MULTI 49
#define BRT_TRACE_KPROBE_SESSION 57
#define BRT_TRACE_UPROBE_SESSION 58

/* bpf_prog_has_trampoline(): fentry/fexit/fmod_ret (and lsm) */
static int has_trampoline(const struct brt_verify_opts *o)
{
	uint32_t eat = o->expected_attach_type;

	if (o->prog_type == BPF_PROG_TYPE_TRACING)
		return eat == BPF_TRACE_FENTRY || eat == BPF_TRACE_FEXIT ||
		       eat == BPF_MODIFY_RETURN;
	return o->prog_type == BPF_PROG_TYPE_LSM && eat == BPF_LSM_MAC;
}

/* kprobe programs of the multi and session attach types get other variants of
 * bpf_get_func_ip (kprobe_prog_func_proto()): not GPL-only */
static int multi_probe(const struct brt_verify_opts *o)
{
	uint32_t eat = o->expected_attach_type;

	return o->prog_type == BPF_PROG_TYPE_KPROBE &&
	       (eat == BRT_TRACE_KPROBE_MULTI || eat == BRT_TRACE_UPROBE_MULTI ||
		eat == BRT_TRACE_KPROBE_SESSION || eat == BRT_TRACE_UPROBE_SESSION);
}

/* tracing_prog_func_proto()'s bpf_get_socket_cookie: of a kernel socket pointer, not of
 * the context (the kernel's bpf_get_socket_ptr_cookie_proto).  Tracing programs do not run
 * in bpfrt, so the registry's function for the id is never called with such a pointer. */
static const struct brt_helper_proto sock_ptr_cookie = {
	.id = BPF_FUNC_get_socket_cookie,
	.name = "get_socket_cookie",
	.ret = BRT_RET_INTEGER,
	.args = { BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON_OR_NULL },
	.types = BRT_HSET(BPF_PROG_TYPE_TRACING),
};

/* sk_lookup_func_proto()'s bpf_sk_assign (bpf_sk_lookup_assign_proto): a full socket or
 * NULL, where tc's takes any socket pointer */
static const struct brt_helper_proto sk_lookup_assign = {
	.id = BPF_FUNC_sk_assign,
	.name = "sk_assign",
	.ret = BRT_RET_INTEGER,
	.args = { BRT_ARG_PTR_TO_CTX, BRT_ARG_PTR_TO_SOCKET_OR_NULL, BRT_ARG_ANYTHING },
	.types = BRT_HSET(BPF_PROG_TYPE_SK_LOOKUP),
};

static int helper_allowed(struct brt_env *env, const struct brt_helper_proto *fn)
{
	uint64_t bit = BRT_HSET(brt_prog_type(env->opts->prog_type)->helpers);

	/* tracing_prog_func_proto(): iterators only */
	if ((fn->id == BPF_FUNC_seq_write || fn->id == BPF_FUNC_seq_printf ||
	     fn->id == BPF_FUNC_seq_printf_btf) &&
	    env->opts->expected_attach_type != BPF_TRACE_ITER)
		return 0;
	/* tracing_prog_func_proto(): tp_btf and trampoline programs only (not iter) */
	if (fn->id == BPF_FUNC_get_attach_cookie && env->opts->prog_type == BPF_PROG_TYPE_TRACING &&
	    env->opts->expected_attach_type != BPF_TRACE_RAW_TP && !has_trampoline(env->opts))
		return 0;

	/* cgroup_common_func_proto(): not where the hook's return code is the program's own
	 * verdict or not a system call's */
	if ((fn->id == BPF_FUNC_get_retval || fn->id == BPF_FUNC_set_retval) && !fn->host) {
		switch (env->opts->expected_attach_type) {
		case BPF_CGROUP_INET_INGRESS:
		case BPF_CGROUP_INET_EGRESS:
		case BPF_CGROUP_SOCK_OPS:
		case BPF_CGROUP_UDP4_RECVMSG:
		case BPF_CGROUP_UDP6_RECVMSG:
		case BRT_CGROUP_UNIX_RECVMSG:
		case BPF_CGROUP_INET4_GETPEERNAME:
		case BPF_CGROUP_INET6_GETPEERNAME:
		case BRT_CGROUP_UNIX_GETPEERNAME:
		case BPF_CGROUP_INET4_GETSOCKNAME:
		case BPF_CGROUP_INET6_GETSOCKNAME:
		case BRT_CGROUP_UNIX_GETSOCKNAME:
			return 0;
		default:
			break;
		}
	}
	/* cg_sockopt_func_proto(): bpf_sk_getsockopt/setsockopt in setsockopt hooks only */
	if ((fn->id == BPF_FUNC_getsockopt || fn->id == BPF_FUNC_setsockopt) && !fn->host &&
	    env->opts->prog_type == BPF_PROG_TYPE_CGROUP_SOCKOPT &&
	    env->opts->expected_attach_type != BPF_CGROUP_SETSOCKOPT)
		return 0;
	if (!fn->types) /* a host helper: allowed everywhere */
		return 1;
	if (!(fn->types & bit))
		return 0;
	if ((fn->types & BRT_NEED_PERFMON) && !(bit & BRT_FOR_TRACE) && !env->allow_ptr_leaks)
		return 0;
	if ((fn->types & BRT_NEED_BPF) && !env->bpf_capable)
		return 0;
	return 1;
}

int brt_helper_might_sleep(int32_t id)
{
	return id == BPF_FUNC_copy_from_user || id == BPF_FUNC_copy_from_user_task;
}

/* ---- helpers and the packet ------------------------------------------------------------ */
/* Helpers that may be handed a pointer into the packet (the kernel's .pkt_access); the
 * others get "helper access to the packet is not allowed" for one. */
static int helper_pkt_access(int32_t id)
{
	switch (id) {
	case BPF_FUNC_map_lookup_elem:
	case BPF_FUNC_map_update_elem:
	case BPF_FUNC_map_delete_elem:
	case BPF_FUNC_map_push_elem:
	case BPF_FUNC_map_lookup_percpu_elem:
	case BPF_FUNC_csum_diff:
	case BPF_FUNC_sk_lookup_tcp:
	case BPF_FUNC_sk_lookup_udp:
	case BPF_FUNC_skc_lookup_tcp:
	case BPF_FUNC_tcp_check_syncookie:
	case BPF_FUNC_tcp_gen_syncookie:
	case BPF_FUNC_tcp_raw_gen_syncookie_ipv4:
	case BPF_FUNC_tcp_raw_gen_syncookie_ipv6:
	case BPF_FUNC_tcp_raw_check_syncookie_ipv4:
	case BPF_FUNC_tcp_raw_check_syncookie_ipv6:
	case BPF_FUNC_sock_map_update:
	case BPF_FUNC_sock_hash_update:
		return 1;
	default:
		return 0;
	}
}

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
static int is_pkt_pointer_any(const struct brt_reg *r)
{
	return r->type == PTR_TO_PACKET || r->type == PTR_TO_PACKET_META ||
	       r->type == PTR_TO_PACKET_END ||
	       (BASE_TYPE(r->type) == PTR_TO_MEM && (r->type & DYNPTR_TYPE_PKT));
}

/* The kernel's clear_all_pkt_pointers(): packet pointers in every frame's registers and
 * spilled stack slots become unusable (not initialised; unknown scalars for programs
 * allowed to leak pointers, as the kernel's mark_reg_invalid()). */
void brt_clear_all_pkt_pointers(struct brt_env *env)
{
	struct brt_vstate *st = env->cur;

	for (int fi = 0; fi <= st->curframe; fi++) {
		struct brt_frame *f = st->frame[fi];

		for (int r = 0; r < BRT_NREGS; r++)
			if (is_pkt_pointer_any(&f->regs[r])) {
				if (env->allow_ptr_leaks)
					brt_mark_reg_unknown(env, &f->regs[r]);
				else
					brt_mark_reg_not_init(&f->regs[r]);
			}
		for (int s = 0; s < f->allocated_stack / 8; s++)
			if (brt_is_spilled(&f->stack[s]) && is_pkt_pointer_any(&f->stack[s].spilled)) {
				if (env->allow_ptr_leaks)
					brt_mark_reg_unknown(env, &f->stack[s].spilled);
				else
					brt_mark_reg_not_init(&f->stack[s].spilled);
			}
	}
}

/* ---- references ------------------------------------------------------------------------- */
/* Pointers into a released object: unusable, or unknown numbers for programs that may
 * leak pointers (the kernel's mark_reg_invalid()). */
static void mark_reg_invalid(struct brt_env *env, struct brt_reg *reg)
{
	if (env->allow_ptr_leaks)
		brt_mark_reg_unknown(env, reg);
	else
		brt_mark_reg_not_init(reg);
}

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

/* The kernel's release_reference(): the reference leaves the state (the rest keep their
 * order: brt_release_ref_state()) and every copy of the pointer becomes unusable, as
 * mark_reg_invalid(). */
int brt_release_ref(struct brt_env *env, uint32_t id)
{
	struct brt_vstate *st = env->cur;

	if (brt_release_ref_state(st, id))
		return -EINVAL;
	for (int fi = 0; fi <= st->curframe; fi++) {
		struct brt_frame *f = st->frame[fi];

		for (int r = 0; r < BRT_NREGS; r++)
			if (f->regs[r].ref_obj_id == id)
				mark_reg_invalid(env, &f->regs[r]);
		for (int s = 0; s < f->allocated_stack / 8; s++)
			if (brt_is_spilled(&f->stack[s]) && f->stack[s].spilled.ref_obj_id == id)
				mark_reg_invalid(env, &f->stack[s].spilled);
	}
	return 0;
}

/* Helpers whose result is a new reference the program must release (the kernel's
 * is_acquire_function()), and those whose result is the argument's object seen as
 * another type, sharing its reference (is_ptr_cast_function()). */
static int is_acquire_function(int32_t id, const struct brt_map_info *map)
{
	switch (id) {
	case BPF_FUNC_sk_lookup_tcp:
	case BPF_FUNC_sk_lookup_udp:
	case BPF_FUNC_skc_lookup_tcp:
	case BPF_FUNC_ringbuf_reserve:
		return 1;
	case BPF_FUNC_map_lookup_elem:
		return map && (map->type == BPF_MAP_TYPE_SOCKMAP ||
			       map->type == BPF_MAP_TYPE_SOCKHASH);
	default:
		return 0;
	}
}

static int is_ptr_cast_function(int32_t id)
{
	return id == BPF_FUNC_tcp_sock || id == BPF_FUNC_sk_fullsock ||
	       id == BPF_FUNC_skc_to_tcp_sock || id == BPF_FUNC_skc_to_tcp6_sock ||
	       id == BPF_FUNC_skc_to_udp6_sock || id == BPF_FUNC_skc_to_mptcp_sock ||
	       id == BPF_FUNC_skc_to_tcp_timewait_sock || id == BPF_FUNC_skc_to_tcp_request_sock;
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

/* ---- argument checks ------------------------------------------------------------------- */
struct call_meta {
	const struct brt_map_info *map;
	int map_idx;
	int subprogno;      /* ARG_PTR_TO_FUNC: the callback */
	int64_t const_key;
	uint32_t mem_size;
	int release_regno;
	uint32_t ref_obj_id;
	int raw_regno;
	uint64_t msize_max; /* a size argument's largest value (do_refine_retval_range) */
	int dynptr_regno;   /* the dynptr argument, 0 none */
	uint32_t dynptr_id; /* bpf_dynptr_data: its dynptr's id and reference */
	uint32_t dynptr_ref;
	int dynptr_pkt_write; /* bpf_dynptr_write to an skb dynptr: the packet changes */
};

static const char *const mem_types =
	"fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_";

static int reg_type_ok(struct brt_env *env, int regno, int arg)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	uint32_t t = reg->type;
	const char *expected;

	switch (arg) {
	case BRT_ARG_CONST_MAP_PTR:
		if (t == CONST_PTR_TO_MAP)
			return 0;
		expected = "map_ptr";
		break;
	case BRT_ARG_PTR_TO_CTX:
		if (t == PTR_TO_CTX)
			return 0;
		expected = "ctx";
		break;
	case BRT_ARG_PTR_TO_STACK:
		if (t == PTR_TO_STACK)
			return 0;
		expected = "fp";
		break;
	case BRT_ARG_PTR_TO_STACK_OR_NULL:
		if (t == PTR_TO_STACK || brt_reg_is_null(reg))
			return 0;
		expected = "fp";
		break;
	case BRT_ARG_PTR_TO_FUNC:
		if (t == PTR_TO_FUNC)
			return 0;
		expected = "func";
		break;
	case BRT_ARG_PTR_TO_ALLOC_MEM:
		if (t == (PTR_TO_MEM | MEM_RINGBUF))
			return 0;
		expected = "ringbuf_mem";
		break;
	case BRT_ARG_PTR_TO_MEM_OR_NULL:
	case BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL:
		if (brt_reg_is_null(reg))
			return 0;
		goto mem;
	case BRT_ARG_PTR_TO_SOCK_COMMON:
		if (t == PTR_TO_SOCK_COMMON || t == PTR_TO_SOCKET || t == PTR_TO_TCP_SOCK)
			return 0;
		expected = "sock_common, sock, tcp_sock, xdp_sock";
		break;
	case BRT_ARG_PTR_TO_SOCKET_OR_NULL: /* check_reg_type() folds PTR_MAYBE_NULL */
		if (brt_reg_is_null(reg) || (t & ~PTR_MAYBE_NULL) == PTR_TO_SOCKET)
			return 0;
		expected = "sock";
		break;
	case BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON_OR_NULL:
		if (brt_reg_is_null(reg))
			return 0;
		__attribute__((fallthrough)); /* a possibly-NULL pointer of these types too */
	case BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON:
	case BRT_ARG_PTR_TO_SOCK_RELEASE: {
		uint32_t bt = arg == BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON_OR_NULL ? t & ~PTR_MAYBE_NULL : t;

		/* kernel-typed pointers only to a struct starting with sock_common */
		if (bt == PTR_TO_SOCK_COMMON || bt == PTR_TO_SOCKET || bt == PTR_TO_TCP_SOCK)
			return 0;
		if (bt == PTR_TO_BTF_ID || bt == (PTR_TO_BTF_ID | PTR_TRUSTED)) {
			if (brt_btf_is_sock_common(env, reg))
				return 0;
			brt_verr(env, "R%d is of type %s but %s is expected\n", regno,
				 brt_btf_reg_name(env, reg->btf_id), "sock_common");
			return -EACCES;
		}
		expected = "sock_common, sock, tcp_sock, xdp_sock, ptr_, trusted_ptr_";
		break;
	}
	case BRT_ARG_CONST_SIZE:
	case BRT_ARG_CONST_SIZE_OR_ZERO:
	case BRT_ARG_CONST_ALLOC_SIZE_OR_ZERO:
		if (t == SCALAR_VALUE)
			return 0;
		expected = "scalar";
		break;
	case BRT_ARG_PTR_TO_CONST_STR:
		if (t == PTR_TO_MAP_VALUE)
			return 0;
		expected = "map_value";
		break;
	case BRT_ARG_PTR_TO_TIMER:
		if (t == PTR_TO_MAP_VALUE)
			return 0;
		expected = "map_value";
		break;
	case BRT_ARG_PTR_TO_DYNPTR_RDONLY: /* the kernel's dynptr_types */
	case BRT_ARG_PTR_TO_DYNPTR_LOCAL_UNINIT:
	case BRT_ARG_PTR_TO_DYNPTR_RINGBUF_UNINIT:
	case BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE:
		if (t == PTR_TO_STACK || t == CONST_PTR_TO_DYNPTR)
			return 0;
		expected = "fp, dynptr_ptr";
		break;
	case BRT_ARG_PTR_TO_SPIN_LOCK: /* or an allocated object's, which bpfrt has not */
		if (t == PTR_TO_MAP_VALUE)
			return 0;
		expected = "map_value, ptr_";
		break;
	case BRT_ARG_PTR_TO_BTF_ID_TASK_OR_NULL: /* check_reg_type() folds PTR_MAYBE_NULL */
	case BRT_ARG_PTR_TO_BTF_ID_CGROUP_OR_NULL:
		if (brt_reg_is_null(reg))
			return 0;
		t &= ~PTR_MAYBE_NULL;
		__attribute__((fallthrough));
	case BRT_ARG_PTR_TO_BTF_ID_SEQ_FILE:
	case BRT_ARG_PTR_TO_BTF_ID_TASK: /* the kernel's btf_ptr_types */
		if (t == PTR_TO_BTF_ID || t == (PTR_TO_BTF_ID | PTR_TRUSTED) ||
		    t == (PTR_TO_BTF_ID | MEM_RCU))
			return 0;
		expected = "ptr_, trusted_ptr_, rcu_ptr_";
		break;
	default: /* pointers to memory */
	mem:
		/* memory of a packet dynptr's slice is memory (check_reg_type()) */
		if (BASE_TYPE(t) == PTR_TO_MEM)
			t &= ~DYNPTR_TYPE_PKT;
		switch (t) {
		case PTR_TO_STACK:
		case PTR_TO_PACKET:
		case PTR_TO_PACKET_META:
		case PTR_TO_MAP_KEY:
		case PTR_TO_MAP_VALUE:
		case PTR_TO_MEM:
		case PTR_TO_MEM | MEM_RINGBUF:
			return 0;
		case PTR_TO_MEM | MEM_RDONLY:
			if (arg != BRT_ARG_PTR_TO_UNINIT_MEM && arg != BRT_ARG_PTR_TO_MEM_WRITE &&
			    arg != BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL && arg != BRT_ARG_PTR_TO_LONG)
				return 0;
			break;
		default:
			break;
		}
		expected = mem_types;
		break;
	}
	brt_verr(env, "R%d type=%s expected=%s\n", regno, brt_reg_type_str(env, t), expected);
	return -EACCES;
}

static int check_off_ok(struct brt_env *env, int regno, int arg)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];

	/* check_func_arg_reg_off(): what a release function takes must point at the object
	 * itself, whatever the pointer type otherwise allows */
	/* a dynptr to release may sit at any stack offset (the slots are checked later) */
	if (arg == BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE && reg->type == PTR_TO_STACK)
		return 0;
	if (arg == BRT_ARG_PTR_TO_ALLOC_MEM || arg == BRT_ARG_PTR_TO_SOCK_RELEASE ||
	    arg == BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE) {
		if (reg->off) {
			brt_verr(env, "R%d must have zero offset when passed to release func or "
				 "trusted arg to kfunc\n", regno);
			return -EINVAL;
		}
		return brt_check_ptr_off_reg(env, reg, regno);
	}
	return brt_check_arg_reg_off(env, reg, regno);
}

static int64_t const_map_key(struct brt_env *env, const struct brt_reg *key, uint32_t key_size)
{
	struct brt_frame *f = env->cur->frame[key->frameno];
	int64_t stack_off;
	int slot, spi, off, zero = 0, spill = 0;
	const struct brt_stack_slot *s;

	if (!env->bpf_capable || key->type != PTR_TO_STACK || !brt_tnum_is_const(key->var_off))
		return -1;
	stack_off = key->off + (int64_t)key->var_off.value;
	slot = (int)(-stack_off - 1);
	spi = slot / 8;
	off = slot % 8;
	if (slot < 0 || spi >= f->allocated_stack / 8)
		return -1;
	s = &f->stack[spi];
	for (int i = off; i >= 0 && s->type[i] == STACK_ZERO; i--)
		zero++;
	if ((uint32_t)zero >= key_size)
		return 0;
	if (!brt_is_spilled(s) || s->spilled.type != SCALAR_VALUE)
		return -1;
	for (int i = off; i >= 0 && s->type[i] == STACK_SPILL; i--)
		spill++;
	if ((uint32_t)spill != key_size || !brt_tnum_is_const(s->spilled.var_off))
		return -1;
	/* the lookup relies on the spilled constant: keep it precise */
	memset(env->bt_regs, 0, sizeof(env->bt_regs));
	memset(env->bt_stack, 0, sizeof(env->bt_stack));
	env->bt_stack[key->frameno] = 1ULL << spi;
	if (brt_mark_precise_batch(env))
		return -1;
	return (int64_t)s->spilled.var_off.value;
}

/* Two entries of env->maps for the same map (the kernel compares map pointers). */
static int same_map(const struct brt_env *env, int a, int b)
{
	return a == b || (env->maps[a].info.ptr && env->maps[a].info.ptr == env->maps[b].info.ptr);
}

/* The kernel's process_spin_lock(): the argument points at the value's struct
 * bpf_spin_lock; bpf_spin_lock takes it (one at a time), bpf_spin_unlock releases the
 * one taken through the same map value pointer (its id: the NULL check's, kept for
 * values with a lock). */
static int process_spin_lock(struct brt_env *env, int regno, int is_lock)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	const struct brt_map_info *m = &env->maps[reg->map_idx].info;
	struct brt_vstate *st = env->cur;
	int64_t at = (int64_t)reg->var_off.value + reg->off;

	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "R%d doesn't have constant offset. bpf_spin_lock has to be at the "
			      "constant offset\n", regno);
		return -EINVAL;
	}
	if (!m->has_btf) {
		brt_verr(env, "map '%s' has to have BTF in order to use bpf_spin_lock\n",
			 m->map_name);
		return -EINVAL;
	}
	if (!m->spin_lock_off1) {
		brt_verr(env, "map '%s' has no valid bpf_spin_lock\n", m->map_name);
		return -EINVAL;
	}
	if (at != (int64_t)m->spin_lock_off1 - 1) {
		brt_verr(env, "off %lld doesn't point to 'struct bpf_spin_lock' that is at %d\n",
			 (long long)at, (int)m->spin_lock_off1 - 1);
		return -EINVAL;
	}
	if (is_lock) {
		if (st->lock_map) {
			brt_verr(env, "Locking two bpf_spin_locks are not allowed\n");
			return -EINVAL;
		}
		st->lock_map = (uint16_t)(reg->map_idx + 1);
		st->lock_id = reg->id;
		return 0;
	}
	if (!st->lock_map) {
		brt_verr(env, "bpf_spin_unlock without taking a lock\n");
		return -EINVAL;
	}
	if (!same_map(env, st->lock_map - 1, reg->map_idx) || st->lock_id != reg->id) {
		brt_verr(env, "bpf_spin_unlock of different lock\n");
		return -EINVAL;
	}
	st->lock_map = 0;
	st->lock_id = 0;
	return 0;
}

/* process_timer_func() / check_map_field_pointer(): the argument points at the value's
 * struct bpf_timer, at a constant offset; the map is the helper's */
static int process_timer(struct brt_env *env, int regno, struct call_meta *meta)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	const struct brt_map_info *m = &env->maps[reg->map_idx].info;
	int64_t at = (int64_t)reg->var_off.value + reg->off;

	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "R%d doesn't have constant offset. bpf_timer has to be at the "
			      "constant offset\n", regno);
		return -EINVAL;
	}
	if (!m->has_btf) {
		brt_verr(env, "map '%s' has to have BTF in order to use bpf_timer\n", m->map_name);
		return -EINVAL;
	}
	if (!m->timer_off1) {
		brt_verr(env, "map '%s' has no valid bpf_timer\n", m->map_name);
		return -EINVAL;
	}
	if (at != (int64_t)m->timer_off1 - 1) {
		brt_verr(env, "off %lld doesn't point to 'struct bpf_timer' that is at %d\n",
			 (long long)at, (int)m->timer_off1 - 1);
		return -EINVAL;
	}
	meta->map = m;
	meta->map_idx = reg->map_idx;
	return 0;
}

/* check_reg_const_str(): a string at a constant place of a frozen read-only array of one
 * element (the only map whose values the verifier reads), NUL-terminated inside it. */
static int check_const_str(struct brt_env *env, int regno)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	const struct brt_map_info *m = &env->maps[reg->map_idx].info;
	int64_t off;
	int err;

	if (!m->frozen_rdonly) {
		brt_verr(env, "R%d does not point to a readonly map'\n", regno);
		return -EACCES;
	}
	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "R%d is not a constant address'\n", regno);
		return -EACCES;
	}
	if (m->type != BPF_MAP_TYPE_ARRAY) {
		brt_verr(env, "no direct value access support for this map type\n");
		return -EACCES;
	}
	err = brt_check_helper_mem(env, regno, (int)m->value_size - reg->off, 0, BRT_READ, 0);
	if (err)
		return err;
	off = reg->off + (int64_t)reg->var_off.value;
	/* array_map_direct_value_addr(): one element, an offset inside it */
	if (m->max_entries != 1 || off < 0 || off >= m->value_size || !m->rodata) {
		brt_verr(env, "direct value access on string failed\n");
		return m->max_entries != 1 ? -524 : -EINVAL;
	}
	if (!memchr((const char *)m->rodata + off, 0, m->value_size - (size_t)off)) {
		brt_verr(env, "string is not zero-terminated\n");
		return -EINVAL;
	}
	return 0;
}

/* check_bpf_snprintf_call(): the constant format (in a frozen map, check_const_str) is
 * checked as bpf_bprintf_prepare() checks it at run time, for as many arguments as
 * data_len's known bits give; data_len not a multiple of 8 is refused without a word */
static int check_snprintf_call(struct brt_env *env)
{
	const struct brt_reg *fmt = &brt_cur_regs(env)[BPF_REG_3];
	const struct brt_reg *len = &brt_cur_regs(env)[BPF_REG_5];
	const struct brt_map_info *m = &env->maps[fmt->map_idx].info;
	int64_t off = fmt->off + (int64_t)fmt->var_off.value;

	if (len->var_off.value % 8)
		return -EINVAL;
	if (brt_bprintf_check((const char *)m->rodata + off, m->value_size - (size_t)off,
			      (uint32_t)(len->var_off.value / 8))) {
		brt_verr(env, "Invalid format string\n");
		return -EINVAL;
	}
	return 0;
}

static int check_size_arg(struct brt_env *env, int regno, int zero_ok, int prev_arg)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	enum brt_access t = prev_arg == BRT_ARG_PTR_TO_UNINIT_MEM ||
				    prev_arg == BRT_ARG_PTR_TO_MEM_WRITE ||
				    prev_arg == BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL
			    ? BRT_WRITE
			    : BRT_READ;
	/* the kernel's raw mode (uninitialised memory a helper fills, its bytes marked
	 * written) needs a constant size; any other write clobbers what the stack held */
	int raw = t != BRT_WRITE ? BRT_STACK_READ
		  : prev_arg == BRT_ARG_PTR_TO_UNINIT_MEM && brt_tnum_is_const(reg->var_off)
		  ? BRT_STACK_RAW : BRT_STACK_CLOBBER;
	int err;

	if (reg->smin < 0) {
		brt_verr(env, "R%d min value is negative, either use unsigned or 'var &= const'\n",
			 regno);
		return -EACCES;
	}
	if (reg->umin == 0 && !zero_ok) {
		brt_verr(env, "R%d invalid zero-sized read: u64=[%lld,%lld]\n", regno,
			 (long long)reg->umin, (long long)reg->umax);
		return -EACCES;
	}
	if (reg->umax >= BRT_MAX_VAR_OFF) {
		brt_verr(env, "R%d unbounded memory access, use 'var &= const' or 'if (var < const)'\n",
			 regno);
		return -EACCES;
	}
	err = brt_check_helper_mem(env, regno - 1, (int)reg->umax, zero_ok, t, raw);
	return err ? err : brt_mark_precise(env, regno);
}

static int check_arg(struct brt_env *env, int i, const struct brt_helper_proto *fn,
		     struct call_meta *meta)
{
	int regno = BPF_REG_1 + i, arg = fn->args[i], err;
	struct brt_reg *reg = &brt_cur_regs(env)[regno];

	if (arg == BRT_ARG_DONTCARE)
		return 0;
	err = brt_check_reg_arg(env, regno, SRC_OP);
	if (err)
		return err;
	if (arg == BRT_ARG_ANYTHING) {
		if (brt_is_pointer_value(env, regno)) {
			brt_verr(env, "R%d leaks addr into helper function\n", regno);
			return -EACCES;
		}
		return 0;
	}
	if ((reg->type == PTR_TO_PACKET || reg->type == PTR_TO_PACKET_META) &&
	    (!brt_may_access_pkt(env, BRT_READ) ||
	     (!fn->host && !helper_pkt_access((int32_t)fn->id)))) {
		brt_verr(env, "helper access to the packet is not allowed\n");
		return -EACCES;
	}
	/* tracing's and sk_reuseport's bpf_get_socket_cookie take a socket pointer, possibly
	 * NULL, where the other types pass their context (bpf_get_socket_ptr_cookie_proto) */
	if (fn->id == BPF_FUNC_get_socket_cookie && !fn->host &&
	    (env->opts->prog_type == BPF_PROG_TYPE_TRACING ||
	     env->opts->prog_type == BPF_PROG_TYPE_SK_REUSEPORT))
		arg = BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON_OR_NULL;
	/* cgroup_sockopt's bpf_getsockopt/setsockopt take a socket (bpf_sk_getsockopt_proto),
	 * where sock_addr and sock_ops pass their context */
	if ((fn->id == BPF_FUNC_getsockopt || fn->id == BPF_FUNC_setsockopt) && !fn->host &&
	    i == 0 && env->opts->prog_type == BPF_PROG_TYPE_CGROUP_SOCKOPT)
		arg = BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON;
	/* cgroup_sock's bpf_sk_storage_get takes its context, a socket
	 * (bpf_sk_storage_get_cg_sock_proto) */
	if (fn->id == BPF_FUNC_sk_storage_get && !fn->host && i == 1 &&
	    env->opts->prog_type == BPF_PROG_TYPE_CGROUP_SOCK)
		arg = BRT_ARG_PTR_TO_CTX;
	if (arg == BRT_ARG_PTR_TO_MAP_VALUE_OR_NULL) {
		if (brt_reg_is_null(reg))
			return 0;
		arg = BRT_ARG_PTR_TO_MAP_VALUE;
	}
	/* resolve_map_arg_type(): a sockmap's value is a socket */
	if (arg == BRT_ARG_PTR_TO_MAP_VALUE && meta->map &&
	    (meta->map->type == BPF_MAP_TYPE_SOCKMAP || meta->map->type == BPF_MAP_TYPE_SOCKHASH)) {
		if (fn->id == BPF_FUNC_map_pop_elem || fn->id == BPF_FUNC_map_peek_elem) {
			brt_verr(env, "invalid arg_type for sockmap/sockhash\n");
			return -EINVAL;
		}
		arg = BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON;
	}
	err = reg_type_ok(env, regno, arg);
	if (!err && arg == BRT_ARG_PTR_TO_BTF_ID_TASK_OR_NULL && !brt_reg_is_null(reg))
		arg = BRT_ARG_PTR_TO_BTF_ID_TASK;
	if (!err && arg == BRT_ARG_PTR_TO_BTF_ID_TASK) {
		/* btf_struct_ids_match(): a task_struct itself (bpfrt does not look for one
		 * nested at a fixed offset, which the kernel would also take) */
		uint32_t task = brt_btf_task_id(env);

		if (!task || reg->btf_id != task || reg->off) {
			brt_verr(env, "R%d is of type %s but task_struct is expected\n", regno,
				 brt_btf_reg_name(env, reg->btf_id));
			return -EACCES;
		}
	} else if (!err && arg == BRT_ARG_PTR_TO_BTF_ID_CGROUP_OR_NULL && !brt_reg_is_null(reg)) {
		if (reg->off || strcmp(brt_btf_reg_name(env, reg->btf_id), "cgroup")) {
			brt_verr(env, "R%d is of type %s but cgroup is expected\n", regno,
				 brt_btf_reg_name(env, reg->btf_id));
			return -EACCES;
		}
	} else if (!err && arg == BRT_ARG_PTR_TO_BTF_ID_SEQ_FILE) {
		if (reg->off || strcmp(brt_btf_reg_name(env, reg->btf_id), "seq_file")) {
			brt_verr(env, "R%d is of type %s but seq_file is expected\n", regno,
				 brt_btf_reg_name(env, reg->btf_id));
			return -EACCES;
		}
	} else if (!err) {
		err = check_off_ok(env, regno, arg);
	}
	if (err)
		return err;
	if (arg == BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE) {
		/* only a dynptr on the stack can be released, one holding a reference */
		if (reg->type == PTR_TO_STACK) {
			int spi = brt_dynptr_get_spi(env, reg);

			if (spi < 0 || !env->cur->frame[reg->frameno]->stack[spi].spilled.ref_obj_id) {
				brt_verr(env, "arg %d is an unacquired reference\n", regno);
				return -EINVAL;
			}
		} else {
			brt_verr(env, "cannot release unowned const bpf_dynptr\n");
			return -EINVAL;
		}
		meta->release_regno = regno;
	} else if (arg == BRT_ARG_PTR_TO_ALLOC_MEM || arg == BRT_ARG_PTR_TO_SOCK_RELEASE) {
		if (!reg->ref_obj_id) {
			brt_verr(env, "R%d must be referenced when passed to release function\n",
				 regno);
			return -EINVAL;
		}
		meta->release_regno = regno;
	}
	if (reg->ref_obj_id) {
		if (meta->ref_obj_id) {
			brt_verr(env, "more than one arg with ref_obj_id R%d %u %u", regno,
				 reg->ref_obj_id, meta->ref_obj_id);
			return -EACCES;
		}
		meta->ref_obj_id = reg->ref_obj_id;
	}
	if (arg == BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON)
		return 0;
	switch (arg) {
	case BRT_ARG_PTR_TO_SPIN_LOCK:
		return process_spin_lock(env, regno, fn->id == BPF_FUNC_spin_lock);
	case BRT_ARG_PTR_TO_FUNC:
		meta->subprogno = reg->map_idx;
		return 0;
	case BRT_ARG_CONST_MAP_PTR:
		/* bpf_timer_init: the map the timer's value is in */
		if (meta->map && !same_map(env, meta->map_idx, reg->map_idx)) {
			brt_verr(env, "timer pointer in R1 map_uid=0 doesn't match map pointer in R2 "
				      "map_uid=0\n");
			return -EINVAL;
		}
		meta->map = &env->maps[reg->map_idx].info;
		meta->map_idx = reg->map_idx;
		return 0;
	case BRT_ARG_PTR_TO_TIMER:
		return process_timer(env, regno, meta);
	case BRT_ARG_PTR_TO_MAP_KEY:
		if (!meta->map) {
			brt_verr(env, "invalid map_ptr to access map->key\n");
			return -EACCES;
		}
		err = brt_check_helper_mem(env, regno, (int)meta->map->key_size, 0, BRT_READ, 0);
		if (!err && (meta->map->type == BPF_MAP_TYPE_ARRAY ||
			     meta->map->type == BPF_MAP_TYPE_PERCPU_ARRAY))
			meta->const_key = const_map_key(env, reg, meta->map->key_size);
		return err;
	case BRT_ARG_PTR_TO_MAP_VALUE:
		if (!meta->map) {
			brt_verr(env, "invalid map_ptr to access map->value\n");
			return -EACCES;
		}
		/* pop and peek fill the value (the kernel's MEM_UNINIT | MEM_WRITE), but a
		 * bloom filter's peek reads it (resolve_map_arg_type()) */
		return brt_check_helper_mem(
			env, regno, (int)meta->map->value_size, 0,
			fn->id == BPF_FUNC_map_pop_elem ||
					(fn->id == BPF_FUNC_map_peek_elem &&
					 meta->map->type != BPF_MAP_TYPE_BLOOM_FILTER)
				? BRT_WRITE
				: BRT_READ,
			0);
	case BRT_ARG_PTR_TO_MEM_IPHDR: /* ARG_PTR_TO_FIXED_SIZE_MEM: the header's size */
	case BRT_ARG_PTR_TO_MEM_TCPHDR:
		return brt_check_helper_mem(env, regno, 20, 0, BRT_READ, 0);
	case BRT_ARG_PTR_TO_MEM_IPV6HDR:
		return brt_check_helper_mem(env, regno, 40, 0, BRT_READ, 0);
	case BRT_ARG_PTR_TO_LONG: /* written whole, uninitialised stack allowed, aligned */
		err = brt_check_helper_mem(env, regno, 8, 0, BRT_WRITE, BRT_STACK_RAW);
		return err ? err : brt_check_ptr_alignment(env, reg, 0, 8, 1);
	case BRT_ARG_PTR_TO_CONST_STR:
		return check_const_str(env, regno);
	case BRT_ARG_PTR_TO_DYNPTR_RDONLY:
		meta->dynptr_regno = regno;
		return brt_process_dynptr(env, regno, env->insn_idx, BRT_DYNPTR_ARG_RDONLY,
					  BRT_DYNPTR_INVALID, 0);
	case BRT_ARG_PTR_TO_DYNPTR_LOCAL_UNINIT:
	case BRT_ARG_PTR_TO_DYNPTR_RINGBUF_UNINIT:
		return brt_process_dynptr(env, regno, env->insn_idx, BRT_DYNPTR_ARG_UNINIT,
					  arg == BRT_ARG_PTR_TO_DYNPTR_LOCAL_UNINIT ? BRT_DYNPTR_LOCAL
										  : BRT_DYNPTR_RINGBUF,
					  0);
	case BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE:
		meta->dynptr_regno = regno;
		return brt_process_dynptr(env, regno, env->insn_idx, 0, BRT_DYNPTR_RINGBUF, 0);
	case BRT_ARG_CONST_SIZE:
	case BRT_ARG_CONST_SIZE_OR_ZERO:
		meta->msize_max = reg->umax;
		return check_size_arg(env, regno, arg == BRT_ARG_CONST_SIZE_OR_ZERO,
				      i ? fn->args[i - 1] : 0);
	case BRT_ARG_CONST_ALLOC_SIZE_OR_ZERO:
		if (!brt_tnum_is_const(reg->var_off)) {
			brt_verr(env, "R%d is not a known constant'\n", regno);
			return -EACCES;
		}
		meta->mem_size = (uint32_t)reg->var_off.value;
		return brt_mark_precise(env, regno);
	default:
		return 0;
	}
}

/* map_update_elem/map_delete_elem on a sockmap or sockhash: only where no locked socket
 * can be at hand (the kernel's may_update_sockmap()) */
static int may_update_sockmap(struct brt_env *env, int32_t id)
{
	if (id != BPF_FUNC_map_update_elem && id != BPF_FUNC_map_delete_elem)
		return 0;
	switch (env->opts->prog_type) {
	case BPF_PROG_TYPE_TRACING:
		if (env->opts->expected_attach_type == BPF_TRACE_ITER)
			return 1;
		break;
	case BPF_PROG_TYPE_SOCK_OPS:
		if (id == BPF_FUNC_map_delete_elem)
			return 1;
		break;
	case BPF_PROG_TYPE_SOCKET_FILTER:
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_XDP:
	case BPF_PROG_TYPE_SK_REUSEPORT:
	case BPF_PROG_TYPE_FLOW_DISSECTOR:
	case BPF_PROG_TYPE_SK_LOOKUP:
		return 1;
	default:
		break;
	}
	brt_verr(env, "cannot update sockmap in this context\n");
	return 0;
}

static int map_func_compat(struct brt_env *env, const struct call_meta *meta, int32_t id)
{
	uint32_t mt;
	int ok = 1;

	if (!meta->map)
		return 0;
	mt = meta->map->type;
	switch (mt) {
	case BPF_MAP_TYPE_PROG_ARRAY:
		ok = id == BPF_FUNC_tail_call;
		break;
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
		ok = id == BPF_FUNC_perf_event_read || id == BPF_FUNC_perf_event_output ||
		     id == BPF_FUNC_skb_output || id == BPF_FUNC_perf_event_read_value ||
		     id == BPF_FUNC_xdp_output;
		break;
	case BPF_MAP_TYPE_RINGBUF:
		ok = id == BPF_FUNC_ringbuf_output || id == BPF_FUNC_ringbuf_reserve ||
		     id == BPF_FUNC_ringbuf_query || id == BPF_FUNC_ringbuf_reserve_dynptr ||
		     id == BPF_FUNC_ringbuf_submit_dynptr || id == BPF_FUNC_ringbuf_discard_dynptr;
		break;
	case BPF_MAP_TYPE_USER_RINGBUF:
		ok = id == BPF_FUNC_user_ringbuf_drain;
		break;
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
		ok = id == BPF_FUNC_map_lookup_elem;
		break;
	case BPF_MAP_TYPE_QUEUE:
	case BPF_MAP_TYPE_STACK:
		ok = id == BPF_FUNC_map_peek_elem || id == BPF_FUNC_map_pop_elem ||
		     id == BPF_FUNC_map_push_elem;
		break;
	case BPF_MAP_TYPE_STACK_TRACE:
		ok = id == BPF_FUNC_get_stackid;
		break;
	case BPF_MAP_TYPE_CGROUP_ARRAY:
		ok = id == BPF_FUNC_skb_under_cgroup || id == BPF_FUNC_current_task_under_cgroup;
		break;
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_DEVMAP_HASH:
	case BPF_MAP_TYPE_XSKMAP:
		ok = id == BPF_FUNC_redirect_map || id == BPF_FUNC_map_lookup_elem;
		break;
	case BPF_MAP_TYPE_CGROUP_STORAGE:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
		ok = id == BPF_FUNC_get_local_storage;
		break;
	case BPF_MAP_TYPE_CPUMAP: /* the kernel keeps cpumap's program side to redirects */
		ok = id == BPF_FUNC_redirect_map;
		break;
	case BPF_MAP_TYPE_SOCKMAP:
		ok = id == BPF_FUNC_sk_redirect_map || id == BPF_FUNC_sock_map_update ||
		     id == BPF_FUNC_msg_redirect_map || id == BPF_FUNC_sk_select_reuseport ||
		     id == BPF_FUNC_map_lookup_elem || may_update_sockmap(env, id);
		break;
	case BPF_MAP_TYPE_SK_STORAGE:
		ok = id == BPF_FUNC_sk_storage_get || id == BPF_FUNC_sk_storage_delete ||
		     id == BPF_FUNC_kptr_xchg;
		break;
	case BPF_MAP_TYPE_INODE_STORAGE:
		ok = id == BPF_FUNC_inode_storage_get || id == BPF_FUNC_inode_storage_delete ||
		     id == BPF_FUNC_kptr_xchg;
		break;
	case BPF_MAP_TYPE_TASK_STORAGE:
		ok = id == BPF_FUNC_task_storage_get || id == BPF_FUNC_task_storage_delete ||
		     id == BPF_FUNC_kptr_xchg;
		break;
	case 32: /* BPF_MAP_TYPE_CGRP_STORAGE */
		ok = id == BRT_FUNC_cgrp_storage_get || id == BRT_FUNC_cgrp_storage_delete ||
		     id == BPF_FUNC_kptr_xchg;
		break;
	case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
		ok = id == BPF_FUNC_sk_select_reuseport;
		break;
	case BPF_MAP_TYPE_SOCKHASH:
		ok = id == BPF_FUNC_sk_redirect_hash || id == BPF_FUNC_sock_hash_update ||
		     id == BPF_FUNC_msg_redirect_hash || id == BPF_FUNC_sk_select_reuseport ||
		     id == BPF_FUNC_map_lookup_elem || may_update_sockmap(env, id);
		break;
	default:
		break;
	}
	switch (id) {
	case BPF_FUNC_perf_event_read:
	case BPF_FUNC_perf_event_output:
	case BPF_FUNC_perf_event_read_value:
		ok &= mt == BPF_MAP_TYPE_PERF_EVENT_ARRAY;
		break;
	case BPF_FUNC_task_storage_get:
	case BPF_FUNC_task_storage_delete:
		ok &= mt == BPF_MAP_TYPE_TASK_STORAGE;
		break;
	case BPF_FUNC_inode_storage_get:
	case BPF_FUNC_inode_storage_delete:
		ok &= mt == BPF_MAP_TYPE_INODE_STORAGE;
		break;
	case BRT_FUNC_cgrp_storage_get:
	case BRT_FUNC_cgrp_storage_delete:
		ok &= mt == 32; /* BPF_MAP_TYPE_CGRP_STORAGE */
		break;
	case BPF_FUNC_ringbuf_output:
	case BPF_FUNC_ringbuf_reserve:
	case BPF_FUNC_ringbuf_query:
	case BPF_FUNC_ringbuf_reserve_dynptr:
		ok &= mt == BPF_MAP_TYPE_RINGBUF;
		break;
	case BPF_FUNC_user_ringbuf_drain:
		ok &= mt == BPF_MAP_TYPE_USER_RINGBUF;
		break;
	case BPF_FUNC_map_pop_elem:
		ok &= mt == BPF_MAP_TYPE_QUEUE || mt == BPF_MAP_TYPE_STACK;
		break;
	case BPF_FUNC_map_lookup_percpu_elem:
		ok &= mt == BPF_MAP_TYPE_PERCPU_ARRAY || mt == BPF_MAP_TYPE_PERCPU_HASH ||
		      mt == BPF_MAP_TYPE_LRU_PERCPU_HASH;
		break;
	case BPF_FUNC_get_stackid:
		ok &= mt == BPF_MAP_TYPE_STACK_TRACE;
		break;
	case BPF_FUNC_current_task_under_cgroup:
	case BPF_FUNC_skb_under_cgroup:
		ok &= mt == BPF_MAP_TYPE_CGROUP_ARRAY;
		break;
	case BPF_FUNC_redirect_map:
		ok &= mt == BPF_MAP_TYPE_DEVMAP || mt == BPF_MAP_TYPE_DEVMAP_HASH ||
		      mt == BPF_MAP_TYPE_CPUMAP || mt == BPF_MAP_TYPE_XSKMAP;
		break;
	case BPF_FUNC_get_local_storage:
		ok &= mt == BPF_MAP_TYPE_CGROUP_STORAGE || mt == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
		break;
	case BPF_FUNC_sk_redirect_map:
	case BPF_FUNC_msg_redirect_map:
	case BPF_FUNC_sock_map_update:
		ok &= mt == BPF_MAP_TYPE_SOCKMAP;
		break;
	case BPF_FUNC_sk_storage_get:
	case BPF_FUNC_sk_storage_delete:
		ok &= mt == BPF_MAP_TYPE_SK_STORAGE;
		break;
	case BPF_FUNC_sk_select_reuseport:
		ok &= mt == BPF_MAP_TYPE_REUSEPORT_SOCKARRAY || mt == BPF_MAP_TYPE_SOCKMAP ||
		      mt == BPF_MAP_TYPE_SOCKHASH;
		break;
	case BPF_FUNC_sk_redirect_hash:
	case BPF_FUNC_msg_redirect_hash:
	case BPF_FUNC_sock_hash_update:
		ok &= mt == BPF_MAP_TYPE_SOCKHASH;
		break;
	case BPF_FUNC_map_peek_elem:
	case BPF_FUNC_map_push_elem:
		ok &= mt == BPF_MAP_TYPE_QUEUE || mt == BPF_MAP_TYPE_STACK ||
		      mt == BPF_MAP_TYPE_BLOOM_FILTER;
		break;
	default:
		break;
	}
	if (ok)
		return 0;
	brt_verr(env, "cannot pass map_type %u into func %s#%d\n", mt,
		 brt_verifier_helper_name(id), id);
	return -EINVAL;
}

static int record_func_map(struct brt_env *env, const struct call_meta *meta, int32_t id)
{
	int16_t *seen = &env->aux[env->insn_idx].call_map;

	if (!meta->map)
		return 0;
	if (!*seen)
		*seen = (int16_t)(meta->map_idx + 1);
	else if (*seen > 0 && env->maps[*seen - 1].info.ptr != meta->map->ptr)
		*seen = -1;
	if (id == BPF_FUNC_tail_call && meta->map->type != BPF_MAP_TYPE_PROG_ARRAY) {
		/* the kernel prints this one without a newline */
		brt_verr(env, "expected prog array map for tail call");
		return -EINVAL;
	}
	if ((meta->map->map_flags & BPF_F_RDONLY_PROG) &&
	    (id == BPF_FUNC_map_delete_elem || id == BPF_FUNC_map_update_elem ||
	     id == BPF_FUNC_map_push_elem || id == BPF_FUNC_map_pop_elem)) {
		brt_verr(env, "write into map forbidden\n");
		return -EACCES;
	}
	return 0;
}

/* The kernel's nr_cpu_ids: one past the last possible CPU (bpf_get_smp_processor_id()
 * returns a CPU this process runs on, below it); 0 when unknown.  Read once. */
static int nr_cpu_ids(void)
{
	static _Atomic int cached = -1;
	int n = cached;

	if (n < 0) {
		FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
		char buf[256];

		n = 0;
		if (f && fgets(buf, sizeof(buf), f)) {
			/* "0-3", "0", "0-3,8-11": the last number is the highest CPU */
			char *last = buf + strcspn(buf, "\n");

			while (last > buf && last[-1] >= '0' && last[-1] <= '9')
				last--;
			if (*last >= '0' && *last <= '9')
				n = atoi(last) + 1;
		}
		if (f)
			fclose(f);
		cached = n;
	}
	return n;
}

/* The kernel struct a RET_PTR_TO_BTF_ID_OR_NULL helper returns (its ret_btf_id: the
 * btf_sock_ids of net/core/filter.c). */
static const char *ret_btf_struct(int32_t id)
{
	switch (id) {
	case BPF_FUNC_skc_to_tcp6_sock:
		return "tcp6_sock";
	case BPF_FUNC_skc_to_tcp_sock:
		return "tcp_sock";
	case BPF_FUNC_skc_to_tcp_timewait_sock:
		return "tcp_timewait_sock";
	case BPF_FUNC_skc_to_tcp_request_sock:
		return "tcp_request_sock";
	case BPF_FUNC_skc_to_udp6_sock:
		return "udp6_sock";
	case BPF_FUNC_skc_to_unix_sock:
		return "unix_sock";
	case BPF_FUNC_skc_to_mptcp_sock:
		return "mptcp_sock";
	case BPF_FUNC_task_pt_regs:
		return "pt_regs";
	default:
		return NULL;
	}
}

static void set_return(struct brt_env *env, const struct brt_helper_proto *fn,
		       const struct call_meta *meta, int32_t id, int insn_idx, int *err)
{
	struct brt_reg *r0 = &brt_cur_regs(env)[BPF_REG_0];

	*err = 0;
	switch (fn->ret) {
	case BRT_RET_INTEGER:
		brt_mark_reg_unknown(env, r0);
		/* the kernel's do_refine_retval_range: these return at most the size they
		 * were given, or an errno */
		if (fn->host) {
			break;
		} else if (id == BPF_FUNC_get_stack || id == BPF_FUNC_get_task_stack ||
			   id == BPF_FUNC_probe_read_str || id == BPF_FUNC_probe_read_kernel_str ||
			   id == BPF_FUNC_probe_read_user_str) {
			r0->smax = (int64_t)meta->msize_max;
			r0->s32_max = (int32_t)meta->msize_max;
			r0->smin = -4095;
			r0->s32_min = -4095;
			brt_reg_bounds_sync(r0);
		} else if (id == BPF_FUNC_get_smp_processor_id && nr_cpu_ids() > 0) {
			r0->umin = r0->u32_min = 0;
			r0->smin = r0->s32_min = 0;
			r0->umax = r0->u32_max = (uint32_t)nr_cpu_ids() - 1;
			r0->smax = r0->s32_max = nr_cpu_ids() - 1;
			brt_reg_bounds_sync(r0);
		}
		break;
	case BRT_RET_VOID:
		brt_mark_reg_not_init(r0);
		break;
	case BRT_RET_PTR_TO_MAP_VALUE_OR_NULL:
		if (!meta->map) {
			brt_verr(env, "kernel subsystem misconfigured verifier\n");
			*err = -EINVAL;
			return;
		}
		r0->type = PTR_TO_MAP_VALUE | PTR_MAYBE_NULL;
		brt_mark_reg_known_zero(r0);
		r0->map_idx = (uint16_t)meta->map_idx;
		if (env->maps[meta->map_idx].inner_idx >= 0) {
			/* a map of maps: the inner map (the kernel's inner_map_meta) */
			r0->type = CONST_PTR_TO_MAP | PTR_MAYBE_NULL;
			r0->map_idx = (uint16_t)env->maps[meta->map_idx].inner_idx;
			break;
		}
		if (id == BPF_FUNC_map_lookup_elem && meta->const_key >= 0 &&
		    (uint64_t)meta->const_key < meta->map->max_entries)
			r0->type &= ~PTR_MAYBE_NULL;
		/* a sockmap/sockhash element is a socket: the kernel's log calls the result
		 * sock_or_null from the start */
		if (meta->map->type == BPF_MAP_TYPE_SOCKMAP ||
		    meta->map->type == BPF_MAP_TYPE_SOCKHASH)
			r0->type = PTR_TO_SOCKET | PTR_MAYBE_NULL;
		break;
	case BRT_RET_PTR_TO_MAP_VALUE: /* the cgroup storage of the run: always there */
		if (!meta->map) {
			brt_verr(env, "kernel subsystem misconfigured verifier\n");
			*err = -EINVAL;
			return;
		}
		r0->type = PTR_TO_MAP_VALUE;
		brt_mark_reg_known_zero(r0);
		r0->map_idx = (uint16_t)meta->map_idx;
		break;
	case BRT_RET_PTR_TO_BTF_ID_TASK: /* bpf_get_current_task_btf: the kernel's current */
		r0->type = PTR_TO_BTF_ID | PTR_TRUSTED;
		brt_mark_reg_known_zero(r0);
		r0->btf_id = brt_btf_task_id(env);
		if (!r0->btf_id) {
			brt_verr(env, "invalid return type 8 of func %s#%d\n",
				 brt_verifier_helper_name(id), id);
			*err = -EINVAL;
			return;
		}
		break;
	case BRT_RET_PTR_TO_BTF_ID:
	case BRT_RET_PTR_TO_BTF_ID_OR_NULL: { /* the casts: the struct each one names */
		int bid = -1;

		if (!env->kbtf)
			env->kbtf = brt_btf_vmlinux();
		if (env->kbtf && ret_btf_struct(id))
			bid = brt_btf_find(env->kbtf, ret_btf_struct(id), BTF_KIND_STRUCT);
		if (bid <= 0) {
			brt_verr(env, "invalid return type 8 of func %s#%d\n",
				 brt_verifier_helper_name(id), id);
			*err = -EINVAL;
			return;
		}
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_BTF_ID | (fn->ret == BRT_RET_PTR_TO_BTF_ID ? 0 : PTR_MAYBE_NULL);
		r0->btf_id = (uint32_t)bid;
		break;
	}
	case BRT_RET_PTR_TO_DYNPTR_MEM_OR_NULL:
		r0->type = PTR_TO_MEM | PTR_MAYBE_NULL;
		brt_mark_reg_known_zero(r0);
		r0->mem_size = meta->mem_size;
		r0->btf_id = meta->dynptr_id;
		r0->ref_obj_id = meta->dynptr_ref;
		break;
	case BRT_RET_PTR_TO_ALLOC_MEM_OR_NULL:
		r0->type = PTR_TO_MEM | MEM_RINGBUF | PTR_MAYBE_NULL;
		brt_mark_reg_known_zero(r0);
		r0->mem_size = meta->mem_size;
		break;
	case BRT_RET_PTR_TO_SOCKET_OR_NULL:
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_SOCKET | PTR_MAYBE_NULL;
		break;
	case BRT_RET_PTR_TO_SOCK_COMMON_OR_NULL:
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_SOCK_COMMON | PTR_MAYBE_NULL;
		break;
	case BRT_RET_PTR_TO_TCP_SOCK_OR_NULL:
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_TCP_SOCK | PTR_MAYBE_NULL;
		break;
	default:
		brt_mark_reg_unknown(env, r0);
		break;
	}
	if (r0->type & PTR_MAYBE_NULL)
		r0->id = ++env->id_gen;
	/* a value holding a bpf_spin_lock that is never NULL gets an id all the same: the
	 * lock is released through a pointer with the id it was taken through */
	if (r0->type == PTR_TO_MAP_VALUE && meta->map && meta->map->spin_lock_off1)
		r0->id = ++env->id_gen;
	/* as the kernel: a cast shares its argument's reference; an acquired object gets a
	 * new one, whose id also serves for the NULL check (so the id above is skipped) */
	if (is_ptr_cast_function(id)) {
		r0->ref_obj_id = meta->ref_obj_id;
	} else if (is_acquire_function(id, meta->map)) {
		int ref = brt_acquire_ref(env, insn_idx);

		if (ref < 0) {
			*err = ref;
			return;
		}
		r0->id = r0->ref_obj_id = (uint32_t)ref;
	}
}

int brt_is_callback_helper(int32_t id)
{
	return id == BPF_FUNC_loop || id == BPF_FUNC_for_each_map_elem ||
	       id == BPF_FUNC_user_ringbuf_drain;
}

/* Map types whose elements bpf_for_each_map_elem walks (map_for_each_callback). */
static int map_for_each_ok(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return 1;
	default:
		return 0;
	}
}

/* The kernel's push_callback_call(): the callback's first instruction goes on the stack of
 * pending paths with a new frame (bpf_loop: r1 = the index, r2 = the helper's r3;
 * bpf_for_each_map_elem: r1 = the map, r2 = a key, r3 = its value, r4 = the helper's r3),
 * while this path goes on after the call as if the helper had not called it.  When the
 * callback exits, its path comes back to this call (brt_prepare_func_exit()), which
 * schedules the next iteration, until the states converge (brt_is_state_visited()) or,
 * for bpf_loop, nr_loops iterations were explored. */
static int push_callback(struct brt_env *env, int insn_idx, int32_t id,
			 const struct call_meta *meta)
{
	struct brt_frame *caller = brt_cur_frame(env), *callee;
	struct brt_vstate *cb;
	int err;

	if (id == BPF_FUNC_loop && caller->callback_depth >= caller->regs[BPF_REG_1].umax) {
		caller->callback_depth = 0;
		if (LOG_L2(env))
			brt_vinfo(env, "frame%d bpf_loop iteration limit reached\n",
				  env->cur->curframe);
		return 0;
	}
	err = brt_push_stack(env, env->subprogs[meta->subprogno].start, insn_idx, &cb);
	if (err)
		return err;
	if (cb->curframe + 1 >= BRT_MAX_FRAMES) {
		brt_verr(env, "the call stack of %d frames is too deep\n", cb->curframe + 2);
		return -E2BIG;
	}
	if (id == BPF_FUNC_for_each_map_elem && !map_for_each_ok(meta->map->type)) {
		brt_verr(env, "callback function not allowed for map\n");
		return -524; /* the kernel's internal ENOTSUPP */
	}
	callee = brt_frame_new(insn_idx, cb->curframe + 1, meta->subprogno);
	if (!callee)
		return -ENOMEM;
	if (id == BPF_FUNC_loop) {
		/* callback(u32 index, void *ctx) */
		brt_mark_reg_unknown(env, &callee->regs[BPF_REG_1]);
		callee->regs[BPF_REG_2] = caller->regs[BPF_REG_3];
	} else if (id == BPF_FUNC_user_ringbuf_drain) {
		/* set_user_ringbuf_callback_state(): callback(const struct bpf_dynptr *, void
		 * *ctx), the dynptr a local one over the record (mark_dynptr_cb_reg()) */
		struct brt_reg *r1 = &callee->regs[BPF_REG_1];

		brt_mark_reg_known_zero(r1);
		r1->type = CONST_PTR_TO_DYNPTR;
		r1->id = ++env->id_gen;
		r1->range = (int32_t)(BRT_DYNPTR_LOCAL | BRT_DYNPTR_FIRST);
		callee->regs[BPF_REG_2] = caller->regs[BPF_REG_3];
	} else {
		/* callback(map, const key *, value *, void *ctx) */
		callee->regs[BPF_REG_1] = caller->regs[BPF_REG_1];
		callee->regs[BPF_REG_2].type = PTR_TO_MAP_KEY;
		brt_mark_reg_known_zero(&callee->regs[BPF_REG_2]);
		callee->regs[BPF_REG_2].map_idx = (uint16_t)meta->map_idx;
		callee->regs[BPF_REG_3].type = PTR_TO_MAP_VALUE;
		brt_mark_reg_known_zero(&callee->regs[BPF_REG_3]);
		callee->regs[BPF_REG_3].map_idx = (uint16_t)meta->map_idx;
		callee->regs[BPF_REG_4] = caller->regs[BPF_REG_3];
	}
	callee->in_callback_fn = 1;
	cb->callback_unroll++;
	cb->frame[cb->curframe]->callback_depth++;
	cb->frame[++cb->curframe] = callee;
	caller->callback_depth = 0;
	return 0;
}

/* push_async_cb() with set_timer_callback_state(): the timer's callback is walked on its
 * own, from a fresh state (the caller's does not matter: it runs later, elsewhere), with
 * r1 the map, r2 a key and r3 the value; it must return 0.  This path goes on after the
 * call. */
static int push_async_callback(struct brt_env *env, int insn_idx, const struct call_meta *meta)
{
	struct brt_vstate *cb;
	struct brt_frame *f;
	int err = brt_push_stack(env, env->subprogs[meta->subprogno].start, insn_idx, &cb);

	if (err)
		return err;
	f = brt_frame_new(-1, 0, meta->subprogno);
	if (!f)
		return -ENOMEM;
	for (int i = 0; i <= cb->curframe; i++) {
		brt_frame_free(cb->frame[i]);
		cb->frame[i] = NULL;
	}
	cb->curframe = 0;
	cb->frame[0] = f;
	cb->nrefs = 0;
	cb->lock_map = 0;
	cb->lock_id = 0;
	cb->active_rcu = 0;
	cb->active_preempt = 0;
	f->regs[BPF_REG_1].type = CONST_PTR_TO_MAP;
	brt_mark_reg_known_zero(&f->regs[BPF_REG_1]);
	f->regs[BPF_REG_1].map_idx = (uint16_t)meta->map_idx;
	f->regs[BPF_REG_2].type = PTR_TO_MAP_KEY;
	brt_mark_reg_known_zero(&f->regs[BPF_REG_2]);
	f->regs[BPF_REG_2].map_idx = (uint16_t)meta->map_idx;
	f->regs[BPF_REG_3].type = PTR_TO_MAP_VALUE;
	brt_mark_reg_known_zero(&f->regs[BPF_REG_3]);
	f->regs[BPF_REG_3].map_idx = (uint16_t)meta->map_idx;
	f->in_async_cb = 1;
	return 0;
}

int brt_check_helper_call(struct brt_env *env, const struct bpf_insn *insn, int insn_idx)
{
	int32_t id = insn->imm;
	const struct brt_helper_proto *fn;
	struct call_meta meta = { .const_key = -1, .map_idx = -1 };
	struct brt_reg *regs;
	int err;

	if (id < 0 || (id >= __BPF_FUNC_MAX_ID + 2 && !find_proto(id))) {
		brt_verr(env, "invalid func unknown#%d\n", id);
		return -EINVAL;
	}
	fn = find_proto(id);
	if (id == BPF_FUNC_get_socket_cookie && env->opts->prog_type == BPF_PROG_TYPE_TRACING)
		fn = &sock_ptr_cookie;
	if (id == BPF_FUNC_sk_assign && fn && !fn->host &&
	    env->opts->prog_type == BPF_PROG_TYPE_SK_LOOKUP)
		fn = &sk_lookup_assign;
	if (!fn || !helper_allowed(env, fn)) {
		const char *name = brt_verifier_helper_name(id);

		brt_verr(env, "program of this type cannot use helper %s#%d\n", name ? name : "unknown",
			 id);
		return -EINVAL;
	}
	if (!env->opts->gpl && fn->gpl_only &&
	    !(id == BPF_FUNC_get_func_ip && multi_probe(env->opts))) {
		brt_verr(env, "cannot call GPL-restricted function from non-GPL compatible program\n");
		return -EINVAL;
	}
	if (!fn->host && brt_helper_might_sleep(id)) {
		if (!(env->opts->prog_flags & BPF_F_SLEEPABLE)) {
			brt_verr(env, "helper call might sleep in a non-sleepable prog\n");
			return -EINVAL;
		}
		if (env->cur->active_rcu) {
			brt_verr(env, "sleepable helper %s#%d in rcu_read_lock region\n",
				 brt_verifier_helper_name(id), id);
			return -EINVAL;
		}
		if (env->cur->active_preempt) {
			brt_verr(env, "sleepable helper %s#%d in non-preemptible region\n",
				 brt_verifier_helper_name(id), id);
			return -EINVAL;
		}
	}
	for (int i = 0; i < 5; i++) {
		err = check_arg(env, i, fn, &meta);
		if (err)
			return err;
	}
	err = record_func_map(env, &meta, id);
	if (err)
		return err;
	if (meta.release_regno) {
		if (fn->args[meta.release_regno - 1] == BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE)
			err = brt_dynptr_release(env, &brt_cur_regs(env)[meta.release_regno]);
		else
			err = meta.ref_obj_id ? brt_release_ref(env, meta.ref_obj_id) : -EINVAL;
		if (err) {
			brt_verr(env, "func %s#%d reference has not been acquired before\n",
				 brt_verifier_helper_name(id), id);
			return err;
		}
	}
	if (id == BPF_FUNC_tail_call && env->cur->nrefs) {
		brt_verr(env, "Unreleased reference id=%u alloc_insn=%d\n", env->cur->refs[0].id,
			 env->cur->refs[0].insn_idx);
		brt_verr(env, "tail_call would lead to reference leak\n");
		return -EINVAL;
	}
	if (id == BPF_FUNC_tail_call && env->cur->active_rcu) {
		brt_verr(env, "tail_call cannot be used inside bpf_rcu_read_lock-ed region\n");
		return -EINVAL;
	}
	if (id == BPF_FUNC_tail_call && env->cur->active_preempt) {
		brt_verr(env, "tail_call cannot be used inside bpf_preempt_disable-ed region\n");
		return -EINVAL;
	}
	/* check_get_func_ip(): a function's address exists for kprobes and trampolines */
	if (id == BPF_FUNC_get_func_ip) {
		if (env->opts->prog_type == BPF_PROG_TYPE_TRACING && !has_trampoline(env->opts)) {
			brt_verr(env, "func %s#%d supported only for fentry/fexit/fmod_ret programs\n",
				 brt_verifier_helper_name(id), id);
			return -524; /* ENOTSUPP */
		}
		if (env->opts->prog_type != BPF_PROG_TYPE_TRACING &&
		    env->opts->prog_type != BPF_PROG_TYPE_KPROBE) {
			brt_verr(env, "func %s#%d not supported for program type %u\n",
				 brt_verifier_helper_name(id), id, env->opts->prog_type);
			return -524;
		}
	}
	/* a dynptr of memory only of a map value */
	if (id == BPF_FUNC_dynptr_from_mem && !fn->host &&
	    brt_cur_regs(env)[BPF_REG_1].type != PTR_TO_MAP_VALUE) {
		brt_verr(env, "Unsupported reg type %s for bpf_dynptr_from_mem data\n",
			 brt_reg_type_str(env, brt_cur_regs(env)[BPF_REG_1].type));
		return -EACCES;
	}
	if (id == BPF_FUNC_dynptr_write && !fn->host && meta.dynptr_regno) {
		uint32_t t = brt_dynptr_info(env, &brt_cur_regs(env)[meta.dynptr_regno], NULL, NULL);

		meta.dynptr_pkt_write = t == BRT_DYNPTR_SKB || t == BRT_DYNPTR_SKB_META;
	}
	/* a slice of a dynptr dies with it: it keeps the dynptr's id and reference */
	if (fn->ret == BRT_RET_PTR_TO_DYNPTR_MEM_OR_NULL && meta.dynptr_regno)
		brt_dynptr_info(env, &brt_cur_regs(env)[meta.dynptr_regno], &meta.dynptr_id,
				&meta.dynptr_ref);
	if (id == BPF_FUNC_snprintf) {
		err = check_snprintf_call(env);
		if (err)
			return err;
	}
	/* it cannot return an error, so it takes no flags */
	if (id == BPF_FUNC_get_local_storage &&
	    !brt_reg_is_null(&brt_cur_regs(env)[BPF_REG_2])) {
		brt_verr(env, "get_local_storage() doesn't support non-zero flags\n");
		return -EINVAL;
	}
	/* the kernel relies on these values (bpf_loop's count and inlining flags, the
	 * tail call's constant index): they are kept precise */
	if (id == BPF_FUNC_loop) {
		struct brt_insn_aux *aux = &env->aux[env->insn_idx];
		int zero = brt_reg_is_null(&brt_cur_regs(env)[BPF_REG_4]);

		/* update_loop_inline_state(): the flags are looked at (and a zero kept
		 * precise) until the call is known unfit for inlining; then the count */
		if (!aux->loop_init || aux->loop_fit) {
			err = zero ? brt_mark_precise(env, BPF_REG_4) : 0;
			if (err)
				return err;
			aux->loop_fit = (uint8_t)(zero && (!aux->loop_init ||
							  aux->loop_subprog == meta.subprogno));
			if (!aux->loop_init)
				aux->loop_subprog = meta.subprogno;
			aux->loop_init = 1;
		}
		err = brt_mark_precise(env, BPF_REG_1);
		if (err)
			return err;
	}
	if (id == BPF_FUNC_tail_call && meta.map &&
	    brt_tnum_is_const(brt_cur_regs(env)[BPF_REG_3].var_off) &&
	    brt_cur_regs(env)[BPF_REG_3].type == SCALAR_VALUE &&
	    brt_cur_regs(env)[BPF_REG_3].var_off.value < meta.map->max_entries) {
		err = brt_mark_precise(env, BPF_REG_3);
		if (err)
			return err;
	}
	if (brt_is_callback_helper(id)) {
		err = push_callback(env, insn_idx, id, &meta);
		if (err)
			return err;
	}
	if (id == BPF_FUNC_timer_set_callback && !fn->host && meta.map) {
		err = push_async_callback(env, insn_idx, &meta);
		if (err)
			return err;
	}
	regs = brt_cur_regs(env);
	for (int i = BPF_REG_0; i <= BPF_REG_5; i++) {
		brt_mark_reg_not_init(&regs[i]);
		env->scratched_regs |= (uint16_t)(1u << i);
	}
	set_return(env, fn, &meta, id, insn_idx, &err);
	if (err)
		return err;
	if (brt_helper_changes_pkt_data(id) || meta.dynptr_pkt_write)
		brt_clear_all_pkt_pointers(env);
	err = map_func_compat(env, &meta, id);
	if (err)
		return err;
	if (id == BPF_FUNC_tail_call && env->subprog_cnt > 1 && 0) {
		brt_verr(env, "mixing of tail_calls and bpf-to-bpf calls is not supported\n");
		return -EINVAL;
	}
	return 0;
}
