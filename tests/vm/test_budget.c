/* test_budget.c - the run budget (src/vm/budget.c and its counting in every engine):
 * nested bpf_loop and endless loops stop with -ETIME on the fast interpreter, the checked
 * interpreter and the JIT, by counted instructions and by time; a budget large enough
 * changes no result; the charges are exact where documented (a callback call is 1, a
 * backward jump its loop's length); without a budget nothing is limited; and the
 * BPF_PROG_TEST_RUN path (bpfrt_prog_test_run_opts' run_budget) on a verified program.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmtest.h"

/* bpf_loop(1e6, outer) where outer runs bpf_loop(1e6, inner): 1e12 callbacks */
#define NESTED                                                                                   \
	"mov %r1, 1000000\nlddw %r2, func outer\nmov %r3, 0\nmov %r4, 0\ncall 181\n"             \
	"mov %r0, 2\nexit\n"                                                                     \
	"outer:\nmov %r1, 1000000\nlddw %r2, func inner\nmov %r3, 0\nmov %r4, 0\ncall 181\n"     \
	"mov %r0, 0\nexit\n"                                                                     \
	"inner:\nmov %r0, 0\nexit\n"
/* r0 = 0; do r0++ while r0 < N: a 2-instruction loop */
#define COUNT_TO(n) "mov %r0, 0\nl:\nadd %r0, 1\njlt %r0, " n ", l\nexit\n"
/* bpf_loop(N, cb) with a callback that has no loop: N charges of 1 */
#define CALLS(n) "mov %r1, " n "\nlddw %r2, func cb\nmov %r3, 0\nmov %r4, 0\ncall 181\nexit\n" \
		 "cb:\nmov %r0, 0\nexit\n"

struct bcase {
	const char *name;
	const char *text;
	uint64_t insns;   /* run budget in counted instructions, 0: none */
	uint64_t ns;      /* run budget in ns, 0: none */
	int err;          /* expected result of the run: 0 or -ETIME */
	uint64_t r0;      /* expected r0 when err is 0 */
	const char *msg;  /* expected message when err is set */
};

static const struct bcase cases[] = {
	{ "nested bpf_loop, instruction budget", NESTED, 100000, 0, -ETIME, 0,
	  "run budget of 100000 instructions exhausted" },
	{ "nested bpf_loop, time budget", NESTED, 0, 20000000, -ETIME, 0,
	  "run budget of 20000000 ns exhausted" },
	{ "nested bpf_loop, both: instructions first", NESTED, 5000, 10000000000ull, -ETIME, 0,
	  "run budget of 5000 instructions exhausted" },
	{ "endless loop", "mov %r0, 0\nl:\nadd %r0, 1\nja l\n", 5000, 0, -ETIME, 0,
	  "run budget of 5000 instructions exhausted" },
	{ "endless loop, time", "mov %r0, 0\nl:\nadd %r0, 1\nja l\n", 0, 20000000, -ETIME, 0,
	  "run budget of 20000000 ns exhausted" },
	/* a budget large enough: the same results as without one */
	{ "loop within its budget", COUNT_TO("1000"), 1000000, 0, 0, 1000, NULL },
	{ "loop within a time budget", COUNT_TO("1000"), 0, 10000000000ull, 0, 1000, NULL },
	{ "callbacks within their budget", CALLS("100"), 1000, 0, 0, 100, NULL },
	/* exact charges: 1000 callback calls cost 1000; 1000 passes of a 2-instruction
	 * loop cost 2000 on every engine (1,998 where only taken jumps count) */
	{ "1000 callbacks, budget 1000", CALLS("1000"), 1000, 0, 0, 1000, NULL },
	{ "1000 callbacks, budget 999", CALLS("1000"), 999, 0, -ETIME, 0,
	  "run budget of 999 instructions exhausted" },
	{ "loop of 2 x 1000, budget 2000", COUNT_TO("1000"), 2000, 0, 0, 1000, NULL },
	{ "loop of 2 x 1000, budget 1900", COUNT_TO("1000"), 1900, 0, -ETIME, 0,
	  "run budget of 1900 instructions exhausted" },
	/* budget off: no limit (two million counted instructions, where 1e6 would stop it) */
	{ "no budget: loop of 2 x 1e6", COUNT_TO("1000000"), 0, 0, 0, 1000000, NULL },
	{ "the same with budget 1e6", COUNT_TO("1000000"), 1000000, 0, -ETIME, 0,
	  "run budget of 1000000 instructions exhausted" },
	/* bpf-to-bpf calls repeat nothing: a call backwards costs nothing */
	{ "calls are free", "call local g\nexit\nf:\nmov %r0, 5\nexit\n"
	  "g:\ncall local f\ncall local f\nexit\n", 1, 0, 0, 5, NULL },
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int load(const struct bcase *c, enum bpfrt_engine e, struct bpfrt_vm **vm, char *err,
		size_t errlen)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = e, .run_budget = c->insns,
		   .run_budget_ns = c->ns);
	struct bpf_insn *insns;
	size_t n;
	int ret = bpfrt_asm(c->text, "test", &insns, &n, err, errlen);

	if (ret)
		return ret;
	ret = bpfrt_vm_load(insns, n, &o, vm, err, errlen);
	free(insns);
	return ret;
}

