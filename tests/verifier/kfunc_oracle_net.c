/* kfunc_oracle_net.c - verifier.kfunc_oracle's networking kfuncs (test_kfunc_oracle.c
 * says what it checks): bpf_skb/xdp_ct_lookup and bpf_ct_release (every argument error,
 * references, NULL checks, test runs returning opts->error), the allocation family
 * (bpf_skb/xdp_ct_alloc, bpf_ct_insert_entry, bpf_ct_set/change_timeout/status: nf_conn
 * and nf_conn___init told apart, the reference an insert trades; test runs only where the
 * kernel's allocation fails, so no entry reaches the host's table), and bpf_sock_destroy in iterators (refused elsewhere).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "kfunc_oracle.h"

/* A conntrack lookup (tc: bpf_skb_ct_lookup, XDP: bpf_xdp_ct_lookup) with the tuple at
 * fp-56 (40 zeroed bytes) and struct bpf_ct_opts at fp-16 (16 zeroed bytes, netns_id
 * netns, l4proto proto, reserved[0] resv, ct_zone_id zone), the entry released when
 * found, opts->error returned. */
struct ct_case {
	const char *name;
	int32_t tuple_sz, opts_sz, netns, proto, resv, zone;
	int null_tuple, null_opts;
};

static size_t ct_prog(struct bpf_insn *p, int lookup, const struct ct_case *c)
{
	size_t n = 0;

	p[n++] = MOV_X(6, 1);
	for (int off = -56; off < 0; off += 8)
		p[n++] = ST(BPF_DW, 10, (int16_t)off, 0);
	p[n++] = ST(BPF_W, 10, -16, c->netns);
	p[n++] = ST(BPF_B, 10, -8, c->proto);
	p[n++] = ST(BPF_B, 10, -3, c->resv);
	p[n++] = ST(BPF_H, 10, -6, c->zone);
	p[n++] = MOV_X(1, 6);
	if (c->null_tuple) {
		p[n++] = MOV_K(2, 0);
	} else {
		p[n++] = MOV_X(2, 10);
		p[n++] = ADD_K(2, -56);
	}
	p[n++] = MOV_K(3, c->tuple_sz);
	if (c->null_opts) {
		p[n++] = MOV_K(4, 0);
	} else {
		p[n++] = MOV_X(4, 10);
		p[n++] = ADD_K(4, -16);
	}
	p[n++] = MOV_K(5, c->opts_sz);
	p[n++] = KCALL(lookup, 0);
	p[n++] = JEQ_K(0, 0, 2);
	p[n++] = MOV_X(1, 0);
	p[n++] = KCALL(ids_release, 0);
	p[n++] = LDX(BPF_W, 0, 10, -12);
	p[n++] = EXIT();
	return n;
}

