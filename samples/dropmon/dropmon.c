/* dropmon.c - user side of the seed's dropmon on libbpfrt: load dropmon.bpf.o, attach it
 * to the kernel's skb:kfree_skb tracepoint (perf_event_open on every CPU, records run
 * through the program in this process) and every second print the drop locations that
 * grew most, resolved through /proc/kallsyms, with the drop reason named from the
 * tracepoint's format.  Needs root (perf_event_open, kallsyms addresses).
 *
 *   dropmon [-n ROUNDS] [-t TOP] [-j] [-o OBJECT]
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfrt.h>

#define TP "skb:kfree_skb"
#define MAX_ROWS 4096

struct drop_key {
	unsigned long long location;
	unsigned int reason;
	unsigned int pad;
};

struct row {
	struct drop_key key;
	unsigned long long total; /* count in the map */
	unsigned long long delta; /* since the last round */
};

struct sym {
	unsigned long long addr;
	char name[64];
};

static volatile sig_atomic_t stop;
static struct sym *syms;
static size_t nsyms;
static char *reasons[512];

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void default_object(char *path, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 1);
	char *slash;

	if (n <= 0) {
		snprintf(path, len, "dropmon.bpf.o");
		return;
	}
	path[n] = '\0';
	slash = strrchr(path, '/');
	snprintf(slash + 1, len - (size_t)(slash + 1 - path), "dropmon.bpf.o");
}

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of /proc/kallsyms, sorted (all zero without the right to see them). */
static void load_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], type, name[256];
	unsigned long long addr;
	size_t cap = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr ||
		    (type != 't' && type != 'T'))
			continue;
		if (nsyms == cap) {
			struct sym *s = realloc(syms, (cap = cap ? cap * 2 : 65536) * sizeof(*s));

			if (!s)
				break;
			syms = s;
		}
		syms[nsyms].addr = addr;
		snprintf(syms[nsyms].name, sizeof(syms[nsyms].name), "%.63s", name);
		nsyms++;
	}
	if (f)
		fclose(f);
	qsort(syms, nsyms, sizeof(*syms), by_addr);
}

