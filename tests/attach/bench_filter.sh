#!/bin/sh
# bench_filter.sh - packets per second of bpfrt's packet filters (interpreter, JIT) against
# libpcap's own classic interpreter (bpf_filter, what pcap_offline_filter runs), on the
# same generated capture and tcpdump expressions.  In-memory runs (bpfrt filter --repeat:
# the capture is read once, then only filtering and counting are timed) and streaming
# runs (read + filter the whole file).  Times are the thread's CPU time, and each figure
# the best of RUNS runs, so that other load on a shared machine counts little.  Prints
# Markdown tables.
# Usage: bench_filter.sh BPFRT GEN_PCAP [PACKETS=1000000] [RUNS=5]
set -eu
BPFRT=$1
GEN=$2
N=${3:-1000000}
RUNS=${4:-5}
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-bench-filter-XXXXXX")
trap 'rm -rf "$T"' EXIT
"$GEN" "$T/big.pcap" "$N" 42 ether
"$GEN" "$T/hot.pcap" 2000 43 ether

# best (highest) packets/s of RUNS runs: rate ARGS...
rate() {
	best=0
	i=0
	while [ $i -lt "$RUNS" ]; do
		pps=$("$BPFRT" filter -j "$@" | sed 's/.*"packets_per_second":\([0-9]*\).*/\1/')
		[ "$pps" -gt "$best" ] && best=$pps
		i=$((i + 1))
	done
	echo "$best"
}
mpps() { awk "BEGIN { printf \"%.1f\", $1 / 1e6 }"; }
ratio() { awk "BEGIN { printf \"%.2fx\", $1 / $2 }"; }

jit=1
"$BPFRT" filter -c -e jit tcp "$T/hot.pcap" >/dev/null 2>&1 || jit=0

echo "In memory: $N-packet capture held in memory (cold caches) and a 2000-packet one"
echo "filtered 500 times (hot caches); Mpackets/s, best of $RUNS; ratio to libpcap."
echo
echo "| expression | set | libpcap | interp | jit |"
echo "|---|---|---|---|---|"
for expr in "tcp port 80" "tcp[tcpflags] & tcp-syn != 0" "vlan and udp port 53" \
	"net 10.0.0.0/24 and not port 22" "ip6 and tcp dst portrange 20-450" "icmp or arp" \
	"tcp and ip[2:2] - ((ip[0]&0xf)<<2) - ((tcp[12]&0xf0)>>2) > 0"; do
	for set in cold hot; do
		if [ $set = cold ]; then f=$T/big.pcap r=3; else f=$T/hot.pcap r=500; fi
		lib=$(rate --repeat $r -e libpcap "$expr" "$f")
		int=$(rate --repeat $r -e interp "$expr" "$f")
		line="| \`$expr\` | $set | $(mpps "$lib") | $(mpps "$int") ($(ratio "$int" "$lib"))"
		if [ $jit = 1 ]; then
			j=$(rate --repeat $r -e jit "$expr" "$f")
			line="$line | $(mpps "$j") ($(ratio "$j" "$lib")) |"
		else
			line="$line | - |"
		fi
		echo "$line"
	done
done
echo
echo "Streaming: read and filter the $N-packet file ($(du -m "$T/big.pcap" | cut -f1) MB);"
echo "Mpackets/s of CPU time, best of $RUNS."
echo
echo "| expression | libpcap | interp | jit |"
echo "|---|---|---|---|"
for expr in "tcp port 80" "net 10.0.0.0/24 and not port 22"; do
	lib=$(rate -e libpcap "$expr" "$T/big.pcap")
	int=$(rate -e interp "$expr" "$T/big.pcap")
	line="| \`$expr\` | $(mpps "$lib") | $(mpps "$int") ($(ratio "$int" "$lib"))"
	if [ $jit = 1 ]; then
		j=$(rate -e jit "$expr" "$T/big.pcap")
		line="$line | $(mpps "$j") ($(ratio "$j" "$lib")) |"
	else
		line="$line | - |"
	fi
	echo "$line"
done
