/* global.c - global functions: a subprogram whose func_info FUNC has BTF_FUNC_GLOBAL
 * linkage is verified once, on its own, for any arguments its BTF prototype allows, and
 * each call of it only checks the caller's registers against that prototype and gives
 * back an unknown scalar (the kernel's btf_prepare_func_args(), btf_check_func_arg_match(),
 * check_func_call() and do_check_subprogs()).  So a global function that dereferences its
 * pointer argument without a NULL check is refused even when every caller passes a valid
 * pointer, as in the kernel.
 *
 * Arguments, as btf_prepare_func_args() maps them: int and enum are scalars; a pointer to
 * the program type's context struct (or tagged __arg_ctx) is PTR_TO_CTX; any other pointer
 * is memory of the pointee's size that may be NULL (__arg_nonnull: may not).  The kernel's
 * other tags (__arg_trusted, __arg_untrusted, __arg_arena) and dynptr arguments name kernel
 * objects bpfrt does not model: refused with a message of our own.
 */
#include <errno.h>
#include <string.h>

#include "btf/btf.h"
#include "verifier/internal.h"

#define MAX_ARGS 5

int brt_subprog_is_global(const struct brt_env *env, int i)
{
	const struct brt_verify_opts *o = env->opts;

	return o->func_linkage && o->prog_btf && o->func_btf_ids && i >= 0 &&
	       (uint32_t)i < o->nfuncs && o->func_linkage[i] == BTF_FUNC_GLOBAL;
}

const char *brt_subprog_name(const struct brt_env *env, int i)
{
	const struct brt_verify_opts *o = env->opts;

	if (!o->prog_btf || !o->func_btf_ids || i < 0 || (uint32_t)i >= o->nfuncs)
		return "";
	return brt_btf_name(o->prog_btf, o->func_btf_ids[i]);
}

static const struct btf_type *type_of(const struct brt_btf *btf, uint32_t id)
{
	return brt_btf_type(btf, id);
}

static unsigned kind_of(const struct btf_type *t)
{
	return t ? BTF_INFO_KIND(t->info) : BTF_KIND_UNKN;
}

static int is_modifier(const struct btf_type *t)
{
	switch (kind_of(t)) {
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		return 1;
	default:
		return 0;
	}
}

/* the type after modifiers, starting at id; *out_id its id */
static const struct btf_type *skip_mods(const struct brt_btf *btf, uint32_t id,
					uint32_t *out_id)
{
	const struct btf_type *t = type_of(btf, id);

	while (is_modifier(t)) {
		id = t->type;
		t = type_of(btf, id);
	}
	if (out_id)
		*out_id = id;
	return t;
}

static int is_struct(const struct btf_type *t)
{
	return kind_of(t) == BTF_KIND_STRUCT || kind_of(t) == BTF_KIND_UNION;
}

static int is_int_or_enum(const struct btf_type *t)
{
	return kind_of(t) == BTF_KIND_INT || kind_of(t) == BTF_KIND_ENUM ||
	       kind_of(t) == BTF_KIND_ENUM64;
}

/* The kernel's btf_type_str(): btf.c's names of the kinds. */
static const char *kind_str(const struct btf_type *t)
{
	return brt_btf_kind_name(kind_of(t));
}

static const char *name_of(const struct brt_btf *btf, const struct btf_type *t)
{
	const char *n = t ? brt_btf_str(btf, t->name_off) : "";

	return n ? n : "";
}

/* The context struct's name for the program type, as the kernel's bpf_types.h names it
 * ("" when the context is no named struct: tracing types, syscall, tracepoint's u64). */
static const char *ctx_struct(const struct brt_env *env)
{
	const struct brt_prog_type *pt = brt_prog_type(env->opts->prog_type);

	if (!pt || !pt->ctx_name || strncmp(pt->ctx_name, "struct ", 7))
		return "";
	return pt->ctx_name + 7;
}

/* btf_is_prog_ctx_type(): ptr points to the program type's context struct (or, for
 * __sk_buff and xdp_md, the kernel struct they project). */
