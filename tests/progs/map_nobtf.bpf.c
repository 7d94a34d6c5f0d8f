/* map_nobtf: BTF-defined maps of types whose MAP_CREATE takes no key/value BTF (the kernel's
 * map_check_no_btf(): ENOTSUPP), declared with __type(key) / __type(value) as libbpf
 * users write them, beside a hash map that keeps its BTF.  A loader hands the first ones
 * to MAP_CREATE without BTF, as libbpf does; the XDP program only passes. */
#include "bpfrt_progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__type(key, unsigned int);
	__type(value, unsigned long long);
	__uint(max_entries, 2);
} socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__type(key, int);
	__type(value, int);
	__uint(max_entries, 2);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__type(key, unsigned int);
	__type(value, unsigned int);
	__uint(max_entries, 2);
} ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, unsigned int);
	__type(value, unsigned long long);
	__uint(max_entries, 2);
} counts SEC(".maps");

SEC("xdp")
int xdp_nobtf(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
