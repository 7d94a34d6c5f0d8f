/* cmd_run.c - `bpfrt run`: load a program from a file (raw little-endian instructions,
 * hex text, assembly, or a conformance .data file) and run it on one engine, printing r0
 * and, with --repeat, the time per run.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpfrt.h"
#include "isa/isa.h"
#include "cli.h"
#include "json.h"
#include "datafile.h"
#include "vm/vm.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt run FILE [--mem HEX | --mem-file F] [--engine E] [--repeat N] [-j]\n"
		"\n"
		"Run an eBPF program once with r1 = the input memory and r2 = its length, and print\n"
		"r0.  FILE is assembly (.s, .asm), a conformance-suite .data file (its program and\n"
		"its memory; helper 5 is the suite's unwind helper), hex text, or raw little-endian\n"
		"8-byte instructions; '-' reads standard input.  The program is not verified, but\n"
		"like every runtime bpfrt refuses one that does not decode, jumps outside itself or\n"
		"reads a register no path wrote (r1, r2 and r10 are set).\n"
		"\n"
		"Options:\n"
		"  --mem HEX        input memory as hex bytes (\"01 02 ff\")\n"
		"  --mem-file F     input memory read from file F\n"
		"  --engine E       interp (fast, verified programs only), checked (default: any\n"
		"                   program, memory accesses checked), jit\n"
		"  --budget N       run budget, every engine: counted instructions (loops and\n"
		"                   callbacks; default: none); a spent budget is an error\n"
		"  --budget-ns N    run budget in nanoseconds (default: none)\n"
		"  --repeat N       run N times and print the mean time per run\n"
		"  -j, --json       print one JSON object\n"
		"  -h, --help       this help\n"
		"\n"
		"Exit status: 0 when the program ran, 1 when it could not be loaded or faulted.\n");
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* Hex text: only hex digits, 0x prefixes, commas, whitespace. */
static int looks_like_hex(const char *data, size_t len)
{
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = data[i];

		if (!isxdigit((unsigned char)c) && !isspace((unsigned char)c) && c != ',' &&
		    c != 'x' && c != 'X')
			return 0;
	}
	return 1;
}

