/* test_retcode_oracle.c - the return values a kprobe program may exit with
 * (check_return_code()): a session probe (kprobe.session, uprobe.session) returns 0 or 1
 * (1: its return probe is skipped), a plain kprobe or kprobe.multi anything.  Each program
 * returns a constant and is loaded on both sides with a level-1 log: verdict, errno and the
 * error line must agree.  bpfrt had let a session probe return 2 (found through a GCC-built
 * selftest, kprobe_multi_verifier's kprobe_session_return_2), and named the multi and
 * session attach types one higher than Linux 6.18 does (BPF_LSM_CGROUP for kprobe.multi).
 * Skips without root.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "isa/isa.h"
#include "oracle_load.h"

static void check(const char *name, uint32_t eat, int32_t ret, int accepted)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = ret },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct oracle_res k, b;
	union bpf_attr attr;

	T_CASE(name);
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.expected_attach_type = eat;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uintptr_t) "GPL";
	oracle_load_run(oracle_kernel_bpf, &attr, 0, NULL, 0, &k);
	oracle_load_run(bpfrt_bpf, &attr, 0, NULL, 0, &b);
	T_EQ_INT(accepted, b.fd >= 0);
	if (!accepted)
		T_CONTAINS("should have been in [0, 1]", b.last);
	oracle_compare(name, &k, &b, ORACLE_CMP_LOAD, "RETCODE_DUMP");
}

int main(void)
{
	if (geteuid() != 0)
		T_SKIP("not root: the kernel side needs CAP_BPF and CAP_PERFMON");
	check("kprobe returns 2", 0, 2, 1);
	check("kprobe.multi returns 2", BPF_TRACE_KPROBE_MULTI, 2, 1);
	check("uprobe.multi returns 2", BRT_TRACE_UPROBE_MULTI, 2, 1);
	check("kprobe.session returns 0", BRT_TRACE_KPROBE_SESSION, 0, 1);
	check("kprobe.session returns 1", BRT_TRACE_KPROBE_SESSION, 1, 1);
	check("kprobe.session returns 2", BRT_TRACE_KPROBE_SESSION, 2, 0);
	check("kprobe.session returns -1", BRT_TRACE_KPROBE_SESSION, -1, 0);
	check("uprobe.session returns 2", BRT_TRACE_UPROBE_SESSION, 2, 0);
	return t_done();
}
