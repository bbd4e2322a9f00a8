// dlc: compile ONNX models into training plans, train them, run them, inspect them, export them.
#include <cstdio>
#include <map>

#include "dlc/error.h"
#include "tools/dlc/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"dlc: a graph compiler and runtime for training neural networks"};
  app.require_subcommand(1);
  std::map<CLI::App*, dlc::tool::Action> actions;
  auto add = [&](dlc::tool::Action (*f)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    dlc::tool::Action a = f(app);
    actions[app.get_subcommands({})[before]] = std::move(a);
  };
  add(dlc::tool::add_compile_command);
  add(dlc::tool::add_train_command);
  add(dlc::tool::add_run_command);
  add(dlc::tool::add_inspect_command);
  add(dlc::tool::add_opt_command);
  add(dlc::tool::add_export_command);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (auto& [cmd, action] : actions)
      if (cmd->parsed()) action();
  } catch (const dlc::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
