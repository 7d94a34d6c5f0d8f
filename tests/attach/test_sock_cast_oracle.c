/* test_sock_cast_oracle.c - the bpf_skc_to_* casts, the socket and skb cgroup ids, the
 * SYN cookie helpers and bpf_cgrp_storage_get/delete against the kernel
 * (src/attach/sock_lookup.c, src/attach/syncookie.c, the verifier's typed returns and
 * fixed-size memory arguments).  One script on the kernel's bpf() and on bpfrt_bpf()
 * (bpfrt: once per engine), a line per program, equal line by line:
 *   - which program types have each helper: a call with the context in r1 and zeros
 *     elsewhere in 16 types (verdict, errno, the log's error line);
 *   - verifier cases: casts of __sk_buff->sk with and without NULL checks, loads through
 *     the result (offsets, sizes, writes, non-GPL), casts of casts, references shared
 *     with a lookup, the cgroup storage's argument, the header arguments of the raw
 *     syncookie helpers (stack, packet ranges);
 *   - test runs: 11 real sockets in a sockmap (TCP listeners v4/v6, established, UDP,
 *     unix), each cast of each: NULL or the struct sock_common fields, type, protocol,
 *     mark and priority read through the cast (vmlinux BTF offsets); bpf_sk_cgroup_id
 *     and ancestors 0-3 of each socket (cgroup_skb), bpf_skb_cgroup_id and ancestors
 *     (tc, cgroup_skb); the syncookie helpers on SYN and ACK frames (v4, v6, MSS
 *     options, bad lengths and flags), comparing errors and the MSS of a generated
 *     cookie (its low 32 bits are keyed by the kernel's secret, bpfrt's by its own).
 * Root only (the kernel side); otherwise skipped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "harness.h"
#include "util/util.h"
#define TRANSCRIPT_SIZE (1 << 18)
#include "transcript.h"
#include "sock_set.h"
#include "maps/storage_oracle.h"
#include "verifier/cases/case.h"

#define MAX_INSNS 256
#define CGRP_STORAGE 32
#define F_CGRP_GET 210
#define F_CGRP_DELETE 211
#define SK_OFF ((int16_t)offsetof(struct __sk_buff, sk))

static uint32_t pflags; /* bpfrt's engine for this pass (0 on the kernel) */

/* ---- loading ---------------------------------------------------------------------------- */
/* load with LD_MAP imm n patched to map_fds[n]; the fd or -1 after saying the error */
static int load(sys_fn sys, struct transcript *t, const char *name, uint32_t type,
		uint32_t attach, const char *license, const struct bpf_insn *p, size_t n,
		const int *map_fds)
{
	static char log[1 << 16];
	struct bpf_insn insns[MAX_INSNS];
	union bpf_attr a;
	int fd;

	memcpy(insns, p, n * sizeof(insns[0]));
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = map_fds[insns[i].imm];
	prog_attr(&a, type, attach, insns, n);
	a.license = (uint64_t)(uintptr_t)license;
	a.prog_flags = pflags;
	fd = prog_load_log(sys, &a, log, sizeof(log), 1);
	t->steps++;
	if (fd < 0) {
		say_load_error(t, name, fd, log);
		if (getenv("SOCK_CAST_LOG"))
			fprintf(stderr, "%s: %s\n", name, log);
	}
	return fd;
}

/* ---- which types have which helper ------------------------------------------------------ */
static const struct {
	int id;
	const char *name;
} helpers[] = {
	{ BPF_FUNC_skc_to_tcp6_sock, "skc_to_tcp6_sock" },
	{ BPF_FUNC_skc_to_tcp_sock, "skc_to_tcp_sock" },
	{ BPF_FUNC_skc_to_tcp_timewait_sock, "skc_to_tcp_timewait_sock" },
	{ BPF_FUNC_skc_to_tcp_request_sock, "skc_to_tcp_request_sock" },
	{ BPF_FUNC_skc_to_udp6_sock, "skc_to_udp6_sock" },
	{ BPF_FUNC_skc_to_unix_sock, "skc_to_unix_sock" },
	{ BPF_FUNC_skc_to_mptcp_sock, "skc_to_mptcp_sock" },
	{ BPF_FUNC_sk_cgroup_id, "sk_cgroup_id" },
	{ BPF_FUNC_sk_ancestor_cgroup_id, "sk_ancestor_cgroup_id" },
	{ BPF_FUNC_skb_cgroup_id, "skb_cgroup_id" },
	{ BPF_FUNC_skb_ancestor_cgroup_id, "skb_ancestor_cgroup_id" },
	{ BPF_FUNC_tcp_check_syncookie, "tcp_check_syncookie" },
	{ BPF_FUNC_tcp_gen_syncookie, "tcp_gen_syncookie" },
	{ BPF_FUNC_tcp_raw_gen_syncookie_ipv4, "tcp_raw_gen_syncookie_ipv4" },
	{ BPF_FUNC_tcp_raw_gen_syncookie_ipv6, "tcp_raw_gen_syncookie_ipv6" },
	{ BPF_FUNC_tcp_raw_check_syncookie_ipv4, "tcp_raw_check_syncookie_ipv4" },
	{ BPF_FUNC_tcp_raw_check_syncookie_ipv6, "tcp_raw_check_syncookie_ipv6" },
	{ BPF_FUNC_get_current_cgroup_id, "get_current_cgroup_id" },
	{ BPF_FUNC_get_current_ancestor_cgroup_id, "get_current_ancestor_cgroup_id" },
	{ F_CGRP_GET, "cgrp_storage_get" },
	{ F_CGRP_DELETE, "cgrp_storage_delete" },
};

