/* test_dynptr_oracle.c - dynptrs (verifier/dynptr.c, vm/dynptr.c, maps/ringbuf.c) checked
 * against the kernel: bpf_dynptr_from_mem, bpf_dynptr_read/write/data and the ring buffer
 * dynptr helpers, the dynptr kfuncs (bpf_dynptr_copy and bpf_dynptr_memset included:
 * local, ring buffer, null, packet and read-only skb dynptrs, ranges, overlaps), with the
 * verifier's rules for the two STACK_DYNPTR slots (offsets, initialised or not, types,
 * overwrites, references and their release, slices dying with their dynptr, helpers
 * writing over a dynptr, reads of its bytes) and, for programs both accept, a test run's
 * errno and retval.  Verdict, errno and the error line (the last
 * log line before "processed") must be equal.  Each program is built twice, its map
 * placeholders filled with the kernel's fds and with bpfrt's.  Skips without root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "harness.h"
#include "oracle_load.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define AND_K(d, v) I(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, v)
#define ADD_X(d, s) I(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define JEQ_K(d, v, o) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_##f)
/* a kfunc call, by the kernel BTF id found at start */
#define KCALL(k) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, kid[k])
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* lddw of a map: which one is filled in per side */
#define MAP_ARR (-1000)
#define MAP_RB (-1001)
#define LD_MAP(d, m) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, m), I(0, 0, 0, 0, 0)
/* r2 = fp - off */
#define FP(r, off) MOV_X(r, 10), ADD_K(r, -(off))
/* r0 = the array's value 0 (a 64-byte map value), or exit 0 */
#define VALUE0()                                                                          \
	ST(BPF_W, 10, -4, 0), LD_MAP(1, MAP_ARR), FP(2, 4), CALL(map_lookup_elem),       \
		JNE_K(0, 0, 2), MOV_K(0, 0), EXIT()
/* a local dynptr of the value's first n bytes at fp-16: r1 = value, r0 its result */
#define FROM_VALUE(n, at) MOV_X(1, 0), MOV_K(2, n), MOV_K(3, 0), FP(4, at), CALL(dynptr_from_mem)
/* a ring buffer dynptr of n bytes at fp-at */
#define RESERVE(n, at) LD_MAP(1, MAP_RB), MOV_K(2, n), MOV_K(3, 0), FP(4, at), CALL(ringbuf_reserve_dynptr)
#define SUBMIT(at) FP(1, at), MOV_K(2, 0), CALL(ringbuf_submit_dynptr)
#define DISCARD(at) FP(1, at), MOV_K(2, 0), CALL(ringbuf_discard_dynptr)

static int mkmap(bpf_fn bpf, uint32_t type, uint32_t ks, uint32_t vs, uint32_t max)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = max;
	return bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

struct side {
	bpf_fn bpf;
	int arr, rb;
	struct oracle_res r;
};

static struct bpf_insn prog[256];

#define BPF_PROG_TYPE_NETFILTER_NR 32 /* the headers may predate it */

static void load_run(struct side *s, enum bpf_prog_type type, const struct bpf_insn *insns,
		     size_t n)
{
	/* an IPv4 header (netfilter's run starts there) with addresses 10.1.2.3 -> 10.4.5.6 */
	static unsigned char pkt[64] = { 0x45, 0, 0, 64, 0, 0, 0, 0, 64, 17, 0, 0,
					 10, 1, 2, 3, 10, 4, 5, 6 };
	union bpf_attr attr;

	for (size_t i = 0; i < n; i++) {
		prog[i] = insns[i];
		if (prog[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    prog[i].src_reg == BPF_PSEUDO_MAP_FD)
			prog[i].imm = prog[i].imm == MAP_ARR ? s->arr : s->rb;
	}
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	if (type == BPF_PROG_TYPE_NETFILTER_NR)
		attr.expected_attach_type = 45; /* BPF_NETFILTER */
	attr.insns = (uintptr_t)prog;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	oracle_load_run(s->bpf, &attr, 1, pkt, sizeof(pkt), &s->r);
}

static struct side ks, bs;
static int compared, runs;

static enum bpf_prog_type cur_type = BPF_PROG_TYPE_XDP;

static void check(const char *name, const struct bpf_insn *insns, size_t n)
{
	T_CASE(name);
	load_run(&ks, cur_type, insns, n);
	load_run(&bs, cur_type, insns, n);
	runs += oracle_compare(name, &ks.r, &bs.r, ORACLE_CMP_RUN, "DYNPTR_DUMP");
	compared++;
}
#define C(name, ...)                                                                      \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                              \
		check(name, p_, sizeof(p_) / sizeof(p_[0]));                               \
	} while (0)

