/* test_task_work_oracle.c - Linux 6.18's task works (bpf_task_work_schedule_signal_impl /
 * _resume_impl, a map value's struct bpf_task_work; verifier/kfunc.c, kfunc_task_work.c,
 * maps/task_work.c) checked against the kernel: the map field found from the map's BTF
 * (hand-made here: struct val { int x; int y; struct bpf_task_work tw; } with tw at 8),
 * which map types and flags may have one, the kfuncs' argument rules (the task, the
 * field's constant offset in a map value, the __map argument and the field's map, the
 * callback, the sleepable program the running 6.18.44 wants), the callback walked as a
 * sleepable async callback returning any 32-bit value, loads and stores of the field.
 * Verdict, errno and error line must be equal; for sleepable syscall programs both accept,
 * a test run's result and what the callback wrote into the value after the run (the
 * kernel runs it when the test run's syscall returns to user space, bpfrt at the end of
 * the run: docs/STATUS.md).  Skips without root or without the kfuncs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "btf_blob.h"
#include "harness.h"
#include "log_lines.h"
#include "oracle_load.h"

#define BTF_INFO_ENC(kind, kflag, vlen) (((kflag) << 31) | ((kind) << 24) | (vlen))
#define BTF_INT_ENC(enc, off, bits) (((enc) << 24) | ((off) << 16) | (bits))

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define ADD_X(d, s) I(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define MUL_K(d, v) I(BPF_ALU64 | BPF_MUL | BPF_K, d, 0, 0, v)
#define AND_K(d, v) I(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, v)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_##f)
/* a kfunc by its row in kf[] (the id is the kernel's, set in prepare()) */
#define KCALL(k) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, -(k) - 1)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define MAP_T (-1000)  /* array of struct val (BTF) */
#define MAP_NB (-1001) /* the same value size, no BTF */
#define MAP_NT (-1002) /* BTF, a value without a task work */
#define MAP_T2 (-1003) /* a second array with a task work */
#define MAP_H (-1004)  /* a hash map of struct val */
#define MAP_L (-1005)  /* an LRU hash map of struct val */
#define NMAPS 6
#define LD_MAP(d, m) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, m), I(0, 0, 0, 0, 0)
/* r4 = the callback: the program's last CB_LEN instructions (prepare() sets the offset) */
#define LD_CB(d) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_FUNC, 0, 0), I(0, 0, 0, 0, 0)
/* r6 = value 0 of map m, or exit 0: 9 insns */
#define VALUE0(m)                                                                         \
	ST(BPF_W, 10, -4, 0), LD_MAP(1, m), MOV_X(2, 10), ADD_K(2, -4),                  \
		CALL(map_lookup_elem), JNE_K(0, 0, 2), MOV_K(0, 0), EXIT(), MOV_X(6, 0)
/* r7 = this process's task (a reference), or exit -1: 6 insns */
#define TASK() MOV_K(1, 0x7a5c), KCALL(K_FROM_PID), JNE_K(0, 0, 2), MOV_K(0, -1), EXIT(), MOV_X(7, 0)
#define RELEASE() MOV_X(1, 7), KCALL(K_RELEASE)
/* schedule (kfunc k) the callback on value r6's task work in map m: 9 insns */
#define SCHED(k, m) MOV_X(1, 7), MOV_X(2, 6), ADD_K(2, 8), LD_MAP(3, m), LD_CB(4), MOV_K(5, 0), KCALL(k)

enum { K_RESUME, K_SIGNAL, K_FROM_PID, K_RELEASE, K_COPY_STR, K_N };
static const char *const kf_names[K_N] = {
	"bpf_task_work_schedule_resume_impl", "bpf_task_work_schedule_signal_impl",
	"bpf_task_from_pid", "bpf_task_release", "bpf_copy_from_user_str",
};
static int kf[K_N];

/* BTF: [1] int, [2] unsigned long long, [3] struct bpf_task_work { u64 __opaque; },
 * [4] struct val { int x; int y; struct bpf_task_work tw; } (16 bytes), [5] struct other
 * { int x; int y; unsigned long long z; } (16), [6] int (void), [7] f0, [8] f1 (static
 * functions: func_info), [9] struct two { bpf_task_work a; bpf_task_work b; } (16) */
