/* elf.h - the elf/ folder's interface: a parsed, relocated eBPF object (programs with their
 * subprograms appended and map references rewritten as lddw BPF_PSEUDO_MAP_FD/MAP_VALUE
 * whose imm is a map index until load), its maps (legacy, BTF-defined, global data), and
 * the .BTF reader those need.  open.c drives parsing; see the comment at its top.
 */
#ifndef BPFRT_SRC_ELF_ELF_H
#define BPFRT_SRC_ELF_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>
#include <linux/btf.h>

/* ---- BTF (btf.c) ---- */

struct brt_btf {
	const struct btf_type **types; /* index = type id; [0] is void (NULL) */
	uint32_t ntypes;               /* including void */
	uint8_t *type_data;            /* private, aligned copy of the type records */
	uint32_t type_len;             /* bytes in type_data */
	uint8_t *kernel_types;         /* type_data with DATASEC fixups for the kernel, or NULL */
	char *strs;                    /* private copy of the string section */
	uint32_t str_len;              /* bytes in strs (NUL-terminated) */
	uint32_t types_file_off;       /* where the type records start in the section */
};

/* One .BTF.ext line_info record, with its strings resolved. */
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

struct brt_btf_ext {
	struct brt_btf_func *funcs; /* func_info, in file order */
	size_t nfuncs;
	struct brt_btf_line *lines; /* line_info, in file order */
	size_t nlines;
};

/* Parse a .BTF section (copied; data may be freed afterwards).  Checks the header, every
 * record's size, name offsets and type references, and rejects typedef/qualifier/array
 * chains that loop.  0 or -errno with a message in err. */
int brt_btf_parse(const void *data, size_t size, struct brt_btf **out, char *err, size_t errlen);
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
/* First type of that kind and name, or -ENOENT. */
int brt_btf_find(const struct brt_btf *btf, const char *name, unsigned int kind);
/* Read the func_info and line_info parts of .BTF.ext; strings point into btf. */
int brt_btf_ext_parse(const struct brt_btf *btf, const void *data, size_t size,
		      struct brt_btf_ext *ext, char *err, size_t errlen);
void brt_btf_ext_free(struct brt_btf_ext *ext);
/* A fresh .BTF image (header, types - with the DATASEC fixups if any - and strings) for
 * BPF_BTF_LOAD; caller frees *out. */
int brt_btf_raw(const struct brt_btf *btf, void **out, size_t *len);

/* Print the value at data (size bytes) of type id as bpftool's btf_dumper does (plain: its
 * text flavour, else JSON) into w (btf_format.c).  0, or -EINVAL when the type reads past
 * size or is a kind that cannot be printed, -E2BIG when nesting or work runs past the
 * bounds; what was printed until then stays, with every collection closed. */
struct brt_jsonw;
int brt_btf_format(const struct brt_btf *btf, uint32_t id, const void *data, size_t size,
		   int plain, struct brt_jsonw *w);

/* ---- section names to program types (sections.c, sec_def.def) ---- */

/* Program type and expected attach type for an ELF section name, following libbpf's SEC()
 * conventions.  Returns 0, or -ENOENT when no convention matches. */
int brt_elf_sec_type(const char *sec, uint32_t *prog_type, uint32_t *attach_type);
const char *brt_elf_prog_type_name(uint32_t prog_type);
const char *brt_elf_map_type_name(uint32_t map_type);
const char *brt_elf_attach_type_name(uint32_t attach_type);

/* ---- the parsed object ---- */

enum brt_elf_map_kind {
	BRT_ELF_MAP_LEGACY, /* SEC("maps"), struct bpf_map_def */
	BRT_ELF_MAP_BTF,    /* SEC(".maps"), described in .BTF */
	BRT_ELF_MAP_DATA,   /* .data*: writable global data */
	BRT_ELF_MAP_RODATA, /* .rodata*: read-only global data, frozen after load */
	BRT_ELF_MAP_BSS,    /* .bss*: zero-initialised global data */
};

/* One initial entry of a prog array or map-in-map (`.values = { [2] = &prog }`). */
struct brt_elf_slot {
	uint32_t index;  /* key in the outer map */
	int32_t target;  /* program index (prog arrays) or map index (maps of maps) */
};

struct brt_elf_map {
	const char *name;           /* variable name, or the section name for global data */
	enum brt_elf_map_kind kind; /* where the definition came from */
	uint32_t sec_idx;           /* ELF section of the definition or the data */
	uint32_t sec_off;           /* byte offset of the definition in that section */
	uint32_t type;              /* enum bpf_map_type */
	uint32_t key_size;          /* bytes */
	uint32_t value_size;        /* bytes */
	uint32_t max_entries;       /* entries */
	uint32_t map_flags;         /* BPF_F_* */
	uint32_t numa_node;         /* with BPF_F_NUMA_NODE */
	uint32_t pinning;           /* 0 none, 1 LIBBPF_PIN_BY_NAME */
	uint32_t btf_key_type_id;   /* .BTF id of the key type, 0 if unknown */
	uint32_t btf_value_type_id; /* .BTF id of the value type, 0 if unknown */
	uint8_t *data;              /* initial value of global data (value_size bytes), or NULL */
	struct brt_elf_map *inner;  /* template of the inner map for maps of maps, or NULL */
	struct brt_elf_slot *slots; /* initial entries of a prog array / map of maps */
	size_t nslots;              /* entries in slots */
	uint32_t values_off;        /* BTF maps: section offset of the `values` array, or 0 */
	uint32_t values_end;        /* end of that array in the section */
};

