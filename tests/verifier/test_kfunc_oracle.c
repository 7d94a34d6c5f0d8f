/* test_kfunc_oracle.c - kernel function calls (BPF_PSEUDO_KFUNC_CALL) at load, checked
 * against the kernel: the load-time checks of add_kfunc_call() (GPL, a FUNC of the
 * kernel's BTF with a prototype, module offsets without fd_array), the reserved fields of
 * a call, check_kfunc_call()'s refusal of a kernel function the program may not call, and
 * the unresolved weak kfunc (id 0) that must be in dead code.  Verdict, errno and the
 * error line must be equal.  Kernel functions the kernel allows for the type are refused by
 * bpfrt (none is offered in user space yet), so those cases are not here.  Skips without
 * root or kernel BTF.
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
	printf("%d comparisons with the kernel\n", compared);
	return t_done();
}
