/* test_perf_event_array.c - BPF_MAP_TYPE_PERF_EVENT_ARRAY and bpf_perf_event_output()
 * against the kernel: MAP_CREATE rules and element commands (same return and errno as the
 * real bpf()), the helper's verifier prototype (same verdicts), and the records: the same
 * socket-filter, XDP and raw-tracepoint programs write into a kernel
 * PERF_COUNT_SW_BPF_OUTPUT ring (perf_event_open + mmap, as libbpf does) and into a bpfrt
 * perf output ring, on every engine; return codes, record sizes, payloads, padding and
 * PERF_RECORD_LOST counts must match.  Then the consumer API (bpfrt_perf_buffer_*), its
 * epoll wake-ups, and a producer in another process.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"
#include "api/diff.h"
#include "maps/maps.h"

#define PAGE 4096

static int kernel;
static int cpu0; /* the first CPU this process may run on: both sides' ring is for it */

static const struct {
	const char *name;
	enum bpfrt_engine engine;
} engines[] = {
	{ "checked", BPFRT_ENGINE_CHECKED }, { "interp", BPFRT_ENGINE_INTERP },
#ifdef BPFRT_HAVE_JIT
	{ "jit", BPFRT_ENGINE_JIT },
#endif
};
/* bpfrt's engine for the programs load() makes (prog_flags; the kernel's side: none) */
static uint32_t engine_flags;

/* ---- MAP_CREATE and element commands ------------------------------------------------ */

struct ccase {
	const char *name;
	uint32_t key, value, max, flags;
	int want; /* errno expected (0: success); the kernel decides when it is there */
};

static const struct ccase creates[] = {
	{ "4/4/4", 4, 4, 4, 0, 0 },
	{ "max_entries 0", 4, 4, 0, 0, EINVAL },
	{ "key 8", 8, 4, 4, 0, EINVAL },
	{ "key 0", 0, 4, 4, 0, EINVAL },
	{ "value 8", 4, 8, 4, 0, EINVAL },
	{ "value 0", 4, 0, 4, 0, EINVAL },
	{ "preserve elems", 4, 4, 2, BPF_F_PRESERVE_ELEMS, 0 },
	{ "mmapable", 4, 4, 2, BPF_F_MMAPABLE, EINVAL },
	{ "rdonly_prog", 4, 4, 2, BPF_F_RDONLY_PROG, EINVAL },
	{ "wronly_prog", 4, 4, 2, BPF_F_WRONLY_PROG, EINVAL },
	{ "inner map", 4, 4, 2, BPF_F_INNER_MAP, EINVAL },
	{ "no prealloc", 4, 4, 2, BPF_F_NO_PREALLOC, EINVAL },
	{ "rdonly", 4, 4, 2, BPF_F_RDONLY, 0 },
	{ "wronly", 4, 4, 2, BPF_F_WRONLY, 0 },
	{ "rdonly|wronly", 4, 4, 2, BPF_F_RDONLY | BPF_F_WRONLY, EINVAL },
	{ "numa node 0", 4, 4, 2, BPF_F_NUMA_NODE, 0 },
	{ "1M entries", 4, 4, 1u << 20, 0, 0 },
};

static int map_create(sys_fn sys, uint32_t key, uint32_t value, uint32_t max, uint32_t flags)
{
	return diff_map_new(sys, BPF_MAP_TYPE_PERF_EVENT_ARRAY, key, value, max, flags);
}

static void test_create(void)
{
	for (size_t i = 0; i < sizeof(creates) / sizeof(creates[0]); i++) {
		const struct ccase *c = &creates[i];
		int fd = map_create(sys_bpfrt, c->key, c->value, c->max, c->flags);
		int err = fd < 0 ? errno : 0;

		T_CASE(c->name);
		T_EQ_INT(c->want, err);
		if (fd >= 0)
			close(fd);
		if (kernel) {
			fd = map_create(sys_kernel, c->key, c->value, c->max, c->flags);
			T_EQ_INT(fd < 0 ? errno : 0, err);
			if (fd >= 0)
				close(fd);
		}
	}
}

/* A kernel BPF output event on cpu, as libbpf's perf_buffer opens it; -1 when not. */
static int bpf_output_event(int cpu)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.sample_type = PERF_SAMPLE_RAW;
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	return fd;
}

static int elem(sys_fn sys, int cmd, int map, uint32_t key, int32_t value, uint64_t flags)
{
	union bpf_attr a;
	uint32_t next = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)(cmd == BPF_MAP_GET_NEXT_KEY ? (void *)&next : &value);
	a.flags = flags;
	if (cmd == BPF_MAP_DELETE_ELEM)
		a.value = 0;
	if (sys(cmd, &a, sizeof(a)))
		return -errno;
	return cmd == BPF_MAP_GET_NEXT_KEY ? (int)next : 0;
}

