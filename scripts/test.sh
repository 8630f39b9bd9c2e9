#!/usr/bin/env bash
# Runs every test: set up, then build and ctest each preset (release, debug, asan, tsan, clang 14).
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

for p in "${presets[@]}"; do
  echo "== preset $p"
  cmake --preset "$p" >/dev/null
  cmake --build --preset "$p"
  ctest --preset "$p" -j2
  # The crash tests write a preset's cores (about 1 GB) anew on every run: five presets' cores
  # at once can fill a small CI disk.
  rm -rf "build/$p/cores"
done
