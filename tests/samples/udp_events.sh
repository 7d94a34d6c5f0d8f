#!/bin/bash
# udp_events.sh SAMPLE - an event-stream sample (samples/ringbuf: a BPF ring buffer;
# samples/perf_output: bpf_perf_event_output into a ring per CPU, lines end with the CPU)
# on lo: once it is attached, 5 UDP datagrams to a port of ours must come out as 5 event
# lines with the right addresses, port and length.  Needs root; prints "skipped: <reason>"
# (exit 77) otherwise.
set -u
bin=$1
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (AF_PACKET socket)"; exit 77; }
[ -f "$bin.bpf.o" ] || { echo "skipped: eBPF object not built (no clang)"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for try in 1 2 3; do
	port=$((40000 + ($$ + try) % 20000))
	"$bin" -i lo -t $((4 + 4 * try)) >"$out" 2>&1 &
	pid=$!
	for _ in $(seq 300); do
		grep -q '^attached to lo' "$out" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	for i in 1 2 3 4 5; do printf "event$i" >/dev/udp/127.0.0.1/$port; done
	wait $pid
	line="^ *[0-9]+\.[0-9]{6} UDP  127\.0\.0\.1:[0-9]+ -> 127\.0\.0\.1:$port len 48"
	n=$(grep -cE "$line( cpu [0-9]+)?$" "$out")
	[ "$n" = 5 ] && break
done
cat "$out" | head -20
[ "$n" = 5 ] || { echo "FAIL: $n events for port $port, want 5"; exit 1; }
grep -q "^[0-9]* events$" "$out" || { echo "FAIL: no summary"; exit 1; }
echo "ok: 5 events"
