/* mixed_maps: legacy and BTF-defined maps and global data in one object: the loader's map
 * order is legacy, then .maps, then data sections.  Returns the sum of one value from each
 * (1 + 2 + 3 + 4 = 10) after storing them. */
#include "bpfrt_progs.h"

struct bpf_map_def SEC("maps") old_style = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = 4,
	.value_size = 4,
	.max_entries = 1,
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, int);
	__uint(max_entries, 1);
} new_style SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, 8);
	__uint(value_size, 4);
	__uint(max_entries, 2);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} sized SEC(".maps");

int from_data = 3;
int from_bss;

SEC("socket")
int sum_all(struct __sk_buff *skb)
{
	int k = 0, one = 1, two = 2, *a, *b, *c;
	long long k8 = 9;
	int four = 4;

	bpf_map_update_elem(&old_style, &k, &one, BPF_ANY);
	bpf_map_update_elem(&new_style, &k, &two, BPF_ANY);
	bpf_map_update_elem(&sized, &k8, &four, BPF_ANY);
	a = bpf_map_lookup_elem(&old_style, &k);
	b = bpf_map_lookup_elem(&new_style, &k);
	c = bpf_map_lookup_elem(&sized, &k8);
	if (!a || !b || !c)
		return -1;
	from_bss = *c;
	return *a + *b + from_data + from_bss;
}

char _license[] SEC("license") = "GPL";
