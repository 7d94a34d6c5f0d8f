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
#include "bpfrt.h"
#include "vm/helper_proto.h"

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
struct brt_sock;
int brt_live_open(const char *iface, unsigned nr_blocks, struct brt_live **out, char *err,
		  size_t errlen);
int brt_live_linktype(const struct brt_live *l);
/* Keep only the packets of direction dir (enum bpfrt_pkt_dir): 0, or -EINVAL. */
int brt_live_set_direction(struct brt_live *l, unsigned dir);
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

/* A loaded program (bpf() program fd) run on packets with its type's context (pkt_prog.c):
 * socket filter, tc classifier/action or XDP; packets start at the Ethernet header.
 * One brt_pkt_prog per thread (it owns the context and packet buffer of its runs). */
struct brt_pkt_prog;
struct brt_pkt_result {
	uint32_t verdict;            /* r0 as the program returned it */
	enum bpfrt_pkt_action action;
	const uint8_t *data;         /* the packet after the run (tc/XDP may have written it) */
	uint32_t caplen;             /* bytes of it to keep (a socket filter's verdict cuts) */
	/* REDIRECT and TX: the interface to send the packet out of (XDP: a devmap entry's,
	 * XDP_TX the receiving one; tc: bpf_redirect()'s egress target); 0: none the runtime
	 * can deliver to */
	uint32_t redirect_ifindex;
	uint32_t redirect_cpu;     /* REDIRECT to a cpumap entry: its CPU + 1 (0: none) */
	/* the entry's BPF_XDP_CPUMAP program, or with redirect_ifindex a devmap entry's
	 * BPF_XDP_DEVMAP program (0: none) */
	uint32_t redirect_prog_id;
	uint64_t redirect_xsk;     /* REDIRECT to an xskmap entry: its socket's cookie, */
	uint32_t redirect_xsk_dev; /* and its interface at the update (vm.h) */
};
/* -EINVAL with a message for a program type that does not run on packets. */
int brt_pkt_prog_open(int prog_fd, struct brt_pkt_prog **out, char *err, size_t errlen);
uint32_t brt_pkt_prog_type(const struct brt_pkt_prog *p);
/* The program it runs (the reference stays the brt_pkt_prog's). */
struct brt_prog *brt_pkt_prog_obj(const struct brt_pkt_prog *p);
/* Run on one packet seen on interface ifindex (0: a file) with PACKET_* pkt_type.
 * Returns 0 with *res set, or the run's -errno (checked engine faults) with a message. */
int brt_pkt_prog_run(struct brt_pkt_prog *p, const struct brt_pkt *pkt, uint32_t ifindex,
		     uint32_t pkt_type, struct brt_pkt_result *res, char *err, size_t errlen);
void brt_pkt_prog_close(struct brt_pkt_prog *p);
/* The egress_ifindex an XDP program's runs see from now on (a devmap entry's program:
 * the entry's interface; 0 otherwise, as the kernel's receive path). */
void brt_pkt_prog_set_egress(struct brt_pkt_prog *p, uint32_t ifindex);
/* "XDP_PASS", "TC_ACT_SHOT", ... for a verdict of the type, or NULL (socket filters,
 * unknown codes). */
const char *brt_pkt_verdict_name(uint32_t type, uint32_t verdict);

/* The run's packet (struct brt_run_pkt, vm/vm.h) when r1 is its context, else NULL: what
 * the packet helpers work on (skb_helpers.c). */
struct bpfrt_run_ctx;
struct brt_run_pkt;
struct brt_run_pkt *brt_pkt_of(struct bpfrt_run_ctx *ctx, uint64_t r1);
/* After a helper moved the packet's bounds or wrote it: the context's data fields, the
 * run's LD_ABS packet and the checked engine's regions follow. */
void brt_pkt_moved(struct bpfrt_run_ctx *ctx, struct brt_run_pkt *p);

/* Helper flags newer than the 6.1 uapi header bpfrt builds against (Linux 6.18's values). */
#define BRT_F_ADJ_ROOM_DECAP_L3_IPV4 (1ULL << 7)
#define BRT_F_ADJ_ROOM_DECAP_L3_IPV6 (1ULL << 8)
#define BRT_F_NO_TUNNEL_KEY (1ULL << 4) /* bpf_skb_set_tunnel_key() */

