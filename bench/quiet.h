/* quiet.h - print callbacks that drop bpfrt's and libbpf's messages, so the loader
 * benches time loads, not warnings (objects some side refuses warn on every pass).
 */
#ifndef BPFRT_BENCH_QUIET_H
#define BPFRT_BENCH_QUIET_H

#include <stdarg.h>

#include "bpfrt.h"

static inline int quiet(enum bpfrt_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

#ifdef HAVE_LIBBPF
#include <bpf/libbpf.h>

static inline int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}
#endif

#endif
