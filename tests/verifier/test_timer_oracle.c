/* test_timer_oracle.c - bpf_timer (verifier/helper_timer.c, maps/timer.c) checked against the
 * kernel: a map value's struct bpf_timer found from the map's BTF (hand-made here: an int,
 * struct bpf_timer of 16 bytes, a value with it at offset 8), bpf_timer_init /
 * set_callback / start / cancel with the verifier's rules (map BTF, the field's constant
 * offset, the map argument, GPL, tracing types, loads and stores of the field) and the
 * callback walked as an async callback that must return 0.  Verdict, errno and error line
 * must be equal; for programs both accept, an XDP test run's result (init, set_callback,
 * start's and cancel's refusals; callbacks that run are maps.timer_run_oracle's).  Skips
 * without root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf_blob.h"
#include "harness.h"
#include "oracle_load.h"

/* BTF type encodings (the kernel's macros of the same names, not in the uapi header) */
#define BTF_INFO_ENC(kind, kflag, vlen) (((kflag) << 31) | ((kind) << 24) | (vlen))
#define BTF_INT_ENC(enc, off, bits) (((enc) << 24) | ((off) << 16) | (bits))

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define ADD_X(d, s) I(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define AND_K(d, v) I(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, v)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_##f)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define MAP_T (-1000)  /* array of the value with a timer (BTF) */
#define MAP_NB (-1001) /* the same value size, no BTF */
#define MAP_NT (-1002) /* BTF, a value without a timer */
#define MAP_T2 (-1003) /* a second map with a timer */
#define LD_MAP(d, m) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, m), I(0, 0, 0, 0, 0)
/* r2 = the function `off` instructions after the next one */
#define LD_FUNC(d, off) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_FUNC, 0, off), I(0, 0, 0, 0, 0)
/* r0 = value 0 of map m (r6 too), or exit 0: 8 insns */
#define VALUE0(m)                                                                         \
	ST(BPF_W, 10, -4, 0), LD_MAP(1, m), MOV_X(2, 10), ADD_K(2, -4),                  \
		CALL(map_lookup_elem), JNE_K(0, 0, 2), MOV_K(0, 0), EXIT(), MOV_X(6, 0)
/* timer_init(value + 8, map m, clock 1): 6 insns */
#define INIT(m) MOV_X(1, 6), ADD_K(1, 8), LD_MAP(2, m), MOV_K(3, 1), CALL(timer_init)

/* BTF: [1] int, [2] struct bpf_timer (16 bytes), [3] struct val { int x; struct bpf_timer
 * t at 8 } (24 bytes), [4] struct other { int x; int y[5] as ints } (24 bytes) */
static int load_btf(bpf_fn bpf)
{
	static const char strs[] = "\0int\0bpf_timer\0a\0val\0x\0t\0other\0y\0f0\0f1";
	enum { S_INT = 1, S_TIMER = 5, S_A = 15, S_VAL = 17, S_X = 21, S_T = 23, S_OTHER = 25,
	       S_Y = 31, S_F0 = 33, S_F1 = 36 };
	uint32_t types[] = {
		/* [1] int */
		S_INT, BTF_INFO_ENC(BTF_KIND_INT, 0, 0), 4, BTF_INT_ENC(BTF_INT_SIGNED, 0, 32),
		/* [2] struct bpf_timer { int a; } size 16 */
		S_TIMER, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 1), 16, S_A, 1, 0,
		/* [3] struct val { int x; struct bpf_timer t; } size 24 */
		S_VAL, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 2), 24, S_X, 1, 0, S_T, 2, 64,
		/* [4] struct other { int x; int y; } size 24 */
		S_OTHER, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 2), 24, S_X, 1, 0, S_Y, 1, 32,
		/* [5] int (void), [6] static f0, [7] static f1: the functions' func_info */
		0, BTF_INFO_ENC(BTF_KIND_FUNC_PROTO, 0, 0), 1,
		S_F0, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 5,
		S_F1, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 5,
	};
	return btf_blob_load(bpf, types, sizeof(types), strs, sizeof(strs));
}

