#!/bin/bash
# bench/sections/20-maps.sh - maps: user-space lookup/update (kernel bpf(2), bpfrt fd
# wrappers, bpfrt map handles), in-program lookup + atomic add through BPF_PROG_TEST_RUN
# (bpfrt vs the kernel JIT, net of each side's empty program), and 1 -> 2 thread throughput.
# Prints one markdown section (contract: bench/sections/README.md).  Measurements: bench/maps.c.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-5}
CPU=${CPU:-$(($(nproc) - 1))}
MS=${MAPS_BENCH_MS:-200}
OUT=build-bench
mkdir -p "$OUT"

if [ ! -f build-release/libbpfrt.a ]; then
	cmake --preset release >/dev/null
	cmake --build build-release -j2 --target bpfrt_static >/dev/null
fi
libs=$(pkg-config --with-path=build-release --static --libs bpfrt |
	sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
# shellcheck disable=SC2086
gcc -O2 -std=gnu11 -Wall -Wextra -Iinclude bench/maps.c build-release/libbpfrt.a $libs \
	-lpthread -o "$OUT/maps" >&2

raw=$OUT/maps-raw.txt
: >"$raw"
for r in $(seq 1 "$REPS"); do
	echo "== maps repetition $r/$REPS" >&2
	taskset -c "$CPU" "$OUT/maps" "$MS" user >>"$raw"
	taskset -c "$CPU" "$OUT/maps" "$MS" prog >>"$raw"
	# two threads need two CPUs: not pinned to one
	"$OUT/maps" "$MS" mt >>"$raw"
done
grep '^NOTE' "$raw" | sort -u >&2 || true

python3 - "$raw" "$REPS" <<'EOF'
import statistics, sys
vals = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3 and f[0] == 'RES':
        vals.setdefault(f[1], []).append(float(f[2]))
reps = sys.argv[2]

def med(k):
    v = vals.get(k)
    return statistics.median(v) if v else None

def cell(k, fmt='{:.0f}'):
    v = vals.get(k)
    if not v:
        return 'n/a'
    return (fmt + ' [' + fmt + '–' + fmt + ']').format(statistics.median(v), min(v), max(v))

def ratio(a, b):
    # median of the per-repetition ratios a/b, with their range
    va, vb = vals.get(a), vals.get(b)
    if not va or not vb:
        return 'n/a'
    r = [x / y for x, y in zip(va, vb) if y > 0]
    if not r:
        return 'n/a'
    return '{:.1f}× [{:.1f}–{:.1f}]'.format(statistics.median(r), min(r), max(r))

print('## Maps (bench/sections/20-maps.sh)')
print()
print('Hash map, 4-byte key, 8-byte value, 100,000 entries; median [min–max] over %s '
      'repetitions, all measured in the same run; ns per operation in thread CPU time, '
      'pinned to one CPU. "random": keys drawn over the whole map (each operation misses '
      'the caches; bpfrt fetches a bucket and its home element together, see '
      'docs/MEMORY_MODEL.md); "hot": 64 keys (the path\'s own cost). Speed-up = kernel ns / '
      'bpfrt ns.' % reps)
print()
print('| operation | kernel bpf(2) | bpfrt fd wrappers | speed-up | bpfrt map handle | speed-up |')
print('|---|---|---|---|---|---|')
for op in ('lookup_random', 'update_random', 'lookup_hot', 'update_hot'):
    print('| %s | %s | %s | %s | %s | %s |' % (
        op.replace('_', ' '), cell(op + '_kernel'), cell(op + '_bpfrt_fd'),
        ratio(op + '_kernel', op + '_bpfrt_fd'), cell(op + '_bpfrt_handle'),
        ratio(op + '_kernel', op + '_bpfrt_handle')))
print()
print('Memory floor of random keys: one dependent access per step of a random pointer chase '
      'over as many bytes as the bpfrt map (5.8 MB), same run: %s ns. Every random-key '
      'operation needs at least one such access (bpfrt: one access time for a key at its '
      'home element), so the best possible random-key speed-up is about kernel / floor: '
      'lookup %s, update %s.' % (cell('chase_map_bytes'), ratio('lookup_random_kernel', 'chase_map_bytes'),
                      ratio('update_random_kernel', 'chase_map_bytes')))
print()
print('In-program lookup + atomic add (XDP program: `bpf_map_lookup_elem` of one key of the '
      'same-shaped map, `lock add` on the value) through BPF_PROG_TEST_RUN, repeat 200,000, '
      'ns per run as the test run reports it (both sides count only the time the program ran), '
      'net of the same engine\'s empty program. Ratio = kernel net / bpfrt net (> 1: bpfrt '
      'faster).')
print()
print('| engine | full | empty program | net |')
print('|---|---|---|---|')
for e, name in (('kernel', 'kernel JIT'), ('bpfrt', 'bpfrt (default engine)')):
    print('| %s | %s | %s | %s |' % (name, cell('prog_full_' + e), cell('prog_empty_' + e),
                                    cell('prog_net_' + e)))
print('| ratio | | | %s |' % ratio('prog_net_kernel', 'prog_net_bpfrt'))
print()
print('Throughput, lookups and updates alternating on random keys of the 100k map, wall '
      'clock, 1 and 2 threads (2 CPUs, shared with the rest of the machine).')
print()
print('| path | 1 thread (ops/s) | 2 threads (ops/s) | 2 / 1 |')
print('|---|---|---|---|')
for p, name in (('kernel', 'kernel bpf(2)'), ('bpfrt_handle', 'bpfrt map handle')):
    print('| %s | %s | %s | %s |' % (name, cell('mt1_' + p), cell('mt2_' + p),
                                    ratio('mt2_' + p, 'mt1_' + p)))
EOF
