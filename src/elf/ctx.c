/* ctx.c - the bottom of the ELF reader: the error message every pass reports through
 * (brt_elf_fail) and the strings the parsed object keeps (brt_elf_keep).  It calls no other
 * file of elf/, so open.c, maps_sec.c and reloc.c can all use it without a cycle.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/parse.h"

int brt_elf_fail(struct brt_elf_ctx *ctx, int ret, uint32_t sec, uint64_t off, const char *fmt,
		 ...)
{
	char msg[512];
	va_list ap;

	if (ctx->err[0])
		return ret;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (sec && sec < ctx->nsecs)
		snprintf(ctx->err, ctx->errlen, "elf: %s: section %u '%s' offset 0x%llx: %s",
			 ctx->name, sec, ctx->secs[sec].name ? ctx->secs[sec].name : "?",
			 (unsigned long long)off, msg);
	else
		snprintf(ctx->err, ctx->errlen, "elf: %s: %s", ctx->name, msg);
	return ret;
}

const char *brt_elf_keep(struct brt_elf_obj *obj, const char *s)
{
	char *copy;

	if (obj->nstrings == obj->strings_cap) {
		size_t cap = obj->strings_cap ? 2 * obj->strings_cap : 16;
		char **n = realloc(obj->strings, cap * sizeof(*n));

		if (!n)
			return NULL;
		obj->strings = n;
		obj->strings_cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return NULL;
	obj->strings[obj->nstrings++] = copy;
	return copy;
}
