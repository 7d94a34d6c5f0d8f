/* graph.c - objects a program allocates (bpf_obj_new_impl and its percpu twin, dropped by
 * bpf_obj_drop_impl, shared by bpf_refcount_acquire_impl) and the graph data structures
 * they link into (bpf_list_*, bpf_rbtree_*), as Linux 6.18's verifier checks them.
 *
 * An allocated object is PTR_TO_BTF_ID | MEM_ALLOC typed by a struct of the program's BTF
 * (opts->local_btf), owned by the reference bpf_obj_new acquired.  Its special fields
 * (the kernel's btf_record: bpf_spin_lock, bpf_list_head/node, bpf_rb_root/node,
 * bpf_refcount) are found in the BTF as btf_parse_fields() finds them; a graph root's
 * "contains:TYPE:FIELD" decl tag names the struct its nodes live in and their node
 * member.  A map value's fields come from the map's BTF (a struct, or a DATASEC of global
 * variables).  Pushing a node into a list or tree turns the owning reference into a
 * non-owning one (NON_OWN_REF), valid only while the root's bpf_spin_lock is held: every
 * non-owning reference dies at bpf_spin_unlock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btf/btf.h"
#include "verifier/internal.h"

/* the kernel's sizes of the special structs (include/uapi/linux/bpf.h) */
static const struct {
	const char *name;
	uint32_t size;
	uint32_t align;
} special[BRT_GF_COUNT] = {
	[BRT_GF_SPIN_LOCK] = { "bpf_spin_lock", 4, 4 },
	[BRT_GF_RES_SPIN_LOCK] = { "bpf_res_spin_lock", 4, 4 },
	[BRT_GF_LIST_HEAD] = { "bpf_list_head", 16, 8 },
	[BRT_GF_LIST_NODE] = { "bpf_list_node", 24, 8 },
	[BRT_GF_RB_ROOT] = { "bpf_rb_root", 16, 8 },
	[BRT_GF_RB_NODE] = { "bpf_rb_node", 32, 8 },
	[BRT_GF_REFCOUNT] = { "bpf_refcount", 4, 4 },
	/* btf_field_type_name()'s names of the pointer fields */
	[BRT_GF_KPTR_UNREF] = { "kptr", 8, 8 },
	[BRT_GF_KPTR_REF] = { "kptr", 8, 8 },
	[BRT_GF_KPTR_PERCPU] = { "percpu_kptr", 8, 8 },
};

const char *brt_gfield_name(int kind)
{
	return kind >= 0 && kind < BRT_GF_COUNT ? special[kind].name : "";
}

static unsigned kind_of(const struct btf_type *t)
{
	return t ? BTF_INFO_KIND(t->info) : BTF_KIND_UNKN;
}

static int is_struct(const struct btf_type *t)
{
	return kind_of(t) == BTF_KIND_STRUCT || kind_of(t) == BTF_KIND_UNION;
}

/* btf_get_field_type(): which special struct t is, or -1 */
static int special_kind(const struct brt_btf *btf, const struct btf_type *t)
{
	const char *n;

	if (kind_of(t) != BTF_KIND_STRUCT)
		return -1;
	n = brt_btf_str(btf, t->name_off);
	for (int k = 0; n && k < BRT_GF_KPTR_UNREF; k++)
		if (!strcmp(n, special[k].name))
			return k;
	return -1;
}

/* btf_find_decl_tag_value(btf, pt, comp_idx, "contains:"): the one such tag's value */
static const char *contains_tag(const struct brt_btf *btf, uint32_t pt_id, int comp_idx, int *err)
{
	const char *found = NULL;

	for (uint32_t i = 1; i < btf->ntypes; i++) {
		const struct btf_type *t = brt_btf_type(btf, i);
		const char *n;

		if (kind_of(t) != BTF_KIND_DECL_TAG || t->type != pt_id ||
		    ((const struct btf_decl_tag *)(t + 1))->component_idx != comp_idx)
			continue;
		n = brt_btf_str(btf, t->name_off);
		if (!n || strncmp(n, "contains:", 9))
			continue;
		if (found) {
			*err = -EEXIST;
			return NULL;
		}
		found = n + 9;
	}
	if (!found)
		*err = -ENOENT;
	return found;
}

/* btf_find_graph_root() and btf_parse_graph_root(): the value struct and its node */
static int graph_root(const struct brt_btf *btf, uint32_t pt_id, int comp_idx,
		      struct brt_gfield *f)
{
	int err = 0, id;
	const char *v = contains_tag(btf, pt_id, comp_idx, &err), *colon;
	char tname[128];
	const struct btf_type *vt;
	const struct btf_member *m;

