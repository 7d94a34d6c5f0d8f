/* test_obj_lock_oracle.c - struct bpf_res_spin_lock inside objects of bpf_obj_new
 * (verifier: kfunc.c's KF_RES_LOCK argument, helper_args.c's process_spin_lock() for an
 * allocated object, graph.c's struct records; run time: maps/res_lock.c on the object's
 * word) against the kernel.  One program BTF is loaded on both sides (objects with a
 * bpf_res_spin_lock and a bpf_refcount, with the lock alone, with a bpf_spin_lock, a map
 * value with a bpf_res_spin_lock), an array map is made with it, and each program (tc) is
 * loaded with it and a level-1 log: verdict, errno and error line (the last log line
 * before "processed") must be equal, and for programs both accept, the test run's errno
 * and retval: a lock taken and released in an object, nested with another object's or a
 * map value's, irqsave, and an AA deadlock at run time that the verifier cannot see (one
 * object reached through bpf_refcount_acquire's second pointer: -EDEADLK on both).
 * Two of the programs are also pinned by bpfrt and run by a new process of this binary,
 * which rebuilds them from the pinned file and verifies them again with the program BTF
 * the file keeps: their results must be the kernel's.
 *
 * Skips without root or the kernel's BTF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "btf_blob.h"
#include "harness.h"
#include "oracle_load.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define JEQ_K(d, v, o) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_##f)
#define KCALL(k) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, k)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP(d) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 0)
#define RET0 MOV_K(0, 0), EXIT()

/* ---- the program BTF: type ids ---------------------------------------------------------- */
enum { T_INT = 1, T_RES, T_REF, T_SPIN, T_ROBJ, T_RONLY, T_SOBJ, T_MVAL, T_VOIDP, T_PROTO,
       T_FUNC };
#define ENC(kind, vlen) ((uint32_t)(kind) << 24 | (vlen))

static int load_btf(bpf_fn bpf)
{
	/* strings: "", int, bpf_res_spin_lock, bpf_refcount, bpf_spin_lock, val, robj,
	 * lock, data, ref, x, ronly, sobj, mval, cnt, ctx, prog */
	static const char strs[] = "\0int\0bpf_res_spin_lock\0bpf_refcount\0bpf_spin_lock\0val\0"
				   "robj\0lock\0data\0ref\0x\0ronly\0sobj\0mval\0cnt\0ctx\0prog";
	enum { S_INT = 1, S_RES = 5, S_REF = 23, S_SPIN = 36, S_VAL = 50, S_ROBJ = 54,
	       S_LOCK = 59, S_DATA = 64, S_REFM = 69, S_X = 73, S_RONLY = 75, S_SOBJ = 81,
	       S_MVAL = 86, S_CNT = 91, S_CTX = 95, S_PROG = 99 };
	const uint32_t types[] = {
		/* 1 int */ S_INT, ENC(BTF_KIND_INT, 0), 4, BTF_INT_SIGNED << 24 | 32,
		/* 2 */ S_RES, ENC(BTF_KIND_STRUCT, 1), 4, S_VAL, T_INT, 0,
		/* 3 */ S_REF, ENC(BTF_KIND_STRUCT, 1), 4, S_VAL, T_INT, 0,
		/* 4 */ S_SPIN, ENC(BTF_KIND_STRUCT, 1), 4, S_VAL, T_INT, 0,
		/* 5 struct robj { res lock; int data; bpf_refcount ref; int x; } */
		S_ROBJ, ENC(BTF_KIND_STRUCT, 4), 16, S_LOCK, T_RES, 0, S_DATA, T_INT, 32,
		S_REFM, T_REF, 64, S_X, T_INT, 96,
		/* 6 struct ronly { res lock; int data; }: no record (the lock alone) */
		S_RONLY, ENC(BTF_KIND_STRUCT, 2), 8, S_LOCK, T_RES, 0, S_DATA, T_INT, 32,
		/* 7 struct sobj { bpf_spin_lock lock; int data; } */
		S_SOBJ, ENC(BTF_KIND_STRUCT, 2), 8, S_LOCK, T_SPIN, 0, S_DATA, T_INT, 32,
		/* 8 struct mval { res lock; int cnt; } */
		S_MVAL, ENC(BTF_KIND_STRUCT, 2), 8, S_LOCK, T_RES, 0, S_CNT, T_INT, 32,
		/* 9 void *, 10 int (void *ctx), 11 prog */
		0, ENC(BTF_KIND_PTR, 0), 0,
		0, ENC(BTF_KIND_FUNC_PROTO, 1), T_INT, S_CTX, T_VOIDP,
		S_PROG, ENC(BTF_KIND_FUNC, BTF_FUNC_GLOBAL), T_PROTO,
	};

	return btf_blob_load(bpf, types, sizeof(types), strs, sizeof(strs));
}

