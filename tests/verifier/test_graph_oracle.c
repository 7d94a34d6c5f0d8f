/* test_graph_oracle.c - allocated objects and lists (verifier/graph.c, helpers/graph.c)
 * checked against the kernel.  One program BTF (the special structs, objects with a
 * lock, a list node, a refcount, map values holding a lock and a list head tagged
 * "contains:") is loaded on both sides, two array maps are created with it, and each
 * program is loaded with it and a level-1 log: the verdict, errno and the error line (the
 * last log line before "processed") must be equal, and for programs both accept, the
 * test run's errno and retval (tc programs on a 64-byte packet; the lists live in the
 * maps across runs, so pushes, peeks and pops see each other on both sides).
 *
 * Skips without root or the kernel's BTF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "helpers/helpers.h"
#include "obj/obj.h"
#include "btf_blob.h"
#include "harness.h"
#include "log_lines.h"
#include "oracle_load.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define JEQ_K(d, v, o) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define JLT_X(d, s, o) I(BPF_JMP | BPF_JLT | BPF_X, d, s, o, 0)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_##f)
#define KCALL(id) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, id)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* lddw of map A (imm -1), B (-2), C (-3), D (-4, a hash map of C's values), E (-5, as
 * C) or the array of maps (-6): each side's fd is put in before loading */
#define LD_MAP(d, which) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, which), I(0, 0, 0, 0, 0)
/* lddw of the program's callback, the last cb_len instructions (set before loading) */
#define LD_CB(d) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_FUNC, 0, 0), I(0, 0, 0, 0, 0)
#define N(p) (sizeof(p) / sizeof(p[0]))
/* linux/btf.h's encodings (the kernel's btf.h macros are not uapi) */

/* ---- the program BTF ------------------------------------------------------------------- */
enum {
	T_INT = 1, T_U64, T_LOCK, T_HEAD, T_NODE, T_REF, T_NODE_DATA, T_MAP_VAL, T_TAG_A, T_VOIDP,
	T_PROTO, T_FUNC, T_FOO, T_NODE_RC, T_PLAIN, T_RC_VAL, T_TAG_B, T_ROOT, T_RBNODE,
	T_NODE_RB, T_RB_VAL, T_TAG_C, T_HOLDER, T_TAG_D, T_RB_HOLDER, T_TAG_E, T_PROTO2,
	T_FUNC_LESS,
	/* three .data sections of a lock and a root: VAR lock, VAR root, its tag, DATASEC */
	T_BAD_LOCK1, T_BAD_ROOT1, T_BAD_TAG1, T_BAD_SEC1, T_BAD_LOCK2, T_BAD_ROOT2, T_BAD_TAG2,
	T_BAD_SEC2, T_BAD_LOCK3, T_BAD_ROOT3, T_BAD_TAG3, T_BAD_SEC3,
};


/* VAR lock (id first), VAR root tagged contains, DATASEC name of both (24 bytes) */
static void bad_section(struct btf_build *b, const char *name, const char *contains,
			uint32_t first)
{
	struct btf_var linkage = { BTF_VAR_GLOBAL_ALLOCATED };
	struct btf_var_secinfo vs[2] = { { first, 0, 4 }, { first + 1, 8, 16 } };

	btf_build_type(b, "glock", BTF_KIND_VAR, 0, T_LOCK);
	btf_build_put(b, &linkage, sizeof(linkage));
	btf_build_type(b, "groot", BTF_KIND_VAR, 0, T_ROOT);
	btf_build_put(b, &linkage, sizeof(linkage));
	btf_build_tag(b, contains, first + 1, -1);
	btf_build_type(b, name, BTF_KIND_DATASEC, 2, 24);
	btf_build_put(b, vs, sizeof(vs));
}

/* struct node_data { u64 key; struct bpf_list_node l; }, struct map_val { bpf_spin_lock
 * lock; bpf_list_head head __contains(node_data, l); }, struct foo { lock; int data; },
 * struct node_rc { u64 key; bpf_list_node l; bpf_refcount ref; }, struct plain { u64 a,
 * b; }, struct rc_val { lock; head __contains(node_rc, l); } and int prog(void *ctx) */
static void build_btf(struct btf_build *b)
{
	struct btf_param p;

	memset(b, 0, sizeof(*b));
	btf_build_str(b, "");
	btf_build_int(b, "int", 4, 1);
	btf_build_int(b, "u64", 8, 0);
	btf_build_type(b, "bpf_spin_lock", BTF_KIND_STRUCT, 1, 4);
	btf_build_member(b, "val", T_INT, 0);
	btf_build_type(b, "bpf_list_head", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "a", T_U64, 0), btf_build_member(b, "b", T_U64, 64);
	btf_build_type(b, "bpf_list_node", BTF_KIND_STRUCT, 3, 24);
	btf_build_member(b, "a", T_U64, 0), btf_build_member(b, "b", T_U64, 64), btf_build_member(b, "c", T_U64, 128);
	btf_build_type(b, "bpf_refcount", BTF_KIND_STRUCT, 1, 4);
	btf_build_member(b, "r", T_INT, 0);
	btf_build_type(b, "node_data", BTF_KIND_STRUCT, 2, 32);
	btf_build_member(b, "key", T_U64, 0), btf_build_member(b, "l", T_NODE, 64);
	btf_build_type(b, "map_val", BTF_KIND_STRUCT, 2, 24);
	btf_build_member(b, "lock", T_LOCK, 0), btf_build_member(b, "head", T_HEAD, 64);
	btf_build_tag(b, "contains:node_data:l", T_MAP_VAL, 1);
	btf_build_type(b, NULL, BTF_KIND_PTR, 0, 0);
	btf_build_type(b, NULL, BTF_KIND_FUNC_PROTO, 1, T_INT);
	p = (struct btf_param){ btf_build_str(b, "ctx"), T_VOIDP };
	btf_build_put(b, &p, sizeof(p));
	btf_build_type(b, "prog", BTF_KIND_FUNC, BTF_FUNC_GLOBAL, T_PROTO);
	btf_build_type(b, "foo", BTF_KIND_STRUCT, 2, 8);
	btf_build_member(b, "lock", T_LOCK, 0), btf_build_member(b, "data", T_INT, 32);
	btf_build_type(b, "node_rc", BTF_KIND_STRUCT, 3, 40);
	btf_build_member(b, "key", T_U64, 0), btf_build_member(b, "l", T_NODE, 64), btf_build_member(b, "ref", T_REF, 256);
	btf_build_type(b, "plain", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "a", T_U64, 0), btf_build_member(b, "b", T_U64, 64);
	btf_build_type(b, "rc_val", BTF_KIND_STRUCT, 2, 24);
	btf_build_member(b, "lock", T_LOCK, 0), btf_build_member(b, "head", T_HEAD, 64);
	btf_build_tag(b, "contains:node_rc:l", T_RC_VAL, 1);
	/* struct node_rb { u64 key; bpf_rb_node n; }, struct rb_val { lock; bpf_rb_root root
	 * __contains(node_rb, n); }, objects holding a list and a tree (struct holder,
	 * struct rb_holder), and the static less(a, b) callback */
	btf_build_type(b, "bpf_rb_root", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "a", T_U64, 0), btf_build_member(b, "b", T_U64, 64);
	btf_build_type(b, "bpf_rb_node", BTF_KIND_STRUCT, 4, 32);
	btf_build_member(b, "a", T_U64, 0), btf_build_member(b, "b", T_U64, 64), btf_build_member(b, "c", T_U64, 128);
	btf_build_member(b, "d", T_U64, 192);
	btf_build_type(b, "node_rb", BTF_KIND_STRUCT, 2, 40);
	btf_build_member(b, "key", T_U64, 0), btf_build_member(b, "n", T_RBNODE, 64);
	btf_build_type(b, "rb_val", BTF_KIND_STRUCT, 2, 24);
	btf_build_member(b, "lock", T_LOCK, 0), btf_build_member(b, "root", T_ROOT, 64);
	btf_build_tag(b, "contains:node_rb:n", T_RB_VAL, 1);
	btf_build_type(b, "holder", BTF_KIND_STRUCT, 2, 24);
	btf_build_member(b, "lock", T_LOCK, 0), btf_build_member(b, "head", T_HEAD, 64);
	btf_build_tag(b, "contains:node_data:l", T_HOLDER, 1);
	btf_build_type(b, "rb_holder", BTF_KIND_STRUCT, 2, 24);
	btf_build_member(b, "lock", T_LOCK, 0), btf_build_member(b, "root", T_ROOT, 64);
	btf_build_tag(b, "contains:node_rb:n", T_RB_HOLDER, 1);
	btf_build_type(b, NULL, BTF_KIND_FUNC_PROTO, 2, T_INT);
	p = (struct btf_param){ btf_build_str(b, "a"), T_VOIDP };
	btf_build_put(b, &p, sizeof(p));
	p = (struct btf_param){ btf_build_str(b, "b"), T_VOIDP };
	btf_build_put(b, &p, sizeof(p));
	btf_build_type(b, "less", BTF_KIND_FUNC, BTF_FUNC_STATIC, T_PROTO2);
	/* sections of a lock and a root whose "contains:" does not parse: a struct the BTF
	 * lacks, a list node for a tree, a node field the struct lacks (in a struct, such a
	 * root fails the BTF's load; in a section, only the map's record) */
	bad_section(b, ".data.A", "contains:missing:n", T_BAD_LOCK1);
	bad_section(b, ".data.B", "contains:node_data:l", T_BAD_LOCK2);
	bad_section(b, ".data.C", "contains:node_rb:nope", T_BAD_LOCK3);
	btf_build_finish(b);
}

