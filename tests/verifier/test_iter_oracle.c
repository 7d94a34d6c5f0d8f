/* test_iter_oracle.c - open-coded iterators (verifier/iter.c) and bpf_d_path
 * (verifier/d_path.c) checked against the kernel.  Each program is loaded on both sides
 * with a level-1 log; the verdict, errno and the error line (the last log line before
 * "processed") must be equal, and for programs both accept that test-run (socket filter,
 * XDP, syscall) the run's errno and retval.  Level-2 logs compared whole where the
 * element's type shows: a css_task element in sleepable and non-sleepable programs, in an
 * RCU section or not, read or handed to a kfunc or a helper.
 *
 * d_path: iter/task_file programs passing &file->f_path (the Falco corpus program's
 * pattern), file unchecked for NULL, the file or the task itself, a scalar, a NULL buffer,
 * and the program types and attach points that may not call it (tracepoint, raw
 * tracepoint: no such helper; tp_btf: "not allowed in probe").
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
#include "harness.h"
#include "log_lines.h"
#include "oracle_load.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define ADD_X(d, s) I(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define JEQ_K(d, v, o) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define JGT_K(d, v, o) I(BPF_JMP | BPF_JGT | BPF_K, d, 0, o, v)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_##f)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* r = fp - off */
#define FP(r, off) MOV_X(r, 10), ADD_K(r, -(off))

struct side {
	bpf_fn bpf;
	struct oracle_res r;
};

static struct side ks = { .bpf = oracle_kernel_bpf }, bs = { .bpf = bpfrt_bpf };
static int compared, runs;

static void load_run(struct side *s, const union bpf_attr *in)
{
	static unsigned char pkt[64];
	union bpf_attr attr = *in;
	/* the types this test runs; a syscall program's run takes no data */
	int run = in->prog_type == BPF_PROG_TYPE_SOCKET_FILTER ||
		  in->prog_type == BPF_PROG_TYPE_XDP || in->prog_type == BPF_PROG_TYPE_SYSCALL;

	oracle_load_run(s->bpf, &attr, run, in->prog_type == BPF_PROG_TYPE_SYSCALL ? NULL : pkt,
			sizeof(pkt), &s->r);
}

static void check_attr(const char *name, const union bpf_attr *attr)
{
	T_CASE(name);
	load_run(&ks, attr);
	load_run(&bs, attr);
	runs += oracle_compare(name, &ks.r, &bs.r, ORACLE_CMP_RUN, "ITER_DUMP");
	compared++;
}

static void check(const char *name, enum bpf_prog_type type, uint32_t eat, int btf_id,
		  const struct bpf_insn *insns, size_t n)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.expected_attach_type = eat;
	attr.attach_btf_id = btf_id > 0 ? (uint32_t)btf_id : 0;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	check_attr(name, &attr);
}

#define N(p) (sizeof(p) / sizeof(p[0]))

static int func_id(const char *name)
{
	return brt_btf_find(brt_btf_vmlinux(), name, BTF_KIND_FUNC);
}

/* byte offset of member in type id of the kernel's BTF (anonymous struct and union
 * members searched too), -1 when not found */
static int member_in(const struct brt_btf *vml, uint32_t id, const char *member)
{
	const struct btf_type *t = brt_btf_type(vml, brt_btf_skip_mods(vml, id));
	const struct btf_member *m = t ? (const struct btf_member *)(const void *)(t + 1) : NULL;
	unsigned kind = t ? BTF_INFO_KIND(t->info) : 0;

	if (kind != BTF_KIND_STRUCT && kind != BTF_KIND_UNION)
		return -1;
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		const char *mn = brt_btf_str(vml, m[i].name_off);
		uint32_t bit = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
						       : m[i].offset;
		int in;

		if (mn && !strcmp(mn, member))
			return (int)(bit / 8);
		if ((!mn || !*mn) && (in = member_in(vml, m[i].type, member)) >= 0)
			return (int)(bit / 8) + in;
	}
	return -1;
}

static int member_off(const char *sname, const char *member)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	int id = brt_btf_find(vml, sname, BTF_KIND_STRUCT);

	return id > 0 ? member_in(vml, (uint32_t)id, member) : -1;
}

