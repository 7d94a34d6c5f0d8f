/* cli.h - shared pieces of the bpfrt command-line tool: subcommand handlers (one file
 * each, listed in commands.def), error reporting and small input helpers. */
#ifndef BPFRT_TOOLS_CLI_H
#define BPFRT_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpfrt.h"

#define CMD(name, fn, summary) int fn(int argc, char **argv);
#include "commands.def"
#undef CMD

/* Print "bpfrt: <message>" to stderr; returns 1 (the exit status for errors). */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a whole file (or stdin for "-") into a NUL-terminated heap buffer. */
int cli_read_file(const char *path, char **data, size_t *len);

/* Parse hex bytes ("b7 00 00 00", "0xb7,0x00" or "b70000") into a heap buffer.  Returns 0,
 * or -1 with a message naming the offending character offset in err. */
int cli_parse_hex(const char *text, uint8_t **out, size_t *len, char *err, size_t errlen);

/* "interp" (or "fast"), "checked", "jit" -> *engine (an enum bpfrt_engine); 0 or -1. */
int cli_parse_engine(const char *s, enum bpfrt_engine *engine);

/* Load a program file as `bpfrt run` reads it (assembly, .data, hex or raw); *mem gets a
 * .data file's memory (else NULL) and *is_data says which.  Returns 0 or 1 (message
 * printed). */
int cli_load_program(const char *path, struct bpf_insn **insns, size_t *n, uint8_t **mem,
		     size_t *mem_len, int *is_data);

/* bpfrt filter / bpfrt attach (cmd_filter.c); cmd names the command in messages. */
int cli_filter_main(int argc, char **argv, const char *cmd);
/* The eBPF program bpfrt filter/attach run (cmd_attach.c): --object FILE.o [--name FUNC]
 * or --ebpf FILE of a type ("socket", "tc", "xdp").  0 with *prog_fd (and the object to
 * close, or NULL), or 1 with the message printed. */
int cli_attach_parse_type(const char *s, enum bpf_prog_type *type);
const char *cli_attach_type_name(enum bpf_prog_type type);
int cli_attach_load(const char *cmd, const char *object, const char *name, const char *ebpf,
		    enum bpf_prog_type type, struct bpfrt_object **obj, int *prog_fd);

#endif
