/* pkt_prog.c - a loaded program (a bpf() program fd) run on captured packets with the
 * context its type expects, as the kernel runs it at its hook: a socket filter sees a
 * struct __sk_buff and returns the bytes to keep; a tc classifier/action sees a
 * struct __sk_buff with data/data_end and returns a TC_ACT_* code; an XDP program sees a
 * struct xdp_md and returns an XDP_* action.  Packets start at the link layer (Ethernet),
 * like a packet socket's filter or a tc/XDP hook on an Ethernet device.
 *
 * data/data_end are 32-bit context fields; as in BPF_PROG_TEST_RUN, the packet is copied
 * into a buffer mapped below 4 GiB so the fields hold real addresses.  tc and XDP programs
 * may write the packet: the copy is what they change, and what the caller gets back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/if_ether.h>
#include <linux/pkt_cls.h>

#include "api/api.h"
#include "attach/attach.h"
#include "elf/elf.h"
#include "util/util.h"
#include "vm/vm.h"

#define HEADROOM 256               /* XDP_PACKET_HEADROOM */
#define BUF_DATA (256u * 1024)     /* largest packet a run takes (TPACKET snap length) */
#define MAX_REGIONS 16
#define XDP_FRAME_END (4096 - 320) /* a page less skb_shared_info, from the buffer start */

struct brt_pkt_prog {
	struct brt_prog *prog;     /* referenced */
	uint32_t type;
	int checked;               /* the checked engine runs it: regions needed */
	uint8_t *buf;              /* tc/XDP: HEADROOM + BUF_DATA bytes below 4 GiB */
	size_t buf_len;
	struct brt_region regs[MAX_REGIONS];
	size_t nr_map_regs;        /* first entries of regs: the program's map values */
	struct __sk_buff skb;
	struct xdp_md md;
	uint32_t egress_ifindex;   /* XDP: what md.egress_ifindex holds */
	struct brt_run_pkt pkt;    /* tc/XDP: what the packet helpers move */
};

