/* helper_ret.c - what r0 holds after a helper call: its prototype's return type, refined
 * for the helpers the kernel refines (do_refine_retval_range(), nr_cpu_ids), the struct a
 * cast returns, and the reference an acquiring helper's result holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/btf.h>

#include "btf/btf.h"
#include "verifier/internal.h"

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
	case BPF_FUNC_kptr_xchg:
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
	case BPF_FUNC_sock_from_file: /* bpf_sock_from_file_btf_ids */
		return "socket";
	default:
		return NULL;
	}
}

int brt_helper_set_return(struct brt_env *env, const struct brt_helper_proto *fn,
			  const struct brt_call_meta *meta, int32_t id, int insn_idx)
{
	struct brt_reg *r0 = &brt_cur_regs(env)[BPF_REG_0];

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
			return -EINVAL;
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
		    meta->map->type == BPF_MAP_TYPE_SOCKHASH) {
			r0->type = PTR_TO_SOCKET | PTR_MAYBE_NULL;
			r0->map_idx = (uint16_t)(meta->map_idx + 1); /* a socket's map */
		}
		break;
	case BRT_RET_PTR_TO_MAP_VALUE: /* the cgroup storage of the run: always there */
		if (!meta->map) {
			brt_verr(env, "kernel subsystem misconfigured verifier\n");
			return -EINVAL;
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
			return -EINVAL;
		}
		break;
	case BRT_RET_PTR_TO_MEM_OR_BTF_ID:
		/* a percpu object's copy (returns_cpu_specific_alloc_ptr): never NULL to the
		 * verifier, even bpf_per_cpu_ptr's of a CPU past nr_cpu_ids, which is NULL at
		 * run time (the kernel drops the helper's PTR_MAYBE_NULL here) */
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_BTF_ID | MEM_ALLOC | MEM_RCU;
		r0->btf_id = meta->ret_btf_id;
		r0->map_idx = meta->ret_home;
		break;
	case BRT_RET_KPTR_OR_NULL: /* the kptr field's type: an object of bpf_obj_new */
		if (!meta->has_kptr)
			return -EFAULT;
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_BTF_ID | PTR_MAYBE_NULL | MEM_ALLOC |
			   (meta->kptr.kind == BRT_GF_KPTR_PERCPU ? MEM_PERCPU : 0);
		r0->btf_id = meta->kptr.value_id;
		r0->map_idx = meta->kptr.home;
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
			return -EINVAL;
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
	if (r0->type == PTR_TO_MAP_VALUE && meta->map &&
	    (meta->map->spin_lock_off1 || meta->map->res_spin_lock_off1))
		r0->id = ++env->id_gen;
	/* as the kernel: a cast shares its argument's reference; an acquired object gets a
	 * new one, whose id also serves for the NULL check (so the id above is skipped) */
	if (is_ptr_cast_function(id)) {
		r0->ref_obj_id = meta->ref_obj_id;
	} else if (is_acquire_function(id, meta->map)) {
		int ref = brt_acquire_ref(env, insn_idx);

		if (ref < 0)
			return ref;
		r0->id = r0->ref_obj_id = (uint32_t)ref;
	}
	return 0;
}
