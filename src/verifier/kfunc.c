/* kfunc.c - calls of kernel functions (BPF_PSEUDO_KFUNC_CALL), as the kernel's
 * check_kfunc_call() and check_kfunc_args() check them: the function must be one the
 * runtime offers for the program's type (src/vm/kfuncs.def, the kernel's kfunc sets and
 * their flags), and its arguments and return value follow its prototype in the kernel's
 * BTF, read with the kernel's rules (scalars, the context, kernel objects with their
 * references, memory with a __sz size after it).  Load-time checks of the call are
 * cfg.c's (add_kfunc_call()), the unresolved weak kfunc (id 0) check.c's, the bpf_task_work
 * kfuncs' map arguments and callback kfunc_task_work.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf/btf.h"
#include "verifier/internal.h"

/* the kernel's MAX_BPF_FUNC_REG_ARGS and BPF_MAX_VAR_SIZ */
#define MAX_ARGS 5
#define MAX_VAR_SIZ (1 << 29)

/* kfuncs.def's rows: the flags and program types of each kfunc bpfrt offers */
static const struct brt_kfunc kfuncs[] = {
#define KFUNC(name_, flags_, sets_) { .name = #name_, .flags = (flags_), .sets = (sets_) },
#define KFUNC_AS(name_, fn_, flags_, sets_) KFUNC(name_, flags_, sets_)
#include "vm/kfuncs.def"
#undef KFUNC_AS
#undef KFUNC
};

static const struct brt_kfunc *brt_kfunc_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(kfuncs) / sizeof(kfuncs[0]); i++)
		if (!strcmp(kfuncs[i].name, name))
			return &kfuncs[i];
	return NULL;
}

static int brt_kfunc_index(const struct brt_kfunc *k)
{
	return k ? (int)(k - kfuncs) : -1;
}

struct kmeta {
	const struct brt_btf *btf;
	const char *name;
	uint32_t func_id;
	uint32_t flags;
	const struct btf_type *proto;
	uint32_t ref_obj_id;
	int release_regno;
	uint64_t r0_size;
	int r0_rdonly;
	/* a __szk argument's constant (the kernel's arg_constant) */
	int szk_found;
	uint64_t szk;
	/* ... and the stack buffer of its memory argument (bpf_dynptr_slice's buffer__opt) */
	int buf_found, buf_frame, buf_off;
	/* the initialised dynptr argument (the kernel's initialized_dynptr) */
	uint32_t dyn_type, dyn_id, dyn_ref;
	/* the iterator argument (the kernel's meta->iter) */
	struct brt_iter_meta iter;
	int row;            /* kfuncs.def's row */
	/* a __k argument's constant (the kernel's arg_constant) */
	int k_found;
	uint64_t k_val;
	/* the allocated object an argument named (the kernel's arg_btf_id) and whether a
	 * refcounted one was owned (arg_owning_ref) */
	uint32_t arg_btf_id;
	uint16_t arg_home; /* ... and its BTF (brt_graph_home_btf()) */
	int arg_owning;
	/* a graph root argument's field (arg_list_head / arg_rbtree_root) */
	int root_found;
	struct brt_gfield root;
	int subprogno;      /* a callback argument's subprogram */
	/* the map of a struct bpf_task_work argument, then of the __map argument (the
	 * kernel's meta->map.ptr); 0: none yet, else 1 + its index in env->maps */
	int map1;
};

static const struct btf_type *skip_mods(const struct brt_btf *btf, uint32_t id, uint32_t *res)
{
	id = brt_btf_skip_mods(btf, id);
	if (res)
		*res = id;
	return brt_btf_type(btf, id);
}

static unsigned kind_of(const struct btf_type *t)
{
	return t ? BTF_INFO_KIND(t->info) : BTF_KIND_UNKN;
}

/* btf_type_is_scalar(): int or (32-bit) enum */
static int is_scalar(const struct btf_type *t)
{
	return kind_of(t) == BTF_KIND_INT || kind_of(t) == BTF_KIND_ENUM;
}

static int is_struct(const struct btf_type *t)
{
	return kind_of(t) == BTF_KIND_STRUCT || kind_of(t) == BTF_KIND_UNION;
}

static const char *kind_str(const struct btf_type *t)
{
	return brt_btf_kind_name(kind_of(t));
}

static const char *name_of(const struct brt_btf *btf, const struct btf_type *t)
{
	const char *n = t ? brt_btf_str(btf, t->name_off) : NULL;

	return n ? n : "";
}

/* btf_param_match_suffix(): the parameter's name ends in suffix (and is longer) */
static int has_suffix(const struct brt_btf *btf, const struct btf_param *p, const char *suffix)
{
	const char *n = brt_btf_str(btf, p->name_off);
	size_t len = n ? strlen(n) : 0, sl = strlen(suffix);

	return len > sl && !strcmp(n + len - sl, suffix);
}

static int reg_is_null(const struct brt_reg *reg)
{
	return reg->type == SCALAR_VALUE && brt_tnum_is_const(reg->var_off) && !reg->var_off.value;
}

/* __btf_type_is_scalar_struct(): a struct (or union) of scalars, arrays of scalars and
 * such structs, nested at most 3 deep */
static int scalar_struct(struct brt_env *env, const struct brt_btf *btf, const struct btf_type *t,
			 int rec)
{
	const struct btf_member *m;

	if (!is_struct(t)) /* t may be NULL: no pointer arithmetic on it before this */
		return 0;
	m = (const struct btf_member *)(t + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		const struct btf_type *mt = skip_mods(btf, m[i].type, NULL);

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

			if (!a->nelems || !is_scalar(skip_mods(btf, a->type, NULL)))
				return 0;
			continue;
		}
		if (!is_scalar(mt))
			return 0;
	}
	return 1;
}

/* a struct some program type has as its context */
static int is_any_ctx_name(const char *name)
{
	for (uint32_t t = 0; t < 64; t++)
		if (*brt_ctx_type_name(t) && !strcmp(brt_ctx_type_name(t), name))
			return 1;
	return 0;
}

/* btf_is_prog_ctx_type() for a kfunc argument: a pointer to the program type's context
 * struct, or to the kernel struct it projects (__sk_buff: sk_buff, xdp_md: xdp_buff);
 * kprobes name it through the typedef bpf_user_pt_regs_t (struct pt_regs on x86-64). */
static int is_ctx_arg(struct brt_env *env, const struct brt_btf *btf, const struct btf_type *t)
{
	const char *want = brt_ctx_type_name(env->opts->prog_type), *tname;

	t = brt_btf_type(btf, t->type);
	if (env->opts->prog_type == BPF_PROG_TYPE_KPROBE) {
		while (t && (kind_of(t) == BTF_KIND_VOLATILE || kind_of(t) == BTF_KIND_CONST ||
			     kind_of(t) == BTF_KIND_RESTRICT || kind_of(t) == BTF_KIND_TYPE_TAG))
			t = brt_btf_type(btf, t->type);
		if (kind_of(t) == BTF_KIND_TYPEDEF && !strcmp(name_of(btf, t), want))
			return 1;
	}
	while (t && (kind_of(t) == BTF_KIND_TYPEDEF || kind_of(t) == BTF_KIND_VOLATILE ||
		     kind_of(t) == BTF_KIND_CONST || kind_of(t) == BTF_KIND_RESTRICT ||
		     kind_of(t) == BTF_KIND_TYPE_TAG))
		t = brt_btf_type(btf, t->type);
	if (!is_struct(t) || !*want)
		return 0;
	tname = name_of(btf, t);
	if ((!strcmp(want, "__sk_buff") && !strcmp(tname, "sk_buff")) ||
	    (!strcmp(want, "xdp_md") && !strcmp(tname, "xdp_buff")))
		return 1;
	if (!strcmp(want, "bpf_user_pt_regs_t"))
		want = "pt_regs";
	return !strcmp(want, tname);
}

