/* util.c - error reporting, file reading and hex parsing shared by the CLI commands. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

int cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("bpfrt: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

volatile sig_atomic_t cli_stop;
static int stop_sigterm; /* cli_stop_on() caught SIGTERM too */

static void on_stop(int sig)
{
	(void)sig;
	cli_stop = 1;
}

void cli_stop_on(int sigterm)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	if (sigterm)
		sigaction(SIGTERM, &sa, NULL);
	stop_sigterm = sigterm;
}

void cli_stop_off(void)
{
	signal(SIGINT, SIG_DFL);
	if (stop_sigterm)
		signal(SIGTERM, SIG_DFL);
}

int cli_parse_count(const char *cmd, const char *arg, unsigned long long *count)
{
	char *end;

	errno = 0;
	*count = strtoull(arg, &end, 10);
	if (errno || *end || !*arg || !*count)
		return cli_error("%s: bad number '%s' for --count", cmd, arg) + 1;
	return 0;
}

int cli_parse_duration(const char *cmd, const char *arg, double *seconds)
{
	char *end;

	*seconds = strtod(arg, &end);
	if (*end || !*arg || !(*seconds > 0))
		return cli_error("%s: bad number '%s' for --duration", cmd, arg) + 1;
	return 0;
}

int cli_read_file(const char *path, char **data, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t cap = 4096, n = 0;
	char *buf;

	if (!f)
		return -errno;
	buf = malloc(cap + 1);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (n < cap)
			break;
		cap *= 2;
		char *nbuf = realloc(buf, cap + 1);
		if (!nbuf) {
			free(buf);
			buf = NULL;
		} else {
			buf = nbuf;
		}
	}
	if (f != stdin)
		fclose(f);
	if (!buf)
		return -ENOMEM;
	buf[n] = 0;
	*data = buf;
	*len = n;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int cli_parse_hex(const char *text, uint8_t **out, size_t *len, char *err, size_t errlen)
{
	size_t cap = strlen(text) / 2 + 1, n = 0;
	uint8_t *buf = malloc(cap);
	const char *p = text;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while (*p) {
		if (isspace((unsigned char)*p) || *p == ',') {
			p++;
			continue;
		}
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			p += 2;
			continue;
		}
		int hi = hexval((unsigned char)p[0]);
		int lo = hi < 0 ? -1 : hexval((unsigned char)p[1]);
		if (hi < 0 || lo < 0) {
			snprintf(err, errlen, "invalid hex at offset %zu", (size_t)(p - text) + (hi < 0 ? 0 : 1));
			free(buf);
			return -1;
		}
		buf[n++] = (uint8_t)(hi << 4 | lo);
		p += 2;
	}
	*out = buf;
	*len = n;
	return 0;
}
