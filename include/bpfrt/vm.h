/* bpfrt/vm.h - running raw eBPF instructions in this process: load a program into a vm,
 * give it helpers, run it on a block of memory with one of the engines (fast interpreter,
 * checked interpreter, JIT).  Included by <bpfrt.h>; not meant to be included on its own.
 */
#ifndef BPFRT_VM_H
#define BPFRT_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "bpfrt/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Execution engines.
 *   BPFRT_ENGINE_INTERP   the fast interpreter: no memory checks, for programs a verifier
 *                         accepted (an unverified program can crash the process);
 *   BPFRT_ENGINE_CHECKED  the checked interpreter: runs ANY program safely; every memory
 *                         access is checked against the regions the program may touch, and
 *                         an instruction budget bounds the run;
 *   BPFRT_ENGINE_JIT      native x86-64 code (where built; same trust rule as INTERP);
 *   BPFRT_ENGINE_DEFAULT  CHECKED, the only engine that is safe for arbitrary programs. */
enum bpfrt_engine {
	BPFRT_ENGINE_DEFAULT = 0,
	BPFRT_ENGINE_INTERP,
	BPFRT_ENGINE_CHECKED,
	BPFRT_ENGINE_JIT,
};

/* One program run's state, handed to helpers (bpfrt_run_stop(), bpfrt_run_grant(),
 * bpfrt_run_user()). */
struct bpfrt_run_ctx;

/* A helper: r1-r5 in, r0 out, plus the run's context.  Same ABI as the library's built-in
 * helpers (and the JIT calls it directly). */
typedef uint64_t (*bpfrt_helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx);

/* A program ready to run, with its own helper table. */
struct bpfrt_vm;

/* Run budget (every engine; off by default, as in the kernel, which has none): bounds
 * one run of an untrusted program, e.g. nested bpf_loop() calls that would otherwise run
 * for weeks.  Counted where a run can repeat itself, so straight-line code costs nothing:
 * a backward jump charges the length of the loop it closes (its distance back, in
 * instructions) each time it is taken (the JIT: each time it is executed), and every
 * callback call (bpf_loop, bpf_for_each_map_elem, user ring buffer drain, ...) charges 1.
 * The count is thus an estimate of the instructions run, exact for single-block loops.
 * A time budget (CLOCK_MONOTONIC, wall time) is checked every 16,384 counted
 * instructions.  A spent budget stops the run at once: the run returns -ETIME with
 * "run budget of N instructions exhausted" (or "N ns") in err; maps keep what the
 * program wrote before.  Without a budget, runs cost exactly what they did before. */
struct bpfrt_vm_opts {
	size_t sz;              /* sizeof(struct bpfrt_vm_opts); use BPFRT_OPTS() */
	enum bpfrt_engine engine;
	uint64_t insn_budget;   /* CHECKED: instructions one run may execute; 0 = 1e9
				 * (a safety cap counting every instruction: -E2BIG) */
	size_t max_insns;       /* longest accepted program; 0 = 1,000,000 (the kernel's) */
	uint64_t run_budget;    /* every engine: counted instructions per run; 0 = none */
	uint64_t run_budget_ns; /* every engine: ns per run; 0 = none */
};
#define bpfrt_vm_opts__last run_budget_ns

/* Load n instructions into a new vm.  The program is checked structurally (every
 * instruction decodes, jumps land inside the program, lddw is complete), not verified:
 * run unverified programs with BPFRT_ENGINE_CHECKED.  On that engine a built-in helper's
 * pointer arguments (memory with its size, strings, fixed headers) are checked against
 * the run's memory before the call ("helper N called with argument M ... outside the
 * run's memory", -EFAULT), and the built-in helpers whose arguments only the verifier
 * can vouch for (the context, sockets, kernel objects, dynptrs, timers, locks, ring
 * buffer records) and the kernel functions are not offered ("call to unknown helper N");
 * helpers set on the vm check their own (bpfrt_run_access_ok()).  The other engines
 * trust an unverified program whole.  The instructions are copied.
 * lddw loads its 64-bit immediate whatever its src_reg (resolve map pseudo forms first),
 * except BPF_PSEUDO_FUNC: the index of the function's first instruction, which bpf_loop
 * (helper 181) calls back on the same engine.
 * opts may be NULL.  On success stores the vm in *out and returns 0.  On failure writes a
 * message naming the instruction into err (errlen bytes, may be 0) and returns -EINVAL
 * (bad instruction or options), -E2BIG (too long), -EOPNOTSUPP (engine not built) or
 * -ENOMEM; errno is set too. */
