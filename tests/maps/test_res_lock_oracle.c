/* test_res_lock_oracle.c - struct bpf_res_spin_lock (maps/res_lock.c; the verifier's
 * helper_args.c process_spin_lock() and irq.c) against the kernel: one script on the
 * kernel's bpf() and on bpfrt_bpf(), a line per step, transcripts equal line by line:
 *   - MAP_CREATE of values holding the lock (array, hash, global data's DATASEC; refused
 *     for per-CPU and LRU maps, with a bpf_spin_lock too, twice, read-only for programs);
 *     the syscall side never sees the word, BPF_F_LOCK refuses it;
 *   - programs with bpf_res_spin_lock[_irqsave] / unlock[_irqrestore] and
 *     bpf_local_irq_save/restore: accepted ones with their processed-insn count, refused
 *     ones with errno and error line (result not checked, AA, out-of-order unlocks, the
 *     irq flag's slot rules, calls and exits while held, offsets, maps, mixing with
 *     bpf_spin_lock, kfuncs allowed while held);
 *   - runs: a counter under the lock (repeat 1000), two elements locked in order, an AA
 *     deadlock at run time (the same element through two lookups: -EDEADLK), two threads
 *     x 20000 increments under the lock (exact on both).
 * Root and the kernel's BTF only; otherwise skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "harness.h"
#include "transcript.h"
#include "maps/lock_oracle.h"
#include "verifier/cases/case.h"

static struct transcript kt, bt;

/* the kfuncs a program calls: KF(K_x) is patched to the kernel BTF id of names[K_x] */
enum { K_LOCK, K_UNLOCK, K_LOCK_IRQ, K_UNLOCK_IRQ, K_IRQ_SAVE, K_IRQ_RESTORE, K_ITER_NEW,
       K_ITER_NEXT, K_ITER_DESTROY, K_PREEMPT_OFF, K_PREEMPT_ON, NK };
static const char *const knames[NK] = {
	"bpf_res_spin_lock",   "bpf_res_spin_unlock",  "bpf_res_spin_lock_irqsave",
	"bpf_res_spin_unlock_irqrestore", "bpf_local_irq_save", "bpf_local_irq_restore",
	"bpf_iter_num_new",    "bpf_iter_num_next",    "bpf_iter_num_destroy",
	"bpf_preempt_disable", "bpf_preempt_enable",
};
static int kids[NK];
#define KF(k) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, k)

/* BTF: 1 int, 2 struct bpf_res_spin_lock, 3 struct val {cnt; lock; x} (lock at 4),
 * 4 struct bpf_spin_lock, 5 struct two {two bpf_res_spin_lock}, 6 struct slval {cnt;
 * bpf_spin_lock; x}, 7 VAR glock, 8 DATASEC .data.B {glock}; then, for the BTF_LOAD
 * probes, 9 one of: struct both {bpf_spin_lock; bpf_res_spin_lock}, the same with the
 * second one nested (struct val), two bpf_spin_lock, bpf_spin_lock beside two
 * bpf_res_spin_lock (the kernel parses the fields of a struct holding a bpf_spin_lock
 * when it loads the BTF) */
enum { B_MAIN, B_BOTH, B_NESTED_BOTH, B_TWO_SPIN, B_SPIN_TWO_RES, NBTF };
struct strtab {
	char s[256];
	uint32_t len;
};

static uint32_t str(struct strtab *t, const char *s)
{
	uint32_t off = t->len;

	memcpy(t->s + t->len, s, strlen(s) + 1);
	t->len += (uint32_t)strlen(s) + 1;
	return off;
}

