/* reloc.c - linking: every relocation in code is checked against the instruction it
 * patches, then each program gets a private copy of its code with the subprograms it calls
 * appended (once each, in first-call order), call and callback offsets recomputed for
 * that layout, and map references rewritten as lddw with a map index.  The kinds clang
 * emits: R_BPF_64_64 (lddw of a map, global data or a function), R_BPF_64_32 (calls),
 * R_BPF_64_ABS64/ABS32/NODYLD32 (only in .maps, .BTF, .BTF.ext and debug sections).
 */
#include <errno.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "btf/btf.h"
#include "elf/parse.h"

enum {
	R_NONE = 0,
	R_64_64 = 1,
	R_ABS64 = 2,
	R_ABS32 = 3,
	R_NODYLD32 = 4,
	R_64_32 = 10,
	/* GNU as before binutils 2.41 (bpf-gcc's on Debian 12) numbers data relocations
	 * apart from LLVM: 32- and 64-bit data, where LLVM leaves 11 and 12 unused */
	R_GNU_DATA_32 = 11,
	R_GNU_DATA_64 = 12,
};

#define LDDW (BPF_LD | BPF_IMM | BPF_DW)
#define CALL (BPF_JMP | BPF_CALL)

const char *brt_elf_reloc_type_name(uint32_t type)
{
	switch (type) {
	case R_NONE: return "R_BPF_NONE";
	case R_64_64: return "R_BPF_64_64";
	case R_ABS64: return "R_BPF_64_ABS64";
	case R_ABS32: return "R_BPF_64_ABS32";
	case R_NODYLD32: return "R_BPF_64_NODYLD32";
	case R_64_32: return "R_BPF_64_32";
	case R_GNU_DATA_32: return "R_BPF_DATA_32";
	case R_GNU_DATA_64: return "R_BPF_DATA_64";
	default: return "unknown";
	}
}

/* Whether instruction slot i of a code section (opcodes at code, 8 bytes apart) starts an
 * instruction, as a walk from the section's start would find, given slot floor <= i that
 * does (0 does): slot p, the last before i whose opcode is not lddw's, ends an instruction
 * whether it starts one or is an lddw's second half, so p + 1 starts one (as floor does
 * when no such p lies at or after it), and from there the lddw opcodes pair up: i starts
 * an instruction when an even number of them lie between.  One look back for almost every
 * relocation, where a walk of every instruction of every section was two fifths of an
 * open once linking moved to load (KubeArmor's system_monitor.o: 150k instructions); with
 * the last relocation's slot as floor, no slot is looked at twice. */
static int insn_start(const uint8_t *code, size_t floor, size_t i)
{
	size_t run = 0;

	while (run < i - floor && code[(i - run - 1) * 8] == LDDW)
		run++;
	return run % 2 == 0;
}

/* Code relocations: on an instruction boundary (not an lddw's second slot), R_BPF_64_64 on
 * an lddw, R_BPF_64_32 on a bpf-to-bpf call; everything else is refused here, once, so
 * linking can trust them; and no lddw without its second slot at the section's end.
 * Refusals in the order a walk of the section's instructions meets them. */
static int check_exec_rels(struct brt_elf_ctx *ctx, uint32_t s)
{
	const struct brt_elf_sec *sec = &ctx->secs[s];
	size_t n = sec->size / 8;
	/* an lddw starting in the last slot */
	int end_bad = n && sec->data[(n - 1) * 8] == LDDW && insn_start(sec->data, 0, n - 1);
	size_t floor = 0;

	for (size_t r = 0; r < sec->nrels; r++) {
		const struct brt_elf_rel *rel = &sec->rels[r];
		const char *sym = ctx->syms[rel->sym].name;
		size_t i = rel->off / 8;
		struct bpf_insn insn;
		int wide;

		if (end_bad && rel->off >= (n - 1) * 8)
			break;
		if (rel->off % 8 || !insn_start(sec->data, floor, i))
			return brt_elf_fail(ctx, -EINVAL, sec->rel_sec, rel->idx * 16ull,
					    "relocation %u against '%s' at 0x%llx is not on an "
					    "instruction boundary",
					    rel->idx, sym, (unsigned long long)rel->off);
		floor = i;
		memcpy(&insn, sec->data + i * 8, sizeof(insn));
		wide = insn.code == LDDW;
		if (rel->type == R_64_64 && !wide)
			return brt_elf_fail(ctx, -EINVAL, sec->rel_sec, rel->idx * 16ull,
					    "R_BPF_64_64 against '%s' patches insn %zu of '%s' "
					    "(opcode 0x%02x), not an lddw",
					    sym, i, sec->name, insn.code);
		if (rel->type == R_64_32 &&
		    (insn.code != CALL ||
		     (insn.src_reg != BPF_PSEUDO_CALL &&
		      !(ctx->syms[rel->sym].shndx == SHN_UNDEF && !insn.src_reg))))
			return brt_elf_fail(ctx, -EINVAL, sec->rel_sec, rel->idx * 16ull,
					    "R_BPF_64_32 against '%s' patches insn %zu of '%s' "
					    "(opcode 0x%02x), not a bpf-to-bpf call",
					    sym, i, sec->name, insn.code);
		/* externs: kconfig ones (.kconfig) and ksyms, resolved when linked
		 * (apply_ld64(), apply_kfunc()) */
		if (rel->type != R_64_64 && rel->type != R_64_32)
			return brt_elf_fail(ctx, -ENOTSUP, sec->rel_sec, rel->idx * 16ull,
					    "relocation %u: type %u (%s) against '%s' is not "
					    "supported in code",
					    rel->idx, rel->type, brt_elf_reloc_type_name(rel->type), sym);
	}
	if (end_bad)
		return brt_elf_fail(ctx, -EINVAL, s, (n - 1) * 8,
				    "lddw at the end of the section has no second slot");
	return 0;
}

