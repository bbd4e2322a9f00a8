// `dlc opt FILE.dlir --passes a,b,c [-o OUT]`: textual IR in, named passes (the verifier after
// each), textual IR out. A file split by `// -----` lines holds several graphs, each optimized
// on its own and printed with the same separators.
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "codegen/cpu_evaluator.h"
#include "dlc/error.h"
#include "dlc/file_util.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/registry.h"
#include "tools/dlc/commands.h"

namespace dlc::tool {

namespace {

struct OptArgs {
  std::string file;
  std::string passes;
  std::string output;
  bool stats = false;
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
  passes::PassServices services{&evaluator};
  std::vector<std::unique_ptr<passes::Pass>> pipeline = passes::create_passes(args.passes, services);
  std::string text = read_file(args.file);
  std::ostringstream out;
  bool first = true;
  for (const ir::TextChunk& chunk : ir::split_chunks(text)) {
    if (is_blank(chunk.text)) continue;
    std::unique_ptr<ir::Graph> graph = ir::parse_graph(chunk.text, args.file, chunk.first_line);
    for (auto& pass : pipeline) {
      bool changed = pass->run(*graph);
      try {
        ir::verify(*graph);
      } catch (const Error& e) {
        throw Error(
            fmt::format("{}:{}: after pass '{}': {}", args.file, chunk.first_line, pass->name(), e.what()));
      }
      if (args.stats) {
        std::cerr << fmt::format("{}:{}: {}: {}\n", args.file, chunk.first_line, pass->name(),
                                 changed ? "changed" : "unchanged");
        for (const auto& [key, value] : pass->stats()) std::cerr << fmt::format("  {} = {}\n", key, value);
      }
    }
    if (!first) out << "// -----\n";
    first = false;
    ir::print_graph(out, *graph);
  }
  if (args.output.empty())
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
  return [args] { opt(*args); };
}

}  // namespace dlc::tool
