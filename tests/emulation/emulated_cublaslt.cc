// The part of cuBLASLt that dlc's runtime calls (runtime/cuda/cublaslt_matmul.cc), computed on the
// host from cuBLASLt's documentation, so that the runtime's own GEMM code — its layouts,
// operation flags, batch strides, epilogues and operand order — runs on the emulated device.
// Linked into the emulated test programs, these definitions stand in for libcublasLt's.
//
// D = epilogue(alpha * op(A) op(B) + beta * C), column-major, every batch at its layout's stride,
// accumulated in f32; C is not read when beta is 0; the bias (one value per row of D, the same for
// every batch) is added before the Relu, which is max(x, 0) as CUDA's fmaxf computes it (a NaN
// becomes 0; cuBLASLt does not document its NaN behaviour). Anything the runtime does not use —
// another compute type, attribute or epilogue, mismatched dims — returns an error status, which
// the runtime's checks report.
#include <cublasLt.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "tests/emulation/host_elements.h"

struct cublasLtContext {};

namespace {

using dlc::DType;

struct MatmulDesc {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  std::optional<cudaDataType_t> bias_type;  // default: D's
  int64_t bias_batch_stride = 0;
};

struct Layout {
  cudaDataType_t type = CUDA_R_32F;
  int64_t rows = 0, cols = 0, ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;
};

MatmulDesc* desc_of(cublasLtMatmulDesc_t d) { return reinterpret_cast<MatmulDesc*>(d); }
Layout* layout_of(cublasLtMatrixLayout_t l) { return reinterpret_cast<Layout*>(l); }

std::optional<DType> dtype_of(cudaDataType_t t) {
  if (t == CUDA_R_32F) return DType::F32;
  if (t == CUDA_R_16F) return DType::F16;
  if (t == CUDA_R_16BF) return DType::BF16;
  return std::nullopt;
}

template <typename T>
bool read_value(const void* buf, size_t size, T* out) {
  if (size != sizeof(T) || !buf) return false;
  std::memcpy(out, buf, sizeof(T));
  return true;
}

bool has_bias(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS;
}
bool has_relu(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_RELU || e == CUBLASLT_EPILOGUE_RELU_BIAS;
}

// The problem's m, n, k when the descriptors describe one this emulation computes.
struct Dims {
  int64_t m, n, k;
};

std::optional<Dims> check_problem(const MatmulDesc& op, const Layout& a, const Layout& b, const Layout& c,
                                  const Layout& d) {
  if (op.compute != CUBLAS_COMPUTE_32F || op.scale != CUDA_R_32F) return std::nullopt;
  if (op.epilogue != CUBLASLT_EPILOGUE_DEFAULT && !has_bias(op.epilogue) && !has_relu(op.epilogue))
    return std::nullopt;
  for (const Layout* l : {&a, &b, &c, &d})
    if (l->type != d.type || !dtype_of(l->type) || l->ld < l->rows || l->batch != d.batch)
      return std::nullopt;
  if (has_bias(op.epilogue) && op.bias_type.value_or(d.type) != d.type) return std::nullopt;
  const bool ta = op.transa == CUBLAS_OP_T, tb = op.transb == CUBLAS_OP_T;
  const Dims dims{d.rows, d.cols, ta ? a.rows : a.cols};
  if ((ta ? a.cols : a.rows) != dims.m || (tb ? b.cols : b.rows) != dims.k ||
      (tb ? b.rows : b.cols) != dims.n)
    return std::nullopt;
  if (c.rows != d.rows || c.cols != d.cols) return std::nullopt;
  return dims;
}

// Element (r, c) of batch `batch` of a column-major matrix, or of its transpose.
float element(const Layout& l, const void* base, int64_t batch, int64_t r, int64_t c, bool transpose) {
  if (transpose) std::swap(r, c);
  return dlc::emulation::load_element(*dtype_of(l.type), base, batch * l.stride + r + c * l.ld);
}

}  // namespace

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = new cublasLtContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  auto* d = new MatmulDesc;
  d->compute = compute;
  d->scale = scale;
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(d);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc_of(desc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
  MatmulDesc& d = *desc_of(desc);
  int32_t i32 = 0;
  bool ok = false;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB:
      ok = read_value(buf, size, &i32) && (i32 == CUBLAS_OP_N || i32 == CUBLAS_OP_T);
      if (ok) (attr == CUBLASLT_MATMUL_DESC_TRANSA ? d.transa : d.transb) = cublasOperation_t(i32);
      break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE: {
      uint32_t e = 0;
      ok = read_value(buf, size, &e);
      d.epilogue = cublasLtEpilogue_t(e);
      break;
    }
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      ok = read_value(buf, size, &d.bias);
      break;
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      ok = read_value(buf, size, &i32);
      d.bias_type = cudaDataType_t(i32);
      break;
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
      ok = read_value(buf, size, &d.bias_batch_stride);
      break;
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  auto* l = new Layout;
  *l = {type, int64_t(rows), int64_t(cols), ld, 1, 0};
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(l);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout_of(layout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                                size_t size) {
  Layout& l = *layout_of(layout);
  bool ok = false;
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)
    ok = read_value(buf, size, &l.batch) && l.batch >= 1;
  else if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)
    ok = read_value(buf, size, &l.stride);
  else
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