/* ---- the two sides ---------------------------------------------------------------------- */
struct side {
	bpf_fn bpf;
	int btf_fd, map;
	int fd, err, run_err;
	uint32_t retval;
	char last[256];
};

static char logbuf[1 << 16];
static struct side ks = { .bpf = oracle_kernel_bpf }, bs = { .bpf = bpfrt_bpf };
static int compared, runs;

static int side_setup(struct side *s)
{
	union bpf_attr a;

	s->btf_fd = load_btf(s->bpf);
	if (s->btf_fd < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 2;
	a.btf_fd = (uint32_t)s->btf_fd;
	a.btf_key_type_id = T_INT;
	a.btf_value_type_id = T_MVAL;
	s->map = s->bpf(BPF_MAP_CREATE, &a, sizeof(a));
	return s->map < 0 ? -errno : 0;
}

/* load (and test-run) in on side s; with keep the program's fd stays open in s->fd */
static void load_run(struct side *s, const struct bpf_insn *in, size_t n, int keep)
{
	static unsigned char pkt[64];
	struct bpf_insn insns[128];
	struct bpf_func_info fi = { 0, T_FUNC };
	union bpf_attr attr;

	memcpy(insns, in, n * sizeof(*in));
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = s->map;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	attr.prog_btf_fd = (uint32_t)s->btf_fd;
	attr.func_info = (uintptr_t)&fi;
	attr.func_info_cnt = 1;
	attr.func_info_rec_size = sizeof(fi);
	s->fd = oracle_load(s->bpf, &attr, logbuf, sizeof(logbuf), &s->err, s->last,
			    sizeof(s->last));
	s->run_err = -1;
	s->retval = 0;
	if (s->fd < 0)
		return;
	oracle_test_run(s->bpf, s->fd, pkt, sizeof(pkt), &s->run_err, &s->retval);
	if (!keep)
		close(s->fd);
}

static void check(const char *name, const struct bpf_insn *insns, size_t n)
{
	T_CASE(name);
	load_run(&ks, insns, n, 0);
	load_run(&bs, insns, n, 0);
	T_EQ_INT(ks.fd >= 0, bs.fd >= 0);
	T_EQ_INT(ks.err, bs.err);
	if (ks.fd < 0 && strcmp(ks.last, bs.last))
		T_FAIL("%s: error line: kernel '%s', bpfrt '%s'", name, ks.last, bs.last);
	if (ks.fd >= 0 && bs.fd >= 0) {
		T_EQ_INT(ks.run_err, bs.run_err);
		T_EQ_INT((int32_t)ks.retval, (int32_t)bs.retval);
		runs++;
	}
	if (getenv("OBJ_LOCK_DUMP"))
		fprintf(stderr, "%s: kernel %d '%s' run %d/%d | bpfrt %d '%s' run %d/%d\n", name,
			ks.err, ks.last, ks.run_err, (int32_t)ks.retval, bs.err, bs.last,
			bs.run_err, (int32_t)bs.retval);
	compared++;
}

#define P(name, ...)                                                                      \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                              \
		check(name, p_, sizeof(p_) / sizeof(p_[0]));                               \
	} while (0)

/* ---- the programs ----------------------------------------------------------------------- */
static int k_new, k_drop, k_acq, k_lock, k_unlock, k_lock_irq, k_unlock_irq;

/* r6 = bpf_obj_new(type), the program returning 0 when NULL (7 insns) */
#define NEW6(t) MOV_K(1, t), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 2), MOV_K(0, 0), EXIT(), \
		MOV_X(6, 0)
