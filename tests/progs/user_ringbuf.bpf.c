/* user_ringbuf: bpf_user_ringbuf_drain() over records user space wrote into a user ring
 * buffer; the callback reads each record's first 8 bytes through its dynptr, adds them up,
 * counts short records, and stops at the value 99.  The totals go to `out` (test:
 * tests/maps/test_user_ringbuf_oracle.c, the same run on the kernel and on bpfrt). */
#include "bpfrt_progs.h"

struct out {
	long drained;   /* the helper's answer */
	long samples;   /* callback calls */
	long sum;       /* of the 8-byte values read */
	long short_rec; /* records too short to read 8 bytes from */
};

struct {
	__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
	__uint(max_entries, 4096);
} urb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct out);
} out SEC(".maps");

BPFRT_HELPER(long, bpf_user_ringbuf_drain,
	     (void *map, void *callback_fn, void *ctx, unsigned long long flags),
	     BPF_FUNC_user_ringbuf_drain);
BPFRT_HELPER(long, bpf_dynptr_read,
	     (void *dst, unsigned int len, const struct bpf_dynptr *src, unsigned int offset,
	      unsigned long long flags), BPF_FUNC_dynptr_read);

static long on_record(const struct bpf_dynptr *dp, void *data)
{
	struct out *o = data;
	long v = 0;

	o->samples++;
	if (bpf_dynptr_read(&v, sizeof(v), dp, 0, 0)) {
		o->short_rec++;
		return 0;
	}
	o->sum += v;
	return v == 99;
}

SEC("socket")
int drain(struct __sk_buff *skb)
{
	struct out o = { 0 };
	int k = 0;

	o.drained = bpf_user_ringbuf_drain(&urb, on_record, &o, 0);
	bpf_map_update_elem(&out, &k, &o, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
