/* quiet.h - a print callback that drops the library's messages, for tests whose cases
 * make the loader warn on purpose: bpfrt_set_print(t_print_quiet).
 */
#ifndef BPFRT_TESTS_QUIET_H
#define BPFRT_TESTS_QUIET_H

#include <stdarg.h>

#include "bpfrt.h"

static inline int t_print_quiet(enum bpfrt_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

#endif
