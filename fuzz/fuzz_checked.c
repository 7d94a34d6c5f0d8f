/* fuzz_checked.c - fuzz target for the checked engine (src/vm/interp_loop.h, checked.c):
 * any program must load or be refused, and a run must end with r0 or a fault message,
 * never crash, within its budget.  Input: byte 0 = input memory length (mod 64), then that
 * many bytes of memory, then the program.  Helpers: 1 grants a writable buffer, 2 stops
 * the program; runs are deterministic, so a second run must give the same outcome.  With
 * bit 6 of byte 0 set, the program instead gets the library's default helpers (time,
 * random, map helpers with garbage arguments): it must only not crash.
 * A program the checked engine ran without a fault, that read no register or stack byte
 * before writing it (the run repeated with write tracking, the kernel verifier's rule: see
 * src/vm/track.c) and whose result does not depend on where the stack is (same outcome
 * with the stack moved), is then safe to run on the unchecked engines: the fast
 * interpreter (with its superinstructions) and the JIT must give the same r0 and leave
 * the same memory.  The stack-moved run shifts it by a multiple of 64 bytes, and the JIT's
 * frame differs from the checked engine's in its low bits (the redzone pass runs on rsp), so
 * a program that lets r10's value escape (copies it, computes or compares with it, stores
 * it) is not compared: only r10 as the base of a load or store keeps the result address-free.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vm/vm.h"

static uint8_t granted[32];

static uint64_t grant(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
		      struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	bpfrt_run_grant(ctx, granted, sizeof(granted), 1);
	return (uint64_t)(uintptr_t)granted;
}

static uint64_t stop(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
		     struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5;
	if (r1 & 1)
		bpfrt_run_stop(ctx, r1);
	return r1 + 1;
}

static const brt_helper_fn helpers[3] = { [1] = grant, [2] = stop };

struct outcome {
	int ret;
	uint64_t r0;
	uint8_t mem[64];
	uint8_t granted[sizeof(granted)];
	char err[256];
};

static void run(struct bpfrt_vm *vm, const uint8_t *init, size_t len, int track,
		struct outcome *out)
{
	/* one buffer for every run: programs may store its address */
	static uint8_t mem[64];
	struct brt_region region = { (uint64_t)(uintptr_t)mem, len, 1 };
	struct brt_run_opts o = { .r1 = (uint64_t)(uintptr_t)mem, .r2 = len,
				  .regions = &region, .nr_regions = 1, .skb_data = mem,
				  .skb_len = len, .helpers = helpers, .nr_helpers = 3,
				  .track = (uint8_t)track, .helper_args = 1 /* stop() reads r1 */ };

	memset(out, 0, sizeof(*out));
	memset(mem, 0, sizeof(mem));
	memcpy(mem, init, len);
	memset(granted, 0, sizeof(granted));
	out->ret = brt_vm_run_opts(vm, &o, &out->r0, out->err, sizeof(out->err));
	memcpy(out->mem, mem, sizeof(mem));
	memcpy(out->granted, granted, sizeof(granted));
}

/* The same run with the stack elsewhere: a result computed from r10's address differs. */
static __attribute__((noinline)) void run_shifted(struct bpfrt_vm *vm, const uint8_t *init,
						   size_t len, struct outcome *out)
{
	volatile uint8_t pad[8192];

	pad[0] = 0;
	run(vm, init, len, 0, out);
	pad[1] = pad[0];
}

static int same(const struct outcome *a, const struct outcome *b)
{
	return a->ret == b->ret && a->r0 == b->r0 && !memcmp(a->mem, b->mem, sizeof(a->mem)) &&
	       !memcmp(a->granted, b->granted, sizeof(a->granted)) && !strcmp(a->err, b->err);
}

/* r10 used other than as a memory base: the result may depend on the stack's address. */
static int fp_escapes(const struct bpf_insn *insns, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct bpf_insn *x = &insns[i];
		uint8_t cls = x->code & 0x07;

		switch (cls) {
		case 0x01: /* LDX: r10 as the base is fine */
			if (x->dst_reg == 10)
				return 1;
			break;
		case 0x02: /* ST */
			break;
		case 0x03: /* STX: storing r10 itself leaks it */
			if (x->src_reg == 10)
				return 1;
			break;
		default: /* LD, ALU, JMP: any mention of r10 */
			if (x->src_reg == 10 || x->dst_reg == 10)
				return 1;
		}
	}
	return 0;
}

/* Run on an unchecked engine and compare with the checked outcome. */
static void differential(const struct bpf_insn *insns, size_t n, enum bpfrt_engine engine,
			 const uint8_t *init, size_t len, const struct outcome *want)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engine);
	struct bpfrt_vm *vm;
	static struct outcome got;

	if (bpfrt_vm_load(insns, n, &o, &vm, NULL, 0))
		return; /* engine not built */
	run(vm, init, len, 0, &got);
	/* the JIT compiles every call, so it refuses a helper the run never reached (the
	 * kernel's verifier refuses the whole program too); an interpreter faults only there */
	if (engine == BPFRT_ENGINE_JIT && got.ret && strstr(got.err, "unknown helper")) {
		bpfrt_vm_free(vm);
		return;
	}
	if (!same(want, &got))
		abort();
	bpfrt_vm_free(vm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_CHECKED, .insn_budget = 20000);
	size_t mem_len = size ? data[0] % 64u : 0, n;
	int defaults = size && (data[0] & 0x40);
	static struct outcome a, b, c;
	struct bpf_insn *insns;
	struct bpfrt_vm *vm;

	if (size < 1 + mem_len)
		return 0;
	n = (size - 1 - mem_len) / sizeof(*insns);
	insns = malloc(n ? n * sizeof(*insns) : 1);
	if (!insns)
		return 0;
	memcpy(insns, data + 1 + mem_len, n * sizeof(*insns));
	if (defaults && bpfrt_vm_load(insns, n, &o, &vm, NULL, 0) == 0) {
		uint8_t mem[64] = { 0 };
		uint64_t r0;

		memcpy(mem, data + 1, mem_len);
		bpfrt_vm_run(vm, mem, mem_len, &r0, NULL, 0);
		bpfrt_vm_free(vm);
	} else if (!defaults && bpfrt_vm_load(insns, n, &o, &vm, NULL, 0) == 0) {
		run(vm, data + 1, mem_len, 0, &a);
		run(vm, data + 1, mem_len, 0, &b);
		if (!same(&a, &b))
			abort(); /* not deterministic */
		if (a.ret && strncmp(a.err, "insn ", 5))
			abort(); /* every fault names its instruction */
		run(vm, data + 1, mem_len, 1, &b);
		run_shifted(vm, data + 1, mem_len, &c);
		bpfrt_vm_free(vm);
		if (!a.ret && same(&a, &b) && same(&a, &c) && !fp_escapes(insns, n)) {
			differential(insns, n, BPFRT_ENGINE_INTERP, data + 1, mem_len, &a);
			differential(insns, n, BPFRT_ENGINE_JIT, data + 1, mem_len, &a);
		}
	}
	free(insns);
	return 0;
}
