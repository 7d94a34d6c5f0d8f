/* bad_extern: an extern resolved by libbpf from the kernel config (.kconfig); bpfrt refuses
 * it at open with a message naming the symbol. */
#include "bpfrt_progs.h"

extern int LINUX_KERNEL_VERSION __attribute__((section(".kconfig"), weak));

SEC("socket")
int uses_kconfig(struct __sk_buff *skb)
{
	return LINUX_KERNEL_VERSION ? 1 : 0;
}

char _license[] SEC("license") = "GPL";