static int load_btf(sys_fn sys, int variant)
{
	struct strtab st = { .len = 1 };
	uint32_t s_int = str(&st, "int"), s_res = str(&st, "bpf_res_spin_lock"),
		 s_val = str(&st, "val"), s_cnt = str(&st, "cnt"), s_lock = str(&st, "lock"),
		 s_x = str(&st, "x"), s_sl = str(&st, "bpf_spin_lock"), s_both = str(&st, "both"),
		 s_a = str(&st, "a"), s_b = str(&st, "b"), s_c = str(&st, "c"),
		 s_two = str(&st, "two"), s_slval = str(&st, "slval"),
		 s_glock = str(&st, "glock"), s_sec = str(&st, ".data.B");
	const uint32_t main_types[] = {
		s_int, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
		s_res, BTF_KIND_STRUCT << 24 | 1, 4, s_x, 1, 0,
		s_val, BTF_KIND_STRUCT << 24 | 3, 12, s_cnt, 1, 0, s_lock, 2, 32, s_x, 1, 64,
		s_sl, BTF_KIND_STRUCT << 24 | 1, 4, s_x, 1, 0,
		s_two, BTF_KIND_STRUCT << 24 | 2, 8, s_a, 2, 0, s_b, 2, 32,
		s_slval, BTF_KIND_STRUCT << 24 | 3, 12, s_cnt, 1, 0, s_lock, 4, 32, s_x, 1, 64,
		s_glock, BTF_KIND_VAR << 24, 2, 1,
		s_sec, BTF_KIND_DATASEC << 24 | 1, 4, 7, 0, 4,
	};
	const uint32_t probe[NBTF][12] = {
		[B_BOTH] = { s_both, BTF_KIND_STRUCT << 24 | 2, 8, s_a, 4, 0, s_b, 2, 32 },
		[B_NESTED_BOTH] = { s_both, BTF_KIND_STRUCT << 24 | 2, 16, s_a, 4, 0, s_b, 3, 32 },
		[B_TWO_SPIN] = { s_both, BTF_KIND_STRUCT << 24 | 2, 8, s_a, 4, 0, s_b, 4, 32 },
		[B_SPIN_TWO_RES] = { s_both, BTF_KIND_STRUCT << 24 | 3, 12, s_a, 4, 0, s_b, 2, 32,
				     s_c, 2, 64 },
	};
	const size_t probe_words[NBTF] = { 0, 9, 9, 9, 12 };
	static char raw[1024], log[4096];
	uint32_t tlen = (uint32_t)(sizeof(main_types) + probe_words[variant] * 4);
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h), .type_len = tlen,
				.str_off = tlen, .str_len = st.len };
	union bpf_attr a;
	int fd;

	memcpy(raw, &h, sizeof(h));
	memcpy(raw + sizeof(h), main_types, sizeof(main_types));
	memcpy(raw + sizeof(h) + sizeof(main_types), probe[variant], probe_words[variant] * 4);
	memcpy(raw + sizeof(h) + tlen, st.s, st.len);
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)raw;
	a.btf_size = (uint32_t)(sizeof(h) + tlen + st.len);
	a.btf_log_buf = (uint64_t)(uintptr_t)log;
	a.btf_log_size = sizeof(log);
	a.btf_log_level = 1;
	log[0] = 0;
	fd = sys(BPF_BTF_LOAD, &a, sizeof(a));
	if (fd < 0 && getenv("BPFRT_SHOW_LOG"))
		fprintf(stderr, "BTF_LOAD: %s\n%s\n", strerror(errno), log);
	return fd;
}

/* maps of the script: array and hash of struct val (lock at 4), an array of struct slval
 * (a bpf_spin_lock at 4), global data (.data.B: the lock at 0), an array without BTF */
enum { M_ARR, M_HASH, M_SL, M_DATA, M_NOBTF, M_TWO, NMAPS };
static int maps[NMAPS];

struct lcase {
	const char *name;
	uint32_t type;  /* 0: sched_cls */
	const struct bpf_insn *insns;
	size_t len;
	int run;        /* test-run it (repeat) and print the counter of key 0 */
};

/* r6 = ctx; r7 = lookup(map m, key k) or exit 0 */
#define LOOKUP_R7(m, k) MOV64_REG(6, 1), LOOKUP(m, k, 7)
/* rx = lookup(map m, key k) or exit 0 */
#define LOOKUP(m, k, rx) ST(BPF_W, 10, -4, k), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), \
	LD_MAP(1, m), CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), \
	EXIT(), MOV64_REG(rx, 0)
