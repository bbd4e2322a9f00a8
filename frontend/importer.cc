// ONNX model import: signature, initializers, then one translator per node in order.
#include "frontend/importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "dlc/checked_shape.h"
#include "dlc/error.h"
#include "dlc/file_util.h"
#include "frontend/import_context.h"
#include "frontend/onnx_tensor.h"

namespace dlc::frontend {

ir::Value* Importer::lookup(const std::string& onnx_name) const {
  auto it = bound_.find(onnx_name);
  return it == bound_.end() ? nullptr : it->second;
}

const Tensor* Importer::known_value(const std::string& onnx_name) const {
  ir::Value* v = lookup(onnx_name);
  if (!v) return nullptr;
  if (v->data) return v->data.get();
  if (v->role == ir::Role::Input) {
    auto it = options_.input_values.find(v->name);
    if (it != options_.input_values.end()) return &it->second;
  }
  return nullptr;
}

TensorType Importer::bind_input_type(const onnx::ValueInfoProto& vi) {
  const std::string& name = vi.name();
  if (!vi.type().has_tensor_type()) throw Error(fmt::format("{}: input '{}' is not a tensor", what_, name));
  const auto& tt = vi.type().tensor_type();
  auto dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype)
    throw Error(
        fmt::format("{}: input '{}' has an unsupported element type {}", what_, name, tt.elem_type()));
  auto value = options_.input_values.find(name);
  auto shape = options_.shapes.find(name);
  Shape dims;
  for (int d = 0; d < tt.shape().dim_size(); ++d) {
    const auto& dim = tt.shape().dim(d);
    if (dim.has_dim_value()) {
      dims.push_back(dim.dim_value());
    } else if (value != options_.input_values.end() && d < int(value->second.type.shape.size())) {
      dims.push_back(value->second.type.shape[d]);
    } else if (shape != options_.shapes.end() && d < int(shape->second.size())) {
      dims.push_back(shape->second[d]);
    } else if (d == 0 && options_.batch > 0) {
      dims.push_back(options_.batch);
    } else {
      throw Error(
          fmt::format("{}: input '{}' has symbolic dimension {} ('{}'); bind it with --batch or "
                      "--shape {}=D0,D1,…",
                      what_, name, d, dim.dim_param(), name));
    }
  }
  if (!tt.has_shape() && value != options_.input_values.end()) dims = value->second.type.shape;
  if (!checked_num_elements(dims, dtype_size(*dtype)))
    throw Error(fmt::format("{}: input '{}' has invalid dimensions {}", what_, name, shape_str(dims)));
  if (shape != options_.shapes.end() && shape->second != dims)
    throw Error(fmt::format("{}: --shape {}={} does not match the model's {}", what_, name,
                            shape_str(shape->second), shape_str(dims)));
  TensorType type{*dtype, dims};
  if (value != options_.input_values.end() && value->second.type != type)
    throw Error(
        fmt::format("{}: input '{}' expects {}, got {}", what_, name, type.str(), value->second.type.str()));
  return type;
}

void Importer::import_inputs(const onnx::GraphProto& g) {
  std::set<std::string> init_names;
  for (const auto& init : g.initializer()) init_names.insert(init.name());
  for (const auto& init : g.initializer()) {
    std::string what = fmt::format("{}: initializer '{}'", what_, init.name());
    Tensor t = tensor_from_onnx(init, base_dir_, what);
    // Floating-point initializers are trainable parameters; integer ones are constants.
    ir::Role role = is_floating(t.type.dtype) ? ir::Role::Parameter : ir::Role::Constant;
    bind(init.name(), graph_->add_parameter(init.name(), std::move(t), role));
  }
  for (const auto& vi : g.input()) {
    if (init_names.count(vi.name())) continue;  // older exporters list initializers as inputs
    bind(vi.name(), graph_->add_input(vi.name(), bind_input_type(vi)));
  }
  for (const auto& [name, value] : options_.input_values)
    if (!lookup(name)) throw Error(fmt::format("{}: the model has no input named '{}'", what_, name));
  for (const auto& [name, shape] : options_.shapes)
    if (!lookup(name))
      throw Error(fmt::format("{}: --shape names '{}', which is not a model input", what_, name));
}

