// The CPU kernels of FusedElementwise and FusedReduce: interpret the step's expression program
// (dlc/expr_program.h) over blocks of output elements. Each block loads its slice of every input
// into an f32 register row (broadcast inputs through collapsed strides), runs the instructions
// one at a time as tight loops over the block (vectorizable), and stores the outputs; OpenMP
// splits the blocks over threads. Each op computes exactly what the op's own CPU kernel computes
// in f32, so a fused f32 chain gives the bits of the unfused one. FusedReduce runs the program
// over blocks of the reduction's input and sums output 0 in f64 as it comes, in the order (and
// with the split of a long reduction over threads) of the ReduceSum kernel (reduction.cc), so it
// gives the unfused bits too without storing that output; its other outputs are stored per block.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dlc/expr_program.h"
#include "dlc/half.h"
#include "runtime/cpu/broadcast.h"
#include "runtime/cpu/fold_block.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/simd_math.h"

namespace dlc::cpu {

namespace {

constexpr int64_t kBlock = 512;  // elements per block: the register rows stay in L1/L2
static_assert(kBlock % kFoldBlock == 0, "a reduced row's fold blocks must not straddle evaluation blocks");

// Output dims with size-1 dims dropped and neighbours merged wherever every input steps through
// both alike; per input, the element strides over those dims (0 where broadcast).
struct Layout {
  Shape dims;
  std::vector<Shape> strides;
  std::vector<bool> full;    // the input has the output's elements in order
  std::vector<bool> scalar;  // one element, broadcast everywhere
};

Layout make_layout(const ExprProgram& p) {
  Layout l;
  std::vector<Shape> in_strides;
  for (const ExprInput& in : p.inputs) in_strides.push_back(broadcast_strides(in.dims, p.dims));
  l.strides.resize(p.inputs.size());
  for (size_t d = 0; d < p.dims.size(); ++d) {
    if (p.dims[d] == 1) continue;
    bool merge = !l.dims.empty();
    for (size_t k = 0; k < p.inputs.size() && merge; ++k)
      merge = l.strides[k].back() == in_strides[k][d] * p.dims[d];
    if (merge) {
      l.dims.back() *= p.dims[d];
      for (size_t k = 0; k < p.inputs.size(); ++k) l.strides[k].back() = in_strides[k][d];
      continue;
    }
    l.dims.push_back(p.dims[d]);
    for (size_t k = 0; k < p.inputs.size(); ++k) l.strides[k].push_back(in_strides[k][d]);
  }
  for (const ExprInput& in : p.inputs) {
    l.full.push_back(num_elements(in.dims) == num_elements(p.dims));
    l.scalar.push_back(num_elements(in.dims) == 1);
  }
  return l;
}

struct FusedState final : KernelState {
  ExprProgram program;
  Layout layout;
};

// The step's program; `elementwise`: every output has the program's dtype and dims.
ExprProgram program_of(const KernelContext& ctx, bool elementwise) {
  std::vector<ExprInput> inputs;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.inputs[i].data) ctx.fail("input {} is absent", i);
    inputs.push_back({fmt::format("input {}", i), ctx.inputs[i].dtype, ctx.inputs[i].dims});
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (!ctx.outputs[i].data) ctx.fail("output {} is absent", i);
    names.push_back(fmt::format("output {}", i));
  }
  ExprProgram p;
  try {
    p = parse_expr_program(ctx.attrs.s("program"), std::move(inputs), names);
  } catch (const Error& e) {
    ctx.fail("{}", e.what());
  }
  for (size_t i = 0; i < ctx.outputs.size() && elementwise; ++i)
    if (ctx.outputs[i].dtype != p.outputs[i].dtype || ctx.outputs[i].dims != p.dims)
      ctx.fail("output {} is {}{}, the program makes {}{}", i, dtype_name(ctx.outputs[i].dtype),
               shape_str(ctx.outputs[i].dims), dtype_name(p.outputs[i].dtype), shape_str(p.dims));
  return p;
}

