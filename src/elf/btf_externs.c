/* btf_externs.c - the extern variables and functions of an object's BTF rewritten for
 * BPF_BTF_LOAD the way libbpf does it (bpf_object__collect_externs()).  clang describes a
 * __ksym or __kconfig extern with EXTERN linkage inside the .ksyms / .kconfig DATASEC,
 * which has no ELF section and so no size; the kernel refuses all three ("Invalid func
 * linkage", "Linkage not supported", "size == 0": btf/meta.c has the rules), and an
 * object whose BTF is refused loads without it, so its programs lose func_info and the
 * verifier refuses kfuncs such as bpf_obj_new for want of program BTF.  The rewrite goes
 * into the kernel copy of the types (kernel_types), never into the parsed ones that
 * relocation and the CLI read:
 * - .ksyms: each variable becomes a global allocated 4-byte int and each function a
 *   global FUNC whose DATASEC slot points at one added variable, dummy_ksym (a DATASEC
 *   member must be a VAR); unnamed parameters of those functions take that variable's
 *   name (the kernel wants named parameters).  Slots are 4 bytes apart.
 * - .kconfig: each variable becomes global allocated, at the offset bpfrt's .kconfig map
 *   gives it (maps_sec.c), and the section as big as that map.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/parse.h"

#define DUMMY_NAME "dummy_ksym"

/* The writable copy of a type record (kernel_types mirrors type_data byte for byte). */
static struct btf_type *wr(const struct brt_btf *btf, const struct btf_type *t)
{
	return (struct btf_type *)(void *)(btf->kernel_types +
					   ((const uint8_t *)(const void *)t - btf->type_data));
}

/* libbpf's find_int_btf_id(): the first 32-bit INT, or 0. */
static uint32_t int32_id(const struct brt_btf *btf)
{
	for (uint32_t id = 1; id < btf->ntypes; id++) {
		const struct btf_type *t = brt_btf_type(btf, id);

		if (BTF_INFO_KIND(t->info) == BTF_KIND_INT &&
		    BTF_INT_BITS(*(const uint32_t *)(const void *)(t + 1)) == 32)
			return id;
	}
	return 0;
}

/* Append VAR dummy_ksym (global allocated, of type int_id) to the kernel copy; its id. */
static int add_dummy(struct brt_btf *btf, uint32_t int_id, uint32_t *name_off)
{
	size_t add = sizeof(struct btf_type) + sizeof(struct btf_var);
	uint8_t *types = realloc(btf->kernel_types, btf->type_len + add);
	char *strs = malloc(btf->str_len + sizeof(DUMMY_NAME));
	struct btf_type var = { .name_off = btf->str_len,
				.info = (uint32_t)BTF_KIND_VAR << 24, .type = int_id };
	struct btf_var linkage = { .linkage = BTF_VAR_GLOBAL_ALLOCATED };

	if (types)
		btf->kernel_types = types;
	if (!types || !strs) {
		free(strs);
		return -ENOMEM;
	}
	memcpy(types + btf->type_len, &var, sizeof(var));
	memcpy(types + btf->type_len + sizeof(var), &linkage, sizeof(linkage));
	btf->kernel_type_len = btf->type_len + (uint32_t)add;
	memcpy(strs, btf->strs, btf->str_len);
	memcpy(strs + btf->str_len, DUMMY_NAME, sizeof(DUMMY_NAME));
	btf->kernel_strs = strs;
	btf->kernel_str_len = btf->str_len + (uint32_t)sizeof(DUMMY_NAME);
	*name_off = var.name_off;
	return (int)btf->ntypes;
}

static int ksyms(struct brt_btf *btf, uint32_t sec_id)
{
	const struct btf_type *sec = brt_btf_type(btf, sec_id);
	const struct btf_var_secinfo *vs = (const struct btf_var_secinfo *)(const void *)(sec + 1);
	uint32_t n = BTF_INFO_VLEN(sec->info), int_id = int32_id(btf), dummy_name = 0;
	struct btf_var_secinfo *wvs;
	int dummy = 0;

	for (uint32_t i = 0; i < n && !dummy; i++) {
		const struct btf_type *t = brt_btf_type(btf, vs[i].type);

		if (t && BTF_INFO_KIND(t->info) == BTF_KIND_FUNC) {
			dummy = add_dummy(btf, int_id, &dummy_name);
			if (dummy < 0)
				return dummy;
		}
	}
	/* after add_dummy(): kernel_types may have moved */
	wvs = (struct btf_var_secinfo *)(void *)(wr(btf, sec) + 1);
	for (uint32_t i = 0; i < n; i++) {
		const struct btf_type *t = brt_btf_type(btf, vs[i].type);

		if (!t)
			continue;
		if (BTF_INFO_KIND(t->info) == BTF_KIND_FUNC) {
			const struct btf_type *proto = brt_btf_type(btf, t->type);

			if (proto && BTF_INFO_KIND(proto->info) == BTF_KIND_FUNC_PROTO) {
				struct btf_param *p = (struct btf_param *)(void *)(wr(btf, proto) + 1);

				for (uint32_t k = 0; k < BTF_INFO_VLEN(proto->info); k++)
					if (p[k].type && !p[k].name_off)
						p[k].name_off = dummy_name;
			}
			wr(btf, t)->info = (t->info & ~0xffffu) | BTF_FUNC_GLOBAL;
			wvs[i].type = (uint32_t)dummy;
		} else if (BTF_INFO_KIND(t->info) == BTF_KIND_VAR) {
			((struct btf_var *)(void *)(wr(btf, t) + 1))->linkage =
				BTF_VAR_GLOBAL_ALLOCATED;
			wr(btf, t)->type = int_id;
		}
		wvs[i].offset = i * 4;
		wvs[i].size = 4;
	}
	wr(btf, sec)->size = n * 4;
	return 0;
}

static void kconfig(struct brt_btf *btf, uint32_t sec_id)
{
	const struct btf_type *sec = brt_btf_type(btf, sec_id);
	const struct btf_var_secinfo *vs = (const struct btf_var_secinfo *)(const void *)(sec + 1);
	struct btf_var_secinfo *wvs = (struct btf_var_secinfo *)(void *)(wr(btf, sec) + 1);
	uint32_t n = BTF_INFO_VLEN(sec->info), sz;
	int64_t total = brt_elf_kconfig_off(btf, sec, n, &sz);

	if (total < 0 || total > UINT32_MAX)
		return; /* the .kconfig map is refused with the reason (maps_sec.c) */
	for (uint32_t i = 0; i < n; i++) {
		const struct btf_type *t = brt_btf_type(btf, vs[i].type);
		int64_t off = brt_elf_kconfig_off(btf, sec, i, &sz);

		if (t && BTF_INFO_KIND(t->info) == BTF_KIND_VAR)
			((struct btf_var *)(void *)(wr(btf, t) + 1))->linkage =
				BTF_VAR_GLOBAL_ALLOCATED;
		wvs[i].offset = (uint32_t)off;
		wvs[i].size = sz;
	}
	wr(btf, sec)->size = (uint32_t)total;
}

int brt_elf_btf_externs(struct brt_elf_ctx *ctx)
{
	struct brt_btf *btf = ctx->obj->btf;
	int id;

	if (!btf || !btf->kernel_types)
		return 0;
	id = brt_elf_datasec(ctx, ".kconfig");
	if (id > 0)
		kconfig(btf, (uint32_t)id);
	id = brt_elf_datasec(ctx, ".ksyms");
	return id > 0 ? ksyms(btf, (uint32_t)id) : 0;
}
