// The IR graph: Values (typed tensors with a role) produced and consumed by Nodes (ops with
// attributes), in schedule order. Static shapes throughout.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dlc/attributes.h"
#include "dlc/tensor.h"
#include "ir/op.h"

namespace dlc::ir {

/// What a value is to training: the roles decide what autodiff, the optimizer and the memory
/// planner do with it.
enum class Role : uint8_t { Input, Label, Parameter, State, Constant, Activation, Gradient };
std::string_view role_name(Role r);
std::optional<Role> parse_role(std::string_view name);

struct Node;

struct Value {
  int id = 0;
  std::string name;
  TensorType type;
  Role role = Role::Activation;
  Node* producer = nullptr;  // null for inputs, parameters, state and constants
  int producer_output = -1;
  std::shared_ptr<Tensor> data;  // initial value (Parameter, State) or value (Constant)
};

struct Node {
  OpKind op;
  std::string name;
  std::vector<Value*> inputs;  // nullptr: an absent optional input
  std::vector<Value*> outputs;
  Attrs attrs;

  const OpInfo& info() const { return op_info(op); }
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name = "main";

  // ---- values without producers
  Value* add_input(const std::string& name, TensorType type, Role role = Role::Input);
  Value* add_parameter(const std::string& name, Tensor init, Role role = Role::Parameter);
  Value* add_constant(const std::string& name, Tensor value);

  // ---- nodes
  /// Appends a node (or inserts it before the insertion point, if one is set), infers its
  /// output types and creates its outputs named `output_names` (generated where empty).
  Node* add_node(OpKind op, std::vector<Value*> inputs, Attrs attrs = {},
                 std::vector<std::string> output_names = {""}, std::string node_name = "");
  /// Same, with output types given (used by the parser, which then checks them).
  Node* add_node_typed(OpKind op, std::vector<Value*> inputs, Attrs attrs,
                       std::vector<std::string> output_names, std::vector<TensorType> types,
                       std::string node_name);
  void set_insertion_point(const Node* before) { insertion_point_ = before; }
  void clear_insertion_point() { insertion_point_ = nullptr; }
  void remove_node(Node* node);  // its outputs must be unused
  void replace_all_uses(Value* from, Value* to);
  /// Replaces `node` by values made elsewhere: readers of output i read `results[i]` instead,
  /// the node is removed, and `results[i]` takes output i's name (a graph output keeps its
  /// name). An output without a result (past the end, or null) must be unused.
  void replace_node(Node* node, const std::vector<Value*>& results);
  /// Renames a value; fails if the name is taken.
  void rename_value(Value* v, const std::string& name);
  /// Renames a node; fails if another node has the name.
  void rename_node(Node* n, const std::string& name);

  // ---- signature
  void add_output(Value* v) { outputs_.push_back(v); }
  void set_outputs(std::vector<Value*> outs) { outputs_ = std::move(outs); }

  /// Training: after each run, `state` (a parameter or state value) takes the value of
  /// `new_value` (optimizer updates, running statistics). New values stay live for DCE.
  void add_state_update(Value* new_value, Value* state) { state_updates_.push_back({new_value, state}); }
  const std::vector<std::pair<Value*, Value*>>& state_updates() const { return state_updates_; }

  const std::vector<Value*>& inputs() const { return inputs_; }  // Input and Label roles
  const std::vector<Value*>& outputs() const { return outputs_; }
  /// Whether `v` is a graph output (its name is then part of the signature).
  bool is_output(const Value* v) const;
  /// Whether `v` is a graph output or a state update's new value: a rewrite must keep it (and its
  /// name), whoever else reads it.
  bool is_pinned(const Value* v) const;
  /// Parameters, state and constants, in creation order.
  const std::vector<Value*>& initializers() const { return initializers_; }
  std::vector<Node*> nodes() const;
  size_t num_nodes() const { return nodes_.size(); }
  /// Puts the nodes in `order`, a permutation of nodes() (else dlc::Error); keeping it a valid
  /// schedule (operands before their users) is the caller's part.
  void reorder_nodes(const std::vector<Node*>& order);

  Value* find_value(const std::string& name) const;
  std::vector<Node*> users(const Value* v) const;
  /// A name not yet used by any value, derived from `base`.
  std::string unique_value_name(const std::string& base);
  std::string unique_node_name(const std::string& base);

  /// Removes nodes whose outputs reach no graph output; returns how many were removed.
  int remove_dead_nodes();
  /// Removes initializers that no node or output uses.
  int remove_unused_initializers();

 private:
  Value* new_value(const std::string& name, TensorType type, Role role);
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_, outputs_, initializers_;
  std::vector<std::pair<Value*, Value*>> state_updates_;
  std::map<std::string, Value*> by_name_;
  std::map<std::string, int> name_counters_;
  std::set<std::string> node_names_;
  const Node* insertion_point_ = nullptr;
};

}  // namespace dlc::ir