/* ---- the two sides ---------------------------------------------------------------------- */
struct side {
	bpf_fn bpf;
	int btf_fd, map_a, map_b, map_c, map_d, map_e;
	int map_x; /* lddw imm -7: bad_record_rules()'s map of the moment */
	int inner, outer; /* an array of struct foo (a lock), an array of such maps */
	struct oracle_res r;
};

static struct side ks = { .bpf = oracle_kernel_bpf }, bs = { .bpf = bpfrt_bpf };
static int compared, runs, logs_same;
static int cb_len; /* the program's callback: its last cb_len instructions, 0: none */
/* load without a program BTF (no prog_btf_fd, no func_info) and with a level-2 log, both
 * sides' whole logs compared: the nodes of a map's root are then typed by the map's BTF */
static int no_btf, whole_log;
static char klog[1 << 20], blog[1 << 20];

static int side_setup(struct side *s, const struct btf_build *b)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.btf = (uintptr_t)b->data;
	a.btf_size = (uint32_t)sizeof(struct btf_header) + b->len + b->str_len;
	s->btf_fd = s->bpf(BPF_BTF_LOAD, &a, sizeof(a));
	if (s->btf_fd < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 24;
	a.max_entries = 1;
	a.btf_fd = (uint32_t)s->btf_fd;
	a.btf_key_type_id = T_INT;
	a.btf_value_type_id = T_MAP_VAL;
	s->map_a = s->bpf(BPF_MAP_CREATE, &a, sizeof(a));
	a.btf_value_type_id = T_RC_VAL;
	s->map_b = s->bpf(BPF_MAP_CREATE, &a, sizeof(a));
	a.btf_value_type_id = T_RB_VAL;
	s->map_c = s->bpf(BPF_MAP_CREATE, &a, sizeof(a));
	s->map_e = s->bpf(BPF_MAP_CREATE, &a, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.max_entries = 4;
	s->map_d = s->bpf(BPF_MAP_CREATE, &a, sizeof(a));
	/* the inner map template of an array of maps keeps the value's lock (the kernel's
	 * inner_map_meta->record) */
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.max_entries = 1;
	a.value_size = 8;
	a.btf_value_type_id = T_FOO;
	s->inner = s->bpf(BPF_MAP_CREATE, &a, sizeof(a));
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY_OF_MAPS;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 2;
	a.inner_map_fd = (uint32_t)s->inner;
	s->outer = s->inner < 0 ? -1 : s->bpf(BPF_MAP_CREATE, &a, sizeof(a));
	if (s->outer < 0)
		return -errno;
	return s->map_a < 0 || s->map_b < 0 || s->map_c < 0 || s->map_d < 0 || s->map_e < 0
		       ? -errno
		       : 0;
}

static void load_run(struct side *s, const struct bpf_insn *in, size_t n)
{
	static unsigned char pkt[64];
	struct bpf_insn insns[256];
	struct bpf_func_info fi[2] = { { 0, T_FUNC }, { (uint32_t)(n - (size_t)cb_len), T_FUNC_LESS } };
	union bpf_attr attr;

	memcpy(insns, in, n * sizeof(*in));
	for (size_t i = 0; i < n; i++) {
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = insns[i].imm == -1   ? s->map_a
				       : insns[i].imm == -2 ? s->map_b
				       : insns[i].imm == -3 ? s->map_c
				       : insns[i].imm == -4 ? s->map_d
				       : insns[i].imm == -6 ? s->outer
				       : insns[i].imm == -7 ? s->map_x
							    : s->map_e;
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_FUNC)
			insns[i].imm = (int32_t)(n - (size_t)cb_len) - (int32_t)i - 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	if (!no_btf) {
		attr.prog_btf_fd = (uint32_t)s->btf_fd;
		attr.func_info = (uintptr_t)fi;
		attr.func_info_cnt = cb_len ? 2 : 1;
		attr.func_info_rec_size = sizeof(fi[0]);
	}
	oracle_load_run(s->bpf, &attr, 1, pkt, sizeof(pkt), &s->r);
	if (no_btf || whole_log) /* the same load again at level 2: the whole walk's log */
		oracle_load_log2(s->bpf, &attr, s == &ks ? klog : blog, sizeof(klog));
}

static void check(const char *name, const struct bpf_insn *insns, size_t n)
{
	T_CASE(name);
	load_run(&ks, insns, n);
	load_run(&bs, insns, n);
	runs += oracle_compare(name, &ks.r, &bs.r, ORACLE_CMP_RUN, "GRAPH_DUMP");
	compared++;
	if (no_btf || whole_log)
		logs_same += oracle_compare_logs(name, klog, blog);
}

#define P(name, ...)                                                                      \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                              \
		check(name, p_, N(p_));                                                    \
	} while (0)

/* ---- the programs ----------------------------------------------------------------------- */
static int k_new, k_drop, k_pnew, k_pdrop, k_acq, k_push_back, k_push_front, k_pop_front,
	k_pop_back, k_front, k_back, k_rb_add, k_rb_remove, k_rb_first, k_rb_root, k_rb_left,
	k_rb_right;

static int func_id(const char *name)
{
	return brt_btf_find(brt_btf_vmlinux(), name, BTF_KIND_FUNC);
}

/* r6 = bpf_obj_new(type), the program returning 0 when NULL */
#define NEW6(t) MOV_K(1, t), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 2), MOV_K(0, 0), EXIT(), \
		MOV_X(6, 0)
#define NEW7(t) MOV_K(1, t), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 5), MOV_X(1, 6),       \
		MOV_K(2, 0), KCALL(k_drop), MOV_K(0, 0), EXIT(), MOV_X(7, 0)
#define DROP(r) MOV_X(1, r), MOV_K(2, 0), KCALL(k_drop)
/* r9 = bpf_obj_new(type), dropping r6 and r7 and returning 0 when NULL */
#define NEW9(t) MOV_K(1, t), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 8), DROP(6), DROP(7),     \
		MOV_K(0, 0), EXIT(), MOV_X(9, 0)
/* r8 = the map's value 0 (dropping r6 and returning 0 when NULL) */
#define VALUE8(which) ST(BPF_W, 10, -4, 0), LD_MAP(1, which), MOV_X(2, 10), ADD_K(2, -4),   \
		      CALL(map_lookup_elem), JNE_K(0, 0, 4), DROP(6), EXIT(), MOV_X(8, 0)