static void helper_rules(void)
{
	/* bpf_dynptr_from_mem: a map value only, at an 8-aligned place with two slots */
	C("from_mem of a value, read back", VALUE0(), MOV_X(6, 0), ST(BPF_DW, 6, 0, 0x1234),
	  FROM_VALUE(16, 16), FP(1, 24), MOV_K(2, 8), FP(3, 16), MOV_K(4, 0), MOV_K(5, 0),
	  CALL(dynptr_read), JNE_K(0, 0, 2), LDX(BPF_DW, 0, 10, -24), EXIT(), MOV_K(0, 99), EXIT());
	C("from_mem of the stack", ST(BPF_DW, 10, -8, 0), FP(1, 8), MOV_K(2, 8), MOV_K(3, 0),
	  FP(4, 24), CALL(dynptr_from_mem), MOV_K(0, 0), EXIT());
	C("from_mem of ctx", MOV_K(2, 8), MOV_K(3, 0), FP(4, 24), CALL(dynptr_from_mem),
	  MOV_K(0, 0), EXIT());
	C("from_mem at fp-8", VALUE0(), FROM_VALUE(8, 8), MOV_K(0, 0), EXIT());
	C("from_mem at fp-12", VALUE0(), FROM_VALUE(8, 12), MOV_K(0, 0), EXIT());
	C("from_mem at fp-20", VALUE0(), FROM_VALUE(8, 20), MOV_K(0, 0), EXIT());
	C("from_mem at fp-512", VALUE0(), FROM_VALUE(8, 512), MOV_K(0, 0), EXIT());
	C("from_mem at fp-520", VALUE0(), FROM_VALUE(8, 520), MOV_K(0, 0), EXIT());
	C("from_mem at a variable offset", VALUE0(), MOV_X(1, 0), LDX(BPF_DW, 6, 0, 0),
	  AND_K(6, 8), MOV_K(2, 8), MOV_K(3, 0), FP(4, 32), ADD_X(4, 6), CALL(dynptr_from_mem),
	  MOV_K(0, 0), EXIT());
	C("from_mem with flags", VALUE0(), MOV_X(1, 0), MOV_K(2, 8), MOV_K(3, 1), FP(4, 16),
	  CALL(dynptr_from_mem), EXIT());
	C("from_mem of 0 bytes", VALUE0(), FROM_VALUE(0, 16), EXIT());
	C("from_mem past the value", VALUE0(), FROM_VALUE(65, 16), EXIT());
	C("from_mem size unknown", VALUE0(), MOV_X(1, 0), LDX(BPF_DW, 2, 0, 0), MOV_K(3, 0),
	  FP(4, 16), CALL(dynptr_from_mem), MOV_K(0, 0), EXIT());
	C("from_mem over a spilled pointer", VALUE0(), STX(BPF_DW, 10, 0, -16), FROM_VALUE(8, 16),
	  LDX(BPF_DW, 0, 10, -16), EXIT());
	C("two dynptrs, the second over the first's lower half", VALUE0(), MOV_X(6, 0),
	  FROM_VALUE(8, 16), MOV_X(1, 6), MOV_K(2, 8), MOV_K(3, 0), FP(4, 24),
	  CALL(dynptr_from_mem), FP(1, 16), MOV_K(2, 0), MOV_K(3, 0), CALL(dynptr_data),
	  MOV_K(0, 0), EXIT());
	/* reading and writing through a dynptr */
	C("read from an uninitialised dynptr", FP(1, 32), MOV_K(2, 8), FP(3, 16), MOV_K(4, 0),
	  MOV_K(5, 0), CALL(dynptr_read), EXIT());
	C("read from a map value as dynptr", VALUE0(), MOV_X(3, 0), FP(1, 32), MOV_K(2, 8),
	  MOV_K(4, 0), MOV_K(5, 0), CALL(dynptr_read), EXIT());
	C("read from the second slot", VALUE0(), FROM_VALUE(16, 16), FP(1, 32), MOV_K(2, 8),
	  FP(3, 8), MOV_K(4, 0), MOV_K(5, 0), CALL(dynptr_read), EXIT());
	C("read over its own dynptr", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 8),
	  FP(3, 16), MOV_K(4, 0), MOV_K(5, 0), CALL(dynptr_read), EXIT());
	C("read past its end", VALUE0(), FROM_VALUE(8, 16), FP(1, 32), MOV_K(2, 8), FP(3, 16),
	  MOV_K(4, 4), MOV_K(5, 0), CALL(dynptr_read), EXIT());
	C("read with flags", VALUE0(), FROM_VALUE(8, 16), FP(1, 32), MOV_K(2, 8), FP(3, 16),
	  MOV_K(4, 0), MOV_K(5, 1), CALL(dynptr_read), EXIT());
	C("write then read", VALUE0(), FROM_VALUE(16, 16), ST(BPF_DW, 10, -24, 0x5678),
	  FP(1, 16), MOV_K(2, 4), FP(3, 24), MOV_K(4, 8), MOV_K(5, 0), CALL(dynptr_write),
	  JNE_K(0, 0, 10), FP(1, 32), MOV_K(2, 8), FP(3, 16), MOV_K(4, 0), MOV_K(5, 0),
	  CALL(dynptr_read), LDX(BPF_DW, 0, 10, -32), EXIT(), EXIT());
	C("write past its end", VALUE0(), FROM_VALUE(16, 16), ST(BPF_DW, 10, -24, 1), FP(1, 16),
	  MOV_K(2, 12), FP(3, 24), MOV_K(4, 8), MOV_K(5, 0), CALL(dynptr_write), EXIT());
	C("write with flags", VALUE0(), FROM_VALUE(16, 16), ST(BPF_DW, 10, -24, 1), FP(1, 16),
	  MOV_K(2, 0), FP(3, 24), MOV_K(4, 8), MOV_K(5, 1), CALL(dynptr_write), EXIT());
	C("the dynptr's bytes loaded", VALUE0(), FROM_VALUE(16, 16), LDX(BPF_DW, 0, 10, -16),
	  EXIT());
	C("the dynptr's bytes loaded, second slot", VALUE0(), FROM_VALUE(16, 16),
	  LDX(BPF_W, 0, 10, -4), EXIT());
	C("the dynptr's bytes passed as memory", VALUE0(), FROM_VALUE(16, 16), LD_MAP(1, MAP_ARR),
	  FP(2, 16), CALL(map_lookup_elem), MOV_K(0, 0), EXIT());
	C("a store destroys it", VALUE0(), FROM_VALUE(16, 16), ST(BPF_W, 10, -8, 0), FP(1, 32),
	  MOV_K(2, 8), FP(3, 16), MOV_K(4, 0), MOV_K(5, 0), CALL(dynptr_read), EXIT());
	C("a store, then a new one", VALUE0(), MOV_X(6, 0), FROM_VALUE(16, 16),
	  ST(BPF_DW, 10, -16, 0), MOV_X(1, 6), MOV_K(2, 8), MOV_K(3, 0), FP(4, 16),
	  CALL(dynptr_from_mem), EXIT());
	/* bpf_dynptr_data: a slice of the dynptr's memory */
	C("data, null-checked, written", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 0),
	  MOV_K(3, 8), CALL(dynptr_data), JEQ_K(0, 0, 2), ST(BPF_DW, 0, 0, 7), MOV_K(0, 1),
	  EXIT());
	C("data without a null check", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 0),
	  MOV_K(3, 8), CALL(dynptr_data), ST(BPF_DW, 0, 0, 7), MOV_K(0, 1), EXIT());
	C("data, access past the slice", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 0),
	  MOV_K(3, 8), CALL(dynptr_data), JEQ_K(0, 0, 1), LDX(BPF_DW, 0, 0, 4), MOV_K(0, 1),
	  EXIT());
	C("data of a size unknown", VALUE0(), LDX(BPF_DW, 6, 0, 0), FROM_VALUE(16, 16),
	  FP(1, 16), MOV_K(2, 0), MOV_X(3, 6), CALL(dynptr_data), MOV_K(0, 1), EXIT());
	C("data past the dynptr: NULL at run time", VALUE0(), FROM_VALUE(8, 16), FP(1, 16),
	  MOV_K(2, 4), MOV_K(3, 8), CALL(dynptr_data), JEQ_K(0, 0, 2), MOV_K(0, 1), EXIT(),
	  MOV_K(0, 2), EXIT());
	C("a slice dies with its dynptr", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 0),
	  MOV_K(3, 8), CALL(dynptr_data), JEQ_K(0, 0, 4), MOV_X(6, 0), ST(BPF_DW, 10, -16, 0),
	  LDX(BPF_DW, 0, 6, 0), EXIT(), MOV_K(0, 1), EXIT());
	C("a slice lives after another slot's store", VALUE0(), FROM_VALUE(16, 16), FP(1, 16),
	  MOV_K(2, 0), MOV_K(3, 8), CALL(dynptr_data), JEQ_K(0, 0, 4), MOV_X(6, 0),
	  ST(BPF_DW, 10, -24, 0), LDX(BPF_DW, 0, 6, 0), EXIT(), MOV_K(0, 1), EXIT());
	C("a null slice dies too", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 0),
	  MOV_K(3, 8), CALL(dynptr_data), MOV_X(6, 0), ST(BPF_DW, 10, -8, 0), JEQ_K(6, 0, 2),
	  LDX(BPF_DW, 0, 6, 0), EXIT(), MOV_K(0, 1), EXIT());
	/* ring buffer dynptrs: a reference to release */
	C("reserve, submit", RESERVE(8, 16), SUBMIT(16), MOV_K(0, 3), EXIT());
	C("reserve, discard", RESERVE(8, 16), DISCARD(16), MOV_K(0, 3), EXIT());
	C("reserve, not released", RESERVE(8, 16), MOV_K(0, 0), EXIT());
	C("reserve, released twice", RESERVE(8, 16), SUBMIT(16), DISCARD(16), MOV_K(0, 0),
	  EXIT());
	C("reserve with flags, released", LD_MAP(1, MAP_RB), MOV_K(2, 8), MOV_K(3, 1), FP(4, 16),
	  CALL(ringbuf_reserve_dynptr), MOV_X(6, 0), DISCARD(16), MOV_X(0, 6), EXIT());
	C("reserve too much, released", RESERVE(8192, 16), MOV_X(6, 0), DISCARD(16),
	  MOV_X(0, 6), EXIT());
	C("reserve from an array", LD_MAP(1, MAP_ARR), MOV_K(2, 8), MOV_K(3, 0), FP(4, 16),
	  CALL(ringbuf_reserve_dynptr), MOV_K(0, 0), EXIT());
	C("reserve, overwritten", RESERVE(8, 16), ST(BPF_DW, 10, -16, 0), MOV_K(0, 0), EXIT());
	C("reserve, second slot overwritten", RESERVE(8, 16), ST(BPF_B, 10, -1, 0), MOV_K(0, 0),
	  EXIT());
	C("reserve, a dynptr made over it", RESERVE(8, 16), VALUE0(), FROM_VALUE(8, 16),
	  MOV_K(0, 0), EXIT());
	C("reserve, submitted at an offset", RESERVE(8, 16), FP(1, 8), MOV_K(2, 0),
	  CALL(ringbuf_submit_dynptr), MOV_K(0, 0), EXIT());
	C("submit a local dynptr", VALUE0(), FROM_VALUE(8, 16), SUBMIT(16), MOV_K(0, 0), EXIT());
	C("submit an uninitialised dynptr", SUBMIT(16), MOV_K(0, 0), EXIT());
	C("submit a map value", VALUE0(), MOV_X(1, 0), MOV_K(2, 0), CALL(ringbuf_submit_dynptr),
	  MOV_K(0, 0), EXIT());
	C("reserve, write, read, submit", RESERVE(16, 16), ST(BPF_DW, 10, -24, 0x77), FP(1, 16),
	  MOV_K(2, 0), FP(3, 24), MOV_K(4, 8), MOV_K(5, 0), CALL(dynptr_write), FP(1, 32),
	  MOV_K(2, 8), FP(3, 16), MOV_K(4, 0), MOV_K(5, 0), CALL(dynptr_read),
	  LDX(BPF_DW, 6, 10, -32), SUBMIT(16), MOV_X(0, 6), EXIT());
	C("reserve, data slice written, submit", RESERVE(16, 16), FP(1, 16), MOV_K(2, 0),
	  MOV_K(3, 16), CALL(dynptr_data), JEQ_K(0, 0, 1), ST(BPF_DW, 0, 8, 5), SUBMIT(16),
	  MOV_K(0, 4), EXIT());
	C("reserve, slice used after submit", RESERVE(16, 16), FP(1, 16), MOV_K(2, 0),
	  MOV_K(3, 16), CALL(dynptr_data), MOV_X(6, 0), SUBMIT(16), JEQ_K(6, 0, 1),
	  ST(BPF_DW, 6, 0, 5), MOV_K(0, 0), EXIT());
	C("reserve twice, both submitted", RESERVE(8, 16), RESERVE(8, 32), SUBMIT(32), SUBMIT(16),
	  MOV_K(0, 6), EXIT());
	C("reserve twice, one submitted", RESERVE(8, 16), RESERVE(8, 32), SUBMIT(32),
	  MOV_K(0, 6), EXIT());
	C("reserve at fp-8", RESERVE(8, 8), MOV_K(0, 0), EXIT());
	C("reserve, read into its slot", RESERVE(8, 16), FP(1, 16), MOV_K(2, 8), FP(3, 16),
	  MOV_K(4, 0), MOV_K(5, 0), CALL(dynptr_read), SUBMIT(16), MOV_K(0, 0), EXIT());
	C("reserve, bytes loaded", RESERVE(8, 16), LDX(BPF_DW, 6, 10, -8), SUBMIT(16),
	  MOV_X(0, 6), EXIT());
	C("reserve in a branch, released in both", MOV_X(6, 1), RESERVE(8, 16),
	  LDX(BPF_W, 7, 6, 16), JEQ_K(7, 0, 5), SUBMIT(16), JA(4), DISCARD(16), MOV_K(0, 1),
	  EXIT());
	C("released on one branch only", MOV_X(6, 1), RESERVE(8, 16), LDX(BPF_W, 7, 6, 16),
	  JEQ_K(7, 0, 4), SUBMIT(16), MOV_K(0, 1), EXIT());
}

