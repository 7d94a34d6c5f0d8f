/* xlated.c - the kernel's view of a program for OBJ_GET_INFO_BY_FD's xlated_prog_insns.
 *
 * bpfrt runs a program's instructions as they were loaded; the kernel reports the ones
 * its verifier left after rewriting them, and `bpftool prog dump xlated` prints those.
 * This builds what Linux 6.18 on x86-64 with the JIT on would have, from the stored
 * instructions and what bpfrt's verifier found on each (prog->xflags, prog->xmap), in
 * the order bpf_check() applies its passes (the kernel's code read, not copied):
 *  - bpf_loop calls with flags 0 and one callback inlined (optimize_bpf_loop());
 *  - dead code: with bpf_capable, branches never taken hard-wired, unreached
 *    instructions and `goto +0` removed; without it, unreached ones become `goto -1`;
 *  - context accesses converted: XDP's xdp_md to xdp_buff, __sk_buff's whole-field
 *    loads and stores to sk_buff (socket filter, tc, cgroup skb, lwt); other types and
 *    narrower loads keep theirs; tc's and lwt_xmit's unclone prologue when the
 *    program writes into the packet;
 *  - do_misc_fixups(): divisions and modulos by a register guarded, LD_ABS/LD_IND as
 *    calls of bpf_skb_load_helper_*_no_cache (socket filters, tc), map helpers bound to
 *    the map type's functions or its map_gen_lookup() inlined, tail calls marked,
 *    bpf_jiffies64 and bpf_get_smp_processor_id inlined, every other helper call's
 *    immediate the distance from __bpf_call_base to the kernel function implementing
 *    it in this program type (from /proc/kallsyms: bpftool turns it back into the
 *    name; zero when kallsyms hides addresses, as the kernel's bpf_dump_raw_ok()), and
 *    a kfunc call's the distance to the kernel function of its BTF id;
 *  - jit_subprogs(): a bpf-to-bpf call keeps its offset in off and gets the callee's
 *    subprogram index as imm;
 *  - bpf_insn_prepare_dump(): map pointers back as map ids, tail calls as calls.
 * Branches are re-targeted as bpf_patch_insn_data() does (a jump to a patched
 * instruction lands on the patch's first one).  Struct offsets are 6.18 x86-64's (its
 * BTF).  Not done (docs/STATUS.md #18): other program types' context conversions and
 * narrower loads, Spectre masking of unprivileged programs,
 * the address in the inlined bpf_get_smp_processor_id (not in kallsyms).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "btf/btf.h"
#include "maps/maps.h"
#include "verifier/verifier.h"

/* 6.18 x86-64 (vmlinux BTF): offsetof(struct bpf_array, value) (= pptrs),
 * offsetof(struct htab_elem, key), offsetof(struct htab_elem, lru_node) +
 * offsetof(struct bpf_lru_node, ref), struct xdp_buff's fields, xdp_rxq_info.dev /
 * .queue_index, xdp_txq_info.dev, net_device.ifindex */
#define K_ARRAY_VALUE 312
#define K_HTAB_KEY 48
#define K_HTAB_LRU_REF 35
#define K_XDP_DATA 0
#define K_XDP_DATA_END 8
#define K_XDP_DATA_META 16
#define K_XDP_RXQ 32
#define K_XDP_TXQ 40
#define K_RXQ_DEV 0
#define K_RXQ_QUEUE_INDEX 8
#define K_TXQ_DEV 0
#define K_NETDEV_IFINDEX 224
/* struct sk_buff's fields (sk_buff.cb holds struct qdisc_skb_cb: data at 8, tc_classid at
 * 6; struct bpf_skb_data_end: data_meta at 32, data_end at 40) */
#define K_SKB_DEV 16
#define K_SKB_CB 40
#define K_SKB_LEN 112
#define K_SKB_QUEUE_MAPPING 124
#define K_SKB_PKT_TYPE 128
#define K_SKB_TC_INDEX 132
#define K_SKB_PRIORITY 140
#define K_SKB_IIF 144
#define K_SKB_HASH 148
#define K_SKB_VLAN_ALL 152
#define K_SKB_VLAN_PROTO 152
#define K_SKB_VLAN_TCI 154
#define K_SKB_NAPI_ID 156
#define K_SKB_CLONED 126
#define K_SKB_MARK 164
#define K_SKB_PROTOCOL 176
#define K_SKB_DATA 200
#define K_QDISC_CB_DATA 8
#define K_QDISC_CB_CLASSID 6
#define K_DATA_END_META 32
#define K_DATA_END_END 40

#define PATCH_MAX 32

/* one instruction of the view being built */
struct xinsn {
	struct bpf_insn in;
	uint8_t flags;    /* BRT_INSN_* of the stored insn it is, 0 for generated ones */
	uint16_t map;     /* helper call: prog->pm index + 1 */
	const char *sym;  /* call: the kernel function it calls, NULL: keep imm */
};

struct xl {
	struct xinsn *x;
	uint32_t n;
	uint32_t *pos;    /* per stored insn (+1): its place in x */
	uint32_t norig;
};

/* What a pass makes of one instruction: -1 keeps it (jumps re-targeted), else cnt
 * instructions in out[] (0 removes it); jump (when >= 0) is the one of them whose
 * offset still counts from the old instruction (re-targeted too). */
struct patch {
	struct xinsn out[PATCH_MAX];
	int jump;
};

typedef int (*xl_fn)(struct xl *xl, uint32_t i, struct patch *p, const void *arg);

static int is_lddw(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | BPF_DW);
}

/* The relative target an instruction carries (1 when it has one). */
static int rel_target(const struct bpf_insn *in, int32_t *rel)
{
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

	if (is_lddw(in) && in->src_reg == BPF_PSEUDO_FUNC) {
		*rel = in->imm;
		return 1;
	}
	if (cls != BPF_JMP && cls != BPF_JMP32)
		return 0;
	if (op == BPF_EXIT)
		return 0;
	if (op == BPF_CALL) {
		if (in->src_reg != BPF_PSEUDO_CALL)
			return 0;
		*rel = in->imm;
		return 1;
	}
	*rel = in->code == (BPF_JMP32 | BPF_JA) ? in->imm : in->off;
	return 1;
}

static void set_rel(struct bpf_insn *in, int32_t rel)
{
	if ((is_lddw(in) && in->src_reg == BPF_PSEUDO_FUNC) ||
	    (in->code == (BPF_JMP | BPF_CALL)) || in->code == (BPF_JMP32 | BPF_JA))
		in->imm = rel;
	else
		in->off = (int16_t)rel;
}

