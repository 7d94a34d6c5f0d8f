/* jit.h - the jit/ folder's interface: compile an eBPF program to native x86-64 code, run
 * it, free it, and look at the generated code.  The design (register map, frames, passes)
 * is described at the top of src/jit/x86_64/jit.c.
 */
#ifndef BPFRT_SRC_JIT_JIT_H
#define BPFRT_SRC_JIT_JIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/bpf.h>

/* The helper ABI is the public one (bpfrt_helper_fn, the same type as the vm's
 * brt_helper_fn): the JIT depends on isa/ and the public headers, never on vm/, which
 * uses it as an engine. */
#include "bpfrt.h"

/* Offsets inside struct bpfrt_run_ctx the generated code relies on (the vm owns the
 * struct and asserts these). */
#define BRT_JIT_CTX_STOPPED_OFF 0 /* uint64_t: non-zero once a helper stopped the run */
#define BRT_JIT_CTX_STOP_R0_OFF 8 /* uint64_t: r0 to return when stopped */
/* `stopped` after bpf_tail_call: the target ran nested and its r0 (stop_r0) is the return
 * value of the calling function only, as in the kernel where the target replaces the
 * caller's frame; other non-zero values end the whole run. */
#define BRT_JIT_STOP_TAIL 2
/* After bpf_tail_call (helper BPF_FUNC_tail_call): a non-NULL code address at
 * TAIL_ENTRY_OFF replaces the running program, entered like brt_jit_call() with r1 from
 * TAIL_R1_OFF, r2 = 0 and the same ctx, after the caller's frames are gone. */
#define BRT_JIT_CTX_TAIL_ENTRY_OFF 16
#define BRT_JIT_CTX_TAIL_R1_OFF 24
/* int: non-zero while the code running may be replaced in place (TAIL_ENTRY); JIT code
 * clears it around a tail call made from a bpf-to-bpf function, whose target must return
 * to that function's caller. */
#define BRT_JIT_CTX_TAIL_JUMP_OFF 36
/* uint64_t: the run budget's counter.  Code compiled with BRT_JIT_BUDGET subtracts from
 * it before every backward jump (the jump's distance back, in instructions) and, when it
 * wraps, calls env->budget_slow(ctx): non-zero stops the run (stopped, stop_r0 set). */
#define BRT_JIT_CTX_BUDGET_OFF 40

/* The optimisation passes (src/jit/x86_64/passes.def), as bits of a mask.  All are on
 * unless brt_jit_env.passes_off or the environment variable BPFRT_JIT_PASSES turns them
 * off: "-rotate,-zext" drops those, "rotate" keeps only those listed, "none" drops all
 * (the ablation bench/sections/45-jit-passes.sh measures). */
enum brt_jit_pass_id {
#define PASS(id, desc) BRT_JIT_PASS_ID_##id,
#include "jit/x86_64/passes.def"
#undef PASS
	BRT_JIT_PASS_COUNT
};
#define BRT_JIT_PASS(id) (1u << BRT_JIT_PASS_ID_##id)
#define BRT_JIT_PASSES_ALL ((1u << BRT_JIT_PASS_COUNT) - 1)
/* The mask a BPFRT_JIT_PASSES value selects (NULL or empty: all); names it does not know
 * are ignored. */
uint32_t brt_jit_passes_parse(const char *spec);
/* Name and description of pass i < BRT_JIT_PASS_COUNT. */
const char *brt_jit_pass_name(unsigned i);
const char *brt_jit_pass_desc(unsigned i);

enum brt_jit_flags {
	BRT_JIT_BLIND = 1 << 0, /* constant blinding: no program immediate appears verbatim */
	BRT_JIT_NO_BMI2 = 1 << 1, /* do not use BMI2 even where the CPU has it (tests) */
	BRT_JIT_BUDGET = 1 << 2,  /* count the run budget at back-edges (BRT_JIT_CTX_BUDGET_OFF) */
	/* only see whether it would compile (the same refusals, *out NULL): the structural
	 * checks, and the whole compile, unmapped, only for programs large enough to meet
	 * the code size cap */
	BRT_JIT_CHECK = 1 << 3,
};

/* A bpf_map_lookup_elem call bound at load to the one map the verifier saw there on every
 * path (the kernel's map_ptr_state), so the JIT does the lookup itself instead of calling
 * the generic helper: the kernel's map_gen_lookup for arrays, a direct call of the map
 * type's lookup for the others.  Applies only while the call resolves to `helper`. */