static int load_btf(bpf_fn bpf)
{
	static const char strs[] =
		"\0int\0ull\0bpf_task_work\0__opaque\0val\0x\0y\0tw\0other\0z\0f0\0f1\0two\0a\0b";
	enum { S_INT = 1, S_ULL = 5, S_TW = 9, S_OPQ = 23, S_VAL = 32, S_X = 36, S_Y = 38,
	       S_TWF = 40, S_OTHER = 43, S_Z = 49, S_F0 = 51, S_F1 = 54, S_TWO = 57, S_A = 61,
	       S_B = 63 };
	uint32_t types[] = {
		S_INT, BTF_INFO_ENC(BTF_KIND_INT, 0, 0), 4, BTF_INT_ENC(BTF_INT_SIGNED, 0, 32),
		S_ULL, BTF_INFO_ENC(BTF_KIND_INT, 0, 0), 8, BTF_INT_ENC(0, 0, 64),
		S_TW, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 1), 8, S_OPQ, 2, 0,
		S_VAL, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 3), 16, S_X, 1, 0, S_Y, 1, 32, S_TWF, 3, 64,
		S_OTHER, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 3), 16, S_X, 1, 0, S_Y, 1, 32, S_Z, 2, 64,
		0, BTF_INFO_ENC(BTF_KIND_FUNC_PROTO, 0, 0), 1,
		S_F0, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 6,
		S_F1, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 6,
		S_TWO, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 2), 16, S_A, 3, 0, S_B, 3, 64,
	};
	return btf_blob_load(bpf, types, sizeof(types), strs, sizeof(strs));
}

/* a map of two 16-byte values */
static int mkmap(bpf_fn bpf, uint32_t type, uint32_t flags, int btf, uint32_t vtype,
		 const char *name)
{
	return btf_blob_map(bpf, type, 16, 2, flags, btf, vtype, name);
}

struct side {
	bpf_fn bpf;
	int btf;
	int maps[NMAPS];
	int fd, err;
	char last[256];
	int run_err;
	uint32_t retval;
	int32_t after[2]; /* value 0's x and y of the map the case names after its run */
};

static struct bpf_insn prog[256];
static int mypid;

/* attr for insns on side s (the callback is the last cb instructions): its maps, the
 * kfuncs' ids, the callback's offset and both functions' func_info */
static void prepare(struct side *s, enum bpf_prog_type type, uint32_t flags,
		    const struct bpf_insn *insns, size_t n, size_t cb, union bpf_attr *a)
{
	static struct bpf_func_info fi[2];

	memset(a, 0, sizeof(*a));
	for (size_t i = 0; i < n; i++) {
		prog[i] = insns[i];
		if (prog[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    prog[i].src_reg == BPF_PSEUDO_MAP_FD)
			prog[i].imm = s->maps[-1000 - prog[i].imm];
		if (prog[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    prog[i].src_reg == BPF_PSEUDO_FUNC)
			prog[i].imm = (int32_t)(n - cb) - (int32_t)(i + 1);
		if (prog[i].code == (BPF_JMP | BPF_CALL) &&
		    prog[i].src_reg == BPF_PSEUDO_KFUNC_CALL)
			prog[i].imm = kf[-prog[i].imm - 1];
		if (prog[i].code == (BPF_ALU64 | BPF_MOV | BPF_K) && prog[i].imm == 0x7a5c)
			prog[i].imm = mypid;
	}
	if (cb) {
		fi[0] = (struct bpf_func_info){ 0, 7 };
		fi[1] = (struct bpf_func_info){ (uint32_t)(n - cb), 8 };
		a->prog_btf_fd = (uint32_t)s->btf;
		a->func_info = (uintptr_t)fi;
		a->func_info_cnt = 2;
		a->func_info_rec_size = sizeof(fi[0]);
	}
	a->prog_type = type;
	a->prog_flags = flags;
	a->insns = (uintptr_t)prog;
	a->insn_cnt = (uint32_t)n;
	a->license = (uintptr_t)"GPL";
}

static void value0(struct side *s, int m, int32_t out[2])
{
	unsigned char v[16];
	uint32_t key = 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	memset(v, 0xee, sizeof(v));
	a.map_fd = (uint32_t)s->maps[-1000 - m];
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)v;
	if (s->bpf(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a))) {
		out[0] = out[1] = -1000 - errno;
		return;
	}
	memcpy(out, v, 8);
}

/* reset value 0 of map m (x = y = 0, the task work's bytes zero) */
static void reset0(struct side *s, int m)
{
	unsigned char v[16] = { 0 };
	uint32_t key = 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)s->maps[-1000 - m];
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)v;
	s->bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
}

