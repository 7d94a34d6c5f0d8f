/* kern_ctx.c - bpf_cast_to_kern_ctx() of a packet program: the kernel's kfunc returns the
 * context the program's user-visible one stands for (its verifier rewrites loads of
 * struct xdp_md and struct __sk_buff into loads of those), a struct xdp_buff or a
 * struct sk_buff that the program then reads with the kernel's layout (vmlinux BTF) and
 * follows (xdp->rxq->dev->ifindex).  No such struct exists in user space: the answer is a
 * stand-in, zeroed memory as large as the kernel's struct, holding what the run knows at
 * the kernel's offsets, as a kernel test run or a live run would have it:
 *  - xdp_buff: data, data_end, data_meta, data_hard_start (the run's buffer), frame_sz
 *    (one page), rxq -> xdp_rxq_info (queue_index) -> net_device (ifindex, name) ->
 *    nd_net.net -> struct net (ns.inum: this process's network namespace);
 *  - sk_buff: len, head (NET_SKB_PAD before the link-layer header), data, tail, end (the
 *    kernel test run's: kmalloc's size class less skb_shared_info), protocol, mark,
 *    priority, skb_iif, dev -> net_device as above.
 * Every other field reads 0; a pointer that is 0 reads 0 through it too, as the kernel's
 * fault-safe loads (the checked engine's probe loads, vm.h brt_vm_set_probe_loads()),
 * which is what skb_shinfo()'s frag_list gives in the kernel's test run.  Known
 * differences: skb_shared_info (at head + end) reads 0 throughout (the kernel's
 * dataref is 1), and the net_device is a stand-in whatever its type (loopback's fields
 * such as its flags and MTU read 0).  The stand-ins are the calling thread's, granted
 * read-only to the run (the verifier allows no store through a kernel pointer). */
#include <net/if.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attach/attach.h"
#include "btf/btf.h"
#include "verifier/verifier.h"
#include "vm/vm.h"

#define NET_SKB_PAD 64          /* x86: max(32, L1_CACHE_BYTES); NET_IP_ALIGN is 0 */
#define SHINFO_SIZE 320         /* SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) */
#define XDP_FRAME_SZ 4096       /* the test run's frame: one page */
#define STRUCT_MAX 16384        /* a struct larger than this is not stood in for */

enum { S_XDP_BUFF, S_RXQ, S_DEV, S_NET, S_SKB, N_STRUCTS };
static const char *const struct_names[N_STRUCTS] = {
	[S_XDP_BUFF] = "xdp_buff", [S_RXQ] = "xdp_rxq_info", [S_DEV] = "net_device",
	[S_NET] = "net",           [S_SKB] = "sk_buff",
};

enum {
	F_XDP_DATA, F_XDP_DATA_END, F_XDP_DATA_META, F_XDP_HARD_START, F_XDP_RXQ, F_XDP_FRAME_SZ,
	F_RXQ_DEV, F_RXQ_QUEUE, F_DEV_IFINDEX, F_DEV_NAME, F_DEV_NET, F_NET_INUM, F_SKB_LEN,
	F_SKB_HEAD, F_SKB_DATA, F_SKB_TAIL, F_SKB_END, F_SKB_PROTOCOL, F_SKB_MARK,
	F_SKB_PRIORITY, F_SKB_IIF, F_SKB_DEV, N_FIELDS
};
static const struct {
	int strct;
	const char *path;
} field_defs[N_FIELDS] = {
	[F_XDP_DATA] = { S_XDP_BUFF, "data" },
	[F_XDP_DATA_END] = { S_XDP_BUFF, "data_end" },
	[F_XDP_DATA_META] = { S_XDP_BUFF, "data_meta" },
	[F_XDP_HARD_START] = { S_XDP_BUFF, "data_hard_start" },
	[F_XDP_RXQ] = { S_XDP_BUFF, "rxq" },
	[F_XDP_FRAME_SZ] = { S_XDP_BUFF, "frame_sz" },
	[F_RXQ_DEV] = { S_RXQ, "dev" },
	[F_RXQ_QUEUE] = { S_RXQ, "queue_index" },
	[F_DEV_IFINDEX] = { S_DEV, "ifindex" },
	[F_DEV_NAME] = { S_DEV, "name" },
	[F_DEV_NET] = { S_DEV, "nd_net.net" },
	[F_NET_INUM] = { S_NET, "ns.inum" },
	[F_SKB_LEN] = { S_SKB, "len" },
	[F_SKB_HEAD] = { S_SKB, "head" },
	[F_SKB_DATA] = { S_SKB, "data" },
	[F_SKB_TAIL] = { S_SKB, "tail" },
	[F_SKB_END] = { S_SKB, "end" },
	[F_SKB_PROTOCOL] = { S_SKB, "protocol" },
	[F_SKB_MARK] = { S_SKB, "mark" },
	[F_SKB_PRIORITY] = { S_SKB, "priority" },
	[F_SKB_IIF] = { S_SKB, "skb_iif" },
	[F_SKB_DEV] = { S_SKB, "dev" },
};

/* where each struct starts in a thread's block, and the block's size (0: no vmlinux BTF
 * or a struct too large: no stand-ins) */
static uint32_t struct_at[N_STRUCTS], block_size;
static struct {
	uint32_t off, size; /* size 0: not found, not filled */
} fields[N_FIELDS];
static pthread_once_t layout_once = PTHREAD_ONCE_INIT;

