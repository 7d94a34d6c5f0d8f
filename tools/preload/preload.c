/* preload.c - libbpfrt-preload.so: runs an unmodified bpf() user (a libbpf application,
 * bpftool) on bpfrt.  Loaded with LD_PRELOAD (`bpfrt exec -- CMD`), it defines the libc
 * symbols the process resolves before libc's own:
 *
 *   syscall()     syscall(__NR_bpf, cmd, attr, size), the way libbpf issues bpf(), goes to
 *                 bpfrt_bpf(); every other number goes to libc's syscall() untouched.
 *   bpf()         for programs that call a bpf() symbol instead.
 *   mmap()        of a ring buffer's producer page and data (libbpf's second mmap) gets the
 *                 data mapped twice back to back, as the kernel maps it; of a BPF output
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
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "bpfrt.h"

#define PRELOAD_PAGE 4096u
#define BPFFS "/sys/fs/bpf"
#define MAX_RINGS 64
#define MAX_PERF 256
#define MAX_TP 256
#define BPF_FS_MAGIC 0xcafe4a11

static void resolve(void);
static int is_prog_fd(int fd);
static int prog_type(int fd);
static int perf_link_create(const union bpf_attr *attr, long *ret);
static int raw_tp_open(const union bpf_attr *attr, long *ret);
static int xdp_link_create(const union bpf_attr *attr, long *ret);
static int filt_drop(int fd);
static int nfilt;

/* The interposed symbols; bpf() has no libc prototype. */
int bpf(int cmd, union bpf_attr *attr, unsigned int size);

typedef long (*syscall_fn)(long, ...);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*epoll_ctl_fn)(int, int, int, struct epoll_event *);
typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);
typedef int (*ioctl_fn)(int, unsigned long, ...);
typedef int (*close_fn)(int);
typedef int (*setsockopt_fn)(int, int, int, const void *, socklen_t);
typedef ssize_t (*send_fn)(int, const void *, size_t, int);
typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, __CONST_SOCKADDR_ARG, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);
typedef ssize_t (*recvfrom_fn)(int, void *__restrict, size_t, int, __SOCKADDR_ARG,
			       socklen_t *__restrict);

typedef int (*path_fn)(const char *);
typedef ssize_t (*readlink_fn)(const char *, char *, size_t);
typedef int (*mkdir_fn)(const char *, mode_t);
typedef int (*statfs_fn)(const char *, struct statfs *);
typedef FILE *(*fopen_fn)(const char *, const char *);

static syscall_fn real_syscall;
static path_fn real_unlink, real_rmdir;
static mkdir_fn real_mkdir;
static readlink_fn real_readlink;
static statfs_fn real_statfs;
static fopen_fn real_fopen, real_fopen64;
static mmap_fn real_mmap;
static epoll_ctl_fn real_epoll_ctl;
static epoll_wait_fn real_epoll_wait;
static epoll_pwait_fn real_epoll_pwait;
static ioctl_fn real_ioctl;
static close_fn real_close;
static setsockopt_fn real_setsockopt;
static send_fn real_send;
static recv_fn real_recv;
static read_fn real_read;
static sendto_fn real_sendto;
static sendmsg_fn real_sendmsg;
static recvmsg_fn real_recvmsg;
static recvfrom_fn real_recvfrom;

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

static void resolve(void)
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
static size_t read_user(uint64_t addr, void *buf, size_t len)
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

/* perf_event_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT) fds: bpfrt perf output
 * rings, which is where bpf_perf_event_output() of a bpfrt program writes (a kernel
 * perf event could never see those samples).  The ring's size is known only at mmap(),
 * so the fd starts as a one-page ring and mmap() replaces the file behind the same fd
 * number (dup3) by one of the size asked for. */
struct perf_fd {
	int fd;
	dev_t dev;
	ino_t ino;
	int cpu, cloexec;
	unsigned pages;
	struct bpfrt_perf_ring_opts opts;
};

static struct perf_fd perf_fds[MAX_PERF];
static int nperf;
static pthread_mutex_t perf_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of fd (perf_lock held) when it is still the file created for it. */
static struct perf_fd *perf_find(int fd)
{
	struct stat st;

	if (fd < 0 || !nperf)
		return NULL;
	for (int i = 0; i < nperf; i++) {
		if (perf_fds[i].fd != fd)
			continue;
		if (!fstat(fd, &st) && st.st_ino == perf_fds[i].ino && st.st_dev == perf_fds[i].dev)
			return &perf_fds[i];
		perf_fds[i] = perf_fds[--nperf]; /* closed and reused */
		return NULL;
	}
	return NULL;
}

static int is_perf(int fd)
{
	int r;

	if (!nperf)
		return 0;
	pthread_mutex_lock(&perf_lock);
	r = perf_find(fd) != NULL;
	pthread_mutex_unlock(&perf_lock);
	return r;
}

static int perf_track(struct perf_fd *e)
{
	struct stat st;

	if (fstat(e->fd, &st))
		return -1;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	pthread_mutex_lock(&perf_lock);
	if (!perf_find(e->fd) && nperf < MAX_PERF)
		perf_fds[nperf++] = *e;
	pthread_mutex_unlock(&perf_lock);
	return 0;
}

/* 1 with *ret set when the call is a BPF output event (bpfrt's), 0 for the kernel. */
static int route_perf_open(long a[6], long *ret)
{
	struct perf_event_attr attr;
	struct perf_fd e;
	unsigned long flags = (unsigned long)a[4];
	int fd;

	memset(&attr, 0, sizeof(attr));
	if (read_user((uint64_t)a[0], &attr, PERF_ATTR_SIZE_VER0) != PERF_ATTR_SIZE_VER0 ||
	    attr.type != PERF_TYPE_SOFTWARE || attr.config != PERF_COUNT_SW_BPF_OUTPUT)
		return 0;
	*ret = -1;
	if ((int)a[3] != -1 || (flags & ~(unsigned long)PERF_FLAG_FD_CLOEXEC)) {
		errno = EINVAL; /* groups and cgroups of a BPF output event: not here */
		return 1;
	}
	memset(&e, 0, sizeof(e));
	e.opts.sz = sizeof(e.opts);
	if (attr.watermark)
		e.opts.wakeup_watermark = attr.wakeup_watermark ? attr.wakeup_watermark : 1;
	else
		e.opts.wakeup_events = attr.wakeup_events ? attr.wakeup_events : 1;
	e.cpu = (int)a[2] >= 0 ? (int)a[2] : -1;
	e.pages = 1;
	e.cloexec = !!(flags & PERF_FLAG_FD_CLOEXEC);
	fd = bpfrt_perf_ring_create(e.cpu, e.pages, &e.opts);
	if (fd < 0)
		return 1;
	if (!e.cloexec)
		fcntl(fd, F_SETFD, 0);
	e.fd = fd;
	if (perf_track(&e)) {
		close(fd);
		return 1;
	}
	*ret = fd;
	return 1;
}

/* mmap() of a BPF output event's fd asks for 1 + 2^n pages: the ring behind the fd
 * becomes one of 2^n data pages (before anything wrote to it: libbpf maps first).
 * 0, or -1 with errno. */