/* Rebuild xl with fn's patches, re-target the jumps that were kept, move pos. */
static int xl_pass(struct xl *xl, xl_fn fn, const void *arg)
{
	uint32_t n = xl->n, cap = n + 16, m = 0, nfix = 0;
	struct xinsn *out = malloc(cap * sizeof(*out));
	uint32_t *start = malloc((n + 1) * sizeof(*start));
	/* kept jumps: new index, old target */
	uint32_t (*fix)[2] = malloc((n ? n : 1) * sizeof(*fix));
	struct patch p;
	int err = 0;

	if (!out || !start || !fix) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		int slots = is_lddw(&xl->x[i].in) && i + 1 < n ? 2 : 1;
		int cnt = fn(xl, i, &p, arg);
		int32_t rel;

		start[i] = m;
		if (slots == 2)
			start[i + 1] = m + (cnt < 0 ? 1 : 0);
		if (m + (cnt < 0 ? 2 : (uint32_t)cnt) > cap) {
			struct xinsn *grown;

			cap = cap * 2 + PATCH_MAX;
			grown = realloc(out, cap * sizeof(*out));
			if (!grown) {
				err = -ENOMEM;
				goto out;
			}
			out = grown;
		}
		if (cnt < 0) {
			if (rel_target(&xl->x[i].in, &rel) && i + rel + 1 <= n) {
				fix[nfix][0] = m;
				fix[nfix++][1] = (uint32_t)(i + rel + 1);
			}
			for (int k = 0; k < slots; k++)
				out[m++] = xl->x[i + k];
			i += (uint32_t)slots - 1;
			continue;
		}
		for (int k = 0; k < cnt; k++) {
			if (k == p.jump && rel_target(&p.out[k].in, &rel) && i + rel + 1 <= n) {
				fix[nfix][0] = m;
				fix[nfix++][1] = (uint32_t)(i + rel + 1);
			}
			out[m++] = p.out[k];
		}
		i += (uint32_t)slots - 1;
	}
	start[n] = m;
	for (uint32_t k = 0; k < nfix; k++)
		set_rel(&out[fix[k][0]].in, (int32_t)start[fix[k][1]] - (int32_t)fix[k][0] - 1);
	for (uint32_t k = 0; k <= xl->norig; k++)
		xl->pos[k] = start[xl->pos[k]];
	free(xl->x);
	xl->x = out;
	xl->n = m;
	out = NULL;
out:
	free(out);
	free(start);
	free(fix);
	return err;
}

static struct xinsn raw(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	return (struct xinsn){ .in = { .code = code, .dst_reg = dst, .src_reg = src, .off = off,
				       .imm = imm } };
}

/* ---- optimize_bpf_loop() ---------------------------------------------------------------- */

/* Subprogram starts of the stored instructions (0 and every call or function address
 * target), ascending; their count. */
static uint32_t stored_starts(const struct xl *xl, uint32_t *starts)
{
	uint32_t ns = 0;

	starts[ns++] = 0;
	for (uint32_t i = 0; i < xl->n; i++) {
		const struct bpf_insn *in = &xl->x[i].in;
		int64_t t = (int64_t)i + in->imm + 1;
		uint32_t k = 0;

		if (!((in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL) ||
		      (is_lddw(in) && in->src_reg == BPF_PSEUDO_FUNC)) ||
		    t < 0 || t >= xl->n)
			continue;
		while (k < ns && starts[k] != (uint32_t)t)
			k++;
		if (k == ns)
			starts[ns++] = (uint32_t)t;
	}
	for (uint32_t a = 1; a < ns; a++)
		for (uint32_t b = a; b > 0 && starts[b - 1] > starts[b]; b--) {
			uint32_t tmp = starts[b];

			starts[b] = starts[b - 1];
			starts[b - 1] = tmp;
		}
	return ns;
}

struct loops {
	const struct brt_prog *prog;
	const uint32_t *starts;
	uint32_t nstarts;
};

/* inline_bpf_loop(): the loop with r6-r8 spilled below the subprogram's stack */
static int loop_inline(struct xl *xl, uint32_t i, struct patch *p, const void *arg)
{
	const struct loops *l = arg;
	uint32_t cb, k = 0;
	int32_t base;
	int n = 0;

	if (!l->prog->xloop || i >= l->prog->insn_cnt || !l->prog->xloop[i] ||
	    xl->x[i].in.code != (BPF_JMP | BPF_CALL) || xl->x[i].in.src_reg)
		return -1;
	cb = l->prog->xloop[i] - 1;
	while (k + 1 < l->nstarts && l->starts[k + 1] <= i)
		k++;
	if (k >= l->prog->nxstack)
		return -1;
	base = -(int32_t)(((l->prog->xstack[k] + 7) & ~7u) + 24);
	p->out[n++] = raw(BPF_JMP | BPF_JLE | BPF_K, BPF_REG_1, 0, 2, 1 << 23);
	p->out[n++] = raw(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, -E2BIG);
	p->out[n++] = raw(BPF_JMP | BPF_JA, 0, 0, 16, 0);
	for (int r = 0; r < 3; r++)
		p->out[n++] = raw(BPF_STX | BPF_DW | BPF_MEM, BPF_REG_10, (uint8_t)(BPF_REG_6 + r),
				  (int16_t)(base + 8 * r), 0);
	p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
	p->out[n++] = raw(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_7, 0, 0, 0);
	p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_8, BPF_REG_3, 0, 0);
	p->out[n++] = raw(BPF_JMP | BPF_JGE | BPF_X, BPF_REG_7, BPF_REG_6, 5, 0);
	p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_7, 0, 0);
	p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_8, 0, 0);
	/* the callback's call, its target counted from the old instruction */
	p->jump = n;
	p->out[n++] = raw(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, (int32_t)cb - (int32_t)i - 1);
	p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_7, 0, 0, 1);
	p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, -6, 0);
	p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_7, 0, 0);
	for (int r = 0; r < 3; r++)
		p->out[n++] = raw(BPF_LDX | BPF_DW | BPF_MEM, (uint8_t)(BPF_REG_6 + r), BPF_REG_10,
				  (int16_t)(base + 8 * r), 0);
	/* the patch is reached: its instructions count as seen */
	for (int k2 = 0; k2 < n; k2++)
		p->out[k2].flags = BRT_INSN_SEEN;
	return n;
}

/* ---- dead code ------------------------------------------------------------------------- */

static int is_cond_jump(uint8_t code)
{
	uint8_t op = BPF_OP(code);

	if (BPF_CLASS(code) == BPF_JMP32)
		return op != BPF_JA;
	return BPF_CLASS(code) == BPF_JMP && op != BPF_JA && op != BPF_EXIT && op != BPF_CALL;
}

static int seen(const struct xl *xl, int64_t i)
{
	return i >= 0 && i < xl->n && (xl->x[i].flags & BRT_INSN_SEEN);
}

/* opt_hard_wire_dead_code_branches(), in place */
static void hard_wire(struct xl *xl)
{
	for (uint32_t i = 0; i < xl->n; i++) {
		struct bpf_insn *in = &xl->x[i].in;

		if (!is_cond_jump(in->code))
			continue;
		if (!seen(xl, i + 1))
			*in = (struct bpf_insn){ .code = BPF_JMP | BPF_JA, .off = in->off };
		else if (!seen(xl, (int64_t)i + 1 + in->off))
			*in = (struct bpf_insn){ .code = BPF_JMP | BPF_JA };
	}
}

static int drop_dead(struct xl *xl, uint32_t i, struct patch *p, const void *arg)
{
	(void)p, (void)arg;
	return xl->x[i].flags & BRT_INSN_SEEN ? -1 : 0;
}

static int drop_nops(struct xl *xl, uint32_t i, struct patch *p, const void *arg)
{
	static const struct bpf_insn nop = { .code = BPF_JMP | BPF_JA };

	(void)p, (void)arg;
	return memcmp(&xl->x[i].in, &nop, sizeof(nop)) ? -1 : 0;
}

/* ---- context accesses ------------------------------------------------------------------ */

static struct xinsn ldx(uint8_t size, uint8_t dst, uint8_t src, int16_t off)
{
	return (struct xinsn){ .in = { .code = BPF_LDX | size | BPF_MEM, .dst_reg = dst,
				       .src_reg = src, .off = off } };
}

