/* helper_proto.h - how a helper function is described: its C signature (the helper ABI
 * shared by the interpreter, the JIT and host applications) and its prototype for the
 * verifier (argument and return kinds, modelled on the kernel's bpf_func_proto).
 * The helpers themselves are rows of helpers.def.
 */
#ifndef BPFRT_SRC_VM_HELPER_PROTO_H
#define BPFRT_SRC_VM_HELPER_PROTO_H

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

struct brt_helper_proto {
	uint32_t id;                /* BPF_FUNC_* number */
	const char *name;           /* "map_lookup_elem" (logs print "bpf_" + name) */
	brt_helper_fn fn;
	uint8_t gpl_only;           /* refused for programs with a non-GPL licence */
	uint8_t ret;                /* enum brt_ret_type */
	uint8_t args[5];            /* enum brt_arg_type */
};

#endif
