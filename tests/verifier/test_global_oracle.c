/* test_global_oracle.c - global functions (src/verifier/global.c) against the kernel:
 * each case is a program of up to four functions with func_info and a BTF prototype per
 * function (linkage, return type, argument types, "arg:" decl tags), loaded through the
 * kernel's bpf() and through bpfrt_bpf(); verdict, errno and the log's last error line
 * must be equal, one transcript line per case.  Cases: scalar, context and memory
 * arguments checked at the call (and the kernel's messages when the caller's registers
 * do not match), global functions verified on their own with possibly-NULL memory
 * arguments, their return value an unknown scalar to the caller, prototypes the kernel
 * refuses (void or pointer return, six arguments, sizeless pointees, structs by value),
 * decl tags, exception callback tags, global functions reached only through other global
 * functions or from dead code, packet pointers cleared after a global function that
 * changes packet data; exception callbacks with bpf_throw (the callback's argument and
 * return rules, a throw inside it, a call of it, tail calls below it), accepted ones
 * test-run on both sides (a 64-byte frame; "ok retval N": the callback's value).
 * Processed-instruction counts of accepted cases are compared too (a figure, printed).
 * Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "btf_blob.h"
#include "harness.h"
#include "transcript.h"
#include "verifier/cases/case.h"

/* ---- BTF: fixed base types, then a FUNC_PROTO and FUNC per function, then tags ---- */
enum {
	T_INT = 1,    /* int */
	T_SKB,        /* struct __sk_buff (the skb types' context) */
	T_SKB_P,
	T_INT_P,      /* int * */
	T_BIG,        /* struct big, 64 bytes */
	T_BIG_P,
	T_VOID_P,     /* void * */
	T_XDP,        /* struct xdp_md */
	T_XDP_P,
	T_KSKB,       /* struct sk_buff (what __sk_buff projects) */
	T_KSKB_P,
	T_ENUM,       /* enum e */
	T_LONG,       /* long (8 bytes) */
	T_ARR,        /* int[4] */
	T_ARR_P,
	T_FWD,        /* struct fwd; (no size) */
	T_FWD_P,
	T_INT_PP,     /* int ** */
	T_CONST_INT,  /* const int */
	T_CONST_INT_P,
	T_DYNPTR,     /* struct bpf_dynptr (16 bytes) */
	T_CONST_DYNPTR,
	T_CONST_DYNPTR_P,
	T_BASE_END,
};
#define T_VOID 0

struct fn {
	const char *name;
	int global;
	uint32_t ret;
	int nargs;
	uint32_t args[6];
	const char *tag;  /* "arg:..." decl tag on argument tag_arg, or NULL */
	int tag_arg;
	int tag_twice;    /* the same tag twice */
	const struct bpf_insn *body;
	size_t len;
};

