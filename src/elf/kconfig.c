/* kconfig.c - the running kernel's build configuration, where libbpf finds the values of
 * the CONFIG_* externs of a .kconfig section: /boot/config-$(uname -r), else
 * /proc/config.gz (gzip, read through zlib opened on first use: util/dl.h; zlib reads a
 * plain file as is).  BPFRT_KCONFIG names another file (an empty value: none).  Read once
 * per process.  Values are stored into an extern with libbpf's rules for its type
 * (brt_elf_kconfig_store()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "elf/parse.h"
#include "util/dl.h"

/* zlib's gz* calls, declared here: only their addresses are needed (util/dl.h) */
struct brt_gz_calls {
	void *(*gzopen)(const char *path, const char *mode);
	char *(*gzgets)(void *file, char *buf, int len);
	int (*gzclose)(void *file);
};
static struct brt_gz_calls gz;
static const char *const gz_names[] = { "gzopen", "gzgets", "gzclose", NULL };
static const char *const gz_sonames[] = { "libz.so.1", "libz.so", NULL };
static struct brt_dl_lib gz_lib = { gz_sonames, gz_names, &gz, 0, "" };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char **lines; /* "CONFIG_X=value", without the newline */
static size_t nlines;
static uint32_t *by_name; /* lines by (name, file order), NULL: search them in order */
static int have_config;

/* line's name (up to its '=') against name: <0, 0, >0 */
static int name_cmp(const char *line, const char *name)
{
	while (*line != '=' && *name && *line == *name)
		line++, name++;
	return (*line == '=' ? 0 : (unsigned char)*line) - (unsigned char)*name;
}

static int cmp_lines(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const char *p = lines[x], *q = lines[y];

	while (*p != '=' && *q != '=' && *p == *q)
		p++, q++;
	if (*p == '=' || *q == '=' || *p != *q) {
		int c = (*p == '=' ? 0 : (unsigned char)*p) - (*q == '=' ? 0 : (unsigned char)*q);

		if (c)
			return c;
	}
	return x < y ? -1 : x > y;
}

static void keep(const char *line)
{
	size_t len = strcspn(line, "\n");
	char **n;

	if (strncmp(line, "CONFIG_", 7) || !memchr(line, '=', len))
		return;
	n = realloc(lines, (nlines + 1) * sizeof(*lines));
	if (!n)
		return;
	lines = n;
	lines[nlines] = strndup(line, len);
	if (lines[nlines])
		nlines++;
}

/* 1 when the file was read */
static int read_file(const char *path)
{
	char buf[4096], err[200];

	if (!brt_dl_load(&gz_lib, err, sizeof(err))) {
		void *f = gz.gzopen(path, "re");

		if (!f)
			return 0;
		while (gz.gzgets(f, buf, sizeof(buf)))
			keep(buf);
		gz.gzclose(f);
		return 1;
	}
	/* without zlib only a plain file can be read */
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	if (fread(buf, 1, 2, f) == 2 && (unsigned char)buf[0] == 0x1f &&
	    (unsigned char)buf[1] == 0x8b) {
		fclose(f);
		return 0;
	}
	rewind(f);
	while (fgets(buf, sizeof(buf), f))
		keep(buf);
	fclose(f);
	return 1;
}

static void load(void)
{
	const char *path = getenv("BPFRT_KCONFIG");
	char boot[400];
	struct utsname u;

	if (path) {
		have_config = path[0] && read_file(path);
		return;
	}
	if (!uname(&u)) {
		snprintf(boot, sizeof(boot), "/boot/config-%s", u.release);
		have_config = read_file(boot);
	}
	if (!have_config)
		have_config = read_file("/proc/config.gz");
	/* searched by name (a scan of the ~10k lines per extern was most of the open of an
	 * object with a few) */
	by_name = nlines < UINT32_MAX ? malloc((nlines + 1) * sizeof(*by_name)) : NULL;
	if (by_name) {
		for (size_t i = 0; i < nlines; i++)
			by_name[i] = (uint32_t)i;
		qsort(by_name, nlines, sizeof(*by_name), cmp_lines);
	}
}