#define LOCK(r) MOV_X(1, r), CALL(spin_lock)
#define UNLOCK(r) MOV_X(1, r), CALL(spin_unlock)
/* push node r (its bpf_list_node at 8) into the list of the value in r8 (head at 8) */
#define PUSH(fn, r) MOV_X(1, 8), ADD_K(1, 8), MOV_X(2, r), ADD_K(2, 8), MOV_K(3, 0),       \
		    MOV_K(4, 0), KCALL(fn)
#define HEAD(fn) MOV_X(1, 8), ADD_K(1, 8), KCALL(fn)

static void object_rules(void)
{
	P("new, write, read, drop", NEW6(T_NODE_DATA), ST(BPF_DW, 6, 0, 7), LDX(BPF_DW, 7, 6, 0),
	  DROP(6), MOV_X(0, 7), EXIT());
	P("new not checked for NULL", MOV_K(1, T_NODE_DATA), MOV_K(2, 0), KCALL(k_new),
	  MOV_X(1, 0), MOV_K(2, 0), KCALL(k_drop), MOV_K(0, 0), EXIT());
	P("new leaked", NEW6(T_NODE_DATA), MOV_K(0, 0), EXIT());
	P("dropped twice", NEW6(T_NODE_DATA), DROP(6), DROP(6), MOV_K(0, 0), EXIT());
	P("new of an int", NEW6(T_INT), DROP(6), MOV_K(0, 0), EXIT());
	P("new of no type", NEW6(999), DROP(6), MOV_K(0, 0), EXIT());
	P("new of a type id not constant", CALL(get_prandom_u32), MOV_X(1, 0), MOV_K(2, 0),
	  KCALL(k_new), MOV_K(0, 0), EXIT());
	P("store to the object's lock", NEW6(T_FOO), ST(BPF_W, 6, 0, 1), DROP(6), MOV_K(0, 0),
	  EXIT());
	P("load past the object", NEW6(T_FOO), LDX(BPF_W, 7, 6, 8), DROP(6), MOV_K(0, 0), EXIT());
	P("load at a negative offset", NEW6(T_FOO), LDX(BPF_W, 7, 6, -4), DROP(6), MOV_K(0, 0),
	  EXIT());
	P("lock and unlock in an object", NEW6(T_FOO), LOCK(6), UNLOCK(6), ST(BPF_W, 6, 4, 9),
	  LDX(BPF_W, 7, 6, 4), DROP(6), MOV_X(0, 7), EXIT());
	P("unlock another object's lock", NEW6(T_FOO), NEW7(T_FOO), LOCK(6), UNLOCK(7), DROP(6),
	  DROP(7), MOV_K(0, 0), EXIT());
	P("lock an object without a lock", NEW6(T_NODE_DATA), LOCK(6), UNLOCK(6), DROP(6),
	  MOV_K(0, 0), EXIT());
	P("drop while holding the lock", NEW6(T_FOO), LOCK(6), DROP(6), MOV_K(0, 0), EXIT());
	P("exit holding the object's lock", NEW6(T_FOO), LOCK(6), MOV_K(0, 0), EXIT());
	P("drop at an offset", NEW6(T_NODE_DATA), MOV_X(1, 6), ADD_K(1, 8), MOV_K(2, 0),
	  KCALL(k_drop), MOV_K(0, 0), EXIT());
	P("drop of a map value", ST(BPF_DW, 10, -8, 0), VALUE8(-1), DROP(8), MOV_K(0, 0), EXIT());
	P("percpu new and drop", MOV_K(1, T_PLAIN), MOV_K(2, 0), KCALL(k_pnew), JEQ_K(0, 0, 3),
	  MOV_X(1, 0), MOV_K(2, 0), KCALL(k_pdrop), MOV_K(0, 0), EXIT());
	P("percpu new of a struct with a lock", MOV_K(1, T_FOO), MOV_K(2, 0), KCALL(k_pnew),
	  JEQ_K(0, 0, 3), MOV_X(1, 0), MOV_K(2, 0), KCALL(k_pdrop), MOV_K(0, 0), EXIT());
	P("percpu object given to bpf_obj_drop", MOV_K(1, T_PLAIN), MOV_K(2, 0), KCALL(k_pnew),
	  JEQ_K(0, 0, 3), MOV_X(1, 0), MOV_K(2, 0), KCALL(k_drop), MOV_K(0, 0), EXIT());
	P("object given to bpf_percpu_obj_drop", NEW6(T_PLAIN), MOV_X(1, 6), MOV_K(2, 0),
	  KCALL(k_pdrop), MOV_K(0, 0), EXIT());
	P("percpu object read", MOV_K(1, T_PLAIN), MOV_K(2, 0), KCALL(k_pnew), JNE_K(0, 0, 1),
	  EXIT(), MOV_X(6, 0), LDX(BPF_DW, 7, 6, 0), MOV_X(1, 6), MOV_K(2, 0), KCALL(k_pdrop),
	  MOV_K(0, 0), EXIT());
	P("refcount_acquire without a refcount", NEW6(T_NODE_DATA), MOV_X(1, 6), MOV_K(2, 0),
	  KCALL(k_acq), DROP(6), MOV_K(0, 0), EXIT());
	P("refcount_acquire of an owned object", NEW6(T_NODE_RC), MOV_X(1, 6), MOV_K(2, 0),
	  KCALL(k_acq), MOV_X(7, 0), DROP(7), DROP(6), MOV_K(0, 0), EXIT());
	P("refcount_acquire's object leaked", NEW6(T_NODE_RC), MOV_X(1, 6), MOV_K(2, 0),
	  KCALL(k_acq), DROP(6), MOV_K(0, 0), EXIT());
}