/* ---- bpf_d_path ---------------------------------------------------------------------- */
static void d_path_rules(void)
{
	int task_file = func_id("bpf_iter_task_file"), task = func_id("bpf_iter_task");
	int f_path = member_off("file", "f_path");
	int tp_btf = brt_btf_find(brt_btf_vmlinux(), "btf_trace_sys_enter", BTF_KIND_TYPEDEF);
	/* struct bpf_iter__task_file: meta, task at 8, fd, file at 24; the path into a
	 * 64-byte stack buffer */
#define FILE_OR_EXIT() LDX(BPF_DW, 1, 1, 24), JNE_K(1, 0, 2), MOV_K(0, 0), EXIT()
#define D_PATH(sz) FP(2, 64), MOV_K(3, sz), CALL(d_path)
	struct bpf_insn ok[] = { FILE_OR_EXIT(), ADD_K(1, f_path), D_PATH(64), MOV_K(0, 0),
				 EXIT() };
	struct bpf_insn size0[] = { FILE_OR_EXIT(), ADD_K(1, f_path), D_PATH(0), MOV_K(0, 0),
				    EXIT() };
	struct bpf_insn big[] = { FILE_OR_EXIT(), ADD_K(1, f_path), D_PATH(65), MOV_K(0, 0),
				  EXIT() };
	struct bpf_insn no_null[] = { LDX(BPF_DW, 1, 1, 24), ADD_K(1, f_path), D_PATH(64),
				      MOV_K(0, 0), EXIT() };
	struct bpf_insn the_file[] = { FILE_OR_EXIT(), D_PATH(64), MOV_K(0, 0), EXIT() };
	struct bpf_insn past[] = { FILE_OR_EXIT(), ADD_K(1, f_path + 8), D_PATH(64), MOV_K(0, 0),
				   EXIT() };
	struct bpf_insn the_task[] = { LDX(BPF_DW, 1, 1, 8), JNE_K(1, 0, 2), MOV_K(0, 0), EXIT(),
				       D_PATH(64), MOV_K(0, 0), EXIT() };
	struct bpf_insn scalar[] = { MOV_K(1, 0), D_PATH(64), MOV_K(0, 0), EXIT() };
	struct bpf_insn null_buf[] = { FILE_OR_EXIT(), ADD_K(1, f_path), MOV_K(2, 0), MOV_K(3, 0),
				       CALL(d_path), MOV_K(0, 0), EXIT() };
	struct bpf_insn ctx_buf[] = { MOV_X(6, 1), FILE_OR_EXIT(), ADD_K(1, f_path), MOV_X(2, 6),
				      MOV_K(3, 8), CALL(d_path), MOV_K(0, 0), EXIT() };
	struct bpf_insn ret[] = { FILE_OR_EXIT(), ADD_K(1, f_path), D_PATH(64), EXIT() };
	struct bpf_insn plain[] = { MOV_K(1, 0), D_PATH(64), MOV_K(0, 0), EXIT() };

	if (task_file <= 0 || task <= 0 || f_path < 0) {
		printf("d_path: skipped: no bpf_iter_task_file or struct file in the kernel's BTF\n");
		return;
	}
	check("d_path of &file->f_path", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file, ok,
	      N(ok));
	check("d_path size 0", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file, size0, N(size0));
	check("d_path past the buffer", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file, big,
	      N(big));
	check("d_path file not checked for NULL", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER,
	      task_file, no_null, N(no_null));
	check("d_path of the file", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file, the_file,
	      N(the_file));
	check("d_path past f_path", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file, past,
	      N(past));
	check("d_path of the task", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file, the_task,
	      N(the_task));
	check("d_path of a scalar", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file, scalar,
	      N(scalar));
	check("d_path into NULL", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file, null_buf,
	      N(null_buf));
	check("d_path into the context", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file,
	      ctx_buf, N(ctx_buf));
	check("d_path's result returned", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task_file, ret,
	      N(ret));
	check("d_path in iter/task", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task, the_task,
	      N(the_task));
	check("d_path in a tracepoint", BPF_PROG_TYPE_TRACEPOINT, 0, 0, plain, N(plain));
	check("d_path in a raw tracepoint", BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 0, plain, N(plain));
	check("d_path in a kprobe", BPF_PROG_TYPE_KPROBE, 0, 0, plain, N(plain));
	if (tp_btf > 0)
		check("d_path in tp_btf (not allowed in probe)", BPF_PROG_TYPE_TRACING,
		      BPF_TRACE_RAW_TP, tp_btf, plain, N(plain));
#undef FILE_OR_EXIT
#undef D_PATH
}

/* ---- open-coded iterators -------------------------------------------------------------- */
static int k_new, k_next, k_destroy;
#define KCALL(id) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, id)
/* bpf_iter_num at fp-at: new [s, e), next, destroy */
#define NEW(at, s, e) FP(1, at), MOV_K(2, s), MOV_K(3, e), KCALL(k_new)
#define NEXT(at) FP(1, at), KCALL(k_next)
#define DESTROY(at) FP(1, at), KCALL(k_destroy)

static void xdp(const char *name, const struct bpf_insn *p, size_t n)
{
	check(name, BPF_PROG_TYPE_XDP, 0, 0, p, n);
}
#define X(name, ...)                                                                      \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                              \
		xdp(name, p_, N(p_));                                                      \
	} while (0)

