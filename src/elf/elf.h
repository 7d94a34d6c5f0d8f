/* elf.h - the elf/ folder's interface: a parsed, relocated eBPF object (programs with their
 * subprograms appended and map references rewritten as lddw BPF_PSEUDO_MAP_FD/MAP_VALUE
 * whose imm is a map index until load), its maps (legacy, BTF-defined, global data), and
 * its .BTF (read by btf/).  open.c drives parsing; see the comment at its top.  Nothing here
 * calls into api/: loading is object/'s job.
 */
#ifndef BPFRT_SRC_ELF_ELF_H
#define BPFRT_SRC_ELF_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>
#include <linux/btf.h>

#include "btf/btf.h"

struct brt_elf_ctx;

/* ---- section names to program types (sections.c, sec_def.def) ---- */

/* Program type and expected attach type for an ELF section name, following libbpf's SEC()
 * conventions (then libbpf 0.x's prefixes).  Returns 0, or -ENOENT when none matches. */
int brt_elf_sec_type(const char *sec, uint32_t *prog_type, uint32_t *attach_type,
		     uint32_t *prog_flags);
/* Whether sec is a tc tail-call section "N/M" (program for key M of the prog array whose
 * iproute2 map id is N); sets both.  Returns 1 or 0. */
int brt_elf_tail_sec(const char *sec, uint32_t *map_id, uint32_t *key);
const char *brt_elf_attach_type_name(uint32_t attach_type);

/* ---- the parsed object ---- */

