/* test_data_past_end_oracle.c - an lddw whose offset lies outside its global-data section
 * (GNU as 2.40 writes one for every variable not first in its section; docs/CORPUS.md),
 * against the kernel: progs/data_past_end.bpf.o's programs loaded one at a time through
 * libbpf into the kernel (when the system has libbpf), through bpfrt's loader into the
 * kernel (the real bpf(2)) and into bpfrt.  libbpf does not check the offset, so the
 * refusal is the kernel's, at BPF_PROG_LOAD, with its log ("invalid access to map value
 * pointer", "direct value offset ... is not allowed"), or whatever that load meets first
 * (a host that refuses trampolines answers the fentry program EPERM with no log): bpfrt's
 * loader must not refuse it earlier on its own.  The verdicts, errnos, logs and the test
 * run's return value must agree.  Needs root; skipped otherwise. */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elf/elf_test_util.h"
#include "bpfrt.h"
#include "harness.h"
#include "quiet.h"
#include "load_sides.h"

#ifdef BPFRT_TEST_HAVE_LIBBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#endif

/* bpfrt's loader, into the kernel (kernel = 1) or into bpfrt */
static void load_bpfrt(const char *prog, int kernel, struct side *s)
{
	struct bpfrt_object_open_opts o = { .sz = sizeof(o), .kernel = kernel,
					    .log_level = 1, .log_size = LOG_SIZE };
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("data_past_end"), &o);
	struct bpfrt_program *p;

	memset(s, 0, sizeof(*s));
	if (!obj) {
		s->err = errno;
		return;
	}
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p))
		bpfrt_program_set_autoload(p, !strcmp(bpfrt_program_name(p), prog));
	s->err = bpfrt_object_load(obj) ? errno : 0;
	tail_of(s->log, sizeof(s->log), verifier_log_of(obj));
	if (!s->err) {
		int fd = bpfrt_program_fd(bpfrt_object_find_program_by_name(obj, prog));

		s->retval = kernel ? run_kernel(fd) : run_bpfrt(fd);
	}
	bpfrt_object_close(obj);
}

#ifdef BPFRT_TEST_HAVE_LIBBPF
static void load_libbpf(const char *prog, struct side *s)
{
	load_libbpf_side(corpus_path("data_past_end"), prog, NULL, s);
}
#endif

int main(void)
{
	/* err -1: the kernel's own (fentry: EPERM where trampolines are refused, else the
	 * offset's EINVAL), compared between the sides only */
	static const struct {
		const char *prog;
		int err, retval;
		const char *msg;
	} cases[] = {
		{ "in_range", 0, 2, "" },
		{ "past_end", EINVAL, 0, "invalid access to map value pointer, value_size=8 off=8\n" },
		{ "before_start", EINVAL, 0, "direct value offset of 4294967288 is not allowed\n" },
		{ "fentry_past_end", -1, 0, "" },
	};
	size_t len;
	unsigned char *buf = corpus_read("data_past_end", &len);

	if (!buf)
		T_SKIP("corpus not built (clang missing)");
	free(buf);
	if (geteuid() != 0)
		T_SKIP("not root: cannot load into the kernel");
	bpfrt_set_print(t_print_quiet);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct side k, u;

		T_CASE(cases[i].prog);
		load_bpfrt(cases[i].prog, 1, &k);
		load_bpfrt(cases[i].prog, 0, &u);
		if (cases[i].err >= 0)
			T_EQ_INT(cases[i].err, k.err);
		else
			T_ASSERT(k.err == EPERM || k.err == EINVAL);
		T_EQ_INT(k.err, u.err);
		T_EQ_INT(cases[i].retval, k.retval);
		T_EQ_INT(k.retval, u.retval);
		T_EQ_STR(k.log, u.log);
		if (cases[i].msg[0])
			T_CONTAINS(cases[i].msg, u.log);
#ifdef BPFRT_TEST_HAVE_LIBBPF
		struct side l;

		load_libbpf(cases[i].prog, &l);
		T_EQ_INT(k.err, l.err);
		T_EQ_INT(k.retval, l.retval);
		T_EQ_STR(l.log, u.log);
#endif
	}
	return t_done();
}