// ---- loads and stores between storage and f32 register rows

float to_f32(const void* data, DType t, int64_t i) {
  switch (t) {
    case DType::F16:
      return float(static_cast<const Half*>(data)[i]);
    case DType::BF16:
      return float(static_cast<const BFloat16*>(data)[i]);
    case DType::Bool:
      return static_cast<const uint8_t*>(data)[i] != 0 ? 1.f : 0.f;
    default:
      return static_cast<const float*>(data)[i];
  }
}

// dst[j] = element `from + j` for j < n (stride 1), or element `from` everywhere (stride 0).
void load(const TensorView& v, int64_t from, int64_t stride, int64_t n, float* __restrict dst) {
  if (stride == 0) {
    std::fill(dst, dst + n, to_f32(v.data, v.dtype, from));
  } else if (v.dtype == DType::F32) {
    std::copy_n(v.as<const float>() + from, n, dst);
  } else {
    for (int64_t j = 0; j < n; ++j) dst[j] = to_f32(v.data, v.dtype, from + j);
  }
}

void store(const float* __restrict src, int64_t n, const TensorView& v, int64_t at) {
  switch (v.dtype) {
    case DType::F16:
      for (int64_t j = 0; j < n; ++j) v.as<Half>()[at + j] = Half(src[j]);
      break;
    case DType::BF16:
      for (int64_t j = 0; j < n; ++j) v.as<BFloat16>()[at + j] = BFloat16(src[j]);
      break;
    case DType::Bool:
      for (int64_t j = 0; j < n; ++j) v.as<uint8_t>()[at + j] = src[j] != 0.f ? 1 : 0;
      break;
    default:
      std::copy_n(src, n, v.as<float>() + at);
  }
}

// Input k's elements [begin, begin + n) of the output order into dst, row segment by segment.
void load_broadcast(const TensorView& v, const Layout& l, size_t k, int64_t begin, int64_t n,
                    float* __restrict dst) {
  const Shape& st = l.strides[k];
  const int64_t rank = int64_t(l.dims.size());
  const int64_t inner = l.dims.back();
  for (int64_t i = begin, end = begin + n; i < end;) {
    int64_t rem = i / inner;
    const int64_t col = i % inner;
    int64_t off = col * st[rank - 1];
    for (int64_t d = rank - 2; d >= 0; --d) {
      off += (rem % l.dims[d]) * st[d];
      rem /= l.dims[d];
    }
    const int64_t len = std::min(inner - col, end - i);
    load(v, off, st[rank - 1], len, dst + (i - begin));
    i += len;
  }
}

// ---- the ops, one loop each over a block (the expressions of the unfused CPU kernels)

template <typename F>
void map1(const float* __restrict a, float* __restrict y, int64_t n, F f) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] = f(a[j]);
}

template <typename F>
void map2(const float* __restrict a, const float* __restrict b, float* __restrict y, int64_t n, F f) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] = f(a[j], b[j]);
}

template <typename F>
void map3(const float* __restrict a, const float* __restrict b, const float* __restrict c,
          float* __restrict y, int64_t n, F f) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] = f(a[j], b[j], c[j]);
}

float round_to(float x, DType t) {
  switch (t) {
    case DType::F16:
      return float(Half(x));
    case DType::BF16:
      return float(BFloat16(x));
    case DType::Bool:
      return x != 0.f ? 1.f : 0.f;
    default:
      return x;
  }
}

