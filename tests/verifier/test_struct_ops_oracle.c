/* test_struct_ops_oracle.c - BPF_PROG_TYPE_STRUCT_OPS programs (verifier/btf_ctx.c's
 * check_struct_ops(), btf/struct_ops.def) against the kernel: the same instructions with
 * attach_btf_id naming a registered struct of operations (tcp_congestion_ops, bpf_dummy_ops)
 * and expected_attach_type its member index load or fail alike through bpf(2) and
 * bpfrt_bpf(), with the same errno and a line both logs hold: members that are no function
 * or have no stub, the arguments typed by the member's prototype (struct sock promoted to
 * tcp_sock for congestion controls, the dummy's "__nullable" state), the writes each
 * struct's btf_struct_access allows, and returns of void members.
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

static const struct brt_btf *vmlinux;

/* byte range of member name in struct id or a struct nested in it, -1 when none */
static int find_off(uint32_t id, const char *name, int base, int depth)
{
	const struct btf_type *t = brt_btf_type(vmlinux, brt_btf_skip_mods(vmlinux, id));
	const struct btf_member *m;

	if (!t || depth > 8 ||
	    (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT && BTF_INFO_KIND(t->info) != BTF_KIND_UNION))
		return -1;
	m = (const struct btf_member *)(t + 1);
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
			uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
								 : m[i].offset;
			const char *n = brt_btf_str(vmlinux, m[i].name_off);
			int r;

			if (!pass && n && !strcmp(n, name))
				return base + (int)bits / 8;
			if (pass && (r = find_off(m[i].type, name, base + (int)bits / 8,
						  depth + 1)) >= 0)
				return r;
		}
	return -1;
}

