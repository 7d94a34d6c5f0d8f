/* cmd_trace_log.c - "bpfrt trace-log": follow the trace pipe bpf_trace_printk() writes to
 * ($BPFRT_FS/trace_pipe), like `cat /sys/kernel/tracing/trace_pipe`: new lines from its
 * end (--all: from its beginning) until Ctrl-C, --count lines or --duration; --clear
 * empties it.  A pipe that shrank (emptied when full) is read again from its start.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"

#define POLL_US 50000

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt trace-log [OPTIONS]\n\n"
		"Print the lines programs write with bpf_trace_printk() as they come, from the\n"
		"trace pipe $BPFRT_FS/trace_pipe (default /dev/shm/bpfrt/trace_pipe), each\n"
		"\"COMM-TID [CPU] SECONDS: bpf_trace_printk: MESSAGE\".\n\n"
		"  -a, --all           start at the pipe's first line, not its end\n"
		"  -n, --count N       stop after N lines\n"
		"  -t, --duration SEC  stop after SEC seconds\n"
		"  -c, --clear         empty the trace pipe and exit\n"
		"  -j, --json          one JSON object per line; -p, --pretty: indented\n"
		"  -h, --help          show this help\n");
}

struct lopts {
	int all, clear, json, pretty;
	unsigned long long count;
	double duration;
};

static int parse(int argc, char **argv, struct lopts *o)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },     { "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 't' },
		{ "clear", no_argument, NULL, 'c' },   { "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },  { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "an:t:cjph", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->all = 1;
			break;
		case 'n':
			if (cli_parse_count("trace-log", optarg, &o->count))
				return 2;
			break;
		case 't':
			if (cli_parse_duration("trace-log", optarg, &o->duration))
				return 2;
			break;
		case 'c':
			o->clear = 1;
			break;
		case 'p':
			o->pretty = 1;
			o->json = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		cli_error("trace-log: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return 2;
	}
	return 0;
}

/* "comm-tid [cpu] secs: bpf_trace_printk: msg" as JSON; other lines as {"line": ...}. */
static void print_json(const struct lopts *o, char *line)
{
	char *bracket = strstr(line, " ["), *colon = strstr(line, ": bpf_trace_printk: ");
	char *dash = NULL, *p;
	struct json j;

	json_init(&j, stdout, o->pretty);
	json_begin_object(&j);
	if (bracket && colon && bracket < colon) {
		*bracket = 0;
		dash = strrchr(line, '-');
	}
	if (!dash) {
		if (bracket)
			*bracket = ' ';
		json_kv_string(&j, "line", line);
	} else {
		*dash = 0;
		*colon = 0;
		for (p = line; *p == ' '; p++)
			;
		json_kv_string(&j, "comm", p);
		json_kv_int(&j, "pid", strtol(dash + 1, NULL, 10));
		json_kv_int(&j, "cpu", strtol(bracket + 2, NULL, 10));
		p = strchr(bracket + 2, ']');
		json_kv_string(&j, "time", p ? p + 1 + strspn(p + 1, " ") : "");
		json_kv_string(&j, "msg", colon + 20);
	}
	json_end_object(&j);
	json_finish(&j);
}

/* Print the complete lines of buf[0..*len), keep a partial last one; returns lines. */
static unsigned long long emit(const struct lopts *o, char *buf, size_t *len,
			       unsigned long long budget)
{
	unsigned long long n = 0;
	size_t start = 0;
	char *nl;

	while (n < budget && (nl = memchr(buf + start, '\n', *len - start))) {
		*nl = 0;
		if (o->json)
			print_json(o, buf + start);
		else
			printf("%s\n", buf + start);
		start = (size_t)(nl - buf) + 1;
		n++;
	}
	memmove(buf, buf + start, *len - start);
	*len -= start;
	fflush(stdout);
	return n;
}

int cmd_trace_log(int argc, char **argv)
{
	static char buf[1 << 16];
	struct lopts o = { 0 };
	unsigned long long lines = 0;
	char path[4096];
	size_t have = 0;
	off_t pos = 0;
	double t0;
	int ret, fd, tries = 0;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (bpfrt_trace_pipe_path(path, sizeof(path)) < 0)
		return cli_error("trace-log: $BPFRT_FS is too long");
	if (o.clear) {
		fd = open(path, O_WRONLY | O_TRUNC);
		if (fd < 0 && errno != ENOENT)
			return cli_error("trace-log: cannot clear %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 0;
	}
	cli_stop_on(0);
	t0 = cli_now();
	fd = -1;
	while (!cli_stop && (!o.count || lines < o.count) &&
	       (!o.duration || cli_now() - t0 < o.duration)) {
		struct stat st;
		ssize_t n;

		if (fd < 0) {
			/* the pipe appears with the first bpf_trace_printk(): what it holds
			 * then is new, so only a pipe there from the start is skipped */
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0 && !o.all && !tries)
				pos = lseek(fd, 0, SEEK_END);
			tries++;
		}
		if (fd >= 0 && !fstat(fd, &st) && st.st_size < pos)
			pos = 0, have = 0; /* emptied: start again */
		n = fd >= 0 ? pread(fd, buf + have, sizeof(buf) - have, pos) : 0;
		if (n > 0) {
			pos += n;
			have += (size_t)n;
			if (have == sizeof(buf)) /* a line longer than the buffer: cut it */
				buf[have - 1] = '\n';
			lines += emit(&o, buf, &have, o.count ? o.count - lines : ~0ull);
			continue;
		}
		usleep(POLL_US);
	}
	cli_stop_off();
	if (fd >= 0)
		close(fd);
	return 0;
}
