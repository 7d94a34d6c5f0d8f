/* bpfrt/attach.h - packet filters: classic BPF (tcpdump's, SO_ATTACH_FILTER's) converted
 * to eBPF socket filters, and socket-filter programs run over packets in this process.
 * Included by <bpfrt.h>; not meant to be included on its own.
 */
#ifndef BPFRT_ATTACH_H
#define BPFRT_ATTACH_H

#include <stddef.h>

#include <linux/bpf.h>
#include <linux/filter.h>

#include "bpfrt/common.h"
#include "bpfrt/vm.h"

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

/* A socket-filter program ready to run over packets. */
struct bpfrt_pkt_filter;

struct bpfrt_pkt_filter_opts {
	size_t sz;              /* sizeof(struct bpfrt_pkt_filter_opts); use BPFRT_OPTS() */
	/* DEFAULT: INTERP for programs converted from classic BPF (memory-safe by
	 * construction: they only touch their scratch words, the context and the packet
	 * through bounds-checked loads) and for eBPF the verifier accepts as a socket
	 * filter; CHECKED for eBPF it rejects. */
	enum bpfrt_engine engine;
	uint64_t insn_budget;   /* CHECKED: instructions one packet may cost; 0 = the vm's */
};
#define bpfrt_pkt_filter_opts__last insn_budget

/* Load an eBPF socket filter (the contract of bpfrt_cbpf_convert()).  The instructions are
 * copied and verified as a BPF_PROG_TYPE_SOCKET_FILTER loaded by root.  Returns 0 with the
 * filter in *out, or -errno with a message in err: -EACCES (the verifier rejects the
 * program and the engine asked for is INTERP or JIT: "verifier: <its first error>"),
 * -EINVAL (malformed program or options), -E2BIG, -EOPNOTSUPP (engine not built),
 * -ENOMEM. */
BPFRT_API int bpfrt_pkt_filter_load(const struct bpf_insn *insns, size_t n,
				    const struct bpfrt_pkt_filter_opts *opts,
				    struct bpfrt_pkt_filter **out, char *err, size_t errlen);

/* Convert a classic program (bpfrt_cbpf_convert()) and load it. */
BPFRT_API int bpfrt_pkt_filter_load_cbpf(const struct sock_filter *prog, size_t len,
					 const struct bpfrt_pkt_filter_opts *opts,
					 struct bpfrt_pkt_filter **out, char *err, size_t errlen);

/* Compile a tcpdump expression with libpcap for a link type (DLT_*, 1 = Ethernet) and
 * snap length, convert and load it.  -EOPNOTSUPP when bpfrt was built without libpcap;
 * -EINVAL with libpcap's message for a bad expression. */
BPFRT_API int bpfrt_pkt_filter_compile(const char *expr, int linktype, int snaplen,
				       const struct bpfrt_pkt_filter_opts *opts,
				       struct bpfrt_pkt_filter **out, char *err, size_t errlen);

/* Run the filter on one packet: caplen bytes at pkt were captured of wirelen on the wire
 * (the program's __sk_buff len).  Stores the program's verdict - bytes to keep, 0 = drop -
 * in *verdict and returns 0, or returns -EFAULT / -E2BIG with "insn N: <reason>" in err
 * when the CHECKED engine stops a faulty program.  Several threads may run one filter. */
BPFRT_API int bpfrt_pkt_filter_run(struct bpfrt_pkt_filter *f, const void *pkt, size_t caplen,
				   size_t wirelen, uint32_t *verdict, char *err, size_t errlen);

/* One packet for bpfrt_pkt_filter_run_batch(). */
struct bpfrt_pkt {
	const void *data;  /* caplen captured bytes */
	uint32_t caplen;
	uint32_t wirelen;  /* length on the wire: the program's __sk_buff len */
};

/* Run the filter on n packets, storing each verdict in verdicts[i]; cheaper per packet
 * than bpfrt_pkt_filter_run() for short filters.  Returns 0, or the first error of
 * bpfrt_pkt_filter_run() with "packet I: " before its message (verdicts of the packets
 * before it are stored). */
