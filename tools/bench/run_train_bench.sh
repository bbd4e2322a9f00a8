#!/usr/bin/env bash
# The training-step benchmark — dlc with all passes, dlc with --disable-pass fusion, PyTorch eager
# and ONNX Runtime Training, alternating — in one command:
#
#   tools/bench/run_train_bench.sh [--build build] [train_bench.py options: --models --batch
#                                   --steps --warmup --rounds --unfused-passes --threads --out --json]
#
# Runs tools/bench/train_bench.py with BUILD/tools/dlc (see its --help). Needs /usr/bin/python3
# with torch (Debian: python3-torch) and, for fashion_cnn, dataset-fashion-mnist; for the ORT
# Training peer, BUILD/bench-venv (tools/bench/setup_bench_venv.sh), whose python it then uses.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build"
if [[ "${1:-}" == "--build" ]]; then
  build="$(cd "$2" && pwd)"
  shift 2
fi
dlc="$build/tools/dlc"
[[ -x "$dlc" ]] || { echo "error: $dlc not built (scripts/build.sh release dlc)" >&2; exit 1; }
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python=/usr/bin/python3
[[ -x "$build/bench-venv/bin/python" ]] && python="$build/bench-venv/bin/python"
exec "$python" "$here/train_bench.py" --dlc "$dlc" --out "$build/train_bench" "$@"
