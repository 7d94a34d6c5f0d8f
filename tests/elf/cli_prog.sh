#!/bin/sh
# cli_prog.sh BPFRT PROGS_DIR - `bpfrt prog` end to end on corpus objects (load and pin,
# show, dump xlated/jited with source lines, test runs with data files) and its errors.
set -u
B=$1
P=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export BPFRT_FS="$T/fs"
mkdir -p "$BPFRT_FS"
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# expect NAME PATTERN CMD... : CMD exits 0 and its stdout matches the grep -E PATTERN
expect() {
	name=$1 pat=$2
	shift 2
	if ! "$@" >"$T/out" 2>"$T/err"; then
		fail "$name: exit status $? ($(cat "$T/err"))"
	elif ! grep -Eq -- "$pat" "$T/out"; then
		fail "$name: output does not match /$pat/:"
		sed 's/^/    /' "$T/out" | head -20
	else
		echo "ok: $name"
	fi
}

# expect_err NAME PATTERN CMD... : CMD exits non-zero and stderr matches PATTERN
expect_err() {
	name=$1 pat=$2
	shift 2
	if "$@" >"$T/out" 2>"$T/err"; then
		fail "$name: succeeded"
	elif ! grep -Eq -- "$pat" "$T/err"; then
		fail "$name: stderr does not match /$pat/: $(cat "$T/err")"
	else
		echo "ok: $name"
	fi
}

# json NAME CMD... : CMD exits 0 and prints valid JSON
json() {
	name=$1
	shift
	if ! "$@" >"$T/out" 2>"$T/err"; then
		fail "$name: exit status ($(cat "$T/err"))"
	elif ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" 2>"$T/err"; then
		fail "$name: not JSON: $(head -c 300 "$T/out")"
	else
		echo "ok: $name"
	fi
}

# load / loadall and pins
expect "load" "loaded 'count' \\(socket_filter, [0-9]+ insns\\)$" $B prog load $P/legacy_map.bpf.o
expect "load pin" "pinned at $BPFRT_FS/count" $B prog load $P/legacy_map.bpf.o "$BPFRT_FS/count"
[ -f "$BPFRT_FS/count" ] || fail "load pin: no pinned file"
expect "loadall" "loaded 'prog_c'.*pinned at $BPFRT_FS/multi/prog_c" \
	$B prog loadall $P/multi_prog.bpf.o "$BPFRT_FS/multi"
for n in prog_a prog_b prog_c; do
	[ -f "$BPFRT_FS/multi/$n" ] || fail "loadall: $n not pinned"
done
# What loadall opens (#17 item 3): the object and bpfrt's own files, no optional library
# (capstone, libpcap, zlib: dlopen()ed by the command that needs one, src/util/dl.h) and
# no vmlinux BTF for an object without CO-RE or kfuncs; `prog dump jited` opens capstone,
# so the pattern sees a library opened when one is.  LeakSanitizer cannot run under ptrace
# (the asan preset): leaks are the other tests' business.
LIBS='libcapstone|libpcap|libz[.]so|/proc/config|/sys/kernel/btf/vmlinux'
if command -v strace >/dev/null 2>&1 &&
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -e trace=open,openat,openat2 -o "$T/trace" $B prog loadall \
		$P/multi_prog.bpf.o "$BPFRT_FS/multi_strace" >/dev/null 2>"$T/err"; then
	if grep -Eq "$LIBS" "$T/trace"; then
		fail "loadall opens: $(grep -E "$LIBS" "$T/trace" | head -3)"
	else
		echo "ok: loadall opens no optional library and no vmlinux BTF"
	fi
else
	echo "skipped: loadall's opens (no strace, or it cannot trace here)"
fi
expect "load --type" "loaded 'kp' \\(socket_filter" $B prog load --type socket $P/sec_types.bpf.o
expect "load --log-level" "loaded 'count'" $B prog load --log-level 1 $P/legacy_map.bpf.o
grep -q "processed [0-9]* insns" "$T/err" || fail "load --log-level: no verifier log on stderr"
expect_err "load unknown type" "unknown program type 'nosuch'" $B prog load --type nosuch \
	$P/legacy_map.bpf.o
