/* opts.c - validation of extensible options structs (libbpf's OPTS_VALID rule). */
#include <stddef.h>

#include "util/util.h"

int brt_opts_valid(const void *opts, size_t known_size, const char *type_name)
{
	const unsigned char *p = opts;
	size_t sz;

	if (!opts)
		return 1;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t)) {
		brt_print(BPFRT_WARN, "bpfrt: %s: sz %zu is smaller than its size field\n", type_name,
			  sz);
		return 0;
	}
	for (size_t i = known_size; i < sz; i++) {
		if (p[i]) {
			brt_print(BPFRT_WARN,
				  "bpfrt: %s: byte %zu is not zero but this library knows only %zu bytes\n",
				  type_name, i, known_size);
			return 0;
		}
	}
	return 1;
}
