// An inference or a training compile from the command line.
#include "tools/dlc/compile_flags.h"

#include <fmt/format.h>

#include "dlc/error.h"

namespace dlc::tool {

void CompileFlags::add_to(CLI::App* cmd) {
  cmd->add_flag("--train", train, "compile a training plan (loss, backward, optimizer) for `dlc train`");
  cmd->add_option("--device", device, "device of the plan: cpu (default), cuda or cuda:N");
  cmd->add_option("--arch", arch, "with --device cuda: GPU architecture of the kernels (default sm_90)");
  cmd->add_flag("--no-host-fallback", no_host_fallback,
                "with --device cuda: a step with no CUDA path is an error (by default it runs on the host by "
                "its CPU kernel)");
  model.add_to(cmd);
  training.add_to(cmd);
  pipeline.add_to(cmd);
}

driver::Compiled CompileFlags::compile(const std::string& model_path) {
  if (!train) {
    if (const CLI::Option* o = training.first_given())
      throw Error(fmt::format("{} needs --train (it is a training option)", o->get_name()));
    driver::CompileOptions options;
    model.apply(options);
    options.device = device;
    options.arch = arch;
    options.host_fallback = !no_host_fallback;
    options.pipeline = pipeline.options;
    return driver::compile_model(model_path, options);
  }
  training.check();
  driver::TrainCompileOptions options = training.options;
  model.apply(options.compile);
  options.compile.device = device;
  options.compile.arch = arch;
  options.compile.host_fallback = !no_host_fallback;
  options.compile.pipeline = pipeline.options;
  if (options.compile.import.batch == 0) options.compile.import.batch = driver::kDefaultBatch;
  return driver::compile_training(model_path, options);
}

}  // namespace dlc::tool
