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
	local a line='$'

	for a in "$@"; do
		case $a in *[[:space:]]*) line="$line \"$a\"" ;; *) line="$line $a" ;; esac
	done
	echo "$line"
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
if has_cmd jit && [ -f "$out/classifier.bin" ]; then
	echo
	show ./build/bpfrt jit "$out/classifier.bin" | head -n 26 || true
	echo "... (x86-64 code for every instruction: bpfrt jit)"
fi
# One IPv4/TCP packet to port 443, as hex for --mem.
pkt="02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 00 00 32 00 00 00 00 40 06 00 00"
pkt="$pkt 0a 00 00 01 0a 00 00 02 30 39 01 bb 00 00 00 00 00 00 00 00 50 02 00 00 00 00"
if has_cmd run; then
	for engine in checked interp jit; do
		echo
		show ./build/bpfrt run examples/classifier.s --engine "$engine" --repeat 1000000 \
			--mem "$pkt" || true
	done
fi
if has_cmd filter; then
	# A capture of 1000 packets: TCP/UDP to a handful of ports (python3: scripts/deps.sh).
	python3 - "$out/sample.pcap" <<'PY'
import struct, sys
out = open(sys.argv[1], "wb")
out.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
for i in range(1000):
    proto, dport = (6, 443) if i % 3 == 0 else (17, 53) if i % 3 == 1 else (6, 22 + i % 5)
    l4 = struct.pack(">HH", 40000 + i, dport) + bytes(16 if proto == 6 else 4)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), i, 0, 64, proto, 0,
                     bytes([10, 0, 0, 1 + i % 7]), bytes([10, 0, 1, 1]))
    frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + ip + l4
    out.write(struct.pack("<IIII", i, 0, len(frame), len(frame)) + frame)
PY
	echo
	show ./build/bpfrt filter --dump 'tcp dst port 443' "$out/sample.pcap" || true
	for engine in interp jit libpcap; do
		echo
		show ./build/bpfrt filter --engine "$engine" 'tcp dst port 443 or udp port 53' \
			"$out/sample.pcap" || true
	done
fi
if has_cmd object && command -v clang >/dev/null; then
	# C compiled by clang for eBPF: the benchmark's flow dissector (bench/progs/).
	echo
	show clang -O2 -g -target bpf -mcpu=v3 -ffreestanding -c bench/progs/progs.bpf.c \
		-o "$out/progs.bpf.o"
	echo
	show ./build/bpfrt object show "$out/progs.bpf.o"
	llvm-objcopy -O binary --only-section=raw_flow "$out/progs.bpf.o" "$out/flow.bin"
	if has_cmd verify; then
		# The XDP build of the same dissector through the verifier (Linux 6.18 rules).
		llvm-objcopy -O binary --only-section=xdp_flow "$out/progs.bpf.o" "$out/xdp_flow.bin"
		echo
		show ./build/bpfrt verify --type xdp "$out/xdp_flow.bin" | tail -n 4 || true
		printf 'ldxdw %%r0, [%%r1+4096]\nexit\n' >"$out/bad.s"
		./build/bpfrt asm "$out/bad.s" -o "$out/bad.bin"
		echo
		echo "# a program reading 8 bytes at offset 4096 of its XDP context ($out/bad.s):"
		show ./build/bpfrt verify --type xdp "$out/bad.bin" || true
	fi
	for engine in checked interp jit; do
		echo
		show ./build/bpfrt run "$out/flow.bin" --engine "$engine" --repeat 1000000 \
			--mem "$pkt" || true
	done
fi
if has_cmd prog && command -v clang >/dev/null; then
	# A C program as users write it (tests/progs/xdp_parse.bpf.c): loaded, verified, shown
	# with its source lines, compiled by the JIT and test-run on the packet above.
	inc=/usr/include/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
	echo
	show clang -O2 -g -target bpf -I"$inc" -Itests/progs -c tests/progs/xdp_parse.bpf.c \
		-o "$out/xdp_parse.bpf.o"
	echo
	show ./build/bpfrt prog load "$out/xdp_parse.bpf.o"
	echo
	show ./build/bpfrt prog dump xlated "$out/xdp_parse.bpf.o" parse linum
	echo
	show ./build/bpfrt prog dump jited "$out/xdp_parse.bpf.o" parse | head -n 14 || true
	echo "... (x86-64 code under each instruction: bpfrt prog dump jited)"
	printf "$(echo "$pkt" | sed -E 's/([0-9a-f]{2}) ?/\\x\1/g')" >"$out/tcp443.bin"
	echo
	echo "# the TCP packet above (protocol 6): XDP_DROP (1); a million runs, mean time"
	show ./build/bpfrt prog run "$out/xdp_parse.bpf.o" parse data_in "$out/tcp443.bin" \
		repeat 1000000 || true
	echo
	show ./build/bpfrt -p prog run "$out/xdp_parse.bpf.o" parse data_in "$out/tcp443.bin" || true
fi
