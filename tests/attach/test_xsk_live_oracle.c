/* test_xsk_live_oracle.c - XDP redirects into an xskmap in live attach (issue #15 item
 * 3), against the kernel.  In a network namespace of its own (veth pairs v0-v1, v2-v3)
 * three real AF_XDP sockets (copy mode, UMEM, fill and RX rings): A bound to v0 queue 0,
 * B bound to v2 queue 0, C not bound.  An XDP program on v0 redirects every frame to one
 * xskmap slot; three frames are sent into v1 per slot.
 *
 * The kernel (generic XDP link): A's RX ring gets the three frames; B (another
 * interface: xsk_rcv_check() -EINVAL) and C (not bound: -ENXIO) fail the redirect, which
 * generic XDP turns into XDP_DROP.  bpfrt (bpfrt_prog_attach_iface): cannot write a
 * socket's RX ring (the UMEM's address never leaves the kernel: src/util/xsk_diag.c), so
 * its link counts what the kernel's hook would have done: A's frames as redirects, B's
 * and C's as drops - checked here, with A's ring staying empty as the known difference.
 * A kernel without AF_XDP socket diagnostics (CONFIG_XDP_SOCKETS_DIAG unset, as this
 * host's) tells user space only whether a socket is bound, not where: then B counts as
 * a redirect (checked as that known difference).
 * A test run reading the slot's struct bpf_xdp_sock queue_id through a lookup gives the
 * kernel's answer on both sides.  Skips without root, ip(8), a network namespace or
 * AF_XDP.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"
#include "util/util.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP(d, fd) I(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), I(0, 0, 0, 0, 0)

#define NFRAMES 64
#define FRAME 2048
#define RING 64
#define BRT_XDP 37

static int ifx[4];

struct xsk {
	int fd;
	void *umem;
	void *rx_map;
	size_t rx_len;
	volatile uint32_t *rx_prod;
};

/* An AF_XDP socket with UMEM, fill (half full), completion and RX rings, bound to
 * ifindex/queue (ifindex 0: not bound); 0 or -errno. */
static int xsk_open(struct xsk *x, int ifindex, unsigned queue)
{
	struct xdp_umem_reg reg;
	struct xdp_mmap_offsets off;
	struct sockaddr_xdp sxdp;
	socklen_t ol = sizeof(off);
	int ring = RING;
	void *fill;
	size_t fill_len;

	memset(x, 0, sizeof(*x));
	x->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		return -errno;
	x->umem = mmap(NULL, NFRAMES * FRAME, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->umem == MAP_FAILED)
		return -errno;
	memset(&reg, 0, sizeof(reg));
	reg.addr = (uint64_t)(uintptr_t)x->umem;
	reg.len = NFRAMES * FRAME;
	reg.chunk_size = FRAME;
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring, sizeof(ring)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring)) ||
	    getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &ol))
		return -errno;
	fill_len = off.fr.desc + RING * sizeof(uint64_t);
	fill = mmap(NULL, fill_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, x->fd,
		    XDP_UMEM_PGOFF_FILL_RING);
	x->rx_len = off.rx.desc + RING * sizeof(struct xdp_desc);
	x->rx_map = mmap(NULL, x->rx_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			 x->fd, XDP_PGOFF_RX_RING);
	if (fill == MAP_FAILED || x->rx_map == MAP_FAILED)
		return -errno;
	for (unsigned i = 0; i < RING / 2; i++)
		((uint64_t *)((char *)fill + off.fr.desc))[i] = (uint64_t)i * FRAME;
	__atomic_store_n((uint32_t *)((char *)fill + off.fr.producer), RING / 2,
			 __ATOMIC_RELEASE);
	x->rx_prod = (volatile uint32_t *)((char *)x->rx_map + off.rx.producer);
	if (!ifindex)
		return 0;
	memset(&sxdp, 0, sizeof(sxdp));
	sxdp.sxdp_family = AF_XDP;
	sxdp.sxdp_flags = XDP_COPY;
	sxdp.sxdp_ifindex = (uint32_t)ifindex;
	sxdp.sxdp_queue_id = queue;
	return bind(x->fd, (struct sockaddr *)&sxdp, sizeof(sxdp)) ? -errno : 0;
}

