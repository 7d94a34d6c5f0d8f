/* json.c - the CLI's streaming JSON writer (see json.h for the layouts).
 *
 * One separator character is enough state for any depth: it is ',' once the innermost open
 * collection has an item, and closing a collection sets it again because the collection
 * was itself an item of the one around it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "json.h"

void json_init(struct json *j, FILE *out, int layout)
{
	*j = (struct json){ .out = out, .layout = (enum json_layout)layout };
}

static void newline(FILE *out, unsigned int depth)
{
	fputc('\n', out);
	for (unsigned int i = 0; i < depth; i++)
		fputs("    ", out);
}

/* Separator and line break before an item (a key, or a value that follows no key): the
 * value after a key stays on the key's line.  Top-level documents get no separator. */
static void before_item(struct json *j, int is_key)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth) {
		if (j->sep)
			fputc(',', j->out);
		if (j->layout == JSON_PRETTY || (is_key && j->layout == JSON_BPFTOOL))
			newline(j->out, j->depth);
	}
	j->sep = ',';
}

static void open_nest(struct json *j, char c)
{
	before_item(j, 0);
	fputc(c, j->out);
	j->depth++;
	j->sep = 0;
}

static void close_nest(struct json *j, char c)
{
	if (j->depth)
		j->depth--;
	if (j->sep && j->layout != JSON_COMPACT)
		newline(j->out, j->depth);
	fputc(c, j->out);
	j->sep = ',';
}

void json_begin_object(struct json *j)
{
	open_nest(j, '{');
}

void json_end_object(struct json *j)
{
	close_nest(j, '}');
}

void json_begin_array(struct json *j)
{
	open_nest(j, '[');
}

void json_end_array(struct json *j)
{
	close_nest(j, ']');
}

static void put_string(FILE *out, const char *s, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		default:
			if (c < 0x20)
				fprintf(out, "\\u%04x", c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

void json_put_string(FILE *out, const char *s)
{
	put_string(out, s ? s : "", s ? strlen(s) : 0);
}

void json_key(struct json *j, const char *key)
{
	before_item(j, 1);
	put_string(j->out, key ? key : "", key ? strlen(key) : 0);
	fputs(j->layout == JSON_COMPACT ? ":" : ": ", j->out);
	j->after_key = 1;
}

void json_string(struct json *j, const char *s)
{
	json_string_n(j, s ? s : "", s ? strlen(s) : 0);
}

void json_string_n(struct json *j, const char *s, size_t n)
{
	before_item(j, 0);
	put_string(j->out, s, n);
}

void json_uint(struct json *j, uint64_t v)
{
	json_printf(j, "%" PRIu64, v);
}

void json_int(struct json *j, int64_t v)
{
	json_printf(j, "%" PRId64, v);
}

void json_bool(struct json *j, int v)
{
	json_printf(j, "%s", v ? "true" : "false");
}

void json_null(struct json *j)
{
	json_printf(j, "null");
}

void json_printf(struct json *j, const char *fmt, ...)
{
	va_list ap;

	before_item(j, 0);
	va_start(ap, fmt);
	vfprintf(j->out, fmt, ap);
	va_end(ap);
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_kv_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void json_kv_int(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_int(j, v);
}

void json_finish(struct json *j)
{
	fputc('\n', j->out);
	j->sep = 0;
	j->after_key = 0;
}

/* Copy a string token (opening quote at s) verbatim; returns the position after it. */
static const char *copy_string(const char *s, const char *end, FILE *out)
{
	fputc(*s++, out);
	while (s < end && *s != '"') {
		if (*s == '\\' && s + 1 < end)
			fputc(*s++, out);
		fputc(*s++, out);
	}
	if (s < end)
		fputc(*s++, out);
	return s;
}

void json_reformat(const char *s, size_t len, FILE *out)
{
	const char *end = s + len;
	unsigned int depth = 0;

	while (s < end) {
		char c = *s;

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			/* whitespace between top-level documents keeps one line break */
			if (c == '\n' && depth == 0)
				fputc('\n', out);
			s++;
		} else if (c == '"') {
			s = copy_string(s, end, out);
		} else if (c == '{' || c == '[') {
			const char *n = s + 1;

			while (n < end && strchr(" \t\r\n", *n) && *n)
				n++;
			if (n < end && (*n == '}' || *n == ']')) { /* empty: stays "{}" */
				fputc(c, out);
				fputc(*n, out);
				s = n + 1;
				continue;
			}
			fputc(c, out);
			newline(out, ++depth);
			s++;
		} else if (c == '}' || c == ']') {
			newline(out, depth > 0 ? --depth : 0);
			fputc(c, out);
			s++;
		} else if (c == ',') {
			fputc(',', out);
			newline(out, depth);
			s++;
		} else if (c == ':') {
			fputs(": ", out);
			s++;
		} else {
			fputc(c, out);
			s++;
		}
	}
}