/* r7 = another, r6 dropped when NULL (10 insns) */
#define NEW7(t) MOV_K(1, t), MOV_K(2, 0), KCALL(k_new), JNE_K(0, 0, 5), MOV_X(1, 6),       \
		MOV_K(2, 0), KCALL(k_drop), MOV_K(0, 0), EXIT(), MOV_X(7, 0)
#define DROP(r) MOV_X(1, r), MOV_K(2, 0), KCALL(k_drop)
/* r8 = the map's value 0, r6 dropped when NULL */
#define VALUE8 ST(BPF_W, 10, -4, 0), LD_MAP(1), MOV_X(2, 10), ADD_K(2, -4),                \
	       CALL(map_lookup_elem), JNE_K(0, 0, 5), DROP(6), RET0, MOV_X(8, 0)
/* the lock at off of the object (or value) in r (3 insns each) */
#define RLOCK(r, off) MOV_X(1, r), ADD_K(1, off), KCALL(k_lock)
#define RUNLOCK(r, off) MOV_X(1, r), ADD_K(1, off), KCALL(k_unlock)
#define RLOCK_IRQ(r, fo) MOV_X(1, r), MOV_X(2, 10), ADD_K(2, -(fo)), KCALL(k_lock_irq)
#define RUNLOCK_IRQ(r, fo) MOV_X(1, r), MOV_X(2, 10), ADD_K(2, -(fo)), KCALL(k_unlock_irq)
/* after a lock call on r6's object: on failure drop it and return 1 (6 insns) */
#define TAKEN_OR_DROP6 JEQ_K(0, 0, 5), DROP(6), MOV_K(0, 1), EXIT()

