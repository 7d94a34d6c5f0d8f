/* test_pin.c - a pinned map shared by processes while programs update it: process A
 * creates and pins a hash map and runs a counting program from two threads; process B
 * (this binary re-executed, so nothing is inherited) opens the pin with BPF_OBJ_GET and
 * reads while A runs.  B must see the count never go backwards, and the final count must
 * be exact.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "bpfrt.h"

#define THREADS 2
#define ROUNDS 20
#define REPEAT 250

static int prog_fd;

static const char counter_prog[] =
	"stw [%r10-4], 0\n"
	"mov %r2, %r10\n"
	"add %r2, -4\n"
	"lddw %r1, map_fd 0\n" /* patched with the map fd */
	"call 1\n"
	"jeq %r0, 0, +2\n"
	"mov %r1, 1\n"
	"lock add [%r0+0], %r1\n"
	"mov %r0, 0\n"
	"exit\n";

static void *runner(void *arg)
{
	unsigned char pkt[64] = { 0 };
	int *failed = arg;

	for (int i = 0; i < ROUNDS; i++) {
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
			   .repeat = REPEAT);

		if (bpfrt_prog_test_run_opts(prog_fd, &o))
			(*failed)++;
	}
	return NULL;
}

/* Process B: read the pinned map until told to stop (stdin closes). */
static int reader(const char *path)
{
	uint64_t last = 0, v;
	uint32_t key = 0;
	long reads = 0;
	char c;
	int fd;

	for (int tries = 0; (fd = bpfrt_obj_get(path)) < 0 && tries < 1000; tries++)
		usleep(1000);
	if (fd < 0)
		return 2;
	/* tell A we are in, then read until A closes our stdin */
	if (write(1, "r", 1) != 1)
		return 2;
	for (;;) {
		if (bpfrt_map_lookup_elem(fd, &key, &v) == 0) {
			if (v < last)
				return 3;
			last = v;
			reads++;
		}
		struct timeval tv = { 0, 0 };
		fd_set set;

		FD_ZERO(&set);
		FD_SET(0, &set);
		if (select(1, &set, NULL, NULL, &tv) > 0 && read(0, &c, 1) <= 0)
			break;
	}
	fprintf(stderr, "reader: %ld reads, last %llu\n", reads, (unsigned long long)last);
	return reads > 0 ? 0 : 4;
}

int main(int argc, char **argv)
{
	char dir[64] = "/dev/shm/bpfrt-xproc-XXXXXX", path[128], errbuf[256], ready;
	int to_child[2], from_child[2], st, failed = 0, map_fd;
	struct bpf_insn *insns;
	pthread_t t[THREADS];
	uint64_t v = 0;
	uint32_t key = 0;
	size_t n;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "reader"))
		return reader(argv[2]);
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	snprintf(path, sizeof(path), "%s/counts", dir);

	T_CASE("A: create, pin, load");
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, "counts", 4, 8, 16, NULL);
	T_ASSERT(map_fd >= 0);
	T_EQ_INT(0, bpfrt_map_update_elem(map_fd, &key, &v, BPF_ANY));
	T_EQ_INT(0, bpfrt_obj_pin(map_fd, path));
	T_EQ_INT(0, bpfrt_asm(counter_prog, "counter", &insns, &n, errbuf, sizeof(errbuf)));
	insns[3].imm = map_fd;
	prog_fd = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "count", "GPL", insns, n, NULL);
	free(insns);
	T_ASSERT(prog_fd >= 0);
	/* the program holds the map: our fd can go */
	close(map_fd);

	T_CASE("B: reader process");
	T_EQ_INT(0, pipe(to_child));
	T_EQ_INT(0, pipe(from_child));
	pid = fork();
	if (pid == 0) {
		dup2(to_child[0], 0);
		dup2(from_child[1], 1);
		close(to_child[1]);
		close(from_child[0]);
		execl("/proc/self/exe", argv[0], "reader", path, (char *)NULL);
		_exit(5);
	}
	close(to_child[0]);
	close(from_child[1]);
	T_EQ_INT(1, read(from_child[0], &ready, 1));

	T_CASE("A: two threads count");
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, runner, &failed);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	close(to_child[1]);
	waitpid(pid, &st, 0);
	T_ASSERT(WIFEXITED(st));
	T_EQ_INT(0, WEXITSTATUS(st));
	T_EQ_INT(0, failed);

	T_CASE("final count exact, seen through the pin");
	map_fd = bpfrt_obj_get(path);
	T_ASSERT(map_fd >= 0);
	T_EQ_INT(0, bpfrt_map_lookup_elem(map_fd, &key, &v));
	T_EQ_U64((uint64_t)THREADS * ROUNDS * REPEAT, v);
	close(map_fd);
	close(prog_fd);
	unlink(path);
	rmdir(dir);
	return t_done();
}
