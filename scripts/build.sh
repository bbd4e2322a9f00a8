#!/usr/bin/env bash
# Configures and builds dlc in one of the standard build folders.
#
#   scripts/build.sh [release|debug|asan] [TARGET...]
#     release  build/       Release, warnings as errors (what CI builds)
#     debug    build-debug/ Debug
#     asan     build-asan/  RelWithDebInfo (-O1 -g1) with AddressSanitizer + UndefinedBehaviorSanitizer
# JOBS sets the number of build jobs (default: all cores); BUILD_DIR overrides the folder (e.g. a
# second release folder beside build/). ccache is used where it is installed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kind=${1:-release}
shift || true
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=Release -DDLC_WERROR=ON) ;;
  debug) dir=build-debug; flags=(-DCMAKE_BUILD_TYPE=Debug) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DDLC_SANITIZE=ON -DDLC_BUILD_BENCHMARKS=OFF) ;;
  *) echo "error: build.sh: unknown build kind '$kind' (release, debug or asan)" >&2; exit 2 ;;
esac
dir=${BUILD_DIR:-$dir}
if command -v ccache > /dev/null; then
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
cmake -S "$root" -B "$root/$dir" -G Ninja "${flags[@]}"
cmake --build "$root/$dir" -j "${JOBS:-$(nproc)}" ${1:+--target "$@"}
