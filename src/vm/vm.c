/* vm.c - the public vm object: load (structural check + pre-decode), per-vm helper table,
 * and the run entries that set up a run's context and stack and pick the engine's loop.
 * Design: vm.h.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vm/vm.h"
#ifdef BPFRT_HAVE_JIT
#include "jit/jit.h"
#define JIT_BUILT 1
#else
#define JIT_BUILT 0
#endif

struct bpfrt_vm {
	struct bpf_insn *insns;    /* copy of the program */
	size_t n;                  /* its length */
	uint16_t *ops;             /* each instruction's row (brt_isa_decode_prog()) */
	struct brt_dinsn *code;    /* pre-decoded for engine: n + 1 entries (JIT engine: only
				    * with LD_IND, else NULL) */
	enum bpfrt_engine engine;  /* resolved: never DEFAULT */
	uint64_t insn_budget;      /* checked engine's budget per run */
	uint64_t run_budget;       /* every engine: run budget (counted instructions), 0: none */
	uint64_t run_budget_ns;    /* ... and in ns, 0: none */
	/* interp engine: the code pre-decoded for BRT_VM_LOOP_BUDGET, made at the first run
	 * with a budget (atomic: runs may race to make it; the loser frees its copy) */
	struct brt_dinsn *code_budget;
	brt_helper_fn *helpers;    /* helper table by id: defaults + registered */
	size_t nr_helpers;         /* its length */
	/* helpers is the registry's shared table (a verified program's, until a helper is set
	 * on this vm): never written, never freed here */
	int helpers_shared;
	char **helper_names;       /* names given to brt_vm_set_helper (NULL: none given) */
	/* unverified program: the built-in helpers whose arguments the checked engine checks
	 * before a call, by id (helper_args.c); NULL for a verified one */
	const struct brt_helper_proto **helper_checks;
	size_t nr_helper_checks;
	struct brt_jit_cache *jit; /* JIT engine: compiled code per helper table */
	const struct brt_jit_prog *jit_fixed; /* ... or the one code of a helper-free program */
	/* ... whose entry, when it never reads the run ctx: a run is then one direct call */
	uint64_t (*direct)(uint64_t r1, uint64_t r2, struct bpfrt_run_ctx *ctx);
	/* the code for `helpers` as they are (the common run), found once: atomic, reset by
	 * brt_vm_set_helper(), the only way that table changes */
	const struct brt_jit_prog *jit_own;
	/* ... whose entry, when that code never reads the run ctx (its calls are leaf helpers
	 * or bound lookups): such a run is one direct call, as with `direct`; atomic, reset
	 * with jit_own */
	uint64_t (*own_direct)(uint64_t r1, uint64_t r2, struct bpfrt_run_ctx *ctx);
	int ld_ind;                /* the program has LD_IND (see run_jit()) */
	struct brt_obj_type *obj_types; /* brt_vm_set_obj_types() */
	uint8_t *probe;            /* brt_vm_set_probe_loads(): n entries, or NULL */
	uint32_t nobj_types;
	/* brt_vm_set_exception(): the program may call bpf_throw, and the exception
	 * callback's first insn (0: the kernel's default callback, r0 = the cookie) */
	int throws;
	uint32_t exc_cb_insn;
};

#define OPTS_KNOWN (offsetof(struct bpfrt_vm_opts, bpfrt_vm_opts__last) + \
		    sizeof(((struct bpfrt_vm_opts *)0)->bpfrt_vm_opts__last))

static int set_err(int ret)
{
	errno = -ret;
	return ret;
}

/* Turn pairs into superinstructions where the loop has them (struct brt_vm_labels).  The
 * second instruction of a pair must not be a jump target: it is skipped. */
static int fuse_pairs(const struct bpf_insn *insns, size_t n, struct brt_dinsn *code,
		      const struct brt_vm_labels *labels)
{
	uint8_t *target = calloc(n + 1, 1);

	if (!target)
		return -ENOMEM;
	for (size_t pc = 0; pc < n; pc++) {
		int64_t t;

		if (code[pc].op == BRT_OP_INVALID || !brt_isa_has_target(code[pc].op))
			continue;
		t = brt_isa_jump_target(&insns[pc], code[pc].op, pc);
		if (t >= 0 && (uint64_t)t <= n)
			target[t] = 1;
	}
	for (size_t pc = 0; pc + 1 < n; pc++) {
		struct brt_dinsn *a = &code[pc], *b = &code[pc + 1];
		const void *label = NULL;

		if (target[pc + 1] || a->op == BRT_OP_INVALID || b->op == BRT_OP_INVALID)
			continue;
		if ((a->op == BRT_OP_mov64_reg || a->op == BRT_OP_mov32_reg) && b->dst == a->dst &&
		    (a->op == BRT_OP_mov64_reg || BPF_CLASS(insns[pc + 1].code) == BPF_ALU) &&
		    (label = labels->after_mov[b->op])) {
			a->imm = b->imm;
			a->off = b->src == a->dst ? a->src : b->src;
		} else if (b->op == BRT_OP_mov32_reg && b->dst == a->dst && b->src == a->dst &&
			   (label = labels->zext_after[a->op])) {
			/* the load zero-extended already */
		} else if ((a->op == BRT_OP_mov64_imm || a->op == BRT_OP_mov32_imm) &&
			   b->src == a->dst &&
			   (label = (a->op == BRT_OP_mov64_imm ? labels->store_after_mov64i
							      : labels->store_after_mov32i)[b->op])) {
			/* the store's base register goes in src, its offset in off */
			a->src = b->dst;
			a->off = b->off;
		} else {
			continue;
		}
		a->label = label;
		pc++;
	}
	free(target);
	return 0;
}

/* Pre-decode n checked instructions for the engine (checked or not); returns n + 1 entries
 * (sentinel last) or NULL when out of memory. */
static struct brt_dinsn *predecode(const struct bpf_insn *insns, const uint16_t *ops, size_t n,
				   enum brt_vm_loop loop)
{
	struct brt_vm_labels labels;
	struct brt_dinsn *code = calloc(n + 1, sizeof(*code));

