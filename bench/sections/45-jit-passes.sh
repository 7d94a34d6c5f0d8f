#!/bin/bash
# 45-jit-passes.sh - ablation of the JIT's optimisation passes (src/jit/x86_64/passes.def):
# the bench harness's jit engine on every workload with all passes, with none, and with all
# but one (BPFRT_JIT_PASSES=-NAME), interleaved, REPS repetitions pinned to CPU $CPU; ns per
# run as min and median.  Then, when valgrind is installed (JIT_PASSES_CALLGRIND=0 skips
# it), x86 instructions per run of each configuration counted by callgrind (independent of
# the machine's load): instructions inside bench.c's batch() (its loop, and the runs:
# bpfrt_vm_run, or the JIT code called directly through bpfrt_vm_native(); the map
# workload, run through BPF_PROG_TEST_RUN: inside brt_vm_run_opts, each repetition's run)
# over 2000 runs minus 1000 runs, divided by 1000.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-7}
CPU=${CPU:-$(($(nproc) - 1))}
# the map workload's hash map without a random seed: with one, each process has other
# bucket chains, and in some the JIT's inline probe (pass hashprobe) takes its slow path
# for the key (~290 more x86 instructions a run), whatever the configuration
export BENCH_ZERO_SEED=1
T=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-bench-passes-XXXXXX")
trap 'rm -rf "$T"' EXIT
cmake --preset release >/dev/null
cmake --build build-release -j2 --target bpfrt_static >/dev/null
mkdir -p "$T/progs"
clang -O2 -target bpf -mcpu=v3 -ffreestanding -Wall -c bench/progs/progs.bpf.c \
	-o "$T/progs/progs.bpf.o"
for s in raw_empty raw_flow raw_loop xdp_empty xdp_flow xdp_loop; do
	llvm-objcopy -O binary --only-section="$s" "$T/progs/progs.bpf.o" "$T/progs/$s.bin"
done
libs=$(pkg-config --with-path=build-release --static --libs bpfrt |
	sed -E 's/-L[^ ]*//g; s/-lbpfrt\b//')
# shellcheck disable=SC2086
gcc -O2 -std=gnu11 -Wall -Wextra -Iinclude bench/bench.c build-release/libbpfrt.a $libs \
	-o "$T/bench"

# the configurations: the pass names come from passes.def, the one list of them
PASSES=$(sed -n 's/^PASS(\([a-z0-9_]*\),.*/\1/p' src/jit/x86_64/passes.def)
CONFIGS=(all none)
for p in $PASSES; do CONFIGS+=("-$p"); done

raw=$T/raw.txt
nc=${#CONFIGS[@]}
for r in $(seq 1 "$REPS"); do
	# each repetition starts with another configuration: the first run of a process pays
	# for cold caches and page faults on the rotating packet sets
	for i in $(seq 0 $((nc - 1))); do
		c=${CONFIGS[$(((i + r) % nc))]}
		BPFRT_JIT_PASSES=$c taskset -c "$CPU" "$T/bench" "$T/progs" jit |
			sed -n "s/^RES jit /$c /p" >>"$raw"
	done
done

echo "## JIT optimisation passes (ablation)"
echo
echo "The jit engine with every pass, with none, and with all but one"
echo "(\`BPFRT_JIT_PASSES=-NAME\`); $REPS interleaved repetitions (each starting with the next"
echo "configuration) pinned to CPU $CPU, ns per"
echo "run as median [min]; the ratio is the median against \"all\" (above 1: the pass pays)."
echo "The map workload's hash map has a zero seed (BPF_F_ZERO_SEED): the same buckets in"
echo "every process."
echo "Passes:"
echo
sed -n 's/^PASS(\([a-z0-9_]*\), "\(.*\)")$/- `\1`: \2/p' src/jit/x86_64/passes.def
echo
python3 - "$raw" "${CONFIGS[@]}" <<'EOF'
import statistics, sys
raw, configs = sys.argv[1], sys.argv[2:]
runs = {}
order = []
for line in open(raw):
    c, wl, ns = line.split()
    if wl not in order:
        order.append(wl)
    runs.setdefault((c, wl), []).append(float(ns))
print("| workload | " + " | ".join(configs) + " |")
print("|---|" + "---|" * len(configs))
for wl in order:
    base = statistics.median(runs.get(("all", wl), [0])) or 1
    cells = []
    for c in configs:
        v = runs.get((c, wl))
        if not v:
            cells.append("–")
            continue
        med = statistics.median(v)
        ratio = "" if c == "all" else f" ({med / base:.2f}×)"
        cells.append(f"{med:.1f} [{min(v):.1f}]{ratio}")
    print(f"| {wl} | " + " | ".join(cells) + " |")
EOF

if [ "${JIT_PASSES_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null; then
	ir() { # CONFIG WORKLOAD RUNS: instructions inside batch() (since bench calls a
		# context-free JIT program through bpfrt_vm_native(), bpfrt_vm_run counts none of
		# its runs); the map workload runs through BPF_PROG_TEST_RUN: inside
		# brt_vm_run_opts, the runs only.  (Counting
		# all of bpfrt_bpf took in the program load and the map fill, which differ
		# between processes - the map's random hash seed - by more than 1000 runs do:
		# session 9's hash row came out -244.)  The first run's JIT compile is in both
		# counts and cancels; BENCH_ZERO_SEED gives both processes the same buckets.
		local cg="$T/cg.out" fn=batch
		[ "$2" = hash ] && fn=brt_vm_run_opts
		BPFRT_JIT_PASSES=$1 BENCH_RUNS=$3 BENCH_WORKLOADS=$2 valgrind --tool=callgrind \
			--toggle-collect=$fn --callgrind-out-file="$cg" \
			"$T/bench" "$T/progs" jit >/dev/null 2>&1
		callgrind_annotate "$cg" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
	}
	echo
	echo "x86 instructions per run (callgrind, load-independent; ratio to \"all\"):"
	echo
	hdr="| workload |"
	for c in "${CONFIGS[@]}"; do hdr="$hdr $c |"; done
	echo "$hdr"
	echo "|---|$(printf -- '---|%.0s' "${CONFIGS[@]}")"
	for w in flow1 flow6 rot6 loop helpers hash; do
		line="| $w |"
		base=
		for c in "${CONFIGS[@]}"; do
			n=$(( ($(ir "$c" $w 2000) - $(ir "$c" $w 1000)) / 1000 ))
			[ -z "$base" ] && base=$n
			if [ "$c" = all ]; then
				line="$line $n |"
			else
				line="$line $n ($(python3 -c "print(f'{$n / max($base, 1):.3f}')")×) |"
			fi
		done
		echo "$line"
	done
fi
exit 0
