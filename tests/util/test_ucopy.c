/* test_ucopy.c - brt_ucopy(): good copies both ways; -EFAULT for an unmapped page, a
 * range running into one, PROT_NONE, a read-only destination, a page past the end of a
 * shared file (SIGBUS) and a non-canonical address; faults elsewhere still reach the
 * handler installed before bpfrt's (and kill()'s SIGSEGV too); without any handler a
 * fault still kills the process with SIGSEGV; the same answers with BPFRT_UCOPY=syscall.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "util/util.h"

static sigjmp_buf jb;
static volatile sig_atomic_t app_calls, app_code;
static void *volatile app_addr;
static volatile uintptr_t bad_addr = 16; /* a NULL-page address the compiler cannot see */

static void app_handler(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)ctx;
	app_calls++;
	app_code = si->si_code;
	app_addr = si->si_addr;
	siglongjmp(jb, 1);
}

static void efault_cases(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)pg * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char buf[64], src[64];
	int fd;

	T_ASSERT(m != MAP_FAILED);
	memset(src, 0x5a, sizeof(src));
	T_CASE("read and write");
	T_EQ_INT(0, brt_ucopy(m, src, sizeof(src), 1));
	T_EQ_INT(0, memcmp(m, src, sizeof(src)));
	memset(buf, 0, sizeof(buf));
	T_EQ_INT(0, brt_ucopy(buf, m, sizeof(buf), 0));
	T_EQ_INT(0, memcmp(buf, src, sizeof(src)));
	T_EQ_INT(0, brt_ucopy(buf, NULL, 0, 0));

	T_CASE("unmapped page");
	munmap(m + 2 * pg, (size_t)pg);
	T_EQ_INT(-EFAULT, brt_ucopy(buf, m + 2 * pg, 8, 0));
	T_EQ_INT(-EFAULT, brt_ucopy(m + 2 * pg, src, 8, 1));
	T_CASE("range into an unmapped page");
	T_EQ_INT(-EFAULT, brt_ucopy(buf, m + 2 * pg - 8, 16, 0));
	T_CASE("PROT_NONE");
	mprotect(m + pg, (size_t)pg, PROT_NONE);
	T_EQ_INT(-EFAULT, brt_ucopy(buf, m + pg, 8, 0));
	T_CASE("read-only destination");
	mprotect(m, (size_t)pg, PROT_READ);
	T_EQ_INT(-EFAULT, brt_ucopy(m, "xxxxxxxx", 8, 1));
	T_EQ_INT(0x5a, m[0]);
	T_CASE("non-canonical address");
	T_EQ_INT(-EFAULT, brt_ucopy(buf, (void *)0x8000000000000000ull, 8, 0));
	T_CASE("NULL");
	T_EQ_INT(-EFAULT, brt_ucopy(buf, NULL, 8, 0));
	munmap(m, (size_t)pg * 2);

	T_CASE("past the end of a shared file (SIGBUS)");
	fd = memfd_create("ucopy", 0);
	T_ASSERT(fd >= 0 && !ftruncate(fd, pg));
	m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_ASSERT(m != MAP_FAILED);
	T_EQ_INT(0, brt_ucopy(buf, m, 8, 0));
	T_EQ_INT(-EFAULT, brt_ucopy(buf, m + pg, 8, 0));
	T_EQ_INT(-EFAULT, brt_ucopy(m + pg, src, 8, 1));
	munmap(m, (size_t)pg * 2);
	close(fd);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = app_handler, .sa_flags = SA_SIGINFO };
	int status;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--child")) {
		efault_cases();
		return t_done();
	}
	/* the application's handler first, as a sanitizer or a crash reporter would */
	sigaction(SIGSEGV, &sa, NULL);
	efault_cases();
	T_CASE("the application's handler gets other faults");
	if (!sigsetjmp(jb, 1))
		*(volatile int *)bad_addr = 1;
	T_EQ_INT(1, app_calls);
	T_EQ_INT(SEGV_MAPERR, app_code);
	T_EQ_U64(16, (uintptr_t)app_addr);
	T_CASE("and a SIGSEGV sent by kill()");
	if (!sigsetjmp(jb, 1))
		raise(SIGSEGV);
	T_EQ_INT(2, app_calls);
	T_ASSERT(app_code <= 0);

	T_CASE("no handler: a fault still kills with SIGSEGV");
	pid = fork();
	if (!pid) {
		char b[8];

		signal(SIGSEGV, SIG_DFL);
		brt_ucopy(b, "12345678", 8, 0);
		*(volatile int *)bad_addr = 1;
		_exit(0);
	}
	T_ASSERT(pid > 0 && waitpid(pid, &status, 0) == pid);
	T_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);

	T_CASE("BPFRT_UCOPY=syscall");
	fflush(NULL);
	pid = fork();
	if (!pid) {
		setenv("BPFRT_UCOPY", "syscall", 1);
		execl("/proc/self/exe", argv[0], "--child", (char *)NULL);
		_exit(3);
	}
	T_ASSERT(pid > 0 && waitpid(pid, &status, 0) == pid);
	T_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return t_done();
}