enum { K_SLICE, K_SLICE_RDWR, K_ADJUST, K_IS_NULL, K_IS_RDONLY, K_SIZE, K_CLONE, K_FROM_SKB,
       K_FROM_XDP, K_FROM_SKB_META, K_COUNT, K_COPY = K_COUNT, K_MEMSET, K_ALL };
static const char *const knames[K_ALL] = {
	"bpf_dynptr_slice", "bpf_dynptr_slice_rdwr", "bpf_dynptr_adjust", "bpf_dynptr_is_null",
	"bpf_dynptr_is_rdonly", "bpf_dynptr_size", "bpf_dynptr_clone", "bpf_dynptr_from_skb",
	"bpf_dynptr_from_xdp", "bpf_dynptr_from_skb_meta", "bpf_dynptr_copy",
	"bpf_dynptr_memset" };
static int kid[K_ALL];

/* a packet dynptr at fp-16 of the context in r6 */
#define FROM_XDP() MOV_X(1, 6), MOV_K(2, 0), FP(3, 16), KCALL(K_FROM_XDP)
#define FROM_SKB() MOV_X(1, 6), MOV_K(2, 0), FP(3, 16), KCALL(K_FROM_SKB)
/* r0 = slice(fp-16, off, buffer fp-32 or NULL, n) */
#define SLICE(k, off, buf, n)                                                              \
	FP(1, 16), MOV_K(2, off), FP(3, 32), I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0),   \
		MOV_K(4, n), KCALL(k)

