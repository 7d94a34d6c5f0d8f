/* callback: bpf_loop() with a static callback, whose address the loader turns into lddw
 * src_reg=BPF_PSEUDO_FUNC; sums 0..9 = 45. */
#include "bpfrt_progs.h"

struct ctx_sum {
	long sum;
};

static int add_i(unsigned int i, void *data)
{
	struct ctx_sum *c = data;

	c->sum += i;
	return 0;
}

SEC("socket")
int loop_sum(struct __sk_buff *skb)
{
	struct ctx_sum c = { 0 };

	bpf_loop(10, add_i, &c, 0);
	return (int)c.sum;
}

char _license[] SEC("license") = "GPL";
