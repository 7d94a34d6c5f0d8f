#!/bin/sh
# map_fmt_vs_bpftool.sh BPFRT PROGS - `bpfrt map` against the system bpftool on the same
# maps: tests/progs/map_values.bpf.o is loaded into the kernel (bpftool prog load ...
# pinmaps, in a private bpffs) and into bpfrt (bpfrt prog load ... pinmaps), the same keys
# and values are written through each tool, and lookup, dump, getnext and show (text and
# -j) must print the same bytes.  Only what must differ is normalised: ids, the kernel's
# memlock, and the "formatted" keys bpfrt adds to getnext -j.  Hash maps are compared by
# lookup (their dump order is the table's).  Needs root, bpftool and clang's object.
set -u
B=$1
O=$2/map_values.bpf.o
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (bpffs, bpf(2))"; exit 77; }
command -v bpftool >/dev/null || { echo "skipped: no bpftool"; exit 77; }
[ -f "$O" ] || { echo "skipped: $O not built (no clang)"; exit 77; }
K=$(mktemp -d /tmp/bpfrt-kfs-XXXXXX) || exit 1
BPFRT_FS=$(mktemp -d /dev/shm/bpfrt-fmt-XXXXXX) || exit 1
export BPFRT_FS
OUT=$(mktemp -d /tmp/bpfrt-fmt-out-XXXXXX) || exit 1
cleanup() {
	umount "$K" 2>/dev/null
	rm -rf "$K" "$BPFRT_FS" "$OUT"
}
trap cleanup EXIT
mount -t bpf bpf "$K" 2>/dev/null || { echo "skipped: cannot mount a bpffs"; exit 77; }
if ! bpftool prog load "$O" "$K/prog" pinmaps "$K/maps" >"$OUT/kload" 2>&1; then
	echo "skipped: the kernel refused map_values.bpf.o:"; cat "$OUT/kload"; exit 77
fi
$B prog load "$O" "$BPFRT_FS/prog" pinmaps "$BPFRT_FS/maps" >/dev/null || {
	echo "FAIL bpfrt prog load"; exit 1; }

# struct flow_key, then struct flow (tests/progs/map_values.bpf.c); see the .c for fields
K1="01 00 00 00 77 65 62 00"
V1="7f 00 00 01 90 1f 06 01 65 74 68 30 00 00 00 00 03 00 00 00 a1 0f fb ff 01 02 03 04
    00 00 00 00 ec e5 66 41 e3 ff ff ff 01 00 fe ff 03 00 00 00 07 00 00 00 fd 78 00 00
    00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff"
K2="02 00 00 00 01 02 03 04"
V2="ff ff ff ff 01 00 11 00 61 62 01 63 64 65 66 67 09 00 00 00 fe ff 00 80 01 00 00 7f
    00 00 00 00 00 00 00 00 00 00 00 00 00 80 ff 7f 00 00 00 00 ff ff ff ff 80 07 00 00
    78 56 34 12 80 88 ff ff 00 00 00 00 00 00 00 00"
K3="03 00 00 00 00 00 00 00"
V3="00 00 00 00 00 00 00 01 61 22 62 00 7a 7a 7a 7a fe ff ff ff 03 00 ff 7f 00 00 00 00
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
    01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
SV="cb 04 fb 71 1f 01 00 00 ff ff ff ff 00 00 00 00"
TV="0a 00 00 00 14 00 00 00 ff ff ff ff"

# run SIDE: every command through one tool, output in $OUT/SIDE (messages included)
run() {
	if [ "$1" = kernel ]; then T=bpftool; M=$K/maps; D=$(ls -d "$M"/*_data); S=$(ls -d "$M"/*_bss)
		R=$(ls -d "$M"/*_rodata)
	else T=$B; M=$BPFRT_FS/maps; D=$M/.data; S=$M/.bss; R=$M/.rodata
	fi
	{
		$T map update pinned "$M/flows" key hex $K1 value hex $V1
		$T map update pinned "$M/flows" key hex $K2 value hex $V2
		$T map update pinned "$M/flows" key hex $K3 value hex $V3
		$T map update pinned "$M/stats" key hex 01 00 00 00 value hex $SV
		$T map update pinned "$M/triples" key 1 0 0 0 value hex $TV
		for k in "$K1" "$K2" "$K3"; do
			echo "-- lookup $k"
			$T map lookup pinned "$M/flows" key hex $k
			$T -j map lookup pinned "$M/flows" key hex $k
		done
		for m in "$M/stats" "$M/triples" "$D" "$S" "$R"; do
			b=${m##*/}
			echo "-- dump ${b##*[._]}"
			$T map dump pinned "$m"
			$T -j map dump pinned "$m"
		done
		echo "-- lookup a missing key"
		$T map lookup pinned "$M/flows" key hex 09 00 00 00 00 00 00 00
		$T -j map lookup pinned "$M/flows" key hex 09 00 00 00 00 00 00 00
		echo "-- lookup stats"
		$T map lookup pinned "$M/stats" key 1 0 0 0
		$T -j map lookup pinned "$M/stats" key 1 0 0 0
		echo "-- getnext"
		$T map getnext pinned "$M/triples" key 0 0 0 0
		$T -j map getnext pinned "$M/triples" key 0 0 0 0 | sed 's/,"formatted":{.*}}$/}/'
		$T map getnext pinned "$M/triples"
		for m in flows stats triples; do
			echo "-- show $m"
			$T map show pinned "$M/$m"
			$T -j map show pinned "$M/$m"
		done
	} 2>&1 | sed -E 's/^[0-9]+: /ID: /; s/  memlock [0-9]+B//; s/btf_id [0-9]+/btf_id N/;
		s/^\{"id":[0-9]+/{"id":N/; s/,"bytes_memlock":[0-9]+//; s/"btf_id":[0-9]+/"btf_id":N/' \
		>"$OUT/$1"
}
run kernel
run bpfrt
if ! diff -u "$OUT/kernel" "$OUT/bpfrt"; then
	echo "FAIL: bpfrt map output differs from bpftool's (- bpftool, + bpfrt)"
	exit 1
fi
n=$(grep -c '^-- ' "$OUT/bpfrt")
# the comparison must have compared typed output, not two sets of identical errors
for want in '"name": "eth0"' '"st": "GONE"' '"delta": 0xfffb' '"ptr": 0xffff888012345678' \
	'"gtag": "bpfrt"' '"values": [{' '"formatted":{"key":{"id":1,"tag":"web"}' \
	'btf_id N'; do
	grep -qF "$want" "$OUT/bpfrt" || { echo "FAIL: no [$want] in the output"; exit 1; }
done
echo "ok   $n command groups print what bpftool prints"
exit 0