/* The kernel struct behind a socket register type (the kernel's reg2btf_ids), or NULL. */
static const char *sock_struct(uint32_t type)
{
	switch (BASE_TYPE(type)) {
	case PTR_TO_SOCKET:
		return "sock";
	case PTR_TO_SOCK_COMMON:
		return "sock_common";
	case PTR_TO_TCP_SOCK:
		return "tcp_sock";
	default:
		return NULL;
	}
}

/* bpf_type_has_unsafe_modifiers(): any flag but the trusted ones (BPF_REG_TRUSTED_MODIFIERS:
 * PTR_TRUSTED, MEM_ALLOC, NON_OWN_REF) */
static uint32_t unsafe_flags(uint32_t type)
{
	return type & ~0xffu & ~(PTR_TRUSTED | MEM_ALLOC | NON_OWN_REF);
}

/* is_trusted_reg(): referenced, a socket type, or flagged trusted, with no unsafe flag */
static int is_trusted_reg(const struct brt_reg *reg)
{
	uint32_t unsafe = unsafe_flags(reg->type);

	if (reg->ref_obj_id)
		return 1;
	if (sock_struct(reg->type) && !unsafe)
		return 1;
	return (reg->type & (PTR_TRUSTED | MEM_ALLOC | NON_OWN_REF)) && !unsafe;
}

int brt_reg_is_trusted(const struct brt_reg *reg)
{
	return is_trusted_reg(reg);
}

/* btf_type_ids_nocast_alias(): one name is the other's with "___init" appended (a type
 * such as nf_conn___init, which starts with the other but must not be passed for it) */
static int nocast_alias(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), sfx = sizeof("___init") - 1;
	const char *longer = la > lb ? a : b;
	size_t shorter = la > lb ? lb : la;

	if (la == lb || (la != lb + sfx && lb != la + sfx))
		return 0;
	return !strcmp(longer + shorter, "___init") && !strncmp(a, b, shorter);
}

/* process_kf_arg_ptr_to_btf_id() */
static int check_btf_id_arg(struct brt_env *env, const struct kmeta *m, const struct brt_reg *reg,
			    const struct btf_type *ref_t, uint32_t ref_id, int argno)
{
	const struct brt_btf *btf = m->btf;
	const char *ref_tname = name_of(btf, ref_t), *sname = sock_struct(reg->type);
	uint32_t reg_id = reg->btf_id;
	const struct btf_type *reg_t;
	/* the type itself, not a struct that starts with it, for acquiring and releasing
	 * kfuncs and for no-cast aliases */
	int strict = ((m->flags & BRT_KF_RELEASE) && reg->ref_obj_id) ||
		     (m->flags & BRT_KF_ACQUIRE);

	if (sname) {
		int id = brt_btf_find(btf, sname, BTF_KIND_STRUCT);

		reg_id = id > 0 ? (uint32_t)id : 0;
	}
	reg_t = skip_mods(btf, reg_id, &reg_id);
	if (nocast_alias(name_of(btf, reg_t), ref_tname))
		strict = 1;
	if (!brt_btf_struct_ids_match(btf, reg_id, reg->off, ref_id, strict) &&
	    !((!strcmp(ref_tname, "__sk_buff") && !strcmp(name_of(btf, reg_t), "sk_buff")) ||
	      (!strcmp(ref_tname, "xdp_md") && !strcmp(name_of(btf, reg_t), "xdp_buff")))) {
		brt_verr(env, "kernel function %s args#%d expected pointer to %s %s but R%d has a "
			      "pointer to %s %s\n",
			 m->name, argno, kind_str(ref_t), ref_tname, argno + 1, kind_str(reg_t),
			 name_of(btf, reg_t));
		return -EINVAL;
	}
	return 0;
}

/* check_func_arg_reg_off() for a kfunc argument (release: OBJ_RELEASE) */
static int check_arg_reg_off(struct brt_env *env, const struct brt_reg *reg, int regno,
			     int release)
{
	if (release) {
		if (reg->off) {
			brt_verr(env, "R%d must have zero offset when passed to release func or "
				      "trusted arg to kfunc\n",
				 regno);
			return -EINVAL;
		}
		return brt_check_ptr_off_reg(env, reg, regno);
	}
	/* the helpers' rules (memory.c), but for kernel objects at a fixed offset */
	if (BASE_TYPE(reg->type) == PTR_TO_BTF_ID && (reg->type & MEM_ALLOC))
		goto fixed_ok; /* allocated objects, owned or not, percpu or RCU */
	switch (reg->type) {
	case PTR_TO_BTF_ID:
	case PTR_TO_BTF_ID | PTR_TRUSTED:
	case PTR_TO_BTF_ID | MEM_RCU:
fixed_ok:
		/* a fixed offset is fine (a member), a variable one is not */
		if (reg->off < 0 || !brt_tnum_is_const(reg->var_off) || reg->var_off.value) {
			struct brt_reg r = *reg;

			if (reg->off >= 0)
				r.off = 0;
			return brt_check_ptr_off_reg(env, &r, regno);
		}
		return 0;
	default:
		return brt_check_arg_reg_off(env, reg, regno);
	}
}

/* check_mem_size_reg() of a kfunc's __sz argument, read then written (the kernel's
 * check_kfunc_mem_size_reg(); the memory may be NULL when the size is 0) */
static int check_mem_size(struct brt_env *env, int regno)
{
	struct brt_reg *regs = brt_cur_regs(env), *reg = &regs[regno], *mem = &regs[regno - 1];
	struct brt_reg saved = *mem;
	int err = 0;

	if (mem->type & PTR_MAYBE_NULL)
		mem->type &= ~PTR_MAYBE_NULL;
	for (int pass = 0; pass < 2 && !err; pass++) {
		if (reg->smin < 0) {
			brt_verr(env, "R%d min value is negative, either use unsigned or 'var &= "
				      "const'\n",
				 regno);
			err = -EACCES;
		} else if (reg->umax >= MAX_VAR_SIZ) {
			brt_verr(env, "R%d unbounded memory access, use 'var &= const' or 'if (var "
				      "< const)'\n",
				 regno);
			err = -EACCES;
		} else {
			err = brt_check_helper_mem(env, regno - 1, (int)reg->umax, 1,
						   pass ? BRT_WRITE : BRT_READ,
						   pass ? BRT_STACK_CLOBBER : BRT_STACK_READ);
			if (!err)
				err = brt_mark_precise(env, regno);
		}
	}
	*mem = saved;
	return err;
}

/* check_mem_reg(): size bytes read and written, NULL allowed */
static int check_mem_arg(struct brt_env *env, int regno, uint32_t size)
{
	struct brt_reg *reg = &brt_cur_regs(env)[regno], saved = *reg;
	int err;

	if (reg_is_null(reg))
		return 0;
	reg->type &= ~PTR_MAYBE_NULL;
	err = brt_check_helper_mem(env, regno, (int)size, 1, BRT_READ, BRT_STACK_READ);
	if (!err)
		err = brt_check_helper_mem(env, regno, (int)size, 1, BRT_WRITE, BRT_STACK_CLOBBER);
	*reg = saved;
	return err;
}

/* The running kernel's answer to bpf_dynptr_slice_rdwr() (see set_return()); 6.18.19's
 * source gives a writable slice */
#define BRT_SLICE_RDWR_REFUSED 1

enum kf_arg { KF_CTX, KF_NULL, KF_BTF_ID, KF_MEM, KF_MEM_SIZE, KF_DYNPTR, KF_ITER, KF_IRQ_FLAG,
	      KF_RES_LOCK, KF_ALLOC, KF_REFCOUNTED, KF_LIST_HEAD, KF_LIST_NODE, KF_RB_ROOT,
	      KF_RB_NODE, KF_CALLBACK, KF_MAP, KF_TASK_WORK, KF_CONST_STR };

/* a pointer to one of the graph structs (is_kfunc_arg_list_head() and the others) */
static int graph_arg_kind(const struct brt_btf *btf, const struct btf_type *ref_t)
{
	static const struct {
		const char *name;
		int kind;
	} g[] = { { "bpf_list_head", KF_LIST_HEAD }, { "bpf_list_node", KF_LIST_NODE },
		  { "bpf_rb_root", KF_RB_ROOT }, { "bpf_rb_node", KF_RB_NODE } };

	for (size_t i = 0; kind_of(ref_t) == BTF_KIND_STRUCT && i < sizeof(g) / sizeof(g[0]); i++)
		if (!strcmp(name_of(btf, ref_t), g[i].name))
			return g[i].kind;
	return -1;
}

