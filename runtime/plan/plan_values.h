// Conversions between the plan's protobuf messages and dlc's value types (Tensor, Attrs).
#pragma once

#include "dlc/attributes.h"
#include "dlc/tensor.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::plan {

/// An all-zero tensor is stored as `zeros` with no bytes (a training plan's optimizer states).
void to_proto(const Tensor& t, TensorValue* out);
/// The value's type, after checking dtype, dims and byte count (or the zeros flag) without
/// allocating; throws dlc::Error mentioning `what`.
TensorType value_type(const TensorValue& t, const std::string& what);
/// The value as a tensor (value_type's checks).
Tensor from_proto(const TensorValue& t, const std::string& what);
/// Writes the value's bytes, zeros included, to host memory at `dst` (value_type's checks).
void copy_value(const TensorValue& t, void* dst);

void to_proto(const Attrs& attrs, google::protobuf::RepeatedPtrField<Attribute>* out);
Attrs from_proto(const google::protobuf::RepeatedPtrField<Attribute>& attrs, const std::string& what);

TensorType buffer_type(const Buffer& b);

}  // namespace dlc::plan
