/* tc_elf_map: an object written for tc (iproute2's struct bpf_elf_map, 36 bytes per map):
 * a prog array with id 1 pinned PIN_GLOBAL_NS and filled by the "1/0" tail-call section;
 * an array of maps (id 3) whose inner map is map id 2, put at key 1 (inner_idx); a
 * classifier that counts in the inner map through the outer one and tail-calls key 0; a
 * section named "from-container" (Cilium's style), which tc loads as a classifier too.
 * "classifier" returns 7 when the tail call fails, the "1/0" target returns 42. */
#include "bpfrt_progs.h"

struct bpf_elf_map {
	__u32 type;
	__u32 size_key;
	__u32 size_value;
	__u32 max_elem;
	__u32 flags;
	__u32 id;
	__u32 pinning;
	__u32 inner_id;
	__u32 inner_idx;
};

#define PIN_GLOBAL_NS 2

struct bpf_elf_map SEC("maps") jmp_tc = {
	.type = BPF_MAP_TYPE_PROG_ARRAY,
	.size_key = 4,
	.size_value = 4,
	.max_elem = 2,
	.id = 1,
	.pinning = PIN_GLOBAL_NS,
	.inner_idx = -1,
};

struct bpf_elf_map SEC("maps") counts = {
	.type = BPF_MAP_TYPE_ARRAY,
	.size_key = 4,
	.size_value = 8,
	.max_elem = 4,
	.id = 2,
	.inner_idx = 1,
};

struct bpf_elf_map SEC("maps") outer = {
	.type = BPF_MAP_TYPE_ARRAY_OF_MAPS,
	.size_key = 4,
	.size_value = 0, /* tc makes it 4 (an fd) */
	.max_elem = 2,
	.id = 3,
	.inner_id = 2,
	.inner_idx = -1,
};

SEC("classifier")
int cls_entry(struct __sk_buff *skb)
{
	__u32 one = 1, zero = 0;
	void *inner = bpf_map_lookup_elem(&outer, &one);
	__u64 *c;

	if (inner) {
		c = bpf_map_lookup_elem(inner, &zero);
		if (c)
			*c += 1;
	}
	bpf_tail_call(skb, &jmp_tc, 0);
	return 7;
}

SEC("1/0")
int cls_tail(struct __sk_buff *skb)
{
	return 42;
}

SEC("from-container")
int from_container(struct __sk_buff *skb)
{
	return skb->len > 10 ? 1 : 0;
}

char __license[] SEC("license") = "GPL";
