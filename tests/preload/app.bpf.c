/* app.bpf.c - the BPF side of the libbpf application the preload tests run (app.c):
 * global data in .data, .bss and .rodata (a skeleton maps them), six map types, a ring
 * buffer, a perf event array (perf buffer), and an XDP program run with BPF_PROG_TEST_RUN.  Built against the system
 * libbpf's bpf_helpers.h, no vmlinux.h. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 drop_byte = 0;  /* .rodata: set by the loader before load */
__u64 runs = 0;                      /* .bss */
__u64 bytes_seen = 7;                /* .data */
__u32 last_len;                      /* .bss */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} by_first_byte SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} verdicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u32);
} lru SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 16);
	__type(value, __u32);
} lens SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

/* produced by app.c (user_ring_buffer__new()) for the freeze steps */
struct {
	__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
	__uint(max_entries, 4096);
} uevents SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf_events SEC(".maps");

struct event {
	__u32 len;
	__u32 first;
	__u64 run;
};

SEC("xdp")
int count_packets(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 zero = 0, first, len = (__u32)(end - data), verdict;
	__u64 one = 1, *v;
	struct event *e;

	if (data + 1 > end)
		return XDP_ABORTED;
	first = *(__u8 *)data;
	runs++;
	bytes_seen += len;
	last_len = len;
	v = bpf_map_lookup_elem(&by_first_byte, &first);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&by_first_byte, &first, &one, BPF_NOEXIST);
	verdict = first == drop_byte ? XDP_DROP : XDP_PASS;
	v = bpf_map_lookup_elem(&verdicts, &verdict);
	if (v)
		__sync_fetch_and_add(v, 1);
	v = bpf_map_lookup_elem(&pcpu, &zero);
	if (v)
		*v += len;
	bpf_map_update_elem(&lru, &len, &first, BPF_ANY);
	bpf_map_push_elem(&lens, &len, BPF_EXIST);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (e) {
		e->len = len;
		e->first = first;
		e->run = runs;
		bpf_ringbuf_submit(e, 0);
	}
	{
		struct event pe = { .len = len, .first = first, .run = runs };

		bpf_perf_event_output(ctx, &perf_events, BPF_F_CURRENT_CPU, &pe, sizeof(pe));
	}
	return verdict;
}
