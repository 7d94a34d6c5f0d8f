/* spread_maps: four arrays created one after the other, of which the one program uses
 * the second and the fourth (tests/object/test_load_calls.c: the maps the program held
 * are released a sweep round after the others, and all four still go in one munmap). */
#include "bpfrt_progs.h"

#define ARRAY(name)                                      \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_ARRAY);        \
		__type(key, int);                        \
		__type(value, long);                     \
		__uint(max_entries, 4);                  \
	} name SEC(".maps")

ARRAY(first);
ARRAY(second);
ARRAY(third);
ARRAY(fourth);

SEC("socket")
int use_two(struct __sk_buff *skb)
{
	int k = 0;
	long *a = bpf_map_lookup_elem(&second, &k);
	long *b = bpf_map_lookup_elem(&fourth, &k);

	return (a ? 1 : 0) + (b ? 2 : 0);
}

char _license[] SEC("license") = "GPL";
