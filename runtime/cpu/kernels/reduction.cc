// CPU kernels of the reduction family: Reduce* over any set of axes, ArgMax/ArgMin, CumSum and
// Softmax/LogSoftmax. Each sees its input as (outer, reduced, inner) and runs in parallel
// (OpenMP) over outer x blocks of inner, so the last axis and a middle axis are both fast; a
// reduction to a handful of outputs is split over chunks of the reduced extent instead.
// Float sums accumulate in double, integer ones in int64; a contiguous row folds into its
// result in independent lanes (fold_block.h).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/fold_block.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/row_counter.h"
#include "runtime/cpu/softmax.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

// Input offsets of every index of `dims` (row-major order) given their strides.
std::vector<int64_t> odometer_offsets(const Shape& dims, const Shape& strides) {
  std::vector<int64_t> offs(size_t(num_elements(dims)));
  RowCounter<1> counter(dims, {&strides});
  for (auto& o : offs) {
    o = counter.offset(0);
    counter.next();
  }
  return offs;
}

// The input as (outer, R, inner): output element k = o * inner + i reduces
// x[base(o) + off(j) + i] over j < R. Adjacent reduced axes need no tables. Scattered ones
// ending at the last axis (inner = 1, as a channel sum over [0, 2, 3] does) reduce runs of `run`
// contiguous elements: the table holds one offset per run.
struct Layout {
  int64_t outer = 1, R = 1, inner = 1, run = 1;
  bool contiguous = true;
  std::vector<int64_t> obase, roff;  // used when !contiguous

  int64_t base(int64_t o) const { return contiguous ? o * R * inner : obase[size_t(o)]; }
  int64_t off(int64_t j) const {
    if (contiguous) return j * inner;
    return run == 1 ? roff[size_t(j)] : roff[size_t(j / run)] + j % run;
  }
  /// The end of the contiguous stretch of reduced elements holding j (inner = 1 only).
  int64_t run_end(int64_t j) const { return contiguous ? R : (j / run + 1) * run; }
  int64_t outputs() const { return outer * inner; }
};

// `axes`: sorted, unique, non-negative; empty = every axis.
Layout make_layout(const KernelContext& ctx, const Shape& dims, std::vector<int64_t> axes) {
  const int64_t rank = int64_t(dims.size());
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  Layout L;
  if (axes.empty()) return L;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= rank || (i > 0 && axes[i] <= axes[i - 1]))
      ctx.fail("invalid axes for input of shape {}", shape_str(dims));
  const int64_t first = axes.front(), last = axes.back();
  auto prod = [&](int64_t b, int64_t e) {
    int64_t p = 1;
    for (int64_t d = b; d < e; ++d) p *= dims[size_t(d)];
    return p;
  };
  L.inner = prod(last + 1, rank);
  L.contiguous = last - first + 1 == int64_t(axes.size());
  if (L.contiguous) {
    L.outer = prod(0, first);
    L.R = prod(first, last + 1);
    return L;
  }
  Shape kept_dims, kept_strides, red_dims, red_strides;
  Shape strides(size_t(last + 1));
  for (int64_t d = last, stride = L.inner; d >= 0; stride *= dims[size_t(d)], --d)
    strides[size_t(d)] = stride;
  int64_t run_from = last + 1;  // the reduced axes [run_from, rank) form the runs
  if (last == rank - 1)
    for (size_t i = axes.size(); i-- > 0 && axes[i] == run_from - 1;) L.run *= dims[size_t(--run_from)];
  for (int64_t d = 0; d < run_from; ++d) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), d);
    (reduced ? red_dims : kept_dims).push_back(dims[size_t(d)]);
    (reduced ? red_strides : kept_strides).push_back(strides[size_t(d)]);
  }
  L.obase = odometer_offsets(kept_dims, kept_strides);
  L.roff = odometer_offsets(red_dims, red_strides);
  L.outer = int64_t(L.obase.size());
  L.R = int64_t(L.roff.size()) * L.run;
  return L;
}

