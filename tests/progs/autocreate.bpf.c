/* autocreate: maps a loader may leave out (libbpf's bpf_map__set_autocreate(), as Tracee's
 * loader does for map types the kernel lacks).  With `absent` not created: uses_kept loads
 * and returns kept[0] + 7; guarded's reference to absent is behind a frozen .rodata flag
 * (dead code, accepted); uses_absent reaches it and is refused, the log naming the map. */
#include "bpfrt_progs.h"

struct one_int {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, int);
	__uint(max_entries, 1);
};

struct one_int kept SEC(".maps");
struct one_int absent SEC(".maps");

const volatile int use_absent = 0;

SEC("socket")
int uses_kept(struct __sk_buff *skb)
{
	int k = 0, *v = bpf_map_lookup_elem(&kept, &k);

	return v ? *v + 7 : 1;
}

SEC("socket")
int guarded(struct __sk_buff *skb)
{
	int k = 0, *v;

	if (use_absent) {
		v = bpf_map_lookup_elem(&absent, &k);
		return v ? *v : 2;
	}
	v = bpf_map_lookup_elem(&kept, &k);
	return v ? 5 : 3;
}

SEC("socket")
int uses_absent(struct __sk_buff *skb)
{
	int k = 0, *v = bpf_map_lookup_elem(&absent, &k);

	return v ? 4 : 6;
}

char _license[] SEC("license") = "GPL";