#define KF_ITER_ANY (BRT_KF_ITER_NEW | BRT_KF_ITER_NEXT | BRT_KF_ITER_DESTROY)

/* is_kfunc_arg_iter(): an iterator kfunc's first argument, or one named "__iter" */
static int is_iter_arg(const struct kmeta *m, const struct btf_param *args, int argno)
{
	if (m->flags & KF_ITER_ANY)
		return argno == 0;
	return has_suffix(m->btf, &args[argno], "__iter");
}

/* check_css_task_iter_allowlist(): css_task iterators take css_set_lock, which only LSM
 * hooks, iterators and sleepable programs are known not to hold */
static int css_task_allowed(const struct brt_env *env)
{
	const struct brt_verify_opts *o = env->opts;

	if (o->prog_type == BPF_PROG_TYPE_LSM)
		return 1;
	if (o->prog_type == BPF_PROG_TYPE_TRACING && o->expected_attach_type == BPF_TRACE_ITER)
		return 1;
	return (o->prog_flags & BPF_F_SLEEPABLE) != 0;
}

/* is_kfunc_arg_dynptr(): a pointer to struct bpf_dynptr */
static int is_dynptr_arg(const struct brt_btf *btf, const struct btf_type *ref_t)
{
	return kind_of(ref_t) == BTF_KIND_STRUCT && !strcmp(name_of(btf, ref_t), "bpf_dynptr");
}

/* process_irq_flag()'s save: the kfuncs that save a flag (the others restore one) */
static int irq_save(const char *name)
{
	return !strcmp(name, "bpf_local_irq_save") || !strcmp(name, "bpf_res_spin_lock_irqsave");
}

/* is_bpf_res_spin_lock_kfunc(): the resilient lock's kfuncs, and what each does */
static unsigned res_lock_flags(const char *name)
{
	unsigned f = BRT_SPIN_RES;

	if (!strcmp(name, "bpf_res_spin_lock") || !strcmp(name, "bpf_res_spin_lock_irqsave"))
		f |= BRT_SPIN_TAKE;
	if (!strcmp(name, "bpf_res_spin_lock_irqsave") ||
	    !strcmp(name, "bpf_res_spin_unlock_irqrestore"))
		f |= BRT_SPIN_IRQ;
	return f;
}

/* get_kern_ctx_btf_id(): the kernel's context struct of the program's type, the member
 * "<BPF_PROG_TYPE_X>_kern" of vmlinux's struct bpf_ctx_convert (the prog type's name from
 * enum bpf_prog_type); its id, or -EINVAL */
static int kern_ctx_btf_id(struct brt_env *env)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	int eid = vml ? brt_btf_find(vml, "bpf_prog_type", BTF_KIND_ENUM) : -1;
	int cid = vml ? brt_btf_find(vml, "bpf_ctx_convert", BTF_KIND_STRUCT) : -1;
	const struct btf_type *et, *ct;
	const char *pname = NULL;
	char want[96];

	if (eid <= 0 || cid <= 0)
		goto bad;
	et = brt_btf_type(vml, (uint32_t)eid);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(et->info) && !pname; i++) {
		const struct btf_enum *e = (const struct btf_enum *)(et + 1) + i;

		if (e->val == (int32_t)env->opts->prog_type)
			pname = brt_btf_str(vml, e->name_off);
	}
	if (!pname || snprintf(want, sizeof(want), "%s_kern", pname) >= (int)sizeof(want))
		goto bad;
	ct = brt_btf_type(vml, (uint32_t)cid);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(ct->info); i++) {
		const struct btf_member *mb = (const struct btf_member *)(ct + 1) + i;
		const char *n = brt_btf_str(vml, mb->name_off);

		if (n && !strcmp(n, want)) {
			if (!is_struct(brt_btf_type(vml, mb->type))) {
				brt_verr(env, "kern ctx type id %u is not a struct\n", mb->type);
				return -EINVAL;
			}
			return (int)mb->type;
		}
	}
bad:
	/* a type the kernel's table lacks: its entry 0's type, never a struct */
	brt_verr(env, "kern ctx type id %u is not a struct\n", 0u);
	return -EINVAL;
}

/* get_kfunc_ptr_arg_type() for the argument kinds of the kfuncs the runtime offers */
static int ptr_arg_kind(struct brt_env *env, const struct kmeta *m, const struct btf_type *t,
			const struct btf_type *ref_t, const struct btf_param *args, int argno,
			int nargs)
{
	const struct brt_reg *regs = brt_cur_regs(env), *reg = &regs[argno + 1];
	const char *ref_tname = name_of(m->btf, ref_t);
	int mem_size = 0;

	if (m->row == BRT_KFUNC_bpf_cast_to_kern_ctx || is_ctx_arg(env, m->btf, t))
		return KF_CTX;
	if (has_suffix(m->btf, &args[argno], "__nullable") && reg_is_null(reg))
		return KF_NULL;
	if (has_suffix(m->btf, &args[argno], "__alloc"))
		return KF_ALLOC;
	if (has_suffix(m->btf, &args[argno], "__refcounted_kptr"))
		return KF_REFCOUNTED;
	if (is_dynptr_arg(m->btf, ref_t))
		return KF_DYNPTR;
	if (is_iter_arg(m, args, argno))
		return KF_ITER;
	if (graph_arg_kind(m->btf, ref_t) >= 0)
		return graph_arg_kind(m->btf, ref_t);
	if (has_suffix(m->btf, &args[argno], "__str"))
		return KF_CONST_STR;
	if (has_suffix(m->btf, &args[argno], "__map"))
		return KF_MAP;
	if (kind_of(ref_t) == BTF_KIND_STRUCT && !strcmp(ref_tname, "bpf_task_work"))
		return KF_TASK_WORK;
	if (has_suffix(m->btf, &args[argno], "__irq_flag"))
		return KF_IRQ_FLAG;
	if (kind_of(ref_t) == BTF_KIND_STRUCT && !strcmp(ref_tname, "bpf_res_spin_lock"))
		return KF_RES_LOCK;
	/* measured on 6.18.44: another program type's context struct (an XDP program
	 * passing its context to bpf_skb_ct_lookup's struct __sk_buff *) is taken as a
	 * kernel object, which the context is not ("R1 must be referenced or trusted") */
	if (BASE_TYPE(reg->type) == PTR_TO_BTF_ID || sock_struct(reg->type) ||
	    (is_struct(ref_t) && is_any_ctx_name(ref_tname))) {
		if (!is_struct(ref_t)) {
			brt_verr(env, "kernel function %s args#%d pointer type %s %s is not "
				      "supported\n",
				 m->name, argno, kind_str(ref_t), ref_tname);
			return -EINVAL;
		}
		return KF_BTF_ID;
	}
	if (brt_btf_func_ptr_proto(m->btf, args[argno].type))
		return KF_CALLBACK;
	if (argno + 1 < nargs && regs[argno + 2].type == SCALAR_VALUE &&
	    is_scalar(skip_mods(m->btf, args[argno + 1].type, NULL)) &&
	    (has_suffix(m->btf, &args[argno + 1], "__sz") ||
	     has_suffix(m->btf, &args[argno + 1], "__szk")))
		mem_size = 1;
	if (!is_scalar(ref_t) && !scalar_struct(env, m->btf, ref_t, 0) &&
	    (mem_size ? kind_of(ref_t) != BTF_KIND_UNKN : 1)) {
		brt_verr(env, "arg#%d pointer type %s %s must point to %sscalar, or struct with "
			      "scalar\n",
			 argno, kind_str(ref_t), ref_tname, mem_size ? "void, " : "");
		return -EINVAL;
	}
	return mem_size ? KF_MEM_SIZE : KF_MEM;
}

