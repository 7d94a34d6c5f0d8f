/* vm.h - the vm/ folder's interface: the pre-decoded program, the run context helpers
 * see, the rich run entry the bpf() layer uses (context, packet, regions, helper table),
 * and the generic helpers (this folder's rows of the helper registry, helper_proto.h).
 *
 * Theory of operation: bpfrt_vm_load() checks the program structurally and pre-decodes it
 * once into struct brt_dinsn (row of insn.def resolved, immediates sign-extended, lddw
 * folded, and in the computed-goto build the handler address of the chosen engine).  Runs
 * then only dispatch (interp.c).  The checked engine is the same loop compiled with memory,
 * budget and alignment checks (regions in checked.c).
 */
#ifndef BPFRT_SRC_VM_VM_H
#define BPFRT_SRC_VM_VM_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "bpfrt.h"
#include "isa/isa.h"
#include "vm/helper_proto.h"

#define BRT_VM_DEFAULT_BUDGET 1000000000ull
#define BRT_VM_DEFAULT_MAX_INSNS 1000000
#define BRT_VM_MAX_HELPER_ID 65535
/* every frame gets a full 512 bytes; the stack holds BRT_MAX_CALL_DEPTH of them */
#define BRT_VM_STACK_BYTES (BRT_STACK_SIZE * BRT_MAX_CALL_DEPTH)

/* One pre-decoded instruction.  Indexes match the original program (the second slot of
 * lddw is a never-executed filler), so fault messages name original instruction indexes. */
struct brt_dinsn {
	const void *label; /* goto build: handler address in the engine's loop; else NULL */
	uint64_t imm;      /* imm sign-extended to 64 bits; lddw: the 64-bit value */
	int32_t off;       /* memory offset; jumps: target - (index + 1), ja32 folded in */
	uint16_t op;       /* enum brt_op; BRT_OP_INVALID = "fell off the end" sentinel */
	uint8_t dst;       /* dst_reg */
	uint8_t src;       /* src_reg */
};

/* A memory range the checked engine lets a program access. */
struct brt_region {
	uint64_t start;   /* first byte */
	uint64_t len;     /* length in bytes */
	int writable;     /* 0: reads only */
};

/* The packet of a run on a network program (BPF_PROG_TEST_RUN, attached tc/XDP programs),
 * for the helpers that write it or move its bounds (src/attach/: bpf_skb_store_bytes,
 * bpf_xdp_adjust_head, ...).  The buffer holds room on both sides, as the kernel's skb
 * head/end or xdp_buff hard_start/frame do.  The program sees the packet through the
 * data fields of its context (ctx: struct __sk_buff or struct xdp_md, 32-bit addresses);
 * a helper that moves the packet updates them, the run's LD_ABS packet and, on the checked
 * engine, grants the new range (the buffer is the run's, so an old range stays harmless).
 * Fields the context has no place for (tunnel key, redirect target) live here too. */
struct brt_run_pkt {
	uint8_t *head;        /* first byte of the buffer (XDP: data_hard_start) */
	uint8_t *end;         /* data_end may grow up to here (XDP: xdp_data_hard_end) */
	uint8_t *meta;        /* XDP: data_meta (metadata before data); skb: == data */
	uint8_t *data;        /* first byte the program sees (tc: L2; cgroup_skb: L3) */
	uint8_t *data_end;
	uint8_t *mac;         /* skb: the link-layer header (NULL: none) */
	uint8_t *network;     /* skb: the network header */
	uint32_t prog_type;   /* BPF_PROG_TYPE_* of the program running on it */
	uint32_t max_len;     /* skb: longest packet the helpers may make (device MTU + L2) */
	void *ctx;            /* the struct __sk_buff / struct xdp_md given in r1 */
	/* skb state without a __sk_buff field */
	/* the tunnel metadata bpf_skb_set_tunnel_key() attaches (the kernel's ip_tunnel_info in
	 * a metadata dst), kept as the kernel keeps it: addresses in network order under the
	 * key's src/dst, so a later bpf_skb_get_tunnel_key() reads them as the kernel does */
	uint8_t tunnel_set;    /* skb_tunnel_info() is not NULL */
	uint8_t tunnel_v6;     /* IP_TUNNEL_INFO_IPV6 */
	uint8_t tunnel_tos;
	uint8_t tunnel_ttl;
	uint32_t tunnel_flags;  /* IP_TUNNEL_*_BIT bitmap (uapi/linux/if_tunnel.h) */
	uint32_t tunnel_id;
	uint32_t tunnel_src[4]; /* network order; IPv4: [0] */
	uint32_t tunnel_dst[4];
	uint32_t tunnel_label;  /* network order, flow label bits only */
	uint8_t tunnel_opt_len; /* bpf_skb_set_tunnel_opt() bytes */
	uint8_t encapsulation;  /* skb->encapsulation: bpf_skb_adjust_room() added an outer header */
	uint8_t tunnel_opts[255]; /* IP_TUNNEL_OPTS_MAX */
	uint8_t has_sk;       /* skb: owned by a socket (the test run's dummy one) */
	uint8_t hash_valid;   /* skb: __sk_buff.hash holds a computed hash (sw_hash) */
	uint64_t sk_cookie;   /* that socket's cookie once a helper asked for it (0: not yet) */
	uint32_t redirect_ifindex; /* bpf_redirect() target of this run (0: none) */
	uint64_t redirect_flags;   /* its flags, or BRT_REDIRECT_NEIGH */
	uint32_t redirect_cpu;     /* bpf_redirect_map() to a cpumap entry: CPU + 1 (0: none) */
	/* that cpumap entry's program, or with redirect_ifindex a devmap entry's
	 * (BPF_XDP_DEVMAP, run on the packet before it is sent); 0: none */
	uint32_t redirect_prog_id;
	uint8_t test_run;          /* BPF_PROG_TEST_RUN's packet (not a live one) */
	uint64_t sock_gen;         /* test run: its socket lookups' answers, 0 before the
				    * first (attach/sock_table.c) */
	/* bpf_redirect_map() to an xskmap entry: its socket's cookie (0: none), and the
	 * interface the socket was bound to at the map update (0: none, or
	 * XSK_BOUND_SOMEWHERE) */
	uint64_t redirect_xsk;
	uint32_t redirect_xsk_dev;
};
#define XSK_BOUND_SOMEWHERE UINT32_MAX
/* redirect_flags of bpf_redirect_neigh(): the kernel fills the link-layer header from its
 * neighbour table, so a live attachment does not send the packet as the program left it */
