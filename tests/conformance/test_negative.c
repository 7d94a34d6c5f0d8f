/* test_negative.c - every file of the conformance suite's negative/ folder must fail as a
 * conformance test: the assembler rejects its asm (with the file's error text where it is
 * an assembler message), the structural check rejects its raw bytes, it has no program, or
 * - for the few valid programs with a wrong expectation - running it with the checked
 * interpreter gives another result than the file claims.
 * Prints one line per file: name, how it fails, and the message.
 */
#include <dirent.h>
#include <errno.h>

#include "bpfrt.h"
#include "datafile.h"
#include "harness.h"
#include "isa/isa.h"

enum verdict {
	V_ASM_REJECTED,	  /* the assembler refused the asm section */
	V_RAW_REJECTED,	  /* brt_isa_check_prog() refused the raw bytes */
	V_NO_PROGRAM,	  /* neither asm nor raw instructions */
	V_RUN_DIFFERS,	  /* valid program, but running it does not give the expectation */
	V_UNVERIFIED,	  /* could not be judged (out of memory) */
	V_PASSES,	  /* the file would pass: this runtime is wrong */
};

static const char *const verdict_names[] = {
	[V_ASM_REJECTED] = "asm rejected",   [V_RAW_REJECTED] = "raw rejected",
	[V_NO_PROGRAM] = "no program",	     [V_RUN_DIFFERS] = "result differs",
	[V_UNVERIFIED] = "UNVERIFIED",	     [V_PASSES] = "PASSES (bug)",
};

static const char *conformance_dir(char *buf, size_t len)
{
	const char *env = getenv("BPFRT_CONFORMANCE_DIR");

	if (env && *env)
		return env;
	snprintf(buf, len, "%s/conformance", BPFRT_SHARED_DIR);
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .data files of dir, sorted. */
static size_t list_files(const char *dir, char ***names)
{
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	*names = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 5, ".data"))
			continue;
		if (n == cap) {
			char **nn = realloc(*names, (cap = cap ? cap * 2 : 64) * sizeof(char *));

			if (!nn)
				break;
			*names = nn;
		}
		(*names)[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(*names, n, sizeof(char *), cmp_str);
	return n;
}

/* Run insns with the checked interpreter on a copy of the file's memory.  Returns 0 with
 * *r0 set, or the load/run error with its message in msg. */
static int run(const struct bpf_insn *insns, size_t n, const struct datafile *df,
	       uint64_t *r0, char *msg, size_t msglen)
{
	BPFRT_OPTS(bpfrt_vm_opts, opts, .engine = BPFRT_ENGINE_CHECKED);
	struct bpfrt_vm *vm;
	uint8_t *mem = NULL;
	int ret;

	ret = bpfrt_vm_load(insns, n, &opts, &vm, msg, msglen);
	if (ret)
		return ret;
	if (df->mem_len) {
		mem = malloc(df->mem_len);
		if (!mem) {
			bpfrt_vm_free(vm);
			snprintf(msg, msglen, "out of memory");
			return -ENOMEM;
		}
		memcpy(mem, df->mem, df->mem_len);
	}
	ret = bpfrt_helper_register(vm, &datafile_unwind_helper);
	if (!ret)
		ret = bpfrt_vm_run(vm, mem, df->mem_len, r0, msg, msglen);
	free(mem);
	bpfrt_vm_free(vm);
	return ret;
}

/* A valid program: it fails as a conformance test when its run does not meet the file's
 * expectation (an error text, or a result). */
static enum verdict judge_run(const struct bpf_insn *insns, size_t n, const struct datafile *df,
			      char *why, size_t whylen)
{
	char msg[512] = "";
	uint64_t r0 = 0;
	int ret = run(insns, n, df, &r0, msg, sizeof(msg));

	if (ret) {
		/* the runner compares the error text with the file's */
		if (df->has_error && (!df->error[0] || !strcmp(msg, df->error))) {
			snprintf(why, whylen, "fails with the expected error '%.200s'", msg);
			return V_PASSES;
		}
		snprintf(why, whylen, "checked interpreter fails (%.200s), file expects %s", msg,
			 df->has_error ? "another error" : "a result");
		return V_RUN_DIFFERS;
	}
	if (df->has_error) {
		snprintf(why, whylen, "checked interpreter returns 0x%llx, file expects error "
			 "'%.100s'", (unsigned long long)r0, df->error);
		return V_RUN_DIFFERS;
	}
	if (!df->has_result || r0 == df->result) {
		snprintf(why, whylen, "returns the expected 0x%llx", (unsigned long long)r0);
		return V_PASSES;
	}
	snprintf(why, whylen, "checked interpreter returns 0x%llx, file expects 0x%llx",
		 (unsigned long long)r0, (unsigned long long)df->result);
	return V_RUN_DIFFERS;
}

