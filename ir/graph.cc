// Graph construction and editing.
#include "ir/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "dlc/error.h"
#include "ir/infer.h"

namespace dlc::ir {

namespace {
constexpr std::string_view kRoleNames[] = {"input",    "label",      "param",   "state",
                                           "constant", "activation", "gradient"};
}

std::string_view role_name(Role r) { return kRoleNames[size_t(r)]; }

std::optional<Role> parse_role(std::string_view name) {
  for (size_t i = 0; i < std::size(kRoleNames); ++i)
    if (kRoleNames[i] == name) return Role(i);
  return std::nullopt;
}

std::string Graph::unique_value_name(const std::string& base) {
  std::string b = base.empty() ? "v" : base;
  if (!by_name_.count(b)) return b;
  int& n = name_counters_[b];
  std::string candidate;
  do {
    candidate = fmt::format("{}.{}", b, ++n);
  } while (by_name_.count(candidate));
  return candidate;
}

std::string Graph::unique_node_name(const std::string& base) {
  std::string b = base.empty() ? "node" : base;
  if (!node_names_.count(b)) return b;
  int& n = name_counters_["node:" + b];
  std::string candidate;
  do {
    candidate = fmt::format("{}.{}", b, ++n);
  } while (node_names_.count(candidate));
  return candidate;
}

Value* Graph::new_value(const std::string& name, TensorType type, Role role) {
  if (name.empty() || by_name_.count(name)) throw Error(fmt::format("duplicate value name '{}'", name));
  auto v = std::make_unique<Value>();
  v->id = int(values_.size());
  v->name = name;
  v->type = std::move(type);
  v->role = role;
  by_name_[name] = v.get();
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Graph::add_input(const std::string& name, TensorType type, Role role) {
  Value* v = new_value(name, std::move(type), role);
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_parameter(const std::string& name, Tensor init, Role role) {
  Value* v = new_value(name, init.type, role);
  v->data = std::make_shared<Tensor>(std::move(init));
  initializers_.push_back(v);
  return v;
}

Value* Graph::add_constant(const std::string& name, Tensor value) {
  return add_parameter(name, std::move(value), Role::Constant);
}

Node* Graph::add_node(OpKind op, std::vector<Value*> inputs, Attrs attrs,
                      std::vector<std::string> output_names, std::string node_name) {
  Node probe{op, node_name, inputs, {}, attrs};
  if (probe.name.empty()) probe.name = std::string(op_name(op));
  std::vector<TensorType> types = infer_types(probe, int(output_names.size()));
  return add_node_typed(op, std::move(inputs), std::move(attrs), std::move(output_names), std::move(types),
                        std::move(node_name));
}

Node* Graph::add_node_typed(OpKind op, std::vector<Value*> inputs, Attrs attrs,
                            std::vector<std::string> output_names, std::vector<TensorType> types,
                            std::string node_name) {
  auto node = std::make_unique<Node>();
  node->op = op;
  node->name = unique_node_name(node_name.empty() ? std::string(op_name(op)) : node_name);
  node_names_.insert(node->name);
  node->inputs = std::move(inputs);
  node->attrs = std::move(attrs);
  for (size_t i = 0; i < output_names.size(); ++i) {
    std::string n = output_names[i];
    // An empty name marks an absent optional output, except for the first one.
    if (n.empty() && i > 0) {
      node->outputs.push_back(nullptr);
      continue;
    }
    if (n.empty()) n = unique_value_name(node->name);
    Value* v = new_value(n, types.at(i), Role::Activation);
    v->producer = node.get();
    v->producer_output = int(i);
    node->outputs.push_back(v);
  }
  Node* raw = node.get();
  auto pos = nodes_.end();
  if (insertion_point_) {
    pos = std::find_if(nodes_.begin(), nodes_.end(),
                       [&](const auto& n) { return n.get() == insertion_point_; });
  }
  nodes_.insert(pos, std::move(node));
  return raw;
}

void Graph::remove_node(Node* node) {
  for (Value* out : node->outputs) {
    if (!out) continue;
    out->producer = nullptr;
    by_name_.erase(out->name);
    auto it = std::find_if(values_.begin(), values_.end(), [&](const auto& v) { return v.get() == out; });
    if (it != values_.end()) values_.erase(it);
  }
  node_names_.erase(node->name);
  auto it = std::find_if(nodes_.begin(), nodes_.end(), [&](const auto& n) { return n.get() == node; });
  if (it != nodes_.end()) nodes_.erase(it);
}

void Graph::replace_all_uses(Value* from, Value* to) {
  for (auto& n : nodes_)
    for (Value*& in : n->inputs)
      if (in == from) in = to;
  for (Value*& out : outputs_)
    if (out == from) out = to;
  for (auto& update : state_updates_)
    if (update.first == from) update.first = to;
}

void Graph::replace_node(Node* node, const std::vector<Value*>& results) {
  auto result_of = [&](size_t i) { return i < results.size() ? results[i] : nullptr; };
  for (size_t i = 0; i < node->outputs.size(); ++i) {
    const Value* out = node->outputs[i];
    if (out && !result_of(i) && (is_pinned(out) || !users(out).empty()))
      throw Error(fmt::format("replacing node '{}': its output '{}' is still read", node->name, out->name));
  }
  std::vector<std::pair<Value*, std::string>> renames;
  for (size_t i = 0; i < node->outputs.size(); ++i) {
    if (!node->outputs[i] || !result_of(i)) continue;
    replace_all_uses(node->outputs[i], result_of(i));
    renames.emplace_back(result_of(i), node->outputs[i]->name);
  }
  remove_node(node);
  for (auto& [result, name] : renames) rename_value(result, name);
}

bool Graph::is_output(const Value* v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

bool Graph::is_pinned(const Value* v) const {
  return is_output(v) || std::any_of(state_updates_.begin(), state_updates_.end(),
                                     [&](const auto& update) { return update.first == v; });
}

void Graph::rename_value(Value* v, const std::string& name) {
  if (v->name == name) return;
  if (by_name_.count(name)) throw Error(fmt::format("duplicate value name '{}'", name));
  by_name_.erase(v->name);
  v->name = name;
  by_name_[name] = v;
}

void Graph::rename_node(Node* n, const std::string& name) {
  if (n->name == name) return;
  if (node_names_.count(name)) throw Error(fmt::format("duplicate node name '{}'", name));
  node_names_.erase(n->name);
  n->name = name;
  node_names_.insert(name);
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (auto& n : nodes_) out.push_back(n.get());
  return out;
}

void Graph::reorder_nodes(const std::vector<Node*>& order) {
  std::map<const Node*, std::unique_ptr<Node>*> slot;
  for (auto& n : nodes_) slot[n.get()] = &n;
  std::set<const Node*> seen(order.begin(), order.end());
  if (order.size() != nodes_.size() || seen.size() != order.size() ||
      !std::all_of(order.begin(), order.end(), [&](const Node* n) { return slot.count(n); }))
    throw Error("reorder_nodes: not a permutation of the graph's nodes");
  std::vector<std::unique_ptr<Node>> reordered;
  reordered.reserve(order.size());
  for (Node* n : order) reordered.push_back(std::move(*slot.at(n)));
  nodes_ = std::move(reordered);
}

Value* Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::users(const Value* v) const {
  std::vector<Node*> out;
  for (auto& n : nodes_)
    if (std::find(n->inputs.begin(), n->inputs.end(), v) != n->inputs.end()) out.push_back(n.get());
  return out;
}

int Graph::remove_dead_nodes() {
  std::set<const Value*> live(outputs_.begin(), outputs_.end());
  for (const auto& [value, state] : state_updates_) live.insert(value);
  std::vector<Node*> dead;
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
    Node* n = it->get();
    bool used =
        std::any_of(n->outputs.begin(), n->outputs.end(), [&](Value* o) { return o && live.count(o); });
    if (!used) {
      dead.push_back(n);
      continue;
    }
    for (Value* in : n->inputs)
      if (in) live.insert(in);
  }
  for (Node* n : dead) remove_node(n);
  return int(dead.size());
}

int Graph::remove_unused_initializers() {
  std::set<const Value*> used(outputs_.begin(), outputs_.end());
  for (const auto& [value, state] : state_updates_) used.insert(state);
  for (auto& n : nodes_)
    for (Value* in : n->inputs) used.insert(in);
  int removed = 0;
  std::vector<Value*> keep;
  for (Value* v : initializers_) {
    if (used.count(v)) {
      keep.push_back(v);
      continue;
    }
    by_name_.erase(v->name);
    auto it = std::find_if(values_.begin(), values_.end(), [&](const auto& p) { return p.get() == v; });
    values_.erase(it);
    ++removed;
  }
  initializers_ = std::move(keep);
  return removed;
}

}  // namespace dlc::ir