static void kfunc_rules(void)
{
	cur_type = BPF_PROG_TYPE_XDP;
	C("xdp: from_xdp, slice read", MOV_X(6, 1), FROM_XDP(), SLICE(K_SLICE, 0, 0, 8),
	  JEQ_K(0, 0, 2), LDX(BPF_B, 0, 0, 12), EXIT(), MOV_K(0, 77), EXIT());
	C("xdp: from_xdp, slice written", MOV_X(6, 1), FROM_XDP(), SLICE(K_SLICE, 0, 0, 8),
	  JEQ_K(0, 0, 1), ST(BPF_B, 0, 0, 1), MOV_K(0, 1), EXIT());
	C("xdp: from_xdp, slice_rdwr", MOV_X(6, 1), FROM_XDP(), SLICE(K_SLICE_RDWR, 0, 0, 8),
	  JEQ_K(0, 0, 1), ST(BPF_B, 0, 0, 1), MOV_K(0, 1), EXIT());
	C("xdp: local, slice_rdwr", VALUE0(), FROM_VALUE(16, 16), SLICE(K_SLICE_RDWR, 0, 0, 8),
	  JEQ_K(0, 0, 1), ST(BPF_B, 0, 0, 1), MOV_K(0, 1), EXIT());
	C("xdp: local, slice", VALUE0(), FROM_VALUE(16, 16), SLICE(K_SLICE, 4, 0, 8),
	  JEQ_K(0, 0, 2), LDX(BPF_B, 0, 0, 0), EXIT(), MOV_K(0, 9), EXIT());
	C("xdp: slice size unknown", VALUE0(), LDX(BPF_DW, 7, 0, 0), FROM_VALUE(16, 16),
	  FP(1, 16), MOV_K(2, 0), MOV_K(3, 0), MOV_X(4, 7), KCALL(K_SLICE), MOV_K(0, 0), EXIT());
	C("xdp: slice past the buffer", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 0),
	  FP(3, 32), MOV_K(4, 24), KCALL(K_SLICE), MOV_K(0, 0), EXIT());
	C("xdp: slice of an uninitialised dynptr", SLICE(K_SLICE, 0, 0, 8), MOV_K(0, 0), EXIT());
	C("xdp: slice without a null check", MOV_X(6, 1), FROM_XDP(), SLICE(K_SLICE, 0, 0, 8),
	  LDX(BPF_B, 0, 0, 0), EXIT());
	C("xdp: from_xdp twice", MOV_X(6, 1), FROM_XDP(), FROM_XDP(), MOV_K(0, 0), EXIT());
	/* a slice given a stack buffer (fp-40, 8 bytes) dies when a store reaches the buffer
	 * (the running 6.18.44: `buf=fp[0]-40+8`, a backport 6.18.19's source lacks) */
