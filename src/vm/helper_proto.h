/* helper_proto.h - how a helper function is described: its C signature (the helper ABI
 * shared by the interpreter, the JIT and host applications) and its prototype for the
 * verifier (argument and return kinds, modelled on the kernel's bpf_func_proto); and the
 * questions vm and the verifier ask the helper registry.
 *
 * The registry (src/helpers/) sits above every folder that implements helpers: it joins
 * the prototypes of helpers.def with the functions each folder lists in its header
 * (BRT_VM_HELPERS, BRT_MAPS_HELPERS, ...), and holds the helpers the host registered.
 * vm and the verifier only see struct brt_helper_source at the end of this file, which
 * the registry hands down to them when the library is loaded, so they name no folder
 * above them.
 */
#ifndef BPFRT_SRC_VM_HELPER_PROTO_H
#define BPFRT_SRC_VM_HELPER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

/* Kinds of helper arguments, as the verifier checks them. */
enum brt_arg_type {
	BRT_ARG_DONTCARE,          /* unused argument */
	BRT_ARG_ANYTHING,          /* any initialised value */
	BRT_ARG_CONST_MAP_PTR,     /* pointer to a map object (lddw map fd) */
	BRT_ARG_PTR_TO_MAP_KEY,    /* pointer to key_size readable bytes */
	BRT_ARG_PTR_TO_MAP_VALUE,  /* pointer to value_size readable bytes */
	BRT_ARG_PTR_TO_MEM,        /* pointer to readable memory; size in the next argument */
	BRT_ARG_PTR_TO_UNINIT_MEM, /* pointer to writable memory; size in the next argument */
	BRT_ARG_CONST_SIZE,        /* constant size > 0 for the previous pointer */
	BRT_ARG_CONST_SIZE_OR_ZERO,
	BRT_ARG_PTR_TO_CTX,        /* the program's context */
	BRT_ARG_PTR_TO_ALLOC_MEM,  /* memory from a reserving helper (ringbuf record) */
	BRT_ARG_CONST_ALLOC_SIZE_OR_ZERO,
	BRT_ARG_PTR_TO_STACK,      /* pointer to the stack */
	BRT_ARG_PTR_TO_FUNC,       /* a function of the program (lddw BPF_PSEUDO_FUNC) */
	BRT_ARG_PTR_TO_STACK_OR_NULL, /* pointer to the stack, or 0 */
	BRT_ARG_PTR_TO_MEM_OR_NULL, /* readable memory or 0 (0 needs a zero size next) */
	BRT_ARG_PTR_TO_SOCK_COMMON, /* any socket pointer (sock_common, sock, tcp_sock, xdp_sock) */
	BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON, /* the same, or a BTF-typed struct sock_common */
	BRT_ARG_PTR_TO_SOCK_RELEASE, /* bpf_sk_release: a referenced socket, released */
	BRT_ARG_PTR_TO_MAP_VALUE_OR_NULL, /* value_size readable bytes, or 0 */
	BRT_ARG_PTR_TO_BTF_ID_TASK, /* a kernel struct task_struct (PTR_TO_BTF_ID, not NULL) */
	BRT_ARG_PTR_TO_BTF_ID_SEQ_FILE, /* a kernel struct seq_file (an iterator's output) */
	BRT_ARG_PTR_TO_BTF_ID_SOCK_COMMON_OR_NULL, /* a socket (bpf_sock or kernel BTF) or 0 */
	BRT_ARG_PTR_TO_SOCKET_OR_NULL, /* a full socket (struct bpf_sock) or 0 */
	BRT_ARG_PTR_TO_BTF_ID_TASK_OR_NULL, /* a kernel struct task_struct, or 0 */
	BRT_ARG_PTR_TO_MEM_WRITE,  /* initialised memory the helper writes (ARG_PTR_TO_MEM |
				    * MEM_WRITE): not read-only; stack it covers becomes unknown */
	BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL, /* the same or 0 (ARG_PTR_TO_MEM_OR_NULL | MEM_WRITE:
					   * 0 needs a zero size next) */
	BRT_ARG_PTR_TO_SPIN_LOCK,  /* the struct bpf_spin_lock of a map value */
	/* ARG_PTR_TO_FIXED_SIZE_MEM | MEM_RDONLY: readable memory of the header's size (no
	 * size argument follows): struct iphdr (20), struct ipv6hdr (40), struct tcphdr (20) */
	BRT_ARG_PTR_TO_MEM_IPHDR,
	BRT_ARG_PTR_TO_MEM_IPV6HDR,
	BRT_ARG_PTR_TO_MEM_TCPHDR,
	BRT_ARG_PTR_TO_BTF_ID_CGROUP_OR_NULL, /* a kernel struct cgroup, or 0 */
	/* ARG_PTR_TO_FIXED_SIZE_MEM | MEM_UNINIT | MEM_WRITE | MEM_ALIGNED of 8 bytes: the
	 * long bpf_strtol/strtoul write (no size argument follows) */
	BRT_ARG_PTR_TO_LONG,
	/* ARG_PTR_TO_CONST_STR: a NUL-terminated string in a frozen read-only array */
	BRT_ARG_PTR_TO_CONST_STR,
	/* ARG_PTR_TO_DYNPTR (verifier/dynptr.c): a struct bpf_dynptr on the stack (or a
	 * callback's const one).  _RDONLY: an initialised one of any type the helper does
	 * not change (| MEM_RDONLY); _LOCAL_UNINIT / _RINGBUF_UNINIT: 16 bytes of stack the
	 * helper makes a dynptr of that type (| DYNPTR_TYPE_* | MEM_UNINIT | MEM_WRITE);
	 * _RINGBUF_RELEASE: a ring buffer dynptr the helper releases (| OBJ_RELEASE) */
	BRT_ARG_PTR_TO_DYNPTR_RDONLY,
	BRT_ARG_PTR_TO_DYNPTR_LOCAL_UNINIT,
	BRT_ARG_PTR_TO_DYNPTR_RINGBUF_UNINIT,
	BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE,
	/* ARG_PTR_TO_TIMER: a map value pointer at its struct bpf_timer (verifier/helper_timer.c) */
	BRT_ARG_PTR_TO_TIMER,
	/* ARG_PTR_TO_PERCPU_BTF_ID: a percpu object's RCU pointer (a __percpu_kptr field's
	 * load), or a kernel per-CPU variable (a __ksym's lddw), which bpfrt cannot reach:
	 * it checks the type as the kernel and then refuses that one (helper_args.c) */
	BRT_ARG_PTR_TO_PERCPU_BTF_ID,
	/* a kernel struct path, or a struct holding one at the pointer's offset (bpf_d_path;
	 * verifier/d_path.c) */
	BRT_ARG_PTR_TO_BTF_ID_PATH,
	/* bpf_kptr_xchg (verifier/graph.c): ARG_KPTR_XCHG_DEST, a map value or an object of
	 * bpf_obj_new at a referenced kptr field; ARG_PTR_TO_BTF_ID_OR_NULL | OBJ_RELEASE, the
	 * object to stash (its reference released) or 0 */
	BRT_ARG_KPTR_XCHG_DEST,
	BRT_ARG_PTR_TO_KPTR_OR_NULL_RELEASE,
	/* ARG_PTR_TO_CTX_OR_NULL: the program's context, or 0 (bpf_get_netns_cookie: 0 asks
	 * for the initial namespace's cookie) */
	BRT_ARG_PTR_TO_CTX_OR_NULL,
	/* ARG_PTR_TO_BTF_ID of struct tcp_sock (bpf_tcp_send_ack: a congestion control's
	 * socket, which its context types as a tcp_sock) */
	BRT_ARG_PTR_TO_BTF_ID_TCP_SOCK,
	/* ARG_PTR_TO_BTF_ID of struct sk_buff / struct xdp_buff (bpf_skb_output,
	 * bpf_xdp_output: a tracing program's packet argument) */
	BRT_ARG_PTR_TO_BTF_ID_SK_BUFF,
	BRT_ARG_PTR_TO_BTF_ID_XDP_BUFF,
	/* ARG_PTR_TO_BTF_ID of struct file (bpf_sock_from_file) */
	BRT_ARG_PTR_TO_BTF_ID_FILE,
	/* ARG_PTR_TO_BTF_ID_OR_NULL of struct sock_common (a tracing program's
	 * bpf_sk_storage_get/delete): a kernel pointer to a struct starting with one, or 0;
	 * not the socket programs' socket types */
	BRT_ARG_PTR_TO_BTF_ID_SK_OR_NULL,
};