/* an array of one 24-byte value */
static int mkmap(bpf_fn bpf, int btf, uint32_t vtype, const char *name)
{
	return btf_blob_map(bpf, BPF_MAP_TYPE_ARRAY, 24, 1, 0, btf, vtype, name);
}

struct side {
	bpf_fn bpf;
	int btf;
	int maps[4];
	struct oracle_res r;
};

static struct bpf_insn prog[256];

/* attr for insns on side s: its maps, and func_info when there is a callback */
static void prepare(struct side *s, enum bpf_prog_type type, const char *lic,
		    const struct bpf_insn *insns, size_t n, union bpf_attr *a)
{
	union bpf_attr attr;

	for (size_t i = 0; i < n; i++) {
		prog[i] = insns[i];
		if (prog[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    prog[i].src_reg == BPF_PSEUDO_MAP_FD)
			prog[i].imm = s->maps[-1000 - prog[i].imm];
	}
	memset(&attr, 0, sizeof(attr));
	/* a program with a callback gives both functions' func_info (a callback needs BTF) */
	for (size_t i = 0; i < n; i++)
		if (prog[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    prog[i].src_reg == BPF_PSEUDO_FUNC) {
			static struct bpf_func_info fi[2];

			fi[0] = (struct bpf_func_info){ 0, 6 };
			fi[1] = (struct bpf_func_info){ (uint32_t)(i + 1 + (size_t)prog[i].imm), 7 };
			attr.prog_btf_fd = (uint32_t)s->btf;
			attr.func_info = (uintptr_t)fi;
			attr.func_info_cnt = 2;
			attr.func_info_rec_size = sizeof(fi[0]);
			break;
		}
	attr.prog_type = type;
	attr.insns = (uintptr_t)prog;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t)lic;
	*a = attr;
}

static void load_run(struct side *s, enum bpf_prog_type type, const char *lic,
		     const struct bpf_insn *insns, size_t n, int run)
{
	static unsigned char pkt[64];
	union bpf_attr attr;

	prepare(s, type, lic, insns, n, &attr);
	oracle_load_run(s->bpf, &attr, run, pkt, sizeof(pkt), &s->r);
}

/* side s's log line (at level) of insns (an XDP program) that holds `what`, into line */
static void log_line(struct side *s, const struct bpf_insn *insns, size_t n, int level,
		     const char *what, char *line, size_t len)
{
	static char logbuf[1 << 16];
	union bpf_attr attr;
	const char *at;
	int fd;

	prepare(s, BPF_PROG_TYPE_XDP, "GPL", insns, n, &attr);
	attr.log_buf = (uintptr_t)logbuf;
	attr.log_size = sizeof(logbuf);
	attr.log_level = (uint32_t)level;
	logbuf[0] = 0;
	fd = s->bpf(BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd >= 0)
		close(fd);
	at = strstr(logbuf, what);
	while (at && at > logbuf && at[-1] != '\n')
		at--;
	snprintf(line, len, "%.*s", at ? (int)strcspn(at, "\n") : 0, at ? at : "");
}

static struct side ks, bs;
static int compared, runs;

static void check(const char *name, enum bpf_prog_type type, const char *lic, int run,
		  const struct bpf_insn *insns, size_t n)
{
	T_CASE(name);
	load_run(&ks, type, lic, insns, n, run);
	load_run(&bs, type, lic, insns, n, run);
	runs += oracle_compare(name, &ks.r, &bs.r, run ? ORACLE_CMP_RUN : ORACLE_CMP_LOAD,
			       "TIMER_DUMP");
	compared++;
}
#define C(name, run, ...)                                                                 \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                              \
		check(name, BPF_PROG_TYPE_XDP, "GPL", run, p_, sizeof(p_) / sizeof(p_[0]));  \
	} while (0)