enum brt_elf_map_kind {
	BRT_ELF_MAP_LEGACY, /* SEC("maps"), struct bpf_map_def */
	BRT_ELF_MAP_BTF,    /* SEC(".maps"), described in .BTF */
	BRT_ELF_MAP_DATA,   /* .data*: writable global data */
	BRT_ELF_MAP_RODATA, /* .rodata*: read-only global data, frozen after load */
	BRT_ELF_MAP_BSS,    /* .bss*: zero-initialised global data */
	BRT_ELF_MAP_STRUCT_OPS, /* SEC(".struct_ops"), SEC(".struct_ops.link"): a struct of
				 * operations (data: its bytes; slots: member byte offset ->
				 * program; btf_value_type_id: its struct in .BTF) */
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
	uint32_t pinning;           /* 0 none, 1 pinned (LIBBPF_PIN_BY_NAME, tc's PIN_*_NS) */
	uint64_t map_extra;         /* BPF_MAP_CREATE's map_extra (a bloom filter's hash count,
				     * an arena's user address) */
	const char *pin_dir;        /* pin under <pin root>/pin_dir ("tc/globals"), or NULL */
	uint32_t id;                /* iproute2 bpf_elf_map id ("N/M" sections name it), 0 */
	uint32_t inner_ref;         /* 1 + index of the object's map that is the inner map of
				     * this map of maps (legacy formats), 0 none */
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
	BRT_ELF_RELO_KSYM,      /* __ksym extern: kfunc call or lddw BPF_PSEUDO_BTF_ID, target = vmlinux BTF id (0: weak, absent) */
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

/* A CO-RE relocation of one instruction of a linked program: a .BTF.ext record placed at
 * every copy of its instruction (a subprogram appended to several programs has one per
 * program).  Applied by object/ against the target BTF (object/core.c). */
struct brt_elf_core {
	uint32_t insn_idx;                   /* instruction in brt_elf_prog.insns */
	const struct brt_btf_core_relo *rec; /* the record, owned by the object's ext */
};

struct brt_elf_prog {
	const char *name;             /* function symbol */
	const char *sec_name;         /* ELF section, e.g. "xdp" or "tracepoint/sched/x" */
	uint32_t sec_idx;             /* ELF section index */
	uint32_t sec_off;             /* byte offset of the entry in that section */
	uint32_t type;                /* enum bpf_prog_type (UNSPEC when the name is unknown) */
	uint32_t expected_attach_type; /* enum bpf_attach_type */
	uint32_t prog_flags;          /* BPF_F_SLEEPABLE / BPF_F_XDP_HAS_FRAGS of the section */
	int no_autoload;              /* the section name starts with '?' (libbpf's SEC("?x")) */
	struct bpf_insn *insns;       /* relocated code: entry, then appended subprograms */
	size_t insn_cnt;              /* instructions in insns */
	size_t main_cnt;              /* instructions of the entry function itself */
	struct brt_elf_reloc *relocs; /* applied relocations, by insn_idx */
	size_t nrelocs;               /* entries in relocs */
	struct brt_elf_line *lines;   /* source lines, by insn_idx */
	size_t nlines;                /* entries in lines */
	struct bpf_func_info *func_info; /* BTF FUNC of each function start, by insn */
	size_t nfunc_info;            /* entries in func_info */
	struct brt_elf_core *cores;   /* CO-RE relocations, by insn_idx */
	size_t ncores;                /* entries in cores */
	/* linked (insns ... cores above are then filled): 0 not yet, 1 done, -errno failed
	 * (everything above empty); see brt_elf_prog_link() */
	int link_state;
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
	struct brt_elf_ctx *link;  /* the parse kept for programs not linked yet, or NULL */
	size_t unlinked;           /* programs not linked yet (the parse goes with the last) */
	char **strings;            /* names kept by brt_elf_keep() */
	size_t nstrings, strings_cap;
};

/* Parse and link an eBPF relocatable object held in memory (read; buf may be freed
 * afterwards).  name is used in messages.  Returns 0 or -errno (-EINVAL for malformed
 * input, -ENOTSUP for constructs we refuse, -ENOMEM) with "elf: NAME: section N 'S'
 * offset 0xX: ..." in err.  Every program is linked (brt_elf_open_mem() without
 * BRT_ELF_LAZY). */
int brt_elf_open(const void *buf, size_t size, const char *name, struct brt_elf_obj **out,
		 char *err, size_t errlen);
/* Link each program on its first brt_elf_prog_link() instead of at the open, as libbpf
 * links (and relocates) at load only the programs it loads: the open keeps what linking
 * needs; the errors linking finds (a call outside any function, an lddw naming no map, a
 * ksym the kernel lacks, a bad line_info record, a CO-RE record off an instruction) are
 * then the program's, reported by its link with the message the open gave. */
#define BRT_ELF_LAZY 1u
/* brt_elf_open() with flags. */
int brt_elf_open_mem(const void *buf, size_t size, const char *name, unsigned flags,
		     struct brt_elf_obj **out, char *err, size_t errlen);
/* The same from the regular file open at fd, of size bytes as the caller's fstat() found
 * it (read with pread, only the sections the loader uses: debug info is not read; a small
 * file whole; fd is not kept). */
int brt_elf_open_fd(int fd, size_t size, const char *name, unsigned flags,
		    struct brt_elf_obj **out, char *err, size_t errlen);
/* Link program prog of an object opened with BRT_ELF_LAZY, if not yet: 0, or its -errno
 * (the message in err at the failing call; later calls return the errno alone). */
int brt_elf_prog_link(struct brt_elf_obj *obj, size_t prog, char *err, size_t errlen);
void brt_elf_free(struct brt_elf_obj *obj);

/* max_entries of a ring buffer (BPF_MAP_TYPE_RINGBUF, USER_RINGBUF) as libbpf sizes a
 * BTF-defined one or one resized with bpf_map__set_max_entries(): the kernel wants a
 * power-of-2 multiple of the page size, so any other size becomes the smallest such product
 * above it (0 stays 0, for the kernel's error).  Other types: sz unchanged. */
uint32_t brt_elf_map_size(uint32_t type, uint32_t sz);

/* "R_BPF_64_64" etc., "unknown" for other values. */
const char *brt_elf_reloc_type_name(uint32_t type);

/* Source line of insn_idx in prog, or NULL. */
const struct brt_elf_line *brt_elf_prog_line(const struct brt_elf_prog *prog, size_t insn_idx);

#endif
