/* test_run.c - BPF_PROG_TEST_RUN: run a loaded program on a packet or a context the way
 * the kernel's bpf_prog_test_run_{skb,xdp,raw_tp} do, with their checks and their copy-out
 * rules (data_out/ctx_out truncated with ENOSPC, retval, mean duration).
 *
 * The program sees the kernel's user-visible contexts: struct __sk_buff and struct xdp_md.
 * Their data/data_end fields are 32 bits wide; the kernel's verifier rewrites those loads
 * into 64-bit pointer loads.  bpfrt places the packet below 4 GiB (MAP_32BIT) instead, so
 * the 32-bit field holds the real address and the program needs no rewriting.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "bpfrt.h"
#include "api/api.h"
#include "btf/btf.h"
#include "util/util.h"
#include "maps/maps.h"
#include "vm/vm.h"

/* MAX_BPF_FUNC_ARGS: the most arguments a struct_ops member has */
#define MAX_FUNC_ARGS 12

/* The packet buffers, as the kernel's test runs lay them out (the program can tell: the
 * helpers that move data stop at the buffer's edges).  XDP: one page, the packet at
 * XDP_PACKET_HEADROOM with any metadata right before it, and data_end may grow up to the
 * page less skb_shared_info.  skb: the kernel grows an skb's buffer on demand (up to the
 * device's MTU for bpf_skb_adjust_room()), so a buffer with room for that on both sides
 * stands for it. */
#define SHINFO_SIZE 320            /* SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) */
#define XDP_HEADROOM 256           /* XDP_PACKET_HEADROOM */
#define XDP_FRAME_SIZE 40          /* sizeof(struct xdp_frame): not metadata */
#define XDP_BUF 4096               /* the frame: one page */
#define XDP_PKT_MAX (XDP_BUF - XDP_HEADROOM - SHINFO_SIZE)
#define XDP_META_MAX 255           /* skb_shared_info.meta_len is a u8 */
#define SKB_PKT_MAX (4096 - 64 - SHINFO_SIZE) /* PAGE_SIZE - NET_SKB_PAD - shinfo */
#define SKB_HEADROOM (64 * 1024 + 256)
#define SKB_BUF (SKB_HEADROOM + 128 * 1024)
#define SKB_DEV_MAX_LEN (65536 + ETH_HLEN + 4) /* loopback MTU + hard_header_len + VLAN */
#define RAW_TP_MAX_ARGS 12

struct pkt {
	unsigned char *base; /* mapping (below 4 GiB: 32-bit context fields hold addresses) */
	size_t map_len;
	struct brt_run_pkt p;    /* what the program and the helpers see of it */
	uint32_t len;        /* bytes the caller gave */
};

/* Map map_len bytes and copy the caller's packet to base + at. */
static int pkt_alloc(struct brt_call *call, struct pkt *p, size_t map_len, size_t at)
{
	const union bpf_attr *attr = call->attr;

	p->len = attr->test.data_size_in;
	p->map_len = map_len;
	p->base = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (p->base == MAP_FAILED)
		p->base = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->base == MAP_FAILED)
		return -ENOMEM;
	p->p.head = p->base;
	p->p.end = p->base + map_len;
	p->p.meta = p->p.data = p->base + at;
	p->p.data_end = p->p.data + p->len;
	return call->ua->from(p->p.data, attr->test.data_in, p->len);
}

static void pkt_free(struct pkt *p)
{
	if (p->base && p->base != MAP_FAILED)
		munmap(p->base, p->map_len);
}

/* The kernel's bpf_ctx_init(): ctx_in copied into a zeroed struct of max_size bytes; a
 * larger ctx_in must have a zero tail (E2BIG). */
static int ctx_in(struct brt_call *call, void *ctx, size_t max_size)
{
	const union bpf_attr *attr = call->attr;
	uint32_t size = attr->test.ctx_size_in;
	unsigned char byte;
	int err;

	memset(ctx, 0, max_size);
	if (!attr->test.ctx_in)
		return 0;
	for (uint32_t i = (uint32_t)max_size; i < size; i++) {
		err = call->ua->from(&byte, attr->test.ctx_in + i, 1);
		if (err)
			return err;
		if (byte)
			return -E2BIG;
	}
	return call->ua->from(ctx, attr->test.ctx_in, size < max_size ? size : max_size);
}

/* The kernel's bpf_test_finish(): copy what fits, report the full size, ENOSPC when cut
 * (also without data_out: the size hint alone decides); then bpf_ctx_finish(). */
static int finish(struct brt_call *call, const void *data, uint32_t size, const void *ctx,
		  uint32_t ctx_size, uint32_t retval, uint32_t duration)
{
	union bpf_attr *attr = call->attr;
	uint32_t copy = size;
	int err = 0;

	if (attr->test.data_size_out && copy > attr->test.data_size_out) {
		copy = attr->test.data_size_out;
		err = -ENOSPC;
	}
	if (attr->test.data_out && call->ua->to(attr->test.data_out, data, copy))
		return -EFAULT;
	attr->test.data_size_out = size;
	attr->test.retval = retval;
	attr->test.duration = duration;
	if (BRT_PUT_ATTR(call, test.data_size_out) || BRT_PUT_ATTR(call, test.retval) ||
	    BRT_PUT_ATTR(call, test.duration))
		return -EFAULT;
	if (ctx && attr->test.ctx_out && !err) { /* bpf_ctx_finish() runs after a clean finish */
		copy = ctx_size;
		if (attr->test.ctx_size_out < copy) {
			copy = attr->test.ctx_size_out;
			err = -ENOSPC;
		}
		if (call->ua->to(attr->test.ctx_out, ctx, copy))
			return -EFAULT;
		attr->test.ctx_size_out = ctx_size;
		if (BRT_PUT_ATTR(call, test.ctx_size_out))
			return -EFAULT;
	}
	return err;
}

