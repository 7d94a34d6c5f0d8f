/* prog_types.c - prog_types.def as an array indexed by program type, and the questions
 * the other folders ask it.
 */
#include "isa/isa.h"

/* RET(lo, hi) and RET_ANY fill ret_checked, ret_lo and ret_hi. */
#define RET(lo, hi) 1, lo, hi
#define RET_ANY 0, 0, 0
#define BRT_PROG_TYPE(t, nm, c, cname, csize, ret, r, hs, fl)                                 \
	[t] = { t, #nm, BRT_CTX_##c, cname, csize, ret, BRT_RUN_##r, hs, fl },
static const struct brt_prog_type types[BRT_PROG_TYPE_COUNT] = {
#include "isa/prog_types.def"
};
#undef BRT_PROG_TYPE
#undef RET_ANY
#undef RET

const struct brt_prog_type *brt_prog_type(uint32_t type)
{
	return type < BRT_PROG_TYPE_COUNT ? &types[type] : NULL;
}

uint32_t brt_prog_type_has(uint32_t type, uint32_t flags)
{
	return type < BRT_PROG_TYPE_COUNT ? types[type].flags & flags : 0;
}

const char *brt_prog_type_name(uint32_t type)
{
	return type < BRT_PROG_TYPE_COUNT ? types[type].name : "unknown";
}