static const struct {
	uint32_t type, attach;
	const char *name;
} ptypes[] = {
	{ BPF_PROG_TYPE_SOCKET_FILTER, 0, "socket_filter" },
	{ BPF_PROG_TYPE_SCHED_CLS, 0, "tc" },
	{ BPF_PROG_TYPE_XDP, 0, "xdp" },
	{ BPF_PROG_TYPE_CGROUP_SKB, 0, "cgroup_skb" },
	{ BPF_PROG_TYPE_CGROUP_SOCK, 0, "cgroup_sock" },
	{ BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT, "sock_addr" },
	{ BPF_PROG_TYPE_SOCK_OPS, 0, "sock_ops" },
	{ BPF_PROG_TYPE_SK_SKB, 0, "sk_skb" },
	{ BPF_PROG_TYPE_SK_MSG, 0, "sk_msg" },
	{ BPF_PROG_TYPE_LWT_IN, 0, "lwt_in" },
	{ BPF_PROG_TYPE_LWT_XMIT, 0, "lwt_xmit" },
	{ BPF_PROG_TYPE_FLOW_DISSECTOR, 0, "flow_dissector" },
	{ BPF_PROG_TYPE_SK_REUSEPORT, 0, "sk_reuseport" },
	{ BPF_PROG_TYPE_SK_LOOKUP, BPF_SK_LOOKUP, "sk_lookup" },
	{ BPF_PROG_TYPE_KPROBE, 0, "kprobe" },
	{ BPF_PROG_TYPE_RAW_TRACEPOINT, 0, "raw_tp" },
	{ BPF_PROG_TYPE_CGROUP_SYSCTL, 0, "cgroup_sysctl" },
};

static void availability(sys_fn sys, struct transcript *t)
{
	for (size_t h = 0; h < sizeof(helpers) / sizeof(helpers[0]); h++)
		for (size_t p = 0; p < sizeof(ptypes) / sizeof(ptypes[0]); p++) {
			const struct bpf_insn insns[] = {
				MOV64_IMM(2, 0), MOV64_IMM(3, 0), MOV64_IMM(4, 0), MOV64_IMM(5, 0),
				CALL(helpers[h].id), MOV64_IMM(0, 1), EXIT(),
			};
			char name[96];
			int fd;

			snprintf(name, sizeof(name), "%s in %s", helpers[h].name, ptypes[p].name);
			fd = load(sys, t, name, ptypes[p].type, ptypes[p].attach, "GPL", insns,
				  sizeof(insns) / sizeof(insns[0]), NULL);
			if (fd >= 0) {
				say(t, "%s: ok\n", name);
				close(fd);
			}
		}
}

