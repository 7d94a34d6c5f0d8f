/* open.c - reading a `clang -target bpf` relocatable object: sections, symbols and
 * relocations into the parser context (parse.h), then maps (maps_sec.c) and linking
 * (reloc.c).  The file is read directly as ELF64 little-endian (the only kind loaded):
 * libelf, used before, cost every process linking the library ~0.1 ms at start-up (it and
 * libz mapped and relocated: `bpfrt --version` 0.72 -> 0.6x ms task-clock), which a
 * `prog loadall` of a small object felt as ~5 %, for five reads of fixed-size records.
 *
 * Theory of operation.  The section headers are read, then the sections the loader uses
 * (not debug info, nor the relocations of debug info, .BTF and .BTF.ext: about half of a
 * big object's bytes) into a buffer at their file offsets; every section header, symbol
 * and relocation is checked against the file and section bounds before anything uses it,
 * so later stages index arrays without re-checking.  Executable sections are cut into
 * functions by their STT_FUNC symbols; those outside .text are programs, those in .text
 * are subprograms.  Maps are collected next, because relocations point at them by
 * (section, offset).  Linking then gives each program a private copy of its code with
 * every subprogram it calls (transitively) appended, call immediates rewritten relative to
 * the new layout, and each lddw that names a map rewritten to src_reg = BPF_PSEUDO_MAP_FD
 * or BPF_PSEUDO_MAP_VALUE with imm = map index.  brt_elf_open() links every program;
 * with BRT_ELF_LAZY (the object API's open) the parse is kept in the object and each
 * program linked at its first brt_elf_prog_link(), the parse freed with the last (libbpf's
 * open links nothing either: KubeArmor's system_monitor.o opened in 4.1 ms, 1.6 libbpf's).
 * Load (object/load.c) swaps indexes for fds - the loader, not the user, recognises map
 * references, as the 2014 "fixup array" debate asked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elf.h>

#include "elf/parse.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

/* The file being read: its ELF header's tables (ctx->buf holds its bytes). */
struct img {
	Elf64_Ehdr eh;
	size_t shnum, shstrndx; /* extended numbering resolved */
	const unsigned char *buf; /* ctx->buf */
};

/* Section header i (i < img->shnum, the table checked against the file). */
static Elf64_Shdr shdr(const struct img *img, size_t i)
{
	Elf64_Shdr sh;

	memcpy(&sh, img->buf + img->eh.e_shoff + i * sizeof(sh), sizeof(sh));
	return sh;
}

/* A string in a string-table section, or NULL when off is outside it or unterminated. */
static const char *sec_str(const struct brt_elf_sec *strtab, uint64_t off)
{
	if (!strtab->data || off >= strtab->size)
		return NULL;
	if (!memchr(strtab->data + off, 0, strtab->size - off))
		return NULL;
	return (const char *)strtab->data + off;
}

static int starts(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(s, prefix, n) && (s[n] == 0 || s[n] == '.');
}

static enum brt_elf_sec_kind classify(const struct brt_elf_sec *s)
{
	if (s->type == SHT_SYMTAB)
		return BRT_SEC_SYMTAB;
	if (s->type == SHT_REL)
		return BRT_SEC_REL;
	if (s->type == SHT_PROGBITS && (s->flags & SHF_EXECINSTR))
		return s->size ? BRT_SEC_EXEC : BRT_SEC_OTHER;
	if (brt_elf_name_is(s->name, "license"))
		return BRT_SEC_LICENSE;
	if (brt_elf_name_is(s->name, "version"))
		return BRT_SEC_VERSION;
	/* "maps/<name>": a section of legacy definitions as cilium/ebpf and aya read them
	 * (any "maps" prefix), which libbpf 1.x refuses; their bytes past map_flags are read
	 * by size as for "maps" (maps_sec.c) */
	if (brt_elf_name_is(s->name, "maps") || (!strncmp(s->name, "maps/", 5) && s->name[5]))
		return BRT_SEC_MAPS;
	if (brt_elf_name_is(s->name, ".maps"))
		return BRT_SEC_BTF_MAPS;
	if (brt_elf_name_is(s->name, ".BTF"))
		return BRT_SEC_BTF;
	if (brt_elf_name_is(s->name, ".BTF.ext"))
		return BRT_SEC_BTF_EXT;
	if (brt_elf_name_is(s->name, ".struct_ops") || brt_elf_name_is(s->name, ".struct_ops.link"))
		return BRT_SEC_STRUCT_OPS;
	if ((s->flags & SHF_ALLOC) && s->size &&
	    (starts(s->name, ".data") || starts(s->name, ".rodata") || starts(s->name, ".bss")))
		return BRT_SEC_DATA;
	return BRT_SEC_OTHER;
}