static void num_rules(void)
{
	k_new = func_id("bpf_iter_num_new");
	k_next = func_id("bpf_iter_num_next");
	k_destroy = func_id("bpf_iter_num_destroy");
	if (k_new <= 0 || k_next <= 0 || k_destroy <= 0) {
		printf("bpf_iter_num: skipped: not in the kernel's BTF\n");
		return;
	}
	/* loops: 0: r6 = 0; 1-5 new; 6-8 next; 9 done?; body; back to 6 */
	X("sum of 0..9", MOV_K(6, 0), NEW(8, 0, 10), NEXT(8), JEQ_K(0, 0, 3), LDX(BPF_W, 1, 0, 0),
	  ADD_X(6, 1), JA(-7), DESTROY(8), MOV_X(0, 6), EXIT());
	X("count of 5..17", MOV_K(6, 0), NEW(8, 5, 17), NEXT(8), JEQ_K(0, 0, 2), ADD_K(6, 1),
	  JA(-6), DESTROY(8), MOV_X(0, 6), EXIT());
	X("empty range", MOV_K(6, 0), NEW(8, 3, 3), NEXT(8), JEQ_K(0, 0, 2), ADD_K(6, 1), JA(-6),
	  DESTROY(8), MOV_X(0, 6), EXIT());
	X("reversed range (new's -EINVAL)", NEW(8, 5, 1), MOV_X(6, 0), NEXT(8), MOV_X(7, 0),
	  DESTROY(8), MOV_X(0, 6), JEQ_K(7, 0, 1), MOV_K(0, 99), EXIT());
	X("range too long (new's -E2BIG)", NEW(8, 0, 0x7fffffff), MOV_X(0, 0), MOV_X(6, 0),
	  DESTROY(8), MOV_X(0, 6), EXIT());
	X("nested iterators", MOV_K(6, 0), NEW(8, 0, 4), NEXT(8), JEQ_K(0, 0, 15), NEW(16, 0, 3),
	  NEXT(16), JEQ_K(0, 0, 2), ADD_K(6, 1), JA(-6), DESTROY(16), JA(-19), DESTROY(8),
	  MOV_X(0, 6), EXIT());
	X("iterator at fp-512", MOV_K(6, 0), NEW(512, 0, 3), NEXT(512), JEQ_K(0, 0, 2), ADD_K(6, 1),
	  JA(-6), DESTROY(512), MOV_X(0, 6), EXIT());
	X("break out of the loop", MOV_K(6, 0), NEW(8, 0, 100), NEXT(8), JEQ_K(0, 0, 4),
	  LDX(BPF_W, 1, 0, 0), ADD_X(6, 1), JGT_K(1, 6, 1), JA(-8), DESTROY(8), MOV_X(0, 6),
	  EXIT());
	X("next after the end", NEW(8, 0, 1), NEXT(8), NEXT(8), NEXT(8), MOV_X(6, 0), DESTROY(8),
	  MOV_X(0, 6), EXIT());
	/* refusals */
	X("not destroyed", NEW(8, 0, 10), MOV_K(0, 0), EXIT());
	X("destroyed on one path only", NEW(8, 0, 10), NEXT(8), JEQ_K(0, 0, 3), DESTROY(8),
	  MOV_K(0, 0), EXIT());
	X("next after destroy", NEW(8, 0, 10), DESTROY(8), NEXT(8), MOV_K(0, 0), EXIT());
	X("destroy twice", NEW(8, 0, 10), DESTROY(8), DESTROY(8), MOV_K(0, 0), EXIT());
	X("next uninitialised", NEXT(8), MOV_K(0, 0), EXIT());
	X("destroy uninitialised", ST(BPF_DW, 10, -8, 0), DESTROY(8), MOV_K(0, 0), EXIT());
	X("new twice", NEW(8, 0, 10), NEW(8, 0, 10), DESTROY(8), MOV_K(0, 0), EXIT());
	X("new at fp-12", NEW(12, 0, 10), DESTROY(12), MOV_K(0, 0), EXIT());
	X("new at fp-0", NEW(0, 0, 10), DESTROY(0), MOV_K(0, 0), EXIT());
	X("new at fp-520", NEW(520, 0, 10), DESTROY(520), MOV_K(0, 0), EXIT());
	X("new at a variable offset", CALL(get_prandom_u32), MOV_X(6, 0),
	  I(BPF_ALU64 | BPF_AND | BPF_K, 6, 0, 0, 8), FP(1, 24), ADD_X(1, 6), MOV_K(2, 0),
	  MOV_K(3, 1), KCALL(k_new), MOV_K(0, 0), EXIT());
	X("new of NULL", MOV_K(1, 0), MOV_K(2, 0), MOV_K(3, 1), KCALL(k_new), MOV_K(0, 0), EXIT());
	X("new of the context", MOV_K(2, 0), MOV_K(3, 1), KCALL(k_new), MOV_K(0, 0), EXIT());
	X("new with a pointer for start", FP(1, 8), FP(2, 16), MOV_K(3, 1), KCALL(k_new),
	  MOV_K(0, 0), EXIT());
	X("next of another slot", NEW(8, 0, 10), NEXT(16), DESTROY(8), MOV_K(0, 0), EXIT());
	X("the iterator's bytes read", NEW(8, 0, 10), LDX(BPF_DW, 6, 10, -8), DESTROY(8),
	  MOV_K(0, 0), EXIT());
	X("the iterator's byte read", NEW(8, 0, 10), LDX(BPF_B, 6, 10, -5), DESTROY(8), MOV_K(0, 0),
	  EXIT());
	X("the iterator overwritten", NEW(8, 0, 10), ST(BPF_DW, 10, -8, 0), DESTROY(8), MOV_K(0, 0),
	  EXIT());
	X("the iterator overwritten, then exit", NEW(8, 0, 10), ST(BPF_W, 10, -4, 0), MOV_K(0, 0),
	  EXIT());
	X("a pointer spilled over the iterator", NEW(8, 0, 10), STX(BPF_DW, 10, 1, -8),
	  MOV_K(0, 0), EXIT());
	X("the element not checked for NULL", NEW(8, 0, 10), NEXT(8), LDX(BPF_W, 6, 0, 0),
	  DESTROY(8), MOV_X(0, 6), EXIT());
	X("the element written", NEW(8, 0, 10), NEXT(8), JEQ_K(0, 0, 1), ST(BPF_W, 0, 0, 1),
	  DESTROY(8), MOV_K(0, 0), EXIT());
	X("the element read past its 4 bytes", NEW(8, 0, 10), NEXT(8), JEQ_K(0, 0, 1),
	  LDX(BPF_DW, 6, 0, 0), DESTROY(8), MOV_K(0, 0), EXIT());
	X("the element used after destroy", NEW(8, 0, 10), NEXT(8), MOV_X(7, 0), DESTROY(8),
	  JEQ_K(7, 0, 1), LDX(BPF_W, 6, 7, 0), MOV_K(0, 0), EXIT());
	X("the element kept past destroy", NEW(8, 0, 10), NEXT(8), MOV_X(6, 0), DESTROY(8),
	  MOV_K(0, 0), EXIT());
	X("an infinite loop inside the loop", NEW(8, 0, 10), NEXT(8), JEQ_K(0, 0, 2), JA(-1),
	  JA(-6), DESTROY(8), MOV_K(0, 0), EXIT());
	X("a loop without next", NEW(8, 0, 10), MOV_K(6, 0), JA(-1), DESTROY(8),
	  MOV_K(0, 0), EXIT());
	X("the element's value bounds an index", NEW(8, 0, 10), NEXT(8), JEQ_K(0, 0, 7),
	  LDX(BPF_W, 6, 0, 0), JGT_K(6, 7, 4), FP(7, 16), ADD_X(7, 6), ST(BPF_B, 7, 0, 1),
	  JA(-11), DESTROY(8), MOV_K(0, 0), EXIT());
	X("an unbounded index from the element", NEW(8, 0, 10), NEXT(8), JEQ_K(0, 0, 6),
	  LDX(BPF_W, 6, 0, 0), FP(7, 16), ADD_X(7, 6), ST(BPF_B, 7, 0, 1), JA(-10), DESTROY(8),
	  MOV_K(0, 0), EXIT());
}