/* xdp_convert_ctx_access() for the 4-byte loads the verifier allows */
static int xdp_ctx(struct xl *xl, uint32_t i, struct patch *p, const void *arg)
{
	const struct bpf_insn *in = &xl->x[i].in;
	uint8_t d = in->dst_reg, s = in->src_reg;
	int n = 0;

	(void)arg;
	if (!(xl->x[i].flags & BRT_INSN_CTX) || in->code != (BPF_LDX | BPF_W | BPF_MEM))
		return -1;
	p->jump = -1;
	switch (in->off) {
	case offsetof(struct xdp_md, data):
		p->out[n++] = ldx(BPF_DW, d, s, K_XDP_DATA);
		break;
	case offsetof(struct xdp_md, data_meta):
		p->out[n++] = ldx(BPF_DW, d, s, K_XDP_DATA_META);
		break;
	case offsetof(struct xdp_md, data_end):
		p->out[n++] = ldx(BPF_DW, d, s, K_XDP_DATA_END);
		break;
	case offsetof(struct xdp_md, ingress_ifindex):
		p->out[n++] = ldx(BPF_DW, d, s, K_XDP_RXQ);
		p->out[n++] = ldx(BPF_DW, d, d, K_RXQ_DEV);
		p->out[n++] = ldx(BPF_W, d, d, K_NETDEV_IFINDEX);
		break;
	case offsetof(struct xdp_md, rx_queue_index):
		p->out[n++] = ldx(BPF_DW, d, s, K_XDP_RXQ);
		p->out[n++] = ldx(BPF_W, d, d, K_RXQ_QUEUE_INDEX);
		break;
	case offsetof(struct xdp_md, egress_ifindex):
		p->out[n++] = ldx(BPF_DW, d, s, K_XDP_TXQ);
		p->out[n++] = ldx(BPF_DW, d, d, K_TXQ_DEV);
		p->out[n++] = ldx(BPF_W, d, d, K_NETDEV_IFINDEX);
		break;
	default:
		return -1;
	}
	return n;
}

/* bpf_convert_ctx_access() (tc_cls_act_convert_ctx_access() for tc's ifindex) for
 * __sk_buff loads and stores of a whole field; narrower loads and other fields keep the
 * instruction (bpfrt reads its own __sk_buff) */
static int skb_ctx(struct xl *xl, uint32_t i, struct patch *p, const void *arg)
{
	const struct bpf_insn *in = &xl->x[i].in;
	uint8_t d = in->dst_reg, s = in->src_reg, cls = BPF_CLASS(in->code);
	uint8_t size = BPF_SIZE(in->code);
	int tc = *(const int *)arg, n = 0, store = cls == BPF_STX || cls == BPF_ST;
	int16_t off = in->off;

	if (!(xl->x[i].flags & BRT_INSN_CTX) || BPF_MODE(in->code) != BPF_MEM ||
	    (cls != BPF_LDX && !store))
		return -1;
	p->jump = -1;
	/* the store as the kernel's BPF_EMIT_STORE(): the same insn at the new offset */
#define EMIT_STORE(sz, o)                                                                      \
	(p->out[n] = xl->x[i], p->out[n].in.code = (uint8_t)(cls | BPF_MEM | (sz)),            \
	 p->out[n].in.off = (int16_t)(o), p->out[n].flags = 0, n++)
	if (off >= (int)offsetof(struct __sk_buff, cb[0]) &&
	    off < (int)offsetof(struct __sk_buff, cb[4]) + 4) {
		int16_t o = (int16_t)(off - offsetof(struct __sk_buff, cb[0]) + K_SKB_CB +
				      K_QDISC_CB_DATA);

		if (store)
			EMIT_STORE(size, o);
		else
			p->out[n++] = ldx(size, d, s, o);
		return n;
	}
	if (size != BPF_W)
		return -1;
	switch (off) {
	case offsetof(struct __sk_buff, mark):
	case offsetof(struct __sk_buff, priority): {
		int16_t o = off == offsetof(struct __sk_buff, mark) ? K_SKB_MARK : K_SKB_PRIORITY;

		if (store)
			EMIT_STORE(BPF_W, o);
		else
			p->out[n++] = ldx(BPF_W, d, s, o);
		return n;
	}
	case offsetof(struct __sk_buff, tc_index):
		if (store)
			EMIT_STORE(BPF_H, K_SKB_TC_INDEX);
		else
			p->out[n++] = ldx(BPF_H, d, s, K_SKB_TC_INDEX);
		return n;
	case offsetof(struct __sk_buff, tc_classid):
		if (store)
			EMIT_STORE(BPF_H, K_SKB_CB + K_QDISC_CB_CLASSID);
		else
			p->out[n++] = ldx(BPF_H, d, s, K_SKB_CB + K_QDISC_CB_CLASSID);
		return n;
	default:
		break;
	}
#undef EMIT_STORE
	if (store)
		return -1;
	switch (off) {
	case offsetof(struct __sk_buff, len):
		p->out[n++] = ldx(BPF_W, d, s, K_SKB_LEN);
		break;
	case offsetof(struct __sk_buff, pkt_type):
		p->out[n++] = ldx(BPF_B, d, s, K_SKB_PKT_TYPE);
		p->out[n++] = raw(BPF_ALU | BPF_AND | BPF_K, d, 0, 0, 7);
		break;
	case offsetof(struct __sk_buff, queue_mapping):
		p->out[n++] = ldx(BPF_H, d, s, K_SKB_QUEUE_MAPPING);
		break;
	case offsetof(struct __sk_buff, protocol):
		p->out[n++] = ldx(BPF_H, d, s, K_SKB_PROTOCOL);
		break;
	case offsetof(struct __sk_buff, vlan_present):
		p->out[n++] = ldx(BPF_W, d, s, K_SKB_VLAN_ALL);
		p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, d, 0, 1, 0);
		p->out[n++] = raw(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, 1);
		break;
	case offsetof(struct __sk_buff, vlan_tci):
		p->out[n++] = ldx(BPF_H, d, s, K_SKB_VLAN_TCI);
		break;
	case offsetof(struct __sk_buff, vlan_proto):
		p->out[n++] = ldx(BPF_H, d, s, K_SKB_VLAN_PROTO);
		break;
	case offsetof(struct __sk_buff, ingress_ifindex):
		p->out[n++] = ldx(BPF_W, d, s, K_SKB_IIF);
		break;
	case offsetof(struct __sk_buff, ifindex):
		p->out[n++] = ldx(BPF_DW, d, s, K_SKB_DEV);
		if (!tc)
			p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, d, 0, 1, 0);
		p->out[n++] = ldx(BPF_W, d, d, K_NETDEV_IFINDEX);
		break;
	case offsetof(struct __sk_buff, hash):
		p->out[n++] = ldx(BPF_W, d, s, K_SKB_HASH);
		break;
	case offsetof(struct __sk_buff, data):
		p->out[n++] = ldx(BPF_DW, d, s, K_SKB_DATA);
		break;
	case offsetof(struct __sk_buff, data_meta):
		p->out[n++] = ldx(BPF_DW, d, s, K_SKB_CB + K_DATA_END_META);
		break;
	case offsetof(struct __sk_buff, data_end):
		p->out[n++] = ldx(BPF_DW, d, s, K_SKB_CB + K_DATA_END_END);
		break;
	case offsetof(struct __sk_buff, napi_id):
		p->out[n++] = ldx(BPF_W, d, s, K_SKB_NAPI_ID);
		break;
	default:
		return -1;
	}
	return n;
}

/* bpf_unclone_prologue() of tc and lwt_xmit programs that write into the packet: a
 * clone is made private (bpf_skb_pull_data) before the first instruction */
