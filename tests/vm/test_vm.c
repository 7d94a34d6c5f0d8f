/* test_vm.c - the public vm API: options checking, load errors, helper registration and
 * overriding, bpfrt_run_stop/user/grant/access_ok, the rich run entry (regions, packet,
 * per-run helper table, budget), and exact atomics when threads share memory.
 */
#include <errno.h>
#include <pthread.h>

#include "vm/vm.h"
#include "vmtest.h"

static uint64_t granted[4] = { 11, 22, 33, 44 };

/* helper 1000: returns a pointer to `granted`, granted read-only when r1 != 0 */
static uint64_t give_ptr(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			 struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5;
	if (r1)
		bpfrt_run_grant(ctx, granted, sizeof(granted), 0);
	return (uint64_t)(uintptr_t)granted;
}

/* helper 1001: r0 = *user + r1; stops the program when r2 != 0 */
static uint64_t user_add(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			 struct bpfrt_run_ctx *ctx)
{
	uint64_t *u = bpfrt_run_user(ctx);

	(void)r3, (void)r4, (void)r5;
	if (r2)
		bpfrt_run_stop(ctx, 77);
	return (u ? *u : 1000) + r1;
}

/* helper 1002: 1 when [r1, r1 + r2) is accessible for writing */
static uint64_t probe(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
		      struct bpfrt_run_ctx *ctx)
{
	(void)r3, (void)r4, (void)r5;
	return (uint64_t)bpfrt_run_access_ok(ctx, (void *)(uintptr_t)r1, r2, 1);
}

/* Make helper id call fn in vm only (bpfrt_helper_register() with a vm). */
static int vm_helper(struct bpfrt_vm *vm, uint32_t id, const char *name, bpfrt_helper_fn fn)
{
	BPFRT_OPTS(bpfrt_helper_proto, p, .id = id, .name = name, .fn = fn);

	return bpfrt_helper_register(vm, &p);
}

static struct bpfrt_vm *load_with_helpers(const char *text, enum bpfrt_engine e)
{
	struct bpfrt_vm *vm = NULL;
	char err[256];

	if (vt_load(text, e, 0, &vm, err, sizeof(err))) {
		T_FAIL("load: %s", err);
		return NULL;
	}
	T_EQ_INT(0, vm_helper(vm, 1000, "give_ptr", give_ptr));
	T_EQ_INT(0, vm_helper(vm, 1001, "user_add", user_add));
	T_EQ_INT(0, vm_helper(vm, 1002, "probe", probe));
	return vm;
}

static void test_opts_and_load_errors(void)
{
	struct bpf_insn prog[2] = { { .code = BPF_ALU64 | BPF_MOV | BPF_K, .imm = 1 },
				    { .code = BPF_JMP | BPF_EXIT } };
	struct bpf_insn bad[1] = { { .code = 0xff } };
	struct {
		struct bpfrt_vm_opts o;
		uint64_t future;
	} big = { { .sz = sizeof(big) }, 1 };
	struct bpfrt_vm_opts tiny = { .sz = 2 };
	BPFRT_OPTS(bpfrt_vm_opts, maxo, .max_insns = 1);
	struct bpfrt_vm *vm = NULL;
	char err[256];
	uint64_t r0;

	T_CASE("unknown trailing option");
	T_EQ_INT(-EINVAL, bpfrt_vm_load(prog, 2, &big.o, &vm, err, sizeof(err)));
	T_EQ_INT(EINVAL, errno);
	T_CASE("sz too small");
	T_EQ_INT(-EINVAL, bpfrt_vm_load(prog, 2, &tiny, &vm, err, sizeof(err)));
	T_CASE("zero trailing option is fine");
	big.future = 0;
	T_EQ_INT(0, bpfrt_vm_load(prog, 2, &big.o, &vm, err, sizeof(err)));
	T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_U64(1, r0);
	bpfrt_vm_free(vm);
	T_CASE("NULL opts: default engine is checked");
	T_EQ_INT(0, bpfrt_vm_load(prog, 2, NULL, &vm, err, sizeof(err)));
	T_EQ_INT(BPFRT_ENGINE_CHECKED, brt_vm_engine(vm));
	bpfrt_vm_free(vm);
	T_CASE("bad opcode names the insn");
	T_EQ_INT(-EINVAL, bpfrt_vm_load(bad, 1, NULL, &vm, err, sizeof(err)));
	T_CONTAINS("insn 0: unknown opcode", err);
	T_ASSERT(vm == NULL);
	T_CASE("too long");
	T_EQ_INT(-E2BIG, bpfrt_vm_load(prog, 2, &maxo, &vm, err, sizeof(err)));
	T_CASE("empty");
	T_EQ_INT(-EINVAL, bpfrt_vm_load(prog, 0, NULL, &vm, err, sizeof(err)));
	T_CASE("a vm's helper: NULL fn, huge ids, NULL or bad proto refused");
	T_EQ_INT(0, bpfrt_vm_load(prog, 2, NULL, &vm, err, sizeof(err)));
	T_EQ_INT(-EINVAL, vm_helper(vm, 1, "x", NULL));
	T_EQ_INT(-EINVAL, vm_helper(vm, 1u << 20, "x", give_ptr));
	T_EQ_INT(-EINVAL, vm_helper(vm, BPFRT_HELPER_MAX_ID + 1, "x", give_ptr));
	T_EQ_INT(EINVAL, errno);
	T_EQ_INT(-EINVAL, bpfrt_helper_register(vm, NULL));
	{
		struct bpfrt_helper_proto p = { .sz = 1, .id = 1000, .fn = give_ptr };

		T_EQ_INT(-EINVAL, bpfrt_helper_register(vm, &p));
	}
	T_CASE("a vm's helper: id 0, the highest id, no name");
	T_EQ_INT(0, vm_helper(vm, 0, NULL, give_ptr));
	T_EQ_INT(0, vm_helper(vm, BPFRT_HELPER_MAX_ID, NULL, give_ptr));
	bpfrt_vm_free(vm);
	bpfrt_vm_free(NULL);
}