/* The same commands on both sides; `event` is a ring here, a BPF output event there. */
static void test_elems(void)
{
	struct {
		const char *name;
		int cmd;
		uint32_t key;
		int value; /* 0: the event, 1: a map fd (not a perf event), 2: -1 */
		uint64_t flags;
	} steps[] = {
		{ "lookup empty", BPF_MAP_LOOKUP_ELEM, 0, 0, 0 },
		{ "delete empty", BPF_MAP_DELETE_ELEM, 0, 0, 0 },
		{ "delete out of range", BPF_MAP_DELETE_ELEM, 4, 0, 0 },
		{ "update non-event fd", BPF_MAP_UPDATE_ELEM, 0, 1, 0 },
		{ "update fd -1", BPF_MAP_UPDATE_ELEM, 0, 2, 0 },
		{ "update noexist", BPF_MAP_UPDATE_ELEM, 0, 0, BPF_NOEXIST },
		{ "update exist", BPF_MAP_UPDATE_ELEM, 0, 0, BPF_EXIST },
		{ "update out of range", BPF_MAP_UPDATE_ELEM, 4, 0, 0 },
		{ "update", BPF_MAP_UPDATE_ELEM, 1, 0, 0 },
		{ "update again", BPF_MAP_UPDATE_ELEM, 1, 0, 0 },
		{ "lookup set", BPF_MAP_LOOKUP_ELEM, 1, 0, 0 },
		{ "next of 0", BPF_MAP_GET_NEXT_KEY, 0, 0, 0 },
		{ "next of 3", BPF_MAP_GET_NEXT_KEY, 3, 0, 0 },
		{ "next of 9", BPF_MAP_GET_NEXT_KEY, 9, 0, 0 },
		{ "delete set", BPF_MAP_DELETE_ELEM, 1, 0, 0 },
		{ "delete again", BPF_MAP_DELETE_ELEM, 1, 0, 0 },
	};
	int um = map_create(sys_bpfrt, 4, 4, 4, 0), ring = bpfrt_perf_ring_create(-1, 1, NULL);
	int uother = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "o", 4, 4, 1, NULL);
	int km = -1, kev = -1, kother = -1;

	T_CASE("element commands: setup");
	T_ASSERT(um >= 0 && ring >= 0 && uother >= 0);
	if (kernel) {
		union bpf_attr a;

		km = map_create(sys_kernel, 4, 4, 4, 0);
		kev = bpf_output_event(cpu0);
		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_ARRAY;
		a.key_size = a.value_size = 4;
		a.max_entries = 1;
		kother = sys_kernel(BPF_MAP_CREATE, &a, sizeof(a));
		T_ASSERT(km >= 0 && kev >= 0 && kother >= 0);
	}
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int uv = steps[i].value == 0 ? ring : steps[i].value == 1 ? uother : -1;
		int kv = steps[i].value == 0 ? kev : steps[i].value == 1 ? kother : -1;
		int u = elem(sys_bpfrt, steps[i].cmd, um, steps[i].key, uv, steps[i].flags);

		T_CASE(steps[i].name);
		if (kernel && km >= 0) {
			int k = elem(sys_kernel, steps[i].cmd, km, steps[i].key, kv,
				     steps[i].flags);

			T_EQ_INT(k, u);
		}
	}
	/* what the table expects from the kernel, checked even without it */
	T_CASE("update non-event fd: EBADF");
	T_EQ_INT(-EBADF, elem(sys_bpfrt, BPF_MAP_UPDATE_ELEM, um, 0, uother, 0));
	T_CASE("lookup: ENOTSUPP");
	T_EQ_INT(-BRT_ENOTSUPP, elem(sys_bpfrt, BPF_MAP_LOOKUP_ELEM, um, 0, 0, 0));
	T_CASE("a ring fd is not a bpf object: no info, no pin");
	{
		struct bpf_map_info info;
		uint32_t len = sizeof(info);

		T_EQ_INT(-EINVAL, bpfrt_obj_get_info_by_fd(ring, &info, &len));
	}
	close(um);
	close(ring);
	close(uother);
	if (km >= 0)
		close(km);
	if (kev >= 0)
		close(kev);
	if (kother >= 0)
		close(kother);
}

/* ---- programs ------------------------------------------------------------------------- */

/* Store 32 pattern bytes at r10-32, then bpf_perf_event_output(r1 ctx, map, FLAGS,
 * r10-32, SIZE) and return its result. */
static const char prog_text[] =
	"mov %%r6, %%r1\n"
	"lddw %%r0, 0x0706050403020100\nstxdw [%%r10-32], %%r0\n"
	"lddw %%r0, 0x0f0e0d0c0b0a0908\nstxdw [%%r10-24], %%r0\n"
	"lddw %%r0, 0x1716151413121110\nstxdw [%%r10-16], %%r0\n"
	"lddw %%r0, 0x1f1e1d1c1b1a1918\nstxdw [%%r10-8], %%r0\n"
	"mov %%r1, %%r6\nlddw %%r2, map_fd 0\nlddw %%r3, %llu\nmov %%r4, %%r10\nadd %%r4, -32\n"
	"mov %%r5, %u\ncall bpf_perf_event_output\nexit\n";

