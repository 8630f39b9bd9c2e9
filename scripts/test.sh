#!/usr/bin/env bash
# Runs every test: set up, then build and ctest each preset (release, debug, asan, tsan, clang 14).
# Real PyTorch 2.x runs in Debian roots (scripts/torch-roots.sh), made here when missing.
# The PyTorch tests run in release, and in clang for the libtorch programs clang builds; the
# benchmarks and the CUDA backend are built by release (and clang builds CUDA's host code); the
# sanitized presets leave the debuggers out (CMakePresets.json). Compiles go through ccache.
# Usage: scripts/test.sh [preset ...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-packages.sh
source scripts/ccache-env.sh

presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(release debug asan tsan clang)

# The PyTorch 2.x roots (release's tests run programs in them) are made while release builds:
# debootstrap mostly waits on the network. Made once per machine, outside the checkout.
roots=""
if [[ " ${presets[*]} " == *" release "* ]]; then
  roots_log=$(mktemp)
  scripts/torch-roots.sh ensure >"$roots_log" 2>&1 &
  roots=$!
fi

for p in "${presets[@]}"; do
  echo "== preset $p"
  started=$SECONDS
  cmake --preset "$p" >/dev/null
  cmake --build --preset "$p"
  built=$SECONDS
  if [ -n "$roots" ]; then
    wait "$roots" || { cat "$roots_log"; echo "dscope: the PyTorch 2.x roots could not be made (the 2.x tests will fail)"; }
    cat "$roots_log"
    roots=""
  fi
  ctest --preset "$p" -j2
  echo "== preset $p: build $((built - started)) s, tests $((SECONDS - built)) s"
  # The crash tests write a preset's cores (about 1 GB) anew on every run: five presets' cores
  # at once can fill a small CI disk.
  rm -rf "build/$p/cores"
done
