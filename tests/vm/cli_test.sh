#!/bin/sh
# cli_test.sh - `bpfrt run` and `bpfrt conformance-plugin`: every input format, every
# engine, JSON output, faults and exit codes; with the conformance suite present, the
# plugin runs every file of it the way the upstream runner does.
# Usage: cli_test.sh BPFRT CONFORMANCE_DIR
B=$1
SUITE=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

# check NAME EXPECTED COMMAND...: stdout+stderr of COMMAND must equal EXPECTED
check()
{
	name=$1
	want=$2
	shift 2
	got=$("$@" 2>&1)
	if [ "$got" = "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		printf 'FAIL [%s]: expected "%s", got "%s"\n' "$name" "$want" "$got"
	fi
}

# status NAME EXPECTED COMMAND...: exit status of COMMAND
status()
{
	name=$1
	want=$2
	shift 2
	"$@" >/dev/null 2>&1
	got=$?
	if [ "$got" = "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		printf 'FAIL [%s]: expected status %s, got %s\n' "$name" "$want" "$got"
	fi
}

printf 'mov %%r0, %%r2\nldxb %%r3, [%%r1+1]\nadd %%r0, %%r3\nexit\n' >"$T/p.s"
printf 'b7 00 00 00 07 00 00 00\n95 00 00 00 00 00 00 00\n' >"$T/p.hex"
printf '\267\000\000\000\007\000\000\000\225\000\000\000\000\000\000\000' >"$T/p.bin"
printf '\001\002\003' >"$T/mem.bin"
printf 'ldxdw %%r0, [%%r1+64]\nexit\n' >"$T/oob.s"
printf -- '-- asm\nmov %%r1, 0\ncall 5\nmov %%r0, 2\nexit\n-- result\n0x0\n' >"$T/unwind.data"
printf -- '-- asm\nldxb %%r0, [%%r1+2]\nexit\n-- mem\n01 02 03\n-- result\n0x3\n' >"$T/mem.data"

for e in interp checked; do
	check "asm $e" "r0 = 0x5 (5)" "$B" run "$T/p.s" --mem "01 02 03" --engine $e
	check "hex $e" "r0 = 0x7 (7)" "$B" run "$T/p.hex" --engine $e
	check "raw $e" "r0 = 0x7 (7)" "$B" run "$T/p.bin" --engine $e
	check "mem-file $e" "r0 = 0x5 (5)" "$B" run "$T/p.s" --mem-file "$T/mem.bin" --engine $e
	check "data $e" "r0 = 0x3 (3)" "$B" run "$T/mem.data" --engine $e
	check "data unwind $e" "r0 = 0x0 (0)" "$B" run "$T/unwind.data" --engine $e
done
check "json" '{"engine": "checked", "r0": 5, "r0_hex": "0x5"}' "$B" run -j "$T/p.s" --mem "010203"
check "fault" "bpfrt: run: insn 0: read of 8 bytes at r1+64 outside any region" \
	"$B" run "$T/oob.s" --mem "00"
check "fault json" '{"engine": "checked", "errno": 14, "error": "insn 0: read of 8 bytes at r1+64 outside any region"}' \
	"$B" run -j "$T/oob.s" --mem "00"
status "fault status" 1 "$B" run "$T/oob.s"
status "bad engine" 1 "$B" run "$T/p.s" --engine warp
status "no file" 2 "$B" run
status "missing file" 1 "$B" run "$T/none.s"
status "help" 0 "$B" run --help
status "plugin help" 0 "$B" conformance-plugin --help
check "repeat prints time" "2" sh -c "'$B' run '$T/p.s' --mem 010203 --repeat 50 | wc -l"
# strtoul() read -1 as 2^64-1 and saturated past 2^64: runs that never ended (timeout
# makes the old behaviour a failure instead of a hang)
for n in -1 18446744073709551616 4294967296 0 12x ""; do
	check "repeat '$n' rejected" \
		"bpfrt: run: --repeat: '$n' is not a count from 1 to 4294967295" \
		timeout 5 "$B" run "$T/p.s" --mem 010203 --repeat "$n"
done
check "repeat max accepted" "r0 = 0x5 (5)" "$B" run "$T/p.s" --mem 010203 --repeat 1

# plugin protocol
check "plugin stdin" "7" sh -c "'$B' conformance-plugin < '$T/p.hex'"
check "plugin --program" "5" "$B" conformance-plugin --program \
	"bf 20 00 00 00 00 00 00 71 13 01 00 00 00 00 00 0f 30 00 00 00 00 00 00 95 00 00 00 00 00 00 00" \
	"01 02 03"
check "plugin fault text" "insn 0: read of 8 bytes at r1+64 outside any region" \
	"$B" conformance-plugin --program "79 10 40 00 00 00 00 00 95 00 00 00 00 00 00 00" "00"
status "plugin fault status" 1 "$B" conformance-plugin --program "79 10 40 00 00 00 00 00 95 00 00 00 00 00 00 00"
check "plugin bad opcode" "insn 0: unknown opcode (code 0xff dst r0 src r0 off 0 imm 0)" \
	"$B" conformance-plugin --program "ff 00 00 00 00 00 00 00"

# every conformance file through `run` (the plugin shares the code path after parsing)
if [ -d "$SUITE/tests" ]; then
	for f in "$SUITE"/tests/*.data; do
		want=$(sed -n '/^-- result/{n;p;}' "$f" | tr -d ' \r')
		[ -n "$want" ] || continue
		got=$("$B" run -j "$f" --engine interp | sed -n 's/.*"r0_hex": "\([^"]*\)".*/\1/p')
		if [ "$(printf '%d' "$got" 2>/dev/null)" = "$(printf '%d' "$want" 2>/dev/null)" ] ||
			[ "$got" = "$want" ]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL [$(basename "$f")]: expected $want, got $got"
		fi
	done
else
	echo "skipped: conformance files through run (suite not found at $SUITE/tests)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
