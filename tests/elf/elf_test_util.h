/* elf_test_util.h - shared by the tests of src/elf and src/object: reading the compiled corpus
 * (${BUILD}/progs/NAME.bpf.o, built by tests/elf/tests.cmake) and finding sections in a raw
 * ELF image so tests can corrupt precise fields. */
#ifndef BPFRT_TESTS_ELF_UTIL_H
#define BPFRT_TESTS_ELF_UTIL_H

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read build/progs/<name>.bpf.o; NULL when missing (clang not found at configure time). */
static inline unsigned char *corpus_read(const char *name, size_t *len)
{
	char path[512];
	unsigned char *buf;
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/progs/%s.bpf.o", BPFRT_BINARY_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static inline const char *corpus_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/progs/%s.bpf.o", BPFRT_BINARY_DIR, name);
	return path;
}

static inline Elf64_Ehdr *raw_ehdr(unsigned char *img)
{
	return (Elf64_Ehdr *)(void *)img;
}

static inline Elf64_Shdr *raw_shdr(unsigned char *img, size_t idx)
{
	Elf64_Ehdr *eh = raw_ehdr(img);

	return (Elf64_Shdr *)(void *)(img + eh->e_shoff + idx * sizeof(Elf64_Shdr));
}

/* Index of the section called name, or 0. */
static inline size_t raw_find_sec(unsigned char *img, const char *name)
{
	Elf64_Ehdr *eh = raw_ehdr(img);
	const char *strs = (const char *)img + raw_shdr(img, eh->e_shstrndx)->sh_offset;

	for (size_t i = 1; i < eh->e_shnum; i++)
		if (!strcmp(strs + raw_shdr(img, i)->sh_name, name))
			return i;
	return 0;
}

/* Index of the first section of that type, or 0. */
static inline size_t raw_find_type(unsigned char *img, unsigned type)
{
	Elf64_Ehdr *eh = raw_ehdr(img);

	for (size_t i = 1; i < eh->e_shnum; i++)
		if (raw_shdr(img, i)->sh_type == type)
			return i;
	return 0;
}

#endif
