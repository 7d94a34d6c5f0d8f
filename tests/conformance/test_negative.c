/* test_negative.c - every file of the conformance suite's negative/ folder must fail as a
 * conformance test: the assembler rejects its asm (with the file's error text where it is
 * an assembler message), the structural check rejects its raw bytes, it has no program, or
 * - for the few valid programs with a wrong expectation - running it through
 * `bpfrt conformance-plugin` gives another result than the file claims.
 * Prints one line per file: name, how it fails, and the message.
 */
#include <dirent.h>
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conformance/datafile.h"
#include "harness.h"
#include "isa/isa.h"

enum verdict {
	V_ASM_REJECTED,	  /* the assembler refused the asm section */
	V_RAW_REJECTED,	  /* brt_isa_check_prog() refused the raw bytes */
	V_NO_PROGRAM,	  /* neither asm nor raw instructions */
	V_RUN_DIFFERS,	  /* valid program, but running it does not give the expectation */
	V_UNVERIFIED,	  /* valid program and no interpreter to run it: cannot tell */
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

static void hex_of(const uint8_t *p, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		out += sprintf(out, i ? " %02x" : "%02x", p[i]);
	*out = 0;
}

/* Run insns through `bpfrt conformance-plugin` (the official runner's plugin protocol).
 * Returns the plugin's exit status with its output in out, or -1 when the CLI has no such
 * command (the interpreter has not landed yet). */
static int run_plugin(const struct bpf_insn *insns, size_t n, const struct datafile *df,
		      char *out, size_t outlen)
{
	char prog_path[] = "/tmp/bpfrt-negative-XXXXXX", *cmd, *hex, *mem_hex;
	size_t got = 0;
	int fd, status;
	FILE *p;

	fd = mkstemp(prog_path);
	hex = malloc(n * 8 * 3 + 1);
	mem_hex = malloc(df->mem_len * 3 + 1);
	cmd = malloc(df->mem_len * 3 + 2 * sizeof(prog_path) + 256);
	if (fd < 0 || !hex || !mem_hex || !cmd) {
		snprintf(out, outlen, "cannot set up the plugin run");
		status = -2;
		goto out_free;
	}
	hex_of((const uint8_t *)insns, n * 8, hex);
	if (write(fd, hex, strlen(hex)) < 0 || write(fd, "\n", 1) < 0) {
		snprintf(out, outlen, "cannot write %s", prog_path);
		status = -2;
		goto out_free;
	}
	hex_of(df->mem ? df->mem : (const uint8_t *)"", df->mem_len, mem_hex);
	sprintf(cmd, "'%s/bpfrt' conformance-plugin %s%s%s < %s 2>&1", BPFRT_BINARY_DIR,
		df->mem_len ? "'" : "", mem_hex, df->mem_len ? "'" : "", prog_path);
	p = popen(cmd, "r");
	if (!p) {
		snprintf(out, outlen, "cannot run the CLI");
		status = -2;
		goto out_free;
	}
	got = fread(out, 1, outlen - 1, p);
	out[got] = 0;
	while (got && (out[got - 1] == '\n' || out[got - 1] == ' '))
		out[--got] = 0;
	status = pclose(p);
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	if (status == 2 && strstr(out, "unknown command"))
		status = -1;
out_free:
	if (fd >= 0) {
		close(fd);
		unlink(prog_path);
	}
	free(cmd);
	free(mem_hex);
	free(hex);
	return status;
}

/* A valid program: it fails as a conformance test when its run does not meet the file's
 * expectation (an error text, or a result). */
static enum verdict judge_run(const struct bpf_insn *insns, size_t n, const struct datafile *df,
			      char *why, size_t whylen)
{
	char out[512];
	int status = run_plugin(insns, n, df, out, sizeof(out));
	uint64_t r0;
	char *end;

	if (status == -1) {
		snprintf(why, whylen, "valid program; 'bpfrt conformance-plugin' does not exist "
				      "yet, so its result cannot be compared");
		return V_UNVERIFIED;
	}
	if (status == -2) {
		snprintf(why, whylen, "%s", out);
		return V_UNVERIFIED;
	}
	if (status != 0) {
		/* the runner compares the error text with the file's */
		if (df->has_error && df->error[0] && !strcmp(out, df->error)) {
			snprintf(why, whylen, "fails with the expected error '%.200s'", out);
			return V_PASSES;
		}
		snprintf(why, whylen, "run fails (status %d: '%.200s'), file expects %s", status,
			 out, df->has_error ? "an error" : "a result");
		return df->has_error && !df->error[0] ? V_PASSES : V_RUN_DIFFERS;
	}
	errno = 0;
	r0 = strtoull(out, &end, 16);
	if (errno || end == out) {
		snprintf(why, whylen, "plugin printed '%.200s', not a hex r0", out);
		return V_UNVERIFIED;
	}
	if (df->has_error) {
		snprintf(why, whylen, "runs and returns 0x%llx, file expects error '%.100s'",
			 (unsigned long long)r0, df->error);
		return V_RUN_DIFFERS;
	}
	if (df->has_result && r0 == df->result) {
		snprintf(why, whylen, "returns the expected 0x%llx", (unsigned long long)r0);
		return V_PASSES;
	}
	snprintf(why, whylen, "returns 0x%llx, file expects 0x%llx", (unsigned long long)r0,
		 (unsigned long long)df->result);
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
		T_SKIP("conformance suite not found (set BPFRT_CONFORMANCE_DIR)");
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
		else if (v != V_UNVERIFIED)
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
	if (counts[V_UNVERIFIED])
		printf("%u file(s) need an interpreter to show their failure; run again once "
		       "'bpfrt conformance-plugin' exists\n", counts[V_UNVERIFIED]);
	return t_done();
}