BPFRT_API int bpfrt_vm_load(const struct bpf_insn *insns, size_t n,
			    const struct bpfrt_vm_opts *opts, struct bpfrt_vm **out, char *err,
			    size_t errlen);

/* ---- helpers: bpfrt_helper_register() --------------------------------------------------
 * One call adds a helper, described by struct bpfrt_helper_proto below, either
 *   - to one vm (vm given): its program calls fn for the id from its next run on,
 *     replacing the built-in or registered helper with that id if any.  Such a program is
 *     not verified, so the prototype's kinds and gpl_only are not used; or
 *   - to the process (vm NULL): BPF_PROG_LOAD (bpfrt_bpf()) checks every call to it like a
 *     call to a built-in helper (argument kinds, memory sizes, initialised stack, GPL
 *     licence, same messages), and every vm created afterwards (the interpreters and the
 *     JIT) calls fn.  Programs and vms that exist already are unaffected.  Process-wide
 *     registration is thread-safe and permanent for the life of the process. */

/* Argument kinds, the kernel's ARG_* (same values as the verifier's internal list). */
enum bpfrt_helper_arg {
	BPFRT_HELPER_ARG_DONTCARE = 0,       /* unused; every later argument must be too */
	BPFRT_HELPER_ARG_ANYTHING = 1,       /* any initialised scalar (no pointers) */
	BPFRT_HELPER_ARG_CONST_MAP_PTR = 2,  /* a map (lddw map fd); opaque to the helper */
	BPFRT_HELPER_ARG_PTR_TO_MAP_KEY = 3, /* key_size readable bytes of the earlier map */
	BPFRT_HELPER_ARG_PTR_TO_MAP_VALUE = 4,
	BPFRT_HELPER_ARG_PTR_TO_MEM = 5,        /* initialised readable memory; size next */
	BPFRT_HELPER_ARG_PTR_TO_UNINIT_MEM = 6, /* memory the helper fills; size next */
	BPFRT_HELPER_ARG_CONST_SIZE = 7,        /* size > 0 bounding the previous pointer */
	BPFRT_HELPER_ARG_CONST_SIZE_OR_ZERO = 8,
	BPFRT_HELPER_ARG_PTR_TO_CTX = 9, /* the program's context */
	BPFRT_HELPER_ARG_PTR_TO_STACK = 12,
};

/* Return kinds: r0 is an unknown scalar (INTEGER) or must not be read (VOID). */
enum bpfrt_helper_ret {
	BPFRT_HELPER_RET_INTEGER = 0,
	BPFRT_HELPER_RET_VOID = 1,
};

/* Host helper ids should start here, clear of the kernel's BPF_FUNC_* numbers (any id
 * from 1 to BPFRT_HELPER_MAX_ID that no built-in helper uses is accepted; the ids from
 * 240 on, as many as the kernel functions bpfrt offers, are built-in: verified kfunc
 * calls go there). */
#define BPFRT_HELPER_HOST_BASE 1000
/* The highest helper id (a call's imm above it is never a helper). */
#define BPFRT_HELPER_MAX_ID 65535

struct bpfrt_helper_proto {
	size_t sz;                      /* sizeof(struct bpfrt_helper_proto); BPFRT_OPTS() */
	uint32_t id;                    /* the call's imm */
	const char *name;               /* for messages; copied; at most 63 bytes (vm: any
					 * length, or NULL) */
	bpfrt_helper_fn fn;
	enum bpfrt_helper_ret ret;
	enum bpfrt_helper_arg args[5];  /* r1-r5 */
	bool gpl_only;                  /* refused to programs with a non-GPL licence */
	uint8_t reserved[7];            /* zero; see BPFRT_OPTS() */
};
#define bpfrt_helper_proto__last gpl_only

