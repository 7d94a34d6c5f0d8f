/* multi_prog: several programs in one section (told apart by their symbols) sharing a
 * map and a static subprogram: prog_a returns 1, prog_b 2, prog_c 3 + helper(0) = 3. */
#include "bpfrt_progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, int);
	__uint(max_entries, 3);
} hits SEC(".maps");

static NOINLINE int bump(int idx)
{
	int *v = bpf_map_lookup_elem(&hits, &idx);

	if (v)
		(*v)++;
	return 0;
}

SEC("socket")
int prog_a(struct __sk_buff *skb)
{
	return 1 + bump(0);
}

SEC("socket")
int prog_b(struct __sk_buff *skb)
{
	return 2 + bump(1);
}

SEC("socket")
int prog_c(struct __sk_buff *skb)
{
	return 3 + bump(2);
}

char _license[] SEC("license") = "GPL";