#define CT(name, type, lic, ...)                                                          \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                              \
		check(name, type, lic, 0, p_, sizeof(p_) / sizeof(p_[0]));                 \
	} while (0)

/* The state line after bpf_timer_set_callback: the kernel's init_func_state() of the
 * callback's frame marks the whole state scratched, so the caller's line prints every
 * register and stack slot (r6 the value, fp-8 the key), not only r0 (Calico's
 * calico_tc_skb_ipv4_frag's log showed it).  The program fails after the call (r2 is not
 * readable): a level-1 log keeps only the path that fails, and the callback is walked
 * after the caller's path, from where its state was pushed. */
static void state_line_after_set_callback(void)
{
	const struct bpf_insn p[] = { VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), LD_FUNC(2, 4),
				      CALL(timer_set_callback), MOV_X(0, 2), EXIT(), MOV_K(0, 0),
				      EXIT() };
	char kl[512], bl[512];

	T_CASE("the state line after set_callback");
	log_line(&ks, p, sizeof(p) / sizeof(p[0]), 1, "call bpf_timer_set_callback", kl,
		 sizeof(kl));
	log_line(&bs, p, sizeof(p) / sizeof(p[0]), 1, "call bpf_timer_set_callback", bl,
		 sizeof(bl));
	if (getenv("TIMER_DUMP"))
		fprintf(stderr, "kernel: %s\nbpfrt:  %s\n", kl, bl);
	T_ASSERT(strstr(kl, "R6=") != NULL);
	T_EQ_STR(kl, bl);
	compared++;
}

/* The callback's entry state and the ids after the call: the running kernel gives the
 * callback's r3 (the value) a new id, so a scalar spilled after the call takes the next
 * (Calico's calico_tc_skb_ipv4_frag logs were one id apart from there on); the callback's
 * path starts from an empty state with no parent, so its precision walk reports first_idx
 * 0.  Level 2: the accepted program's whole walk. */
static void ids_after_set_callback(void)
{
	const struct bpf_insn p[] = { VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), LD_FUNC(2, 4),
				      CALL(timer_set_callback), I(BPF_STX | BPF_MEM | BPF_DW, 10, 0,
								 -16, 0),
				      EXIT(), MOV_K(0, 0), EXIT() };
	static const char *const what[] = { "15: (7b) *(u64 *)(r10 -16) = r0", "from 14 to ",
					    "mark_precise: frame0: last_idx" };
	char kl[512], bl[512];

	T_CASE("ids after set_callback, the callback's entry");
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		log_line(&ks, p, sizeof(p) / sizeof(p[0]), 2, what[i], kl, sizeof(kl));
		log_line(&bs, p, sizeof(p) / sizeof(p[0]), 2, what[i], bl, sizeof(bl));
		if (getenv("TIMER_DUMP"))
			fprintf(stderr, "kernel: %s\nbpfrt:  %s\n", kl, bl);
		T_ASSERT(kl[0] != 0);
		T_EQ_STR(kl, bl);
	}
	/* the kernel's spill id: r3's was 1 */
	log_line(&ks, p, sizeof(p) / sizeof(p[0]), 2, what[0], kl, sizeof(kl));
	T_ASSERT(strstr(kl, "fp-16=scalar(id=2)") != NULL);
	compared++;
}

