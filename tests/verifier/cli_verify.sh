#!/bin/sh
# cli_verify.sh - bpfrt verify: verdicts, first error, JSON, log levels, map options.
# Usage: cli_verify.sh BPFRT
set -e
bpfrt=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# r0 = 0; exit
printf 'b7 00 00 00 00 00 00 00 95 00 00 00 00 00 00 00' > "$tmp/ok.hex"
# r0 = r2; exit  (R2 !read_ok)
printf 'bf 20 00 00 00 00 00 00 95 00 00 00 00 00 00 00' > "$tmp/bad.hex"
# xdp: r2 = data; r0 = *(u8 *)(r2 + 0); exit (no bounds check)
printf '61 12 00 00 00 00 00 00 71 20 00 00 00 00 00 00 95 00 00 00 00 00 00 00' > "$tmp/pkt.hex"

"$bpfrt" verify --hex "$tmp/ok.hex" > "$tmp/out" || fail "ok program rejected"
grep -q '^processed 2 insns (limit 1000000)' "$tmp/out" || fail "no statistics line"
grep -q '^verdict: accept' "$tmp/out" || fail "no accept verdict"

if "$bpfrt" verify --hex "$tmp/bad.hex" > "$tmp/out"; then fail "bad program accepted"; fi
grep -q '^R2 !read_ok$' "$tmp/out" || fail "no R2 !read_ok"
grep -q '^0: (bf) r0 = r2$' "$tmp/out" || fail "no instruction trace"

"$bpfrt" verify --hex --json "$tmp/bad.hex" > "$tmp/out" || true
grep -q '"verdict":"reject","errno":13,"error":{"insn":0,"message":"R2 !read_ok"}' "$tmp/out" ||
	fail "json: $(cat "$tmp/out")"

# the JSON log is the text log, escaped (newlines) and read back unchanged
if command -v python3 >/dev/null; then
	"$bpfrt" verify --hex --log-level 2 "$tmp/bad.hex" | sed '$d' > "$tmp/text" || true
	"$bpfrt" verify --hex --json --log-level 2 "$tmp/bad.hex" > "$tmp/out" || true
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["log"] != open(sys.argv[2]).read())' \
		"$tmp/out" "$tmp/text" || fail "json log differs from the text log"
fi

if "$bpfrt" verify --hex --type xdp "$tmp/pkt.hex" > "$tmp/out"; then fail "pkt accepted"; fi
grep -q '^R2 offset is outside of the packet$' "$tmp/out" || fail "no packet message"

"$bpfrt" verify --hex --log-level 2 "$tmp/ok.hex" > "$tmp/out"
grep -q '^Live regs before insn:$' "$tmp/out" || fail "level 2 has no liveness listing"
grep -q '^0: (b7) r0 = 0 *; R0=0$' "$tmp/out" || fail "level 2 has no state after insn"

"$bpfrt" verify --hex --map hash:4:8:16 --log-level 6 "$tmp/ok.hex" > "$tmp/out"
grep -q '^stack depth 0$' "$tmp/out" || fail "BPF_LOG_STATS has no stack depth"

if "$bpfrt" verify --hex --map nosuch:4:8:16 "$tmp/ok.hex" 2> "$tmp/err"; then fail "bad --map"; fi
grep -q 'bad --map' "$tmp/err" || fail "no --map error"
"$bpfrt" verify --help | grep -q 'Usage: bpfrt verify' || fail "no help"
echo "cli_verify: all checks passed"
