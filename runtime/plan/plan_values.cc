// Tensor and attribute conversions of plan_values.h.
#include "runtime/plan/plan_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "dlc/checked_shape.h"
#include "dlc/error.h"

namespace dlc::plan {

namespace {
DType checked_dtype(int32_t d, const std::string& what) {
  if (d < 0 || d > int32_t(DType::Bool)) throw Error(fmt::format("{}: invalid dtype code {}", what, d));
  return DType(d);
}
}  // namespace

void to_proto(const Tensor& t, TensorValue* out) {
  out->set_dtype(int32_t(t.type.dtype));
  for (int64_t d : t.type.shape) out->add_dims(d);
  if (!t.bytes.empty() && std::all_of(t.bytes.begin(), t.bytes.end(), [](uint8_t b) { return b == 0; }))
    out->set_zeros(true);
  else
    out->set_data(t.bytes.data(), t.bytes.size());
}

void copy_value(const TensorValue& t, void* dst) {
  const size_t bytes = value_type(t, "initial value").bytes();
  if (t.zeros())
    std::memset(dst, 0, bytes);
  else
    copy_bytes(dst, t.data().data(), bytes);
}

TensorType value_type(const TensorValue& t, const std::string& what) {
  TensorType type{checked_dtype(t.dtype(), what), Shape(t.dims().begin(), t.dims().end())};
  if (!checked_num_elements(type.shape, dtype_size(type.dtype)))
    throw Error(fmt::format("{}: invalid dimensions {}", what, shape_str(type.shape)));
  if (t.zeros() && !t.data().empty())
    throw Error(fmt::format("{}: marked all zeros but holds {} bytes", what, t.data().size()));
  if (!t.zeros() && t.data().size() != type.bytes())
    throw Error(
        fmt::format("{}: {} needs {} bytes, found {}", what, type.str(), type.bytes(), t.data().size()));
  return type;
}

Tensor from_proto(const TensorValue& t, const std::string& what) {
  Tensor out(value_type(t, what));  // zero-filled
  std::copy(t.data().begin(), t.data().end(), out.bytes.begin());
  return out;
}

void to_proto(const Attrs& attrs, google::protobuf::RepeatedPtrField<Attribute>* out) {
  for (const auto& [name, value] : attrs.all()) {
    Attribute* a = out->Add();
    a->set_name(name);
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, int64_t>)
            a->set_i(v);
          else if constexpr (std::is_same_v<V, double>)
            a->set_f(v);
          else if constexpr (std::is_same_v<V, std::string>)
            a->set_s(v);
          else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
            auto* l = a->mutable_ints();
            for (auto x : v) l->add_v(x);
          } else if constexpr (std::is_same_v<V, std::vector<double>>) {
            auto* l = a->mutable_floats();
            for (auto x : v) l->add_v(x);
          } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
            auto* l = a->mutable_strings();
            for (const auto& x : v) l->add_v(x);
          } else {
            to_proto(v, a->mutable_tensor());
          }
        },
        value);
  }
}

Attrs from_proto(const google::protobuf::RepeatedPtrField<Attribute>& attrs, const std::string& what) {
  Attrs out;
  for (const Attribute& a : attrs) {
    switch (a.value_case()) {
      case Attribute::kI:
        out.set(a.name(), a.i());
        break;
      case Attribute::kF:
        out.set(a.name(), a.f());
        break;
      case Attribute::kS:
        out.set(a.name(), a.s());
        break;
      case Attribute::kInts:
        out.set(a.name(), std::vector<int64_t>(a.ints().v().begin(), a.ints().v().end()));
        break;
      case Attribute::kFloats:
        out.set(a.name(), std::vector<double>(a.floats().v().begin(), a.floats().v().end()));
        break;
      case Attribute::kStrings:
        out.set(a.name(), std::vector<std::string>(a.strings().v().begin(), a.strings().v().end()));
        break;
      case Attribute::kTensor:
        out.set(a.name(), from_proto(a.tensor(), what + " attribute " + a.name()));
        break;
      default:
        throw Error(fmt::format("{}: attribute '{}' has no value", what, a.name()));
    }
  }
  return out;
}

TensorType buffer_type(const Buffer& b) {
  return TensorType{checked_dtype(b.dtype(), "buffer '" + b.name() + "'"),
                    Shape(b.dims().begin(), b.dims().end())};
}

}  // namespace dlc::plan
