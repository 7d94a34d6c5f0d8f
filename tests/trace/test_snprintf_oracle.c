/* test_snprintf_oracle.c - bpf_snprintf against the kernel: the verifier's check of the
 * constant format (check_bpf_snprintf_call(): bpf_bprintf_prepare()'s language for as
 * many arguments as data_len gives, "Invalid format string"; data_len not a multiple of
 * 8 refused without a message; the format in a frozen read-only array), the arguments'
 * rules (a NULL or uninitialised output buffer, sizes), and test runs of formats both
 * accept, comparing the return value (the bytes the text needs) and the text itself.
 * Pointer formats print differently (the kernel hashes %p, names symbols for %ps/%pS/%pB):
 * those runs are not compared, nor %pus of the program's own memory (a kernel address,
 * which the kernel's user-memory read refuses; all memory is user memory here).  Verdict, errno
 * and the error line must be equal.  Skips without root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "oracle_load.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, i) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

#define VSZ 64

/* A one-element array holding fmt at offset 8 (the first 8 bytes say "garbage!"), made
 * read-only for programs and frozen unless told otherwise; the fd or -errno. */
static int fmt_map(bpf_fn bpf, const char *fmt, size_t len, int freeze)
{
	char value[VSZ] = "garbage!";
	union bpf_attr attr;
	uint32_t key = 0;
	int fd;

	memcpy(value + 8, fmt, len < VSZ - 8 ? len : VSZ - 8);
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = VSZ;
	attr.max_entries = 1;
	attr.map_flags = BPF_F_RDONLY_PROG;
	fd = bpf(BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = (uintptr_t)&key;
	attr.value = (uintptr_t)value;
	if (bpf(BPF_MAP_UPDATE_ELEM, &attr, sizeof(attr)))
		return -errno;
	if (freeze) {
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (uint32_t)fd;
		if (bpf(BPF_MAP_FREEZE, &attr, sizeof(attr)))
			return -errno;
	}
	return fd;
}

/* What a case's program does around the call. */
struct shape {
	int32_t str_size;  /* r2 */
	int32_t data_len;  /* r5 */
	int null_str;      /* r1 = 0 */
	int null_data;     /* r4 = 0 */
	int uninit_str;    /* the output buffer never written before */
	int ret_text;      /* return the text's bytes 0-3 (else snprintf's result) */
	int freeze;        /* 0: the format's map is not frozen */
	int addr;          /* the first argument is the address of "abc" (else -5) */
};

/* r10-64..-33: the output buffer; r10-160..-65: twelve u64 arguments (small numbers, or
 * first the address of a string "abc" at r10-168) */
static size_t build(struct bpf_insn *p, int map_fd, const struct shape *sh)
{
	size_t n = 0;

	p[n++] = ST(BPF_W, 10, -168, 0x00636261); /* "abc" */
	for (int k = 0; k < 12; k++)
		p[n++] = ST(BPF_DW, 10, -160 + 8 * k, k == 0 ? -5 : k * 11);
	if (sh->addr) {
		p[n++] = MOV_X(1, 10);
		p[n++] = ADD_K(1, -168);
		p[n++] = I(BPF_STX | BPF_MEM | BPF_DW, 10, 1, -160, 0);
	}
	if (!sh->uninit_str)
		for (int k = 0; k < 4; k++)
			p[n++] = ST(BPF_DW, 10, -64 + 8 * k, 0x2e2e2e2e);
	if (sh->null_str) {
		p[n++] = MOV_K(1, 0);
	} else {
		p[n++] = MOV_X(1, 10);
		p[n++] = ADD_K(1, -64);
	}
	p[n++] = MOV_K(2, sh->str_size);
	p[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 3, BPF_PSEUDO_MAP_VALUE, 0, map_fd);
	p[n++] = I(0, 0, 0, 0, 8);
	if (sh->null_data) {
		p[n++] = MOV_K(4, 0);
	} else {
		p[n++] = MOV_X(4, 10);
		p[n++] = ADD_K(4, -160);
	}
	p[n++] = MOV_K(5, sh->data_len);
	p[n++] = CALL(BPF_FUNC_snprintf);
	if (sh->ret_text)
		p[n++] = LDX(BPF_W, 0, 10, -64);
	p[n++] = EXIT();
	return n;
}

static void load_run(bpf_fn bpf, uint32_t flags, const char *fmt, size_t flen,
		     const struct shape *sh, struct oracle_res *r)
{
	static unsigned char pkt[64];
	struct bpf_insn prog[64];
	union bpf_attr attr;
	int mfd = fmt_map(bpf, fmt, flen, sh->freeze);
	size_t n;

	r->fd = -1;
	r->err = mfd < 0 ? -mfd : 0;
	r->run_err = -1;
	r->retval = 0;
	snprintf(r->last, sizeof(r->last), "map: %d", mfd < 0 ? -mfd : 0);
	if (mfd < 0)
		return;
	n = build(prog, mfd, sh);
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	attr.prog_flags = flags;
	attr.insns = (uintptr_t)prog;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	pkt[12] = 0x08;
	oracle_load_run(bpf, &attr, 1, pkt, sizeof(pkt), r);
	close(mfd);
}

static const uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
				    BPFRT_ENGINE_JIT
#endif
};

static int compared, runs;

