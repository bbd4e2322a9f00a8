// Mixed precision: half-precision MatMul and convolutions between casts.
#include "passes/mixed_precision.h"

#include <fmt/format.h>

#include <map>

#include "dlc/error.h"
#include "passes/loss_scaling.h"

namespace dlc::passes {

namespace {

bool runs_in_half(const ir::Node& n) {
  if (n.op != ir::OpKind::MatMul && n.op != ir::OpKind::Conv && n.op != ir::OpKind::ConvTranspose)
    return false;
  for (const ir::Value* v : n.inputs)
    if (v && v->type.dtype != DType::F32) return false;
  return n.outputs[0]->type.dtype == DType::F32;
}

Attrs cast_to(DType t) {
  Attrs a;
  a.set("to", std::string(dtype_name(t)));
  return a;
}

}  // namespace

DType parse_precision(const std::string& precision) {
  if (precision == "fp32") return DType::F32;
  if (precision == "bf16") return DType::BF16;
  if (precision == "fp16") return DType::F16;
  throw Error(fmt::format("--precision must be fp32, bf16 or fp16, got '{}'", precision));
}

bool MixedPrecision::run(ir::Graph& g) {
  if (half_ == DType::F32) return false;
  std::map<ir::Value*, ir::Value*> half_of;  // one cast per f32 value, shared by its readers
  int64_t ops = 0;
  for (ir::Node* n : g.nodes()) {
    if (!runs_in_half(*n)) continue;
    g.set_insertion_point(n);
    std::vector<ir::Value*> inputs;
    for (ir::Value* v : n->inputs) {
      if (!v) {
        inputs.push_back(nullptr);
        continue;
      }
      ir::Value*& h = half_of[v];
      if (!h)
        h = g.add_node(ir::OpKind::Cast, {v}, cast_to(half_), {g.unique_value_name(v->name + ".half")},
                       v->name + ".to_half")
                ->outputs[0];
      inputs.push_back(h);
    }
    ir::Value* out = n->outputs[0];
    const std::string out_name = out->name;
    ir::Value* half_out =
        g.add_node(n->op, inputs, n->attrs, {g.unique_value_name(out_name + ".half")}, n->name + ".half")
            ->outputs[0];
    ir::Value* wide = g.add_node(ir::OpKind::Cast, {half_out}, cast_to(DType::F32),
                                 {g.unique_value_name(out_name + ".f32")}, n->name + ".to_f32")
                          ->outputs[0];
    g.replace_all_uses(out, wide);
    g.remove_node(n);
    g.rename_value(wide, out_name);  // a graph output keeps its name
    ++ops;
  }
  g.clear_insertion_point();
  if (half_ == DType::F16) add_loss_scale(g, initial_loss_scale_);
  stats_["ops_in_half"] = ops;
  stats_["casts_to_half"] = int64_t(half_of.size());
  return ops > 0 || half_ == DType::F16;
}

}  // namespace dlc::passes
