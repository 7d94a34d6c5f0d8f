#!/bin/sh
# links.sh - a libbpf application's links seen from another process (issue 18 items 3
# and 4): links.c attaches a tracepoint, a uprobe and a uretprobe (perf links), raw_tp
# sys_enter, XDP (link) and tcx ingress on lo, and waits; meanwhile, from other
# processes, Debian's bpftool runs `link show`, `-j link list`, `link show id` of the XDP
# link and `link detach id` of the tracepoint link (the kernel's EOPNOTSUPP), and
# linkinfo.c walks the links (LINK_GET_NEXT_ID, LINK_GET_FD_BY_ID) and prints every
# field of 6.18's bpf_link_info (names, ENOSPC of a short name buffer, uprobe offset,
# interface, tcx attach type), detaches each (XDP and tcx detach; the others answer
# EOPNOTSUPP) and walks again (detached XDP and tcx links stay listed with no interface
# while the application holds them).  Under bpfrt, `bpftool link pin` must be refused
# with one line (a bpfrt link cannot outlive its process), and the records of a process
# killed with SIGKILL are reaped by the next walk.  Run once on the kernel and once with everything
# under `bpfrt exec`, each in a network namespace of its own; link and program ids are
# replaced by the programs' names.  Needs root.  Usage: links.sh BPFRT SOURCE_DIR
set -u
BPFRT=$1
SRC=$2/tests/preload
. "$SRC/common.sh"
preload_need netns unshare ip mkfifo
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-links-XXXXXX")
chmod 755 "$T"
export BPFRT_FS="$T/fs"
trap 'rc=$?; [ $rc = 0 ] || [ $rc = 77 ] || keep_failed links; rm -rf "$T"' EXIT

links_skel "$T" &&
	cc -O1 -Wall -I"$T" -o "$T/links" "$SRC/links.c" -lbpf &&
	cc -O1 -Wall -o "$T/linkinfo" "$SRC/linkinfo.c" -lbpf ||
	{ echo "FAIL: building the test programs"; exit 1; }

# One side, inside its network namespace: $@ the prefix (empty: the kernel).
cat > "$T/side.sh" <<'SIDE'
T=$1
shift
ip link set lo up
rm -f "$T/in"
mkfifo "$T/in"
# emptied here, not only by the redirection below: that one runs in the background after
# the fifo opens, so the wait for 'ready' could read the kernel side's app.out (the cause
# of this test's rare failures: the bpfrt side went on with no program ids)
: > "$T/app.out"
"$@" "$T/links" < "$T/in" > "$T/app.out" 2>&1 &
app=$!
exec 3> "$T/in"
i=0
while ! grep -q '^ready$' "$T/app.out" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
sed -n '/^attached/p' "$T/app.out"
set -- "$@" :: $(sed -n 's/^progs //p' "$T/app.out")
# the prefix, then the 6 program ids
pfx=""
while [ "$1" != :: ]; do pfx="$pfx $1"; shift; done
shift
names="tp up uret raw xdp tcx"
# a sed script naming our programs (prog ID -> prog_NAME); links of others are dropped
: > "$T/ren.sed"
n=1
for p in "$@"; do
	nm=$(echo $names | cut -d' ' -f$n)
	printf 's/prog %s /prog_%s /\n' "$p" "$nm" >> "$T/ren.sed"
	printf 's/"prog_id":%s\\([,}]\\)/"prog":"%s"\\1/\n' "$p" "$nm" >> "$T/ren.sed"
	n=$((n + 1))
done
ours() { sed -f "$T/ren.sed" | awk '/^[0-9]+: /{keep = /prog_/} keep' | sed 's/^[0-9]*: /L: /'; }
echo "--- bpftool link show"
$pfx bpftool link show | ours
echo "--- bpftool -j link list"
$pfx bpftool -j link list | sed 's/},{/}\n{/g; s/^\[//; s/\]$//' | sed -f "$T/ren.sed" |
	grep '"prog":' | sed 's/"id":[0-9]*,//'
id_of() { $pfx bpftool -j link list | sed 's/},{/}\n{/g' | grep "\"prog_id\":$1[,}]" |
	sed 's/.*"id":\([0-9]*\).*/\1/'; }
xdp=$(id_of $5)
tp=$(id_of $1)
echo "--- bpftool link show id (xdp)"
$pfx bpftool link show id "$xdp" | ours
echo "--- bpftool link detach id (tracepoint)"
$pfx bpftool link detach id "$tp" 2>&1 | sed "s/$tp/L/g"
# bpfrt cannot pin a link (it runs on the attaching process's thread): one line, an
# error, never a pin in name only (kept out of the compared output)
[ -n "$pfx" ] && { $pfx bpftool link pin id "$tp" /sys/fs/bpf/bpfrt_links_pin; echo "rc $?"; } \
	> "$T/pin.out" 2>&1
echo "--- linkinfo"
$pfx "$T/linkinfo" tp=$1 up=$2 uret=$3 raw=$4 xdp=$5 tcx=$6
echo "--- bpftool link show after the detaches"
$pfx bpftool link show | ours
echo x >&3
exec 3>&-
wait $app
tail -1 "$T/app.out"
SIDE
unshare -n sh "$T/side.sh" "$T" > "$T/kernel" 2>&1
unshare -n sh "$T/side.sh" "$T" "$BPFRT" exec -- > "$T/bpfrt" 2>&1
if ! grep -q '^links found: 6$' "$T/kernel" || ! grep -q '^done$' "$T/kernel"; then
	echo "FAIL: the kernel run did not find its 6 links:"
	cat "$T/kernel"
	exit 1
fi
same_or_fail "$T/kernel" "$T/bpfrt"
if ! grep -q 'BPF_OBJ_PIN of a link: not supported' "$T/pin.out" || grep -q '^rc 0$' "$T/pin.out"; then
	echo "FAIL: bpftool link pin under bpfrt: expected a refusal with one line:"
	cat "$T/pin.out"
	exit 1
fi
# a process killed with its links published leaves stale records: the next walk reaps
# them and lists none (bpfrt only; the kernel would detach them at exit just the same)
cat > "$T/kill.sh" <<'KILL'
T=$1
shift
ip link set lo up
rm -f "$T/in"
mkfifo "$T/in"
: > "$T/app2.out"
"$@" "$T/links" < "$T/in" > "$T/app2.out" 2>&1 &
app=$!
exec 3> "$T/in"
i=0
while ! grep -q '^ready$' "$T/app2.out" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
echo "records while running: $(ls "$BPFRT_FS/.bpfrt-links" | grep -c '^[0-9]')"
kill -9 $app
wait $app 2>/dev/null
echo "bpftool link show after kill -9: $("$@" bpftool link show | grep -c '^[0-9]*: ')"
echo "records after: $(ls "$BPFRT_FS/.bpfrt-links" | grep -c '^[0-9]')"
KILL
BPFRT_FS="$T/fs2" unshare -n sh "$T/kill.sh" "$T" "$BPFRT" exec -- > "$T/kill.out" 2>&1
if ! grep -q '^records while running: 6$' "$T/kill.out" ||
   ! grep -q '^bpftool link show after kill -9: 0$' "$T/kill.out" ||
   ! grep -q '^records after: 0$' "$T/kill.out"; then
	echo "FAIL: stale records of a killed process:"
	cat "$T/kill.out"
	exit 1
fi
cat "$T/bpfrt"
cat "$T/kill.out"
echo "links: kernel and bpfrt print the same $(wc -l < "$T/bpfrt") lines"