static int load(sys_fn sys, uint32_t type, int map_fd, uint64_t flags, uint32_t size,
		const char *lic, char *log, size_t log_len)
{
	struct bpf_insn *insns;
	char text[1024], err[128];
	union bpf_attr a;
	size_t n;
	int fd;

	snprintf(text, sizeof(text), prog_text, (unsigned long long)flags, size);
	if (bpfrt_asm(text, "perf", &insns, &n, err, sizeof(err))) {
		T_FAIL("asm: %s", err);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg == 1)
			insns[i].imm = map_fd;
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)lic;
	if (sys == sys_bpfrt)
		a.prog_flags = engine_flags;
	if (log) {
		log[0] = 0;
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = (uint32_t)log_len;
		a.log_level = 1;
	}
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	free(insns);
	return fd < 0 ? -errno : fd;
}

/* Run once with a 64-byte packet (socket filter, XDP) or 8 zero arguments (raw tp). */
static int run(sys_fn sys, int prog, uint32_t type, int64_t *r0)
{
	unsigned char pkt[64];
	uint64_t args[8] = { 0 };
	union bpf_attr a;

	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (unsigned char)(0xa0 + i);
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	if (type == BPF_PROG_TYPE_RAW_TRACEPOINT) {
		a.test.ctx_in = (uint64_t)(uintptr_t)args;
		a.test.ctx_size_in = sizeof(args);
	} else {
		a.test.data_in = (uint64_t)(uintptr_t)pkt;
		a.test.data_size_in = sizeof(pkt);
	}
	if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
		return -errno;
	*r0 = (int32_t)a.test.retval;
	return 0;
}

/* The records a ring held, flattened: per record its type, size and bytes after the
 * header (a LOST record's id zeroed: event ids differ). */
struct recs {
	int n;
	uint32_t type[512];
	uint32_t size[512];
	uint16_t misc[512];
	uint32_t len[512];   /* run_cases(): data bytes the call gave (size + ctxlen) */
	uint64_t lost;
	unsigned char bytes[512][128];
};

static void collect(void *arg, const struct perf_event_header *rec)
{
	struct recs *r = arg;
	size_t body = rec->size - sizeof(*rec);

	if (r->n >= 512)
		return;
	r->type[r->n] = rec->type;
	r->size[r->n] = rec->size;
	r->misc[r->n] = rec->misc;
	memcpy(r->bytes[r->n], rec + 1, body < 128 ? body : 128);
	if (rec->type == PERF_RECORD_LOST) {
		memset(r->bytes[r->n], 0, 8);
		memcpy(&r->lost, (const unsigned char *)(rec + 1) + 8, 8);
	}
	r->n++;
}

struct side {
	sys_fn sys;
	int map;
	int ring;       /* bpfrt ring or kernel event fd */
	void *mem;      /* kernel: the mmap */
	struct brt_perf_walk walk;
	struct brt_obj *obj;
};

static int side_open(struct side *s, int is_kernel, unsigned pages)
{
	uint32_t key = 0;
	union bpf_attr a;

	memset(s, 0, sizeof(*s));
	s->sys = is_kernel ? sys_kernel : sys_bpfrt;
	s->map = map_create(s->sys, 4, 4, (uint32_t)cpu0 + 3, 0);
	if (is_kernel) {
		s->ring = bpf_output_event(cpu0);
		s->mem = mmap(NULL, (1 + pages) * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			      s->ring, 0);
		if (s->mem == MAP_FAILED)
			return -1;
		s->walk.meta = s->mem;
		s->walk.data = (uint8_t *)s->mem + PAGE;
		s->walk.size = (uint64_t)pages * PAGE;
	} else {
		s->ring = bpfrt_perf_ring_create(cpu0, pages, NULL);
		if (s->ring < 0 || brt_obj_from_fd(s->ring, BRT_OBJ_PERF_RING, &s->obj))
			return -1;
		brt_perf_out_walker(s->obj, &s->walk);
	}
	if (s->map < 0 || s->ring < 0)
		return -1;
	/* the ring at index 0 and at its CPU's index (BPF_F_CURRENT_CPU), the same event in
	 * two slots as the kernel allows */
	for (int i = 0; i < 2; i++) {
		key = i ? (uint32_t)cpu0 : 0;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)s->map;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&s->ring;
		if (s->sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)))
			return -1;
	}
	return 0;
}

static void side_close(struct side *s, unsigned pages)
{
	if (s->mem && s->mem != MAP_FAILED)
		munmap(s->mem, (1 + pages) * PAGE);
	if (s->obj)
		brt_obj_put(s->obj);
	free(s->walk.bounce);
	if (s->ring >= 0)
		close(s->ring);
	if (s->map >= 0)
		close(s->map);
}