/* The helpers this folder implements, for the registry (src/helpers/registry.c): one
 * X(id, function, program types) each; id names its row of src/vm/helpers.def, types
 * are BRT_FOR_* helper sets (vm/helper_proto.h), the kernel's *_func_proto sets.  The
 * packet helpers (skb_helpers.c, skb_meta.c, csum_helpers.c, xdp_helpers.c) are the
 * kernel's helpers of the same name, with its checks and errors (comments at each). */
#define BRT_ATTACH_HELPERS(X)                                                            \
	X(BPF_FUNC_skb_load_bytes, brt_helper_skb_load_bytes,                            \
	  BRT_FOR_SOCK | BRT_FOR_TC | BRT_FOR_CGSKB | BRT_FOR_SKSKB | BRT_FOR_LWT |     \
	  BRT_FOR_FLOW | BRT_FOR_REUSEPORT)                                              \
	X(BPF_FUNC_skb_store_bytes, brt_helper_skb_store_bytes,                          \
	  BRT_FOR_TC | BRT_FOR_SKSKB | BRT_FOR_LWT_XMIT)                                 \
	X(BPF_FUNC_skb_pull_data, brt_helper_skb_pull_data,                              \
	  BRT_FOR_TC | BRT_FOR_SKSKB | BRT_FOR_LWT)                                      \
	X(BPF_FUNC_skb_change_tail, brt_helper_skb_change_tail,                          \
	  BRT_FOR_TC | BRT_FOR_SKSKB | BRT_FOR_LWT_XMIT)                                 \
	X(BPF_FUNC_skb_change_type, brt_helper_skb_change_type, BRT_FOR_TC)              \
	X(BPF_FUNC_redirect, brt_helper_redirect,                                        \
	  BRT_FOR_TC | BRT_FOR_XDP | BRT_FOR_LWT_XMIT)                                   \
	X(BPF_FUNC_csum_diff, brt_helper_csum_diff,                                      \
	  BRT_FOR_TC | BRT_FOR_XDP | BRT_FOR_LWT)                                        \
	X(BPF_FUNC_l3_csum_replace, brt_helper_l3_csum_replace,                          \
	  BRT_FOR_TC | BRT_FOR_LWT_XMIT)                                                 \
	X(BPF_FUNC_l4_csum_replace, brt_helper_l4_csum_replace,                          \
	  BRT_FOR_TC | BRT_FOR_LWT_XMIT)                                                 \
	X(BPF_FUNC_xdp_adjust_head, brt_helper_xdp_adjust_head, BRT_FOR_XDP)             \
	X(BPF_FUNC_xdp_adjust_meta, brt_helper_xdp_adjust_meta, BRT_FOR_XDP)             \
	X(BPF_FUNC_xdp_adjust_tail, brt_helper_xdp_adjust_tail, BRT_FOR_XDP)             \
	X(BPF_FUNC_skb_load_bytes_relative, brt_helper_skb_load_bytes_relative,          \
	  BRT_FOR_SOCK | BRT_FOR_TC | BRT_FOR_CGSKB | BRT_FOR_REUSEPORT)                 \
	X(BPF_FUNC_clone_redirect, brt_helper_clone_redirect, BRT_FOR_TC)                \
	X(BPF_FUNC_redirect_neigh, brt_helper_redirect_neigh, BRT_FOR_TC)                \
	X(BPF_FUNC_redirect_peer, brt_helper_redirect_peer, BRT_FOR_TC)                  \
	/* the context's socket: also cgroup_sock, sock_addr, sock_ops and sk_skb        \
	 * (their own *_proto variants, all of the context) */                           \
	X(BPF_FUNC_get_socket_cookie, brt_helper_get_socket_cookie,                      \
	  BRT_FOR_SOCK | BRT_FOR_TC | BRT_FOR_CGSKB | BRT_FOR_REUSEPORT |                \
	  BRT_FOR_CGSOCK | BRT_FOR_SOCKADDR | BRT_FOR_SOCKOPS | BRT_FOR_SKSKB |            \
	  BRT_HSET(BPF_PROG_TYPE_TRACING))                                               \
	/* every type with a socket at hand: sk_filter's set (so cg_skb's), tc's, and the     \
	 * cgroup_sock, sock_addr, sock_ops, sk_msg and cgroup_sockopt variants (of their     \
	 * own context) */                                                                 \
	X(BPF_FUNC_get_netns_cookie, brt_helper_get_netns_cookie,                        \
	  BRT_FOR_SOCK | BRT_FOR_TC | BRT_FOR_CGSKB | BRT_FOR_CGSOCK | BRT_FOR_SOCKADDR |   \
	  BRT_FOR_SOCKOPS | BRT_FOR_SKMSG | BRT_FOR_SOCKOPT)                             \
	X(BPF_FUNC_get_socket_uid, brt_helper_get_socket_uid,                            \
	  BRT_FOR_SOCK | BRT_FOR_TC | BRT_FOR_CGSKB)                                     \
	X(BPF_FUNC_get_hash_recalc, brt_helper_get_hash_recalc, BRT_FOR_TC | BRT_FOR_LWT) \
	X(BPF_FUNC_skb_vlan_push, brt_helper_skb_vlan_push, BRT_FOR_TC)                  \
	X(BPF_FUNC_skb_vlan_pop, brt_helper_skb_vlan_pop, BRT_FOR_TC)                    \
	X(BPF_FUNC_skb_change_head, brt_helper_skb_change_head, BRT_FOR_TC)              \
	X(BPF_FUNC_set_hash, brt_helper_set_hash, BRT_FOR_TC)                            \
	X(BPF_FUNC_skb_set_tstamp, brt_helper_skb_set_tstamp, BRT_FOR_TC)                \
	X(BPF_FUNC_set_hash_invalid, brt_helper_set_hash_invalid, BRT_FOR_TC)            \
	X(BPF_FUNC_xdp_get_buff_len, brt_helper_xdp_get_buff_len, BRT_FOR_XDP)           \
	X(BPF_FUNC_xdp_load_bytes, brt_helper_xdp_load_bytes, BRT_FOR_XDP)               \
	X(BPF_FUNC_xdp_store_bytes, brt_helper_xdp_store_bytes, BRT_FOR_XDP)             \
	X(BPF_FUNC_skb_ecn_set_ce, brt_helper_skb_ecn_set_ce, BRT_FOR_TC | BRT_FOR_CGSKB)  \
	X(BPF_FUNC_skb_adjust_room, brt_helper_skb_adjust_room, BRT_FOR_TC)              \
	X(BPF_FUNC_skb_change_proto, brt_helper_skb_change_proto, BRT_FOR_TC)            \
	X(BPF_FUNC_skb_get_tunnel_key, brt_helper_skb_get_tunnel_key,                    \
	  BRT_FOR_TC | BRT_FOR_LWT_XMIT)                                                 \
	X(BPF_FUNC_skb_set_tunnel_key, brt_helper_skb_set_tunnel_key,                    \
	  BRT_FOR_TC | BRT_FOR_LWT_XMIT)                                                 \
	X(BPF_FUNC_skb_get_tunnel_opt, brt_helper_skb_get_tunnel_opt,                    \
	  BRT_FOR_TC | BRT_FOR_LWT_XMIT)                                                 \
	X(BPF_FUNC_skb_set_tunnel_opt, brt_helper_skb_set_tunnel_opt,                    \
	  BRT_FOR_TC | BRT_FOR_LWT_XMIT)                                                 \
	X(BPF_FUNC_fib_lookup, brt_helper_fib_lookup, BRT_FOR_TC | BRT_FOR_XDP)