enum brt_jit_lookup_kind {
	BRT_JIT_LOOKUP_ARRAY = 1, /* inline: u32 index at [r2], r0 = base + index * stride,
				   * or NULL from max_entries on */
	BRT_JIT_LOOKUP_OP,        /* r0 = op(r1, r2): the map type's lookup (r1 is the map) */
	BRT_JIT_LOOKUP_HASH,      /* a hash or LRU hash map: key hashed, the bucket's chain
				   * probed inline, else (and when the pass `hashprobe` is off
				   * or constants are blinded) op as for LOOKUP_OP */
	BRT_JIT_LOOKUP_PERCPU_ARRAY, /* a per-CPU array: index and this CPU's slot inline
				   * (brt_cpu_now(): the record's CPU a trace run is for, else
				   * glibc's rseq area), op past ncpus or when
				   * the pass `percpu` is off */
};

/* LOOKUP_HASH: the map's layout as maps/hash.c describes it (struct brt_hash_probe in
 * maps/maps.h, where the rules of the probe are). */
struct brt_jit_hash_layout {
	uint64_t buckets, elems, lru_clock;
	uint64_t n_elems_live; /* address of a u32 bounding the indexes followed, or 0 */
	uint32_t n_buckets, n_elems, elem_size, key_size, value_off, seed;
	uint8_t bucket_size, head_off, next_off, hash_off, seq_off, key_off, stamp_off;
};

struct brt_jit_lookup {
	uint32_t insn;          /* the call instruction */
	uint32_t kind;          /* enum brt_jit_lookup_kind */
	bpfrt_helper_fn helper;   /* the generic helper this stands in for */
	uint64_t base;          /* ARRAY: address of element 0's value */
	uint32_t max_entries;   /* ARRAY */
	uint32_t stride;        /* ARRAY, PERCPU_ARRAY: bytes between values */
	uint32_t ncpus;         /* PERCPU_ARRAY: values per index (CPUs below it inline) */
	const void *op;         /* OP, HASH: void *op(map, const void *key), System V */
	struct brt_jit_hash_layout hash; /* HASH */
};

/* Memory whose bytes never change while the program exists: the value of a single-element
 * array map programs may only read (BPF_F_RDONLY_PROG) that was frozen (BPF_MAP_FREEZE)
 * before the program loaded, as libbpf makes .rodata and .kconfig.  The program holds a
 * reference on the map, so the bytes outlive the code.  The pass `rodata` reads loads from
 * it at compile time, as the verifier does (verifier/memory.c, rodata_read). */
struct brt_jit_rodata {
	uint64_t addr; /* first byte, in this process */
	uint64_t size; /* bytes */
};

/* What the compiler needs to know about the world the program runs in. */
struct brt_jit_env {
	/* Resolves a helper id to its function, NULL when unknown.  Called at compile time
	 * for `call` and at run time for `callx`, so `helper_arg` must outlive a program
	 * that uses callx. */
	bpfrt_helper_fn (*helper)(void *arg, uint32_t id);
	void *helper_arg;
	/* LD_ABS/LD_IND packet: offsets inside struct bpfrt_run_ctx of the packet's start
	 * pointer and of its uint64_t length (below 248); negative when the run has no
	 * packet (such programs are refused). */
	int32_t pkt_data_off;
	int32_t pkt_len_off;
	uint32_t flags; /* enum brt_jit_flags */
	const struct brt_jit_lookup *lookups; /* sorted by insn, or NULL */
	size_t nlookups;
	/* The program as brt_isa_decode_prog() decoded it (n rows), or NULL: the JIT decodes
	 * it itself.  Must outlive the compile (and a cache, for its later versions). */
	const uint16_t *ops;
	/* BRT_JIT_BUDGET: called when the budget counter wraps; non-zero stops the run */
	int (*budget_slow)(struct bpfrt_run_ctx *ctx);
	/* optimisation passes not to run (BRT_JIT_PASS() bits), beyond those the environment
	 * variable BPFRT_JIT_PASSES turns off: 0 runs every pass */
	uint32_t passes_off;
	/* LD_ABS/LD_IND at a negative offset (SKF_NET_OFF / SKF_LL_OFF relative): the value
	 * in host order or UINT64_MAX (the load fails); the run's packet knows where its
	 * network and link-layer headers are.  NULL: both count from the packet's start. */
	uint64_t (*ld_neg)(struct bpfrt_run_ctx *ctx, int64_t off, uint64_t size);
	/* frozen read-only map values the program may load from (pass rodata), or NULL */
	const struct brt_jit_rodata *rodata;
	size_t nrodata;
};