// Runs `in` over n elements into y; src[k] points at value k's elements of the block.
DLC_SIMD_CLONES void run_instr(const ExprInstr& in, const float* const* src, int64_t n, float* __restrict y) {
  const auto arg = [&](size_t a) { return src[in.args[a]]; };
  switch (in.op) {
    case ExprOp::Input:
    case ExprOp::Constant:
      return;  // loaded per block / filled once
    case ExprOp::Add:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a + b; });
    case ExprOp::Sub:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a - b; });
    case ExprOp::Mul:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a * b; });
    case ExprOp::Div:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a / b; });
    case ExprOp::Pow:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return std::pow(a, b); });
    case ExprOp::Max:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return b != b || a < b ? b : a; });
    case ExprOp::Min:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return b != b || b < a ? b : a; });
    case ExprOp::Neg:
      return map1(arg(0), y, n, [](float a) { return -a; });
    case ExprOp::Abs:
      return map1(arg(0), y, n, [](float a) { return std::fabs(a); });
    case ExprOp::Relu:
      return map1(arg(0), y, n, [](float a) { return a < 0.f ? 0.f : a; });
    case ExprOp::Sigmoid:
      return map1(arg(0), y, n, [](float x) {
        return x >= 0 ? 1.f / (1.f + simd_exp(-x)) : simd_exp(x) / (1.f + simd_exp(x));
      });
    case ExprOp::Tanh:
      return map1(arg(0), y, n, [](float a) { return std::tanh(a); });
    case ExprOp::Exp:
      return map1(arg(0), y, n, [](float a) { return simd_exp(a); });
    case ExprOp::Log:
      return map1(arg(0), y, n, [](float a) { return std::log(a); });
    case ExprOp::Sqrt:
      return map1(arg(0), y, n, [](float a) { return std::sqrt(a); });
    case ExprOp::Erf:
      return map1(arg(0), y, n, [](float a) { return simd_erf(a); });
    case ExprOp::Where:
      return map3(arg(0), arg(1), arg(2), y, n, [](float c, float a, float b) { return c != 0.f ? a : b; });
    case ExprOp::Cast: {
      const DType to = in.to;
      return map1(arg(0), y, n, [to](float a) { return round_to(a, to); });
    }
    case ExprOp::Clip:
      return map3(arg(0), arg(1), arg(2), y, n, [](float x, float lo, float hi) {
        x = lo != lo || x < lo ? lo : x;  // a NaN x or bound gives NaN
        return hi != hi || hi < x ? hi : x;
      });
    case ExprOp::ReluGrad:
      return map2(arg(0), arg(1), y, n, [](float dy, float v) { return v > 0.f ? dy : 0.f; });
    case ExprOp::Reciprocal:
      return map1(arg(0), y, n, [](float a) { return 1.f / a; });
    case ExprOp::Equal:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a == b ? 1.f : 0.f; });
    case ExprOp::Greater:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a > b ? 1.f : 0.f; });
    case ExprOp::GreaterOrEqual:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a >= b ? 1.f : 0.f; });
    case ExprOp::Less:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a < b ? 1.f : 0.f; });
    case ExprOp::LessOrEqual:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a <= b ? 1.f : 0.f; });
    case ExprOp::Sin:
      return map1(arg(0), y, n, [](float a) { return std::sin(a); });
    case ExprOp::Cos:
      return map1(arg(0), y, n, [](float a) { return std::cos(a); });
    case ExprOp::Tan:
      return map1(arg(0), y, n, [](float a) { return std::tan(a); });
    case ExprOp::Asin:
      return map1(arg(0), y, n, [](float a) { return std::asin(a); });
    case ExprOp::Acos:
      return map1(arg(0), y, n, [](float a) { return std::acos(a); });
    case ExprOp::Atan:
      return map1(arg(0), y, n, [](float a) { return std::atan(a); });
    case ExprOp::Sinh:
      return map1(arg(0), y, n, [](float a) { return std::sinh(a); });
    case ExprOp::Cosh:
      return map1(arg(0), y, n, [](float a) { return std::cosh(a); });
    case ExprOp::Asinh:
      return map1(arg(0), y, n, [](float a) { return std::asinh(a); });
    case ExprOp::Acosh:
      return map1(arg(0), y, n, [](float a) { return std::acosh(a); });
    case ExprOp::Atanh:
      return map1(arg(0), y, n, [](float a) { return std::atanh(a); });
    case ExprOp::Floor:
      return map1(arg(0), y, n, [](float a) { return std::floor(a); });
    case ExprOp::Ceil:
      return map1(arg(0), y, n, [](float a) { return std::ceil(a); });
    case ExprOp::Round:
      return map1(arg(0), y, n, [](float a) { return std::nearbyint(a); });
    case ExprOp::Sign:
      return map1(arg(0), y, n, [](float a) { return a > 0.f ? 1.f : (a < 0.f ? -1.f : a); });
    case ExprOp::Softplus:
      return map1(arg(0), y, n,
                  [](float a) { return a > 0.f ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a)); });
    case ExprOp::Softsign:
      return map1(arg(0), y, n, [](float a) { return a / (1.f + std::fabs(a)); });
    case ExprOp::Expm1:
      return map1(arg(0), y, n, [](float a) { return std::expm1(a); });
    case ExprOp::And:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a != 0.f && b != 0.f ? 1.f : 0.f; });
    case ExprOp::Or:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return a != 0.f || b != 0.f ? 1.f : 0.f; });
    case ExprOp::Xor:
      return map2(arg(0), arg(1), y, n,
                  [](float a, float b) { return (a != 0.f) != (b != 0.f) ? 1.f : 0.f; });
    case ExprOp::Not:
      return map1(arg(0), y, n, [](float a) { return a == 0.f ? 1.f : 0.f; });
    case ExprOp::Fmod:
      return map2(arg(0), arg(1), y, n, [](float a, float b) { return std::fmod(a, b); });
  }
}

