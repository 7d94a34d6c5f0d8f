/* helper_args.c - a helper call's arguments against its prototype (the kernel's
 * check_func_arg()): each register's type, offset and the memory it points at, what the
 * call learns from them (struct brt_call_meta: the map, sizes, references, the callback),
 * and the argument kinds with rules of their own (bpf_spin_lock, constant strings).
 * The dynptr and bpf_timer arguments are helper_dynptr.c's and helper_timer.c's.
 */
#include <errno.h>
#include <string.h>

#include "util/util.h"
#include "verifier/internal.h"

/* ---- packet pointers as arguments ----------------------------------------------------- */
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

static const char *const mem_types =
	"fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_";

static int reg_type_ok(struct brt_env *env, int regno, int arg, const char *fname)
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
	case BRT_ARG_PTR_TO_CTX_OR_NULL:
		if (t == PTR_TO_CTX || brt_reg_is_null(reg))
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
			if (brt_btf_reg_struct_match(env, reg, BRT_KS_SOCK_COMMON))
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
	case BRT_ARG_PTR_TO_SPIN_LOCK: /* a map value's or an allocated object's */
		if (t == PTR_TO_MAP_VALUE || t == (PTR_TO_BTF_ID | MEM_ALLOC))
			return 0;
		expected = "map_value, ptr_";
		break;
	case BRT_ARG_PTR_TO_PERCPU_BTF_ID: /* the kernel's percpu_btf_ptr_types */
		/* a percpu object's RCU pointer (a __percpu_kptr field's load); kernel
		 * per-CPU memory (a __ksym variable, a __percpu field) is beyond reach */
		if (t == (PTR_TO_BTF_ID | MEM_PERCPU | MEM_RCU))
			return 0;
		if (t == (PTR_TO_BTF_ID | MEM_PERCPU) || t == (PTR_TO_BTF_ID | MEM_PERCPU | PTR_TRUSTED)) {
			brt_verr(env, "R%d: kernel per-CPU memory is out of bpfrt's reach\n", regno);
			return -524; /* ENOTSUPP: the kernel would take it */
		}
		expected = "percpu_ptr_, percpu_rcu_ptr_, percpu_trusted_ptr_";
		break;
	case BRT_ARG_KPTR_XCHG_DEST: /* kptr_xchg_dest_types */
		if (t == PTR_TO_MAP_VALUE || t == (PTR_TO_BTF_ID | MEM_ALLOC))
			return 0;
		brt_verr(env, "R%d type=%s expected=map_value, ptr_\n", regno,
			 brt_reg_type_str(env, t));
		return -EACCES;
	case BRT_ARG_PTR_TO_KPTR_OR_NULL_RELEASE:
		/* check_reg_type(): the maybe-NULL fold, and an object of bpf_obj_new seen
		 * without MEM_ALLOC / MEM_PERCPU, then the kernel's btf_ptr_types */
		t &= ~PTR_MAYBE_NULL;
		if (t & MEM_ALLOC)
			t &= ~(MEM_ALLOC | MEM_PERCPU);
		if (t == PTR_TO_BTF_ID || t == (PTR_TO_BTF_ID | PTR_TRUSTED) ||
		    t == (PTR_TO_BTF_ID | MEM_RCU))
			return 0;
		expected = "ptr_, trusted_ptr_, rcu_ptr_";
		break;
	case BRT_ARG_PTR_TO_BTF_ID_TASK_OR_NULL: /* check_reg_type() folds PTR_MAYBE_NULL */
	case BRT_ARG_PTR_TO_BTF_ID_CGROUP_OR_NULL:
	case BRT_ARG_PTR_TO_BTF_ID_SK_OR_NULL:
		if (brt_reg_is_null(reg))
			return 0;
		t &= ~PTR_MAYBE_NULL;
		__attribute__((fallthrough));
	case BRT_ARG_PTR_TO_BTF_ID_SEQ_FILE:
	case BRT_ARG_PTR_TO_BTF_ID_TCP_SOCK:
	case BRT_ARG_PTR_TO_BTF_ID_SK_BUFF:
	case BRT_ARG_PTR_TO_BTF_ID_XDP_BUFF:
	case BRT_ARG_PTR_TO_BTF_ID_FILE:
	case BRT_ARG_PTR_TO_BTF_ID_PATH:
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
		case PTR_TO_BTF_ID | PTR_TRUSTED:
			/* kernel memory (check_reg_type()'s found): only for a helper that
			 * reads it; its bounds are the struct's (brt_check_helper_mem()) */
			if (arg != BRT_ARG_PTR_TO_UNINIT_MEM && arg != BRT_ARG_PTR_TO_MEM_WRITE &&
			    arg != BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL && arg != BRT_ARG_PTR_TO_LONG)
				return 0;
			brt_verr(env, "bpf_%s() may write into memory pointed by R%d type=%s\n",
				 fname, regno, brt_reg_type_str(env, t));
			return -EACCES;
		default:
			break;
		}
		expected = mem_types;
		break;
	}
	brt_verr(env, "R%d type=%s expected=%s\n", regno, brt_reg_type_str(env, t), expected);
	return -EACCES;
}