/* an iter/ program of target btf_id loaded on both sides at log level 2: the logs must be
 * identical (the element's type on each branch, the iterator's slots on the state line
 * after each _next() call: mark_iter_read() scratches them); the kernel's must hold
 * the line `must` */
static void check_log2_flags(const char *name, int btf_id, uint32_t flags,
			     const struct bpf_insn *insns, size_t n, const char *must)
{
	static char klog[1 << 16], blog[1 << 16];
	union bpf_attr attr;

	T_CASE(name);
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_TRACING;
	attr.expected_attach_type = BPF_TRACE_ITER;
	attr.prog_flags = flags;
	attr.attach_btf_id = (uint32_t)btf_id;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	oracle_load_log2(oracle_kernel_bpf, &attr, klog, sizeof(klog));
	oracle_load_log2(bpfrt_bpf, &attr, blog, sizeof(blog));
	T_CONTAINS(must, klog);
	oracle_compare_logs(name, klog, blog);
	compared++;
}

static void check_log2(const char *name, int btf_id, const struct bpf_insn *insns, size_t n,
		       const char *must)
{
	check_log2_flags(name, btf_id, 0, insns, n, must);
}

/* bpf_iter_css_task: iter/cgroup's cgroup (trusted) walked, as the selftests'
 * cgroup_id_printer; and where the kernel refuses it */
