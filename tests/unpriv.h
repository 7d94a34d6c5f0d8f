/* unpriv.h - kernel.unprivileged_bpf_disabled for the tests whose kernel side runs
 * unprivileged (verifier.unpriv_oracle, api.unpriv_pin_oracle): unpriv_enable() sets it
 * from 2 to 0 holding `flock BPFRT_UNPRIV_LOCK` (tests/CMakeLists.txt) exclusively, and it
 * is put back to 2 by restore() at the end, from a signal handler, and - should the test
 * be killed outright - by a guardian process that waits for the test's pipe to close.
 * Never 1 (which locks the setting until reboot).  become_nobody(): uid/gid 65534, no
 * supplementary groups, no capability left.
 */
#ifndef BPFRT_TESTS_UNPRIV_H
#define BPFRT_TESTS_UNPRIV_H

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#define SYSCTL "/proc/sys/kernel/unprivileged_bpf_disabled"
#define LOCK BPFRT_UNPRIV_LOCK /* tests/CMakeLists.txt */
#define NOBODY 65534

static int sysctl_read(void)
{
	char b[16] = { 0 };
	int fd = open(SYSCTL, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	return n > 0 && b[0] >= '0' && b[0] <= '9' ? b[0] - '0' : -1;
}

/* Only the two values this test may write; async-signal-safe. */
static int sysctl_write(int v)
{
	const char *s = v == 0 ? "0\n" : "2\n";
	int fd, ok;

	if (v != 0 && v != 2)
		return -1;
	fd = open(SYSCTL, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, s, 2) == 2;
	close(fd);
	return ok ? 0 : -1;
}

static volatile sig_atomic_t changed;

static void restore(void)
{
	if (changed && sysctl_read() == 0)
		sysctl_write(2);
	changed = 0;
}

static void on_signal(int sig)
{
	restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The guardian: a process of its own session that puts 2 back once every copy of the
 * pipe's write end is closed (this process and its worker ended, however).  It inherits
 * the lock's open file and so keeps the lock until it has done so. */
static int start_guardian(int *wfd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		int null = open("/dev/null", O_RDWR);

		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		if (sysctl_read() == 0)
			sysctl_write(2);
		_exit(0);
	}
	close(p[0]);
	*wfd = p[1];
	return 0;
}

/* Returns NULL when unprivileged loads are possible now (changed tells whether this test
 * made them so), else the reason to skip. */
static const char *unpriv_enable(void)
{
	static char why[128];
	int lock, v, gw;

	lock = open(LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX))
		return "cannot take " LOCK;
	v = sysctl_read();
	if (v == 0)
		return NULL; /* already allowed; not ours to change back */
	if (v != 2) {
		snprintf(why, sizeof(why), "kernel.unprivileged_bpf_disabled is %d (only 2 may be "
			 "changed to 0 and back)", v);
		return why;
	}
	if (start_guardian(&gw))
		return "cannot start the process that restores the setting";
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGSEGV, on_signal);
	signal(SIGABRT, on_signal);
	signal(SIGBUS, on_signal);
	changed = 1;
	if (sysctl_write(0) || sysctl_read() != 0) {
		restore();
		return "cannot write kernel.unprivileged_bpf_disabled";
	}
	return NULL;
}

static int become_nobody(void)
{
	return setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	       setresuid(NOBODY, NOBODY, NOBODY);
}

#endif