#define ARG1(r, off) MOV64_REG(1, r), ALU64_IMM(BPF_ADD, 1, off)
#define FLAG2(fo) MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -(fo))
#define RLOCK(r, off) ARG1(r, off), KF(K_LOCK)
#define RUNLOCK(r, off) ARG1(r, off), KF(K_UNLOCK)
#define RLOCK_IRQ(r, off, fo) ARG1(r, off), FLAG2(fo), KF(K_LOCK_IRQ)
#define RUNLOCK_IRQ(r, off, fo) ARG1(r, off), FLAG2(fo), KF(K_UNLOCK_IRQ)
#define IRQ_SAVE(fo) MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -(fo)), KF(K_IRQ_SAVE)
#define IRQ_RESTORE(fo) MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -(fo)), KF(K_IRQ_RESTORE)
#define SLOCK(r, off) ARG1(r, off), CALL(BPF_FUNC_spin_lock)
#define SUNLOCK(r, off) ARG1(r, off), CALL(BPF_FUNC_spin_unlock)
/* after a lock call: on failure (r0 != 0) return 0 */
#define TAKEN_OR_RET0 JIMM(BPF_JEQ, 0, 0, 2), MOV64_IMM(0, 0), EXIT()
#define INC(r, off) LDX(BPF_W, 1, r, off), ALU64_IMM(BPF_ADD, 1, 1), STX(BPF_W, r, 1, off)
#define RET0 MOV64_IMM(0, 0), EXIT()