static void css_task_rules(void)
{
	int cnew = func_id("bpf_iter_css_task_new"), cnext = func_id("bpf_iter_css_task_next");
	int cdestroy = func_id("bpf_iter_css_task_destroy"), cg = func_id("bpf_iter_cgroup");
	int task = func_id("bpf_iter_task"), pid = member_off("task_struct", "pid");
	int acq = func_id("bpf_task_acquire"), rel = func_id("bpf_task_release");
#define CNEW(css_reg, flags) FP(1, 8), MOV_X(2, css_reg), MOV_K(3, flags), KCALL(cnew)
	/* 0-3: r6 = ctx->cgroup or exit */
#define CGRP() LDX(BPF_DW, 6, 1, 8), JNE_K(6, 0, 2), MOV_K(0, 0), EXIT()
	struct bpf_insn walk[] = { CGRP(), MOV_K(7, 0), CNEW(6, 1), FP(1, 8), KCALL(cnext),
				   JEQ_K(0, 0, 3), LDX(BPF_W, 1, 0, pid), ADD_X(7, 1), JA(-7),
				   FP(1, 8), KCALL(cdestroy), MOV_K(0, 0), EXIT() };
	struct bpf_insn flags[] = { CGRP(), CNEW(6, 4), FP(1, 8), KCALL(cdestroy), MOV_K(0, 0),
				    EXIT() };
	struct bpf_insn no_null[] = { LDX(BPF_DW, 6, 1, 8), CNEW(6, 1), FP(1, 8),
				      KCALL(cdestroy), MOV_K(0, 0), EXIT() };
	struct bpf_insn leak[] = { CGRP(), CNEW(6, 1), MOV_K(0, 0), EXIT() };
	struct bpf_insn no_check[] = { CGRP(), CNEW(6, 1), FP(1, 8), KCALL(cnext),
				       LDX(BPF_W, 1, 0, pid), FP(1, 8), KCALL(cdestroy),
				       MOV_K(0, 0), EXIT() };
	struct bpf_insn mixed[] = { CGRP(), CNEW(6, 1), FP(1, 8), KCALL(k_next), FP(1, 8),
				    KCALL(cdestroy), MOV_K(0, 0), EXIT() };
	struct bpf_insn of_task[] = { CGRP(), CNEW(6, 1), FP(1, 8), KCALL(cdestroy), MOV_K(0, 0),
				      EXIT() };
	struct bpf_insn in_xdp[] = { MOV_K(6, 0), CNEW(6, 1), FP(1, 8), KCALL(cdestroy),
				     MOV_K(0, 0), EXIT() };
	/* the element handed to bpf_task_acquire (KF_RCU): 6.18.44 makes a non-RCU
	 * iterator's element untrusted, "R1 must be a rcu pointer" (bpfrt had it trusted and
	 * accepted, as 6.18.2's source reads) */
	struct bpf_insn acquire[] = { CGRP(), CNEW(6, 1), FP(1, 8), KCALL(cnext),
				      JEQ_K(0, 0, 5), MOV_X(1, 0), KCALL(acq), JEQ_K(0, 0, 2),
				      MOV_X(1, 0), KCALL(rel), FP(1, 8), KCALL(cdestroy),
				      MOV_K(0, 0), EXIT() };

	if (cnew <= 0 || cnext <= 0 || cdestroy <= 0 || cg <= 0 || task <= 0 || pid < 0) {
		printf("bpf_iter_css_task: skipped: not in the kernel's BTF\n");
		return;
	}
	check("css_task walk in iter/cgroup", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, cg, walk,
	      N(walk));
	check("css_task flags 4", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, cg, flags, N(flags));
	check("css_task of a cgroup not checked for NULL", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER,
	      cg, no_null, N(no_null));
	check("css_task not destroyed", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, cg, leak, N(leak));
	check("css_task element not checked for NULL", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, cg,
	      no_check, N(no_check));
	if (k_next > 0)
		check("css_task iterator handed to bpf_iter_num_next", BPF_PROG_TYPE_TRACING,
		      BPF_TRACE_ITER, cg, mixed, N(mixed));
	check("css_task of a task (iter/task)", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, task,
	      of_task, N(of_task));
	xdp("css_task in XDP", in_xdp, N(in_xdp));
	if (acq > 0 && rel > 0)
		check("css_task element to bpf_task_acquire", BPF_PROG_TYPE_TRACING,
		      BPF_TRACE_ITER, cg, acquire, N(acquire));
	check_log2("css_task walk, level-2 log", cg, walk, N(walk), "fp-8=iter_css_task(");
	if (acq > 0 && rel > 0)
		check_log2("css_task element to bpf_task_acquire, level-2 log", cg, acquire,
			   N(acquire), "R0=untrusted_ptr_task_struct(");
#undef CNEW
#undef CGRP
}

/* A css_task element in each context: non-sleepable or sleepable (iter.s/cgroup), in a
 * bpf_rcu_read_lock() section or not; read, handed to bpf_task_acquire (KF_RCU) or to
 * bpf_get_task_stack (ARG_PTR_TO_BTF_ID).  6.18.44 makes it untrusted in all four
 * contexts (the section does not make it RCU-protected: css_task's _new is not
 * KF_RCU_PROTECTED), so only the read is allowed.  Level-2 logs compared whole. */
