/* queue_stack: queue and stack maps (no key) via the push/pop/peek helpers; pushes 1, 2,
 * 3 into both and returns queue pop (1) * 10 + stack pop (3) = 13. */
#include "bpfrt_progs.h"

BPFRT_HELPER(long, bpf_map_push_elem, (void *map, const void *value, unsigned long long flags),
	     BPF_FUNC_map_push_elem);
BPFRT_HELPER(long, bpf_map_pop_elem, (void *map, void *value), BPF_FUNC_map_pop_elem);

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(value_size, 4);
	__uint(max_entries, 8);
} fifo SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(value_size, 4);
	__uint(max_entries, 8);
} lifo SEC(".maps");

SEC("socket")
int push_pop(struct __sk_buff *skb)
{
	int v1 = 1, v2 = 2, v3 = 3, v, q = 0, s = 0;

	bpf_map_push_elem(&fifo, &v1, 0);
	bpf_map_push_elem(&lifo, &v1, 0);
	bpf_map_push_elem(&fifo, &v2, 0);
	bpf_map_push_elem(&lifo, &v2, 0);
	bpf_map_push_elem(&fifo, &v3, 0);
	bpf_map_push_elem(&lifo, &v3, 0);
	bpf_map_pop_elem(&fifo, &q);
	bpf_map_pop_elem(&lifo, &s);
	/* leave the maps empty for the next run */
	bpf_map_pop_elem(&fifo, &v);
	bpf_map_pop_elem(&fifo, &v);
	bpf_map_pop_elem(&lifo, &v);
	bpf_map_pop_elem(&lifo, &v);
	return q * 10 + s;
}

char _license[] SEC("license") = "GPL";