/* Relocations outside code and .maps are checked for known types only; the loader does not
 * apply them (.BTF and debug info), except in global data, where a pointer initialiser
 * would need an address the program cannot have. */
static int check_other_rels(struct brt_elf_ctx *ctx, uint32_t s)
{
	const struct brt_elf_sec *sec = &ctx->secs[s];

	for (size_t r = 0; r < sec->nrels; r++) {
		const struct brt_elf_rel *rel = &sec->rels[r];

		if (sec->kind == BRT_SEC_DATA)
			return brt_elf_fail(ctx, -ENOTSUP, sec->rel_sec, rel->idx * 16ull,
					    "relocation %u in '%s' at 0x%llx against '%s': pointers "
					    "in global data are not supported",
					    rel->idx, sec->name, (unsigned long long)rel->off,
					    ctx->syms[rel->sym].name);
		if (!strcmp(brt_elf_reloc_type_name(rel->type), "unknown"))
			return brt_elf_fail(ctx, -ENOTSUP, sec->rel_sec, rel->idx * 16ull,
					    "relocation %u: unknown type %u", rel->idx, rel->type);
	}
	return 0;
}

struct placed {
	size_t func;        /* index in ctx->funcs */
	uint32_t out_start; /* first instruction in the linked program */
	uint32_t next;      /* instruction of the function to relocate next */
};

/* The object's .BTF.ext records by section and offset (ext_index.c), for every program. */
struct ext_indexes {
	struct brt_ext_index lines, funcs, cores;
	int64_t *core_misaligned; /* by cores group, at its first use: the first record (in
				   * file order) off an instruction boundary, -1 none, -2 not
				   * looked at yet */
};

/* What linking one object shares between its programs (ctx->link, made by the first). */
struct brt_link_shared {
	struct ext_indexes ext;
	uint32_t *placed_at;  /* by function: 1 + its place in the program being linked, or 0 */
	const char **sym_kept; /* by symbol: its name kept in the object (brt_elf_keep), or NULL */
	int whole;            /* linked as a whole, brt_elf_link_prepare() */
};

struct linker {
	struct brt_elf_ctx *ctx;
	struct brt_elf_prog *prog;
	struct placed *placed;
	size_t nplaced;
	size_t placed_cap;
	size_t insn_cap;
	size_t reloc_cap;
	struct brt_link_shared *sh;
};

