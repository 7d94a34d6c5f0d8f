#!/bin/bash
# bench/sections/90-preload.sh - libbpfrt-preload.so (#18): one bpf() call
# (BPF_MAP_LOOKUP_ELEM of an array map) as the kernel's syscall, as bpfrt_bpf() called
# directly, and as syscall(__NR_bpf) intercepted by the preload library; and the wall time
# of the libbpf test application (tests/preload/app.c: skeleton open + load of 6 maps and
# an XDP program, 4 test runs, ring buffer, pin) on the kernel and under `bpfrt exec`.
# Prints one markdown section (contract: bench/sections/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-5}
CPU=${CPU:-$(($(nproc) - 1))}
MS=${PRELOAD_BENCH_MS:-200}
OUT=build-bench
mkdir -p "$OUT"

if [ ! -f build-release/libbpfrt-preload.so ]; then
	cmake --preset release >/dev/null
	cmake --build build-release -j2 --target bpfrt_cli bpfrt_preload >/dev/null
fi
LIB=$PWD/build-release
gcc -O2 -std=gnu11 -Wall -Wextra -Iinclude bench/preload_bench.c -L"$LIB" -lbpfrt \
	-Wl,-rpath,"$LIB" -o "$OUT/preload_bench" >&2
app=
if command -v clang >/dev/null && command -v bpftool >/dev/null && [ -f /usr/include/bpf/libbpf.h ]; then
	inc=/usr/include/$(gcc -print-multiarch)
	clang -O2 -g -target bpf -I"$inc" -c tests/preload/app.bpf.c -o "$OUT/app.bpf.o" &&
		bpftool gen skeleton "$OUT/app.bpf.o" name app >"$OUT/app.skel.h" &&
		gcc -O2 -I"$OUT" tests/preload/app.c -lbpf -o "$OUT/preload_app" >&2 && app=$OUT/preload_app
fi

raw=$OUT/preload-raw.txt
: >"$raw"
export BPFRT_FS=$OUT/preload-fs
for r in $(seq 1 "$REPS"); do
	echo "== preload repetition $r/$REPS" >&2
	taskset -c "$CPU" "$OUT/preload_bench" "$MS" syscall kernel >>"$raw"
	taskset -c "$CPU" "$OUT/preload_bench" "$MS" direct direct >>"$raw"
	LD_PRELOAD=$LIB/libbpfrt-preload.so taskset -c "$CPU" \
		"$OUT/preload_bench" "$MS" syscall intercepted >>"$raw"
	if [ -n "$app" ]; then
		for side in kernel bpfrt; do
			pre=()
			[ $side = bpfrt ] && pre=("$LIB/bpfrt" exec --)
			t0=$(date +%s%N)
			taskset -c "$CPU" "${pre[@]}" "$app" >/dev/null 2>&1
			echo "RES app_$side $((($(date +%s%N) - t0) / 1000))" >>"$raw"
		done
	fi
done

python3 - "$raw" "$REPS" <<'PY'
import statistics, sys
vals = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3 and f[0] == 'RES':
        vals.setdefault(f[1], []).append(float(f[2]))
def cell(k, unit):
    v = vals.get(k)
    if not v:
        return 'n/a'
    return f"{statistics.median(v):.0f} [{min(v):.0f}–{max(v):.0f}] {unit}"
def ratio(a, b):
    if a not in vals or b not in vals:
        return 'n/a'
    return f"{statistics.median(vals[a]) / statistics.median(vals[b]):.2f}x"
print("## Preload (libbpfrt-preload.so, #18)\n")
print(f"REPS={sys.argv[2]}, median [min–max].  One BPF_MAP_LOOKUP_ELEM of an array map:\n")
print("| call | ns per call | vs kernel |")
print("|---|---|---|")
print(f"| kernel syscall(__NR_bpf) | {cell('kernel', 'ns')} | 1.00x |")
print(f"| bpfrt_bpf() direct | {cell('direct', 'ns')} | {ratio('direct', 'kernel')} |")
print(f"| syscall(__NR_bpf) intercepted | {cell('intercepted', 'ns')} | {ratio('intercepted', 'kernel')} |")
print(f"\nInterception overhead: intercepted / direct = {ratio('intercepted', 'direct')}.\n")
print("| libbpf app (tests/preload/app.c), whole run | wall time | vs kernel |")
print("|---|---|---|")
print(f"| kernel | {cell('app_kernel', 'µs')} | 1.00x |")
print(f"| bpfrt exec | {cell('app_bpfrt', 'µs')} | {ratio('app_bpfrt', 'app_kernel')} |")
PY
