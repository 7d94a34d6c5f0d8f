/* bpf_sample.h - what the samples' eBPF C needs, for clang -O2 -target bpf and nothing but
 * <linux/bpf.h>: SEC(), BTF-defined map macros, helper declarations by id, and the
 * LD_ABS packet loads of socket filters (the seed's load_byte/load_half/load_word).
 */
#ifndef BPFRT_SAMPLES_BPF_SAMPLE_H
#define BPFRT_SAMPLES_BPF_SAMPLE_H

#include <linux/bpf.h>

#define SEC(name) __attribute__((section(name), used))

/* BTF-defined maps: each property is the type of a member, which the loader reads back
 * from .BTF (libbpf's convention). */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) __typeof__(val) *name

/* A call through a constant function pointer compiles to "call <id>". */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   unsigned long long flags) = (void *)BPF_FUNC_map_update_elem;
static unsigned long long (*bpf_ktime_get_ns)(void) = (void *)BPF_FUNC_ktime_get_ns;
static long (*bpf_skb_load_bytes)(const void *skb, unsigned int off, void *to,
				  unsigned int len) = (void *)BPF_FUNC_skb_load_bytes;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, unsigned long long size,
				    unsigned long long flags) = (void *)BPF_FUNC_ringbuf_reserve;
static void (*bpf_ringbuf_submit)(void *data, unsigned long long flags) =
	(void *)BPF_FUNC_ringbuf_submit;
static long (*bpf_perf_event_output)(void *ctx, void *map, unsigned long long flags, void *data,
				     unsigned long long size) = (void *)BPF_FUNC_perf_event_output;

/* LD_ABS: the packet byte/half/word at off in host order (socket filters). */
unsigned long long load_byte(void *skb, unsigned long long off) asm("llvm.bpf.load.byte");
unsigned long long load_half(void *skb, unsigned long long off) asm("llvm.bpf.load.half");
unsigned long long load_word(void *skb, unsigned long long off) asm("llvm.bpf.load.word");

#endif