/* The kernel struct a BTF-typed argument names (its proto's arg_btf_id), BRT_KS_COUNT for
 * other arguments */
static enum brt_kstruct arg_struct(int arg)
{
	switch (arg) {
	case BRT_ARG_PTR_TO_BTF_ID_TASK:
	case BRT_ARG_PTR_TO_BTF_ID_TASK_OR_NULL:
		return BRT_KS_TASK;
	case BRT_ARG_PTR_TO_BTF_ID_CGROUP_OR_NULL:
		return BRT_KS_CGROUP;
	case BRT_ARG_PTR_TO_BTF_ID_SK_OR_NULL:
		return BRT_KS_SOCK_COMMON;
	case BRT_ARG_PTR_TO_BTF_ID_SEQ_FILE:
		return BRT_KS_SEQ_FILE;
	case BRT_ARG_PTR_TO_BTF_ID_TCP_SOCK:
		return BRT_KS_TCP_SOCK;
	case BRT_ARG_PTR_TO_BTF_ID_SK_BUFF:
		return BRT_KS_SK_BUFF;
	case BRT_ARG_PTR_TO_BTF_ID_XDP_BUFF:
		return BRT_KS_XDP_BUFF;
	case BRT_ARG_PTR_TO_BTF_ID_FILE:
		return BRT_KS_FILE;
	default:
		return BRT_KS_COUNT;
	}
}

/* The arguments reg_type_ok() checks against the kernel's mem_types. */
static int is_mem_arg(int arg)
{
	switch (arg) {
	case BRT_ARG_PTR_TO_MEM:
	case BRT_ARG_PTR_TO_MEM_OR_NULL:
	case BRT_ARG_PTR_TO_UNINIT_MEM:
	case BRT_ARG_PTR_TO_MEM_WRITE:
	case BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL:
	case BRT_ARG_PTR_TO_LONG:
	case BRT_ARG_PTR_TO_MEM_IPHDR:
	case BRT_ARG_PTR_TO_MEM_IPV6HDR:
	case BRT_ARG_PTR_TO_MEM_TCPHDR:
		return 1;
	default:
		return 0;
	}
}