/* check_reg_allocation_locked(): the held bpf_spin_lock is the one of reg's value or
 * object (the same map, or an allocated object, and the same pointer id) */
static int allocation_locked(const struct brt_env *env, const struct brt_reg *reg)
{
	uint16_t ptr = reg->type == PTR_TO_MAP_VALUE ? (uint16_t)(reg->map_idx + 1)
						     : (uint16_t)BRT_LOCK_PTR_ALLOC;

	return env->cur->active_locks &&
	       brt_find_lock_state(env, BRT_REF_LOCK_MASK, reg->id, ptr) != NULL;
}

/* The special field of kind fkind a graph argument points at: its offset must be constant
 * and name a field of that kind in the pointee's record (the kernel's shared preamble of
 * __process_kf_arg_ptr_to_graph_root/_node).  Returns its index in *rec, or -EINVAL. */
static int graph_field_at(struct brt_env *env, const struct brt_reg *reg, int regno, int fkind,
			  struct brt_grec *rec)
{
	const char *tname = brt_gfield_name(fkind);
	uint32_t off;
	int i;

	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "R%d doesn't have constant offset. %s has to be at the constant "
			      "offset\n",
			 regno, tname);
		return -EINVAL;
	}
	off = (uint32_t)(reg->off + (int64_t)reg->var_off.value);
	if (!brt_graph_reg_record(env, reg, rec))
		rec->n = 0;
	for (i = 0; i < rec->n && !(rec->f[i].off == off && rec->f[i].kind == fkind); i++)
		;
	if (i == rec->n) {
		brt_verr(env, "%s not found at offset=%u\n", tname, off);
		return -EINVAL;
	}
	return i;
}

/* KF_ARG_PTR_TO_LIST_HEAD / _RB_ROOT: __process_kf_arg_ptr_to_graph_root() */
static int root_arg(struct brt_env *env, struct kmeta *m, const struct brt_reg *reg, int regno,
		    int argno, int kind)
{
	int fkind = kind == KF_LIST_HEAD ? BRT_GF_LIST_HEAD : BRT_GF_RB_ROOT;
	const char *tname = brt_gfield_name(fkind);
	struct brt_grec rec;
	int i;

	if (reg->type != PTR_TO_MAP_VALUE && reg->type != (PTR_TO_BTF_ID | MEM_ALLOC)) {
		brt_verr(env, "arg#%d expected pointer to map value or allocated object\n", argno);
		return -EINVAL;
	}
	if (reg->type == (PTR_TO_BTF_ID | MEM_ALLOC) && !reg->ref_obj_id) {
		brt_verr(env, "allocated object must be referenced\n");
		return -EINVAL;
	}
	i = graph_field_at(env, reg, regno, fkind, &rec);
	if (i < 0)
		return i;
	if (!allocation_locked(env, reg)) {
		brt_verr(env, "bpf_spin_lock at off=%d must be held for %s\n", rec.spin_lock_off,
			 tname);
		return -EINVAL;
	}
	m->root_found = 1;
	m->root = rec.f[i];
	return 0;
}

/* KF_ARG_PTR_TO_LIST_NODE / _RB_NODE: __process_kf_arg_ptr_to_graph_node(), the node of
 * the struct the root argument's "contains:" tag names, at its offset */
static int node_arg(struct brt_env *env, struct kmeta *m, const struct brt_reg *reg, int regno,
		    int argno, int kind)
{
	int fkind = kind == KF_LIST_NODE ? BRT_GF_LIST_NODE : BRT_GF_RB_NODE;
	const char *tname = brt_gfield_name(fkind);
	struct brt_grec rec;
	uint32_t off;
	int i, alloc = reg->type == (PTR_TO_BTF_ID | MEM_ALLOC);

	if (kind == KF_LIST_NODE || m->row == BRT_KFUNC_bpf_rbtree_add_impl) {
		if (!alloc) {
			brt_verr(env, "arg#%d expected pointer to allocated object\n", argno);
			return -EINVAL;
		}
		if (!reg->ref_obj_id) {
			brt_verr(env, "allocated object must be referenced\n");
			return -EINVAL;
		}
	} else {
		if (!(reg->type & NON_OWN_REF) && !reg->ref_obj_id) {
			brt_verr(env, "%s can only take non-owning or refcounted bpf_rb_node "
				      "pointer\n",
				 m->name);
			return -EINVAL;
		}
		if (brt_in_rbtree_cb(env)) {
			brt_verr(env, "%s not allowed in rbtree cb\n", m->name);
			return -EINVAL;
		}
	}
	i = graph_field_at(env, reg, regno, fkind, &rec);
	if (i < 0)
		return i;
	off = rec.f[i].off;
	if (!m->root_found) {
		brt_verr(env, "verifier bug: no graph root before its node\n");
		return -EFAULT;
	}
	/* btf_struct_ids_match(strict): the same BTF (home) and id */
	if (reg->btf_id != m->root.value_id || reg->map_idx != m->root.home ||
	    !brt_graph_home_btf(env, reg->map_idx)) {
		brt_verr(env, "operation on %s expects arg#1 %s at offset=%d in struct %s, but arg "
			      "is at offset=%d in struct %s\n",
			 brt_gfield_name(fkind == BRT_GF_LIST_NODE ? BRT_GF_LIST_HEAD : BRT_GF_RB_ROOT),
			 tname, m->root.node_off,
			 brt_local_type_name(env, m->root.home, m->root.value_id), off,
			 brt_local_type_name(env, reg->map_idx, reg->btf_id));
		return -EINVAL;
	}
	m->arg_btf_id = reg->btf_id;
	m->arg_home = reg->map_idx;
	if (off != m->root.node_off) {
		brt_verr(env, "arg#1 offset=%d, but expected %s at offset=%d in struct %s\n", off,
			 tname, m->root.node_off,
			 brt_local_type_name(env, m->root.home, m->root.value_id));
		return -EINVAL;
	}
	return 0;
}

/* a CONST_PTR_TO_MAP is a struct bpf_map the kernel trusts (reg2btf_ids) */
static int map_trusted(const struct brt_reg *reg)
{
	return BASE_TYPE(reg->type) == CONST_PTR_TO_MAP && !unsafe_flags(reg->type);
}

/* check_kfunc_args().  The running kernel (6.18.44) treats every kfunc's pointer
 * arguments as trusted, whatever its KF_* flags (the KF_TRUSTED_ARGS default of later
 * kernels; measured in verifier.kfunc_oracle, where 6.18.19's source checks only
 * KF_TRUSTED_ARGS/KF_RCU/KF_RELEASE ones): NULL or maybe-NULL is refused unless the
 * argument is __nullable or __opt, and a kernel object or a struct in memory without a
 * size must be referenced or trusted. */