/* Kinds of helper return values. */
enum brt_ret_type {
	BRT_RET_INTEGER,
	BRT_RET_VOID,
	BRT_RET_PTR_TO_MAP_VALUE_OR_NULL,
	BRT_RET_PTR_TO_MAP_VALUE,         /* get_local_storage: never NULL */
	BRT_RET_PTR_TO_ALLOC_MEM_OR_NULL, /* ringbuf_reserve: must be released on every path */
	BRT_RET_PTR_TO_SOCKET_OR_NULL,      /* struct bpf_sock (a lookup: acquired) */
	BRT_RET_PTR_TO_SOCK_COMMON_OR_NULL, /* struct bpf_sock's common part */
	BRT_RET_PTR_TO_TCP_SOCK_OR_NULL,    /* struct bpf_tcp_sock */
	BRT_RET_PTR_TO_BTF_ID_TASK,       /* a trusted struct task_struct of the kernel's BTF */
	BRT_RET_KPTR_OR_NULL,             /* bpf_kptr_xchg: the kptr field's type, acquired */
	BRT_RET_PTR_TO_BTF_ID_OR_NULL,    /* a kernel struct the helper names (the bpf_skc_to_*
					   * casts: the verifier's table of their structs) */
	BRT_RET_PTR_TO_BTF_ID,            /* the same, never NULL (bpf_task_pt_regs) */
	BRT_RET_PTR_TO_DYNPTR_MEM_OR_NULL, /* bpf_dynptr_data: a slice of its dynptr's memory */
	BRT_RET_PTR_TO_MEM_OR_BTF_ID,     /* bpf_this_cpu_ptr / bpf_per_cpu_ptr: one CPU's copy
					   * of the percpu object the argument points to */
};