static int check_off_ok(struct brt_env *env, int regno, int arg)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];

	/* check_func_arg_reg_off(): what a release function takes must point at the object
	 * itself, whatever the pointer type otherwise allows */
	/* a dynptr to release may sit at any stack offset (the slots are checked later) */
	if (arg == BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE && reg->type == PTR_TO_STACK)
		return 0;
	/* an object's kptr field: at a fixed offset into it */
	if (arg == BRT_ARG_KPTR_XCHG_DEST && reg->type == (PTR_TO_BTF_ID | MEM_ALLOC))
		return brt_check_ptr_fixed_off_reg(env, reg, regno);
	if (arg == BRT_ARG_PTR_TO_ALLOC_MEM || arg == BRT_ARG_PTR_TO_SOCK_RELEASE ||
	    arg == BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE ||
	    arg == BRT_ARG_PTR_TO_KPTR_OR_NULL_RELEASE) {
		if (reg->off) {
			brt_verr(env, "R%d must have zero offset when passed to release func or "
				 "trusted arg to kfunc\n", regno);
			return -EINVAL;
		}
		return brt_check_ptr_off_reg(env, reg, regno);
	}
	/* a trusted kernel pointer a helper reads as memory may point into its struct (the
	 * kernel allows PTR_TO_BTF_ID a fixed offset; the member's bounds are checked with
	 * the size); kernel-typed arguments keep the zero offset their type match needs */
	if (reg->type == (PTR_TO_BTF_ID | PTR_TRUSTED) && is_mem_arg(arg))
		return brt_check_ptr_fixed_off_reg(env, reg, regno);
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

int brt_map_field_arg(struct brt_env *env, int regno, const char *field, uint32_t off1)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	const struct brt_map_info *m = &env->maps[reg->map_idx].info;
	int64_t at = (int64_t)reg->var_off.value + reg->off;

	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "R%d doesn't have constant offset. %s has to be at the constant "
			      "offset\n", regno, field);
		return -EINVAL;
	}
	if (!m->has_btf) {
		brt_verr(env, "map '%s' has to have BTF in order to use %s\n", m->map_name, field);
		return -EINVAL;
	}
	if (!off1) {
		brt_verr(env, "map '%s' has no valid %s\n", m->map_name, field);
		return -EINVAL;
	}
	if (at != (int64_t)off1 - 1) {
		brt_verr(env, "off %lld doesn't point to 'struct %s' that is at %d\n",
			 (long long)at, field, (int)off1 - 1);
		return -EINVAL;
	}
	return 0;
}

/* process_spin_lock() for an allocated object: its type's bpf_spin_lock, at a constant
 * offset */
static int local_lock_arg(struct brt_env *env, const struct brt_reg *reg, int regno, int res)
{
	const char *lock_str = res ? "bpf_res_spin" : "bpf_spin";
	int64_t at = (int64_t)reg->var_off.value + reg->off;
	struct brt_grec rec;
	int32_t off;

	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "R%d doesn't have constant offset. %s_lock has to be at the constant "
			      "offset\n",
			 regno, lock_str);
		return -EINVAL;
	}
	if (!brt_graph_reg_record(env, reg, &rec))
		rec.spin_lock_off = rec.res_spin_lock_off = -1;
	off = res ? rec.res_spin_lock_off : rec.spin_lock_off;
	if (off < 0) {
		brt_verr(env, "local 'kptr' has no valid %s_lock\n", lock_str);
		return -EINVAL;
	}
	if (at != off) {
		brt_verr(env, "off %lld doesn't point to 'struct %s_lock' that is at %d\n",
			 (long long)at, lock_str, off);
		return -EINVAL;
	}
	return 0;
}

/* The kernel's process_spin_lock(), for bpf_spin_lock/unlock (helpers) and the
 * bpf_res_spin_lock kfuncs: the argument points at the value's lock of that kind; a lock
 * is a reference of the state (refs.c) named by the map and the id of the value pointer
 * (the NULL check's, kept for values with a lock).  A resilient lock may be taken while
 * others are held, but not the same one twice (it would deadlock: AA); every lock is
 * released in the reverse order of taking (the last one taken is active_lock_*).  Two
 * bpf_spin_locks never meet here: the first one refuses every helper call but its
 * unlock (check.c). */