#define BRT_REDIRECT_NEIGH (1ull << 63)

/* The run's state visible to helpers.  The JIT tests `stopped` after every helper call,
 * and tail_entry after bpf_tail_call(), so the first seven members must stay where they
 * are (BRT_JIT_CTX_*_OFF in jit/jit.h). */
struct bpfrt_run_ctx {
	uint64_t stopped;               /* BRT_STOP_RUN after bpfrt_run_stop(), BRT_STOP_TAIL */
	uint64_t stop_r0;               /* r0 given to bpfrt_run_stop() */
	const void *tail_entry;         /* JIT: code to jump to after bpf_tail_call(), or NULL */
	uint64_t tail_r1;               /* ... with this r1 */
	uint32_t tail_cnt;              /* tail calls made so far in this chain */
	int tail_jump;                  /* the running code is JIT code that honours tail_entry */
	/* run budget (budget.c): counted instructions left before brt_vm_budget_slow() must
	 * look; back-edges and callback calls subtract from it (the JIT's code at
	 * BRT_JIT_CTX_BUDGET_OFF); UINT64_MAX when the run has no budget */
	uint64_t budget_left;
	void *user;                     /* bpfrt_run_user() */
	const brt_helper_fn *helpers;   /* helper table indexed by id */
	size_t nr_helpers;              /* entries in helpers */
	const uint8_t *skb_data;        /* packet LD_ABS/LD_IND read; may be NULL */
	size_t skb_len;                 /* its length */
	/* helpers that call back into the program (bpf_loop) go through brt_vm_call_func():
	 * the running engine's way to run a function of the program, NULL when it has none */
	uint64_t (*call_func)(struct bpfrt_run_ctx *ctx, uint64_t func, const uint64_t *args,
			      unsigned nargs);
	void *call_arg;                 /* the engine's state for call_func */
	uint32_t cb_depth;              /* JIT: callbacks running now */
	int checked;                    /* the checked engine runs: regions apply */
	uint64_t stack_lo;              /* checked: live stack frames [stack_lo, stack_hi) */
	uint64_t stack_hi;
	struct brt_region *regions;     /* checked: what the program may access (not stack) */
	size_t nr_regions;              /* used entries */
	size_t cap_regions;             /* allocated entries */
	int regions_owned;              /* regions is a heap copy to free after the run */
	struct brt_region inline_regions[8]; /* storage before the first heap growth */
	struct brt_run_pkt *pkt;            /* the run's packet helpers may change, or NULL */
	struct brt_budget *budget;      /* the run's budget state (budget.c), NULL: none */
	int32_t cg_retval;              /* bpf_get_retval/set_retval: the cgroup hook's return
					 * code, 0 when a run starts */
	/* the thread's table of resilient locks once this run took one (maps/res_lock.c),
	 * NULL when a run starts: what the table holds then is an ended run's */
	void *res_held;
	/* the running program's bpf_obj_new types (brt_vm_set_obj_types()), or NULL */
	const struct brt_obj_type *obj_types;
	uint32_t nobj_types;
	/* checked engine, unverified program: by helper id, the prototype whose arguments
	 * are checked before the call (helper_args.c), NULL: none; NULL table: no checks */
	const struct brt_helper_proto *const *helper_checks;
	size_t nr_helper_checks;
};

