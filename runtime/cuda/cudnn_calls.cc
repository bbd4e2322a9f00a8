// cuDNN convolution, pooling and batch normalization calls (cudnn_calls.h).
#include "runtime/cuda/cudnn_calls.h"

#include <cudnn.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

#include "codegen/cuda/kernel_source.h"
#include "codegen/cuda/library_call_form.h"
#include "codegen/cuda/window_geometry.h"
#include "dlc/channels_last.h"
#include "dlc/error.h"
#include "runtime/cuda/check.h"
#include "runtime/cuda/owned_handle.h"

namespace dlc::cuda {

using codegen::cuda::cudnn_dims;
using codegen::cuda::operand_dims;
using codegen::cuda::packed_strides;
using codegen::cuda::window_geometry;
using codegen::cuda::WindowGeometry;

namespace {

const float kOne = 1.0f, kZero = 0.0f;

using TensorDesc = OwnedHandle<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDesc = OwnedHandle<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvDesc = OwnedHandle<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;
using PoolDesc = OwnedHandle<cudnnPoolingDescriptor_t, cudnnDestroyPoolingDescriptor>;
using ActivationDesc = OwnedHandle<cudnnActivationDescriptor_t, cudnnDestroyActivationDescriptor>;

cudnnDataType_t data_type(const std::string& dtype, const std::string& what) {
  if (dtype == "f32") return CUDNN_DATA_FLOAT;
  if (dtype == "f16") return CUDNN_DATA_HALF;
  if (dtype == "bf16") return CUDNN_DATA_BFLOAT16;
  throw Error(fmt::format("{}: cuDNN calls on {} are not supported (f32, f16, bf16)", what, dtype));
}

// A tensor of channels-first `dims` with element `strides`.
TensorDesc strided_desc(cudnnDataType_t type, const std::vector<int>& dims, const std::vector<int>& strides) {
  cudnnTensorDescriptor_t d = nullptr;
  DLC_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d));
  TensorDesc owned(d);
  DLC_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d, type, int(dims.size()), dims.data(), strides.data()));
  return owned;
}

// A packed tensor of channels-first `dims`, stored in that order or (`channels_last`) with the
// channels innermost, cuDNN's NHWC.
TensorDesc tensor_desc(cudnnDataType_t type, const std::vector<int>& dims, bool channels_last = false) {
  return strided_desc(type, dims, packed_strides(dims, channels_last));
}

FilterDesc filter_desc(cudnnDataType_t type, const std::vector<int>& dims, bool channels_last) {
  cudnnFilterDescriptor_t d = nullptr;
  DLC_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d));
  FilterDesc owned(d);
  DLC_CUDNN_CHECK(cudnnSetFilterNdDescriptor(d, type, channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                             int(dims.size()), dims.data()));
  return owned;
}

// f32 convolutions compute with FMAs (no TF32, as the CPU kernels), 16-bit ones on tensor cores.
cudnnMathType_t math_type(cudnnDataType_t type) {
  return type == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
}

ConvDesc conv_desc(const WindowGeometry& g, cudnnDataType_t type) {
  cudnnConvolutionDescriptor_t d = nullptr;
  DLC_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d));
  ConvDesc owned(d);
  DLC_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(d, int(g.pads.size()), g.pads.data(), g.strides.data(),
                                                  g.dilations.data(), CUDNN_CROSS_CORRELATION,
                                                  CUDNN_DATA_FLOAT));
  DLC_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d, g.groups));
  DLC_CUDNN_CHECK(cudnnSetConvolutionMathType(d, math_type(type)));
  return owned;
}