static int is_prog_ctx_type(struct brt_env *env, const struct brt_btf *btf,
			    const struct btf_type *ptr)
{
	const struct btf_type *t = type_of(btf, ptr->type);
	const char *tname, *cname = ctx_struct(env);

	if (env->opts->prog_type == BPF_PROG_TYPE_KPROBE) {
		while (is_modifier(t) && kind_of(t) != BTF_KIND_TYPEDEF)
			t = type_of(btf, t->type);
		if (kind_of(t) == BTF_KIND_TYPEDEF && !strcmp(name_of(btf, t), "bpf_user_pt_regs_t"))
			return 1;
	}
	while (is_modifier(t))
		t = type_of(btf, t->type);
	if (!is_struct(t) || !*cname)
		return 0;
	tname = name_of(btf, t);
	if ((!strcmp(cname, "__sk_buff") && !strcmp(tname, "sk_buff")) ||
	    (!strcmp(cname, "xdp_md") && !strcmp(tname, "xdp_buff")))
		return 1;
	return !strcmp(cname, tname);
}

/* btf_validate_prog_ctx_type(): what an __arg_ctx argument may point to. */
static int validate_ctx_tag(struct brt_env *env, const struct brt_btf *btf,
			    const struct btf_type *ptr, int arg)
{
	uint32_t pt = env->opts->prog_type, eat = env->opts->expected_attach_type;
	const struct btf_type *t;
	const char *tname, *cname = ctx_struct(env);

	if (kind_of(ptr) != BTF_KIND_PTR) {
		brt_verr(env, "arg#%d type isn't a pointer\n", arg);
		return -EINVAL;
	}
	t = type_of(btf, ptr->type);
	if (pt == BPF_PROG_TYPE_KPROBE || pt == BPF_PROG_TYPE_PERF_EVENT) {
		while (is_modifier(t) && kind_of(t) != BTF_KIND_TYPEDEF)
			t = type_of(btf, t->type);
		if (kind_of(t) == BTF_KIND_TYPEDEF && !strcmp(name_of(btf, t), "bpf_user_pt_regs_t"))
			return 0;
	}
	while (is_modifier(t))
		t = type_of(btf, t->type);
	if (!t) /* void *ctx __arg_ctx */
		return 0;
	tname = name_of(btf, t);
	if (!*tname) {
		brt_verr(env, "arg#%d type doesn't have a name\n", arg);
		return -EINVAL;
	}
	switch (pt) {
	case BPF_PROG_TYPE_KPROBE:
	case BPF_PROG_TYPE_PERF_EVENT:
		if (is_struct(t) && !strcmp(tname, "pt_regs"))
			return 0;
		break;
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE:
	case BPF_PROG_TYPE_LSM:
	case BPF_PROG_TYPE_STRUCT_OPS:
		if (kind_of(t) == BTF_KIND_INT && t->size == 8)
			return 0;
		break;
	case BPF_PROG_TYPE_TRACING:
		if (eat == BPF_TRACE_RAW_TP && is_struct(t) &&
		    !strcmp(tname, "bpf_raw_tracepoint_args"))
			return 0;
		if (eat == BPF_TRACE_ITER && is_struct(t) && !strncmp(tname, "bpf_iter__", 10))
			return 0;
		if ((eat == BPF_TRACE_RAW_TP || eat == BPF_TRACE_FENTRY ||
		     eat == BPF_TRACE_FEXIT || eat == BPF_MODIFY_RETURN) &&
		    kind_of(t) == BTF_KIND_INT && t->size == 8)
			return 0;
		break;
	case BPF_PROG_TYPE_TRACEPOINT:
	case BPF_PROG_TYPE_SYSCALL:
	case BPF_PROG_TYPE_EXT:
		return 0; /* anything goes */
	default:
		break;
	}
	if (!*cname) {
		brt_verr(env, "arg#%d should be void pointer\n", arg);
		return -EINVAL;
	}
	if (!is_struct(t) || strcmp(cname, tname)) {
		brt_verr(env, "arg#%d should be `struct %s *`\n", arg, cname);
		return -EINVAL;
	}
	return 0;
}

enum {
	TAG_CTX = 1,
	TAG_NONNULL = 2,
	TAG_TRUSTED = 4,
	TAG_UNTRUSTED = 8,
	TAG_NULLABLE = 16,
	TAG_ARENA = 32,
};