static uint32_t rx_count(const struct xsk *x)
{
	return __atomic_load_n(x->rx_prod, __ATOMIC_ACQUIRE);
}

static void send_frames(int tx, unsigned n)
{
	uint8_t f[64];
	struct sockaddr_ll to;

	memset(f, 0, sizeof(f));
	memcpy(f, "\x02\0\0\0\0\xb0\x02\0\0\0\0\xb1\x88\xb5", 14);
	memset(&to, 0, sizeof(to));
	to.sll_family = AF_PACKET;
	to.sll_ifindex = ifx[1];
	for (unsigned i = 0; i < n; i++) {
		f[20] = (uint8_t)i;
		sendto(tx, f, sizeof(f), 0, (struct sockaddr *)&to, sizeof(to));
	}
}

/* redirect_map(xskmap, slot, XDP_PASS) */
static int load_redirect(sys_fn sys, int map, int slot)
{
	struct bpf_insn p[] = { LD_MAP(1, map), MOV_K(2, slot), MOV_K(3, XDP_PASS),
				CALL(BPF_FUNC_redirect_map), EXIT() };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (uint64_t)(uintptr_t)p;
	a.insn_cnt = sizeof(p) / sizeof(p[0]);
	a.license = (uint64_t)(uintptr_t)"GPL";
	return sys(BPF_PROG_LOAD, &a, sizeof(a));
}

/* A test run of: lookup(xskmap, slot) ? ((struct bpf_xdp_sock *)r0)->queue_id : 99 */
static int lookup_queue(sys_fn sys, int map, int slot)
{
	struct bpf_insn p[] = {
		I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, slot), LD_MAP(1, map),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		CALL(BPF_FUNC_map_lookup_elem), I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2, 0),
		I(BPF_LDX | BPF_MEM | BPF_W, 0, 0, 0, 0), EXIT(), MOV_K(0, 99), EXIT(),
	};
	uint8_t pkt[64] = { 0 };
	union bpf_attr a;
	int fd, r;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (uint64_t)(uintptr_t)p;
	a.insn_cnt = sizeof(p) / sizeof(p[0]);
	a.license = (uint64_t)(uintptr_t)"GPL";
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		return -1000 - errno;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	r = sys(BPF_PROG_TEST_RUN, &a, sizeof(a));
	close(fd);
	return r ? -2000 - errno : (int)a.test.retval;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int sh(const char *cmd)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s >/dev/null 2>&1", cmd);
	return system(buf);
}