ActivationDesc relu_desc() {
  cudnnActivationDescriptor_t d = nullptr;
  DLC_CUDNN_CHECK(cudnnCreateActivationDescriptor(&d));
  ActivationDesc owned(d);
  DLC_CUDNN_CHECK(cudnnSetActivationDescriptor(d, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
  return owned;
}

// A tensor of `dims` padded to the window's rank (N, C and at least 2 spatial dims).
std::vector<int> window_dims(const Shape& dims, const WindowGeometry& g) {
  return cudnn_dims(dims, 2 + g.window.size());
}

Shape spatial_of(const Shape& dims) { return Shape(dims.begin() + 2, dims.end()); }

// The bytes of one element of the step's dtype (already checked by data_type).
size_t element_bytes(const Attrs& params) { return dtype_size(*parse_dtype(params.s("dtype"))); }

// Workspace bytes for a tensor of `dims` in the step's dtype.
size_t scratch_bytes(const Attrs& params, const Shape& dims) {
  return size_t(codegen::cuda::align256(num_elements(dims) * int64_t(element_bytes(params))));
}

// The first algorithm of cuDNN's ranking that succeeds within the workspace cap, cached under
// `key`; `Perf` is the call's cudnn*AlgoPerf_t, and `query(find, n, &returned, perf)` ranks by
// cuDNN's heuristics, or with `find` (LibraryHandles::benchmark_algorithms) by timing each
// algorithm on the problem (cudnnFind*, which allocates its own buffers). The ranking lists an
// algorithm that has no tensor-core form under CUDNN_DEFAULT_MATH even where the descriptor asks
// for tensor cores, and running it under the descriptor's math type fails with
// CUDNN_STATUS_BAD_PARAM (seen on an H200 for ResNet-50's 16-bit convolutions): one in the
// descriptor's math type `math` is preferred, and for 16-bit convolutions the caller sets the
// chosen one's math type on the descriptor (f32 ones keep CUDNN_FMA_MATH whatever the ranking
// says: any other would allow TF32).
template <typename Perf, typename Query>
Perf choose_algorithm(LibraryHandles& handles, const std::string& key, const std::string& what,
                      cudnnMathType_t math, Query&& query) {
  std::string& cached = handles.algorithm_cache()[key];
  Perf chosen{};
  if (cached.size() == sizeof(Perf)) {
    std::memcpy(&chosen, cached.data(), sizeof(Perf));
    return chosen;
  }
  Perf perf[16];
  int returned = 0;
  query(handles.benchmark_algorithms(), 16, &returned, perf);
  for (const bool same_math : {true, false})
    for (int i = 0; i < returned; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxCudnnWorkspaceBytes &&
          (perf[i].mathType == math || !same_math)) {
        cached.assign(reinterpret_cast<const char*>(&perf[i]), sizeof(Perf));
        return perf[i];
      }
  throw Error(fmt::format("{}: cuDNN has no algorithm within {} MiB of workspace for {}", what,
                          kMaxCudnnWorkspaceBytes >> 20, key));
}

// What a convolution step adds after the cuDNN call: the bias (input 2, one value per channel),
// then a residual (forward: input 3), then a Relu.
struct Epilogue {
  TensorDesc bias;
  ActivationDesc relu;
  bool residual = false;

  Epilogue(const Attrs& params, cudnnDataType_t type, const Shape& out, const WindowGeometry& g,
           bool residual_in) {
    if (params.has("input2_dims")) {
      std::vector<int> dims(2 + g.window.size(), 1);
      dims[1] = int(out[1]);
      bias = tensor_desc(type, dims);
    }
    residual = residual_in;
    if (params.s("activation", "none") == "relu") relu = relu_desc();
  }

  void apply(cudnnHandle_t h, const TensorDesc& yd, const LibraryOperands& o, void* y) const {
    if (bias) DLC_CUDNN_CHECK(cudnnAddTensor(h, &kOne, bias.get(), o.input(2), &kOne, yd.get(), y));
    if (residual) DLC_CUDNN_CHECK(cudnnAddTensor(h, &kOne, yd.get(), o.input(3), &kOne, yd.get(), y));
    if (relu) DLC_CUDNN_CHECK(cudnnActivationForward(h, relu.get(), &kOne, yd.get(), y, &kZero, yd.get(), y));
  }
};

// The input of a convolution or max pooling padded explicitly (WindowGeometry::pads_explicitly):
// a packed tensor in the workspace, filled (zeros for a convolution, -inf for a max), the input
// inside it as a view with the padded tensor's strides at the begin pads.
struct ExplicitPadding {
  // The padded input of a step (`params`: its dtype and layout) whose input has `dims`.
  ExplicitPadding(cudnnDataType_t type, const Attrs& params, const std::vector<int>& dims,
                  const WindowGeometry& g) {
    std::vector<int> padded_dims = dims;
    for (size_t d = 0; d < g.explicit_begin.size(); ++d)
      padded_dims[d + 2] += g.explicit_begin[d] + g.explicit_end[d];
    const std::vector<int> strides = packed_strides(padded_dims, is_channels_last(params));
    padded = strided_desc(type, padded_dims, strides);
    view = strided_desc(type, dims, strides);
    int64_t offset = 0;
    for (size_t d = 0; d < g.explicit_begin.size(); ++d)
      offset += int64_t(g.explicit_begin[d]) * strides[d + 2];
    bytes = scratch_bytes(params, Shape(padded_dims.begin(), padded_dims.end()));
    view_offset = size_t(offset) * element_bytes(params);
  }

  void* view_in(void* workspace) const { return static_cast<uint8_t*>(workspace) + view_offset; }

  // Fills the padded tensor at `at` with `fill` (a value of its type) and copies `x` (of
  // `input`) into its view; returns `at`.
  void* pad(cudnnHandle_t h, const TensorDesc& input, const void* x, void* at, const void* fill) const {
    DLC_CUDNN_CHECK(cudnnSetTensor(h, padded.get(), at, fill));
    DLC_CUDNN_CHECK(cudnnTransformTensor(h, &kOne, input.get(), x, &kZero, view.get(), view_in(at)));
    return at;
  }

  TensorDesc padded, view;
  size_t bytes = 0, view_offset = 0;
};

// The descriptors of one convolution, from its input (N, C, spatial…) through `filter` to its
// output (channels-first dims, operand_dims): a forward Conv reads x and writes y; ConvTranspose is the
// backward data of the convolution from its result to its input; ConvGradFilter the backward filter of the
// forward one. An input padded explicitly is the window's input in the workspace (`window_input`),
// the algorithm's scratch after it (`scratch`).
struct Convolution {
  Convolution(LibraryHandles& handles, const Attrs& params, const std::string& what, const Shape& input,
              const Shape& filter, const Shape& output)
      : h(static_cast<cudnnHandle_t>(handles.cudnn())),
        type(data_type(params.s("dtype"), what)),
        geometry(window_geometry(params, input, output, spatial_of(filter), what)),
        input_desc(tensor_desc(type, window_dims(input, geometry), is_channels_last(params))),
        output_desc(tensor_desc(type, window_dims(output, geometry), is_channels_last(params))),
        weight_desc(filter_desc(type, window_dims(filter, geometry), is_channels_last(params))),
        conv(conv_desc(geometry, type)) {
    if (geometry.pads_explicitly())
      padding = std::make_unique<ExplicitPadding>(type, params, window_dims(input, geometry), geometry);
  }

  // cuDNN's choice for `kind` ("fwd", "bwd_data", "bwd_filter"), cached per problem; a 16-bit
  // descriptor takes the chosen algorithm's math type.
  template <typename Perf, typename Query>
  Perf algorithm(LibraryHandles& handles, const Attrs& params, const std::string& what, const char* kind,
                 Query&& query) const {
    const Perf perf =
        choose_algorithm<Perf>(handles, cudnn_problem_key(kind, params), what, math_type(type), query);
    if (type != CUDNN_DATA_FLOAT && perf.mathType != math_type(type))
      DLC_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), perf.mathType));
    return perf;
  }

  // The tensor the window slides over: the input, or the padded input.
  cudnnTensorDescriptor_t window_input() const { return padding ? padding->padded.get() : input_desc.get(); }
  size_t padding_bytes() const { return padding ? padding->bytes : 0; }
  void* scratch(void* workspace) const { return static_cast<uint8_t*>(workspace) + padding_bytes(); }

  // `x` as the window's input: itself, or copied into the padded input in the workspace.
  const void* window_input_of(const void* x, void* workspace) const {
    return padding ? padding->pad(h, input_desc, x, workspace, &kZero) : x;  // zero bits in any type
  }

  cudnnHandle_t h;
  cudnnDataType_t type;
  WindowGeometry geometry;
  TensorDesc input_desc, output_desc;
  FilterDesc weight_desc;
  ConvDesc conv;
  std::unique_ptr<ExplicitPadding> padding;  // null: cuDNN pads
};

