#!/bin/bash
# sock_example.sh SAMPLE - run samples/sock_example on lo for a few rounds while sending UDP
# datagrams to 127.0.0.1 (bash's /dev/udp) once it says it is attached; its last line must
# count them.  Needs root; prints "skipped: <reason>" (exit 77) otherwise.
set -u
bin=$1
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (AF_PACKET socket)"; exit 77; }
[ -f "$(dirname "$bin")/sock_example.bpf.o" ] || { echo "skipped: eBPF object not built (no clang)"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" -i lo -n 6 >"$out" 2>&1 &
pid=$!
for _ in $(seq 300); do # up to 30 s for the start on a loaded machine
	grep -q '^attached to lo' "$out" && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
grep -q '^attached to lo' "$out" || { cat "$out"; echo "FAIL: sample did not attach"; exit 1; }
for i in 1 2 3 4 5; do echo "bpfrt $i" >/dev/udp/127.0.0.1/9; done
wait $pid
st=$?
cat "$out"
[ $st -eq 0 ] || { echo "FAIL: exit status $st"; exit 1; }
last=$(tail -n 1 "$out")
[[ $last =~ ^TCP\ [0-9]+\ UDP\ ([0-9]+)\ ICMP\ ([0-9]+)\ other\ [0-9]+\ packets$ ]] ||
	{ echo "FAIL: last line '$last'"; exit 1; }
# 5 datagrams to port 9 (closed): 5 UDP packets and up to 5 ICMP port unreachable
[ "${BASH_REMATCH[1]}" -ge 5 ] || { echo "FAIL: UDP ${BASH_REMATCH[1]} < 5"; exit 1; }
echo "ok: UDP ${BASH_REMATCH[1]} >= 5"