/* The kernel's test timer stops while the task is rescheduled, so its duration counts only
 * the time the program ran; this thread's CPU time is the user-space equivalent (on a
 * loaded machine wall-clock time would count other tasks too). */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t brt_prog_map_regions(const struct brt_prog *prog, struct brt_region *r, size_t cap)
{
	size_t n = 0;

	for (uint32_t i = 0; i < prog->pm.n && n < cap; i++) {
		const struct brt_map *m = prog->pm.maps[i];

		if (m->type != BPF_MAP_TYPE_ARRAY)
			continue;
		r[n].start = (uint64_t)(uintptr_t)m->data;
		r[n].len = (uint64_t)m->value_stride * m->max_entries;
		r[n].writable = !(m->flags & BPF_F_RDONLY_PROG);
		n++;
	}
	return n;
}

/* o runs with r1 = ctx, and the checked engine may touch regs[0..nr) and after them the
 * program's array maps, up to cap regions in all. */
static void run_on(struct brt_run_opts *o, const struct brt_prog *prog, const void *ctx,
		   struct brt_region *regs, size_t nr, size_t cap)
{
	o->r1 = (uint64_t)(uintptr_t)ctx;
	o->regions = regs;
	o->nr_regions = nr + brt_prog_map_regions(prog, regs + nr, cap - nr);
}

/* Run repeat times; returns 0 with the last r0 and the mean duration, or the run's errno. */
static int run_repeat(const struct brt_call *call, struct brt_prog *prog,
		      struct brt_run_opts *o, struct brt_region *pkt_region, uint32_t repeat,
		      uint32_t *retval, uint32_t *duration)
{
	char err_msg[256];
	uint64_t r0 = 0, t0;
	int err = 0;

	if (!repeat)
		repeat = 1;
	o->user = &prog->pm;
	o->run_budget = call->run_budget; /* each repetition is a run with the whole budget */
	o->run_budget_ns = call->run_budget_ns;
	t0 = now_ns();
	for (uint32_t i = 0; i < repeat && !err; i++) {
		/* the kernel runs every repetition on the same packet: the last one's helpers
		 * may have moved it */
		if (o->pkt && pkt_region) {
			pkt_region->start = (uint64_t)(uintptr_t)o->pkt->meta;
			pkt_region->len = (uint64_t)(o->pkt->data_end - o->pkt->meta);
			o->skb_data = o->pkt->data;
			o->skb_len = (size_t)(o->pkt->data_end - o->pkt->data);
		}
		err = brt_vm_run_opts(prog->vm, o, &r0, err_msg, sizeof(err_msg));
	}
	if (err) {
		brt_print(BPFRT_WARN, "bpfrt: test run: %s\n", err_msg);
		return err;
	}
	*retval = (uint32_t)r0;
	*duration = (uint32_t)((now_ns() - t0) / repeat);
	return 0;
}

/* The kernel's convert___skb_to_skb(): only these fields may be set in ctx_in. */
static int skb_ctx_ok(const struct __sk_buff *s)
{
	static const struct {
		uint16_t off;
		uint16_t len;
	} allowed[] = {
#define F(f) { offsetof(struct __sk_buff, f), sizeof(((struct __sk_buff *)0)->f) }
		F(mark), F(priority), F(ingress_ifindex), F(ifindex), F(cb), F(tstamp),
		F(wire_len), F(gso_segs), F(gso_size), F(hwtstamp),
#undef F
	};
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < sizeof(*s); i++) {
		int ok = 0;

		for (size_t j = 0; j < sizeof(allowed) / sizeof(allowed[0]); j++)
			ok |= i >= allowed[j].off && i < allowed[j].off + allowed[j].len;
		if (!ok && p[i])
			return 0;
	}
	if (s->ifindex > 1 || s->ingress_ifindex > 1)
		return 0;
	return 1;
}

/* eth_type_trans()'s pkt_type on the loopback device, whose address and broadcast
 * address are both 00:00:00:00:00:00 (so ff:ff:ff:ff:ff:ff counts as multicast). */
static uint32_t eth_pkt_type(const unsigned char *dst)
{
	static const unsigned char zero[ETH_ALEN];

	if (!memcmp(dst, zero, ETH_ALEN))
		return PACKET_HOST;
	return (dst[0] & 1) ? PACKET_MULTICAST : PACKET_OTHERHOST;
}

/* eth_type_trans()'s protocol (network byte order): the EtherType, or for an 802.3 length
 * ETH_P_802_3 (raw IPX, 0xffff after the header) or ETH_P_802_2. */
