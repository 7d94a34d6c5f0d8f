/* kfuncs.c - the rows of kfuncs.def as a table the verifier (flags, program types) and the
 * program loader (where a verified call goes) look names up in.  The functions are the
 * registry's (src/helpers/kfuncs.c).
 */
#include <string.h>

#include "vm/helper_proto.h"

static const struct brt_kfunc kfuncs[] = {
#define KFUNC(name_, flags_, sets_) { .name = #name_, .flags = (flags_), .sets = (sets_) },
#include "vm/kfuncs.def"
#undef KFUNC
};

const struct brt_kfunc *brt_kfunc_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(kfuncs) / sizeof(kfuncs[0]); i++)
		if (!strcmp(kfuncs[i].name, name))
			return &kfuncs[i];
	return NULL;
}

int brt_kfunc_index(const struct brt_kfunc *k)
{
	return (int)(k - kfuncs);
}
