/* test_bloom_oracle.c - bloom filter maps against the kernel: one script runs on the
 * kernel's bpf() and on bpfrt_bpf(), writing a line per step, and the two transcripts must
 * be equal line by line:
 *   - MAP_CREATE's checks (key and value sizes, max_entries, flags, map_extra) and what
 *     GET_INFO reports (map_flags, map_extra);
 *   - with BPF_F_ZERO_SEED (both sides hash alike), every hash count 1-15 and value sizes
 *     that take jhash2 and every tail of jhash: push values, then peek pushed ones and as
 *     many that never were; false positives included, the answers must be the kernel's
 *     bit for bit;
 *   - the commands a bloom filter refuses (delete, get_next_key, lookup_and_delete,
 *     update flags) and their errno;
 *   - programs: bpf_map_push_elem / bpf_map_peek_elem test-run results; map_lookup_elem
 *     and map_pop_elem refused; peek reads its value (uninitialised stack refused) where a
 *     queue's peek writes it.
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

static int create(sys_fn sys, uint32_t key, uint32_t value, uint32_t max, uint32_t flags,
		  uint64_t extra)
{
	return create_map(sys, BPF_MAP_TYPE_BLOOM_FILTER, key, value, max, flags, extra);
}

static void creates(sys_fn sys, struct transcript *t)
{
	static const struct {
		const char *what;
		uint32_t key, value, max, flags;
		uint64_t extra;
	} c[] = {
		{ "plain", 0, 4, 100, 0, 0 },
		{ "key_size 4", 4, 4, 100, 0, 0 },
		{ "value_size 0", 0, 0, 100, 0, 0 },
		{ "max_entries 0", 0, 4, 0, 0, 0 },
		{ "zero seed", 0, 4, 100, BPF_F_ZERO_SEED, 0 },
		{ "numa node", 0, 4, 100, BPF_F_NUMA_NODE, 0 },
		{ "no_prealloc", 0, 4, 100, BPF_F_NO_PREALLOC, 0 },
		{ "rdonly", 0, 4, 100, BPF_F_RDONLY, 0 },
		{ "rdonly_prog", 0, 4, 100, BPF_F_RDONLY_PROG, 0 },
		{ "rdonly+wronly prog", 0, 4, 100, BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG, 0 },
		{ "mmapable", 0, 4, 100, BPF_F_MMAPABLE, 0 },
		{ "extra 1", 0, 4, 100, 0, 1 },
		{ "extra 15", 0, 4, 100, 0, 15 },
		{ "extra 16", 0, 4, 100, 0, 16 },
		{ "extra 1<<32", 0, 4, 100, 0, 1ull << 32 },
		{ "value 4 MiB + 1", 0, (4u << 20) + 1, 1, 0, 0 },
		{ "huge: 2^31 entries", 0, 4, 1u << 31, 0, 15 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int fd = create(sys, c[i].key, c[i].value, c[i].max, c[i].flags, c[i].extra);
		struct bpf_map_info info;

		t->steps++;
		if (fd < 0) {
			say(t, "create %s: %d\n", c[i].what, fd);
			continue;
		}
		if (map_info(sys, fd, &info))
			say(t, "create %s: ok, info %d\n", c[i].what, -errno);
		else
			say(t, "create %s: ok, flags %#x extra %llu key %u value %u max %u\n",
			    c[i].what, info.map_flags, (unsigned long long)info.map_extra,
			    info.key_size, info.value_size, info.max_entries);
		close(fd);
	}
}

/* deterministic value bytes: value number v of size n */
static void fill(unsigned char *buf, uint32_t n, uint32_t v)
{
	uint32_t x = v * 2654435761u + 12345;

	for (uint32_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (unsigned char)x;
	}
}

/* push 'pushed' values, then peek 3x as many (the first third pushed): one line per
 * configuration, a character per peek ('1' found, '0' ENOENT, 'e' another error) */
