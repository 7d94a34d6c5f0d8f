/* main.c - the bpfrt command-line tool: dispatches "bpfrt <command> ..." to the handler
 * listed in commands.def.  Each command parses its own options and has --help.  -j/--json
 * and -p/--pretty work on every command, before it (bpftool's place) or after it: main
 * hands the command --json, and for -p re-indents the JSON the command printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpfrt.h"
#include "cli.h"
#include "json.h"

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
	fprintf(out, "Usage: bpfrt [-j|--json] [-p|--pretty] COMMAND [ARGS...]\n\n"
		     "A userspace eBPF runtime: assembler, verifier, interpreter, JIT, maps.\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-22s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n  -j, --json     JSON output (any command; also accepted after COMMAND)\n"
		     "  -p, --pretty   indented JSON\n"
		     "\nRun 'bpfrt COMMAND --help' for the options of a command.\n");
}

int cmd_version(int argc, char **argv)
{
	int json = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("Usage: bpfrt version [-j|--json]\n\nPrint the library version.\n");
			return 0;
		}
		if (strcmp(argv[i], "--json") && strcmp(argv[i], "-j")) {
			fprintf(stderr, "bpfrt: version: unexpected '%s'\n", argv[i]);
			return 2;
		}
		json = 1;
	}
	if (json)
		printf("{\"version\":\"%s\"}\n", bpfrt_version());
	else
		printf("bpfrt %s\n", bpfrt_version());
	return 0;
}

/* Commands whose own -p means something else (filter's --prog, the plugin's --program):
 * for them only --pretty is main's. */
static int owns_dash_p(const char *cmd)
{
	return !strcmp(cmd, "filter") || !strcmp(cmd, "attach") ||
	       !strcmp(cmd, "conformance-plugin");
}

/* Run the command with stdout going to a memory file, then print it re-indented. */
static int run_pretty(const struct command *c, int argc, char **argv)
{
	int saved, mfd, ret;
	char *buf;
	off_t len;

	fflush(stdout);
	mfd = memfd_create("bpfrt-json", MFD_CLOEXEC);
	saved = dup(STDOUT_FILENO);
	if (mfd < 0 || saved < 0 || dup2(mfd, STDOUT_FILENO) < 0) /* plain JSON then */
		return c->fn(argc, argv);
	ret = c->fn(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	len = lseek(mfd, 0, SEEK_END);
	buf = len > 0 ? malloc((size_t)len) : NULL;
	if (buf && pread(mfd, buf, (size_t)len, 0) == len) {
		size_t sp = strspn(buf, " \t\r\n");

		/* an error path may print text: only JSON is re-indented */
		if (sp < (size_t)len && (buf[sp] == '{' || buf[sp] == '['))
			json_reformat(buf, (size_t)len, stdout);
		else
			fwrite(buf, 1, (size_t)len, stdout);
	}
	free(buf);
	close(mfd);
	return ret;
}

int main(int argc, char **argv)
{
	int json = 0, pretty = 0, first = 1, n = 0, ret;
	const struct command *c = NULL;
	char **args;

	for (; first < argc && argv[first][0] == '-'; first++) {
		const char *o = argv[first];

		if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(o, "--version")) {
			printf("bpfrt %s\n", bpfrt_version());
			return 0;
		} else if (!strcmp(o, "-j") || !strcmp(o, "--json")) {
			json = 1;
		} else if (!strcmp(o, "-p") || !strcmp(o, "--pretty")) {
			json = pretty = 1;
		} else {
			fprintf(stderr, "bpfrt: unknown option '%s'\n", o);
			usage(stderr);
			return 2;
		}
	}
	if (first >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[first], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[first], commands[i].name))
			c = &commands[i];
	if (!c) {
		fprintf(stderr, "bpfrt: unknown command '%s'\n", argv[first]);
		usage(stderr);
		return 2;
	}
	/* The command's argv: its name, --json when asked, then its arguments with -p and
	 * --pretty taken out (main prints pretty). */
	args = calloc((size_t)(argc - first) + 2, sizeof(*args));
	if (!args)
		return 1;
	args[n++] = argv[first];
	for (int i = first + 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pretty") ||
		    (!strcmp(argv[i], "-p") && !owns_dash_p(c->name))) {
			json = pretty = 1;
			continue;
		}
		args[n++] = argv[i];
	}
	if (json) {
		memmove(args + 2, args + 1, (size_t)(n - 1) * sizeof(*args));
		args[1] = "--json";
		n++;
	}
	ret = pretty ? run_pretty(c, n, args) : c->fn(n, args);
	free(args);
	return ret;
}