/* cmp_run: 0 no run comparison, 1 errno and retval */
static void check_sh(const char *name, const char *fmt, size_t flen, const struct shape *sh,
		     int cmp_run)
{
	struct oracle_res k, b;

	T_CASE(name);
	load_run(oracle_kernel_bpf, 0, fmt, flen, sh, &k);
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		load_run(bpfrt_bpf, BPFRT_F_ENGINE(engines[e]), fmt, flen, sh, &b);
		if (getenv("SNPRINTF_DUMP"))
			fprintf(stderr, "%s [%u]: kernel %d '%s' run %d/0x%x | bpfrt %d '%s' run %d/0x%x\n",
				name, engines[e], k.err, k.last, k.run_err, k.retval, b.err, b.last,
				b.run_err, b.retval);
		runs += oracle_compare(name, &k, &b, cmp_run ? ORACLE_CMP_RUN : ORACLE_CMP_LOAD,
				       NULL);
		compared++;
		if (k.fd < 0)
			break;
	}
}

/* A format both ways: its result, and the text's first four bytes */
static void check_fmt(const char *fmt, int32_t data_len, int cmp_run, int addr)
{
	struct shape sh = { .str_size = 32, .data_len = data_len, .freeze = 1, .addr = addr };
	char name[160];

	snprintf(name, sizeof(name), "'%s' data_len %d", fmt, data_len);
	check_sh(name, fmt, strlen(fmt) + 1, &sh, cmp_run);
	sh.ret_text = 1;
	snprintf(name, sizeof(name), "'%s' data_len %d, text", fmt, data_len);
	check_sh(name, fmt, strlen(fmt) + 1, &sh, cmp_run);
}

int main(void)
{
	static const struct {
		const char *fmt;
		int32_t data_len;
		int cmp_run;
		int addr;
	} fmts[] = {
		{ "hello", 0, 1 },
		{ "%d", 8, 1 },
		{ "%d", 0, 1 },
		{ "%d %d", 8, 1 },
		{ "%d %u %x %X", 32, 1 },
		{ "%i|%5d|%-5d|%05d", 32, 1 },
		{ "%ld %lld %lu %llx %lX", 40, 1 },
		{ "%c%c", 16, 1 },
		{ "100%%", 0, 1 },
		{ "%%d", 0, 1 },
		{ "%s", 32, 1, 0 },
		{ "%s", 32, 1, 1 },
		{ "%-5s|%5s", 32, 1, 1 },
		{ "%s!", 32, 1, 1 },
		{ "%sx", 32, 1 },
		{ "%pks.", 32, 1, 1 },
		{ "%pus", 32, 1, 0 },
		{ "%pus", 32, 0, 1 }, /* a kernel address for the kernel's user read */
		{ "%pusx", 32, 1 },
		{ "%p", 8, 0 },
		{ "%px|%4px", 16, 1 },
		{ "%px", 8, 1 },
		{ "%pK", 8, 0 },
		{ "%ps", 8, 0 },
		{ "%pS", 8, 0 },
		{ "%pB", 8, 0 },
		{ "%pI4", 32, 1, 1 },
		{ "%pi4", 32, 1, 1 },
		{ "%pI6", 32, 1, 1 },
		{ "%pi6", 32, 1, 1 },
		{ "%pI5", 32, 1 },
		{ "%pZ", 8, 1 },
		{ "%p!", 8, 0 },
		{ "%q", 8, 1 },
		{ "%lq", 8, 1 },
		{ "%lllx", 8, 1 },
		{ "%hd", 8, 1 },
		{ "%.3d", 8, 1 },
		{ "%", 8, 1 },
		{ "tab\there\n", 0, 1 },
		{ "bell\a", 0, 1 },
		{ "%d %d %d %d %d %d %d %d %d %d %d %d", 96, 1 },
		{ "%d %d %d %d %d %d %d %d %d %d %d %d %d", 104, 1 },
		{ "%d", 4, 1 },
		{ "%d", 12, 1 },
		{ "%d", 104, 1 },
	};
	if (geteuid() != 0)
		T_SKIP("needs root for bpf(BPF_PROG_LOAD)");
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		check_fmt(fmts[i].fmt, fmts[i].data_len, fmts[i].cmp_run, fmts[i].addr);
	{
		struct shape sh = { .str_size = 32, .data_len = 8, .freeze = 1 };
		static const char high[] = { '%', 'd', (char)0xc3, (char)0xa9, 0 };

		check_sh("not frozen", "%d", 3, &(struct shape){ .str_size = 32, .data_len = 8 }, 1);
		check_sh("no NUL in the value", "0123456789012345678901234567890123456789"
			 "012345678901234567890123", 56, &sh, 1);
		check_sh("bytes above 0x7f", high, sizeof(high), &sh, 1);
		sh.uninit_str = 1;
		check_sh("uninitialised output buffer", "%d", 3, &sh, 1);
		sh.uninit_str = 0;
		sh.str_size = 0;
		check_sh("size 0", "%d!", 4, &sh, 1);
		sh.null_str = 1;
		check_sh("NULL buffer, size 0", "%d!", 4, &sh, 1);
		sh.str_size = 8;
		check_sh("NULL buffer, size 8", "%d!", 4, &sh, 1);
		sh.null_str = 0;
		sh.str_size = 3;
		sh.ret_text = 1;
		check_sh("truncated to 3", "%d!", 4, &sh, 1);
		sh.str_size = 40;
		check_sh("buffer past the frame's part", "%d!", 4, &sh, 1);
		sh.str_size = 32;
		sh.null_data = 1;
		sh.data_len = 0;
		check_sh("NULL data, no arguments", "ok", 3, &sh, 1);
		sh.data_len = 8;
		check_sh("NULL data, 8 bytes", "%d", 3, &sh, 1);
	}
	printf("%d comparisons with the kernel, %d test runs\n", compared, runs);
	return t_done();
}
