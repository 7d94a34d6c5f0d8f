/* named_maps_sec: legacy map definitions each in a section of its own, "maps/<name>", as
 * cilium/ebpf and aya read them (Exein's Pulsar keeps its shared map so): 28 bytes each,
 * aya's struct bpf_map_def (map_flags, then id and pinning, both 0 here).  The program
 * bumps slot 0 of one and writes the other; it returns the new count (1 on the first run). */
#include "bpfrt_progs.h"

struct bpf_map_def_aya {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
	unsigned int id;
	unsigned int pinning;
};

struct bpf_map_def_aya SEC("maps/counters") counters = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = sizeof(int),
	.value_size = sizeof(long long),
	.max_entries = 4,
};

struct bpf_map_def_aya SEC("maps/scratch") scratch = {
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
