#!/usr/bin/env bash
# The CUDA backend's GPU checks on a machine that has a GPU but not this project's build
# dependencies (the lent H100/H200 image has nvcc and CMake, no Boost.Stacktrace or doctest):
# build here, carry the build folder there, run it there.
#
#   cuda/device_check.sh prepare   # here: build/cuda-device, only what the checks run (~35 MB)
#   cuda/device_check.sh run       # there: ctest (CUDA tests, the samples' CUDA paths), then cuda_bench
#
# `run` works on any machine: without a usable GPU the GPU tests are skipped with the reason and
# cuda_bench prints one line.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/cuda-device
targets=(cuda_tests basic_dispatch autocast_missing cuda_bench)

case "${1:-}" in
prepare)
  cmake --preset release -B "$build" -DDSCOPE_BUILD_LLDB=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
  mkdir -p "$build/device-libs"
  cp -L "$(ldd "$build/runtime/libdscope_runtime.so" | awk '/libboost_stacktrace/ {print $3}')" "$build/device-libs/"
  # The CUDA libraries come from the machine that runs the checks: remember which ones (cuda_bench
  # links cuBLAS, the library libdscope_cuda loads on the first mm).
  readelf -d "$build/cuda/libdscope_cuda.so" "$build/bench/cuda_bench" | sed -n 's/.*NEEDED.*\[\(libcu[a-zA-Z]*\.so\.[0-9]*\)\]/\1/p' |
    sort -u >"$build/device-libs/cuda-libraries.txt"
  # Only what runs travels: no object files, no compiler-identification leftovers.
  find "$build" -name '*.o' -delete
  rm -rf "$build"/CMakeFiles/3.*/CompilerId* "$build/CMakeFiles/CheckCUDA"
  du -sh "$build"
  ;;
run)
  # The build folder names its source folder by absolute path (ctest files, RUNPATH): make that
  # path lead to this checkout.
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
  if [ "$(cd "$src" 2>/dev/null && pwd -P)" != "$(pwd -P)" ]; then
    if [ -e "$src" ]; then
      echo "device_check: $src exists and is not this checkout" >&2
      exit 1
    fi
    mkdir -p "$(dirname "$src")"
    ln -s "$(pwd -P)" "$src"
  fi
  # Boost.Stacktrace from the build machine; CUDA's libraries wherever this machine has them
  # (the toolkit, or the pip wheels beside PyTorch).
  dirs=$PWD/$build/device-libs
  places=(/usr/local/cuda/ /usr/local/ /usr/lib/ /opt/)
  places+=($(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true))
  for lib in $(sort -u "$build/device-libs/cuda-libraries.txt"); do
    found=$(find "${places[@]}" -name "$lib" 2>/dev/null | head -1 || true)
    if [ -n "$found" ]; then dirs=$dirs:$(dirname "$found"); else echo "device_check: $lib not found" >&2; fi
  done
  export LD_LIBRARY_PATH=$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi -L 2>/dev/null || echo "device_check: no nvidia-smi"
  status=0
  ctest --test-dir "$src/$build" -R '^cuda|^trace_|^sample_autocast_missing$' --output-on-failure -j8 || status=$?
  "$src/$build/bench/cuda_bench" || status=$?
  exit $status
  ;;
*)
  echo "usage: cuda/device_check.sh prepare|run" >&2
  exit 2
  ;;
esac