/* The "arg:" decl tags on argument arg of function fn (the kernel's
 * btf_find_next_decl_tag() loop): the TAG_* set, or -errno after a message. */
static int arg_tags(struct brt_env *env, const struct brt_btf *btf, const struct btf_type *fn,
		    int arg, int global)
{
	int tags = 0;

	for (uint32_t id = 1; id < btf->ntypes; id++) {
		const struct btf_type *t = type_of(btf, id);
		const char *tag;

		if (kind_of(t) != BTF_KIND_DECL_TAG || type_of(btf, t->type) != fn ||
		    ((const struct btf_decl_tag *)(t + 1))->component_idx != arg)
			continue;
		tag = name_of(btf, t);
		if (strncmp(tag, "arg:", 4))
			continue;
		tag += 4;
		if (!global) {
			brt_verr(env, "arg#%d type tag is not supported in static functions\n", arg);
			return -EOPNOTSUPP;
		}
		if (!strcmp(tag, "ctx")) {
			tags |= TAG_CTX;
		} else if (!strcmp(tag, "trusted")) {
			tags |= TAG_TRUSTED;
		} else if (!strcmp(tag, "untrusted")) {
			tags |= TAG_UNTRUSTED;
		} else if (!strcmp(tag, "nonnull")) {
			tags |= TAG_NONNULL;
		} else if (!strcmp(tag, "nullable")) {
			tags |= TAG_NULLABLE;
		} else if (!strcmp(tag, "arena")) {
			tags |= TAG_ARENA;
		} else {
			brt_verr(env, "arg#%d has unsupported set of tags\n", arg);
			return -EOPNOTSUPP;
		}
	}
	return tags;
}

/* The kernel's bpf_find_exception_callback_insn_off(): a main program naming an exception
 * callback ("exception_callback:" decl tag, libbpf's __exception_cb) makes the callback a
 * subprogram of its own, verified as a global function with bpf_throw's rules
 * (exception.c).  The tag's checks and messages are the kernel's: one tag, a global
 * function, found in func_info past the main program (every row of its type is looked
 * at, the last one wins). */
int brt_check_exception_cb(struct brt_env *env)
{
	const struct brt_verify_opts *o = env->opts;
	const struct brt_btf *btf = o->prog_btf;
	const struct btf_type *main_fn, *fn;
	const char *name = NULL;
	uint32_t fn_id;
	int ret;

	/* no BTF: a program file's word, which may be bad (add_subprog() refuses an
	 * insn past the end; 0 is the main program's, never a callback's) */
	if (!btf || !o->func_btf_ids || !o->nfuncs)
		return o->exc_cb_insn < (uint32_t)env->len ? (int)o->exc_cb_insn : -EINVAL;
	main_fn = type_of(btf, o->func_btf_ids[0]);
	for (uint32_t id = 1; main_fn && id < btf->ntypes; id++) {
		const struct btf_type *t = type_of(btf, id);

		if (kind_of(t) != BTF_KIND_DECL_TAG || type_of(btf, t->type) != main_fn ||
		    ((const struct btf_decl_tag *)(t + 1))->component_idx != -1 ||
		    strncmp(name_of(btf, t), "exception_callback:", 19))
			continue;
		if (name) { /* btf_find_decl_tag_value(): one tag per type */
			brt_verr(env, "multiple exception callback tags for main subprog\n");
			return -EEXIST;
		}
		name = name_of(btf, t) + 19;
	}
	if (!name)
		return 0;
	ret = brt_btf_find(btf, name, BTF_KIND_FUNC);
	if (ret <= 0) {
		brt_verr(env, "exception callback '%s' could not be found in BTF\n", name);
		return -ENOENT;
	}
	fn_id = (uint32_t)ret;
	fn = type_of(btf, fn_id);
	if (BTF_INFO_VLEN(fn->info) != BTF_FUNC_GLOBAL) {
		brt_verr(env, "exception callback '%s' must have global linkage\n", name);
		return -EINVAL;
	}
	ret = 0;
	for (uint32_t i = 0; i < o->nfuncs; i++) {
		if (o->func_btf_ids[i] != fn_id)
			continue;
		ret = o->func_offs ? (int)o->func_offs[i] : -1;
		if (!ret) {
			brt_verr(env, "invalid exception callback insn_off in func_info: 0\n");
			ret = -EINVAL;
		}
	}
	if (!ret) {
		brt_verr(env, "exception callback type id not found in func_info\n");
		ret = -EINVAL;
	}
	return ret;
}

