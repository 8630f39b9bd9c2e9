#!/usr/bin/env bash
# Installs the Debian 12 packages DispatchScope needs, only those that are missing.
# Never installs the unversioned `lldb` package: it would remove lldb-16.
set -euo pipefail

PACKAGES=(build-essential g++-12 clang-14 cmake ninja-build ccache gdb lldb-16 liblldb-16-dev python3-lldb-16
          libboost-stacktrace-dev doctest-dev libc6-dbg python3 libdw-dev pkg-config
          libzstd-dev liblz4-dev liblzma-dev zstd lz4 xz-utils
          libtorch-dev python3-torch python3-jsonschema debootstrap)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