static uint16_t eth_type_trans_proto(const unsigned char *l2, uint32_t len)
{
	uint16_t proto;

	memcpy(&proto, l2 + 12, 2);
	if (ntohs(proto) >= ETH_P_802_3_MIN)
		return proto;
	if (len >= ETH_HLEN + 2 && l2[ETH_HLEN] == 0xff && l2[ETH_HLEN + 1] == 0xff)
		return htons(ETH_P_802_3);
	return htons(ETH_P_802_2);
}

/* The socket the kernel's skb test run gives the skb (bpf_prog_test_run_skb(): sk_alloc()
 * of AF_UNSPEC, sock_init_data() with no struct socket), which programs reach through
 * __sk_buff.sk: closed, of type and protocol 0, no receive queue, its family and addresses
 * those of the packet's IPv4 or IPv6 header (after the link-layer header) when it is whole.
 * l3 points at the network header, len bytes of it. */
static void dummy_sock(struct brt_sock *s, uint16_t proto, const unsigned char *l3, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->sk.state = BPF_TCP_CLOSE;
	s->sk.rx_queue_mapping = -1;
	s->refcounted = 1;
	if (proto == htons(ETH_P_IP)) {
		s->sk.family = AF_INET;
		if (len >= 20) {
			memcpy(&s->sk.src_ip4, l3 + 12, 4);
			memcpy(&s->sk.dst_ip4, l3 + 16, 4);
		}
	} else if (proto == htons(ETH_P_IPV6)) {
		s->sk.family = AF_INET6;
		if (len >= 40) {
			memcpy(s->sk.src_ip6, l3 + 8, 16);
			memcpy(s->sk.dst_ip6, l3 + 24, 16);
		}
	}
}

static int run_skb(struct brt_call *call, struct brt_prog *prog)
{
	union bpf_attr *attr = call->attr;
	int is_l2 = brt_prog_type(prog->type)->run == BRT_RUN_SKB_L2;
	struct __sk_buff skb, in;
	struct brt_sock dsk;
	struct brt_run_opts o = { 0 };
	struct brt_region regs[16];
	uint32_t retval = 0, duration = 0, wire;
	struct pkt p = { 0 };
	unsigned char *l2, *out;
	size_t nr = 0, pkt_reg;
	int err;

	if (attr->test.flags || attr->test.cpu || attr->test.batch_size)
		return -EINVAL;
	if (attr->test.data_size_in < ETH_HLEN || attr->test.data_size_in > SKB_PKT_MAX)
		return -EINVAL;
	err = ctx_in(call, &in, sizeof(in));
	if (err)
		return err;
	if (!skb_ctx_ok(&in))
		return -EINVAL;
	err = pkt_alloc(call, &p, SKB_BUF, SKB_HEADROOM);
	if (err)
		goto out;
	/* eth_type_trans() pulled the link-layer header; tc programs get it pushed back */
	l2 = p.p.data;
	p.p.mac = l2;
	p.p.network = l2 + ETH_HLEN;
	if (!is_l2)
		p.p.meta = p.p.data = l2 + ETH_HLEN;
	p.p.prog_type = prog->type;
	p.p.max_len = SKB_DEV_MAX_LEN;
	p.p.ctx = &skb;
	p.p.has_sk = 1; /* the kernel's run gives the skb a dummy socket */
	p.p.test_run = 1;
	wire = in.wire_len ? in.wire_len : (uint32_t)(p.p.data_end - p.p.data);
	err = -EINVAL;
	if (in.wire_len && in.wire_len < (uint32_t)(p.p.data_end - p.p.data))
		goto out;
	skb = in;
	skb.len = (uint32_t)(p.p.data_end - p.p.data);
	skb.protocol = eth_type_trans_proto(l2, (uint32_t)(p.p.data_end - l2));
	skb.pkt_type = eth_pkt_type(l2);
	skb.ifindex = 1;
	skb.ingress_ifindex = in.ingress_ifindex;
	skb.wire_len = wire;
	skb.data = (uint32_t)(uintptr_t)p.p.data;
	skb.data_meta = skb.data;
	skb.data_end = (uint32_t)(uintptr_t)p.p.data_end;
	dummy_sock(&dsk, (uint16_t)skb.protocol, l2 + ETH_HLEN,
		   (size_t)(p.p.data_end - (l2 + ETH_HLEN)));
	skb.sk = &dsk.sk;
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&skb, sizeof(skb), 0 };
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&dsk, sizeof(dsk), 0 };
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&skb.mark, 8, 1 };
	/* the other fields some type may write (the verifier decides which): priority for
	 * cgroup_skb and lwt, tc_classid for tc */
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&skb.priority, 4, 1 };
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&skb.tc_classid, 4, 1 };
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)skb.cb, sizeof(skb.cb), 1 };
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&skb.tc_index, 8, 1 };
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&skb.tstamp, 8, 1 };
	pkt_reg = nr;
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)p.p.data,
					  (uint64_t)(p.p.data_end - p.p.data), is_l2 };
	run_on(&o, prog, &skb, regs, nr, BRT_ARRAY_SIZE(regs));
	o.skb_data = p.p.data;
	o.skb_len = skb.len;
	o.pkt = &p.p;
	err = run_repeat(call, prog, &o, &regs[pkt_reg], attr->test.repeat, &retval, &duration);
	if (err)
		goto out;
	/* the kernel hands the L2 header back zeroed to programs that did not see it */
	out = p.p.data;
	if (!is_l2) {
		out -= ETH_HLEN;
		memset(out, 0, ETH_HLEN);
	}
	/* convert_skb_to___skb(): the fields a program may change go back, the rest as given */
	in.mark = skb.mark;
	in.priority = skb.priority;
	in.ifindex = 1;
	in.tstamp = skb.tstamp;
	memcpy(in.cb, skb.cb, sizeof(in.cb));
	in.wire_len = wire;
	err = finish(call, out, (uint32_t)(p.p.data_end - out), attr->test.ctx_out ? &in : NULL,
		     sizeof(in), retval, duration);
