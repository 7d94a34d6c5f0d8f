/* preload.c - libbpfrt-preload.so: runs an unmodified bpf() user (a libbpf application,
 * bpftool) on bpfrt.  Loaded with LD_PRELOAD (`bpfrt exec -- CMD`), it defines the libc
 * symbols the process resolves before libc's own:
 *
 *   syscall()     syscall(__NR_bpf, cmd, attr, size), the way libbpf issues bpf(), goes to
 *                 bpfrt_bpf(); every other number goes to libc's syscall() untouched.
 *   bpf()         for programs that call a bpf() symbol instead.
 *   mmap()        of a ring buffer's producer page and data (libbpf's second mmap) gets the
 *                 data mapped twice back to back, as the kernel maps it (a user ring
 *                 buffer's producer, writable, through bpfrt_user_ringbuf_producer_fd():
 *                 BPF_MAP_FREEZE is EBUSY while it lasts, and EPERM for a frozen map, as
 *                 the kernel's); of a BPF output
 *                 event (below) a ring of the size asked for; everything else (mmapable
 *                 arrays included: bpfrt's map files hold the kernel's layout at offset 0)
 *                 goes to libc's mmap().  mmap64() too: libbpf calls that name.
 *   perf_event_open (through syscall()) of PERF_COUNT_SW_BPF_OUTPUT, libbpf's
 *                 perf_buffer: a bpfrt perf output ring, which is where a bpfrt program's
 *                 bpf_perf_event_output() writes; ioctl() ENABLE/DISABLE of it succeeds,
 *                 epoll_ctl() registers its wake-up pipe as for ring buffers, and after a
 *                 wait its wake-up is re-armed (bpfrt_perf_ring_drain()).  Other events
 *                 go to the kernel; tracepoints, kprobes and uprobes (their PMUs or
 *                 tracefs events) are remembered with their attr.
 *   ioctl()       PERF_EVENT_IOC_SET_BPF of a bpfrt program on a remembered event, and
 *   bpf()         BPF_LINK_CREATE (BPF_PERF_EVENT) of one: the program runs in this
 *                 process on the kernel's records: a tracepoint's (bpfrt_tracepoint_
 *                 attach()), a probe's sampled registers as pt_regs (bpfrt_perf_event_
 *                 attach()).  BPF_LINK_CREATE of an invalid fd answers EBADF, so libbpf's
 *                 perf-link probe passes and libbpf uses links.
 *   bpf()         BPF_RAW_TRACEPOINT_OPEN of a kernel raw tracepoint (a name without
 *                 "provider:"): bpfrt_raw_tracepoint_attach() (sys_enter, sys_exit;
 *                 others EINVAL and a line on stderr).
 *   send*()/recv*() rtnetlink requests attaching a bpfrt program (XDP by RTM_SETLINK
 *                 IFLA_XDP, tc by RTM_NEWTFILTER "bpf") run it with
 *                 bpfrt_prog_attach_iface() and get the kernel's replies made up here;
 *   bpf()         BPF_LINK_CREATE with BPF_XDP likewise.
 *   setsockopt()  SO_ATTACH_BPF of a bpfrt socket filter on a datagram socket: kept, and
 *   recv*(), read() of that socket run it on each datagram (drop, trim).
 *   readlink()    of /proc/self/fd/N names a bpfrt object as the kernel's anon inode
 *                 ("anon_inode:bpf-map", ...): bpftool tells objects apart that way.
 *   statfs64()    as statfs() (libbpf's and bpftool's name).
 *   fopen()       of /proc/self/fdinfo/N of a bpfrt map or program (and fopen64()):
 *                 the file's lines and the kernel's bpf ones (memlock, frozen, ids:
 *                 bpfrt_obj_fdinfo()), which bpftool's map/prog show print.
 *   epoll_ctl()   of a ring buffer's map fd (the kernel's refuses a regular file with
 *                 EPERM) registers bpfrt's wake-up pipe for it instead, with the caller's
 *                 event data; epoll_wait()/epoll_pwait() empty those pipes after waking, as
 *                 the kernel's ring buffer needs no draining (the consumer only moves
 *                 consumer_pos in memory, which is what libbpf does).
 *
 * Paths under /sys/fs/bpf in BPF_OBJ_PIN and BPF_OBJ_GET name the same place under
 * $BPFRT_FS (default /dev/shm/bpfrt).
 *
 * What cannot be caught: a statically linked program (no dynamic loader reads
 * LD_PRELOAD), and a bpf() issued by its own syscall instruction (inline assembly, a
 * libc-free runtime such as Go's).  With BPFRT_PRELOAD_STRICT=1 a seccomp filter makes any
 * bpf() that reaches the kernel trap instead: this library's SIGSYS handler routes it to
 * bpfrt and says so once on stderr (a process that replaces the SIGSYS handler, or a child
 * exec'd without this library, dies of SIGSYS: loudly, never on the kernel's bpf()).
 * `bpfrt exec` refuses a static executable in strict mode and warns otherwise.
 *
 * Uses the public API only (include/), through libbpfrt.so.
 *
 * Files, one concern each (preload_int.h is what they share):
 *   preload.c         syscall() and bpf() routing, the /sys/fs/bpf paths, ioctl() and
 *                     close() handed to the others, what kind of bpfrt object an fd is
 *                     (readlink(), fdinfo), strict mode;
 *   preload_ring.c    mmap() and epoll of ring buffers and BPF output events;
 *   preload_attach.c  programs on tracepoint and probe events and raw tracepoints, and
 *                     the links handed out;
 *   preload_net.c     socket filters, rtnetlink XDP/tc and XDP/tcx links: the send and
 *                     recv families and setsockopt().
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "preload_int.h"

#define BPFFS "/sys/fs/bpf"
#define BPF_FS_MAGIC 0xcafe4a11

/* The interposed symbols; bpf() has no libc prototype. */
int bpf(int cmd, union bpf_attr *attr, unsigned int size);