// Conv(x, w, b?, residual?) -> y.
class ConvolutionForward final : public LibraryCall {
 public:
  ConvolutionForward(LibraryHandles& handles, const Attrs& params, const std::string& what)
      : c_(handles, params, what, operand_dims(params, "input0_dims"), operand_dims(params, "input1_dims"),
           operand_dims(params, "output0_dims")),
        epilogue_(params, c_.type, operand_dims(params, "output0_dims"), c_.geometry,
                  params.f("alpha2", 0.0) != 0.0) {
    perf_ = c_.algorithm<cudnnConvolutionFwdAlgoPerf_t>(
        handles, params, what, "fwd", [&](bool find, int n, int* returned, cudnnConvolutionFwdAlgoPerf_t* p) {
          auto query = find ? cudnnFindConvolutionForwardAlgorithm : cudnnGetConvolutionForwardAlgorithm_v7;
          DLC_CUDNN_CHECK(query(c_.h, c_.window_input(), c_.weight_desc.get(), c_.conv.get(),
                                c_.output_desc.get(), n, returned, p));
        });
  }
  size_t workspace_bytes() const override { return c_.padding_bytes() + perf_.memory; }
  void run(const LibraryOperands& o, void* workspace, cudaStream_t) const override {
    DLC_CUDNN_CHECK(cudnnConvolutionForward(c_.h, &kOne, c_.window_input(),
                                            c_.window_input_of(o.input(0), workspace), c_.weight_desc.get(),
                                            o.input(1), c_.conv.get(), perf_.algo, c_.scratch(workspace),
                                            perf_.memory, &kZero, c_.output_desc.get(), o.output(0)));
    epilogue_.apply(c_.h, c_.output_desc, o, o.output(0));
  }