void ct_cases(void)
{
	static const struct ct_case cases[] = {
		{ "ct ipv4 tcp", 12, 16, -1, 6, 0, 0, 0, 0 },
		{ "ct ipv6 udp, 12-byte opts", 36, 12, -1, 17, 0, 0, 0, 0 },
		{ "ct icmp", 12, 16, -1, 1, 0, 0, 0, 0 },
		{ "ct tuple of 13 bytes", 13, 16, -1, 6, 0, 0, 0, 0 },
		{ "ct tuple of 0 bytes", 0, 16, -1, 6, 0, 0, 0, 0 },
		{ "ct opts of 8 bytes", 12, 8, -1, 6, 0, 0, 0, 0 },
		{ "ct opts of 0 bytes", 12, 0, -1, 6, 0, 0, 0, 0 },
		{ "ct reserved set", 12, 16, -1, 6, 1, 0, 0, 0 },
		{ "ct zone in 12-byte opts", 12, 12, -1, 6, 0, 1, 0, 0 },
		{ "ct zone in 16-byte opts", 12, 16, -1, 6, 0, 1, 0, 0 },
		{ "ct netns -2", 12, 16, -2, 6, 0, 0, 0, 0 },
		{ "ct netns 7", 12, 16, 7, 6, 0, 0, 0, 0 },
		{ "ct NULL tuple of 0 bytes", 0, 16, -1, 6, 0, 0, 1, 0 },
		{ "ct NULL opts of 0 bytes", 12, 0, -1, 6, 0, 0, 0, 1 },
		{ "ct NULL tuple of 12 bytes", 12, 16, -1, 6, 0, 0, 1, 0 },
		{ "ct tuple of 48 bytes", 48, 16, -1, 6, 0, 0, 0, 0 },
		{ "ct opts of 17 bytes", 12, 17, -1, 6, 0, 0, 0, 0 },
	};
	struct bpf_insn p[MAXP];
	char name[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = ct_prog(p, ids_lookup_skb, &cases[i]);

		snprintf(name, sizeof(name), "tc %s", cases[i].name);
		kcheck(name, BPF_PROG_TYPE_SCHED_CLS, 0, p, n);
		n = ct_prog(p, ids_lookup_xdp, &cases[i]);
		snprintf(name, sizeof(name), "xdp %s", cases[i].name);
		kcheck(name, BPF_PROG_TYPE_XDP, 0, p, n);
	}
	/* the wrong lookup for the type (the other context), types without the set */
	struct ct_case ok = { "", 12, 16, -1, 6, 0, 0, 0, 0 };
	size_t n = ct_prog(p, ids_lookup_xdp, &ok);

	kcheck("tc calls bpf_xdp_ct_lookup", BPF_PROG_TYPE_SCHED_CLS, 0, p, n);
	n = ct_prog(p, ids_lookup_skb, &ok);
	kcheck("xdp calls bpf_skb_ct_lookup", BPF_PROG_TYPE_XDP, 0, p, n);
	kcheck("sched_act calls bpf_skb_ct_lookup", BPF_PROG_TYPE_SCHED_ACT, 0, p, n);
	kcheck("socket filter calls bpf_skb_ct_lookup", BPF_PROG_TYPE_SOCKET_FILTER, 0, p, n);
	kcheck("cgroup_skb calls bpf_skb_ct_lookup", BPF_PROG_TYPE_CGROUP_SKB, 0, p, n);
}

/* tc programs around one bpf_skb_ct_lookup(ctx, fp-56, 12, fp-16, 16) at LOOKUP */
#define CT_SETUP                                                                          \
	MOV_X(6, 1), ST(BPF_DW, 10, -56, 0), ST(BPF_DW, 10, -48, 0), ST(BPF_DW, 10, -16, 0),   \
		ST(BPF_DW, 10, -8, 0), ST(BPF_B, 10, -8, 6)
#define CT_ARGS MOV_X(1, 6), MOV_X(2, 10), ADD_K(2, -56), MOV_K(3, 12), MOV_X(4, 10),     \
		ADD_K(4, -16), MOV_K(5, 16)
#define LOOKUP KCALL(ids_lookup_skb, 0)
#define RELEASE KCALL(ids_release, 0)

/* offsetof(struct nf_conn, mark) in the kernel's BTF, or -1 */
static int nf_conn_mark_off(void)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	int id = vml ? brt_btf_find(vml, "nf_conn", BTF_KIND_STRUCT) : -1;
	const struct btf_type *t = id > 0 ? brt_btf_type(vml, (uint32_t)id) : NULL;
	const struct btf_member *m = t ? (const struct btf_member *)(t + 1) : NULL;

	for (uint32_t i = 0; t && i < BTF_INFO_VLEN(t->info); i++) {
		const char *name = brt_btf_str(vml, m[i].name_off);

		if (name && !strcmp(name, "mark"))
			return (int)((BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							      : m[i].offset) / 8);
	}
	return -1;
}