expect_err "load missing" "cannot open /nonexistent.o" $B prog load /nonexistent.o

# show
expect "show OBJ NAME" "^[0-9]+: socket_filter  name count  gpl" $B prog show $P/legacy_map.bpf.o count
expect "show map_ids" "xlated [0-9]+B  [0-9]+ insns  (jited [0-9]+B  )?map_ids [0-9]+" $B prog show \
	$P/legacy_map.bpf.o count
# pinned by another process (the load above, which has exited): shown, dumped and run
expect "show all" "name count  gpl" $B prog show
grep -q "pinned $BPFRT_FS/multi/prog_b" "$T/out" || fail "show all: prog_b missing"
expect "show pinned" "^[0-9]+: socket_filter  name count  gpl" $B prog show pinned "$BPFRT_FS/count"
expect "show pinned map_ids" "insns  (jited [0-9]+B  )?map_ids [0-9]+" $B prog show pinned "$BPFRT_FS/count"
# the map of a program pinned by another process, by the id its map_ids show
# (BPF_MAP_GET_FD_BY_ID wants CAP_SYS_ADMIN)
mid=$(sed -n 's/.*map_ids \([0-9]*\).*/\1/p' "$T/out" | head -1)
if [ "$(id -u)" = 0 ]; then
	expect "map dump id (map of a pinned program)" "Found [0-9]+ element" \
		$B map dump id "$mid"
	expect_err "map dump unknown id" "id 2147483646: No such file" \
		$B map dump id 2147483646
else
	expect_err "map dump id unprivileged" "Operation not permitted" $B map dump id "$mid"
fi
expect_err "map dump bad id" "id x: Invalid argument" $B map dump id x
expect "xlated pinned" "^ +0: \\(b7\\) r7 = 0" $B prog dump xlated "$BPFRT_FS/count"
expect_err "show OBJ without NAME" "is an object file: name one of its programs" \
	$B prog show $P/legacy_map.bpf.o
expect_err "show missing" "/nonexistent: No such file" $B prog show pinned /nonexistent
expect_err "show no such prog" "no program 'nosuch'" $B prog show $P/legacy_map.bpf.o nosuch

# dump xlated: source lines, linum, map names, opcodes
expect "xlated src" "^; return add3_twice\\(4\\);" $B prog dump xlated $P/subprog_static.bpf.o first
expect "xlated linum" "; return x \\+ 3; \\[file:.*subprog_static.bpf.c line_num:9\\]" \
	$B prog dump xlated $P/subprog_static.bpf.o first linum
expect "xlated maps" "\\(18\\) r1 = map\\[id:[0-9]+\\]\\[0\\]\\+0" \
	$B prog dump xlated $P/global_data.bpf.o data_sum
expect "xlated opcodes" "^ +85 10 00 00 01 00 00 00" \
	$B prog dump xlated $P/subprog_static.bpf.o first opcodes
expect_err "dump what" "say 'xlated' or 'jited'" $B prog dump nonsense x
expect_err "dump bad arg" "unknown argument 'bogus'" $B prog dump xlated \
	$P/subprog_static.bpf.o first bogus

# dump jited (skips when the build has no JIT)
if $B prog dump jited $P/subprog_static.bpf.o first >"$T/out" 2>"$T/err"; then
	expect "jited" "^; return x \\+ 3;" $B prog dump jited $P/subprog_static.bpf.o first
	grep -Eq "^   7: \\(07\\) r0 \\+= 3" "$T/out" || fail "jited: eBPF line missing"
	grep -Eq "^ +[0-9a-f]+:  add" "$T/out" || fail "jited: no x86 add under insn 7"
	expect "jited opcodes linum" "^ +[0-9a-f]+:  ([0-9a-f]{2} )+ +" \
		$B prog dump jited --opcodes $P/global_data.bpf.o data_sum linum
	json "jited json" $B prog dump jited -p $P/global_data.bpf.o data_sum
	grep -q '"jited": \[' "$T/out" || fail "jited json: no jited array"