struct prog_buf {
	struct bpf_insn v[48];
	size_t n;
};

static void put(struct prog_buf *b, struct bpf_insn i)
{
	if (b->n < N(b->v))
		b->v[b->n++] = i;
}

static void css_task_context_rules(void)
{
	static const char *const uses[] = { "read", "to bpf_task_acquire",
					    "to bpf_get_task_stack" };
	int cnew = func_id("bpf_iter_css_task_new"), cnext = func_id("bpf_iter_css_task_next");
	int cdestroy = func_id("bpf_iter_css_task_destroy"), cg = func_id("bpf_iter_cgroup");
	int rl = func_id("bpf_rcu_read_lock"), ru = func_id("bpf_rcu_read_unlock");
	int acq = func_id("bpf_task_acquire"), rel = func_id("bpf_task_release");
	char name[128];

	if (cnew <= 0 || cnext <= 0 || cdestroy <= 0 || cg <= 0 || rl <= 0 || ru <= 0 ||
	    acq <= 0 || rel <= 0) {
		printf("css_task contexts: skipped: a kfunc is not in the kernel's BTF\n");
		return;
	}
	for (int ctx = 0; ctx < 4; ctx++)
		for (size_t use = 0; use < N(uses); use++) {
			int sleepable = ctx & 2, rcu = ctx & 1;
			struct prog_buf b = { .n = 0 };

			/* r6 = ctx->cgroup or exit; the iterator at fp-8 */
			put(&b, LDX(BPF_DW, 6, 1, 8));
			put(&b, JNE_K(6, 0, 2));
			put(&b, MOV_K(0, 0));
			put(&b, EXIT());
			if (rcu)
				put(&b, KCALL(rl));
			put(&b, MOV_X(1, 10));
			put(&b, ADD_K(1, -8));
			put(&b, MOV_X(2, 6));
			put(&b, MOV_K(3, 1));
			put(&b, KCALL(cnew));
			put(&b, MOV_X(1, 10));
			put(&b, ADD_K(1, -8));
			put(&b, KCALL(cnext));
			put(&b, JEQ_K(0, 0, use == 0 ? 1 : 5));
			if (use == 0) {
				put(&b, LDX(BPF_W, 1, 0, 0));
			} else if (use == 1) {
				put(&b, MOV_X(1, 0));
				put(&b, KCALL(acq));
				put(&b, JEQ_K(0, 0, 2));
				put(&b, MOV_X(1, 0));
				put(&b, KCALL(rel));
			} else {
				put(&b, MOV_X(1, 0));
				put(&b, MOV_X(2, 10));
				put(&b, ADD_K(2, -72));
				put(&b, MOV_K(3, 64));
				put(&b, MOV_K(4, 0));
				b.v[b.n - 5 - 1].off = 6; /* the jump over this use: 6 insns */
				put(&b, CALL(get_task_stack));
			}
			put(&b, MOV_X(1, 10));
			put(&b, ADD_K(1, -8));
			put(&b, KCALL(cdestroy));
			if (rcu)
				put(&b, KCALL(ru));
			put(&b, MOV_K(0, 0));
			put(&b, EXIT());
			snprintf(name, sizeof(name), "css_task element %s (%s%s), level-2 log",
				 uses[use], sleepable ? "sleepable" : "non-sleepable",
				 rcu ? ", RCU section" : "");
			check_log2_flags(name, cg, sleepable ? BPF_F_SLEEPABLE : 0, b.v, b.n,
					 "R0=untrusted_ptr_task_struct(");
		}
}

/* Iterator targets: the map-element ones (key and value as buffers) are refused by the
 * kernel at load whatever the program; the others take a program returning 0. */
static void target_rules(void)
{
	static const char *const targets[] = { "bpf_map_elem", "bpf_sk_storage_map", "sockmap",
					       "bpf_map", "task", "tcp" };
	const struct bpf_insn zero[] = { MOV_K(0, 0), EXIT() };
	/* struct bpf_iter__bpf_map_elem: meta, map, key at 16, value at 24 */
	const struct bpf_insn key[] = { LDX(BPF_DW, 2, 1, 16), JEQ_K(2, 0, 1),
				LDX(BPF_B, 2, 2, 0), MOV_K(0, 0), EXIT() };
	char name[96];

	for (size_t i = 0; i < N(targets); i++) {
		int id;

		snprintf(name, sizeof(name), "bpf_iter_%s", targets[i]);
		id = func_id(name);
		if (id <= 0) {
			printf("%s: skipped: not in the kernel's BTF\n", name);
			continue;
		}
		snprintf(name, sizeof(name), "iter/%s returning 0", targets[i]);
		check(name, BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, id, zero, N(zero));
		if (i == 0)
			check("iter/bpf_map_elem reading its key", BPF_PROG_TYPE_TRACING,
			      BPF_TRACE_ITER, id, key, N(key));
	}
}

