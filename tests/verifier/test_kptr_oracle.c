/* test_kptr_oracle.c - kptrs to objects of bpf_obj_new (verifier/graph.c, helpers/graph.c,
 * maps/spin_lock.c) checked against the kernel: the local kptr stash of the kernel's
 * local_kptr_stash*.c selftests (clang 14, which builds the corpus, emits no btf_type_tag,
 * so no corpus program has a kptr).  One program BTF with structs holding `__kptr`,
 * `__kptr_untrusted` and `__percpu_kptr` fields is loaded on both sides, maps are created
 * with it, and each program is loaded with it and a level-1 log: verdict, errno and error
 * line equal, and for programs both accept the test run's errno and retval (the objects
 * stay stashed in the maps across runs on both sides).  Syscall updates, deletes and
 * closes of maps holding objects free them: bpfrt's live objects go back to their count.
 *
 * Skips without root or the kernel's BTF.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity() */
#endif
#include <errno.h>
#include <sched.h>
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
#define ADD_X(d, s) I(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define LSH_K(d, v) I(BPF_ALU64 | BPF_LSH | BPF_K, d, 0, 0, v)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define JEQ_K(d, v, o) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_##f)
#define KCALL(id) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, id)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* lddw of map number -imm (1..NMAPS): each side's fd is put in before loading */
#define LD_MAP(d, which) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, -(which)), \
			 I(0, 0, 0, 0, 0)
#define N(p) (sizeof(p) / sizeof(p[0]))

/* ---- the program BTF ------------------------------------------------------------------- */
enum {
	T_INT = 1, T_U64, T_REF, T_PLAIN, T_TAG_PLAIN, T_PTR_PLAIN, T_KVAL, T_VOIDP, T_PROTO,
	T_FUNC, T_OTHER, T_HOLDER, T_TAG_HOLDER, T_PTR_HOLDER, T_HVAL, T_RCNODE, T_TAG_RC,
	T_PTR_RC, T_RCVAL, T_TAG_UNTR, T_PTR_UNTR, T_UVAL, T_TAG_PCPU, T_PTR_PCPU, T_PVAL,
	T_ARR_511, T_BIG, T_ARR_512, T_BIG2, T_ARR_64, T_PBIG, T_ARR_65, T_PBIG2, T_ARR_1023,
	T_BIG3,
};


/* an array of n u64 (type arr_id) and a struct of it */
static void array_struct(struct btf_build *b, const char *name, uint32_t n, uint32_t arr_id)
{
	int ints = !strcmp(name, "big3");
	struct btf_array a = { ints ? T_INT : T_U64, T_INT, n };

	btf_build_type(b, NULL, BTF_KIND_ARRAY, 0, 0);
	btf_build_put(b, &a, sizeof(a));
	btf_build_type(b, name, BTF_KIND_STRUCT, 1, n * (ints ? 4 : 8));
	btf_build_member(b, "a", arr_id, 0);
}

/* struct plain { u64 a, b; }, struct kval { u64 x; struct plain __kptr *p; }, struct
 * other { u64 a, b, c, d; }, struct holder { u64 k; struct plain __kptr *inner; }, struct
 * hval { u64 x; struct holder __kptr *h; }, struct rcnode { u64 data; bpf_refcount ref; },
 * struct rcval { u64 x; struct rcnode __kptr *r; }, struct uval { u64 x; struct plain
 * __kptr_untrusted *u; }, struct pval { u64 x; struct plain __percpu_kptr *p; } and
 * int prog(void *ctx) */
