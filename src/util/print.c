/* print.c - the library's diagnostics channel (bpfrt_set_print) and its version.
 * The verifier log is separate: it goes to the caller's buffer (src/verifier/log.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "util/util.h"

/* format(printf, 2, 0): fmt is a caller's printf format, passed on with its va_list. */
__attribute__((format(printf, 2, 0)))
static int default_print(enum bpfrt_print_level level, const char *fmt, va_list ap)
{
	static int max_level = -1;

	if (max_level < 0) {
		const char *env = getenv("BPFRT_LOG_LEVEL");

		max_level = BPFRT_WARN;
		if (env && !strcmp(env, "info"))
			max_level = BPFRT_INFO;
		else if (env && !strcmp(env, "debug"))
			max_level = BPFRT_DEBUG;
	}
	if ((int)level > max_level)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bpfrt_print_fn print_fn = default_print;

bpfrt_print_fn bpfrt_set_print(bpfrt_print_fn fn)
{
	bpfrt_print_fn old = print_fn;

	print_fn = fn;
	return old;
}

void brt_print(enum bpfrt_print_level level, const char *fmt, ...)
{
	va_list ap;

	if (!print_fn)
		return;
	va_start(ap, fmt);
	print_fn(level, fmt, ap);
	va_end(ap);
}

const char *bpfrt_version(void)
{
	return "0.1.0";
}
