#!/bin/sh
# build.sh OUT CLANG - the CO-RE corpus: vmlinux.h generated from the running kernel's BTF
# with bpftool, then every *.bpf.c of this folder compiled against it into OUT.  Exit 77
# with "skipped: <reason>" when the kernel has no BTF or a tool is missing.
set -e
out=$1
clang=${2:-clang}
src=$(dirname "$0")
[ -r /sys/kernel/btf/vmlinux ] || { echo "skipped: no /sys/kernel/btf/vmlinux"; exit 77; }
command -v bpftool >/dev/null 2>&1 || { echo "skipped: bpftool not installed"; exit 77; }
command -v "$clang" >/dev/null 2>&1 || { echo "skipped: clang not installed"; exit 77; }
[ -r /usr/include/bpf/bpf_core_read.h ] || { echo "skipped: libbpf-dev headers missing"; exit 77; }
mkdir -p "$out"
if [ ! -s "$out/vmlinux.h" ] || [ /sys/kernel/btf/vmlinux -nt "$out/vmlinux.h" ]; then
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$out/vmlinux.h.tmp"
	mv "$out/vmlinux.h.tmp" "$out/vmlinux.h"
fi
for c in "$src"/*.bpf.c; do
	o="$out/$(basename "$c" .c).o"
	if [ ! -s "$o" ] || [ "$c" -nt "$o" ] || [ "$out/vmlinux.h" -nt "$o" ]; then
		"$clang" -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$out" -c "$c" -o "$o"
	fi
done