static int check_header(struct brt_elf_ctx *ctx, struct img *img)
{
	const unsigned char *ident = ctx->buf;
	size_t size = ctx->size;
	Elf64_Ehdr *eh = &img->eh;
	int ret;

	if ((ret = brt_elf_fetch(ctx, 0, size < sizeof(*eh) ? size : sizeof(*eh))))
		return ret;
	if (size < EI_NIDENT || memcmp(ident, ELFMAG, SELFMAG))
		return brt_elf_fail(ctx, -EINVAL, 0, 0, "not an ELF file (%zu bytes)", size);
	if (ident[EI_CLASS] != ELFCLASS64)
		return brt_elf_fail(ctx, -EINVAL, 0, 0, "ELF class %d, eBPF objects are ELFCLASS64",
				    ident[EI_CLASS]);
	if (size < sizeof(*eh))
		return brt_elf_fail(ctx, -EINVAL, 0, 0, "truncated ELF header (%zu bytes)", size);
	if (ident[EI_DATA] != ELFDATA2LSB)
		return brt_elf_fail(ctx, -EINVAL, 0, 0,
				    "big-endian object (EI_DATA %d); this host runs little-endian "
				    "eBPF (build with -target bpfel or bpf)",
				    ident[EI_DATA]);
	memcpy(eh, ctx->buf, sizeof(*eh));
	/* EM_NONE: LLVM before 3.9 wrote no machine; libbpf and tc load such objects */
	if (eh->e_machine != EM_BPF && eh->e_machine != EM_NONE)
		return brt_elf_fail(ctx, -EINVAL, 0, 0, "e_machine %u is not EM_BPF (%u)",
				    eh->e_machine, EM_BPF);
	if (eh->e_type != ET_REL)
		return brt_elf_fail(ctx, -EINVAL, 0, 0,
				    "e_type %u: only relocatable objects (ET_REL) are loaded", eh->e_type);
	if (eh->e_shoff && eh->e_shentsize != sizeof(Elf64_Shdr))
		return brt_elf_fail(ctx, -EINVAL, 0, 0,
				    "section header entry size %u, Elf64_Shdr is %zu",
				    eh->e_shentsize, sizeof(Elf64_Shdr));
	img->shnum = eh->e_shoff ? eh->e_shnum : 0;
	img->shstrndx = eh->e_shstrndx;
	/* Extended numbering (gABI): counts too large for the header are in section 0. */
	if (eh->e_shoff && (!eh->e_shnum || eh->e_shstrndx == SHN_XINDEX)) {
		Elf64_Shdr s0;

		if (eh->e_shoff > size || size - eh->e_shoff < sizeof(s0))
			return brt_elf_fail(ctx, -EINVAL, 0, 0,
					    "section header table at 0x%llx runs past the end of "
					    "the %zu-byte file",
					    (unsigned long long)eh->e_shoff, size);
		if ((ret = brt_elf_fetch(ctx, eh->e_shoff, sizeof(s0))))
			return ret;
		memcpy(&s0, ctx->buf + eh->e_shoff, sizeof(s0));
		if (!eh->e_shnum)
			img->shnum = s0.sh_size;
		if (eh->e_shstrndx == SHN_XINDEX)
			img->shstrndx = s0.sh_link;
	}
	/* say what is wrong rather than "0 sections" */
	if (eh->e_shoff > size || (size - eh->e_shoff) / sizeof(Elf64_Shdr) < img->shnum)
		return brt_elf_fail(ctx, -EINVAL, 0, 0,
				    "section header table at 0x%llx (%zu entries) runs past the end "
				    "of the %zu-byte file",
				    (unsigned long long)eh->e_shoff, img->shnum, size);
	return brt_elf_fetch(ctx, eh->e_shoff, img->shnum * sizeof(Elf64_Shdr));
}

/* Relocations of what the loader never applies them to - debug info, .BTF and .BTF.ext,
 * whose offsets it reads itself - are skipped (not even read), as libbpf skips every
 * relocation section but those of code, .maps and .struct_ops: Tracee's object has 217k
 * of them for .BTF.ext alone, a quarter of its open. */
static int rels_skipped(const struct brt_elf_sec *target)
{
	return !(target->flags & (SHF_ALLOC | SHF_EXECINSTR)) &&
	       (target->kind == BRT_SEC_OTHER || target->kind == BRT_SEC_BTF ||
		target->kind == BRT_SEC_BTF_EXT);
}

/* Section i's contents checked against the file (the name may still be unknown). */
static int check_data(struct brt_elf_ctx *ctx, size_t i)
{
	struct brt_elf_sec *s = &ctx->secs[i];

	if (s->type == SHT_NOBITS || !s->size)
		return 0;
	if (s->file_off > ctx->size || ctx->size - s->file_off < s->size)
		return brt_elf_fail(ctx, -EINVAL, 0, 0,
				    "section %zu '%s': contents [0x%llx, +0x%zx) run past the end "
				    "of the %zu-byte file",
				    i, s->name ? s->name : "?", (unsigned long long)s->file_off,
				    s->size, ctx->size);
	return 0;
}

/* Whether a pass reads section i's contents: not debug info nor the relocations of what
 * the loader never relocates (read_relocs() skips them). */
static int wanted(const struct brt_elf_ctx *ctx, size_t i)
{
	const struct brt_elf_sec *s = &ctx->secs[i];

	if (s->type == SHT_NOBITS || !s->size)
		return 0;
	if (s->kind == BRT_SEC_REL) {
		uint32_t t = s->rel_sec;

		return t && t < ctx->nsecs && !rels_skipped(&ctx->secs[t]);
	}
	return s->kind != BRT_SEC_OTHER || s->type == SHT_STRTAB;
}

/* Read the sections wanted (and those in gaps of less than a page between them: one
 * pread is cheaper than two), in file order; the others keep data NULL. */
