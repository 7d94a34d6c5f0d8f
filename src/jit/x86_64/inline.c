/* inline.c - pass `inlinehelper`: built-in helpers emitted in place of their call.
 *
 * bpf_get_prandom_u32 is a thread's xorshift64* (vm/helpers.c): a load, three
 * shift-and-xors, a store and a multiply, about as long as the call and return that
 * reach it.  Its state is initial-exec TLS, so at fs:[off] with the same off in every
 * thread; the code reads and writes it there.  The same state and the same steps: the
 * interpreter's calls and the JIT's draw one sequence, call for call.
 *
 * A thread's state is 0 until its first number, which the helper seeds from the clock.
 * A test of the state at each inlined call (and the branch to the seeding) cost the
 * 16-call bench row ~2.4 ns a run, more than the calls it replaced saved (session 16).
 * A state, once seeded, is never 0 again (xorshift maps only 0 to 0), so the test is
 * made once per run instead, at every way into the program's code from C -- the main
 * entry (brt_jit_call(), bpfrt_vm_native(), a tail call's jump) and each callback's C
 * entry (a bpf_timer callback runs on another thread) -- and a state of 0 there calls
 * the vm's seeding function (state = the seed the helper's first call would step from),
 * so every inlined call is straight-line code.  A packet-register program cannot
 * inline: it calls no helper (regmap.c, brt_jit_pkt_regs_fit).
 *
 * Only a call the vm's helper table resolves to the built-in helper is inlined, so a
 * helper registered in its place (bpfrt_helper_register()) is still the one called.
 */
#include "jit/x86_64/x86.h"

#define B (&st->buf)

static bpfrt_helper_fn prandom_fn;
static void (*prandom_seed)(void);
static int64_t prandom_off;

void brt_jit_set_prandom(bpfrt_helper_fn fn, void (*seed)(void), int64_t tls_off)
{
	if (!is_simm32(tls_off) || !seed)
		return; /* not an fs-relative disp32: calls stay calls */
	prandom_off = tls_off;
	prandom_seed = seed;
	prandom_fn = fn;
}

static bool is_inline_call(const struct jit_state *st, bpfrt_helper_fn fn)
{
	return (st->passes & BRT_JIT_PASS(inlinehelper)) && prandom_fn && fn == prandom_fn;
}

/* Whether instruction pc (row op) is a helper call emitted inline. */
bool brt_jit_is_inline_site(const struct jit_state *st, size_t pc, enum brt_op op)
{
	const struct bpf_insn *insn = &st->insns[pc];

	return op == BRT_OP_call_helper && insn->imm >= 0 && insn->imm != BPF_FUNC_tail_call &&
	       st->env->helper && prandom_fn &&
	       is_inline_call(st, st->env->helper(st->env->helper_arg, (uint32_t)insn->imm));
}

/* Before emission: whether any call is inlined, so the entries test the seed. */
void brt_jit_plan_inline(struct jit_state *st, const uint16_t *ops)
{
	for (size_t pc = 0; pc < st->n && !st->inline_prandom; pc++)
		st->inline_prandom = ops[pc] != BRT_OP_INVALID &&
				     brt_jit_is_inline_site(st, pc, (enum brt_op)ops[pc]);
}

/* The fs:[off] operand (mod 00, rm 100, SIB 0x25: no base, no index, disp32), reg the
 * ModRM reg field, after the caller's prefix, REX and opcode. */
static void fs_operand(struct jit_state *st, int reg)
{
	emit1(B, (uint8_t)(((reg & 7) << 3) | 4));
	emit1(B, 0x25);
	emit_u32(B, (uint32_t)(int32_t)prandom_off);
}

/* cmp qword fs:[off], 0 */
static void fs_test(struct jit_state *st)
{
	emit1(B, 0x64);
	emit_rex(B, true, 0, 0, false);
	emit1(B, 0x83);
	fs_operand(st, ALU_CMP);
	emit1(B, 0);
}

/* x ^= x >> n (SH_SHR) or x ^= x << n (SH_SHL), x in register x */
static void xorshift(struct jit_state *st, int x, enum x86_shift dir, uint8_t n)
{
	emit_mov_rr(B, true, TMP, x);
	emit_shift_ri(B, dir, true, TMP, n);
	emit_alu_rr(B, ALU_XOR, true, x, TMP);
}

/* the three steps on the state in register x */
static void xorshift_steps(struct jit_state *st, int x)
{
	xorshift(st, x, SH_SHR, 12);
	xorshift(st, x, SH_SHL, 25);
	xorshift(st, x, SH_SHR, 27);
}