// The preference holds nothing the emulation needs: its attributes are only checked to be known.
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  *pref = new cublasLtMatmulPreferenceOpaque_t{};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t size) {
  uint64_t u64 = 0;
  uint32_t u32 = 0;
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      return read_value(buf, size, &u64) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
      return read_value(buf, size, &u32) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

// One algorithm (the emulation's) for every problem it computes; none for the others.
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  *returned = 0;
  if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
  if (!check_problem(*desc_of(desc), *layout_of(a), *layout_of(b), *layout_of(c), *layout_of(d)))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc, const void* alpha,
                              const void* a_data, cublasLtMatrixLayout_t a_layout, const void* b_data,
                              cublasLtMatrixLayout_t b_layout, const void* beta, const void* c_data,
                              cublasLtMatrixLayout_t c_layout, void* d_data, cublasLtMatrixLayout_t d_layout,
                              const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t) {
  const MatmulDesc& op = *desc_of(desc);
  const Layout &a = *layout_of(a_layout), &b = *layout_of(b_layout), &c = *layout_of(c_layout),
               &d = *layout_of(d_layout);
  const std::optional<Dims> dims = check_problem(op, a, b, c, d);
  if (!dims || !a_data || !b_data || !d_data || (has_bias(op.epilogue) && !op.bias))
    return CUBLAS_STATUS_INVALID_VALUE;
  const float alpha_value = *static_cast<const float*>(alpha), beta_value = *static_cast<const float*>(beta);
  if (beta_value != 0.0f && !c_data) return CUBLAS_STATUS_INVALID_VALUE;
  const DType type = *dtype_of(d.type);
  const bool ta = op.transa == CUBLAS_OP_T, tb = op.transb == CUBLAS_OP_T;
  for (int64_t batch = 0; batch < d.batch; ++batch)
    for (int64_t j = 0; j < dims->n; ++j)
      for (int64_t i = 0; i < dims->m; ++i) {
        float sum = 0.0f;
        for (int64_t p = 0; p < dims->k; ++p)
          sum += element(a, a_data, batch, i, p, ta) * element(b, b_data, batch, p, j, tb);
        float value = alpha_value * sum;
        if (beta_value != 0.0f) value += beta_value * element(c, c_data, batch, i, j, false);
        if (has_bias(op.epilogue))
          value += dlc::emulation::load_element(type, op.bias, batch * op.bias_batch_stride + i);
        if (has_relu(op.epilogue)) value = std::fmax(value, 0.0f);
        dlc::emulation::store_element(type, d_data, batch * d.stride + i + j * d.ld, value);
      }
  return CUBLAS_STATUS_SUCCESS;
}