void ct_rules(void)
{
	/* cilium/ebpf's call_kfunc: tuple and opts fp-1 with sizes 0 */
	struct bpf_insn cilium[] = { MOV_X(2, 10), ADD_K(2, -1), MOV_K(3, 0), MOV_X(4, 2),
				     MOV_K(5, 0), LOOKUP, JEQ_K(0, 0, 2), MOV_X(1, 0), RELEASE,
				     MOV_K(0, 1), EXIT() };
	struct bpf_insn leak[] = { CT_SETUP, CT_ARGS, LOOKUP, MOV_K(0, 0), EXIT() };
	struct bpf_insn no_null_check[] = { CT_SETUP, CT_ARGS, LOOKUP, MOV_X(1, 0), RELEASE,
					    MOV_K(0, 0), EXIT() };
	struct bpf_insn twice[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 5), MOV_X(7, 0),
				    MOV_X(1, 0), RELEASE, MOV_X(1, 7), RELEASE, MOV_K(0, 0),
				    EXIT() };
	struct bpf_insn release_null[] = { MOV_K(1, 0), RELEASE, MOV_K(0, 0), EXIT() };
	struct bpf_insn release_ctx[] = { RELEASE, MOV_K(0, 0), EXIT() };
	struct bpf_insn release_stack[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
					    RELEASE, MOV_K(0, 0), EXIT() };
	struct bpf_insn release_off[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 3), MOV_X(1, 0),
					  ADD_K(1, 8), RELEASE, MOV_K(0, 0), EXIT() };
	struct bpf_insn ctx_stack[] = { CT_SETUP, CT_ARGS, MOV_X(1, 10), ADD_K(1, -56), LOOKUP,
					MOV_K(0, 0), EXIT() };
	struct bpf_insn ctx_off[] = { CT_SETUP, CT_ARGS, ADD_K(1, 8), LOOKUP, MOV_K(0, 0),
				      EXIT() };
	struct bpf_insn ctx_scalar[] = { CT_SETUP, CT_ARGS, MOV_K(1, 0), LOOKUP, MOV_K(0, 0),
					 EXIT() };
	struct bpf_insn size_unbounded[] = { CT_SETUP, CT_ARGS, LDX(BPF_W, 3, 6, 0), LOOKUP,
					     MOV_K(0, 0), EXIT() };
	struct bpf_insn size_bounded[] = { CT_SETUP, CT_ARGS, LDX(BPF_W, 3, 6, 0),
					   I(BPF_ALU64 | BPF_AND | BPF_K, 3, 0, 0, 15), LOOKUP,
					   JEQ_K(0, 0, 2), MOV_X(1, 0), RELEASE, MOV_K(0, 0),
					   EXIT() };
	struct bpf_insn size_past[] = { CT_SETUP, CT_ARGS, MOV_K(3, 57), LOOKUP, MOV_K(0, 0),
					EXIT() };
	struct bpf_insn size_neg[] = { CT_SETUP, CT_ARGS, MOV_K(3, -1), LOOKUP, MOV_K(0, 0),
				       EXIT() };
	struct bpf_insn size_ptr[] = { CT_SETUP, CT_ARGS, MOV_X(3, 10), LOOKUP, MOV_K(0, 0),
				       EXIT() };
	struct bpf_insn opts_size_ptr[] = { CT_SETUP, CT_ARGS, MOV_X(5, 10), LOOKUP,
					    MOV_K(0, 0), EXIT() };
	struct bpf_insn tuple_ctx[] = { CT_SETUP, CT_ARGS, MOV_X(2, 6), LOOKUP, MOV_K(0, 0),
					EXIT() };
	struct bpf_insn tuple_pkt[] = { CT_SETUP, LDX(BPF_W, 2, 1, 76), LDX(BPF_W, 7, 1, 80),
					MOV_X(8, 2), ADD_K(8, 12),
					I(BPF_JMP | BPF_JGT | BPF_X, 8, 7, 9, 0), MOV_X(1, 6),
					MOV_K(3, 12), MOV_X(4, 10), ADD_K(4, -16), MOV_K(5, 16),
					LOOKUP, JEQ_K(0, 0, 2), MOV_X(1, 0), RELEASE, MOV_K(0, 0),
					EXIT() };
	struct bpf_insn tuple_pkt_short[] = { CT_SETUP, LDX(BPF_W, 2, 1, 76),
					      LDX(BPF_W, 7, 1, 80), MOV_X(8, 2), ADD_K(8, 8),
					      I(BPF_JMP | BPF_JGT | BPF_X, 8, 7, 9, 0), MOV_X(1, 6),
					      MOV_K(3, 12), MOV_X(4, 10), ADD_K(4, -16),
					      MOV_K(5, 16), LOOKUP, JEQ_K(0, 0, 2), MOV_X(1, 0),
					      RELEASE, MOV_K(0, 0), EXIT() };
	struct bpf_insn read_entry[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 4),
					 LDX(BPF_W, 7, 0, 0), MOV_X(1, 0), RELEASE, MOV_X(0, 7),
					 MOV_K(0, 0), EXIT() };
	struct bpf_insn use_after_release[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 4),
						MOV_X(7, 0), MOV_X(1, 0), RELEASE,
						LDX(BPF_W, 0, 7, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn r0_after_void[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 3),
					    MOV_X(1, 0), RELEASE, EXIT(), MOV_K(0, 0), EXIT() };
	struct bpf_insn r2_after_call[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 2),
					    MOV_X(1, 0), RELEASE, MOV_X(0, 2), EXIT() };
	struct bpf_insn in_lock_dead[] = { MOV_K(0, 0), JEQ_K(0, 0, 1), RELEASE, EXIT() };