#define BODY(...) .body = (const struct bpf_insn[]){ __VA_ARGS__ }, \
	.len = sizeof((const struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn)
/* call function n of the case (resolved when the program is laid out) */
#define CALLF(n) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1000 + (n))
/* call the kernel's bpf_throw (its BTF id resolved at layout) */
#define THROW I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, -2)

struct gcase {
	const char *name;
	uint32_t prog_type;
	int map;          /* needs map 0: an array, key 4, value 8; 2: an array whose value
			   * {int cnt; struct bpf_spin_lock lock;} has a lock at 4 (map BTF) */
	struct fn f[4];   /* f[0] is the main program */
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

	memcpy(b->s + b->ns, s, strlen(s) + 1);
	b->ns += (uint32_t)strlen(s) + 1;
	return off;
}

static void ty(struct blob *b, const char *name, uint32_t kind, uint32_t vlen, uint32_t sz)
{
	b->w[b->nw++] = name ? str(b, name) : 0;
	b->w[b->nw++] = kind << 24 | vlen;
	b->w[b->nw++] = sz;
}

static void base_types(struct blob *b)
{
	ty(b, "int", BTF_KIND_INT, 0, 4);
	b->w[b->nw++] = BTF_INT_SIGNED << 24 | 32;
	ty(b, "__sk_buff", BTF_KIND_STRUCT, 0, 4);
	ty(b, NULL, BTF_KIND_PTR, 0, T_SKB);
	ty(b, NULL, BTF_KIND_PTR, 0, T_INT);
	ty(b, "big", BTF_KIND_STRUCT, 0, 64);
	ty(b, NULL, BTF_KIND_PTR, 0, T_BIG);
	ty(b, NULL, BTF_KIND_PTR, 0, T_VOID);
	ty(b, "xdp_md", BTF_KIND_STRUCT, 0, 4);
	ty(b, NULL, BTF_KIND_PTR, 0, T_XDP);
	ty(b, "sk_buff", BTF_KIND_STRUCT, 0, 4);
	ty(b, NULL, BTF_KIND_PTR, 0, T_KSKB);
	ty(b, "e", BTF_KIND_ENUM, 1, 4);
	b->w[b->nw++] = str(b, "E0");
	b->w[b->nw++] = 0;
	ty(b, "long", BTF_KIND_INT, 0, 8);
	b->w[b->nw++] = BTF_INT_SIGNED << 24 | 64;
	ty(b, NULL, BTF_KIND_ARRAY, 0, 0);
	b->w[b->nw++] = T_INT;
	b->w[b->nw++] = T_INT;
	b->w[b->nw++] = 4;
	ty(b, NULL, BTF_KIND_PTR, 0, T_ARR);
	ty(b, "fwd", BTF_KIND_FWD, 0, 0);
	ty(b, NULL, BTF_KIND_PTR, 0, T_FWD);
	ty(b, NULL, BTF_KIND_PTR, 0, T_INT_P);
	ty(b, NULL, BTF_KIND_CONST, 0, T_INT);
	ty(b, NULL, BTF_KIND_PTR, 0, T_CONST_INT);
	ty(b, "bpf_dynptr", BTF_KIND_STRUCT, 0, 16);
	ty(b, NULL, BTF_KIND_CONST, 0, T_DYNPTR);
	ty(b, NULL, BTF_KIND_PTR, 0, T_CONST_DYNPTR);
}

static int nfuncs(const struct gcase *c)
{
	int n = 0;

	while (n < 4 && c->f[n].body)
		n++;
	return n;
}

/* BPF_BTF_LOAD of the case's BTF on side sys; func_ids[i] gets function i's FUNC id */
static int load_btf(sys_fn sys, const struct gcase *c, uint32_t *func_ids)
{
	static struct blob b;
	uint32_t id = T_BASE_END;
	int n = nfuncs(c);

	memset(&b, 0, sizeof(b));
	b.ns = 1;
	base_types(&b);
	for (int i = 0; i < n; i++) {
		const struct fn *f = &c->f[i];

		ty(&b, NULL, BTF_KIND_FUNC_PROTO, (uint32_t)f->nargs, f->ret);
		for (int k = 0; k < f->nargs; k++) {
			b.w[b.nw++] = str(&b, k ? "b" : "a");
			b.w[b.nw++] = f->args[k];
		}
		ty(&b, f->name, BTF_KIND_FUNC, f->global ? BTF_FUNC_GLOBAL : BTF_FUNC_STATIC, id);
		func_ids[i] = id + 1;
		id += 2;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; c->f[i].tag && k < 1 + c->f[i].tag_twice; k++) {
			ty(&b, c->f[i].tag, BTF_KIND_DECL_TAG, 0, func_ids[i]);
			b.w[b.nw++] = (uint32_t)c->f[i].tag_arg;
			id++;
		}
	return btf_blob_load(sys, b.w, b.nw * 4, b.s, b.ns);
}

/* An array map whose 8-byte value holds a struct bpf_spin_lock at offset 4: its fd or
 * -errno (the BTF object is closed again; the map keeps it). */
static int lock_map(sys_fn sys)
{
	static const char strs[] = "\0int\0bpf_spin_lock\0val\0cnt\0lock";
	uint32_t w[] = { 1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
			 5, BTF_KIND_STRUCT << 24 | 1, 4, 27, 1, 0,
			 19, BTF_KIND_STRUCT << 24 | 2, 8, 23, 1, 0, 27, 2, 32 };
	int btf, fd;

	btf = btf_blob_load(sys, w, sizeof(w), strs, sizeof(strs));
	if (btf < 0)
		return -errno;
	fd = btf_blob_map(sys, BPF_MAP_TYPE_ARRAY, 8, 1, 0, btf, 3, "");
	fd = fd < 0 ? -errno : fd;
	close(btf);
	return fd;
}

static unsigned same_count, counted;

/* one case on side sys: "name: ok" or "name: load -errno line"; *processed the count */
static void run_case(sys_fn sys, struct transcript *t, const struct gcase *c,
		     unsigned *processed)
{
	static struct bpf_insn insns[512];
	static char log[1 << 20];
	struct bpf_func_info fi[4];
	uint32_t func_ids[4], start[4], len = 0;
	int n = nfuncs(c), btf_fd, map_fd = -1, fd;
	union bpf_attr a;

	*processed = 0;
	for (int i = 0; i < n; i++) {
		start[i] = len;
		memcpy(insns + len, c->f[i].body, c->f[i].len * sizeof(*insns));
		len += (uint32_t)c->f[i].len;
	}
	if (c->map)
		map_fd = c->map == 2 ? lock_map(sys) : create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0, 0);
	for (uint32_t i = 0; i < len; i++) {
		if (insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == BPF_PSEUDO_CALL &&
		    insns[i].imm >= 1000)
			insns[i].imm = (int32_t)start[insns[i].imm - 1000] - (int32_t)i - 1;
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = map_fd;
		if (insns[i].code == (BPF_JMP | BPF_CALL) &&
		    insns[i].src_reg == BPF_PSEUDO_KFUNC_CALL && insns[i].imm == -2)
			insns[i].imm = brt_btf_find(brt_btf_vmlinux(), "bpf_throw", BTF_KIND_FUNC);
	}
	btf_fd = load_btf(sys, c, func_ids);
	if (btf_fd < 0) {
		say(t, "%s: btf %d\n", c->name, -errno);
		goto out;
	}
	for (int i = 0; i < n; i++)
		fi[i] = (struct bpf_func_info){ .insn_off = start[i], .type_id = func_ids[i] };
	prog_attr(&a, c->prog_type ? c->prog_type : BPF_PROG_TYPE_SOCKET_FILTER, 0, insns, len);
	a.prog_btf_fd = (uint32_t)btf_fd;
	a.func_info = (uint64_t)(uintptr_t)fi;
	a.func_info_cnt = (uint32_t)n;
	a.func_info_rec_size = sizeof(fi[0]);
	fd = prog_load_log(sys, &a, log, sizeof(log), 1);
	t->steps++;
	if (fd >= 0) {
		const char *p = strstr(log, "processed ");

		if (p)
			*processed = (unsigned)strtoul(p + 10, NULL, 10);
		if (c->prog_type == BPF_PROG_TYPE_SCHED_CLS) {
			/* a run: the exception callback's value when the program throws */
			static unsigned char pkt[64];
			union bpf_attr r;

			memset(&r, 0, sizeof(r));
			r.test.prog_fd = (uint32_t)fd;
			r.test.data_in = (uint64_t)(uintptr_t)pkt;
			r.test.data_size_in = sizeof(pkt);
			if (sys(BPF_PROG_TEST_RUN, &r, sizeof(r)))
				say(t, "%s: ok, run %d\n", c->name, -errno);
			else
				say(t, "%s: ok retval %u\n", c->name, r.test.retval);
		} else {
			say(t, "%s: ok\n", c->name);
		}
		close(fd);
	} else {
		say_load_error(t, c->name, fd, log);
		if (getenv("BPFRT_SHOW_LOG"))
			fprintf(stderr, "---- %s\n%s\n", c->name, log);
	}
	close(btf_fd);
out:
	if (map_fd >= 0)
		close(map_fd);
}

