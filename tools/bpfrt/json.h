/* json.h - a small streaming JSON writer for the CLI's -j/--json and -p/--pretty output
 * (bpftool's convention: -j compact, -p indented).  Strings are escaped per RFC 8259. */
#ifndef BPFRT_TOOLS_JSON_H
#define BPFRT_TOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *out;                     /* destination */
	int pretty;                    /* indent and break lines */
	int depth;                     /* open objects/arrays */
	int count[JSON_MAX_DEPTH];     /* values written at each depth (for commas) */
	int after_key;                 /* a key was written; its value comes next */
};

void json_init(struct json *j, FILE *out, int pretty);
void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
void json_end_array(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);
void json_uint(struct json *j, uint64_t v);
void json_int(struct json *j, int64_t v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* Shorthands for "key": value. */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_int(struct json *j, const char *key, int64_t v);
/* Finish the document (newline). */
void json_finish(struct json *j);
/* Re-indent JSON text (one or more documents) the way -p prints it; text that is not
 * JSON passes through with its whitespace squeezed, so only feed it JSON. */
void json_reformat(const char *s, size_t len, FILE *out);

#endif
