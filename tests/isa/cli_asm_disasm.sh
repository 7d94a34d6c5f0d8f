#!/bin/sh
# cli_asm_disasm.sh BPFRT SHARED_DIR - the asm and disasm commands: asm -> disasm (asm
# style) -> asm gives the same bytes for a sample of the conformance suite; hex and
# raw input give the same output; errors go to stderr with a non-zero status.
set -u
bpfrt=$1
suite=${BPFRT_CONFORMANCE_DIR:-$2/conformance}/tests
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }

# expect STATUS CMD... : run CMD, compare its exit status
expect() {
	want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else fail "$* exited $got, expected $want"; fi
}

# --- help and usage errors
expect 0 "$bpfrt" asm --help
grep -q '^Usage: bpfrt asm' "$tmp/out" && ok || fail "asm --help text"
expect 0 "$bpfrt" disasm --help
grep -q '^Usage: bpfrt disasm' "$tmp/out" && ok || fail "disasm --help text"
expect 2 "$bpfrt" asm
expect 2 "$bpfrt" disasm --bogus x
expect 2 "$bpfrt" disasm --style intel x

# --- a NUL byte: refused with its offset (the offset was once taken from freed text)
printf 'exit\n\000exit\n' >"$tmp/nul.s"
expect 1 "$bpfrt" asm "$tmp/nul.s"
grep -qx "bpfrt: asm: $tmp/nul.s: NUL byte at offset 5: not a text file" "$tmp/err" && ok ||
	fail "asm NUL byte message: $(cat "$tmp/err")"

# --- unverified runs: the suite's negative error.data (or %r0, %r10: r0 never written) is
# refused by `bpfrt run` and the conformance plugin as by every runtime
neg=${BPFRT_CONFORMANCE_DIR:-$2/conformance}/negative/error.data
if [ -f "$neg" ]; then
	expect 1 "$bpfrt" run "$neg"
	grep -q 'insn 0: r0 is read before it is written' "$tmp/err" && ok ||
		fail "run error.data message: $(cat "$tmp/err")"
	printf 'af a0 00 00 00 00 00 00 95 00 00 00 00 00 00 00' >"$tmp/neg.hex"
	expect 1 "$bpfrt" conformance-plugin --program "$(cat "$tmp/neg.hex")"
fi

# --- a small program, by hand
printf 'mov %%r0, 42\nlddw %%r1, 0x1122334455667788\njeq %%r1, 0, +1\nexit\nexit\n' >"$tmp/p.s"
expect 0 "$bpfrt" asm "$tmp/p.s" -o "$tmp/p.bin"
[ "$(wc -c <"$tmp/p.bin")" -eq 48 ] && ok || fail "p.bin is not 48 bytes"
expect 0 "$bpfrt" asm --hex "$tmp/p.s"
head -1 "$tmp/out" | grep -qx 'b7 00 00 00 2a 00 00 00' && ok || fail "asm --hex first line"
cp "$tmp/out" "$tmp/p.hex"
expect 0 "$bpfrt" disasm "$tmp/p.bin"
cat >"$tmp/want" <<'EOT'
0: (b7) r0 = 42
1: (18) r1 = 0x1122334455667788
3: (15) if r1 == 0x0 goto pc+1
4: (95) exit
5: (95) exit
EOT
cmp -s "$tmp/out" "$tmp/want" && ok || { fail "kernel style output"; diff "$tmp/want" "$tmp/out" >&2; }
cp "$tmp/out" "$tmp/raw.out"
expect 0 "$bpfrt" disasm "$tmp/p.hex"
cmp -s "$tmp/out" "$tmp/raw.out" && ok || fail "hex input disassembles differently from raw"
expect 0 "$bpfrt" disasm --hex - <"$tmp/p.hex"
cmp -s "$tmp/out" "$tmp/raw.out" && ok || fail "--hex from stdin"
expect 0 "$bpfrt" disasm -j "$tmp/p.bin"
grep -q '"idx": 1, "code": 24, "dst": 1, "src": 0, "off": 0, "imm": 1432778632' "$tmp/out" &&
	ok || fail "json lddw row"
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); assert len(a)==5 and a[4]["text"]=="(95) exit" and a[2]["idx"]==3' \
		"$tmp/out" && ok || fail "json does not parse"
fi

printf 'top: jne %%r1, 0, out\nlddw %%r2, 5\nja top\ncall local top\nja32 out\nout:\nexit\n' >"$tmp/l.s"
expect 0 "$bpfrt" asm "$tmp/l.s" -o "$tmp/l.bin"
expect 0 "$bpfrt" disasm --style asm --labels "$tmp/l.bin"
printf 'L0:\njne %%r1, 0, L6\nlddw %%r2, 0x5\nja L0\ncall local L0\nja32 L6\nL6:\nexit\n' >"$tmp/want"
cmp -s "$tmp/out" "$tmp/want" && ok || { fail "--labels output"; diff "$tmp/want" "$tmp/out" >&2; }

