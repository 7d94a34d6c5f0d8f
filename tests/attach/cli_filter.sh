#!/bin/sh
# cli_filter.sh - "bpfrt filter" against tcpdump: on generated Ethernet, pcapng and raw-IP
# captures, --count equals `tcpdump -r FILE EXPR | wc -l` for every expression and engine;
# -w writes exactly the matches; --prog reads tcpdump -ddd; bad input gives clear errors.
# Usage: cli_filter.sh BPFRT GEN_PCAP
set -u
BPFRT=$1
GEN=$2
command -v tcpdump >/dev/null 2>&1 || { echo "skipped: tcpdump not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-cli-filter-XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
passes=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }

"$GEN" "$T/e.pcap" 1500 7 ether && "$GEN" "$T/n.pcapng" 500 8 pcapng &&
	"$GEN" "$T/r.pcap" 400 9 raw || { echo "FAIL: generator"; exit 1; }

check_count() { # FILE ENGINE EXPR
	want=$(tcpdump -nn -r "$1" "$3" 2>/dev/null | wc -l)
	got=$("$BPFRT" filter --count --engine "$2" "$3" "$1" 2>&1 | tail -n 1)
	if [ "$want" = "$got" ]; then ok; else fail "$1 [$2] '$3': tcpdump $want, bpfrt '$got'"; fi
}

for expr in "" "tcp" "udp port 53" "icmp or icmp6" "vlan and tcp" "ip6 and tcp" \
	"tcp[tcpflags] & tcp-syn != 0" "net 10.0.0.0/24 and not port 22" "ip[6:2] & 0x1fff != 0" \
	"portrange 1000-2000" "greater 900" "less 80" "ether multicast" "arp" \
	"tcp and ip[2:2] - ((ip[0]&0xf)<<2) - ((tcp[12]&0xf0)>>2) > 0" "ip[60] < 100"; do
	check_count "$T/e.pcap" interp "$expr"
	check_count "$T/n.pcapng" interp "$expr"
done
for engine in checked libpcap jit; do
	if [ $engine = jit ] && ! "$BPFRT" filter --count --engine jit tcp "$T/e.pcap" >/dev/null 2>&1; then
		continue # JIT not built or not available yet
	fi
	for expr in "tcp port 80" "udp" "vlan 100 and ip"; do
		check_count "$T/e.pcap" $engine "$expr"
	done
done
for expr in "ip" "ip6" "tcp port 80" "host 8.8.8.8 or host 1.1.1.1" "len > 100"; do
	check_count "$T/r.pcap" interp "$expr"
done

# words after the options form the expression, as with tcpdump
want=$(tcpdump -nn -r "$T/e.pcap" tcp port 443 2>/dev/null | wc -l)
got=$("$BPFRT" filter -c tcp port 443 "$T/e.pcap" | tail -n 1)
[ "$want" = "$got" ] && ok || fail "unquoted expression: $want vs $got"

# the capture from standard input
want=$(tcpdump -nn -r "$T/n.pcapng" udp 2>/dev/null | wc -l)
got=$("$BPFRT" filter -c udp - <"$T/n.pcapng" | tail -n 1)
[ "$want" = "$got" ] && ok || fail "stdin: $got, want $want"

# -w writes exactly the matching packets
"$BPFRT" filter -w "$T/out.pcap" "udp" "$T/e.pcap" >/dev/null || fail "-w failed"
want=$(tcpdump -nn -r "$T/e.pcap" udp 2>/dev/null | wc -l)
got=$(tcpdump -nn -r "$T/out.pcap" 2>/dev/null | wc -l)
[ "$want" = "$got" ] && ok || fail "-w wrote $got packets, want $want"
got=$("$BPFRT" filter -c "not udp" "$T/out.pcap" | tail -n 1)
[ "$got" = 0 ] && ok || fail "-w wrote non-udp packets: $got"

# summary, JSON, --max
out=$("$BPFRT" filter tcp "$T/e.pcap")
echo "$out" | grep -q "^packets 1500, matched $(tcpdump -nn -r "$T/e.pcap" tcp 2>/dev/null | wc -l) " && ok ||
	fail "summary line: $out"
echo "$out" | grep -q "^verdicts: " && ok || fail "verdict line: $out"
out=$("$BPFRT" filter -j --max 10 tcp "$T/e.pcap")
echo "$out" | grep -q '"packets":10,' && ok || fail "--max/-j: $out"
echo "$out" | grep -q '"engine":"interp"' && ok || fail "-j engine: $out"
out=$("$BPFRT" filter --repeat 3 udp "$T/e.pcap")
echo "$out" | grep -q "^packets 4500, " && ok || fail "--repeat packets: $out"
echo "$out" | grep -q "Mpackets/s" && ok || fail "--repeat rate: $out"

