/* fuzz_graph.c - fuzz target for allocated objects, lists, red-black trees and
 * bpf_res_spin_lock (verifier/graph.c, verifier/kfunc.c, verifier/irq.c, helpers/graph.c,
 * maps/res_lock.c) through bpfrt_bpf(): fuzz_verifier cannot reach them, since every one
 * of these kfuncs needs the kernel's BTF ids, a program BTF (bpf_obj_new's type) and maps
 * whose value BTF holds the lock and the graph roots (and kptrs: bpf_kptr_xchg, helper
 * 194, is what a helper call with off 1 becomes).  Here one program BTF and five maps
 * exist up front and the input's program is steered onto them:
 *   - a kfunc call (src_reg BPF_PSEUDO_KFUNC_CALL, off 0) calls kfuncs[imm % NK], its imm
 *     replaced by the kernel's BTF id of that name;
 *   - a map lddw (BPF_PSEUDO_MAP_FD / _VALUE) loads maps[imm % NMAPS];
 *   - type ids for bpf_obj_new are the small constants of the BTF below (T_*);
 *   - byte 0 picks the program type, byte 1 bit 0 adds func_info (main function "prog",
 *     every other subprogram the static less(a, b) callback), bits 1-2 the log level.
 * An accepted program runs once on a 64-byte packet, then drain programs (loaded at
 * start) empty every list and tree of the maps, so no object outlives its input: the
 * leak check then sees every object the input's run allocated freed again.
 * Programs with a backward jump are skipped (bounded loops may walk the full
 * 1,000,000-instruction budget: seconds under ASan).  Without the kernel's BTF
 * (/sys/kernel/btf/vmlinux) every input is a no-op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "fuzz.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })

static const char *const kfuncs[] = {
	"bpf_obj_new_impl",	     "bpf_obj_drop_impl",	 "bpf_percpu_obj_new_impl",
	"bpf_percpu_obj_drop_impl",  "bpf_refcount_acquire_impl", "bpf_list_push_front_impl",
	"bpf_list_push_back_impl",   "bpf_list_pop_front",	 "bpf_list_pop_back",
	"bpf_list_front",	     "bpf_list_back",		 "bpf_rbtree_add_impl",
	"bpf_rbtree_remove",	     "bpf_rbtree_first",	 "bpf_rbtree_root",
	"bpf_rbtree_left",	     "bpf_rbtree_right",	 "bpf_res_spin_lock",
	"bpf_res_spin_unlock",	     "bpf_res_spin_lock_irqsave", "bpf_res_spin_unlock_irqrestore",
	"bpf_local_irq_save",	     "bpf_local_irq_restore",	 "bpf_preempt_disable",
	"bpf_preempt_enable",	     "bpf_rcu_read_lock",	 "bpf_rcu_read_unlock",
	/* the kernel's xdp_buff / sk_buff of the run (attach/kern_ctx.c's stand-in), whose
	 * loads read 0 at a bad address (BRT_INSN_PROBE) */
	"bpf_cast_to_kern_ctx",
};
enum { NK = sizeof(kfuncs) / sizeof(kfuncs[0]) };
static int kids[NK];

/* The program BTF: the special structs, objects with a list node, a tree node, both (and a
 * refcount), map values holding a lock with a list head, a tree root, both, a
 * bpf_res_spin_lock, an object holding a list and a tree, and the two functions. */
enum {
	T_INT = 1, T_U64, T_LOCK, T_HEAD, T_NODE, T_REF, T_ROOT, T_RBNODE, T_RES,
	T_NODE_DATA, T_NODE_RB, T_BOTH, T_LIST_VAL, T_TAG1, T_RB_VAL, T_TAG2, T_RC_VAL, T_TAG3,
	T_TAG4, T_RES_VAL, T_HOLDER, T_TAG5, T_TAG6, T_VOIDP, T_PROTO, T_FUNC, T_PROTO2,
	T_LESS, T_PLAIN, T_TAG_KPTR, T_PTR_KPTR, T_TAG_PCPU, T_PTR_PCPU, T_KPTR_VAL,
};

