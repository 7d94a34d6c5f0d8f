/* fuzz_btf.c - fuzz target for the .BTF reader (src/elf/btf.c): any byte string must parse
 * or be refused with a reason; once parsed, every type's name, modifier chain and size
 * must resolve without looping or reading out of bounds.
 */
#include <stdlib.h>

#include "elf/elf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct brt_btf *btf;
	char err[256] = "";

	if (brt_btf_parse(data, size, &btf, err, sizeof(err))) {
		if (!err[0])
			abort();
		return 0;
	}
	for (uint32_t id = 0; id < btf->ntypes + 2; id++) {
		uint64_t sz;

		if (!brt_btf_name(btf, id))
			abort();
		if (brt_btf_skip_mods(btf, id) > btf->ntypes + 1)
			abort();
		(void)brt_btf_resolve_size(btf, id, &sz);
	}
	brt_btf_free(btf);
	return 0;
}
