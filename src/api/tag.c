/* tag.c - a program's tag, the kernel's bpf_prog_calc_tag(): what BPF_OBJ_GET_INFO_BY_FD
 * and fdinfo report (info.c) and what names the JIT's code for perf (prog.c), apart from
 * both so neither calls the other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "util/util.h"

/* The kernel's tag (bpf_prog_calc_tag()): the first 8 bytes of the SHA-256 of the
 * instructions as loaded, the immediates of map fd and map value loads zeroed (both
 * halves), which here are bpfrt's map-index forms. */
int brt_prog_tag(const struct bpf_insn *loaded, size_t n, unsigned char tag[BPF_TAG_SIZE])
{
	struct bpf_insn *insns;
	unsigned char digest[32];

	insns = malloc(n * sizeof(*insns) + 1);
	if (!insns)
		return -ENOMEM;
	memcpy(insns, loaded, n * sizeof(*insns));
	for (size_t i = 0; i + 1 < n; i++) {
		struct bpf_insn *in = &insns[i];

		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		if (in->src_reg == BPF_PSEUDO_MAP_IDX || in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE ||
		    in->src_reg == BPF_PSEUDO_MAP_FD || in->src_reg == BPF_PSEUDO_MAP_VALUE) {
			in->src_reg = in->src_reg == BPF_PSEUDO_MAP_IDX ? BPF_PSEUDO_MAP_FD :
				      in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE ? BPF_PSEUDO_MAP_VALUE :
										in->src_reg;
			in->imm = 0;
			if (!in[1].code && !in[1].dst_reg && !in[1].src_reg && !in[1].off)
				in[1].imm = 0;
		}
		i++;
	}
	brt_sha256(insns, n * sizeof(*insns), digest);
	memcpy(tag, digest, BPF_TAG_SIZE);
	free(insns);
	return 0;
}