/* ---- verifier cases --------------------------------------------------------------------- */
struct ccase {
	const char *name;
	uint32_t type;
	const char *license;
	struct bpf_insn p[48];
	size_t n;
};
#define V(nm, ty, ...)                                                                    \
	{ nm, ty, "GPL", { __VA_ARGS__ },                                                   \
	  sizeof((struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn) }
#define VL(nm, ty, lic, ...)                                                              \
	{ nm, ty, lic, { __VA_ARGS__ },                                                     \
	  sizeof((struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn) }
#define TC BPF_PROG_TYPE_SCHED_CLS
#define CGSKB BPF_PROG_TYPE_CGROUP_SKB
#define XDP BPF_PROG_TYPE_XDP
/* r1 = skb->sk, exit 0 when NULL */
#define SK LDX(BPF_DW, 1, 1, SK_OFF), JIMM(BPF_JNE, 1, 0, 2), MOV64_IMM(0, 0), EXIT()
#define RET0 MOV64_IMM(0, 0), EXIT()
#define RET1 MOV64_IMM(0, 1), EXIT()
/* a NULL-checked cast of skb->sk into r0 (exit 1 when NULL) */
#define CAST(f) SK, CALL(f), JIMM(BPF_JNE, 0, 0, 2), RET1
/* the tuple of an IPv4 lookup, 12 bytes at fp-40 */
#define LOOKUP(f)                                                                         \
	MOV64_REG(6, 1), ST(BPF_DW, 10, -40, 0), ST(BPF_DW, 10, -32, 0), ST(BPF_DW, 10, -24, 0), \
	ST(BPF_DW, 10, -16, 0), ST(BPF_W, 10, -8, 0), MOV64_REG(2, 10),                       \
	ALU64_IMM(BPF_ADD, 2, -40), MOV64_IMM(3, 12), MOV64_IMM(4, 0), MOV64_IMM(5, 0),      \
	CALL(f), JIMM(BPF_JNE, 0, 0, 2), RET0, MOV64_REG(7, 0)

static const struct ccase vcases[] = {
	V("tc tcp_sock of skb->sk, read family", TC, CAST(BPF_FUNC_skc_to_tcp_sock),
	  LDX(BPF_H, 0, 0, 16), EXIT()),
	V("tc tcp6_sock, read state", TC, CAST(BPF_FUNC_skc_to_tcp6_sock), LDX(BPF_B, 0, 0, 18),
	  EXIT()),
	V("tc udp6_sock, read u64 at 0", TC, CAST(BPF_FUNC_skc_to_udp6_sock), LDX(BPF_DW, 0, 0, 0),
	  RET0),
	V("tc unix_sock, read at 1000", TC, CAST(BPF_FUNC_skc_to_unix_sock),
	  LDX(BPF_W, 0, 0, 1000), RET0),
	V("tc timewait, read at 240", TC, CAST(BPF_FUNC_skc_to_tcp_timewait_sock),
	  LDX(BPF_DW, 0, 0, 240), RET0),
	V("tc timewait, read past the end", TC, CAST(BPF_FUNC_skc_to_tcp_timewait_sock),
	  LDX(BPF_DW, 0, 0, 248), RET0),
	V("tc request_sock, read 4 at 0", TC, CAST(BPF_FUNC_skc_to_tcp_request_sock),
	  LDX(BPF_W, 0, 0, 0), RET0),
	V("tc mptcp of skb->sk", TC, CAST(BPF_FUNC_skc_to_mptcp_sock), LDX(BPF_W, 0, 0, 4), RET0),
	V("tc cast without NULL check of the result", TC, SK, CALL(BPF_FUNC_skc_to_tcp_sock),
	  LDX(BPF_W, 0, 0, 0), RET0),
	V("tc cast of a possibly-NULL skb->sk", TC, LDX(BPF_DW, 1, 1, SK_OFF),
	  CALL(BPF_FUNC_skc_to_tcp_sock), RET0),
	V("tc cast of NULL", TC, MOV64_IMM(1, 0), CALL(BPF_FUNC_skc_to_tcp_sock), RET0),
	V("tc cast of the ctx", TC, CALL(BPF_FUNC_skc_to_unix_sock), RET0),
	V("tc mptcp of the ctx", TC, CALL(BPF_FUNC_skc_to_mptcp_sock), RET0),
	V("tc write through a cast", TC, CAST(BPF_FUNC_skc_to_tcp_sock), ST(BPF_W, 0, 0, 1), RET0),
	V("tc negative offset", TC, CAST(BPF_FUNC_skc_to_tcp_sock), LDX(BPF_W, 0, 0, -8), RET0),
	V("tc variable offset", TC, CAST(BPF_FUNC_skc_to_tcp_sock), LDX(BPF_W, 2, 0, 0),
	  ALU64_IMM(BPF_AND, 2, 4), ALU64_REG(BPF_ADD, 0, 2), LDX(BPF_W, 0, 0, 0), RET0),
	V("tc read past tcp_sock", TC, CAST(BPF_FUNC_skc_to_tcp_sock), LDX(BPF_W, 0, 0, 2304),
	  RET0),
	VL("tc non-GPL read through a cast", TC, "Dual BSD/MIT", CAST(BPF_FUNC_skc_to_tcp_sock),
	   LDX(BPF_W, 0, 0, 0), RET0),
	VL("tc non-GPL cast only", TC, "Dual BSD/MIT", CAST(BPF_FUNC_skc_to_tcp_sock), RET0),
	V("tc cast of a cast", TC, CAST(BPF_FUNC_skc_to_tcp6_sock), MOV64_REG(1, 0),
	  CALL(BPF_FUNC_skc_to_tcp_sock), JIMM(BPF_JEQ, 0, 0, 1), LDX(BPF_H, 0, 0, 16), RET0),
	V("tc cast then pointer member", TC, CAST(BPF_FUNC_skc_to_tcp_sock),
	  LDX(BPF_DW, 0, 0, 40), RET0),
	V("tc release of an unreferenced cast", TC, CAST(BPF_FUNC_skc_to_tcp_sock),
	  MOV64_REG(1, 0), CALL(BPF_FUNC_sk_release), RET0),
	V("tc lookup, cast, release the cast", TC, LOOKUP(BPF_FUNC_sk_lookup_tcp),
	  MOV64_REG(1, 7), CALL(BPF_FUNC_skc_to_tcp_sock), JIMM(BPF_JEQ, 0, 0, 4),
	  MOV64_REG(1, 0), CALL(BPF_FUNC_sk_release), RET0, MOV64_REG(1, 7),
	  CALL(BPF_FUNC_sk_release), RET0),
	V("tc lookup, cast, leak", TC, LOOKUP(BPF_FUNC_skc_lookup_tcp), MOV64_REG(1, 7),
	  CALL(BPF_FUNC_skc_to_tcp_sock), RET0),
	V("tc lookup, release, use the cast", TC, LOOKUP(BPF_FUNC_sk_lookup_tcp),
	  MOV64_REG(1, 7), CALL(BPF_FUNC_skc_to_tcp_sock), MOV64_REG(8, 0), MOV64_REG(1, 7),
	  CALL(BPF_FUNC_sk_release), JIMM(BPF_JEQ, 8, 0, 1), LDX(BPF_W, 0, 8, 0), RET0),
	V("tc lookup, release the original, then the cast", TC, LOOKUP(BPF_FUNC_sk_lookup_tcp),
	  MOV64_REG(1, 7), CALL(BPF_FUNC_skc_to_tcp_sock), MOV64_REG(8, 0), MOV64_REG(1, 7),
	  CALL(BPF_FUNC_sk_release), JIMM(BPF_JEQ, 8, 0, 2), MOV64_REG(1, 8),
	  CALL(BPF_FUNC_sk_release), RET0),
	V("tc sk_fullsock of a cast", TC, CAST(BPF_FUNC_skc_to_tcp_sock), MOV64_REG(1, 0),
	  CALL(BPF_FUNC_sk_fullsock), RET0),
	V("cgroup_skb sk_cgroup_id of skb->sk", CGSKB, SK, CALL(BPF_FUNC_sk_cgroup_id), RET1),
	V("cgroup_skb sk_cgroup_id of a possibly-NULL sk", CGSKB, LDX(BPF_DW, 1, 1, SK_OFF),
	  CALL(BPF_FUNC_sk_cgroup_id), RET1),
	V("cgroup_skb sk_ancestor_cgroup_id of a cast", CGSKB, CAST(BPF_FUNC_skc_to_tcp_sock),
	  MOV64_REG(1, 0), MOV64_IMM(2, 1), CALL(BPF_FUNC_sk_ancestor_cgroup_id), RET1),
	V("cgroup_skb sk_cgroup_id of the ctx", CGSKB, CALL(BPF_FUNC_sk_cgroup_id), RET1),
	V("tc skb_ancestor_cgroup_id", TC, MOV64_IMM(2, 3), CALL(BPF_FUNC_skb_ancestor_cgroup_id),
	  RET0),
	V("tc check_syncookie, stack headers", TC, CAST(BPF_FUNC_skc_to_tcp_sock),
	  ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0),
	  ST(BPF_DW, 10, -32, 0), ST(BPF_DW, 10, -40, 0), MOV64_REG(1, 0), MOV64_REG(2, 10),
	  ALU64_IMM(BPF_ADD, 2, -40), MOV64_IMM(3, 20), MOV64_REG(4, 10),
	  ALU64_IMM(BPF_ADD, 4, -20), MOV64_IMM(5, 20), CALL(BPF_FUNC_tcp_check_syncookie), RET0),
	V("tc gen_syncookie, uninitialised header", TC, CAST(BPF_FUNC_skc_to_tcp_sock),
	  MOV64_REG(1, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -40), MOV64_IMM(3, 20),
	  MOV64_REG(4, 10), ALU64_IMM(BPF_ADD, 4, -20), MOV64_IMM(5, 20),
	  CALL(BPF_FUNC_tcp_gen_syncookie), RET0),
	V("tc gen_syncookie, size 0", TC, CAST(BPF_FUNC_skc_to_tcp_sock), ST(BPF_DW, 10, -8, 0),
	  MOV64_REG(1, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8), MOV64_IMM(3, 0),
	  MOV64_REG(4, 10), ALU64_IMM(BPF_ADD, 4, -8), MOV64_IMM(5, 8),
	  CALL(BPF_FUNC_tcp_gen_syncookie), RET0),
	V("xdp raw_gen v4, stack iph of 16 bytes", XDP, ST(BPF_DW, 10, -8, 0),
	  ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0), ST(BPF_DW, 10, -32, 0),
	  ST(BPF_DW, 10, -40, 0), MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -16), MOV64_REG(2, 10),
	  ALU64_IMM(BPF_ADD, 2, -40), MOV64_IMM(3, 20), CALL(BPF_FUNC_tcp_raw_gen_syncookie_ipv4),
	  RET0),
	V("xdp raw_gen v4, stack iph of 20 bytes", XDP, ST(BPF_DW, 10, -8, 0),
	  ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0), ST(BPF_DW, 10, -32, 0),
	  ST(BPF_DW, 10, -40, 0), MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -24), MOV64_REG(2, 10),
	  ALU64_IMM(BPF_ADD, 2, -40), MOV64_IMM(3, 16), CALL(BPF_FUNC_tcp_raw_gen_syncookie_ipv4),
	  RET0),
	V("xdp raw_gen v6, stack iph of 32 bytes", XDP, ST(BPF_DW, 10, -8, 0),
	  ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0), ST(BPF_DW, 10, -32, 0),
	  ST(BPF_DW, 10, -40, 0), MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -32), MOV64_REG(2, 10),
	  ALU64_IMM(BPF_ADD, 2, -40), MOV64_IMM(3, 20), CALL(BPF_FUNC_tcp_raw_gen_syncookie_ipv6),
	  RET0),
	V("xdp raw_check v4, packet without range check", XDP, LDX(BPF_W, 1, 1, 0),
	  MOV64_REG(2, 1), ALU64_IMM(BPF_ADD, 1, 14), ALU64_IMM(BPF_ADD, 2, 34),
	  CALL(BPF_FUNC_tcp_raw_check_syncookie_ipv4), RET0),
	V("xdp raw_check v4, packet checked", XDP, LDX(BPF_W, 2, 1, 0), LDX(BPF_W, 3, 1, 4),
	  MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 54), JREG(BPF_JGT, 4, 3, 6), MOV64_REG(1, 2),
	  ALU64_IMM(BPF_ADD, 1, 14), ALU64_IMM(BPF_ADD, 2, 34),
	  CALL(BPF_FUNC_tcp_raw_check_syncookie_ipv4), RET0, RET1),
	V("xdp raw_check v6, the ctx", XDP, MOV64_REG(2, 1),
	  CALL(BPF_FUNC_tcp_raw_check_syncookie_ipv6), RET0),
	V("xdp raw_gen v4 non-constant size", XDP, ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0),
	  ST(BPF_DW, 10, -24, 0), LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 8),
	  MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -24), MOV64_REG(2, 10),
	  ALU64_IMM(BPF_ADD, 2, -24), CALL(BPF_FUNC_tcp_raw_gen_syncookie_ipv4), RET0),
	VL("xdp raw_gen non-GPL", XDP, "Dual BSD/MIT", ST(BPF_DW, 10, -8, 0),
	   ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0), MOV64_REG(1, 10),
	   ALU64_IMM(BPF_ADD, 1, -24), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -24),
	   MOV64_IMM(3, 20), CALL(BPF_FUNC_tcp_raw_gen_syncookie_ipv4), RET0),
	V("raw_tp cgrp_storage_get NULL cgroup", BPF_PROG_TYPE_RAW_TRACEPOINT, LD_MAP(1, 0),
	  MOV64_IMM(2, 0), MOV64_IMM(3, 0), MOV64_IMM(4, 1), CALL(F_CGRP_GET), RET0),
	V("raw_tp cgrp_storage_get of a task", BPF_PROG_TYPE_RAW_TRACEPOINT,
	  CALL(BPF_FUNC_get_current_task_btf), MOV64_REG(2, 0), LD_MAP(1, 0), MOV64_IMM(3, 0),
	  MOV64_IMM(4, 0), CALL(F_CGRP_GET), RET0),
	V("raw_tp cgrp_storage_get of the ctx", BPF_PROG_TYPE_RAW_TRACEPOINT, MOV64_REG(2, 1),
	  LD_MAP(1, 0), MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(F_CGRP_GET), RET0),
	V("raw_tp cgrp_storage_get on an array", BPF_PROG_TYPE_RAW_TRACEPOINT, LD_MAP(1, 1),
	  MOV64_IMM(2, 0), MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(F_CGRP_GET), RET0),
	V("raw_tp task_storage_get on a cgrp storage", BPF_PROG_TYPE_RAW_TRACEPOINT,
	  LD_MAP(1, 0), MOV64_IMM(2, 0), MOV64_IMM(3, 0), MOV64_IMM(4, 0),
	  CALL(BPF_FUNC_task_storage_get), RET0),
	V("raw_tp cgrp_storage_get unchecked", BPF_PROG_TYPE_RAW_TRACEPOINT, LD_MAP(1, 0),
	  MOV64_IMM(2, 0), MOV64_IMM(3, 0), MOV64_IMM(4, 1), CALL(F_CGRP_GET),
	  LDX(BPF_DW, 0, 0, 0), RET0),
	V("tc cgrp_storage_delete NULL", TC, LD_MAP(1, 0), MOV64_IMM(2, 0), CALL(F_CGRP_DELETE),
	  RET0),
};

