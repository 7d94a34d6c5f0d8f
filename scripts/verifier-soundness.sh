#!/bin/sh
# verifier-soundness.sh - long soundness campaign: random programs through the verifier,
# every accepted one run on the checked engine (tests/verifier/test_soundness.c).
# Usage: scripts/verifier-soundness.sh [BUILD_DIR] [ROUNDS] [PROGRAMS_PER_ROUND]
set -e
build=${1:-build}
rounds=${2:-50}
per=${3:-20000}
i=1
while [ "$i" -le "$rounds" ]; do
	seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	echo "round $i/$rounds seed $seed"
	"$build/tests/test_verifier_soundness" "$per" "$seed" || { echo "FAILED with seed $seed"; exit 1; }
	i=$((i + 1))
done