/* main programs */
#define RET0 MOV64_IMM(0, 0), EXIT()
#define M_CALL_R1(...) { "main", 1, T_INT, 1, { T_SKB_P }, BODY(__VA_ARGS__, CALLF(1), RET0) }
#define MAIN_SKB(...) { "main", 1, T_INT, 1, { T_SKB_P }, BODY(__VA_ARGS__) }
#define MAIN_XDP(...) { "main", 1, T_INT, 1, { T_XDP_P }, BODY(__VA_ARGS__) }
/* r1 = fp - off with 8 zeroed bytes below it */
#define FP_ARG(off) ST(BPF_DW, 10, -(off), 0), MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -(off))
#define FP_ARG64 ST(BPF_DW, 10, -64, 0), ST(BPF_DW, 10, -56, 0), ST(BPF_DW, 10, -48, 0), \
	ST(BPF_DW, 10, -40, 0), ST(BPF_DW, 10, -32, 0), ST(BPF_DW, 10, -24, 0),          \
	ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0), MOV64_REG(1, 10),                 \
	ALU64_IMM(BPF_ADD, 1, -64)
/* callees */
#define F_SCALAR(g) { "f1", g, T_INT, 1, { T_INT }, BODY(MOV64_REG(0, 1), EXIT()) }
#define F_DEREF(g, t) { "f1", g, T_INT, 1, { t }, BODY(LDX(BPF_W, 0, 1, 0), EXIT()) }
#define F_DEREF_CHECKED(g, t) { "f1", g, T_INT, 1, { t }, \
	BODY(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 1, 0, 1), LDX(BPF_W, 0, 1, 0), EXIT()) }
#define F_RET0(g, t) { "f1", g, T_INT, 1, { t }, BODY(RET0) }
#define LOOKUP ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), \
	LD_MAP(1, 0), CALL(BPF_FUNC_map_lookup_elem)
/* sched_cls: r2 = data, r3 = data_end, r2 + 8 <= r3 checked (else return 0) */
#define PKT8 LDX(BPF_W, 2, 1, 76), LDX(BPF_W, 3, 1, 80), MOV64_REG(4, 2), \
	ALU64_IMM(BPF_ADD, 4, 8), JREG(BPF_JLE, 4, 3, 2), MOV64_IMM(0, 0), EXIT()

/* main tagged "exception_callback:NAME" (libbpf's __exception_cb(NAME)), the kernel's
 * bpf_find_exception_callback_insn_off() */
#define M_EXC(tag, twice) { "main", 1, T_INT, 1, { T_SKB_P }, tag, -1, twice, \
			    BODY(MOV64_IMM(1, 5), CALLF(1), RET0) }
/* main throws cookie r1 = 5 (its own exit never reached), tagged with callback f1 */
#define M_THROW(...) { "main", 1, T_INT, 1, { T_SKB_P }, "exception_callback:f1", -1, 0, \
		       BODY(__VA_ARGS__) }
