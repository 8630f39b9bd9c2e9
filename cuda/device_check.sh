#!/usr/bin/env bash
# The CUDA backend's GPU checks on a machine that has a GPU but not this project's build
# dependencies (the lent H100/H200 image has nvcc, CMake and cuda-gdb, no gdb, Boost.Stacktrace
# or doctest): build here, carry the build folder there, run it there.
#
#   cuda/device_check.sh prepare   # here: build/cuda-device (no LLDB plugin, no object files)
#   cuda/device_check.sh run       # there: the CUDA tests and the samples' CUDA paths, the GDB
#                                  # front end in cuda-gdb on them, cuda_bench, the image's
#                                  # PyTorch wheel against its own torch._C, then the whole
#                                  # GDB suite in cuda-gdb
#
# `run` works on any machine: without a usable GPU the GPU tests are skipped with the reason and
# cuda_bench prints one line; without cuda-gdb the GDB tests run in gdb.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/cuda-device
# What the device runs: the CUDA tests and bench, the samples, and what the GDB tests load.
targets=(cuda_tests cuda_bench basic_dispatch autocast_missing infinite_redispatch missing_kernel multithread
  op_catalog tls_leak private_backend printers_program dscope_inspect dscope_inspect_foreign)

case "${1:-}" in
prepare)
  # From scratch: a local `run` leaves hundreds of MB of test cores in the folder (ccache keeps
  # the rebuild short).
  rm -rf "$build"
  # /usr/bin/python3 for the test drivers: the GPU image has one too (a pyenv shim would not travel).
  cmake --preset release -B "$build" -DDSCOPE_BUILD_LLDB=OFF -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
  mkdir -p "$build/device-libs"
  # Libraries the image may lack: Boost.Stacktrace (the runtime) and elfutils (the inspect library
  # the GDB front end loads; without it every GDB test there says "GDB support not loaded").
  ldd "$build/runtime/libdscope_runtime.so" "$build/inspect/libdscope_inspect.so" |
    awk '/libboost_stacktrace|libdw\.so|libelf\.so/ {print $3}' | sort -u | xargs -I{} cp -L {} "$build/device-libs/"
  # The CUDA libraries come from the machine that runs the checks: remember which ones (cuda_bench
  # links cuBLAS, the library libdscope_cuda loads on the first mm).
  readelf -d "$build/cuda/libdscope_cuda.so" "$build/bench/cuda_bench" | sed -n 's/.*NEEDED.*\[\(libcu[a-zA-Z]*\.so\.[0-9]*\)\]/\1/p' |
    sort -u >"$build/device-libs/cuda-libraries.txt"
  # Only what runs travels (the carry limit is 64 MiB): no object files, no compiler-identification
  # leftovers, and the debug info compressed (gdb and cuda-gdb read it so).
  find "$build" -name '*.o' -delete
  find "$build" -type f \( -perm -u+x -o -name '*.so*' \) -exec sh -c \
    'for f; do head -c4 "$f" | grep -q ELF && objcopy --compress-debug-sections=zlib "$f"; done' sh {} +
  rm -rf "$build"/CMakeFiles/3.*/CompilerId* "$build/CMakeFiles/CheckCUDA"
  size_mib=$(du -sm "$build" | cut -f1)
  echo "device_check: $build is $size_mib MiB (the device call carries at most 64)"
  [ "$size_mib" -lt 64 ] || exit 1
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
  # The same for the test drivers' Python (named by absolute path too), should this image lack it.
  py=$(sed -n 's/^_\?Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt" | head -1)
  if [ ! -x "$py" ]; then
    mkdir -p "$(dirname "$py")" && ln -s "$(command -v python3)" "$py" && echo "device_check: $py is $(command -v python3)"
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
  # The GDB tests drive cuda-gdb where there is one (tests/e2e/session.py reads DSCOPE_GDB). Its
  # `cuda-gdb` wrapper runs the cuda-gdb-python3.X-tui build that matches the machine's python3
  # and falls back to one without Python when it finds no libpython: then try each build with
  # python3's library folder on the path, and say which one works.
  if command -v cuda-gdb >/dev/null; then
    cuda-gdb --version | head -1
    pylib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")' 2>/dev/null || true)
    for candidate in cuda-gdb "$(dirname "$(command -v cuda-gdb)")"/cuda-gdb-python3.*-tui; do
      for extra in "" "$pylib"; do
        version=$(LD_LIBRARY_PATH=$extra${extra:+:}$LD_LIBRARY_PATH "$candidate" -nx -batch \
          -ex 'python import sys, ctypes; print("python", sys.version.split()[0])' 2>/dev/null | sed -n 's/^python //p' || true)
        if [ -n "$version" ]; then
          export DSCOPE_GDB=$candidate LD_LIBRARY_PATH=$extra${extra:+:}$LD_LIBRARY_PATH
          echo "device_check: GDB tests in $candidate (Python $version${extra:+, libpython from $extra})"
          break 2
        fi
      done
    done
    [ -n "${DSCOPE_GDB:-}" ] || echo "device_check: no cuda-gdb build with Python here; the GDB tests run in gdb"
  fi
  ulimit -c unlimited || true  # the crash tests' cores, for the GDB suite
  status=0
  step() { echo "== device_check: $1"; shift; "$@" || { echo "== device_check: FAILED ($?)"; status=1; }; }
  # One device call has 10 minutes: a test that hangs (a debugger waiting on the GPU) stops at
  # 2, and the bench runs before the longest step so its figures come back whatever follows.
  step "CUDA tests, the samples' CUDA paths, the GDB front end on them" \
    ctest --test-dir "$src/$build" -R '^cuda|^trace_|^sample_autocast_missing$' --output-on-failure -j8 --timeout 120
  step "cuda_bench" "$src/$build/bench/cuda_bench"
  # The image's pip wheel of PyTorch: its profile made there by the probe, then every operator,
  # tensor and TLS set read live by the GDB front end against the process's own torch._C (the
  # oracle test of the Debian builds). The profile comes back under $OUT for profiles/.
  if python3 -c 'import torch' 2>/dev/null; then
    wheel=${OUT:-$PWD/$build}/wheel
    mkdir -p "$wheel/profiles"
    step "the pip wheel's PyTorch: its layout profile" \
      python3 profiles/probe/dscope-profile --python "$(command -v python3)" --output "$wheel/profiles"
    step "the pip wheel's PyTorch: every operator against torch._C, live, in ${DSCOPE_GDB:-gdb}" \
      env DSCOPE_PROFILE_PATH="$wheel/profiles:$PWD/profiles" DSCOPE_TORCH_PYTHON="$(command -v python3)" \
      python3 tests/torch/torch_oracle_test.py --gdb-script "$src/$build/gdb/dscope-gdb.py" --mode live --workdir "$wheel/oracle"
  else
    echo "device_check: no PyTorch wheel in this image's python3"
  fi
  # Not the Debian PyTorch tests: they need Debian's python3-torch, which the image does not have.
  step "the whole GDB suite in ${DSCOPE_GDB:-gdb}" \
    ctest --test-dir "$src/$build" -L gdb -LE 'cuda|torch' --output-on-failure -j8 --timeout 120
  exit $status
  ;;
*)
  echo "usage: cuda/device_check.sh prepare|run" >&2
  exit 2
  ;;
esac