syscall_fn real_syscall;
path_fn real_unlink, real_rmdir;
mkdir_fn real_mkdir;
readlink_fn real_readlink;
statfs_fn real_statfs;
fopen_fn real_fopen, real_fopen64;
mmap_fn real_mmap;
epoll_ctl_fn real_epoll_ctl;
epoll_wait_fn real_epoll_wait;
epoll_pwait_fn real_epoll_pwait;
ioctl_fn real_ioctl;
close_fn real_close;
setsockopt_fn real_setsockopt;
send_fn real_send;
recv_fn real_recv;
read_fn real_read;
sendto_fn real_sendto;
sendmsg_fn real_sendmsg;
recvmsg_fn real_recvmsg;
recvfrom_fn real_recvfrom;

/* libc's definition of a symbol this library interposes; dying beats reaching the kernel
 * by some other road when the process has none. */
static void *next_sym(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		fprintf(stderr, "bpfrt-preload: no next definition of %s(): %s\n", name, dlerror());
		abort();
	}
	return p;
}

/* dlsym() answers with an object pointer; ISO C converts it to a function pointer only
 * through memory. */
#define NEXT(var, name)                                  \
	do {                                             \
		void *p_ = next_sym(name);               \
		memcpy(&(var), &p_, sizeof(var));        \
	} while (0)