	if (!v)
		return -EINVAL;
	colon = strchr(v, ':');
	if (!colon || !colon[1] || (size_t)(colon - v) >= sizeof(tname))
		return -EINVAL;
	memcpy(tname, v, (size_t)(colon - v));
	tname[colon - v] = 0;
	id = brt_btf_find(btf, tname, BTF_KIND_STRUCT);
	if (id <= 0)
		return -ENOENT;
	f->value_id = (uint32_t)id;
	vt = brt_btf_type(btf, (uint32_t)id);
	m = (const struct btf_member *)(vt + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(vt->info); i++) {
		const char *mn = brt_btf_str(btf, m[i].name_off);
		const struct btf_type *mt = brt_btf_type(btf, m[i].type);
		uint32_t bits = BTF_INFO_KFLAG(vt->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							  : m[i].offset;
		int want = f->kind == BRT_GF_LIST_HEAD ? BRT_GF_LIST_NODE : BRT_GF_RB_NODE;

		if (!mn || strcmp(mn, colon + 1))
			continue;
		if (special_kind(btf, mt) != want || bits % 8)
			return -EINVAL;
		f->node_off = bits / 8;
		return 0;
	}
	return -EINVAL;
}

/* btf_find_kptr(): t (a member's type, volatile skipped) is a pointer whose target is
 * one type tag "kptr_untrusted", "kptr" or "percpu_kptr" on a struct: its kind and the
 * struct's id; 0 not a kptr (also "uptr", which bpfrt does not have), -EINVAL a tag
 * btf_find_kptr() refuses */
static int kptr_kind(const struct brt_btf *btf, const struct btf_type *t, uint32_t *sid)
{
	const struct btf_type *tag, *st;
	const char *v;
	uint32_t id;

	if (kind_of(t) == BTF_KIND_VOLATILE)
		t = brt_btf_type(btf, t->type);
	if (kind_of(t) != BTF_KIND_PTR)
		return 0;
	tag = brt_btf_type(btf, t->type);
	if (kind_of(tag) != BTF_KIND_TYPE_TAG || BTF_INFO_KFLAG(tag->info))
		return 0;
	if (kind_of(brt_btf_type(btf, tag->type)) == BTF_KIND_TYPE_TAG)
		return -EINVAL;
	v = brt_btf_str(btf, tag->name_off);
	if (!v)
		return -EINVAL;
	id = brt_btf_skip_mods(btf, tag->type);
	st = brt_btf_type(btf, id);
	if (!strcmp(v, "uptr"))
		return 0;
	if (strcmp(v, "kptr_untrusted") && strcmp(v, "kptr") && strcmp(v, "percpu_kptr"))
		return -EINVAL;
	if (!is_struct(st))
		return -EINVAL;
	*sid = id;
	return !strcmp(v, "kptr_untrusted") ? BRT_GF_KPTR_UNREF
	       : !strcmp(v, "kptr")         ? BRT_GF_KPTR_REF
					    : BRT_GF_KPTR_PERCPU;
}

/* btf_parse_kptr(): a struct vmlinux has by name and kind is the kernel's; any other is an
 * object of bpf_obj_new (bpf_testmod's types, which the kernel would find in the module's
 * BTF, count as local here as they do on a kernel without the module) */
static int kernel_type(const struct brt_btf *btf, uint32_t id)
{
	const struct brt_btf *vm = brt_btf_vmlinux();
	const struct btf_type *t = brt_btf_type(btf, id);
	const char *n = t ? brt_btf_str(btf, t->name_off) : NULL;

	return vm && n && *n && brt_btf_find(vm, n, kind_of(t)) > 0;
}

static int add_field(struct brt_grec *rec, const struct brt_gfield *f)
{
	if (rec->n >= BRT_MAX_GFIELDS)
		return -E2BIG;
	rec->f[rec->n++] = *f;
	if (f->kind == BRT_GF_SPIN_LOCK)
		rec->spin_lock_off = (int32_t)f->off;
	if (f->kind == BRT_GF_RES_SPIN_LOCK)
		rec->res_spin_lock_off = (int32_t)f->off;
	if (f->kind == BRT_GF_REFCOUNT)
		rec->refcount_off = (int32_t)f->off;
	return 0;
}

static int find_in_struct(const struct brt_btf *btf, uint32_t id, uint32_t base, int depth,
			  struct brt_grec *rec);

/* btf_find_field_one(): the fields of one member or variable (pt_id/comp_idx name where
 * its decl tags hang), arrays of them repeated */
static int find_one(const struct brt_btf *btf, uint32_t type_id, uint32_t pt_id, int comp_idx,
		    uint32_t off, int depth, struct brt_grec *rec)
{
	const struct btf_type *t = brt_btf_type(btf, type_id);
	uint32_t nelems = 1, first = (uint32_t)rec->n;
	struct brt_gfield f = { 0 };
	int k, err;

	for (int i = 0; i < 32 && kind_of(t) == BTF_KIND_ARRAY; i++) {
		const struct btf_array *a = (const struct btf_array *)(t + 1);

		nelems *= a->nelems;
		t = brt_btf_type(btf, a->type);
	}
	if (!nelems || !t)
		return 0;
	k = special_kind(btf, t);
	if (k < 0 && !is_struct(t)) {
		uint32_t sid = 0;

		k = kptr_kind(btf, t, &sid);
		if (k <= 0 || off % 8)
			return k < 0 ? k : 0;
		f.kind = (uint8_t)k;
		f.off = off;
		f.size = 8;
		f.value_id = sid;
		f.kernel = (uint8_t)kernel_type(btf, sid);
		err = add_field(rec, &f);
		goto repeat;
	}
	if (k < 0) {
		if (!is_struct(t))
			return 0;
		if (depth >= 32)
			return -E2BIG;
		err = find_in_struct(btf, brt_btf_skip_mods(btf, type_id == 0 ? 0 : type_id),
				     off, depth + 1, rec);
		/* the element type of an array: look inside the innermost struct */
		if (!err && kind_of(brt_btf_type(btf, type_id)) == BTF_KIND_ARRAY)
			err = 0;
		goto repeat;
	}
	if (t->size != special[k].size || off % special[k].align)
		return 0;
	f.kind = (uint8_t)k;
	f.off = off;
	f.size = t->size;
	if (k == BRT_GF_LIST_HEAD || k == BRT_GF_RB_ROOT) {
		err = graph_root(btf, pt_id, comp_idx, &f);
		if (err)
			return err;
	}
	err = add_field(rec, &f);
repeat:
	if (err)
		return err;
	for (uint32_t e = 1; e < nelems && t->size; e++) {
		uint32_t n = (uint32_t)rec->n;

		for (uint32_t i = first; i < n; i++) {
			struct brt_gfield g = rec->f[i];

			g.off += e * (k < 0 ? t->size : special[k].size);
			err = add_field(rec, &g);
			if (err)
				return err;
		}
		if ((uint32_t)rec->n == n)
			break;
	}
	return 0;
}

static int find_in_struct(const struct brt_btf *btf, uint32_t id, uint32_t base, int depth,
			  struct brt_grec *rec)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	const struct btf_member *m;

	if (!is_struct(t))
		return 0;
	m = (const struct btf_member *)(t + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							: m[i].offset;
		int err;

		if (bits % 8)
			return -EINVAL;
		err = find_one(btf, brt_btf_skip_mods(btf, m[i].type), id, (int)i, base + bits / 8,
			       depth, rec);
		if (err)
			return err;
	}
	return 0;
}