struct blob {
	uint32_t w[512];
	uint32_t nw;
	char s[1024];
	uint32_t ns;
};

static uint32_t str(struct blob *b, const char *s)
{
	uint32_t off = b->ns;

	memcpy(b->s + off, s, strlen(s) + 1);
	b->ns += (uint32_t)strlen(s) + 1;
	return off;
}

static void words(struct blob *b, uint32_t a, uint32_t c, uint32_t d)
{
	b->w[b->nw++] = a, b->w[b->nw++] = c, b->w[b->nw++] = d;
}

static void strct(struct blob *b, const char *name, uint32_t vlen, uint32_t size)
{
	words(b, str(b, name), BTF_KIND_STRUCT << 24 | vlen, size);
}

/* a member: name, type, bit offset */
static void mem(struct blob *b, const char *name, uint32_t type, uint32_t bits)
{
	words(b, str(b, name), type, bits);
}

static void tag(struct blob *b, const char *value, uint32_t type, uint32_t comp)
{
	words(b, str(b, value), BTF_KIND_DECL_TAG << 24, type);
	b->w[b->nw++] = comp;
}

static int load_btf(void)
{
	static struct blob b;
	static unsigned char raw[sizeof(struct btf_header) + sizeof(b.w) + sizeof(b.s)];
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h) };
	union bpf_attr a;

	b.ns = 1;
	words(&b, str(&b, "int"), BTF_KIND_INT << 24, 4), b.w[b.nw++] = BTF_INT_SIGNED << 24 | 32;
	words(&b, str(&b, "u64"), BTF_KIND_INT << 24, 8), b.w[b.nw++] = 64;
	strct(&b, "bpf_spin_lock", 1, 4), mem(&b, "v", T_INT, 0);
	strct(&b, "bpf_list_head", 2, 16), mem(&b, "a", T_U64, 0), mem(&b, "b", T_U64, 64);
	strct(&b, "bpf_list_node", 3, 24), mem(&b, "a", T_U64, 0), mem(&b, "b", T_U64, 64);
	mem(&b, "c", T_U64, 128);
	strct(&b, "bpf_refcount", 1, 4), mem(&b, "r", T_INT, 0);
	strct(&b, "bpf_rb_root", 2, 16), mem(&b, "a", T_U64, 0), mem(&b, "b", T_U64, 64);
	strct(&b, "bpf_rb_node", 4, 32), mem(&b, "a", T_U64, 0), mem(&b, "b", T_U64, 64);
	mem(&b, "c", T_U64, 128), mem(&b, "d", T_U64, 192);
	strct(&b, "bpf_res_spin_lock", 1, 4), mem(&b, "v", T_INT, 0);
	strct(&b, "node_data", 2, 32), mem(&b, "key", T_U64, 0), mem(&b, "l", T_NODE, 64);
	strct(&b, "node_rb", 2, 40), mem(&b, "key", T_U64, 0), mem(&b, "n", T_RBNODE, 64);
	strct(&b, "both", 4, 72), mem(&b, "key", T_U64, 0), mem(&b, "l", T_NODE, 64);
	mem(&b, "n", T_RBNODE, 256), mem(&b, "ref", T_REF, 512);
	strct(&b, "list_val", 2, 24), mem(&b, "lock", T_LOCK, 0), mem(&b, "head", T_HEAD, 64);
	tag(&b, "contains:node_data:l", T_LIST_VAL, 1);
	strct(&b, "rb_val", 2, 24), mem(&b, "lock", T_LOCK, 0), mem(&b, "root", T_ROOT, 64);
	tag(&b, "contains:node_rb:n", T_RB_VAL, 1);
	strct(&b, "rc_val", 3, 40), mem(&b, "lock", T_LOCK, 0), mem(&b, "head", T_HEAD, 64);
	mem(&b, "root", T_ROOT, 192);
	tag(&b, "contains:both:l", T_RC_VAL, 1);
	tag(&b, "contains:both:n", T_RC_VAL, 2);
	strct(&b, "res_val", 3, 12), mem(&b, "cnt", T_INT, 0), mem(&b, "lock", T_RES, 32);
	mem(&b, "x", T_INT, 64);
	strct(&b, "holder", 3, 40), mem(&b, "lock", T_LOCK, 0), mem(&b, "head", T_HEAD, 64);
	mem(&b, "root", T_ROOT, 192);
	tag(&b, "contains:node_data:l", T_HOLDER, 1);
	tag(&b, "contains:node_rb:n", T_HOLDER, 2);
	words(&b, 0, BTF_KIND_PTR << 24, 0);
	words(&b, 0, BTF_KIND_FUNC_PROTO << 24 | 1, T_INT);
	b.w[b.nw++] = str(&b, "ctx"), b.w[b.nw++] = T_VOIDP;
	words(&b, str(&b, "prog"), BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, T_PROTO);
	words(&b, 0, BTF_KIND_FUNC_PROTO << 24 | 2, T_INT);
	b.w[b.nw++] = str(&b, "a"), b.w[b.nw++] = T_VOIDP;
	b.w[b.nw++] = str(&b, "b"), b.w[b.nw++] = T_VOIDP;
	words(&b, str(&b, "less"), BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, T_PROTO2);
	strct(&b, "plain", 2, 16), mem(&b, "a", T_U64, 0), mem(&b, "b", T_U64, 64);
	/* struct kptr_val { u64 x; struct plain __kptr *p; struct plain __percpu_kptr *q; } */
	words(&b, str(&b, "kptr"), BTF_KIND_TYPE_TAG << 24, T_PLAIN);
	words(&b, 0, BTF_KIND_PTR << 24, T_TAG_KPTR);
	words(&b, str(&b, "percpu_kptr"), BTF_KIND_TYPE_TAG << 24, T_PLAIN);
	words(&b, 0, BTF_KIND_PTR << 24, T_TAG_PCPU);
	strct(&b, "kptr_val", 3, 24), mem(&b, "x", T_U64, 0), mem(&b, "p", T_PTR_KPTR, 64);
	mem(&b, "q", T_PTR_PCPU, 128);
	h.type_len = b.nw * 4;
	h.str_off = h.type_len;
	h.str_len = b.ns;
	memcpy(raw, &h, sizeof(h));
	memcpy(raw + sizeof(h), b.w, h.type_len);
	memcpy(raw + sizeof(h) + h.type_len, b.s, b.ns);
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)raw;
	a.btf_size = (uint32_t)sizeof(h) + h.type_len + h.str_len;
	return bpfrt_bpf(BPF_BTF_LOAD, &a, sizeof(a));
}