static int read_wanted(struct brt_elf_ctx *ctx)
{
	size_t n = 0, *order = malloc(ctx->nsecs * sizeof(*order));
	int ret = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 1; i < ctx->nsecs; i++)
		if (!ctx->secs[i].data && wanted(ctx, i))
			order[n++] = i;
	/* clang writes sections in index order at increasing offsets: sort only if not */
	for (size_t k = 1; k < n; k++)
		if (ctx->secs[order[k - 1]].file_off > ctx->secs[order[k]].file_off) {
			for (size_t a = 1; a < n; a++) /* insertion sort: n is small */
				for (size_t b = a; b && ctx->secs[order[b - 1]].file_off >
							  ctx->secs[order[b]].file_off; b--) {
					size_t t = order[b];

					order[b] = order[b - 1];
					order[b - 1] = t;
				}
			break;
		}
	for (size_t k = 0; k < n && !ret;) {
		uint64_t from = ctx->secs[order[k]].file_off;
		uint64_t to = from + ctx->secs[order[k]].size;
		size_t e = k + 1;

		for (; e < n && ctx->secs[order[e]].file_off <= to + 4096; e++)
			if (ctx->secs[order[e]].file_off + ctx->secs[order[e]].size > to)
				to = ctx->secs[order[e]].file_off + ctx->secs[order[e]].size;
		ret = brt_elf_fetch(ctx, from, (size_t)(to - from));
		for (; k < e; k++)
			ctx->secs[order[k]].data = ctx->buf + ctx->secs[order[k]].file_off;
	}
	free(order);
	return ret;
}

static int read_sections(struct brt_elf_ctx *ctx, const struct img *img)
{
	size_t shnum = img->shnum, shstrndx = img->shstrndx;
	uint32_t *name_off;
	int ret = 0;

	if (shnum < 2 || shstrndx >= shnum)
		return brt_elf_fail(ctx, -EINVAL, 0, 0,
				    "%zu sections, section-name table index %zu", shnum, shstrndx);
	ctx->secs = calloc(shnum, sizeof(*ctx->secs));
	name_off = calloc(shnum, sizeof(*name_off));
	if (!ctx->secs || !name_off) {
		free(name_off);
		return -ENOMEM;
	}
	ctx->nsecs = shnum;
	for (size_t i = 1; i < shnum && !ret; i++) {
		struct brt_elf_sec *s = &ctx->secs[i];
		Elf64_Shdr sh = shdr(img, i);

		s->type = sh.sh_type;
		s->flags = sh.sh_flags;
		s->size = sh.sh_size;
		s->file_off = sh.sh_offset;
		s->rel_sec = (uint32_t)sh.sh_info; /* for REL sections: the target, fixed later */
		name_off[i] = sh.sh_name;
	}
	/* Names first, so later messages can use them. */
	if (!ret)
		ret = check_data(ctx, shstrndx);
	if (!ret && ctx->secs[shstrndx].type != SHT_NOBITS && ctx->secs[shstrndx].size) {
		struct brt_elf_sec *ss = &ctx->secs[shstrndx];

		ret = brt_elf_fetch(ctx, ss->file_off, ss->size);
		ss->data = ctx->buf + ss->file_off;
	}
	for (size_t i = 1; i < shnum && !ret; i++) {
		ctx->secs[i].name = sec_str(&ctx->secs[shstrndx], name_off[i]);
		if (!ctx->secs[i].name)
			ret = brt_elf_fail(ctx, -EINVAL, 0, 0,
					   "section %zu: name offset 0x%x outside the section-name "
					   "table",
					   i, name_off[i]);
	}
	for (size_t i = 1; i < shnum && !ret; i++) {
		ret = check_data(ctx, i);
		ctx->secs[i].kind = classify(&ctx->secs[i]);
		if (!ret && ctx->secs[i].type == SHT_RELA)
			ret = brt_elf_fail(ctx, -ENOTSUP, (uint32_t)i, 0,
					   "RELA relocations are not used by eBPF and not supported");
	}
	free(name_off);
	return ret ? ret : read_wanted(ctx);
}