#define K(name, p) kcheck(name, BPF_PROG_TYPE_SCHED_CLS, 0, p, sizeof(p) / sizeof(p[0]))
	K("cilium call_kfunc", cilium);
	K("lookup without release", leak);
	K("release without NULL check", no_null_check);
	K("release twice", twice);
	K("release NULL", release_null);
	K("release the context", release_ctx);
	K("release stack memory", release_stack);
	K("release at an offset", release_off);
	K("context argument on the stack", ctx_stack);
	K("context argument at an offset", ctx_off);
	K("context argument 0", ctx_scalar);
	K("size unbounded", size_unbounded);
	K("size bounded", size_bounded);
	K("size past the stack", size_past);
	K("size negative", size_neg);
	K("size a pointer", size_ptr);
	K("opts size a pointer", opts_size_ptr);
	K("tuple the context", tuple_ctx);
	K("tuple in the packet", tuple_pkt);
	K("tuple past the checked packet", tuple_pkt_short);
	K("read the entry", read_entry);
	K("use after release", use_after_release);
	K("r0 after a void kfunc", r0_after_void);
	K("r2 after a kfunc call", r2_after_call);
	K("release in dead code", in_lock_dead);
	/* writes into the entry: its mark only (the kernel's conntrack write hook for tc and
	 * XDP; bpfrt said "only read is supported" to every write) */
	{
		int mark = nf_conn_mark_off();

		if (mark < 0) {
			printf("conntrack writes: skipped: no nf_conn.mark in the kernel's BTF\n");
		} else {
			struct bpf_insn write_mark[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 4),
							 MOV_K(7, 5), STX(BPF_W, 0, 7, mark),
							 MOV_X(1, 0), RELEASE, MOV_K(0, 0), EXIT() };
			struct bpf_insn write_other[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 4),
							  MOV_K(7, 5), STX(BPF_W, 0, 7, mark + 8),
							  MOV_X(1, 0), RELEASE, MOV_K(0, 0), EXIT() };
			struct bpf_insn write_wide[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 4),
							 MOV_K(7, 5), STX(BPF_DW, 0, 7, mark),
							 MOV_X(1, 0), RELEASE, MOV_K(0, 0), EXIT() };

			K("write the entry's mark", write_mark);
			K("write past the entry's mark", write_other);
			K("write 8 bytes at the entry's mark", write_wide);
			/* the same in XDP, through the XDP lookup */
			for (size_t i = 0; i < sizeof(write_mark) / sizeof(write_mark[0]); i++)
				if (write_mark[i].src_reg == BPF_PSEUDO_KFUNC_CALL &&
				    write_mark[i].imm == ids_lookup_skb)
					write_mark[i].imm = ids_lookup_xdp;
			kcheck("write the entry's mark in XDP", BPF_PROG_TYPE_XDP, 0, write_mark,
			       sizeof(write_mark) / sizeof(write_mark[0]));
		}
	}