out:
	pkt_free(&p);
	return err;
}

static int run_xdp(struct brt_call *call, struct brt_prog *prog)
{
	union bpf_attr *attr = call->attr;
	struct xdp_md md, in;
	struct brt_run_opts o = { 0 };
	struct brt_region regs[10];
	uint32_t retval = 0, duration = 0, meta = 0;
	struct pkt p = { 0 };
	size_t nr = 0, pkt_reg;
	int err;

	/* a devmap or cpumap program runs on a frame already redirected, whose egress
	 * device or CPU a test run has none of: the kernel refuses it first of all */
	if (prog->expected_attach_type == BPF_XDP_DEVMAP ||
	    prog->expected_attach_type == BPF_XDP_CPUMAP)
		return -EINVAL;
	if (attr->test.flags & ~(uint32_t)BPF_F_TEST_XDP_LIVE_FRAMES)
		return -EINVAL;
	if (attr->test.flags || attr->test.batch_size || attr->test.cpu)
		return -EINVAL;
	err = ctx_in(call, &in, sizeof(in));
	if (err)
		return err;
	if (attr->test.ctx_in) {
		/* metadata comes first in data_in, up to in.data; data_end must be the whole
		 * input (a shorter one puts the rest in fragments, which bpfrt does not have) */
		if (in.data_meta || in.data_end != attr->test.data_size_in || in.data > in.data_end ||
		    in.data % 4 || in.data > XDP_META_MAX ||
		    in.data > XDP_HEADROOM - XDP_FRAME_SIZE || in.egress_ifindex ||
		    in.ingress_ifindex > 1 || in.rx_queue_index)
			return -EINVAL;
		meta = in.data;
	}
	if (attr->test.data_size_in - meta < ETH_HLEN || attr->test.data_size_in > XDP_PKT_MAX)
		return -EINVAL;
	/* the packet at XDP_PACKET_HEADROOM, the metadata taken from the headroom */
	err = pkt_alloc(call, &p, XDP_BUF, XDP_HEADROOM - meta);
	if (err)
		goto out;
	p.p.data = p.p.meta + meta;
	p.p.end = p.p.head + XDP_BUF - SHINFO_SIZE;
	p.p.prog_type = prog->type;
	p.p.ctx = &md;
	p.p.test_run = 1;
	md = in;
	/* the frame arrives on the loopback device's queue 0 (the kernel's default rxq; a
	 * ctx_in may name only that device) */
	md.ingress_ifindex = 1;
	md.data_meta = (uint32_t)(uintptr_t)p.p.meta;
	md.data = (uint32_t)(uintptr_t)p.p.data;
	md.data_end = (uint32_t)(uintptr_t)p.p.data_end;
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&md, sizeof(md), 0 };
	pkt_reg = nr;
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)p.p.meta, p.len, 1 };
	run_on(&o, prog, &md, regs, nr, BRT_ARRAY_SIZE(regs));
	o.pkt = &p.p;
	err = run_repeat(call, prog, &o, &regs[pkt_reg], attr->test.repeat, &retval, &duration);
	if (err)
		goto out;
	/* xdp_convert_buff_to_md(): offsets from data_meta; the output starts there too */
	in.data = (uint32_t)(p.p.data - p.p.meta);
	in.data_meta = 0;
	in.data_end = (uint32_t)(p.p.data_end - p.p.meta);
	err = finish(call, p.p.meta, in.data_end, attr->test.ctx_out ? &in : NULL, sizeof(in),
		     retval, duration);
out:
	pkt_free(&p);
	return err;
}

