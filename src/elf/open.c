/* open.c - reading a `clang -target bpf` relocatable object: sections, symbols and
 * relocations into the parser context (parse.h), then maps (maps_sec.c) and linking
 * (reloc.c).  The file is read directly as ELF64 little-endian (the only kind loaded):
 * libelf, used before, cost every process linking the library ~0.1 ms at start-up (it and
 * libz mapped and relocated: `bpfrt --version` 0.72 -> 0.6x ms task-clock), which a
 * `prog loadall` of a small object felt as ~5 %, for five reads of fixed-size records.
 *
 * Theory of operation.  The object is copied, then every section header, symbol and
 * relocation is checked against the file and section bounds before anything uses it, so
 * later stages index arrays without re-checking.  Executable sections are cut into
 * functions by their STT_FUNC symbols; those outside .text are programs, those in .text are
 * subprograms.  Maps are collected next, because relocations point at them by (section,
 * offset).  Linking then gives each program a private copy of its code with every
 * subprogram it calls (transitively) appended, call immediates rewritten relative to the
 * new layout, and each lddw that names a map rewritten to src_reg = BPF_PSEUDO_MAP_FD or
 * BPF_PSEUDO_MAP_VALUE with imm = map index.  Load (object/load.c) swaps indexes for fds - the
 * loader, not the user, recognises map references, as the 2014 "fixup array" debate asked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>

#include "elf/parse.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

/* The file being read: its bytes (a private copy) and its ELF header's tables. */
struct img {
	unsigned char *buf;
	size_t size;
	Elf64_Ehdr eh;
	size_t shnum, shstrndx; /* extended numbering resolved */
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
	if (!strcmp(s->name, "license"))
		return BRT_SEC_LICENSE;
	if (!strcmp(s->name, "version"))
		return BRT_SEC_VERSION;
	if (!strcmp(s->name, "maps"))
		return BRT_SEC_MAPS;
	if (!strcmp(s->name, ".maps"))
		return BRT_SEC_BTF_MAPS;
	if (!strcmp(s->name, ".BTF"))
		return BRT_SEC_BTF;
	if (!strcmp(s->name, ".BTF.ext"))
		return BRT_SEC_BTF_EXT;
	if (!strcmp(s->name, ".struct_ops") || !strcmp(s->name, ".struct_ops.link"))
		return BRT_SEC_STRUCT_OPS;
	if ((s->flags & SHF_ALLOC) && s->size &&
	    (starts(s->name, ".data") || starts(s->name, ".rodata") || starts(s->name, ".bss")))
		return BRT_SEC_DATA;
	return BRT_SEC_OTHER;
}

static int check_header(struct brt_elf_ctx *ctx, struct img *img)
{
	const unsigned char *ident = img->buf;
	size_t size = img->size;
	Elf64_Ehdr *eh = &img->eh;

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
	memcpy(eh, img->buf, sizeof(*eh));
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
		memcpy(&s0, img->buf + eh->e_shoff, sizeof(s0));
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
	return 0;
}