static void rec_init(struct brt_grec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->spin_lock_off = -1;
	rec->res_spin_lock_off = -1;
	rec->refcount_off = -1;
}

int brt_graph_record(const struct brt_btf *btf, uint32_t id, struct brt_grec *rec)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	int err = 0;

	rec_init(rec);
	if (kind_of(t) == BTF_KIND_DATASEC) {
		const struct btf_var_secinfo *v = (const struct btf_var_secinfo *)(t + 1);

		for (uint32_t i = 0; !err && i < BTF_INFO_VLEN(t->info); i++) {
			const struct btf_type *var = brt_btf_type(btf, v[i].type);

			if (kind_of(var) != BTF_KIND_VAR)
				continue;
			err = find_one(btf, brt_btf_skip_mods(btf, var->type), v[i].type, -1,
				       v[i].offset, 0, rec);
		}
	} else if (is_struct(t)) {
		err = find_in_struct(btf, id, 0, 0, rec);
	}
	return err;
}

/* btf_find_struct_meta(): a struct of the program's BTF with a special member of its own
 * has a record (btf_parse_struct_metas() looks no deeper to decide).  Its alloc_obj_fields
 * lack bpf_res_spin_lock: a struct whose only special member is one has no record, and its
 * lock cannot be taken ("local 'kptr' has no valid bpf_res_spin_lock"), as measured. */
static int meta_parse(const struct brt_btf *btf, uint32_t id, struct brt_grec *rec)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	const struct btf_member *m;
	int has = 0, err;

	rec_init(rec);
	if (kind_of(t) != BTF_KIND_STRUCT)
		return 0;
	m = (const struct btf_member *)(t + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info) && !has; i++) {
		const struct btf_type *mt = brt_btf_type(btf, m[i].type);
		uint32_t sid;

		has = (special_kind(btf, mt) >= 0 && special_kind(btf, mt) != BRT_GF_RES_SPIN_LOCK) ||
		      kptr_kind(btf, mt, &sid) > 0;
	}
	if (!has)
		return 0;
	err = brt_graph_record(btf, id, rec);
	return err ? (err < 0 ? err : -EINVAL) : 1;
}

static int struct_meta(const struct brt_btf *btf, uint32_t id, struct brt_grec *rec)
{
	return meta_parse(btf, id, rec) > 0;
}

int brt_verifier_btf_struct_metas(const struct brt_btf *btf)
{
	struct brt_grec rec;

	for (uint32_t id = 1; id < btf->ntypes; id++) {
		int err = meta_parse(btf, id, &rec);

		if (err < 0)
			return err;
	}
	return 0;
}

/* the home of a map value's fields: its map's BTF, or the program's when there is one
 * (see brt_graph_home_btf()); maps whose BTF is the same bytes share the first one's */
static uint16_t map_home(struct brt_env *env, int map_idx)
{
	const struct brt_map_info *mi = &env->maps[map_idx].info;

	if (env->opts->local_btf)
		return 0;
	for (int j = 0; j < map_idx; j++) {
		const struct brt_map_info *o = &env->maps[j].info;

		if (o->btf_blob && o->btf_size == mi->btf_size &&
		    (o->btf_blob == mi->btf_blob || !memcmp(o->btf_blob, mi->btf_blob, mi->btf_size)))
			return (uint16_t)(j + 1);
	}
	return (uint16_t)(map_idx + 1);
}

const struct brt_btf *brt_graph_home_btf(struct brt_env *env, uint16_t home)
{
	if (!home)
		return env->opts->local_btf;
	return home <= env->nmaps ? brt_graph_map_btf(env, home - 1) : NULL;
}

int brt_graph_reg_record(struct brt_env *env, const struct brt_reg *reg, struct brt_grec *rec)
{
	uint16_t home;
	int ok;

	if (BASE_TYPE(reg->type) == PTR_TO_BTF_ID && (reg->type & MEM_ALLOC)) {
		const struct brt_btf *b = brt_graph_home_btf(env, reg->map_idx);

		home = reg->map_idx;
		ok = b && struct_meta(b, reg->btf_id, rec);
		if (!b)
			rec_init(rec);
	} else if (reg->type == PTR_TO_MAP_VALUE) {
		const struct brt_btf *b = brt_graph_map_btf(env, reg->map_idx);

		rec_init(rec);
		home = map_home(env, reg->map_idx);
		ok = b && !brt_graph_record(b, env->maps[reg->map_idx].info.btf_value_type_id, rec);
	} else {
		rec_init(rec);
		return 0;
	}
	for (int i = 0; i < rec->n; i++)
		rec->f[i].home = home;
	return ok;
}

const struct brt_btf *brt_graph_map_btf(struct brt_env *env, int map_idx)
{
	struct brt_vmap *vm = &env->maps[map_idx];
	char msg[64];

	if (vm->info.btf) /* parsed once for the map's blob by the caller (api/check.c) */
		return vm->info.btf;
	if (!vm->vbtf_tried) {
		vm->vbtf_tried = 1;
		if (vm->info.btf_blob && vm->info.btf_size &&
		    brt_btf_parse(vm->info.btf_blob, vm->info.btf_size, &vm->vbtf, msg,
				  sizeof(msg)))
			vm->vbtf = NULL;
	}
	return vm->vbtf;
}

void brt_graph_free(struct brt_env *env)
{
	for (int i = 0; i < env->nmaps; i++) {
		free(env->maps[i].vrec);
		env->maps[i].vrec = NULL;
		env->maps[i].vrec_tried = 0;
	}
	for (int i = 0; i < env->nmaps; i++)
		if (env->maps[i].vbtf) {
			brt_btf_free(env->maps[i].vbtf);
			env->maps[i].vbtf = NULL;
		}
}

const char *brt_local_type_name(struct brt_env *env, uint16_t home, uint32_t id)
{
	const struct brt_btf *b = brt_graph_home_btf(env, home);
	const char *n = b ? brt_btf_name(b, id) : NULL;

	return n ? n : "";
}

