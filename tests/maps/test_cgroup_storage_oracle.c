/* test_cgroup_storage_oracle.c - cgroup storage maps (shared and per-CPU) against the
 * kernel: one script runs on the kernel's bpf() and on bpfrt_bpf(), a line per step, and
 * the transcripts must be equal line by line:
 *   - MAP_CREATE's checks (key sizes 8 and 12, value sizes, flags, max_entries) and
 *     GET_INFO;
 *   - element commands on a map no cgroup attachment has filled (lookup, update with each
 *     flag, delete, get_next_key);
 *   - programs: bpf_get_local_storage() in cgroup_skb test runs (the storage is zeroed
 *     for each BPF_PROG_TEST_RUN and kept across its repetitions), non-zero flags, other
 *     helpers on the map, two storage maps of one kind, other program types.
 * Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"

#define CS BPF_MAP_TYPE_CGROUP_STORAGE
#define PCS BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE

static void creates(sys_fn sys, struct transcript *t)
{
	static const struct create_case c[] = {
		{ "shared key 16", CS, 16, 8, 0, 0 },
		{ "shared key 8", CS, 8, 8, 0, 0 },
		{ "shared key 4", CS, 4, 8, 0, 0 },
		{ "shared key 12", CS, 12, 8, 0, 0 },
		{ "shared value 0", CS, 16, 0, 0, 0 },
		{ "shared max_entries 1", CS, 16, 8, 1, 0 },
		{ "shared value 65455", CS, 16, 65455, 0, 0 },
		{ "shared value 65456", CS, 16, 65456, 0, 0 },
		{ "shared value 65536", CS, 16, 65536, 0, 0 },
		{ "shared no_prealloc", CS, 16, 8, 0, BPF_F_NO_PREALLOC },
		{ "shared numa", CS, 16, 8, 0, BPF_F_NUMA_NODE },
		{ "shared rdonly_prog", CS, 16, 8, 0, BPF_F_RDONLY_PROG },
		{ "shared rdonly+wronly prog", CS, 16, 8, 0, BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG },
		{ "shared mmapable", CS, 16, 8, 0, BPF_F_MMAPABLE },
		{ "shared bad key, bad value", CS, 4, 0, 0, 0 },
		{ "shared bad value, bad max", CS, 16, 0, 1, 0 },
		{ "shared bad flags, bad max", CS, 16, 8, 1, BPF_F_MMAPABLE },
		{ "percpu key 16", PCS, 16, 8, 0, 0 },
		{ "percpu key 8", PCS, 8, 13, 0, 0 },
		{ "percpu value 32768", PCS, 16, 32768, 0, 0 },
		{ "percpu value 32769", PCS, 16, 32769, 0, 0 },
		{ "percpu max_entries 4", PCS, 16, 8, 4, 0 },
		{ "percpu numa", PCS, 16, 8, 0, BPF_F_NUMA_NODE },
	};

	t->steps += (unsigned)(sizeof(c) / sizeof(c[0]));
	say_creates(sys, t, c, sizeof(c) / sizeof(c[0]));
}

static void elements(sys_fn sys, struct transcript *t)
{
	static const uint64_t flags[] = { BPF_ANY, BPF_NOEXIST, BPF_EXIST, BPF_F_LOCK, 8 };
	static unsigned char key[16], v[4096 * 8];
	uint32_t types[] = { CS, PCS };

	for (size_t k = 0; k < 2; k++) {
		int fd = create_map(sys, types[k], 16, 8, 0, 0, 0);

		if (fd < 0)
			continue;
		t->steps += 9;
		say(t, "type %u lookup: %d\n", types[k],
		    elem(sys, BPF_MAP_LOOKUP_ELEM, fd, key, v, 0));
		say(t, "type %u lookup F_LOCK: %d\n", types[k],
		    elem(sys, BPF_MAP_LOOKUP_ELEM, fd, key, v, BPF_F_LOCK));
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
			say(t, "type %u update flags %llu: %d\n", types[k],
			    (unsigned long long)flags[f],
			    elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, v, flags[f]));
		say(t, "type %u delete: %d\n", types[k],
		    elem(sys, BPF_MAP_DELETE_ELEM, fd, key, NULL, 0));
		say(t, "type %u get_next_key NULL: %d\n", types[k],
		    elem(sys, BPF_MAP_GET_NEXT_KEY, fd, NULL, key, 0));
		say(t, "type %u get_next_key key: %d\n", types[k],
		    elem(sys, BPF_MAP_GET_NEXT_KEY, fd, key, key, 0));
		say(t, "type %u lookup_and_delete: %d\n", types[k],
		    elem(sys, BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, key, v, 0));
		close(fd);
	}
}

/* ---- programs ---------------------------------------------------------------------------- */
#define INSN(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })

static void run_prog(sys_fn sys, struct transcript *t, const char *what, uint32_t type,
		     uint32_t repeat, const struct bpf_insn *insns, uint32_t n)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;
	int fd = load_prog(sys, t, what, type, insns, n);

	if (fd < 0)
		return;
	pkt[12] = 0x08; /* IPv4 */
	for (int r = 0; r < 2; r++) { /* two test runs: each starts from zeroed storage */
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)fd;
		a.test.data_in = (uint64_t)(uintptr_t)pkt;
		a.test.data_size_in = sizeof(pkt);
		a.test.repeat = repeat;
		if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
			say(t, "run %d ", -errno);
		else
			say(t, "retval %u ", a.test.retval);
	}
	say(t, "\n");
	close(fd);
}

/* r0 = ++storage[0] (the u64 at the start of this run's storage of map fd), flags imm */
static uint32_t bump(struct bpf_insn *p, uint32_t n, int fd, int32_t flags)
{
	p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, fd);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, flags);
	p[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_local_storage);
	p[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, 1);
	p[n++] = INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_1, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_1, 0, 0);
	return n;
}

/* after p[0..n): r0 = 1 when r0 was want, else 0, and exit; the new length */
static uint32_t ret_eq(struct bpf_insn *p, uint32_t n, int32_t want)
{
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_0, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
	p[n++] = INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_1, 0, 1, want);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

