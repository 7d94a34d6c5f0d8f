/* test_freeze_oracle.c - BPF_MAP_FREEZE of ring buffers and mmapable arrays, and what
 * the mappings and the programs may do afterwards, against the kernel.  The kernel's
 * map_freeze(): ENOTSUPP for a struct_ops map or a value with special fields (a
 * bpf_spin_lock, a bpf_timer; bpfrt froze all three before session 23; a bpf_wq, a
 * bpf_refcount, a kptr of a kernel type: bpfrt froze them until review23), EPERM without write access (a frozen map has none: a
 * second freeze), EBUSY while a writable mapping of the map exists (bpf_map_mmap()
 * counts them: libbpf's ring buffer consumer maps the consumer page writable);
 * bpf_map_mmap() then refuses a writable mapping (EPERM) and makes read-only ones; a
 * program's bpf_ringbuf_output() is not the syscall side and goes on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "btf_blob.h"
#include "harness.h"
#include "transcript.h"

static int freeze(sys_fn sys, int fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	return sys(BPF_MAP_FREEZE, &a, sizeof(a)) ? -errno : 0;
}

/* mmap() of page pg of fd: 0 (unmapped again) or -errno */
static int map_page(int fd, int prot, long pg)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)page, prot, MAP_SHARED, fd, pg * page);

	if (m == MAP_FAILED)
		return -errno;
	munmap(m, (size_t)page);
	return 0;
}

/* a socket filter: bpf_ringbuf_output(map, &0x1234, 8, 0); its result */
static int output_prog(sys_fn sys, int map)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = 10, .off = -8, .imm = 0x1234 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = 8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ringbuf_output },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	unsigned char pkt[64] = { 0 };
	int fd;

	prog_attr(&a, BPF_PROG_TYPE_SOCKET_FILTER, 0, insns, sizeof(insns) / sizeof(insns[0]));
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		return -1000 - errno;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = 1;
	fd = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -2000 - errno : (int)a.test.retval;
	return fd;
}

/* the producer position, read through a read-only mapping of the producer page */
static long producer_pos(int fd)
{
	long page = sysconf(_SC_PAGESIZE), pos;
	void *m = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, page);

	if (m == MAP_FAILED)
		return -errno;
	pos = (long)*(const volatile uint64_t *)m;
	munmap(m, (size_t)page);
	return pos;
}

#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (vlen))
static const char strs[] = "\0int\0bpf_spin_lock\0val\0lv\0a\0l\0bpf_timer\0tv\0lg\0bpf_wq"
			   "\0bpf_refcount\0task_struct\0kptr_untrusted";
/* [1] int, [2] struct bpf_spin_lock { int val; }, [3] struct lv { int a; lock l; },
 * [4] struct bpf_timer { int a, l, val, a; } (16 bytes, 8-aligned in use), [5] struct tv
 * { struct bpf_timer a; }, [6] long lg, [7] struct bpf_wq { lg a, l; }, [8] struct tv
 * { struct bpf_wq a; }, [9] struct bpf_refcount { int a; }, [10] struct lv { int a;
 * struct bpf_refcount l; }, [11] struct task_struct {}, [12] a kptr_untrusted tag of it,
 * [13] a pointer to that, [14] struct lv { that a; } (a kptr) */