int brt_elf_kconfig_get(const char *name, const char **value)
{
	size_t len = strlen(name);

	pthread_once(&once, load);
	*value = NULL;
	if (!have_config)
		return -ENOENT;
	/* the first line naming it wins, as libbpf keeps the first value it set */
	if (by_name) {
		size_t lo = 0, hi = nlines;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (name_cmp(lines[by_name[mid]], name) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nlines && !name_cmp(lines[by_name[lo]], name))
			*value = lines[by_name[lo]] + len + 1;
		return 0;
	}
	for (size_t i = 0; i < nlines; i++)
		if (!strncmp(lines[i], name, len) && lines[i][len] == '=') {
			*value = lines[i] + len + 1;
			return 0;
		}
	return 0;
}

/* the value of a u64 in an integer of sz bytes, signed or not, without loss
 * (libbpf's is_kcfg_value_in_range()) */
static int in_range(uint64_t v, uint32_t sz, int is_signed)
{
	unsigned bits = sz * 8;

	if (sz >= 8)
		return 1;
	if (is_signed)
		return v + (UINT64_C(1) << (bits - 1)) < (UINT64_C(1) << bits);
	return !(v >> bits);
}

int brt_elf_kconfig_store(enum brt_kcfg_type type, int is_signed, const char *value, void *dst,
			  uint32_t sz, char *why, size_t whylen)
{
	uint8_t *out = dst;
	size_t len = strlen(value);
	uint64_t num;
	char *end;

	if (!len) {
		snprintf(why, whylen, "no value");
		return -EINVAL;
	}
	switch (value[0]) {
	case 'y':
	case 'n':
	case 'm':
		switch (type) {
		case BRT_KCFG_BOOL:
			if (value[0] == 'm')
				break;
			out[0] = value[0] == 'y';
			return 0;
		case BRT_KCFG_TRISTATE: { /* libbpf's enum libbpf_tristate: no 0, yes 1, module 2 */
			uint32_t tri = value[0] == 'y' ? 1 : value[0] == 'm' ? 2 : 0;

			memcpy(out, &tri, 4);
			return 0;
		}
		case BRT_KCFG_CHAR:
			out[0] = (uint8_t)value[0];
			return 0;
		default:
			break;
		}
		snprintf(why, whylen, "value '%c' implies %s type", value[0],
			 type == BRT_KCFG_BOOL ? "tristate or char" : "bool, tristate, or char");
		return -EINVAL;
	case '"':
		if (type != BRT_KCFG_CHAR_ARR) {
			snprintf(why, whylen, "value '%s' implies char array type", value);
			return -EINVAL;
		}
		if (len < 2 || value[len - 1] != '"') {
			snprintf(why, whylen, "invalid string config '%s'", value);
			return -EINVAL;
		}
		len -= 2;
		if (len >= sz) /* libbpf truncates, with a warning */
			len = sz - 1;
		memcpy(out, value + 1, len);
		out[len] = 0;
		return 0;
	default:
		errno = 0;
		num = strtoull(value, &end, 0);
		if (errno || *end) {
			snprintf(why, whylen, "value '%s' isn't a valid integer", value);
			return -EINVAL;
		}
		if (type != BRT_KCFG_INT && type != BRT_KCFG_CHAR) {
			snprintf(why, whylen, "value '%s' implies integer type", value);
			return -EINVAL;
		}
		if (type != BRT_KCFG_CHAR && !in_range(num, sz, is_signed)) {
			snprintf(why, whylen, "value '%llu' doesn't fit in %u bytes",
				 (unsigned long long)num, sz);
			return -ERANGE;
		}
		memcpy(out, &num, sz < 8 ? sz : 8); /* little-endian: the low bytes */
		return 0;
	}
}
