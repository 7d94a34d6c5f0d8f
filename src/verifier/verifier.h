/* verifier.h - the verifier's interface: brt_verify() checks a program the way the Linux
 * kernel's verifier (6.18) does, with the same verdicts, errnos and log text.  Also the
 * known-bits domain (tnum.c), which tests and other folders may use on its own.
 * How verification works is described at the top of check.c; docs/VERIFIER.md has more.
 */
#ifndef BPFRT_SRC_VERIFIER_VERIFIER_H
#define BPFRT_SRC_VERIFIER_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "vm/helper_proto.h"

struct brt_btf;

/* ---- tnum: (value; mask), mask bits unknown, value & mask == 0 ------------------------ */
struct tnum {
	uint64_t value; /* the known bits */
	uint64_t mask;  /* set where the bit is unknown */
};

extern const struct tnum brt_tnum_unknown;
struct tnum brt_tnum_const(uint64_t value);
struct tnum brt_tnum_range(uint64_t min, uint64_t max);
struct tnum brt_tnum_lshift(struct tnum a, uint8_t shift);
struct tnum brt_tnum_rshift(struct tnum a, uint8_t shift);
struct tnum brt_tnum_arshift(struct tnum a, uint8_t min_shift, uint8_t insn_bitness);
struct tnum brt_tnum_add(struct tnum a, struct tnum b);
struct tnum brt_tnum_sub(struct tnum a, struct tnum b);
struct tnum brt_tnum_neg(struct tnum a);
struct tnum brt_tnum_bswap(struct tnum a, int bits);
struct tnum brt_tnum_and(struct tnum a, struct tnum b);
struct tnum brt_tnum_or(struct tnum a, struct tnum b);
struct tnum brt_tnum_xor(struct tnum a, struct tnum b);
struct tnum brt_tnum_mul(struct tnum a, struct tnum b);
/* every value in both a and b (a and b must overlap) */
struct tnum brt_tnum_intersect(struct tnum a, struct tnum b);
/* a tnum holding every member of a and of b */
struct tnum brt_tnum_union(struct tnum a, struct tnum b);
/* keep the low size_bytes bytes, the rest known zero */
struct tnum brt_tnum_cast(struct tnum a, uint8_t size_bytes);
int brt_tnum_is_const(struct tnum a);
int brt_tnum_equals_const(struct tnum a, uint64_t b);
int brt_tnum_is_unknown(struct tnum a);
int brt_tnum_is_aligned(struct tnum a, uint64_t size);
/* 1 when every member of b is a member of a */
int brt_tnum_in(struct tnum a, struct tnum b);
/* 1 when a and b may share a member: no bit is known in both with different values */
int brt_tnum_overlap(struct tnum a, struct tnum b);
/* 1 when x is a member of a */
int brt_tnum_contains(struct tnum a, uint64_t x);
struct tnum brt_tnum_subreg(struct tnum a);
struct tnum brt_tnum_clear_subreg(struct tnum a);
struct tnum brt_tnum_with_subreg(struct tnum reg, struct tnum subreg);
struct tnum brt_tnum_const_subreg(struct tnum a, uint32_t value);
int brt_tnum_subreg_is_const(struct tnum a);
/* "(0x..; 0x..)" as the kernel prints it; returns snprintf's count */
int brt_tnum_strn(char *str, size_t size, struct tnum a);

/* ---- brt_verify ------------------------------------------------------------------------ */

/* Who loads the program: decides pointer leaks, uninitialised stack reads, back-edges,
 * Spectre rules and some helpers, as the kernel's capability checks do. */
enum brt_priv {
	BRT_PRIV_ROOT,        /* CAP_SYS_ADMIN/CAP_PERFMON + CAP_BPF: everything allowed */
	BRT_PRIV_BPF_CAPABLE, /* CAP_BPF without CAP_PERFMON: no leaks, no uninit stack */
	BRT_PRIV_UNPRIV,      /* no capability: also no loops, 4096 insns, socket filters only */
};

