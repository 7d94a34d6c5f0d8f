/* test_spin_lock_oracle.c - bpf_spin_lock / bpf_spin_unlock (verifier/helper_args.c,
 * maps/spin_lock.c) against the kernel: one script on the kernel's bpf() and on
 * bpfrt_bpf(), a line per step, transcripts equal line by line:
 *   - programs taking and releasing the lock of a map value (array, hash, lock at offset
 *     0 or 4, through a copy of the pointer, in a static subprogram, through a direct
 *     value address), and the kernel's refusals: exit or LD_ABS inside the region, helper
 *     calls inside it, two locks, unlock without lock or of another value, wrong or
 *     variable offset, maps without BTF or without a lock, other pointer types, direct
 *     loads and stores of the lock word, socket filters and tracing programs;
 *   - runs: BPF_PROG_TEST_RUN of a counter incremented under the lock (repeat 1000),
 *     the same from two threads at once on bpfrt (the count must be exact: the lock
 *     excludes), and BPF_F_LOCK lookups and updates from bpf() around them.
 * Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf_blob.h"
#include "harness.h"
#include "transcript.h"
#include "maps/lock_oracle.h"
#include "verifier/cases/case.h"

static struct transcript kt, bt;

/* BTF: 1 int, 2 struct bpf_spin_lock, 3 struct val {cnt; lock; x} (lock at 4),
 * 4 struct val0 {lock; cnt} (lock at 0), 5 struct nolock {a; b} */
static int load_btf(sys_fn sys)
{
	static const char strs[] = "\0int\0bpf_spin_lock\0val\0cnt\0lock\0x\0val0\0nolock\0a\0b";
	enum { S_INT = 1, S_BSL = 5, S_VAL = 19, S_CNT = 23, S_LOCK = 27, S_X = 32, S_VAL0 = 34,
	       S_NOLOCK = 39, S_A = 46, S_B = 48 };
	uint32_t w[] = {
		S_INT, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
		S_BSL, BTF_KIND_STRUCT << 24 | 1, 4, S_X, 1, 0,
		S_VAL, BTF_KIND_STRUCT << 24 | 3, 12, S_CNT, 1, 0, S_LOCK, 2, 32, S_X, 1, 64,
		S_VAL0, BTF_KIND_STRUCT << 24 | 2, 8, S_LOCK, 2, 0, S_CNT, 1, 32,
		S_NOLOCK, BTF_KIND_STRUCT << 24 | 2, 8, S_A, 1, 0, S_B, 1, 32,
	};
	return btf_blob_load(sys, w, sizeof(w), strs, sizeof(strs));
}

/* maps of the script: 0 array val (lock at 4), 1 hash val, 2 array val0 (lock at 0),
 * 3 array without BTF, 4 array with BTF and no lock */
enum { M_ARR, M_HASH, M_ARR0, M_NOBTF, M_NOLOCK, NMAPS };
static int maps[NMAPS];

struct lcase {
	const char *name;
	uint32_t type;  /* 0: sched_cls */
	const struct bpf_insn *insns;
	size_t len;
	int run;        /* test-run it (repeat) and print counter of key 0 */
};

/* r6 = ctx; r7 = lookup(map m, key k) or exit 0 */
#define LOOKUP_R7(m, k) MOV64_REG(6, 1), ST(BPF_W, 10, -4, k), MOV64_REG(2, 10), \
	ALU64_IMM(BPF_ADD, 2, -4), LD_MAP(1, m), CALL(BPF_FUNC_map_lookup_elem),    \
	JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(7, 0)
#define LOCK(r, off) MOV64_REG(1, r), ALU64_IMM(BPF_ADD, 1, off), CALL(BPF_FUNC_spin_lock)
#define UNLOCK(r, off) MOV64_REG(1, r), ALU64_IMM(BPF_ADD, 1, off), CALL(BPF_FUNC_spin_unlock)
#define INC(r, off) LDX(BPF_W, 1, r, off), ALU64_IMM(BPF_ADD, 1, 1), STX(BPF_W, r, 1, off)
#define RET0 MOV64_IMM(0, 0), EXIT()

