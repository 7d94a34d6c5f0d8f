/* ucopy.c - copies that answer -EFAULT for a bad address instead of crashing: what the
 * kernel's copy_from_user() does with its exception table, done in user space.
 *
 * Theory of operation.  The copy is one `rep movsb` in a leaf function written in
 * assembly (brt_ucopy_raw below).  A SIGSEGV or SIGBUS raised by the kernel (si_code > 0:
 * a real fault, not kill()) whose faulting instruction is exactly that `rep movsb` is
 * ours: the handler moves the saved instruction pointer to the function's fixup, which
 * returns -EFAULT, and the interrupted copy returns as if the access had failed.  Only
 * the faulting thread runs the handler, and only a copy in progress can fault at that
 * address, so no per-thread state is needed (thread-local storage is not async-signal
 * safe in a dlopen()ed library).  Any other fault goes to the handler that was there
 * before ours (the application's, a sanitizer's), or to the default action: the process
 * dies at the same instruction with the same signal as it would without bpfrt.
 *
 * The handler is installed on the first copy.  An application that installs its own
 * SIGSEGV/SIGBUS handler later without chaining to the previous one (which sanitizers,
 * JVMs and crash reporters do) takes a bad pointer as a crash again, and a thread that
 * blocks SIGSEGV is killed by the kernel on any fault; BPFRT_UCOPY=syscall, read once,
 * selects the older copies through process_vm_readv()/process_vm_writev() (the kernel
 * does the access; 2 system calls per copy), as does any architecture without the
 * assembly here.
 *
 * The same guard covers single aligned 32-bit loads, stores and compare-and-swaps
 * (brt_uload32/brt_ustore32/brt_ucas32) for shared files another process may truncate
 * under our mapping (docs/SECURITY.md, "Files mapped from $BPFRT_FS and truncation"):
 * their callers do without the file when brt_ufault_ready() says the handler is not
 * there, since no system call can stand in for an atomic compare-and-swap.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "util/util.h"

#if defined(__x86_64__) && defined(__linux__)
#define HAVE_FAULT_COPY 1
/* int brt_ucopy_raw(void *dst, const void *src, size_t len): 0, or -EFAULT (-14) after a
 * fault at brt_ucopy_insn, where the handler sends the thread to brt_ucopy_fixup.  No
 * stack frame: the fixup's ret returns to the caller whatever the fault interrupted. */
__asm__(".text\n"
	".p2align 4\n"
	".globl brt_ucopy_raw, brt_ucopy_insn, brt_ucopy_fixup\n"
	".hidden brt_ucopy_raw, brt_ucopy_insn, brt_ucopy_fixup\n"
	".type brt_ucopy_raw, @function\n"
	"brt_ucopy_raw:\n"
	"	mov %rdx, %rcx\n"
	"brt_ucopy_insn:\n"
	"	rep movsb\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"brt_ucopy_fixup:\n"
	"	mov $-14, %eax\n"
	"	ret\n"
	".size brt_ucopy_raw, . - brt_ucopy_raw\n"
	/* One aligned 4-byte access each (atomic, and ordered as x86 orders every load
	 * and store: a load acquires, a store releases; the call is a compiler barrier),
	 * at a labelled instruction whose fault the handler sends to brt_ucopy_fixup (no
	 * stack frame either).  brt_uload32(p, out), brt_ustore32(p, v) and
	 * brt_ucas32(p, expected, desired): 1 swapped, 0 not (*expected = the word). */
	".p2align 4\n"
	".globl brt_uload32, brt_ustore32, brt_ucas32\n"
	".hidden brt_uload32, brt_ustore32, brt_ucas32\n"
	".type brt_uload32, @function\n"
	"brt_uload32:\n"
	"brt_uload32_insn:\n"
	"	mov (%rdi), %eax\n"
	"	mov %eax, (%rsi)\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	".size brt_uload32, . - brt_uload32\n"
	".type brt_ustore32, @function\n"
	"brt_ustore32:\n"
	"brt_ustore32_insn:\n"
	"	mov %esi, (%rdi)\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	".size brt_ustore32, . - brt_ustore32\n"
	".type brt_ucas32, @function\n"
	"brt_ucas32:\n"
	"	mov (%rsi), %eax\n"
	"brt_ucas32_insn:\n"
	"	lock cmpxchg %edx, (%rdi)\n"
	"	mov %eax, (%rsi)\n"
	"	sete %al\n"
	"	movzbl %al, %eax\n"
	"	ret\n"
	".size brt_ucas32, . - brt_ucas32\n");