// This thread's register rows for `p` (kept between steps: no allocation per run), with the
// constants filled in.
float* registers(const ExprProgram& p) {
  thread_local std::vector<float> regs;
  if (regs.size() < p.instrs.size() * size_t(kBlock)) regs.resize(p.instrs.size() * size_t(kBlock));
  for (size_t k = 0; k < p.instrs.size(); ++k)
    if (p.instrs[k].op == ExprOp::Constant)
      std::fill_n(regs.data() + k * kBlock, kBlock, float(p.instrs[k].value));
  return regs.data();
}

// Output elements [begin, begin + n), n <= kBlock: src[k] then points at value k's elements. An
// f32 input in output order is read where it lies; every other value gets a register row.
void eval_block(const KernelContext& ctx, const ExprProgram& p, const Layout& l, float* regs,
                const float** src, int64_t begin, int64_t n) {
  for (size_t k = 0; k < p.instrs.size(); ++k) {
    const ExprInstr& in = p.instrs[k];
    float* y = regs + k * kBlock;
    src[k] = y;
    if (in.op != ExprOp::Input) {
      run_instr(in, src, n, y);
      continue;
    }
    const size_t i = size_t(in.input);
    const TensorView& v = ctx.inputs[i];
    if (l.full[i] && v.dtype == DType::F32)
      src[k] = v.as<const float>() + begin;
    else if (l.full[i])
      load(v, begin, 1, n, y);
    else if (l.scalar[i])
      load(v, 0, 0, n, y);
    else
      load_broadcast(v, l, i, begin, n, y);
  }
}

// Blocks [first, last) of the output.
void run_blocks(const KernelContext& ctx, const ExprProgram& p, const Layout& l, int64_t first,
                int64_t last) {
  float* regs = registers(p);
  std::vector<const float*> src(p.instrs.size());
  const int64_t total = num_elements(p.dims);
  for (int64_t b = first; b < last; ++b) {
    const int64_t begin = b * kBlock, n = std::min(kBlock, total - begin);
    eval_block(ctx, p, l, regs, src.data(), begin, n);
    for (size_t o = 0; o < p.outputs.size(); ++o)
      store(src[size_t(p.outputs[o].value)], n, ctx.outputs[o], begin);
  }
}

