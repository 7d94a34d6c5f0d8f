/* fuzz_btf_format.c - fuzz target for the BTF value formatter (tools/bpfrt/btf_format.c) that
 * `bpfrt map dump` runs over a map's BTF copy, which another process may have scribbled
 * over: input = N (one byte), N value bytes, then a .BTF blob.  Whatever the reader
 * accepts, every type is printed over the value (an exactly sized copy, so a read past it
 * trips ASan) in both flavours, and the output must stay balanced: brackets closed, no
 * string left open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf_format.h"
#include "fuzz.h"

#define MAX_IDS 64 /* types printed per input: keeps each run short */

static int balanced(const char *s, size_t len)
{
	int depth = 0, in_str = 0;

	for (size_t i = 0; i < len; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = 0;
		} else if (s[i] == '"') {
			in_str = 1;
		} else if (s[i] == '{' || s[i] == '[') {
			depth++;
		} else if ((s[i] == '}' || s[i] == ']') && --depth < 0) {
			return 0;
		}
	}
	return !depth && !in_str;
}

static void print_one(const struct brt_btf *btf, uint32_t id, const uint8_t *val, size_t n,
		      int plain)
{
	struct json w;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return;
	json_init(&w, f, plain ? JSON_BPFTOOL : JSON_COMPACT);
	(void)btf_format(btf, id, val, n, plain, &w);
	fclose(f);
	if (!balanced(out, len))
		abort();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct brt_btf *btf;
	char err[256];
	uint8_t *val;
	size_t n;

	if (!size || (size_t)data[0] + 1 > size)
		return 0;
	n = data[0];
	if (brt_btf_parse(data + 1 + n, size - 1 - n, &btf, err, sizeof(err)))
		return 0;
	val = malloc(n ? n : 1);
	if (val) {
		memcpy(val, data + 1, n);
		for (uint32_t id = 0; id < btf->ntypes + 1 && id < MAX_IDS; id++) {
			print_one(btf, id, val, n, 1);
			print_one(btf, id, val, n, 0);
		}
	}
	free(val);
	brt_btf_free(btf);
	return 0;
}
