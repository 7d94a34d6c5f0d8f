/* btf.h - the btf/ folder's interface: a checked, read-only view of a .BTF type section
 * (btf.c) and its .BTF.ext func_info/line_info records, used by the ELF reader, by
 * BPF_BTF_LOAD (api/btf_load.c) and by the CLI.
 */
#ifndef BPFRT_SRC_BTF_BTF_H
#define BPFRT_SRC_BTF_BTF_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <linux/bpf.h>
#include <linux/btf.h>

struct brt_btf {
	const struct btf_type **types; /* index = type id; [0] is void (NULL) */
	uint32_t ntypes;               /* including void */
	uint8_t *type_data;            /* private, aligned copy of the type records */
	uint32_t type_len;             /* bytes in type_data */
	uint8_t *kernel_types;         /* type_data with DATASEC fixups for the kernel, or NULL */
	uint32_t kernel_type_len;      /* its bytes: type_len, or more with types the loader
					* added (libbpf's dummy_ksym variable); 0 = type_len */
	char *kernel_strs;             /* strs with the added types' names, or NULL */
	uint32_t kernel_str_len;
	char *strs;                    /* private copy of the string section */
	uint32_t str_len;              /* bytes in strs (NUL-terminated) */
	uint32_t types_file_off;       /* where the type records start in the section */
	void *mapped;                  /* a read-only mapping type_data and strs point into
					* instead of copies (brt_btf_load_kernel()), or NULL */
	size_t mapped_len;
};

/* One .BTF.ext line_info record, with its strings resolved (brt_btf_ext_line()). */
struct brt_btf_line {
	const char *sec;   /* ELF section the record belongs to */
	uint32_t insn_off; /* byte offset in that section */
	const char *file;  /* source file name */
	const char *src;   /* text of the source line */
	uint32_t line;     /* line number */
	uint32_t col;      /* column */
	uint32_t file_off; /* .BTF string offsets of file and src, for the kernel */
	uint32_t src_off;
};

/* One .BTF.ext func_info record: the BTF FUNC describing the function at insn_off. */
struct brt_btf_func {
	const char *sec;   /* ELF section */
	uint32_t insn_off; /* byte offset in that section */
	uint32_t type_id;  /* a BTF_KIND_FUNC */
};

/* One .BTF.ext CO-RE relocation record (struct bpf_core_relo), strings resolved. */
struct brt_btf_core_relo {
	const char *sec;    /* ELF section the record belongs to */
	uint32_t insn_off;  /* byte offset in that section */
	uint32_t type_id;   /* local root type */
	const char *access; /* accessor string, "0:1:2" */
	uint32_t kind;      /* enum bpf_core_relo_kind */
	uint32_t sec_rec;   /* index among the records of its section (libbpf's "relo #N") */
};

/* The three record kinds of .BTF.ext, in the order the file's header lists them. */
enum brt_btf_ext_kind { BRT_BTF_EXT_FUNC, BRT_BTF_EXT_LINE, BRT_BTF_EXT_CORE, BRT_BTF_EXT_KINDS };

/* One block of a kind's records: those the file lists under one ELF section name. */
struct brt_btf_ext_block {
	const char *sec;       /* the section's name */
	const uint8_t *recs;   /* its first record: in the parsed array (funcs, cores), or in
				* the .BTF.ext data itself (lines: read by brt_btf_ext_line()) */
	size_t stride;         /* bytes from one record to the next there */
	uint32_t first, count; /* its records' numbers among the kind's, in file order */
	uint32_t file_off;     /* .BTF.ext offset of its first record (for messages) */
};

struct brt_btf_ext {
	struct brt_btf_func *funcs; /* func_info, in file order */
	size_t nfuncs;
	size_t nlines;              /* line_info records: left where they are in the section
				     * (Tracee's object has 181k: resolving them all at open was
				     * a tenth of it), read per record by brt_btf_ext_line() */
	struct brt_btf_core_relo *cores; /* CO-RE relocations, in file order */
	size_t ncores;
	struct brt_btf_ext_block *blocks[BRT_BTF_EXT_KINDS]; /* each kind's, in file order */
	size_t nblocks[BRT_BTF_EXT_KINDS];
};

/* Parse a .BTF section (copied; data may be freed afterwards).  Checks the header, every
 * record's size, name offsets and type references, and rejects typedef/qualifier/array
 * chains that loop.  0 or -errno with a message in err. */
int brt_btf_parse(const void *data, size_t size, struct brt_btf **out, char *err, size_t errlen);
/* The same over data (a mapping of len bytes, unmapped by brt_btf_free()) that nothing can
 * change while it is mapped: the records are read where they are, not copied.  -EAGAIN
 * when the sections are not 4-byte aligned there (the caller copies instead).  On any
 * error data stays the caller's. */
int brt_btf_parse_mapped(void *data, size_t size, struct brt_btf **out, char *err,
			 size_t errlen);
