/* cmd_disasm.c - "bpfrt disasm": print a program of raw or hex instructions in the kernel
 * verifier-log style, in the assembly style "bpfrt asm" reads back, or as JSON. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "isa/isa.h"

static void disasm_usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt disasm [OPTIONS] FILE\n\n"
		"Disassemble the eBPF program in FILE ('-' = stdin): raw little-endian 8-byte\n"
		"instructions, or hex text (\"b7 00 00 00 2a 00 00 00\", \"0xb7,0x00,...\"),\n"
		"told apart automatically.\n\n"
		"Options:\n"
		"      --style kernel   the verifier log's text: \"0: (b7) r0 = 42\" (default)\n"
		"      --style asm      assembly that 'bpfrt asm' turns back into the same bytes\n"
		"      --labels         asm style: jump targets as labels (L<index>:) instead of\n"
		"                       offsets\n"
		"      --hex            FILE is hex text (no auto-detection)\n"
		"  -j, --json           a JSON array of {idx, code, dst, src, off, imm, text}\n"
		"  -h, --help           show this help\n\n"
		"An instruction that does not decode is printed as \"invalid: <reason>\" (a\n"
		"comment in the asm style) and reported on stderr, as is a jump out of the\n"
		"program or into the middle of an lddw; the exit status is then 1.\n");
}

/* Hex text: nothing but hex digits, 0x prefixes, commas and white space. */
static int looks_like_hex(const char *data, size_t len)
{
	size_t digits = 0;

	for (size_t i = 0; i < len; i++) {
		char c = data[i];

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
			digits++;
		else if (c != 'x' && c != 'X' && c != ',' && c != ' ' && c != '\t' && c != '\n' &&
			 c != '\r')
			return 0;
	}
	return digits > 0;
}

static void print_insn(const struct bpf_insn *insn, size_t idx, const char *text, int valid,
		       enum brt_disasm_style style, int json)
{
	if (json) {
		printf("%s\n  {\"idx\": %zu, \"code\": %u, \"dst\": %u, \"src\": %u, \"off\": %d, "
		       "\"imm\": %d, \"valid\": %s, \"text\": ",
		       idx ? "," : "", idx, insn->code, insn->dst_reg, insn->src_reg, insn->off,
		       insn->imm, valid ? "true" : "false");
		json_put_string(stdout, text);
		putchar('}');
	} else if (style == BRT_DISASM_KERNEL) {
		printf("%zu: %s\n", idx, text);
	} else if (valid) {
		printf("%s\n", text);
	} else {
		printf("# insn %zu: %s\n", idx, text);
	}
}

/* The instruction a jump or local call at idx goes to, when asm style writes it as its last
 * token; -1 for other instructions. */
static int64_t jump_target(const struct bpf_insn *insns, size_t n, size_t idx)
{
	const char *why;
	enum brt_op op = brt_isa_decode(&insns[idx], n - idx, &why);

	if (op == BRT_OP_INVALID)
		return -1;
	switch (brt_ops[op].shape) {
	case BRT_SHAPE_JA:
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_MAY_GOTO:
	case BRT_SHAPE_JMP_IMM:
	case BRT_SHAPE_JMP_REG:
	case BRT_SHAPE_CALL_LOCAL:
		return brt_isa_jump_target(&insns[idx], op, idx);
	default:
		return -1;
	}
}

/* --labels: labels[i] is 1 when instruction i starts an instruction (not the second slot of
 * an lddw) and some jump lands there.  NULL on failure (then offsets are printed). */
static uint8_t *find_labels(const struct bpf_insn *insns, size_t n)
{
	uint8_t *starts = calloc(n, 1), *labels = calloc(n, 1);
	const char *why;

	if (!starts || !labels) {
		free(starts);
		free(labels);
		return NULL;
	}
	for (size_t idx = 0; idx < n; idx++) {
		enum brt_op op = brt_isa_decode(&insns[idx], n - idx, &why);

		starts[idx] = 1;
		if (op != BRT_OP_INVALID && brt_ops[op].shape == BRT_SHAPE_LDDW)
			idx++;
	}
	for (size_t idx = 0; idx < n; idx++) {
		int64_t t = starts[idx] ? jump_target(insns, n, idx) : -1;

		if (t >= 0 && (uint64_t)t < n && starts[t])
			labels[t] = 1;
	}
	free(starts);
	return labels;
}

