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
 * sections on five types, helpers that might sleep in those sections and IRQ-disabled
 * ones of sleepable syscall and kprobe programs, tasks and cgroups (bpf_task_from_pid/vpid, acquire/release,
 * bpf_cgroup_from_id, acquire/release, bpf_task_get_cgroup1), the cpumask operations
 * with test runs,
 * bpf_sock_destroy in iterators (and refused elsewhere), bpf_copy_from_user_str and
 * bpf_copy_from_user_task_str (the test's own strings, truncation, padding, faults, where
 * sleepable kfuncs may not run), and the
 * string kfuncs (bpf_strcmp ... bpf_strnstr: results, -ERANGE for NULL and user
 * pointers, -EFAULT for kernel ones, -E2BIG past 65,536 bytes, the char/int/size_t
 * argument widths, r0's upper half, the __ign arguments' verifier rules) with test runs,
 * bpf_cast_to_kern_ctx and bpf_rdonly_cast (types, id rules, reads and writes through them).
 * Verdict, errno and the error line must be equal, and
 * for programs both accept the test run's errno and retval.  Kernel functions the kernel
 * allows but bpfrt does not offer are not here.  Skips without root or kernel BTF.
 *
 * This file is the harness (the only one that asserts) and the load-time checks; the
 * families of kfuncs are in kfunc_oracle_*.c (kfunc_oracle.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "harness.h"
#include "oracle_load.h"
#include "kfunc_oracle.h"

int ids_lookup_skb, ids_lookup_xdp, ids_release, ids_mask_create, ids_mask_release,
	ids_mask_acquire;

int kid(const char *name)
{
	return brt_btf_find(brt_btf_vmlinux(), name, BTF_KIND_FUNC);
}

static char logbuf[1 << 16];

/* load attr with a level-1 log; r gets the fd (left open), errno and the error line */
static void load_attr(bpf_fn bpf, union bpf_attr *attr, struct res *r)
{
	r->fd = oracle_load(bpf, attr, logbuf, sizeof(logbuf), &r->err, r->last,
				 sizeof(r->last));
}

/* A run of a loaded program: BPF_PROG_TEST_RUN on a 64-byte frame (packet types) or
 * without data (syscall); the errno and retval. */
static void run(bpf_fn bpf, int fd, enum bpf_prog_type type, int *err, uint32_t *retval)
{
	static unsigned char pkt[64];

	pkt[12] = 0x08; /* ETH_P_IP */
	oracle_test_run(bpf, fd, type != BPF_PROG_TYPE_SYSCALL ? pkt : NULL, sizeof(pkt), err,
			retval);
}

void load_run(bpf_fn bpf, enum bpf_prog_type type, uint32_t flags,
	      const struct bpf_insn *insns, size_t n, struct kres *k)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.prog_flags = flags;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	load_attr(bpf, &attr, &k->r);
	k->run_err = -1;
	k->retval = 0;
	if (k->r.fd >= 0) {
		run(bpf, k->r.fd, type, &k->run_err, &k->retval);
		close(k->r.fd);
	}
}

static int compared, runs;

/* verdict, errno and (refused) error line of both sides */
static void compare_loads(const char *name, const struct res *k, const struct res *b)
{
	static char case_name[160];

	snprintf(case_name, sizeof(case_name), "%s", name);
	T_CASE(case_name);
	T_EQ_INT(k->fd >= 0, b->fd >= 0);
	T_EQ_INT(k->err, b->err);
	if (k->fd < 0 && strcmp(k->last, b->last))
		T_FAIL("%s: error line: kernel '%s', bpfrt '%s'", name, k->last, b->last);
	compared++;
}

void compare(const char *name, const struct kres *k, const struct kres *b)
{
	compare_loads(name, &k->r, &b->r);
	if (k->r.fd >= 0 && b->r.fd >= 0) {
		T_EQ_INT(k->run_err, b->run_err);
		T_EQ_INT((int32_t)k->retval, (int32_t)b->retval);
		runs++;
	}
	if (getenv("KFUNC_DUMP"))
		fprintf(stderr, "%s: kernel %d %s run %d/%d | bpfrt %d %s run %d/%d\n", name,
			k->r.err, k->r.last, k->run_err, (int32_t)k->retval, b->r.err, b->r.last,
			b->run_err, (int32_t)b->retval);
}

void kcheck(const char *name, enum bpf_prog_type type, uint32_t flags,
	    const struct bpf_insn *insns, size_t n)
{
	struct kres k, b;

	load_run(oracle_kernel_bpf, type, flags, insns, n, &k);
	load_run(bpfrt_bpf, type, flags, insns, n, &b);
	compare(name, &k, &b);
}

void kcheck_cases(const struct kcase *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!c[i].absent)
			kcheck(c[i].name, c[i].type, c[i].flags, c[i].insns, c[i].n);
}

void check_attr(const char *name, const union bpf_attr *attr)
{
	union bpf_attr a = *attr;
	struct res k, b;

	load_attr(oracle_kernel_bpf, &a, &k);
	if (k.fd >= 0)
		close(k.fd);
	a = *attr;
	load_attr(bpfrt_bpf, &a, &b);
	if (b.fd >= 0)
		close(b.fd);
	compare_loads(name, &k, &b);
	if (getenv("KFUNC_DUMP"))
		fprintf(stderr, "%s: kernel %d %s | bpfrt %d %s\n", name, k.err, k.last, b.err,
			b.last);
}

/* a program of type with license, loaded on both sides (no run) */
static void check(const char *name, enum bpf_prog_type type, const struct bpf_insn *insns,
		  size_t n, const char *license)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t)license;
	check_attr(name, &attr);
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
		ct_alloc_rules();
	} else {
		printf("conntrack kfuncs: skipped: kernel BTF without nf_conntrack\n");
	}
	if (ids_mask_release > 0 && ids_mask_acquire > 0) {
		cpumask_rules();
		cpumask_ops_rules();
	}
	task_cgroup_rules();
	sock_destroy_rules();
	iter_sockopt_rules();
	copy_str_rules();
	ksym_rules(vml, intid);
	section_rules();
	str_kfunc_rules();
	throw_rules();
	cast_rules();
	crypto_rules();
	printf("%d comparisons with the kernel, %d test runs\n", compared, runs);
	return t_done();
}