# --prog reads tcpdump -ddd and -dd output
tcpdump -r "$T/e.pcap" -ddd "tcp port 80" >"$T/p.ddd" 2>/dev/null
tcpdump -r "$T/e.pcap" -dd "tcp port 80" >"$T/p.dd" 2>/dev/null
want=$(tcpdump -nn -r "$T/e.pcap" tcp port 80 2>/dev/null | wc -l)
for f in p.ddd p.dd; do
	got=$("$BPFRT" filter -c --prog "$T/$f" "$T/e.pcap" | tail -n 1)
	[ "$want" = "$got" ] && ok || fail "--prog $f: $got, want $want"
done
"$BPFRT" filter --dump "tcp port 80" "$T/e.pcap" | grep -q "ldabsh\|ld_abs\|r0 = \*(u16 \*)skb\[12\]" && ok ||
	fail "--dump: $("$BPFRT" filter --dump "tcp port 80" "$T/e.pcap" | head -30)"

# --ebpf-out writes the converted program; bpfrt run executes it on a packet buffer
"$BPFRT" filter -o "$T/prog.bin" -c "ip" "$T/e.pcap" >/dev/null || fail "--ebpf-out failed"
n=$("$BPFRT" filter --dump ip "$T/e.pcap" | sed -n 's/^eBPF socket filter (\([0-9]*\) insns):$/\1/p')
size=$(wc -c <"$T/prog.bin")
[ -n "$n" ] && [ "$size" -eq $((n * 8)) ] && ok || fail "--ebpf-out: $size bytes for '$n' insns"

# errors: exit status and message
expect_err() { # STATUS PATTERN ARGS...
	status=$1 pat=$2
	shift 2
	msg=$("$BPFRT" filter "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq "$status" ] && echo "$msg" | grep -q -- "$pat"; then ok; else
		fail "bpfrt filter $*: status $rc, message '$msg' (want $status, /$pat/)"
	fi
}
expect_err 1 "nope.pcap: No such file or directory" tcp "$T/nope.pcap"
printf 'garbage garbage garbage garbage' >"$T/bad.pcap"
expect_err 1 "bad.pcap: unknown file format" tcp "$T/bad.pcap"
head -c 3000 "$T/e.pcap" >"$T/cut.pcap"
expect_err 1 "cut.pcap: packet [0-9]*: truncated dump file" tcp "$T/cut.pcap"
expect_err 1 "'tcp port': can't parse filter expression: syntax error" tcp port "$T/e.pcap"
expect_err 2 "unknown engine 'fast'" --engine fast tcp "$T/e.pcap"
expect_err 2 "expected an expression and a capture file" "$T/e.pcap"
printf '2\n6 0 0 1\n' >"$T/short.ddd"
expect_err 1 "expected the output of tcpdump -ddd or -dd" --prog "$T/short.ddd" "$T/e.pcap"
printf '1\n0 0 0 1\n' >"$T/noret.ddd"
expect_err 1 "cbpf insn 0: last instruction is not a return" --prog "$T/noret.ddd" "$T/e.pcap"
expect_err 1 "bad.ddd: No such file" --prog "$T/bad.ddd" "$T/e.pcap"
printf '1\n6 300 0 1\n' >"$T/bigjt.ddd"
expect_err 1 "bigjt.ddd: insn 0: code, jt or jf out of range" --prog "$T/bigjt.ddd" "$T/e.pcap"
expect_err 2 "bad number 'x' for --max" --max x tcp "$T/e.pcap"

# live capture: bpfrt attach
expect_attach_err() { # STATUS PATTERN ARGS...
	status=$1 pat=$2
	shift 2
	msg=$("$BPFRT" attach "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq "$status" ] && echo "$msg" | grep -q -- "$pat"; then ok; else
		fail "bpfrt attach $*: status $rc, message '$msg' (want $status, /$pat/)"
	fi
}
expect_attach_err 2 "attach: --iface is required" tcp
expect_attach_err 1 "attach: iface 'nope0': no such interface: No such device" --iface nope0 tcp
expect_attach_err 2 "attach: --repeat needs a capture file" --iface lo --repeat 2 tcp
if [ "$(id -u)" = 0 ] && command -v python3 >/dev/null 2>&1; then
	. "$(dirname "$0")/capture_open.sh"
	# the datagrams go out once the capture is open (wait_capture); up to three tries
	for try in 1 2 3; do
		port=$((20000 + ($$ + try) % 20000))
		"$BPFRT" attach --iface lo --duration $((2 + 2 * try)) -c udp dst port $port \
			>"$T/live.out" 2>&1 &
		pid=$!
		wait_capture $pid
		python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(7):
    s.sendto(b'x' * (10 + i), ('127.0.0.1', $port))
"
		wait $pid
		got=$(tail -n 1 "$T/live.out")
		[ "$got" = 7 ] && break
	done
	[ "$got" = 7 ] && ok || fail "attach --iface lo counted '$(cat "$T/live.out")', want 7"
fi

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
