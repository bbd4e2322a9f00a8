// The part of cuDNN's legacy API that dlc's runtime calls (runtime/cuda/cudnn_calls.cc), computed on
// the host from cuDNN's documentation, so that the runtime's own descriptors — dims and strides
// (channels-first or channels-last), filter formats, windows, groups, blend factors — and its
// operand order run on the emulated device. Linked into the emulated test programs, these
// definitions stand in for libcudnn's.
//
// Every tensor element is addressed through its descriptor's strides, and every result is
// alpha * value + beta * previous (the previous value not read when beta is 0), accumulated in f32.
// cudnnSetTensor, cudnnScaleTensor and cudnnTransformTensor address through strides too.
// Convolutions are cross-correlations (forward, backward data, backward filter) with groups; max
// pooling's backward gives each window's gradient to the first element equal to its maximum;
// batch normalization is spatial, with the unbiased batch variance in the running variance; a
// Relu keeps NaN (CUDNN_PROPAGATE_NAN). Each algorithm query returns one algorithm that needs no
// workspace, in the descriptor's math type. A form the runtime does not use, or dims that do not
// fit together, return CUDNN_STATUS_BAD_PARAM or CUDNN_STATUS_NOT_SUPPORTED, which the runtime's
// checks report.
#include <cudnn.h>

#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "tests/emulation/host_elements.h"

using dlc::DType;
using dlc::emulation::load_element;
using dlc::emulation::store_element;

struct cudnnContext {};

struct cudnnTensorStruct {
  DType type = DType::F32;
  std::vector<int> dims, strides;
};

struct cudnnFilterStruct {
  DType type = DType::F32;
  std::vector<int> dims;  // K, C / groups, spatial…
  bool channels_last = false;
};