enum brt_elf_reloc_kind {
	BRT_ELF_RELO_MAP_FD,    /* lddw src_reg=BPF_PSEUDO_MAP_FD, imm = map index */
	BRT_ELF_RELO_MAP_VALUE, /* lddw src_reg=BPF_PSEUDO_MAP_VALUE, imm = map index, next imm = off */
	BRT_ELF_RELO_CALL,      /* bpf-to-bpf call; imm now relative to the linked program */
	BRT_ELF_RELO_FUNC,      /* lddw src_reg=BPF_PSEUDO_FUNC (callback address) */
};

/* One relocation as applied to a linked program, kept for `object show` and for load. */
struct brt_elf_reloc {
	uint32_t insn_idx;            /* instruction in brt_elf_prog.insns */
	enum brt_elf_reloc_kind kind; /* what was patched */
	int32_t target;               /* map index, or target insn index for calls/funcs */
	uint32_t off;                 /* value offset for MAP_VALUE */
	uint32_t sec_idx;             /* ELF section of the instruction */
	uint32_t sec_off;             /* byte offset of the instruction in that section */
	uint32_t elf_type;            /* R_BPF_* type, 0 for an unrelocated local call */
	const char *sym;              /* symbol name (owned by the object) */
};

/* A source line for one instruction of a linked program (from .BTF.ext). */
struct brt_elf_line {
	uint32_t insn_idx; /* instruction in the linked program */
	uint32_t file_off; /* .BTF string offsets of file and src */
	uint32_t src_off;
	const char *file;  /* owned by the object's BTF */
	const char *src;   /* text of the line */
	uint32_t line;     /* line number */
	uint32_t col;      /* column */
};

struct brt_elf_prog {
	const char *name;             /* function symbol */
	const char *sec_name;         /* ELF section, e.g. "xdp" or "tracepoint/sched/x" */
	uint32_t sec_idx;             /* ELF section index */
	uint32_t sec_off;             /* byte offset of the entry in that section */
	uint32_t type;                /* enum bpf_prog_type (UNSPEC when the name is unknown) */
	uint32_t expected_attach_type; /* enum bpf_attach_type */
	struct bpf_insn *insns;       /* relocated code: entry, then appended subprograms */
	size_t insn_cnt;              /* instructions in insns */
	size_t main_cnt;              /* instructions of the entry function itself */
	struct brt_elf_reloc *relocs; /* applied relocations, by insn_idx */
	size_t nrelocs;               /* entries in relocs */
	struct brt_elf_line *lines;   /* source lines, by insn_idx */
	size_t nlines;                /* entries in lines */
	struct bpf_func_info *func_info; /* BTF FUNC of each function start, by insn */
	size_t nfunc_info;            /* entries in func_info */
};

struct brt_elf_obj {
	const char *name;          /* file name used in messages */
	char license[128];         /* "license" section, NUL-terminated */
	uint32_t kern_version;     /* "version" section, 0 when absent */
	struct brt_elf_prog *progs; /* in section order, then symbol offset */
	size_t nprogs;
	struct brt_elf_map *maps;  /* legacy, then BTF-defined, then global data */
	size_t nmaps;
	struct brt_btf *btf;       /* parsed .BTF, or NULL */
	struct brt_btf_ext ext;    /* .BTF.ext records, empty when absent */
	size_t nsyms_seen;         /* symbols in .symtab (for `object show`) */
	char **strings;            /* names kept by brt_elf_keep() */
	size_t nstrings;
};

/* Parse and link an eBPF relocatable object held in memory (copied; buf may be freed
 * afterwards).  name is used in messages.  Returns 0 or -errno (-EINVAL for malformed
 * input, -ENOTSUP for constructs we refuse, -ENOMEM) with "elf: NAME: section N 'S'
 * offset 0xX: ..." in err. */
int brt_elf_open(const void *buf, size_t size, const char *name, struct brt_elf_obj **out,
		 char *err, size_t errlen);
void brt_elf_free(struct brt_elf_obj *obj);

/* "R_BPF_64_64" etc., "unknown" for other values. */
const char *brt_elf_reloc_type_name(uint32_t type);

/* Source line of insn_idx in prog, or NULL. */
const struct brt_elf_line *brt_elf_prog_line(const struct brt_elf_prog *prog, size_t insn_idx);

/* ---- the public handles of bpfrt/object.h (object.c, load.c) ---- */

