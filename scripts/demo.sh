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
  "$sample" || true   # not the last command, so bash keeps this shell, which reports the crash in one line
) 2>&1 | awk '
  /^ *[0-9]+# / { if (++frames <= 6) print; else more++; next }
  more { printf "  ... %d more native frames\n", more; more = 0 }
  { print }
  END { if (more) printf "  ... %d more native frames\n", more }' || true   # the crash summary, 6 native frames
core=$(ls "$work"/core* 2>/dev/null | head -1)
if [ -z "$core" ]; then
  echo "no core file written (check /proc/sys/kernel/core_pattern)"
  exit 1
fi
echo "core file: $core"

echo
echo "== gdb on that core: dispatch-trace (from the dispatch records; compare with 'bt' on 200 000 frames)"
gdb -nx -batch -iex 'set auto-load safe-path /' -x build/release/gdb/dscope-gdb.py -ex dispatch-trace \
  "$sample" "$core" 2>&1 | sed -n '/^thread tid/,$p'

echo
echo "== lldb-16 on the same core: the same command, the same text (the DispatchScope LLDB plugin)"
lldb-16 -b -O "plugin load build/release/lldb/libdscope_lldb.so" -o dispatch-trace -c "$core" "$sample" 2>&1 \
  | sed -n '/^thread tid/,$p'
rm -rf "$work"
