/* util.h - small shared pieces: diagnostics, options-struct checks, safe guest-memory
 * access.  The util/ folder's interface.
 */
#ifndef BPFRT_SRC_UTIL_UTIL_H
#define BPFRT_SRC_UTIL_UTIL_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "bpfrt.h"

/* The kernel's internal "operation not supported" errno (not in <errno.h>), which bpf()
 * returns for e.g. a lookup in a ring buffer or BTF it cannot represent. */
#define BRT_ENOTSUPP 524

#define BRT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define brt_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

void brt_print(enum bpfrt_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Paths other users may control (fs.c, docs/SECURITY.md).  brt_fs_dir_check(): 0 when
 * dir and every directory above it are root's or the caller's and not writable by others
 * unless sticky (the last, when shared, must be root's); else -errno with the path and
 * the problem in why.  brt_fs_dir_prepare(): create dir if missing (01777 by root, 0700
 * by anyone else, whatever the umask) and check it; a refusal is printed once. */
int brt_fs_dir_check(const char *dir, char *why, size_t len);
int brt_fs_dir_prepare(const char *dir);
/* brt_fs_dir_check() answered from brt_fs_dir_prepare()'s memory of the last directory
 * found trustworthy when a stat() still sees it the same (owner, mode, inode): for the
 * paths that check it per call and must not create it (BPF_OBJ_GET). */
int brt_fs_dir_trusted(const char *dir, char *why, size_t len);
/* A small text file read whole, NUL-terminated: length or -errno (-ENODATA if empty). */
ssize_t brt_fs_read_text(const char *path, char *buf, size_t cap);
/* Open path (relative to dirfd) with flags (O_CREAT and O_TRUNC dropped) only if it is a
 * regular file, never following a final symlink unless follow is set, so that no FIFO
 * or device is ever opened: the fd, -EACCES for anything not regular, or -errno. */
int brt_fs_open_reg(int dirfd, const char *path, int flags, int follow);
/* The same, with the file's stat() (taken before it was opened: the same inode) in *st. */
int brt_fs_open_reg_st(int dirfd, const char *path, int flags, int follow, struct stat *st);
/* A directory read straight from its fd with getdents64: no DIR (fdopendir() costs an
 * fstat and two fcntl, a DIR of an fd still in use a dup and a close more; #17 item 3).
 * brt_dents_start() rewinds fd (0 or -errno); brt_dents_next() gives the next name but
 * "." and "..", NULL at the end or when the directory cannot be read. */
struct brt_dents {
	int fd;
	long got, at;
	_Alignas(8) char buf[4096];
};
int brt_dents_start(struct brt_dents *d, int fd);
const char *brt_dents_next(struct brt_dents *d);
/* Name the file open as fd (dirfd, path), as linkat() of /proc/self/fd/<fd> following
 * the link does: 0 or -errno (-EEXIST when the name is taken). */
int brt_fs_link_fd(int fd, int dirfd, const char *path);
/* A directory of one user inside a shared one (fs, an fd): brt_fs_owned_dir() opens name
 * if it is a real directory of uid that nobody else can write (its fd, or -errno:
 * -EACCES for anything else).  brt_fs_owned_dir_lock(): the calling user's such
 * directory, made (0755: others may open what their own permissions allow) when missing,
 * with its lock held: a 0600 ".lock" file in it, which no other user can open and so
 * cannot hold (a lock on the directory itself, readable by all, could be held by anyone).
 * The lock's fd (closing it unlocks), the directory's in *dirfd; -ENOLCK when the lock
 * file is not right, another -errno when the directory is not. */
int brt_fs_owned_dir(int fs, const char *name, uid_t uid);
int brt_fs_owned_dir_lock(int fs, const char *name, int *dirfd);

/* The format language of the printk-style helpers (bprintf.c, the kernel's
 * bpf_bprintf_prepare()).  brt_bprintf_spec() reads the conversion at fmt[i] == '%' (fmt
 * NUL-terminated): 0 or -EINVAL for one the kernel refuses.  brt_bprintf_char_ok(): a
 * byte a format may hold (printable, a space, or above 0x7f).  brt_bprintf_check(): a NUL
 * within fmt_size, bytes that may be there, "%%", and at most num_args valid conversions:
 * 0 or -EINVAL. */
enum brt_bprintf_kind {
	BRT_BPF_INT,  /* %d %i %u %x %X: 32 bits */
	BRT_BPF_LONG, /* the same with l or ll: 64 bits */
	BRT_BPF_CHAR, /* %c */
	BRT_BPF_STR,  /* %s %pks %pus: a string at the address */
	BRT_BPF_PTR,  /* %p %pK %px %ps %pS %pB: the address */
	BRT_BPF_IP4,  /* %pI4 %pi4: 4 bytes at the address */
	BRT_BPF_IP6,  /* %pI6 %pi6: 16 bytes at the address */
};

struct brt_bprintf_spec {
	size_t start;     /* index of '%' */
	size_t width_end; /* index past flags and width */
	size_t end;       /* index past the conversion */
	enum brt_bprintf_kind kind;
	char letter;      /* d i u x X c s p, or i / I of an address */
};

int brt_bprintf_char_ok(unsigned char c);
int brt_bprintf_spec(const char *fmt, size_t i, struct brt_bprintf_spec *s);
int brt_bprintf_check(const char *fmt, size_t fmt_size, uint32_t num_args);

/* Copy len bytes between this process's memory and an address the caller does not
 * vouch for (ucopy.c): 0, -EFAULT when any byte is unmapped or not accessible that way,
 * -ENOSYS when the fallback through process_vm_*() is not allowed here (seccomp, old
 * kernels).  dst_is_user: the untrusted side is dst (a write), else src (a read). */
int brt_ucopy(void *dst, const void *src, size_t len, int dst_is_user);

/* Single aligned 32-bit accesses to shared memory another process may truncate (a
 * mapped file's pages past its new end raise SIGBUS): -EFAULT instead of a crash, else
 * brt_uload32()/brt_ustore32() 0 and brt_ucas32() 1 when it swapped, 0 when not
 * (*expected = the word found).  x86-64 only, and only once brt_ufault_ready() said 1
 * (the fault handler is installed; not with BPFRT_UCOPY=syscall): elsewhere callers do
 * without the shared memory.  brt_ucopy() is the bulk copy with the same guard. */
int brt_ufault_ready(void);
#if defined(__x86_64__) && defined(__linux__)
__attribute__((visibility("hidden"))) int brt_uload32(const void *p, uint32_t *out);
__attribute__((visibility("hidden"))) int brt_ustore32(void *p, uint32_t v);
__attribute__((visibility("hidden"))) int brt_ucas32(void *p, uint32_t *expected,
						     uint32_t desired);
#endif

/* cgroup v2 (cgroup.c).  brt_cgroup2_mount(): the mount point of cgroup2 in this
 * process's view into dir (1) or 0 when it is not mounted.  brt_cgroup_ids(): the ids
 * (directory inode numbers, as the kernel's cgroup ids) of task tid's cgroup and its
 * ancestors, the root's first (ids[level], as cgroup->ancestors[]): how many, 0 when
 * unknown, -1 when deeper than max. */
#define BRT_CGROUP_MAX_LEVELS 64
int brt_cgroup2_mount(char *dir, size_t cap);
int brt_cgroup_ids(int32_t tid, uint64_t *ids, int max);

/* The running kernel's build configuration (kconfig.c): CONFIG_X's value as the config
 * file writes it ("y", "64", "\"str\"") in *value, NULL when the file does not set it;
 * 0, or -ENOENT (and NULL) when no config file was read. */
int brt_kconfig_get(const char *name, const char **value);

/* The kernel's jiffies_64 now, as bpf_jiffies64 gives it (jiffies.c): CLOCK_MONOTONIC in
 * ticks of the host's HZ, from the kernel's INITIAL_JIFFIES; brt_jiffies_hz(): that HZ. */
uint64_t brt_jiffies64(void);
unsigned brt_jiffies_hz(void);
/* 1 when /proc/timer_list gave the kernel's offset (the values are the kernel's), 0 when
 * only HZ is known (values ahead by less than a second) */
int brt_jiffies_exact(void);
/* The calibration on the text of one /proc/timer_list read: HZ (config_hz when not 0,
 * else the nearest of the kernel's choices) and the kernel's offset in ticks; 1 when the
 * text had its "now at" and "jiffies:" numbers, else 0 (nothing set). */
int brt_jiffies_fit(const char *text, unsigned config_hz, unsigned *hz, int64_t *offset);

/* The CPU a program run is for (cpu.c): the one the kernel took the record on while the
 * trace runner runs programs for a record read from CPU N's ring (brt_cpu_enter(N)),
 * else the CPU this thread is on.  bpf_get_smp_processor_id, the per-CPU maps' copies
 * and BPF_F_CURRENT_CPU all ask brt_cpu_now() (obj's brt_cpu() through it), and the
 * JIT's inlined per-CPU lookup reads the same word at fs:[brt_cpu_tls_off()].  The word
 * is N + 1, 0 for none: zero-filled TLS, so correct in threads that existed before a
 * dlopen() of the library.  Initial-exec: at the same fs offset in every thread. */
extern _Thread_local uint32_t brt_cpu_event __attribute__((tls_model("initial-exec")));

static inline int brt_cpu_now(void)
{
	uint32_t e = brt_cpu_event;

	return __builtin_expect(e != 0, 0) ? (int)(e - 1) : sched_getcpu();
}

/* Runs on this thread are for CPU cpu until brt_cpu_leave() with what this returned
 * (nesting restores the outer run's CPU). */
static inline uint32_t brt_cpu_enter(uint32_t cpu)
{
	uint32_t prev = brt_cpu_event;

	brt_cpu_event = cpu + 1;
	return prev;
}

static inline void brt_cpu_leave(uint32_t prev)
{
	brt_cpu_event = prev;
}

/* brt_cpu_event's offset from the thread pointer (x86-64's fs base), for the JIT. */
int64_t brt_cpu_tls_off(void);

/* SHA-256 of len bytes (sha256.c): program tags, as the kernel computes them. */
void brt_sha256(const void *data, size_t len, unsigned char out[32]);

/* Options structs (struct { size_t sz; ... }): valid when sz covers at least the size
 * field and every byte past what this build knows (known_size) is zero.  Prints a
 * message naming the struct and returns 0 when invalid. */
int brt_opts_valid(const void *opts, size_t known_size, const char *type_name);

/* Read a field only if the caller's struct is large enough to hold it. */
#define BRT_OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))
#define BRT_OPTS_GET(opts, field, fallback) (BRT_OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* The hash of a hash map's key (brt_keyhash() below): h = seed ^ key_size * LEN; for
 * each whole 8-byte word w of the key, h = (h ^ w) * WORD, h ^= h >> 32; a 1..7-byte tail t
 * (little-endian, zero-padded): h = (h ^ t) * TAIL; then h ^= h >> 29, h *= FIN, and the
 * hash is the low 32 bits of h ^ (h >> 32).  The constants live here, below both, because
 * the JIT's inlined probe (jit/x86_64/lookup.c) emits the same steps as machine code. */
#define BRT_KEYHASH_LEN 0x9e3779b97f4a7c15ull
#define BRT_KEYHASH_WORD 0xff51afd7ed558ccdull
#define BRT_KEYHASH_TAIL 0xc4ceb9fe1a85ec53ull
#define BRT_KEYHASH_FIN 0x94d049bb133111ebull

/* The last len (1..7) bytes of a key in a zeroed word, as memcpy() would put them.  The
 * 4-byte key, the common case of the hot paths, is one 32-bit load: a byte-wise copy into
 * a stack word followed by a 64-bit load of it stalls on store forwarding. */
static inline uint64_t brt_keyhash_tail(const unsigned char *p, uint32_t len)
{
	uint64_t w = 0;
	uint32_t w4;

	if (len == 4) {
		memcpy(&w4, p, 4);
		return w4;
	}
	for (uint32_t i = 0; i < len; i++)
		w |= (uint64_t)p[i] << (8 * i);
	return w;
}

/* The hash itself: maps/hash.c hashes every key with it, and the JIT with it a key it
 * knows at compile time (pass constkey). */
static inline uint32_t brt_keyhash(const void *key, uint32_t len, uint32_t seed)
{
	const unsigned char *p = key;
	uint64_t h = seed ^ (len * BRT_KEYHASH_LEN), w;

	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * BRT_KEYHASH_WORD;
		h ^= h >> 32;
	}
	if (len)
		h = (h ^ brt_keyhash_tail(p, len)) * BRT_KEYHASH_TAIL;
	h ^= h >> 29;
	h *= BRT_KEYHASH_FIN;
	return (uint32_t)(h ^ (h >> 32));
}

/* Unaligned-safe guest memory access; each compiles to one mov. */
static inline uint64_t brt_load(const void *p, unsigned size)
{
	switch (size) {
	case 1: { uint8_t v; memcpy(&v, p, 1); return v; }
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

/* The binding of the AF_XDP socket with this cookie (SO_COOKIE) in this network
 * namespace, from NETLINK_SOCK_DIAG (xsk_diag.c): 1 with its interface and queue when
 * bound, 0 when not, -ENOENT when there is no such socket (closed), -EOPNOTSUPP when
 * the kernel has no AF_XDP diagnostics, else -errno. */
int brt_xsk_binding(uint64_t cookie, uint32_t *ifindex, uint32_t *queue);

/* Whether a TCP listener in this network namespace takes connections to addr (4 bytes for
 * AF_INET, 16 for AF_INET6, network order) port (host order) on device dif (0: any),
 * by the kernel's own lookup (inet_diag.c): 1, 0, or -errno.  nl: a NETLINK_SOCK_DIAG
 * socket of the namespace to ask, or -1 for one of the caller's.  A connected socket's
 * local end answering 1 was accept()ed (inet_diag.c says why that is the sign). */
int brt_tcp_listener_at(int nl, int family, const uint32_t addr[4], uint16_t port, int dif);

static inline void brt_store(void *p, unsigned size, uint64_t val)
{
	switch (size) {
	case 1: { uint8_t v = (uint8_t)val; memcpy(p, &v, 1); break; }
	case 2: { uint16_t v = (uint16_t)val; memcpy(p, &v, 2); break; }
	case 4: { uint32_t v = (uint32_t)val; memcpy(p, &v, 4); break; }
	default: memcpy(p, &val, 8); break;
	}
}

#endif
