/* kfunc_oracle.h - what the files of verifier.kfunc_oracle share: the instruction macros,
 * the harness that loads (and test-runs) one program on the kernel and on bpfrt and
 * compares them (test_kfunc_oracle.c, the only file that asserts), the ids of the kfuncs
 * several families use, and each family's entry point (kfunc_oracle_net.c: conntrack and
 * bpf_sock_destroy; kfunc_oracle_objects.c: cpumasks, tasks, cgroups;
 * kfunc_oracle_sections.c: kernel symbols, RCU and preemption sections;
 * kfunc_oracle_str.c: user and kernel strings; kfunc_oracle_throw.c: bpf_throw;
 * kfunc_oracle_cast.c: bpf_cast_to_kern_ctx and bpf_rdonly_cast; kfunc_oracle_crypto.c:
 * the bpf_crypto kfuncs).
 */
#ifndef BPFRT_TESTS_VERIFIER_KFUNC_ORACLE_H
#define BPFRT_TESTS_VERIFIER_KFUNC_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "btf/btf.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define KCALL(id, off) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, off, id)
#define CALLH(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define JEQ_K(d, v, o) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define LDDW(d, src, lo, hi) I(BPF_LD | BPF_IMM | BPF_DW, d, src, 0, lo), I(0, 0, 0, 0, hi)
#define MAXP 64 /* instructions of a program built at run time */

#include "oracle_load.h" /* bpf_fn */

/* one side's load: fd (closed again), errno, the error line of the log */
struct res {
	int fd, err;
	char last[256];
};

/* one side's load and test run (run_err -1 when it did not load) */
struct kres {
	struct res r;
	int run_err;
	uint32_t retval;
};

/* ids in the kernel's BTF that several families call (main() finds them) */
extern int ids_lookup_skb, ids_lookup_xdp, ids_release, ids_mask_create, ids_mask_release,
	ids_mask_acquire;

/* ---- the harness (test_kfunc_oracle.c) ---- */

/* the id of kernel function name in the kernel's BTF, <= 0 when it has none */
int kid(const char *name);
/* load a GPL program (flags: prog_flags) through bpf and, if it loads, test-run it once:
 * a 64-byte frame for packet types, no data for syscall programs */
void load_run(bpf_fn bpf, enum bpf_prog_type type, uint32_t flags,
	      const struct bpf_insn *insns, size_t n, struct kres *k);
/* assert that both sides' verdict, errno, error line and (when both loaded) test run
 * agree, and count the comparison */
void compare(const char *name, const struct kres *k, const struct kres *b);
/* load_run() on both sides, then compare() */
void kcheck(const char *name, enum bpf_prog_type type, uint32_t flags,
	    const struct bpf_insn *insns, size_t n);
/* a table's row for kcheck_cases(): a program and what it is loaded as */
struct kcase {
	const char *name;
	enum bpf_prog_type type;
	uint32_t flags;
	const struct bpf_insn *insns;
	size_t n;
	int absent; /* not checked: the kernel lacks a kfunc the program calls */
};
#define KPROG(a) (a), sizeof(a) / sizeof((a)[0]) /* a kcase's insns and n */
/* kcheck() each row of the table */
void kcheck_cases(const struct kcase *c, size_t n);
/* load attr (everything but the log set by the caller) on both sides, no run; compare
 * verdict, errno and error line */
void check_attr(const char *name, const union bpf_attr *attr);

/* ---- the families ---- */

/* kfunc_oracle_net.c */
void ct_cases(void);
void ct_rules(void);
void ct_alloc_rules(void);
void sock_destroy_rules(void);
void iter_sockopt_rules(void);
/* kfunc_oracle_objects.c */
void cpumask_rules(void);
void cpumask_ops_rules(void);
void task_cgroup_rules(void);
/* kfunc_oracle_sections.c */
void ksym_rules(const struct brt_btf *vml, int intid);
void section_rules(void);
/* kfunc_oracle_str.c */
void copy_str_rules(void);
void str_kfunc_rules(void);
/* kfunc_oracle_throw.c */
void throw_rules(void);
/* kfunc_oracle_cast.c */
void cast_rules(void);
/* kfunc_oracle_crypto.c */
void crypto_rules(void);

#endif
