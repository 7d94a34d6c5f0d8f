/* test_tail_call.c - bpf_tail_call() between engines (brt_vm_tail_call()): JIT code jumps
 * into JIT code without growing the native stack, any other pair runs nested; on every
 * pair (the checked engine only with itself: its memory regions come from a checked
 * caller) a chain stops after 33 tail calls (the 34th run falls through, as the kernel's
 * MAX_TAIL_CALL_CNT; tests/maps/test_prog_array.c checks the same count against the
 * kernel), a callee's r0 replaces the caller's, an empty slot falls through.
 */
#include <stdint.h>
#include <stdlib.h>

#include "bpfrt.h"
#include "harness.h"
#include "vm/vm.h"

#define NSLOTS 4

static struct bpfrt_vm *slots[NSLOTS];
static uintptr_t frame_lo, frame_hi; /* the helper's frame addresses seen */

/* Helper 12 as the tests use it: r2 is the slot, NULL slots fall through. */
static uint64_t tail(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
		     struct bpfrt_run_ctx *ctx)
{
	volatile char here = 0;
	uintptr_t at = (uintptr_t)&here;

	(void)r3, (void)r4, (void)r5;
	frame_lo = frame_lo && frame_lo < at ? frame_lo : at;
	frame_hi = frame_hi > at ? frame_hi : at;
	if (r2 >= NSLOTS || !slots[r2])
		return 0;
	return brt_vm_tail_call(slots[r2], NULL, r1, ctx);
}

/* Counts its runs in the u64 at r1 (through r6 and the stack, so the frame it unwinds
 * has saved registers and a stack), then tail-calls slot `next`; 7 when that falls
 * through. */
static const char counter_fmt[] =
	"mov %%r6, %%r1\nstdw [%%r10-8], 1\nldxdw %%r2, [%%r10-8]\nlock add [%%r6+0], %%r2\n"
	"mov %%r1, %%r6\nmov %%r2, %d\ncall 12\nmov %%r0, 7\nexit\n";

static struct bpfrt_vm *load(const char *text, enum bpfrt_engine engine)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engine);
	BPFRT_OPTS(bpfrt_helper_proto, h, .id = BPF_FUNC_tail_call, .name = "tail", .fn = tail);
	struct bpf_insn *insns;
	struct bpfrt_vm *vm = NULL;
	char err[256];
	size_t n;

	if (bpfrt_asm(text, "tail", &insns, &n, err, sizeof(err))) {
		T_FAIL("asm: %s", err);
		return NULL;
	}
	if (bpfrt_vm_load(insns, n, &o, &vm, err, sizeof(err)) ||
	    bpfrt_helper_register(vm, &h)) {
		T_FAIL("load: %s", err);
		bpfrt_vm_free(vm);
		vm = NULL;
	}
	free(insns);
	return vm;
}

static struct bpfrt_vm *counter(int next, enum bpfrt_engine engine)
{
	char text[sizeof(counter_fmt) + 16];

	snprintf(text, sizeof(text), counter_fmt, next);
	return load(text, engine);
}

static void clear_slots(void)
{
	for (int i = 0; i < NSLOTS; i++) {
		bpfrt_vm_free(slots[i]);
		slots[i] = NULL;
	}
}

static uint64_t run(struct bpfrt_vm *vm, uint64_t *count)
{
	uint64_t r0 = 0;
	char err[256] = "";

	*count = 0;
	frame_lo = frame_hi = 0;
	if (bpfrt_vm_run(vm, count, sizeof(*count), &r0, err, sizeof(err)))
		T_FAIL("run: %s", err);
	return r0;
}

static const enum bpfrt_engine engines[] = { BPFRT_ENGINE_JIT, BPFRT_ENGINE_INTERP,
					     BPFRT_ENGINE_CHECKED };
static const char *const names[] = { "jit", "interp", "checked" };

int main(void)
{
	char name[96];
	uint64_t count;
	int have_jit;

	{
		struct bpfrt_vm *probe = NULL;
		BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_JIT);
		struct bpf_insn ex[2] = { { .code = BPF_ALU64 | BPF_MOV | BPF_K },
					  { .code = BPF_JMP | BPF_EXIT } };

		have_jit = bpfrt_vm_load(ex, 2, &o, &probe, NULL, 0) == 0;
		bpfrt_vm_free(probe);
	}
	for (size_t a = 0; a < 3; a++) {
		for (size_t b = 0; b < 3; b++) {
			if (!have_jit && (engines[a] == BPFRT_ENGINE_JIT ||
					  engines[b] == BPFRT_ENGINE_JIT))
				continue;
			/* a checked callee gets its regions from a checked caller only */
			if ((engines[a] == BPFRT_ENGINE_CHECKED) != (engines[b] == BPFRT_ENGINE_CHECKED))
				continue;
			/* two programs that tail-call each other: slot 0 -> slot 1 -> slot 0 ... */
			snprintf(name, sizeof(name), "chain %s -> %s", names[a], names[b]);
			T_CASE(name);
			slots[0] = counter(1, engines[a]);
			slots[1] = counter(0, engines[b]);
			if (!slots[0] || !slots[1]) {
				clear_slots();
				continue;
			}
			for (int again = 0; again < 2; again++) {
				T_EQ_U64(7, run(slots[0], &count));
				T_EQ_U64(1 + BRT_VM_MAX_TAIL_CALLS, count);
				if (a == 0 && b == 0) /* jumps: every call at the same depth */
					T_EQ_U64(0, frame_hi - frame_lo);
				else /* nested: each tail call deeper */
					T_ASSERT(frame_hi > frame_lo);
			}
			clear_slots();

			snprintf(name, sizeof(name), "result %s -> %s", names[a], names[b]);
			T_CASE(name);
			slots[0] = counter(1, engines[a]);
			slots[1] = load("mov %r0, 42\nexit\n", engines[b]);
			if (slots[0] && slots[1]) {
				T_EQ_U64(42, run(slots[0], &count));
				T_EQ_U64(1, count);
			}
			clear_slots();
		}
		snprintf(name, sizeof(name), "empty slot %s", names[a]);
		T_CASE(name);
		if (!have_jit && engines[a] == BPFRT_ENGINE_JIT)
			continue;
		slots[0] = counter(3, engines[a]);
		if (slots[0]) {
			T_EQ_U64(7, run(slots[0], &count));
			T_EQ_U64(1, count);
		}
		clear_slots();
	}
	return t_done();
}
