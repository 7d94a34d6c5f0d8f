#!/bin/sh
# linkclose.sh - close() of a link's last fd under the preload detaches and frees the
# link before it returns, as the kernel's does (linkclose.c: link by id ENOENT at once
# after the close, 10 rounds of each kind; a dup keeps the link; programs and map gone
# by id once the skeleton is destroyed).  Run on the kernel and under `bpfrt exec`, each
# in a network namespace of its own (XDP and tcx on lo); the outputs must be equal.
# Needs root.  Usage: linkclose.sh BPFRT SOURCE_DIR
set -u
BPFRT=$1
SRC=$2/tests/preload
if [ -n "${BPFRT_SANITIZED:-}" ]; then
	echo "skipped: the preload library is built with -fsanitize=$BPFRT_SANITIZED, which cannot be preloaded into the uninstrumented test programs"
	exit 77
fi
for tool in clang bpftool cc unshare ip; do
	command -v $tool >/dev/null 2>&1 || { echo "skipped: $tool not installed"; exit 77; }
done
[ -f /usr/include/bpf/libbpf.h ] || { echo "skipped: libbpf-dev not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skipped: needs root for the kernel run and probe events"; exit 77; }
[ -r /sys/bus/event_source/devices/uprobe/type ] ||
	{ echo "skipped: the kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 77; }
unshare -n true 2>/dev/null || { echo "skipped: cannot create a network namespace"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-linkclose-XXXXXX")
chmod 755 "$T"
export BPFRT_FS="$T/fs"
trap 'rm -rf "$T"' EXIT

ARCH_INC=/usr/include/$(cc -print-multiarch 2>/dev/null)
clang -O2 -g -target bpf -I"$ARCH_INC" -c "$SRC/links.bpf.c" -o "$T/links.bpf.o" &&
	bpftool gen skeleton "$T/links.bpf.o" name links > "$T/links.skel.h" &&
	cc -O1 -Wall -I"$T" -o "$T/linkclose" "$SRC/linkclose.c" -lbpf ||
	{ echo "FAIL: building the test program"; exit 1; }

unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$T/linkclose" > "$T/kernel" 2>&1
unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$BPFRT" exec -- "$T/linkclose" \
	> "$T/bpfrt" 2>&1
want="raw_tp dup: after the first close 1, after the copy's 0"
if ! grep -q '^done$' "$T/kernel" || ! grep -qx "$want" "$T/kernel" ||
   ! grep -qx 'after the skeleton.s destroy, at once: xdp prog 0, tc prog 0' "$T/kernel" ||
   [ "$(grep -c 'attached 10 of 10, link by id ENOENT at once after the close 10$' "$T/kernel")" != 4 ]; then
	echo "FAIL: the kernel run is not what the test expects:"
	cat "$T/kernel"
	exit 1
fi
if ! cmp -s "$T/kernel" "$T/bpfrt"; then
	echo "FAIL: kernel and bpfrt differ:"
	diff "$T/kernel" "$T/bpfrt"
	exit 1
fi
cat "$T/bpfrt"
echo "linkclose: kernel and bpfrt print the same $(wc -l < "$T/bpfrt") lines"