static const uint32_t lock_types[] = {
	1,  INFO(BTF_KIND_INT, 0),    4,  (BTF_INT_SIGNED << 24) | 32,
	5,  INFO(BTF_KIND_STRUCT, 1), 4,  19, 1, 0,
	23, INFO(BTF_KIND_STRUCT, 2), 8,  26, 1, 0, 28, 2, 32,
	30, INFO(BTF_KIND_STRUCT, 4), 16, 26, 1, 0, 28, 1, 32, 19, 1, 64, 40, 1, 96,
	40, INFO(BTF_KIND_STRUCT, 1), 16, 26, 4, 0,
	43, INFO(BTF_KIND_INT, 0),    8,  (BTF_INT_SIGNED << 24) | 64,
	46, INFO(BTF_KIND_STRUCT, 2), 16, 26, 6, 0, 28, 6, 64,
	40, INFO(BTF_KIND_STRUCT, 1), 16, 26, 7, 0,
	53, INFO(BTF_KIND_STRUCT, 1), 4,  26, 1, 0,
	23, INFO(BTF_KIND_STRUCT, 2), 8,  26, 1, 0, 28, 9, 32,
	66, INFO(BTF_KIND_STRUCT, 0), 0,
	78, INFO(BTF_KIND_TYPE_TAG, 0), 11,
	0,  INFO(BTF_KIND_PTR, 0), 12,
	23, INFO(BTF_KIND_STRUCT, 1), 8,  26, 13, 0,
};

/* the values with a special field of lock_types: type id, size, what it holds */
static const struct {
	uint32_t value_id, size;
	const char *what;
} specials[] = {
	{ 3, 8, "bpf_spin_lock" }, { 5, 16, "bpf_timer" },   { 8, 16, "bpf_wq" },
	{ 10, 8, "bpf_refcount" }, { 14, 8, "kptr_untrusted" },
};

/* an array of one value of type value_id of lock_types */
static int special_map(sys_fn sys, int btf, uint32_t value_id, uint32_t value_size)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = value_size;
	a.max_entries = 1;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = 1;
	a.btf_value_type_id = value_id;
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* A struct_ops map of the kernel's bpf_struct_ops_tcp_congestion_ops (skipped, -1000,
 * when the kernel's BTF has none): the fd or -errno */
static int struct_ops_map(sys_fn sys, int btf)
{
	const struct brt_btf *vmlinux = brt_btf_vmlinux();
	int id = vmlinux ? brt_btf_find(vmlinux, "bpf_struct_ops_tcp_congestion_ops",
					BTF_KIND_STRUCT)
			 : -1;
	const struct btf_type *vt = id > 0 ? brt_btf_type(vmlinux, (uint32_t)id) : NULL;
	union bpf_attr a;
	int fd;

	if (!vt)
		return -1000;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_STRUCT_OPS;
	a.key_size = 4;
	a.value_size = vt->size;
	a.max_entries = 1;
	a.btf_fd = (uint32_t)btf;
	a.btf_vmlinux_value_type_id = (uint32_t)id;
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* The steps that must answer as the kernel's. */
static void script(sys_fn sys, struct transcript *t)
{
	int rb = create_map(sys, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, 0), fd, btf;

	say(t, "ringbuf made: %d\n", rb >= 0);
	say(t, "ringbuf: freeze: %d\n", freeze(sys, rb));
	say(t, "ringbuf: freeze again: %d\n", freeze(sys, rb));
	say(t, "ringbuf: update: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, rb, NULL, NULL, 0));
	say(t, "ringbuf: consumer page mapped read-only: %d\n", map_page(rb, PROT_READ, 0));
	say(t, "ringbuf: producer page mapped read-only: %d\n", map_page(rb, PROT_READ, 1));
	say(t, "ringbuf: a program's bpf_ringbuf_output after freeze: %d\n", output_prog(sys, rb));
	say(t, "ringbuf: producer position after it: %ld\n", producer_pos(rb));
	close(rb);
	fd = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 4, BPF_F_MMAPABLE, 0);
	say(t, "mmapable array: freeze: %d\n", freeze(sys, fd));
	say(t, "mmapable array: mapped read-only after freeze: %d\n", map_page(fd, PROT_READ, 0));
	close(fd);
	btf = btf_blob_load(sys, lock_types, sizeof(lock_types), strs, sizeof(strs));
	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++) {
		fd = special_map(sys, btf, specials[i].value_id, specials[i].size);
		say(t, "array with a %s: made %d, freeze %d\n", specials[i].what, fd >= 0,
		    fd >= 0 ? freeze(sys, fd) : fd);
		if (fd >= 0)
			close(fd);
	}
	fd = struct_ops_map(sys, btf);
	say(t, "struct_ops map: made %d, freeze %d\n", fd >= 0, fd >= 0 ? freeze(sys, fd) : fd);
	if (fd >= 0)
		close(fd);
	if (btf >= 0)
		close(btf);
}