static int perf_resize(int fd, size_t len)
{
	struct perf_fd *e, copy;
	size_t pages = len / PRELOAD_PAGE;
	struct stat st;
	int nfd, found;

	/* not held while creating: bpfrt's own mmap() of the new ring comes back here */
	pthread_mutex_lock(&perf_lock);
	e = perf_find(fd);
	found = e != NULL;
	if (e)
		copy = *e;
	pthread_mutex_unlock(&perf_lock);
	if (!found)
		return 0;
	if (len % PRELOAD_PAGE || pages < 2 || pages - 1 > (1u << 20)) {
		errno = EINVAL;
		return -1;
	}
	if (pages - 1 == copy.pages)
		return 0;
	nfd = bpfrt_perf_ring_create(copy.cpu, (unsigned)(pages - 1), &copy.opts);
	if (nfd < 0)
		return -1;
	if (dup3(nfd, fd, copy.cloexec ? O_CLOEXEC : 0) < 0 || fstat(fd, &st)) {
		close(nfd);
		return -1;
	}
	close(nfd);
	pthread_mutex_lock(&perf_lock);
	for (int i = 0; i < nperf; i++)
		if (perf_fds[i].fd == fd && perf_fds[i].ino == copy.ino && perf_fds[i].dev == copy.dev) {
			perf_fds[i].dev = st.st_dev;
			perf_fds[i].ino = st.st_ino;
			perf_fds[i].pages = (unsigned)(pages - 1);
		}
	pthread_mutex_unlock(&perf_lock);
	return 0;
}

/* Probe perf events: tracepoints (perf_event_open(PERF_TYPE_TRACEPOINT), libbpf's
 * attach_tracepoint, and tracefs kprobe/uprobe events, libbpf's legacy probes) and the
 * kprobe/uprobe PMUs (libbpf's attach_kprobe/attach_uprobe).  The kernel's event is
 * opened as asked (its errno when it refuses) and remembered with its attr; attaching a
 * bpfrt program to it (PERF_EVENT_IOC_SET_BPF, or BPF_LINK_CREATE with BPF_PERF_EVENT)
 * runs the program in this process on the kernel's records: a tracepoint program on
 * the tracepoint's records (bpfrt_tracepoint_attach(), as `bpfrt trace` does), a kprobe
 * program on the probe's sampled registers (bpfrt_perf_event_attach()).  DISABLE or
 * close() of the event detaches what SET_BPF attached; a link from LINK_CREATE detaches
 * when it is closed. */
struct tp_fd {
	int fd;
	dev_t dev;
	ino_t ino;
	struct perf_event_attr attr; /* as opened; config1 points at name for the PMUs */
	char *name;                  /* kprobe function or uprobe path, a copy (or NULL) */
	int pid;                     /* perf_event_open()'s pid */
	int link;                    /* bpfrt's link from SET_BPF, or -1 */
};

static struct tp_fd tp_fds[MAX_TP];
static int ntp;
static pthread_mutex_t tp_lock = PTHREAD_MUTEX_INITIALIZER;

/* The links BPF_LINK_CREATE returned: close() detaches them at once (the link thread
 * would notice the hang-up a little later; libbpf counts on a detach being done). */
static int link_fds[MAX_TP];
static int nlinks;

static void tp_forget(struct tp_fd *t)
{
	free(t->name);
	*t = tp_fds[--ntp];
}

static struct tp_fd *tp_find(int fd)
{
	struct stat st;

	for (int i = 0; i < ntp; i++) {
		if (tp_fds[i].fd != fd)
			continue;
		if (!fstat(fd, &st) && st.st_ino == tp_fds[i].ino && st.st_dev == tp_fds[i].dev)
			return &tp_fds[i];
		if (tp_fds[i].link >= 0)
			real_close(tp_fds[i].link);
		tp_forget(&tp_fds[i]); /* closed and reused */
		return NULL;
	}
	return NULL;
}

/* The type numbers of the kprobe and uprobe PMUs, read once; -1 where there is none. */
static long pmu_types[2] = { -2, -2 };

static long pmu_type(int uprobe)
{
	if (pmu_types[uprobe] == -2) {
		char buf[32];
		FILE *f = fopen(uprobe ? "/sys/bus/event_source/devices/uprobe/type"
				       : "/sys/bus/event_source/devices/kprobe/type", "re");

		pmu_types[uprobe] = f && fgets(buf, sizeof(buf), f) ? strtol(buf, NULL, 10) : -1;
		if (f)
			fclose(f);
	}
	return pmu_types[uprobe];
}

/* A perf event the kernel opened: remember it when it is a probe bpfrt can attach to. */
static void tp_track(int fd, const struct perf_event_attr *attr, int pid)
{
	struct tp_fd e = { .fd = fd, .attr = *attr, .pid = pid, .link = -1 };
	struct stat st;
	int pmu = (long)attr->type == pmu_type(0) || (long)attr->type == pmu_type(1);

	if (attr->type != PERF_TYPE_TRACEPOINT && !pmu)
		return;
	if (fstat(fd, &st))
		return;
	e.dev = st.st_dev;
	e.ino = st.st_ino;
	if (pmu && attr->config1) {
		/* the function name or path lives in the caller's memory only for the call */
		char buf[4096];
		size_t n = read_user(attr->config1, buf, sizeof(buf));

		if (!memchr(buf, '\0', n) || !(e.name = strdup(buf)))
			return;
		e.attr.config1 = (uint64_t)(uintptr_t)e.name;
	}
	pthread_mutex_lock(&tp_lock);
	if (!tp_find(fd) && ntp < MAX_TP) {
		tp_fds[ntp++] = e;
		e.name = NULL;
	}
	pthread_mutex_unlock(&tp_lock);
	free(e.name);
}

/* "category:name" of tracefs id, or -1 with errno ENOENT. */
static int tp_name(uint64_t id, char *out, size_t len)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events",
					     "/sys/kernel/debug/tracing/events" };

	for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
		DIR *cats = opendir(roots[r]);
		struct dirent *c, *e;

		while (cats && (c = readdir(cats))) {
			char path[512];
			DIR *evs;

			if (c->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", roots[r], c->d_name);
			evs = opendir(path);
			while (evs && (e = readdir(evs))) {
				char idp[800], buf[32];
				FILE *f;
				int match = 0;

				if (e->d_name[0] == '.')
					continue;
				snprintf(idp, sizeof(idp), "%s/%s/id", path, e->d_name);
				f = fopen(idp, "re");
				if (!f)
					continue;
				match = fgets(buf, sizeof(buf), f) && strtoull(buf, NULL, 10) == id;
				fclose(f);
				if (match) {
					snprintf(out, len, "%s:%s", c->d_name, e->d_name);
					closedir(evs);
					closedir(cats);
					return 0;
				}
			}
			if (evs)
				closedir(evs);
		}
		if (cats)
			closedir(cats);
	}
	errno = ENOENT;
	return -1;
}

/* Attach bpfrt program prog_fd (of type ptype) to the event copy t describes: a link fd,
 * or -1 with errno and one line on stderr. */
static int ev_attach(const struct tp_fd *t, int prog_fd, int ptype)
{
	char name[600];
	int link;

	if (ptype == BPF_PROG_TYPE_KPROBE) {
		link = bpfrt_perf_event_attach(prog_fd, &t->attr, sizeof(t->attr), t->pid, NULL);
		if (link < 0) {
			int e = -link;

			fprintf(stderr, "bpfrt-preload: %s %s: bpfrt cannot attach the program: "
					"%s\n", (long)t->attr.type == pmu_type(1) ? "uprobe" :
					"kprobe", t->name ? t->name : "(address)", strerror(e));
			errno = e;
			return -1;
		}
		return link;
	}
	if (ptype != BPF_PROG_TYPE_TRACEPOINT || t->attr.type != PERF_TYPE_TRACEPOINT) {
		fprintf(stderr, "bpfrt-preload: a bpfrt program of type %d on a perf event of "
				"type %u: not attachable (EINVAL)\n", ptype, t->attr.type);
		errno = EINVAL;
		return -1;
	}
	if (tp_name(t->attr.config, name, sizeof(name))) {
		fprintf(stderr, "bpfrt-preload: tracepoint id %llu: not found in tracefs: "
				"cannot attach the program in bpfrt\n",
			(unsigned long long)t->attr.config);
		errno = EINVAL;
		return -1;
	}
	link = bpfrt_tracepoint_attach(prog_fd, name, NULL);
	if (link < 0) {
		int e = -link;

		fprintf(stderr, "bpfrt-preload: tracepoint %s: bpfrt cannot attach the program: "
				"%s\n", name, strerror(e));
		errno = e;
		return -1;
	}
	return link;
}

