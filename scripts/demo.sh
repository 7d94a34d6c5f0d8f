#!/bin/bash
# Install dependencies, build, and show the runtime doing real work.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
./build/bpfrt --help
