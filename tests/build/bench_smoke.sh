#!/bin/sh
# bench_smoke.sh - the benchmark as a differential test: build bench/progs with clang for
# eBPF and bench/bench.c against this build's libbpfrt.a, run every engine briefly, and
# require each engine's flow-hash, loop and rotating-set checks to equal native C's.
#   bench_smoke.sh SOURCE_DIR BUILD_DIR CC
set -eu
src=$1
build=$2
cc=$3
command -v clang >/dev/null && command -v llvm-objcopy >/dev/null ||
	{ echo "skipped: clang/llvm-objcopy not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

clang -O2 -target bpf -mcpu=v3 -ffreestanding -Wall -c "$src/bench/progs/progs.bpf.c" \
	-o "$tmp/progs.o"
for s in raw_empty raw_flow raw_loop xdp_empty xdp_flow xdp_loop; do
	llvm-objcopy -O binary --only-section="$s" "$tmp/progs.o" "$tmp/$s.bin"
done
libs=$(pkg-config --with-path="$build" --static --libs bpfrt | sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
# shellcheck disable=SC2086
$cc -O2 -std=gnu11 -Wall -Wextra -Werror -I"$src/include" "$src/bench/bench.c" \
	"$build/libbpfrt.a" $libs -o "$tmp/bench"
BENCH_TARGET_MS=1 "$tmp/bench" "$tmp" >"$tmp/out"
cat "$tmp/out"
awk '
	$1 == "CHK" { if ($2 == "native") want[$3] = $4; else got[$2 " " $3] = $4 }
	END {
		bad = 0
		for (k in got) {
			split(k, p, " ")
			if (!(p[2] in want) || got[k] != want[p[2]]) {
				printf "FAIL: %s %s = %s, native %s\n", p[1], p[2], got[k], want[p[2]]
				bad = 1
			}
		}
		if (length(got) == 0) { print "FAIL: no engine ran"; bad = 1 }
		exit bad
	}' "$tmp/out"
echo "bench smoke: every engine agrees with native C"
