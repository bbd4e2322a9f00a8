// The pass manager.
#include "passes/pass_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <system_error>

#include "dlc/error.h"
#include "dlc/file_util.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace dlc::passes {

namespace {
bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}
}  // namespace

PassManager::PassManager(PipelineOptions options, std::ostream& print_to)
    : options_(std::move(options)), print_to_(print_to) {}

void PassManager::add(std::unique_ptr<Pass> pass, bool required) {
  passes_.push_back(std::move(pass));
  required_.push_back(required);
}

std::vector<std::string> PassManager::pass_names() const {
  std::vector<std::string> names;
  for (const auto& p : passes_) names.emplace_back(p->name());
  return names;
}

void PassManager::check_options() const {
  const std::vector<std::string> names = pass_names();
  auto check = [&](const std::vector<std::string>& list, const char* flag) {
    for (const std::string& n : list)
      if (!contains(names, n))
        throw Error(fmt::format("{} {}: no such pass in this pipeline (passes: {})", flag, n,
                                fmt::join(names, ", ")));
  };
  check(options_.disabled, "--disable-pass");
  check(options_.print_after, "--print-ir-after");
  for (size_t i = 0; i < passes_.size(); ++i)
    if (required_[i] && contains(options_.disabled, names[i]))
      throw Error(fmt::format("--disable-pass {}: this pipeline cannot run without it", names[i]));
  passes_to_run();  // throws on a bad --stop-after
}

size_t PassManager::passes_to_run() const {
  const std::string& stop = options_.stop_after;
  if (stop.empty()) return passes_.size();
  const std::vector<std::string> names = pass_names();
  auto named = std::find(names.begin(), names.end(), stop);
  if (named != names.end()) return size_t(named - names.begin()) + 1;
  if (std::all_of(stop.begin(), stop.end(), [](char c) { return c >= '0' && c <= '9'; }) && stop.size() < 9) {
    const size_t n = std::stoul(stop);
    if (n >= 1 && n <= names.size()) return n;
    throw Error(fmt::format("--stop-after {}: the pipeline has passes 1 to {} ({})", stop, names.size(),
                            fmt::join(names, ", ")));
  }
  throw Error(fmt::format("--stop-after {}: no such pass in this pipeline (passes: {})", stop,
                          fmt::join(names, ", ")));
}

void PassManager::after_pass(const ir::Graph& graph, size_t index, const std::string& name) const {
  if (options_.print_after_all || contains(options_.print_after, name)) {
    print_to_ << fmt::format("// ----- IR after pass {} ({}) -----\n", index + 1, name);
    ir::print_graph(print_to_, graph);
  }
  if (!options_.dump_dir.empty()) {
    std::ostringstream text;
    ir::print_graph(text, graph);
    std::error_code error;
    std::filesystem::create_directories(options_.dump_dir, error);
    if (error)
      throw Error(
          fmt::format("--dump-ir {}: cannot create the folder: {}", options_.dump_dir, error.message()));
    write_file_atomic(
        (std::filesystem::path(options_.dump_dir) / fmt::format("{:02}-{}.dlir", index + 1, name)).string(),
        text.str());
  }
}

bool PassManager::run(ir::Graph& graph) {
  check_options();
  records_.clear();
  const size_t to_run = passes_to_run();
  for (size_t i = 0; i < passes_.size(); ++i) {
    Pass& pass = *passes_[i];
    PassRecord record;
    record.name = std::string(pass.name());
    if (i < to_run && !contains(options_.disabled, record.name)) {
      const auto start = std::chrono::steady_clock::now();
      record.changed = pass.run(graph);
      record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      record.ran = true;
      record.stats = pass.stats();
      if (options_.verify_each) {
        try {
          ir::verify(graph);
        } catch (const Error& e) {
          throw Error(fmt::format("after pass '{}': {}", record.name, e.what()));
        }
      }
      after_pass(graph, i, record.name);
    }
    records_.push_back(std::move(record));
  }
  return options_.stop_after.empty();
}

}  // namespace dlc::passes