#define BUFSLICE() MOV_X(6, 1), FROM_XDP(), FP(1, 16), MOV_K(2, 0), FP(3, 40), MOV_K(4, 8), \
		   KCALL(K_SLICE)
	C("xdp: buffered slice, buffer overwritten", BUFSLICE(), JEQ_K(0, 0, 3),
	  ST(BPF_DW, 10, -40, 1), LDX(BPF_B, 0, 0, 0), EXIT(), MOV_K(0, 0), EXIT());
	C("xdp: buffered slice, buffer's last byte written", BUFSLICE(), JEQ_K(0, 0, 3),
	  ST(BPF_B, 10, -33, 1), LDX(BPF_B, 0, 0, 0), EXIT(), MOV_K(0, 0), EXIT());
	C("xdp: buffered slice, the byte before written", BUFSLICE(), JEQ_K(0, 0, 3),
	  ST(BPF_B, 10, -41, 1), LDX(BPF_B, 0, 0, 0), EXIT(), MOV_K(0, 0), EXIT());
	C("xdp: buffered slice, a copy used after", BUFSLICE(), MOV_X(7, 0), JEQ_K(0, 0, 3),
	  ST(BPF_W, 10, -36, 1), LDX(BPF_B, 0, 7, 0), EXIT(), MOV_K(0, 0), EXIT());
	C("xdp: buffered slice spilled, buffer overwritten", BUFSLICE(), JEQ_K(0, 0, 5),
	  STX(BPF_DW, 10, 0, -56), ST(BPF_DW, 10, -40, 1), LDX(BPF_DW, 1, 10, -56),
	  LDX(BPF_B, 0, 1, 0), EXIT(), MOV_K(0, 0), EXIT());
	C("xdp: from_xdp with flags", MOV_X(6, 1), MOV_X(1, 6), MOV_K(2, 1), FP(3, 16),
	  KCALL(K_FROM_XDP), EXIT());
	C("xdp: from_xdp of a non-ctx", MOV_X(6, 1), FP(1, 40), MOV_K(2, 0), FP(3, 16),
	  KCALL(K_FROM_XDP), EXIT());
	C("xdp: from_skb", MOV_X(6, 1), FROM_SKB(), MOV_K(0, 0), EXIT());
	/* a bool comes back in the low byte only (the kernel's r0 keeps the rest of rax) */
	C("xdp: size, is_null, is_rdonly", MOV_X(6, 1), FROM_XDP(), FP(1, 16), KCALL(K_SIZE),
	  MOV_X(7, 0), FP(1, 16), KCALL(K_IS_NULL), AND_K(0, 0xff),
	  I(BPF_ALU64 | BPF_LSH | BPF_K, 0, 0, 0, 8), ADD_X(7, 0), FP(1, 16), KCALL(K_IS_RDONLY),
	  AND_K(0, 0xff), I(BPF_ALU64 | BPF_LSH | BPF_K, 0, 0, 0, 9), ADD_X(0, 7), EXIT());
	C("xdp: size of an uninitialised one", FP(1, 16), KCALL(K_SIZE), EXIT());
	C("xdp: size at fp-12", FP(1, 12), KCALL(K_SIZE), EXIT());
	C("xdp: is_null of a failed from_mem", VALUE0(), MOV_X(1, 0), MOV_K(2, 8), MOV_K(3, 1),
	  FP(4, 16), CALL(dynptr_from_mem), FP(1, 16), KCALL(K_IS_NULL), AND_K(0, 0xff), EXIT());
	C("xdp: ringbuf, kfunc slice used after submit", RESERVE(8, 16), SLICE(K_SLICE, 0, 0, 8),
	  MOV_X(7, 0), SUBMIT(16), JEQ_K(7, 0, 1), LDX(BPF_B, 0, 7, 0), MOV_K(0, 0), EXIT());
	C("xdp: local, kfunc slice used after overwrite", VALUE0(), FROM_VALUE(16, 16),
	  SLICE(K_SLICE, 0, 0, 8), MOV_X(7, 0), ST(BPF_DW, 10, -16, 0), JEQ_K(7, 0, 1),
	  LDX(BPF_B, 0, 7, 0), MOV_K(0, 0), EXIT());
	C("xdp: ringbuf clone's kfunc slice, original submitted", RESERVE(8, 16), FP(1, 16),
	  FP(2, 48), KCALL(K_CLONE), FP(1, 48), MOV_K(2, 0), FP(3, 32),
	  I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0), MOV_K(4, 8), KCALL(K_SLICE), MOV_X(7, 0),
	  SUBMIT(16), JEQ_K(7, 0, 1), LDX(BPF_B, 0, 7, 0), MOV_K(0, 0), EXIT());
	C("xdp: ringbuf clone's data slice, original submitted", RESERVE(8, 16), FP(1, 16),
	  FP(2, 48), KCALL(K_CLONE), FP(1, 48), MOV_K(2, 0), MOV_K(3, 8), CALL(dynptr_data),
	  MOV_X(7, 0), SUBMIT(16), JEQ_K(7, 0, 1), LDX(BPF_B, 0, 7, 0), MOV_K(0, 0), EXIT());
	C("xdp: local clone's slice, original overwritten", VALUE0(), FROM_VALUE(16, 16),
	  FP(1, 16), FP(2, 48), KCALL(K_CLONE), FP(1, 48), MOV_K(2, 0), MOV_K(3, 8),
	  CALL(dynptr_data), MOV_X(7, 0), ST(BPF_DW, 10, -16, 0), JEQ_K(7, 0, 1),
	  LDX(BPF_B, 0, 7, 0), MOV_K(0, 0), EXIT());
	C("xdp: local clone used after original overwritten", VALUE0(), FROM_VALUE(16, 16),
	  FP(1, 16), FP(2, 48), KCALL(K_CLONE), ST(BPF_DW, 10, -16, 0), FP(1, 48), KCALL(K_SIZE),
	  EXIT());
	C("xdp: adjust, size", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 4), MOV_K(3, 12),
	  KCALL(K_ADJUST), MOV_X(7, 0), FP(1, 16), KCALL(K_SIZE), ADD_X(0, 7), EXIT());
	C("xdp: adjust past the end", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 4),
	  MOV_K(3, 17), KCALL(K_ADJUST), EXIT());
	C("xdp: adjust start > end", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), MOV_K(2, 8),
	  MOV_K(3, 4), KCALL(K_ADJUST), EXIT());
	C("xdp: clone, size of the clone", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), FP(2, 32),
	  KCALL(K_CLONE), FP(1, 32), KCALL(K_SIZE), EXIT());
	C("xdp: clone of an uninitialised one", FP(1, 16), FP(2, 32), KCALL(K_CLONE), EXIT());
	C("xdp: clone onto itself", VALUE0(), FROM_VALUE(16, 16), FP(1, 16), FP(2, 16),
	  KCALL(K_CLONE), EXIT());
	C("xdp: ringbuf clone, both released", RESERVE(8, 16), FP(1, 16), FP(2, 32),
	  KCALL(K_CLONE), SUBMIT(16), FP(1, 32), KCALL(K_SIZE), MOV_K(0, 0), EXIT());
	C("xdp: ringbuf clone released, original used", RESERVE(8, 16), FP(1, 16), FP(2, 32),
	  KCALL(K_CLONE), SUBMIT(32), FP(1, 16), KCALL(K_SIZE), MOV_K(0, 0), EXIT());
	C("xdp: ringbuf clone, slice used after submit", RESERVE(8, 16), FP(1, 16), FP(2, 32),
	  KCALL(K_CLONE), SLICE(K_SLICE, 0, 0, 8), MOV_X(7, 0), SUBMIT(16), JEQ_K(7, 0, 1),
	  LDX(BPF_B, 0, 7, 0), MOV_K(0, 0), EXIT());
	C("xdp: slice dies on adjust_head", MOV_X(6, 1), FROM_XDP(), SLICE(K_SLICE, 0, 0, 8),
	  MOV_X(7, 0), MOV_X(1, 6), MOV_K(2, 0), CALL(xdp_adjust_head), JEQ_K(7, 0, 1),
	  LDX(BPF_B, 0, 7, 0), MOV_K(0, 0), EXIT());
	C("xdp: read through the xdp dynptr", MOV_X(6, 1), FROM_XDP(), FP(1, 40), MOV_K(2, 8),
	  FP(3, 16), MOV_K(4, 4), MOV_K(5, 0), CALL(dynptr_read), JNE_K(0, 0, 1),
	  LDX(BPF_W, 0, 10, -40), EXIT());
	C("xdp: write through the xdp dynptr", MOV_X(6, 1), FROM_XDP(), ST(BPF_DW, 10, -40, 0x55),
	  FP(1, 16), MOV_K(2, 2), FP(3, 40), MOV_K(4, 4), MOV_K(5, 0), CALL(dynptr_write),
	  EXIT());
	C("xdp: data of an xdp dynptr is NULL", MOV_X(6, 1), FROM_XDP(), FP(1, 16), MOV_K(2, 0),
	  MOV_K(3, 4), CALL(dynptr_data), JEQ_K(0, 0, 1), MOV_K(0, 5), EXIT());
	cur_type = BPF_PROG_TYPE_SCHED_CLS;
	C("tc: from_skb, slice", MOV_X(6, 1), FROM_SKB(), SLICE(K_SLICE, 12, 0, 2),
	  JEQ_K(0, 0, 2), LDX(BPF_H, 0, 0, 0), EXIT(), MOV_K(0, 77), EXIT());
	C("tc: from_skb, slice_rdwr", MOV_X(6, 1), FROM_SKB(), SLICE(K_SLICE_RDWR, 0, 0, 8),
	  JEQ_K(0, 0, 1), ST(BPF_B, 0, 0, 1), MOV_K(0, 1), EXIT());
	C("tc: skb write kills slices", MOV_X(6, 1), FROM_SKB(), SLICE(K_SLICE, 0, 0, 8),
	  MOV_X(7, 0), ST(BPF_DW, 10, -40, 0), FP(1, 16), MOV_K(2, 0), FP(3, 40), MOV_K(4, 4),
	  MOV_K(5, 0), CALL(dynptr_write), JEQ_K(7, 0, 1), LDX(BPF_B, 0, 7, 0), MOV_K(0, 0),
	  EXIT());
	C("tc: write with a bad flag", MOV_X(6, 1), FROM_SKB(), ST(BPF_DW, 10, -40, 0),
	  FP(1, 16), MOV_K(2, 0), FP(3, 40), MOV_K(4, 4), MOV_K(5, 4), CALL(dynptr_write), EXIT());
	C("tc: from_skb_meta, size", MOV_X(6, 1), MOV_X(1, 6), MOV_K(2, 0), FP(3, 16),
	  KCALL(K_FROM_SKB_META), FP(1, 16), KCALL(K_SIZE), EXIT());
	C("tc: from_xdp", MOV_X(6, 1), FROM_XDP(), MOV_K(0, 0), EXIT());
	cur_type = BPF_PROG_TYPE_CGROUP_SKB;
	C("cgroup_skb: from_skb, is_rdonly", MOV_X(6, 1), FROM_SKB(), FP(1, 16),
	  KCALL(K_IS_RDONLY), EXIT());
	C("cgroup_skb: slice_rdwr", MOV_X(6, 1), FROM_SKB(), SLICE(K_SLICE_RDWR, 0, 0, 8),
	  MOV_K(0, 1), EXIT());
	C("cgroup_skb: write", MOV_X(6, 1), FROM_SKB(), ST(BPF_DW, 10, -40, 0), FP(1, 16),
	  MOV_K(2, 0), FP(3, 40), MOV_K(4, 4), MOV_K(5, 0), CALL(dynptr_write), MOV_K(0, 1),
	  EXIT());
	/* netfilter: the context's skb (a trusted sk_buff) over the run's packet (from the IP
	 * header on), read-only; its state is no sk_buff.  A netfilter program returns 0 or
	 * 1: 1 when what it reads is the packet's. */
	cur_type = BPF_PROG_TYPE_NETFILTER_NR;