static void verifier_cases(sys_fn sys, struct transcript *t)
{
	int maps[2] = { storage_map(sys, CGRP_STORAGE),
			 create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0, 0) };

	say(t, "cgrp storage map: %s\n", maps[0] >= 0 ? "ok" : "failed");
	for (size_t i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		const struct ccase *c = &vcases[i];
		int fd = load(sys, t, c->name, c->type, 0, c->license, c->p, c->n, maps);

		if (fd >= 0) {
			say(t, "%s: ok\n", c->name);
			close(fd);
		}
	}
	for (int i = 0; i < 2; i++)
		if (maps[i] >= 0)
			close(maps[i]);
}

/* ---- sockets ---------------------------------------------------------------------------- */
static int socks[N_SOCKS];
static int peers[2];

static int sock_map(sys_fn sys)
{
	return sock_set_map(sys, socks, BPF_MAP_TYPE_SOCKMAP);
}

/* ---- kernel offsets of the fields a cast is read at -------------------------------------- */
enum { F_DADDR, F_RCV_SADDR, F_DPORT, F_NUM, F_FAMILY, F_STATE, F_BOUND_DEV_IF, F_V6_DADDR,
       F_V6_RCV_SADDR, F_COOKIE, F_TYPE, F_PROTOCOL, F_MARK, F_PRIORITY, N_FIELDS };
