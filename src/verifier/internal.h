/* internal.h - what the verifier's files share: the abstract state (registers, stack
 * slots, frames), the environment of one verification, and each file's entry points.
 * Not used outside src/verifier/ (verifier.h is the folder's interface).
 */
#ifndef BPFRT_SRC_VERIFIER_INTERNAL_H
#define BPFRT_SRC_VERIFIER_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include "btf/btf.h"
#include "isa/isa.h"
#include "verifier/verifier.h"
#include "vm/helper_proto.h"

/* ---- log.c ----------------------------------------------------------------------------- */
#define BRT_VLOG_TMP 1024 /* the kernel formats each message into 1 KiB */

struct brt_vlog {
	uint32_t level;     /* BRT_LOG_* */
	char *ubuf;         /* caller's buffer, or NULL */
	uint32_t len_total; /* its size */
	uint32_t alloc;     /* bytes of ubuf there are: len_total, or less while grow grows */
	struct brt_log_buf *grow; /* ubuf is grow->buf, grown as the log needs, or NULL */
	int oom;            /* growing failed: the load fails with -ENOMEM */
	uint64_t start_pos; /* first logical position still kept (rotating mode) */
	uint64_t end_pos;   /* logical position of the next byte */
	uint64_t len_max;   /* largest end_pos + 1 seen: the size the buffer needed */
};

int brt_vlog_init(struct brt_vlog *log, uint32_t level, char *ubuf, uint32_t size);
/* the same over grow's buffer (its alloc bytes so far), grown up to size bytes */
int brt_vlog_init_grow(struct brt_vlog *log, uint32_t level, struct brt_log_buf *grow,
		       uint32_t size);