/* What the verifier needs to know about a map an lddw refers to. */
struct brt_map_info {
	uint32_t type;        /* BPF_MAP_TYPE_* */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t map_flags;   /* BPF_F_RDONLY_PROG etc. */
	void *ptr;            /* the runtime's map object (opaque here) */
	/* read-only for programs and frozen (BPF_F_RDONLY_PROG + BPF_MAP_FREEZE): loads from
	 * an array's value at a constant offset read the bytes as constants, as the kernel's
	 * bpf_map_direct_read() does (.rodata); rodata = element 0 (value_size bytes) */
	int frozen_rdonly;
	const void *rodata;
	/* maps of maps: the inner map template a lookup returns (inner_type 0 otherwise) */
	uint32_t inner_type, inner_key_size, inner_value_size, inner_max_entries, inner_flags;
	/* ... and the fields the kernel's inner_map_meta keeps of the inner map: its
	 * btf_record's locks and timer (as spin_lock_off1 and the others below) and its BTF */
	uint32_t inner_spin_lock_off1, inner_res_spin_lock_off1, inner_timer_off1;
	int inner_has_btf;
	/* 1 + offset of the value's struct bpf_spin_lock (map BTF), 0: none; programs may
	 * not load or store it */
	uint32_t spin_lock_off1;
	int has_btf;          /* created with BTF (bpf_spin_lock needs it) */
	/* 1 + offset of the value's struct bpf_timer (map BTF), 0: none */
	uint32_t timer_off1;
	/* 1 + offset of the value's struct bpf_task_work (map BTF), 0: none */
	uint32_t task_work_off1;
	/* 1 + offset of the value's struct bpf_res_spin_lock (map BTF), 0: none; never with
	 * spin_lock_off1 */
	uint32_t res_spin_lock_off1;
	/* the map's BTF (raw, as BTF_LOAD took it) and its value type, or NULL: where
	 * verifier/graph.c finds a value's graph roots when a kfunc needs them */
	const void *btf_blob;
	uint32_t btf_size;
	/* that BTF parsed, when the caller keeps it for the map (api/check.c: once for every
	 * map sharing the blob), or NULL: verifier/graph.c parses btf_blob itself */
	const struct brt_btf *btf;
	uint32_t btf_value_type_id;
	char map_name[16];    /* BPF_OBJ_NAME_LEN: the map's name for messages, and map=NAME
			       * in the log's registers ("" prints none) */
};

/* A source line for the log: BPF_PROG_LOAD's line_info resolved against its BTF. */
struct brt_vline {
	uint32_t insn_off; /* first instruction of the line */
	const char *src;   /* text of the line */
	const char *file;  /* file name as compiled */
	uint32_t line, col;
};

/* Resolve a map file descriptor; returns 0, -EBADF when fd is not open, -EINVAL when it
 * is not a map (brt_verify() returns that errno, as the kernel does). */
typedef int (*brt_map_info_fn)(void *arg, int fd, struct brt_map_info *out);

#define BRT_LOG_LEVEL1 1u
#define BRT_LOG_LEVEL2 2u
#define BRT_LOG_STATS 4u
#define BRT_LOG_FIXED 8u
#define BRT_LOG_MASK 15u

/* A log buffer the verifier grows (realloc) as the log does, up to the log's size: a
 * caller of a large log_size (the kernel takes up to 1 GiB, writing into the caller's
 * memory as it goes) pays for what is written only.  buf holds alloc bytes (at least 1
 * when a log is asked for); the verifier leaves the grown buffer here. */
struct brt_log_buf {
	char *buf;
	uint32_t alloc;
};

