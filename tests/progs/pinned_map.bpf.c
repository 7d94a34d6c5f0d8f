/* pinned_map: a map pinned by name (LIBBPF_PIN_BY_NAME) next to an unpinned one; the
 * program returns the map lookup result (0 when empty, then what user space stored). */
#include "bpfrt_progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, unsigned int);
	__type(value, unsigned int);
	__uint(max_entries, 8);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} shared_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, unsigned int);
	__type(value, unsigned int);
	__uint(max_entries, 1);
} private_counts SEC(".maps");

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