/* The steps that differ, as documented: the kernel counts writable mappings of the map
 * (bpf_map_mmap()), freezes none that has one (EBUSY) and maps none writable once frozen
 * (EPERM); bpfrt's fd is its file, which mmap() maps without asking bpfrt.  r[0..3]:
 * ring buffer, r[4..7] mmapable array: a writable mapping made, freeze under it, freeze
 * after munmap, a writable mapping after the freeze. */
static void mapped_steps(sys_fn sys, int *r)
{
	long page = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < 2; i++) {
		int fd = i ? create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 4, BPF_F_MMAPABLE, 0)
			   : create_map(sys, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, 0);
		void *w = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		r[4 * i] = w != MAP_FAILED;
		r[4 * i + 1] = freeze(sys, fd);
		if (w != MAP_FAILED)
			munmap(w, (size_t)page);
		r[4 * i + 2] = freeze(sys, fd);
		r[4 * i + 3] = map_page(fd, PROT_READ | PROT_WRITE, 0);
		close(fd);
	}
}

static int count_rec(void *arg, void *data, size_t size)
{
	(void)data, (void)size;
	++*(int *)arg;
	return 0;
}

/* bpfrt's consumer (bpfrt_ringbuf_consume(), bpfrt_ringbuf_poll_fd(); libbpf's through
 * the preload) as the kernel's writable consumer mapping: a live consumer's ring buffer
 * is not frozen (EBUSY), a frozen one not consumed (EPERM), and waiting still works.
 * r[0] freeze while this process polls, r[5] once it closed the fd it polled, r[6] while
 * it keeps the first of two fds it got (the second closed: two consumers of one ring, as
 * two libbpf ring_buffer instances), r[7] once it closed that one too, r[1] while a child
 * polls, r[2] once the child exited, r[3] consume of the frozen ring, r[4] poll_fd of it. */
