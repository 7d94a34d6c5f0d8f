/* helper_proto.h - how a helper function is described: its C signature (the helper ABI
 * shared by the interpreter, the JIT and host applications) and its prototype for the
 * verifier (argument and return kinds, modelled on the kernel's bpf_func_proto); and the
 * questions vm and the verifier ask the helper registry.
 *
 * The registry (src/helpers/) sits above every folder that implements helpers: it joins
 * the prototypes of helpers.def with the functions each folder lists in its header
 * (BRT_VM_HELPERS, BRT_MAPS_HELPERS, ...), and holds the helpers the host registered.
 * vm and the verifier only see the interface at the end of this file, so they name no
 * folder above them; the registry implements it (bound at link time, no init order).
 */
#ifndef BPFRT_SRC_VM_HELPER_PROTO_H
#define BPFRT_SRC_VM_HELPER_PROTO_H

#include <stddef.h>
#include <stdint.h>

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
};

/* Kinds of helper return values. */
enum brt_ret_type {
	BRT_RET_INTEGER,
	BRT_RET_VOID,
	BRT_RET_PTR_TO_MAP_VALUE_OR_NULL,
	BRT_RET_PTR_TO_ALLOC_MEM_OR_NULL, /* ringbuf_reserve: must be released on every path */
};

struct bpfrt_run_ctx;

/* The helper ABI: r1-r5 in, r0 out, plus the run's context (the 6th System V argument,
 * so the JIT passes it in r9).  Helpers reach the run's state through ctx. */
typedef uint64_t (*brt_helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx);

/* Which program types may call a helper: the kernel's per-type sets (bpf_base_func_proto,
 * sk_filter_func_proto, tc_cls_act_func_proto, xdp_func_proto, cg_skb_func_proto,
 * kprobe/tp/raw_tp/pe_prog_func_proto), the column each folder gives its rows. */
enum brt_helper_types {
	BRT_FOR_SOCK = 1 << 0,    /* socket filters */
	BRT_FOR_TC = 1 << 1,      /* sched_cls, sched_act */
	BRT_FOR_XDP = 1 << 2,
	BRT_FOR_CGSKB = 1 << 3,   /* cgroup_skb */
	BRT_FOR_KPROBE = 1 << 4,
	BRT_FOR_TP = 1 << 5,      /* tracepoints */
	BRT_FOR_RAWTP = 1 << 6,
	BRT_FOR_PERF = 1 << 7,    /* perf_event */
	BRT_FOR_NET = BRT_FOR_SOCK | BRT_FOR_TC | BRT_FOR_XDP | BRT_FOR_CGSKB,
	BRT_FOR_TRACE = BRT_FOR_KPROBE | BRT_FOR_TP | BRT_FOR_RAWTP | BRT_FOR_PERF,
	BRT_FOR_ALL = BRT_FOR_NET | BRT_FOR_TRACE,
	BRT_NEED_PERFMON = 1 << 8, /* only with CAP_PERFMON for non-tracing types */
	BRT_NEED_BPF = 1 << 9,     /* only with CAP_BPF */
};

struct brt_helper_proto {
	uint32_t id;                /* BPF_FUNC_* number */
	const char *name;           /* "map_lookup_elem" (logs print "bpf_" + name) */
	uint8_t gpl_only;           /* refused for programs with a non-GPL licence */
	uint8_t ret;                /* enum brt_ret_type */
	uint8_t args[5];            /* enum brt_arg_type */
	uint8_t host;               /* registered by the host: logs print name as given */
	uint16_t types;             /* enum brt_helper_types; 0: every type (host helpers) */
};

/* ---- the registry's interface (implemented in src/helpers/) ---------------------------- */

/* The prototype of helper id, a built-in one or one the host registered, or NULL when
 * no helper has that id.  Entries never change once visible: callers keep the pointer. */
const struct brt_helper_proto *brt_helper_get(uint32_t id);

/* A new table of every helper's function indexed by id (NULL where none): the built-in
 * helpers and those the host registered so far.  Stores its length in *n; the caller
 * frees it.  NULL when out of memory. */
brt_helper_fn *brt_helper_table_new(size_t *n);

#endif
