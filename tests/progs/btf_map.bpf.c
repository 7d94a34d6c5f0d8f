/* btf_map: BTF-defined hash and array maps in SEC(".maps"); an XDP program stores 40 in the
 * hash map under key 2, reads it back, adds 2 and returns 42. */
#include "bpfrt_progs.h"

struct pair {
	unsigned int a;
	unsigned long long b;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, unsigned int);
	__type(value, struct pair);
	__uint(max_entries, 128);
} pairs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, 8);
	__uint(max_entries, 2);
} sizes SEC(".maps");

SEC("xdp")
int xdp_pairs(struct xdp_md *ctx)
{
	unsigned int key = 2;
	struct pair p = { .a = 40, .b = 1 }, *q;
	unsigned int k0 = 0;
	unsigned long long *s;

	bpf_map_update_elem(&pairs, &key, &p, BPF_ANY);
	q = bpf_map_lookup_elem(&pairs, &key);
	if (!q)
		return 0;
	s = bpf_map_lookup_elem(&sizes, &k0);
	if (s)
		*s = q->b;
	return q->a + 2;
}

char LICENSE[] SEC("license") = "GPL";
