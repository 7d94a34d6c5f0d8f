/* test_autocreate_oracle.c - maps left out at load (bpfrt_map__set_autocreate(), libbpf's
 * bpf_map__set_autocreate()), against the kernel: progs/autocreate.bpf.o's three programs
 * loaded with its map `absent` not created, through libbpf into the kernel (when the
 * system has libbpf), through bpfrt's loader into the kernel (the real bpf(2)) and into
 * bpfrt.  The verdicts, errnos, logs (an instruction loading a map not created is libbpf's
 * poison: the log says "BPF map 'absent' is referenced but wasn't created") and the test
 * runs' return values must agree.  Needs root; skipped otherwise. */
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

static const char missing[] = "BPF map 'absent' is referenced but wasn't created";

/* bpfrt's loader, into the kernel (kernel = 1) or into bpfrt */
static void load_bpfrt(const char *prog, int kernel, struct side *s)
{
	struct bpfrt_object_open_opts o = { .sz = sizeof(o), .kernel = kernel,
					    .log_level = 1, .log_size = LOG_SIZE };
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("autocreate"), &o);
	struct bpfrt_program *p;
	struct bpfrt_map *absent;

	memset(s, 0, sizeof(*s));
	if (!obj) {
		s->err = errno;
		return;
	}
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p))
		bpfrt_program_set_autoload(p, !strcmp(bpfrt_program_name(p), prog));
	absent = bpfrt_object_find_map_by_name(obj, "absent");
	T_ASSERT(absent && bpfrt_map__autocreate(absent) == 1);
	T_EQ_INT(0, bpfrt_map__set_autocreate(absent, 0));
	T_EQ_INT(0, bpfrt_map__autocreate(absent));
	s->err = bpfrt_object_load(obj) ? errno : 0;
	tail_of(s->log, sizeof(s->log), verifier_log_of(obj));
	if (!s->err) {
		int fd = bpfrt_program_fd(bpfrt_object_find_program_by_name(obj, prog));

		s->retval = kernel ? run_kernel(fd) : run_bpfrt(fd);
		T_EQ_INT(-1, bpfrt_map__fd(absent));
		T_ASSERT(bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, "kept")) >= 0);
		/* loaded: too late to change */
		T_EQ_INT(-EBUSY, bpfrt_map__set_autocreate(absent, 1));
	}
	bpfrt_object_close(obj);
}

#ifdef BPFRT_TEST_HAVE_LIBBPF
static void no_absent(struct bpf_object *obj)
{
	bpf_map__set_autocreate(bpf_object__find_map_by_name(obj, "absent"), false);
}

static void load_libbpf(const char *prog, struct side *s)
{
	load_libbpf_side(corpus_path("autocreate"), prog, no_absent, s);
}
#endif

int main(void)
{
	static const struct {
		const char *prog;
		int err, retval;
	} cases[] = {
		{ "uses_kept", 0, 7 },
		{ "guarded", 0, 5 },
		{ "uses_absent", EINVAL, 0 },
	};
	size_t len;
	unsigned char *buf = corpus_read("autocreate", &len);

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
		T_EQ_INT(cases[i].err, k.err);
		T_EQ_INT(k.err, u.err);
		T_EQ_INT(cases[i].retval, k.retval);
		T_EQ_INT(k.retval, u.retval);
		/* the same verifier log, the poisoned load named as libbpf names it */
		T_EQ_STR(k.log, u.log);
		if (cases[i].err)
			T_CONTAINS(missing, u.log);
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
