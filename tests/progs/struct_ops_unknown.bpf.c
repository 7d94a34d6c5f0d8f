/* struct_ops_unknown: a struct_ops map of a struct no kernel registers.  Loading it stops
 * in the loader, before any bpf() call, at the kernel BTF lookup of libbpf's
 * bpf_map__init_kern_struct_ops(): "struct_ops init_kern: struct bpfrt_no_such_ops is not
 * found in kernel BTF", ESRCH as libbpf >= 1.4 answers (1.2 and 1.3 answered ENOENT);
 * tests/object/test_struct_ops_unknown.c. */
#include "bpfrt_progs.h"

struct bpfrt_no_such_ops {
	int (*op)(void);
};

SEC("struct_ops/op")
int unknown_op(unsigned long long *ctx)
{
	return 0;
}

SEC(".struct_ops")
struct bpfrt_no_such_ops no_such = {
	.op = (void *)unknown_op,
};

char _license[] SEC("license") = "GPL";
