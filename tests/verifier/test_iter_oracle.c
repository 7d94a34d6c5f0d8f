/* test_iter_oracle.c - open-coded iterators (verifier/iter.c) and bpf_d_path
 * (verifier/d_path.c) checked against the kernel.  Each program is loaded on both sides
 * with a level-1 log; the verdict, errno and the error line (the last log line before
 * "processed") must be equal, and for programs both accept that test-run (socket filter,
 * XDP, syscall) the run's errno and retval.
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

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

struct side {
	bpf_fn bpf;
	int fd, err, run_err;
	uint32_t retval;
	char last[256];
};

static char logbuf[1 << 16];
static struct side ks = { .bpf = kernel_bpf }, bs = { .bpf = bpfrt_bpf };
static int compared, runs;

static void load_run(struct side *s, const union bpf_attr *in)
{
	static unsigned char pkt[64];
	union bpf_attr attr = *in;

	s->fd = oracle_load(s->bpf, &attr, logbuf, sizeof(logbuf), &s->err, s->last,
			    sizeof(s->last));
	s->run_err = -1;
	s->retval = 0;
	if (s->fd < 0)
		return;
	if (in->prog_type == BPF_PROG_TYPE_SOCKET_FILTER || in->prog_type == BPF_PROG_TYPE_XDP ||
	    in->prog_type == BPF_PROG_TYPE_SYSCALL) {
		memset(&attr, 0, sizeof(attr));
		attr.test.prog_fd = (uint32_t)s->fd;
		if (in->prog_type != BPF_PROG_TYPE_SYSCALL) {
			attr.test.data_in = (uintptr_t)pkt;
			attr.test.data_size_in = sizeof(pkt);
			attr.test.repeat = 1;
		}
		s->run_err = s->bpf(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) ? errno : 0;
		s->retval = attr.test.retval;
	}
	close(s->fd);
}

static void check_attr(const char *name, const union bpf_attr *attr)
{
	T_CASE(name);
	load_run(&ks, attr);
	load_run(&bs, attr);
	T_EQ_INT(ks.fd >= 0, bs.fd >= 0);
	T_EQ_INT(ks.err, bs.err);
	if (ks.fd < 0 && strcmp(ks.last, bs.last))
		T_FAIL("%s: error line: kernel '%s', bpfrt '%s'", name, ks.last, bs.last);
	if (ks.fd >= 0 && bs.fd >= 0 && ks.run_err >= 0) {
		T_EQ_INT(ks.run_err, bs.run_err);
		T_EQ_INT((int32_t)ks.retval, (int32_t)bs.retval);
		runs++;
	}
	if (getenv("ITER_DUMP"))
		fprintf(stderr, "%s: kernel %d '%s' run %d/%d | bpfrt %d '%s' run %d/%d\n", name,
			ks.err, ks.last, ks.run_err, (int32_t)ks.retval, bs.err, bs.last,
			bs.run_err, (int32_t)bs.retval);
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

int main(void)
{
	if (geteuid() != 0)
		T_SKIP("not root: the kernel side needs CAP_BPF and CAP_PERFMON");
	if (!brt_btf_vmlinux())
		T_SKIP("no kernel BTF (/sys/kernel/btf/vmlinux)");
	d_path_rules();
	printf("%d programs compared, %d test runs\n", compared, runs);
	return t_done();
}
