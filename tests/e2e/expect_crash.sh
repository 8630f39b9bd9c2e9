#!/usr/bin/env bash
# Runs a sample that must die of a signal, the way a user gets a post-mortem: kernel core
# files on (ulimit -c unlimited; coredump_filter 0x37 so read-only file pages are in the
# core too, which LLDB needs). Checks the exit status, the crash handler's summary and that
# a real ELF core file was written. Keeps the core in $DSCOPE_CORE_DIR/<name>.core if set.
# Usage: expect_crash.sh NAME EXPECTED_STATUS BINARY [ARGS...] -- PATTERN...   (exit 77: skip)
set -u
name=$1 status=$2 binary=$3
shift 3
args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
shift
pattern=$(cat /proc/sys/kernel/core_pattern)
if [ "${pattern:0:1}" = "|" ]; then
  echo "SKIP: kernel.core_pattern pipes cores to a program ($pattern); no core file can be checked"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
(
  ulimit -c unlimited
  echo 0x37 > /proc/self/coredump_filter
  exec "$binary" "${args[@]}"
) > out.txt 2> err.txt
rc=$?
cat out.txt err.txt | head -60
fail=0
if [ "$rc" -ne "$status" ]; then echo "FAIL: exit status $rc, expected $status"; fail=1; fi
for p in "$@"; do
  if ! grep -qF -- "$p" out.txt err.txt; then echo "FAIL: missing in the output: $p"; fail=1; fi
done
core=$(ls -t core* 2>/dev/null | head -1)
if [ -z "$core" ]; then
  echo "FAIL: no core file written (core_pattern: $pattern)"
  fail=1
elif [ "$(head -c 4 "$core" | od -An -c | tr -d ' ')" != '177ELF' ] || [ "$(od -An -tu2 -j16 -N2 "$core" | tr -d ' ')" != 4 ]; then
  echo "FAIL: $core is not an ELF core file"
  fail=1
else
  echo "core: $core ($(stat -c %s "$core") bytes)"
  if [ -n "${DSCOPE_CORE_DIR:-}" ]; then mkdir -p "$DSCOPE_CORE_DIR" && mv "$core" "$DSCOPE_CORE_DIR/$name.core"; fi
fi
exit $fail