Layout axis_layout(const KernelContext& ctx) {
  const Shape& dims = ctx.inputs[0].dims;
  int64_t axis = ctx.attrs.i("axis");
  if (axis < 0) axis += int64_t(dims.size());
  return make_layout(ctx, dims, {axis});
}

// ---- Reduce*: an op has Acc, init(), step(acc, x, k), combine(a, b), finish(acc, n, k).

// Folds x_o[off(j)] for j in [j0, j1) into acc (inner = 1): from j0, blocks of up to kFoldBlock
// contiguous elements (FusedReduce's blocks where the axes are adjacent), each through fold_block.
template <typename T, typename Op>
void fold_rows(const Layout& L, const T* x_o, int64_t j0, int64_t j1, const Op& op, typename Op::Acc& acc,
               int64_t k) {
  for (int64_t j = j0; j < j1;) {
    const int64_t n = std::min({kFoldBlock, j1 - j, L.run_end(j) - j});
    fold_block(op, acc, x_o + L.off(j), n, k);
    j += n;
  }
}

template <typename T, typename Out, typename Op>
void reduce_split(const Layout& L, const T* x, Out* y, const Op& op, int64_t chunks) {
  using Acc = typename Op::Acc;
  const int64_t nout = L.outputs();
  std::vector<Acc> part(size_t(chunks * nout), op.init());
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t j0 = L.R * c / chunks, j1 = L.R * (c + 1) / chunks;
    Acc* acc = part.data() + c * nout;
    for (int64_t o = 0; o < L.outer; ++o) {
      if (L.inner == 1) {
        fold_rows(L, x + L.base(o), j0, j1, op, acc[o], o);
        continue;
      }
      for (int64_t j = j0; j < j1; ++j) {
        const T* p = x + L.base(o) + L.off(j);
        for (int64_t i = 0; i < L.inner; ++i) op.step(acc[o * L.inner + i], p[i], o * L.inner + i);
      }
    }
  }
  for (int64_t k = 0; k < nout; ++k) {
    Acc a = part[size_t(k)];
    for (int64_t c = 1; c < chunks; ++c) a = op.combine(a, part[size_t(c * nout + k)]);
    y[k] = Out(op.finish(a, L.R, k));
  }
}

template <typename T, typename Out, typename Op>
void reduce(const Layout& L, const T* x, Out* y, const Op& op) {
  using Acc = typename Op::Acc;
  if (const int64_t chunks = reduce_split_chunks(L.outputs(), L.R)) return reduce_split(L, x, y, op, chunks);
  for_each_inner_block(L.outer, L.R, L.inner, [&](int64_t o, int64_t i0, int64_t n) {
    const T* xb = x + L.base(o) + i0;
    const int64_t k0 = o * L.inner + i0;
    if (L.inner == 1) {
      Acc a = op.init();
      fold_rows(L, xb, 0, L.R, op, a, k0);
      y[k0] = Out(op.finish(a, L.R, k0));
      return;
    }
    Acc acc[kInnerBlock];
    std::fill_n(acc, n, op.init());
    for (int64_t j = 0; j < L.R; ++j) {
      const T* p = xb + L.off(j);
      for (int64_t i = 0; i < n; ++i) op.step(acc[i], p[i], k0 + i);
    }
    for (int64_t i = 0; i < n; ++i) y[k0 + i] = Out(op.finish(acc[i], L.R, k0 + i));
  });
}

template <typename T>
struct ProdOp {
  using Acc = Wide<T>;
  Acc init() const { return Acc(1); }
  void step(Acc& a, T x, int64_t) const { a *= Acc(x); }
  Acc combine(Acc a, Acc b) const { return a * b; }
  T finish(Acc a, int64_t, int64_t) const { return T(a); }
};

// Max (Greater) or Min; NaN propagates.
template <typename T, bool Greater>
struct ExtremumOp {
  using Acc = T;
  Acc init() const {
    if constexpr (std::numeric_limits<T>::has_infinity)
      return Greater ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else
      return Greater ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  void step(Acc& a, T x, int64_t) const {
    if (Greater ? x > a : x < a) a = x;
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) a = x;
  }
  Acc combine(Acc a, Acc b) const {
    step(a, b, 0);
    return a;
  }
  T finish(Acc a, int64_t, int64_t) const { return a; }
};