static int is_dynptr_ptr(const struct brt_btf *btf, const struct btf_type *ptr)
{
	const struct btf_type *t = skip_mods(btf, ptr->type, NULL);

	return (is_struct(t) || (kind_of(t) == BTF_KIND_FWD && !BTF_INFO_KFLAG(t->info))) &&
	       !strcmp(name_of(btf, t), "bpf_dynptr");
}

/* A message for argument kinds the kernel accepts and bpfrt cannot model. */
static int unsupported(struct brt_env *env, int arg, const char *what)
{
	brt_verr(env, "arg#%d: %s arguments of global functions are not supported by bpfrt\n",
		 arg, what);
	return -EOPNOTSUPP;
}

/* btf_prepare_func_args(): subprogram sub's prototype into its arg_kind/arg_size, once.
 * 0, or -errno (for a static function silently, as the kernel: it is walked anyway). */
static int prepare_args(struct brt_env *env, int sub)
{
	const struct brt_verify_opts *o = env->opts;
	const struct brt_btf *btf = o->prog_btf;
	struct brt_subprog *sp;
	const struct btf_type *fn, *proto, *t;
	const struct btf_param *args;
	const char *tname;
	uint32_t nargs;
	int global;

	/* a subprogram of this program (its slot is read before the BTF checks below) */
	if (sub < 0 || sub >= env->subprog_cnt)
		return -EINVAL;
	sp = &env->subprogs[sub];
	if (sp->args_cached)
		return 0;
	if (!btf || !o->func_btf_ids || (uint32_t)sub >= o->nfuncs)
		return -EINVAL;
	global = brt_subprog_is_global(env, sub);
	fn = type_of(btf, o->func_btf_ids[sub]);
	if (kind_of(fn) != BTF_KIND_FUNC) {
		brt_verr(env, "BTF of func#%d doesn't point to KIND_FUNC\n", sub);
		return -EFAULT;
	}
	tname = name_of(btf, fn);
	proto = type_of(btf, fn->type);
	if (kind_of(proto) != BTF_KIND_FUNC_PROTO) {
		brt_verr(env, "Invalid type of function %s()\n", tname);
		return -EFAULT;
	}
	args = (const struct btf_param *)(proto + 1);
	nargs = BTF_INFO_VLEN(proto->info);
	if (nargs > MAX_ARGS) {
		if (!global)
			return -EINVAL;
		brt_verr(env, "Global function %s() with %u > %d args. Buggy compiler.\n", tname,
			 nargs, MAX_ARGS);
		return -EINVAL;
	}
	t = skip_mods(btf, proto->type, NULL);
	if (!is_int_or_enum(t)) {
		if (!global)
			return -EINVAL;
		brt_verr(env, "Global function %s() doesn't return scalar. Only those are "
			      "supported.\n", tname);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < nargs; i++) {
		int tags = arg_tags(env, btf, fn, (int)i, global);
		uint64_t size;
		uint32_t pid;

		if (tags < 0)
			return tags;
		t = skip_mods(btf, args[i].type, NULL);
		if (kind_of(t) != BTF_KIND_PTR)
			goto skip_pointer;
		if ((tags & TAG_CTX) || is_prog_ctx_type(env, btf, t)) {
			if (tags & ~TAG_CTX) {
				brt_verr(env, "arg#%u has invalid combination of tags\n", i);
				return -EINVAL;
			}
			if ((tags & TAG_CTX) && validate_ctx_tag(env, btf, t, (int)i))
				return -EINVAL;
			sp->arg_kind[i] = BRT_GARG_CTX;
			continue;
		}
		if (is_dynptr_ptr(btf, t)) {
			if (tags) {
				brt_verr(env, "arg#%u has invalid combination of tags\n", i);
				return -EINVAL;
			}
			sp->arg_kind[i] = BRT_GARG_DYNPTR;
			continue;
		}
		if (tags & TAG_TRUSTED) {
			if (tags & TAG_NONNULL) {
				brt_verr(env, "arg#%u has invalid combination of tags\n", i);
				return -EINVAL;
			}
			return unsupported(env, (int)i, "__arg_trusted");
		}
		if (tags & TAG_UNTRUSTED) {
			if (tags & ~TAG_UNTRUSTED) {
				brt_verr(env, "arg#%u untrusted cannot be combined with any other "
					      "tags\n", i);
				return -EINVAL;
			}
			return unsupported(env, (int)i, "__arg_untrusted");
		}
		if (tags & TAG_ARENA) {
			if (tags & ~TAG_ARENA) {
				brt_verr(env, "arg#%u arena cannot be combined with any other tags\n",
					 i);
				return -EINVAL;
			}
			return unsupported(env, (int)i, "__arg_arena");
		}
		if (global) { /* generic user data pointer */
			const struct btf_type *pt;

			if (tags & TAG_NULLABLE) {
				brt_verr(env, "arg#%u has invalid combination of tags\n", i);
				return -EINVAL;
			}
			pt = skip_mods(btf, t->type, &pid);
			if (!pt || kind_of(pt) == BTF_KIND_FWD || kind_of(pt) == BTF_KIND_FUNC_PROTO ||
			    kind_of(pt) == BTF_KIND_FUNC || kind_of(pt) == BTF_KIND_VAR ||
			    kind_of(pt) == BTF_KIND_DATASEC || kind_of(pt) == BTF_KIND_DECL_TAG ||
			    brt_btf_resolve_size(btf, pid, &size) || size > UINT32_MAX) {
				brt_verr(env, "arg#%u reference type('%s %s') size cannot be "
					      "determined: %d\n", i, kind_str(pt), name_of(btf, pt),
					 -EINVAL);
				return -EINVAL;
			}
			sp->arg_kind[i] = BRT_GARG_MEM | ((tags & TAG_NONNULL) ? BRT_GARG_NONNULL : 0);
			sp->arg_size[i] = (uint32_t)size;
			continue;
		}
skip_pointer:
		if (tags) {
			brt_verr(env, "arg#%u has pointer tag, but is not a pointer type\n", i);
			return -EINVAL;
		}
		if (is_int_or_enum(t)) {
			sp->arg_kind[i] = BRT_GARG_SCALAR;
			continue;
		}
		if (!global)
			return -EINVAL;
		brt_verr(env, "Arg#%u type %s in %s() is not supported yet.\n", i, kind_str(t),
			 tname);
		return -EINVAL;
	}
	sp->arg_cnt = (uint8_t)nargs;
	sp->args_cached = 1;
	return 0;
}

