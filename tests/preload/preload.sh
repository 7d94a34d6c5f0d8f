#!/bin/sh
# preload.sh - libbpfrt-preload.so under unmodified programs built here against the
# system libbpf (Debian libbpf-dev), clang and bpftool:
#  - app.c (skeleton with .data/.bss/.rodata, six map types, ring buffer with epoll,
#    perf buffer,
#    BPF_PROG_TEST_RUN, a pin under /sys/fs/bpf) prints the same on the kernel and under
#    `bpfrt exec`, libbpf's warnings included;
#  - as uid 65534 the kernel refuses it (kernel.unprivileged_bpf_disabled is left as it
#    is) and under `bpfrt exec` it prints the same again;
#  - probe.c (libbpf's feature probes): bpfrt claims no program or map type the kernel
#    lacks, and does claim those app.c uses;
#  - tp.c: a tracepoint program attached through libbpf counts the same on both;
#    SO_ATTACH_BPF of a bpfrt program on a TCP socket: the kernel's errno and one
#    stderr line (datagram sockets: attach.sh);
#  - rawcall.c: an inline bpf() syscall reaches the kernel under plain `bpfrt exec`
#    (documented), bpfrt under --strict; a static binary is refused under --strict;
#    other syscall() numbers pass through.
# Needs root (the kernel run).  Usage: preload.sh BPFRT SOURCE_DIR [UNPRIV_LOCK]
set -u
BPFRT=$1
SRC=$2/tests/preload
. "$SRC/common.sh"
# What the kernel answers in 2. and 4b. depends on kernel.unprivileged_bpf_disabled, which
# verifier.unpriv_oracle sets to 0 for its run (from any build on the machine) holding
# UNPRIV_LOCK exclusively: those parts hold it shared (tests/CMakeLists.txt).  Without it
# a probe of the kernel and bpfrt's a moment later could see two settings (seen: "bpf()
# syscall for unprivileged users is enabled" against "restricted to privileged users").
LOCK=${3:-}
hold_unpriv() {
	[ -n "$LOCK" ] && command -v flock >/dev/null 2>&1 && (: >> "$LOCK") 2>/dev/null &&
		exec 8>> "$LOCK" && flock -s 8
}
release_unpriv() { exec 8>&-; }
if [ -n "${BPFRT_SANITIZED:-}" ]; then
	echo "skipped: the preload library is built with -fsanitize=$BPFRT_SANITIZED, which cannot be preloaded into the uninstrumented test programs"
	exit 77
fi
for tool in clang bpftool cc setpriv; do
	command -v $tool >/dev/null 2>&1 || { echo "skipped: $tool not installed"; exit 77; }
done
[ -f /usr/include/bpf/libbpf.h ] || { echo "skipped: libbpf-dev not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skipped: needs root for the kernel run"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-preload-XXXXXX")
chmod 755 "$T"
export BPFRT_FS="$T/fs"
trap 'rm -rf "$T"' EXIT
fails=0
passes=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }

ARCH_INC=/usr/include/$(cc -print-multiarch 2>/dev/null)
clang -O2 -g -target bpf -I"$ARCH_INC" -c "$SRC/app.bpf.c" -o "$T/app.bpf.o" &&
	bpftool gen skeleton "$T/app.bpf.o" name app > "$T/app.skel.h" &&
	cc -O1 -Wall -I"$T" -o "$T/app" "$SRC/app.c" -lbpf &&
	cc -O1 -Wall -o "$T/probe" "$SRC/probe.c" -lbpf &&
	cc -O1 -Wall -o "$T/rawcall" "$SRC/rawcall.c" &&
	clang -O2 -g -target bpf -I"$ARCH_INC" -c "$SRC/tp.bpf.c" -o "$T/tp.bpf.o" &&
	bpftool gen skeleton "$T/tp.bpf.o" name tp > "$T/tp.skel.h" &&
	cc -O1 -Wall -I"$T" -o "$T/tp" "$SRC/tp.c" -lbpf ||
	{ echo "FAIL: building the test programs"; exit 1; }
echo "libbpf $(dpkg-query -W -f '${Version}' libbpf-dev 2>/dev/null || echo '?')," \
	"bpftool $(bpftool version 2>/dev/null | head -1)"

# 1. the kernel and bpfrt print the same (libbpf's warnings too: APP_VERBOSE)
# (in a mount namespace with a fresh bpffs where it can: concurrent runs pin the same name)
if unshare -m --propagation private true 2>/dev/null; then
	APP_VERBOSE=1 unshare -m --propagation private sh -c \
		"mount -t bpf bpf /sys/fs/bpf && exec '$T/app'" > "$T/kernel.txt" 2>&1
else
	APP_VERBOSE=1 "$T/app" > "$T/kernel.txt" 2>&1
