/* btf_ctx.c - programs typed by kernel BTF (tracing: tp_btf, fentry/fexit/fmod_ret, iter):
 * the attach target as check_attach_btf_id() finds it in opts->attach_btf (the kernel's
 * vmlinux BTF), the context as an array of u64 arguments typed by the target's function
 * prototype (btf_ctx_access()), and loads through the kernel pointers those arguments
 * hold (PTR_TO_BTF_ID, check_ptr_to_btf_access() and btf_struct_walk()).  Helpers that
 * return or take a kernel task_struct (bpf_get_current_task_btf, bpf_get_task_stack) find
 * it here too, in any program type (brt_btf_task_id()).
 *
 * Tracepoint arguments that may be NULL or an error pointer follow the kernel's list
 * (raw_tp_args.def).  Left out, so bpfrt may refuse what the kernel accepts: its
 * lists of fields that stay trusted or RCU-protected when walked, iterators' per-target
 * argument types beyond "pointers may be NULL", struct arguments wider than 8 bytes.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "btf/btf.h"
#include "verifier/internal.h"

#define MAX_ARGS 12 /* MAX_BPF_FUNC_ARGS: the context's u64 slots */

static const struct btf_type *type_of(const struct brt_env *env, uint32_t id)
{
	return brt_btf_type(env->kbtf, id);
}

static unsigned kind_of(const struct btf_type *t)
{
	return t ? BTF_INFO_KIND(t->info) : BTF_KIND_UNKN;
}

static int is_struct(const struct btf_type *t)
{
	return kind_of(t) == BTF_KIND_STRUCT || kind_of(t) == BTF_KIND_UNION;
}

/* btf_type_str(): the kind's name as the kernel's log spells it ("UNKN" for void) */
static const char *kind_str(const struct btf_type *t)
{
	return t ? brt_btf_kind_name(kind_of(t)) : "UNKN";
}

/* the type id past typedefs, qualifiers and type tags */
static uint32_t skip_mods(const struct brt_env *env, uint32_t id)
{
	return brt_btf_skip_mods(env->kbtf, id);
}

const char *brt_btf_reg_name(const struct brt_env *env, uint32_t btf_id)
{
	return env->kbtf ? brt_btf_name(env->kbtf, btf_id) : "";
}

/* check_struct_ops_btf_id(): a struct_ops program implements member expected_attach_type
 * of a struct of operations the kernel registered (btf/struct_ops.def: tcp_congestion_ops,
 * bpf_dummy_ops on 6.18 as configured here), named by attach_btf_id; loaded without one
 * (libbpf does when no struct_ops map refers to the program) the kernel answers ENOTSUPP
 * without a message.  Its context is then the member's arguments, as a tracing program's. */
static int check_struct_ops(struct brt_env *env)
{
	const struct brt_verify_opts *o = env->opts;
	const struct brt_btf *btf = o->attach_btf;
	uint32_t id = o->attach_btf_id, idx = o->expected_attach_type;
	const struct btf_member *m;
	const struct btf_type *proto;
	const char *mname;

	if (!o->gpl) {
		brt_verr(env, "struct ops programs must have a GPL compatible license\n");
		return -EINVAL;
	}
	if (!id)
		return -524; /* the kernel's internal ENOTSUPP */
	if (brt_struct_ops_find(btf, id, 0, &env->st_ops)) {
		brt_verr(env, "attach_btf_id %u is not a supported struct\n", id);
		return -524;
	}
	if (idx >= BTF_INFO_VLEN(env->st_ops.type->info)) {
		brt_verr(env, "attach to invalid member idx %u of struct %s\n", idx,
			 env->st_ops.name);
		return -EINVAL;
	}
	m = (const struct btf_member *)(env->st_ops.type + 1) + idx;
	mname = brt_btf_str(btf, m->name_off);
	mname = mname ? mname : "";
	proto = brt_btf_func_ptr_proto(btf, m->type);
	if (!proto) {
		brt_verr(env, "attach to invalid member %s(@idx %u) of struct %s\n", mname, idx,
			 env->st_ops.name);
		return -EINVAL;
	}
	/* bpf_struct_ops_supported(): the member has a stub; bpf_dummy_ops's check_member:
	 * only test_sleepable may be sleepable */
	if (!brt_struct_ops_stubbed(&env->st_ops, mname) ||
	    (env->st_ops.kind == BRT_STOPS_DUMMY && (o->prog_flags & BPF_F_SLEEPABLE) &&
	     strcmp(mname, "test_sleepable"))) {
		brt_verr(env, "attach to unsupported member %s of struct %s\n", mname,
			 env->st_ops.name);
		return brt_struct_ops_stubbed(&env->st_ops, mname) ? -EINVAL : -524;
	}
	env->st_member = idx;
	env->attach_proto = proto;
	env->attach_name = mname;
	return 0;
}

/* The iterators whose context hands the program a map's key or value as a buffer
 * (PTR_TO_BUF in their ctx_arg_info: bpf_map_elem, bpf_sk_storage_map, sockmap).  The
 * running kernel (6.18.44) refuses every program of these targets at load with EPERM and
 * no message, after check_subprogs() and before the walk, even "r0 = 0; exit"
 * (Inspektor Gadget's map iterators, the selftests' bpf_iter_test_kern6); 6.18.19's
 * source shows no such check, so the rule is measured, not read.  bpfrt has no buffer
 * registers to type their key and value with either: it read them as scalars and
 * accepted what the kernel refuses.  tname: bpf_iter_<target> */
static int iter_buf_target(const char *tname)
{
	static const char *const buf[] = { "bpf_map_elem", "bpf_sk_storage_map", "sockmap" };

	for (size_t i = 0; i < sizeof(buf) / sizeof(buf[0]); i++)
		if (!strcmp(tname + 9, buf[i]))
			return 1;
	return 0;
}

