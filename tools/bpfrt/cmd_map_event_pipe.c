/* cmd_map_event_pipe.c - "bpfrt map event_pipe MAP": bpftool's map event_pipe.  Puts a
 * perf output ring per CPU (or one, `cpu N index M`) into a pinned
 * BPF_MAP_TYPE_PERF_EVENT_ARRAY and prints what programs send with bpf_perf_event_output()
 * - a header and a hex dump per sample, or one JSON object per line (-j) - and the
 * samples lost to full rings, until Ctrl-C, -n samples or -t seconds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/perf_event.h>

#include "cli.h"

struct pipe_state {
	int json;
	int index;                 /* the map index of a single ring, or -1: index = cpu */
	unsigned long long seen;
	unsigned long long max;    /* stop after this many samples (0: never) */
	unsigned long long lost;
};

static void on_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	struct pipe_state *st = ctx;
	const unsigned char *p = data;
	int index = st->index >= 0 ? st->index : cpu;
	struct timespec ts;

	if (st->max && st->seen >= st->max)
		return;
	st->seen++;
	if (st->json) {
		printf("{\"type\":%d,\"cpu\":%d,\"index\":%d,\"data\":[", PERF_RECORD_SAMPLE, cpu,
		       index);
		for (uint32_t i = 0; i < size; i++)
			printf("%s\"0x%02x\"", i ? "," : "", p[i]);
		printf("]}\n");
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("== @%lld.%09ld CPU: %d index: %d =====\n", (long long)ts.tv_sec, ts.tv_nsec, cpu,
	       index);
	for (uint32_t i = 0; i < size; i++)
		printf("%02x%s", p[i], i + 1 == size || i % 16 == 15 ? "\n" : " ");
	if (!size)
		printf("\n");
}

static void on_lost(void *ctx, int cpu, uint64_t cnt)
{
	struct pipe_state *st = ctx;

	st->lost += cnt;
	if (st->json)
		printf("{\"lost\":{\"cpu\":%d,\"count\":%llu}}\n", cpu, (unsigned long long)cnt);
	else
		printf("lost %llu events\n", (unsigned long long)cnt);
}

static int parse_num(const char *s, double *out, const char *what)
{
	char *end;

	*out = s ? strtod(s, &end) : -1;
	if (!s || *end || end == s || *out < 0)
		return cli_error("map event_pipe: %s: '%s' is not a number", what, s ? s : "");
	return 0;
}

int cli_map_event_pipe(int map_fd, const char *path, int argc, char **argv, int i, int json)
{
	struct pipe_state st = { .json = json, .index = -1 };
	struct bpfrt_perf_buffer_opts po = { .sz = sizeof(po) };
	double cpu = -1, idx = -1, timeout = 0, max = 0, pages = 16, deadline = 0;
	struct bpfrt_perf_buffer *pb;
	int cpus[1], keys[1], err = 0;

	for (; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "cpu"))
			err = parse_num(v, &cpu, "cpu");
		else if (!strcmp(a, "index"))
			err = parse_num(v, &idx, "index");
		else if (!strcmp(a, "-n") || !strcmp(a, "--count"))
			err = parse_num(v, &max, "-n");
		else if (!strcmp(a, "-t") || !strcmp(a, "--timeout"))
			err = parse_num(v, &timeout, "-t");
		else if (!strcmp(a, "--pages"))
			err = parse_num(v, &pages, "--pages");
		else
			return cli_error("map event_pipe: unexpected argument '%s'", a);
		if (err)
			return err;
		i++;
	}
	if ((cpu >= 0) != (idx >= 0))
		return cli_error("map event_pipe: give both 'cpu N' and 'index M', or neither");
	if (cpu >= 0) {
		cpus[0] = (int)cpu;
		keys[0] = (int)idx;
		st.index = keys[0];
		po.cpu_cnt = 1;
		po.cpus = cpus;
		po.map_keys = keys;
	}
	st.max = (unsigned long long)max;
	pb = bpfrt_perf_buffer_new(map_fd, (size_t)pages, on_sample, on_lost, &st, &po);
	if (!pb)
		return cli_error("map event_pipe: %s: %s", path,
				 errno == EINVAL ? "not a perf event array, or bad cpu/pages" :
						   strerror(errno));
	cli_stop_on(1);
	if (timeout > 0)
		deadline = cli_now() + timeout;
	while (!cli_stop && (!st.max || st.seen < st.max)) {
		double left = deadline ? deadline - cli_now() : 0.25;
		int n;

		if (deadline && left <= 0)
			break;
		n = bpfrt_perf_buffer_poll(pb, (int)(left * 1000) + 1);
		if (n < 0 && n != -EINTR) {
			err = cli_error("map event_pipe: poll: %s", strerror(-n));
			break;
		}
		fflush(stdout);
	}
	fflush(stdout);
	fprintf(stderr, "%llu samples, %llu lost\n", st.seen, st.lost);
	bpfrt_perf_buffer_free(pb);
	return err;
}
