/* test_redirect_live_oracle.c - redirects acted on in live attach (issue #15 item 3,
 * attach/link.c): in a network namespace of its own with two veth pairs (v0-v1, v2-v3), a
 * program attached to v0 redirects what arrives there to v2 - XDP through a devmap entry
 * (bpf_redirect_map) or bpf_redirect(), tc through bpf_redirect() to egress - and the
 * frames sent into v1 must come out of v3 as the program left them (it writes one byte);
 * XDP_TX (the MAC addresses swapped) sends them back out of v0, to v1.
 * The same programs attached by the kernel (BPF_LINK_CREATE: generic XDP, tcx ingress)
 * give the kernel's transcript: which frames arrived, and their bytes; a devmap slot that
 * is empty (XDP_PASS) sends nothing.  Devmap entries with a program of their own
 * (BPF_XDP_DEVMAP): one that writes bytes 15-18 (a mark, its egress_ifindex,
 * ingress_ifindex and rx_queue_index), trims 4 bytes off the tail and passes - the frame
 * arrives on v3 as both programs left it; one that drops and one that answers XDP_TX
 * (invalid there) - nothing arrives.  bpfrt's attachment is bpfrt_prog_attach_iface()
 * on the same interface, direction ingress.  Skips without root, ip(8) or a network
 * namespace.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "netns.h"
#include "transcript.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, i) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_W(d, s, o) I(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define ST_B(d, o, i) I(BPF_ST | BPF_MEM | BPF_B, d, 0, o, i)
#define JGT_X(d, s, o) I(BPF_JMP | BPF_JGT | BPF_X, d, s, o, 0)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP(d, fd) I(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), I(0, 0, 0, 0, 0)

#define ETHERTYPE 0x88b5 /* IEEE local experimental: nothing else on the links uses it */
#define FRAME_LEN 64
#define WAIT_MS 3000     /* how long a frame that should arrive may take (a loaded machine) */
#define QUIET_MS 300     /* how long to listen for one that should not */
#define BRT_TCX_INGRESS 46
#define BRT_XDP 37

static int ifx[4]; /* ifindex of v0..v3 */

/* the program's start: r6 = ctx; the byte after the Ethernet header becomes 0x77 (data and
 * data_end at XDP offsets 0/4, __sk_buff 76/80) */
static size_t write_byte(struct bpf_insn *p, int xdp)
{
	size_t n = 0;

	p[n++] = MOV_X(6, 1);
	p[n++] = LDX_W(2, 6, xdp ? 0 : 76);
	p[n++] = LDX_W(3, 6, xdp ? 4 : 80);
	p[n++] = MOV_X(4, 2);
	p[n++] = ADD_K(4, 15);
	p[n++] = JGT_X(4, 3, 1);
	p[n++] = ST_B(2, 14, 0x77);
	return n;
}

struct pcase {
	const char *name;
	int xdp;        /* XDP, else tc */
	int via_map;    /* bpf_redirect_map(devmap, 0, XDP_PASS), else bpf_redirect(v2) */
	int slot;       /* devmap slot 0: 0 empty, 1 v2, 2-4 v2 with a devmap program
			 * (2 writes, trims and passes, 3 drops, 4 XDP_TX) */
	int arrives;    /* what the kernel does (the transcripts check both sides agree) */
	int tx;         /* XDP_TX after swapping the MAC addresses: back out of v0, to v1 */
};

static const struct pcase pcases[] = {
	{ "xdp devmap -> v2", 1, 1, 1, 1 },
	{ "xdp devmap empty slot (XDP_PASS)", 1, 1, 0, 0 },
	{ "xdp bpf_redirect(v2)", 1, 0, 0, 1 },
	{ "tc bpf_redirect(v2) egress", 0, 0, 0, 1 },
	{ "xdp XDP_TX", 1, 0, 0, 1, 1 },
	{ "xdp devmap -> v2, entry program writes, trims, passes", 1, 1, 2, 1 },
	{ "xdp devmap -> v2, entry program drops", 1, 1, 3, 0 },
	{ "xdp devmap -> v2, entry program XDP_TX (invalid: dropped)", 1, 1, 4, 0 },
};