static void build_btf(struct btf_build *b)
{
	struct btf_param p;

	memset(b, 0, sizeof(*b));
	btf_build_str(b, "");
	btf_build_int(b, "int", 4, 1);
	btf_build_int(b, "u64", 8, 0);
	btf_build_type(b, "bpf_refcount", BTF_KIND_STRUCT, 1, 4);
	btf_build_member(b, "r", T_INT, 0);
	btf_build_type(b, "plain", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "a", T_U64, 0), btf_build_member(b, "b", T_U64, 64);
	btf_build_type(b, "kptr", BTF_KIND_TYPE_TAG, 0, T_PLAIN);
	btf_build_type(b, NULL, BTF_KIND_PTR, 0, T_TAG_PLAIN);
	btf_build_type(b, "kval", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "x", T_U64, 0), btf_build_member(b, "p", T_PTR_PLAIN, 64);
	btf_build_type(b, NULL, BTF_KIND_PTR, 0, 0);
	btf_build_type(b, NULL, BTF_KIND_FUNC_PROTO, 1, T_INT);
	p = (struct btf_param){ btf_build_str(b, "ctx"), T_VOIDP };
	btf_build_put(b, &p, sizeof(p));
	btf_build_type(b, "prog", BTF_KIND_FUNC, BTF_FUNC_GLOBAL, T_PROTO);
	btf_build_type(b, "other", BTF_KIND_STRUCT, 4, 32);
	btf_build_member(b, "a", T_U64, 0), btf_build_member(b, "b", T_U64, 64), btf_build_member(b, "c", T_U64, 128);
	btf_build_member(b, "d", T_U64, 192);
	btf_build_type(b, "holder", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "k", T_U64, 0), btf_build_member(b, "inner", T_PTR_PLAIN, 64);
	btf_build_type(b, "kptr", BTF_KIND_TYPE_TAG, 0, T_HOLDER);
	btf_build_type(b, NULL, BTF_KIND_PTR, 0, T_TAG_HOLDER);
	btf_build_type(b, "hval", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "x", T_U64, 0), btf_build_member(b, "h", T_PTR_HOLDER, 64);
	btf_build_type(b, "rcnode", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "data", T_U64, 0), btf_build_member(b, "ref", T_REF, 64);
	btf_build_type(b, "kptr", BTF_KIND_TYPE_TAG, 0, T_RCNODE);
	btf_build_type(b, NULL, BTF_KIND_PTR, 0, T_TAG_RC);
	btf_build_type(b, "rcval", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "x", T_U64, 0), btf_build_member(b, "r", T_PTR_RC, 64);
	btf_build_type(b, "kptr_untrusted", BTF_KIND_TYPE_TAG, 0, T_PLAIN);
	btf_build_type(b, NULL, BTF_KIND_PTR, 0, T_TAG_UNTR);
	btf_build_type(b, "uval", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "x", T_U64, 0), btf_build_member(b, "u", T_PTR_UNTR, 64);
	btf_build_type(b, "percpu_kptr", BTF_KIND_TYPE_TAG, 0, T_PLAIN);
	btf_build_type(b, NULL, BTF_KIND_PTR, 0, T_TAG_PCPU);
	btf_build_type(b, "pval", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(b, "x", T_U64, 0), btf_build_member(b, "p", T_PTR_PCPU, 64);
	/* struct big { u64 a[511]; } (4,088 bytes: bpf_mem_alloc()'s largest with its 8-byte
	 * link), big2 { u64 a[512]; } (4,096), pbig { u64 a[64]; } (512: the percpu limit),
	 * pbig2 { u64 a[65]; } */
	array_struct(b, "big", 511, T_ARR_511);
	array_struct(b, "big2", 512, T_ARR_512);
	array_struct(b, "pbig", 64, T_ARR_64);
	array_struct(b, "pbig2", 65, T_ARR_65);
	array_struct(b, "big3", 1023, T_ARR_1023); /* { int a[1023]; }: 4,092 bytes */
	btf_build_finish(b);
}

/* ---- the two sides ---------------------------------------------------------------------- */
/* the maps: 1 array of kval, 2 hash of kval, 3 array of hval, 4 array of rcval, 5 array of
 * uval, 6 array of pval, 7 array of kval (closed by the test) */
enum { M_KVAL = 1, M_HASH, M_HVAL, M_RCVAL, M_UVAL, M_PVAL, M_CLOSE, NMAPS = M_CLOSE };

struct side {
	bpf_fn bpf;
	int btf_fd, map[NMAPS + 1];
	struct oracle_res r;
};

static struct side ks = { .bpf = oracle_kernel_bpf }, bs = { .bpf = bpfrt_bpf };
static int compared, runs, logs_same;
/* whole_log: each program loaded again at level 2, the two logs compared line by line */
static int whole_log;
/* sleepable: programs loaded as sleepable syscall programs (no RCU read section) */
static int sleepable;
static char klog[1 << 20], blog[1 << 20];

static int map_create(struct side *s, uint32_t mtype, uint32_t vtype, uint32_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = mtype;
	a.key_size = 4;
	a.value_size = 16;
	a.max_entries = 2;
	a.map_flags = flags;
	a.btf_fd = (uint32_t)s->btf_fd;
	a.btf_key_type_id = T_INT;
	a.btf_value_type_id = vtype;
	return s->bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

static int side_setup(struct side *s, const struct btf_build *b)
{
	static const uint32_t vt[NMAPS + 1] = { 0, T_KVAL, T_KVAL, T_HVAL, T_RCVAL, T_UVAL,
						T_PVAL, T_KVAL };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.btf = (uintptr_t)b->data;
	a.btf_size = (uint32_t)sizeof(struct btf_header) + b->len + b->str_len;
	s->btf_fd = s->bpf(BPF_BTF_LOAD, &a, sizeof(a));
	if (s->btf_fd < 0)
		return -errno;
	for (int i = 1; i <= NMAPS; i++) {
		s->map[i] = map_create(s, i == M_HASH ? BPF_MAP_TYPE_HASH : BPF_MAP_TYPE_ARRAY, vt[i],
				       0);
		if (s->map[i] < 0)
			return -errno;
	}
	return 0;
}

static void load_run(struct side *s, const struct bpf_insn *in, size_t n)
{
	static unsigned char pkt[64];
	struct bpf_insn insns[256];
	struct bpf_func_info fi = { 0, T_FUNC };
	union bpf_attr attr;

	memcpy(insns, in, n * sizeof(*in));
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD && insns[i].imm < 0 &&
		    insns[i].imm >= -NMAPS)
			insns[i].imm = s->map[-insns[i].imm];
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = sleepable ? BPF_PROG_TYPE_SYSCALL : BPF_PROG_TYPE_SCHED_CLS;
	attr.prog_flags = sleepable ? BPF_F_SLEEPABLE : 0;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	attr.prog_btf_fd = (uint32_t)s->btf_fd;
	attr.func_info = (uintptr_t)&fi;
	attr.func_info_cnt = 1;
	attr.func_info_rec_size = sizeof(fi);
	oracle_load_run(s->bpf, &attr, 1, sleepable ? NULL : pkt, sizeof(pkt), &s->r);
	if (whole_log) /* the same load again at level 2: the whole walk's log */
		oracle_load_log2(s->bpf, &attr, s == &ks ? klog : blog, sizeof(klog));
}

static void check(const char *name, const struct bpf_insn *insns, size_t n)
{
	T_CASE(name);
	load_run(&ks, insns, n);
	load_run(&bs, insns, n);
	runs += oracle_compare(name, &ks.r, &bs.r, ORACLE_CMP_RUN, "KPTR_DUMP");
	compared++;
	if (whole_log)
		logs_same += oracle_compare_logs(name, klog, blog);
}

#define P(name, ...)                                                                      \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                              \
		check(name, p_, N(p_));                                                    \
	} while (0)