#undef K
}

/* The allocation family.  bpfrt makes no conntrack entry (an allocation answers NULL with
 * -ENOMEM in opts->error), and a test run must not put entries into the host's conntrack
 * table (a later lookup of the same tuple would find them): a program whose allocation
 * would succeed is only loaded (run 0); one whose allocation fails (bad opts or tuple)
 * is run too, and opts->error compared. */
static void ct_alloc_check(const char *name, enum bpf_prog_type type, const struct bpf_insn *p,
			   size_t n, int run)
{
	union bpf_attr attr;

	if (run) {
		kcheck(name, type, 0, p, n);
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = (uintptr_t)p;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	check_attr(name, &attr);
}

/* alloc(ctx, fp-56, tuple_sz, fp-16, opts_sz); insert; release; opts->error returned */
static size_t ct_alloc_prog(struct bpf_insn *p, int alloc, int insert, const struct ct_case *c)
{
	size_t n = ct_prog(p, alloc, c);

	/* ct_prog ends: call, jeq r0 0 +2, r1 = r0, release, r0 = error, exit: the
	 * release of a new entry goes through an insert first */
	n -= 5;
	p[n++] = JEQ_K(0, 0, 5);
	p[n++] = MOV_X(1, 0);
	p[n++] = KCALL(insert, 0);
	p[n++] = JEQ_K(0, 0, 2);
	p[n++] = MOV_X(1, 0);
	p[n++] = KCALL(ids_release, 0);
	p[n++] = LDX(BPF_W, 0, 10, -12);
	p[n++] = EXIT();
	return n;
}

void ct_alloc_rules(void)
{
	/* the first two would make an entry: loaded only */
	static const struct ct_case cases[] = {
		{ "ipv4 tcp", 12, 16, -1, 6, 0, 0, 0, 0 },
		{ "ipv6 udp, 12-byte opts", 36, 12, -1, 17, 0, 0, 0, 0 },
		{ "icmp", 12, 16, -1, 1, 0, 0, 0, 0 },
		{ "icmp, tuple of 13 bytes", 13, 16, -1, 1, 0, 0, 0, 0 },
		{ "tuple of 13 bytes", 13, 16, -1, 6, 0, 0, 0, 0 },
		{ "opts of 8 bytes", 12, 8, -1, 6, 0, 0, 0, 0 },
		{ "reserved set", 12, 16, -1, 6, 1, 0, 0, 0 },
		{ "zone in 12-byte opts", 12, 12, -1, 6, 0, 1, 0, 0 },
		{ "netns -2", 12, 16, -2, 6, 0, 0, 0, 0 },
		{ "netns -2, icmp", 12, 16, -2, 1, 0, 0, 0, 0 },
		{ "netns 7", 12, 16, 7, 6, 0, 0, 0, 0 },
		{ "netns 7, tuple of 13 bytes", 13, 16, 7, 6, 0, 0, 0, 0 },
		{ "NULL tuple of 0 bytes", 0, 16, -1, 6, 0, 0, 1, 0 },
	};
	int skb = kid("bpf_skb_ct_alloc"), xdp = kid("bpf_xdp_ct_alloc");
	int ins = kid("bpf_ct_insert_entry"), set_to = kid("bpf_ct_set_timeout");
	int chg_to = kid("bpf_ct_change_timeout"), set_st = kid("bpf_ct_set_status");
	int chg_st = kid("bpf_ct_change_status");
	struct bpf_insn p[MAXP];
	char name[128];

	if (skb <= 0 || xdp <= 0 || ins <= 0 || set_to <= 0 || chg_to <= 0 || set_st <= 0 ||
	    chg_st <= 0) {
		printf("conntrack allocation: skipped: not in the kernel's BTF\n");
		return;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = ct_alloc_prog(p, skb, ins, &cases[i]);

		snprintf(name, sizeof(name), "tc ct alloc %s", cases[i].name);
		ct_alloc_check(name, BPF_PROG_TYPE_SCHED_CLS, p, n, i >= 2);
		n = ct_alloc_prog(p, xdp, ins, &cases[i]);
		snprintf(name, sizeof(name), "xdp ct alloc %s", cases[i].name);
		ct_alloc_check(name, BPF_PROG_TYPE_XDP, p, n, i >= 2);
	}
#define ALLOC KCALL(skb, 0)
#define INSERT KCALL(ins, 0)
	{
		struct bpf_insn alloc_release[] = { CT_SETUP, CT_ARGS, ALLOC, JEQ_K(0, 0, 2),
						    MOV_X(1, 0), RELEASE, MOV_K(0, 0), EXIT() };
		struct bpf_insn leak[] = { CT_SETUP, CT_ARGS, ALLOC, MOV_K(0, 0), EXIT() };
		struct bpf_insn set_all[] = { CT_SETUP, CT_ARGS, ALLOC, JEQ_K(0, 0, 12),
					      MOV_X(7, 0), MOV_X(1, 7), MOV_K(2, 1000),
					      KCALL(set_to, 0), MOV_X(1, 7), MOV_K(2, 8),
					      KCALL(set_st, 0), MOV_X(1, 7), INSERT, JEQ_K(0, 0, 2),
					      MOV_X(1, 0), RELEASE, MOV_K(0, 0), EXIT() };
		struct bpf_insn change_to_new[] = { CT_SETUP, CT_ARGS, ALLOC, JEQ_K(0, 0, 6),
						    MOV_X(7, 0), MOV_X(1, 7), MOV_K(2, 1000),
						    KCALL(chg_to, 0), MOV_X(1, 7), INSERT,
						    MOV_K(0, 0), EXIT() };
		struct bpf_insn change_st_new[] = { CT_SETUP, CT_ARGS, ALLOC, JEQ_K(0, 0, 6),
						    MOV_X(7, 0), MOV_X(1, 7), MOV_K(2, 8),
						    KCALL(chg_st, 0), MOV_X(1, 7), INSERT,
						    MOV_K(0, 0), EXIT() };
		struct bpf_insn lookup_insert[] = { CT_SETUP, CT_ARGS, LOOKUP, JEQ_K(0, 0, 4),
						    MOV_X(1, 0), INSERT, JEQ_K(0, 0, 2), MOV_X(1, 0),
						    RELEASE, MOV_K(0, 0), EXIT() };
		struct bpf_insn insert_insert[] = { CT_SETUP, CT_ARGS, ALLOC, JEQ_K(0, 0, 7),
						    MOV_X(1, 0), INSERT, JEQ_K(0, 0, 4), MOV_X(1, 0),
						    INSERT, JEQ_K(0, 0, 2), MOV_X(1, 0), RELEASE,
						    MOV_K(0, 0), EXIT() };
		struct bpf_insn set_after_insert[] = { CT_SETUP, CT_ARGS, ALLOC, JEQ_K(0, 0, 9),
						       MOV_X(1, 0), INSERT, JEQ_K(0, 0, 6),
						       MOV_X(7, 0), MOV_X(1, 7), MOV_K(2, 9),
						       KCALL(set_to, 0), MOV_X(1, 7), RELEASE,
						       MOV_K(0, 0), EXIT() };
		struct bpf_insn change_after_insert[] = { CT_SETUP, CT_ARGS, ALLOC,
							  JEQ_K(0, 0, 9), MOV_X(1, 0), INSERT,
							  JEQ_K(0, 0, 6), MOV_X(7, 0), MOV_X(1, 7),
							  MOV_K(2, 9), KCALL(chg_to, 0),
							  MOV_X(1, 7), RELEASE, MOV_K(0, 0),
							  EXIT() };
		struct bpf_insn set_no_null_check[] = { CT_SETUP, CT_ARGS, ALLOC, MOV_X(7, 0),
							MOV_X(1, 7), MOV_K(2, 9), KCALL(set_to, 0),
							MOV_X(1, 7), INSERT, MOV_K(0, 0), EXIT() };
		struct bpf_insn use_after_insert[] = { CT_SETUP, CT_ARGS, ALLOC, JEQ_K(0, 0, 9),
						       MOV_X(7, 0), MOV_X(1, 7), INSERT,
						       JEQ_K(0, 0, 2), MOV_X(1, 0), RELEASE,
						       MOV_X(1, 7), MOV_K(2, 9), KCALL(set_to, 0),
						       MOV_K(0, 0), EXIT() };
		struct bpf_insn insert_stack[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10),
						   ADD_K(1, -8), INSERT, MOV_K(0, 0), EXIT() };
#define K(name, p) ct_alloc_check(name, BPF_PROG_TYPE_SCHED_CLS, p, sizeof(p) / sizeof(p[0]), 0)
		K("ct alloc, release", alloc_release);
		K("ct alloc without release", leak);
		K("ct alloc, set timeout and status, insert, release", set_all);
		K("ct alloc, change timeout", change_to_new);
		K("ct alloc, change status", change_st_new);
		K("ct lookup, insert", lookup_insert);
		K("ct insert twice", insert_insert);
		K("ct set timeout after insert", set_after_insert);
		K("ct change timeout after insert", change_after_insert);
		K("ct set timeout without NULL check", set_no_null_check);
		K("ct new entry used after insert", use_after_insert);
		K("ct insert stack memory", insert_stack);
#undef K
		ct_alloc_check("sched_act ct alloc", BPF_PROG_TYPE_SCHED_ACT, set_all,
			       sizeof(set_all) / sizeof(set_all[0]), 0);
	}
#undef ALLOC
#undef INSERT
}