static void programs(sys_fn sys, struct transcript *t)
{
	int cs = create_map(sys, CS, 16, 8, 0, 0, 0), pcs = create_map(sys, PCS, 8, 8, 0, 0, 0);
	int cs2 = create_map(sys, CS, 16, 16, 0, 0, 0);
	int ro = create_map(sys, CS, 16, 8, 0, BPF_F_RDONLY_PROG, 0);
	struct bpf_insn p[48];
	uint32_t n;

	if (cs < 0 || pcs < 0 || cs2 < 0 || ro < 0) {
		say(t, "programs: create %d %d %d %d\n", cs, pcs, cs2, ro);
		goto out;
	}
	/* r0 = 1 when the last repetition saw the count: each test run starts at 0 */
	n = bump(p, 0, cs, 0);
	n = ret_eq(p, n, 1);
	run_prog(sys, t, "shared, 1 repetition, count 1", BPF_PROG_TYPE_CGROUP_SKB, 1, p, n);
	n = bump(p, 0, cs, 0);
	n = ret_eq(p, n, 5);
	run_prog(sys, t, "shared, 5 repetitions, count 5", BPF_PROG_TYPE_CGROUP_SKB, 5, p, n);
	run_prog(sys, t, "shared, 4 repetitions, count 5", BPF_PROG_TYPE_CGROUP_SKB, 4, p, n);
	n = bump(p, 0, pcs, 0);
	n = ret_eq(p, n, 4);
	run_prog(sys, t, "percpu, 4 repetitions, count 4", BPF_PROG_TYPE_CGROUP_SKB, 4, p, n);
	/* both kinds in one program: 3 * shared + percpu */
	n = bump(p, 0, cs, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_0, 0, 0);
	n = bump(p, n, pcs, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MUL | BPF_K, BPF_REG_6, 0, 0, 3);
	p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_X, BPF_REG_0, BPF_REG_6, 0, 0);
	n = ret_eq(p, n, 8);
	run_prog(sys, t, "shared and percpu, 2 repetitions, 3 * 2 + 2", BPF_PROG_TYPE_CGROUP_SKB, 2, p, n);
	/* two shared storage maps */
	n = bump(p, 0, cs, 0);
	n = bump(p, n, cs2, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "two shared maps", BPF_PROG_TYPE_CGROUP_SKB, 1, p, n);
	n = bump(p, 0, cs, 1);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "flags 1", BPF_PROG_TYPE_CGROUP_SKB, 1, p, n);
	/* value_size 8: a load at offset 8 is past it */
	n = bump(p, 0, cs, 0);
	p[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_0, 8, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	n -= 1;
	p[4] = INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 8, 0);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "read past the value", BPF_PROG_TYPE_CGROUP_SKB, 1, p, n);
	n = bump(p, 0, ro, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "write into rdonly_prog storage", BPF_PROG_TYPE_CGROUP_SKB, 1, p, n);
	n = bump(p, 0, cs, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "socket filter", BPF_PROG_TYPE_SOCKET_FILTER, 1, p, n);
	run_prog(sys, t, "tc", BPF_PROG_TYPE_SCHED_CLS, 1, p, n);
	/* every cgroup type has it (cgroup_common_func_proto()); only cgroup_skb test-runs */
	{
		static const uint32_t cg[][2] = {
			{ BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_CREATE },
			{ BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET4_POST_BIND },
			{ BPF_PROG_TYPE_SOCK_OPS, 0 },
			{ BPF_PROG_TYPE_CGROUP_DEVICE, 0 },
			{ BPF_PROG_TYPE_CGROUP_SYSCTL, 0 },
			{ BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_GETSOCKOPT },
			{ BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_SETSOCKOPT },
			{ BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT },
			{ BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP6_RECVMSG },
			{ BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_VERDICT },
			{ BPF_PROG_TYPE_LWT_IN, 0 },
			{ BPF_PROG_TYPE_KPROBE, 0 },
		};

		for (size_t i = 0; i < sizeof(cg) / sizeof(cg[0]); i++) {
			char what[64];

			snprintf(what, sizeof(what), "type %u attach %u", cg[i][0], cg[i][1]);
			load_verdict(sys, t, what, cg[i][0], cg[i][1], p, n);
		}
	}
	/* map_lookup_elem on a storage map */
	n = 0;
	p[n++] = INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -16, 0);
	p[n++] = INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 0);
	p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, cs);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -16);
	p[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "map_lookup_elem", BPF_PROG_TYPE_CGROUP_SKB, 1, p, n);
	/* get_local_storage on an array */
	{
		union bpf_attr a;
		int arr;

		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_ARRAY;
		a.key_size = 4;
		a.value_size = 8;
		a.max_entries = 1;
		arr = sys(BPF_MAP_CREATE, &a, sizeof(a));
		if (arr >= 0) {
			n = bump(p, 0, arr, 0);
			p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
			p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
			run_prog(sys, t, "get_local_storage on an array", BPF_PROG_TYPE_CGROUP_SKB, 1,
				 p, n);
			close(arr);
		}
	}
out:
	close(cs);
	close(pcs);
	close(cs2);
	close(ro);
}

int main(void)
{
	static struct transcript kern, ours;
	static const script_fn parts[] = { creates, elements, programs, NULL };
	int probe;

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel's bpf()");
	probe = create_map(kernel_bpf, CS, 16, 8, 0, 0, 0);
	if (probe < 0)
		T_SKIP("the kernel refuses a cgroup storage MAP_CREATE (%s)", strerror(-probe));
	close(probe);
	if (transcript_run("cgstorage", parts, &kern, &ours))
		return 1;
	compare_transcripts(&kern, &ours);
	printf("cgroup storage oracle: %u steps each side\n", kern.steps);
	if (getenv("CGSTORAGE_DUMP"))
		fputs(kern.text, stdout);
	return t_done();
}