static int check_args(struct brt_env *env, struct kmeta *m)
{
	const struct brt_btf *btf = m->btf;
	const struct btf_param *args = (const struct btf_param *)(m->proto + 1);
	int nargs = (int)BTF_INFO_VLEN(m->proto->info);
	int release = (m->flags & BRT_KF_RELEASE) != 0;

	if (nargs > MAX_ARGS) {
		brt_verr(env, "Function %s has %d > %d args\n", m->name, nargs, MAX_ARGS);
		return -EINVAL;
	}
	for (int i = 0; i < nargs; i++) {
		struct brt_reg *reg = &brt_cur_regs(env)[i + 1];
		int regno = i + 1, kind, err;
		const struct btf_type *t = skip_mods(btf, args[i].type, NULL), *ref_t;
		uint32_t ref_id;

		if (has_suffix(btf, &args[i], "__ign"))
			continue;
		/* is_kfunc_arg_prog(): the verifier passes the program's aux itself */
		if (has_suffix(btf, &args[i], "__prog"))
			continue;
		if (is_scalar(t)) {
			if (reg->type != SCALAR_VALUE) {
				brt_verr(env, "R%d is not a scalar\n", regno);
				return -EINVAL;
			}
			if (has_suffix(btf, &args[i], "__k")) {
				if (!brt_tnum_is_const(reg->var_off)) {
					brt_verr(env, "R%d must be a known constant\n", regno);
					return -EINVAL;
				}
				err = brt_mark_precise(env, regno);
				if (err < 0)
					return err;
				m->k_found = 1;
				m->k_val = reg->var_off.value;
			}
			continue;
		}
		if (kind_of(t) != BTF_KIND_PTR) {
			brt_verr(env, "Unrecognized arg#%d type %s\n", i, kind_str(t));
			return -EINVAL;
		}
		if ((reg_is_null(reg) || (reg->type & PTR_MAYBE_NULL)) &&
		    !has_suffix(btf, &args[i], "__nullable") && !has_suffix(btf, &args[i], "__opt")) {
			brt_verr(env, "Possibly NULL pointer passed to trusted arg%d\n", i);
			return -EACCES;
		}
		if (reg->ref_obj_id) {
			if (release && m->ref_obj_id) {
				brt_verr(env, "verifier bug: more than one arg with ref_obj_id R%d "
					      "%u %u\n",
					 regno, reg->ref_obj_id, m->ref_obj_id);
				return -EFAULT;
			}
			m->ref_obj_id = reg->ref_obj_id;
			if (release)
				m->release_regno = regno;
		}
		ref_t = skip_mods(btf, t->type, &ref_id);
		kind = ptr_arg_kind(env, m, t, ref_t, args, i, nargs);
		if (kind < 0)
			return kind;
		if (kind == KF_NULL)
			continue;
		if (kind == KF_MAP) {
			err = brt_kfunc_map_arg(env, reg, regno, &m->map1);
			if (err < 0)
				return err;
		}
		/* measured: struct memory of a KF_RCU kfunc (a cpumask on the stack) is
		 * memory, not checked for trust ("invalid read from stack R2 off=-8
		 * size=32") */
		if ((kind == KF_BTF_ID || kind == KF_ALLOC || kind == KF_MAP ||
		     (kind == KF_MEM && is_struct(ref_t) && !(m->flags & BRT_KF_RCU))) &&
		    !is_trusted_reg(reg) && !(kind == KF_MAP && map_trusted(reg))) {
			if (!(m->flags & BRT_KF_RCU)) {
				brt_verr(env, "R%d must be referenced or trusted\n", regno);
				return -EINVAL;
			}
			if (!(reg->type & MEM_RCU)) {
				brt_verr(env, "R%d must be a rcu pointer\n", regno);
				return -EINVAL;
			}
		}
		err = check_arg_reg_off(env, reg, regno, release && reg->ref_obj_id);
		if (err < 0)
			return err;
		switch (kind) {
		case KF_ALLOC:
			err = brt_graph_alloc_arg(env, reg, i,
						  m->row == BRT_KFUNC_bpf_percpu_obj_drop_impl);
			if (err < 0)
				return err;
			m->arg_btf_id = reg->btf_id;
			m->arg_home = reg->map_idx;
			break;
		case KF_REFCOUNTED:
			err = brt_graph_refcounted_arg(env, reg, i, &m->arg_owning);
			if (err < 0)
				return err;
			m->arg_btf_id = reg->btf_id;
			m->arg_home = reg->map_idx;
			break;
		case KF_LIST_HEAD:
		case KF_RB_ROOT:
			err = root_arg(env, m, reg, regno, i, kind);
			if (err < 0)
				return err;
			break;
		case KF_LIST_NODE:
		case KF_RB_NODE:
			err = node_arg(env, m, reg, regno, i, kind);
			if (err < 0)
				return err;
			break;
		case KF_TASK_WORK:
			err = brt_task_work_arg(env, reg, regno, i, &m->map1);
			if (err < 0)
				return err;
			break;
		case KF_MAP:
			/* the kernel's checks of a struct bpf_map pass for a map pointer, the
			 * only register that got here trusted (brt_kfunc_map_arg()) */
			break;
		case KF_CONST_STR:
			if (reg->type != PTR_TO_MAP_VALUE) {
				brt_verr(env, "arg#%d doesn't point to a const string\n", i);
				return -EINVAL;
			}
			err = brt_check_const_str(env, regno);
			if (err < 0)
				return err;
			break;
		case KF_CALLBACK:
			if (reg->type != PTR_TO_FUNC) {
				brt_verr(env, "arg%d expected pointer to func\n", i);
				return -EINVAL;
			}
			m->subprogno = reg->map_idx;
			break;
		case KF_DYNPTR: {
			/* a dynptr the kfunc makes (__uninit: of the type its name says, a
			 * clone of its parent's), or one it uses, of any type */
			unsigned flags = reg->type == CONST_PTR_TO_DYNPTR ? BRT_DYNPTR_ARG_RDONLY : 0;
			uint32_t type = BRT_DYNPTR_INVALID, clone_ref = 0;

			if (has_suffix(btf, &args[i], "__uninit"))
				flags |= BRT_DYNPTR_ARG_UNINIT;
			if (!strcmp(m->name, "bpf_dynptr_from_skb")) {
				type = BRT_DYNPTR_SKB;
			} else if (!strcmp(m->name, "bpf_dynptr_from_xdp")) {
				type = BRT_DYNPTR_XDP;
			} else if (!strcmp(m->name, "bpf_dynptr_from_skb_meta")) {
				type = BRT_DYNPTR_SKB_META;
			} else if (!strcmp(m->name, "bpf_dynptr_clone") &&
				   (flags & BRT_DYNPTR_ARG_UNINIT)) {
				if (m->dyn_type == BRT_DYNPTR_INVALID) {
					brt_verr(env, "verifier bug: no dynptr type for parent of "
						      "clone\n");
					return -EFAULT;
				}
				type = m->dyn_type;
				clone_ref = m->dyn_ref;
			}
			err = brt_process_dynptr(env, regno, env->insn_idx, flags, type, clone_ref);
			if (err < 0)
				return err;
			if (!(flags & BRT_DYNPTR_ARG_UNINIT))
				m->dyn_type = brt_dynptr_info(env, &brt_cur_regs(env)[regno], &m->dyn_id,
							      &m->dyn_ref);
			break;
		}
		case KF_ITER:
			if (!strcmp(m->name, "bpf_iter_css_task_new") && !css_task_allowed(env)) {
				brt_verr(env, "css_task_iter is only allowed in bpf_lsm, bpf_iter and "
					      "sleepable progs\n");
				return -EINVAL;
			}
			err = brt_process_iter_arg(env, regno, env->insn_idx, btf, m->proto, m->flags,
						   m->name, &m->iter);
			if (err < 0)
				return err;
			/* what _next() returns dies with the iterator */
			if (!(m->flags & BRT_KF_ITER_NEW))
				m->ref_obj_id = m->iter.ref_obj_id;
			break;
		case KF_IRQ_FLAG:
			if (reg->type != PTR_TO_STACK) {
				brt_verr(env, "arg#%d doesn't point to an irq flag on stack\n", i);
				return -EINVAL;
			}
			err = brt_process_irq_flag(env, regno, irq_save(m->name),
						   strncmp(m->name, "bpf_res_", 8) ? BRT_IRQ_NATIVE
										   : BRT_IRQ_LOCK);
			if (err < 0)
				return err;
			break;
		case KF_RES_LOCK:
			/* a map value's lock, or one in an object of bpf_obj_new (owned, not a
			 * node seen in a list: NON_OWN_REF is another type) */
			if (reg->type != PTR_TO_MAP_VALUE && reg->type != (PTR_TO_BTF_ID | MEM_ALLOC)) {
				brt_verr(env, "arg#%d doesn't point to map value or allocated object\n",
					 i);
				return -EINVAL;
			}
			err = brt_process_spin_lock(env, regno, res_lock_flags(m->name));
			if (err < 0)
				return err;
			break;
		case KF_CTX:
			if (reg->type != PTR_TO_CTX) {
				brt_verr(env, "arg#%d expected pointer to ctx, but got %s\n", i,
					 brt_reg_type_str(env, reg->type));
				return -EINVAL;
			}
			if (m->row == BRT_KFUNC_bpf_cast_to_kern_ctx) {
				err = kern_ctx_btf_id(env);
				if (err < 0)
					return -EINVAL;
				m->arg_btf_id = (uint32_t)err;
			}
			break;
		case KF_BTF_ID:
			if ((BASE_TYPE(reg->type) != PTR_TO_BTF_ID ||
			     (unsafe_flags(reg->type) && !(reg->type & MEM_RCU))) &&
			    !sock_struct(reg->type)) {
				brt_verr(env, "arg#%d is %s expected %s or socket\n", i,
					 brt_reg_type_str(env, reg->type),
					 brt_reg_type_str(env, BASE_TYPE(reg->type) |
								       (reg->type & PTR_TRUSTED)));
				return -EINVAL;
			}
			err = check_btf_id_arg(env, m, reg, ref_t, ref_id, i);
			if (err < 0)
				return err;
			break;
		case KF_MEM: {
			uint64_t size = 0;

			if (brt_btf_resolve_size(btf, ref_id, &size) < 0) {
				brt_verr(env, "arg#%d reference type('%s %s') size cannot be "
					      "determined: %d\n",
					 i, kind_str(ref_t), name_of(btf, ref_t), -EINVAL);
				return -EINVAL;
			}
			err = check_mem_arg(env, regno, (uint32_t)size);
			if (err < 0)
				return err;
			break;
		}
		case KF_MEM_SIZE: {
			struct brt_reg *size_reg = &brt_cur_regs(env)[regno + 1];

			if (!reg_is_null(reg) || !has_suffix(btf, &args[i], "__opt")) {
				err = check_mem_size(env, regno + 1);
				if (err < 0) {
					brt_verr(env, "arg#%d arg#%d memory, len pair leads to invalid "
						      "memory access\n",
						 i, i + 1);
					return err;
				}
			}
			if (has_suffix(btf, &args[i + 1], "__szk")) {
				if (!brt_tnum_is_const(size_reg->var_off)) {
					brt_verr(env, "R%d must be a known constant\n", regno + 1);
					return -EINVAL;
				}
				m->szk_found = 1;
				m->szk = size_reg->var_off.value;
				if (reg->type == PTR_TO_STACK && brt_tnum_is_const(reg->var_off) &&
				    m->szk && m->szk <= UINT16_MAX) {
					m->buf_found = 1;
					m->buf_frame = reg->frameno;
					m->buf_off = reg->off + (int32_t)reg->var_off.value;
				}
			}
			i++; /* the size was this argument's */
			break;
		}
		}
	}
	if (release && !m->release_regno) {
		brt_verr(env, "release kernel function %s expects refcounted PTR_TO_BTF_ID\n",
			 m->name);
		return -EINVAL;
	}
	return 0;
}

