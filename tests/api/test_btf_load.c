/* test_btf_load.c - BPF_BTF_LOAD and BPF_PROG_LOAD's func_info/line_info against the
 * kernel: hand-built BTF blobs (valid, and each broken in one way) must be accepted or
 * refused with the same errno by bpfrt_bpf() and, as root, by bpf(2); a program loaded
 * with line info must show its source lines in bpfrt's verifier log as in the kernel's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "harness.h"

typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

/* Strings: "\0int\0f\0x\0a.c\0return 1;\0" */
static const char strs[] = "\0int\0f\0x\0a.c\0return 1;";
#define S_INT 1
#define S_F 5
#define S_X 7
#define S_FILE 9
#define S_LINE 13

struct blob {
	uint8_t b[2048];
	uint32_t len;
};

/* header + types (words) + strings, with the header's fields overridable */
static void build(struct blob *bl, const uint32_t *types, uint32_t ntw, uint32_t str_len)
{
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h), .type_off = 0,
				.type_len = ntw * 4, .str_off = ntw * 4, .str_len = str_len };

	memcpy(bl->b, &h, sizeof(h));
	memcpy(bl->b + sizeof(h), types, ntw * 4);
	memcpy(bl->b + sizeof(h) + ntw * 4, strs, str_len);
	bl->len = (uint32_t)sizeof(h) + ntw * 4 + str_len;
}

#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (vlen))
/* [1] int, [2] int (void) proto, [3] FUNC f -> [2] */
static const uint32_t good[] = {
	S_INT, INFO(BTF_KIND_INT, 0), 4, (BTF_INT_SIGNED << 24) | 32,
	0, INFO(BTF_KIND_FUNC_PROTO, 0), 1,
	S_F, INFO(BTF_KIND_FUNC, 0) | (BTF_FUNC_GLOBAL), 2,
};

enum { GOOD, BAD_MAGIC, BAD_VERSION, BAD_HDR_LEN, SHORT, STR_NO_NUL, BAD_REF, LOOP, BAD_NAME,
       VAR_VOID, BAD_KIND, FUNC_NOT_PROTO, BAD_FLAGS, NCASES };

static const char *const case_names[NCASES] = {
	"valid", "bad magic", "version 2", "hdr_len past the end", "shorter than a header",
	"strings not NUL-terminated", "reference to a missing type", "typedef loop",
	"name offset past the strings", "VAR of void", "unknown kind 31",
	"FUNC pointing at an INT", "header flags set",
};

static void make_case(int c, struct blob *bl)
{
	uint32_t t[16];
	struct btf_header *h = (struct btf_header *)(void *)bl->b;

	memcpy(t, good, sizeof(good));
	switch (c) {
	case BAD_REF:
		t[9] = 7; /* FUNC -> [7] */
		break;
	case LOOP: { /* [1] typedef x -> [2], [2] typedef x -> [1] */
		const uint32_t loop[] = { S_X, INFO(BTF_KIND_TYPEDEF, 0), 2,
					  S_X, INFO(BTF_KIND_TYPEDEF, 0), 1 };
		build(bl, loop, 6, sizeof(strs));
		return;
	}
	case BAD_NAME:
		t[0] = 500;
		break;
	case VAR_VOID: {
		const uint32_t var[] = { S_X, INFO(BTF_KIND_VAR, 0), 0, BTF_VAR_GLOBAL_ALLOCATED };
		build(bl, var, 4, sizeof(strs));
		return;
	}
	case BAD_KIND:
		t[1] = INFO(31, 0);
		break;
	case FUNC_NOT_PROTO:
		t[9] = 1;
		break;
	default:
		break;
	}
	build(bl, t, sizeof(good) / 4, sizeof(strs));
	if (c == BAD_MAGIC)
		h->magic = 0x1234;
	else if (c == BAD_VERSION)
		h->version = 2;
	else if (c == BAD_HDR_LEN)
		h->hdr_len = 4096;
	else if (c == SHORT)
		bl->len = 10;
	else if (c == STR_NO_NUL)
		h->str_len -= 1; /* drops the terminating NUL */
	else if (c == BAD_FLAGS)
		h->flags = 1;
}