struct cudnnConvolutionStruct {
  std::vector<int> pads, strides, dilations;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

struct cudnnPoolingStruct {
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
  std::vector<int> window, pads, strides;
};

struct cudnnActivationStruct {
  cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
};

namespace {

std::optional<DType> dtype_of(cudnnDataType_t t) {
  if (t == CUDNN_DATA_FLOAT) return DType::F32;
  if (t == CUDNN_DATA_HALF) return DType::F16;
  if (t == CUDNN_DATA_BFLOAT16) return DType::BF16;
  return std::nullopt;
}

int64_t numel(const std::vector<int>& dims) {
  int64_t n = 1;
  for (int d : dims) n *= d;
  return n;
}

// Calls f(index) for every multi-index of `dims`, the last dim fastest.
void for_each_index(const std::vector<int>& dims, const std::function<void(const std::vector<int>&)>& f) {
  if (numel(dims) == 0) return;
  std::vector<int> index(dims.size(), 0);
  while (true) {
    f(index);
    size_t d = dims.size();
    while (d > 0 && ++index[d - 1] == dims[d - 1]) index[--d] = 0;
    if (d == 0) return;
  }
}

int64_t offset(const std::vector<int>& strides, const std::vector<int>& index) {
  int64_t o = 0;
  for (size_t d = 0; d < index.size(); ++d) o += int64_t(index[d]) * strides[d];
  return o;
}

// A tensor's elements through its descriptor.
struct View {
  const cudnnTensorStruct& desc;
  const void* data;
  float at(const std::vector<int>& index) const {
    return load_element(desc.type, data, offset(desc.strides, index));
  }
};

// result = alpha * values[i] + beta * result for every element of `desc` (values in row-major
// order of its dims).
void blend(const cudnnTensorStruct& desc, void* result, const std::vector<float>& values, const void* alpha,
           const void* beta) {
  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  int64_t i = 0;
  for_each_index(desc.dims, [&](const std::vector<int>& index) {
    const int64_t o = offset(desc.strides, index);
    float v = a * values[size_t(i++)];
    if (b != 0.0f) v += b * load_element(desc.type, result, o);
    store_element(desc.type, result, o, v);
  });
}

// Row-major position of `index` in `dims`.
int64_t linear(const std::vector<int>& dims, const std::vector<int>& index) {
  int64_t l = 0;
  for (size_t d = 0; d < dims.size(); ++d) l = l * dims[d] + index[d];
  return l;
}

// ---- convolution

// The packed strides of a filter in its format (K, C, spatial… or K, spatial…, C).
std::vector<int> filter_strides(const cudnnFilterStruct& w) {
  std::vector<int> order(w.dims.size());  // dims from outermost to innermost
  for (size_t d = 0; d < order.size(); ++d) order[d] = int(d);
  if (w.channels_last) {
    order.erase(order.begin() + 1);
    order.push_back(1);
  }
  std::vector<int> strides(w.dims.size());
  int stride = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[size_t(order[i])] = stride;
    stride *= w.dims[size_t(order[i])];
  }
  return strides;
}

// Whether x -> y through w and conv is a convolution cuDNN computes: ranks, channels, groups and
// the output size of each spatial dim.
bool conv_fits(const cudnnTensorStruct& x, const cudnnFilterStruct& w, const cudnnConvolutionStruct& c,
               const cudnnTensorStruct& y) {
  const size_t rank = x.dims.size();
  if (rank < 3 || y.dims.size() != rank || w.dims.size() != rank || c.pads.size() != rank - 2) return false;
  if (x.type != w.type || y.type != w.type || c.groups < 1) return false;
  if (x.dims[0] != y.dims[0] || w.dims[0] != y.dims[1] || x.dims[1] != w.dims[1] * c.groups ||
      w.dims[0] % c.groups != 0)
    return false;
  for (size_t s = 0; s + 2 < rank; ++s) {
    const int extent = c.dilations[s] * (w.dims[s + 2] - 1) + 1;
    if (y.dims[s + 2] != (x.dims[s + 2] + 2 * c.pads[s] - extent) / c.strides[s] + 1) return false;
  }
  return true;
}

// Calls f(x index, w index, y index) for every product of the convolution whose input element is
// inside x (the padding contributes nothing).
void for_each_product(
    const cudnnTensorStruct& x, const cudnnFilterStruct& w, const cudnnConvolutionStruct& c,
    const cudnnTensorStruct& y,
    const std::function<void(const std::vector<int>&, const std::vector<int>&, const std::vector<int>&)>& f) {
  const size_t rank = x.dims.size();
  const int out_per_group = w.dims[0] / c.groups;
  std::vector<int> xi(rank), wi(rank);
  std::vector<int> window(w.dims.begin() + 1, w.dims.end());  // C / groups, spatial…
  for_each_index(y.dims, [&](const std::vector<int>& yi) {
    const int group = yi[1] / out_per_group;
    for_each_index(window, [&](const std::vector<int>& r) {
      xi[0] = yi[0];
      xi[1] = group * w.dims[1] + r[0];
      for (size_t s = 2; s < rank; ++s) {
        xi[s] = yi[s] * c.strides[s - 2] - c.pads[s - 2] + r[s - 1] * c.dilations[s - 2];
        if (xi[s] < 0 || xi[s] >= x.dims[s]) return;
      }
      wi[0] = yi[1];
      for (size_t d = 1; d < rank; ++d) wi[d] = r[d - 1];
      f(xi, wi, yi);
    });
  });
}

template <typename Perf>
cudnnStatus_t one_algorithm(bool fits, const cudnnConvolutionStruct& c, int requested, int* returned,
                            Perf* perf) {
  *returned = 0;
  if (requested < 1) return CUDNN_STATUS_BAD_PARAM;
  if (!fits) return CUDNN_STATUS_BAD_PARAM;
  perf[0] = Perf{};
  perf[0].status = CUDNN_STATUS_SUCCESS;
  perf[0].memory = 0;
  perf[0].determinism = CUDNN_DETERMINISTIC;
  perf[0].mathType = c.math;
  *returned = 1;
  return CUDNN_STATUS_SUCCESS;
}

// ---- pooling

bool pooling_fits(const cudnnPoolingStruct& p, const cudnnTensorStruct& x, const cudnnTensorStruct& y) {
  const size_t rank = x.dims.size();
  if (y.dims.size() != rank || p.window.size() + 2 != rank || x.type != y.type) return false;
  if (x.dims[0] != y.dims[0] || x.dims[1] != y.dims[1]) return false;
  for (size_t s = 0; s + 2 < rank; ++s)
    if (y.dims[s + 2] != (x.dims[s + 2] + 2 * p.pads[s] - p.window[s]) / p.strides[s] + 1) return false;
  return true;
}

// Calls f(x index) for the elements of x in the window of y's element `yi`, in row-major window
// order, and returns how many there were.
int for_each_in_window(const cudnnPoolingStruct& p, const cudnnTensorStruct& x, const std::vector<int>& yi,
                       const std::function<void(const std::vector<int>&)>& f) {
  std::vector<int> xi = yi;
  int count = 0;
  for_each_index(p.window, [&](const std::vector<int>& r) {
    for (size_t s = 2; s < xi.size(); ++s) {
      xi[s] = yi[s] * p.strides[s - 2] - p.pads[s - 2] + r[s - 2];
      if (xi[s] < 0 || xi[s] >= x.dims[s]) return;
    }
    ++count;
    f(xi);
  });
  return count;
}

bool is_max(const cudnnPoolingStruct& p) {
  return p.mode == CUDNN_POOLING_MAX || p.mode == CUDNN_POOLING_MAX_DETERMINISTIC;
}

// What an average divides by: the whole window, or the elements of x in it.
float divisor(const cudnnPoolingStruct& p, int count) {
  return p.mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ? float(numel(p.window)) : float(count);
}

// ---- batch normalization

// x's statistics per channel (spatial mode: over N and the spatial dims).
struct ChannelStats {
  std::vector<double> mean, var;  // biased variance
  int64_t count = 0;
};

ChannelStats channel_stats(const View& x) {
  const int channels = x.desc.dims[1];
  ChannelStats s{std::vector<double>(size_t(channels)), std::vector<double>(size_t(channels)),
                 numel(x.desc.dims) / channels};
  for_each_index(x.desc.dims, [&](const std::vector<int>& i) { s.mean[size_t(i[1])] += x.at(i); });
  for (double& m : s.mean) m /= double(s.count);
  for_each_index(x.desc.dims, [&](const std::vector<int>& i) {
    const double d = x.at(i) - s.mean[size_t(i[1])];
    s.var[size_t(i[1])] += d * d;
  });
  for (double& v : s.var) v /= double(s.count);
  return s;
}

// The f32 per-channel parameters of a BN descriptor derived for 16-bit or f32 data.
const float* floats(const void* p) { return static_cast<const float*>(p); }
float* floats(void* p) { return static_cast<float*>(p); }

bool bn_fits(const cudnnTensorStruct& x, const cudnnTensorStruct& y, const cudnnTensorStruct& bn,
             cudnnBatchNormMode_t mode) {
  return mode == CUDNN_BATCHNORM_SPATIAL && x.dims == y.dims && x.type == y.type && x.dims.size() >= 3 &&
         bn.type == DType::F32 && bn.dims.size() == x.dims.size() && bn.dims[1] == x.dims[1] &&
         numel(bn.dims) == x.dims[1];
}

// Normalizes x with per-channel mean and variance into y.
void normalize(const View& x, const cudnnTensorStruct& yd, void* y, const std::vector<double>& mean,
               const std::vector<double>& var, const float* scale, const float* bias, double epsilon,
               const void* alpha, const void* beta) {
  std::vector<float> values;
  values.reserve(size_t(numel(x.desc.dims)));
  for_each_index(x.desc.dims, [&](const std::vector<int>& i) {
    const size_t c = size_t(i[1]);
    values.push_back(float(scale[c] * (x.at(i) - mean[c]) / std::sqrt(var[c] + epsilon) + bias[c]));
  });
  blend(yd, y, values, alpha, beta);
}

}  // namespace

