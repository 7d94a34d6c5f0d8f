#!/bin/sh
# attach.sh - attachment through the calls libbpf makes, under libbpfrt-preload.so
# (`bpfrt exec`): unmodified programs built here against the system libbpf (Debian
# libbpf-dev), run once on the kernel and once on bpfrt, print the same:
#  - kp.c: uprobe and uretprobe programs (bpf_program__attach_uprobe_opts: the uprobe
#    PMU's perf_event_open, then a perf link) read arguments and return values from
#    pt_regs, and bpf_probe_read_user_str() reads a string in another process (a child);
#    detach stops them;
#  - kp --ioctl: the same through perf_event_open + PERF_EVENT_IOC_SET_BPF by hand;
#  - rtp.c: raw tracepoint programs (BPF_RAW_TRACEPOINT_OPEN) on sys_enter/sys_exit read
#    a syscall's id, argument (through the pt_regs pointer) and return value; a raw
#    tracepoint bpfrt cannot rebuild (sched_switch) gets EINVAL and one stderr line;
#  - net.c, in a network namespace of its own: XDP through rtnetlink (bpf_xdp_attach,
#    EBUSY with UPDATE_IF_NOEXIST, bpf_xdp_detach), through a link (BPF_LINK_CREATE
#    BPF_XDP) and tc through rtnetlink (clsact hook, bpf_tc_attach with the echoed
#    handle/priority/prog_id, bpf_tc_detach) and tcx (BPF_LINK_CREATE BPF_TCX_INGRESS)
#    count the UDP datagrams sent on lo;
#  - pe.c: a perf_event program on a CPU clock of one CPU (bpftrace's interval and
#    profile probes: perf_event_open with a period, SET_BPF) runs on its ticks and reads
#    sample_period; a kprobe program on the clock gets EINVAL;
#  - sf.c, in a network namespace of its own: SO_ATTACH_BPF of a socket filter on a UDP
#    socket drops and trims datagrams as the kernel's does, read with recv, recvfrom,
#    recvmsg and read; SO_DETACH_BPF; on a packet socket (the filter sees the IP header)
#    it keeps 3 datagrams to the port trimmed to 32 bytes and drops 3 others.
# Kprobes take the same road in bpfrt (bpfrt_perf_event_attach()); they are compared
# only where the kernel has them (CONFIG_KPROBES).
# Needs root (the kernel runs, perf_event_open of probes).  Usage: attach.sh BPFRT SOURCE_DIR
set -u
BPFRT=$1
SRC=$2/tests/preload
. "$SRC/common.sh"
preload_need
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-attach-XXXXXX")
chmod 755 "$T"
export BPFRT_FS="$T/fs"
trap 'rm -rf "$T"' EXIT
fails=0
passes=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }

ARCH_INC=/usr/include/$(cc -print-multiarch 2>/dev/null)
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$ARCH_INC" -c "$SRC/kp.bpf.c" -o "$T/kp.bpf.o" &&
	bpftool gen skeleton "$T/kp.bpf.o" name kp > "$T/kp.skel.h" &&
	cc -O1 -Wall -I"$T" -o "$T/kp" "$SRC/kp.c" -lbpf &&
	clang -O2 -g -target bpf -I"$ARCH_INC" -c "$SRC/rtp.bpf.c" -o "$T/rtp.bpf.o" &&
	bpftool gen skeleton "$T/rtp.bpf.o" name rtp > "$T/rtp.skel.h" &&
	cc -O1 -Wall -I"$T" -o "$T/rtp" "$SRC/rtp.c" -lbpf &&
	clang -O2 -g -target bpf -I"$ARCH_INC" -c "$SRC/net.bpf.c" -o "$T/net.bpf.o" &&
	bpftool gen skeleton "$T/net.bpf.o" name net > "$T/net.skel.h" &&
	cc -O1 -Wall -I"$T" -o "$T/net" "$SRC/net.c" -lbpf &&
	clang -O2 -g -target bpf -I"$ARCH_INC" -c "$SRC/sf.bpf.c" -o "$T/sf.bpf.o" &&
	bpftool gen skeleton "$T/sf.bpf.o" name sf > "$T/sf.skel.h" &&
	cc -O1 -Wall -I"$T" -o "$T/sf" "$SRC/sf.c" -lbpf &&
	cc -O1 -Wall -o "$T/pe" "$SRC/pe.c" ||
	{ echo "FAIL: building the test programs"; exit 1; }

# same output on both; $1 names the case, the rest is the command under $T
same() {
	name=$1
	shift
	APP_VERBOSE=1 "$T/$@" > "$T/$name.kernel" 2>&1
	APP_VERBOSE=1 "$BPFRT" exec -- "$T/$@" > "$T/$name.bpfrt" 2>&1
	if grep -q '^done$' "$T/$name.kernel" && cmp -s "$T/$name.kernel" "$T/$name.bpfrt"; then
		ok
	else
		fail "$name: kernel and bpfrt differ:"
		diff "$T/$name.kernel" "$T/$name.bpfrt" >&2
	fi
}
same uprobe kp
grep -q '^kp_name: marker hits 3 .* other hits 2 ' "$T/uprobe.bpfrt" && ok ||
	fail "uprobe: the child's string was not read from the child: $(cat "$T/uprobe.bpfrt")"
