#!/bin/bash
# Install the Debian 12 packages bpfrt needs to build and test (root or sudo).
set -euo pipefail
PKGS="build-essential cmake pkg-config python3 clang llvm lld libelf-dev libpcap-dev libcapstone-dev linux-libc-dev libclang-rt-14-dev zlib1g-dev libbpf-dev bpftool tcpdump groff-base man-db gcc-bpf"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
