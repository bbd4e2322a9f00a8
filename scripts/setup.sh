#!/usr/bin/env bash
# Installs the Debian packages dlc needs to build and test. Idempotent: when every package is
# already installed it does nothing (no apt-get update). Runs as root, or through sudo.
#
#   scripts/setup.sh               build + test dependencies
#   scripts/setup.sh --with-torch  also PyTorch (only to regenerate references and benchmarks)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang llvm-14-tools
  libonnx-dev libprotobuf-dev protobuf-compiler libfmt-dev libgtest-dev libgmock-dev libdnnl-dev
  ocl-icd-opencl-dev  # dnnl's CMake package requires OpenCL (its GPU runtime), headers included
  libcli11-dev nlohmann-json3-dev libzip-dev libbenchmark-dev
  libonnx-testdata dataset-fashion-mnist python3-onnx python3-numpy
  libomp-dev libclang-rt-14-dev  # OpenMP and libFuzzer for clang builds (scripts/fuzz_import.sh)
)

for arg in "$@"; do
  case "$arg" in
    --with-torch) packages+=(python3-torch python3-torchvision) ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "error: setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all ${#packages[@]} packages are installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "error: setup.sh: not root and no sudo; install as root: ${missing[*]}" >&2
  exit 1
fi

echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Update the package lists only when they are absent or a package cannot be found in them.
if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
  "${sudo[@]}" apt-get update
fi
if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
