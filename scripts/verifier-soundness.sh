#!/bin/sh
# verifier-soundness.sh - the long soundness campaign: random programs through the verifier,
# every accepted one run on the checked engine (tests/verifier/test_soundness.c), in chunks
# of CHUNK programs with seeds SEED, SEED+1, ...  Records the run in bench/soundness.txt
# (rewritten after every chunk, so a stopped run is recorded as far as it went);
# bench/sections/31-soundness.sh prints it.
# Usage: scripts/verifier-soundness.sh [BUILD_DIR] [PROGRAMS] [CHUNK] [SEED]
# STOP_AT=HH:MM (UTC): start no chunk after that time.  Run it with nice -n 19.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
programs=${2:-1000000}
chunk=${3:-20000}
seed=${4:-1}
out=${SOUNDNESS_OUT:-$root/bench/soundness.txt}
bin=$(mktemp /tmp/bpfrt-soundness.XXXXXX)
trap 'rm -f "$bin"' EXIT
# a copy, so rebuilding the tree during the run does not change what is measured
cp "$build/tests/test_verifier_soundness" "$bin" && chmod +x "$bin"
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- src tests/verifier 2>/dev/null || commit="$commit+dirty"
start=$(date -u +%s)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
done_n=0 acc=0 uacc=0 faults=0 i=0 status=running

record() {
	now=$(date -u +%s)
	cat > "$out" <<REC
date: $started
commit: $commit
programs: $done_n of $programs requested
accepted: $acc ($uacc unprivileged, run with write tracking)
faults: $faults
time: $((now - start)) s
chunks: $i of $chunk programs, seeds $seed..$((seed + i - 1))
status: $status
REC
}

record
while [ "$done_n" -lt "$programs" ]; do
	if [ -n "$STOP_AT" ] && [ "$(date -u +%H:%M)" \> "$STOP_AT" ]; then
		status="stopped at $STOP_AT UTC (time limit)"
		break
	fi
	n=$chunk
	[ $((programs - done_n)) -lt "$n" ] && n=$((programs - done_n))
	s=$((seed + i))
	line=$("$bin" "$n" "$s" | grep 'programs,' || true)
	a=$(echo "$line" | sed -n 's/.* \([0-9]*\) accepted by the verifier.*/\1/p')
	f=$(echo "$line" | sed -n 's/.* \([0-9]*\) faulted when run.*/\1/p')
	u=$(echo "$line" | sed -n 's/.* \([0-9]*\) unprivileged,.*/\1/p')
	if [ -z "$a" ] || [ -z "$f" ]; then
		status="failed: chunk with seed $s printed no summary"
		record
		exit 1
	fi
	done_n=$((done_n + n)) acc=$((acc + a)) uacc=$((uacc + ${u:-0})) faults=$((faults + f)) i=$((i + 1))
	echo "chunk $i seed $s: $line"
	if [ "$f" -ne 0 ]; then
		status="FAULTS with seed $s (rerun: $build/tests/test_verifier_soundness $n $s)"
		record
		exit 1
	fi
	record
done
[ "$status" = running ] && status=complete
record
cat "$out"
