// The ops whose emitted CUDA kernels run emulated and on a GPU against the CPU kernels byte for
// byte: the data-movement copies (codegen/cuda/copy_specs.h), GatherElements, Gather and its
// gradient, CumSum (cumsum_emitter.h) and the integer elementwise ops
// (integer_elementwise_emitter.h). Each case is an op with its attributes and operand shapes, bound the way
// the CUDA op table binds it, and random input bytes for it (valid indices for GatherElements, small integers
// or floats for CumSum and the signed integer ops, whose overflow C++ leaves undefined).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/arg_extremum_emitter.h"
#include "codegen/cuda/copy_specs.h"
#include "codegen/cuda/cumsum_emitter.h"
#include "codegen/cuda/embedding_emitter.h"
#include "codegen/cuda/emit_util.h"
#include "codegen/cuda/integer_elementwise_emitter.h"
#include "dlc/attributes.h"
#include "dlc/half.h"

namespace dlc::emulation {

struct OpCase {
  std::string name;  // the test's name
  std::string op;
  DType dtype;
  std::vector<Shape> ins, outs;
  Attrs attrs;
  DType index_dtype = DType::I64;          // the indices (input 1) of GatherElements, Gather, GatherGrad
  std::vector<DType> operand_dtypes = {};  // where the operands' dtypes differ (Pow, Where)
};

inline bool takes_indices(const OpCase& c) {
  return c.op == "GatherElements" || c.op == "GatherElementsGrad" || c.op == "Gather" || c.op == "GatherGrad";
}

/// The dtype of input k of `c`.
inline DType input_dtype(const OpCase& c, size_t k) {
  if (!c.operand_dtypes.empty()) return c.operand_dtypes.at(k);
  return takes_indices(c) && k == 1 ? c.index_dtype : c.dtype;
}

/// The dtypes of the inputs of `c`.
inline std::vector<DType> input_dtypes(const OpCase& c) {
  std::vector<DType> dtypes;
  for (size_t k = 0; k < c.ins.size(); ++k) dtypes.push_back(input_dtype(c, k));
  return dtypes;
}

/// Whether `c` is an integer elementwise op (integer_elementwise_emitter.h).
inline bool is_integer_op(const OpCase& c) {
  return codegen::cuda::takes_integer_kernel(c.op, input_dtypes(c), c.dtype);
}

/// The dtype of the outputs of `c` (bool for a comparison).
inline DType output_dtype(const OpCase& c) {
  if (c.op == "TopKIndices") return DType::I64;
  return is_integer_op(c) && c.op != "Cast" ? codegen::cuda::integer_result_dtype(c.op, input_dtypes(c))
                                            : c.dtype;
}

/// The operand a kernel parameter names: inK / outK, or the embedding kernels' names for them.
inline std::string positional_param(const std::string& param) {
  if (param == "weight" || param == "dy" || param == "x") return "in0";
  if (param == "indices") return "in1";
  if (param == "out" || param == "dtable" || param == "y") return "out0";
  return param;
}

inline std::vector<OpCase> op_cases() {
  std::vector<OpCase> cases;
  auto add = [&](std::string name, std::string op, DType t, std::vector<Shape> ins, std::vector<Shape> outs,
                 std::initializer_list<std::pair<const char*, std::vector<int64_t>>> ints) {
    Attrs a;
    for (const auto& [key, value] : ints) a.set(key, value);
    cases.push_back({std::move(name), std::move(op), t, std::move(ins), std::move(outs), std::move(a)});
  };
  add("tile", "Tile", DType::BF16, {{2, 3, 1}}, {{4, 3, 5}}, {{"repeats", {2, 1, 5}}});
  add("tile_empty", "Tile", DType::F32, {{0, 3}}, {{0, 6}}, {{"repeats", {4, 2}}});
  // The gradients of a strided Slice (axis 0 from 1 by 2, axis 1 from 8 by -2), of one with unit
  // steps, and of one by 3 and -3 whose dy does not reach dx's end.
  add("slice_grad_strided", "SliceGrad", DType::F32, {{3, 4, 9}}, {{6, 10, 9}},
      {{"shape", {6, 10, 9}}, {"starts", {1, 8}}, {"axes", {0, 1}}, {"steps", {2, -2}}});
  add("slice_grad_unit", "SliceGrad", DType::F16, {{2, 3}}, {{5, 3}},
      {{"shape", {5, 3}}, {"starts", {2}}, {"axes", {0}}, {"steps", {1}}});
  add("slice_grad_by_3", "SliceGrad", DType::I64, {{3, 2}}, {{10, 8}},
      {{"shape", {10, 8}}, {"starts", {9, 1}}, {"axes", {0, 1}}, {"steps", {-3, 3}}});
  add("split", "Split", DType::F32, {{2, 9, 4}}, {{2, 3, 4}, {2, 1, 4}, {2, 5, 4}},
      {{"axis", {1}}, {"split", {3, 1, 5}}});
  add("split_leading", "Split", DType::BF16, {{4, 3}}, {{2, 3}, {2, 3}}, {{"axis", {0}}, {"split", {2, 2}}});
  add("slice", "Slice", DType::F32, {{6, 10, 9}}, {{3, 4, 9}},
      {{"starts", {1, 8}}, {"ends", {6, 1}}, {"axes", {0, 1}}, {"steps", {2, -2}}});
  add("concat", "Concat", DType::F16, {{2, 3, 4}, {2, 1, 4}}, {{2, 4, 4}}, {{"axis", {-2}}});
  add("transpose", "Transpose", DType::F32, {{2, 3, 5}}, {{5, 2, 3}}, {{"perm", {2, 0, 1}}});
  add("pad_reflect", "Pad", DType::BF16, {{4, 5}}, {{7, 9}}, {{"pads", {1, 2, 2, 2}}});
  cases.back().attrs.set("mode", std::string("reflect"));
  add("gather_elements", "GatherElements", DType::F32, {{3, 5, 4}, {3, 2, 4}}, {{3, 2, 4}}, {{"axis", {1}}});
  add("gather_elements_rows_i32", "GatherElements", DType::BF16, {{4, 3}, {6, 2}}, {{6, 2}}, {{"axis", {0}}});
  cases.back().index_dtype = DType::I32;
  add("trilu_upper", "Trilu", DType::BF16, {{2, 4, 6}}, {{2, 4, 6}}, {{"upper", {1}}, {"k", {-1}}});
  add("trilu_lower", "Trilu", DType::I64, {{5, 3}}, {{5, 3}}, {{"upper", {0}}, {"k", {1}}});
  add("cumsum", "CumSum", DType::F32, {{3, 40, 5}}, {{3, 40, 5}}, {{"axis", {1}}});
  add("cumsum_exclusive_reverse", "CumSum", DType::F32, {{7, 33}}, {{7, 33}},
      {{"axis", {-1}}, {"exclusive", {1}}, {"reverse", {1}}});
  add("cumsum_i64", "CumSum", DType::I64, {{50, 2}}, {{50, 2}}, {{"axis", {0}}});
  add("cumsum_i32_reverse", "CumSum", DType::I32, {{4, 9}}, {{4, 9}}, {{"axis", {1}}, {"reverse", {1}}});
  add("int_add_counter", "Add", DType::I64, {{}, {}}, {{}}, {});  // Dropout's run counter + 1
  add("int_sub_u8_broadcast", "Sub", DType::U8, {{3, 4}, {4}}, {{3, 4}}, {});
  add("int_mul_i32", "Mul", DType::I32, {{2, 3}, {2, 3}}, {{2, 3}}, {});
  add("int_max_i64_outer", "Max", DType::I64, {{4, 1}, {1, 5}}, {{4, 5}}, {});
  add("int_min_i32_scalar", "Min", DType::I32, {{3, 7}, {}}, {{3, 7}}, {});
  // NegativeLogLikelihoodLoss's gradient: labels [N, 1] == class ids [C], a bool one-hot.
  add("int_equal_one_hot", "Equal", DType::I64, {{6, 1}, {5}}, {{6, 5}}, {});
  add("int_less_equal_i32", "LessOrEqual", DType::I32, {{4, 6}, {4, 6}}, {{4, 6}}, {});
  // Div and Mod truncate as C (divisors from [-9, 9] without 0, -1 included), Mod with the
  // divisor's sign unless fmod = 1; Pow by squaring, with a float exponent, with a float base; Where.
  add("int_div_i32_broadcast", "Div", DType::I32, {{3, 5}, {5}}, {{3, 5}}, {});
  add("int_mod_i64", "Mod", DType::I64, {{4, 6}, {4, 6}}, {{4, 6}}, {});
  add("int_mod_i32_fmod", "Mod", DType::I32, {{4, 6}, {6}}, {{4, 6}}, {{"fmod", {1}}});
  add("int_mod_u8", "Mod", DType::U8, {{4, 6}, {4, 6}}, {{4, 6}}, {});
  add("int_pow_i64", "Pow", DType::I64, {{5, 4}, {5, 4}}, {{5, 4}}, {});
  add("int_pow_i32_f32_exponent", "Pow", DType::I32, {{5, 4}, {4}}, {{5, 4}}, {});
  cases.back().operand_dtypes = {DType::I32, DType::F32};
  add("int_pow_f32_i64_exponent", "Pow", DType::F32, {{5, 4}, {5, 4}}, {{5, 4}}, {});
  cases.back().operand_dtypes = {DType::F32, DType::I64};
  // Cast (the case's dtype is the target): i64 to f32, bool to i32, f32 to i32 (truncating toward
  // zero, saturating), i64 to bf16 (through float), i32 to u8 (wrapping).
  add("cast_i64_f32", "Cast", DType::F32, {{4, 5}}, {{4, 5}}, {});
  cases.back().operand_dtypes = {DType::I64};
  add("cast_bool_i32", "Cast", DType::I32, {{4, 5}}, {{4, 5}}, {});
  cases.back().operand_dtypes = {DType::Bool};
  add("cast_f32_i32", "Cast", DType::I32, {{4, 5}}, {{4, 5}}, {});
  cases.back().operand_dtypes = {DType::F32};
  add("cast_i64_bf16", "Cast", DType::BF16, {{4, 5}}, {{4, 5}}, {});
  cases.back().operand_dtypes = {DType::I64};
  add("cast_i32_u8", "Cast", DType::U8, {{4, 5}}, {{4, 5}}, {});
  cases.back().operand_dtypes = {DType::I32};
  // i8: Max with broadcasting, Clip by both bounds and by its min alone, a Cast from f32 (saturating
  // through int64, then wrapping to 8 bits as the CPU's).
  add("int_max_i8", "Max", DType::I8, {{2, 3}, {3}}, {{2, 3}}, {});
  add("int_clip_i8", "Clip", DType::I8, {{3, 5}, {}, {}}, {{3, 5}}, {});
  add("int_clip_i32_min_only", "Clip", DType::I32, {{4, 2}, {}}, {{4, 2}}, {});
  add("cast_f32_i8", "Cast", DType::I8, {{4, 5}}, {{4, 5}}, {});
  cases.back().operand_dtypes = {DType::F32};
  add("int_where_i64", "Where", DType::I64, {{3, 1}, {3, 4}, {4}}, {{3, 4}}, {});
  cases.back().operand_dtypes = {DType::Bool, DType::I64, DType::I64};
  // Gather and its gradient on axis 1 (the embedding kernels on [outer, vocab, dim]); the gradient's
  // indices are distinct (repeats add in another order than the CPU's) and its dy is f32.
  add("gather_axis1", "Gather", DType::BF16, {{3, 6, 5}, {2, 2}}, {{3, 2, 2, 5}}, {{"axis", {1}}});
  // TopKIndices over a middle axis (bf16, random bytes: NaN and infinities) and over the last (f32,
  // a few values: ties, broken by the lower position).
  add("top_k_bf16", "TopKIndices", DType::BF16, {{3, 7, 2}}, {{3, 3, 2}},
      {{"axis", {1}}, {"k", {3}}, {"largest", {1}}});
  add("bottom_k_f32", "TopKIndices", DType::F32, {{4, 9}}, {{4, 5}},
      {{"axis", {1}}, {"k", {5}}, {"largest", {0}}});
  // An integer table (GatherND's import), rows a multiple of 4 long: the scalar loop, not quads.
  add("gather_i32", "Gather", DType::I32, {{6, 4}, {3}}, {{3, 4}}, {{"axis", {0}}});
  add("gather_grad_axis1", "GatherGrad", DType::F32, {{2, 4, 3}, {4}}, {{2, 7, 3}},
      {{"axis", {1}}, {"shape", {2, 7, 3}}});
  cases.back().index_dtype = DType::I32;
  // GatherElements' gradient: duplicates along the axis (summed in index order), indices smaller
  // than the data off the axis (zeros there), bf16.
  add("gather_elements_grad", "GatherElementsGrad", DType::F32, {{3, 4, 2}, {3, 4, 2}}, {{5, 4, 2}},
      {{"axis", {0}}, {"shape", {5, 4, 2}}});
  add("gather_elements_grad_smaller_bf16", "GatherElementsGrad", DType::BF16, {{2, 6}, {2, 6}}, {{3, 4}},
      {{"axis", {1}}, {"shape", {3, 4}}});
  cases.back().index_dtype = DType::I32;
  add("gather_elements_last_axis", "GatherElements", DType::F16, {{2, 3, 7}, {2, 3, 3}}, {{2, 3, 3}},
      {{"axis", {-1}}});
  // Integer attributes are set as lists above; the scalar ones are scalars.
  for (OpCase& c : cases)
    for (const char* key : {"axis", "upper", "k", "exclusive", "reverse", "fmod", "largest"})
      if (c.attrs.has(key)) c.attrs.set(key, c.attrs.ints(key).at(0));
  return cases;
}

/// The kernels of `c`, as the CUDA op table emits them.
inline codegen::cuda::KernelSource case_kernels(const OpCase& c) {
  if (c.op == "CumSum")
    return codegen::cuda::emit_cumsum(codegen::cuda::cumsum_spec(c.attrs, {c.dtype, c.ins[0]}));
  if (c.op == "TopKIndices") {
    codegen::cuda::TopKSpec spec;
    spec.dtype = c.dtype;
    spec.k = c.attrs.i("k");
    spec.largest = c.attrs.i("largest") != 0;
    codegen::cuda::set_view(spec, codegen::cuda::axis_view(c.ins[0], c.attrs.i("axis")));
    return codegen::cuda::emit_top_k_indices(spec);
  }
  if (is_integer_op(c)) {
    codegen::cuda::IntegerElementwiseSpec spec{c.op,
                                               {},
                                               {output_dtype(c), c.outs[0]},
                                               c.attrs.i("fmod", 0) != 0,
                                               c.ins.size() > 1,
                                               c.ins.size() > 2};
    for (size_t k = 0; k < c.ins.size(); ++k) spec.operands.push_back({input_dtype(c, k), c.ins[k]});
    return codegen::cuda::emit_integer_elementwise(spec);
  }
  if (c.op == "GatherElementsGrad")
    return codegen::cuda::emit_gather_elements_backward(codegen::cuda::gather_elements_spec(
        c.attrs, {c.dtype, c.outs[0]}, {c.index_dtype, c.ins[1]}, {c.dtype, c.ins[0]}));
  if (c.op == "Gather" || c.op == "GatherGrad") {
    const bool grad = c.op == "GatherGrad";
    const auto spec = codegen::cuda::gather_spec(c.attrs, {c.dtype, grad ? c.outs[0] : c.ins[0]},
                                                 {c.index_dtype, c.ins[1]});
    return grad ? codegen::cuda::emit_embedding_backward(spec) : codegen::cuda::emit_embedding_gather(spec);
  }
  std::vector<TensorType> ins, outs;
  for (size_t k = 0; k < c.ins.size(); ++k) ins.push_back({input_dtype(c, k), c.ins[k]});
  for (const Shape& s : c.outs) outs.push_back({c.dtype, s});
  return codegen::cuda::emit_copy_op(c.op, c.attrs, ins, outs);
}

/// `values` stored as `t` (f32, f16, bf16, i32, i64, i8, u8 or bool) into `bytes`.
inline void store_values(const std::vector<int64_t>& values, DType t, double scale,
                         std::vector<uint8_t>& bytes) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == DType::F32) {
      const float f = float(double(values[i]) * scale);
      std::memcpy(bytes.data() + i * 4, &f, 4);
    } else if (t == DType::I32) {
      const int32_t v = int32_t(values[i]);
      std::memcpy(bytes.data() + i * 4, &v, 4);
    } else if (t == DType::F16 || t == DType::BF16) {
      const float f = float(double(values[i]) * scale);
      const uint16_t bits = t == DType::F16 ? Half(f).bits : BFloat16(f).bits;
      std::memcpy(bytes.data() + i * 2, &bits, 2);
    } else if (t == DType::U8 || t == DType::I8 || t == DType::Bool) {
      bytes[i] = uint8_t(values[i]);
    } else {
      std::memcpy(bytes.data() + i * 8, &values[i], 8);
    }
  }
}

