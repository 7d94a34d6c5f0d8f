/* test_prog_types_diff.c - every program type bpfrt verifies, against the kernel's
 * bpf(2) (issue 15): for each type and expected_attach_type, BPF_PROG_LOAD of programs
 * that read and write every context offset with every size (valid, invalid, narrow,
 * pointer fields and what follows them), return values in and out of the type's range,
 * and a call of each helper bpfrt offers; the verdict, errno and first error line of the
 * log must be the kernel's; attach types a type refuses are refused as the kernel
 * refuses them.  (Types that need kernel BTF, tracing, lsm, ext and struct_ops, have
 * tests of their own.)
 * BPF_PROG_TEST_RUN of cgroup_skb, lwt, syscall and netfilter programs: same errno,
 * retval (and the context a syscall program wrote).
 * Needs root and bpf() (skipped otherwise).  -v lists every case.
 */
#include <stdio.h>

#include "harness.h"
#include "host_kernel.h"
#include "api/diff.h"

#ifndef BPF_PROG_TYPE_NETFILTER_NR
#define BPF_PROG_TYPE_NETFILTER_NR 32
#endif

/* attach types newer than the 6.1 uapi header (Linux 6.18's numbers) */
enum {
	AT_NETFILTER = 45, AT_UNIX_CONNECT = 49, AT_UNIX_SENDMSG, AT_UNIX_RECVMSG,
	AT_UNIX_GETPEERNAME, AT_UNIX_GETSOCKNAME,
};

struct combo {
	const char *name;
	uint32_t type;
	uint32_t attach;
	int ctx_end;   /* sweep the context up to this offset (+8) */
	int refused;   /* only the baseline: the load is refused before the verifier */
	int test_run;  /* test-run each accepted program on a 64-byte packet */
	uint32_t flags; /* prog_flags */
};

#define C(n, t, a, end) { n, t, a, end, 0, 0, 0 }
#define R(n, t, a) { n, t, a, 0, 1, 0, 0 }
#define RUN(n, t, a, end) { n, t, a, end, 0, 1, 0 }