static int run_raw_tp(struct brt_call *call, struct brt_prog *prog)
{
	union bpf_attr *attr = call->attr;
	uint64_t args[RAW_TP_MAX_ARGS];
	struct brt_run_opts o = { 0 };
	struct brt_region regs[8];
	uint32_t retval = 0, duration = 0;
	size_t nr = 0;
	int err;

	if (attr->test.data_in || attr->test.data_out || attr->test.ctx_out ||
	    attr->test.duration || attr->test.repeat || attr->test.batch_size)
		return -EINVAL;
	if (attr->test.ctx_size_in > sizeof(args))
		return -EINVAL;
	if (!(attr->test.flags & BPF_F_TEST_RUN_ON_CPU) && attr->test.cpu)
		return -EINVAL;
	memset(args, 0, sizeof(args));
	err = call->ua->from(args, attr->test.ctx_in, attr->test.ctx_size_in);
	if (err)
		return err;
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)args, attr->test.ctx_size_in, 0 };
	run_on(&o, prog, args, regs, nr, BRT_ARRAY_SIZE(regs));
	if (attr->test.flags & BPF_F_TEST_RUN_ON_CPU) {
		/* the kernel runs it on that CPU (smp_call_function_single()), -ENXIO past
		 * nr_cpu_ids or offline: here the run is for that CPU, as a trace record's is
		 * (bpf_get_smp_processor_id, per-CPU copies).  No other flag is checked
		 * (bpf_prog_test_run_raw_tp(): an XDP flag or an unknown bit runs as without). */
		uint32_t cpu = attr->test.cpu, prev;

		if (cpu >= brt_ncpus() || !brt_cpu_online(cpu))
			return -ENXIO;
		prev = brt_cpu_enter(cpu);
		err = run_repeat(call, prog, &o, NULL, 1, &retval, &duration);
		brt_cpu_leave(prev);
	} else {
		err = run_repeat(call, prog, &o, NULL, 1, &retval, &duration);
	}
	if (err)
		return err;
	attr->test.retval = retval;
	return BRT_PUT_ATTR(call, test.retval);
}

/* The kernel's bpf_prog_test_run_tracing(): after its attr checks only fentry, fexit and
 * fmod_ret programs run (on the kernel's bpf_fentry_test*() functions), and bpfrt never
 * loads those (no trampolines); every other tracing program (tp_btf, iter) gets the
 * kernel's -EFAULT, its error code when the attach type has no test function. */
static int run_tracing(struct brt_call *call, struct brt_prog *prog)
{
	const union bpf_attr *attr = call->attr;

	(void)prog;
	if (attr->test.flags || attr->test.cpu || attr->test.batch_size)
		return -EINVAL;
	return -EFAULT;
}

/* The kernel's bpf_prog_test_run_syscall(): the program runs once on a copy of ctx_in
 * (up to 64 KiB, at least what it reads), which is written back to ctx_in. */
static int run_syscall(struct brt_call *call, struct brt_prog *prog)
{
	union bpf_attr *attr = call->attr;
	uint32_t size = attr->test.ctx_size_in, retval = 0, duration = 0;
	struct brt_run_opts o = { 0 };
	struct brt_region regs[8];
	unsigned char *ctx = NULL;
	size_t nr = 0;
	int err;

	if (attr->test.data_in || attr->test.data_out || attr->test.ctx_out ||
	    attr->test.duration || attr->test.repeat || attr->test.flags ||
	    attr->test.batch_size)
		return -EINVAL;
	if (size < prog->max_ctx_offset || size > UINT16_MAX)
		return -EINVAL;
	if (size) {
		ctx = malloc(size);
		if (!ctx)
			return -ENOMEM;
		err = call->ua->from(ctx, attr->test.ctx_in, size);
		if (err)
			goto out;
		regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)ctx, size, 1 };
	}
	run_on(&o, prog, ctx, regs, nr, BRT_ARRAY_SIZE(regs));
	err = run_repeat(call, prog, &o, NULL, 1, &retval, &duration);
	if (err)
		goto out;
	attr->test.retval = retval;
	err = BRT_PUT_ATTR(call, test.retval);
	if (!err && size && call->ua->to(attr->test.ctx_in, ctx, size))
		err = -EFAULT;
out:
	free(ctx);
	return err;
}

/* The kernel's struct nf_hook_state as BPF_PROG_TEST_RUN takes it in ctx_in (x86-64):
 * hook and pf bytes, then in, out, sk, net and okfn pointers, which must be zero. */
struct nf_state_in {
	uint8_t hook, pf;
	uint8_t pad[6];
	uint64_t in, out, sk, net, okfn;
};
enum { NFPROTO_V4 = 2, NFPROTO_V6 = 10, NF_LOCAL_OUT = 3, NF_PAGE = 4096 };

/* The kernel's bpf_prog_test_run_nf(): an IPv4 or IPv6 packet as the hook sees it
 * (LOCAL_OUT by default; other hooks start from an Ethernet header, which must match pf,
 * and eth_type_trans() pulls it).  The context's state and skb pointers are kernel
 * objects: they point at a zeroed stand-in outside the run's memory, so the program's
 * fault-safe reads through them (BTF-typed, trusted) read 0; bpf_dynptr_from_skb(), which
 * takes the skb, sees the run's packet, read-only as the kernel's for netfilter. */
