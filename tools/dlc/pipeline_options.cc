// Registration of the pass-pipeline flags.
#include "tools/dlc/pipeline_options.h"

#include <iostream>

#include "ir/printer.h"

namespace dlc::tool {

void PipelineFlags::add_to(CLI::App* cmd) {
  // A list flag takes one value per occurrence (so it never swallows a positional argument) and
  // splits it at commas: --disable-pass a,b and --disable-pass a --disable-pass b are the same.
  auto list = [](CLI::Option* o) { return o->allow_extra_args(false)->delimiter(',')->type_name("PASS"); };
  registered_ = {
      cmd->add_flag("--print-ir-after-all", options.print_after_all,
                    "print the IR after every pass on stderr"),
      list(cmd->add_option("--print-ir-after", options.print_after,
                           "print the IR after PASS on stderr (repeatable, or a comma list)")),
      list(cmd->add_option("--disable-pass", options.disabled,
                           "skip PASS (repeatable, or a comma list; required passes cannot be skipped)")),
      cmd->add_option("--dump-ir", options.dump_dir,
                      "write the IR after each pass to DIR/NN-PASS.dlir (NN: its place in the pipeline)")
          ->type_name("DIR"),
      cmd->add_option("--stop-after", options.stop_after,
                      "stop after PASS (or the N-th pass), print the IR on stdout and write nothing else")
          ->type_name("PASS"),
      cmd->add_flag("--verify-each", options.verify_each,
                    "verify the IR after every pass (the default in debug builds)"),
  };
}

const CLI::Option* PipelineFlags::first_given() const {
  for (const CLI::Option* o : registered_)
    if (o->count() > 0) return o;
  return nullptr;
}

bool PipelineFlags::print_if_stopped(const driver::Compiled& compiled) {
  if (!compiled.stopped) return false;
  ir::print_graph(std::cout, *compiled.graph);
  return true;
}

}  // namespace dlc::tool