static int read_symbols(struct brt_elf_ctx *ctx, const struct img *img)
{
	size_t symtab = 0;
	Elf64_Shdr sh;
	const unsigned char *d;

	for (size_t i = 1; i < ctx->nsecs; i++) {
		if (ctx->secs[i].kind != BRT_SEC_SYMTAB)
			continue;
		if (symtab)
			return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, 0,
					    "second symbol table (first is section %zu)", symtab);
		symtab = i;
	}
	if (!symtab)
		return brt_elf_fail(ctx, -EINVAL, 0, 0, "no symbol table (.symtab)");
	sh = shdr(img, symtab);
	if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_size % sizeof(Elf64_Sym))
		return brt_elf_fail(ctx, -EINVAL, (uint32_t)symtab, 0,
				    "entry size %llu, size %llu: not a table of Elf64_Sym",
				    (unsigned long long)sh.sh_entsize, (unsigned long long)sh.sh_size);
	if (sh.sh_link == 0 || sh.sh_link >= ctx->nsecs || ctx->secs[sh.sh_link].type != SHT_STRTAB)
		return brt_elf_fail(ctx, -EINVAL, (uint32_t)symtab, 0,
				    "sh_link %u is not a string table", sh.sh_link);
	ctx->nsyms = sh.sh_size / sizeof(Elf64_Sym);
	ctx->syms = calloc(ctx->nsyms ? ctx->nsyms : 1, sizeof(*ctx->syms));
	if (!ctx->syms)
		return -ENOMEM;
	d = ctx->secs[symtab].data; /* check_data() checked it against the file */
	if (ctx->nsyms && !d)
		return brt_elf_fail(ctx, -EINVAL, (uint32_t)symtab, 0, "symbol table unreadable");
	for (size_t i = 0; i < ctx->nsyms; i++) {
		struct brt_elf_sym *s = &ctx->syms[i];
		Elf64_Sym sym;

		memcpy(&sym, d + i * sizeof(sym), sizeof(sym));
		s->name = sec_str(&ctx->secs[sh.sh_link], sym.st_name);
		if (!s->name)
			return brt_elf_fail(ctx, -EINVAL, (uint32_t)symtab, i * sizeof(Elf64_Sym),
					    "symbol %zu: name offset 0x%x outside string table %u", i,
					    sym.st_name, sh.sh_link);
		s->value = sym.st_value;
		s->size = sym.st_size;
		s->shndx = sym.st_shndx;
		s->type = ELF64_ST_TYPE(sym.st_info);
		s->bind = ELF64_ST_BIND(sym.st_info);
		s->vis = ELF64_ST_VISIBILITY(sym.st_other);
		if (s->shndx >= ctx->nsecs && s->shndx < SHN_LORESERVE)
			return brt_elf_fail(ctx, -EINVAL, (uint32_t)symtab, i * sizeof(Elf64_Sym),
					    "symbol %zu '%s' is in section %u, the file has %zu", i,
					    s->name, s->shndx, ctx->nsecs);
		/* Section symbols are nameless in the file; their section names them. */
		if (s->type == STT_SECTION && s->shndx && s->shndx < ctx->nsecs)
			s->name = ctx->secs[s->shndx].name;
	}
	ctx->obj->nsyms_seen = ctx->nsyms;
	return 0;
}

static int cmp_rel(const void *a, const void *b)
{
	const struct brt_elf_rel *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Each .rel section: target and symbols in range, every offset inside the target. */
static int read_relocs(struct brt_elf_ctx *ctx)
{
	for (size_t i = 1; i < ctx->nsecs; i++) {
		struct brt_elf_sec *rs = &ctx->secs[i], *ts;
		uint32_t target = rs->rel_sec;
		const unsigned char *d;
		size_t n;
		int sorted;

		if (rs->kind != BRT_SEC_REL)
			continue;
		if (target == 0 || target >= ctx->nsecs)
			return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, 0,
					    "relocations for section %u, the file has %zu", target,
					    ctx->nsecs);
		ts = &ctx->secs[target];
		if (rels_skipped(ts))
			continue;
		if (ts->rels)
			return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, 0,
					    "second relocation section for section %u '%s'", target,
					    ts->name);
		n = rs->size / sizeof(Elf64_Rel);
		if (rs->size % sizeof(Elf64_Rel))
			return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, 0,
					    "size %zu is not a multiple of %zu", rs->size,
					    sizeof(Elf64_Rel));
		if (!n)
			continue;
		ts->rels = calloc(n, sizeof(*ts->rels));
		if (!ts->rels)
			return -ENOMEM;
		ts->nrels = n;
		ts->rel_sec = (uint32_t)i;
		d = rs->data; /* check_data() checked it against the file */
		sorted = 1;
		for (size_t j = 0; j < n; j++) {
			uint64_t at = j * sizeof(Elf64_Rel);
			Elf64_Rel rel;
			uint32_t sym;

			if (!d)
				return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, at,
						    "relocation %zu unreadable", j);
			memcpy(&rel, d + at, sizeof(rel));
			sym = (uint32_t)ELF64_R_SYM(rel.r_info);
			if (sym >= ctx->nsyms)
				return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, at,
						    "relocation %zu refers to symbol %u, symtab has %zu",
						    j, sym, ctx->nsyms);
			if (rel.r_offset >= ts->size || ts->size - rel.r_offset < 4)
				return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, at,
						    "relocation %zu at offset 0x%llx is outside "
						    "section %u '%s' (%zu bytes)",
						    j, (unsigned long long)rel.r_offset, target, ts->name,
						    ts->size);
			ts->rels[j] = (struct brt_elf_rel){ .off = rel.r_offset, .sym = sym,
							    .type = (uint32_t)ELF64_R_TYPE(rel.r_info),
							    .idx = (uint32_t)j };
			sorted &= !j || ts->rels[j - 1].off <= rel.r_offset;
		}
		/* clang writes them in offset order (Tracee's object: 478k, most of them for
		 * debug sections, where sorting them again took a fifth of the open) */
		if (!sorted)
			qsort(ts->rels, n, sizeof(*ts->rels), cmp_rel);
	}
	for (size_t i = 1; i < ctx->nsecs; i++)
		if (!ctx->secs[i].rels)
			ctx->secs[i].rel_sec = 0;
	return 0;
}

