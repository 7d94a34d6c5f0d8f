/* btf_blob.h - a small BTF a test writes by hand (type words and a string section) laid
 * out as BPF_BTF_LOAD takes it, header first, and loaded on either side: the kernel's
 * bpf() or bpfrt_bpf(), whichever function the test passes.
 */
#ifndef BPFRT_TESTS_BTF_BLOB_H
#define BPFRT_TESTS_BTF_BLOB_H

#include <errno.h>
#include <stdint.h>
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

#endif
