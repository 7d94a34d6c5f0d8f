/* test_opts.c - every public options struct declared with BPFRT_OPTS() (include/bpfrt/
 * common.h) is accepted by the call that takes it, even on a stack full of non-zero
 * bytes.  The library refuses non-zero bytes past the fields it knows
 * (src/util/opts.c), and C leaves padding bytes unspecified: clang does not zero the
 * tail padding of an automatic struct initialised member by member.  So no opts struct
 * may have tail padding (the static assertions below; explicit padding members are named
 * and so zeroed).  tests/api/tests.cmake builds this file a second time with clang
 * (api.opts_clang), the compiler that showed the problem.
 */
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include <bpfrt.h>

#include "harness.h"

/* The struct ends with its last member (T__last, or the `reserved` member filling what
 * would be tail padding: a named member, which BPFRT_OPTS zeroes). */
#define END_OF(T, member) (offsetof(struct T, member) + sizeof(((struct T *)0)->member))
#define NO_TAIL_PADDING(T, last)                                                          \
	_Static_assert(END_OF(T, last) == sizeof(struct T),                               \
		       #T " has tail padding: fill it with a reserved member")
NO_TAIL_PADDING(bpfrt_map_create_opts, reserved);
NO_TAIL_PADDING(bpfrt_prog_load_opts, bpfrt_prog_load_opts__last);
NO_TAIL_PADDING(bpfrt_test_run_opts, bpfrt_test_run_opts__last);
NO_TAIL_PADDING(bpfrt_vm_opts, bpfrt_vm_opts__last);
NO_TAIL_PADDING(bpfrt_helper_proto, reserved);
NO_TAIL_PADDING(bpfrt_pkt_filter_opts, bpfrt_pkt_filter_opts__last);
NO_TAIL_PADDING(bpfrt_pkt_link_opts, bpfrt_pkt_link_opts__last);
NO_TAIL_PADDING(bpfrt_object_open_opts, reserved);
NO_TAIL_PADDING(bpfrt_perf_ring_opts, bpfrt_perf_ring_opts__last);
NO_TAIL_PADDING(bpfrt_perf_buffer_opts, bpfrt_perf_buffer_opts__last);
NO_TAIL_PADDING(bpfrt_tracepoint_opts, reserved);
NO_TAIL_PADDING(bpfrt_perf_event_opts, bpfrt_perf_event_opts__last);
/* ... and `reserved` comes right after the last field the library knows, so a non-zero
 * one is refused like any unknown field. */
#define RESERVED_FOLLOWS(T)                                                               \
	_Static_assert(offsetof(struct T, reserved) == END_OF(T, T##__last),              \
		       #T ": reserved must follow " #T "__last")
RESERVED_FOLLOWS(bpfrt_map_create_opts);
RESERVED_FOLLOWS(bpfrt_helper_proto);
RESERVED_FOLLOWS(bpfrt_tracepoint_opts);
RESERVED_FOLLOWS(bpfrt_object_open_opts);

static const struct bpf_insn ret0[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

/* Field values the compiler cannot fold: with constants, compilers tend to build the
 * struct with wide stores that cover the padding too; with values known only at run time
 * they store member by member (clang: what fuzz/fuzz_shm.c met). */
static volatile uint32_t zero;

/* Fill the stack the next call's frame will occupy with non-zero bytes. */
__attribute__((noinline)) static void dirty_stack(void)
{
	volatile unsigned char junk[8192];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

__attribute__((noinline)) static void map_create(void)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = zero, .numa_node = zero,
		   .map_extra = zero, .inner_map_fd = zero);
	int fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "opts", 4, 8, 1, &o);

	T_CASE("bpfrt_map_create_opts");
	T_ASSERT(fd >= 0);
	if (fd >= 0)
		close(fd);
	/* the check stays: a non-zero byte past what the library knows is refused */
	o.reserved = 1;
	T_EQ_INT(-EINVAL, bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "opts", 4, 8, 1, &o));
}

/* A socket filter returning 0, loaded with prog_load_opts; its fd. */
__attribute__((noinline)) static int prog_load(void)
{
	static char log[256];
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .log_level = 1, .log_size = sizeof(log),
		   .log_buf = log);
	int fd = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "opts", "GPL", ret0, 2, &o);

	T_CASE("bpfrt_prog_load_opts");
	T_ASSERT(fd >= 0);
	return fd;
}

__attribute__((noinline)) static void test_run(int prog_fd)
{
	unsigned char pkt[64] = { 0 };
	BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
		   .repeat = 1, .batch_size = zero);

	T_CASE("bpfrt_test_run_opts");
	T_EQ_INT(0, bpfrt_prog_test_run_opts(prog_fd, &o));
}