/* ---- the programs ----------------------------------------------------------------------- */
static int k_new, k_drop, k_pnew, k_pdrop, k_acq;

static int func_id(const char *name)
{
	return brt_btf_find(brt_btf_vmlinux(), name, BTF_KIND_FUNC);
}

/* r6 = bpf_obj_new(type), the program returning 0 when NULL */
#define NEW6(t) MOV_K(1, t), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 2), MOV_K(0, 0), EXIT(), \
		MOV_X(6, 0)
#define DROP(r) MOV_X(1, r), MOV_K(2, 0), KCALL(k_drop)
/* r8 = value `key` of map m (dropping r6 and returning 0 when NULL; VALUE8N: r6 holds
 * nothing) */
#define VALUE8(m, key) ST(BPF_W, 10, -4, key), LD_MAP(1, m), MOV_X(2, 10), ADD_K(2, -4),    \
		       CALL(map_lookup_elem), JNE_K(0, 0, 5), DROP(6), MOV_K(0, 0), EXIT(),    \
		       MOV_X(8, 0)
#define VALUE8N(m, key) ST(BPF_W, 10, -4, key), LD_MAP(1, m), MOV_X(2, 10), ADD_K(2, -4),   \
			CALL(map_lookup_elem), JNE_K(0, 0, 2), MOV_K(0, 0), EXIT(), MOV_X(8, 0)
/* r6 = bpf_obj_new(type) while r7 holds another object (dropped when NULL) */
#define NEW6D7(t) MOV_K(1, t), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 5), DROP(7),          \
		  MOV_K(0, 0), EXIT(), MOV_X(6, 0)
/* r0 = bpf_kptr_xchg(r8 + 8, r) */
#define XCHG(r) MOV_X(1, 8), ADD_K(1, 8), MOV_X(2, r), CALL(kptr_xchg)
/* the object bpf_kptr_xchg gave back dropped when not NULL */
#define DROP_OLD() JEQ_K(0, 0, 3), DROP(0)