/* Replace the offset that ends an asm-style jump with the label of its target. */
static void use_label(char *text, size_t len, int64_t target)
{
	char *sp = strrchr(text, ' ');

	if (sp)
		snprintf(sp + 1, len - (size_t)(sp + 1 - text), "L%lld", (long long)target);
}

static int disasm_prog(const struct bpf_insn *insns, size_t n, enum brt_disasm_style style,
		       int json, int want_labels)
{
	uint8_t *labels = want_labels ? find_labels(insns, n) : NULL;
	size_t idx = 0, bad = 0;
	char text[256];

	if (json)
		putchar('[');
	while (idx < n) {
		int slots = brt_disasm_insn(&insns[idx], n - idx, style, text, sizeof(text));
		int64_t t = labels && slots > 0 ? jump_target(insns, n, idx) : -1;

		if (labels && labels[idx])
			printf("L%zu:\n", idx);
		if (t >= 0 && (uint64_t)t < n && labels[t])
			use_label(text, sizeof(text), t);
		print_insn(&insns[idx], idx, text, slots > 0, style, json);
		if (slots <= 0) {
			/* "invalid: why (fields)" -> "insn N: why (fields)" */
			fprintf(stderr, "bpfrt: disasm: insn %zu: %s\n", idx,
				strncmp(text, "invalid: ", 9) ? text : text + 9);
			bad++;
			slots = 1;
		}
		idx += (size_t)slots;
	}
	free(labels);
	if (json)
		printf("\n]\n");
	if (fflush(stdout))
		return cli_error("disasm: cannot write stdout");
	if (bad)
		return 1;
	/* every instruction is fine alone; now jumps into nowhere or into an lddw */
	if (brt_isa_check_prog(insns, n, BRT_ISA_MAX_INSNS, text, sizeof(text)))
		return cli_error("disasm: %s", text);
	return 0;
}

/* Read FILE as instructions: raw bytes, or hex text when --hex or when it looks like it. */
static int load_insns(const char *path, int hex, uint8_t **bytes, size_t *len)
{
	char *data, err[128];
	size_t data_len;
	int ret = cli_read_file(path, &data, &data_len);

	if (ret)
		return cli_error("disasm: cannot read %s: %s", path, strerror(-ret));
	if (hex || looks_like_hex(data, data_len)) {
		ret = cli_parse_hex(data, bytes, len, err, sizeof(err));
		free(data);
		if (ret)
			return cli_error("disasm: %s: %s", path, err);
	} else {
		*bytes = (uint8_t *)data;
		*len = data_len;
	}
	if (*len % sizeof(struct bpf_insn)) {
		free(*bytes);
		return cli_error("disasm: %s: %zu bytes is not a whole number of 8-byte "
				 "instructions", path, *len);
	}
	if (!*len) {
		free(*bytes);
		return cli_error("disasm: %s: no instructions", path);
	}
	if (*len / sizeof(struct bpf_insn) > BRT_ISA_MAX_INSNS) {
		free(*bytes);
		return cli_error("disasm: %s: %zu instructions, more than the limit of %u", path,
				 *len / sizeof(struct bpf_insn), BRT_ISA_MAX_INSNS);
	}
	return 0;
}

int cmd_disasm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "style", required_argument, NULL, 's' },
		{ "hex", no_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "labels", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum brt_disasm_style style = BRT_DISASM_KERNEL;
	struct bpf_insn *insns;
	int c, hex = 0, json = 0, labels = 0, ret;
	uint8_t *bytes;
	size_t len;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!strcmp(optarg, "kernel")) {
				style = BRT_DISASM_KERNEL;
			} else if (!strcmp(optarg, "asm")) {
				style = BRT_DISASM_ASM;
			} else {
				cli_error("disasm: unknown style '%s' (kernel or asm)", optarg);
				return 2;
			}
			break;
		case 'x':
			hex = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'l':
			labels = 1;
			break;
		case 'h':
			disasm_usage(stdout);
			return 0;
		default:
			disasm_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		disasm_usage(stderr);
		return 2;
	}
	if (load_insns(argv[optind], hex, &bytes, &len))
		return 1;
	/* copy: the byte buffer need not be aligned for struct bpf_insn */
	insns = malloc(len);
	if (!insns) {
		free(bytes);
		return cli_error("disasm: out of memory");
	}
	memcpy(insns, bytes, len);
	free(bytes);
	ret = disasm_prog(insns, len / sizeof(*insns), style, json,
			  labels && style == BRT_DISASM_ASM && !json);
	free(insns);
	return ret;
}