/* The JIT runs code calling only leaf helpers without a run ctx (pass leafcall: one direct
 * call a run); registering another helper under the same id must end that. */
static void test_leaf_override(void)
{
#ifdef BPFRT_HAVE_JIT
	static const enum bpfrt_engine engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_JIT };
#else /* the interpreter half still runs; the JIT's case has no engine to run on */
	static const enum bpfrt_engine engines[] = { BPFRT_ENGINE_INTERP };
	printf("jit: leaf helper override: skipped: built without the JIT\n");
#endif
	char err[256];
	uint64_t r0;

	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		struct bpfrt_vm *vm;

		T_CASE(e ? "jit: a leaf helper, then the same id overridden by one that stops"
			 : "interp: a leaf helper, then the same id overridden by one that stops");
		vm = load_with_helpers("mov %r1, 3\nmov %r2, 1\ncall 42\nadd %r0, 5\nexit",
				       engines[e]);
		if (!vm)
			continue;
		for (int i = 0; i < 2; i++) {
			T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
			T_EQ_U64(5, r0); /* bpf_get_numa_node_id() is 0 */
		}
		T_EQ_INT(0, vm_helper(vm, 42, "user_add", user_add));
		T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
		T_EQ_U64(77, r0);
		bpfrt_vm_free(vm);
	}
}

static void test_helpers(void)
{
	char err[256];
	uint64_t r0, user = 5;

	for (size_t e = 0; e < 2; e++) {
		struct bpfrt_vm *vm;

		T_CASE(vt_engine_names[e]);
		/* user pointer: NULL through bpfrt_vm_run */
		vm = load_with_helpers("mov %r1, 3\nmov %r2, 0\ncall 1001\nexit", vt_engines[e]);
		T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
		T_EQ_U64(1003, r0);
		bpfrt_vm_free(vm);

		T_CASE("stop ends the program with its r0");
		vm = load_with_helpers("mov %r1, 3\nmov %r2, 1\ncall 1001\nmov %r0, 1\nexit",
				       vt_engines[e]);
		T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
		T_EQ_U64(77, r0);
		bpfrt_vm_free(vm);

		T_CASE("rich run: user pointer, r1/r2, per-run helper table");
		vm = load_with_helpers("mov %r6, %r1\nmov %r1, %r2\nmov %r2, 0\ncall 1001\nadd %r0, %r6\n"
				       "exit", vt_engines[e]);
		{
			struct brt_run_opts o = { .r1 = 100, .r2 = 20, .user = &user };

			T_EQ_INT(0, brt_vm_run_opts(vm, &o, &r0, err, sizeof(err)));
			T_EQ_U64(125, r0);
			o.helpers = NULL;
			o.nr_helpers = 0;
			{
				static const brt_helper_fn none[1];

				o.helpers = none;
				o.nr_helpers = 1;
				T_EQ_INT(-EFAULT, brt_vm_run_opts(vm, &o, &r0, err, sizeof(err)));
				T_EQ_STR("insn 3: call to unknown helper 1001", err);
			}
		}
		bpfrt_vm_free(vm);

		T_CASE("override a built-in helper");
		vm = load_with_helpers("mov %r1, 1\nmov %r2, 0\ncall 5\nexit", vt_engines[e]);
		T_EQ_INT(0, vm_helper(vm, 5, "not ktime", user_add));
		T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
		T_EQ_U64(1001, r0);
		bpfrt_vm_free(vm);

		T_CASE("built-in ktime_get_ns is monotonic and non-zero");
		vm = load_with_helpers("call 5\nmov %r6, %r0\ncall 5\nsub %r0, %r6\njsge %r0, 0, ok\n"
				       "mov %r0, -1\nexit\nok:\njeq %r6, 0, bad\nmov %r0, 1\nexit\nbad:\n"
				       "mov %r0, -2\nexit", vt_engines[e]);
		T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
		T_EQ_U64(1, r0);
		bpfrt_vm_free(vm);
	}
}