static void stash_rules(void)
{
	/* the runs in order: 7 stashed, then 8 (7 comes back: its a is returned), then 8
	 * unstashed, then nothing there */
	P("stash a plain object", NEW6(T_PLAIN), ST(BPF_DW, 6, 0, 7), VALUE8(M_KVAL, 0), XCHG(6),
	  DROP_OLD(), MOV_K(0, 0), EXIT());
	P("stash another: the first comes back", NEW6(T_PLAIN), ST(BPF_DW, 6, 0, 8),
	  VALUE8(M_KVAL, 0), XCHG(6), MOV_K(7, 100), JEQ_K(0, 0, 4), LDX(BPF_DW, 7, 0, 0),
	  DROP(0), MOV_X(0, 7), EXIT());
	P("load the stashed object and read it", VALUE8N(M_KVAL, 0), LDX(BPF_DW, 0, 8, 8), JNE_K(0, 0, 2), MOV_K(0, 100), EXIT(),
	  LDX(BPF_DW, 0, 0, 0), EXIT());
	P("unstash", VALUE8N(M_KVAL, 0), MOV_K(6, 0), XCHG(6),
	  MOV_K(7, 100), JEQ_K(0, 0, 4), LDX(BPF_DW, 7, 0, 0), DROP(0), MOV_X(0, 7), EXIT());
	P("unstash of an empty kptr", VALUE8N(M_KVAL, 0),
	  MOV_K(6, 0), XCHG(6), MOV_K(7, 100), JEQ_K(0, 0, 4), LDX(BPF_DW, 7, 0, 0), DROP(0),
	  MOV_X(0, 7), EXIT());
	/* a store into an object leaves its source register as it was (the kernel marks a
	 * load's register only): r1 stays 40 and the fall-through, which reads r5 the call
	 * clobbered, is dead; bpfrt made r1 unknown and refused (selftests' stash_rb_nodes'
	 * log printed R1=scalar() for the kernel's R1=40) */
	P("a store into an object keeps its source", NEW6(T_PLAIN), MOV_K(1, 40),
	  STX(BPF_DW, 6, 1, 0), JEQ_K(1, 40, 2), MOV_X(0, 5), EXIT(), DROP(6), MOV_K(0, 0),
	  EXIT());
	/* refusals */
	P("stash an object of another type", NEW6(T_OTHER), VALUE8(M_KVAL, 0), XCHG(6),
	  DROP_OLD(), MOV_K(0, 0), EXIT());
	P("xchg's result leaked", NEW6(T_PLAIN), VALUE8(M_KVAL, 0), XCHG(6), MOV_K(0, 0), EXIT());
	P("object used after it was stashed", NEW6(T_PLAIN), VALUE8(M_KVAL, 0), XCHG(6),
	  DROP_OLD(), LDX(BPF_DW, 0, 6, 0), EXIT());
	P("xchg at an offset without a kptr", NEW6(T_PLAIN), VALUE8(M_KVAL, 0), MOV_X(1, 8),
	  MOV_X(2, 6), CALL(kptr_xchg), DROP_OLD(), MOV_K(0, 0), EXIT());
	P("xchg into an untrusted kptr", NEW6(T_PLAIN), VALUE8(M_UVAL, 0), XCHG(6), DROP_OLD(),
	  MOV_K(0, 0), EXIT());
	P("xchg of an object at an offset", NEW6(T_PLAIN), VALUE8(M_KVAL, 0), MOV_X(1, 8),
	  ADD_K(1, 8), MOV_X(2, 6), ADD_K(2, 8), CALL(kptr_xchg), DROP_OLD(), MOV_K(0, 0),
	  EXIT());
	P("xchg of a map value pointer", VALUE8N(M_KVAL, 0),
	  XCHG(8), DROP_OLD(), MOV_K(0, 0), EXIT());
	P("xchg into a stack slot", NEW6(T_PLAIN), MOV_X(1, 10), ADD_K(1, -16), MOV_X(2, 6),
	  CALL(kptr_xchg), DROP_OLD(), MOV_K(0, 0), EXIT());
	P("xchg of an unchecked object", MOV_K(1, T_PLAIN), MOV_K(2, 0), KCALL(k_new), MOV_X(6, 0),
	  VALUE8(M_KVAL, 0), XCHG(6), DROP_OLD(), MOV_K(0, 0), EXIT());
	P("store to a referenced kptr", NEW6(T_PLAIN), VALUE8(M_KVAL, 0), STX(BPF_DW, 8, 6, 8),
	  DROP(6), MOV_K(0, 0), EXIT());
	P("store of zero to a referenced kptr", VALUE8(M_KVAL, 0), ST(BPF_DW, 8, 8, 0),
	  MOV_K(0, 0), EXIT());
	P("kptr loaded as 4 bytes", VALUE8N(M_KVAL, 0),
	  LDX(BPF_W, 0, 8, 8), MOV_K(0, 0), EXIT());
	P("kptr loaded misaligned", VALUE8N(M_KVAL, 0),
	  LDX(BPF_DW, 0, 8, 4), MOV_K(0, 0), EXIT());
	P("kptr read by a helper", VALUE8N(M_KVAL, 0),
	  LD_MAP(1, M_KVAL), MOV_X(2, 10), ADD_K(2, -4), MOV_X(3, 8), MOV_K(4, 0),
	  CALL(map_update_elem), MOV_K(0, 0), EXIT());
	P("loaded kptr not checked for NULL", VALUE8N(M_KVAL, 0), LDX(BPF_DW, 0, 8, 8), LDX(BPF_DW, 0, 0, 0), EXIT());
	P("loaded kptr dropped", VALUE8N(M_KVAL, 0),
	  LDX(BPF_DW, 0, 8, 8), DROP_OLD(), MOV_K(0, 0), EXIT());
	P("loaded kptr written", VALUE8N(M_KVAL, 0),
	  LDX(BPF_DW, 0, 8, 8), JEQ_K(0, 0, 1), ST(BPF_DW, 0, 0, 5), MOV_K(0, 0), EXIT());
	/* __kptr_untrusted: stores of matching pointers and of zero, loads untrusted */
	P("untrusted kptr stored and cleared", NEW6(T_PLAIN), VALUE8(M_UVAL, 0),
	  STX(BPF_DW, 8, 6, 8), ST(BPF_DW, 8, 8, 0), DROP(6), MOV_K(0, 0), EXIT());
	P("untrusted kptr stored with an immediate", VALUE8(M_UVAL, 0), ST(BPF_DW, 8, 8, 1),
	  MOV_K(0, 0), EXIT());
	P("untrusted kptr loaded", VALUE8N(M_UVAL, 0),
	  LDX(BPF_DW, 0, 8, 8), JEQ_K(0, 0, 1), MOV_K(0, 1), EXIT());
	P("untrusted kptr read", VALUE8N(M_UVAL, 0), LDX(BPF_DW, 0, 8, 8), JEQ_K(0, 0, 1),
	  LDX(BPF_DW, 0, 0, 8), MOV_K(0, 0), EXIT());
	P("untrusted kptr written", VALUE8N(M_UVAL, 0), LDX(BPF_DW, 0, 8, 8), JEQ_K(0, 0, 1),
	  ST(BPF_DW, 0, 8, 1), MOV_K(0, 0), EXIT());
	P("stashed kptr loaded in a sleepable program's way: read", VALUE8N(M_KVAL, 0),
	  LDX(BPF_DW, 0, 8, 8), JEQ_K(0, 0, 1), LDX(BPF_DW, 0, 0, 0), EXIT());
	P("untrusted kptr given to xchg", VALUE8N(M_UVAL, 0),
	  LDX(BPF_DW, 6, 8, 8), JEQ_K(6, 0, 6), VALUE8(M_KVAL, 1), XCHG(6), DROP_OLD(),
	  MOV_K(0, 0), EXIT());
}

/* an object holding a kptr, stashed in a map: dropping either frees what it holds */
static void nested_rules(void)
{
	P("stash a holder holding a plain object", NEW6(T_PLAIN), ST(BPF_DW, 6, 0, 9),
	  MOV_X(7, 6), NEW6D7(T_HOLDER), MOV_X(1, 6), ADD_K(1, 8), MOV_X(2, 7), CALL(kptr_xchg),
	  DROP_OLD(), VALUE8(M_HVAL, 0), XCHG(6), DROP_OLD(), MOV_K(0, 0), EXIT());
	P("unstash the holder and its plain object", VALUE8N(M_HVAL, 0), MOV_K(6, 0), XCHG(6), JNE_K(0, 0, 2), MOV_K(0, 100), EXIT(),
	  MOV_X(6, 0), MOV_X(1, 6), ADD_K(1, 8), MOV_K(2, 0), CALL(kptr_xchg), MOV_K(7, 101),
	  JEQ_K(0, 0, 4), LDX(BPF_DW, 7, 0, 0), DROP(0), DROP(6), MOV_X(0, 7), EXIT());
	P("holder dropped with its plain object in", NEW6(T_PLAIN), MOV_X(7, 6), NEW6D7(T_HOLDER),
	  MOV_X(1, 6), ADD_K(1, 8), MOV_X(2, 7), CALL(kptr_xchg), DROP_OLD(), DROP(6),
	  MOV_K(0, 0), EXIT());
	P("holder's kptr read directly", NEW6(T_HOLDER), LDX(BPF_DW, 0, 6, 8), DROP(6),
	  MOV_K(0, 0), EXIT());
}

