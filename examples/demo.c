/* demo.c - libbpfrt at work through its public API only (one #include <bpfrt.h>): assemble a
 * small packet classifier (examples/classifier.s, path in argv[1]), disassemble it, run it on a few
 * packets with every engine this build has, show that the checked engine stops a faulty program
 * with a message naming the instruction, and time the engines.  Exits non-zero if any result is
 * wrong, so it doubles as a test (ctest examples.demo).  Run by scripts/demo.sh.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpfrt.h>

/* Reads 8 bytes at r1 + 4096: far outside a 64-byte packet. */
static const char faulty[] = "        ldxdw %r0, [%r1+4096]\n"
			     "        exit\n";

struct packet {
	const char *what;
	uint8_t bytes[80];
	size_t len;
	uint64_t expect;
};

static struct packet packets[] = {
	{ "IPv4/TCP to port 443", { 0 }, 64, 443 },
	{ "IPv4/UDP to port 53", { 0 }, 64, 53 },
	{ "IPv4/TCP, 8 bytes of options, port 22", { 0 }, 72, 22 },
	{ "IPv6/TCP (not classified)", { 0 }, 78, 0 },
	{ "truncated IPv4 (20 bytes)", { 0 }, 20, 0 },
};

static void ipv4(struct packet *p, uint8_t proto, uint8_t ihl_words, uint16_t dport)
{
	uint8_t *b = p->bytes, *l4 = b + 14 + ihl_words * 4;

	b[12] = 0x08;
	b[14] = (uint8_t)(0x40 | ihl_words);
	b[23] = proto;
	l4[2] = (uint8_t)(dport >> 8);
	l4[3] = (uint8_t)dport;
}

static void make_packets(void)
{
	ipv4(&packets[0], 6, 5, 443);
	ipv4(&packets[1], 17, 5, 53);
	ipv4(&packets[2], 6, 7, 22);
	packets[3].bytes[12] = 0x86;
	packets[3].bytes[13] = 0xdd;
	packets[3].bytes[14] = 0x60;
	ipv4(&packets[4], 6, 5, 80);
}

static const struct {
	const char *name;
	enum bpfrt_engine engine;
} engines[] = {
	{ "checked", BPFRT_ENGINE_CHECKED },
	{ "interp", BPFRT_ENGINE_INTERP },
	{ "jit", BPFRT_ENGINE_JIT },
};
#define N_ENGINES (sizeof(engines) / sizeof(engines[0]))

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: steady on a busy machine */
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int assemble(const char *text, const char *name, struct bpf_insn **insns, size_t *n)
{
	char err[256];

	if (bpfrt_asm(text, name, insns, n, err, sizeof(err))) {
		fprintf(stderr, "demo: %s\n", err);
		return -1;
	}
	return 0;
}

static void disassemble(const struct bpf_insn *insns, size_t n)
{
	char line[128];

	for (size_t i = 0; i < n;) {
		int used = bpfrt_disasm_insn(&insns[i], n - i, BPFRT_DISASM_KERNEL, line,
					     sizeof(line));

		printf("  %3zu: %s\n", i, line);
		i += used > 0 ? (size_t)used : 1;
	}
}

/* Load the classifier on each engine; NULL where this build lacks the engine. */
static int load_all(const struct bpf_insn *insns, size_t n, struct bpfrt_vm **vms)
{
	for (size_t e = 0; e < N_ENGINES; e++) {
		BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engines[e].engine);
		char err[256];
		int rc = bpfrt_vm_load(insns, n, &o, &vms[e], err, sizeof(err));

		if (rc == -EOPNOTSUPP) {
			printf("  (%s engine not in this build)\n", engines[e].name);
			vms[e] = NULL;
		} else if (rc) {
			fprintf(stderr, "demo: load on %s: %s\n", engines[e].name, err);
			return -1;
		}
	}
	return 0;
}

static int classify(struct bpfrt_vm **vms)
{
	int bad = 0;

	printf("\n%-40s %8s", "packet", "expected");
	for (size_t e = 0; e < N_ENGINES; e++)
		if (vms[e])
			printf(" %8s", engines[e].name);
	printf("\n");
	for (size_t p = 0; p < sizeof(packets) / sizeof(packets[0]); p++) {
		printf("%-40s %8llu", packets[p].what, (unsigned long long)packets[p].expect);
		for (size_t e = 0; e < N_ENGINES; e++) {
			uint64_t r0 = 0;
			char err[256];

			if (!vms[e])
				continue;
			if (bpfrt_vm_run(vms[e], packets[p].bytes, packets[p].len, &r0, err,
					 sizeof(err))) {
				printf(" error: %s", err);
				bad = 1;
				continue;
			}
			printf(" %8llu", (unsigned long long)r0);
			bad |= r0 != packets[p].expect;
		}
		printf("\n");
	}
	return bad;
}

static void timing(struct bpfrt_vm **vms)
{
	const unsigned runs = 1000000;

	printf("\nCPU time per run on the first packet (%u runs):\n", runs);
	for (size_t e = 0; e < N_ENGINES; e++) {
		uint64_t r0, sum = 0;
		double t0;

		if (!vms[e])
			continue;
		t0 = now_ns();
		for (unsigned i = 0; i < runs; i++) {
			bpfrt_vm_run(vms[e], packets[0].bytes, packets[0].len, &r0, NULL, 0);
			sum += r0;
		}
		printf("  %-8s %6.1f ns   (sum %llu)\n", engines[e].name, (now_ns() - t0) / runs,
		       (unsigned long long)sum);
	}
}

/* The checked engine must refuse the out-of-bounds load and say where it was. */
static int fault(void)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_CHECKED);
	struct bpf_insn *insns;
	struct bpfrt_vm *vm;
	char err[256] = "";
	uint64_t r0 = 0;
	size_t n;
	int rc;

	printf("\nA faulty program on the checked engine:\n%s", faulty);
	if (assemble(faulty, "faulty.s", &insns, &n) ||
	    bpfrt_vm_load(insns, n, &o, &vm, err, sizeof(err))) {
		fprintf(stderr, "demo: %s\n", err);
		return 1;
	}
	rc = bpfrt_vm_run(vm, packets[0].bytes, packets[0].len, &r0, err, sizeof(err));
	printf("  -> %s (%d): %s\n", rc ? "stopped" : "NOT stopped", rc, err);
	bpfrt_vm_free(vm);
	free(insns);
	return rc != -EFAULT;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = calloc(1, 65536);

	if (!f || !text || !fread(text, 1, 65535, f)) {
		fprintf(stderr, "demo: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	return text;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "examples/classifier.s";
	char *classifier = read_text(path);
	struct bpfrt_vm *vms[N_ENGINES];
	struct bpf_insn *insns;
	size_t n;
	int bad;

	printf("libbpfrt %s\n\nThe classifier (%s):\n%s", bpfrt_version(), path, classifier);
	make_packets();
	if (assemble(classifier, path, &insns, &n))
		return 1;
	free(classifier);
	printf("\nAssembled by bpfrt_asm() to %zu instructions; bpfrt_disasm_insn() "
	       "(kernel verifier-log style):\n",
	       n);
	disassemble(insns, n);
	if (load_all(insns, n, vms))
		return 1;
	bad = classify(vms);
	bad |= fault();
	timing(vms);
	for (size_t e = 0; e < N_ENGINES; e++)
		bpfrt_vm_free(vms[e]);
	free(insns);
	printf("\n%s\n", bad ? "demo: WRONG RESULTS" : "demo: all results as expected");
	return bad;
}
