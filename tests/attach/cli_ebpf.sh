#!/bin/sh
# cli_ebpf.sh - "bpfrt filter/attach" running eBPF programs of the packet types: an XDP
# program (tests/attach/progs/xdp_proto.s) and a tc classifier using bpf_skb_load_bytes
# (tc_tcp.s) give per-verdict counts equal to tcpdump's counts of the packets they
# classify; -w keeps the passing packets (the XDP_TX ones rewritten); JSON; an object's
# socket filter; errors: a program type that does not fit the capture, unknown types,
# corrupt captures, missing interfaces.
# Usage: cli_ebpf.sh BPFRT GEN_PCAP PROGS_DIR [SAMPLE_OBJ]
set -u
BPFRT=$1
GEN=$2
P=$3
OBJ=${4:-}
command -v tcpdump >/dev/null 2>&1 || { echo "skipped: tcpdump not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-cli-ebpf-XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
passes=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }
tcount() { tcpdump -nn -r "$1" "$2" 2>/dev/null | wc -l; }

"$GEN" "$T/e.pcap" 1500 7 ether && "$GEN" "$T/r.pcap" 200 9 raw || { echo "FAIL: generator"; exit 1; }

for engine in interp checked jit; do
	if [ $engine = jit ] && ! "$BPFRT" filter -e jit -c tcp "$T/e.pcap" >/dev/null 2>&1; then
		continue # no JIT in this build
	fi
	out=$("$BPFRT" filter -e $engine -j --ebpf "$P/xdp_proto.s" --type xdp "$T/e.pcap")
	for pair in "XDP_DROP:ip and udp" "XDP_TX:icmp" "XDP_ABORTED:arp"; do
		want=$(tcount "$T/e.pcap" "${pair#*:}")
		echo "$out" | grep -q "\"${pair%%:*}\":$want[,}]" && ok ||
			fail "xdp [$engine] ${pair%%:*} want $want: $out"
	done
	want=$(tcount "$T/e.pcap" "not (ip and (udp or icmp)) and not arp")
	echo "$out" | grep -q "\"XDP_PASS\":$want[,}]" && ok || fail "xdp [$engine] pass $want: $out"
	echo "$out" | grep -q '"type":"xdp"' && ok || fail "xdp type: $out"
	out=$("$BPFRT" filter -e $engine --ebpf "$P/tc_tcp.s" --type tc "$T/e.pcap")
	want=$(tcount "$T/e.pcap" "ip and tcp")
	echo "$out" | grep -q "TC_ACT_SHOT x$want\( \|$\)" && ok || fail "tc [$engine] shot $want: $out"
	echo "$out" | grep -q "actions: pass x$(tcount "$T/e.pcap" "not (ip and tcp)") drop x$want$" &&
		ok || fail "tc [$engine] actions: $out"
done

# -w: the packets that passed; XDP_TX ones are not written, TC_ACT_OK ones are
"$BPFRT" filter -w "$T/pass.pcap" --ebpf "$P/tc_tcp.s" --type tc "$T/e.pcap" >/dev/null ||
	fail "tc -w"
[ "$(tcount "$T/pass.pcap" "")" = "$(tcount "$T/e.pcap" "not (ip and tcp)")" ] && ok ||
	fail "tc -w wrote $(tcount "$T/pass.pcap" "") packets"
[ "$(tcount "$T/pass.pcap" "ip and tcp")" = 0 ] && ok || fail "tc -w wrote TCP"

# --max, --duration, --pretty
out=$("$BPFRT" filter -n 10 -j --ebpf "$P/xdp_proto.s" --type xdp "$T/e.pcap")
echo "$out" | grep -q '"packets":10,' && ok || fail "--max: $out"
out=$("$BPFRT" filter --pretty --ebpf "$P/xdp_proto.s" --type xdp "$T/e.pcap")
echo "$out" | grep -q '^ *"type": "xdp",$' && ok || fail "--pretty: $out"
out=$("$BPFRT" filter -t 30 --ebpf "$P/xdp_proto.s" --type xdp "$T/e.pcap")
echo "$out" | grep -q '^packets 1500, ' && ok || fail "--duration: $out"

# an object's socket filter (samples/sock_example): it keeps nothing
if [ -n "$OBJ" ] && [ -f "$OBJ" ]; then
	out=$("$BPFRT" filter -j --object "$OBJ" "$T/e.pcap")
	echo "$out" | grep -q '"actions":{"pass":0,"drop":1500,' && ok || fail "--object: $out"
	out=$("$BPFRT" filter -j --object "$OBJ" --name count_protocols "$T/e.pcap")
	echo "$out" | grep -q '"type":"socket"' && ok || fail "--object --name: $out"
	msg=$("$BPFRT" filter --object "$OBJ" --name nope "$T/e.pcap" 2>&1)
	echo "$msg" | grep -q "no program named 'nope'" && ok || fail "--name nope: $msg"
