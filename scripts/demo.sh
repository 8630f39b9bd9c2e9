#!/usr/bin/env bash
# The main job: set up, build (release preset), and run the demo scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-packages.sh
cmake --preset release >/dev/null
cmake --build --preset release

echo
echo "== basic_dispatch with DSCOPE_SHOW_DISPATCH_TRACE=1 (Autograd -> CPU, as in PyTorch's trace) =="
DSCOPE_SHOW_DISPATCH_TRACE=1 build/release/samples/basic_dispatch

echo
echo "== infinite_redispatch: a kernel that calls instead of redispatching (expect SIGSEGV and a core)"
sample=$PWD/build/release/samples/infinite_redispatch
work=$(mktemp -d)
(
  cd "$work"
  ulimit -c unlimited
  echo 0x37 > /proc/self/coredump_filter
  exec "$sample"
) 2>&1 | grep -v '^ *[0-9]*# ' || true   # the crash handler's summary, without the native frames
core=$(ls "$work"/core* 2>/dev/null | head -1)
echo "core file: ${core:-none written (check /proc/sys/kernel/core_pattern)}"
