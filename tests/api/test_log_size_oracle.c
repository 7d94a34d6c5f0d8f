/* test_log_size_oracle.c - BPF_PROG_LOAD's log buffer limits against the kernel's
 * (kernel/bpf/log.c, 6.18): log_size up to UINT_MAX >> 2 (1 GiB) is taken and larger is
 * EINVAL; a log that does not fit is -ENOSPC with the buffer holding its end (or its
 * beginning with BPF_LOG_FIXED); log_true_size, after log_size in the attr (Linux 6.4),
 * is written back with the whole log's size whatever the verdict, also with no buffer
 * at all, and a load whose attr holds the last load's log_true_size is taken.  bpfrt kept
 * at most 16 MiB of any log_size (an up-front buffer), so a level-2 log between 16 MiB and
 * the caller's size failed with ENOSPC where the kernel's did not (Tetragon's
 * process_event programs).  Errno, log_true_size and the log text must be equal.  Root
 * only; otherwise skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "bpfrt.h"
#include "harness.h"
#include "oracle_load.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define LOG_TRUE_OFF 140 /* offsetof(union bpf_attr, log_true_size): 6.4's, not this header's */
#define ATTR_SIZE 144    /* offsetofend(union bpf_attr, log_true_size) */
#define BIG (48u << 20)  /* over the 16 MiB bpfrt kept */

struct side {
	int fd, err;
	uint32_t true_size;
	char *log;
};

/* r1 counts to n (a loop the verifier walks n times: a long level-2 log), or, with n 0,
 * a program refused at its first insn */
static struct bpf_insn prog[8];
static size_t prog_n;

static void set_prog(int n)
{
	prog_n = 0;
	if (!n) {
		prog[prog_n++] = I(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 0, 0);
		prog[prog_n++] = I(BPF_ALU64 | BPF_MOV | BPF_X, 0, 5, 0, 0); /* r5 !read_ok */
		prog[prog_n++] = I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		return;
	}
	prog[prog_n++] = I(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 0);
	prog[prog_n++] = I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 1);
	prog[prog_n++] = I(BPF_JMP | BPF_JLT | BPF_K, 1, 0, -2, n);
	prog[prog_n++] = I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	prog[prog_n++] = I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

/* one load through bpf with an attr of ATTR_SIZE bytes, log_true_size preset to pre */
static void load(bpf_fn bpf, uint32_t level, uint32_t size, int with_buf, uint32_t pre,
		 struct side *s)
{
	static unsigned char raw[ATTR_SIZE];
	union bpf_attr *attr = (union bpf_attr *)(void *)raw;

	memset(raw, 0, sizeof(raw));
	attr->prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr->insns = (uintptr_t)prog;
	attr->insn_cnt = (uint32_t)prog_n;
	attr->license = (uintptr_t) "GPL";
	attr->log_level = level;
	attr->log_size = size;
	if (with_buf && size) {
		/* the kernel writes what it writes: a buffer of the whole size, touched only
		 * where the log goes (a 1 GiB one costs its written pages) */
		s->log = malloc(size);
		if (!s->log) {
			T_FAIL("no memory for a %u-byte log", size);
			return;
		}
		s->log[0] = 0;
		attr->log_buf = (uintptr_t)s->log;
	} else {
		s->log = NULL;
	}
	memcpy(raw + LOG_TRUE_OFF, &pre, 4);
	s->fd = bpf(BPF_PROG_LOAD, attr, ATTR_SIZE);
	s->err = s->fd < 0 ? errno : 0;
	memcpy(&s->true_size, raw + LOG_TRUE_OFF, 4);
	if (s->fd >= 0)
		close(s->fd);
}

static void check(const char *name, int n, uint32_t level, uint32_t size, int with_buf,
		  uint32_t pre)
{
	struct side k, b;

	T_CASE(name);
	set_prog(n);
	load(oracle_kernel_bpf, level, size, with_buf, pre, &k);
	load(bpfrt_bpf, level, size, with_buf, pre, &b);
	if (getenv("LOG_SIZE_DUMP"))
		fprintf(stderr, "%s: kernel errno %d true %u log %zu | bpfrt errno %d true %u log %zu\n",
			name, k.err, k.true_size, k.log ? strlen(k.log) : 0, b.err, b.true_size,
			b.log ? strlen(b.log) : 0);
	T_EQ_INT(k.err, b.err);
	T_EQ_INT((int)k.true_size, (int)b.true_size);
	if (k.log && b.log && strcmp(k.log, b.log)) {
		size_t i = 0;

		while (k.log[i] && k.log[i] == b.log[i])
			i++;
		T_FAIL("%s: logs part at byte %zu: kernel '%.40s' bpfrt '%.40s'", name, i,
		       k.log + i, b.log + i);
	}
	free(k.log);
	free(b.log);
}

int main(void)
{
	if (geteuid() != 0)
		T_SKIP("needs root for the kernel's bpf()");
	/* a level-2 log of about 35 MB, 48 MiB offered: both keep it whole */
	check("level 2, a log over 16 MiB in a 48 MiB buffer", 20000, 2, BIG, 1, 0);
	/* the same in 1 MiB: its end kept, or its beginning */
	check("level 2 in 1 MiB: ENOSPC, the end kept", 3000, 2, 1u << 20, 1, 0);
	check("level 2 in 1 MiB, fixed: ENOSPC, the beginning kept", 3000, 2 | 8, 1u << 20, 1,
	      0);
	/* the largest size the kernel takes, and one more */
	check("log_size UINT_MAX >> 2", 10, 1, UINT32_MAX >> 2, 1, 0);
	check("log_size past UINT_MAX >> 2: EINVAL", 10, 1, (UINT32_MAX >> 2) + 1, 1, 0);
	/* a refusal: the log's size written back with a buffer, without one, and too small */
	check("refused, log_true_size", 0, 1, 4096, 1, 0);
	check("refused, no buffer: log_true_size only", 0, 1, 0, 0, 0);
	check("refused, 16 bytes: ENOSPC", 0, 1, 16, 1, 0);
	/* a reload of an attr that holds the last load's log_true_size */
	check("log_true_size given non-zero", 10, 1, 4096, 1, 12345);
	check("no log level: log_true_size 0", 10, 0, 0, 0, 7);
	return t_done();
}