static int run_nf(struct brt_call *call, struct brt_prog *prog)
{
	union bpf_attr *attr = call->attr;
	uint32_t size = attr->test.data_size_in, retval = 0, duration = 0;
	static const uint64_t stand_in[8];
	struct nf_state_in user;
	uint64_t ctx[2] = { (uint64_t)(uintptr_t)stand_in, (uint64_t)(uintptr_t)stand_in };
	struct brt_run_opts o = { 0 };
	struct brt_run_pkt pkt = { 0 };
	struct brt_region regs[8];
	unsigned char *data = NULL;
	uint8_t hook = NF_LOCAL_OUT, pf = NFPROTO_V4;
	size_t nr = 0, pkt_reg;
	int err;

	if (attr->test.flags || attr->test.cpu || attr->test.batch_size)
		return -EINVAL;
	/* the skb's data: NET_SKB_PAD + NET_IP_ALIGN headroom, skb_shared_info tailroom */
	if (size < 20 || size > NF_PAGE - 66 - 320)
		return -EINVAL;
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	err = call->ua->from(data, attr->test.data_in, size) ? -EFAULT : 0;
	if (!err && (attr->test.ctx_in || attr->test.ctx_out)) {
		err = ctx_in(call, &user, sizeof(user));
		if (!err && (user.in || user.out || user.net || user.sk || user.okfn ||
			     (user.pf != NFPROTO_V4 && user.pf != NFPROTO_V6)))
			err = -EINVAL;
		hook = user.hook;
		pf = user.pf;
	}
	if (!err && hook != NF_LOCAL_OUT) {
		uint16_t proto = size >= 14 ? (uint16_t)(data[12] << 8 | data[13]) : 0;

		if (size < 14 + 20)
			err = -EINVAL;
		else if (proto == 0x0800)
			err = pf == NFPROTO_V4 ? 0 : -EINVAL;
		else if (proto == 0x86dd)
			err = size >= 14 + 40 && pf == NFPROTO_V6 ? 0 : -EINVAL;
		else
			err = -EPROTO;
	}
	if (err)
		goto out;
	pkt.head = pkt.meta = pkt.data = data;
	pkt.end = pkt.data_end = data + size;
	if (hook != NF_LOCAL_OUT) {
		pkt.mac = data;
		pkt.meta = pkt.data = data + 14;
	}
	pkt.network = pkt.data;
	pkt.prog_type = prog->type;
	pkt.test_run = 1;
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)ctx, sizeof(ctx), 0 };
	pkt_reg = nr;
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)pkt.data,
					  (uint64_t)(pkt.data_end - pkt.data), 0 };
	run_on(&o, prog, ctx, regs, nr, BRT_ARRAY_SIZE(regs));
	o.pkt = &pkt;
	err = run_repeat(call, prog, &o, &regs[pkt_reg], attr->test.repeat, &retval, &duration);
	if (!err)
		err = finish(call, NULL, 0, NULL, 0, retval, duration);
out:
	free(data);
	return err;
}

/* The kernel's verify_user_bpf_flow_keys(): of ctx_in only flags may be set. */
static int flow_keys_ctx_ok(const struct bpf_flow_keys *k)
{
	const unsigned char *p = (const unsigned char *)k;

	for (size_t i = 0; i < sizeof(*k); i++)
		if (p[i] && (i < offsetof(struct bpf_flow_keys, flags) ||
			     i >= offsetof(struct bpf_flow_keys, flags) + sizeof(k->flags)))
			return 0;
	return 1;
}

static uint16_t clamp_u16(uint16_t v, uint16_t lo, uint16_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The kernel's bpf_prog_test_run_flow_dissector(): the program dissects data_in (an
 * Ethernet frame, at most a page) as bpf_flow_dissect() runs it: flow keys zeroed with
 * n_proto from the frame, nhoff = thoff = ETH_HLEN and the caller's flags, then nhoff and
 * thoff clamped into the frame.  The keys are the output data; ctx_out gets ctx_in back.
 * The context is the struct __sk_buff whose data, data_end and flow_keys the program
 * may read.  The kernel's run has no skb, so bpf_skb_load_bytes (its
 * bpf_flow_dissector_load_bytes) answers -EFAULT with the buffer zeroed: the run gives
 * no skb_data. */
static int run_flow_dissector(struct brt_call *call, struct brt_prog *prog)
{
	union bpf_attr *attr = call->attr;
	uint32_t size = attr->test.data_size_in, retval = 0, duration = 0, repeat;
	struct bpf_flow_keys keys, in;
	struct __sk_buff skb;
	struct brt_run_opts o = { 0 };
	struct brt_region regs[10];
	uint64_t total = 0;
	struct pkt p = { 0 };
	uint16_t proto;
	size_t nr = 0;
	int err;

	if (attr->test.flags || attr->test.cpu || attr->test.batch_size)
		return -EINVAL;
	if (size < ETH_HLEN || size > 4096) /* bpf_test_init(): a page without head/tailroom */
		return -EINVAL;
	err = pkt_alloc(call, &p, 4096, 0);
	if (err)
		goto out;
	err = ctx_in(call, &in, sizeof(in));
	if (err)
		goto out;
	err = -EINVAL;
	if (!flow_keys_ctx_ok(&in))
		goto out;
	memcpy(&proto, p.p.data + 12, 2);
	memset(&skb, 0, sizeof(skb));
	skb.data = (uint32_t)(uintptr_t)p.p.data;
	skb.data_end = (uint32_t)(uintptr_t)p.p.data_end;
	skb.flow_keys = &keys;
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&skb, sizeof(skb), 0 };
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&keys, sizeof(keys), 1 };
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)p.p.data, size, 0 };
	run_on(&o, prog, &skb, regs, nr, BRT_ARRAY_SIZE(regs));
	repeat = attr->test.repeat ? attr->test.repeat : 1;
	for (uint32_t i = 0; i < repeat; i++) {
		memset(&keys, 0, sizeof(keys));
		keys.n_proto = proto;
		keys.nhoff = keys.thoff = ETH_HLEN;
		keys.flags = in.flags;
		err = run_repeat(call, prog, &o, NULL, 1, &retval, &duration);
		if (err)
			goto out;
		total += duration;
		keys.nhoff = clamp_u16(keys.nhoff, ETH_HLEN, (uint16_t)size);
		keys.thoff = clamp_u16(keys.thoff, keys.nhoff, (uint16_t)size);
	}
	err = finish(call, &keys, sizeof(keys), &in, sizeof(in), retval,
		     (uint32_t)(total / repeat));
