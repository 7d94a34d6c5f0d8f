/* test_load_oracle.c - the kernel as reference for the loader: every corpus program of
 * load_cases.h is loaded into the running kernel through the same relocation and load
 * code (bpf(2) instead of bpfrt_bpf()) and must return the same values as in bpfrt and
 * as its source says.  Needs root; skipped otherwise. */
#include <errno.h>
#include <unistd.h>

#include "elf/elf_test_util.h"
#include "harness.h"
#include "quiet.h"
#include "load_cases.h"

int main(void)
{
	size_t len;
	unsigned char *buf = corpus_read("legacy_map", &len);

	if (!buf)
		T_SKIP("corpus not built (clang missing)");
	free(buf);
	if (geteuid() != 0)
		T_SKIP("not root: cannot load into the kernel");
	bpfrt_set_print(t_print_quiet);
	for (size_t i = 0; i < sizeof(run_cases) / sizeof(run_cases[0]); i++) {
		const struct run_case *c = &run_cases[i];
		struct bpfrt_object *kobj, *uobj;
		uint32_t k[2] = { 0xdead, 0xdead }, u[2] = { 0xbeef, 0xbeef };
		const char *kstep, *ustep;
		int kret, uret;
		int64_t kbtf;

		/* The pinned map would land in /sys/fs/bpf: not this test's business. */
		if (!strcmp(c->file, "pinned_map"))
			continue;
		T_CASE(c->prog);
		kret = test_load_run(corpus_path(c->file), c->prog, 1, k, &kstep, &kobj);
		if (kret == -EPERM && i == 0) {
			bpfrt_object_close(kobj);
			T_SKIP("kernel refuses bpf(): %s", strerror(-kret));
		}
		if (kret) {
			T_FAIL("kernel: %s/%s: %s: %s\n%s", c->file, c->prog, kstep, strerror(-kret),
			       kobj ? bpfrt_object_log(kobj) : "");
			bpfrt_object_close(kobj);
			continue;
		}
		T_EQ_INT(c->retval[0], k[0]);
		T_EQ_INT(c->retval[1], k[1]);
		/* the program went with its object's BTF (clang -g) or without it on both
		 * sides (static_prog's BTF is refused by both); extern_btf's only loads after
		 * the loader's rewrite of .ksyms and .kconfig */
		kbtf = test_prog_btf_id(test_kernel_bpf,
					bpfrt_program_fd(bpfrt_object_find_program_by_name(kobj, c->prog)));
		if (!strcmp(c->file, "extern_btf"))
			T_ASSERT(kbtf > 0);
		uret = test_load_run(corpus_path(c->file), c->prog, 0, u, &ustep, &uobj);
		if (!uret) {
			T_EQ_INT(k[0], u[0]);
			T_EQ_INT(k[1], u[1]);
			T_EQ_INT(kbtf > 0, test_prog_btf_id(bpfrt_bpf, bpfrt_program_fd(
				bpfrt_object_find_program_by_name(uobj, c->prog))) > 0);
		} else if (!c->bpfrt_gap) {
			T_FAIL("bpfrt: %s: %s", ustep, strerror(-uret));
		}
		bpfrt_object_close(kobj);
		bpfrt_object_close(uobj);
	}
	return t_done();
}
