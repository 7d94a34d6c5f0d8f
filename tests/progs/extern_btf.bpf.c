/* extern_btf.bpf.c - both kinds of libbpf extern: a __kconfig variable and __ksym kernel
 * functions (one with unnamed parameters).  clang describes them in .BTF with EXTERN
 * linkage inside .kconfig / .ksyms sections of size 0, which BPF_BTF_LOAD refuses; the
 * loader must rewrite them as libbpf does so the object's BTF loads (in the kernel and in
 * bpfrt) and the program keeps its func_info (tests/object/test_load_oracle.c checks the
 * program's btf_id on both).
 */
#include "bpfrt_progs.h"

#define __ksym __attribute__((section(".ksyms")))
#define __kconfig __attribute__((section(".kconfig")))

extern unsigned int LINUX_KERNEL_VERSION __kconfig;
extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;
extern int bpf_dynptr_from_skb(struct __sk_buff *, unsigned long long, struct bpf_dynptr *) __ksym;

SEC("tc")
int externs(struct __sk_buff *skb)
{
	struct bpf_dynptr d;
	int ret;

	bpf_rcu_read_lock();
	bpf_rcu_read_unlock();
	ret = bpf_dynptr_from_skb(skb, 0, &d);
	return (LINUX_KERNEL_VERSION ? 7 : 0) + ret;
}

char LICENSE[] SEC("license") = "GPL";