/* Helper ids newer than the 6.1 uapi header bpfrt builds against. */
#define BRT_FUNC_cgrp_storage_get 210
#define BRT_FUNC_cgrp_storage_delete 211

struct bpfrt_run_ctx;

/* The helper ABI: r1-r5 in, r0 out, plus the run's context (the 6th System V argument,
 * so the JIT passes it in r9).  Helpers reach the run's state through ctx. */
typedef uint64_t (*brt_helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx);

/* The declaration of helper function fn, for a folder's X(id, fn, types) list of the
 * helpers it implements (BRT_VM_HELPERS(BRT_HELPER_DECLARE)): the list is the one place
 * that names them. */
#define BRT_HELPER_DECLARE(id, fn, types)                                                  \
	uint64_t fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,        \
		    struct bpfrt_run_ctx *ctx);

/* The definition of helper fn as impl(r1, r2, ctx, variant): the helpers that are one
 * operation in two variants (submit or discard, pop or peek) share impl, and each is
 * only the variant it passes. */
#define BRT_HELPER_VARIANT(fn, impl, variant)                                              \
	uint64_t fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,        \
		    struct bpfrt_run_ctx *ctx)                                              \
	{                                                                                  \
		(void)r3, (void)r4, (void)r5;                                              \
		return impl(r1, r2, ctx, variant);                                         \
	}