static void list_rules(void)
{
	/* the runs in order: 5 and 6 pushed, the front and back peeked, both popped, then
	 * the list is empty (100) */
	P("push back 5", NEW6(T_NODE_DATA), ST(BPF_DW, 6, 0, 5), VALUE8(-1), LOCK(8),
	  PUSH(k_push_back, 6), MOV_X(9, 0), UNLOCK(8), MOV_X(0, 9), EXIT());
	P("push back 6", NEW6(T_NODE_DATA), ST(BPF_DW, 6, 0, 6), VALUE8(-1), LOCK(8),
	  PUSH(k_push_back, 6), UNLOCK(8), MOV_K(0, 0), EXIT());
	P("front's key", MOV_K(6, 0), NEW6(T_PLAIN), VALUE8(-1), DROP(6), MOV_K(7, 100), LOCK(8),
	  HEAD(k_front), JEQ_K(0, 0, 1), LDX(BPF_DW, 7, 0, -8), UNLOCK(8), MOV_X(0, 7), EXIT());
	P("back's key", MOV_K(6, 0), NEW6(T_PLAIN), VALUE8(-1), DROP(6), MOV_K(7, 100), LOCK(8),
	  HEAD(k_back), JEQ_K(0, 0, 1), LDX(BPF_DW, 7, 0, -8), UNLOCK(8), MOV_X(0, 7), EXIT());
	P("pop front", NEW6(T_PLAIN), VALUE8(-1), DROP(6), LOCK(8), HEAD(k_pop_front),
	  MOV_X(6, 0), UNLOCK(8), MOV_K(0, 100), JEQ_K(6, 0, 7), LDX(BPF_DW, 7, 6, -8),
	  ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT(), EXIT());
	P("pop back", NEW6(T_PLAIN), VALUE8(-1), DROP(6), LOCK(8), HEAD(k_pop_back),
	  MOV_X(6, 0), UNLOCK(8), MOV_K(0, 100), JEQ_K(6, 0, 7), LDX(BPF_DW, 7, 6, -8),
	  ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT(), EXIT());
	P("pop of an empty list", NEW6(T_PLAIN), VALUE8(-1), DROP(6), LOCK(8), HEAD(k_pop_front),
	  MOV_X(6, 0), UNLOCK(8), MOV_K(0, 100), JEQ_K(6, 0, 7), LDX(BPF_DW, 7, 6, -8),
	  ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT(), EXIT());
	P("push front then pop back", NEW6(T_NODE_DATA), ST(BPF_DW, 6, 0, 11), VALUE8(-1),
	  LOCK(8), PUSH(k_push_front, 6), HEAD(k_pop_back), MOV_X(6, 0), UNLOCK(8),
	  MOV_K(0, 100), JEQ_K(6, 0, 7), LDX(BPF_DW, 7, 6, -8), ADD_K(6, -8), DROP(6),
	  MOV_X(0, 7), EXIT(), EXIT());
	/* refusals */
	P("push without the lock", NEW6(T_NODE_DATA), VALUE8(-1), PUSH(k_push_back, 6),
	  MOV_K(0, 0), EXIT());
	P("pop without the lock", NEW6(T_PLAIN), VALUE8(-1), DROP(6), HEAD(k_pop_front),
	  MOV_K(0, 0), EXIT());
	P("front without the lock", NEW6(T_PLAIN), VALUE8(-1), DROP(6), HEAD(k_front),
	  MOV_K(0, 0), EXIT());
	P("push an object without a list node", NEW6(T_FOO), VALUE8(-1), LOCK(8),
	  PUSH(k_push_back, 6), UNLOCK(8), MOV_K(0, 0), EXIT());
	P("push a node of another type", NEW6(T_NODE_RC), VALUE8(-1), LOCK(8),
	  PUSH(k_push_back, 6), UNLOCK(8), MOV_K(0, 0), EXIT());
	P("push at the wrong head offset", NEW6(T_NODE_DATA), VALUE8(-1), LOCK(8), MOV_X(1, 8),
	  ADD_K(1, 4), MOV_X(2, 6), ADD_K(2, 8), MOV_K(3, 0), MOV_K(4, 0), KCALL(k_push_back),
	  UNLOCK(8), MOV_K(0, 0), EXIT());
	P("push the object, not its node", NEW6(T_NODE_DATA), VALUE8(-1), LOCK(8), MOV_X(1, 8),
	  ADD_K(1, 8), MOV_X(2, 6), MOV_K(3, 0), MOV_K(4, 0), KCALL(k_push_back), UNLOCK(8),
	  MOV_K(0, 0), EXIT());
	P("node read after unlock", NEW6(T_NODE_DATA), VALUE8(-1), LOCK(8), PUSH(k_push_back, 6),
	  UNLOCK(8), LDX(BPF_DW, 0, 6, 0), EXIT());
	P("node read before unlock", NEW6(T_NODE_DATA), ST(BPF_DW, 6, 0, 3), VALUE8(-1),
	  LOCK(8), PUSH(k_push_back, 6), LDX(BPF_DW, 7, 6, 0), UNLOCK(8), MOV_K(6, 0),
	  NEW6(T_PLAIN), VALUE8(-1), DROP(6), LOCK(8), HEAD(k_pop_front), MOV_X(6, 0), UNLOCK(8),
	  JEQ_K(6, 0, 4), ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT());
	P("node dropped after push", NEW6(T_NODE_DATA), VALUE8(-1), LOCK(8), PUSH(k_push_back, 6),
	  UNLOCK(8), DROP(6), MOV_K(0, 0), EXIT());
	P("helper call while peeking", NEW6(T_PLAIN), VALUE8(-1), DROP(6), LOCK(8), HEAD(k_front),
	  CALL(ktime_get_ns), UNLOCK(8), MOV_K(0, 0), EXIT());
	P("bpf_obj_new while holding the lock", MOV_K(6, 0), NEW6(T_PLAIN), VALUE8(-1), DROP(6),
	  LOCK(8), MOV_K(1, T_NODE_DATA), MOV_K(2, 0), KCALL(k_new), UNLOCK(8), MOV_K(0, 0),
	  EXIT());
	P("popped node leaked", NEW6(T_PLAIN), VALUE8(-1), DROP(6), LOCK(8), HEAD(k_pop_front),
	  UNLOCK(8), MOV_K(0, 0), EXIT());
	P("peeked node dropped", NEW6(T_PLAIN), VALUE8(-1), DROP(6), LOCK(8), HEAD(k_front),
	  JEQ_K(0, 0, 3), MOV_X(1, 0), MOV_K(2, 0), KCALL(k_drop), UNLOCK(8), MOV_K(0, 0), EXIT());
	/* a refcounted node pushed twice: the second push drops it and fails (-EINVAL) */
	P("refcounted node pushed twice", NEW6(T_NODE_RC), MOV_X(1, 6), MOV_K(2, 0), KCALL(k_acq),
	  MOV_X(7, 0), VALUE8(-2), LOCK(8), PUSH(k_push_back, 6), PUSH(k_push_back, 7),
	  MOV_X(9, 0), UNLOCK(8), MOV_X(0, 9), EXIT());
	P("refcounted node: acquire of a non-owning ref", NEW6(T_NODE_RC), VALUE8(-2), LOCK(8),
	  PUSH(k_push_back, 6), MOV_X(1, 6), MOV_K(2, 0), KCALL(k_acq), MOV_X(7, 0), UNLOCK(8),
	  JEQ_K(7, 0, 5), DROP(7), MOV_K(0, 1), EXIT(), MOV_K(0, 0), EXIT());
	/* empty list B again (its 2 nodes, then nothing: 1, 1, 0), so that no object
	 * outlives the maps (the kernel frees a value's nodes with it, bpfrt does not) */
	for (int i = 0; i < 3; i++)
		P("pop one of list B", NEW6(T_PLAIN), VALUE8(-2), DROP(6), LOCK(8),
		  HEAD(k_pop_front), MOV_X(6, 0), UNLOCK(8), MOV_K(0, 0), JEQ_K(6, 0, 5),
		  ADD_K(6, -8), DROP(6), MOV_K(0, 1), EXIT());
}

/* ---- red-black trees (map C's value: lock at 0, root at 8; struct node_rb: key at 0,
 * node at 8) --------------------------------------------------------------------------- */
/* less(a, b): a->key < b->key, the nodes' keys 8 bytes before them */
#define LESS() LDX(BPF_DW, 1, 1, -8), LDX(BPF_DW, 2, 2, -8), MOV_K(0, 1), JLT_X(1, 2, 1),     \
	       MOV_K(0, 0), EXIT()
#define LESS_LEN 6
/* bpf_rbtree_add_impl(root of the value in r8, node of object r, less) */
#define RBADD(r) MOV_X(1, 8), ADD_K(1, 8), MOV_X(2, r), ADD_K(2, 8), LD_CB(3), MOV_K(4, 0),  \
		 MOV_K(5, 0), KCALL(k_rb_add)
#define ROOT1() MOV_X(1, 8), ADD_K(1, 8)
/* the program returns r7 (100 when the tree gave no node) */
#define RB_PEEK(...) NEW6(T_PLAIN), VALUE8(-3), DROP(6), MOV_K(7, 100), LOCK(8), __VA_ARGS__, \
		     UNLOCK(8), MOV_X(0, 7), EXIT()

static void rb_add(int key)
{
	char name[64];

	snprintf(name, sizeof(name), "rbtree add %d", key);
	cb_len = LESS_LEN;
	P(name, NEW6(T_NODE_RB), ST(BPF_DW, 6, 0, key), VALUE8(-3), LOCK(8), RBADD(6),
	  MOV_X(9, 0), UNLOCK(8), MOV_X(0, 9), EXIT(), LESS());
	cb_len = 0;
}

/* remove the node first (or root) gives, returning its key (100: none) */
static void rb_remove(const char *name, int first)
{
	P(name, NEW6(T_PLAIN), VALUE8(-3), DROP(6), MOV_K(6, 0), LOCK(8), ROOT1(),
	  KCALL(first ? k_rb_first : k_rb_root), JEQ_K(0, 0, 5), MOV_X(2, 0), ROOT1(),
	  KCALL(k_rb_remove), MOV_X(6, 0), UNLOCK(8), MOV_K(0, 100), JEQ_K(6, 0, 7),
	  LDX(BPF_DW, 7, 6, -8), ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT(), EXIT());
}

