/* test_host.c - helpers a host registers with a prototype (bpfrt_helper_register):
 * BPF_PROG_LOAD checks calls to them like calls to built-in helpers (same messages), and
 * BPF_PROG_TEST_RUN runs them on every engine; registration refuses clashes and bad kinds.
 * Verified programs' vms share one helper table (helpers/source.c): a registration after
 * it was built reaches later loads, a helper set on one vm reaches no other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "api/api.h"
#include "harness.h"
#include "vm/vm.h"

#define SUM_ID (BPFRT_HELPER_HOST_BASE + 1)
#define GPL_ID (BPFRT_HELPER_HOST_BASE + 2)

/* sum of len bytes at ptr */
static uint64_t host_sum(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			 struct bpfrt_run_ctx *ctx)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)r1;
	uint64_t s = 0;

	(void)r3, (void)r4, (void)r5;
	if (!bpfrt_run_access_ok(ctx, p, r2, 0))
		return (uint64_t)-1;
	for (uint64_t i = 0; i < r2; i++)
		s += p[i];
	return s;
}

static uint64_t host_answer(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			    struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 42;
}

#define INSN(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define STW(off, i) INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, off, i)
#define CALL(id) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* bytes 1..8 on the stack, sum(fp - 8, 8) = 36 */
static const struct bpf_insn good[] = {
	STW(-8, 0x04030201), STW(-4, 0x08070605), MOV_REG(1, 10), ADD_IMM(1, -8),
	MOV_IMM(2, 8), CALL(SUM_ID), EXIT,
};
/* the buffer is never written */
static const struct bpf_insn uninit[] = {
	MOV_REG(1, 10), ADD_IMM(1, -8), MOV_IMM(2, 8), CALL(SUM_ID), EXIT,
};
/* a scalar where the pointer goes */
static const struct bpf_insn scalar[] = {
	MOV_IMM(1, 5), MOV_IMM(2, 8), CALL(SUM_ID), EXIT,
};
static const struct bpf_insn gpl[] = { CALL(GPL_ID), EXIT };
static const struct bpf_insn unknown[] = { CALL(BPFRT_HELPER_HOST_BASE + 99), EXIT };

struct load_case {
	const char *name;
	const struct bpf_insn *insns;
	size_t n;
	const char *license;
	uint32_t prog_flags;    /* privilege: full by default */
	int err;                /* 0: loads */
	const char *msg;        /* in the log when refused */
	uint32_t retval;
};

#define P(a) a, sizeof(a) / sizeof(a[0])
static const struct load_case cases[] = {
	{ "sum of an initialised stack buffer", P(good), "GPL", 0, 0, NULL, 36 },
	{ "uninitialised stack buffer (CAP_BPF only)", P(uninit), "GPL", BPFRT_F_PRIV_BPF_CAPABLE,
	  EACCES,
	  "invalid read from stack R1 off=-8 size=8", 0 },
	{ "scalar as the pointer", P(scalar), "GPL", 0, EACCES,
	  "R1 type=scalar expected=fp", 0 },
	{ "gpl_only helper, GPL licence", P(gpl), "Dual BSD/GPL", 0, 0, NULL, 42 },
	{ "gpl_only helper, proprietary licence", P(gpl), "Proprietary", 0, EINVAL,
	  "cannot call GPL-restricted function from non-GPL compatible program", 0 },
	{ "unregistered host id", P(unknown), "GPL", 0, EINVAL, "invalid func unknown#1099", 0 },
};

/* BPFRT_F_ENGINE() of the engine test_loads() runs on, added to every load's flags */
static uint32_t engine_flags;

static int load(const struct load_case *c, char *log, size_t loglen)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)c->insns;
	a.insn_cnt = (uint32_t)c->n;
	a.license = (uint64_t)(uintptr_t)c->license;
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = (uint32_t)loglen;
	a.log_level = 1;
	a.prog_flags = c->prog_flags | engine_flags;
	log[0] = 0;
	return bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
}