static const char *const fnames[N_FIELDS][2] = {
	{ "sock_common", "skc_daddr" }, { "sock_common", "skc_rcv_saddr" },
	{ "sock_common", "skc_dport" }, { "sock_common", "skc_num" },
	{ "sock_common", "skc_family" }, { "sock_common", "skc_state" },
	{ "sock_common", "skc_bound_dev_if" }, { "sock_common", "skc_v6_daddr" },
	{ "sock_common", "skc_v6_rcv_saddr" }, { "sock_common", "skc_cookie" },
	{ "sock", "sk_type" }, { "sock", "sk_protocol" }, { "sock", "sk_mark" },
	{ "sock", "sk_priority" },
};
static uint32_t foff[N_FIELDS], fsize[N_FIELDS];

static int member(const struct brt_btf *btf, uint32_t id, const char *name, uint32_t base,
		  uint32_t *off, uint32_t *size, int depth)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, id));
	const struct btf_member *m;

	if (!t || depth > 8 ||
	    (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT && BTF_INFO_KIND(t->info) != BTF_KIND_UNION))
		return 0;
	m = (const struct btf_member *)(t + 1);
	for (unsigned i = 0; i < BTF_INFO_VLEN(t->info); i++, m++) {
		uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
		const char *mn = brt_btf_str(btf, m->name_off);
		uint64_t sz;

		if (mn && !strcmp(mn, name) && !brt_btf_resolve_size(btf, m->type, &sz)) {
			*off = base + bits / 8;
			*size = (uint32_t)sz;
			return 1;
		}
		if ((!mn || !*mn) && member(btf, m->type, name, base + bits / 8, off, size, depth + 1))
			return 1;
	}
	return 0;
}

static int find_fields(void)
{
	const struct brt_btf *btf = brt_btf_vmlinux();

	for (int f = 0; btf && f < N_FIELDS; f++) {
		int id = brt_btf_find(btf, fnames[f][0], BTF_KIND_STRUCT);

		if (id <= 0 || !member(btf, (uint32_t)id, fnames[f][1], 0, &foff[f], &fsize[f], 0))
			return -1;
	}
	return btf ? 0 : -1;
}

/* ---- test runs -------------------------------------------------------------------------- */
#define REC_SIZE 256
static unsigned char ipv4_tcp[64] = { [12] = 0x08, [14] = 0x45, [23] = 6 };

static int size_code(uint32_t size)
{
	return size == 1 ? BPF_B : size == 2 ? BPF_H : size == 4 ? BPF_W : BPF_DW;
}

/* cast helper f of the socket: rec[0] = 1 and the fields after it, or rec[0] = 0 (NULL) */
static size_t build_cast(struct bpf_insn *p, int slot, int f)
{
	size_t n = sock_set_prologue(p, slot), jmp;
	int16_t at = 8;
	int last = f == BPF_FUNC_skc_to_tcp_timewait_sock || f == BPF_FUNC_skc_to_tcp_request_sock
			   ? F_COOKIE : N_FIELDS - 1;

	EMIT(MOV64_REG(1, 7), CALL(f));
	jmp = n;
	EMIT(JIMM(BPF_JEQ, 0, 0, 0), ST(BPF_DW, 9, 0, 1));
	for (int i = 0; i <= last; i++)
		for (uint32_t o = 0; o < fsize[i]; o += 8) {
			uint32_t sz = fsize[i] - o < 8 ? fsize[i] - o : 8;

			EMIT(LDX(size_code(sz), 1, 0, (int16_t)(foff[i] + o)),
			     STX(size_code(sz), 9, 1, at));
			at = (int16_t)(at + 8);
		}
	p[jmp].off = (int16_t)(n - jmp - 1);
	EMIT(MOV64_REG(1, 7), CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 0), EXIT());
	return n;
}

/* bpf_sk_cgroup_id and ancestors 0..3 and -1 (cgroup_skb): rec[8 * i] */
static size_t build_sk_cgroup(struct bpf_insn *p, int slot)
{
	size_t n = sock_set_prologue(p, slot);

	EMIT(MOV64_REG(1, 7), CALL(BPF_FUNC_sk_cgroup_id), STX(BPF_DW, 9, 0, 0));
	for (int l = 0; l < 5; l++)
		EMIT(MOV64_REG(1, 7), MOV64_IMM(2, l == 4 ? -1 : l),
		     CALL(BPF_FUNC_sk_ancestor_cgroup_id), STX(BPF_DW, 9, 0, (int16_t)(8 + 8 * l)));
	EMIT(MOV64_REG(1, 7), CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 1), EXIT());
	return n;
}

/* bpf_skb_cgroup_id and ancestors 0..5, -1, 1000 of the test run's skb */
static size_t build_skb_cgroup(struct bpf_insn *p, int ret)
{
	size_t n = 0;

	EMIT(MOV64_REG(6, 1), ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
	     LD_MAP(1, 1), CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), MOV64_REG(9, 0), MOV64_REG(1, 6),
	     CALL(BPF_FUNC_skb_cgroup_id), STX(BPF_DW, 9, 0, 0));
	for (int l = 0; l < 8; l++)
		EMIT(MOV64_REG(1, 6), MOV64_IMM(2, l == 6 ? -1 : l == 7 ? 1000 : l),
		     CALL(BPF_FUNC_skb_ancestor_cgroup_id), STX(BPF_DW, 9, 0, (int16_t)(8 + 8 * l)));
	EMIT(MOV64_IMM(0, ret), EXIT());
	return n;
}

/* bpf_get_current_cgroup_id and ancestors 0..5, -1, 1000 */
static size_t build_current_cgroup(struct bpf_insn *p, int ret)
{
	size_t n = 0;

	EMIT(ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
	     LD_MAP(1, 1), CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), MOV64_REG(9, 0),
	     CALL(BPF_FUNC_get_current_cgroup_id), STX(BPF_DW, 9, 0, 0));
	for (int l = 0; l < 8; l++)
		EMIT(MOV64_IMM(1, l == 6 ? -1 : l == 7 ? 1000 : l),
		     CALL(BPF_FUNC_get_current_ancestor_cgroup_id),
		     STX(BPF_DW, 9, 0, (int16_t)(8 + 8 * l)));
	EMIT(MOV64_IMM(0, ret), EXIT());
	return n;
}

static void reset(sys_fn sys, int rec)
{
	unsigned char v[REC_SIZE];
	uint32_t k = 0;

	memset(v, 0, sizeof(v));
	elem(sys, BPF_MAP_UPDATE_ELEM, rec, &k, v, 0);
}