struct rcase {
	const char *name;
	uint32_t type;
	uint64_t flags;
	uint32_t size;
	int64_t ret; /* the helper's result, as the kernel gives it */
};

#define SKF BPF_PROG_TYPE_SOCKET_FILTER
#define XDP BPF_PROG_TYPE_XDP
#define RAW BPF_PROG_TYPE_RAW_TRACEPOINT
#define CTX(n) ((uint64_t)(n) << 32)
/* indexes that depend on cpu0 (the map has cpu0 + 3 slots, 0 and cpu0 set) */
#define IDX_EMPTY 0xfff0
#define IDX_PAST 0xfff1

static uint64_t flags_of(uint64_t flags)
{
	if (flags == IDX_EMPTY)
		return (uint64_t)cpu0 + 1;
	if (flags == IDX_PAST)
		return (uint64_t)cpu0 + 3;
	return flags;
}

static const struct rcase rcases[] = {
	{ "index 0, 16 bytes", SKF, 0, 16, 0 },
	{ "current cpu, 16 bytes", SKF, BPF_F_CURRENT_CPU, 16, 0 },
	{ "1 byte: padded", SKF, 0, 1, 0 },
	{ "3 bytes", SKF, 0, 3, 0 },
	{ "4 bytes: no padding", SKF, 0, 4, 0 },
	{ "5 bytes", SKF, 0, 5, 0 },
	{ "12 bytes", SKF, 0, 12, 0 },
	{ "13 bytes", SKF, 0, 13, 0 },
	{ "32 bytes", SKF, 0, 32, 0 },
	{ "0 bytes", SKF, 0, 0, 0 },
	{ "empty slot", SKF, IDX_EMPTY, 8, -ENOENT },
	{ "index past max_entries", SKF, IDX_PAST, 8, -E2BIG },
	{ "index 0xfffffffe", SKF, 0xfffffffe, 8, -E2BIG },
	{ "unknown flag bit", SKF, 1ull << 52, 8, -EINVAL },
	{ "skb: 20 packet bytes appended", SKF, CTX(20), 8, 0 },
	{ "skb: whole packet minus eth", SKF, CTX(50), 3, 0 },
	{ "skb: more than the packet", SKF, CTX(51), 8, -EFAULT },
	{ "xdp: 16 bytes", XDP, 0, 16, 0 },
	{ "xdp: 64 packet bytes appended", XDP, CTX(64), 5, 0 },
	{ "xdp: 65 packet bytes", XDP, CTX(65), 5, -EFAULT },
	{ "xdp: empty slot", XDP, IDX_EMPTY, 5, -ENOENT },
	{ "raw tp: 16 bytes", RAW, 0, 16, 0 },
	{ "raw tp: current cpu", RAW, BPF_F_CURRENT_CPU, 7, 0 },
	{ "raw tp: ctxlen refused", RAW, CTX(4), 8, -EINVAL },
};

/* Run every case on one side; the records it leaves go to out. */
static void run_cases(struct side *s, struct recs *out, int64_t *rets)
{
	for (size_t i = 0; i < sizeof(rcases) / sizeof(rcases[0]); i++) {
		const struct rcase *c = &rcases[i];
		int prog = load(s->sys, c->type, s->map, flags_of(c->flags), c->size, "GPL",
				NULL, 0);

		rets[i] = 1;
		T_CASE(c->name);
		T_ASSERT(prog >= 0);
		if (prog < 0)
			continue;
		T_EQ_INT(0, run(s->sys, prog, c->type, &rets[i]));
		close(prog);
		brt_perf_walk(&s->walk, collect, out);
		if (out->n)
			out->len[out->n - 1] = c->size + (uint32_t)(c->flags >> 32);
	}
}

/* Pin the process to cpu0: the kernel writes into the event of the CPU the program runs
 * on, bpfrt into the ring of brt_cpu(). */
static int pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void check_expected(const struct recs *r, const int64_t *rets)
{
	int k = 0;

	for (size_t i = 0; i < sizeof(rcases) / sizeof(rcases[0]); i++) {
		const struct rcase *c = &rcases[i];
		uint32_t ext = (uint32_t)(c->flags >> 32), raw;

		T_CASE(c->name);
		T_EQ_INT(c->ret, rets[i]);
		if (c->ret || k >= r->n)
			continue;
		raw = (uint32_t)BRT_ROUND8(4 + c->size + ext) - 4;
		T_EQ_INT(PERF_RECORD_SAMPLE, r->type[k]);
		T_EQ_INT(8 + 4 + raw, r->size[k]);
		T_EQ_INT(raw, *(const uint32_t *)(const void *)r->bytes[k]);
		for (uint32_t b = 0; b < c->size && 4 + b < 128; b++)
			if (r->bytes[k][4 + b] != b) {
				T_FAIL("payload byte %u: 0x%02x", b, r->bytes[k][4 + b]);
				break;
			}
		k++;
	}
	T_CASE("one record per successful call");
	T_EQ_INT(k, r->n);
}