out:
	pkt_free(&p);
	return err;
}

/* struct bpf_sk_lookup from the end of local_port on: must be zero in ctx_in */
#define SK_LOOKUP_CTX_USED offsetof(struct bpf_sk_lookup, ingress_ifindex)

/* The kernel's bpf_prog_test_run_sk_lookup(): ctx_in (required, no data) describes the
 * connection; the program runs as the only one of an sk_lookup array
 * (BPF_PROG_SK_LOOKUP_RUN_ARRAY: a selection counts only when the program returns
 * SK_PASS, and the verdict is SK_PASS when it passes or selected).  The program reads the
 * kernel's bpf_sk_lookup_kern through the uapi struct, so the run fills that struct as
 * the rewritten loads would read it: family, protocol and local_port as 16-bit values,
 * the other family's addresses zero.  ctx_out is ctx_in with the selected socket's cookie
 * (0: none); a socket the program selected with bpf_sk_assign (sockmap.c: one from a
 * sockmap) that has SO_REUSEPORT, without BPF_SK_LOOKUP_F_NO_REUSEPORT, is -EOPNOTSUPP. */
static int run_sk_lookup(struct brt_call *call, struct brt_prog *prog)
{
	union bpf_attr *attr = call->attr;
	uint32_t retval = 0, duration = 0, repeat;
	struct brt_sk_lookup_ctx run;
	struct bpf_sk_lookup in, *ctx = &run.uapi;
	const struct brt_sock *sel = NULL;
	struct brt_run_opts o = { 0 };
	struct brt_region regs[8];
	const unsigned char *tail;
	uint64_t total = 0;
	size_t nr = 0;
	int err;

	if (attr->test.flags || attr->test.cpu || attr->test.batch_size)
		return -EINVAL;
	if (attr->test.data_in || attr->test.data_size_in || attr->test.data_out ||
	    attr->test.data_size_out)
		return -EINVAL;
	if (!attr->test.ctx_in && !attr->test.ctx_out)
		return -EINVAL;
	err = ctx_in(call, &in, sizeof(in));
	if (err)
		return err;
	tail = (const unsigned char *)&in + SK_LOOKUP_CTX_USED;
	if (in.sk)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(in) - SK_LOOKUP_CTX_USED; i++)
		if (tail[i])
			return -EINVAL;
	if (in.local_port > UINT16_MAX)
		return -ERANGE;
	memset(&run, 0, sizeof(run));
	run.magic = BRT_SK_LOOKUP_MAGIC;
	ctx->family = (uint16_t)in.family;
	ctx->protocol = (uint16_t)in.protocol;
	ctx->remote_port = in.remote_port;
	ctx->local_port = in.local_port;
	switch (ctx->family) {
	case AF_INET:
		ctx->remote_ip4 = in.remote_ip4;
		ctx->local_ip4 = in.local_ip4;
		break;
	case AF_INET6:
		memcpy(ctx->remote_ip6, in.remote_ip6, sizeof(ctx->remote_ip6));
		memcpy(ctx->local_ip6, in.local_ip6, sizeof(ctx->local_ip6));
		break;
	default:
		return -EAFNOSUPPORT;
	}
	/* the whole run struct (read-only): bpf_sk_assign checks its ctx argument is it */
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)&run, sizeof(run), 0 };
	run_on(&o, prog, ctx, regs, nr, BRT_ARRAY_SIZE(regs));
	repeat = attr->test.repeat ? attr->test.repeat : 1;
	for (uint32_t i = 0; i < repeat; i++) {
		ctx->sk = NULL;
		run.no_reuseport = 0;
		err = run_repeat(call, prog, &o, NULL, 1, &retval, &duration);
		if (err)
			return err;
		total += duration;
		/* a selection counts only when the program passes */
		sel = retval == SK_PASS ? (const struct brt_sock *)ctx->sk : NULL;
	}
	in.cookie = 0;
	if (sel) {
		if (sel->reuseport && !run.no_reuseport)
			return -EOPNOTSUPP;
		in.cookie = sel->cookie;
	}
	/* the array's verdict: the only program passed, or it selected a socket */
	retval = retval == SK_PASS || sel ? SK_PASS : SK_DROP;
	return finish(call, NULL, 0, &in, sizeof(in), retval, (uint32_t)(total / repeat));
}

/* The kernel's bpf_struct_ops_test_run() (net/bpf/bpf_dummy_struct_ops.c): only programs of
 * bpf_dummy_ops run (others -EOPNOTSUPP).  ctx_in holds the member's arguments, 8 bytes
 * each, exactly (-EINVAL); the first is a pointer to the caller's struct
 * bpf_dummy_ops_state, which the program gets a copy of (NULL for 0) and which is copied
 * back after the run; 0 for a pointer argument that is not __nullable is -EINVAL.  The
 * other attributes are not looked at, and only retval is written. */
