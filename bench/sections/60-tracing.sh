#!/bin/bash
# 60-tracing.sh - tracing costs (bench/trace_bench.c): ns per hit of an in-application
# probe (BPFRT_PROBE) with nothing attached and with an empty program attached, against
# the same loop without a probe; and the kfree_skb events per second samples/dropmon keeps
# up with while UDP datagrams go to a closed port of 127.0.0.1 as fast as one thread can
# send them (needs root and tracefs; the drops part is not pinned: the sender and the
# link thread need a CPU each).  Median [min-max] over $REPS repetitions.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-7}
CPU=${CPU:-$(($(nproc) - 1))}
HITS=${HITS:-20000000}
DROP_SECS=${DROP_SECS:-3}
OUT=build-bench/trace
mkdir -p "$OUT"
[ -f build-release/libbpfrt.a ] || {
	cmake --preset release >/dev/null
	cmake --build build-release -j2 --target bpfrt_static >/dev/null
}
cmake --build build-release -j2 --target sample_dropmon >/dev/null 2>&1 || true
libs=$(pkg-config --with-path=build-release --static --libs bpfrt |
	sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
# shellcheck disable=SC2086
gcc -O2 -std=gnu11 -Wall -Iinclude bench/trace_bench.c build-release/libbpfrt.a $libs \
	-o "$OUT/trace_bench"
obj=build-release/samples/dropmon/dropmon.bpf.o
raw=$OUT/raw.txt
: >"$raw"
export BPFRT_FS=$OUT/fs
for r in $(seq 1 "$REPS"); do
	taskset -c "$CPU" "$OUT/trace_bench" probe "$HITS" >>"$raw"
done
drops=0
if [ "$(id -u)" = 0 ] && [ -r "$obj" ]; then
	for r in $(seq 1 "$REPS"); do
		"$OUT/trace_bench" drops "$DROP_SECS" "$obj" >>"$raw" && drops=1
	done
fi
rm -rf "$BPFRT_FS"

python3 - "$raw" "$drops" "$HITS" "$DROP_SECS" <<'PY'
import statistics, sys
raw, drops, hits, secs = sys.argv[1], sys.argv[2] == '1', int(sys.argv[3]), sys.argv[4]
res = {}
for line in open(raw):
    f = line.split()
    if f and f[0] == 'RES':
        res.setdefault(f[1], []).append(float(f[2]))
def stat(v):
    return statistics.median(v), min(v), max(v)
print('## Tracing: in-application probes and kfree_skb events\n')
print('Per hit of `BPFRT_PROBE("bench:hit", i, n)` in a loop of %d iterations (JIT engine),' % hits)
print('against the same loop without the probe, in this run.\n')
print('| loop body | ns per iteration, median [min–max] | over the loop without a probe |')
print('|---|---|---|')
base = statistics.median(res['probe-baseline'])
for key, label in (('probe-baseline', 'no probe (baseline)'),
                   ('probe-detached', 'probe, nothing attached'),
                   ('probe-attached', 'probe, empty program attached')):
    m, lo, hi = stat(res[key])
    print('| %s | %.2f [%.2f–%.2f] | %+.2f ns |' % (label, m, lo, hi, m - base))
print()
if not drops:
    print('kfree_skb rate: not measured (needs root, tracefs and samples/dropmon built).\n')
    sys.exit(0)
rate_sent = [s / t for s, t in zip(res['drops-sent'], res['drops-secs'])]
rate_seen = [c / t for c, t in zip(res['drops-counted'], res['drops-secs'])]
frac = [100.0 * c / s for c, s in zip(res['drops-counted'], res['drops-sent'])]
print('samples/dropmon attached to `skb:kfree_skb` while one thread sends 1-byte UDP datagrams')
print('to a closed port of 127.0.0.1 for %s s (each is dropped with reason NO_SOCKET):\n' % secs)
print('| measurement | median [min–max] |')
print('|---|---|')
m, lo, hi = stat(rate_sent)
print('| drops generated per second | %.0f [%.0f–%.0f] |' % (m, lo, hi))
m, lo, hi = stat(rate_seen)
print('| NO_SOCKET drops dropmon counted per second | %.0f [%.0f–%.0f] |' % (m, lo, hi))
m, lo, hi = stat(frac)
print('| counted / generated | %.1f%% [%.1f–%.1f] |' % (m, lo, hi))
m, lo, hi = stat(res['drops-lost'])
print('| records lost by the perf rings | %.0f [%.0f–%.0f] |' % (m, lo, hi))
m, lo, hi = stat([e / t for e, t in zip(res['drops-events'], res['drops-secs'])])
print('| kfree_skb events run per second (all causes) | %.0f [%.0f–%.0f] |' % (m, lo, hi))
print()
PY
