/* test_timer_stress.c - bpf_timer's timer thread (maps/timer.c) under concurrency, for
 * ThreadSanitizer: four threads arm, re-arm and cancel the timers of a hash map's values
 * through test runs of one program (interpreter, checked engine and JIT programs at
 * once) while user space deletes, re-inserts and updates the same elements; callbacks
 * count their calls and some re-arm themselves.  Then the map's fds are closed with
 * timers still armed: no callback may run after the next sweep, and the process ends
 * with timers armed far away (no hang at exit).  bpfrt only (no root needed).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf_blob.h"
#include "harness.h"

#define BTF_INFO_ENC(kind, kflag, vlen) (((kflag) << 31) | ((kind) << 24) | (vlen))
#define BTF_INT_ENC(enc, off, bits) (((enc) << 24) | ((off) << 16) | (bits))

#define NKEYS 32
#define NTHREADS 4
#define ITERS 1500
#define OP_INIT 1
#define OP_CB 2
#define OP_START 4
#define OP_CANCEL 8

/* struct val { u64 a (re-arm while b < a); struct bpf_timer t; u64 b (calls) } */
struct val {
	uint64_t a, t[2], b;
};

/* The packet: key, op, ns.  Every access to the map values is atomic (lock add; a read is
 * a fetch-add of 0), as user space's word-wise copies are: the callbacks run on the timer
 * thread while user space rewrites the values. */
static const char prog_text[] =
	"ldxw %r2, [%r1+0]\n"
	"ldxw %r3, [%r1+4]\n"
	"mov %r4, %r2\n"
	"add %r4, 16\n"
	"jgt %r4, %r3, fail\n"
	"ldxw %r7, [%r2+4]\n"
	"ldxdw %r9, [%r2+8]\n"
	"ldxw %r1, [%r2+0]\n"
	"stxw [%r10-4], %r1\n"
	"lddw %r1, map_fd 0\n"
	"mov %r2, %r10\n"
	"add %r2, -4\n"
	"call bpf_map_lookup_elem\n"
	"jeq %r0, 0, fail\n"
	"mov %r8, %r0\n"
	"jset %r7, 1, do_init\n"
	"ja after_init\n"
	"do_init:\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"lddw %r2, map_fd 0\n"
	"mov %r3, 1\n"
	"call bpf_timer_init\n"
	"after_init:\n"
	"jset %r7, 2, do_cb\n"
	"ja after_cb\n"
	"do_cb:\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"lddw %r2, func cb\n"
	"call bpf_timer_set_callback\n"
	"after_cb:\n"
	"jset %r7, 4, do_start\n"
	"ja after_start\n"
	"do_start:\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"mov %r2, %r9\n"
	"mov %r3, 0\n"
	"call bpf_timer_start\n"
	"after_start:\n"
	"jset %r7, 8, do_cancel\n"
	"ja fail\n"
	"do_cancel:\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"call bpf_timer_cancel\n"
	"fail:\n"
	"mov %r0, 2\n"
	"exit\n"
	"cb:\n"
	"mov %r8, %r3\n"
	"mov %r1, 1\n"
	"lock fetch add [%r8+24], %r1\n"
	"mov %r6, %r1\n"
	"stw [%r10-4], 0\n"
	"lddw %r1, map_fd 1\n"
	"mov %r2, %r10\n"
	"add %r2, -4\n"
	"call bpf_map_lookup_elem\n"
	"jeq %r0, 0, rearm\n"
	"mov %r1, 1\n"
	"lock add [%r0+0], %r1\n"
	"rearm:\n"
	"mov %r1, 0\n"
	"lock fetch add [%r8+0], %r1\n"
	"jge %r6, %r1, out\n"
	"mov %r1, %r8\n"
	"add %r1, 8\n"
	"mov %r2, 20000\n"
	"mov %r3, 0\n"
	"call bpf_timer_start\n"
	"out:\n"
	"mov %r0, 0\n"
	"exit\n";

static int load_btf(void)
{
	static const char strs[] = "\0int\0bpf_timer\0x\0val\0a\0t\0b\0u64\0main\0cb";
	enum { S_INT = 1, S_TIMER = 5, S_X = 15, S_VAL = 17, S_A = 21, S_T = 23, S_B = 25,
	       S_U64 = 27, S_MAIN = 31, S_CB = 36 };
	uint32_t types[] = {
		S_INT, BTF_INFO_ENC(BTF_KIND_INT, 0, 0), 4, BTF_INT_ENC(BTF_INT_SIGNED, 0, 32),
		S_TIMER, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 1), 16, S_X, 4, 0,
		S_VAL, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 3), 32, S_A, 4, 0, S_T, 2, 64, S_B, 4, 192,
		S_U64, BTF_INFO_ENC(BTF_KIND_INT, 0, 0), 8, BTF_INT_ENC(0, 0, 64),
		0, BTF_INFO_ENC(BTF_KIND_FUNC_PROTO, 0, 0), 1,
		S_MAIN, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 5,
		S_CB, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 5,
	};
	return btf_blob_load(bpfrt_bpf, types, sizeof(types), strs, sizeof(strs));
}

static int map_fd, cnt_fd, progs[3];
static atomic_int failures;
static struct bpf_insn *insns;
static size_t n;
static int btf;

static int elem_op(int cmd, uint32_t key, void *value, uint64_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map_fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)value;
	a.flags = flags;
	return bpfrt_bpf(cmd, &a, sizeof(a)) ? -errno : 0;
}

