/* opt_prandomreg.c - pass `prandomreg`: runs of inlined bpf_get_prandom_u32 calls
 * (pass inlinehelper, inline.c) keep the thread's state in a register.
 *
 * Each inlined call loads the state from the thread's TLS, steps it and stores it back;
 * the next call's load then waits on that store (store-to-load forwarding, ~4-5 cycles
 * on top of the step's own 6), so the bench's 16 calls in a row were a chain through
 * memory.  No eBPF load or store reaches bpfrt's TLS: only a call (a helper, kfunc,
 * callx, tail call, bpf-to-bpf call), the program's exit or a signal handler's run on
 * this thread can read or write the state.  So between two inlined calls a and b where
 *   - every instruction in (a, b) is one whose emitter leaves the scratch registers
 *     alone (brt_jit_scratch_free(): no division, whose emitter parks rdx in TMP2, no
 *     atomic, call or packet load) and falls through (no jump or exit);
 *   - nothing in (a, b] is a jump target or a function entry: b is reached only from a;
 *   - neither has a plan of another pass (constjump drops code no path reaches),
 * a keeps the state in TMP2 (PRANDOM_KEEP: no store) and b steps it there (PRANDOM_HELD:
 * no load).  The last call of a run stores it, so the state is in memory again before
 * anything that could look; the first loads it.  The seeding at the program's entries
 * (inline.c) is untouched: a run starts after it.
 *
 * A signal handler on this thread that runs a program drawing numbers in the middle of a
 * run sees the state from before the run's first call, and the run's last store
 * overwrites what it drew: the sequence then repeats numbers, as the one-call window of
 * load-step-store already allowed (bpfrt itself runs no program from a signal handler).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "jit/x86_64/opt.h"
#include "jit/x86_64/x86.h"

/* Whether row op's emitter leaves TMP2 alone and falls through to the next row. */
static bool keeps_state(const struct jit_state *st, enum brt_op op)
{
	switch (brt_ops[op].shape) {
	case BRT_SHAPE_JA:
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_JMP_IMM:
	case BRT_SHAPE_JMP_REG:
	case BRT_SHAPE_EXIT:
		return false;
	default:
		return brt_jit_scratch_free(st, op);
	}
}

/* Whether call b continues the run of call a < b (both inlined sites). */
static bool joins(const struct opt *o, size_t a, size_t b)
{
	const struct jit_state *st = o->st;

	if (o->target[b] || st->plan[a].kind != PLAN_NONE || st->plan[b].kind != PLAN_NONE)
		return false;
	for (size_t pc = a + 1; pc < b; pc++) {
		if (o->target[pc])
			return false;
		if (o->ops[pc] != BRT_OP_INVALID && !keeps_state(st, (enum brt_op)o->ops[pc]))
			return false;
	}
	return true;
}

int brt_jit_pass_prandomreg(struct opt *o)
{
	struct jit_state *st = o->st;
	size_t prev = SIZE_MAX; /* the inlined call before pc */

	if (!st->inline_prandom)
		return 0;
	for (size_t pc = 0; pc < st->n; pc++) {
		enum brt_op op = (enum brt_op)o->ops[pc];

		if (op == BRT_OP_INVALID)
			continue;
		if (!brt_jit_is_inline_site(st, pc, op))
			continue;
		if (prev != SIZE_MAX && joins(o, prev, pc)) {
			if (!st->prandom_run) {
				st->prandom_run = calloc(st->n, 1);
				if (!st->prandom_run)
					return -ENOMEM;
			}
			st->prandom_run[prev] |= PRANDOM_KEEP;
			st->prandom_run[pc] |= PRANDOM_HELD;
		}
		prev = pc;
	}
	return 0;
}