static int place(struct linker *lk, size_t fidx, uint32_t *out_start)
{
	const struct brt_elf_func *f = &lk->ctx->funcs[fidx];
	struct brt_elf_prog *p = lk->prog;
	uint32_t at = lk->sh->placed_at[fidx];

	if (at) {
		*out_start = lk->placed[at - 1].out_start;
		return 0;
	}
	if (p->insn_cnt + f->cnt > lk->insn_cap) {
		size_t cap = 2 * (p->insn_cnt + f->cnt);
		struct bpf_insn *ni = realloc(p->insns, cap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		p->insns = ni;
		lk->insn_cap = cap;
	}
	if (lk->nplaced == lk->placed_cap) {
		size_t cap = lk->placed_cap ? 2 * lk->placed_cap : 8;
		struct placed *np = realloc(lk->placed, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		lk->placed = np;
		lk->placed_cap = cap;
	}
	memcpy(p->insns + p->insn_cnt, lk->ctx->secs[f->sec].data + (size_t)f->start * 8,
	       (size_t)f->cnt * 8);
	*out_start = (uint32_t)p->insn_cnt;
	lk->placed[lk->nplaced++] = (struct placed){ .func = fidx, .out_start = *out_start };
	lk->sh->placed_at[fidx] = (uint32_t)lk->nplaced;
	p->insn_cnt += f->cnt;
	return 0;
}

/* Output index of instruction `target` of section `sec`, placing its function if needed. */
static int resolve(struct linker *lk, uint32_t sec, int64_t target, uint32_t err_sec,
		   uint64_t err_off, uint32_t *out_idx)
{
	struct brt_elf_ctx *ctx = lk->ctx;
	size_t lo = 0, hi = ctx->nfuncs;

	/* funcs are sorted by section, then start, and do not overlap: the last one
	 * starting at or before target is the only one that can hold it */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct brt_elf_func *f = &ctx->funcs[mid];

		if (f->sec < sec || (f->sec == sec && f->start <= target))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		const struct brt_elf_func *f = &ctx->funcs[lo - 1];
		uint32_t start;
		int ret;

		if (f->sec == sec && target >= f->start && target < (int64_t)f->start + f->cnt) {
			if ((ret = place(lk, lo - 1, &start)))
				return ret;
			*out_idx = start + (uint32_t)(target - f->start);
			return 0;
		}
	}
	return brt_elf_fail(ctx, -EINVAL, err_sec, err_off,
			    "call target insn %lld of section %u '%s' is not inside a function",
			    (long long)target, sec, ctx->secs[sec].name);
}

static int add_reloc(struct linker *lk, const struct brt_elf_reloc *r)
{
	struct brt_elf_prog *p = lk->prog;

	if (p->nrelocs == lk->reloc_cap) {
		size_t cap = lk->reloc_cap ? 2 * lk->reloc_cap : 8;
		struct brt_elf_reloc *n = realloc(p->relocs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->relocs = n;
		lk->reloc_cap = cap;
	}
	p->relocs[p->nrelocs++] = *r;
	return 0;
}

/* A kernel symbol an extern (__ksym) names, as libbpf resolves it against the running
 * kernel's BTF: a function (kfunc) or a variable; its type id, 0 for a weak extern the
 * kernel lacks (libbpf leaves those 0), or -ESRCH with libbpf's message.  Module BTFs
 * (/sys/kernel/btf/<module>) are not searched: bpfrt has no module BTF objects to name in
 * fd_array, so such an extern is not found here. */
static int ksym_lookup(const struct brt_elf_sym *sym, int func)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	int id = vml ? brt_btf_find(vml, sym->name, func ? BTF_KIND_FUNC : BTF_KIND_VAR) : -ENOENT;

	if (id < 0 && !func && vml) /* an lddw of a kfunc's address */
		id = brt_btf_find(vml, sym->name, BTF_KIND_FUNC);
	if (id > 0)
		return id;
	return sym->bind == STB_WEAK ? 0 : -ESRCH;
}

/* bpf_object__resolve_ksym_func_btf_id(): the extern's prototype in the object's BTF must
 * be compatible with the kernel function's (brt_btf_types_compat(); a forward-declared
 * struct is not a struct to it, as to libbpf): 1 when it is, or when the object has no
 * prototype to compare (no .BTF, or no FUNC of that name), else 0 with *local and *kern
 * the two prototypes' ids for the message */
static int kfunc_proto_ok(struct brt_elf_ctx *ctx, const struct brt_elf_sym *sym, int id,
			  uint32_t *local, uint32_t *kern)
{
	const struct brt_btf *vml = brt_btf_vmlinux(), *lb = ctx->obj->btf;
	const struct btf_type *kf = brt_btf_type(vml, (uint32_t)id), *lf;
	int lid = lb ? brt_btf_find(lb, sym->name, BTF_KIND_FUNC) : -ENOENT;

	if (lid <= 0 || !kf || BTF_INFO_KIND(kf->info) != BTF_KIND_FUNC ||
	    !(lf = brt_btf_type(lb, (uint32_t)lid)))
		return 1;
	*local = brt_btf_skip_mods(lb, lf->type);
	*kern = kf->type;
	return brt_btf_types_compat(lb, *local, vml, *kern) > 0;
}

static int resolve_ksym(struct brt_elf_ctx *ctx, const struct brt_elf_sym *sym, uint32_t rs,
			uint64_t off, int func)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	int id = ksym_lookup(sym, func);
	uint32_t local, kern;

	if (id > 0 && !kfunc_proto_ok(ctx, sym, id, &local, &kern)) {
		/* libbpf leaves a weak one unresolved (0); 1.1's message says "kernel" where
		 * today's names the BTF it searched */
		if (sym->bind == STB_WEAK)
			return 0;
		return brt_elf_fail(ctx, -EINVAL, rs, off,
				    "extern (func ksym) '%s': func_proto [%u] incompatible with "
				    "vmlinux [%u]",
				    sym->name, local, kern);
	}
	if (id >= 0)
		return id;
	return brt_elf_fail(ctx, -ESRCH, rs, off,
			    "extern (%sksym) '%s': not found in kernel BTF%s", func ? "func " : "",
			    sym->name, vml ? "" : " (no /sys/kernel/btf/vmlinux)");
}

/* A call of an extern function: the kernel function of that name (src_reg
 * BPF_PSEUDO_KFUNC_CALL, imm its vmlinux BTF id, off 0: vmlinux), or for an unresolved
 * weak one id 0, which the verifier accepts in code it proves dead. */
