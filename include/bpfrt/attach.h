/* bpfrt/attach.h - packet filters: classic BPF (tcpdump's, SO_ATTACH_FILTER's) converted
 * to eBPF socket filters.  Included by <bpfrt.h>; not meant to be included on its own.
 */
#ifndef BPFRT_ATTACH_H
#define BPFRT_ATTACH_H

#include <stddef.h>

#include <linux/bpf.h>
#include <linux/filter.h>

#include "bpfrt/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Check len classic instructions with the kernel's classic rules and convert them into an
 * eBPF socket filter (BPF_PROG_TYPE_SOCKET_FILTER): r1 = struct __sk_buff * whose len is
 * the packet's length on the wire; LD_ABS/LD_IND read the packet; the program returns the
 * number of bytes to keep (0 = drop).  Ancillary loads (SKF_AD_*) read the matching
 * __sk_buff field; those without one (CPU, RANDOM, HATYPE, NLATTR, PAY_OFFSET) and loads
 * relative to SKF_NET_OFF are refused.  Unreachable classic instructions are dropped, so
 * the output also passes the kernel's verifier.
 * On success stores a malloc'ed array in *insns (free() it) and its length in *n_insns and
 * returns 0.  On failure writes "cbpf insn N: <reason>" into err (errlen bytes, may be 0)
 * and returns -EINVAL (bad or unsupported classic program) or -ENOMEM; errno is set too. */
BPFRT_API int bpfrt_cbpf_convert(const struct sock_filter *prog, size_t len,
				 struct bpf_insn **insns, size_t *n_insns, char *err,
				 size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