/* the tree's shape: the keys of root, root's left and right, and their children */
static void rb_shape(const char *when)
{
	char name[96];

	snprintf(name, sizeof(name), "rbtree root key (%s)", when);
	P(name, RB_PEEK(ROOT1(), KCALL(k_rb_root), JEQ_K(0, 0, 1), LDX(BPF_DW, 7, 0, -8)));
	snprintf(name, sizeof(name), "rbtree first key (%s)", when);
	P(name, RB_PEEK(ROOT1(), KCALL(k_rb_first), JEQ_K(0, 0, 1), LDX(BPF_DW, 7, 0, -8)));
	for (int l = 0; l < 2; l++)
		for (int m = 0; m < 3; m++) {
			/* root's l child, then its m child (2: none) */
			int k1 = l ? k_rb_right : k_rb_left, k2 = m == 1 ? k_rb_right : k_rb_left;

			snprintf(name, sizeof(name), "rbtree root's %s%s key (%s)", l ? "right" : "left",
				 m == 2 ? "" : m ? "'s right" : "'s left", when);
			if (m == 2)
				P(name, RB_PEEK(ROOT1(), KCALL(k_rb_root), JEQ_K(0, 0, 6), MOV_X(2, 0),
						ROOT1(), KCALL(k1), JEQ_K(0, 0, 1),
						LDX(BPF_DW, 7, 0, -8)));
			else
				P(name, RB_PEEK(ROOT1(), KCALL(k_rb_root), JEQ_K(0, 0, 11), MOV_X(2, 0),
						ROOT1(), KCALL(k1), JEQ_K(0, 0, 6), MOV_X(2, 0), ROOT1(),
						KCALL(k2), JEQ_K(0, 0, 1), LDX(BPF_DW, 7, 0, -8)));
		}
}

static void rbtree_rules(void)
{
	static const int keys[] = { 50, 30, 70, 20, 40, 60, 80, 10, 25, 35, 45, 5, 1 };

	for (size_t i = 0; i < N(keys); i++)
		rb_add(keys[i]);
	rb_shape("13 added");
	rb_remove("rbtree remove first", 1);
	rb_remove("rbtree remove root", 0);
	rb_remove("rbtree remove root again", 0);
	rb_shape("3 removed");
	/* refusals */
	cb_len = LESS_LEN;
	P("rbtree add without the lock", NEW6(T_NODE_RB), VALUE8(-3), RBADD(6), MOV_K(0, 0),
	  EXIT(), LESS());
	P("rbtree add of a node of another type", NEW6(T_NODE_DATA), VALUE8(-3), LOCK(8),
	  RBADD(6), UNLOCK(8), MOV_K(0, 0), EXIT(), LESS());
	P("rbtree add of the object, not its node", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8),
	  MOV_X(1, 8), ADD_K(1, 8), MOV_X(2, 6), LD_CB(3), MOV_K(4, 0), MOV_K(5, 0),
	  KCALL(k_rb_add), UNLOCK(8), MOV_K(0, 0), EXIT(), LESS());
	P("rbtree add into a list head", NEW6(T_NODE_RB), VALUE8(-1), LOCK(8), RBADD(6),
	  UNLOCK(8), MOV_K(0, 0), EXIT(), LESS());
	P("rbtree add, node read after unlock", NEW6(T_NODE_RB), ST(BPF_DW, 6, 0, 90),
	  VALUE8(-3), LOCK(8), RBADD(6), UNLOCK(8), LDX(BPF_DW, 0, 6, 0), EXIT(), LESS());
	P("rbtree add, node dropped after", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), RBADD(6),
	  UNLOCK(8), DROP(6), MOV_K(0, 0), EXIT(), LESS());
	cb_len = 0;
	P("rbtree add with a NULL callback", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), MOV_X(1, 8),
	  ADD_K(1, 8), MOV_X(2, 6), ADD_K(2, 8), MOV_K(3, 0), MOV_K(4, 0), MOV_K(5, 0),
	  KCALL(k_rb_add), UNLOCK(8), MOV_K(0, 0), EXIT());
	cb_len = 6;
	P("rbtree less returning 2", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), RBADD(6), UNLOCK(8),
	  MOV_K(0, 0), EXIT(), LDX(BPF_DW, 1, 1, -8), LDX(BPF_DW, 2, 2, -8), MOV_K(0, 2),
	  JLT_X(1, 2, 1), MOV_K(0, 0), EXIT());
	cb_len = 3;
	P("rbtree less calling a helper", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), RBADD(6),
	  UNLOCK(8), MOV_K(0, 0), EXIT(), CALL(ktime_get_ns), MOV_K(0, 0), EXIT());
	cb_len = 4;
	P("rbtree less unlocking", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), RBADD(6), UNLOCK(8),
	  MOV_K(0, 0), EXIT(), ADD_K(1, -8), CALL(spin_unlock), MOV_K(0, 0), EXIT());
	cb_len = 3;
	P("rbtree less writing a node", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), RBADD(6),
	  UNLOCK(8), MOV_K(0, 0), EXIT(), ST(BPF_DW, 1, -8, 7), MOV_K(0, 0), EXIT());
	cb_len = 3;
	P("rbtree less reading the node", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), RBADD(6),
	  UNLOCK(8), MOV_K(0, 0), EXIT(), LDX(BPF_DW, 0, 1, 0), MOV_K(0, 0), EXIT());
	cb_len = 2;
	P("rbtree less returning a pointer", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), RBADD(6),
	  UNLOCK(8), MOV_K(0, 0), EXIT(), MOV_X(0, 1), EXIT());
	cb_len = 0;
	P("rbtree first without the lock", NEW6(T_PLAIN), VALUE8(-3), DROP(6), ROOT1(),
	  KCALL(k_rb_first), MOV_K(0, 0), EXIT());
	P("rbtree removed node leaked", NEW6(T_PLAIN), VALUE8(-3), DROP(6), LOCK(8), ROOT1(),
	  KCALL(k_rb_first), JEQ_K(0, 0, 3), MOV_X(2, 0), ROOT1(), KCALL(k_rb_remove), UNLOCK(8),
	  MOV_K(0, 0), EXIT());
	P("rbtree left of an owned node", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), ROOT1(),
	  MOV_X(2, 6), ADD_K(2, 8), KCALL(k_rb_left), UNLOCK(8), DROP(6), MOV_K(0, 0), EXIT());
	P("rbtree remove of an owned node", NEW6(T_NODE_RB), VALUE8(-3), LOCK(8), ROOT1(),
	  MOV_X(2, 6), ADD_K(2, 8), KCALL(k_rb_remove), UNLOCK(8), DROP(6), MOV_K(0, 0), EXIT());
	P("rbtree peeked node used after unlock", NEW6(T_PLAIN), VALUE8(-3), DROP(6), LOCK(8),
	  ROOT1(), KCALL(k_rb_first), UNLOCK(8), JEQ_K(0, 0, 1), LDX(BPF_DW, 0, 0, -8), EXIT());
	P("rbtree first's node dropped", NEW6(T_PLAIN), VALUE8(-3), DROP(6), LOCK(8), ROOT1(),
	  KCALL(k_rb_first), JEQ_K(0, 0, 3), MOV_X(1, 0), MOV_K(2, 0), KCALL(k_drop), UNLOCK(8),
	  MOV_K(0, 0), EXIT());
	P("rbtree first of a list head", NEW6(T_PLAIN), VALUE8(-1), DROP(6), LOCK(8), ROOT1(),
	  KCALL(k_rb_first), UNLOCK(8), MOV_K(0, 0), EXIT());
	/* empty the tree: 10 nodes left, then nothing */
	for (int i = 0; i < 11; i++)
		rb_remove("rbtree remove first (emptying)", 1);
}

/* Programs without a BTF of their own (no prog_btf_fd, no func_info: the kernel keeps no
 * program BTF either) on nodes of a map value's list or tree: bpf_obj_new is refused, but
 * a node taken from a map's root is typed by the map's BTF (the root's "contains:" tag),
 * and the node kfuncs, loads from it and bpf_obj_drop work on it as with a program BTF.
 * Nodes are put in first by programs with one. */