static int apply_kfunc(struct linker *lk, uint32_t pc, const struct brt_elf_rel *rel,
		       struct brt_elf_reloc *out)
{
	struct brt_elf_ctx *ctx = lk->ctx;
	struct bpf_insn *insn = &lk->prog->insns[pc];
	int id = resolve_ksym(ctx, &ctx->syms[rel->sym], out->sec_idx, out->sec_off, 1);

	if (id < 0)
		return id;
	insn->src_reg = BPF_PSEUDO_KFUNC_CALL;
	insn->imm = id;
	insn->off = 0;
	out->kind = BRT_ELF_RELO_KSYM;
	out->target = id;
	return 0;
}

/* R_BPF_64_64 on an lddw: a map, a global-data address, or a callback function. */
static int apply_ld64(struct linker *lk, uint32_t pc, const struct brt_elf_rel *rel,
		      struct brt_elf_reloc *out)
{
	struct brt_elf_ctx *ctx = lk->ctx;
	const struct brt_elf_sym *sym = &ctx->syms[rel->sym];
	struct bpf_insn *insn = &lk->prog->insns[pc];
	/* Section symbols (static variables) carry the offset in imm; named ones in value. */
	int64_t off = (int64_t)sym->value + insn->imm;
	uint32_t rs = out->sec_idx, target;
	int idx, ret;
	uint32_t koff;

	if (sym->shndx == SHN_UNDEF && (idx = brt_elf_kconfig_at(ctx, sym->name, &koff)) >= 0) {
		insn[0].src_reg = BPF_PSEUDO_MAP_VALUE;
		insn[0].imm = idx;
		insn[1].imm = (int32_t)koff;
		out->kind = BRT_ELF_RELO_MAP_VALUE;
		out->target = idx;
		out->off = koff;
		return 0;
	}
	if (sym->shndx == SHN_UNDEF) {
		/* a ksym: the kernel's BTF id (BPF_PSEUDO_BTF_ID), or 0 for a weak one the
		 * kernel lacks, as libbpf fills it */
		if ((ret = resolve_ksym(ctx, sym, rs, out->sec_off, 0)) < 0)
			return ret;
		insn[0].src_reg = ret ? BPF_PSEUDO_BTF_ID : 0;
		insn[0].imm = ret;
		insn[1].imm = 0;
		out->kind = BRT_ELF_RELO_KSYM;
		out->target = ret;
		return 0;
	}
	if (sym->shndx >= ctx->nsecs)
		return brt_elf_fail(ctx, -ENOTSUP, rs, out->sec_off,
				    "lddw refers to '%s', which is not defined in a section",
				    sym->name);
	switch (ctx->secs[sym->shndx].kind) {
	case BRT_SEC_MAPS:
	case BRT_SEC_BTF_MAPS:
		idx = brt_elf_map_at(ctx, sym->shndx, sym->type == STT_SECTION ? (uint64_t)off
									     : sym->value);
		if (idx < 0)
			return brt_elf_fail(ctx, -EINVAL, rs, out->sec_off,
					    "lddw refers to '%s' at offset %lld of '%s', where no "
					    "map is defined",
					    sym->name, (long long)off, ctx->secs[sym->shndx].name);
		insn[0].src_reg = BPF_PSEUDO_MAP_FD;
		insn[0].imm = idx;
		insn[1].imm = 0;
		out->kind = BRT_ELF_RELO_MAP_FD;
		out->target = idx;
		return 0;
	case BRT_SEC_DATA:
		idx = brt_elf_map_at(ctx, sym->shndx, 0);
		if (idx < 0)
			return brt_elf_fail(ctx, -EINVAL, rs, out->sec_off,
					    "lddw refers to offset %lld of '%s' (%zu bytes)",
					    (long long)off, ctx->secs[sym->shndx].name,
					    ctx->secs[sym->shndx].size);
		/* An offset outside the section is the kernel's to refuse, as libbpf leaves
		 * it ("invalid access to map value pointer" at BPF_PROG_LOAD, or whatever the
		 * load meets first, such as a trampoline program's EPERM): GNU as 2.40 writes
		 * one for every variable not first in its section (docs/CORPUS.md).  The
		 * 32-bit sum is libbpf's (insn[1].imm = imm + the symbol's offset). */
		insn[0].src_reg = BPF_PSEUDO_MAP_VALUE;
		insn[0].imm = idx;
		insn[1].imm = (int32_t)(uint32_t)off;
		out->kind = BRT_ELF_RELO_MAP_VALUE;
		out->target = idx;
		out->off = (uint32_t)off;
		return 0;
	case BRT_SEC_EXEC:
		if (off % 8)
			return brt_elf_fail(ctx, -EINVAL, rs, out->sec_off,
					    "function address '%s'+%lld is not an instruction",
					    sym->name, (long long)off);
		if ((ret = resolve(lk, sym->shndx, off / 8, rs, out->sec_off, &target)))
			return ret;
		insn = &lk->prog->insns[pc]; /* resolve() may have moved the code */
		insn[0].src_reg = BPF_PSEUDO_FUNC;
		insn[0].imm = (int32_t)target - (int32_t)pc - 1;
		insn[1].imm = 0;
		out->kind = BRT_ELF_RELO_FUNC;
		out->target = (int32_t)target;
		return 0;
	default:
		return brt_elf_fail(ctx, -EINVAL, rs, out->sec_off,
				    "lddw refers to '%s' in section %u '%s', which holds no maps, "
				    "global data or code",
				    sym->name, sym->shndx, ctx->secs[sym->shndx].name);
	}
}