struct bpfrt_program {
	struct bpfrt_object *obj; /* owner */
	struct brt_elf_prog *p;   /* parsed program */
	int fd;                   /* after load, else -1 */
	int autoload;             /* loaded by bpfrt_object_load() */
};

struct bpfrt_map {
	struct bpfrt_object *obj; /* owner */
	struct brt_elf_map *m;    /* parsed definition */
	int fd;                   /* after load, else -1 */
};

struct bpfrt_object {
	struct brt_elf_obj *elf;       /* parsed and linked object */
	struct bpfrt_program *progs;   /* one per elf->progs */
	struct bpfrt_map *maps;        /* one per elf->maps */
	char *pin_root;                /* directory for pinned maps */
	char *log;                     /* last load's messages, or NULL */
	int loaded;                    /* fds are live */
	int kernel;                    /* load through bpf(2), not bpfrt_bpf() */
	int btf_fd;                    /* .BTF loaded into the kernel during load, or -1 */
	uint32_t log_level;            /* verifier log level at load */
};

/* Close the fds of a loaded object and mark it unloaded. */
void brt_object_unload(struct bpfrt_object *obj);

/* ---- parser state, shared by open.c, maps_sec.c and reloc.c only ---- */

enum brt_elf_sec_kind {
	BRT_SEC_OTHER,    /* ignored (debug info, string tables, empty .text, ...) */
	BRT_SEC_EXEC,     /* code */
	BRT_SEC_LICENSE,  /* "license" */
	BRT_SEC_VERSION,  /* "version" */
	BRT_SEC_MAPS,     /* legacy "maps" */
	BRT_SEC_BTF_MAPS, /* ".maps" */
	BRT_SEC_DATA,     /* .data*, .rodata*, .bss* */
	BRT_SEC_BTF,      /* ".BTF" */
	BRT_SEC_BTF_EXT,  /* ".BTF.ext" */
	BRT_SEC_SYMTAB,   /* the symbol table */
	BRT_SEC_REL,      /* relocations for another section */
};

struct brt_elf_rel {
	uint64_t off;  /* byte offset in the target section */
	uint32_t sym;  /* symbol index */
	uint32_t type; /* R_BPF_* */
	uint32_t idx;  /* position in its .rel section, for messages */
};

struct brt_elf_sec {
	const char *name;             /* section name */
	uint32_t type;                /* sh_type */
	uint64_t flags;               /* sh_flags */
	uint64_t file_off;            /* sh_offset */
	const uint8_t *data;          /* contents (NULL for NOBITS) */
	size_t size;                  /* sh_size */
	enum brt_elf_sec_kind kind;   /* what the loader makes of it */
	uint32_t rel_sec;             /* index of the .rel section for it, 0 if none */
	struct brt_elf_rel *rels;     /* its relocations, sorted by offset */
	size_t nrels;
};

struct brt_elf_sym {
	const char *name;
	uint64_t value; /* st_value: offset in its section */
	uint64_t size;  /* st_size */
	uint32_t shndx; /* section, SHN_UNDEF for externs */
	uint8_t type;   /* STT_* */
	uint8_t bind;   /* STB_* */
};

/* A function in an executable section: a program entry or a subprogram. */
struct brt_elf_func {
	const char *name;
	uint32_t sec;   /* section index */
	uint32_t start; /* first instruction, in the section */
	uint32_t cnt;   /* instructions */
	int prog;       /* index in obj->progs, -1 for a subprogram */
};

struct brt_elf_ctx {
	struct brt_elf_obj *obj;
	const char *name;          /* object name for messages */
	struct brt_elf_sec *secs;  /* by section index; [0] is the null section */
	size_t nsecs;
	struct brt_elf_sym *syms;  /* by symbol index */
	size_t nsyms;
	struct brt_elf_func *funcs; /* by section, then start */
	size_t nfuncs;
	char *err;
	size_t errlen;
};

/* Format "elf: NAME: section N 'S' offset 0xX: msg" (sec 0: no section part) into the
 * context's error buffer unless an error is already there; returns ret. */
int brt_elf_fail(struct brt_elf_ctx *ctx, int ret, uint32_t sec, uint64_t off, const char *fmt,
		 ...) __attribute__((format(printf, 5, 6)));
/* Maps from "maps", ".maps" and the global data sections (maps_sec.c). */
int brt_elf_collect_maps(struct brt_elf_ctx *ctx);
/* Initial prog-array / map-in-map entries from the relocations of ".maps". */
int brt_elf_collect_slots(struct brt_elf_ctx *ctx);
/* Index of the map defined at (sec, off) - any offset for global data - or -1. */
int brt_elf_map_at(const struct brt_elf_ctx *ctx, uint32_t sec, uint64_t off);
/* Link every program: copy, apply relocations, append subprograms (reloc.c). */
int brt_elf_link(struct brt_elf_ctx *ctx);
/* Keep a copy of s in the object; NULL on ENOMEM. */
const char *brt_elf_keep(struct brt_elf_obj *obj, const char *s);

#endif
