/* fuzz_checked.c - fuzz target for the checked engine (src/vm/interp_loop.h, checked.c):
 * any program must load or be refused, and a run must end with r0 or a fault message,
 * never crash, within its budget.  Input: byte 0 = input memory length (mod 64), then that
 * many bytes of memory, then the program.  Helpers: 1 grants a writable buffer, 2 stops
 * the program; runs are deterministic, so a second run must give the same outcome.
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

static int run(struct bpfrt_vm *vm, uint8_t *mem, const uint8_t *init, size_t len,
	       uint64_t *r0, char *err, size_t errlen)
{
	struct brt_region region = { (uint64_t)(uintptr_t)mem, len, 1 };
	struct brt_run_opts o = { .r1 = (uint64_t)(uintptr_t)mem, .r2 = len, .regions = &region,
				  .nr_regions = 1, .skb_data = mem, .skb_len = len,
				  .helpers = helpers, .nr_helpers = 3 };

	memcpy(mem, init, len);
	memset(granted, 0, sizeof(granted));
	return brt_vm_run_opts(vm, &o, r0, err, errlen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_CHECKED, .insn_budget = 20000);
	size_t mem_len = size ? data[0] % 64u : 0, n;
	struct bpf_insn *insns;
	struct bpfrt_vm *vm;
	uint8_t mem[64];
	uint64_t r0a = 0, r0b = 0;
	char erra[256], errb[256];
	int a, b;

	if (size < 1 + mem_len)
		return 0;
	n = (size - 1 - mem_len) / sizeof(*insns);
	insns = malloc(n ? n * sizeof(*insns) : 1);
	if (!insns)
		return 0;
	memcpy(insns, data + 1 + mem_len, n * sizeof(*insns));
	if (bpfrt_vm_load(insns, n, &o, &vm, erra, sizeof(erra)) == 0) {
		a = run(vm, mem, data + 1, mem_len, &r0a, erra, sizeof(erra));
		b = run(vm, mem, data + 1, mem_len, &r0b, errb, sizeof(errb));
		if (a != b || (a == 0 && r0a != r0b) || (a && strcmp(erra, errb)))
			abort();
		if (a && strncmp(erra, "insn ", 5))
			abort(); /* every fault names its instruction */
		bpfrt_vm_free(vm);
	}
	free(insns);
	return 0;
}