static int read_license_version(struct brt_elf_ctx *ctx)
{
	for (size_t i = 1; i < ctx->nsecs; i++) {
		const struct brt_elf_sec *s = &ctx->secs[i];

		if (s->kind == BRT_SEC_LICENSE) {
			size_t n = s->size < sizeof(ctx->obj->license) - 1 ?
					   s->size : sizeof(ctx->obj->license) - 1;

			if (s->data)
				memcpy(ctx->obj->license, s->data, n);
			ctx->obj->license[n] = 0;
		} else if (s->kind == BRT_SEC_VERSION) {
			if (s->size != 4 || !s->data)
				return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, 0,
						    "size %zu, a kernel version is 4 bytes", s->size);
			memcpy(&ctx->obj->kern_version, s->data, 4);
		}
	}
	return 0;
}

static int read_btf(struct brt_elf_ctx *ctx)
{
	struct brt_elf_obj *obj = ctx->obj;
	char msg[256] = "";
	int have_ext = 0;
	int ret;

	for (size_t i = 1; i < ctx->nsecs; i++) {
		const struct brt_elf_sec *s = &ctx->secs[i];

		if (s->kind != BRT_SEC_BTF)
			continue;
		if (obj->btf) /* the first one would leak, and which one counts is unclear */
			return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, 0, "second .BTF section");
		ret = brt_btf_parse(s->data, s->data ? s->size : 0, &obj->btf, msg, sizeof(msg));
		if (ret)
			return brt_elf_btf_fail(ctx, ret, (uint32_t)i, msg);
	}
	for (size_t i = 1; i < ctx->nsecs; i++) {
		const struct brt_elf_sec *s = &ctx->secs[i];

		if (s->kind != BRT_SEC_BTF_EXT)
			continue;
		if (!obj->btf)
			return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, 0, ".BTF.ext without .BTF");
		if (have_ext) /* the same rule as .BTF: the first one's records would leak */
			return brt_elf_fail(ctx, -EINVAL, (uint32_t)i, 0, "second .BTF.ext section");
		have_ext = 1;
		ctx->btf_ext_sec = (uint32_t)i;
		ret = brt_btf_ext_parse(obj->btf, s->data, s->data ? s->size : 0, &obj->ext, msg,
					sizeof(msg));
		if (ret)
			return brt_elf_btf_fail(ctx, ret, (uint32_t)i, msg);
	}
	return 0;
}

/* A subprogram (a function of .text) that is global but hidden from other objects
 * (__hidden: STV_HIDDEN or STV_INTERNAL) goes to the kernel with static linkage in its
 * BTF FUNC, as libbpf sends it: the verifier then walks it with its callers' arguments
 * instead of verifying it alone from its prototype (libbpf's usdt.bpf.h relies on it). */
static void hidden_funcs_static(struct brt_elf_ctx *ctx)
{
	struct brt_btf *btf = ctx->obj->btf;

	for (size_t i = 0; i < ctx->nsyms; i++) {
		const struct brt_elf_sym *s = &ctx->syms[i];

		if (s->type != STT_FUNC || s->bind == STB_LOCAL ||
		    (s->vis != STV_HIDDEN && s->vis != STV_INTERNAL) || !s->shndx ||
		    s->shndx >= ctx->nsecs || strcmp(ctx->secs[s->shndx].name, ".text"))
			continue;
		for (uint32_t id = 1; id < btf->ntypes; id++) {
			const struct btf_type *t = btf->types[id];
			size_t at = (size_t)((const uint8_t *)(const void *)t - btf->type_data);
			struct btf_type *w = (struct btf_type *)(void *)(btf->kernel_types + at);

			if (BTF_INFO_KIND(t->info) != BTF_KIND_FUNC ||
			    BTF_INFO_VLEN(w->info) != BTF_FUNC_GLOBAL ||
			    strcmp(btf->strs + t->name_off, s->name))
				continue;
			w->info = BTF_INFO_KIND(t->info) << 24 | BTF_FUNC_STATIC;
			break;
		}
	}
}

/* clang leaves DATASEC sizes and variable offsets for the loader to fill from the ELF
 * symbol table (the kernel rejects them as they are); fix them in our copy of .BTF. */
