/* bpfrt/asm.h - the eBPF assembler (the conformance-suite syntax) and disassembler.
 * Included by <bpfrt.h>; not meant to be included on its own.
 */
#ifndef BPFRT_ASM_H
#define BPFRT_ASM_H

#include <stddef.h>

#include <linux/bpf.h>

#include "bpfrt/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Assemble eBPF assembly text into instructions.
 *
 * The language is the one of the bpf_conformance suite's `-- asm` sections:
 *   - one instruction per line; `label:` defines a label (alone or before an instruction);
 *     comments run from `#`, `//` or `;` to the end of the line;
 *   - registers `%r0`..`%r10` (the `%` may be left out);
 *   - numbers are decimal or 0x-hex, optionally signed.  A 32-bit immediate must fit
 *     -2^31..2^31-1 in decimal; hex may spell the unsigned range too (0xffffffff = -1).
 *     Offsets are 16-bit under the same rule; lddw takes any 64-bit value;
 *   - ALU: `add %r1, 5`, `add %r1, %r2`, `add32 ...`, likewise sub mul div sdiv mod smod or
 *     and lsh rsh arsh xor mov; `neg %r1`, `neg32 %r1`; `movsx864 %r1, %r2` (also
 *     movsx1664, movsx3264, movsx832, movsx1632);
 *   - byte order: `le16|le32|le64|be16|be32|be64 %r1`, `bswap16|32|64 %r1` (alias `swap16`..);
 *   - memory: `ldxb|ldxh|ldxw|ldxdw %r1, [%r2+off]`, sign-extending `ldxsb|ldxsh|ldxsw`,
 *     `stb|sth|stw|stdw [%r1-8], imm`, `stxb|stxh|stxw|stxdw [%r1+0], %r2`
 *     (`[%r1]` means offset 0);
 *   - atomics: `lock [fetch] add|or|and|xor[32] [%r1+off], %r2`, `lock xchg[32] ...`,
 *     `lock cmpxchg[32] ...`;
 *   - `lddw %r1, imm64`, and the pseudo forms `lddw %r1, KIND A [B]` that set src_reg:
 *     KIND is map_fd (1), map_value (2), btf_id (3), func (4), map_idx (5) or
 *     map_idx_value (6); A goes to the first slot's imm, B (default 0) to the second's,
 *     e.g. `lddw %r1, map_fd 3`, `lddw %r1, map_value 3 16`; `func` takes a jump target;
 *   - legacy packet loads: `ldabsb|ldabsh|ldabsw imm`, `ldindb|ldindh|ldindw %r1, imm`;
 *   - jumps: `ja TARGET`, `ja32 TARGET` (alias `gotol`), `jeq %r1, imm|%r2, TARGET`, likewise
 *     jne jgt jge jlt jle jsgt jsge jslt jsle jset and their `32` forms.  TARGET is an
 *     instruction offset `+N`/`-N` relative to the next instruction, or a label; the label
 *     `exit`, when not defined, names the first `exit` instruction;
 *   - calls: `call N` or `call NAME` (a helper by id, or by its <linux/bpf.h> name with
 *     or without bpf_: `call bpf_ktime_get_ns`), `call local TARGET` (bpf-to-bpf),
 *     `call %rN` or `callx %rN` (helper id in a register), `exit`.
 *
 * text:     NUL-terminated source.
 * filename: names the source in messages (NULL: "<input>").
 * out:      on success, a malloc()ed array the caller frees with free(); NULL on failure.
 * n_insns:  on success, the number of instructions in *out (lddw counts two).
 * err:      receives the first error as "FILE:LINE:COL: message", e.g.
 *           "prog.s:3:9: Invalid register '%r50'"; may be NULL when errlen is 0.
 *
 * Returns 0, or a negative errno (errno is set too): -EINVAL for malformed text or an empty
 * program, -E2BIG for more than 1,000,000 instructions, -ENOMEM. */
BPFRT_API int bpfrt_asm(const char *text, const char *filename, struct bpf_insn **out,
			size_t *n_insns, char *err, size_t errlen);

enum bpfrt_disasm_style {
	BPFRT_DISASM_KERNEL = 0, /* the Linux verifier log's text: "(bf) r0 = r2",
				  * "(85) call bpf_map_lookup_elem#1", "(95) exit" */
	BPFRT_DISASM_ASM = 1,	 /* the assembly bpfrt_asm() reads back to the same bytes */
};

/* Disassemble one instruction.
 *
 * insn:   the instruction; a wide one (lddw) also reads insn[1].
 * avail:  how many instructions are readable from insn on (a lddw with avail 1 is invalid).
 * style:  BPFRT_DISASM_KERNEL or BPFRT_DISASM_ASM.  The kernel style prints what the
 *         verifier log prints after "N: ", except map references in lddw, which read
 *         "map[id:N]" / "map[id:N][0]+OFF" as bpftool writes them (N is the fd or index
 *         stored in the instruction), and callx, which reads "callx rN" (Linux has none).
 *         The asm style is the syntax of bpfrt_asm(); jump targets are +N/-N offsets.
 * buf:    receives the text, NUL-terminated when buflen > 0.  64 bytes always suffice.
 *
 * Returns how many instruction slots were used (1, or 2 for lddw), or a negative errno
 * (errno is set too): -EINVAL when the instruction does not decode - unknown opcode,
 * register above r10, a non-zero unused field, lddw missing its second slot - with
 * buf holding "invalid: <reason> (code 0x.. dst r. src r. off . imm .)"; -ENOSPC when
 * buf is too small (the text is truncated). */
BPFRT_API int bpfrt_disasm_insn(const struct bpf_insn *insn, size_t avail,
				enum bpfrt_disasm_style style, char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif

#endif