static const struct lcase cases[] = {
	{ "lock_unlock", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0, INC(7, 0),
				 RUNLOCK(7, 4), RET0), 1 },
	{ "hash_lock_unlock", 0, PROG(LOOKUP_R7(M_HASH, 0), RLOCK(7, 4), TAKEN_OR_RET0,
				      INC(7, 8), RUNLOCK(7, 4), RET0), 1 },
	{ "xdp", BPF_PROG_TYPE_XDP, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0,
					  RUNLOCK(7, 4), MOV64_IMM(0, 2), EXIT()) },
	{ "result_unchecked", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), RUNLOCK(7, 4), RET0) },
	{ "failure_range", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), JIMM(BPF_JEQ, 0, 0, 4), JIMM(BPF_JSGE, 0, 0, 8),
	       JIMM(BPF_JSLT, 0, -4095, 7), RET0, RUNLOCK(7, 4), RET0, LDX(BPF_W, 0, 0, 0),
	       EXIT()) },
	{ "failure_holds_nothing", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), JIMM(BPF_JEQ, 0, 0, 5), RUNLOCK(7, 4), RET0,
	       RUNLOCK(7, 4), RET0) },
	{ "unlock_without_lock", 0, PROG(LOOKUP_R7(M_ARR, 0), RUNLOCK(7, 4), RET0) },
	{ "AA_same_pointer", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0,
				     RLOCK(7, 4), RUNLOCK(7, 4), RUNLOCK(7, 4), RET0) },
	{ "two_elements", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOOKUP(M_ARR, 1, 8), RLOCK(7, 4), TAKEN_OR_RET0,
	       RLOCK(8, 4), JIMM(BPF_JEQ, 0, 0, 5), RUNLOCK(7, 4), RET0, INC(7, 0), INC(8, 0),
	       RUNLOCK(8, 4), RUNLOCK(7, 4), RET0), 1 },
	{ "two_elements_out_of_order", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOOKUP(M_ARR, 1, 8), RLOCK(7, 4), TAKEN_OR_RET0,
	       RLOCK(8, 4), JIMM(BPF_JEQ, 0, 0, 5), RUNLOCK(7, 4), RET0, RUNLOCK(7, 4),
	       RUNLOCK(8, 4), RET0) },
	/* the same element through two lookups: the verifier cannot tell, the lock can */
	{ "AA_at_run_time", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOOKUP(M_ARR, 0, 8), RLOCK(7, 4), TAKEN_OR_RET0,
	       RLOCK(8, 4), MOV64_REG(9, 0), JIMM(BPF_JEQ, 9, 0, 5), RUNLOCK(7, 4),
	       MOV64_REG(0, 9), EXIT(), RUNLOCK(8, 4), RUNLOCK(7, 4), RET0), 1 },
	{ "irqsave", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK_IRQ(7, 4, 8), TAKEN_OR_RET0, INC(7, 0),
			     RUNLOCK_IRQ(7, 4, 8), RET0), 1 },
	{ "irqsave_plain_unlock", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK_IRQ(7, 4, 8), TAKEN_OR_RET0,
					  RUNLOCK(7, 4), RET0) },
	{ "plain_lock_irqrestore", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0,
					   RUNLOCK_IRQ(7, 4, 8), RET0) },
	{ "irq_flag_in_map_value", 0, PROG(LOOKUP_R7(M_ARR, 0), ARG1(7, 4), MOV64_REG(2, 7),
					   KF(K_LOCK_IRQ), TAKEN_OR_RET0, RET0) },
	{ "irq_flag_unaligned", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK_IRQ(7, 4, 12),
					TAKEN_OR_RET0, RUNLOCK_IRQ(7, 4, 12), RET0) },
	{ "irq_flag_wrong_slot", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK_IRQ(7, 4, 8), TAKEN_OR_RET0,
					 RUNLOCK_IRQ(7, 4, 16), RET0) },
	{ "irqsave_twice_one_slot", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOOKUP(M_ARR, 1, 8), RLOCK_IRQ(7, 4, 8), TAKEN_OR_RET0,
	       RLOCK_IRQ(8, 4, 8), RET0) },
	{ "irqsave_nested", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOOKUP(M_ARR, 1, 8), RLOCK_IRQ(7, 4, 8), TAKEN_OR_RET0,
	       RLOCK_IRQ(8, 4, 16), JIMM(BPF_JEQ, 0, 0, 7), RUNLOCK_IRQ(7, 4, 8), RET0,
	       RUNLOCK_IRQ(8, 4, 16), RUNLOCK_IRQ(7, 4, 8), RET0), 1 },
	{ "irq_save_exit", 0, PROG(IRQ_SAVE(8), RET0) },
	{ "irq_save_restore", 0, PROG(IRQ_SAVE(8), IRQ_RESTORE(8), RET0), 1 },
	{ "irq_restore_out_of_order", 0,
	  PROG(IRQ_SAVE(8), IRQ_SAVE(16), IRQ_RESTORE(8), IRQ_RESTORE(16), RET0) },
	{ "irq_save_twice", 0, PROG(IRQ_SAVE(8), IRQ_SAVE(8), IRQ_RESTORE(8), RET0) },
	{ "irq_restore_uninit", 0, PROG(IRQ_RESTORE(8), RET0) },
	{ "irq_flag_overwritten", 0, PROG(IRQ_SAVE(8), ST(BPF_DW, 10, -8, 0), IRQ_RESTORE(8),
					  RET0) },
	{ "irq_flag_read", 0, PROG(IRQ_SAVE(8), LDX(BPF_DW, 0, 10, -8), IRQ_RESTORE(8), RET0) },
	{ "irq_native_restored_by_lock", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), IRQ_SAVE(8), RLOCK_IRQ(7, 4, 16), JIMM(BPF_JEQ, 0, 0, 5),
	       IRQ_RESTORE(8), RET0, RUNLOCK_IRQ(7, 4, 8), IRQ_RESTORE(16), RET0) },
	{ "irq_lock_flag_restored_natively", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), RLOCK_IRQ(7, 4, 8), TAKEN_OR_RET0, IRQ_RESTORE(8),
	       RUNLOCK(7, 4), RET0) },
	{ "irq_helper_in_region", 0, PROG(IRQ_SAVE(8), CALL(BPF_FUNC_ktime_get_ns),
					  IRQ_RESTORE(8), RET0), 1 },
	{ "helper_inside", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0,
				   CALL(BPF_FUNC_ktime_get_ns), RUNLOCK(7, 4), RET0) },
	{ "kfunc_inside", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0,
				  KF(K_PREEMPT_OFF), KF(K_PREEMPT_ON), RUNLOCK(7, 4), RET0) },
	{ "iter_num_inside", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0, MOV64_REG(1, 10),
	       ALU64_IMM(BPF_ADD, 1, -16), MOV64_IMM(2, 0), MOV64_IMM(3, 3), KF(K_ITER_NEW),
	       MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -16), KF(K_ITER_NEXT),
	       JIMM(BPF_JEQ, 0, 0, 4), LDX(BPF_W, 1, 7, 0), ALU64_IMM(BPF_ADD, 1, 1),
	       STX(BPF_W, 7, 1, 0), JA(-8), MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -16),
	       KF(K_ITER_DESTROY), RUNLOCK(7, 4), RET0), 1 },
	{ "exit_inside", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0, RET0) },
	{ "ld_abs_inside", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0,
				   LD_ABS(BPF_B, 0), RUNLOCK(7, 4), RET0) },
	{ "static_call_inside", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0, MOV64_REG(1, 7), CALL_SUB(5),
	       RUNLOCK(7, 4), RET0, LDX(BPF_W, 0, 1, 0), EXIT()) },
	{ "load_lock_word", 0, PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_W, 0, 7, 4), RET0) },
	{ "store_lock_word", 0, PROG(LOOKUP_R7(M_ARR, 0), ST(BPF_W, 7, 4, 0), RET0) },
	{ "load_straddling", 0, PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_DW, 0, 7, 0), RET0) },
	{ "spin_lock_on_res_map", 0, PROG(LOOKUP_R7(M_ARR, 0), SLOCK(7, 4), SUNLOCK(7, 4), RET0) },
	{ "res_lock_on_spin_map", 0, PROG(LOOKUP_R7(M_SL, 0), RLOCK(7, 4), TAKEN_OR_RET0,
					  RUNLOCK(7, 4), RET0) },
	{ "wrong_offset", 0, PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 0), TAKEN_OR_RET0, RUNLOCK(7, 0),
				  RET0) },
	{ "variable_offset", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_W, 2, 7, 0), ALU64_IMM(BPF_AND, 2, 4),
	       MOV64_REG(1, 7), ALU64_REG(BPF_ADD, 1, 2), KF(K_LOCK), RET0) },
	{ "stack_pointer", 0, PROG(ST(BPF_DW, 10, -8, 0), MOV64_REG(1, 10),
				   ALU64_IMM(BPF_ADD, 1, -8), KF(K_LOCK), RET0) },
	{ "value_or_null", 0,
	  PROG(ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
	       LD_MAP(1, M_ARR), CALL(BPF_FUNC_map_lookup_elem), MOV64_REG(1, 0),
	       ALU64_IMM(BPF_ADD, 1, 4), KF(K_LOCK), RET0) },
	{ "map_without_btf", 0, PROG(LOOKUP_R7(M_NOBTF, 0), RLOCK(7, 4), TAKEN_OR_RET0,
				     RUNLOCK(7, 4), RET0) },
	{ "unlock_other_element", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOOKUP(M_ARR, 1, 8), RLOCK(7, 4), TAKEN_OR_RET0,
	       RUNLOCK(8, 4), RET0) },
	{ "spin_then_res", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOOKUP(M_SL, 0, 8), SLOCK(8, 4), RLOCK(7, 4),
	       JIMM(BPF_JEQ, 0, 0, 5), SUNLOCK(8, 4), RET0, RUNLOCK(7, 4), SUNLOCK(8, 4), RET0),
	  1 },
	{ "spin_then_res_spin_unlock_first", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOOKUP(M_SL, 0, 8), SLOCK(8, 4), RLOCK(7, 4),
	       JIMM(BPF_JEQ, 0, 0, 5), SUNLOCK(8, 4), RET0, SUNLOCK(8, 4), RUNLOCK(7, 4), RET0) },
	{ "res_then_spin", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LOOKUP(M_SL, 0, 8), RLOCK(7, 4), TAKEN_OR_RET0, SLOCK(8, 4),
	       SUNLOCK(8, 4), RUNLOCK(7, 4), RET0) },
	{ "global_data", 0, PROG(LD_MAP_VALUE(1, M_DATA, 0), KF(K_LOCK), TAKEN_OR_RET0,
				 LD_MAP_VALUE(1, M_DATA, 0), KF(K_UNLOCK), RET0), 1 },
	{ "global_data_and_lookup", 0,
	  PROG(LOOKUP_R7(M_DATA, 0), LD_MAP_VALUE(1, M_DATA, 0), KF(K_LOCK), TAKEN_OR_RET0,
	       RUNLOCK(7, 0), RET0) },
	{ "branch_lock_states", 0,
	  PROG(LOOKUP_R7(M_ARR, 0), LDX(BPF_W, 8, 7, 0), JIMM(BPF_JEQ, 8, 0, 7), RLOCK(7, 4),
	       TAKEN_OR_RET0, JA(6), RLOCK(7, 4), TAKEN_OR_RET0, INC(7, 0), RUNLOCK(7, 4),
	       RET0) },
	/* a value with two: the kernel's record keeps the last one's offset */
	{ "two_in_value_first", 0, PROG(LOOKUP_R7(M_TWO, 0), RLOCK(7, 0), TAKEN_OR_RET0,
					RUNLOCK(7, 0), RET0) },
	{ "two_in_value_second", 0, PROG(LOOKUP_R7(M_TWO, 0), RLOCK(7, 4), TAKEN_OR_RET0,
					 RUNLOCK(7, 4), RET0) },
	{ "two_in_value_load", 0, PROG(LOOKUP_R7(M_TWO, 0), LDX(BPF_W, 0, 7, 0), RET0) },
	{ "socket_filter", BPF_PROG_TYPE_SOCKET_FILTER,
	  PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0, RUNLOCK(7, 4), RET0) },
	{ "kprobe", BPF_PROG_TYPE_KPROBE,
	  PROG(LOOKUP_R7(M_ARR, 0), RLOCK(7, 4), TAKEN_OR_RET0, RUNLOCK(7, 4), RET0) },
};