/* The kernel's first-pass rules on FUNC and VAR linkage and on DATASECs (btf/meta.c),
 * which clang's output breaks until a loader rewrites its externs: [1] int, [2] proto,
 * [3] FUNC f, then per case a VAR x of int ([4]) and a DATASEC "a.c" ([5]). */
struct meta_case {
	const char *name;
	uint32_t func_info;  /* [3]'s info word */
	int var;             /* add [4] VAR x */
	uint32_t linkage;    /* its linkage */
	int sec;             /* add [5] DATASEC of size sec_size with members below */
	uint32_t sec_size;
	uint32_t nvs;
	uint32_t vs[2][2];   /* offset, size of members (each VAR x) */
	int err;             /* bpfrt's and the kernel's errno */
	const char *line;    /* the log's last line */
};

#define FUNC_INFO(linkage) INFO(BTF_KIND_FUNC, linkage)
static const struct meta_case meta_cases[] = {
	{ "static FUNC", FUNC_INFO(BTF_FUNC_STATIC), 0, 0, 0, 0, 0, { { 0 } }, 0, NULL },
	{ "extern FUNC", FUNC_INFO(BTF_FUNC_EXTERN), 0, 0, 0, 0, 0, { { 0 } }, -EINVAL,
	  "[3] FUNC f type_id=2 Invalid func linkage" },
	{ "FUNC with kind_flag", FUNC_INFO(BTF_FUNC_GLOBAL) | 1u << 31, 0, 0, 0, 0, 0, { { 0 } },
	  -EINVAL, "[3] FUNC f type_id=2 Invalid btf_info kind_flag" },
	{ "allocated VAR", FUNC_INFO(1), 1, BTF_VAR_GLOBAL_ALLOCATED, 0, 0, 0, { { 0 } }, 0, NULL },
	{ "extern VAR", FUNC_INFO(1), 1, BTF_VAR_GLOBAL_EXTERN, 0, 0, 0, { { 0 } }, -EINVAL,
	  "[4] VAR x type_id=1 linkage=2 Linkage not supported" },
	{ "DATASEC", FUNC_INFO(1), 1, 1, 1, 8, 1, { { 4, 4 } }, 0, NULL },
	{ "DATASEC of size 0", FUNC_INFO(1), 1, 1, 1, 0, 1, { { 0, 4 } }, -EINVAL,
	  "[5] DATASEC a.c size=0 vlen=1 size == 0" },
	{ "DATASEC members overlapping", FUNC_INFO(1), 1, 1, 1, 8, 2, { { 0, 4 }, { 2, 4 } },
	  -EINVAL, "\t type_id=4 offset=2 size=4 Invalid offset" },
	{ "DATASEC member past the end", FUNC_INFO(1), 1, 1, 1, 8, 1, { { 6, 4 } }, -EINVAL,
	  "\t type_id=4 offset=6 size=4 Invalid offset+size" },
};

static void make_meta(const struct meta_case *m, struct blob *bl)
{
	uint32_t t[32], n = sizeof(good) / 4;

	memcpy(t, good, sizeof(good));
	t[8] = m->func_info;
	if (m->var) {
		const uint32_t var[] = { S_X, INFO(BTF_KIND_VAR, 0), 1, m->linkage };

		memcpy(t + n, var, sizeof(var));
		n += 4;
	}
	if (m->sec) {
		t[n++] = S_FILE;
		t[n++] = INFO(BTF_KIND_DATASEC, m->nvs);
		t[n++] = m->sec_size;
		for (uint32_t i = 0; i < m->nvs; i++) {
			t[n++] = 4;
			t[n++] = m->vs[i][0];
			t[n++] = m->vs[i][1];
		}
	}
	build(bl, t, n, sizeof(strs));
}

