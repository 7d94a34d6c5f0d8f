/* test_timer_run_oracle.c - bpf_timer callbacks (maps/timer.c) against the kernel: the same
 * XDP program, loaded into the kernel and into bpfrt (interpreter, checked engine, JIT),
 * arms a timer of a map value with a test run; its callback runs later on its own, so the
 * test waits and then compares what the callbacks wrote.
 *
 * The program reads its orders from a parameter map (clock, flags, nanoseconds, which
 * helpers to call) and stores each helper's answer there; the callback counts its calls
 * in the value, records its key, checks that a lookup of (map, key) gives the value it got,
 * counts in a global map and, by the value's first word, re-arms itself until it ran three
 * times, cancels itself (-EDEADLK) or deletes its own element.  Cases: array and hash
 * maps, the three clocks, relative and BPF_F_TIMER_ABS times, CPU_PIN, restarts, cancel
 * of an armed timer (1) and of an idle one (0), and the ways a timer is freed before it
 * fires: the element deleted or updated from user space, the map's last fd closed.  The
 * margins are wide (timers of 0-2 ms read 150 ms later, ones that must not fire armed
 * 300 ms away and read at 400 ms), and a bpfrt side whose callbacks lag the kernel's is
 * waited for up to 3 s more (settle()), so that a loaded machine does not change the
 * outcome.
 * Compared per case: each helper's answer, the element (errno and bytes; the timer's bytes
 * read as zero on both) and the global counters.  Skips without root.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf_blob.h"
#include "harness.h"
#include "oracle_load.h"

#define BTF_INFO_ENC(kind, kflag, vlen) (((kflag) << 31) | ((kind) << 24) | (vlen))
#define BTF_INT_ENC(enc, off, bits) (((enc) << 24) | ((off) << 16) | (bits))

/* parameter map value: what the program does, and what the helpers answered */
struct params {
	uint64_t ns;
	uint32_t clock, flags, op, key;
	int64_t res[4]; /* init, set_callback, start, cancel */
};
#define OP_INIT 1
#define OP_CB 2
#define OP_START 4
#define OP_CANCEL 8
#define OP_NOW 16 /* ns += bpf_ktime_get_boot_ns() for clock 7, else bpf_ktime_get_ns() */

/* struct val { u64 a; struct bpf_timer t; u64 b, c, d; }: a the callback's mode, b its
 * calls, c the key it got, d 1 when lookup(map, key) gave its value */
struct val {
	uint64_t a, t[2], b, c, d;
};
/* the global counters: calls, the periodic start's answer, self-cancel's, self-delete's */
struct cnt {
	int64_t calls, restart, cancel, del;
};

#define NSIDES 4 /* the kernel, then bpfrt's three engines */
#define MAP_PARAMS 0
#define MAP_ARR 1
#define MAP_HASH 2
#define MAP_CNT 3

