// The library-call forms the CUDA runtime takes (library_call_form.h).
#include "codegen/cuda/library_call_form.h"

#include <fmt/format.h>

#include "codegen/cuda/gemm_problem.h"
#include "codegen/cuda/window_geometry.h"
#include "dlc/channels_last.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

Shape spatial_of(const Shape& dims) {
  return dims.size() > 2 ? Shape(dims.begin() + 2, dims.end()) : Shape{};
}

void check_convolution(const std::string& call, const Attrs& params, const std::string& what) {
  // (input, filter, output) of the forward convolution each call computes a part of.
  const char *input = "input0_dims", *filter = "input1_dims", *output = "output0_dims";
  if (call == "cudnn.convolution_backward_data") std::swap(input, output);  // ConvTranspose(x = dy, w)
  if (call == "cudnn.convolution_backward_filter") {                        // ConvGradFilter(dy, x) -> dw
    input = "input1_dims";
    filter = "output0_dims";
    output = "input0_dims";
  }
  window_geometry(params, operand_dims(params, input), operand_dims(params, output),
                  spatial_of(operand_dims(params, filter)), what);
}

void check_pooling(const std::string& call, const Attrs& params, const std::string& what) {
  const std::string mode = params.s("mode", "");
  if (mode != "max" && mode != "average")
    throw Error(fmt::format("{}: pooling mode '{}' is not max or average", what, mode));
  const bool backward = call == "cudnn.pooling_backward";
  if (!backward && params.has("output1_dims"))
    throw Error(fmt::format("{}: MaxPool's indices are not supported on CUDA", what));
  const Shape x = operand_dims(params, backward ? "output0_dims" : "input0_dims");
  const Shape y = operand_dims(params, backward ? "input0_dims" : "output0_dims");
  const WindowGeometry g = window_geometry(params, x, y, params.ints("kernel_shape"), what);
  for (int d : g.dilations)
    if (d != 1) throw Error(fmt::format("{}: dilated pooling is not supported on CUDA", what));
  // A max pools an explicit -inf padding; an average would count it (or not) otherwise than cuDNN.
  if (g.pads_explicitly() && mode == "average")
    throw Error(
        fmt::format("{}: average pooling whose end padding adds a result (ceil mode, SAME padding "
                    "with a stride) is not supported on CUDA",
                    what));
}

void check_batch_norm(const std::string& call, const Attrs& params, const std::string& what) {
  const bool backward = call == "cudnn.batch_norm_backward";
  if (operand_dims(params, backward ? "input1_dims" : "input0_dims").size() < 2)
    throw Error(fmt::format("{}: batch normalization needs N x C x …", what));
  // The f32 operands: scale, bias, mean, var (inputs 1-4) forward; scale (input 2) backward,
  // whose inputs are dy, x, scale, y.
  for (int i = backward ? 2 : 1; i <= (backward ? 2 : 4); ++i)
    if (params.s(fmt::format("input{}_dtype", i), "f32") != "f32" && params.s("dtype") != "f32")
      throw Error(fmt::format("{}: cuDNN needs f32 scale, bias and statistics with 16-bit data", what));
  // The biased running variance: the runtime rescales cuDNN's unbiased one by (m - 1) / m, which
  // needs m > 1 values per channel.
  if (call == "cudnn.batch_norm_forward_training" && updates_biased_running_variance(params) &&
      batch_norm_count(params) < 2)
    throw Error(fmt::format(
        "{}: the biased running variance of one value per channel (cuDNN computes the unbiased one)", what));
}

}  // namespace

int64_t batch_norm_count(const Attrs& params) {
  const Shape x = operand_dims(params, "input0_dims");
  return x.size() < 2 ? 0 : num_elements(x) / x[1];
}

bool updates_biased_running_variance(const Attrs& params) {
  return params.i("running_var_unbiased", 0) == 0 && params.has("output2_dims");
}

Shape operand_dims(const Attrs& params, const std::string& name) {
  const Shape& dims = params.ints(name);
  return is_channels_last(params) ? channels_first_dims(dims) : dims;
}

void check_library_call(const std::string& call, const Attrs& params, const std::string& what) {
  const std::string dtype = params.s("dtype", "?");
  if (dtype != "f32" && dtype != "f16" && dtype != "bf16")
    throw Error(fmt::format("{}: {} on {} is not supported (f32, f16, bf16)", what, call, dtype));
  if (call == "cublasLt.matmul") {
    const std::string epilogue = params.s("epilogue", "default");
    if (epilogue != "default" && epilogue != "bias" && epilogue != "relu" && epilogue != "bias_relu")
      throw Error(fmt::format("{}: unknown GEMM epilogue '{}'", what, epilogue));
    gemm_problem(params, what);
  } else if (call.rfind("cudnn.convolution_", 0) == 0) {
    check_convolution(call, params, what);
  } else if (call.rfind("cudnn.pooling_", 0) == 0) {
    check_pooling(call, params, what);
  } else if (call.rfind("cudnn.batch_norm_", 0) == 0) {
    check_batch_norm(call, params, what);
  } else {
    throw Error(fmt::format("{}: {} is no library call of the CUDA runtime", what, call));
  }
}

}  // namespace dlc::codegen::cuda