/* ---- bpf_obj_new_impl / bpf_percpu_obj_new_impl / bpf_refcount_acquire_impl ---------- */
/* __btf_type_is_scalar_struct() of the program's BTF: ints, enums and arrays of them,
 * and such structs, 3 deep */
static int scalar_struct(struct brt_env *env, const struct brt_btf *btf, const struct btf_type *t,
			 int rec)
{
	const struct btf_member *m = (const struct btf_member *)(t + 1);

	if (!is_struct(t))
		return 0;
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		const struct btf_type *mt = brt_btf_type(btf, brt_btf_skip_mods(btf, m[i].type));

		if (is_struct(mt)) {
			if (rec >= 3) {
				brt_verr(env, "max struct nesting depth exceeded\n");
				return 0;
			}
			if (!scalar_struct(env, btf, mt, rec + 1))
				return 0;
			continue;
		}
		if (kind_of(mt) == BTF_KIND_ARRAY) {
			const struct btf_array *a = (const struct btf_array *)(mt + 1);

			mt = brt_btf_type(btf, brt_btf_skip_mods(btf, a->type));
			if (!a->nelems || (kind_of(mt) != BTF_KIND_INT && kind_of(mt) != BTF_KIND_ENUM))
				return 0;
			continue;
		}
		if (kind_of(mt) != BTF_KIND_INT && kind_of(mt) != BTF_KIND_ENUM)
			return 0;
	}
	return 1;
}

/* the list of types the run allocates (the result's obj_types), with the lists and trees
 * a dropped object of the type empties */
static int note_type(struct brt_env *env, uint32_t id, uint32_t size, const struct brt_grec *rec,
		     int percpu)
{
	struct brt_obj_type *t;

	for (uint32_t i = 0; i < env->nobj_types; i++)
		if (env->obj_types[i].btf_id == id && env->obj_types[i].percpu == (uint32_t)percpu)
			return 0;
	if (env->nobj_types >= BRT_MAX_OBJ_TYPES) {
		brt_verr(env, "too many types allocated by bpf_obj_new (bpfrt's limit %d)\n",
			 BRT_MAX_OBJ_TYPES);
		return -E2BIG;
	}
	if (!env->obj_types) {
		env->obj_types = calloc(BRT_MAX_OBJ_TYPES, sizeof(*env->obj_types));
		if (!env->obj_types)
			return -ENOMEM;
	}
	t = &env->obj_types[env->nobj_types++];
	*t = (struct brt_obj_type){ .btf_id = id, .size = size,
				    .refcount_off = rec ? rec->refcount_off : -1,
				    .percpu = (uint32_t)percpu };
	for (int i = 0; rec && i < rec->n && t->nroots < BRT_OBJ_MAX_ROOTS; i++)
		if (rec->f[i].kind == BRT_GF_LIST_HEAD || rec->f[i].kind == BRT_GF_RB_ROOT)
			t->roots[t->nroots++] = (struct brt_obj_root){
				.off = rec->f[i].off, .node_off = rec->f[i].node_off,
				.rb = rec->f[i].kind == BRT_GF_RB_ROOT
			};
		else if (BRT_GF_IS_KPTR(rec->f[i].kind) && !rec->f[i].kernel)
			t->roots[t->nroots++] = (struct brt_obj_root){ .off = rec->f[i].off,
								       .rb = BRT_ROOT_KPTR };
	return 0;
}

/* check_special_kfunc()'s bpf_obj_new_impl / bpf_percpu_obj_new_impl: r0 becomes an
 * allocated object of the constant type id (the caller adds PTR_MAYBE_NULL and the
 * reference) */
int brt_graph_obj_new(struct brt_env *env, uint64_t type_id, int percpu)
{
	const struct brt_btf *btf = env->opts->local_btf;
	struct brt_reg *r0 = &brt_cur_regs(env)[BPF_REG_0];
	const struct btf_type *t;
	struct brt_grec rec;
	int meta;

	if ((uint64_t)(uint32_t)type_id != type_id) {
		brt_verr(env, "local type ID argument must be in range [0, U32_MAX]\n");
		return -EINVAL;
	}
	if (!btf) {
		brt_verr(env, "bpf_obj_new/bpf_percpu_obj_new requires prog BTF\n");
		return -EINVAL;
	}
	t = brt_btf_type(btf, (uint32_t)type_id);
	if (!is_struct(t)) {
		brt_verr(env, "bpf_obj_new/bpf_percpu_obj_new type ID argument must be of a "
			      "struct\n");
		return -EINVAL;
	}
	if (percpu && t->size > 512) { /* BPF_GLOBAL_PERCPU_MA_MAX_SIZE */
		brt_verr(env, "bpf_percpu_obj_new type size (%d) is greater than %d\n", t->size, 512);
		return -EINVAL;
	}
	/* the running 6.18.44 (not 6.18's source) refuses what bpf_mem_alloc() cannot serve:
	 * 4,096 bytes with its 8-byte link (measured: 4,088 taken, 4,092 and 4,096 not) */
	if (!percpu && (uint64_t)t->size + 8 > 4096) {
		brt_verr(env, "bpf_obj_new type size (%u) is more than the allocator serves\n",
			 t->size);
		return -EINVAL;
	}
	meta = struct_meta(btf, (uint32_t)type_id, &rec);
	if (percpu) {
		if (!scalar_struct(env, btf, t, 0)) {
			brt_verr(env, "bpf_percpu_obj_new type ID argument must be of a struct of "
				      "scalars\n");
			return -EINVAL;
		}
		if (meta) {
			brt_verr(env, "bpf_percpu_obj_new type ID argument must not contain special "
				      "fields\n");
			return -EINVAL;
		}
	}
	brt_mark_reg_known_zero(r0);
	r0->type = PTR_TO_BTF_ID | MEM_ALLOC | (percpu ? MEM_PERCPU : 0);
	r0->btf_id = (uint32_t)type_id;
	return note_type(env, (uint32_t)type_id, t->size, meta ? &rec : NULL, percpu);
}