fi

expect_err() { # STATUS PATTERN CMD ARGS...
	status=$1 pat=$2
	shift 2
	msg=$("$BPFRT" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq "$status" ] && echo "$msg" | grep -q -- "$pat"; then ok; else
		fail "bpfrt $*: status $rc, message '$msg' (want $status, /$pat/)"
	fi
}
expect_err 1 "xdp programs need Ethernet frames; .*r.pcap has link type RAW" \
	filter --ebpf "$P/xdp_proto.s" --type xdp "$T/r.pcap"
expect_err 2 "unknown program type 'kprobe' (socket, tc, xdp)" \
	filter --ebpf "$P/xdp_proto.s" --type kprobe "$T/e.pcap"
expect_err 2 "ebpf needs --type" filter --ebpf "$P/xdp_proto.s" "$T/e.pcap"
expect_err 2 "give one of --prog, --object and --ebpf" \
	filter --ebpf "$P/xdp_proto.s" --type xdp --prog x "$T/e.pcap"
expect_err 2 "no libpcap engine" filter -e libpcap --ebpf "$P/xdp_proto.s" --type xdp "$T/e.pcap"
# an XDP program loaded as tc: the verifier refuses its context accesses
expect_err 1 "loading as a tc program: Permission denied" \
	filter --ebpf "$P/xdp_proto.s" --type tc "$T/e.pcap"
head -c 2000 "$T/e.pcap" >"$T/cut.pcap"
expect_err 1 "cut.pcap: packet [0-9]*: truncated dump file" \
	filter --ebpf "$P/xdp_proto.s" --type xdp "$T/cut.pcap"
printf '\324\303\262\241garbage' >"$T/bad.pcap"
expect_err 1 "bad.pcap: " filter --ebpf "$P/xdp_proto.s" --type xdp "$T/bad.pcap"
expect_err 1 "iface 'nope0': no such interface" attach --iface nope0 --ebpf "$P/xdp_proto.s" --type xdp

# live: the tc program on lo sees the UDP datagrams we send (TC_ACT_OK)
if [ "$(id -u)" = 0 ] && command -v python3 >/dev/null 2>&1; then
	. "$(dirname "$0")/capture_open.sh"
	# the datagrams go out once the capture is open (wait_capture); up to three tries
	for try in 1 2 3; do
		"$BPFRT" attach --iface lo --duration $((2 + 2 * try)) -j --ebpf "$P/tc_tcp.s" \
			--type tc >"$T/live.out" 2>&1 &
		pid=$!
		wait_capture $pid
		python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(7):
    s.sendto(b'x' * 10, ('127.0.0.1', 9))
"
		wait $pid
		n=$(sed -n 's/.*"TC_ACT_OK":\([0-9]*\).*/\1/p' "$T/live.out")
		[ "${n:-0}" -ge 7 ] && break
	done
	[ "${n:-0}" -ge 7 ] && ok || fail "attach --ebpf tc on lo: $(cat "$T/live.out")"
fi

# Ctrl-C: the run stops and still prints its summary
if [ "$(id -u)" = 0 ]; then
	"$BPFRT" attach --iface lo -j --ebpf "$P/tc_tcp.s" --type tc >"$T/int.out" 2>&1 &
	pid=$!
	# wait until its SIGINT handler is in place (SigCgt bit 2): a loaded machine may take
	# longer than any fixed pause to get there, and before it SIGINT would kill it
	# (and only once the child is bpfrt: before exec it is a copy of this shell)
	exe=$(readlink -f "$BPFRT")
	for _ in $(seq 300); do
		cgt=$(sed -n 's/^SigCgt:\t*//p' /proc/$pid/status 2>/dev/null)
		[ "$(readlink /proc/$pid/exe 2>/dev/null)" = "$exe" ] && [ -n "$cgt" ] &&
			[ $((0x$cgt & 2)) != 0 ] && break
		sleep 0.1
	done
	kill -INT $pid
	wait $pid
	rc=$?
	[ $rc = 0 ] && grep -q '"interrupted":true' "$T/int.out" && ok ||
		fail "attach after SIGINT: status $rc, $(cat "$T/int.out")"
fi

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
