#!/usr/bin/env bash
# The main job (the README's first command): install what the build needs, build dlc, convert
# Debian's Fashion-MNIST to .npz, train the shipped CNN (models/fashion_cnn.onnx) for one epoch
# and report test accuracy, samples/s and where the trained model went.
# Environment: EPOCHS (default 1), BATCH (default 64), LR (Adam, default 0.001), THREADS (default: cores),
# OUT (default out/).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${OUT:-out}
mkdir -p "$out"

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLC_BUILD_TESTS=OFF > "$out/cmake.log"
cmake --build build -j "$(nproc)" --target dlc

if [ ! -f "$out/fashion_train.npz" ] || [ ! -f "$out/fashion_test.npz" ]; then
  /usr/bin/python3 scripts/fashion_mnist_to_npz.py "$out"
fi

build/tools/dlc train models/fashion_cnn.onnx --data "$out/fashion_train.npz" --eval "$out/fashion_test.npz" \
  --batch "${BATCH:-64}" --epochs "${EPOCHS:-1}" --optimizer adam --lr "${LR:-0.001}" --shuffle --seed 0 \
  --threads "${THREADS:-$(nproc)}" --log "$out/train_log.jsonl" --export "$out/fashion_cnn_trained.onnx"