static const char prog_text[] =
	"stw [%r10-4], 0\n"
	"lddw %r1, map_fd 0\n"
	"mov %r2, %r10\n"
	"add %r2, -4\n"
	"call bpf_map_lookup_elem\n"
	"jne %r0, 0, +2\n"
	"mov %r0, 0\n"
	"exit\n"
	"mov %r6, %r0\n"
	"ldxw %r1, [%r6+20]\n"
	"stxw [%r10-8], %r1\n"
	"lddw %r1, map_fd TARGET\n"
	"mov %r2, %r10\n"
	"add %r2, -8\n"
	"call bpf_map_lookup_elem\n"
	"jne %r0, 0, +2\n"
	"mov %r0, 1\n"
	"exit\n"
	"mov %r8, %r0\n"
	"ldxw %r7, [%r6+16]\n"
	"jset %r7, 1, do_init\n"
	"ja after_init\n"
	"do_init:\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"lddw %r2, map_fd TARGET\n"
	"ldxw %r3, [%r6+8]\n"
	"call bpf_timer_init\n"
	"stxdw [%r6+24], %r0\n"
	"after_init:\n"
	"jset %r7, 2, do_cb\n"
	"ja after_cb\n"
	"do_cb:\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"lddw %r2, func cb\n"
	"call bpf_timer_set_callback\n"
	"stxdw [%r6+32], %r0\n"
	"after_cb:\n"
	"jset %r7, 4, do_start\n"
	"ja after_start\n"
	"do_start:\n"
	"ldxdw %r9, [%r6+0]\n"
	"jset %r7, 16, now\n"
	"ja start_call\n"
	"now:\n"
	"ldxw %r1, [%r6+8]\n"
	"jeq %r1, 7, boot\n"
	"call bpf_ktime_get_ns\n"
	"ja add_now\n"
	"boot:\n"
	"call bpf_ktime_get_boot_ns\n"
	"add_now:\n"
	"add %r9, %r0\n"
	"start_call:\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"mov %r2, %r9\n"
	"ldxw %r3, [%r6+12]\n"
	"call bpf_timer_start\n"
	"stxdw [%r6+40], %r0\n"
	"after_start:\n"
	"jset %r7, 8, do_cancel\n"
	"ja done\n"
	"do_cancel:\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"call bpf_timer_cancel\n"
	"stxdw [%r6+48], %r0\n"
	"done:\n"
	"mov %r0, 2\n"
	"exit\n"
	/* the callback (map, key, value) */
	"cb:\n"
	"mov %r6, %r1\n"
	"mov %r7, %r2\n"
	"mov %r8, %r3\n"
	"mov %r1, 1\n"
	"lock add [%r8+24], %r1\n"
	"ldxw %r1, [%r7+0]\n"
	"stxdw [%r8+32], %r1\n"
	"mov %r1, %r6\n"
	"mov %r2, %r7\n"
	"call bpf_map_lookup_elem\n"
	"jne %r0, %r8, +2\n"
	"mov %r1, 1\n"
	"stxdw [%r8+40], %r1\n"
	"stw [%r10-4], 0\n"
	"lddw %r1, map_fd 3\n"
	"mov %r2, %r10\n"
	"add %r2, -4\n"
	"call bpf_map_lookup_elem\n"
	"jeq %r0, 0, out\n"
	"mov %r9, %r0\n"
	"mov %r1, 1\n"
	"lock add [%r9+0], %r1\n"
	"ldxdw %r1, [%r8+0]\n"
	"jeq %r1, 1, periodic\n"
	"jeq %r1, 2, selfcancel\n"
	"jeq %r1, 3, selfdelete\n"
	"ja out\n"
	"periodic:\n"
	"ldxdw %r1, [%r8+24]\n"
	"jge %r1, 3, out\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"mov %r2, 1000000\n"
	"mov %r3, 0\n"
	"call bpf_timer_start\n"
	"stxdw [%r9+8], %r0\n"
	"ja out\n"
	"selfcancel:\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"call bpf_timer_cancel\n"
	"stxdw [%r9+16], %r0\n"
	"ja out\n"
	"selfdelete:\n"
	"mov %r1, %r6\n"
	"mov %r2, %r7\n"
	"call bpf_map_delete_elem\n"
	"stxdw [%r9+24], %r0\n"
	"out:\n"
	"mov %r0, 0\n"
	"exit\n";

/* BTF: [1] int, [2] struct bpf_timer, [3] struct val, [4] u64, [5] int (void), [6] main,
 * [7] cb (static functions: their func_info; a callback needs BTF) */
