/* parse.h - parser state shared by the passes of elf/ only: open.c reads sections, symbols
 * and relocations into a struct brt_elf_ctx, then calls maps_sec.c (maps) and reloc.c
 * (the relocation checks; linking, per program, then or later: the context outlives the
 * open until every program is linked), in that order.  Calls go one way: open.c calls
 * both, reloc.c asks maps_sec.c which map a symbol names, and all three report through
 * ctx.c, which calls none of them.
 */
#ifndef BPFRT_SRC_ELF_PARSE_H
#define BPFRT_SRC_ELF_PARSE_H

#include <string.h>

#include "elf/elf.h"

enum brt_elf_sec_kind {
	BRT_SEC_OTHER,    /* ignored (debug info, string tables, empty .text, ...) */
	BRT_SEC_EXEC,     /* code */
	BRT_SEC_LICENSE,  /* "license" */
	BRT_SEC_VERSION,  /* "version" */
	BRT_SEC_MAPS,     /* legacy "maps" */
	BRT_SEC_BTF_MAPS, /* ".maps" */
	BRT_SEC_DATA,     /* .data*, .rodata*, .bss* */
	BRT_SEC_STRUCT_OPS, /* .struct_ops, .struct_ops.link */
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
	uint8_t vis;    /* STV_* */
};

/* A function in an executable section: a program entry or a subprogram. */
struct brt_elf_func {
	const char *name;
	uint32_t sec;   /* section index */
	uint32_t start; /* first instruction, in the section */
	uint32_t cnt;   /* instructions */
	int prog;       /* index in obj->progs, -1 for a subprogram */
};

struct brt_link_shared;

struct brt_elf_ctx {
	struct brt_elf_obj *obj;
	const char *name;          /* object name for messages */
	struct brt_elf_sec *secs;  /* by section index; [0] is the null section */
	size_t nsecs;
	struct brt_elf_sym *syms;  /* by symbol index */
	size_t nsyms;
	struct brt_elf_func *funcs; /* by section, then start */
	size_t nfuncs;
	uint32_t *prog_func;       /* by program: its entry in funcs */
	char *err;
	size_t errlen;
	int tc_object;             /* maps in iproute2's struct bpf_elf_map layout */
	/* The file: a buffer as large as it, holding at their file offsets the sections read
	 * (sections nobody reads - debug info, the relocations of debug info and .BTF.ext -
	 * are not: 7 of Tracee's 15 MB); during the open, where the rest comes from when a
	 * pass wants every section (brt_elf_fetch_all()). */
	unsigned char *buf;
	size_t size;
	const unsigned char *src_mem; /* the caller's copy, or NULL */
	int src_fd;                /* or a file descriptor, -1 */
	uint32_t btf_ext_sec;      /* .BTF.ext's section index (messages), 0 none */
	/* the ids of .BTF's DATASECs in id order, listed by the open's one walk of every type
	 * (open.c fixup_datasecs()) for brt_elf_datasec(); datasecs_listed 0 until then */
	uint32_t *datasecs;
	size_t ndatasecs;
	int datasecs_listed;
	struct brt_link_shared *link; /* what linking shares between programs (reloc.c),
				       * made by the first program linked */
};

/* Format "elf: NAME: section N 'S' offset 0xX: msg" (sec 0: no section part) into the
 * context's error buffer unless an error is already there; returns ret (ctx.c). */
int brt_elf_fail(struct brt_elf_ctx *ctx, int ret, uint32_t sec, uint64_t off, const char *fmt,
		 ...) __attribute__((format(printf, 5, 6)));
/* Maps from "maps", ".maps" and the global data sections (maps_sec.c). */
int brt_elf_collect_maps(struct brt_elf_ctx *ctx);
/* Initial prog-array / map-in-map entries from the relocations of ".maps". */
int brt_elf_collect_slots(struct brt_elf_ctx *ctx);
/* tc's section conventions: default program type, "N/M" tail-call slots (maps_sec.c). */
int brt_elf_tc_sections(struct brt_elf_ctx *ctx);
/* A kconfig extern (libbpf's .kconfig: LINUX_KERNEL_VERSION, ...): the index of the
 * .kconfig map and *off the variable's offset in it, or -1 (maps_sec.c). */
/* kconfig.c: the running kernel's build configuration, for libbpf's CONFIG_* externs */
enum brt_kcfg_type {
	BRT_KCFG_UNKNOWN,
	BRT_KCFG_BOOL,     /* bool (1 byte): y 1, n 0 */
	BRT_KCFG_TRISTATE, /* enum libbpf_tristate: n 0, y 1, m 2 */
	BRT_KCFG_CHAR,     /* 1-byte integer: the letter, or a number */
	BRT_KCFG_INT,      /* 2, 4 or 8 bytes: a number that fits */
	BRT_KCFG_CHAR_ARR, /* char array: a quoted string, truncated to fit with its NUL */
};
/* Store value into an extern of that type and sz bytes at dst, with libbpf's rules; 0, or
 * -EINVAL / -ERANGE with libbpf's reason in why. */
int brt_elf_kconfig_store(enum brt_kcfg_type type, int is_signed, const char *value, void *dst,
			  uint32_t sz, char *why, size_t whylen);
int brt_elf_kconfig_at(const struct brt_elf_ctx *ctx, const char *name, uint32_t *off);
/* Where variable i of the .kconfig DATASEC t lies in the .kconfig map bpfrt lays out
 * (maps_sec.c), *size its bytes; the whole size for i == vlen; -1 for a sizeless one. */
int64_t brt_elf_kconfig_off(const struct brt_btf *btf, const struct btf_type *t, uint32_t i,
			    uint32_t *size);
