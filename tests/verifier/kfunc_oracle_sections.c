/* kfunc_oracle_sections.c - verifier.kfunc_oracle's kernel symbols and sections
 * (test_kfunc_oracle.c says what it checks): lddw BPF_PSEUDO_BTF_ID of functions and
 * per-CPU variables, bpf_rcu_read_lock/unlock and bpf_preempt_disable/enable sections,
 * each on several program types.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "kfunc_oracle.h"

/* One program of a family's table, run on each of the family's program types. */
struct tcase {
	const char *name;
	const struct bpf_insn *p;
	size_t n;
	int ld_abs; /* uses LD_ABS: only on the types that have it */
	int skip;   /* the kernel lacks what it calls */
};
#define TC(nm, prog) nm, prog, sizeof(prog) / sizeof((prog)[0])

/* Each case on each type, named "type N: PREFIXname"; syscall programs are sleepable. */
static void on_types(const char *prefix, const enum bpf_prog_type *types, size_t ntypes,
		     const struct tcase *cases, size_t ncases)
{
	char name[128];

	for (size_t t = 0; t < ntypes; t++) {
		uint32_t fl = types[t] == BPF_PROG_TYPE_SYSCALL ? BPF_F_SLEEPABLE : 0;
		int ld_abs = types[t] == BPF_PROG_TYPE_SOCKET_FILTER ||
			     types[t] == BPF_PROG_TYPE_SCHED_CLS;

		for (size_t c = 0; c < ncases; c++) {
			if (cases[c].skip || (cases[c].ld_abs && !ld_abs))
				continue;
			snprintf(name, sizeof(name), "type %d: %s%s", (int)types[t], prefix,
				 cases[c].name);
			kcheck(name, types[t], fl, cases[c].p, cases[c].n);
		}
	}
}

/* the types the sections are tried on */
static const enum bpf_prog_type section_types[] = { BPF_PROG_TYPE_SOCKET_FILTER,
						    BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP,
						    BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_SYSCALL };

