/* samples_maps: maps in the kernel samples' layout (samples/bpf/bpf_load.h: struct
 * bpf_map_def with inner_map_idx and numa_node, 28 bytes), an array of maps with
 * value_size 0 whose inner map is map 0 of the section, a NUMA-placed hash, and program
 * sections named as libbpf 0.x matched them by prefix ("socket1", "xdp_prog").
 * "socket1" returns the inner map's counter after incrementing it (1 on a fresh load if
 * the outer map's slot 0 holds the inner map; 100 when empty). */
#include "bpfrt_progs.h"

struct bpf_map_def_samples {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
	unsigned int inner_map_idx;
	unsigned int numa_node;
};

struct bpf_map_def_samples SEC("maps") inner_arr = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = 4,
	.value_size = 8,
	.max_entries = 1,
};

struct bpf_map_def_samples SEC("maps") outer_arr = {
	.type = BPF_MAP_TYPE_ARRAY_OF_MAPS,
	.key_size = 4,
	.value_size = 0,
	.max_entries = 1,
	.inner_map_idx = 0,
};

struct bpf_map_def_samples SEC("maps") numa_hash = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = 4,
	.value_size = 4,
	.max_entries = 8,
	.map_flags = BPF_F_NUMA_NODE,
	.numa_node = 0,
};

SEC("socket1")
int count(struct __sk_buff *skb)
{
	__u32 zero = 0;
	void *inner = bpf_map_lookup_elem(&outer_arr, &zero);
	__u64 *c;

	if (!inner)
		return 100;
	c = bpf_map_lookup_elem(inner, &zero);
	if (!c)
		return 101;
	*c += 1;
	bpf_map_update_elem(&numa_hash, &zero, &zero, BPF_ANY);
	return (int)*c;
}

SEC("xdp_prog")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