static const struct combo combos[] = {
	C("socket_filter", BPF_PROG_TYPE_SOCKET_FILTER, 0, 192),
	C("kprobe", BPF_PROG_TYPE_KPROBE, 0, 168),
	C("sched_cls", BPF_PROG_TYPE_SCHED_CLS, 0, 192),
	C("sched_act", BPF_PROG_TYPE_SCHED_ACT, 0, 192),
	C("tracepoint", BPF_PROG_TYPE_TRACEPOINT, 0, 64),
	C("xdp", BPF_PROG_TYPE_XDP, 0, 24),
	C("xdp/devmap", BPF_PROG_TYPE_XDP, BPF_XDP_DEVMAP, 24),
	C("perf_event", BPF_PROG_TYPE_PERF_EVENT, 0, 184),
	RUN("cgroup_skb/ingress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS, 192),
	RUN("cgroup_skb/egress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, 192),
	R("cgroup_skb/0", BPF_PROG_TYPE_CGROUP_SKB, 0),
	C("cgroup_sock/0", BPF_PROG_TYPE_CGROUP_SOCK, 0, 80),
	C("cgroup_sock/create", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_CREATE, 80),
	C("cgroup_sock/release", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_RELEASE, 80),
	C("cgroup_sock/post_bind4", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET4_POST_BIND, 80),
	C("cgroup_sock/post_bind6", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET6_POST_BIND, 80),
	R("cgroup_sock/bind4", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET4_BIND),
	RUN("lwt_in", BPF_PROG_TYPE_LWT_IN, 0, 192),
	RUN("lwt_out", BPF_PROG_TYPE_LWT_OUT, 0, 192),
	RUN("lwt_xmit", BPF_PROG_TYPE_LWT_XMIT, 0, 192),
	RUN("lwt_seg6local", BPF_PROG_TYPE_LWT_SEG6LOCAL, 0, 192), /* ENOTSUPP */
	C("sock_ops", BPF_PROG_TYPE_SOCK_OPS, 0, 224),
	C("sk_skb", BPF_PROG_TYPE_SK_SKB, 0, 192),
	C("sk_skb/stream_verdict", BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_VERDICT, 192),
	C("cgroup_device", BPF_PROG_TYPE_CGROUP_DEVICE, 0, 12),
	C("sk_msg", BPF_PROG_TYPE_SK_MSG, 0, 80),
	C("raw_tracepoint", BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 96),
	C("sock_addr/bind4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_BIND, 72),
	C("sock_addr/bind6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_BIND, 72),
	C("sock_addr/connect4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT, 72),
	C("sock_addr/connect6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_CONNECT, 72),
	C("sock_addr/connect_unix", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, AT_UNIX_CONNECT, 72),
	C("sock_addr/getpeername4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_GETPEERNAME,
	  72),
	C("sock_addr/getpeername6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_GETPEERNAME,
	  72),
	C("sock_addr/getpeername_unix", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, AT_UNIX_GETPEERNAME, 72),
	C("sock_addr/getsockname4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_GETSOCKNAME,
	  72),
	C("sock_addr/getsockname6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_GETSOCKNAME,
	  72),
	C("sock_addr/getsockname_unix", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, AT_UNIX_GETSOCKNAME, 72),
	C("sock_addr/sendmsg4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP4_SENDMSG, 72),
	C("sock_addr/sendmsg6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP6_SENDMSG, 72),
	C("sock_addr/sendmsg_unix", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, AT_UNIX_SENDMSG, 72),
	C("sock_addr/recvmsg4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP4_RECVMSG, 72),
	C("sock_addr/recvmsg6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP6_RECVMSG, 72),
	C("sock_addr/recvmsg_unix", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, AT_UNIX_RECVMSG, 72),
	R("sock_addr/0", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, 0),
	R("sock_addr/post_bind4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_POST_BIND),
	C("raw_tracepoint_writable", BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE, 0, 96),
	C("sk_reuseport/0", BPF_PROG_TYPE_SK_REUSEPORT, 0, 56),
	C("sk_reuseport/select", BPF_PROG_TYPE_SK_REUSEPORT, BPF_SK_REUSEPORT_SELECT, 56),
	C("sk_reuseport/migrate", BPF_PROG_TYPE_SK_REUSEPORT, BPF_SK_REUSEPORT_SELECT_OR_MIGRATE,
	  56),
	R("sk_reuseport/sk_lookup", BPF_PROG_TYPE_SK_REUSEPORT, BPF_SK_LOOKUP),
	C("flow_dissector", BPF_PROG_TYPE_FLOW_DISSECTOR, 0, 192),
	C("cgroup_sysctl", BPF_PROG_TYPE_CGROUP_SYSCTL, 0, 8),
	C("cgroup_sockopt/get", BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_GETSOCKOPT, 40),
	C("cgroup_sockopt/set", BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_SETSOCKOPT, 40),
	R("cgroup_sockopt/0", BPF_PROG_TYPE_CGROUP_SOCKOPT, 0),
	C("sk_lookup", BPF_PROG_TYPE_SK_LOOKUP, BPF_SK_LOOKUP, 72),
	R("sk_lookup/0", BPF_PROG_TYPE_SK_LOOKUP, 0),
	{ "syscall", BPF_PROG_TYPE_SYSCALL, 0, 64, 0, 1, BPF_F_SLEEPABLE },
	R("syscall/not sleepable", BPF_PROG_TYPE_SYSCALL, 0),
	R("syscall/connect4", BPF_PROG_TYPE_SYSCALL, BPF_CGROUP_INET4_CONNECT),
	RUN("netfilter", BPF_PROG_TYPE_NETFILTER_NR, AT_NETFILTER, 16),
	R("netfilter/0", BPF_PROG_TYPE_NETFILTER_NR, 0),
};

/* The helpers bpfrt offers (src/vm/helpers.def): whether each type may call them. */
static const int helper_ids[] = {
	BPF_FUNC_map_lookup_elem, BPF_FUNC_map_update_elem, BPF_FUNC_map_delete_elem,
	BPF_FUNC_probe_read, BPF_FUNC_ktime_get_ns, BPF_FUNC_trace_printk,
	BPF_FUNC_get_prandom_u32, BPF_FUNC_get_smp_processor_id, BPF_FUNC_skb_store_bytes,
	BPF_FUNC_l3_csum_replace, BPF_FUNC_l4_csum_replace, BPF_FUNC_tail_call,
	BPF_FUNC_get_current_pid_tgid, BPF_FUNC_get_current_uid_gid, BPF_FUNC_get_current_comm,
	BPF_FUNC_redirect, BPF_FUNC_perf_event_output, BPF_FUNC_skb_load_bytes,
	BPF_FUNC_get_stackid, BPF_FUNC_csum_diff, BPF_FUNC_skb_change_type,
	BPF_FUNC_current_task_under_cgroup, BPF_FUNC_get_current_task, BPF_FUNC_skb_change_tail,
	BPF_FUNC_skb_pull_data, BPF_FUNC_get_numa_node_id, BPF_FUNC_xdp_adjust_head,
	BPF_FUNC_probe_read_str, BPF_FUNC_redirect_map, BPF_FUNC_xdp_adjust_meta,
	BPF_FUNC_map_push_elem, BPF_FUNC_map_pop_elem, BPF_FUNC_map_peek_elem,
	BPF_FUNC_get_stack, BPF_FUNC_probe_read_user, BPF_FUNC_probe_read_kernel,
	BPF_FUNC_probe_read_user_str, BPF_FUNC_probe_read_kernel_str, BPF_FUNC_ktime_get_boot_ns,
	BPF_FUNC_ringbuf_output, BPF_FUNC_ringbuf_reserve, BPF_FUNC_ringbuf_submit,
	BPF_FUNC_ringbuf_discard, BPF_FUNC_ringbuf_query, BPF_FUNC_xdp_adjust_tail,
	BPF_FUNC_for_each_map_elem, BPF_FUNC_loop,
};

#define MAX_INSNS 16
struct prog {
	struct bpf_insn insns[MAX_INSNS];
	int n;
	int helper; /* the helper it calls, 0: none */
	char what[96];
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off,
		 int32_t imm)
{
	struct bpf_insn i = { .code = code, .dst_reg = dst, .src_reg = src, .off = off,
			      .imm = imm };

	p->insns[p->n++] = i;
}

static void mov(struct prog *p, int dst, int32_t imm)
{
	emit(p, BPF_ALU64 | BPF_MOV | BPF_K, (uint8_t)dst, 0, 0, imm);
}

static void finish(struct prog *p, int32_t ret)
{
	mov(p, 0, ret);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

static int size_code(int size)
{
	return size == 1 ? BPF_B : size == 2 ? BPF_H : size == 4 ? BPF_W : BPF_DW;
}

/* The line of a rejection's log that says why: the last before the statistics. */
static void error_line(const char *log, char *out, size_t outlen)
{
	const char *p = log, *best = NULL;
	size_t best_len = 0;

	out[0] = 0;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (!strncmp(p, "processed ", 10))
			break;
		if (len && strncmp(p, "verification time", 17) && strncmp(p, "stack depth", 11)) {
			best = p;
			best_len = len;
		}
		p = e ? e + 1 : p + len;
	}
	if (best) {
		if (best_len >= outlen)
			best_len = outlen - 1;
		memcpy(out, best, best_len);
		out[best_len] = 0;
	}
}

struct outcome {
	int fd;
	int err;
	char line[256];
};

static char logbuf[1 << 16];

static void load(sys_fn sys, const struct combo *c, const struct prog *p, struct outcome *o)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	logbuf[0] = 0;
	a.prog_type = c->type;
	a.expected_attach_type = c->attach;
	a.prog_flags = c->flags;
	a.insns = (uint64_t)(uintptr_t)p->insns;
	a.insn_cnt = (uint32_t)p->n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)logbuf;
	a.log_size = sizeof(logbuf);
	a.log_level = 1;
	errno = 0;
	o->fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	o->err = o->fd < 0 ? errno : 0;
	error_line(logbuf, o->line, sizeof(o->line));
	if (o->fd >= 0)
		o->line[0] = 0; /* an accepted program's log has no error */
}

static int verbose;
static int n_cases, n_agree, n_kernel_accepts, n_known, n_host;

/* Known differences (listed in docs/STATUS.md #15): a tracepoint program may read
 * below its record (tp_prog_is_valid_access() compares a negative offset as unsigned
 * with 8, then as signed with the record's size), which bpfrt refuses.  (Netfilter's
 * context pointers, typed by BTF, are dereferenced as the kernel's since session 26.) */
static int known_difference(const struct combo *c, const struct prog *p, int off)
{
	(void)p;
	return c->type == BPF_PROG_TYPE_TRACEPOINT && off < 0;
}

/* A test run: a 64-byte IPv4 frame for packet types (netfilter: from the IP header on);
 * a syscall program gets 64 context bytes, which it may write (*retval then also folds
 * in a checksum of what came back). */
static int run_test(const struct combo *c, int fd, sys_fn sys, int *retval)
{
	unsigned char pkt[64] = { 0 }, ctx[64];
	union bpf_attr a;
	int sum = 0;

	pkt[12] = 0x08; /* an IPv4 Ethernet frame */
	pkt[14] = 0x45;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	if (c->type == BPF_PROG_TYPE_SYSCALL) {
		for (size_t i = 0; i < sizeof(ctx); i++)
			ctx[i] = (unsigned char)i;
		a.test.ctx_in = (uint64_t)(uintptr_t)ctx;
		a.test.ctx_size_in = sizeof(ctx);
	} else {
		a.test.data_in = (uint64_t)(uintptr_t)(c->type == BPF_PROG_TYPE_NETFILTER_NR ?
							  pkt + 14 : pkt);
		a.test.data_size_in = c->type == BPF_PROG_TYPE_NETFILTER_NR ? 50 : sizeof(pkt);
	}
	errno = 0;
	if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
		return errno;
	if (c->type == BPF_PROG_TYPE_SYSCALL)
		for (size_t i = 0; i < sizeof(ctx); i++)
			sum = (int)((unsigned)sum * 31u + ctx[i]); /* wraps: unsigned arithmetic */
	*retval = (int)a.test.retval ^ sum;
	return 0;
}

static void one(const struct combo *c, const struct prog *p, int off)
{
	struct outcome k, b;
	int same;

	load(sys_kernel, c, p, &k);
	load(sys_bpfrt, c, p, &b);
	n_cases++;
	if (k.fd >= 0)
		n_kernel_accepts++;
	same = (k.fd >= 0) == (b.fd >= 0) && k.err == b.err && !strcmp(k.line, b.line);
	if (c->test_run && same && k.fd >= 0 && b.fd >= 0) {
		int kr = -1, br = -1, ke = run_test(c, k.fd, sys_kernel, &kr);
		int be = run_test(c, b.fd, sys_bpfrt, &br);

		n_cases++;
		if (ke != be || kr != br) {
			T_FAIL("%s: %s: test run kernel errno %d retval %d, bpfrt errno %d retval %d",
			       c->name, p->what, ke, kr, be, br);
		} else {
			n_agree++;
			T_OK();
		}
	}
	if (k.fd >= 0)
		close(k.fd);
	if (b.fd >= 0)
		close(b.fd);
	if (verbose)
		printf("%-28s %-40s kernel %s %d '%s'%s\n", c->name, p->what,
		       k.fd >= 0 ? "ok" : "rej", k.err, k.line, same ? "" : " DIFFERS");
	if (same) {
		n_agree++;
		T_OK();
		return;
	}
	if (known_difference(c, p, off)) {
		n_known++;
		return;
	}
	/* the running kernel is not upstream 6.18 here (tests/host_kernel.h): bpfrt must
	 * accept as upstream does */
	if (k.fd < 0 && b.fd >= 0 && p->helper && strstr(k.line, "cannot use helper") &&
	    host_refuses_helper(c->type, p->helper)) {
		n_host++;
		return;
	}
	T_FAIL("%s: %s: kernel %s errno %d '%s', bpfrt %s errno %d '%s'", c->name, p->what,
	       k.fd >= 0 ? "accepts" : "refuses", k.err, k.line,
	       b.fd >= 0 ? "accepts" : "refuses", b.err, b.line);
}

static void run_combo(const struct combo *c)
{
	static const int rets[] = { 0, 1, 2, 3, 4, -1 };
	static const int sizes[] = { 1, 2, 4, 8 };
	struct prog p;

	memset(&p, 0, sizeof(p));
	snprintf(p.what, sizeof(p.what), "r0 = 1");
	finish(&p, 1);
	one(c, &p, 0);
	if (c->refused)
		return;
	for (size_t i = 0; i < sizeof(rets) / sizeof(rets[0]); i++) {
		memset(&p, 0, sizeof(p));
		snprintf(p.what, sizeof(p.what), "return %d", rets[i]);
		finish(&p, rets[i]);
		one(c, &p, 0);
	}
	for (int off = -8; off < c->ctx_end + 8; off++) {
		for (size_t s = 0; s < 4; s++) {
			int size = sizes[s];

			if (off % size)
				continue;
			/* read */
			memset(&p, 0, sizeof(p));
			snprintf(p.what, sizeof(p.what), "r2 = *(u%d *)(r1 %+d)", size * 8, off);
			emit(&p, BPF_LDX | BPF_MEM | (uint8_t)size_code(size), 2, 1, (int16_t)off, 0);
			finish(&p, 1);
			one(c, &p, off);
			/* a pointer field: what may be done with the pointer */
			if (size >= 4) {
				memset(&p, 0, sizeof(p));
				snprintf(p.what, sizeof(p.what), "r2 = *(u%d *)(r1 %+d); deref u32 +0",
					 size * 8, off);
				emit(&p, BPF_LDX | BPF_MEM | (uint8_t)size_code(size), 2, 1,
				     (int16_t)off, 0);
				emit(&p, BPF_LDX | BPF_MEM | BPF_W, 3, 2, 0, 0);
				finish(&p, 1);
				one(c, &p, off);
			}
			/* write of a scalar register */
			memset(&p, 0, sizeof(p));
			snprintf(p.what, sizeof(p.what), "*(u%d *)(r1 %+d) = r2", size * 8, off);
			mov(&p, 2, 7);
			emit(&p, BPF_STX | BPF_MEM | (uint8_t)size_code(size), 1, 2, (int16_t)off, 0);
			finish(&p, 1);
			one(c, &p, off);
		}
	}
	/* a write of the context pointer itself and an immediate store */
	memset(&p, 0, sizeof(p));
	snprintf(p.what, sizeof(p.what), "*(u32 *)(r1 +0) = 1 (BPF_ST)");
	emit(&p, BPF_ST | BPF_MEM | BPF_W, 1, 0, 0, 1);
	finish(&p, 1);
	one(c, &p, 0);
	for (size_t h = 0; h < sizeof(helper_ids) / sizeof(helper_ids[0]); h++) {
		memset(&p, 0, sizeof(p));
		snprintf(p.what, sizeof(p.what), "call helper %d", helper_ids[h]);
		p.helper = helper_ids[h];
		for (int r = 2; r <= 5; r++)
			mov(&p, r, 0);
		emit(&p, BPF_JMP | BPF_CALL, 0, 0, 0, helper_ids[h]);
		finish(&p, 1);
		one(c, &p, 0);
	}
}

int main(int argc, char **argv)
{
	verbose = argc > 1 && !strcmp(argv[1], "-v");
	if (!kernel_available())
		T_SKIP("needs root and bpf() to compare with the kernel");
	for (size_t i = 0; i < sizeof(combos) / sizeof(combos[0]); i++)
		run_combo(&combos[i]);
	printf("program types: %zu type/attach combinations, %d cases (kernel accepts %d), "
	       "%d agree with the kernel, %d known differences, %d host kernel deviations\n",
	       sizeof(combos) / sizeof(combos[0]), n_cases, n_kernel_accepts, n_agree, n_known,
	       n_host);
	return t_done();
}
