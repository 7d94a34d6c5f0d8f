/* bad_extern: an extern resolved by libbpf from the kernel config (.kconfig); bpfrt refuses
 * it at open with a message naming the symbol. */
#include "bpfrt_progs.h"

/* not __weak and no value bpfrt knows: refused, as libbpf refuses a config it cannot find */
extern int CONFIG_BPFRT_NOT_A_CONFIG __attribute__((section(".kconfig")));

SEC("socket")
int uses_kconfig(struct __sk_buff *skb)
{
	return CONFIG_BPFRT_NOT_A_CONFIG ? 1 : 0;
}

char _license[] SEC("license") = "GPL";