static int test_run(int fd, uint32_t *retval)
{
	uint8_t pkt[64] = { 0 };
	union bpf_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	ret = bpfrt_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a));
	*retval = a.test.retval;
	return ret;
}

static void test_loads(const char *engine)
{
	static char log[65536];
	enum bpfrt_engine e = BPFRT_ENGINE_DEFAULT;

	T_EQ_INT(0, brt_vm_engine_parse(engine, 0, &e));
	engine_flags = BPFRT_F_ENGINE(e);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct load_case *c = &cases[i];
		uint32_t retval = 0;
		int fd;

		T_CASE(c->name);
		fd = load(c, log, sizeof(log));
		if (c->err) {
			T_EQ_INT(-1, fd);
			T_EQ_INT(c->err, errno);
			T_CONTAINS(c->msg, log);
			if (fd >= 0)
				close(fd);
			continue;
		}
		T_ASSERT(fd >= 0);
		if (fd < 0) {
			fprintf(stderr, "%s\n", log);
			continue;
		}
		T_EQ_INT(0, test_run(fd, &retval));
		T_EQ_U64(c->retval, retval);
		close(fd);
	}
}

static void test_register(void)
{
	BPFRT_OPTS(bpfrt_helper_proto, sum, .id = SUM_ID, .name = "host_sum", .fn = host_sum,
		   .ret = BPFRT_HELPER_RET_INTEGER,
		   .args = { BPFRT_HELPER_ARG_PTR_TO_MEM, BPFRT_HELPER_ARG_CONST_SIZE });
	BPFRT_OPTS(bpfrt_helper_proto, answer, .id = GPL_ID, .name = "host_answer",
		   .fn = host_answer, .gpl_only = true);
	struct bpfrt_helper_proto p;

	T_CASE("register");
	T_EQ_INT(0, bpfrt_helper_register(NULL, &sum));
	T_EQ_INT(0, bpfrt_helper_register(NULL, &answer));

	T_CASE("duplicate id");
	T_EQ_INT(-EEXIST, bpfrt_helper_register(NULL, &sum));
	T_EQ_INT(EEXIST, errno);

	T_CASE("built-in id");
	p = answer;
	p.id = BPF_FUNC_map_lookup_elem;
	T_EQ_INT(-EEXIST, bpfrt_helper_register(NULL, &p));

	/* each a change to sum (or answer) under id 2000; arg -1: none */
	static const struct {
		const char *why;
		int from_answer, arg, kind, ret;
		uint32_t id;
		int no_fn, no_sz;
	} bad[] = {
		{ "pointer without a size", 0, 1, BPFRT_HELPER_ARG_ANYTHING, 0, 2000, 0, 0 },
		{ "size first", 0, 0, BPFRT_HELPER_ARG_CONST_SIZE, 0, 2000, 0, 0 },
		{ "ringbuf memory", 0, 0, 10, 0, 2000, 0, 0 },
		{ "map value or NULL return", 0, -1, 0, 2, 2000, 0, 0 },
		{ "argument after DONTCARE", 0, 3, BPFRT_HELPER_ARG_ANYTHING, 0, 2000, 0, 0 },
		{ "map key without a map", 1, 0, BPFRT_HELPER_ARG_PTR_TO_MAP_KEY, 0, 2000, 0, 0 },
		{ "id 0", 1, -1, 0, 0, 0, 0, 0 },
		{ "id 65536", 1, -1, 0, 0, 65536, 0, 0 },
		{ "no function", 1, -1, 0, 0, 2000, 1, 0 },
		{ "sz 0", 1, -1, 0, 0, 2000, 0, 1 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		T_CASE(bad[i].why);
		p = bad[i].from_answer ? answer : sum;
		p.id = bad[i].id;
		if (bad[i].arg >= 0)
			p.args[bad[i].arg] = (enum bpfrt_helper_arg)bad[i].kind;
		if (bad[i].ret)
			p.ret = (enum bpfrt_helper_ret)bad[i].ret;
		if (bad[i].no_fn)
			p.fn = NULL;
		if (bad[i].no_sz)
			p.sz = 0;
		T_EQ_INT(-EINVAL, bpfrt_helper_register(NULL, &p));
	}
	T_CASE("NULL proto");
	T_EQ_INT(-EINVAL, bpfrt_helper_register(NULL, NULL));
	/* none of the refused ones took id 2000 */
	p = answer;
	p.id = 2000;
	T_EQ_INT(0, bpfrt_helper_register(NULL, &p));
}

static uint64_t host_seven(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			   struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 7;
}

/* A helper set on one program's vm (brt_vm_set_helper(), as bpfrt_helper_register() with
 * a vm does) changes that program only: the table it shared is copied first. */
static void test_own_table(void)
{
	static char log[4096];
	static const struct load_case c = { "gpl_only helper, GPL licence", P(gpl), "GPL", 0, 0,
					    NULL, 42 };
	struct brt_prog *prog;
	uint32_t r1 = 0, r2 = 0;
	int a, b;

	engine_flags = 0;
	T_CASE("helper set on one verified program's vm, not on another's");
	a = load(&c, log, sizeof(log));
	b = load(&c, log, sizeof(log));
	T_ASSERT(a >= 0 && b >= 0);
	if (a < 0 || b < 0)
		return;
	T_EQ_INT(0, brt_prog_from_fd(a, &prog));
	T_EQ_INT(0, brt_vm_set_helper(prog->vm, GPL_ID, "seven", host_seven));
	brt_obj_put(&prog->obj);
	T_EQ_INT(0, test_run(a, &r1));
	T_EQ_INT(0, test_run(b, &r2));
	T_EQ_U64(7, r1);
	T_EQ_U64(42, r2);
	T_CASE("a program loaded after it still gets the registry's helper");
	close(b);
	b = load(&c, log, sizeof(log));
	T_ASSERT(b >= 0);
	T_EQ_INT(0, test_run(b, &r2));
	T_EQ_U64(42, r2);
	close(a);
	close(b);
}

static int jit_built(void)
{
	static const struct bpf_insn ret0[] = { MOV_IMM(0, 0), EXIT };
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_JIT);
	struct bpfrt_vm *vm = NULL;
	int err = bpfrt_vm_load(ret0, 2, &o, &vm, NULL, 0);

	bpfrt_vm_free(vm);
	return err != -EOPNOTSUPP;
}

