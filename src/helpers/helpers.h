/* helpers.h - the helpers/ folder's interface: the helper registry.  vm and the verifier
 * get its answers (brt_helper_get(), brt_helper_table_new()) handed down as a struct
 * brt_helper_source (src/vm/helper_proto.h) when the library is loaded (source.c); this
 * header declares them with what the folder's files share and what tools and tests use.
 *
 * Theory of operation: a helper is a row of src/vm/helpers.def (id, name, prototype)
 * joined by id to the row the implementing folder lists in its header
 * (BRT_<FOLDER>_HELPERS: vm, maps, trace, attach, api): its function and the program
 * types that may call it.  registry.c builds the tables as constant data, so nothing
 * depends on initialisation order, and a helpers.def row without a folder row, a folder
 * row without a helpers.def row or two rows for one id stop the build.  Helpers the host adds at run time
 * (bpfrt_helper_register()) live in host.c, in a table that grows with them.
 */
#ifndef BPFRT_SRC_HELPERS_HELPERS_H
#define BPFRT_SRC_HELPERS_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "vm/helper_proto.h"

/* The prototype of helper id, built-in or registered by the host, or NULL; and a new
 * table of every helper's function by id (*n entries, NULL when out of memory): the two
 * answers of struct brt_helper_source (source.c). */
const struct brt_helper_proto *brt_helper_get(uint32_t id);
brt_helper_fn *brt_helper_table_new(size_t *n);
/* The same table, shared by every verified program's vm (source.c). */
const brt_helper_fn *brt_helper_table_shared(size_t *n);

/* The built-in helper with this id (a helpers.def row with a function), or NULL. */
const struct brt_helper_proto *brt_helper_builtin(uint32_t id);

/* The built-in helpers' functions indexed by id (NULL where none), *n entries. */
const brt_helper_fn *brt_helper_default_table(size_t *n);

/* Helpers the host registered (host.c): the entry for id or NULL (entries never change
 * once visible), the highest registered id (0 when none), their number, and storing each registered
 * function with an id below n into table[id]. */
const struct brt_helper_proto *brt_helper_host_get(uint32_t id);
uint32_t brt_helper_host_max_id(void);
/* How many helpers the host registered so far (registrations only add). */
uint32_t brt_helper_host_count(void);
void brt_helper_host_fill(brt_helper_fn *table, size_t n);

/* graph.c: objects of bpf_obj_new alive in this process (a test's leak check) */
long brt_graph_live_objects(void);

/* The kernel functions of vm/kfuncs.def (kfuncs.c), with the helper ABI, and their table
 * indexed by row; the helper tables carry them at BRT_KFUNC_HELPER_BASE + row.  A
 * KFUNC_AS row's shared function is kfuncs.c's own. */
#define KFUNC(name, flags, sets)                                                           \
	uint64_t brt_kfunc_##name(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,       \
				  uint64_t r5, struct bpfrt_run_ctx *ctx);
#define KFUNC_AS(name, fn, flags, sets)
#include "vm/kfuncs.def"
#undef KFUNC_AS
#undef KFUNC
extern const brt_helper_fn brt_kfunc_fns[BRT_KFUNC_COUNT];

/* The helper ABI's function for kfunc name, returning expr of the registers it reads
 * (r1..r5, rc): the registers a kfunc does not take are ignored here, once. */
#define KFUNC_FN(name, expr)                                                               \
	uint64_t brt_kfunc_##name(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,       \
				  uint64_t r5, struct bpfrt_run_ctx *rc)                    \
	{                                                                                  \
		(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)rc;                \
		return expr;                                                               \
	}

#endif
