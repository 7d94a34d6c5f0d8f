/* test_conformance.c - every .data file of the bpf_conformance suite's tests/ directory,
 * assembled with brt_asm() and run by every engine (fast and checked interpreters, and
 * the JIT where built): r0 must equal the file's result.  Helper 5 is the suite's
 * "unwind" helper.  The suite comes from BPFRT_CONFORMANCE_DIR or ../shared/conformance.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "datafile.h"
#include "harness.h"
#include "isa/isa.h"

static const struct {
	const char *name;
	enum bpfrt_engine engine;
} engines[] = {
	{ "interp", BPFRT_ENGINE_INTERP },
	{ "checked", BPFRT_ENGINE_CHECKED },
#ifdef BPFRT_HAVE_JIT
	{ "jit", BPFRT_ENGINE_JIT },
#endif
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *suite_dir(char *buf, size_t len)
{
	const char *env = getenv("BPFRT_CONFORMANCE_DIR");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else
		snprintf(buf, len, "%s/conformance", BPFRT_SHARED_DIR);
	return buf;
}

/* Run one file on one engine; returns 1 when it passed, 0 when it failed, -1 when the
 * engine is not available. */
static int run_one(const char *file, const struct datafile *df, const struct bpf_insn *insns,
		   size_t n, int e)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engines[e].engine);
	struct bpfrt_vm *vm;
	char err[512];
	uint64_t r0 = 0;
	uint8_t *mem = NULL;
	int ret;

	ret = bpfrt_vm_load(insns, n, &o, &vm, err, sizeof(err));
	if (ret == -EOPNOTSUPP)
		return -1; /* engine not built or not usable on this machine */
	if (ret) {
		T_FAIL("%s [%s]: load: %s", file, engines[e].name, err);
		return 0;
	}
	bpfrt_helper_register(vm, &datafile_unwind_helper);
	if (df->mem_len) {
		mem = malloc(df->mem_len);
		memcpy(mem, df->mem, df->mem_len);
	}
	ret = bpfrt_vm_run(vm, mem, df->mem_len, &r0, err, sizeof(err));
	free(mem);
	bpfrt_vm_free(vm);
	if (ret) {
		T_FAIL("%s [%s]: run: %s", file, engines[e].name, err);
		return 0;
	}
	if (r0 != df->result) {
		T_FAIL("%s [%s]: r0 expected 0x%" PRIx64 ", got 0x%" PRIx64, file,
		       engines[e].name, df->result, r0);
		return 0;
	}
	T_OK();
	return 1;
}

int main(void)
{
	char dir[1024], tests[1100], path[1400], err[512];
	size_t count = 0, cap = 512, files = 0;
	unsigned passed[(sizeof(engines) / sizeof(engines[0]))] = { 0 };
	int missing[(sizeof(engines) / sizeof(engines[0]))] = { 0 };
	char **names = malloc(cap * sizeof(*names));
	struct dirent *de;
	DIR *d;

	snprintf(tests, sizeof(tests), "%s/tests", suite_dir(dir, sizeof(dir)));
	d = opendir(tests);
	if (!d)
		T_SKIP("conformance suite not found (set BPFRT_CONFORMANCE_DIR)");
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 5, ".data"))
			continue;
		if (count == cap)
			names = realloc(names, (cap *= 2) * sizeof(*names));
		names[count++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, count, sizeof(*names), cmp_names);

	for (size_t i = 0; i < count; i++) {
		struct bpf_insn *insns = NULL;
		struct datafile df;
		size_t n = 0;

		T_CASE(names[i]);
		snprintf(path, sizeof(path), "%s/%s", tests, names[i]);
		if (datafile_load(path, &df, err, sizeof(err))) {
			T_FAIL("%s: %s", names[i], err);
			continue;
		}
		if (!df.has_result) {
			datafile_free(&df);
			continue; /* error files belong to the negative test */
		}
		files++;
		if (df.asm_text) {
			if (brt_asm(df.asm_text, names[i], &insns, &n, err, sizeof(err))) {
				T_FAIL("%s: asm: %s", names[i], err);
				datafile_free(&df);
				continue;
			}
		} else {
			n = df.raw_len / sizeof(*insns);
			insns = malloc(df.raw_len + 1);
			memcpy(insns, df.raw, df.raw_len);
		}
		for (size_t e = 0; e < (sizeof(engines) / sizeof(engines[0])); e++) {
			int ok = run_one(names[i], &df, insns, n, (int)e);

			if (ok < 0)
				missing[e] = 1;
			else
				passed[e] += (unsigned)ok;
		}
		free(insns);
		datafile_free(&df);
	}
	for (size_t e = 0; e < (sizeof(engines) / sizeof(engines[0])); e++)
		if (missing[e])
			printf("%-8s not available in this build\n", engines[e].name);
		else
			printf("%-8s %u/%zu files pass\n", engines[e].name, passed[e], files);
	/* an empty folder (or one of error files only) tested nothing: that is a failure,
	 * not a pass; the full suite has 313 files with a result, another one any number */
	T_CASE("file count");
	if (!files)
		T_FAIL("no .data file with a result in %s", tests);
	T_ASSERT(files >= 313 || getenv("BPFRT_CONFORMANCE_DIR"));
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return t_done();
}
