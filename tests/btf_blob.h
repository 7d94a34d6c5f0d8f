/* btf_blob.h - a small BTF a test writes by hand (type words and a string section) laid
 * out as BPF_BTF_LOAD takes it, header first, and loaded on either side: the kernel's
 * bpf() or bpfrt_bpf(), whichever function the test passes.
 */
#ifndef BPFRT_TESTS_BTF_BLOB_H
#define BPFRT_TESTS_BTF_BLOB_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>
#include <linux/btf.h>

/* The header, types (types_len bytes) and strs (strs_len bytes, the leading NUL
 * included) in one malloc'd buffer of *size bytes; NULL when out of memory. */
static inline void *btf_blob(const void *types, uint32_t types_len, const void *strs,
			     uint32_t strs_len, uint32_t *size)
{
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h), .type_len = types_len,
				.str_off = types_len, .str_len = strs_len };
	unsigned char *b = malloc(sizeof(h) + types_len + strs_len);

	if (!b)
		return NULL;
	memcpy(b, &h, sizeof(h));
	memcpy(b + sizeof(h), types, types_len);
	memcpy(b + sizeof(h) + types_len, strs, strs_len);
	*size = (uint32_t)sizeof(h) + types_len + strs_len;
	return b;
}

/* BPF_BTF_LOAD of that BTF through bpf: the fd, or -1 with errno set. */
static inline int btf_blob_load(int (*bpf)(int cmd, union bpf_attr *attr, unsigned int size),
				const void *types, uint32_t types_len, const void *strs,
				uint32_t strs_len)
{
	union bpf_attr a;
	uint32_t size;
	void *b = btf_blob(types, types_len, strs, strs_len, &size);
	int fd, err;

	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)b;
	a.btf_size = size;
	fd = bpf(BPF_BTF_LOAD, &a, sizeof(a));
	err = errno;
	free(b);
	errno = err; /* the load's, whatever free() does */
	return fd;
}

/* BPF_MAP_CREATE through bpf of a map of type with 4-byte keys and value_size-byte values
 * described by the test's BTF btf (keys of its type ktype, values of type vtype; 0 for
 * none), or without BTF when btf < 0; name its name.  The fd, or -1 with errno set. */
static inline int btf_blob_map_kv(int (*bpf)(int cmd, union bpf_attr *attr, unsigned int size),
				  uint32_t type, uint32_t value_size, uint32_t max, uint32_t flags,
				  int btf, uint32_t ktype, uint32_t vtype, const char *name)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = value_size;
	a.max_entries = max;
	a.map_flags = flags;
	snprintf(a.map_name, sizeof(a.map_name), "%s", name);
	if (btf >= 0) {
		a.btf_fd = (uint32_t)btf;
		a.btf_key_type_id = ktype;
		a.btf_value_type_id = vtype;
	}
	return bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

/* btf_blob_map_kv() with keys of type 1, the blobs' int */
static inline int btf_blob_map(int (*bpf)(int cmd, union bpf_attr *attr, unsigned int size),
			       uint32_t type, uint32_t value_size, uint32_t max, uint32_t flags,
			       int btf, uint32_t vtype, const char *name)
{
	return btf_blob_map_kv(bpf, type, value_size, max, flags, btf, 1, vtype, name);
}

/* ---- a BTF written type by type -------------------------------------------------------
 * Types go into data after room for the header (len bytes so far), strings into strs
 * (str_len bytes; start it at 1 with strs[0] = 0 for the leading NUL); the test writes
 * the header and appends the strings before the load. */
struct btf_build {
	uint8_t data[4096];
	uint32_t len;      /* type bytes after the header */
	char strs[1024];
	uint32_t str_len;
};

static inline uint32_t btf_build_str(struct btf_build *b, const char *s)
{
	uint32_t off = b->str_len;

	memcpy(b->strs + off, s, strlen(s) + 1);
	b->str_len += (uint32_t)strlen(s) + 1;
	return off;
}

static inline void btf_build_put(struct btf_build *b, const void *p, size_t n)
{
	memcpy(b->data + sizeof(struct btf_header) + b->len, p, n);
	b->len += (uint32_t)n;
}

/* a btf_type of kind with vlen members (or the like) and a size or type id */
static inline void btf_build_type(struct btf_build *b, const char *name, uint32_t kind,
				  uint32_t vlen, uint32_t size_or_type)
{
	struct btf_type t = { .name_off = name ? btf_build_str(b, name) : 0,
			      .info = (kind << 24) | (vlen & 0xffff), .size = size_or_type };

	btf_build_put(b, &t, sizeof(t));
}

static inline void btf_build_member(struct btf_build *b, const char *name, uint32_t tid,
				    uint32_t bit_off)
{
	struct btf_member m = { btf_build_str(b, name), tid, bit_off };

	btf_build_put(b, &m, sizeof(m));
}

static inline void btf_build_int(struct btf_build *b, const char *name, uint32_t size,
				 int sign)
{
	uint32_t enc = ((sign ? BTF_INT_SIGNED : 0u) << 24) | (size * 8);

	btf_build_type(b, name, BTF_KIND_INT, 0, size);
	btf_build_put(b, &enc, 4);
}

/* a DECL_TAG of value on type tid (component comp, -1 for the type itself) */
static inline void btf_build_tag(struct btf_build *b, const char *value, uint32_t tid,
				 int32_t comp)
{
	btf_build_type(b, value, BTF_KIND_DECL_TAG, 0, tid);
	btf_build_put(b, &comp, 4);
}

/* The header written in front of the types and the strings appended: data then holds the
 * whole BTF; its size in bytes. */
static inline uint32_t btf_build_finish(struct btf_build *b)
{
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h), .type_off = 0, .type_len = b->len,
				.str_off = b->len, .str_len = b->str_len };

	memcpy(b->data, &h, sizeof(h));
	memcpy(b->data + sizeof(h) + b->len, b->strs, b->str_len);
	return (uint32_t)sizeof(h) + b->len + b->str_len;
}

#endif
