/* kfuncs.c - the kernel functions of src/vm/kfuncs.def as user space runs them, with the
 * helper ABI (a verified call reaches them as helper BRT_KFUNC_HELPER_BASE + row index,
 * api/prog.c).  What the kernel computes from its own state is answered from what user
 * space can see; each function says where that differs.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "helpers/helpers.h"

#define UNUSED(x) (void)(x)

/* ---- conntrack (net/netfilter/nf_conntrack_bpf.c) --------------------------------------- */
/* struct bpf_ct_opts as the kernel reads it: 16 bytes, or 12 without the zone fields */
struct ct_opts {
	int32_t netns_id;
	int32_t error;
	uint8_t l4proto;
	uint8_t dir;
	uint16_t ct_zone_id;
	uint8_t ct_zone_dir;
	uint8_t reserved[3];
};

/* __bpf_nf_ct_lookup()'s checks in the kernel's order, then the lookup: the conntrack
 * table lives in the kernel and user space holds none of its entries, so a well-formed
 * lookup finds nothing (-ENOENT), as the kernel answers for a flow it has not seen; a
 * netns id (>= 0) names a namespace of the kernel's nsid table, which user space does not
 * resolve here (-ENONET, the kernel's answer for an unknown id). */
static int ct_lookup_err(const void *tuple, uint32_t tuple_sz, struct ct_opts *o,
			 uint32_t opts_sz)
{
	if (!o || !tuple)
		return -EINVAL;
	if (opts_sz != 16 && opts_sz != 12)
		return -EINVAL;
	if (opts_sz == 16 ? o->reserved[0] || o->reserved[1] || o->reserved[2] : o->ct_zone_id)
		return -EINVAL;
	if (o->l4proto != 6 && o->l4proto != 17) /* IPPROTO_TCP, IPPROTO_UDP */
		return -EPROTO;
	if (o->netns_id < -1) /* BPF_F_CURRENT_NETNS */
		return -EINVAL;
	if (tuple_sz != 12 && tuple_sz != 36) /* sizeof ipv4 / ipv6 of struct bpf_sock_tuple */
		return -EAFNOSUPPORT;
	if (o->netns_id >= 0)
		return -ENONET;
	if (opts_sz == 16 && !o->ct_zone_dir)
		o->ct_zone_dir = 3; /* NF_CT_DEFAULT_ZONE_DIR */
	return -ENOENT;
}

/* The kernel stores the error in opts->error whatever opts__sz says (with opts__sz below
 * 8 past the memory the verifier checked); here only inside the checked opts__sz bytes. */
static uint64_t ct_lookup(uint64_t tuple, uint64_t tuple_sz, uint64_t opts, uint64_t opts_sz)
{
	struct ct_opts *o = (struct ct_opts *)(uintptr_t)opts;
	int32_t err = ct_lookup_err((const void *)(uintptr_t)tuple, (uint32_t)tuple_sz, o,
				    (uint32_t)opts_sz);

	if (o && (uint32_t)opts_sz >= 8)
		memcpy(&o->error, &err, sizeof(err));
	return 0;
}

uint64_t brt_kfunc_bpf_skb_ct_lookup(uint64_t ctx, uint64_t tuple, uint64_t tuple_sz,
				     uint64_t opts, uint64_t opts_sz, struct bpfrt_run_ctx *rc)
{
	UNUSED(ctx);
	UNUSED(rc);
	return ct_lookup(tuple, tuple_sz, opts, opts_sz);
}

uint64_t brt_kfunc_bpf_xdp_ct_lookup(uint64_t ctx, uint64_t tuple, uint64_t tuple_sz,
				     uint64_t opts, uint64_t opts_sz, struct bpfrt_run_ctx *rc)
{
	UNUSED(ctx);
	UNUSED(rc);
	return ct_lookup(tuple, tuple_sz, opts, opts_sz);
}

/* No lookup returns an entry, so nothing is ever released (the verifier sees to it that
 * only a looked-up entry reaches here). */
uint64_t brt_kfunc_bpf_ct_release(uint64_t nfct, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *rc)
{
	UNUSED(nfct);
	UNUSED(r2);
	UNUSED(r3);
	UNUSED(r4);
	UNUSED(r5);
	UNUSED(rc);
	return 0;
}

/* ---- RCU read sections (kernel/bpf/helpers.c) --------------------------------------- */
/* The verifier pairs them and checks what runs inside; a user-space run holds no read
 * section of the kernel's, so they do nothing here. */
uint64_t brt_kfunc_bpf_rcu_read_lock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *rc)
{
	UNUSED(r1);
	UNUSED(r2);
	UNUSED(r3);
	UNUSED(r4);
	UNUSED(r5);
	UNUSED(rc);
	return 0;
}

uint64_t brt_kfunc_bpf_rcu_read_unlock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *rc)
{
	UNUSED(r1);
	UNUSED(r2);
	UNUSED(r3);
	UNUSED(r4);
	UNUSED(r5);
	UNUSED(rc);
	return 0;
}

/* ---- cpumask (kernel/bpf/cpumask.c) ----------------------------------------------------- */
/* struct bpf_cpumask is a cpumask_t (NR_CPUS bits, at most 8192) followed by its
 * refcount; the mask starts the object, the count is kept in a header before it. */
#define CPUMASK_BYTES 1024
struct cpumask_obj {
	long usage;
	uint64_t bits[CPUMASK_BYTES / 8 + 1];
};

static struct cpumask_obj *cpumask_of(uint64_t p)
{
	return p ? (struct cpumask_obj *)(uintptr_t)(p - offsetof(struct cpumask_obj, bits))
		 : NULL;
}

uint64_t brt_kfunc_bpf_cpumask_create(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *rc)
{
	struct cpumask_obj *m = calloc(1, sizeof(*m));

	UNUSED(r1);
	UNUSED(r2);
	UNUSED(r3);
	UNUSED(r4);
	UNUSED(r5);
	if (!m)
		return 0;
	m->usage = 1;
	/* the program reads the mask (the verifier refuses writes: "only read is
	 * supported"); the checked engine lets it */
	if (bpfrt_run_grant(rc, m->bits, CPUMASK_BYTES, 0)) {
		free(m);
		return 0;
	}
	return (uint64_t)(uintptr_t)m->bits;
}

uint64_t brt_kfunc_bpf_cpumask_acquire(uint64_t p, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *rc)
{
	struct cpumask_obj *m = cpumask_of(p);

	UNUSED(r2);
	UNUSED(r3);
	UNUSED(r4);
	UNUSED(r5);
	UNUSED(rc);
	if (m)
		__atomic_add_fetch(&m->usage, 1, __ATOMIC_RELAXED);
	return p;
}

uint64_t brt_kfunc_bpf_cpumask_release(uint64_t p, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *rc)
{
	struct cpumask_obj *m = cpumask_of(p);

	UNUSED(r2);
	UNUSED(r3);
	UNUSED(r4);
	UNUSED(r5);
	UNUSED(rc);
	if (m && !__atomic_sub_fetch(&m->usage, 1, __ATOMIC_ACQ_REL))
		free(m);
	return 0;
}

const brt_helper_fn brt_kfunc_fns[BRT_KFUNC_COUNT] = {
#define KFUNC(name, flags, sets) [BRT_KFUNC_##name] = brt_kfunc_##name,
#include "vm/kfuncs.def"
#undef KFUNC
};
