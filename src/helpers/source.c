/* source.c - the registry's answers to vm and the verifier: the built-in helpers
 * (registry.c) first, then those the host registered (host.c).  Both folders sit below
 * the registry, so it hands them these answers (struct brt_helper_source,
 * vm/helper_proto.h) when the library is loaded, before any program can be loaded.
 * Design: helpers.h.
 */
#include <stdlib.h>

#include "helpers/helpers.h"
#include "verifier/verifier.h"
#include "vm/vm.h"

const struct brt_helper_proto *brt_helper_get(uint32_t id)
{
	const struct brt_helper_proto *p = brt_helper_builtin(id);

	return p ? p : brt_helper_host_get(id);
}

brt_helper_fn *brt_helper_table_new(size_t *n)
{
	size_t nb;
	const brt_helper_fn *fns = brt_helper_default_table(&nb);
	uint32_t host_max = brt_helper_host_max_id();
	size_t nr = host_max >= nb ? (size_t)host_max + 1 : nb;
	size_t nk = BRT_KFUNC_HELPER_BASE + BRT_KFUNC_COUNT;
	brt_helper_fn *table;

	if (nr < nk)
		nr = nk;
	table = calloc(nr, sizeof(*table));
	if (!table)
		return NULL;
	for (size_t id = 0; id < nb; id++)
		if (brt_helper_builtin((uint32_t)id))
			table[id] = fns[id];
	brt_helper_host_fill(table, nr);
	/* the kernel functions a verified program's kfunc calls became (api/prog.c) */
	for (size_t k = 0; k < BRT_KFUNC_COUNT; k++)
		table[BRT_KFUNC_HELPER_BASE + k] = brt_kfunc_fns[k];
	*n = nr;
	return table;
}

static const struct brt_helper_source source = {
	.get = brt_helper_get,
	.table_new = brt_helper_table_new,
};

/* Run when the library is loaded.  libbpfrt.a is one object (CMakeLists.txt), so a
 * static link that keeps any of the library keeps this too. */
__attribute__((constructor)) static void helpers_hand_down(void)
{
	brt_vm_set_helper_source(&source);
	brt_verify_set_helper_source(&source);
}