/* ---- pointers to memory loaded through BTF ------------------------------------------- */
/* A kernel pointer field to a non-struct (netlink_sock's groups, unsigned long *) loads as
 * rdonly_untrusted_mem, which may be NULL: "if r2 != 0" walks both ways (the kernel's
 * reg_not_null() excludes PTR_UNTRUSTED memory), so an error on the NULL path is found. */
static void untrusted_mem_rules(void)
{
	int netlink = func_id("bpf_iter_netlink"), groups = member_off("netlink_sock", "groups");
	/* struct bpf_iter__netlink: meta, sk at 8 */
	struct bpf_insn null_path[] = { LDX(BPF_DW, 1, 1, 8), JNE_K(1, 0, 2), MOV_K(0, 0), EXIT(),
					LDX(BPF_DW, 2, 1, groups), JNE_K(2, 0, 1), MOV_X(0, 3),
					MOV_K(0, 0), EXIT() };
	struct bpf_insn both[] = { LDX(BPF_DW, 1, 1, 8), JNE_K(1, 0, 2), MOV_K(0, 0), EXIT(),
				   LDX(BPF_DW, 2, 1, groups), MOV_K(0, 0), JNE_K(2, 0, 1),
				   MOV_K(0, 1), MOV_K(0, 0), EXIT() };
	struct bpf_insn var_off[] = { LDX(BPF_DW, 1, 1, 8), JNE_K(1, 0, 2), MOV_K(0, 0), EXIT(),
				      LDX(BPF_DW, 2, 1, groups), LDX(BPF_W, 3, 1, 0),
				      ADD_X(2, 3), MOV_K(0, 0), EXIT() };
	struct bpf_insn scalar_plus[] = { LDX(BPF_DW, 1, 1, 8), JNE_K(1, 0, 2), MOV_K(0, 0),
					  EXIT(), LDX(BPF_DW, 2, 1, groups), LDX(BPF_W, 3, 1, 0),
					  ADD_X(3, 2), MOV_X(0, 3), EXIT() };

	if (netlink <= 0 || groups < 0) {
		printf("untrusted mem: skipped: no bpf_iter_netlink or netlink_sock in the kernel's "
		       "BTF\n");
		return;
	}
	check("untrusted mem: the NULL path is walked", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER,
	      netlink, null_path, N(null_path));
	check("untrusted mem: both paths", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, netlink, both,
	      N(both));
	/* the kernel tracks no offset on untrusted memory (adjust_ptr_min_max_vals() returns
	 * before its switch): r2 += r3 leaves r2 as it was, and r3 += r2 makes r3 the
	 * pointer, so returning it is "not a known value (rdonly_untrusted_mem)" (bpfrt added
	 * the offset, and left r3 a scalar: ebpf_exporter's kfree_skb printed skb->head +
	 * mac_header with a range) */
	check_log2("untrusted mem plus a variable offset, level-2 log", netlink, var_off,
		   N(var_off), "R2=rdonly_untrusted_mem(sz=0)");
	check("a scalar plus untrusted mem is the pointer", BPF_PROG_TYPE_TRACING,
	      BPF_TRACE_ITER, netlink, scalar_plus, N(scalar_plus));
	/* what may be done with such a pointer once its offset is lost: read it (a probe
	 * load, whatever the address), not write it nor hand it to a helper as memory */
#define GROUPS() LDX(BPF_DW, 1, 1, 8), JNE_K(1, 0, 2), MOV_K(0, 0), EXIT(), \
		 LDX(BPF_DW, 2, 1, groups), LDX(BPF_W, 3, 1, 0)
	{
		struct bpf_insn and_read[] = { GROUPS(), I(BPF_ALU64 | BPF_AND | BPF_X, 3, 2, 0, 0),
					       LDX(BPF_B, 0, 3, 5), MOV_K(0, 0), EXIT() };
		struct bpf_insn sub_read[] = { GROUPS(), I(BPF_ALU64 | BPF_SUB | BPF_X, 2, 3, 0, 0),
					       LDX(BPF_DW, 0, 2, -4096), MOV_K(0, 0), EXIT() };
		struct bpf_insn write[] = { GROUPS(), ADD_X(2, 3), ST(BPF_B, 2, 0, 1), MOV_K(0, 0),
					    EXIT() };
		struct bpf_insn to_helper[] = { GROUPS(), ADD_X(3, 2), MOV_X(1, 3), MOV_K(2, 4),
						MOV_K(3, 0), MOV_X(4, 10), ADD_K(4, -8),
						CALL(strtol), MOV_K(0, 0), EXIT() };
		struct bpf_insn to_probe_read[] = { GROUPS(), ADD_X(3, 2), MOV_X(1, 10),
						    ADD_K(1, -8), MOV_K(2, 8), CALL(probe_read_kernel),
						    MOV_K(0, 0), EXIT() };
		struct bpf_insn alu32[] = { GROUPS(), I(BPF_ALU | BPF_ADD | BPF_X, 2, 3, 0, 0),
					    MOV_K(0, 0), EXIT() };

		check("untrusted mem: scalar &= it, read", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER,
		      netlink, and_read, N(and_read));
		check("untrusted mem: minus a scalar, read far below", BPF_PROG_TYPE_TRACING,
		      BPF_TRACE_ITER, netlink, sub_read, N(sub_read));
		check("untrusted mem plus a scalar, written", BPF_PROG_TYPE_TRACING,
		      BPF_TRACE_ITER, netlink, write, N(write));
		check("untrusted mem plus a scalar to bpf_strtol", BPF_PROG_TYPE_TRACING,
		      BPF_TRACE_ITER, netlink, to_helper, N(to_helper));
		check("untrusted mem plus a scalar to bpf_probe_read_kernel", BPF_PROG_TYPE_TRACING,
		      BPF_TRACE_ITER, netlink, to_probe_read, N(to_probe_read));
		check("untrusted mem: 32-bit add", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, netlink,
		      alu32, N(alu32));
	}
#undef GROUPS
}