/* The BTF of the kernel file path (/sys/kernel/btf/vmlinux or a module's, or a raw BTF
 * file standing in for one): sysfs's BTF files are the kernel's read-only data, so they
 * are mapped and parsed in place (5.5 MB not copied: about a third of the parse, mostly
 * page faults); any other file is read and copied.  0 with *out, or -errno with err. */
int brt_btf_load_kernel(const char *path, struct brt_btf **out, char *err, size_t errlen);
void brt_btf_free(struct brt_btf *btf);
/* NULL for id 0 (void) or out of range. */
const struct btf_type *brt_btf_type(const struct brt_btf *btf, uint32_t id);
/* NULL when off is outside the string section. */
const char *brt_btf_str(const struct brt_btf *btf, uint32_t off);
/* Name of type id ("" for anonymous, void or out of range). */
const char *brt_btf_name(const struct brt_btf *btf, uint32_t id);
const char *brt_btf_kind_name(unsigned int kind);
/* Strip typedefs, qualifiers and type tags. */
uint32_t brt_btf_skip_mods(const struct brt_btf *btf, uint32_t id);
/* Size in bytes of a type (arrays multiplied out).  -EINVAL for sizeless kinds, -ELOOP. */
int brt_btf_resolve_size(const struct brt_btf *btf, uint32_t id, uint64_t *size);
/* libbpf's bpf_core_types_are_compat(): local type lid of lb against target type tid of tb
 * (same kind after modifiers and typedefs, a struct, union, enum or forward declaration
 * compatible with any of its kind, ints not old-style bitfields, pointers, arrays and
 * function prototypes compared through): 1 compatible, 0 not, -EINVAL too deep. */
int brt_btf_types_compat(const struct brt_btf *lb, uint32_t lid, const struct brt_btf *tb,
			 uint32_t tid);
/* Member path ("nd_net.net": members of members, found in anonymous struct and union
 * members too; no bitfield) of struct or union id: its byte offset and size.  0 or
 * -ENOENT. */
int brt_btf_member_at(const struct brt_btf *btf, uint32_t id, const char *path, uint32_t *off,
		      uint32_t *size);
/* The kernel's per-record BTF rules the reader leaves to BPF_BTF_LOAD (btf/meta.c): INT
 * encodings and sizes, FUNC and VAR linkage (no externs), DATASEC sizes and offsets.  0, or
 * -EINVAL (-ENOTSUPP: BRT_ENOTSUPP) with the kernel's log line in err.  With log non-NULL,
 * the lines that pass (btf_check_all_metas()) writes to its log are written there, up to
 * and including the refusal's. */
int brt_btf_meta_rules(const struct brt_btf *btf, char *err, size_t errlen, FILE *log);
/* The kernel's second pass's bound (btf_resolve()): resolving a type may descend through at
 * most 32 unresolved types (its modifiers, pointers, members, elements) in id order, else
 * -E2BIG "Exceeded max resolving depth:32" in err (-EEXIST "Loop detected": a cycle). */
int brt_btf_resolve_rules(const struct brt_btf *btf, char *err, size_t errlen);
/* First type of that kind and name, or -ENOENT. */
int brt_btf_find(const struct brt_btf *btf, const char *name, unsigned int kind);
/* Read the func_info, line_info and CO-RE relocation parts of .BTF.ext: the layout of all
 * three (header, blocks, record sizes) and every func_info and CO-RE record are checked and
 * copied, strings pointing into btf; line_info records stay in data (which must then
 * outlive ext's use) and are checked when read. */
int brt_btf_ext_parse(const struct brt_btf *btf, const void *data, size_t size,
		      struct brt_btf_ext *ext, char *err, size_t errlen);
/* Line record pos of line block b, strings resolved: 0, or -EINVAL with "offset 0xX: line
 * info record N of 'SEC' names a bad string or type" (X its offset in .BTF.ext), the
 * message a bad record gave when all were read at parse. */
int brt_btf_ext_line(const struct brt_btf *btf, const struct brt_btf_ext_block *b, uint32_t pos,
		     struct brt_btf_line *out, char *err, size_t errlen);
void brt_btf_ext_free(struct brt_btf_ext *ext);
/* A fresh .BTF image (header, types - with the DATASEC fixups if any - and strings) for
 * BPF_BTF_LOAD; caller frees *out. */
int brt_btf_raw(const struct brt_btf *btf, void **out, size_t *len);


/* ---- CO-RE relocations (core.c) ---- */

/* Helper id of a poisoned instruction (libbpf's 0xbad2310, "bad relo"). */
#define BRT_CORE_POISON 195896080

/* The outcome of one relocation: the value the instruction should hold before (local) and
 * after (target), load widths, and whether to poison it instead. */
struct brt_core_res {
	uint64_t orig_val, new_val;
	uint32_t orig_sz, new_sz;           /* field load width, 0 when not a field load */
	uint32_t orig_type_id, new_type_id; /* field types, for width changes */
	int poison;                         /* replace the instruction with a bad call */
	int validate;                       /* check the instruction holds orig_val */
	int fail_memsz_adjust;              /* the width change would misread the field */
};

