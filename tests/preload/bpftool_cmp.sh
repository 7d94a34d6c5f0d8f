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
"$@" bpftool -j map show pinned "${p}_m" | sed 's/"id":[0-9]*,//' &&
"$@" bpftool prog load "$T/app.bpf.o" "${p}_p" &&
"$@" bpftool prog show pinned "${p}_p" | sed -n 1p | sed 's/^[0-9]*://' &&
"$@" bpftool prog run pinned "${p}_p" data_in "$T/pkt" data_out "$T/pkt.out" repeat 1 2>&1 |
	sed 's/duration: [0-9]*ns/duration: N/'
echo "status $?"
cmp "$T/pkt" "$T/pkt.out" && echo "data_out same"
# without a pin: the walk of BPF_*_GET_NEXT_ID and the *_GET_FD_BY_ID of what it finds
# (the kernel holds other programs too: only the ids of ours are compared; memlock and
# frozen come from /proc/self/fdinfo, which the preload answers with the kernel's lines)
num() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
pid=$("$@" bpftool -j prog show pinned "${p}_p" | num id)
bid=$("$@" bpftool -j prog show id "$pid" | num btf_id)
mids=$("$@" bpftool -j prog show id "$pid" | sed 's/.*"map_ids":\[\([0-9,]*\)\].*/\1/')
"$@" bpftool prog show id "$pid" | sed -n 1p | sed 's/^[0-9]*://'
# memlock and xlated size of the program (the jited size differs: bpfrt's JIT is not the
# kernel's), and its xlated instructions with source lines (linum) and signature: the
# kernel's rewrites (api/xlated.c), the BTF and lines kept with the pin; map ids and
# kernel addresses removed
"$@" bpftool -j prog show id "$pid" | sed -n 's/.*\("bytes_memlock":[0-9]*\).*/\1/p'
"$@" bpftool -j prog show id "$pid" | sed -n 's/.*\("bytes_xlated":[0-9]*\).*/\1/p'
"$@" bpftool prog dump xlated id "$pid" linum |
	sed -E 's/map\[id:[0-9]+\]/map[id:N]/g; s/(call [^#]*)#.*$/\1/' | cksum
"$@" bpftool prog list | grep -q "^$pid: xdp  name count_packets" && echo "prog list: found"
"$@" bpftool map list | grep -q "^${mids%%,*}: " && echo "map list: found"
for m in $(echo "$mids" | tr , ' '); do
	"$@" bpftool map show id "$m" | sed "s/^$m: //; s/btf_id $bid/btf_id B/"
done | sort
"$@" bpftool btf show id "$bid" | sed "s/^$bid: //; s/  prog_ids $pid  map_ids.*/  prog_ids P  map_ids M/"
"$@" bpftool btf list | grep -q "^$bid: " && echo "btf list: found"
"$@" bpftool btf dump id "$bid" | cksum
"$@" bpftool btf dump id "$bid" format c | cksum
"$@" bpftool btf dump file "$T/app.bpf.o" | cksum
"$@" bpftool btf dump id 2147483647 2>&1
# the kernel's own BTF, id 1 (bpfrt serves /sys/kernel/btf/vmlinux under that id)
"$@" bpftool btf show id 1
"$@" bpftool btf list | sed -n 1p
"$@" bpftool btf dump id 1 | cksum
"$@" bpftool btf dump id 1 format c | cksum
# loadall: one pin per program under a new directory
"$@" bpftool prog loadall "$T/app.bpf.o" "${p}_all" && echo "loadall: ok"
"$@" bpftool prog show pinned "${p}_all/count_packets" | sed -n 1p | sed 's/^[0-9]*://'
"$@" rm -rf "${p}_all"
rm -f "${p}_m" "${p}_p" "$T/pkt.out"