/* Helpers that never read their run ctx argument (and so never stop the run): with the
 * pass `leafcall` the JIT calls them without loading the ctx or checking `stopped`
 * afterwards.  Handed down by vm/ when the library is loaded (a constructor); fns[0..n)
 * must stay valid for good. */
void brt_jit_set_leaf_helpers(const bpfrt_helper_fn *fns, size_t n);
/* bpf_get_prandom_u32's built-in helper fn, the function that seeds the calling thread's
 * state when it is 0 (as fn's first call would, without drawing), and that xorshift64*
 * state as an offset from the thread pointer, the same in every thread (vm/helpers.c):
 * with the pass `inlinehelper` a call that resolves to fn is emitted inline.  Handed down
 * as above. */
void brt_jit_set_prandom(bpfrt_helper_fn fn, void (*seed)(void), int64_t tls_off);

struct brt_jit_prog;

/* Compile insns[0..n) (already structurally checked by brt_isa_check_prog(); lddw map
 * forms already rewritten to plain 64-bit constants) into executable memory.  The code
 * has no run-time checks beyond those the semantics require (div/mod by zero, LD_ABS
 * bounds): memory safety and termination are the verifier's job.  Returns 0 and *out,
 * or -EINVAL (a construct the JIT refuses: unknown helper, recursion, call depth over 8,
 * jump between functions; message "insn N: ..."), -E2BIG (code too large) or -ENOMEM. */
int brt_jit_compile(const struct bpf_insn *insns, size_t n, const struct brt_jit_env *env,
		    struct brt_jit_prog **out, char *err, size_t errlen);

/* The start of every struct brt_jit_prog, so that running one is an inline indirect call. */
struct brt_jit_prog_head {
	uint64_t (*entry)(uint64_t r1, uint64_t r2, struct bpfrt_run_ctx *ctx);
};

uint64_t brt_jit_call_without_ctx(const struct brt_jit_prog *p, uint64_t r1, uint64_t r2);

/* Run the program with r1 and r2 set (r10 = top of a fresh 512-byte stack).  ctx is passed
 * to helpers; NULL stands for a zeroed context (no packet: LD_ABS/LD_IND end with r0 = 0). */
static inline uint64_t brt_jit_call(const struct brt_jit_prog *p, uint64_t r1, uint64_t r2,
				    struct bpfrt_run_ctx *ctx)
{
	const struct brt_jit_prog_head *h = (const struct brt_jit_prog_head *)(const void *)p;

	if (!ctx)
		return brt_jit_call_without_ctx(p, r1, r2);
	return h->entry(r1, r2, ctx);
}

/* Call function `func` of p (the instruction index lddw BPF_PSEUDO_FUNC loads, a
 * callback) with r1-r5 = args and the run's ctx, from C (a helper); its r0 in *r0.  An
 * early exit inside (a helper stopped the run) returns ctx->stop_r0.  Returns 0, or
 * -EINVAL when func is not a callback of p. */
int brt_jit_call_func(const struct brt_jit_prog *p, uint64_t func, const uint64_t args[5],
		      struct bpfrt_run_ctx *ctx, uint64_t *r0);

/* 0 when the code never reads its ctx (no helper call, no packet load): it may then be
 * entered directly, as h->entry(r1, r2, NULL). */
int brt_jit_needs_ctx(const struct brt_jit_prog *p);

/* Programs that call nothing but LD_ABS/LD_IND, in one function, and never name r2-r5 (the
 * converted classic filters) keep the packet in registers and have two more entries, with
 * no run ctx.  brt_jit_pkt_entry: one run, r1 = the context, data/len = the packet LD_ABS
 * reads.  brt_jit_batch_entry: for each of pkts[0..n) in turn, the uint32_t at the start
 * of ctx is set to pkts[i].ctx_word (a socket filter's __sk_buff.len), the program runs
 * with r1 = ctx on packet (data, len) and r0s[i] = (uint32_t)r0.  Both are NULL for other
 * programs. */
typedef uint64_t brt_jit_pkt_fn(uint64_t r1, const void *data, uint64_t len);
struct brt_jit_pkt {
	const void *data;
	uint32_t len;
	uint32_t ctx_word;
};
typedef void brt_jit_batch_fn(void *ctx, const struct brt_jit_pkt *pkts, size_t n,
			      uint32_t *r0s);
