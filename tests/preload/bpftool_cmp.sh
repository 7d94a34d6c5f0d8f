#!/bin/sh
# bpftool_cmp.sh - the bpftool commands preload.sh compares between the kernel and
# bpfrt, ids, memlock and times removed.  Usage: bpftool_cmp.sh DIR [PREFIX...]
# (DIR holds app.bpf.o and pkt; PREFIX: e.g. "bpfrt exec --", empty for the kernel).
T=$1
shift
p=/sys/fs/bpf/bpfrt_preload_cmp
rm -f "${p}_m" "${p}_p"
# bpffs refuses names with a dot
"$@" bpftool map create "$p.dot" type array key 4 value 4 entries 1 name d 2>&1 | sed "s/^/(dot) /"
"$@" bpftool map create "${p}_m" type hash key 4 value 8 entries 4 name m1 &&
"$@" bpftool map update pinned "${p}_m" key 1 0 0 0 value 2 0 0 0 0 0 0 0 &&
"$@" bpftool map update pinned "${p}_m" key 3 0 0 0 value 4 0 0 0 0 0 0 0 &&
"$@" bpftool map lookup pinned "${p}_m" key 3 0 0 0 &&
"$@" bpftool map dump pinned "${p}_m" | sort &&
"$@" bpftool map delete pinned "${p}_m" key 1 0 0 0 &&
"$@" bpftool map lookup pinned "${p}_m" key 1 0 0 0 2>&1 | sed 's/^/(lookup) /'
"$@" bpftool -j map show pinned "${p}_m" | sed 's/"id":[0-9]*,//; s/,"bytes_memlock":[0-9]*//' &&
"$@" bpftool prog load "$T/app.bpf.o" "${p}_p" &&
"$@" bpftool prog show pinned "${p}_p" | sed -n 1p | sed 's/^[0-9]*://' &&
"$@" bpftool prog run pinned "${p}_p" data_in "$T/pkt" data_out "$T/pkt.out" repeat 1 2>&1 |
	sed 's/duration: [0-9]*ns/duration: N/'
echo "status $?"
cmp "$T/pkt" "$T/pkt.out" && echo "data_out same"
rm -f "${p}_m" "${p}_p" "$T/pkt.out"