__attribute__((visibility("hidden"))) int brt_ucopy_raw(void *dst, const void *src, size_t len);
__attribute__((visibility("hidden"))) extern const char brt_ucopy_insn[], brt_ucopy_fixup[],
	brt_uload32_insn[], brt_ustore32_insn[], brt_ucas32_insn[];

/* the instructions whose fault is an -EFAULT return */
static int fault_insn(greg_t ip)
{
	return ip == (greg_t)(uintptr_t)brt_ucopy_insn ||
	       ip == (greg_t)(uintptr_t)brt_uload32_insn ||
	       ip == (greg_t)(uintptr_t)brt_ustore32_insn ||
	       ip == (greg_t)(uintptr_t)brt_ucas32_insn;
}
#else
#define HAVE_FAULT_COPY 0
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int use_fault_copy; /* set once: the handler is installed and not opted out */

#if HAVE_FAULT_COPY
static struct sigaction old_segv, old_bus;

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	const struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;
	greg_t *ip = &uc->uc_mcontext.gregs[REG_RIP];

	if (si->si_code > 0 && fault_insn(*ip)) {
		*ip = (greg_t)(uintptr_t)brt_ucopy_fixup;
		return;
	}
	if (old->sa_flags & SA_SIGINFO) {
		old->sa_sigaction(sig, si, ctx);
		return;
	}
	if (old->sa_handler == SIG_IGN && si->si_code <= 0)
		return; /* a kill() of an ignored signal */
	if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
		/* Back to the default action: a fault happens again when the instruction
		 * is retried and kills the process there (core dump included); a signal
		 * sent by kill() is raised again, pending until this handler returns. */
		signal(sig, SIG_DFL);
		if (si->si_code <= 0)
			raise(sig);
		return;
	}
	old->sa_handler(sig);
}

static int install(int sig, struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, old);
}
#endif

static void init(void)
{
#if HAVE_FAULT_COPY
	const char *env = getenv("BPFRT_UCOPY");

	if (env && !strcmp(env, "syscall"))
		return;
	if (install(SIGSEGV, &old_segv))
		return;
	if (install(SIGBUS, &old_bus)) {
		sigaction(SIGSEGV, &old_segv, NULL);
		return;
	}
	use_fault_copy = 1;
#endif
}

/* The kernel does the access: an unmapped or protected address is an error return. */
static int vm_copy(void *dst, const void *src, size_t len, int to_remote)
{
	struct iovec local = { .iov_base = to_remote ? (void *)(uintptr_t)src : dst, .iov_len = len };
	struct iovec remote = { .iov_base = to_remote ? dst : (void *)(uintptr_t)src,
			       .iov_len = len };
	ssize_t n = to_remote ? process_vm_writev(getpid(), &local, 1, &remote, 1, 0)
			      : process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && (errno == ENOSYS || errno == EPERM))
		return -ENOSYS;
	return -EFAULT;
}

int brt_ucopy(void *dst, const void *src, size_t len, int dst_is_user)
{
	if (!len)
		return 0;
	pthread_once(&once, init);
#if HAVE_FAULT_COPY
	if (use_fault_copy)
		return brt_ucopy_raw(dst, src, len);
#endif
	return vm_copy(dst, src, len, dst_is_user);
}

int brt_ufault_ready(void)
{
	pthread_once(&once, init);
	return use_fault_copy;
}
