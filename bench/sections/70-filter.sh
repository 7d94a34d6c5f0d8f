#!/bin/bash
# 70-filter.sh - packet filters: packets per second of tcpdump expressions run by bpfrt
# (classic BPF converted to eBPF, JIT and interpreter) against libpcap's own filter
# (pcap_offline_filter) on the same packets, in the same run.  A generated capture of
# FILTER_PACKETS packets (default 1,000,000, ~276 MB: larger than the caches) is held in
# memory by `bpfrt filter --repeat` and filtered whole; the time is the thread's CPU time
# of filtering and counting the matches (the counting loop is the same for every engine).
# A second table does the same on 2,000 packets filtered 500 times (hot caches).
# Each of REPS repetitions runs every engine on every expression, pinned to CPU $CPU;
# figures are the median [min-max] in Mpackets/s, ratios the median of per-repetition
# ratios to libpcap.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-7}
CPU=${CPU:-$(($(nproc) - 1))}
N=${FILTER_PACKETS:-1000000}
B=build-release
cmake --preset release >/dev/null
cmake --build $B -j"$(nproc)" --target bpfrt_cli attach_gen_pcap >/dev/null
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-bench-filter-XXXXXX")
trap 'rm -rf "$T"' EXIT
$B/tests/attach_gen_pcap "$T/big.pcap" "$N" 42 ether
$B/tests/attach_gen_pcap "$T/hot.pcap" 2000 43 ether
EXPRS=("tcp port 80" "tcp[tcpflags] & tcp-syn != 0" "vlan and udp port 53"
	"net 10.0.0.0/24 and not port 22" "ip6 and tcp dst portrange 20-450" "icmp or arp"
	"tcp and ip[2:2] - ((ip[0]&0xf)<<2) - ((tcp[12]&0xf0)>>2) > 0")
ENGINES=(libpcap interp)
$B/bpfrt filter -c -e jit tcp "$T/hot.pcap" >/dev/null 2>&1 && ENGINES+=(jit)

pps() { # ENGINE ROUNDS EXPR FILE
	taskset -c "$CPU" $B/bpfrt filter -j -e "$1" --repeat "$2" "$3" "$4" |
		sed 's/.*"packets_per_second":\([0-9]*\).*/\1/'
}
raw=$T/raw.txt
for r in $(seq 1 "$REPS"); do
	for i in "${!EXPRS[@]}"; do
		for set in cold hot; do
			if [ $set = cold ]; then f=$T/big.pcap rounds=2; else f=$T/hot.pcap rounds=500; fi
			for e in "${ENGINES[@]}"; do
				echo "$set $i $e $r $(pps "$e" $rounds "${EXPRS[$i]}" "$f")" >>"$raw"
			done
		done
	done
done

# median of the numbers on stdin, one a line
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# median [min-max] of Mpackets/s, and the median ratio to libpcap of the same repetition
cell() { # SET I ENGINE
	local vals ratios
	vals=$(awk -v s="$1" -v i="$2" -v e="$3" '$1 == s && $2 == i && $3 == e { print $5 / 1e6 }' "$raw")
	ratios=$(awk -v s="$1" -v i="$2" -v e="$3" '
		$1 == s && $2 == i && $3 == "libpcap" { lib[$4] = $5 }
		$1 == s && $2 == i && $3 == e { v[$4] = $5 }
		END { for (r in v) print v[r] / lib[r] }' "$raw")
	printf "%.1f [%.1f-%.1f]" "$(median <<<"$vals")" "$(sort -g <<<"$vals" | head -1)" \
		"$(sort -g <<<"$vals" | tail -1)"
	[ "$3" = libpcap ] || printf " (%.2fx)" "$(median <<<"$ratios")"
}

echo "## Packet filters: tcpdump expressions, bpfrt vs libpcap's pcap_offline_filter"
echo
echo "Classic BPF from libpcap's \`pcap_compile\`, converted to eBPF socket filters"
echo "(src/attach/cbpf.c) and run by bpfrt's interpreter and JIT; libpcap runs the classic"
echo "program with \`pcap_offline_filter\`, one call per packet (its API); bpfrt's JIT runs a"
echo "batch of packets per call.  The same packets in memory (on huge pages where the kernel"
echo "gives them) and the same counting loop for every engine.  Mpackets/s of filtering +"
echo "counting (thread CPU time), median [min-max] of $REPS repetitions, pinned to CPU $CPU; in"
echo "parentheses the median ratio to libpcap in the same repetition.  Goal: JIT >= 3x libpcap."
for set in cold hot; do
	echo
	if [ $set = cold ]; then
		echo "Large capture: $N generated packets ($(du -m "$T/big.pcap" | cut -f1) MB) held in memory, filtered twice:"
	else
		echo "Hot caches: 2,000 packets filtered 500 times:"
	fi
	echo
	hdr="| expression |" sep="|---|"
	for e in "${ENGINES[@]}"; do hdr="$hdr $e |" sep="$sep---|"; done
	echo "$hdr"
	echo "$sep"
	for i in "${!EXPRS[@]}"; do
		line="| \`${EXPRS[$i]}\` |"
		for e in "${ENGINES[@]}"; do line="$line $(cell $set "$i" "$e") |"; done
		echo "$line"
	done
done