same uprobe_ioctl kp --ioctl
cat "$T/uprobe.bpfrt"
same raw_tp rtp
cat "$T/raw_tp.bpfrt"
out=$("$T/rtp" --switch 2>&1)
[ "$out" = "$(printf 'load: 0\nattach sched_switch: ok')" ] && ok || fail "raw_tp sched_switch on the kernel: $out"
out=$("$BPFRT" exec -- "$T/rtp" --switch 2>"$T/switch.err")
[ "$out" = "$(printf 'load: 0\nattach sched_switch: Invalid argument')" ] && ok ||
	fail "raw_tp sched_switch under bpfrt: $out"
[ "$(grep -c 'raw tracepoint sched_switch: its arguments cannot be rebuilt' "$T/switch.err")" = 1 ] &&
	[ "$(wc -l < "$T/switch.err")" = 1 ] && ok ||
	fail "raw_tp sched_switch under bpfrt: want one line on stderr: $(cat "$T/switch.err")"

"$T/pe" > "$T/pe.kernel" 2>&1
"$BPFRT" exec -- "$T/pe" > "$T/pe.bpfrt" 2>"$T/pe.err"
if [ "$(cat "$T/pe.kernel")" = "$(printf 'attach: ok\nfired: yes\nperiod: 5000000\nkprobe program on the clock: errno 22\ndone')" ] &&
   cmp -s "$T/pe.kernel" "$T/pe.bpfrt"; then
	ok
else
	fail "perf_event program on a CPU clock: kernel and bpfrt differ:"
	diff "$T/pe.kernel" "$T/pe.bpfrt" >&2
	cat "$T/pe.err" >&2
fi

# XDP and tc on lo, each run in a network namespace of its own (no one else's packets)
if unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
	for mode in xdp link tc tcx; do
		unshare -n sh -c "ip link set lo up && APP_VERBOSE=1 exec '$T/net' $mode" \
			> "$T/net_$mode.kernel" 2>&1
		unshare -n sh -c "ip link set lo up && APP_VERBOSE=1 exec '$BPFRT' exec -- '$T/net' $mode" \
			> "$T/net_$mode.bpfrt" 2>&1
		if grep -q '^counted 5$' "$T/net_$mode.kernel" && grep -q '^done$' "$T/net_$mode.kernel" &&
		   cmp -s "$T/net_$mode.kernel" "$T/net_$mode.bpfrt"; then
			ok
		else
			fail "net $mode: kernel and bpfrt differ:"
			diff "$T/net_$mode.kernel" "$T/net_$mode.bpfrt" >&2
		fi
	done
	cat "$T/net_tc.bpfrt"
	unshare -n sh -c "ip link set lo up && APP_VERBOSE=1 exec '$T/sf'" > "$T/sf.kernel" 2>&1
	unshare -n sh -c "ip link set lo up && APP_VERBOSE=1 exec '$BPFRT' exec -- '$T/sf'" \
		> "$T/sf.bpfrt" 2>&1
	if grep -q '^recvmsg: 4 bytes "t-tr"$' "$T/sf.kernel" && grep -q '^done$' "$T/sf.kernel" &&
	   cmp -s "$T/sf.kernel" "$T/sf.bpfrt"; then
		ok
	else
		fail "socket filter: kernel and bpfrt differ:"
		diff "$T/sf.kernel" "$T/sf.bpfrt" >&2
	fi
	cat "$T/sf.bpfrt"
	unshare -n sh -c "ip link set lo up && APP_VERBOSE=1 exec '$T/sf' --packet" > "$T/sfp.kernel" 2>&1
	unshare -n sh -c "ip link set lo up && APP_VERBOSE=1 exec '$BPFRT' exec -- '$T/sf' --packet" \
		> "$T/sfp.bpfrt" 2>&1
	if [ "$(grep -c '^packet: 32 bytes, .*to the port: yes$' "$T/sfp.kernel")" = 3 ] &&
	   ! grep -q 'to the port: no' "$T/sfp.kernel" && cmp -s "$T/sfp.kernel" "$T/sfp.bpfrt"; then
		ok
	else
		fail "socket filter on a packet socket: kernel and bpfrt differ:"
		cat "$T/sfp.kernel" >&2
		diff "$T/sfp.kernel" "$T/sfp.bpfrt" >&2
	fi
else
	echo "net: skipped: no network namespace (unshare -n) or ip(8)"
fi

echo "$passes passed, $fails failed"
[ $fails = 0 ] || keep_failed attach
[ $fails = 0 ]
