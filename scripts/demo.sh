#!/bin/bash
# demo.sh - install the packages, build, and show bpfrt doing real work: a packet classifier
# (examples/classifier.s) assembled, disassembled and run on every engine, a faulty program
# stopped by the checked engine, timings (examples/demo.c, public API only); then the same
# program through the bpfrt command-line tool.
set -euo pipefail
cd "$(dirname "$0")/.."

banner() { printf '\n== %s\n\n' "$*"; }
has_cmd() { ./build/bpfrt --help | grep -q "^  $1 "; }
show() {
	echo "\$ $*"
	"$@"
}

banner "installing packages (scripts/deps.sh)"
bash scripts/deps.sh
banner "building (cmake --preset dev, into build/)"
mkdir -p build
if ! { cmake --preset dev && cmake --build build -j"$(nproc)"; } >build/demo-build.log 2>&1; then
	cat build/demo-build.log
	echo "demo: build failed (log above, also in build/demo-build.log)"
	exit 1
fi
echo "built: build/libbpfrt.so, build/libbpfrt.a, build/bpfrt"

banner "the library at work: build/example_demo examples/classifier.s (source: examples/demo.c)"
./build/example_demo examples/classifier.s

banner "the command-line tool"
show ./build/bpfrt --help
out=build/demo
mkdir -p "$out"
if has_cmd asm; then
	echo
	show ./build/bpfrt asm examples/classifier.s -o "$out/classifier.bin"
	echo "($(stat -c %s "$out/classifier.bin") bytes of instructions)"
fi
if has_cmd disasm && [ -f "$out/classifier.bin" ]; then
	echo
	show ./build/bpfrt disasm --style asm "$out/classifier.bin"
fi