static int unclone_prologue(struct xl *xl, uint32_t i, struct patch *p, const void *arg)
{
	int n = 0;

	(void)arg;
	if (i)
		return -1;
	p->out[n++] = ldx(BPF_B, BPF_REG_6, BPF_REG_1, K_SKB_CLONED);
	p->out[n++] = raw(BPF_ALU | BPF_AND | BPF_K, BPF_REG_6, 0, 0, 1);
	p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_6, 0, 7, 0);
	p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
	p->out[n++] = raw(BPF_ALU64 | BPF_XOR | BPF_X, BPF_REG_2, BPF_REG_2, 0, 0);
	p->out[n++] = raw(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_skb_pull_data);
	p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0);
	p->out[n++] = raw(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 2); /* TC_ACT_SHOT */
	p->out[n++] = raw(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0);
	p->jump = n;
	p->out[n++] = xl->x[0];
	if (is_lddw(&xl->x[0].in) && xl->n > 1)
		p->out[n++] = xl->x[1];
	return n;
}

/* ---- do_misc_fixups() ------------------------------------------------------------------ */

struct fixups {
	const struct brt_prog *prog;
	int bypass_spec_v1; /* perfmon_capable(): no Spectre v1 masking */
};

static struct xinsn call_sym(const char *sym)
{
	struct xinsn x = raw(BPF_JMP | BPF_CALL, 0, 0, 0, 0);

	x.sym = sym;
	return x;
}

/* BPF_ALU64/BPF_ALU | BPF_DIV/BPF_MOD | BPF_X: the kernel's guards */
static int div_guard(const struct xinsn *xi, struct patch *p)
{
	const struct bpf_insn *in = &xi->in;
	int is64 = BPF_CLASS(in->code) == BPF_ALU64, isdiv = BPF_OP(in->code) == BPF_DIV;
	uint8_t alu = is64 ? BPF_ALU64 : BPF_ALU, jmp = is64 ? BPF_JMP : BPF_JMP32;
	uint8_t d = in->dst_reg, s = in->src_reg, ax = MAX_BPF_REG;
	int n = 0;

	if (isdiv && in->off == 1) {
		p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, ax, s, 0, 0);
		p->out[n++] = raw(alu | BPF_ADD | BPF_K, ax, 0, 0, 1);
		p->out[n++] = raw(jmp | BPF_JGT | BPF_K, ax, 0, 4, 1);
		p->out[n++] = raw(jmp | BPF_JEQ | BPF_K, ax, 0, 1, 0);
		p->out[n++] = raw(alu | BPF_MOV | BPF_K, d, 0, 0, 0);
		p->out[n++] = raw(alu | BPF_NEG | BPF_K, d, 0, 0, 0);
		p->out[n++] = raw(BPF_JMP | BPF_JA, 0, 0, 1, 0);
		p->out[n++] = *xi;
	} else if (!isdiv && in->off == 1) {
		p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, ax, s, 0, 0);
		p->out[n++] = raw(alu | BPF_ADD | BPF_K, ax, 0, 0, 1);
		p->out[n++] = raw(jmp | BPF_JGT | BPF_K, ax, 0, 3, 1);
		p->out[n++] = raw(jmp | BPF_JEQ | BPF_K, ax, 0, (int16_t)(3 + (is64 ? 0 : 1)), 1);
		p->out[n++] = raw(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, 0);
		p->out[n++] = raw(BPF_JMP | BPF_JA, 0, 0, 1, 0);
		p->out[n++] = *xi;
		if (!is64) {
			p->out[n++] = raw(BPF_JMP | BPF_JA, 0, 0, 1, 0);
			p->out[n++] = raw(BPF_ALU | BPF_MOV | BPF_X, d, d, 0, 0);
		}
	} else if (isdiv) {
		p->out[n++] = raw(jmp | BPF_JNE | BPF_K, s, 0, 2, 0);
		p->out[n++] = raw(BPF_ALU | BPF_XOR | BPF_X, d, d, 0, 0);
		p->out[n++] = raw(BPF_JMP | BPF_JA, 0, 0, 1, 0);
		p->out[n++] = *xi;
	} else {
		p->out[n++] = raw(jmp | BPF_JEQ | BPF_K, s, 0, (int16_t)(1 + (is64 ? 0 : 1)), 0);
		p->out[n++] = *xi;
		if (!is64) {
			p->out[n++] = raw(BPF_JMP | BPF_JA, 0, 0, 1, 0);
			p->out[n++] = raw(BPF_ALU | BPF_MOV | BPF_X, d, d, 0, 0);
		}
	}
	return n;
}

/* The kernel's struct bpf_map_ops functions of a map type (NULL: none), by helper. */
struct kops {
	uint32_t type;
	const char *lookup, *update, *delete_, *push, *pop, *peek, *redirect, *for_each,
		*lookup_percpu;
	int gen; /* map_gen_lookup: 0 none, else enum gen */
};

enum gen { GEN_NONE, GEN_ARRAY, GEN_PERCPU_ARRAY, GEN_ARRAY_OF_MAPS, GEN_HTAB, GEN_HTAB_LRU,
	   GEN_HTAB_PERCPU, GEN_HTAB_OF_MAPS };