/* Which program types may call a helper: one bit per helper set, the kernel's per-type
 * sets (bpf_base_func_proto, sk_filter_func_proto, tc_cls_act_func_proto, ...).  A set
 * is named by the program type whose *_func_proto it is (isa/prog_types.def's helpers
 * column: sched_act has sched_cls's set); a helper row's mask ORs the sets that offer
 * it, the column each folder gives its rows.  64 bits: every type of linux/bpf.h has a
 * bit of its own (types are below BRT_PROG_TYPE_COUNT), and the top bits are conditions. */
#define BRT_HSET(type) (UINT64_C(1) << (type))
#define BRT_FOR_SOCK BRT_HSET(BPF_PROG_TYPE_SOCKET_FILTER)
#define BRT_FOR_TC BRT_HSET(BPF_PROG_TYPE_SCHED_CLS) /* sched_cls, sched_act */
#define BRT_FOR_XDP BRT_HSET(BPF_PROG_TYPE_XDP)
#define BRT_FOR_CGSKB BRT_HSET(BPF_PROG_TYPE_CGROUP_SKB)
#define BRT_FOR_KPROBE BRT_HSET(BPF_PROG_TYPE_KPROBE)
#define BRT_FOR_TP BRT_HSET(BPF_PROG_TYPE_TRACEPOINT)
/* raw_tracepoint (and _writable) and tracing: the kernel's tracing_prog_func_proto()
 * falls back to raw_tp_prog_func_proto() */
#define BRT_FOR_RAWTP (BRT_HSET(BPF_PROG_TYPE_RAW_TRACEPOINT) | BRT_HSET(BPF_PROG_TYPE_TRACING))
#define BRT_FOR_PERF BRT_HSET(BPF_PROG_TYPE_PERF_EVENT)
#define BRT_FOR_CGSOCK BRT_HSET(BPF_PROG_TYPE_CGROUP_SOCK)
#define BRT_FOR_SOCKADDR BRT_HSET(BPF_PROG_TYPE_CGROUP_SOCK_ADDR)
#define BRT_FOR_SOCKOPS BRT_HSET(BPF_PROG_TYPE_SOCK_OPS)
#define BRT_FOR_SKSKB BRT_HSET(BPF_PROG_TYPE_SK_SKB)
#define BRT_FOR_SKMSG BRT_HSET(BPF_PROG_TYPE_SK_MSG)
#define BRT_FOR_LWT_IN BRT_HSET(BPF_PROG_TYPE_LWT_IN)
#define BRT_FOR_LWT_OUT BRT_HSET(BPF_PROG_TYPE_LWT_OUT)
#define BRT_FOR_LWT_XMIT BRT_HSET(BPF_PROG_TYPE_LWT_XMIT)
#define BRT_FOR_LWT_SEG6 BRT_HSET(BPF_PROG_TYPE_LWT_SEG6LOCAL)
#define BRT_FOR_CGDEV BRT_HSET(BPF_PROG_TYPE_CGROUP_DEVICE)
#define BRT_FOR_SYSCTL BRT_HSET(BPF_PROG_TYPE_CGROUP_SYSCTL)
#define BRT_FOR_SOCKOPT BRT_HSET(BPF_PROG_TYPE_CGROUP_SOCKOPT)
#define BRT_FOR_FLOW BRT_HSET(BPF_PROG_TYPE_FLOW_DISSECTOR)
#define BRT_FOR_REUSEPORT BRT_HSET(BPF_PROG_TYPE_SK_REUSEPORT)
#define BRT_FOR_SKLOOKUP BRT_HSET(BPF_PROG_TYPE_SK_LOOKUP)
#define BRT_FOR_SYSCALL BRT_HSET(BPF_PROG_TYPE_SYSCALL)
#define BRT_FOR_NF BRT_HSET(32) /* BPF_PROG_TYPE_NETFILTER, newer than the 6.1 uapi header */
/* struct_ops programs of tcp_congestion_ops (bpf_tcp_ca_get_func_proto(); helper_set.c
 * keeps them from the other structs' programs) */
