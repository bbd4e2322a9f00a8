// Graph invariants.
#include "ir/verifier.h"

#include <fmt/format.h>

#include <set>

#include "dlc/error.h"
#include "ir/infer.h"

namespace dlc::ir {

void verify(const Graph& g) {
  std::set<const Value*> defined;
  std::set<std::string> names;
  auto define = [&](const Value* v) {
    if (!names.insert(v->name).second) throw Error(fmt::format("verifier: duplicate value name '{}'", v->name));
    defined.insert(v);
  };
  for (const Value* v : g.inputs()) define(v);
  for (const Value* v : g.initializers()) {
    if (!v->data) throw Error(fmt::format("verifier: initializer '{}' has no data", v->name));
    if (v->data->type != v->type)
      throw Error(fmt::format("verifier: initializer '{}' data is {} but value is {}", v->name,
                              v->data->type.str(), v->type.str()));
    define(v);
  }
  std::set<std::string> node_names;
  for (const Node* n : g.nodes()) {
    if (!node_names.insert(n->name).second)
      throw Error(fmt::format("verifier: duplicate node name '{}'", n->name));
    for (const Value* in : n->inputs)
      if (in && !defined.count(in))
        throw Error(fmt::format("verifier: node '{}' uses '{}' before it is defined", n->name, in->name));
    std::vector<TensorType> expect = infer_types(*n, int(n->outputs.size()));
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      const Value* out = n->outputs[i];
      if (!out) continue;
      if (out->producer != n || out->producer_output != int(i))
        throw Error(fmt::format("verifier: output '{}' of node '{}' has a wrong producer link", out->name, n->name));
      if (out->type != expect[i])
        throw Error(fmt::format("verifier: node '{}' output '{}' is {} but inference gives {}", n->name,
                                out->name, out->type.str(), expect[i].str()));
      define(out);
    }
  }
  for (const Value* out : g.outputs())
    if (!defined.count(out)) throw Error(fmt::format("verifier: graph output '{}' is not defined", out->name));
}

}  // namespace dlc::ir
