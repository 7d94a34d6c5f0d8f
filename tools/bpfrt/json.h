/* json.h - the CLI's one streaming JSON writer, in three layouts: compact (-j); pretty (-p:
 * every member and element on a line of its own); and bpftool's json_writer layout (`bpfrt
 * map`, so its output can be compared with bpftool's byte for byte: only object members
 * start a line, array elements stay on the line they began on).  Both pretty layouts indent
 * four spaces a level and put the closing bracket of a non-empty collection on its own line.
 * Strings are escaped per RFC 8259; nesting depth is not limited.
 */
#ifndef BPFRT_TOOLS_JSON_H
#define BPFRT_TOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum json_layout {
	JSON_COMPACT = 0, /* -j */
	JSON_PRETTY = 1,  /* -p: every member and element on its own line */
	JSON_BPFTOOL = 2, /* bpftool's json_writer pretty layout: members on their own line */
};

struct json {
	FILE *out;               /* destination */
	enum json_layout layout; /* where lines break */
	unsigned int depth;      /* open objects/arrays */
	char sep;                /* ',' once the current collection has an item, else 0 */
	int after_key;           /* a key was written; its value comes next */
};

/* layout: a enum json_layout; the -p flag (0 or 1) may be passed as it is. */
void json_init(struct json *j, FILE *out, int layout);
void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
void json_end_array(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);
/* n bytes of s (NULs included) as one string. */
void json_string_n(struct json *j, const char *s, size_t n);
void json_uint(struct json *j, uint64_t v);
void json_int(struct json *j, int64_t v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* A value written with printf: numbers in a chosen format, literals, pre-quoted text. */
void json_printf(struct json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Shorthands for "key": value. */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_int(struct json *j, const char *key, int64_t v);
/* Finish the document (newline); the next value starts a new document. */
void json_finish(struct json *j);
/* s as a JSON string on its own (quotes included), for output whose layout none of the
 * above gives (`bpfrt disasm -j`, `bpfrt run -j`); the same escapes as json_string(). */
void json_put_string(FILE *out, const char *s);
/* Re-indent JSON text (one or more documents) the way -p prints it; text that is not
 * JSON passes through with its whitespace squeezed, so only feed it JSON. */
void json_reformat(const char *s, size_t len, FILE *out);

#endif
