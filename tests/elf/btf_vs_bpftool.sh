#!/bin/sh
# btf_vs_bpftool.sh BPFRT PROGDIR - `bpfrt btf dump` must print exactly what
# `bpftool btf dump file` prints for every corpus object bpfrt opens (bad_* are refused).
# Exit 77 (skip) without bpftool.
bpfrt=$1
dir=$2
bpftool=$(command -v bpftool || ls /usr/sbin/bpftool 2>/dev/null)
[ -n "$bpftool" ] || { echo "skipped: bpftool not installed"; exit 77; }
n=0
fail=0
for obj in "$dir"/*.bpf.o; do
	case "$(basename "$obj")" in bad_*) continue ;; esac
	"$bpfrt" btf dump "$obj" > "$obj.bpfrt.btf" 2>&1
	"$bpftool" btf dump file "$obj" > "$obj.bpftool.btf" 2>&1
	if ! cmp -s "$obj.bpfrt.btf" "$obj.bpftool.btf"; then
		echo "FAIL $obj:"
		diff "$obj.bpfrt.btf" "$obj.bpftool.btf" | head -10
		fail=$((fail + 1))
	fi
	n=$((n + 1))
done
echo "$n objects compared, $fail differ"
[ "$n" -gt 0 ] && [ "$fail" -eq 0 ]