/* bpf_refcount: a stashed refcounted object loaded and acquired */
static void refcount_rules(void)
{
	P("stash a refcounted object", NEW6(T_RCNODE), ST(BPF_DW, 6, 0, 42), VALUE8(M_RCVAL, 0),
	  XCHG(6), DROP_OLD(), MOV_K(0, 0), EXIT());
	P("refcount_acquire of the stashed object", VALUE8N(M_RCVAL, 0), LDX(BPF_DW, 1, 8, 8), JNE_K(1, 0, 2), MOV_K(0, 100), EXIT(),
	  MOV_K(2, 0), KCALL(k_acq), JNE_K(0, 0, 2), MOV_K(0, 101), EXIT(), LDX(BPF_DW, 7, 0, 0),
	  DROP(0), MOV_X(0, 7), EXIT());
}

/* bpf_mem_alloc() serves 4,096 bytes with its 8-byte link: a larger object is NULL at run
 * time (the verifier takes any size); percpu objects stop at 512 bytes in the verifier */
static void size_rules(void)
{
	P("object of 4088 bytes", MOV_K(1, T_BIG), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 2),
	  MOV_K(0, 1), EXIT(), MOV_X(6, 0), ST(BPF_DW, 6, 4080, 5), LDX(BPF_DW, 7, 6, 4080),
	  DROP(6), MOV_X(0, 7), EXIT());
	P("object of 4096 bytes", MOV_K(1, T_BIG2), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 2),
	  MOV_K(0, 1), EXIT(), MOV_X(6, 0), ST(BPF_DW, 6, 4088, 5), LDX(BPF_DW, 7, 6, 4088),
	  DROP(6), MOV_X(0, 7), EXIT());
	P("object of 4092 bytes", MOV_K(1, T_BIG3), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 2),
	  MOV_K(0, 1), EXIT(), MOV_X(6, 0), DROP(6), MOV_K(0, 0), EXIT());
	P("percpu object of 512 bytes", MOV_K(1, T_PBIG), MOV_K(2, 0), KCALL(k_pnew),
	  JNE_K(0, 0, 2), MOV_K(0, 1), EXIT(), MOV_X(1, 0), MOV_K(2, 0), KCALL(k_pdrop),
	  MOV_K(0, 0), EXIT());
	P("percpu object of 520 bytes", MOV_K(1, T_PBIG2), MOV_K(2, 0), KCALL(k_pnew),
	  JNE_K(0, 0, 2), MOV_K(0, 1), EXIT(), MOV_X(1, 0), MOV_K(2, 0), KCALL(k_pdrop),
	  MOV_K(0, 0), EXIT());
}

/* r6 = the percpu object stashed at M_PVAL's value 0 (RCU: a tc program cannot sleep),
 * the program returning 100 when there is none */
#define PLOAD6() VALUE8N(M_PVAL, 0), LDX(BPF_DW, 6, 8, 8), JNE_K(6, 0, 2), MOV_K(0, 100), EXIT()
/* r0 = bpf_this_cpu_ptr(r6), bpf_per_cpu_ptr(r6, cpu) */
#define THIS6() MOV_X(1, 6), CALL(this_cpu_ptr)
#define PER6(cpu) MOV_X(1, 6), MOV_K(2, cpu), CALL(per_cpu_ptr)
#define PDROP(r) MOV_X(1, r), MOV_K(2, 0), KCALL(k_pdrop)

/* bpf_this_cpu_ptr / bpf_per_cpu_ptr on a stashed percpu object: one copy a CPU.  The
 * test runs on CPU 0 (main() pins the process), so this CPU's copy is CPU 0's on both
 * sides; whole level-2 logs compared. */
