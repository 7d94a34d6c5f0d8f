/* test_printk.c - bpf_trace_printk(): the kernel's format rules (which formats are
 * refused with -EINVAL, at most three arguments), what each conversion prints, the return
 * value, and the line a program's call appends to the trace pipe.
 */
#include <fcntl.h>
#include <sys/prctl.h>

#include "trace_test.h"
#include "trace/trace.h"
#include "vm/vm.h"

struct pcase {
	const char *fmt;
	uint64_t a1, a2, a3;
	int ret;          /* length, or -EINVAL */
	const char *want; /* the message (NULL when refused) */
};

static const char hello[] = "hi there";

static const struct pcase cases[] = {
	{ "plain", 0, 0, 0, 5, "plain" },
	{ "%d %u %x", (uint64_t)-5, 7, 255, 8, "-5 7 ff" },
	{ "%d", 0x1ffffffffull, 0, 0, 2, "-1" },             /* int: the low 32 bits */
	{ "%ld %lld", (uint64_t)-5000000000ll, 1ull << 40, 0, 25,
	  "-5000000000 1099511627776" },
	{ "%lu %llx %lX", (uint64_t)-1, 0xabcull, 0xabcull, 0, NULL },
	{ "%i|%5d|%-3u", 3, 42, 7, 11, "3|   42|7  " },
	{ "%c%c", 'o', 'k', 0, 2, "ok" },
	{ "100%%", 0, 0, 0, 4, "100%" },
	{ "%s!", (uintptr_t)hello, 0, 0, 9, "hi there!" },
	{ "[%s]", 0, 0, 0, 2, "[]" },                        /* unreadable string: "" */
	{ "%px", 0x1234, 0, 0, 16, "0000000000001234" },
	{ "%p.", 0xbeef, 0, 0, 17, "000000000000beef." },
	{ "%8px|", 0x1234, 0, 0, 9, "    1234|" },
	{ "%ps", 0x1234, 0, 0, 6, "0x1234" },
	{ "%d %d %d %d", 1, 2, 3, -EINVAL, NULL },            /* four conversions */
	{ "%f", 0, 0, 0, -EINVAL, NULL },
	{ "%5.2d", 0, 0, 0, -EINVAL, NULL },                   /* no precision */
	{ "%hd", 0, 0, 0, -EINVAL, NULL },
	{ "%pI4", 0, 0, 0, 7, "0.0.0.0" }, /* an unreadable address: zeros, as the kernel */
	{ "%pI5", 0, 0, 0, -EINVAL, NULL },
	{ "%", 0, 0, 0, -EINVAL, NULL },
	{ "tab\there", 0, 0, 0, 8, "tab\there" },
	{ "bell\a", 0, 0, 0, -EINVAL, NULL },                /* not printable */
};

/* The message part of the last line of the trace pipe, in out. */
static int last_message(char *out, size_t len)
{
	char path[512], buf[65536], *line, *msg;
	ssize_t n;
	int fd;

	bpfrt_trace_pipe_path(path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (buf[n - 1] == '\n')
		buf[n - 1] = 0;
	line = strrchr(buf, '\n');
	line = line ? line + 1 : buf;
	msg = strstr(line, ": bpf_trace_printk: ");
	if (!msg)
		return -1;
	snprintf(out, len, "%s", msg + 20);
	return 0;
}

int main(void)
{
	struct bpfrt_run_ctx rc = { 0 }; /* unchecked run: no regions */
	char msg[2048], text[1024], path[512];
	uint32_t ret = 0;
	int fd;

	tt_private_fs("printk");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		char want[256];
		int64_t r;

		T_CASE(c->fmt);
		r = (int64_t)brt_helper_trace_printk((uintptr_t)c->fmt, strlen(c->fmt) + 1, c->a1,
						     c->a2, c->a3, &rc);
		if (c->ret == -EINVAL) {
			T_EQ_INT(-EINVAL, r);
			continue;
		}
		/* cases without an expected text print what glibc prints for the same */
		if (!c->want)
			snprintf(want, sizeof(want), "%llu %llx %llX", (unsigned long long)c->a1,
				 (unsigned long long)c->a2, (unsigned long long)c->a3);
		T_EQ_STR(c->want ? c->want : want, (last_message(msg, sizeof(msg)), msg));
		T_EQ_INT(strlen(c->want ? c->want : want), r);
	}
	T_CASE("format without a NUL in fmt_size");
	T_EQ_INT(-EINVAL, (int64_t)brt_helper_trace_printk((uintptr_t)"abc", 3, 0, 0, 0, &rc));

	T_CASE("a program's call: a pipe line with comm, tid and message");
	prctl(PR_SET_NAME, "printk-test", 0, 0, 0);
	snprintf(text, sizeof(text),
		 "mov %%r6, %%r1\n"
		 "stdw [%%r10-16], 0\nlddw %%r1, 0x203d207825206425\nstxdw [%%r10-16], %%r1\n"
		 "stdw [%%r10-8], 0\nstb [%%r10-8], 0x21\n"
		 "mov %%r1, %%r10\nadd %%r1, -16\nmov %%r2, 10\nldxdw %%r3, [%%r6+0]\n"
		 "ldxdw %%r4, [%%r6+8]\ncall bpf_trace_printk\nexit\n");
	/* "%d %x = !" */
	fd = tt_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "GPL", text, NULL, 0);
	T_ASSERT(fd >= 0);
	{
		uint64_t args[2] = { 42, 0xbeef };

		T_EQ_INT(0, tt_run(fd, args, 2, &ret));
		T_EQ_INT(11, ret);
	}
	T_EQ_INT(0, last_message(msg, sizeof(msg)));
	T_EQ_STR("42 beef = !", msg);
	{
		char buf[65536];
		int pfd;
		ssize_t n;

		bpfrt_trace_pipe_path(path, sizeof(path));
		pfd = open(path, O_RDONLY);
		n = read(pfd, buf, sizeof(buf) - 1);
		close(pfd);
		buf[n > 0 ? n : 0] = 0;
		snprintf(text, sizeof(text), "printk-test-%d", (int)gettid());
		T_CONTAINS(text, buf);
	}
	close(fd);
	tt_cleanup_fs();
	return t_done();
}