 private:
  Convolution c_;
  Epilogue epilogue_;
  cudnnConvolutionFwdAlgoPerf_t perf_{};
};

// ConvTranspose(x, w, b?, residual?) -> y: the backward-data convolution of the convolution from y
// to x; a residual is already in y (the step's copy), added with beta = 1.
class ConvolutionBackwardData final : public LibraryCall {
 public:
  ConvolutionBackwardData(LibraryHandles& handles, const Attrs& params, const std::string& what)
      : c_(handles, params, what, operand_dims(params, "output0_dims"), operand_dims(params, "input1_dims"),
           operand_dims(params, "input0_dims")),
        epilogue_(params, c_.type, operand_dims(params, "output0_dims"), c_.geometry, false),
        beta_(float(params.f("beta", 0.0))) {
    perf_ = c_.algorithm<cudnnConvolutionBwdDataAlgoPerf_t>(
        handles, params, what, "bwd_data",
        [&](bool find, int n, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* p) {
          auto query =
              find ? cudnnFindConvolutionBackwardDataAlgorithm : cudnnGetConvolutionBackwardDataAlgorithm_v7;
          DLC_CUDNN_CHECK(query(c_.h, c_.weight_desc.get(), c_.output_desc.get(), c_.conv.get(),
                                c_.window_input(), n, returned, p));
        });
  }
  size_t workspace_bytes() const override { return c_.padding_bytes() + perf_.memory; }
  // With explicit padding the gradient of the padded input is computed in the workspace, and its
  // view of the input (the padding's gradient dropped) blended into the result.
  void run(const LibraryOperands& o, void* workspace, cudaStream_t) const override {
    void* dx = c_.padding ? workspace : o.output(0);
    DLC_CUDNN_CHECK(cudnnConvolutionBackwardData(c_.h, &kOne, c_.weight_desc.get(), o.input(1),
                                                 c_.output_desc.get(), o.input(0), c_.conv.get(), perf_.algo,
                                                 c_.scratch(workspace), perf_.memory,
                                                 c_.padding ? &kZero : &beta_, c_.window_input(), dx));
    if (c_.padding)
      DLC_CUDNN_CHECK(cudnnTransformTensor(c_.h, &kOne, c_.padding->view.get(),
                                           c_.padding->view_in(workspace), &beta_, c_.input_desc.get(),
                                           o.output(0)));
    epilogue_.apply(c_.h, c_.input_desc, o, o.output(0));
  }