static void resolve(unsigned long long addr, char *out, size_t len)
{
	size_t lo = 0, hi = nsyms;

	while (lo < hi) { /* first symbol above addr */
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		snprintf(out, len, "0x%llx", addr);
	else
		snprintf(out, len, "%s+0x%llx", syms[lo - 1].name, addr - syms[lo - 1].addr);
}

/* Reason names from the format's print fmt: __print_symbolic(REC->reason, { 2, "X" }...) */
static void load_reasons(void)
{
	FILE *f = fopen("/sys/kernel/tracing/events/skb/kfree_skb/format", "re");
	static char buf[65536];
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	char *p;

	if (f)
		fclose(f);
	buf[n] = 0;
	p = strstr(buf, "__print_symbolic");
	while (p && (p = strchr(p, '{'))) {
		unsigned v;
		char name[64];

		if (sscanf(p, "{ %u, \"%63[^\"]\" }", &v, name) == 2 && v < 512 && !reasons[v])
			reasons[v] = strdup(name);
		p++;
	}
}

/* Does the running kernel's record put location and reason where dropmon.bpf.c reads? */
static int check_layout(void)
{
	struct bpfrt_tp_field f[32];
	int n = bpfrt_tracepoint_fields(TP, f, 32, NULL, NULL), ok = 0;

	if (n < 0)
		return n;
	for (int i = 0; i < n && i < 32; i++) {
		if (!strcmp(f[i].name, "location") && f[i].offset == 16 && f[i].size == 8)
			ok |= 1;
		if (!strcmp(f[i].name, "reason") && f[i].offset == 36 && f[i].size == 4)
			ok |= 2;
	}
	if (ok != 3) {
		fprintf(stderr, "dropmon: this kernel's " TP " record differs from "
			"dropmon.bpf.c's (location at 16, reason at 36): see `bpfrt trace --fields "
			TP "`\n");
		return -EINVAL;
	}
	return 0;
}

static int by_delta(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->delta != y->delta)
		return x->delta < y->delta ? 1 : -1;
	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

/* Read the map into rows, computing each key's growth since the previous round. */
static size_t read_rows(int map_fd, struct row *rows, const struct row *prev, size_t nprev)
{
	struct drop_key key, next;
	size_t n = 0;
	int first = 1;

	while (n < MAX_ROWS && !bpfrt_map_get_next_key(map_fd, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		rows[n].key = key;
		if (bpfrt_map_lookup_elem(map_fd, &key, &rows[n].total))
			continue;
		rows[n].delta = rows[n].total;
		for (size_t i = 0; i < nprev; i++)
			if (!memcmp(&prev[i].key, &key, sizeof(key)))
				rows[n].delta = rows[n].total - prev[i].total;
		n++;
	}
	return n;
}

static void print_round(const struct row *rows, size_t n, int top, int json,
			unsigned long long all, unsigned long long lost)
{
	unsigned long long sum = 0;
	char where[128];

	for (size_t i = 0; i < n; i++)
		sum += rows[i].delta;
	if (json)
		printf("{\"drops\":%llu,\"total\":%llu,\"lost\":%llu,\"top\":[", sum, all, lost);
	else
		printf("%llu drops in the last second (%llu in all, %llu lost)\n", sum, all, lost);
	for (int i = 0; i < top && (size_t)i < n && rows[i].delta; i++) {
		const char *r = rows[i].key.reason < 512 ? reasons[rows[i].key.reason] : NULL;

		resolve(rows[i].key.location, where, sizeof(where));
		if (json)
			printf("%s{\"location\":\"%s\",\"reason\":\"%s\",\"reason_id\":%u,"
			       "\"count\":%llu,\"total\":%llu}", i ? "," : "", where, r ? r : "",
			       rows[i].key.reason, rows[i].delta, rows[i].total);
		else
			printf("  %8llu  %-40s %s\n", rows[i].delta, where, r ? r : "?");
	}
	printf(json ? "]}\n" : "");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static struct row prev[MAX_ROWS], now[MAX_ROWS], sorted[MAX_ROWS];
	const char *obj_path = NULL;
	char path[PATH_MAX];
	struct bpfrt_object *obj;
	struct bpfrt_program *prog;
	struct bpfrt_map *map;
	long rounds = -1, top = 10;
	int c, json = 0, link;
	size_t nprev = 0;

	while ((c = getopt(argc, argv, "n:t:jo:h")) != -1) {
		switch (c) {
		case 'n':
			rounds = strtol(optarg, NULL, 10);
			break;
		case 't':
			top = strtol(optarg, NULL, 10);
			break;
		case 'j':
			json = 1;
			break;
		case 'o':
			obj_path = optarg;
			break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"Usage: dropmon [-n ROUNDS] [-t TOP] [-j] [-o OBJECT]\n"
				"Count the packets the kernel drops (skb:kfree_skb) per location and\n"
				"reason with the program of OBJECT (default: dropmon.bpf.o next to this\n"
				"program); every second print the TOP (10) locations that grew, resolved\n"
				"through /proc/kallsyms; -j: one JSON object per second.\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!obj_path) {
		default_object(path, sizeof(path));
		obj_path = path;
	}
	if (check_layout())
		return 1;
	obj = bpfrt_object_open_file(obj_path, NULL);
	if (!obj || bpfrt_object_load(obj)) {
		fprintf(stderr, "dropmon: %s: %s\n", obj_path,
			obj ? bpfrt_object_log(obj) : strerror(errno));
		bpfrt_object_close(obj);
		return 1;
	}
	prog = bpfrt_object_find_program_by_name(obj, "count_drops");
	map = bpfrt_object_find_map_by_name(obj, "drops");
	link = prog && map ? bpfrt_tracepoint_attach(bpfrt_program_fd(prog), TP, NULL) : -EINVAL;
	if (link < 0) {
		fprintf(stderr, "dropmon: cannot attach to " TP ": %s\n", strerror(-link));
		bpfrt_object_close(obj);
		return 1;
	}
	load_kallsyms();
	load_reasons();
	if (!json)
		printf("attached to " TP ": counting drops per location\n");
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop && rounds--) {
		struct bpfrt_link_stats st = { 0 };
		size_t n;

		sleep(1);
		bpfrt_link_stats(link, &st);
		n = read_rows(bpfrt_map__fd(map), now, prev, nprev);
		memcpy(sorted, now, n * sizeof(now[0]));
		qsort(sorted, n, sizeof(sorted[0]), by_delta);
		print_round(sorted, n, (int)top, json, st.events, st.lost);
		memcpy(prev, now, n * sizeof(now[0]));
		nprev = n;
	}
	close(link);
	bpfrt_object_close(obj);
	for (size_t i = 0; i < 512; i++)
		free(reasons[i]);
	free(syms);
	return 0;
}
