/* test_constant_oracle.c - the helpers whose answer in a test run is a constant that user
 * space can only know the kernel's way of reaching (vm.h's brt_helper_zero rows and
 * bpf_get_branch_snapshot), test-run on the kernel and on bpfrt: the same load verdict and
 * the same return value.  bpf_get_cgroup_classid of the current task (a socket filter's)
 * and of the packet (tc's, lwt's), bpf_skb_cgroup_classid and bpf_get_route_realm (tc,
 * lwt: a test run's packet has no route), bpf_get_hash_recalc in an lwt program (a hash
 * on both sides, bpfrt's its own), and
 * bpf_get_branch_snapshot (no LBR records: -ENOENT, -EINVAL for flags).  Before session
 * 26 bpfrt refused each of these loads ("program of this type cannot use helper").  Root
 * only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "oracle_load.h"

struct rcase {
	const char *name;
	uint32_t type;
	const char *text;
	int hash; /* a flow hash: bpfrt's own value (STATUS #15's known differences), not 0 */
};

#define BRANCH(flags)                                                                     \
	"mov %r1, %r10\nadd %r1, -24\nmov %r2, 24\nmov %r3, " flags "\n"                        \
	"call bpf_get_branch_snapshot\nexit\n"

static const struct rcase cases[] = {
	{ "socket filter: get_cgroup_classid()", BPF_PROG_TYPE_SOCKET_FILTER,
	  "call bpf_get_cgroup_classid\nexit\n" },
	{ "tc: get_cgroup_classid(skb)", BPF_PROG_TYPE_SCHED_CLS,
	  "call bpf_get_cgroup_classid\nexit\n" },
	{ "tc: skb_cgroup_classid(skb)", BPF_PROG_TYPE_SCHED_CLS,
	  "call bpf_skb_cgroup_classid\nexit\n" },
	{ "tc: get_route_realm(skb)", BPF_PROG_TYPE_SCHED_CLS, "call bpf_get_route_realm\nexit\n" },
	{ "lwt_in: get_route_realm(skb)", BPF_PROG_TYPE_LWT_IN, "call bpf_get_route_realm\nexit\n" },
	{ "lwt_in: get_cgroup_classid(skb)", BPF_PROG_TYPE_LWT_IN,
	  "call bpf_get_cgroup_classid\nexit\n" },
	{ "lwt_xmit: get_hash_recalc(skb)", BPF_PROG_TYPE_LWT_XMIT,
	  "call bpf_get_hash_recalc\nexit\n", 1 },
	{ "xdp: get_branch_snapshot(buf, 24, 0)", BPF_PROG_TYPE_XDP, BRANCH("0") },
	{ "xdp: get_branch_snapshot(buf, 24, 1)", BPF_PROG_TYPE_XDP, BRANCH("1") },
	/* the tc variant takes the context: another pointer is refused */
	{ "tc: get_cgroup_classid(fp)", BPF_PROG_TYPE_SCHED_CLS,
	  "mov %r1, %r10\ncall bpf_get_cgroup_classid\nexit\n" },
};

/* an Ethernet/IPv4/UDP frame of 64 bytes (lwt runs see it from the IP header) */
static const unsigned char pkt[64] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00, 0x45, 0, 0, 50, 0, 0, 0, 0, 64, 17,
	0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 0x30, 0x39, 0x00, 0x35, 0, 30,
};

int main(void)
{
	int ran = 0;

	if (geteuid() != 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rcase *c = &cases[i];
		struct oracle_res k, b;
		struct bpf_insn *insns;
		union bpf_attr a;
		char err[256];
		size_t n;

		T_CASE(c->name);
		if (bpfrt_asm(c->text, "case.s", &insns, &n, err, sizeof(err))) {
			T_FAIL("asm: %s", err);
			continue;
		}
		memset(&a, 0, sizeof(a));
		a.prog_type = c->type;
		a.insns = (uintptr_t)insns;
		a.insn_cnt = (uint32_t)n;
		a.license = (uintptr_t)"GPL";
		oracle_load_run(oracle_kernel_bpf, &a, 1, pkt, sizeof(pkt), &k);
		oracle_load_run(bpfrt_bpf, &a, 1, pkt, sizeof(pkt), &b);
		printf("%s: kernel %d run %d ret %d | bpfrt %d run %d ret %d\n", c->name, k.err,
		       k.run_err, (int32_t)k.retval, b.err, b.run_err, (int32_t)b.retval);
		ran += oracle_compare(c->name, &k, &b, c->hash ? ORACLE_CMP_RUN_ERR : ORACLE_CMP_RUN,
				      NULL);
		if (c->hash)
			T_ASSERT(k.retval != 0 && b.retval != 0);
		free(insns);
	}
	T_CASE("runs compared");
	T_ASSERT(ran >= 8);
	return t_done();
}
