#!/usr/bin/env bash
# Debian roots that hold real PyTorch 2.x, the way a container image does: trixie (2.6) and sid
# (whatever torch sid has today), each with python3-torch, libtorch-dev and g++.
#
#   scripts/torch-roots.sh ensure [SUITE...]   # make the missing roots (default: trixie sid)
#   scripts/torch-roots.sh dir SUITE           # print the root's folder
#   scripts/torch-roots.sh run SUITE CMD...    # run CMD inside the root as a container runs it:
#                                              # own mount and pid namespaces, the root as /, /proc
#
# `run` enters the root with chroot, so the host still reaches the root's files under its own paths
# (ROOT/usr/lib/...), and /proc/PID/maps names them so. The tests of finding a container's files
# (tests/torch/container_test.py) pivot_root as docker and podman do, which hides them.
#
# Roots live outside the checkout (DSCOPE_ROOTS, default ~/.cache/dscope/roots) and are made only
# when missing: about 5 minutes and 1.7 GB each. A root is complete once ROOT/.dscope-root exists
# (it names the torch version); a half-made root is made again from scratch.
set -euo pipefail

ROOTS=${DSCOPE_ROOTS:-$HOME/.cache/dscope/roots}
MIRROR=${DSCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES=python3-torch,libtorch-dev,g++

root_of() { echo "$ROOTS/$1"; }

make_root() {
  local suite=$1 root tmp
  root=$(root_of "$suite")
  [ -f "$root/.dscope-root" ] && return 0
  command -v debootstrap >/dev/null || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
  }
  tmp="$root.partial"
  rm -rf "$tmp"
  mkdir -p "$ROOTS"
  echo "making the $suite root (debootstrap, a few minutes) in $root"
  # sid's Release may be signed by a key newer than this host's keyring: its packages are still
  # checked against the Release's hashes.
  local check=()
  debootstrap --help | grep -q -- --no-check-gpg && [ "$suite" = sid ] && check=(--no-check-gpg)
  debootstrap --variant=minbase "${check[@]}" --include="$PACKAGES" "$suite" "$tmp" "$MIRROR" \
    >"$ROOTS/$suite.log" 2>&1 || { tail -5 "$ROOTS/$suite.log" >&2; echo "dscope: debootstrap $suite failed (log: $ROOTS/$suite.log)" >&2; return 1; }
  # Nothing in the root is mounted once debootstrap is done; apt's caches are not needed.
  rm -rf "$tmp"/var/cache/apt/archives/*.deb
  chroot "$tmp" dpkg-query -W -f='${Version}\n' python3-torch >"$tmp/.dscope-root"
  mv "$tmp" "$root"
  echo "$suite root ready: python3-torch $(cat "$root/.dscope-root")"
}

case "${1:-}" in
ensure)
  shift
  suites=("$@")
  [ ${#suites[@]} -eq 0 ] && suites=(trixie sid)
  # The roots are independent downloads: make them side by side.
  pids=()
  for s in "${suites[@]}"; do make_root "$s" & pids+=($!); done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  exit $rc
  ;;
dir)
  root_of "$2"
  ;;
run)
  suite=$2; shift 2
  root=$(root_of "$suite")
  [ -f "$root/.dscope-root" ] || { echo "dscope: no $suite root; run scripts/torch-roots.sh ensure $suite" >&2; exit 1; }
  exec unshare --mount --pid --fork --mount-proc="$root/proc" chroot "$root" "$@"
  ;;
*)
  sed -n '2,12p' "$0" >&2
  exit 2
  ;;
esac