/* An iterator program's case: loaded as BPF_TRACE_ITER of the target's BTF id (iter) */
struct iter_case {
	const char *name;
	int iter;
	const struct bpf_insn *p;
	size_t n;
};
#define ICASE(nm, it, p) { nm, it, p, sizeof(p) / sizeof(p[0]) }

static void iter_cases(const struct iter_case *cases, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		union bpf_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.prog_type = BPF_PROG_TYPE_TRACING;
		attr.expected_attach_type = BPF_TRACE_ITER;
		attr.attach_btf_id = (uint32_t)cases[c].iter;
		attr.insns = (uintptr_t)cases[c].p;
		attr.insn_cnt = (uint32_t)cases[c].n;
		attr.license = (uintptr_t) "GPL";
		check_attr(cases[c].name, &attr);
	}
}

/* bpf_setsockopt / bpf_getsockopt in iterators: the tcp iterator's get_func_proto gives
 * the socket-pointer forms (bpf_sk_setsockopt/getsockopt_proto); other iterators have none
 * (session 26: bpftune's probe_cong_iter) */
void iter_sockopt_rules(void)
{
	int tcp = kid("bpf_iter_tcp"), udp = kid("bpf_iter_udp"), task = kid("bpf_iter_task");
	/* struct bpf_iter__tcp: meta at 0, the socket at 8; optval on the stack */
	struct bpf_insn set_ok[] = { LDX(BPF_DW, 1, 1, 8), JEQ_K(1, 0, 7), ST(BPF_W, 10, -8, 1),
				     MOV_K(2, 6), MOV_K(3, 13), MOV_X(4, 10), ADD_K(4, -8),
				     MOV_K(5, 4), CALLH(BPF_FUNC_setsockopt), MOV_K(0, 0), EXIT() };
	struct bpf_insn get_ok[] = { LDX(BPF_DW, 1, 1, 8), JEQ_K(1, 0, 6), MOV_K(2, 6),
				     MOV_K(3, 13), MOV_X(4, 10), ADD_K(4, -8), MOV_K(5, 4),
				     CALLH(BPF_FUNC_getsockopt), MOV_K(0, 0), EXIT() };
	struct bpf_insn get_no_null[] = { LDX(BPF_DW, 1, 1, 8), MOV_K(2, 6), MOV_K(3, 13),
					  MOV_X(4, 10), ADD_K(4, -8), MOV_K(5, 4),
					  CALLH(BPF_FUNC_getsockopt), MOV_K(0, 0), EXIT() };
	struct bpf_insn get_ctx[] = { MOV_K(2, 6), MOV_K(3, 13), MOV_X(4, 10), ADD_K(4, -8),
				      MOV_K(5, 4), CALLH(BPF_FUNC_getsockopt), MOV_K(0, 0),
				      EXIT() };
	const struct iter_case cases[] = {
		ICASE("setsockopt iter/tcp", tcp, set_ok),
		ICASE("getsockopt iter/tcp", tcp, get_ok),
		ICASE("getsockopt iter/tcp without NULL check", tcp, get_no_null),
		ICASE("getsockopt iter/tcp of the context", tcp, get_ctx),
		ICASE("setsockopt iter/udp", udp, set_ok),
		ICASE("getsockopt iter/task", task, get_ok),
	};

	if (tcp <= 0 || udp <= 0 || task <= 0) {
		printf("iterator socket options: skipped: not in the kernel's BTF\n");
		return;
	}
	iter_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* bpf_sock_destroy: tracing's hook, iterators only (the set's filter) */
