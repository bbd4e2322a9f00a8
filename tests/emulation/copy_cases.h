// The data-movement ops whose CUDA copies (codegen/cuda/copy_specs.h) run emulated and on a GPU,
// and CumSum (cumsum_emitter.h) and the integer elementwise ops (integer_elementwise_emitter.h),
// which the same harness checks: each case an op with its
// attributes and operand shapes, bound the way the CUDA op table binds it, and random input bytes
// for it (valid indices for GatherElements, small integers or floats for CumSum and the signed
// integer ops, whose overflow C++ leaves undefined).
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/copy_specs.h"
#include "codegen/cuda/cumsum_emitter.h"
#include "codegen/cuda/integer_elementwise_emitter.h"
#include "dlc/attributes.h"

namespace dlc::emulation {

struct CopyCase {
  std::string name;  // the test's name
  std::string op;
  DType dtype;
  std::vector<Shape> ins, outs;
  Attrs attrs;
  DType index_dtype = DType::I64;  // GatherElements' indices (input 1)
};

/// The dtype of input k of `c`.
inline DType input_dtype(const CopyCase& c, size_t k) {
  return c.op == "GatherElements" && k == 1 ? c.index_dtype : c.dtype;
}

inline std::vector<CopyCase> copy_cases() {
  std::vector<CopyCase> cases;
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
  add("gather_elements_last_axis", "GatherElements", DType::F16, {{2, 3, 7}, {2, 3, 3}}, {{2, 3, 3}},
      {{"axis", {-1}}});
  // Integer attributes are set as lists above; the scalar ones are scalars.
  for (CopyCase& c : cases)
    for (const char* key : {"axis", "upper", "k", "exclusive", "reverse"})
      if (c.attrs.has(key)) c.attrs.set(key, c.attrs.ints(key).at(0));
  return cases;
}

/// The kernels of `c`, as the CUDA op table emits them.
inline codegen::cuda::KernelSource case_kernels(const CopyCase& c) {
  if (c.op == "CumSum")
    return codegen::cuda::emit_cumsum(codegen::cuda::cumsum_spec(c.attrs, {c.dtype, c.ins[0]}));
  if (codegen::cuda::is_integer_binary_op(c.op))
    return codegen::cuda::emit_integer_binary({c.op, c.dtype, c.outs[0], c.ins[0], c.ins[1]});
  std::vector<TensorType> ins, outs;
  for (size_t k = 0; k < c.ins.size(); ++k) ins.push_back({input_dtype(c, k), c.ins[k]});
  for (const Shape& s : c.outs) outs.push_back({c.dtype, s});
  return codegen::cuda::emit_copy_op(c.op, c.attrs, ins, outs);
}

/// Random bytes for input k of `c`; for GatherElements' indices, random indices in [-n, n) for the
/// data's extent n on the axis (the CPU kernel rejects others).
inline std::vector<uint8_t> input_bytes(const CopyCase& c, size_t k, std::mt19937& rng) {
  const DType t = input_dtype(c, k);
  std::vector<uint8_t> bytes(size_t(num_elements(c.ins[k])) * dtype_size(t));
  if (c.op == "CumSum" || (codegen::cuda::is_integer_binary_op(c.op) && t != DType::U8)) {
    // values whose sums (and products) stay finite (floats) or small (integers)
    std::uniform_int_distribution<int32_t> small(-1000, 1000);
    for (size_t i = 0; i < bytes.size() / dtype_size(t); ++i) {
      const int32_t v = small(rng);
      if (t == DType::F32) {
        const float f = float(v) / 7.0f;
        std::memcpy(bytes.data() + i * 4, &f, 4);
      } else if (t == DType::I32) {
        std::memcpy(bytes.data() + i * 4, &v, 4);
      } else {
        const int64_t v64 = v;
        std::memcpy(bytes.data() + i * 8, &v64, 8);
      }
    }
    return bytes;
  }
  if (c.op != "GatherElements" || k != 1) {
    for (uint8_t& b : bytes) b = uint8_t(rng());
    return bytes;
  }
  const int64_t rank = int64_t(c.ins[0].size()), axis = c.attrs.i("axis", 0);
  const int64_t n = c.ins[0][size_t(axis < 0 ? axis + rank : axis)];
  std::uniform_int_distribution<int64_t> index(-n, n - 1);
  for (size_t i = 0; i < bytes.size() / dtype_size(t); ++i) {
    const int64_t v = index(rng);
    if (t == DType::I32) {
      const int32_t v32 = int32_t(v);
      std::memcpy(bytes.data() + i * 4, &v32, 4);
    } else {
      std::memcpy(bytes.data() + i * 8, &v, 8);
    }
  }
  return bytes;
}

}  // namespace dlc::emulation