int main(void)
{
	static const char *const engines[] = { "interp", "checked", "jit" };

	static const struct load_case before = { "before registration", P(good), "GPL", 0,
						  EINVAL, "invalid func unknown#1001", 0 };
	static char log[4096];

	static const struct bpf_insn ret0[] = { MOV_IMM(0, 0), EXIT };
	static const struct load_case plain = { "a program loaded before registration", P(ret0),
						"GPL", 0, 0, NULL, 0 };
	uint32_t retval = 1;
	int fd;

	/* a verified program's vm before any registration: the shared helper table is
	 * built now, and must be built again once helpers are registered */
	T_CASE(plain.name);
	fd = load(&plain, log, sizeof(log));
	T_ASSERT(fd >= 0);
	T_EQ_INT(0, test_run(fd, &retval));
	T_EQ_U64(0, retval);
	if (fd >= 0)
		close(fd);
	T_CASE(before.name);
	T_EQ_INT(-1, load(&before, log, sizeof(log)));
	T_CONTAINS(before.msg, log);
	test_register();
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++) {
		if (!strcmp(engines[i], "jit") && !jit_built()) {
			printf("jit not built: loads not run on it\n");
			continue;
		}
		test_loads(engines[i]);
	}
	test_own_table();
	return t_done();
}