int brt_process_spin_lock(struct brt_env *env, int regno, unsigned flags)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	int local = reg->type != PTR_TO_MAP_VALUE;
	const struct brt_map_info *m = local ? NULL : &env->maps[reg->map_idx].info;
	struct brt_vstate *st = env->cur;
	int res = (flags & BRT_SPIN_RES) != 0;
	const char *lock_str = res ? "bpf_res_spin" : "bpf_spin";
	/* the lock's owner: the map, or every allocated object's one (the program's BTF) */
	uint16_t ptr = local ? (uint16_t)BRT_LOCK_PTR_ALLOC : (uint16_t)(reg->map_idx + 1);
	uint16_t type = !res ? BRT_REF_LOCK
			     : (flags & BRT_SPIN_IRQ) ? BRT_REF_RES_LOCK_IRQ : BRT_REF_RES_LOCK;
	int err = local ? local_lock_arg(env, reg, regno, res)
			: brt_map_field_arg(env, regno, res ? "bpf_res_spin_lock" : "bpf_spin_lock",
					    res ? m->res_spin_lock_off1 : m->spin_lock_off1);

	if (err)
		return err;
	if (flags & BRT_SPIN_TAKE) {
		/* find_lock_state(REF_TYPE_LOCK, 0, NULL) of the kernel never matches */
		if (!res && st->active_locks && brt_find_lock_state(env, BRT_REF_LOCK, 0, 0)) {
			brt_verr(env, "Locking two bpf_spin_locks are not allowed\n");
			return -EINVAL;
		}
		if (res && st->active_locks &&
		    brt_find_lock_state(env, BRT_REF_RES_LOCK | BRT_REF_RES_LOCK_IRQ, reg->id, ptr)) {
			brt_verr(env, "Acquiring the same lock again, AA deadlock detected\n");
			return -EINVAL;
		}
		err = brt_acquire_lock_state(env, env->insn_idx, type, reg->id, ptr);
		if (err)
			brt_verr(env, "Failed to acquire lock state\n");
		return err;
	}
	if (!st->active_locks) {
		brt_verr(env, "%s_unlock without taking a lock\n", lock_str);
		return -EINVAL;
	}
	if (!brt_find_lock_state(env, type, reg->id, ptr)) {
		brt_verr(env, "%s_unlock of different lock\n", lock_str);
		return -EINVAL;
	}
	if (reg->id != st->active_lock_id || !brt_lock_ptr_eq(env, ptr, st->active_lock_ptr)) {
		brt_verr(env, "%s_unlock cannot be out of order\n", lock_str);
		return -EINVAL;
	}
	if (brt_release_lock_state(env, type, reg->id, ptr)) {
		brt_verr(env, "%s_unlock of different lock\n", lock_str);
		return -EINVAL;
	}
	/* invalidate_non_owning_refs(): nodes seen in a list or tree are the lock's */
	brt_graph_unlock(env);
	return 0;
}

/* check_reg_const_str(): a string at a constant place of a frozen read-only array of one
 * element (the only map whose values the verifier reads), NUL-terminated inside it. */
int brt_check_const_str(struct brt_env *env, int regno)
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
int brt_check_snprintf_call(struct brt_env *env)
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