int cli_load_program(const char *path, struct bpf_insn **insns, size_t *n, uint8_t **mem,
		     size_t *mem_len, int *is_data)
{
	char err[512];
	char *data;
	size_t len;
	int ret;

	*is_data = 0;
	if (ends_with(path, ".data")) {
		struct datafile df;

		if (datafile_load(path, &df, err, sizeof(err)))
			return cli_error("%s: %s", path, err);
		*is_data = 1;
		*mem = df.mem;
		*mem_len = df.mem_len;
		df.mem = NULL;
		if (df.asm_text) {
			ret = bpfrt_asm(df.asm_text, path, insns, n, err, sizeof(err));
		} else if (df.raw && df.raw_len % 8 == 0) {
			*insns = (struct bpf_insn *)(void *)df.raw;
			*n = df.raw_len / 8;
			df.raw = NULL;
			ret = 0;
		} else {
			snprintf(err, sizeof(err), "%s: no program (asm or raw section)", path);
			ret = -EINVAL;
		}
		datafile_free(&df);
		return ret ? cli_error("%s", err) : 0;
	}
	ret = cli_read_file(path, &data, &len);
	if (ret)
		return cli_error("%s: %s", path, strerror(-ret));
	if (ends_with(path, ".s") || ends_with(path, ".asm")) {
		ret = bpfrt_asm(data, path, insns, n, err, sizeof(err));
		free(data);
		return ret ? cli_error("%s", err) : 0;
	}
	if (len >= 4 && !memcmp(data, "\x7f" "ELF", 4)) {
		free(data);
		return cli_error("%s: an ELF object; give the raw instructions of one section "
				 "(llvm-objcopy -O binary --only-section=SEC)", path);
	}
	if (looks_like_hex(data, len)) {
		uint8_t *bytes;

		if (cli_parse_hex(data, &bytes, &len, err, sizeof(err))) {
			free(data);
			return cli_error("%s: %s", path, err);
		}
		free(data);
		data = (char *)bytes;
	}
	if (len == 0 || len % 8) {
		free(data);
		return cli_error("%s: %zu bytes is not a whole number of 8-byte instructions", path,
				 len);
	}
	*insns = (struct bpf_insn *)(void *)data;
	*n = len / 8;
	return 0;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct run_args {
	const char *file;
	const char *mem_hex;
	const char *mem_file;
	enum bpfrt_engine engine;
	uint64_t budget;
	uint64_t budget_ns;
	unsigned long repeat;
	int json;
};

/* A count from 1 to 2^64 - 1, digits only (strtoull() takes "-1" as 2^64 - 1 and
 * saturates past it). */
static int parse_count(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !v)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A run count as BPF_PROG_TEST_RUN's repeat: 1 to UINT32_MAX.  strtoul() alone takes
 * "-1" as ULONG_MAX and saturates past 2^64, and either runs for centuries. */
static int parse_repeat(const char *s, unsigned long *out)
{
	uint64_t v;

	if (parse_count(s, &v) || v > UINT32_MAX)
		return -EINVAL;
	*out = (unsigned long)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
	static const struct option opts[] = {
		{ "mem", required_argument, NULL, 'm' },
		{ "mem-file", required_argument, NULL, 'f' },
		{ "engine", required_argument, NULL, 'e' },
		{ "budget", required_argument, NULL, 'b' },
		{ "budget-ns", required_argument, NULL, 'n' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->engine = BPFRT_ENGINE_CHECKED;
	a->repeat = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			a->mem_hex = optarg;
			break;
		case 'f':
			a->mem_file = optarg;
			break;
		case 'e':
			if (brt_vm_engine_parse(optarg, 1, &a->engine))
				return cli_error("run: unknown engine '%s' (%s)", optarg,
						 brt_vm_engine_list());
			break;
		case 'b':
		case 'n':
			if (parse_count(optarg, c == 'b' ? &a->budget : &a->budget_ns))
				return cli_error("run: --%s: '%s' is not a count from 1 to 2^64-1",
						 c == 'b' ? "budget" : "budget-ns", optarg);
			break;
		case 'r':
			if (parse_repeat(optarg, &a->repeat))
				return cli_error("run: --repeat: '%s' is not a count from 1 to %u",
						 optarg, UINT32_MAX);
			break;
		case 'j':
			a->json = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (a->mem_hex && a->mem_file)
		return cli_error("run: give --mem or --mem-file, not both");
	a->file = argv[optind];
	return 0;
}

static int load_mem(const struct run_args *a, uint8_t **mem, size_t *len)
{
	char err[256];

	if (a->mem_hex) {
		free(*mem);
		if (cli_parse_hex(a->mem_hex, mem, len, err, sizeof(err)))
			return cli_error("run: --mem: %s", err);
	} else if (a->mem_file) {
		char *data;
		int ret = cli_read_file(a->mem_file, &data, len);

		if (ret)
			return cli_error("%s: %s", a->mem_file, strerror(-ret));
		free(*mem);
		*mem = (uint8_t *)data;
	}
	return 0;
}

static void report(const struct run_args *a, int ret, uint64_t r0, const char *err,
		   double ns_per_run)
{
	if (a->json) {
		printf("{\"engine\": \"%s\", ", brt_vm_engine_name(a->engine));
		if (ret) {
			printf("\"errno\": %d, \"error\": ", -ret);
			json_put_string(stdout, err);
		} else {
			printf("\"r0\": %" PRIu64 ", \"r0_hex\": \"0x%" PRIx64 "\"", r0, r0);
			if (a->repeat > 1)
				printf(", \"runs\": %lu, \"ns_per_run\": %.2f", a->repeat, ns_per_run);
		}
		printf("}\n");
		return;
	}
	if (ret) {
		cli_error("run: %s", err);
		return;
	}
	printf("r0 = 0x%" PRIx64 " (%" PRIu64 ")\n", r0, r0);
	if (a->repeat > 1)
		printf("%.2f ns per run (%lu runs, %s)\n", ns_per_run, a->repeat, brt_vm_engine_name(a->engine));
}

int cmd_run(int argc, char **argv)
{
	struct run_args a;
	struct bpf_insn *insns = NULL;
	struct bpfrt_vm *vm = NULL;
	uint8_t *mem = NULL, *scratch = NULL;
	size_t n = 0, mem_len = 0;
	uint64_t r0 = 0;
	double ns = 0;
	char err[512] = "";
	int ret, is_data;

	ret = parse_args(argc, argv, &a);
	if (ret)
		return ret;
	if (cli_load_program(a.file, &insns, &n, &mem, &mem_len, &is_data) ||
	    load_mem(&a, &mem, &mem_len)) {
		ret = 1;
		goto out;
	}
	{
		BPFRT_OPTS(bpfrt_vm_opts, o, .engine = a.engine, .run_budget = a.budget,
			   .run_budget_ns = a.budget_ns);

		/* bpfrt_vm_load() checks structure only; like every runtime, refuse a
		 * program that reads a register before writing it (the run sets r1, r2) */
		ret = brt_isa_check_init_regs(insns, n, 1u << 1 | 1u << 2, err, sizeof(err));
		if (!ret)
			ret = bpfrt_vm_load(insns, n, &o, &vm, err, sizeof(err));
	}
	if (!ret && is_data)
		ret = bpfrt_helper_register(vm, &datafile_unwind_helper);
	if (!ret && mem_len)
		ret = (scratch = malloc(mem_len)) ? 0 : -ENOMEM;
	if (!ret) {
		/* the reported r0 comes from a run on the memory as given */
		if (mem_len)
			memcpy(scratch, mem, mem_len);
		ret = bpfrt_vm_run(vm, scratch, mem_len, &r0, err, sizeof(err));
	}
	if (!ret && a.repeat > 1) {
		uint64_t r;
		double t0 = now_ns();

		for (unsigned long i = 0; i < a.repeat && !ret; i++)
			ret = bpfrt_vm_run(vm, scratch, mem_len, &r, err, sizeof(err));
		ns = (now_ns() - t0) / (double)a.repeat;
	}
	if (ret && !err[0])
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	report(&a, ret, r0, err, ns);
	ret = ret ? 1 : 0;
out:
	bpfrt_vm_free(vm);
	free(scratch);
	free(mem);
	free(insns);
	return ret;
}
