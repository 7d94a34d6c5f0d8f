/* helper_set.c - which helpers exist and which programs may call them: a helper exists when
 * the helper registry knows it (a row of src/vm/helpers.def, or the host registered it), and
 * the program type may call it (the kernel's per-type helper sets, summarised below, its
 * GPL and sleepable rules).  calls.c asks here before it checks a call's arguments.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

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

const char *brt_verifier_helper_name(int32_t id)
{
	const struct brt_helper_proto *p = find_proto(id);

	if (p && p->host)
		return p->name;
	return brt_isa_helper_name(id);
}

/* ---- which program types may call which helper (the kernel's *_func_proto) ------------- */
/* Each helper's row in the registry says which helper sets offer it (BRT_FOR_*, given by
 * the folder that implements it); a program type has the set prog_types.def names. */
_Static_assert(BRT_PROG_TYPE_COUNT <= 62, "helper set bits overlap BRT_NEED_*");

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
	       (eat == BPF_TRACE_KPROBE_MULTI || eat == BRT_TRACE_UPROBE_MULTI ||
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
	.types = BRT_HSET(BPF_PROG_TYPE_TRACING) | BRT_FOR_SYSCALL,
};

/* tracing_prog_func_proto()'s bpf_sk_storage_get and _delete (net/core/bpf_sk_storage.c
 * bpf_sk_storage_{get,delete}_tracing_proto): a kernel socket pointer or NULL, where the
 * socket programs' take a full socket; .allowed is sk_storage_tracing_allowed() */
static const struct brt_helper_proto sk_storage_get_tracing = {
	.id = BPF_FUNC_sk_storage_get,
	.name = "sk_storage_get",
	.ret = BRT_RET_PTR_TO_MAP_VALUE_OR_NULL,
	.args = { BRT_ARG_CONST_MAP_PTR, BRT_ARG_PTR_TO_BTF_ID_SK_OR_NULL,
		  BRT_ARG_PTR_TO_MAP_VALUE_OR_NULL, BRT_ARG_ANYTHING },
	.types = BRT_HSET(BPF_PROG_TYPE_TRACING) | BRT_FOR_SYSCALL,
};
static const struct brt_helper_proto sk_storage_delete_tracing = {
	.id = BPF_FUNC_sk_storage_delete,
	.name = "sk_storage_delete",
	.ret = BRT_RET_INTEGER,
	.args = { BRT_ARG_CONST_MAP_PTR, BRT_ARG_PTR_TO_BTF_ID_SK_OR_NULL },
	.types = BRT_HSET(BPF_PROG_TYPE_TRACING) | BRT_FOR_SYSCALL,
};

/* bpf_sk_storage_tracing_allowed(): iterators and tp_btf programs, and fentry/fexit of a
 * function that is not one of bpf_sk_storage*() (the helpers take its lock).  A program
 * that extends or traces another BPF program (dst_prog) is refused too; bpfrt's tracing
 * programs attach to kernel functions only. */
static int sk_storage_tracing_allowed(const struct brt_env *env)
{
	switch (env->opts->expected_attach_type) {
	case BPF_TRACE_ITER:
	case BPF_TRACE_RAW_TP:
		return 1;
	case BPF_TRACE_FENTRY:
	case BPF_TRACE_FEXIT:
		return !env->attach_name || strncmp(env->attach_name, "bpf_sk_storage", 14);
	default:
		return 0;
	}
}

/* tc_cls_act_func_proto()'s and lwt_out_func_proto()'s bpf_get_cgroup_classid: of the
 * packet (the context), where bpf_base_func_proto()'s takes no argument */
static const struct brt_helper_proto skb_cgroup_classid = {
	.id = BPF_FUNC_get_cgroup_classid,
	.name = "get_cgroup_classid",
	.ret = BRT_RET_INTEGER,
	.args = { BRT_ARG_PTR_TO_CTX },
	.types = BRT_FOR_TC | BRT_FOR_LWT,
};

/* tracing_prog_func_proto()'s bpf_xdp_get_buff_len (bpf_xdp_get_buff_len_trace_proto): of a
 * kernel xdp_buff, where XDP programs' is of their context.  A syscall program, the only
 * one of these types bpfrt runs, has no such pointer to give it. */
