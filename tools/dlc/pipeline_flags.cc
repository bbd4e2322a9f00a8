// Registration of the pass-pipeline flags.
#include "tools/dlc/pipeline_flags.h"

namespace dlc::tool {

void add_pipeline_flags(CLI::App* cmd, passes::PipelineOptions& options) {
  cmd->add_option("--disable-pass", options.disabled, "skip the pass NAME (repeatable)");
  cmd->add_flag("--print-ir-after-all", options.print_after_all, "print the IR to stderr after every pass");
  cmd->add_option("--print-ir-after", options.print_after,
                  "print the IR to stderr after pass NAME (repeatable)");
  cmd->add_option("--dump-ir", options.dump_dir, "write the IR after each pass to DIR/NN-PASS.dlir");
  cmd->add_option("--stop-after", options.stop_after,
                  "run only the first N passes, print the IR to stdout and write nothing else");
}

}  // namespace dlc::tool
