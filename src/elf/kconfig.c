/* kconfig.c - the values of the CONFIG_* externs of a .kconfig section, stored into an
 * extern with libbpf's rules for its type (brt_elf_kconfig_store()); the configuration
 * itself is read by util/kconfig.c (brt_kconfig_get()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/parse.h"
#include "util/util.h"

/* the value of a u64 in an integer of sz bytes, signed or not, without loss
 * (libbpf's is_kcfg_value_in_range()) */
static int in_range(uint64_t v, uint32_t sz, int is_signed)
{
	unsigned bits = sz * 8;

	if (sz >= 8)
		return 1;
	if (is_signed)
		return v + (UINT64_C(1) << (bits - 1)) < (UINT64_C(1) << bits);
	return !(v >> bits);
}

int brt_elf_kconfig_store(enum brt_kcfg_type type, int is_signed, const char *value, void *dst,
			  uint32_t sz, char *why, size_t whylen)
{
	uint8_t *out = dst;
	size_t len = strlen(value);
	uint64_t num;
	char *end;

	if (!len) {
		snprintf(why, whylen, "no value");
		return -EINVAL;
	}
	switch (value[0]) {
	case 'y':
	case 'n':
	case 'm':
		switch (type) {
		case BRT_KCFG_BOOL:
			if (value[0] == 'm')
				break;
			out[0] = value[0] == 'y';
			return 0;
		case BRT_KCFG_TRISTATE: { /* libbpf's enum libbpf_tristate: no 0, yes 1, module 2 */
			uint32_t tri = value[0] == 'y' ? 1 : value[0] == 'm' ? 2 : 0;

			memcpy(out, &tri, 4);
			return 0;
		}
		case BRT_KCFG_CHAR:
			out[0] = (uint8_t)value[0];
			return 0;
		default:
			break;
		}
		snprintf(why, whylen, "value '%c' implies %s type", value[0],
			 type == BRT_KCFG_BOOL ? "tristate or char" : "bool, tristate, or char");
		return -EINVAL;
	case '"':
		if (type != BRT_KCFG_CHAR_ARR) {
			snprintf(why, whylen, "value '%s' implies char array type", value);
			return -EINVAL;
		}
		if (len < 2 || value[len - 1] != '"') {
			snprintf(why, whylen, "invalid string config '%s'", value);
			return -EINVAL;
		}
		len -= 2;
		if (len >= sz) /* libbpf truncates, with a warning */
			len = sz - 1;
		memcpy(out, value + 1, len);
		out[len] = 0;
		return 0;
	default:
		errno = 0;
		num = strtoull(value, &end, 0);
		if (errno || *end) {
			snprintf(why, whylen, "value '%s' isn't a valid integer", value);
			return -EINVAL;
		}
		if (type != BRT_KCFG_INT && type != BRT_KCFG_CHAR) {
			snprintf(why, whylen, "value '%s' implies integer type", value);
			return -EINVAL;
		}
		if (type != BRT_KCFG_CHAR && !in_range(num, sz, is_signed)) {
			snprintf(why, whylen, "value '%llu' doesn't fit in %u bytes",
				 (unsigned long long)num, sz);
			return -ERANGE;
		}
		memcpy(out, &num, sz < 8 ? sz : 8); /* little-endian: the low bytes */
		return 0;
	}
}
