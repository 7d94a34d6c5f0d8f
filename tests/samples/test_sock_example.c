/* test_sock_example.c - samples/sock_example on live traffic: its eBPF object (built by
 * clang) is loaded with libbpfrt and attached to lo, real UDP (open and closed port), TCP
 * and ICMP echo packets are sent to 127.0.0.1, and the per-protocol counters in its array
 * map must grow by at least what was sent.  Also: the attach API's errors (an interface
 * that does not exist, a program type that does not run on packets).  Needs root
 * (AF_PACKET, raw ICMP) and clang; prints "skipped: <reason>" otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "traffic.h"

#define OBJ BPFRT_BINARY_DIR "/samples/sock_example/sock_example.bpf.o"
#define WAIT_S 30 /* a loaded CI machine may be slow to run the capture thread */

struct proto_count {
	unsigned long long packets;
	unsigned long long bytes;
};

static unsigned long long count(int map_fd, unsigned int proto)
{
	struct proto_count c;

	return bpfrt_map_lookup_elem(map_fd, &proto, &c) ? 0 : c.packets;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait until each protocol's counter reached its target (the capture thread runs behind
 * the sender: the ring hands blocks over every 50 ms). */
static int wait_counts(int map_fd, const unsigned long long *want, const unsigned int *protos,
		       int n)
{
	double deadline = now() + WAIT_S;

	for (;;) {
		int ok = 1;

		for (int i = 0; i < n; i++)
			ok &= count(map_fd, protos[i]) >= want[i];
		if (ok)
			return 1;
		if (now() > deadline)
			return 0;
		usleep(20000);
	}
}

static void test_traffic(struct bpfrt_object *obj)
{
	static const unsigned int protos[] = { IPPROTO_UDP, IPPROTO_TCP, IPPROTO_ICMP };
	struct bpfrt_program *prog = bpfrt_object_find_program_by_name(obj, "count_protocols");
	struct bpfrt_map *map = bpfrt_object_find_map_by_name(obj, "proto_counts");
	unsigned long long before[3], want[3];
	struct bpfrt_pkt_link_stats st;
	struct bpfrt_link_stats ls;
	int udp, closed, tcp, icmp, map_fd, link;
	char err[256];

	T_CASE("sock_example on lo");
	T_ASSERT(prog && map);
	if (!prog || !map)
		return;
	map_fd = bpfrt_map__fd(map);
	link = bpfrt_prog_attach_iface(bpfrt_program_fd(prog), "lo", NULL, err, sizeof(err));
	T_ASSERT(link >= 0);
	if (link < 0) {
		printf("attach: %s\n", err);
		return;
	}
	for (int i = 0; i < 3; i++)
		before[i] = count(map_fd, protos[i]);
	udp = tr_udp(20, 1);
	closed = tr_udp(10, 0);
	tcp = tr_tcp(5);
	icmp = tr_icmp(10);
	printf("sent: udp %d, udp to a closed port %d, tcp >= %d packets, icmp echo %d\n", udp,
	       closed, tcp, icmp);
	T_ASSERT(udp == 20 && closed == 10 && tcp == 15 && icmp == 10);
	want[0] = before[0] + (unsigned)(udp + closed);
	want[1] = before[1] + (unsigned)tcp;
	want[2] = before[2] + (unsigned)icmp;
	T_ASSERT(wait_counts(map_fd, want, protos, 3));
	for (int i = 0; i < 3; i++)
		printf("proto %u: %llu -> %llu (at least %llu expected)\n", protos[i], before[i],
		       count(map_fd, protos[i]), want[i]);
	T_EQ_INT(0, bpfrt_pkt_link_stats(link, &st));
	T_EQ_INT(0, bpfrt_link_stats(link, &ls));
	printf("link: %llu packets, %llu bytes, kernel drops %llu\n",
	       (unsigned long long)st.packets, (unsigned long long)st.bytes,
	       (unsigned long long)st.kernel_drops);
	/* the filter returns 0: every packet is a socket filter's drop */
	T_ASSERT(st.packets >= want[0] - before[0] + want[1] - before[1] + want[2] - before[2]);
	T_EQ_U64(st.packets, st.actions[BPFRT_PKT_DROP]);
	/* the generic counters of the same link fd, read a moment later */
	T_ASSERT(ls.events >= st.packets);
	T_EQ_U64(0, ls.nonzero);
	T_EQ_INT(0, bpfrt_link_detach(link));
	T_EQ_INT(-EINVAL, bpfrt_pkt_link_stats(link, &st));
	close(link);

	/* detached: counters stand still */
	for (int i = 0; i < 3; i++)
		before[i] = count(map_fd, protos[i]);
	tr_udp(5, 1);
	usleep(200000);
	T_EQ_U64(before[0], count(map_fd, IPPROTO_UDP));
}

static void test_errors(struct bpfrt_object *obj)
{
	static const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpfrt_program *prog = bpfrt_object_find_program_by_name(obj, "count_protocols");
	char err[256] = "";
	int fd;

	T_CASE("no such interface");
	T_EQ_INT(-ENODEV, bpfrt_prog_attach_iface(bpfrt_program_fd(prog), "nosuchif0", NULL,
						  err, sizeof(err)));
	T_CONTAINS("iface 'nosuchif0': no such interface", err);

	T_CASE("program type that does not run on packets");
	fd = bpfrt_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "raw", "GPL", ret0, 2, NULL);
	T_ASSERT(fd >= 0);
	T_EQ_INT(-EINVAL, bpfrt_prog_attach_iface(fd, "lo", NULL, err, sizeof(err)));
	T_CONTAINS("does not run on packets", err);
	close(fd);

	T_CASE("not a program fd");
	T_EQ_INT(-EBADF, bpfrt_prog_attach_iface(12345, "lo", NULL, err, sizeof(err)));

	T_CASE("stats of a closed fd and of a link of another kind");
	{
		struct bpfrt_pkt_link_stats st;
		int pfd[2];

		T_EQ_INT(-EBADF, bpfrt_pkt_link_stats(12345, &st));
		T_ASSERT(pipe(pfd) == 0);
		T_EQ_INT(-EINVAL, bpfrt_pkt_link_stats(pfd[0], &st));
		close(pfd[0]);
		close(pfd[1]);
	}
}

int main(void)
{
	struct bpfrt_object *obj;

	if (geteuid() != 0)
		T_SKIP("needs root (AF_PACKET socket, raw ICMP socket)");
	if (access(OBJ, R_OK))
		T_SKIP("%s not built (no clang for -target bpf)", OBJ);
	obj = bpfrt_object_open_file(OBJ, NULL);
	T_ASSERT(obj);
	if (!obj)
		return t_done();
	T_EQ_INT(0, bpfrt_object_load(obj));
	test_errors(obj);
	test_traffic(obj);
	bpfrt_object_close(obj);
	return t_done();
}