/* A copy of fd's entry (name duplicated: free it), or 0 when fd is no tracked event. */
static int tp_copy(int fd, struct tp_fd *out)
{
	struct tp_fd *t;
	int found;

	pthread_mutex_lock(&tp_lock);
	t = tp_find(fd);
	found = t != NULL;
	if (t) {
		*out = *t;
		out->name = t->name ? strdup(t->name) : NULL;
		if (out->name)
			out->attr.config1 = (uint64_t)(uintptr_t)out->name;
	}
	pthread_mutex_unlock(&tp_lock);
	return found;
}

/* PERF_EVENT_IOC_SET_BPF of prog_fd on a tracked event: 1 with *ret when bpfrt took it
 * (a bpfrt program), 0 for the kernel (one of its own programs). */
static int tp_set_bpf(int fd, int prog_fd, int *ret)
{
	struct tp_fd copy, *t;
	int ptype = prog_type(prog_fd), link;

	if (!ntp || ptype < 0 || !tp_copy(fd, &copy))
		return 0;
	*ret = -1;
	if (copy.link >= 0) {
		free(copy.name);
		errno = EEXIST; /* the kernel's answer for a second program on one event */
		return 1;
	}
	link = ev_attach(&copy, prog_fd, ptype);
	free(copy.name);
	if (link < 0)
		return 1;
	pthread_mutex_lock(&tp_lock);
	t = tp_find(fd);
	if (t && t->link < 0) {
		t->link = link;
		link = -1;
		*ret = 0;
	} else {
		errno = t ? EEXIST : EBADF;
	}
	pthread_mutex_unlock(&tp_lock);
	if (link >= 0)
		real_close(link);
	return 1;
}

/* BPF_LINK_CREATE with BPF_PERF_EVENT (what libbpf uses once its perf-link probe
 * passes): 1 with *ret when the preload answered, 0 for bpfrt_bpf(). */
static int perf_link_create(const union bpf_attr *attr, long *ret)
{
	int prog_fd = (int)attr->link_create.prog_fd, fd = (int)attr->link_create.target_fd;
	int ptype = prog_type(prog_fd), link;
	struct tp_fd copy;

	if (attr->link_create.attach_type != BPF_PERF_EVENT || ptype < 0)
		return 0;
	*ret = -1;
	if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
		errno = EBADF; /* the kernel's answer for a bad event fd (libbpf probes it) */
		return 1;
	}
	if (!tp_copy(fd, &copy)) {
		fprintf(stderr, "bpfrt-preload: BPF_LINK_CREATE of a bpfrt program on fd %d: "
				"not a tracepoint, kprobe or uprobe event (EINVAL)\n", fd);
		errno = EINVAL;
		return 1;
	}
	if (attr->link_create.perf_event.bpf_cookie)
		fprintf(stderr, "bpfrt-preload: BPF_LINK_CREATE: the bpf_cookie is not kept "
				"(bpf_get_attach_cookie() answers 0)\n");
	link = ev_attach(&copy, prog_fd, ptype);
	free(copy.name);
	if (link < 0)
		return 1;
	pthread_mutex_lock(&tp_lock);
	if (nlinks < MAX_TP)
		link_fds[nlinks++] = link;
	pthread_mutex_unlock(&tp_lock);
	*ret = link;
	return 1;
}

/* BPF_RAW_TRACEPOINT_OPEN of a kernel raw tracepoint (a name without the "provider:"
 * of bpfrt's in-application probes, which bpfrt_bpf() serves): bpfrt runs the program on
 * the records of the tracepoint it can rebuild the arguments from (sys_enter,
 * sys_exit); any other gets the kernel's answer for a program fd it does not know
 * (EINVAL) and the library's line on stderr.  1 with *ret when answered here. */
static int raw_tp_open(const union bpf_attr *attr, long *ret)
{
	int prog_fd = (int)attr->raw_tracepoint.prog_fd, link;
	char name[128];

	memset(name, 0, sizeof(name));
	if (!attr->raw_tracepoint.name ||
	    !read_user(attr->raw_tracepoint.name, name, sizeof(name)) ||
	    !memchr(name, '\0', sizeof(name)) || strchr(name, ':') ||
	    prog_type(prog_fd) != BPF_PROG_TYPE_RAW_TRACEPOINT)
		return 0;
	link = bpfrt_raw_tracepoint_attach(prog_fd, name, NULL);
	*ret = link;
	if (link < 0) {
		*ret = -1;
		errno = link == -EOPNOTSUPP ? EINVAL : -link;
		return 1;
	}
	pthread_mutex_lock(&tp_lock);
	if (nlinks < MAX_TP)
		link_fds[nlinks++] = link;
	pthread_mutex_unlock(&tp_lock);
	return 1;
}

/* Detach fd's program (DISABLE or close of the event). */
static void tp_detach(int fd, int forget)
{
	struct tp_fd *t;
	int link = -1;

	pthread_mutex_lock(&tp_lock);
	t = tp_find(fd);
	if (t) {
		link = t->link;
		t->link = -1;
		if (forget)
			tp_forget(t);
	}
	pthread_mutex_unlock(&tp_lock);
	if (link >= 0) {
		bpfrt_link_detach(link);
		real_close(link);
	}
}

int close(int fd)
{
	resolve();
	if (nfilt)
		filt_drop(fd);
	if (ntp)
		tp_detach(fd, 1);
	if (nlinks) {
		int mine = 0;

		pthread_mutex_lock(&tp_lock);
		for (int i = 0; i < nlinks; i++)
			if (link_fds[i] == fd) {
				link_fds[i] = link_fds[--nlinks];
				mine = 1;
				break;
			}
		pthread_mutex_unlock(&tp_lock);
		if (mine)
			bpfrt_link_detach(fd);
	}
	return real_close(fd);
}

/* ---- socket filters (SO_ATTACH_BPF of a bpfrt program) ----------------------------------
 *
 * A kernel socket cannot run a bpfrt program, but the process reads the socket only
 * through recv()/recvfrom()/recvmsg()/read(), and what a socket filter decides is which
 * datagrams (and how many of their bytes) those calls return.  So SO_ATTACH_BPF of a bpfrt
 * BPF_PROG_TYPE_SOCKET_FILTER program on a datagram socket is kept here, and each read
 * of the socket takes the next datagram from the kernel, runs the program on the bytes
 * the kernel's filter would see (BPF_PROG_TEST_RUN) and hands it on, trimmed to the
 * verdict, or drops it (0) and reads the next one:
 *   - packet sockets (the frame from the MAC header for SOCK_RAW, from the network
 *     header for SOCK_DGRAM) and IPv4 raw sockets (from the IP header): what recv()
 *     returns is what the filter sees;
 *   - UDP sockets: the filter sees the UDP header, then the payload recv() returns; the
 *     header is rebuilt from the sender's and the socket's ports and the length (the
 *     checksum reads 0).
 * Differences, by construction: the kernel has queued (and counted) the datagram before
 * the filter runs, so a dropped datagram still took receive-buffer room and wakes
 * poll()/epoll; recvmmsg() and packet-socket rings (PACKET_RX_RING) are not filtered;
 * stream sockets (TCP) and SO_ATTACH_REUSEPORT_EBPF keep the refusal (the kernel's errno
 * and a line on stderr). */
#define MAX_FILT 64
#define FILT_MAX_DGRAM 65536