/* A call: through a relocation (target is the symbol plus imm + 1) or, for a static
 * function of the same section, relative as the compiler left it. */
static int apply_call(struct linker *lk, uint32_t pc, const struct brt_elf_func *f,
		      const struct brt_elf_rel *rel, struct brt_elf_reloc *out)
{
	struct brt_elf_ctx *ctx = lk->ctx;
	int32_t imm = lk->prog->insns[pc].imm;
	uint32_t sec = f->sec, target;
	int64_t t;
	int ret;

	if (rel) {
		const struct brt_elf_sym *sym = &ctx->syms[rel->sym];

		sec = sym->shndx;
		if (sec >= ctx->nsecs || ctx->secs[sec].kind != BRT_SEC_EXEC || sym->value % 8)
			return brt_elf_fail(ctx, -EINVAL, out->sec_idx, out->sec_off,
					    "call to '%s', which is not code", sym->name);
		t = (int64_t)(sym->value / 8) + imm + 1;
	} else {
		t = (int64_t)(out->sec_off / 8) + imm + 1;
	}
	if ((ret = resolve(lk, sec, t, out->sec_idx, out->sec_off, &target)))
		return ret;
	lk->prog->insns[pc].imm = (int32_t)target - (int32_t)pc - 1;
	out->kind = BRT_ELF_RELO_CALL;
	out->target = (int32_t)target;
	return 0;
}