 private:
  Convolution c_;
  Epilogue epilogue_;
  float beta_ = 0;
  cudnnConvolutionBwdDataAlgoPerf_t perf_{};
};

// ConvGradFilter(dy, x) -> dw.
class ConvolutionBackwardFilter final : public LibraryCall {
 public:
  ConvolutionBackwardFilter(LibraryHandles& handles, const Attrs& params, const std::string& what)
      : c_(handles, params, what, operand_dims(params, "input1_dims"), operand_dims(params, "output0_dims"),
           operand_dims(params, "input0_dims")) {
    perf_ = c_.algorithm<cudnnConvolutionBwdFilterAlgoPerf_t>(
        handles, params, what, "bwd_filter",
        [&](bool find, int n, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* p) {
          auto query = find ? cudnnFindConvolutionBackwardFilterAlgorithm
                            : cudnnGetConvolutionBackwardFilterAlgorithm_v7;
          DLC_CUDNN_CHECK(query(c_.h, c_.window_input(), c_.output_desc.get(), c_.conv.get(),
                                c_.weight_desc.get(), n, returned, p));
        });
  }
  size_t workspace_bytes() const override { return c_.padding_bytes() + perf_.memory; }
  void run(const LibraryOperands& o, void* workspace, cudaStream_t) const override {
    DLC_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
        c_.h, &kOne, c_.window_input(), c_.window_input_of(o.input(1), workspace), c_.output_desc.get(),
        o.input(0), c_.conv.get(), perf_.algo, c_.scratch(workspace), perf_.memory, &kZero,
        c_.weight_desc.get(), o.output(0)));
  }

 private:
  Convolution c_;
  cudnnConvolutionBwdFilterAlgoPerf_t perf_{};
};

// -inf in `type` (what cudnnSetTensor takes: a value of the tensor's own type).
std::array<uint8_t, 4> negative_infinity(cudnnDataType_t type) {
  const uint32_t bits = type == CUDNN_DATA_FLOAT ? 0xff800000u : type == CUDNN_DATA_HALF ? 0xfc00u : 0xff80u;
  std::array<uint8_t, 4> value{};
  std::memcpy(value.data(), &bits, sizeof(bits));  // little-endian: a 16-bit value is the low half
  return value;
}