static const struct lcase cases[] = {
	{ "array_ok", 0, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), INC(7, 0), UNLOCK(7, 4), RET0), 1 },
	{ "hash_ok", 0, PROG(LOOKUP_R7(M_HASH, 0), LOCK(7, 4), INC(7, 0), UNLOCK(7, 4), RET0) },
	{ "lock_at_0_ok", 0, PROG(LOOKUP_R7(M_ARR0, 0), LOCK(7, 0), INC(7, 4), UNLOCK(7, 0),
				  RET0) },
	{ "xdp_ok", BPF_PROG_TYPE_XDP, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), UNLOCK(7, 4), RET0) },
	{ "cgroup_skb_ok", BPF_PROG_TYPE_CGROUP_SKB,
	  PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), UNLOCK(7, 4), MOV64_IMM(0, 1), EXIT()) },
	{ "no_unlock", 0, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), RET0) },
	{ "no_unlock_on_one_path", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), LDX(BPF_W, 8, 7, 0), JIMM(BPF_JEQ, 8, 0, 3),
	       UNLOCK(7, 4), RET0) },
	{ "unlock_without_lock", 0, PROG(LOOKUP_R7(M_ARR, 0), UNLOCK(7, 4), RET0) },
	{ "two_locks", 0, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), LOCK(7, 4), UNLOCK(7, 4), RET0) },
	{ "helper_inside", 0, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), CALL(BPF_FUNC_ktime_get_ns),
				   UNLOCK(7, 4), RET0) },
	{ "tail_call_inside", 0, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), MOV64_REG(1, 6),
				      LD_MAP(2, M_ARR), MOV64_IMM(3, 0),
				      CALL(BPF_FUNC_tail_call), UNLOCK(7, 4), RET0) },
	{ "ld_abs_inside", 0, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), LD_ABS(BPF_B, 0),
				   UNLOCK(7, 4), RET0) },
	{ "wrong_offset", 0, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 0), UNLOCK(7, 0), RET0) },
	{ "wrong_offset_8", 0, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 8), UNLOCK(7, 8), RET0) },
	{ "variable_offset", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_W, 2, 7, 0), ALU64_IMM(BPF_AND, 2, 4),
	       MOV64_REG(1, 7), ALU64_REG(BPF_ADD, 1, 2), CALL(BPF_FUNC_spin_lock), RET0) },
	{ "map_without_btf", 0, PROG(LOOKUP_R7(M_NOBTF, 0), LOCK(7, 4), UNLOCK(7, 4), RET0) },
	{ "map_without_lock", 0, PROG(LOOKUP_R7(M_NOLOCK, 0), LOCK(7, 4), UNLOCK(7, 4), RET0) },
	{ "stack_pointer", 0, PROG(ST(BPF_DW, 10, -8, 0), MOV64_REG(1, 10),
				   ALU64_IMM(BPF_ADD, 1, -8), CALL(BPF_FUNC_spin_lock), RET0) },
	{ "ctx_pointer", 0, PROG(CALL(BPF_FUNC_spin_lock), RET0) },
	{ "scalar", 0, PROG(MOV64_IMM(1, 0), CALL(BPF_FUNC_spin_lock), RET0) },
	{ "value_or_null", 0,
	  PROG(ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
	       LD_MAP(1, M_ARR), CALL(BPF_FUNC_map_lookup_elem), MOV64_REG(1, 0),
	       ALU64_IMM(BPF_ADD, 1, 4), CALL(BPF_FUNC_spin_lock), RET0) },
	{ "load_lock_word", 0, PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_W, 0, 7, 4), RET0) },
	{ "store_lock_word", 0, PROG(LOOKUP_R7(M_ARR, 0), ST(BPF_W, 7, 4, 0), RET0) },
	{ "load_straddling", 0, PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_DW, 0, 7, 0), RET0) },
	{ "load_byte_of_lock", 0, PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_B, 0, 7, 6), RET0) },
	{ "load_after_lock", 0, PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_W, 0, 7, 8), RET0) },
	{ "atomic_on_lock_word", 0, PROG(LOOKUP_R7(M_ARR, 0), MOV64_IMM(1, 1),
					 ATOMIC(BPF_W, 7, 1, 4, BPF_ADD), RET0) },
	{ "unlock_other_value", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), MOV64_REG(8, 7), ST(BPF_W, 10, -8, 1), MOV64_REG(2, 10),
	       ALU64_IMM(BPF_ADD, 2, -8), LD_MAP(1, M_ARR), CALL(BPF_FUNC_map_lookup_elem),
	       JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(9, 0), LOCK(8, 4),
	       UNLOCK(9, 4), RET0) },
	{ "unlock_other_map", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), MOV64_REG(8, 7), ST(BPF_W, 10, -8, 0), MOV64_REG(2, 10),
	       ALU64_IMM(BPF_ADD, 2, -8), LD_MAP(1, M_HASH), CALL(BPF_FUNC_map_lookup_elem),
	       JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(9, 0), LOCK(8, 4),
	       UNLOCK(9, 4), RET0) },
	{ "unlock_through_copy", 0, PROG(LOOKUP_R7(M_ARR, 0), MOV64_REG(8, 7), LOCK(7, 4),
					 UNLOCK(8, 4), RET0) },
	{ "copy_before_null_check", 0,
	  PROG(ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
	       LD_MAP(1, M_ARR), CALL(BPF_FUNC_map_lookup_elem), MOV64_REG(7, 0),
	       JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(), LOCK(0, 4), UNLOCK(7, 4), RET0) },
	{ "moved_pointer", 0, PROG(LOOKUP_R7(M_ARR, 0), ALU64_IMM(BPF_ADD, 7, 4), LOCK(7, 0),
				   UNLOCK(7, 0), RET0) },
	{ "direct_value", 0, PROG(LD_MAP_VALUE(1, M_ARR, 4), CALL(BPF_FUNC_spin_lock),
				  LD_MAP_VALUE(1, M_ARR, 4), CALL(BPF_FUNC_spin_unlock), RET0) },
	{ "direct_value_and_lookup", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LD_MAP_VALUE(1, M_ARR, 4), CALL(BPF_FUNC_spin_lock),
	       UNLOCK(7, 4), RET0) },
	{ "static_call_inside", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), MOV64_REG(1, 7), CALL_SUB(5), UNLOCK(7, 4),
	       RET0, LDX(BPF_W, 0, 1, 0), EXIT()) },
	{ "unlock_in_static_callee", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), MOV64_REG(1, 7), CALL_SUB(2), RET0,
	       ALU64_IMM(BPF_ADD, 1, 4), CALL(BPF_FUNC_spin_unlock), RET0) },
	{ "helper_in_static_callee", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), CALL_SUB(5), UNLOCK(7, 4), RET0,
	       CALL(BPF_FUNC_ktime_get_ns), EXIT()) },
	{ "socket_filter", BPF_PROG_TYPE_SOCKET_FILTER,
	  PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), UNLOCK(7, 4), RET0) },
	{ "kprobe", BPF_PROG_TYPE_KPROBE, PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), UNLOCK(7, 4), RET0) },
	{ "socket_filter_no_lock_map", BPF_PROG_TYPE_SOCKET_FILTER,
	  PROG(LOOKUP_R7(M_NOLOCK, 0), LOCK(7, 4), UNLOCK(7, 4), RET0) },
	{ "kprobe_no_lock_map", BPF_PROG_TYPE_KPROBE,
	  PROG(LOOKUP_R7(M_NOLOCK, 0), LOCK(7, 4), UNLOCK(7, 4), RET0) },
	{ "branch_lock_states", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_W, 8, 7, 0), JIMM(BPF_JEQ, 8, 0, 4), LOCK(7, 4),
	       JA(3), LOCK(7, 4), INC(7, 0), UNLOCK(7, 4), RET0) },
	{ "pkt_write_inside", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), LDX(BPF_W, 2, 6, 76), LDX(BPF_W, 3, 6, 80),
	       MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 1), JREG(BPF_JGT, 4, 3, 1),
	       ST(BPF_B, 2, 0, 1), UNLOCK(7, 4), RET0) },
	{ "update_value_inside", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOCK(7, 4), ST(BPF_W, 7, 8, 7), ST(BPF_W, 7, 0, 9),
	       UNLOCK(7, 4), RET0), 1 },
};