/* Contents of section i, checked against the file; the name may still be unknown. */
static int read_data(struct brt_elf_ctx *ctx, const struct img *img, size_t i)
{
	struct brt_elf_sec *s = &ctx->secs[i];

	if (s->type == SHT_NOBITS || !s->size || s->data)
		return 0;
	if (s->file_off > img->size || img->size - s->file_off < s->size)
		return brt_elf_fail(ctx, -EINVAL, 0, 0,
				    "section %zu '%s': contents [0x%llx, +0x%zx) run past the end "
				    "of the %zu-byte file",
				    i, s->name ? s->name : "?", (unsigned long long)s->file_off,
				    s->size, img->size);
	s->data = img->buf + s->file_off;
	return 0;
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
		ret = read_data(ctx, img, shstrndx);
	for (size_t i = 1; i < shnum && !ret; i++) {
		ctx->secs[i].name = sec_str(&ctx->secs[shstrndx], name_off[i]);
		if (!ctx->secs[i].name)
			ret = brt_elf_fail(ctx, -EINVAL, 0, 0,
					   "section %zu: name offset 0x%x outside the section-name "
					   "table",
					   i, name_off[i]);
	}
	for (size_t i = 1; i < shnum && !ret; i++) {
		ret = read_data(ctx, img, i);
		ctx->secs[i].kind = classify(&ctx->secs[i]);
		if (!ret && ctx->secs[i].type == SHT_RELA)
			ret = brt_elf_fail(ctx, -ENOTSUP, (uint32_t)i, 0,
					   "RELA relocations are not used by eBPF and not supported");
	}
	free(name_off);
	return ret;
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
	d = ctx->secs[symtab].data; /* read_data() checked it against the file */
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
		/* Relocations of what the loader never applies them to - debug info, .BTF and
		 * .BTF.ext, whose offsets it reads itself - are skipped, as libbpf skips every
		 * relocation section but those of code, .maps and .struct_ops: Tracee's object
		 * has 217k of them for .BTF.ext alone, a quarter of its open */
		if (!(ts->flags & (SHF_ALLOC | SHF_EXECINSTR)) &&
		    (ts->kind == BRT_SEC_OTHER || ts->kind == BRT_SEC_BTF ||
		     ts->kind == BRT_SEC_BTF_EXT))
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
		d = rs->data; /* read_data() checked it against the file */
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

/* BTF messages start with "offset 0x..:" when they know one; keep the usual shape. */
static int btf_fail(struct brt_elf_ctx *ctx, int ret, uint32_t sec, const char *msg)
{
	if (ret == -ENOMEM || ctx->err[0])
		return ret;
	snprintf(ctx->err, ctx->errlen, "elf: %s: section %u '%s'%s%s", ctx->name, sec,
		 ctx->secs[sec].name, strncmp(msg, "offset ", 7) ? ": " : " ", msg);
	return ret;
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
			return btf_fail(ctx, ret, (uint32_t)i, msg);
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
		ret = brt_btf_ext_parse(obj->btf, s->data, s->data ? s->size : 0, &obj->ext, msg,
					sizeof(msg));
		if (ret)
			return btf_fail(ctx, ret, (uint32_t)i, msg);
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
		for (size_t i = 1; i < ctx->nsecs && !sec; i++)
			if (!strcmp(ctx->secs[i].name, name))
				sec = i;
		if (!sec || ctx->secs[sec].size > UINT32_MAX)
			continue;
		w->size = (uint32_t)ctx->secs[sec].size;
		for (uint32_t v = 0; v < BTF_INFO_VLEN(t->info); v++) {
			const char *var = brt_btf_name(btf, vs[v].type);

			for (size_t j = 0; j < ctx->nsyms; j++) {
				const struct brt_elf_sym *sym = &ctx->syms[j];

				if (sym->shndx != sec || strcmp(sym->name, var) ||
				    sym->value > UINT32_MAX)
					continue;
				vs[v].offset = (uint32_t)sym->value;
				if (sym->size && sym->size <= UINT32_MAX)
					vs[v].size = (uint32_t)sym->size;
				break;
			}
		}
	}
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
	if (!obj->progs)
		return -ENOMEM;
	for (size_t i = 0; i < ctx->nfuncs; i++) {
		struct brt_elf_func *f = &ctx->funcs[i];
		struct brt_elf_prog *p;

		if (!strcmp(ctx->secs[f->sec].name, ".text"))
			continue;
		p = &obj->progs[obj->nprogs];
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
	if (ctx->secs)
		for (size_t i = 0; i < ctx->nsecs; i++)
			free(ctx->secs[i].rels);
	free(ctx->secs);
	free(ctx->syms);
	free(ctx->funcs);
}

static int parse(struct brt_elf_ctx *ctx, struct img *img)
{
	int ret;

	if ((ret = check_header(ctx, img)) || (ret = read_sections(ctx, img)) ||
	    (ret = read_symbols(ctx, img)) || (ret = read_relocs(ctx)) ||
	    (ret = read_license_version(ctx)) || (ret = read_btf(ctx)) ||
	    (ret = fixup_datasecs(ctx)) ||
	    (ret = collect_funcs(ctx)) || (ret = brt_elf_collect_maps(ctx)) ||
	    (ret = brt_elf_collect_slots(ctx)) || (ret = brt_elf_tc_sections(ctx)) ||
	    (ret = brt_elf_link(ctx)))
		return ret;
	return 0;
}

int brt_elf_open_owned(void *buf, size_t size, const char *name, struct brt_elf_obj **out,
		       char *err, size_t errlen)
{
	struct brt_elf_ctx ctx = { .err = err, .errlen = errlen };
	struct brt_elf_obj *obj;
	struct img img = { .buf = buf, .size = size };
	int ret;

	*out = NULL;
	err[0] = 0;
	ctx.name = name ? name : "<memory>";
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		free(img.buf);
		return brt_elf_fail(&ctx, -ENOMEM, 0, 0, "out of memory");
	}
	ctx.obj = obj;
	obj->name = brt_elf_keep(obj, ctx.name);
	ret = obj->name ? parse(&ctx, &img) : -ENOMEM;
	free_ctx(&ctx);
	free(img.buf);
	if (ret) {
		if (ret == -ENOMEM)
			brt_elf_fail(&ctx, ret, 0, 0, "out of memory");
		brt_elf_free(obj);
		return ret;
	}
	*out = obj;
	return 0;
}

int brt_elf_open(const void *buf, size_t size, const char *name, struct brt_elf_obj **out,
		 char *err, size_t errlen)
{
	/* a private copy, aligned as malloc() aligns whatever the caller's buffer is: the
	 * stages read sections (instructions, BTF) through typed pointers */
	void *copy = malloc(size ? size : 1);

	if (!copy) {
		struct brt_elf_ctx ctx = { .err = err, .errlen = errlen,
					   .name = name ? name : "<memory>" };

		*out = NULL;
		err[0] = 0;
		return brt_elf_fail(&ctx, -ENOMEM, 0, 0, "out of memory");
	}
	if (size)
		memcpy(copy, buf, size);
	return brt_elf_open_owned(copy, size, name, out, err, errlen);
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