/* the maps, by value type; lddw imm % NMAPS picks one */
static const struct {
	uint32_t type, value_type, value_size, max_entries;
} map_defs[] = {
	{ BPF_MAP_TYPE_ARRAY, T_LIST_VAL, 24, 1 }, { BPF_MAP_TYPE_ARRAY, T_RB_VAL, 24, 1 },
	{ BPF_MAP_TYPE_ARRAY, T_RC_VAL, 40, 1 },   { BPF_MAP_TYPE_ARRAY, T_RES_VAL, 12, 2 },
	{ BPF_MAP_TYPE_HASH, 0, 8, 4 },	   { BPF_MAP_TYPE_ARRAY, T_KPTR_VAL, 24, 2 },
};
enum { KPTR_MAP = 5 }; /* its values' objects are freed after each run by an update */
enum { NMAPS = sizeof(map_defs) / sizeof(map_defs[0]) };
enum { NDRAIN = 4 };
static int btf_fd = -1, maps[NMAPS], drains[NDRAIN];
static unsigned char pkt[64];
static char vlog[8192];

static int prog_load(struct bpf_insn *insns, uint32_t n, uint32_t type, int func_info,
		     const uint32_t *starts, uint32_t nstarts, uint32_t log_level)
{
	struct bpf_func_info fi[64];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uint64_t)(uintptr_t) "GPL";
	a.prog_btf_fd = (uint32_t)btf_fd;
	if (func_info) {
		for (uint32_t i = 0; i < nstarts; i++)
			fi[i] = (struct bpf_func_info){ starts[i], i ? T_LESS : T_FUNC };
		a.func_info = (uint64_t)(uintptr_t)fi;
		a.func_info_cnt = nstarts;
		a.func_info_rec_size = sizeof(fi[0]);
	}
	if (log_level) {
		a.log_level = log_level;
		a.log_buf = (uint64_t)(uintptr_t)vlog;
		a.log_size = sizeof(vlog);
	}
	return bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
}

