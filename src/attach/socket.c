/* socket.c - live packets from a network interface through an AF_PACKET socket with a
 * TPACKET_V3 ring: the kernel fills blocks of packets in memory shared with us, we walk a
 * block's packets in place and hand the block back; no copy and no syscall per packet.
 * Only interfaces with Ethernet framing (Ethernet, loopback) are supported, so packets
 * start at the Ethernet header like a DLT_EN10MB capture.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "attach/attach.h"

#define BLOCK_SIZE (1u << 20) /* a multiple of the page size, holds many packets */
#define FRAME_SIZE 2048u      /* only a sizing hint for TPACKET_V3 */
#define RETIRE_MS 50          /* a partly filled block is handed over after this long */

struct brt_live {
	int fd;
	uint8_t *ring;
	size_t ring_len;
	unsigned nr_blocks;
	unsigned block;               /* block being read, or the next one to wait for */
	int open;                     /* block is ours: the kernel handed it over */
	struct tpacket3_hdr *next;    /* next packet in it */
	uint32_t left;                /* packets left in it */
	int linktype;
	int loopback;                 /* sent packets show up twice: skip the outgoing copy */
	unsigned dir;                 /* enum bpfrt_pkt_dir */
	char name[IF_NAMESIZE];
};

static int fail(char *err, size_t errlen, const char *iface, const char *what, int e)
{
	snprintf(err, errlen, "iface '%s': %s: %s", iface, what, strerror(e));
	return -e;
}

/* Link type of the interface as a DLT_* number (1 = Ethernet), or -errno. */
static int iface_linktype(int fd, const char *iface, char *err, size_t errlen)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		return fail(err, errlen, iface, "reading the link type", errno);
	switch (ifr.ifr_hwaddr.sa_family) {
	case ARPHRD_ETHER:
		return 1;
	case ARPHRD_LOOPBACK:
		return 2; /* Ethernet framing too; the caller notes the loopback */
	default:
		snprintf(err, errlen, "iface '%s': link type ARPHRD %u is not supported (Ethernet "
			 "framing only)", iface, ifr.ifr_hwaddr.sa_family);
		return -EOPNOTSUPP;
	}
}

int brt_live_open(const char *iface, unsigned nr_blocks, struct brt_live **out, char *err,
		  size_t errlen)
{
	int version = TPACKET_V3, ret;
	struct tpacket_req3 req;
	struct sockaddr_ll sll;
	struct brt_live *l;
	unsigned ifindex;

	if (strlen(iface) >= IF_NAMESIZE || !(ifindex = if_nametoindex(iface)))
		return fail(err, errlen, iface, "no such interface", ENODEV);
	l = calloc(1, sizeof(*l));
	if (!l)
		return fail(err, errlen, iface, "allocating", ENOMEM);
	snprintf(l->name, sizeof(l->name), "%s", iface);
	l->nr_blocks = nr_blocks ? nr_blocks : 8;
	l->fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (l->fd < 0) {
		ret = fail(err, errlen, iface, "AF_PACKET socket (needs CAP_NET_RAW)", errno);
		goto err_free;
	}
	ret = iface_linktype(l->fd, iface, err, errlen);
	if (ret < 0)
		goto err_close;
	l->loopback = ret == 2;
	l->linktype = 1;
	if (setsockopt(l->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version))) {
		ret = fail(err, errlen, iface, "TPACKET_V3", errno);
		goto err_close;
	}
	memset(&req, 0, sizeof(req));
	req.tp_block_size = BLOCK_SIZE;
	req.tp_block_nr = l->nr_blocks;
	req.tp_frame_size = FRAME_SIZE;
	req.tp_frame_nr = BLOCK_SIZE / FRAME_SIZE * l->nr_blocks;
	req.tp_retire_blk_tov = RETIRE_MS;
	if (setsockopt(l->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		ret = fail(err, errlen, iface, "PACKET_RX_RING", errno);
		goto err_close;
	}
	l->ring_len = (size_t)BLOCK_SIZE * l->nr_blocks;
	l->ring = mmap(NULL, l->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED,
		       l->fd, 0);
	if (l->ring == MAP_FAILED)
		l->ring = mmap(NULL, l->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, l->fd, 0);
	if (l->ring == MAP_FAILED) {
		ret = fail(err, errlen, iface, "mapping the ring", errno);
		goto err_close;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)ifindex;
	if (bind(l->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		ret = fail(err, errlen, iface, "bind", errno);
		goto err_unmap;
	}
	*out = l;
	return 0;
err_unmap:
	munmap(l->ring, l->ring_len);
err_close:
	close(l->fd);
err_free:
	free(l);
	return ret;
}

int brt_live_linktype(const struct brt_live *l)
{
	return l->linktype;
}

static struct tpacket_block_desc *block_at(const struct brt_live *l, unsigned i)
{
	return (struct tpacket_block_desc *)(void *)(l->ring + (size_t)i * BLOCK_SIZE);
}

/* Hand the block being read back to the kernel and move to the next one. */
static void release_block(struct brt_live *l)
{
	struct tpacket_block_desc *b = block_at(l, l->block);

	__atomic_store_n(&b->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	l->block = (l->block + 1) % l->nr_blocks;
	l->open = 0;
}

int brt_live_next(struct brt_live *l, struct brt_pkt *pkt, int timeout_ms, char *err,
		  size_t errlen)
{
	struct tpacket3_hdr *h;

again:
	while (!l->left) {
		struct tpacket_block_desc *b;
		struct pollfd pfd = { .fd = l->fd, .events = POLLIN | POLLERR };
		int ret;

		/* the previous packet lived in this block until now */
		if (l->open)
			release_block(l);
		b = block_at(l, l->block);
		if (__atomic_load_n(&b->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER) {
			l->open = 1;
			l->left = b->hdr.bh1.num_pkts;
			l->next = (struct tpacket3_hdr *)(void *)((uint8_t *)b +
								 b->hdr.bh1.offset_to_first_pkt);
			continue;
		}
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0 && errno != EINTR)
			return fail(err, errlen, l->name, "poll", errno);
		if (ret <= 0)
			return 0;
	}
	h = l->next;
	l->left--;
	l->next = (struct tpacket3_hdr *)(void *)((uint8_t *)h + h->tp_next_offset);
	if (l->loopback || l->dir != BPFRT_PKT_DIR_ANY) {
		const struct sockaddr_ll *sll = (const struct sockaddr_ll *)(const void *)
			((const uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
		int out = sll->sll_pkttype == PACKET_OUTGOING;

		/* loopback: a sent packet comes back received, so either copy stands for it */
		if (l->dir == BPFRT_PKT_DIR_EGRESS ? !out : out)
			goto again;
	}
	pkt->data = (const uint8_t *)h + h->tp_mac;
	pkt->caplen = h->tp_snaplen;
	pkt->wirelen = h->tp_len;
	pkt->ts_sec = h->tp_sec;
	pkt->ts_usec = h->tp_nsec / 1000;
	return 1;
}

int brt_live_set_direction(struct brt_live *l, unsigned dir)
{
	if (dir > BPFRT_PKT_DIR_EGRESS)
		return -EINVAL;
	l->dir = dir;
	return 0;
}

int brt_live_stats(struct brt_live *l, uint64_t *packets, uint64_t *drops)
{
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);

	if (getsockopt(l->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		return -errno;
	*packets = st.tp_packets;
	*drops = st.tp_drops;
	return 0;
}

void brt_live_close(struct brt_live *l)
{
	if (!l)
		return;
	munmap(l->ring, l->ring_len);
	close(l->fd);
	free(l);
}