/* A run's budget (off by default, as in the kernel): an embedder bounds an untrusted
 * program's run in counted instructions and/or nanoseconds of CLOCK_MONOTONIC.  The
 * unchecked engines count only where a run can repeat itself, so straight-line code pays
 * nothing: each backward jump charges the length of the loop it closes (its distance
 * back, in instructions), each callback call (bpf_loop, for_each_map_elem, ...) charges
 * 1.  ctx->budget_left holds what may be spent before the slow path looks again. */
struct brt_budget {
	uint64_t insns;      /* the budget in counted instructions; 0: none */
	uint64_t ns;         /* the budget in ns; 0: none */
	uint64_t reserve;    /* counted instructions not yet handed to budget_left */
	uint64_t deadline;   /* CLOCK_MONOTONIC ns the run must end by; 0: none */
	int exhausted;       /* BRT_BUDGET_INSNS or BRT_BUDGET_TIME once the run was stopped */
};
#define BRT_BUDGET_INSNS 1
#define BRT_BUDGET_TIME 2

/* Arm budget b for a run with ctx (insns and ns 0: the budget is off: ctx->budget NULL). */
void brt_vm_budget_start(struct bpfrt_run_ctx *ctx, struct brt_budget *b, uint64_t insns,
			 uint64_t ns);
/* ctx->budget_left went below zero (it wrapped): 0 when the run may go on (budget_left
 * refilled), 1 when the budget is spent: the run is stopped (bpfrt_run_stop(ctx, 0)) and
 * b->exhausted says why.  The JIT calls it from its code. */
int brt_vm_budget_slow(struct bpfrt_run_ctx *ctx);
/* LD_ABS/LD_IND at a negative offset k (SKF_NET_OFF / SKF_LL_OFF relative) of size bytes
 * as the kernel reads it (interp.c): the value in host order, or UINT64_MAX when the
 * load fails (the program then ends with r0 = 0).  The JIT calls it too. */
uint64_t brt_vm_ld_neg(struct bpfrt_run_ctx *ctx, int64_t k, uint64_t size);
/* Charge n counted instructions; 1 when the run must stop (see brt_vm_budget_slow). */
static inline int brt_vm_budget_spend(struct bpfrt_run_ctx *ctx, uint64_t n)
{
	if (__builtin_expect(!__builtin_sub_overflow(ctx->budget_left, n, &ctx->budget_left), 1))
		return 0;
	return brt_vm_budget_slow(ctx);
}
/* After a run: the message and errno (-ETIME) of a spent budget, or 0. */
int brt_vm_budget_msg(const struct bpfrt_run_ctx *ctx, char *err, size_t errlen);

/* Values of bpfrt_run_ctx.stopped: the run ends with stop_r0; or, after bpf_tail_call(),
 * the target ran nested and stop_r0 is what the calling function returns (the kernel's
 * target replaces that function's frame, so a subprogram's caller gets it). */
#define BRT_STOP_RUN 1
#define BRT_STOP_TAIL 2

/* The rich run entry (BPF_PROG_TEST_RUN, attach points).  Zero-initialise, then set:
 *   r1, r2        the program's arguments (context pointer; r2 is usually 0 then);
 *   regions       checked engine: memory besides the stack the program may touch, e.g.
 *                 { ctx, sizeof(*ctx), 0 } plus a writable entry for its writable fields,
 *                 and { data, data_end - data, 1 } for the packet; copied per run;
 *   skb_data/len  the packet LD_ABS/LD_IND read (socket-filter semantics);
 *   pkt           the packet helpers may write or move (struct brt_run_pkt), or NULL;
 *   user          handed to helpers through bpfrt_run_user();
 *   helpers       helper table indexed by id for this run (NULL: the vm's table);
 *   insn_budget   checked engine: instruction budget (0: the vm's);
 *   poison        checked engine: the byte stack frames and r0, r3-r9 start filled with
 *                 (default 0); tests run a program with two values to see whether it
 *                 reads stack or registers it never wrote;
 *   tail_cnt      tail calls already made by the chain this run continues;
 *   tail_cnt_end  out, or NULL: the count when the run ended (it shares one limit with
 *                 the run that made the tail call);
 *   track         checked engine: fault on any read of a register or stack byte the run
 *                 has not written (the kernel verifier's rule, see track.c), with
 *                 helper_args = how many argument registers every helper reads;
 *   run_budget, run_budget_ns
 *                 every engine: the run's budget (struct brt_budget); 0: the vm's;
 *   budget_from   a run nested in another (a tail call's target) spends that run's
 *                 budget instead;
 *   func, r3_5    a run that starts at function `func` (the instruction index lddw
 *                 BPF_PSEUDO_FUNC loads; 0: the program) with r3-r5 = r3_5 besides r1,
 *                 r2: a callback run outside any run of its program (bpf_timer's, from
 *                 the timer thread).  The caller vouches that func is a callback the
 *                 verifier walked. */