int brt_check_attach_btf(struct brt_env *env)
{
	const struct brt_verify_opts *o = env->opts;
	const struct brt_btf *btf = o->attach_btf;
	uint32_t id = o->attach_btf_id, eat = o->expected_attach_type;
	const struct btf_type *t;
	const char *tname;

	if (o->prog_type == BPF_PROG_TYPE_STRUCT_OPS)
		return check_struct_ops(env);
	if (o->prog_type != BPF_PROG_TYPE_TRACING && o->prog_type != BPF_PROG_TYPE_LSM &&
	    o->prog_type != BPF_PROG_TYPE_EXT)
		return 0;
	if (!id) {
		brt_verr(env, "Tracing programs must provide btf_id\n");
		return -EINVAL;
	}
	if (!btf) {
		brt_verr(env, "FENTRY/FEXIT program can only be attached to another program "
			      "annotated with BTF\n");
		return -EINVAL;
	}
	t = brt_btf_type(btf, id);
	if (!t) {
		brt_verr(env, "attach_btf_id %u is invalid\n", id);
		return -EINVAL;
	}
	tname = brt_btf_name(btf, id);
	if (o->prog_type == BPF_PROG_TYPE_EXT) {
		/* no target program: extensions replace program functions only */
		brt_verr(env, "Cannot replace kernel functions\n");
		return -EINVAL;
	}
	switch (eat) {
	case BPF_TRACE_RAW_TP:
		if (kind_of(t) != BTF_KIND_TYPEDEF) {
			brt_verr(env, "attach_btf_id %u is not a typedef\n", id);
			return -EINVAL;
		}
		if (strncmp(tname, "btf_trace_", 10)) {
			brt_verr(env, "attach_btf_id %u points to wrong type name %s\n", id, tname);
			return -EINVAL;
		}
		tname += 10;
		/* The kernel takes the arguments from the tracepoint's template function when
		 * it finds it (for their names); their types are the typedef's. */
		t = type_of(env, t->type);
		if (kind_of(t) != BTF_KIND_PTR)
			return -EINVAL;
		t = type_of(env, t->type);
		if (kind_of(t) != BTF_KIND_FUNC_PROTO)
			return -EINVAL;
		env->attach_trace = 1;
		break;
	case BPF_TRACE_ITER:
	case BPF_MODIFY_RETURN:
	case BPF_LSM_MAC:
	case BPF_LSM_CGROUP:
	case BPF_TRACE_FENTRY:
	case BPF_TRACE_FEXIT:
		if (kind_of(t) != BTF_KIND_FUNC) {
			brt_verr(env, "attach_btf_id %u is not a function\n", id);
			return -EINVAL;
		}
		t = type_of(env, t->type);
		if (kind_of(t) != BTF_KIND_FUNC_PROTO)
			return -EINVAL;
		if (BTF_INFO_VLEN(t->info) > MAX_ARGS) {
			brt_verr(env, "The function %s has %u arguments. Too many.\n", tname,
				 BTF_INFO_VLEN(t->info));
			return -EINVAL;
		}
		/* bpf_iter_prog_supported(): the target is named bpf_iter_<target> */
		if (eat == BPF_TRACE_ITER && strncmp(tname, "bpf_iter_", 9))
			return -EINVAL;
		if (eat == BPF_TRACE_ITER && iter_buf_target(tname))
			return -EPERM;
		break;
	default:
		return -EINVAL;
	}
	env->attach_proto = t;
	env->attach_name = tname;
	return 0;
}

/* The iterator targets whose ctx_arg_info registers the object as PTR_TO_BTF_ID_OR_NULL
 * | PTR_TRUSTED (6.18: task, cgroup, bpf_map, kmem_cache, tcp, udp); the others' (task_file,
 * task_vma, bpf_prog, bpf_link, unix, netlink, ipv6_route, ksym, sk storage, sockmap,
 * dmabuf) are plain PTR_TO_BTF_ID_OR_NULL, which btf_ctx_access() gives as registered,
 * without the trust prog_args_trusted() gives other arguments.  tname: bpf_iter_<target> */
static int iter_arg_trusted(const char *tname)
{
	static const char *const trusted[] = { "task", "cgroup", "bpf_map", "kmem_cache", "tcp",
					       "udp" };

	if (!tname || strncmp(tname, "bpf_iter_", 9))
		return 1;
	for (size_t i = 0; i < sizeof(trusted) / sizeof(trusted[0]); i++)
		if (!strcmp(tname + 9, trusted[i]))
			return 1;
	return 0;
}

/* is_void_or_int_ptr(): a pointer to void or to an integer reads as a number */
static int void_or_int_ptr(const struct brt_env *env, const struct btf_type *ptr)
{
	const struct btf_type *t = type_of(env, skip_mods(env, ptr->type));

	return !t || kind_of(t) == BTF_KIND_INT;
}

/* btf_param_match_suffix(): an argument named "..__nullable" may be NULL */
static int suffix_nullable(const struct brt_env *env, const struct btf_param *p)
{
	const char *name = brt_btf_str(env->kbtf, p->name_off);
	size_t n = name ? strlen(name) : 0;

	return n > 10 && !strcmp(name + n - 10, "__nullable");
}

/* the type tag ("user", "percpu", "rcu") right under a pointer, or "" */
static const char *ptr_tag(const struct brt_env *env, const struct btf_type *ptr)
{
	const struct btf_type *t = type_of(env, ptr->type);

	if (kind_of(t) == BTF_KIND_TYPE_TAG && !BTF_INFO_KFLAG(t->info))
		return brt_btf_str(env->kbtf, t->name_off);
	return "";
}

/* btf_ctx_arg_idx(): which argument of the whole prototype (a tracepoint's __data
 * included) holds byte off: pointers take 8 bytes, others their size rounded up to 8;
 * one past them the return value, then nr_args + 1. */
