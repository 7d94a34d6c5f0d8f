/* util.h - small shared pieces: diagnostics, options-struct checks, safe guest-memory
 * access.  The util/ folder's interface.
 */
#ifndef BPFRT_SRC_UTIL_UTIL_H
#define BPFRT_SRC_UTIL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bpfrt.h"

#define BRT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define brt_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

void brt_print(enum bpfrt_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Options structs (struct { size_t sz; ... }): valid when sz covers at least the size
 * field and every byte past what this build knows (known_size) is zero.  Prints a
 * message naming the struct and returns 0 when invalid. */
int brt_opts_valid(const void *opts, size_t known_size, const char *type_name);

/* Read a field only if the caller's struct is large enough to hold it. */
#define BRT_OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))
#define BRT_OPTS_GET(opts, field, fallback) (BRT_OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* JSON in bpftool's json_writer layout (jsonw.c): compact, or pretty as `bpftool map
 * dump` prints typed values.  Values are written with printf (numbers, literals) or as
 * escaped strings; names precede an object's members; finish ends the document. */
struct brt_jsonw {
	FILE *out;
	unsigned int depth; /* open collections */
	int pretty;
	char sep;           /* ',' once the current collection has an item, else 0 */
};
void brt_jsonw_init(struct brt_jsonw *w, FILE *out, int pretty);
void brt_jsonw_start_object(struct brt_jsonw *w);
void brt_jsonw_end_object(struct brt_jsonw *w);
void brt_jsonw_start_array(struct brt_jsonw *w);
void brt_jsonw_end_array(struct brt_jsonw *w);
void brt_jsonw_name(struct brt_jsonw *w, const char *name);
void brt_jsonw_string(struct brt_jsonw *w, const char *s, size_t n);
void brt_jsonw_printf(struct brt_jsonw *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void brt_jsonw_finish(struct brt_jsonw *w);
/* n bytes of s as a JSON string literal, escaped per RFC 8259 (also the CLI's writer). */
void brt_json_put_string(FILE *out, const char *s, size_t n);

/* Unaligned-safe guest memory access; each compiles to one mov. */
static inline uint64_t brt_load(const void *p, unsigned size)
{
	switch (size) {
	case 1: { uint8_t v; memcpy(&v, p, 1); return v; }
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

static inline void brt_store(void *p, unsigned size, uint64_t val)
{
	switch (size) {
	case 1: { uint8_t v = (uint8_t)val; memcpy(p, &v, 1); break; }
	case 2: { uint16_t v = (uint16_t)val; memcpy(p, &v, 2); break; }
	case 4: { uint32_t v = (uint32_t)val; memcpy(p, &v, 4); break; }
	default: memcpy(p, &val, 8); break;
	}
}

#endif
