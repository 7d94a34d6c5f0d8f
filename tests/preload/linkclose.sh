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
. "$SRC/common.sh"
preload_need netns unshare ip
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-linkclose-XXXXXX")
chmod 755 "$T"
export BPFRT_FS="$T/fs"
trap 'rc=$?; [ $rc = 0 ] || [ $rc = 77 ] || keep_failed linkclose; rm -rf "$T"' EXIT

links_skel "$T" &&
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
same_or_fail "$T/kernel" "$T/bpfrt"
cat "$T/bpfrt"
echo "linkclose: kernel and bpfrt print the same $(wc -l < "$T/bpfrt") lines"
