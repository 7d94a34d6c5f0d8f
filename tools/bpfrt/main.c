/* main.c - the bpfrt command-line tool: dispatches "bpfrt <command> ..." to the handler
 * listed in commands.def.  Each command parses its own options and has --help. */
#include <stdio.h>
#include <string.h>

#include "bpfrt.h"
#include "cli.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
#define CMD(name, fn, summary) { #name, fn, summary },
#include "commands.def"
#undef CMD
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: bpfrt COMMAND [ARGS...]\n\n"
		     "A userspace eBPF runtime: assembler, verifier, interpreter, JIT, maps.\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-22s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nRun 'bpfrt COMMAND --help' for the options of a command.\n");
}

int cmd_version(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: bpfrt version\n\nPrint the library version.\n");
		return 0;
	}
	printf("bpfrt %s\n", bpfrt_version());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("bpfrt %s\n", bpfrt_version());
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "bpfrt: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
