/* loop_stop: bpf_loop()'s return value and early stop (the callback returns 1 at index 3),
 * its refusals at run time (flags != 0: -EINVAL; more than 1 << 23 loops: -E2BIG), a
 * callback that calls bpf_loop itself, and zero loops.  Each program encodes the results
 * in its return value, so the kernel and bpfrt must agree on every one. */
#include "bpfrt_progs.h"

struct acc {
	long sum;
	long calls;
};

static int stop_at_3(unsigned int i, void *data)
{
	struct acc *a = data;

	a->sum += i;
	a->calls++;
	return i == 3;
}

static int inner(unsigned int i, void *data)
{
	struct acc *a = data;

	a->sum += i + 1;
	return 0;
}

static int outer(unsigned int i, void *data)
{
	struct acc *a = data;

	a->calls++;
	bpf_loop(i + 1, inner, a, 0);
	return 0;
}

SEC("socket")
int loop_stop(struct __sk_buff *skb)
{
	struct acc a = { 0, 0 };
	long n = bpf_loop(100, stop_at_3, &a, 0);

	/* 4 calls, sum 0+1+2+3 = 6, bpf_loop returns 4: 4 * 100 + 6 * 10 + 4 = 464 */
	return (int)(n * 100 + a.sum * 10 + a.calls);
}

SEC("socket")
int loop_refused(struct __sk_buff *skb)
{
	struct acc a = { 0, 0 };
	long bad_flags = bpf_loop(3, stop_at_3, &a, 1);
	long too_many = bpf_loop((1 << 23) + 1, stop_at_3, &a, 0);
	long none = bpf_loop(0, stop_at_3, &a, 0);

	/* -EINVAL (22), -E2BIG (7), 0, and the callback never ran: 2207 */
	return (int)(-bad_flags * 100 - too_many + none * 1000 + a.calls * 10000);
}

SEC("socket")
int loop_nested(struct __sk_buff *skb)
{
	struct acc a = { 0, 0 };

	/* outer runs 4 times; inner i + 1 times each: sum of 1..k over k = 1..4 = 20 */
	bpf_loop(4, outer, &a, 0);
	return (int)(a.sum * 10 + a.calls);
}

char _license[] SEC("license") = "GPL";
