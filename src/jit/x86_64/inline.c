/* inline.c - pass `inlinehelper`: built-in helpers emitted in place of their call.
 *
 * bpf_get_prandom_u32 is a thread's xorshift64* (vm/helpers.c): a load, three
 * shift-and-xors, a store and a multiply, about as long as the call and return that
 * reach it.  Its state is initial-exec TLS, so at fs:[off] with the same off in every
 * thread; the code reads it there, and a state of 0 (a thread's first number: the
 * helper seeds it from the clock) calls the helper itself.  The same state and the same
 * steps: the interpreter's calls and the JIT's draw one sequence, call for call.
 * Only a call the vm's helper table resolves to the built-in helper is inlined, so a
 * helper registered in its place (bpfrt_helper_register()) is still the one called.
 */
#include "jit/x86_64/x86.h"

#define B (&st->buf)

static bpfrt_helper_fn prandom_fn;
static int64_t prandom_off;

void brt_jit_set_prandom(bpfrt_helper_fn fn, int64_t tls_off)
{
	if (!is_simm32(tls_off))
		return; /* not an fs-relative disp32: calls stay calls */
	prandom_off = tls_off;
	prandom_fn = fn;
}

bool brt_jit_is_inline_call(const struct jit_state *st, bpfrt_helper_fn fn)
{
	return (st->passes & BRT_JIT_PASS(inlinehelper)) && prandom_fn && fn == prandom_fn;
}

/* mov rax, fs:[off] (load) or mov fs:[off], rax: no base, no index (SIB 0x25) */
static void fs_rax(struct jit_state *st, bool store)
{
	emit1(B, 0x64);
	emit_rex(B, true, RAX, 0, false);
	emit2(B, store ? 0x89 : 0x8b, (uint8_t)(((RAX & 7) << 3) | 4));
	emit1(B, 0x25);
	emit_u32(B, (uint32_t)(int32_t)prandom_off);
}

/* x ^= x >> n (SH_SHR) or x ^= x << n (SH_SHL), x in rax */
static void xorshift(struct jit_state *st, enum x86_shift dir, uint8_t n)
{
	emit_mov_rr(B, true, TMP, RAX);
	emit_shift_ri(B, dir, true, TMP, n);
	emit_alu_rr(B, ALU_XOR, true, RAX, TMP);
}

/* r0 = the call's result; r1-r5 are left as they were (a call clobbers them anyway).
 * The fast path is straight-line (a taken jump over an inline slow call cost the
 * 16-call bench row 3 ns): a state of 0 jumps to the program's STUB_PRANDOM with the
 * address to come back to in TMP.  Only rax and TMP change on the fast path. */
void brt_jit_emit_inline_call(struct jit_state *st, bpfrt_helper_fn fn)
{
	size_t lea_end;

	(void)fn; /* prandom_fn: the stub calls it */
	st->inline_prandom = true;
	fs_rax(st, false);
	/* lea r11, [rip + done] (patched below) */
	emit_rex(B, true, TMP, 0, false);
	emit2(B, 0x8d, (uint8_t)(((TMP & 7) << 3) | 5));
	emit_u32(B, 0);
	lea_end = B->len;
	emit_rr(B, 0x85, true, RAX, RAX); /* test rax, rax */
	emit_jcc_rel(B, CC_E, false, st->prev_stub[STUB_PRANDOM]);
	xorshift(st, SH_SHR, 12);
	xorshift(st, SH_SHL, 25);
	xorshift(st, SH_SHR, 27);
	fs_rax(st, true);
	emit_mov_imm64(B, TMP, 0x2545f4914f6cdd1dull);
	emit_imul_rr(B, true, RAX, TMP);
	emit_shift_ri(B, SH_SHR, true, RAX, 32);
	{
		uint32_t rel = (uint32_t)(B->len - lea_end);

		memcpy(B->p + lea_end - 4, &rel, 4);
	}
}

/* A thread's first number: the helper seeds the state and returns it; back to TMP.  rsp
 * is 16-byte aligned at the jump (an inline call's site, as any call's), so the pushed
 * return address and 8 more keep it so at the helper's call. */
void brt_jit_emit_prandom_stub(struct jit_state *st)
{
	void *addr;

	if (!st->inline_prandom)
		return;
	memcpy(&addr, &prandom_fn, sizeof(addr));
	st->stub[STUB_PRANDOM] = (uint32_t)B->len;
	emit_push(B, TMP);
	emit_alu_ri(B, ALU_SUB, true, RSP, 8);
	brt_jit_emit_call(st, addr);
	emit_alu_ri(B, ALU_ADD, true, RSP, 8);
	emit_pop(B, TMP);
	emit2(B, 0x41, 0xff); /* jmp r11 */
	emit1(B, (uint8_t)(0xe0 | (TMP & 7)));
}