struct brt_run_opts {
	uint64_t r1;
	uint64_t r2;
	const struct brt_region *regions;
	size_t nr_regions;
	const void *skb_data;
	size_t skb_len;
	struct brt_run_pkt *pkt;
	void *user;
	const brt_helper_fn *helpers;
	size_t nr_helpers;
	uint64_t insn_budget;
	uint32_t tail_cnt;
	uint32_t *tail_cnt_end;
	uint8_t poison;
	uint8_t track;
	uint8_t helper_args;
	uint64_t run_budget;
	uint64_t run_budget_ns;
	struct bpfrt_run_ctx *budget_from;
	uint64_t func;
	uint64_t r3_5[3];
};

/* A run fault, turned into "insn N: <reason>" by brt_vm_fault_msg(). */
enum brt_fault_kind {
	BRT_FAULT_NONE,
	BRT_FAULT_READ,       /* load outside every region */
	BRT_FAULT_WRITE,      /* store outside every writable region */
	BRT_FAULT_ATOMIC,     /* atomic outside every writable region */
	BRT_FAULT_MISALIGNED, /* atomic not aligned to its size */
	BRT_FAULT_BUDGET,     /* instruction budget exhausted */
	BRT_FAULT_DEPTH,      /* more than BRT_MAX_CALL_DEPTH frames */
	BRT_FAULT_HELPER,     /* no helper with that id */
	BRT_FAULT_END,        /* execution ran past the last instruction */
	BRT_FAULT_UNWRITTEN_REG,   /* tracking: read of a register not written (reg) */
	BRT_FAULT_UNWRITTEN_STACK, /* tracking: read of stack bytes not written */
	BRT_FAULT_FUNC,       /* a helper called back a value that names no function */
	BRT_FAULT_HELPER_ARG, /* unverified program: helper `value`'s argument `reg` is not
			       * what its prototype wants (helper_args.c) */
};

struct brt_fault {
	enum brt_fault_kind kind;
	size_t insn;        /* instruction index */
	unsigned size;      /* access size in bytes */
	uint8_t reg;        /* base register of the access */
	int32_t off;        /* offset of the access */
	uint64_t value;     /* helper id, or budget */
};

/* Write tracking state (track.c). */
struct brt_track {
	uint32_t written;                     /* bit r: register r holds a written value */
	uint16_t saved[BRT_MAX_CALL_DEPTH];   /* callers' masks across bpf-to-bpf calls */
	unsigned depth;                       /* frames below the first */
	uint8_t helper_args;                  /* r1..rN a helper call reads */
	uint64_t stack_lo;                    /* lowest stack address */
	uint8_t stack[BRT_VM_STACK_BYTES / 8]; /* bit per stack byte: written */
};

/* Start tracking a run whose stack starts at `stack` (BRT_VM_STACK_BYTES). */
void brt_vm_track_init(struct brt_track *t, const uint8_t *stack, uint8_t helper_args);
/* A function returns without its exit instruction (a tail call made in it ran nested). */
void brt_vm_track_return(struct brt_track *t);
/* Check the instruction about to run against what was written, then record what it
 * writes.  Returns 0, or -1 with f->kind (and reg, or size/reg/off) set. */
int brt_vm_track(struct brt_track *t, const struct brt_dinsn *d, const uint64_t *reg,
		 struct brt_fault *f);

/* The per-run state the interpreter loops work on.  A callback (brt_vm_call_func()) runs
 * the same loop on a copy that starts at function `start`, base_depth frames down. */
struct brt_exec {
	const struct brt_dinsn *code; /* pre-decoded program (n + 1 entries) */
	size_t n;                     /* instructions */
	size_t start;                 /* first instruction to run */
	unsigned base_depth;          /* frames above the first one this loop runs */
	uint64_t r1;                  /* arguments */
	uint64_t r2;
	uint64_t r3_5[3];             /* callbacks: r3-r5 (the main run starts them at 0) */
	uint64_t budget;              /* checked: the run's instruction budget */
	uint64_t left;                /* checked: instructions left (shared with callbacks) */
	uint8_t poison;               /* checked: initial byte of stack frames and registers */
	uint8_t *stack;               /* BRT_VM_STACK_BYTES, lowest address */
	struct bpfrt_run_ctx *ctx;
	struct brt_track *track;      /* checked: write tracking, or NULL */
	/* checked: by insn, 1 for a load through a kernel pointer, which reads 0 at an
	 * address outside the run's memory (brt_vm_set_probe_loads()); or NULL */
	const uint8_t *probe;
	struct brt_fault fault;       /* set when the loop returns -1 */
};

/* Handler addresses of one loop (goto build), for the pre-decoder.
 *   op         by enum brt_op, the sentinel at BRT_OP_INVALID; NULL in the switch build
 *   after_mov  superinstructions: by the op of an ALU instruction that follows a mov to
 *              the same dst ("r5 = r9; r5 ^= r3" runs as r5 = r9 ^ r3); NULL entry or
 *              table: not fused.  Only the fast loop has them: the checked one counts
 *              and reports every instruction
 *   zext_after by a load op: the load followed by a 32-bit mov of its dst to itself (a
 *              zero extension the load already did)
 *   store_after_mov64i, store_after_mov32i
 *              by a store op (stx): a constant moved into a register, then stored
 *              ("w6 = 0; *(u32 *)(r10 - 32) = r6") */