int main(void)
{
	static const char *const setup[] = {
		"ip link set lo up",
		"ip link add v0 type veth peer name v1",
		"ip link add v2 type veth peer name v3",
		"ip link set v0 up", "ip link set v1 up", "ip link set v2 up", "ip link set v3 up",
	};
	static const char *const names[] = { "A (v0 queue 0)", "B (v2 queue 0)", "C (not bound)" };
	struct xsk x[3];
	int tx, err, diag;

	if (geteuid() != 0)
		T_SKIP("not root: no network namespace, no XDP attachment");
	if (access("/usr/sbin/ip", X_OK) && access("/sbin/ip", X_OK) && access("/bin/ip", X_OK))
		T_SKIP("no ip(8) to build the interfaces");
	if (unshare(CLONE_NEWNET))
		T_SKIP("unshare(CLONE_NEWNET) failed");
	/* no IPv6 router solicitations on the links, only the test's frames (a kernel
	 * without IPv6 has none anyway) */
	(void)sh("sysctl -qw net.ipv6.conf.default.disable_ipv6=1");
	(void)sh("sysctl -qw net.ipv6.conf.all.disable_ipv6=1");
	for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++)
		if (sh(setup[i]))
			T_SKIP("could not set up the interfaces (%s)", setup[i]);
	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "v%d", i);
		ifx[i] = (int)if_nametoindex(name);
	}
	tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (tx < 0)
		T_SKIP("no packet socket");
	err = xsk_open(&x[0], ifx[0], 0);
	if (!err)
		err = xsk_open(&x[1], ifx[2], 0);
	if (!err)
		err = xsk_open(&x[2], 0, 0);
	if (err)
		T_SKIP("AF_XDP sockets: %s", strerror(-err));
	{
		uint64_t cookie = 0;
		socklen_t cl = sizeof(cookie);
		uint32_t ifindex, queue;

		getsockopt(x[0].fd, SOL_SOCKET, SO_COOKIE, &cookie, &cl);
		diag = brt_xsk_binding(cookie, &ifindex, &queue) != -EOPNOTSUPP;
		if (!diag)
			printf("no AF_XDP sock_diag: B's binding is unknown to bpfrt\n");
	}
	for (int side = 0; side < 2; side++) {
		sys_fn sys = side ? bpfrt_bpf : kernel_bpf;
		int map = create_map(sys, BPF_MAP_TYPE_XSKMAP, 4, 4, 3, 0, 0);

		for (uint32_t k = 0; k < 3; k++) {
			uint32_t v = (uint32_t)x[k].fd;

			T_CASE("xskmap update");
			T_EQ_INT(0, elem(sys, BPF_MAP_UPDATE_ELEM, map, &k, &v, 0));
		}
		for (int k = 0; k < 3; k++) {
			char what[96];

			snprintf(what, sizeof(what), "%s: lookup's queue_id, %s", side ? "bpfrt" : "kernel",
				 names[k]);
			T_CASE(what);
			T_EQ_INT(0, lookup_queue(sys, map, k));
		}
		for (int k = 0; k < 3; k++) {
			struct bpfrt_pkt_link_stats st;
			uint32_t before = rx_count(&x[0]);
			int prog = load_redirect(sys, map, k), link;
			char what[96], err_msg[256];
			long until;

			snprintf(what, sizeof(what), "%s: redirect to %s", side ? "bpfrt" : "kernel",
				 names[k]);
			T_CASE(what);
			T_ASSERT(prog >= 0);
			if (!side) {
				union bpf_attr a;

				memset(&a, 0, sizeof(a));
				a.link_create.prog_fd = (uint32_t)prog;
				a.link_create.target_ifindex = (uint32_t)ifx[0];
				a.link_create.attach_type = BRT_XDP;
				a.link_create.flags = XDP_FLAGS_SKB_MODE;
				link = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
			} else {
				BPFRT_OPTS(bpfrt_pkt_link_opts, o, .direction = BPFRT_PKT_DIR_INGRESS);

				link = bpfrt_prog_attach_iface(prog, "v0", &o, err_msg, sizeof(err_msg));
			}
			T_ASSERT(link >= 0);
			send_frames(tx, 3);
			until = now_ms() + (side || !k ? 3000 : 300);
			memset(&st, 0, sizeof(st));
			while (now_ms() < until) {
				if (!side && !k && rx_count(&x[0]) - before >= 3)
					break;
				if (side && !bpfrt_pkt_link_stats(link, &st) &&
				    st.actions[BPFRT_PKT_REDIRECT] + st.actions[BPFRT_PKT_DROP] >= 3)
					break;
				usleep(10000);
			}
			usleep(100000);
			if (!side) {
				/* the kernel: A's ring gets them, B and C fail the redirect */
				T_EQ_INT(k ? 0 : 3, rx_count(&x[0]) - before);
			} else {
				T_EQ_INT(0, bpfrt_pkt_link_stats(link, &st));
				/* B: known difference without sock_diag (file comment) */
				int fails = k == 2 || (k == 1 && diag);

				T_EQ_U64(fails ? 0 : 3, st.actions[BPFRT_PKT_REDIRECT]);
				T_EQ_U64(fails ? 3 : 0, st.actions[BPFRT_PKT_DROP]);
				T_EQ_INT(0, rx_count(&x[0]) - before); /* known difference */
				bpfrt_link_detach(link);
			}
			printf("%s: A's RX ring %+d\n", what, (int)(rx_count(&x[0]) - before));
			close(link);
			close(prog);
		}
		close(map);
	}
	return t_done();
}