void run_program(const KernelContext& ctx, const ExprProgram& p, const Layout& l) {
  const int64_t total = num_elements(p.dims);
  const int64_t blocks = (total + kBlock - 1) / kBlock;
  if (total <= 32768) return run_blocks(ctx, p, l, 0, blocks);  // not worth a parallel region
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    run_blocks(ctx, p, l, blocks * t / threads, blocks * (t + 1) / threads);
  }
}

// ---- FusedReduce

// The program and the reduction's [outer, R, inner] view of its dims.
struct ReduceState final : KernelState {
  ExprProgram program;
  Layout layout;
  int64_t outer = 1, R = 1, inner = 1;
  bool mean = false;

  float finish(double sum) const { return float(mean ? sum / double(R) : sum); }
};

ReduceState reduce_state(const KernelContext& ctx) {
  ReduceState st;
  st.program = program_of(ctx, false);
  st.layout = make_layout(st.program);
  const std::string& op = ctx.attrs.s("reduce");
  if (op != "ReduceSum" && op != "ReduceMean") ctx.fail("reduce '{}' is not ReduceSum or ReduceMean", op);
  st.mean = op == "ReduceMean";
  const Shape& dims = st.program.dims;
  std::vector<int64_t> axes = ctx.attrs.ints("axes", {});
  if (axes.empty())
    for (int64_t d = 0; d < int64_t(dims.size()); ++d) axes.push_back(d);
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= int64_t(dims.size()) || (i > 0 && axes[i] != axes[i - 1] + 1))
      ctx.fail("axes must be adjacent, increasing and within rank {}", dims.size());
  for (int64_t d = 0; d < int64_t(dims.size()); ++d)
    (axes.empty() || d < axes.front() ? st.outer : d <= axes.back() ? st.R : st.inner) *= dims[size_t(d)];
  if (st.program.outputs[0].dtype != DType::F32 || ctx.outputs[0].dtype != DType::F32 ||
      num_elements(ctx.outputs[0].dims) != st.outer * st.inner)
    ctx.fail("expects the program's f32 output 0 reduced to an f32 output of {} elements",
             st.outer * st.inner);
  for (size_t i = 1; i < ctx.outputs.size(); ++i)
    if (ctx.outputs[i].dtype != st.program.outputs[i].dtype || ctx.outputs[i].dims != dims)
      ctx.fail("output {} is {}{}, the program makes {}{}", i, dtype_name(ctx.outputs[i].dtype),
               shape_str(ctx.outputs[i].dims), dtype_name(st.program.outputs[i].dtype), shape_str(dims));
  return st;
}

// Program output 0 over elements [begin, begin + n) (n <= kBlock), with outputs 1, … stored.
const float* eval_reduced(const KernelContext& ctx, const ReduceState& st, float* regs, const float** src,
                          int64_t begin, int64_t n) {
  const ExprProgram& p = st.program;
  eval_block(ctx, p, st.layout, regs, src, begin, n);
  for (size_t o = 1; o < p.outputs.size(); ++o)
    store(src[size_t(p.outputs[o].value)], n, ctx.outputs[o], begin);
  return src[size_t(p.outputs[0].value)];
}

// acc[i] += element (o, j, i0 + i) of program output 0 for j in [j0, j1) (in that order), i < n.
void accumulate(const KernelContext& ctx, const ReduceState& st, float* regs, const float** src, int64_t o,
                int64_t j0, int64_t j1, int64_t i0, int64_t n, double* __restrict acc) {
  if (st.inner == 1) {  // the run of the row in blocks, folded as ReduceSum folds them
    for (int64_t j = j0; j < j1; j += kBlock) {
      const int64_t m = std::min(kBlock, j1 - j);
      const float* v = eval_reduced(ctx, st, regs, src, o * st.R + j, m);
      for (int64_t b = 0; b < m; b += kFoldBlock)
        fold_block(sum_of<float>(kSame, kAsIs), acc[0], v + b, std::min(kFoldBlock, m - b), 0);
    }
    return;
  }
  // Whole rows of a short inner extent lie one after another: one block evaluates several of them
  // (the program's dispatch per instruction is then paid once for all), summed row by row in
  // order as before.
  const int64_t rows_per_block = n == st.inner ? std::max<int64_t>(1, kBlock / n) : 1;
  for (int64_t j = j0; j < j1; j += rows_per_block) {
    const int64_t rows = std::min(rows_per_block, j1 - j);
    const float* v = eval_reduced(ctx, st, regs, src, (o * st.R + j) * st.inner + i0, rows * n);
    for (int64_t r = 0; r < rows; ++r) {
      const float* __restrict row = v + r * n;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) acc[i] += double(row[i]);
    }
  }
}

