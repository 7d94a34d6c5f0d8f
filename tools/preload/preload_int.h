/* preload_int.h - what the files of libbpfrt-preload.so share: libc's own definitions of
 * the symbols they interpose, reading the caller's memory, what kind of bpfrt object an
 * fd is, and each file's entry points for the interposers of the others (preload.c's
 * header says which file holds what).
 */
#ifndef BPFRT_PRELOAD_INT_H
#define BPFRT_PRELOAD_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "bpfrt.h"

/* The library is built with default visibility, since its interposers must be seen ahead of
 * libc's; the names below are its own business and stay out of the dynamic symbol table (a
 * program defining a real_close of its own must not be bound to ours, nor ours to it). */
#pragma GCC visibility push(hidden)

#define PRELOAD_PAGE 4096u

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

/* libc's definitions, set by resolve() (preload.c), which every interposer calls first. */
extern syscall_fn real_syscall;
extern path_fn real_unlink, real_rmdir;
extern mkdir_fn real_mkdir;
extern readlink_fn real_readlink;
extern statfs_fn real_statfs;
extern fopen_fn real_fopen, real_fopen64;
extern mmap_fn real_mmap;
extern epoll_ctl_fn real_epoll_ctl;
extern epoll_wait_fn real_epoll_wait;
extern epoll_pwait_fn real_epoll_pwait;
extern ioctl_fn real_ioctl;
extern close_fn real_close;
extern setsockopt_fn real_setsockopt;
extern send_fn real_send;
extern recv_fn real_recv;
extern read_fn real_read;
extern sendto_fn real_sendto;
extern sendmsg_fn real_sendmsg;
extern recvmsg_fn real_recvmsg;
extern recvfrom_fn real_recvfrom;

/* preload.c: the process's memory and fds. */
void resolve(void);
size_t read_user(uint64_t addr, void *buf, size_t len);
int is_prog_fd(int fd);
int prog_type(int fd);
/* a bpfrt ring buffer or user ring buffer: 1 with its size and map type */
int is_ringbuf(int fd, uint32_t *size, uint32_t *type);

/* preload_ring.c: the epoll set epfd is being closed: the wake-up pipes registered in it
 * go with it. */
void ring_epoll_closed(int epfd);

/* preload_ring.c: BPF output events (perf_event_open through syscall()). */
int route_perf_open(long a[6], long *ret);
int is_perf(int fd);

/* preload_attach.c: programs on perf events and raw tracepoints; the links handed out. */
void tp_track(int fd, const struct perf_event_attr *attr, int pid, int cpu);
int tp_set_bpf(int fd, int prog_fd, int *ret);
void tp_detach(int fd, int forget);
int perf_link_create(const union bpf_attr *attr, long *ret);
int raw_tp_open(const union bpf_attr *attr, long *ret);

/* preload_net.c: socket filters and interface attach. */
int filt_drop(int fd);
int xdp_link_create(const union bpf_attr *attr, long *ret);

#pragma GCC visibility pop

#endif
