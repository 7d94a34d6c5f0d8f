#!/bin/sh
# cli_trace.sh - "bpfrt trace" and "bpfrt trace-log" from the command line: --help, the
# record layout (--fields, text and JSON), clear errors (unknown tracepoint, usage,
# unreadable program, refused program), a real run on sched:sched_process_exec with
# --count and -j, and trace_printk lines followed by trace-log.  Needs root and tracefs.
# Usage: cli_trace.sh BPFRT
set -u
BPFRT=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-cli-trace-XXXXXX")
export BPFRT_FS="$T/fs"
trap 'kill $GEN 2>/dev/null; rm -rf "$T"' EXIT
GEN=
fails=0
passes=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }
expect() { # DESCRIPTION WANT_STATUS WANT_TEXT CMD...
	desc=$1 want=$2 text=$3
	shift 3
	out=$("$@" 2>&1)
	st=$?
	if [ $st -ne "$want" ]; then fail "$desc: status $st, want $want: $out"; return; fi
	case "$out" in *"$text"*) ok ;; *) fail "$desc: output lacks '$text': $out" ;; esac
}

expect "trace --help" 0 "Usage: bpfrt trace" "$BPFRT" trace --help
expect "trace-log --help" 0 "Usage: bpfrt trace-log" "$BPFRT" trace-log --help
expect "trace: no arguments" 2 "expected a tracepoint" "$BPFRT" trace
expect "trace: bad --count" 2 "bad number" "$BPFRT" trace -n x a:b prog
expect "trace-log: stray argument" 2 "unexpected argument" "$BPFRT" trace-log foo

[ "$(id -u)" = 0 ] || { echo "skipped: needs root for tracepoints"; exit 77; }
"$BPFRT" trace --fields sched:sched_process_exec >/dev/null 2>&1 ||
	{ echo "skipped: no tracefs / sched:sched_process_exec"; exit 77; }

expect "fields: text" 0 "__syscall_nr" "$BPFRT" trace --fields syscalls:sys_enter_getppid
expect "fields: json" 0 '"size":12' "$BPFRT" trace --fields -j syscalls:sys_enter_getppid
expect "unknown tracepoint" 1 "unknown tracepoint 'skb:no_such'" \
	"$BPFRT" trace --fields skb:no_such
printf 'mov %%r0, 1\nexit\n' > "$T/ret1.s"
expect "attach to an unknown tracepoint" 1 "No such file or directory" \
	"$BPFRT" trace -n 1 skb:no_such "$T/ret1.s"
expect "unreadable program" 1 "cannot read" "$BPFRT" trace -n 1 sched:sched_process_exec \
	"$T/missing.s"
printf 'ldxdw %%r0, [%%r1+4096]\nexit\n' > "$T/past.s"
expect "reads past the record" 1 "reads its context up to byte 4104" \
	"$BPFRT" trace -n 1 sched:sched_process_exec "$T/past.s"
printf 'ldxw %%r0, [%%r1+0]\nexit\n' > "$T/hdr.s"
expect "reads the hidden header" 1 "invalid bpf_context access off=0" \
	"$BPFRT" trace -n 1 sched:sched_process_exec "$T/hdr.s"

# live events: exec /bin/true in a loop while tracing
(while :; do /bin/true; sleep 0.01; done) &
GEN=$!
out=$("$BPFRT" trace -j -n 3 -t 60 sched:sched_process_exec "$T/ret1.s" 2>&1)
case "$out" in
*'"events":'*) ev=$(echo "$out" | sed 's/.*"events":\([0-9]*\).*/\1/')
	nz=$(echo "$out" | sed 's/.*"nonzero":\([0-9]*\).*/\1/')
	if [ "$ev" -ge 3 ] && [ "$nz" = "$ev" ]; then ok; else fail "trace -n 3: $out"; fi ;;
*) fail "trace -j: $out" ;;
esac

# trace_printk: "exec %d" with the record's common_pid... read from offset 8 (filename's
# __data_loc) to show a field; trace-log -n 2 follows the pipe
cat > "$T/printk.s" <<'ASM'
ldxw %r3, [%r1+8]
and %r3, 0xffff
stdw [%r10-8], 0
stw [%r10-8], 0x63657865
stw [%r10-4], 0x00642520
mov %r1, %r10
add %r1, -8
mov %r2, 8
call bpf_trace_printk
mov %r0, 0
exit
ASM
"$BPFRT" trace-log -n 2 -t 60 -j > "$T/log.json" 2>&1 &
LOG=$!
sleep 0.3
"$BPFRT" trace -n 4 -t 60 sched:sched_process_exec "$T/printk.s" > "$T/trace.out" 2>&1 ||
	fail "trace printk: $(cat "$T/trace.out")"
wait $LOG
lines=$(grep -c '"msg":"exec [0-9]*"' "$T/log.json")
if [ "$lines" = 2 ]; then ok; else fail "trace-log -n 2 -j: $(cat "$T/log.json")"; fi
expect "trace-log --all" 0 "bpf_trace_printk: exec" "$BPFRT" trace-log --all -n 1 -t 10
expect "trace-log --clear" 0 "" "$BPFRT" trace-log --clear
[ -s "$BPFRT_FS/trace_pipe" ] && fail "trace-log --clear left lines" || ok

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