/* Walking a plain (untagged) kernel pointer, iter/task_file's task: 6.18.44 makes what it
 * loads untrusted (6.18.2's source kept the old plain PTR_TO_BTF_ID), so the task's
 * group_leader may not go to bpf_task_pt_regs, which the task itself may (bpfrt accepted
 * both: inspektor-gadget's snapshot_file printed ptr_nsproxy for untrusted_ptr_nsproxy) */
static void plain_walk_rules(void)
{
	int tf = func_id("bpf_iter_task_file"), leader = member_off("task_struct", "group_leader");
	int nsproxy = member_off("task_struct", "nsproxy"), mnt = member_off("nsproxy", "mnt_ns");
	/* struct bpf_iter__task_file: meta, task at 8 */
#define TASK1() LDX(BPF_DW, 1, 1, 8), JNE_K(1, 0, 2), MOV_K(0, 0), EXIT()
	struct bpf_insn own[] = { TASK1(), CALL(task_pt_regs), MOV_K(0, 0), EXIT() };
	struct bpf_insn of_leader[] = { TASK1(), LDX(BPF_DW, 1, 1, leader), CALL(task_pt_regs),
					MOV_K(0, 0), EXIT() };
	struct bpf_insn walk[] = { TASK1(), LDX(BPF_DW, 1, 1, nsproxy), LDX(BPF_DW, 1, 1, mnt),
				   MOV_K(0, 0), EXIT() };
#undef TASK1

	if (tf <= 0 || leader < 0 || nsproxy < 0 || mnt < 0) {
		printf("plain walk: skipped: the kernel's BTF lacks bpf_iter_task_file or a "
		       "member\n");
		return;
	}
	check("task_file task to bpf_task_pt_regs", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, tf,
	      own, N(own));
	check("task_file task's group_leader to bpf_task_pt_regs", BPF_PROG_TYPE_TRACING,
	      BPF_TRACE_ITER, tf, of_leader, N(of_leader));
	check_log2("task_file task->nsproxy->mnt_ns, level-2 log", tf, walk, N(walk),
		   "R1=untrusted_ptr_mnt_namespace()");
}

/* The level-2 log of an iterator's context reads: its meta (argument 0) is typed from the
 * BTF prototype, with the "func 'bpf_iter_task' arg0 has btf_id" line; its task comes from
 * the target's ctx_arg_info (btf_ctx_access() returns before that line).  bpfrt printed the
 * line for the task too, splitting insn 1's state off its line (found through a GCC-built
 * libbpf-bootstrap task_iter, whose refusal's log corpus_diff compares). */
static void ctx_log_rules(void)
{
	int task = func_id("bpf_iter_task");
	struct bpf_insn reads[] = { LDX(BPF_DW, 6, 1, 0), LDX(BPF_DW, 7, 1, 8), JEQ_K(7, 0, 1),
				    LDX(BPF_W, 0, 7, 0), MOV_K(0, 0), EXIT() };

	if (task <= 0) {
		printf("ctx log: skipped: no bpf_iter_task in the kernel's BTF\n");
		return;
	}
	check_log2("iter/task ctx reads, level-2 log", task, reads, N(reads), "arg0 has btf_id");
}

int main(void)
{
	if (geteuid() != 0)
		T_SKIP("not root: the kernel side needs CAP_BPF and CAP_PERFMON");
	if (!brt_btf_vmlinux())
		T_SKIP("no kernel BTF (/sys/kernel/btf/vmlinux)");
	d_path_rules();
	num_rules();
	css_task_rules();
	css_task_context_rules();
	target_rules();
	untrusted_mem_rules();
	plain_walk_rules();
	ctx_log_rules();
	printf("%d programs compared, %d test runs\n", compared, runs);
	return t_done();
}
