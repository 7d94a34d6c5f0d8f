/* kfunc_oracle_str.c - verifier.kfunc_oracle's string kfuncs (test_kfunc_oracle.c says
 * what it checks): bpf_copy_from_user_str and bpf_copy_from_user_task_str (the test's own
 * strings, truncation, padding, faults, where sleepable kfuncs may not run) and
 * bpf_strcmp ... bpf_strnstr (results, errors, argument widths, the verifier's rules, on
 * every program type, and strings past 65,536 bytes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "kfunc_oracle.h"

/* bpf_copy_from_user_str / bpf_copy_from_user_task_str (sleepable): the source is the
 * test's own memory, which is the current task's user memory for the kernel's run too;
 * the result is (return value << 8) | dst[at], dst 16 bytes of 'a' on the stack */
static const char user_hello[] = "hello";
static const char user_long[] = "hello world, a longer string";

void copy_str_rules(void)
{
	int cfu = kid("bpf_copy_from_user_str"), cfut = kid("bpf_copy_from_user_task_str");
	int from_pid = kid("bpf_task_from_pid"), t_rel = kid("bpf_task_release");
	int dis = kid("bpf_preempt_disable"), en = kid("bpf_preempt_enable");
	int lock = kid("bpf_rcu_read_lock"), unlock = kid("bpf_rcu_read_unlock");
	struct {
		const char *name;
		uint64_t src;
		int32_t sz, flags, at;
		int task; /* 0 bpf_copy_from_user_str, 1 the current task, 2 by getpid() */
	} cases[] = {
		{ "copy_from_user_str", (uintptr_t)user_hello, 16, 0, 5, 0 },
		{ "copy_from_user_str tail untouched", (uintptr_t)user_hello, 16, 0, 6, 0 },
		{ "copy_from_user_str padded", (uintptr_t)user_hello, 16, 1, 12, 0 },
		{ "copy_from_user_str tail past the word", (uintptr_t)user_hello, 16, 0, 8, 0 },
		{ "copy_from_user_str size 8", (uintptr_t)user_hello, 8, 0, 7, 0 },
		{ "copy_from_user_str size 9", (uintptr_t)user_hello, 9, 0, 7, 0 },
		{ "copy_from_user_str truncated", (uintptr_t)user_long, 8, 0, 7, 0 },
		{ "copy_from_user_str truncated, byte before", (uintptr_t)user_long, 8, 0, 6, 0 },
		{ "copy_from_user_str size 1", (uintptr_t)user_hello, 1, 0, 0, 0 },
		{ "copy_from_user_str NULL", 0, 16, 0, 0, 0 },
		{ "copy_from_user_str NULL padded", 0, 16, 1, 3, 0 },
		{ "copy_from_user_str bad flags", (uintptr_t)user_hello, 16, 2, 0, 0 },
		{ "copy_from_user_str kernel address", UINT64_C(0xffffffffff600000), 16, 0, 0, 0 },
		{ "copy_from_user_task_str current", (uintptr_t)user_hello, 16, 0, 5, 1 },
		{ "copy_from_user_task_str tail of the word", (uintptr_t)user_hello, 16, 0, 7, 1 },
		{ "copy_from_user_task_str tail past the word", (uintptr_t)user_hello, 16, 0, 8, 1 },
		{ "copy_from_user_task_str size 8", (uintptr_t)user_hello, 8, 0, 7, 1 },
		{ "copy_from_user_task_str size 7", (uintptr_t)user_hello, 7, 0, 6, 1 },
		{ "copy_from_user_task_str current padded", (uintptr_t)user_hello, 16, 1, 9, 1 },
		{ "copy_from_user_task_str current truncated", (uintptr_t)user_long, 8, 0, 7, 1 },
		{ "copy_from_user_task_str current NULL", 0, 16, 0, 0, 1 },
		{ "copy_from_user_task_str current NULL, byte 1", 0, 16, 0, 1, 1 },
		{ "copy_from_user_task_str current bad flags", (uintptr_t)user_hello, 16, 4, 0, 1 },
		{ "copy_from_user_task_str by pid", (uintptr_t)user_hello, 16, 0, 5, 2 },
		{ "copy_from_user_task_str by pid truncated", (uintptr_t)user_long, 4, 1, 3, 2 },
	};

	if (cfu <= 0 || cfut <= 0 || from_pid <= 0 || t_rel <= 0) {
		printf("copy_from_user_str: skipped: not in the kernel's BTF\n");
		return;
	}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct bpf_insn p[MAXP];
		size_t n = 0;

		for (int o = -16; o < 0; o += 4)
			p[n++] = ST(BPF_W, 10, (int16_t)o, 0x61616161);
		if (cases[c].task == 1) {
			p[n++] = CALLH(BPF_FUNC_get_current_task_btf);
			p[n++] = MOV_X(4, 0);
		} else if (cases[c].task == 2) {
			p[n++] = MOV_K(1, (int32_t)getpid());
			p[n++] = KCALL(from_pid, 0);
			p[n++] = JNE_K(0, 0, 2);
			p[n++] = MOV_K(0, 99);
			p[n++] = EXIT();
			p[n++] = MOV_X(8, 0);
			p[n++] = MOV_X(4, 0);
		}
		p[n++] = MOV_X(1, 10);
		p[n++] = ADD_K(1, -16);
		p[n++] = MOV_K(2, cases[c].sz);
		p[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 3, 0, 0, (int32_t)(uint32_t)cases[c].src);
		p[n++] = I(0, 0, 0, 0, (int32_t)(uint32_t)(cases[c].src >> 32));
		p[n++] = MOV_K(cases[c].task ? 5 : 4, cases[c].flags);
		p[n++] = KCALL(cases[c].task ? cfut : cfu, 0);
		p[n++] = MOV_X(6, 0);
		if (cases[c].task == 2) {
			p[n++] = MOV_X(1, 8);
			p[n++] = KCALL(t_rel, 0);
		}
		p[n++] = I(BPF_ALU | BPF_LSH | BPF_K, 6, 0, 0, 8);
		p[n++] = LDX(BPF_B, 7, 10, (int16_t)(-16 + cases[c].at));
		p[n++] = I(BPF_ALU | BPF_OR | BPF_X, 6, 7, 0, 0);
		p[n++] = MOV_X(0, 6);
		p[n++] = EXIT();
		kcheck(cases[c].name, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
	}
	/* where a sleepable kfunc may not be called */
	{
		struct bpf_insn plain[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
					    MOV_K(2, 8), MOV_K(3, 0), MOV_K(4, 0), KCALL(cfu, 0),
					    MOV_K(0, 0), EXIT() };
		struct bpf_insn preempt[] = { KCALL(dis, 0), ST(BPF_DW, 10, -8, 0), MOV_X(1, 10),
					      ADD_K(1, -8), MOV_K(2, 8), MOV_K(3, 0), MOV_K(4, 0),
					      KCALL(cfu, 0), KCALL(en, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn rcu[] = { KCALL(lock, 0), ST(BPF_DW, 10, -8, 0), MOV_X(1, 10),
					  ADD_K(1, -8), MOV_K(2, 8), MOV_K(3, 0), MOV_K(4, 0),
					  KCALL(cfu, 0), KCALL(unlock, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn size0[] = { MOV_K(1, 0), MOV_K(2, 0), MOV_K(3, 0), MOV_K(4, 0),
					    KCALL(cfu, 0), EXIT() };
		struct bpf_insn past[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
					   MOV_K(2, 9), MOV_K(3, 0), MOV_K(4, 0), KCALL(cfu, 0),
					   MOV_K(0, 0), EXIT() };
		struct bpf_insn null_task[] = { ST(BPF_DW, 10, -8, 0), MOV_X(1, 10), ADD_K(1, -8),
						MOV_K(2, 8), MOV_K(3, 0), MOV_K(4, 0), MOV_K(5, 0),
						KCALL(cfut, 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn uninit_dst[] = { MOV_X(1, 10), ADD_K(1, -8), MOV_K(2, 8),
						 MOV_K(3, 0), MOV_K(4, 0), KCALL(cfu, 0),
						 LDX(BPF_DW, 0, 10, -8), MOV_K(0, 1), EXIT() };

		const struct kcase rules[] = {
			{ "copy_from_user_str not sleepable", BPF_PROG_TYPE_SYSCALL, 0,
			  KPROG(plain) },
			{ "copy_from_user_str in a socket filter", BPF_PROG_TYPE_SOCKET_FILTER, 0,
			  KPROG(plain) },
			{ "copy_from_user_str preemption disabled", BPF_PROG_TYPE_SYSCALL,
			  BPF_F_SLEEPABLE, KPROG(preempt), dis <= 0 || en <= 0 },
			{ "copy_from_user_str in an RCU section", BPF_PROG_TYPE_SYSCALL,
			  BPF_F_SLEEPABLE, KPROG(rcu) },
			{ "copy_from_user_str size 0 of NULL", BPF_PROG_TYPE_SYSCALL,
			  BPF_F_SLEEPABLE, KPROG(size0) },
			{ "copy_from_user_str past the stack", BPF_PROG_TYPE_SYSCALL,
			  BPF_F_SLEEPABLE, KPROG(past) },
			{ "copy_from_user_task_str NULL task", BPF_PROG_TYPE_SYSCALL,
			  BPF_F_SLEEPABLE, KPROG(null_task) },
			{ "copy_from_user_str into uninitialized stack", BPF_PROG_TYPE_SYSCALL,
			  BPF_F_SLEEPABLE, KPROG(uninit_dst) },
		};

		kcheck_cases(rules, sizeof(rules) / sizeof(rules[0]));
	}
}

/* ---- string kfuncs (bpf_strcmp ... bpf_strnstr, every program type) ---- */
enum { S_CMP, S_CASECMP, S_CHR, S_CHRNUL, S_NCHR, S_RCHR, S_LEN, S_NLEN, S_SPN, S_CSPN, S_STR,
       S_NSTR, S_COUNT };
static const char *const str_names[S_COUNT] = { "bpf_strcmp", "bpf_strcasecmp", "bpf_strchr",
						"bpf_strchrnul", "bpf_strnchr", "bpf_strrchr",
						"bpf_strlen", "bpf_strnlen", "bpf_strspn",
						"bpf_strcspn", "bpf_strstr", "bpf_strnstr" };
static int str_ids[S_COUNT];

/* how an argument is set: a string on the stack, a 64-bit constant, or left alone */
enum { A_NONE, A_STR, A_IMM };
struct sarg {
	int kind;
	const char *str; /* A_STR: stored with its NUL at its own slot of the stack */
	int64_t imm;
};
#define SS(x) { A_STR, (x), 0 }
#define SI(x) { A_IMM, NULL, (x) }

/* r1..r3 as args say, the call, then r0 (or r0 >> 32 when high) returned */
static size_t str_prog(struct bpf_insn *p, int fn, const struct sarg *args, int high)
{
	size_t n = 0;

	for (int a = 0; a < 3; a++) {
		int16_t base = (int16_t)(-32 * (a + 1));

		if (args[a].kind == A_STR) {
			size_t len = strlen(args[a].str);

			for (size_t i = 0; i <= len && i < 32; i++)
				p[n++] = ST(BPF_B, 10, (int16_t)(base + (int)i), (unsigned char)args[a].str[i]);
			p[n++] = MOV_X(a + 1, 10);
			p[n++] = ADD_K(a + 1, base);
		} else if (args[a].kind == A_IMM) {
			p[n++] = I(BPF_LD | BPF_IMM | BPF_DW, a + 1, 0, 0, (int32_t)(uint32_t)args[a].imm);
			p[n++] = I(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)args[a].imm >> 32));
		}
	}
	p[n++] = KCALL(str_ids[fn], 0);
	if (high)
		p[n++] = I(BPF_ALU64 | BPF_RSH | BPF_K, 0, 0, 0, 32);
	p[n++] = EXIT();
	return n;
}

struct scase {
	const char *name;
	int fn;
	struct sarg args[3];
};

static void str_rules(void)
{
	static const struct scase cases[] = {
		{ "strcmp equal", S_CMP, { SS("hello world"), SS("hello world") } },
		{ "strcmp less", S_CMP, { SS("hello"), SS("hellp") } },
		{ "strcmp greater", S_CMP, { SS("b"), SS("a") } },
		{ "strcmp prefix", S_CMP, { SS("hello"), SS("hello world") } },
		{ "strcmp bytes above 127", S_CMP, { SS("\xe9"), SS("a") } },
		{ "strcmp NULL", S_CMP, { SI(0), SS("hello") } },
		{ "strcmp NULL second", S_CMP, { SS("hello"), SI(0) } },
		{ "strcmp user pointer", S_CMP, { SI(1), SS("hello") } },
		{ "strcmp kernel fault", S_CMP, { SS("hello"), SI(-1) } },
		{ "strcmp non-canonical", S_CMP, { SI(INT64_MIN), SS("hello") } },
		{ "strcmp high user half", S_CMP, { SI(0x7fff00000000), SS("hello") } },
		{ "strcasecmp equal", S_CASECMP, { SS("HeLLo WORLD"), SS("hello world") } },
		{ "strcasecmp differs", S_CASECMP, { SS("HELLO"), SS("help") } },
		{ "strcasecmp Latin-1", S_CASECMP, { SS("\xc9t\xc9"), SS("\xe9t\xe9") } },
		{ "strcasecmp Latin-1 multiply sign", S_CASECMP, { SS("\xd7"), SS("\xf7") } },
		{ "strcasecmp NULL", S_CASECMP, { SS("a"), SI(0) } },
		{ "strchr found", S_CHR, { SS("hello"), SI('l') } },
		{ "strchr not found", S_CHR, { SS("hello"), SI('x') } },
		{ "strchr the NUL", S_CHR, { SS("hello"), SI(0) } },
		{ "strchr char is the low byte", S_CHR, { SS("hello"), SI(0x7700006c) } },
		{ "strchr NULL", S_CHR, { SI(0), SI('a') } },
		{ "strchr kernel fault", S_CHR, { SI(-1), SI('a') } },
		{ "strchrnul found", S_CHRNUL, { SS("hello"), SI('e') } },
		{ "strchrnul not found", S_CHRNUL, { SS("hello"), SI('x') } },
		{ "strchrnul user pointer", S_CHRNUL, { SI(1), SI('x') } },
		{ "strnchr found", S_NCHR, { SS("hello"), SI(3), SI('l') } },
		{ "strnchr past count", S_NCHR, { SS("hello"), SI(2), SI('l') } },
		{ "strnchr count 0", S_NCHR, { SS("hello"), SI(0), SI('h') } },
		{ "strnchr huge count", S_NCHR, { SS("hello"), SI(INT64_C(1) << 40), SI('o') } },
		{ "strnchr the NUL", S_NCHR, { SS("hello"), SI(6), SI(0) } },
		{ "strnchr count 0 of NULL", S_NCHR, { SI(0), SI(0), SI('a') } },
		{ "strrchr found", S_RCHR, { SS("hello"), SI('l') } },
		{ "strrchr int above 255", S_RCHR, { SS("hello"), SI(0x16c) } },
		{ "strrchr int's low 32 bits", S_RCHR, { SS("hello"), SI(INT64_C(0x50000006c)) } },
		{ "strrchr the NUL", S_RCHR, { SS("hello"), SI(0) } },
		{ "strrchr not found", S_RCHR, { SS("hello"), SI('z') } },
		{ "strrchr kernel fault", S_RCHR, { SI(-1), SI('z') } },
		{ "strlen", S_LEN, { SS("hello world") } },
		{ "strlen empty", S_LEN, { SS("") } },
		{ "strlen NULL", S_LEN, { SI(0) } },
		{ "strlen kernel fault", S_LEN, { SI(-1) } },
		{ "strlen untouched r1 (the context)", S_LEN, { { A_NONE, NULL, 0 } } },
		{ "strnlen shorter", S_NLEN, { SS("hello"), SI(3) } },
		{ "strnlen longer", S_NLEN, { SS("hello"), SI(30) } },
		{ "strnlen 0 of NULL", S_NLEN, { SI(0), SI(0) } },
		{ "strnlen negative count", S_NLEN, { SS("hello"), SI(-1) } },
		{ "strspn", S_SPN, { SS("hello"), SS("ehl") } },
		{ "strspn all", S_SPN, { SS("hello"), SS("oleh") } },
		{ "strspn empty set", S_SPN, { SS("hello"), SS("") } },
		{ "strspn NULL set", S_SPN, { SS("hello"), SI(0) } },
		{ "strcspn", S_CSPN, { SS("hello"), SS("lo") } },
		{ "strcspn none", S_CSPN, { SS("hello"), SS("xyz") } },
		{ "strcspn kernel fault", S_CSPN, { SI(-1), SS("xyz") } },
		{ "strstr found", S_STR, { SS("hello world"), SS("world") } },
		{ "strstr not found", S_STR, { SS("hello world"), SS("worlds") } },
		{ "strstr empty", S_STR, { SS("hello"), SS("") } },
		{ "strstr in empty", S_STR, { SS(""), SS("a") } },
		{ "strstr NULL", S_STR, { SS("hello"), SI(0) } },
		{ "strnstr found", S_NSTR, { SS("hello"), SS("llo"), SI(5) } },
		{ "strnstr cut", S_NSTR, { SS("hello"), SS("llo"), SI(4) } },
		{ "strnstr empty in empty", S_NSTR, { SS(""), SS(""), SI(0) } },
		{ "strnstr len 0", S_NSTR, { SS("hello"), SS("h"), SI(0) } },
		{ "strnstr past the string", S_NSTR, { SS("hi"), SS("hix"), SI(10) } },
		{ "strnstr kernel fault", S_NSTR, { SS("hello"), SI(-1), SI(3) } },
	};
	struct bpf_insn p[MAXP * 2];
	char name[160];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t n = str_prog(p, cases[c].fn, cases[c].args, 0);

		kcheck(cases[c].name, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
	}
	/* r0's upper half of an int result (negative and not) */
	{
		static const struct sarg neg[3] = { SS("hello"), SI('x') }, pos[3] = { SS("hello"),
										      SI('o') };
		size_t n = str_prog(p, S_CHR, neg, 1);

		kcheck("strchr -ENOENT r0 >> 32", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
		n = str_prog(p, S_CHR, pos, 1);
		kcheck("strchr found r0 >> 32", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
	}
	/* other program types (the common set), with test runs where they run */
	{
		static const enum bpf_prog_type types[] = { BPF_PROG_TYPE_SOCKET_FILTER,
							    BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP,
							    BPF_PROG_TYPE_KPROBE,
							    BPF_PROG_TYPE_SCHED_ACT };
		static const struct sarg len[3] = { SS("hello") }, cmp[3] = { SS("ab"), SS("aB") };

		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			size_t n = str_prog(p, S_LEN, len, 0);

			snprintf(name, sizeof(name), "type %d: strlen", (int)types[t]);
			kcheck(name, types[t], 0, p, n);
			n = str_prog(p, S_CASECMP, cmp, 0);
			snprintf(name, sizeof(name), "type %d: strcasecmp", (int)types[t]);
			kcheck(name, types[t], 0, p, n);
		}
	}
	/* the verifier: __ign arguments are not looked at; scalars must be scalars */
	{
		struct bpf_insn uninit_s[] = { MOV_K(2, 'a'), MOV_K(1, 0), KCALL(str_ids[S_CHR], 0),
					       EXIT() };
		struct bpf_insn uninit_c[] = { MOV_K(1, 0), KCALL(str_ids[S_CHR], 0), EXIT() };
		struct bpf_insn ptr_c[] = { MOV_K(1, 0), MOV_X(2, 10), KCALL(str_ids[S_CHR], 0),
					    EXIT() };
		struct bpf_insn ctx_s[] = { MOV_X(6, 1), MOV_K(2, 0), MOV_K(0, 0),
					    KCALL(str_ids[S_CMP], 0), EXIT() };
		struct bpf_insn r0_after[] = { MOV_K(1, 0), KCALL(str_ids[S_LEN], 0),
					       MOV_X(0, 3), EXIT() };
		struct bpf_insn uninit_stack[] = { MOV_X(1, 10), ADD_K(1, -8),
						   KCALL(str_ids[S_LEN], 0), MOV_K(0, 0), EXIT() };
		struct bpf_insn count_ptr[] = { MOV_K(1, 0), MOV_X(2, 10),
						KCALL(str_ids[S_NLEN], 0), EXIT() };
		struct bpf_insn len_uninit[] = { MOV_K(1, 0), MOV_K(2, 0),
						 KCALL(str_ids[S_NSTR], 0), EXIT() };

		const struct kcase rules[] = {
			{ "str: r1 is __ign, r2 set", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
			  KPROG(uninit_s) },
			{ "str: char argument uninitialized", BPF_PROG_TYPE_SYSCALL,
			  BPF_F_SLEEPABLE, KPROG(uninit_c) },
			{ "str: char argument a pointer", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
			  KPROG(ptr_c) },
			{ "str: ctx and NULL compared", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
			  KPROG(ctx_s) },
			{ "str: r3 read after the call", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
			  KPROG(r0_after) },
			{ "str: uninitialized stack as __ign", BPF_PROG_TYPE_SOCKET_FILTER, 0,
			  KPROG(uninit_stack) },
			{ "str: size_t count a pointer", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
			  KPROG(count_ptr) },
			{ "str: size_t len uninitialized", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE,
			  KPROG(len_uninit) },
		};

		kcheck_cases(rules, sizeof(rules) / sizeof(rules[0]));
	}
}

/* Strings longer than the kernel's XATTR_SIZE_MAX (65536): an array map's value of
 * 65537 'a' bytes without a NUL, one map on each side, its value read in place. */
static void str_long_rules(void)
{
	enum { VSZ = 65537 };
	struct {
		const char *name;
		int fn;
		int64_t arg2; /* -1: the value again, -2: "a" on the stack, else a scalar */
	} cases[] = {
		{ "strlen too long", S_LEN, 0 },
		{ "strnlen too long", S_NLEN, 70000 },
		{ "strnlen 65536", S_NLEN, 65536 },
		{ "strnlen 65535", S_NLEN, 65535 },
		{ "strcmp too long", S_CMP, -1 },
		{ "strcasecmp too long", S_CASECMP, -1 },
		{ "strchr too long", S_CHR, 'b' },
		{ "strchrnul too long", S_CHRNUL, 'b' },
		{ "strrchr too long", S_RCHR, 'b' },
		{ "strspn too long", S_SPN, -2 },
		{ "strcspn set too long", S_CSPN, -1 },
		{ "strstr too long", S_STR, -1 },
	};
	static unsigned char val[VSZ];
	int fds[2] = { -1, -1 };
	bpf_fn fns[2] = { oracle_kernel_bpf, bpfrt_bpf };

	memset(val, 'a', sizeof(val));
	for (int side = 0; side < 2; side++) {
		union bpf_attr attr;
		uint32_t key = 0;

		memset(&attr, 0, sizeof(attr));
		attr.map_type = BPF_MAP_TYPE_ARRAY;
		attr.key_size = 4;
		attr.value_size = VSZ;
		attr.max_entries = 1;
		fds[side] = fns[side](BPF_MAP_CREATE, &attr, sizeof(attr));
		if (fds[side] < 0)
			break;
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (uint32_t)fds[side];
		attr.key = (uintptr_t)&key;
		attr.value = (uintptr_t)val;
		if (fns[side](BPF_MAP_UPDATE_ELEM, &attr, sizeof(attr)))
			fds[side] = -1;
	}
	if (fds[0] < 0 || fds[1] < 0) {
		printf("long strings: skipped: no %d-byte array map\n", VSZ);
		return;
	}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct kres r[2];

		for (int side = 0; side < 2; side++) {
			/* r1 = the value (a direct value address: lddw BPF_PSEUDO_MAP_VALUE) */
			struct bpf_insn p[16];
			size_t n = 0;

			p[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_VALUE, 0, fds[side]);
			p[n++] = I(0, 0, 0, 0, 0);
			if (cases[c].arg2 == -1) {
				p[n++] = MOV_X(2, 1);
			} else if (cases[c].arg2 == -2) {
				p[n++] = ST(BPF_H, 10, -8, 'a');
				p[n++] = MOV_X(2, 10);
				p[n++] = ADD_K(2, -8);
			} else {
				p[n++] = MOV_K(2, (int32_t)cases[c].arg2);
			}
			p[n++] = KCALL(str_ids[cases[c].fn], 0);
			p[n++] = EXIT();
			load_run(fns[side], BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n, &r[side]);
		}
		compare(cases[c].name, &r[0], &r[1]);
	}
	close(fds[0]);
	close(fds[1]);
}

void str_kfunc_rules(void)
{
	for (int f = 0; f < S_COUNT; f++) {
		str_ids[f] = kid(str_names[f]);
		if (str_ids[f] <= 0) {
			printf("string kfuncs: skipped: kernel BTF without bpf_strcmp ...\n");
			return;
		}
	}
	str_rules();
	str_long_rules();
}
