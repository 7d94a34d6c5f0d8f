/* test_interp.c - the interpreter's semantics, instruction group by group, on both the
 * fast and the checked engine: edge operands Linux defines (division by zero, INT_MIN/-1,
 * shift masking, 32-bit zero extension, sign extension), byte swaps, JMP32, atomics,
 * legacy packet loads, bpf-to-bpf calls.  The kernel itself is compared in
 * test_diff_oracle.c; the conformance suite in tests/conformance.
 */
#include "vmtest.h"

struct icase {
	const char *name;
	const char *text;
	uint8_t mem[16];
	size_t mem_len;
	uint64_t r0;
};

static const struct icase cases[] = {
	/* division and modulo */
	{ "div64 by zero reg is 0", "mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1\nexit", .r0 = 0 },
	{ "mod64 by zero reg keeps dst", "mov %r0, 7\nmov %r1, 0\nmod %r0, %r1\nexit", .r0 = 7 },
	{ "div32 by zero zero-extends", "lddw %r0, 0x100000007\nmov %r1, 0\ndiv32 %r0, %r1\nexit",
	  .r0 = 0 },
	{ "mod32 by zero zero-extends", "lddw %r0, 0x100000007\nmov %r1, 0\nmod32 %r0, %r1\nexit",
	  .r0 = 7 },
	{ "sdiv64 INT64_MIN / -1", "lddw %r0, 0x8000000000000000\nsdiv %r0, -1\nexit",
	  .r0 = 0x8000000000000000ull },
	{ "smod64 INT64_MIN % -1", "lddw %r0, 0x8000000000000000\nmov %r1, -1\nsmod %r0, %r1\nexit",
	  .r0 = 0 },
	{ "sdiv32 INT_MIN / -1", "mov32 %r0, 0x80000000\nsdiv32 %r0, -1\nexit", .r0 = 0x80000000 },
	{ "smod32 by zero keeps low half", "mov %r0, -7\nmov %r1, 0\nsmod32 %r0, %r1\nexit",
	  .r0 = 0xfffffff9 },
	{ "sdiv64 truncates", "mov %r0, -7\nsdiv %r0, 2\nexit", .r0 = 0xfffffffffffffffdull },
	{ "smod64 sign of dividend", "mov %r0, -7\nsmod %r0, 2\nexit", .r0 = UINT64_MAX },
	{ "smod32 pos by neg", "mov %r0, 7\nsmod32 %r0, -2\nexit", .r0 = 1 },
	{ "sdiv64 by zero imm", "mov %r0, -7\nsdiv %r0, 0\nexit", .r0 = 0 },
	{ "div64 imm sign-extended", "mov %r0, -1\ndiv %r0, -1\nexit", .r0 = 1 },
	{ "div32 imm on low half", "mov %r0, -1\ndiv32 %r0, 2\nexit", .r0 = 0x7fffffff },
	{ "mod64 imm", "mov %r0, 23\nmod %r0, 5\nexit", .r0 = 3 },
	/* shifts: amounts masked to the width */
	{ "lsh64 by 65 is by 1", "mov %r0, 1\nmov %r1, 65\nlsh %r0, %r1\nexit", .r0 = 2 },
	{ "rsh32 by 33 is by 1", "mov %r0, -1\nmov %r1, 33\nrsh32 %r0, %r1\nexit",
	  .r0 = 0x7fffffff },
	{ "lsh32 imm 36 is by 4", "mov %r0, 0x11\nlsh32 %r0, 36\nexit", .r0 = 0x110 },
	{ "arsh32 zero-extends", "mov32 %r0, 0x80000000\narsh32 %r0, 4\nexit", .r0 = 0xf8000000 },
	{ "arsh64 keeps sign", "lddw %r0, 0x8000000000000000\narsh %r0, 63\nexit", .r0 = UINT64_MAX },
	/* 32-bit results are zero-extended */
	{ "add32 wraps", "mov %r0, -1\nadd32 %r0, 1\nexit", .r0 = 0 },
	{ "sub32 zero-extends", "mov %r0, 0\nsub32 %r0, 1\nexit", .r0 = 0xffffffff },
	{ "mul32 truncates", "mov32 %r0, 0x10000\nmul32 %r0, 0x10000\nexit", .r0 = 0 },
	{ "mul64 wraps", "lddw %r0, 0x8000000000000000\nmul %r0, -1\nexit",
	  .r0 = 0x8000000000000000ull },
	{ "neg32 INT_MIN", "mov32 %r0, 0x80000000\nneg32 %r0\nexit", .r0 = 0x80000000 },
	{ "neg64", "mov %r0, 5\nneg %r0\nexit", .r0 = 0xfffffffffffffffbull },
	{ "mov32 reg zero-extends", "mov %r1, -1\nmov32 %r0, %r1\nexit", .r0 = 0xffffffff },
	{ "mov64 imm sign-extends", "mov %r0, -2\nexit", .r0 = 0xfffffffffffffffeull },
	{ "mov32 imm zero-extends", "mov32 %r0, -2\nexit", .r0 = 0xfffffffe },
	{ "xor32 clears high", "lddw %r0, 0xffffffff00000000\nxor32 %r0, 0\nexit", .r0 = 0 },
	/* sign-extending moves */
	{ "movsx8 64", "mov %r1, 0x80\nmovsx864 %r0, %r1\nexit", .r0 = 0xffffffffffffff80ull },
	{ "movsx16 64", "mov %r1, 0x8001\nmovsx1664 %r0, %r1\nexit", .r0 = 0xffffffffffff8001ull },
	{ "movsx32 64", "mov32 %r1, 0x80000000\nmovsx3264 %r0, %r1\nexit",
	  .r0 = 0xffffffff80000000ull },
	{ "movsx16 32 zero-extends", "mov %r1, 0x8000\nmovsx1632 %r0, %r1\nexit", .r0 = 0xffff8000 },
	{ "movsx8 32", "mov %r1, 0x7f\nmovsx832 %r0, %r1\nexit", .r0 = 0x7f },
	/* byte order */
	{ "be16", "lddw %r0, 0x1122334455667788\nbe16 %r0\nexit", .r0 = 0x8877 },
	{ "be32", "lddw %r0, 0x1122334455667788\nbe32 %r0\nexit", .r0 = 0x88776655 },
	{ "be64", "lddw %r0, 0x1122334455667788\nbe64 %r0\nexit", .r0 = 0x8877665544332211ull },
	{ "le16 truncates", "lddw %r0, 0x1122334455667788\nle16 %r0\nexit", .r0 = 0x7788 },
	{ "le32 truncates", "lddw %r0, 0x1122334455667788\nle32 %r0\nexit", .r0 = 0x55667788 },
	{ "le64", "lddw %r0, 0x1122334455667788\nle64 %r0\nexit", .r0 = 0x1122334455667788ull },
	{ "bswap16", "lddw %r0, 0x1122334455667788\nbswap16 %r0\nexit", .r0 = 0x8877 },
	{ "bswap32", "lddw %r0, 0x1122334455667788\nbswap32 %r0\nexit", .r0 = 0x88776655 },
	{ "bswap64", "lddw %r0, 0x1122334455667788\nbswap64 %r0\nexit",
	  .r0 = 0x8877665544332211ull },
	/* jumps */
	{ "jeq32 compares low halves",
	  "lddw %r1, 0x100000000\nmov %r0, 1\njeq32 %r1, 0, out\nmov %r0, 2\nout:\nexit", .r0 = 1 },
	{ "jeq 64 does not", "lddw %r1, 0x100000000\nmov %r0, 1\njeq %r1, 0, out\nmov %r0, 2\n"
	  "out:\nexit", .r0 = 2 },
	{ "jsgt negative imm", "mov %r1, -1\nmov %r0, 1\njsgt %r1, -2, out\nmov %r0, 2\nout:\nexit",
	  .r0 = 1 },
	{ "jgt unsigned", "mov %r1, -1\nmov %r0, 1\njgt %r1, 5, out\nmov %r0, 2\nout:\nexit",
	  .r0 = 1 },
	{ "jslt32 on low half", "lddw %r1, 0x00000000ffffffff\nmov %r0, 1\njslt32 %r1, 0, out\n"
	  "mov %r0, 2\nout:\nexit", .r0 = 1 },
	{ "jset", "mov %r1, 6\nmov %r2, 1\nmov %r0, 1\njset %r1, %r2, out\nmov %r0, 2\nout:\nexit",
	  .r0 = 2 },
	{ "ja32 backward and forward", "mov %r0, 0\nja32 b\na:\nadd %r0, 1\nexit\nb:\nadd %r0, 2\n"
	  "ja32 a", .r0 = 3 },
	{ "lddw pseudo form loads imm64", "lddw %r0, map_value 3 16\nexit",
	  .r0 = 3 | (16ull << 32) },
	/* memory */
	{ "ldxsb sign-extends", "ldxsb %r0, [%r1+1]\nexit", { 1, 0xfe }, 2, 0xfffffffffffffffeull },
	{ "ldxsh", "ldxsh %r0, [%r1]\nexit", { 0x00, 0x80 }, 2, 0xffffffffffff8000ull },
	{ "ldxsw", "ldxsw %r0, [%r1]\nexit", { 0, 0, 0, 0x80 }, 4, 0xffffffff80000000ull },
	{ "ldxw zero-extends", "ldxw %r0, [%r1]\nexit", { 0, 0, 0, 0x80 }, 4, 0x80000000 },
	{ "stdw sign-extends imm", "stdw [%r10-8], -1\nldxdw %r0, [%r10-8]\nexit", .r0 = UINT64_MAX },
	{ "stw truncates imm", "stdw [%r10-8], 0\nstw [%r10-8], -1\nldxdw %r0, [%r10-8]\nexit",
	  .r0 = 0xffffffff },
	{ "unaligned load", "ldxw %r0, [%r1+1]\nexit", { 0, 1, 2, 3, 4 }, 5, 0x04030201 },
	{ "store to input memory", "stxh [%r1+2], %r2\nldxw %r0, [%r1]\nexit", { 1, 1, 1, 1 }, 4,
	  0x00040101 },
	/* atomics */
	{ "lock add", "mov %r2, 5\nlock add [%r1], %r2\nldxdw %r0, [%r1]\nexit", { 10 }, 8, 15 },
	{ "lock fetch add returns old", "mov %r2, 5\nlock fetch add [%r1], %r2\nmov %r0, %r2\nexit",
	  { 10 }, 8, 10 },
	{ "lock fetch or32 zero-extends", "mov %r2, -1\nlock fetch or32 [%r1], %r2\nldxdw %r0, [%r1]\n"
	  "add %r0, %r2\nexit", { 1 }, 8, 0xffffffffull + 1 },
	{ "lock fetch and", "mov %r2, 6\nlock fetch and [%r1], %r2\nldxdw %r0, [%r1]\nexit", { 12 }, 8,
	  4 },
	{ "lock fetch xor32", "mov %r2, 3\nlock fetch xor32 [%r1], %r2\nldxw %r0, [%r1]\nlsh %r0, 8\n"
	  "or %r0, %r2\nexit", { 5 }, 8, 0x605 },
	{ "lock xchg", "mov %r2, 7\nlock xchg [%r1], %r2\nldxdw %r0, [%r1]\nlsh %r0, 8\nor %r0, %r2\n"
	  "exit", { 9 }, 8, 0x709 },
	{ "lock cmpxchg success", "mov %r0, 9\nmov %r2, 7\nlock cmpxchg [%r1], %r2\nldxdw %r3, [%r1]\n"
	  "lsh %r0, 8\nor %r0, %r3\nexit", { 9 }, 8, 0x907 },
	{ "lock cmpxchg failure", "mov %r0, 8\nmov %r2, 7\nlock cmpxchg [%r1], %r2\nldxdw %r3, [%r1]\n"
	  "lsh %r0, 8\nor %r0, %r3\nexit", { 9 }, 8, 0x909 },
	{ "lock cmpxchg32 compares low half", "lddw %r0, 0x100000009\nmov %r2, 7\n"
	  "lock cmpxchg32 [%r1], %r2\nexit", { 9 }, 8, 9 },
	/* legacy packet loads: network byte order; out of bounds ends with r0 = 0 */
	{ "ldabsb", "ldabsb 3\nexit", { 0x12, 0x34, 0x56, 0x78 }, 4, 0x78 },
	{ "ldabsh", "ldabsh 1\nexit", { 0x12, 0x34, 0x56, 0x78 }, 4, 0x3456 },
	{ "ldabsw", "ldabsw 0\nexit", { 0x12, 0x34, 0x56, 0x78 }, 4, 0x12345678 },
	{ "ldindb", "mov %r3, 1\nldindb %r3, 2\nexit", { 0x12, 0x34, 0x56, 0x78 }, 4, 0x78 },
	{ "ldindh negative register", "mov %r3, -1\nldindh %r3, 2\nexit", { 0x12, 0x34, 0x56 }, 3,
	  0x3456 },
	{ "ldabsw out of bounds ends with 0", "mov %r0, 99\nldabsw 1\nmov %r0, 5\nexit",
	  { 1, 2, 3, 4 }, 4, 0 },
	{ "ldindb out of bounds", "mov %r0, 99\nmov %r3, -5\nldindb %r3, 2\nmov %r0, 5\nexit",
	  { 1, 2, 3, 4 }, 4, 0 },
	/* pairs the fast loop runs as one superinstruction, and look-alikes it must not fuse */
	{ "mov then xor", "mov %r1, 6\nmov %r2, 3\nmov %r0, %r1\nxor %r0, %r2\nexit", .r0 = 5 },
	{ "mov then op reading dst", "mov %r1, 6\nmov %r0, %r1\nmul %r0, %r0\nexit", .r0 = 36 },
	{ "mov then sub of itself", "mov %r1, 6\nmov %r0, %r1\nsub %r0, %r0\nexit", .r0 = 0 },
	{ "mov then add imm", "mov %r1, 6\nmov %r0, %r1\nadd %r0, -10\nexit",
	  .r0 = 0xfffffffffffffffcull },
	{ "mov64 then and32", "mov %r1, -1\nmov %r0, %r1\nand32 %r0, -16\nexit", .r0 = 0xfffffff0 },
	{ "mov32 then or32", "mov %r1, -1\nmov32 %r0, %r1\nor32 %r0, 1\nexit", .r0 = 0xffffffff },
	{ "mov32 then add64 (not fused)", "mov %r1, -1\nmov32 %r0, %r1\nadd %r0, 1\nexit",
	  .r0 = 0x100000000ull },
	{ "mov then shifts", "mov %r1, -1\nmov %r0, %r1\nrsh %r0, 60\nmov %r2, %r1\narsh32 %r2, 4\n"
	  "add %r0, %r2\nexit", .r0 = 0xfull + 0xffffffff },
	{ "mov then lsh reg", "mov %r1, 3\nmov %r2, 66\nmov %r0, %r1\nlsh %r0, %r2\nexit", .r0 = 12 },
	{ "mov then op on another register", "mov %r1, 6\nmov %r0, %r1\nadd %r1, 1\nadd %r0, %r1\n"
	  "exit", .r0 = 13 },
	{ "jump onto the op after a mov", "mov %r1, 6\nmov %r0, 1\nja l\nmov %r0, %r1\nl:\nadd %r0, 2\n"
	  "exit", .r0 = 3 },
	{ "ldxw then its zero extension", "ldxw %r0, [%r1]\nmov32 %r0, %r0\nexit", { 1, 2, 3, 0xf4 }, 4,
	  0xf4030201 },
	{ "ldxh then another register's extension", "mov %r2, -1\nldxh %r0, [%r1]\nmov32 %r0, %r2\n"
	  "exit", { 1, 2 }, 2, 0xffffffff },
	{ "jump onto the extension after a load", "mov %r0, -1\nja l\nldxb %r0, [%r1]\nl:\n"
	  "mov32 %r0, %r0\nexit", { 1 }, 1, 0xffffffff },
	{ "mov32 imm then stxdw", "stdw [%r10-8], -1\nmov32 %r6, -2\nstxdw [%r10-8], %r6\n"
	  "ldxdw %r0, [%r10-8]\nexit", .r0 = 0xfffffffe },
	{ "mov64 imm then stxdw", "mov %r6, -2\nstxdw [%r10-8], %r6\nldxdw %r0, [%r10-8]\nexit",
	  .r0 = 0xfffffffffffffffeull },
	{ "mov imm then stxb keeps the register", "stdw [%r10-8], 0\nmov %r6, 0x1ff\n"
	  "stxb [%r10-8], %r6\nldxdw %r0, [%r10-8]\nadd %r0, %r6\nexit", .r0 = 0xff + 0x1ff },
	{ "mov imm then stxh to input", "mov32 %r3, 0x1234\nstxh [%r1+1], %r3\nldxw %r0, [%r1]\nexit",
	  { 9, 9, 9, 9 }, 4, 0x09123409 },
	{ "jump onto the store after a mov imm", "stdw [%r10-8], 0\nmov %r6, 7\nja l\nmov %r6, 9\n"
	  "l:\nstxw [%r10-8], %r6\nldxdw %r0, [%r10-8]\nexit", .r0 = 7 },
	/* bpf-to-bpf calls */
	{ "callee has its own frame", "stdw [%r10-8], 1\ncall local f\nldxdw %r0, [%r10-8]\nexit\n"
	  "f:\nstdw [%r10-8], 2\nexit", .r0 = 1 },
	{ "callee reads caller's stack", "stdw [%r10-8], 42\nmov %r1, %r10\ncall local f\nexit\n"
	  "f:\nldxdw %r0, [%r1-8]\nexit", .r0 = 42 },
	{ "r6-r9 restored", "mov %r6, 6\nmov %r9, 9\ncall local f\nmov %r0, %r6\nadd %r0, %r9\nexit\n"
	  "f:\nmov %r6, 0\nmov %r9, 0\nexit", .r0 = 15 },
	{ "8 frames are allowed", "call local f1\nexit\nf1:\ncall local f2\nexit\nf2:\ncall local f3\n"
	  "exit\nf3:\ncall local f4\nexit\nf4:\ncall local f5\nexit\nf5:\ncall local f6\nexit\n"
	  "f6:\ncall local f7\nexit\nf7:\nstdw [%r10-512], 7\nldxdw %r0, [%r10-512]\nexit", .r0 = 7 },
};

int main(void)
{
	for (size_t e = 0; e < sizeof(vt_engines) / sizeof(vt_engines[0]); e++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const struct icase *c = &cases[i];
			uint8_t mem[16];
			uint64_t r0 = 0xdead;
			char err[256], name[128];
			int ret;

			snprintf(name, sizeof(name), "%s [%s]", c->name, vt_engine_names[e]);
			T_CASE(name);
			memcpy(mem, c->mem, sizeof(mem));
			ret = vt_run(c->text, vt_engines[e], c->mem_len ? mem : NULL, c->mem_len, &r0,
				     err, sizeof(err));
			if (ret) {
				T_FAIL("run failed (%d): %s", ret, err);
				continue;
			}
			T_EQ_U64(c->r0, r0);
		}
	}
	return t_done();
}
