/* fuzz_elf.c - fuzz target for the ELF loader (src/elf): any byte string must parse or be
 * refused with an "elf: ..." message, never crash or leak; when it parses, every applied
 * relocation must point inside its program and every call must land inside it too.  Inputs
 * of odd size are opened with BRT_ELF_LAZY and their programs linked last to first (the
 * object API's open links each on first need), a failed link leaving its program empty.
 */
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct brt_elf_obj *obj;
	char err[512];

	unsigned flags = size % 2 ? BRT_ELF_LAZY : 0;

	if (brt_elf_open_mem(data, size, "fuzz.o", flags, &obj, err, sizeof(err))) {
		if (strncmp(err, "elf: fuzz.o: ", 13))
			abort();
		return 0;
	}
	for (size_t i = obj->nprogs; flags && i-- > 0;) {
		int ret;

		err[0] = 0;
		ret = brt_elf_prog_link(obj, i, err, sizeof(err));
		if (ret != (obj->progs[i].link_state < 0 ? obj->progs[i].link_state : 0) ||
		    (ret && (obj->progs[i].insns || obj->progs[i].insn_cnt)) ||
		    (ret && err[0] && strncmp(err, "elf: fuzz.o: ", 13)))
			abort();
	}
	if (flags && obj->link)
		abort(); /* every program linked: the parse is gone */
	for (size_t i = 0; i < obj->nprogs; i++) {
		const struct brt_elf_prog *p = &obj->progs[i];

		for (size_t r = 0; r < p->nrelocs; r++) {
			const struct brt_elf_reloc *rl = &p->relocs[r];
			int is_map = rl->kind == BRT_ELF_RELO_MAP_FD ||
				     rl->kind == BRT_ELF_RELO_MAP_VALUE;

			/* a ksym's target is a vmlinux BTF id, not an index here */
			if (rl->insn_idx >= p->insn_cnt ||
			    (rl->kind != BRT_ELF_RELO_KSYM &&
			     (rl->target < 0 ||
			      (size_t)rl->target >= (is_map ? obj->nmaps : p->insn_cnt))))
				abort();
		}
	}
	brt_elf_free(obj);
	return 0;
}