__attribute__((noinline)) static void vm_and_helper(void)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_CHECKED, .max_insns = zero);
	BPFRT_OPTS(bpfrt_helper_proto, p, .id = BPFRT_HELPER_HOST_BASE + 77, .name = "opts",
		   .fn = NULL, .gpl_only = !zero);
	struct bpfrt_vm *vm = NULL;
	char err[128] = "";

	T_CASE("bpfrt_vm_opts");
	T_EQ_INT(0, bpfrt_vm_load(ret0, 2, &o, &vm, err, sizeof(err)));
	if (!vm)
		return;
	T_CASE("bpfrt_helper_proto");
	p.fn = (bpfrt_helper_fn)(uintptr_t)bpfrt_version; /* never called */
	T_EQ_INT(0, bpfrt_helper_register(vm, &p));
	bpfrt_vm_free(vm);
}

__attribute__((noinline)) static void pkt_filter(void)
{
	BPFRT_OPTS(bpfrt_pkt_filter_opts, o, .engine = BPFRT_ENGINE_DEFAULT);
	struct bpfrt_pkt_filter *f = NULL;
	char err[128] = "";

	T_CASE("bpfrt_pkt_filter_opts");
	T_EQ_INT(0, bpfrt_pkt_filter_load(ret0, 2, &o, &f, err, sizeof(err)));
	bpfrt_pkt_filter_free(f);
}

/* No such interface: the options pass, the interface is not found. */
__attribute__((noinline)) static void pkt_link(int prog_fd)
{
	BPFRT_OPTS(bpfrt_pkt_link_opts, o, .ring_blocks = 1 + zero, .direction = zero);
	char err[128] = "";

	T_CASE("bpfrt_pkt_link_opts");
	T_EQ_INT(-ENODEV, bpfrt_prog_attach_iface(prog_fd, "bpfrt-opts0", &o, err, sizeof(err)));
}

/* No such file: the options pass, the open fails. */
__attribute__((noinline)) static void object_open(void)
{
	BPFRT_OPTS(bpfrt_object_open_opts, o, .object_name = "opts", .kernel = (int)zero);

	T_CASE("bpfrt_object_open_opts");
	errno = 0;
	T_ASSERT(bpfrt_object_open_file("/nonexistent/bpfrt-opts.o", &o) == NULL);
	T_EQ_INT(ENOENT, errno);
}

__attribute__((noinline)) static void perf_ring(void)
{
	BPFRT_OPTS(bpfrt_perf_ring_opts, o, .wakeup_events = 1, .wakeup_watermark = zero);
	int fd = bpfrt_perf_ring_create(-1, 1, &o);

	T_CASE("bpfrt_perf_ring_opts");
	T_ASSERT(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static void on_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	(void)ctx, (void)cpu, (void)data, (void)size;
}

__attribute__((noinline)) static void perf_buffer(void)
{
	static const int cpus[1] = { -1 };
	BPFRT_OPTS(bpfrt_perf_buffer_opts, o, .wakeup_events = 1, .cpu_cnt = 1, .cpus = cpus);
	int map_fd = bpfrt_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "opts_pb", 4, 4, 1, NULL);
	struct bpfrt_perf_buffer *pb;

	T_CASE("bpfrt_perf_buffer_opts");
	T_ASSERT(map_fd >= 0);
	if (map_fd < 0)
		return;
	pb = bpfrt_perf_buffer_new(map_fd, 1, on_sample, NULL, NULL, &o);
	T_ASSERT(pb != NULL);
	bpfrt_perf_buffer_free(pb);
	close(map_fd);
}

/* A closed program fd: the options pass, the fd is refused. */
__attribute__((noinline)) static void tracepoint(void)
{
	BPFRT_OPTS(bpfrt_tracepoint_opts, o, .ring_pages = 2 + zero);

	T_CASE("bpfrt_tracepoint_opts");
	T_EQ_INT(-EBADF, bpfrt_tracepoint_attach(-1, "syscalls/sys_enter_getpid", &o));
}

int main(void)
{
	int prog_fd;

	dirty_stack();
	map_create();
	dirty_stack();
	prog_fd = prog_load();
	if (prog_fd >= 0) {
		dirty_stack();
		test_run(prog_fd);
		dirty_stack();
		pkt_link(prog_fd);
		close(prog_fd);
	}
	dirty_stack();
	vm_and_helper();
	dirty_stack();
	pkt_filter();
	dirty_stack();
	object_open();
	dirty_stack();
	perf_ring();
	dirty_stack();
	perf_buffer();
	dirty_stack();
	tracepoint();
	return t_done();
}