enum filt_kind { FILT_FRAME, FILT_UDP };

struct sock_filt {
	int fd;
	dev_t dev;
	ino_t ino;
	int prog;            /* our dup of the program's fd */
	enum filt_kind kind;
	int v6;
};

static struct sock_filt filts[MAX_FILT];
static pthread_mutex_t filt_lock = PTHREAD_MUTEX_INITIALIZER;

/* fd's entry (filt_lock held), dropping a stale one (fd closed and reused). */
static struct sock_filt *filt_find(int fd)
{
	struct stat st;

	for (int i = 0; i < nfilt; i++) {
		if (filts[i].fd != fd)
			continue;
		if (!fstat(fd, &st) && st.st_ino == filts[i].ino && st.st_dev == filts[i].dev)
			return &filts[i];
		real_close(filts[i].prog);
		filts[i] = filts[--nfilt];
		return NULL;
	}
	return NULL;
}

static int filt_get(int fd, struct sock_filt *out)
{
	struct sock_filt *f;

	if (!nfilt)
		return 0;
	pthread_mutex_lock(&filt_lock);
	f = filt_find(fd);
	if (f)
		*out = *f;
	pthread_mutex_unlock(&filt_lock);
	return f != NULL;
}

/* Forget fd's filter (SO_DETACH_BPF, close): 1 when it had one. */
static int filt_drop(int fd)
{
	struct sock_filt *f;
	int prog = -1;

	if (!nfilt)
		return 0;
	pthread_mutex_lock(&filt_lock);
	f = filt_find(fd);
	if (f) {
		prog = f->prog;
		*f = filts[--nfilt];
	}
	pthread_mutex_unlock(&filt_lock);
	if (prog >= 0)
		real_close(prog);
	return prog >= 0;
}

/* The bytes of the filter's view to keep (0: drop).  The test run wants an Ethernet
 * header in front, which it takes off for a socket filter as the kernel's does. */
static uint32_t filt_run(const struct sock_filt *f, const void *hdr, size_t hlen,
			 const void *data, size_t len)
{
	static _Thread_local unsigned char *buf;
	BPFRT_OPTS(bpfrt_test_run_opts, o, .repeat = 1);
	static int told;
	uint16_t proto = htons(f->v6 ? 0x86dd : 0x0800);

	if (!buf && !(buf = malloc(14 + 8 + FILT_MAX_DGRAM)))
		return UINT32_MAX;
	memset(buf, 0, 14);
	memcpy(buf + 12, &proto, 2);
	memcpy(buf + 14, hdr, hlen);
	memcpy(buf + 14 + hlen, data, len);
	o.data_in = buf;
	o.data_size_in = (uint32_t)(14 + hlen + len);
	if (bpfrt_prog_test_run_opts(f->prog, &o) < 0) {
		if (!told) {
			told = 1;
			fprintf(stderr, "bpfrt-preload: the socket filter did not run (%s): the "
					"datagram is kept\n", strerror(errno));
		}
		return UINT32_MAX;
	}
	return o.retval;
}

/* recvmsg() through fd's filter f. */
static ssize_t filt_recvmsg(const struct sock_filt *f, int fd, struct msghdr *msg, int flags)
{
	static _Thread_local unsigned char *data;

	if (!data && !(data = malloc(FILT_MAX_DGRAM))) {
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		struct sockaddr_storage from, self;
		struct iovec iov = { data, FILT_MAX_DGRAM };
		struct msghdr m = *msg;
		socklen_t slen = sizeof(self);
		unsigned char udp[8];
		uint32_t keep;
		size_t n, give, done = 0;
		ssize_t r;

		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_name = &from;
		m.msg_namelen = sizeof(from);
		r = real_recvmsg(fd, &m, flags & ~MSG_TRUNC);
		if (r < 0)
			return r;
		n = (size_t)r;
		if (f->kind == FILT_UDP) {
			uint16_t sport = 0, dport = 0, ulen = htons((uint16_t)(n + 8 > 0xffff ? 0xffff : n + 8));

			memset(&self, 0, sizeof(self));
			getsockname(fd, (struct sockaddr *)&self, &slen);
			if (from.ss_family == AF_INET6) {
				sport = ((struct sockaddr_in6 *)&from)->sin6_port;
				dport = ((struct sockaddr_in6 *)&self)->sin6_port;
			} else {
				sport = ((struct sockaddr_in *)&from)->sin_port;
				dport = ((struct sockaddr_in *)&self)->sin_port;
			}
			memcpy(udp, &sport, 2);
			memcpy(udp + 2, &dport, 2);
			memcpy(udp + 4, &ulen, 2);
			memset(udp + 6, 0, 2);
			keep = filt_run(f, udp, 8, data, n);
		} else {
			keep = filt_run(f, NULL, 0, data, n);
		}
		if (!keep) {
			if (flags & MSG_PEEK) { /* take the dropped datagram out of the queue */
				m.msg_name = NULL;
				m.msg_namelen = 0;
				m.msg_control = NULL;
				m.msg_controllen = 0;
				real_recvmsg(fd, &m, (flags & ~(MSG_PEEK | MSG_TRUNC)) | MSG_DONTWAIT);
			}
			continue;
		}
		/* sk_filter_trim_cap(): a UDP datagram keeps at least its header */
		if (f->kind == FILT_UDP)
			give = keep < 8 ? 0 : keep - 8;
		else
			give = keep;
		if (give > n)
			give = n;
		for (size_t i = 0; i < (size_t)msg->msg_iovlen && done < give; i++) {
			size_t c = give - done < msg->msg_iov[i].iov_len ? give - done
									 : msg->msg_iov[i].iov_len;

			memcpy(msg->msg_iov[i].iov_base, data + done, c);
			done += c;
		}
		if (msg->msg_name) {
			socklen_t l = m.msg_namelen < msg->msg_namelen ? m.msg_namelen
								       : msg->msg_namelen;

			memcpy(msg->msg_name, &from, l);
			msg->msg_namelen = m.msg_namelen;
		}
		msg->msg_controllen = m.msg_controllen;
		msg->msg_flags = m.msg_flags & ~MSG_TRUNC;
		if (done < give)
			msg->msg_flags |= MSG_TRUNC;
		return (ssize_t)((flags & MSG_TRUNC) ? give : done);
	}
}

/* recv()-style reads of a filtered socket: -2 when fd has no filter. */
static ssize_t filt_recv(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			 socklen_t *fromlen)
{
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_name = from, .msg_namelen = fromlen ? *fromlen : 0,
			    .msg_iov = &iov, .msg_iovlen = 1 };
	struct sock_filt f;
	ssize_t r;

	if (!filt_get(fd, &f))
		return -2;
	if (!from)
		m.msg_namelen = 0;
	r = filt_recvmsg(&f, fd, &m, flags);
	if (r >= 0 && from && fromlen)
		*fromlen = m.msg_namelen;
	return r;
}

/* SO_ATTACH_BPF of bpfrt program prog_fd on fd: 1 when kept here (*ret set), 0 for the
 * refusal. */