#define IS(v) MOV_X(1, 0), MOV_K(0, 1), JEQ_K(1, v, 1), MOV_K(0, 0), EXIT()
	C("netfilter: from_skb of ctx->skb, size", LDX(BPF_DW, 6, 1, 8), FROM_SKB(),
	  JNE_K(0, 0, 3), FP(1, 16), KCALL(K_SIZE), IS(64));
	C("netfilter: from_skb of ctx->skb, read-only", LDX(BPF_DW, 6, 1, 8), FROM_SKB(),
	  JNE_K(0, 0, 3), FP(1, 16), KCALL(K_IS_RDONLY), IS(1));
	C("netfilter: from_skb, slice read", LDX(BPF_DW, 6, 1, 8), FROM_SKB(),
	  SLICE(K_SLICE, 12, 0, 8), JEQ_K(0, 0, 1), LDX(BPF_B, 0, 0, 7), IS(6));
	C("netfilter: from_skb, dynptr_read", LDX(BPF_DW, 6, 1, 8), FROM_SKB(), FP(1, 40),
	  MOV_K(2, 4), FP(3, 16), MOV_K(4, 12), MOV_K(5, 0), CALL(dynptr_read),
	  JNE_K(0, 0, 1), LDX(BPF_W, 0, 10, -40), IS(0x0302010a));
