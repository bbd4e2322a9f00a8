// ImportContext: inputs, attributes, emission and folding for translators.
#include "frontend/import_context.h"

#include "frontend/importer.h"
#include "frontend/onnx_tensor.h"
#include "ir/infer.h"

namespace dlc::frontend {

ImportContext::ImportContext(Importer& importer, const onnx::NodeProto& node, int64_t opset)
    : importer_(importer), node_(node), opset_(opset) {}

ir::Graph& ImportContext::graph() { return importer_.graph(); }

ir::Value* ImportContext::input(int i) {
  if (!has_input(i)) fail("input {} is required", i);
  return importer_.lookup(node_.input(i));
}

const Tensor* ImportContext::constant_input(int i) {
  return has_input(i) ? importer_.known_value(node_.input(i)) : nullptr;
}

const Tensor& ImportContext::required_constant(int i, const char* what) {
  const Tensor* t = constant_input(i);
  if (!t) fail("input {} ({}) must be a compile-time constant", i, what);
  return *t;
}

ir::Value* ImportContext::value(const std::string& onnx_name) {
  ir::Value* v = importer_.lookup(onnx_name);
  if (!v) fail("value '{}' is not defined before this node", onnx_name);
  return v;
}

const onnx::AttributeProto* ImportContext::find_attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool ImportContext::has_attr(const std::string& name) const { return find_attr(name) != nullptr; }

int64_t ImportContext::attr_int(const std::string& name, int64_t dflt) const {
  const auto* a = find_attr(name);
  return a ? a->i() : dflt;
}

double ImportContext::attr_float(const std::string& name, double dflt) const {
  const auto* a = find_attr(name);
  return a ? double(a->f()) : dflt;
}

std::string ImportContext::attr_string(const std::string& name, const std::string& dflt) const {
  const auto* a = find_attr(name);
  return a ? a->s() : dflt;
}

std::vector<int64_t> ImportContext::attr_ints(const std::string& name, std::vector<int64_t> dflt) const {
  const auto* a = find_attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : dflt;
}

std::vector<double> ImportContext::attr_floats(const std::string& name, std::vector<double> dflt) const {
  const auto* a = find_attr(name);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : dflt;
}

std::vector<std::string> ImportContext::attr_strings(const std::string& name) const {
  const auto* a = find_attr(name);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end()) : std::vector<std::string>{};
}

Tensor ImportContext::attr_tensor(const std::string& name) const {
  const auto* a = find_attr(name);
  if (!a || !a->has_t()) fail("attribute '{}' (a tensor) is required", name);
  return tensor_from_onnx(a->t(), "", fmt::format("node '{}' attribute '{}'", node_.name(), name));
}

const onnx::GraphProto& ImportContext::attr_graph(const std::string& name) const {
  const auto* a = find_attr(name);
  if (!a || !a->has_g()) fail("attribute '{}' (a graph) is required", name);
  return a->g();
}

std::vector<ir::Value*> ImportContext::inline_graph(const onnx::GraphProto& g) {
  if (g.initializer_size() > 0 || g.sparse_initializer_size() > 0)
    fail("subgraph '{}' has initializers, which are not supported", g.name());
  importer_.import_nodes(g, opset_);
  std::vector<ir::Value*> outputs;
  for (const auto& out : g.output()) {
    ir::Value* v = importer_.lookup(out.name());
    if (!v) fail("subgraph '{}' never produces its output '{}'", g.name(), out.name());
    outputs.push_back(v);
  }
  return outputs;
}

std::vector<ir::Value*> ImportContext::emit_multi(ir::OpKind op, std::vector<ir::Value*> inputs, Attrs attrs,
                                                  std::vector<bool> want_outputs) {
  ir::Graph& g = graph();
  std::string base = node_.name().empty() ? std::string(node_.op_type()) : node_.name();
  std::vector<std::string> names;
  for (size_t i = 0; i < want_outputs.size(); ++i)
    names.push_back(want_outputs[i] || i == 0 ? g.unique_value_name(base + "_out" + std::to_string(i)) : "");
  ir::Node* n;
  try {
    n = g.add_node(op, inputs, std::move(attrs), names, base);
  } catch (const Error& e) {
    throw Error(fmt::format("node '{}' ({}): {}", node_.name(), node_.op_type(), e.what()));
  }
  std::vector<ir::Value*> outs = n->outputs;
  bool foldable = importer_.options().evaluator != nullptr;
  std::vector<const Tensor*> values;
  for (ir::Value* in : inputs) {
    if (in && in->role != ir::Role::Constant) foldable = false;
    values.push_back(in ? in->data.get() : nullptr);
  }
  if (foldable) {
    std::vector<Tensor> results = importer_.options().evaluator->evaluate(*n, values);
    g.remove_node(n);
    for (size_t i = 0; i < outs.size(); ++i)
      outs[i] = outs[i] ? constant(std::move(results[i]), names[i]) : nullptr;
  }
  for (ir::Value* v : outs)
    if (v) created_.insert(v);
  for (size_t i = 0; i < want_outputs.size(); ++i)
    if (!want_outputs[i]) outs[i] = nullptr;
  return outs;
}

ir::Value* ImportContext::emit(ir::OpKind op, std::vector<ir::Value*> inputs, Attrs attrs) {
  return emit_multi(op, std::move(inputs), std::move(attrs), {true})[0];
}

ir::Value* ImportContext::constant(Tensor value, const std::string& hint) {
  ir::Graph& g = graph();
  ir::Value* v = g.add_constant(g.unique_value_name(hint), std::move(value));
  created_.insert(v);
  return v;
}

ir::Value* ImportContext::scalar(DType dtype, double v) {
  return constant(Tensor::from_double(dtype, {v}, {}),
                  node_.name().empty() ? "scalar" : node_.name() + "_scalar");
}

void ImportContext::set_output(int i, ir::Value* v) {
  if (!has_output(i)) return;
  const std::string& name = node_.output(i);
  if (created_.count(v) && !graph().find_value(name)) graph().rename_value(v, name);
  importer_.bind(name, v);
}

}  // namespace dlc::frontend
