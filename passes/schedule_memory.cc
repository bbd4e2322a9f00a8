// Memory-aware scheduling: list schedules over lowering's liveness model, measured by the model.
#include "passes/schedule_memory.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

namespace dlc::passes {

namespace {

bool is_persistent(const ir::Value* v) {
  return v->role != ir::Role::Activation && v->role != ir::Role::Gradient;
}

// The graph in lowering's terms: buffers (a value and the values sharing its bytes) and, per
// node, the buffers it creates and reads and the nodes it must follow.
struct Problem {
  struct Buffer {
    int64_t bytes = 0;
    int readers = 0;           // steps that read it
    bool live_to_end = false;  // a graph output, or a state's new value copied after the steps
  };
  struct Step {
    bool view = false;         // lowers to no step
    std::vector<int> creates;  // buffers that become live at this node
    std::vector<int> reads;    // buffers read (distinct)
    std::vector<int> after;    // nodes that must come first (distinct)
    std::vector<int> before;   // nodes that must come after
  };
  std::vector<ir::Node*> nodes;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
};

template <typename T>
void add_unique(std::vector<T>& v, T x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

Problem build_problem(const ir::Graph& g, const ir::SharedBuffers& shared) {
  Problem p;
  p.nodes = g.nodes();
  std::map<const ir::Node*, int> index;
  for (size_t i = 0; i < p.nodes.size(); ++i) index[p.nodes[i]] = int(i);
  // Buffers: one per root that is not live throughout (those add the same bytes to every step).
  std::map<const ir::Value*, int> buffer;
  auto buffer_of = [&](const ir::Value* v) -> int {
    const ir::Value* root = shared.root_of(v);
    if (is_persistent(root)) return -1;
    auto [it, inserted] = buffer.insert({root, int(p.buffers.size())});
    if (inserted) p.buffers.push_back({int64_t(root->type.bytes())});
    return it->second;
  };
  p.steps.resize(p.nodes.size());
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const ir::Node* n = p.nodes[i];
    Problem::Step& s = p.steps[i];
    s.view = shared.no_step.count(n) > 0;
    for (const ir::Value* in : n->inputs) {
      if (!in) continue;
      if (in->producer) add_unique(s.after, index.at(in->producer));
      const int b = buffer_of(in);
      if (b >= 0 && !s.view) add_unique(s.reads, b);
    }
    for (const ir::Value* out : n->outputs)
      if (out && shared.root_of(out) == out && buffer_of(out) >= 0) add_unique(s.creates, buffer_of(out));
  }
  for (const Problem::Step& s : p.steps)
    for (int b : s.reads) ++p.buffers[size_t(b)].readers;
  for (const ir::Value* out : g.outputs())
    if (int b = buffer_of(out); b >= 0) p.buffers[size_t(b)].live_to_end = true;
  for (const auto& [value, state] : g.state_updates())
    if (int b = buffer_of(value); b >= 0 && shared.root_of(value) != state)
      p.buffers[size_t(b)].live_to_end = true;
  // A result written in place over a state: every other reader of the state's old value first.
  for (const auto& [value, root] : shared.root) {
    const ir::Node* writer = value->producer;
    if (!writer || shared.no_step.count(writer) || root->producer) continue;
    const int w = index.at(writer);
    for (size_t i = 0; i < p.nodes.size(); ++i)
      if (int(i) != w && std::count(p.nodes[i]->inputs.begin(), p.nodes[i]->inputs.end(), root))
        add_unique(p.steps[size_t(w)].after, int(i));
  }
  for (size_t i = 0; i < p.steps.size(); ++i)
    for (int a : p.steps[i].after) p.steps[size_t(a)].before.push_back(int(i));
  return p;
}

enum class Rule { Greedy, EagerFrees };

// A list schedule of `p` by `rule`, as indices into p.nodes.
std::vector<int> list_schedule(const Problem& p, Rule rule) {
  const size_t n = p.nodes.size();
  std::vector<int> waiting(n);
  std::set<int> ready;
  for (size_t i = 0; i < n; ++i)
    if ((waiting[i] = int(p.steps[i].after.size())) == 0) ready.insert(int(i));
  std::vector<int> readers_left(p.buffers.size());
  for (size_t b = 0; b < p.buffers.size(); ++b) readers_left[b] = p.buffers[b].readers;
  // Bytes a node allocates and frees when it runs next.
  auto effect = [&](int i) {
    int64_t alloc = 0, freed = 0;
    for (int b : p.steps[size_t(i)].creates) {
      alloc += p.buffers[size_t(b)].bytes;
      if (readers_left[size_t(b)] == 0 && !p.buffers[size_t(b)].live_to_end)
        freed += p.buffers[size_t(b)].bytes;
    }
    for (int b : p.steps[size_t(i)].reads)
      if (readers_left[size_t(b)] == 1 && !p.buffers[size_t(b)].live_to_end)
        freed += p.buffers[size_t(b)].bytes;
    return std::pair{alloc, freed};
  };
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int pick = -1;
    for (int i : ready)
      if (p.steps[size_t(i)].view) {
        pick = i;
        break;
      }
    if (pick < 0) {
      std::tuple<int64_t, int64_t, int> best{INT64_MAX, INT64_MAX, INT32_MAX};
      for (int i : ready) {
        const auto [alloc, freed] = effect(i);
        const std::tuple<int64_t, int64_t, int> key =
            rule == Rule::Greedy ? std::tuple{alloc - freed, alloc, i}
                                 : std::tuple{int64_t(freed > alloc ? 0 : 1), int64_t(0), i};
        if (key < best) {
          best = key;
          pick = i;
        }
      }
    }
    ready.erase(pick);
    order.push_back(pick);
    for (int b : p.steps[size_t(pick)].reads) --readers_left[size_t(b)];
    for (int s : p.steps[size_t(pick)].before)
      if (--waiting[size_t(s)] == 0) ready.insert(s);
  }
  return order;  // every node: the original order is a schedule, so the constraints are acyclic
}

// Nodes outside the longest subsequence of `order` in increasing original index.
int64_t nodes_moved(const std::vector<int>& order) {
  std::vector<int> tails;  // tails[k]: least last index of an increasing run of length k + 1
  for (int i : order) {
    auto it = std::lower_bound(tails.begin(), tails.end(), i);
    if (it == tails.end())
      tails.push_back(i);
    else
      *it = i;
  }
  return int64_t(order.size() - tails.size());
}

}  // namespace

