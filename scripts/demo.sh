#!/usr/bin/env bash
# The main job: set up, build (release preset), and run the demo scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-packages.sh
source scripts/ccache-env.sh
# Debian sid's PyTorch 2.x, in a root made once per machine (debootstrap, a few minutes), made
# while the build runs.
roots_log=$(mktemp)
scripts/torch-roots.sh ensure sid >"$roots_log" 2>&1 &
roots=$!
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

echo
echo "== dscope core (no debugger): every thread's dispatch state and the crash signature, then as JSON"
build/release/cli/dscope core "$core" "$sample"
build/release/cli/dscope core --json "$core" "$sample" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
print("JSON record %s %s: %d thread(s), signature.line = %s" % (r["schema"], r["version"], len(r["summary"]["threads"]),
                                                              r["summary"]["signature"]["line"]))'
rm -rf "$work"

echo
echo "== real PyTorch (Debian's 1.13, no debug info): a Python process read by gdb and lldb-16 from memory"
torch_out=$(mktemp -d)
/usr/bin/python3 tests/torch/oracle_program.py "$torch_out/oracle.txt" > "$torch_out/stdout" 2>&1 &
torch_pid=$!
for _ in $(seq 120); do grep -q ready "$torch_out/stdout" 2>/dev/null && break; sleep 0.5; done
tensor=$(sed -n 's/^tensor a id=\([^ ]*\) .*/\1/p' "$torch_out/oracle.txt")
echo "(a tensor with requires_grad at hex(id(t)) = $tensor; torch._C._dispatch_keys says $(sed -n 's/^tensor a [^ ]* [^ ]* //p' "$torch_out/oracle.txt"))"
gdb -nx -batch -iex 'set auto-load safe-path /' -ex 'set debuginfod enabled off' -x build/release/gdb/dscope-gdb.py \
  -p "$torch_pid" -ex "keyset $tensor" -ex 'op-table aten::mm --key AutogradCPU' -ex 'keyset --tls' 2>&1 \
  | sed -n '/^DispatchKeySet/,/^\[Inferior/p' | grep -v '^\[Inferior'
echo "-- lldb-16, the same commands:"
lldb-16 -b -O "plugin load build/release/lldb/libdscope_lldb.so" -p "$torch_pid" -o "keyset $tensor" \
  -o 'op-table aten::mm --key AutogradCPU' -o 'keyset --tls' -o detach 2>&1 | grep -v '^(lldb)\|^Process\|^\*\|^ *frame\|^Executable\|^Architecture'
echo "-- dscope pid (no debugger; the process is stopped for the read and resumed): the same TLS"
build/release/cli/dscope pid "$torch_pid" keyset --tls
kill "$torch_pid"
rm -rf "$torch_out"

echo
echo "== real PyTorch 2.x in a container (Debian sid's root: its own mount and pid namespaces), read from the host"
wait "$roots" || { cat "$roots_log"; exit 1; }
root=$(scripts/torch-roots.sh dir sid)
mkdir -p "$root/tmp/dscope-demo"
cp tests/torch/oracle_program.py "$root/tmp/dscope-demo/"
scripts/torch-roots.sh run sid python3 /tmp/dscope-demo/oracle_program.py /tmp/dscope-demo/oracle.txt \
  > "$root/tmp/dscope-demo/stdout" 2>&1 &
for _ in $(seq 240); do grep -q ready "$root/tmp/dscope-demo/stdout" 2>/dev/null && break; sleep 0.5; done
# The host's pid of the container's Python: the process whose root is the container's.
container_pid=$(for p in $(pgrep -f /tmp/dscope-demo/oracle_program.py); do
  [ "$(readlink "/proc/$p/root")" = "$root" ] && echo "$p"; done | tail -1)
tensor=$(sed -n 's/^tensor a id=\([^ ]*\) .*/\1/p' "$root/tmp/dscope-demo/oracle.txt")
echo "(torch $(cat "$root/.dscope-root") in the container; tensor a: torch._C._dispatch_keys says $(sed -n 's/^tensor a [^ ]* [^ ]* //p' "$root/tmp/dscope-demo/oracle.txt"))"
build/release/cli/dscope pid "$container_pid" keyset "$tensor"
build/release/cli/dscope pid "$container_pid" op-table aten::mm --key AutogradCPU
kill "$container_pid"
rm -rf "$root/tmp/dscope-demo"