// ---- handle and descriptors

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  *handle = new cudnnContext;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  delete handle;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t, cudaStream_t) { return CUDNN_STATUS_SUCCESS; }

#define DLC_EMULATED_DESCRIPTOR(Kind, Struct)                  \
  cudnnStatus_t cudnnCreate##Kind##Descriptor(Struct** desc) { \
    *desc = new Struct;                                        \
    return CUDNN_STATUS_SUCCESS;                               \
  }                                                            \
  cudnnStatus_t cudnnDestroy##Kind##Descriptor(Struct* desc) { \
    delete desc;                                               \
    return CUDNN_STATUS_SUCCESS;                               \
  }
DLC_EMULATED_DESCRIPTOR(Tensor, cudnnTensorStruct)
DLC_EMULATED_DESCRIPTOR(Filter, cudnnFilterStruct)
DLC_EMULATED_DESCRIPTOR(Convolution, cudnnConvolutionStruct)
DLC_EMULATED_DESCRIPTOR(Pooling, cudnnPoolingStruct)
DLC_EMULATED_DESCRIPTOR(Activation, cudnnActivationStruct)
#undef DLC_EMULATED_DESCRIPTOR

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t type, int rank,
                                         const int dims[], const int strides[]) {
  if (!dtype_of(type) || rank < 3) return CUDNN_STATUS_NOT_SUPPORTED;
  *desc = {*dtype_of(type), std::vector<int>(dims, dims + rank), std::vector<int>(strides, strides + rank)};
  for (int d = 0; d < rank; ++d)
    if (dims[d] < 1 || strides[d] < 1) return CUDNN_STATUS_BAD_PARAM;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t desc, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int rank, const int dims[]) {
  if (!dtype_of(type) || rank < 3 || (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC))
    return CUDNN_STATUS_NOT_SUPPORTED;
  *desc = {*dtype_of(type), std::vector<int>(dims, dims + rank), format == CUDNN_TENSOR_NHWC};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t desc, int spatial,
                                              const int pads[], const int strides[], const int dilations[],
                                              cudnnConvolutionMode_t mode, cudnnDataType_t compute) {
  if (mode != CUDNN_CROSS_CORRELATION || compute != CUDNN_DATA_FLOAT) return CUDNN_STATUS_NOT_SUPPORTED;
  desc->pads.assign(pads, pads + spatial);
  desc->strides.assign(strides, strides + spatial);
  desc->dilations.assign(dilations, dilations + spatial);
  for (int s = 0; s < spatial; ++s)
    if (pads[s] < 0 || strides[s] < 1 || dilations[s] < 1) return CUDNN_STATUS_BAD_PARAM;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t desc, int groups) {
  desc->groups = groups;
  return groups >= 1 ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t desc, cudnnMathType_t math) {
  desc->math = math;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t desc, const cudnnPoolingMode_t mode,
                                          const cudnnNanPropagation_t, int spatial, const int window[],
                                          const int pads[], const int strides[]) {
  *desc = {mode, std::vector<int>(window, window + spatial), std::vector<int>(pads, pads + spatial),
           std::vector<int>(strides, strides + spatial)};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t desc, cudnnActivationMode_t mode,
                                           cudnnNanPropagation_t nan, double) {
  if (mode != CUDNN_ACTIVATION_RELU || nan != CUDNN_PROPAGATE_NAN) return CUDNN_STATUS_NOT_SUPPORTED;
  desc->mode = mode;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t bn, const cudnnTensorDescriptor_t x,
                                            cudnnBatchNormMode_t mode) {
  if (mode != CUDNN_BATCHNORM_SPATIAL) return CUDNN_STATUS_NOT_SUPPORTED;
  std::vector<int> dims(x->dims.size(), 1);
  dims[1] = x->dims[1];
  *bn = {DType::F32, dims, std::vector<int>(dims.size(), 1)};
  bn->strides[0] = dims[1];
  return CUDNN_STATUS_SUCCESS;
}

