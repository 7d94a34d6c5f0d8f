/* registry.c - every built-in helper: the prototypes of src/vm/helpers.def joined by id
 * with the functions each folder lists in its header, as constant tables.  The lookups
 * vm and the verifier make are source.c's.  Design: helpers.h.
 */
#include <string.h>

#include "api/api.h"
#include "attach/attach.h"
#include "helpers/helpers.h"
#include "maps/maps.h"
#include "trace/trace.h"
#include "util/util.h"
#include "vm/vm.h"

#define ALL_ROWS(X)                                                                      \
	BRT_VM_HELPERS(X)                                                                \
	BRT_MAPS_HELPERS(X)                                                              \
	BRT_MAPS_SOCK_HELPERS(X)                                                         \
	BRT_TRACE_HELPERS(X)                                                             \
	BRT_ATTACH_HELPERS(X)                                                            \
	BRT_ATTACH_SOCK_HELPERS(X)                                                       \
	BRT_API_HELPERS(X)

/* Each folder row's id, named after it: a second row for one id is a redefinition, and a
 * helpers.def row without a folder row uses a name never defined; both stop the build. */
#define ROW(id, fn, types) ROW_##id = 1,
enum { ALL_ROWS(ROW) };
#undef ROW

/* ... and the other way: a folder row whose id has no helpers.def row. */
enum {
#define HELPER(id_, name_, gpl, ret_, a1, a2, a3, a4, a5) DEFINED_##id_ = 1,
#include "vm/helpers.def"
#undef HELPER
};

/* The prototypes: each member designated on its own, so the folder rows can give .types
 * (a 64-bit mask, too wide for the enum trick above) and helpers.def the rest. */
static const struct brt_helper_proto protos[] = {
#define TYPES(id, fn, mask) [id].types = (mask),
	ALL_ROWS(TYPES)
#undef TYPES
#define HELPER(id_, name_, gpl, ret_, a1, a2, a3, a4, a5)                                    \
	[id_ * ROW_##id_].id = (id_), [id_].name = #name_, [id_].gpl_only = (gpl),             \
	[id_].ret = BRT_RET_##ret_,                                                           \
	[id_].args = { BRT_ARG_##a1, BRT_ARG_##a2, BRT_ARG_##a3, BRT_ARG_##a4, BRT_ARG_##a5 },
#include "vm/helpers.def"
#undef HELPER
};

#define FN(id, fn, types) [id * DEFINED_##id] = fn,
static const brt_helper_fn fns[] = { ALL_ROWS(FN) };
#undef FN

const struct brt_helper_proto *brt_helper_builtin(uint32_t id)
{
	if (id >= BRT_ARRAY_SIZE(protos) || id >= BRT_ARRAY_SIZE(fns) || !protos[id].name ||
	    !fns[id])
		return NULL;
	return &protos[id];
}

const brt_helper_fn *brt_helper_default_table(size_t *n)
{
	*n = BRT_ARRAY_SIZE(fns);
	return fns;
}
