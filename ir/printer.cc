// The IR printer: graphs in the textual form described in printer.h.
#include "ir/printer.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

namespace dlc::ir {

namespace {

bool is_plain(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20 || u >= 0x7f)
          out += fmt::format("\\x{:02x}", u);
        else
          out += c;
    }
  }
  return out + "\"";
}

// NaN and infinities as `nan`, `inf`, `-inf`; nullopt for finite values.
std::optional<std::string> non_finite(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return std::nullopt;
}

// A float attribute: the shortest round-tripping decimal, always recognisable as a float.
std::string float_attr(double v) {
  if (auto s = non_finite(v)) return *s;
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string tensor_elements(const Tensor& t) {
  std::string out;
  auto sep = [&](size_t i) {
    if (i) out += ", ";
  };
  if (is_floating(t.type.dtype)) {
    std::vector<double> v = t.as_double();
    for (size_t i = 0; i < v.size(); ++i) {
      sep(i);
      if (auto s = non_finite(v[i]))
        out += *s;
      else if (t.type.dtype == DType::F64)
        out += fmt::format("{:.17g}", v[i]);
      else
        out += fmt::format("{:.9g}", float(v[i]));
    }
  } else {
    std::vector<int64_t> v = t.as_int64();
    for (size_t i = 0; i < v.size(); ++i) {
      sep(i);
      out += std::to_string(v[i]);
    }
  }
  return out;
}

std::string tensor_data(const Tensor& t, const PrintOptions& options) {
  int64_t n = t.type.numel();
  if (options.elide_above >= 0 && n > options.elide_above) return fmt::format("<elided {} elements>", n);
  return "[" + tensor_elements(t) + "]";
}

template <typename T, typename F>
std::string list(const std::vector<T>& v, F&& element) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + element(v[i]);
  return out + "]";
}

std::string type_str(const Value* v) {
  if (!v) return "_";
  if (v->role == Role::Activation) return v->type.str();
  return fmt::format("{} {}", role_name(v->role), v->type.str());
}

std::string value_ref(const Value* v) { return v ? "%" + print_name(v->name) : "_"; }

}  // namespace

std::string print_name(const std::string& name) { return is_plain(name) ? name : quote(name); }

std::string print_attr_value(const AttrValue& value, const PrintOptions& options) {
  struct Visitor {
    const PrintOptions& options;
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return float_attr(v); }
    std::string operator()(const std::string& v) const { return quote(v); }
    std::string operator()(const std::vector<int64_t>& v) const {
      return list(v, [](int64_t x) { return std::to_string(x); });
    }
    std::string operator()(const std::vector<double>& v) const { return list(v, float_attr); }
    std::string operator()(const std::vector<std::string>& v) const { return list(v, quote); }
    std::string operator()(const Tensor& t) const {
      return fmt::format("tensor<{}>{}", t.type.str(), tensor_data(t, options));
    }
  };
  return std::visit(Visitor{options}, value);
}

void print_graph(std::ostream& os, const Graph& g, const PrintOptions& options) {
  os << "graph @" << print_name(g.name) << " {\n";
  for (const Value* v : g.inputs())
    os << "  " << role_name(v->role) << " %" << print_name(v->name) << " : " << v->type.str() << "\n";
  for (const Value* v : g.initializers()) {
    os << "  " << role_name(v->role) << " %" << print_name(v->name) << " : " << v->type.str() << " = "
       << tensor_data(*v->data, options) << "\n";
  }
  for (const Node* n : g.nodes()) {
    os << "  ";
    if (!n->outputs.empty()) {
      for (size_t i = 0; i < n->outputs.size(); ++i) os << (i ? ", " : "") << value_ref(n->outputs[i]);
      os << " = ";
    }
    os << op_name(n->op) << "(";
    for (size_t i = 0; i < n->inputs.size(); ++i) os << (i ? ", " : "") << value_ref(n->inputs[i]);
    os << ")";
    if (!n->attrs.empty()) {
      os << " {";
      bool first = true;
      for (const auto& [key, value] : n->attrs.all()) {
        os << (first ? "" : ", ") << print_name(key) << " = " << print_attr_value(value, options);
        first = false;
      }
      os << "}";
    }
    os << " :";
    for (size_t i = 0; i < n->outputs.size(); ++i) os << (i ? ", " : " ") << type_str(n->outputs[i]);
    os << " loc(" << quote(n->name) << ")\n";
  }
  os << "  return";
  for (size_t i = 0; i < g.outputs().size(); ++i) os << (i ? ", " : " ") << value_ref(g.outputs()[i]);
  os << "\n}\n";
}

std::string print_graph(const Graph& graph, const PrintOptions& options) {
  std::ostringstream os;
  print_graph(os, graph, options);
  return os.str();
}

}  // namespace dlc::ir