brt_jit_pkt_fn *brt_jit_pkt_entry(const struct brt_jit_prog *p);
brt_jit_batch_fn *brt_jit_batch_entry(const struct brt_jit_prog *p);

void brt_jit_free(struct brt_jit_prog *p);

/* The generated code: *size bytes at the returned address; insn_off[i] (i < n) is the
 * offset of the first byte generated for instruction i (the second slot of lddw gets the
 * offset of the next instruction). */
const uint8_t *brt_jit_code(const struct brt_jit_prog *p, size_t *size,
			    const uint32_t **insn_off);

enum brt_jit_dump_flags {
	BRT_JIT_DUMP_OPCODES = 1 << 0, /* print the machine-code bytes too */
};

/* Write each eBPF instruction followed by the x86-64 code generated for it (capstone
 * disassembly; raw bytes when capstone is missing).  Returns 0 or -errno. */
int brt_jit_dump(const struct brt_jit_prog *p, const struct bpf_insn *insns, FILE *out,
		 unsigned flags);

/* Disassemble code[0..size) (at virtual address addr) into out, one instruction a line
 * prefixed by `indent`. */
void brt_jit_disasm(const uint8_t *code, size_t size, uint64_t addr, const char *indent,
		    unsigned flags, FILE *out);

/* The JIT as a vm engine (cache.c): a program's compiled versions, one per helper table.
 * brt_jit_cache_new() reports refusals at load (-EINVAL, -E2BIG, -ENOMEM; it compiles a
 * program that calls no helper, and only checks one that does (BRT_JIT_CHECK);
 * insns and ops, its decoded rows or NULL, must outlive the cache; rodata[0..nrodata) is
 * copied, the memory it describes must outlive the cache); the environment variable BPFRT_JIT_HARDEN (non-empty,
 * not "0") turns constant blinding on, like the kernel's net.core.bpf_jit_harden.  brt_jit_cache_get() returns the code for helper table
 * table[0..nr) (which may change between calls, in place or not), compiling it the first
 * time the program's calls resolve to these functions; thread-safe; returns 0, -EFAULT
 * (the program calls a helper the table lacks; message "insn N: call to unknown helper
 * ID") or -ENOMEM. */
struct brt_jit_cache;
/* sym: the name perf is given for each version's code (perf_map.c), copied; NULL names it
 * bpf_prog_<tag> with the tag taken over insns as given. */
int brt_jit_cache_new(const struct bpf_insn *insns, const uint16_t *ops, size_t n,
		      const char *sym,
		      int32_t pkt_data_off, int32_t pkt_len_off,
		      int (*budget_slow)(struct bpfrt_run_ctx *ctx),
		      uint64_t (*ld_neg)(struct bpfrt_run_ctx *ctx, int64_t off, uint64_t size),
		      const struct brt_jit_rodata *rodata, size_t nrodata,
		      struct brt_jit_cache **out,
		      char *err, size_t errlen);
/* budget non-zero: the version that counts the run budget (BRT_JIT_BUDGET), compiled at
 * its first use; runs without a budget keep code that has no counting at all. */
int brt_jit_cache_get(struct brt_jit_cache *c, const bpfrt_helper_fn *table, size_t nr,
		      int budget, const struct brt_jit_prog **out, char *err, size_t errlen);
void brt_jit_cache_free(struct brt_jit_cache *c);
/* Bind map lookups (copied; any order) into the code compiled from now on: call before the
 * first run.  Returns 0 or -ENOMEM. */
int brt_jit_cache_set_lookups(struct brt_jit_cache *c, const struct brt_jit_lookup *l,
			      size_t n);
/* The one version of a program that calls no helper (compiled at load), else NULL: such a
 * program needs no lookup per run. */
const struct brt_jit_prog *brt_jit_cache_fixed(const struct brt_jit_cache *c);

/* perf_map.c: with the environment variable BPFRT_PERF_MAP=1, code [code, code + size)
 * is named sym in /tmp/perf-<pid>.map (perf's JIT convention), one line appended per
 * call; failures are ignored.  The cache calls it for each version it compiles. */
int brt_jit_perf_map_enabled(void);
void brt_jit_perf_map_add(const void *code, size_t size, const char *sym);
/* The kernel's kallsyms name of a program's image: bpf_prog_<tag>_<name>, or
 * bpf_prog_<tag> when name is NULL or empty (a longer name is cut). */
#define BRT_JIT_PERF_SYM_LEN 64
void brt_jit_perf_sym(char sym[BRT_JIT_PERF_SYM_LEN], const unsigned char tag[8],
		      const char *name);

#endif