struct brt_verify_opts {
	uint32_t prog_type;            /* BPF_PROG_TYPE_* */
	uint32_t expected_attach_type; /* BPF_CGROUP_INET_INGRESS etc. */
	uint32_t priv;                 /* enum brt_priv */
	uint32_t prog_flags;           /* BPF_F_STRICT_ALIGNMENT, BPF_F_ANY_ALIGNMENT, ... */
	int gpl;                       /* licence is GPL-compatible */
	uint32_t log_level;            /* BRT_LOG_* bits, as attr.log_level */
	char *log_buf;                 /* attr.log_buf; NULL with log_size 0 for none */
	uint32_t log_size;             /* attr.log_size */
	struct brt_log_buf *log_grow;  /* non-NULL: the log goes here instead of log_buf */
	brt_map_info_fn map_info;      /* NULL: every map reference is an invalid fd */
	void *map_arg;                 /* passed to map_info */
	const int *fd_array;           /* attr.fd_array for BPF_PSEUDO_MAP_IDX(_VALUE) */
	uint32_t fd_array_cnt;         /* entries in fd_array (0: unknown, trust indexes) */
	/* attr.fd_array_cnt (Linux 6.13): fd_array's first bind_cnt entries are maps, bound
	 * to the program first, or BTF objects (btf_fd says which: 0 and a pointer naming the
	 * object, else -errno); an entry past fd_array_cnt is a fault (-EFAULT) */
	uint32_t bind_cnt;
	int (*btf_fd)(void *arg, int fd, const void **id);
	const struct brt_vline *lines; /* source lines by insn_off (sorted), or NULL */
	uint32_t nlines;
	/* func_info: the BTF linkage (BTF_FUNC_STATIC, _GLOBAL, ...) of each subprogram in
	 * order, or NULL when the load has no func_info (callbacks then need it) */
	const uint8_t *func_linkage;
	uint32_t nfuncs;
	int btf_info;                  /* func_info or line_info given: subprograms may use
					* LD_ABS and tail calls */
	/* func_info's BTF: the program's BTF and each function's BTF_KIND_FUNC id (nfuncs
	 * of them), or NULL.  With them a global function is verified once on its own from
	 * its prototype (global.c); without them (a program file re-verified in another
	 * process keeps no BTF) every function is walked at each call as a static one, which
	 * is sound but may differ from the kernel in the work it does. */
	const struct brt_btf *prog_btf;
	const uint32_t *func_btf_ids;
	const uint32_t *func_offs;     /* ... and each function's insn_off, or NULL */
	/* without prog_btf: the exception callback's first insn as the load's BTF named it
	 * (a program file keeps it), 0 when none */
	uint32_t exc_cb_insn;
	/* out, or NULL: n entries the caller zeroed; once the program is accepted,
	 * call_maps[i] of a helper call taking a map is the map's ptr when every path passes
	 * the same map there, so a JIT may bind the call to it (the kernel's map_ptr_state) */
	void **call_maps;
	/* out, or NULL: n entries the caller zeroed; once the program is accepted, a
	 * context load the kernel's narrow-load rewrite turns into a read of its whole
	 * field (a 2-byte load of __sk_buff.protocol's upper half returns protocol) gets
	 * ctx_read_off[i] = 1 + the insn offset to read at instead */
	int16_t *ctx_read_off;
	/* out, or NULL: n entries the caller zeroed; once the program is accepted, what the
	 * kernel's rewrites after verification need of each insn (api/xlated.c builds the
	 * kernel's xlated view from them): BRT_INSN_SEEN when a path reached it (both slots
	 * of an lddw), BRT_INSN_CTX for a load or store through the context pointer,
	 * BRT_INSN_PKT_WRITE for a store into the packet, BRT_INSN_INNER_MAP for a helper
	 * call passed the inner map of a map of maps (call_maps then holds the map of maps,
	 * whose template the inner map is), BRT_INSN_PROBE for a load through a kernel
	 * pointer */
	uint8_t *insn_flags;
	/* out, or NULL: n entries the caller zeroed; once the program is accepted, a
	 * bpf_loop call the kernel inlines (flags 0, one callback) gets 1 + the callback's
	 * first instruction */
	uint32_t *loop_callback;
	/* n rows of brt_isa_decode_prog() for these insns, or NULL: the program as the load
	 * path decoded it once (api/prog.c), so the verifier does not look rows up again;
	 * without it brt_verify() looks them up itself (brt_isa_lookup_prog()) */
	const uint16_t *ops;
	/* BTF-typed programs (tracing): attr.attach_btf_id and the BTF it names (the
	 * kernel's, brt_btf_vmlinux()); NULL when there is none */
	const struct brt_btf *attach_btf;
	uint32_t attach_btf_id;
	/* the program's BTF (attr.prog_btf_fd), NULL when none: the types of the objects it
	 * allocates (bpf_obj_new) and of its graph nodes (verifier/graph.c) */
	const struct brt_btf *local_btf;
};

#define BRT_INSN_SEEN 1u
#define BRT_INSN_CTX 2u
#define BRT_INSN_PKT_WRITE 4u
#define BRT_INSN_INNER_MAP 8u
/* a load through a kernel pointer (the kernel's BPF_PROBE_MEM): a bad address reads 0 */
#define BRT_INSN_PROBE 16u

#define BRT_VERIFY_ERRLEN 256