static int member_idx(const char *sname, const char *member)
{
	int id = brt_btf_find(vmlinux, sname, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? brt_btf_type(vmlinux, (uint32_t)id) : NULL;
	const struct btf_member *m = t ? (const struct btf_member *)(t + 1) : NULL;

	for (uint32_t i = 0; t && i < BTF_INFO_VLEN(t->info); i++)
		if (!strcmp(brt_btf_str(vmlinux, m[i].name_off), member))
			return (int)i;
	return -1;
}

/* the type of member name of struct sname (0: none) */
static uint32_t member_type(const char *sname, const char *member)
{
	int id = brt_btf_find(vmlinux, sname, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? brt_btf_type(vmlinux, (uint32_t)id) : NULL;
	const struct btf_member *m = t ? (const struct btf_member *)(t + 1) : NULL;

	for (uint32_t i = 0; t && i < BTF_INFO_VLEN(t->info); i++)
		if (!strcmp(brt_btf_str(vmlinux, m[i].name_off), member))
			return m[i].type;
	return 0;
}

/* "@name" becomes the offset of name in tcp_sock ("@ack_pending": icsk_ack.pending) */
static char *expand(const char *text)
{
	char *out = malloc(strlen(text) * 2 + 64), *o = out;
	int tcp = brt_btf_find(vmlinux, "tcp_sock", BTF_KIND_STRUCT);

	while (*text) {
		if (*text == '@') {
			char name[64];
			size_t n = strspn(text + 1, "abcdefghijklmnopqrstuvwxyz_0123456789");
			int off;

			snprintf(name, sizeof(name), "%.*s", (int)n, text + 1);
			if (!strcmp(name, "ack_pending"))
				off = find_off((uint32_t)tcp, "icsk_ack", 0, 0) +
				      find_off(member_type("inet_connection_sock", "icsk_ack"),
					       "pending", 0, 0);
			else
				off = find_off((uint32_t)tcp, name, 0, 0);
			o += sprintf(o, "%d", off);
			text += 1 + n;
		} else {
			*o++ = *text++;
		}
	}
	*o = 0;
	return out;
}

struct scase {
	const char *name;
	const char *st;     /* struct name; attach_btf_id its id ("value:" prefix: the value type) */
	const char *member; /* its index is expected_attach_type; "#N": index N */
	const char *lic;
	uint32_t flags;
	const char *text;
	const char *msg; /* a line both logs must contain, NULL: none checked */
};

#define CA "tcp_congestion_ops"
#define DUMMY "bpf_dummy_ops"
#define SK "ldxdw %r1, [%r1+0]\n"

static const struct scase cases[] = {
	{ "ssthresh reads snd_ssthresh", CA, "ssthresh", "GPL", 0,
	  SK "ldxw %r0, [%r1+@snd_ssthresh]\nexit\n", NULL },
	{ "undo_cwnd reads snd_cwnd", CA, "undo_cwnd", "GPL", 0,
	  SK "ldxw %r0, [%r1+@snd_cwnd]\nexit\n", NULL },
	{ "init writes sk_pacing_status, no r0", CA, "init", "GPL", 0,
	  SK "stw [%r1+@sk_pacing_status], 1\nexit\n", NULL },
	{ "cong_control writes sk_pacing_rate", CA, "cong_control", "GPL", 0,
	  SK "mov %r2, 1000\nstxdw [%r1+@sk_pacing_rate], %r2\nexit\n", NULL },
	{ "cong_control writes app_limited", CA, "cong_control", "GPL", 0,
	  SK "stw [%r1+@app_limited], 1\nexit\n", NULL },
	{ "cong_avoid writes snd_cwnd, snd_cwnd_cnt, snd_cwnd_stamp", CA, "cong_avoid", "GPL", 0,
	  SK "stw [%r1+@snd_cwnd], 1\nstw [%r1+@snd_cwnd_cnt], 1\n"
	     "stw [%r1+@snd_cwnd_stamp], 1\nstw [%r1+@snd_ssthresh], 1\nexit\n", NULL },
	{ "set_state writes ecn_flags", CA, "set_state", "GPL", 0,
	  SK "stb [%r1+@ecn_flags], 1\nexit\n", NULL },
	{ "init writes icsk_ca_priv inside", CA, "init", "GPL", 0,
	  SK "stdw [%r1+@icsk_ca_priv], 1\nmov %r2, %r1\nadd %r2, 8\nstw [%r2+@icsk_ca_priv], 7\n"
	     "exit\n", NULL },
	{ "cwnd_event writes icsk_ack.pending", CA, "cwnd_event", "GPL", 0,
	  SK "stb [%r1+@ack_pending], 1\nexit\n", NULL },
	{ "snd_cwnd written with 8 bytes", CA, "cong_avoid", "GPL", 0,
	  SK "stdw [%r1+@snd_cwnd], 1\nexit\n", "beyond the member of tcp_sock ended at" },
	{ "snd_ssthresh read, snd_una written", CA, "cong_avoid", "GPL", 0,
	  SK "stw [%r1+@snd_una], 1\nexit\n", "no write support to tcp_sock at off" },
	{ "write through the rate sample", CA, "cong_control", "GPL", 0,
	  "ldxdw %r1, [%r1+24]\nstw [%r1+0], 1\nexit\n", "only read is supported" },
	{ "cong_control reads its rate sample", CA, "cong_control", "GPL", 0,
	  "ldxdw %r1, [%r1+24]\nldxw %r0, [%r1+0]\nexit\n", NULL },
	{ "cong_avoid reads ack and acked", CA, "cong_avoid", "GPL", 0,
	  "ldxw %r0, [%r1+8]\nldxw %r0, [%r1+16]\nexit\n", NULL },
	{ "ssthresh reads a second argument", CA, "ssthresh", "GPL", 0,
	  "ldxdw %r0, [%r1+8]\nexit\n", "doesn't have 2-th argument" },
	{ "ssthresh without r0", CA, "ssthresh", "GPL", 0, "exit\n", "R0 !read_ok" },
	{ "ssthresh returns a pointer", CA, "ssthresh", "GPL", 0, SK "mov %r0, %r1\nexit\n", NULL },
	{ "ssthresh reads past tcp_sock", CA, "ssthresh", "GPL", 0,
	  SK "ldxw %r0, [%r1+8192]\nexit\n", "access beyond struct tcp_sock" },
	{ "ssthresh non-GPL", CA, "ssthresh", "MIT", 0, "mov %r0, 0\nexit\n",
	  "must have a GPL compatible license" },
	{ "get_info has no stub", CA, "get_info", "GPL", 0, "mov %r0, 0\nexit\n",
	  "attach to unsupported member get_info of struct tcp_congestion_ops" },
	{ "name is no function", CA, "name", "GPL", 0, "mov %r0, 0\nexit\n",
	  "attach to invalid member name(@idx" },
	{ "member index past the struct", CA, "#18", "GPL", 0, "mov %r0, 0\nexit\n",
	  "attach to invalid member idx 18 of struct tcp_congestion_ops" },
	{ "member index 1000", CA, "#1000", "GPL", 0, "mov %r0, 0\nexit\n", NULL },
	{ "the value type is no struct of operations", "value:" CA, "ssthresh", "GPL", 0,
	  "mov %r0, 0\nexit\n", "is not a supported struct" },
	{ "sock is not registered", "sock", "#0", "GPL", 0, "mov %r0, 0\nexit\n",
	  "is not a supported struct" },
	{ "sleepable congestion control", CA, "ssthresh", "GPL", BPF_F_SLEEPABLE,
	  SK "ldxw %r0, [%r1+@snd_ssthresh]\nexit\n", NULL },
	{ "dummy test_1 state may be NULL", DUMMY, "test_1", "GPL", 0,
	  "ldxdw %r1, [%r1+0]\nldxw %r0, [%r1+0]\nexit\n", "invalid mem access" },
	{ "dummy test_1 state checked", DUMMY, "test_1", "GPL", 0,
	  "ldxdw %r1, [%r1+0]\nmov %r0, 0\njeq %r1, 0, +2\nldxw %r0, [%r1+0]\nstw [%r1+0], 5\n"
	  "exit\n", NULL },
	{ "dummy test_2 writes its state", DUMMY, "test_2", "GPL", 0,
	  "ldxdw %r2, [%r1+8]\nldxdw %r1, [%r1+0]\nstxw [%r1+0], %r2\nmov %r0, 0\nexit\n",
	  NULL },
	{ "dummy test_2 writes past its state", DUMMY, "test_2", "GPL", 0,
	  "ldxdw %r1, [%r1+0]\nstdw [%r1+0], 1\nmov %r0, 0\nexit\n", "write access at off 0 with size 8" },
	{ "dummy test_2 reads its 5 arguments", DUMMY, "test_2", "GPL", 0,
	  "ldxdw %r0, [%r1+32]\nldxdw %r0, [%r1+24]\nldxdw %r0, [%r1+16]\nexit\n", NULL },
	{ "dummy test_1 sleepable", DUMMY, "test_1", "GPL", BPF_F_SLEEPABLE, "mov %r0, 0\nexit\n",
	  "attach to unsupported member test_1 of struct bpf_dummy_ops" },
	{ "dummy test_sleepable sleepable", DUMMY, "test_sleepable", "GPL", BPF_F_SLEEPABLE,
	  "mov %r0, 0\nexit\n", NULL },
	{ "dummy test_1 without r0", DUMMY, "test_1", "GPL", 0, "exit\n", "R0 !read_ok" },
};

static int load(int kernel, const struct scase *c, char *log, size_t loglen)
{
	const char *st = strncmp(c->st, "value:", 6) ? c->st : c->st + 6;
	struct bpf_insn *insns;
	union bpf_attr a;
	char err[256], vname[96], *text = expand(c->text);
	size_t n;
	int fd, id;

	if (bpfrt_asm(text, "test.s", &insns, &n, err, sizeof(err))) {
		fprintf(stderr, "asm: %s\n", err);
		free(text);
		return -EINVAL;
	}
	free(text);
	snprintf(vname, sizeof(vname), "bpf_struct_ops_%s", st);
	id = brt_btf_find(vmlinux, st != c->st ? vname : st, BTF_KIND_STRUCT);
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_STRUCT_OPS;
	a.attach_btf_id = id > 0 ? (uint32_t)id : 0;
	a.expected_attach_type = c->member[0] == '#' ? (uint32_t)atoi(c->member + 1)
						     : (uint32_t)member_idx(st, c->member);
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)c->lic;
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = (uint32_t)loglen;
	a.log_level = 1;
	a.prog_flags = c->flags;
	log[0] = 0;
	fd = kernel ? (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a))
		    : bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		fd = -errno;
	free(insns);
	return fd;
}