/* The object's BTF for the kernel with libbpf's extern rewrites (btf_externs.c). */
int brt_elf_btf_externs(struct brt_elf_ctx *ctx);
/* strcmp(a, b) == 0 with the first two bytes compared inline: the open tests every
 * section's name and every map field's against lists of names, which mostly differ
 * there, and a strcmp call per pair was a sixth of the open of tetragon's objects. */
static inline int brt_elf_name_is(const char *a, const char *b)
{
	return a[0] == b[0] && (!a[0] || (a[1] == b[1] && (!a[1] || !strcmp(a + 2, b + 2))));
}
/* brt_btf_find(btf, name, BTF_KIND_DATASEC) of the object's BTF through the list of its
 * DATASECs (an object has a handful among thousands of types, and the open looked up
 * one per data section, .maps, .kconfig and .ksyms with a walk of every type each). */
int brt_elf_datasec(const struct brt_elf_ctx *ctx, const char *name);
/* Section sec's symbols with a value up to max_value, by (name, symbol index), into *by
 * (resized; *n of them): 0 or -ENOMEM.  brt_elf_sym_named(): the first of them (in
 * symbol order) named name, or NULL; a binary search, where a scan per name was
 * quadratic in objects of many maps or variables (open.c). */
int brt_elf_syms_by_name(const struct brt_elf_ctx *ctx, uint32_t sec, uint64_t max_value,
			 uint32_t **by, size_t *n);
const struct brt_elf_sym *brt_elf_sym_named(const struct brt_elf_ctx *ctx, const uint32_t *by,
					    size_t n, const char *name);
/* Index of the map defined at (sec, off) - any offset for global data - or -1. */
int brt_elf_map_at(const struct brt_elf_ctx *ctx, uint32_t sec, uint64_t off);
/* The .BTF.ext records of one kind (ext_index.c) by section name, then instruction
 * offset, ties in file order, built from the file's blocks (struct brt_btf_ext_block, in
 * file order): groups[g] (sorted by name) holds one section's count records, their record
 * numbers at positions 0..count-1 after its first use: order[pos], or the first block's
 * first + pos when order is NULL (a section listed once, in offset order, as clang writes
 * it). */
struct brt_ext_group {
	const char *name;
	uint32_t first_blk, nblk; /* its blocks: by_name[first_blk, + nblk), in file order */
	uint32_t count;           /* its records */
	int settled;              /* order decided (an array, or the block in place) */
	uint32_t *order;
};
struct brt_ext_index {
	const struct brt_btf_ext_block *blocks; /* the kind's, in file order */
	size_t nblocks;
	size_t off_off;           /* where a record holds its uint32_t instruction offset */
	uint32_t *by_name;        /* block numbers by (name, file order) */
	struct brt_ext_group *groups;
	size_t ngroups;
};
/* 0, or -ENOMEM / -E2BIG (ix is then empty).  Reads the blocks only. */
int brt_ext_index_build(struct brt_ext_index *ix, const struct brt_btf_ext_block *blocks,
			size_t nblocks, size_t off_off);
void brt_ext_index_free(struct brt_ext_index *ix);
/* The group of section name sec, or -1 when no record names it. */
int brt_ext_index_group(const struct brt_ext_index *ix, const char *sec);
/* Positions [*from, *to) of group g's records with offset in [lo, hi) (empty for g -1):
 * 0, or -ENOMEM ordering the group at its first use. */
int brt_ext_index_range(struct brt_ext_index *ix, int g, uint64_t lo, uint64_t hi,
			size_t *from, size_t *to);
/* The record number at position pos of group g (after a range of g). */
uint32_t brt_ext_index_rec(const struct brt_ext_index *ix, int g, size_t pos);
/* The block of group g holding record number rec. */
const struct brt_btf_ext_block *brt_ext_index_block(const struct brt_ext_index *ix, int g,
						    uint32_t rec);
/* Check every relocation of code and data against what it patches, once, at the open, so
 * linking can trust them (reloc.c). */
int brt_elf_check_relocs(struct brt_elf_ctx *ctx);
/* Before the first program is linked (again after it failed): what linking shares (the
 * .BTF.ext indexes); then 0, or 1 when the object must be linked as a whole, in program
 * order, its first failure everyone's: a ksym the kernel lacks failed the whole object
 * when the open linked every program, as it fails libbpf's whole load (libbpf resolves
 * externs for the object); or -errno (reloc.c). */
int brt_elf_link_prepare(struct brt_elf_ctx *ctx);
/* Link program prog: a copy of its code with the subprograms it calls appended, its
 * relocations applied, its .BTF.ext records placed.  0 or -errno with the message
 * (reloc.c; after brt_elf_link_prepare()).  A failed program is left partly filled. */
int brt_elf_link_prog(struct brt_elf_ctx *ctx, size_t prog);
/* Free ctx->link. */
void brt_elf_link_free(struct brt_elf_ctx *ctx);
/* Bytes [off, off + len) of the file (checked against its size by the caller) into
 * ctx->buf at off, from the caller's memory or the fd: 0 or -errno with the message
 * (ctx.c). */
int brt_elf_fetch(struct brt_elf_ctx *ctx, uint64_t off, size_t len);
/* Read every section not read yet (a pass that hashes the whole object, maps_sec.c):
 * 0 or -errno with the message (ctx.c). */
int brt_elf_fetch_all(struct brt_elf_ctx *ctx);
/* The message of a BTF reader's failure in section sec (msg starts "offset 0x..:" when it
 * knows one); returns ret (ctx.c). */
int brt_elf_btf_fail(struct brt_elf_ctx *ctx, int ret, uint32_t sec, const char *msg);
/* Keep a copy of s in the object; NULL on ENOMEM (ctx.c). */
const char *brt_elf_keep(struct brt_elf_obj *obj, const char *s);

#endif
