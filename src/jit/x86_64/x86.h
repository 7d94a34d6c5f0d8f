/* x86.h - what the x86-64 JIT's files share: the compilation state of one program, the
 * eBPF-to-x86 register map (regmap.c) and the entry points between the driver (jit.c),
 * the per-instruction emitters (insn.c) and calls, exits and packet loads (calls.c).
 */
#ifndef BPFRT_SRC_JIT_X86_64_X86_H
#define BPFRT_SRC_JIT_X86_64_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa/isa.h"
#include "jit/jit.h"
#include "jit/x86_64/emit.h"

/* Chain elements the hash probe (lookup.c) follows inline before it calls the map's
 * lookup: chains are short (n_buckets >= max_entries), so a longer one is a crowded
 * bucket or a chain another process scribbled into a loop; either way the map's lookup,
 * which bounds its own walk, judges it.  A plain number: dump.c's notes spell it. */
#define JIT_PROBE_CHAIN 8
#define JIT_STR_(x) #x
#define JIT_STR(x) JIT_STR_(x)

/* Scratch registers no eBPF register lives in (see regmap.c). */
#define AUX R10 /* temporaries; clobbered by calls */
#define TMP R11
#define TMP2 R9 /* free except while a helper call is being set up (6th argument) */
#define ANCHOR R12 /* points at the entry frame's slots (JIT_SLOT_*) for the whole run */
/* Packet programs that call nothing else and never name r2-r5 (classic filters) keep the
 * packet's start and length in r2/r3's registers for the whole run (jit_state.pkt_regs):
 * no run ctx, no ANCHOR, and an LD_ABS is a compare, a load and a byte swap. */
#define PKT_DATA RSI
#define PKT_LEN RDX
/* Their batch entry (brt_jit_batch_entry) loops in registers no such program names: */
#define BATCH_END R8  /* one past the last struct brt_jit_pkt */
#define BATCH_POS R12 /* current packet's byte offset from BATCH_END: < 0; 0 in single runs */
#define BATCH_OUT RCX /* where the current packet's r0 goes */

/* Slots at [ANCHOR + n] in the entry frame. */
#define JIT_SLOT_CTX 0    /* struct bpfrt_run_ctx * passed to brt_jit_call() */
#define JIT_SLOT_CALLX 8  /* helper id of the callx being made */
#define JIT_SLOT_PROG 16  /* struct brt_jit_prog * (for callx's resolver) */
#define JIT_SLOTS_SIZE 24
/* may_goto's counter: the 8 bytes below a function's 512 (jit.c plan_frames) */
#define BRT_JIT_LOOPS_OFF (-(int32_t)BRT_STACK_SIZE - 8)

/* Size of the stand-in context of a run without one (brt_jit_call with ctx NULL); packet
 * field offsets must lie inside it. */
#define JIT_NO_CTX_WORDS 32

/* Labels of the shared stubs at the end of the code. */
enum jit_stub {
	STUB_STOPPED, /* a helper stopped the run: return ctx->stop_r0 */
	STUB_ZERO,    /* LD_ABS/LD_IND out of bounds: return 0 */
	STUB_UNWIND,  /* return rax from any depth: reset rsp from ANCHOR, restore, ret */
	STUB_TAIL,    /* bpf_tail_call set ctx->tail_entry: unwind, jump there */
	STUB_DONE,    /* pkt_regs: exit; the batch's next packet, or return */
	STUB_BUDGET,  /* called when the run budget's counter wraps: ask, stop or return */
	STUB_PRANDOM, /* pass inlinehelper: seed this thread's prandom state, back to the entry */
	STUB_COUNT,
};

struct brt_jit_prog {
	struct brt_jit_prog_head head; /* entry point: must stay first (jit.h) */
	uint8_t *code;          /* read+exec mapping */
	size_t code_size;       /* bytes of code */
	size_t map_size;        /* bytes mapped */
	uint32_t *insn_off;     /* offset of each eBPF instruction's code (after prologues) */
	size_t n;               /* instructions */
	uint32_t *func_insn;    /* first instruction of each function */
	uint32_t *func_entry;   /* offset of its prologue */
	uint32_t *func_cb;      /* offset of its C entry (callbacks), 0 when none */
	size_t nfuncs;
	uint32_t stubs_off;     /* the shared exits (code_size when there are none) */
	bool needs_ctx;         /* the code reads the run ctx (helper calls, packet loads) */
	bool seeds_prandom;     /* pass inlinehelper: STUB_PRANDOM first among the stubs */
	uint32_t pkt_entry_off; /* pkt_regs: the entry taking the packet in registers, else 0 */
	uint32_t batch_entry_off; /* pkt_regs: the batch entry, else 0 */
	uint8_t *lookup_kind;   /* per insn: enum brt_jit_lookup_kind of a bound lookup, or
				 * NULL when the program has none (lookup.c); HASH sites
				 * whose key pass constkey knows carry LOOKUP_CONST_KEY too */
	bpfrt_helper_fn (*helper)(void *arg, uint32_t id); /* callx resolver */
	void *helper_arg;
};