	if (!code)
		return NULL;
	brt_vm_labels(loop, &labels);
	for (size_t pc = 0; pc <= n; pc++) {
		struct brt_dinsn *d = &code[pc];
		enum brt_op op = pc < n ? (enum brt_op)ops[pc] : BRT_OP_INVALID;

		d->op = (uint16_t)op;
		d->label = labels.op ? labels.op[op] : NULL;
		if (op == BRT_OP_INVALID)
			continue;
		d->dst = insns[pc].dst_reg;
		d->src = insns[pc].src_reg;
		d->off = insns[pc].off;
		d->imm = (uint64_t)(int64_t)insns[pc].imm;
		switch (brt_ops[op].shape) {
		case BRT_SHAPE_LDDW:
			d->imm = brt_isa_lddw_value(&insns[pc], pc);
			/* the second slot stays a sentinel: nothing can jump there */
			code[pc + 1].op = BRT_OP_INVALID;
			code[pc + 1].label = labels.op ? labels.op[BRT_OP_INVALID] : NULL;
			pc++;
			break;
		case BRT_SHAPE_JA32:
		case BRT_SHAPE_CALL_LOCAL:
			d->off = insns[pc].imm;
			break;
		default:
			break;
		}
	}
	if (labels.after_mov && fuse_pairs(insns, n, code, &labels)) {
		free(code);
		return NULL;
	}
	return code;
}

static enum bpfrt_engine resolve_engine(enum bpfrt_engine e)
{
	return e == BPFRT_ENGINE_DEFAULT ? BPFRT_ENGINE_CHECKED : e;
}

/* The helper registry's answers (helper_proto.h), set once when the library is loaded. */
static _Atomic(const struct brt_helper_source *) helper_source;

void brt_vm_set_helper_source(const struct brt_helper_source *src)
{
	atomic_store_explicit(&helper_source, src, memory_order_release);
}

/* kfuncs: the program passed the verifier.  The kernel functions' slots of the table
 * (BRT_KFUNC_HELPER_BASE + row) trust their pointer arguments as the kernel's kfuncs do,
 * which only the verifier's typing makes safe: a program that was not verified (the public
 * bpfrt_vm_load(), a rejected program kept for the checked engine) gets them empty, so
 * naming one is the checked engine's "call to unknown helper" fault, not a wild pointer. */
static int copy_default_helpers(struct bpfrt_vm *vm, int kfuncs)
{
	const struct brt_helper_source *src =
		atomic_load_explicit(&helper_source, memory_order_acquire);
	size_t nr = 0;

	/* host helpers registered later do not reach this vm, as documented.  A verified
	 * program's table is the default one as it is: shared until brt_vm_set_helper() */
	if (kfuncs && src) {
		/* the cast: a shared table is written by nobody (helpers_shared) */
		vm->helpers = (brt_helper_fn *)(uintptr_t)src->table_shared(&nr);
		vm->helpers_shared = 1;
		if (!vm->helpers)
			return -ENOMEM;
		vm->nr_helpers = nr;
		return 0;
	}
	vm->helpers = src ? src->table_new(&nr) : calloc(1, sizeof(*vm->helpers));
	if (!vm->helpers)
		return -ENOMEM;
	vm->nr_helpers = nr; /* helper_names: at the first brt_vm_set_helper() */
	if (kfuncs || !src)
		return 0;
	for (size_t k = 0; k < BRT_KFUNC_COUNT && BRT_KFUNC_HELPER_BASE + k < nr; k++)
		vm->helpers[BRT_KFUNC_HELPER_BASE + k] = NULL;
	/* nobody verified the program.  The checked engine promises that such a program
	 * cannot touch memory outside its run: each built-in helper's arguments are checked
	 * before a call, or the helper is not offered (helper_args.c).  The fast engines
	 * trust an unverified program whole, as documented (bpfrt_vm_load()). */
	if (vm->engine != BPFRT_ENGINE_CHECKED)
		return 0;
	vm->helper_checks = calloc(nr ? nr : 1, sizeof(*vm->helper_checks));
	if (!vm->helper_checks)
		return -ENOMEM;
	vm->nr_helper_checks = nr;
	for (size_t id = 0; id < nr; id++) {
		const struct brt_helper_proto *p = vm->helpers[id] ? src->get((uint32_t)id) : NULL;

		if (!p)
			continue;
		switch (brt_vm_helper_need(p)) {
		case BRT_HELPER_NEED_CHECK:
			vm->helper_checks[id] = p;
			break;
		case BRT_HELPER_NEED_REFUSE:
			vm->helpers[id] = NULL;
			break;
		}
	}
	return 0;
}

/* bpfrt_vm_load() with ops, when not NULL, the rows brt_isa_decode_prog() gave for insns
 * (taken over: freed on failure too). */