static void test_grant_and_regions(void)
{
	struct bpfrt_vm *vm;
	char err[256];
	uint64_t r0, ctxmem[4] = { 1, 2, 3, 4 };

	T_CASE("granted memory is readable");
	vm = load_with_helpers("mov %r1, 1\ncall 1000\nldxdw %r0, [%r0+16]\nexit",
			       BPFRT_ENGINE_CHECKED);
	T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_U64(33, r0);
	bpfrt_vm_free(vm);

	T_CASE("ungranted memory is not");
	vm = load_with_helpers("mov %r1, 0\n" /* no grant */ "call 1000\nldxdw %r0, [%r0+16]\nexit",
			       BPFRT_ENGINE_CHECKED);
	T_EQ_INT(-EFAULT, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_STR("insn 2: read of 8 bytes at r0+16 outside any region", err);
	bpfrt_vm_free(vm);

	T_CASE("a read-only grant refuses writes");
	vm = load_with_helpers("mov %r1, 1\ncall 1000\nstdw [%r0+0], 1\nexit", BPFRT_ENGINE_CHECKED);
	T_EQ_INT(-EFAULT, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_STR("insn 2: write of 8 bytes at r0+0 outside any writable region", err);
	bpfrt_vm_free(vm);

	T_CASE("many grants grow the region list");
	vm = load_with_helpers("mov %r6, 0\nl:\nmov %r1, 1\ncall 1000\nadd %r6, 1\njlt %r6, 40, l\n"
			       "ldxdw %r0, [%r0+24]\nexit", BPFRT_ENGINE_CHECKED);
	T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_U64(44, r0);
	bpfrt_vm_free(vm);

	T_CASE("context regions: read-only part and writable part");
	vm = load_with_helpers("ldxdw %r0, [%r1+24]\nstdw [%r1+8], 9\nstdw [%r1+16], 9\nexit",
			       BPFRT_ENGINE_CHECKED);
	{
		struct brt_region regs[2] = {
			{ (uint64_t)(uintptr_t)ctxmem, sizeof(ctxmem), 0 },
			{ (uint64_t)(uintptr_t)&ctxmem[1], 8, 1 },
		};
		struct brt_run_opts o = { .r1 = (uint64_t)(uintptr_t)ctxmem,
					  .regions = regs,
					  .nr_regions = 2 };

		T_EQ_INT(-EFAULT, brt_vm_run_opts(vm, &o, &r0, err, sizeof(err)));
		T_EQ_STR("insn 2: write of 8 bytes at r1+16 outside any writable region", err);
		T_EQ_U64(9, ctxmem[1]);
		T_EQ_U64(3, ctxmem[2]);
	}
	bpfrt_vm_free(vm);

	T_CASE("access_ok sees stack and regions");
	vm = load_with_helpers("mov %r1, %r10\nsub %r1, 8\nmov %r2, 8\ncall 1002\nmov %r6, %r0\n"
			       "mov %r1, %r10\nmov %r2, 1\ncall 1002\nlsh %r6, 1\nor %r0, %r6\nexit",
			       BPFRT_ENGINE_CHECKED);
	T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_U64(2, r0); /* r10-8 yes, r10 itself no */
	bpfrt_vm_free(vm);

	T_CASE("rich run: packet for LD_ABS apart from r1");
	vm = load_with_helpers("ldabsb 2\nexit", BPFRT_ENGINE_CHECKED);
	{
		static const uint8_t pkt[3] = { 1, 2, 3 };
		struct brt_run_opts o = { .skb_data = pkt, .skb_len = 3, .insn_budget = 1 };

		T_EQ_INT(-E2BIG, brt_vm_run_opts(vm, &o, &r0, err, sizeof(err)));
		T_EQ_STR("insn 1: instruction budget of 1 exhausted", err);
		o.insn_budget = 0;
		T_EQ_INT(0, brt_vm_run_opts(vm, &o, &r0, err, sizeof(err)));
		T_EQ_U64(3, r0);
	}
	bpfrt_vm_free(vm);
}

struct thr {
	struct bpfrt_vm *vm;
	uint64_t *mem;
};

static void *adder(void *arg)
{
	struct thr *t = arg;
	char err[128];
	uint64_t r0;

	for (int i = 0; i < 20000; i++)
		if (bpfrt_vm_run(t->vm, t->mem, 16, &r0, err, sizeof(err)))
			break;
	return NULL;
}

static void test_atomics_threads(void)
{
	uint64_t mem[2] = { 0, 0 };
	struct thr t;
	pthread_t th[2];
	char err[256];

	T_CASE("concurrent lock add is exact");
	T_EQ_INT(0, vt_load("mov %r2, 1\nlock add [%r1], %r2\nlock add32 [%r1+8], %r2\nexit",
			    BPFRT_ENGINE_INTERP, 0, &t.vm, err, sizeof(err)));
	t.mem = mem;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, adder, &t);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	T_EQ_U64(40000, mem[0]);
	T_EQ_U64(40000, mem[1]);
	bpfrt_vm_free(t.vm);
}

int main(void)
{
	test_opts_and_load_errors();
	test_helpers();
	test_leaf_override();
	test_grant_and_regions();
	test_atomics_threads();
	return t_done();
}