/* the kernel's sets: cg_skb, tc_cls_act, xdp, sk_skb and sock_addr look sockets up;
 * sk_lookup programs may only release (the socket they hold from a map) */
#define BRT_FOR_SK_LOOKUP_FNS                                                            \
	(BRT_FOR_CGSKB | BRT_FOR_TC | BRT_FOR_XDP | BRT_FOR_SKSKB | BRT_FOR_SOCKADDR)
/* sock_table.c: the host's TCP and UDP sockets of the caller's network namespace, found
 * by the kernel's own lookup through sock_diag.  The tuple of a lookup, from the packet's
 * point of view (the socket's remote end is the source): */
struct brt_sock_tuple {
	uint8_t family;     /* AF_INET (addresses in [0]) or AF_INET6 */
	uint8_t proto;      /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t sport;     /* network order */
	uint16_t dport;     /* host order (the socket's local port, skc_num) */
	uint32_t saddr[4];  /* network order */
	uint32_t daddr[4];
};
/* 1 and the socket into *out when one matches (full: a request socket gives its listener,
 * as sk_to_full_sk()), else 0.  nsid: -1 for the caller's network namespace, else the id
 * the caller's namespace gives another (netns_id).  dif: the device the packet came in
 * on (0: none).  A test
 * run (test_run set) passes *test_gen as 0 before its first lookup, which sets it: the
 * run's answers are kept for all its repetitions; other runs reuse an answer for a few
 * milliseconds. */