static void rules(void)
{
	/* runs: the timer of value 0 of MAP_T lives across cases, on each side alike */
	C("init", 1, VALUE0(MAP_T), INIT(MAP_T), EXIT());
	C("init again: -EBUSY", 1, VALUE0(MAP_T), INIT(MAP_T), EXIT());
	C("init with a bad clock", 1, VALUE0(MAP_T2), MOV_X(1, 6), ADD_K(1, 8), LD_MAP(2, MAP_T2),
	  MOV_K(3, 2), CALL(timer_init), EXIT());
	C("init with flags past the clocks", 1, VALUE0(MAP_T2), MOV_X(1, 6), ADD_K(1, 8),
	  LD_MAP(2, MAP_T2), MOV_K(3, 17), CALL(timer_init), EXIT());
	C("cancel of a timer never initialised", 1, VALUE0(MAP_T2), MOV_X(1, 6), ADD_K(1, 8),
	  CALL(timer_cancel), EXIT());
	C("set_callback on a timer never initialised", 1, VALUE0(MAP_T2), MOV_X(1, 6),
	  ADD_K(1, 8), LD_FUNC(2, 3), CALL(timer_set_callback), EXIT(), MOV_K(0, 0), EXIT());
	C("start without a callback", 1, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), MOV_K(2, 0),
	  MOV_K(3, 0), CALL(timer_start), EXIT());
	C("set_callback", 1, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), LD_FUNC(2, 3),
	  CALL(timer_set_callback), EXIT(), MOV_K(0, 0), EXIT());
	C("start with bad flags", 1, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), MOV_K(2, 0),
	  MOV_K(3, 4), CALL(timer_start), EXIT());
	C("cancel", 1, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), CALL(timer_cancel), EXIT());
	C("start after cancel: no callback", 1, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8),
	  MOV_K(2, 0), MOV_K(3, 0), CALL(timer_start), EXIT());
	/* the verifier */
	C("init, set_callback, start, cancel", 0, VALUE0(MAP_T), INIT(MAP_T), MOV_X(1, 6),
	  ADD_K(1, 8), LD_FUNC(2, 12), CALL(timer_set_callback), MOV_X(1, 6), ADD_K(1, 8),
	  MOV_K(2, 1000), MOV_K(3, 0), CALL(timer_start), MOV_X(1, 6), ADD_K(1, 8),
	  CALL(timer_cancel), MOV_K(0, 0), EXIT(), LDX(BPF_W, 0, 3, 0), MOV_K(0, 0), EXIT());
	C("callback returns 1", 0, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), LD_FUNC(2, 4),
	  CALL(timer_set_callback), MOV_K(0, 0), EXIT(), MOV_K(0, 1), EXIT());
	C("callback returns a pointer", 0, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), LD_FUNC(2, 4),
	  CALL(timer_set_callback), MOV_K(0, 0), EXIT(), MOV_X(0, 3), EXIT());
	C("callback returns an unknown", 0, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), LD_FUNC(2, 4),
	  CALL(timer_set_callback), MOV_K(0, 0), EXIT(), LDX(BPF_W, 0, 3, 0), EXIT());
	C("callback reads the key and writes the value", 0, VALUE0(MAP_T), MOV_X(1, 6),
	  ADD_K(1, 8), LD_FUNC(2, 4), CALL(timer_set_callback), MOV_K(0, 0), EXIT(),
	  LDX(BPF_W, 4, 2, 0), I(BPF_STX | BPF_MEM | BPF_W, 3, 4, 0, 0), MOV_K(0, 0), EXIT());
	C("callback reads past the key", 0, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8),
	  LD_FUNC(2, 4), CALL(timer_set_callback), MOV_K(0, 0), EXIT(), LDX(BPF_W, 4, 2, 4),
	  MOV_K(0, 0), EXIT());
	C("callback touches the timer", 0, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), LD_FUNC(2, 4),
	  CALL(timer_set_callback), MOV_K(0, 0), EXIT(), LDX(BPF_DW, 4, 3, 8), MOV_K(0, 0),
	  EXIT());
	C("callback reads r4", 0, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), LD_FUNC(2, 4),
	  CALL(timer_set_callback), MOV_K(0, 0), EXIT(), MOV_X(0, 4), EXIT());
	C("timer at offset 0", 0, VALUE0(MAP_T), MOV_X(1, 6), LD_MAP(2, MAP_T), MOV_K(3, 1),
	  CALL(timer_init), EXIT());
	C("timer at a variable offset", 0, VALUE0(MAP_T), LDX(BPF_W, 1, 6, 0), AND_K(1, 8),
	  ADD_X(1, 6), LD_MAP(2, MAP_T), MOV_K(3, 1), CALL(timer_init), EXIT());
	C("map without BTF", 0, VALUE0(MAP_NB), INIT(MAP_NB), EXIT());
	C("map without a timer", 0, VALUE0(MAP_NT), INIT(MAP_NT), EXIT());
	C("init with another map", 0, VALUE0(MAP_T), INIT(MAP_T2), EXIT());
	C("init with the stack", 0, MOV_X(1, 10), ADD_K(1, -16), LD_MAP(2, MAP_T), MOV_K(3, 1),
	  CALL(timer_init), EXIT());
	C("init with a scalar map", 0, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8), MOV_K(2, 0),
	  MOV_K(3, 1), CALL(timer_init), EXIT());
	C("set_callback without a function", 0, VALUE0(MAP_T), MOV_X(1, 6), ADD_K(1, 8),
	  MOV_K(2, 0), CALL(timer_set_callback), EXIT());
	C("load of the timer", 0, VALUE0(MAP_T), LDX(BPF_DW, 0, 6, 8), EXIT());
	C("store into the timer", 0, VALUE0(MAP_T), ST(BPF_DW, 6, 16, 0), MOV_K(0, 0), EXIT());
	C("load next to the timer", 0, VALUE0(MAP_T), LDX(BPF_W, 0, 6, 4), EXIT());
	CT("not GPL", BPF_PROG_TYPE_XDP, "Dual BSD", VALUE0(MAP_T), INIT(MAP_T), EXIT());
	CT("kprobe", BPF_PROG_TYPE_KPROBE, "GPL", VALUE0(MAP_T), INIT(MAP_T), EXIT());
	CT("kprobe, map without a timer", BPF_PROG_TYPE_KPROBE, "GPL", VALUE0(MAP_NT),
	   MOV_K(0, 0), EXIT());
	CT("tc", BPF_PROG_TYPE_SCHED_CLS, "GPL", VALUE0(MAP_T), INIT(MAP_T), MOV_K(0, 0), EXIT());
	CT("socket filter", BPF_PROG_TYPE_SOCKET_FILTER, "GPL", VALUE0(MAP_T), INIT(MAP_T),
	   MOV_K(0, 0), EXIT());
}