static int run_struct_ops(struct brt_call *call, struct brt_prog *prog)
{
	union bpf_attr *attr = call->attr;
	const struct brt_btf *btf = brt_btf_vmlinux();
	uint64_t args[MAX_FUNC_ARGS] = { 0 }, state_ptr;
	uint32_t retval = 0, duration = 0, nargs, state_size = 0;
	unsigned char state[64] = { 0 };
	const struct btf_type *proto = NULL, *st_type;
	const struct btf_member *m;
	const struct btf_param *p;
	struct brt_struct_ops st;
	struct brt_run_opts o = { 0 };
	struct brt_region regs[8];
	const char *member;
	int state_id, err;
	size_t nr = 0;

	if (!btf || brt_struct_ops_by_name(btf, "bpf_dummy_ops", &st))
		return -EINVAL;
	if (prog->obj.snap.key_size != st.type_id) /* the program's attach_btf_id */
		return -EOPNOTSUPP;
	m = (const struct btf_member *)(st.type + 1);
	if (prog->expected_attach_type >= BTF_INFO_VLEN(st.type->info) ||
	    !(proto = brt_btf_func_ptr_proto(btf, m[prog->expected_attach_type].type)))
		return -EINVAL; /* the verifier accepted only function members */
	member = brt_btf_str(btf, m[prog->expected_attach_type].name_off);
	nargs = BTF_INFO_VLEN(proto->info);
	if (nargs > MAX_FUNC_ARGS || attr->test.ctx_size_in != nargs * 8u)
		return -EINVAL;
	state_id = brt_btf_find(btf, "bpf_dummy_ops_state", BTF_KIND_STRUCT);
	st_type = state_id > 0 ? brt_btf_type(btf, (uint32_t)state_id) : NULL;
	if (!st_type || st_type->size > sizeof(state))
		return -EINVAL;
	state_size = st_type->size;
	if (call->ua->from(args, attr->test.ctx_in, nargs * 8u))
		return -EFAULT;
	state_ptr = args[0];
	if (state_ptr && call->ua->from(state, state_ptr, state_size))
		return -EFAULT;
	/* check_test_run_args(): 0 only for pointers the stub names __nullable */
	p = (const struct btf_param *)(proto + 1);
	for (uint32_t i = 0; i < nargs; i++) {
		const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, p[i].type));

		if (args[i] || !t || BTF_INFO_KIND(t->info) != BTF_KIND_PTR)
			continue;
		if (!(brt_struct_ops_arg_flags(btf, &st, member, i) & BRT_STOPS_ARG_NULLABLE))
			return -EINVAL;
	}
	if (state_ptr) {
		args[0] = (uint64_t)(uintptr_t)state;
		regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)state, state_size, 1 };
	}
	regs[nr++] = (struct brt_region){ (uint64_t)(uintptr_t)args, nargs * 8u, 0 };
	run_on(&o, prog, args, regs, nr, BRT_ARRAY_SIZE(regs));
	err = run_repeat(call, prog, &o, NULL, 1, &retval, &duration);
	if (err)
		return err;
	if (state_ptr && call->ua->to(state_ptr, state, state_size))
		return -EFAULT;
	attr->test.retval = retval;
	return BRT_PUT_ATTR(call, test.retval);
}

/* How each test-run kind (prog_types.def's run column) runs. */
typedef int (*runner_fn)(struct brt_call *call, struct brt_prog *prog);
static const runner_fn runners[] = {
	[BRT_RUN_SKB] = run_skb,
	[BRT_RUN_SKB_L2] = run_skb,
	[BRT_RUN_XDP] = run_xdp,
	[BRT_RUN_RAW_TP] = run_raw_tp,
	[BRT_RUN_TRACING] = run_tracing,
	[BRT_RUN_SYSCALL] = run_syscall,
	[BRT_RUN_NF] = run_nf,
	[BRT_RUN_FLOW_DISSECTOR] = run_flow_dissector,
	[BRT_RUN_SK_LOOKUP] = run_sk_lookup,
	[BRT_RUN_STRUCT_OPS] = run_struct_ops,
};

int brt_cmd_prog_test_run(struct brt_call *call)
{
	union bpf_attr *attr = call->attr;
	struct brt_prog *prog;
	unsigned run;
	int err;

	if ((attr->test.ctx_size_in && !attr->test.ctx_in) ||
	    (!attr->test.ctx_size_in && attr->test.ctx_in) ||
	    (attr->test.ctx_size_out && !attr->test.ctx_out) ||
	    (!attr->test.ctx_size_out && attr->test.ctx_out))
		return -EINVAL;
	err = brt_prog_from_fd((int)attr->test.prog_fd, &prog);
	if (err)
		return err;
	run = brt_prog_type(prog->type)->run; /* a loaded program's type has a row */
	if (run < BRT_ARRAY_SIZE(runners) && runners[run]) {
		/* the kernel's test run allocates fresh (zeroed) cgroup storage */
		for (uint32_t i = 0; i < prog->pm.n; i++)
			brt_cgroup_storage_reset(prog->pm.maps[i]);
		err = runners[run](call, prog);
	}
	else
		err = -BRT_ENOTSUPP; /* the kernel's answer for types without ->test_run */
	brt_obj_put(&prog->obj);
	return err;
}