/* lddw BPF_PSEUDO_BTF_ID (check_pseudo_btf_id()) */
void ksym_rules(const struct brt_btf *vml, int intid)
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
	/* bpf_this_cpu_ptr / bpf_per_cpu_ptr take only a per-CPU variable */
	struct bpf_insn this_scalar[] = { MOV_K(1, 0), CALLH(BPF_FUNC_this_cpu_ptr), MOV_K(0, 0),
					  EXIT() };
	struct bpf_insn this_fp[] = { MOV_X(1, 10), ADD_K(1, -8), CALLH(BPF_FUNC_this_cpu_ptr),
				      MOV_K(0, 0), EXIT() };
	struct bpf_insn per_ctx[] = { MOV_K(2, 0), CALLH(BPF_FUNC_per_cpu_ptr), MOV_K(0, 0),
				      EXIT() };
	struct bpf_insn per_func[] = { LDDW(1, BPF_PSEUDO_BTF_ID, ids_mask_create, 0), MOV_K(2, 0),
				       CALLH(BPF_FUNC_per_cpu_ptr), MOV_K(0, 0), EXIT() };
	static const enum bpf_prog_type types[] = { BPF_PROG_TYPE_SOCKET_FILTER,
						    BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP };
	const struct tcase cases[] = {
		{ TC("this_cpu_ptr of a scalar", this_scalar) },
		{ TC("this_cpu_ptr of the stack", this_fp) },
		{ TC("per_cpu_ptr of the context", per_ctx) },
		{ TC("per_cpu_ptr of a kernel function", per_func) },
		{ TC("ksym func presence", func_ok) },
		{ TC("ksym func read", func_read) },
		{ TC("ksym func write", func_write) },
		{ TC("ksym func returned", func_ret) },
		{ TC("ksym percpu struct read", percpu_read), .skip = rq <= 0 },
		{ TC("ksym percpu int NULL test", percpu_int), .skip = active <= 0 },
		{ TC("ksym percpu int read", percpu_int_read), .skip = active <= 0 },
		{ TC("ksym id 0", id0) },
		{ TC("ksym id of an int", id_int) },
		{ TC("ksym id past the end", id_past) },
		{ TC("ksym id negative", id_neg) },
		{ TC("ksym module fd", module_fd) },
		{ TC("ksym off set", off_set) },
		{ TC("ksym lddw cut short", src4_last) },
	};

	on_types("", types, sizeof(types) / sizeof(types[0]), cases,
		 sizeof(cases) / sizeof(cases[0]));
	/* not compared: this_cpu_ptr of a per-CPU variable, which the kernel takes and bpfrt
	 * refuses (ENOTSUPP: kernel per-CPU memory is out of its reach); this host's kernel
	 * finds no address for runqueues or bpf_prog_active either */
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
	const struct tcase cases[] = {
		{ TC("lock and unlock", ok) },
		{ TC("nested", nested) },
		{ TC("unmatched unlock", unmatched) },
		{ TC("exit inside", exit_inside) },
		{ TC("lock on one path", one_path) },
		{ TC("helper inside", helper_inside) },
		{ TC("subprogram inside", subprog_inside) },
		{ TC("subprogram locks", subprog_locks) },
		{ TC("loop", loop_paths) },
		{ TC("LD_ABS inside", ld_abs_inside), .ld_abs = 1 },
	};

	on_types("rcu ", section_types, sizeof(section_types) / sizeof(section_types[0]), cases,
		 sizeof(cases) / sizeof(cases[0]));
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
	const struct tcase cases[] = {
		{ TC("disable and enable", ok) },
		{ TC("nested", nested) },
		{ TC("one enable missing", missing) },
		{ TC("unmatched enable", unmatched) },
		{ TC("on one path", one_path) },
		{ TC("left open on one path", one_path_open) },
		{ TC("subprograms disable and enable", subprog_pair) },
		{ TC("subprogram leaves it disabled", subprog_open) },
		{ TC("helper inside", helper_inside) },
		{ TC("loop", loop_paths) },
		{ TC("loop disabling more each time", loop_grows) },
		{ TC("crossing an RCU section", with_rcu), .skip = lock <= 0 || unlock <= 0 },
		{ TC("RCU section left open", rcu_open), .skip = lock <= 0 || unlock <= 0 },
		{ TC("LD_ABS inside", ld_abs_inside), .ld_abs = 1 },
	};

	on_types("preempt ", section_types, sizeof(section_types) / sizeof(section_types[0]),
		 cases, sizeof(cases) / sizeof(cases[0]));
}

/* Helpers that might sleep (their prototype's might_sleep) in an RCU, preemption or IRQ
 * section of a sleepable program, outside one, and in a global subprogram called there:
 * bpf_copy_from_user always; bpf_get_task_stack and (kprobe) bpf_get_stack where the
 * program is sleepable (their sleepable prototypes: 6.18.44 marks them, 6.18.35's source
 * does not).  The section's refusal comes before the arguments are checked, so each call
 * is made with valid arguments and with none. */
