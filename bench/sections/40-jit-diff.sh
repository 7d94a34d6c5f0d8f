#!/bin/bash
# 40-jit-diff.sh - prints the last recorded long differential run of the JIT against the
# interpreters (bench/jit-diff.txt, written by scripts/jit-differential.sh: it takes
# minutes, so bench/run.sh does not repeat it).
set -uo pipefail
cd "$(dirname "$0")/../.."
f=bench/jit-diff.txt
echo "## JIT differential run (random programs: JIT vs interpreters)"
echo
if [ ! -f "$f" ]; then
	echo "No run recorded yet: \`bash scripts/jit-differential.sh\` writes $f."
	exit 0
fi
echo "Last run of \`scripts/jit-differential.sh\` (tests/jit/test_random.c without its count"
echo "limit: random memory-safe programs with loops, calls, helpers and hash map lookups,"
echo "each run by the checked interpreter, the fast interpreter and the JIT plain and"
echo "constant-blinded; r0 and memory must match; \"skipped\" programs faulted in the"
echo "checked interpreter):"
echo
sed 's/^/- /' "$f"
grep -q '^FAILED' "$f" && exit 1
exit 0