void resolve(void)
{
	/* Racing threads store the same values; real_syscall last, as the "done" flag. */
	if (!real_syscall) {
		NEXT(real_mmap, "mmap");
		NEXT(real_epoll_ctl, "epoll_ctl");
		NEXT(real_epoll_wait, "epoll_wait");
		NEXT(real_epoll_pwait, "epoll_pwait");
		NEXT(real_ioctl, "ioctl");
		NEXT(real_close, "close");
		NEXT(real_setsockopt, "setsockopt");
		NEXT(real_send, "send");
		NEXT(real_recv, "recv");
		NEXT(real_read, "read");
		NEXT(real_sendto, "sendto");
		NEXT(real_sendmsg, "sendmsg");
		NEXT(real_recvmsg, "recvmsg");
		NEXT(real_recvfrom, "recvfrom");
		NEXT(real_unlink, "unlink");
		NEXT(real_rmdir, "rmdir");
		NEXT(real_mkdir, "mkdir");
		NEXT(real_readlink, "readlink");
		NEXT(real_statfs, "statfs");
		NEXT(real_fopen, "fopen");
		NEXT(real_fopen64, "fopen64");
		NEXT(real_syscall, "syscall");
	}
}

/* Copy up to len bytes at addr into buf without trusting addr (a bad pointer is the
 * kernel's EFAULT, which bpfrt_bpf() reports, never a crash here); the count copied, which
 * stops at the first unreadable page. */
size_t read_user(uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	while (addr && done < len) {
		size_t room = PRELOAD_PAGE - (size_t)((addr + done) % PRELOAD_PAGE);
		struct iovec local, remote;

		if (room > len - done)
			room = len - done;
		local = (struct iovec){ (char *)buf + done, room };
		remote = (struct iovec){ (void *)(uintptr_t)(addr + done), room };
		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)room)
			break;
		done += room;
	}
	return done;
}

/* path under $BPFRT_FS (default /dev/shm/bpfrt) when path is /sys/fs/bpf or under it;
 * 1 with out filled, 0 for any other path, -1 with errno: ENAMETOOLONG when it does not
 * fit, EPERM for a name bpffs refuses. */