static void sleep_rules(int lock, int unlock, int dis, int en, int save, int restore)
{
#define CALLID(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define TASK_STACK() CALLID(BPF_FUNC_get_current_task_btf), MOV_X(1, 0), MOV_X(2, 10), \
		     ADD_K(2, -64), MOV_K(3, 64), MOV_K(4, 0), CALLID(BPF_FUNC_get_task_stack)
#define CTX_STACK() MOV_X(1, 6), MOV_X(2, 10), ADD_K(2, -64), MOV_K(3, 64), MOV_K(4, 0), \
		    CALLID(BPF_FUNC_get_stack)
#define IRQ(k) MOV_X(1, 10), ADD_K(1, -72), KCALL(k, 0)
	struct bpf_insn ts_plain[] = { TASK_STACK(), MOV_K(0, 0), EXIT() };
	struct bpf_insn ts_rcu[] = { KCALL(lock, 0), TASK_STACK(), KCALL(unlock, 0), MOV_K(0, 0),
				     EXIT() };
	struct bpf_insn ts_rcu_noargs[] = { KCALL(lock, 0), CALLID(BPF_FUNC_get_task_stack),
					    KCALL(unlock, 0), MOV_K(0, 0), EXIT() };
	struct bpf_insn ts_preempt[] = { KCALL(dis, 0), TASK_STACK(), KCALL(en, 0), MOV_K(0, 0),
					 EXIT() };
	struct bpf_insn ts_irq[] = { IRQ(save), TASK_STACK(), IRQ(restore), MOV_K(0, 0), EXIT() };
	struct bpf_insn cfu_irq_noargs[] = { IRQ(save), CALLID(BPF_FUNC_copy_from_user),
					     IRQ(restore), MOV_K(0, 0), EXIT() };
	struct bpf_insn cfu_preempt_noargs[] = { KCALL(dis, 0), CALLID(BPF_FUNC_copy_from_user),
						 KCALL(en, 0), MOV_K(0, 0), EXIT() };
	/* main: lock; call global subprog 1; unlock.  subprog: get_task_stack */
	struct bpf_insn ts_global[] = { KCALL(lock, 0), I(BPF_JMP | BPF_CALL, 0, 1, 0, 3),
					KCALL(unlock, 0), MOV_K(0, 0), EXIT(), TASK_STACK(),
					MOV_K(0, 0), EXIT() };
	struct bpf_insn gs_plain[] = { MOV_X(6, 1), CTX_STACK(), MOV_K(0, 0), EXIT() };
	struct bpf_insn gs_rcu[] = { MOV_X(6, 1), KCALL(lock, 0), CTX_STACK(), KCALL(unlock, 0),
				     MOV_K(0, 0), EXIT() };
	static const struct {
		const char *name;
		enum bpf_prog_type type;
	} types[] = { { "syscall", BPF_PROG_TYPE_SYSCALL }, { "kprobe", BPF_PROG_TYPE_KPROBE } };
	const struct tcase cases[] = {
		{ TC("get_task_stack", ts_plain) },
		{ TC("get_task_stack in an RCU section", ts_rcu) },
		{ TC("get_task_stack without arguments in an RCU section", ts_rcu_noargs) },
		{ TC("get_task_stack with preemption disabled", ts_preempt), .skip = dis <= 0 },
		{ TC("get_task_stack with IRQs disabled", ts_irq), .skip = save <= 0 },
		{ TC("copy_from_user without arguments, IRQs disabled", cfu_irq_noargs),
		  .skip = save <= 0 },
		{ TC("copy_from_user without arguments, preemption disabled", cfu_preempt_noargs),
		  .skip = dis <= 0 },
		{ TC("global subprogram calling get_task_stack in an RCU section", ts_global) },
		{ TC("get_stack", gs_plain) },
		{ TC("get_stack in an RCU section", gs_rcu) },
	};
	char name[160];

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (int sl = 0; sl < 2; sl++)
			for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
				if (cases[c].skip)
					continue;
				snprintf(name, sizeof(name), "%s%s: %s", types[t].name,
					 sl ? " (sleepable)" : "", cases[c].name);
				kcheck(name, types[t].type, sl ? BPF_F_SLEEPABLE : 0, cases[c].p,
				       cases[c].n);
			}
#undef CALLID
#undef TASK_STACK
#undef CTX_STACK
#undef IRQ
}

void section_rules(void)
{
	int lock = kid("bpf_rcu_read_lock"), unlock = kid("bpf_rcu_read_unlock");
	int dis = kid("bpf_preempt_disable"), en = kid("bpf_preempt_enable");

	if (lock > 0 && unlock > 0)
		rcu_rules(lock, unlock);
	if (dis > 0 && en > 0)
		preempt_rules(dis, en, lock, unlock);
	if (lock > 0 && unlock > 0)
		sleep_rules(lock, unlock, dis, en, kid("bpf_local_irq_save"),
			    kid("bpf_local_irq_restore"));
}