#undef IS
	C("netfilter: from_skb, slice_rdwr", LDX(BPF_DW, 6, 1, 8), FROM_SKB(),
	  SLICE(K_SLICE_RDWR, 0, 0, 8), MOV_K(0, 1), EXIT());
	C("netfilter: from_skb of ctx->state", LDX(BPF_DW, 6, 1, 0), FROM_SKB(), MOV_K(0, 1),
	  EXIT());
	cur_type = BPF_PROG_TYPE_XDP;
}

/* bpf_dynptr_copy (6.16) and bpf_dynptr_memset (6.17): the map value's bytes 0-15 hold
 * 0x01020304 and 0x05060708 (as u64s), 16-31 zero; a local dynptr A of bytes 0-15 at
 * fp-16 and B of bytes 16-31 at fp-32.  The program returns the kfunc's error, or on
 * success the xor of the value's four u32 words at `at` (16: B's bytes, 0: A's). */
#define AB()                                                                              \
	VALUE0(), MOV_X(6, 0), ST(BPF_DW, 6, 0, 0x01020304), ST(BPF_DW, 6, 8, 0x05060708),   \
		ST(BPF_DW, 6, 16, 0), ST(BPF_DW, 6, 24, 0), MOV_X(1, 6), MOV_K(2, 16),     \
		MOV_K(3, 0), FP(4, 16), CALL(dynptr_from_mem), MOV_X(1, 6), ADD_K(1, 16),  \
		MOV_K(2, 16), MOV_K(3, 0), FP(4, 32), CALL(dynptr_from_mem)
/* a null dynptr at fp-48 (from_mem with a bad flag) */
#define NUL48() MOV_X(1, 6), MOV_K(2, 8), MOV_K(3, 1), FP(4, 48), CALL(dynptr_from_mem)
#define XOR_AT(at)                                                                        \
	JNE_K(0, 0, 9), LDX(BPF_W, 0, 6, at), LDX(BPF_W, 1, 6, (at) + 4),                  \
		I(BPF_ALU64 | BPF_XOR | BPF_X, 0, 1, 0, 0), LDX(BPF_W, 1, 6, (at) + 8),     \
		I(BPF_ALU64 | BPF_XOR | BPF_X, 0, 1, 0, 0), LDX(BPF_W, 1, 6, (at) + 12),    \
		I(BPF_ALU64 | BPF_XOR | BPF_X, 0, 1, 0, 0), ADD_K(0, 1), EXIT(), EXIT()
/* copy(dst at fp-d, doff, src at fp-s, soff, n) */
#define COPY(d, doff, sp, soff, n)                                                        \
	FP(1, d), MOV_K(2, doff), FP(3, sp), MOV_K(4, soff), MOV_K(5, n), KCALL(K_COPY)
#define MEMSET(d, off, n, v) FP(1, d), MOV_K(2, off), MOV_K(3, n), MOV_K(4, v), KCALL(K_MEMSET)