// MaxPool / AveragePool (`mode` max or average) and their gradients: MaxPoolGrad(dy, x) recomputes
// the forward's result into the workspace (cuDNN's backward reads it); AveragePoolGrad(dy) {shape}
// passes dy as the result and dx as the (unread) input. A MaxPool whose end padding adds a result
// (ceil mode, SAME with a stride) pools an explicitly padded input (-inf around it) in the
// workspace; its gradient is the padded input's, computed in the workspace, its view copied out.
class Pooling final : public LibraryCall {
 public:
  Pooling(LibraryHandles& handles, const Attrs& params, const std::string& what, bool backward)
      : h_(static_cast<cudnnHandle_t>(handles.cudnn())), backward_(backward) {
    const cudnnDataType_t type = data_type(params.s("dtype"), what);
    max_ = params.s("mode", "") == "max";  // or "average" (library_call_form.h)
    // Forward (x) -> y; backward max (dy, x) -> dx; backward average (dy) -> dx.
    const Shape x = backward ? operand_dims(params, "output0_dims") : operand_dims(params, "input0_dims");
    const Shape y = backward ? operand_dims(params, "input0_dims") : operand_dims(params, "output0_dims");
    const WindowGeometry g = window_geometry(params, x, y, params.ints("kernel_shape"), what);
    xd_ = tensor_desc(type, window_dims(x, g), is_channels_last(params));
    yd_ = tensor_desc(type, window_dims(y, g), is_channels_last(params));
    if (g.pads_explicitly()) {  // max only (library_call_form.h)
      padding_ = std::make_unique<ExplicitPadding>(type, params, window_dims(x, g), g);
      fill_ = negative_infinity(type);
    }
    cudnnPoolingDescriptor_t p = nullptr;
    DLC_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&p));
    pd_ = PoolDesc(p);
    const cudnnPoolingMode_t mode = max_ ? CUDNN_POOLING_MAX_DETERMINISTIC
                                    : params.i("count_include_pad", 0) != 0
                                        ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                        : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    DLC_CUDNN_CHECK(cudnnSetPoolingNdDescriptor(p, mode, CUDNN_PROPAGATE_NAN, int(g.window.size()),
                                                g.window.data(), g.pads.data(), g.strides.data()));
    if (backward_ && max_) y_bytes_ = scratch_bytes(params, y);
  }
  // [padded x][padded dx (backward)][y (max backward)]
  size_t workspace_bytes() const override { return padded_bytes() * (backward_ ? 2 : 1) + y_bytes_; }
  void run(const LibraryOperands& o, void* workspace, cudaStream_t) const override {
    uint8_t* scratch = static_cast<uint8_t*>(workspace);
    const void* x = backward_ ? (max_ ? o.input(1) : o.output(0)) : o.input(0);
    if (padding_) x = padding_->pad(h_, xd_, x, scratch, fill_.data());
    const cudnnTensorDescriptor_t window_x = padding_ ? padding_->padded.get() : xd_.get();
    if (!backward_) {
      DLC_CUDNN_CHECK(cudnnPoolingForward(h_, pd_.get(), &kOne, window_x, x, &kZero, yd_.get(), o.output(0)));
      return;
    }
    void* dx = padding_ ? scratch + padded_bytes() : o.output(0);
    const void* y = o.input(0);  // average: not read
    if (max_) {
      void* recomputed = scratch + 2 * padded_bytes();
      DLC_CUDNN_CHECK(cudnnPoolingForward(h_, pd_.get(), &kOne, window_x, x, &kZero, yd_.get(), recomputed));
      y = recomputed;
    }
    DLC_CUDNN_CHECK(cudnnPoolingBackward(h_, pd_.get(), &kOne, yd_.get(), y, yd_.get(), o.input(0), window_x,
                                         x, &kZero, window_x, dx));
    if (padding_)
      DLC_CUDNN_CHECK(cudnnTransformTensor(h_, &kOne, padding_->view.get(), padding_->view_in(dx), &kZero,
                                           xd_.get(), o.output(0)));
  }

 private:
  size_t padded_bytes() const { return padding_ ? padding_->bytes : 0; }

  cudnnHandle_t h_;
  bool backward_ = false, max_ = false;
  TensorDesc xd_, yd_;
  PoolDesc pd_;
  size_t y_bytes_ = 0;
  std::unique_ptr<ExplicitPadding> padding_;  // null: cuDNN pads
  std::array<uint8_t, 4> fill_{};
};