static void percpu_access_rules(void)
{
	whole_log = 1;
	/* a fresh percpu object's bytes are whatever bpf_mem_alloc() reused in the kernel
	 * (bpfrt's are zero): both CPUs' copies zeroed first */
	P("per_cpu_ptr: a and b of CPUs 0 and 1 zeroed", PLOAD6(), PER6(0), JEQ_K(0, 0, 2),
	  ST(BPF_DW, 0, 0, 0), ST(BPF_DW, 0, 8, 0), PER6(1), JEQ_K(0, 0, 2), ST(BPF_DW, 0, 0, 0),
	  ST(BPF_DW, 0, 8, 0), MOV_K(0, 0), EXIT());
	P("this_cpu_ptr: this CPU's a plus 1", PLOAD6(), THIS6(), LDX(BPF_DW, 7, 0, 0),
	  ADD_K(7, 1), STX(BPF_DW, 0, 7, 0), MOV_X(0, 7), EXIT());
	P("per_cpu_ptr: a of CPUs 0 and 1 summed", PLOAD6(), MOV_K(7, 0), PER6(0),
	  JEQ_K(0, 0, 2), LDX(BPF_DW, 1, 0, 0), ADD_X(7, 1), PER6(1), JEQ_K(0, 0, 2),
	  LDX(BPF_DW, 1, 0, 0), ADD_X(7, 1), MOV_X(0, 7), EXIT());
	P("per_cpu_ptr: b of CPUs 0 and 1 set, this CPU's read", PLOAD6(), PER6(0),
	  JEQ_K(0, 0, 1), ST(BPF_DW, 0, 8, 10), PER6(1), JEQ_K(0, 0, 1), ST(BPF_DW, 0, 8, 20),
	  THIS6(), LDX(BPF_DW, 0, 0, 8), EXIT());
	P("per_cpu_ptr of CPU 2: NULL past the possible CPUs", PLOAD6(), PER6(2),
	  JEQ_K(0, 0, 2), MOV_K(0, 1), EXIT(), MOV_K(0, 2), EXIT());
	P("per_cpu_ptr of CPU -1", PLOAD6(), PER6(-1), JEQ_K(0, 0, 2), MOV_K(0, 1), EXIT(),
	  MOV_K(0, 2), EXIT());
	P("per_cpu_ptr of CPU 2^32 + 1: the cpu is 32 bits", PLOAD6(), MOV_K(2, 1),
	  LSH_K(2, 32), ADD_K(2, 1), MOV_X(1, 6), CALL(per_cpu_ptr), JEQ_K(0, 0, 2),
	  LDX(BPF_DW, 0, 0, 8), EXIT(), MOV_K(0, 2), EXIT());
	P("per_cpu_ptr's result read without a NULL check", PLOAD6(), PER6(0),
	  LDX(BPF_DW, 0, 0, 8), EXIT());
	P("this_cpu_ptr's result read beyond the struct", PLOAD6(), THIS6(),
	  LDX(BPF_DW, 0, 0, 16), EXIT());
	P("this_cpu_ptr's result written at a u32", PLOAD6(), THIS6(), ST(BPF_W, 0, 4, 3),
	  LDX(BPF_DW, 0, 0, 0), EXIT());
	P("this_cpu_ptr of a load not checked for NULL", VALUE8N(M_PVAL, 0),
	  LDX(BPF_DW, 1, 8, 8), CALL(this_cpu_ptr), MOV_K(0, 0), EXIT());
	P("this_cpu_ptr of a new percpu object", MOV_K(1, T_PLAIN), MOV_K(2, 0), KCALL(k_pnew),
	  JNE_K(0, 0, 1), EXIT(), MOV_X(6, 0), THIS6(), PDROP(6), MOV_K(0, 0), EXIT());
	P("this_cpu_ptr of an object after it was stashed", VALUE8N(M_PVAL, 1), MOV_K(1, T_PLAIN),
	  MOV_K(2, 0), KCALL(k_pnew), JNE_K(0, 0, 1), EXIT(), MOV_X(6, 0), XCHG(6),
	  JEQ_K(0, 0, 3), PDROP(0), THIS6(), ST(BPF_DW, 0, 0, 5), LDX(BPF_DW, 0, 0, 0), EXIT());
	P("this_cpu_ptr of an object dropped after it was stashed", VALUE8N(M_PVAL, 1),
	  MOV_K(1, T_PLAIN), MOV_K(2, 0), KCALL(k_pnew), JNE_K(0, 0, 1), EXIT(), MOV_X(6, 0),
	  XCHG(6), JEQ_K(0, 0, 3), PDROP(0), PDROP(6), THIS6(), MOV_K(0, 0), EXIT());
	P("this_cpu_ptr of a percpu pointer at an offset", PLOAD6(), ADD_K(6, 8), THIS6(),
	  MOV_K(0, 0), EXIT());
	P("this_cpu_ptr of an unstashed object", VALUE8N(M_PVAL, 1), MOV_K(6, 0), XCHG(6),
	  JNE_K(0, 0, 1), EXIT(), MOV_X(6, 0), THIS6(), PDROP(6), MOV_K(0, 0), EXIT());
	P("percpu pointer read directly", PLOAD6(), LDX(BPF_DW, 0, 6, 0), EXIT());
	P("percpu pointer written directly", PLOAD6(), ST(BPF_DW, 6, 0, 1), MOV_K(0, 0), EXIT());
	P("this_cpu_ptr's result given to bpf_kptr_xchg", PLOAD6(), THIS6(), MOV_X(2, 0),
	  MOV_X(1, 8), ADD_K(1, 8), CALL(kptr_xchg), JEQ_K(0, 0, 1), PDROP(0), MOV_K(0, 0),
	  EXIT());
	P("loaded percpu pointer given to bpf_kptr_xchg", PLOAD6(), MOV_X(2, 6), MOV_X(1, 8),
	  ADD_K(1, 8), CALL(kptr_xchg), JEQ_K(0, 0, 1), PDROP(0), MOV_K(0, 0), EXIT());
	P("loaded percpu pointer dropped", PLOAD6(), PDROP(6), MOV_K(0, 0), EXIT());
	P("per_cpu_ptr of a plain kptr", VALUE8N(M_KVAL, 0), LDX(BPF_DW, 6, 8, 8),
	  JNE_K(6, 0, 2), MOV_K(0, 100), EXIT(), PER6(0), MOV_K(0, 0), EXIT());
	P("this_cpu_ptr of its own result", PLOAD6(), THIS6(), MOV_X(1, 0), CALL(this_cpu_ptr),
	  MOV_K(0, 0), EXIT());
	sleepable = 1;
	/* what it reads differs: the kernel's object holds the __percpu pointer at 0 */
	P("sleepable: percpu kptr loaded outside RCU, read", PLOAD6(), LDX(BPF_DW, 7, 6, 0),
	  MOV_K(0, 0), EXIT());
	P("sleepable: percpu kptr loaded outside RCU, this_cpu_ptr", PLOAD6(), THIS6(),
	  MOV_K(0, 0), EXIT());
	P("sleepable: percpu kptr loaded outside RCU, written", PLOAD6(), ST(BPF_DW, 6, 0, 1),
	  MOV_K(0, 0), EXIT());
	sleepable = 0;
	P("this_cpu_ptr's result compared with per_cpu_ptr's", PLOAD6(), THIS6(), MOV_X(7, 0),
	  PER6(0), MOV_K(1, 1), I(BPF_JMP | BPF_JEQ | BPF_X, 0, 7, 1, 0), MOV_K(1, 2),
	  MOV_X(0, 1), EXIT());
	whole_log = 0;
}