struct brt_vm_labels {
	const void *const *op;
	const void *const *after_mov;
	const void *const *zext_after;
	const void *const *store_after_mov64i;
	const void *const *store_after_mov32i;
};

/* The interpreter's loops: the pre-decoded code of a vm holds the handler addresses of
 * one of them (goto build). */
enum brt_vm_loop {
	BRT_VM_LOOP_FAST,    /* no checks */
	BRT_VM_LOOP_CHECKED, /* every access checked, instruction cap, budget at back-edges */
	BRT_VM_LOOP_BUDGET,  /* the fast loop with the run budget at back-edges */
};

/* Interpreter loops (interp.c).  They return 0 with *r0 set, or -1 with ex->fault set.
 * brt_vm_interp_fast() runs code pre-decoded for BRT_VM_LOOP_FAST, or for
 * BRT_VM_LOOP_BUDGET when ctx->budget is set. */
int brt_vm_interp_fast(struct brt_exec *ex, uint64_t *r0);
int brt_vm_interp_checked(struct brt_exec *ex, uint64_t *r0);
/* The interpreters' call_func (ctx->call_arg = the run's struct brt_exec). */
uint64_t brt_vm_interp_call_func(struct bpfrt_run_ctx *ctx, uint64_t func, const uint64_t *args,
				 unsigned nargs);
void brt_vm_labels(enum brt_vm_loop loop, struct brt_vm_labels *out);

/* Checked engine (checked.c): may the run access [addr, addr + size)? (regions only; the
 * loop checks the stack itself) */
/* Memory outside a run's regions the checked engine may still touch: [addr, addr+size)
 * inside a live object of bpf_obj_new of this process (helpers/graph.c sets it when the
 * library is loaded: a kptr loaded from a map value points at one stashed by an earlier
 * run, or at another process's, which must stop the run instead). */
typedef int (*brt_vm_obj_fn)(uint64_t addr, uint64_t size);
void brt_vm_set_obj_fn(brt_vm_obj_fn fn);
int brt_vm_region_ok(const struct bpfrt_run_ctx *ctx, uint64_t addr, uint64_t size,
		     int writable);
/* Format a fault as "insn N: reason" and return its errno (-EFAULT or -E2BIG). */
int brt_vm_fault_msg(const struct brt_fault *f, char *err, size_t errlen);

/* Run a loaded vm with full control of its inputs (see struct brt_run_opts).  Same
 * returns and messages as bpfrt_vm_run(). */
/* What runs at the end of every run while brt_vm_after_run_due is nonzero (task works
 * scheduled and not yet run: maps/task_work.c sets both; a plain load of one word a run
 * otherwise) */
extern _Atomic unsigned brt_vm_after_run_due;
void brt_vm_set_after_run(void (*fn)(void));
int brt_vm_run_opts(struct bpfrt_vm *vm, const struct brt_run_opts *opts, uint64_t *r0,
		    char *err, size_t errlen);

/* The most tail calls one chain makes; the next one falls through (the kernel's
 * MAX_TAIL_CALL_CNT). */
#define BRT_VM_MAX_TAIL_CALLS 33

/* bpf_tail_call() from the run ctx into vm (found in a prog array by the caller), with
 * user as the callee's bpfrt_run_user().  Past BRT_VM_MAX_TAIL_CALLS returns 0 and the
 * caller falls through.  When the caller is JIT code that may be replaced in place
 * (ctx->tail_jump) and vm is JITed, sets ctx up for the callee and ctx->tail_entry: the
 * caller's code jumps there, without growing the stack.  Otherwise runs vm nested, with
 * the caller's context, packet and regions and the same count of tail calls, and sets
 * ctx->stopped to BRT_STOP_TAIL with its result in stop_r0 (a fault prints a warning and
 * gives 0).  Returns 0. */
uint64_t brt_vm_tail_call(struct bpfrt_vm *vm, void *user, uint64_t r1,
			  struct bpfrt_run_ctx *ctx);

/* Run function `func` of the running program (the instruction index lddw BPF_PSEUDO_FUNC
 * loads) with r1..r<nargs> = args (at most 5; the others are 0), on the run's engine, in a
 * new stack frame below the caller's, and return its r0: bpf_loop()'s callback.  A fault,
 * a bad function, too deep a call chain or a stop inside stops the whole run
 * (ctx->stopped): the helper must then return at once. */
uint64_t brt_vm_call_func(struct bpfrt_run_ctx *ctx, uint64_t func, const uint64_t *args,
			  unsigned nargs);
/* Bind map lookups into the vm's JIT code (struct brt_jit_lookup in src/jit/jit.h;
 * BPF_PROG_LOAD, from what the verifier proved): before the first run.  No effect on the
 * other engines.  Returns 0 or -ENOMEM. */
