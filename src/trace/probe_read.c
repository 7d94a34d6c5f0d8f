/* probe_read.c - bpf_probe_read_{kernel,user}[_str](): copies from any address of the
 * process that fail cleanly instead of faulting: brt_ucopy() (util/ucopy.c) turns the
 * fault of an unmapped or unreadable address into an error return.  In
 * a user-space runtime "kernel" and "user" memory are the same address space: both
 * variants read the host process, and the legacy bpf_probe_read() (the seed's
 * load_pointer, generalised) is the same copy.  Like the kernel, a failed copy zeroes the
 * destination and returns -EFAULT.  One exception: a program run on a kernel probe's hit
 * in another process (kprobe.c) reads "user" memory of that process, as the kernel reads
 * current's: process_vm_readv(), page by page.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bpfrt.h"
#include "trace/trace.h"
#include "util/util.h"

#define PAGE 4096u

int brt_trace_copy(void *dst, uint64_t src, size_t len)
{
	if (!len)
		return 0;
	/* the kernel refuses the NULL page outright; so do we, without a system call */
	if (src < PAGE || src + len < src)
		return -EFAULT;
	return brt_ucopy(dst, (const void *)(uintptr_t)src, len, 0) ? -EFAULT : 0;
}

/* The process whose user memory the running program reads: 0 for this one. */
static pid_t user_pid(void)
{
	const struct brt_trace_task *t = brt_trace_get_task();

	return t && t->tgid > 0 && t->tgid != getpid() ? t->tgid : 0;
}

/* brt_trace_copy() from process pid's memory (0: this process). */
static int copy_from(pid_t pid, void *dst, uint64_t src, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)(uintptr_t)src, len };

	if (!pid)
		return brt_trace_copy(dst, src, len);
	if (!len)
		return 0;
	if (src < PAGE || src + len < src)
		return -EFAULT;
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static long copy_str_from(pid_t pid, char *dst, uint64_t src, size_t cap)
{
	size_t done = 0;
	char tmp[256];

	/* through a bounce buffer: like the kernel, nothing past the NUL lands in dst */
	while (done < cap) {
		/* never read past the page the string may end in */
		size_t chunk = PAGE - (size_t)((src + done) % PAGE);
		char *nul;

		if (chunk > cap - done)
			chunk = cap - done;
		if (chunk > sizeof(tmp))
			chunk = sizeof(tmp);
		if (copy_from(pid, tmp, src + done, chunk))
			return -EFAULT;
		nul = memchr(tmp, 0, chunk);
		if (nul) {
			memcpy(dst + done, tmp, (size_t)(nul - tmp) + 1);
			return (long)(done + (size_t)(nul - tmp)) + 1;
		}
		memcpy(dst + done, tmp, chunk);
		done += chunk;
	}
	dst[cap - 1] = 0;
	return (long)cap;
}

long brt_trace_copy_str(char *dst, uint64_t src, size_t cap)
{
	return copy_str_from(0, dst, src, cap);
}

static uint64_t probe_read(pid_t pid, uint64_t r1, uint64_t r2, uint64_t r3,
			   struct bpfrt_run_ctx *ctx)
{
	void *dst = (void *)(uintptr_t)r1;
	size_t size = (size_t)(uint32_t)r2;

	if (!size)
		return 0;
	if (!bpfrt_run_access_ok(ctx, dst, size, 1))
		return (uint64_t)-EFAULT;
	if (copy_from(pid, dst, r3, size)) {
		memset(dst, 0, size);
		return (uint64_t)-EFAULT;
	}
	return 0;
}

/* bpf_probe_read_kernel(dst, size, unsafe_ptr): this process */
uint64_t brt_helper_probe_read_kernel(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r4, (void)r5;
	return probe_read(0, r1, r2, r3, ctx);
}

/* bpf_probe_read_user(dst, size, unsafe_ptr) and the legacy probe_read: the current
 * task's process */
uint64_t brt_helper_probe_read_user(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r4, (void)r5;
	return probe_read(user_pid(), r1, r2, r3, ctx);
}

/* bpf_copy_from_user_task(dst, size, user_ptr, task, flags) (sleepable programs): the
 * task is the stand-in of the calling thread (bpf_get_current_task_btf), so its process's
 * memory; flags -EINVAL, size 0 reads nothing, a failed read zeroes dst: -EFAULT. */
uint64_t brt_helper_copy_from_user_task(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r4;
	if (r5)
		return (uint64_t)-EINVAL;
	return probe_read(user_pid(), r1, r2, r3, ctx);
}

/* The string's length including the NUL (size when truncated), 0 for size 0. */
static uint64_t probe_read_str(pid_t pid, uint64_t r1, uint64_t r2, uint64_t r3,
			       struct bpfrt_run_ctx *ctx)
{
	char *dst = (char *)(uintptr_t)r1;
	size_t size = (size_t)(uint32_t)r2;
	long n;

	if (!size)
		return 0;
	if (!bpfrt_run_access_ok(ctx, dst, size, 1))
		return (uint64_t)-EFAULT;
	n = copy_str_from(pid, dst, r3, size);
	if (n < 0)
		memset(dst, 0, size);
	return (uint64_t)(int64_t)n;
}

/* bpf_probe_read_kernel_str(dst, size, unsafe_ptr): this process */
uint64_t brt_helper_probe_read_kernel_str(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r4, (void)r5;
	return probe_read_str(0, r1, r2, r3, ctx);
}

/* bpf_probe_read_user_str(dst, size, unsafe_ptr) and probe_read_str: the current
 * task's process */
uint64_t brt_helper_probe_read_user_str(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r4, (void)r5;
	return probe_read_str(user_pid(), r1, r2, r3, ctx);
}
