/* jsonw.c - JSON laid out the way bpftool's json_writer lays it out, so that `bpfrt map`
 * output can be compared with bpftool's byte for byte: compact, or "pretty" where only
 * object members start a new line (array elements stay on the line they began on) and the
 * closing bracket of a non-empty collection goes on a line of its own, four spaces a level.
 * Strings are escaped per RFC 8259 (bpftool 7.1 writes \' and turns a backslash into \n).
 */
#include <stdarg.h>

#include "util/util.h"

void brt_jsonw_init(struct brt_jsonw *w, FILE *out, int pretty)
{
	*w = (struct brt_jsonw){ .out = out, .pretty = pretty };
}

static void newline(struct brt_jsonw *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->out);
	for (unsigned int i = 0; i < w->depth; i++)
		fputs("    ", w->out);
}

/* A comma before everything but the first item of a collection. */
static void separate(struct brt_jsonw *w)
{
	if (w->sep)
		fputc(w->sep, w->out);
	w->sep = ',';
}

static void open_nest(struct brt_jsonw *w, char c)
{
	separate(w);
	fputc(c, w->out);
	w->depth++;
	w->sep = 0;
}

static void close_nest(struct brt_jsonw *w, char c)
{
	if (w->depth)
		w->depth--;
	if (w->sep)
		newline(w);
	fputc(c, w->out);
	w->sep = ',';
}

void brt_jsonw_start_object(struct brt_jsonw *w)
{
	open_nest(w, '{');
}

void brt_jsonw_end_object(struct brt_jsonw *w)
{
	close_nest(w, '}');
}

void brt_jsonw_start_array(struct brt_jsonw *w)
{
	open_nest(w, '[');
}

void brt_jsonw_end_array(struct brt_jsonw *w)
{
	close_nest(w, ']');
}

void brt_json_put_string(FILE *out, const char *s, size_t n)
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

void brt_jsonw_name(struct brt_jsonw *w, const char *name)
{
	separate(w);
	newline(w);
	w->sep = 0;
	brt_json_put_string(w->out, name, strlen(name));
	fputs(w->pretty ? ": " : ":", w->out);
}

void brt_jsonw_string(struct brt_jsonw *w, const char *s, size_t n)
{
	separate(w);
	brt_json_put_string(w->out, s, n);
}

void brt_jsonw_printf(struct brt_jsonw *w, const char *fmt, ...)
{
	va_list ap;

	separate(w);
	va_start(ap, fmt);
	vfprintf(w->out, fmt, ap);
	va_end(ap);
}

void brt_jsonw_finish(struct brt_jsonw *w)
{
	fputc('\n', w->out);
	w->sep = 0;
}