static void test_run(int fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = 1;
	bpfrt_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a));
}

#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, i) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define KCALL(k) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, k)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP(d, m) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, m), I(0, 0, 0, 0, 0)

/* A drain program: up to 64 times, take the first node of map m's list (the head at
 * root_off: bpf_list_pop_front) or tree (the root at root_off: bpf_rbtree_first, then
 * bpf_rbtree_remove) under the value's lock and drop its object (node_off before the
 * node); stop when it is empty. */
static int load_drain(int m, int tree, int root_off, int node_off)
{
	const struct bpf_insn head[] = {
		MOV_K(6, 0),
		/* 1: loop */ I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), LD_MAP(1, m),
		MOV_X(2, 10), ADD_K(2, -4), CALL(BPF_FUNC_map_lookup_elem),
		I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, tree ? 21 : 16, 0) /* NULL: to the end */,
		MOV_X(7, 0), MOV_X(1, 7), CALL(BPF_FUNC_spin_lock), MOV_X(1, 7),
		ADD_K(1, root_off),
	};
	const struct bpf_insn list[] = { KCALL(7) };
	const struct bpf_insn rb[] = {
		KCALL(13), I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4, 0), MOV_X(1, 7),
		ADD_K(1, root_off), MOV_X(2, 0), KCALL(12),
	};
	const struct bpf_insn tail[] = {
		MOV_X(8, 0), MOV_X(1, 7), CALL(BPF_FUNC_spin_unlock),
		I(BPF_JMP | BPF_JEQ | BPF_K, 8, 0, 6, 0) /* empty: to the end */, MOV_X(1, 8),
		ADD_K(1, -node_off), MOV_K(2, 0), KCALL(1), ADD_K(6, 1),
		I(BPF_JMP | BPF_JLT | BPF_K, 6, 0, tree ? -28 : -23, 64) /* to the loop */,
		MOV_K(0, 0), EXIT(),
	};
	struct bpf_insn p[64];
	uint32_t n = 0, start = 0;

	memcpy(p, head, sizeof(head)), n += sizeof(head) / sizeof(p[0]);
	if (tree)
		memcpy(p + n, rb, sizeof(rb)), n += sizeof(rb) / sizeof(p[0]);
	else
		memcpy(p + n, list, sizeof(list)), n += sizeof(list) / sizeof(p[0]);
	memcpy(p + n, tail, sizeof(tail)), n += sizeof(tail) / sizeof(p[0]);
	for (uint32_t i = 0; i < n; i++) {
		if (p[i].code == (BPF_LD | BPF_IMM | BPF_DW) && p[i].src_reg == BPF_PSEUDO_MAP_FD)
			p[i].imm = maps[p[i].imm];
		if (p[i].code == (BPF_JMP | BPF_CALL) && p[i].src_reg == BPF_PSEUDO_KFUNC_CALL)
			p[i].imm = kids[p[i].imm];
	}
	return prog_load(p, n, BPF_PROG_TYPE_SCHED_CLS, 1, &start, 1, 0);
}