#define M_THROW5 M_THROW(MOV64_IMM(1, 5), THROW, RET0)
/* the callback: global, one u64/int argument, returns r1 + 100 */
#define EXC_CB(...) { "f1", 1, T_INT, 1, { T_LONG }, BODY(__VA_ARGS__) }
static const struct gcase cases[] = {
	/* exception callbacks with bpf_throw */
	{ "exc_cb_returns_cookie_plus", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_THROW5, EXC_CB(MOV64_REG(0, 1), ALU64_IMM(BPF_ADD, 0, 100), EXIT()) } },
	{ "exc_cb_no_throw_returns", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_THROW(MOV64_IMM(0, 3), EXIT()), EXC_CB(MOV64_REG(0, 1), EXIT()) } },
	{ "exc_cb_throw_in_static", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_THROW(CALLF(2), RET0), EXC_CB(MOV64_REG(0, 1), ALU64_IMM(BPF_ADD, 0, 1), EXIT()),
	    { "f2", 0, T_INT, 1, { T_INT }, BODY(MOV64_IMM(1, 41), THROW, RET0) } } },
	{ "exc_cb_throw_in_global", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_THROW(MOV64_IMM(1, 9), CALLF(2), EXIT()),
	    EXC_CB(MOV64_REG(0, 1), ALU64_IMM(BPF_MUL, 0, 2), EXIT()),
	    { "f2", 1, T_INT, 1, { T_INT }, BODY(THROW, RET0) } } },
	{ "exc_cb_two_args", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_THROW5, { "f1", 1, T_INT, 2, { T_LONG, T_LONG }, BODY(RET0) } } },
	{ "exc_cb_ctx_arg", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_THROW5, { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(RET0) } } },
	{ "exc_cb_throws", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_THROW5, EXC_CB(THROW, RET0) } },
	{ "exc_cb_static_throws", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_THROW5, EXC_CB(CALLF(2), EXIT()),
	    { "f2", 0, T_INT, 1, { T_INT }, BODY(THROW, RET0) } } },
	{ "exc_cb_called_directly", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_THROW(MOV64_IMM(1, 1), CALLF(1), RET0), EXC_CB(MOV64_REG(0, 1), EXIT()) } },
	{ "exc_cb_range_cgroup_skb", BPF_PROG_TYPE_CGROUP_SKB, 0,
	  { M_THROW(MOV64_IMM(1, 1), THROW, RET0), EXC_CB(MOV64_REG(0, 1), EXIT()) } },
	{ "exc_cb_range_ok_cgroup_skb", BPF_PROG_TYPE_CGROUP_SKB, 0,
	  { M_THROW(MOV64_IMM(1, 1), THROW, RET0), EXC_CB(MOV64_IMM(0, 1), EXIT()) } },
	{ "exc_cb_cookie_unchecked_with_cb", BPF_PROG_TYPE_CGROUP_SKB, 0,
	  { M_THROW(MOV64_IMM(1, 77), THROW, RET0), EXC_CB(MOV64_IMM(0, 0), EXIT()) } },
	/* exception callbacks: the tag's checks */
	{ "exception_cb_two_tags", 0, 0, { M_EXC("exception_callback:f1", 1), F_SCALAR(1) } },
	{ "exception_cb_not_in_btf", 0, 0, { M_EXC("exception_callback:nosuch", 0),
					     F_SCALAR(1) } },
	{ "exception_cb_static", 0, 0, { M_EXC("exception_callback:f1", 0), F_SCALAR(0) } },
	{ "exception_cb_main", 0, 0, { M_EXC("exception_callback:main", 0), F_SCALAR(1) } },
	/* a const struct bpf_dynptr * argument: the caller must pass a stack pointer (the
	 * kernel's process_dynptr_func()); bpfrt models no dynptr beyond that check */
	{ "dynptr_arg_gets_ctx", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)),
					 F_RET0(1, T_CONST_DYNPTR_P) } },
	{ "dynptr_arg_gets_scalar", 0, 0, { M_CALL_R1(MOV64_IMM(1, 7)),
					    F_RET0(1, T_CONST_DYNPTR_P) } },
	/* scalar arguments */
	{ "scalar_ok", 0, 0, { M_CALL_R1(MOV64_IMM(1, 5)), F_SCALAR(1) } },
	{ "scalar_static_ok", 0, 0, { M_CALL_R1(MOV64_IMM(1, 5)), F_SCALAR(0) } },
	{ "scalar_gets_fp", 0, 0, { M_CALL_R1(MOV64_REG(1, 10)), F_SCALAR(1) } },
	{ "scalar_gets_ctx", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)), F_SCALAR(1) } },
	{ "scalar_static_gets_fp", 0, 0, { M_CALL_R1(MOV64_REG(1, 10)), F_SCALAR(0) } },
	{ "scalar_unset", 0, 0, { MAIN_SKB(MOV64_IMM(0, 0), CALLF(1), RET0), F_SCALAR(1) } },
	{ "enum_arg", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
			      { "f1", 1, T_INT, 1, { T_ENUM }, BODY(MOV64_REG(0, 1), EXIT()) } } },
	{ "long_arg", 0, 0, { M_CALL_R1(LD64(1, 0x123456789ll)),
			      { "f1", 1, T_INT, 1, { T_LONG }, BODY(MOV64_REG(0, 1), EXIT()) } } },
	{ "enum_return", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
				 { "f1", 1, T_ENUM, 1, { T_INT }, BODY(MOV64_REG(0, 1), EXIT()) } } },
	{ "two_scalars", 0, 0, { MAIN_SKB(MOV64_IMM(1, 1), MOV64_IMM(2, 2), CALLF(1), RET0),
				 { "f1", 1, T_INT, 2, { T_INT, T_INT },
				   BODY(MOV64_REG(0, 1), ALU64_REG(BPF_ADD, 0, 2), EXIT()) } } },
	{ "reads_r2_beyond_args", 0, 0, { MAIN_SKB(MOV64_IMM(1, 1), MOV64_IMM(2, 2), CALLF(1),
						      RET0),
				     { "f1", 1, T_INT, 1, { T_INT },
				       BODY(MOV64_REG(0, 2), EXIT()) } } },
	{ "reads_r2_beyond_args_static", 0, 0, { MAIN_SKB(MOV64_IMM(1, 1), MOV64_IMM(2, 2),
							     CALLF(1), RET0),
					    { "f1", 0, T_INT, 1, { T_INT },
					      BODY(MOV64_REG(0, 2), EXIT()) } } },
	/* context arguments */
	{ "ctx_ok", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)),
			    { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(LDX(BPF_W, 0, 1, 0), EXIT()) } } },
	{ "ctx_gets_scalar", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
				     { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(RET0) } } },
	{ "ctx_gets_fp", 0, 0, { M_CALL_R1(MOV64_REG(1, 10)),
				 { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(RET0) } } },
	{ "ctx_modified", 0, 0, { M_CALL_R1(ALU64_IMM(BPF_ADD, 1, 4)),
				  { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(RET0) } } },
	{ "ctx_static_gets_scalar", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
					    { "f1", 0, T_INT, 1, { T_SKB_P }, BODY(RET0) } } },
	{ "ctx_write_len", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)),
				   { "f1", 1, T_INT, 1, { T_SKB_P },
				     BODY(ST(BPF_W, 1, 0, 0), RET0) } } },
	{ "ctx_sk_buff_projection", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { M_CALL_R1(MOV64_IMM(0, 0)),
	    { "f1", 1, T_INT, 1, { T_KSKB_P }, BODY(LDX(BPF_W, 0, 1, 0), EXIT()) } } },
	{ "ctx_xdp_ok", BPF_PROG_TYPE_XDP, 0,
	  { { "main", 1, T_INT, 1, { T_XDP_P }, BODY(CALLF(1), RET0) },
	    { "f1", 1, T_INT, 1, { T_XDP_P }, BODY(LDX(BPF_W, 0, 1, 0), EXIT()) } } },
	{ "ctx_xdp_given_skb_proto", BPF_PROG_TYPE_XDP, 0,
	  { { "main", 1, T_INT, 1, { T_XDP_P }, BODY(CALLF(1), RET0) },
	    { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(RET0) } } },
	{ "ctx_tag_void", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)),
				  { "f1", 1, T_INT, 1, { T_VOID_P }, "arg:ctx", 0,
				    BODY(LDX(BPF_W, 0, 1, 0), EXIT()) } } },
	{ "ctx_tag_int_ptr", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)),
				     { "f1", 1, T_INT, 1, { T_INT_P }, "arg:ctx", 0,
				       BODY(RET0) } } },
	{ "ctx_tag_static", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)),
				    { "f1", 0, T_INT, 1, { T_VOID_P }, "arg:ctx", 0,
				      BODY(RET0) } } },
	{ "tag_on_scalar", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
				   { "f1", 1, T_INT, 1, { T_INT }, "arg:nonnull", 0,
				     BODY(RET0) } } },
	{ "tag_unknown", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
				 { "f1", 1, T_INT, 1, { T_INT_P }, "arg:foo", 0, BODY(RET0) } } },
	{ "tag_nullable_mem", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
				      { "f1", 1, T_INT, 1, { T_INT_P }, "arg:nullable", 0,
					BODY(RET0) } } },
	{ "tag_ctx_nonnull", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)),
				     { "f1", 1, T_INT, 1, { T_SKB_P }, "arg:nonnull", 0,
				       BODY(RET0) } } },
	/* memory arguments: possibly NULL in the callee */
	{ "mem_deref_unchecked", 0, 0, { M_CALL_R1(FP_ARG(8)), F_DEREF(1, T_INT_P) } },
	{ "mem_deref_unchecked_static", 0, 0, { M_CALL_R1(FP_ARG(8)), F_DEREF(0, T_INT_P) } },
	{ "mem_deref_checked", 0, 0, { M_CALL_R1(FP_ARG(8)), F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_nonnull_deref", 0, 0, { M_CALL_R1(FP_ARG(8)),
				       { "f1", 1, T_INT, 1, { T_INT_P }, "arg:nonnull", 0,
					 BODY(LDX(BPF_W, 0, 1, 0), EXIT()) } } },
	{ "mem_nonnull_gets_null", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
					   { "f1", 1, T_INT, 1, { T_INT_P }, "arg:nonnull", 0,
					     BODY(LDX(BPF_W, 0, 1, 0), EXIT()) } } },
	{ "mem_past_end", 0, 0, { M_CALL_R1(FP_ARG(8)),
				  { "f1", 1, T_INT, 1, { T_INT_P },
				    BODY(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 1, 0, 1),
					 LDX(BPF_W, 0, 1, 4), EXIT()) } } },
	{ "mem_write", 0, 0, { M_CALL_R1(FP_ARG(8)),
			       { "f1", 1, T_INT, 1, { T_INT_P },
				 BODY(JIMM(BPF_JEQ, 1, 0, 1), ST(BPF_W, 1, 0, 7), RET0) } } },
	{ "mem_const_int_write", 0, 0, { M_CALL_R1(FP_ARG(8)),
					 { "f1", 1, T_INT, 1, { T_CONST_INT_P },
					   BODY(JIMM(BPF_JEQ, 1, 0, 1), ST(BPF_W, 1, 0, 7), RET0) } } },
	{ "mem_null_const", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)), F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_scalar", 0, 0, { M_CALL_R1(MOV64_IMM(1, 5)), F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_ctx", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)), F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_uninit_stack_fp", 0, 0, { M_CALL_R1(MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8)),
					 F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_big_small_stack", 0, 0, { M_CALL_R1(FP_ARG(8)),
					 { "f1", 1, T_INT, 1, { T_BIG_P }, BODY(RET0) } } },
	{ "mem_big_ok", 0, 0, { M_CALL_R1(FP_ARG64),
				{ "f1", 1, T_INT, 1, { T_BIG_P },
				  BODY(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 1, 0, 1),
				       LDX(BPF_DW, 0, 1, 56), EXIT()) } } },
	{ "mem_big_past_end", 0, 0, { M_CALL_R1(FP_ARG64),
				      { "f1", 1, T_INT, 1, { T_BIG_P },
					BODY(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 1, 0, 1),
					     LDX(BPF_DW, 0, 1, 60), EXIT()) } } },
	{ "mem_array", 0, 0, { M_CALL_R1(ST(BPF_DW, 10, -16, 0), FP_ARG(8),
					 ALU64_IMM(BPF_ADD, 1, -8)),
			       { "f1", 1, T_INT, 1, { T_ARR_P },
				 BODY(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 1, 0, 1),
				      LDX(BPF_W, 0, 1, 12), EXIT()) } } },
	{ "mem_ptr_ptr", 0, 0, { M_CALL_R1(FP_ARG(8)),
				 { "f1", 1, T_INT, 1, { T_INT_PP },
				   BODY(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 1, 0, 1),
					LDX(BPF_DW, 0, 1, 0), EXIT()) } } },
	{ "mem_ptr_ptr_deref_twice", 0, 0, { M_CALL_R1(FP_ARG(8)),
					     { "f1", 1, T_INT, 1, { T_INT_PP },
					       BODY(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 1, 0, 2),
						    LDX(BPF_DW, 1, 1, 0), LDX(BPF_W, 0, 1, 0),
						    EXIT()) } } },
	{ "mem_void_ptr", 0, 0, { M_CALL_R1(FP_ARG(8)),
				  { "f1", 1, T_INT, 1, { T_VOID_P }, BODY(RET0) } } },
	{ "mem_fwd_ptr", 0, 0, { M_CALL_R1(FP_ARG(8)),
				 { "f1", 1, T_INT, 1, { T_FWD_P }, BODY(RET0) } } },
	{ "mem_void_ptr_static", 0, 0, { M_CALL_R1(FP_ARG(8)),
					 { "f1", 0, T_INT, 1, { T_VOID_P }, BODY(RET0) } } },
	{ "mem_map_value", 0, 1, { MAIN_SKB(LOOKUP, JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0),
					       CALLF(1), RET0),
				   F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_map_value_or_null", 0, 1, { MAIN_SKB(LOOKUP, MOV64_REG(1, 0), CALLF(1), RET0),
					   F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_map_value_or_null_nonnull", 0, 1,
	  { MAIN_SKB(LOOKUP, MOV64_REG(1, 0), CALLF(1), RET0),
	    { "f1", 1, T_INT, 1, { T_INT_P }, "arg:nonnull", 0, BODY(RET0) } } },
	{ "mem_map_value_big", 0, 1, { MAIN_SKB(LOOKUP, JIMM(BPF_JEQ, 0, 0, 2),
						   MOV64_REG(1, 0), CALLF(1), RET0),
				       { "f1", 1, T_INT, 1, { T_BIG_P }, BODY(RET0) } } },
	{ "mem_map_value_off", 0, 1, { MAIN_SKB(LOOKUP, JIMM(BPF_JEQ, 0, 0, 3),
						   MOV64_REG(1, 0), ALU64_IMM(BPF_ADD, 1, 4),
						   CALLF(1), RET0),
				       F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_map_value_off_past", 0, 1, { MAIN_SKB(LOOKUP, JIMM(BPF_JEQ, 0, 0, 3),
							MOV64_REG(1, 0), ALU64_IMM(BPF_ADD, 1, 6),
							CALLF(1), RET0),
					    F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_pkt_checked", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { MAIN_SKB(PKT8, MOV64_REG(1, 2), CALLF(1), RET0), F_DEREF_CHECKED(1, T_INT_P) } },
	{ "mem_pkt_unchecked", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { MAIN_SKB(LDX(BPF_W, 1, 1, 76), CALLF(1), RET0), F_DEREF_CHECKED(1, T_INT_P) } },
	/* prototypes the kernel refuses */
	{ "ret_void", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
			      { "f1", 1, T_VOID, 1, { T_INT }, BODY(RET0) } } },
	{ "ret_ptr", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
			     { "f1", 1, T_INT_P, 1, { T_INT }, BODY(RET0) } } },
	{ "ret_void_static", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
				     { "f1", 0, T_VOID, 1, { T_INT }, BODY(RET0) } } },
	{ "six_args", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
			      { "f1", 1, T_INT, 6, { T_INT, T_INT, T_INT, T_INT, T_INT, T_INT },
				BODY(RET0) } } },
	{ "struct_by_value", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
				     { "f1", 1, T_INT, 1, { T_BIG }, BODY(RET0) } } },
	{ "main_returns_void", 0, 0, { { "main", 1, T_VOID, 1, { T_SKB_P }, BODY(RET0) } } },
	{ "main_two_args", 0, 0, { { "main", 1, T_INT, 2, { T_SKB_P, T_INT }, BODY(RET0) } } },
	/* the callee on its own */
	{ "r0_ctx", 0, 0, { M_CALL_R1(MOV64_IMM(0, 0)),
			    { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(MOV64_REG(0, 1), EXIT()) } } },
	{ "r0_unset", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
			      { "f1", 1, T_INT, 1, { T_INT }, BODY(EXIT()) } } },
	{ "r0_fp", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
			   { "f1", 1, T_INT, 1, { T_INT }, BODY(MOV64_REG(0, 10), EXIT()) } } },
	{ "r0_fp_static", 0, 0, { M_CALL_R1(MOV64_IMM(1, 0)),
				  { "f1", 0, T_INT, 1, { T_INT }, BODY(MOV64_REG(0, 10), EXIT()) } } },
	{ "own_stack", 0, 0, { M_CALL_R1(MOV64_IMM(1, 3)),
			       { "f1", 1, T_INT, 1, { T_INT },
				 BODY(STX(BPF_DW, 10, 1, -8), LDX(BPF_DW, 0, 10, -8), EXIT()) } } },
	{ "own_stack_uninit", 0, 0, { M_CALL_R1(MOV64_IMM(1, 3)),
				      { "f1", 1, T_INT, 1, { T_INT },
					BODY(LDX(BPF_DW, 0, 10, -8), EXIT()) } } },
	{ "scalar_index_unbounded", 0, 0, { M_CALL_R1(MOV64_IMM(1, 3)),
					    { "f1", 1, T_INT, 1, { T_INT },
					      BODY(ST(BPF_DW, 10, -8, 0), MOV64_REG(2, 10),
						   ALU64_REG(BPF_ADD, 2, 1),
						   LDX(BPF_B, 0, 2, -8), EXIT()) } } },
	{ "scalar_index_unbounded_static", 0, 0, { M_CALL_R1(MOV64_IMM(1, 3)),
						   { "f1", 0, T_INT, 1, { T_INT },
						     BODY(ST(BPF_DW, 10, -8, 0), MOV64_REG(2, 10),
							  ALU64_REG(BPF_ADD, 2, 1),
							  LDX(BPF_B, 0, 2, -8), EXIT()) } } },
	{ "bounded_loop", 0, 0, { M_CALL_R1(MOV64_IMM(1, 3)),
				  { "f1", 1, T_INT, 1, { T_INT },
				    BODY(MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
					 JIMM(BPF_JLT, 0, 20, -2), EXIT()) } } },
	/* the caller after the call */
	{ "caller_r0_unknown", BPF_PROG_TYPE_CGROUP_SKB, 0,
	  { MAIN_SKB(MOV64_IMM(1, 0), CALLF(1), EXIT()), F_RET0(1, T_INT) } },
	{ "caller_r0_known_static", BPF_PROG_TYPE_CGROUP_SKB, 0,
	  { MAIN_SKB(MOV64_IMM(1, 0), CALLF(1), EXIT()), F_RET0(0, T_INT) } },
	{ "caller_r1_after", 0, 0, { MAIN_SKB(MOV64_IMM(1, 0), CALLF(1), MOV64_REG(0, 1),
						 EXIT()), F_RET0(1, T_INT) } },
	{ "caller_r6_kept", 0, 0, { MAIN_SKB(MOV64_IMM(6, 7), MOV64_IMM(1, 0), CALLF(1),
						MOV64_REG(0, 6), EXIT()), F_RET0(1, T_INT) } },
	{ "caller_stack_kept", 0, 0, { MAIN_SKB(FP_ARG(8), CALLF(1), LDX(BPF_DW, 0, 10, -8),
						   EXIT()), F_DEREF_CHECKED(1, T_INT_P) } },
	{ "called_twice", 0, 0, { MAIN_SKB(MOV64_IMM(1, 0), CALLF(1), MOV64_IMM(1, 9),
					      CALLF(1), RET0), F_SCALAR(1) } },
	{ "dead_call_of_bad_global", 0, 0, { MAIN_SKB(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 0, 0, 2),
							 FP_ARG(8), CALLF(1), RET0),
					     F_DEREF(1, T_INT_P) } },
	{ "chain_ok", 0, 0, { MAIN_SKB(MOV64_IMM(1, 1), CALLF(1), RET0),
			      { "f1", 1, T_INT, 1, { T_INT }, BODY(CALLF(2), EXIT()) },
			      F_SCALAR(1) } },
	{ "chain_bad_second", 0, 0, { MAIN_SKB(MOV64_IMM(1, 1), CALLF(1), RET0),
				      { "f1", 1, T_INT, 1, { T_INT },
					BODY(FP_ARG(8), CALLF(2), EXIT()) },
				      { "f2", 1, T_INT, 1, { T_INT_P },
					BODY(LDX(BPF_W, 0, 1, 0), EXIT()) } } },
	{ "chain_global_calls_static", 0, 0, { MAIN_SKB(MOV64_IMM(1, 1), CALLF(1), RET0),
					       { "f1", 1, T_INT, 1, { T_INT },
						 BODY(CALLF(2), EXIT()) },
					       { "f2", 0, T_INT, 1, { T_INT },
						 BODY(MOV64_REG(0, 1), EXIT()) } } },
	{ "chain_static_calls_global", 0, 0, { MAIN_SKB(FP_ARG(8), CALLF(1), RET0),
					       { "f1", 0, T_INT, 1, { T_INT_P },
						 BODY(CALLF(2), EXIT()) },
					       F_DEREF(1, T_INT_P) } },
	{ "second_global_bad_arg", 0, 0, { MAIN_SKB(MOV64_IMM(1, 1), CALLF(1),
						       MOV64_REG(1, 10), CALLF(2), RET0),
					   F_SCALAR(1),
					   { "f2", 1, T_INT, 1, { T_INT }, BODY(RET0) } } },
	/* packet pointers after a global function */
	{ "pkt_kept", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { MAIN_SKB(PKT8, MOV64_REG(6, 2), CALLF(1), LDX(BPF_W, 0, 6, 0), EXIT()),
	    { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(RET0) } } },
	{ "pkt_cleared", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { MAIN_SKB(PKT8, MOV64_REG(6, 2), CALLF(1), LDX(BPF_W, 0, 6, 0), EXIT()),
	    { "f1", 1, T_INT, 1, { T_SKB_P },
	      BODY(MOV64_IMM(2, 0), CALL(BPF_FUNC_skb_pull_data), RET0) } } },
	{ "pkt_cleared_via_callee", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { MAIN_SKB(PKT8, MOV64_REG(6, 2), CALLF(1), LDX(BPF_W, 0, 6, 0), EXIT()),
	    { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(CALLF(2), RET0) },
	    { "f2", 0, T_INT, 1, { T_SKB_P },
	      BODY(MOV64_IMM(2, 0), CALL(BPF_FUNC_skb_pull_data), RET0) } } },
	{ "pkt_in_global", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { MAIN_SKB(CALLF(1), RET0),
	    { "f1", 1, T_INT, 1, { T_SKB_P }, BODY(MOV64_REG(1, 1), PKT8, LDX(BPF_W, 0, 2, 0),
						  EXIT()) } } },
	{ "xdp_global_adjust_head", BPF_PROG_TYPE_XDP, 0,
	  { MAIN_XDP(LDX(BPF_W, 2, 1, 0), LDX(BPF_W, 3, 1, 4), MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 8), JREG(BPF_JGT, 4, 3, 4), MOV64_REG(6, 2), CALLF(1),
			LDX(BPF_W, 0, 6, 0), EXIT(), RET0),
	    { "f1", 1, T_INT, 1, { T_XDP_P },
	      BODY(MOV64_IMM(2, 4), CALL(BPF_FUNC_xdp_adjust_head), RET0) } } },
	{ "global_helper_ctx", BPF_PROG_TYPE_SCHED_CLS, 0,
	  { MAIN_SKB(CALLF(1), RET0),
	    { "f1", 1, T_INT, 1, { T_SKB_P },
	      BODY(ST(BPF_DW, 10, -8, 0), MOV64_IMM(2, 0), MOV64_REG(3, 10),
		   ALU64_IMM(BPF_ADD, 3, -8), MOV64_IMM(4, 8), CALL(BPF_FUNC_skb_load_bytes),
		   EXIT()) } } },
	/* bpf_spin_lock regions (map 2: the lock at offset 4 of the value) */
	{ "lock_global_call_inside", BPF_PROG_TYPE_SCHED_CLS, 2,
	  { MAIN_SKB(LOOKUP, JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(6, 0),
		     MOV64_REG(1, 6), ALU64_IMM(BPF_ADD, 1, 4), CALL(BPF_FUNC_spin_lock),
		     MOV64_IMM(1, 1), CALLF(1), MOV64_REG(1, 6), ALU64_IMM(BPF_ADD, 1, 4),
		     CALL(BPF_FUNC_spin_unlock), RET0),
	    F_SCALAR(1) } },
	{ "lock_static_call_inside", BPF_PROG_TYPE_SCHED_CLS, 2,
	  { MAIN_SKB(LOOKUP, JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(6, 0),
		     MOV64_REG(1, 6), ALU64_IMM(BPF_ADD, 1, 4), CALL(BPF_FUNC_spin_lock),
		     MOV64_IMM(1, 1), CALLF(1), MOV64_REG(1, 6), ALU64_IMM(BPF_ADD, 1, 4),
		     CALL(BPF_FUNC_spin_unlock), RET0),
	    F_SCALAR(0) } },
	{ "lock_inside_global", BPF_PROG_TYPE_SCHED_CLS, 2,
	  { MAIN_SKB(CALLF(1), RET0),
	    { "f1", 1, T_INT, 1, { T_SKB_P },
	      BODY(LOOKUP, JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(6, 0),
		   MOV64_REG(1, 6), ALU64_IMM(BPF_ADD, 1, 4), CALL(BPF_FUNC_spin_lock),
		   ST(BPF_W, 6, 0, 1), MOV64_REG(1, 6), ALU64_IMM(BPF_ADD, 1, 4),
		   CALL(BPF_FUNC_spin_unlock), RET0) } } },
	{ "lock_held_at_global_exit", BPF_PROG_TYPE_SCHED_CLS, 2,
	  { MAIN_SKB(CALLF(1), RET0),
	    { "f1", 1, T_INT, 1, { T_SKB_P },
	      BODY(LOOKUP, JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(6, 0),
		   MOV64_REG(1, 6), ALU64_IMM(BPF_ADD, 1, 4), CALL(BPF_FUNC_spin_lock),
		   RET0) } } },
	{ "lock_value_to_global_mem", BPF_PROG_TYPE_SCHED_CLS, 2,
	  { MAIN_SKB(LOOKUP, JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(1, 0),
		     CALLF(1), RET0),
	    F_DEREF_CHECKED(1, T_INT_P) } },
	{ "lock_value_to_global_big", BPF_PROG_TYPE_SCHED_CLS, 2,
	  { MAIN_SKB(LOOKUP, JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(1, 0),
		     CALLF(1), RET0),
	    { "f1", 1, T_INT, 1, { T_INT_PP }, BODY(RET0) } } },
};

int main(void)
{
	static struct transcript kt, bt;
	size_t n = sizeof(cases) / sizeof(cases[0]);
	unsigned kp, bp, accepted = 0;

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	for (size_t i = 0; i < n; i++) {
		run_case(kernel_bpf, &kt, &cases[i], &kp);
		run_case(bpfrt_bpf, &bt, &cases[i], &bp);
		if (kp && bp) {
			accepted++;
			same_count += kp == bp;
			if (kp != bp && getenv("BPFRT_SHOW"))
				printf("%s: processed kernel %u bpfrt %u\n", cases[i].name, kp, bp);
		}
	}
	counted = accepted;
	compare_transcripts(&kt, &bt);
	if (getenv("BPFRT_SHOW"))
		fputs(kt.text, stdout);
	printf("global functions: %zu cases, kernel accepts %u; processed insns equal in %u "
	       "of them\n", n, accepted, same_count);
	return t_done();
}