/* The log's last line. */
static void last_line(const char *log, char *out, size_t cap)
{
	size_t len = strlen(log);
	const char *s;

	while (len && log[len - 1] == '\n')
		len--;
	s = log + len;
	while (s > log && s[-1] != '\n')
		s--;
	snprintf(out, cap, "%.*s", (int)(log + len - s), s);
}

static int btf_load(sys_fn sys, const struct blob *bl, char *log, uint32_t log_size);
static int errno_of(int fd);

/* btf_int_check_meta(): [1] int's size and int word replaced.  GCC 12 (bpf-gcc) writes a
 * plain char as CHAR|SIGNED, which the kernel refuses with ENOTSUPP (tests/gcc). */
static const struct int_case {
	const char *name;
	uint32_t info, size, word;
	int err;
	const char *line;
} int_cases[] = {
	{ "INT CHAR", INFO(BTF_KIND_INT, 0), 1, (BTF_INT_CHAR << 24) | 8, 0, NULL },
	{ "INT BOOL", INFO(BTF_KIND_INT, 0), 1, (BTF_INT_BOOL << 24) | 8, 0, NULL },
	{ "INT CHAR|SIGNED (GCC 12's char)", INFO(BTF_KIND_INT, 0), 1,
	  ((BTF_INT_CHAR | BTF_INT_SIGNED) << 24) | 8, -524,
	  "[1] INT int size=1 bits_offset=0 nr_bits=8 encoding=UNKN Unsupported encoding" },
	{ "INT with kind_flag", INFO(BTF_KIND_INT, 0) | 1u << 31, 4, (BTF_INT_SIGNED << 24) | 32,
	  -EINVAL, "[1] INT int size=4 bits_offset=0 nr_bits=32 encoding=SIGNED Invalid btf_info "
	  "kind_flag" },
	{ "INT with vlen", INFO(BTF_KIND_INT, 1), 4, (BTF_INT_SIGNED << 24) | 32, -EINVAL,
	  "[1] INT int size=4 bits_offset=0 nr_bits=32 encoding=SIGNED vlen != 0" },
	{ "INT int_data past its mask", INFO(BTF_KIND_INT, 0), 4,
	  (1u << 28) | (BTF_INT_SIGNED << 24) | 32, -EINVAL, "[1] INT int Invalid int_data:11000020" },
	{ "INT of 129 bits", INFO(BTF_KIND_INT, 0), 16, (1u << 16) | 128, -EINVAL,
	  "[1] INT int size=16 bits_offset=1 nr_bits=128 encoding=(none) nr_bits exceeds 128" },
	{ "INT wider than its size", INFO(BTF_KIND_INT, 0), 4, 40, -EINVAL,
	  "[1] INT int size=4 bits_offset=0 nr_bits=40 encoding=(none) nr_bits exceeds type_size" },
};

static void int_rules(int kernel)
{
	static char log[65536], blog[65536];
	char line[256];
	struct blob bl;
	uint32_t t[sizeof(good) / 4];

	for (size_t i = 0; i < sizeof(int_cases) / sizeof(int_cases[0]); i++) {
		const struct int_case *c = &int_cases[i];

		T_CASE(c->name);
		memcpy(t, good, sizeof(good));
		t[1] = c->info;
		t[2] = c->size;
		t[3] = c->word;
		build(&bl, t, sizeof(good) / 4, sizeof(strs));
		for (int k = 0; k <= kernel; k++) {
			log[0] = 0;
			T_EQ_INT(c->err, errno_of(btf_load(k ? kernel_bpf : bpfrt_bpf, &bl, log,
							   sizeof(log))));
			last_line(log, line, sizeof(line));
			if (c->line)
				T_EQ_STR(c->line, line);
			/* the whole log: the header and a line per type checked */
			if (!k)
				snprintf(blog, sizeof(blog), "%s", log);
			else
				T_EQ_STR(log, blog);
		}
	}
}