static void test_records(void)
{
	static struct recs ur, kr;
	int64_t urets[64], krets[64];
	struct side us, ks;

	if (pin_cpu0()) {
		T_CASE("pin to one cpu");
		T_FAIL("sched_setaffinity: %s", strerror(errno));
		return;
	}
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		char name[64];

		engine_flags = BPFRT_F_ENGINE(engines[e].engine);
		memset(&ur, 0, sizeof(ur));
		snprintf(name, sizeof(name), "records, %s", engines[e].name);
		T_CASE(name);
		T_EQ_INT(0, side_open(&us, 0, 1));
		run_cases(&us, &ur, urets);
		check_expected(&ur, urets);
		side_close(&us, 1);
	}
	engine_flags = 0;
	if (!kernel)
		return;
	memset(&kr, 0, sizeof(kr));
	T_CASE("kernel side");
	T_EQ_INT(0, side_open(&ks, 1, 1));
	run_cases(&ks, &kr, krets);
	side_close(&ks, 1);
	for (size_t i = 0; i < sizeof(rcases) / sizeof(rcases[0]); i++) {
		T_CASE(rcases[i].name);
		T_EQ_INT(krets[i], urets[i]);
	}
	T_CASE("same records as the kernel");
	T_ASSERT(kr.n > 10);
	T_EQ_INT(kr.n, ur.n);
	for (int i = 0; i < kr.n && i < ur.n; i++) {
		uint32_t body = kr.size[i] - 8 < 128 ? kr.size[i] - 8 : 128;

		T_EQ_INT(kr.type[i], ur.type[i]);
		T_EQ_INT(kr.size[i], ur.size[i]);
		T_EQ_INT(kr.misc[i], ur.misc[i]);
		/* the payload; the kernel leaves its padding bytes as they were, ours are 0 */
		if (kr.type[i] == PERF_RECORD_SAMPLE)
			body = 4 + kr.len[i] < body ? 4 + kr.len[i] : body;
		if (memcmp(kr.bytes[i], ur.bytes[i], body))
			T_FAIL("record %d differs", i);
	}
}

/* Fill a 1-page ring: both sides refuse the same call (ENOSPC), then after the consumer
 * catches up a PERF_RECORD_LOST with the same count comes before the next sample. */
static void test_lost(void)
{
	static struct recs ur, kr;
	struct side sides[2];
	int nspc[2] = { 0, 0 }, first[2] = { -1, -1 };

	for (int k = 0; k < (kernel ? 2 : 1); k++) {
		struct side *s = &sides[k];
		struct recs *r = k ? &kr : &ur;
		int prog;
		int64_t r0;

		memset(r, 0, sizeof(*r));
		T_CASE(k ? "lost: kernel" : "lost: bpfrt");
		if (side_open(s, k, 1)) {
			T_FAIL("setup");
			side_close(s, 1);
			continue;
		}
		prog = load(s->sys, SKF, s->map, 0, 20, "GPL", NULL, 0);
		T_ASSERT(prog >= 0);
		for (int i = 0; i < 140 && prog >= 0; i++) {
			T_EQ_INT(0, run(s->sys, prog, SKF, &r0));
			if (r0 == -ENOSPC) {
				nspc[k]++;
				if (first[k] < 0)
					first[k] = i;
			}
		}
		brt_perf_walk(&s->walk, collect, r);
		memset(r, 0, sizeof(*r));
		T_EQ_INT(0, run(s->sys, prog, SKF, &r0));
		T_EQ_INT(0, r0);
		brt_perf_walk(&s->walk, collect, r);
		T_EQ_INT(2, r->n);
		T_EQ_INT(PERF_RECORD_LOST, r->type[0]);
		T_EQ_INT(24, r->size[0]);
		T_EQ_INT(nspc[k], r->lost);
		T_EQ_INT(PERF_RECORD_SAMPLE, r->type[1]);
		if (prog >= 0)
			close(prog);
		side_close(s, 1);
	}
	/* 32-byte records in 4096 bytes: 127 fit, one byte always stays free */
	T_CASE("lost: where the ring fills");
	T_EQ_INT(127, first[0]);
	if (kernel) {
		T_EQ_INT(first[1], first[0]);
		T_EQ_INT(nspc[1], nspc[0]);
	}
}

/* ---- the verifier's prototype ----------------------------------------------------------- */

