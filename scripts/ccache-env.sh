# Sourced by demo.sh and test.sh: the compiler cache (CMakeLists.txt) lives on the machine outside
# the checkout, so a fresh clone finds it; where it cannot be made, ccache just runs the compiler.
export CCACHE_DIR="${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dscope/ccache}"
mkdir -p "$CCACHE_DIR" 2>/dev/null && [ -w "$CCACHE_DIR" ] || export CCACHE_DISABLE=1
