/* dropmon.bpf.c - the seed's dropmon: on every skb:kfree_skb tracepoint record (a packet
 * the kernel dropped), count one drop for its (location, reason) in a hash map.  The
 * record layout is /sys/kernel/tracing/events/skb/kfree_skb/format of Linux 6.12 and
 * later (rx_sk before protocol); the user side checks it against the running kernel
 * before attaching.
 */
#include <linux/bpf.h>

#include "bpf_sample.h"

/* The kfree_skb record as the program sees it. */
struct kfree_skb_args {
	unsigned long long common;   /* common_type/flags/preempt_count/pid: not readable */
	void *skbaddr;               /* offset 8 */
	void *location;              /* offset 16: where the kernel freed it */
	void *rx_sk;                 /* offset 24 */
	unsigned short protocol;     /* offset 32 */
	unsigned int reason;         /* offset 36: enum skb_drop_reason */
};

struct drop_key {
	unsigned long long location;
	unsigned int reason;
	unsigned int pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct drop_key);
	__type(value, unsigned long long);
} drops SEC(".maps");

SEC("tracepoint/skb/kfree_skb")
int count_drops(struct kfree_skb_args *args)
{
	struct drop_key key = {
		.location = (unsigned long long)args->location,
		.reason = args->reason,
	};
	unsigned long long one = 1, *count;

	count = bpf_map_lookup_elem(&drops, &key);
	if (!count && !bpf_map_update_elem(&drops, &key, &one, BPF_NOEXIST))
		return 0;
	/* present, or inserted by another CPU meanwhile */
	if (!count)
		count = bpf_map_lookup_elem(&drops, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	return 0;
}

char _license[] SEC("license") = "GPL";
