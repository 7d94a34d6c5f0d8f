#!/bin/bash
# tcpdump.sh SAMPLE GEN_PCAP - samples/tcpdump against the real tcpdump on a generated
# capture: for TCP/UDP expressions its lines equal `tcpdump -nn -tt -q` line for line; for
# the others the same packets (timestamps) come out; -c, -e interp, a bad expression and a
# corrupt file.  Live (-i lo, root): the UDP datagrams we send are printed.
set -u
S=$1
GEN=$2
command -v tcpdump >/dev/null 2>&1 || { echo "skipped: tcpdump not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-sample-tcpdump-XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0 passes=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }
"$GEN" "$T/e.pcap" 2000 11 ether || { echo "FAIL: generator"; exit 1; }

for e in "tcp port 80" "udp" "ip6 and tcp" "tcp" "ip and (tcp or udp)" "udp dst portrange 50-2000"; do
	for engine in jit interp; do
		if diff <("$S" -e $engine -r "$T/e.pcap" "$e" 2>/dev/null) \
			<(tcpdump -nn -tt -q -r "$T/e.pcap" "$e" 2>/dev/null) >"$T/diff"; then ok; else
			fail "'$e' [$engine]: $(head -5 "$T/diff")"
		fi
	done
done
for e in "" "icmp or arp" "vlan" "ip[6:2] & 0x1fff != 0" "greater 1000" "ether broadcast"; do
	if diff <("$S" -r "$T/e.pcap" $e 2>/dev/null | cut -d' ' -f1) \
		<(tcpdump -nn -tt -q -r "$T/e.pcap" $e 2>/dev/null | cut -d' ' -f1) >"$T/diff"; then ok; else
		fail "'$e' timestamps: $(head -5 "$T/diff")"
	fi
done
[ "$("$S" -c 7 -r "$T/e.pcap" tcp 2>/dev/null | wc -l)" = 7 ] && ok || fail "-c 7"
msg=$("$S" -r "$T/e.pcap" "tcp port" 2>&1 >/dev/null)
[ $? = 1 ] && echo "$msg" | grep -q "syntax error" && ok || fail "bad expression: $msg"
head -c 5000 "$T/e.pcap" >"$T/cut.pcap"
msg=$("$S" -r "$T/cut.pcap" tcp 2>&1 >/dev/null)
[ $? = 1 ] && echo "$msg" | grep -q "truncated or corrupt capture" && ok || fail "cut file: $msg"
msg=$("$S" -r "$T/nope.pcap" tcp 2>&1 >/dev/null)
[ $? = 1 ] && echo "$msg" | grep -q "No such file" && ok || fail "missing file: $msg"

if [ "$(id -u)" = 0 ]; then
	for try in 1 2 3; do
		port=$((30000 + ($$ + try) % 20000))
		timeout -k 5 20 "$S" -i lo -c 5 udp dst port $port >"$T/live.out" 2>/dev/null &
		pid=$!
		sleep $try
		for i in 1 2 3 4 5; do echo "x$i" >/dev/udp/127.0.0.1/$port; done
		wait $pid
		[ "$(grep -c "IP 127.0.0.1.[0-9]* > 127.0.0.1.$port: UDP, length 3" "$T/live.out")" = 5 ] && break
	done
	[ "$(grep -c "> 127.0.0.1.$port: UDP, length 3" "$T/live.out")" = 5 ] && ok ||
		fail "live on lo: $(cat "$T/live.out")"
fi
echo "$passes passed, $fails failed"
[ $fails = 0 ]
