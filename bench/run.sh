#!/bin/bash
# bench/run.sh - build what the benchmark needs, run it, write bench/RESULTS.md.
#   REPS=7        interleaved repetitions (each runs every engine on every workload once)
#   CPU=N         the CPU to pin to (default: the last one)
#   ENGINES="..." subset of: native interp checked jit bpfrt-testrun kernel-jit kernel-image jit-xdp (default: all)
#   BENCH_TARGET_MS=50   timed part of one measurement
#   SECTIONS="NN-name ..."  which bench/sections/*.sh to run after the engine tables (all)
#   SECTION_REPS=N  repetitions of the sections (default REPS): the engine table is cheap
#                 (seconds a repetition) and wants many repetitions on a bimodal host; the
#                 sections take minutes each
# Needs: the packages of scripts/deps.sh; root for kernel-jit and kernel-image (skipped otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-7}
SECTION_REPS=${SECTION_REPS:-$REPS}
CPU=${CPU:-$(($(nproc) - 1))}
OUT=build-bench
mkdir -p "$OUT/progs"

echo "== building the library (preset release) and the harness"
cmake --preset release >/dev/null
cmake --build build-release -j"$(nproc)" --target bpfrt_static >/dev/null
clang -O2 -target bpf -mcpu=v3 -ffreestanding -Wall -c bench/progs/progs.bpf.c \
	-o "$OUT/progs/progs.bpf.o"
for s in raw_empty raw_flow raw_loop xdp_empty xdp_flow xdp_loop; do
	llvm-objcopy -O binary --only-section="$s" "$OUT/progs/progs.bpf.o" "$OUT/progs/$s.bin"
done
# The library's own link needs (libelf, capstone, ...) come from its pkg-config file.
libs=$(pkg-config --with-path=build-release --static --libs bpfrt |
	sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
gcc -O2 -std=gnu11 -Wall -Wextra -Iinclude bench/bench.c build-release/libbpfrt.a $libs \
	-o "$OUT/bench"

raw=$OUT/raw.txt
{
	echo "# date: $(date -u +%FT%TZ)"
	echo "# commit: $(git log -1 --format='%h %s' 2>/dev/null || echo unknown)"
	cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
	echo "# cpu: $cpu, $(nproc) CPUs, pinned to CPU $CPU"
	jit=$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null || echo ?)
	echo "# kernel: $(uname -r), bpf_jit_enable=$jit"
	echo "# compilers: $(gcc --version | head -n 1); $(clang --version | head -n 1)"
} >"$raw"
for r in $(seq 1 "$REPS"); do
	echo "== repetition $r/$REPS"
	echo "# rep $r" >>"$raw"
	# shellcheck disable=SC2086
	taskset -c "$CPU" "$OUT/bench" "$OUT/progs" ${ENGINES:-} | tee -a "$raw" |
		grep -E '^(RES|NOTE)' || true
done
status=0
python3 bench/aggregate.py "$raw" ../shared/bench/README.md >bench/RESULTS.md || status=$?
# Further sections: each bench/sections/NN-name.sh measures one area (maps, verifier,
# filter, tracing, ...) and prints its markdown section ("## ..." heading, tables as ratios
# to baselines measured in the same run) on stdout; it gets REPS and CPU in the environment
# (SECTION_REPS as REPS) and build-release/ already built. SECTIONS="NN-name ..." runs a subset.
for sec in ${SECTIONS:-$(ls bench/sections/*.sh 2>/dev/null | xargs -rn1 basename | sed 's/\.sh$//')}; do
	echo "== section $sec"
	out=$OUT/section-$sec.md
	if REPS=$SECTION_REPS CPU=$CPU bash "bench/sections/$sec.sh" >"$out"; then
		{ echo; cat "$out"; } >>bench/RESULTS.md
	else
		{ echo; echo "## $sec"; echo; echo "(failed: bench/sections/$sec.sh exited non-zero)"; } \
			>>bench/RESULTS.md
		status=1
	fi
done
cat bench/RESULTS.md
[ $status -eq 0 ] || echo "!! engines disagree: see the cross-check section"
exit $status
