/* helper_maps.c - which helpers a map type may be passed to, both ways (the kernel's
 * check_map_func_compatibility()), and what a call records of its map (the map an insn
 * always sees, read-only maps, tail calls' program arrays).
 */
#include <errno.h>

#include "verifier/internal.h"

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

int brt_helper_map_compat(struct brt_env *env, const struct brt_call_meta *meta, int32_t id)
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
	case BPF_FUNC_skb_output:
	case BPF_FUNC_xdp_output:
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

int brt_helper_record_map(struct brt_env *env, const struct brt_call_meta *meta, int32_t id)
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
