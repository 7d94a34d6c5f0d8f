/* find_vma: bpf_find_vma(current, addr, on_vma, &out, flags) from a raw tracepoint, its
 * address and flags read from `in`; the helper's answer, the
 * callback's calls and the mapping's bounds it saw go to `out` (test:
 * tests/trace/test_find_vma_oracle.c, the same runs on the kernel and on bpfrt). */
#include "bpfrt_progs.h"

/* the first two words of 6.18's struct vm_area_struct (read through the kernel's BTF) */
struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
};
struct task_struct;

struct in {
	unsigned long long addr;
	unsigned long long flags;
};

struct out {
	long ret;
	long calls;
	unsigned long long start, end;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct in);
} in SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct out);
} out SEC(".maps");

BPFRT_HELPER(long, bpf_find_vma,
	     (struct task_struct *task, unsigned long long addr, void *callback_fn,
	      void *callback_ctx, unsigned long long flags), BPF_FUNC_find_vma);
BPFRT_HELPER(struct task_struct *, bpf_get_current_task_btf, (void),
	     BPF_FUNC_get_current_task_btf);

static long on_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct out *o = data;

	o->calls++;
	o->start = vma->vm_start;
	o->end = vma->vm_end;
	return 0;
}

SEC("raw_tp/find_vma")
int find(void *ctx)
{
	struct out o = { 0 };
	struct in *i;
	int k = 0;

	i = bpf_map_lookup_elem(&in, &k);
	if (!i)
		return 0;
	o.ret = bpf_find_vma(bpf_get_current_task_btf(), i->addr, on_vma, &o, i->flags);
	bpf_map_update_elem(&out, &k, &o, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