static void test_verifier(void)
{
	static char ulog[65536], klog[65536];
	struct {
		const char *name;
		uint32_t type;
		const char *lic;
		int map_type; /* 0: perf event array */
		uint32_t size;
	} cases[] = {
		{ "socket filter", SKF, "GPL", 0, 8 },
		{ "tc", BPF_PROG_TYPE_SCHED_CLS, "GPL", 0, 8 },
		{ "xdp", XDP, "GPL", 0, 8 },
		{ "kprobe", BPF_PROG_TYPE_KPROBE, "GPL", 0, 8 },
		{ "tracepoint", BPF_PROG_TYPE_TRACEPOINT, "GPL", 0, 8 },
		{ "raw tracepoint", RAW, "GPL", 0, 8 },
		{ "cgroup skb", BPF_PROG_TYPE_CGROUP_SKB, "GPL", 0, 8 },
		{ "proprietary licence", SKF, "Proprietary", 0, 8 },
		{ "array map", SKF, "GPL", BPF_MAP_TYPE_ARRAY, 8 },
		{ "33 bytes of 32 written", SKF, "GPL", 0, 33 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int um, km = -1, u, k;

		T_CASE(cases[i].name);
		if (cases[i].map_type) {
			um = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "a", 4, 4, 2, NULL);
		} else {
			um = map_create(sys_bpfrt, 4, 4, 2, 0);
		}
		u = load(sys_bpfrt, cases[i].type, um, 0, cases[i].size, cases[i].lic, ulog,
			 sizeof(ulog));
		if (!strcmp(cases[i].name, "proprietary licence"))
			T_CONTAINS("cannot call GPL-restricted function", ulog);
		if (cases[i].map_type)
			T_CONTAINS("cannot pass map_type 2 into func bpf_perf_event_output#25",
				   ulog);
		if (kernel) {
			union bpf_attr a;

			memset(&a, 0, sizeof(a));
			a.map_type = cases[i].map_type ? (uint32_t)cases[i].map_type :
							 BPF_MAP_TYPE_PERF_EVENT_ARRAY;
			a.key_size = a.value_size = 4;
			a.max_entries = 2;
			km = sys_kernel(BPF_MAP_CREATE, &a, sizeof(a));
			k = load(sys_kernel, cases[i].type, km, 0, cases[i].size, cases[i].lic,
				 klog, sizeof(klog));
			T_EQ_INT(k < 0 ? k : 0, u < 0 ? u : 0);
			if ((u < 0) != (k < 0))
				fprintf(stderr, "  bpfrt log:\n%s  kernel log:\n%s", ulog, klog);
			if (k >= 0)
				close(k);
			close(km);
		} else {
			T_EQ_INT(cases[i].size > 32 || cases[i].map_type ||
					 strcmp(cases[i].lic, "GPL") ? 1 : 0, u < 0);
		}
		if (u >= 0)
			close(u);
		close(um);
	}
}

/* ---- consumer API, wake-ups, another process ------------------------------------------ */

struct got {
	int samples;
	uint64_t lost;
	uint32_t last_size;
	unsigned char last[64];
	int cpu;
};

static void on_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	struct got *g = ctx;

	g->samples++;
	g->cpu = cpu;
	g->last_size = size;
	memcpy(g->last, data, size < 64 ? size : 64);
}

static void on_lost(void *ctx, int cpu, uint64_t cnt)
{
	struct got *g = ctx;

	(void)cpu;
	g->lost += cnt;
}