static void run_case(const struct bcase *c, enum bpfrt_engine e, const char *ename)
{
	char name[160], err[256] = "";
	struct bpfrt_vm *vm;
	uint64_t r0 = 0, t0;
	int ret;

	snprintf(name, sizeof(name), "%s: %s", ename, c->name);
	T_CASE(name);
	ret = load(c, e, &vm, err, sizeof(err));
	if (ret == -EOPNOTSUPP)
		return; /* no JIT in this build */
	T_EQ_INT(0, ret);
	if (ret)
		return;
	t0 = mono_ms();
	ret = bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err));
	T_EQ_INT(c->err, ret);
	if (c->err) {
		T_EQ_STR(c->msg, err);
		/* a time budget stops the run soon after it is spent (generous: a busy host) */
		if (c->ns && c->ns < 1000000000)
			T_ASSERT(mono_ms() - t0 < 2000);
	} else {
		T_EQ_U64(c->r0, r0);
	}
	/* the vm runs again with a fresh budget: the first run left nothing behind */
	ret = bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err));
	T_EQ_INT(c->err, ret);
	bpfrt_vm_free(vm);
}

/* BPF_PROG_TEST_RUN with bpfrt_test_run_opts' budget, on each engine: a verified XDP
 * program with a bounded loop of 100,000 passes (200,000 counted instructions; nested
 * bpf_loop needs BTF func_info there, and the vm cases above cover it). */
static void test_run_path(enum bpfrt_engine e, const char *ename)
{
	static unsigned char pkt[64];
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .prog_flags = BPFRT_F_ENGINE(e));
	BPFRT_OPTS(bpfrt_test_run_opts, to, .data_in = pkt, .data_size_in = sizeof(pkt),
		   .run_budget = 1000);
	char name[160], err[256];
	struct bpf_insn *insns;
	size_t n;
	int fd;

	snprintf(name, sizeof(name), "%s: BPF_PROG_TEST_RUN run_budget", ename);
	T_CASE(name);
	T_EQ_INT(0, bpfrt_asm("mov %r0, 0\nl:\nadd %r0, 1\njlt %r0, 100000, l\nmov %r0, 2\n"
			      "exit\n", "test", &insns, &n, err, sizeof(err)));
	fd = bpfrt_prog_load(BPF_PROG_TYPE_XDP, "loop", "GPL", insns, n, &lo);
	free(insns);
	if (fd < 0 && e == BPFRT_ENGINE_JIT && errno == EOPNOTSUPP)
		return;
	T_ASSERT(fd >= 0);
	if (fd < 0)
		return;
	T_EQ_INT(-ETIME, bpfrt_prog_test_run_opts(fd, &to));
	T_EQ_INT(ETIME, errno);
	to.run_budget = 0;
	to.run_budget_ns = 1; /* spent at the first look at the clock */
	T_EQ_INT(-ETIME, bpfrt_prog_test_run_opts(fd, &to));
	to.run_budget_ns = 0;
	to.run_budget = 200000; /* enough; each of the 3 runs has the whole budget */
	to.repeat = 3;
	T_EQ_INT(0, bpfrt_prog_test_run_opts(fd, &to));
	T_EQ_U64(2, to.retval);
	to.run_budget = 0; /* none */
	to.retval = 0;
	T_EQ_INT(0, bpfrt_prog_test_run_opts(fd, &to));
	T_EQ_U64(2, to.retval);
	close(fd);
}

int main(void)
{
	static const enum bpfrt_engine engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
						     BPFRT_ENGINE_JIT };
	static const char *const names[] = { "interp", "checked", "jit" };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t e = 0; e < 3; e++)
			run_case(&cases[i], engines[e], names[e]);
	for (size_t e = 0; e < 3; e++)
		test_run_path(engines[e], names[e]);
	return t_done();
}