static int load_btf(bpf_fn bpf)
{
	static const char strs[] = "\0int\0bpf_timer\0x\0val\0a\0t\0b\0c\0d\0u64\0main\0cb";
	enum { S_INT = 1, S_TIMER = 5, S_X = 15, S_VAL = 17, S_A = 21, S_T = 23, S_B = 25,
	       S_C = 27, S_D = 29, S_U64 = 31, S_MAIN = 35, S_CB = 40 };
	uint32_t types[] = {
		S_INT, BTF_INFO_ENC(BTF_KIND_INT, 0, 0), 4, BTF_INT_ENC(BTF_INT_SIGNED, 0, 32),
		S_TIMER, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 1), 16, S_X, 4, 0,
		S_VAL, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 5), 48, S_A, 4, 0, S_T, 2, 64, S_B, 4, 192,
		S_C, 4, 256, S_D, 4, 320,
		S_U64, BTF_INFO_ENC(BTF_KIND_INT, 0, 0), 8, BTF_INT_ENC(0, 0, 64),
		0, BTF_INFO_ENC(BTF_KIND_FUNC_PROTO, 0, 0), 1,
		S_MAIN, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 5,
		S_CB, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 5,
	};
	return btf_blob_load(bpf, types, sizeof(types), strs, sizeof(strs));
}

static int mkmap(bpf_fn bpf, uint32_t type, uint32_t vsize, uint32_t max, int btf)
{
	return btf_blob_map(bpf, type, vsize, max, 0, btf, 3, "");
}

static int elem_op(bpf_fn bpf, int cmd, int fd, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)value;
	return bpf(cmd, &a, sizeof(a)) ? -errno : 0;
}

struct side {
	bpf_fn bpf;
	uint32_t pflags;
	int btf;
	int maps[4];
	int prog;
	/* read after the wait */
	struct params p;
	int elem_err;
	struct val v;
	struct cnt c;
	int run_err;
	uint32_t retval;
};

static struct side sides[NSIDES];
static struct bpf_insn *insns[3]; /* by target map (1, 2) */
static size_t ninsns[3];
static int cases, fired;

