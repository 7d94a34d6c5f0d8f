/* hash_of_maps: a hash of maps with a hash inner definition, pre-filled with one inner
 * map under key 7; the program looks up inner[7] -> map, stores 9 there and returns
 * what it reads back + 1 = 10. */
#include "bpfrt_progs.h"

struct inner_hash {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, int);
	__type(value, int);
	__uint(max_entries, 4);
};

struct inner_hash slot7 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 8);
	__type(key, int);
	__array(values, struct inner_hash);
} by_id SEC(".maps") = {
	.values = { [7] = &slot7 },
};

SEC("socket")
int nested(struct __sk_buff *skb)
{
	int id = 7, k = 1, nine = 9, *v;
	void *m = bpf_map_lookup_elem(&by_id, &id);

	if (!m)
		return 1;
	bpf_map_update_elem(m, &k, &nine, BPF_ANY);
	v = bpf_map_lookup_elem(m, &k);
	return v ? *v + 1 : 2;
}

char _license[] SEC("license") = "GPL";