static int map_path(const char *path, char *out, size_t len)
{
	size_t n = strlen(BPFFS);
	const char *fs;

	if (!path || strncmp(path, BPFFS, n) || (path[n] != '/' && path[n] != '\0'))
		return 0;
	/* bpffs looks up no name with a dot in it (they are its own: maps.debug): EPERM */
	for (const char *c = path + n; *c;) {
		size_t l;

		c += strspn(c, "/");
		l = strcspn(c, "/");
		if (memchr(c, '.', l) && !(l == 1 || (l == 2 && c[1] == '.'))) {
			errno = EPERM;
			return -1;
		}
		c += l;
	}
	fs = getenv("BPFRT_FS");
	if (!fs || !*fs)
		fs = "/dev/shm/bpfrt";
	if ((size_t)snprintf(out, len, "%s%s", fs, path + n) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 1;
}

/* The verifier's privilege level for programs the process loads (BPFRT_PRELOAD_PRIV):
 * a BPFRT_F_PRIV_* bit, or 0 to let the caller's capabilities decide as the kernel does.
 * The default is root's level: the application was written for a kernel that let it
 * load, and bpfrt runs the program inside the application's own process anyway. */
static uint32_t load_priv(void)
{
	const char *p = getenv("BPFRT_PRELOAD_PRIV");

	if (!p || !*p || !strcmp(p, "full"))
		return BPFRT_F_PRIV_FULL;
	if (!strcmp(p, "bpf"))
		return BPFRT_F_PRIV_BPF_CAPABLE;
	if (!strcmp(p, "unpriv"))
		return BPFRT_F_PRIV_UNPRIV;
	return 0; /* "caller" */
}

/* bpf(2) for the process, on a copy of attr where it changes (the caller's memory is
 * never written but where the command says): /sys/fs/bpf paths of OBJ_PIN/OBJ_GET
 * rewritten to $BPFRT_FS, PROG_LOAD's privilege level. */
static long route_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	char path[4096], mapped[4096 + 64];
	union bpf_attr copy;
	uint32_t priv;
	int m;

	if (!attr || size > sizeof(copy))
		return bpfrt_bpf(cmd, attr, size);
	if (cmd == BPF_RAW_TRACEPOINT_OPEN) {
		long ret;

		memset(&copy, 0, sizeof(copy));
		if (read_user((uint64_t)(uintptr_t)attr, &copy, size) == size &&
		    raw_tp_open(&copy, &ret))
			return ret;
		return bpfrt_bpf(cmd, attr, size);
	}
	if (cmd == BPF_LINK_CREATE) {
		long ret;

		memset(&copy, 0, sizeof(copy));
		if (read_user((uint64_t)(uintptr_t)attr, &copy, size) == size &&
		    (perf_link_create(&copy, &ret) || xdp_link_create(&copy, &ret)))
			return ret;
		return bpfrt_bpf(cmd, attr, size);
	}
	if (cmd == BPF_PROG_LOAD) {
		priv = load_priv();
		if (!priv || size < offsetof(union bpf_attr, prog_flags) + sizeof(attr->prog_flags))
			return bpfrt_bpf(cmd, attr, size);
		memset(&copy, 0, sizeof(copy));
		if (read_user((uint64_t)(uintptr_t)attr, &copy, size) != size ||
		    (copy.prog_flags & BPFRT_F_PRIV_MASK))
			return bpfrt_bpf(cmd, attr, size);
		copy.prog_flags |= priv;
		return bpfrt_bpf(cmd, &copy, size);
	}
	if ((cmd != BPF_OBJ_PIN && cmd != BPF_OBJ_GET) ||
	    size < offsetof(union bpf_attr, file_flags) + sizeof(attr->file_flags))
		return bpfrt_bpf(cmd, attr, size);
	memset(&copy, 0, sizeof(copy));
	memset(path, 0, sizeof(path));
	if (read_user((uint64_t)(uintptr_t)attr, &copy, size) != size ||
	    !read_user(copy.pathname, path, sizeof(path)) || !memchr(path, '\0', sizeof(path)))
		return bpfrt_bpf(cmd, attr, size);
	m = map_path(path, mapped, sizeof(mapped));
	if (m <= 0)
		return m < 0 ? -1 : bpfrt_bpf(cmd, attr, size);
	copy.pathname = (uint64_t)(uintptr_t)mapped;
	return bpfrt_bpf(cmd, &copy, size);
}

/* The file calls libbpf and bpftool make on pin paths (unpin, pin directories, the
 * "is it a bpffs" check) see /sys/fs/bpf as $BPFRT_FS; statfs() of it answers with
 * bpffs's magic, as a mounted bpffs would. */
int unlink(const char *path)
{
	char mapped[4096 + 64];
	int m = map_path(path, mapped, sizeof(mapped));

	resolve();
	return m < 0 ? -1 : real_unlink(m ? mapped : path);
}

int rmdir(const char *path)
{
	char mapped[4096 + 64];
	int m = map_path(path, mapped, sizeof(mapped));

	resolve();
	return m < 0 ? -1 : real_rmdir(m ? mapped : path);
}

int mkdir(const char *path, mode_t mode)
{
	char mapped[4096 + 64];
	int m = map_path(path, mapped, sizeof(mapped));

	resolve();
	return m < 0 ? -1 : real_mkdir(m ? mapped : path, mode);
}

static int map_statfs(const char *path, struct statfs *buf)
{
	char mapped[4096 + 64];
	int m = map_path(path, mapped, sizeof(mapped)), ret;

	resolve();
	if (m < 0)
		return -1;
	ret = real_statfs(m ? mapped : path, buf);
	if (ret && m && errno == ENOENT && !strcmp(path, BPFFS) && strrchr(mapped, '/')) {
		/* bpfrt makes $BPFRT_FS on first use: until then its parent answers */
		*strrchr(mapped, '/') = '\0';
		ret = real_statfs(*mapped ? mapped : "/", buf);
	}
	if (!ret && m)
		buf->f_type = BPF_FS_MAGIC;
	return ret;
}

