// Dropout kernels on the CPU kernel's Philox stream (dropout_emitter.h).
#include "codegen/cuda/dropout_emitter.h"

#include <fmt/format.h>

#include <string>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "codegen/cuda/philox_source.h"
#include "dlc/error.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

namespace {

// runtime/cpu/philox.h as NVRTC source: its <cstdint> (NVRTC has none) becomes the two typedefs
// it uses, and `#pragma once` (a warning in a main file) goes.
std::string philox_device_source() {
  std::string s = kPhiloxSource;
  for (const char* line : {"#pragma once\n", "#include <cstdint>\n"}) {
    const size_t at = s.find(line);
    if (at == std::string::npos) throw Error(fmt::format("philox.h has no '{}' line to replace", line));
    s.erase(at, std::string(line).size());
  }
  return "typedef unsigned int uint32_t;\ntypedef unsigned long long uint64_t;\n" + s;
}

constexpr const char* kKernel = R"(
using Index = ${INDEX};
using T = ${T};
constexpr Index kNumel = ${NUMEL};
constexpr Index kBlocks = (kNumel + 3) / 4;
constexpr float kRatio = ${RATIO};
constexpr float kScale = ${SCALE};  // 1 / (1 - ratio) rounded to T
constexpr unsigned long long kSeed = ${SEED}ull;

extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    ${PARAMS}) {
  const unsigned long long offset = ${OFFSET};
  const Index stride = Index(gridDim.x) * 256;
  for (Index b = Index(blockIdx.x) * 256 + Index(threadIdx.x); b < kBlocks; b += stride) {
    const dlc::rng::Philox4x32Block bits = dlc::rng::philox_block(kSeed, (unsigned long long)b, offset);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const Index i = b * 4 + k;
      if (i >= kNumel) break;
      const bool keep = dlc::rng::uniform_from_bits(bits.v[k]) >= kRatio;
      y[i] = dlc_from_float<T>(keep ? dlc_to_float(x[i]) * kScale : 0.0f);
${MASK}    }
  }
}
)";

}  // namespace

KernelSource emit_dropout(const DropoutSpec& spec) {
  require_storage_float(spec.dtype, "CUDA Dropout");
  if (!(spec.ratio >= 0 && spec.ratio < 1))
    throw Error(fmt::format("CUDA Dropout: ratio {} is not in [0, 1)", spec.ratio));
  // The CPU kernel's scale: T(1 / (1 - ratio)).
  const double scale = Tensor::from_double(spec.dtype, {1.0 / (1.0 - spec.ratio)}, {}).as_double()[0];
  std::vector<std::string> params = {"const T* __restrict__ x"};
  std::vector<std::string> names = {"x"};
  if (spec.offset_dtype) {
    params.push_back(fmt::format("const {}* __restrict__ offset_in", cuda_type(*spec.offset_dtype)));
    names.push_back("offset");
  }
  params.push_back("T* __restrict__ y");
  names.push_back("y");
  if (spec.mask) {
    params.push_back("unsigned char* __restrict__ mask");
    names.push_back("mask");
  }
  // The CPU kernel's integer_value: a float offset truncates.
  std::string offset = "0ull";
  if (spec.offset_dtype)
    offset = is_storage_float(*spec.offset_dtype) ? "(unsigned long long)(long long)dlc_to_float(*offset_in)"
                                                  : "(unsigned long long)(long long)(*offset_in)";
  const std::string detail = fmt::format("{}_seed{}{}{}", spec.numel, spec.seed, spec.mask ? "_mask" : "",
                                         spec.offset_dtype ? "_offset" : "");
  const std::string name = kernel_name("dropout", spec.dtype, detail);
  std::string src = fmt::format("// dlc dropout kernel {}: {} elements, ratio {}, Philox seed {}.\n", name,
                                spec.numel, double_literal(spec.ratio), spec.seed);
  std::vector<DType> types = {spec.dtype};
  if (spec.offset_dtype) types.push_back(*spec.offset_dtype);
  src += device_prelude({types, false, false});
  src += philox_device_source();
  src += fill(kKernel, {{"INDEX", std::string(index_type(spec.numel + 3))},
                        {"T", std::string(cuda_type(spec.dtype))},
                        {"NUMEL", fmt::format("{}", spec.numel)},
                        {"RATIO", float_literal(spec.ratio)},
                        {"SCALE", float_literal(scale)},
                        {"SEED", fmt::format("{}", spec.seed)},
                        {"NAME", name},
                        {"PARAMS", fmt::format("{}", fmt::join(params, ", "))},
                        {"OFFSET", offset},
                        {"MASK", spec.mask ? "      mask[i] = keep ? 1 : 0;\n" : ""}});
  KernelSource ks = KernelSource::named("dropout", name, std::move(src));
  ks.entries.push_back({name, launch_1d(grid_for((spec.numel + 3) / 4, 256), 256), names});
  return ks;
}

}  // namespace dlc::codegen::cuda