static int run(int prog, uint32_t key, uint32_t op, uint64_t ns)
{
	struct {
		uint32_t key, op;
		uint64_t ns;
	} pkt = { key, op, ns };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uintptr_t)&pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = 1;
	return bpfrt_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : (int)a.test.retval;
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;

	for (int i = 0; i < ITERS; i++) {
		uint32_t key = (uint32_t)rand_r(&seed) % NKEYS, r = (uint32_t)rand_r(&seed) % 10;
		int prog = progs[rand_r(&seed) % 3];
		struct val v = { .a = (uint64_t)(rand_r(&seed) % 3) };

		if (r < 5) {
			if (run(prog, key, OP_INIT | OP_CB | OP_START,
				(uint64_t)(rand_r(&seed) % 200000)) != 2)
				atomic_fetch_add(&failures, 1);
		} else if (r < 7) {
			if (run(prog, key, OP_CANCEL, 0) != 2)
				atomic_fetch_add(&failures, 1);
		} else if (r < 8) {
			elem_op(BPF_MAP_DELETE_ELEM, key, NULL, 0);
			elem_op(BPF_MAP_UPDATE_ELEM, key, &v, BPF_ANY);
		} else {
			elem_op(BPF_MAP_UPDATE_ELEM, key, &v, BPF_ANY);
		}
	}
	return NULL;
}

static uint64_t count(void)
{
	union bpf_attr a;
	uint32_t key = 0;
	uint64_t v = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)cnt_fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&v;
	T_EQ_INT(0, bpfrt_bpf(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)));
	return v;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A hash map of values with timers (map_fd) and the program on each engine (progs). */
static void setup(void)
{
	static const uint32_t engines[3] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
					     BPFRT_ENGINE_JIT
#else
					     BPFRT_ENGINE_INTERP
#endif
	};
	static struct bpf_insn prog[256];
	union bpf_attr a;

	T_ASSERT(n <= 256);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 4;
	a.value_size = sizeof(struct val);
	a.max_entries = NKEYS;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = 1;
	a.btf_value_type_id = 3;
	map_fd = bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	T_ASSERT(map_fd >= 0);
	for (uint32_t k = 0; k < NKEYS; k++) {
		struct val v = { .a = k % 3 };

		T_EQ_INT(0, elem_op(BPF_MAP_UPDATE_ELEM, k, &v, BPF_ANY));
	}
	for (int e = 0; e < 3; e++) {
		struct bpf_func_info fi[2] = { { 0, 6 }, { 0, 7 } };

		/* map_fd 0 is the timers' map, 1 the counter */
		memcpy(prog, insns, n * sizeof(*prog));
		for (size_t i = 0; i < n; i++) {
			if (prog[i].code != (BPF_LD | BPF_IMM | BPF_DW))
				continue;
			if (prog[i].src_reg == BPF_PSEUDO_MAP_FD)
				prog[i].imm = prog[i].imm ? cnt_fd : map_fd;
			if (prog[i].src_reg == BPF_PSEUDO_FUNC)
				fi[1].insn_off = (uint32_t)((int64_t)i + 1 + prog[i].imm);
		}
		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_XDP;
		a.insns = (uintptr_t)prog;
		a.insn_cnt = (uint32_t)n;
		a.license = (uintptr_t)"GPL";
		a.prog_flags = BPFRT_F_ENGINE(engines[e]);
		a.prog_btf_fd = (uint32_t)btf;
		a.func_info = (uintptr_t)fi;
		a.func_info_cnt = 2;
		a.func_info_rec_size = sizeof(fi[0]);
		progs[e] = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
		if (progs[e] < 0)
			T_FAIL("load on engine %u: %s", engines[e], strerror(errno));
	}
}

int main(void)
{
	char err[256];
	pthread_t th[NTHREADS];
	union bpf_attr a;
	uint64_t before;

	if (bpfrt_asm(prog_text, "timer_stress.s", &insns, &n, err, sizeof(err)))
		T_SKIP("assembler: %s", err);
	btf = load_btf();
	T_ASSERT(btf >= 0);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	cnt_fd = bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	T_ASSERT(cnt_fd >= 0);

	/* 1. the stress: arm, re-arm, cancel, delete, update from four threads */
	setup();
	if (t_failed)
		return t_done();
	for (int i = 0; i < NTHREADS; i++)
		T_ASSERT(!pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i));
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	T_EQ_INT(0, atomic_load(&failures));
	sleep_ms(20); /* the last timers (< 200 us, re-armed twice 20 us later) fire */
	printf("%llu callbacks ran\n", (unsigned long long)count());
	T_ASSERT(count() > 0);
	for (int e = 0; e < 3; e++)
		close(progs[e]);
	close(map_fd);

	/* 2. every timer of a fresh map armed 50 ms away, then the map's and the programs'
	 * fds closed: none fires (the timer thread sweeps the object cache first) */
	setup();
	for (uint32_t k = 0; k < NKEYS; k++)
		T_EQ_INT(2, run(progs[k % 3], k, OP_INIT | OP_CB | OP_START, 50000000));
	for (int e = 0; e < 3; e++)
		close(progs[e]);
	close(map_fd);
	before = count();
	sleep_ms(100);
	T_EQ_INT(before, count());

	/* 3. a third map's timers armed an hour away: the process exits all the same */
	setup();
	for (uint32_t k = 0; k < NKEYS; k++)
		T_EQ_INT(2, run(progs[k % 3], k, OP_INIT | OP_CB | OP_START, 3600000000000ull));
	free(insns);
	return t_done();
}