/* KF_ARG_PTR_TO_ALLOC_BTF_ID (bpf_obj_drop_impl's argument) */
int brt_graph_alloc_arg(struct brt_env *env, const struct brt_reg *reg, int argno, int percpu_drop)
{
	if (reg->type == (PTR_TO_BTF_ID | MEM_ALLOC)) {
		if (percpu_drop) {
			brt_verr(env, "arg#%d expected for bpf_obj_drop_impl()\n", argno);
			return -EINVAL;
		}
	} else if (reg->type == (PTR_TO_BTF_ID | MEM_ALLOC | MEM_PERCPU)) {
		if (!percpu_drop) {
			brt_verr(env, "arg#%d expected for bpf_percpu_obj_drop_impl()\n", argno);
			return -EINVAL;
		}
	} else {
		brt_verr(env, "arg#%d expected pointer to allocated object\n", argno);
		return -EINVAL;
	}
	if (!reg->ref_obj_id) {
		brt_verr(env, "allocated object must be referenced\n");
		return -EINVAL;
	}
	return 0;
}

/* KF_ARG_PTR_TO_REFCOUNTED_KPTR (bpf_refcount_acquire_impl's argument): *owning says
 * whether it is an owning reference (then the result is never NULL) */
int brt_graph_refcounted_arg(struct brt_env *env, const struct brt_reg *reg, int argno,
			     int *owning)
{
	struct brt_grec rec;

	if (BASE_TYPE(reg->type) != PTR_TO_BTF_ID || !(reg->type & MEM_ALLOC)) {
		brt_verr(env, "arg#%d is neither owning or non-owning ref\n", argno);
		return -EINVAL;
	}
	*owning = !(reg->type & NON_OWN_REF);
	if (!brt_graph_reg_record(env, reg, &rec) || rec.refcount_off < 0) {
		brt_verr(env, "arg#%d doesn't point to a type with bpf_refcount field\n", argno);
		return -EINVAL;
	}
	return 0;
}

/* ---- loads and stores through an allocated object --------------------------------------- */
/* btf_struct_access()'s first step for a local type: no direct access to a special field */
int brt_graph_access(struct brt_env *env, const struct brt_reg *reg, int off, int size)
{
	struct brt_grec rec;

	if (brt_graph_reg_record(env, reg, &rec))
		for (int i = 0; i < rec.n; i++)
			if (off < (int)(rec.f[i].off + rec.f[i].size) &&
			    off + size > (int)rec.f[i].off) {
				brt_verr(env, "direct access to %s is disallowed\n",
					 brt_gfield_name(rec.f[i].kind));
				return -EACCES;
			}
	return 0;
}

/* ---- the lock, and references into lists and trees ------------------------------------- */
/* invalidate_non_owning_refs(): at bpf_spin_unlock every non-owning reference dies */
void brt_graph_unlock(struct brt_env *env)
{
	struct brt_vstate *st = env->cur;

	for (int fi = 0; fi <= st->curframe; fi++) {
		struct brt_frame *f = st->frame[fi];

		for (int r = 0; r < BRT_NREGS; r++)
			if (f->regs[r].type & NON_OWN_REF)
				brt_mark_reg_invalid(env, &f->regs[r]);
		for (int s = 0; s < f->allocated_stack / 8; s++)
			if (brt_is_spilled(&f->stack[s]) && (f->stack[s].spilled.type & NON_OWN_REF))
				brt_mark_reg_invalid(env, &f->stack[s].spilled);
	}
}

/* reg_may_point_to_spin_lock() for an allocated object: its type has a lock */
int brt_graph_may_lock(struct brt_env *env, const struct brt_reg *reg)
{
	struct brt_grec rec;

	return BASE_TYPE(reg->type) == PTR_TO_BTF_ID && (reg->type & MEM_ALLOC) &&
	       brt_graph_reg_record(env, reg, &rec) &&
	       (rec.spin_lock_off >= 0 || rec.res_spin_lock_off >= 0);
}

/* ref_set_non_owning(): a reference into a list or tree, valid while the lock is held (an
 * object with a bpf_refcount stays RCU-protected after that) */
int brt_graph_set_non_owning(struct brt_env *env, struct brt_reg *reg)
{
	struct brt_grec rec;

	if (!env->cur->active_locks) {
		brt_verr(env, "verifier bug: ref_set_non_owning w/o active lock\n");
		return -EFAULT;
	}
	if (reg->type & NON_OWN_REF) {
		brt_verr(env, "verifier bug: NON_OWN_REF already set\n");
		return -EFAULT;
	}
	reg->type |= NON_OWN_REF;
	if (brt_graph_reg_record(env, reg, &rec) && rec.refcount_off >= 0)
		reg->type |= MEM_RCU;
	return 0;
}

/* ref_convert_owning_non_owning(): every copy of the owning pointer becomes non-owning
 * (the reference itself is released by the caller) */
int brt_graph_owning_to_non_owning(struct brt_env *env, uint32_t ref)
{
	struct brt_vstate *st = env->cur;
	int found = 0, err = 0;

	if (!ref) {
		brt_verr(env, "verifier bug: ref_obj_id is zero for owning -> non-owning "
			      "conversion\n");
		return -EFAULT;
	}
	for (int i = 0; i < st->nrefs; i++)
		found |= st->refs[i].id == ref;
	if (!found) {
		brt_verr(env, "verifier bug: ref state missing for ref_obj_id\n");
		return -EFAULT;
	}
	for (int fi = 0; fi <= st->curframe && !err; fi++) {
		struct brt_frame *f = st->frame[fi];

		for (int r = 0; r < BRT_NREGS && !err; r++)
			if (f->regs[r].ref_obj_id == ref) {
				f->regs[r].ref_obj_id = 0;
				err = brt_graph_set_non_owning(env, &f->regs[r]);
			}
		for (int s = 0; s < f->allocated_stack / 8 && !err; s++)
			if (brt_is_spilled(&f->stack[s]) && f->stack[s].spilled.ref_obj_id == ref) {
				f->stack[s].spilled.ref_obj_id = 0;
				err = brt_graph_set_non_owning(env, &f->stack[s].spilled);
			}
	}
	return err;
}