void brt_global_main_args(struct brt_env *env)
{
	/* only for its messages: a main program whose prototype is not (ctx) is merely
	 * "unreliable" to the kernel */
	if (env->opts->prog_btf && env->opts->func_btf_ids && env->opts->nfuncs)
		prepare_args(env, 0);
}

/* A log line from the argument check: an error for a global callee; for a static one
 * only a line, as the kernel logs it and walks the function anyway. */
enum arg_msg { MSG_NOT_SCALAR, MSG_NOT_CTX, MSG_MAYBE_NULL };

static void arg_msg(struct brt_env *env, int global, enum arg_msg m, int n)
{
	void (*out)(struct brt_env *, const char *, ...) = global ? brt_verr : brt_vinfo;

	switch (m) {
	case MSG_NOT_SCALAR:
		out(env, "R%d is not a scalar\n", n);
		break;
	case MSG_NOT_CTX:
		out(env, "arg#%d expects pointer to ctx\n", n);
		break;
	default:
		out(env, "arg#%d is expected to be non-NULL\n", n);
		break;
	}
}

/* check_mem_reg(): a possibly-NULL pointer to the memory argument of size bytes, checked
 * for both reading and writing, as check_helper_mem_access() does. */
static int check_mem_arg(struct brt_env *env, int regno, uint32_t size)
{
	struct brt_reg *reg = &brt_cur_regs(env)[regno], saved = *reg;
	int err;

	if (brt_reg_is_null(reg))
		return 0;
	reg->type &= ~PTR_MAYBE_NULL;
	switch (BASE_TYPE(reg->type)) {
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
	case PTR_TO_MAP_KEY:
	case PTR_TO_MAP_VALUE:
	case PTR_TO_MEM:
	case PTR_TO_STACK:
		err = brt_check_helper_mem(env, regno, (int)size, 1, BRT_READ, 0);
		if (!err)
			err = brt_check_helper_mem(env, regno, (int)size, 1, BRT_WRITE, 0);
		break;
	case PTR_TO_CTX:
		if (env->opts->prog_type == BPF_PROG_TYPE_SYSCALL) {
			/* no ctx rewrite: the access is checked by its size (the last byte) */
			err = !size ? 0
				    : brt_check_mem_access(env, env->insn_idx, regno, (int)size - 1,
							   1, BRT_READ, -1, 0, 0);
			if (!err && size)
				err = brt_check_mem_access(env, env->insn_idx, regno,
							   (int)size - 1, 1, BRT_WRITE, -1, 0, 0);
			break;
		}
		/* fall through */
	default:
		if (size == 0 && brt_reg_is_null(reg)) {
			err = 0;
			break;
		}
		brt_verr(env, "R%d type=%s expected=fp\n", regno, brt_reg_type_str(env, reg->type));
		err = -EACCES;
		break;
	}
	*reg = saved;
	return err;
}