static const struct kops kops[] = {
	{ BPF_MAP_TYPE_HASH, "htab_map_lookup_elem", "htab_map_update_elem",
	  "htab_map_delete_elem", NULL, NULL, NULL, NULL, "bpf_for_each_hash_elem", NULL,
	  GEN_HTAB },
	{ BPF_MAP_TYPE_LRU_HASH, "htab_lru_map_lookup_elem", "htab_lru_map_update_elem",
	  "htab_lru_map_delete_elem", NULL, NULL, NULL, NULL, "bpf_for_each_hash_elem", NULL,
	  GEN_HTAB_LRU },
	{ BPF_MAP_TYPE_PERCPU_HASH, "htab_percpu_map_lookup_elem", "htab_percpu_map_update_elem",
	  "htab_map_delete_elem", NULL, NULL, NULL, NULL, "bpf_for_each_hash_elem",
	  "htab_percpu_map_lookup_percpu_elem", GEN_HTAB_PERCPU },
	{ BPF_MAP_TYPE_LRU_PERCPU_HASH, "htab_lru_percpu_map_lookup_elem",
	  "htab_lru_percpu_map_update_elem", "htab_lru_map_delete_elem", NULL, NULL, NULL, NULL,
	  "bpf_for_each_hash_elem", "htab_lru_percpu_map_lookup_percpu_elem", GEN_NONE },
	{ BPF_MAP_TYPE_HASH_OF_MAPS, "htab_of_map_lookup_elem", NULL, "htab_map_delete_elem",
	  NULL, NULL, NULL, NULL, NULL, NULL, GEN_HTAB_OF_MAPS },
	{ BPF_MAP_TYPE_ARRAY, "array_map_lookup_elem", "array_map_update_elem",
	  "array_map_delete_elem", NULL, NULL, NULL, NULL, "bpf_for_each_array_elem", NULL,
	  GEN_ARRAY },
	{ BPF_MAP_TYPE_PERCPU_ARRAY, "percpu_array_map_lookup_elem", "array_map_update_elem",
	  "array_map_delete_elem", NULL, NULL, NULL, NULL, "bpf_for_each_array_elem",
	  "percpu_array_map_lookup_percpu_elem", GEN_PERCPU_ARRAY },
	{ BPF_MAP_TYPE_ARRAY_OF_MAPS, "array_of_map_lookup_elem", NULL, "fd_array_map_delete_elem",
	  NULL, NULL, NULL, NULL, NULL, NULL, GEN_ARRAY_OF_MAPS },
	{ BPF_MAP_TYPE_PROG_ARRAY, "fd_array_map_lookup_elem", NULL, "fd_array_map_delete_elem",
	  NULL, NULL, NULL, NULL, NULL, NULL, GEN_NONE },
	{ BPF_MAP_TYPE_PERF_EVENT_ARRAY, "fd_array_map_lookup_elem", NULL,
	  "fd_array_map_delete_elem", NULL, NULL, NULL, NULL, NULL, NULL, GEN_NONE },
	{ BPF_MAP_TYPE_QUEUE, "queue_stack_map_lookup_elem", "queue_stack_map_update_elem",
	  "queue_stack_map_delete_elem", "queue_stack_map_push_elem", "queue_map_pop_elem",
	  "queue_map_peek_elem", NULL, NULL, NULL, GEN_NONE },
	{ BPF_MAP_TYPE_STACK, "queue_stack_map_lookup_elem", "queue_stack_map_update_elem",
	  "queue_stack_map_delete_elem", "queue_stack_map_push_elem", "stack_map_pop_elem",
	  "stack_map_peek_elem", NULL, NULL, NULL, GEN_NONE },
	{ BPF_MAP_TYPE_DEVMAP, "dev_map_lookup_elem", "dev_map_update_elem", "dev_map_delete_elem",
	  NULL, NULL, NULL, "dev_map_redirect", NULL, NULL, GEN_NONE },
	{ BPF_MAP_TYPE_DEVMAP_HASH, "dev_map_hash_lookup_elem", "dev_map_hash_update_elem",
	  "dev_map_hash_delete_elem", NULL, NULL, NULL, "dev_hash_map_redirect", NULL, NULL,
	  GEN_NONE },
	{ BPF_MAP_TYPE_CPUMAP, "cpu_map_lookup_elem", "cpu_map_update_elem", "cpu_map_delete_elem",
	  NULL, NULL, NULL, "cpu_map_redirect", NULL, NULL, GEN_NONE },
	{ BPF_MAP_TYPE_BLOOM_FILTER, "bloom_map_lookup_elem", "bloom_map_update_elem",
	  "bloom_map_delete_elem", "bloom_map_push_elem", "bloom_map_pop_elem",
	  "bloom_map_peek_elem", NULL, NULL, NULL, GEN_NONE },
	{ BPF_MAP_TYPE_RINGBUF, "ringbuf_map_lookup_elem", "ringbuf_map_update_elem",
	  "ringbuf_map_delete_elem", NULL, NULL, NULL, NULL, NULL, NULL, GEN_NONE },
};

static const struct kops *find_kops(uint32_t type)
{
	for (size_t i = 0; i < sizeof(kops) / sizeof(kops[0]); i++)
		if (kops[i].type == type)
			return &kops[i];
	return NULL;
}

static int ilog2_exact(uint32_t v)
{
	if (!v || (v & (v - 1)))
		return -1;
	return __builtin_ctz(v);
}

static uint32_t index_mask(uint32_t max_entries)
{
	uint64_t m = 1;

	while (m < max_entries)
		m <<= 1;
	return (uint32_t)(m - 1);
}

/* BPF_MOV64_PERCPU_REG(dst, src) */
static struct xinsn mov_percpu(uint8_t dst, uint8_t src)
{
	return raw(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, -1, 0);
}

/* ops->map_gen_lookup(): the lookup inlined; 0 when the type has none */
static int gen_lookup(const struct kops *ko, const struct brt_map *map, int bypass,
		      struct patch *p)
{
	uint32_t elem = (map->value_size + 7) & ~7u, mask = index_mask(map->max_entries);
	uint32_t key_off = K_HTAB_KEY + ((map->key_size + 7) & ~7u);
	int n = 0, sh = ilog2_exact(elem);

	if ((ko->gen == GEN_ARRAY || ko->gen == GEN_PERCPU_ARRAY) && (map->flags & BPF_F_INNER_MAP))
		return 0;
	switch (ko->gen) {
	case GEN_ARRAY:
	case GEN_ARRAY_OF_MAPS: {
		int of = ko->gen == GEN_ARRAY_OF_MAPS;

		if (of)
			elem = 8, sh = 3;
		p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, K_ARRAY_VALUE);
		p->out[n++] = ldx(BPF_W, BPF_REG_0, BPF_REG_2, 0);
		if (!bypass) {
			p->out[n++] = raw(BPF_JMP | BPF_JGE | BPF_K, BPF_REG_0, 0, of ? 6 : 4,
					  (int32_t)map->max_entries);
			p->out[n++] = raw(BPF_ALU | BPF_AND | BPF_K, BPF_REG_0, 0, 0, (int32_t)mask);
		} else {
			p->out[n++] = raw(BPF_JMP | BPF_JGE | BPF_K, BPF_REG_0, 0, of ? 5 : 3,
					  (int32_t)map->max_entries);
		}
		if (sh >= 0)
			p->out[n++] = raw(BPF_ALU64 | BPF_LSH | BPF_K, BPF_REG_0, 0, 0, sh);
		else
			p->out[n++] = raw(BPF_ALU64 | BPF_MUL | BPF_K, BPF_REG_0, 0, 0, (int32_t)elem);
		p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_X, BPF_REG_0, BPF_REG_1, 0, 0);
		if (of) {
			p->out[n++] = ldx(BPF_DW, BPF_REG_0, BPF_REG_0, 0);
			p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1, 0);
		}
		p->out[n++] = raw(BPF_JMP | BPF_JA, 0, 0, 1, 0);
		p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
		return n;
	}
	case GEN_PERCPU_ARRAY:
		p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, K_ARRAY_VALUE);
		p->out[n++] = ldx(BPF_W, BPF_REG_0, BPF_REG_2, 0);
		if (!bypass) {
			p->out[n++] = raw(BPF_JMP | BPF_JGE | BPF_K, BPF_REG_0, 0, 6,
					  (int32_t)map->max_entries);
			p->out[n++] = raw(BPF_ALU | BPF_AND | BPF_K, BPF_REG_0, 0, 0, (int32_t)mask);
		} else {
			p->out[n++] = raw(BPF_JMP | BPF_JGE | BPF_K, BPF_REG_0, 0, 5,
					  (int32_t)map->max_entries);
		}
		p->out[n++] = raw(BPF_ALU64 | BPF_LSH | BPF_K, BPF_REG_0, 0, 0, 3);
		p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_X, BPF_REG_0, BPF_REG_1, 0, 0);
		p->out[n++] = ldx(BPF_DW, BPF_REG_0, BPF_REG_0, 0);
		p->out[n++] = mov_percpu(BPF_REG_0, BPF_REG_0);
		p->out[n++] = raw(BPF_JMP | BPF_JA, 0, 0, 1, 0);
		p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
		return n;
	case GEN_HTAB:
		p->out[n++] = call_sym("__htab_map_lookup_elem");
		p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1, 0);
		p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_0, 0, 0, (int32_t)key_off);
		return n;
	case GEN_HTAB_LRU:
		p->out[n++] = call_sym("__htab_map_lookup_elem");
		p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 4, 0);
		p->out[n++] = ldx(BPF_B, BPF_REG_1, BPF_REG_0, K_HTAB_LRU_REF);
		p->out[n++] = raw(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_1, 0, 1, 0);
		p->out[n++] = raw(BPF_ST | BPF_B | BPF_MEM, BPF_REG_0, 0, K_HTAB_LRU_REF, 1);
		p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_0, 0, 0, (int32_t)key_off);
		return n;
	case GEN_HTAB_PERCPU:
		p->out[n++] = call_sym("__htab_map_lookup_elem");
		p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 3, 0);
		p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_0, 0, 0, (int32_t)key_off);
		p->out[n++] = ldx(BPF_DW, BPF_REG_0, BPF_REG_0, 0);
		p->out[n++] = mov_percpu(BPF_REG_0, BPF_REG_0);
		return n;
	case GEN_HTAB_OF_MAPS:
		p->out[n++] = call_sym("__htab_map_lookup_elem");
		p->out[n++] = raw(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0);
		p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_0, 0, 0, (int32_t)key_off);
		p->out[n++] = ldx(BPF_DW, BPF_REG_0, BPF_REG_0, 0);
		return n;
	default:
		return 0;
	}
}

