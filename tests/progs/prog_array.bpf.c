/* prog_array: a BTF-defined prog array whose slots are filled from the object
 * (`.values = { [1] = &tail_one }`); "entry" tail-calls slot 1 (returns 11), and falls
 * back to 99 when the slot is empty. */
#include "bpfrt_progs.h"

SEC("socket")
int tail_one(struct __sk_buff *skb)
{
	return 11;
}

SEC("socket")
int tail_two(struct __sk_buff *skb)
{
	return 22;
}

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__uint(key_size, sizeof(int));
	__array(values, int(void *));
} jump_table SEC(".maps") = {
	.values = {
		[1] = (void *)&tail_one,
		[3] = (void *)&tail_two,
	},
};

SEC("socket")
int entry(struct __sk_buff *skb)
{
	bpf_tail_call(skb, &jump_table, 1);
	return 99;
}

char _license[] SEC("license") = "GPL";