/* bpf_res_spin_lock and _irqsave: calls that may fail, the lock then not taken */
static int is_res_lock_take(const char *name)
{
	return !strcmp(name, "bpf_res_spin_lock") || !strcmp(name, "bpf_res_spin_lock_irqsave");
}

/* check_kfunc_call()'s fork for a lock that may fail: a path from the next insn where
 * the call returned an error (r0 in [-MAX_ERRNO, -1], r1-r5 clobbered) and nothing was
 * taken, pushed before the arguments are looked at */
static int push_failed_lock(struct brt_env *env, int insn_idx)
{
	struct brt_vstate *branch;
	struct brt_reg *regs, *r0;
	int err = brt_push_stack(env, insn_idx + 1, insn_idx, &branch);

	if (err) {
		if (err == -ENOMEM)
			brt_verr(env, "failed to push state for failed lock acquisition\n");
		return err;
	}
	regs = branch->frame[branch->curframe]->regs;
	for (int i = BPF_REG_0; i <= BPF_REG_5; i++)
		brt_mark_reg_not_init(&regs[i]);
	r0 = &regs[BPF_REG_0];
	brt_mark_reg_unknown(env, r0);
	/* measured on 6.18.44: only the 32-bit signed range is set (the 64-bit one follows
	 * from it through the bounds' sync: smin 0x80000000fffff001, not -4095), as the
	 * function returns an int */
	r0->s32_min = -4095; /* -MAX_ERRNO */
	r0->s32_max = -1;
	brt_reg_bounds_sync(r0);
	return 0;
}

/* bpf_cast_to_kern_ctx(): the kernel's context struct, trusted; bpf_rdonly_cast(obj,
 * btf_id): the kernel's struct (or union) btf_id, untrusted (reads only, fault-safe), or
 * for void (id 0) read-only untrusted memory of no size.  Both return their first
 * argument (the kernel rewrites the call as r0 = r1). */
static int cast_return(struct brt_env *env, const struct kmeta *m)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	struct brt_reg *r0 = &brt_cur_regs(env)[BPF_REG_0];
	const struct btf_type *t;

	if (m->row == BRT_KFUNC_bpf_cast_to_kern_ctx) {
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_BTF_ID | PTR_TRUSTED;
		r0->btf_id = m->arg_btf_id;
		return 0;
	}
	/* btf_type_by_id() takes the constant's low 32 bits; id 0 is void */
	if ((uint32_t)m->k_val == 0) {
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_MEM | MEM_RDONLY | PTR_UNTRUSTED;
		r0->mem_size = 0;
		return 0;
	}
	t = brt_btf_type(vml, (uint32_t)m->k_val);
	if (!t) {
		brt_verr(env, "Unknown type ID %lld passed to kfunc bpf_rdonly_cast\n",
			 (long long)m->k_val);
		return -EINVAL;
	}
	if (!is_struct(t)) {
		brt_verr(env, "kfunc bpf_rdonly_cast type ID argument must be of a struct or "
			      "void\n");
		return -EINVAL;
	}
	brt_mark_reg_known_zero(r0);
	r0->type = PTR_TO_BTF_ID | PTR_UNTRUSTED;
	r0->btf_id = (uint32_t)m->k_val;
	return 0;
}