/* A log too small for the whole text (the header and a line per type): ENOSPC, even for
 * BTF that loads, with btf_log_true_size the size it needed; the buffer keeps the log's end
 * (level 1: rotating) or its beginning (level 1|8: BPF_LOG_FIXED), as the kernel's. */
static void small_log(int kernel)
{
	struct blob bl;

	build(&bl, good, sizeof(good) / 4, sizeof(strs));
	for (uint32_t level = 1; level <= 9; level += 8) {
		char log[2][24];
		uint32_t true_size[2] = { 0, 0 };
		int err[2] = { 0, 0 };

		T_CASE(level == 1 ? "a 24-byte log, rotating" : "a 24-byte log, fixed");
		for (int k = 0; k <= kernel; k++) {
			union bpf_attr a;
			int fd;

			memset(&a, 0, sizeof(a));
			a.btf = (uint64_t)(uintptr_t)bl.b;
			a.btf_size = bl.len;
			a.btf_log_buf = (uint64_t)(uintptr_t)log[k];
			a.btf_log_size = sizeof(log[k]);
			a.btf_log_level = level;
			fd = (k ? kernel_bpf : bpfrt_bpf)(BPF_BTF_LOAD, &a, sizeof(a));
			err[k] = errno_of(fd);
			/* btf_log_true_size follows btf_log_level (Linux 6.4) */
			memcpy(&true_size[k], (const char *)&a.btf_log_level + 4, 4);
		}
		T_EQ_INT(-ENOSPC, err[0]);
		T_ASSERT(true_size[0] > sizeof(log[0]));
		/* the end: FUNC f's line; the beginning: the header's first */
		T_ASSERT(level == 1 ? strlen(log[0]) == sizeof(log[0]) - 1 &&
					      !strcmp(log[0] + sizeof(log[0]) - 11, "type_id=2\n")
				    : !strncmp(log[0], "magic: 0xeb9f\n", 14));
		if (kernel) {
			T_EQ_INT(err[1], err[0]);
			T_EQ_INT((int)true_size[1], (int)true_size[0]);
			T_EQ_STR(log[1], log[0]);
		}
	}
}

/* btf_resolve()'s depth: [1] int, then structs [2]..[n+1], each holding the next by value
 * (the last an int): resolving [2] descends through all n at once (they come after it), at
 * most 32 (MAX_RESOLVE_DEPTH), else E2BIG on [2]'s line.  bpfrt had accepted any depth. */
static void resolve_depth(int kernel)
{
	static const uint32_t depths[] = { 32, 33 };
	static char log[2][65536];
	uint32_t t[4 + 34 * 6];
	struct blob bl;

	for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		uint32_t n = 0, depth = depths[d];
		int err[2] = { 0, 0 };
		char line[256];

		T_CASE(depth == 32 ? "structs nested 32 deep" : "structs nested 33 deep");
		t[n++] = S_INT;
		t[n++] = INFO(BTF_KIND_INT, 0);
		t[n++] = 4;
		t[n++] = (BTF_INT_SIGNED << 24) | 32;
		for (uint32_t i = 0; i < depth; i++) {
			t[n++] = S_X;
			t[n++] = INFO(BTF_KIND_STRUCT, 1);
			t[n++] = 4;
			t[n++] = S_X;
			t[n++] = i + 1 < depth ? i + 3 : 1; /* [i + 2] holds [i + 3] */
			t[n++] = 0;
		}
		if (n * 4 + sizeof(struct btf_header) + sizeof(strs) > sizeof(bl.b)) {
			T_FAIL("blob too small for %u words", n);
			return;
		}
		build(&bl, t, n, sizeof(strs));
		for (int k = 0; k <= kernel; k++) {
			log[k][0] = 0;
			err[k] = errno_of(btf_load(k ? kernel_bpf : bpfrt_bpf, &bl, log[k],
						   sizeof(log[k])));
		}
		T_EQ_INT(depth == 32 ? 0 : -E2BIG, err[0]);
		last_line(log[0], line, sizeof(line));
		if (depth == 33)
			T_EQ_STR("[2] STRUCT x size=4 vlen=1 Exceeded max resolving depth:32", line);
		if (kernel) {
			T_EQ_INT(err[1], err[0]);
			T_EQ_STR(log[1], log[0]);
		}
	}
}

