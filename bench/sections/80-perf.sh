#!/bin/bash
# 80-perf.sh - the cost of one bpf_perf_event_output() of 16 bytes (BPF_F_CURRENT_CPU) from
# a socket filter, in bpfrt (JIT, perf output ring, bench/perf_bench.c) and in the kernel
# (BPF_PROG_TEST_RUN into a PERF_COUNT_SW_BPF_OUTPUT event; needs root), next to
# bpf_ringbuf_output() of the same bytes; per call, net of the same loop without the call.
# Median [min-max] over $REPS repetitions, pinned to CPU $CPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-7}
CPU=${CPU:-$(($(nproc) - 1))}
RUNS=${RUNS:-2000}
OUT=build-bench/perf
mkdir -p "$OUT"
[ -f build-release/libbpfrt.a ] || {
	cmake --preset release >/dev/null
	cmake --build build-release -j2 --target bpfrt_static >/dev/null
}
libs=$(pkg-config --with-path=build-release --static --libs bpfrt |
	sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
# shellcheck disable=SC2086
gcc -O2 -std=gnu11 -Wall -Iinclude bench/perf_bench.c build-release/libbpfrt.a $libs \
	-o "$OUT/perf_bench"
raw=$OUT/raw.txt
: >"$raw"
export BPFRT_FS=$OUT/fs
for r in $(seq 1 "$REPS"); do
	taskset -c "$CPU" "$OUT/perf_bench" "$RUNS" >>"$raw"
done
rm -rf "$BPFRT_FS"

python3 - "$raw" <<'PY'
import statistics, sys
res = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == 'RES':
        res.setdefault(f[1], []).append(float(f[2]))
def cell(k):
    v = res.get(k)
    if not v:
        return 'not measured', None
    return '%.1f [%.1f–%.1f]' % (statistics.median(v), min(v), max(v)), statistics.median(v)
print('## Perf event output: bpf_perf_event_output\n')
print('ns per call of a 16-byte output from a socket filter (64 calls per run, rings emptied')
print('between runs, net of the same loop without the call), in this run:\n')
print('| helper | bpfrt (JIT), median [min–max] | kernel, median [min–max] | bpfrt / kernel |')
print('|---|---|---|---|')
for name, label in (('perf', '`bpf_perf_event_output`, wakeup_events 1 (libbpf default)'),
                    ('perf-batched', '`bpf_perf_event_output`, wakeup_events 64'),
                    ('ringbuf', '`bpf_ringbuf_output` (baseline)')):
    u, um = cell('bpfrt-' + name)
    k, km = cell('kernel-' + name)
    ratio = '%.2f×' % (um / km) if um and km else '–'
    print('| %s | %s | %s | %s |' % (label, u, k, ratio))
print()
print('With a wake-up per sample the kernel queues an irq_work per output (a self-IPI, costly')
print('in a VM); bpfrt writes one byte to the consumer\'s pipe per drain, not per sample.\n')
PY
