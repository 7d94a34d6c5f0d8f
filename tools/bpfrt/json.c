/* json.c - the CLI's streaming JSON writer (see json.h). */
#include <inttypes.h>
#include <string.h>

#include "json.h"
#include "util/util.h"

void json_init(struct json *j, FILE *out, int pretty)
{
	*j = (struct json){ .out = out, .pretty = pretty };
}

static void indent(struct json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->out);
	for (int i = 0; i < j->depth; i++)
		fputs("    ", j->out);
}

/* Separator and indentation before a value (not after a key: that is on its line). */
static void before_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth > 0 && j->depth <= JSON_MAX_DEPTH) {
		if (j->count[j->depth - 1]++)
			fputc(',', j->out);
		indent(j);
	}
}

static void open_nest(struct json *j, char c)
{
	before_value(j);
	fputc(c, j->out);
	if (j->depth < JSON_MAX_DEPTH)
		j->count[j->depth] = 0;
	j->depth++;
}

static void close_nest(struct json *j, char c)
{
	int had = j->depth <= JSON_MAX_DEPTH && j->count[j->depth - 1];

	j->depth--;
	if (had)
		indent(j);
	fputc(c, j->out);
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

static void write_string(FILE *out, const char *s)
{
	brt_json_put_string(out, s ? s : "", s ? strlen(s) : 0);
}

void json_key(struct json *j, const char *key)
{
	before_value(j);
	write_string(j->out, key);
	fputs(j->pretty ? ": " : ":", j->out);
	j->after_key = 1;
}

void json_string(struct json *j, const char *s)
{
	before_value(j);
	write_string(j->out, s);
}

void json_uint(struct json *j, uint64_t v)
{
	before_value(j);
	fprintf(j->out, "%" PRIu64, v);
}

void json_int(struct json *j, int64_t v)
{
	before_value(j);
	fprintf(j->out, "%" PRId64, v);
}

void json_bool(struct json *j, int v)
{
	before_value(j);
	fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j)
{
	before_value(j);
	fputs("null", j->out);
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

static void newline(FILE *out, int depth)
{
	fputc('\n', out);
	for (int i = 0; i < depth; i++)
		fputs("    ", out);
}

void json_reformat(const char *s, size_t len, FILE *out)
{
	const char *end = s + len;
	int depth = 0;

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
