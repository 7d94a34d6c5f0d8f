/* ringbuf_size: ring buffers whose max_entries is not a power-of-2 multiple of the page
 * size; the loader rounds them up as libbpf does (kernel selftests' test_ringbuf_multi
 * writes 1000).  Test: tests/object/test_object.c "ring buffer sizes". */
#include "bpfrt_progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1000);
} rb_small SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
	__uint(max_entries, 3 * 4096);
} urb_three SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 4096);
} rb_exact SEC(".maps");

BPFRT_HELPER(long, bpf_ringbuf_output,
	     (void *ringbuf, void *data, unsigned long long size, unsigned long long flags),
	     BPF_FUNC_ringbuf_output);

SEC("socket")
int out_small(void *ctx)
{
	long v = 1;

	(void)ctx;
	bpf_ringbuf_output(&rb_small, &v, sizeof(v), 0);
	bpf_ringbuf_output(&rb_exact, &v, sizeof(v), 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