/* Register a helper for one vm (vm given) or for programs loaded from now on (vm NULL);
 * see above.  Returns 0 or, with errno set too:
 *   -EINVAL  NULL proto or fn, bad sz, id above BPFRT_HELPER_MAX_ID; and, process-wide:
 *            NULL name, id 0, an unknown kind, a memory pointer not followed by a size, a
 *            size not after a memory pointer, a map key/value without an earlier map, an
 *            argument after a DONTCARE;
 *   -EEXIST  process-wide: id is a built-in helper (or kernel function) or already
 *            registered;
 *   -ENOMEM  the table could not grow.
 * There is no fixed count: every id up to BPFRT_HELPER_MAX_ID can hold one helper (for
 * the process, each id no built-in helper uses), and the tables grow with them. */
BPFRT_API int bpfrt_helper_register(struct bpfrt_vm *vm, const struct bpfrt_helper_proto *proto);

/* Run the program once with r1 = mem (0 when mem is NULL), r2 = mem_len; LD_ABS/LD_IND
 * read the same bytes as the packet.  The CHECKED engine lets the program read and write
 * [mem, mem + mem_len), its stack frames and what helpers grant.  On success stores r0 and
 * returns 0.  On a fault writes "insn N: <reason>" into err and returns -EFAULT (memory
 * access outside every region, unknown helper, call stack deeper than 8 frames, falling
 * off the end of the program), -E2BIG (CHECKED: insn_budget exhausted) or -ETIME (the run
 * budget, run_budget or run_budget_ns, is spent).  Several threads
 * may run the same vm at once. */
BPFRT_API int bpfrt_vm_run(struct bpfrt_vm *vm, void *mem, size_t mem_len, uint64_t *r0,
			   char *err, size_t errlen);

/* A program's JIT code as a plain function, for a caller that runs it per packet and wants
 * the run to cost what a call of compiled C costs: fn(mem, mem_len) returns what r0 of
 * bpfrt_vm_run(vm, mem, mem_len, ...) would be (its runs cannot fault).  Only for JIT
 * programs that need no run context: no run budget (run_budget, run_budget_ns), and no
 * helper call but of helpers that read none (bpf_get_prandom_u32, bpf_ktime_get_ns and
 * the other clocks, bpf_get_smp_processor_id, bpf_get_numa_node_id; the JIT pass
 * leafcall calls them so); NULL for every other
 * vm (use bpfrt_vm_run()).  A program that calls helpers gets the code for the vm's
 * helpers as they are at this call: after bpfrt_helper_register() on the vm, ask again
 * (the function returned before keeps calling the helpers it was compiled for).  Valid
 * until bpfrt_vm_free(vm); several threads may call it at once. */
#define BPFRT_HAVE_VM_NATIVE 1
typedef uint64_t (*bpfrt_vm_native_fn)(void *mem, size_t mem_len);
BPFRT_API bpfrt_vm_native_fn bpfrt_vm_native(const struct bpfrt_vm *vm);

/* Free a vm (NULL is fine). */
BPFRT_API void bpfrt_vm_free(struct bpfrt_vm *vm);

/* For helpers. */

/* End the program when the current helper returns, with r0 as its result. */
BPFRT_API void bpfrt_run_stop(struct bpfrt_run_ctx *ctx, uint64_t r0);

/* CHECKED engine: let the program access [ptr, ptr + len) (read-only unless writable) for
 * the rest of this run, e.g. the map value a helper returns.  No-op for other engines.
 * Returns 0 or -ENOMEM. */
BPFRT_API int bpfrt_run_grant(struct bpfrt_run_ctx *ctx, void *ptr, size_t len, int writable);

/* CHECKED engine: 1 when the program may access [ptr, ptr + len) (for writing when
 * writable), else 0.  Helpers that dereference pointer arguments call it first.  Always 1
 * for other engines. */
BPFRT_API int bpfrt_run_access_ok(struct bpfrt_run_ctx *ctx, const void *ptr, size_t len,
				  int writable);

/* The opaque pointer the caller of the run supplied (NULL for bpfrt_vm_run()). */
BPFRT_API void *bpfrt_run_user(struct bpfrt_run_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
