/* test_track.c - the checked engine's write tracking (src/vm/track.c): a read of a register
 * or stack byte the run has not written faults with its exact message, following the
 * kernel verifier's rules (r1-r5 unwritten after helper calls and LD_ABS, a callee starts
 * with r1-r5 only and an unwritten frame, the caller's r6-r9 come back on exit); programs
 * that read only what they wrote run as without tracking.
 */
#include <errno.h>

#include "vm/vm.h"
#include "vmtest.h"

static uint64_t echo(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
		     struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return r1 + 1;
}

static const brt_helper_fn helpers[2] = { [1] = echo };

static const struct {
	const char *name;
	const char *text;
	int ret;             /* 0: runs, r0 below */
	const char *msg;     /* the fault, or NULL */
	uint64_t r0;
} cases[] = {
	{ "r0 never written", "exit", -EFAULT, "insn 0: r0 read before it was written" },
	{ "r3 never written", "mov %r0, %r3\nexit", -EFAULT,
	  "insn 0: r3 read before it was written" },
	{ "add reads dst", "add %r4, 1\nmov %r0, 0\nexit", -EFAULT,
	  "insn 0: r4 read before it was written" },
	{ "mov does not read dst", "mov %r4, 1\nmov32 %r5, %r4\nmov %r0, %r5\nexit", 0, NULL, 1 },
	{ "r1 r2 r10 are arguments", "mov %r0, %r2\nadd %r0, %r1\nsub %r0, %r1\nexit", 0, NULL,
	  16 },
	{ "stack never written", "ldxdw %r0, [%r10-8]\nexit", -EFAULT,
	  "insn 0: read of 8 bytes at r10-8 reads stack never written" },
	{ "stack partly written", "stw [%r10-8], 1\nldxdw %r0, [%r10-8]\nexit", -EFAULT,
	  "insn 1: read of 8 bytes at r10-8 reads stack never written" },
	{ "stack written", "stw [%r10-8], 1\nstw [%r10-4], 2\nldxdw %r0, [%r10-8]\nexit", 0, NULL,
	  0x200000001ull },
	{ "atomic fetch reads the stack",
	  "mov %r1, 1\nlock fetch add [%r10-8], %r1\nmov %r0, %r1\nexit", -EFAULT,
	  "insn 1: read of 8 bytes at r10-8 reads stack never written" },
	{ "cmpxchg reads r0", "stdw [%r10-8], 0\nmov %r1, 1\nlock cmpxchg [%r10-8], %r1\nexit",
	  -EFAULT, "insn 2: r0 read before it was written" },
	{ "input memory is written", "ldxdw %r0, [%r1+0]\nexit", 0, NULL, 0 },
	{ "helper clobbers r1-r5", "mov %r3, 1\ncall 1\nmov %r0, %r3\nexit", -EFAULT,
	  "insn 2: r3 read before it was written" },
	{ "helper reads its argument", "call 1\ncall 1\nexit", -EFAULT,
	  "insn 1: r1 read before it was written" },
	{ "helper sets r0", "mov %r1, 5\ncall 1\nexit", 0, NULL, 6 },
	{ "callee has no r6", "mov %r6, 1\ncall local f\nexit\nf:\nmov %r0, %r6\nexit", -EFAULT,
	  "insn 3: r6 read before it was written" },
	{ "callee frame is fresh",
	  "stdw [%r10-8], 1\ncall local f\nexit\nf:\nldxdw %r0, [%r10-8]\nexit", -EFAULT,
	  "insn 3: read of 8 bytes at r10-8 reads stack never written" },
	{ "caller r6 comes back, r1 does not",
	  "mov %r6, 7\ncall local f\nmov %r0, %r6\nmov %r0, %r1\nexit\nf:\nmov %r0, 0\nexit",
	  -EFAULT, "insn 3: r1 read before it was written" },
	{ "caller r6 and stack come back",
	  "mov %r6, 7\nstdw [%r10-8], 3\ncall local f\nldxdw %r0, [%r10-8]\nadd %r0, %r6\nexit\n"
	  "f:\nmov %r0, 0\nexit", 0, NULL, 10 },
	{ "callee exit needs r0", "call local f\nexit\nf:\nexit", -EFAULT,
	  "insn 2: r0 read before it was written" },
	{ "ld_abs clobbers r1", "mov %r6, %r1\nldabsb 0\nmov %r0, %r1\nexit", -EFAULT,
	  "insn 2: r1 read before it was written" },
};

int main(void)
{
	uint8_t mem[16] = { 0 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bpfrt_vm *vm;
		char err[256] = "";
		uint64_t r0 = 0;
		int ret;

		T_CASE(cases[i].name);
		ret = vt_load(cases[i].text, BPFRT_ENGINE_CHECKED, 0, &vm, err, sizeof(err));
		T_EQ_INT(0, ret);
		if (ret) {
			fprintf(stderr, "  %s\n", err);
			continue;
		}
		for (int track = 0; track < 2; track++) {
			struct brt_region region = { (uint64_t)(uintptr_t)mem, sizeof(mem), 1 };
			struct brt_run_opts o = {
				.r1 = (uint64_t)(uintptr_t)mem,
				.r2 = sizeof(mem),
				.regions = &region,
				.nr_regions = 1,
				.skb_data = mem,
				.skb_len = sizeof(mem),
				.helpers = helpers,
				.nr_helpers = 2,
				.track = (uint8_t)track,
				.helper_args = 1,
			};

			ret = brt_vm_run_opts(vm, &o, &r0, err, sizeof(err));
			if (!track) {
				/* untracked, the same program runs: unwritten reads give 0 */
				T_EQ_INT(0, ret);
				continue;
			}
			T_EQ_INT(cases[i].ret, ret);
			if (cases[i].msg)
				T_EQ_STR(cases[i].msg, err);
			else
				T_EQ_U64(cases[i].r0, r0);
		}
		bpfrt_vm_free(vm);
	}
	return t_done();
}