static void layout_init(void)
{
	const struct brt_btf *btf = brt_btf_vmlinux();
	uint32_t ids[N_STRUCTS], at = 0;
	uint64_t sz;

	for (int s = 0; btf && s < N_STRUCTS; s++) {
		int id = brt_btf_find(btf, struct_names[s], BTF_KIND_STRUCT);

		if (id <= 0 || brt_btf_resolve_size(btf, (uint32_t)id, &sz) || sz > STRUCT_MAX)
			return;
		ids[s] = (uint32_t)id;
		struct_at[s] = at;
		at += ((uint32_t)sz + 63) & ~63u;
	}
	for (int f = 0; btf && f < N_FIELDS; f++)
		if (brt_btf_member_at(btf, ids[field_defs[f].strct], field_defs[f].path,
				      &fields[f].off, &fields[f].size))
			fields[f].size = 0;
	block_size = at;
}

static _Thread_local uint8_t *block;
static pthread_key_t block_key;
static pthread_once_t block_once = PTHREAD_ONCE_INIT;

static void block_key_make(void)
{
	if (pthread_key_create(&block_key, free))
		block_key = (pthread_key_t)-1; /* the blocks of exited threads leak */
}

/* field f of its struct in the block: the low len bytes of v (little-endian), or the
 * bytes at v for a char array (len: its bytes) */
static void put(int f, uint64_t v)
{
	uint8_t *dst = block + struct_at[field_defs[f].strct] + fields[f].off;

	if (fields[f].size && fields[f].size <= sizeof(v))
		memcpy(dst, &v, fields[f].size);
}

static uint64_t addr_of(int s)
{
	return (uint64_t)(uintptr_t)(block + struct_at[s]);
}

/* the net_device the run's packet came in on (ifindex), in its network namespace */
static void fill_dev(uint32_t ifindex)
{
	char name[IF_NAMESIZE] = "";
	struct stat st;

	put(F_DEV_IFINDEX, ifindex);
	if (ifindex && fields[F_DEV_NAME].size >= IF_NAMESIZE && if_indextoname(ifindex, name))
		memcpy(block + struct_at[S_DEV] + fields[F_DEV_NAME].off, name, IF_NAMESIZE);
	put(F_DEV_NET, addr_of(S_NET));
	if (!stat("/proc/self/ns/net", &st))
		put(F_NET_INUM, st.st_ino);
}

/* kmalloc's size classes from 512 up, as ksize() reports the test run's buffer */
static uint32_t kmalloc_size(uint32_t n)
{
	uint32_t c = 512;

	while (c < n && c < (1u << 22))
		c <<= 1;
	return c;
}

uint64_t brt_kern_ctx(uint64_t r1, struct bpfrt_run_ctx *ctx)
{
	const struct brt_run_pkt *p = ctx->pkt;
	int xdp;

	if (!p || !p->ctx || r1 != (uint64_t)(uintptr_t)p->ctx)
		return r1;
	/* the program types whose context is an xdp_md, or an __sk_buff over an sk_buff
	 * (the kernel's bpf_ctx_convert table: a flow dissector's is a bpf_flow_dissector) */
	xdp = !strcmp(brt_ctx_type_name(p->prog_type), "xdp_md");
	if (!xdp && (strcmp(brt_ctx_type_name(p->prog_type), "__sk_buff") ||
		     p->prog_type == BPF_PROG_TYPE_FLOW_DISSECTOR))
		return r1;
	pthread_once(&layout_once, layout_init);
	if (!block_size)
		return r1;
	if (!block) {
		pthread_once(&block_once, block_key_make);
		block = malloc(block_size);
		if (!block)
			return r1;
		if (block_key != (pthread_key_t)-1)
			pthread_setspecific(block_key, block);
	}
	memset(block, 0, block_size);
	if (xdp) {
		const struct xdp_md *md = p->ctx;

		put(F_XDP_DATA, (uint64_t)(uintptr_t)p->data);
		put(F_XDP_DATA_END, (uint64_t)(uintptr_t)p->data_end);
		put(F_XDP_DATA_META, (uint64_t)(uintptr_t)p->meta);
		put(F_XDP_HARD_START, (uint64_t)(uintptr_t)p->head);
		put(F_XDP_FRAME_SZ, XDP_FRAME_SZ);
		put(F_XDP_RXQ, addr_of(S_RXQ));
		put(F_RXQ_DEV, addr_of(S_DEV));
		put(F_RXQ_QUEUE, md->rx_queue_index);
		fill_dev(md->ingress_ifindex);
	} else {
		const struct __sk_buff *skb = p->ctx;
		const uint8_t *l2 = p->mac ? p->mac : p->data;
		const uint8_t *head = l2 - p->head >= NET_SKB_PAD ? l2 - NET_SKB_PAD : p->head;
		uint32_t data_sz = (uint32_t)(p->data_end - l2);

		put(F_SKB_LEN, skb->len);
		put(F_SKB_HEAD, (uint64_t)(uintptr_t)head);
		put(F_SKB_DATA, (uint64_t)(uintptr_t)p->data);
		put(F_SKB_TAIL, (uint64_t)(p->data_end - head));
		/* bpf_test_init(): SKB_DATA_ALIGN(size) + headroom + tailroom, kzalloc'd */
		put(F_SKB_END, kmalloc_size(((data_sz + 63) & ~63u) + NET_SKB_PAD + SHINFO_SIZE) -
				       SHINFO_SIZE);
		put(F_SKB_PROTOCOL, skb->protocol);
		put(F_SKB_MARK, skb->mark);
		put(F_SKB_PRIORITY, skb->priority);
		put(F_SKB_IIF, skb->ingress_ifindex);
		put(F_SKB_DEV, addr_of(S_DEV));
		fill_dev(skb->ifindex);
	}
	if (ctx->checked && bpfrt_run_grant(ctx, block, block_size, 0))
		return 0;
	return addr_of(xdp ? S_XDP_BUFF : S_SKB);
}