void sock_destroy_rules(void)
{
	int destroy = kid("bpf_sock_destroy"), tcp = kid("bpf_iter_tcp");
	int udp = kid("bpf_iter_udp"), task = kid("bpf_iter_task");
	/* struct bpf_iter__tcp / __udp: meta at 0, the socket at 8 */
	struct bpf_insn ok[] = { LDX(BPF_DW, 1, 1, 8), JEQ_K(1, 0, 1), KCALL(destroy, 0),
				 MOV_K(0, 0), EXIT() };
	struct bpf_insn no_null[] = { LDX(BPF_DW, 1, 1, 8), KCALL(destroy, 0), MOV_K(0, 0),
				      EXIT() };
	struct bpf_insn ctx_arg[] = { KCALL(destroy, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn offset[] = { LDX(BPF_DW, 1, 1, 8), JEQ_K(1, 0, 2), ADD_K(1, 4),
				     KCALL(destroy, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn scalar[] = { MOV_K(1, 0), KCALL(destroy, 0), MOV_K(0, 0), EXIT() };
	/* struct bpf_iter__task: the task at 8, not a socket */
	struct bpf_insn task_arg[] = { LDX(BPF_DW, 1, 1, 8), JEQ_K(1, 0, 1), KCALL(destroy, 0),
				       MOV_K(0, 0), EXIT() };
	const struct iter_case cases[] = {
		ICASE("sock_destroy iter/tcp", tcp, ok),
		ICASE("sock_destroy iter/udp", udp, ok),
		ICASE("sock_destroy without NULL check", tcp, no_null),
		ICASE("sock_destroy of the context", tcp, ctx_arg),
		ICASE("sock_destroy at an offset", tcp, offset),
		ICASE("sock_destroy of NULL", udp, scalar),
		ICASE("sock_destroy of a task (iter/task)", task, task_arg),
	};

	if (destroy <= 0 || tcp <= 0 || udp <= 0 || task <= 0) {
		printf("bpf_sock_destroy: skipped: not in the kernel's BTF\n");
		return;
	}
	iter_cases(cases, sizeof(cases) / sizeof(cases[0]));
	/* other programs of tracing's hook: the filter refuses them */
	{
		struct bpf_insn p[] = { MOV_K(1, 0), KCALL(destroy, 0), MOV_K(0, 0), EXIT() };

		kcheck("sock_destroy in a tracepoint", BPF_PROG_TYPE_TRACEPOINT, 0, p, 4);
		kcheck("sock_destroy in a syscall program", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
		       p, 4);
	}
}
