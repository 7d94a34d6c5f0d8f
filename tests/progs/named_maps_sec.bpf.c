/* named_maps_sec: legacy map definitions each in a section of its own, "maps/<name>", as
 * cilium/ebpf and aya read them (Exein's Pulsar keeps its shared map so): 28 bytes each,
 * aya's struct bpf_map_def (map_flags, then id and pinning, both 0 here).  The program
 * numbers its runs in one and keeps each run's packet length in the other; it returns the
 * run's number (1 on the first run). */
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

struct bpf_map_def_aya SEC("maps/runs") runs = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = sizeof(__u32),
	.value_size = sizeof(__u64),
	.max_entries = 1,
};

/* the last run's packet length, by run number */
struct bpf_map_def_aya SEC("maps/lengths") lengths = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = sizeof(__u64),
	.value_size = sizeof(__u32),
	.max_entries = 8,
};

SEC("socket")
int count(struct __sk_buff *skb)
{
	__u32 zero = 0, len = skb->len;
	__u64 *n = bpf_map_lookup_elem(&runs, &zero);
	__u64 run;

	if (!n)
		return 0;
	run = __sync_fetch_and_add(n, 1) + 1;
	if (bpf_map_update_elem(&lengths, &run, &len, BPF_NOEXIST))
		return 0;
	return (int)run;
}

char _license[] SEC("license") = "GPL";