# --- errors: message on stderr naming the place, status 1
printf 'mov %%r0, 1\nor %%r0, %%r50\nexit\n' >"$tmp/bad.s"
expect 1 "$bpfrt" asm "$tmp/bad.s"
grep -q "bad.s:2:9: Invalid register '%r50'" "$tmp/err" && ok || fail "asm error text: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] && ok || fail "asm wrote output despite the error"
expect 1 "$bpfrt" asm "$tmp/nonexistent.s"
printf 'ff 00 00 00 00 00 00 00\n95 00 00 00 00 00 00 00\n' >"$tmp/badop.hex"
expect 1 "$bpfrt" disasm "$tmp/badop.hex"
grep -q 'insn 0: unknown opcode' "$tmp/err" && ok || fail "disasm error text: $(cat "$tmp/err")"
grep -q '^1: (95) exit' "$tmp/out" && ok || fail "disasm goes on after a bad instruction"
printf '18 00 00 00 00 00 00 00\n' >"$tmp/trunc.hex"
expect 1 "$bpfrt" disasm "$tmp/trunc.hex"
grep -q 'insn 0: lddw is missing its second slot' "$tmp/err" && ok || fail "truncated lddw"
printf 'b7 00 00' >"$tmp/short.hex"
expect 1 "$bpfrt" disasm "$tmp/short.hex"
grep -q '3 bytes is not a whole number' "$tmp/err" && ok || fail "partial instruction"
: >"$tmp/empty"
expect 1 "$bpfrt" disasm "$tmp/empty"
grep -q 'no instructions' "$tmp/err" && ok || fail "empty input"
printf 'b7 0g' >"$tmp/badhex"
expect 1 "$bpfrt" disasm --hex "$tmp/badhex"

printf 'ja +5\nexit\n' >"$tmp/far.s"
expect 0 "$bpfrt" asm "$tmp/far.s" -o "$tmp/far.bin"
grep -q 'warning: insn 0: jump out of range to insn 6' "$tmp/err" && ok || fail "asm far jump warning"
expect 1 "$bpfrt" disasm "$tmp/far.bin"
grep -q '^0: (05) goto pc+5' "$tmp/out" && ok || fail "far jump still printed"
grep -q 'disasm: insn 0: jump out of range to insn 6' "$tmp/err" && ok || fail "disasm far jump"
printf 'ja +1\nlddw %%r0, 1\nexit\n' >"$tmp/mid.s"
expect 0 "$bpfrt" asm "$tmp/mid.s" -o "$tmp/mid.bin"
expect 1 "$bpfrt" disasm "$tmp/mid.bin"
grep -q 'jump into the middle of lddw' "$tmp/err" && ok || fail "jump into lddw"

# --- programs of the conformance suite: asm -> disasm --style asm [--labels] -> asm.
# Every 8th file: each run of the CLI costs its dynamic loading (~20 ms), and test_asm and
# test_disasm already cover every file and every opcode in-process.
if [ -d "$suite" ]; then
	n=0
	i=0
	for f in "$suite"/*.data; do
		i=$((i + 1))
		[ $((i % 8)) -eq 1 ] || continue
		awk '/^-- asm/{a=1;next} /^--/{a=0} a' "$f" >"$tmp/c.s"
		"$bpfrt" asm "$tmp/c.s" -o "$tmp/c.bin" 2>"$tmp/err" || { fail "$f: $(cat "$tmp/err")"; continue; }
		"$bpfrt" disasm --style asm "$tmp/c.bin" >"$tmp/c2.s" 2>"$tmp/err" || { fail "$f: disasm"; continue; }
		"$bpfrt" asm "$tmp/c2.s" -o "$tmp/c2.bin" 2>"$tmp/err" || { fail "$f: re-asm: $(cat "$tmp/err")"; continue; }
		if cmp -s "$tmp/c.bin" "$tmp/c2.bin"; then ok; else fail "$f: round trip changes bytes"; fi
		"$bpfrt" disasm --style asm --labels "$tmp/c.bin" >"$tmp/c3.s" 2>"$tmp/err" || { fail "$f: disasm --labels"; continue; }
		"$bpfrt" asm "$tmp/c3.s" -o "$tmp/c3.bin" 2>"$tmp/err" || { fail "$f: re-asm labels: $(cat "$tmp/err")"; continue; }
		if cmp -s "$tmp/c.bin" "$tmp/c3.bin"; then ok; else fail "$f: round trip with labels changes bytes"; fi
		n=$((n + 1))
	done
	echo "$n conformance programs round-tripped"
else
	echo "skipped: conformance round trips (suite not found at $suite)"
fi

echo "$checks passed, $fails failed"
[ "$fails" -eq 0 ]
