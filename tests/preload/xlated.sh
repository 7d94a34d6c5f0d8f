#!/bin/sh
# xlated.sh - `bpftool prog dump xlated` (Debian's, unmodified) of every program of the
# C corpus (build/progs/*.bpf.o) loaded with `bpftool prog loadall` on the kernel and
# under `bpfrt exec`: the same text once map ids and kernel addresses after '#' are
# normalised.  Source lines
# and function signatures are compared too.  Programs listed in xlated_known.txt differ
# for reasons docs/STATUS.md #18 gives; any other difference fails, as does a known one
# that became equal (take it off the list).
# Needs root.  Usage: xlated.sh BPFRT SOURCE_DIR PROGS_DIR
set -u

# one side: load each object, dump each program's xlated into DIR/SIDE/OBJ.PROG
# (xlated.sh --dump DIR PROGS SIDE FS [PREFIX...]: FS is where the side's pins are seen
# from this shell; run in the kernel's own mount namespace)
dump_all() {
	dir=$1 progs=$2 side=$3 fs=$4
	shift 4
	mkdir -p "$dir/$side"
	for o in "$progs"/*.bpf.o; do
		b=$(basename "$o" .bpf.o)
		d=/sys/fs/bpf/bpfrt_xl_$b
		"$@" bpftool prog loadall "$o" "$d" >/dev/null 2>&1 || { "$@" rm -rf "$d"; continue; }
		for pin in $(ls "$fs/${d#/sys/fs/bpf/}" 2>/dev/null); do
			"$@" bpftool prog dump xlated pinned "$d/$pin" > "$dir/$side/$b.$pin" 2>&1
		done
		"$@" rm -rf "$d"
		rm -rf "${fs:?}/${d#/sys/fs/bpf/}"
	done
}
if [ "${1:-}" = --dump ]; then
	shift
	dump_all "$@"
	exit 0
fi

BPFRT=$1
SRC=$2/tests/preload
PROGS=$3
if [ -n "${BPFRT_SANITIZED:-}" ]; then
	echo "skipped: the preload library is built with -fsanitize=$BPFRT_SANITIZED, which cannot be preloaded into bpftool"
	exit 77
fi
for tool in bpftool unshare; do
	command -v $tool >/dev/null 2>&1 || { echo "skipped: $tool not installed"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "skipped: needs root for the kernel run"; exit 77; }
ls "$PROGS"/*.bpf.o >/dev/null 2>&1 || { echo "skipped: no compiled corpus in $PROGS (clang?)"; exit 77; }
unshare -m --propagation private true 2>/dev/null ||
	{ echo "skipped: no mount namespace for a private bpffs"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-xlated-XXXXXX")
export BPFRT_FS="$T/fs"
trap 'rm -rf "$T"' EXIT
unshare -m --propagation private sh -c "mount -t bpf bpf /sys/fs/bpf &&
	exec sh '$0' --dump '$T' '$PROGS' kernel /sys/fs/bpf"
sh "$0" --dump "$T" "$PROGS" bpfrt "$BPFRT_FS" "$BPFRT" exec --

norm() {
	sed -E 's/map\[id:[0-9]+\]/map[id:N]/g; s/(call [^#]*)#.*$/\1#A/' "$1"
}
same=0 differ=0 fails=0 known=0
for k in "$T"/kernel/*; do
	[ -e "$k" ] || continue
	name=$(basename "$k")
	b="$T/bpfrt/$name"
	if [ ! -e "$b" ]; then
		echo "$name: not loaded under bpfrt"
		continue
	fi
	if norm "$k" | cmp -s - "$b.n" 2>/dev/null || { norm "$b" > "$b.n"; norm "$k" | cmp -s - "$b.n"; }; then
		same=$((same + 1))
		if grep -qx "$name" "$SRC/xlated_known.txt"; then
			echo "FAIL: $name is equal now: take it off xlated_known.txt" >&2
			fails=$((fails + 1))
		fi
	else
		differ=$((differ + 1))
		if grep -qx "$name" "$SRC/xlated_known.txt"; then
			known=$((known + 1))
		else
			echo "FAIL: $name differs:" >&2
			norm "$k" | diff - "$b.n" | head -20 >&2
			fails=$((fails + 1))
		fi
	fi
done
echo "xlated: $same programs equal, $differ differ ($known known)"
[ $((same + differ)) -gt 0 ] || { echo "FAIL: nothing compared"; exit 1; }
[ "$fails" = 0 ] || exit 1
echo "ok"