static void setup(void)
{
	static int done;
	const struct brt_btf *vml;
	union bpf_attr a;

	if (done)
		return;
	done = 1;
	vml = brt_btf_vmlinux();
	if (!vml)
		return;
	for (int i = 0; i < NK; i++)
		kids[i] = brt_btf_find(vml, kfuncs[i], BTF_KIND_FUNC);
	btf_fd = load_btf();
	if (btf_fd < 0) {
		fprintf(stderr, "fuzz_graph: the program BTF does not load\n");
		abort();
	}
	for (int i = 0; i < NMAPS; i++) {
		memset(&a, 0, sizeof(a));
		a.map_type = map_defs[i].type;
		a.key_size = 4;
		a.value_size = map_defs[i].value_size;
		a.max_entries = map_defs[i].max_entries;
		if (map_defs[i].value_type) {
			a.btf_fd = (uint32_t)btf_fd;
			a.btf_key_type_id = T_INT;
			a.btf_value_type_id = map_defs[i].value_type;
		}
		maps[i] = bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
		if (maps[i] < 0) {
			fprintf(stderr, "fuzz_graph: map %d not created\n", i);
			abort();
		}
	}
	drains[0] = load_drain(0, 0, 8, 8);
	drains[1] = load_drain(1, 1, 8, 8);
	drains[2] = load_drain(2, 0, 8, 8);
	drains[3] = load_drain(2, 1, 24, 32);
	for (int i = 0; i < NDRAIN; i++)
		if (drains[i] < 0) {
			fprintf(stderr, "fuzz_graph: drain program %d refused:\n%s", i, vlog);
			abort();
		}
}

/* the kptr map's values replaced by zeros: the objects stashed in them are dropped */
static void free_kptrs(void)
{
	unsigned char zero[24] = { 0 };

	for (uint32_t key = 0; key < 2; key++) {
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)maps[KPTR_MAP];
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)zero;
		bpfrt_bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t types[] = { BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP,
					  BPF_PROG_TYPE_CGROUP_SKB, BPF_PROG_TYPE_SCHED_ACT };
	struct bpf_insn insns[256];
	uint32_t starts[64], nstarts = 1, n;
	int fd;

	setup();
	if (btf_fd < 0 || size < 2)
		return 0;
	n = (uint32_t)((size - 2) / sizeof(insns[0]));
	if (n > 256)
		n = 256;
	memcpy(insns, data + 2, n * sizeof(insns[0]));
	starts[0] = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct bpf_insn *in = &insns[i];
		uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (in->src_reg == BPF_PSEUDO_MAP_FD || in->src_reg == BPF_PSEUDO_MAP_VALUE)
				in->imm = maps[(uint32_t)in->imm % NMAPS];
			else if (in->src_reg == BPF_PSEUDO_FUNC && nstarts < 64)
				starts[nstarts++] = i + 1 + (uint32_t)in->imm;
			i++; /* the second half is the verifier's to judge */
			continue;
		}
		if (cls != BPF_JMP && cls != BPF_JMP32)
			continue;
		if (op == BPF_CALL) {
			/* a helper call with off 1 is bpf_kptr_xchg (random imms rarely are) */
			if (!in->src_reg && in->off == 1)
				in->imm = BPF_FUNC_kptr_xchg, in->off = 0;
			if (in->src_reg == BPF_PSEUDO_KFUNC_CALL && !in->off)
				in->imm = kids[(uint32_t)in->imm % NK];
			else if (in->src_reg == BPF_PSEUDO_CALL && nstarts < 64)
				starts[nstarts++] = i + 1 + (uint32_t)in->imm;
			if (in->src_reg == BPF_PSEUDO_CALL && in->imm < 0)
				return 0;
		} else if (op == BPF_JA && cls == BPF_JMP32) {
			if (in->imm < 0)
				return 0;
		} else if (op != BPF_EXIT && in->off < 0) {
			return 0; /* a loop: see the head comment */
		}
	}
	/* func_info names each subprogram once, in order */
	qsort(starts, nstarts, sizeof(starts[0]), cmp_u32);
	for (uint32_t i = 1, j = 1; i <= nstarts; i++) {
		if (i == nstarts) {
			nstarts = j;
			break;
		}
		if (starts[i] != starts[j - 1])
			starts[j++] = starts[i];
	}
	fd = prog_load(insns, n, types[data[0] % 4], data[1] & 1, starts, nstarts,
		       (data[1] >> 1) & 3);
	if (fd >= 0) {
		test_run(fd);
		close(fd);
		for (int i = 0; i < NDRAIN; i++)
			test_run(drains[i]);
		free_kptrs();
	}
	return 0;
}