static uint32_t arg_idx(const struct brt_env *env, const struct btf_type *proto, int off)
{
	const struct btf_param *args = (const struct btf_param *)(proto + 1);
	uint32_t n = BTF_INFO_VLEN(proto->info), offset = 0;
	const struct btf_type *t;

	for (uint32_t i = 0; i <= n; i++) {
		t = type_of(env, skip_mods(env, i < n ? args[i].type : proto->type));
		offset += kind_of(t) == BTF_KIND_PTR ? 8 : t ? (t->size + 7) / 8 * 8 : 0;
		if ((uint32_t)off < offset)
			return i;
	}
	return n + 1;
}

/* raw_tp_args.def's mask for a tracepoint, 0 when it is not listed */
static uint64_t raw_tp_mask(const char *tp)
{
	static const struct {
		const char *tp;
		uint64_t mask;
	} list[] = {
#define RAW_TP_ARGS(name, mask) { name, mask },
#include "verifier/raw_tp_args.def"
#undef RAW_TP_ARGS
	};

	for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
		if (!strcmp(list[i].tp, tp))
			return list[i].mask;
	return 0;
}

int brt_btf_ctx_access(struct brt_env *env, int off, int size, enum brt_access acc,
		       uint32_t *rt, uint32_t *btf_id)
{
	int maybe_err = 0;
	const struct btf_type *t = env->attach_proto;
	const struct btf_param *args;
	const char *tname = env->attach_name ? env->attach_name : "";
	uint32_t eat = env->opts->expected_attach_type, nr_args, arg, id;
	const char *tag;

	*rt = SCALAR_VALUE;
	*btf_id = 0;
	/* bpf_tracing_ctx_access(): reads of MAX_BPF_FUNC_ARGS u64 slots */
	if (off < 0 || off >= 8 * MAX_ARGS || acc != BRT_READ || off % size)
		return 0;
	if (!t)
		return 0;
	if (off % 8) {
		brt_verr(env, "func '%s' offset %d is not multiple of 8\n", tname, off);
		return 0;
	}
	args = (const struct btf_param *)(t + 1);
	nr_args = BTF_INFO_VLEN(t->info);
	arg = arg_idx(env, t, off);
	if (env->attach_trace) {
		/* skip the typedef's first argument, the tracepoint's 'void *__data' */
		args++;
		nr_args--;
	}
	if (arg > nr_args) {
		brt_verr(env, "func '%s' doesn't have %d-th argument\n", tname, arg + 1);
		return 0;
	}
	if (arg == nr_args) {
		/* one past the arguments: the return value, for fexit-like programs */
		switch (eat) {
		case BPF_LSM_MAC:
		case BPF_LSM_CGROUP:
		case BPF_TRACE_FEXIT:
			id = t->type;
			break;
		case BPF_MODIFY_RETURN:
			id = skip_mods(env, t->type);
			if (kind_of(type_of(env, id)) != BTF_KIND_INT || type_of(env, id)->size > 8) {
				brt_verr(env, "ret type %s not allowed for fmod_ret\n",
					 kind_str(type_of(env, id)));
				return 0;
			}
			break;
		default:
			brt_verr(env, "func '%s' doesn't have %d-th argument\n", tname, arg + 1);
			return 0;
		}
	} else {
		id = args[arg].type;
	}
	id = skip_mods(env, id);
	t = type_of(env, id);
	if (kind_of(t) == BTF_KIND_INT || kind_of(t) == BTF_KIND_ENUM ||
	    kind_of(t) == BTF_KIND_ENUM64 || is_struct(t))
		return 1; /* a number (or a struct passed by value, read as one) */
	if (kind_of(t) != BTF_KIND_PTR) {
		brt_verr(env, "func '%s' arg%d '%s' has type %s. Only pointer access is allowed\n",
			 tname, arg, t ? brt_btf_str(env->kbtf, t->name_off) : "",
			 kind_str(t));
		return 0;
	}
	if (size != 8) {
		brt_verr(env, "func '%s' size %d must be 8\n", tname, size);
		return 0;
	}
	if (void_or_int_ptr(env, t))
		return 1;
	if (env->st_ops.name && arg < nr_args &&
	    (brt_struct_ops_arg_flags(env->kbtf, &env->st_ops, tname, arg) &
	     BRT_STOPS_ARG_NULLABLE)) {
		/* the stub's "__nullable" argument (the kernel's ctx_arg_info) */
		*rt = PTR_TO_BTF_ID | PTR_TRUSTED | PTR_MAYBE_NULL;
		*btf_id = skip_mods(env, t->type);
		return 1;
	}
	*rt = PTR_TO_BTF_ID;
	/* prog_args_trusted(): tracepoint and iterator arguments are trusted, and every
	 * struct_ops argument */
	if (eat == BPF_TRACE_RAW_TP || eat == BPF_TRACE_ITER ||
	    env->opts->prog_type == BPF_PROG_TYPE_STRUCT_OPS)
		*rt |= PTR_TRUSTED;
	if (arg < nr_args && suffix_nullable(env, &args[arg]))
		*rt |= PTR_MAYBE_NULL;
	/* an iterator's object arguments (after its meta) may be NULL at the end; they are
	 * trusted only where the target registers them so (its ctx_arg_info) */
	if (eat == BPF_TRACE_ITER && arg > 0) {
		*rt |= PTR_MAYBE_NULL;
		if (!iter_arg_trusted(tname))
			*rt &= ~PTR_TRUSTED;
	}
	if (eat == BPF_TRACE_RAW_TP) {
		uint64_t mask = raw_tp_mask(tname);

		if (mask & (1ull << (arg * 4)))
			*rt |= PTR_MAYBE_NULL;
		maybe_err = (mask & (2ull << (arg * 4))) != 0;
	}
	tag = ptr_tag(env, t);
	if (!strcmp(tag, "user"))
		*rt |= MEM_USER;
	else if (!strcmp(tag, "percpu"))
		*rt |= MEM_PERCPU;
	id = skip_mods(env, t->type);
	t = type_of(env, id);
	if (!is_struct(t)) {
		brt_verr(env, "func '%s' arg%d type %s is not a struct\n", tname, arg, kind_str(t));
		*rt = SCALAR_VALUE;
		return 0;
	}
	/* an iterator's object arguments come from its target's ctx_arg_info, where
	 * btf_ctx_access() returns before this line; its meta (argument 0) does not */
	if (eat != BPF_TRACE_ITER || arg == 0)
		brt_vinfo(env, "func '%s' arg%d has btf_id %u type %s '%s'\n", tname, arg, id,
			  kind_str(t), brt_btf_name(env->kbtf, id));
	*btf_id = id;
	/* bpf_tcp_ca_is_valid_access(): a congestion control's struct sock is its tcp_sock */
	if (env->st_ops.kind == BRT_STOPS_TCP_CA && (*rt & ~(uint32_t)PTR_TRUSTED) == PTR_TO_BTF_ID &&
	    !strcmp(brt_btf_name(env->kbtf, id), "sock") &&
	    kind_of(type_of(env, id)) == BTF_KIND_STRUCT) {
		int tcp = brt_btf_find(env->kbtf, "tcp_sock", BTF_KIND_STRUCT);

		if (tcp > 0)
			*btf_id = (uint32_t)tcp;
	}
	/* checked as a pointer, read as the number it may be (an error or a marker) */
	if (maybe_err) {
		brt_vinfo(env, "marking pointer arg%d as scalar as it may encode error", arg);
		*rt = SCALAR_VALUE;
		*btf_id = 0;
	}
	return 1;
}

