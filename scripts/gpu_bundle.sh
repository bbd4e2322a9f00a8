#!/usr/bin/env bash
# Packs, here, what scripts/gpu_check.sh needs to run on a GPU machine without building there:
# the GPU machine lent to this project has CUDA, PyTorch, CMake and ninja but none of the Debian
# packages dlc builds against (protobuf, ONNX, oneDNN, fmt, GoogleTest, …), and its device time
# is too short to spend on a build. The bundle holds the Release `dlc`, `dlc_cuda_tests` and
# `onnx_conformance` (stripped), every shared library they load except the C library's own and
# CUDA's (cudart, cuBLAS, cuDNN, NVRTC: the GPU machine's own, matched to its driver), and the
# ONNX backend cases compiled here for CUDA with their data (`onnx_conformance --device cuda
# --save-plans`: the GPU machine has no libonnx-testdata), in one compressed file:
#
#   scripts/gpu_bundle.sh            -> .gpu-bundle/bundle.tar.xz (git-ignored) and MANIFEST
#
# then, with the device tool: run(command="bash scripts/gpu_check.sh", carry=[".gpu-bundle"]).
# Built on Debian 12 (glibc 2.36): it runs where glibc is 2.36 or newer. BUILD_DIR and JOBS as in
# scripts/build.sh; the bundle must stay under the device tool's 64 MiB (with the checkout).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-build}
out=$root/.gpu-bundle
limit=$((48 * 1024 * 1024))
cd "$root"
BUILD_DIR=$build bash scripts/build.sh release dlc dlc_cuda_tests onnx_conformance

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "$build/tools/dlc" "$build/tests/dlc_cuda_tests" "$build/tests/conformance/onnx_conformance" "$stage/bin/"
strip --strip-unneeded "$stage/bin/"*
# Libraries by soname, as the loader resolved them here.
ldd "$stage/bin/dlc" "$stage/bin/dlc_cuda_tests" "$stage/bin/onnx_conformance" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r soname path; do
    case "$soname" in
      libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) ;;     # the C library
      libcuda.so.* | libcudart.so.* | libcublas*.so.* | libcudnn*.so.* | libnvrtc*.so.*) ;; # CUDA's
      *) cp -L "$path" "$stage/lib/$soname" ;;
    esac
  done
strip --strip-unneeded "$stage/lib/"* 2> /dev/null || true

# The backend cases' CUDA plans (those that compile for CUDA) with their model and data.
testdata=${DLC_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
if [ ! -d "$testdata/node" ]; then
  echo "error: gpu_bundle.sh: no ONNX backend test data at $testdata (apt-get install libonnx-testdata)" >&2
  exit 1
fi
if ! "$build/tests/conformance/onnx_conformance" --data "$testdata" --device cuda --save-plans "$stage/conformance" \
  --known-failures tests/conformance/known_failures > "$stage/conformance.log" 2>&1; then
  tail -20 "$stage/conformance.log" >&2
  echo "error: gpu_bundle.sh: compiling the backend cases for CUDA failed" >&2
  exit 1
fi

commit=$(git rev-parse --short HEAD)
dirty=""
if git status --porcelain --untracked-files=no | grep -q .; then dirty="+uncommitted changes"; fi
cat > "$stage/MANIFEST" << EOF
commit $commit$dirty
built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(ldd --version | head -1 | awk '{print $NF}')
cuda $(nvcc --version 2> /dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
cuda libraries expected there: $(ldd "$stage/bin/dlc_cuda_tests" | awk '{print $1}' | grep -E '^lib(cudart|cublas|cudnn|nvrtc)' | sort -u | tr '\n' ' ')
EOF
rm -rf "$out"
mkdir -p "$out"
grep -m1 '^conformance (' "$stage/conformance.log" >> "$stage/MANIFEST"
tar -C "$stage" -cJf "$out/bundle.tar.xz" bin lib conformance MANIFEST
cp "$stage/MANIFEST" "$out/MANIFEST"
size=$(stat -c %s "$out/bundle.tar.xz")
if [ "$size" -gt "$limit" ]; then
  echo "error: gpu_bundle.sh: $out/bundle.tar.xz is $((size >> 20)) MiB, over the $((limit >> 20)) MiB that leaves room for the checkout" >&2
  exit 1
fi
echo "gpu_bundle.sh: $out/bundle.tar.xz, $((size >> 20)) MiB ($commit$dirty): $(ls "$stage/lib" | tr '\n' ' ')"
