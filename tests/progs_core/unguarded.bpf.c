/* unguarded.bpf.c - a CO-RE read that cannot resolve on any kernel and is not behind an
 * existence check: libbpf poisons it and the verifier refuses the program at that
 * instruction; `guarded` has the same read behind bpf_core_field_exists() and loads. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

struct task_struct___gone {
	int field_gone_since_forever;
} __attribute__((preserve_access_index));

SEC("kprobe/do_nanosleep")
int guarded(void *ctx)
{
	struct task_struct___gone *t = (void *)bpf_get_current_task();

	if (bpf_core_field_exists(t->field_gone_since_forever))
		return BPF_CORE_READ(t, field_gone_since_forever);
	return 0;
}

SEC("kprobe/do_nanosleep")
int unguarded(void *ctx)
{
	struct task_struct___gone *t = (void *)bpf_get_current_task();

	return BPF_CORE_READ(t, field_gone_since_forever);
}