/* btf_check_func_arg_match(): the caller's r1-r5 against sub's prototype. */
static int check_args(struct brt_env *env, int sub, int global)
{
	struct brt_subprog *sp = &env->subprogs[sub];
	struct brt_reg *regs = brt_cur_regs(env);
	int err = prepare_args(env, sub);

	if (err)
		return err;
	for (int i = 0; i < sp->arg_cnt; i++) {
		int regno = i + 1;
		struct brt_reg *reg = &regs[regno];

		switch (sp->arg_kind[i] & ~BRT_GARG_NONNULL) {
		case BRT_GARG_SCALAR:
			if (reg->type != SCALAR_VALUE) {
				arg_msg(env, global, MSG_NOT_SCALAR, regno);
				return -EINVAL;
			}
			break;
		case BRT_GARG_CTX:
			err = brt_check_arg_reg_off(env, reg, regno);
			if (err)
				return err;
			if (reg->type != PTR_TO_CTX) {
				arg_msg(env, global, MSG_NOT_CTX, i);
				return -EINVAL;
			}
			break;
		case BRT_GARG_DYNPTR:
			if (!global) /* walked with the caller's registers, as the kernel */
				return -EINVAL;
			err = brt_check_arg_reg_off(env, reg, regno);
			if (err)
				return err;
			if (reg->type != PTR_TO_STACK) {
				brt_verr(env, "arg#%d expected pointer to stack or const struct "
					      "bpf_dynptr\n", i);
				return -EINVAL;
			}
			return unsupported(env, i, "bpf_dynptr");
		default: /* BRT_GARG_MEM */
			err = brt_check_arg_reg_off(env, reg, regno);
			if (err)
				return err;
			if (check_mem_arg(env, regno, sp->arg_size[i]))
				return -EINVAL;
			/* the running 6.18 kernel refuses a NULL constant here too */
			if ((sp->arg_kind[i] & BRT_GARG_NONNULL) &&
			    ((reg->type & PTR_MAYBE_NULL) || brt_reg_is_null(reg))) {
				arg_msg(env, global, MSG_MAYBE_NULL, i);
				return -EINVAL;
			}
			break;
		}
	}
	return 0;
}

/* What the walk below asks of a subprogram's calls, as check_cfg() marks them and merges
 * them from callees: a helper that changes packet data (the kernel's changes_pkt_data),
 * or a helper or kfunc that may sleep (its might_sleep). */
enum call_trait { CHANGES_PKT, MIGHT_SLEEP };

