// Pass lookup by name, for `dlc opt --passes a,b,c` and the pipeline flags (--disable-pass,
// --print-ir-after=PASS). Passes that need services beyond the graph get them from PassServices.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/evaluator.h"
#include "ir/memory_model.h"
#include "passes/pass.h"

namespace dlc::passes {

/// What a pass may need from outside the IR; a pass whose service is missing cannot be created.
struct PassServices {
  ir::ConstantEvaluator* evaluator = nullptr;  // constant-fold
  const ir::MemoryModel* memory = nullptr;     // schedule
};

struct PassEntry {
  std::string_view name;
  std::string_view summary;
};

/// Every registered pass, in a stable order.
const std::vector<PassEntry>& registered_passes();
/// Creates the pass called `name`; throws dlc::Error naming the known passes if there is none,
/// or naming the missing service.
std::unique_ptr<Pass> create_pass(std::string_view name, const PassServices& services);
/// Creates the passes of a comma-separated list ("dce,constant-fold"); empty items are an error.
std::vector<std::unique_ptr<Pass>> create_passes(std::string_view list, const PassServices& services);

}  // namespace dlc::passes