enum walk { WALK_SCALAR, WALK_PTR, WALK_PTR_UNTRUSTED, WALK_STRUCT };

/* __btf_resolve_size(): a member's type with arrays linearised: *size the whole member,
 * *elem the innermost element type (modifiers skipped) and *nelems the element count;
 * returns the array type when the member is one, else the element; NULL: no size. */
static const struct btf_type *resolve(const struct brt_env *env, uint32_t id, uint32_t *size,
				      uint32_t *elem, uint32_t *nelems, uint32_t *mid)
{
	const struct btf_type *t = type_of(env, id), *array = NULL;
	uint32_t n = 1, array_id = 0;

	for (int depth = 0; t && depth < 32; depth++) {
		switch (kind_of(t)) {
		case BTF_KIND_INT:
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
		case BTF_KIND_FLOAT:
			*size = n * t->size;
			goto done;
		case BTF_KIND_PTR:
			*size = n * 8;
			goto done;
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			t = type_of(env, id);
			break;
		case BTF_KIND_ARRAY: {
			const struct btf_array *a = (const struct btf_array *)(t + 1);

			if (!array) {
				array = t;
				array_id = id;
			}
			if (n && a->nelems > UINT32_MAX / n)
				return NULL;
			n *= a->nelems;
			id = a->type;
			t = type_of(env, id);
			break;
		}
		default:
			return NULL;
		}
	}
	return NULL;
done:
	*elem = id;
	*nelems = n;
	*mid = array ? array_id : id;
	return array ? array : t;
}

/* btf_struct_walk(): what lies at off/size of struct id; *field names the pointer member
 * a WALK_PTR found. */