static void load_run(struct side *s, enum bpf_prog_type type, uint32_t flags,
		     const struct bpf_insn *insns, size_t n, size_t cb, int run_map)
{
	static char logbuf[1 << 16];
	union bpf_attr attr;

	prepare(s, type, flags, insns, n, cb, &attr);
	s->fd = oracle_load(s->bpf, &attr, logbuf, sizeof(logbuf), &s->err, s->last,
			    sizeof(s->last));
	s->run_err = -1;
	s->retval = 0;
	s->after[0] = s->after[1] = 0;
	if (s->fd >= 0 && run_map) {
		reset0(s, run_map);
		memset(&attr, 0, sizeof(attr));
		attr.test.prog_fd = (uint32_t)s->fd;
		s->run_err = s->bpf(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) ? errno : 0;
		s->retval = attr.test.retval;
		value0(s, run_map, s->after);
	}
	if (s->fd >= 0)
		close(s->fd);
}

static struct side ks, bs;
static int compared, runs;

static void check(const char *name, enum bpf_prog_type type, uint32_t flags, int run_map,
		  const struct bpf_insn *insns, size_t n, size_t cb)
{
	T_CASE(name);
	load_run(&ks, type, flags, insns, n, cb, run_map);
	load_run(&bs, type, flags, insns, n, cb, run_map);
	if (getenv("TW_DUMP"))
		fprintf(stderr, "%s:\n  kernel fd %d err %d '%s' run %d ret %d after %d,%d\n"
				"  bpfrt  fd %d err %d '%s' run %d ret %d after %d,%d\n",
			name, ks.fd >= 0, ks.err, ks.last, ks.run_err, (int)ks.retval, ks.after[0],
			ks.after[1], bs.fd >= 0, bs.err, bs.last, bs.run_err, (int)bs.retval,
			bs.after[0], bs.after[1]);
	T_EQ_INT(ks.fd >= 0, bs.fd >= 0);
	T_EQ_INT(ks.fd >= 0 ? 0 : ks.err, bs.fd >= 0 ? 0 : bs.err);
	if (ks.fd < 0)
		T_EQ_STR(ks.last, bs.last);
	/* an accepted program's whole walk, the callback's entry state and ids included */
	if (ks.fd >= 0 && bs.fd >= 0) {
		static char klog[1 << 17], blog[1 << 17];
		union bpf_attr attr;

		prepare(&ks, type, flags, insns, n, cb, &attr);
		oracle_load_log2(ks.bpf, &attr, klog, sizeof(klog));
		prepare(&bs, type, flags, insns, n, cb, &attr);
		oracle_load_log2(bs.bpf, &attr, blog, sizeof(blog));
		T_ASSERT(klog[0] != 0);
		oracle_compare_logs(name, klog, blog);
	}
	if (run_map && ks.fd >= 0 && bs.fd >= 0) {
		T_EQ_INT(ks.run_err, bs.run_err);
		T_EQ_INT((int)ks.retval, (int)bs.retval);
		T_EQ_INT(ks.after[0], bs.after[0]);
		T_EQ_INT(ks.after[1], bs.after[1]);
		runs++;
	}
	compared++;
}

/* C(name, type, flags, map to run and read (0: no run), callback length, insns...) */
/* CS(): a sleepable syscall program */
#define CS(name, run, cb, ...) C(name, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, run, cb, __VA_ARGS__)
#define C(name, type, flags, run, cb, ...)                                               \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                              \
		check(name, type, flags, run, p_, sizeof(p_) / sizeof(p_[0]), cb);         \
	} while (0)
/* the callback: value->x = 42 + key, y += 1; returns 0 */
#define CB42() LDX(BPF_W, 4, 2, 0), ADD_K(4, 42), STX(BPF_W, 3, 4, 0), LDX(BPF_W, 4, 3, 4), \
	ADD_K(4, 1), STX(BPF_W, 3, 4, 4), MOV_K(0, 0), EXIT()
/* the program's end: release the task, return r8 + 1000 * r9 */
#define END() RELEASE(), MOV_X(0, 9), MUL_K(0, 1000), ADD_X(0, 8), EXIT()