BPFRT_API int bpfrt_pkt_filter_run_batch(struct bpfrt_pkt_filter *f, const struct bpfrt_pkt *pkts,
					 size_t n, uint32_t *verdicts, char *err, size_t errlen);

/* The eBPF program the filter runs (owned by the filter). */
BPFRT_API const struct bpf_insn *bpfrt_pkt_filter_insns(const struct bpfrt_pkt_filter *f,
							size_t *n);

/* Free a filter (NULL is fine). */
BPFRT_API void bpfrt_pkt_filter_free(struct bpfrt_pkt_filter *f);

/* ---- programs attached to a live interface ----
 * What a kernel hook would do with a program's verdict, for the counters of an
 * attachment (socket filter: 0 drops; tc: TC_ACT_*; XDP: XDP_*). */
enum bpfrt_pkt_action {
	BPFRT_PKT_PASS,
	BPFRT_PKT_DROP,
	BPFRT_PKT_TX,       /* XDP_TX */
	BPFRT_PKT_REDIRECT, /* XDP_REDIRECT, TC_ACT_REDIRECT */
	BPFRT_PKT_ABORTED,  /* XDP_ABORTED, unknown codes, and runs that faulted */
	BPFRT_PKT_ACTION_MAX
};

/* "pass", "drop", "tx", "redirect", "aborted". */
BPFRT_API const char *bpfrt_pkt_action_name(enum bpfrt_pkt_action a);

/* Which packets of an interface an attachment sees (bpfrt_pkt_link_opts.direction). */
enum bpfrt_pkt_dir {
	BPFRT_PKT_DIR_ANY,     /* received and sent (on loopback each packet once) */
	BPFRT_PKT_DIR_INGRESS, /* received only: XDP, tc ingress */
	BPFRT_PKT_DIR_EGRESS,  /* sent only: tc egress */
};

struct bpfrt_pkt_link_opts {
	size_t sz;            /* sizeof(struct bpfrt_pkt_link_opts); use BPFRT_OPTS() */
	unsigned ring_blocks; /* 1 MiB blocks of the TPACKET_V3 ring; 0 = 8 */
	uint32_t direction;   /* enum bpfrt_pkt_dir (0: any) */
};
#define bpfrt_pkt_link_opts__last direction

struct bpfrt_pkt_link_stats {
	uint64_t packets;                        /* packets the program ran on */
	uint64_t bytes;                          /* their length on the wire */
	uint64_t actions[BPFRT_PKT_ACTION_MAX];  /* packets per action */
	uint64_t kernel_drops;                   /* lost in the ring before the program */
};

/* Attach the program prog_fd (from bpfrt_bpf() BPF_PROG_LOAD or bpfrt_object_load():
 * BPF_PROG_TYPE_SOCKET_FILTER, SCHED_CLS/SCHED_ACT or XDP) to the interface iface: an
 * AF_PACKET socket with a TPACKET_V3 ring (needs CAP_NET_RAW) is bound to it and a thread
 * runs the program on every packet from the Ethernet header on, as the seed's
 * SO_ATTACH_BPF socket filter does.  Packets sent after the call returns are seen.  The
 * link holds a reference on the program: closing prog_fd does not detach.
 * Returns a link fd (see bpfrt/trace.h, "link fds"): bpfrt_link_detach() detaches at once,
 * closing every copy of the fd detaches too; bpfrt_link_stats() counts packets as events,
 * kernel drops as lost, faulted runs as errors and non-zero verdicts; bpfrt_pkt_link_stats()
 * counts per action.  On failure returns -errno with "iface 'NAME': <reason>" or the
 * program's problem in err: -ENODEV (no such interface), -EPERM (no CAP_NET_RAW), -EINVAL
 * (a program type that does not run on packets, bad options), -EBADF, -ENOMEM. */
BPFRT_API int bpfrt_prog_attach_iface(int prog_fd, const char *iface,
				      const struct bpfrt_pkt_link_opts *opts, char *err,
				      size_t errlen);
/* Counters so far of the link behind link_fd (read while the link runs).  Returns 0,
 * -EBADF (closed fd) or -EINVAL (not a live interface link of this process). */
BPFRT_API int bpfrt_pkt_link_stats(int link_fd, struct bpfrt_pkt_link_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
