#!/bin/sh
# verifier-logdiff.sh DIR - level-2 verifier logs, the kernel's against bpfrt's, as
# `corpus_diff -p GLOB -l DIR` writes them (KEY.kernel.log, KEY.bpfrt.log; #16).  Compares
# each pair whose logs both end with "processed N insns" (both fit the buffers), from the
# first state line ("0: ...") to that line, leaving out what bpfrt does not print or prints
# otherwise by design: the kernel's stack-liveness lines ("(N) frame 0 insn X +live -8",
# "live stack update done"), its SCC enter/exit/backedge lines, "verification time", the
# operand of lddw (map addresses against map[id:N]) and map names in map_value(map=...).
# Prints each differing pair's first LINES (default 4) differing lines, then
# "identical: N of M".
dir=${1:?usage: verifier-logdiff.sh DIR}
lines=${LINES:-4}
tmp=$(mktemp -d /tmp/verifier-logdiff.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
norm() {
	awk '
	!started && /^0: / { started = 1 }
	!started { next }
	/^processed [0-9]+ insns/ { exit }
	/^verification time/ { next }
	/^SCC (enter|exit|backedge)/ { next }
	/^\([0-9,]*\) (frame [0-9]+ insn|live stack update)/ { next }
	{
		sub(/\(18\) r[0-9]+ = .*/, "(18) lddw")
		gsub(/map=[^,)]*,?/, "")
		print
	}' "$1"
}
same=0 total=0
for k in "$dir"/*.kernel.log; do
	b=${k%.kernel.log}.bpfrt.log
	[ -f "$b" ] || continue
	grep -q "^processed" "$k" && grep -q "^processed" "$b" || continue
	total=$((total + 1))
	norm "$k" > "$tmp/k"
	norm "$b" > "$tmp/b"
	if cmp -s "$tmp/k" "$tmp/b"; then
		same=$((same + 1))
	else
		echo "== $(basename "${k%.kernel.log}")"
		diff "$tmp/k" "$tmp/b" | grep '^[<>]' | head -"$lines"
	fi
done
echo "identical: $same of $total"