static int filt_attach(int fd, int prog_fd, int *ret)
{
	int domain = 0, type = 0, proto = 0, prog;
	socklen_t l = sizeof(int);
	struct sock_filt e = { .fd = fd };
	struct sock_filt *f;
	struct stat st;

	if (prog_type(prog_fd) != BPF_PROG_TYPE_SOCKET_FILTER ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) || fstat(fd, &st))
		return 0;
	if (domain == AF_PACKET || (domain == AF_INET && type == SOCK_RAW))
		e.kind = FILT_FRAME;
	else if ((domain == AF_INET || domain == AF_INET6) && type == SOCK_DGRAM &&
		 proto == IPPROTO_UDP)
		e.kind = FILT_UDP;
	else
		return 0;
	e.v6 = domain == AF_INET6;
	e.dev = st.st_dev;
	e.ino = st.st_ino;
	prog = fcntl(prog_fd, F_DUPFD_CLOEXEC, 0);
	*ret = -1;
	if (prog < 0)
		return 1;
	e.prog = prog;
	pthread_mutex_lock(&filt_lock);
	f = filt_find(fd);
	if (f) { /* a new filter replaces the old, as in the kernel */
		prog = f->prog;
		*f = e;
	} else if (nfilt < MAX_FILT) {
		filts[nfilt++] = e;
		prog = -1;
	} else {
		errno = ENOMEM;
	}
	pthread_mutex_unlock(&filt_lock);
	if (prog >= 0)
		real_close(prog);
	if (f || prog < 0)
		*ret = 0;
	return 1;
}

ssize_t read(int fd, void *buf, size_t len)
{
	ssize_t r;

	resolve();
	if (nfilt && (r = filt_recv(fd, buf, len, 0, NULL, NULL)) != -2)
		return r;
	return real_read(fd, buf, len);
}

/* ---- XDP and tc attach through rtnetlink (libbpf's bpf_xdp_attach, bpf_tc_attach) ----
 *
 * A request naming a bpfrt program never reaches the kernel (which could not run it):
 * RTM_SETLINK whose one attribute is IFLA_XDP with a bpfrt XDP program's fd (or -1 where
 * bpfrt attached one), RTM_NEWTFILTER of kind "bpf" with a bpfrt classifier's fd, and
 * RTM_DELTFILTER of a filter bpfrt attached.  The program is attached with
 * bpfrt_prog_attach_iface() (a thread runs it on the interface's packets: received ones
 * for XDP and tc ingress, sent ones for tc egress; verdicts are counted, not enforced),
 * and the replies the kernel would send (the echoed filter with TCA_BPF_ID, the ack or
 * the error) are queued for the socket's next recv()/recvmsg().  Everything else (the
 * clsact qdisc libbpf creates and deletes, queries) goes to the kernel; deleting a clsact
 * qdisc detaches bpfrt's filters on that interface too. */
#define MAX_NL_REPLIES 16
#define MAX_ATTACH 64

struct nl_reply {
	int fd;
	size_t len;
	char buf[256];
};

static struct nl_reply nl_replies[MAX_NL_REPLIES];
static int nnl;
static pthread_mutex_t nl_lock = PTHREAD_MUTEX_INITIALIZER;

/* What bpfrt attached: XDP (parent 0) or a tc filter, with its link. */
struct nl_attach {
	int ifindex;
	uint32_t parent, prio, handle; /* tc: the filter's identity; XDP: all 0 */
	int link;
};

static struct nl_attach attached[MAX_ATTACH];
static int nattached;

/* Queue one reply datagram for fd: the header filled from the request's. */
static void nl_queue(int fd, const struct nlmsghdr *req, uint16_t type, uint16_t flags,
		     const void *body, size_t blen)
{
	struct sockaddr_nl self;
	socklen_t slen = sizeof(self);
	struct nl_reply *r;
	struct nlmsghdr h;

	memset(&self, 0, sizeof(self));
	if (getsockname(fd, (struct sockaddr *)&self, &slen))
		self.nl_pid = 0;
	h = (struct nlmsghdr){ .nlmsg_len = (uint32_t)NLMSG_LENGTH(blen), .nlmsg_type = type,
			       .nlmsg_flags = flags, .nlmsg_seq = req->nlmsg_seq,
			       .nlmsg_pid = self.nl_pid };
	if (NLMSG_SPACE(blen) > sizeof(r->buf))
		return;
	pthread_mutex_lock(&nl_lock);
	if (nnl < MAX_NL_REPLIES) {
		r = &nl_replies[nnl++];
		memset(r, 0, sizeof(*r));
		r->fd = fd;
		r->len = NLMSG_SPACE(blen);
		memcpy(r->buf, &h, sizeof(h));
		memcpy(r->buf + NLMSG_HDRLEN, body, blen);
	}
	pthread_mutex_unlock(&nl_lock);
}

static void nla_put(char *buf, size_t cap, size_t *off, uint16_t type, const void *data,
		    size_t len);

/* The ack (err 0) or error the kernel sends for req (header only: NLM_F_CAPPED), with
 * the kernel's extended-ack message when msg is not NULL (libbpf prints it). */
static void nl_ack(int fd, const struct nlmsghdr *req, int err, const char *msg)
{
	char body[sizeof(struct nlmsgerr) + 96];
	struct nlmsgerr e;
	size_t off = sizeof(e);

	memset(&e, 0, sizeof(e));
	e.error = -err;
	e.msg = *req;
	memcpy(body, &e, sizeof(e));
	if (msg)
		nla_put(body, sizeof(body), &off, NLMSGERR_ATTR_MSG, msg, strlen(msg) + 1);
	nl_queue(fd, req, NLMSG_ERROR, NLM_F_CAPPED | (msg ? NLM_F_ACK_TLVS : 0), body, off);
}

/* Append attribute type with len bytes of data at *off in buf (room checked). */
static void nla_put(char *buf, size_t cap, size_t *off, uint16_t type, const void *data,
		    size_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };

	if (*off + NLA_ALIGN(a.nla_len) > cap)
		return;
	memcpy(buf + *off, &a, sizeof(a));
	if (len)
		memcpy(buf + *off + NLA_HDRLEN, data, len);
	*off += NLA_ALIGN(a.nla_len);
}

/* The attribute of type want among the attributes at p (len bytes), or NULL. */
static const struct nlattr *nla_find(const char *p, size_t len, uint16_t want)
{
	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)(const void *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == want)
			return a;
		if ((size_t)NLA_ALIGN(a->nla_len) >= len)
			break;
		len -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

static int nla_s32(const struct nlattr *a, int32_t *v)
{
	if (!a || a->nla_len < NLA_HDRLEN + 4)
		return 0;
	memcpy(v, (const char *)a + NLA_HDRLEN, 4);
	return 1;
}

static struct nl_attach *attach_find(int ifindex, uint32_t parent, uint32_t prio,
				     uint32_t handle)
{
	for (int i = 0; i < nattached; i++)
		if (attached[i].ifindex == ifindex && attached[i].parent == parent &&
		    attached[i].prio == prio && attached[i].handle == handle)
			return &attached[i];
	return NULL;
}

static void attach_drop(struct nl_attach *a)
{
	int link = a->link;

	*a = attached[--nattached];
	bpfrt_link_detach(link);
	real_close(link);
}

/* Attach prog_fd to ifindex for dir: a link fd or -errno (a line on stderr). */
static int iface_attach(int prog_fd, int ifindex, unsigned dir, const char *what)
{
	BPFRT_OPTS(bpfrt_pkt_link_opts, o, .direction = dir);
	char name[IF_NAMESIZE], err[256] = "";
	int link;

	if (!if_indextoname((unsigned)ifindex, name))
		return -ENODEV;
	link = bpfrt_prog_attach_iface(prog_fd, name, &o, err, sizeof(err));
	if (link < 0)
		fprintf(stderr, "bpfrt-preload: %s on %s: %s\n", what, name, err);
	return link;
}

