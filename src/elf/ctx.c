/* ctx.c - the bottom of the ELF reader: the error message every pass reports through
 * (brt_elf_fail), the file's bytes read on demand (brt_elf_fetch) and the strings the
 * parsed object keeps (brt_elf_keep), a section's symbols by name (brt_elf_syms_by_name).
 * It calls no other file of elf/, so open.c, maps_sec.c and reloc.c can all use it
 * without a cycle.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
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

static int cmp_sym_name(const void *a, const void *b, void *arg)
{
	const struct brt_elf_sym *syms = (const struct brt_elf_sym *)arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(syms[x].name, syms[y].name);

	return c ? c : x < y ? -1 : x > y;
}

int brt_elf_syms_by_name(const struct brt_elf_ctx *ctx, uint32_t sec, uint64_t max_value,
			 uint32_t **by, size_t *n)
{
	uint32_t *nb = realloc(*by, (ctx->nsyms + 1) * sizeof(**by));

	if (!nb)
		return -ENOMEM;
	*by = nb;
	*n = 0;
	for (size_t j = 0; j < ctx->nsyms; j++)
		if (ctx->syms[j].shndx == sec && ctx->syms[j].value <= max_value)
			nb[(*n)++] = (uint32_t)j;
	qsort_r(nb, *n, sizeof(*nb), cmp_sym_name, (void *)(uintptr_t)ctx->syms);
	return 0;
}

const struct brt_elf_sym *brt_elf_sym_named(const struct brt_elf_ctx *ctx, const uint32_t *by,
					    size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(ctx->syms[by[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(ctx->syms[by[lo]].name, name) ? &ctx->syms[by[lo]] : NULL;
}

int brt_elf_datasec(const struct brt_elf_ctx *ctx, const char *name)
{
	const struct brt_btf *btf = ctx->obj->btf;

	if (!ctx->datasecs_listed)
		return brt_btf_find(btf, name, BTF_KIND_DATASEC);
	for (size_t i = 0; i < ctx->ndatasecs; i++)
		if (!strcmp(btf->strs + btf->types[ctx->datasecs[i]]->name_off, name))
			return (int)ctx->datasecs[i];
	return -ENOENT;
}