static int readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static void test_perf_buffer(void)
{
	struct got g = { 0 };
	int map = map_create(sys_bpfrt, 4, 4, 64, 0), prog, cpu;
	struct bpfrt_perf_buffer *pb;
	int64_t r0 = 1;

	T_CASE("perf buffer: bad arguments");
	T_ASSERT(!bpfrt_perf_buffer_new(map, 3, on_sample, on_lost, &g, NULL) && errno == EINVAL);
	{
		int arr = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "a", 4, 4, 2, NULL);

		T_ASSERT(!bpfrt_perf_buffer_new(arr, 1, on_sample, NULL, &g, NULL) &&
			 errno == EINVAL);
		close(arr);
	}
	T_ASSERT(bpfrt_perf_ring_create(-2, 1, NULL) == -EINVAL);
	T_ASSERT(bpfrt_perf_ring_create(0, 3, NULL) == -EINVAL);
	T_ASSERT(bpfrt_perf_ring_create(0, 0, NULL) == -EINVAL);
	T_ASSERT(bpfrt_perf_ring_poll_fd(map) == -EINVAL);

	T_CASE("perf buffer: a ring per cpu, woken by each sample");
	pb = bpfrt_perf_buffer_new(map, 2, on_sample, on_lost, &g, NULL);
	T_ASSERT(pb != NULL);
	if (!pb) {
		close(map);
		return;
	}
	T_EQ_INT(bpfrt_num_possible_cpus() < 64 ? bpfrt_num_possible_cpus() : 64,
		 (int)bpfrt_perf_buffer_buffer_cnt(pb));
	T_EQ_INT(0, bpfrt_perf_buffer_poll(pb, 0));
	prog = load(sys_bpfrt, SKF, map, BPF_F_CURRENT_CPU, 13, "GPL", NULL, 0);
	T_ASSERT(prog >= 0);
	/* pinned, so that the sample's cpu is known (a moving thread would make the check
	 * below vacuous) and every sample of this test goes to one ring */
	T_EQ_INT(0, pin_cpu0());
	cpu = cpu0;
	T_EQ_INT(cpu, sched_getcpu());
	T_EQ_INT(0, run(sys_bpfrt, prog, SKF, &r0));
	T_EQ_INT(0, r0);
	T_ASSERT(readable(bpfrt_perf_buffer_epoll_fd(pb), 5000));
	T_EQ_INT(1, bpfrt_perf_buffer_poll(pb, 5000));
	T_EQ_INT(1, g.samples);
	T_EQ_INT(20, g.last_size); /* 13 bytes + u32 size, padded to 8: 20 */
	T_EQ_INT(12, g.last[12]);
	T_EQ_INT(0, g.last[13]); /* zero padding */
	T_EQ_INT(cpu, g.cpu);
	T_CASE("perf buffer: consumed, not readable any more");
	T_ASSERT(!readable(bpfrt_perf_buffer_epoll_fd(pb), 0));
	T_EQ_INT(0, bpfrt_perf_buffer_consume(pb));

	T_CASE("perf buffer: lost samples reach lost_cb");
	for (int i = 0; i < 300; i++)
		run(sys_bpfrt, prog, SKF, &r0);
	T_ASSERT(bpfrt_perf_buffer_consume(pb) > 0);
	T_EQ_INT(0, run(sys_bpfrt, prog, SKF, &r0));
	T_ASSERT(bpfrt_perf_buffer_consume(pb) >= 1);
	T_ASSERT(g.lost > 0 || r0 != 0);
	T_EQ_INT(301, (uint64_t)g.samples - 1 + g.lost);

	T_CASE("perf buffer: free empties the map");
	bpfrt_perf_buffer_free(pb);
	T_EQ_INT(0, run(sys_bpfrt, prog, SKF, &r0));
	T_EQ_INT(-ENOENT, r0);
	close(prog);
	close(map);
}

/* An in-application probe (BPFRT_PROBE) runs a raw-tracepoint program that sends its first
 * argument: the samples arrive in the perf buffer, none after detaching. */
static struct got probe_got;

static void on_probe_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	uint64_t v;

	(void)ctx, (void)cpu;
	memcpy(&v, data, 8);
	if (size == 12 && probe_got.samples < 64)
		probe_got.last[probe_got.samples] = (unsigned char)v;
	probe_got.samples++;
}

static void test_probe(void)
{
	int map = map_create(sys_bpfrt, 4, 4, (uint32_t)bpfrt_num_possible_cpus(), 0);
	struct bpf_insn p[] = {
		{ BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_3, BPF_REG_1, 0, 0 },
		{ BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_3, -8, 0 },
		{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, map },
		{ 0, 0, 0, 0, 0 },
		{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_3, 0, 0, -1 },
		{ 0, 0, 0, 0, 0 },
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_4, BPF_REG_10, 0, 0 },
		{ BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, -8 },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_5, 0, 0, 8 },
		{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_perf_event_output },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};
	struct bpfrt_perf_buffer *pb;
	int prog, link;

	T_CASE("in-application probe: samples through the perf buffer");
	memset(&probe_got, 0, sizeof(probe_got));
	prog = bpfrt_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "probe", "GPL", p,
			       sizeof(p) / sizeof(p[0]), NULL);
	pb = bpfrt_perf_buffer_new(map, 1, on_probe_sample, NULL, NULL, NULL);
	T_ASSERT(map >= 0 && prog >= 0 && pb != NULL);
	if (prog < 0 || !pb)
		goto out;
	link = bpfrt_probe_attach(prog, "perftest:hit");
	T_ASSERT(link >= 0);
	for (uint64_t i = 0; i < 3; i++)
		BPFRT_PROBE("perftest:hit", 40 + i);
	T_EQ_INT(3, bpfrt_perf_buffer_poll(pb, 5000));
	T_EQ_INT(3, probe_got.samples);
	T_EQ_INT(40, probe_got.last[0]);
	T_EQ_INT(42, probe_got.last[2]);
	/* detaching is synchronous (closing alone detaches later, on the link's thread) */
	T_EQ_INT(0, bpfrt_link_detach(link));
	close(link);
	BPFRT_PROBE("perftest:hit", 99);
	T_CASE("in-application probe: detached, nothing more");
	T_EQ_INT(0, bpfrt_perf_buffer_consume(pb));
out:
	bpfrt_perf_buffer_free(pb);
	if (prog >= 0)
		close(prog);
	close(map);
}

/* The consumer is a child process that installed its ring; this process produces: its
 * map view opens the child's ring through /proc, and the write wakes the child's epoll. */