/* The kernel function a helper call of this program type reaches when it is not the
 * plain bpf_<name> (the func of the type's func_proto), NULL otherwise. */
static const char *helper_func(uint32_t type, int32_t id)
{
	int xdp = type == BPF_PROG_TYPE_XDP;
	int tp = type == BPF_PROG_TYPE_TRACEPOINT;
	int raw_tp = type == BPF_PROG_TYPE_RAW_TRACEPOINT ||
		     type == BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE ||
		     type == BPF_PROG_TYPE_TRACING;
	int pe = type == BPF_PROG_TYPE_PERF_EVENT;
	int kprobe = type == BPF_PROG_TYPE_KPROBE;

	switch (id) {
	case BPF_FUNC_perf_event_output:
		return xdp ? "bpf_xdp_event_output" : tp ? "bpf_perf_event_output_tp" :
		       raw_tp ? "bpf_perf_event_output_raw_tp" :
		       kprobe || pe ? "bpf_perf_event_output" : "bpf_skb_event_output";
	case BPF_FUNC_skb_output: /* bpf_skb_output_proto's func */
		return "bpf_skb_event_output";
	case BPF_FUNC_xdp_output:
		return "bpf_xdp_event_output";
	case BPF_FUNC_get_stackid:
		return tp ? "bpf_get_stackid_tp" : raw_tp ? "bpf_get_stackid_raw_tp" :
		       pe ? "bpf_get_stackid_pe" : NULL;
	case BPF_FUNC_get_stack:
		return tp ? "bpf_get_stack_tp" : raw_tp ? "bpf_get_stack_raw_tp" :
		       pe ? "bpf_get_stack_pe" : NULL;
	case BPF_FUNC_get_prandom_u32:
		return "bpf_user_rnd_u32";
	case BPF_FUNC_probe_read:
		return "bpf_probe_read_compat";
	case BPF_FUNC_probe_read_str:
		return "bpf_probe_read_compat_str";
	case BPF_FUNC_get_func_ip:
		return kprobe ? "bpf_get_func_ip_kprobe" : "bpf_get_func_ip_tracing";
	case BPF_FUNC_redirect:
		return xdp ? "bpf_xdp_redirect" : NULL;
	case BPF_FUNC_fib_lookup:
		return xdp ? "bpf_xdp_fib_lookup" : "bpf_skb_fib_lookup";
	case BPF_FUNC_check_mtu:
		return xdp ? "bpf_xdp_check_mtu" : "bpf_skb_check_mtu";
	case BPF_FUNC_sk_lookup_tcp:
		return xdp ? "bpf_xdp_sk_lookup_tcp" : "bpf_tc_sk_lookup_tcp";
	case BPF_FUNC_sk_lookup_udp:
		return xdp ? "bpf_xdp_sk_lookup_udp" : "bpf_tc_sk_lookup_udp";
	case BPF_FUNC_skc_lookup_tcp:
		return xdp ? "bpf_xdp_skc_lookup_tcp" : "bpf_tc_skc_lookup_tcp";
	default:
		return NULL;
	}
}

static int misc_fixups(struct xl *xl, uint32_t i, struct patch *p, const void *arg)
{
	const struct fixups *f = arg;
	const struct brt_prog *prog = f->prog;
	struct xinsn *xi = &xl->x[i];
	struct bpf_insn *in = &xi->in;
	const struct brt_map *map;
	struct brt_map tmpl;
	const struct kops *ko;
	const char *sym = NULL;
	int n = 0;

	p->jump = -1;
	if ((BPF_CLASS(in->code) == BPF_ALU64 || BPF_CLASS(in->code) == BPF_ALU) &&
	    BPF_SRC(in->code) == BPF_X &&
	    (BPF_OP(in->code) == BPF_DIV || BPF_OP(in->code) == BPF_MOD))
		return div_guard(xi, p);
	if ((BPF_CLASS(in->code) == BPF_ALU64 || BPF_CLASS(in->code) == BPF_ALU) &&
	    BPF_SRC(in->code) == BPF_K && in->off == 1 && in->imm == -1 &&
	    (BPF_OP(in->code) == BPF_DIV || BPF_OP(in->code) == BPF_MOD)) {
		if (BPF_OP(in->code) == BPF_DIV)
			p->out[0] = raw((uint8_t)(BPF_CLASS(in->code) | BPF_NEG | BPF_K), in->dst_reg,
					0, 0, 0);
		else
			p->out[0] = raw(BPF_ALU | BPF_MOV | BPF_K, in->dst_reg, 0, 0, 0);
		return 1;
	}
	/* bpf_gen_ld_abs() of socket filters and tc (the context is in r6) */
	if (BPF_CLASS(in->code) == BPF_LD &&
	    (BPF_MODE(in->code) == BPF_ABS || BPF_MODE(in->code) == BPF_IND) &&
	    (prog->type == BPF_PROG_TYPE_SOCKET_FILTER || prog->type == BPF_PROG_TYPE_SCHED_CLS ||
	     prog->type == BPF_PROG_TYPE_SCHED_ACT)) {
		static const char *const load[] = {
			[BPF_B >> 3] = "bpf_skb_load_helper_8_no_cache",
			[BPF_H >> 3] = "bpf_skb_load_helper_16_no_cache",
			[BPF_W >> 3] = "bpf_skb_load_helper_32_no_cache",
		};

		if (BPF_SIZE(in->code) == BPF_DW)
			return -1;
		if (BPF_MODE(in->code) == BPF_ABS) {
			p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, in->imm);
		} else {
			p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, in->src_reg, 0, 0);
			if (in->imm)
				p->out[n++] = raw(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, in->imm);
		}
		p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0);
		p->out[n++] = call_sym(load[BPF_SIZE(in->code) >> 3]);
		p->out[n++] = raw(BPF_JMP | BPF_JSGE | BPF_K, BPF_REG_0, 0, 2, 0);
		p->out[n++] = raw(BPF_ALU | BPF_XOR | BPF_X, BPF_REG_0, BPF_REG_0, 0, 0);
		p->out[n++] = raw(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		return n;
	}
	/* fixup_kfunc_call(): a kernel function's call holds its address as a helper's */
	if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_KFUNC_CALL &&
	    !in->off && in->imm > 0 && brt_btf_vmlinux()) {
		const char *name = brt_btf_name(brt_btf_vmlinux(), (uint32_t)in->imm);

		if (name[0])
			xi->sym = name;
		return -1;
	}
	if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg)
		return -1;
	if (in->imm == BPF_FUNC_tail_call) {
		/* shown as a call of bpf_tail_call by bpf_insn_prepare_dump(); the unprivileged
		 * index masking is added before it */
		if (prog->xpriv == BRT_PRIV_ROOT || !xi->map || xi->map > prog->pm.n)
			return -1;
		map = prog->pm.maps[xi->map - 1];
		p->out[n++] = raw(BPF_JMP | BPF_JGE | BPF_K, BPF_REG_3, 0, 2,
				  (int32_t)map->max_entries);
		p->out[n++] = raw(BPF_ALU | BPF_AND | BPF_K, BPF_REG_3, 0, 0,
				  (int32_t)index_mask(map->max_entries));
		p->out[n++] = *xi;
		return n;
	}
	switch (in->imm) {
	case BPF_FUNC_map_lookup_elem:
	case BPF_FUNC_map_update_elem:
	case BPF_FUNC_map_delete_elem:
	case BPF_FUNC_map_push_elem:
	case BPF_FUNC_map_pop_elem:
	case BPF_FUNC_map_peek_elem:
	case BPF_FUNC_redirect_map:
	case BPF_FUNC_for_each_map_elem:
	case BPF_FUNC_map_lookup_percpu_elem:
		if (!xi->map || xi->map > prog->pm.n)
			break;
		map = prog->pm.maps[xi->map - 1];
		if (xi->flags & BRT_INSN_INNER_MAP) {
			/* the kernel binds the call to the inner map template (inner_map_meta) */
			memset(&tmpl, 0, sizeof(tmpl));
			if (brt_map_in_map_template(map, &tmpl.type, &tmpl.key_size,
						    &tmpl.value_size, &tmpl.max_entries,
						    &tmpl.flags))
				break;
			map = &tmpl;
		}
		ko = find_kops(map->type);
		if (!ko)
			break;
		if (in->imm == BPF_FUNC_map_lookup_elem) {
			n = gen_lookup(ko, map, f->bypass_spec_v1, p);
			if (n)
				return n;
		}
		sym = in->imm == BPF_FUNC_map_lookup_elem ? ko->lookup :
		      in->imm == BPF_FUNC_map_update_elem ? ko->update :
		      in->imm == BPF_FUNC_map_delete_elem ? ko->delete_ :
		      in->imm == BPF_FUNC_map_push_elem ? ko->push :
		      in->imm == BPF_FUNC_map_pop_elem ? ko->pop :
		      in->imm == BPF_FUNC_map_peek_elem ? ko->peek :
		      in->imm == BPF_FUNC_redirect_map ? ko->redirect :
		      in->imm == BPF_FUNC_for_each_map_elem ? ko->for_each : ko->lookup_percpu;
		if (sym) {
			xi->sym = sym;
			return -1;
		}
		break;
	case BPF_FUNC_jiffies64:
		/* r0 = &jiffies; r0 = *(u64 *)(r0 + 0) */
		p->out[n] = raw(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_0, 0, 0, 0);
		p->out[n++].sym = "jiffies";
		p->out[n++] = raw(0, 0, 0, 0, 0);
		p->out[n++] = ldx(BPF_DW, BPF_REG_0, BPF_REG_0, 0);
		return n;
	case BPF_FUNC_get_smp_processor_id:
		/* r0 = &cpu_number (not in kallsyms: 0 here); r0 = this CPU's; w0 = *r0 */
		p->out[n++] = raw(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
		p->out[n++] = mov_percpu(BPF_REG_0, BPF_REG_0);
		p->out[n++] = ldx(BPF_W, BPF_REG_0, BPF_REG_0, 0);
		return n;
	default:
		break;
	}
	sym = helper_func(prog->type, in->imm);
	xi->sym = sym ? sym : "";
	return -1;
}