/* RTM_SETLINK with IFLA_XDP: 1 when answered here. */
static int nl_setlink(int fd, const struct nlmsghdr *nh)
{
	const char *attrs = (const char *)NLMSG_DATA(nh) + NLMSG_ALIGN(sizeof(struct ifinfomsg));
	size_t alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct ifinfomsg));
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);
	const struct nlattr *xdp = nla_find(attrs, alen, IFLA_XDP), *a;
	int32_t prog_fd, flags = 0;
	struct nl_attach *cur;
	int err = 0, link = -1;

	/* only libbpf's shape: IFLA_XDP alone */
	if (!xdp || (size_t)NLA_ALIGN(xdp->nla_len) < alen)
		return 0;
	a = (const struct nlattr *)(const void *)((const char *)xdp + NLA_HDRLEN);
	if (!nla_s32(nla_find((const char *)a, xdp->nla_len - NLA_HDRLEN, IFLA_XDP_FD), &prog_fd))
		return 0;
	nla_s32(nla_find((const char *)a, xdp->nla_len - NLA_HDRLEN, IFLA_XDP_FLAGS), &flags);
	pthread_mutex_lock(&nl_lock);
	cur = attach_find(ifi->ifi_index, 0, 0, 0);
	if (prog_fd < 0 && !cur) {
		pthread_mutex_unlock(&nl_lock);
		return 0; /* the kernel's own XDP program, or none: its business */
	}
	if (prog_fd >= 0 && prog_type(prog_fd) != BPF_PROG_TYPE_XDP) {
		pthread_mutex_unlock(&nl_lock);
		return 0; /* a kernel program (or not a program: the kernel's errno) */
	}
	if (prog_fd >= 0 && cur && (flags & XDP_FLAGS_UPDATE_IF_NOEXIST))
		err = EBUSY;
	else if (prog_fd >= 0 && nattached == MAX_ATTACH && !cur)
		err = ENOSPC;
	else if (prog_fd >= 0 && (link = iface_attach(prog_fd, ifi->ifi_index,
						      BPFRT_PKT_DIR_INGRESS, "XDP")) < 0)
		err = -link;
	if (!err) {
		if (cur)
			attach_drop(cur);
		if (link >= 0)
			attached[nattached++] = (struct nl_attach){ ifi->ifi_index, 0, 0, 0, link };
	}
	pthread_mutex_unlock(&nl_lock);
	if (nh->nlmsg_flags & NLM_F_ACK || err)
		nl_ack(fd, nh, err, err == EBUSY ? "XDP program already attached" : NULL);
	return 1;
}

/* RTM_NEWTFILTER / RTM_DELTFILTER of kind "bpf": 1 when answered here. */
static int nl_tfilter(int fd, const struct nlmsghdr *nh)
{
	const struct tcmsg *tc = NLMSG_DATA(nh);
	const char *attrs = (const char *)tc + NLMSG_ALIGN(sizeof(*tc));
	size_t alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*tc));
	uint32_t prio = TC_H_MAJ(tc->tcm_info) >> 16, handle = tc->tcm_handle;
	const struct nlattr *kind = nla_find(attrs, alen, TCA_KIND), *opt;
	struct nl_attach *cur;
	int32_t prog_fd;
	int err = 0, link = -1;

	if (nh->nlmsg_type == RTM_DELTFILTER) {
		pthread_mutex_lock(&nl_lock);
		if (!prio && !handle) { /* a flush: ours go, the kernel's too */
			for (int i = nattached - 1; i >= 0; i--)
				if (attached[i].ifindex == tc->tcm_ifindex &&
				    attached[i].parent == tc->tcm_parent)
					attach_drop(&attached[i]);
			pthread_mutex_unlock(&nl_lock);
			return 0;
		}
		cur = attach_find(tc->tcm_ifindex, tc->tcm_parent, prio, handle);
		if (cur)
			attach_drop(cur);
		pthread_mutex_unlock(&nl_lock);
		if (!cur)
			return 0;
		if (nh->nlmsg_flags & NLM_F_ACK)
			nl_ack(fd, nh, 0, NULL);
		return 1;
	}
	opt = nla_find(attrs, alen, TCA_OPTIONS);
	if (!kind || kind->nla_len < NLA_HDRLEN + 4 ||
	    memcmp((const char *)kind + NLA_HDRLEN, "bpf", 4) || !opt ||
	    !nla_s32(nla_find((const char *)opt + NLA_HDRLEN, opt->nla_len - NLA_HDRLEN,
			      TCA_BPF_FD), &prog_fd) ||
	    prog_type(prog_fd) != BPF_PROG_TYPE_SCHED_CLS)
		return 0;
	/* the kernel's choices when the request leaves them to it */
	if (!prio)
		prio = 0xc000; /* tcf_auto_prio() of the first filter */
	if (!handle)
		handle = 1;    /* cls_bpf's first free handle */
	pthread_mutex_lock(&nl_lock);
	cur = attach_find(tc->tcm_ifindex, tc->tcm_parent, prio, handle);
	if (cur && !(nh->nlmsg_flags & NLM_F_REPLACE))
		err = EEXIST;
	else if (!cur && nattached == MAX_ATTACH)
		err = ENOSPC;
	else if (tc->tcm_parent != TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS) &&
		 tc->tcm_parent != TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS))
		err = EOPNOTSUPP;
	else if ((link = iface_attach(prog_fd, tc->tcm_ifindex,
				      TC_H_MIN(tc->tcm_parent) == TC_H_MIN_EGRESS ?
				      BPFRT_PKT_DIR_EGRESS : BPFRT_PKT_DIR_INGRESS, "tc")) < 0)
		err = -link;
	if (err == EOPNOTSUPP)
		fprintf(stderr, "bpfrt-preload: tc filter of a bpfrt program under parent %x: "
				"only clsact ingress and egress are attachable\n", tc->tcm_parent);
	if (!err) {
		if (cur)
			attach_drop(cur);
		attached[nattached++] = (struct nl_attach){ tc->tcm_ifindex, tc->tcm_parent, prio,
							    handle, link };
	}
	pthread_mutex_unlock(&nl_lock);
	if (!err && (nh->nlmsg_flags & NLM_F_ECHO)) {
		struct bpf_prog_info info;
		uint32_t ilen = sizeof(info);
		char body[128];
		struct tcmsg echo = *tc;
		size_t off = NLMSG_ALIGN(sizeof(echo)), nest;

		memset(&info, 0, sizeof(info));
		bpfrt_obj_get_info_by_fd(prog_fd, &info, &ilen);
		echo.tcm_handle = handle;
		echo.tcm_info = TC_H_MAKE(prio << 16, TC_H_MIN(tc->tcm_info));
		memset(body, 0, sizeof(body));
		memcpy(body, &echo, sizeof(echo));
		nla_put(body, sizeof(body), &off, TCA_KIND, "bpf", 4);
		nest = off;
		nla_put(body, sizeof(body), &off, TCA_OPTIONS, NULL, 0);
		nla_put(body, sizeof(body), &off, TCA_BPF_ID, &info.id, 4);
		((struct nlattr *)(void *)(body + nest))->nla_len = (uint16_t)(off - nest);
		nl_queue(fd, nh, RTM_NEWTFILTER, NLM_F_ECHO, body, off);
	}
	if (nh->nlmsg_flags & NLM_F_ACK || err)
		nl_ack(fd, nh, err, NULL);
	return 1;
}

/* A datagram about to be sent: 1 when it was a request answered here (not sent). */
static int nl_intercept(int fd, const void *buf, size_t len)
{
	struct nlmsghdr nh;
	int domain = 0, proto = 0;
	socklen_t olen = sizeof(int);

	if (len < NLMSG_HDRLEN || !buf)
		return 0;
	memcpy(&nh, buf, sizeof(nh));
	/* cheap looks first: most sends are no such request */
	if (nh.nlmsg_len != len ||
	    (nh.nlmsg_type != RTM_SETLINK && nh.nlmsg_type != RTM_NEWTFILTER &&
	     nh.nlmsg_type != RTM_DELTFILTER && nh.nlmsg_type != RTM_DELQDISC))
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &olen) || domain != AF_NETLINK ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &olen) || proto != NETLINK_ROUTE)
		return 0;
	if (nh.nlmsg_type == RTM_SETLINK)
		return len >= NLMSG_LENGTH(sizeof(struct ifinfomsg)) && nl_setlink(fd, buf);
	if (len < NLMSG_LENGTH(sizeof(struct tcmsg)))
		return 0;
	if (nh.nlmsg_type == RTM_DELQDISC) {
		const struct tcmsg *tc = NLMSG_DATA((const struct nlmsghdr *)buf);

		if (tc->tcm_parent == TC_H_CLSACT) { /* the hook goes: bpfrt's filters too */
			pthread_mutex_lock(&nl_lock);
			for (int i = nattached - 1; i >= 0; i--)
				if (attached[i].ifindex == tc->tcm_ifindex && attached[i].parent)
					attach_drop(&attached[i]);
			pthread_mutex_unlock(&nl_lock);
		}
		return 0;
	}
	return nl_tfilter(fd, buf);
}

