/* bad_many: eight socket filters where the sixth, prog_5, dereferences a map value without
 * the NULL check (the verifier refuses it): a failure in program k of n must leave no
 * program or map of the object behind (tests/object/test_load_many.c). */
#include "bpfrt_progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, long);
	__uint(max_entries, 8);
} hits SEC(".maps");

#define PROG(n)                                                  \
	SEC("socket")                                            \
	int prog_##n(struct __sk_buff *skb)                      \
	{                                                        \
		int k = n;                                       \
		long *v = bpf_map_lookup_elem(&hits, &k);        \
                                                                 \
		if (v)                                           \
			return (int)*v;                          \
		return n;                                        \
	}

PROG(0) PROG(1) PROG(2) PROG(3) PROG(4)

SEC("socket")
int prog_5(struct __sk_buff *skb)
{
	int k = 5;
	long *v = bpf_map_lookup_elem(&hits, &k);

	return (int)*v; /* no NULL check: refused */
}

PROG(6) PROG(7)

char _license[] SEC("license") = "GPL";