static void answers(sys_fn sys, struct transcript *t, uint32_t vsize, uint32_t max,
		    uint64_t extra, uint32_t pushed)
{
	unsigned char v[64];
	char line[1024];
	int fd = create(sys, 0, vsize, max, BPF_F_ZERO_SEED, extra), n = 0, err;

	t->steps++;
	if (fd < 0) {
		say(t, "value %u max %u k %llu: create %d\n", vsize, max, (unsigned long long)extra,
		    fd);
		return;
	}
	for (uint32_t i = 0; i < pushed; i++) {
		fill(v, vsize, i);
		err = elem(sys, BPF_MAP_UPDATE_ELEM, fd, NULL, v, BPF_ANY);
		if (err) {
			say(t, "value %u: push %u: %d\n", vsize, i, err);
			break;
		}
	}
	for (uint32_t i = 0; i < 3 * pushed && n < (int)sizeof(line) - 1; i++) {
		fill(v, vsize, i);
		err = elem(sys, BPF_MAP_LOOKUP_ELEM, fd, NULL, v, 0);
		line[n++] = err == 0 ? '1' : err == -ENOENT ? '0' : 'e';
	}
	line[n] = 0;
	say(t, "value %u max %u k %llu: %s\n", vsize, max, (unsigned long long)extra, line);
	close(fd);
}

static void elements(sys_fn sys, struct transcript *t)
{
	static const uint32_t sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 24, 25, 64 };
	unsigned char v[64] = { 1, 2, 3, 4 }, k[4] = { 0 };
	int fd;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		answers(sys, t, sizes[i], 40, 3, 40);
	for (uint64_t e = 0; e <= 15; e++)
		answers(sys, t, 8, 20, e, 30); /* over capacity: false positives show */
	answers(sys, t, 4, 1, 1, 60);      /* the 64-bit floor */
	fd = create(sys, 0, 4, 8, BPF_F_ZERO_SEED, 0);
	if (fd < 0)
		return;
	t->steps += 8;
	say(t, "update BPF_NOEXIST: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, NULL, v, BPF_NOEXIST));
	say(t, "update BPF_EXIST: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, NULL, v, BPF_EXIST));
	say(t, "update BPF_F_LOCK: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, NULL, v, BPF_F_LOCK));
	say(t, "lookup BPF_F_LOCK: %d\n", elem(sys, BPF_MAP_LOOKUP_ELEM, fd, NULL, v, BPF_F_LOCK));
	say(t, "delete: %d\n", elem(sys, BPF_MAP_DELETE_ELEM, fd, NULL, NULL, 0));
	say(t, "get_next_key NULL: %d\n", elem(sys, BPF_MAP_GET_NEXT_KEY, fd, NULL, k, 0));
	say(t, "lookup_and_delete: %d\n",
	    elem(sys, BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, NULL, v, 0));
	say(t, "lookup value NULL: %d\n", elem(sys, BPF_MAP_LOOKUP_ELEM, fd, NULL, NULL, 0));
	close(fd);
}

/* ---- programs ---------------------------------------------------------------------------- */
#define INSN(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })

static void run_prog(sys_fn sys, struct transcript *t, const char *what,
		     const struct bpf_insn *insns, uint32_t n)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;
	int fd = load_prog(sys, t, what, BPF_PROG_TYPE_SOCKET_FILTER, insns, n);

	if (fd < 0)
		return;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = 1;
	if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
		say(t, "run %d\n", -errno);
	else if (strstr(what, "(garbage)"))
		say(t, "ran\n"); /* the result depends on what the stack held: not compared */
	else
		say(t, "retval %d\n", (int)a.test.retval);
	close(fd);
}

/* r2 = fp - 8 holding imm (or not written when init is 0), r1 = map; call id */
static uint32_t call_on(struct bpf_insn *p, uint32_t n, int fd, int32_t id, int init,
			int32_t imm)
{
	if (init)
		p[n++] = INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, imm);
	p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, fd);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0);
	p[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id);
	return n;
}