#define VALUE8_NB(which) ST(BPF_W, 10, -4, 0), LD_MAP(1, which), MOV_X(2, 10), ADD_K(2, -4), \
			 CALL(map_lookup_elem), JNE_K(0, 0, 1), EXIT(), MOV_X(8, 0)
static void no_btf_rules(void)
{
	if (k_rb_add > 0 && k_rb_remove > 0 && k_rb_first > 0 && k_rb_root > 0) {
		rb_add(7);
		rb_add(9);
		rb_add(8);
		no_btf = 1;
		P("no prog BTF: rbtree first removed, key read, dropped", VALUE8_NB(-3), MOV_K(6, 0),
		  LOCK(8), ROOT1(), KCALL(k_rb_first), JEQ_K(0, 0, 5), MOV_X(2, 0), ROOT1(),
		  KCALL(k_rb_remove), MOV_X(6, 0), UNLOCK(8), MOV_K(0, 100), JEQ_K(6, 0, 7),
		  LDX(BPF_DW, 7, 6, -8), ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT(), EXIT());
		P("no prog BTF: rbtree root's key read under the lock", VALUE8_NB(-3), MOV_K(7, 100),
		  LOCK(8), ROOT1(), KCALL(k_rb_root), JEQ_K(0, 0, 1), LDX(BPF_DW, 7, 0, -8),
		  UNLOCK(8), MOV_X(0, 7), EXIT());
		P("no prog BTF: rbtree node read after unlock", VALUE8_NB(-3), LOCK(8), ROOT1(),
		  KCALL(k_rb_first), UNLOCK(8), JEQ_K(0, 0, 1), LDX(BPF_DW, 0, 0, -8), EXIT());
		P("no prog BTF: rbtree removed node leaked", VALUE8_NB(-3), LOCK(8), ROOT1(),
		  KCALL(k_rb_first), JEQ_K(0, 0, 4), MOV_X(2, 0), ROOT1(), KCALL(k_rb_remove),
		  UNLOCK(8), MOV_K(0, 0), EXIT());
		P("no prog BTF: rbtree node written", VALUE8_NB(-3), LOCK(8), ROOT1(),
		  KCALL(k_rb_first), JEQ_K(0, 0, 1), ST(BPF_DW, 0, -8, 8), UNLOCK(8), MOV_K(0, 0),
		  EXIT());
		P("no prog BTF: rbtree node's bpf_rb_node read", VALUE8_NB(-3), LOCK(8), ROOT1(),
		  KCALL(k_rb_first), JEQ_K(0, 0, 1), LDX(BPF_DW, 0, 0, 0), UNLOCK(8), MOV_K(0, 0),
		  EXIT());
		P("no prog BTF: rbtree root of a list head", VALUE8_NB(-1), LOCK(8), ROOT1(),
		  KCALL(k_rb_first), UNLOCK(8), MOV_K(0, 0), EXIT());
		for (int i = 0; i < 3; i++)
			P("no prog BTF: rbtree remove first (emptying)", VALUE8_NB(-3), MOV_K(6, 0),
			  LOCK(8), ROOT1(), KCALL(k_rb_first), JEQ_K(0, 0, 5), MOV_X(2, 0), ROOT1(),
			  KCALL(k_rb_remove), MOV_X(6, 0), UNLOCK(8), MOV_K(0, 100), JEQ_K(6, 0, 7),
			  LDX(BPF_DW, 7, 6, -8), ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT(), EXIT());
		no_btf = 0;
	}
	P("push back 12", NEW6(T_NODE_DATA), ST(BPF_DW, 6, 0, 12), VALUE8(-1), LOCK(8),
	  PUSH(k_push_back, 6), UNLOCK(8), MOV_K(0, 0), EXIT());
	P("push back 13", NEW6(T_NODE_DATA), ST(BPF_DW, 6, 0, 13), VALUE8(-1), LOCK(8),
	  PUSH(k_push_back, 6), UNLOCK(8), MOV_K(0, 0), EXIT());
	P("refcounted push back 14", NEW6(T_NODE_RC), ST(BPF_DW, 6, 0, 14), VALUE8(-2), LOCK(8),
	  PUSH(k_push_back, 6), UNLOCK(8), MOV_K(0, 0), EXIT());
	no_btf = 1;
	P("no prog BTF: bpf_obj_new", MOV_K(1, T_NODE_DATA), MOV_K(2, 0), KCALL(k_new),
	  JEQ_K(0, 0, 3), MOV_X(1, 0), MOV_K(2, 0), KCALL(k_drop), MOV_K(0, 0), EXIT());
	P("no prog BTF: list pop front pushed back", VALUE8_NB(-1), LOCK(8), HEAD(k_pop_front),
	  JEQ_K(0, 0, 6), MOV_X(2, 0), MOV_X(1, 8), ADD_K(1, 8), MOV_K(3, 0), MOV_K(4, 0),
	  KCALL(k_push_back), UNLOCK(8), MOV_K(0, 0), EXIT());
	P("no prog BTF: list front's key", VALUE8_NB(-1), MOV_K(7, 100), LOCK(8), HEAD(k_front),
	  JEQ_K(0, 0, 1), LDX(BPF_DW, 7, 0, -8), UNLOCK(8), MOV_X(0, 7), EXIT());
	P("no prog BTF: refcount_acquire of a list's front", VALUE8_NB(-2), MOV_K(7, 0),
	  LOCK(8), HEAD(k_front), JEQ_K(0, 0, 5), MOV_X(1, 0), ADD_K(1, -8), MOV_K(2, 0),
	  KCALL(k_acq), MOV_X(7, 0), UNLOCK(8), MOV_K(0, 0), JEQ_K(7, 0, 5), LDX(BPF_DW, 6, 7, 0),
	  DROP(7), MOV_X(0, 6), EXIT());
	for (int i = 0; i < 3; i++)
		P("no prog BTF: list pop back and drop (emptying)", VALUE8_NB(-1), LOCK(8),
		  HEAD(k_pop_back), MOV_X(6, 0), UNLOCK(8), MOV_K(0, 100), JEQ_K(6, 0, 7),
		  LDX(BPF_DW, 7, 6, -8), ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT(), EXIT());
	for (int i = 0; i < 2; i++)
		P("no prog BTF: list B pop and drop (emptying)", VALUE8_NB(-2), LOCK(8),
		  HEAD(k_pop_front), MOV_X(6, 0), UNLOCK(8), MOV_K(0, 100), JEQ_K(6, 0, 7),
		  LDX(BPF_DW, 7, 6, -8), ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT(), EXIT());
	no_btf = 0;
}

static int map_cmd(struct side *s, int cmd, int fd, uint32_t key, void *value);

/* An inner map's value lock through an array of maps (slot 0 holds the inner map): the
 * lookup's value has an id and the lock rules of the inner map's record.  Whole level-2
 * logs compared. */
#define INNER8() ST(BPF_W, 10, -4, 0), LD_MAP(1, -6), MOV_X(2, 10), ADD_K(2, -4),             \
		 CALL(map_lookup_elem), JNE_K(0, 0, 1), EXIT(), MOV_X(1, 0), MOV_X(2, 10),       \
		 ADD_K(2, -4), CALL(map_lookup_elem), JNE_K(0, 0, 1), EXIT(), MOV_X(8, 0)