// BatchNormalization(x, scale, bias, mean, var) -> y [, running_mean', running_var'] with batch
// statistics (training; the results already hold the running statistics, updated in place with
// factor 1 - momentum) or the given ones; BatchNormGrad(dy, x, scale, y?) -> dx, dscale, dbias with
// the statistics recomputed. A folded Relu: cudnnActivationForward on y, or dy masked where y > 0
// into the workspace first. cuDNN's running variance takes the unbiased batch variance (m values
// a channel: var * m / (m - 1)); for ONNX's biased one the running variance is scaled by
// m / (m - 1) before the call and by (m - 1) / m after it, which leaves
// (1 - f) * running + f * var.
class BatchNorm final : public LibraryCall {
 public:
  enum class Kind { Training, Inference, Backward };

  BatchNorm(LibraryHandles& handles, const Attrs& params, const std::string& what, Kind kind)
      : h_(static_cast<cudnnHandle_t>(handles.cudnn())), kind_(kind) {
    const cudnnDataType_t type = data_type(params.s("dtype"), what);
    const Shape x = operand_dims(params, kind == Kind::Backward ? "input1_dims" : "input0_dims");
    epsilon_ = params.f("epsilon", 1e-5);
    if (epsilon_ < CUDNN_BN_MIN_EPSILON)
      throw Error(fmt::format("{}: epsilon {} is below cuDNN's minimum", what, epsilon_));
    factor_ = 1.0 - params.f("momentum", 0.9);
    if (kind == Kind::Training && codegen::cuda::updates_biased_running_variance(params)) {
      const double m = double(codegen::cuda::batch_norm_count(params));
      unbias_ = float(m / (m - 1));
      rebias_ = float((m - 1) / m);
    }
    xd_ = tensor_desc(type, cudnn_dims(x), is_channels_last(params));
    cudnnTensorDescriptor_t p = nullptr;
    DLC_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p));
    pd_ = TensorDesc(p);
    DLC_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(p, xd_.get(), CUDNN_BATCHNORM_SPATIAL));
    if (params.s("ops", "bn") == "bn_activation") relu_ = relu_desc();
    if (kind == Kind::Backward && relu_) dy_bytes_ = scratch_bytes(params, x);
  }
  size_t workspace_bytes() const override { return dy_bytes_; }
  void run(const LibraryOperands& o, void* workspace, cudaStream_t) const override {
    const cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_SPATIAL;
    const cudnnTensorDescriptor_t x = xd_.get();
    switch (kind_) {
      case Kind::Training:
        if (unbias_ != 1.0f) DLC_CUDNN_CHECK(cudnnScaleTensor(h_, pd_.get(), o.output(2), &unbias_));
        DLC_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
            h_, mode, &kOne, &kZero, x, o.input(0), x, o.output(0), pd_.get(), o.input(1), o.input(2),
            factor_, o.output(1), o.output(2), epsilon_, nullptr, nullptr));
        if (rebias_ != 1.0f) DLC_CUDNN_CHECK(cudnnScaleTensor(h_, pd_.get(), o.output(2), &rebias_));
        break;
      case Kind::Inference:
        DLC_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
            h_, mode, &kOne, &kZero, x, o.input(0), x, o.output(0), pd_.get(), o.input(1), o.input(2),
            o.input(3), o.input(4), epsilon_));
        break;
      case Kind::Backward: {
        const void* dy = o.input(0);
        if (relu_) {  // dy where y > 0 (y: input 3, the Relu's result)
          DLC_CUDNN_CHECK(cudnnActivationBackward(h_, relu_.get(), &kOne, x, o.input(3), x, dy, x, o.input(3),
                                                  &kZero, x, workspace));
          dy = workspace;
        }
        DLC_CUDNN_CHECK(cudnnBatchNormalizationBackward(
            h_, mode, &kOne, &kZero, &kOne, &kZero, x, o.input(1), x, dy, x, o.output(0), pd_.get(),
            o.input(2), o.output(1), o.output(2), epsilon_, nullptr, nullptr));
        return;
      }
    }
    if (relu_)
      DLC_CUDNN_CHECK(cudnnActivationForward(h_, relu_.get(), &kOne, x, o.output(0), &kZero, x, o.output(0)));
  }

 private:
  cudnnHandle_t h_;
  Kind kind_;
  double epsilon_ = 1e-5, factor_ = 0.1;
  float unbias_ = 1.0f, rebias_ = 1.0f;  // the biased running variance's scalings (1: none)
  TensorDesc xd_, pd_;
  ActivationDesc relu_;
  size_t dy_bytes_ = 0;
};

}  // namespace