#define BRT_FOR_TCP_CA BRT_HSET(BPF_PROG_TYPE_STRUCT_OPS)
/* lwt_out_func_proto's helpers, which the other three lwt sets extend */
#define BRT_FOR_LWT (BRT_FOR_LWT_IN | BRT_FOR_LWT_OUT | BRT_FOR_LWT_XMIT | BRT_FOR_LWT_SEG6)
/* the cgroup hooks on a socket or device (cgroup_current_func_proto and friends) */
#define BRT_FOR_CGROUP                                                                   \
	(BRT_FOR_CGSOCK | BRT_FOR_SOCKADDR | BRT_FOR_SOCKOPS | BRT_FOR_CGDEV |          \
	 BRT_FOR_SYSCTL | BRT_FOR_SOCKOPT)
#define BRT_FOR_NET                                                                      \
	(BRT_FOR_SOCK | BRT_FOR_TC | BRT_FOR_XDP | BRT_FOR_CGSKB | BRT_FOR_CGROUP |      \
	 BRT_FOR_SKSKB | BRT_FOR_SKMSG | BRT_FOR_LWT | BRT_FOR_FLOW | BRT_FOR_REUSEPORT |  \
	 BRT_FOR_SKLOOKUP | BRT_FOR_NF)
#define BRT_FOR_TRACE (BRT_FOR_KPROBE | BRT_FOR_TP | BRT_FOR_RAWTP | BRT_FOR_PERF)
/* bpf_base_func_proto: every type's set falls back on it */
#define BRT_FOR_ALL (BRT_FOR_NET | BRT_FOR_TRACE | BRT_FOR_SYSCALL)
/* bpf_perf_event_output: the types whose set offers it (not flow_dissector, sk_reuseport
 * or netfilter) */
#define BRT_FOR_PERF_OUTPUT                                                              \
	(BRT_FOR_ALL & ~(BRT_FOR_FLOW | BRT_FOR_REUSEPORT | BRT_FOR_NF))
#define BRT_NEED_PERFMON (UINT64_C(1) << 62) /* only with CAP_PERFMON for non-tracing types */
#define BRT_NEED_BPF (UINT64_C(1) << 63)     /* only with CAP_BPF */

struct brt_helper_proto {
	uint32_t id;                /* BPF_FUNC_* number */
	const char *name;           /* "map_lookup_elem" (logs print "bpf_" + name) */
	uint8_t gpl_only;           /* refused for programs with a non-GPL licence */
	uint8_t ret;                /* enum brt_ret_type */
	uint8_t args[5];            /* enum brt_arg_type */
	uint8_t host;               /* registered by the host: logs print name as given */
	uint64_t types;             /* BRT_FOR_* sets and BRT_NEED_*; 0: every type (host helpers) */
};

/* ---- what vm and the verifier ask the registry ------------------------------------------ */
/* The registry sits above vm and the verifier, so it hands them its answers when the
 * library is loaded (src/helpers/source.c gives this to brt_vm_set_helper_source() and
 * brt_verify_set_helper_source()); neither names a folder above it.  Before that (never
 * in a linked library: libbpfrt.a is one object, so the registration always comes along)
 * there are no helpers.
 *   get        the prototype of helper id, a built-in one or one the host registered, or
 *              NULL when no helper has that id; entries never change once visible, so
 *              callers keep the pointer;
 *   table_new  a new table of every helper's function indexed by id (NULL where none):
 *              the built-in helpers and those the host registered so far; stores its
 *              length in *n, the caller frees it; NULL when out of memory;
 *   table_shared  the same table, shared: built when the host's registrations changed
 *              since the last one and kept for the process's life (never written, never
 *              freed: a vm that needs its own copies it first); NULL when out of memory. */