static void say_rec(sys_fn sys, struct transcript *t, int rec, size_t len)
{
	unsigned char v[REC_SIZE];
	uint32_t k = 0;

	if (elem(sys, BPF_MAP_LOOKUP_ELEM, rec, &k, v, 0)) {
		say(t, " rec error");
		return;
	}
	say(t, " rec ");
	for (size_t i = 0; i < len; i++)
		say(t, "%02x", v[i]);
}

static void run(sys_fn sys, struct transcript *t, const char *name, uint32_t type,
		const struct bpf_insn *p, size_t n, const int *maps, const void *pkt, size_t len,
		size_t rec_len)
{
	union bpf_attr a;
	int fd = load(sys, t, name, type, 0, "GPL", p, n, maps), err;

	if (fd < 0)
		return;
	reset(sys, maps[1]);
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = (uint32_t)len;
	err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
	say(t, "%s: err %d retval %#x", name, err, a.test.retval);
	say_rec(sys, t, maps[1], rec_len);
	say(t, "\n");
	close(fd);
}

/* bpf_sk_storage_get/delete on socket `slot` (map 2: the storage), variant v:
 * 0 get F_CREATE from NULL, 1 get F_CREATE from a stack value, 2 get without F_CREATE,
 * 3 get flags 2, 4 delete, 5 get F_CREATE of the tcp_sock cast, 6 delete of the cast;
 * a value found gets its first u64 incremented; rec[0] = the answer (the value's first
 * u64, 0 for NULL, or delete's) */
static size_t build_sk_storage(struct bpf_insn *p, int slot, int v)
{
	size_t n = sock_set_prologue(p, slot);

	EMIT(ST(BPF_DW, 10, -32, 0x1000), ST(BPF_DW, 10, -24, 0x2000), MOV64_REG(2, 7));
	if (v >= 5)
		EMIT(MOV64_REG(1, 7), CALL(BPF_FUNC_skc_to_tcp_sock), JIMM(BPF_JNE, 0, 0, 5),
		     ST(BPF_DW, 9, 0, -7), MOV64_REG(1, 7), CALL(BPF_FUNC_sk_release),
		     MOV64_IMM(0, 0), EXIT(), MOV64_REG(2, 0));
	EMIT(LD_MAP(1, 2));
	if (v == 4 || v == 6) {
		EMIT(CALL(BPF_FUNC_sk_storage_delete), STX(BPF_DW, 9, 0, 0));
	} else {
		EMIT(MOV64_IMM(3, 0), MOV64_IMM(4, v == 2 ? 0 : v == 3 ? 2 : 1));
		if (v == 1)
			EMIT(MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -32));
		EMIT(CALL(BPF_FUNC_sk_storage_get), JIMM(BPF_JEQ, 0, 0, 4), LDX(BPF_DW, 1, 0, 0),
		     ALU64_IMM(BPF_ADD, 1, 1), STX(BPF_DW, 0, 1, 0), STX(BPF_DW, 9, 1, 0));
	}
	EMIT(MOV64_REG(1, 7), CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 0), EXIT());
	return n;
}

static void sk_storage_runs(sys_fn sys, struct transcript *t)
{
	static const char *const vn[] = { "get create", "get create from a value", "get",
					   "get flags 2", "delete", "get create of the cast",
					   "delete of the cast" };
	static const int order[] = { 2, 0, 0, 2, 3, 4, 4, 1, 2, 5, 6, 6 };
	int maps[3] = { sock_map(sys), create_map(sys, BPF_MAP_TYPE_ARRAY, 4, REC_SIZE, 1, 0, 0),
			storage_map(sys, BPF_MAP_TYPE_SK_STORAGE) };
	struct bpf_insn p[MAX_INSNS];
	char name[160];

	for (int s = 0; maps[0] >= 0 && maps[1] >= 0 && maps[2] >= 0 && s < N_SOCKS; s++)
		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			unsigned char v[16];
			int err;

			snprintf(name, sizeof(name), "sk storage %s of %s", vn[order[i]],
				 sock_set_name(s));
			run(sys, t, name, TC, p, build_sk_storage(p, s, order[i]), maps, ipv4_tcp,
			    sizeof(ipv4_tcp), 8);
			memset(v, 0, sizeof(v));
			err = elem(sys, BPF_MAP_LOOKUP_ELEM, maps[2], &socks[s], v, 0);
			say(t, "  by fd: %d %02x%02x %02x%02x\n", err, v[1], v[0], v[9], v[8]);
		}
	for (int i = 0; i < 3; i++)
		if (maps[i] >= 0)
			close(maps[i]);
}

static void socket_runs(sys_fn sys, struct transcript *t)
{
	int maps[2] = { sock_map(sys), create_map(sys, BPF_MAP_TYPE_ARRAY, 4, REC_SIZE, 1, 0, 0) };
	struct bpf_insn p[MAX_INSNS];
	char name[128];

	for (int s = 0; maps[0] >= 0 && maps[1] >= 0 && s < N_SOCKS; s++) {
		for (size_t h = 0; h < 7; h++) {
			size_t n = build_cast(p, s, helpers[h].id);

			snprintf(name, sizeof(name), "%s of %s", helpers[h].name, sock_set_name(s));
			run(sys, t, name, TC, p, n, maps, ipv4_tcp, sizeof(ipv4_tcp), 160);
		}
		snprintf(name, sizeof(name), "sk cgroup ids of %s", sock_set_name(s));
		run(sys, t, name, CGSKB, p, build_sk_cgroup(p, s), maps, ipv4_tcp + 14,
		    sizeof(ipv4_tcp) - 14, 48);
	}
	for (int k = 0; k < 2; k++) {
		size_t n = build_current_cgroup(p, k);
		union bpf_attr a;
		uint64_t args[2] = { 0, 0 };
		int fd = load(sys, t, k ? "current cgroup ids, tc" : "current cgroup ids, raw_tp",
			      k ? TC : BPF_PROG_TYPE_RAW_TRACEPOINT, 0, "GPL", p, n, maps), err;

		if (fd < 0)
			continue;
		reset(sys, maps[1]);
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)fd;
		if (k) {
			a.test.data_in = (uint64_t)(uintptr_t)ipv4_tcp;
			a.test.data_size_in = sizeof(ipv4_tcp);
		} else {
			a.test.ctx_in = (uint64_t)(uintptr_t)args;
			a.test.ctx_size_in = sizeof(args);
		}
		err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
		say(t, "current cgroup ids %d: err %d retval %#x", k, err, a.test.retval);
		say_rec(sys, t, maps[1], 72);
		say(t, "\n");
		close(fd);
	}
	run(sys, t, "skb cgroup ids, tc", TC, p, build_skb_cgroup(p, 0), maps, ipv4_tcp,
	    sizeof(ipv4_tcp), 72);
	run(sys, t, "skb cgroup ids, cgroup_skb", CGSKB, p, build_skb_cgroup(p, 1), maps,
	    ipv4_tcp + 14, sizeof(ipv4_tcp) - 14, 72);
	for (int i = 0; i < 2; i++)
		if (maps[i] >= 0)
			close(maps[i]);
}

