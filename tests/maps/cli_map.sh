#!/bin/sh
# cli_map.sh BPFRT [PROGS] - "bpfrt map" on pinned maps: create, update (bpftool byte
# syntax, hex, flags), lookup, getnext, delete, dump (text and JSON), show, queue push/pop,
# errors; and a second process (this shell's next command) sees what the previous one
# wrote.  With PROGS (the compiled tests/progs), maps with BTF: typed text and "formatted"
# JSON, from a process other than the loader, and raw bytes when the BTF copy is damaged.
set -u
B=$1
P=${2:-}
BPFRT_FS=$(mktemp -d /dev/shm/bpfrt-cli-XXXXXX) || exit 77
export BPFRT_FS
trap 'rm -rf "$BPFRT_FS"' EXIT
fail=0
check() { # name expected actual
	if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
M=$BPFRT_FS/m
$B map create $M type hash key 4 value 8 entries 4 name counts || fail=1
$B map update $M key 1 0 0 0 value 0x2a 0 0 0 0 0 0 0 || fail=1
$B map update pinned $M key hex 02 00 00 00 value hex 01 02 03 04 05 06 07 08 noexist || fail=1
check "lookup" "key: 01 00 00 00  value: 2a 00 00 00 00 00 00 00" "$($B map lookup $M key 1 0 0 0)"
check "lookup json" '{"key":["0x02","0x00","0x00","0x00"],"value":["0x01","0x02","0x03","0x04","0x05","0x06","0x07","0x08"]}' \
	"$($B map -j lookup $M key 2 0 0 0)"
check "noexist on a present key fails" "bpfrt: map update: File exists" \
	"$($B map update $M key 1 0 0 0 value 0 0 0 0 0 0 0 0 noexist 2>&1)"
check "exist on a missing key fails" "bpfrt: map update: No such file or directory" \
	"$($B map update $M key 7 0 0 0 value 0 0 0 0 0 0 0 0 exist 2>&1)"
check "dump count" "Found 2 elements" "$($B map dump $M | tail -1)"
check "dump json entries" "2" "$($B map -j dump $M | grep -o '"key"' | wc -l | tr -d ' ')"
check "show" "hash  name counts  flags 0x0" "$($B map show $M | head -1 | cut -d: -f2- | sed 's/^ //')"
check "show json" '"type":"hash","name":"counts","flags":0,"bytes_key":4,"bytes_value":8,"max_entries":4,"frozen":0}' \
	"$($B map -j show $M | cut -d, -f2-)"
first=$($B map getnext $M)
check "getnext gives a key" "key: None|next key:" "$(echo "$first" | head -2 | tr '\n' '|' | sed 's/|$//')"
$B map delete $M key 1 0 0 0 || fail=1
check "deleted" "key:
01 00 00 00

Not found" "$($B map lookup $M key 1 0 0 0 2>&1)"
check "deleted, json" "null" "$($B map -j lookup $M key 1 0 0 0 2>&1)"
check "deleted fails" "1" "$($B map lookup $M key 1 0 0 0 >/dev/null 2>&1; echo $?)"
check "wrong key length" "bpfrt: map: key: 3 bytes given, the map's key has 4" \
	"$($B map lookup $M key 1 0 0 2>&1)"
check "bad byte" "bpfrt: map: key: '300' is not a byte" "$($B map lookup $M key 300 0 0 0 2>&1)"
check "missing map" "1" "$($B map dump $BPFRT_FS/nope >/dev/null 2>&1; echo $?)"
Q=$BPFRT_FS/q
$B map create $Q type queue key 0 value 4 entries 2 || fail=1
$B map push $Q value 1 2 3 4 || fail=1
$B map push $Q value 5 6 7 8 || fail=1
check "queue full" "bpfrt: map push: Argument list too long" "$($B map push $Q value 0 0 0 0 2>&1)"
check "pop" "value: 01 02 03 04" "$($B map pop $Q)"
check "peek" "value: 05 06 07 08" "$($B map peek $Q)"
$B map pin $M $BPFRT_FS/m2 || fail=1
check "second pin sees the map" "Found 1 element" "$($B map dump $BPFRT_FS/m2 | tail -1)"
check "help" "0" "$($B map --help >/dev/null; echo $?)"
L=$BPFRT_FS/long
$B map create $L type array key 4 value 20 entries 1 || fail=1
check "long values break lines as bpftool" "key:
00 00 00 00
value:
00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
00 00 00 00
Found 1 element" "$($B map dump $L)"

O=$P/map_values.bpf.o
if [ -n "$P" ] && [ -f "$O" ]; then
	D=$BPFRT_FS/typed
	$B prog load "$O" "$BPFRT_FS/prog" pinmaps "$D" >/dev/null || fail=1
	$B map update "$D/triples" key 1 0 0 0 value 7 0 0 0 8 0 0 0 9 0 0 0 || fail=1
	check "typed lookup" '{
    "key": 1,
    "value": [7,8,9
    ]
}' "$($B map lookup "$D/triples" key 1 0 0 0)"
	check "typed json" '{"key":["0x01","0x00","0x00","0x00"],"value":["0x07","0x00","0x00","0x00","0x08","0x00","0x00","0x00","0x09","0x00","0x00","0x00"],"formatted":{"key":1,"value":[7,8,9]}}' \
		"$($B map -j lookup "$D/triples" key 1 0 0 0)"
	check "global data" '[{
        "value": {
            ".rodata": [{
                    "gtag": "bpfrt"
                }
            ]
        }
    }
]' "$($B map dump "$D/.rodata")"
	check "show btf_id" "btf_id" "$($B map show "$D/flows" | tail -1 | cut -f2 | cut -d' ' -f1)"
	check "getnext -j formatted" '"formatted":{"key":0,"next_key":1}}' \
		"$($B map -j getnext "$D/triples" key 0 0 0 0 | grep -o '"formatted".*')"
	# scribble over the BTF copy (it starts at the page after the map's region, or at
	# the 8-byte boundary after it when the header's tail_packed, at offset 280, is set;
	# the header is the file's last 320 bytes when its hdr_at_end, at 284, is set, else
	# its last page's start: src/obj/obj.h)
	f=$D/triples
	sz=$(stat -c %s "$f")
	h=$((sz - 320))
	[ "$(od -An -t u4 -j $((h + 284)) -N 4 "$f" | tr -d ' ')" = 1 ] || h=$((sz - 4096))
	data=$(od -An -t u8 -j $((h + 24)) -N 8 "$f" | tr -d ' ')
	packed=$(od -An -t u4 -j $((h + 280)) -N 4 "$f" | tr -d ' ')
	off=$(( (data + 4095) / 4096 * 4096 ))
	[ "$packed" = 0 ] || off=$(( (data + 7) / 8 * 8 ))
	printf 'garbage!garbage!garbage!' | dd of="$f" bs=1 seek=$off conv=notrunc 2>/dev/null
	check "damaged BTF: raw bytes" "key: 01 00 00 00  value: 07 00 00 00 08 00 00 00  09 00 00 00" \
		"$($B map lookup "$f" key 1 0 0 0 2>/dev/null)"
	check "damaged BTF: a note" "bpfrt: map: $f: BTF unusable, printing raw bytes" \
		"$($B map lookup "$f" key 1 0 0 0 2>&1 >/dev/null | cut -d: -f1-4)"
fi
exit $fail
