/* cmd_conformance_plugin.c - `bpfrt conformance-plugin`: the plugin protocol of the
 * upstream bpf_conformance runner (../shared/conformance/README.md).  The program comes
 * as hex bytes on stdin (or --program HEX), the memory as hex in the first argument; r0 is
 * printed in hex; a load or run failure exits 1 with the error text alone on stderr.
 * Helper 5 is the suite's "unwind" helper.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "isa/isa.h"
#include "cli.h"
#include "datafile.h"
#include "vm/vm.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt conformance-plugin [--program HEX] [--engine E] [MEMORY_HEX]\n"
		"\n"
		"Plugin for the bpf_conformance runner (bpf_conformance_runner --plugin_path ...).\n"
		"Reads the program as hex bytes from standard input unless --program is given,\n"
		"runs it with r1 = MEMORY_HEX's bytes and r2 = their length, and prints r0 in hex.\n"
		"On failure prints the error text to standard error and exits 1.  Helper 5 returns\n"
		"its argument and stops the program with r0 = 0 when that is 0.\n"
		"\n"
		"Options:\n"
		"  --program HEX    the program instead of standard input\n"
		"  --engine E       checked (default), interp, jit; --jit and --interpret also work\n"
		"  -j, --json       print {\"r0\":\"0x...\"}\n"
		"  -h, --help       this help\n");
}

/* Print the error text alone (the runner compares it with the test's) and fail. */
static int fail(const char *msg)
{
	fprintf(stderr, "%s\n", msg);
	return 1;
}

static int json_out; /* -j: {"r0":"0x.."} instead of the bare hex */

static int run(const uint8_t *prog, size_t prog_len, uint8_t *mem, size_t mem_len,
	       enum bpfrt_engine engine)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engine);
	struct bpfrt_vm *vm;
	struct bpf_insn *insns;
	char err[512];
	uint64_t r0;
	int ret;

	if (prog_len % 8) {
		snprintf(err, sizeof(err), "program of %zu bytes is not a whole number of "
					   "8-byte instructions", prog_len);
		return fail(err);
	}
	insns = malloc(prog_len ? prog_len : 1);
	if (!insns)
		return fail("out of memory");
	memcpy(insns, prog, prog_len);
	/* the load-time checks every runtime makes (bpfrt_vm_load() checks structure
	 * only): no register read before it is written; the run sets r1 and r2 */
	ret = brt_isa_check_init_regs(insns, prog_len / 8, 1u << 1 | 1u << 2, err, sizeof(err));
	if (!ret)
		ret = bpfrt_vm_load(insns, prog_len / 8, &o, &vm, err, sizeof(err));
	free(insns);
	if (ret)
		return fail(err);
	if (bpfrt_helper_register(vm, &datafile_unwind_helper)) {
		bpfrt_vm_free(vm);
		return fail("out of memory");
	}
	ret = bpfrt_vm_run(vm, mem_len ? mem : NULL, mem_len, &r0, err, sizeof(err));
	bpfrt_vm_free(vm);
	if (ret)
		return fail(err);
	if (json_out)
		printf("{\"r0\":\"0x%" PRIx64 "\"}\n", r0);
	else
		printf("%" PRIx64 "\n", r0);
	return 0;
}

int cmd_conformance_plugin(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "program", required_argument, NULL, 'p' },
		{ "engine", required_argument, NULL, 'e' },
		{ "jit", no_argument, NULL, 'J' },
		{ "interpret", no_argument, NULL, 'I' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum bpfrt_engine engine = BPFRT_ENGINE_CHECKED;
	const char *prog_hex = NULL;
	uint8_t *prog = NULL, *mem = NULL;
	size_t prog_len = 0, mem_len = 0;
	char *text = NULL, err[256];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			prog_hex = optarg;
			break;
		case 'j':
			json_out = 1;
			break;
		case 'e':
			if (brt_vm_engine_parse(optarg, 1, &engine))
				return fail("unknown engine (interp, checked, jit)");
			break;
		case 'J':
			engine = BPFRT_ENGINE_JIT;
			break;
		case 'I':
			engine = BPFRT_ENGINE_CHECKED;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		usage(stderr);
		return 2;
	}
	if (!prog_hex) {
		size_t len;

		if (cli_read_file("-", &text, &len))
			return fail("cannot read the program from standard input");
		prog_hex = text;
	}
	if (cli_parse_hex(prog_hex, &prog, &prog_len, err, sizeof(err))) {
		free(text);
		return fail(err);
	}
	if (optind < argc && cli_parse_hex(argv[optind], &mem, &mem_len, err, sizeof(err))) {
		free(text);
		free(prog);
		return fail(err);
	}
	ret = run(prog, prog_len, mem, mem_len, engine);
	free(text);
	free(prog);
	free(mem);
	return ret;
}