static void programs(sys_fn sys, struct transcript *t)
{
	int bloom = create(sys, 0, 8, 16, BPF_F_ZERO_SEED, 0);
	int queue, fd;
	struct bpf_insn p[32];
	uint32_t n;

	if (bloom < 0) {
		say(t, "programs: bloom %d\n", bloom);
		return;
	}
	/* push 7, peek 7 (0), peek 8 (-ENOENT unless a false positive): r0 = peek7 * 16 + peek8 */
	n = call_on(p, 0, bloom, BPF_FUNC_map_push_elem, 1, 7);
	n = call_on(p, n, bloom, BPF_FUNC_map_peek_elem, 1, 7);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_0, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_LSH | BPF_K, BPF_REG_6, 0, 0, 4);
	n = call_on(p, n, bloom, BPF_FUNC_map_peek_elem, 1, 8);
	p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_X, BPF_REG_0, BPF_REG_6, 0, 0);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "push + peek", p, n);
	/* the value pushed by the program is seen from user space */
	{
		uint64_t v = 7, w = 8;

		t->steps += 2;
		say(t, "syscall peek 7: %d\n", elem(sys, BPF_MAP_LOOKUP_ELEM, bloom, NULL, &v, 0));
		say(t, "syscall peek 8: %d\n", elem(sys, BPF_MAP_LOOKUP_ELEM, bloom, NULL, &w, 0));
	}
	n = call_on(p, 0, bloom, BPF_FUNC_map_push_elem, 1, 9);
	p[n - 2].imm = BPF_EXIST; /* r3: flags */
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "push BPF_EXIST", p, n);
	n = call_on(p, 0, bloom, BPF_FUNC_map_peek_elem, 0, 0);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	/* a bloom peek of whatever the stack holds: found or not is the stack's garbage (the
	 * kernel's, bpfrt's native stack), so only that both accept and run it is compared */
	run_prog(sys, t, "peek of uninitialised stack (garbage)", p, n);
	n = call_on(p, 0, bloom, BPF_FUNC_map_pop_elem, 1, 7);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "pop", p, n);
	n = call_on(p, 0, bloom, BPF_FUNC_map_lookup_elem, 1, 7);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "lookup", p, n);
	n = call_on(p, 0, bloom, BPF_FUNC_map_delete_elem, 1, 7);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	run_prog(sys, t, "delete", p, n);
	queue = -1;
	{
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_QUEUE;
		a.value_size = 8;
		a.max_entries = 4;
		queue = sys(BPF_MAP_CREATE, &a, sizeof(a));
	}
	if (queue >= 0) {
		/* a queue's peek writes the value: uninitialised stack is fine there */
		n = call_on(p, 0, queue, BPF_FUNC_map_peek_elem, 0, 0);
		p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		run_prog(sys, t, "queue peek of uninitialised stack", p, n);
		n = call_on(p, 0, queue, BPF_FUNC_map_pop_elem, 0, 0);
		p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		run_prog(sys, t, "queue pop into uninitialised stack", p, n);
		/* pop over a spilled constant: the helper's bytes replace the spill (raw
		 * mode), so what is read back is unknown and may not offset the context (a
		 * verifier that kept the spilled 0 would accept the context load) */
		n = 0;
		p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
		p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_7, 0, 0, 0);
		p[n++] = INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_7, -8, 0);
		n = call_on(p, n, queue, BPF_FUNC_map_pop_elem, 0, 0);
		p[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_2, BPF_REG_10, -8, 0);
		p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_X, BPF_REG_6, BPF_REG_2, 0, 0);
		p[n++] = INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_6, 0, 0);
		p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		run_prog(sys, t, "queue pop over a spilled constant, read back as ctx offset", p, n);
		/* the same with peek; and a spill below the value's 8 bytes survives */
		p[8].imm = BPF_FUNC_map_peek_elem;
		run_prog(sys, t, "queue peek over a spilled constant, read back as ctx offset", p, n);
		p[8].imm = BPF_FUNC_map_pop_elem;
		p[2].off = -16;
		p[n - 4].off = -16;
		run_prog(sys, t, "queue pop beside a spilled constant, read back as ctx offset", p, n);
		close(queue);
	}
	fd = create(sys, 0, 8, 16, BPF_F_ZERO_SEED | BPF_F_RDONLY_PROG, 0);
	if (fd >= 0) {
		n = call_on(p, 0, fd, BPF_FUNC_map_push_elem, 1, 7);
		p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		run_prog(sys, t, "push into rdonly_prog", p, n);
		close(fd);
	}
	close(bloom);
}

int main(void)
{
	static struct transcript kern, ours;
	static const script_fn parts[] = { creates, elements, programs, NULL };
	int probe;

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel's bpf()");
	probe = create(kernel_bpf, 0, 4, 1, 0, 0);
	if (probe < 0)
		T_SKIP("the kernel refuses a bloom filter MAP_CREATE (%s)", strerror(-probe));
	close(probe);
	if (transcript_run("bloom", parts, &kern, &ours))
		return 1;
	compare_transcripts(&kern, &ours);
	printf("bloom oracle: %u steps each side\n", kern.steps);
	if (getenv("BLOOM_DUMP"))
		fputs(kern.text, stdout);
	return t_done();
}
