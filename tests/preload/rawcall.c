/* rawcall.c - what the preload library cannot intercept by symbol: BPF_MAP_CREATE issued
 * through the program's own syscall instruction (and, linked with -static, a program no
 * dynamic loader preloads), and a pass-through syscall() of another number.  Prints
 * "create: ok <where>" with where the fd points ("kernel" for an anon inode, "bpfrt" for
 * a bpfrt object) or "create: errno N", then "getpid: same|different". */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

static long raw_bpf(long cmd, void *attr, long size)
{
	long ret;

#if defined(__x86_64__)
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)__NR_bpf), "D"(cmd), "S"(attr), "d"(size)
			 : "rcx", "r11", "memory");
#else
	ret = syscall(__NR_bpf, cmd, attr, size);
	if (ret < 0)
		ret = -errno;
#endif
	return ret;
}

int main(void)
{
	union bpf_attr a;
	char link[256] = "", proc[64];
	long fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	fd = raw_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0) {
		printf("create: errno %ld\n", -fd);
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%ld", fd);
		if (readlink(proc, link, sizeof(link) - 1) < 0)
			strcpy(link, "?");
		printf("create: ok %s\n", strstr(link, "anon_inode") ? "kernel" : "bpfrt");
	}
	printf("getpid: %s\n", syscall(SYS_getpid) == getpid() ? "same" : "different");
	return 0;
}