static const struct brt_helper_proto xdp_buff_len_trace = {
	.id = BPF_FUNC_xdp_get_buff_len,
	.name = "xdp_get_buff_len",
	.ret = BRT_RET_INTEGER,
	.args = { BRT_ARG_PTR_TO_BTF_ID_XDP_BUFF },
	.types = BRT_HSET(BPF_PROG_TYPE_TRACING) | BRT_FOR_SYSCALL,
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

/* bpf_iter_get_func_proto(): the tcp iterator's own (bpf_iter_tcp_get_func_proto():
 * bpf_sk_setsockopt_proto / bpf_sk_getsockopt_proto, of a kernel socket pointer rather than
 * of the context); no other iterator registers any.  At run time the registry's functions
 * of the ids answer as for a socket that is not the hook's: -EINVAL (vm/helpers.c). */
static const struct brt_helper_proto iter_tcp_setsockopt = {
	.id = BPF_FUNC_setsockopt,
	.name = "setsockopt",
	.ret = BRT_RET_INTEGER,
	.args = { BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON, BRT_ARG_ANYTHING, BRT_ARG_ANYTHING,
		  BRT_ARG_PTR_TO_MEM, BRT_ARG_CONST_SIZE },
	.types = BRT_HSET(BPF_PROG_TYPE_TRACING),
};
static const struct brt_helper_proto iter_tcp_getsockopt = {
	.id = BPF_FUNC_getsockopt,
	.name = "getsockopt",
	.ret = BRT_RET_INTEGER,
	.args = { BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON, BRT_ARG_ANYTHING, BRT_ARG_ANYTHING,
		  BRT_ARG_PTR_TO_UNINIT_MEM, BRT_ARG_CONST_SIZE },
	.types = BRT_HSET(BPF_PROG_TYPE_TRACING),
};

static int iter_tcp(const struct brt_env *env)
{
	return env->opts->prog_type == BPF_PROG_TYPE_TRACING &&
	       env->opts->expected_attach_type == BPF_TRACE_ITER && env->attach_name &&
	       !strcmp(env->attach_name, "bpf_iter_tcp");
}

/* the helpers struct_ops programs have from bpf_tcp_ca_get_func_proto() only (their
 * rows' BRT_FOR_TCP_CA bit) */
static int tcp_ca_only(int32_t id)
{
	switch (id) {
	case BPF_FUNC_tcp_send_ack:
	case BPF_FUNC_sk_storage_get:
	case BPF_FUNC_sk_storage_delete:
	case BPF_FUNC_getsockopt:
	case BPF_FUNC_setsockopt:
	case BPF_FUNC_ktime_get_coarse_ns:
		return 1;
	default:
		return 0;
	}
}

/* Is the struct_ops program's member (expected_attach_type's index) this one? */
static int member_is(struct brt_env *env, const char *name)
{
	const struct btf_member *m;
	const char *mname;

	if (!env->st_ops.type || env->opts->expected_attach_type >=
				       BTF_INFO_VLEN(env->st_ops.type->info))
		return 0;
	m = (const struct btf_member *)(env->st_ops.type + 1) + env->opts->expected_attach_type;
	mname = brt_btf_str(env->opts->attach_btf, m->name_off);
	return mname && !strcmp(mname, name);
}

static int helper_allowed(struct brt_env *env, const struct brt_helper_proto *fn)
{
	uint64_t bit = BRT_HSET(brt_prog_type(env->opts->prog_type)->helpers);

	/* bpf_tcp_ca_get_func_proto() falls back on bpf_base_func_proto(): the rows every
	 * type's set has, with the capability checks a syscall program's get (bpf_dummy_ops
	 * has no get_func_proto: none) */
	if (env->opts->prog_type == BPF_PROG_TYPE_STRUCT_OPS &&
	    env->st_ops.kind == BRT_STOPS_TCP_CA && (fn->types & BRT_FOR_ALL) == BRT_FOR_ALL)
		bit = BRT_FOR_SYSCALL;

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
	/* bpf_tcp_ca_get_func_proto(): a congestion control's own helpers, not other structs'
	 * programs; no socket options in release() */
	if (env->opts->prog_type == BPF_PROG_TYPE_STRUCT_OPS && !fn->host &&
	    tcp_ca_only(fn->id) &&
	    (env->st_ops.kind != BRT_STOPS_TCP_CA ||
	     ((fn->id == BPF_FUNC_getsockopt || fn->id == BPF_FUNC_setsockopt) &&
	      member_is(env, "release"))))
		return 0;
	/* sock_addr_func_proto(): bpf_bind in the connect hooks only */
	if (fn->id == BPF_FUNC_bind && !fn->host &&
	    env->opts->expected_attach_type != BPF_CGROUP_INET4_CONNECT &&
	    env->opts->expected_attach_type != BPF_CGROUP_INET6_CONNECT)
		return 0;
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

int brt_helper_might_sleep(const struct brt_env *env, int32_t id)
{
	int sleepable = (env->opts->prog_flags & BPF_F_SLEEPABLE) != 0;

	switch (id) {
	case BPF_FUNC_copy_from_user:
	case BPF_FUNC_copy_from_user_task:
		return 1;
	/* a sleepable program gets their sleepable prototypes (prog->sleepable: the base
	 * set's get_task_stack, kprobe_prog_func_proto()'s get_stack), which 6.18.44 marks
	 * might_sleep (6.18.35's source does not): refused in an RCU, preemption or IRQ
	 * section as the kernel refuses them */
	case BPF_FUNC_get_task_stack:
		return sleepable;
	case BPF_FUNC_get_stack:
		return sleepable && env->opts->prog_type == BPF_PROG_TYPE_KPROBE;
	/* syscall programs' bpf_sys_bpf, bpf_btf_find_by_name_kind, bpf_sys_close (6.18.44
	 * marks them; bpfrt does not offer them yet) */
	case BPF_FUNC_sys_bpf:
	case BPF_FUNC_btf_find_by_name_kind:
	case BPF_FUNC_sys_close:
		return env->opts->prog_type == BPF_PROG_TYPE_SYSCALL;
	default:
		return 0;
	}
}

/* The prototype this program offers for helper id, NULL when it offers none (the kernel's
 * get_helper_proto() through the type's get_func_proto) */
static const struct brt_helper_proto *type_proto(struct brt_env *env, int32_t id)
{
	const struct brt_helper_proto *fn = find_proto(id);
	/* tracing_prog_func_proto()'s own prototypes: tracing programs', and syscall
	 * programs' (syscall_prog_func_proto() falls back on it; LSM has its own) */
	int tracing = env->opts->prog_type == BPF_PROG_TYPE_TRACING ||
		      env->opts->prog_type == BPF_PROG_TYPE_SYSCALL;

	if (id == BPF_FUNC_get_socket_cookie && tracing)
		fn = &sock_ptr_cookie;
	if (id == BPF_FUNC_sk_storage_get && fn && !fn->host && tracing)
		fn = &sk_storage_get_tracing;
	if (id == BPF_FUNC_sk_storage_delete && fn && !fn->host && tracing)
		fn = &sk_storage_delete_tracing;
	if ((id == BPF_FUNC_setsockopt || id == BPF_FUNC_getsockopt) && fn && !fn->host &&
	    iter_tcp(env))
		fn = id == BPF_FUNC_setsockopt ? &iter_tcp_setsockopt : &iter_tcp_getsockopt;
	if (id == BPF_FUNC_xdp_get_buff_len && fn && !fn->host && tracing)
		fn = &xdp_buff_len_trace;
	if (id == BPF_FUNC_get_cgroup_classid && fn && !fn->host &&
	    (BRT_HSET(brt_prog_type(env->opts->prog_type)->helpers) & skb_cgroup_classid.types))
		fn = &skb_cgroup_classid;
	if (id == BPF_FUNC_sk_assign && fn && !fn->host &&
	    env->opts->prog_type == BPF_PROG_TYPE_SK_LOOKUP)
		fn = &sk_lookup_assign;
	return fn && helper_allowed(env, fn) ? fn : NULL;
}

uint16_t brt_helper_arg_regs(struct brt_env *env, int32_t id)
{
	const struct brt_helper_proto *fn = type_proto(env, id);
	uint16_t regs = 0;

	/* one the program cannot call reads r1-r5 (the kernel's get_call_summary() fails
	 * and compute_insn_live_regs() takes every argument register) */
	if (!fn)
		return 0x3e;
	for (int i = 0; i < 5; i++)
		if (fn->args[i] != BRT_ARG_DONTCARE)
			regs |= (uint16_t)(1u << (i + 1));
	return regs;
}

int brt_helper_resolve(struct brt_env *env, int32_t id, const struct brt_helper_proto **out)
{
	const struct brt_helper_proto *fn;

	if (id < 0 || (id >= __BPF_FUNC_MAX_ID + 2 && !find_proto(id))) {
		brt_verr(env, "invalid func unknown#%d\n", id);
		return -EINVAL;
	}
	fn = type_proto(env, id);
	if (!fn) {
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
	/* the prototypes' .allowed (bpf_d_path_allowed(): d_path.c) */
	if ((id == BPF_FUNC_d_path && !fn->host && !brt_d_path_allowed(env)) ||
	    ((fn == &sk_storage_get_tracing || fn == &sk_storage_delete_tracing) &&
	     !sk_storage_tracing_allowed(env))) {
		brt_verr(env, "helper call is not allowed in probe\n");
		return -EINVAL;
	}
	/* check_helper_call()'s order: these come before the arguments are checked */
	if (!fn->host && brt_helper_might_sleep(env, id)) {
		if (!brt_in_sleepable(env)) {
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
		if (env->cur->active_irq_id) {
			brt_verr(env, "sleepable helper %s#%d in IRQ-disabled region\n",
				 brt_verifier_helper_name(id), id);
			return -EINVAL;
		}
	}
	*out = fn;
	return 0;
}

int brt_check_get_func_ip(struct brt_env *env, int32_t id)
{
	if (id != BPF_FUNC_get_func_ip)
		return 0;
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
	return 0;
}
