/* map_in_map: an array of maps whose inner definition comes from __array(values, ...),
 * with slot 0 pre-filled with the map `inner_a`; the program reads inner_a[0] through the
 * outer map and returns it + 5 (5 on a fresh map). */
#include "bpfrt_progs.h"

struct inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, int);
	__uint(max_entries, 1);
};

struct inner inner_a SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, int);
	__array(values, struct inner);
} outer SEC(".maps") = {
	.values = { [0] = &inner_a },
};

SEC("socket")
int through_outer(struct __sk_buff *skb)
{
	int k = 0, *v;
	void *m = bpf_map_lookup_elem(&outer, &k);

	if (!m)
		return 1;
	v = bpf_map_lookup_elem(m, &k);
	return v ? *v + 5 : 2;
}

char _license[] SEC("license") = "GPL";