/* Hand out a queued reply of fd: its length (the whole datagram's with MSG_TRUNC), or
 * -1 when none is queued.  MSG_PEEK leaves it queued. */
static ssize_t nl_take(int fd, struct iovec *iov, size_t niov, int flags, int *trunc,
		       void *addr, socklen_t *alen)
{
	struct nl_reply r;
	size_t done = 0;
	int found = -1;

	pthread_mutex_lock(&nl_lock);
	for (int i = 0; i < nnl; i++)
		if (nl_replies[i].fd == fd) {
			found = i;
			break;
		}
	if (found >= 0) {
		r = nl_replies[found];
		if (!(flags & MSG_PEEK)) {
			memmove(&nl_replies[found], &nl_replies[found + 1],
				(size_t)(nnl - found - 1) * sizeof(nl_replies[0]));
			nnl--;
		}
	}
	pthread_mutex_unlock(&nl_lock);
	if (found < 0)
		return -1;
	for (size_t i = 0; i < niov && done < r.len; i++) {
		size_t n = r.len - done < iov[i].iov_len ? r.len - done : iov[i].iov_len;

		memcpy(iov[i].iov_base, r.buf + done, n);
		done += n;
	}
	*trunc = done < r.len;
	if (addr && alen && *alen >= sizeof(struct sockaddr_nl)) {
		struct sockaddr_nl k = { .nl_family = AF_NETLINK }; /* from the kernel */

		memcpy(addr, &k, sizeof(k));
		*alen = sizeof(k);
	}
	return (ssize_t)((flags & MSG_TRUNC) ? r.len : done);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	resolve();
	if (nl_intercept(fd, buf, len))
		return (ssize_t)len;
	return real_send(fd, buf, len, flags);
}

/* (libc's declarations: a transparent union of address pointers with _GNU_SOURCE) */
ssize_t sendto(int fd, const void *buf, size_t len, int flags, __CONST_SOCKADDR_ARG to,
	       socklen_t tolen)
{
	resolve();
	if (nl_intercept(fd, buf, len))
		return (ssize_t)len;
	return real_sendto(fd, buf, len, flags, to, tolen);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	resolve();
	if (msg && msg->msg_iovlen == 1 && msg->msg_iov &&
	    nl_intercept(fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len))
		return (ssize_t)msg->msg_iov[0].iov_len;
	return real_sendmsg(fd, msg, flags);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct sock_filt f;

	resolve();
	if (nfilt && msg && filt_get(fd, &f))
		return filt_recvmsg(&f, fd, msg, flags);
	if (nnl && msg) {
		int trunc = 0;
		ssize_t n = nl_take(fd, msg->msg_iov, msg->msg_iovlen, flags, &trunc,
				    msg->msg_name, &msg->msg_namelen);

		if (n >= 0) {
			msg->msg_flags = trunc ? MSG_TRUNC : 0;
			msg->msg_controllen = 0;
			return n;
		}
	}
	return real_recvmsg(fd, msg, flags);
}

ssize_t recvfrom(int fd, void *__restrict buf, size_t len, int flags, __SOCKADDR_ARG from,
		 socklen_t *__restrict fromlen)
{
	resolve();
	if (nnl) {
		struct iovec iov = { buf, len };
		struct sockaddr *addr;
		int trunc = 0;
		ssize_t n;

		_Static_assert(sizeof(from) == sizeof(addr), "one pointer");
		memcpy(&addr, &from, sizeof(addr));
		n = nl_take(fd, &iov, 1, flags, &trunc, addr, fromlen);
		if (n >= 0)
			return n;
	}
	if (nfilt) {
		struct sockaddr *addr;
		ssize_t n;

		memcpy(&addr, &from, sizeof(addr));
		n = filt_recv(fd, buf, len, flags, addr, fromlen);

		if (n >= 0)
			return n;
	}
	return real_recvfrom(fd, buf, len, flags, from, fromlen);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	resolve();
	if (nnl) {
		struct iovec iov = { buf, len };
		int trunc = 0;
		ssize_t n = nl_take(fd, &iov, 1, flags, &trunc, NULL, NULL);

		if (n >= 0)
			return n;
	}
	if (nfilt) {
		ssize_t n = filt_recv(fd, buf, len, flags, NULL, NULL);

		if (n != -2)
			return n;
	}
	return real_recv(fd, buf, len, flags);
}

/* BPF_LINK_CREATE on an interface: BPF_XDP (libbpf's bpf_program__attach_xdp) and
 * tcx ingress/egress (libbpf 1.3's bpf_program__attach_tcx): the program runs on the
 * interface's packets as above; closing the link detaches.  1 with *ret when answered
 * here. */
#define ATTACH_TCX_INGRESS 46 /* BPF_TCX_INGRESS, BPF_TCX_EGRESS: newer than some uapi */
#define ATTACH_TCX_EGRESS 47  /* headers this is built with (Debian 12's lack them) */

static int xdp_link_create(const union bpf_attr *attr, long *ret)
{
	int prog_fd = (int)attr->link_create.prog_fd, link, ptype = prog_type(prog_fd);
	uint32_t at = attr->link_create.attach_type;

	if (!(at == BPF_XDP && ptype == BPF_PROG_TYPE_XDP) &&
	    !((at == ATTACH_TCX_INGRESS || at == ATTACH_TCX_EGRESS) &&
	      ptype == BPF_PROG_TYPE_SCHED_CLS))
		return 0;
	link = iface_attach(prog_fd, (int)attr->link_create.target_ifindex,
			    at == ATTACH_TCX_EGRESS ? BPFRT_PKT_DIR_EGRESS : BPFRT_PKT_DIR_INGRESS,
			    at == BPF_XDP ? "XDP link" : "tcx link");
	*ret = link;
	if (link < 0) {
		errno = -link;
		*ret = -1;
		return 1;
	}
	pthread_mutex_lock(&tp_lock);
	if (nlinks < MAX_TP)
		link_fds[nlinks++] = link;
	pthread_mutex_unlock(&tp_lock);
	return 1;
}