static void percpu_rules(void)
{
	P("stash a percpu object", MOV_K(1, T_PLAIN), MOV_K(2, 0), KCALL(k_pnew), JNE_K(0, 0, 1),
	  EXIT(), MOV_X(6, 0), VALUE8(M_PVAL, 0), XCHG(6), JEQ_K(0, 0, 3), MOV_X(1, 0),
	  MOV_K(2, 0), KCALL(k_pdrop), MOV_K(0, 0), EXIT());
	P("stash a plain object into a percpu kptr", NEW6(T_PLAIN), VALUE8(M_PVAL, 0), XCHG(6),
	  DROP_OLD(), MOV_K(0, 0), EXIT());
	percpu_access_rules();
	P("unstash a percpu object", VALUE8N(M_PVAL, 0),
	  MOV_K(6, 0), XCHG(6), JNE_K(0, 0, 2), MOV_K(0, 100), EXIT(), MOV_X(1, 0), MOV_K(2, 0),
	  KCALL(k_pdrop), MOV_K(0, 1), EXIT());
}

/* a syscall on map m of side s: the errno (0: none) */
static int map_cmd(struct side *s, int cmd, int m, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)s->map[m];
	a.key = (uintptr_t)&key;
	a.value = cmd == BPF_MAP_DELETE_ELEM ? 0 : (uintptr_t)value;
	return s->bpf(cmd, &a, sizeof(a)) ? errno : 0;
}

/* the same syscall on both sides: the errno and the value equal (an update writes
 * 0x1111... over the kptr too, which neither side takes) */
static void both_cmd(const char *name, int cmd, int m, uint32_t key)
{
	unsigned char kv[16], bv[16];
	int ke, be;

	T_CASE(name);
	memset(kv, 0x11, sizeof(kv));
	memset(bv, 0x11, sizeof(bv));
	ke = map_cmd(&ks, cmd, m, key, kv);
	be = map_cmd(&bs, cmd, m, key, bv);
	if (getenv("KPTR_DUMP"))
		fprintf(stderr, "%s: kernel %d, bpfrt %d\n", name, ke, be);
	T_EQ_INT(ke, be);
	T_EQ_INT(memcmp(kv, bv, sizeof(kv)), 0);
}

