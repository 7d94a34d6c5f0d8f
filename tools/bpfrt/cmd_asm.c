/* cmd_asm.c - "bpfrt asm": assemble a file in the conformance syntax (include/bpfrt/asm.h)
 * into raw little-endian instructions, or hex text with --hex. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "isa/isa.h"
#include "json.h"

static void asm_usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt asm [OPTIONS] FILE\n\n"
		"Assemble FILE ('-' = stdin), written in the bpf_conformance assembly syntax\n"
		"(see bpfrt/asm.h), into eBPF instructions.\n\n"
		"Options:\n"
		"  -o, --output OUT   write to OUT instead of stdout\n"
		"      --hex          write hex text, one 8-byte instruction per line, instead of\n"
		"                     raw little-endian bytes\n"
		"  -j, --json         print a JSON array of {pc, hex, text} instead\n"
		"  -h, --help         show this help\n\n"
		"Errors name FILE:LINE:COL and the exit status is 1.  A program that assembles\n"
		"but would not load (a jump out of the program, a write to r10) is written\n"
		"anyway, with a warning naming the instruction.\n");
}

static int write_output(const char *path, const struct bpf_insn *insns, size_t n, int hex)
{
	FILE *out = path ? fopen(path, "wb") : stdout;
	int bad;

	if (!out)
		return cli_error("asm: cannot open %s: %s", path, strerror(errno));
	if (hex) {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *b = (const uint8_t *)&insns[i];

			fprintf(out, "%02x %02x %02x %02x %02x %02x %02x %02x\n", b[0], b[1], b[2],
				b[3], b[4], b[5], b[6], b[7]);
		}
	} else {
		fwrite(insns, sizeof(*insns), n, out);
	}
	bad = ferror(out);
	if (path)
		bad |= fclose(out);
	else
		bad |= fflush(out);
	if (bad)
		return cli_error("asm: cannot write %s", path ? path : "stdout");
	return 0;
}

static void write_json(const struct bpf_insn *insns, size_t n)
{
	struct json j;
	char hex[32], text[160];

	json_init(&j, stdout, 0);
	json_begin_array(&j);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = (const uint8_t *)&insns[i];

		snprintf(hex, sizeof(hex), "%02x %02x %02x %02x %02x %02x %02x %02x", b[0], b[1],
			 b[2], b[3], b[4], b[5], b[6], b[7]);
		if (brt_disasm_insn(&insns[i], n - i, BRT_DISASM_KERNEL, text, sizeof(text)) < 0)
			text[0] = 0;
		json_begin_object(&j);
		json_kv_uint(&j, "pc", i);
		json_kv_string(&j, "hex", hex);
		json_kv_string(&j, "text", text);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_finish(&j);
}

int cmd_asm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "hex", no_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *input;
	struct bpf_insn *insns;
	char err[512], *text;
	size_t len, n;
	int c, hex = 0, json = 0, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case 'x':
			hex = 1;
			break;
		case 'h':
			asm_usage(stdout);
			return 0;
		default:
			asm_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		asm_usage(stderr);
		return 2;
	}
	input = argv[optind];
	ret = cli_read_file(input, &text, &len);
	if (ret)
		return cli_error("asm: cannot read %s: %s", input, strerror(-ret));
	if (strlen(text) != len) {
		size_t nul = strlen(text); /* taken before the free: the message needs it */

		free(text);
		return cli_error("asm: %s: NUL byte at offset %zu: not a text file", input, nul);
	}
	ret = brt_asm(text, strcmp(input, "-") ? input : "<stdin>", &insns, &n, err, sizeof(err));
	free(text);
	if (ret)
		return cli_error("asm: %s", err);
	/* the assembler takes any offset; say so when the result cannot load */
	if (brt_isa_check_prog(insns, n, BRT_ISA_MAX_INSNS, err, sizeof(err)))
		fprintf(stderr, "bpfrt: asm: warning: %s\n", err);
	if (json && !output) {
		write_json(insns, n);
		ret = 0;
	} else {
		ret = write_output(output, insns, n, hex);
	}
	free(insns);
	return ret;
}
