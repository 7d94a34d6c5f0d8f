/* kfunc_oracle_objects.c - verifier.kfunc_oracle's kfuncs of kernel objects
 * (test_kfunc_oracle.c says what it checks): bpf_cpumask_create/acquire/release and the
 * cpumask operations, tasks (bpf_task_from_pid/vpid, acquire/release) and cgroups
 * (bpf_cgroup_from_id, acquire/release, bpf_task_get_cgroup1 of v1 hierarchies), with
 * references, NULL checks and test runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "kfunc_oracle.h"

void cpumask_rules(void)
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

#define KC(p, insns)                                                                       \
	kcheck(p, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, insns, sizeof(insns) / sizeof(insns[0]))

/* bpf_task_get_cgroup1(task, hierarchy_id) (session 24: the selftests' cgrp_ls_recursion):
 * the task's cgroup of a v1 hierarchy, NULL for an id no v1 hierarchy has (0 is v2's);
 * of this process (bpf_task_from_pid(getpid())) and of kthreadd, released or leaked, and
 * of an untrusted task pointer */
static void task_cgroup1_rules(void)
{
	int from_pid = kid("bpf_task_from_pid"), t_rel = kid("bpf_task_release");
	int c_rel = kid("bpf_cgroup_release"), cg1 = kid("bpf_task_get_cgroup1");
	static const int32_t hids[] = { 0, 1, 2, 4, 9, 15, 1000, -1 };
	char name[128];

	if (cg1 <= 0 || from_pid <= 0 || t_rel <= 0 || c_rel <= 0) {
		printf("bpf_task_get_cgroup1: skipped: not in the kernel's BTF\n");
		return;
	}
	for (size_t i = 0; i < sizeof(hids) / sizeof(hids[0]); i++) {
		for (int who = 0; who < 2; who++) {
			/* r7 the task, r6 whether a cgroup came back (2: no task); both
			 * released */
			struct bpf_insn p[] = { MOV_K(6, 2), MOV_K(1, who ? 2 : (int32_t)getpid()),
						KCALL(from_pid, 0), JEQ_K(0, 0, 11), MOV_X(7, 0),
						MOV_X(1, 0), MOV_K(2, hids[i]), KCALL(cg1, 0),
						MOV_K(6, 0), JEQ_K(0, 0, 3), MOV_K(6, 1), MOV_X(1, 0),
						KCALL(c_rel, 0), MOV_X(1, 7), KCALL(t_rel, 0),
						MOV_X(0, 6), EXIT() };

			snprintf(name, sizeof(name), "task_get_cgroup1 of %s, hierarchy %d",
				 who ? "kthreadd" : "this process", (int)hids[i]);
			KC(name, p);
		}
	}
	{
		struct bpf_insn leak[] = { MOV_K(1, (int32_t)getpid()), KCALL(from_pid, 0),
					   JEQ_K(0, 0, 6), MOV_X(7, 0), MOV_X(1, 0), MOV_K(2, 1),
					   KCALL(cg1, 0), MOV_X(1, 7), KCALL(t_rel, 0), MOV_K(0, 0),
					   EXIT() };
		struct bpf_insn no_null[] = { MOV_K(1, (int32_t)getpid()), KCALL(from_pid, 0),
					      JEQ_K(0, 0, 7), MOV_X(7, 0), MOV_X(1, 0),
					      MOV_K(2, 1), KCALL(cg1, 0), MOV_X(1, 0),
					      KCALL(c_rel, 0), MOV_X(1, 7), KCALL(t_rel, 0),
					      MOV_K(0, 0), EXIT() };
		struct bpf_insn stack[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
					    MOV_K(2, 1), KCALL(cg1, 0), MOV_K(0, 0), EXIT() };

		KC("task_get_cgroup1 leaked", leak);
		KC("task_get_cgroup1 released without NULL check", no_null);
		KC("task_get_cgroup1 of the stack", stack);
	}
}

void task_cgroup_rules(void)
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
	task_cgroup1_rules();
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

void cpumask_ops_rules(void)
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
