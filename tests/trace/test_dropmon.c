/* test_dropmon.c - the dropmon sample's eBPF (samples/dropmon/dropmon.bpf.o, built with
 * clang) attached to the kernel's skb:kfree_skb: UDP datagrams sent to a closed port of
 * 127.0.0.1 are dropped by the kernel, and the per-(location, reason) counts must grow by
 * at least the number sent, under reason NO_SOCKET, at a location kallsyms names in the
 * UDP code.  Retries (other traffic, a slow link thread); skips without root, tracefs or
 * clang.
 */
#include <stdio.h>

#include "trace_test.h"
#include "udp_drops.h"

#define OBJ BPFRT_BINARY_DIR "/samples/dropmon/dropmon.bpf.o"
#define SENT 300

struct drop_key {
	unsigned long long location;
	unsigned int reason;
	unsigned int pad;
};

/* The id of drop reason name in the tracepoint's print fmt, or -1. */
static int reason_id(const char *name)
{
	static char buf[65536];
	char pat[96], *p;
	FILE *f = fopen("/sys/kernel/tracing/events/skb/kfree_skb/format", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	snprintf(pat, sizeof(pat), ", \"%s\" }", name);
	p = strstr(buf, pat);
	while (p && p > buf && p[-1] != '{')
		p--;
	return p && p > buf ? atoi(p) : -1;
}

/* Drops counted under reason, and the location with most of them. */
static unsigned long long count_reason(int map_fd, unsigned reason, unsigned long long *loc)
{
	struct drop_key key, next;
	unsigned long long sum = 0, best = 0, v;
	int first = 1;

	while (!bpfrt_map_get_next_key(map_fd, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		if (key.reason != reason || bpfrt_map_lookup_elem(map_fd, &key, &v))
			continue;
		sum += v;
		if (v > best) {
			best = v;
			*loc = key.location;
		}
	}
	return sum;
}

/* The kallsyms text symbol at or below addr (empty when hidden). */
static void symbol_of(unsigned long long addr, char *out, size_t len)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	unsigned long long a, best = 0;
	char line[512], type, name[256];

	out[0] = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && a && a <= addr &&
		    a > best && (type == 't' || type == 'T')) {
			best = a;
			snprintf(out, len, "%s", name);
		}
	if (f)
		fclose(f);
}

int main(void)
{
	struct bpfrt_object *obj;
	struct bpfrt_program *prog;
	struct bpfrt_map *map;
	unsigned long long before, after = 0, loc = 0;
	char sym[256];
	int link, reason, ok = 0;
	uint16_t port;

	tt_private_fs("dropmon");
	if (geteuid() != 0)
		T_SKIP("needs root for perf_event_open on skb:kfree_skb");
	if (bpfrt_tracepoint_fields("skb:kfree_skb", NULL, 0, NULL, NULL) < 0)
		T_SKIP("no tracefs or no skb:kfree_skb tracepoint");
	if (access(OBJ, R_OK))
		T_SKIP("%s not built (no clang)", OBJ);
	reason = reason_id("NO_SOCKET");
	if (reason < 0)
		T_SKIP("this kernel's kfree_skb has no NO_SOCKET drop reason");
	obj = bpfrt_object_open_file(OBJ, NULL);
	T_ASSERT(obj != NULL);
	if (!obj)
		return t_done();
	T_EQ_INT(0, bpfrt_object_load(obj));
	prog = bpfrt_object_find_program_by_name(obj, "count_drops");
	map = bpfrt_object_find_map_by_name(obj, "drops");
	T_ASSERT(prog && map);
	T_CASE("attach dropmon to skb:kfree_skb");
	link = bpfrt_tracepoint_attach(bpfrt_program_fd(prog), "skb:kfree_skb", NULL);
	T_ASSERT(link >= 0);
	port = closed_udp_port();
	T_ASSERT(port != 0);
	T_CASE("UDP to a closed port: every datagram counted as a NO_SOCKET drop");
	for (int attempt = 0; attempt < 3 && !ok && link >= 0; attempt++) {
		long sent;

		before = count_reason(bpfrt_map__fd(map), (unsigned)reason, &loc);
		sent = send_udp_drops(port, SENT);
		for (int i = 0; i < 250; i++) { /* up to ~5 s for the link thread */
			after = count_reason(bpfrt_map__fd(map), (unsigned)reason, &loc);
			if (after - before >= (unsigned long long)sent)
				break;
			usleep(20000);
		}
		ok = sent == SENT && after - before >= (unsigned long long)sent;
		printf("attempt %d: sent %ld, NO_SOCKET drops %llu -> %llu\n", attempt, sent, before,
		       after);
	}
	T_ASSERT(ok);
	T_CASE("the location resolves to the UDP receive path");
	symbol_of(loc, sym, sizeof(sym));
	printf("top NO_SOCKET location 0x%llx = %s\n", loc, sym[0] ? sym : "(kallsyms hidden)");
	if (sym[0])
		T_CONTAINS("udp", sym);
	close(link);
	bpfrt_object_close(obj);
	tt_cleanup_fs();
	return t_done();
}