static void map_free_rules(void)
{
	long before = brt_graph_live_objects();

	P("stash into array value 1", NEW6(T_PLAIN), ST(BPF_DW, 6, 0, 3), VALUE8(M_KVAL, 1),
	  XCHG(6), DROP_OLD(), MOV_K(0, 0), EXIT());
	both_cmd("array value read with an object stashed", BPF_MAP_LOOKUP_ELEM, M_KVAL, 1);
	both_cmd("array value with an object replaced", BPF_MAP_UPDATE_ELEM, M_KVAL, 1);
	T_CASE("array value replaced: its object is freed");
	T_EQ_INT(brt_graph_live_objects(), before);
	both_cmd("array value read after the update", BPF_MAP_LOOKUP_ELEM, M_KVAL, 1);
	P("the replaced value's kptr is empty (the update's bytes are not copied into it)",
	  VALUE8N(M_KVAL, 1), LDX(BPF_DW, 0, 8, 8), JNE_K(0, 0, 2), MOV_K(0, 100), EXIT(),
	  MOV_K(0, 1), EXIT());
	P("unstash from the replaced value", VALUE8N(M_KVAL, 1), MOV_K(6, 0), XCHG(6), MOV_K(7, 100), JEQ_K(0, 0, 4),
	  LDX(BPF_DW, 7, 0, 0), DROP(0), MOV_X(0, 7), EXIT());
	both_cmd("hash element added", BPF_MAP_UPDATE_ELEM, M_HASH, 0);
	P("stash into the hash element", NEW6(T_PLAIN), ST(BPF_DW, 6, 0, 4), VALUE8(M_HASH, 0),
	  XCHG(6), DROP_OLD(), MOV_K(0, 0), EXIT());
	both_cmd("hash element read with an object stashed", BPF_MAP_LOOKUP_ELEM, M_HASH, 0);
	both_cmd("hash element replaced", BPF_MAP_UPDATE_ELEM, M_HASH, 0);
	T_CASE("hash element replaced: its object is freed");
	T_EQ_INT(brt_graph_live_objects(), before);
	P("stash into the hash element again", NEW6(T_PLAIN), ST(BPF_DW, 6, 0, 5),
	  VALUE8(M_HASH, 0), XCHG(6), DROP_OLD(), MOV_K(0, 0), EXIT());
	both_cmd("hash element deleted", BPF_MAP_DELETE_ELEM, M_HASH, 0);
	T_CASE("hash element deleted: its object is freed");
	T_EQ_INT(brt_graph_live_objects(), before);
	both_cmd("hash element added again", BPF_MAP_UPDATE_ELEM, M_HASH, 0);
	P("unstash from the new hash element", VALUE8N(M_HASH, 0), MOV_K(6, 0), XCHG(6), MOV_K(7, 100), JEQ_K(0, 0, 4),
	  LDX(BPF_DW, 7, 0, 0), DROP(0), MOV_X(0, 7), EXIT());
	P("program update of a value holding an object", NEW6(T_PLAIN), VALUE8(M_KVAL, 1),
	  XCHG(6), DROP_OLD(), ST(BPF_DW, 10, -24, 0), ST(BPF_DW, 10, -16, 0), LD_MAP(1, M_KVAL),
	  MOV_X(2, 10), ADD_K(2, -4), MOV_X(3, 10), ADD_K(3, -24), MOV_K(4, 0),
	  CALL(map_update_elem), MOV_K(6, 0), XCHG(6), MOV_K(7, 100), JEQ_K(0, 0, 4), DROP(0),
	  MOV_K(7, 1), MOV_X(0, 7), EXIT());
	T_CASE("program update: the replaced object is freed");
	T_EQ_INT(brt_graph_live_objects(), before);
	/* a holder with its plain object stashed, the value replaced: both go */
	P("stash a holder holding a plain object (to be replaced)", NEW6(T_PLAIN), MOV_X(7, 6),
	  NEW6D7(T_HOLDER), MOV_X(1, 6), ADD_K(1, 8), MOV_X(2, 7), CALL(kptr_xchg), DROP_OLD(),
	  VALUE8(M_HVAL, 0), XCHG(6), DROP_OLD(), MOV_K(0, 0), EXIT());
	both_cmd("holder's value replaced", BPF_MAP_UPDATE_ELEM, M_HVAL, 0);
	T_CASE("holder's value replaced: the holder and its object are freed");
	T_EQ_INT(brt_graph_live_objects(), before);
	/* a map closed with an object stashed: the kernel frees it with the map */
	P("stash into the map to close", NEW6(T_PLAIN), VALUE8(M_CLOSE, 0), XCHG(6), DROP_OLD(),
	  MOV_K(0, 0), EXIT());
	close(ks.map[M_CLOSE]);
	close(bs.map[M_CLOSE]);
	for (int i = 0; i < 4 && brt_obj_sweep() > 0; i++)
		;
	T_CASE("map closed: its stashed object is freed");
	T_EQ_INT(brt_graph_live_objects(), before);
}

/* MAP_CREATE: kptrs and the programs' access flags */
static void create_rules(void)
{
	static const struct {
		const char *name;
		uint32_t type, vt, flags;
	} c[] = {
		{ "array of kptrs, read-only for programs", BPF_MAP_TYPE_ARRAY, T_KVAL,
		  BPF_F_RDONLY_PROG },
		{ "hash of kptrs, write-only for programs", BPF_MAP_TYPE_HASH, T_KVAL,
		  BPF_F_WRONLY_PROG },
		{ "LRU hash of kptrs", BPF_MAP_TYPE_LRU_HASH, T_KVAL, 0 },
		{ "percpu array of kptrs", BPF_MAP_TYPE_PERCPU_ARRAY, T_KVAL, 0 },
		{ "array of untrusted kptrs", BPF_MAP_TYPE_ARRAY, T_UVAL, 0 },
	};

	for (size_t i = 0; i < N(c); i++) {
		int kfd = map_create(&ks, c[i].type, c[i].vt, c[i].flags);
		int ke = kfd < 0 ? errno : 0;
		int bfd = map_create(&bs, c[i].type, c[i].vt, c[i].flags);
		int be = bfd < 0 ? errno : 0;

		T_CASE(c[i].name);
		T_EQ_INT(ke, be);
		if (kfd >= 0)
			close(kfd);
		if (bfd >= 0)
			close(bfd);
	}
}

int main(void)
{
	struct btf_build b;
	long before;
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
	if (k_new <= 0 || k_drop <= 0 || k_pnew <= 0 || k_pdrop <= 0 || k_acq <= 0)
		T_SKIP("the kernel's BTF lacks the allocated object kfuncs");
	build_btf(&b);
	err = side_setup(&ks, &b);
	if (err)
		T_SKIP("the kernel refused the BTF or its maps (%d)", err);
	err = side_setup(&bs, &b);
	T_EQ_INT(err, 0);
	if (err)
		return t_done();
	/* on CPU 0, so both sides' test runs see the same CPU's copies of a percpu object */
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			T_SKIP("cannot run on CPU 0 (%d)", errno);
	}
	before = brt_graph_live_objects();
	create_rules();
	stash_rules();
	nested_rules();
	refcount_rules();
	percpu_rules();
	size_rules();
	map_free_rules();
	/* what the programs left stashed goes with the maps */
	for (int i = 1; i < NMAPS; i++) {
		close(ks.map[i]);
		close(bs.map[i]);
	}
	for (int i = 0; i < 4 && brt_obj_sweep() > 0; i++)
		;
	T_CASE("every map closed: bpfrt's live objects back to the start");
	T_EQ_INT(brt_graph_live_objects(), before);
	printf("%d programs compared, %d test runs, %d level-2 logs identical\n", compared, runs,
	       logs_same);
	return t_done();
}