int brt_sock_table_lookup(const struct brt_sock_tuple *t, int32_t nsid, int dif, int full,
			  int test_run, uint64_t *test_gen, struct brt_sock *out);
/* the bpf_skc_to_* casts: one function each (sock_lookup.c) */
#define BRT_SKC_TO_STRUCTS(X)                                                            \
	X(tcp6_sock) X(tcp_sock) X(tcp_timewait_sock) X(tcp_request_sock) X(udp6_sock)    \
	X(unix_sock) X(mptcp_sock)
/* the socket a socket pointer of a program stands for (a sockmap's snapshot, or a
 * bpf_skc_to_* stand-in of one), NULL when none (sock_lookup.c) */
const struct brt_sock *brt_sock_of_ptr(uint64_t r, struct bpfrt_run_ctx *ctx);
/* bpf_cast_to_kern_ctx(r1): for the context of a packet program's run (XDP, skb), a
 * read-only stand-in of the kernel's struct xdp_buff or struct sk_buff (kern_ctx.c); r1
 * itself for any other. */
uint64_t brt_kern_ctx(uint64_t r1, struct bpfrt_run_ctx *ctx);
/* bpf_sk_base_func_proto()'s casts: every network type whose set falls back on it (not
 * cgroup_sock, sk_reuseport, netfilter or the cgroup device/sysctl/sockopt hooks), with
 * CAP_PERFMON; and tracing and syscall programs (tracing_prog_func_proto(), which
 * syscall_prog_func_proto() falls back on) */
#define BRT_FOR_SKC_TO                                                                   \
	(BRT_FOR_SOCK | BRT_FOR_TC | BRT_FOR_XDP | BRT_FOR_CGSKB | BRT_FOR_SOCKADDR |     \
	 BRT_FOR_SOCKOPS | BRT_FOR_SKSKB | BRT_FOR_SKMSG | BRT_FOR_LWT | BRT_FOR_FLOW |    \
	 BRT_FOR_SKLOOKUP | BRT_NEED_PERFMON | BRT_HSET(BPF_PROG_TYPE_TRACING) |          \
	 BRT_FOR_SYSCALL)
#define BRT_FOR_SYNCOOKIE (BRT_FOR_TC | BRT_FOR_XDP)
/* the sets with bpf_sk_storage_get/delete (cgroup_sock: get only, on its context) */
#define BRT_FOR_SK_STORAGE                                                               \
	(BRT_FOR_CGSKB | BRT_FOR_TC | BRT_FOR_SOCKOPS | BRT_FOR_SKMSG | BRT_FOR_SOCKADDR |  \
	 BRT_FOR_SOCKOPT)
/* The socket helpers: sock_lookup.c's socket lookups (the host's sockets, sock_table.c),
 * casts, cgroup ids (bpf_sk_*: a socket's cgroup, bpf_skb_*: the skb's socket's) and
 * bpf_sk_storage_get/delete of a socket a program holds; syncookie.c's SYN cookies (a
 * key of bpfrt's own: the kernel's secret is its own). */
