#!/bin/bash
# jit-differential.sh - the long differential run of the JIT against the interpreters:
# tests/jit/test_random.c (random memory-safe programs, each run by the checked
# interpreter, the fast interpreter and the JIT plain and constant-blinded; r0 and memory
# must match) for SECONDS seconds at nice 19, then records the result in
# bench/jit-diff.txt, which bench/sections/40-jit-diff.sh prints into bench/RESULTS.md.
#   SECONDS_MAX=600  how long to run (default 10 minutes)
#   PROGRAMS=N       stop after N programs instead (whichever comes first)
#   SEED=N           generator seed (default: from the clock; printed, so a run reproduces)
# The generator (tests/jit/progen.h) also emits the idioms the JIT's optimisation passes
# rewrite (src/jit/x86_64/passes.def) and their near misses, lookups in hash maps with long
# bucket chains (passes hashprobe and constkey), and bpf_get_prandom_u32 calls
# (pass inlinehelper; every engine's run starts from one prandom state and must leave the
# interpreter's); the vm's JIT runs with every pass on unless BPFRT_JIT_PASSES says
# otherwise (the blinded run has no rotate pass).
# Exit status: 0 when every program agreed, 1 on a mismatch (the program is printed).
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${SECONDS_MAX:-600}
seed=${SEED:-$(date +%s)}
commit=$(git log -1 --format='%h %s' 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit (+ local changes)"

cmake --preset release >/dev/null &&
	cmake --build build-release -j2 --target test_jit_random >/dev/null || exit 1
log=build-release/jit-diff.log
BPFRT_JIT_DIFF_SECONDS=$secs BPFRT_JIT_DIFF_PROGRAMS=${PROGRAMS:-100000000000} BPFRT_JIT_DIFF_SEED=$seed \
	nice -n 19 build-release/tests/test_jit_random >"$log" 2>&1
rc=$?
line=$(grep '^jit-diff:' "$log" | tail -n 1)
if [ -z "$line" ]; then
	cat "$log"
	echo "jit-differential: the run did not finish"
	exit 1
fi
{
	echo "date: $(date -u +%FT%TZ)"
	echo "commit: $commit"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "${line#jit-diff: }"
	[ $rc -eq 0 ] || echo "FAILED: $(grep -m1 'differs' "$log")"
} >bench/jit-diff.txt
cat bench/jit-diff.txt
exit $((rc != 0))
