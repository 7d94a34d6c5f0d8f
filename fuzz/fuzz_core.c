/* fuzz_core.c - fuzz target for CO-RE relocations (src/btf/core.c): an object that parses
 * is relocated against its own .BTF (as cilium's tests do: every local type is then its own
 * candidate), so hostile records, accessor strings and types reach every kind's code
 * without a kernel.  Each relocation resolves or is refused; nothing crashes, leaks or
 * reads outside the records.
 */
#include <stdlib.h>
#include <string.h>

#include "btf/btf.h"
#include "elf/elf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct brt_elf_obj *obj;
	struct brt_core_index *ix = NULL;
	struct brt_core core;
	char err[512];

	if (brt_elf_open(data, size, "fuzz.o", &obj, err, sizeof(err)))
		return 0;
	if (!obj->btf || brt_core_init(&core, obj->btf, obj->btf)) {
		brt_elf_free(obj);
		return 0;
	}
	/* every other input searches through the index, the others scan: both ways run */
	if (size % 2 && !brt_core_index_build(obj->btf, &ix))
		core.index = ix;
	for (size_t i = 0; i < obj->nprogs; i++) {
		struct brt_elf_prog *p = &obj->progs[i];

		for (size_t k = 0; k < p->ncores; k++) {
			const struct brt_elf_core *c = &p->cores[k];
			struct brt_core_res res;
			int poisoned, ret;

			if (c->insn_idx >= p->insn_cnt)
				abort();
			ret = brt_core_calc(&core, p->name, c->rec, &res, err, sizeof(err));
			if (!ret)
				ret = brt_core_patch(p->insns, p->insn_cnt, c->insn_idx, p->name,
						     c->rec, &res, &poisoned, err, sizeof(err));
			(void)ret;
			brt_core_describe(obj->btf, c->rec, err, sizeof(err));
		}
	}
	brt_core_fini(&core);
	brt_core_index_free(ix);
	brt_elf_free(obj);
	return 0;
}