/* in_rbtree_lock_required_cb(): the walk is inside bpf_rbtree_add's less() callback */
int brt_in_rbtree_cb(const struct brt_env *env)
{
	const struct brt_vstate *st = env->cur;

	return st->curframe > 0 && st->frame[st->curframe]->in_callback_fn &&
	       st->frame[st->curframe]->rbtree_cb;
}

/* push_callback_call() with set_rbtree_add_callback_state(): bpf_rbtree_add_impl's
 * less(a, b) is walked from the call as a callback of a new frame whose r1 and r2 are
 * non-owning references to nodes of the tree (the struct the root's "contains:" tag
 * names, at its node), returning 0 or 1; this path goes on after the call.  The lock
 * stays held inside, where bpf_spin_unlock and the node kfuncs are refused. */
int brt_graph_push_less(struct brt_env *env, int insn_idx, int subprogno,
			const struct brt_gfield *root)
{
	struct brt_frame *caller = brt_cur_frame(env), *callee;
	struct brt_vstate *cb;
	int err;

	if (!root->value_id) {
		brt_verr(env, "verifier bug: bpf_rbtree_add without its root's node type\n");
		return -EFAULT;
	}
	err = brt_push_stack(env, env->subprogs[subprogno].start, insn_idx, &cb);
	if (err)
		return err;
	if (cb->curframe + 1 >= BRT_MAX_FRAMES) {
		brt_verr(env, "the call stack of %d frames is too deep\n", cb->curframe + 2);
		return -E2BIG;
	}
	callee = brt_frame_new(insn_idx, cb->curframe + 1, subprogno);
	if (!callee)
		return -ENOMEM;
	env->scratched_regs = 0xffff;
	env->scratched_stack = ~0ULL;
	for (int r = BPF_REG_1; r <= BPF_REG_2; r++) {
		struct brt_reg *reg = &callee->regs[r];

		/* mark_reg_graph_node() and ref_set_non_owning() */
		brt_mark_reg_known_zero(reg);
		reg->type = PTR_TO_BTF_ID | MEM_ALLOC;
		reg->btf_id = root->value_id;
		reg->map_idx = root->home;
		reg->off = (int32_t)root->node_off;
		err = brt_graph_set_non_owning(env, reg);
		if (err) {
			free(callee->stack);
			free(callee);
			return err;
		}
	}
	callee->in_callback_fn = 1;
	callee->rbtree_cb = 1;
	cb->callback_unroll++;
	cb->frame[cb->curframe]->callback_depth++;
	cb->frame[++cb->curframe] = callee;
	caller->callback_depth = 0;
	return 0;
}

/* ---- kptrs: pointers to objects of bpf_obj_new in map values and objects --------------- */
/* two parses of one BTF (libbpf hands the kernel one BTF object for the program and its
 * maps; bpfrt compares contents where the kernel compares the objects) */
static int same_btf(const struct brt_btf *a, const struct brt_btf *b)
{
	return a == b || (a && b && a->type_len == b->type_len && a->str_len == b->str_len &&
			  !memcmp(a->type_data, b->type_data, a->type_len) &&
			  !memcmp(a->strs, b->strs, a->str_len));
}

const struct brt_grec *brt_graph_map_rec(struct brt_env *env, int map_idx)
{
	struct brt_vmap *vm = &env->maps[map_idx];

	if (!vm->vrec_tried) {
		const struct brt_btf *b = brt_graph_map_btf(env, map_idx);

		vm->vrec_tried = 1;
		vm->vrec = b ? malloc(sizeof(*vm->vrec)) : NULL;
		if (vm->vrec && brt_graph_record(b, vm->info.btf_value_type_id, vm->vrec)) {
			free(vm->vrec);
			vm->vrec = NULL;
		}
		/* bpfrt frees kptrs in hash, LRU hash and array maps only (api/btf_load.c) */
		vm->vrec_local = vm->vrec && same_btf(b, env->opts->local_btf) &&
				 (vm->info.type == BPF_MAP_TYPE_HASH ||
				  vm->info.type == BPF_MAP_TYPE_LRU_HASH ||
				  vm->info.type == BPF_MAP_TYPE_ARRAY);
	}
	return vm->vrec;
}

/* bpfrt has kptrs to objects of bpf_obj_new only: a kernel type's kptr field stays the
 * plain 8 bytes it was before (a documented difference) */
const struct brt_gfield *brt_graph_kptr_at(const struct brt_grec *rec, int64_t off)
{
	for (int i = 0; rec && i < rec->n; i++)
		if (BRT_GF_IS_KPTR(rec->f[i].kind) && !rec->f[i].kernel && rec->f[i].off == off)
			return &rec->f[i];
	return NULL;
}

static const char *kptr_type_name(struct brt_env *env, const struct brt_gfield *f)
{
	return brt_local_type_name(env, f->home, f->value_id);
}

/* map_kptr_match_type() for a pointer to an object of bpf_obj_new (a kernel pointer never
 * matches a local kptr: the types are of different BTFs) */