static int walk(struct brt_env *env, uint32_t id, int off, int size, uint32_t *next,
		uint32_t *flag, const char **field)
{
	const struct brt_btf *btf = env->kbtf;
	const struct btf_type *t = type_of(env, id);

again:
	id = skip_mods(env, id);
	t = type_of(env, id);
	const char *tname = brt_btf_name(btf, id);
	const struct btf_member *m = (const struct btf_member *)(t + 1);
	uint32_t vlen;

	if (!tname || !*tname)
		tname = "(anon)"; /* __btf_name_by_offset() of name offset 0 */

	if (!is_struct(t)) {
		brt_verr(env, "Type '%s' is not a struct\n", tname);
		return -EINVAL;
	}
	vlen = BTF_INFO_VLEN(t->info);
	if (kind_of(t) == BTF_KIND_UNION && vlen != 1)
		*flag |= PTR_UNTRUSTED; /* walking a union gives untrusted pointers */
	if ((uint32_t)(off + size) > t->size) {
		/* past the end: only into a trailing flexible array of ints or structs */
		const struct btf_type *mt, *et;
		const struct btf_array *a;
		uint32_t moff;

		if (vlen == 0)
			goto beyond;
		mt = type_of(env, skip_mods(env, m[vlen - 1].type));
		if (kind_of(mt) != BTF_KIND_ARRAY)
			goto beyond;
		a = (const struct btf_array *)(mt + 1);
		if (a->nelems != 0)
			goto beyond;
		moff = (BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[vlen - 1].offset)
						: m[vlen - 1].offset) / 8;
		if ((uint32_t)off < moff)
			goto beyond;
		id = skip_mods(env, a->type);
		et = type_of(env, id);
		if (kind_of(et) == BTF_KIND_INT)
			return WALK_SCALAR;
		if (!is_struct(et) || !et->size)
			goto beyond;
		off = (int)(((uint32_t)off - moff) % et->size);
		goto again;
beyond:
		brt_verr(env, "access beyond struct %s at off %u size %u\n", tname, (unsigned)off,
			 (unsigned)size);
		return -EACCES;
	}
	for (uint32_t i = 0; i < vlen; i++) {
		uint32_t bitoff = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							   : m[i].offset;
		uint32_t bitsize = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BITFIELD_SIZE(m[i].offset)
							    : 0;
		uint32_t moff = bitoff / 8, msize = 0, elem = 0, nelems = 0, mid = 0, mend;
		const struct btf_type *mt;
		const char *mname = brt_btf_str(btf, m[i].name_off);

		if ((uint32_t)(off + size) <= moff)
			break;
		if (bitsize) {
			if ((uint32_t)off <= moff &&
			    (bitoff + bitsize + 7) / 8 <= (uint32_t)(off + size))
				return WALK_SCALAR;
			continue;
		}
		if ((uint32_t)off < moff)
			break; /* a hole */
		mt = resolve(env, m[i].type, &msize, &elem, &nelems, &mid);
		if (!mt) {
			brt_verr(env, "field %s doesn't have size\n", mname ? mname : "");
			return -EFAULT;
		}
		mend = moff + msize;
		if ((uint32_t)off >= mend)
			continue;
		if (kind_of(mt) == BTF_KIND_ARRAY) {
			if (moff == mend)
				continue; /* empty array */
			msize /= nelems;
			moff += ((uint32_t)off - moff) / msize * msize;
			mt = type_of(env, elem);
			mid = elem;
		}
		if (is_struct(mt)) {
			if ((uint32_t)off == moff) {
				*next = mid;
				return WALK_STRUCT;
			}
			off -= (int)moff;
			id = mid;
			goto again;
		}
		if (kind_of(mt) == BTF_KIND_PTR) {
			const char *tag = ptr_tag(env, mt);
			uint32_t sid;

			if (msize != (uint32_t)size || (uint32_t)off != moff) {
				brt_verr(env, "cannot access ptr member %s with moff %u in struct %s "
					      "with off %u size %u\n",
					 mname ? mname : "", moff, tname, (unsigned)off, (unsigned)size);
				return -EACCES;
			}
			sid = skip_mods(env, mt->type);
			if (!is_struct(type_of(env, sid)))
				return WALK_PTR_UNTRUSTED;
			if (!strcmp(tag, "user"))
				*flag |= MEM_USER;
			else if (!strcmp(tag, "percpu"))
				*flag |= MEM_PERCPU;
			else if (!strcmp(tag, "rcu"))
				*flag |= MEM_RCU;
			*next = sid;
			*field = mname ? mname : "";
			return WALK_PTR;
		}
		/* ints (and arrays of them) may be read anywhere inside the member */
		if ((uint32_t)(off + size) > mend && !(*flag & PTR_UNTRUSTED)) {
			brt_verr(env, "access beyond the end of member %s (mend:%u) in struct %s "
				      "with off %u size %u\n",
				 mname ? mname : "", mend, tname, (unsigned)off, (unsigned)size);
			return -EACCES;
		}
		return WALK_SCALAR;
	}
	brt_verr(env, "struct %s doesn't have field at offset %d\n", tname, off);
	return -EINVAL;
}

/* btf_nested_type_is_trusted(): whether the kernel lists field (a pointer to struct
 * target) of struct outer as keeping its parent's trust.  The lists are types of the
 * kernel's own BTF, "<outer><suffix>" (task_struct__safe_rcu, bpf_iter_meta__safe_trusted,
 * ...) whose pointer members name the fields: read from vmlinux, so they are the running
 * kernel's. */
static int safe_field(struct brt_env *env, uint32_t outer, const char *field, uint32_t target,
		      const char *suffix)
{
	const struct btf_type *t = type_of(env, outer), *st;
	const struct btf_member *m;
	char name[64];
	int sid;

	if (!t || !*field ||
	    snprintf(name, sizeof(name), "%s%s", brt_btf_name(env->kbtf, outer), suffix) >=
		    (int)sizeof(name))
		return 0;
	sid = brt_btf_find(env->kbtf, name, kind_of(t));
	st = sid > 0 ? type_of(env, (uint32_t)sid) : NULL;
	if (!st || !is_struct(st))
		return 0;
	m = (const struct btf_member *)(st + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(st->info); i++) {
		const struct btf_type *mt = type_of(env, m[i].type);
		const char *mname = brt_btf_str(env->kbtf, m[i].name_off);

		if (mt && kind_of(mt) == BTF_KIND_PTR && skip_mods(env, mt->type) == target &&
		    mname && !strcmp(mname, field))
			return 1;
	}
	return 0;
}

/* The byte range of the member called name in struct id or in a struct nested in it (the
 * first found depth-first, as a C name reaches into embedded structs); 0 or -ENOENT. */
static int member_range(const struct brt_env *env, uint32_t id, const char *name,
			uint32_t base, int depth, uint32_t *off, uint32_t *end, uint32_t *type)
{
	const struct btf_type *t = type_of(env, skip_mods(env, id));
	const struct btf_member *m;

	if (!is_struct(t) || depth > 8)
		return -ENOENT;
	m = (const struct btf_member *)(t + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							 : m[i].offset;
		const char *mname = brt_btf_str(env->kbtf, m[i].name_off);
		uint64_t size;

		if (mname && !strcmp(mname, name)) {
			if (brt_btf_resolve_size(env->kbtf, m[i].type, &size))
				return -ENOENT;
			*off = base + bits / 8;
			*end = *off + (uint32_t)size;
			*type = m[i].type;
			return 0;
		}
	}
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							 : m[i].offset;

		if (!member_range(env, m[i].type, name, base + bits / 8, depth + 1, off, end, type))
			return 0;
	}
	return -ENOENT;
}

/* A struct_ops verifier_ops' btf_struct_access(): which kernel memory a program of that
 * struct may write.  bpf_tcp_ca_btf_struct_access(): the congestion control's fields of
 * its tcp_sock (offsets from the kernel's BTF); bpf_dummy_ops_btf_struct_access(): its
 * bpf_dummy_ops_state. */
