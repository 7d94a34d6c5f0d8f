#!/bin/bash
# bench/compare.sh - the engine table of two revisions measured in one run.
#   bench/compare.sh REV_A REV_B [REPS]      (REPS default 7)
# Builds each revision's own library and bench harness (bench/run.sh's recipe) from `git
# archive` into /tmp/bpfrt-compare/<commit>/ (kept: a second run reuses it), then runs the
# two harnesses alternately REPS times each, pinned to one CPU, so that load on a shared
# machine falls on both alike.  Prints, per engine and workload, the min and median ns per
# run of each revision and B/A for both.  Environment:
#   CPU=N                the CPU to pin to (default: the last one)
#   ENGINES="..."        engines passed to the harness (default: native interp jit)
#   BENCH_TARGET_MS=50   timed part of one measurement (read by the harness)
#   CALLGRIND=1          also count instructions (independent of load): callgrind over
#                        bpfrt_vm_run only, interp engine, BENCH_RUNS=1000 and 2000 runs of
#                        each of flow1 flow6 rot16k rot6 loop; the difference / 1000 is the
#                        count per run.  Older harnesses lack BENCH_RUNS, so this part
#                        builds this checkout's bench/bench.c against each revision's
#                        library (same public API needed).
# The build recipe is bench/run.sh's, repeated here because an archived revision may
# predate any shared script.
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: bench/compare.sh REV_A REV_B [REPS]" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
REPS=${3:-7}
CPU=${CPU:-$(($(nproc) - 1))}
ENGINES=${ENGINES:-native interp jit}
ROOT=/tmp/bpfrt-compare

# build REV: prints the directory holding bench and progs/ for REV.
build() {
	local commit dir libs
	commit=$(git rev-parse --verify "$1^{commit}")
	dir=$ROOT/$commit
	if [ -x "$dir/out/bench" ]; then
		echo "$dir/out"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir/src" "$dir/out/progs"
	git archive "$commit" | tar -x -C "$dir/src"
	(
		cd "$dir/src"
		cmake --preset release >/dev/null
		cmake --build build-release -j"$(nproc)" --target bpfrt_static >/dev/null
		clang -O2 -target bpf -mcpu=v3 -ffreestanding -Wall -c bench/progs/progs.bpf.c \
			-o "$dir/out/progs/progs.bpf.o"
		for s in raw_empty raw_flow raw_loop xdp_empty xdp_flow xdp_loop; do
			llvm-objcopy -O binary --only-section="$s" "$dir/out/progs/progs.bpf.o" \
				"$dir/out/progs/$s.bin"
		done
		libs=$(pkg-config --with-path=build-release --static --libs bpfrt |
			sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
		# shellcheck disable=SC2086
		gcc -O2 -std=gnu11 -Wall -Wextra -Iinclude bench/bench.c build-release/libbpfrt.a \
			$libs -o "$dir/out/bench"
	) >&2
	echo "$dir/out"
}

echo "== building $1 and $2 (in $ROOT)" >&2
A=$(build "$1")
B=$(build "$2")
raw=$(mktemp /tmp/bpfrt-compare-XXXXXX.txt)
for r in $(seq 1 "$REPS"); do
	echo "== repetition $r/$REPS" >&2
	for side in A B; do
		dir=$A
		[ $side = B ] && dir=$B
		# shellcheck disable=SC2086
		taskset -c "$CPU" "$dir/bench" "$dir/progs" $ENGINES | sed -n "s/^RES /$side /p" >>"$raw"
	done
done

echo "# A = $1 ($(git log -1 --format=%h "$1")), B = $2 ($(git log -1 --format=%h "$2"))"
echo "# $REPS interleaved repetitions each, pinned to CPU $CPU; ns per run"
python3 - "$raw" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    side, engine, wl, ns = line.split()
    runs.setdefault((engine, wl), {"A": [], "B": []})[side].append(float(ns))
print(f"{'engine':<8} {'workload':<9} {'A min':>9} {'B min':>9} {'B/A':>6}"
      f" {'A med':>9} {'B med':>9} {'B/A':>6}")
for (engine, wl), s in runs.items():
    if not s["A"] or not s["B"]:
        continue
    amin, bmin = min(s["A"]), min(s["B"])
    amed, bmed = statistics.median(s["A"]), statistics.median(s["B"])
    print(f"{engine:<8} {wl:<9} {amin:9.2f} {bmin:9.2f} {bmin / amin:6.3f}"
          f" {amed:9.2f} {bmed:9.2f} {bmed / amed:6.3f}")
EOF
rm -f "$raw"

if [ "${CALLGRIND:-0}" = 1 ]; then
	echo "# callgrind: instructions per bpfrt_vm_run, interp engine"
	printf '%-8s %12s %12s %6s\n' workload A B B/A
	here=$(pwd)
	for side in A B; do
		dir=$A
		[ $side = B ] && dir=$B
		src=$dir/../src
		libs=$(cd "$src" && pkg-config --with-path=build-release --static --libs bpfrt |
			sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
		# shellcheck disable=SC2086
		gcc -O2 -std=gnu11 -I"$src/include" -I"$here/bench" "$here/bench/bench.c" \
			"$src/build-release/libbpfrt.a" $libs -o "$dir/bench-count"
	done
	ir() { # DIR WORKLOAD RUNS: instructions inside bpfrt_vm_run
		local cg
		cg=$(mktemp /tmp/bpfrt-compare-cg-XXXXXX)
		BENCH_RUNS=$3 BENCH_WORKLOADS=$2 valgrind --tool=callgrind \
			--toggle-collect=bpfrt_vm_run --callgrind-out-file="$cg" \
			"$1/bench-count" "$1/progs" interp >/dev/null 2>&1
		callgrind_annotate "$cg" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
		rm -f "$cg"
	}
	for w in flow1 flow6 rot16k rot6 loop; do
		a=$(( ($(ir "$A" $w 2000) - $(ir "$A" $w 1000)) / 1000 ))
		b=$(( ($(ir "$B" $w 2000) - $(ir "$B" $w 1000)) / 1000 ))
		printf '%-8s %12d %12d %6.3f\n' $w "$a" "$b" "$(echo "$b / $a" | bc -l)"
	done
fi
