#!/bin/bash
# 55-mapdump.sh - `map dump` of a map with BTF (4096 elements of a 15-member struct with
# bitfields, strings, an enum, a union, arrays): `bpfrt map dump` (types from the BTF copy
# in the map file) vs `bpftool map dump` on the same map created in the kernel, text and
# -j, one process per dump, both in this run; also checks the two print the same bytes.
# Median [min-max] over $REPS repetitions, ratio: bpfrt / bpftool.  Needs root and bpftool
# for the kernel side (else bpfrt alone is reported).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-5}
CPU=${CPU:-$(($(nproc) - 1))}
N=4096
OUT=build-bench/mapdump
mkdir -p "$OUT"
[ -x build-release/bpfrt ] || {
	cmake --preset release >/dev/null
	cmake --build build-release -j2 --target bpfrt_cli >/dev/null
}
arch_inc=/usr/include/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
# the value type of tests/progs/map_values.bpf.c, in an array of $N elements
sed -n '/^enum state/,/^struct stats/p' tests/progs/map_values.bpf.c | sed '$d' >"$OUT/types.h"
cat >"$OUT/dump.bpf.c" <<EOF
#include "bpfrt_progs.h"
#include "types.h"
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, unsigned int);
	__type(value, struct flow);
	__uint(max_entries, $N);
} flows SEC(".maps");
SEC("socket")
int touch(struct __sk_buff *skb)
{
	unsigned int k = 1;
	struct flow *f = bpf_map_lookup_elem(&flows, &k);

	return f ? f->proto : 0;
}
char _license[] SEC("license") = "GPL";
EOF
clang -O2 -g -target bpf -I"$arch_inc" -Itests/progs -I"$OUT" -c "$OUT/dump.bpf.c" \
	-o "$OUT/dump.bpf.o"

export BPFRT_FS=$OUT/fs
rm -rf "$BPFRT_FS" && mkdir -p "$BPFRT_FS"
build-release/bpfrt prog load "$OUT/dump.bpf.o" "$BPFRT_FS/prog" pinmaps "$BPFRT_FS/maps" \
	>/dev/null
bpffs=""
if [ "$(id -u)" = 0 ] && command -v bpftool >/dev/null; then
	bpffs=$(mktemp -d /tmp/bpfrt-dumpfs-XXXXXX) # no "." in it: libbpf rewrites those
	if ! mount -t bpf bpf "$bpffs" 2>/dev/null ||
		! bpftool prog load "$OUT/dump.bpf.o" "$bpffs/prog" pinmaps "$bpffs/maps" 2>/dev/null
	then
		umount "$bpffs" 2>/dev/null || true
		rmdir "$bpffs"
		bpffs=""
	fi
fi
trap '[ -z "$bpffs" ] || { umount "$bpffs"; rmdir "$bpffs"; }; rm -rf "$BPFRT_FS"' EXIT
# a few non-zero values, written the same way on both sides
V="7f 00 00 01 90 1f 06 01 65 74 68 30 00 00 00 00 03 00 00 00 a1 0f fb ff 01 02 03 04
   00 00 00 00 ec e5 66 41 e3 ff ff ff 01 00 fe ff 03 00 00 00 07 00 00 00 fd 78 00 00
   00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff"
for k in 1 2 3 100 4095; do
	# shellcheck disable=SC2086
	build-release/bpfrt map update "$BPFRT_FS/maps/flows" key $((k & 255)) $((k >> 8)) 0 0 \
		value hex $V
	# shellcheck disable=SC2086
	[ -z "$bpffs" ] || bpftool map update pinned "$bpffs/maps/flows" \
		key $((k & 255)) $((k >> 8)) 0 0 value hex $V
done
same="not compared (no kernel side)"
if [ -n "$bpffs" ]; then
	same=yes
	for j in "" -j; do
		# shellcheck disable=SC2086
		cmp -s <(build-release/bpfrt $j map dump "$BPFRT_FS/maps/flows") \
			<(bpftool $j map dump pinned "$bpffs/maps/flows") || same=NO
	done
fi

raw=$OUT/raw.txt
: >"$raw"
ms() { # command... -> milliseconds of one run, output discarded
	local t0
	t0=$(date +%s%N)
	taskset -c "$CPU" "$@" >/dev/null
	echo $((($(date +%s%N) - t0) / 1000))
}
for r in $(seq 1 "$REPS"); do
	echo "RES bpfrt-text $(ms build-release/bpfrt map dump "$BPFRT_FS/maps/flows")" >>"$raw"
	echo "RES bpfrt-json $(ms build-release/bpfrt -j map dump "$BPFRT_FS/maps/flows")" >>"$raw"
	if [ -n "$bpffs" ]; then
		echo "RES bpftool-text $(ms bpftool map dump pinned "$bpffs/maps/flows")" >>"$raw"
		echo "RES bpftool-json $(ms bpftool -j map dump pinned "$bpffs/maps/flows")" >>"$raw"
	fi
done

python3 - "$raw" "$N" "$same" <<'PY'
import statistics, sys
raw, n, same = sys.argv[1], int(sys.argv[2]), sys.argv[3]
res = {}
for line in open(raw):
    f = line.split()
    res.setdefault(f[1], []).append(float(f[2]) / 1000)
reps = len(next(iter(res.values())))
print('## Typed map dump (BTF) against bpftool\n')
print(f'`map dump` of an array of {n} `struct flow` (15 members: bitfields, a string, an enum, '
      'a union, arrays; tests/progs/map_values.bpf.c), one process per dump, output to '
      f'/dev/null. bpfrt reads the types from the BTF copy kept in the map file, bpftool from '
      f'the kernel. Median [min-max] of {reps} repetitions; ratio: bpfrt / bpftool in the same '
      f'mode. Same bytes printed by both: {same}.\n')
print('| mode | bpftool ms | bpfrt ms | ratio | bpfrt us/element |')
print('|---|---|---|---|---|')
for mode, label in (('text', 'text (typed JSON-like)'), ('json', '-j (hex + formatted)')):
    b = res.get('bpfrt-' + mode)
    k = res.get('bpftool-' + mode)
    bm = statistics.median(b)
    kcell = f'{statistics.median(k):.1f} [{min(k):.1f}-{max(k):.1f}]' if k else '-'
    ratio = f'{bm / statistics.median(k):.2f}x' if k else '-'
    print(f'| {label} | {kcell} | {bm:.1f} [{min(b):.1f}-{max(b):.1f}] | {ratio} | '
          f'{bm * 1000 / n:.2f} |')
print()
PY