static void object_locks(void)
{
	P("lock in an object", NEW6(T_ROBJ), RLOCK(6, 0), TAKEN_OR_DROP6, ST(BPF_W, 6, 4, 7),
	  RUNLOCK(6, 0), LDX(BPF_W, 7, 6, 4), DROP(6), MOV_X(0, 7), EXIT());
	P("lock of a type with no record", NEW6(T_RONLY), RLOCK(6, 0), TAKEN_OR_DROP6,
	  RUNLOCK(6, 0), DROP(6), RET0);
	P("lock word read, no record", NEW6(T_RONLY), LDX(BPF_W, 7, 6, 0), DROP(6), RET0);
	P("lock word read", NEW6(T_ROBJ), LDX(BPF_W, 7, 6, 0), DROP(6), RET0);
	P("lock at the wrong offset", NEW6(T_ROBJ), RLOCK(6, 4), TAKEN_OR_DROP6, RUNLOCK(6, 4),
	  DROP(6), RET0);
	P("res lock of a bpf_spin_lock object", NEW6(T_SOBJ), RLOCK(6, 0), TAKEN_OR_DROP6,
	  RUNLOCK(6, 0), DROP(6), RET0);
	P("bpf_spin_lock of a res lock object", NEW6(T_ROBJ), MOV_X(1, 6), CALL(spin_lock),
	  MOV_X(1, 6), CALL(spin_unlock), DROP(6), RET0);
	P("AA in an object", NEW6(T_ROBJ), RLOCK(6, 0), TAKEN_OR_DROP6, RLOCK(6, 0),
	  RUNLOCK(6, 0), RUNLOCK(6, 0), DROP(6), RET0);
	P("result unchecked", NEW6(T_ROBJ), RLOCK(6, 0), RUNLOCK(6, 0), DROP(6), RET0);
	P("exit holding it", NEW6(T_ROBJ), RLOCK(6, 0), TAKEN_OR_DROP6, RET0);
	P("drop while holding it", NEW6(T_ROBJ), RLOCK(6, 0), TAKEN_OR_DROP6, DROP(6),
	  RUNLOCK(6, 0), RET0);
	P("irqsave in an object", NEW6(T_ROBJ), RLOCK_IRQ(6, 8), TAKEN_OR_DROP6,
	  RUNLOCK_IRQ(6, 8), DROP(6), MOV_K(0, 3), EXIT());
	P("irqsave, plain unlock", NEW6(T_ROBJ), RLOCK_IRQ(6, 8), TAKEN_OR_DROP6, RUNLOCK(6, 0),
	  DROP(6), RET0);
	/* two objects: fail paths at the end (unlock r6; drop both, return 1) */
	P("two objects nested", NEW6(T_ROBJ), NEW7(T_ROBJ), RLOCK(6, 0), JNE_K(0, 0, 21),
	  RLOCK(7, 0), JNE_K(0, 0, 14), RUNLOCK(7, 0), RUNLOCK(6, 0), DROP(6), DROP(7),
	  MOV_K(0, 5), EXIT(), RUNLOCK(6, 0), DROP(6), DROP(7), MOV_K(0, 1), EXIT());
	P("two objects out of order", NEW6(T_ROBJ), NEW7(T_ROBJ), RLOCK(6, 0), JNE_K(0, 0, 21),
	  RLOCK(7, 0), JNE_K(0, 0, 14), RUNLOCK(6, 0), RUNLOCK(7, 0), DROP(6), DROP(7), RET0,
	  RUNLOCK(6, 0), DROP(6), DROP(7), MOV_K(0, 1), EXIT());
	P("unlock another object's lock", NEW6(T_ROBJ), NEW7(T_ROBJ), RLOCK(6, 0),
	  JNE_K(0, 0, 11), RUNLOCK(7, 0), DROP(6), DROP(7), RET0, DROP(6), DROP(7), MOV_K(0, 1),
	  EXIT());
	/* a map value's lock, then the object's */
	P("map value then object", NEW6(T_ROBJ), VALUE8, RLOCK(8, 0), JNE_K(0, 0, 18),
	  RLOCK(6, 0), JNE_K(0, 0, 11), RUNLOCK(6, 0), RUNLOCK(8, 0), DROP(6), MOV_K(0, 6),
	  EXIT(), RUNLOCK(8, 0), DROP(6), MOV_K(0, 1), EXIT());
	P("map value then object, out of order", NEW6(T_ROBJ), VALUE8, RLOCK(8, 0),
	  JNE_K(0, 0, 18), RLOCK(6, 0), JNE_K(0, 0, 11), RUNLOCK(8, 0), RUNLOCK(6, 0), DROP(6),
	  RET0, RUNLOCK(8, 0), DROP(6), MOV_K(0, 1), EXIT());
	/* one object through two pointers (bpf_refcount_acquire): the verifier sees two
	 * locks, the run an AA deadlock (-EDEADLK from the second lock) */
	P("AA at run time", NEW6(T_ROBJ), MOV_X(1, 6), MOV_K(2, 0), KCALL(k_acq), MOV_X(7, 0),
	  RLOCK(6, 0), JNE_K(0, 0, 30), RLOCK(7, 0), MOV_X(9, 0), JNE_K(9, 0, 14), RUNLOCK(7, 0),
	  RUNLOCK(6, 0), DROP(6), DROP(7), RET0, RUNLOCK(6, 0), DROP(6), DROP(7), MOV_X(0, 9),
	  EXIT(), DROP(6), DROP(7), MOV_K(0, 1), EXIT());
}

/* ---- a pinned program re-verified in another process ---------------------------------- */
/* the child: open the pin, test-run it once, print "errno retval" */
static int reopen_run(const char *path)
{
	static unsigned char pkt[64];
	int fd = bpfrt_obj_get(path), run_err;
	uint32_t retval = 0;

	if (fd < 0) {
		printf("get %d\n", errno);
		return 0;
	}
	oracle_test_run(bpfrt_bpf, fd, pkt, sizeof(pkt), &run_err, &retval);
	printf("run %d %d\n", run_err, (int32_t)retval);
	close(fd);
	return 0;
}

/* bpfrt's program pinned, run by a new process (which has no copy of it: it rebuilds the
 * program from the file and verifies it again, with the BTF the file keeps) and compared
 * with the kernel's run of the same program */
