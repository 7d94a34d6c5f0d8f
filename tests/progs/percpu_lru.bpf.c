/* percpu_lru: per-CPU array and LRU hash maps; the program counts into both and returns
 * the LRU entry's value after the update (3 on the first run, 6 on the second). */
#include "bpfrt_progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, unsigned int);
	__type(value, unsigned long long);
	__uint(max_entries, 1);
} per_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, unsigned int);
	__type(value, unsigned long long);
	__uint(max_entries, 32);
} recent SEC(".maps");

SEC("socket")
int count_both(struct __sk_buff *skb)
{
	unsigned int k = 5;
	unsigned long long init = 3, *v;
	unsigned int z = 0;
	unsigned long long *c = bpf_map_lookup_elem(&per_cpu, &z);

	if (c)
		*c += 1;
	v = bpf_map_lookup_elem(&recent, &k);
	if (v) {
		*v += 3;
		return (int)*v;
	}
	bpf_map_update_elem(&recent, &k, &init, BPF_NOEXIST);
	return 3;
}

char _license[] SEC("license") = "GPL";