static void inner_map_rules(void)
{
	uint32_t k0 = 0, k1 = 1;
	int ke, be;

	T_CASE("map in map: the inner map put in slot 0");
	T_EQ_INT(map_cmd(&ks, BPF_MAP_UPDATE_ELEM, ks.outer, k0, &ks.inner),
		 map_cmd(&bs, BPF_MAP_UPDATE_ELEM, bs.outer, k0, &bs.inner));
	whole_log = 1;
	P("map in map: inner value locked, written, unlocked", INNER8(), LOCK(8),
	  ST(BPF_W, 8, 4, 5), LDX(BPF_W, 7, 8, 4), UNLOCK(8), MOV_X(0, 7), EXIT());
	P("map in map: inner value's lock word written", INNER8(), ST(BPF_W, 8, 0, 5),
	  MOV_K(0, 0), EXIT());
	P("map in map: exit with the inner value's lock held", INNER8(), LOCK(8), MOV_K(0, 0),
	  EXIT());
	P("map in map: unlock without the lock", INNER8(), UNLOCK(8), MOV_K(0, 0), EXIT());
	P("map in map: lock at an offset", INNER8(), MOV_X(1, 8), ADD_K(1, 4), CALL(spin_lock),
	  MOV_K(0, 0), EXIT());
	whole_log = 0;
	(void)k1;
	/* an inner map whose value has no lock does not match the template (the kernel's
	 * btf_record_equal()) */
	T_CASE("map in map: an inner map without the template's lock refused");
	{
		union bpf_attr a;
		int kfd, bfd;

		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_ARRAY;
		a.key_size = 4;
		a.value_size = 8;
		a.max_entries = 1;
		kfd = ks.bpf(BPF_MAP_CREATE, &a, sizeof(a));
		bfd = bs.bpf(BPF_MAP_CREATE, &a, sizeof(a));
		ke = map_cmd(&ks, BPF_MAP_UPDATE_ELEM, ks.outer, k1, &kfd);
		be = map_cmd(&bs, BPF_MAP_UPDATE_ELEM, bs.outer, k1, &bfd);
		T_EQ_INT(ke, EINVAL);
		T_EQ_INT(be, ke);
		close(kfd);
		close(bfd);
	}
}

/* objects holding a list or a tree, dropped with their nodes in: the kernel frees the
 * nodes (bpf_obj_free_fields()); here no object outlives the program */
static void drop_rules(void)
{
	long before = brt_graph_live_objects();

	P("object with a list dropped with 2 nodes in", NEW6(T_HOLDER), NEW7(T_NODE_DATA),
	  NEW9(T_NODE_DATA), LOCK(6), MOV_X(1, 6), ADD_K(1, 8), MOV_X(2, 7), ADD_K(2, 8),
	  MOV_K(3, 0), MOV_K(4, 0), KCALL(k_push_back), MOV_X(1, 6), ADD_K(1, 8), MOV_X(2, 9),
	  ADD_K(2, 8), MOV_K(3, 0), MOV_K(4, 0), KCALL(k_push_front), UNLOCK(6), DROP(6),
	  MOV_K(0, 0), EXIT());
	T_CASE("object with a list dropped: its nodes are freed");
	T_EQ_INT(brt_graph_live_objects(), before);
	if (k_rb_add > 0) {
		cb_len = LESS_LEN;
		P("object with a tree dropped with 2 nodes in", NEW6(T_RB_HOLDER), NEW7(T_NODE_RB),
		  NEW9(T_NODE_RB), ST(BPF_DW, 7, 0, 1), ST(BPF_DW, 9, 0, 2), LOCK(6), MOV_X(1, 6),
		  ADD_K(1, 8), MOV_X(2, 7), ADD_K(2, 8), LD_CB(3), MOV_K(4, 0), MOV_K(5, 0),
		  KCALL(k_rb_add), MOV_X(1, 6), ADD_K(1, 8), MOV_X(2, 9), ADD_K(2, 8), LD_CB(3),
		  MOV_K(4, 0), MOV_K(5, 0), KCALL(k_rb_add), UNLOCK(6), DROP(6), MOV_K(0, 0), EXIT(),
		  LESS());
		cb_len = 0;
		T_CASE("object with a tree dropped: its nodes are freed");
		T_EQ_INT(brt_graph_live_objects(), before);
	}
}

/* a syscall on map fd of side s: the errno (0: none) */
static int map_cmd(struct side *s, int cmd, int fd, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uintptr_t)&key;
	a.value = cmd == BPF_MAP_DELETE_ELEM ? 0 : (uintptr_t)value;
	return s->bpf(cmd, &a, sizeof(a)) ? errno : 0;
}

/* the same syscall on both sides, the errno and the value read equal */
static void both_cmd(const char *name, int cmd, int which)
{
	unsigned char kv[24], bv[24];
	int kfd = which == 'A' ? ks.map_a : which == 'D' ? ks.map_d : ks.map_c;
	int bfd = which == 'A' ? bs.map_a : which == 'D' ? bs.map_d : bs.map_c;

	T_CASE(name);
	memset(kv, 0, sizeof(kv));
	memset(bv, 0, sizeof(bv));
	{
		int ke = map_cmd(&ks, cmd, kfd, 0, kv), be = map_cmd(&bs, cmd, bfd, 0, bv);

		if (getenv("GRAPH_DUMP"))
			fprintf(stderr, "%s: kernel %d, bpfrt %d\n", name, ke, be);
		T_EQ_INT(ke, be);
	}
	/* the lock and padding; the root's 16 bytes differ: the kernel (6.18.44) shows an
	 * array value's list head as its kernel addresses, bpfrt as zero (an empty list) */
	if (memcmp(kv, bv, 8)) {
		char k[80] = "", b[80] = "";

		for (int i = 0; i < 24; i++) {
			snprintf(k + 2 * i, 3, "%02x", kv[i]);
			snprintf(b + 2 * i, 3, "%02x", bv[i]);
		}
		T_FAIL("%s: value read: kernel %s, bpfrt %s", name, k, b);
	}
}

/* a map value's lists and trees are freed when the value is deleted or replaced and when
 * the map goes (the kernel's bpf_obj_free_fields()): the programs after see them empty,
 * and here no object outlives them */
static void map_free_rules(void)
{
	long before = brt_graph_live_objects();

	both_cmd("hash element added", BPF_MAP_UPDATE_ELEM, 'D');
	cb_len = LESS_LEN;
	for (int key = 3; key <= 4; key++)
		P("rbtree add into a hash map's value", NEW6(T_NODE_RB), ST(BPF_DW, 6, 0, key),
		  ST(BPF_W, 10, -4, 0), LD_MAP(1, -4), MOV_X(2, 10), ADD_K(2, -4),
		  CALL(map_lookup_elem), JNE_K(0, 0, 5), DROP(6), MOV_K(0, 0), EXIT(), MOV_X(8, 0),
		  LOCK(8), RBADD(6), MOV_X(9, 0), UNLOCK(8), MOV_X(0, 9), EXIT(),
		  LESS());
	cb_len = 0;
	both_cmd("hash element read with a tree in it", BPF_MAP_LOOKUP_ELEM, 'D');
	both_cmd("hash element with a tree deleted", BPF_MAP_DELETE_ELEM, 'D');
	T_CASE("hash element deleted: its tree's nodes are freed");
	T_EQ_INT(brt_graph_live_objects(), before);
	both_cmd("hash element added again", BPF_MAP_UPDATE_ELEM, 'D');
	P("rbtree first of the new hash element", NEW6(T_PLAIN), ST(BPF_W, 10, -4, 0),
	  LD_MAP(1, -4), MOV_X(2, 10), ADD_K(2, -4), CALL(map_lookup_elem), JNE_K(0, 0, 5),
	  DROP(6), MOV_K(0, 0), EXIT(), MOV_X(8, 0), DROP(6), MOV_K(7, 100), LOCK(8), ROOT1(),
	  KCALL(k_rb_first), JEQ_K(0, 0, 1), LDX(BPF_DW, 7, 0, -8), UNLOCK(8), MOV_X(0, 7),
	  EXIT());
	P("push back 8 (to be replaced)", NEW6(T_NODE_DATA), ST(BPF_DW, 6, 0, 8), VALUE8(-1),
	  LOCK(8), PUSH(k_push_back, 6), UNLOCK(8), MOV_K(0, 0), EXIT());
	both_cmd("array value read with a list in it", BPF_MAP_LOOKUP_ELEM, 'A');
	both_cmd("array value with a list replaced", BPF_MAP_UPDATE_ELEM, 'A');
	T_CASE("array value replaced: its list's nodes are freed");
	T_EQ_INT(brt_graph_live_objects(), before);
	P("pop front of the replaced value", NEW6(T_PLAIN), VALUE8(-1), DROP(6), LOCK(8),
	  HEAD(k_pop_front), MOV_X(6, 0), UNLOCK(8), MOV_K(0, 100), JEQ_K(6, 0, 7),
	  LDX(BPF_DW, 7, 6, -8), ADD_K(6, -8), DROP(6), MOV_X(0, 7), EXIT(), EXIT());
	/* a map closed with a tree in its value: the kernel frees the nodes with the map */
	cb_len = LESS_LEN;
	P("rbtree add into map E", NEW6(T_NODE_RB), ST(BPF_DW, 6, 0, 1), VALUE8(-5), LOCK(8),
	  RBADD(6), MOV_X(9, 0), UNLOCK(8), MOV_X(0, 9), EXIT(), LESS());
	cb_len = 0;
	close(ks.map_e);
	close(bs.map_e);
	/* what no fd refers to goes (lazily, at the next lookup miss; the programs first,
	 * then the maps they held) */
	for (int i = 0; i < 4 && brt_obj_sweep() > 0; i++)
		;
	T_CASE("map closed: its value's tree's nodes are freed");
	T_EQ_INT(brt_graph_live_objects(), before);
}