#define BRT_ATTACH_SOCK_HELPERS(X)                                                       \
	X(BPF_FUNC_sk_lookup_tcp, brt_helper_sk_lookup_tcp, BRT_FOR_SK_LOOKUP_FNS)       \
	X(BPF_FUNC_sk_lookup_udp, brt_helper_sk_lookup_udp, BRT_FOR_SK_LOOKUP_FNS)       \
	X(BPF_FUNC_skc_lookup_tcp, brt_helper_skc_lookup_tcp, BRT_FOR_SK_LOOKUP_FNS)     \
	X(BPF_FUNC_sk_release, brt_helper_sk_release,                                    \
	  BRT_FOR_SK_LOOKUP_FNS | BRT_FOR_SKLOOKUP)                                      \
	X(BPF_FUNC_sk_fullsock, brt_helper_sk_fullsock, BRT_FOR_CGSKB | BRT_FOR_TC)      \
	X(BPF_FUNC_tcp_sock, brt_helper_tcp_sock, BRT_FOR_CGSKB | BRT_FOR_TC | BRT_FOR_SOCKOPS) \
	X(BPF_FUNC_get_listener_sock, brt_helper_get_listener_sock, BRT_FOR_CGSKB | BRT_FOR_TC) \
	X(BPF_FUNC_skc_to_tcp6_sock, brt_helper_skc_to_tcp6_sock, BRT_FOR_SKC_TO)        \
	X(BPF_FUNC_skc_to_tcp_sock, brt_helper_skc_to_tcp_sock, BRT_FOR_SKC_TO)          \
	X(BPF_FUNC_skc_to_tcp_timewait_sock, brt_helper_skc_to_tcp_timewait_sock,        \
	  BRT_FOR_SKC_TO)                                                                \
	X(BPF_FUNC_skc_to_tcp_request_sock, brt_helper_skc_to_tcp_request_sock,          \
	  BRT_FOR_SKC_TO)                                                                \
	X(BPF_FUNC_skc_to_udp6_sock, brt_helper_skc_to_udp6_sock, BRT_FOR_SKC_TO)        \
	X(BPF_FUNC_skc_to_unix_sock, brt_helper_skc_to_unix_sock, BRT_FOR_SKC_TO)        \
	X(BPF_FUNC_skc_to_mptcp_sock, brt_helper_skc_to_mptcp_sock, BRT_FOR_SKC_TO)      \
	X(BPF_FUNC_sk_cgroup_id, brt_helper_sk_cgroup_id, BRT_FOR_CGSKB)                 \
	X(BPF_FUNC_sk_ancestor_cgroup_id, brt_helper_sk_ancestor_cgroup_id, BRT_FOR_CGSKB) \
	X(BPF_FUNC_skb_cgroup_id, brt_helper_skb_cgroup_id, BRT_FOR_CGSKB | BRT_FOR_TC)  \
	X(BPF_FUNC_skb_ancestor_cgroup_id, brt_helper_skb_ancestor_cgroup_id,            \
	  BRT_FOR_CGSKB | BRT_FOR_TC)                                                    \
	X(BPF_FUNC_tcp_check_syncookie, brt_helper_tcp_check_syncookie, BRT_FOR_SYNCOOKIE) \
	X(BPF_FUNC_tcp_gen_syncookie, brt_helper_tcp_gen_syncookie, BRT_FOR_SYNCOOKIE)   \
	X(BPF_FUNC_tcp_raw_gen_syncookie_ipv4, brt_helper_tcp_raw_gen_syncookie_ipv4,    \
	  BRT_FOR_SYNCOOKIE)                                                             \
	X(BPF_FUNC_tcp_raw_gen_syncookie_ipv6, brt_helper_tcp_raw_gen_syncookie_ipv6,    \
	  BRT_FOR_SYNCOOKIE)                                                             \
	X(BPF_FUNC_tcp_raw_check_syncookie_ipv4, brt_helper_tcp_raw_check_syncookie_ipv4, \
	  BRT_FOR_SYNCOOKIE)                                                             \
	X(BPF_FUNC_tcp_raw_check_syncookie_ipv6, brt_helper_tcp_raw_check_syncookie_ipv6, \
	  BRT_FOR_SYNCOOKIE)                                                             \
	X(BPF_FUNC_sk_storage_get, brt_helper_sk_storage_get,                            \
	  BRT_FOR_SK_STORAGE | BRT_FOR_CGSOCK | BRT_FOR_TCP_CA)                          \
	X(BPF_FUNC_sk_storage_delete, brt_helper_sk_storage_delete,                      \
	  BRT_FOR_SK_STORAGE | BRT_FOR_TCP_CA)

/* the helpers' declarations: the two lists are the one place that names them */
BRT_ATTACH_HELPERS(BRT_HELPER_DECLARE)
BRT_ATTACH_SOCK_HELPERS(BRT_HELPER_DECLARE)

#endif