/* ---- SYN cookies ------------------------------------------------------------------------ */
/* An Ethernet frame: IPv4 or IPv6, then a TCP header of th_len bytes (doff set to doff)
 * with flags and, when mss, an MSS option. */
static size_t frame(unsigned char *f, int v6, uint8_t flags, unsigned doff, uint16_t mss,
		    uint32_t seq, uint32_t ack)
{
	size_t ip = v6 ? 40 : 20, l = 14 + ip;
	unsigned char *th;

	memset(f, 0, 128);
	f[12] = v6 ? 0x86 : 0x08;
	f[13] = v6 ? 0xdd : 0x00;
	if (v6) {
		f[14] = 0x60;
		f[20] = 6;
		f[21] = 64;
		f[14 + 8 + 15] = 1;  /* ::1 -> ::2 */
		f[14 + 24 + 15] = 2;
	} else {
		f[14] = 0x45;
		f[22] = 64;
		f[23] = 6;
		memcpy(f + 26, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	}
	th = f + l;
	th[0] = 0x30, th[1] = 0x39; /* 12345 -> 80 */
	th[3] = 80;
	th[4] = (uint8_t)(seq >> 24), th[5] = (uint8_t)(seq >> 16), th[6] = (uint8_t)(seq >> 8);
	th[7] = (uint8_t)seq;
	th[8] = (uint8_t)(ack >> 24), th[9] = (uint8_t)(ack >> 16), th[10] = (uint8_t)(ack >> 8);
	th[11] = (uint8_t)ack;
	th[12] = (uint8_t)(doff << 4);
	th[13] = flags;
	if (mss) {
		th[20] = 2, th[21] = 4, th[22] = (uint8_t)(mss >> 8), th[23] = (uint8_t)mss;
		th[24] = 1, th[25] = 1, th[26] = 1, th[27] = 0; /* NOPs, EOL */
	}
	return l + 40; /* room for any doff up to 10 */
}

/* XDP: the raw helpers on the frame (IP header at 14, TCP header after it, th_len given):
 * rec[0] = gen's answer with its low 32 bits cleared when it is a cookie, rec[8] = check's */
static size_t build_raw(struct bpf_insn *p, int v6, int th_len)
{
	size_t n = 0;
	int ip = v6 ? 40 : 20;

	EMIT(MOV64_REG(6, 1), ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
	     LD_MAP(1, 1), CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), MOV64_REG(9, 0),
	     LDX(BPF_W, 7, 6, 0), LDX(BPF_W, 3, 6, 4), MOV64_REG(4, 7),
	     ALU64_IMM(BPF_ADD, 4, 14 + ip + 40), JREG(BPF_JLE, 4, 3, 2), MOV64_IMM(0, 1), EXIT(),
	     MOV64_REG(1, 7), ALU64_IMM(BPF_ADD, 1, 14), MOV64_REG(2, 7),
	     ALU64_IMM(BPF_ADD, 2, 14 + ip), MOV64_IMM(3, th_len),
	     CALL(v6 ? BPF_FUNC_tcp_raw_gen_syncookie_ipv6 : BPF_FUNC_tcp_raw_gen_syncookie_ipv4),
	     JIMM(BPF_JSLT, 0, 0, 2), ALU64_IMM(BPF_RSH, 0, 32), ALU64_IMM(BPF_LSH, 0, 32),
	     STX(BPF_DW, 9, 0, 0),
	     MOV64_REG(1, 7), ALU64_IMM(BPF_ADD, 1, 14), MOV64_REG(2, 7),
	     ALU64_IMM(BPF_ADD, 2, 14 + ip),
	     CALL(v6 ? BPF_FUNC_tcp_raw_check_syncookie_ipv6 : BPF_FUNC_tcp_raw_check_syncookie_ipv4),
	     STX(BPF_DW, 9, 0, 8), MOV64_IMM(0, 2), EXIT());
	return n;
}

/* tc: the socket helpers with socket `slot` (iph_len ip_len, th_len): rec[0] = gen's answer
 * (low 32 bits cleared for a cookie), rec[8] = check's */
static size_t build_sock_cookie(struct bpf_insn *p, int slot, int v6, int ip_len, int th_len)
{
	size_t n = sock_set_prologue(p, slot);
	int ip = v6 ? 40 : 20;

	EMIT(LDX(BPF_W, 8, 6, (int16_t)offsetof(struct __sk_buff, data)),
	     LDX(BPF_W, 3, 6, (int16_t)offsetof(struct __sk_buff, data_end)), MOV64_REG(4, 8),
	     ALU64_IMM(BPF_ADD, 4, 14 + ip + 40), JREG(BPF_JLE, 4, 3, 4), MOV64_REG(1, 7),
	     CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 1), EXIT(),
	     MOV64_REG(1, 7), MOV64_REG(2, 8), ALU64_IMM(BPF_ADD, 2, 14), MOV64_IMM(3, ip_len),
	     MOV64_REG(4, 8), ALU64_IMM(BPF_ADD, 4, 14 + ip), MOV64_IMM(5, th_len),
	     CALL(BPF_FUNC_tcp_gen_syncookie), JIMM(BPF_JSLT, 0, 0, 2), ALU64_IMM(BPF_RSH, 0, 32),
	     ALU64_IMM(BPF_LSH, 0, 32), STX(BPF_DW, 9, 0, 0),
	     MOV64_REG(1, 7), MOV64_REG(2, 8), ALU64_IMM(BPF_ADD, 2, 14), MOV64_IMM(3, ip_len),
	     MOV64_REG(4, 8), ALU64_IMM(BPF_ADD, 4, 14 + ip), MOV64_IMM(5, th_len),
	     CALL(BPF_FUNC_tcp_check_syncookie), STX(BPF_DW, 9, 0, 8),
	     MOV64_REG(1, 7), CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 0), EXIT());
	return n;
}