/* the program with map fds and kfunc ids filled in */
static const struct bpf_insn *fixup(const struct bpf_insn *in, size_t n)
{
	static struct bpf_insn insns[160];

	memcpy(insns, in, n * sizeof(*insns));
	for (size_t k = 0; k < n; k++) {
		if (insns[k].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    (insns[k].src_reg == BPF_PSEUDO_MAP_FD ||
		     insns[k].src_reg == BPF_PSEUDO_MAP_VALUE))
			insns[k].imm = maps[insns[k].imm];
		if (insns[k].code == (BPF_JMP | BPF_CALL) &&
		    insns[k].src_reg == BPF_PSEUDO_KFUNC_CALL)
			insns[k].imm = kids[insns[k].imm];
	}
	return insns;
}

static int load(sys_fn sys, struct transcript *t, const struct lcase *c)
{
	static char log[1 << 16];
	const char *p;
	union bpf_attr a;
	int fd;

	prog_attr(&a, c->type ? c->type : BPF_PROG_TYPE_SCHED_CLS, 0, fixup(c->insns, c->len),
		  c->len);
	fd = prog_load_log(sys, &a, log, sizeof(log), getenv("BPFRT_LOG2") ? 2 : 1);
	t->steps++;
	if (getenv("BPFRT_SHOW_LOG"))
		fprintf(stderr, "---- %s\n%s\n", c->name, log);
	if (fd < 0) {
		say_load_error(t, c->name, fd, log);
		return -1;
	}
	p = strstr(log, "processed ");
	say(t, "%s: ok, processed %d", c->name, p ? atoi(p + 10) : -1);
	return fd;
}