/* What the optimisation passes (opt.c) chose for one instruction; PLAN_NONE (the
 * default) is the instruction's own emitter. */
enum jit_plan_kind {
	PLAN_NONE,
	PLAN_SKIP,   /* emits nothing: folded into an earlier instruction's plan, or dropped */
	PLAN_ROTATE, /* dst = rol(src [* mul], rol), width w64; covers a whole idiom */
	PLAN_ZEXT,   /* dst = (u32)dst: mov dst32, dst32 */
	PLAN_SEXT,   /* dst = (s32)dst: movsxd dst, dst32 */
	PLAN_LEA,    /* dst = src + imm: lea, width w64; covers the copy and the add after it */
	PLAN_JINV,   /* a conditional jump emitted inverted to the target of the ja after it
		      * (which is PLAN_SKIP): pass jumpfold; insn.c's jmp_cond emits it */
	PLAN_EQSET,  /* pass eqset, at the chain's first jeq: rol compares of dst (the jeqs
		      * and the closing jne), sete into src and mreg or'ed, one jz to pc + imm;
		      * mul: a constant move sits before the jne (emitted first); insn.c */
	PLAN_BT,     /* pass bittest: bt src, dst (the and of `1 << x & k`: dst is x) */
	PLAN_BTJ,    /* pass bittest: the jump on r != 0 (== 0) as jc (jnc), on the flags
		      * PLAN_BT set; rol: inverted to pc + imm (jumpfold's); insn.c */
	PLAN_CONST,  /* pass rodata: dst = st->consts[imm] (a load of frozen bytes) */
	PLAN_JMP,    /* pass constjump: a conditional jump always taken, as jmp pc + imm;
		      * insn.c (a never-taken one is PLAN_SKIP) */
	PLAN_MOVBE_LD, /* pass bswap: dst = bswap(load of 4 or 8 bytes at [src + imm]), movbe:
			* a load and the be32/be64 after it (PLAN_SKIP) */
	PLAN_MOVBE_ST, /* pass bswap: [dst + imm] = bswap(src) of 2, 4 or 8 bytes (w64: the
			* width), movbe: a be16/32/64 of src (PLAN_SKIP) and this store, src
			* dead after it */
	PLAN_ROL16,  /* pass bswap: be16 of a value below 2^16: rol dst16, 8 (no movzx) */
	PLAN_SLOT_LD,  /* pass stackreg: dst = the slot's x86 register mreg (w64: 8 bytes, else
			* mov dst32: the register holds the slot zero-extended) */
	PLAN_SLOT_ST,  /* pass stackreg: mreg = src (w64: 8 bytes, else mov mreg32, src32) */
	PLAN_SLOT_STI, /* pass stackreg: mreg = imm (8 bytes: sign-extended; 4: zero-extended) */
};

enum jit_plan_mul { MUL_NONE, MUL_IMM, MUL_REG };

/* jit_state.prandom_run: an inlined bpf_get_prandom_u32 within a run (opt_prandomreg.c) */
#define PRANDOM_HELD 1 /* the state is in TMP2 already (the run's call before kept it) */
#define PRANDOM_KEEP 2 /* leave the state in TMP2, not stored: the run's next call steps it */

/* prog->lookup_kind flag: the key is constkey's (a jit_ckey), hashed at compile time */
#define LOOKUP_CONST_KEY 0x80
#define LOOKUP_KIND(k)   ((k) & 0x7f)

/* Pass constkey: a bound hash lookup whose key bytes are constants the program stored on
 * its stack just before (r2 = r10 + off): the key as they make it, and its hash. */
#define JIT_CKEY_MAX 32 /* the probe's longest key (lookup.c, hash_fits) */
struct jit_ckey {
	size_t pc;
	uint32_t hash;
	uint8_t key[JIT_CKEY_MAX];
};

struct jit_plan {
	uint8_t kind;  /* enum jit_plan_kind */
	uint8_t w64;   /* ROTATE: 64-bit (else 32-bit, zero-extended) */
	uint8_t dst;   /* eBPF registers */
	uint8_t src;
	uint8_t mul;   /* ROTATE: enum jit_plan_mul */
	uint8_t mreg;  /* MUL_REG: the multiplier's register; SLOT_*: the slot's x86 register */
	uint8_t rol;   /* ROTATE: left rotation count, 1..width-1 */
	int32_t imm;   /* MUL_IMM: the multiplier, as the mul instruction had it */
};

