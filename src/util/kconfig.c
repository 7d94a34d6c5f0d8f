/* kconfig.c - the running kernel's build configuration (a .kconfig section's CONFIG_*
 * externs, as libbpf finds them: elf/kconfig.c; bpf_jiffies64's HZ: jiffies.c):
 * /boot/config-$(uname -r), else /proc/config.gz (gzip, read through zlib opened on first use: util/dl.h; zlib reads a
 * plain file as is).  BPFRT_KCONFIG names another file (an empty value: none).  Read once
 * per process.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "util/dl.h"
#include "util/util.h"

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

int brt_kconfig_get(const char *name, const char **value)
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