struct brt_jit_lookup;
int brt_vm_bind_lookups(struct bpfrt_vm *vm, const struct brt_jit_lookup *l, size_t n);
/* The JIT code a run of vm with its own helpers executes (`bpfrt prog dump jited`):
 * 0, -EOPNOTSUPP (not a JIT vm) or the errors of a failed compile (message in err). */
struct brt_jit_prog;
int brt_vm_jit_code(struct bpfrt_vm *vm, const struct brt_jit_prog **out, char *err,
		    size_t errlen);

/* Engine names (engines.c, rows of engines.def).  brt_vm_engine_name(): "interp",
 * "checked", "jit", "default" for DEFAULT, NULL for other values.  brt_vm_engine_parse():
 * a name (or, when aliases is non-zero, an alias) to its engine in *out; 0 or -1.
 * brt_vm_engine_list(): "interp, checked, jit", for usage and error text. */
const char *brt_vm_engine_name(enum bpfrt_engine e);
int brt_vm_engine_parse(const char *s, int aliases, enum bpfrt_engine *out);
const char *brt_vm_engine_list(void);

/* The vm's engine after resolving DEFAULT, and its instructions. */
enum bpfrt_engine brt_vm_engine(const struct bpfrt_vm *vm);
const struct bpf_insn *brt_vm_insns(const struct bpfrt_vm *vm, size_t *n);
/* For callers that run a vm's program through their own entry (attach/filter.c's direct
 * paths), what the vm made of it at load, owned by the vm: the pre-decoded program for
 * the vm's engine (n + 1 entries), and a JIT vm's code when the program calls no helper
 * (the one version it has), else NULL. */
const struct brt_dinsn *brt_vm_code(const struct bpfrt_vm *vm);
const struct brt_jit_prog *brt_vm_jit_fixed(const struct bpfrt_vm *vm);

/* The types the program's bpf_obj_new calls allocate (the verifier's list): copied into
 * vm, which every run context of it carries.  0 or -ENOMEM. */
int brt_vm_set_obj_types(struct bpfrt_vm *vm, const struct brt_obj_type *types, uint32_t n);

/* The verifier's word that the program may call bpf_throw, and where its exception
 * callback starts (0: none named, the cookie is the return value).  Runs then end with
 * the callback's value when the program throws.  0 or -ENOMEM. */
int brt_vm_set_exception(struct bpfrt_vm *vm, uint32_t exc_cb_insn);
/* The loads through kernel pointers, by insn: those whose flags[i] & mask (the verifier's
 * BRT_INSN_PROBE).  The kernel makes them fault-safe (BPF_PROBE_MEM: a load from an
 * address it cannot read gives 0); on the checked engine, where such programs run, one
 * outside the run's memory reads 0 instead of stopping the run.  0 or -ENOMEM. */
int brt_vm_set_probe_loads(struct bpfrt_vm *vm, const uint8_t *flags, uint8_t mask);
/* bpf_throw(cookie) (helpers/kfuncs.c): the run stops and the callback runs */
void brt_vm_throw(struct bpfrt_run_ctx *ctx, uint64_t cookie);

/* bpfrt_vm_load() of a program the load path decoded already: ops holds the n rows
 * brt_isa_decode_prog() gave for insns (with at most the vm's max_insns), and is taken
 * over by the vm (freed on failure too).  BPF_PROG_LOAD decodes once, for the verifier
 * and the engines.  rodata[0..nrodata): frozen read-only map values the program's
 * lddw's point into (struct brt_jit_rodata in src/jit/jit.h), which the JIT may read at
 * compile time; copied.  ops NULL: decoded here.  verified: the program passed the
 * verifier, so its calls of kernel functions (BRT_KFUNC_HELPER_BASE + row) reach them;
 * otherwise those slots are empty, as for bpfrt_vm_load().  sym: the name of the JIT's
 * code for perf (BPFRT_PERF_MAP, src/jit/perf_map.c), or NULL. */
struct brt_jit_rodata;
int brt_vm_load_decoded(const struct bpf_insn *insns, size_t n, uint16_t *ops,
			const struct bpfrt_vm_opts *opts, const struct brt_jit_rodata *rodata,
			size_t nrodata, int verified, const char *sym, struct bpfrt_vm **out,
			char *err, size_t errlen);

/* The registry's answers every vm loaded from now on copies its helper table from
 * (struct brt_helper_source in helper_proto.h): src/helpers/source.c calls this when the
 * library is loaded.  src must stay valid. */
void brt_vm_set_helper_source(const struct brt_helper_source *src);

/* Make helper id call fn in this vm only (the registry's bpfrt_helper_register() with a
 * vm): name (may be NULL) is copied.  Returns 0, -EINVAL (id above BRT_VM_MAX_HELPER_ID)
 * or -ENOMEM. */