static int load(const struct bpf_insn *insns, size_t n, uint16_t *ops,
		const struct bpfrt_vm_opts *opts, const struct brt_jit_rodata *rodata,
		size_t nrodata, int kfuncs, const char *sym, struct bpfrt_vm **out, char *err,
		size_t errlen)
{
	size_t max_insns;
	struct bpfrt_vm *vm;
	int ret;

#ifndef BPFRT_HAVE_JIT
	(void)rodata, (void)nrodata, (void)sym;
#endif
	if (errlen)
		err[0] = 0;
	if (!out || (!insns && n)) {
		free(ops);
		snprintf(err, errlen, "bpfrt_vm_load: insns and out must not be NULL");
		return set_err(-EINVAL);
	}
	*out = NULL;
	if (!brt_opts_valid(opts, OPTS_KNOWN, "bpfrt_vm_opts")) {
		free(ops);
		snprintf(err, errlen, "bpfrt_vm_opts: unknown non-zero fields or bad sz");
		return set_err(-EINVAL);
	}
	max_insns = BRT_OPTS_GET(opts, max_insns, 0);
	vm = calloc(1, sizeof(*vm));
	if (vm)
		vm->ops = ops ? ops : malloc((n ? n : 1) * sizeof(*vm->ops));
	if (!vm || !vm->ops) {
		free(ops);
		free(vm);
		goto err_nomem;
	}
	/* the one decode of the program, unless the load path did it: the pre-decoder and
	 * the JIT take its rows */
	ret = ops ? 0 : brt_isa_decode_prog(insns, n, max_insns ? max_insns :
							BRT_VM_DEFAULT_MAX_INSNS,
					    vm->ops, err, errlen);
	if (ret) {
		free(vm->ops);
		free(vm);
		return set_err(ret);
	}
	vm->engine = resolve_engine(BRT_OPTS_GET(opts, engine, BPFRT_ENGINE_DEFAULT));
	vm->insn_budget = BRT_OPTS_GET(opts, insn_budget, 0);
	if (!vm->insn_budget)
		vm->insn_budget = BRT_VM_DEFAULT_BUDGET;
	vm->run_budget = BRT_OPTS_GET(opts, run_budget, 0);
	vm->run_budget_ns = BRT_OPTS_GET(opts, run_budget_ns, 0);
	if (vm->engine != BPFRT_ENGINE_INTERP && vm->engine != BPFRT_ENGINE_CHECKED &&
	    !(vm->engine == BPFRT_ENGINE_JIT && JIT_BUILT)) {
		ret = vm->engine == BPFRT_ENGINE_JIT ? -EOPNOTSUPP : -EINVAL;
		snprintf(err, errlen, "engine %d is not available in this build", (int)vm->engine);
		free(vm->ops);
		free(vm);
		return set_err(ret);
	}
	vm->n = n;
	vm->insns = malloc(n * sizeof(*insns));
	if (!vm->insns || copy_default_helpers(vm, kfuncs))
		goto err_free_vm;
	memcpy(vm->insns, insns, n * sizeof(*insns));
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IND | BPF_B) ||
		    insns[i].code == (BPF_LD | BPF_IND | BPF_H) ||
		    insns[i].code == (BPF_LD | BPF_IND | BPF_W))
			vm->ld_ind = 1;
	/* the JIT engine runs the interpreter's code only for a packet run of a program
	 * with LD_IND (run_jit_ctx()): most JIT programs never need it, and the load of an
	 * object of many tiny programs made it for each of them */
	if (vm->engine != BPFRT_ENGINE_JIT || vm->ld_ind) {
		vm->code = predecode(insns, vm->ops, n,
				     vm->engine == BPFRT_ENGINE_CHECKED ? BRT_VM_LOOP_CHECKED
									: BRT_VM_LOOP_FAST);
		if (!vm->code)
			goto err_free_vm;
	}
#ifdef BPFRT_HAVE_JIT
	if (vm->engine == BPFRT_ENGINE_JIT) {
		ret = brt_jit_cache_new(vm->insns, vm->ops, n, sym,
					offsetof(struct bpfrt_run_ctx, skb_data),
					offsetof(struct bpfrt_run_ctx, skb_len), brt_vm_budget_slow,
					brt_vm_ld_neg, rodata, nrodata, &vm->jit, err, errlen);
		if (ret) {
			bpfrt_vm_free(vm);
			return set_err(ret);
		}
		vm->jit_fixed = brt_jit_cache_fixed(vm->jit);
		if (vm->jit_fixed && !brt_jit_needs_ctx(vm->jit_fixed))
			vm->direct = ((const struct brt_jit_prog_head *)(const void *)vm->jit_fixed)
					     ->entry;
	}
#endif
	*out = vm;
	return 0;

err_free_vm:
	bpfrt_vm_free(vm);
err_nomem:
	snprintf(err, errlen, "out of memory loading %zu instructions", n);
	return set_err(-ENOMEM);
}

int bpfrt_vm_load(const struct bpf_insn *insns, size_t n, const struct bpfrt_vm_opts *opts,
		  struct bpfrt_vm **out, char *err, size_t errlen)
{
	return load(insns, n, NULL, opts, NULL, 0, 0, NULL, out, err, errlen);
}

int brt_vm_load_decoded(const struct bpf_insn *insns, size_t n, uint16_t *ops,
			const struct bpfrt_vm_opts *opts, const struct brt_jit_rodata *rodata,
			size_t nrodata, int verified, const char *sym, struct bpfrt_vm **out,
			char *err, size_t errlen)
{
	return load(insns, n, ops, opts, rodata, nrodata, verified, sym, out, err, errlen);
}

int brt_vm_set_helper(struct bpfrt_vm *vm, uint32_t id, const char *name, brt_helper_fn fn)
{
	char *copy = NULL;

	if (id > BRT_VM_MAX_HELPER_ID)
		return set_err(-EINVAL);
	if (vm->helpers_shared) {
		/* this vm's own table from now on */
		brt_helper_fn *own = malloc((vm->nr_helpers ? vm->nr_helpers : 1) * sizeof(*own));

		if (!own)
			return set_err(-ENOMEM);
		memcpy(own, vm->helpers, vm->nr_helpers * sizeof(*own));
		vm->helpers = own;
		vm->helpers_shared = 0;
	}
	if (id >= vm->nr_helpers) {
		size_t n = (size_t)id + 1;
		brt_helper_fn *h = realloc(vm->helpers, n * sizeof(*h));
		char **names;

		if (!h)
			return set_err(-ENOMEM);
		vm->helpers = h;
		names = vm->helper_names ? realloc(vm->helper_names, n * sizeof(*names)) : NULL;
		if (vm->helper_names && !names)
			return set_err(-ENOMEM);
		vm->helper_names = names;
		for (size_t i = vm->nr_helpers; i < n; i++) {
			h[i] = NULL;
			if (names)
				names[i] = NULL;
		}
		vm->nr_helpers = n;
	}
	/* only a vm given helpers by name has the names' table (a program's vm never does:
	 * allocating and walking one per program was 1.5 % of an object's load) */
	if (!vm->helper_names &&
	    !(vm->helper_names = calloc(vm->nr_helpers, sizeof(*vm->helper_names))))
		return set_err(-ENOMEM);
	if (name && !(copy = strdup(name)))
		return set_err(-ENOMEM);
	free(vm->helper_names[id]);
	vm->helper_names[id] = copy;
	vm->helpers[id] = fn;
	if (id < vm->nr_helper_checks)
		vm->helper_checks[id] = NULL; /* the caller's function checks its own arguments */
	__atomic_store_n(&vm->own_direct, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&vm->jit_own, NULL, __ATOMIC_RELEASE);
	return 0;
}

