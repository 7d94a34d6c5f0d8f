/* test_kernel_load.c - the samples' eBPF objects are real eBPF: each one loads into the
 * running kernel too (bpfrt's loader with the .kernel option, so the kernel's verifier
 * checks every program), and into bpfrt.  Skips without root or without the objects.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"

static void load(const char *name, int kernel)
{
	char path[512];
	struct bpfrt_object *obj;

	snprintf(path, sizeof(path), "%s/samples/%s/%s.bpf.o", BPFRT_BINARY_DIR, name, name);
	BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = kernel);
	T_CASE(name);
	obj = bpfrt_object_open_file(path, &o);
	T_ASSERT(obj);
	if (!obj)
		return;
	if (bpfrt_object_load(obj)) {
		T_FAIL("%s into %s: %s", name, kernel ? "the kernel" : "bpfrt", bpfrt_object_log(obj));
	} else {
		T_OK();
		printf("%s: loaded into %s\n", name, kernel ? "the kernel" : "bpfrt");
	}
	bpfrt_object_close(obj);
}

int main(void)
{
	static const char *const samples[] = { "sock_example", "ringbuf", "dropmon",
						"perf_output" };

	if (access(BPFRT_BINARY_DIR "/samples/sock_example/sock_example.bpf.o", R_OK))
		T_SKIP("sample objects not built (no clang for -target bpf)");
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		load(samples[i], 0);
		if (geteuid() == 0)
			load(samples[i], 1);
	}
	if (geteuid() != 0)
		printf("note: kernel loads skipped (not root)\n");
	return t_done();
}