static void cookie_runs(sys_fn sys, struct transcript *t)
{
	static const struct {
		const char *name;
		uint8_t flags;
		unsigned doff;
		uint16_t mss;
		int th_len;
	} pk[] = {
		{ "SYN no option", 0x02, 5, 0, 20 },
		{ "SYN mss 1460", 0x02, 7, 1460, 28 },
		{ "SYN mss 1400", 0x02, 7, 1400, 28 },
		{ "SYN mss 9000", 0x02, 7, 9000, 28 },
		{ "SYN mss 100", 0x02, 7, 100, 28 },
		{ "SYN mss 0", 0x02, 7, 0xffff, 28 },
		{ "SYN th_len 28 doff 5", 0x02, 5, 0, 28 },
		{ "SYN th_len 16", 0x02, 5, 0, 16 },
		{ "SYN+ACK", 0x12, 5, 0, 20 },
		{ "ACK", 0x10, 5, 0, 20 },
		{ "RST+ACK", 0x14, 5, 0, 20 },
		{ "FIN", 0x01, 5, 0, 20 },
	};
	int maps[2] = { sock_map(sys), create_map(sys, BPF_MAP_TYPE_ARRAY, 4, REC_SIZE, 1, 0, 0) };
	struct bpf_insn p[MAX_INSNS];
	unsigned char f[128];
	char name[160];

	for (int v6 = 0; maps[0] >= 0 && maps[1] >= 0 && v6 < 2; v6++)
		for (size_t i = 0; i < sizeof(pk) / sizeof(pk[0]); i++) {
			size_t len = frame(f, v6, pk[i].flags, pk[i].doff,
					   pk[i].mss == 0xffff ? 0 : pk[i].mss, 0x11223344, 0x55667788);

			if (pk[i].mss == 0xffff) { /* an MSS option of 0 */
				unsigned char *th = f + 14 + (v6 ? 40 : 20);

				th[20] = 2, th[21] = 4;
			}
			snprintf(name, sizeof(name), "raw %s %s", v6 ? "v6" : "v4", pk[i].name);
			run(sys, t, name, XDP, p, build_raw(p, v6, pk[i].th_len), maps, f, len, 16);
			for (int s = 0; s < N_SOCKS; s++) {
				static const int ip_lens[] = { 20, 40, 19 };

				if (s == S_UNIX || s == S_TCP4_CLIENT)
					continue;
				for (size_t k = 0; k < 3; k++) {
					if (k == 1 && !v6)
						continue;
					if (k != 0 && !(i == 0 || i == 9))
						continue;
					snprintf(name, sizeof(name), "sock %s %s %s iph_len %d",
						 sock_set_name(s), v6 ? "v6" : "v4", pk[i].name,
						 ip_lens[k]);
					run(sys, t, name, TC, p,
					    build_sock_cookie(p, s, v6, ip_lens[k], pk[i].th_len), maps,
					    f, len, 16);
				}
			}
		}
	/* a version other than 4 and 6 */
	{
		size_t len = frame(f, 0, 0x02, 5, 0, 1, 0);

		f[14] = 0x55;
		run(sys, t, "sock tcp4 listen version 5", TC, p,
		    build_sock_cookie(p, S_TCP4, 0, 20, 20), maps, f, len, 16);
	}
	for (int i = 0; i < 2; i++)
		if (maps[i] >= 0)
			close(maps[i]);
}

/* Run in a child cgroup of the v2 root, so the cgroup ids have an ancestor above them:
 * the directory made (empty when not), the cgroup to return to in back. */
static char child_cg[600], back_cg[1200];

static int write_pid(const char *dir)
{
	char path[1300];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "we");
	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", (int)getpid()) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static void enter_child_cgroup(void)
{
	char line[512] = "", mnt[512];
	FILE *f;

	if (!brt_cgroup2_mount(mnt, sizeof(mnt)))
		return;
	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f) && strncmp(line, "0::", 3))
		line[0] = 0;
	if (f)
		fclose(f);
	if (strncmp(line, "0::", 3))
		return;
	line[strcspn(line, "\n")] = 0;
	snprintf(back_cg, sizeof(back_cg), "%s%s", mnt, line + 3);
	snprintf(child_cg, sizeof(child_cg), "%s/bpfrt-sock-cast-%d", mnt, (int)getpid());
	if (mkdir(child_cg, 0755) || write_pid(child_cg)) {
		rmdir(child_cg);
		child_cg[0] = 0;
	}
}

static void leave_child_cgroup(void)
{
	if (!child_cg[0])
		return;
	write_pid(back_cg);
	rmdir(child_cg);
}

static void script(sys_fn sys, struct transcript *t, int have_socks, int have_fields)
{
	availability(sys, t);
	verifier_cases(sys, t);
	if (have_socks && have_fields)
		socket_runs(sys, t);
	if (have_socks)
		sk_storage_runs(sys, t);
	if (have_socks)
		cookie_runs(sys, t);
}

int main(void)
{
	static const uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
					    BPFRT_ENGINE_JIT
#endif
	};
	static struct transcript k, b;
	int have_socks, have_fields;

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	enter_child_cgroup();
	printf("cgroup: %s\n", child_cg[0] ? child_cg : "the current one");
	have_socks = !sock_set_make(socks, peers, SB_TAGGED);
	have_fields = !find_fields();
	if (!have_socks)
		printf("sockets: could not make them all, socket runs skipped\n");
	if (!have_fields)
		printf("no vmlinux BTF: cast runs skipped\n");
	pflags = 0;
	script(kernel_bpf, &k, have_socks, have_fields);
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		memset(&b, 0, sizeof(b));
		pflags = BPFRT_F_ENGINE(engines[e]);
		script(bpfrt_bpf, &b, have_socks, have_fields);
		printf("engine %u:\n", engines[e]);
		compare_transcripts(&k, &b);
	}
	if (getenv("BPFRT_SHOW"))
		fputs(k.text, stdout);
	printf("sock cast oracle: %u steps, %u lines each side\n", k.steps, k.says);
	leave_child_cgroup();
	return t_done();
}
