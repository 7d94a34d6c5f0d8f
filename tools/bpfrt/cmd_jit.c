/* cmd_jit.c - `bpfrt jit FILE`: compile a program with the x86-64 JIT and print each eBPF
 * instruction followed by the machine code generated for it (capstone, Intel syntax). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "cli.h"
#include "jit/jit.h"
#include "vm/vm.h"

static void usage(FILE *out)
{
	fprintf(out, "Usage: bpfrt jit [-j|--json] FILE [--opcodes]\n\n"
		     "Compile an eBPF program with the x86-64 JIT and print every instruction with\n"
		     "the machine code generated for it.  FILE is read as by 'bpfrt run'.\n"
		     "Helpers are bound to the built-in table; unknown ids get a placeholder.\n\n"
		     "Options:\n"
		     "  --opcodes   print the machine-code bytes too\n"
		     "  -j, --json  one JSON object per instruction with its machine code\n"
		     "  -h, --help  this help\n");
}

#ifdef BPFRT_HAVE_JIT

int cmd_jit(int argc, char **argv)
{
	struct brt_jit_env env = { .helper = cli_jit_helper,
				   .pkt_data_off = offsetof(struct bpfrt_run_ctx, skb_data),
				   .pkt_len_off = offsetof(struct bpfrt_run_ctx, skb_len) };
	const char *file = NULL;
	struct bpf_insn *insns = NULL;
	struct brt_jit_prog *p;
	uint8_t *mem = NULL;
	size_t n = 0, mem_len = 0;
	struct cli_dump_opts jo = { 0 };
	unsigned flags = 0;
	int is_data, ret;
	char err[512];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--opcodes")) {
			flags |= BRT_JIT_DUMP_OPCODES;
			jo.opcodes = 1;
		} else if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			jo.json = 1;
		} else if (!file && (argv[i][0] != '-' || !strcmp(argv[i], "-"))) {
			file = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!file) {
		usage(stderr);
		return 2;
	}
	if (cli_load_program(file, &insns, &n, &mem, &mem_len, &is_data))
		return 1;
	ret = brt_isa_check_prog(insns, n, BRT_VM_DEFAULT_MAX_INSNS, err, sizeof(err));
	if (!ret)
		ret = brt_jit_compile(insns, n, &env, &p, err, sizeof(err));
	if (ret) {
		free(insns);
		free(mem);
		return cli_error("%s: %s", file, err);
	}
	ret = jo.json ? cli_jit_print(p, insns, n, &jo) : brt_jit_dump(p, insns, stdout, flags);
	brt_jit_free(p);
	free(insns);
	free(mem);
	return ret ? cli_error("write error") : 0;
}
#else /* built with -DBPFRT_JIT=OFF: the command exists but says why it cannot work */
int cmd_jit(int argc, char **argv)
{
	/* --help answers as in every build: the usage is the same, only the work is missing */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
	return cli_error("jit: this build has no JIT (configured with -DBPFRT_JIT=OFF)");
}
#endif
