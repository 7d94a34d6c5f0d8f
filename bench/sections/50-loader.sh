#!/bin/bash
# 50-loader.sh - object open + load + verify time of the tests/progs corpus: bpfrt's loader
# into bpfrt, the same loader into the kernel, libbpf into the kernel (bench/loader_bench.c),
# and the two command-line tools (`bpfrt prog loadall` vs `bpftool prog loadall`), all in
# this run.  Median [min-max] over $REPS repetitions, ratios to the kernel's libbpf load.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-7}
CPU=${CPU:-$(($(nproc) - 1))}
OUT=build-bench/loader
mkdir -p "$OUT/progs"
[ -f build-release/libbpfrt.a ] || {
	cmake --preset release >/dev/null
	cmake --build build-release -j2 --target bpfrt_static bpfrt_cli >/dev/null
}
[ -x build-release/bpfrt ] || cmake --build build-release -j2 --target bpfrt_cli >/dev/null
arch_inc=/usr/include/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
objs=()
for src in tests/progs/*.bpf.c; do
	name=$(basename "$src" .bpf.c)
	case $name in pinned_map | bad_*) continue ;; esac # pins outlive a pass; bad_* refuse
	clang -O2 -g -target bpf -I"$arch_inc" -Itests/progs -Wno-unused-function -c "$src" \
		-o "$OUT/progs/$name.bpf.o"
	objs+=("$OUT/progs/$name.bpf.o")
done
libs=$(pkg-config --with-path=build-release --static --libs bpfrt |
	sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
extra=""
if pkg-config --exists libbpf; then
	extra="-DHAVE_LIBBPF=1 $(pkg-config --cflags --libs libbpf)"
fi
# shellcheck disable=SC2086
gcc -O2 -std=gnu11 -Wall -Iinclude bench/loader_bench.c build-release/libbpfrt.a $libs $extra \
	-o "$OUT/loader_bench"

raw=$OUT/raw.txt
: >"$raw"
# a private bpffs for bpftool's pins (nothing left behind on /sys/fs/bpf)
bpffs=""
if [ "$(id -u)" = 0 ] && command -v bpftool >/dev/null; then
	bpffs=$(mktemp -d)
	mount -t bpf bpf "$bpffs" 2>/dev/null || { rmdir "$bpffs"; bpffs=""; }
fi
trap '[ -z "$bpffs" ] || { umount "$bpffs"; rmdir "$bpffs"; }' EXIT
for r in $(seq 1 "$REPS"); do
	taskset -c "$CPU" "$OUT/loader_bench" 3 "${objs[@]}" >>"$raw"
	# the command-line tools: one process per object, every program pinned, like loadall
	export BPFRT_FS=$OUT/fs
	rm -rf "$BPFRT_FS" && mkdir -p "$BPFRT_FS"
	t0=$(date +%s%N)
	for o in "${objs[@]}"; do
		taskset -c "$CPU" build-release/bpfrt prog loadall "$o" "$BPFRT_FS/$(basename "$o")" \
			>/dev/null 2>&1 || true
	done
	echo "RES cli-bpfrt $((($(date +%s%N) - t0) / 1000))" >>"$raw"
	if [ -n "$bpffs" ]; then
		t0=$(date +%s%N)
		for o in "${objs[@]}"; do
			taskset -c "$CPU" bpftool prog loadall "$o" "$bpffs/$(basename "$o")" \
				>/dev/null 2>&1 || true
		done
		echo "RES cli-bpftool $((($(date +%s%N) - t0) / 1000))" >>"$raw"
		rm -rf "${bpffs:?}"/*.bpf.o 2>/dev/null || true
	fi
done
rm -rf "$OUT/fs"

python3 - "$raw" "${#objs[@]}" <<'PY'
import statistics, sys
raw, total = sys.argv[1], sys.argv[2]
res, notes = {}, []
for line in open(raw):
    f = line.split()
    if f[0] == 'RES':
        res.setdefault(f[1], []).append(float(f[2]))
    elif line.startswith('NOTE') and line not in notes:
        notes.append(line)
corpus = next((n.split()[2] for n in notes if n.startswith('NOTE corpus')), '?')
base = statistics.median(res['kernel-libbpf']) if 'kernel-libbpf' in res else None
rows = [
    ('kernel-libbpf', 'libbpf 1.x into the kernel (bpf_object__open_file + load)'),
    ('kernel-bpfrt-loader', "bpfrt's loader into the kernel (raw bpf(2))"),
    ('bpfrt', "bpfrt's loader into bpfrt (verifier + JIT)"),
]
print('## ELF loader: open + load + verify of the corpus\n')
print(f'One pass opens, loads (maps created, every program verified) and closes each of the '
      f'{corpus} objects of tests/progs that every side loads ({total} compiled; '
      f'pinned_map and bad_* left out). Median [min-max] of {len(next(iter(res.values())))} '
      'repetitions, each the mean of 3 passes; ratio: time / libbpf into the kernel.\n')
print('| loader | ms per pass | ratio |')
print('|---|---|---|')
for key, label in rows:
    if key not in res:
        continue
    v = [x / 1000 for x in res[key]]
    m = statistics.median(v)
    ratio = f'{statistics.median(res[key]) / base:.2f}x' if base else '-'
    print(f'| {label} | {m:.2f} [{min(v):.2f}-{max(v):.2f}] | {ratio} |')
print()
if 'cli-bpfrt' in res:
    print(f'Command-line tools, one process per object ({total} objects, every program pinned), '
          'whole corpus:\n')
    print('| command | ms | ratio |')
    print('|---|---|---|')
    cb = statistics.median(res['cli-bpftool']) if 'cli-bpftool' in res else None
    for key, label in (('cli-bpftool', '`bpftool prog loadall` (kernel)'),
                       ('cli-bpfrt', '`bpfrt prog loadall` (bpfrt)')):
        if key in res:
            v = [x / 1000 for x in res[key]]
            ratio = f'{statistics.median(res[key]) / cb:.2f}x' if cb else '-'
            print(f'| {label} | {statistics.median(v):.1f} [{min(v):.1f}-{max(v):.1f}] | {ratio} |')
    print()
for n in notes:
    if 'skipped' in n or 'unavailable' in n:
        print('- ' + n[5:].strip())
PY
