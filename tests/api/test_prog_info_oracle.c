/* test_prog_info_oracle.c - OBJ_GET_INFO_BY_FD's func_info and line_info against the
 * kernel's: the same objects of tests/progs (with BTF) loaded by bpfrt's loader into the
 * kernel and into bpfrt; the counts, record sizes and records (function offsets and BTF
 * ids, line offsets, file and source string offsets, line/column) must be equal for
 * programs whose context loads the kernel does not rewrite (that would move offsets).
 * Also the kernel's errors for a wrong record size, and a JIT image reported on both.  Needs root (skipped otherwise).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "elf/elf_test_util.h"
#include "harness.h"
#include "quiet.h"

struct infos {
	struct bpf_prog_info info;
	struct bpf_func_info funcs[32];
	struct bpf_line_info lines[512];
};

/* OBJ_GET_INFO_BY_FD with func and line info buffers, through the kernel or bpfrt */
static int get(int kernel, int fd, struct infos *out)
{
	union bpf_attr a;

	memset(out, 0, sizeof(*out));
	out->info.nr_func_info = 32;
	out->info.func_info_rec_size = sizeof(struct bpf_func_info);
	out->info.func_info = (uint64_t)(uintptr_t)out->funcs;
	out->info.nr_line_info = 512;
	out->info.line_info_rec_size = sizeof(struct bpf_line_info);
	out->info.line_info = (uint64_t)(uintptr_t)out->lines;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(out->info);
	a.info.info = (uint64_t)(uintptr_t)&out->info;
	if (kernel)
		return syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? -errno : 0;
	return bpfrt_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? -errno : 0;
}

static struct bpfrt_object *open_load(const char *file, int kernel)
{
	BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = kernel);
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path(file), &o);

	if (obj && bpfrt_object_load(obj)) {
		bpfrt_object_close(obj);
		return NULL;
	}
	return obj;
}

int main(void)
{
	/* socket filters and subprograms without context loads the kernel rewrites */
	static const char *const files[] = { "deep_calls", "subprog_static", "subprog_global",
					     "loops", "callback" };
	static struct infos k, u;
	int compared = 0;

	if (geteuid() != 0)
		T_SKIP("not root: cannot load into the kernel");
	bpfrt_set_print(t_print_quiet);
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct bpfrt_object *kobj = open_load(files[f], 1), *uobj = open_load(files[f], 0);
		struct bpfrt_program *kp, *up;

		T_CASE(files[f]);
		if (!kobj || !uobj) {
			printf("%s: not loaded on both sides (kernel %s, bpfrt %s)\n", files[f],
			       kobj ? "ok" : "no", uobj ? "ok" : "no");
			bpfrt_object_close(kobj);
			bpfrt_object_close(uobj);
			continue;
		}
		for (kp = bpfrt_object_next_program(kobj, NULL),
		    up = bpfrt_object_next_program(uobj, NULL);
		     kp && up; kp = bpfrt_object_next_program(kobj, kp),
		    up = bpfrt_object_next_program(uobj, up)) {
			T_EQ_INT(0, get(1, bpfrt_program_fd(kp), &k));
			T_EQ_INT(0, get(0, bpfrt_program_fd(up), &u));
			/* both JIT-compiled (bpfrt's default engine for a verified program):
			 * an image, one symbol, one length, as the kernel's counts go */
			T_ASSERT(k.info.jited_prog_len > 0);
			T_ASSERT(k.info.nr_jited_ksyms >= 1);
#ifdef BPFRT_HAVE_JIT
			T_ASSERT(u.info.jited_prog_len > 0 && u.info.nr_jited_ksyms == 1);
#else
			/* a build without the JIT reports no image, as a kernel with
			 * bpf_jit_enable=0 does */
			T_EQ_INT(0, (int)u.info.jited_prog_len);
#endif
			T_EQ_INT((int)u.info.nr_jited_ksyms, (int)u.info.nr_jited_func_lens);
			/* rewritten by the kernel (bpf_loop inlined, context loads converted):
			 * its offsets moved, only the counts compare */
			if (k.info.xlated_prog_len != u.info.xlated_prog_len) {
				T_EQ_INT((int)k.info.nr_func_info, (int)u.info.nr_func_info);
				continue;
			}
			T_EQ_INT((int)k.info.nr_func_info, (int)u.info.nr_func_info);
			T_EQ_INT((int)k.info.nr_line_info, (int)u.info.nr_line_info);
			T_EQ_INT((int)k.info.func_info_rec_size, (int)u.info.func_info_rec_size);
			T_EQ_INT((int)k.info.line_info_rec_size, (int)u.info.line_info_rec_size);
			T_ASSERT(k.info.nr_line_info > 0 && k.info.nr_line_info <= 512 &&
				 k.info.nr_func_info <= 32);
			T_ASSERT(!memcmp(k.funcs, u.funcs,
					 k.info.nr_func_info * sizeof(k.funcs[0])));
			T_ASSERT(!memcmp(k.lines, u.lines,
					 k.info.nr_line_info * sizeof(k.lines[0])));
			compared++;
		}
		T_CASE("a record size the kernel refuses");
		{
			union bpf_attr a;
			struct bpf_prog_info info;
			int r[2];

			for (int side = 0; side < 2; side++) {
				memset(&info, 0, sizeof(info));
				info.func_info_rec_size = 4;
				memset(&a, 0, sizeof(a));
				a.info.bpf_fd = (uint32_t)bpfrt_program_fd(bpfrt_object_next_program(
					side ? uobj : kobj, NULL));
				a.info.info_len = sizeof(info);
				a.info.info = (uint64_t)(uintptr_t)&info;
				r[side] = (side ? bpfrt_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) :
						  (int)syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &a,
							       sizeof(a))) ? -errno : 0;
			}
			T_EQ_INT(-EINVAL, r[0]);
			T_EQ_INT(r[0], r[1]);
		}
		bpfrt_object_close(kobj);
		bpfrt_object_close(uobj);
	}
	printf("programs compared: %d\n", compared);
	T_ASSERT(compared > 0);
	return t_done();
}