/* rax = the number drawn from state x: (x * K) >> 32 */
static void draw(struct jit_state *st, int x)
{
	if (x != RAX)
		emit_mov_rr(B, true, RAX, x);
	emit_mov_imm64(B, TMP, 0x2545f4914f6cdd1dull);
	emit_imul_rr(B, true, RAX, TMP);
	emit_shift_ri(B, SH_SHR, true, RAX, 32);
}

/* mov TMP, fs:[0]: the thread pointer (the x86-64 TLS ABI's TCB starts with its own
 * address), so the state is an ordinary [TMP + off] operand */
static void thread_pointer(struct jit_state *st)
{
	emit1(B, 0x64);
	emit_rex(B, true, TMP, 0, false);
	emit1(B, 0x8b);
	emit1(B, (uint8_t)(((TMP & 7) << 3) | 4));
	emit1(B, 0x25);
	emit_u32(B, 0);
}

/* Call pc: r0 = the call's result; r1-r5 are left as they were (a call clobbers them
 * anyway).  Straight-line: the state was seeded at the program's entry.  Only rax and TMP
 * change, and TMP2 within a run of pass prandomreg (opt_prandomreg.c), which holds the
 * state there from the run's first call (which loads it) to its last (which stores it).
 * The state is read and written through the thread pointer, not as fs:[off]: on AMD
 * Zen a store to fs:[off] forwards to the next call's load of fs:[off] slowly (16 calls
 * 60 ns against 26 through [reg + off], session 20's EPYC host; the bench's helper row
 * was 1.69x native with the fs form, the calls 0.88x of it); fs:[0] is only read, so
 * its load waits for no store. */
void brt_jit_emit_inline_call(struct jit_state *st, size_t pc)
{
	unsigned run = st->prandom_run ? st->prandom_run[pc] : 0;
	int x = run ? TMP2 : RAX; /* a call on its own steps the state in rax */

	if (!(run & PRANDOM_HELD)) {
		thread_pointer(st);
		emit_load(B, 8, false, x, TMP, (int32_t)prandom_off);
	}
	xorshift_steps(st, x);
	if (!(run & PRANDOM_KEEP)) {
		thread_pointer(st);
		emit_store_r(B, 8, TMP, (int32_t)prandom_off, x);
	}
	draw(st, x);
}

/* Call the seeding function keeping every register an entry may have its arguments in
 * (rdi-r9; rax, r10 and r11 carry nothing at an entry), on a 16-byte aligned stack. */
static void seed_call(struct jit_state *st)
{
	static const uint8_t args[] = { RDI, RSI, RDX, RCX, R8, R9 };
	void *addr;

	memcpy(&addr, &prandom_seed, sizeof(addr)); /* code to data pointer, as dlsym */
	for (size_t i = 0; i < sizeof(args); i++)
		emit_push(B, args[i]);
	emit_push(B, RBP);
	emit_mov_rr(B, true, RBP, RSP);
	emit_alu_ri(B, ALU_AND, true, RSP, -16);
	brt_jit_emit_call(st, addr);
	emit_mov_rr(B, true, RSP, RBP);
	emit_pop(B, RBP);
	for (size_t i = sizeof(args); i-- > 0;)
		emit_pop(B, args[i]);
}

/* The first instructions of the main entry: a state of 0 goes to STUB_PRANDOM, which
 * seeds it and comes back; the fast path is a compare and a jump not taken. */
void brt_jit_emit_seed_main(struct jit_state *st)
{
	if (!st->inline_prandom)
		return;
	fs_test(st);
	emit_jcc_rel(B, CC_E, false, st->prev_stub[STUB_PRANDOM]);
	st->seed_back = (uint32_t)B->len;
}

/* The first instructions of a callback's C entry: the seeding in line, jumped over. */
void brt_jit_emit_seed_cb(struct jit_state *st)
{
	size_t j_seeded;

	if (!st->inline_prandom)
		return;
	fs_test(st);
	j_seeded = emit_jcc8_fwd(B, CC_NE);
	seed_call(st);
	patch8_here(B, j_seeded);
}

/* The main entry's seeding, out of its way; back to just after the test. */
void brt_jit_emit_prandom_stub(struct jit_state *st)
{
	if (!st->inline_prandom)
		return;
	st->stub[STUB_PRANDOM] = (uint32_t)B->len;
	seed_call(st);
	emit_jmp_rel(B, false, st->seed_back);
}
