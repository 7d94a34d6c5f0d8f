#!/bin/sh
# Run one libFuzzer target for a fixed time (ctest test fuzz.<target>):
#   run.sh BINARY WORKDIR CORPUS_DIR...
# New inputs go to WORKDIR/corpus (the source tree is never written); a crash is saved as
# WORKDIR/crash-<sha1>: copy it into fuzz/regress/<target>/ to keep it as a regression test.
# BPFRT_FUZZ_SECONDS (default 20) sets the duration; an input running longer than
# BPFRT_FUZZ_TIMEOUT (default 30) seconds counts as a hang (generous: CI machines are shared).
# BPFRT_FUZZ_SEED (default 1) fixes the mutation sequence so a CI run explores the same
# inputs every time and a red run is reproducible; set it to 0 for a random seed when
# fuzzing for longer by hand.
set -eu
bin=$1
work=$2
shift 2
mkdir -p "$work/corpus"
for d in "$@"; do
	[ -d "$d" ] && set -- "$@" "$d"
	shift
done
exec "$bin" -max_total_time="${BPFRT_FUZZ_SECONDS:-20}" -timeout="${BPFRT_FUZZ_TIMEOUT:-30}" \
	-seed="${BPFRT_FUZZ_SEED:-1}" \
	-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$@"