static int st_ops_write(struct brt_env *env, const struct brt_reg *reg, int off, int size)
{
	static const char *const tcp_fields[] = {
		"sk_pacing_rate", "sk_pacing_status", "icsk_ca_priv", "icsk_ack.pending",
		"snd_cwnd", "snd_cwnd_cnt", "snd_cwnd_stamp", "snd_ssthresh", "ecn_flags",
		"app_limited",
	};
	const char *tname = brt_btf_reg_name(env, reg->btf_id);

	if (env->st_ops.kind == BRT_STOPS_DUMMY) {
		const struct btf_type *t = type_of(env, reg->btf_id);

		if (strcmp(tname, "bpf_dummy_ops_state") || kind_of(t) != BTF_KIND_STRUCT) {
			brt_verr(env, "only access to bpf_dummy_ops_state is supported\n");
			return -EACCES;
		}
		if ((uint32_t)off + (uint32_t)size > t->size) {
			brt_verr(env, "write access at off %d with size %d\n", off, size);
			return -EACCES;
		}
		return 0;
	}
	if (strcmp(tname, "tcp_sock") || kind_of(type_of(env, reg->btf_id)) != BTF_KIND_STRUCT) {
		brt_verr(env, "only read is supported\n");
		return -EACCES;
	}
	for (size_t i = 0; i < sizeof(tcp_fields) / sizeof(tcp_fields[0]); i++) {
		const char *dot = strchr(tcp_fields[i], '.');
		uint32_t moff, mend, mtype;
		char outer[32];

		snprintf(outer, sizeof(outer), "%.*s",
			 (int)(dot ? (size_t)(dot - tcp_fields[i]) : strlen(tcp_fields[i])),
			 tcp_fields[i]);
		if (member_range(env, reg->btf_id, outer, 0, 0, &moff, &mend, &mtype))
			continue;
		/* a member of a nested struct (icsk_ack.pending): looked up in that struct */
		if (dot && member_range(env, mtype, dot + 1, moff, 0, &moff, &mend, &mtype))
			continue;
		/* icsk_ca_priv is a range (bpf_ctx_range()); the others start at their member */
		if (i == 2 ? ((uint32_t)off < moff || (uint32_t)off >= mend) : (uint32_t)off != moff)
			continue;
		if ((uint32_t)off + (uint32_t)size > mend) {
			brt_verr(env, "write access at off %d with size %d beyond the member of "
				      "tcp_sock ended at %u\n", off, size, mend);
			return -EACCES;
		}
		return 0;
	}
	brt_verr(env, "no write support to tcp_sock at off %d\n", off);
	return -EACCES;
}

/* A write through a kernel pointer in a tc or XDP program (tc_cls_act_btf_struct_access()
 * and xdp_btf_struct_access(): conntrack's _nf_conntrack_btf_struct_access()): an nf_conn
 * (or nf_conn___init, its layout) takes its mark, nothing else.  bpfrt's conntrack
 * lookups and allocations never give an entry, so such a write never runs here. */
static int nf_conn_write(struct brt_env *env, const struct brt_reg *reg, int off, int size)
{
	const char *tname = brt_btf_reg_name(env, reg->btf_id);
	uint32_t moff, mend, mtype;

	if ((strcmp(tname, "nf_conn") && strcmp(tname, "nf_conn___init")) ||
	    kind_of(type_of(env, reg->btf_id)) != BTF_KIND_STRUCT) {
		brt_verr(env, "only read is supported\n");
		return -EACCES;
	}
	if (member_range(env, reg->btf_id, "mark", 0, 0, &moff, &mend, &mtype) ||
	    (uint32_t)off != moff) {
		brt_verr(env, "no write support to nf_conn at off %d\n", off);
		return -EACCES;
	}
	if ((uint32_t)off + (uint32_t)size > mend) {
		brt_verr(env, "write access at off %d with size %d beyond the member of nf_conn "
			      "ended at %u\n", off, size, mend);
		return -EACCES;
	}
	return 0;
}

/* btf_struct_access() of an object the program allocated (its type is the program's,
 * graph.c): reads and writes, but not of its special fields, and what a load gives is a
 * number (a local type's pointer members do not become pointers again) */
static int local_access(struct brt_env *env, const struct brt_reg *reg, int off, int size)
{
	const struct brt_btf *saved = env->kbtf;
	uint32_t id = reg->btf_id, flag = 0;
	const char *field = "";
	int ret = brt_graph_access(env, reg, off, size);

	/* walk() reads types through env->kbtf: the object's BTF for this walk */
	env->kbtf = brt_graph_home_btf(env, reg->map_idx);
	while (!ret) {
		ret = walk(env, id, off, size, &id, &flag, &field);
		if (ret != WALK_STRUCT)
			break;
		off = 0;
		ret = 0;
	}
	env->kbtf = saved;
	return ret < 0 ? ret : 0;
}