int brt_vm_set_obj_types(struct bpfrt_vm *vm, const struct brt_obj_type *types, uint32_t n)
{
	struct brt_obj_type *copy = n ? malloc(n * sizeof(*copy)) : NULL;

	if (n && !copy)
		return -ENOMEM;
	if (n)
		memcpy(copy, types, n * sizeof(*copy));
	free(vm->obj_types);
	vm->obj_types = copy;
	vm->nobj_types = n;
	return 0;
}

int brt_vm_set_probe_loads(struct bpfrt_vm *vm, const uint8_t *flags, uint8_t mask)
{
	uint8_t *p = malloc(vm->n ? vm->n : 1);

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < vm->n; i++)
		p[i] = !!(flags[i] & mask);
	free(vm->probe);
	vm->probe = p;
	return 0;
}

void bpfrt_vm_free(struct bpfrt_vm *vm)
{
	if (!vm)
		return;
	for (size_t i = 0; vm->helper_names && i < vm->nr_helpers; i++)
		free(vm->helper_names[i]);
	free(vm->helper_names);
	free(vm->helper_checks);
	if (!vm->helpers_shared)
		free(vm->helpers);
#ifdef BPFRT_HAVE_JIT
	brt_jit_cache_free(vm->jit);
#endif
	free(vm->code);
	free(vm->code_budget);
	free(vm->ops);
	free(vm->insns);
	free(vm->obj_types);
	free(vm->probe);
	free(vm);
}

int brt_vm_bind_lookups(struct bpfrt_vm *vm, const struct brt_jit_lookup *l, size_t n)
{
#ifdef BPFRT_HAVE_JIT
	if (vm->jit)
		return brt_jit_cache_set_lookups(vm->jit, l, n);
#endif
	(void)vm, (void)l, (void)n;
	return 0;
}

enum bpfrt_engine brt_vm_engine(const struct bpfrt_vm *vm)
{
	return vm->engine;
}

const struct bpf_insn *brt_vm_insns(const struct bpfrt_vm *vm, size_t *n)
{
	*n = vm->n;
	return vm->insns;
}

const struct brt_dinsn *brt_vm_code(const struct bpfrt_vm *vm)
{
	return vm->code;
}

const struct brt_jit_prog *brt_vm_jit_fixed(const struct bpfrt_vm *vm)
{
	return vm->jit_fixed;
}

/* Does this run have a budget (its own, the vm's, or the run it is nested in)? */
static inline int wants_budget(const struct bpfrt_vm *vm, const struct brt_run_opts *o)
{
	if (o->budget_from)
		return o->budget_from->budget != NULL;
	return (o->run_budget | o->run_budget_ns | vm->run_budget | vm->run_budget_ns) != 0;
}

/* Arm the run's budget in ctx: its own (state in b) or, nested, its parent's. */
static void budget_arm(const struct bpfrt_vm *vm, const struct brt_run_opts *o,
		       struct bpfrt_run_ctx *ctx, struct brt_budget *b)
{
	if (o->budget_from) {
		ctx->budget = o->budget_from->budget;
		ctx->budget_left = o->budget_from->budget_left;
		return;
	}
	brt_vm_budget_start(ctx, b, o->run_budget ? o->run_budget : vm->run_budget,
			    o->run_budget_ns ? o->run_budget_ns : vm->run_budget_ns);
}

/* After a run: a nested run hands the counter back; a spent budget is the run's result
 * (-ETIME and its message) whatever the engine returned. */
static int budget_end(const struct brt_run_opts *o, struct bpfrt_run_ctx *ctx, int ret,
		      char *err, size_t errlen)
{
	if (o->budget_from)
		o->budget_from->budget_left = ctx->budget_left;
	if (ctx->budget && ctx->budget->exhausted)
		return brt_vm_budget_msg(ctx, err, errlen);
	return ret;
}

/* The interp engine's code for runs with a budget (BRT_VM_LOOP_BUDGET's handlers), made
 * once; NULL when out of memory. */
static const struct brt_dinsn *budget_code(struct bpfrt_vm *vm)
{
	struct brt_dinsn *c = __atomic_load_n(&vm->code_budget, __ATOMIC_ACQUIRE), *seen = NULL;

	if (c)
		return c;
	c = predecode(vm->insns, vm->ops, vm->n, BRT_VM_LOOP_BUDGET);
	if (c && !__atomic_compare_exchange_n(&vm->code_budget, &seen, c, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE)) {
		free(c); /* another run made it first */
		c = seen;
	}
	return c;
}

/* The run-context fields both unchecked engines (JIT and fast interpreter) read; each sets
 * the few others it needs.  tail_jump: a tail call may jump into JIT code in place. */
static inline void unchecked_ctx_init(struct bpfrt_run_ctx *ctx, struct bpfrt_vm *vm,
				      const struct brt_run_opts *o, int tail_jump)
{
	ctx->stopped = 0;
	ctx->stop_r0 = 0;
	ctx->tail_entry = NULL;
	ctx->tail_cnt = o->tail_cnt;
	ctx->tail_jump = tail_jump;
	ctx->user = o->user;
	ctx->helpers = o->helpers ? o->helpers : vm->helpers;
	ctx->nr_helpers = o->helpers ? o->nr_helpers : vm->nr_helpers;
	ctx->obj_types = vm->obj_types;
	ctx->nobj_types = vm->nobj_types;
	ctx->skb_data = o->skb_data;
	ctx->skb_len = o->skb_len;
	ctx->pkt = o->pkt;
	ctx->cg_retval = 0;
	ctx->cb_depth = 0;
	ctx->checked = 0;
	ctx->helper_checks = NULL;
	ctx->nr_helper_checks = 0;
	ctx->budget = NULL; /* callbacks count from here: no budget */
	ctx->budget_left = UINT64_MAX;
	ctx->res_held = NULL;
}

