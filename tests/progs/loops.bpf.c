/* loops: a bounded loop the compiler keeps (not unrolled) over a stack array, and
 * atomics on a map value: sum of i*i for i < 20 = 2470. */
#include "bpfrt_progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, long long);
	__uint(max_entries, 1);
} total SEC(".maps");

SEC("tc")
int squares(struct __sk_buff *skb)
{
	int k = 0, sum = 0;
	long long *t;

#pragma clang loop unroll(disable)
	for (int i = 0; i < 20; i++)
		sum += i * i;
	t = bpf_map_lookup_elem(&total, &k);
	if (t)
		__sync_fetch_and_add(t, sum);
	return sum;
}

char _license[] SEC("license") = "GPL";
