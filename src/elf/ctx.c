/* ctx.c - the bottom of the ELF reader: the error message every pass reports through
 * (brt_elf_fail), the file's bytes read on demand (brt_elf_fetch) and the strings the
 * parsed object keeps (brt_elf_keep).  It calls no other file of elf/, so open.c,
 * maps_sec.c and reloc.c can all use it without a cycle.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int brt_elf_btf_fail(struct brt_elf_ctx *ctx, int ret, uint32_t sec, const char *msg)
{
	if (ret == -ENOMEM || ctx->err[0])
		return ret;
	snprintf(ctx->err, ctx->errlen, "elf: %s: section %u '%s'%s%s", ctx->name, sec,
		 ctx->secs[sec].name, strncmp(msg, "offset ", 7) ? ": " : " ", msg);
	return ret;
}

/* Bytes [off, off + len) of the file into ctx->buf at off (checked against the file's
 * size by the caller): from the caller's memory, or read from the fd.  0 or -errno. */
int brt_elf_fetch(struct brt_elf_ctx *ctx, uint64_t off, size_t len)
{
	if (ctx->src_mem) {
		if (ctx->src_mem != ctx->buf) /* a small file read whole into buf: there */
			memcpy(ctx->buf + off, ctx->src_mem + off, len);
		return 0;
	}
	if (ctx->src_fd < 0) /* after the open: everything needed was read */
		return brt_elf_fail(ctx, -EINVAL, 0, 0, "file bytes [0x%llx, +0x%zx) not read",
				    (unsigned long long)off, len);
	while (len) {
		ssize_t got = pread(ctx->src_fd, ctx->buf + off, len, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return brt_elf_fail(ctx, got < 0 ? -errno : -EINVAL, 0, 0,
					    "reading [0x%llx, +0x%zx) of the file: %s",
					    (unsigned long long)off, len,
					    got < 0 ? strerror(errno) : "it is shorter than it was");
		off += (size_t)got;
		len -= (size_t)got;
	}
	return 0;
}

int brt_elf_fetch_all(struct brt_elf_ctx *ctx)
{
	for (size_t i = 1; i < ctx->nsecs; i++) {
		struct brt_elf_sec *s = &ctx->secs[i];
		int ret;

		if (s->data || s->type == SHT_NOBITS || !s->size)
			continue;
		if ((ret = brt_elf_fetch(ctx, s->file_off, s->size)))
			return ret;
		s->data = ctx->buf + s->file_off;
	}
	return 0;
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
