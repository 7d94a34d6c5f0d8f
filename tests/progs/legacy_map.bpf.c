/* legacy_map: a SEC("maps") struct bpf_map_def array map; the program bumps slot 0 and
 * returns the new count (1 on the first run). */
#include "bpfrt_progs.h"

struct bpf_map_def SEC("maps") counters = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = sizeof(int),
	.value_size = sizeof(long long),
	.max_entries = 4,
};

struct bpf_map_def SEC("maps") scratch = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = sizeof(int),
	.value_size = sizeof(int),
	.max_entries = 16,
};

SEC("socket")
int count(struct __sk_buff *skb)
{
	int key = 0, v = 7;
	long long *val = bpf_map_lookup_elem(&counters, &key);

	if (!val)
		return 0;
	__sync_fetch_and_add(val, 1);
	bpf_map_update_elem(&scratch, &key, &v, BPF_ANY);
	return (int)*val;
}

char _license[] SEC("license") = "GPL";