/* A value whose special fields do not parse as a whole (btf_parse_fields() fails on the
 * root's "contains:") has no record at all in the kernel: the map is made, whatever its
 * access flags, and its lock is no lock to programs ("map '' has no valid bpf_spin_lock");
 * measured on 6.18.44 (kernel-selftests' rbtree_btf_fail add_wrong_type) */
static void bad_record_rules(void)
{
	static const struct {
		const char *name;
		uint32_t vt;
	} c[] = {
		{ "contains: a struct the BTF lacks", T_BAD_SEC1 },
		{ "contains: a list node for a tree", T_BAD_SEC2 },
		{ "contains: a node field the struct lacks", T_BAD_SEC3 },
	};
	char name[128];

	/* a struct of the program's BTF with such a root fails the BTF's load
	 * (btf_parse_struct_metas()) */
	for (int k = 0; k < 2; k++) {
		static const char *const tags[] = { "contains:missing:n", "contains:bad:lock" };
		struct btf_build bb;
		union bpf_attr a;
		int kfd, bfd, ke, be;

		memset(&bb, 0, sizeof(bb));
		btf_build_str(&bb, "");
		btf_build_int(&bb, "int", 4, 1);
		btf_build_int(&bb, "u64", 8, 0);
		btf_build_type(&bb, "bpf_spin_lock", BTF_KIND_STRUCT, 1, 4);
		btf_build_member(&bb, "val", 1, 0);
		btf_build_type(&bb, "bpf_rb_root", BTF_KIND_STRUCT, 2, 16);
		btf_build_member(&bb, "a", 2, 0), btf_build_member(&bb, "b", 2, 64);
		btf_build_type(&bb, "bad", BTF_KIND_STRUCT, 2, 24);
		btf_build_member(&bb, "lock", 3, 0), btf_build_member(&bb, "root", 4, 64);
		btf_build_tag(&bb, tags[k], 5, 1);
		memset(&a, 0, sizeof(a));
		a.btf_size = btf_build_finish(&bb);
		a.btf = (uintptr_t)bb.data;
		kfd = ks.bpf(BPF_BTF_LOAD, &a, sizeof(a));
		ke = kfd < 0 ? errno : 0;
		bfd = bs.bpf(BPF_BTF_LOAD, &a, sizeof(a));
		be = bfd < 0 ? errno : 0;
		snprintf(name, sizeof(name), "struct with %s: BTF load", tags[k]);
		T_CASE(name);
		T_EQ_INT(ke, be);
		if (getenv("GRAPH_DUMP"))
			fprintf(stderr, "%s: kernel %d, bpfrt %d\n", name, ke, be);
		if (kfd >= 0)
			close(kfd);
		if (bfd >= 0)
			close(bfd);
	}
	whole_log = 1;
	for (size_t i = 0; i < N(c); i++) {
		for (uint32_t flags = 0; flags <= BPF_F_RDONLY_PROG; flags += BPF_F_RDONLY_PROG) {
			struct side *sides[2] = { &ks, &bs };
			int err[2];

			for (int k = 0; k < 2; k++) {
				union bpf_attr a;

				memset(&a, 0, sizeof(a));
				a.map_type = BPF_MAP_TYPE_ARRAY;
				a.key_size = 4;
				a.value_size = 24;
				a.max_entries = 1;
				a.map_flags = flags;
				a.btf_fd = (uint32_t)sides[k]->btf_fd;
				a.btf_key_type_id = T_INT;
				a.btf_value_type_id = c[i].vt;
				sides[k]->map_x = sides[k]->bpf(BPF_MAP_CREATE, &a, sizeof(a));
				err[k] = sides[k]->map_x < 0 ? errno : 0;
			}
			snprintf(name, sizeof(name), "%s: map made%s", c[i].name,
				 flags ? " read-only for programs" : "");
			T_CASE(name);
			T_EQ_INT(err[0], err[1]);
			if (!flags && !err[0] && !err[1]) {
				snprintf(name, sizeof(name), "%s: lock taken", c[i].name);
				P(name, VALUE8_NB(-7), LOCK(8), UNLOCK(8), MOV_K(0, 0), EXIT());
			}
			if (ks.map_x >= 0)
				close(ks.map_x);
			if (bs.map_x >= 0)
				close(bs.map_x);
		}
	}
	whole_log = 0;
}

int main(void)
{
	struct btf_build b;
	int err;

	if (geteuid() != 0)
		T_SKIP("not root: the kernel side needs CAP_BPF and CAP_PERFMON");
	if (!brt_btf_vmlinux())
		T_SKIP("no kernel BTF (/sys/kernel/btf/vmlinux)");
	k_new = func_id("bpf_obj_new_impl");
	k_drop = func_id("bpf_obj_drop_impl");
	k_pnew = func_id("bpf_percpu_obj_new_impl");
	k_pdrop = func_id("bpf_percpu_obj_drop_impl");
	k_acq = func_id("bpf_refcount_acquire_impl");
	k_push_back = func_id("bpf_list_push_back_impl");
	k_push_front = func_id("bpf_list_push_front_impl");
	k_pop_front = func_id("bpf_list_pop_front");
	k_pop_back = func_id("bpf_list_pop_back");
	k_front = func_id("bpf_list_front");
	k_back = func_id("bpf_list_back");
	k_rb_add = func_id("bpf_rbtree_add_impl");
	k_rb_remove = func_id("bpf_rbtree_remove");
	k_rb_first = func_id("bpf_rbtree_first");
	k_rb_root = func_id("bpf_rbtree_root");
	k_rb_left = func_id("bpf_rbtree_left");
	k_rb_right = func_id("bpf_rbtree_right");
	if (k_new <= 0 || k_drop <= 0 || k_pnew <= 0 || k_pdrop <= 0 || k_acq <= 0 ||
	    k_push_back <= 0 || k_pop_front <= 0 || k_front <= 0 || k_back <= 0)
		T_SKIP("the kernel's BTF lacks the allocated object or list kfuncs");
	build_btf(&b);
	err = side_setup(&ks, &b);
	if (err)
		T_SKIP("the kernel refused the BTF or its maps (%d)", err);
	err = side_setup(&bs, &b);
	T_EQ_INT(err, 0);
	if (err)
		return t_done();
	object_rules();
	list_rules();
	if (k_rb_add > 0 && k_rb_remove > 0 && k_rb_first > 0 && k_rb_root > 0 && k_rb_left > 0 &&
	    k_rb_right > 0)
		rbtree_rules();
	else
		printf("skipped rbtree programs: the kernel's BTF lacks bpf_rbtree_root/left/right\n");
	no_btf_rules();
	bad_record_rules();
	inner_map_rules();
	drop_rules();
	if (k_rb_add > 0)
		map_free_rules();
	printf("%d programs compared, %d test runs, %d level-2 logs identical\n", compared, runs,
	       logs_same);
	return t_done();
}