static void copy_memset_rules(void)
{
	cur_type = BPF_PROG_TYPE_XDP;
	C("copy: A to B", AB(), COPY(32, 0, 16, 0, 16), XOR_AT(16));
	C("copy: 8 bytes at offsets", AB(), COPY(32, 4, 16, 8, 8), XOR_AT(16));
	C("copy: 0 bytes", AB(), COPY(32, 0, 16, 0, 0), XOR_AT(16));
	C("copy: 0 bytes at the end", AB(), COPY(32, 16, 16, 16, 0), XOR_AT(16));
	C("copy: 0 bytes past the end", AB(), COPY(32, 17, 16, 0, 0), XOR_AT(16));
	C("copy: source out of range", AB(), COPY(32, 0, 16, 8, 16), XOR_AT(16));
	C("copy: destination out of range", AB(), COPY(32, 8, 16, 0, 16), XOR_AT(16));
	C("copy: both out of range", AB(), COPY(32, 8, 16, 8, 16), XOR_AT(16));
	C("copy: overlapping, forward", AB(), COPY(16, 2, 16, 0, 12), XOR_AT(0));
	C("copy: overlapping, backward", AB(), COPY(16, 0, 16, 3, 12), XOR_AT(0));
	C("copy: from a null dynptr", AB(), NUL48(), COPY(32, 0, 48, 0, 4), XOR_AT(16));
	C("copy: 0 bytes from a null dynptr", AB(), NUL48(), COPY(32, 0, 48, 0, 0), XOR_AT(16));
	C("copy: to a null dynptr", AB(), NUL48(), COPY(48, 0, 16, 0, 4), XOR_AT(16));
	C("copy: 0 bytes to a null dynptr", AB(), NUL48(), COPY(48, 0, 16, 0, 0), XOR_AT(16));
	C("copy: null to null, 0 bytes", AB(), NUL48(), COPY(48, 0, 48, 0, 0), XOR_AT(16));
	C("copy: null to null, 1 byte", AB(), NUL48(), COPY(48, 0, 48, 0, 1), XOR_AT(16));
	C("copy: size unknown", AB(), LDX(BPF_DW, 5, 6, 0), FP(1, 32), MOV_K(2, 0), FP(3, 16),
	  MOV_K(4, 0), KCALL(K_COPY), XOR_AT(16));
	C("copy: from an uninitialised dynptr", AB(), COPY(32, 0, 64, 0, 4), XOR_AT(16));
	C("copy: to an uninitialised dynptr", AB(), COPY(64, 0, 16, 0, 4), XOR_AT(16));
	C("copy: a dynptr slot misaligned", AB(), COPY(28, 0, 16, 0, 4), XOR_AT(16));
	C("copy: a ring buffer dynptr, then read back", AB(), RESERVE(16, 48),
	  COPY(48, 0, 16, 0, 16), MOV_X(7, 0), MOV_X(1, 6), ADD_K(1, 16), MOV_K(2, 16),
	  FP(3, 48), MOV_K(4, 0), MOV_K(5, 0), CALL(dynptr_read), ADD_X(7, 0), DISCARD(48),
	  MOV_X(0, 7), XOR_AT(16));
	C("memset: A's middle", AB(), MEMSET(16, 2, 8, 0x1ab), XOR_AT(0));
	C("memset: all of B", AB(), MEMSET(32, 0, 16, 0x5a), XOR_AT(16));
	C("memset: 0 bytes at the end", AB(), MEMSET(32, 16, 0, 1), XOR_AT(16));
	C("memset: 0 bytes past the end", AB(), MEMSET(32, 17, 0, 1), XOR_AT(16));
	C("memset: out of range", AB(), MEMSET(32, 8, 9, 1), XOR_AT(16));
	C("memset: a null dynptr, 0 bytes", AB(), NUL48(), MEMSET(48, 0, 0, 1), XOR_AT(16));
	C("memset: a null dynptr, 1 byte", AB(), NUL48(), MEMSET(48, 0, 1, 1), XOR_AT(16));
	C("memset: an uninitialised dynptr", AB(), MEMSET(64, 0, 1, 1), XOR_AT(16));
	C("memset: size unknown", AB(), LDX(BPF_DW, 3, 6, 0), FP(1, 32), MOV_K(2, 0),
	  MOV_K(4, 1), KCALL(K_MEMSET), XOR_AT(16));
	C("memset: a ring buffer dynptr, then read back", AB(), RESERVE(16, 48),
	  MEMSET(48, 4, 8, 0x77), MOV_X(7, 0), MOV_X(1, 6), ADD_K(1, 16), MOV_K(2, 16),
	  FP(3, 48), MOV_K(4, 0), MOV_K(5, 0), CALL(dynptr_read), ADD_X(7, 0), DISCARD(48),
	  MOV_X(0, 7), XOR_AT(16));
	/* packet dynptrs: r6 is the context until AB() */
	C("xdp: memset the packet, copy it into B", MOV_X(7, 1), MOV_X(1, 7), MOV_K(2, 0),
	  FP(3, 80), KCALL(K_FROM_XDP), AB(), MEMSET(80, 3, 6, 0xc3), COPY(32, 0, 80, 0, 16),
	  XOR_AT(16));
	C("xdp: copy A into the packet, then back into B", MOV_X(7, 1), MOV_X(1, 7), MOV_K(2, 0),
	  FP(3, 80), KCALL(K_FROM_XDP), AB(), COPY(80, 10, 16, 0, 16), MOV_X(8, 0),
	  COPY(32, 0, 80, 12, 16), ADD_X(0, 8), XOR_AT(16));
	C("xdp: copy past the packet", MOV_X(7, 1), MOV_X(1, 7), MOV_K(2, 0), FP(3, 80),
	  KCALL(K_FROM_XDP), AB(), COPY(80, 60, 16, 0, 16), XOR_AT(16));
	/* a socket filter's skb dynptr is read-only (bpf_dynptr_from_skb_rdonly) and its
	 * return value is any u32 */
	cur_type = BPF_PROG_TYPE_SOCKET_FILTER;
	C("socket filter: copy into the read-only skb", MOV_X(7, 1), MOV_X(1, 7), MOV_K(2, 0),
	  FP(3, 80), KCALL(K_FROM_SKB), AB(), COPY(80, 0, 16, 0, 4), XOR_AT(16));
	C("socket filter: copy 0 bytes into the read-only skb", MOV_X(7, 1), MOV_X(1, 7),
	  MOV_K(2, 0), FP(3, 80), KCALL(K_FROM_SKB), AB(), COPY(80, 0, 16, 0, 0), XOR_AT(16));
	C("socket filter: copy out of the read-only skb", MOV_X(7, 1), MOV_X(1, 7), MOV_K(2, 0),
	  FP(3, 80), KCALL(K_FROM_SKB), AB(), COPY(32, 0, 80, 0, 16), XOR_AT(16));
	C("socket filter: memset the read-only skb", MOV_X(7, 1), MOV_X(1, 7), MOV_K(2, 0),
	  FP(3, 80), KCALL(K_FROM_SKB), AB(), MEMSET(80, 0, 4, 1), XOR_AT(16));
	C("socket filter: memset 0 bytes far out of the read-only skb", MOV_X(7, 1), MOV_X(1, 7),
	  MOV_K(2, 0), FP(3, 80), KCALL(K_FROM_SKB), AB(), MEMSET(80, 5000, 0, 1), XOR_AT(16));
	cur_type = BPF_PROG_TYPE_XDP;
}

int main(void)
{
	if (geteuid() != 0)
		T_SKIP("not root: dynptr helpers need CAP_BPF");
	ks.bpf = oracle_kernel_bpf;
	bs.bpf = bpfrt_bpf;
	ks.arr = mkmap(oracle_kernel_bpf, BPF_MAP_TYPE_ARRAY, 4, 64, 1);
	ks.rb = mkmap(oracle_kernel_bpf, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096);
	bs.arr = mkmap(bpfrt_bpf, BPF_MAP_TYPE_ARRAY, 4, 64, 1);
	bs.rb = mkmap(bpfrt_bpf, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096);
	if (ks.arr < 0 || ks.rb < 0)
		T_SKIP("the kernel refuses an array or ring buffer map");
	T_ASSERT(bs.arr >= 0 && bs.rb >= 0);
	helper_rules();
	{
		const struct brt_btf *vml = brt_btf_vmlinux();
		int have = vml != NULL;

		for (int k = 0; have && k < K_COUNT; k++) {
			kid[k] = brt_btf_find(vml, knames[k], BTF_KIND_FUNC);
			have = kid[k] > 0;
		}
		if (have)
			kfunc_rules();
		else
			printf("dynptr kfuncs: skipped: kernel BTF without them\n");
		for (int k = K_COUNT; have && k < K_ALL; k++) {
			kid[k] = brt_btf_find(vml, knames[k], BTF_KIND_FUNC);
			have = kid[k] > 0;
		}
		if (have)
			copy_memset_rules();
		else
			printf("bpf_dynptr_copy/memset: skipped: kernel BTF without them\n");
	}
	printf("%d cases compared with the kernel, %d test runs\n", compared, runs);
	return t_done();
}
