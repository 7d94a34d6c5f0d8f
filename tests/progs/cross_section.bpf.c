/* cross_section: a program in "tc" calls a global function defined in another program
 * section ("socket") - the callee is appended to the caller like any subprogram (libbpf
 * insists on .text; bpfrt links any executable section).  helper_in_socket(4) = 44;
 * "caller" returns 44 + 1 = 45, "helper_in_socket" run as a program returns 44 + 0. */
#include "bpfrt_progs.h"

SEC("socket")
NOINLINE int helper_in_socket(struct __sk_buff *skb)
{
	int x = 4;

	asm volatile("" : "+r"(x));
	return x * 11;
}

SEC("tc")
int caller(struct __sk_buff *skb)
{
	return helper_in_socket(skb) + 1;
}

char _license[] SEC("license") = "GPL";