/* The return value (check_kfunc_call() after the arguments). */
static int set_return(struct brt_env *env, struct kmeta *m, int insn_idx)
{
	const struct brt_btf *btf = m->btf;
	struct brt_reg *r0 = &brt_cur_regs(env)[BPF_REG_0];
	const struct btf_type *t = skip_mods(btf, m->proto->type, NULL), *pt = NULL;
	uint32_t pt_id = 0;
	int graph_node = 0;

	if (kind_of(t) == BTF_KIND_PTR)
		pt = skip_mods(btf, t->type, &pt_id);
	if ((m->flags & BRT_KF_ACQUIRE) && !is_struct(pt) && m->row != BRT_KFUNC_bpf_obj_new_impl &&
	    m->row != BRT_KFUNC_bpf_percpu_obj_new_impl &&
	    m->row != BRT_KFUNC_bpf_refcount_acquire_impl) {
		brt_verr(env, "acquire kernel function does not return PTR_TO_BTF_ID\n");
		return -EINVAL;
	}
	if (is_scalar(t)) {
		brt_mark_reg_unknown(env, r0);
		/* the lock was taken on this path: 0 (the failure is the pushed path) */
		if (is_res_lock_take(m->name))
			brt_mark_reg_known(r0, 0);
		return 0;
	}
	if (kind_of(t) != BTF_KIND_PTR)
		return 0; /* void: r0 stays unreadable */
	if (m->row == BRT_KFUNC_bpf_obj_new_impl || m->row == BRT_KFUNC_bpf_percpu_obj_new_impl) {
		int err = brt_graph_obj_new(env, m->k_val,
					    m->row == BRT_KFUNC_bpf_percpu_obj_new_impl);

		if (err)
			return err;
		goto ret_null;
	}
	if (m->row == BRT_KFUNC_bpf_refcount_acquire_impl) {
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_BTF_ID | MEM_ALLOC;
		r0->btf_id = m->arg_btf_id;
		r0->map_idx = m->arg_home;
		goto ret_null;
	}
	if (graph_arg_kind(btf, pt) == KF_LIST_NODE || graph_arg_kind(btf, pt) == KF_RB_NODE) {
		/* mark_reg_graph_node(): the struct the root's nodes are in, at the node */
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_BTF_ID | MEM_ALLOC;
		r0->btf_id = m->root.value_id;
		r0->map_idx = m->root.home;
		r0->off = (int32_t)m->root.node_off;
		graph_node = 1;
		goto ret_null;
	}
	if (!strcmp(m->name, "bpf_dynptr_slice") || !strcmp(m->name, "bpf_dynptr_slice_rdwr")) {
		/* memory of the __szk size, of the dynptr it came from (read-only for
		 * bpf_dynptr_slice; writing a packet's needs direct packet writes) */
		brt_mark_reg_known_zero(r0);
		if (!m->szk_found) {
			brt_verr(env, "verifier bug: bpf_dynptr_slice(_rdwr) no constant size\n");
			return -EFAULT;
		}
		r0->mem_size = (uint32_t)m->szk;
		r0->type = PTR_TO_MEM;
		if (m->dyn_type == BRT_DYNPTR_SKB || m->dyn_type == BRT_DYNPTR_XDP ||
		    m->dyn_type == BRT_DYNPTR_SKB_META)
			r0->type |= DYNPTR_TYPE_PKT;
		if (!strcmp(m->name, "bpf_dynptr_slice")) {
			r0->type |= MEM_RDONLY;
		} else if (BRT_SLICE_RDWR_REFUSED) {
			/* measured: 6.18.44 refuses every bpf_dynptr_slice_rdwr() call here,
			 * whatever the dynptr or program type (EPERM, after the arguments) */
			brt_verr(env, "bpf_dynptr_slice_rdwr() is not allowed\n");
			return -EPERM;
		} else if (!brt_may_access_pkt(env, BRT_WRITE)) {
			brt_verr(env, "the prog does not allow writes to packet data\n");
			return -EINVAL;
		}
		r0->btf_id = m->dyn_id;
		if (m->buf_found && m->buf_off < 0) { /* brt_slice_buf() */
			r0->range = m->buf_off;
			r0->map_idx = (uint16_t)m->szk;
			r0->frameno = (uint8_t)m->buf_frame;
		}
		/* measured on 6.18.44: a slice of a ring buffer dynptr (or of its clone)
		 * dies when the record is submitted, as bpf_dynptr_data's does: it holds the
		 * dynptr's reference (6.18.19's source gives it none) */
		r0->ref_obj_id = m->dyn_ref;
		goto ret_null;
	}
	if (m->row == BRT_KFUNC_bpf_cast_to_kern_ctx || m->row == BRT_KFUNC_bpf_rdonly_cast)
		return cast_return(env, m);
	if (kind_of(pt) == BTF_KIND_UNKN) {
		/* void *: a number */
		brt_mark_reg_unknown(env, r0);
		return 0;
	}
	if (!is_struct(pt)) {
		uint64_t sz = 0;

		if (!m->r0_size && brt_btf_resolve_size(btf, pt_id, &sz) >= 0 && sz) {
			m->r0_size = sz;
			m->r0_rdonly = 1;
		}
		if (!m->r0_size) {
			brt_verr(env, "kernel function %s returns pointer type %s %s is not "
				      "supported\n",
				 m->name, kind_str(pt), name_of(btf, pt));
			return -EINVAL;
		}
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_MEM | (m->r0_rdonly ? MEM_RDONLY : 0);
		r0->mem_size = (uint32_t)m->r0_size;
		if (m->ref_obj_id)
			r0->ref_obj_id = m->ref_obj_id;
	} else {
		brt_mark_reg_known_zero(r0);
		r0->type = PTR_TO_BTF_ID;
		r0->btf_id = pt_id;
	}
ret_null:
	/* is_kfunc_ret_null(): bpf_refcount_acquire of an owned object never fails */
	if ((m->flags & BRT_KF_RET_NULL) &&
	    !(m->row == BRT_KFUNC_bpf_refcount_acquire_impl && m->arg_owning)) {
		r0->type |= PTR_MAYBE_NULL;
		r0->id = ++env->id_gen;
	}
	if (m->flags & BRT_KF_ACQUIRE) {
		int id = brt_acquire_ref(env, insn_idx);

		if (id < 0)
			return id;
		if ((m->flags & BRT_KF_RET_NULL) && (r0->type & PTR_MAYBE_NULL))
			r0->id = (uint32_t)id;
		r0->ref_obj_id = (uint32_t)id;
	} else if (graph_node) {
		int err = brt_graph_set_non_owning(env, r0);

		if (err)
			return err;
	}
	if (brt_graph_may_lock(env, r0) && !r0->id)
		r0->id = ++env->id_gen;
	return 0;
}

/* check_kfunc_call()'s RCU read section: bpf_rcu_read_lock() opens it (not twice),
 * bpf_rcu_read_unlock() closes it, and the pointers the section protected (MEM_RCU)
 * become untrusted; a sleepable kfunc may not run inside. */
static int rcu_section(struct brt_env *env, const struct kmeta *m, int row)
{
	struct brt_vstate *st = env->cur;

	if (st->active_rcu) {
		if (row == BRT_KFUNC_bpf_rcu_read_lock) {
			brt_verr(env, "nested rcu read lock (kernel function %s)\n", m->name);
			return -EINVAL;
		}
		if (row == BRT_KFUNC_bpf_rcu_read_unlock) {
			for (int fi = 0; fi <= st->curframe; fi++) {
				struct brt_frame *f = st->frame[fi];

				for (int r = 0; r < BRT_NREGS; r++)
					if (f->regs[r].type & MEM_RCU)
						f->regs[r].type = (f->regs[r].type &
								   ~(MEM_RCU | PTR_MAYBE_NULL)) |
								  PTR_UNTRUSTED;
				/* spilled pointers and iterators (the kernel's clear_mask) */
				for (int s = 0; s < f->allocated_stack / 8; s++)
					if ((brt_is_spilled(&f->stack[s]) ||
					     f->stack[s].type[0] == STACK_ITER) &&
					    (f->stack[s].spilled.type & MEM_RCU))
						f->stack[s].spilled.type =
							(f->stack[s].spilled.type &
							 ~(MEM_RCU | PTR_MAYBE_NULL)) |
							PTR_UNTRUSTED;
			}
			st->active_rcu = 0;
		} else if (m->flags & BRT_KF_SLEEPABLE) {
			brt_verr(env, "kernel func %s is sleepable within rcu_read_lock region\n",
				 m->name);
			return -EACCES;
		}
	} else if (row == BRT_KFUNC_bpf_rcu_read_lock) {
		st->active_rcu = 1;
	} else if (row == BRT_KFUNC_bpf_rcu_read_unlock) {
		brt_verr(env, "unmatched rcu read unlock (kernel function %s)\n", m->name);
		return -EINVAL;
	}
	return 0;
}

/* check_kfunc_call()'s non-preemptible sections: bpf_preempt_disable() nests (a count),
 * bpf_preempt_enable() undoes one, and no sleepable kfunc runs while any is open. */
static int preempt_section(struct brt_env *env, const struct kmeta *m, int row)
{
	struct brt_vstate *st = env->cur;

	if (row == BRT_KFUNC_bpf_preempt_disable) {
		st->active_preempt++;
	} else if (row == BRT_KFUNC_bpf_preempt_enable) {
		if (!st->active_preempt) {
			brt_verr(env, "unmatched attempt to enable preemption (kernel function "
				      "%s)\n",
				 m->name);
			return -EINVAL;
		}
		st->active_preempt--;
	} else if (st->active_preempt && (m->flags & BRT_KF_SLEEPABLE)) {
		brt_verr(env, "kernel func %s is sleepable within non-preemptible region\n",
			 m->name);
		return -EACCES;
	}
	return 0;
}

