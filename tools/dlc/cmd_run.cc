// `dlc run MODEL.onnx|PLAN.dlcplan --input NAME=FILE … --output-dir DIR`: one forward run,
// outputs written as DIR/NAME.npy.
#include <fmt/format.h>

#include <filesystem>

#include "dlc/error.h"
#include "dlc/npy.h"
#include "dlc/session.h"
#include "frontend/onnx_tensor.h"
#include "runtime/plan/plan_file.h"
#include "tools/dlc/commands.h"
#include "tools/driver/compile.h"

namespace dlc::tool {

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  int threads = 0;
};

Tensor read_input_file(const std::string& path) {
  if (path.size() > 4 && path.substr(path.size() - 4) == ".npy") return read_npy(path);
  return frontend::read_tensor_pb(path);
}

bool is_plan(const std::string& path) {
  return path.size() > 8 && path.substr(path.size() - 8) == ".dlcplan";
}

void run(const RunArgs& args) {
  std::map<std::string, Tensor> values;
  for (const std::string& spec : args.inputs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(fmt::format("--input '{}': expected NAME=FILE", spec));
    std::string name = spec.substr(0, eq);
    if (values.count(name)) throw Error(fmt::format("--input '{}' is given twice", name));
    values[name] = read_input_file(spec.substr(eq + 1));
  }
  plan::Plan p;
  if (is_plan(args.model)) {
    p = plan::read_plan_file(args.model);
  } else {
    driver::CompileOptions options;
    options.import.input_values = values;
    p = driver::compile_model(args.model, options).plan;
  }
  auto session = Session::create(p, {args.threads});
  for (const auto& sig : session->inputs()) {
    auto it = values.find(sig.name);
    if (it == values.end())
      throw Error(fmt::format("missing --input for '{}' ({})", sig.name, sig.type.str()));
    session->set_input(sig.name, it->second);
  }
  for (const auto& [name, _] : values) {
    bool known = false;
    for (const auto& sig : session->inputs()) known = known || sig.name == name;
    if (!known) throw Error(fmt::format("--input '{}': the model has no such input", name));
  }
  session->run();
  // Every output is fetched before the first file is written; a failed write removes the files
  // this run wrote (each one is written atomically).
  std::vector<std::pair<std::string, Tensor>> outputs;
  for (const auto& sig : session->outputs()) {
    std::string file = sig.name;
    for (char& c : file)
      if (c == '/' || c == '\\' || c == ':') c = '_';
    std::string path = (std::filesystem::path(args.output_dir) / (file + ".npy")).string();
    outputs.emplace_back(path, session->output(sig.name));
  }
  std::error_code ec;
  std::filesystem::create_directories(args.output_dir, ec);
  if (ec) throw Error(fmt::format("--output-dir {}: {}", args.output_dir, ec.message()));
  std::vector<std::string> written;
  try {
    for (const auto& [path, value] : outputs) {
      write_npy(path, value);
      written.push_back(path);
    }
  } catch (const Error&) {
    for (const std::string& path : written) std::filesystem::remove(path, ec);
    throw;
  }
}

}  // namespace

Action add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model or plan forward once on given inputs");
  cmd->add_option("model", args->model, "MODEL.onnx or PLAN.dlcplan")->required();
  cmd->add_option("--input", args->inputs, "NAME=FILE (.pb TensorProto or .npy)");
  cmd->add_option("--output-dir", args->output_dir, "where NAME.npy outputs are written")->required();
  cmd->add_option("--threads", args->threads, "CPU threads (default: all cores)");
  return [args] { run(*args); };
}

}  // namespace dlc::tool
