/* btf.h - the btf/ folder's interface: a checked, read-only view of a .BTF type section
 * (btf.c) and its .BTF.ext func_info/line_info records, used by the ELF reader, by
 * BPF_BTF_LOAD (api/btf_load.c) and by the CLI.
 */
#ifndef BPFRT_SRC_BTF_BTF_H
#define BPFRT_SRC_BTF_BTF_H

#include <stddef.h>
#include <stdint.h>

#include <linux/btf.h>

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

#endif
