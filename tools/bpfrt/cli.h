/* cli.h - shared pieces of the bpfrt command-line tool: subcommand handlers (one file
 * each, listed in commands.def), error reporting and small input helpers. */
#ifndef BPFRT_TOOLS_CLI_H
#define BPFRT_TOOLS_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpfrt.h"
#include "vm/helper_proto.h"

#define CMD(name, fn, summary) int fn(int argc, char **argv);
#include "commands.def"
#undef CMD

/* Print "bpfrt: <message>" to stderr; returns 1 (the exit status for errors). */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Seconds on the monotonic clock, for the commands that stop after a --duration. */
double cli_now(void);
/* Set by Ctrl-C (and SIGTERM, with sigterm set) once cli_stop_on() is called: the commands
 * that follow events until then finish cleanly and print their summary; cli_stop_off()
 * gives the signals their default action again. */
extern volatile sig_atomic_t cli_stop;
void cli_stop_on(int sigterm);
void cli_stop_off(void);
/* The --count N (N > 0) and --duration SEC (SEC > 0) of the commands that follow events:
 * 0, or 2 (the usage error status) after "bpfrt: CMD: bad number '...' for --OPT". */
int cli_parse_count(const char *cmd, const char *arg, unsigned long long *count);
int cli_parse_duration(const char *cmd, const char *arg, double *seconds);

/* Read a whole file (or stdin for "-") into a NUL-terminated heap buffer. */
int cli_read_file(const char *path, char **data, size_t *len);

/* Parse hex bytes ("b7 00 00 00", "0xb7,0x00" or "b70000") into a heap buffer.  Returns 0,
 * or -1 with a message naming the offending character offset in err. */
int cli_parse_hex(const char *text, uint8_t **out, size_t *len, char *err, size_t errlen);

/* Load a program file as `bpfrt run` reads it (assembly, .data, hex or raw); *mem gets a
 * .data file's memory (else NULL) and *is_data says which.  Returns 0 or 1 (message
 * printed). */
int cli_load_program(const char *path, struct bpf_insn **insns, size_t *n, uint8_t **mem,
		     size_t *mem_len, int *is_data);

/* bpfrt filter / bpfrt attach (cmd_filter.c); cmd names the command in messages. */
int cli_filter_main(int argc, char **argv, const char *cmd);
/* The eBPF programs bpfrt filter/attach run (pkt_prog_load.c): packet program types by
 * name ("socket", "tc", "xdp"; 0 or -1) and back ("other" for the rest).
 * cli_pkt_prog_load(): --object FILE.o [--name FUNC] or --ebpf FILE of type, loaded with
 * prog_flags (the engine: BPFRT_F_ENGINE()); 0 with *prog_fd (and the object to close, or
 * NULL), or 1 with the message printed. */
int cli_pkt_parse_type(const char *s, enum bpf_prog_type *type);
const char *cli_pkt_type_name(enum bpf_prog_type type);
int cli_pkt_prog_load(const char *cmd, const char *object, const char *name, const char *ebpf,
		      enum bpf_prog_type type, uint32_t prog_flags, struct bpfrt_object **obj,
		      int *prog_fd);

/* `map event_pipe` (cmd_map_event_pipe.c): argv[i..] are its arguments after MAP, whose
 * fd and path are given; 0 or 1 (message printed). */
int cli_map_event_pipe(int map_fd, const char *path, int argc, char **argv, int i, int json);

/* bpf(2)-shaped entry: bpfrt_bpf(), or the kernel's syscall when kernel is non-zero. */
typedef int (*cli_bpf_fn)(int cmd, union bpf_attr *attr, unsigned int size);
cli_bpf_fn cli_bpf_of(int kernel);

/* Does the file start with the ELF magic? */
int cli_is_elf(const char *path);

/* A program type as a SEC() name ("xdp", "classifier") or bpftool's type name
 * ("sched_cls"); 0 or -1. */
int cli_parse_prog_type(const char *s, uint32_t *type, uint32_t *attach);

/* How `prog load`, `object load|run` and an `OBJ NAME` program argument load an object. */
struct cli_load_opts {
	int kernel;          /* bpf(2) instead of bpfrt */
	uint32_t log_level;  /* verifier log level (printed on failure) */
	const char *only;    /* load only this program's section (NULL: all) */
	uint32_t type;       /* non-zero: force this program type on every program */
	uint32_t attach;     /* with type: expected attach type */
	int type_default;    /* type only for programs whose section names no type */
	const char *btf;     /* target BTF for CO-RE relocations (NULL: the kernel's) */
};
/* Open and load path; 0 with *out set, or 1 with the reason printed. */
int cli_object_load(const char *path, const struct cli_load_opts *lo, struct bpfrt_object **out);

/* A program named on the command line (prog_ref.c). */
struct cli_prog {
	int fd;                     /* program fd */
	cli_bpf_fn sys;             /* where fd lives */
	struct bpfrt_object *obj;   /* OBJ NAME form: the loaded object (source lines) */
	struct bpfrt_program *prog; /* OBJ NAME form: the program */
	const char *label;          /* for messages */
};
/* Parse PROG at argv[*i] ([pinned] PATH, or OBJ NAME) and open it; 0 or 1 (message
 * printed).  *i moves past it. */
int cli_prog_open(int argc, char **argv, int *i, int kernel, struct cli_prog *out);
void cli_prog_close(struct cli_prog *p);
/* BPF_OBJ_GET_INFO_BY_FD on it into info, which says which arrays to fill (zero it for
 * none); 0 or 1 (message printed). */
int cli_prog_info(const struct cli_prog *p, struct bpf_prog_info *info);

/* `prog dump xlated|jited` (prog_dump.c): argv starts after "dump". */
struct cli_dump_opts {
	int json, pretty, kernel;
	int opcodes; /* print instruction bytes */
	int linum;   /* file and line number with each source line */
};
int cli_prog_dump(int argc, char **argv, const struct cli_dump_opts *o);
#ifdef BPFRT_HAVE_JIT
struct brt_jit_prog;
/* brt_jit_dump() of a compiled program as text or JSON (one object per instruction with
 * its "jited" lines), for `bpfrt jit` and `prog dump jited`. */
int cli_jit_print(const struct brt_jit_prog *jp, const struct bpf_insn *insns, size_t n,
		  const struct cli_dump_opts *o);
/* The JIT's helper resolver for code that is shown, not run: the built-in helper table,
 * a placeholder for unknown ids. */
brt_helper_fn cli_jit_helper(void *arg, uint32_t id);
#endif

#endif