#ifdef BPFRT_HAVE_JIT
_Static_assert(offsetof(struct bpfrt_run_ctx, stopped) == BRT_JIT_CTX_STOPPED_OFF, "jit.h");
_Static_assert(offsetof(struct bpfrt_run_ctx, stop_r0) == BRT_JIT_CTX_STOP_R0_OFF, "jit.h");
_Static_assert(offsetof(struct bpfrt_run_ctx, tail_entry) == BRT_JIT_CTX_TAIL_ENTRY_OFF, "jit.h");
_Static_assert(offsetof(struct bpfrt_run_ctx, tail_r1) == BRT_JIT_CTX_TAIL_R1_OFF, "jit.h");
_Static_assert(offsetof(struct bpfrt_run_ctx, tail_jump) == BRT_JIT_CTX_TAIL_JUMP_OFF, "jit.h");
_Static_assert(offsetof(struct bpfrt_run_ctx, budget_left) == BRT_JIT_CTX_BUDGET_OFF, "jit.h");
_Static_assert(BRT_STOP_TAIL == BRT_JIT_STOP_TAIL, "jit.h");

/* The code of a JIT vm for a helper table (helpers NULL: the vm's own), with the run
 * budget's counting at back-edges or without. */
static int jit_code(struct bpfrt_vm *vm, const brt_helper_fn *helpers, size_t nr, int budget,
		    const struct brt_jit_prog **prog, char *err, size_t errlen)
{
	int ret;

	if (budget)
		return brt_jit_cache_get(vm->jit, helpers ? helpers : vm->helpers,
					 helpers ? nr : vm->nr_helpers, 1, prog, err, errlen);
	*prog = vm->jit_fixed;
	if (*prog)
		return 0;
	if (helpers)
		return brt_jit_cache_get(vm->jit, helpers, nr, 0, prog, err, errlen);
	*prog = __atomic_load_n(&vm->jit_own, __ATOMIC_ACQUIRE);
	if (*prog)
		return 0;
	ret = brt_jit_cache_get(vm->jit, vm->helpers, vm->nr_helpers, 0, prog, err, errlen);
	if (!ret) {
		__atomic_store_n(&vm->jit_own, *prog, __ATOMIC_RELEASE);
		if (!brt_jit_needs_ctx(*prog))
			__atomic_store_n(&vm->own_direct,
					 ((const struct brt_jit_prog_head *)(const void *)*prog)->entry,
					 __ATOMIC_RELEASE);
	}
	return ret;
}

/* The JIT's call_func: the function's C entry, on the native stack (the verifier bounds
 * the chain; unverified programs get the same 8-frame limit). */
static uint64_t jit_call_func(struct bpfrt_run_ctx *ctx, uint64_t func, const uint64_t *args,
			      unsigned nargs)
{
	uint64_t a[5] = { 0 }, r0 = 0;
	int ret;

	for (unsigned i = 0; i < nargs && i < 5; i++)
		a[i] = args[i];
	if (ctx->cb_depth + 1 >= BRT_MAX_CALL_DEPTH) {
		bpfrt_run_stop(ctx, 0);
		return 0;
	}
	ctx->cb_depth++;
	ret = brt_jit_call_func(ctx->call_arg, func, a, ctx, &r0);
	ctx->cb_depth--;
	if (ret)
		bpfrt_run_stop(ctx, 0);
	return r0;
}

static int run_fast(struct bpfrt_vm *vm, const struct brt_run_opts *o, uint64_t *r0,
		    char *err, size_t errlen);

static int run_jit_ctx(struct bpfrt_vm *vm, const struct brt_run_opts *o,
		       const struct brt_jit_prog *prog, int want, uint64_t *r0, char *err,
		       size_t errlen);

/* The JIT uses the native stack and checks nothing, so the context needs only what
 * helpers and packet loads read; code that reads none (its only calls are bound map
 * lookups or helpers that take no ctx) runs without one, and without this function
 * setting one up on its stack (run_jit_ctx() does, out of line). */
static int run_jit(struct bpfrt_vm *vm, const struct brt_run_opts *o, uint64_t *r0, char *err,
		   size_t errlen)
{
	const struct brt_jit_prog *prog;
	int want = wants_budget(vm, o);
	int ret;

	ret = jit_code(vm, o->helpers, o->nr_helpers, want, &prog, err, errlen);
	if (ret)
		return set_err(ret);
	if (__builtin_expect(brt_jit_needs_ctx(prog), 1) || o->func)
		return run_jit_ctx(vm, o, prog, want, r0, err, errlen);
	*r0 = ((const struct brt_jit_prog_head *)(const void *)prog)->entry(o->r1, o->r2, NULL);
	if (o->tail_cnt_end)
		*o->tail_cnt_end = o->tail_cnt;
	if (errlen)
		err[0] = 0;
	return 0;
}

static __attribute__((noinline)) int run_jit_ctx(struct bpfrt_vm *vm,
						 const struct brt_run_opts *o,
						 const struct brt_jit_prog *prog, int want,
						 uint64_t *r0, char *err, size_t errlen)
{
	struct bpfrt_run_ctx ctx;
	struct brt_budget budget;
	int ret;

	/* pkt_regs code (brt_jit_pkt_entry()) has no run ctx, so an LD_IND offset that comes
	 * out negative counts from the packet's start; a run whose packet has its own
	 * network and link-layer headers (o->pkt: test runs, attach points) needs them, and
	 * the interpreter reads them */
	if (vm->ld_ind && o->pkt && brt_jit_pkt_entry(prog))
		return run_fast(vm, o, r0, err, errlen);
	unchecked_ctx_init(&ctx, vm, o, 1);
	ctx.call_func = jit_call_func;
	ctx.stack_lo = ctx.stack_hi = 0;
	ctx.regions = NULL;
	ctx.nr_regions = ctx.cap_regions = 0;
	ctx.regions_owned = 0;
	ctx.call_arg = (void *)(uintptr_t)prog;
	if (want)
		budget_arm(vm, o, &ctx, &budget);
	if (o->func) {
		const uint64_t a[5] = { o->r1, o->r2, o->r3_5[0], o->r3_5[1], o->r3_5[2] };

		/* a callback's C entry; stopped by a helper, it answers stop_r0 itself */
		if (brt_jit_call_func(prog, o->func, a, &ctx, r0)) {
			snprintf(err, errlen, "function %llu is no callback of the program",
				 (unsigned long long)o->func);
			return set_err(-EINVAL);
		}
	} else {
		*r0 = brt_jit_call(prog, o->r1, o->r2, &ctx);
	}
	if (o->tail_cnt_end)
		*o->tail_cnt_end = ctx.tail_cnt;
	if (errlen)
		err[0] = 0;
	ret = budget_end(o, &ctx, 0, err, errlen);
	return ret ? set_err(ret) : 0;
}
#endif

