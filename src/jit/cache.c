/* cache.c - the JIT as a vm engine: one program's compiled versions, one per helper table
 * it ran with.  Helpers are bound into the code (direct calls), and a vm's table can change
 * after load (bpfrt_helper_register() on the vm) or be replaced for one run, so the code is
 * compiled at the first run with a given set of helpers and kept until the vm is freed: a
 * run in another thread may still be executing an older version.  A version is found by
 * the functions the program's calls resolve to, so there are no more versions than
 * distinct sets of those functions.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/jit.h"
#include "util/util.h"

struct jit_version {
	struct jit_version *next;
	bpfrt_helper_fn *table;           /* snapshot the code and callx resolve from */
	size_t nr;
	bool budget;                      /* compiled with BRT_JIT_BUDGET */
	struct brt_jit_prog *prog;
};

struct brt_jit_cache {
	const struct bpf_insn *insns;   /* owned by the caller, outlives the cache */
	size_t n;
	struct brt_jit_env env;         /* packet offsets; helper resolver set per version */
	uint32_t *ids;                  /* helper ids the program calls (its key) */
	size_t nids;
	bool any_id;                    /* callx: the whole table is the key */
	pthread_mutex_t lock;           /* serialises compiles and the list */
	_Atomic(struct jit_version *) cur; /* most recently used version: the lock-free path */
	struct jit_version *all;
	struct brt_jit_lookup *lookups; /* env.lookups: owned copy */
	struct brt_jit_rodata *rodata;  /* env.rodata: owned copy */
	char *sym;                      /* perf's name for the code, or NULL: bpf_prog_<tag> */
};

static uint64_t no_helper(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			  struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* At load every helper id is acceptable: tables are only known at run time. */
static bpfrt_helper_fn any_helper(void *arg, uint32_t id)
{
	(void)arg, (void)id;
	return no_helper;
}

static bpfrt_helper_fn table_helper(void *arg, uint32_t id)
{
	const struct jit_version *v = arg;

	return id < v->nr ? v->table[id] : NULL;
}

static bpfrt_helper_fn entry(const bpfrt_helper_fn *table, size_t nr, uint32_t id)
{
	return id < nr ? table[id] : NULL;
}

/* Does version v call the same functions as table would?  Only the ids the program calls
 * matter, so a run with another table holding the same helpers reuses the code, and a
 * table changed in place (same address) is noticed. */
static bool matches(const struct brt_jit_cache *c, const struct jit_version *v,
		    const bpfrt_helper_fn *table, size_t nr, bool budget)
{
	if (!v || v->budget != budget)
		return false;
	if (c->any_id)
		return v->nr == nr && (!nr || !memcmp(v->table, table, nr * sizeof(*table)));
	for (size_t i = 0; i < c->nids; i++)
		if (entry(table, nr, c->ids[i]) != entry(v->table, v->nr, c->ids[i]))
			return false;
	return true;
}

/* The key: ids of `call` instructions (sorted out of duplicates lazily: few calls). */
static int collect_ids(struct brt_jit_cache *c)
{
	c->ids = malloc((c->n ? c->n : 1) * sizeof(*c->ids));
	if (!c->ids)
		return -ENOMEM;
	for (size_t pc = 0; pc < c->n; pc++) {
		const struct bpf_insn *in = &c->insns[pc];
		size_t i;

		if (in->code == (BPF_JMP | BPF_CALL | BPF_X))
			c->any_id = true;
		if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg != 0 || in->imm < 0)
			continue;
		for (i = 0; i < c->nids && c->ids[i] != (uint32_t)in->imm; i++)
			;
		if (i == c->nids)
			c->ids[c->nids++] = (uint32_t)in->imm;
	}
	return 0;
}

/* A compiled version's code named for perf (BPFRT_PERF_MAP=1): a program's versions all
 * get its name (perf takes the line of the address a sample hit). */
static void announce(const struct brt_jit_cache *c, const struct brt_jit_prog *p)
{
	unsigned char digest[32];
	char name[BRT_JIT_PERF_SYM_LEN];
	const uint8_t *code;
	size_t size;

	if (!p || !brt_jit_perf_map_enabled())
		return;
	code = brt_jit_code(p, &size, NULL);
	if (c->sym) {
		brt_jit_perf_map_add(code, size, c->sym);
		return;
	}
	/* no name given (bpfrt_vm_load()): the kernel's form for a nameless program */
	brt_sha256(c->insns, c->n * sizeof(*c->insns), digest);
	brt_jit_perf_sym(name, digest, NULL);
	brt_jit_perf_map_add(code, size, name);
}

int brt_jit_cache_new(const struct bpf_insn *insns, const uint16_t *ops, size_t n,
		      const char *sym, int32_t pkt_data_off, int32_t pkt_len_off,
		      int (*budget_slow)(struct bpfrt_run_ctx *ctx),
		      uint64_t (*ld_neg)(struct bpfrt_run_ctx *ctx, int64_t off, uint64_t size),
		      const struct brt_jit_rodata *rodata, size_t nrodata,
		      struct brt_jit_cache **out, char *err, size_t errlen)
{
	struct brt_jit_env env = { .helper = any_helper, .pkt_data_off = pkt_data_off,
				   .pkt_len_off = pkt_len_off, .ops = ops,
				   .budget_slow = budget_slow, .ld_neg = ld_neg };
	const char *harden = getenv("BPFRT_JIT_HARDEN");
	struct brt_jit_prog *trial;
	struct brt_jit_cache *c;
	int rc;

