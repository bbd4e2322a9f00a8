// The pass registry: one table entry per pass.
#include "passes/registry.h"

#include <fmt/format.h>

#include "dlc/error.h"
#include "passes/canonicalize.h"
#include "passes/channels_last.h"
#include "passes/constant_fold.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fuse_attention.h"
#include "passes/fusion.h"
#include "passes/lower_einsum.h"
#include "passes/mixed_precision.h"
#include "passes/schedule_memory.h"

namespace dlc::passes {

namespace {

using Factory = std::unique_ptr<Pass> (*)(const PassServices&);

struct Registration {
  PassEntry entry;
  Factory create;
};

ir::ConstantEvaluator& need_evaluator(const PassServices& s, std::string_view pass) {
  if (!s.evaluator) throw Error(fmt::format("pass '{}' needs a constant evaluator", pass));
  return *s.evaluator;
}

const ir::MemoryModel& need_memory_model(const PassServices& s, std::string_view pass) {
  if (!s.memory) throw Error(fmt::format("pass '{}' needs a memory model", pass));
  return *s.memory;
}

const std::vector<Registration>& table() {
  static const std::vector<Registration> t = [] {
    std::vector<Factory> factories = {
        [](const PassServices&) -> std::unique_ptr<Pass> { return std::make_unique<DeadCodeElimination>(); },
        [](const PassServices& s) -> std::unique_ptr<Pass> {
          return std::make_unique<ConstantFolding>(need_evaluator(s, "constant-fold"));
        },
        [](const PassServices&) -> std::unique_ptr<Pass> {
          return std::make_unique<CommonSubexpressionElimination>();
        },
        [](const PassServices&) -> std::unique_ptr<Pass> { return std::make_unique<LowerEinsum>(); },
        [](const PassServices&) -> std::unique_ptr<Pass> { return std::make_unique<Canonicalize>(); },
        [](const PassServices&) -> std::unique_ptr<Pass> { return std::make_unique<ChannelsLast>(); },
        [](const PassServices&) -> std::unique_ptr<Pass> { return std::make_unique<Fusion>(); },
        [](const PassServices&) -> std::unique_ptr<Pass> { return std::make_unique<FuseAttention>(); },
        // `dlc opt` runs it with bf16 (fp16 differs only by the loss scale, tested in C++).
        [](const PassServices&) -> std::unique_ptr<Pass> {
          return std::make_unique<MixedPrecision>(DType::BF16);
        },
        [](const PassServices& s) -> std::unique_ptr<Pass> {
          return std::make_unique<ScheduleMemory>(need_memory_model(s, "schedule"));
        },
    };
    // Names and summaries come from the passes themselves; service stand-ins let the
    // constructors run without real services.
    struct NoEvaluator final : ir::ConstantEvaluator {
      std::vector<Tensor> evaluate(const ir::Node& n, const std::vector<const Tensor*>&) override {
        throw Error(fmt::format("node '{}': no constant evaluator", n.name));
      }
    };
    struct NoMemoryModel final : ir::MemoryModel {
      ir::MemoryFigures measure(const ir::Graph&) const override { throw Error("no memory model"); }
      ir::SharedBuffers shared_buffers(const ir::Graph&) const override { throw Error("no memory model"); }
    };
    static NoEvaluator none;
    static const NoMemoryModel no_memory;
    std::vector<Registration> out;
    for (Factory f : factories) {
      std::unique_ptr<Pass> p = f(PassServices{&none, &no_memory});
      out.push_back({{p->name(), p->summary()}, f});
    }
    return out;
  }();
  return t;
}

}  // namespace

const std::vector<PassEntry>& registered_passes() {
  static const std::vector<PassEntry> entries = [] {
    std::vector<PassEntry> e;
    for (const Registration& r : table()) e.push_back(r.entry);
    return e;
  }();
  return entries;
}

std::unique_ptr<Pass> create_pass(std::string_view name, const PassServices& services) {
  std::vector<std::string_view> known;
  for (const Registration& r : table()) {
    if (r.entry.name == name) return r.create(services);
    known.push_back(r.entry.name);
  }
  throw Error(fmt::format("unknown pass '{}' (known passes: {})", name, fmt::join(known, ", ")));
}

std::vector<std::unique_ptr<Pass>> create_passes(std::string_view list, const PassServices& services) {
  std::vector<std::unique_ptr<Pass>> out;
  if (list.empty()) return out;
  size_t pos = 0;
  while (true) {
    size_t comma = list.find(',', pos);
    std::string_view item = list.substr(pos, comma == std::string_view::npos ? list.npos : comma - pos);
    if (item.empty()) throw Error(fmt::format("pass list '{}' has an empty item", list));
    out.push_back(create_pass(item, services));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace dlc::passes
