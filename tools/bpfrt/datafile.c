/* datafile.c - reader for the bpf_conformance `.data` test files (see datafile.h): the
 * sections `-- asm`, `-- raw`, `-- mem`, `-- result` and `-- error`; every other section
 * (`-- c`, `-- no register offset`, ...) is skipped.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datafile.h"

enum datafile_section { DF_NONE, DF_ASM, DF_RAW, DF_MEM, DF_RESULT, DF_ERROR, DF_OTHER };

struct datafile_buf {
	char *s;
	size_t len, cap;
};

static int datafile_append(struct datafile_buf *b, const void *p, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *ns;

		while (cap < b->len + len + 1)
			cap *= 2;
		ns = realloc(b->s, cap);
		if (!ns)
			return -ENOMEM;
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, p, len);
	b->len += len;
	b->s[b->len] = 0;
	return 0;
}

static enum datafile_section datafile_section_of(const char *line)
{
	const char *p = line + 2;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "asm", 3) && !isalnum((unsigned char)p[3]))
		return DF_ASM;
	if (!strncmp(p, "raw", 3) && !isalnum((unsigned char)p[3]))
		return DF_RAW;
	if (!strncmp(p, "mem", 3) && !isalnum((unsigned char)p[3]))
		return DF_MEM;
	if (!strncmp(p, "result", 6) && !isalnum((unsigned char)p[6]))
		return DF_RESULT;
	if (!strncmp(p, "error", 5) && !isalnum((unsigned char)p[5]))
		return DF_ERROR;
	return DF_OTHER;
}

/* Hex tokens of a raw or mem line: a token of 16 digits (optionally 0x-prefixed) is one
 * 64-bit little-endian word, shorter tokens are single bytes. */
static int datafile_hex_line(const char *line, struct datafile_buf *out, char *err,
			     size_t errlen, unsigned lineno)
{
	const char *p = line;

	while (*p) {
		const char *t;
		size_t n;
		char tok[19];
		char *end;
		uint64_t v;

		while (isspace((unsigned char)*p) || *p == ',')
			p++;
		if (!*p || *p == '#')
			break;
		t = p;
		while (*p && !isspace((unsigned char)*p) && *p != ',')
			p++;
		n = (size_t)(p - t);
		if (n > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
			t += 2;
			n -= 2;
		}
		if (n == 0 || (n > 2 && n != 16) || n >= sizeof(tok))
			goto bad;
		memcpy(tok, t, n);
		tok[n] = 0;
		errno = 0;
		v = strtoull(tok, &end, 16);
		if (*end || errno)
			goto bad;
		for (unsigned i = 0; i < (n == 16 ? 8u : 1u); i++) {
			uint8_t byte = (uint8_t)(v >> (8 * i));

			if (datafile_append(out, &byte, 1))
				return -ENOMEM;
		}
		continue;
bad:
		snprintf(err, errlen, "line %u: bad hex token '%.*s'", lineno, (int)(p - t), t);
		return -EINVAL;
	}
	return 0;
}

void datafile_free(struct datafile *df)
{
	free(df->asm_text);
	free(df->raw);
	free(df->mem);
	free(df->error);
	memset(df, 0, sizeof(*df));
}

static int datafile_result_line(struct datafile *df, const char *line, char *err,
				size_t errlen, unsigned lineno)
{
	char *end;

	while (isspace((unsigned char)*line))
		line++;
	if (!*line || *line == '#' || df->has_result)
		return 0;
	errno = 0;
	df->result = strtoull(line, &end, 0);
	while (isspace((unsigned char)*end))
		end++;
	if (errno || (*end && *end != '#')) {
		int len = (int)strcspn(line, "\r\n");

		snprintf(err, errlen, "line %u: bad result '%.*s'", lineno, len > 40 ? 40 : len,
			 line);
		return -EINVAL;
	}
	df->has_result = 1;
	return 0;
}

static int datafile_error_line(struct datafile *df, const char *line)
{
	size_t len;

	while (isspace((unsigned char)*line))
		line++;
	len = strlen(line);
	while (len && isspace((unsigned char)line[len - 1]))
		len--;
	if (!len || (df->error && df->error[0]))
		return 0;
	free(df->error);
	df->error = strndup(line, len);
	return df->error ? 0 : -ENOMEM;
}

int datafile_load(const char *path, struct datafile *df, char *err, size_t errlen)
{
	struct datafile_buf asm_buf = { 0 }, raw = { 0 }, mem = { 0 };
	enum datafile_section sec = DF_NONE;
	char *line = NULL;
	size_t line_cap = 0;
	unsigned lineno = 0;
	int ret = 0, has_asm = 0;
	FILE *f;

	memset(df, 0, sizeof(*df));
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%.200s: %s", path, strerror(errno));
		return ret;
	}
	/* getline: a line of any length stays one line (a long mem line must not be cut
	 * inside a hex token) */
	while (!ret && getline(&line, &line_cap, f) != -1) {
		lineno++;
		if (!strncmp(line, "--", 2)) {
			sec = datafile_section_of(line);
			if (sec == DF_ERROR) {
				df->has_error = 1;
				if (!df->error && !(df->error = strdup("")))
					ret = -ENOMEM;
			}
			if (sec == DF_ASM) {
				has_asm = 1;
				/* keep line numbers: one empty line per line up to the header */
				for (unsigned i = 0; i < lineno && !ret; i++)
					ret = datafile_append(&asm_buf, "\n", 1);
			}
			continue;
		}
		switch (sec) {
		case DF_ASM:
			ret = datafile_append(&asm_buf, line, strlen(line));
			break;
		case DF_RAW:
			ret = datafile_hex_line(line, &raw, err, errlen, lineno);
			break;
		case DF_MEM:
			ret = datafile_hex_line(line, &mem, err, errlen, lineno);
			break;
		case DF_RESULT:
			ret = datafile_result_line(df, line, err, errlen, lineno);
			break;
		case DF_ERROR:
			ret = datafile_error_line(df, line);
			break;
		default:
			break;
		}
	}
	free(line);
	fclose(f);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%.200s: out of memory", path);
	if (ret) {
		free(asm_buf.s);
		free(raw.s);
		free(mem.s);
		datafile_free(df);
		return ret;
	}
	if (has_asm && !asm_buf.s)
		asm_buf.s = strdup("");
	df->asm_text = asm_buf.s;
	df->raw = (uint8_t *)raw.s;
	df->raw_len = raw.len;
	df->mem = (uint8_t *)mem.s;
	df->mem_len = mem.len;
	return 0;
}

static uint64_t unwind(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
		       struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5;
	if (r1 == 0)
		bpfrt_run_stop(ctx, 0);
	return r1;
}

const struct bpfrt_helper_proto datafile_unwind_helper = {
	.sz = sizeof(struct bpfrt_helper_proto), .id = 5, .name = "unwind", .fn = unwind,
};