int main(void)
{
	int kbtf, bbtf;

	if (geteuid() != 0)
		T_SKIP("not root: bpf_timer needs CAP_BPF");
	ks.bpf = oracle_kernel_bpf;
	bs.bpf = bpfrt_bpf;
	kbtf = load_btf(oracle_kernel_bpf);
	bbtf = load_btf(bpfrt_bpf);
	ks.btf = kbtf;
	bs.btf = bbtf;
	if (kbtf < 0)
		T_SKIP("the kernel refuses the test's BTF (%s)", strerror(errno));
	T_ASSERT(bbtf >= 0);
	ks.maps[0] = mkmap(oracle_kernel_bpf, kbtf, 3, "tmap");
	ks.maps[1] = mkmap(oracle_kernel_bpf, -1, 0, "nobtf");
	ks.maps[2] = mkmap(oracle_kernel_bpf, kbtf, 4, "notimer");
	ks.maps[3] = mkmap(oracle_kernel_bpf, kbtf, 3, "tmap2");
	bs.maps[0] = mkmap(bpfrt_bpf, bbtf, 3, "tmap");
	bs.maps[1] = mkmap(bpfrt_bpf, -1, 0, "nobtf");
	bs.maps[2] = mkmap(bpfrt_bpf, bbtf, 4, "notimer");
	bs.maps[3] = mkmap(bpfrt_bpf, bbtf, 3, "tmap2");
	for (int i = 0; i < 4; i++) {
		if (ks.maps[i] < 0)
			T_SKIP("the kernel refuses map %d (%s)", i, strerror(errno));
		T_ASSERT(bs.maps[i] >= 0);
	}
	rules();
	state_line_after_set_callback();
	ids_after_set_callback();
	printf("%d cases compared with the kernel, %d test runs\n", compared, runs);
	return t_done();
}
