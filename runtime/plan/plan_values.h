// Conversions between the plan's protobuf messages and dlc's value types (Tensor, Attrs).
#pragma once

#include "dlc/attributes.h"
#include "dlc/tensor.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::plan {

void to_proto(const Tensor& t, TensorValue* out);
/// Checks dtype, dims and byte count; throws dlc::Error mentioning `what`.
Tensor from_proto(const TensorValue& t, const std::string& what);

void to_proto(const Attrs& attrs, google::protobuf::RepeatedPtrField<Attribute>* out);
Attrs from_proto(const google::protobuf::RepeatedPtrField<Attribute>& attrs, const std::string& what);

TensorType buffer_type(const Buffer& b);

}  // namespace dlc::plan