int brt_vm_jit_code(struct bpfrt_vm *vm, const struct brt_jit_prog **out, char *err,
		    size_t errlen)
{
#ifdef BPFRT_HAVE_JIT
	if (vm->jit)
		return jit_code(vm, NULL, 0, 0, out, err, errlen);
#endif
	(void)vm, (void)out;
	snprintf(err, errlen, "not a JIT program");
	return -EOPNOTSUPP;
}

/* The fast engine's run: only what its loop and helpers read is set up (no regions, no
 * stack bounds: bpfrt_run_grant() and bpfrt_run_access_ok() look at `checked` first). */
static __attribute__((noinline)) int run_fast(struct bpfrt_vm *vm, const struct brt_run_opts *o,
					      uint64_t *r0, char *err, size_t errlen)
{
	_Alignas(16) uint8_t stack[BRT_VM_STACK_BYTES];
	struct bpfrt_run_ctx ctx;
	struct brt_exec ex;
	int ret;

	unchecked_ctx_init(&ctx, vm, o, 0);
	ctx.call_func = brt_vm_interp_call_func;
	ctx.call_arg = &ex;
	ctx.nr_regions = 0;
	ctx.regions_owned = 0;
	ex.code = vm->code;
	ex.n = vm->n;
	ex.start = o->func;
	ex.base_depth = 0;
	ex.fault.kind = BRT_FAULT_NONE;
	ex.r1 = o->r1;
	ex.r2 = o->r2;
	memcpy(ex.r3_5, o->r3_5, sizeof(ex.r3_5));
	ex.stack = stack;
	ex.budget = ex.left = 0;
	ex.ctx = &ctx;
	ex.track = NULL;
	ret = brt_vm_interp_fast(&ex, r0);
	if (o->tail_cnt_end)
		*o->tail_cnt_end = ctx.tail_cnt;
	if (__builtin_expect(ret != 0, 0))
		return set_err(brt_vm_fault_msg(&ex.fault, err, errlen));
	if (errlen)
		err[0] = 0;
	return 0;
}

/* Out of line so the JIT's runs do not pay for the interpreter's 4 KiB stack and context. */
static __attribute__((noinline)) int run_interp(struct bpfrt_vm *vm, const struct brt_run_opts *o,
						uint64_t *r0, char *err, size_t errlen)
{
	/* 8 frames of 512 bytes; 16-byte alignment as the kernel's stack */
	_Alignas(16) uint8_t stack[BRT_VM_STACK_BYTES];
	struct bpfrt_run_ctx ctx;
	struct brt_budget budget;
	struct brt_track track;
	struct brt_exec ex;
	int checked = vm->engine == BPFRT_ENGINE_CHECKED;
	int ret;

	/* field by field: clearing inline_regions would cost more than a short program */
	ctx.stopped = 0;
	ctx.stop_r0 = 0;
	ctx.tail_entry = NULL;
	ctx.tail_cnt = o->tail_cnt;
	ctx.tail_jump = 0;
	ctx.user = o->user;
	ctx.helpers = o->helpers ? o->helpers : vm->helpers;
	ctx.nr_helpers = o->helpers ? o->nr_helpers : vm->nr_helpers;
	ctx.obj_types = vm->obj_types;
	ctx.nobj_types = vm->nobj_types;
	ctx.skb_data = o->skb_data;
	ctx.skb_len = o->skb_len;
	ctx.pkt = o->pkt;
	ctx.cg_retval = 0;
	ctx.res_held = NULL;
	ctx.call_func = brt_vm_interp_call_func;
	ctx.call_arg = &ex;
	ctx.cb_depth = 0;
	ctx.checked = checked;
	/* a caller's own table (o->helpers) holds functions that check their arguments */
	ctx.helper_checks = checked && !o->helpers ? vm->helper_checks : NULL;
	ctx.nr_helper_checks = ctx.helper_checks ? vm->nr_helper_checks : 0;
	ctx.stack_hi = (uint64_t)(uintptr_t)(stack + sizeof(stack));
	ctx.stack_lo = ctx.stack_hi - BRT_STACK_SIZE;
	ctx.nr_regions = 0;
	ctx.regions_owned = 0;
	ctx.regions = ctx.inline_regions;
	ctx.cap_regions = BRT_ARRAY_SIZE(ctx.inline_regions);
	for (size_t i = 0; checked && i < o->nr_regions; i++) {
		ret = bpfrt_run_grant(&ctx, (void *)(uintptr_t)o->regions[i].start,
				      o->regions[i].len, o->regions[i].writable);
		if (ret) {
			snprintf(err, errlen, "out of memory setting up the run's regions");
			goto out;
		}
	}
	budget_arm(vm, o, &ctx, &budget);
	memset(&ex.fault, 0, sizeof(ex.fault));
	ex.code = checked || !ctx.budget ? vm->code : budget_code(vm);
	if (!ex.code) {
		snprintf(err, errlen, "out of memory for the run budget's code");
		ret = -ENOMEM;
		goto out;
	}
	ex.n = vm->n;
	ex.start = o->func;
	ex.base_depth = 0;
	ex.r1 = o->r1;
	ex.r2 = o->r2;
	memcpy(ex.r3_5, o->r3_5, sizeof(ex.r3_5));
	ex.budget = o->insn_budget ? o->insn_budget : vm->insn_budget;
	ex.left = ex.budget;
	ex.stack = stack;
	ex.poison = o->poison;
	ex.ctx = &ctx;
	ex.track = NULL;
	ex.probe = vm->probe;
	if (checked && o->track) {
		brt_vm_track_init(&track, stack, o->helper_args);
		ex.track = &track;
	}
	if (checked) {
		/* reading stack never written gives zeros, not another run's data; deeper
		 * frames are cleared by the call that enters them */
		memset(stack + sizeof(stack) - BRT_STACK_SIZE, o->poison, BRT_STACK_SIZE);
		ret = brt_vm_interp_checked(&ex, r0);
	} else {
		ret = brt_vm_interp_fast(&ex, r0);
	}
	if (o->tail_cnt_end)
		*o->tail_cnt_end = ctx.tail_cnt;
	if (ret)
		ret = brt_vm_fault_msg(&ex.fault, err, errlen);
	else if (errlen)
		err[0] = 0;
	ret = budget_end(o, &ctx, ret, err, errlen);
out:
	if (ctx.regions_owned)
		free(ctx.regions);
	return ret ? set_err(ret) : 0;
}