else
	grep -q "no JIT" "$T/err" || fail "jited: $(cat "$T/err")"
fi

# run: repeat, data_in/data_out (tc_rewrite swaps the MAC addresses), ctx, JSON
expect "run repeat" "^Return value: 3, duration \\(average\\): [0-9]+ns$" \
	$B prog run $P/legacy_map.bpf.o count --repeat 3
printf '\001\001\001\001\001\001\002\002\002\002\002\002\010\000' >"$T/pkt"
head -c 50 /dev/zero >>"$T/pkt"
expect "run data" "^Return value: 0" $B prog run $P/tc_rewrite.bpf.o swap_macs \
	data_in "$T/pkt" data_out "$T/pkt.out"
[ "$(od -An -tx1 -N12 "$T/pkt.out" | tr -d ' \n')" = "020202020202010101010101" ] ||
	fail "run data_out: MACs not swapped: $(od -An -tx1 -N12 "$T/pkt.out")"
expect "run data_out -" "^data_out:" $B prog run $P/tc_rewrite.bpf.o swap_macs \
	--data-in "$T/pkt" --data-out -
json "run json" $B -p prog run $P/deep_calls.bpf.o chain
grep -q '"retval": 40' "$T/out" || fail "run json: retval 40 missing"
expect "run pinned elsewhere" "^Return value: [0-9]+, duration" \
	$B prog run pinned "$BPFRT_FS/count"
# a bpf_loop callback program: re-verified elsewhere with the func_info linkage it kept
expect "load callbacks pin" "pinned at" $B prog load $P/loop_stop.bpf.o "$BPFRT_FS/loop"
expect "run pinned callbacks elsewhere" "^Return value: 464," $B prog run pinned "$BPFRT_FS/loop"
expect_err "run bad repeat" "repeat: 'x' is not a number" $B prog run $P/legacy_map.bpf.o \
	count repeat x
expect_err "run missing data" "data_in /nonexistent" $B prog run $P/legacy_map.bpf.o count \
	data_in /nonexistent

# -j / -p on every command (before or after it)
printf 'mov r0, 7\nexit\n' >"$T/p.s"
$B asm --hex "$T/p.s" >"$T/p.hex"
$B asm "$T/p.s" -o "$T/p.bin"
json "json version" $B -j version
json "json asm" $B asm -p "$T/p.s"
json "json disasm" $B -p disasm "$T/p.hex"
json "json run" $B run -p "$T/p.s"
json "json conformance-plugin" $B -p conformance-plugin --program "$(cat "$T/p.hex")"
json "json verify" $B -p verify "$T/p.bin"
json "json object" $B object show -p $P/global_data.bpf.o
json "json object load" $B -p object load $P/multi_prog.bpf.o
json "json btf" $B -p btf dump $P/btf_map.bpf.o
json "json prog load" $B prog -j load $P/multi_prog.bpf.o
json "json prog show" $B -p prog show $P/legacy_map.bpf.o count
json "json prog show all" $B -j prog show
json "json xlated" $B -j prog dump xlated $P/subprog_static.bpf.o first linum
$B map create "$BPFRT_FS/m" type array key 4 value 4 entries 2 >/dev/null 2>&1 &&
	json "json map" $B -p map dump "$BPFRT_FS/m"
if $B jit "$T/p.hex" >/dev/null 2>&1; then
	json "json jit" $B -p jit "$T/p.hex"
fi
# a one-packet pcap for filter
printf '\324\303\262\241\002\000\004\000\000\000\000\000\000\000\000\000\377\377\000\000\001\000\000\000' >"$T/c.pcap"
printf '\000\000\000\000\000\000\000\000\074\000\000\000\074\000\000\000' >>"$T/c.pcap"
head -c 60 /dev/zero >>"$T/c.pcap"
json "json filter" $B -p filter ip "$T/c.pcap"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
