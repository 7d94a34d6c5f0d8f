/* test_prog_types.c - the program-type table (isa/prog_types.def): one row per type of
 * linux/bpf.h at its own index, bpftool's names, consistent columns. */
#include <string.h>

#include "harness.h"
#include "isa/isa.h"

int main(void)
{
	T_CASE("rows");
	for (uint32_t t = 0; t < BRT_PROG_TYPE_COUNT; t++) {
		const struct brt_prog_type *pt = brt_prog_type(t);

		T_EQ_INT(t, pt->type);
		T_ASSERT(pt->name && *pt->name && strcmp(pt->name, "unknown"));
		/* a loadable type has a context and a helper set of a loadable type */
		if (pt->flags & BRT_PT_LOAD) {
			T_ASSERT(pt->ctx != BRT_CTX_NONE && pt->ctx_size > 0);
			T_ASSERT(brt_prog_type_has(pt->helpers, BRT_PT_LOAD));
		}
		if (pt->ret_checked)
			T_ASSERT(pt->ret_lo <= pt->ret_hi);
	}
	T_CASE("names");
	T_EQ_STR("socket_filter", brt_prog_type_name(BPF_PROG_TYPE_SOCKET_FILTER));
	T_EQ_STR("sched_cls", brt_prog_type_name(BPF_PROG_TYPE_SCHED_CLS));
	T_EQ_STR("raw_tracepoint_writable",
		 brt_prog_type_name(BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE));
	T_EQ_STR("syscall", brt_prog_type_name(BPF_PROG_TYPE_SYSCALL));
	T_EQ_STR("netfilter", brt_prog_type_name(BRT_PROG_TYPE_NETFILTER));
	T_EQ_STR("unknown", brt_prog_type_name(BRT_PROG_TYPE_COUNT));
	T_EQ_STR("unknown", brt_prog_type_name(9999));
	T_ASSERT(brt_prog_type(BRT_PROG_TYPE_COUNT) == NULL);
	T_CASE("columns");
	T_EQ_INT(BPF_PROG_TYPE_SCHED_CLS, brt_prog_type(BPF_PROG_TYPE_SCHED_ACT)->helpers);
	T_EQ_INT(BRT_RUN_SKB_L2, brt_prog_type(BPF_PROG_TYPE_SCHED_CLS)->run);
	T_EQ_INT(BRT_RUN_NONE, brt_prog_type(BPF_PROG_TYPE_KPROBE)->run);
	T_EQ_INT(sizeof(struct __sk_buff), brt_prog_type(BPF_PROG_TYPE_SCHED_CLS)->ctx_size);
	T_EQ_INT(sizeof(struct xdp_md), brt_prog_type(BPF_PROG_TYPE_XDP)->ctx_size);
	T_EQ_INT(BRT_PT_UNPRIV, brt_prog_type_has(BPF_PROG_TYPE_CGROUP_SKB, BRT_PT_UNPRIV));
	T_EQ_INT(0, brt_prog_type_has(BPF_PROG_TYPE_XDP, BRT_PT_UNPRIV));
	T_EQ_INT(0, brt_prog_type_has(9999, BRT_PT_LOAD));
	return t_done();
}