// The blocks of inner under outer index o: calls f(i0, n) for each.
template <typename F>
void for_inner_blocks(const ReduceState& st, F&& f) {
  for (int64_t i0 = 0; i0 < st.inner; i0 += kBlock) f(i0, std::min(kBlock, st.inner - i0));
}

void run_reduce(const KernelContext& ctx, const ReduceState& st, float* y) {
  const int64_t nout = st.outer * st.inner;
  if (const int64_t chunks = reduce_split_chunks(nout, st.R)) {  // partial sums per chunk, then in order
    std::vector<double> part(size_t(chunks * nout), 0.0);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      float* regs = registers(st.program);
      std::vector<const float*> src(st.program.instrs.size());
      const int64_t j0 = st.R * c / chunks, j1 = st.R * (c + 1) / chunks;
      for (int64_t o = 0; o < st.outer; ++o)
        for_inner_blocks(st, [&](int64_t i0, int64_t n) {
          accumulate(ctx, st, regs, src.data(), o, j0, j1, i0, n, part.data() + c * nout + o * st.inner + i0);
        });
    }
    for (int64_t k = 0; k < nout; ++k) {
      double a = part[size_t(k)];
      for (int64_t c = 1; c < chunks; ++c) a += part[size_t(c * nout + k)];
      y[k] = st.finish(a);
    }
    return;
  }
  const int64_t blocks = (st.inner + kBlock - 1) / kBlock, tasks = st.outer * blocks;
  const bool parallel = tasks > 1 && st.outer * st.R * st.inner > kReduceParallelWork;
#pragma omp parallel if (parallel)
  {
    float* regs = registers(st.program);
    std::vector<const float*> src(st.program.instrs.size());
    double acc[kBlock];
#pragma omp for schedule(static)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t o = t / blocks, i0 = (t % blocks) * kBlock, n = std::min(kBlock, st.inner - i0);
      std::fill_n(acc, n, 0.0);
      accumulate(ctx, st, regs, src.data(), o, 0, st.R, i0, n, acc);
      for (int64_t i = 0; i < n; ++i) y[o * st.inner + i0 + i] = st.finish(acc[i]);
    }
  }
}

}  // namespace

void kernel_FusedReduce(const KernelContext& ctx) {
  ReduceState* state = ctx.state ? dynamic_cast<ReduceState*>(ctx.state->get()) : nullptr;
  ReduceState local;
  if (!state) {
    local = reduce_state(ctx);
    state = &local;
    if (ctx.state) {
      *ctx.state = std::make_unique<ReduceState>(std::move(local));
      state = static_cast<ReduceState*>(ctx.state->get());
    }
  }
  run_reduce(ctx, *state, ctx.outputs[0].as<float>());
}

void kernel_FusedElementwise(const KernelContext& ctx) {
  FusedState* state = ctx.state ? dynamic_cast<FusedState*>(ctx.state->get()) : nullptr;
  FusedState local;
  if (!state) {
    state = &local;
    local.program = program_of(ctx, true);
    local.layout = make_layout(local.program);
    if (ctx.state) {
      *ctx.state = std::make_unique<FusedState>(std::move(local));
      state = static_cast<FusedState*>(ctx.state->get());
    }
  }
  run_program(ctx, state->program, state->layout);
}

}  // namespace dlc::cpu