int statfs(const char *path, struct statfs *buf)
{
	return map_statfs(path, buf);
}

/* libbpf and bpftool call the 64-bit name; on LP64 the two structs are one layout */
int statfs64(const char *path, struct statfs64 *buf);
int statfs64(const char *path, struct statfs64 *buf)
{
	_Static_assert(sizeof(struct statfs64) == sizeof(struct statfs), "statfs64 layout");
	return map_statfs(path, (struct statfs *)(void *)buf);
}

/* close() of an fd the preload keeps something for (a socket filter, a probe event's
 * program) lets that go first.  A bpfrt link's fd is closed as the kernel closes one:
 * when it was the link's last fd, the link is detached and gone (its id too) before
 * close() returns (bpfrt_link_close(); its thread alone would do it a moment later, and
 * libbpf's bpf_link__destroy() counts on the detach being done).  Any other fd:
 * bpfrt_link_close() is the close system call (one atomic load more while the process
 * has no link). */
int close(int fd)
{
	int err;

	resolve();
	filt_drop(fd);
	tp_detach(fd, 1);
	ring_epoll_closed(fd);
	err = bpfrt_link_close(fd);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	resolve();
	/* a bpfrt ring is always on: enabling and disabling it succeed */
	if ((req == PERF_EVENT_IOC_ENABLE || req == PERF_EVENT_IOC_DISABLE) && is_perf(fd))
		return 0;
	if (req == PERF_EVENT_IOC_SET_BPF) {
		static int told;
		int ret;

		if (tp_set_bpf(fd, (int)(intptr_t)arg, &ret))
			return ret;
		if (!told && is_prog_fd((int)(intptr_t)arg)) {
			told = 1;
			fprintf(stderr, "bpfrt-preload: PERF_EVENT_IOC_SET_BPF of a bpfrt program on "
					"a perf event it does not know: "
					"not attachable in bpfrt (the kernel's errno follows)\n");
		}
	}
	if (req == PERF_EVENT_IOC_DISABLE)
		tp_detach(fd, 0);
	return real_ioctl(fd, req, arg);
}

long syscall(long number, ...)
{
	long a[6];
	va_list ap;

	/* Six longs, as libc's syscall() reads whatever the caller passed. */
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == __NR_bpf)
		return route_bpf((int)a[0], (union bpf_attr *)(uintptr_t)a[1], (unsigned int)a[2]);
	resolve();
	if (number == __NR_perf_event_open) {
		struct perf_event_attr attr;
		long ret;

		if (route_perf_open(a, &ret))
			return ret;
		ret = real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
		memset(&attr, 0, sizeof(attr));
		if (ret >= 0 &&
		    read_user((uint64_t)a[0], &attr, PERF_ATTR_SIZE_VER0) == PERF_ATTR_SIZE_VER0) {
			/* config2 (a probe's offset) is past the first version's fields */
			size_t n = attr.size < sizeof(attr) ? attr.size : sizeof(attr);

			if (n > PERF_ATTR_SIZE_VER0 && read_user((uint64_t)a[0], &attr, n) != n)
				return ret;
			tp_track((int)ret, &attr, (int)a[1], (int)a[2]);
		}
		return ret;
	}
	return real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)route_bpf(cmd, attr, size);
}

/* What kind of bpfrt object fd is: OBJ_GET_INFO_BY_FD writes back the size of its
 * kind's info struct (the same <linux/bpf.h> built both), so a zeroed buffer larger than
 * all of them tells; 0 for any other fd. */
enum obj_kind { KIND_NONE, KIND_MAP, KIND_PROG, KIND_BTF, KIND_LINK };

