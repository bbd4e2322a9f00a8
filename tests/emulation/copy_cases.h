// The data-movement ops whose CUDA copies (codegen/cuda/copy_specs.h) run emulated: each case an
// op with its attributes and operand shapes, bound the way the CUDA op table binds it.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/copy_specs.h"
#include "dlc/attributes.h"

namespace dlc::emulation {

struct CopyCase {
  std::string name;  // the test's name
  std::string op;
  DType dtype;
  std::vector<Shape> ins, outs;
  Attrs attrs;
};

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
  // Integer attributes are set as lists above; the scalar ones are scalars.
  for (CopyCase& c : cases)
    if (c.attrs.has("axis")) c.attrs.set("axis", c.attrs.ints("axis").at(0));
  return cases;
}

/// The kernels of `c`, as the CUDA op table emits them.
inline codegen::cuda::KernelSource copy_kernels(const CopyCase& c) {
  std::vector<TensorType> ins, outs;
  for (const Shape& s : c.ins) ins.push_back({c.dtype, s});
  for (const Shape& s : c.outs) outs.push_back({c.dtype, s});
  return codegen::cuda::emit_copy_op(c.op, c.attrs, ins, outs);
}

}  // namespace dlc::emulation