void Importer::import_nodes(const onnx::GraphProto& g, int64_t opset) {
  for (const onnx::NodeProto& node : g.node()) {
    if (!is_supported_domain(node.domain()))
      throw Error(fmt::format("{}: node '{}' ({}) is in unsupported domain '{}'", what_, node.name(),
                              node.op_type(), node.domain()));
    if (std::all_of(node.output().begin(), node.output().end(),
                    [](const std::string& o) { return o.empty(); }))
      throw Error(fmt::format("{}: node '{}' ({}) has no output", what_, node.name(), node.op_type()));
    Translator translate = find_translator(node.domain(), node.op_type());
    if (!translate)
      throw Error(fmt::format("{}: node '{}': unsupported op {}", what_, node.name(), node.op_type()));
    for (const std::string& in : node.input())
      if (!in.empty() && !lookup(in))
        throw Error(fmt::format("{}: node '{}' ({}) uses undefined value '{}'", what_, node.name(),
                                node.op_type(), in));
    ImportContext ctx(*this, node, opset);
    try {
      translate(ctx);
    } catch (const Error& e) {
      std::string msg = e.what();
      if (msg.rfind(what_, 0) == 0) throw;
      throw Error(fmt::format("{}: {}", what_, msg));
    }
    for (int o = 0; o < node.output_size(); ++o)
      if (!node.output(o).empty() && !lookup(node.output(o)))
        throw Error(fmt::format("{}: node '{}' ({}): output {} was not produced", what_, node.name(),
                                node.op_type(), o));
  }
}

std::unique_ptr<ir::Graph> Importer::run(const onnx::ModelProto& model) {
  int64_t opset = 0;
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
  if (opset == 0) opset = 1;
  if (opset < 1 || opset > 18)
    throw Error(
        fmt::format("{}: ONNX opset {} is not supported (dlc reads opsets 1 to 18; translators reject legacy "
                    "forms they do not know)",
                    what_, opset));
  const onnx::GraphProto& g = model.graph();
  graph_->name = g.name().empty() ? "main" : g.name();
  import_inputs(g);
  import_nodes(g, opset);
  for (const auto& out : g.output()) {
    ir::Value* v = lookup(out.name());
    if (!v) throw Error(fmt::format("{}: graph output '{}' is never produced", what_, out.name()));
    if (v->name != out.name() || v->role == ir::Role::Input) {
      // An alias (e.g. of an input or of another output): give the output its own value.
      ir::Node* copy = graph_->add_node(ir::OpKind::Identity, {v}, {},
                                        {graph_->unique_value_name(out.name())}, "output_" + out.name());
      v = copy->outputs[0];
      if (v->name != out.name() && !graph_->find_value(out.name())) graph_->rename_value(v, out.name());
    }
    graph_->add_output(v);
  }
  return std::move(graph_);
}

std::unique_ptr<ir::Graph> import_onnx_model(const onnx::ModelProto& model, const std::string& base_dir,
                                             const ImportOptions& options, const std::string& what) {
  Importer importer(options, base_dir, what);
  try {
    return importer.run(model);
  } catch (const Error& e) {
    // Errors raised below the importer (the graph, inference) do not name the model yet.
    if (std::string_view(e.what()).starts_with(what)) throw;
    throw Error(fmt::format("{}: {}", what, e.what()));
  }
}

onnx::ModelProto parse_onnx_model(const std::string& bytes, const std::string& what) {
  if (bytes.empty()) throw Error(fmt::format("{}: empty file, not an ONNX model", what));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph())
    throw Error(fmt::format("{}: not a valid ONNX model (protobuf parse failed)", what));
  return model;
}

std::unique_ptr<ir::Graph> import_onnx_file(const std::string& path, const ImportOptions& options) {
  onnx::ModelProto model = parse_onnx_model(read_file(path), path);
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  return import_onnx_model(model, base_dir, options, path);
}

}  // namespace dlc::frontend