/// Random bytes for input k of `c`: indices in [-n, n) for the extent n of the gathered axis (the
/// CPU kernels reject others; distinct ones for GatherGrad); small values for CumSum, GatherGrad's
/// dy and the signed integer ops (sums stay finite, products small); any bytes otherwise.
inline std::vector<uint8_t> input_bytes(const OpCase& c, size_t k, std::mt19937& rng) {
  const DType t = input_dtype(c, k);
  const size_t n = size_t(num_elements(c.ins[k]));
  std::vector<uint8_t> bytes(n * dtype_size(t));
  std::vector<int64_t> values(n);
  if (takes_indices(c) && k == 1) {
    const Shape& table = c.op == "GatherGrad" || c.op == "GatherElementsGrad" ? c.outs[0] : c.ins[0];
    const int64_t rank = int64_t(table.size()), axis = c.attrs.i("axis", 0);
    const int64_t extent = table[size_t(axis < 0 ? axis + rank : axis)];
    std::vector<int64_t> rows(static_cast<size_t>(extent));
    for (int64_t r = 0; r < extent; ++r) rows[size_t(r)] = r - (r % 2 ? extent : 0);  // some from the end
    std::shuffle(rows.begin(), rows.end(), rng);
    std::uniform_int_distribution<int64_t> any(-extent, extent - 1);
    for (size_t i = 0; i < n; ++i) values[i] = c.op == "GatherGrad" ? rows.at(i) : any(rng);
    store_values(values, t, 1.0, bytes);
    return bytes;
  }
  if (is_integer_op(c) && (c.op == "Div" || c.op == "Mod" || c.op == "Pow" || c.op == "Where")) {
    // Divisors in [-9, 9] without 0 (the CPU rejects 0), dividends in [-1000, 1000] (u8: any but a
    // zero divisor); Pow's bases in [-5, 5] (floats by halves), exponents in [-2, 6] (by halves);
    // Where's condition 0 or 1.
    const bool divisor = (c.op == "Div" || c.op == "Mod") && k == 1;
    std::uniform_int_distribution<int64_t> pick(c.op == "Where" && k == 0 ? 0
                                                : c.op == "Pow"           ? (k == 0 ? -5 : -2)
                                                : divisor                 ? (t == DType::U8 ? 1 : -9)
                                                                          : (t == DType::U8 ? 0 : -1000),
                                                c.op == "Where" && k == 0 ? 1
                                                : c.op == "Pow"           ? (k == 0 ? 5 : 6)
                                                : divisor                 ? 9
                                                                          : (t == DType::U8 ? 255 : 1000));
    for (int64_t& v : values) do
        v = pick(rng);
      while (divisor && v == 0);
    store_values(values, t, c.op == "Pow" ? 0.5 : 1.0, bytes);
    return bytes;
  }
  // An f32 TopKIndices case draws from a few values, so that ties occur; the bf16 one takes random
  // bytes below (NaN and infinities among them).
  const bool top_k_ties = c.op == "TopKIndices" && t == DType::F32;
  if (c.op == "CumSum" || c.op == "GatherGrad" || c.op == "GatherElementsGrad" || top_k_ties ||
      (is_integer_op(c) && c.op != "Cast" && t != DType::U8)) {
    // comparisons: values from a few, so that ties occur
    const int64_t range = codegen::cuda::is_integer_comparison(c.op) || top_k_ties ? 3 : 1000;
    std::uniform_int_distribution<int64_t> small(-range, range);
    for (int64_t& v : values) v = small(rng);
    store_values(values, t, 1.0 / 7.0, bytes);
    return bytes;
  }
  for (uint8_t& b : bytes) b = uint8_t(rng());
  return bytes;
}

}  // namespace dlc::emulation
