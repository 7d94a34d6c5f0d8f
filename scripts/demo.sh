#!/bin/bash
# demo.sh - install the packages, build, and show bpfrt doing real work: a packet classifier
# assembled, disassembled and run on every engine, a faulty program stopped by the checked
# engine, timings (examples/demo.c, public API only); then the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."

banner() { printf '\n== %s\n\n' "$*"; }

banner "installing packages (scripts/deps.sh)"
bash scripts/deps.sh
banner "building (cmake --preset dev, into build/)"
if ! { cmake --preset dev && cmake --build build -j"$(nproc)"; } >build.log 2>&1; then
	cat build.log
	echo "demo: build failed (log above, also in build.log)"
	exit 1
fi
rm -f build.log
echo "built: build/libbpfrt.so, build/libbpfrt.a, build/bpfrt"

banner "the library at work (build/example_demo, source examples/demo.c)"
./build/example_demo

banner "the command-line tool (build/bpfrt --help)"
./build/bpfrt --help
