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
 * Run: [LAYOUT_WL=rot16k|flow6|flow1] [LAYOUT_BLOCKS=20] chrt -f 50 taskset -c 1 \
 *       build-bench/layout build-bench/progs raw_flow [OFFSET...]
 * (default offsets 0..63; -1 = the JIT's own copy; flow6 and flow1: bench.c's cached rows, its
 * one packet every run, 16,384 runs a block: this loop is not bench.c's batch(), and on these
 * rows a change can win here and lose there, session 25's cmp/ja form of eqset's bit test 1
 * tick a run faster here, 0.4 ns slower in bench.c at the JIT's placement).  Prints, per
 * offset, rdtsc ticks per packet (median of the blocks, min), then the distribution over the
 * offsets; rdtsc since
 * the VM has no PMU and a tick is the same on every copy.  LAYOUT_PASSES="all -redzone none"
 * compiles the program once per BPFRT_JIT_PASSES value (all: every pass) and times every
 * configuration's copies interleaved in this one process, so configurations compare by their
 * distributions over placements without one process's draw (at most 256 copies in all).
 * The configuration "kernel" (root; PROG an xdp_ program) is the kernel JIT's own code for
 * the program instead, read back as bench.c's kernel-image engine reads it (kimage_load())
 * and called as that engine calls it, so bpfrt's code and the kernel's compare by their
 * distributions over the same placements in one process (issue #17, session 16). */
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
	char passes[512], *cfg[16], *save = NULL;
	bpfrt_vm_native_fn fns[LAYOUT_MAX_OFFS];
	struct engine kern = { .name = "kernel", .bpf = sys_bpf };
	int16_t koff[LAYOUT_MAX_OFFS][2]; /* the kernel's code: its ctx's data, data_end */
	long offs[LAYOUT_MAX_OFFS];
	double med[LAYOUT_MAX_OFFS];
	struct bpf_insn *insns;
	const uint8_t *pkts;
	int noff, ncfg = 0, ncopy, xdp;
	uint8_t *mem;
	size_t n, stride = BENCH_SLOT, len = BENCH_SLOT;

	if (argc < 3 || blocks < 1 || blocks > LAYOUT_MAX_BLOCKS) {
		fprintf(stderr, "usage: layout PROGDIR PROG [OFFSET...]  (LAYOUT_BLOCKS 1..%d)\n",
			LAYOUT_MAX_BLOCKS);
		return 2;
	}
	snprintf(passes, sizeof(passes), "%s", getenv("LAYOUT_PASSES") ? getenv("LAYOUT_PASSES") : "");
	for (char *t = strtok_r(passes, " ", &save); t && ncfg < 16; t = strtok_r(NULL, " ", &save))
		cfg[ncfg++] = t;
	if (!ncfg) /* BPFRT_JIT_PASSES as the environment has it */
		cfg[ncfg++] = NULL;
	noff = argc > 3 ? argc - 3 : 64;
	ncopy = noff * ncfg;
	if (ncopy > LAYOUT_MAX_OFFS) {
		fprintf(stderr, "layout: %d copies, at most %d\n", ncopy, LAYOUT_MAX_OFFS);
		return 2;
	}
	make_packets();
	if (strcmp(wl, "flow6") == 0 || strcmp(wl, "flow1") == 0) {
		/* bench.c's cached rows: its one packet every run */
		pkts = wl[4] == '6' ? flow6_at : flow1_at;
		stride = 0;
		len = sizeof(flow1);
	} else {
		pkts = strcmp(wl, "rot16k") == 0 ? rot_pkts : rot6_pkts;
	}
	xdp = strncmp(argv[2], "xdp_", 4) == 0; /* called like bench.c's jit-xdp */
	insns = read_prog(argv[1], argv[2], &n);
	mem = mmap(NULL, (size_t)ncopy * 8192 + 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	for (int c = 0; c < ncfg; c++) {
		BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_JIT);
		struct bpfrt_vm *vm;
		bpfrt_vm_native_fn orig;
		char err[512];
		size_t size;

		koff[c * noff][0] = -1;
		if (cfg[c] && strcmp(cfg[c], "kernel") == 0) {
			/* mapped by kimage_load() to a page of its own */
			if (!xdp || kimage_load(&kern, WL_ROT6, insns, n)) {
				fprintf(stderr, "%s: no copy of the kernel's code\n", argv[2]);
				return 1;
			}
			orig = (bpfrt_vm_native_fn)(void *)kern.kfn[WL_ROT6];
			koff[c * noff][0] = kern.koff_data[WL_ROT6];
			koff[c * noff][1] = kern.koff_end[WL_ROT6];
		} else {
			if (cfg[c] && strcmp(cfg[c], "all") == 0)
				unsetenv("BPFRT_JIT_PASSES");
			else if (cfg[c])
				setenv("BPFRT_JIT_PASSES", cfg[c], 1);
			if (bpfrt_vm_load(insns, n, &o, &vm, err, sizeof(err)) ||
			    !(orig = bpfrt_vm_native(vm))) {
				fprintf(stderr, "%s: not a context-free JIT program: %s\n", argv[2],
					err);
				return 1;
			}
		}
		/* The JIT maps whole pages: copy to the end of the code's page (the programs
		 * this is for are smaller than one).  The vm stays loaded: -1 runs its copy. */
		size = 4096 - ((uintptr_t)orig & 4095);
		printf("%s %s %s: the JIT's copy at page offset %lu\n", argv[2], wl,
		       cfg[c] ? cfg[c] : "(environment)", (unsigned long)((uintptr_t)orig & 4095));
		for (int j = 0; j < noff; j++) {
			int k = c * noff + j;
			uint8_t *at;

			koff[k][0] = koff[c * noff][0];
			koff[k][1] = koff[c * noff][1];

			offs[k] = argc > 3 ? strtol(argv[3 + j], NULL, 0) : j;
			if (offs[k] < 0 || offs[k] >= 4096) {
				fns[k] = orig;
				continue;
			}
			at = mem + (size_t)k * 8192 + (size_t)offs[k];
			memcpy(at, (const void *)orig, size);
			fns[k] = (bpfrt_vm_native_fn)(void *)at;
		}
	}
	if (mprotect(mem, (size_t)ncopy * 8192 + 8192, PROT_READ | PROT_EXEC))
		return 1;
	for (int b = 0; b < blocks; b++)
		for (int k = 0; k < ncopy; k++) {
			static uint64_t want; /* every copy's sum over the set: copy 0's */
			uint32_t md[6] = { 0 }; /* struct xdp_md: data, data_end */
			void *kctx[8] = { 0 };  /* the kernel's code: an xdp_buff */
			uint64_t sum = 0, t0 = 0;
			unsigned aux;

			/* two passes of warm-up (the set leaves the caches between copies), one
			 * timed */
			for (int pass = 0; pass < 3; pass++) {
				if (pass == 2)
					t0 = __rdtscp(&aux);
				for (uint32_t i = 0; i < ROT_PKTS; i++) {
					const uint8_t *p = pkts + (size_t)rot_perm[i] * stride;

					__asm__ volatile("" : "+r"(p));
					if (koff[k][0] >= 0) {
						kctx[koff[k][0] / 8] = (void *)(uintptr_t)p;
						kctx[koff[k][1] / 8] =
							(void *)(uintptr_t)(p + len);
						sum += ((uint32_t (*)(void *))(void *)fns[k])(kctx);
					} else if (xdp) {
						md[0] = (uint32_t)(uintptr_t)p;
						md[1] = (uint32_t)(uintptr_t)(p + len);
						sum += (uint32_t)fns[k](md, sizeof(md));
					} else {
						sum += fns[k]((void *)(uintptr_t)p, len);
					}
				}
			}
			ticks[k][b] = (double)(__rdtscp(&aux) - t0) / ROT_PKTS;
			if (!b && !k)
				want = sum;
			if (sum != want) { /* a copy that does not run the program */
				fprintf(stderr, "copy %d (offset %ld): sum %llu, copy 0's %llu\n", k,
					offs[k], (unsigned long long)sum, (unsigned long long)want);
				return 1;
			}
		}
	for (int c = 0; c < ncfg; c++) {
		for (int j = 0; j < noff; j++) {
			int k = c * noff + j;

			med[j] = median(ticks[k], blocks); /* sorts: ticks[k][0] is the min */
			printf("%s offset %4ld  ticks/packet median %.2f  min %.2f\n",
			       cfg[c] ? cfg[c] : "-", offs[k], med[j], ticks[k][0]);
		}
		median(med, noff);
		printf("%s over %d offsets: min %.2f  q1 %.2f  median %.2f  q3 %.2f  max %.2f\n",
		       cfg[c] ? cfg[c] : "-", noff, med[0], med[noff / 4], med[noff / 2],
		       med[3 * noff / 4], med[noff - 1]);
	}
	return 0;
}
