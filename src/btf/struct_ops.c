/* struct_ops.c - the structs of operations the kernel registers (struct_ops.def) found in
 * its BTF: the struct's type id, which attach_btf_id of a BPF_PROG_TYPE_STRUCT_OPS program
 * names, and the value type bpf_struct_ops_<name> (its common header, then the struct),
 * which btf_vmlinux_value_type_id of a BPF_MAP_TYPE_STRUCT_OPS map names.  As the kernel's
 * bpf_struct_ops_find() and bpf_struct_ops_find_value(), by id; the stub functions
 * "<name>__<member>" give an argument's "__nullable" / "__ref" suffix (prepare_arg_info()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "btf/btf.h"

static const struct {
	const char *name;
	int kind;
	const char *no_stub;
} table[] = {
#define BRT_STRUCT_OPS(name, kind, no_stub) { #name, kind, no_stub },
#include "btf/struct_ops.def"
#undef BRT_STRUCT_OPS
};

static int resolve(const struct brt_btf *btf, size_t i, struct brt_struct_ops *out)
{
	char vname[128];
	int id, vid;

	snprintf(vname, sizeof(vname), "bpf_struct_ops_%s", table[i].name);
	id = brt_btf_find(btf, table[i].name, BTF_KIND_STRUCT);
	vid = brt_btf_find(btf, vname, BTF_KIND_STRUCT);
	if (id <= 0 || vid <= 0)
		return -ENOENT;
	out->name = table[i].name;
	out->kind = table[i].kind;
	out->no_stub = table[i].no_stub;
	out->type_id = (uint32_t)id;
	out->value_id = (uint32_t)vid;
	out->type = brt_btf_type(btf, (uint32_t)id);
	out->value = brt_btf_type(btf, (uint32_t)vid);
	return 0;
}

int brt_struct_ops_find(const struct brt_btf *btf, uint32_t id, int by_value,
			struct brt_struct_ops *out)
{
	for (size_t i = 0; btf && id && i < sizeof(table) / sizeof(table[0]); i++)
		if (!resolve(btf, i, out) && (by_value ? out->value_id : out->type_id) == id)
			return 0;
	return -ENOENT;
}

int brt_struct_ops_by_name(const struct brt_btf *btf, const char *name,
			   struct brt_struct_ops *out)
{
	for (size_t i = 0; btf && name && i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, name))
			return resolve(btf, i, out);
	return -ENOENT;
}

int brt_struct_ops_stubbed(const struct brt_struct_ops *st, const char *member)
{
	char key[80];

	if (snprintf(key, sizeof(key), " %s ", member) >= (int)sizeof(key))
		return 1;
	return !strstr(st->no_stub, key);
}

const struct btf_type *brt_btf_func_ptr_proto(const struct brt_btf *btf, uint32_t id)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, id));

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_PTR)
		return NULL;
	t = brt_btf_type(btf, brt_btf_skip_mods(btf, t->type));
	return t && BTF_INFO_KIND(t->info) == BTF_KIND_FUNC_PROTO ? t : NULL;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

unsigned brt_struct_ops_arg_flags(const struct brt_btf *btf, const struct brt_struct_ops *st,
				  const char *member, uint32_t arg)
{
	const struct btf_type *f, *proto;
	const struct btf_param *p;
	char name[160];
	unsigned flags = 0;
	int id;

	if (snprintf(name, sizeof(name), "%s__%s", st->name, member) >= (int)sizeof(name))
		return 0;
	id = brt_btf_find(btf, name, BTF_KIND_FUNC);
	f = id > 0 ? brt_btf_type(btf, (uint32_t)id) : NULL;
	proto = f ? brt_btf_type(btf, f->type) : NULL;
	if (!proto || BTF_INFO_KIND(proto->info) != BTF_KIND_FUNC_PROTO ||
	    arg >= BTF_INFO_VLEN(proto->info))
		return 0;
	p = (const struct btf_param *)(proto + 1);
	if (has_suffix(brt_btf_str(btf, p[arg].name_off), "__nullable"))
		flags |= BRT_STOPS_ARG_NULLABLE;
	if (has_suffix(brt_btf_str(btf, p[arg].name_off), "__ref"))
		flags |= BRT_STOPS_ARG_REF;
	return flags;
}