static void maps_create(sys_fn sys, struct transcript *t, int btf)
{
	static const char *const names[NMAPS] = { "arr", "hash", "slarr", "data_b", "nobtf",
						   "two" };
	struct {
		const char *what;
		uint32_t type, value_size, flags, value_type;
	} probes[] = {
		{ "percpu array", BPF_MAP_TYPE_PERCPU_ARRAY, 12, 0, 3 },
		{ "lru hash", BPF_MAP_TYPE_LRU_HASH, 12, 0, 3 },
		{ "rdonly prog", BPF_MAP_TYPE_ARRAY, 12, BPF_F_RDONLY_PROG, 3 },
		{ "wronly prog", BPF_MAP_TYPE_ARRAY, 12, BPF_F_WRONLY_PROG, 3 },
		{ "the lock alone", BPF_MAP_TYPE_ARRAY, 4, 0, 2 },
	};

	maps[M_ARR] = lock_map(sys, names[M_ARR], BPF_MAP_TYPE_ARRAY, 12, 4, 0, btf, 1, 3);
	maps[M_HASH] = lock_map(sys, names[M_HASH], BPF_MAP_TYPE_HASH, 12, 4, 0, btf, 1, 3);
	maps[M_SL] = lock_map(sys, names[M_SL], BPF_MAP_TYPE_ARRAY, 12, 4, 0, btf, 1, 6);
	maps[M_DATA] = lock_map(sys, names[M_DATA], BPF_MAP_TYPE_ARRAY, 4, 1, 0, btf, 0, 8);
	maps[M_NOBTF] = lock_map(sys, names[M_NOBTF], BPF_MAP_TYPE_ARRAY, 12, 4, 0, -1, 0, 0);
	maps[M_TWO] = lock_map(sys, names[M_TWO], BPF_MAP_TYPE_ARRAY, 8, 4, 0, btf, 1, 5);
	for (int i = 0; i < NMAPS; i++)
		say(t, "map %s: %s\n", names[i], maps[i] >= 0 ? "ok" : strerror(-maps[i]));
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		int fd = lock_map(sys, "probe", probes[i].type, probes[i].value_size, 4,
			      probes[i].flags, btf, 1, probes[i].value_type);

		say(t, "map %s: %s\n", probes[i].what, fd >= 0 ? "ok" : strerror(-fd));
		if (fd >= 0)
			close(fd);
	}
}