static void script(sys_fn sys, struct transcript *t)
{
	static char log[1 << 16];
	int btf = load_btf(sys);
	uint32_t key = 0, v[3];

	say(t, "btf %s\n", btf >= 0 ? "ok" : strerror(errno));
	maps[M_ARR] = lock_map(sys, "arr", BPF_MAP_TYPE_ARRAY, 12, 4, 0, btf, 1, 3);
	maps[M_HASH] = lock_map(sys, "hash", BPF_MAP_TYPE_HASH, 12, 4, 0, btf, 1, 3);
	maps[M_ARR0] = lock_map(sys, "arr0", BPF_MAP_TYPE_ARRAY, 8, 4, 0, btf, 1, 4);
	maps[M_NOBTF] = lock_map(sys, "nobtf", BPF_MAP_TYPE_ARRAY, 12, 4, 0, -1, 0, 0);
	maps[M_NOLOCK] = lock_map(sys, "nolock", BPF_MAP_TYPE_ARRAY, 8, 4, 0, btf, 1, 5);
	for (int i = 0; i < NMAPS; i++)
		say(t, "map %d: %s\n", i, maps[i] >= 0 ? "ok" : strerror(-maps[i]));
	/* the hash map gets key 0 with a value whose lock word is set: the kernel ignores it */
	v[0] = 5, v[1] = 0xffffffff, v[2] = 6;
	say(t, "hash update: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, maps[M_HASH], &key, v, 0));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct lcase *c = &cases[i];
		static struct bpf_insn insns[128];
		union bpf_attr a;
		int fd;

		memcpy(insns, c->insns, c->len * sizeof(*insns));
		for (size_t k = 0; k < c->len; k++)
			if (insns[k].code == (BPF_LD | BPF_IMM | BPF_DW) &&
			    (insns[k].src_reg == BPF_PSEUDO_MAP_FD ||
			     insns[k].src_reg == BPF_PSEUDO_MAP_VALUE))
				insns[k].imm = maps[insns[k].imm];
		prog_attr(&a, c->type ? c->type : BPF_PROG_TYPE_SCHED_CLS, 0, insns, c->len);
		fd = prog_load_log(sys, &a, log, sizeof(log), 1);
		t->steps++;
		if (fd < 0) {
			say_load_error(t, c->name, fd, log);
			if (getenv("BPFRT_SHOW_LOG"))
				fprintf(stderr, "---- %s\n%s\n", c->name, log);
			continue;
		}
		if (c->run) {
			int ret = lock_test_run(sys, fd, 1000);

			memset(v, 0, sizeof(v));
			say(t, "%s: ok, run %d, lookup %d", c->name, ret,
			    elem(sys, BPF_MAP_LOOKUP_ELEM, maps[M_ARR], &key, v, 0));
			say(t, " value %u %u %u\n", v[0], v[1], v[2]);
		} else {
			say(t, "%s: ok\n", c->name);
		}
		close(fd);
	}
	/* BPF_F_LOCK from bpf() on values the programs lock */
	v[0] = 100, v[1] = 0x12345678, v[2] = 200;
	say(t, "update F_LOCK: %d\n",
	    elem(sys, BPF_MAP_UPDATE_ELEM, maps[M_ARR], &key, v, BPF_F_LOCK));
	memset(v, 0xaa, sizeof(v));
	say(t, "lookup F_LOCK: %d", elem(sys, BPF_MAP_LOOKUP_ELEM, maps[M_ARR], &key, v,
					  BPF_F_LOCK));
	say(t, " %u %u %u\n", v[0], v[1], v[2]);
	say(t, "update F_LOCK on a map without lock: %d\n",
	    elem(sys, BPF_MAP_UPDATE_ELEM, maps[M_NOLOCK], &key, v, BPF_F_LOCK));
	say(t, "lookup F_LOCK on a map without lock: %d\n",
	    elem(sys, BPF_MAP_LOOKUP_ELEM, maps[M_NOLOCK], &key, v, BPF_F_LOCK));
	say(t, "hash lookup F_LOCK: %d", elem(sys, BPF_MAP_LOOKUP_ELEM, maps[M_HASH], &key, v,
					      BPF_F_LOCK));
	say(t, " %u %u %u\n", v[0], v[1], v[2]);
	/* two threads incrementing under the lock: exact only if the lock excludes */
	{
		int fd;
		union bpf_attr a;
		static struct bpf_insn insns[] = { LOOKUP_R7(M_ARR, 0), LOCK(7, 4), INC(7, 0),
						   INC(7, 8), UNLOCK(7, 4), RET0 };
		static struct bpf_insn fixed[sizeof(insns) / sizeof(insns[0])];

		memcpy(fixed, insns, sizeof(insns));
		for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++)
			if (fixed[k].code == (BPF_LD | BPF_IMM | BPF_DW) &&
			    fixed[k].src_reg == BPF_PSEUDO_MAP_FD)
				fixed[k].imm = maps[fixed[k].imm];
		prog_attr(&a, BPF_PROG_TYPE_SCHED_CLS, 0, fixed, sizeof(fixed) / sizeof(fixed[0]));
		fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
		lock_two_threads(sys, t, fd, maps[M_ARR], key);
		close(fd);
	}
	for (int i = 0; i < NMAPS; i++)
		if (maps[i] >= 0)
			close(maps[i]);
	if (btf >= 0)
		close(btf);
}

int main(void)
{
	static const script_fn parts[] = { script, NULL };

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	if (transcript_run("spinlock", parts, &kt, &bt))
		return 1;
	compare_transcripts(&kt, &bt);
	if (getenv("BPFRT_SHOW"))
		fputs(kt.text, stdout);
	printf("spin lock oracle: %u programs each side, %u lines\n", kt.steps, kt.says);
	return t_done();
}
