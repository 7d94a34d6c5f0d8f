/* test_kfunc_oracle.c - kernel function calls (BPF_PSEUDO_KFUNC_CALL) at load, checked
 * against the kernel: the load-time checks of add_kfunc_call() (GPL, a FUNC of the
 * kernel's BTF with a prototype, module offsets without fd_array), the reserved fields of
 * a call, check_kfunc_call()'s refusal of a kernel function the program may not call, and
 * the unresolved weak kfunc (id 0) that must be in dead code.  Then the kernel functions
 * bpfrt offers (src/vm/kfuncs.def): bpf_skb/xdp_ct_lookup and bpf_ct_release (tc, XDP;
 * every argument error, references, NULL checks, and test runs returning opts->error for
 * each lookup check), bpf_cpumask_create/acquire/release (sleepable syscall programs,
 * with test runs), lddw BPF_PSEUDO_BTF_ID of kernel symbols (functions, per-CPU
 * variables, bad ids and fds), bpf_rcu_read_lock/unlock and bpf_preempt_disable/enable
 * sections on five types, tasks and cgroups (bpf_task_from_pid/vpid, acquire/release,
 * bpf_cgroup_from_id, acquire/release), the cpumask operations with test runs,
 * bpf_sock_destroy in iterators (and refused elsewhere), bpf_copy_from_user_str and
 * bpf_copy_from_user_task_str (the test's own strings, truncation, padding, faults, where
 * sleepable kfuncs may not run), and the
 * string kfuncs (bpf_strcmp ... bpf_strnstr: results, -ERANGE for NULL and user
 * pointers, -EFAULT for kernel ones, -E2BIG past 65,536 bytes, the char/int/size_t
 * argument widths, r0's upper half, the __ign arguments' verifier rules) with test runs.
 * Verdict, errno and the error line must be equal, and
 * for programs both accept the test run's errno and retval.  Kernel functions the kernel
 * allows but bpfrt does not offer are not here.  Skips without root or kernel BTF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "harness.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define KCALL(id, off) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, off, id)

typedef int (*bpf_fn)(int cmd, union bpf_attr *attr, unsigned size);

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

struct res {
	int fd, err;
	char last[256];
};

static char logbuf[1 << 16];

static void load(bpf_fn bpf, enum bpf_prog_type type, const struct bpf_insn *insns, size_t n,
		 const char *license, struct res *r)
{
	union bpf_attr attr;
	char *line, *save;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t)license;
	attr.log_buf = (uintptr_t)logbuf;
	attr.log_size = sizeof(logbuf);
	attr.log_level = 1;
	logbuf[0] = 0;
	r->fd = bpf(BPF_PROG_LOAD, &attr, sizeof(attr));
	r->err = r->fd < 0 ? errno : 0;
	r->last[0] = 0;
	/* the error line: the last line before "processed ..." (or the last line) */
	for (line = strtok_r(logbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "processed ", 10))
			break;
		snprintf(r->last, sizeof(r->last), "%s", line);
	}
	if (r->fd >= 0)
		close(r->fd);
}

static int compared;

static void check(const char *name, enum bpf_prog_type type, const struct bpf_insn *insns,
		  size_t n, const char *license)
{
	struct res k, b;

	T_CASE(name);
	load(kernel_bpf, type, insns, n, license, &k);
	load(bpfrt_bpf, type, insns, n, license, &b);
	T_EQ_INT(k.fd >= 0, b.fd >= 0);
	T_EQ_INT(k.err, b.err);
	if (k.fd < 0 && strcmp(k.last, b.last))
		T_FAIL("%s: error line: kernel '%s', bpfrt '%s'", name, k.last, b.last);
	if (getenv("KFUNC_DUMP"))
		fprintf(stderr, "%s: kernel %d %s | bpfrt %d %s\n", name, k.err, k.last, b.err,
			b.last);
	compared++;
}

/* ---- kfuncs bpfrt offers (vm/kfuncs.def): arguments, references, returns, runs ---- */
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define JEQ_K(d, v, o) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define LDDW(d, src, lo, hi) I(BPF_LD | BPF_IMM | BPF_DW, d, src, 0, lo), I(0, 0, 0, 0, hi)
#define MAXP 64

static int ids_lookup_skb, ids_lookup_xdp, ids_release, ids_mask_create, ids_mask_release,
	ids_mask_acquire;

/* A run of a loaded program: BPF_PROG_TEST_RUN on a 64-byte frame (packet types) or
 * without data (syscall); the errno and retval. */
static void run(bpf_fn bpf, int fd, enum bpf_prog_type type, int *err, uint32_t *retval)
{
	static unsigned char pkt[64];
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)fd;
	if (type != BPF_PROG_TYPE_SYSCALL) {
		pkt[12] = 0x08; /* ETH_P_IP */
		attr.test.data_in = (uintptr_t)pkt;
		attr.test.data_size_in = sizeof(pkt);
	}
	if (type != BPF_PROG_TYPE_SYSCALL)
		attr.test.repeat = 1;
	*err = bpf(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) ? errno : 0;
	*retval = attr.test.retval;
}

struct kres {
	struct res r;
	int run_err;
	uint32_t retval;
};

static void load_run(bpf_fn bpf, enum bpf_prog_type type, uint32_t flags,
		     const struct bpf_insn *insns, size_t n, struct kres *k)
{
	union bpf_attr attr;
	char *line, *save;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.prog_flags = flags;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	attr.log_buf = (uintptr_t)logbuf;
	attr.log_size = sizeof(logbuf);
	attr.log_level = 1;
	logbuf[0] = 0;
	k->r.fd = bpf(BPF_PROG_LOAD, &attr, sizeof(attr));
	k->r.err = k->r.fd < 0 ? errno : 0;
	k->r.last[0] = 0;
	for (line = strtok_r(logbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "processed ", 10))
			break;
		snprintf(k->r.last, sizeof(k->r.last), "%s", line);
	}
	k->run_err = -1;
	k->retval = 0;
	if (k->r.fd >= 0) {
		run(bpf, k->r.fd, type, &k->run_err, &k->retval);
		close(k->r.fd);
	}
}

static int runs;

static void kcheck(const char *name, enum bpf_prog_type type, uint32_t flags,
		   const struct bpf_insn *insns, size_t n)
{
	static char case_name[160];
	struct kres k, b;

	snprintf(case_name, sizeof(case_name), "%s", name);
	T_CASE(case_name);
	load_run(kernel_bpf, type, flags, insns, n, &k);
	load_run(bpfrt_bpf, type, flags, insns, n, &b);
	T_EQ_INT(k.r.fd >= 0, b.r.fd >= 0);
	T_EQ_INT(k.r.err, b.r.err);
	if (k.r.fd < 0 && strcmp(k.r.last, b.r.last))
		T_FAIL("%s: error line: kernel '%s', bpfrt '%s'", name, k.r.last, b.r.last);
	if (k.r.fd >= 0 && b.r.fd >= 0) {
		T_EQ_INT(k.run_err, b.run_err);
		T_EQ_INT((int32_t)k.retval, (int32_t)b.retval);
		runs++;
	}
	if (getenv("KFUNC_DUMP"))
		fprintf(stderr, "%s: kernel %d %s run %d/%d | bpfrt %d %s run %d/%d\n", name,
			k.r.err, k.r.last, k.run_err, (int32_t)k.retval, b.r.err, b.r.last,
			b.run_err, (int32_t)b.retval);
	compared++;
}

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

static void ct_cases(void)
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

static void ct_rules(void)
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
#undef K
}