/* One function (the main program or a bpf-to-bpf callee) as the emitters see it. */
struct jit_func {
	size_t start;      /* first instruction */
	size_t end;        /* one past the last */
	uint16_t saved;    /* x86 registers the prologue pushes (bit = register number) */
	bool stack;        /* references r10: gets a 512-byte frame */
	bool loops;        /* has may_goto: its counter in a slot below the 512 bytes */
	bool redzone;      /* pass redzone: r10 is rsp, its slots lie in the red zone */
	bool has_calls;    /* calls helpers or functions: rsp must be aligned */
	uint32_t frame;    /* bytes subtracted from rsp after the pushes */
	bool callback;     /* named by lddw BPF_PSEUDO_FUNC: gets a C entry */
	uint32_t cb_entry; /* offset of that entry (this pass) */
};

struct jit_state {
	const struct bpf_insn *insns;
	size_t n;
	const struct brt_jit_env *env;
	struct brt_jit_prog *prog;
	struct jit_buf buf;
	uint32_t *off;        /* this pass: offset of each instruction's code */
	uint32_t *prev_off;   /* previous pass (jump targets come from here) */
	uint32_t *entry;      /* this pass: offset of the prologue of the function at insn i */
	uint32_t *prev_entry;
	uint32_t stub[STUB_COUNT];      /* this pass */
	uint32_t prev_stub[STUB_COUNT];
	uint8_t *is_long;     /* per jump instruction: needs rel32 (sticky: only grows) */
	bool grew;            /* a jump became long in this pass */
	bool first_pass;      /* no layout known yet: every jump is emitted short */
	struct jit_func *funcs;
	size_t nfuncs;
	size_t cur;           /* index of the function being emitted */
	bool anchor;          /* the program needs ANCHOR (calls, packet loads) */
	bool pkt_regs;        /* the packet lives in PKT_DATA/PKT_LEN (see there) */
	uint32_t pkt_entry;   /* this pass: offsets of the pkt_regs entries (single, batch) */
	uint32_t batch_entry;
	uint32_t batch_next;  /* this pass: where the batch loop takes its next packet */
	bool uses_callx;
	bool uses_tail_call;  /* calls bpf_tail_call: STUB_TAIL is emitted */
	bool inline_prandom;  /* pass inlinehelper inlines a bpf_get_prandom_u32: the entries
			       * test the seed, STUB_PRANDOM (inline.c) */
	uint32_t seed_back;   /* this pass: where STUB_PRANDOM returns to in the main entry */
	uint8_t *prandom_run; /* pass prandomreg: per inlined call, PRANDOM_* (or NULL: none) */
	bool budget;          /* BRT_JIT_BUDGET and the program has a backward jump */
	bool bmi2;            /* the CPU has shlx/shrx/sarx */
	uint64_t blind_seed;  /* non-zero: blind constants with keys derived from it */
	uint32_t passes;      /* optimisation passes to run (BRT_JIT_PASS() bits) */
	uint8_t regmap[BRT_MAX_REGS + 1]; /* x86 register of each eBPF one (xreg()) */
	struct jit_plan *plan; /* per instruction (opt.c), or NULL: nothing was optimised */
	uint8_t *align;       /* per instruction (pass align): pad to its alignment first, or NULL */
	struct jit_ckey *ckeys; /* pass constkey (opt.c), by pc */
	size_t nckeys;
	uint64_t *consts;     /* pass rodata: PLAN_CONST's values (opt_const.c) */
	size_t nconsts;
	bool movbe;           /* the CPU has movbe */
	uint32_t *calls;      /* this pass: offsets of the patchable calls (brt_jit_emit_call) */
	size_t ncalls, calls_cap;
	char *err;
	size_t errlen;
};

/* regmap.c */
#define BRT_JIT_BLIND_REG BRT_MAX_REGS /* pseudo eBPF register of blinded constants */
#define BRT_JIT_NREGS (BRT_MAX_REGS + 1)
extern const uint8_t brt_jit_reg2x86[BRT_JIT_NREGS];
uint16_t brt_jit_regs_used(const struct bpf_insn *insns, size_t start, size_t end, bool *uses_r10);
bool brt_jit_pkt_regs_fit(const struct bpf_insn *insns, size_t n, const uint16_t *ops);
bool brt_jit_scratch_free(const struct jit_state *st, enum brt_op op);

/* insn.c: emit instruction pc (blinded when asked), or any instruction as row op (the
 * insn.def switch).  Return 0 or -errno. */
int brt_jit_emit_insn(struct jit_state *st, size_t pc, enum brt_op op);

