/* map_extra: BTF-defined maps with a map_extra field (BPF_MAP_CREATE's map_extra: a bloom
 * filter's number of hash functions), as __uint(map_extra, 3) and as libbpf 1.4's
 * __ulong(map_extra, 5), a member whose type is an enum of that one value (written out
 * here: the system's bpf_helpers.h may predate __ulong).  An XDP program pushes 7 into
 * each and returns whether both now hold it (2 bits: 3). */
#include "bpfrt_progs.h"

BPFRT_HELPER(long, bpf_map_push_elem, (void *map, const void *value, unsigned long long flags),
	     BPF_FUNC_map_push_elem);
BPFRT_HELPER(long, bpf_map_peek_elem, (void *map, void *value), BPF_FUNC_map_peek_elem);

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(value_size, 4);
	__uint(max_entries, 64);
	__uint(map_extra, 3);
} hashes3 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(value_size, 4);
	__uint(max_entries, 64);
	enum { map_extra_five = 5 } map_extra;
} hashes5 SEC(".maps");

SEC("xdp")
int xdp_bloom(struct xdp_md *ctx)
{
	unsigned int v = 7;
	int r = 0;

	bpf_map_push_elem(&hashes3, &v, 0);
	bpf_map_push_elem(&hashes5, &v, 0);
	if (!bpf_map_peek_elem(&hashes3, &v))
		r |= 1;
	if (!bpf_map_peek_elem(&hashes5, &v))
		r |= 2;
	return r;
}

char LICENSE[] SEC("license") = "GPL";