static void pinned(const char *name, const char *dir, const struct bpf_insn *insns, size_t n)
{
	char path[160], want[64], out[64] = "";
	int p[2], st;
	ssize_t len;
	pid_t pid;

	T_CASE(name);
	snprintf(path, sizeof(path), "%s/prog", dir);
	load_run(&ks, insns, n, 0);
	load_run(&bs, insns, n, 1);
	T_ASSERT(ks.fd >= 0 && bs.fd >= 0);
	if (ks.fd < 0 || bs.fd < 0)
		return;
	T_EQ_INT(0, bpfrt_obj_pin(bs.fd, path));
	close(bs.fd);
	if (pipe(p))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl("/proc/self/exe", "test_verifier_obj_lock_oracle", "run", path, (char *)NULL);
		_exit(99);
	}
	close(p[1]);
	len = read(p[0], out, sizeof(out) - 1);
	out[len > 0 ? len : 0] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	unlink(path);
	snprintf(want, sizeof(want), "run %d %d\n", ks.run_err, (int32_t)ks.retval);
	T_EQ_STR(want, out);
	if (getenv("OBJ_LOCK_DUMP"))
		fprintf(stderr, "%s: kernel %s | bpfrt in another process %s", name, want, out);
	compared++;
	runs++;
}

static void pinned_rules(const char *dir)
{
	const struct bpf_insn lock[] = { NEW6(T_ROBJ), RLOCK(6, 0), TAKEN_OR_DROP6,
					 ST(BPF_W, 6, 4, 9), RUNLOCK(6, 0), LDX(BPF_W, 7, 6, 4),
					 DROP(6), MOV_X(0, 7), EXIT() };
	const struct bpf_insn aa[] = { NEW6(T_ROBJ), MOV_X(1, 6), MOV_K(2, 0), KCALL(k_acq),
				       MOV_X(7, 0), RLOCK(6, 0), JNE_K(0, 0, 30), RLOCK(7, 0),
				       MOV_X(9, 0), JNE_K(9, 0, 14), RUNLOCK(7, 0), RUNLOCK(6, 0),
				       DROP(6), DROP(7), RET0, RUNLOCK(6, 0), DROP(6), DROP(7),
				       MOV_X(0, 9), EXIT(), DROP(6), DROP(7), MOV_K(0, 1), EXIT() };

	pinned("pinned: lock in an object, run elsewhere", dir, lock, sizeof(lock) / sizeof(*lock));
	pinned("pinned: AA at run time, run elsewhere", dir, aa, sizeof(aa) / sizeof(*aa));
}

static int func_id(const char *name)
{
	return brt_btf_find(brt_btf_vmlinux(), name, BTF_KIND_FUNC);
}

int main(int argc, char **argv)
{
	char dir[64] = "/dev/shm/bpfrt-objlock-XXXXXX";
	int err;

	if (argc == 3 && !strcmp(argv[1], "run"))
		return reopen_run(argv[2]);
	if (geteuid() != 0)
		T_SKIP("not root: the kernel side needs CAP_BPF and CAP_PERFMON");
	if (!brt_btf_vmlinux())
		T_SKIP("no kernel BTF (/sys/kernel/btf/vmlinux)");
	k_new = func_id("bpf_obj_new_impl");
	k_drop = func_id("bpf_obj_drop_impl");
	k_acq = func_id("bpf_refcount_acquire_impl");
	k_lock = func_id("bpf_res_spin_lock");
	k_unlock = func_id("bpf_res_spin_unlock");
	k_lock_irq = func_id("bpf_res_spin_lock_irqsave");
	k_unlock_irq = func_id("bpf_res_spin_unlock_irqrestore");
	if (k_new <= 0 || k_drop <= 0 || k_acq <= 0 || k_lock <= 0 || k_unlock <= 0 ||
	    k_lock_irq <= 0 || k_unlock_irq <= 0)
		T_SKIP("the kernel's BTF lacks bpf_obj_new or bpf_res_spin_lock");
	/* this test's own bpffs for the pins (the child finds it through the environment) */
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	err = side_setup(&ks);
	if (err)
		T_SKIP("the kernel refused the BTF or its map (%d)", err);
	err = side_setup(&bs);
	T_EQ_INT(err, 0);
	if (err)
		return t_done();
	object_locks();
	pinned_rules(dir);
	close(bs.map);
	close(bs.btf_fd);
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		T_EQ_INT(0, system(cmd));
	}
	printf("%d programs compared, %d test runs\n", compared, runs);
	return t_done();
}