struct brt_core_cands;
struct brt_core_index;

/* Relocation state of one object against one target: the candidates found for each local
 * type, searched once and shared by every program of the object. */
struct brt_core {
	const struct brt_btf *local;   /* the object's .BTF */
	const struct brt_btf *targ;    /* vmlinux or the named file; NULL when unavailable */
	struct brt_core_cands *cands;  /* by local type id */
	const struct brt_core_index *index; /* targ's types by name, or NULL: every search
					     * then scans all of targ (set after init) */
};

int brt_core_init(struct brt_core *c, const struct brt_btf *local, const struct brt_btf *targ);
/* An index of targ's named types by their name without flavour, built in one pass (about
 * what one candidate scan of vmlinux's ~130k types costs), so each local type's
 * candidate search reads only the types whose name hashes alike.  It never changes once
 * built: objects relocating against the same target (vmlinux, per process) share it.
 * 0 with *out (free with brt_core_index_free()), or -ENOMEM. */
int brt_core_index_build(const struct brt_btf *targ, struct brt_core_index **out);
void brt_core_index_free(struct brt_core_index *ix);
void brt_core_fini(struct brt_core *c);
/* Resolve a relocation for program prog (named in messages).  0 with *res, or -errno with
 * libbpf's message in err (-ESRCH when no target BTF is available and the kind needs one). */
int brt_core_calc(struct brt_core *c, const char *prog, const struct brt_btf_core_relo *r,
		  struct brt_core_res *res, char *err, size_t errlen);
/* Apply res to insns[idx] (cnt instructions).  *poisoned tells whether the instruction
 * became a bad call; err may then hold libbpf's warning.  0 or -errno with err. */
int brt_core_patch(struct bpf_insn *insns, size_t cnt, size_t idx, const char *prog,
		   const struct brt_btf_core_relo *r, const struct brt_core_res *res,
		   int *poisoned, char *err, size_t errlen);
/* libbpf's name of a relocation kind ("byte_off", ...), "unknown" otherwise. */
const char *brt_core_kind_name(uint32_t kind);
/* libbpf's description of a record: "<byte_off> [7] STRUCT task_struct.pid (0:57 @ offset
 * 2516)". */
void brt_core_describe(const struct brt_btf *local, const struct brt_btf_core_relo *r,
		       char *buf, size_t len);
/* Length of name without a "___flavour" suffix. */
size_t brt_core_essential_len(const char *name);

/* vmlinux.c: the running kernel's BTF, parsed on first use (thread-safe), or NULL when
 * there is none (BPFRT_VMLINUX_BTF overrides the path; empty: none). */
const struct brt_btf *brt_btf_vmlinux(void);
/* The type id a BTF-typed program attaches to, found as libbpf finds it from the part of
 * its section name after the '/': tp_btf/X is the typedef btf_trace_X, iter/X the func
 * bpf_iter_X, lsm/X the func bpf_lsm_X, fentry/fexit/fmod_ret X the func X.  The id,
 * -ESRCH when btf lacks it (or btf is NULL), -EINVAL for another attach type. */
int brt_btf_attach_id(const struct brt_btf *btf, uint32_t prog_type, uint32_t attach_type,
		      const char *target);

/* ---- structs of operations (struct_ops.c, struct_ops.def) ---- */

enum { BRT_STOPS_TCP_CA = 1, BRT_STOPS_DUMMY };
#define BRT_STOPS_ARG_NULLABLE 1u
#define BRT_STOPS_ARG_REF 2u

/* A registered struct of operations as found in the kernel's BTF. */
struct brt_struct_ops {
	const char *name;
	int kind;                       /* BRT_STOPS_*: its verifier_ops */
	const char *no_stub;            /* " m1 m2 ": function members without a stub */
	uint32_t type_id, value_id;     /* struct <name>, struct bpf_struct_ops_<name> */
	const struct btf_type *type, *value;
};

/* The registered struct whose type id (by_value: value type id) is id in btf (the
 * kernel's); 0 with *out, -ENOENT when none is (bpf_struct_ops_find(), _find_value()). */
int brt_struct_ops_find(const struct brt_btf *btf, uint32_t id, int by_value,
			struct brt_struct_ops *out);
/* The registered struct called name, -ENOENT when none is. */
int brt_struct_ops_by_name(const struct brt_btf *btf, const char *name,
			   struct brt_struct_ops *out);
/* Whether function member has a stub (bpf_struct_ops_supported()). */
int brt_struct_ops_stubbed(const struct brt_struct_ops *st, const char *member);
/* BRT_STOPS_ARG_* of argument arg of member, from its stub's parameter names. */
unsigned brt_struct_ops_arg_flags(const struct brt_btf *btf, const struct brt_struct_ops *st,
				  const char *member, uint32_t arg);
/* The function prototype a member of type id points to (btf_type_resolve_func_ptr()), or
 * NULL when it is no function pointer. */
const struct btf_type *brt_btf_func_ptr_proto(const struct brt_btf *btf, uint32_t id);

#endif
