/* named_maps_pin: an aya-style "maps/<name>" legacy definition (aya's struct bpf_map_def,
 * 28 bytes) with aya's pinning 1 (PinningType::ByName): pinned at <pin root>/shared_counts
 * and reused by the next object, as aya's loader does (Exein's Pulsar shares its interest
 * map so); next to it a map of pinning 0, not pinned.  The program returns the pinned
 * map's value at key 0 (0 while empty). */
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

struct bpf_map_def_aya SEC("maps/shared_counts") shared_counts = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = sizeof(unsigned int),
	.value_size = sizeof(unsigned int),
	.max_entries = 8,
	.pinning = 1,
};

struct bpf_map_def_aya SEC("maps/private_counts") private_counts = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = sizeof(unsigned int),
	.value_size = sizeof(unsigned int),
	.max_entries = 1,
};

SEC("socket")
int read_shared(struct __sk_buff *skb)
{
	unsigned int k = 0, *v = bpf_map_lookup_elem(&shared_counts, &k);
	unsigned int *w = bpf_map_lookup_elem(&private_counts, &k);

	if (w)
		*w += 1;
	return v ? *v : 0;
}

char _license[] SEC("license") = "GPL";