/* Does subprogram sub, or a function it calls, have trait (cached in the subprogram)? */
static int calls_with(struct brt_env *env, int sub, int depth, enum call_trait trait)
{
	struct brt_subprog *sp = &env->subprogs[sub];
	int8_t *known = trait == CHANGES_PKT ? &sp->changes_pkt : &sp->might_sleep;
	int r = 0;

	if (*known >= 0)
		return *known;
	if (depth > BRT_MAX_SUBPROGS) /* recursion is refused before the walk */
		return 0;
	for (int i = sp->start; i < env->subprogs[sub + 1].start && !r; i++) {
		const struct bpf_insn *in = &env->insns[i];
		int callee;

		if (in->code != (BPF_JMP | BPF_CALL))
			continue;
		if (in->src_reg == 0)
			r = trait == CHANGES_PKT ? brt_helper_changes_pkt_data(in->imm)
						 : brt_helper_might_sleep(env, in->imm);
		else if (in->src_reg == BPF_PSEUDO_KFUNC_CALL)
			r = trait == MIGHT_SLEEP && brt_kfunc_might_sleep(env, in);
		else if (in->src_reg == BPF_PSEUDO_CALL &&
			 (callee = brt_find_subprog(env, i + in->imm + 1)) >= 0 && callee != sub)
			r = calls_with(env, callee, depth + 1, trait);
	}
	*known = (int8_t)r;
	return r;
}

int brt_global_call(struct brt_env *env, int sub)
{
	struct brt_subprog *sp = &env->subprogs[sub];
	int global = brt_subprog_is_global(env, sub), err = -EINVAL;
	struct brt_reg *regs;

	/* btf_check_subprog_call(): a function whose arguments once did not match is not
	 * checked again */
	if (env->opts->prog_btf && !sp->unreliable) {
		err = check_args(env, sub, global);
		if (err == -EFAULT)
			return err;
		if (err)
			sp->unreliable = 1;
	}
	if (!global)
		return 0;
	if (env->cur->active_locks) {
		brt_verr(env, "global function calls are not allowed while holding a lock,\n"
			      "use static function instead\n");
		return -EINVAL;
	}
	if (calls_with(env, sub, 0, MIGHT_SLEEP) &&
	    (env->cur->active_rcu || env->cur->active_preempt || env->cur->active_irq_id ||
	     !(env->opts->prog_flags & BPF_F_SLEEPABLE))) {
		brt_verr(env, "global functions that may sleep are not allowed in non-sleepable "
			      "context,\ni.e., in a RCU/IRQ/preempt-disabled section, or in\n"
			      "a non-sleepable BPF program context\n");
		return -EINVAL;
	}
	if (err) {
		brt_verr(env, "Caller passes invalid args into func#%d ('%s')\n", sub,
			 brt_subprog_name(env, sub));
		return err;
	}
	brt_vinfo(env, "Func#%d ('%s') is global and assumed valid.\n", sub,
		  brt_subprog_name(env, sub));
	if (calls_with(env, sub, 0, CHANGES_PKT))
		brt_clear_all_pkt_pointers(env);
	sp->called = 1;
	regs = brt_cur_regs(env);
	for (int i = BPF_REG_0; i <= BPF_REG_5; i++)
		brt_mark_reg_not_init(&regs[i]);
	brt_mark_reg_unknown(env, &regs[BPF_REG_0]);
	env->scratched_regs |= 0x3f;
	return 1;
}

int brt_global_entry(struct brt_env *env, int sub, struct brt_frame *f)
{
	struct brt_subprog *sp = &env->subprogs[sub];
	int err;

	brt_vinfo(env, "Validating %s() func#%d...\n", brt_subprog_name(env, sub), sub);
	err = prepare_args(env, sub);
	if (!err && sub == env->exc_cb_subprog)
		err = brt_exc_cb_entry(env, sub, f);
	if (err)
		return err;
	for (int i = 0; i < sp->arg_cnt; i++) {
		struct brt_reg *reg = &f->regs[BPF_REG_1 + i];

		switch (sp->arg_kind[i] & ~BRT_GARG_NONNULL) {
		case BRT_GARG_CTX:
			reg->type = PTR_TO_CTX;
			brt_mark_reg_known_zero(reg);
			break;
		case BRT_GARG_SCALAR:
			brt_mark_reg_unknown(env, reg);
			break;
		case BRT_GARG_DYNPTR:
			return unsupported(env, i, "bpf_dynptr");
		default:
			brt_mark_reg_known_zero(reg);
			reg->type = PTR_TO_MEM;
			reg->mem_size = sp->arg_size[i];
			if (!(sp->arg_kind[i] & BRT_GARG_NONNULL)) {
				reg->type |= PTR_MAYBE_NULL;
				reg->id = ++env->id_gen;
			}
			break;
		}
	}
	return 0;
}