static enum obj_kind obj_kind(int fd, struct bpf_map_info *map)
{
	union {
		struct bpf_map_info map;
		struct bpf_prog_info prog;
		struct bpf_btf_info btf;
		struct bpf_link_info link;
	} info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpfrt_obj_get_info_by_fd(fd, &info, &len) < 0)
		return KIND_NONE;
	if (map)
		*map = info.map;
	if (len == sizeof(info.map))
		return KIND_MAP;
	if (len == sizeof(info.prog))
		return KIND_PROG;
	if (len == sizeof(info.btf))
		return KIND_BTF;
	/* a link's info is the kernel's 6.18 layout (64 bytes), whatever this header says */
	return len == sizeof(info.link) || len == 64 ? KIND_LINK : KIND_NONE;
}

/* Is fd a bpfrt ring buffer map?  Its max_entries in *size. */
int is_ringbuf(int fd, uint32_t *size, uint32_t *type)
{
	struct bpf_map_info info;

	/* a user ring buffer has the same layout, written by user space (libbpf's
	 * user_ring_buffer__new() maps it with the same call) */
	if (obj_kind(fd, &info) != KIND_MAP ||
	    (info.type != BPF_MAP_TYPE_RINGBUF && info.type != BPF_MAP_TYPE_USER_RINGBUF))
		return 0;
	*size = info.max_entries;
	*type = info.type;
	return 1;
}

int is_prog_fd(int fd)
{
	return obj_kind(fd, NULL) == KIND_PROG;
}

/* The program type of bpfrt program fd, or -1. */
int prog_type(int fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpfrt_obj_get_info_by_fd(fd, &info, &len) < 0 || len != sizeof(info))
		return -1;
	return (int)info.type;
}

/* /proc/self/fd/N of a bpfrt object reads as the kernel's anon inode does, which is how
 * bpftool (get_fd_type()) tells a pinned map from a pinned program. */
ssize_t readlink(const char *path, char *buf, size_t len)
{
	static const char *const names[] = {
		[KIND_MAP] = "anon_inode:bpf-map", [KIND_PROG] = "anon_inode:bpf-prog",
		[KIND_BTF] = "anon_inode:btf", [KIND_LINK] = "anon_inode:bpf_link",
	};
	char self[32];
	const char *p = NULL;
	enum obj_kind k;
	size_t n;
	char *end;
	long fd;

	resolve();
	snprintf(self, sizeof(self), "/proc/%d/fd/", (int)getpid());
	if (!strncmp(path, "/proc/self/fd/", 14))
		p = path + 14;
	else if (!strncmp(path, self, strlen(self)))
		p = path + strlen(self);
	if (p && *p) {
		errno = 0;
		fd = strtol(p, &end, 10);
		if (!*end && !errno && fd >= 0 && fd <= INT32_MAX &&
		    (k = obj_kind((int)fd, NULL)) != KIND_NONE) {
			n = strlen(names[k]);
			n = n < len ? n : len;
			memcpy(buf, names[k], n);
			return (ssize_t)n;
		}
	}
	return real_readlink(path, buf, len);
}

/* /proc/self/fdinfo/N of a bpfrt map or program reads as the kernel's does: the file's own
 * lines (pos, flags, mnt_id, ino) and then the bpf ones bpfrt_obj_fdinfo() writes
 * (memlock, frozen, ids...), which is where bpftool's `map show` and `prog show` take
 * memlock and frozen from.  A private memory file holds the text; fd N is untouched. */
