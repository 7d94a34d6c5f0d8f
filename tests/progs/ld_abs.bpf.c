/* ld_abs: the legacy packet loads (BPF_LD | BPF_ABS / BPF_IND) that socket filters may use.
 * Offsets count from the network header (the test run pulls the Ethernet header), so for
 * the test frame (byte i = i from offset 24) this returns frame[14 + 20] + frame[14 + 13]
 * = 34 + 27 = 61. */
#include "bpfrt_progs.h"

unsigned long long load_byte(void *skb, unsigned long long off) asm("llvm.bpf.load.byte");

SEC("socket")
int abs_ind(struct __sk_buff *skb)
{
	unsigned long long a = load_byte(skb, 20);
	unsigned long long idx = skb->len & 1; /* 0 for the 64-byte test frame */

	return (int)(a + load_byte(skb, 13 + idx));
}

char _license[] SEC("license") = "GPL";
