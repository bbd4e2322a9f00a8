#!/usr/bin/env bash
# Fuzzes the ONNX importer with libFuzzer for a bounded time.
#
#   scripts/fuzz_import.sh [SECONDS] [LIBFUZZER_ARGS...]    (default 60 seconds)
#
# Configures build-fuzz/ with clang (-DDLC_FUZZ=ON: -fsanitize=fuzzer,address,undefined), builds
# tests/fuzz/import_fuzzer, seeds build-fuzz/fuzz/corpus with model.onnx files of the ONNX
# backend tests, and runs. Crashes land in build-fuzz/fuzz/artifacts/; reproduce one with
#   build-fuzz/tests/fuzz/import_fuzzer build-fuzz/fuzz/artifacts/crash-…
# DLC_FUZZ_STRICT=1 also reports std::exceptions other than dlc::Error. JOBS sets build jobs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shift || true
build=${DLC_FUZZ_BUILD:-$root/build-fuzz}
testdata=${DLC_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DDLC_FUZZ=ON \
  -DDLC_BUILD_BENCHMARKS=OFF -DDLC_ENABLE_CUDA=OFF >/dev/null
ninja -C "$build" -j "${JOBS:-$(nproc)}" import_fuzzer

corpus=$build/fuzz/corpus
artifacts=$build/fuzz/artifacts
mkdir -p "$corpus" "$artifacts"
# Seeds: a spread of ops with shape operands, initializers and attributes.
for pattern in test_add test_relu test_reshape_ test_conv_ test_gemm_ test_slice test_concat \
               test_constantofshape test_shape test_gather_0 test_squeeze test_unsqueeze test_transpose \
               test_split test_pad test_matmul test_batchnorm test_maxpool_2d test_softmax test_reduce_sum \
               test_cast_ test_expand test_tile test_range test_where test_flatten test_clip; do
  for model in "$testdata"/node/"$pattern"*/model.onnx; do
    [ -f "$model" ] || continue
    seed=$corpus/$(basename "$(dirname "$model")").onnx
    [ -f "$seed" ] || cp "$model" "$seed"
  done
done
echo "fuzz_import.sh: $(ls "$corpus" | wc -l) corpus files; fuzzing for ${seconds}s"

"$build/tests/fuzz/import_fuzzer" "$corpus" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
  -malloc_limit_mb=2048 -artifact_prefix="$artifacts/" -print_final_stats=1 "$@"