// log(sum(exp(x - m))) + m with m the precomputed max of output k.
template <typename T>
struct LogSumExpOp {
  using Acc = double;
  const double* max;
  double shift(int64_t k) const { return std::isfinite(max[k]) ? max[k] : 0.0; }
  Acc init() const { return 0.0; }
  void step(Acc& a, T x, int64_t k) const { a += std::exp(double(x) - shift(k)); }
  Acc combine(Acc a, Acc b) const { return a + b; }
  T finish(Acc a, int64_t, int64_t k) const { return T(std::log(a) + shift(k)); }
};

template <typename A>
A mean(A sum, int64_t n) {
  if constexpr (std::is_floating_point_v<A>)
    return sum / A(n);
  else
    return n == 0 ? A(0) : sum / A(n);
}

// Runs the Reduce* op make(TypeTag<T>) over the kernel's input; float-only ops take f32/f64.
template <bool FloatOnly, typename MakeOp>
void reduce_kernel(const KernelContext& ctx, MakeOp make) {
  const Layout L = make_layout(ctx, ctx.inputs[0].dims, ctx.attrs.ints("axes", {}));
  auto body = [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce<T, T>(L, ctx.inputs[0].as<T>(), ctx.outputs[0].as<T>(), make(tag));
  };
  if constexpr (FloatOnly)
    dispatch_float(ctx.inputs[0].dtype, ctx, body);
  else
    dispatch_numeric(ctx.inputs[0].dtype, ctx, body);
}

// ---- ArgMax / ArgMin

template <bool Greater>
void arg_extremum(const KernelContext& ctx) {
  const Layout L = axis_layout(ctx);
  if (L.R == 0) ctx.fail("cannot take the arg-extremum over an empty axis");
  const bool last = ctx.attrs.i("select_last_index", 0) != 0;
  dispatch_numeric(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = ctx.inputs[0].as<T>();
    int64_t* y = ctx.outputs[0].as<int64_t>();
    auto better = [last](T v, T best) {
      if (Greater) return last ? v >= best : v > best;
      return last ? v <= best : v < best;
    };
    for_each_inner_block(L.outer, L.R, L.inner, [&](int64_t o, int64_t i0, int64_t n) {
      const T* xb = x + L.base(o) + i0;
      T best[kInnerBlock];
      int64_t* idx = y + o * L.inner + i0;
      std::copy_n(xb, n, best);
      std::fill_n(idx, n, 0);
      for (int64_t j = 1; j < L.R; ++j) {
        const T* p = xb + j * L.inner;
        for (int64_t i = 0; i < n; ++i)
          if (better(p[i], best[i])) {
            best[i] = p[i];
            idx[i] = j;
          }
      }
    });
  });
}

// ---- Softmax / LogSoftmax over one axis, max-subtracted.

template <bool Log>
void softmax(const KernelContext& ctx) {
  const Layout L = axis_layout(ctx);
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_along<Log>(ctx.inputs[0].as<T>(), ctx.outputs[0].as<T>(), L.outer, L.R, L.inner);
  });
}

// dx = y * (dy - Σ dy·y) along the axis (inputs dy, y).
void softmax_grad(const KernelContext& ctx) {
  const Layout L = axis_layout(ctx);
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_grad_along(ctx.inputs[0].as<T>(), ctx.inputs[1].as<T>(), ctx.outputs[0].as<T>(), L.outer, L.R,
                       L.inner);
  });
}

}  // namespace

void kernel_ReduceL1(const KernelContext& ctx) {
  reduce_kernel<false>(ctx, [](auto tag) {
    return sum_of<typename decltype(tag)::type>([](auto a) { return a < 0 ? -a : a; }, kAsIs);
  });
}

void kernel_ReduceL2(const KernelContext& ctx) {
  reduce_kernel<true>(ctx, [](auto tag) {
    return sum_of<typename decltype(tag)::type>([](auto a) { return a * a; },
                                                [](auto a, int64_t) { return std::sqrt(a); });
  });
}