static void meta_rules(int kernel)
{
	static char log[65536], blog[65536];
	char line[256];
	struct blob bl;

	for (size_t i = 0; i < sizeof(meta_cases) / sizeof(meta_cases[0]); i++) {
		const struct meta_case *m = &meta_cases[i];

		T_CASE(m->name);
		make_meta(m, &bl);
		log[0] = 0;
		T_EQ_INT(m->err, errno_of(btf_load(bpfrt_bpf, &bl, log, sizeof(log))));
		snprintf(blog, sizeof(blog), "%s", log);
		last_line(log, line, sizeof(line));
		if (m->line)
			T_EQ_STR(m->line, line);
		if (!kernel)
			continue;
		log[0] = 0;
		T_EQ_INT(m->err, errno_of(btf_load(kernel_bpf, &bl, log, sizeof(log))));
		/* the whole log: the header and a line per type checked */
		T_EQ_STR(log, blog);
		last_line(log, line, sizeof(line));
		if (m->line)
			T_EQ_STR(m->line, line);
	}
}

static int btf_load(sys_fn sys, const struct blob *bl, char *log, uint32_t log_size)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)bl->b;
	a.btf_size = bl->len;
	a.btf_log_buf = (uint64_t)(uintptr_t)log;
	a.btf_log_size = log ? log_size : 0;
	a.btf_log_level = log ? 1 : 0;
	fd = sys(BPF_BTF_LOAD, &a, sizeof(a));
	return fd;
}

/* r0 = 1; exit, with func_info (FUNC f) and line_info as given. */
static int prog_load(sys_fn sys, int btf_fd, const struct bpf_line_info *li, uint32_t nli,
		     uint32_t func_cnt, char *log, uint32_t log_size)
{
	struct bpf_insn insns[] = {
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};
	struct bpf_func_info fi[2] = { { 0, 3 }, { 1, 3 } };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = log_size;
	a.log_level = 2; /* level 1 keeps only the summary of a program that loads */
	a.prog_btf_fd = (uint32_t)btf_fd;
	a.func_info = (uint64_t)(uintptr_t)fi;
	a.func_info_cnt = func_cnt;
	a.func_info_rec_size = sizeof(fi[0]);
	a.line_info = (uint64_t)(uintptr_t)li;
	a.line_info_cnt = nli;
	a.line_info_rec_size = sizeof(*li);
	return sys(BPF_PROG_LOAD, &a, sizeof(a));
}

static int errno_of(int fd)
{
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -errno;
}

#define NPROG 5
static const char *const prog_names[NPROG] = {
	"func and line info", "line insn_off past the end", "lines out of order",
	"two func_info for one function", "bad line string offset",
};

static void prog_cases(sys_fn sys, int results[NPROG], char *log0, size_t cap)
{
	struct bpf_line_info ok[] = { { 0, S_FILE, S_LINE, (7 << 10) | 2 } };
	struct bpf_line_info past[] = { { 0, S_FILE, S_LINE, 7 << 10 }, { 5, S_FILE, S_LINE, 0 } };
	struct bpf_line_info order[] = { { 1, S_FILE, S_LINE, 7 << 10 }, { 0, S_FILE, S_LINE, 0 } };
	struct bpf_line_info badstr[] = { { 0, S_FILE, 999, 7 << 10 } };
	struct blob bl;
	char log[4096];
	int btf;

	make_case(GOOD, &bl);
	btf = btf_load(sys, &bl, NULL, 0);
	T_ASSERT(btf >= 0);
	log0[0] = 0;
	results[0] = errno_of(prog_load(sys, btf, ok, 1, 1, log0, (uint32_t)cap));
	results[1] = errno_of(prog_load(sys, btf, past, 2, 1, log, sizeof(log)));
	results[2] = errno_of(prog_load(sys, btf, order, 2, 1, log, sizeof(log)));
	results[3] = errno_of(prog_load(sys, btf, ok, 1, 2, log, sizeof(log)));
	results[4] = errno_of(prog_load(sys, btf, badstr, 1, 1, log, sizeof(log)));
	if (btf >= 0)
		close(btf);
}

