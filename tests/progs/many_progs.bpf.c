/* many_progs: 16 socket filters of one object sharing a map and a static subprogram, the
 * object loader's many-program case (tests/object/test_load_many.c): prog_N returns N and
 * counts its runs in hits[N]. */
#include "bpfrt_progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, long);
	__uint(max_entries, 16);
} hits SEC(".maps");

static NOINLINE int bump(int idx)
{
	long *v = bpf_map_lookup_elem(&hits, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

#define PROG(n)                                          \
	SEC("socket")                                    \
	int prog_##n(struct __sk_buff *skb)              \
	{                                                \
		return n + bump(n);                      \
	}

PROG(0) PROG(1) PROG(2) PROG(3) PROG(4) PROG(5) PROG(6) PROG(7)
PROG(8) PROG(9) PROG(10) PROG(11) PROG(12) PROG(13) PROG(14) PROG(15)

char _license[] SEC("license") = "GPL";