void brt_vlog(struct brt_vlog *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void brt_vlog_va(struct brt_vlog *log, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void brt_vlog_reset(struct brt_vlog *log, uint64_t pos);
int brt_vlog_finalize(struct brt_vlog *log, uint32_t *true_size);

/* ---- abstract state ---------------------------------------------------------------------- */
#define BRT_NREGS 11
#define BRT_MAX_STACK 512
#define BRT_MAX_FRAMES 8
#define BRT_MAX_REFS 64
#define BRT_MAX_VAR_OFF (1 << 29)
#define BRT_MAX_PACKET_OFF 0xffff
#define BRT_COMPLEXITY_LIMIT 1000000
#define BRT_MAX_SUBPROGS 256

enum brt_reg_type {
	NOT_INIT,
	SCALAR_VALUE,
	PTR_TO_CTX,
	CONST_PTR_TO_MAP,
	PTR_TO_MAP_VALUE,
	PTR_TO_MAP_KEY,
	PTR_TO_STACK,
	PTR_TO_PACKET_META,
	PTR_TO_PACKET,
	PTR_TO_PACKET_END,
	PTR_TO_MEM,
	PTR_TO_FUNC,         /* a function of the program (lddw BPF_PSEUDO_FUNC); map_idx =
			      * its subprogram number */
	PTR_TO_BTF_ID,       /* a kernel object typed by vmlinux BTF (btf_id): tracing args
			      * and what loads through them give (btf_ctx.c) */
	PTR_TO_SOCKET,       /* struct bpf_sock: a context field (sock_addr, sk_lookup ...), a
			      * socket lookup or a sockmap element */
	PTR_TO_SOCK_COMMON,  /* its common part (sk_reuseport's migrating_sk, __sk_buff->sk,
			      * bpf_skc_lookup_tcp()) */
	PTR_TO_FLOW_KEYS,    /* flow_dissector's struct bpf_flow_keys */
	PTR_TO_TP_BUFFER,    /* raw_tracepoint_writable's args[0] */
	PTR_TO_TCP_SOCK,     /* struct bpf_tcp_sock (bpf_tcp_sock()) */
	CONST_PTR_TO_DYNPTR, /* a const struct bpf_dynptr * a callback is given; also the
			      * type of a dynptr stack slot's register (dynptr.c) */
	BRT_REG_TYPE_COUNT,
};
/* flags on top of the base type, as the kernel's type modifiers */
#define PTR_MAYBE_NULL 0x100u
#define MEM_RDONLY 0x200u
#define MEM_RINGBUF 0x400u
#define MEM_USER 0x800u      /* PTR_TO_BTF_ID tagged __user: no direct loads */
#define MEM_PERCPU 0x1000u   /* tagged __percpu: no direct loads */
#define MEM_RCU 0x2000u      /* walked through an __rcu field inside an RCU section */
#define PTR_UNTRUSTED 0x4000u
#define PTR_TRUSTED 0x8000u
/* a slice of a packet dynptr (the kernel's DYNPTR_TYPE_SKB/_XDP/_SKB_META on PTR_TO_MEM):
 * it dies when the packet changes, as packet pointers do; not printed */
#define DYNPTR_TYPE_PKT 0x10000u
/* an object the program allocated (bpf_obj_new, graph.c): btf_id is a struct of the
 * program's BTF (opts->local_btf), not the kernel's */
#define MEM_ALLOC 0x20000u
/* ... a non-owning reference to one (in a list or tree: valid until bpf_spin_unlock) */
#define NON_OWN_REF 0x40000u
#define BASE_TYPE(t) ((t) & 0xffu)

/* A PTR_TO_BTF_ID whose btf_id is of the program's or a map's BTF (reg->map_idx says
 * which), not the kernel's: the kernel looks at reg->btf.  An allocated object, owned or
 * not, and a percpu object's RCU pointer (a __percpu_kptr load: no kernel field is both
 * __percpu and RCU-safe, the kernel's BTF_TYPE_SAFE_RCU lists hold none). */
static inline int brt_btf_local(uint32_t type)
{
	return (type & MEM_ALLOC) || (type & (MEM_PERCPU | MEM_RCU)) == (MEM_PERCPU | MEM_RCU);
}

/* Packet pointer ranges below zero: what a comparison with pkt_end proved. */
#define AT_PKT_END (-1)
#define BEYOND_PKT_END (-2)

struct brt_reg {
	struct tnum var_off; /* known bits of the variable part (scalar value or ptr offset) */
	int64_t smin;
	int64_t smax;
	uint64_t umin;
	uint64_t umax;
	int32_t s32_min;
	int32_t s32_max;
	uint32_t u32_min;
	uint32_t u32_max;
	uint32_t type;       /* enum brt_reg_type | flags */
	int32_t off;         /* fixed offset of a pointer */
	uint32_t id;         /* shared by copies: null checks and bounds apply to all; a
			      * scalar's with BRT_ADD_CONST is its id's value plus off */
	uint32_t ref_obj_id; /* acquired reference this pointer belongs to */
	int32_t range;       /* packet: bytes after the pointer proven inside the packet */
	uint32_t mem_size;   /* PTR_TO_MEM: bytes */
	uint16_t map_idx;    /* map value/key/ptr: index into env->maps; func: subprogram;
			      * a socket: 1 + the sockmap/sockhash it came from, 0 none (the
			      * kernel's map_ptr, NULL for bpf_sk_lookup_*'s: states compare
			      * it); an allocated object: its BTF (graph.c) */
	uint8_t frameno;     /* PTR_TO_STACK: which frame's stack */
	uint8_t precise;     /* scalar: stored states only, some path from here needs its
			      * value (precision.c); an imprecise one matches any scalar
			      * (here, in what was padding: states stay as large as before) */
	uint32_t btf_id;     /* PTR_TO_BTF_ID: its struct's id in opts->attach_btf */
};

enum brt_slot_type {
	STACK_INVALID, /* never written */
	STACK_SPILL,   /* part of a spilled register (stack.spilled) */
	STACK_MISC,    /* written with unknown data */
	STACK_ZERO,    /* written with zero */
	STACK_DYNPTR,  /* one of the two slots of a struct bpf_dynptr (dynptr.c), whole */
	STACK_ITER,    /* a slot of a struct bpf_iter_<type> (iter.c), whole */
	STACK_IRQ_FLAG, /* a saved irq flag (irq.c), whole: spilled.ref_obj_id its reference,
			 * spilled.btf_id who saved it (BRT_IRQ_NATIVE, BRT_IRQ_LOCK) */
};

/* The kernel's enum bpf_dynptr_type, with its values */
enum brt_dynptr_type {
	BRT_DYNPTR_INVALID,
	BRT_DYNPTR_LOCAL,
	BRT_DYNPTR_RINGBUF,
	BRT_DYNPTR_SKB,
	BRT_DYNPTR_XDP,
	BRT_DYNPTR_SKB_META,
};

/* A dynptr's facts (the kernel's reg->dynptr and reg->dynptr_id) live in register fields
 * their types leave unused, so that states keep their size: a CONST_PTR_TO_DYNPTR (a
 * dynptr slot's register included) keeps its type and whether it is the first slot in
 * range; a slice of a dynptr's memory (PTR_TO_MEM) keeps the dynptr's id in btf_id. */
#define BRT_DYNPTR_FIRST 0x100
static inline uint32_t brt_dynptr_type(const struct brt_reg *r)
{
	return (uint32_t)r->range & 0xffu;
}
static inline int brt_dynptr_first(const struct brt_reg *r)
{
	return (r->range & BRT_DYNPTR_FIRST) != 0;
}

/* A bpf_dynptr_slice() result (PTR_TO_MEM) given a stack buffer remembers it, as the
 * running 6.18.44 does (its log's `buf=fp[F]OFF+SIZE`; 6.18.19's source does not): the
 * buffer's offset in range (< 0; 0 none), its size in map_idx, its frame in frameno.  A
 * store into it kills the slice (stack.c). */
static inline int brt_slice_buf(const struct brt_reg *r)
{
	return BASE_TYPE(r->type) == PTR_TO_MEM && r->range < 0;
}
static inline int brt_slice_buf_hit(const struct brt_reg *r, int frameno, int64_t lo, int64_t hi)
{
	return brt_slice_buf(r) && r->frameno == frameno && lo < (int64_t)r->range + r->map_idx &&
	       hi > (int64_t)r->range;
}

/* An iterator's facts (the kernel's reg->iter) live in its first slot's register: the
 * iterator struct's BTF id in btf_id, its state in range and the loop depth in mem_size,
 * which a stack register leaves unused; ref_obj_id holds its reference. */
enum { BRT_ITER_INVALID, BRT_ITER_ACTIVE, BRT_ITER_DRAINED };
static inline uint32_t brt_iter_state(const struct brt_reg *r)
{
	return (uint32_t)r->range;
}
static inline uint32_t brt_iter_depth(const struct brt_reg *r)
{
	return r->mem_size;
}
static inline void brt_iter_set(struct brt_reg *r, uint32_t state, uint32_t depth)
{
	r->range = (int32_t)state;
	r->mem_size = depth;
}

struct brt_stack_slot {
	struct brt_reg spilled; /* the register spilled into this 8-byte slot */
	uint8_t type[8];        /* per byte; index 0 is the byte just below the slot's top */
};

/* brt_frame.in_async_cb: whose async callback the walk is */
enum { BRT_ASYNC_TIMER = 1, BRT_ASYNC_TASK_WORK = 2 };

struct brt_frame {
	struct brt_reg regs[BRT_NREGS];
	struct brt_stack_slot *stack; /* allocated_stack / 8 slots; slot i covers fp-8(i+1) */
	uint32_t *stack_refs;         /* stored states only: stack is shared by this many
				       * frames (read-only then), NULL when owned alone */
	int allocated_stack;          /* bytes, multiple of 8 */
	int callsite;                 /* insn index of the call that made this frame, -1 main */
	int frameno;
	int subprogno;
	int in_callback_fn;           /* a callback (bpf_loop): returns to its callsite */
	/* BRT_ASYNC_TIMER: frame 0 of a timer callback's own walk (helper_timer.c), which
	 * returns 0; BRT_ASYNC_TASK_WORK: a task work's (kfunc_task_work.c), which returns
	 * any 32-bit value */
	int in_async_cb;              /* frame 0 of a timer callback's own walk (helper_timer.c):
				       * it returns 0 to nobody */
	int rbtree_cb;                /* bpf_rbtree_add's less() callback (graph.c) */
	int in_exc_cb;                /* frame 0 of the exception callback's own walk: it
				       * returns the program's value (exception.c) */
	uint32_t callback_depth;      /* callback iterations explored from this frame */
};

/* What a reference stands for (the kernel's enum ref_state_type): a state's references
 * are one list in the order they were taken, because locks must be released in reverse
 * order, irq flags restored in reverse order, and the log prints them all as refs=. */
enum brt_ref_type {
	BRT_REF_PTR = 1,           /* an acquired pointer: released by a helper or kfunc */
	BRT_REF_IRQ = 2,           /* an irq flag saved in a stack slot (STACK_IRQ_FLAG) */
	BRT_REF_LOCK = 4,          /* a held bpf_spin_lock (helper_args.c) */
	BRT_REF_RES_LOCK = 8,      /* a held bpf_res_spin_lock (res_lock.c) */
	BRT_REF_RES_LOCK_IRQ = 16, /* ... taken by bpf_res_spin_lock_irqsave */
};
#define BRT_REF_LOCK_MASK (BRT_REF_LOCK | BRT_REF_RES_LOCK | BRT_REF_RES_LOCK_IRQ)

/* A lock's owner (brt_ref.ptr, the kernel's active_lock_ptr): 1 + the index in env->maps
 * of the map whose value holds it, or BRT_LOCK_PTR_ALLOC for a lock inside an object of
 * bpf_obj_new() (the kernel names the program's BTF there). */
#define BRT_LOCK_PTR_ALLOC 0xffffu

struct brt_ref {
	uint32_t id;   /* PTR, IRQ: the reference's id; locks: the id of the pointer the lock
			* was taken through (0 for a map value's direct address) */
	int insn_idx;  /* where it was taken */
	uint16_t type; /* enum brt_ref_type */
	uint16_t ptr;  /* locks: BRT_LOCK_PTR_ALLOC or 1 + map index, else 0 */
};

/* One entry of a state's instruction history (the kernel's jmp_history): an instruction
 * reached other than from the one before it, or a load/store of a stack slot, so that the
 * path can be walked backwards (precision.c). */
#define BRT_HIST_STACK 0x1u   /* flags: a fixed-offset stack access of slot (frame, spi) */
#define BRT_HIST_LINKED 0x2u  /* a branch that narrowed scalars linked by id: see linked */
#define BRT_HIST_WALK 0x8u    /* bpfrt's own: the insn after a 2-insn lddw, kept for the
			       * walk, not an entry of the kernel's (brt_vstate.hist) */
struct brt_hist {
	int idx;
	int prev_idx;
	uint8_t flags;
	uint8_t frame;
	uint8_t spi;
	uint8_t nlinked;
	uint32_t linked;    /* BRT_HIST_LINKED: nlinked entries at env->linked[linked], each
			     * frame << 8 | is_reg << 7 | reg or spi (kept out of the entry:
			     * stored states keep their history, most entries have none) */
};

struct brt_vstate {
	struct brt_frame *frame[BRT_MAX_FRAMES];
	int curframe;
	int nrefs;
	int insn_idx;          /* where this state is (for stored and pushed states) */
	uint32_t branches;     /* stored states: paths from here still being explored */
	struct brt_vstate *parent; /* the stored state this path last passed */
	struct brt_stored *node;   /* stored states: their list node */
	uint32_t hist;             /* the kernel's jmp_history_cnt: the entries of hent since
				    * the last stored state that the kernel has too (jump points,
				    * spills, fills, links; not BRT_HIST_WALK ones) */
	int speculative;           /* a path only speculative execution takes (ptr_alu.c) */
	/* callback bodies entered on this path (the kernel's callback_unroll_depth): two
	 * iterations alike in every register are no infinite loop when this differs */
	uint32_t callback_unroll;
	/* locks held (refs of BRT_REF_LOCK_MASK types: bpf_spin_lock and bpf_res_spin_lock),
	 * and the last one taken, which is the only one that may be released: its
	 * brt_ref.ptr and id (the kernel's active_locks, active_lock_ptr, active_lock_id) */
	uint8_t active_locks;
	uint16_t active_lock_ptr;
	uint32_t active_lock_id;
	/* the id of the irq flag saved last (BRT_REF_IRQ), 0 none: the only one that may
	 * be restored (the kernel's active_irq_id) */
	uint32_t active_irq_id;
	uint8_t active_rcu;        /* inside bpf_rcu_read_lock() (kfunc.c) */
	/* a sleepable async callback's own walk (a task work's: kfunc_task_work.c), which may
	 * call what sleeps whatever the program's flags (the kernel's in_sleepable) */
	uint8_t in_sleepable;
	uint32_t active_preempt;   /* bpf_preempt_disable() calls not yet enabled (kfunc.c) */
	uint32_t may_goto_depth;   /* may_goto fall-throughs taken on this path (branch.c) */
	/* the path since the parent state: first and last insn, and the entries where it
	 * did not go straight on (stored and pushed states keep theirs) */
	int first_insn_idx;
	int last_insn_idx;
	struct brt_hist *hent;
	uint32_t hcnt;
	uint32_t hcap;
	/* last: a stored state is allocated with room for its nrefs only (it is never
	 * written but for precise marks; 24,951 states of a long loop paid 500 bytes each) */
	struct brt_ref refs[BRT_MAX_REFS];
};

/* ---- environment ----------------------------------------------------------------------- */
struct brt_vmap {
	struct brt_map_info info;
	struct brt_btf *vbtf; /* info's BTF, parsed when a graph kfunc first needs it */
	int vbtf_tried;
	struct brt_grec *vrec; /* the value's record, for kptr loads and stores (cached) */
	int vrec_tried;
	int vrec_local; /* the map's BTF is the program's (the kernel's same struct btf) */
	int fd;
	int inner_idx; /* maps of maps: the entry of their inner template, else -1 */
	int is_tmpl;   /* an inner template: no fd names it */
};

/* A global function's argument kinds, from its BTF prototype (the kernel's
 * bpf_subprog_arg_info, global.c). */
enum brt_garg {
	BRT_GARG_SCALAR,   /* int or enum: any scalar */
	BRT_GARG_CTX,      /* pointer to the program type's context */
	BRT_GARG_MEM,      /* pointer to arg_size bytes, possibly NULL (MEM_NULLABLE) */
	BRT_GARG_DYNPTR,   /* const struct bpf_dynptr *: checked at the call as the kernel's
			    * process_dynptr_func() starts, then refused (not modelled) */
};
#define BRT_GARG_NONNULL 0x10u /* BRT_GARG_MEM tagged __arg_nonnull */

struct brt_subprog {
	int start;       /* first insn */
	int stack_depth; /* bytes, rounded up to 8 */
	int has_tail_call;
	int has_ld_abs;
	/* global.c: the prototype as btf_prepare_func_args() reads it (args_cached once
	 * it has), whether a caller passed it other arguments (unreliable), and for global
	 * functions whether a walk reached a call of it and whether it was verified */
	uint8_t args_cached;
	uint8_t unreliable;
	uint8_t called;
	uint8_t verified;
	int8_t changes_pkt;   /* -1 not known yet, else it or a callee changes packet data */
	int8_t might_sleep;   /* -1 not known yet, else it or a callee calls what may sleep */
	uint8_t arg_cnt;
	uint8_t arg_kind[5];  /* enum brt_garg | BRT_GARG_NONNULL */
	uint32_t arg_size[5]; /* BRT_GARG_MEM: bytes */
};

/* per-instruction facts */
struct brt_insn_aux {
	uint8_t seen;           /* visited by the main pass */
	uint8_t prune_point;    /* states are stored and compared here */
	uint8_t jmp_point;
	uint8_t loop_head;      /* target of a back-edge */
	uint8_t calls_callback; /* a helper call that calls back (bpf_loop) */
	uint8_t iter_next;      /* a call of an iterator's _next() kfunc (iter.c) */
	uint8_t second_slot;    /* second half of an lddw */
	uint8_t bad_ctx_conv;   /* a load the kernel accepts but cannot rewrite afterwards
				 * (bpf_tcp_sock's upper u32 halves): the load fails then */
	int16_t map_idx;        /* lddw: which map, -1 none */
	uint16_t live_in;       /* registers live before this insn (bit r) */
	uint16_t prec_in;       /* scalar registers whose value may matter, before this insn */
	uint32_t scc;           /* strongly connected component of the subprogram's control
				 * flow (a loop; a callback-calling call loops on itself), 0 none */
	uint32_t map_off;       /* lddw of BPF_PSEUDO_MAP_VALUE: offset into the value;
				 * of BPF_PSEUDO_BTF_ID giving PTR_TO_MEM: its size */
	uint32_t ksym_type;     /* lddw of BPF_PSEUDO_BTF_ID: the register type it gives */
	uint32_t ksym_btf_id;   /* ... and for PTR_TO_BTF_ID the kernel BTF type */
	uint8_t ptr_kind;       /* loads/stores: 1 ctx, 2 other pointer (must not mix) */
	uint8_t pkt_write;      /* a store into the packet (the kernel's seen_direct_write) */
	uint8_t probe_load;     /* a load through a kernel pointer (BPF_PROBE_MEM) */
	/* bpf_loop call: the kernel's loop_inline_state (flags known 0 and the same
	 * callback on every path: optimize_bpf_loop() inlines it) */
	uint8_t loop_init, loop_fit;
	int loop_subprog;
	/* helper call with a map argument: 1 + map_idx of the one map every path passed
	 * so far, -1 once two paths passed different maps (the kernel's map_ptr_state) */
	int16_t call_map;
	/* Spectre v1 (no CAP_PERFMON): pointer add/sub by a register is masked at run time
	 * by one limit per instruction, so every path must agree on it (the kernel's
	 * aux->alu_state and alu_limit; 0: none recorded yet) */
	uint8_t alu_state;
	uint32_t alu_limit;
	/* stack liveness (privileged): slots of this insn's frame read by it, or by the
	 * callees of this call insn, as the walk saw them so far; slots live before it */
	uint64_t stack_read;
	uint64_t stack_live;
	/* slots of this insn's frame it wrote whole on every visit so far (the kernel's
	 * must_write: 8-byte stores at 8-aligned offsets through any pointer to the stack,
	 * dynptr, iterator and irq flag slots); stack_write_set: visited at least once */
	uint64_t stack_write;
	uint8_t stack_write_set;
	int16_t ctx_read_off;   /* context load: 1 + the offset it reads at run time, 0: its own */
	/* a speculative path failed here: the kernel puts a barrier before the insn, ends
	 * speculative paths reaching it and no longer masks its pointer arithmetic */
	uint8_t nospec;
	/* Spectre v4 (no CAP_PERFMON): a stack store that spills a pointer or overwrites
	 * what is not data may be bypassed; the kernel puts a barrier after it and ends
	 * speculative paths once they have run it (6.18's nospec_result) */
	uint8_t nospec_result;
};

struct brt_stored {
	struct brt_stored *next; /* env->explored[insn_idx], newest first (or env->evicted) */
	struct brt_stored *prev; /* evicted states: doubly linked in env->evicted */
	int insn_idx;
	int active;              /* still being explored (branches > 0) */
	int evicted;             /* dropped from its list while active: freed when done */
	struct brt_vstate *st;
	uint32_t hits;
	uint32_t miss;
	uint64_t hash; /* state_hash() of st, for the exact (loop) comparison */
	/* the kernel's clean_live_states(): once complete, the state's stack liveness is
	 * taken at the next visit of its insn and kept (slive per frame), as the kernel
	 * marks the dead slots invalid once */
	int cleaned;
	uint64_t slive[BRT_MAX_FRAMES];
};

/* a loop's identity in a walk: the calls leading to the subprogram holding it, and the
 * loop (the kernel's bpf_scc_callchain) */
struct brt_scc_chain {
	int callsites[BRT_MAX_FRAMES];
	uint32_t scc;
};

/* A path pruned inside a loop by a state whose marks were not final: a copy of its state
 * (its parents are the path's stored states) and the state that pruned it, whose precise
 * marks are propagated again when the loop's exploration ends (propagate_backedges) */
struct brt_backedge {
	struct brt_backedge *next;
	struct brt_vstate *st;
	const struct brt_vstate *equal;
};

struct brt_scc_visit {
	struct brt_scc_chain chain;
	const struct brt_vstate *entry; /* the first state stored inside, while explored */
	uint32_t backedges;
	struct brt_backedge *list;
};

struct brt_pending {
	struct brt_vstate *st;
	int insn_idx;
	int prev_insn_idx;
	uint64_t log_pos;
};

struct brt_env {
	const struct bpf_insn *insns;
	int len;
	const uint16_t *ops;     /* each instruction's row (enum brt_op): opts->ops or own_ops */
	uint16_t *own_ops;       /* looked up here when the caller gave none */
	const struct brt_verify_opts *opts;
	struct brt_vlog log;
	int allow_ptr_leaks;     /* CAP_PERFMON */
	int allow_uninit_stack;  /* CAP_PERFMON */
	int bpf_capable;         /* CAP_BPF */
	int bypass_spec_v1;      /* CAP_PERFMON */
	/* a pointer moved by an unknown scalar without CAP_PERFMON: scalars compare exactly
	 * when pruning (the kernel's explore_alu_limits) */
	int explore_alu_limits;
	int strict_alignment;
	struct brt_insn_aux *aux;
	/* subprog_cnt entries and the end marker after them: sub_inline until a program
	 * has more functions than it holds, then the heap (cfg.c add_subprog()); the env
	 * is allocated per program, so its size is what every tiny program pays */
	struct brt_subprog *subprogs;
	int subprog_cnt;
	int subprog_cap;
	struct brt_subprog sub_inline[4];
	/* the exception callback's subprogram (the "exception_callback:" tag), 0 when the
	 * program names none; seen_exception once a verified bpf_throw call (exception.c) */
	int exc_cb_subprog;
	int seen_exception;
	/* nmaps entries: map_inline until a program uses more maps (cfg.c resolve_map()) */
	struct brt_vmap *maps;
	int nmaps;
	int maps_cap;
	struct brt_vmap map_inline[4];
	const struct brt_vline *prev_line; /* source line the log showed last */
	struct brt_vstate *cur;
	int insn_idx;
	int prev_insn_idx;
	uint32_t id_gen;
	/* exploration */
	struct brt_pending *stack;
	int stack_len;
	int stack_cap;
	/* per insn: the states stored there, newest first, those still being explored (the
	 * loop check) and complete ones (pruning), as the kernel's explored_states */
	struct brt_stored **explored;
	struct brt_stored *evicted;   /* dropped while still being explored (its free_list) */
	/* per bucket of the kernel's explored_states hash (prune.c bucket()): the states in
	 * it, at any insn; its max_states_per_insn counts them all */
	uint32_t *bucket_states;
	/* loops being explored, by call chain (the kernel's bpf_scc_visit): the stored state
	 * that entered the loop and how many states were pruned inside it by one whose
	 * exploration, and so its precision marks, is not complete (backedges) */
	struct brt_scc_visit *visits;
	int nvisits, capvisits;
	uint32_t insn_processed;
	uint64_t start_ns;        /* CLOCK_MONOTONIC at brt_verify(): "verification time" */
	uint32_t max_ctx_offset;  /* highest ctx byte read or written + 1 (attach checks) */
	uint32_t total_states;
	uint32_t peak_states;
	uint32_t cur_states;
	/* states a finished walk (main program, a global function) left stored: the kernel's
	 * free_states() frees them but leaves its explored_states_size and free_list_size
	 * counting them, so peak_states of a program with global functions adds up the walks */
	uint32_t freed_states;
	uint32_t max_states_per_insn;
	uint32_t jmps_processed;
	uint32_t prev_jmps_processed;
	uint32_t prev_insn_processed;
	int do_print_state;
	int cur_hent;            /* history entry of the current insn, -1 none yet */
	int stack_live_dirty;    /* a stack_read grew (a stack_write shrank) since stack_live */
	uint64_t stack_write_acc; /* the current insn's whole-slot writes to its own frame */
	int stack_write_insn;     /* that insn, -1: none being checked */
	/* caller frames' stack liveness (allocated at the first read of a caller's slot):
	 * per insn, the slots of the frame d + 1 levels up from the insn's frame that it
	 * reads (a call insn: that its callees read), and those live before it */
	struct brt_stack_up {
		uint64_t read[BRT_MAX_FRAMES - 1];
		uint64_t live[BRT_MAX_FRAMES - 1];
	} *stack_up;
	/* the kernel's per-call-chain stack liveness, for the level-2 log's lines alone
	 * (live_log.c); NULL below level 2 */
	struct brt_live_log *live_log;
	/* precision backtracking (precision.c): per frame, registers and stack slots whose
	 * value must be known */
	uint16_t *linked;        /* brt_hist.linked sets */
	uint32_t nlinked, caplinked;
	/* backedges not yet propagated, in all visits: while there are any, stored states
	 * leave memory only at the end (graveyard), the backedges' parents among them */
	uint32_t nbackedges;
	struct brt_stored *graveyard;
	int bt_changed;           /* a backtrack marked something precise it was not */
	uint16_t bt_regs[BRT_MAX_FRAMES];
	uint64_t bt_stack[BRT_MAX_FRAMES];
	int bt_frame;
	/* first error */
	int err_insn;
	char err_msg[BRT_VERIFY_ERRLEN];
	int internal_err;
	char tmp_str[64];
	uint16_t scratched_regs;     /* registers touched by the current insn (log) */
	uint64_t scratched_stack;    /* stack slots touched (log) */
	uint64_t prev_log_pos;       /* log position after the last insn line */
	uint64_t prev_insn_print_pos; /* length of the last insn line */
	struct brt_reg fake_reg[2];
	/* BTF-typed programs (btf_ctx.c): the attach target's function prototype, its name
	 * for messages, and whether arg 0 is the tracepoint's hidden 'void *__data' */
	const struct btf_type *attach_proto;
	const char *attach_name;
	int attach_trace;
	/* struct_ops programs: the struct (btf/struct_ops.def) and member they implement */
	struct brt_struct_ops st_ops;
	uint32_t st_member;
	/* the kernel's BTF that PTR_TO_BTF_ID registers are typed by: opts->attach_btf, or
	 * read when a helper first returns a kernel object (brt_env_kbtf()) */
	const struct brt_btf *kbtf;
	int btf_loads;        /* a load through a kernel pointer was checked */
	/* bpf_obj_new's types (graph.c): what the runtime allocates, for the result */
	struct brt_obj_type *obj_types; /* BRT_MAX_OBJ_TYPES, allocated at the first */
	uint32_t nobj_types;
};

/* An error message: into the log (kernel wording, with "\n") and remembered as the error
 * line.  Several calls in a row leave the last line, as the kernel's last line before its
 * statistics. */
void brt_verr(struct brt_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A non-error log line (trace, states). */
void brt_vinfo(struct brt_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define LOG_L1(env) ((env)->log.level & (BRT_LOG_LEVEL1 | BRT_LOG_LEVEL2))
#define LOG_L2(env) ((env)->log.level & BRT_LOG_LEVEL2)

/* ---- cfg.c: passes before the walk -------------------------------------------------- */
int brt_check_insns(struct brt_env *env);   /* opcodes, lddw, map references */
/* the kernel's MAX_USED_MAPS and MAX_USED_BTFS: a program's maps (inner-map templates
 * not counted) and BTF objects */
#define BRT_MAX_USED_MAPS 64
#define BRT_MAX_USED_BTFS 64
int brt_bind_fd_array(struct brt_env *env); /* fd_array_cnt's maps and BTF objects */
int brt_check_subprogs(struct brt_env *env); /* subprograms, jump ranges, last insn */
int brt_check_abnormal_return(struct brt_env *env); /* LD_ABS, tail calls in subprograms */
int brt_check_cfg(struct brt_env *env);      /* reachability, back-edges, prune points */
int brt_compute_liveness(struct brt_env *env); /* 0 or -ENOMEM */
/* aux[].scc: Tarjan over each subprogram's control flow, as the kernel's compute_scc() */
int brt_compute_scc(struct brt_env *env);
/* stack slots live before each insn from the reads the walk recorded (aux stack_live,
 * stack_up live) */
void brt_compute_stack_live(struct brt_env *env);
/* propagate the stack reads and writes recorded since the last call (the kernel's
 * bpf_update_live_stack(): at a path's end and at a function's exit) */
void brt_stack_live_sync(struct brt_env *env);
/* the slots of st's frame `frame` that a path from insn_idx may read (privileged) */
uint64_t brt_stack_live_frame(struct brt_env *env, const struct brt_vstate *st, int insn_idx,
			      int frame);
int brt_is_kernel_opcode(uint8_t code);
int brt_find_subprog(struct brt_env *env, int insn_idx);
int brt_find_subprog_of(struct brt_env *env, int insn_idx); /* subprogram holding insn */

/* ---- live_log.c: the level-2 log's stack-liveness lines (no-ops below level 2) ---------- */
int brt_live_log_init(struct brt_env *env);        /* after cfg: subprograms known */
void brt_live_log_free(struct brt_env *env);
void brt_live_log_insn_start(struct brt_env *env);  /* before an insn is checked */
void brt_live_log_insn_commit(struct brt_env *env); /* after it, unless it failed */
/* the current insn reads frame's slots in mask (bit i: fp-8(i+1)) / writes them whole */
void brt_live_log_read(struct brt_env *env, int frame, uint64_t mask);
void brt_live_log_write(struct brt_env *env, int frame, uint64_t mask);
void brt_live_log_reset_chain(struct brt_env *env); /* env->cur entered a callee */
void brt_live_log_update(struct brt_env *env);      /* a path or a subprogram ends */

/* ---- state.c ------------------------------------------------------------------------- */
struct brt_vstate *brt_state_new(void);
int brt_state_copy(struct brt_vstate *dst, const struct brt_vstate *src);
struct brt_vstate *brt_state_dup(const struct brt_vstate *src);
/* a copy to store: frames whose stack equals that of prev's frame share prev's (stored
 * states are never written, and loops mostly leave the stack alone) */
/* a stored frame's stack owned alone (copied when shared), before a mark changes in it */
int brt_frame_own_stack(struct brt_frame *f);
struct brt_vstate *brt_state_dup_stored(const struct brt_vstate *src, struct brt_vstate *prev);
void brt_state_free(struct brt_vstate *st);
void brt_frame_free(struct brt_frame *f);
struct brt_frame *brt_frame_new(int callsite, int frameno, int subprogno);
int brt_grow_stack(struct brt_frame *f, int size);
void brt_mark_reg_not_init(struct brt_reg *reg);
void brt_mark_reg_unknown(struct brt_env *env, struct brt_reg *reg);
void brt_mark_reg_known(struct brt_reg *reg, uint64_t imm);
void brt_mark_reg_known_zero(struct brt_reg *reg);
int brt_is_pointer(const struct brt_reg *reg);
int brt_reg_is_null(const struct brt_reg *reg);
int brt_reg_precise(const struct brt_env *env, const struct brt_reg *reg);
int brt_is_spilled(const struct brt_stack_slot *slot);

/* ---- print.c: states in the kernel's log notation ------------------------------------ */
const char *brt_reg_type_str(struct brt_env *env, uint32_t type);
/* the state the last insn touched, after its line (the kernel's print_insn_state) */
void brt_print_scratched(struct brt_env *env);
void brt_print_state(struct brt_env *env, const struct brt_vstate *st, int frameno,
		     int print_all);
/* instruction idx as the kernel's log shows it ("(bf) r0 = r2", kfunc calls by name) */
void brt_print_insn(struct brt_env *env, int idx);

/* ---- graph.c: allocated objects, lists and trees --------------------------------------- */
/* the kernel's special fields of a struct (enum btf_field_type, those graph.c knows) */
enum { BRT_GF_SPIN_LOCK, BRT_GF_RES_SPIN_LOCK, BRT_GF_LIST_HEAD, BRT_GF_LIST_NODE,
       BRT_GF_RB_ROOT, BRT_GF_RB_NODE, BRT_GF_REFCOUNT,
       /* pointers tagged __kptr_untrusted, __kptr, __percpu_kptr (not structs) */
       BRT_GF_KPTR_UNREF, BRT_GF_KPTR_REF, BRT_GF_KPTR_PERCPU, BRT_GF_COUNT };
#define BRT_GF_IS_KPTR(k) ((k) >= BRT_GF_KPTR_UNREF && (k) <= BRT_GF_KPTR_PERCPU)
#define BRT_MAX_GFIELDS 32
struct brt_gfield {
	uint8_t kind;      /* BRT_GF_* */
	uint16_t home;     /* the BTF value_id is in (brt_graph_home_btf()) */
	uint32_t off;      /* bytes into the value or object */
	uint32_t size;
	uint32_t value_id; /* roots: the struct their nodes are in (same BTF); kptrs: the
			    * struct pointed to (same BTF) */
	uint8_t kernel;    /* kptrs: a type vmlinux has (else an object of bpf_obj_new) */
	uint32_t node_off; /* ... and the node member's offset in it */
};
/* the kernel's struct btf_record */
struct brt_grec {
	int n;
	int32_t spin_lock_off;     /* -1: none */
	int32_t res_spin_lock_off; /* -1: none */
	int32_t refcount_off;      /* -1: none */
	struct brt_gfield f[BRT_MAX_GFIELDS];
};
const char *brt_gfield_name(int kind);
/* the fields of struct or DATASEC id of btf (0, or the kernel's btf_parse_fields() error) */
int brt_graph_record(const struct brt_btf *btf, uint32_t id, struct brt_grec *rec);
/* reg_btf_record(): 1 and *rec for an allocated object with special fields or a map value
 * whose map has BTF, else 0 */
int brt_graph_reg_record(struct brt_env *env, const struct brt_reg *reg, struct brt_grec *rec);
/* the record of map map_idx's value (cached; NULL without BTF or fields) */
const struct brt_grec *brt_graph_map_rec(struct brt_env *env, int map_idx);
/* the kptr field at byte off of rec, or NULL */
const struct brt_gfield *brt_graph_kptr_at(const struct brt_grec *rec, int64_t off);
/* check_map_kptr_access(): a load or store of map value's kptr field f (regno the map
 * value, value_regno the loaded or stored register, -1 for BPF_ST) */
int brt_graph_kptr_access(struct brt_env *env, const struct brt_gfield *f, int value_regno);
/* process_kptr_func(), map_kptr_match_type() and the result of bpf_kptr_xchg */
int brt_graph_kptr_dest(struct brt_env *env, int regno, struct brt_gfield *out);
/* bpf_kptr_xchg's release of the stashed object's reference (percpu objects stay readable
 * as RCU pointers inside an RCU section) */
int brt_graph_kptr_release(struct brt_env *env, uint32_t ref);
int brt_graph_kptr_match(struct brt_env *env, const struct brt_gfield *f, const struct brt_reg *reg,
			 int regno);
const struct brt_btf *brt_graph_map_btf(struct brt_env *env, int map_idx);
/* An allocated object's type (PTR_TO_BTF_ID | MEM_ALLOC) is an id of the BTF its register's
 * map_idx names, its "home": 0 the program's (opts->local_btf), 1 + k map k's value BTF.
 * The kernel types such a register by reg->btf: the program's for bpf_obj_new, the root's
 * (its map's) for a node taken from a map value's list or tree.  libbpf loads a program
 * and its maps with the one object BTF, so home is 0 whenever the program has a BTF; a
 * program without one (no func_info) can only take nodes from maps, typed by their BTF. */
const struct brt_btf *brt_graph_home_btf(struct brt_env *env, uint16_t home);
void brt_graph_free(struct brt_env *env);
const char *brt_local_type_name(struct brt_env *env, uint16_t home, uint32_t id);
int brt_graph_obj_new(struct brt_env *env, uint64_t type_id, int percpu);
int brt_graph_alloc_arg(struct brt_env *env, const struct brt_reg *reg, int argno,
			int percpu_drop);
int brt_graph_refcounted_arg(struct brt_env *env, const struct brt_reg *reg, int argno,
			     int *owning);
int brt_graph_access(struct brt_env *env, const struct brt_reg *reg, int off, int size);
void brt_graph_unlock(struct brt_env *env);
int brt_graph_may_lock(struct brt_env *env, const struct brt_reg *reg);
int brt_graph_set_non_owning(struct brt_env *env, struct brt_reg *reg);
int brt_graph_owning_to_non_owning(struct brt_env *env, uint32_t ref);
int brt_in_rbtree_cb(const struct brt_env *env);
int brt_graph_push_less(struct brt_env *env, int insn_idx, int subprogno,
			const struct brt_gfield *root);

/* ---- prune.c: comparing states ------------------------------------------------------- */
/* the stored state the current path last passed at insn_idx with the same call chain */
struct brt_vstate *brt_prev_entry(struct brt_vstate *cur, int insn_idx);
void brt_widen_imprecise(struct brt_env *env, const struct brt_vstate *old,
			 struct brt_vstate *cur, int insn_idx);
int brt_is_state_visited(struct brt_env *env, int insn_idx);
void brt_state_done(struct brt_env *env, struct brt_vstate *st);
void brt_free_stored(struct brt_env *env);
/* free every stored state and start empty (a new walk: a global function's) */
void brt_reset_stored(struct brt_env *env);

/* ---- min and max of each width, for the range arithmetic of bounds.c and branch.c ---- */
#define U32_MAX UINT32_MAX
#define S32_MIN INT32_MIN
#define S32_MAX INT32_MAX

static inline int64_t max_s64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min_s64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline int32_t max_s32(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t min_s32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }
static inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* ---- bounds.c: scalar ranges and the transfer functions ------------------------------- */
void brt_reg_bounds_sync(struct brt_reg *reg);
void brt_mark_reg_unbounded(struct brt_reg *reg);
void brt_coerce_reg_to_size(struct brt_reg *reg, int size);
void brt_coerce_reg_to_size_sx(struct brt_reg *reg, int size);
void brt_coerce_subreg_to_size_sx(struct brt_reg *reg, int size);
void brt_zext_32_to_64(struct brt_reg *reg);
int brt_check_alu(struct brt_env *env, const struct bpf_insn *insn);
int brt_check_cond_jmp(struct brt_env *env, const struct bpf_insn *insn, int *insn_idx);
/* ptr_alu.c: dst = ptr <op> offr, where ptr is the pointer operand and offr the other */
/* scalar += / -= register: record that the instruction is not pointer arithmetic (the
 * kernel's sanitize_val_alu); -EACCES when another path made it pointer arithmetic */
int brt_sanitize_val_alu(struct brt_env *env, const struct bpf_insn *insn);
int brt_ptr_alu(struct brt_env *env, const struct bpf_insn *insn, const struct brt_reg *ptr,
		const struct brt_reg *offr);
int brt_reg_const(const struct brt_reg *reg, int is32);
uint64_t brt_reg_const_val(const struct brt_reg *reg, int is32);

/* ---- memory.c ------------------------------------------------------------------------ */
enum brt_access { BRT_READ, BRT_WRITE };
int brt_check_mem_access(struct brt_env *env, int insn_idx, int regno, int off, int size,
			 enum brt_access t, int value_regno, int strict_once, int is_ldsx);
int brt_check_load_store(struct brt_env *env, const struct bpf_insn *insn);
int brt_check_atomic(struct brt_env *env, const struct bpf_insn *insn);
int brt_check_ld_abs(struct brt_env *env, const struct bpf_insn *insn);
int brt_check_ld_imm(struct brt_env *env, const struct bpf_insn *insn);
/* check_ptr_alignment(): off/size of the pointer reg aligned (strict: always checked) */
int brt_check_ptr_alignment(struct brt_env *env, const struct brt_reg *reg, int off, int size,
			    int strict);
int brt_check_helper_mem(struct brt_env *env, int regno, int size, int zero_ok,
			 enum brt_access t, int raw);
/* a pointer that must be unmoved (ctx, map pointers, ...): no fixed or variable offset */
int brt_check_ptr_off_reg(struct brt_env *env, const struct brt_reg *reg, int regno);
/* ... with fixed_off_ok (__check_ptr_off_reg()): a fixed offset allowed, not a variable
 * one (graph roots and nodes, kptr fields) */
int brt_check_ptr_fixed_off_reg(struct brt_env *env, const struct brt_reg *reg, int regno);
/* check_func_arg_reg_off() with ARG_DONTCARE, for helper and global-function arguments:
 * pointers to memory may carry an offset (the size check covers it), any other pointer
 * must be unmoved (brt_check_ptr_off_reg()) */
int brt_check_arg_reg_off(struct brt_env *env, const struct brt_reg *reg, int regno);

/* ---- ctx.c: the context's fields per program type ------------------------------------ */
/* 1 when [off, off + size) of the context may be accessed with t; *rt is the type the
 * load yields (SCALAR_VALUE, or a packet pointer for data/data_end/data_meta) */
int brt_ctx_valid(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt);
/* Where a valid context read of size bytes at off reads at run time: off, or the start
 * of its field when the kernel's narrow-load rewrite returns the whole field. */
int brt_ctx_read_off(struct brt_env *env, int off, int size);

/* ---- btf_ctx.c: programs typed by kernel BTF ------------------------------------------- */
/* check_attach_btf_id(): the attach target of a tracing program; 0 or -errno and the
 * kernel's message. */
int brt_check_attach_btf(struct brt_env *env);
/* btf_ctx_access(): may the context (u64 arguments) be read at off/size; *rt and
 * *btf_id the loaded register's type (SCALAR_VALUE or PTR_TO_BTF_ID | flags). */
int brt_btf_ctx_access(struct brt_env *env, int off, int size, enum brt_access t,
		       uint32_t *rt, uint32_t *btf_id);
/* check_ptr_to_btf_access(): a load or store through PTR_TO_BTF_ID reg at off (reg->off
 * included).  0 with *rt and *btf_id what a load gives, or -errno and the kernel's message. */
int brt_btf_ptr_access(struct brt_env *env, int regno, const struct brt_reg *reg, int off,
		       int size, enum brt_access t, uint32_t *rt, uint32_t *btf_id);
/* The kernel structs helpers name (the kernel's BTF_ID lists: btf_tracing_ids, the
 * helpers' arg and ret btf ids).  brt_btf_kstruct_id(): k's id in the kernel's BTF
 * (env->kbtf, read now if need be), 0 when there is no kernel BTF; found once per BTF. */
enum brt_kstruct {
	BRT_KS_TASK,	    /* task_struct */
	BRT_KS_VMA,	    /* vm_area_struct (bpf_find_vma's callback) */
	BRT_KS_SOCK_COMMON, /* sock_common */
	BRT_KS_SEQ_FILE,
	BRT_KS_TCP_SOCK,
	BRT_KS_SK_BUFF,
	BRT_KS_XDP_BUFF,
	BRT_KS_CGROUP,
	BRT_KS_FILE,	    /* bpf_sock_from_file's argument */
	BRT_KS_SOCKET,	    /* ... and what it returns */
	BRT_KS_NF_HOOK_STATE, /* a netfilter context's state */
	BRT_KS_COUNT
};
uint32_t brt_btf_kstruct_id(struct brt_env *env, enum brt_kstruct k);
const char *brt_btf_kstruct_name(enum brt_kstruct k);
static inline uint32_t brt_btf_task_id(struct brt_env *env)
{
	return brt_btf_kstruct_id(env, BRT_KS_TASK);
}

/* btf_struct_ids_match() for kfunc arguments (no log): the struct id of btf at off is
 * want, or (unless strict) holds it as a member at that offset, nested */
int brt_btf_struct_ids_match(const struct brt_btf *btf, uint32_t id, int32_t off, uint32_t want,
			     int strict);
/* btf_struct_ids_match() without strict matching: a PTR_TO_BTF_ID that is struct k, or
 * holds one at exactly its offset (a first member, recursively: struct sock's
 * sock_common, xdp_buff_xsk's xdp_buff); the kernel's walk messages logged. */
int brt_btf_reg_struct_match(struct brt_env *env, const struct brt_reg *reg,
			     enum brt_kstruct k);
/* nf_hook_state or sk_buff: the id of a netfilter context's pointer at off, 0 otherwise */
uint32_t brt_btf_nf_ctx_id(struct brt_env *env, int off);
/* check_reg_const_str(): regno points to a NUL-terminated string in a frozen read-only
 * array (helper_args.c) */
int brt_check_const_str(struct brt_env *env, int regno);
/* The struct's name of a PTR_TO_BTF_ID ("" when unknown). */
const char *brt_btf_reg_name(const struct brt_env *env, uint32_t btf_id);
/* bpf_sock_is_valid_access() (common: bpf_sock_common_is_valid_access()) */
int brt_sock_valid(int off, int size, int common);
/* bpf_tcp_sock_is_valid_access() */
int brt_tcp_sock_valid(int off, int size);
int brt_may_access_pkt(struct brt_env *env, enum brt_access t);

/* memory.c: an access of size bytes at off through the map value pointer in regno (its
 * range, the value's special fields), with the kernel's messages */
int brt_check_map_value_range(struct brt_env *env, int regno, int off, int size);

/* ---- stack.c: the stack's byte-level model ------------------------------------------- */
/* a load or store through the stack pointer in regno (value_regno: the register read or
 * written, -1 for a helper access) */
int brt_check_stack_access(struct brt_env *env, int regno, int off, int size,
			   enum brt_access t, int value_regno, int insn_idx);
int brt_stack_within_bounds(struct brt_env *env, int regno, int off, int size,
			    enum brt_access t);
/* helper memory on the stack (raw): BRT_STACK_READ every byte initialised; BRT_STACK_RAW
 * about to be written (the kernel's raw mode: uninitialised memory of a constant size);
 * BRT_STACK_CLOBBER initialised and then written with anything (the kernel's BPF_WRITE
 * without raw mode: spilled values become unknown, zeroes misc) */
enum { BRT_STACK_READ, BRT_STACK_RAW, BRT_STACK_CLOBBER };
int brt_stack_range_init(struct brt_env *env, int regno, int off, int size, int raw);
/* bytes [lo, hi) below frame f's top are read: recorded for stack liveness */
void brt_stack_mark_read(struct brt_env *env, const struct brt_frame *f, int64_t lo, int64_t hi);
/* the current insn writes frame's slots in mask whole (bit i: fp-8(i+1)); the marks of one
 * insn are gathered between start and commit (commit: unless the insn failed) */
void brt_stack_mark_write(struct brt_env *env, int frame, uint64_t mask);
void brt_stack_writes_start(struct brt_env *env);
void brt_stack_writes_commit(struct brt_env *env);

/* ---- dynptr.c: struct bpf_dynptr on the stack ------------------------------------------- */
const char *brt_dynptr_type_str(uint32_t type);
/* the stack slot of a dynptr's first half reg points at, or -errno (-ERANGE silently:
 * the stack does not reach there yet) */
int brt_dynptr_get_spi(struct brt_env *env, const struct brt_reg *reg);
/* a write into slot spi of f: destroys the dynptr there (-EINVAL for a referenced one) */
int brt_dynptr_destroy_slot(struct brt_env *env, struct brt_frame *f, int spi);
/* a helper's raw write of stack bytes [lo, hi) (offsets from the frame's top) */
int brt_dynptr_raw_overlap(struct brt_env *env, const struct brt_frame *f, int64_t lo, int64_t hi);
/* process_dynptr_func(): BRT_DYNPTR_ARG_UNINIT makes a dynptr of type (clone_ref: the
 * reference a clone shares), else an initialised one of type (BRT_DYNPTR_INVALID: any)
 * is needed, BRT_DYNPTR_ARG_RDONLY when the function does not change it */
#define BRT_DYNPTR_ARG_UNINIT 1u
#define BRT_DYNPTR_ARG_RDONLY 2u
int brt_process_dynptr(struct brt_env *env, int regno, int insn_idx, unsigned flags, uint32_t type,
		       uint32_t clone_ref);
/* an initialised dynptr's type, id and reference (BRT_DYNPTR_INVALID and zeroes when reg
 * points at none) */
uint32_t brt_dynptr_info(struct brt_env *env, const struct brt_reg *reg, uint32_t *id,
			 uint32_t *ref_obj_id);
/* unmark_stack_slots_dynptr(): the dynptr reg points at is released */
int brt_dynptr_release(struct brt_env *env, const struct brt_reg *reg);

/* process_spin_lock() (helper_args.c): argument regno points at the lock of a map value
 * and the lock is taken or released (messages and rules: the function) */
#define BRT_SPIN_TAKE 1u /* bpf_spin_lock, bpf_res_spin_lock[_irqsave]; else an unlock */
#define BRT_SPIN_RES 2u  /* a struct bpf_res_spin_lock (kfuncs), else a bpf_spin_lock */
#define BRT_SPIN_IRQ 4u  /* bpf_res_spin_lock_irqsave, bpf_res_spin_unlock_irqrestore */
int brt_process_spin_lock(struct brt_env *env, int regno, unsigned flags);

/* ---- irq.c: irq flags in a stack slot (bpf_local_irq_save, the resilient lock's) ------- */
/* who saved a flag (the kernel's IRQ_NATIVE_KFUNC, IRQ_LOCK_KFUNC): only they restore it */
#define BRT_IRQ_NATIVE 0
#define BRT_IRQ_LOCK 1
/* process_irq_flag(): argument regno points at a flag saved (save) or restored */
int brt_process_irq_flag(struct brt_env *env, int regno, int save, int kfunc_class);

/* stack_slot_obj_get_spi() (iter.c): the lowest slot of an object of nr_slots slots that
 * reg points at, or -errno with the kernel's messages naming kind; -ERANGE (no message)
 * when the stack does not reach it yet */
int brt_stack_obj_spi(struct brt_env *env, const struct brt_reg *reg, const char *kind,
		      int nr_slots);

/* ---- iter.c: open-coded iterators (struct bpf_iter_<type> on the stack) ---------------- */
/* where the iterator a kfunc was handed lies (the kernel's meta->iter) and its reference */
struct brt_iter_meta {
	int spi;
	int frameno;
	uint32_t ref_obj_id;
};
const char *brt_iter_state_str(uint32_t state);
const char *brt_iter_type_str(const struct brt_btf *btf, uint32_t btf_id);
/* process_iter_arg(): argument regno of a kfunc (kflags: its BRT_KF_*, fname its name,
 * proto its prototype in btf) is an iterator it makes, uses or destroys */
int brt_process_iter_arg(struct brt_env *env, int regno, int insn_idx,
			 const struct brt_btf *btf, const struct btf_type *proto, uint32_t kflags,
			 const char *fname, struct brt_iter_meta *im);
/* the flag of a kernel object _next() returns: MEM_RCU or PTR_TRUSTED */
uint32_t brt_iter_next_obj_flag(struct brt_env *env, const struct brt_iter_meta *im);
/* process_iter_next_call(): after _next()'s r0 is set */
int brt_process_iter_next(struct brt_env *env, int insn_idx, const struct brt_iter_meta *im);
/* iter_active_depths_differ() */
int brt_iter_depths_differ(const struct brt_vstate *old, const struct brt_vstate *cur);
/* the iterator st's R1 points at is ACTIVE (at an iter_next call) */
int brt_iter_r1_active(const struct brt_vstate *st);
/* kfunc.c: a call of an iterator's _next() the program may make */
int brt_kfunc_is_iter_next(struct brt_env *env, const struct bpf_insn *insn);
/* is_sync_callback_calling_kfunc(): bpf_rbtree_add_impl, whose less() the walk returns
 * from to the call */
int brt_kfunc_calls_callback(struct brt_env *env, const struct bpf_insn *insn);
/* Does the kfunc call push an async callback (a task work's: walked on its own later)? */
int brt_kfunc_calls_async(struct brt_env *env, const struct bpf_insn *insn);

/* ---- calls.c: helper calls ----------------------------------------------------------- */
int brt_check_helper_call(struct brt_env *env, const struct bpf_insn *insn, int insn_idx);
/* What a helper call's arguments tell about it, for the checks after them (the kernel's
 * struct bpf_call_arg_meta) */
struct brt_call_meta {
	const struct brt_map_info *map;
	int map_idx;
	int subprogno;      /* ARG_PTR_TO_FUNC: the callback */
	int64_t const_key;
	uint32_t mem_size;
	int release_regno;
	uint32_t ref_obj_id;
	int raw_regno;
	uint64_t msize_max; /* a size argument's largest value (do_refine_retval_range) */
	int dynptr_regno;   /* the dynptr argument, 0 none */
	uint32_t dynptr_id; /* bpf_dynptr_data: its dynptr's id and reference */
	uint32_t dynptr_ref;
	int dynptr_pkt_write; /* bpf_dynptr_write to an skb dynptr: the packet changes */
	int has_kptr;         /* bpf_kptr_xchg: its destination's kptr field */
	struct brt_gfield kptr;
	uint32_t ret_btf_id;  /* bpf_this_cpu_ptr / bpf_per_cpu_ptr: the percpu object's */
	uint16_t ret_home;    /* struct, in the BTF map_idx names (0: the program's) */
};

/* ---- helper_set.c: which helpers exist, which programs may call them ------------------ */
/* registers a helper reads (liveness) */
uint16_t brt_helper_arg_regs(struct brt_env *env, int32_t id);
/* The prototype of helper id as this program sees it, if it may call it: 0 and *fn, or
 * -EINVAL and the kernel's message (unknown, not for this type, GPL-only, sleeping) */
int brt_helper_resolve(struct brt_env *env, int32_t id, const struct brt_helper_proto **fn);
/* check_get_func_ip(): bpf_get_func_ip needs a function address (kprobes, trampolines) */
int brt_check_get_func_ip(struct brt_env *env, int32_t id);
/* the kernel's .might_sleep helper prototypes this program gets (sleepable programs only) */
int brt_helper_might_sleep(const struct brt_env *env, int32_t id);

/* ---- helper_args.c: a helper call's arguments ------------------------------------------ */
/* argument i (r1 + i) of a call of fn, what it tells recorded in meta */
int brt_helper_check_arg(struct brt_env *env, int i, const struct brt_helper_proto *fn,
			 struct brt_call_meta *meta);
/* check_bpf_snprintf_call(): bpf_snprintf's constant format against its data */
int brt_check_snprintf_call(struct brt_env *env);
/* check_map_field_pointer(): regno points into a map value at its special field (field:
 * "bpf_spin_lock", "bpf_timer"; off1 its offset + 1 in the value, 0 none), at a constant
 * offset, in a map with BTF; 0 or -EINVAL and the kernel's message */
int brt_map_field_arg(struct brt_env *env, int regno, const char *field, uint32_t off1);

/* ---- helper_dynptr.c: dynptr arguments and results of helpers ---------------------------- */
/* a BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE argument holds a reference to release */
int brt_dynptr_release_arg(struct brt_env *env, int regno);
/* process_dynptr_func() for a helper's dynptr argument of kind arg */
int brt_dynptr_helper_arg(struct brt_env *env, int regno, int arg, struct brt_call_meta *meta);
/* after the arguments: the dynptr rules of the call itself (meta: the packet write, the
 * slice's dynptr) */
int brt_dynptr_helper_call(struct brt_env *env, int32_t id, const struct brt_helper_proto *fn,
			   struct brt_call_meta *meta);

/* ---- helper_timer.c: bpf_timer ----------------------------------------------------------- */
/* the struct bpf_timer argument in regno: its map becomes meta's */
int brt_timer_arg(struct brt_env *env, int regno, struct brt_call_meta *meta);
/* bpf_timer_set_callback(): the callback's own walk goes on the stack of pending paths */
int brt_push_timer_callback(struct brt_env *env, int insn_idx, const struct brt_call_meta *meta);
/* the kernel's in_sleepable(): the program is sleepable or the walk is a sleepable
 * callback's */
static inline int brt_in_sleepable(const struct brt_env *env)
{
	return (env->opts->prog_flags & BPF_F_SLEEPABLE) || env->cur->in_sleepable;
}

/* ---- kfunc_task_work.c: the bpf_task_work kfuncs ------------------------------------- */
/* is_task_work_add_kfunc(): kfuncs.def's row is a task work's schedule kfunc */
int brt_kfunc_is_task_work(int row);
/* a __map argument in regno: a map, the same as the call's struct bpf_task_work's when
 * it has one; *map1 (0 none yet, else 1 + its index in env->maps) becomes it */
int brt_kfunc_map_arg(struct brt_env *env, const struct brt_reg *reg, int regno, int *map1);
/* a struct bpf_task_work argument (argument argno, in regno) in a map value; *map1 as
 * above */
int brt_task_work_arg(struct brt_env *env, const struct brt_reg *reg, int regno, int argno,
		      int *map1);
/* push_async_cb() with set_task_work_schedule_callback_state(): the task work's callback
 * (subprogram subprogno) walked on its own, sleepable, with r1 the map the call's r3
 * names, r2 its key and r3 its value, returning any 32-bit value */
int brt_push_task_work_callback(struct brt_env *env, int insn_idx, int subprogno);

/* ---- helper_maps.c: map types and helpers ------------------------------------------------ */
int brt_helper_map_compat(struct brt_env *env, const struct brt_call_meta *meta, int32_t id);
int brt_helper_record_map(struct brt_env *env, const struct brt_call_meta *meta, int32_t id);

/* ---- helper_ret.c: r0 after a helper call ------------------------------------------------ */
int brt_helper_set_return(struct brt_env *env, const struct brt_helper_proto *fn,
			  const struct brt_call_meta *meta, int32_t id, int insn_idx);

/* ---- callbacks.c: helpers that call back into the program ------------------------------- */
int brt_is_callback_helper(int32_t id);
int brt_push_callback(struct brt_env *env, int insn_idx, int32_t id,
		      const struct brt_call_meta *meta);
/* a callback's r2 and r3: a key and the value of map map_idx (bpf_for_each_map_elem's
 * callbacks, timer callbacks) */
void brt_callback_elem_args(struct brt_reg *regs, int map_idx);
/* bpf_loop: the values the kernel relies on (count, inlining flags) kept precise */
int brt_check_loop_call(struct brt_env *env, const struct brt_call_meta *meta);

/* ---- refs.c: references, and pointers that stop being valid ------------------------------ */
/* The kernel's check_resource_leak() where a path leaves the program (exit of the main
 * program, bpf_throw, tail calls, LD_ABS/IND): a lock held (when check_lock), a pointer
 * reference not released (every frame's for an exception exit, else only in the main
 * program's frame), an irq flag, an RCU or non-preemptible section open (check_lock);
 * messages start with prefix.  0 or -EINVAL. */
int brt_check_resource_leak(struct brt_env *env, int exception_exit, int check_lock,
			    const char *prefix);
/* drop pointer reference id from the state, the others keeping their order (the kernel's
 * release_reference_nomark()); -EINVAL when the state holds no such reference */
int brt_release_ref_state(struct brt_vstate *st, uint32_t id);
/* locks as references (the kernel's acquire_lock_state(), release_lock_state() and
 * find_lock_state()): a lock of one of types taken through pointer id of ptr
 * (BRT_LOCK_PTR_ALLOC or 1 + map index; two map entries of one map are one owner) */
int brt_acquire_lock_state(struct brt_env *env, int insn_idx, uint16_t type, uint32_t id,
			   uint16_t ptr);
int brt_release_lock_state(struct brt_env *env, uint16_t type, uint32_t id, uint16_t ptr);
const struct brt_ref *brt_find_lock_state(const struct brt_env *env, uint16_t types,
					  uint32_t id, uint16_t ptr);
/* two lock owners (brt_ref.ptr) are the same map or the same kind of object */
int brt_lock_ptr_eq(const struct brt_env *env, uint16_t a, uint16_t b);
/* irq flags as references (acquire_irq_state(): its id; release_irq_state(): -EACCES
 * when id is not the last one saved, -EINVAL when not held) */
int brt_acquire_irq_state(struct brt_env *env, int insn_idx);
int brt_release_irq_state(struct brt_vstate *st, uint32_t id);
/* acquire_reference() (a new reference of this insn: its id, or -ENOMEM) and
 * release_reference() (-EINVAL when id is not held) */
void brt_mark_reg_invalid(struct brt_env *env, struct brt_reg *reg);
int brt_acquire_ref(struct brt_env *env, int insn_idx);
int brt_release_ref(struct brt_env *env, uint32_t id);
/* the kernel's bpf_helper_changes_pkt_data() and clear_all_pkt_pointers() */
int brt_helper_changes_pkt_data(int32_t id);
void brt_clear_all_pkt_pointers(struct brt_env *env);

/* ---- exception.c: bpf_throw ------------------------------------------------------------- */
/* a call of the kernel's bpf_throw */
int brt_is_throw_call(const struct bpf_insn *insn);
/* after a verified bpf_throw call: the path ends as an exceptional exit; 1, or -errno */
int brt_throw_exit(struct brt_env *env);
/* the stack walk found bpf_throw at insn_idx in (or below) a callback, subprog: -EINVAL */
int brt_throw_in_callback(struct brt_env *env, int insn_idx, int subprog);
/* a bpf_throw call's checks before the kfunc call clobbers r1-r5: the cookie is the
 * program's return value when no exception callback is named; 0 or -errno */
int brt_throw_cookie_check(struct brt_env *env);
/* the exception callback's subprogram sub starts its own walk in frame f: its one scalar
 * argument (the kernel's message otherwise); 0 or -errno */
int brt_exc_cb_entry(struct brt_env *env, int sub, struct brt_frame *f);

/* ---- kfunc.c: kernel function calls ------------------------------------------------------ */
/* the kernel's is_trusted_reg(): referenced, or flagged trusted with no unsafe flag */
int brt_reg_is_trusted(const struct brt_reg *reg);
int brt_check_kfunc_call(struct brt_env *env, const struct bpf_insn *insn, int insn_idx);
/* How many arguments the kfunc a call names takes, -1 when the program may not call it
 * (the kernel's fetch_kfunc_meta() fails). */
int brt_kfunc_nargs(struct brt_env *env, const struct bpf_insn *insn);
/* a kfunc call the program may make, of a KF_SLEEPABLE kfunc */
int brt_kfunc_might_sleep(struct brt_env *env, const struct bpf_insn *insn);
/* a call of a kfunc the kernel lets a program call while it holds a lock
 * (kfunc_spin_allowed(): the graph API, the number iterator, the resilient lock) */
int brt_kfunc_spin_allowed(const struct bpf_insn *insn);
/* kallsyms_lookup_name(): 1 found (address in *addr, 0 when hidden), 0 not a kernel
 * symbol, -1 no /proc/kallsyms. */
int brt_kallsyms_lookup(const char *name, uint64_t *addr);

/* ---- d_path.c: bpf_d_path's attach points and argument ------------------------------- */
/* bpf_d_path_allowed(): the program may call bpf_d_path */
int brt_d_path_allowed(const struct brt_env *env);
/* its struct path argument in regno (the register type already checked) */
int brt_d_path_arg(struct brt_env *env, int regno, const struct brt_reg *reg);

/* ---- global.c: global functions verified on their own from their BTF ---------------- */
/* 1 when subprogram i has BTF_FUNC_GLOBAL linkage and the load gave its BTF */
int brt_subprog_is_global(const struct brt_env *env, int i);
const char *brt_subprog_name(const struct brt_env *env, int i);
/* A call of subprogram sub from the current state: the kernel's btf_check_subprog_call()
 * and, for a global function, the call itself (arguments checked against the prototype,
 * r0 an unknown scalar, nothing descended).  1 when handled (global), 0 to descend
 * (static), or -errno. */
int brt_global_call(struct brt_env *env, int sub);
/* The main program's "exception_callback:" tag (bpf_find_exception_callback_insn_off()):
 * the callback's first insn (> 0), 0 when there is none, or -errno with the message */
int brt_check_exception_cb(struct brt_env *env);
/* The main program's prototype read as the kernel does before the walk (its messages) */
void brt_global_main_args(struct brt_env *env);
/* Set frame f's registers for a walk of global function sub on its own: 0 or -errno
 * (the prototype's message) */
int brt_global_entry(struct brt_env *env, int sub, struct brt_frame *f);

/* ---- func_calls.c: bpf-to-bpf calls and program exit --------------------------------- */
int brt_check_func_call(struct brt_env *env, const struct bpf_insn *insn, int *insn_idx);
int brt_prepare_func_exit(struct brt_env *env, int *insn_idx);
/* the kernel's check_return_code() on register regno (R0 at an exit, R1 for bpf_throw's
 * cookie), named name */
int brt_check_return_code(struct brt_env *env, int regno, const char *name);
/* The range r0 must be in at the main program's exit: 1 with [*lo, *hi], or 0 when the
 * program type does not check it (prog_types.def's ret column, narrowed by attach type). */
int brt_ret_range(const struct brt_env *env, int64_t *lo, int64_t *hi);
int brt_check_max_stack_depth(struct brt_env *env);

/* ---- precision.c: precision backtracking (the kernel's mark_chain_precision) --------- */
/* the current insn's history entry (created when the path did not come from idx - 1) */
int brt_hist_note(struct brt_env *env, int prev_idx);
void brt_hist_stack(struct brt_env *env, int frameno, int spi);
/* registers live in frame fr of st: before the current insn in the top frame, before the
 * call in a caller (the kernel's live_regs_before at frame_insn_idx()) */
/* a scalar id's flags: this register holds the linked value plus its off (the kernel's
 * BPF_ADD_CONST64, after r1 = r2; r1 += K or r1 -= K), or the low 32 bits of that sum
 * zero-extended (BPF_ADD_CONST32, after w1 += K on a value that fitted in 32 bits) */
#define BRT_ADD_CONST64 (1u << 31)
#define BRT_ADD_CONST32 (1u << 30)
#define BRT_ADD_CONST (BRT_ADD_CONST64 | BRT_ADD_CONST32)
/* before a scalar is copied (mov, spill): give it an id so the copies are linked, first
 * dropping a constant-offset link (the kernel's assign_scalar_id_before_mov) */
void brt_assign_scalar_id(struct brt_env *env, struct brt_reg *reg);
/* reg += delta on a scalar's bounds and bits (64-bit, then zero-extended from the low 32
 * bits when zext), its id and off kept */
void brt_scalar_add_const(struct brt_reg *reg, int64_t delta, int zext);
uint16_t brt_frame_live_regs(const struct brt_env *env, const struct brt_vstate *st, int fr);
void brt_hist_linked(struct brt_env *env, const struct brt_reg *known);
int brt_hist_linked_count(const struct brt_env *env, const struct brt_reg *known);
/* a scalar in regno of the current frame decided something: every stored state on the
 * path must keep what it was derived from precise */
int brt_mark_precise(struct brt_env *env, int regno);
/* the same for the registers and slots already set in env->bt_regs / bt_stack (a pruned
 * path needs what the state that matched it needed) */
int brt_mark_precise_batch(struct brt_env *env);
/* the same from a copy of a state pruned at insn last (a backedge), not the current one */
int brt_mark_precise_from(struct brt_env *env, struct brt_vstate *st, int last);
/* every scalar of st's stored ancestors precise (the walk's fallback) */
void brt_mark_all_precise(struct brt_env *env, struct brt_vstate *st);
void brt_mark_all_imprecise(struct brt_vstate *st);
void brt_hist_reset(struct brt_vstate *st);

/* ---- check.c ------------------------------------------------------------------------- */
struct brt_frame *brt_cur_frame(struct brt_env *env);
struct brt_reg *brt_cur_regs(struct brt_env *env);
/* kernel check_reg_arg(): SRC_OP reads (must be initialised), DST_OP writes (marks unknown),
 * DST_OP_NO_MARK writes without changing the register */
enum brt_reg_arg { SRC_OP, DST_OP, DST_OP_NO_MARK };
int brt_check_reg_arg(struct brt_env *env, int regno, enum brt_reg_arg t);
int brt_is_pointer_value(struct brt_env *env, int regno);
/* Speculative paths (ptr_alu.c): push a state only speculative execution reaches, at
 * insn_idx; insn non-NULL: a decided branch, whose compared registers become unknown
 * there.  0 or -errno. */
int brt_push_speculative(struct brt_env *env, const struct bpf_insn *insn, int insn_idx,
			 int prev_insn_idx);
/* err from a speculative path's insn that the kernel recovers from with a barrier */
int brt_spec_recoverable(const struct brt_env *env, int err);
int brt_push_stack(struct brt_env *env, int insn_idx, int prev_insn_idx,
		   struct brt_vstate **out);
/* an async callback's path: an empty state (no frame, parent or history) */
int brt_push_async(struct brt_env *env, int insn_idx, int prev_insn_idx,
		   struct brt_vstate **out);
/* BPF_JMP | BPF_JCOND (may_goto; branch.c) */
int brt_is_may_goto(const struct bpf_insn *insn);
int brt_check_may_goto(struct brt_env *env, const struct bpf_insn *insn, int *insn_idx);

#endif
