/* legacy_prog_array: a prog array defined the old way (SEC("maps"), struct bpf_map_def)
 * next to a legacy hash map; user space fills the array.  "dispatch" tail-calls slot 0
 * and returns 7 when it is empty; "target" returns 70. */
#include "bpfrt_progs.h"

struct bpf_map_def SEC("maps") progs = {
	.type = BPF_MAP_TYPE_PROG_ARRAY,
	.key_size = 4,
	.value_size = 4,
	.max_entries = 8,
};

struct bpf_map_def SEC("maps") seen = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = 4,
	.value_size = 4,
	.max_entries = 4,
	.map_flags = BPF_F_NO_PREALLOC,
};

SEC("socket")
int dispatch(struct __sk_buff *skb)
{
	int k = 1, v = 1;

	bpf_map_update_elem(&seen, &k, &v, BPF_ANY);
	bpf_tail_call(skb, &progs, 0);
	return 7;
}

SEC("socket")
int target(struct __sk_buff *skb)
{
	return 70;
}

char _license[] SEC("license") = "GPL";
