/* bpfrt/common.h - version, visibility, extensible options and the print callback.
 * Included by <bpfrt.h>; not meant to be included on its own.
 */
#ifndef BPFRT_COMMON_H
#define BPFRT_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(BPFRT_BUILDING)
#define BPFRT_API __attribute__((visibility("default")))
#else
#define BPFRT_API
#endif

#define BPFRT_VERSION_MAJOR 0
#define BPFRT_VERSION_MINOR 1
#define BPFRT_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH". */
BPFRT_API const char *bpfrt_version(void);

/* Declare and zero an options struct and set its size field:
 *   BPFRT_OPTS(bpfrt_run_opts, o, .engine = BPFRT_ENGINE_INTERP);
 * Members not named are zero.  Fields are only ever added at the end of an opts struct, so a program built against an
 * older header keeps working; bytes past what this build knows must be zero.  C leaves
 * padding bytes unspecified (compilers leave tail padding as the stack had it), so no
 * opts struct has tail padding: where its last field would leave some, a `reserved`
 * member fills it, zeroed here like every member not named, and a later field takes its
 * place (tests/api/test_opts.c asserts both). */
#define BPFRT_OPTS(type, name, ...) struct type name = { .sz = sizeof(struct type), __VA_ARGS__ }

/* Errors, one convention per API family (the libbpf 1.x rules; messages never name C
 * functions, they name the instruction, field, file offset or object):
 *   raw bpf():        bpfrt_bpf() behaves like bpf(2): -1 with errno set, the verifier's
 *                     messages in attr.log_buf (log_level, log_size) as in the kernel;
 *   bpf() wrappers:   bpfrt_map_*(), bpfrt_prog_load(), bpfrt_obj_*(), ... (bpfrt/bpf.h)
 *                     return -errno and set errno; program loads take the log buffer in
 *                     their opts (log_buf, log_size, log_level);
 *   vm, filters, attach (bpfrt/vm.h, bpfrt/attach.h): -errno with errno set, and the
 *                     reason ("insn N: ...", "iface 'lo': ...") in the caller's err
 *                     buffer of errlen bytes (0 allowed: no message);
 *   objects (bpfrt/object.h): constructors return NULL with errno set, other int
 *                     functions -errno with errno set; a failed load's reasons and
 *                     verifier log in bpfrt_object_log(), parse errors through the print
 *                     callback;
 *   tracing and links (bpfrt/trace.h, bpfrt/probe.h, bpfrt/perf.h): -errno with errno
 *                     set, the reason through the print callback.
 * The errno is the kernel's for the same failure (EACCES: verifier rejection, EINVAL:
 * malformed input, E2BIG, ENOSPC: truncated log).  Everything not tied to a call's buffer
 * goes through the print callback below. */

enum bpfrt_print_level {
	BPFRT_WARN,
	BPFRT_INFO,
	BPFRT_DEBUG,
};

typedef int (*bpfrt_print_fn)(enum bpfrt_print_level level, const char *fmt, va_list ap);

/* Route the library's diagnostics (not the verifier log, which goes to the caller's
 * log_buf) through fn; NULL silences them.  Returns the previous callback.  By default
 * warnings go to stderr; the environment variable BPFRT_LOG_LEVEL=warn|info|debug
 * changes the default level. */
BPFRT_API bpfrt_print_fn bpfrt_set_print(bpfrt_print_fn fn);

#ifdef __cplusplus
}
#endif

#endif