int brt_btf_ptr_access(struct brt_env *env, int regno, const struct brt_reg *reg, int off,
		       int size, enum brt_access acc, uint32_t *rt, uint32_t *btf_id)
{
	int local = brt_btf_local(reg->type);
	const char *tname = local ? brt_local_type_name(env, reg->map_idx, reg->btf_id)
				  : brt_btf_reg_name(env, reg->btf_id);
	uint32_t id = reg->btf_id, flag = 0;
	const char *field = "";
	int ret;

	*rt = SCALAR_VALUE;
	*btf_id = 0;
	if (!env->allow_ptr_leaks) {
		brt_verr(env, "'struct %s' access is allowed only to CAP_PERFMON and CAP_SYS_ADMIN\n",
			 tname);
		return -EPERM;
	}
	if (!env->opts->gpl && !local) {
		brt_verr(env, "Cannot access kernel 'struct %s' from non-GPL compatible program\n",
			 tname);
		return -EINVAL;
	}
	if (off < 0) {
		brt_verr(env, "R%d is ptr_%s invalid negative access: off=%d\n", regno, tname, off);
		return -EACCES;
	}
	if (!brt_tnum_is_const(reg->var_off) || reg->var_off.value) {
		char tn[48];

		brt_tnum_strn(tn, sizeof(tn), reg->var_off);
		brt_verr(env, "R%d is ptr_%s invalid variable offset: off=%d, var_off=%s\n", regno,
			 tname, off, tn);
		return -EACCES;
	}
	if (reg->type & MEM_USER) {
		brt_verr(env, "R%d is ptr_%s access user memory: off=%d\n", regno, tname, off);
		return -EACCES;
	}
	if (reg->type & MEM_PERCPU) {
		brt_verr(env, "R%d is ptr_%s access percpu memory: off=%d\n", regno, tname, off);
		return -EACCES;
	}
	/* writes go to the program's own objects, not through an untrusted pointer to one
	 * (a __kptr_untrusted field's load) */
	if (local && (reg->type & PTR_UNTRUSTED) && acc != BRT_READ) {
		brt_verr(env, "only read is supported\n");
		return -EACCES;
	}
	if (local)
		return local_access(env, reg, off, size);
	if (acc != BRT_READ && env->st_ops.kind)
		return st_ops_write(env, reg, off, size);
	if (acc != BRT_READ && (env->opts->prog_type == BPF_PROG_TYPE_SCHED_CLS ||
				env->opts->prog_type == BPF_PROG_TYPE_SCHED_ACT ||
				env->opts->prog_type == BPF_PROG_TYPE_XDP))
		return nf_conn_write(env, reg, off, size);
	if (acc != BRT_READ) {
		brt_verr(env, "only read is supported\n");
		return -EACCES;
	}
	for (;;) {
		ret = walk(env, id, off, size, &id, &flag, &field);
		if (ret < 0)
			return ret;
		if (ret != WALK_STRUCT)
			break;
		off = 0; /* a nested struct at exactly off: look inside it */
	}
	if (ret == WALK_SCALAR)
		return 0;
	if (ret == WALK_PTR_UNTRUSTED) {
		*rt = PTR_TO_MEM | MEM_RDONLY | PTR_UNTRUSTED;
		return 0;
	}
	/* what walking keeps of the pointer's trust (check_ptr_to_btf_access()): the
	 * fields the kernel lists as keeping it (safe_field()), else RCU-protected ones
	 * inside an RCU read section, else none */
	if (reg->type & PTR_UNTRUSTED) {
		flag = PTR_UNTRUSTED;
	} else if ((reg->type & (PTR_TRUSTED | MEM_RCU)) || reg->ref_obj_id) {
		int in_rcu = env->cur->active_rcu || env->cur->active_locks ||
			     !(env->opts->prog_flags & BPF_F_SLEEPABLE);

		if (safe_field(env, reg->btf_id, field, id, "__safe_trusted")) {
			flag |= PTR_TRUSTED;
		} else if (safe_field(env, reg->btf_id, field, id, "__safe_trusted_or_null")) {
			flag |= PTR_TRUSTED | PTR_MAYBE_NULL;
		} else if (in_rcu && !(reg->type & PTR_MAYBE_NULL)) {
			int rcu_or_null = safe_field(env, reg->btf_id, field, id,
						     "__safe_rcu_or_null");

			if (safe_field(env, reg->btf_id, field, id, "__safe_rcu")) {
				flag |= MEM_RCU;
			} else if ((flag & MEM_RCU) || rcu_or_null) {
				flag |= MEM_RCU | PTR_MAYBE_NULL; /* __rcu pointers may be NULL */
				if (rcu_or_null)
					flag &= ~PTR_UNTRUSTED;
			} else if (!(flag & (MEM_PERCPU | MEM_USER))) {
				/* a pointer field the kernel knows nothing of: the running
				 * 6.18.44 makes it untrusted (6.18.19's source left a plain
				 * PTR_TO_BTF_ID), so helpers taking kernel objects refuse it:
				 * trace.btf_oracle's task->last_wakee cases */
				flag = PTR_UNTRUSTED;
			}
		} else {
			flag = PTR_UNTRUSTED;
		}
	} else if (flag & (MEM_PERCPU | MEM_USER)) {
		flag &= ~(PTR_TRUSTED | MEM_RCU);
	} else {
		/* walking a plain pointer (an iterator context's task_file task, what
		 * bpf_skc_to_tcp_sock() returns): 6.18.2's and 6.18.35's source keep a plain
		 * PTR_TO_BTF_ID ("old compat"), the running 6.18.44 makes it untrusted
		 * (task->nsproxy, tcp_sock->sk_socket in inspektor-gadget's snapshots; a
		 * group_leader handed to bpf_task_pt_regs is refused: probed) */
		flag = PTR_UNTRUSTED;
	}
	*rt = PTR_TO_BTF_ID | flag;
	*btf_id = id;
	return 0;
}

/* A kernel struct's id, found once per BTF (a linear search of some 100,000 types), the
 * id stored before the BTF it belongs to, so a reader that sees the BTF sees its id. */
struct kstruct_cache {
	_Atomic(const struct brt_btf *) btf;
	_Atomic uint32_t id;
};

static const char *const kstruct_names[BRT_KS_COUNT] = {
	[BRT_KS_TASK] = "task_struct",	 [BRT_KS_VMA] = "vm_area_struct",
	[BRT_KS_SOCK_COMMON] = "sock_common", [BRT_KS_SEQ_FILE] = "seq_file",
	[BRT_KS_TCP_SOCK] = "tcp_sock",	 [BRT_KS_SK_BUFF] = "sk_buff",
	[BRT_KS_XDP_BUFF] = "xdp_buff",	 [BRT_KS_CGROUP] = "cgroup",
	[BRT_KS_FILE] = "file",		 [BRT_KS_SOCKET] = "socket",
	[BRT_KS_NF_HOOK_STATE] = "nf_hook_state",
};