namespace {

using CudnnCallFactory =
    std::function<std::unique_ptr<LibraryCall>(LibraryHandles&, const Attrs&, const std::string&)>;

// The cuDNN calls by name, the one list is_cudnn_call and make_cudnn_call read.
const std::map<std::string, CudnnCallFactory, std::less<>>& cudnn_calls() {
  static const std::map<std::string, CudnnCallFactory, std::less<>> table = {
      {"cudnn.convolution_forward",
       [](LibraryHandles& h, const Attrs& p, const std::string& w) {
         return std::make_unique<ConvolutionForward>(h, p, w);
       }},
      {"cudnn.convolution_backward_data",
       [](LibraryHandles& h, const Attrs& p, const std::string& w) {
         return std::make_unique<ConvolutionBackwardData>(h, p, w);
       }},
      {"cudnn.convolution_backward_filter",
       [](LibraryHandles& h, const Attrs& p, const std::string& w) {
         return std::make_unique<ConvolutionBackwardFilter>(h, p, w);
       }},
      {"cudnn.pooling_forward",
       [](LibraryHandles& h, const Attrs& p, const std::string& w) {
         return std::make_unique<Pooling>(h, p, w, false);
       }},
      {"cudnn.pooling_backward",
       [](LibraryHandles& h, const Attrs& p, const std::string& w) {
         return std::make_unique<Pooling>(h, p, w, true);
       }},
      {"cudnn.batch_norm_forward_training",
       [](LibraryHandles& h, const Attrs& p, const std::string& w) {
         return std::make_unique<BatchNorm>(h, p, w, BatchNorm::Kind::Training);
       }},
      {"cudnn.batch_norm_forward_inference",
       [](LibraryHandles& h, const Attrs& p, const std::string& w) {
         return std::make_unique<BatchNorm>(h, p, w, BatchNorm::Kind::Inference);
       }},
      {"cudnn.batch_norm_backward",
       [](LibraryHandles& h, const Attrs& p, const std::string& w) {
         return std::make_unique<BatchNorm>(h, p, w, BatchNorm::Kind::Backward);
       }},
  };
  return table;
}

}  // namespace

bool is_cudnn_call(const std::string& call) { return cudnn_calls().count(call) != 0; }

std::unique_ptr<LibraryCall> make_cudnn_call(LibraryHandles& handles, const std::string& call,
                                             const Attrs& params, const std::string& what) {
  const auto it = cudnn_calls().find(call);
  if (it == cudnn_calls().end()) throw Error(fmt::format("{}: {} is no cuDNN call", what, call));
  return it->second(handles, params, what);
}

std::string cudnn_problem_key(const std::string& call, const Attrs& params) {
  std::string key = call + " dtype=" + params.s("dtype", "?");
  for (const char* name : {"input0_dims", "input1_dims", "output0_dims", "strides", "pads", "dilations"})
    if (params.has(name)) key += fmt::format(" {}={}", name, fmt::join(params.ints(name, {}), ","));
  return key +
         fmt::format(" group={}{}", params.i("group", 1), is_channels_last(params) ? " channels_last" : "");
}

}  // namespace dlc::cuda