int main(void)
{
	static char log1[65536], log2[65536];

	if (geteuid() != 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	vmlinux = brt_btf_vmlinux();
	if (!vmlinux)
		T_SKIP("no kernel BTF (/sys/kernel/btf/vmlinux)");
	if (brt_btf_find(vmlinux, "bpf_struct_ops_" CA, BTF_KIND_STRUCT) <= 0)
		T_SKIP("the kernel registers no tcp_congestion_ops struct_ops");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct scase *c = &cases[i];
		int a = load(0, c, log1, sizeof(log1)), b = load(1, c, log2, sizeof(log2));

		T_CASE(c->name);
		if (getenv("STRUCT_OPS_ORACLE_SHOW"))
			printf("%s: bpfrt %d kernel %d\n", c->name, a < 0 ? a : 0, b < 0 ? b : 0);
		T_EQ_INT(b < 0 ? b : 0, a < 0 ? a : 0);
		if ((a < 0) != (b < 0) || (a < 0 && a != b) || getenv("STRUCT_OPS_ORACLE_SHOW"))
			fprintf(stderr, "  bpfrt log:\n%s  kernel log:\n%s", log1, log2);
		if (c->msg) {
			T_CONTAINS(c->msg, log1);
			T_CONTAINS(c->msg, log2);
		}
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
	}
	return t_done();
}