static int load_prog(struct side *s, int target)
{
	static char logbuf[1 << 16];
	struct bpf_insn prog[512];
	struct bpf_func_info fi[2] = { { 0, 6 }, { 0, 7 } };
	union bpf_attr attr;
	char last[256];
	int err, fd;

	for (size_t i = 0; i < ninsns[target]; i++) {
		prog[i] = insns[target][i];
		if (prog[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    prog[i].src_reg == BPF_PSEUDO_MAP_FD)
			prog[i].imm = s->maps[prog[i].imm];
		if (prog[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    prog[i].src_reg == BPF_PSEUDO_FUNC)
			fi[1].insn_off = (uint32_t)((int64_t)i + 1 + prog[i].imm);
	}
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_XDP;
	attr.insns = (uintptr_t)prog;
	attr.insn_cnt = (uint32_t)ninsns[target];
	attr.license = (uintptr_t)"GPL";
	attr.prog_flags = s->pflags;
	attr.prog_btf_fd = (uint32_t)s->btf;
	attr.func_info = (uintptr_t)fi;
	attr.func_info_cnt = 2;
	attr.func_info_rec_size = sizeof(fi[0]);
	fd = oracle_load(s->bpf, &attr, logbuf, sizeof(logbuf), &err, last, sizeof(last));
	if (fd < 0)
		T_FAIL("load (%s): %s: %s", s == &sides[0] ? "kernel" : "bpfrt", strerror(err),
		       last);
	return fd;
}

static int test_run(struct side *s)
{
	static unsigned char pkt[64];
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)s->prog;
	attr.test.data_in = (uintptr_t)pkt;
	attr.test.data_size_in = sizeof(pkt);
	attr.test.repeat = 1;
	s->run_err = s->bpf(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) ? errno : 0;
	s->retval = attr.test.retval;
	return s->run_err;
}

static void set_params(struct side *s, struct params *p)
{
	T_EQ_INT(0, elem_op(s->bpf, BPF_MAP_UPDATE_ELEM, s->maps[MAP_PARAMS], 0, p));
}

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* What a case does after the run that arms the timer, before the wait. */
enum after {
	AFTER_NONE,
	AFTER_DELETE,  /* user space deletes the element */
	AFTER_UPDATE,  /* user space updates the element */
	AFTER_CLOSE,   /* the target map's and the program's fds are closed */
	AFTER_RUN2,    /* the program runs again with op2 after the wait, then a second wait */
};

struct tcase {
	const char *name;
	int target;     /* MAP_ARR or MAP_HASH */
	uint32_t key;
	uint64_t mode;  /* the value's a: 1 periodic, 2 self-cancel, 3 self-delete */
	uint32_t op, clock, flags;
	uint64_t ns;
	int realtime_abs; /* ns is from now on CLOCK_REALTIME (BPF_F_TIMER_ABS) */
	enum after after;
	uint32_t op2;
	int wait_ms;
};

/* The callbacks' counts on every side: the global counter and the element's (-1: gone). */
static int64_t counts(struct side *s, int target, uint32_t key)
{
	struct cnt c;
	struct val v;

	memset(&c, 0, sizeof(c));
	elem_op(s->bpf, BPF_MAP_LOOKUP_ELEM, s->maps[MAP_CNT], 0, &c);
	if (s->maps[target] < 0 || elem_op(s->bpf, BPF_MAP_LOOKUP_ELEM, s->maps[target], key, &v))
		v.b = 0xffff;
	return c.calls * 0x10000 + (int64_t)v.b;
}

/* Wait ms, then, while a bpfrt side's counts differ from the kernel's, up to 3 s more: the
 * kernel's hrtimers fire on time, bpfrt's timer thread may be late on a loaded machine
 * (never early), and a late callback must not read as a difference. */
static void settle(const struct tcase *tc, int ms)
{
	sleep_ms(ms);
	for (int waited = 0; waited < 3000; waited += 10) {
		int64_t k = counts(&sides[0], tc->target, tc->key);
		int same = 1;

		for (int i = 1; i < NSIDES; i++)
			same &= counts(&sides[i], tc->target, tc->key) == k;
		if (same)
			return;
		sleep_ms(10);
	}
}

static void run_case(const struct tcase *tc)
{
	struct params p;
	struct val v0;

	T_CASE(tc->name);
	memset(&v0, 0, sizeof(v0));
	v0.a = tc->mode;
	for (int i = 0; i < NSIDES; i++) {
		struct side *s = &sides[i];

		s->maps[MAP_PARAMS] = mkmap(s->bpf, BPF_MAP_TYPE_ARRAY, sizeof(struct params), 1, -1);
		s->maps[MAP_ARR] = mkmap(s->bpf, BPF_MAP_TYPE_ARRAY, sizeof(struct val), 4, s->btf);
		s->maps[MAP_HASH] = mkmap(s->bpf, BPF_MAP_TYPE_HASH, sizeof(struct val), 4, s->btf);
		s->maps[MAP_CNT] = mkmap(s->bpf, BPF_MAP_TYPE_ARRAY, sizeof(struct cnt), 1, -1);
		for (int m = 0; m < 4; m++)
			if (s->maps[m] < 0)
				T_FAIL("map %d on side %d: %s", m, i, strerror(errno));
		T_EQ_INT(0, elem_op(s->bpf, BPF_MAP_UPDATE_ELEM, s->maps[tc->target], tc->key, &v0));
		s->prog = load_prog(s, tc->target);
	}
	for (int i = 0; i < NSIDES; i++) {
		struct side *s = &sides[i];

		memset(&p, 0, sizeof(p));
		p.ns = tc->ns;
		if (tc->realtime_abs)
			p.ns += (uint64_t)realtime_ns();
		p.clock = tc->clock;
		p.flags = tc->flags;
		p.op = tc->op;
		p.key = tc->key;
		set_params(s, &p);
		if (s->prog >= 0)
			test_run(s);
		if (tc->after == AFTER_DELETE)
			T_EQ_INT(0, elem_op(s->bpf, BPF_MAP_DELETE_ELEM, s->maps[tc->target], tc->key,
					    NULL));
		if (tc->after == AFTER_UPDATE)
			T_EQ_INT(0, elem_op(s->bpf, BPF_MAP_UPDATE_ELEM, s->maps[tc->target], tc->key,
					    &v0));
		if (tc->after == AFTER_CLOSE) {
			close(s->maps[tc->target]);
			s->maps[tc->target] = -1;
			if (s->prog >= 0)
				close(s->prog);
			s->prog = -1;
		}
	}
	settle(tc, tc->wait_ms);
	if (tc->after == AFTER_RUN2) {
		for (int i = 0; i < NSIDES; i++) {
			struct side *s = &sides[i];

			T_EQ_INT(0, elem_op(s->bpf, BPF_MAP_LOOKUP_ELEM, s->maps[MAP_PARAMS], 0, &p));
			p.op = tc->op2;
			set_params(s, &p);
			if (s->prog >= 0)
				test_run(s);
		}
		settle(tc, tc->wait_ms);
	}
	for (int i = 0; i < NSIDES; i++) {
		struct side *s = &sides[i];

		memset(&s->v, 0, sizeof(s->v));
		T_EQ_INT(0, elem_op(s->bpf, BPF_MAP_LOOKUP_ELEM, s->maps[MAP_PARAMS], 0, &s->p));
		T_EQ_INT(0, elem_op(s->bpf, BPF_MAP_LOOKUP_ELEM, s->maps[MAP_CNT], 0, &s->c));
		s->elem_err = s->maps[tc->target] >= 0
				      ? elem_op(s->bpf, BPF_MAP_LOOKUP_ELEM, s->maps[tc->target],
						tc->key, &s->v)
				      : -EBADF;
	}
	for (int i = 1; i < NSIDES; i++) {
		const struct side *k = &sides[0], *b = &sides[i];

		T_EQ_INT(k->run_err, b->run_err);
		T_EQ_INT(k->retval, b->retval);
		for (int r = 0; r < 4; r++)
			T_EQ_INT(k->p.res[r], b->p.res[r]);
		T_EQ_INT(k->elem_err, b->elem_err);
		T_EQ_INT(k->v.a, b->v.a);
		T_EQ_INT(k->v.t[0], b->v.t[0]);
		T_EQ_INT(k->v.t[1], b->v.t[1]);
		T_EQ_INT(k->v.b, b->v.b);
		T_EQ_INT(k->v.c, b->v.c);
		T_EQ_INT(k->v.d, b->v.d);
		T_EQ_INT(k->c.calls, b->c.calls);
		T_EQ_INT(k->c.restart, b->c.restart);
		T_EQ_INT(k->c.cancel, b->c.cancel);
		T_EQ_INT(k->c.del, b->c.del);
	}
	if (getenv("TIMER_DUMP"))
		for (int i = 0; i < NSIDES; i++) {
			const struct side *s = &sides[i];

			fprintf(stderr,
				"%s [%d]: run %d/%u res %lld %lld %lld %lld elem %d a %llu b %llu "
				"c %llu d %llu cnt %lld %lld %lld %lld\n",
				tc->name, i, s->run_err, s->retval, (long long)s->p.res[0],
				(long long)s->p.res[1], (long long)s->p.res[2],
				(long long)s->p.res[3], s->elem_err, (unsigned long long)s->v.a,
				(unsigned long long)s->v.b, (unsigned long long)s->v.c,
				(unsigned long long)s->v.d, (long long)s->c.calls,
				(long long)s->c.restart, (long long)s->c.cancel,
				(long long)s->c.del);
		}
	fired += sides[0].c.calls > 0;
	for (int i = 0; i < NSIDES; i++) {
		struct side *s = &sides[i];

		for (int m = 0; m < 4; m++)
			if (s->maps[m] >= 0)
				close(s->maps[m]);
		if (s->prog >= 0)
			close(s->prog);
	}
	cases++;
}

#define MS 1000000ull
#define ALL (OP_INIT | OP_CB | OP_START)

static const struct tcase tcases[] = {
	{ "array, monotonic, 1 ms", MAP_ARR, 2, 0, ALL, 1, 0, MS, 0, AFTER_NONE, 0, 150 },
	{ "hash, monotonic, 1 ms", MAP_HASH, 3, 0, ALL, 1, 0, MS, 0, AFTER_NONE, 0, 150 },
	{ "array, boottime", MAP_ARR, 0, 0, ALL, 7, 0, 2 * MS, 0, AFTER_NONE, 0, 150 },
	{ "hash, realtime", MAP_HASH, 1, 0, ALL, 0, 0, 2 * MS, 0, AFTER_NONE, 0, 150 },
	{ "expires at once (0 ns)", MAP_ARR, 1, 0, ALL, 1, 0, 0, 0, AFTER_NONE, 0, 150 },
	{ "CPU_PIN", MAP_ARR, 1, 0, ALL, 1, 2, MS, 0, AFTER_NONE, 0, 150 },
	{ "ABS monotonic", MAP_ARR, 3, 0, ALL | OP_NOW, 1, 1, 2 * MS, 0, AFTER_NONE, 0, 150 },
	{ "ABS boottime", MAP_HASH, 0, 0, ALL | OP_NOW, 7, 1, 2 * MS, 0, AFTER_NONE, 0, 150 },
	/* the kernel's REALTIME timer runs on the monotonic clock (hrtimer_setup() with a
	 * relative mode): a realtime date is decades away, a monotonic one is not */
	{ "ABS realtime date: never", MAP_ARR, 2, 0, ALL, 0, 1, 2 * MS, 1, AFTER_NONE, 0, 150 },
	{ "ABS realtime timer, monotonic date", MAP_ARR, 2, 0, ALL | OP_NOW, 0, 1, 2 * MS, 0,
	  AFTER_NONE, 0, 150 },
	{ "ABS in the past", MAP_HASH, 2, 0, ALL, 1, 1, 1000, 0, AFTER_NONE, 0, 150 },
	{ "ABS far away, then cancel: 1", MAP_ARR, 0, 0, ALL | OP_CANCEL, 1, 1, ~0ull >> 2, 0,
	  AFTER_NONE, 0, 30 },
	/* 1 s, not a few ms: under load a test run can be preempted between its start and its
	 * cancel for longer than a short expiry, and bpfrt's timer thread then fires first */
	{ "start, cancel: 1, no call", MAP_ARR, 1, 0, ALL | OP_CANCEL, 1, 0, 1000 * MS, 0,
	  AFTER_NONE, 0, 150 },
	{ "hash start, cancel", MAP_HASH, 1, 0, ALL | OP_CANCEL, 7, 0, 1000 * MS, 0, AFTER_NONE, 0,
	  150 },
	{ "cancel after it fired: 0", MAP_ARR, 2, 0, ALL, 1, 0, MS, 0, AFTER_RUN2, OP_CANCEL,
	  150 },
	{ "start again after it fired", MAP_HASH, 2, 0, ALL, 1, 0, MS, 0, AFTER_RUN2, OP_START,
	  150 },
	{ "init again: -EBUSY, still armed", MAP_ARR, 0, 0, ALL, 1, 0, 40 * MS, 0, AFTER_RUN2,
	  OP_INIT, 150 },
	{ "cancel, then start: -EINVAL", MAP_ARR, 0, 0, ALL, 1, 0, 1000 * MS, 0, AFTER_RUN2,
	  OP_CANCEL | OP_START, 30 },
	{ "restart replaces the expiry", MAP_HASH, 0, 0, ALL, 1, 0, 3000 * MS, 0, AFTER_RUN2,
	  OP_START, 30 },
	{ "periodic: re-armed by its callback", MAP_ARR, 3, 1, ALL, 1, 0, MS, 0, AFTER_NONE, 0,
	  200 },
	{ "periodic, hash", MAP_HASH, 3, 1, ALL, 7, 0, MS, 0, AFTER_NONE, 0, 200 },
	{ "cancel from its own callback: -EDEADLK", MAP_ARR, 1, 2, ALL, 1, 0, MS, 0, AFTER_NONE,
	  0, 150 },
	{ "callback deletes its element", MAP_HASH, 1, 3, ALL, 1, 0, MS, 0, AFTER_NONE, 0, 150 },
	{ "callback deletes from an array: -EINVAL", MAP_ARR, 1, 3, ALL, 1, 0, MS, 0, AFTER_NONE,
	  0, 150 },
	{ "element deleted before it fires", MAP_HASH, 2, 0, ALL, 1, 0, 300 * MS, 0, AFTER_DELETE,
	  0, 400 },
	{ "hash element updated before it fires", MAP_HASH, 2, 0, ALL, 1, 0, 300 * MS, 0,
	  AFTER_UPDATE, 0, 400 },
	{ "array element updated before it fires", MAP_ARR, 2, 0, ALL, 1, 0, 300 * MS, 0,
	  AFTER_UPDATE, 0, 400 },
	{ "map closed before it fires", MAP_ARR, 3, 0, ALL, 1, 0, 300 * MS, 0, AFTER_CLOSE, 0,
	  400 },
	{ "hash map closed before it fires", MAP_HASH, 3, 1, ALL, 1, 0, 300 * MS, 0, AFTER_CLOSE,
	  0, 400 },
	{ "start without set_callback", MAP_ARR, 3, 0, OP_INIT | OP_START, 1, 0, MS, 0,
	  AFTER_NONE, 0, 30 },
	{ "start with bad flags", MAP_ARR, 3, 0, ALL, 1, 4, MS, 0, AFTER_NONE, 0, 30 },
};

int main(void)
{
	uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
			       BPFRT_ENGINE_JIT
#else
			       BPFRT_ENGINE_INTERP
#endif
	};
	char err[256];

	if (geteuid() != 0)
		T_SKIP("not root: bpf_timer needs CAP_BPF");
	sides[0].bpf = oracle_kernel_bpf;
	for (int i = 1; i < NSIDES; i++) {
		sides[i].bpf = bpfrt_bpf;
		sides[i].pflags = BPFRT_F_ENGINE(engines[i - 1]);
	}
	for (int t = MAP_ARR; t <= MAP_HASH; t++) {
		char text[sizeof(prog_text) + 64], *at;
		const char *from = prog_text;
		size_t len = 0;

		/* TARGET: the map the timer's value is in */
		while ((at = strstr(from, "TARGET"))) {
			memcpy(text + len, from, (size_t)(at - from));
			len += (size_t)(at - from);
			text[len++] = (char)('0' + t);
			from = at + 6;
		}
		strcpy(text + len, from);
		if (bpfrt_asm(text, "timer.s", &insns[t], &ninsns[t], err, sizeof(err)))
			T_SKIP("assembler: %s", err);
	}
	for (int i = 0; i < NSIDES; i++) {
		sides[i].btf = load_btf(sides[i].bpf);
		if (sides[i].btf < 0) {
			if (!i)
				T_SKIP("the kernel refuses the test's BTF (%s)", strerror(errno));
			T_FAIL("bpfrt refuses the test's BTF (%s)", strerror(errno));
			return t_done();
		}
	}
	for (size_t c = 0; c < sizeof(tcases) / sizeof(tcases[0]); c++)
		run_case(&tcases[c]);
	printf("%d cases x %d bpfrt engines compared with the kernel (%d with callbacks "
	       "run)\n",
	       cases, NSIDES - 1, fired);
	return t_done();
}
