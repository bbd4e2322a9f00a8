// `dlc opt FILE.dlir --passes a,b,c [-o OUT] [pipeline flags]`: textual IR in, named passes (the
// verifier after each), textual IR out. A file split by `// -----` lines holds several graphs,
// each optimized on its own and printed with the same separators.
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "codegen/cpu_evaluator.h"
#include "codegen/plan_memory_model.h"
#include "dlc/error.h"
#include "dlc/file_util.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/pipeline_options.h"

namespace dlc::tool {

namespace {

struct OptArgs {
  std::string file;
  std::string passes;
  std::string output;
  bool stats = false;
  PipelineFlags pipeline;
};

// True when a chunk holds nothing but blank lines and comments.
bool is_blank(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line.compare(first, 2, "//") != 0) return false;
  }
  return true;
}

void opt(const OptArgs& args) {
  codegen::CpuEvaluator evaluator;
  const codegen::PlanMemoryModel memory({});  // the CPU plan's figures
  passes::PassServices services{&evaluator, &memory};
  passes::PipelineOptions options = args.pipeline.options;
  options.verify_each = true;  // passes are tested through dlc opt: it always verifies
  // A pipeline per graph, since passes keep the statistics of their last run.
  auto make_pipeline = [&] {
    passes::PassManager pm(options, std::cerr);
    for (auto& pass : passes::create_passes(args.passes, services)) pm.add(std::move(pass));
    return pm;
  };
  make_pipeline().check_options();
  std::string text = read_file(args.file);
  std::ostringstream out;
  bool first = true, stopped = false;
  for (const ir::TextChunk& chunk : ir::split_chunks(text)) {
    if (is_blank(chunk.text)) continue;
    std::unique_ptr<ir::Graph> graph = ir::parse_graph(chunk.text, args.file, chunk.first_line);
    passes::PassManager pm = make_pipeline();
    try {
      stopped = !pm.run(*graph);
    } catch (const Error& e) {
      throw Error(fmt::format("{}:{}: {}", args.file, chunk.first_line, e.what()));
    }
    if (args.stats)
      for (const passes::PassRecord& r : pm.records()) {
        if (!r.ran) continue;
        std::cerr << fmt::format("{}:{}: {}: {}\n", args.file, chunk.first_line, r.name,
                                 r.changed ? "changed" : "unchanged");
        for (const auto& [key, value] : r.stats) std::cerr << fmt::format("  {} = {}\n", key, value);
      }
    if (!first) out << "// -----\n";
    first = false;
    ir::print_graph(out, *graph);
  }
  // After --stop-after the IR goes to stdout, never to the output file.
  if (args.output.empty() || stopped)
    std::cout << out.str();
  else
    write_file_atomic(args.output, out.str());
}

}  // namespace

Action add_opt_command(CLI::App& app) {
  auto args = std::make_shared<OptArgs>();
  CLI::App* cmd = app.add_subcommand("opt", "Run passes on textual IR (.dlir) and print the result");
  cmd->add_option("file", args->file, "FILE.dlir")->required();
  cmd->add_option("--passes", args->passes,
                  "comma-separated pass names, run in order (e.g. dce,constant-fold)");
  cmd->add_option("-o,--output", args->output, "write the IR here instead of stdout");
  cmd->add_flag("--stats", args->stats, "print each pass's statistics on stderr");
  args->pipeline.add_to(cmd);
  return [args] { opt(*args); };
}

}  // namespace dlc::tool