static FILE *fdinfo_open(const char *path, const char *mode, fopen_fn real)
{
	char self[32], extra[1024], line[512];
	const char *p = NULL;
	FILE *in, *out;
	char *end;
	long fd;
	int n, mfd;

	snprintf(self, sizeof(self), "/proc/%d/fdinfo/", (int)getpid());
	if (!strncmp(path, "/proc/self/fdinfo/", 18))
		p = path + 18;
	else if (!strncmp(path, self, strlen(self)))
		p = path + strlen(self);
	if (!p || !*p || mode[0] != 'r' || strchr(mode, '+'))
		return NULL;
	errno = 0;
	fd = strtol(p, &end, 10);
	if (*end || errno || fd < 0 || fd > INT32_MAX)
		return NULL;
	n = bpfrt_obj_fdinfo((int)fd, extra, sizeof(extra));
	if (n < 0)
		return NULL; /* not one of bpfrt's: the real file */
	in = real(path, mode);
	if (!in)
		return NULL;
	mfd = memfd_create("bpfrt-fdinfo", MFD_CLOEXEC);
	out = mfd >= 0 ? fdopen(mfd, "w+") : NULL;
	if (!out) {
		if (mfd >= 0)
			real_close(mfd);
		fclose(in);
		return NULL;
	}
	while (fgets(line, sizeof(line), in))
		fputs(line, out);
	fclose(in);
	fputs(extra, out);
	if (fflush(out) || fseek(out, 0, SEEK_SET)) {
		fclose(out);
		return NULL;
	}
	return out;
}

FILE *fopen(const char *path, const char *mode)
{
	FILE *f;

	resolve();
	f = path && mode ? fdinfo_open(path, mode, real_fopen) : NULL;
	return f ? f : real_fopen(path, mode);
}

FILE *fopen64(const char *path, const char *mode);
FILE *fopen64(const char *path, const char *mode)
{
	FILE *f;

	resolve();
	f = path && mode ? fdinfo_open(path, mode, real_fopen64) : NULL;
	return f ? f : real_fopen64(path, mode);
}

/* Strict mode: a bpf() that gets past the symbols above (a syscall instruction of its
 * own) traps here instead of reaching the kernel, and runs on bpfrt. */
static void on_sigsys(int sig, siginfo_t *si, void *uc_)
{
	static const char note[] = "bpfrt-preload: a bpf() syscall instruction outside "
				   "libc's syscall() was trapped and routed to bpfrt\n";
	static volatile sig_atomic_t told;
	ucontext_t *uc = uc_;
	long ret;

	(void)sig;
	if (si->si_syscall != __NR_bpf)
		abort();
	if (!told) {
		told = 1;
		if (write(2, note, sizeof(note) - 1) < 0)
			told = 1;
	}
#if defined(__x86_64__)
	ret = route_bpf((int)uc->uc_mcontext.gregs[REG_RDI],
			(union bpf_attr *)(uintptr_t)uc->uc_mcontext.gregs[REG_RSI],
			(unsigned int)uc->uc_mcontext.gregs[REG_RDX]);
	uc->uc_mcontext.gregs[REG_RAX] = ret < 0 ? -errno : ret;
#else
	(void)uc;
	(void)ret;
	abort();
#endif
}

static int install_trap(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	if (sigaction(SIGSYS, &sa, NULL) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

__attribute__((constructor)) static void preload_init(void)
{
	const char *strict = getenv("BPFRT_PRELOAD_STRICT");
	void *seen, *mine;

	resolve();
	if (!strict || !*strict || !strcmp(strict, "0"))
		return;
	/* Another object defining syscall() ahead of this one would bypass bpfrt. */
	seen = dlsym(RTLD_DEFAULT, "syscall");
	memcpy(&mine, &(syscall_fn){ syscall }, sizeof(mine));
	if (seen != mine) {
		fprintf(stderr, "bpfrt-preload: syscall() resolves to %p, not to this library: "
				"bpf() would reach the kernel (BPFRT_PRELOAD_STRICT)\n", seen);
		_exit(127);
	}
#if defined(__x86_64__)
	if (install_trap() < 0) {
		fprintf(stderr, "bpfrt-preload: cannot trap inline bpf() syscalls (seccomp: %s) "
				"(BPFRT_PRELOAD_STRICT)\n", strerror(errno));
		_exit(127);
	}
#else
	fprintf(stderr, "bpfrt-preload: inline bpf() syscalls are not trapped on this "
			"architecture (BPFRT_PRELOAD_STRICT)\n");
	_exit(127);
#endif
}