fi || fail "app on the kernel: $(cat "$T/kernel.txt")"
APP_VERBOSE=1 "$BPFRT" exec -- "$T/app" > "$T/bpfrt.txt" 2>&1
if grep -q '^done$' "$T/kernel.txt" && cmp -s "$T/kernel.txt" "$T/bpfrt.txt"; then ok; else
	fail "app: kernel and bpfrt differ:"; diff "$T/kernel.txt" "$T/bpfrt.txt" >&2; fi
[ -z "$(ls -A "$BPFRT_FS" 2>/dev/null | grep -v '^\.')" ] && ok ||
	fail "the unpin left $(ls -A "$BPFRT_FS")"

# 2. unprivileged: the kernel refuses, bpfrt does what root's kernel did
hold_unpriv
mkdir -p "$T/u" && chown 65534:65534 "$T/u"
sysctl -n kernel.unprivileged_bpf_disabled 2>/dev/null | sed 's/^/unprivileged_bpf_disabled=/'
out=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$T/app" 2>&1)
case "$out" in "load: -1"*) ok ;; *) fail "the kernel let uid 65534 load: $out" ;; esac
setpriv --reuid 65534 --regid 65534 --clear-groups env APP_VERBOSE=1 BPFRT_FS="$T/u/fs" \
	"$BPFRT" exec -- "$T/app" > "$T/unpriv.txt" 2>&1
if cmp -s "$T/kernel.txt" "$T/unpriv.txt"; then ok; else
	fail "app as uid 65534 under bpfrt differs from the kernel's run as root:"
	diff "$T/kernel.txt" "$T/unpriv.txt" >&2; fi
setpriv --reuid 65534 --regid 65534 --clear-groups env BPFRT_FS="$T/u/fs" \
	"$BPFRT" exec -- "$T/app" --test-run-only > "$T/unpriv2.txt" 2>&1
grep -q "^test_run first=66 len=14: err=0 retval=1" "$T/unpriv2.txt" && ok ||
	fail "test-run subset as uid 65534: $(cat "$T/unpriv2.txt")"
release_unpriv

# 3. feature probes: what bpfrt claims, the kernel has; what app.c needs, bpfrt claims
"$T/probe" progs maps > "$T/probe.kernel" 2>&1
"$BPFRT" exec -- "$T/probe" progs maps > "$T/probe.bpfrt" 2>&1
over=$(paste -d'|' "$T/probe.kernel" "$T/probe.bpfrt" |
	awk -F'|' '{ split($1, k, ": "); split($2, b, ": ");
		     if (k[1] != b[1] || (b[2] == 1 && k[2] != 1)) print $0 }')
[ -z "$over" ] && [ -s "$T/probe.bpfrt" ] && ok || fail "probes bpfrt claims beyond the kernel: $over"
for want in "prog socket_filter: 1" "prog xdp: 1" "prog sched_cls: 1" "map hash: 1" \
	    "map array: 1" "map percpu_array: 1" "map lru_hash: 1" "map queue: 1" \
	    "map ringbuf: 1"; do
	grep -qx "$want" "$T/probe.bpfrt" && ok || fail "probe: want '$want' under bpfrt"
done
echo "probes: bpfrt supports $(grep -c ': 1$' "$T/probe.bpfrt") of the kernel's" \
	"$(grep -c ': 1$' "$T/probe.kernel") program and map types"

# 4. bpftool (Debian's, unmodified): map create/update/lookup/dump/delete on a pinned map
# and prog load/show/run (bpftool_cmp.sh), the kernel's output and bpfrt's equal once
# ids, memlock and times go
# (the kernel's run in a mount namespace of its own with a fresh bpffs: other tests on
# the machine may hold /sys/fs/bpf)
head -c 64 /dev/urandom > "$T/pkt"
if unshare -m --propagation private true 2>/dev/null; then
	unshare -m --propagation private sh -c \
		"mount -t bpf bpf /sys/fs/bpf && sh '$SRC/bpftool_cmp.sh' '$T'" > "$T/bpftool.kernel" 2>&1
else
	sh "$SRC/bpftool_cmp.sh" "$T" > "$T/bpftool.kernel" 2>&1
fi
sh "$SRC/bpftool_cmp.sh" "$T" "$BPFRT" exec -- > "$T/bpftool.bpfrt" 2>&1
if grep -q "status 0" "$T/bpftool.kernel" && cmp -s "$T/bpftool.kernel" "$T/bpftool.bpfrt"; then
	ok; else fail "bpftool: kernel and bpfrt differ:"; diff "$T/bpftool.kernel" "$T/bpftool.bpfrt" >&2; fi