struct brt_helper_source {
	const struct brt_helper_proto *(*get)(uint32_t id);
	brt_helper_fn *(*table_new)(size_t *n);
	const brt_helper_fn *(*table_shared)(size_t *n);
};

/* ---- kernel functions (kfuncs.def) ------------------------------------------------------ */
/* The kernel's KF_* flags of a kfunc (include/linux/btf.h), with the kernel's values. */
#define BRT_KF_ACQUIRE (1u << 0)      /* returns a reference the program must release */
#define BRT_KF_RELEASE (1u << 1)      /* releases the reference its argument holds */
#define BRT_KF_RET_NULL (1u << 2)     /* may return NULL */
#define BRT_KF_TRUSTED_ARGS (1u << 4) /* pointer arguments trusted (referenced or trusted) */
#define BRT_KF_SLEEPABLE (1u << 5)
#define BRT_KF_RCU (1u << 7)          /* pointer arguments trusted or RCU-protected */
#define BRT_KF_ITER_NEW (1u << 8)     /* an open-coded iterator's constructor */
#define BRT_KF_ITER_NEXT (1u << 9)    /* ... its next method */
#define BRT_KF_ITER_DESTROY (1u << 10) /* ... its destructor */
#define BRT_KF_RCU_PROTECTED (1u << 11) /* to be called inside an RCU read section */
/* The kernel's kfunc hooks (bpf_prog_type_to_kfunc_hook()) as program-type masks: a set
 * registered for BPF_PROG_TYPE_TRACING serves tracing, tracepoint, perf_event and lsm. */
#define BRT_KHOOK_TRACING                                                                \
	(BRT_HSET(BPF_PROG_TYPE_TRACING) | BRT_HSET(BPF_PROG_TYPE_TRACEPOINT) |          \
	 BRT_HSET(BPF_PROG_TYPE_PERF_EVENT) | BRT_HSET(BPF_PROG_TYPE_LSM))
#define BRT_KSET_COMMON ((UINT64_C(1) << 48) - 1) /* BTF_KFUNC_HOOK_COMMON: every type */
#define BRT_KSET_NF_CT (BRT_HSET(BPF_PROG_TYPE_XDP) | BRT_HSET(BPF_PROG_TYPE_SCHED_CLS))
#define BRT_KSET_CPUMASK                                                                 \
	(BRT_KHOOK_TRACING | BRT_HSET(BPF_PROG_TYPE_STRUCT_OPS) | BRT_HSET(BPF_PROG_TYPE_SYSCALL))
/* A set's filter (btf_kfunc_id_set.filter) that admits only iterators: programs whose
 * expected_attach_type is BPF_TRACE_ITER (net/core/filter.c's tracing_iter_filter) */
#define BRT_KSET_ITER_ONLY (UINT64_C(1) << 63)
#define BRT_KSET_SK_ITER (BRT_KHOOK_TRACING | BRT_KSET_ITER_ONLY)
/* kernel/bpf/helpers.c's generic_kfunc_set: tracing's hook, tc, XDP, struct_ops, syscall,
 * cgroup_skb */
#define BRT_KSET_GENERIC                                                                 \
	(BRT_KSET_CPUMASK | BRT_HSET(BPF_PROG_TYPE_SCHED_CLS) | BRT_HSET(BPF_PROG_TYPE_XDP) |   \
	 BRT_HSET(BPF_PROG_TYPE_CGROUP_SKB))

/* net/core/filter.c's bpf_kfunc_set_skb: tc, sk_skb, socket filters, cgroup_skb, lwt,
 * netfilter and tracing's hook; bpf_kfunc_set_skb_meta: tc only */