int brt_graph_kptr_match(struct brt_env *env, const struct brt_gfield *f, const struct brt_reg *reg,
			 int regno)
{
	uint32_t perm = PTR_MAYBE_NULL | MEM_ALLOC | (f->kind == BRT_GF_KPTR_PERCPU ? MEM_PERCPU : 0);
	const char *rname = "";

	if (BASE_TYPE(reg->type) != PTR_TO_BTF_ID || ((reg->type & ~0xffu) & ~perm))
		goto bad;
	/* as measured on 6.18.44: an object and a kptr field of which only one is percpu
	 * are told apart before the type's name is read */
	if (!(reg->type & MEM_PERCPU) != (f->kind != BRT_GF_KPTR_PERCPU))
		goto bad;
	rname = brt_btf_local(reg->type) ? brt_local_type_name(env, reg->map_idx, reg->btf_id)
					  : brt_btf_reg_name(env, reg->btf_id);
	if (brt_check_ptr_fixed_off_reg(env, reg, regno))
		return -EACCES;
	/* btf_struct_ids_match(), strict for referenced kptrs: the same type at offset 0 */
	if ((reg->type & MEM_ALLOC) && reg->btf_id == f->value_id && reg->map_idx == f->home &&
	    !reg->off)
		return 0;
bad:
	brt_verr(env, "invalid kptr access, R%d type=%s%s ", regno, brt_reg_type_str(env, reg->type),
		 rname);
	brt_verr(env, "expected=%s%s", brt_reg_type_str(env, PTR_TO_BTF_ID), kptr_type_name(env, f));
	if (f->kind == BRT_GF_KPTR_UNREF)
		brt_verr(env, " or %s%s\n", brt_reg_type_str(env, PTR_TO_BTF_ID | PTR_UNTRUSTED),
			 kptr_type_name(env, f));
	else
		brt_verr(env, "\n");
	return -EINVAL;
}

/* in_rcu_cs(): an RCU read section, a lock held, or a program that cannot sleep */
static int in_rcu_cs(const struct brt_env *env)
{
	return env->cur->active_rcu || env->cur->active_locks ||
	       !(env->opts->prog_flags & BPF_F_SLEEPABLE);
}

/* btf_ld_kptr_type(): what a load of the field gives (local types are always
 * rcu_protected_object()) */
static uint32_t ld_kptr_type(struct brt_env *env, const struct brt_gfield *f)
{
	const struct brt_btf *b = brt_graph_home_btf(env, f->home);
	uint32_t t = PTR_MAYBE_NULL;
	struct brt_grec rec;

	if (f->kind != BRT_GF_KPTR_UNREF && in_rcu_cs(env)) {
		t |= MEM_RCU | (f->kind == BRT_GF_KPTR_PERCPU ? MEM_PERCPU : MEM_ALLOC);
		if (b && struct_meta(b, f->value_id, &rec))
			for (int i = 0; i < rec.n; i++)
				if (rec.f[i].kind == BRT_GF_LIST_NODE || rec.f[i].kind == BRT_GF_RB_NODE)
					t |= NON_OWN_REF;
	} else {
		/* untrusted, still an object of the program's BTF: bpfrt's MEM_ALLOC tells
		 * it from a kernel type (the kernel looks at reg->btf), the log does not
		 * show it; a percpu one is no longer percpu_ (reads go to the object as
		 * the kernel's probe reads do) */
		t |= PTR_UNTRUSTED | MEM_ALLOC;
	}
	return t;
}

int brt_graph_kptr_access(struct brt_env *env, const struct brt_gfield *f, int value_regno)
{
	const struct bpf_insn *insn = &env->insns[env->insn_idx];
	int cls = BPF_CLASS(insn->code);

	if (BPF_MODE(insn->code) != BPF_MEM) {
		brt_verr(env, "kptr in map can only be accessed using BPF_MEM instruction mode\n");
		return -EACCES;
	}
	if (cls != BPF_LDX && f->kind != BRT_GF_KPTR_UNREF) {
		brt_verr(env, "store to referenced kptr disallowed\n");
		return -EACCES;
	}
	if (cls == BPF_LDX) {
		struct brt_reg *r = &brt_cur_regs(env)[value_regno];

		/* mark_btf_ld_reg(): PTR_TO_BTF_ID of the program's BTF, maybe NULL (an id) */
		brt_mark_reg_known_zero(r);
		r->type = PTR_TO_BTF_ID | ld_kptr_type(env, f);
		r->btf_id = f->value_id;
		r->map_idx = f->home;
		r->id = ++env->id_gen;
		/* read through on the checked engine: the object may be another process's
		 * (a pinned map shared), whose address means nothing here, or (untrusted)
		 * already freed; this process's live objects are readable there
		 * (brt_vm_set_obj_fn()) */
		env->btf_loads = 1;
		return 0;
	}
	if (cls == BPF_STX) {
		const struct brt_reg *v = &brt_cur_regs(env)[value_regno];

		return brt_reg_is_null(v) ? 0 : brt_graph_kptr_match(env, f, v, value_regno) ? -EACCES : 0;
	}
	if (cls == BPF_ST) {
		if (insn->imm) {
			brt_verr(env, "BPF_ST imm must be 0 when storing to kptr at off=%u\n", f->off);
			return -EACCES;
		}
		return 0;
	}
	brt_verr(env, "kptr in map can only be accessed using BPF_LDX/BPF_STX/BPF_ST\n");
	return -EACCES;
}

int brt_graph_kptr_release(struct brt_env *env, uint32_t ref)
{
	struct brt_vstate *st = env->cur;
	int in_rcu = in_rcu_cs(env);

	if (brt_release_ref_state(st, ref))
		return -EINVAL;
	for (int fi = 0; fi <= st->curframe; fi++) {
		struct brt_frame *f = st->frame[fi];

		for (int r = 0; r < BRT_NREGS + f->allocated_stack / 8; r++) {
			struct brt_reg *reg = r < BRT_NREGS ? &f->regs[r]
							    : &f->stack[r - BRT_NREGS].spilled;

			if (r >= BRT_NREGS && !brt_is_spilled(&f->stack[r - BRT_NREGS]))
				continue;
			if (reg->ref_obj_id != ref)
				continue;
			if (in_rcu && (reg->type & MEM_ALLOC) && (reg->type & MEM_PERCPU)) {
				reg->ref_obj_id = 0;
				reg->type = (reg->type & ~MEM_ALLOC) | MEM_RCU;
			} else {
				brt_mark_reg_invalid(env, reg);
			}
		}
	}
	return 0;
}

/* process_kptr_func(): bpf_kptr_xchg's first argument, a map value or an allocated
 * object at a referenced kptr field of a constant offset */
