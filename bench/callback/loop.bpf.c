/* loop.bpf.c - what one bpf_loop() callback costs: the same 1,000 additions through
 * bpf_loop (a callback per iteration) and as an open-coded bounded loop. */
#include "bpfrt_progs.h"

#define N 1000

struct acc {
	unsigned long sum;
};

static int add_i(unsigned int i, void *data)
{
	struct acc *a = data;

	a->sum += i;
	return 0;
}

SEC("socket")
int with_callback(struct __sk_buff *skb)
{
	struct acc a = { 0 };

	bpf_loop(N, add_i, &a, 0);
	return (int)a.sum;
}

SEC("socket")
int open_coded(struct __sk_buff *skb)
{
	volatile struct acc a = { 0 };

	for (unsigned int i = 0; i < N; i++)
		a.sum += i;
	return (int)a.sum;
}

char _license[] SEC("license") = "GPL";