static int fixup_datasecs(struct brt_elf_ctx *ctx)
{
	struct brt_btf *btf = ctx->obj->btf;
	uint32_t *by_name = NULL;
	size_t nby = 0, ndatasec_cap = 0;
	int ret = 0;

	if (!btf)
		return 0;
	/* Into a copy: the parsed types stay as the file has them (bpftool shows those). */
	btf->kernel_types = malloc(btf->type_len ? btf->type_len : 1);
	if (!btf->kernel_types)
		return -ENOMEM;
	memcpy(btf->kernel_types, btf->type_data, btf->type_len);
	for (uint32_t id = 1; id < btf->ntypes; id++) {
		const struct btf_type *t = btf->types[id];
		size_t at = (size_t)((const uint8_t *)(const void *)t - btf->type_data);
		struct btf_type *w = (struct btf_type *)(void *)(btf->kernel_types + at);
		struct btf_var_secinfo *vs = (struct btf_var_secinfo *)(void *)(w + 1);
		const char *name = btf->strs + t->name_off;
		size_t sec = 0;

		if (BTF_INFO_KIND(t->info) != BTF_KIND_DATASEC)
			continue;
		if (ctx->ndatasecs == ndatasec_cap) {
			uint32_t *n = realloc(ctx->datasecs, (ndatasec_cap * 2 + 8) *
							      sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			ctx->datasecs = n;
			ndatasec_cap = ndatasec_cap * 2 + 8;
		}
		ctx->datasecs[ctx->ndatasecs++] = id;
		for (size_t i = 1; i < ctx->nsecs && !sec; i++)
			if (!strcmp(ctx->secs[i].name, name))
				sec = i;
		if (!sec || ctx->secs[sec].size > UINT32_MAX)
			continue;
		w->size = (uint32_t)ctx->secs[sec].size;
		if (!BTF_INFO_VLEN(t->info))
			continue;
		/* the section's symbols by name (a scan of all symbols per variable was most
		 * of Tracee's open once linking was gone: ~200 maps x ~21k symbols) */
		if ((ret = brt_elf_syms_by_name(ctx, (uint32_t)sec, UINT32_MAX, &by_name, &nby)))
			break;
		for (uint32_t v = 0; v < BTF_INFO_VLEN(t->info); v++) {
			const struct brt_elf_sym *sym = brt_elf_sym_named(ctx, by_name, nby,
									 brt_btf_name(btf, vs[v].type));

			if (!sym)
				continue;
			vs[v].offset = (uint32_t)sym->value;
			if (sym->size && sym->size <= UINT32_MAX)
				vs[v].size = (uint32_t)sym->size;
		}
	}
	free(by_name);
	if (ret)
		return ret;
	ctx->datasecs_listed = 1;
	hidden_funcs_static(ctx);
	return brt_elf_btf_externs(ctx);
}

static int cmp_func(const void *a, const void *b)
{
	const struct brt_elf_func *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int add_func(struct brt_elf_ctx *ctx, uint32_t sec, uint64_t off, uint64_t size,
		    const char *name, size_t *cap)
{
	const struct brt_elf_sec *s = &ctx->secs[sec];

	if (off % 8 || size % 8 || !size || off > s->size || s->size - off < size)
		return brt_elf_fail(ctx, -EINVAL, sec, off,
				    "function '%s' [0x%llx, +0x%llx) is misaligned or outside the "
				    "%zu-byte section",
				    name, (unsigned long long)off, (unsigned long long)size, s->size);
	if (ctx->nfuncs == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		struct brt_elf_func *n = realloc(ctx->funcs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ctx->funcs = n;
		*cap = ncap;
	}
	ctx->funcs[ctx->nfuncs++] = (struct brt_elf_func){
		.name = name, .sec = sec, .start = (uint32_t)(off / 8), .cnt = (uint32_t)(size / 8),
		.prog = -1,
	};
	return 0;
}

/* Cut executable sections into functions; those outside .text become programs. */
static int collect_funcs(struct brt_elf_ctx *ctx)
{
	struct brt_elf_obj *obj = ctx->obj;
	size_t cap = 0, nprogs = 0;
	int ret;
	/* the function symbols of each executable section, in symbol order (a counting
	 * sort: one pass over the symbols, where a pass per section was quadratic) */
	uint32_t *first = calloc(ctx->nsecs + 1, sizeof(*first)), *by_sec = NULL;
	size_t nsym_funcs = 0;

	if (!first)
		return -ENOMEM;
	for (size_t j = 0; j < ctx->nsyms; j++) {
		const struct brt_elf_sym *s = &ctx->syms[j];

		if (s->type == STT_FUNC && s->shndx && s->shndx < ctx->nsecs &&
		    ctx->secs[s->shndx].kind == BRT_SEC_EXEC) {
			first[s->shndx + 1]++;
			nsym_funcs++;
		}
	}
	by_sec = malloc((nsym_funcs + 1) * sizeof(*by_sec));
	if (!by_sec) {
		free(first);
		return -ENOMEM;
	}
	for (size_t i = 1; i <= ctx->nsecs; i++)
		first[i] += first[i - 1];
	for (size_t j = 0; j < ctx->nsyms; j++) {
		const struct brt_elf_sym *s = &ctx->syms[j];

		if (s->type == STT_FUNC && s->shndx && s->shndx < ctx->nsecs &&
		    ctx->secs[s->shndx].kind == BRT_SEC_EXEC)
			by_sec[first[s->shndx]++] = (uint32_t)j;
	}
	ret = 0;
	/* first[i] is now where section i's symbols end (and i + 1's start) */
	for (uint32_t i = 1; i < ctx->nsecs && !ret; i++) {
		size_t from = first[i - 1], to = first[i];

		if (ctx->secs[i].kind != BRT_SEC_EXEC)
			continue;
		if (ctx->secs[i].size % 8) {
			ret = brt_elf_fail(ctx, -EINVAL, i, 0,
					   "size %zu is not a whole number of instructions",
					   ctx->secs[i].size);
			break;
		}
		for (size_t k = from; k < to && !ret; k++) {
			const struct brt_elf_sym *s = &ctx->syms[by_sec[k]];

			ret = add_func(ctx, i, s->value, s->size, s->name, &cap);
		}
		/* Hand-written code may have no function symbols: the section is one program. */
		if (!ret && from == to)
			ret = add_func(ctx, i, 0, ctx->secs[i].size, ctx->secs[i].name, &cap);
	}
	free(first);
	free(by_sec);
	if (ret)
		return ret;
	if (ctx->nfuncs)
		qsort(ctx->funcs, ctx->nfuncs, sizeof(*ctx->funcs), cmp_func);
	for (size_t i = 0; i < ctx->nfuncs; i++) {
		const struct brt_elf_func *f = &ctx->funcs[i];

		if (i && f[-1].sec == f->sec && f[-1].start + f[-1].cnt > f->start)
			return brt_elf_fail(ctx, -EINVAL, f->sec, (uint64_t)f->start * 8,
					    "function '%s' overlaps '%s'", f->name, f[-1].name);
		if (strcmp(ctx->secs[f->sec].name, ".text"))
			nprogs++;
	}
	obj->progs = calloc(nprogs ? nprogs : 1, sizeof(*obj->progs));
	ctx->prog_func = calloc(nprogs ? nprogs : 1, sizeof(*ctx->prog_func));
	if (!obj->progs || !ctx->prog_func)
		return -ENOMEM;
	for (size_t i = 0; i < ctx->nfuncs; i++) {
		struct brt_elf_func *f = &ctx->funcs[i];
		struct brt_elf_prog *p;

		if (!strcmp(ctx->secs[f->sec].name, ".text"))
			continue;
		p = &obj->progs[obj->nprogs];
		ctx->prog_func[obj->nprogs] = (uint32_t)i;
		f->prog = (int)obj->nprogs++;
		p->name = brt_elf_keep(obj, f->name);
		p->sec_name = brt_elf_keep(obj, ctx->secs[f->sec].name);
		if (!p->name || !p->sec_name)
			return -ENOMEM;
		p->sec_idx = f->sec;
		p->sec_off = f->start * 8;
		p->no_autoload = p->sec_name[0] == '?';
		if (brt_elf_sec_type(p->sec_name, &p->type, &p->expected_attach_type,
				     &p->prog_flags)) {
			p->type = BPF_PROG_TYPE_UNSPEC;
			p->expected_attach_type = 0;
			p->prog_flags = 0;
		}
	}
	return 0;
}

static void free_ctx(struct brt_elf_ctx *ctx)
{
	brt_elf_link_free(ctx);
	if (ctx->secs)
		for (size_t i = 0; i < ctx->nsecs; i++)
			free(ctx->secs[i].rels);
	free(ctx->secs);
	free(ctx->syms);
	free(ctx->funcs);
	free(ctx->prog_func);
	free(ctx->datasecs);
	free(ctx->buf);
	free(ctx);
}

static int parse(struct brt_elf_ctx *ctx)
{
	struct img img = { .buf = ctx->buf };
	int ret;

	if ((ret = check_header(ctx, &img)) || (ret = read_sections(ctx, &img)) ||
	    (ret = read_symbols(ctx, &img)) || (ret = read_relocs(ctx)) ||
	    (ret = read_license_version(ctx)) || (ret = read_btf(ctx)) ||
	    (ret = fixup_datasecs(ctx)) ||
	    (ret = collect_funcs(ctx)) || (ret = brt_elf_collect_maps(ctx)) ||
	    (ret = brt_elf_collect_slots(ctx)) || (ret = brt_elf_tc_sections(ctx)) ||
	    (ret = brt_elf_check_relocs(ctx)))
		return ret;
	return 0;
}

/* a file of up to this many bytes is read whole at once (open_obj()) */
#define ELF_READ_WHOLE (64u << 10)

/* The open of a file of size bytes, from src_mem or src_fd. */
static int open_obj(const unsigned char *src_mem, int src_fd, size_t size, const char *name,
		    unsigned flags, struct brt_elf_obj **out, char *err, size_t errlen)
{
	struct brt_elf_ctx *ctx = calloc(1, sizeof(*ctx));
	struct brt_elf_obj *obj = calloc(1, sizeof(*obj));
	int ret;

	*out = NULL;
	err[0] = 0;
	name = name ? name : "<memory>";
	if (!ctx || !obj) {
		struct brt_elf_ctx c = { .err = err, .errlen = errlen, .name = name };

		free(ctx);
		free(obj);
		return brt_elf_fail(&c, -ENOMEM, 0, 0, "out of memory");
	}
	*ctx = (struct brt_elf_ctx){ .obj = obj, .err = err, .errlen = errlen, .name = name,
				     .size = size, .src_mem = src_mem, .src_fd = src_fd };
	obj->name = brt_elf_keep(obj, name);
	/* as large as the file, written only where sections are read: the pages of what is
	 * not read are never touched */
	ctx->buf = malloc(size ? size : 1);
	ret = obj->name && ctx->buf ? 0 : -ENOMEM;
	/* a small file (most objects of many tiny programs: syncsnoop's is 17 KB) whole, in
	 * one pread, where its sections would take four (header, section headers, their
	 * names, the sections): then parsed from that copy */
	if (!ret && src_fd >= 0 && size && size <= ELF_READ_WHOLE) {
		ret = brt_elf_fetch(ctx, 0, size);
		ctx->src_mem = ctx->buf;
	}
	if (!ret)
		ret = parse(ctx);
	ctx->src_mem = NULL; /* the caller's: not kept */
	ctx->src_fd = -1;
	if (!ret) {
		ctx->name = obj->name; /* the caller's name may go */
		obj->link = ctx;
		obj->unlinked = obj->nprogs;
		if (!obj->unlinked) {
			free_ctx(ctx);
			obj->link = NULL;
		}
		for (size_t i = 0; !(flags & BRT_ELF_LAZY) && i < obj->nprogs && !ret; i++)
			ret = brt_elf_prog_link(obj, i, err, errlen);
		if (!ret) {
			*out = obj;
			return 0;
		}
		brt_elf_free(obj);
		return ret;
	}
	if (ret == -ENOMEM)
		brt_elf_fail(ctx, ret, 0, 0, "out of memory");
	free_ctx(ctx);
	brt_elf_free(obj);
	return ret;
}

/* Program prog's linked parts freed (a failed link), its state ret. */
static void prog_unlinked(struct brt_elf_prog *p, int ret)
{
	free(p->insns);
	free(p->relocs);
	free(p->lines);
	free(p->func_info);
	free(p->cores);
	p->insns = NULL, p->relocs = NULL, p->lines = NULL;
	p->func_info = NULL, p->cores = NULL;
	p->insn_cnt = p->main_cnt = p->nrelocs = p->nlines = p->nfunc_info = 0;
	p->ncores = 0;
	p->link_state = ret;
}

/* Link program prog (not linked yet): its state. */
static int link_one(struct brt_elf_obj *obj, size_t prog)
{
	struct brt_elf_prog *p = &obj->progs[prog];
	int ret = brt_elf_link_prog(obj->link, prog);

	if (ret == -ENOMEM)
		brt_elf_fail(obj->link, ret, 0, 0, "out of memory");
	if (ret)
		prog_unlinked(p, ret);
	else
		p->link_state = 1;
	obj->unlinked--;
	return ret;
}

int brt_elf_prog_link(struct brt_elf_obj *obj, size_t prog, char *err, size_t errlen)
{
	struct brt_elf_prog *p = &obj->progs[prog];
	struct brt_elf_ctx *ctx = obj->link;
	int ret;

	if (p->link_state)
		return p->link_state < 0 ? p->link_state : 0;
	err[0] = 0;
	ctx->err = err;
	ctx->errlen = errlen;
	ret = brt_elf_link_prepare(ctx);
	if (ret < 0) {
		if (ret == -ENOMEM)
			brt_elf_fail(ctx, ret, 0, 0, "out of memory");
		ctx->err = NULL;
		return ret;
	}
	if (!ret) {
		ret = link_one(obj, prog);
	} else {
		/* every program in order, the first failure the object's */
		ret = 0;
		for (size_t i = 0; i < obj->nprogs && !ret; i++)
			if (!obj->progs[i].link_state)
				ret = link_one(obj, i) ? obj->progs[i].link_state : 0;
		for (size_t i = 0; i < obj->nprogs && ret; i++)
			if (obj->progs[i].link_state >= 0) {
				obj->unlinked -= !obj->progs[i].link_state;
				prog_unlinked(&obj->progs[i], ret);
			}
	}
	ctx->err = NULL;
	/* the last program takes the parse (and the file's bytes) with it */
	if (!obj->unlinked) {
		free_ctx(ctx);
		obj->link = NULL;
	}
	return ret;
}

int brt_elf_open_mem(const void *buf, size_t size, const char *name, unsigned flags,
		     struct brt_elf_obj **out, char *err, size_t errlen)
{
	static const unsigned char none;

	return open_obj(size ? buf : &none, -1, size, name, flags, out, err, errlen);
}

int brt_elf_open(const void *buf, size_t size, const char *name, struct brt_elf_obj **out,
		 char *err, size_t errlen)
{
	return brt_elf_open_mem(buf, size, name, 0, out, err, errlen);
}

int brt_elf_open_fd(int fd, size_t size, const char *name, unsigned flags,
		    struct brt_elf_obj **out, char *err, size_t errlen)
{
	return open_obj(NULL, fd, size, name, flags, out, err, errlen);
}

static void free_map(struct brt_elf_map *m)
{
	free(m->data);
	free(m->slots);
	if (m->inner) {
		free_map(m->inner);
		free(m->inner);
	}
}

void brt_elf_free(struct brt_elf_obj *obj)
{
	if (!obj)
		return;
	if (obj->link)
		free_ctx(obj->link);
	for (size_t i = 0; i < obj->nprogs; i++) {
		free(obj->progs[i].insns);
		free(obj->progs[i].relocs);
		free(obj->progs[i].lines);
		free(obj->progs[i].func_info);
		free(obj->progs[i].cores);
	}
	free(obj->progs);
	for (size_t i = 0; i < obj->nmaps; i++)
		free_map(&obj->maps[i]);
	free(obj->maps);
	brt_btf_free(obj->btf);
	brt_btf_ext_free(&obj->ext);
	for (size_t i = 0; i < obj->nstrings; i++)
		free(obj->strings[i]);
	free(obj->strings);
	free(obj);
}

const struct brt_elf_line *brt_elf_prog_line(const struct brt_elf_prog *prog, size_t insn_idx)
{
	size_t lo = 0, hi = prog->nlines;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (prog->lines[mid].insn_idx < insn_idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < prog->nlines && prog->lines[lo].insn_idx == insn_idx ? &prog->lines[lo] : NULL;
}