int main(void)
{
	int ours[NCASES], theirs[NCASES], pours[NPROG], ptheirs[NPROG];
	char tmpdir[] = "/tmp/bpfrt-btf-XXXXXX", ulog[4096], klog[4096], log[1024];
	struct blob bl;
	int probe, kernel;

	if (!t_scratch_dir(tmpdir))
		return 1;
	setenv("BPFRT_FS", tmpdir, 1);
	probe = geteuid() == 0 ? (make_case(GOOD, &bl), btf_load(kernel_bpf, &bl, NULL, 0)) : -1;
	kernel = probe >= 0;
	if (kernel)
		close(probe);
	else
		printf("note: kernel comparison skipped (no BPF_BTF_LOAD)\n");
	for (int c = 0; c < NCASES; c++) {
		T_CASE(case_names[c]);
		make_case(c, &bl);
		log[0] = 0;
		ours[c] = errno_of(btf_load(bpfrt_bpf, &bl, log, sizeof(log)));
		T_EQ_INT(c == GOOD ? 0 : c == LOOP ? -EEXIST :
			 c == BAD_VERSION || c == BAD_FLAGS ? -524 /* ENOTSUPP */ : -EINVAL, ours[c]);
		if (c != GOOD)
			T_ASSERT(log[0] != 0); /* the reason is in the log */
		if (kernel) {
			make_case(c, &bl);
			theirs[c] = errno_of(btf_load(kernel_bpf, &bl, NULL, 0));
			T_EQ_INT(theirs[c], ours[c]);
		}
	}
	meta_rules(kernel);
	int_rules(kernel);
	small_log(kernel);
	resolve_depth(kernel);
	T_CASE("btf_size over 16 MiB");
	{
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.btf = (uint64_t)(uintptr_t)bl.b;
		a.btf_size = (16u << 20) + 1;
		T_EQ_INT(-E2BIG, errno_of(bpfrt_bpf(BPF_BTF_LOAD, &a, sizeof(a))));
		T_CASE("log buffer without a size");
		a.btf_size = bl.len;
		a.btf_log_buf = (uint64_t)(uintptr_t)log;
		a.btf_log_level = 1;
		T_EQ_INT(-EINVAL, errno_of(bpfrt_bpf(BPF_BTF_LOAD, &a, sizeof(a))));
		if (kernel)
			T_EQ_INT(-EINVAL, errno_of(kernel_bpf(BPF_BTF_LOAD, &a, sizeof(a))));
	}
	prog_cases(bpfrt_bpf, pours, ulog, sizeof(ulog));
	{
		static const int expected[NPROG] = { 0, -EINVAL, -EINVAL, -EINVAL, -EINVAL };

		for (int i = 0; i < NPROG; i++) {
			T_CASE(prog_names[i]);
			T_EQ_INT(expected[i], pours[i]);
		}
	}
	T_CASE("source line in the verifier log");
	T_CONTAINS("; return 1; @ a.c:7\n0: (b7) r0 = 1", ulog);
	if (kernel) {
		prog_cases(kernel_bpf, ptheirs, klog, sizeof(klog));
		for (int i = 0; i < NPROG; i++) {
			T_CASE(prog_names[i]);
			T_EQ_INT(ptheirs[i], pours[i]);
		}
		T_CASE("kernel log has the same source line");
		T_CONTAINS("; return 1; @ a.c:7\n0: (b7) r0 = 1", klog);
	}
	rmdir(tmpdir);
	return t_done();
}