uint32_t brt_btf_kstruct_id(struct brt_env *env, enum brt_kstruct k)
{
	static struct kstruct_cache cache[BRT_KS_COUNT];
	struct kstruct_cache *c = &cache[k];
	int id;

	if (!env->kbtf)
		env->kbtf = brt_btf_vmlinux();
	if (!env->kbtf)
		return 0;
	if (atomic_load(&c->btf) == env->kbtf)
		return atomic_load(&c->id);
	id = brt_btf_find(env->kbtf, kstruct_names[k], BTF_KIND_STRUCT);
	atomic_store(&c->id, id > 0 ? (uint32_t)id : 0);
	atomic_store(&c->btf, env->kbtf);
	return id > 0 ? (uint32_t)id : 0;
}

const char *brt_btf_kstruct_name(enum brt_kstruct k)
{
	return kstruct_names[k];
}

/* btf_struct_ids_match() for kfunc arguments, of any BTF (a program's own types too),
 * without the walk's log: the struct at off is want, or (unless strict) holds it as a
 * member at that offset, nested.  brt_btf_reg_struct_match() below is the same rule for
 * helper arguments of vmlinux's structs, logging the walk as the kernel's. */
int brt_btf_struct_ids_match(const struct brt_btf *btf, uint32_t id, int32_t off, uint32_t want,
			     int strict)
{
	for (int depth = 0; depth < 32; depth++) {
		const struct btf_type *t;
		const struct btf_member *m;
		int found = 0;

		id = brt_btf_skip_mods(btf, id);
		t = brt_btf_type(btf, id);
		if (!is_struct(t))
			return 0;
		if (id == want && !off)
			return 1;
		if (strict || off < 0)
			return 0;
		m = (const struct btf_member *)(t + 1);
		for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info) && !found; i++) {
			uint32_t bit = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							       : m[i].offset;
			uint32_t mid = brt_btf_skip_mods(btf, m[i].type);
			const struct btf_type *mt = brt_btf_type(btf, mid);
			uint64_t sz = 0;

			if (bit % 8 || !is_struct(mt) || brt_btf_resolve_size(btf, mid, &sz) < 0)
				continue;
			if ((uint64_t)off >= bit / 8 && (uint64_t)off < bit / 8 + sz) {
				off -= (int32_t)(bit / 8);
				id = mid;
				found = 1;
			}
		}
		if (!found)
			return 0;
	}
	return 0;
}

/* btf_struct_ids_match() without strict matching: the pointer's struct is k's at offset
 * 0, or walking it as btf_struct_walk() does finds a struct at exactly its offset that
 * is k's or starts with it (struct sock and tcp_sock start with a sock_common,
 * xdp_buff_xsk with an xdp_buff); the walk logs what the kernel's does
 * (brt_btf_struct_ids_match() above does not, for kfunc arguments of any BTF). */
int brt_btf_reg_struct_match(struct brt_env *env, const struct brt_reg *reg,
			     enum brt_kstruct k)
{
	uint32_t want = brt_btf_kstruct_id(env, k), id = reg->btf_id, flag = 0;
	const char *field = "";
	int off = reg->off;

	if (!want)
		return 0;
	if (!off && skip_mods(env, id) == want)
		return 1;
	for (int depth = 0; depth < 64; depth++) {
		if (walk(env, id, off, 1, &id, &flag, &field) != WALK_STRUCT)
			return 0;
		if (skip_mods(env, id) == want)
			return 1;
		off = 0;
	}
	return 0;
}

/* nf_is_valid_access(): struct bpf_nf_ctx's state (offset 0) and skb (8) are trusted
 * pointers to the kernel's struct nf_hook_state and sk_buff (nf_ptr_to_btf_id()); 0 when
 * the kernel's BTF lacks them */
uint32_t brt_btf_nf_ctx_id(struct brt_env *env, int off)
{
	return brt_btf_kstruct_id(env, off < 8 ? BRT_KS_NF_HOOK_STATE : BRT_KS_SK_BUFF);
}

/* The context type each program type's BPF side names (the kernel's bpf_types.h):
 * btf_is_prog_ctx_type() compares names only; "" for types whose context is untyped. */
const char *brt_ctx_type_name(uint32_t prog_type)
{
	switch (prog_type) {
	case BPF_PROG_TYPE_SOCKET_FILTER:
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_CGROUP_SKB:
	case BPF_PROG_TYPE_LWT_IN:
	case BPF_PROG_TYPE_LWT_OUT:
	case BPF_PROG_TYPE_LWT_XMIT:
	case BPF_PROG_TYPE_LWT_SEG6LOCAL:
	case BPF_PROG_TYPE_SK_SKB:
	case BPF_PROG_TYPE_FLOW_DISSECTOR:
		return "__sk_buff";
	case BPF_PROG_TYPE_XDP:
		return "xdp_md";
	case BPF_PROG_TYPE_CGROUP_SOCK:
		return "bpf_sock";
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
		return "bpf_sock_addr";
	case BPF_PROG_TYPE_SOCK_OPS:
		return "bpf_sock_ops";
	case BPF_PROG_TYPE_SK_MSG:
		return "sk_msg_md";
	case BPF_PROG_TYPE_KPROBE:
		return "bpf_user_pt_regs_t";
	case BPF_PROG_TYPE_PERF_EVENT:
		return "bpf_perf_event_data";
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE:
		return "bpf_raw_tracepoint_args";
	case BPF_PROG_TYPE_CGROUP_DEVICE:
		return "bpf_cgroup_dev_ctx";
	case BPF_PROG_TYPE_CGROUP_SYSCTL:
		return "bpf_sysctl";
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
		return "bpf_sockopt";
	case BPF_PROG_TYPE_SK_REUSEPORT:
		return "sk_reuseport_md";
	case BPF_PROG_TYPE_SK_LOOKUP:
		return "bpf_sk_lookup";
	case 32: /* BPF_PROG_TYPE_NETFILTER */
		return "bpf_nf_ctx";
	default:
		return "";
	}
}
