/* struct_ops_two: two structs of operations in one .struct_ops section, as the kernel
 * selftests' bpf_dctcp.c has (dctcp_nouse, then dctcp).  clang writes the section's BTF
 * DATASEC with size 0 and every variable at offset 0: the loader takes each struct's
 * offset from its symbol (libbpf's btf_fixup_datasec()), so the second struct's function
 * pointers (relocations at byte 24 and on) belong to the second map.  The struct is the
 * kernel's tcp_congestion_ops, of which the loader matches the members named here
 * (tests/object/test_struct_ops_two.c); cong_avoid calls the kernel's Reno step, a kfunc
 * of bpf_tcp_ca_kfunc_set (bpf_dctcp's too). */
#include "bpfrt_progs.h"

/* a struct, not a forward declaration: libbpf 1.1 finds a FWD pointee incompatible with
 * the kernel's struct in the kfunc's prototype */
struct sock {
	int unused;
};

#define __ksym __attribute__((section(".ksyms")))

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

struct tcp_congestion_ops {
	__u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
	__u32 (*undo_cwnd)(struct sock *sk);
	char name[16];
};

SEC("struct_ops/ssthresh_one")
__u32 ssthresh_one(unsigned long long *ctx)
{
	return 2;
}

SEC("struct_ops/ssthresh_two")
__u32 ssthresh_two(unsigned long long *ctx)
{
	return 4;
}

SEC("struct_ops/cong_avoid")
void cong_avoid(unsigned long long *ctx)
{
	tcp_reno_cong_avoid((struct sock *)ctx[0], (__u32)ctx[1], (__u32)ctx[2]);
}

SEC("struct_ops/undo_cwnd")
__u32 undo_cwnd(unsigned long long *ctx)
{
	return 10;
}

SEC(".struct_ops")
struct tcp_congestion_ops ca_one = {
	.ssthresh = (void *)ssthresh_one,
	.cong_avoid = (void *)cong_avoid,
	.undo_cwnd = (void *)undo_cwnd,
	.name = "bpfrt_ca_one",
};

SEC(".struct_ops")
struct tcp_congestion_ops ca_two = {
	.ssthresh = (void *)ssthresh_two,
	.cong_avoid = (void *)cong_avoid,
	.undo_cwnd = (void *)undo_cwnd,
	.name = "bpfrt_ca_two",
};

char _license[] SEC("license") = "GPL";
