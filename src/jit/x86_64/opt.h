/* opt.h - what the x86-64 JIT's optimisation pass files share (internal to
 * src/jit/x86_64/): the state of one brt_jit_optimise() run, the jump predicates, and the
 * passes that live outside opt.c.  opt.c's opening comment says how a pass works.
 *
 * Adding a pass:
 *   1. a row PASS(name, "what it does") in passes.def, at the place in the order its
 *      plans need (BRT_JIT_PASSES=-name and brt_jit_env.passes_off come from the row);
 *   2. the pass in its own file (opt_<name>.c), everything in it static but the pass;
 *   3. its declaration below, under its file;
 *   4. one call in brt_jit_optimise() (opt.c), in passes.def's order, guarded by
 *      BRT_JIT_PASS(name) (and by !st->blind_seed if its code must not carry an
 *      immediate verbatim under constant blinding).
 * A pass only fills st->plan (x86.h's struct jit_plan) for instructions whose plan is
 * still PLAN_NONE (or that it knows how to combine with), and proves what it relies on
 * from the instructions alone: the code must stay right for programs the verifier
 * never saw.
 */
#ifndef BPFRT_SRC_JIT_X86_64_OPT_H
#define BPFRT_SRC_JIT_X86_64_OPT_H

#include <stdbool.h>
#include <stdint.h>

#include "isa/isa.h"
#include "jit/x86_64/x86.h"

struct cstate;

/* One run of the passes over a program. */
struct opt {
	struct jit_state *st;
	const uint16_t *ops;     /* decoded row of each instruction (BRT_OP_INVALID: lddw's
				  * second slot) */
	uint8_t *target;         /* per insn: a jump, call or function entry may land here */
	struct cstate *cin;      /* opt.c's const_at(): the state at each target, settled */
	bool consts_done;        /* const_at()'s dataflow has run */
	bool consts_ok;          /* ... and settled (else no register is known) */
	/* opt.c's dataflows for the passes in other files, handed down so that those files
	 * call nothing of the driver that calls them (tests/build/layers.txt): whether reg
	 * holds a known value (*v) whenever pc starts; whether every register of mask is
	 * dead after q (a bounded walk: false when unsure) */
	bool (*const_at)(struct opt *o, size_t pc, unsigned reg, uint64_t *v);
	bool (*dead_after)(const struct opt *o, size_t q, uint16_t mask);
};

/* A jump with a target in this function (not a bpf-to-bpf call). */
static inline bool is_branch(enum brt_op op)
{
	return brt_isa_has_target(op) && op != BRT_OP_call_local;
}

static inline bool is_ja(enum brt_op op)
{
	return op == BRT_OP_ja || op == BRT_OP_ja32;
}

/* opt_const.c: the value instruction pc (an ALU operation or a load; not a move of a
 * constant or register, which opt.c's dataflow knows itself) writes into its dst, given the
 * registers of known (values in val): loads from frozen read-only map values when the
 * pass rodata is on, ALU operations on known operands when constjump is.  False: unknown. */
bool brt_jit_const_eval(const struct jit_state *st, const uint16_t *ops, size_t pc,
			uint16_t known, const uint64_t *val, uint64_t *out);

/* --- passes in files of their own (called by brt_jit_optimise() in passes.def's order) */

/* opt_const.c; 0 or -ENOMEM */
int brt_jit_pass_rodata(struct opt *o);
int brt_jit_pass_constjump(struct opt *o);

/* opt_bswap.c */
void brt_jit_pass_bswap(struct opt *o);

/* opt_bits.c */
void brt_jit_pass_knownbits(struct opt *o);
void brt_jit_pass_bittest(struct opt *o);

/* opt_stackreg.c; 0 or -ENOMEM (adds the callee-saved registers it takes to funcs[0].saved) */
int brt_jit_pass_stackreg(struct opt *o);

/* opt_prandomreg.c (after every pass that plans calls away); 0 or -ENOMEM */
int brt_jit_pass_prandomreg(struct opt *o);

#endif
