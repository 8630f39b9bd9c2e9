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