/* the syscall side around the lock word: updates leave it, lookups show 0, BPF_F_LOCK
 * is for bpf_spin_lock only */
static void syscall_side(sys_fn sys, struct transcript *t)
{
	uint32_t key = 0, v[3] = { 5, 0xffffffff, 6 };

	say(t, "hash update: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, maps[M_HASH], &key, v, 0));
	memset(v, 0xaa, sizeof(v));
	say(t, "hash lookup: %d", elem(sys, BPF_MAP_LOOKUP_ELEM, maps[M_HASH], &key, v, 0));
	say(t, " %u %u %u\n", v[0], v[1], v[2]);
	say(t, "update F_LOCK: %d\n",
	    elem(sys, BPF_MAP_UPDATE_ELEM, maps[M_ARR], &key, v, BPF_F_LOCK));
	say(t, "lookup F_LOCK: %d\n",
	    elem(sys, BPF_MAP_LOOKUP_ELEM, maps[M_ARR], &key, v, BPF_F_LOCK));
}

/* two threads incrementing under the lock: exact only if the lock excludes */
static void two_threads(sys_fn sys, struct transcript *t)
{
	static const struct bpf_insn insns[] = { LOOKUP_R7(M_ARR, 2), RLOCK(7, 4),
						 JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(0, 0), EXIT(),
						 INC(7, 0), INC(7, 8), RUNLOCK(7, 4), RET0 };
	const size_t n = sizeof(insns) / sizeof(insns[0]);
	union bpf_attr a;
	int fd;

	prog_attr(&a, BPF_PROG_TYPE_SCHED_CLS, 0, fixup(insns, n), n);
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	lock_two_threads(sys, t, fd, maps[M_ARR], 2);
	if (fd >= 0)
		close(fd);
}

static void script(sys_fn sys, struct transcript *t)
{
	static const char *const probes[NBTF] = { "", "both locks", "both locks, nested",
						  "two bpf_spin_lock", "bpf_spin_lock and two res" };
	int btf = load_btf(sys, B_MAIN);

	say(t, "btf %s\n", btf >= 0 ? "ok" : strerror(errno));
	for (int i = B_MAIN + 1; i < NBTF; i++) {
		/* with both in one struct, the map could not have been made either */
		int fd = load_btf(sys, i);

		say(t, "btf with %s: %s\n", probes[i], fd >= 0 ? "ok" : strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	maps_create(sys, t, btf);
	syscall_side(sys, t);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct lcase *c = &cases[i];
		uint32_t key = 0, v[3];
		int fd = load(sys, t, c);

		if (fd < 0)
			continue;
		if (c->run) {
			int ret = lock_test_run(sys, fd, 1000);

			memset(v, 0, sizeof(v));
			say(t, ", run %d, lookup %d", ret,
			    elem(sys, BPF_MAP_LOOKUP_ELEM, maps[M_ARR], &key, v, 0));
			say(t, " value %u %u %u", v[0], v[1], v[2]);
		}
		say(t, "\n");
		close(fd);
	}
	two_threads(sys, t);
	for (int i = 0; i < NMAPS; i++)
		if (maps[i] >= 0)
			close(maps[i]);
	if (btf >= 0)
		close(btf);
}

int main(void)
{
	static const script_fn parts[] = { script, NULL };
	const struct brt_btf *vml;

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	vml = brt_btf_vmlinux();
	if (!vml)
		T_SKIP("no kernel BTF");
	for (int k = 0; k < NK; k++) {
		kids[k] = brt_btf_find(vml, knames[k], BTF_KIND_FUNC);
		if (kids[k] <= 0)
			T_SKIP("the kernel has no %s", knames[k]);
	}
	if (transcript_run("reslock", parts, &kt, &bt))
		return 1;
	compare_transcripts(&kt, &bt);
	if (getenv("BPFRT_SHOW"))
		fputs(kt.text, stdout);
	printf("res spin lock oracle: %u programs each side, %u lines\n", kt.steps, kt.says);
	return t_done();
}
