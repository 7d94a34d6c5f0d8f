/* attach.h - the attach/ folder's interface: classic BPF (tcpdump's filters) converted to
 * eBPF socket-filter programs (cbpf.c), and running such programs over packets.
 * libpcap access lives behind pcap_io.h, a separate header because libpcap's
 * struct bpf_insn (classic) clashes with the kernel's (eBPF) used here.
 */
#ifndef BPFRT_SRC_ATTACH_ATTACH_H
#define BPFRT_SRC_ATTACH_ATTACH_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>
#include <linux/filter.h>

#include "attach/pcap_io.h"

/* Register roles in converted programs.  A and X live in callee-saved registers or r0 so
 * that LD_ABS/LD_IND (which clobber r1-r5 like a helper call) leave them alone; r6 holds
 * the context because LD_ABS/LD_IND read the packet through r6 implicitly. */
#define BRT_CBPF_REG_A 0   /* classic accumulator; also the return value */
#define BRT_CBPF_REG_X 7   /* classic index register */
#define BRT_CBPF_REG_TMP 8 /* saves A around LDX MSH */
#define BRT_CBPF_REG_CTX 6 /* struct __sk_buff *, copied from r1 by the prologue */

/* Scratch word M[k] lives at r10 + BRT_CBPF_MEM_OFF(k). */
#define BRT_CBPF_MEM_OFF(k) (-4 * (BPF_MEMWORDS - (int)(k)))

/* Check a classic program the way the kernel does before attaching it (sk_chk_filter):
 * 1..BPF_MAXINSNS instructions, known opcodes, jumps inside the program, scratch slots
 * 0-15, no division or modulo by constant 0, no shift by a constant >= 32, the last
 * instruction a return, and no scratch word read before it is written on every path.
 * On failure writes "cbpf insn N: <reason>" into err and returns -EINVAL. */
int brt_cbpf_check(const struct sock_filter *prog, size_t len, char *err, size_t errlen);

/* Convert a checked classic program into an eBPF socket filter (the kernel's
 * BPF_PROG_TYPE_SOCKET_FILTER contract): r1 = struct __sk_buff * whose len is the packet's
 * length on the wire, LD_ABS/LD_IND read the packet in network byte order and end the
 * program with 0 when out of bounds, r0 = bytes to keep (0 = drop).  The classic rules of
 * brt_cbpf_check() are applied first; ancillary loads (SKF_AD_*) map to __sk_buff fields,
 * and the ones without a field are refused.  *out is malloc'ed, owned by the caller.
 * Returns 0, -EINVAL (bad or unsupported program, message in err) or -ENOMEM. */
int brt_cbpf_convert(const struct sock_filter *prog, size_t len, struct bpf_insn **out,
		     size_t *n_out, char *err, size_t errlen);

/* Live packets from an interface (socket.c): an AF_PACKET socket with a TPACKET_V3 ring of
 * nr_blocks 1 MiB blocks (0 = 8), bound to iface.  Ethernet-framed interfaces only (DLT 1).
 * Returns 0, or -errno with "iface 'NAME': <what>: <reason>" in err (-ENODEV for an
 * unknown interface, -EPERM without CAP_NET_RAW, -EOPNOTSUPP for other framings). */
struct brt_live;
int brt_live_open(const char *iface, unsigned nr_blocks, struct brt_live **out, char *err,
		  size_t errlen);
int brt_live_linktype(const struct brt_live *l);
/* The next packet, waiting up to timeout_ms (-1: forever): 1 with *pkt set (its bytes stay
 * valid until the next call), 0 on timeout or signal, -errno on error. */
int brt_live_next(struct brt_live *l, struct brt_pkt *pkt, int timeout_ms, char *err,
		  size_t errlen);
/* Packets the kernel saw and dropped (ring full) since the last call. */
int brt_live_stats(struct brt_live *l, uint64_t *packets, uint64_t *drops);
void brt_live_close(struct brt_live *l);

/* Run a loaded packet filter with a caller-filled context: skb->len must hold the wire
 * length; the other fields are what ancillary loads (SKF_AD_PROTOCOL, ...) see.  Same
 * returns as bpfrt_pkt_filter_run(). */
struct bpfrt_pkt_filter;
int brt_pkt_filter_run_skb(struct bpfrt_pkt_filter *f, const uint8_t *pkt, uint32_t caplen,
			   struct __sk_buff *skb, uint32_t *verdict, char *err, size_t errlen);

#endif
