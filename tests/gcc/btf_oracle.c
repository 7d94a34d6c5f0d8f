/* btf_oracle.c - the .BTF section of each object given, loaded with BPF_BTF_LOAD into the
 * kernel (bpf(2)) and into bpfrt (bpfrt_bpf()) at log level 1: both must accept it or both
 * refuse it with the same errno and the same whole log (the header, a line per type, the
 * refusal's), and again into a 64-byte log, rotating (level 1: the log's end) and fixed
 * (level 1|8: its beginning), with the same errno (ENOSPC: the log did not fit), text and
 * btf_log_true_size.  The objects are bpfrt's own programs compiled by GCC
 * (tests/gcc/gcc_corpus.sh), or clang's: GCC 12 writes BTF the kernel refuses (a char INT
 * with two encoding bits, "Unsupported encoding"), which a loader answers by loading the
 * programs without it, so the object-level comparison of corpus_diff never puts the BTF
 * itself to both sides.
 *
 * usage: btf_oracle [-v] OBJ.o...   (-v: each refusal, and both logs of a difference)
 * exit 0 all agree, 1 a difference, 77 (skipped) not root
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "bpfrt.h"

#define LOG_SIZE (1u << 20)

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (b = malloc((size_t)n)) && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	*len = b ? (size_t)ftell(f) : 0;
	fclose(f);
	return b;
}

/* the bytes of section name in the ELF64 image, or NULL */
static const unsigned char *section(const unsigned char *img, size_t len, const char *name,
				    size_t *size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)img;
	const Elf64_Shdr *sh, *strs;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > len || (len - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum ||
	    eh->e_shstrndx >= eh->e_shnum)
		return NULL;
	sh = (const Elf64_Shdr *)(const void *)(img + eh->e_shoff);
	strs = &sh[eh->e_shstrndx];
	for (unsigned i = 1; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= strs->sh_size || strs->sh_offset + strs->sh_size > len ||
		    sh[i].sh_type == SHT_NOBITS || sh[i].sh_offset > len ||
		    sh[i].sh_size > len - sh[i].sh_offset)
			continue;
		if (!strncmp((const char *)img + strs->sh_offset + sh[i].sh_name, name,
			     strs->sh_size - sh[i].sh_name)) {
			*size = sh[i].sh_size;
			return img + sh[i].sh_offset;
		}
	}
	return NULL;
}

/* load btf through fn with a log of size bytes at level: 0 accepted, else the errno; the
 * log into log, btf_log_true_size into *true_size */
static int load(int (*fn)(int, union bpf_attr *, unsigned int), const unsigned char *btf,
		size_t size, char *log, uint32_t log_size, uint32_t level, uint32_t *true_size)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)btf;
	a.btf_size = (uint32_t)size;
	a.btf_log_buf = (uint64_t)(uintptr_t)log;
	a.btf_log_size = log_size;
	a.btf_log_level = level;
	log[0] = 0;
	fd = fn(BPF_BTF_LOAD, &a, sizeof(a));
	/* btf_log_true_size follows btf_log_level in union bpf_attr (Linux 6.4) */
	memcpy(true_size, (const char *)&a.btf_log_level + sizeof(a.btf_log_level),
	       sizeof(*true_size));
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* the log's last line, for the report */
static const char *last_line(char *log)
{
	size_t n = strlen(log);
	char *p;

	while (n && log[n - 1] == '\n')
		log[--n] = 0;
	p = strrchr(log, '\n');
	return p ? p + 1 : log;
}

/* the first line where the two logs part, each side's */
static void first_diff(const char *k, const char *b)
{
	int line = 1;

	while (*k && *k == *b) {
		line += *k == '\n';
		k++;
		b++;
	}
	while (line > 1 && k[-1] != '\n') {
		k--;
		b--;
	}
	printf("  log line %d: kernel '%.*s' bpfrt '%.*s'\n", line, (int)strcspn(k, "\n"), k,
	       (int)strcspn(b, "\n"), b);
}

int main(int argc, char **argv)
{
	static char klog[LOG_SIZE], blog[LOG_SIZE];
	int failed = 0, agreed = 0, refused = 0, nobtf = 0, verbose = 0;
	const char *kline;

	if (geteuid()) {
		printf("skipped: needs root (BPF_BTF_LOAD into the kernel)\n");
		return 77;
	}
	if (argc > 1 && !strcmp(argv[1], "-v"))
		verbose = 1;
	for (int i = 1 + verbose; i < argc; i++) {
		size_t len, size;
		unsigned char *img = read_all(argv[i], &len);
		const unsigned char *btf;
		int kerr, berr, kerr2, berr2, same;
		uint32_t ktrue, btrue;

		if (!img) {
			printf("FAIL %s: cannot read\n", argv[i]);
			failed++;
			continue;
		}
		btf = section(img, len, ".BTF", &size);
		if (!btf) {
			nobtf++;
			free(img);
			continue;
		}
		kerr = load(kernel_bpf, btf, size, klog, LOG_SIZE, 1, &ktrue);
		berr = load(bpfrt_bpf, btf, size, blog, LOG_SIZE, 1, &btrue);
		same = kerr == berr && !strcmp(klog, blog) && ktrue == btrue;
		if (!same) {
			if (verbose)
				printf("--- kernel's log\n%s\n--- bpfrt's log\n%s\n---\n", klog, blog);
			printf("FAIL %s: BTF_LOAD kernel %s, log of %u bytes; bpfrt %s, log of %u "
			       "bytes\n", argv[i], kerr ? strerror(kerr) : "ok", ktrue,
			       berr ? strerror(berr) : "ok", btrue);
			first_diff(klog, blog);
		}
		kline = last_line(klog);
		/* a 64-byte log: its end (rotating), its beginning (BPF_LOG_FIXED) */
		for (uint32_t level = 1; same && level <= 9; level += 8) {
			kerr2 = load(kernel_bpf, btf, size, klog, 64, level, &ktrue);
			berr2 = load(bpfrt_bpf, btf, size, blog, 64, level, &btrue);
			if (kerr2 != berr2 || strcmp(klog, blog) || ktrue != btrue) {
				printf("FAIL %s: BTF_LOAD, a 64-byte log at level %u: kernel %s '%s' "
				       "(%u), bpfrt %s '%s' (%u)\n", argv[i], level,
				       kerr2 ? strerror(kerr2) : "ok", klog, ktrue,
				       berr2 ? strerror(berr2) : "ok", blog, btrue);
				same = 0;
			}
		}
		if (!same) {
			failed++;
		} else {
			agreed++;
			refused += kerr != 0;
			if (kerr && verbose)
				printf("both refuse %s: %s: %s\n", argv[i],
				       kerr == 524 ? "ENOTSUPP" : strerror(kerr), kline);
		}
		free(img);
	}
	printf("btf_oracle: %d objects' .BTF: %d agree (%d refused by both; same errno, whole "
	       "log, and in 64 bytes), %d differ; %d without .BTF\n", agreed + failed, agreed,
	       refused, failed, nobtf);
	return failed ? 1 : 0;
}
