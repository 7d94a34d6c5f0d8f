#!/bin/bash
# 30-verifier.sh - verification time per program, bpfrt vs the kernel's BPF_PROG_LOAD, and
# the verifier's peak memory (bench/verifier/verifier_bench.c prints the section).
# REPS (default 7) repetitions pinned to CPU $CPU; kernel columns need root.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-7}
CPU=${CPU:-$(($(nproc) - 1))}
OUT=build-bench
mkdir -p "$OUT/progs"
if [ ! -f build-release/libbpfrt.a ]; then
	cmake --preset release >/dev/null
	cmake --build build-release -j2 --target bpfrt_static >/dev/null
fi
if [ ! -f "$OUT/progs/xdp_flow.bin" ] || [ ! -f "$OUT/progs/xdp_loop.bin" ]; then
	clang -O2 -target bpf -mcpu=v3 -ffreestanding -Wall -c bench/progs/progs.bpf.c \
		-o "$OUT/progs/progs.bpf.o"
	for s in xdp_flow xdp_loop; do
		llvm-objcopy -O binary --only-section="$s" "$OUT/progs/progs.bpf.o" "$OUT/progs/$s.bin"
	done
fi
libs=$(pkg-config --with-path=build-release --static --libs bpfrt |
	sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
# shellcheck disable=SC2086
gcc -O2 -std=gnu11 -Wall -Wextra -Iinclude -Isrc bench/verifier/verifier_bench.c \
	build-release/libbpfrt.a $libs -o "$OUT/verifier_bench" >&2
taskset -c "$CPU" "$OUT/verifier_bench" "$OUT/progs" "$REPS"

# The real-program corpus (docs/CORPUS.md, ~/.cache/bpfrt-corpus): every program both
# verifiers accept, processed insns and the logs' verification time summed, bpfrt against
# the kernel (tests/corpus/corpus_diff; needs root, libbpf-dev and the corpus).
echo
echo "### Verifier on the real-program corpus"
echo
cd_bin=build-release/tests/corpus_diff
[ -x "$cd_bin" ] || cmake --build build-release -j2 --target corpus_diff >/dev/null 2>&1 || true
corpus=${BPFRT_CORPUS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bpfrt-corpus}
if [ "$(id -u)" != 0 ] || [ ! -x "$cd_bin" ] || [ ! -d "$corpus" ]; then
	echo "(skipped: needs root, tests/corpus/corpus_diff (libbpf-dev) and the corpus in $corpus)"
else
	out=$(taskset -c "$CPU" "$cd_bin" "$corpus" 2>/dev/null || true)
	echo "From \`corpus_diff $corpus\` (one load per program and side, log level 4):"
	echo
	echo "$out" | grep -E '^(processed insns, bpfrt / kernel|verification time \(the logs)' |
		sed 's/^/- /'
fi
