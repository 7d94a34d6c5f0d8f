#!/bin/bash
# 31-soundness.sh - the last long soundness campaign of the verifier, as recorded by
# scripts/verifier-soundness.sh in bench/soundness.txt (the campaign itself takes too long
# to rerun with every benchmark).
set -euo pipefail
cd "$(dirname "$0")/../.."
f=bench/soundness.txt
echo "## Verifier soundness campaign"
echo
if [ ! -f "$f" ]; then
	echo "(no campaign recorded: run scripts/verifier-soundness.sh)"
	exit 0
fi
echo "Random programs (ALU, stack, context, map lookups, XDP packet accesses, branches,"
echo "bounded loops, helper and bpf-to-bpf calls) through the verifier as root, bpf_capable"
echo "or unprivileged (socket filters moving map value pointers on two paths: ALU sanitation,"
echo "speculative paths); every accepted one run three times on the checked engine with"
echo "random inputs, bpf_capable and unprivileged ones with write tracking (a read of a"
echo "register or stack byte never written faults). A fault is a verifier bug."
echo "Recorded by \`scripts/verifier-soundness.sh\` (tests/verifier/test_soundness.c)."
echo
echo "| field | value |"
echo "|---|---|"
while IFS= read -r line; do
	k=${line%%:*}
	v=${line#*: }
	echo "| $k | $v |"
done <"$f"