/* SO_ATTACH_BPF of a bpfrt socket filter on a datagram socket: kept here (above);
 * SO_DETACH_BPF forgets it.  Any other SO_ATTACH_BPF of a bpfrt program (a stream socket,
 * SO_ATTACH_REUSEPORT_EBPF): the kernel answers (it refuses an fd that is no program of
 * its own) and stderr says why, once per process. */
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int told;
	int prog_fd, ret;

	resolve();
	if (level == SOL_SOCKET && name == SO_ATTACH_BPF && val && len == sizeof(int) &&
	    read_user((uint64_t)(uintptr_t)val, &prog_fd, sizeof(prog_fd)) == sizeof(prog_fd) &&
	    filt_attach(fd, prog_fd, &ret))
		return ret;
	/* (the kernel wants an int's room even here: EINVAL before detaching) */
	if (level == SOL_SOCKET && name == SO_DETACH_BPF && len >= sizeof(int) && filt_drop(fd))
		return 0;
	if (level == SOL_SOCKET && (name == SO_ATTACH_BPF || name == SO_ATTACH_REUSEPORT_EBPF) &&
	    val && len == sizeof(int) && read_user((uint64_t)(uintptr_t)val, &prog_fd,
						    sizeof(prog_fd)) == sizeof(prog_fd) &&
	    is_prog_fd(prog_fd) && !told) {
		told = 1;
		fprintf(stderr, "bpfrt-preload: %s of a bpfrt program: a kernel socket cannot "
				"run it, and bpfrt filters only datagram sockets' reads (the "
				"kernel's errno follows); `bpfrt attach IFACE` runs socket "
				"filters on an interface's packets\n",
			name == SO_ATTACH_BPF ? "SO_ATTACH_BPF" : "SO_ATTACH_REUSEPORT_EBPF");
	}
	return real_setsockopt(fd, level, name, val, len);
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

		if (ntp && tp_set_bpf(fd, (int)(intptr_t)arg, &ret))
			return ret;
		if (!told && is_prog_fd((int)(intptr_t)arg)) {
			told = 1;
			fprintf(stderr, "bpfrt-preload: PERF_EVENT_IOC_SET_BPF of a bpfrt program on "
					"a perf event other than a tracepoint, kprobe or uprobe: "
					"not attachable in bpfrt (the kernel's errno follows)\n");
		}
	}
	if (req == PERF_EVENT_IOC_DISABLE && ntp)
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
			tp_track((int)ret, &attr, (int)a[1]);
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
	return len == sizeof(info.link) ? KIND_LINK : KIND_NONE;
}

/* Is fd a bpfrt ring buffer map?  Its max_entries in *size. */
static int is_ringbuf(int fd, uint32_t *size)
{
	struct bpf_map_info info;

	if (obj_kind(fd, &info) != KIND_MAP || info.type != BPF_MAP_TYPE_RINGBUF)
		return 0;
	*size = info.max_entries;
	return 1;
}

static int is_prog_fd(int fd)
{
	return obj_kind(fd, NULL) == KIND_PROG;
}

/* The program type of bpfrt program fd, or -1. */
static int prog_type(int fd)
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

static void *map_ringbuf(size_t len, int prot, int flags, int fd, uint32_t size)
{
	unsigned char *base, *p;

	base = real_mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return MAP_FAILED;
	/* producer page and data, then the data again right after it */
	p = real_mmap(base, PRELOAD_PAGE + (size_t)size, prot, flags | MAP_FIXED, fd,
		      PRELOAD_PAGE);
	if (p != MAP_FAILED)
		p = real_mmap(base + PRELOAD_PAGE + size, size, prot, flags | MAP_FIXED, fd,
			      2 * PRELOAD_PAGE);
	if (p == MAP_FAILED) {
		int e = errno;

		munmap(base, len);
		errno = e;
		return MAP_FAILED;
	}
	return base;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	uint32_t size;

	resolve();
	/* libbpf maps the producer page and the data twice in one call; bpfrt's file holds
	 * the data once, so it is mapped piecewise.  Only that call shape is looked at. */
	if (fd >= 0 && off == PRELOAD_PAGE && !addr && !(flags & MAP_FIXED) &&
	    (flags & MAP_SHARED) && is_ringbuf(fd, &size) &&
	    len == PRELOAD_PAGE + 2 * (size_t)size)
		return map_ringbuf(len, prot, flags, fd, size);
	if (fd >= 0 && !off && is_perf(fd) && perf_resize(fd, len))
		return MAP_FAILED;
	return real_mmap(addr, len, prot, flags, fd, off);
}

/* libbpf calls the 64-bit name (one function on LP64: off_t is 64 bits) */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

/* Ring buffers registered with an epoll set: the map fd the caller named and the wake-up
 * pipe registered in its place. */
struct ring_wait {
	int epfd, map_fd, pipe_fd;
	int perf; /* a perf output ring (else a ring buffer map) */
};

static struct ring_wait rings[MAX_RINGS];
static int nrings;
static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;

static struct ring_wait *ring_find(int epfd, int map_fd)
{
	for (int i = 0; i < nrings; i++)
		if (rings[i].epfd == epfd && rings[i].map_fd == map_fd)
			return &rings[i];
	return NULL;
}

static int ring_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev, int perf)
{
	struct ring_wait *r;
	int ret = -1, err = 0, pfd;

	pthread_mutex_lock(&rings_lock);
	r = ring_find(epfd, fd);
	if (op == EPOLL_CTL_ADD) {
		if (r) {
			err = EEXIST;
		} else if (nrings == MAX_RINGS) {
			err = ENOSPC;
		} else if ((pfd = perf ? bpfrt_perf_ring_poll_fd(fd) : bpfrt_ringbuf_poll_fd(fd)) < 0) {
			err = -pfd;
		} else if (real_epoll_ctl(epfd, op, pfd, ev) < 0) {
			err = errno;
			close(pfd);
		} else {
			rings[nrings++] = (struct ring_wait){ epfd, fd, pfd, perf };
			ret = 0;
		}
	} else if (!r) {
		err = ENOENT;
	} else if ((ret = real_epoll_ctl(epfd, op, r->pipe_fd, ev)) < 0) {
		err = errno;
	} else if (op == EPOLL_CTL_DEL) {
		close(r->pipe_fd);
		*r = rings[--nrings];
	}
	pthread_mutex_unlock(&rings_lock);
	if (ret < 0)
		errno = err;
	return ret;
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	uint32_t size;
	int ret;

	resolve();
	ret = real_epoll_ctl(epfd, op, fd, ev);
	/* The kernel refuses a regular file (a bpfrt object) with EPERM; only then look. */
	if (ret < 0 && errno == EPERM) {
		if (is_ringbuf(fd, &size))
			return ring_epoll_ctl(epfd, op, fd, ev, 0);
		if (is_perf(fd))
			return ring_epoll_ctl(epfd, op, fd, ev, 1);
		errno = EPERM; /* is_ringbuf() asked bpfrt, which set errno */
	}
	if (ret < 0 && errno == ENOENT && op != EPOLL_CTL_ADD) {
		pthread_mutex_lock(&rings_lock);
		struct ring_wait *r = ring_find(epfd, fd);
		int perf = r ? r->perf : 0;

		ret = r ? 1 : -1;
		pthread_mutex_unlock(&rings_lock);
		if (ret > 0)
			return ring_epoll_ctl(epfd, op, fd, ev, perf);
		errno = ENOENT;
	}
	return ret;
}

/* After a wait: empty the wake-up pipes of epfd's rings.  Records whose wake-ups these
 * bytes were are in the ring already, so the consumption that follows sees them; a
 * record submitted later writes a new byte once the consumer catches up. */
static void drain(int epfd)
{
	char buf[256];

	pthread_mutex_lock(&rings_lock);
	for (int i = 0; i < nrings; i++)
		if (rings[i].epfd == epfd && rings[i].perf)
			bpfrt_perf_ring_drain(rings[i].map_fd); /* re-arms its wake-ups too */
		else if (rings[i].epfd == epfd)
			while (read(rings[i].pipe_fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf))
				;
	pthread_mutex_unlock(&rings_lock);
}

int epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
	int n;

	resolve();
	n = real_epoll_wait(epfd, evs, max, timeout);
	if (n > 0 && nrings)
		drain(epfd);
	return n;
}

int epoll_pwait(int epfd, struct epoll_event *evs, int max, int timeout, const sigset_t *ss)
{
	int n;

	resolve();
	n = real_epoll_pwait(epfd, evs, max, timeout, ss);
	if (n > 0 && nrings)
		drain(epfd);
	return n;
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