int brt_vm_set_exception(struct bpfrt_vm *vm, uint32_t exc_cb_insn)
{
	/* the callback runs on the interpreter (run_throwing()), which a JIT vm may lack */
	if (exc_cb_insn && !vm->code) {
		vm->code = predecode(vm->insns, vm->ops, vm->n, BRT_VM_LOOP_FAST);
		if (!vm->code)
			return -ENOMEM;
	}
	vm->throws = 1;
	vm->exc_cb_insn = exc_cb_insn;
	return 0;
}

/* The run of a program that may throw, this thread's innermost: bpf_throw marks it
 * (brt_vm_throw()), nested runs (a tail call's target, a program a helper runs) keep
 * their own.  A throw needs no unwinding here: the verifier let it happen only with no
 * reference, lock or section held, outside callbacks, so stopping the run as a helper
 * may (bpfrt_run_stop()) and leaving every frame is all the kernel's unwinder does. */
static _Thread_local int *throw_mark;

void brt_vm_throw(struct bpfrt_run_ctx *ctx, uint64_t cookie)
{
	if (throw_mark)
		*throw_mark = 1;
	bpfrt_run_stop(ctx, cookie);
}

static int run_engines(struct bpfrt_vm *vm, const struct brt_run_opts *o, uint64_t *r0,
		       char *err, size_t errlen);

/* A run that may end in bpf_throw: then the exception callback runs with the cookie in
 * r1 and its r0 is the run's; the default callback returns the cookie itself.  The
 * callback runs on the fast interpreter (the JIT's code has no entry for a function
 * nothing calls; it runs once per throw).  A callback a helper runs (o->func) cannot
 * throw (the verifier's rule), so it takes the plain path. */
static __attribute__((noinline)) int run_throwing(struct bpfrt_vm *vm,
						  const struct brt_run_opts *o, uint64_t *r0,
						  char *err, size_t errlen)
{
	int *outer = throw_mark, thrown = 0, ret;
	struct brt_run_opts cb;

	throw_mark = &thrown;
	ret = run_engines(vm, o, r0, err, errlen);
	throw_mark = outer;
	if (ret || !thrown || !vm->exc_cb_insn)
		return ret;
	cb = *o;
	cb.func = vm->exc_cb_insn;
	cb.r1 = *r0;
	cb.r2 = 0;
	memset(cb.r3_5, 0, sizeof(cb.r3_5));
	cb.tail_cnt_end = NULL;
	if (vm->engine == BPFRT_ENGINE_CHECKED || wants_budget(vm, &cb))
		return run_interp(vm, &cb, r0, err, errlen);
	return run_fast(vm, &cb, r0, err, errlen);
}

_Atomic unsigned brt_vm_after_run_due;
static void (*_Atomic after_run)(void);

void brt_vm_set_after_run(void (*fn)(void))
{
	atomic_store(&after_run, fn);
}

int brt_vm_run_opts(struct bpfrt_vm *vm, const struct brt_run_opts *o, uint64_t *r0, char *err,
		    size_t errlen)
{
	int ret;

	if (__builtin_expect(vm->throws, 0) && !o->func)
		ret = run_throwing(vm, o, r0, err, errlen);
	else
		ret = run_engines(vm, o, r0, err, errlen);
	/* the run is over: what it left to run "later" in its task (task works) */
	if (__builtin_expect(atomic_load_explicit(&brt_vm_after_run_due, memory_order_relaxed), 0)) {
		void (*fn)(void) = atomic_load(&after_run);

		if (fn)
			fn();
	}
	return ret;
}

static int run_engines(struct bpfrt_vm *vm, const struct brt_run_opts *o, uint64_t *r0,
		       char *err, size_t errlen)
{
	uint64_t (*direct)(uint64_t r1, uint64_t r2, struct bpfrt_run_ctx *ctx) = vm->direct;

#ifdef BPFRT_HAVE_JIT
	if (!direct && !o->helpers) /* the vm's own helpers */
		direct = __atomic_load_n(&vm->own_direct, __ATOMIC_ACQUIRE);
#endif
	if (direct && !o->func && !wants_budget(vm, o)) {
		*r0 = direct(o->r1, o->r2, NULL);
		if (o->tail_cnt_end)
			*o->tail_cnt_end = o->tail_cnt;
		if (errlen)
			err[0] = 0;
		return 0;
	}
#ifdef BPFRT_HAVE_JIT
	if (vm->engine == BPFRT_ENGINE_JIT)
		return run_jit(vm, o, r0, err, errlen);
#endif
	if (vm->engine == BPFRT_ENGINE_INTERP && !wants_budget(vm, o))
		return run_fast(vm, o, r0, err, errlen);
	return run_interp(vm, o, r0, err, errlen);
}

