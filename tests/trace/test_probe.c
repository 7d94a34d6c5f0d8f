/* test_probe.c - in-application probes: a site with nothing attached runs nothing; an
 * attached raw-tracepoint program sees the six arguments (missing ones 0) and can update
 * maps; programs attached before the site first runs; two programs on one name run in
 * attach order; sites sharing a name; close and bpfrt_link_detach detach; the refusals
 * (program type, reads past arg6, bad names) and BPF_RAW_TRACEPOINT_OPEN through bpf().
 */

#include "trace_test.h"

#define RAW BPF_PROG_TYPE_RAW_TRACEPOINT

/* map[0] += arg1 + 2*arg2 + ... + 6*arg6 (as a weighted sum so each argument shows) */
static const char sum_fmt[] =
	"mov %%r6, %%r1\nmov %%r7, 0\n"
	"ldxdw %%r1, [%%r6+0]\nadd %%r7, %%r1\n"
	"ldxdw %%r1, [%%r6+8]\nmul %%r1, 2\nadd %%r7, %%r1\n"
	"ldxdw %%r1, [%%r6+16]\nmul %%r1, 3\nadd %%r7, %%r1\n"
	"ldxdw %%r1, [%%r6+24]\nmul %%r1, 4\nadd %%r7, %%r1\n"
	"ldxdw %%r1, [%%r6+32]\nmul %%r1, 5\nadd %%r7, %%r1\n"
	"ldxdw %%r1, [%%r6+40]\nmul %%r1, 6\nadd %%r7, %%r1\n"
	"stw [%%r10-4], %d\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\ncall 1\n"
	"jeq %%r0, 0, +1\nlock add [%%r0+0], %%r7\nmov %%r0, 0\nexit\n";

static int map_fd;

static uint64_t slot(uint32_t key)
{
	uint64_t v = 0;

	bpfrt_map_lookup_elem(map_fd, &key, &v);
	return v;
}

static void reset(void)
{
	uint64_t zero = 0;

	for (uint32_t k = 0; k < 4; k++)
		bpfrt_map_update_elem(map_fd, &k, &zero, BPF_ANY);
}

static int load_sum(int key)
{
	char text[2048];

	snprintf(text, sizeof(text), sum_fmt, key, map_fd);
	return tt_load(RAW, "GPL", text, NULL, 0);
}

static void hit_a(uint64_t x)
{
	BPFRT_PROBE("test:a", x, 2, 3, 4, 5, 6);
}

static void hit_a_other_site(uint64_t x)
{
	BPFRT_PROBE("test:a", x);
}

static void hit_b(void)
{
	BPFRT_PROBE("test:b", 7, 1);
}

static void hit_nothing(void)
{
	BPFRT_PROBE("test:none", 1, 2, 3);
}

int main(void)
{
	struct bpfrt_link_stats st;
	union bpf_attr attr;
	int p0, p1, l0, l1, fd;

	tt_private_fs("probe");
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "sums", 4, 8, 4, NULL);
	T_ASSERT(map_fd >= 0);
	p0 = load_sum(0);
	p1 = load_sum(1);
	T_ASSERT(p0 >= 0 && p1 >= 0);

	T_CASE("nothing attached: the site runs nothing and its flag drops");
	hit_nothing();
	hit_nothing();
	T_EQ_INT(0, slot(0));

	T_CASE("attach before the site ever ran; all six arguments");
	l0 = bpfrt_probe_attach(p0, "test:a");
	T_ASSERT(l0 >= 0);
	hit_a(1);
	T_EQ_INT(1 + 4 + 9 + 16 + 25 + 36, slot(0));
	T_CASE("missing arguments are 0; a second site of the same name");
	hit_a_other_site(10);
	T_EQ_INT(91 + 10, slot(0));

	T_CASE("two programs on one name, and another name untouched");
	l1 = bpfrt_probe_attach(p1, "test:a");
	T_ASSERT(l1 >= 0);
	reset();
	hit_a(1);
	T_EQ_INT(91, slot(0));
	T_EQ_INT(91, slot(1));
	hit_b();
	T_EQ_INT(91, slot(0));
	T_EQ_INT(0, bpfrt_link_stats(l1, &st));
	T_EQ_INT(1, st.events);
	T_EQ_INT(0, st.errors);

	T_CASE("bpfrt_link_detach: at once");
	T_EQ_INT(0, bpfrt_link_detach(l1));
	hit_a(1);
	T_EQ_INT(182, slot(0));
	T_EQ_INT(91, slot(1));
	close(l1);

	T_CASE("close detaches (shortly after)");
	close(l0);
	for (int i = 0; i < 1000; i++) {
		uint64_t before = slot(0);

		hit_a(1);
		if (slot(0) == before)
			break;
		usleep(10000);
	}
	reset();
	hit_a(1);
	hit_a_other_site(1);
	T_EQ_INT(0, slot(0));

	T_CASE("BPF_RAW_TRACEPOINT_OPEN gives a link fd");
	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.name = (uint64_t)(uintptr_t)"test:b";
	attr.raw_tracepoint.prog_fd = (uint32_t)p0;
	fd = bpfrt_bpf(BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr));
	T_ASSERT(fd >= 0);
	hit_b();
	T_EQ_INT(7 + 2, slot(0));
	T_EQ_INT(0, bpfrt_link_detach(fd));
	close(fd);
	T_CASE("BPF_RAW_TRACEPOINT_OPEN: bad name pointer EFAULT, no name EINVAL");
	attr.raw_tracepoint.name = 8;
	T_EQ_INT(-1, bpfrt_bpf(BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr)));
	T_EQ_INT(EFAULT, errno);
	attr.raw_tracepoint.name = 0;
	T_EQ_INT(-1, bpfrt_bpf(BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr)));
	T_EQ_INT(EINVAL, errno);

	T_CASE("refusals");
	fd = tt_load(BPF_PROG_TYPE_TRACEPOINT, "GPL", "mov %r0, 0\nexit\n", NULL, 0);
	T_EQ_INT(-EINVAL, bpfrt_probe_attach(fd, "test:a"));
	close(fd);
	fd = tt_load(RAW, "GPL", "ldxdw %r0, [%r1+48]\nexit\n", NULL, 0);
	T_ASSERT(fd >= 0);
	T_EQ_INT(-EINVAL, bpfrt_probe_attach(fd, "test:a"));
	close(fd);
	T_EQ_INT(-EINVAL, bpfrt_probe_attach(p0, ""));
	T_EQ_INT(-EINVAL, bpfrt_probe_attach(p0,
					     "a-name-far-too-long-for-a-probe-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
	T_EQ_INT(-EINVAL, bpfrt_probe_attach(map_fd, "test:a"));
	T_EQ_INT(-EBADF, bpfrt_probe_attach(999, "test:a"));
	close(p0);
	close(p1);
	close(map_fd);
	tt_cleanup_fs();
	return t_done();
}