static void cpumask_rules(void)
{
	struct bpf_insn create_release[] = { KCALL(ids_mask_create, 0), MOV_K(6, 0),
					     JEQ_K(0, 0, 3), MOV_K(6, 1), MOV_X(1, 0),
					     KCALL(ids_mask_release, 0), MOV_X(0, 6), EXIT() };
	struct bpf_insn leak[] = { KCALL(ids_mask_create, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn no_null[] = { KCALL(ids_mask_create, 0), MOV_X(1, 0),
				      KCALL(ids_mask_release, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn acquire[] = { KCALL(ids_mask_create, 0), JEQ_K(0, 0, 7), MOV_X(6, 0),
				      MOV_X(1, 0), KCALL(ids_mask_acquire, 0), MOV_X(1, 0),
				      KCALL(ids_mask_release, 0), MOV_X(1, 6),
				      KCALL(ids_mask_release, 0), MOV_K(0, 2), EXIT() };
	struct bpf_insn acquire_leak[] = { KCALL(ids_mask_create, 0), JEQ_K(0, 0, 5),
					   MOV_X(6, 0), MOV_X(1, 0), KCALL(ids_mask_acquire, 0),
					   MOV_X(1, 6), KCALL(ids_mask_release, 0), MOV_K(0, 0),
					   EXIT() };
	struct bpf_insn acquire_null[] = { MOV_K(1, 0), KCALL(ids_mask_acquire, 0), MOV_K(0, 0),
					   EXIT() };
	struct bpf_insn acquire_ctx[] = { KCALL(ids_mask_acquire, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn acquire_stack[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
					    KCALL(ids_mask_acquire, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn twice[] = { KCALL(ids_mask_create, 0), JEQ_K(0, 0, 5), MOV_X(6, 0),
				    MOV_X(1, 0), KCALL(ids_mask_release, 0), MOV_X(1, 6),
				    KCALL(ids_mask_release, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn release_off[] = { KCALL(ids_mask_create, 0), JEQ_K(0, 0, 3),
					  MOV_X(1, 0), ADD_K(1, 8), KCALL(ids_mask_release, 0),
					  MOV_K(0, 0), EXIT() };
	struct bpf_insn read_mask[] = { KCALL(ids_mask_create, 0), JEQ_K(0, 0, 4),
					LDX(BPF_DW, 7, 0, 0), MOV_X(1, 0),
					KCALL(ids_mask_release, 0), MOV_X(0, 7), MOV_K(0, 3),
					EXIT() };
	struct bpf_insn write_mask[] = { KCALL(ids_mask_create, 0), JEQ_K(0, 0, 4),
					 ST(BPF_DW, 0, 0, 1), MOV_X(1, 0),
					 KCALL(ids_mask_release, 0), MOV_K(0, 0), EXIT() };
	/* a weak kfunc's presence test: lddw BPF_PSEUDO_BTF_ID of the FUNC */
	struct bpf_insn weak[] = { MOV_K(6, 0), LDDW(1, BPF_PSEUDO_BTF_ID, ids_mask_create, 0),
				   JEQ_K(1, 0, 5), KCALL(ids_mask_create, 0), MOV_K(6, 1),
				   JEQ_K(0, 0, 2), MOV_X(1, 0), KCALL(ids_mask_release, 0),
				   MOV_X(0, 6), EXIT() };
#define K(name, p)                                                                        \
	kcheck(name, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, sizeof(p) / sizeof(p[0]))
	K("cpumask create and release", create_release);
	K("cpumask leak", leak);
	K("cpumask release without NULL check", no_null);
	K("cpumask acquire", acquire);
	K("cpumask acquire leaks", acquire_leak);
	K("cpumask acquire NULL", acquire_null);
	K("cpumask acquire the context", acquire_ctx);
	K("cpumask acquire the stack", acquire_stack);
	K("cpumask release twice", twice);
	K("cpumask release at an offset", release_off);
	K("cpumask read", read_mask);
	K("cpumask write", write_mask);
	K("cpumask weak presence test", weak);
#undef K
	kcheck("cpumask in tc", BPF_PROG_TYPE_SCHED_CLS, 0, create_release,
	       sizeof(create_release) / sizeof(create_release[0]));
}

/* lddw BPF_PSEUDO_BTF_ID (check_pseudo_btf_id()) */
static void ksym_rules(const struct brt_btf *vml, int intid)
{
	int rq = brt_btf_find(vml, "runqueues", BTF_KIND_VAR);
	int active = brt_btf_find(vml, "bpf_prog_active", BTF_KIND_VAR);
	struct bpf_insn func_ok[] = { LDDW(1, BPF_PSEUDO_BTF_ID, ids_mask_create, 0),
				      JNE_K(1, 0, 1), MOV_K(0, 7), MOV_K(0, 1), EXIT() };
	struct bpf_insn func_read[] = { LDDW(1, BPF_PSEUDO_BTF_ID, ids_mask_create, 0),
					LDX(BPF_B, 0, 1, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn func_write[] = { LDDW(1, BPF_PSEUDO_BTF_ID, ids_mask_create, 0),
					 ST(BPF_B, 1, 0, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn func_ret[] = { LDDW(0, BPF_PSEUDO_BTF_ID, ids_mask_create, 0), EXIT() };
	struct bpf_insn percpu_read[] = { LDDW(1, BPF_PSEUDO_BTF_ID, rq, 0), LDX(BPF_W, 0, 1, 0),
					  MOV_K(0, 0), EXIT() };
	struct bpf_insn percpu_int[] = { LDDW(1, BPF_PSEUDO_BTF_ID, active, 0),
					 JEQ_K(1, 0, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn percpu_int_read[] = { LDDW(1, BPF_PSEUDO_BTF_ID, active, 0),
					      LDX(BPF_W, 0, 1, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn id0[] = { LDDW(1, BPF_PSEUDO_BTF_ID, 0, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn id_int[] = { LDDW(1, BPF_PSEUDO_BTF_ID, intid, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn id_past[] = { LDDW(1, BPF_PSEUDO_BTF_ID, 0x7ffffff0, 0), MOV_K(0, 0),
				      EXIT() };
	struct bpf_insn id_neg[] = { LDDW(1, BPF_PSEUDO_BTF_ID, -5, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn module_fd[] = { LDDW(1, BPF_PSEUDO_BTF_ID, ids_mask_create, 999),
					MOV_K(0, 0), EXIT() };
	struct bpf_insn off_set[] = { I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_BTF_ID, 1,
				       ids_mask_create), I(0, 0, 0, 0, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn src4_last[] = { MOV_K(0, 0), EXIT(),
					I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_BTF_ID, 0,
					  ids_mask_create) };
	static const enum bpf_prog_type types[] = { BPF_PROG_TYPE_SOCKET_FILTER,
						    BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP };
	char name[128];

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
#define K(nm, p)                                                                          \
	do {                                                                              \
		snprintf(name, sizeof(name), "type %d: %s", (int)types[t], nm);            \
		kcheck(name, types[t], 0, p, sizeof(p) / sizeof(p[0]));            \
	} while (0)
		K("ksym func presence", func_ok);
		K("ksym func read", func_read);
		K("ksym func write", func_write);
		K("ksym func returned", func_ret);
		if (rq > 0)
			K("ksym percpu struct read", percpu_read);
		if (active > 0) {
			K("ksym percpu int NULL test", percpu_int);
			K("ksym percpu int read", percpu_int_read);
		}
		K("ksym id 0", id0);
		K("ksym id of an int", id_int);
		K("ksym id past the end", id_past);
		K("ksym id negative", id_neg);
		K("ksym module fd", module_fd);
		K("ksym off set", off_set);
		K("ksym lddw cut short", src4_last);
#undef K
	}
}

/* bpf_rcu_read_lock/unlock (every program type): the section's rules */
static void rcu_rules(int lock, int unlock)
{
	struct bpf_insn ok[] = { KCALL(lock, 0), KCALL(unlock, 0), MOV_K(0, 1), EXIT() };
	struct bpf_insn nested[] = { KCALL(lock, 0), KCALL(lock, 0), KCALL(unlock, 0),
				     KCALL(unlock, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn unmatched[] = { KCALL(unlock, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn exit_inside[] = { KCALL(lock, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn one_path[] = { MOV_X(6, 1), I(BPF_JMP | BPF_CALL, 0, 0, 0,
						     BPF_FUNC_get_prandom_u32),
				       JEQ_K(0, 0, 1), KCALL(lock, 0), KCALL(unlock, 0),
				       MOV_K(0, 0), EXIT() };
	struct bpf_insn helper_inside[] = { KCALL(lock, 0),
					    I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns),
					    KCALL(unlock, 0), MOV_K(0, 2), EXIT() };
	struct bpf_insn subprog_inside[] = { KCALL(lock, 0), I(BPF_JMP | BPF_CALL, 0, 1, 0, 3),
					     KCALL(unlock, 0), MOV_K(0, 3), EXIT(), MOV_K(0, 0),
					     EXIT() };
	struct bpf_insn subprog_locks[] = { I(BPF_JMP | BPF_CALL, 0, 1, 0, 3), KCALL(unlock, 0),
					    MOV_K(0, 3), EXIT(), KCALL(lock, 0), MOV_K(0, 0),
					    EXIT() };
	struct bpf_insn ld_abs_inside[] = { MOV_X(6, 1), KCALL(lock, 0),
					    I(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, 0),
					    KCALL(unlock, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn loop_paths[] = { MOV_K(7, 0), KCALL(lock, 0), KCALL(unlock, 0),
					 ADD_K(7, 1), I(BPF_JMP | BPF_JLT | BPF_K, 7, 0, -4, 4),
					 MOV_X(0, 7), EXIT() };
	static const enum bpf_prog_type types[] = { BPF_PROG_TYPE_SOCKET_FILTER,
						    BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP,
						    BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_SYSCALL };
	char name[128];

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		uint32_t fl = types[t] == BPF_PROG_TYPE_SYSCALL ? BPF_F_SLEEPABLE : 0;
#define K(nm, p)                                                                          \
	do {                                                                              \
		snprintf(name, sizeof(name), "type %d: rcu %s", (int)types[t], nm);        \
		kcheck(name, types[t], fl, p, sizeof(p) / sizeof(p[0]));                   \
	} while (0)
		K("lock and unlock", ok);
		K("nested", nested);
		K("unmatched unlock", unmatched);
		K("exit inside", exit_inside);
		K("lock on one path", one_path);
		K("helper inside", helper_inside);
		K("subprogram inside", subprog_inside);
		K("subprogram locks", subprog_locks);
		K("loop", loop_paths);
		if (types[t] == BPF_PROG_TYPE_SOCKET_FILTER || types[t] == BPF_PROG_TYPE_SCHED_CLS)
			K("LD_ABS inside", ld_abs_inside);
#undef K
	}
}

/* bpf_preempt_disable/enable (every program type): sections that nest, with the rules of
 * the RCU section's kind */
static void preempt_rules(int dis, int en, int lock, int unlock)
{
	struct bpf_insn ok[] = { KCALL(dis, 0), KCALL(en, 0), MOV_K(0, 1), EXIT() };
	struct bpf_insn nested[] = { KCALL(dis, 0), KCALL(dis, 0), KCALL(en, 0), KCALL(en, 0),
				     MOV_K(0, 2), EXIT() };
	struct bpf_insn missing[] = { KCALL(dis, 0), KCALL(dis, 0), KCALL(en, 0), MOV_K(0, 0),
				      EXIT() };
	struct bpf_insn unmatched[] = { KCALL(dis, 0), KCALL(en, 0), KCALL(en, 0), MOV_K(0, 0),
					EXIT() };
	struct bpf_insn one_path[] = { I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_prandom_u32),
				       JEQ_K(0, 0, 1), KCALL(dis, 0), KCALL(en, 0), MOV_K(0, 0),
				       EXIT() };
	struct bpf_insn one_path_open[] = { I(BPF_JMP | BPF_CALL, 0, 0, 0,
					      BPF_FUNC_get_prandom_u32),
					    JEQ_K(0, 0, 1), KCALL(dis, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn subprog_pair[] = { I(BPF_JMP | BPF_CALL, 0, 1, 0, 3),
					   I(BPF_JMP | BPF_CALL, 0, 1, 0, 4), MOV_K(0, 3), EXIT(),
					   KCALL(dis, 0), EXIT(), KCALL(en, 0), EXIT() };
	struct bpf_insn subprog_open[] = { I(BPF_JMP | BPF_CALL, 0, 1, 0, 2), MOV_K(0, 3),
					   EXIT(), KCALL(dis, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn helper_inside[] = { KCALL(dis, 0),
					    I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns),
					    KCALL(en, 0), MOV_K(0, 2), EXIT() };
	struct bpf_insn ld_abs_inside[] = { MOV_X(6, 1), KCALL(dis, 0),
					    I(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, 0), KCALL(en, 0),
					    MOV_K(0, 0), EXIT() };
	struct bpf_insn loop_paths[] = { MOV_K(7, 0), KCALL(dis, 0), KCALL(en, 0), ADD_K(7, 1),
					 I(BPF_JMP | BPF_JLT | BPF_K, 7, 0, -4, 4), MOV_X(0, 7),
					 EXIT() };
	struct bpf_insn loop_grows[] = { MOV_K(7, 0), KCALL(dis, 0), ADD_K(7, 1),
					 I(BPF_JMP | BPF_JLT | BPF_K, 7, 0, -3, 3), MOV_K(0, 0),
					 EXIT() };
	struct bpf_insn with_rcu[] = { KCALL(lock, 0), KCALL(dis, 0), KCALL(unlock, 0),
				       KCALL(en, 0), MOV_K(0, 4), EXIT() };
	struct bpf_insn rcu_open[] = { KCALL(dis, 0), KCALL(lock, 0), KCALL(en, 0), MOV_K(0, 0),
				       EXIT() };
	static const enum bpf_prog_type types[] = { BPF_PROG_TYPE_SOCKET_FILTER,
						    BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP,
						    BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_SYSCALL };
	char name[128];

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		uint32_t fl = types[t] == BPF_PROG_TYPE_SYSCALL ? BPF_F_SLEEPABLE : 0;
#define K(nm, p)                                                                          \
	do {                                                                              \
		snprintf(name, sizeof(name), "type %d: preempt %s", (int)types[t], nm);    \
		kcheck(name, types[t], fl, p, sizeof(p) / sizeof(p[0]));                   \
	} while (0)
		K("disable and enable", ok);
		K("nested", nested);
		K("one enable missing", missing);
		K("unmatched enable", unmatched);
		K("on one path", one_path);
		K("left open on one path", one_path_open);
		K("subprograms disable and enable", subprog_pair);
		K("subprogram leaves it disabled", subprog_open);
		K("helper inside", helper_inside);
		K("loop", loop_paths);
		K("loop disabling more each time", loop_grows);
		if (lock > 0 && unlock > 0) {
			K("crossing an RCU section", with_rcu);
			K("RCU section left open", rcu_open);
		}
		if (types[t] == BPF_PROG_TYPE_SOCKET_FILTER || types[t] == BPF_PROG_TYPE_SCHED_CLS)
			K("LD_ABS inside", ld_abs_inside);
#undef K
	}
}

/* ---- tasks, cgroups and cpumask operations (generic and cpumask sets) ---- */
static int kid(const char *name)
{
	return brt_btf_find(brt_btf_vmlinux(), name, BTF_KIND_FUNC);
}

#define CALLH(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define KC(p, insns)                                                                       \
	kcheck(p, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, insns, sizeof(insns) / sizeof(insns[0]))

static void task_cgroup_rules(void)
{
	int from_pid = kid("bpf_task_from_pid"), from_vpid = kid("bpf_task_from_vpid");
	int t_acq = kid("bpf_task_acquire"), t_rel = kid("bpf_task_release");
	int from_id = kid("bpf_cgroup_from_id"), c_acq = kid("bpf_cgroup_acquire");
	int c_rel = kid("bpf_cgroup_release");
	char name[128];

	if (from_pid <= 0 || t_acq <= 0 || t_rel <= 0 || from_id <= 0 || c_acq <= 0 ||
	    c_rel <= 0 || from_vpid <= 0) {
		printf("task/cgroup kfuncs: skipped: not in the kernel's BTF\n");
		return;
	}
	/* found or not, released: 1 or 0 */
	{
		/* pid 1 is left out: this kernel answers NULL for it (a sandbox's init?) */
		static const int32_t pids[] = { 0, -1, 2, 0x3ffffff0, -2 /* getpid() */,
						-3 /* getppid() */ };

		for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
			int32_t pid = pids[i] == -2 ? (int32_t)getpid() : pids[i] == -3 ? (int32_t)getppid() : pids[i];
			struct bpf_insn p[] = { MOV_K(1, pid), KCALL(from_pid, 0), MOV_K(6, 0),
						JEQ_K(0, 0, 3), MOV_K(6, 1), MOV_X(1, 0),
						KCALL(t_rel, 0), MOV_X(0, 6), EXIT() };
			struct bpf_insn v[] = { MOV_K(1, pid), KCALL(from_vpid, 0), MOV_K(6, 0),
						JEQ_K(0, 0, 3), MOV_K(6, 1), MOV_X(1, 0),
						KCALL(t_rel, 0), MOV_X(0, 6), EXIT() };

			snprintf(name, sizeof(name), "task from pid %d", (int)pids[i]);
			KC(name, p);
			snprintf(name, sizeof(name), "task from vpid %d", (int)pids[i]);
			KC(name, v);
		}
	}
	{
		static const int64_t ids[] = { 0, 1, 2, 12345678, -1 };

		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
			struct bpf_insn p[] = { LDDW(1, 0, (int32_t)(uint32_t)ids[i],
						     (int32_t)(uint32_t)((uint64_t)ids[i] >> 32)),
						KCALL(from_id, 0), MOV_K(6, 0), JEQ_K(0, 0, 3),
						MOV_K(6, 1), MOV_X(1, 0), KCALL(c_rel, 0), MOV_X(0, 6),
						EXIT() };

			snprintf(name, sizeof(name), "cgroup from id %lld", (long long)ids[i]);
			KC(name, p);
		}
	}
	{
		struct bpf_insn t_acquire[] = { MOV_K(1, 2), KCALL(from_pid, 0), JEQ_K(0, 0, 9),
						MOV_X(6, 0), MOV_X(1, 0), KCALL(t_acq, 0),
						JEQ_K(0, 0, 2), MOV_X(1, 0), KCALL(t_rel, 0),
						MOV_X(1, 6), KCALL(t_rel, 0), MOV_K(0, 2), EXIT(),
						MOV_K(0, 0), EXIT() };
		struct bpf_insn t_leak[] = { MOV_K(1, 2), KCALL(from_pid, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn t_no_null[] = { MOV_K(1, 2), KCALL(from_pid, 0), MOV_X(1, 0),
						KCALL(t_rel, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn t_rel_current[] = { CALLH(BPF_FUNC_get_current_task_btf),
						    MOV_X(1, 0), KCALL(t_rel, 0), MOV_K(0, 0),
						    EXIT() };
		struct bpf_insn t_acq_current[] = { CALLH(BPF_FUNC_get_current_task_btf),
						    MOV_X(1, 0), KCALL(t_acq, 0), MOV_K(6, 0),
						    JEQ_K(0, 0, 3), MOV_K(6, 1), MOV_X(1, 0),
						    KCALL(t_rel, 0), MOV_X(0, 6), EXIT() };
		struct bpf_insn t_read[] = { MOV_K(1, 2), KCALL(from_pid, 0), JEQ_K(0, 0, 4),
					     LDX(BPF_W, 7, 0, 0), MOV_X(1, 0), KCALL(t_rel, 0),
					     MOV_K(0, 5), EXIT() };
		struct bpf_insn t_write[] = { MOV_K(1, 2), KCALL(from_pid, 0), JEQ_K(0, 0, 4),
					      ST(BPF_W, 0, 0, 1), MOV_X(1, 0), KCALL(t_rel, 0),
					      MOV_K(0, 5), EXIT() };
		struct bpf_insn t_twice[] = { MOV_K(1, 2), KCALL(from_pid, 0), JEQ_K(0, 0, 5),
					      MOV_X(6, 0), MOV_X(1, 0), KCALL(t_rel, 0), MOV_X(1, 6),
					      KCALL(t_rel, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn t_as_cgroup[] = { MOV_K(1, 2), KCALL(from_pid, 0), JEQ_K(0, 0, 3),
						  MOV_X(1, 0), KCALL(c_rel, 0), MOV_K(0, 0),
						  EXIT() };
		struct bpf_insn t_pid_ptr[] = { MOV_X(1, 10), KCALL(from_pid, 0), MOV_K(0, 0),
						EXIT() };
		struct bpf_insn t_stack[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
					      KCALL(t_acq, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn c_acquire[] = { MOV_K(1, 1), KCALL(from_id, 0), JEQ_K(0, 0, 9),
						MOV_X(6, 0), MOV_X(1, 0), KCALL(c_acq, 0),
						JEQ_K(0, 0, 2), MOV_X(1, 0), KCALL(c_rel, 0),
						MOV_X(1, 6), KCALL(c_rel, 0), MOV_K(0, 2), EXIT(),
						MOV_K(0, 0), EXIT() };
		struct bpf_insn c_leak[] = { MOV_K(1, 1), KCALL(from_id, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn c_as_task[] = { MOV_K(1, 1), KCALL(from_id, 0), JEQ_K(0, 0, 3),
						MOV_X(1, 0), KCALL(t_acq, 0), MOV_K(0, 0), EXIT() };

		KC("task acquire and release", t_acquire);
		KC("task leak", t_leak);
		KC("task release without NULL check", t_no_null);
		KC("task release of current", t_rel_current);
		KC("task acquire of current", t_acq_current);
		KC("task read a field", t_read);
		KC("task write a field", t_write);
		KC("task release twice", t_twice);
		KC("task released as a cgroup", t_as_cgroup);
		KC("task pid a pointer", t_pid_ptr);
		KC("task acquire the stack", t_stack);
		KC("cgroup acquire and release", c_acquire);
		KC("cgroup leak", c_leak);
		KC("cgroup acquired as a task (leaks)", c_as_task);
		/* the generic set's program types (and one without it) */
		{
			static const enum bpf_prog_type types[] = {
				BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP,
				BPF_PROG_TYPE_CGROUP_SKB, BPF_PROG_TYPE_SOCKET_FILTER,
				BPF_PROG_TYPE_KPROBE
			};
			struct bpf_insn t_found[] = { MOV_K(1, 2), KCALL(from_pid, 0), MOV_K(6, 0),
						      JEQ_K(0, 0, 3), MOV_K(6, 1), MOV_X(1, 0),
						      KCALL(t_rel, 0), MOV_X(0, 6), EXIT() };
			struct bpf_insn c_found[] = { MOV_K(1, 1), KCALL(from_id, 0), MOV_K(6, 0),
						      JEQ_K(0, 0, 3), MOV_K(6, 1), MOV_X(1, 0),
						      KCALL(c_rel, 0), MOV_X(0, 6), EXIT() };

			for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
				snprintf(name, sizeof(name), "type %d: task from pid 2",
					 (int)types[t]);
				kcheck(name, types[t], 0, t_found,
				       sizeof(t_found) / sizeof(t_found[0]));
				snprintf(name, sizeof(name), "type %d: cgroup from id 1",
					 (int)types[t]);
				kcheck(name, types[t], 0, c_found,
				       sizeof(c_found) / sizeof(c_found[0]));
			}
		}
	}
}

/* cpumask operations on one or two masks of bpf_cpumask_create(): r7 (and r8) the masks,
 * the body's r6 returned after both are released */
static void mask_case(const char *name, int two, const struct bpf_insn *body, size_t nbody)
{
	struct bpf_insn p[MAXP];
	size_t n = 0;

	p[n++] = MOV_K(6, 0);
	p[n++] = KCALL(ids_mask_create, 0);
	p[n++] = JEQ_K(0, 0, (int16_t)(two ? nbody + 11 : nbody + 3)); /* to r0 = r6 */
	p[n++] = MOV_X(7, 0);
	if (two) {
		p[n++] = KCALL(ids_mask_create, 0);
		p[n++] = JNE_K(0, 0, 3);
		p[n++] = MOV_X(1, 7);
		p[n++] = KCALL(ids_mask_release, 0);
		p[n++] = I(BPF_JMP | BPF_JA, 0, 0, (int16_t)(nbody + 5), 0);
		p[n++] = MOV_X(8, 0);
	}
	memcpy(p + n, body, nbody * sizeof(*body));
	n += nbody;
	if (two) {
		p[n++] = MOV_X(1, 8);
		p[n++] = KCALL(ids_mask_release, 0);
	}
	p[n++] = MOV_X(1, 7);
	p[n++] = KCALL(ids_mask_release, 0);
	p[n++] = MOV_X(0, 6);
	p[n++] = EXIT();
	kcheck(name, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
}

static void cpumask_ops_rules(void)
{
	int set = kid("bpf_cpumask_set_cpu"), clr = kid("bpf_cpumask_clear_cpu");
	int test = kid("bpf_cpumask_test_cpu"), tas = kid("bpf_cpumask_test_and_set_cpu");
	int tac = kid("bpf_cpumask_test_and_clear_cpu"), all = kid("bpf_cpumask_setall");
	int clear = kid("bpf_cpumask_clear"), first = kid("bpf_cpumask_first");
	int fzero = kid("bpf_cpumask_first_zero"), fand = kid("bpf_cpumask_first_and");
	int and = kid("bpf_cpumask_and"), or = kid("bpf_cpumask_or"), xor = kid("bpf_cpumask_xor");
	int eq = kid("bpf_cpumask_equal"), inter = kid("bpf_cpumask_intersects");
	int sub = kid("bpf_cpumask_subset"), empty = kid("bpf_cpumask_empty");
	int full = kid("bpf_cpumask_full"), copy = kid("bpf_cpumask_copy");
	int weight = kid("bpf_cpumask_weight");
	char name[128];

	if (set <= 0 || weight <= 0 || copy <= 0 || fand <= 0) {
		printf("cpumask operations: skipped: not in the kernel's BTF\n");
		return;
	}
#define BOOL0 I(BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0, 0xff)
#define M1(nm, ...)                                                                        \
	do {                                                                              \
		struct bpf_insn b_[] = { __VA_ARGS__ };                                    \
		mask_case(nm, 0, b_, sizeof(b_) / sizeof(b_[0]));                          \
	} while (0)
#define M2(nm, ...)                                                                        \
	do {                                                                              \
		struct bpf_insn b_[] = { __VA_ARGS__ };                                    \
		mask_case(nm, 1, b_, sizeof(b_) / sizeof(b_[0]));                          \
	} while (0)
	/* every CPU number from 0 past the possible ones: set, test, weight */
	for (int cpu = 0; cpu < 4; cpu++) {
		snprintf(name, sizeof(name), "cpumask set %d, test it", cpu);
		M1(name, MOV_K(1, cpu), MOV_X(2, 7), KCALL(set, 0), MOV_K(1, cpu), MOV_X(2, 7),
		   KCALL(test, 0), BOOL0, MOV_X(6, 0));
		snprintf(name, sizeof(name), "cpumask set %d, weight", cpu);
		M1(name, MOV_K(1, cpu), MOV_X(2, 7), KCALL(set, 0), MOV_X(1, 7),
		   KCALL(weight, 0), MOV_X(6, 0));
		snprintf(name, sizeof(name), "cpumask set %d, first", cpu);
		M1(name, MOV_K(1, cpu), MOV_X(2, 7), KCALL(set, 0), MOV_X(1, 7),
		   KCALL(first, 0), MOV_X(6, 0));
	}
	M1("cpumask set 5000, test it", MOV_K(1, 5000), MOV_X(2, 7), KCALL(set, 0),
	   MOV_K(1, 5000), MOV_X(2, 7), KCALL(test, 0), BOOL0, MOV_X(6, 0));
	M1("cpumask set -1, weight", MOV_K(1, -1), MOV_X(2, 7), KCALL(set, 0), MOV_X(1, 7),
	   KCALL(weight, 0), MOV_X(6, 0));
	M1("cpumask empty: first", MOV_X(1, 7), KCALL(first, 0), MOV_X(6, 0));
	M1("cpumask empty: first_zero", MOV_X(1, 7), KCALL(fzero, 0), MOV_X(6, 0));
	M1("cpumask empty: empty", MOV_X(1, 7), KCALL(empty, 0), BOOL0, MOV_X(6, 0));
	M1("cpumask empty: full", MOV_X(1, 7), KCALL(full, 0), BOOL0, MOV_X(6, 0));
	M1("cpumask setall: weight", MOV_X(1, 7), KCALL(all, 0), MOV_X(1, 7), KCALL(weight, 0),
	   MOV_X(6, 0));
	M1("cpumask setall: full", MOV_X(1, 7), KCALL(all, 0), MOV_X(1, 7), KCALL(full, 0), BOOL0,
	   MOV_X(6, 0));
	M1("cpumask setall: first_zero", MOV_X(1, 7), KCALL(all, 0), MOV_X(1, 7),
	   KCALL(fzero, 0), MOV_X(6, 0));
	M1("cpumask setall, clear: empty", MOV_X(1, 7), KCALL(all, 0), MOV_X(1, 7),
	   KCALL(clear, 0), MOV_X(1, 7), KCALL(empty, 0), BOOL0, MOV_X(6, 0));
	M1("cpumask setall, clear 0: first", MOV_X(1, 7), KCALL(all, 0), MOV_K(1, 0),
	   MOV_X(2, 7), KCALL(clr, 0), MOV_X(1, 7), KCALL(first, 0), MOV_X(6, 0));
	M1("cpumask test_and_set twice", MOV_K(1, 1), MOV_X(2, 7), KCALL(tas, 0), BOOL0, MOV_X(6, 0),
	   MOV_K(1, 1), MOV_X(2, 7), KCALL(tas, 0), BOOL0, ADD_K(0, 10), I(BPF_ALU64 | BPF_ADD | BPF_X, 6, 0, 0, 0));
	M1("cpumask test_and_clear", MOV_K(1, 1), MOV_X(2, 7), KCALL(set, 0), MOV_K(1, 1),
	   MOV_X(2, 7), KCALL(tac, 0), BOOL0, MOV_X(6, 0), MOV_K(1, 1), MOV_X(2, 7), KCALL(tac, 0), BOOL0,
	   ADD_K(0, 10), I(BPF_ALU64 | BPF_ADD | BPF_X, 6, 0, 0, 0));
	M2("cpumask and (empty result)", MOV_K(1, 0), MOV_X(2, 7), KCALL(set, 0), MOV_K(1, 1),
	   MOV_X(2, 8), KCALL(set, 0), MOV_X(1, 7), MOV_X(2, 7), MOV_X(3, 8), KCALL(and, 0), BOOL0,
	   MOV_X(6, 0), MOV_X(1, 7), KCALL(weight, 0), ADD_K(0, 10),
	   I(BPF_ALU64 | BPF_ADD | BPF_X, 6, 0, 0, 0));
	M2("cpumask and", MOV_X(1, 7), KCALL(all, 0), MOV_K(1, 1), MOV_X(2, 8), KCALL(set, 0),
	   MOV_X(1, 7), MOV_X(2, 7), MOV_X(3, 8), KCALL(and, 0), BOOL0, MOV_X(6, 0), MOV_X(1, 7),
	   KCALL(first, 0), ADD_K(0, 10), I(BPF_ALU64 | BPF_ADD | BPF_X, 6, 0, 0, 0));
	M2("cpumask or", MOV_K(1, 0), MOV_X(2, 7), KCALL(set, 0), MOV_K(1, 1), MOV_X(2, 8),
	   KCALL(set, 0), MOV_X(1, 8), MOV_X(2, 7), MOV_X(3, 8), KCALL(or, 0), MOV_X(1, 8),
	   KCALL(weight, 0), MOV_X(6, 0));
	M2("cpumask xor", MOV_X(1, 7), KCALL(all, 0), MOV_K(1, 1), MOV_X(2, 8), KCALL(set, 0),
	   MOV_X(1, 8), MOV_X(2, 7), MOV_X(3, 8), KCALL(xor, 0), MOV_X(1, 8), KCALL(first, 0),
	   MOV_X(6, 0));
	/* a bool result is the low byte of r0: the kernel's code leaves the rest undefined
	 * (setcc into al), so programs mask it, as these do (bpfrt's is 0) */
	M2("cpumask equal, intersects, subset", MOV_K(1, 1), MOV_X(2, 7), KCALL(set, 0),
	   MOV_X(1, 8), KCALL(all, 0), MOV_X(1, 7), MOV_X(2, 8), KCALL(eq, 0), BOOL0, MOV_X(6, 0),
	   MOV_X(1, 7), MOV_X(2, 8), KCALL(inter, 0), BOOL0,
	   I(BPF_ALU64 | BPF_LSH | BPF_K, 0, 0, 0, 1),
	   I(BPF_ALU64 | BPF_OR | BPF_X, 6, 0, 0, 0), MOV_X(1, 7), MOV_X(2, 8), KCALL(sub, 0),
	   BOOL0, I(BPF_ALU64 | BPF_LSH | BPF_K, 0, 0, 0, 2),
	   I(BPF_ALU64 | BPF_OR | BPF_X, 6, 0, 0, 0), MOV_X(1, 8), MOV_X(2, 7), KCALL(sub, 0),
	   BOOL0, I(BPF_ALU64 | BPF_LSH | BPF_K, 0, 0, 0, 3),
	   I(BPF_ALU64 | BPF_OR | BPF_X, 6, 0, 0, 0));
	M2("cpumask copy, equal", MOV_K(1, 1), MOV_X(2, 7), KCALL(set, 0), MOV_X(1, 8),
	   MOV_X(2, 7), KCALL(copy, 0), MOV_X(1, 7), MOV_X(2, 8), KCALL(eq, 0), BOOL0,
	   MOV_X(6, 0));
	M2("cpumask first_and", MOV_X(1, 7), KCALL(all, 0), MOV_K(1, 1), MOV_X(2, 8),
	   KCALL(set, 0), MOV_X(1, 7), MOV_X(2, 8), KCALL(fand, 0), MOV_X(6, 0));
	/* the verifier: a cpu that is not a scalar, a NULL mask, a mask not held */
	M1("cpumask set_cpu cpu a pointer", MOV_X(1, 10), MOV_X(2, 7), KCALL(set, 0));
	M1("cpumask set_cpu NULL mask", MOV_K(1, 0), MOV_K(2, 0), KCALL(set, 0));
	M1("cpumask test_cpu of the stack", ST(BPF_DW, 10, -8, 0), MOV_K(1, 0), MOV_X(2, 10),
	   ADD_K(2, -8), KCALL(test, 0), BOOL0);
	M1("cpumask set_cpu of current task", CALLH(BPF_FUNC_get_current_task_btf), MOV_K(1, 0),
	   MOV_X(2, 0), KCALL(set, 0));
#undef M1
#undef M2
#undef BOOL0
}

/* bpf_sock_destroy: tracing's hook, iterators only (the set's filter) */
static void load_iter(bpf_fn bpf, int iter_id, const struct bpf_insn *insns, size_t n,
		      struct res *r)
{
	union bpf_attr attr;
	char *line, *save;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_TRACING;
	attr.expected_attach_type = BPF_TRACE_ITER;
	attr.attach_btf_id = (uint32_t)iter_id;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	attr.log_buf = (uintptr_t)logbuf;
	attr.log_size = sizeof(logbuf);
	attr.log_level = 1;
	logbuf[0] = 0;
	r->fd = bpf(BPF_PROG_LOAD, &attr, sizeof(attr));
	r->err = r->fd < 0 ? errno : 0;
	r->last[0] = 0;
	for (line = strtok_r(logbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "processed ", 10))
			break;
		snprintf(r->last, sizeof(r->last), "%s", line);
	}
	if (r->fd >= 0)
		close(r->fd);
}

static void sock_destroy_rules(void)
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
	struct {
		const char *name;
		int iter;
		const struct bpf_insn *p;
		size_t n;
	} cases[] = {
#define SC(nm, it, p) { nm, it, p, sizeof(p) / sizeof(p[0]) }
		SC("sock_destroy iter/tcp", tcp, ok),
		SC("sock_destroy iter/udp", udp, ok),
		SC("sock_destroy without NULL check", tcp, no_null),
		SC("sock_destroy of the context", tcp, ctx_arg),
		SC("sock_destroy at an offset", tcp, offset),
		SC("sock_destroy of NULL", udp, scalar),
		SC("sock_destroy of a task (iter/task)", task, task_arg),
#undef SC
	};

	if (destroy <= 0 || tcp <= 0 || udp <= 0 || task <= 0) {
		printf("bpf_sock_destroy: skipped: not in the kernel's BTF\n");
		return;
	}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct res k, b;

		T_CASE(cases[c].name);
		load_iter(kernel_bpf, cases[c].iter, cases[c].p, cases[c].n, &k);
		load_iter(bpfrt_bpf, cases[c].iter, cases[c].p, cases[c].n, &b);
		T_EQ_INT(k.fd >= 0, b.fd >= 0);
		T_EQ_INT(k.err, b.err);
		if (k.fd < 0 && strcmp(k.last, b.last))
			T_FAIL("%s: error line: kernel '%s', bpfrt '%s'", cases[c].name, k.last,
			       b.last);
		if (getenv("KFUNC_DUMP"))
			fprintf(stderr, "%s: kernel %d %s | bpfrt %d %s\n", cases[c].name, k.err,
				k.last, b.err, b.last);
		compared++;
	}
	/* other programs of tracing's hook: the filter refuses them */
	{
		struct bpf_insn p[] = { MOV_K(1, 0), KCALL(destroy, 0), MOV_K(0, 0), EXIT() };

		kcheck("sock_destroy in a tracepoint", BPF_PROG_TYPE_TRACEPOINT, 0, p, 4);
		kcheck("sock_destroy in a syscall program", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
		       p, 4);
	}
}

/* bpf_copy_from_user_str / bpf_copy_from_user_task_str (sleepable): the source is the
 * test's own memory, which is the current task's user memory for the kernel's run too;
 * the result is (return value << 8) | dst[at], dst 16 bytes of 'a' on the stack */
static const char user_hello[] = "hello";
static const char user_long[] = "hello world, a longer string";

static void copy_str_rules(void)
{
	int cfu = kid("bpf_copy_from_user_str"), cfut = kid("bpf_copy_from_user_task_str");
	int from_pid = kid("bpf_task_from_pid"), t_rel = kid("bpf_task_release");
	int dis = kid("bpf_preempt_disable"), en = kid("bpf_preempt_enable");
	int lock = kid("bpf_rcu_read_lock"), unlock = kid("bpf_rcu_read_unlock");
	struct {
		const char *name;
		uint64_t src;
		int32_t sz, flags, at;
		int task; /* 0 bpf_copy_from_user_str, 1 the current task, 2 by getpid() */
	} cases[] = {
		{ "copy_from_user_str", (uintptr_t)user_hello, 16, 0, 5, 0 },
		{ "copy_from_user_str tail untouched", (uintptr_t)user_hello, 16, 0, 6, 0 },
		{ "copy_from_user_str padded", (uintptr_t)user_hello, 16, 1, 12, 0 },
		{ "copy_from_user_str tail past the word", (uintptr_t)user_hello, 16, 0, 8, 0 },
		{ "copy_from_user_str size 8", (uintptr_t)user_hello, 8, 0, 7, 0 },
		{ "copy_from_user_str size 9", (uintptr_t)user_hello, 9, 0, 7, 0 },
		{ "copy_from_user_str truncated", (uintptr_t)user_long, 8, 0, 7, 0 },
		{ "copy_from_user_str truncated, byte before", (uintptr_t)user_long, 8, 0, 6, 0 },
		{ "copy_from_user_str size 1", (uintptr_t)user_hello, 1, 0, 0, 0 },
		{ "copy_from_user_str NULL", 0, 16, 0, 0, 0 },
		{ "copy_from_user_str NULL padded", 0, 16, 1, 3, 0 },
		{ "copy_from_user_str bad flags", (uintptr_t)user_hello, 16, 2, 0, 0 },
		{ "copy_from_user_str kernel address", UINT64_C(0xffffffffff600000), 16, 0, 0, 0 },
		{ "copy_from_user_task_str current", (uintptr_t)user_hello, 16, 0, 5, 1 },
		{ "copy_from_user_task_str tail of the word", (uintptr_t)user_hello, 16, 0, 7, 1 },
		{ "copy_from_user_task_str tail past the word", (uintptr_t)user_hello, 16, 0, 8, 1 },
		{ "copy_from_user_task_str size 8", (uintptr_t)user_hello, 8, 0, 7, 1 },
		{ "copy_from_user_task_str size 7", (uintptr_t)user_hello, 7, 0, 6, 1 },
		{ "copy_from_user_task_str current padded", (uintptr_t)user_hello, 16, 1, 9, 1 },
		{ "copy_from_user_task_str current truncated", (uintptr_t)user_long, 8, 0, 7, 1 },
		{ "copy_from_user_task_str current NULL", 0, 16, 0, 0, 1 },
		{ "copy_from_user_task_str current NULL, byte 1", 0, 16, 0, 1, 1 },
		{ "copy_from_user_task_str current bad flags", (uintptr_t)user_hello, 16, 4, 0, 1 },
		{ "copy_from_user_task_str by pid", (uintptr_t)user_hello, 16, 0, 5, 2 },
		{ "copy_from_user_task_str by pid truncated", (uintptr_t)user_long, 4, 1, 3, 2 },
	};

	if (cfu <= 0 || cfut <= 0 || from_pid <= 0 || t_rel <= 0) {
		printf("copy_from_user_str: skipped: not in the kernel's BTF\n");
		return;
	}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct bpf_insn p[MAXP];
		size_t n = 0;

		for (int o = -16; o < 0; o += 4)
			p[n++] = ST(BPF_W, 10, (int16_t)o, 0x61616161);
		if (cases[c].task == 1) {
			p[n++] = CALLH(BPF_FUNC_get_current_task_btf);
			p[n++] = MOV_X(4, 0);
		} else if (cases[c].task == 2) {
			p[n++] = MOV_K(1, (int32_t)getpid());
			p[n++] = KCALL(from_pid, 0);
			p[n++] = JNE_K(0, 0, 2);
			p[n++] = MOV_K(0, 99);
			p[n++] = EXIT();
			p[n++] = MOV_X(8, 0);
			p[n++] = MOV_X(4, 0);
		}
		p[n++] = MOV_X(1, 10);
		p[n++] = ADD_K(1, -16);
		p[n++] = MOV_K(2, cases[c].sz);
		p[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 3, 0, 0, (int32_t)(uint32_t)cases[c].src);
		p[n++] = I(0, 0, 0, 0, (int32_t)(uint32_t)(cases[c].src >> 32));
		p[n++] = MOV_K(cases[c].task ? 5 : 4, cases[c].flags);
		p[n++] = KCALL(cases[c].task ? cfut : cfu, 0);
		p[n++] = MOV_X(6, 0);
		if (cases[c].task == 2) {
			p[n++] = MOV_X(1, 8);
			p[n++] = KCALL(t_rel, 0);
		}
		p[n++] = I(BPF_ALU | BPF_LSH | BPF_K, 6, 0, 0, 8);
		p[n++] = LDX(BPF_B, 7, 10, (int16_t)(-16 + cases[c].at));
		p[n++] = I(BPF_ALU | BPF_OR | BPF_X, 6, 7, 0, 0);
		p[n++] = MOV_X(0, 6);
		p[n++] = EXIT();
		kcheck(cases[c].name, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
	}
	/* where a sleepable kfunc may not be called */
	{
		struct bpf_insn plain[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
					    MOV_K(2, 8), MOV_K(3, 0), MOV_K(4, 0), KCALL(cfu, 0),
					    MOV_K(0, 0), EXIT() };
		struct bpf_insn preempt[] = { KCALL(dis, 0), ST(BPF_DW, 10, -8, 0), MOV_X(1, 10),
					      ADD_K(1, -8), MOV_K(2, 8), MOV_K(3, 0), MOV_K(4, 0),
					      KCALL(cfu, 0), KCALL(en, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn rcu[] = { KCALL(lock, 0), ST(BPF_DW, 10, -8, 0), MOV_X(1, 10),
					  ADD_K(1, -8), MOV_K(2, 8), MOV_K(3, 0), MOV_K(4, 0),
					  KCALL(cfu, 0), KCALL(unlock, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn size0[] = { MOV_K(1, 0), MOV_K(2, 0), MOV_K(3, 0), MOV_K(4, 0),
					    KCALL(cfu, 0), EXIT() };
		struct bpf_insn past[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
					   MOV_K(2, 9), MOV_K(3, 0), MOV_K(4, 0), KCALL(cfu, 0),
					   MOV_K(0, 0), EXIT() };
		struct bpf_insn null_task[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
						MOV_K(2, 8), MOV_K(3, 0), MOV_K(4, 0), MOV_K(5, 0),
						KCALL(cfut, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn uninit_dst[] = { MOV_X(1, 10), ADD_K(1, -8), MOV_K(2, 8),
						 MOV_K(3, 0), MOV_K(4, 0), KCALL(cfu, 0),
						 LDX(BPF_DW, 0, 10, -8), MOV_K(0, 1), EXIT() };

		kcheck("copy_from_user_str not sleepable", BPF_PROG_TYPE_SYSCALL, 0, plain, 9);
		kcheck("copy_from_user_str in a socket filter", BPF_PROG_TYPE_SOCKET_FILTER, 0,
		       plain, 9);
		if (dis > 0 && en > 0)
			kcheck("copy_from_user_str preemption disabled", BPF_PROG_TYPE_SYSCALL,
			       BPF_F_SLEEPABLE, preempt, 11);
		kcheck("copy_from_user_str in an RCU section", BPF_PROG_TYPE_SYSCALL,
		       BPF_F_SLEEPABLE, rcu, 11);
		kcheck("copy_from_user_str size 0 of NULL", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
		       size0, 6);
		kcheck("copy_from_user_str past the stack", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
		       past, 9);
		kcheck("copy_from_user_task_str NULL task", BPF_PROG_TYPE_SYSCALL,
		       BPF_F_SLEEPABLE, null_task, 10);
		kcheck("copy_from_user_str into uninitialized stack", BPF_PROG_TYPE_SYSCALL,
		       BPF_F_SLEEPABLE, uninit_dst, 9);
	}
}

/* ---- string kfuncs (bpf_strcmp ... bpf_strnstr, every program type) ---- */
enum { S_CMP, S_CASECMP, S_CHR, S_CHRNUL, S_NCHR, S_RCHR, S_LEN, S_NLEN, S_SPN, S_CSPN, S_STR,
       S_NSTR, S_COUNT };
static const char *const str_names[S_COUNT] = { "bpf_strcmp", "bpf_strcasecmp", "bpf_strchr",
						"bpf_strchrnul", "bpf_strnchr", "bpf_strrchr",
						"bpf_strlen", "bpf_strnlen", "bpf_strspn",
						"bpf_strcspn", "bpf_strstr", "bpf_strnstr" };
static int str_ids[S_COUNT];

/* how an argument is set: a string on the stack, a 64-bit constant, or left alone */
enum { A_NONE, A_STR, A_IMM };
struct sarg {
	int kind;
	const char *str; /* A_STR: stored with its NUL at its own slot of the stack */
	int64_t imm;
};
#define SS(x) { A_STR, (x), 0 }
#define SI(x) { A_IMM, NULL, (x) }

/* r1..r3 as args say, the call, then r0 (or r0 >> 32 when high) returned */
static size_t str_prog(struct bpf_insn *p, int fn, const struct sarg *args, int high)
{
	size_t n = 0;

	for (int a = 0; a < 3; a++) {
		int16_t base = (int16_t)(-32 * (a + 1));

		if (args[a].kind == A_STR) {
			size_t len = strlen(args[a].str);

			for (size_t i = 0; i <= len && i < 32; i++)
				p[n++] = ST(BPF_B, 10, (int16_t)(base + (int)i), (unsigned char)args[a].str[i]);
			p[n++] = MOV_X(a + 1, 10);
			p[n++] = ADD_K(a + 1, base);
		} else if (args[a].kind == A_IMM) {
			p[n++] = I(BPF_LD | BPF_IMM | BPF_DW, a + 1, 0, 0, (int32_t)(uint32_t)args[a].imm);
			p[n++] = I(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)args[a].imm >> 32));
		}
	}
	p[n++] = KCALL(str_ids[fn], 0);
	if (high)
		p[n++] = I(BPF_ALU64 | BPF_RSH | BPF_K, 0, 0, 0, 32);
	p[n++] = EXIT();
	return n;
}

struct scase {
	const char *name;
	int fn;
	struct sarg args[3];
};

static void str_rules(void)
{
	static const struct scase cases[] = {
		{ "strcmp equal", S_CMP, { SS("hello world"), SS("hello world") } },
		{ "strcmp less", S_CMP, { SS("hello"), SS("hellp") } },
		{ "strcmp greater", S_CMP, { SS("b"), SS("a") } },
		{ "strcmp prefix", S_CMP, { SS("hello"), SS("hello world") } },
		{ "strcmp bytes above 127", S_CMP, { SS("\xe9"), SS("a") } },
		{ "strcmp NULL", S_CMP, { SI(0), SS("hello") } },
		{ "strcmp NULL second", S_CMP, { SS("hello"), SI(0) } },
		{ "strcmp user pointer", S_CMP, { SI(1), SS("hello") } },
		{ "strcmp kernel fault", S_CMP, { SS("hello"), SI(-1) } },
		{ "strcmp non-canonical", S_CMP, { SI(INT64_MIN), SS("hello") } },
		{ "strcmp high user half", S_CMP, { SI(0x7fff00000000), SS("hello") } },
		{ "strcasecmp equal", S_CASECMP, { SS("HeLLo WORLD"), SS("hello world") } },
		{ "strcasecmp differs", S_CASECMP, { SS("HELLO"), SS("help") } },
		{ "strcasecmp Latin-1", S_CASECMP, { SS("\xc9t\xc9"), SS("\xe9t\xe9") } },
		{ "strcasecmp Latin-1 multiply sign", S_CASECMP, { SS("\xd7"), SS("\xf7") } },
		{ "strcasecmp NULL", S_CASECMP, { SS("a"), SI(0) } },
		{ "strchr found", S_CHR, { SS("hello"), SI('l') } },
		{ "strchr not found", S_CHR, { SS("hello"), SI('x') } },
		{ "strchr the NUL", S_CHR, { SS("hello"), SI(0) } },
		{ "strchr char is the low byte", S_CHR, { SS("hello"), SI(0x7700006c) } },
		{ "strchr NULL", S_CHR, { SI(0), SI('a') } },
		{ "strchr kernel fault", S_CHR, { SI(-1), SI('a') } },
		{ "strchrnul found", S_CHRNUL, { SS("hello"), SI('e') } },
		{ "strchrnul not found", S_CHRNUL, { SS("hello"), SI('x') } },
		{ "strchrnul user pointer", S_CHRNUL, { SI(1), SI('x') } },
		{ "strnchr found", S_NCHR, { SS("hello"), SI(3), SI('l') } },
		{ "strnchr past count", S_NCHR, { SS("hello"), SI(2), SI('l') } },
		{ "strnchr count 0", S_NCHR, { SS("hello"), SI(0), SI('h') } },
		{ "strnchr huge count", S_NCHR, { SS("hello"), SI(INT64_C(1) << 40), SI('o') } },
		{ "strnchr the NUL", S_NCHR, { SS("hello"), SI(6), SI(0) } },
		{ "strnchr count 0 of NULL", S_NCHR, { SI(0), SI(0), SI('a') } },
		{ "strrchr found", S_RCHR, { SS("hello"), SI('l') } },
		{ "strrchr int above 255", S_RCHR, { SS("hello"), SI(0x16c) } },
		{ "strrchr int's low 32 bits", S_RCHR, { SS("hello"), SI(INT64_C(0x50000006c)) } },
		{ "strrchr the NUL", S_RCHR, { SS("hello"), SI(0) } },
		{ "strrchr not found", S_RCHR, { SS("hello"), SI('z') } },
		{ "strrchr kernel fault", S_RCHR, { SI(-1), SI('z') } },
		{ "strlen", S_LEN, { SS("hello world") } },
		{ "strlen empty", S_LEN, { SS("") } },
		{ "strlen NULL", S_LEN, { SI(0) } },
		{ "strlen kernel fault", S_LEN, { SI(-1) } },
		{ "strlen untouched r1 (the context)", S_LEN, { { A_NONE, NULL, 0 } } },
		{ "strnlen shorter", S_NLEN, { SS("hello"), SI(3) } },
		{ "strnlen longer", S_NLEN, { SS("hello"), SI(30) } },
		{ "strnlen 0 of NULL", S_NLEN, { SI(0), SI(0) } },
		{ "strnlen negative count", S_NLEN, { SS("hello"), SI(-1) } },
		{ "strspn", S_SPN, { SS("hello"), SS("ehl") } },
		{ "strspn all", S_SPN, { SS("hello"), SS("oleh") } },
		{ "strspn empty set", S_SPN, { SS("hello"), SS("") } },
		{ "strspn NULL set", S_SPN, { SS("hello"), SI(0) } },
		{ "strcspn", S_CSPN, { SS("hello"), SS("lo") } },
		{ "strcspn none", S_CSPN, { SS("hello"), SS("xyz") } },
		{ "strcspn kernel fault", S_CSPN, { SI(-1), SS("xyz") } },
		{ "strstr found", S_STR, { SS("hello world"), SS("world") } },
		{ "strstr not found", S_STR, { SS("hello world"), SS("worlds") } },
		{ "strstr empty", S_STR, { SS("hello"), SS("") } },
		{ "strstr in empty", S_STR, { SS(""), SS("a") } },
		{ "strstr NULL", S_STR, { SS("hello"), SI(0) } },
		{ "strnstr found", S_NSTR, { SS("hello"), SS("llo"), SI(5) } },
		{ "strnstr cut", S_NSTR, { SS("hello"), SS("llo"), SI(4) } },
		{ "strnstr empty in empty", S_NSTR, { SS(""), SS(""), SI(0) } },
		{ "strnstr len 0", S_NSTR, { SS("hello"), SS("h"), SI(0) } },
		{ "strnstr past the string", S_NSTR, { SS("hi"), SS("hix"), SI(10) } },
		{ "strnstr kernel fault", S_NSTR, { SS("hello"), SI(-1), SI(3) } },
	};
	struct bpf_insn p[MAXP * 2];
	char name[160];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t n = str_prog(p, cases[c].fn, cases[c].args, 0);

		kcheck(cases[c].name, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
	}
	/* r0's upper half of an int result (negative and not) */
	{
		static const struct sarg neg[3] = { SS("hello"), SI('x') }, pos[3] = { SS("hello"),
										      SI('o') };
		size_t n = str_prog(p, S_CHR, neg, 1);

		kcheck("strchr -ENOENT r0 >> 32", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
		n = str_prog(p, S_CHR, pos, 1);
		kcheck("strchr found r0 >> 32", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
	}
	/* other program types (the common set), with test runs where they run */
	{
		static const enum bpf_prog_type types[] = { BPF_PROG_TYPE_SOCKET_FILTER,
							    BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP,
							    BPF_PROG_TYPE_KPROBE,
							    BPF_PROG_TYPE_SCHED_ACT };
		static const struct sarg len[3] = { SS("hello") }, cmp[3] = { SS("ab"), SS("aB") };

		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			size_t n = str_prog(p, S_LEN, len, 0);

			snprintf(name, sizeof(name), "type %d: strlen", (int)types[t]);
			kcheck(name, types[t], 0, p, n);
			n = str_prog(p, S_CASECMP, cmp, 0);
			snprintf(name, sizeof(name), "type %d: strcasecmp", (int)types[t]);
			kcheck(name, types[t], 0, p, n);
		}
	}
	/* the verifier: __ign arguments are not looked at; scalars must be scalars */
	{
		struct bpf_insn uninit_s[] = { MOV_K(2, 'a'), MOV_K(1, 0), KCALL(str_ids[S_CHR], 0),
					       EXIT() };
		struct bpf_insn uninit_c[] = { MOV_K(1, 0), KCALL(str_ids[S_CHR], 0), EXIT() };
		struct bpf_insn ptr_c[] = { MOV_K(1, 0), MOV_X(2, 10), KCALL(str_ids[S_CHR], 0),
					    EXIT() };
		struct bpf_insn ctx_s[] = { MOV_X(6, 1), MOV_K(2, 0), MOV_K(0, 0),
					    KCALL(str_ids[S_CMP], 0), EXIT() };
		struct bpf_insn r0_after[] = { MOV_K(1, 0), KCALL(str_ids[S_LEN], 0),
					       MOV_X(0, 3), EXIT() };
		struct bpf_insn uninit_stack[] = { MOV_X(1, 10), ADD_K(1, -8),
						   KCALL(str_ids[S_LEN], 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn count_ptr[] = { MOV_K(1, 0), MOV_X(2, 10),
						KCALL(str_ids[S_NLEN], 0), EXIT() };
		struct bpf_insn len_uninit[] = { MOV_K(1, 0), MOV_K(2, 0),
						 KCALL(str_ids[S_NSTR], 0), EXIT() };

		kcheck("str: r1 is __ign, r2 set", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, uninit_s,
		       sizeof(uninit_s) / sizeof(uninit_s[0]));
		kcheck("str: char argument uninitialized", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, uninit_c,
		       sizeof(uninit_c) / sizeof(uninit_c[0]));
		kcheck("str: char argument a pointer", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, ptr_c,
		       sizeof(ptr_c) / sizeof(ptr_c[0]));
		kcheck("str: ctx and NULL compared", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, ctx_s,
		       sizeof(ctx_s) / sizeof(ctx_s[0]));
		kcheck("str: r3 read after the call", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, r0_after,
		       sizeof(r0_after) / sizeof(r0_after[0]));
		kcheck("str: uninitialized stack as __ign", BPF_PROG_TYPE_SOCKET_FILTER, 0,
		       uninit_stack, sizeof(uninit_stack) / sizeof(uninit_stack[0]));
		kcheck("str: size_t count a pointer", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, count_ptr,
		       sizeof(count_ptr) / sizeof(count_ptr[0]));
		kcheck("str: size_t len uninitialized", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, len_uninit,
		       sizeof(len_uninit) / sizeof(len_uninit[0]));
	}
}

/* Strings longer than the kernel's XATTR_SIZE_MAX (65536): an array map's value of
 * 65537 'a' bytes without a NUL, one map on each side, its value read in place. */
static void str_long_rules(void)
{
	enum { VSZ = 65537 };
	struct {
		const char *name;
		int fn;
		int64_t arg2; /* -1: the value again, -2: "a" on the stack, else a scalar */
	} cases[] = {
		{ "strlen too long", S_LEN, 0 },
		{ "strnlen too long", S_NLEN, 70000 },
		{ "strnlen 65536", S_NLEN, 65536 },
		{ "strnlen 65535", S_NLEN, 65535 },
		{ "strcmp too long", S_CMP, -1 },
		{ "strcasecmp too long", S_CASECMP, -1 },
		{ "strchr too long", S_CHR, 'b' },
		{ "strchrnul too long", S_CHRNUL, 'b' },
		{ "strrchr too long", S_RCHR, 'b' },
		{ "strspn too long", S_SPN, -2 },
		{ "strcspn set too long", S_CSPN, -1 },
		{ "strstr too long", S_STR, -1 },
	};
	static unsigned char val[VSZ];
	int fds[2] = { -1, -1 };
	bpf_fn fns[2] = { kernel_bpf, bpfrt_bpf };

	memset(val, 'a', sizeof(val));
	for (int side = 0; side < 2; side++) {
		union bpf_attr attr;
		uint32_t key = 0;

		memset(&attr, 0, sizeof(attr));
		attr.map_type = BPF_MAP_TYPE_ARRAY;
		attr.key_size = 4;
		attr.value_size = VSZ;
		attr.max_entries = 1;
		fds[side] = fns[side](BPF_MAP_CREATE, &attr, sizeof(attr));
		if (fds[side] < 0)
			break;
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (uint32_t)fds[side];
		attr.key = (uintptr_t)&key;
		attr.value = (uintptr_t)val;
		if (fns[side](BPF_MAP_UPDATE_ELEM, &attr, sizeof(attr)))
			fds[side] = -1;
	}
	if (fds[0] < 0 || fds[1] < 0) {
		printf("long strings: skipped: no %d-byte array map\n", VSZ);
		return;
	}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct kres r[2];

		T_CASE(cases[c].name);
		for (int side = 0; side < 2; side++) {
			/* r1 = the value (a direct value address: lddw BPF_PSEUDO_MAP_VALUE) */
			struct bpf_insn p[16];
			size_t n = 0;

			p[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_VALUE, 0, fds[side]);
			p[n++] = I(0, 0, 0, 0, 0);
			if (cases[c].arg2 == -1) {
				p[n++] = MOV_X(2, 1);
			} else if (cases[c].arg2 == -2) {
				p[n++] = ST(BPF_H, 10, -8, 'a');
				p[n++] = MOV_X(2, 10);
				p[n++] = ADD_K(2, -8);
			} else {
				p[n++] = MOV_K(2, (int32_t)cases[c].arg2);
			}
			p[n++] = KCALL(str_ids[cases[c].fn], 0);
			p[n++] = EXIT();
			load_run(fns[side], BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n, &r[side]);
		}
		T_EQ_INT(r[0].r.fd >= 0, r[1].r.fd >= 0);
		T_EQ_INT(r[0].r.err, r[1].r.err);
		T_EQ_INT(r[0].run_err, r[1].run_err);
		T_EQ_INT((int32_t)r[0].retval, (int32_t)r[1].retval);
		if (getenv("KFUNC_DUMP"))
			fprintf(stderr, "%s: kernel %d %s run %d/%d | bpfrt %d %s run %d/%d\n",
				cases[c].name, r[0].r.err, r[0].r.last, r[0].run_err,
				(int32_t)r[0].retval, r[1].r.err, r[1].r.last, r[1].run_err,
				(int32_t)r[1].retval);
		compared++;
		if (r[0].r.fd >= 0 && r[1].r.fd >= 0)
			runs++;
	}
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	int cpumask, intid = 0, structid;

	if (geteuid() != 0)
		T_SKIP("not root: kfunc calls need CAP_BPF");
	if (!vml)
		T_SKIP("no kernel BTF");
	cpumask = brt_btf_find(vml, "bpf_cpumask_create", BTF_KIND_FUNC);
	structid = brt_btf_find(vml, "task_struct", BTF_KIND_STRUCT);
	for (int id = 1; id < 100 && !intid; id++) {
		const struct btf_type *t = brt_btf_type(vml, (uint32_t)id);

		if (t && BTF_INFO_KIND(t->info) == BTF_KIND_INT)
			intid = id;
	}
	if (cpumask <= 0 || structid <= 0 || !intid)
		T_SKIP("kernel BTF without bpf_cpumask_create / task_struct");

	static const enum bpf_prog_type types[] = { BPF_PROG_TYPE_SOCKET_FILTER,
						    BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP,
						    BPF_PROG_TYPE_KPROBE };
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		/* id 0 in dead code (r0 = 0; if r0 == 0 goto exit; call) and reached */
		struct bpf_insn dead[] = { MOV_K(0, 0), I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, 0),
					   KCALL(0, 0), EXIT() };
		struct bpf_insn live[] = { KCALL(0, 0), MOV_K(0, 0), EXIT() };
		/* a type that is not a function, a struct, an id past the end */
		struct bpf_insn not_func[] = { KCALL(intid, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn not_func2[] = { KCALL(structid, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn past[] = { KCALL(0x7ffffff0, 0), MOV_K(0, 0), EXIT() };
		/* a kernel function this type may not call (cpumask: tracing, lsm, syscall...) */
		struct bpf_insn not_allowed[] = { KCALL(cpumask, 0), MOV_K(0, 0), EXIT() };
		/* in dead code, a real one still passes the load-time checks */
		struct bpf_insn dead_real[] = { MOV_K(0, 0), I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, 0),
						KCALL(cpumask, 0), EXIT() };
		/* a module offset: without fd_array, negative */
		struct bpf_insn module[] = { KCALL(cpumask, 1), MOV_K(0, 0), EXIT() };
		struct bpf_insn module_neg[] = { KCALL(cpumask, -1), MOV_K(0, 0), EXIT() };
		struct bpf_insn module_zero[] = { KCALL(0, 2), MOV_K(0, 0), EXIT() };
		/* reserved fields: dst_reg set, a helper call with off, BPF_X */
		struct bpf_insn reserved[] = { I(BPF_JMP | BPF_CALL, 1, BPF_PSEUDO_KFUNC_CALL, 0,
						 cpumask), MOV_K(0, 0), EXIT() };
		struct bpf_insn helper_off[] = { I(BPF_JMP | BPF_CALL, 0, 0, 3, BPF_FUNC_ktime_get_ns),
						 MOV_K(0, 0), EXIT() };
		struct bpf_insn src3[] = { I(BPF_JMP | BPF_CALL, 0, 3, 0, cpumask), MOV_K(0, 0),
					   EXIT() };
#define C(name, p) check(name, types[t], p, sizeof(p) / sizeof(p[0]), "GPL")
		C("id 0 in dead code", dead);
		C("id 0 reached", live);
		C("int type", not_func);
		C("struct type", not_func2);
		C("id past the end", past);
		C("not allowed for the type", not_allowed);
		C("real kfunc in dead code", dead_real);
		C("module offset without fd_array", module);
		C("negative module offset", module_neg);
		C("id 0 with an offset", module_zero);
		C("dst_reg set", reserved);
		C("helper call with off", helper_off);
		C("src_reg 3", src3);
		check("not GPL", types[t], not_allowed, 3, "Dual BSD");
		check("not GPL, id 0", types[t], dead, 4, "Proprietary");
#undef C
	}
	ids_lookup_skb = brt_btf_find(vml, "bpf_skb_ct_lookup", BTF_KIND_FUNC);
	ids_lookup_xdp = brt_btf_find(vml, "bpf_xdp_ct_lookup", BTF_KIND_FUNC);
	ids_release = brt_btf_find(vml, "bpf_ct_release", BTF_KIND_FUNC);
	ids_mask_create = cpumask;
	ids_mask_release = brt_btf_find(vml, "bpf_cpumask_release", BTF_KIND_FUNC);
	ids_mask_acquire = brt_btf_find(vml, "bpf_cpumask_acquire", BTF_KIND_FUNC);
	if (ids_lookup_skb > 0 && ids_lookup_xdp > 0 && ids_release > 0) {
		ct_cases();
		ct_rules();
	} else {
		printf("conntrack kfuncs: skipped: kernel BTF without nf_conntrack\n");
	}
	if (ids_mask_release > 0 && ids_mask_acquire > 0) {
		cpumask_rules();
		cpumask_ops_rules();
	}
	task_cgroup_rules();
	sock_destroy_rules();
	copy_str_rules();
	ksym_rules(vml, intid);
	{
		int lock = brt_btf_find(vml, "bpf_rcu_read_lock", BTF_KIND_FUNC);
		int unlock = brt_btf_find(vml, "bpf_rcu_read_unlock", BTF_KIND_FUNC);

		int dis = brt_btf_find(vml, "bpf_preempt_disable", BTF_KIND_FUNC);
		int en = brt_btf_find(vml, "bpf_preempt_enable", BTF_KIND_FUNC);

		if (lock > 0 && unlock > 0)
			rcu_rules(lock, unlock);
		if (dis > 0 && en > 0)
			preempt_rules(dis, en, lock, unlock);
	}
	{
		int have = 1;

		for (int f = 0; f < S_COUNT; f++) {
			str_ids[f] = brt_btf_find(vml, str_names[f], BTF_KIND_FUNC);
			have &= str_ids[f] > 0;
		}
		if (have) {
			str_rules();
			str_long_rules();
		} else {
			printf("string kfuncs: skipped: kernel BTF without bpf_strcmp ...\n");
		}
	}
	printf("%d comparisons with the kernel, %d test runs\n", compared, runs);
	return t_done();
}