/* bpfrt_vm_run's way through the engines, apart so that its run options (a struct of
 * ~100 bytes that gcc zeroes with `rep stos`, ~4 ns) are built only when it is taken:
 * not on the direct path below. */
static __attribute__((noinline)) int run_mem(struct bpfrt_vm *vm, void *mem, size_t mem_len,
					     uint64_t *r0, char *err, size_t errlen)
{
	struct brt_region region = { (uint64_t)(uintptr_t)mem, mem_len, 1 };
	struct brt_run_opts o = {
		.r1 = (uint64_t)(uintptr_t)mem,
		.r2 = mem_len,
		.regions = &region,
		.nr_regions = mem ? 1 : 0,
		.skb_data = mem,
		.skb_len = mem_len,
	};

	return brt_vm_run_opts(vm, &o, r0, err, errlen);
}

int bpfrt_vm_run(struct bpfrt_vm *vm, void *mem, size_t mem_len, uint64_t *r0, char *err,
		 size_t errlen)
{
	if (!vm || !r0) {
		snprintf(err, errlen, "bpfrt_vm_run: vm and r0 must not be NULL");
		return set_err(-EINVAL);
	}
	uint64_t (*direct)(uint64_t r1, uint64_t r2, struct bpfrt_run_ctx *ctx) = vm->direct;

#ifdef BPFRT_HAVE_JIT
	if (!direct)
		direct = __atomic_load_n(&vm->own_direct, __ATOMIC_ACQUIRE);
#endif
	/* native code that needs no context: just call it */
	if (direct && !vm->run_budget && !vm->run_budget_ns) {
		*r0 = direct((uint64_t)(uintptr_t)mem, mem_len, NULL);
		if (errlen)
			err[0] = 0;
		return 0;
	}
	return run_mem(vm, mem, mem_len, r0, err, errlen);
}

bpfrt_vm_native_fn bpfrt_vm_native(const struct bpfrt_vm *vm)
{
	uint64_t (*entry)(uint64_t r1, uint64_t r2, struct bpfrt_run_ctx *ctx);
	bpfrt_vm_native_fn fn;

	/* The entry takes (r1, r2, ctx) and never reads ctx; the System V ABI passes a pointer
	 * and a size_t in rdi and rsi exactly as the two uint64_t, so the code is this
	 * function type too (a code address kept as data, as dlsym() hands them out). */
	if (!vm || vm->run_budget || vm->run_budget_ns)
		return NULL;
	entry = vm->direct; /* a program without helper calls: set once at load */
#ifdef BPFRT_HAVE_JIT
	if (!entry && vm->jit) {
		/* One whose calls are all leaf helpers or bound lookups: the code for the
		 * helpers as they are now, which bpfrt_vm_run()'s direct path calls too,
		 * compiled here if no run did yet (the vm is never const: bpfrt_vm_load()
		 * allocates it).  Every version stays mapped until bpfrt_vm_free(). */
		const struct brt_jit_prog *prog;
		char err[1];

		entry = __atomic_load_n(&vm->own_direct, __ATOMIC_ACQUIRE);
		if (!entry && !jit_code((struct bpfrt_vm *)(uintptr_t)vm, NULL, 0, 0, &prog, err,
					sizeof(err)))
			entry = __atomic_load_n(&vm->own_direct, __ATOMIC_ACQUIRE);
	}
#endif
	if (!entry)
		return NULL;
	memcpy(&fn, &entry, sizeof(fn));
	return fn;
}

uint64_t brt_vm_tail_call(struct bpfrt_vm *vm, void *user, uint64_t r1,
			  struct bpfrt_run_ctx *ctx)
{
	struct brt_run_opts o = { 0 };
	uint64_t r0 = 0;
	uint32_t end;
	char msg[160];

	if (ctx->tail_cnt >= BRT_VM_MAX_TAIL_CALLS)
		return 0;
#ifdef BPFRT_HAVE_JIT
	/* a target that may throw runs nested: its exception callback ends its own run, as
	 * the kernel's unwinder stops at the target's frame */
	if (ctx->tail_jump && vm->engine == BPFRT_ENGINE_JIT && !vm->throws) {
		const struct brt_jit_prog *prog;

		if (!jit_code(vm, NULL, 0, ctx->budget != NULL, &prog, msg, sizeof(msg))) {
			const struct brt_jit_prog_head *h = (const void *)prog;

			/* from here on the run is the callee's; a code address kept as data, as
			 * dlsym() hands them out */
			ctx->tail_cnt++;
			memcpy(&ctx->tail_entry, &h->entry, sizeof(ctx->tail_entry));
			ctx->tail_r1 = r1;
			ctx->user = user;
			ctx->helpers = vm->helpers;
			ctx->nr_helpers = vm->nr_helpers;
			ctx->obj_types = vm->obj_types;
			ctx->nobj_types = vm->nobj_types;
			ctx->call_arg = (void *)(uintptr_t)prog; /* its callbacks are its own */
			return 0;
		}
		/* no code for these helpers: the nested run below reports why */
	}
#endif
	o.r1 = r1;
	o.regions = ctx->regions;
	o.nr_regions = ctx->nr_regions;
	o.skb_data = ctx->skb_data;
	o.skb_len = ctx->skb_len;
	o.pkt = ctx->pkt;
	o.user = user;
	o.tail_cnt = ctx->tail_cnt + 1;
	o.tail_cnt_end = &end;
	o.budget_from = ctx;
	end = o.tail_cnt;
	if (brt_vm_run_opts(vm, &o, &r0, msg, sizeof(msg))) {
		ctx->tail_cnt = end;
		if (ctx->budget && ctx->budget->exhausted) {
			bpfrt_run_stop(ctx, 0); /* the whole chain is out of budget */
			return 0;
		}
		brt_print(BPFRT_WARN, "bpfrt: tail call: %s\n", msg);
		r0 = 0;
	}
	ctx->tail_cnt = end;
	ctx->stop_r0 = r0;
	ctx->stopped = BRT_STOP_TAIL;
	return 0;
}
