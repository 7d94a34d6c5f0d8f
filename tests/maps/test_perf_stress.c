/* test_perf_stress.c - bpf_perf_event_output() from several threads into per-CPU perf
 * output rings while a consumer thread polls them (bpfrt_perf_buffer_poll), then while
 * another thread keeps replacing and deleting a slot: no crash, no race (run under TSan
 * in CI), every successful output arrives exactly once with its payload intact, and the
 * lost counts never exceed the failed outputs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"

#define THREADS 3
#define RUNS 1500

static int map_fd, prog_fd;
static atomic_int done;
static atomic_ulong ok, nospc, other;

/* r10-16: { 0x5a5a5a5a5a5a5a5a, ktime } ; output 16 bytes to the current CPU's ring */
static const struct bpf_insn prog[] = {
	{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_0, 0, 0, 0x5a5a5a5a },
	{ 0, 0, 0, 0, 0x5a5a5a5a },
	{ BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -16, 0 },
	{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0 },
	{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns },
	{ BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -8, 0 },
	{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0 },
	{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, 0 },
	{ 0, 0, 0, 0, 0 },
	{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_3, 0, 0, (int32_t)0xffffffff },
	{ 0, 0, 0, 0, 0 },
	{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_4, BPF_REG_10, 0, 0 },
	{ BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, -16 },
	{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_5, 0, 0, 16 },
	{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_perf_event_output },
	{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
};

struct got {
	unsigned long samples;
	unsigned long lost;
	unsigned long bad;
};

static void on_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	struct got *g = ctx;
	uint64_t magic;

	(void)cpu;
	memcpy(&magic, data, 8);
	if (size != 20 || magic != 0x5a5a5a5a5a5a5a5aull)
		g->bad++;
	g->samples++;
}

static void on_lost(void *ctx, int cpu, uint64_t cnt)
{
	struct got *g = ctx;

	(void)cpu;
	g->lost += cnt;
}

static void *producer(void *arg)
{
	unsigned char pkt[64] = { 0 };

	(void)arg;
	for (int i = 0; i < RUNS; i++) {
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));
		int32_t r0;

		if (bpfrt_prog_test_run_opts(prog_fd, &o)) {
			atomic_fetch_add(&other, 1);
			continue;
		}
		r0 = (int32_t)o.retval;
		if (!r0)
			atomic_fetch_add(&ok, 1);
		else if (r0 == -ENOSPC)
			atomic_fetch_add(&nospc, 1);
		else
			atomic_fetch_add(&other, 1);
	}
	return NULL;
}

/* Replace slot `cpu` with fresh rings and delete it, over and over. */
static void *churn(void *arg)
{
	uint32_t key = 0;

	(void)arg;
	while (!atomic_load(&done)) {
		int ring = bpfrt_perf_ring_create(-1, 1, NULL);

		if (ring >= 0) {
			bpfrt_map_update_elem(map_fd, &key, &ring, BPF_ANY);
			close(ring);
		}
		bpfrt_map_delete_elem(map_fd, &key);
	}
	return NULL;
}

static void phase(int with_churn)
{
	pthread_t th[THREADS], ch;
	struct got g = { 0 };
	struct bpfrt_perf_buffer *pb;

	atomic_store(&ok, 0);
	atomic_store(&nospc, 0);
	atomic_store(&other, 0);
	atomic_store(&done, 0);
	pb = bpfrt_perf_buffer_new(map_fd, 4, on_sample, on_lost, &g, NULL);
	T_ASSERT(pb != NULL);
	if (!pb)
		return;
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, producer, NULL);
	if (with_churn)
		pthread_create(&ch, NULL, churn, NULL);
	for (int i = 0; i < THREADS; i++) {
		/* consume while the producers run */
		while (pthread_tryjoin_np(th[i], NULL))
			bpfrt_perf_buffer_poll(pb, 10);
	}
	atomic_store(&done, 1);
	if (with_churn)
		pthread_join(ch, NULL);
	bpfrt_perf_buffer_consume(pb);
	printf("%s: %lu ok, %lu ENOSPC, %lu other; %lu samples, %lu lost\n", t_case,
	       atomic_load(&ok), atomic_load(&nospc), atomic_load(&other), g.samples, g.lost);
	T_EQ_INT(0, g.bad);
	T_EQ_INT(THREADS * RUNS, atomic_load(&ok) + atomic_load(&nospc) + atomic_load(&other));
	if (!with_churn) {
		/* every success arrived, nothing else failed */
		T_EQ_INT(atomic_load(&ok), g.samples);
		T_EQ_INT(0, atomic_load(&other));
		T_ASSERT(g.lost <= atomic_load(&nospc));
	} else {
		T_ASSERT(g.samples <= atomic_load(&ok));
	}
	bpfrt_perf_buffer_free(pb);
}

int main(void)
{
	struct bpf_insn insns[sizeof(prog) / sizeof(prog[0])];
	char dir[128];

	/* a fresh directory (not one named by the pid alone: a killed run of the same pid
	 * may have left its pins there) */
	snprintf(dir, sizeof(dir), "/tmp/bpfrt-test-perfstress-XXXXXX");
	if (!t_scratch_dir(dir))
		snprintf(dir, sizeof(dir), "/tmp/bpfrt-test-perfstress-%d", (int)getpid());
	setenv("BPFRT_FS", dir, 1);
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "stress", 4, 4,
				  (uint32_t)bpfrt_num_possible_cpus(), NULL);
	memcpy(insns, prog, sizeof(prog));
	insns[7].imm = map_fd;
	prog_fd = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "stress", "GPL", insns,
				  sizeof(insns) / sizeof(insns[0]), NULL);
	T_CASE("setup");
	T_ASSERT(map_fd >= 0 && prog_fd >= 0);
	if (map_fd < 0 || prog_fd < 0)
		return t_done();
	T_CASE("producers and a consumer");
	phase(0);
	T_CASE("producers, a consumer and slot churn");
	phase(1);
	close(prog_fd);
	close(map_fd);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	return t_done();
}