void kernel_ReduceLogSum(const KernelContext& ctx) {
  reduce_kernel<true>(ctx, [](auto tag) {
    return sum_of<typename decltype(tag)::type>(kSame, [](auto a, int64_t) { return std::log(a); });
  });
}

void kernel_ReduceLogSumExp(const KernelContext& ctx) {
  const Layout L = make_layout(ctx, ctx.inputs[0].dims, ctx.attrs.ints("axes", {}));
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = ctx.inputs[0].as<T>();
    std::vector<double> max(size_t(L.outputs()));
    reduce<T, double>(L, x, max.data(), ExtremumOp<T, true>{});
    reduce<T, T>(L, x, ctx.outputs[0].as<T>(), LogSumExpOp<T>{max.data()});
  });
}

void kernel_ReduceMax(const KernelContext& ctx) {
  reduce_kernel<false>(ctx, [](auto tag) { return ExtremumOp<typename decltype(tag)::type, true>{}; });
}

void kernel_ReduceMean(const KernelContext& ctx) {
  reduce_kernel<false>(ctx, [](auto tag) {
    return sum_of<typename decltype(tag)::type>(kSame, [](auto a, int64_t n) { return mean(a, n); });
  });
}

void kernel_ReduceMin(const KernelContext& ctx) {
  reduce_kernel<false>(ctx, [](auto tag) { return ExtremumOp<typename decltype(tag)::type, false>{}; });
}

void kernel_ReduceProd(const KernelContext& ctx) {
  reduce_kernel<false>(ctx, [](auto tag) { return ProdOp<typename decltype(tag)::type>{}; });
}

void kernel_ReduceSum(const KernelContext& ctx) {
  if (run_widened(ctx, kernel_ReduceSum)) return;
  reduce_kernel<false>(ctx, [](auto tag) { return sum_of<typename decltype(tag)::type>(kSame, kAsIs); });
}

void kernel_ReduceSumSquare(const KernelContext& ctx) {
  reduce_kernel<false>(ctx, [](auto tag) {
    return sum_of<typename decltype(tag)::type>([](auto a) { return a * a; }, kAsIs);
  });
}

void kernel_ArgMax(const KernelContext& ctx) { arg_extremum<true>(ctx); }
void kernel_ArgMin(const KernelContext& ctx) { arg_extremum<false>(ctx); }

void kernel_CumSum(const KernelContext& ctx) {
  const Layout L = axis_layout(ctx);
  const bool exclusive = ctx.attrs.i("exclusive", 0) != 0;
  const bool reverse = ctx.attrs.i("reverse", 0) != 0;
  dispatch_numeric(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = ctx.inputs[0].as<T>();
    T* y = ctx.outputs[0].as<T>();
    for_each_inner_block(L.outer, L.R, L.inner, [&](int64_t o, int64_t i0, int64_t n) {
      const int64_t b = L.base(o) + i0;
      Wide<T> acc[kInnerBlock];
      std::fill_n(acc, n, Wide<T>(0));
      for (int64_t jj = 0; jj < L.R; ++jj) {
        const int64_t e = b + (reverse ? L.R - 1 - jj : jj) * L.inner;
        for (int64_t i = 0; i < n; ++i) {
          const Wide<T> v = Wide<T>(x[e + i]);
          y[e + i] = T(exclusive ? acc[i] : acc[i] + v);
          acc[i] += v;
        }
      }
    });
  });
}

// Mixed precision runs a Softmax whose result feeds only half MatMuls in half (f32 inside).
void kernel_Softmax(const KernelContext& ctx) {
  if (run_widened(ctx, kernel_Softmax)) return;
  softmax<false>(ctx);
}
void kernel_LogSoftmax(const KernelContext& ctx) {
  if (run_widened(ctx, kernel_LogSoftmax)) return;
  softmax<true>(ctx);
}
void kernel_SoftmaxGrad(const KernelContext& ctx) {
  if (run_widened(ctx, kernel_SoftmaxGrad)) return;
  softmax_grad(ctx);
}

}  // namespace dlc::cpu