int brt_graph_kptr_dest(struct brt_env *env, int regno, struct brt_gfield *out)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	const struct brt_grec *rec = NULL;
	struct brt_grec orec;
	const struct brt_gfield *f = NULL;
	int64_t at;
	int has = 0;

	if (reg->type == (PTR_TO_BTF_ID | MEM_ALLOC)) {
		const struct brt_btf *b = brt_graph_home_btf(env, reg->map_idx);

		if (b && struct_meta(b, reg->btf_id, &orec)) {
			for (int i = 0; i < orec.n; i++)
				orec.f[i].home = reg->map_idx;
			rec = &orec;
		}
	} else {
		if (!env->maps[reg->map_idx].info.has_btf) {
			brt_verr(env, "map '%s' has to have BTF in order to use bpf_kptr_xchg\n",
				 env->maps[reg->map_idx].info.map_name);
			return -EINVAL;
		}
		rec = brt_graph_map_rec(env, reg->map_idx);
		if (rec && !env->maps[reg->map_idx].vrec_local)
			rec = NULL; /* types of another BTF than the program's: not bpfrt's */
	}
	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "R%d doesn't have constant offset. kptr has to be at the constant "
			      "offset\n", regno);
		return -EINVAL;
	}
	for (int i = 0; rec && i < rec->n; i++)
		has |= BRT_GF_IS_KPTR(rec->f[i].kind);
	if (!has) {
		brt_verr(env, "R%d has no valid kptr\n", regno);
		return -EINVAL;
	}
	at = (int64_t)reg->off + (int64_t)reg->var_off.value;
	for (int i = 0; i < rec->n && !f; i++)
		if (BRT_GF_IS_KPTR(rec->f[i].kind) && rec->f[i].off == at)
			f = &rec->f[i];
	if (!f) {
		brt_verr(env, "off=%d doesn't point to kptr\n", (int)at);
		return -EACCES;
	}
	if (f->kind == BRT_GF_KPTR_UNREF) {
		brt_verr(env, "off=%d kptr isn't referenced kptr\n", (int)at);
		return -EACCES;
	}
	if (f->kernel) {
		brt_verr(env, "bpfrt: bpf_kptr_xchg of a kernel type's kptr (%s) is not supported\n",
			 kptr_type_name(env, f));
		return -EOPNOTSUPP;
	}
	*out = *f; /* a copy: f may be in orec */
	return 0;
}

int brt_verifier_graph_roots(const struct brt_btf *btf, uint32_t id, struct brt_obj_root *roots,
			     uint32_t max)
{
	struct brt_grec rec;
	uint32_t n = 0;
	int err = brt_graph_record(btf, id, &rec);

	if (err)
		return err < 0 ? err : -EINVAL;
	for (int i = 0; i < rec.n && n < max; i++)
		if (rec.f[i].kind == BRT_GF_LIST_HEAD || rec.f[i].kind == BRT_GF_RB_ROOT)
			roots[n++] = (struct brt_obj_root){ .off = rec.f[i].off,
							    .node_off = rec.f[i].node_off,
							    .rb = rec.f[i].kind == BRT_GF_RB_ROOT };
		else if (BRT_GF_IS_KPTR(rec.f[i].kind) && !rec.f[i].kernel)
			roots[n++] = (struct brt_obj_root){ .off = rec.f[i].off,
							    .rb = BRT_ROOT_KPTR };
	return (int)n;
}

/* The fields btf_parse_fields() records in a map value that brt_graph_record() leaves to
 * others (the special structs below, 8-aligned; a uptr: a pointer tagged "uptr") in type
 * id at byte off, arrays and nested structs looked into as btf_find_field() does: 1 when
 * any. */
static const struct {
	const char *name;
	uint32_t size;
} other_special[] = { { "bpf_timer", 16 }, { "bpf_wq", 16 }, { "bpf_task_work", 8 } };

static int other_fields(const struct brt_btf *btf, uint32_t id, uint32_t off, int depth)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, id));
	const struct btf_type *tag;
	const struct btf_member *m;
	const char *n;

	for (int i = 0; i < 32 && kind_of(t) == BTF_KIND_ARRAY; i++) {
		const struct btf_array *a = (const struct btf_array *)(t + 1);

		if (!a->nelems)
			return 0;
		t = brt_btf_type(btf, brt_btf_skip_mods(btf, a->type));
	}
	if (kind_of(t) == BTF_KIND_PTR) {
		tag = brt_btf_type(btf, t->type);
		n = kind_of(tag) == BTF_KIND_TYPE_TAG && !BTF_INFO_KFLAG(tag->info)
			    ? brt_btf_str(btf, tag->name_off)
			    : NULL;
		return n && !strcmp(n, "uptr") && !(off % 8);
	}
	if (!is_struct(t) || depth >= 32)
		return 0;
	n = brt_btf_str(btf, t->name_off);
	for (size_t k = 0; kind_of(t) == BTF_KIND_STRUCT && n && k < sizeof(other_special) /
								  sizeof(other_special[0]); k++)
		if (!strcmp(n, other_special[k].name))
			return t->size == other_special[k].size && !(off % 8);
	m = (const struct btf_member *)(t + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							: m[i].offset;

		if (!(bits % 8) && other_fields(btf, m[i].type, off + bits / 8, depth + 1))
			return 1;
	}
	return 0;
}

int brt_verifier_value_has_record(const struct brt_btf *btf, uint32_t id)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	struct brt_grec rec;

	/* a value whose fields do not parse has no record (the kernel's map keeps the error) */
	if (brt_graph_record(btf, id, &rec))
		return 0;
	for (int i = 0; i < rec.n; i++)
		if (rec.f[i].kind != BRT_GF_LIST_NODE && rec.f[i].kind != BRT_GF_RB_NODE)
			return 1;
	if (kind_of(t) == BTF_KIND_DATASEC) {
		const struct btf_var_secinfo *v = (const struct btf_var_secinfo *)(t + 1);

		for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
			const struct btf_type *var = brt_btf_type(btf, v[i].type);

			if (kind_of(var) == BTF_KIND_VAR &&
			    other_fields(btf, var->type, v[i].offset, 0))
				return 1;
		}
		return 0;
	}
	return other_fields(btf, id, 0, 0);
}