/* An assembler error text in the file ("Invalid register") must appear in our message. */
static int error_text_applies(const struct datafile *df)
{
	return df->has_error && !strncmp(df->error, "Invalid ", 8);
}

static enum verdict judge(const char *name, const struct datafile *df, char *why,
			  size_t whylen)
{
	struct bpf_insn *insns = NULL;
	size_t n = 0;
	char err[512];
	enum verdict v;

	if (df->asm_text) {
		int ret = brt_asm(df->asm_text, name, &insns, &n, err, sizeof(err));

		if (ret) {
			snprintf(why, whylen, "%s", err);
			if (error_text_applies(df) && n == 0 && !strstr(err, "empty program")) {
				T_CASE(name);
				T_CONTAINS(df->error, err);
			}
			return V_ASM_REJECTED;
		}
	} else if (df->raw_len) {
		if (df->raw_len % 8) {
			snprintf(why, whylen, "raw section is %zu bytes, not whole instructions",
				 df->raw_len);
			return V_RAW_REJECTED;
		}
		n = df->raw_len / 8;
		insns = malloc(df->raw_len);
		if (!insns) {
			snprintf(why, whylen, "out of memory");
			return V_UNVERIFIED;
		}
		memcpy(insns, df->raw, df->raw_len);
	} else {
		snprintf(why, whylen, "no -- asm or -- raw section: nothing to load");
		return V_NO_PROGRAM;
	}
	if (brt_isa_check_prog(insns, n, BRT_ISA_MAX_INSNS, err, sizeof(err))) {
		snprintf(why, whylen, "%s", err);
		free(insns);
		return df->asm_text ? V_ASM_REJECTED : V_RAW_REJECTED;
	}
	v = judge_run(insns, n, df, why, whylen);
	free(insns);
	return v;
}

int main(void)
{
	char dirbuf[4096], dir[4200], path[8400], why[1024], err[512];
	const char *base = conformance_dir(dirbuf, sizeof(dirbuf));
	unsigned counts[V_PASSES + 1] = { 0 };
	char **names;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/negative", base);
	n = list_files(dir, &names);
	if (!n)
		T_SKIP("no .data files in %s (set BPFRT_CONFORMANCE_DIR to the bpf_conformance "
		       "suite)", dir);
	for (size_t i = 0; i < n; i++) {
		struct datafile df;
		enum verdict v;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		T_CASE(names[i]);
		if (datafile_load(path, &df, err, sizeof(err))) {
			T_FAIL("cannot read: %s", err);
			continue;
		}
		v = judge(names[i], &df, why, sizeof(why));
		counts[v]++;
		printf("%-42s %-15s %s\n", names[i], verdict_names[v], why);
		T_CASE(names[i]);
		if (v == V_PASSES)
			T_FAIL("the file passes as a conformance test: %s", why);
		else if (v == V_UNVERIFIED)
			T_FAIL("could not be judged: %s", why);
		else
			T_OK();
		datafile_free(&df);
		free(names[i]);
	}
	free(names);
	printf("\n%zu files:", n);
	for (unsigned v = 0; v <= V_PASSES; v++)
		printf(" %u %s%s", counts[v], verdict_names[v], v < V_PASSES ? "," : "\n");
	T_CASE("file count");
	T_EQ_INT(n, counts[V_ASM_REJECTED] + counts[V_RAW_REJECTED] + counts[V_NO_PROGRAM] +
			    counts[V_RUN_DIFFERS] + counts[V_UNVERIFIED]);
	T_EQ_INT(0, counts[V_UNVERIFIED]);
	return t_done();
}