// ---- convolutions

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t x,
                                                     const cudnnFilterDescriptor_t w,
                                                     const cudnnConvolutionDescriptor_t c,
                                                     const cudnnTensorDescriptor_t y, const int requested,
                                                     int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
  return one_algorithm(conv_fits(*x, *w, *c, *y), *c, requested, returned, perf);
}
cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                   const cudnnFilterDescriptor_t w,
                                                   const cudnnConvolutionDescriptor_t c,
                                                   const cudnnTensorDescriptor_t y, const int requested,
                                                   int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
  return cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, requested, returned, perf);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t, const cudnnFilterDescriptor_t w,
                                                          const cudnnTensorDescriptor_t dy,
                                                          const cudnnConvolutionDescriptor_t c,
                                                          const cudnnTensorDescriptor_t dx,
                                                          const int requested, int* returned,
                                                          cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  return one_algorithm(conv_fits(*dx, *w, *c, *dy), *c, requested, returned, perf);
}
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(cudnnHandle_t h, const cudnnFilterDescriptor_t w,
                                                        const cudnnTensorDescriptor_t dy,
                                                        const cudnnConvolutionDescriptor_t c,
                                                        const cudnnTensorDescriptor_t dx, const int requested,
                                                        int* returned,
                                                        cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w, dy, c, dx, requested, returned, perf);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t x,
                                                            const cudnnTensorDescriptor_t dy,
                                                            const cudnnConvolutionDescriptor_t c,
                                                            const cudnnFilterDescriptor_t dw,
                                                            const int requested, int* returned,
                                                            cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
  return one_algorithm(conv_fits(*x, *dw, *c, *dy), *c, requested, returned, perf);
}
cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                          const cudnnTensorDescriptor_t dy,
                                                          const cudnnConvolutionDescriptor_t c,
                                                          const cudnnFilterDescriptor_t dw,
                                                          const int requested, int* returned,
                                                          cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
  return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x, dy, c, dw, requested, returned, perf);
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t, const void* alpha, const cudnnTensorDescriptor_t xd,
                                      const void* x, const cudnnFilterDescriptor_t wd, const void* w,
                                      const cudnnConvolutionDescriptor_t c, cudnnConvolutionFwdAlgo_t, void*,
                                      size_t, const void* beta, const cudnnTensorDescriptor_t yd, void* y) {
  if (!conv_fits(*xd, *wd, *c, *yd)) return CUDNN_STATUS_BAD_PARAM;
  const std::vector<int> w_strides = filter_strides(*wd);
  std::vector<float> sums(size_t(numel(yd->dims)));
  for_each_product(*xd, *wd, *c, *yd, [&](const auto& xi, const auto& wi, const auto& yi) {
    sums[size_t(linear(yd->dims, yi))] +=
        load_element(xd->type, x, offset(xd->strides, xi)) * load_element(wd->type, w, offset(w_strides, wi));
  });
  blend(*yd, y, sums, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t, const void* alpha, const cudnnFilterDescriptor_t wd,
                                           const void* w, const cudnnTensorDescriptor_t dyd, const void* dy,
                                           const cudnnConvolutionDescriptor_t c,
                                           cudnnConvolutionBwdDataAlgo_t, void*, size_t, const void* beta,
                                           const cudnnTensorDescriptor_t dxd, void* dx) {
  if (!conv_fits(*dxd, *wd, *c, *dyd)) return CUDNN_STATUS_BAD_PARAM;
  const std::vector<int> w_strides = filter_strides(*wd);
  std::vector<float> sums(size_t(numel(dxd->dims)));
  for_each_product(*dxd, *wd, *c, *dyd, [&](const auto& xi, const auto& wi, const auto& yi) {
    sums[size_t(linear(dxd->dims, xi))] += load_element(dyd->type, dy, offset(dyd->strides, yi)) *
                                           load_element(wd->type, w, offset(w_strides, wi));
  });
  blend(*dxd, dx, sums, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t, const void* alpha,
                                             const cudnnTensorDescriptor_t xd, const void* x,
                                             const cudnnTensorDescriptor_t dyd, const void* dy,
                                             const cudnnConvolutionDescriptor_t c,
                                             cudnnConvolutionBwdFilterAlgo_t, void*, size_t, const void* beta,
                                             const cudnnFilterDescriptor_t dwd, void* dw) {
  if (!conv_fits(*xd, *dwd, *c, *dyd)) return CUDNN_STATUS_BAD_PARAM;
  std::vector<float> sums(size_t(numel(dwd->dims)));
  for_each_product(*xd, *dwd, *c, *dyd, [&](const auto& xi, const auto& wi, const auto& yi) {
    sums[size_t(linear(dwd->dims, wi))] += load_element(dyd->type, dy, offset(dyd->strides, yi)) *
                                           load_element(xd->type, x, offset(xd->strides, xi));
  });
  // The filter is packed in its format: blend through a descriptor with its strides.
  const cudnnTensorStruct packed{dwd->type, dwd->dims, filter_strides(*dwd)};
  blend(packed, dw, sums, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

// ---- elementwise

cudnnStatus_t cudnnAddTensor(cudnnHandle_t, const void* alpha, const cudnnTensorDescriptor_t ad,
                             const void* a, const void* beta, const cudnnTensorDescriptor_t cd, void* c) {
  if (ad->dims.size() != cd->dims.size() || ad->type != cd->type) return CUDNN_STATUS_BAD_PARAM;
  for (size_t d = 0; d < ad->dims.size(); ++d)
    if (ad->dims[d] != cd->dims[d] && ad->dims[d] != 1) return CUDNN_STATUS_BAD_PARAM;
  std::vector<float> values;
  std::vector<int> ai(ad->dims.size());
  for_each_index(cd->dims, [&](const std::vector<int>& ci) {
    for (size_t d = 0; d < ci.size(); ++d) ai[d] = ad->dims[d] == 1 ? 0 : ci[d];
    values.push_back(View{*ad, a}.at(ai));
  });
  blend(*cd, c, values, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetTensor(cudnnHandle_t, const cudnnTensorDescriptor_t yd, void* y, const void* value) {
  const float v = load_element(yd->type, value, 0);  // a value of y's type
  for_each_index(yd->dims,
                 [&](const std::vector<int>& i) { store_element(yd->type, y, offset(yd->strides, i), v); });
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnScaleTensor(cudnnHandle_t, const cudnnTensorDescriptor_t yd, void* y, const void* alpha) {
  const float a = *static_cast<const float*>(alpha);
  for_each_index(yd->dims, [&](const std::vector<int>& i) {
    const int64_t at = offset(yd->strides, i);
    store_element(yd->type, y, at, a * load_element(yd->type, y, at));
  });
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnTransformTensor(cudnnHandle_t, const void* alpha, const cudnnTensorDescriptor_t xd,
                                   const void* x, const void* beta, const cudnnTensorDescriptor_t yd,
                                   void* y) {
  if (xd->dims != yd->dims || xd->type != yd->type) return CUDNN_STATUS_BAD_PARAM;
  std::vector<float> values;
  for_each_index(xd->dims, [&](const std::vector<int>& i) { values.push_back(View{*xd, x}.at(i)); });
  blend(*yd, y, values, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnActivationForward(cudnnHandle_t, cudnnActivationDescriptor_t, const void* alpha,
                                     const cudnnTensorDescriptor_t xd, const void* x, const void* beta,
                                     const cudnnTensorDescriptor_t yd, void* y) {
  if (xd->dims != yd->dims || xd->type != yd->type) return CUDNN_STATUS_BAD_PARAM;
  std::vector<float> values;
  for_each_index(xd->dims, [&](const std::vector<int>& i) {
    const float v = View{*xd, x}.at(i);
    values.push_back(v < 0.0f ? 0.0f : v);  // NaN stays NaN
  });
  blend(*yd, y, values, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnActivationBackward(cudnnHandle_t, cudnnActivationDescriptor_t, const void* alpha,
                                      const cudnnTensorDescriptor_t yd, const void* y,
                                      const cudnnTensorDescriptor_t dyd, const void* dy,
                                      const cudnnTensorDescriptor_t xd, const void*, const void* beta,
                                      const cudnnTensorDescriptor_t dxd, void* dx) {
  if (yd->dims != dyd->dims || yd->dims != dxd->dims || yd->dims != xd->dims) return CUDNN_STATUS_BAD_PARAM;
  std::vector<float> values;
  for_each_index(yd->dims, [&](const std::vector<int>& i) {
    values.push_back(View{*yd, y}.at(i) > 0.0f ? View{*dyd, dy}.at(i) : 0.0f);
  });
  blend(*dxd, dx, values, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

// ---- pooling

cudnnStatus_t cudnnPoolingForward(cudnnHandle_t, const cudnnPoolingDescriptor_t p, const void* alpha,
                                  const cudnnTensorDescriptor_t xd, const void* x, const void* beta,
                                  const cudnnTensorDescriptor_t yd, void* y) {
  if (!pooling_fits(*p, *xd, *yd)) return CUDNN_STATUS_BAD_PARAM;
  std::vector<float> values;
  for_each_index(yd->dims, [&](const std::vector<int>& yi) {
    float acc = is_max(*p) ? -INFINITY : 0.0f;
    const int count = for_each_in_window(*p, *xd, yi, [&](const std::vector<int>& xi) {
      const float v = View{*xd, x}.at(xi);
      acc = is_max(*p) ? (std::isnan(v) || v > acc ? v : acc) : acc + v;
    });
    values.push_back(is_max(*p) ? acc : acc / divisor(*p, count));
  });
  blend(*yd, y, values, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t, const cudnnPoolingDescriptor_t p, const void* alpha,
                                   const cudnnTensorDescriptor_t yd, const void* y,
                                   const cudnnTensorDescriptor_t dyd, const void* dy,
                                   const cudnnTensorDescriptor_t xd, const void* x, const void* beta,
                                   const cudnnTensorDescriptor_t dxd, void* dx) {
  if (!pooling_fits(*p, *xd, *yd) || dyd->dims != yd->dims || dxd->dims != xd->dims)
    return CUDNN_STATUS_BAD_PARAM;
  std::vector<float> sums(size_t(numel(dxd->dims)));
  for_each_index(yd->dims, [&](const std::vector<int>& yi) {
    const float g = View{*dyd, dy}.at(yi);
    if (is_max(*p)) {
      const float m = View{*yd, y}.at(yi);
      bool given = false;
      for_each_in_window(*p, *xd, yi, [&](const std::vector<int>& xi) {
        if (!given && View{*xd, x}.at(xi) == m) {
          sums[size_t(linear(dxd->dims, xi))] += g;
          given = true;
        }
      });
      return;
    }
    const int count = for_each_in_window(*p, *xd, yi, [](const std::vector<int>&) {});
    for_each_in_window(*p, *xd, yi, [&](const std::vector<int>& xi) {
      sums[size_t(linear(dxd->dims, xi))] += g / divisor(*p, count);
    });
  });
  blend(*dxd, dx, sums, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

// ---- batch normalization

cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t xd, const void* x, const cudnnTensorDescriptor_t yd, void* y,
    const cudnnTensorDescriptor_t bn, const void* scale, const void* bias, double factor, void* running_mean,
    void* running_var, double epsilon, void* saved_mean, void* saved_inv_var) {
  if (!bn_fits(*xd, *yd, *bn, mode) || saved_mean || saved_inv_var) return CUDNN_STATUS_NOT_SUPPORTED;
  const View xv{*xd, x};
  const ChannelStats s = channel_stats(xv);
  normalize(xv, *yd, y, s.mean, s.var, floats(scale), floats(bias), epsilon, alpha, beta);
  for (size_t c = 0; c < s.mean.size(); ++c) {
    if (running_mean)
      floats(running_mean)[c] = float((1 - factor) * floats(running_mean)[c] + factor * s.mean[c]);
    if (running_var) {
      const double unbiased = s.count > 1 ? s.var[c] * double(s.count) / double(s.count - 1) : s.var[c];
      floats(running_var)[c] = float((1 - factor) * floats(running_var)[c] + factor * unbiased);
    }
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBatchNormalizationForwardInference(cudnnHandle_t, cudnnBatchNormMode_t mode,
                                                      const void* alpha, const void* beta,
                                                      const cudnnTensorDescriptor_t xd, const void* x,
                                                      const cudnnTensorDescriptor_t yd, void* y,
                                                      const cudnnTensorDescriptor_t bn, const void* scale,
                                                      const void* bias, const void* mean, const void* var,
                                                      double epsilon) {
  if (!bn_fits(*xd, *yd, *bn, mode)) return CUDNN_STATUS_NOT_SUPPORTED;
  const auto channels = size_t(xd->dims[1]);
  const std::vector<double> m(floats(mean), floats(mean) + channels), v(floats(var), floats(var) + channels);
  normalize(View{*xd, x}, *yd, y, m, v, floats(scale), floats(bias), epsilon, alpha, beta);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t, cudnnBatchNormMode_t mode, const void* alpha_data, const void* beta_data,
    const void* alpha_param, const void* beta_param, const cudnnTensorDescriptor_t xd, const void* x,
    const cudnnTensorDescriptor_t dyd, const void* dy, const cudnnTensorDescriptor_t dxd, void* dx,
    const cudnnTensorDescriptor_t bn, const void* scale, void* dscale, void* dbias, double epsilon,
    const void* saved_mean, const void* saved_inv_var) {
  if (!bn_fits(*xd, *dxd, *bn, mode) || dyd->dims != xd->dims || saved_mean || saved_inv_var)
    return CUDNN_STATUS_NOT_SUPPORTED;
  const View xv{*xd, x}, dyv{*dyd, dy};
  const ChannelStats s = channel_stats(xv);
  const size_t channels = s.mean.size();
  std::vector<double> inv_std(channels), sum_dy(channels), sum_dy_xhat(channels);
  for (size_t c = 0; c < channels; ++c) inv_std[c] = 1.0 / std::sqrt(s.var[c] + epsilon);
  for_each_index(xd->dims, [&](const std::vector<int>& i) {
    const size_t c = size_t(i[1]);
    sum_dy[c] += dyv.at(i);
    sum_dy_xhat[c] += dyv.at(i) * (xv.at(i) - s.mean[c]) * inv_std[c];
  });
  std::vector<float> values;
  const double n = double(s.count);
  for_each_index(xd->dims, [&](const std::vector<int>& i) {
    const size_t c = size_t(i[1]);
    const double xhat = (xv.at(i) - s.mean[c]) * inv_std[c];
    values.push_back(
        float(floats(scale)[c] * inv_std[c] * (dyv.at(i) - sum_dy[c] / n - xhat * sum_dy_xhat[c] / n)));
  });
  blend(*dxd, dx, values, alpha_data, beta_data);
  const std::vector<float> dscale_values(sum_dy_xhat.begin(), sum_dy_xhat.end()),
      dbias_values(sum_dy.begin(), sum_dy.end());
  blend(*bn, dscale, dscale_values, alpha_param, beta_param);
  blend(*bn, dbias, dbias_values, alpha_param, beta_param);
  return CUDNN_STATUS_SUCCESS;
}