# 4b. `bpftool feature probe`: the same report, but for the program and map types bpfrt
# does not have (each then "is NOT available", and its helper list "Program type not
# supported"): bpfrt claims nothing the kernel lacks.  The helper lists are equal and say
# nothing on either side: libbpf 1.1 takes a helper as missing only when the verifier log
# says "invalid func" or "unknown func", and 6.18 (so bpfrt, which keeps its wording)
# says "program of this type cannot use helper", so every helper is listed for every type.
hold_unpriv
bpftool feature probe > "$T/feature.kernel" 2>&1
"$BPFRT" exec -- bpftool feature probe > "$T/feature.bpfrt" 2>&1
release_unpriv
lies=$(paste -d'|' "$T/feature.kernel" "$T/feature.bpfrt" | awk -F'|' '$1 != $2' |
	grep -v -E '^eBPF (program|map)_type [a-z0-9_]+ is available\|eBPF (program|map)_type [a-z0-9_]+ is NOT available$' |
	grep -v -E '^	Could not determine which helpers are available\|	Program type not supported$')
nk=$(wc -l < "$T/feature.kernel")
[ -z "$lies" ] && [ "$nk" -gt 100 ] && [ "$(wc -l < "$T/feature.bpfrt")" = "$nk" ] && ok ||
	fail "feature probe: bpfrt differs from the kernel beyond the types it lacks: $lies"
echo "feature probe: types the kernel has and bpfrt lacks:" $(paste -d'|' "$T/feature.kernel" \
	"$T/feature.bpfrt" | awk -F'|' '$1 != $2 && $2 ~ /NOT available/ {print $1}' |
	sed -E 's/eBPF (program|map)_type ([a-z0-9_]+) is available/\1:\2/')

# 5b. attachment: a tracepoint program attached by libbpf (perf_event_open of the
# tracepoint, then a perf link on the kernel, PERF_EVENT_IOC_SET_BPF under bpfrt) counts
# the process's getppid() calls the same on both, detach included; SO_ATTACH_BPF of a
# bpfrt socket filter on a TCP socket gets the kernel's errno and one line on stderr
APP_VERBOSE=1 "$T/tp" > "$T/tp.kernel" 2>&1
APP_VERBOSE=1 "$BPFRT" exec -- "$T/tp" > "$T/tp.bpfrt" 2>&1
if grep -q "^count after 5 calls: 5$" "$T/tp.kernel" && cmp -s "$T/tp.kernel" "$T/tp.bpfrt"; then
	ok; else fail "tracepoint: kernel and bpfrt differ:"; diff "$T/tp.kernel" "$T/tp.bpfrt" >&2; fi
out=$("$T/tp" --socket 2>&1)
[ "$out" = "$(printf 'load: 0\nSO_ATTACH_BPF: ok')" ] && ok || fail "SO_ATTACH_BPF on the kernel: $out"
out=$("$BPFRT" exec -- "$T/tp" --socket 2>&1)
case "$out" in *"SO_ATTACH_BPF: Invalid argument"*) ok ;; *) fail "SO_ATTACH_BPF under bpfrt: $out" ;; esac
[ "$(printf '%s\n' "$out" | grep -c '^bpfrt-preload: SO_ATTACH_BPF of a bpfrt program')" = 1 ] && ok ||
	fail "SO_ATTACH_BPF under bpfrt: want one line on stderr: $out"

# 5. what cannot be caught, and strict mode
out=$("$BPFRT" exec -- "$T/rawcall" 2>&1)
[ "$out" = "$(printf 'create: ok kernel\ngetpid: same')" ] && ok ||
	fail "rawcall under plain exec: $out"
out=$("$BPFRT" exec --strict -- "$T/rawcall" 2>&1)
case "$out" in *"trapped and routed to bpfrt"*"create: ok bpfrt"*"getpid: same"*) ok ;;
	*) fail "rawcall under --strict: $out" ;; esac
out=$(setpriv --reuid 65534 --regid 65534 --clear-groups env BPFRT_FS="$T/u/fs" \
	"$BPFRT" exec --strict -- "$T/rawcall" 2>/dev/null)
case "$out" in "create: ok bpfrt"*) ok ;; *) fail "rawcall --strict as uid 65534: $out" ;; esac
if cc -static -o "$T/rawcall_static" "$SRC/rawcall.c" 2>/dev/null; then
	out=$("$BPFRT" exec --strict -- "$T/rawcall_static" 2>&1)
	[ $? = 1 ] && case "$out" in *"statically linked"*) true ;; *) false ;; esac && ok ||
		fail "static binary under --strict: $out"
	out=$("$BPFRT" exec -- "$T/rawcall_static" 2>&1)
	case "$out" in *"warning: "*"statically linked"*"create: ok kernel"*) ok ;;
		*) fail "static binary under plain exec: $out" ;; esac
fi
out=$("$BPFRT" exec --help)
case "$out" in "Usage: bpfrt exec"*) ok ;; *) fail "exec --help: $out" ;; esac
"$BPFRT" exec > /dev/null 2>&1
[ $? = 2 ] && ok || fail "exec without a command: want status 2"
out=$("$BPFRT" exec -- /nonexistent/cmd 2>&1)
[ $? = 1 ] && ok || fail "exec of a missing command: $out"

echo "$passes passed, $fails failed"
# a failure keeps its files (sessions 13-16: not reproduced in 15, 20 and 57 runs)
[ $fails = 0 ] || keep_failed preload
[ $fails = 0 ]