/* ---- /proc/kallsyms -------------------------------------------------------------------- */

/* Names asked for before and their addresses (0: absent), read once per process for
 * the names a view needs: /proc/kallsyms is large and slow to generate. */
struct ksym {
	char *name;
	uint64_t addr;
};

static pthread_mutex_t ksym_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ksym *ksyms;
static size_t nksyms;

static struct ksym *ksym_find(const char *name)
{
	for (size_t i = 0; i < nksyms; i++)
		if (!strcmp(ksyms[i].name, name))
			return &ksyms[i];
	return NULL;
}

/* Make sure every name in want[] has an entry (one read of kallsyms for the new ones). */
static void ksym_load(const char *const *want, size_t nwant)
{
	size_t first = nksyms, added = 0;
	char line[512];
	FILE *f;

	for (size_t i = 0; i < nwant; i++) {
		struct ksym *grown;

		if (ksym_find(want[i]))
			continue;
		grown = realloc(ksyms, (nksyms + 1) * sizeof(*ksyms));
		if (!grown)
			return;
		ksyms = grown;
		ksyms[nksyms].name = strdup(want[i]);
		if (!ksyms[nksyms].name)
			return;
		ksyms[nksyms++].addr = 0;
		added++;
	}
	if (!added)
		return;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	while (added && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || strchr(line, '['))
			continue;
		for (size_t i = first; i < nksyms; i++)
			if (!ksyms[i].addr && !strcmp(ksyms[i].name, name)) {
				ksyms[i].addr = addr;
				break;
			}
	}
	fclose(f);
}

/* ---- the view -------------------------------------------------------------------------- */

static void free_xl(struct xl *xl)
{
	free(xl->x);
	free(xl->pos);
}

/* The default name of a helper's kernel function: bpf_<name> as the verifier logs it. */
static void helper_default(int32_t id, char *buf, size_t size)
{
	const char *name = brt_verifier_helper_name(id);

	snprintf(buf, size, "%s", name ? name : "");
}

