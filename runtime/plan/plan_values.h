// Conversions between the plan's protobuf messages and dlc's value types (Tensor, Attrs).
#pragma once

#include "dlc/attributes.h"
#include "dlc/tensor.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::plan {

/// An all-zero tensor is stored as `zeros` with no bytes (a training plan's optimizer states).
void to_proto(const Tensor& t, TensorValue* out);
/// Checks dtype, dims and byte count; throws dlc::Error mentioning `what`.
Tensor from_proto(const TensorValue& t, const std::string& what);
/// Writes a value that from_proto accepted into `bytes` bytes at `dst` (host memory), zeros included.
void copy_value(const TensorValue& t, void* dst, size_t bytes);

void to_proto(const Attrs& attrs, google::protobuf::RepeatedPtrField<Attribute>* out);
Attrs from_proto(const google::protobuf::RepeatedPtrField<Attribute>& attrs, const std::string& what);

TensorType buffer_type(const Buffer& b);

}  // namespace dlc::plan