/* the argument kinds that take NULL (the kernel's type_may_be_null()) */
static int nullable(int arg)
{
	switch (arg) {
	case BRT_ARG_PTR_TO_STACK_OR_NULL:
	case BRT_ARG_PTR_TO_MEM_OR_NULL:
	case BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL:
	case BRT_ARG_PTR_TO_MAP_VALUE_OR_NULL:
	case BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON_OR_NULL:
	case BRT_ARG_PTR_TO_SOCKET_OR_NULL:
	case BRT_ARG_PTR_TO_BTF_ID_TASK_OR_NULL:
	case BRT_ARG_PTR_TO_BTF_ID_CGROUP_OR_NULL:
	case BRT_ARG_PTR_TO_BTF_ID_SK_OR_NULL:
	case BRT_ARG_PTR_TO_KPTR_OR_NULL_RELEASE:
	case BRT_ARG_PTR_TO_CTX_OR_NULL:
		return 1;
	default:
		return 0;
	}
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

int brt_helper_check_arg(struct brt_env *env, int i, const struct brt_helper_proto *fn,
			 struct brt_call_meta *meta)
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
	    i == 0 && (env->opts->prog_type == BPF_PROG_TYPE_CGROUP_SOCKOPT ||
		       env->opts->prog_type == BPF_PROG_TYPE_STRUCT_OPS))
		arg = BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON;
	/* cgroup_sock's bpf_sk_storage_get takes its context, a socket
	 * (bpf_sk_storage_get_cg_sock_proto) */
	if (fn->id == BPF_FUNC_sk_storage_get && !fn->host && i == 1 &&
	    env->opts->prog_type == BPF_PROG_TYPE_CGROUP_SOCK)
		arg = BRT_ARG_PTR_TO_CTX;
	/* a NULL where the helper takes NULL: the running 6.18.44 marks it precise before it
	 * skips the type check (its level-2 log: bpf_csum_diff's NULL from, bpf_loop's NULL
	 * ctx), so no state holding something else there prunes this path */
	if (brt_reg_is_null(reg) && nullable(arg)) {
		err = brt_mark_precise(env, regno);
		if (err)
			return err;
	}
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
	/* bpf_kptr_xchg's NULL: no type check (check_func_arg()'s skip_type_check) */
	if (arg == BRT_ARG_PTR_TO_KPTR_OR_NULL_RELEASE && brt_reg_is_null(reg)) {
		meta->release_regno = regno;
		return 0;
	}
	err = reg_type_ok(env, regno, arg, fn->name);
	if (!err && arg == BRT_ARG_PTR_TO_KPTR_OR_NULL_RELEASE) {
		/* check_reg_type()'s found: by the register's whole type */
		switch (reg->type) {
		case PTR_TO_BTF_ID:
		case PTR_TO_BTF_ID | PTR_TRUSTED:
		case PTR_TO_BTF_ID | PTR_TRUSTED | PTR_MAYBE_NULL:
		case PTR_TO_BTF_ID | MEM_RCU:
		case PTR_TO_BTF_ID | PTR_MAYBE_NULL:
		case PTR_TO_BTF_ID | PTR_MAYBE_NULL | MEM_RCU:
			if (reg->type & PTR_MAYBE_NULL) {
				brt_verr(env, "Possibly NULL pointer passed to helper arg%d\n", regno);
				return -EACCES;
			}
			__attribute__((fallthrough));
		case PTR_TO_BTF_ID | MEM_ALLOC:
		case PTR_TO_BTF_ID | MEM_PERCPU | MEM_ALLOC:
			if (!meta->has_kptr)
				return -EFAULT;
			if (brt_graph_kptr_match(env, &meta->kptr, reg, regno))
				return -EACCES;
			break;
		case PTR_TO_BTF_ID | MEM_PERCPU:
		case PTR_TO_BTF_ID | MEM_PERCPU | MEM_RCU:
		case PTR_TO_BTF_ID | MEM_PERCPU | PTR_TRUSTED:
			break;
		default:
			brt_verr(env, "verifier bug: invalid PTR_TO_BTF_ID register for type match\n");
			return -EFAULT;
		}
	}
	if (!err && arg == BRT_ARG_PTR_TO_BTF_ID_PATH) {
		err = brt_d_path_arg(env, regno, reg);
	} else if (!err && arg_struct(arg) != BRT_KS_COUNT &&
		   !(brt_reg_is_null(reg) && nullable(arg))) {
		enum brt_kstruct k = arg_struct(arg);

		if (!brt_btf_reg_struct_match(env, reg, k)) {
			brt_verr(env, "R%d is of type %s but %s is expected\n", regno,
				 brt_btf_reg_name(env, reg->btf_id), brt_btf_kstruct_name(k));
			return -EACCES;
		}
	} else if (!err) {
		err = check_off_ok(env, regno, arg);
	}
	if (err)
		return err;
	if (arg == BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE) {
		err = brt_dynptr_release_arg(env, regno);
		if (err)
			return err;
		meta->release_regno = regno;
	} else if (arg == BRT_ARG_PTR_TO_ALLOC_MEM || arg == BRT_ARG_PTR_TO_SOCK_RELEASE ||
		   arg == BRT_ARG_PTR_TO_KPTR_OR_NULL_RELEASE) {
		if (!reg->ref_obj_id) {
			brt_verr(env, "R%d must be referenced when passed to release function\n",
				 regno);
			return -EINVAL;
		}
		meta->release_regno = regno;
	}
	if (reg->ref_obj_id && arg != BRT_ARG_KPTR_XCHG_DEST) {
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
		/* bpf_rbtree_add's less() runs under the tree's lock */
		if (brt_in_rbtree_cb(env)) {
			brt_verr(env, "can't spin_{lock,unlock} in rbtree cb\n");
			return -EACCES;
		}
		return brt_process_spin_lock(env, regno,
					     fn->id == BPF_FUNC_spin_lock ? BRT_SPIN_TAKE : 0);
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
		return brt_timer_arg(env, regno, meta);
	case BRT_ARG_PTR_TO_PERCPU_BTF_ID: /* the struct r0 points to (meta->ret_btf) */
		meta->ret_btf_id = reg->btf_id;
		meta->ret_home = reg->map_idx;
		/* bpf_per_cpu_ptr() is NULL for a CPU past nr_cpu_ids, which the kernel's
		 * verifier does not make the program check: the checked engine, which stops
		 * at the NULL access where the kernel would fault */
		if (fn->id == BPF_FUNC_per_cpu_ptr)
			env->btf_loads = 1;
		return 0;
	case BRT_ARG_KPTR_XCHG_DEST:
		err = brt_graph_kptr_dest(env, regno, &meta->kptr);
		meta->has_kptr = !err;
		return err;
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
		/* pop and peek fill the value (the kernel's MEM_UNINIT | MEM_WRITE: raw mode,
		 * the bytes become STACK_MISC and a spill there is gone), but a bloom
		 * filter's peek reads it (resolve_map_arg_type()) */
		if (fn->id == BPF_FUNC_map_pop_elem ||
		    (fn->id == BPF_FUNC_map_peek_elem &&
		     meta->map->type != BPF_MAP_TYPE_BLOOM_FILTER))
			return brt_check_helper_mem(env, regno, (int)meta->map->value_size, 0,
						    BRT_WRITE, BRT_STACK_RAW);
		return brt_check_helper_mem(env, regno, (int)meta->map->value_size, 0, BRT_READ,
					    BRT_STACK_READ);
	case BRT_ARG_PTR_TO_MEM_IPHDR: /* ARG_PTR_TO_FIXED_SIZE_MEM: the header's size */
	case BRT_ARG_PTR_TO_MEM_TCPHDR:
		return brt_check_helper_mem(env, regno, 20, 0, BRT_READ, 0);
	case BRT_ARG_PTR_TO_MEM_IPV6HDR:
		return brt_check_helper_mem(env, regno, 40, 0, BRT_READ, 0);
	case BRT_ARG_PTR_TO_LONG: /* written whole, uninitialised stack allowed, aligned */
		err = brt_check_helper_mem(env, regno, 8, 0, BRT_WRITE, BRT_STACK_RAW);
		return err ? err : brt_check_ptr_alignment(env, reg, 0, 8, 1);
	case BRT_ARG_PTR_TO_CONST_STR:
		return brt_check_const_str(env, regno);
	case BRT_ARG_PTR_TO_DYNPTR_RDONLY:
	case BRT_ARG_PTR_TO_DYNPTR_LOCAL_UNINIT:
	case BRT_ARG_PTR_TO_DYNPTR_RINGBUF_UNINIT:
	case BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE:
		return brt_dynptr_helper_arg(env, regno, arg, meta);
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
