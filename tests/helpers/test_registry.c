/* test_registry.c - the helper registry (src/helpers/): every helpers.def row is joined
 * to exactly one function and back, lookups by id, the table a new vm starts from, and
 * host registrations past the old fixed cap of 256 up to the highest id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "harness.h"
#include "helpers/helpers.h"

static const struct {
	uint32_t id;
	const char *name;
	uint8_t gpl_only, ret, args[5];
} rows[] = {
#define HELPER(id_, name_, gpl, ret_, a1, a2, a3, a4, a5)                                    \
	{ (id_), #name_, (gpl), BRT_RET_##ret_,                                               \
	  { BRT_ARG_##a1, BRT_ARG_##a2, BRT_ARG_##a3, BRT_ARG_##a4, BRT_ARG_##a5 } },
#include "vm/helpers.def"
#undef HELPER
};

static int in_def(size_t id)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].id == id)
			return 1;
	return 0;
}

static uint64_t host_fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return r1 + 1;
}

static void test_builtin(void)
{
	size_t n, nr;
	const brt_helper_fn *table = brt_helper_default_table(&n);
	brt_helper_fn *copy;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct brt_helper_proto *p = brt_helper_get(rows[i].id);

		T_CASE(rows[i].name);
		if (!p) {
			T_FAIL("no helper for helpers.def row %u", rows[i].id);
			continue;
		}
		T_EQ_STR(rows[i].name, p->name);
		T_EQ_INT(rows[i].id, p->id);
		T_EQ_INT(rows[i].gpl_only, p->gpl_only);
		T_EQ_INT(rows[i].ret, p->ret);
		T_ASSERT(!memcmp(rows[i].args, p->args, sizeof(p->args)));
		T_EQ_INT(0, p->host);
		T_ASSERT(p == brt_helper_builtin(rows[i].id));
		T_ASSERT(rows[i].id < n && table[rows[i].id] != NULL);
	}
	T_CASE("every function has a helpers.def row");
	for (size_t id = 0; id < n; id++)
		if (table[id] && !in_def(id))
			T_FAIL("function for id %zu, which helpers.def does not list", id);
	T_CASE("program types come from the implementing folder's rows");
	T_EQ_INT(BRT_FOR_ALL, brt_helper_get(BPF_FUNC_map_lookup_elem)->types);
	T_EQ_INT(BRT_FOR_SOCK | BRT_FOR_TC | BRT_FOR_CGSKB | BRT_FOR_SKSKB | BRT_FOR_LWT |
			 BRT_FOR_FLOW | BRT_FOR_REUSEPORT,
		 brt_helper_get(BPF_FUNC_skb_load_bytes)->types);
	T_EQ_INT(BRT_FOR_TRACE | BRT_FOR_SYSCALL, brt_helper_get(BPF_FUNC_probe_read)->types);
	T_EQ_INT(BRT_FOR_ALL | BRT_NEED_PERFMON, brt_helper_get(BPF_FUNC_trace_printk)->types);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (!(brt_helper_get(rows[i].id)->types & BRT_KSET_COMMON)) /* every type's bit */
			T_FAIL("%s: no program type may call it", rows[i].name);
	T_CASE("unknown ids");
	T_ASSERT(brt_helper_get(0) == NULL);
	T_ASSERT(brt_helper_get(BPF_FUNC_skb_get_xfrm_state) == NULL); /* none yet */
	T_ASSERT(brt_helper_get(UINT32_MAX) == NULL);

	T_CASE("a new vm's table");
	copy = brt_helper_table_new(&nr);
	/* the built-in helpers, then the kernel functions a verified kfunc call goes to */
	T_ASSERT(copy != NULL && nr == BRT_KFUNC_HELPER_BASE + BRT_KFUNC_COUNT &&
		 n <= BRT_KFUNC_HELPER_BASE);
	for (size_t id = 0; copy && id < n; id++)
		T_ASSERT(copy[id] == table[id]);
	for (size_t k = 0; copy && k < BRT_KFUNC_COUNT; k++)
		T_ASSERT(copy[BRT_KFUNC_HELPER_BASE + k] == brt_kfunc_fns[k]);
	T_CASE("kfunc ids are no helpers");
	T_ASSERT(brt_helper_get(BRT_KFUNC_HELPER_BASE) == NULL);
	free(copy);
}

static void test_host_growth(void)
{
	BPFRT_OPTS(bpfrt_helper_proto, p, .name = "grow", .fn = host_fn,
		   .ret = BPFRT_HELPER_RET_INTEGER, .args = { BPFRT_HELPER_ARG_ANYTHING });
	const uint32_t first = 3000, count = 600;
	const struct brt_helper_proto *got;
	brt_helper_fn *table;
	size_t nr;
	int fails = 0;

	T_CASE("more than 256 host helpers");
	for (uint32_t i = 0; i < count; i++) {
		p.id = first + i;
		fails += bpfrt_helper_register(NULL, &p) != 0;
	}
	T_EQ_INT(0, fails);
	got = brt_helper_get(first + count - 1);
	T_ASSERT(got && got->host && !strcmp(got->name, "grow"));
	T_ASSERT(got && got->types == 0); /* every program type */

	T_CASE("the highest id");
	p.id = 65535;
	T_EQ_INT(0, bpfrt_helper_register(NULL, &p));
	T_EQ_INT(65535, brt_helper_host_max_id());
	p.id = 65536;
	T_EQ_INT(-EINVAL, bpfrt_helper_register(NULL, &p));
	T_EQ_INT(EINVAL, errno);

	T_CASE("a new vm's table has them");
	table = brt_helper_table_new(&nr);
	T_ASSERT(table != NULL && nr == 65536);
	if (table) {
		T_ASSERT(table[first] == host_fn && table[first + count - 1] == host_fn);
		T_ASSERT(table[65535] == host_fn && table[first + count] == NULL);
		T_ASSERT(table[BPF_FUNC_map_lookup_elem] != NULL);
	}
	free(table);
}

/* A vm's own helper stays in that vm: the verifier and other vms never see it. */
static void test_vm_only(void)
{
	static const struct bpf_insn call[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = 4000 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	BPFRT_OPTS(bpfrt_helper_proto, p, .id = 4000, .fn = host_fn);
	struct bpfrt_vm *vm = NULL, *other = NULL;
	char err[128];
	uint64_t r0 = 0;

	T_CASE("a vm's own helper");
	T_EQ_INT(0, bpfrt_vm_load(call, 2, NULL, &vm, err, sizeof(err)));
	T_EQ_INT(0, bpfrt_vm_load(call, 2, NULL, &other, err, sizeof(err)));
	if (!vm || !other)
		goto out;
	T_EQ_INT(0, bpfrt_helper_register(vm, &p));
	T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_U64(1, r0);
	T_ASSERT(brt_helper_get(4000) == NULL);
	T_EQ_INT(-EFAULT, bpfrt_vm_run(other, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_STR("insn 0: call to unknown helper 4000", err);
out:
	bpfrt_vm_free(vm);
	bpfrt_vm_free(other);
}

int main(void)
{
	test_builtin();
	test_vm_only();
	test_host_growth();
	return t_done();
}
