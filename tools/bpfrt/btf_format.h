/* btf_format.h - map keys and values printed through their BTF type the way bpftool's
 * btf_dumper prints them (btf_format.c), for `bpfrt map`.
 */
#ifndef BPFRT_TOOLS_BTF_FORMAT_H
#define BPFRT_TOOLS_BTF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "btf/btf.h"
#include "json.h"

/* Print the value at data (size bytes) of type id as bpftool's btf_dumper does (plain: its
 * text flavour, else JSON) into w.  0, or -EINVAL when the type reads past size or is a
 * kind that cannot be printed, -E2BIG when nesting or work runs past the bounds; what was
 * printed until then stays, with every collection closed. */
int btf_format(const struct brt_btf *btf, uint32_t id, const void *data, size_t size, int plain,
	       struct json *w);

#endif