static int load(sys_fn sys, const struct pcase *c, int map_fd)
{
	struct bpf_insn p[32];
	union bpf_attr a;
	size_t n = write_byte(p, c->xdp);
	int fd;

	if (c->tx) { /* swap destination and source MAC (r2: data, checked above) */
		p[n - 2].off = 11; /* the length check's jump now goes to XDP_PASS */
		p[n++] = LDX_W(4, 2, 0);
		p[n++] = I(BPF_LDX | BPF_MEM | BPF_H, 5, 2, 4, 0);
		p[n++] = LDX_W(7, 2, 6);
		p[n++] = I(BPF_LDX | BPF_MEM | BPF_H, 8, 2, 10, 0);
		p[n++] = I(BPF_STX | BPF_MEM | BPF_W, 2, 7, 0, 0);
		p[n++] = I(BPF_STX | BPF_MEM | BPF_H, 2, 8, 4, 0);
		p[n++] = I(BPF_STX | BPF_MEM | BPF_W, 2, 4, 6, 0);
		p[n++] = I(BPF_STX | BPF_MEM | BPF_H, 2, 5, 10, 0);
		p[n++] = MOV_K(0, XDP_TX);
		p[n++] = EXIT();
		p[n++] = MOV_K(0, XDP_PASS);
	} else if (c->via_map) {
		struct bpf_insn m[2] = { LD_MAP(1, map_fd) };

		p[n++] = m[0];
		p[n++] = m[1];
		p[n++] = MOV_K(2, 0);
		p[n++] = MOV_K(3, XDP_PASS);
		p[n++] = CALL(BPF_FUNC_redirect_map);
	} else {
		p[n++] = MOV_K(1, ifx[2]);
		p[n++] = MOV_K(2, 0);
		p[n++] = CALL(BPF_FUNC_redirect);
	}
	p[n++] = EXIT();
	memset(&a, 0, sizeof(a));
	a.prog_type = c->xdp ? BPF_PROG_TYPE_XDP : BPF_PROG_TYPE_SCHED_CLS;
	a.insns = (uint64_t)(uintptr_t)p;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* an XDP program for a devmap entry (BPF_XDP_DEVMAP): slot 2 writes 0x55 and the low
 * bytes of egress_ifindex, ingress_ifindex and rx_queue_index (xdp_md offsets 20, 12,
 * 16) into bytes 15-18, trims 4 bytes off the tail and passes; 3 drops; 4 XDP_TX */
static int load_devmap_prog(sys_fn sys, int slot)
{
	struct bpf_insn p[32];
	union bpf_attr a;
	size_t n = 0;
	int fd;

	if (slot == 2) {
		p[n++] = MOV_X(6, 1);
		p[n++] = LDX_W(2, 6, 0);
		p[n++] = LDX_W(3, 6, 4);
		p[n++] = MOV_X(4, 2);
		p[n++] = ADD_K(4, 19);
		p[n++] = JGT_X(4, 3, 10);
		p[n++] = ST_B(2, 15, 0x55);
		p[n++] = LDX_W(5, 6, 20);
		p[n++] = I(BPF_STX | BPF_MEM | BPF_B, 2, 5, 16, 0);
		p[n++] = LDX_W(5, 6, 12);
		p[n++] = I(BPF_STX | BPF_MEM | BPF_B, 2, 5, 17, 0);
		p[n++] = LDX_W(5, 6, 16);
		p[n++] = I(BPF_STX | BPF_MEM | BPF_B, 2, 5, 18, 0);
		p[n++] = MOV_X(1, 6);
		p[n++] = MOV_K(2, -4);
		p[n++] = CALL(BPF_FUNC_xdp_adjust_tail);
		p[n++] = MOV_K(0, XDP_PASS);
	} else {
		p[n++] = MOV_K(0, slot == 3 ? XDP_DROP : XDP_TX);
	}
	p[n++] = EXIT();
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.expected_attach_type = BPF_XDP_DEVMAP;
	a.insns = (uint64_t)(uintptr_t)p;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

static int packet_socket(int ifindex, int proto)
{
	struct sockaddr_ll sll;
	struct timeval tv = { 0, 50 * 1000 };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons((uint16_t)proto));

	if (fd < 0)
		return -1;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons((uint16_t)proto);
	sll.sll_ifindex = ifindex;
	if (proto && bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* send frame number seq into v1 and wait for it on v3: "arrived <bytes hash>" or "none" */
static void one_frame(struct transcript *t, int tx, int rx, unsigned seq, int expect)
{
	uint8_t f[FRAME_LEN], got[2048];
	struct sockaddr_ll to;
	long until;
	int found = 0;

	memset(f, 0, sizeof(f));
	memcpy(f, "\x02\0\0\0\0\xb0\x02\0\0\0\0\xb1", 12);
	f[12] = ETHERTYPE >> 8;
	f[13] = ETHERTYPE & 0xff;
	snprintf((char *)f + 20, 24, "bpfrt-redirect-%u", seq);
	f[14] = 0x11;
	memset(&to, 0, sizeof(to));
	to.sll_family = AF_PACKET;
	to.sll_ifindex = ifx[1];
	if (sendto(tx, f, sizeof(f), 0, (struct sockaddr *)&to, sizeof(to)) != sizeof(f)) {
		say(t, "frame %u: send %d\n", seq, -errno);
		return;
	}
	until = now_ms() + (expect ? WAIT_MS : QUIET_MS);
	while (!found && now_ms() < until) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t r = recvfrom(rx, got, sizeof(got), 0, (struct sockaddr *)&from, &fl);

		/* v1 also shows the frame this test sends out of it */
		if (r >= 44 && !memcmp(got + 20, f + 20, 24) &&
		    from.sll_pkttype != PACKET_OUTGOING)
			found = (int)r;
	}
	if (!found) {
		say(t, "frame %u: none\n", seq);
		return;
	}
	/* the bytes as they left v2: the programs' writes, nothing else changed */
	say(t, "frame %u: arrived %d bytes, byte 14 %#x, 15-18 %02x%02x%02x%02x, dst %02x src "
	    "%02x, rest %s\n", seq, found, got[14], got[15], got[16], got[17], got[18], got[5],
	    got[11], !memcmp(got + 12, f + 12, 2) && !memcmp(got + 19, f + 19, (size_t)found - 19)
			     ? "equal" : "changed");
}

static int attach_kernel(int prog_fd, int xdp)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = (uint32_t)prog_fd;
	a.link_create.target_ifindex = (uint32_t)ifx[0];
	a.link_create.attach_type = xdp ? BRT_XDP : BRT_TCX_INGRESS;
	a.link_create.flags = xdp ? XDP_FLAGS_SKB_MODE : 0;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

static void run(sys_fn sys, struct transcript *t, int tx, int rx, int rx1)
{
	int kernel = sys == kernel_bpf;
	unsigned seq = kernel ? 100 : 200;

	for (size_t i = 0; i < sizeof(pcases) / sizeof(pcases[0]); i++) {
		const struct pcase *c = &pcases[i];
		int map = -1, dprog = -1, prog, link;
		char err[256];

		say(t, "%s:\n", c->name);
		if (c->via_map) {
			uint32_t key = 0, val[2] = { (uint32_t)ifx[2], 0 };

			map = create_map(sys, BPF_MAP_TYPE_DEVMAP, 4, 8, 4, 0, 0);
			if (c->slot >= 2) {
				dprog = load_devmap_prog(sys, c->slot);
				if (dprog < 0)
					say(t, "devmap program load %d\n", dprog);
				val[1] = (uint32_t)dprog;
			}
			if (c->slot)
				say(t, "update %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, map, &key, val, 0));
		}
		prog = load(sys, c, map);
		if (prog < 0) {
			say(t, "load %d\n", prog);
			goto out;
		}
		if (kernel) {
			link = attach_kernel(prog, c->xdp);
		} else {
			BPFRT_OPTS(bpfrt_pkt_link_opts, o, .direction = BPFRT_PKT_DIR_INGRESS);

			link = bpfrt_prog_attach_iface(prog, "v0", &o, err, sizeof(err));
			if (link < 0)
				fprintf(stderr, "attach: %s\n", err);
		}
		if (link < 0) {
			say(t, "attach %d\n", link);
			close(prog);
			goto out;
		}
		for (int k = 0; k < 3; k++)
			one_frame(t, tx, c->tx ? rx1 : rx, seq++, c->arrives);
		if (!kernel) /* at once: a closed link's thread may run a little longer */
			bpfrt_link_detach(link);
		close(link);
		close(prog);
out:
		if (dprog >= 0)
			close(dprog);
		if (map >= 0)
			close(map);
	}
}

/* cpumap: v0's XDP program redirects to the entry of CPU 1, whose BPF_XDP_CPUMAP program
 * counts the packet under bpf_get_smp_processor_id() in an array and drops it; after 3
 * frames the counts must be the kernel's (3 on CPU 1: the packets ran there). */
static void cpumap_case(sys_fn sys, struct transcript *t, int tx, unsigned seq)
{
	int kernel = sys == kernel_bpf;
	int counts = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 2, 0, 0);
	int cmap = create_map(sys, BPF_MAP_TYPE_CPUMAP, 4, 8, 2, 0, 0);
	struct bpf_insn cprog[] = {
		CALL(BPF_FUNC_get_smp_processor_id),
		I(BPF_STX | BPF_MEM | BPF_W, 10, 0, -4, 0),
		LD_MAP(1, counts),
		MOV_X(2, 10),
		ADD_K(2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2, 0),
		MOV_K(1, 1),
		I(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD),
		MOV_K(0, XDP_DROP),
		EXIT(),
	};
	struct bpf_insn mprog[] = {
		LD_MAP(1, cmap), MOV_K(2, 1), MOV_K(3, XDP_PASS),
		CALL(BPF_FUNC_redirect_map), EXIT(),
	};
	union bpf_attr a;
	uint32_t key = 1, val[2];
	uint64_t c0 = 0, c1 = 0;
	int cfd, mfd, link;
	char err[256];
	long until;

	say(t, "cpumap entry of CPU 1 with a program:\n");
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.expected_attach_type = BPF_XDP_CPUMAP;
	a.insns = (uint64_t)(uintptr_t)cprog;
	a.insn_cnt = sizeof(cprog) / sizeof(cprog[0]);
	a.license = (uint64_t)(uintptr_t)"GPL";
	cfd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	val[0] = 192;
	val[1] = (uint32_t)cfd;
	say(t, "update %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, cmap, &key, val, 0));
	a.expected_attach_type = 0;
	a.insns = (uint64_t)(uintptr_t)mprog;
	a.insn_cnt = sizeof(mprog) / sizeof(mprog[0]);
	mfd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (mfd < 0) {
		say(t, "load %d\n", -errno);
		goto out;
	}
	if (kernel) {
		link = attach_kernel(mfd, 1);
	} else {
		BPFRT_OPTS(bpfrt_pkt_link_opts, o, .direction = BPFRT_PKT_DIR_INGRESS);

		link = bpfrt_prog_attach_iface(mfd, "v0", &o, err, sizeof(err));
	}
	if (link < 0) {
		say(t, "attach %d\n", link);
		goto out;
	}
	for (int k = 0; k < 3; k++) {
		uint8_t f[FRAME_LEN];
		struct sockaddr_ll to;

		memset(f, 0, sizeof(f));
		memcpy(f, "\x02\0\0\0\0\xb0\x02\0\0\0\0\xb1", 12);
		f[12] = ETHERTYPE >> 8;
		f[13] = ETHERTYPE & 0xff;
		snprintf((char *)f + 20, 24, "bpfrt-cpumap-%u", seq + (unsigned)k);
		memset(&to, 0, sizeof(to));
		to.sll_family = AF_PACKET;
		to.sll_ifindex = ifx[1];
		sendto(tx, f, sizeof(f), 0, (struct sockaddr *)&to, sizeof(to));
	}
	until = now_ms() + WAIT_MS;
	do {
		key = 0;
		elem(sys, BPF_MAP_LOOKUP_ELEM, counts, &key, &c0, 0);
		key = 1;
		elem(sys, BPF_MAP_LOOKUP_ELEM, counts, &key, &c1, 0);
		if (c0 + c1 >= 3)
			break;
		usleep(10 * 1000);
	} while (now_ms() < until);
	say(t, "counts: CPU 0 %llu, CPU 1 %llu\n", (unsigned long long)c0,
	    (unsigned long long)c1);
	if (!kernel)
		bpfrt_link_detach(link);
	close(link);
out:
	if (mfd >= 0)
		close(mfd);
	if (cfd >= 0)
		close(cfd);
	close(cmap);
	close(counts);
}

int main(void)
{
	static const char *const setup[] = {
		"ip link set lo up",
		"ip link add v0 type veth peer name v1",
		"ip link add v2 type veth peer name v3",
		"ip link set v0 up", "ip link set v1 up", "ip link set v2 up", "ip link set v3 up",
	};
	static struct transcript k, b;
	int tx, rx, rx1;

	netns_enter(setup, sizeof(setup) / sizeof(setup[0]));
	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "v%d", i);
		ifx[i] = (int)if_nametoindex(name);
	}
	tx = packet_socket(0, 0);
	rx = packet_socket(ifx[3], ETHERTYPE);
	rx1 = packet_socket(ifx[1], ETHERTYPE);
	if (tx < 0 || rx < 0 || rx1 < 0)
		T_SKIP("no packet sockets");
	run(kernel_bpf, &k, tx, rx, rx1);
	run(bpfrt_bpf, &b, tx, rx, rx1);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		cpumap_case(kernel_bpf, &k, tx, 300);
		cpumap_case(bpfrt_bpf, &b, tx, 400);
	} else {
		printf("cpumap case skipped: one CPU\n");
	}
	/* the frames' numbers differ by side (100s, 200s): compare without them */
	for (char *p = k.text; (p = strstr(p, "frame 1")); p += 7)
		p[6] = 'N', p[7] = 'N', p[8] = 'N';
	for (char *p = b.text; (p = strstr(p, "frame 2")); p += 7)
		p[6] = 'N', p[7] = 'N', p[8] = 'N';
	compare_transcripts(&k, &b);
	T_CASE("frames arrived");
	T_CONTAINS("arrived 64 bytes, byte 14 0x77, 15-18 00000000, dst b0 src b1, rest equal",
		   b.text);
	T_CONTAINS("arrived 64 bytes, byte 14 0x77, 15-18 00000000, dst b1 src b0, rest equal",
		   b.text);
	{
		char want[128];

		/* the devmap entry's program: its mark, v2's and v0's ifindex, queue 0 */
		snprintf(want, sizeof(want), "arrived 60 bytes, byte 14 0x77, 15-18 55%02x%02x00, "
			 "dst b0 src b1, rest equal", ifx[2] & 0xff, ifx[0] & 0xff);
		T_CONTAINS(want, b.text);
	}
	if (getenv("REDIRECT_SHOW"))
		printf("kernel:\n%sbpfrt:\n%s", k.text, b.text);
	close(tx);
	close(rx);
	close(rx1);
	return t_done();
}