	*out = NULL;
	/* like the kernel's net.core.bpf_jit_harden: blind constants */
	if (harden && *harden && strcmp(harden, "0"))
		env.flags |= BRT_JIT_BLIND;
	c = calloc(1, sizeof(*c));
	if (!c || pthread_mutex_init(&c->lock, NULL)) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->insns = insns;
	c->n = n;
	if (sym && !(c->sym = strdup(sym))) {
		brt_jit_cache_free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (nrodata) {
		c->rodata = malloc(nrodata * sizeof(*rodata));
		if (!c->rodata) {
			brt_jit_cache_free(c);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		memcpy(c->rodata, rodata, nrodata * sizeof(*rodata));
		env.rodata = c->rodata;
		env.nrodata = nrodata;
	}
	c->env = env;
	atomic_init(&c->cur, NULL);
	if (collect_ids(c)) {
		brt_jit_cache_free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* refusals (recursion, too deep, too big) surface at load.  Code that resolves no
	 * helper is the one version the program will have: compiled now and kept.  A program
	 * that calls helpers is compiled at its first run with the table it runs with (and
	 * when an info query asks for its code); here only checked (BRT_JIT_CHECK: the
	 * checks of its structure, which are every refusal but the size cap, and the whole
	 * compile only for a program big enough to reach the cap), which spares the many
	 * programs that are loaded and never run (an object's tracepoints until attached) a
	 * compile whose code nothing would run. */
	if (c->nids || c->any_id)
		env.flags |= BRT_JIT_CHECK;
	rc = brt_jit_compile(insns, n, &env, &trial, err, errlen);
	if (rc) {
		brt_jit_cache_free(c);
		return rc;
	}
	if (trial) {
		struct jit_version *v = calloc(1, sizeof(*v));

		if (!v || !(v->table = malloc(sizeof(*v->table)))) {
			free(v);
			brt_jit_free(trial);
			brt_jit_cache_free(c);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		v->prog = trial;
		c->all = v;
		announce(c, trial);
		atomic_store_explicit(&c->cur, v, memory_order_release);
	}
	*out = c;
	return 0;
}

const struct brt_jit_prog *brt_jit_cache_fixed(const struct brt_jit_cache *c)
{
	struct jit_version *v = atomic_load_explicit(&c->cur, memory_order_acquire);

	return !c->nids && !c->any_id && v && !v->budget ? v->prog : NULL;
}

static int compile_version(struct brt_jit_cache *c, const bpfrt_helper_fn *table, size_t nr,
			   bool budget, struct jit_version **out, char *err, size_t errlen)
{
	struct jit_version *v = calloc(1, sizeof(*v));
	struct brt_jit_env env = c->env;
	int rc;

	if (!v || !(v->table = malloc((nr ? nr : 1) * sizeof(*table)))) {
		free(v);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (nr)
		memcpy(v->table, table, nr * sizeof(*table));
	v->nr = nr;
	v->budget = budget;
	if (budget)
		env.flags |= BRT_JIT_BUDGET;
	env.helper = table_helper;
	env.helper_arg = v;
	rc = brt_jit_compile(c->insns, c->n, &env, &v->prog, err, errlen);
	if (rc) {
		free(v->table);
		free(v);
		return rc == -EINVAL ? -EFAULT : rc; /* an unknown helper is a run fault */
	}
	announce(c, v->prog);
	*out = v;
	return 0;
}

/* Find or compile the version for the key; publishes it as the current one. */
static __attribute__((noinline)) int get_slow(struct brt_jit_cache *c,
					      const bpfrt_helper_fn *table, size_t nr, bool budget,
					      const struct brt_jit_prog **out, char *err,
					      size_t errlen)
{
	struct jit_version *v;
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	for (v = c->all; v && !matches(c, v, table, nr, budget); v = v->next)
		;
	if (!v) {
		rc = compile_version(c, table, nr, budget, &v, err, errlen);
		if (!rc) {
			v->next = c->all;
			c->all = v;
		}
	}
	if (!rc) {
		atomic_store_explicit(&c->cur, v, memory_order_release);
		*out = v->prog;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int brt_jit_cache_get(struct brt_jit_cache *c, const bpfrt_helper_fn *table, size_t nr,
		      int budget, const struct brt_jit_prog **out, char *err, size_t errlen)
{
	struct jit_version *v = atomic_load_explicit(&c->cur, memory_order_acquire);

	/* the common cases without a loop: no helper calls, or one */
	if (v && !c->any_id && c->nids <= 1 && v->budget == !!budget &&
	    (!c->nids || entry(table, nr, c->ids[0]) == entry(v->table, v->nr, c->ids[0]))) {
		*out = v->prog;
		return 0;
	}
	if (matches(c, v, table, nr, budget)) {
		*out = v->prog;
		return 0;
	}
	return get_slow(c, table, nr, budget, out, err, errlen);
}

void brt_jit_cache_free(struct brt_jit_cache *c)
{
	struct jit_version *v, *next;

	if (!c)
		return;
	for (v = c->all; v; v = next) {
		next = v->next;
		brt_jit_free(v->prog);
		free(v->table);
		free(v);
	}
	pthread_mutex_destroy(&c->lock);
	free(c->ids);
	free(c->lookups);
	free(c->rodata);
	free(c->sym);
	free(c);
}

static int by_insn(const void *a, const void *b)
{
	const struct brt_jit_lookup *x = a, *y = b;

	return (x->insn > y->insn) - (x->insn < y->insn);
}

int brt_jit_cache_set_lookups(struct brt_jit_cache *c, const struct brt_jit_lookup *l,
			      size_t n)
{
	struct brt_jit_lookup *copy = NULL;

	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, l, n * sizeof(*copy));
		qsort(copy, n, sizeof(*copy), by_insn);
	}
	free(c->lookups);
	c->lookups = copy;
	c->env.lookups = copy;
	c->env.nlookups = n;
	return 0;
}
