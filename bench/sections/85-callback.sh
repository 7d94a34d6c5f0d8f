#!/bin/bash
# 85-callback.sh - bpf_loop(): 1,000 callback calls vs the same additions open-coded
# (bench/callback/), run by BPF_PROG_TEST_RUN in the kernel and in bpfrt on each engine, in
# this run.  Median [min-max] over $REPS passes of 1,000 runs, ns per run and ratios to
# the kernel.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-7}
CPU=${CPU:-$(($(nproc) - 1))}
OUT=build-bench/callback
mkdir -p "$OUT"
[ -f build-release/libbpfrt.a ] || {
	cmake --preset release >/dev/null
	cmake --build build-release -j2 --target bpfrt_static >/dev/null
}
arch_inc=/usr/include/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
clang -O2 -g -target bpf -I"$arch_inc" -Itests/progs -Wno-unused-function \
	-c bench/callback/loop.bpf.c -o "$OUT/loop.bpf.o"
libs=$(pkg-config --with-path=build-release --static --libs bpfrt |
	sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
# shellcheck disable=SC2086
gcc -O2 -std=gnu11 -Wall -Wextra -Iinclude bench/callback/callback_bench.c \
	build-release/libbpfrt.a $libs -o "$OUT/callback_bench"
taskset -c "$CPU" "$OUT/callback_bench" "$OUT/loop.bpf.o" "$REPS" 1000 >"$OUT/raw.txt"
python3 - "$OUT/raw.txt" "$REPS" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 4 and f[0] == "RES":
        runs.setdefault((f[1], f[2]), []).append(int(f[3]))
def cell(side, prog):
    v = runs.get((side, prog))
    if not v:
        return "-", None
    m = statistics.median(v)
    return f"{m / 1000:.2f} us [{min(v) / 1000:.2f}-{max(v) / 1000:.2f}]", m
print("## bpf_loop callbacks\n")
print(f"1,000 iterations adding the index to a counter in the caller's stack, through "
      f"bpf_loop() (one callback call each) or as an open-coded loop; time per "
      f"BPF_PROG_TEST_RUN run, median [min-max] of {sys.argv[2]} passes of 1,000 runs; "
      f"ratio = bpfrt / kernel.\n")
print("| side | bpf_loop, 1,000 callbacks | ratio | open-coded loop | ratio | ns per callback |")
print("|---|---|---|---|---|---|")
sides = ["kernel", "bpfrt-jit", "bpfrt-interp", "bpfrt-checked"]
k = {p: cell("kernel", p)[1] for p in ("with_callback", "open_coded")}
for s in sides:
    cb, mcb = cell(s, "with_callback")
    oc, moc = cell(s, "open_coded")
    r1 = f"{mcb / k['with_callback']:.2f}x" if mcb and k["with_callback"] else "-"
    r2 = f"{moc / k['open_coded']:.2f}x" if moc and k["open_coded"] else "-"
    per = f"{(mcb - moc) / 1000:.1f}" if mcb and moc else "-"
    print(f"| {s} | {cb} | {r1} | {oc} | {r2} | {per} |")
PY
