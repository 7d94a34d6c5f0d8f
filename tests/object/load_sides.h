/* load_sides.h - one side of a loader oracle (test_autocreate_oracle.c,
 * test_data_past_end_oracle.c): a program of tests/progs loaded alone through libbpf,
 * through bpfrt's loader into the kernel, or into bpfrt, with its errno, its log's last
 * lines and the test run's return value on a zeroed 64-byte packet. */
#ifndef BPFRT_TESTS_OBJECT_LOAD_SIDES_H
#define BPFRT_TESTS_OBJECT_LOAD_SIDES_H

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "bpfrt.h"

#define LOG_SIZE (1u << 20)

struct side {
	int err;        /* 0 or the load's errno */
	int retval;     /* the test run's, when loaded */
	char log[4096]; /* the level-1 log's last lines */
};

static inline void tail_of(char *dst, size_t n, const char *log)
{
	size_t len = strlen(log), from = len >= n ? len - (n - 1) : 0;

	memcpy(dst, log + from, len - from);
	dst[len - from] = 0;
}

static inline int run_kernel(int fd)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	if (syscall(__NR_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a)))
		return -errno;
	return (int)a.test.retval;
}

static inline int run_bpfrt(int fd)
{
	unsigned char pkt[64] = { 0 };
	struct bpfrt_test_run_opts o = { .sz = sizeof(o), .data_in = pkt,
					 .data_size_in = sizeof(pkt) };
	int err = bpfrt_prog_test_run_opts(fd, &o);

	return err ? err : (int)o.retval;
}

/* The log bpfrt's loader kept, as libbpf's log buffer holds it: the loader's own line
 * first ("prog 'x' (...): BPF_PROG_LOAD: ..."), then the verifier's log. */
static inline const char *verifier_log_of(const struct bpfrt_object *obj)
{
	const char *log = bpfrt_object_log(obj) ? bpfrt_object_log(obj) : "";

	if (!strncmp(log, "prog '", 6))
		log = strchr(log, '\n') ? strchr(log, '\n') + 1 : "";
	return log;
}

#ifdef BPFRT_TEST_HAVE_LIBBPF
#include <bpf/libbpf.h>

/* The libbpf side: prog of the object at path loaded alone with a level-1 log; prep, if
 * given, changes the object before its load (what the test asks of it). */
static inline void load_libbpf_side(const char *path, const char *prog,
				    void (*prep)(struct bpf_object *), struct side *s)
{
	static char log[LOG_SIZE];
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *p;

	memset(s, 0, sizeof(*s));
	if (libbpf_get_error(obj)) {
		s->err = EINVAL;
		return;
	}
	log[0] = 0;
	bpf_object__for_each_program(p, obj) {
		int mine = !strcmp(bpf_program__name(p), prog);

		bpf_program__set_autoload(p, mine);
		if (mine) {
			bpf_program__set_log_level(p, 1);
			bpf_program__set_log_buf(p, log, sizeof(log));
		}
	}
	if (prep)
		prep(obj);
	s->err = bpf_object__load(obj) ? errno : 0;
	tail_of(s->log, sizeof(s->log), log);
	if (!s->err)
		s->retval = run_kernel(bpf_program__fd(bpf_object__find_program_by_name(obj, prog)));
	bpf_object__close(obj);
}
#endif

#endif
