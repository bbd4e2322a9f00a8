#!/usr/bin/env bash
# The test suite that CI runs (.ci/run):
#   1. scripts/setup.sh (installs packages only when some are missing);
#   2. a Release build in build/ with warnings as errors, and every ctest test;
#   3. an ASan + UBSan build in build-asan/ that runs the unit tests, the command-line bad-input
#      tests and a subset of the ONNX conformance cases (DLC_ASAN_CONFORMANCE="FILTER …";
#      "all" runs every case).
# JOBS sets the build and test parallelism (default: all cores). --no-asan skips step 3.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=${JOBS:-$(nproc)}
asan=1
for arg in "$@"; do
  case "$arg" in
    --no-asan) asan=0 ;;
    *) echo "error: test.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

step() { echo; echo "=== $* ($(date +%H:%M:%S))"; }

step setup
bash scripts/setup.sh

step "release build (build/, -Werror)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLC_WERROR=ON
cmake --build build -j "$jobs"

step "tests (build/)"
# Without a GPU, dlc_cuda_tests' CudaTraining cases only compile their CUDA plans and skip; the
# emulated device's run of the same file (Emulated.Parity/CudaTraining.*) compiles the same plans
# and trains them, so the skipping copies are left out there.
no_gpu=()
nvidia-smi -L > /dev/null 2>&1 || no_gpu=(-E '^Parity/CudaTraining')
ctest --test-dir build --output-on-failure -j "$jobs" "${no_gpu[@]}"

[ "$asan" = 1 ] || exit 0

step "ASan + UBSan build (build-asan/)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDLC_SANITIZE=ON \
  -DDLC_BUILD_BENCHMARKS=OFF
asan_targets=(dlc dlc_unit_tests onnx_conformance)
# The CUDA tests exist where the CUDA Toolkit is found; ctest would report them as NOT_BUILT.
# (The target list is read whole first: `ninja … | grep -q` under pipefail fails when grep exits
# before ninja has written everything.)
all_targets=$(ninja -C build-asan -t targets all 2> /dev/null)
# Under the sanitizers the emulated CUDA kernels also check that they stay inside their buffers.
for target in dlc_cuda_tests dlc_emulated_cuda_tests; do
  if grep -q "^$target:" <<< "$all_targets"; then
    asan_targets+=("$target")
  fi
done
cmake --build build-asan -j "$jobs" --target "${asan_targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
step "unit and bad-input tests under sanitizers"
# The benchmark script's smoke run, the CUDA compiles of the backend suite and the CUDA training
# parity cases (which, without a GPU, compile every parity model's CUDA plan and skip) add nothing
# under sanitizers that cli_cuda_compile and cli_cuda_compile_resnet18 do not (the same compile),
# and would take minutes there. The NVRTC compile of every kernel kind (CudaCodegenCompile.
# CompilesForSm90, about 7 minutes under the sanitizers) runs NVRTC, which is not instrumented, on
# sources the emitter tests build under the sanitizers too. The kernel tests on the emulated
# device build each kernel with the host compiler, uninstrumented; their binaries (the GPU tests'
# and the conformance runner's) are not built here.
ctest --test-dir build-asan --output-on-failure -j "$jobs" \
  -E '^(onnx_conformance|onnx_conformance_cuda_emulated|cli_gpu_train_bench_smoke|cli_cuda_compile_conformance|cli_conformance_plans_cuda|Parity/CudaTraining.*|AllKinds/CudaCodegenCompile\.CompilesForSm90/.*|dlc_emulated_gpu_tests_NOT_BUILT)$'

step "conformance subset under sanitizers"
filters=${DLC_ASAN_CONFORMANCE:-test_add test_relu test_gemm test_matmul test_conv test_reshape test_slice \
test_concat test_softmax test_reduce_mean test_maxpool test_batchnorm test_gather_0 test_transpose test_Linear \
test_resize test_lstm test_gru test_rnn test_scatter test_gathernd test_onehot test_depthtospace test_lrn test_if test_maxunpool test_reversesequence test_top_k}
if [ "$filters" = all ]; then
  build-asan/tests/conformance/onnx_conformance --known-failures tests/conformance/known_failures
else
  for f in $filters; do
    echo "--- filter $f"
    build-asan/tests/conformance/onnx_conformance --known-failures tests/conformance/known_failures --filter "$f" ||
      { echo "error: conformance cases matching '$f' fail under sanitizers" >&2; exit 1; }
  done
fi
step "all tests passed"