/* fetch_kfunc_meta(): the FUNC, its prototype and its row, if the program may call it */
static const struct brt_kfunc *fetch_meta(struct brt_env *env, const struct bpf_insn *insn,
					  struct kmeta *m)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	const struct btf_type *func = vml && insn->imm && !insn->off
					      ? brt_btf_type(vml, (uint32_t)insn->imm)
					      : NULL;
	const struct brt_kfunc *k;

	if (!func)
		return NULL;
	m->btf = vml;
	m->func_id = (uint32_t)insn->imm;
	m->name = name_of(vml, func);
	m->proto = brt_btf_type(vml, func->type);
	/* btf_kfunc_id_set_contains(): in a set registered for the program's type (bpfrt
	 * offers only the kfuncs of kfuncs.def: others run in the kernel alone) */
	k = brt_kfunc_find(m->name);
	if (!k || kind_of(m->proto) != BTF_KIND_FUNC_PROTO ||
	    !(k->sets & BRT_HSET(env->opts->prog_type)) ||
	    ((k->sets & BRT_KSET_ITER_ONLY) &&
	     env->opts->expected_attach_type != BPF_TRACE_ITER))
		return NULL;
	m->flags = k->flags;
	m->row = brt_kfunc_index(k);
	return k;
}

int brt_kfunc_nargs(struct brt_env *env, const struct bpf_insn *insn)
{
	struct kmeta m = { 0 };

	return fetch_meta(env, insn, &m) ? (int)BTF_INFO_VLEN(m.proto->info) : -1;
}

int brt_check_kfunc_call(struct brt_env *env, const struct bpf_insn *insn, int insn_idx)
{
	struct kmeta m = { 0 };
	struct brt_reg *regs;
	int err;

	/* id 0: an unresolved weak kfunc, refused after the walk if the walk reached it */
	if (!insn->imm)
		return 0;
	if (!fetch_meta(env, insn, &m)) {
		/* add_kfunc_call() let through only FUNCs of the kernel's BTF */
		brt_verr(env, "calling kernel function %s is not allowed\n", m.name ? m.name : "");
		return -EACCES;
	}
	if (is_res_lock_take(m.name)) {
		err = push_failed_lock(env, insn_idx);
		if (err)
			return err;
	}
	if ((m.flags & BRT_KF_SLEEPABLE) && !brt_in_sleepable(env)) {
		brt_verr(env, "program must be sleepable to call sleepable kfunc %s\n", m.name);
		return -EACCES;
	}
	/* the registers' kernel types are named from the kernel's BTF */
	if (!env->kbtf)
		env->kbtf = m.btf;
	err = check_args(env, &m);
	if (err < 0)
		return err;
	/* a callback the kfunc calls: bpf_rbtree_add's less() (graph.c), a task work's
	 * (kfunc_task_work.c) */
	err = 0;
	if (m.row == BRT_KFUNC_bpf_rbtree_add_impl)
		err = brt_graph_push_less(env, insn_idx, m.subprogno, &m.root);
	else if (brt_kfunc_is_task_work(m.row))
		err = brt_push_task_work_callback(env, insn_idx, m.subprogno);
	if (err) {
		brt_verr(env, "kfunc %s#%u failed callback verification\n", m.name, m.func_id);
		return err;
	}
	err = rcu_section(env, &m, brt_kfunc_index(brt_kfunc_find(m.name)));
	if (err < 0)
		return err;
	err = preempt_section(env, &m, brt_kfunc_index(brt_kfunc_find(m.name)));
	if (err < 0)
		return err;
	if (env->cur->active_irq_id && (m.flags & BRT_KF_SLEEPABLE)) {
		brt_verr(env, "kernel func %s is sleepable within IRQ-disabled region\n", m.name);
		return -EACCES;
	}
	if (m.release_regno) {
		err = brt_release_ref(env, brt_cur_regs(env)[m.release_regno].ref_obj_id);
		if (err) {
			brt_verr(env, "kfunc %s#%u reference has not been acquired before\n", m.name,
				 m.func_id);
			return err;
		}
	}
	/* a node pushed into a list or tree is owned by it: the program's pointers to it
	 * become non-owning references */
	if (m.row == BRT_KFUNC_bpf_list_push_front_impl || m.row == BRT_KFUNC_bpf_list_push_back_impl ||
	    m.row == BRT_KFUNC_bpf_rbtree_add_impl) {
		uint32_t ref = brt_cur_regs(env)[BPF_REG_2].ref_obj_id;

		err = brt_graph_owning_to_non_owning(env, ref);
		if (err) {
			brt_verr(env, "kfunc %s#%u conversion of owning ref to non-owning failed\n",
				 m.name, m.func_id);
			return err;
		}
		err = brt_release_ref(env, ref);
		if (err) {
			brt_verr(env, "kfunc %s#%u reference has not been acquired before\n", m.name,
				 m.func_id);
			return err;
		}
	}
	if (m.row == BRT_KFUNC_bpf_throw) {
		err = brt_throw_cookie_check(env);
		if (err < 0)
			return err;
	}
	regs = brt_cur_regs(env);
	for (int i = BPF_REG_0; i <= BPF_REG_5; i++) {
		brt_mark_reg_not_init(&regs[i]);
		env->scratched_regs |= (uint16_t)(1u << i);
	}
	err = set_return(env, &m, insn_idx);
	if (err || !(m.flags & BRT_KF_ITER_NEXT))
		return err;
	/* an iterator's element: a kernel object is RCU-protected when the iterator is,
	 * else untrusted (iter.c); then the walk forks */
	if (BASE_TYPE(regs[BPF_REG_0].type) == PTR_TO_BTF_ID)
		regs[BPF_REG_0].type |= brt_iter_next_obj_flag(env, &m.iter);
	return brt_process_iter_next(env, insn_idx, &m.iter);
}

int brt_kfunc_calls_callback(struct brt_env *env, const struct bpf_insn *insn)
{
	struct kmeta m = { 0 };

	return fetch_meta(env, insn, &m) && m.row == BRT_KFUNC_bpf_rbtree_add_impl;
}

int brt_kfunc_calls_async(struct brt_env *env, const struct bpf_insn *insn)
{
	struct kmeta m = { 0 };

	return fetch_meta(env, insn, &m) && brt_kfunc_is_task_work(m.row);
}

int brt_kfunc_is_iter_next(struct brt_env *env, const struct bpf_insn *insn)
{
	struct kmeta m = { 0 };

	return fetch_meta(env, insn, &m) && (m.flags & BRT_KF_ITER_NEXT);
}

int brt_kfunc_might_sleep(struct brt_env *env, const struct bpf_insn *insn)
{
	struct kmeta m = { 0 };

	return fetch_meta(env, insn, &m) && (m.flags & BRT_KF_SLEEPABLE);
}

int brt_kfunc_spin_allowed(const struct bpf_insn *insn)
{
	static const char *const allowed[] = {
		/* is_bpf_graph_api_kfunc() */
		"bpf_list_push_front_impl", "bpf_list_push_back_impl", "bpf_list_pop_front",
		"bpf_list_pop_back", "bpf_list_front", "bpf_list_back", "bpf_rbtree_add_impl",
		"bpf_rbtree_remove", "bpf_rbtree_first", "bpf_rbtree_root", "bpf_rbtree_left",
		"bpf_rbtree_right", "bpf_refcount_acquire_impl",
		/* is_bpf_iter_num_api_kfunc() */
		"bpf_iter_num_new", "bpf_iter_num_next", "bpf_iter_num_destroy",
		/* is_bpf_res_spin_lock_kfunc() */
		"bpf_res_spin_lock", "bpf_res_spin_unlock", "bpf_res_spin_lock_irqsave",
		"bpf_res_spin_unlock_irqrestore",
	};
	const struct brt_btf *vml = brt_btf_vmlinux();
	const char *name;

	/* a module's kfunc (off != 0) never is */
	if (insn->off || insn->imm <= 0 || !vml)
		return 0;
	name = brt_btf_name(vml, (uint32_t)insn->imm);
	for (size_t i = 0; name && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (!strcmp(name, allowed[i]))
			return 1;
	return 0;
}

int brt_verifier_kfunc_helper(int32_t btf_id)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	const struct brt_kfunc *k = vml && btf_id > 0
					    ? brt_kfunc_find(brt_btf_name(vml, (uint32_t)btf_id))
					    : NULL;

	return k ? (int)BRT_KFUNC_HELPER_BASE + brt_kfunc_index(k) : -1;
}
