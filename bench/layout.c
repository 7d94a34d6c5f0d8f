/* layout.c - how much a JIT program's speed on the rotating packet sets depends on where its
 * code sits within 64-byte lines (issue #17: the rot6 row's jit / jit-xdp gap).  The program's
 * machine code, as bpfrt's JIT placed it, is copied to fresh executable memory at each byte
 * offset asked for (code the JIT emits for a program that calls nothing has no absolute or
 * rip-relative reference, so a copy runs the same instructions), and every copy is timed on
 * bench.c's packets in bench.c's order, copies interleaved block by block.  It includes
 * bench.c for exactly those packets, that permutation and its program reader.
 * Build (from the repository root, after bench/run.sh's steps that make build-bench/progs):
 *   gcc -O2 -std=gnu11 -Iinclude bench/layout.c build-release/libbpfrt.a -ldl -lpthread -lm \
 *       -lelf -lz -o build-bench/layout
 * Run: [LAYOUT_WL=rot16k] [LAYOUT_BLOCKS=20] chrt -f 50 taskset -c 1 build-bench/layout \
 *       build-bench/progs raw_flow [OFFSET...]
 * (default offsets 0..63; -1 = the JIT's own copy).  Prints, per offset, rdtsc ticks per
 * packet (median of the blocks, min), then the distribution over the offsets; rdtsc since
 * the VM has no PMU and a tick is the same on every copy.  BPFRT_JIT_PASSES applies. */
#define main bench_main
#include "bench.c"
#undef main

#include <x86intrin.h>

#define LAYOUT_MAX_OFFS 256
#define LAYOUT_MAX_BLOCKS 200

static double ticks[LAYOUT_MAX_OFFS][LAYOUT_MAX_BLOCKS];

int main(int argc, char **argv)
{
	const char *wl = getenv("LAYOUT_WL") ? getenv("LAYOUT_WL") : "rot6";
	int blocks = getenv("LAYOUT_BLOCKS") ? atoi(getenv("LAYOUT_BLOCKS")) : 20;
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_JIT);
	bpfrt_vm_native_fn orig, fns[LAYOUT_MAX_OFFS];
	long offs[LAYOUT_MAX_OFFS];
	double med[LAYOUT_MAX_OFFS];
	struct bpfrt_vm *vm;
	struct bpf_insn *insns;
	const uint8_t *pkts;
	char err[512];
	size_t n, size;
	uint8_t *mem;
	int noff, xdp;

	if (argc < 3 || blocks < 1 || blocks > LAYOUT_MAX_BLOCKS) {
		fprintf(stderr, "usage: layout PROGDIR PROG [OFFSET...]  (LAYOUT_BLOCKS 1..%d)\n",
			LAYOUT_MAX_BLOCKS);
		return 2;
	}
	make_packets();
	pkts = strcmp(wl, "rot16k") == 0 ? rot_pkts : rot6_pkts;
	xdp = strncmp(argv[2], "xdp_", 4) == 0; /* called like bench.c's jit-xdp */
	insns = read_prog(argv[1], argv[2], &n);
	if (bpfrt_vm_load(insns, n, &o, &vm, err, sizeof(err)) || !(orig = bpfrt_vm_native(vm))) {
		fprintf(stderr, "%s: not a context-free JIT program: %s\n", argv[2], err);
		return 1;
	}
	/* The JIT maps whole pages: copy to the end of the code's page (the programs this is for
	 * are smaller than one). */
	size = 4096 - ((uintptr_t)orig & 4095);
	noff = argc > 3 ? argc - 3 : 64;
	if (noff > LAYOUT_MAX_OFFS)
		return 2;
	mem = mmap(NULL, (size_t)noff * 8192 + 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	for (int k = 0; k < noff; k++) {
		offs[k] = argc > 3 ? strtol(argv[3 + k], NULL, 0) : k;
		if (offs[k] < 0 || offs[k] >= 4096) {
			fns[k] = orig;
			continue;
		}
		memcpy(mem + (size_t)k * 8192 + (size_t)offs[k], (const void *)orig, size);
		fns[k] = (bpfrt_vm_native_fn)(void *)(mem + (size_t)k * 8192 + (size_t)offs[k]);
	}
	if (mprotect(mem, (size_t)noff * 8192 + 8192, PROT_READ | PROT_EXEC))
		return 1;
	printf("%s %s, the JIT's copy at page offset %lu\n", argv[2], wl,
	       (unsigned long)((uintptr_t)orig & 4095));
	for (int b = 0; b < blocks; b++)
		for (int k = 0; k < noff; k++) {
			uint32_t md[6] = { 0 }; /* struct xdp_md: data, data_end */
			uint64_t sum = 0, t0 = 0;
			unsigned aux;

			/* two passes of warm-up (the set leaves the caches between copies), one
			 * timed */
			for (int pass = 0; pass < 3; pass++) {
				if (pass == 2)
					t0 = __rdtscp(&aux);
				for (uint32_t i = 0; i < ROT_PKTS; i++) {
					const uint8_t *p = pkts + (size_t)rot_perm[i] * BENCH_SLOT;

					__asm__ volatile("" : "+r"(p));
					if (xdp) {
						md[0] = (uint32_t)(uintptr_t)p;
						md[1] = (uint32_t)(uintptr_t)(p + BENCH_SLOT);
						sum += fns[k](md, sizeof(md));
					} else {
						sum += fns[k]((void *)(uintptr_t)p, BENCH_SLOT);
					}
				}
			}
			ticks[k][b] = (double)(__rdtscp(&aux) - t0) / ROT_PKTS;
			__asm__ volatile("" : : "r"(sum));
		}
	for (int k = 0; k < noff; k++) {
		med[k] = median(ticks[k], blocks); /* sorts: ticks[k][0] is the min */
		printf("offset %4ld  ticks/packet median %.2f  min %.2f\n", offs[k], med[k],
		       ticks[k][0]);
	}
	median(med, noff);
	printf("over %d offsets: min %.2f  q1 %.2f  median %.2f  q3 %.2f  max %.2f\n", noff, med[0],
	       med[noff / 4], med[noff / 2], med[3 * noff / 4], med[noff - 1]);
	bpfrt_vm_free(vm);
	return 0;
}