/* blind.c: blind the constant of instruction pc: emits the constant's rebuilding into
 * AUX and returns BRT_JIT_BLIND_REWRITTEN with the register form to emit in *out and
 * *out_op; BRT_JIT_BLIND_DONE when that was the whole instruction (lddw);
 * BRT_JIT_BLIND_NONE when it has no constant (nothing emitted); -EFAULT when a row has
 * no register form. */
enum { BRT_JIT_BLIND_NONE, BRT_JIT_BLIND_DONE, BRT_JIT_BLIND_REWRITTEN };
int brt_jit_blind(struct jit_state *st, size_t pc, struct bpf_insn *out, enum brt_op *out_op);

/* lookup.c: decide which map_lookup_elem calls are bound (prog->lookup_kind), whether
 * call pc is one, and emit it in place of the helper call. */
int brt_jit_bind_lookups(struct jit_state *st, const uint16_t *ops);
bool brt_jit_is_bound(const struct jit_state *st, size_t pc);
void brt_jit_emit_lookup(struct jit_state *st, size_t pc);
/* whether call pc is a hash probe constkey may give a compile-time key (its layout) */
const struct brt_jit_hash_layout *brt_jit_probe_layout(const struct jit_state *st, size_t pc);

/* Plans that replace a jump (insn.c's jmp_cond emits them, run_pass does not skip the row) */
static inline bool brt_jit_plan_is_jump(uint8_t kind)
{
	return kind == PLAN_JINV || kind == PLAN_EQSET || kind == PLAN_BTJ || kind == PLAN_JMP;
}

/* opt.c: run the passes st->passes selects over the decoded program (after the functions
 * are known), filling st->plan; and emit instruction pc's plan.  Return 0 or -ENOMEM. */
int brt_jit_optimise(struct jit_state *st, const uint16_t *ops);
void brt_jit_emit_plan(struct jit_state *st, size_t pc);

/* calls.c */
/* Call the C function at addr (System V; clobbers rax): movabs rax, addr; call rax, which
 * map_code() turns into a direct call rel32 (after a 7-byte nop, same size) when the
 * code lands within reach of addr and the pass `directcall` is on. */
#define JIT_CALL_BYTES 12
void brt_jit_emit_call(struct jit_state *st, const void *addr);
int brt_jit_emit_helper_call(struct jit_state *st, size_t pc);
/* Instruction pc (row op) calls a helper the pass `leafcall` calls without ctx or stop
 * check (brt_jit_set_leaf_helpers()). */
bool brt_jit_is_leaf_call(const struct jit_state *st, size_t pc, enum brt_op op);
int brt_jit_emit_callx(struct jit_state *st, size_t pc);
/* inline.c: whether pass `inlinehelper` emits helper call pc (row op) in place, whether
 * the program has such a call (st->inline_prandom, before emission), that emission (r0
 * the result, r1-r5 kept; TMP2 the state within a run of pass prandomreg), the seed
 * tests of the main and callback entries and the main entry's stub */
bool brt_jit_is_inline_site(const struct jit_state *st, size_t pc, enum brt_op op);
void brt_jit_plan_inline(struct jit_state *st, const uint16_t *ops);
void brt_jit_emit_inline_call(struct jit_state *st, size_t pc);
void brt_jit_emit_seed_main(struct jit_state *st);
void brt_jit_emit_seed_cb(struct jit_state *st);
void brt_jit_emit_prandom_stub(struct jit_state *st);
int brt_jit_emit_local_call(struct jit_state *st, size_t pc);
void brt_jit_emit_exit(struct jit_state *st);
void brt_jit_emit_ld_pkt(struct jit_state *st, const struct bpf_insn *insn, bool ind);
void brt_jit_emit_prologue(struct jit_state *st, const struct jit_func *f);
void brt_jit_emit_stubs(struct jit_state *st);
void brt_jit_emit_cb_entry(struct jit_state *st, const struct jit_func *f);
/* Bytes brt_jit_emit_budget() and brt_jit_emit_budget_stub() emit at most. */
#define JIT_BUDGET_BYTES 96
void brt_jit_emit_budget(struct jit_state *st, uint32_t charge);
void brt_jit_emit_budget_stub(struct jit_state *st);
uint64_t brt_jit_callx_thunk(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			     uint64_t *slots);

/* Register of eBPF register r in the program being compiled (brt_jit_reg2x86, or the
 * pass leafregs' map). */
static inline int xreg(const struct jit_state *st, unsigned r)
{
	return st->regmap[r];
}

/* Base register of a memory operand on eBPF register r: r10 of a red-zone function
 * (jit_func.redzone) is rsp itself. */
static inline int mbase(const struct jit_state *st, unsigned r)
{
	return r == BPF_REG_10 && st->funcs[st->cur].redzone ? RSP : st->regmap[r];
}

#endif