static void consumer_steps(int *r)
{
	int rb = create_map(bpfrt_bpf, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, 0), pfd, n = 0;
	int go[2], done[2], st, pfd2;
	char c = 0;
	pid_t pid;

	pfd = bpfrt_ringbuf_poll_fd(rb);
	r[0] = pfd < 0 ? -1000 : freeze(bpfrt_bpf, rb);
	if (pfd >= 0)
		close(pfd);
	r[5] = freeze(bpfrt_bpf, rb);
	close(rb);
	rb = create_map(bpfrt_bpf, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, 0);
	pfd = bpfrt_ringbuf_poll_fd(rb);
	pfd2 = bpfrt_ringbuf_poll_fd(rb);
	if (pfd2 >= 0)
		close(pfd2);
	r[6] = pfd < 0 || pfd2 < 0 ? -1000 : freeze(bpfrt_bpf, rb);
	if (pfd >= 0)
		close(pfd);
	r[7] = freeze(bpfrt_bpf, rb);
	close(rb);
	rb = create_map(bpfrt_bpf, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, 0);
	if (pipe(go) || pipe(done)) {
		r[1] = r[2] = r[3] = r[4] = -1000;
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		pfd = bpfrt_ringbuf_poll_fd(rb);
		c = pfd >= 0;
		if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	r[1] = read(go[0], &c, 1) == 1 && c ? freeze(bpfrt_bpf, rb) : -1000;
	if (write(done[1], &c, 1) != 1 || waitpid(pid, &st, 0) != pid)
		r[2] = -1000;
	else
		r[2] = freeze(bpfrt_bpf, rb);
	r[3] = bpfrt_ringbuf_consume(rb, count_rec, &n);
	pfd = bpfrt_ringbuf_poll_fd(rb);
	r[4] = pfd >= 0 ? 1 : pfd;
	if (pfd >= 0)
		close(pfd);
	close(rb);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

int main(void)
{
	static struct transcript k, b;
	static const char *const mnames[] = {
		"ringbuf: consumer page mapped writable", "ringbuf: freeze under it",
		"ringbuf: freeze after munmap", "ringbuf: a writable mapping after freeze",
		"mmapable array: mapped writable", "mmapable array: freeze under it",
		"mmapable array: freeze after munmap",
		"mmapable array: a writable mapping after freeze",
	};
	/* the kernel's answers, and bpfrt's (the mappings it does not see) */
	static const int kwant[8] = { 1, -EBUSY, 0, -EPERM, 1, -EBUSY, 0, -EPERM };
	static const int bwant[8] = { 1, 0, -EPERM, 0, 1, 0, -EPERM, 0 };
	int km[8], bm[8], cr[8], kw[2];

	if (geteuid() || create_map(kernel_bpf, BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, 0) < 0)
		T_SKIP("needs root and the kernel's bpf()");
	script(kernel_bpf, &k);
	script(bpfrt_bpf, &b);
	if (getenv("BPFRT_SHOW"))
		fputs(k.text, stdout);
	compare_transcripts(&k, &b);
	mapped_steps(kernel_bpf, km);
	mapped_steps(bpfrt_bpf, bm);
	for (int i = 0; i < 8; i++) {
		T_CASE(mnames[i]);
		if (km[i] != bm[i])
			printf("differs, as documented: %s: kernel %d, bpfrt %d\n", mnames[i], km[i],
			       bm[i]);
		T_EQ_INT(kwant[i], km[i]);
		T_EQ_INT(bwant[i], bm[i]);
	}
	/* the kernel's two consumer mappings, the second unmapped: the first still counts */
	{
		long page = sysconf(_SC_PAGESIZE);
		int fd = create_map(kernel_bpf, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, 0);
		void *m1 = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		void *m2 = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (m2 != MAP_FAILED)
			munmap(m2, (size_t)page);
		kw[0] = m1 == MAP_FAILED || m2 == MAP_FAILED ? -1000 : freeze(kernel_bpf, fd);
		if (m1 != MAP_FAILED)
			munmap(m1, (size_t)page);
		kw[1] = freeze(kernel_bpf, fd);
		close(fd);
	}
	consumer_steps(cr);
	T_CASE("bpfrt: freeze while this process polls the ring buffer: EBUSY");
	T_EQ_INT(-EBUSY, cr[0]);
	T_CASE("bpfrt: freeze once this process closed the fd it polled");
	T_EQ_INT(0, cr[5]);
	T_CASE("kernel: freeze under the first of two consumer mappings, the second unmapped");
	T_EQ_INT(-EBUSY, kw[0]);
	T_EQ_INT(0, kw[1]);
	T_CASE("bpfrt: freeze while this process keeps the first of two fds it polled: EBUSY");
	T_EQ_INT(kw[0], cr[6]);
	T_CASE("bpfrt: freeze once it closed both");
	T_EQ_INT(kw[1], cr[7]);
	T_CASE("bpfrt: freeze while a child polls it: EBUSY");
	T_EQ_INT(-EBUSY, cr[1]);
	T_CASE("bpfrt: freeze once the child exited");
	T_EQ_INT(0, cr[2]);
	T_CASE("bpfrt: consume a frozen ring buffer: EPERM, as the kernel's writable mmap");
	T_EQ_INT(-EPERM, cr[3]);
	T_CASE("bpfrt: wait on a frozen ring buffer");
	T_EQ_INT(1, cr[4]);
	return t_done();
}