struct brt_verify_result {
	uint32_t insn_processed;       /* "processed N insns" */
	uint32_t max_states_per_insn;
	uint32_t total_states;
	uint32_t peak_states;
	uint32_t mark_read;
	uint32_t log_true_size;        /* bytes the whole log needs, NUL included */
	uint32_t subprog_cnt;
	uint32_t max_ctx_offset;       /* highest ctx byte accessed + 1 (attach checks) */
	int btf_loads;                 /* the program loads through kernel (BTF) pointers */
	uint32_t stack_depth[256];     /* per subprogram, bytes; first subprog_cnt valid */
	/* the types bpf_obj_new calls allocate (first nobj_types valid), for the run */
	struct brt_obj_type obj_types[BRT_MAX_OBJ_TYPES];
	uint32_t nobj_types;
	/* the program may call bpf_throw (a path reached a call), and the first insn of the
	 * exception callback that then runs with the cookie (0: the kernel's default one,
	 * which returns the cookie) */
	int throws;
	uint32_t exc_cb_insn;
	int err_insn;                  /* instruction the first error is about, -1 if none */
	char err_msg[BRT_VERIFY_ERRLEN]; /* the first error line (the kernel's wording) */
};

/* Verify n instructions.  opts may not be NULL; res may be NULL.
 * Returns 0 (accepted), -EACCES (rejected; the reason in the log and in res->err_msg),
 * -EINVAL (malformed program or bad log attributes), -E2BIG (too long, or too complex),
 * -ENOSPC (log_buf too small: the log holds the kernel's tail, or head with BPF_LOG_FIXED),
 * -EBADF (a map fd did not resolve), -ENOMEM, -EFAULT (internal error). */
int brt_verify(const struct bpf_insn *insns, size_t n, const struct brt_verify_opts *opts,
	       struct brt_verify_result *res);

/* The log of a load the kernel rejects inside bpf_check() before walking the program
 * (its BTF func_info/line_info checks): msg, then the statistics lines for nothing
 * processed, written into buf (grown up to size bytes; NULL or size 0: none, the size
 * still counted; log attributes as brt_verify_opts) with the log's truncation rules, the
 * whole log's size in *true_size.  0, or -ENOSPC when it did not fit (which the kernel
 * reports instead of the rejection's own errno), -EINVAL for bad log attributes. */
int brt_verify_log_early(uint32_t level, struct brt_log_buf *buf, uint32_t size,
			 const char *msg, uint32_t *true_size);

/* The helper prototypes calls are checked against, from the registry above (struct
 * brt_helper_source in vm/helper_proto.h): src/helpers/source.c calls this when the
 * library is loaded.  src must stay valid. */
struct brt_helper_source;
void brt_verify_set_helper_source(const struct brt_helper_source *src);

/* Name of helper id as the kernel logs it ("bpf_map_lookup_elem"), NULL if unknown. */
const char *brt_verifier_helper_name(int32_t id);

/* The helper id a verified call of kernel function btf_id (of the kernel's BTF) is sent
 * to (BRT_KFUNC_HELPER_BASE + its kfuncs.def row), or -1 when the runtime offers none. */
int brt_verifier_kfunc_helper(int32_t btf_id);

/* btf_parse_struct_metas(): each struct of btf with a special member of its own (a lock,
 * list or tree head or node, refcount, kptr) has its fields parsed whole; 0, or the first
 * such struct's parse error (BPF_BTF_LOAD then fails with it: a "contains:" naming a
 * struct the BTF lacks is -ENOENT, a node of the wrong kind -EINVAL). */
int brt_verifier_btf_struct_metas(const struct brt_btf *btf);

/* The bpf_list_head and bpf_rb_root fields of struct (or DATASEC) id of btf, as
 * btf_parse_fields() finds them with their "contains:" node, and its kptrs to objects of
 * bpf_obj_new (verifier/graph.c): their number (at most max written to roots), 0 when
 * none, a negative errno when the special fields do not parse (btf_parse_fields()'s
 * error: the kernel's map then has no record at all, its lock and timer included). */
int brt_verifier_graph_roots(const struct brt_btf *btf, uint32_t id, struct brt_obj_root *roots,
			     uint32_t max);

/* Would the kernel's map with value type id of btf (a struct or DATASEC) have a record:
 * any field btf_parse_fields() looks for in a map value (locks, timers, task works,
 * workqueues, kptrs, uptrs, list and tree roots, refcounts)?  1 or 0 (also when those
 * fields do not parse: the kernel's map keeps the error, not a record).  BPF_MAP_FREEZE
 * refuses such a map (ENOTSUPP). */
int brt_verifier_value_has_record(const struct brt_btf *btf, uint32_t id);

/* The kernel's address of kernel function btf_id (/proc/kallsyms), 0 when unknown (not a
 * function, or addresses hidden from this process). */
uint64_t brt_verifier_ksym_addr(int32_t btf_id);

/* The context struct a program type's BPF side names (the kernel's bpf_types.h), "" when
 * untyped (btf_ctx.c) */
const char *brt_ctx_type_name(uint32_t prog_type);

#endif
