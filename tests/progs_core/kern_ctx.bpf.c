/* kern_ctx.bpf.c - bpf_cast_to_kern_ctx() in an XDP and a tc program: the kernel's
 * struct xdp_buff and struct sk_buff read with the kernel's layout, followed to the
 * receiving device and its network namespace, and skb_shinfo() reached through
 * bpf_rdonly_cast() (its frag_list is NULL in a test run: a fault-safe load through it
 * reads 0).  tests/attach/test_kern_ctx_oracle.c runs both on the kernel and on bpfrt. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} out SEC(".maps");

static __always_inline void put(__u32 k, __u64 v)
{
	bpf_map_update_elem(&out, &k, &v, 0);
}

SEC("xdp")
int xdp_kctx(struct xdp_md *ctx)
{
	struct xdp_buff *x = bpf_cast_to_kern_ctx(ctx);
	struct net_device *dev = x->rxq->dev;
	char name[16];

	__builtin_memcpy(name, dev->name, sizeof(name));
	put(0, dev->ifindex);
	put(1, dev->nd_net.net->ns.inum);
	put(2, *(__u64 *)name);
	put(3, *(__u64 *)(name + 8));
	put(4, x->data_end - x->data);
	put(5, x->data - x->data_hard_start);
	put(6, x->frame_sz);
	put(7, x->rxq->queue_index);
	put(8, ctx->ingress_ifindex);
	put(9, x->data_meta == x->data);
	return XDP_PASS;
}

SEC("tc")
int skb_kctx(struct __sk_buff *skb)
{
	struct sk_buff *k = bpf_cast_to_kern_ctx(skb);
	struct skb_shared_info *sh;

	sh = bpf_rdonly_cast(k->head + k->end, bpf_core_type_id_kernel(struct skb_shared_info));
	put(0, k->len);
	put(1, k->data - k->head);
	put(2, k->protocol);
	put(3, k->mark);
	put(4, sh->meta_len);
	put(5, sh->frag_list->len);
	put(6, sh->nr_frags);
	put(7, k->dev->ifindex);
	put(8, k->end);
	put(9, k->tail);
	put(10, k->data_len);
	put(11, k->dev->nd_net.net->ns.inum);
	return 0;
}