int brt_pkt_prog_open(int prog_fd, struct brt_pkt_prog **out, char *err, size_t errlen)
{
	struct brt_pkt_prog *p;
	struct brt_prog *prog;
	int ret = brt_prog_from_fd(prog_fd, &prog);

	if (ret) {
		snprintf(err, errlen, "program fd %d: %s", prog_fd, strerror(-ret));
		return ret;
	}
	if (!brt_prog_type_has(prog->type, BRT_PT_PKT_ATTACH)) {
		snprintf(err, errlen, "program type %s does not run on packets (socket filter, "
			 "tc classifier/action or XDP)", brt_prog_type_name(prog->type));
		brt_obj_put(&prog->obj);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		brt_obj_put(&prog->obj);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->prog = prog;
	p->type = prog->type;
	p->checked = brt_vm_engine(prog->vm) == BPFRT_ENGINE_CHECKED;
	if (brt_prog_type_has(p->type, BRT_PT_PKT_READ)) { /* direct packet access */
		p->buf_len = HEADROOM + BUF_DATA;
		p->buf = mmap(NULL, p->buf_len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (p->buf == MAP_FAILED) {
			p->buf = NULL;
			brt_pkt_prog_close(p);
			snprintf(err, errlen, "no packet buffer below 4 GiB: %s", strerror(errno));
			return -ENOMEM;
		}
	}
	p->nr_map_regs = brt_prog_map_regions(prog, p->regs, MAX_REGIONS - 6);
	*out = p;
	return 0;
}

uint32_t brt_pkt_prog_type(const struct brt_pkt_prog *p)
{
	return p->type;
}

struct brt_prog *brt_pkt_prog_obj(const struct brt_pkt_prog *p)
{
	return p->prog;
}

void brt_pkt_prog_close(struct brt_pkt_prog *p)
{
	if (!p)
		return;
	if (p->buf)
		munmap(p->buf, p->buf_len);
	brt_obj_put(&p->prog->obj);
	free(p);
}

static void add_region(struct brt_pkt_prog *p, size_t *nr, const void *start, size_t len,
		       int writable)
{
	p->regs[(*nr)++] = (struct brt_region){ (uint64_t)(uintptr_t)start, len, writable };
}

/* The action a verdict stands for, as the kernel's hook would take it. */
static enum bpfrt_pkt_action action_of(uint32_t type, uint32_t v)
{
	switch (type) {
	case BPF_PROG_TYPE_SOCKET_FILTER:
		return v ? BPFRT_PKT_PASS : BPFRT_PKT_DROP;
	case BPF_PROG_TYPE_XDP:
		switch (v) {
		case XDP_PASS:
			return BPFRT_PKT_PASS;
		case XDP_DROP:
			return BPFRT_PKT_DROP;
		case XDP_TX:
			return BPFRT_PKT_TX;
		case XDP_REDIRECT:
			return BPFRT_PKT_REDIRECT;
		default: /* XDP_ABORTED, and unknown actions the kernel treats alike */
			return BPFRT_PKT_ABORTED;
		}
	default:
		switch ((int32_t)v) {
		case TC_ACT_UNSPEC:
		case TC_ACT_OK:
		case TC_ACT_PIPE:
		case TC_ACT_RECLASSIFY:
			return BPFRT_PKT_PASS;
		case TC_ACT_SHOT:
		case TC_ACT_STOLEN:
		case TC_ACT_TRAP:
			return BPFRT_PKT_DROP;
		case TC_ACT_REDIRECT:
			return BPFRT_PKT_REDIRECT;
		default:
			return BPFRT_PKT_ABORTED;
		}
	}
}

int brt_pkt_prog_run(struct brt_pkt_prog *p, const struct brt_pkt *pkt, uint32_t ifindex,
		     uint32_t pkt_type, struct brt_pkt_result *res, char *err, size_t errlen)
{
	struct brt_run_opts o = { .user = &p->prog->pm };
	size_t nr = p->nr_map_regs;
	uint8_t *data = NULL;
	uint64_t r0 = 0;
	int ret;

	res->data = pkt->data;
	res->caplen = pkt->caplen;
	if (p->buf) {
		if (pkt->caplen > BUF_DATA) {
			snprintf(err, errlen, "packet of %u bytes is over %u", pkt->caplen, BUF_DATA);
			return -E2BIG;
		}
		data = p->buf + HEADROOM;
		memcpy(data, pkt->data, pkt->caplen);
		res->data = data;
		/* an XDP frame is a page (less skb_shared_info) unless the packet is longer */
		memset(&p->pkt, 0, sizeof(p->pkt));
		p->pkt.head = p->buf;
		p->pkt.meta = p->pkt.data = p->pkt.mac = data;
		p->pkt.network = data + ETH_HLEN;
		p->pkt.data_end = data + pkt->caplen;
		p->pkt.end = p->buf + p->buf_len;
		if (p->type == BPF_PROG_TYPE_XDP)
			p->pkt.end = p->pkt.data_end > p->buf + XDP_FRAME_END ? p->pkt.data_end
									: p->buf + XDP_FRAME_END;
		p->pkt.prog_type = p->type;
		p->pkt.ctx = p->type == BPF_PROG_TYPE_XDP ? (void *)&p->md : (void *)&p->skb;
		o.pkt = &p->pkt;
	}
	if (brt_prog_type(p->type)->ctx == BRT_CTX_XDP) {
		memset(&p->md, 0, sizeof(p->md));
		p->md.data = (uint32_t)(uintptr_t)data;
		p->md.data_meta = p->md.data;
		p->md.data_end = (uint32_t)(uintptr_t)(data + pkt->caplen);
		p->md.ingress_ifindex = ifindex;
		p->md.egress_ifindex = p->egress_ifindex;
		add_region(p, &nr, &p->md, sizeof(p->md), 0);
		add_region(p, &nr, data, pkt->caplen, 1);
		o.r1 = (uint64_t)(uintptr_t)&p->md;
	} else {
		struct __sk_buff *s = &p->skb;

		memset(s, 0, sizeof(*s));
		s->len = pkt->wirelen;
		s->pkt_type = pkt_type;
		s->ifindex = ifindex;
		s->ingress_ifindex = ifindex;
		s->wire_len = pkt->wirelen;
		if (pkt->caplen >= ETH_HLEN)
			memcpy(&s->protocol, pkt->data + 12, 2);
		add_region(p, &nr, s, sizeof(*s), 0);
		add_region(p, &nr, s->cb, sizeof(s->cb), 1);
		if (data) {
			s->data = (uint32_t)(uintptr_t)data;
			s->data_meta = s->data;
			s->data_end = (uint32_t)(uintptr_t)(data + pkt->caplen);
			add_region(p, &nr, &s->mark, 8, 1); /* mark, priority */
			add_region(p, &nr, &s->tc_index, 8, 1);
			add_region(p, &nr, &s->tstamp, 8, 1);
			add_region(p, &nr, data, pkt->caplen, 1);
		}
		o.r1 = (uint64_t)(uintptr_t)s;
		o.skb_data = data ? data : pkt->data;
		o.skb_len = pkt->caplen;
	}
	if (p->checked) {
		o.regions = p->regs;
		o.nr_regions = nr;
	}
	ret = brt_vm_run_opts(p->prog->vm, &o, &r0, err, errlen);
	if (ret)
		return ret;
	if (p->buf) { /* helpers may have moved the packet */
		res->data = p->pkt.data;
		res->caplen = (uint32_t)(p->pkt.data_end - p->pkt.data);
	}
	res->verdict = (uint32_t)r0;
	res->action = action_of(p->type, res->verdict);
	res->redirect_ifindex = 0;
	res->redirect_cpu = 0;
	res->redirect_prog_id = 0;
	res->redirect_xsk = 0;
	res->redirect_xsk_dev = 0;
	if (p->buf && res->action == BPFRT_PKT_REDIRECT && p->type == BPF_PROG_TYPE_XDP) {
		res->redirect_cpu = p->pkt.redirect_cpu;
		res->redirect_prog_id = p->pkt.redirect_prog_id;
		res->redirect_xsk = p->pkt.redirect_xsk;
		res->redirect_xsk_dev = p->pkt.redirect_xsk_dev;
	}
	/* bpf_redirect() and bpf_redirect_map() record their target in the run's packet
	 * (zeroed above for each run); tc's BPF_F_INGRESS target is another interface's
	 * receive path, which user space cannot enter, and bpf_redirect_neigh()'s needs the
	 * kernel's neighbour table (bpf_redirect_peer() to a veth's own side: its egress
	 * reaches the peer's receive path, as the kernel's) */
	if (p->buf && res->action == BPFRT_PKT_REDIRECT &&
	    (p->type == BPF_PROG_TYPE_XDP || !(p->pkt.redirect_flags &
					       (BPF_F_INGRESS | BRT_REDIRECT_NEIGH))))
		res->redirect_ifindex = p->pkt.redirect_ifindex;
	if (p->buf && res->action == BPFRT_PKT_TX) /* XDP_TX: back out where it came in */
		res->redirect_ifindex = ifindex;
	if (p->type == BPF_PROG_TYPE_SOCKET_FILTER && res->verdict < res->caplen)
		res->caplen = res->verdict; /* bytes to keep */
	return 0;
}

void brt_pkt_prog_set_egress(struct brt_pkt_prog *p, uint32_t ifindex)
{
	p->egress_ifindex = ifindex;
}

const char *brt_pkt_verdict_name(uint32_t type, uint32_t v)
{
	static const char *const xdp[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX",
					   "XDP_REDIRECT" };
	static const char *const tc[] = { "TC_ACT_OK", "TC_ACT_RECLASSIFY", "TC_ACT_SHOT",
					  "TC_ACT_PIPE", "TC_ACT_STOLEN", "TC_ACT_QUEUED",
					  "TC_ACT_REPEAT", "TC_ACT_REDIRECT", "TC_ACT_TRAP" };

	if (type == BPF_PROG_TYPE_XDP && v < BRT_ARRAY_SIZE(xdp))
		return xdp[v];
	if ((type == BPF_PROG_TYPE_SCHED_CLS || type == BPF_PROG_TYPE_SCHED_ACT)) {
		if ((int32_t)v == TC_ACT_UNSPEC)
			return "TC_ACT_UNSPEC";
		if (v < BRT_ARRAY_SIZE(tc))
			return tc[v];
	}
	return NULL;
}

const char *bpfrt_pkt_action_name(enum bpfrt_pkt_action a)
{
	static const char *const names[] = { "pass", "drop", "tx", "redirect", "aborted" };

	return (unsigned)a < BRT_ARRAY_SIZE(names) ? names[a] : "?";
}