bool ScheduleMemory::run(ir::Graph& g) {
  const ir::MemoryFigures before = model_.measure(g);
  const Problem p = build_problem(g, model_.shared_buffers(g));
  std::vector<int> original(p.nodes.size());
  for (size_t i = 0; i < original.size(); ++i) original[i] = int(i);
  auto apply = [&](const std::vector<int>& order) {
    std::vector<ir::Node*> nodes;
    for (int i : order) nodes.push_back(p.nodes[size_t(i)]);
    g.reorder_nodes(nodes);
  };
  ir::MemoryFigures best = before;
  std::vector<int> best_order = original;
  for (Rule rule : {Rule::Greedy, Rule::EagerFrees}) {
    std::vector<int> order = list_schedule(p, rule);
    if (order == original || order == best_order) continue;
    apply(order);
    const ir::MemoryFigures f = model_.measure(g);
    const bool no_worse = f.peak_bytes <= before.peak_bytes && f.arena_bytes <= before.arena_bytes;
    if (no_worse && std::pair{f.peak_bytes, f.arena_bytes} < std::pair{best.peak_bytes, best.arena_bytes}) {
      best = f;
      best_order = std::move(order);
    }
  }
  apply(best_order);
  stats_["peak_before"] = before.peak_bytes;
  stats_["peak_after"] = best.peak_bytes;
  stats_["arena_before"] = before.arena_bytes;
  stats_["arena_after"] = best.arena_bytes;
  stats_["nodes_moved"] = nodes_moved(best_order);
  return best_order != original;
}

}  // namespace dlc::passes