/* The first relocation of sec at offset off or after (sec->nrels when none). */
static size_t first_rel(const struct brt_elf_sec *sec, uint64_t off)
{
	size_t lo = 0, hi = sec->nrels;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sec->rels[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Symbol sym's name kept in the object (the file image goes after the open), once per
 * symbol for all programs; UINT32_MAX: "" (a relative call names none).  NULL: ENOMEM. */
static const char *kept_sym(struct linker *lk, uint32_t sym)
{
	const char **k = sym == UINT32_MAX ? &lk->sh->sym_kept[lk->ctx->nsyms]
					   : &lk->sh->sym_kept[sym];

	if (!*k)
		*k = brt_elf_keep(lk->ctx->obj, sym == UINT32_MAX ? "" : lk->ctx->syms[sym].name);
	return *k;
}

/* Relocate function k of the layout from where it stopped.  Returns 1 when an instruction
 * placed a new function (the caller descends into it first, so the layout is depth-first
 * in call order, as libbpf makes it), 0 when done, or -errno. */
static int link_func(struct linker *lk, size_t k)
{
	struct brt_elf_ctx *ctx = lk->ctx;
	const struct brt_elf_func *f = &ctx->funcs[lk->placed[k].func];
	const struct brt_elf_sec *sec = &ctx->secs[f->sec];
	/* the section's relocations in offset order, walked along with the code */
	size_t ri = first_rel(sec, ((uint64_t)f->start + lk->placed[k].next) * 8);
	int ret;

	for (uint32_t j = lk->placed[k].next; j < f->cnt; j++) {
		uint32_t pc = lk->placed[k].out_start + j;
		struct bpf_insn insn = lk->prog->insns[pc];
		struct brt_elf_reloc r = { .insn_idx = pc, .sec_idx = f->sec,
					   .sec_off = (f->start + j) * 8 };
		const struct brt_elf_rel *rel;
		size_t before = lk->nplaced;

		while (ri < sec->nrels && sec->rels[ri].off < r.sec_off)
			ri++;
		rel = ri < sec->nrels && sec->rels[ri].off == r.sec_off ? &sec->rels[ri] : NULL;

		if (insn.code == LDDW && j + 1 >= f->cnt)
			return brt_elf_fail(ctx, -EINVAL, f->sec, r.sec_off,
					    "lddw at the end of function '%s' has no second slot",
					    f->name);
		if (rel) {
			r.elf_type = rel->type;
			r.sym = kept_sym(lk, rel->sym);
			ret = rel->type == R_64_64 ? apply_ld64(lk, pc, rel, &r)
			      : ctx->syms[rel->sym].shndx == SHN_UNDEF ? apply_kfunc(lk, pc, rel, &r)
								       : apply_call(lk, pc, f, rel, &r);
		} else if (insn.code == CALL && insn.src_reg == BPF_PSEUDO_CALL) {
			r.sym = kept_sym(lk, UINT32_MAX);
			ret = apply_call(lk, pc, f, NULL, &r);
		} else {
			j += insn.code == LDDW;
			continue;
		}
		if (!ret && !r.sym)
			ret = -ENOMEM;
		if (ret || (ret = add_reloc(lk, &r)))
			return ret;
		j += insn.code == LDDW;
		if (lk->nplaced != before) {
			lk->placed[k].next = j + 1;
			return 1;
		}
	}
	lk->placed[k].next = f->cnt;
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct brt_elf_line *x = a, *y = b;

	return x->insn_idx < y->insn_idx ? -1 : x->insn_idx > y->insn_idx;
}

/* arr (n elements of size bytes, room for *cap) with room for one more, moved or doubled
 * (16 at first) when full: the array, or NULL when out of memory (arr is kept). */
static void *room_for_one(void *arr, size_t n, size_t *cap, size_t size)
{
	size_t want = *cap ? 2 * *cap : 16;
	void *m;

	if (n < *cap)
		return arr;
	m = realloc(arr, want * size);
	if (m)
		*cap = want;
	return m;
}

/* The records of placed function k in index ix: its group, positions [*from, *to).  0 or
 * -ENOMEM. */
static int func_records(const struct linker *lk, struct brt_ext_index *ix, size_t k, int *group,
			size_t *from, size_t *to)
{
	const struct brt_elf_func *f = &lk->ctx->funcs[lk->placed[k].func];

	*group = brt_ext_index_group(ix, lk->ctx->secs[f->sec].name);
	return brt_ext_index_range(ix, *group, (uint64_t)f->start * 8,
				   ((uint64_t)f->start + f->cnt) * 8, from, to);
}

/* Source lines from .BTF.ext, renumbered for the linked layout: by insn_idx, a
 * function's lines in its section's order (offset, then file order).  Each record is
 * read (and checked) here, not at the open: a bad one fails the program, named as the
 * open named it (the first in file order when the program has several). */
static int link_lines(struct linker *lk)
{
	struct brt_elf_ctx *ctx = lk->ctx;
	struct brt_ext_index *ix = &lk->sh->ext.lines;
	struct brt_elf_prog *p = lk->prog;
	size_t total = 0;
	int sorted = 1, ret;
	uint32_t bad = UINT32_MAX;
	char msg[256], why[256];

	for (size_t k = 0; k < lk->nplaced; k++) {
		size_t from, to;
		int g;

		if ((ret = func_records(lk, ix, k, &g, &from, &to)))
			return ret;
		total += to - from;
	}
	if (!total)
		return 0;
	p->lines = malloc(total * sizeof(*p->lines));
	if (!p->lines)
		return -ENOMEM;
	for (size_t k = 0; k < lk->nplaced; k++) {
		const struct brt_elf_func *f = &ctx->funcs[lk->placed[k].func];
		size_t from, to;
		int g;

		func_records(lk, ix, k, &g, &from, &to); /* settled above: cannot fail */
		for (size_t i = from; i < to; i++) {
			uint32_t r = brt_ext_index_rec(ix, g, i);
			const struct brt_btf_ext_block *b = brt_ext_index_block(ix, g, r);
			struct brt_btf_line l;

			if (brt_btf_ext_line(ctx->obj->btf, b, r - b->first, &l, why, sizeof(why))) {
				if (r < bad) {
					bad = r;
					memcpy(msg, why, sizeof(msg));
				}
				continue;
			}
			if (l.insn_off % 8)
				continue;
			p->lines[p->nlines++] = (struct brt_elf_line){
				.insn_idx = lk->placed[k].out_start + l.insn_off / 8 - f->start,
				.file = l.file, .src = l.src, .line = l.line, .col = l.col,
				.file_off = l.file_off, .src_off = l.src_off,
			};
			sorted &= p->nlines < 2 ||
				  p->lines[p->nlines - 2].insn_idx <= p->lines[p->nlines - 1].insn_idx;
		}
	}
	if (bad != UINT32_MAX)
		return brt_elf_btf_fail(ctx, -EINVAL, ctx->btf_ext_sec, msg);
	/* functions are placed in increasing order, so this is seldom needed; a stable
	 * sort keeps each function's order */
	if (!sorted)
		qsort(p->lines, p->nlines, sizeof(*p->lines), cmp_line);
	return 0;
}

static int cmp_core_rec(const void *a, const void *b)
{
	const struct brt_elf_core *x = a, *y = b;

	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

/* CO-RE relocation records, placed at each copy of their instruction in the linked layout
 * (libbpf relocates a subprogram before appending it, which gives the same code); a
 * function's records in file order, which decides the order candidates are pruned in. */
static int link_cores(struct linker *lk)
{
	struct brt_elf_ctx *ctx = lk->ctx;
	struct brt_elf_obj *obj = ctx->obj;
	struct brt_ext_index *ix = &lk->sh->ext.cores;
	struct brt_elf_prog *p = lk->prog;
	struct brt_elf_core *cores;
	size_t cap = 0;
	int ret;

	for (size_t k = 0; k < lk->nplaced; k++) {
		const struct brt_elf_func *f = &ctx->funcs[lk->placed[k].func];
		size_t from, to, first = p->ncores;
		int64_t *mis;
		int g;

		if ((ret = func_records(lk, ix, k, &g, &from, &to)))
			return ret;
		mis = g >= 0 ? &lk->sh->ext.core_misaligned[g] : NULL;
		if (mis && *mis == -2) {
			/* the first record (in file order) of the section off a boundary */
			*mis = -1;
			for (size_t i = 0; i < ix->groups[g].count; i++) {
				uint32_t r = brt_ext_index_rec(ix, g, i);

				if (obj->ext.cores[r].insn_off % 8 && (*mis < 0 || r < *mis))
					*mis = r;
			}
		}
		if (mis && *mis >= 0) {
			/* any record of the section off a boundary, in range or not */
			const struct brt_btf_core_relo *c = &obj->ext.cores[*mis];

			return brt_elf_fail(ctx, -EINVAL, f->sec, c->insn_off,
					    "CO-RE relocation #%u of '%s' is not on an "
					    "instruction boundary", c->sec_rec, ctx->secs[f->sec].name);
		}
		for (size_t i = from; i < to; i++) {
			const struct brt_btf_core_relo *c = &obj->ext.cores[brt_ext_index_rec(ix, g, i)];

			cores = room_for_one(p->cores, p->ncores, &cap, sizeof(*cores));
			if (!cores)
				return -ENOMEM;
			p->cores = cores;
			p->cores[p->ncores++] = (struct brt_elf_core){
				.insn_idx = lk->placed[k].out_start + c->insn_off / 8 - f->start,
				.rec = c,
			};
		}
		/* back to file order when the section's offsets were not */
		for (size_t i = first + 1; i < p->ncores; i++)
			if (p->cores[i - 1].rec > p->cores[i].rec) {
				qsort(p->cores + first, p->ncores - first, sizeof(*cores),
				      cmp_core_rec);
				break;
			}
	}
	return 0;
}

/* func_info for the linked layout: one BTF FUNC per placed function, in layout order.
 * The kernel wants all or nothing, so a function without a record drops them all. */
static int link_funcs(struct linker *lk)
{
	struct brt_elf_ctx *ctx = lk->ctx;
	const struct brt_btf_ext *ext = &ctx->obj->ext;
	struct brt_ext_index *ix = &lk->sh->ext.funcs;
	struct brt_elf_prog *p = lk->prog;
	int ret;

	if (!ext->nfuncs)
		return 0;
	p->func_info = calloc(lk->nplaced, sizeof(*p->func_info));
	if (!p->func_info)
		return -ENOMEM;
	for (size_t k = 0; k < lk->nplaced; k++) {
		const struct brt_elf_func *f = &ctx->funcs[lk->placed[k].func];
		size_t from, to;
		int g;

		/* the first record (in file order) at the function's first instruction */
		g = brt_ext_index_group(ix, ctx->secs[f->sec].name);
		if ((ret = brt_ext_index_range(ix, g, (uint64_t)f->start * 8,
					       (uint64_t)f->start * 8 + 1, &from, &to)))
			return ret;
		if (from == to) {
			free(p->func_info);
			p->func_info = NULL;
			p->nfunc_info = 0;
			return 0;
		}
		p->func_info[k].insn_off = lk->placed[k].out_start;
		p->func_info[k].type_id = ext->funcs[brt_ext_index_rec(ix, g, from)].type_id;
		p->nfunc_info++;
	}
	return 0;
}

static int cmp_reloc(const void *a, const void *b)
{
	const struct brt_elf_reloc *x = a, *y = b;

	return x->insn_idx < y->insn_idx ? -1 : x->insn_idx > y->insn_idx;
}

/* Depth-first over the call graph with an explicit stack (a hostile file may chain
 * thousands of functions). */
static int link_all(struct linker *lk)
{
	size_t *stack = malloc((lk->ctx->nfuncs + 1) * sizeof(*stack)), depth = 1;
	int ret = 0;

	if (!stack)
		return -ENOMEM;
	stack[0] = 0;
	while (depth && ret >= 0) {
		ret = link_func(lk, stack[depth - 1]);
		if (ret == 1)
			stack[depth++] = lk->nplaced - 1;
		else if (ret == 0)
			depth--;
	}
	free(stack);
	return ret < 0 ? ret : 0;
}

static int link_prog(struct brt_elf_ctx *ctx, struct brt_link_shared *sh, size_t fidx)
{
	struct linker lk = { .ctx = ctx, .prog = &ctx->obj->progs[ctx->funcs[fidx].prog],
			     .sh = sh };
	uint32_t start;
	int ret;

	ret = place(&lk, fidx, &start);
	lk.prog->main_cnt = lk.prog->insn_cnt;
	if (!ret)
		ret = link_all(&lk);
	if (!ret)
		ret = link_lines(&lk);
	if (!ret)
		ret = link_funcs(&lk);
	if (!ret)
		ret = link_cores(&lk);
	if (!ret && lk.prog->nrelocs)
		qsort(lk.prog->relocs, lk.prog->nrelocs, sizeof(*lk.prog->relocs), cmp_reloc);
	for (size_t k = 0; k < lk.nplaced; k++)
		sh->placed_at[lk.placed[k].func] = 0;
	free(lk.placed);
	return ret;
}

/* What every program's linking shares, made by the first: the indexes of the three
 * record kinds (from the blocks alone), a slot per function and per symbol. */
static int link_shared(struct brt_elf_ctx *ctx)
{
	const struct brt_btf_ext *ext = &ctx->obj->ext;
	struct brt_link_shared *sh = calloc(1, sizeof(*sh));
	int ret;

	if (!sh)
		return -ENOMEM;
	ctx->link = sh;
	ret = brt_ext_index_build(&sh->ext.lines, ext->blocks[BRT_BTF_EXT_LINE],
				  ext->nblocks[BRT_BTF_EXT_LINE], 0 /* the file's insn_off */);
	if (!ret)
		ret = brt_ext_index_build(&sh->ext.funcs, ext->blocks[BRT_BTF_EXT_FUNC],
					  ext->nblocks[BRT_BTF_EXT_FUNC],
					  offsetof(struct brt_btf_func, insn_off));
	if (!ret)
		ret = brt_ext_index_build(&sh->ext.cores, ext->blocks[BRT_BTF_EXT_CORE],
					  ext->nblocks[BRT_BTF_EXT_CORE],
					  offsetof(struct brt_btf_core_relo, insn_off));
	if (ret)
		return ret;
	sh->ext.core_misaligned = malloc((sh->ext.cores.ngroups + 1) *
					 sizeof(*sh->ext.core_misaligned));
	sh->placed_at = calloc(ctx->nfuncs + 1, sizeof(*sh->placed_at));
	sh->sym_kept = calloc(ctx->nsyms + 1, sizeof(*sh->sym_kept));
	if (!sh->ext.core_misaligned || !sh->placed_at || !sh->sym_kept)
		return -ENOMEM;
	for (size_t g = 0; g < sh->ext.cores.ngroups; g++)
		sh->ext.core_misaligned[g] = -2;
	return 0;
}

void brt_elf_link_free(struct brt_elf_ctx *ctx)
{
	struct brt_link_shared *sh = ctx->link;

	if (!sh)
		return;
	brt_ext_index_free(&sh->ext.lines);
	brt_ext_index_free(&sh->ext.funcs);
	brt_ext_index_free(&sh->ext.cores);
	free(sh->ext.core_misaligned);
	free(sh->placed_at);
	free(sh->sym_kept);
	free(sh);
	ctx->link = NULL;
}

int brt_elf_check_relocs(struct brt_elf_ctx *ctx)
{
	int ret = 0;

	for (uint32_t s = 1; s < ctx->nsecs && !ret; s++) {
		if (ctx->secs[s].kind == BRT_SEC_EXEC)
			ret = check_exec_rels(ctx, s);
		else if (ctx->secs[s].kind != BRT_SEC_BTF_MAPS)
			ret = check_other_rels(ctx, s);
	}
	return ret;
}

/* Whether an extern of the kernel's named by the code is missing from its BTF (a ksym the
 * linking of some program would refuse; each symbol looked up once). */
static int ksym_missing(struct brt_elf_ctx *ctx)
{
	uint8_t *seen = NULL;
	int missing = 0;

	for (uint32_t s = 1; s < ctx->nsecs && !missing; s++) {
		const struct brt_elf_sec *sec = &ctx->secs[s];

		if (sec->kind != BRT_SEC_EXEC)
			continue;
		for (size_t r = 0; r < sec->nrels && !missing; r++) {
			const struct brt_elf_rel *rel = &sec->rels[r];
			const struct brt_elf_sym *sym = &ctx->syms[rel->sym];
			int func = rel->type != R_64_64; /* a call: apply_kfunc() */
			uint32_t koff;

			if (sym->shndx != SHN_UNDEF ||
			    (!func && brt_elf_kconfig_at(ctx, sym->name, &koff) >= 0))
				continue;
			if (!seen && !(seen = calloc(ctx->nsyms + 1, 1)))
				return 1; /* linking them all is always right */
			if (seen[rel->sym] & (1u << func))
				continue;
			seen[rel->sym] |= (uint8_t)(1u << func);
			missing = ksym_lookup(sym, func) < 0;
		}
	}
	free(seen);
	return missing;
}

int brt_elf_link_prepare(struct brt_elf_ctx *ctx)
{
	int ret;

	if (ctx->link)
		return ctx->link->whole;
	/* a failed build is retried by the next program (it fails only for memory) */
	if ((ret = link_shared(ctx))) {
		brt_elf_link_free(ctx);
		return ret;
	}
	ctx->link->whole = ksym_missing(ctx);
	return ctx->link->whole;
}

int brt_elf_link_prog(struct brt_elf_ctx *ctx, size_t prog)
{
	return link_prog(ctx, ctx->link, ctx->prog_func[prog]);
}
