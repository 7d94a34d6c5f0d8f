/* rawcall.c - what the preload library cannot intercept by symbol: BPF_MAP_CREATE issued
 * through the program's own syscall instruction (and, linked with -static, a program no
 * dynamic loader preloads), and a pass-through syscall() of another number.  Prints
 * "create: ok <where>" ("kernel" for an anon inode, "bpfrt" for a bpfrt object, a
 * regular file) or "create: errno N", then "getpid: same|different". */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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
	struct stat st;
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
		/* not readlink(): the preload library names its objects as anon inodes */
		printf("create: ok %s\n",
		       fstat((int)fd, &st) || !S_ISREG(st.st_mode) ? "kernel" : "bpfrt");
	}
	printf("getpid: %s\n", syscall(SYS_getpid) == getpid() ? "same" : "different");
	return 0;
}