int brt_vm_set_helper(struct bpfrt_vm *vm, uint32_t id, const char *name, brt_helper_fn fn);

/* helper_args.c: a built-in helper called by a program nobody verified.
 * brt_vm_helper_need() says what its prototype needs: nothing, a check of its arguments
 * before each call (brt_vm_helper_args_bad()), or no place in the program's table;
 * brt_vm_helper_args_bad() gives 0 when reg[1..5] are what the prototype wants, else the
 * number (1-5) of the first argument that is not. */
enum { BRT_HELPER_NEED_NOTHING, BRT_HELPER_NEED_CHECK, BRT_HELPER_NEED_REFUSE };
int brt_vm_helper_need(const struct brt_helper_proto *p);
unsigned brt_vm_helper_args_bad(const struct brt_helper_proto *p, const uint64_t *reg,
				struct bpfrt_run_ctx *ctx);

/* The helpers this folder implements, for the registry (src/helpers/registry.c): one
 * X(id, function, program types) each; id names its row of src/vm/helpers.def, types
 * are BRT_FOR_* helper sets (vm/helper_proto.h). */
#define BRT_VM_HELPERS(X)                                                                \
	X(BPF_FUNC_ktime_get_ns, brt_helper_ktime_get_ns, BRT_FOR_ALL)                   \
	X(BPF_FUNC_get_prandom_u32, brt_helper_get_prandom_u32, BRT_FOR_ALL)             \
	X(BPF_FUNC_get_smp_processor_id, brt_helper_get_smp_processor_id, BRT_FOR_ALL)   \
	X(BPF_FUNC_get_numa_node_id, brt_helper_get_numa_node_id, BRT_FOR_ALL)           \
	X(BPF_FUNC_ktime_get_boot_ns, brt_helper_ktime_get_boot_ns, BRT_FOR_ALL)         \
	X(BPF_FUNC_ktime_get_tai_ns, brt_helper_ktime_get_tai_ns, BRT_FOR_ALL)           \
	/* bpf_sk_base_func_proto's, not bpf_base_func_proto's: network types only (libbpf  \
	 * probes it from a socket filter to learn whether the kernel accounts BPF memory  \
	 * to memcg: then it leaves RLIMIT_MEMLOCK alone) */                              \
	/* (not cgroup_device's, cgroup_sockopt's or netfilter's: theirs fall back on      \
	 * bpf_base_func_proto() alone) */                                                \
	X(BPF_FUNC_ktime_get_coarse_ns, brt_helper_ktime_get_coarse_ns,                  \
	  (BRT_FOR_NET & ~(BRT_FOR_CGDEV | BRT_FOR_SOCKOPT | BRT_FOR_NF)) | BRT_FOR_TCP_CA) \
	X(BPF_FUNC_loop, brt_helper_loop, BRT_FOR_ALL | BRT_NEED_BPF)                    \
	/* str_helpers.c: bpf_base_func_proto's, before its capability checks */           \
	X(BPF_FUNC_strtol, brt_helper_strtol, BRT_FOR_ALL)                               \
	X(BPF_FUNC_strtoul, brt_helper_strtoul, BRT_FOR_ALL)                             \
	X(BPF_FUNC_strncmp, brt_helper_strncmp, BRT_FOR_ALL)                             \
	/* bpf_base_func_proto's, with CAP_BPF */                                          \
	X(BPF_FUNC_jiffies64, brt_helper_jiffies64, BRT_FOR_ALL | BRT_NEED_BPF)           \
	/* the net_cls classid of the current task (base, CAP_BPF; tc's and lwt's variant  \
	 * of the packet's: helper_set.c), of the packet's socket (tc), the route's realm  \
	 * (tc, lwt): 0, as on a host without cgroup v1's net_cls (a test run's packet has   \
	 * neither a classid nor a route) */                                               \
	X(BPF_FUNC_get_cgroup_classid, brt_helper_zero, BRT_FOR_ALL | BRT_NEED_BPF)       \
	X(BPF_FUNC_skb_cgroup_classid, brt_helper_zero, BRT_FOR_TC)                      \
	X(BPF_FUNC_get_route_realm, brt_helper_zero, BRT_FOR_TC | BRT_FOR_LWT)           \
	/* tracing_prog_func_proto()'s (tracing and syscall programs): the socket of a kernel \
	 * struct file; bpfrt runs only syscall programs of these, which have no file to     \
	 * give it */                                                                      \
	X(BPF_FUNC_sock_from_file, brt_helper_zero,                                      \
	  BRT_HSET(BPF_PROG_TYPE_TRACING) | BRT_FOR_SYSCALL)                             \
	/* base, CAP_PERFMON: no last-branch records reach user space (the kernel has     \
	 * them only with an LBR perf event on Intel) */                                   \
	X(BPF_FUNC_get_branch_snapshot, brt_helper_get_branch_snapshot,                  \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	/* dynptr.c: bpf_base_func_proto's, with CAP_BPF */                                \
	X(BPF_FUNC_dynptr_from_mem, brt_helper_dynptr_from_mem, BRT_FOR_ALL | BRT_NEED_BPF) \
	X(BPF_FUNC_dynptr_read, brt_helper_dynptr_read, BRT_FOR_ALL | BRT_NEED_BPF)       \
	X(BPF_FUNC_dynptr_write, brt_helper_dynptr_write, BRT_FOR_ALL | BRT_NEED_BPF)     \
	X(BPF_FUNC_dynptr_data, brt_helper_dynptr_data, BRT_FOR_ALL | BRT_NEED_BPF)       \
	/* cgroup_common_func_proto(): the cgroup hooks, not every attach type (helper_set.c) */ \
	X(BPF_FUNC_get_retval, brt_helper_get_retval, BRT_FOR_CGSKB | BRT_FOR_CGROUP)     \
	X(BPF_FUNC_set_retval, brt_helper_set_retval, BRT_FOR_CGSKB | BRT_FOR_CGROUP)     \
	X(BPF_FUNC_sysctl_get_name, brt_helper_sysctl_get_name, BRT_FOR_SYSCTL)          \
	X(BPF_FUNC_sysctl_get_current_value, brt_helper_sysctl_get_value, BRT_FOR_SYSCTL) \
	X(BPF_FUNC_sysctl_get_new_value, brt_helper_sysctl_get_value, BRT_FOR_SYSCTL)    \
	X(BPF_FUNC_sysctl_set_new_value, brt_helper_sysctl_set_new_value, BRT_FOR_SYSCTL) \
	/* sock_addr's (every attach type it has) and sock_ops' variants, of the context's \
	 * socket; cgroup_sockopt's (setsockopt hooks only) of a socket pointer (helper_args.c) */ \
	X(BPF_FUNC_getsockopt, brt_helper_getsockopt,                                    \
	  BRT_FOR_SOCKADDR | BRT_FOR_SOCKOPS | BRT_FOR_SOCKOPT | BRT_FOR_TCP_CA)         \
	X(BPF_FUNC_setsockopt, brt_helper_setsockopt,                                    \
	  BRT_FOR_SOCKADDR | BRT_FOR_SOCKOPS | BRT_FOR_SOCKOPT | BRT_FOR_TCP_CA)         \
	/* a congestion control's (bpf_tcp_ca_get_func_proto) */                          \
	X(BPF_FUNC_tcp_send_ack, brt_helper_tcp_send_ack, BRT_FOR_TCP_CA)                \
	/* sock_addr's connect hooks only (helper_set.c) */                               \
	X(BPF_FUNC_bind, brt_helper_bind, BRT_FOR_SOCKADDR)                              \
	X(BPF_FUNC_sock_ops_cb_flags_set, brt_helper_sock_ops_cb_flags_set, BRT_FOR_SOCKOPS) \
	/* sock_ops_func_proto()'s TCP header option helpers */                          \
	X(BPF_FUNC_load_hdr_opt, brt_helper_load_hdr_opt, BRT_FOR_SOCKOPS)               \
	X(BPF_FUNC_store_hdr_opt, brt_helper_store_hdr_opt, BRT_FOR_SOCKOPS)             \
	X(BPF_FUNC_reserve_hdr_opt, brt_helper_reserve_hdr_opt, BRT_FOR_SOCKOPS)

/* A struct bpf_dynptr as the kernel lays it out (struct bpf_dynptr_kern): the memory, its
 * size with the dynptr's type and a read-only bit in the top bits, and an offset into
 * the memory.  Made by bpf_dynptr_from_mem (dynptr.c) and bpf_ringbuf_reserve_dynptr
 * (maps/ringbuf.c); 16 bytes on the program's stack. */
struct brt_dynptr {
	void *data;
	uint32_t size;
	uint32_t offset;
};
#define BRT_DYNPTR_SIZE_MASK 0xffffffu /* also the largest size (DYNPTR_MAX_SIZE) */
#define BRT_DYNPTR_TYPE_SHIFT 28
#define BRT_DYNPTR_RDONLY_BIT (1u << 31)
/* bpf_dynptr_init() / bpf_dynptr_set_null(), of the kernel's dynptr types (1 local, 2 ring
 * buffer, 3 skb, 4 xdp) */
void brt_dynptr_init(struct brt_dynptr *p, void *data, uint32_t type, uint32_t size);
void brt_dynptr_set_null(struct brt_dynptr *p);
/* The dynptr a helper was given in r, or NULL when a checked run may not write its 16
 * bytes (an unverified program's bad pointer). */
struct brt_dynptr *brt_dynptr_arg(struct bpfrt_run_ctx *ctx, uint64_t r);

/* helpers.c, str_helpers.c, dynptr.c, callback.c */
BRT_VM_HELPERS(BRT_HELPER_DECLARE)
/* This thread's bpf_get_prandom_u32 state (0: seeded on the next call), for tests that
 * run one sequence on several engines. */
uint64_t *brt_prandom_state(void);

#endif
