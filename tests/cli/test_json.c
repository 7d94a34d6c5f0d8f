/* test_json.c - the CLI's JSON writer (tools/bpfrt/json.c): one document in each of the
 * three layouts, byte for byte (compact for -j, every item on its own line for -p, and
 * bpftool's json_writer layout for `bpfrt map`); string escapes; separators past a depth
 * the old fixed-size writer could not count; top-level documents never joined by commas.
 */
#include <stdlib.h>

#include "harness.h"
#include "json.h"

/* {"a":1,"b":[1,{"c":"x"},[]],"d":{}} */
static void sample(struct json *j)
{
	json_begin_object(j);
	json_kv_uint(j, "a", 1);
	json_key(j, "b");
	json_begin_array(j);
	json_int(j, 1);
	json_begin_object(j);
	json_kv_string(j, "c", "x");
	json_end_object(j);
	json_begin_array(j);
	json_end_array(j);
	json_end_array(j);
	json_key(j, "d");
	json_begin_object(j);
	json_end_object(j);
	json_end_object(j);
	json_finish(j);
}

/* 40 nested arrays, each [0, <inner>]: a comma at every level. */
static void deep(struct json *j)
{
	for (int i = 0; i < 40; i++) {
		json_begin_array(j);
		json_uint(j, 0);
	}
	for (int i = 0; i < 40; i++)
		json_end_array(j);
	json_finish(j);
}

/* A string with every escape, a NUL among its bytes, then raw printf values; two
 * top-level documents in a row. */
static void strings(struct json *j)
{
	json_begin_array(j);
	json_string_n(j, "a\0\"\\\n\t\r\b\f\x01z", 11);
	json_printf(j, "\"0x%02x\"", 0xab);
	json_bool(j, 1);
	json_null(j);
	json_end_array(j);
	json_finish(j);
	json_string(j, NULL);
	json_finish(j);
}

static char *deep_compact(void)
{
	static char buf[512];
	size_t n = 0;

	for (int i = 0; i < 39; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "[0,");
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "[0");
	for (int i = 0; i < 40; i++)
		buf[n++] = ']';
	buf[n++] = '\n';
	buf[n] = 0;
	return buf;
}

struct jcase {
	const char *name;
	void (*build)(struct json *j);
	enum json_layout layout;
	const char *want; /* NULL: computed (deep) */
};

static const struct jcase cases[] = {
	{ "compact", sample, JSON_COMPACT, "{\"a\":1,\"b\":[1,{\"c\":\"x\"},[]],\"d\":{}}\n" },
	{ "pretty", sample, JSON_PRETTY,
	  "{\n    \"a\": 1,\n    \"b\": [\n        1,\n        {\n            \"c\": \"x\"\n"
	  "        },\n        []\n    ],\n    \"d\": {}\n}\n" },
	{ "bpftool", sample, JSON_BPFTOOL,
	  "{\n    \"a\": 1,\n    \"b\": [1,{\n            \"c\": \"x\"\n        },[]\n    ],\n"
	  "    \"d\": {}\n}\n" },
	{ "deep", deep, JSON_COMPACT, NULL },
	{ "strings", strings, JSON_COMPACT,
	  "[\"a\\u0000\\\"\\\\\\n\\t\\r\\b\\f\\u0001z\",\"0xab\",true,null]\n\"\"\n" },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct jcase *c = &cases[i];
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);
		struct json j;

		T_CASE(c->name);
		if (!f) {
			T_FAIL("open_memstream failed");
			continue;
		}
		json_init(&j, f, c->layout);
		c->build(&j);
		fclose(f);
		T_EQ_STR(c->want ? c->want : deep_compact(), out);
		free(out);
	}
	return t_done();
}