#define BRT_KSET_SKB                                                                     \
	(BRT_HSET(BPF_PROG_TYPE_SCHED_CLS) | BRT_HSET(BPF_PROG_TYPE_SCHED_ACT) |         \
	 BRT_HSET(BPF_PROG_TYPE_SK_SKB) | BRT_HSET(BPF_PROG_TYPE_SOCKET_FILTER) |       \
	 BRT_HSET(BPF_PROG_TYPE_CGROUP_SKB) | BRT_HSET(BPF_PROG_TYPE_LWT_OUT) |         \
	 BRT_HSET(BPF_PROG_TYPE_LWT_IN) | BRT_HSET(BPF_PROG_TYPE_LWT_XMIT) |            \
	 BRT_HSET(BPF_PROG_TYPE_LWT_SEG6LOCAL) | BRT_HSET(32) | BRT_KHOOK_TRACING)
#define BRT_KSET_SKB_META (BRT_HSET(BPF_PROG_TYPE_SCHED_CLS) | BRT_HSET(BPF_PROG_TYPE_SCHED_ACT))
/* kernel/bpf/crypto.c's crypt_kfunc_set: tc (cls and act) and XDP */
#define BRT_KSET_CRYPT                                                                   \
	(BRT_HSET(BPF_PROG_TYPE_SCHED_CLS) | BRT_HSET(BPF_PROG_TYPE_SCHED_ACT) |         \
	 BRT_HSET(BPF_PROG_TYPE_XDP))

/* A graph root in a map value or an allocated object: where it is, whether a list
 * (bpf_list_head) or a tree (bpf_rb_root), and where the node is in the objects it holds */
struct brt_obj_root {
	uint32_t off;
	uint32_t node_off;
	uint32_t rb;
};
/* rb: 0 a bpf_list_head, 1 a bpf_rb_root, BRT_ROOT_KPTR a kptr field (8 bytes: a pointer
 * to an object of bpf_obj_new that bpf_kptr_xchg stashed; node_off 0), dropped with it */
#define BRT_ROOT_KPTR 2u
/* roots an allocated object may have (the kernel's limit is its record's 11 fields) */
#define BRT_OBJ_MAX_ROOTS 11

/* A type bpf_obj_new_impl() may allocate in a verified program: the verifier lists the
 * types its calls name (a constant type id of the program's BTF) and the run context
 * carries the list, which the kfunc reads its size and special fields from (the kernel
 * patches the size into the call instead; the engines here run the program as given). */
struct brt_obj_type {
	uint32_t btf_id;       /* the struct's id in the program's BTF; 0 ends a list */
	uint32_t size;         /* bytes */
	int32_t refcount_off;  /* its struct bpf_refcount, -1: none (set to 1 on allocation) */
	uint32_t percpu;       /* bpf_percpu_obj_new's: one copy per possible CPU */
	/* its bpf_list_head and bpf_rb_root fields: a dropped object's lists and trees drop
	 * their nodes (the kernel's bpf_obj_free_fields()) */
	uint32_t nroots;
	struct brt_obj_root roots[BRT_OBJ_MAX_ROOTS];
};
#define BRT_MAX_OBJ_TYPES 32

/* One kfuncs.def row. */
struct brt_kfunc {
	const char *name;
	uint32_t flags; /* BRT_KF_* */
	uint64_t sets;  /* program types (BRT_HSET bits) */
};
enum {
#define KFUNC(name, flags, sets) BRT_KFUNC_##name,
#define KFUNC_AS(name, fn, flags, sets) KFUNC(name, flags, sets)
#include "vm/kfuncs.def"
#undef KFUNC_AS
#undef KFUNC
	BRT_KFUNC_COUNT
};
/* A verified kfunc call becomes a helper call of this id + the row's index: above every
 * helper id of linux/bpf.h (the kernel adds no helpers since 6.x: new functions are
 * kfuncs), so a program cannot name these ids as helpers (no prototype answers for them:
 * "invalid func unknown#N"), and the host cannot register them (-EEXIST). */
#define BRT_KFUNC_HELPER_BASE 240u
_Static_assert(__BPF_FUNC_MAX_ID + 2 <= (int)BRT_KFUNC_HELPER_BASE, "kfunc ids above helpers");

#endif