static void rules(void)
{
	/* runs: scheduled, again while pending (-EBUSY), the callback after the run */
	CS("resume: twice, then the callback", MAP_T, 8, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_T), MOV_X(8, 0), SCHED(K_RESUME, MAP_T), MOV_X(9, 0), END(),
	  CB42());
	CS("signal: twice, then the callback", MAP_T, 8, VALUE0(MAP_T), TASK(),
	  SCHED(K_SIGNAL, MAP_T), MOV_X(8, 0), SCHED(K_SIGNAL, MAP_T), MOV_X(9, 0), END(),
	  CB42());
	CS("hash map value", MAP_H, 8, VALUE0(MAP_H), TASK(), SCHED(K_RESUME, MAP_H),
	  MOV_X(8, 0), MOV_K(9, 0), END(), CB42());
	CS("LRU hash map value", MAP_L, 8, VALUE0(MAP_L), TASK(), SCHED(K_RESUME, MAP_L),
	   MOV_X(8, 0), MOV_K(9, 0), END(), CB42());
	/* a value written or deleted while its work is pending: the work is cancelled
	 * (bpf_obj_free_fields(): bpf_task_work_cancel_and_free()) */
	CS("the value updated by the program: cancelled", MAP_T, 8, VALUE0(MAP_T), TASK(),
	   SCHED(K_RESUME, MAP_T), MOV_X(8, 0), ST(BPF_DW, 10, -24, 5), ST(BPF_DW, 10, -16, 0),
	   LD_MAP(1, MAP_T), MOV_X(2, 10), ADD_K(2, -4), MOV_X(3, 10), ADD_K(3, -24),
	   MOV_K(4, 0), CALL(map_update_elem), MOV_X(9, 0), END(), CB42());
	CS("the element deleted and made again: cancelled", MAP_H, 8, VALUE0(MAP_H), TASK(),
	   SCHED(K_RESUME, MAP_H), MOV_X(8, 0), LD_MAP(1, MAP_H), MOV_X(2, 10), ADD_K(2, -4),
	   CALL(map_delete_elem), MOV_X(9, 0), ST(BPF_DW, 10, -24, 3), ST(BPF_DW, 10, -16, 0),
	   LD_MAP(1, MAP_H), MOV_X(2, 10), ADD_K(2, -4), MOV_X(3, 10), ADD_K(3, -24),
	   MOV_K(4, 0), CALL(map_update_elem), ADD_X(9, 0), END(), CB42());
	CS("the callback returns 1", MAP_T, 3, VALUE0(MAP_T), TASK(), SCHED(K_RESUME, MAP_T),
	  MOV_X(8, 0), MOV_K(9, 0), END(), ST(BPF_W, 3, 0, 7), MOV_K(0, 1), EXIT());
	CS("the callback calls a sleepable kfunc", MAP_T, 7, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_T), MOV_X(8, 0), MOV_K(9, 0), END(), MOV_X(1, 3), MOV_K(2, 4),
	  MOV_K(3, 0), MOV_K(4, 0), KCALL(K_COPY_STR), MOV_K(0, 0), EXIT());
	/* the verifier */
	C("not sleepable (XDP)", BPF_PROG_TYPE_XDP, 0, 0, 2, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_T), MOV_X(8, 0), MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	C("not sleepable (syscall)", BPF_PROG_TYPE_SYSCALL, 0, 0, 2, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_T), MOV_X(8, 0), MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("the callback returns a pointer", 0, 2, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_T), MOV_X(8, 0), MOV_K(9, 0), END(), MOV_X(0, 3), EXIT());
	CS("the callback returns 64 bits", 0, 5, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_T), MOV_X(8, 0), MOV_K(9, 0), END(), LDX(BPF_W, 0, 3, 0),
	  I(BPF_ALU64 | BPF_LSH | BPF_K, 0, 0, 0, 40), ADD_K(0, 1), I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 0, 0, 0), EXIT());
	CS("the callback reads r4", 0, 2, VALUE0(MAP_T), TASK(), SCHED(K_RESUME, MAP_T),
	  MOV_X(8, 0), MOV_K(9, 0), END(), MOV_X(0, 4), EXIT());
	CS("the callback reads past the key", 0, 3, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_T), MOV_X(8, 0), MOV_K(9, 0), END(), LDX(BPF_W, 0, 2, 4),
	  MOV_K(0, 0), EXIT());
	CS("the callback touches the task work", 0, 3, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_T), MOV_X(8, 0), MOV_K(9, 0), END(), LDX(BPF_DW, 0, 3, 8),
	  MOV_K(0, 0), EXIT());
	CS("task work at offset 0", 0, 2, VALUE0(MAP_T), TASK(), MOV_X(1, 7), MOV_X(2, 6),
	  LD_MAP(3, MAP_T), LD_CB(4), MOV_K(5, 0), KCALL(K_RESUME), MOV_X(8, 0), MOV_K(9, 0),
	  END(), MOV_K(0, 0), EXIT());
	CS("task work at a variable offset", 0, 2, VALUE0(MAP_T), TASK(), MOV_X(1, 7),
	  LDX(BPF_W, 2, 6, 0), AND_K(2, 8), ADD_X(2, 6), LD_MAP(3, MAP_T), LD_CB(4), MOV_K(5, 0),
	  KCALL(K_RESUME), MOV_X(8, 0), MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("map without BTF", 0, 2, VALUE0(MAP_NB), TASK(), SCHED(K_RESUME, MAP_NB),
	  MOV_X(8, 0), MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("map without a task work", 0, 2, VALUE0(MAP_NT), TASK(), SCHED(K_RESUME, MAP_NT),
	  MOV_X(8, 0), MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("task work of one map, the other map named", 0, 2, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_T2), MOV_X(8, 0), MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("task work of one map, a map without one named", 0, 2, VALUE0(MAP_T), TASK(),
	  SCHED(K_RESUME, MAP_NT), MOV_X(8, 0), MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("task work on the stack", 0, 2, VALUE0(MAP_T), TASK(), MOV_X(1, 7), MOV_X(2, 10),
	  ADD_K(2, -16), LD_MAP(3, MAP_T), LD_CB(4), MOV_K(5, 0), KCALL(K_RESUME), MOV_X(8, 0),
	  MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("NULL task work", 0, 2, VALUE0(MAP_T), TASK(), MOV_X(1, 7), MOV_K(2, 0),
	  LD_MAP(3, MAP_T), LD_CB(4), MOV_K(5, 0), KCALL(K_RESUME), MOV_X(8, 0), MOV_K(9, 0),
	  END(), MOV_K(0, 0), EXIT());
	CS("NULL map", 0, 2, VALUE0(MAP_T), TASK(), MOV_X(1, 7), MOV_X(2, 6), ADD_K(2, 8),
	  MOV_K(3, 0), LD_CB(4), MOV_K(5, 0), KCALL(K_RESUME), MOV_X(8, 0), MOV_K(9, 0), END(),
	  MOV_K(0, 0), EXIT());
	CS("a map value as the map", 0, 2, VALUE0(MAP_T), TASK(), MOV_X(1, 7), MOV_X(2, 6),
	  ADD_K(2, 8), MOV_X(3, 6), LD_CB(4), MOV_K(5, 0), KCALL(K_RESUME), MOV_X(8, 0),
	  MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("a scalar as the map", 0, 2, VALUE0(MAP_T), TASK(), MOV_X(1, 7), MOV_X(2, 6),
	  ADD_K(2, 8), MOV_K(3, 5), LD_CB(4), MOV_K(5, 0), KCALL(K_RESUME), MOV_X(8, 0),
	  MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("a map value as the callback", 0, 0, VALUE0(MAP_T), TASK(), MOV_X(1, 7),
	  MOV_X(2, 6), ADD_K(2, 8), LD_MAP(3, MAP_T), MOV_X(4, 6), MOV_K(5, 0), KCALL(K_RESUME),
	  MOV_X(8, 0), MOV_K(9, 0), END());
	CS("NULL callback", 0, 0, VALUE0(MAP_T), TASK(), MOV_X(1, 7), MOV_X(2, 6),
	  ADD_K(2, 8), LD_MAP(3, MAP_T), MOV_K(4, 0), MOV_K(5, 0), KCALL(K_RESUME), MOV_X(8, 0),
	  MOV_K(9, 0), END());
	CS("a map value as the task", 0, 2, VALUE0(MAP_T), TASK(), MOV_X(1, 6), MOV_X(2, 6),
	  ADD_K(2, 8), LD_MAP(3, MAP_T), LD_CB(4), MOV_K(5, 0), KCALL(K_RESUME), MOV_X(8, 0),
	  MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("NULL task", 0, 2, VALUE0(MAP_T), TASK(), MOV_K(1, 0), MOV_X(2, 6), ADD_K(2, 8),
	  LD_MAP(3, MAP_T), LD_CB(4), MOV_K(5, 0), KCALL(K_RESUME), MOV_X(8, 0), MOV_K(9, 0),
	  END(), MOV_K(0, 0), EXIT());
	CS("a scalar as the aux", MAP_T, 2, VALUE0(MAP_T), TASK(), MOV_X(1, 7), MOV_X(2, 6),
	  ADD_K(2, 8), LD_MAP(3, MAP_T), LD_CB(4), MOV_K(5, 77), KCALL(K_RESUME), MOV_X(8, 0),
	  MOV_K(9, 0), END(), MOV_K(0, 0), EXIT());
	CS("load of the task work", 0, 0, VALUE0(MAP_T), LDX(BPF_DW, 0, 6, 8), EXIT());
	CS("store into the task work", 0, 0, VALUE0(MAP_T), ST(BPF_W, 6, 12, 0), MOV_K(0, 0),
	  EXIT());
	CS("load next to the task work", 0, 0, VALUE0(MAP_T), LDX(BPF_W, 0, 6, 4), EXIT());
}

/* map creation: which types and flags may hold a task work (errno or 0, both sides) */
static void create_rules(void)
{
	static const struct {
		const char *name;
		uint32_t type, flags, vtype;
	} c[] = {
		{ "create: array", BPF_MAP_TYPE_ARRAY, 0, 4 },
		{ "create: hash", BPF_MAP_TYPE_HASH, 0, 4 },
		{ "create: LRU hash", BPF_MAP_TYPE_LRU_HASH, 0, 4 },
		{ "create: hash, no prealloc", BPF_MAP_TYPE_HASH, BPF_F_NO_PREALLOC, 4 },
		{ "create: per-CPU array", BPF_MAP_TYPE_PERCPU_ARRAY, 0, 4 },
		{ "create: per-CPU hash", BPF_MAP_TYPE_PERCPU_HASH, 0, 4 },
		{ "create: array, BPF_F_RDONLY_PROG", BPF_MAP_TYPE_ARRAY, BPF_F_RDONLY_PROG, 4 },
		{ "create: array, two task works", BPF_MAP_TYPE_ARRAY, 0, 9 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int kfd = mkmap(oracle_kernel_bpf, c[i].type, c[i].flags, ks.btf, c[i].vtype, "c");
		int kerr = kfd < 0 ? errno : 0;
		int bfd = mkmap(bpfrt_bpf, c[i].type, c[i].flags, bs.btf, c[i].vtype, "c");
		int berr = bfd < 0 ? errno : 0;

		T_CASE(c[i].name);
		T_EQ_INT(kerr, berr);
		if (kfd >= 0)
			close(kfd);
		if (bfd >= 0)
			close(bfd);
		compared++;
	}
}

int main(void)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	static const uint32_t types[NMAPS] = { BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_ARRAY,
					       BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_ARRAY,
					       BPF_MAP_TYPE_HASH,  BPF_MAP_TYPE_LRU_HASH };
	static const uint32_t vtypes[NMAPS] = { 4, 0, 5, 4, 4, 4 };
	static const char *const names[NMAPS] = { "twmap", "nobtf",  "notw",
						  "twmap2", "twhash", "twlru" };

	if (geteuid() != 0)
		T_SKIP("not root: task works need CAP_BPF");
	if (!vml)
		T_SKIP("no kernel BTF");
	for (int i = 0; i < K_N; i++) {
		kf[i] = brt_btf_find(vml, kf_names[i], BTF_KIND_FUNC);
		if (kf[i] <= 0)
			T_SKIP("the kernel has no %s", kf_names[i]);
	}
	mypid = getpid();
	ks.bpf = oracle_kernel_bpf;
	bs.bpf = bpfrt_bpf;
	ks.btf = load_btf(oracle_kernel_bpf);
	bs.btf = load_btf(bpfrt_bpf);
	if (ks.btf < 0)
		T_SKIP("the kernel refuses the test's BTF (%s)", strerror(errno));
	T_ASSERT(bs.btf >= 0);
	for (int i = 0; i < NMAPS; i++) {
		int b = vtypes[i] ? 0 : -1;

		ks.maps[i] = mkmap(oracle_kernel_bpf, types[i], 0, b ? -1 : ks.btf, vtypes[i],
				   names[i]);
		bs.maps[i] = mkmap(bpfrt_bpf, types[i], 0, b ? -1 : bs.btf, vtypes[i], names[i]);
		if (ks.maps[i] < 0)
			T_SKIP("the kernel refuses map %s (%s)", names[i], strerror(errno));
		T_ASSERT(bs.maps[i] >= 0);
	}
	/* the hash map's element 0, for the case that schedules on it */
	reset0(&ks, MAP_H);
	reset0(&bs, MAP_H);
	reset0(&ks, MAP_L);
	reset0(&bs, MAP_L);
	create_rules();
	rules();
	printf("%d cases compared with the kernel, %d test runs\n", compared, runs);
	return t_done();
}