static void test_other_process(void)
{
	int map = map_create(sys_bpfrt, 4, 4, 2, 0), prog, ready[2], status = 0;
	int64_t r0 = 1;
	pid_t pid;
	char c;

	T_CASE("another process consumes");
	T_ASSERT(map >= 0 && !pipe(ready));
	prog = load(sys_bpfrt, SKF, map, 0, 16, "GPL", NULL, 0);
	T_ASSERT(prog >= 0);
	pid = fork();
	if (pid == 0) {
		int ring = bpfrt_perf_ring_create(-1, 1, NULL), pfd, ep, n = 0;
		struct epoll_event ev = { .events = EPOLLIN };
		struct brt_obj *obj;
		struct brt_perf_walk w = { 0 };
		struct recs *r = calloc(1, sizeof(*r));
		uint32_t key = 0;

		pfd = bpfrt_perf_ring_poll_fd(ring);
		ep = epoll_create1(0);
		if (ring < 0 || pfd < 0 || !r || epoll_ctl(ep, EPOLL_CTL_ADD, pfd, &ev) ||
		    bpfrt_map_update_elem(map, &key, &ring, BPF_ANY) ||
		    brt_obj_from_fd(ring, BRT_OBJ_PERF_RING, &obj))
			_exit(2);
		brt_perf_out_walker(obj, &w);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		if (epoll_wait(ep, &ev, 1, 20000) != 1)
			_exit(3);
		brt_perf_out_drain(obj);
		n = brt_perf_walk(&w, collect, r);
		_exit(n == 1 && r->size[0] == 32 && r->bytes[0][4 + 15] == 15 ? 0 : 4);
	}
	T_ASSERT(pid > 0);
	T_EQ_INT(1, read(ready[0], &c, 1));
	T_EQ_INT(0, run(sys_bpfrt, prog, SKF, &r0));
	T_EQ_INT(0, r0);
	T_EQ_INT(pid, waitpid(pid, &status, 0));
	T_ASSERT(WIFEXITED(status));
	T_EQ_INT(0, WEXITSTATUS(status));
	/* the kernel keeps the event while the map file that installed it is open (this
	 * process shares it through fork); our view keeps the ring it opened.  Past a clock
	 * tick, so the producer's recheck of a dead installer runs (it found the slot gone
	 * in 3 of 60 runs while it did not look for the shared map file). */
	T_CASE("the consumer's process is gone: the ring stays writable");
	usleep(30000);
	T_EQ_INT(0, run(sys_bpfrt, prog, SKF, &r0));
	T_EQ_INT(0, r0);
	usleep(30000);
	T_EQ_INT(0, run(sys_bpfrt, prog, SKF, &r0));
	T_EQ_INT(0, r0);
	close(prog);
	close(map);
	close(ready[0]);
	close(ready[1]);
}

/* The kernel clears the slots a map file installed when it is closed, unless
 * BPF_F_PRESERVE_ELEMS: a program holding the map then finds the slot empty. */
static void test_release(void)
{
	for (int preserve = 0; preserve < 2; preserve++) {
		int map = map_create(sys_bpfrt, 4, 4, 1,
				     preserve ? BPF_F_PRESERVE_ELEMS : 0);
		int ring = bpfrt_perf_ring_create(-1, 1, NULL), prog;
		uint32_t key = 0;
		int64_t r0 = 1;

		T_CASE(preserve ? "map closed, preserve elems" : "map closed: slots cleared");
		T_EQ_INT(0, bpfrt_map_update_elem(map, &key, &ring, BPF_ANY));
		prog = load(sys_bpfrt, SKF, map, 0, 8, "GPL", NULL, 0);
		T_ASSERT(prog >= 0);
		close(map);
		brt_obj_sweep();
		T_EQ_INT(0, run(sys_bpfrt, prog, SKF, &r0));
		T_EQ_INT(preserve ? 0 : -ENOENT, r0);
		close(prog);
		close(ring);
	}
}

int main(void)
{
	char dir[128];

	/* a fresh directory (not one named by the pid alone: a killed run of the same pid
	 * may have left its pins there) */
	snprintf(dir, sizeof(dir), "/tmp/bpfrt-test-perf-XXXXXX");
	if (!t_scratch_dir(dir))
		snprintf(dir, sizeof(dir), "/tmp/bpfrt-test-perf-%d", (int)getpid());
	setenv("BPFRT_FS", dir, 1);
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		if (!sched_getaffinity(0, sizeof(set), &set))
			while (cpu0 < CPU_SETSIZE - 1 && !CPU_ISSET(cpu0, &set))
				cpu0++;
	}
	kernel = kernel_available();
	if (kernel) {
		int ev = bpf_output_event(cpu0);

		kernel = ev >= 0;
		if (ev >= 0)
			close(ev);
	}
	if (!kernel)
		printf("note: no kernel bpf()/perf_event_open to compare with; bpfrt alone\n");
	test_create();
	test_elems();
	test_verifier();
	test_records();
	test_lost();
	test_perf_buffer();
	test_probe();
	test_other_process();
	test_release();
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	return t_done();
}