/* Program types whose context is __sk_buff converted by bpf_convert_ctx_access() */
static int skb_ctx_type(uint32_t type)
{
	switch (type) {
	case BPF_PROG_TYPE_SOCKET_FILTER:
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_CGROUP_SKB:
	case BPF_PROG_TYPE_LWT_IN:
	case BPF_PROG_TYPE_LWT_OUT:
	case BPF_PROG_TYPE_LWT_XMIT:
	case BPF_PROG_TYPE_LWT_SEG6LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int build_view(const struct brt_prog *prog, int kernel_view, struct xl *xl)
{
	const struct bpf_insn *stored = prog->obj.base;
	const struct brt_prog_mapref *t = brt_prog_file_maps(prog);
	uint32_t n = prog->insn_cnt;
	int err = 0;

	memset(xl, 0, sizeof(*xl));
	xl->norig = n;
	xl->x = calloc(n ? n : 1, sizeof(*xl->x));
	xl->pos = malloc((n + 1) * sizeof(*xl->pos));
	if (!xl->x || !xl->pos) {
		free_xl(xl);
		return -ENOMEM;
	}
	xl->n = n;
	for (uint32_t i = 0; i <= n; i++)
		xl->pos[i] = i;
	for (uint32_t i = 0; i < n; i++) {
		xl->x[i].in = stored[i];
		/* without the verifier's facts (never materialised) everything counts as seen */
		xl->x[i].flags = prog->xflags ? prog->xflags[i] : BRT_INSN_SEEN;
		xl->x[i].map = prog->xmap ? prog->xmap[i] : 0;
	}
	if (kernel_view && prog->xflags) {
		struct fixups f = { .prog = prog, .bypass_spec_v1 = prog->xpriv == BRT_PRIV_ROOT };

		uint32_t *starts = malloc((xl->n + 1) * sizeof(*starts));
		struct loops l = { .prog = prog, .starts = starts };

		if (!starts) {
			free_xl(xl);
			return -ENOMEM;
		}
		l.nstarts = stored_starts(xl, starts);
		err = prog->xloop ? xl_pass(xl, loop_inline, &l) : 0;
		free(starts);
		if (err) {
			free_xl(xl);
			return err;
		}
		if (prog->xpriv != BRT_PRIV_UNPRIV) {
			hard_wire(xl);
			err = xl_pass(xl, drop_dead, NULL);
			if (!err)
				err = xl_pass(xl, drop_nops, NULL);
		} else {
			for (uint32_t i = 0; i < xl->n; i++)
				if (!(xl->x[i].flags & BRT_INSN_SEEN))
					xl->x[i].in = (struct bpf_insn){ .code = BPF_JMP | BPF_JA,
									 .off = -1 };
		}
		if (!err && prog->type == BPF_PROG_TYPE_XDP)
			err = xl_pass(xl, xdp_ctx, NULL);
		if (!err && skb_ctx_type(prog->type)) {
			int tc = prog->type == BPF_PROG_TYPE_SCHED_CLS ||
				 prog->type == BPF_PROG_TYPE_SCHED_ACT, writes = 0;

			for (uint32_t i = 0; i < xl->n; i++)
				writes |= xl->x[i].flags & BRT_INSN_PKT_WRITE;
			if (writes && (tc || prog->type == BPF_PROG_TYPE_LWT_XMIT))
				err = xl_pass(xl, unclone_prologue, NULL);
			if (!err)
				err = xl_pass(xl, skb_ctx, &tc);
		}
		if (!err)
			err = xl_pass(xl, misc_fixups, &f);
		if (err) {
			free_xl(xl);
			return err;
		}
	}
	/* map references as bpf_insn_prepare_dump() gives them */
	for (uint32_t i = 0; i + 1 < xl->n; i++) {
		struct bpf_insn *in = &xl->x[i].in;

		if (!is_lddw(in))
			continue;
		if ((in->src_reg == BPF_PSEUDO_MAP_IDX || in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE) &&
		    (uint32_t)in->imm < prog->nmaps) {
			in->src_reg = in->src_reg == BPF_PSEUDO_MAP_IDX ? BPF_PSEUDO_MAP_FD :
									  BPF_PSEUDO_MAP_VALUE;
			in->imm = (int32_t)t[in->imm].id;
		}
		i++;
	}
	return 0;
}

/* jit_subprogs(): a bpf-to-bpf call has its relative offset in off and the callee's
 * subprogram index in imm (subprograms start at 0 and at every call or function
 * address target). */
static void subprog_calls(struct xl *xl)
{
	uint32_t *starts = malloc((xl->n + 1) * sizeof(*starts)), ns = 0;

	if (!starts)
		return;
	starts[ns++] = 0;
	for (uint32_t i = 0; i < xl->n; i++) {
		const struct bpf_insn *in = &xl->x[i].in;
		int64_t target;

		if (!((in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL) ||
		      (is_lddw(in) && in->src_reg == BPF_PSEUDO_FUNC)))
			continue;
		target = (int64_t)i + in->imm + 1;
		if (target < 0 || target >= xl->n)
			continue;
		uint32_t k = 0;

		while (k < ns && starts[k] != (uint32_t)target)
			k++;
		if (k == ns)
			starts[ns++] = (uint32_t)target;
	}
	for (uint32_t a = 1; a < ns; a++)
		for (uint32_t b = a; b > 0 && starts[b - 1] > starts[b]; b--) {
			uint32_t tmp = starts[b];

			starts[b] = starts[b - 1];
			starts[b - 1] = tmp;
		}
	for (uint32_t i = 0; i < xl->n; i++) {
		struct bpf_insn *in = &xl->x[i].in;
		int64_t target = (int64_t)i + in->imm + 1;

		if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg != BPF_PSEUDO_CALL)
			continue;
		for (uint32_t k = 0; k < ns; k++)
			if (starts[k] == target) {
				in->off = (int16_t)in->imm;
				in->imm = (int32_t)k;
				break;
			}
	}
	free(starts);
}

/* Call immediates from /proc/kallsyms: the distance to __bpf_call_base, as the kernel
 * stores them; all 0 when kallsyms shows no addresses (the kernel's !bpf_dump_raw_ok()). */
static void resolve_calls(struct xl *xl)
{
	const char **want = malloc((xl->n + 1) * sizeof(*want));
	char (*names)[64] = calloc(xl->n ? xl->n : 1, sizeof(*names));
	size_t nwant = 0;
	struct ksym *base;

	if (!want || !names)
		goto out;
	want[nwant++] = "__bpf_call_base";
	for (uint32_t i = 0; i < xl->n; i++) {
		struct xinsn *xi = &xl->x[i];

		if (!xi->sym)
			continue;
		if (!xi->sym[0]) {
			helper_default(xi->in.imm, names[i], sizeof(names[i]));
			xi->sym = names[i];
		}
		if (xi->sym[0])
			want[nwant++] = xi->sym;
	}
	pthread_mutex_lock(&ksym_lock);
	ksym_load(want, nwant);
	base = ksym_find("__bpf_call_base");
	for (uint32_t i = 0; i < xl->n; i++) {
		struct xinsn *xi = &xl->x[i];
		struct ksym *k = xi->sym && xi->sym[0] ? ksym_find(xi->sym) : NULL;

		/* a tail call keeps BPF_FUNC_tail_call (bpf_insn_prepare_dump()) */
		if (xi->in.code == (BPF_JMP | BPF_CALL) && (!base || !base->addr) &&
		    (xi->sym || xi->in.src_reg || xi->in.imm != BPF_FUNC_tail_call)) {
			xi->in.imm = 0;
		} else if (k && k->addr && is_lddw(&xi->in) && i + 1 < xl->n) {
			xi->in.imm = (int32_t)(uint32_t)k->addr;
			xl->x[i + 1].in.imm = (int32_t)(uint32_t)(k->addr >> 32);
		} else if (k && k->addr && base && base->addr) {
			xi->in.imm = (int32_t)(int64_t)(k->addr - base->addr);
		}
		xi->sym = NULL;
	}
	pthread_mutex_unlock(&ksym_lock);
out:
	free(want);
	free(names);
}

static int finish(const struct brt_prog *prog, int kernel_view, struct xl *xl, int calls,
		  struct brt_xlated *out)
{
	(void)prog;
	if (kernel_view) {
		subprog_calls(xl);
		for (uint32_t i = 0; i < xl->n; i++)
			if (xl->x[i].in.code == (BPF_JMP | BPF_CALL) && !xl->x[i].in.src_reg &&
			    xl->x[i].in.imm == BPF_FUNC_tail_call)
				xl->x[i].sym = NULL;
		if (calls)
			resolve_calls(xl);
	}
	memset(out, 0, sizeof(*out));
	out->n = xl->n;
	out->pos = xl->pos;
	out->norig = xl->norig;
	out->insns = malloc((xl->n ? xl->n : 1) * sizeof(*out->insns));
	if (!out->insns) {
		free_xl(xl);
		memset(out, 0, sizeof(*out));
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < xl->n; i++)
		out->insns[i] = xl->x[i].in;
	free(xl->x);
	return 0;
}

int brt_prog_xlated(const struct brt_prog *prog, int kernel_view, struct brt_xlated *out)
{
	struct xl xl;
	int err = build_view(prog, kernel_view, &xl);

	return err ? err : finish(prog, kernel_view, &xl, 1, out);
}

int brt_prog_xlated_len(const struct brt_prog *prog, struct brt_xlated *out)
{
	struct xl xl;
	int err = build_view(prog, 1, &xl);

	return err ? err : finish(prog, 1, &xl, 0, out);
}

void brt_xlated_free(struct brt_xlated *x)
{
	free(x->insns);
	free(x->pos);
	memset(x, 0, sizeof(*x));
}
